"""Seeded item-level verdicts of several judges whose errors depend on a covariate.

Independent of bayesjudge: the tests of the covariate model (closed form and Bayesian) draw
their data here.
"""

from __future__ import annotations

import numpy as np
from scipy import special


def simulate(rng, n_items=400, theta=0.4, coef=None, labelled=40, both_orders=False):
    """Items graded by 3 judges (twice each with a position covariate if ``both_orders``)."""
    if coef is None:
        coef = np.array([[[-1.4, 0.0], [2.2, 0.0]], [[-1.1, 0.0], [1.4, 0.0]],
                         [[-0.9, 0.0], [1.7, 0.0]]])  # fmt: skip
    truth = (rng.random(n_items) < theta).astype(int)
    orders = (0, 1) if both_orders else (0,)
    item, judge, x = [], [], []
    for i in range(n_items):
        for j in range(coef.shape[0]):
            for o in orders:
                item.append(i)
                judge.append(j)
                x.append(o - 0.5 if both_orders else rng.normal())
    item, judge, x = np.array(item), np.array(judge), np.array(x)
    eta = coef[judge, truth[item], 0] + coef[judge, truth[item], 1] * x
    verdict = (rng.random(len(item)) < special.expit(eta)).astype(int)
    seen = np.where(np.arange(n_items) < labelled, truth, -1)
    return item, judge, verdict, x, seen, truth
