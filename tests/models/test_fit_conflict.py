"""bj.fit on data that contradict the calibration, and Fit.compare of many systems (issue 13).

A hostile-input hunt found NUTS with 2 chains reporting θ ≈ 0.994 (r_hat 1.00, no warning)
for k = 0 of 786 against a specificity of 36/48, where the posterior's mass is at θ ≈ 0.001:
both chains sat in a mode of ~1e-9 of the mass. bj.fit now warns before sampling. And
Fit.compare kept every pair's draws (150 systems: 1 GB; 2,000 would need ~64 GB).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayesjudge as bj
import bayesjudge.models.fit as fit_module
from bayesjudge.warnings import ConvergenceWarning


class _Stop(Exception):
    pass


def _no_sampling(*args, **kwargs):
    raise _Stop


def test_conflicting_group_warns_before_sampling(monkeypatch):
    """The warning names the group and its conflict (4.2 sd) and comes before any sampling."""
    monkeypatch.setattr(fit_module, "_fit_mcmc", _no_sampling)
    counts = bj.simulate_counts([0.3, 0.5], 0.75, 0.9, n=786, m0=48, m1=11, system=["a", "b"],
                                random_seed=1)  # fmt: skip
    ds = counts.dataset.copy(deep=True)
    ds["k"].loc[{"system": "b"}] = 0
    ds["tn"].loc[{"system": "b"}], ds["tp"].loc[{"system": "b"}] = 36, 11
    conflicting = bj.JudgeCounts(ds)
    with pytest.warns(ConvergenceWarning, match=r"1 group\(s\): b/all \(4\.2 sd\)") as seen:
        with pytest.raises(_Stop):
            bj.fit(conflicting, calibration="separate", random_seed=1)
    assert "method='exact'" in str(seen[0].message)
    with warnings.catch_warnings():  # the same counts without the conflict: no warning
        warnings.simplefilter("error", ConvergenceWarning)
        with pytest.raises(_Stop):
            bj.fit(counts, calibration="separate", random_seed=1)


def test_exact_method_does_not_warn(monkeypatch):
    """method='exact' integrates such groups exactly (their mixture): no warning."""
    counts = bj.JudgeCounts.from_counts(n=786, k=0, m0=48, tn=36, m1=11, tp=11)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fit = bj.fit(counts, method="exact", random_seed=1)
    s = fit.summary().set_index("variable")
    assert 0.0013 < s.loc["theta", "mean"] < 0.0015  # LatentMixture: 0.0013987
    assert s.loc["theta", "eti_lower"] < s.loc["theta", "mean"] < s.loc["theta", "eti_upper"]


@pytest.fixture(scope="module")
def three():
    counts = bj.simulate_counts([0.3, 0.5, 0.7], 0.8, 0.9, n=300, m0=40, m1=40,
                                system=["a", "b", "c"], random_seed=1)  # fmt: skip
    return bj.fit(counts, method="exact", random_seed=1)


def test_compare_pairs_select_rows_of_the_all_pairs_result(three):
    every = three.compare()
    some = three.compare(pairs=[("c", "a"), ("a", "b")])
    assert list(some["pair"].values) == ["c - a", "a - b"]
    np.testing.assert_allclose(some["mean"].sel(pair="c - a"), -every["mean"].sel(pair="a - c"))
    np.testing.assert_array_equal(some["ci"].sel(pair="a - b"), every["ci"].sel(pair="a - b"))


@pytest.mark.parametrize(
    ("pairs", "match"),
    [([("a", "z")], "no system"), ([("a", "a")], "with itself"), ([], "pairs is empty"),
     (["ab"], "label pairs")],
)  # fmt: skip
def test_compare_pairs_are_checked(three, pairs, match):
    with pytest.raises(ValueError, match=match):
        three.compare(pairs=pairs)


def test_compare_refuses_more_values_than_memory_allows(three, monkeypatch):
    """3 pairs × 4000 draws = 12,000 values: refused under a limit of 10,000, with the
    advice to pass pairs=; one pair (4,000) passes."""
    monkeypatch.setattr(fit_module, "MAX_COMPARE_VALUES", 10_000)
    with pytest.raises(ValueError, match=r"3 pairs × 4,000 draws = 12,000 values.*pairs="):
        three.compare()
    assert three.compare(pairs=[("a", "b")]).sizes["pair"] == 1


def test_jury_options_refusal_names_the_container_and_its_fit():
    """Before: method='exact' on K-category jury counts named JuryCounts, JuryItems and the
    binary fitting functions."""
    from bayesjudge.data import CategoricalJuryCounts

    counts = CategoricalJuryCounts.from_counts(
        ["00", "11", "01"], [50, 40, 10], labelled=[[10, 0, 0], [0, 10, 0], [0, 0, 10]],
        judges=["a", "b"], categories=["x", "y", "z"],
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"CategoricalJuryCounts.*fit_categorical_jury") as err:
        bj.fit(counts, method="exact")
    assert "JuryItems" not in str(err.value)
    jury = bj.JuryCounts.from_counts(["11", "00"], [5, 5], judges=["a", "b"])
    with pytest.raises(ValueError, match=r"\(JuryCounts\).*models\.jury\.fit_jury"):
        bj.fit(jury, method="exact")
