"""Seeded simulation of judge verdict counts under the misclassification model.

The generating process (``models/misclassification.md``) for each (system, stratum) group::

    p  = theta * q1 + (1 - theta) * (1 - q0)
    k  ~ Binomial(n, p)        # test items the judge calls correct
    tn ~ Binomial(m0, q0)      # truly incorrect calibration items the judge calls incorrect
    tp ~ Binomial(m1, q1)      # truly correct calibration items the judge calls correct

The calibration set is stratified by truth (m0 and m1 fixed by design), as in Lee et al.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayesjudge.core._validation import as_count, as_probability
from bayesjudge.data import JudgeCounts

__all__ = ["demo_design", "simulate_counts"]


def simulate_counts(
    theta, q0, q1, n, m0, m1, *, system=None, stratum=None, random_seed=None
) -> JudgeCounts:
    """Draw judge verdict counts for groups with known true accuracy and judge quality.

    Parameters
    ----------
    theta, q0, q1 : array_like
        True accuracy, judge specificity and judge sensitivity per group (in [0, 1]).
    n, m0, m1 : array_like of int
        Test-set size and the calibration sizes for truly incorrect / truly correct items.
    system, stratum : sequence of str, optional
        Labels of the groups, as in :meth:`JudgeCounts.from_counts`: a 1-D shape needs one of
        them, a 2-D shape ``(system, stratum)`` needs both. Scalar parameters are broadcast to
        the shape the labels define.
    random_seed : int, numpy.random.Generator or None
        Seed of the draws.

    Returns
    -------
    JudgeCounts
        The simulated counts; all arguments broadcast to one group shape.

    References
    ----------
    .. [1] C. Lee et al., "How to Correctly Report LLM-as-a-Judge Evaluations", Sec. 7 (the
       Monte Carlo design this generator follows).

    Examples
    --------
    >>> from bayesjudge.simulate import simulate_counts
    >>> counts = simulate_counts(0.4, 0.7, 0.9, n=1000, m0=100, m1=100, random_seed=1)
    >>> int(counts.n.sum()), int(counts.m0.sum())
    (1000, 100)
    >>> many = simulate_counts(0.4, 0.7, 0.9, 1000, 100, 100, system=["a", "b", "c"], random_seed=1)
    >>> many.systems
    ['a', 'b', 'c']
    """
    theta, q0, q1 = (
        as_probability(name, v) for name, v in (("theta", theta), ("q0", q0), ("q1", q1))
    )
    n, m0, m1 = (
        as_count(name, v).astype(np.int64) for name, v in (("n", n), ("m0", m0), ("m1", m1))
    )
    # The labels fix the group shape, so scalar parameters apply to every labelled group.
    label_shape = tuple(len(labels) for labels in (system, stratum) if labels is not None)
    shape = np.broadcast_shapes(*(a.shape for a in (theta, q0, q1, n, m0, m1)), label_shape)
    theta, q0, q1, n, m0, m1 = (np.broadcast_to(a, shape) for a in (theta, q0, q1, n, m0, m1))
    rng = np.random.default_rng(random_seed)
    p = theta * q1 + (1 - theta) * (1 - q0)
    k = rng.binomial(n, p)
    tn = rng.binomial(m0, q0)
    tp = rng.binomial(m1, q1)
    return JudgeCounts.from_counts(
        n=n, k=k, m0=m0, tn=tn, m1=m1, tp=tp, system=system, stratum=stratum
    )


def demo_design() -> xr.Dataset:
    """Return the documented truth behind ``bayesjudge demo``.

    Three systems answer two kinds of task; one judge with specificity 0.7 and sensitivity 0.9
    (the judge of Lee et al. Sec. 7) grades them all. Each (system, stratum) group has 1000
    judged test items and its own calibration set of 100 truly incorrect and 100 truly correct
    human-labelled items.

    Returns
    -------
    xarray.Dataset
        Variables ``theta, q0, q1, n, m0, m1`` over dims ``(system, stratum)``.

    Examples
    --------
    >>> from bayesjudge.simulate import demo_design
    >>> design = demo_design()
    >>> design["theta"].sel(system="model-a").values.tolist()
    [0.45, 0.75]
    """
    dims = ("system", "stratum")
    theta = np.array([[0.45, 0.75], [0.60, 0.80], [0.30, 0.55]])
    full = np.ones_like(theta)
    return xr.Dataset(
        {
            "theta": (dims, theta),
            "q0": (dims, 0.7 * full),
            "q1": (dims, 0.9 * full),
            "n": (dims, (1000 * full).astype(np.int64)),
            "m0": (dims, (100 * full).astype(np.int64)),
            "m1": (dims, (100 * full).astype(np.int64)),
        },
        coords={"system": ["model-a", "model-b", "model-c"], "stratum": ["reasoning", "knowledge"]},
        attrs={"description": "bayesjudge demo: 3 systems x 2 strata, judge q0=0.7, q1=0.9"},
    )
