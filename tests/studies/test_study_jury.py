"""Tests of the jury study (issue 17): its machinery on tiny runs, exact references for the
majority vote and the best single judge, and (slow) the closed forms' coverage.

References, computed independently of the study's code path:

* the majority vote: with three judges and no missing verdict, the count of test items the
  majority calls correct is Binomial(n, p_maj), p_maj = θ P(maj = 1 | 1) + (1 − θ) P(maj = 1 |
  0) from the pattern probabilities (:func:`jury_pattern_probabilities`, itself checked against
  quadrature in tests/estimate/test_simulate_jury.py); the Wilson interval's exact coverage of
  θ is the sum of the binomial pmf over the k whose interval holds θ;
* the best single judge: the same data sets redrawn from the point's stream, counted through
  ``JuryCounts.for_judge`` (not the study's matrix products) and given to the Lang–Reiczigel
  interval.

Monte Carlo tolerances are 3 MC-SE of the compared quantity at fixed seeds (4 where several
cells are checked in one test).
"""

from __future__ import annotations

import warnings

import matplotlib.pyplot as plt
import numpy as np
import pytest
import xarray as xr
from scipy.stats import binom

from bayesjudge.core.correction import lang_reiczigel_interval
from bayesjudge.core.naive import naive
from bayesjudge.data.jury import JuryCounts
from bayesjudge.simulate import jury_pattern_probabilities, simulate_jury_arrays
from bayesjudge.studies import jury
from bayesjudge.studies._framework import point_rngs

CLOSED = ["best-single", "ds-wald", "majority"]
SMALL = {"theta": [0.3, 0.7], "n": [300], "labels": ["stratified:20", "random:40"]}


def _run(reps=20, random_seed=5, **options):
    options = {**SMALL, "sigma": [0.0, 1.5], "methods": CLOSED} | options
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return jury.run(reps=reps, random_seed=random_seed, **options)


@pytest.fixture(scope="module")
def small():
    return _run()


def test_table_shape_and_consistency(small):
    t = small.table
    assert t["coverage"].dims == ("theta", "n", "labels", "sigma", "method")
    assert t.sizes == {"theta": 2, "n": 1, "labels": 2, "sigma": 2, "method": 3}
    total = t["coverage"] + t["miss_below"] + t["miss_above"]
    np.testing.assert_allclose(total.values, 1.0)
    assert (t["reps_used"] == 20).all()
    np.testing.assert_array_equal(t["width_ratio"].sel({"method": "best-single"}).values, 1.0)
    assert np.isnan(t["ppc_flagged"]).all()  # no Bayesian method ran
    assert (t["width"] > 0).all() and (t["width"] <= 1).all()
    settings = small.settings
    assert settings["best_judge"] == 2 and settings["youden"] == [0.5, 0.6, 0.7]


def test_bootstrap_runs_on_its_own_replications():
    res = _run(
        reps=20, methods=["best-single", "ds-bootstrap"], bootstrap_reps=6, n_resamples=100,
        theta=[0.7], labels=["stratified:20"], sigma=[0.0],
    )  # fmt: skip
    cell = res.table.squeeze()
    assert cell["reps_used"].sel({"method": "ds-bootstrap"}) == 6
    assert cell["reps_used"].sel({"method": "best-single"}) == 20
    assert 0 < float(cell["width_ratio"].sel({"method": "ds-bootstrap"})) < 1


def test_subset_of_the_grid_reproduces_the_full_run(small):
    part = _run(theta=[0.7], labels=["random:40"]).table
    whole = small.table.sel(theta=[0.7], labels=["random:40"])
    xr.testing.assert_identical(part.drop_attrs(), whole.drop_attrs())
    other = _run(random_seed=6, theta=[0.7], labels=["random:40"]).table
    assert not np.array_equal(other["width"].values, part["width"].values)


def test_save_round_trips_and_figure_has_labelled_axes(small, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        paths = small.save(tmp_path)
        figure = small.plot()
    try:
        for ax in figure.axes:
            assert ax.get_xlabel() and ax.get_ylabel()
    finally:
        plt.close(figure)
    back = xr.load_dataset(paths["nc"], engine="h5netcdf")
    xr.testing.assert_identical(back, small.table)


def test_goals_table(small):
    table = jury.goals(small.table)
    assert list(table.columns) == [
        "goal", "method", "points", "passed", "no_undercoverage", "worst", "worst_point",
    ]  # fmt: skip
    majority = table[table["method"] == "majority"].iloc[0]
    assert majority["goal"] == "undercovers" and majority["points"] == 8
    covers = table[(table["goal"] == "covers at sigma = 0")]
    assert set(covers["method"]) == {"best-single", "ds-wald"}
    assert (covers["points"] == 4).all()


def _majority_exact(theta, n, q0, q1, alpha=0.05):
    patterns, prob = jury_pattern_probabilities(q0, q1)
    says = (patterns == 1).sum(axis=1) >= 2
    p_maj = theta * prob[1][says].sum() + (1 - theta) * prob[0][says].sum()
    k = np.arange(n + 1)
    _, lo, hi = naive(k, n, alpha=alpha)  # the Wilson interval
    return float(binom.pmf(k, n, p_maj) @ ((lo <= theta) & (theta <= hi)))


@pytest.mark.parametrize("theta", [0.3, 0.7])
def test_majority_coverage_matches_the_exact_binomial_sum(theta):
    reps = 400
    res = _run(reps=reps, theta=[theta], labels=["stratified:20"], sigma=[0.0],
               methods=["majority"])  # fmt: skip
    measured = float(res.table["coverage"].squeeze())
    exact = _majority_exact(theta, 300, np.array(jury.Q0), np.array(jury.Q1))
    assert exact < 0.9  # biased: it estimates P(majority says correct), not θ
    assert abs(measured - exact) <= 3 * np.sqrt(exact * (1 - exact) / reps)


def test_best_single_judge_recomputed_through_the_container():
    reps, theta, n, m = 60, 0.3, 300, 20
    res = _run(reps=reps, theta=[theta], labels=[f"stratified:{m}"], sigma=[1.5],
               methods=["best-single"])  # fmt: skip
    rng = point_rngs(5, 0, m, n, theta, 1.5, count=3)[0]
    data = simulate_jury_arrays(theta, jury.Q0, jury.Q1, n=n, m0=m, m1=m, dependence=1.5,
                                size=reps, random_seed=rng)  # fmt: skip
    covered, widths = [], []
    for r in range(reps):
        counts = JuryCounts.from_counts(data["patterns"], data["test"][r], data["labelled"][r],
                                        judges=["a", "b", "c"]).for_judge("c")  # fmt: skip
        c = counts.dataset.isel(system=0, stratum=0)
        k, n_, tn, m0, tp, m1 = (int(c[v]) for v in ("k", "n", "tn", "m0", "tp", "m1"))
        lo, hi = lang_reiczigel_interval(k / n_, tn / m0, tp / m1, n_, m0, m1, 0.05)
        covered.append(lo <= theta <= hi)
        widths.append(hi - lo)
    cell = res.table.squeeze()
    assert float(cell["coverage"]) == pytest.approx(np.mean(covered), abs=1e-12)
    assert float(cell["width"]) == pytest.approx(np.mean(widths), rel=1e-12)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"labels": ["strat:20"]}, r"labels must be strings 'stratified:M'"),
        ({"labels": ["random:500"]}, r"labels 'random:500': m = 500 exceeds the smallest n"),
        ({"q0": [0.8, 0.75], "q1": [0.7, 0.85, 0.8]}, r"q0 and q1 need one entry per judge"),
        ({"q0": [0.8, 1.2, 0.9]}, r"q0 must be a list of proportions"),
        ({"q0": [0.8, 0.8], "q1": [0.7, 0.7]}, r"one judge must be best"),
        ({"q0": [0.3, 0.8], "q1": [0.5, 0.9]}, r"every judge must beat chance"),
        ({"methods": ["vote"]}, r"methods must be distinct names"),
        ({"sigma": [-1]}, r"sigma values must lie in"),
        ({"alpha": 2}, r"alpha must lie in"),
        ({"bayes_reps": -1, "methods": ["bayes-joint"]}, r"bayes_reps must be"),
        (
            {"methods": ["bayes-joint"], "bayes_points": [(0.5, 300, "stratified:20", 0.0)]},
            r"bayes_points must be points \(theta, n, labels, sigma\) of the grid",
        ),
    ],
)
def test_bad_options_name_the_option(options, match):
    with pytest.raises(ValueError, match=match):
        _run(**options)


# --------------------------------------------------------------------------- slow


@pytest.mark.slow
def test_closed_form_coverage_at_moderate_reps():
    """Dawid–Skene Wald covers at nominal with independent judges; majority does not."""
    reps = 500
    res = _run(reps=reps, random_seed=11, theta=[0.3, 0.7], n=[1000],
               labels=["stratified:50", "random:100"], sigma=[0.0])  # fmt: skip
    t = res.table
    band = 4 * np.sqrt(0.95 * 0.05 / reps)  # 4 MC-SE: 8 cells judged here
    for method in ("ds-wald", "best-single"):
        cov = t["coverage"].sel({"method": method}).values
        assert np.all(np.abs(cov - 0.95) <= band), (method, cov)
    assert np.all(t["coverage"].sel({"method": "majority"}).values < 0.95 - band)
    ratio = t["width_ratio"].sel({"method": "ds-wald"}).values
    assert np.all(ratio + 3 * t["width_ratio_mcse"].sel({"method": "ds-wald"}).values < 0.85)


@pytest.mark.slow
def test_bayesian_methods_fill_their_cells_only():
    """Two short fits per Bayesian method at one point (compile included, about a minute)."""
    point = (0.7, 300, "stratified:20", 1.5)
    res = _run(reps=4, theta=[0.7], labels=["stratified:20"], sigma=[0.0, 1.5],
               methods=["best-single", *jury.BAYES_METHODS], bayes_reps=2,
               bayes_points=[point], draws=100, tune=100)  # fmt: skip
    t = res.table.squeeze(["theta", "n", "labels"])
    used = t["reps_used"].sel(sigma=1.5)
    assert used.sel({"method": "best-single"}) == 4
    assert all(used.sel({"method": m}) == 2 for m in jury.BAYES_METHODS)
    assert np.isnan(t["coverage"].sel({"sigma": 0.0, "method": list(jury.BAYES_METHODS)})).all()
    flagged = t["ppc_flagged"].sel(sigma=1.5)
    assert 0 <= float(flagged.sel({"method": "bayes-joint"})) <= 1
    assert np.isnan(flagged.sel({"method": "bayes-item"}))
    # The joint model's widths are compared with the Bayesian single judge's.
    np.testing.assert_allclose(t["width_ratio"].sel({"sigma": 1.5, "method": "bayes-single"}), 1.0)
