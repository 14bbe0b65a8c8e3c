"""Frequentist comparisons of systems scored by one judge: paired bootstrap, delta-method SE, bias.

When K systems answer the same test items, the judge's verdicts on an item are paired. The
test data are then the joint verdict table: counts of the 2**K (observed) verdict patterns
over the shared items, plus each system's unshared items. Resampling items with
replacement is a multinomial draw of the pattern counts, which keeps the correlation
between the systems' verdicts (Fiedler, App. B and Sec. 4.3); the delta-method standard
error of the Rogan–Gladen difference carries the same covariance term analytically.

All functions are numpy/scipy only and broadcast over leading (group) axes.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from bayesjudge.core._validation import (
    as_calibration_counts,
    as_count,
    as_probability,
    as_subcount,
    broadcast,
    check_alpha,
    check_design,
    check_resamples,
    check_seed,
    raise_if_not_identified,
)
from bayesjudge.core.bootstrap import rg_replicates
from bayesjudge.core.kernels import DeltaDifference, rg_difference_delta, youden_is_zero
from bayesjudge.core.resampling import (
    draw_binomial,
    percentile_interval,
    resample_calibration,
    warn_undefined_replicates,
)

__all__ = [
    "SHARED_FROM",
    "DeltaDifference",
    "PairedDifference",
    "adjusted_binomial_variance",
    "naive_difference_bias",
    "pair_cells",
    "pair_cells_many",
    "paired_bootstrap",
    "rg_difference_se",
    "shared_calibration_bias",
    "shared_calibration_bias_se",
    "shared_calibration_shift",
    "system_pairs",
]

#: Whose calibration set a shared-calibration comparison reuses (see
#: :func:`shared_calibration_bias`).
SHARED_FROM = ("B", "A", "pooled")


class PairedDifference(NamedTuple):
    """Pairwise differences ``θ_first − θ_second`` of K systems with percentile intervals.

    ``theta`` has a trailing system axis (K); ``estimate``, ``lower`` and ``upper`` a trailing
    pair axis, the pairs ``(first[i], second[i])`` in :func:`system_pairs` order.
    """

    theta: np.ndarray
    first: np.ndarray
    second: np.ndarray
    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


def system_pairs(n_systems: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the indices ``(first, second)`` of the K(K−1)/2 pairs of systems, first < second.

    Parameters
    ----------
    n_systems : int
        Number of systems K.

    Returns
    -------
    tuple of numpy.ndarray
        ``first`` and ``second`` index arrays, in the order (0, 1), (0, 2), …, (1, 2), ….

    Examples
    --------
    >>> first, second = system_pairs(3)
    >>> list(zip(first.tolist(), second.tolist()))
    [(0, 1), (0, 2), (1, 2)]
    """
    return np.triu_indices(int(n_systems), 1)


def pair_cells(joint, verdicts, first: int, second: int) -> tuple[np.ndarray, ...]:
    """Return the 2×2 verdict table ``(n11, n10, n01, n00)`` of two systems from a joint table.

    Parameters
    ----------
    joint : array_like of int, shape (..., P)
        Shared items per verdict pattern (leading axes are groups).
    verdicts : array_like of {0, 1}, shape (P, K)
        The verdict pattern of each column of ``joint`` (``JudgeCounts.joint_verdicts``).
    first, second : int
        Column indices of the two systems in ``verdicts``.

    Returns
    -------
    tuple of numpy.ndarray
        ``n11, n10, n01, n00``, each of shape (...): ``n10`` counts the items with ``first``
        judged correct and ``second`` judged incorrect; the other systems' verdicts are
        summed over. The layout of :func:`rg_difference_se` and
        :func:`~bayesjudge.core.bootstrap.bootstrap_difference`.

    Examples
    --------
    >>> from bayesjudge.core.paired import pair_cells
    >>> joint = [5, 4, 3, 2, 1, 1, 1, 3]  # patterns "111", "110", …, "000" of 3 systems
    >>> verdicts = [[1, 1, 1], [1, 1, 0], [1, 0, 1], [1, 0, 0],
    ...             [0, 1, 1], [0, 1, 0], [0, 0, 1], [0, 0, 0]]
    >>> [int(c) for c in pair_cells(joint, verdicts, 0, 2)]
    [8, 6, 2, 4]
    """
    joint = np.asarray(joint)
    verdicts = np.asarray(verdicts)
    a, b = verdicts[:, first] == 1, verdicts[:, second] == 1
    return tuple(joint @ (x & y) for x, y in ((a, b), (a, ~b), (~a, b), (~a, ~b)))


# ------------------------------------------------------------------------- validation


def _joint_inputs(joint, verdicts, k, n):
    """Validate the joint table, the verdict matrix and the per-system totals.

    Returns float arrays ``joint (..., P)``, ``verdicts (P, K)``, ``k, n (..., K)`` and the
    shared counts ``n_shared (...)``, ``k_shared (..., K)``.
    """
    joint = as_count("joint", joint)
    if joint.ndim == 0:
        raise ValueError("joint must have a trailing pattern axis; got a scalar.")
    verdicts = np.asarray(verdicts)
    if (
        verdicts.ndim != 2
        or verdicts.shape[0] != joint.shape[-1]
        or not np.isin(verdicts, (0, 1)).all()
    ):
        raise ValueError(
            f"verdicts must be a 0/1 matrix (pattern, system) with one row per column of "
            f"joint ({joint.shape[-1]}); got shape {verdicts.shape}."
        )
    if verdicts.shape[1] < 2:
        raise ValueError(f"Comparisons need at least 2 systems; got {verdicts.shape[1]}.")
    verdicts = verdicts.astype(float)
    n_shared = joint.sum(axis=-1)
    k_shared = joint @ verdicts
    if (k is None) != (n is None):
        raise ValueError("Pass both k and n (each system's test totals), or neither.")
    if k is None:
        n = np.broadcast_to(n_shared[..., None], k_shared.shape)
        k = k_shared
    else:
        k, n = as_subcount("k", k, "n", n)
        k, n, k_shared, n_sh = broadcast(
            ("k", "n", "joint @ verdicts", "joint.sum(-1)"), k, n, k_shared, n_shared[..., None]
        )
        bad = (n < n_sh) | (k < k_shared) | (n - k < n_sh - k_shared)
        if bad.any():
            raise ValueError(
                "Each system's test totals must include its shared items: need n >= shared "
                "items, k >= shared items judged correct and n - k >= shared items judged "
                "incorrect; got n = "
                f"{n[bad][:5].tolist()}, k = {k[bad][:5].tolist()} with shared "
                f"{n_sh[bad][:5].tolist()} of which judged correct {k_shared[bad][:5].tolist()}."
            )
    if (n <= 0).any():
        raise ValueError(
            "Every system needs at least one test item in every group (n >= 1); got n = 0 for "
            f"{int(np.count_nonzero(n <= 0))} system-group(s)."
        )
    return joint, verdicts, k, n, n_shared, k_shared


def _calibration(tn, m0, tp, m1, shared_calibration, k_shape):
    """Calibration counts for resampling and broadcast per system, and the full shape.

    Returns ``(cal_draw, cal, shape)``: ``cal`` has shape (..., K); ``cal_draw`` is the same
    (separate tables) or one table per group, shape (...), when shared.
    """
    cal = np.broadcast_arrays(*as_calibration_counts("", tn, m0, tp, m1))
    cal_shape = (*cal[0].shape, 1) if shared_calibration else cal[0].shape
    try:
        shape = np.broadcast_shapes(k_shape, cal_shape)
    except ValueError:
        axis = "one table per group (no system axis)" if shared_calibration else "a system axis"
        raise ValueError(
            f"tn, m0, tp, m1 (shape {cal[0].shape}, {axis}) do not broadcast against the "
            f"systems' test counts (shape {k_shape})."
        ) from None
    if shared_calibration:
        cal_draw = tuple(np.broadcast_to(c, shape[:-1]) for c in cal)
        full = tuple(np.broadcast_to(c[..., None], shape) for c in cal_draw)
        return cal_draw, full, shape
    full = tuple(np.broadcast_to(c, shape) for c in cal)
    return full, full, shape


# --------------------------------------------------------------------------- bootstrap


def paired_bootstrap(
    joint,
    verdicts,
    tn,
    m0,
    tp,
    m1,
    *,
    k=None,
    n=None,
    shared_calibration=False,
    alpha=0.05,
    n_resamples=10_000,
    calibration_design="stratified",
    random_seed=None,
    pairs=None,
) -> PairedDifference:
    """Paired bootstrap of every pairwise Rogan–Gladen difference of K systems.

    Parameters
    ----------
    joint : array_like of int, shape (..., P)
        Shared test items (judged for every system) per verdict pattern; leading axes are
        groups (e.g. strata). P may be 0 (no shared items: the systems are unpaired).
    verdicts : array_like of {0, 1}, shape (P, K)
        The verdict pattern of each column of ``joint``: 1 where the judge calls system
        ``j`` correct. ``JudgeCounts.joint_verdicts`` has this layout.
    tn, m0, tp, m1 : array_like of int
        Calibration counts (as in :func:`bootstrap_rogan_gladen`), shape (..., K): one table
        per system and group. With ``shared_calibration``, one table per group, shape (...).
    k, n : array_like of int, shape (..., K), optional
        Each system's test totals, shared items included (the unshared items are resampled
        per system, independently). Default: the shared items only.
    shared_calibration : bool, default False
        One calibration table for all systems, resampled once per replicate so that every
        system sees the same ``q0*, q1*`` (judge-centric calibration; Fiedler App. A).
    alpha : float, default 0.05
        One minus the nominal coverage of the two-sided intervals.
    n_resamples : int, default 10_000
        Bootstrap replicates per group: at least 100 and at least ``2 / alpha`` (fewer raise
        ``ValueError``); below 1000, or with fewer than 5 replicates beyond each end of the
        interval, a ``SmallSampleWarning`` says that its ends carry Monte Carlo error.
    calibration_design : {"stratified", "random"}, default "stratified"
        How the calibration tables were collected (see :func:`bootstrap_rogan_gladen`).
    random_seed : int, numpy.random.Generator or None, default None
        Seed for :func:`numpy.random.default_rng`: any non-negative integer (2**70 too), a
        Generator (its stream is continued) or None (fresh entropy).
    pairs : sequence of (int, int), optional
        Only these pairs ``(a, b)`` of system positions (differences a minus b); every pair
        (:func:`system_pairs`) when None. The replicates are the same either way; a report of
        hundreds of systems compares about 2K pairs instead of K(K−1)/2.

    Returns
    -------
    PairedDifference
        ``theta`` (..., K): clipped plug-in Rogan–Gladen θ per system; ``first``, ``second``:
        the pairs (:func:`system_pairs`); ``estimate`` (..., pairs): ``θ_first − θ_second``;
        ``lower``, ``upper``: its percentile interval.

    Raises
    ------
    ValueError
        For invalid counts or options, a system without test items, test totals that do
        not include the shared items, or a plug-in ``q0 + q1 == 1`` (θ not identified).

    Warns
    -----
    LowJudgeQualityWarning
        When some replicates have a θ that is not identified (counted at the ends of the
        range, so the interval is conservative).
    SmallSampleWarning
        When ``n_resamples`` is below 1000.

    See Also
    --------
    bootstrap_difference : The same for two systems, from their 2×2 verdict table.

    Notes
    -----
    A replicate resamples the shared items with replacement, i.e. draws the pattern counts
    from ``Multinomial(n_shared, joint / n_shared)``, so that each system's ``k*`` on them
    keeps its correlation with the others' (Fiedler, App. B: pairing). Unshared items are
    drawn per system from ``Binomial(n − n_shared, (k − k_shared) / (n − n_shared))``, then the
    calibration tables (system by system, or the one shared table). θ* is the clipped
    Rogan–Gladen estimate; the interval of each pair is the percentile interval of
    ``θ*_first − θ*_second``.

    Draw order: joint table, unshared items (only if any), calibration of system 0, 1, …
    (or the shared table). With K = 2, all items shared and ``joint`` the 4 cells in the
    order ``11, 10, 01, 00``, this is exactly the stream of :func:`bootstrap_difference`, so
    the same seed gives the same interval.

    Memory grows with groups × ``n_resamples`` × (P + K(K−1)/2).

    References
    ----------
    .. [1] Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", Sec. 4.3 and
       App. E.4 (bootstrap over paired item indices), App. A (shared calibration), App. B.
    .. [2] Lee et al., "How to Correctly Report LLM-as-a-Judge Evaluations", eq. (5).

    Examples
    --------
    >>> from bayesjudge.core.paired import paired_bootstrap
    >>> res = paired_bootstrap([450, 100, 50, 400], [[1, 1], [1, 0], [0, 1], [0, 0]],
    ...                        tn=70, m0=100, tp=90, m1=100, shared_calibration=True,
    ...                        random_seed=0)
    >>> print(f"{res.estimate[0]:.4f} [{res.lower[0]:.4f}, {res.upper[0]:.4f}]")
    0.0833 [0.0437, 0.1298]
    """
    alpha = check_alpha(alpha)
    calibration_design = check_design(calibration_design)
    random_seed = check_seed(random_seed)
    joint, verdicts, k, n, n_shared, k_shared = _joint_inputs(joint, verdicts, k, n)
    cal_draw, cal, shape = _calibration(tn, m0, tp, m1, shared_calibration, k.shape)
    k, n, k_shared = (np.broadcast_to(a, shape) for a in (k, n, k_shared))
    lead = shape[:-1]
    joint = np.broadcast_to(joint, (*lead, joint.shape[-1]))
    n_shared = np.broadcast_to(n_shared, lead)

    # J = 0 policy of the plug-in estimates: raise (replicates: 0 plus a flag).
    theta, undefined = rg_replicates(k, n, *cal)
    for s in range(shape[-1]):
        raise_if_not_identified(
            undefined[..., s],
            cal[0][..., s] / cal[1][..., s],
            cal[2][..., s] / cal[3][..., s],
            f" for system {s}",
        )
    n_resamples = check_resamples(n_resamples, "paired_bootstrap", alpha)

    rng = np.random.default_rng(random_seed)
    n_systems = shape[-1]
    rep_shape = (*lead, n_resamples)
    if joint.shape[-1]:
        safe = np.where(n_shared > 0, n_shared, 1.0)[..., None]
        shares = np.where(n_shared[..., None] > 0, joint / safe, 1.0 / joint.shape[-1])
        cells = rng.multinomial(
            n_shared.astype(np.int64)[..., None], shares[..., None, :], size=rep_shape
        )
        k_s = np.moveaxis(cells @ verdicts, -1, -2)  # (..., K, R)
    else:
        k_s = np.zeros((*shape, n_resamples))
    n_unshared = n - n_shared[..., None]
    if (n_unshared > 0).any():
        rate = (k - k_shared) / np.where(n_unshared > 0, n_unshared, 1.0)
        k_s = k_s + draw_binomial(rng, n_unshared, rate, (*shape, n_resamples))
    if shared_calibration:
        drawn = resample_calibration(rng, *cal_draw, n_resamples, calibration_design)
        cal_s = tuple(np.broadcast_to(c[..., None, :], (*shape, n_resamples)) for c in drawn)
    else:
        per_system = [
            resample_calibration(
                rng, *(c[..., s] for c in cal_draw), n_resamples, calibration_design
            )
            for s in range(n_systems)
        ]
        cal_s = tuple(np.stack([d[i] for d in per_system], axis=-2) for i in range(4))
    theta_s, undefined_s = rg_replicates(k_s, n[..., None], *cal_s)
    if pairs is None:
        first, second = system_pairs(n_systems)
    else:
        first = np.array([a for a, _ in pairs], dtype=np.intp)
        second = np.array([b for _, b in pairs], dtype=np.intp)
    replicates = theta_s[..., first, :] - theta_s[..., second, :]
    undefined_pairs = undefined_s[..., first, :] | undefined_s[..., second, :]
    lower, upper = percentile_interval(replicates, undefined_pairs, alpha, -1.0, 1.0)
    warn_undefined_replicates(undefined_pairs, alpha, "a pairwise θ_a - θ_b")
    return PairedDifference(
        theta=theta,
        first=first,
        second=second,
        estimate=theta[..., first] - theta[..., second],
        lower=lower,
        upper=upper,
    )


# -------------------------------------------------------------------------- delta method


def rg_difference_se(
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
    k_a=None,
    n_a=None,
    k_b=None,
    n_b=None,
    shared_calibration=False,
) -> DeltaDifference:
    """Delta-method standard error of the Rogan–Gladen difference ``θ̂_A − θ̂_B``.

    Parameters
    ----------
    n11, n10, n01, n00 : array_like of int
        The 2×2 verdict table of A and B on their shared items (as in
        :func:`bootstrap_difference`: ``n10`` = A judged correct, B incorrect). All zero
        for unpaired systems (then ``k_a, n_a, k_b, n_b`` are needed).
    tn_a, m0_a, tp_a, m1_a : array_like of int
        Calibration counts for A's answers; with ``shared_calibration``, the one table used
        for both.
    tn_b, m0_b, tp_b, m1_b : array_like of int, optional
        Calibration counts for B's answers; required unless ``shared_calibration``, and
        must then be omitted.
    k_a, n_a, k_b, n_b : array_like of int, optional
        Each system's test totals including unshared items. Default: the shared items.
    shared_calibration : bool, default False
        One calibration table for both systems (Fiedler App. B's formula).

    Returns
    -------
    DeltaDifference
        ``estimate``: the unclipped ``θ̂_A − θ̂_B``; ``se``: its delta-method standard error;
        ``var_test`` and ``var_calibration``: the two parts of ``se**2``.

    Raises
    ------
    ValueError
        For invalid counts, a missing or superfluous calibration for B, or a plug-in
        ``Ĵ == 0``.

    Notes
    -----
    With ``p̂_X = k_X / n_X`` and ``Ĵ_X = q̂0_X + q̂1_X − 1``, the test part uses the paired
    covariance of the verdicts on the shared items (``n_s`` of them, shares ``π11``,
    ``πA = (n11 + n10) / n_s``, ``πB = (n11 + n01) / n_s``):

    ``Cov(p̂_A, p̂_B) = n_s (π11 − πA πB) / (n_A n_B)``,
    ``Var(p̂_X) = [n_s πX (1 − πX) + u_X ρX (1 − ρX)] / n_X²``

    with ``u_X`` unshared items judged correct at rate ``ρX``. For shared calibration
    (one ``Ĵ``), ``Δθ̂ = (p̂_A − p̂_B) / Ĵ`` and (Fiedler, App. B)

    ``SE² = [Var p̂_A + Var p̂_B − 2 Cov] / Ĵ² + (p̂_A − p̂_B)² [q̂0(1 − q̂0)/m0 + q̂1(1 − q̂1)/m1] / Ĵ⁴``;

    with all items shared the first term is Fiedler's ``Var̂(Ẑ_A,i − Ẑ_B,i) / (N Ĵ²)`` (the
    plug-in variance with denominator N). For system-specific calibration

    ``SE² = Var p̂_A / Ĵ_A² + Var p̂_B / Ĵ_B² − 2 Cov / (Ĵ_A Ĵ_B) + Σ_X [(1 − θ̂_X)² q̂0_X(1 −
    q̂0_X)/m0_X + θ̂_X² q̂1_X(1 − q̂1_X)/m1_X] / Ĵ_X²``

    (the calibration part of each system is Lee et al.'s eq. 10). Calibration counts are
    treated as binomial with fixed ``m0, m1`` (the stratified design). The estimate is not
    clipped to [0, 1]: the delta method linearises the unclipped estimator.

    References
    ----------
    .. [1] Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", App. B (variance
       of the shared-calibration RG comparison and pairing).
    .. [2] Lee et al., "How to Correctly Report LLM-as-a-Judge Evaluations", eq. (10).

    Examples
    --------
    >>> from bayesjudge.core.paired import rg_difference_se
    >>> res = rg_difference_se(450, 100, 50, 400, 70, 100, 90, 100, shared_calibration=True)
    >>> print(f"{res.estimate:.4f} ± {res.se:.4f}")
    0.0833 ± 0.0216
    """
    table = broadcast(
        ("n11", "n10", "n01", "n00"),
        *(
            as_count(name, v)
            for name, v in zip(("n11", "n10", "n01", "n00"), (n11, n10, n01, n00), strict=True)
        ),
    )
    n_s = as_count("n11 + n10 + n01 + n00", sum(table))
    ks_a, ks_b = table[0] + table[1], table[0] + table[2]
    totals = {"k_a": k_a, "n_a": n_a, "k_b": k_b, "n_b": n_b}
    given = [name for name, v in totals.items() if v is not None]
    if given and len(given) != 4:
        raise ValueError("Pass all of k_a, n_a, k_b, n_b (the systems' test totals) or none.")
    if given:
        k_a, n_a = as_subcount("k_a", k_a, "n_a", n_a)
        k_b, n_b = as_subcount("k_b", k_b, "n_b", n_b)
    else:
        k_a, n_a, k_b, n_b = ks_a, n_s, ks_b, n_s
    for name, k_x, n_x, ks_x in (("A", k_a, n_a, ks_a), ("B", k_b, n_b, ks_b)):
        if ((n_x < n_s) | (k_x < ks_x) | (n_x - k_x < n_s - ks_x)).any():
            raise ValueError(
                f"System {name}'s test totals must include its shared items (n >= n11 + n10 + "
                f"n01 + n00, and k and n - k at least the shared items judged correct and "
                f"incorrect)."
            )
        if (n_x <= 0).any():
            raise ValueError(f"System {name} needs at least one test item (n >= 1).")
    cal_a = as_calibration_counts("_a", tn_a, m0_a, tp_a, m1_a)
    b_args = {"tn_b": tn_b, "m0_b": m0_b, "tp_b": tp_b, "m1_b": m1_b}
    b_given = [name for name, v in b_args.items() if v is not None]
    if shared_calibration and b_given:
        raise ValueError(
            f"With shared_calibration=True, A's calibration counts serve both systems; do not "
            f"pass {', '.join(b_given)}."
        )
    if not shared_calibration and len(b_given) != 4:
        missing = [name for name in b_args if name not in b_given]
        raise ValueError(
            f"System B's calibration counts are missing: {', '.join(missing)}. Pass all of "
            f"tn_b, m0_b, tp_b, m1_b, or set shared_calibration=True."
        )
    cal_b = cal_a if shared_calibration else as_calibration_counts("_b", tn_b, m0_b, tp_b, m1_b)

    # J = 0 policy: raise (the kernel itself returns NaN there).
    for name, (tn, m0, tp, m1) in (("A", cal_a), ("B", cal_b)):
        raise_if_not_identified(
            np.atleast_1d(youden_is_zero(tn, m0, tp, m1)),
            np.atleast_1d(tn / m0),
            np.atleast_1d(tp / m1),
            f" for {name}",
        )
    return rg_difference_delta(
        table, (k_a, n_a, k_b, n_b), cal_a, None if shared_calibration else cal_b
    )


def pair_cells_many(joint, verdicts, first, second) -> tuple[np.ndarray, ...]:
    """Return the 2×2 verdict tables ``(n11, n10, n01, n00)`` of many pairs at once.

    :func:`pair_cells` for every pair ``(first[i], second[i])`` in one matrix product each.

    Parameters
    ----------
    joint : array_like of int, shape (T, P)
        Shared items per (group, verdict pattern).
    verdicts : array_like of {0, 1}, shape (P, K)
        The verdict pattern of each column of ``joint``.
    first, second : array_like of int
        System positions of the pairs.

    Returns
    -------
    tuple of numpy.ndarray
        ``n11, n10, n01, n00``, each of shape (pair, T).

    Examples
    --------
    >>> from bayesjudge.core.paired import pair_cells_many
    >>> joint = [[5, 4, 3, 2, 1, 1, 1, 3]]
    >>> verdicts = [[1, 1, 1], [1, 1, 0], [1, 0, 1], [1, 0, 0],
    ...             [0, 1, 1], [0, 1, 0], [0, 0, 1], [0, 0, 0]]
    >>> [c.tolist() for c in pair_cells_many(joint, verdicts, [0, 1], [2, 2])]
    [[[8], [6]], [[6], [5]], [[2], [4]], [[4], [5]]]
    """
    joint = np.asarray(joint)
    verdicts = np.asarray(verdicts) == 1
    a, b = verdicts[:, list(first)], verdicts[:, list(second)]
    return tuple((joint @ (x & y)).T for x, y in ((a, b), (a, ~b), (~a, b), (~a, ~b)))


# ------------------------------------------------------------------------------- bias

_NAMES = ("theta_a", "theta_b", "q0_a", "q1_a", "q0_b", "q1_b")


def _p(theta, q0, q1):
    return theta * q1 + (1 - theta) * (1 - q0)


def _probabilities(theta_a, theta_b, q0_a, q1_a, q0_b, q1_b):
    return broadcast(
        _NAMES,
        *(
            as_probability(name, v)
            for name, v in zip(_NAMES, (theta_a, theta_b, q0_a, q1_a, q0_b, q1_b), strict=True)
        ),
    )


def naive_difference_bias(theta_a, theta_b, q0_a, q1_a, q0_b, q1_b):
    """Exact bias of the naive difference ``p̂_B − p̂_A`` for ``Δθ = θ_B − θ_A``.

    ``p̂`` is an unbiased estimate of ``p = θ q1 + (1 − θ)(1 − q0)`` (Fiedler eq. 1), so the
    bias is ``p_B − p_A − (θ_B − θ_A)`` at any sample size.

    Parameters
    ----------
    theta_a, theta_b : array_like
        True accuracies of systems A and B.
    q0_a, q1_a, q0_b, q1_b : array_like
        The judge's specificity and sensitivity on each system's answers.

    Returns
    -------
    numpy.ndarray or float
        The bias, broadcast over the inputs.

    References
    ----------
    .. [1] Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", eq. (1).

    Examples
    --------
    With ``q0 = q1 = (1 + J) / 2`` the bias is ``J_B (θ_B − ½) − J_A (θ_A − ½) − δ``:

    >>> from bayesjudge.core.paired import naive_difference_bias
    >>> print(f"{naive_difference_bias(0.70, 0.75, 0.65, 0.65, 0.65, 0.65):.4f}")
    -0.0350
    """
    theta_a, theta_b, q0_a, q1_a, q0_b, q1_b = _probabilities(
        theta_a, theta_b, q0_a, q1_a, q0_b, q1_b
    )
    bias = _p(theta_b, q0_b, q1_b) - _p(theta_a, q0_a, q1_a) - (theta_b - theta_a)
    return bias[()] if bias.ndim == 0 else bias


def _shared_q(theta_a, theta_b, q0_a, q1_a, q0_b, q1_b, shared_from):
    """Large-sample (q0, q1) of the shared calibration set."""
    if shared_from == "B":
        return q0_b, q1_b
    if shared_from == "A":
        return q0_a, q1_a
    # Pooled: both systems' calibration sets (equal size m, drawn from each system's outputs)
    # merged; q0 is estimated on the truly incorrect items of both, q1 on the truly correct.
    w0_a, w0_b = 1 - theta_a, 1 - theta_b
    q0 = (w0_a * q0_a + w0_b * q0_b) / (w0_a + w0_b)
    q1 = (theta_a * q1_a + theta_b * q1_b) / (theta_a + theta_b)
    return q0, q1


def shared_calibration_bias(theta_a, theta_b, q0_a, q1_a, q0_b, q1_b, shared_from="B"):
    """Large-sample bias of the shared-calibration Rogan–Gladen difference (Fiedler App. C).

    With one calibration set whose limits are ``(q0_c, q1_c)`` used for both systems, each
    ``θ̂_X → (p_X + q0_c − 1) / J_c``, so ``Δθ̂ → (p_B − p_A) / J_c`` and the bias is
    ``(p_B − p_A) / J_c − (θ_B − θ_A)``. For ``shared_from="B"`` (B's labels reused for A)
    this is minus Fiedler's App. C bias of ``θ̂*_RG,A``, ``(θ_A ΔJ − Δq0) / J_B`` with
    ``ΔJ = J_A − J_B`` and ``Δq0 = q0_A − q0_B``, because θ̂_B stays consistent.

    Parameters
    ----------
    theta_a, theta_b : array_like
        True accuracies of systems A and B.
    q0_a, q1_a, q0_b, q1_b : array_like
        The judge's specificity and sensitivity on each system's answers.
    shared_from : {"B", "A", "pooled"}, default "B"
        Whose calibration set is shared. ``"pooled"``: both systems' sets (equal sizes, drawn
        from each system's outputs) merged, so ``q0_c`` weights ``q0_A``, ``q0_B`` by
        ``1 − θ_A``, ``1 − θ_B`` and ``q1_c`` weights ``q1_A``, ``q1_B`` by ``θ_A``, ``θ_B``.

    Returns
    -------
    numpy.ndarray or float
        The bias of ``Δθ̂ = θ̂_B − θ̂_A`` for ``θ_B − θ_A`` (unclipped estimator, calibration
        size → ∞), broadcast over the inputs.

    Raises
    ------
    ValueError
        If ``shared_from`` is unknown, an input is not a probability, or the shared
        calibration has ``J == 0``.

    References
    ----------
    .. [1] Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", App. C.

    Examples
    --------
    Fiedler's Sec. 5 judge, ``q = (1 + J) / 2``, with ``J_A = 0.3``, ``ΔJ = J_B − J_A = 0.3``;
    then the bias is ``ΔJ (θ_A − ½) / J_B``:

    >>> from bayesjudge.core.paired import shared_calibration_bias
    >>> print(f"{shared_calibration_bias(0.70, 0.75, 0.65, 0.65, 0.80, 0.80):.4f}")
    0.1000
    >>> print(f"{shared_calibration_bias(0.70, 0.75, 0.65, 0.65, 0.65, 0.65):.4f}")  # ΔJ = 0
    0.0000
    """
    if shared_from not in SHARED_FROM:
        raise ValueError(f"shared_from must be one of {SHARED_FROM}; got {shared_from!r}.")
    theta_a, theta_b, q0_a, q1_a, q0_b, q1_b = _probabilities(
        theta_a, theta_b, q0_a, q1_a, q0_b, q1_b
    )
    q0_c, q1_c = _shared_q(theta_a, theta_b, q0_a, q1_a, q0_b, q1_b, shared_from)
    if (q0_c + q1_c - 1 == 0).any():
        raise ValueError("the shared calibration has J = q0 + q1 - 1 == 0: θ is not identified.")
    bias = shared_calibration_shift(theta_b, q0_b, q1_b, q0_c, q1_c) - shared_calibration_shift(
        theta_a, q0_a, q1_a, q0_c, q1_c
    )
    return bias[()] if bias.ndim == 0 else bias


def shared_calibration_shift(theta, q0, q1, q0_c, q1_c):
    """Large-sample shift of each system's Rogan–Gladen θ̂ under a shared calibration set.

    The K-system form of Fiedler's App. C: a system whose judge has ``(q0, q1)`` on its
    answers, calibrated with a set whose limits are ``(q0_c, q1_c)``, has
    ``θ̂* → (p + q0_c − 1) / J_c`` with ``p = θ q1 + (1 − θ)(1 − q0)``, so

    ``θ̂* − θ = [θ (q1 − q1_c) − (1 − θ)(q0 − q0_c)] / J_c``.

    The bias of a difference ``θ̂*_a − θ̂*_b`` is the difference of the two shifts
    (:func:`shared_calibration_bias` for two systems and a named source of the set).

    Parameters
    ----------
    theta : array_like
        Accuracy of each system. Not checked to lie in [0, 1], so that the shift can be
        evaluated at unclipped Rogan–Gladen estimates (``bayesjudge.diagnostics``); NaN
        propagates.
    q0, q1 : array_like
        The judge's specificity and sensitivity on each system's answers.
    q0_c, q1_c : array_like
        The limits of the shared calibration set (e.g. pooled over systems).

    Returns
    -------
    numpy.ndarray or float
        ``θ̂* − θ`` (unclipped estimator, calibration size → ∞), broadcast over the inputs;
        NaN where ``q0_c + q1_c == 1``.

    References
    ----------
    .. [1] Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", App. C.

    Examples
    --------
    >>> from bayesjudge.core.paired import shared_calibration_shift
    >>> shifts = shared_calibration_shift([0.70, 0.75], [0.65, 0.80], [0.65, 0.80], 0.80, 0.80)
    >>> print([round(float(x), 4) for x in shifts])  # system 0 is biased, system 1 is not
    [-0.1, 0.0]
    """
    theta = np.asarray(theta, dtype=float)
    q0, q1, q0_c, q1_c = (
        as_probability(name, v)
        for name, v in zip(("q0", "q1", "q0_c", "q1_c"), (q0, q1, q0_c, q1_c), strict=True)
    )
    j_c = q0_c + q1_c - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = np.where(
            j_c != 0, (_p(theta, q0, q1) + q0_c - 1) / np.where(j_c != 0, j_c, 1.0) - theta, np.nan
        )
    return shift[()] if shift.ndim == 0 else shift


def adjusted_binomial_variance(x, m):
    """Binomial variance of x/m at the adjusted proportion (x + 1)/(m + 2) (never 0).

    Examples
    --------
    >>> from bayesjudge.core.paired import adjusted_binomial_variance
    >>> print(f"{adjusted_binomial_variance(0, 10):.4f}")  # q̂ = 0 still carries variance
    0.0076
    """
    p = (x + 1) / (m + 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return p * (1 - p) / m


def shared_calibration_bias_se(k, n, tn, m0, tp, m1, pooled, a, b) -> np.ndarray:
    """Delta-method SE of the App. C bias at the estimates, B̂ = Δθ̂_shared − Δθ̂_own.

    Not validated (the diagnostics' numerics). Inputs are the test proportions p̂_a, p̂_b and
    every system's q̂0, q̂1 (all enter the pooled q̂_c), treated as independent binomial
    proportions; their variances use the adjusted proportion (x + 1)/(m + 2), so that a q̂ of
    0 or 1 still carries variance. The test terms have coefficients 1/Ĵ_c − 1/Ĵ_X, which
    vanish when the judge is the same on every system; the paired covariance of p̂_a and p̂_b
    is ignored there.

    Parameters
    ----------
    k, n, tn, m0, tp, m1 : numpy.ndarray, shape (K, T)
        Counts per (system, stratum).
    pooled : tuple of numpy.ndarray, each shape (T,)
        ``tn, m0, tp, m1`` of the calibration pooled over systems.
    a, b : array_like of int
        System positions of the pairs (bias of θ̂_a − θ̂_b).

    Returns
    -------
    numpy.ndarray, shape (pair, T)
        NaN where a Ĵ is 0 or a system has no test items.

    Notes
    -----
    The sum over every system's calibration terms is the same for all pairs except at ``a``
    and ``b``, so it is computed once and corrected there (linear in the number of pairs).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesjudge.core.paired import shared_calibration_bias_se
    >>> k, n = np.array([[600.0], [500.0]]), np.full((2, 1), 1000.0)
    >>> tn, m0 = np.array([[160.0], [120.0]]), np.full((2, 1), 200.0)
    >>> tp, m1 = np.full((2, 1), 180.0), np.full((2, 1), 200.0)
    >>> pooled = (tn.sum(0), m0.sum(0), tp.sum(0), m1.sum(0))
    >>> shared_calibration_bias_se(k, n, tn, m0, tp, m1, pooled, [0], [1]).shape
    (1, 1)
    """
    a, b = np.asarray(a, dtype=int), np.asarray(b, dtype=int)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        q0, q1 = tn / m0, tp / m1
        j = q0 + q1 - 1
        theta = (p + q0 - 1) / j
        q0c, q1c = pooled[0] / pooled[1], pooled[2] / pooled[3]
        jc = q0c + q1c - 1
        star = (p + q0c - 1) / jc  # θ̂* with the pooled set, (K, T)
        d_star = (star[b] - star[a]) / jc  # (pair, T)
        var = (1 / jc - 1 / j[a]) ** 2 * adjusted_binomial_variance(k[a], n[a])
        var += (1 / jc - 1 / j[b]) ** 2 * adjusted_binomial_variance(k[b], n[b])
        c0, c1 = m0 / pooled[1], m1 / pooled[3]  # (K, T)
        v0, v1 = adjusted_binomial_variance(tn, m0), adjusted_binomial_variance(tp, m1)
        var += d_star**2 * ((c0**2 * v0).sum(0) + (c1**2 * v1).sum(0))
        # Systems a and b carry their own θ̂ terms besides the pooled-set term.
        for x, sign in ((a, -1.0), (b, 1.0)):
            base0, base1 = c0[x] * d_star, c1[x] * d_star
            e0, e1 = sign * (1 - theta[x]) / j[x], -sign * theta[x] / j[x]
            var += ((base0 + e0) ** 2 - base0**2) * v0[x]
            var += ((base1 + e1) ** 2 - base1**2) * v1[x]
        return np.sqrt(var)
