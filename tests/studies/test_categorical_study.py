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
import pandas as pd
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
        if not var.startswith("confirmed_"):
            assert not np.isnan(table[var].values).any(), var
    assert ((table["coverage"] >= 0) & (table["coverage"] <= 1)).all()
    # cells below the band, and only those points and methods, were measured again on 10 ×
    # 60 fresh replications
    band = 3 * np.sqrt(NOMINAL * (1 - NOMINAL) / 60)
    below = (table["coverage"] < NOMINAL - band).any("target")
    again = table["confirmed_coverage"].notnull()
    assert (again == below).all()
    assert table.attrs["confirm_reps"] == 600
    assert table.attrs["confirmed_cells"] == int(below.sum())
    mcse = table["confirmed_mcse"].where(again)
    np.testing.assert_allclose(
        mcse, np.sqrt(table["confirmed_coverage"] * (1 - table["confirmed_coverage"]) / 600)
    )
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


def test_cells_below_the_band_are_measured_again_on_fresh_data(monkeypatch):
    def coin(x, c, weights, alpha, rng, options):
        # the whole range (covers) or a point beyond it (misses), each with probability 1/2
        reps = len(x)
        cover = rng.random((reps, 1)) < 0.5
        top = np.tile(weights.max(-1) + 1, (reps, 1))
        return (np.where(cover, weights.min(-1), top), np.where(cover, weights.max(-1), top))

    monkeypatch.setitem(categorical._METHODS, "delta", coin)
    table = categorical.run(reps=60, methods=["delta"], accuracy=[0.8]).table
    assert table.attrs["confirmed_cells"] == 12 and table.attrs["confirm_reps"] == 600
    first, again = table["coverage"], table["confirmed_coverage"]
    assert bool(again.notnull().all())
    # 600 fresh replications: within 4 MC-SE of 1/2, and not a copy of the first measurement
    assert float(np.abs(again - 0.5).max()) <= 4 * np.sqrt(0.25 / 600)
    assert not np.allclose(again, first)
    np.testing.assert_allclose(table["confirmed_miss_below"] + table["confirmed_miss_above"],
                               1 - again, atol=1e-12)  # fmt: skip
    goals = categorical.goals(table)
    assert (goals["confirmed"] == 12).all() and (goals["below_confirmed"] == 12).all()
    assert not goals["no_undercoverage"].any() and not goals["passed"].any()
    # confirm_reps=0 measures nothing again
    none = categorical.run(reps=60, methods=["delta"], accuracy=[0.8], confirm_reps=0).table
    assert bool(none["confirmed_coverage"].isnull().all()) and none.attrs["confirmed_cells"] == 0
    with pytest.raises(ValueError, match="confirm_reps"):
        categorical.run(reps=60, methods=["delta"], accuracy=[0.8], confirm_reps=-1)


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
    variables = ("coverage", "width", "posterior_draws_mean", "posterior_low_ess_share",
                 "confirmed_coverage")  # fmt: skip
    for var in variables:
        # Coverage counts can only differ by a replication where an end lands on the truth
        # within rounding (another BLAS); widths to 1e-9 relative.
        atol = 1.5e-3 if var.endswith("coverage") else 0.0
        np.testing.assert_allclose(full_run[var], recorded[var], rtol=1e-9, atol=atol, err_msg=var)


def _goal(table: xr.Dataset, method: str) -> pd.DataFrame:
    return categorical.goals(table).set_index("method").loc[[method]]


@pytest.mark.slow
def test_delta_interval_never_undercovers(full_run):
    # Recorded (benchmarks/studies/results/categorical-*, 1,000 replications, seed 20261127),
    # with 1.5 pseudo-items per calibration row in the row covariance: preference 0 cells below
    # 0.95 - 3 MC-SE (0.931 at worst; with one pseudo-item per row the 5 % tie share at
    # accuracy 0.95, n = 1000, m = 40 covered 0.926, 0.928 at 20,000 replications); rubric 1
    # below in the first measurement (grade 4, accuracy 0.8, grade-1 share 0.02, n = 2000,
    # m = 40: 0.922), 0.938 on 10,000 fresh replications, within the band.
    goal = _goal(full_run, "delta")
    assert goal["no_undercoverage"].all()
    assert int(goal["below_confirmed"].sum()) == 0
    first = full_run["coverage"].sel({"method": "delta"})
    if full_run.attrs["grid"] == "preference":
        assert not _below(first) and float(first.min()) >= 0.93
    else:
        assert _below(first) == [(0.8, 0.02, 2000, 40, "4")]
        again = full_run["confirmed_coverage"].sel(
            {"method": "delta", "accuracy": 0.8, "shape": 0.02, "n": 2000, "m": 40, "target": "4"}
        )
        assert NOMINAL - BAND <= float(again) <= NOMINAL


@pytest.mark.slow
def test_wald_fails_where_the_delta_interval_holds(full_run):
    # The Wald interval undercovers the 5 % tie share at accuracy 0.95, n = 1000, m = 40:
    # 0.894, and 0.902 on 10,000 fresh replications (confirmed below the band); its worst
    # rubric cell (the mean grade at accuracy 0.8, n = 500, m = 150: 0.928) is 0.951 there. It
    # also overcovers more often (preference 21 cells of 144 against the delta interval's 12;
    # rubric 25 and 25 of 96).
    cover = full_run["coverage"]
    wald, delta = cover.sel({"method": "wald"}), cover.sel({"method": "delta"})
    assert int((wald > NOMINAL + BAND).sum()) >= int((delta > NOMINAL + BAND).sum())
    goal = _goal(full_run, "wald")
    if full_run.attrs["grid"] == "preference":
        assert float(wald.min()) < float(delta.min())
        assert int(goal["below_confirmed"].sum()) == 1 and not goal["no_undercoverage"].all()
        tie = full_run["confirmed_coverage"].sel(
            {"method": "wald", "accuracy": 0.95, "shape": 0.05, "n": 1000, "m": 40, "target": "tie"}
        )
        assert float(tie) < NOMINAL - BAND
    else:
        assert int(goal["below_confirmed"].sum()) == 0


def _above(cover: xr.DataArray) -> int:
    return int((cover > NOMINAL + BAND).sum())


@pytest.mark.slow
def test_bootstrap_never_undercovers(full_run):
    # Recorded: with the calibration rows resampled from (c + 1/K)/(m + 1), no cell below the
    # band on either grid (0.930 at worst; the resampling of the observed rows had 6 of 144
    # and 5 of 96 below, down to 0.891, where rows had empty cells). Above: 5 of 144
    # (preference), 23 of 96 (rubric, up to 0.996, 18 of them at accuracy 0.6). The price is
    # width: the mean score interval is 1.04 (preference) and 1.20 (rubric) times the delta
    # interval's.
    cover = full_run["coverage"].sel({"method": "bootstrap"})
    assert not _below(cover) and float(cover.min()) >= 0.929
    assert _goal(full_run, "bootstrap")["no_undercoverage"].all()
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
    # accuracy 0.6. The score interval is 0.98 (preference) and 0.89 (rubric) times the delta
    # interval's width.
    cover = full_run["coverage"].sel({"method": "posterior"})
    assert not _below(cover) and float(cover.min()) >= 0.93
    assert _goal(full_run, "posterior")["no_undercoverage"].all()
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
    # boundary, not by a defect. Recorded: the delta interval's 17 such cells (1 preference,
    # 16 rubric) miss above in at most 0.3 %, but for one: grade 1 at accuracy 0.8, share
    # 0.02, n = 2000, m = 150, 0.975 = 1 - 0.016 - 0.009, 0.6 MC-SE above the band's edge,
    # which is two-sided; the bootstrap's 11 (rubric) miss below in at most 0.6 %.
    table = full_run.drop_sel(target="score")
    for method, side in (("delta", "miss_above"), ("bootstrap", "miss_below")):
        part = table.sel({"method": method})
        rare = (part["coverage"] > NOMINAL + BAND) & (part["truth"] <= 0.05)
        miss = part[side].where(rare).values
        miss = miss[~np.isnan(miss)]
        exceptions = 1 if (method, full_run.attrs["grid"]) == ("delta", "rubric") else 0
        assert int((miss > 0.006).sum()) == exceptions, (method, side, miss)
    # goals() counts them: of the cells above the band, one-sided (a miss share <= 0.5 %):
    # preference delta 3 of 12, bootstrap 0 of 5, posterior 9 of 15; rubric delta 21 of 25,
    # bootstrap 12 of 23, posterior 17 of 35.
    goals = categorical.goals(full_run).groupby("method")[["above", "above_one_sided"]].sum()
    expected = {
        "preference": {"delta": (12, 3), "bootstrap": (5, 0), "posterior": (15, 9)},
        "rubric": {"delta": (25, 21), "bootstrap": (23, 12), "posterior": (35, 17)},
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
    reason="Recorded: no method stays within 0.95 ± 3 MC-SE at every cell. Below it (confirmed on "
    "10,000 fresh replications) only Wald (the 5 % tie share, 0.902). Above it (preference of "
    "144 / rubric of 96): delta 12 / 25 (up to 1.000), Wald 21 / 25, bootstrap 5 / 23 (up to "
    "0.996), posterior 15 / 35 (up to 1.000): rare shares at the simplex boundary (one-sided "
    "misses) and the ill-conditioned judge (accuracy 0.6, m = 40).",
    strict=True,
)
def test_coverage_goal_two_sided(full_run):
    goals = categorical.goals(full_run)
    for method, part in goals.groupby("method"):
        assert part["passed"].all(), method
