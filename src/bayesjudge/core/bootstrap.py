"""Vectorised percentile-bootstrap intervals for the Rogan–Gladen estimate, from counts.

The bootstrap resamples the test set and the calibration set separately (Fiedler, Sec. 4.3
and App. E.4). Because every quantity is binary, resampling items with replacement is the
same as drawing the counts from a binomial (or multinomial) distribution, so all resamples
of all groups are drawn in a handful of numpy calls: group arrays broadcast against each
other and gain a trailing resample axis.
"""

from __future__ import annotations

import numpy as np

from bayesjudge.core._results import EstimateInterval, scalar_or_array
from bayesjudge.core._validation import (
    as_calibration_counts,
    as_count,
    as_subcount,
    broadcast,
    check_alpha,
    check_design,
    check_resamples,
    check_seed,
    raise_if_not_identified,
)
from bayesjudge.core.kernels import rogan_gladen_counts
from bayesjudge.core.resampling import (
    draw_binomial,
    percentile_interval,
    resample_calibration,
    warn_undefined_replicates,
)

__all__ = ["bootstrap_difference", "bootstrap_rogan_gladen", "rg_replicates"]


def rg_replicates(k, n, tn, m0, tp, m1):
    """Clipped Rogan–Gladen θ of (replicate) counts with the J = 0 policy "0 plus a flag".

    Returns ``(theta, undefined)``: :func:`~bayesjudge.core.kernels.rogan_gladen_counts`
    clipped to [0, 1], with the placeholder 0 where θ is not identified (Ĵ = 0 exactly, or
    m0 = 0 / m1 = 0 in the random design) and ``undefined`` flagging those entries; the
    percentile interval counts them at the ends of the range.

    Examples
    --------
    >>> from bayesjudge.core.bootstrap import rg_replicates
    >>> theta, undefined = rg_replicates([400, 100], 1000, [70, 5], [100, 10], [90, 5],
    ...                                  [100, 10])
    >>> theta.round(4).tolist(), undefined.tolist()
    ([0.1667, 0.0], [False, True])
    """
    theta, identified = rogan_gladen_counts(k, n, tn, m0, tp, m1, clip=True)
    return np.where(identified, theta, 0.0), ~identified  # J = 0 policy: 0, flagged


def _resample_rogan_gladen(rng, k, n, tn, m0, tp, m1, n_resamples, calibration_design):
    """Bootstrap replicates of the clipped RG estimate and their not-identified mask.

    Draw order (relied on by the tests): test counts k*, then the calibration table.
    """
    shape = (*k.shape, n_resamples)
    k_s = draw_binomial(rng, n, k / n, shape)
    tn_s, m0_s, tp_s, m1_s = resample_calibration(
        rng, tn, m0, tp, m1, n_resamples, calibration_design
    )
    return rg_replicates(k_s, n[..., None], tn_s, m0_s, tp_s, m1_s)


def _resample_difference(
    rng, table, n_total, cal_a, cal_b, shared_calibration, n_resamples, calibration_design
):
    """Bootstrap replicates of θ_A - θ_B and the mask where either θ is not identified.

    Draw order (relied on by the tests): the joint test table, A's calibration, then B's
    (skipped when shared, so both systems see the same calibration replicate).
    """
    shape = (*n_total.shape, n_resamples)
    shares = np.stack(table, axis=-1) / n_total[..., None]
    cells = rng.multinomial(n_total.astype(np.int64)[..., None], shares[..., None, :], size=shape)
    k_a_s = cells[..., 0] + cells[..., 1]
    k_b_s = cells[..., 0] + cells[..., 2]
    cal_a_s = resample_calibration(rng, *cal_a, n_resamples, calibration_design)
    cal_b_s = (
        cal_a_s
        if shared_calibration
        else resample_calibration(rng, *cal_b, n_resamples, calibration_design)
    )
    n_s = n_total[..., None]
    theta_a_s, undefined_a_s = rg_replicates(k_a_s, n_s, *cal_a_s)
    theta_b_s, undefined_b_s = rg_replicates(k_b_s, n_s, *cal_b_s)
    return theta_a_s - theta_b_s, undefined_a_s | undefined_b_s


def bootstrap_rogan_gladen(
    k,
    n,
    tn,
    m0,
    tp,
    m1,
    alpha=0.05,
    n_resamples=10_000,
    calibration_design="stratified",
    random_seed=None,
) -> EstimateInterval:
    """Rogan–Gladen estimate of θ with a percentile-bootstrap interval, from counts.

    The test set (``k`` of ``n`` items judged correct) and the calibration set are resampled
    separately, each replicate is turned into a clipped Rogan–Gladen estimate and the
    interval is the ``alpha/2`` and ``1 - alpha/2`` quantiles of the replicates. All count
    arguments broadcast against each other; every group is bootstrapped in the same numpy
    calls.

    Parameters
    ----------
    k : array_like of int
        Test items the judge calls correct, ``0 <= k <= n``.
    n : array_like of int
        Test items, at least 1.
    tn : array_like of int
        Calibration items that humans call incorrect and the judge calls incorrect.
    m0 : array_like of int
        Calibration items that humans call incorrect, at least 1.
    tp : array_like of int
        Calibration items that humans call correct and the judge calls correct.
    m1 : array_like of int
        Calibration items that humans call correct, at least 1.
    alpha : float, default 0.05
        One minus the nominal coverage of the two-sided interval.
    n_resamples : int, default 10_000
        Bootstrap replicates per group: at least 100 and at least ``2 / alpha`` (fewer raise
        ``ValueError``); below 1000, or with fewer than 5 replicates beyond each end of the
        interval, a ``SmallSampleWarning`` says that its ends carry Monte Carlo error.
    calibration_design : {"stratified", "random"}, default "stratified"
        How the calibration set was collected. ``"stratified"``: ``m0`` and ``m1`` were
        fixed by design (as in Lee et al.), so ``tn* ~ Binomial(m0, tn/m0)`` and
        ``tp* ~ Binomial(m1, tp/m1)``. ``"random"``: the ``m0 + m1`` calibration items were
        drawn at random, so the whole 2×2 table (human × judge) is resampled as one
        multinomial and ``m0*``, ``m1*`` vary between replicates.
    random_seed : int, numpy.random.Generator or None, default None
        Seed for :func:`numpy.random.default_rng`; fix it for reproducible intervals. Any
        non-negative integer (2**70 too), a Generator (its stream is continued) or None.

    Returns
    -------
    EstimateInterval
        ``(estimate, lower, upper)``: the plug-in Rogan–Gladen estimate clipped to [0, 1]
        and the percentile interval (numpy scalars for scalar input, arrays otherwise).

    Raises
    ------
    ValueError
        For invalid counts, ``alpha``, ``n_resamples`` or ``calibration_design``, and where
        the plug-in ``q0 + q1 == 1`` (θ not identified; see
        ``bayesjudge.core.correction.lang_reiczigel_interval``).

    Warns
    -----
    LowJudgeQualityWarning
        When some replicates have no identified θ (see Notes).
    SmallSampleWarning
        When ``n_resamples`` is below 1000.

    Notes
    -----
    Each replicate is ``k* ~ Binomial(n, k/n)`` for the test set, independent of the
    calibration replicate described under ``calibration_design``; this is item resampling
    with replacement written on counts (Fiedler, Sec. 4.3 and App. E.4). The replicate
    estimate is ``θ* = (p* + q0* - 1) / (q0* + q1* - 1)`` clipped to [0, 1].

    **Replicates without an identified θ.** Where ``q0* + q1* == 1`` (or, in the random design,
    a replicate has no truly-correct or no truly-incorrect item) θ* is undefined. Dropping
    such replicates, as ``judgy`` does silently (it also drops ``J* < 0``), biases the
    interval towards the survivors. Here they are kept and counted at 0 for the lower limit
    and at 1 for the upper limit: the interval then contains the percentile interval that
    any values for them would give, so it is conservative, and once their share exceeds
    ``alpha/2`` it reaches 0 or 1. A :class:`~bayesjudge.warnings.LowJudgeQualityWarning`
    reports how many groups were affected and the largest share. Replicates with
    ``J* < 0`` keep the formula's value (the consistent estimate for a judge worse than
    chance), clipped to [0, 1].

    **Coverage.** The percentile bootstrap of the clipped estimate is first-order accurate.
    In Lee et al.'s design (n = 1000, m0 = m1 = 100, q0 = 0.7, q1 = 0.9) we measured 95%
    coverage between 0.942 and 0.952 for θ from 0.05 to 0.95 (4,000 replications each), and
    0.945–0.958 with 200 randomly drawn calibration items; with small calibration sets
    (m0 = m1 = 20, n = 200) it fell to about 0.936–0.943. The Lang–Reiczigel interval is the
    closed-form alternative.
    Where ``tn == m0`` or ``tp == m1`` (a judge that looks perfect on a small calibration
    set) the stratified replicates of that ``q`` never vary, so the interval ignores its
    uncertainty; prefer Lang–Reiczigel's smoothed interval or a Bayesian model there.
    With ``n_resamples = B`` the quantiles carry Monte Carlo error of order ``1/sqrt(B)``
    of the interval's scale.

    Memory grows with (number of groups) × ``n_resamples``: about 40 bytes per replicate.
    Split very many groups into batches.

    References
    ----------
    .. [1] Lee et al., "How to Correctly Report LLM-as-a-Judge Evaluations", eq. (5)
       (Rogan–Gladen estimator); Sec. 3 and Algorithm 1 (App. A): m0, m1 fixed by design.
    .. [2] Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", Sec. 4.3 and
       App. E.4 (separate test and calibration resampling, percentile interval).
    .. [3] Efron & Tibshirani (1993), An Introduction to the Bootstrap, ch. 13 (percentile
       interval).

    Examples
    --------
    >>> from bayesjudge.core.bootstrap import bootstrap_rogan_gladen
    >>> res = bootstrap_rogan_gladen(k=400, n=1000, tn=70, m0=100, tp=90, m1=100,
    ...                              random_seed=0)
    >>> print(f"{res.estimate:.4f} [{res.lower:.4f}, {res.upper:.4f}]")
    0.1667 [0.0058, 0.2870]
    >>> res = bootstrap_rogan_gladen(k=[400, 600], n=1000, tn=70, m0=100, tp=90, m1=100,
    ...                              n_resamples=2_000, random_seed=0)
    >>> res.estimate.round(4)
    array([0.1667, 0.5   ])
    """
    alpha = check_alpha(alpha)
    calibration_design = check_design(calibration_design)
    random_seed = check_seed(random_seed)
    k, n = as_subcount("k", k, "n", n, positive_total=True)
    tn, m0, tp, m1 = as_calibration_counts("", tn, m0, tp, m1)
    k, n, tn, m0, tp, m1 = broadcast(("k", "n", "tn", "m0", "tp", "m1"), k, n, tn, m0, tp, m1)

    # J = 0 policy of the plug-in estimate: raise (replicates: 0 plus a flag, rg_replicates).
    estimate, undefined = rg_replicates(k, n, tn, m0, tp, m1)
    raise_if_not_identified(undefined, tn / m0, tp / m1)
    n_resamples = check_resamples(n_resamples, "bootstrap_rogan_gladen", alpha)

    rng = np.random.default_rng(random_seed)
    replicates, undefined_s = _resample_rogan_gladen(
        rng, k, n, tn, m0, tp, m1, n_resamples, calibration_design
    )
    lower, upper = percentile_interval(replicates, undefined_s, alpha, 0.0, 1.0)
    warn_undefined_replicates(undefined_s, alpha, "θ")
    return EstimateInterval(
        scalar_or_array(estimate), scalar_or_array(lower), scalar_or_array(upper)
    )


def bootstrap_difference(
    n11,
    n10,
    n01,
    n00,
    tn_a,
    m0_a,
    tp_a,
    m1_a,
    tn_b=None,
    m0_b=None,
    tp_b=None,
    m1_b=None,
    *,
    shared_calibration=False,
    alpha=0.05,
    n_resamples=10_000,
    calibration_design="stratified",
    random_seed=None,
) -> EstimateInterval:
    """Paired bootstrap for the difference θ_A - θ_B of two systems scored by one judge.

    Systems A and B answer the same test items and the judge scores both answers. The test
    set enters as the joint verdict table, resampled as one multinomial so that the pairing
    is kept; each system's θ is a clipped Rogan–Gladen estimate with its own (or one shared)
    calibration table. All count arguments broadcast against each other.

    Parameters
    ----------
    n11, n10, n01, n00 : array_like of int
        Shared test items on which the judge calls both answers correct (``n11``), only A's
        (``n10``), only B's (``n01``) or neither (``n00``). Their sum ``n`` must be >= 1.
    tn_a, m0_a, tp_a, m1_a : array_like of int
        Calibration counts for system A's answers (as ``tn, m0, tp, m1`` in
        :func:`bootstrap_rogan_gladen`); used for both systems when ``shared_calibration``.
    tn_b, m0_b, tp_b, m1_b : array_like of int, optional
        Calibration counts for system B's answers. Required unless ``shared_calibration``,
        and must be omitted when it is set.
    shared_calibration : bool, default False
        Use A's calibration table for both systems (judge-centric calibration: ``q0``, ``q1``
        assumed equal for A and B). It is then resampled once per replicate, so both
        systems see the same ``q0*``, ``q1*``.
    alpha : float, default 0.05
        One minus the nominal coverage of the two-sided interval.
    n_resamples : int, default 10_000
        Bootstrap replicates per group: at least 100 and at least ``2 / alpha`` (fewer raise
        ``ValueError``); below 1000, or with fewer than 5 replicates beyond each end of the
        interval, a ``SmallSampleWarning`` says that its ends carry Monte Carlo error.
    calibration_design : {"stratified", "random"}, default "stratified"
        How each calibration table was collected (see :func:`bootstrap_rogan_gladen`).
    random_seed : int, numpy.random.Generator or None, default None
        Seed for :func:`numpy.random.default_rng`: any non-negative integer (2**70 too), a
        Generator (its stream is continued) or None (fresh entropy).

    Returns
    -------
    EstimateInterval
        ``(estimate, lower, upper)`` for Δθ = θ_A - θ_B: the difference of the clipped
        plug-in estimates and the percentile interval of the replicate differences.

    Raises
    ------
    ValueError
        For invalid counts or options, a missing or superfluous calibration for B, and where
        a plug-in ``q0 + q1 == 1`` (θ not identified).

    Warns
    -----
    LowJudgeQualityWarning
        When some replicates have no identified θ_A or θ_B.
    SmallSampleWarning
        When ``n_resamples`` is below 1000.

    Notes
    -----
    A replicate draws ``(n11*, n10*, n01*, n00*) ~ Multinomial(n, table / n)``, giving
    ``k_A* = n11* + n10*`` and ``k_B* = n11* + n01*``, which is resampling the shared items
    with replacement and keeps the correlation between A's and B's verdicts (Fiedler, App. B:
    pairing removes the covariance term from the variance of the difference; Sec. 4.3). When
    the verdicts are positively correlated the interval is narrower than one that resamples
    the two systems independently. The calibration tables are resampled independently of the
    test table (and of each other unless shared).

    Shared calibration assumes that the judge's ``q0`` and ``q1`` are the same for both
    systems; if they differ the shared-calibration difference is biased by an amount that
    grows like 1/J (Fiedler, Sec. 4.2, App. A and C). Model-specific calibration avoids the
    assumption at the cost of a second labelled set.

    Replicates where θ_A* or θ_B* is not identified are counted as -1 for the lower limit and
    +1 for the upper limit (the ends of the range of Δθ), as in
    :func:`bootstrap_rogan_gladen`, and reported with a warning. Memory grows with (number
    of groups) × ``n_resamples``.

    References
    ----------
    .. [1] Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", Sec. 4.3 and App. E.4
       (bootstrap design), App. A (shared vs model-specific calibration), App. B (pairing).
    .. [2] Lee et al., "How to Correctly Report LLM-as-a-Judge Evaluations", eq. (5).

    Examples
    --------
    >>> from bayesjudge.core.bootstrap import bootstrap_difference
    >>> res = bootstrap_difference(n11=450, n10=100, n01=50, n00=400,
    ...                            tn_a=70, m0_a=100, tp_a=90, m1_a=100,
    ...                            shared_calibration=True, random_seed=0)
    >>> print(f"{res.estimate:.4f} [{res.lower:.4f}, {res.upper:.4f}]")
    0.0833 [0.0437, 0.1298]
    """
    alpha = check_alpha(alpha)
    calibration_design = check_design(calibration_design)
    random_seed = check_seed(random_seed)
    table = [
        as_count(name, v)
        for name, v in zip(("n11", "n10", "n01", "n00"), (n11, n10, n01, n00), strict=True)
    ]
    table = broadcast(("n11", "n10", "n01", "n00"), *table)
    n_total = as_count("n11 + n10 + n01 + n00", sum(table))
    if (n_total <= 0).any():
        raise ValueError(
            "n11 + n10 + n01 + n00 (the number of shared test items) must be at least 1 in "
            "every group."
        )
    cal_a = as_calibration_counts("_a", tn_a, m0_a, tp_a, m1_a)
    b_args = {"tn_b": tn_b, "m0_b": m0_b, "tp_b": tp_b, "m1_b": m1_b}
    given = [name for name, v in b_args.items() if v is not None]
    if shared_calibration:
        if given:
            raise ValueError(
                f"With shared_calibration=True, system A's calibration counts are used for "
                f"both systems; do not pass {', '.join(given)} (or set "
                f"shared_calibration=False to use B's own calibration)."
            )
        cal_b = cal_a
    else:
        if len(given) != len(b_args):
            missing = [name for name in b_args if name not in given]
            raise ValueError(
                f"System B's calibration counts are missing: {', '.join(missing)}. Pass all of "
                f"tn_b, m0_b, tp_b, m1_b, or set shared_calibration=True to use A's for both."
            )
        cal_b = as_calibration_counts("_b", tn_b, m0_b, tp_b, m1_b)

    suffix = "_a" if shared_calibration else "_b"
    names = ("n11", "n10", "n01", "n00", "n", "tn_a", "m0_a", "tp_a", "m1_a")
    names += tuple(f"{v}{suffix}" for v in ("tn", "m0", "tp", "m1"))
    arrays = broadcast(names, *table, n_total, *cal_a, *cal_b)
    table, n_total, cal_a, cal_b = arrays[:4], arrays[4], arrays[5:9], arrays[9:]
    k_a = table[0] + table[1]
    k_b = table[0] + table[2]

    # J = 0 policy of the plug-in estimates: raise (replicates: 0 plus a flag).
    theta_a, undefined_a = rg_replicates(k_a, n_total, *cal_a)
    theta_b, undefined_b = rg_replicates(k_b, n_total, *cal_b)
    raise_if_not_identified(undefined_a, cal_a[0] / cal_a[1], cal_a[2] / cal_a[3], " for A")
    raise_if_not_identified(undefined_b, cal_b[0] / cal_b[1], cal_b[2] / cal_b[3], " for B")
    n_resamples = check_resamples(n_resamples, "bootstrap_difference", alpha)

    rng = np.random.default_rng(random_seed)
    replicates, undefined_s = _resample_difference(
        rng, table, n_total, cal_a, cal_b, shared_calibration, n_resamples, calibration_design
    )
    lower, upper = percentile_interval(replicates, undefined_s, alpha, -1.0, 1.0)
    warn_undefined_replicates(undefined_s, alpha, "θ_A - θ_B")
    return EstimateInterval(
        scalar_or_array(theta_a - theta_b), scalar_or_array(lower), scalar_or_array(upper)
    )
