"""Calibration-set allocation and the judge-versus-human-only comparison.

Two design questions that come before any data are corrected:

* how to split a budget of ``m`` human labels between truly-incorrect (``m0``) and
  truly-correct (``m1``) calibration items (Lee et al., Algorithm 1 and Prop. 5.2), and
* whether the same ``m`` human labels are better spent calibrating a judge or labelling
  test items directly (Lee et al., Sec. 6, Prop. 6.1 and Prop. B.2), and
* under the random labelling design (humans label a random subset of the judged items), how
  many items to label for a target interval width (:func:`random_design_variance`,
  :func:`labels_for_width`; Tenenbein's double sampling).

Everything here is closed-form numpy; inputs broadcast against each other.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
from scipy import stats

from bayesjudge.core._results import scalar_or_array
from bayesjudge.core._validation import (
    as_count,
    as_probability,
    broadcast,
    check_alpha,
    check_not_greater,
    check_open_unit,
    format_values,
)
from bayesjudge.warnings import LowJudgeQualityWarning, SmallSampleWarning

__all__ = [
    "HUMAN_ONLY_Q_THRESHOLD",
    "PLANNING_DESIGNS",
    "REPORT_DESIGNS",
    "Allocation",
    "AllocationOption",
    "AllocationReport",
    "HumanOnlyComparison",
    "HumanOnlyRegime",
    "LabelPlan",
    "allocate_calibration",
    "allocation_report",
    "human_only_regime",
    "judge_beats_human_only",
    "labels_for_width",
    "random_design_variance",
    "variance_vs_human_only",
]

#: Smallest common accuracy q = q0 = q1 at which a corrected judge can ever beat human-only
#: labelling (Lee et al., Prop. 6.1): 1/2 + 1/(2*sqrt(2)) ≈ 0.8536.
HUMAN_ONLY_Q_THRESHOLD = 0.5 + 1.0 / (2.0 * np.sqrt(2.0))

_METHODS = ("algorithm1", "exact")
#: The labelling designs :func:`labels_for_width` plans for.
PLANNING_DESIGNS = ("random", "stratified")
#: The ``design`` values of :func:`allocation_report`: one design's options or both.
REPORT_DESIGNS = ("stratified", "random", "both")
# Pilot proportions are counts / m_pilot; a product within this (relative) distance of a whole
# number is taken to be that number, so that 0.7 * 10 is exactly 7 and kappa is exact.
_SNAP_TOL = 1e-9


class Allocation(NamedTuple):
    """A calibration split: ``m0`` truly-incorrect and ``m1`` truly-correct items."""

    m0: int | np.ndarray
    m1: int | np.ndarray


class AllocationOption(NamedTuple):
    """One allocation and the Lang–Reiczigel interval length it is predicted to give."""

    m0: int | np.ndarray
    m1: int | np.ndarray
    length: np.ndarray


class AllocationReport(NamedTuple):
    """Symmetric, Algorithm 1 and exact allocations side by side, with the plug-in values.

    ``random`` is the random labelling design's option (``m`` items labelled at random among
    the judged ones; ``m0``, ``m1`` their expected split), filled when
    :func:`allocation_report` is asked for it (``design="random"`` or ``"both"``), else None;
    with ``design="random"`` the three stratified options are None. ``random_theta`` is the
    planning θ of that option (θ̃, or 1/2 where J̃ <= 0; see :func:`allocation_report`),
    the value to hand to :func:`labels_for_width`; None with the random option.
    """

    symmetric: AllocationOption | None
    algorithm1: AllocationOption | None
    exact: AllocationOption | None
    p_tilde: np.ndarray
    q0_tilde: np.ndarray
    q1_tilde: np.ndarray
    theta_tilde: np.ndarray
    random: AllocationOption | None = None
    random_theta: np.ndarray | None = None


class LabelPlan(NamedTuple):
    """How many items to label for a target interval width (:func:`labels_for_width`).

    ``labels`` (the total, ``m0 + m1``), ``m0`` and ``m1`` (planned for the stratified
    design; the expected split, rounded, for the random one), ``width`` (the full interval
    width predicted at that many labels) and ``reachable`` (False where no number of labels
    reaches the target: ``labels`` is then the most there can be, all ``judged`` items for the
    random design, and -1 for the stratified one).
    """

    labels: int | np.ndarray
    m0: int | np.ndarray
    m1: int | np.ndarray
    width: np.ndarray
    reachable: np.ndarray


class HumanOnlyComparison(NamedTuple):
    """Variance of the corrected judge estimate, of the human-only estimate, and their ratio."""

    judge: np.ndarray
    human: np.ndarray
    ratio: np.ndarray


class HumanOnlyRegime(NamedTuple):
    """The accuracies θ at which a corrected judge beats human-only labelling (Prop. 6.1).

    ``exists`` is False where the regime is empty; ``lower`` and ``upper`` are then both 0.5
    (a zero-width placeholder that plots as nothing). Use :meth:`contains` for membership,
    which respects ``exists``.
    """

    lower: np.ndarray
    upper: np.ndarray
    exists: np.ndarray

    def contains(self, theta):
        """Return True where ``theta`` lies in the (non-empty) regime."""
        theta = np.asarray(theta, dtype=float)
        inside = self.exists & (self.lower <= theta) & (theta <= self.upper)
        return scalar_or_array(inside)


# --------------------------------------------------------------------------------------
# Private formulas. The predicted length holds the pilot plug-ins q̃0, q̃1 fixed while m0, m1
# vary, which is not what correction.lang_reiczigel_length computes (it re-smooths observed
# proportions with the given sizes); tests/core/test_allocation.py checks that the two agree where
# they describe the same interval.
# --------------------------------------------------------------------------------------


def _z(alpha: float) -> float:
    return float(stats.norm.isf(alpha / 2))


def _as_int(arr: np.ndarray):
    """Whole-number float array -> Python int (0-d) or int64 array."""
    out = np.asarray(arr).astype(np.int64)
    return int(out) if out.ndim == 0 else out


def _pilot_count(m_pilot: np.ndarray, q_pilot: np.ndarray) -> np.ndarray:
    count = m_pilot * q_pilot
    nearest = np.round(count)
    return np.where(np.abs(count - nearest) <= _SNAP_TOL * m_pilot, nearest, count)


def _prepare(m, p_hat, q0_pilot, q1_pilot, m_pilot, m0_pilot=None, m1_pilot=None):
    """Validate the allocation inputs and return the broadcast pilot quantities.

    Returns ``m, p_hat, lo0, lo1, q0t, q1t, kappa``: ``lo0``/``lo1`` are the pilot sizes per
    label type (``m_pilot`` unless ``m0_pilot``/``m1_pilot`` are given), which are both the
    smoothing sizes of q̃0/q̃1 and the smallest admissible ``m0``/``m1``.
    """
    m = as_count("m", m, positive=True)
    p_hat = as_probability("p_hat", p_hat)
    q0_pilot = as_probability("q0_pilot", q0_pilot)
    q1_pilot = as_probability("q1_pilot", q1_pilot)
    m_pilot = as_count("m_pilot", m_pilot, positive=True)
    if m0_pilot is None and m1_pilot is None:
        if (2 * m_pilot > m).any():
            mp, mm = np.broadcast_arrays(m_pilot, m)
            bad = 2 * mp > mm
            raise ValueError(
                f"The pilot takes m_pilot items of each label type, so 2 * m_pilot must not "
                f"exceed the budget m; got m_pilot={format_values(mp[bad])} with "
                f"m={format_values(mm[bad])}. Lower m_pilot or raise m."
            )
        lo0 = lo1 = m_pilot
    else:
        lo0 = m_pilot if m0_pilot is None else as_count("m0_pilot", m0_pilot, positive=True)
        lo1 = m_pilot if m1_pilot is None else as_count("m1_pilot", m1_pilot, positive=True)
        if (lo0 + lo1 > m).any():
            a, b, mm = np.broadcast_arrays(lo0, lo1, m)
            bad = a + b > mm
            raise ValueError(
                f"The pilot items are part of the budget, so m0_pilot + m1_pilot must not "
                f"exceed m; got m0_pilot={format_values(a[bad])}, "
                f"m1_pilot={format_values(b[bad])} with m={format_values(mm[bad])}. Raise m."
            )
    m, p_hat, q0_pilot, q1_pilot, lo0, lo1 = broadcast(
        ("m", "p_hat", "q0_pilot", "q1_pilot", "m0_pilot", "m1_pilot"),
        m, p_hat, q0_pilot, q1_pilot, lo0, lo1,
    )  # fmt: skip
    c0 = _pilot_count(lo0, q0_pilot)
    c1 = _pilot_count(lo1, q1_pilot)
    q0t = (c0 + 1) / (lo0 + 2)
    q1t = (c1 + 1) / (lo1 + 2)
    # From counts, (1 - q0t)/(1 - q1t) is a ratio of whole numbers (times (lo1 + 2)/(lo0 + 2),
    # exactly 1 for a symmetric pilot), so equal error counts give exactly 1 (and 4, 9, ...
    # give exact square roots) and exact halves stay halves below.
    kappa = (lo0 + 1 - c0) / (lo1 + 1 - c1) * ((lo1 + 2) / (lo0 + 2))
    return m, p_hat, lo0, lo1, q0t, q1t, kappa


def _algorithm1_m1(m, p_hat, lo0, lo1, kappa):
    # m / (1 + (1/p - 1) sqrt(kappa)) rewritten as m p / (p + (1 - p) sqrt(kappa)): no division
    # by p (p = 0 gives 0, the paper's limit) and no inexact 1/p, so halves are computed exactly.
    raw = m * p_hat / (p_hat + (1 - p_hat) * np.sqrt(kappa))
    m1 = np.round(raw)  # half-to-even, like Python's round()
    return np.minimum(np.maximum(m1, lo1), m - lo0)


def _plugin(p_hat, q0t, q1t, n, z):
    """Plug-in p̃, test-set variance term, J̃ and θ̃ (clipped to [0, 1]) of eqs. (6)-(7)."""
    if n is None:
        p_t = p_hat
        test_var = np.zeros_like(p_hat)
    else:
        n_t = n + z**2
        p_t = (n * p_hat + z**2 / 2) / n_t
        test_var = p_t * (1 - p_t) / n_t
    j_t = q0t + q1t - 1
    ok = j_t > 0
    theta = np.divide(p_t + q0t - 1, j_t, out=np.zeros_like(j_t), where=ok)
    return p_t, test_var, j_t, np.clip(theta, 0.0, 1.0)


def _calib_weights(theta, q0t, q1t):
    """Return A, B of the calibration variance A/(m0+2) + B/(m1+2) in eq. (6)."""
    return (1 - theta) ** 2 * q0t * (1 - q0t), theta**2 * q1t * (1 - q1t)


def _exact_m1(m, lo, hi, a, b):
    # A/(m0+2) + B/(m1+2) is convex in m1, so the integer minimiser is a neighbour of the
    # clipped continuous minimiser (m1+2)/(m0+2) = sqrt(B)/sqrt(A).
    sa, sb = np.sqrt(a), np.sqrt(b)
    cont = np.clip((m + 4) * sb / (sa + sb) - 2, lo, hi)
    down, up = np.floor(cont), np.ceil(cont)

    def objective(m1):
        return a / (m - m1 + 2) + b / (m1 + 2)

    return np.where(objective(up) < objective(down), up, down)


def _predicted_length(z, test_var, j_t, a, b, m0, m1):
    var = test_var + a / (m0 + 2) + b / (m1 + 2)
    ok = j_t > 0
    half = np.sqrt(np.divide(var, j_t**2, out=np.zeros_like(var), where=ok))
    return np.where(ok, 2 * z * half, np.inf)


def _warn_low_j(j_t, q0_pilot, q1_pilot, fallback: bool, random: bool = False) -> None:
    bad = j_t <= 0
    if not bad.any():
        return
    q0b, q1b = np.broadcast_arrays(np.asarray(q0_pilot), np.asarray(q1_pilot))
    extra = (
        " method='exact' returns the Algorithm 1 allocation there, and the predicted interval "
        "length is infinite."
        if fallback
        else ""
    )
    if random:
        extra += (
            " The random design's plan cannot read θ off the judge there, so it assumes the "
            "worst case θ = 1/2."
        )
    warnings.warn(
        f"The smoothed pilot estimates give J = q0 + q1 - 1 <= 0 for {int(bad.sum())} of "
        f"{bad.size} inputs (q0_pilot {format_values(q0b[bad])}, q1_pilot "
        f"{format_values(q1b[bad])}): the judge is no better than chance on the pilot, so the "
        f"corrected estimate will be unstable whatever the split.{extra} Check the judge and the "
        f"pilot labels, or collect a larger pilot.",
        LowJudgeQualityWarning,
        stacklevel=3,
    )


def _planning_theta(theta, labelled):
    """θ kept inside [1/(L+2), (L+1)/(L+2)], the +1/+2 smoothed share of L labels.

    At θ = 0 or 1 the random design's asymptotic variance is 0, so a plan there would promise
    a zero-width interval from one label. L labels none of which is truly correct say
    θ ≈ 1/(L + 2) (the pilot's q̃ are smoothed the same way), which predicts a width of
    about 2z/L: the Wilson interval of 0 of L is z²/(L + z²) wide, the profile likelihood's
    about z²/(2L), so the plan errs on the safe side.
    """
    lo = 1.0 / (labelled + 2.0)
    return np.clip(theta, lo, 1.0 - lo)


def _random_theta(p_t, q0t, q1t, j_t):
    """Return (θ for the random design's plan, mask where the pilot's θ̃ left (0, 1)).

    θ̃ = (p̃ + q̃0 − 1)/J̃ clipped to [0, 1] where J̃ > 0; where J̃ <= 0 the verdicts say
    nothing about θ, so the plan takes the worst case θ = 1/2 (largest θ(1 − θ)).
    """
    ok = j_t > 0
    raw = np.divide(p_t + q0t - 1, j_t, out=np.full_like(j_t, 0.5), where=ok)
    boundary = ok & ((raw <= 0) | (raw >= 1))
    return np.clip(raw, 0.0, 1.0), boundary


def _warn_theta_boundary(boundary, p_hat, q0t, q1t, m) -> None:
    if not boundary.any():
        return
    p, q0, q1, mm = np.broadcast_arrays(p_hat, q0t, q1t, m)
    bad = boundary
    warnings.warn(
        f"The pilot puts the planning θ̃ = (p̃ + q̃0 - 1)/(q̃0 + q̃1 - 1) on the boundary 0 or 1 "
        f"for {int(bad.sum())} of {bad.size} inputs (p̂ {format_values(p[bad])}, smoothed "
        f"q̃0 {format_values(np.round(q0[bad], 4))}, q̃1 {format_values(np.round(q1[bad], 4))}): "
        f"p̂ is at or below the judge's false-positive rate 1 - q̃0 (or at or above q̃1), so "
        f"the pilot says θ is near 0 (or 1) but not how near, and there the random design's "
        f"variance θ(1 - θ)/L would promise a zero-width interval. Its plan uses θ̃ = 1/(m + 2) "
        f"(or (m + 1)/(m + 2)), the smoothed share of m = {format_values(mm[bad])} labels none "
        f"(all) of which are truly correct. Check p̂ and the pilot, or plan for the smallest "
        f"θ that must be told apart from the boundary.",
        SmallSampleWarning,
        stacklevel=3,
    )


def _check_method(method: str) -> str:
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}; got {method!r}.")
    return method


def _check_n(n):
    return None if n is None else as_count("n", n, positive=True)


# --------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------


def allocate_calibration(
    m,
    p_hat,
    q0_pilot,
    q1_pilot,
    m_pilot=10,
    method: str = "algorithm1",
    *,
    n=None,
    alpha: float = 0.05,
    m0_pilot=None,
    m1_pilot=None,
) -> Allocation:
    """Split a budget of ``m`` human labels between truly-incorrect and truly-correct items.

    Parameters
    ----------
    m : int or array_like
        Total calibration budget ``m0 + m1`` (including the pilot items).
    p_hat : float or array_like
        Share of test items the judge calls correct, ``k / n``.
    q0_pilot, q1_pilot : float or array_like
        Raw pilot specificity and sensitivity: the share of the ``m_pilot`` truly-incorrect
        (truly-correct) pilot items that the judge got right.
    m_pilot : int or array_like, default 10
        Pilot items per label type (at least 1); both ``m0`` and ``m1`` are kept at least
        ``m_pilot``. Requires ``2 * m_pilot <= m``.
    method : {"algorithm1", "exact"}, default "algorithm1"
        ``"algorithm1"``: Lee et al.'s Algorithm 1 (the q → 1 approximation of Prop. 5.2).
        ``"exact"``: the integer ``m1`` that minimises the Lang–Reiczigel interval length (6)
        at the plug-in values, with no approximation.
    n : int or array_like, optional
        Test-set size, used by ``"exact"`` only; None means ``n → ∞`` (p̃ = p̂).
    alpha : float, default 0.05
        Interval level ``1 - alpha``, used by ``"exact"`` with finite ``n`` only (through
        p̃ = (n p̂ + z²/2)/(n + z²)).
    m0_pilot, m1_pilot : int or array_like, optional
        Pilot items of each label type when they differ (labels already collected, e.g.
        300 truly-incorrect and 20 truly-correct ones); each defaults to ``m_pilot``. Then
        ``q0_pilot`` is the share of the ``m0_pilot`` truly-incorrect pilot items that the
        judge got right (``q1_pilot`` likewise), each q̃ is smoothed with its own size, and
        the split keeps ``m0 >= m0_pilot`` and ``m1 >= m1_pilot``: labels already collected
        are never given up. Requires ``m0_pilot + m1_pilot <= m`` (each at least 1).

    Returns
    -------
    Allocation
        NamedTuple ``(m0, m1)`` of Python ints for scalar input, int64 arrays otherwise.

    Raises
    ------
    ValueError
        For proportions outside [0, 1], non-whole or negative counts, counts above 2**53
        (``MAX_COUNT``, beyond which ``m0 + m1 == m`` could not be guaranteed in float64),
        ``2 * m_pilot > m`` (``m0_pilot + m1_pilot > m``) or an unknown ``method``.

    Warns
    -----
    LowJudgeQualityWarning
        Where the smoothed pilot gives ``q̃0 + q̃1 - 1 <= 0``.

    Notes
    -----
    Both methods first smooth the pilot, q̃ = (m_pilot·q_pilot + 1)/(m_pilot + 2), and clamp
    the result to ``m_pilot <= m1 <= m - m_pilot`` (the pilot items are part of the budget).
    With per-type pilot sizes, q̃0 = (m0_pilot·q0_pilot + 1)/(m0_pilot + 2), q̃1 likewise with
    ``m1_pilot``, and the clamp is ``m1_pilot <= m1 <= m - m0_pilot``; everything else is
    unchanged (Algorithm 1 is stated for a symmetric pilot; its κ̂ and rule carry over as they
    are). This is the planning question "how many more of each type, given the labels so
    far": the answer never asks for fewer labels of a type than exist.

    *Algorithm 1* sets κ̂ = (1 − q̃0)/(1 − q̃1) and m1* = round(m / (1 + (1/p̂ − 1)·√κ̂)) with
    round-half-to-even (as Python's ``round``). It is computed as m p̂/(p̂ + (1 − p̂)√κ̂) with κ̂
    a ratio of pilot counts, so that exact halves are exact (``q0_pilot == q1_pilot`` and
    ``p_hat = 0.5`` give m1* = m/2, which rounds to even for odd ``m``). At p̂ = 0 the formula
    gives m1* = 0, hence ``m1 = m_pilot``; at p̂ = 1 it gives ``m1 = m - m_pilot``. This follows
    the paper; the authors' reference code instead sets ``m1 = m - m_pilot`` when p̂ < 1e-6,
    which contradicts the formula's limit.

    *Exact* minimises the length of interval (6), 2 z √{[p̃(1−p̃)/ñ + A/(m0+2) + B/(m1+2)]/J̃²}
    with A = (1−θ̃)² q̃0(1−q̃0), B = θ̃² q̃1(1−q̃1), at the plug-in values: q̃ from the pilot,
    p̃ from the test set and θ̃ = (p̃ + q̃0 − 1)/J̃. The objective is convex in ``m1``; its
    continuous minimiser is (m0 + 2) : (m1 + 2) = √A : √B, and the better of the two
    neighbouring integers (after clamping) is returned, ties going to the smaller ``m1``.
    Only the calibration term depends on the split, so ``n`` and ``alpha`` matter only
    through p̃ and hence θ̃. Edge cases:

    * θ̃ outside [0, 1] (p̃ below the false-positive rate 1 − q̃0, or above q̃1) is clipped
      to [0, 1] because the true θ lies there; θ̃ = 0 puts every non-pilot item in ``m0``,
      θ̃ = 1 in ``m1``, matching Algorithm 1's p̂ = 0 and p̂ = 1 limits.
    * J̃ <= 0 (judge no better than chance on the pilot): the interval length is unbounded
      or undefined whatever the split, so ``"exact"`` returns the Algorithm 1 allocation
      there, and a ``LowJudgeQualityWarning`` is emitted (by both methods).

    As q̃0, q̃1 → 1, √A/√B → (1/p̃ − 1)√κ, which is Prop. 5.2 and Algorithm 1's rule; away
    from that limit the exact split can differ by many items (see :func:`allocation_report`).

    "Exact" means exact for the plug-in values, which are only as good as the pilot. In
    simulation on Lee et al.'s Fig. 5 setting (q0 = 0.7, q1 = 0.9, n = 1000, m = 200) with a
    10-item pilot, the exact split gave longer realised intervals than Algorithm 1 for θ in
    0.1–0.9 (the 10-item pilot makes A and B noisy, and Algorithm 1's √κ̂ is more robust);
    with a 50-item pilot (m = 400) it gave shorter intervals than both. Prefer Algorithm 1
    for small pilots and ``"exact"`` when q0 and q1 are known well (large pilot or earlier
    calibration data).

    References
    ----------
    Lee et al., "How to Correctly Report LLM-as-a-Judge Evaluations", Algorithm 1
    (Appendix A), Prop. 5.2, eqs. (6)-(7).

    Examples
    --------
    The published example (Lee et al.'s README): κ̂ = (4/12)/(2/12) = 2 and
    m1* = round(200 / (1 + 1.5·√2)) = round(64.07) = 64.

    >>> allocate_calibration(200, 0.4, q0_pilot=0.7, q1_pilot=0.9, m_pilot=10)
    Allocation(m0=136, m1=64)

    The exact split differs because q̃0 = 8/12 and q̃1 = 10/12 are far from 1, where the
    approximation behind Algorithm 1 is crude (θ̃ = 0.133 while p̂ = 0.4):

    >>> allocate_calibration(200, 0.4, 0.7, 0.9, method="exact")
    Allocation(m0=180, m1=20)

    Arrays broadcast:

    >>> allocate_calibration(200, [0.0, 0.5, 1.0], 0.8, 0.8).m1
    array([ 10, 100, 190])

    Labels already collected in unequal numbers — 300 truly incorrect (210 judged right)
    and 20 truly correct (18) — are a pilot with per-type sizes. A budget of 700 keeps the
    300 and adds 380 truly-correct labels; a 20 + 20 pilot would ask for only 24 truly
    incorrect ones, fewer than exist:

    >>> allocate_calibration(700, 0.85, 0.7, 0.9, method="exact", n=1000,
    ...                      m0_pilot=300, m1_pilot=20)
    Allocation(m0=300, m1=400)
    >>> allocate_calibration(700, 0.85, 0.7, 0.9, m_pilot=20, method="exact", n=1000)
    Allocation(m0=24, m1=676)
    """
    method = _check_method(method)
    n = _check_n(n)
    alpha = check_alpha(alpha)
    m, p_hat, lo0, lo1, q0t, q1t, kappa = _prepare(
        m, p_hat, q0_pilot, q1_pilot, m_pilot, m0_pilot, m1_pilot
    )
    j_t = q0t + q1t - 1
    _warn_low_j(j_t, q0_pilot, q1_pilot, fallback=method == "exact")
    m1 = _algorithm1_m1(m, p_hat, lo0, lo1, kappa)
    if method == "exact":
        _, _, _, theta = _plugin(p_hat, q0t, q1t, n, _z(alpha))
        a, b = _calib_weights(theta, q0t, q1t)
        m1 = np.where(j_t > 0, _exact_m1(m, lo1, m - lo0, a, b), m1)
    return Allocation(_as_int(m - m1), _as_int(m1))


def allocation_report(
    m,
    p_hat,
    q0_pilot,
    q1_pilot,
    m_pilot=10,
    n=None,
    alpha: float = 0.05,
    *,
    m0_pilot=None,
    m1_pilot=None,
    design: str = "stratified",
) -> AllocationReport:
    """Compare the symmetric, Algorithm 1 and exact calibration splits (and random labelling).

    Parameters
    ----------
    m, p_hat, q0_pilot, q1_pilot, m_pilot
        As in :func:`allocate_calibration`.
    n : int or array_like, optional
        Test-set size; None means ``n → ∞`` (no test-set term in the predicted length).
    alpha : float, default 0.05
        Interval level ``1 - alpha`` of the predicted Lang–Reiczigel interval.
    m0_pilot, m1_pilot : int or array_like, optional
        Pilot sizes per label type, as in :func:`allocate_calibration`: they set the
        smoothing of q̃0, q̃1 and every split keeps ``m0 >= m0_pilot``, ``m1 >= m1_pilot``.
    design : {"stratified", "random", "both"}, default "stratified"
        Which labelling design's options to give: the three splits of a truth-stratified
        calibration sample (Lee et al.'s design), the random design's single option
        (label ``m`` of the ``n`` judged items drawn at random; ``m <= n`` then), or both
        side by side.

    Returns
    -------
    AllocationReport
        Fields ``symmetric``, ``algorithm1`` and ``exact``, each an ``AllocationOption``
        ``(m0, m1, length)`` (None for ``design="random"``), ``random`` (an
        ``AllocationOption`` for ``design="random"`` or ``"both"``, else None), and the
        plug-in values ``p_tilde``, ``q0_tilde``, ``q1_tilde``, ``theta_tilde`` at which the
        lengths are predicted.

    Notes
    -----
    ``length`` is the full width 2·z·SE of interval (6) before truncation to [0, 1], with
    m̃0 = m0 + 2 and m̃1 = m1 + 2 and the adjusted proportions fixed at their plug-in
    values (pilot-smoothed q̃, p̃ from the test set, θ̃ clipped to [0, 1]); it is what the
    interval would measure if the final calibration estimates equalled the pilot ones. It is
    infinite where J̃ <= 0. The symmetric split is ``m1 = m // 2``, ``m0 = m - m1`` (with
    per-type pilot sizes, ``m // 2`` clamped to ``m1_pilot <= m1 <= m - m0_pilot``: as even
    as the labels already collected allow).
    ``exact`` never predicts a longer interval than the other two (it minimises this
    length); the gain over Algorithm 1 is largest when q̃0, q̃1 are far from 1.

    The random design's ``length`` is ``2 z sqrt(V)`` with V the asymptotic variance of its
    maximum-likelihood estimate (:func:`random_design_variance`) at θ̃, q̃0, q̃1, with
    ``m`` labelled items among ``n`` judged (``n → ∞`` when None); its ``m0``, ``m1`` are the
    expected split ``m (1 − θ̃)``, ``m θ̃`` (rounded): under random labelling the split is not
    chosen. Under that design the labelled items' truth counts are evidence about θ too, so
    it is not the stratified design with a split that happens to equal θ̃.

    The random option never plans at θ = 0 or 1, where its variance θ(1−θ)[…] is 0 and one
    label would be promised a zero-width interval. Where the pilot puts θ̃ on the boundary
    (p̃ at or below the false-positive rate 1 − q̃0, or at or above q̃1) it plans at
    1/(m + 2) (or (m + 1)/(m + 2)), the smoothed share of m labels none (all) of which are
    truly correct, the smoothing the pilot's q̃ get, and a ``SmallSampleWarning`` says so;
    the predicted width there, about 2z/m, is that of the Wilson interval of 0 of m
    (z²/(m + z²)), a little wider than the profile likelihood's. Where J̃ <= 0 the verdicts
    say nothing about θ: the random option assumes the worst case θ = 1/2 (the
    ``LowJudgeQualityWarning`` says so). ``random_theta`` holds its planning θ before the
    smoothing (θ̃, or 1/2), the value to pass to :func:`labels_for_width`, which smooths
    at the number of labels it plans.

    References
    ----------
    Lee et al., Algorithm 1 (Appendix A), Prop. 5.2, eqs. (6)-(7); Fig. 3.

    Examples
    --------
    >>> r = allocation_report(200, 0.4, 0.7, 0.9)
    >>> for name in ("symmetric", "algorithm1", "exact"):
    ...     o = getattr(r, name)
    ...     print(f"{name:<10} m0={o.m0} m1={o.m1} length={o.length:.4f}")
    symmetric  m0=100 m1=100 length=0.3195
    algorithm1 m0=136 m1=64 length=0.2768
    exact      m0=180 m1=20 length=0.2515

    The random design with the same 200 labels drawn from 1000 judged items:

    >>> r = allocation_report(200, 0.4, 0.7, 0.9, n=1000, design="both")
    >>> print(f"random m0={r.random.m0} m1={r.random.m1} length={r.random.length:.4f}")
    random m0=173 m1=27 length=0.0898
    """
    n = _check_n(n)
    alpha = check_alpha(alpha)
    design = _check_report_design(design)
    z = _z(alpha)
    m, p_hat, lo0, lo1, q0t, q1t, kappa = _prepare(
        m, p_hat, q0_pilot, q1_pilot, m_pilot, m0_pilot, m1_pilot
    )
    p_t, test_var, j_t, theta = _plugin(p_hat, q0t, q1t, n, z)
    _warn_low_j(j_t, q0_pilot, q1_pilot, fallback=design != "random", random=design != "stratified")
    a, b = _calib_weights(theta, q0t, q1t)
    random = random_theta = None
    if design != "stratified":
        random_theta, boundary = _random_theta(p_t, q0t, q1t, j_t)
        _warn_theta_boundary(boundary, p_hat, q0t, q1t, m)
        random = _random_option(m, n, random_theta, q0t, q1t, z)
        random_theta = scalar_or_array(random_theta)
    if design == "random":
        return AllocationReport(
            None, None, None, *(scalar_or_array(x) for x in (p_t, q0t, q1t, theta)), random,
            random_theta,
        )  # fmt: skip

    alg1 = _algorithm1_m1(m, p_hat, lo0, lo1, kappa)
    exact = np.where(j_t > 0, _exact_m1(m, lo1, m - lo0, a, b), alg1)
    sym = np.clip(np.floor(m / 2), lo1, m - lo0)

    def option(m1):
        length = _predicted_length(z, test_var, j_t, a, b, m - m1, m1)
        return AllocationOption(_as_int(m - m1), _as_int(m1), scalar_or_array(length))

    return AllocationReport(
        symmetric=option(sym),
        algorithm1=option(alg1),
        exact=option(exact),
        p_tilde=scalar_or_array(p_t),
        q0_tilde=scalar_or_array(q0t),
        q1_tilde=scalar_or_array(q1t),
        theta_tilde=scalar_or_array(theta),
        random=random,
        random_theta=random_theta,
    )


def _check_report_design(design: str) -> str:
    if design not in REPORT_DESIGNS:
        raise ValueError(
            f"design must be one of {REPORT_DESIGNS}; got {design!r}. 'stratified': a "
            f"calibration sample drawn per human label; 'random': humans label a random subset "
            f"of the judged items; 'both': the two side by side."
        )
    return design


def _random_option(m, n, theta, q0t, q1t, z) -> AllocationOption:
    """Return the random design's option of :func:`allocation_report` (``m`` labelled)."""
    if n is not None and (m > n).any():
        mm, nn = np.broadcast_arrays(m, n)
        bad = mm > nn
        raise ValueError(
            f"m must not exceed n under the random labelling design (the m labelled items "
            f"are drawn from the n judged ones); got m={format_values(mm[bad])} with "
            f"n={format_values(nn[bad])}. Raise n or lower m."
        )
    theta = _planning_theta(theta, m)
    var = _random_variance(theta, q0t, q1t, m, np.inf if n is None else n)
    m1 = np.round(theta * m)
    length = 2 * z * np.sqrt(var)
    return AllocationOption(_as_int(m - m1), _as_int(m1), scalar_or_array(length))


def _random_variance(theta, q0, q1, labelled, judged):
    """Return θ(1−θ)[(1 − ρ²)/L + ρ²/N], ρ² = θ(1−θ)J²/(φ(1−φ)), unvalidated."""
    phi = theta * q1 + (1 - theta) * (1 - q0)
    pv = phi * (1 - phi)
    tv = theta * (1 - theta)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho2 = np.where(pv > 0, tv * (q0 + q1 - 1) ** 2 / np.where(pv > 0, pv, 1.0), 0.0)
    rho2 = np.clip(rho2, 0.0, 1.0)  # rounding only: ρ² is a squared correlation
    return tv * ((1 - rho2) / labelled + rho2 / judged)


def random_design_variance(theta, q0, q1, labelled, judged=None):
    """Asymptotic variance of θ̂ when humans label a random subset of the judged items.

    Parameters
    ----------
    theta : float or array_like
        True accuracy θ (share of items truly correct).
    q0, q1 : float or array_like
        The judge's specificity and sensitivity.
    labelled : int or array_like
        Items labelled by humans, drawn at random among the judged ones (L >= 1).
    judged : int or array_like, optional
        All items the judge graded, labelled ones included (N >= L); None means N → ∞.

    Returns
    -------
    numpy.ndarray or numpy.float64
        ``θ(1−θ) [(1 − ρ²)/L + ρ²/N]`` with ``ρ² = θ(1−θ) J² / (φ(1−φ))``, J = q0 + q1 − 1,
        φ = θ q1 + (1 − θ)(1 − q0) (the share judged correct). ρ is the correlation between
        the judge's verdict and the truth; ρ² = 0 where φ is 0 or 1.

    Notes
    -----
    Derivation. With ``a = P(true | judged correct) = θ q1/φ`` and ``b = P(true | judged
    incorrect) = θ (1 − q1)/(1 − φ)``, the random design's likelihood factorises
    into Bin(N, φ) over all verdicts × Bin(tp + fp, a) × Bin(fn + tn, b) over the labelled
    items, so the MLE is θ̂ = φ̂ â + (1 − φ̂) b̂ (Tenenbein's double-sampling estimator) with
    asymptotically independent φ̂, â, b̂ of variances φ(1−φ)/N, a(1−a)/(Lφ),
    b(1−b)/(L(1−φ)). The delta method gives
    ``Var θ̂ = (a − b)² φ(1−φ)/N + [φ a(1−a) + (1−φ) b(1−b)]/L``. Since
    ``a − b = θ(1−θ)J/(φ(1−φ))``, the first numerator is ``(a − b)² φ(1−φ) = ρ² θ(1−θ)``
    (the variance of E[truth | verdict]) and the second is the rest of θ(1−θ), hence the
    formula. It is also the (θ, θ) element of the inverse Fisher information of the full
    likelihood k ~ Bin(n, p) × tn ~ Bin(m0, q0) × tp ~ Bin(m1, q1) × m1 ~ Bin(L, θ) in
    (θ, q0, q1) with n = N − L (checked numerically in the tests).

    It does not need J > 0: the labelled items estimate a and b whatever the judge's
    sign, and a judge no better than chance (ρ = 0) gives the human-only variance
    θ(1−θ)/L. A perfect judge (ρ = 1) gives θ(1−θ)/N, the variance of labelling every item.
    It is first order: accurate when the labelled items judged correct and judged incorrect
    (L φ and L (1 − φ)) each number a few dozen or more.

    References
    ----------
    Tenenbein, "A double sampling scheme for estimating from binomial data with
    misclassifications", JASA 65 (1970), 1350–1361; Cochran, *Sampling Techniques*, 3rd ed.,
    Sec. 12.2 (double sampling for stratification).

    Examples
    --------
    θ = 0.3, q0 = 0.8, q1 = 0.9, 200 of 2000 items labelled: φ = 0.41,
    ρ² = 0.21 · 0.49 / 0.2419 = 0.4254, V = 0.21 (0.5746/200 + 0.4254/2000); the 95 %
    width 2 · 1.96 · 0.0255 = 0.0998 is the issue's measured mean width of the full
    likelihood's posterior interval (0.100) on these settings:

    >>> from bayesjudge.core.allocation import random_design_variance
    >>> v = random_design_variance(0.3, 0.8, 0.9, 200, 2000)
    >>> print(f"{v:.6f} sd={v**0.5:.4f}")
    0.000648 sd=0.0255
    """
    theta = as_probability("theta", theta)
    q0 = as_probability("q0", q0)
    q1 = as_probability("q1", q1)
    labelled = as_count("labelled", labelled, positive=True)
    judged = np.inf if judged is None else as_count("judged", judged, positive=True)
    if judged is not np.inf:
        check_not_greater("labelled", labelled, "judged", judged)
    theta, q0, q1, labelled, judged = broadcast(
        ("theta", "q0", "q1", "labelled", "judged"), theta, q0, q1, labelled, judged
    )
    return scalar_or_array(_random_variance(theta, q0, q1, labelled, judged.astype(float)))


def _plan_random(v_star, theta, q0, q1, judged):
    """Smallest L with V(L) <= v_star; (L, reachable), L = N where not reachable.

    V is taken at the planning θ of L labels (:func:`_planning_theta`). Where θ itself is
    inside the smoothing's range at the closed form's L, that L is the answer: fewer labels
    plan at the same θ or one nearer 1/2, with a larger variance. Elsewhere (θ at or near 0
    or 1) a bisection over L finds it, V being decreasing in L there too.
    """
    tv = theta * (1 - theta)
    base = _random_variance(theta, q0, q1, 1.0, np.inf)  # (1 − ρ²) θ(1−θ)
    floor = tv - base  # ρ² θ(1−θ)
    room = v_star - floor / judged
    with np.errstate(divide="ignore", invalid="ignore"):
        need = np.where(room > 0, np.ceil(base / np.where(room > 0, room, 1.0) - 1e-9), np.inf)
    need = np.maximum(need, 1.0)
    smoothed = _planning_theta(theta, np.where(np.isfinite(need), need, judged)) != theta
    if smoothed.any():
        need = np.where(smoothed, _bisect_labels(v_star, theta, q0, q1, judged), need)
    reachable = need <= judged
    return np.where(reachable, need, judged), reachable


def _bisect_labels(v_star, theta, q0, q1, judged):
    """Smallest L in [1, N] with V(L) <= v_star at the planning θ of L; inf where none."""

    def variance(labels):
        return _random_variance(_planning_theta(theta, labels), q0, q1, labels, judged)

    # θ(1 − θ) <= 1/4 and N >= L give V(L) <= 1/(4L): hi meets the target unless N caps it.
    hi = np.minimum(judged, np.ceil(0.25 / v_star))
    lo = np.ones_like(hi)
    while (lo < hi).any():
        mid = np.floor((lo + hi) / 2)
        ok = variance(mid) <= v_star
        hi, lo = np.where(ok, mid, hi), np.where(ok, lo, mid + 1)
    return np.where(variance(hi) <= v_star, hi, np.inf)


def _plan_stratified(v_star, theta, q0, q1, judged):
    """Smallest m0 + m1 (optimal split) with eq. (10) <= v_star; -1 where not reachable."""
    j = q0 + q1 - 1
    p = theta * q1 + (1 - theta) * (1 - q0)
    room = v_star * j**2 - p * (1 - p) / judged
    sa = (1 - theta) * np.sqrt(q0 * (1 - q0))
    sb = theta * np.sqrt(q1 * (1 - q1))
    reachable = room > 0
    safe = np.where(reachable, room, 1.0)
    # min m0 + m1 s.t. A/m0 + B/m1 <= room: m0 = √A(√A + √B)/room, m1 likewise (Lagrange).
    m0 = np.maximum(np.ceil(sa * (sa + sb) / safe - 1e-9), 1.0)
    m1 = np.maximum(np.ceil(sb * (sa + sb) / safe - 1e-9), 1.0)
    return np.where(reachable, m0, -1.0), np.where(reachable, m1, -1.0), reachable


def labels_for_width(
    target_width, theta, q0, q1, judged=None, alpha: float = 0.05, *, design: str = "random"
) -> LabelPlan:
    """How many items humans must label for a 1 − alpha interval of θ of a target width.

    Parameters
    ----------
    target_width : float or array_like
        Wanted full width of the interval of θ, in (0, 1].
    theta, q0, q1 : float or array_like
        Planning values of θ and of the judge's specificity and sensitivity (a pilot's
        estimates, or earlier data).
    judged : int or array_like, optional
        Items the judge grades: under ``design="random"`` the labelled items are drawn from
        them; under ``"stratified"`` it is the test set, and the calibration items come on
        top. None means unlimited.
    alpha : float, default 0.05
        Interval level ``1 - alpha``.
    design : {"random", "stratified"}, default "random"
        ``"random"``: label a random subset of the judged items; the width is that of the
        maximum-likelihood interval, ``2 z sqrt(random_design_variance)``. ``"stratified"``:
        a calibration sample of m0 truly-incorrect and m1 truly-correct items with the split
        that minimises m0 + m1 (``m0 : m1 = (1 − θ)√(q0(1−q0)) : θ√(q1(1−q1))``); the width
        is that of the delta-method interval (Lee et al., eq. 10). ``q0 + q1`` must exceed 1
        there.

    Returns
    -------
    LabelPlan
        ``(labels, m0, m1, width, reachable)``: the smallest number of labels whose predicted
        width is at most the target, its split, that width, and where the target can be met
        at all (see :class:`LabelPlan`).

    Notes
    -----
    Random design: V(L) = θ(1−θ)[(1 − ρ²)/L + ρ²/N] ≤ (w/2z)² solves to
    ``L = ceil(θ(1−θ)(1 − ρ²) / ((w/2z)² − ρ²θ(1−θ)/N))``; the target is out of reach where
    that exceeds N (labelling everything gives width 2z sqrt(θ(1−θ)/N)). Stratified design:
    ``[p(1−p)/n + A/m0 + B/m1]/J² ≤ (w/2z)²`` with A = (1−θ)² q0(1−q0), B = θ² q1(1−q1),
    minimised over the split by m_i ∝ √A, √B (each at least 1); out of reach where the test
    set alone is too wide. Both are large-sample widths at the planning values: with a noisy
    pilot, plan for a margin. At θ = 0 or 1 the random design's variance is 0, which would
    promise a zero-width interval from one label; so the random plan for L labels takes θ
    inside [1/(L + 2), (L + 1)/(L + 2)] (the smoothed share of L labels none or all of which
    are truly correct; a width of about 2z/L, that of the Wilson interval of 0 of L) and finds
    the smallest such L by bisection. Away from the boundary this changes nothing. The
    stratified numbers here use the planning values as they are (no pilot smoothing), unlike
    :func:`allocation_report`.

    Examples
    --------
    A 0.10-wide 95 % interval at θ = 0.3, q0 = 0.8, q1 = 0.9, with 2000 judged items:

    >>> from bayesjudge.core.allocation import labels_for_width
    >>> plan = labels_for_width(0.10, 0.3, 0.8, 0.9, judged=2000)
    >>> int(plan.labels), int(plan.m0), int(plan.m1), round(float(plan.width), 4)
    (200, 140, 60, 0.0998)
    >>> labels_for_width(0.10, 0.3, 0.8, 0.9, judged=2000, design="stratified").labels
    693

    A planning θ of 0 does not promise a zero width from one label:

    >>> plan = labels_for_width(0.10, 0.0, 0.8, 0.9, judged=2000)
    >>> int(plan.labels), round(float(plan.width), 4)
    (37, 0.0982)
    """
    if design not in PLANNING_DESIGNS:
        raise ValueError(
            f"design must be one of {PLANNING_DESIGNS}; got {design!r}. 'random': humans "
            f"label a random subset of the judged items; 'stratified': a calibration sample "
            f"drawn per human label."
        )
    width = as_probability("target_width", target_width)
    if (width <= 0).any():
        raise ValueError(
            f"target_width must be in (0, 1]; got {format_values(width[width <= 0])}. Give the "
            f"full width of the interval wanted, e.g. 0.1."
        )
    theta = as_probability("theta", theta)
    q0 = as_probability("q0", q0)
    q1 = as_probability("q1", q1)
    judged = np.inf if judged is None else as_count("judged", judged, positive=True)
    alpha = check_alpha(alpha)
    width, theta, q0, q1, judged = broadcast(
        ("target_width", "theta", "q0", "q1", "judged"), width, theta, q0, q1, judged
    )
    judged = judged.astype(float)
    z = _z(alpha)
    v_star = (width / (2 * z)) ** 2
    if design == "random":
        labels, reachable = _plan_random(v_star, theta, q0, q1, judged)
        theta = _planning_theta(theta, labels)
        var = _random_variance(theta, q0, q1, labels, judged)
        m1 = np.round(theta * labels)
        m0 = labels - m1
        labels = np.where(np.isfinite(labels), labels, -1.0)  # N = ∞ and out of reach
        m0, m1 = np.where(labels >= 0, m0, -1.0), np.where(labels >= 0, m1, -1.0)
    else:
        j = q0 + q1 - 1
        if (j <= 0).any():
            raise ValueError(
                f"design='stratified' needs q0 + q1 > 1 (a judge better than chance); got "
                f"q0 + q1 - 1 = {format_values(j[j <= 0])}. The corrected estimator divides "
                f"by it; use design='random', which does not."
            )
        m0, m1, reachable = _plan_stratified(v_star, theta, q0, q1, judged)
        labels = np.where(reachable, m0 + m1, -1.0)
        p = theta * q1 + (1 - theta) * (1 - q0)
        with np.errstate(divide="ignore", invalid="ignore"):
            var = (p * (1 - p) / judged + (1 - theta) ** 2 * q0 * (1 - q0) / m0
                   + theta**2 * q1 * (1 - q1) / m1) / j**2  # fmt: skip
        var = np.where(reachable, var, np.inf)
    out = 2 * z * np.sqrt(var)
    return LabelPlan(
        _as_int(labels), _as_int(m0), _as_int(m1), scalar_or_array(out), scalar_or_array(reachable)
    )


def variance_vs_human_only(theta, q0, q1, m, n=None, m1=None) -> HumanOnlyComparison:
    """Variance of the corrected judge estimate versus spending the labels on test items.

    Parameters
    ----------
    theta : float or array_like
        True accuracy θ in [0, 1].
    q0, q1 : float or array_like
        True specificity and sensitivity of the judge; ``q0 + q1`` must exceed 1.
    m : int or array_like
        Human-label budget: calibration items for the judge, or test items for the
        human-only estimate φ̂ = M1/m.
    n : int or array_like, optional
        Judge-scored test items; None means ``n → ∞``.
    m1 : float or array_like, optional
        Truly-correct calibration items (``m0 = m - m1``), with ``1 <= m1 <= m - 1``. The
        default ``m1 = θ·m`` is the expected split of a calibration set drawn at random
        from the test distribution, as in Sec. 6 (M1 ~ Binomial(m, θ), replaced by its mean);
        pass the output of :func:`allocate_calibration` to assess a designed split.

    Returns
    -------
    HumanOnlyComparison
        ``judge``: eq. (10) at the true parameters, [p(1−p)/n + (1−θ)² q0(1−q0)/m0 +
        θ² q1(1−q1)/m1] / J² with p = θ q1 + (1−θ)(1−q0); ``human``: θ(1−θ)/m; ``ratio``:
        judge / human (below 1 means the judge wins).

    Raises
    ------
    ValueError
        For ``q0 + q1 <= 1``, invalid probabilities or counts, or ``m1`` outside [1, m−1].

    Notes
    -----
    Both are large-sample (delta-method) variances; the judge's is accurate when ``m0`` and
    ``m1`` are large enough that q̂0 + q̂1 − 1 stays well away from 0. With the default split
    the calibration term simplifies to [(1−θ) q0(1−q0) + θ q1(1−q1)]/(m J²), which is
    finite at θ = 0 or 1. At θ ∈ {0, 1} the human-only variance is 0: ``ratio`` is then
    ``inf`` where the judge variance is positive and 1 where both are 0 (both exact).
    With ``q0 = q1 = q`` and ``n → ∞`` the default comparison reduces to Prop. 6.1:
    ratio <= 1 exactly when θ(1−θ) >= q(1−q)/(2q−1)², see :func:`human_only_regime`.
    A judge with q0 + q1 <= 1 is rejected: the correction divides by J (if the judge is
    systematically inverted, flip its verdicts first).

    References
    ----------
    Lee et al., eq. (10), Sec. 6, Prop. 6.1 and eq. (14) of Prop. B.2.

    Examples
    --------
    >>> c = variance_vs_human_only(0.5, 0.9, 0.9, m=200)
    >>> print(f"{c.judge:.6f} {c.human:.6f} {c.ratio:.4f}")
    0.000703 0.001250 0.5625
    """
    theta = as_probability("theta", theta)
    q0 = as_probability("q0", q0)
    q1 = as_probability("q1", q1)
    m = as_count("m", m, positive=True)
    n = _check_n(n)
    theta, q0, q1, m = broadcast(("theta", "q0", "q1", "m"), theta, q0, q1, m)
    j = q0 + q1 - 1
    if (j <= 0).any():
        raise ValueError(
            f"q0 + q1 must exceed 1 (a judge better than chance); got q0 + q1 - 1 = "
            f"{format_values(j[j <= 0])}. The corrected estimator divides by q0 + q1 - 1; if "
            f"the judge is systematically inverted, flip its verdicts first."
        )
    p = theta * q1 + (1 - theta) * (1 - q0)
    test_var = 0.0 if n is None else p * (1 - p) / n
    v0, v1 = q0 * (1 - q0), q1 * (1 - q1)
    if m1 is None:
        calib = ((1 - theta) * v0 + theta * v1) / m
    else:
        m1 = as_count("m1", m1)
        m1, m = np.broadcast_arrays(m1, m)
        bad = (m1 < 1) | (m1 > m - 1)
        if bad.any():
            raise ValueError(
                f"m1 must be between 1 and m - 1 so that both q0 and q1 are estimated; got "
                f"m1={format_values(m1[bad])} with m={format_values(m[bad])}."
            )
        calib = (1 - theta) ** 2 * v0 / (m - m1) + theta**2 * v1 / m1
    judge = (test_var + calib) / j**2
    human = np.broadcast_to(theta * (1 - theta) / m, np.shape(judge))
    safe = human > 0
    ratio = np.divide(judge, human, out=np.where(judge > 0, np.inf, 1.0), where=safe)
    return HumanOnlyComparison(
        scalar_or_array(judge), scalar_or_array(human), scalar_or_array(ratio)
    )


def human_only_regime(q) -> HumanOnlyRegime:
    """Accuracies θ at which a corrected judge beats human-only labelling (Prop. 6.1).

    Parameters
    ----------
    q : float or array_like
        Common specificity and sensitivity ``q = q0 = q1`` of the judge.

    Returns
    -------
    HumanOnlyRegime
        ``(lower, upper, exists)``: the closed interval
        [1/2 − √(1/2 − 1/(4(2q−1)²)), 1/2 + √(1/2 − 1/(4(2q−1)²))] where ``exists``; where
        the regime is empty, ``exists`` is False and ``lower = upper = 0.5``.

    Notes
    -----
    This is the ``n → ∞``, ``m → ∞`` limit with the calibration split ``m1 = θ m`` (random
    calibration sample): there the corrected estimate has variance q(1−q)/(m(2q−1)²) and
    the human-only estimate θ(1−θ)/m, so the judge wins (or ties, on the boundary) iff
    θ(1−θ) >= q(1−q)/(2q−1)². The regime is non-empty iff q >= ``HUMAN_ONLY_Q_THRESHOLD``
    = 1/2 + 1/(2√2) ≈ 0.8536 (at equality it is the single point θ = 1/2) and is empty for
    every q below, including q <= 1/2 where the correction is not defined. The empty case
    is encoded by the ``exists`` flag rather than NaN; ``lower = upper = 0.5`` there is a
    placeholder, so test membership with ``regime.contains(theta)``. For finite ``m`` see
    :func:`judge_beats_human_only`.

    References
    ----------
    Lee et al., Prop. 6.1 and Prop. B.2 (last display), Fig. 4.

    Examples
    --------
    >>> r = human_only_regime(0.9)
    >>> print(f"[{r.lower:.4f}, {r.upper:.4f}] {bool(r.exists)}")
    [0.1693, 0.8307] True
    >>> bool(human_only_regime(0.85).exists)
    False
    >>> human_only_regime([0.8, 0.95]).contains(0.5)
    array([False,  True])
    """
    q = as_probability("q", q)
    u2 = (2 * q - 1) ** 2
    # q < 1/2: the corrected estimator assumes J = 2q - 1 > 0, so no regime.
    with np.errstate(divide="ignore"):
        disc = np.where(q > 0.5, 0.5 - 0.25 / u2, -1.0)
    exists = disc >= 0
    half = np.sqrt(np.where(exists, disc, 0.0))
    return HumanOnlyRegime(
        scalar_or_array(0.5 - half), scalar_or_array(0.5 + half), scalar_or_array(exists)
    )


def judge_beats_human_only(theta, q, m, delta: float = 0.05):
    """Finite-``m`` sufficient condition (13) for the judge to have the smaller variance.

    Parameters
    ----------
    theta : float or array_like
        True accuracy θ.
    q : float or array_like
        Common specificity and sensitivity ``q = q0 = q1``.
    m : int or array_like
        Human-label budget (a random calibration sample of size ``m``).
    delta : float, default 0.05
        Failure probability of the Hoeffding bound, in (0, 1).

    Returns
    -------
    bool or ndarray of bool
        True where condition (13) holds: then, with probability at least ``1 - delta`` over
        the calibration split M1 ~ Binomial(m, θ), the corrected estimate (``n → ∞``) has
        variance at most that of the human-only estimate M1/m.

    Notes
    -----
    With ε = √(log(2/δ)/(2m)), condition (13) is θ(1−θ) >= q(1−q)/(2q−1)² ·
    (1 + (1−θ)ε/(1−θ−ε) + θε/(θ−ε)), valid when ε < min(θ, 1−θ); where that fails the
    function returns False (the bound says nothing). It is sufficient, not necessary, and
    shrinks to :func:`human_only_regime` as ``m → ∞``. It is False for q <= 1/2.

    References
    ----------
    Lee et al., Prop. 6.1, eq. (11) = Prop. B.2, eq. (13).

    Examples
    --------
    At θ = 0.25 and q = 0.9 (inside the m → ∞ regime [0.169, 0.831]) the bound needs m of a
    few hundred to certify the judge's advantage:

    >>> judge_beats_human_only(0.25, 0.9, m=[50, 200, 1000])
    array([False,  True,  True])
    """
    theta = as_probability("theta", theta)
    q = as_probability("q", q)
    m = as_count("m", m, positive=True)
    delta = check_open_unit("delta", delta, "e.g. 0.05")
    theta, q, m = broadcast(("theta", "q", "m"), theta, q, m)
    eps = np.sqrt(np.log(2 / delta) / (2 * m))
    applies = (q > 0.5) & (eps < np.minimum(theta, 1 - theta))
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = 1 + (1 - theta) * eps / (1 - theta - eps) + theta * eps / (theta - eps)
        bound = q * (1 - q) / (2 * q - 1) ** 2 * factor
        holds = theta * (1 - theta) >= bound
    return scalar_or_array(applies & holds)
