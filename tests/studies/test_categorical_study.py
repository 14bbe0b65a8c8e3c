"""The K-category coverage study (bayesjudge.studies.categorical): a smoke run and the full run.

The fast tests run a few judge accuracies at 30-60 replications; the slow tests rerun the
recorded full-size runs (``benchmarks/studies/results/categorical-*``: 1,000 replications,
1,000 bootstrap resamples, 1,000-20,000 posterior proposals, seed ``DEFAULT_SEED``), check that
they reproduce the recording and check the coverage goal,
nominal ± 3 nominal Monte Carlo SE = 0.95 ± 3·sqrt(0.95·0.05/1000) = 0.95 ± 0.0207.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from bayesjudge.studies import categorical, categorical_preference, categorical_rubric

NOMINAL = 0.95


def _smoke(**options):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return categorical.run(reps=60, n_resamples=200, **options)


def test_smoke_run_table_goals_and_reproducibility():
    res = _smoke(accuracy=[0.8, 0.95], methods=["delta", "wald"])
    table = res.table
    assert res.name == "categorical-preference"
    assert list(table["target"].values) == ["A", "tie", "B", "score"]
    assert list(table["method"].values) == ["delta", "wald"]
    for var in table.data_vars:
        assert not np.isnan(table[var].values).any(), var
    assert ((table["coverage"] >= 0) & (table["coverage"] <= 1)).all()
    # the truth of the score is A's win rate with ties counted half: 0.6(1 - t) + t/2
    t = table["shape"]
    expected = 0.6 * (1 - t) + 0.5 * t
    score_truth = table["truth"].sel(target="score").isel(accuracy=0, n=0, m=0, method=0)
    assert np.allclose(score_truth, expected)
    goals = categorical.goals(table)
    assert len(goals) == 2 * 4 and set(goals["points"]) == {2 * 3 * 2 * 2}
    assert (goals["within"] + goals["below"] + goals["above"] == goals["points"]).all()
    assert (goals["above_one_sided"] <= goals["above"]).all()
    assert "simplex boundary" in table.attrs["coverage_notes"]
    # each replication that misses lies wholly above or wholly below the truth
    np.testing.assert_allclose(
        table["miss_below"] + table["miss_above"], 1 - table["coverage"], atol=1e-12
    )
    # a subset of the grid reproduces the full run's numbers there (point-keyed seeds)
    part = _smoke(accuracy=[0.95], methods=["delta", "wald"]).table
    xr.testing.assert_identical(part.drop_attrs(), table.sel(accuracy=[0.95]).drop_attrs())


def test_smoke_bootstrap():
    table = categorical.run(reps=30, n_resamples=100, methods=["bootstrap"], accuracy=[0.95],
                            grid="rubric").table  # fmt: skip
    assert list(table["target"].values) == ["1", "2", "3", "4", "5", "score"]
    assert not np.isnan(table["coverage"].values).any()
    # mean-grade interval: narrower than the grade range, wider than nothing
    width = table["width"].sel(target="score")
    assert ((width > 0) & (width < 1)).all()


def test_registry_wrappers_and_bad_options():
    assert categorical_rubric.run(reps=20, methods=["delta"], accuracy=[0.8]).name == (
        "categorical-rubric"
    )
    assert categorical_preference.DEFAULT_SEED == categorical.DEFAULT_SEED
    with pytest.raises(ValueError, match="grid must be one of"):
        categorical.run(reps=20, grid="likert")
    with pytest.raises(ValueError, match="methods must be distinct names"):
        categorical.run(reps=20, methods=["delta", "delta"])
    with pytest.raises(ValueError, match="methods must be distinct names"):
        categorical.run(reps=20, methods=["delta", "mcmc"])
    with pytest.raises(ValueError, match="max_draws"):
        categorical.run(reps=20, methods=["posterior"], draws=500, max_draws=200)


def test_smoke_posterior_and_its_sampler_diagnostics():
    table = _smoke(methods=["posterior"], accuracy=[0.65], draws=300, max_draws=3000).table
    assert list(table["method"].values) == ["posterior"]
    assert not np.isnan(table["coverage"].values).any()
    # every data set with ESS below 200 at 300 draws is drawn again, with at most 3000
    drawn = table["posterior_draws_mean"]
    assert ((drawn >= 300) & (drawn <= 3000)).all()
    assert ((table["posterior_low_ess_share"] >= 0) & (table["posterior_low_ess_share"] <= 1)).all()
    assert float(table["posterior_ess_min"].min()) > 0
    # a credible interval of a share inside (0, 1): positive width, narrower than the range
    width = table["width"]
    assert ((width > 0) & (width < 1)).all()
    assert json.loads(table.attrs["seconds"]).keys() == {"posterior"}


BAND = 3 * np.sqrt(NOMINAL * (1 - NOMINAL) / 1000)
RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "studies" / "results"


def _recorded(grid: str) -> xr.Dataset:
    path = RESULTS / f"categorical-{grid}" / f"categorical_{grid}.nc"
    with xr.open_dataset(path) as ds:
        return ds.load()


def _below(cover: xr.DataArray) -> list[tuple]:
    flat = cover.stack(point=("accuracy", "shape", "n", "m", "target"))
    return [tuple(p) for p, v in zip(flat["point"].values, flat.values, strict=True)
            if v < NOMINAL - BAND]  # fmt: skip


@pytest.fixture(scope="module", params=["preference", "rubric"])
def full_run(request):
    return categorical.run(grid=request.param).table  # the recorded run's settings


@pytest.mark.slow
def test_full_run_reproduces_the_recording(full_run):
    recorded = _recorded(full_run.attrs["grid"])
    for var in ("coverage", "width", "posterior_draws_mean", "posterior_low_ess_share"):
        # Coverage counts can only differ by a replication where an end lands on the truth
        # within rounding (another BLAS); widths to 1e-9 relative.
        atol = 1.5e-3 if var == "coverage" else 0.0
        np.testing.assert_allclose(full_run[var], recorded[var], rtol=1e-9, atol=atol, err_msg=var)


@pytest.mark.slow
def test_delta_interval_undercovers_at_most_one_cell(full_run):
    # Recorded (benchmarks/studies/results/categorical-*): the score-type delta interval is
    # below 0.95 - 3 MC-SE in one cell per grid (0.926: tie share 0.05, accuracy 0.95, n =
    # 1000, m = 40; 0.920: grade 4, accuracy 0.8, grade-1 share 0.02, n = 2000, m = 40).
    cover = full_run["coverage"].sel({"method": "delta"})
    assert int((cover < NOMINAL - BAND).sum()) <= 1
    assert float(cover.min()) >= 0.915


@pytest.mark.slow
def test_wald_fails_where_the_delta_interval_holds(full_run):
    # The Wald interval's worst cell is lower (preference 0.894 vs 0.926) and it overcovers
    # more often (21 vs 7 cells of 144; rubric 25 vs 22 of 96).
    cover = full_run["coverage"]
    wald, delta = cover.sel({"method": "wald"}), cover.sel({"method": "delta"})
    assert int((wald > NOMINAL + BAND).sum()) >= int((delta > NOMINAL + BAND).sum())
    if full_run.attrs["grid"] == "preference":
        assert float(wald.min()) < float(delta.min())


def _above(cover: xr.DataArray) -> int:
    return int((cover > NOMINAL + BAND).sum())


@pytest.mark.slow
def test_bootstrap_never_undercovers(full_run):
    # Recorded: with the calibration rows resampled from (c + 1/K)/(m + 1), no cell below the
    # band on either grid (0.930 at worst; the resampling of the observed rows had 6 of 144
    # and 5 of 96 below, down to 0.891, where rows had empty cells). Above: 5 of 144
    # (preference), 23 of 96 (rubric, up to 0.996, 18 of them at accuracy 0.6). The price is
    # width: the mean score interval is 1.04 (preference) and 1.22 (rubric) times the delta
    # interval's.
    cover = full_run["coverage"].sel({"method": "bootstrap"})
    assert not _below(cover) and float(cover.min()) >= 0.929
    assert _above(cover) <= (5 if full_run.attrs["grid"] == "preference" else 23)
    width = full_run["width"].sel({"target": "score"}).mean(("accuracy", "shape", "n", "m"))
    ratio = float(width.sel({"method": "bootstrap"}) / width.sel({"method": "delta"}))
    assert 1.0 <= ratio <= 1.25, ratio


@pytest.mark.slow
def test_posterior_with_perks_rows_never_undercovers(full_run):
    # Recorded with the default priors (θ ~ Dirichlet(1), rows ~ Dirichlet(1/K)): no cell below
    # the band on either grid (0.938 and 0.931 at worst). The flat Dirichlet(1) rows had 9 of 96
    # rubric cells below, down to 0.824 (the mean grade at accuracy 0.8, n = 2000, m = 40: K = 5
    # pseudo-items per row pull a diagonal of 0.8 to 0.73); that cell now covers 0.960. Above:
    # 15 of 144 (preference; 36 with flat rows) and 35 of 96 (rubric; 36), 28 of them at
    # accuracy 0.6. The score interval is 0.99 (preference) and 0.91 (rubric) times the delta
    # interval's width.
    cover = full_run["coverage"].sel({"method": "posterior"})
    assert not _below(cover) and float(cover.min()) >= 0.93
    if full_run.attrs["grid"] == "preference":
        assert _above(cover) <= 15
    else:
        assert _above(cover) <= 35
        assert float(cover.sel(accuracy=0.8, shape=0.02, n=2000, m=40, target="score")) >= 0.95
    width = full_run["width"].sel({"target": "score"}).mean(("accuracy", "shape", "n", "m"))
    ratio = float(width.sel({"method": "posterior"}) / width.sel({"method": "delta"}))
    assert 0.85 <= ratio <= 1.05, ratio


@pytest.mark.slow
def test_overcoverage_of_rare_shares_is_one_sided(full_run):
    # A share of at most 5 % that an interval overcovers is missed on one side only: the delta
    # interval's upper end (the variance at a hypothesised θ_k > θ̂_k keeps it above about
    # 2 SE) and the bootstrap's lower end (replicates projected onto the simplex pile up at
    # 0) never pass the truth, so coverage is 1 − (the other side's miss) ≈ 1 − α/2 = 0.975,
    # above 0.95 + 3 MC-SE = 0.9707 by construction of an equal-tailed interval at the simplex
    # boundary, not by a defect. Recorded: delta misses above in at most 0.3 % (rubric, 13
    # cells), the bootstrap below in at most 0.6 % (rubric, 11 cells).
    table = full_run.drop_sel(target="score")
    for method, side, worst in (("delta", "miss_above", 0.005), ("bootstrap", "miss_below", 0.01)):
        part = table.sel({"method": method})
        rare = (part["coverage"] > NOMINAL + BAND) & (part["truth"] <= 0.05)
        if int(rare.sum()):
            assert float(part[side].where(rare).max()) <= worst, (method, side)
    # goals() counts them: of the cells above the band, one-sided (a miss share <= 0.5 %):
    # preference delta 3 of 7, posterior 9 of 15; rubric delta 19 of 22, bootstrap 12 of 23,
    # posterior 17 of 35.
    goals = categorical.goals(full_run).groupby("method")[["above", "above_one_sided"]].sum()
    expected = {
        "preference": {"delta": (7, 3), "posterior": (15, 9)},
        "rubric": {"delta": (22, 19), "bootstrap": (23, 12), "posterior": (35, 17)},
    }
    for method, (above, one_sided) in expected[full_run.attrs["grid"]].items():
        assert tuple(goals.loc[method]) == (above, one_sided), method
    # and the two one-sided miss shares add up to 1 − coverage everywhere
    total = full_run["miss_below"] + full_run["miss_above"]
    np.testing.assert_allclose(total, 1 - full_run["coverage"], atol=1e-12)


@pytest.mark.slow
def test_posterior_sampler_is_effective_except_for_the_noisiest_judge(full_run):
    # Share of data sets whose ESS stayed below 200 after up to 20,000 proposals: at most
    # 0.014 on the preference grid; on the rubric grid 0.133 and 0.100 at accuracy 0.6,
    # grade-1 share 0.02, m = 40 (few proposals inside the simplex), <= 0.028 elsewhere
    # (with flat rows: 0.294, 0.242 and 0.082).
    low = full_run["posterior_low_ess_share"]
    if full_run.attrs["grid"] == "preference":
        assert float(low.max()) <= 0.02
    else:
        assert float(low.sel(accuracy=0.8).max()) <= 0.01
        assert float(low.sel(accuracy=0.6, shape=0.02, m=40).min()) >= 0.05
        assert float(low.max()) <= 0.15


@pytest.mark.slow
@pytest.mark.xfail(
    reason="Recorded: no method stays within 0.95 ± 3 MC-SE at every cell; none is below it "
    "but delta (1 cell per grid: 0.926, 0.920) and Wald (2 and 1). Above the band "
    "(preference of 144 / rubric of 96): delta 7 / 22 (up to 1.000), Wald 21 / 25, bootstrap "
    "5 / 23 (up to 0.996), posterior 15 / 35 (up to 1.000): rare shares at the simplex "
    "boundary (one-sided misses) and the ill-conditioned judge (accuracy 0.6, m = 40).",
    strict=True,
)
def test_coverage_goal_two_sided(full_run):
    for method in full_run["method"].values:
        cover = full_run["coverage"].sel({"method": method})
        assert bool((np.abs(cover - NOMINAL) <= BAND).all()), method
