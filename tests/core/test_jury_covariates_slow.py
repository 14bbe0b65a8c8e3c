"""Coverage of the covariate model's Wald interval of θ, by simulation (slow)."""

from __future__ import annotations

import numpy as np
import pytest
from jury_covariate_simulation import simulate

from bayesjudge.core.jury_covariates import covariate_dawid_skene

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("theta", [0.3, 0.7])
def test_theta_interval_covers_with_a_position_effect(theta):
    """300 data sets of 300 items, three judges each graded in both orders (position slopes).

    The target is the population θ; the band is 3 Monte Carlo standard errors of a 95 %
    coverage at 300 replications (±0.038).
    """
    rng = np.random.default_rng(20261127 + int(theta * 10))
    coef = np.array([[[-1.4, 0.0], [2.2, 1.2]], [[-1.1, 0.8], [1.4, 0.0]],
                     [[-0.9, 0.0], [1.7, -0.6]]])  # fmt: skip
    reps, hits, widths = 300, 0, []
    for _ in range(reps):
        item, judge, verdict, x, seen, _ = simulate(
            rng, n_items=300, theta=theta, coef=coef, labelled=40, both_orders=True
        )
        fit = covariate_dawid_skene(item, judge, verdict, x, seen)
        hits += fit.theta_lower[0] <= theta <= fit.theta_upper[0]
        widths.append(fit.theta_upper[0] - fit.theta_lower[0])
    band = 3 * np.sqrt(0.95 * 0.05 / reps)
    assert abs(hits / reps - 0.95) <= band, (hits / reps, np.mean(widths))
