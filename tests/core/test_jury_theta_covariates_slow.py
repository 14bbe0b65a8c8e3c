"""Coverage of the θ(x) covariate model's Wald intervals, by simulation (slow).

A truth whose logit rises with an item covariate (the length difference) and judges with no
covariate effect: the intervals of θ (aggregated over the test items), of δ and of the
judges' length slopes (true value 0) must each cover at 95 % within 3 Monte Carlo SE.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats
from test_jury_theta_covariates import simulate_confounded

from bayesjudge.core.jury_covariates import covariate_dawid_skene

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("design", ["random", "stratified"])
def test_intervals_cover_with_a_truth_that_depends_on_length(design):
    """200 data sets of 500 items, three judges, δ = 1.5, α = -0.3; 60 labelled items under
    the random design, 150 under the stratified one.

    Under the stratified design only the labelled items tell a judge's length slope from the
    truth's, and with these weak judges (Youden's J 0.4 to 0.55) and 60 labelled items the
    likelihood has several maxima: EM sometimes stops at one far from the truth and δ's
    interval covered 0.835 (seed below). Hence 150 labelled items there.

    Targets: θ = the mean of expit(α + δ w_i) over the test items (every item under the
    random design, the unlabelled ones under the stratified one, whose labelled items stand
    for a separate calibration sample), δ, and 0 for judge 0's two length slopes. The band is
    3 Monte Carlo SE of a 95 % coverage at 200 replications (±0.046).
    """
    rng = np.random.default_rng(20261128 + (design == "stratified"))
    reps, z = 200, stats.norm.ppf(0.975)
    hits = {"theta": 0, "delta": 0, "slope_t0": 0, "slope_t1": 0}
    for _ in range(reps):
        item, judge, verdict, w, seen, _ = simulate_confounded(
            rng, n=500, alpha=-0.3, delta=1.5, labelled=60 if design == "random" else 150
        )
        fit = covariate_dawid_skene(item, judge, verdict, w[item], seen, design=design,
                                    theta_covariates=w)  # fmt: skip
        test = (seen < 0) | (design == "random")
        target = special.expit(-0.3 + 1.5 * w[test]).mean()
        hits["theta"] += fit.theta_lower[0] <= target <= fit.theta_upper[0]
        hits["delta"] += abs(fit.theta_coef[1] - 1.5) <= z * np.sqrt(fit.theta_coef_cov[1, 1])
        se = np.sqrt(np.diag(fit.coef_cov)).reshape(fit.coef.shape)
        hits["slope_t0"] += abs(fit.coef[0, 0, 1]) <= z * se[0, 0, 1]
        hits["slope_t1"] += abs(fit.coef[0, 1, 1]) <= z * se[0, 1, 1]
    band = 3 * np.sqrt(0.95 * 0.05 / reps)
    rates = {k: v / reps for k, v in hits.items()}
    print(design, rates)
    assert all(abs(r - 0.95) <= band for r in rates.values()), rates
