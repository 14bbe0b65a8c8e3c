"""Tests of the clustered-verdicts study (issue 18): naive vs cluster-aware coverage.

The per-replication intervals are recomputed here from the core functions on the same seeded
data (``point_rngs`` streams, ``simulate_cluster_tables``), so the study's scoring is checked
against an independent path; the coverage claims use tolerances of 3 Monte Carlo SE (fixed
seeds). The full-size run with every goal is the slow test.
"""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import numpy as np
import pytest

from bayesjudge.core.cluster import cluster_delta
from bayesjudge.simulate import simulate_cluster_tables
from bayesjudge.studies import clustered
from bayesjudge.studies._framework import point_rngs

FAST = ["naive-lang-reiczigel", "cluster-delta"]


@pytest.fixture(scope="module")
def small():
    return clustered.run(
        reps=1000, epochs=[1, 5], icc=[0.0, 0.6], theta=[0.5], estimators=FAST, random_seed=3
    )


def test_layout_settings_and_goals_are_recorded(small):
    table = small.table
    assert table["coverage"].dims == ("epochs", "icc", "theta", "estimator")
    assert small.settings["reps"] == 1000 and small.settings["epochs"] == [1, 5]
    goals = json.loads(table.attrs["goals"])
    assert {g["goal"] for g in goals} == {"nominal", "as one verdict", "undercovers"}
    assert set(json.loads(table.attrs["seconds"])) == {"simulate", *FAST}


def test_scores_match_a_recomputation_from_the_core(small):
    r, rho, theta = 5, 0.6, 0.5
    settings = small.settings
    streams = point_rngs(3, r, rho, theta, settings["n"], settings["m0"], settings["q0"],
                         settings["q1"], count=1 + len(clustered.ESTIMATORS))  # fmt: skip
    data = simulate_cluster_tables(
        theta, settings["q0"], settings["q1"], settings["n"], settings["m0"], settings["m1"],
        epochs=r, icc=rho, size=1000, random_seed=streams[0],
    )  # fmt: skip
    res = cluster_delta(data["table"], *(data[v] for v in ("tn", "m0", "tp", "m1")))
    cell = small.table.sel(epochs=r, icc=rho, theta=theta, estimator="cluster-delta")
    covered = (res.lower <= theta) & (theta <= res.upper)
    assert float(cell["coverage"]) == covered.mean()
    assert float(cell["length"]) == pytest.approx(np.mean(res.upper - res.lower), rel=1e-12)
    assert float(cell["bias"]) == pytest.approx(np.mean(res.estimate) - theta, abs=1e-12)


def test_cluster_interval_covers_where_the_naive_one_does_not(small):
    band = 3 * np.sqrt(0.95 * 0.05 / 1000)
    cover = small.table["coverage"].sel(theta=0.5)
    for rho in (0.0, 0.6):
        assert cover.sel(epochs=5, icc=rho, estimator="cluster-delta") >= 0.95 - band
        assert cover.sel(epochs=5, icc=rho, estimator="naive-lang-reiczigel") < 0.95 - band
        # One verdict per item: both are right.
        for name in FAST:
            assert abs(cover.sel(epochs=1, icc=rho, estimator=name) - 0.95) <= band


def test_bootstraps_run_and_resample_items(small):
    res = clustered.run(reps=60, epochs=[4], icc=[0.5], theta=[0.4], n_resamples=200,
                        estimators=["naive-bootstrap", "cluster-bootstrap"])  # fmt: skip
    length = res.table["length"].squeeze()
    # Resampling items with their correlated verdicts gives wider intervals than resampling
    # the verdicts as items, on the same data (the design effect is well above 1 here).
    assert length.sel(estimator="cluster-bootstrap") > 1.1 * length.sel(estimator="naive-bootstrap")


def test_plot_draws_one_column_per_epochs(small):
    fig = clustered.plot(small.table)
    assert len(fig.axes) == 4
    plt.close(fig)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"estimators": ["bayes"]}, "estimators"),
        ({"icc": [1.0]}, "icc"),
        ({"epochs": [0]}, "epochs"),
        ({"q0": 0.4, "q1": 0.5}, "q0 \\+ q1"),
        ({"n_resamples": 10}, "n_resamples"),
    ],
)
def test_bad_options_are_refused(options, match):
    with pytest.raises(ValueError, match=match):
        clustered.run(reps=5, **options)


@pytest.mark.slow
def test_full_study_meets_every_goal():
    res = clustered.run()
    goals = clustered.goals(res.table)
    failed = goals[~goals["passed"]]
    assert failed.empty, failed.to_string()
