"""Simulation of the random labelling design item by item, and SBC rank statistics.

The random design (issue 15): the judge grades N items, humans label a random subset of L of
them. Here every item gets its truth (correct with probability θ) and the judge's verdict
(judged correct with probability q1 if truly correct, 1 − q0 if not); the labelled subset is
L items picked at random without replacement. The counts follow the package's convention:
n, k count the N − L unlabelled items (k judged correct); m0 / m1 the labelled items truly
incorrect / correct, tn / tp those of them the judge agreed with. The test-set θ is the share
truly correct among all N items.

Nothing here uses bayesjudge: the counts come from simulated items, not from the likelihood
the engine uses.

SBC (Talts et al. 2018, arXiv:1804.06788, Algorithm 1): with parameters drawn from the prior
and the data from the model, the rank of the true value among L i.i.d. posterior draws is
uniform on {0, …, L} when the posterior is exact.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import chisquare


def simulate_random_design(theta, q0, q1, n_items: int, n_labelled: int, rng) -> dict:
    """Counts of the random design for each group (θ, q0, q1 arrays of one shape), item by item.

    Returns a dict of arrays: ``k, n, tn, m0, tp, m1`` (the engine's count order is
    ``k, n, tn, m0, tp, m1``) and ``theta_test``, the share truly correct among the N items.
    """
    theta, q0, q1 = (np.asarray(v, dtype=float).ravel() for v in (theta, q0, q1))
    groups = theta.size
    truth = rng.uniform(size=(groups, n_items)) < theta[:, None]
    p_yes = np.where(truth, q1[:, None], 1 - q0[:, None])
    verdict = rng.uniform(size=(groups, n_items)) < p_yes
    # A random subset of L items per group: the first L of a random permutation.
    order = np.argsort(rng.uniform(size=(groups, n_items)), axis=1)
    labelled = np.zeros((groups, n_items), bool)
    np.put_along_axis(labelled, order[:, :n_labelled], True, axis=1)
    un = ~labelled
    return {
        "k": (verdict & un).sum(1),
        "n": un.sum(1),
        "tn": (labelled & ~truth & ~verdict).sum(1),
        "m0": (labelled & ~truth).sum(1),
        "tp": (labelled & truth & verdict).sum(1),
        "m1": (labelled & truth).sum(1),
        "theta_test": truth.mean(1),
    }


def sbc_ranks(draws: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Rank of each truth among its draws (draws: (L, groups)): #{draws < truth}, ties split.

    The test-set θ is discrete (a share of N items), so draws equal to the truth are common;
    ties are broken uniformly at random (a fixed generator), which keeps the ranks uniform on
    {0, …, L} for an exact posterior.
    """
    less = (draws < truth[None]).sum(0)
    ties = (draws == truth[None]).sum(0)
    rng = np.random.default_rng(0)
    return less + np.floor(rng.uniform(size=ties.shape) * (ties + 1)).astype(int)


def rank_pvalue(ranks: np.ndarray, n_draws: int, bins: int) -> float:
    """Chi-square p-value that ranks are uniform on {0, …, n_draws}; bins divide n_draws + 1."""
    if (n_draws + 1) % bins:
        raise ValueError("bins must divide n_draws + 1.")
    observed = np.bincount(ranks * bins // (n_draws + 1), minlength=bins)
    return float(chisquare(observed).pvalue)
