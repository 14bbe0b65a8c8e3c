"""The K-category coverage study (bayesjudge.studies.categorical): a smoke run and the full run.

The fast test runs one judge accuracy of the preference grid at 60 replications; the slow
tests rerun the recorded full-size runs (``benchmarks/studies/results/categorical-*``: 1,000
replications, 1,000 bootstrap resamples, seed ``DEFAULT_SEED``) and check the coverage goal,
nominal ± 3 nominal Monte Carlo SE = 0.95 ± 3·sqrt(0.95·0.05/1000) = 0.95 ± 0.0207.
"""

from __future__ import annotations

import warnings

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
        categorical.run(reps=20, methods=["delta", "posterior"])


BAND = 3 * np.sqrt(NOMINAL * (1 - NOMINAL) / 1000)


@pytest.fixture(scope="module", params=["preference", "rubric"])
def full_run(request):
    return categorical.run(grid=request.param).table  # the recorded run's settings


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


@pytest.mark.slow
@pytest.mark.xfail(
    reason="Recorded: no method stays within 0.95 ± 3 MC-SE at every cell. The delta interval "
    "overcovers ill-conditioned judges (up to 0.977 on the preference grid at accuracy 0.65, "
    "1.000 for grade 1 of the rubric at accuracy 0.6, amplification 3.4) and undercovers one "
    "cell per grid; the bootstrap undercovers 6 (preference) and 5 (rubric) cells, down to "
    "0.891, where calibration rows have empty cells (accurate judge, m = 40).",
    strict=True,
)
def test_coverage_goal_two_sided(full_run):
    for method in full_run["method"].values:
        cover = full_run["coverage"].sel({"method": method})
        assert bool((np.abs(cover - NOMINAL) <= BAND).all()), method
