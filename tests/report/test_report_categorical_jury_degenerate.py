"""The K-category jury report on degenerate data: one category only, a judge with no verdict.

Regression for huntcli findings 9 and 8 (session 2026-11-28 c): with every verdict and label
in one category the report aborted ("cohen_kappa is undefined"), and a judge without verdicts
emptied the jury column and drew an unnamed "No test items" warning.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from bayesjudge.data import CategoricalJuryCounts
from bayesjudge.jury_estimate import jury_agreement
from bayesjudge.report import build_categorical_jury_report


@pytest.fixture(scope="module")
def one_category():
    """150 test and 45 labelled items, every verdict and every label "A" (K = 2)."""
    return CategoricalJuryCounts.from_counts(
        ["000"], [150], [[45], [0]], judges=["a", "b", "c"], categories=["A", "B"],
        design="random",
    )  # fmt: skip


def test_agreement_leaves_kappa_undefined_and_ac1_at_one(one_category):
    ds = jury_agreement(one_category)
    assert ds["kappa"].isnull().all() and ds["kappa_human"].isnull().all()
    # AC1 = (p_a − p_e)/(1 − p_e) with p_a = 1, p_e = Σ π_k(1 − π_k)/(K − 1) = 0 → 1
    np.testing.assert_allclose(ds["ac1"].values, 1.0)
    np.testing.assert_allclose(ds["ac1_human"].values, 1.0)


def test_report_builds_with_kappa_shown_undefined(one_category):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = build_categorical_jury_report(one_category, random_seed=1)
    agreement = report.tables["agreement"]
    assert len(agreement) == 3 and agreement["kappa"].isnull().all()
    assert (agreement["ac1"] == 1.0).all()
    assert "so κ is undefined (0/0)" in report.to_markdown()
    assert report.tables["theta"]["jury"].iloc[0] == 1.0  # every test item's verdicts say A


def test_report_with_a_silent_judge_estimates_the_jury_and_names_the_judge():
    counts = CategoricalJuryCounts.from_counts(
        ["00-", "11-", "01-", "10-"], [60, 50, 20, 20], [[10, 0, 2, 1], [0, 9, 1, 2]],
        judges=["a", "b", "c"], categories=["A", "B"],
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = build_categorical_jury_report(counts, random_seed=1, warn=False)
        ref = build_categorical_jury_report(counts.sel(judge=["a", "b"]), random_seed=1,
                                            warn=False)  # fmt: skip
    jury = report.tables["theta"][["jury", "jury_lower", "jury_upper"]]
    assert np.isfinite(jury.values).all()
    np.testing.assert_array_equal(jury.values, ref.tables["theta"][jury.columns].values)
    messages = " ".join(report.tables["diagnoses"]["message"])
    assert "judge(s) ['c'] gave no verdict" in messages
    assert "Judge 'c' alone: No test items" in messages
