"""Tests of the K-category jury study (issue 17): its machinery on tiny runs and exact references.

References, computed independently of the study's code path:

* the plurality vote: with three judges, no missing verdict and K = 3 the plurality says A on
  an item when at least two judges say A, and splits the item in thirds when all three
  differ; the number of items of each kind is multinomial (probabilities from the confusion
  matrices by brute force over the 27 patterns here, pmf from ``scipy.stats.multinomial``),
  so the Wilson interval's exact coverage of θ_A is a sum over that multinomial;
* the best single judge and Dawid–Skene: the same data sets redrawn from the point's stream,
  counted through ``CategoricalJuryCounts`` and given to ``bayesjudge.estimate`` (per judge,
  and the K-class Dawid–Skene of the container), not the study's matrix products and core
  calls.

Monte Carlo tolerances are 3 MC-SE of the compared quantity at fixed seeds.
"""

from __future__ import annotations

import itertools
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pytest
import xarray as xr
from scipy.stats import multinomial, norm

import bayesjudge as bj
from bayesjudge.data import CategoricalJuryCounts
from bayesjudge.simulate import preference_confusion, simulate_categorical_jury_arrays
from bayesjudge.studies import STUDIES, categorical_jury
from bayesjudge.studies._framework import point_rngs

CLOSED = ["best-single", "ds-wald", "plurality"]
SMALL = {"tie": [0.1, 0.3], "n": [300], "labels": ["stratified:10", "random:60"]}


def _run(reps=20, random_seed=5, **options):
    options = {**SMALL, "methods": CLOSED} | options
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return categorical_jury.run(reps=reps, random_seed=random_seed, **options)


@pytest.fixture(scope="module")
def small():
    return _run()


def test_registered_and_documented():
    assert STUDIES["categorical-jury"] == "bayesjudge.studies.categorical_jury"
    assert "issue 17" in categorical_jury.__doc__.splitlines()[0]


def test_table_shape_and_consistency(small):
    t = small.table
    assert t["coverage"].dims == ("tie", "n", "labels", "method", "category")
    assert t.sizes == {"tie": 2, "n": 1, "labels": 2, "method": 3, "category": 3}
    total = t["coverage"] + t["miss_below"] + t["miss_above"]
    np.testing.assert_allclose(total.values, 1.0)
    assert (t["reps_used"] == 20).all()
    np.testing.assert_array_equal(t["width_ratio"].sel({"method": "best-single"}).values, 1.0)
    assert np.isnan(t["ppc_flagged"]).all()  # no Bayesian method ran
    assert (t["width"] > 0).all() and (t["width"] <= 1).all()
    settings = small.settings
    assert settings["best_judge"] == 2 and settings["accuracy"] == [0.7, 0.75, 0.85]
    assert settings["categories"] == ["A", "tie", "B"]


def test_true_shares_sum_to_one():
    for tie in (0.1, 0.3, 0.9):
        shares = categorical_jury.true_shares(tie)
        assert shares.sum() == pytest.approx(1.0, abs=1e-15) and shares[1] == tie


def test_subset_of_the_grid_reproduces_the_full_run(small):
    part = _run(tie=[0.3], labels=["random:60"]).table
    whole = small.table.sel(tie=[0.3], labels=["random:60"])
    xr.testing.assert_identical(part.drop_attrs(), whole.drop_attrs())
    other = _run(random_seed=6, tie=[0.3], labels=["random:60"]).table
    assert not np.array_equal(other["width"].values, part["width"].values)


def test_save_round_trips_and_figure_has_labelled_axes(small, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        paths = small.save(tmp_path)
        figure = small.plot()
    try:
        assert len(figure.axes) == 6
        for ax in figure.axes:
            assert ax.get_xlabel()
    finally:
        plt.close(figure)
    back = xr.load_dataset(paths["nc"], engine="h5netcdf")
    xr.testing.assert_identical(back, small.table)


def test_goals_table(small):
    table = categorical_jury.goals(small.table)
    assert list(table.columns) == [
        "goal", "method", "cells", "passed", "no_undercoverage", "worst", "worst_cell",
    ]  # fmt: skip
    assert table["goal"].tolist() == [
        "covers", "covers", "width <= 0.85 x best single", "undercovers",
    ]  # fmt: skip
    assert (table["cells"] == 12).all()  # 4 points × 3 categories
    width = table[table["goal"].str.startswith("width")].iloc[0]
    # 20 replications already show the jury far narrower than its best judge.
    assert width["method"] == "ds-wald" and width["passed"] and width["worst"] < 0.85


def _plurality_exact(theta, confusion, n, category, alpha=0.05):
    """Exact coverage of θ_k by the plurality vote's Wilson interval (three judges, K = 3)."""
    # P(pattern | truth) by brute force over the 27 patterns, then the three kinds of item.
    kinds = np.zeros(3)  # at least two say k, all three differ, otherwise
    for v in itertools.product(range(3), repeat=3):
        p = sum(theta[t] * np.prod([confusion[j, t, v[j]] for j in range(3)]) for t in range(3))
        kind = 0 if v.count(category) >= 2 else (1 if len(set(v)) == 3 else 2)
        kinds[kind] += p
    a, c = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    ok = a + c <= n
    a, c = a[ok], c[ok]
    pmf = multinomial.pmf(np.column_stack([a, c, n - a - c]), n, kinds)
    hits = a + c / 3
    z = norm.ppf(1 - alpha / 2)
    p = hits / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    lower = np.where(hits == 0, 0.0, centre - half)
    upper = np.where(hits == n, 1.0, centre + half)
    return float(pmf @ ((lower <= theta[category]) & (theta[category] <= upper)))


@pytest.mark.parametrize(("tie", "category", "biased"), [(0.1, 1, True), (0.3, 0, False)])
def test_plurality_coverage_matches_the_exact_multinomial_sum(tie, category, biased):
    reps = 400
    res = _run(reps=reps, tie=[tie], labels=["stratified:10"], methods=["plurality"])
    measured = float(res.table["coverage"].isel(category=category).squeeze())
    confusion = preference_confusion(
        np.array(categorical_jury.ACCURACY), tie_rate=categorical_jury.TIE_RATE
    )
    exact = _plurality_exact(categorical_jury.true_shares(tie), confusion, 300, category)
    # Biased for the ties (it estimates P(plurality says tie), not θ_tie); about right for A.
    assert (exact < 0.8) == biased
    assert abs(measured - exact) <= 3 * np.sqrt(exact * (1 - exact) / reps)


def test_best_single_and_dawid_skene_recomputed_through_the_container():
    reps, tie, n, m = 10, 0.1, 300, 10
    res = _run(reps=reps, tie=[tie], labels=[f"stratified:{m}"], methods=["best-single", "ds-wald"])
    theta = categorical_jury.true_shares(tie)
    confusion = preference_confusion(
        np.array(categorical_jury.ACCURACY), tie_rate=categorical_jury.TIE_RATE
    )
    rng = point_rngs(5, 0, m, n, tie, count=2)[0]
    data = simulate_categorical_jury_arrays(theta, confusion, n=n, m=[m] * 3, size=reps,
                                            random_seed=rng)  # fmt: skip
    single, jury = [], []
    for r in range(reps):
        counts = CategoricalJuryCounts.from_counts(
            data["patterns"], data["test"][r], data["labelled"][r], judges=["a", "b", "c"],
            categories=["A", "tie", "B"],
        )  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            single.append(bj.estimate(counts.for_judge("c"))["ci"].squeeze().values)
            jury.append(bj.estimate(counts, method="dawid-skene")["ci"].squeeze().values)
    for method, ci in (("best-single", np.array(single)), ("ds-wald", np.array(jury))):
        cell = res.table.sel({"method": method}).squeeze(["tie", "n", "labels"])
        covered = (ci[..., 0] <= theta) & (theta <= ci[..., 1])
        np.testing.assert_allclose(cell["coverage"].values, covered.mean(0), atol=1e-12)
        np.testing.assert_allclose(
            cell["width"].values, (ci[..., 1] - ci[..., 0]).mean(0), rtol=1e-6
        )


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"labels": ["strat:20"]}, r"labels must be strings 'stratified:M'"),
        ({"accuracy": [0.8, 0.8]}, r"one judge must be best"),
        ({"accuracy": [0.3, 0.8]}, r"each above 1/3"),
        ({"accuracy": [0.95, 0.8], "tie_rate": 0.1}, r"accuracy \+ tie_rate <= 1"),
        ({"tie_rate": 1.0}, r"tie_rate must lie in"),
        ({"methods": ["vote"]}, r"methods must be distinct names"),
        ({"tie": [0.0]}, r"tie values must lie in"),
        ({"alpha": 2}, r"alpha must lie in"),
        ({"bayes_reps": 0, "methods": ["bayes-joint"]}, r"bayes_reps must be"),
        (
            {"methods": ["bayes-joint"], "bayes_points": [(0.5, 300, "stratified:10")]},
            r"bayes_points must be points \(tie, n, labels\) of the grid",
        ),
    ],
)
def test_bad_options_name_the_option(options, match):
    with pytest.raises(ValueError, match=match):
        _run(**options)
