"""The "optimal" split search of a K-category jury plan scales its grid with the jury's size.

Regression (2026-11-28 hunt, left open then): a K = 15 plan of one judge tried 680 splits, each
inverting a 224-square information: 33 to 169 s. The grid is now coarser where a split costs
more (``split_steps``), and the same as before for the juries of up to 64 parameters.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from bayesjudge.jury_estimate import MAX_PLAN_SPLITS, MAX_PLAN_WORK, jury_plan, split_steps
from bayesjudge.simulate import simulate_categorical_jury


def _old_steps(k: int) -> int:
    """The grid before the change (the 1500-split rule alone), written out independently."""
    return max(g for g in range(k, 51) if math.comb(g - 1, k - 1) <= 1500)


@pytest.mark.parametrize("k", range(2, 9))
def test_small_juries_keep_the_1500_split_grid(k):
    for judges in range(1, 11):
        params = (k - 1) * (1 + judges * k)
        if params <= 64:
            assert split_steps(k, params) == _old_steps(k)


@pytest.mark.parametrize(("k", "params"), [(15, 224), (10, 99), (10, 279), (14, 559), (4, 100)])
def test_steps_are_the_largest_grid_within_both_caps(k, params):
    g = split_steps(k, params)
    cap = min(MAX_PLAN_SPLITS, MAX_PLAN_WORK // params**3)
    assert g >= k
    assert g == k or math.comb(g - 1, k - 1) <= cap
    assert g == 50 or math.comb(g, k - 1) > cap  # the next grid would exceed a cap


def test_a_k15_plan_of_one_judge_searches_the_coarse_grid():
    k = 15
    conf = np.full((1, k, k), 0.2 / (k - 1))
    conf[0, np.arange(k), np.arange(k)] = 0.8
    cats = [f"c{i}" for i in range(k)]
    pi = np.linspace(1, 3, k) / np.linspace(1, 3, k).sum()
    counts = simulate_categorical_jury(
        pi, conf, n=2000, m=[20] * k, categories=cats, judges=["a"], random_seed=1
    )
    plan = jury_plan(counts, [600])
    assert plan.attrs["split_steps"] == 16  # 15 splits of 1/16 steps, not 680 of 1/18
    m = plan["m"].squeeze().values
    assert m.sum() == 600 and (m >= 1).all()
    # One category gets two steps (75 = round(600 · 2/16)), the others one (38), the first
    # the rest: measured 0.1147 against 0.1258 for the balanced split (40 each).
    assert sorted(m.tolist())[-2:] == [38.0, 75.0]
    balanced = jury_plan(counts, [600], allocation="balanced")
    assert balanced.attrs["split_steps"] == 0
    assert float(plan["target_width"].squeeze()) < float(balanced["target_width"].squeeze())
