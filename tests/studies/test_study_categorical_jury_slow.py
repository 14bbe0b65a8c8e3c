"""The K-category jury study at sizes whose Monte Carlo error gives a meaningful band (slow).

Closed forms: 500 replications per point, so one coverage cell has nominal MC-SE
sqrt(0.95 · 0.05 / 500) = 0.0097; 6 cells per method are judged here, at ±4 MC-SE (±0.039).
The Bayesian joint model: 30 fits at one point, MC-SE 0.040 per cell, judged at ±3 MC-SE
(coverage ≥ 0.83); its width ratio against the single judge's Bayesian model carries its own
paired MC-SE (delta method), and the goal is checked on ratio + 3 MC-SE.
"""

from __future__ import annotations

import numpy as np
import pytest

from bayesjudge.studies import categorical_jury

pytestmark = pytest.mark.slow


def test_closed_form_coverage_and_width_at_moderate_reps():
    """Dawid–Skene Wald covers at nominal and is ≤ 0.85 × the best judge's width."""
    reps = 500
    res = categorical_jury.run(
        reps=reps, random_seed=11, tie=[0.1, 0.3], n=[300], labels=["stratified:10"],
        methods=["best-single", "ds-wald", "plurality"],
    )  # fmt: skip
    t = res.table
    band = 4 * np.sqrt(0.95 * 0.05 / reps)
    cov = t["coverage"].sel({"method": "ds-wald"}).values
    assert np.all(np.abs(cov - 0.95) <= band), cov
    # The single judge's score-type interval is conservative where a share is small: only
    # undercoverage would be a defect.
    assert np.all(t["coverage"].sel({"method": "best-single"}).values >= 0.95 - band)
    ratio = t["width_ratio"].sel({"method": "ds-wald"}).values
    assert np.all(ratio + 3 * t["width_ratio_mcse"].sel({"method": "ds-wald"}).values < 0.85)
    # The plurality vote estimates P(plurality says tie), not θ_tie: it undercovers there.
    tie = t["coverage"].sel({"method": "plurality", "category": "tie", "tie": 0.1})
    assert float(tie.squeeze()) < 0.95 - band
    goals = categorical_jury.goals(t).set_index(["goal", "method"])
    assert goals.loc[("width <= 0.85 x best single", "ds-wald"), "passed"]


def test_bayesian_joint_model_covers_and_is_narrower_than_the_single_judge():
    reps = 30
    point = (0.1, 300, "stratified:10")
    res = categorical_jury.run(
        reps=reps, random_seed=12, tie=[0.1], n=[300], labels=["stratified:10"],
        methods=["best-single", "bayes-joint"], bayes_reps=reps, bayes_points=[point],
        draws=300, tune=300, chains=2,
    )  # fmt: skip
    t = res.table.squeeze(["tie", "n", "labels"])
    assert (t["reps_used"].sel({"method": ["bayes-joint", "bayes-single"]}) == reps).all()
    cov = t["coverage"].sel({"method": "bayes-joint"}).values
    assert np.all(cov >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / reps)), cov
    ratio = t["width_ratio"].sel({"method": "bayes-joint"}).values
    se = t["width_ratio_mcse"].sel({"method": "bayes-joint"}).values
    assert np.all(ratio + 3 * se < categorical_jury.WIDTH_RATIO_GOAL), (ratio, se)
    # Conditionally independent judges: the agreement check should rarely flag (false alarms).
    flagged = float(t["ppc_flagged"].sel({"method": "bayes-joint"}).isel(category=0))
    assert flagged <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / reps)
    np.testing.assert_allclose(t["width_ratio"].sel({"method": "bayes-single"}), 1.0)
