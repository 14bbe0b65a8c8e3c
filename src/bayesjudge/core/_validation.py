"""Argument checks shared by the numpy/scipy core.

Every check raises ``ValueError`` naming the argument, showing (a few of) the offending
values and saying how to fix them, so that users never meet a silent NaN.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
from scipy.stats import norm

from bayesjudge.warnings import SmallSampleWarning

__all__ = [
    "CALIBRATION_DESIGNS",
    "LR_MIN_ALPHA",
    "MAX_COUNT",
    "MIN_ALPHA",
    "MIN_RESAMPLES",
    "RELIABLE_RESAMPLES",
    "as_calibration_counts",
    "as_count",
    "as_probability",
    "as_subcount",
    "broadcast",
    "check_alpha",
    "check_categorical_counts",
    "check_design",
    "check_em_options",
    "check_lr_alpha",
    "check_not_greater",
    "check_open_unit",
    "check_resample_count",
    "check_resamples",
    "check_seed",
    "format_values",
    "is_real_number",
    "is_seed",
    "raise_if_not_identified",
    "two_sided_z",
]

_MAX_SHOWN = 5

#: Largest count the closed forms accept: 2**53, the last integer up to which every whole
#: number is exactly representable as a float64. The closed forms compute with counts as
#: floats, so a larger count would be rounded silently (and one of 2**63 or more, stored as
#: int64, wraps to a negative number). Shared with ``JudgeCounts``.
MAX_COUNT = 2**53

#: Smallest ``alpha`` accepted: the normal quantile z = Φ⁻¹(1 - alpha/2) (:func:`two_sided_z`)
#: is accurate while alpha/2 is a normal float64 (above 2.2e-308); 1e-300 (z ≈ 37.1) leaves a
#: margin and is far below any level of practical use. Some methods need a larger alpha (the
#: Lang-Reiczigel interval: 1e-6; a bootstrap: at least 2 / n_resamples).
MIN_ALPHA = 1e-300

#: Fewest bootstrap resamples accepted: with fewer, the percentile interval is decided by a
#: handful of replicates and need not even contain the point estimate.
MIN_RESAMPLES = 100

#: Below this many resamples a bootstrap warns that its interval ends carry Monte Carlo error.
RELIABLE_RESAMPLES = 1000


def format_values(values: np.ndarray) -> str:
    """Return up to five distinct offending values as a short string (whole floats as ints)."""
    flat = np.unique(np.asarray(values).ravel())

    def show(v) -> str:
        v = v.item() if hasattr(v, "item") else v
        if isinstance(v, float) and v.is_integer() and abs(v) <= MAX_COUNT:
            v = int(v)
        return repr(v)

    shown = ", ".join(show(v) for v in flat[:_MAX_SHOWN])
    more = f", … ({flat.size - _MAX_SHOWN} more)" if flat.size > _MAX_SHOWN else ""
    return f"[{shown}{more}]"


def as_probability(name: str, value) -> np.ndarray:
    """Return ``value`` as a float array after checking it lies in [0, 1]."""
    arr = np.asarray(value, dtype=float)
    bad = ~((arr >= 0) & (arr <= 1))  # NaN fails both comparisons
    if bad.any():
        raise ValueError(
            f"{name} must be a proportion in [0, 1]; got {format_values(arr[bad])}. "
            f"Pass the share of items (e.g. k / n), not a count or a percentage."
        )
    return arr


def _python_ints(arr: np.ndarray) -> np.ndarray | None:
    """Return an object array of Python ints (no bools) as is, anything else as None."""
    if arr.dtype != object or arr.size == 0:
        return None
    flat = arr.ravel()
    if all(isinstance(v, numbers.Integral) and not isinstance(v, bool | np.bool_) for v in flat):
        return arr
    return None


def _too_large(name: str, shown: str) -> ValueError:
    return ValueError(
        f"{name} must be at most 2**53 = {MAX_COUNT:,} (MAX_COUNT), the largest count that "
        f"float64 arithmetic represents exactly; got {shown}. Larger counts would be rounded "
        f"silently. Split the data into groups of at most 2**53 items or rescale the counts."
    )


def as_count(name: str, value, *, positive: bool = False) -> np.ndarray:
    """Return ``value`` as a float array of non-negative (or positive) whole numbers.

    Counts are returned as float so that they broadcast with proportions without casts;
    they are checked to be finite, whole, non-negative and at most :data:`MAX_COUNT`
    (2**53), the largest count that float64 represents exactly. Python integers too large
    for int64 and unsigned 64-bit integers are checked before any conversion, so that they
    are refused rather than rounded or wrapped.
    """
    arr = np.asarray(value)
    ints = _python_ints(arr)
    if ints is not None:
        flat = [int(v) for v in ints.ravel()]
        if any(v < 0 for v in flat):
            shown = ", ".join(str(v) for v in flat if v < 0)
            raise ValueError(f"{name} must be a non-negative whole-number count; got [{shown}].")
        big = [v for v in flat if v > MAX_COUNT]
        if big:
            raise _too_large(name, "[" + ", ".join(str(v) for v in big[:5]) + "]")
        arr = ints.astype(np.int64)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(
            f"{name} must be a whole-number count; got values of type {arr.dtype}. Pass "
            f"integers (or whole floats such as 3.0), not booleans, strings or objects."
        )
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{name} must be a real whole-number count; got complex values.")
    if np.issubdtype(arr.dtype, np.integer) and (arr > MAX_COUNT).any():
        raise _too_large(name, format_values(arr[arr > MAX_COUNT]))
    arr = arr.astype(float)
    bad = ~np.isfinite(arr) | (arr < 0) | (arr != np.round(arr))
    if bad.any():
        raise ValueError(
            f"{name} must be a non-negative whole-number count; got {format_values(arr[bad])}."
        )
    if (arr > MAX_COUNT).any():
        raise _too_large(name, format_values(arr[arr > MAX_COUNT]))
    if positive and (arr <= 0).any():
        raise ValueError(
            f"{name} must be at least 1; got {format_values(arr[arr <= 0])}. "
            f"A group with no items carries no information about this quantity."
        )
    return arr


def broadcast(names, *arrays) -> list[np.ndarray]:
    """Broadcast ``arrays`` against each other; on failure name each argument's shape."""
    try:
        return np.broadcast_arrays(*arrays)
    except ValueError:
        shapes = ", ".join(f"{n} {np.shape(a)}" for n, a in zip(names, arrays, strict=True))
        raise ValueError(
            f"The arguments must broadcast to a common shape; got shapes {shapes}. Pass "
            f"scalars or arrays whose shapes match (or are 1) axis by axis."
        ) from None


def as_subcount(part_name: str, part, total_name: str, total, *, positive_total: bool = False):
    """Validate a count and the total it is part of (e.g. ``k`` of ``n``); return both.

    Both are checked with :func:`as_count` (``total`` must be at least 1 when
    ``positive_total``), then ``part <= total`` with :func:`check_not_greater`.
    """
    part = as_count(part_name, part)
    total = as_count(total_name, total, positive=positive_total)
    check_not_greater(part_name, part, total_name, total)
    return part, total


def check_not_greater(small_name: str, small, big_name: str, big) -> None:
    """Raise when a sub-count exceeds its total (e.g. ``k > n`` or ``tn > m0``)."""
    small_arr, big_arr = broadcast((small_name, big_name), np.asarray(small), np.asarray(big))
    bad = small_arr > big_arr
    if bad.any():
        pairs = ", ".join(
            f"{small_name}={s:g} > {big_name}={b:g}"
            for s, b in list(zip(small_arr[bad].ravel(), big_arr[bad].ravel(), strict=True))[:5]
        )
        raise ValueError(
            f"{small_name} counts items among the {big_name} items, so it cannot exceed "
            f"{big_name}; got {pairs}."
        )


def _real_scalar(name: str, value, expected: str) -> float:
    """Return ``value`` as a float if it is one real number (not a bool, string or array)."""
    arr = np.asarray(value) if not isinstance(value, str | bytes) else None
    if (
        arr is None
        or arr.ndim != 0
        or arr.dtype == bool
        or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating))
    ):
        raise ValueError(
            f"{name} must be a number {expected}, given as one int or float (not a bool, "
            f"string or array); got {value!r}."
        )
    return float(arr)


def check_open_unit(name: str, value, hint: str) -> float:
    """Return scalar ``value`` as a float after checking ``0 < value < 1``."""
    number = _real_scalar(name, value, "in (0, 1)")
    if not 0 < number < 1:
        raise ValueError(f"{name} must be in (0, 1) ({hint}); got {value!r}.")
    return number


def check_alpha(alpha) -> float:
    """Return ``alpha`` as a float after checking ``MIN_ALPHA <= alpha < 1``.

    Below :data:`MIN_ALPHA` (1e-300) the normal quantile Φ⁻¹(1 - alpha/2) can no longer be
    computed accurately (alpha/2 leaves the normal float64 range), so such levels are
    refused rather than answered with an infinite or NaN bound.
    """
    number = check_open_unit("alpha", alpha, "e.g. 0.05 for a 95% interval")
    if number < MIN_ALPHA:
        raise ValueError(
            f"alpha must be at least {MIN_ALPHA:g} (MIN_ALPHA); got {alpha!r}. Below it the "
            f"normal quantile z = Φ⁻¹(1 - alpha/2) cannot be computed accurately in float64. "
            f"Pass alpha >= {MIN_ALPHA:g} (alpha = {MIN_ALPHA:g} already gives z ≈ 37)."
        )
    return number


def two_sided_z(alpha: float) -> float:
    """Return the normal quantile z = Φ⁻¹(1 - alpha/2) of a two-sided interval, finite.

    For ``alpha >= 1e-3`` this is ``norm.ppf(1 - alpha / 2)``, the call of Lee et al.'s
    reference code, so that z matches it to the last bit. For smaller alpha, ``1 - alpha/2``
    loses digits (it rounds to 1, and z to infinity, below alpha ≈ 1e-16), so
    ``norm.isf(alpha / 2)`` is used: accurate down to :data:`MIN_ALPHA`.
    """
    if alpha >= 1e-3:
        return float(norm.ppf(1 - alpha / 2))
    return float(norm.isf(alpha / 2))


def check_resamples(n_resamples, method: str, alpha: float) -> int:
    """Return ``n_resamples`` as an int: refuse fewer than 100, warn below 1000.

    Parameters
    ----------
    n_resamples : int
        Number of bootstrap resamples requested.
    method : str
        The calling function, named in the messages (e.g. ``"bootstrap_rogan_gladen"``).
    alpha : float
        The (validated) level of the percentile interval.

    Raises
    ------
    ValueError
        Unless ``n_resamples`` is a whole number of at least :data:`MIN_RESAMPLES` (100),
        and where ``n_resamples * alpha / 2 < 1``: the ``alpha/2`` quantile then lies beyond
        the most extreme replicate, so the percentile interval cannot be computed.

    Warns
    -----
    SmallSampleWarning
        When ``n_resamples`` is below :data:`RELIABLE_RESAMPLES` (1000), or fewer than 5
        replicates lie beyond each end (``n_resamples * alpha / 2 < 5``).
    """
    arr = np.asarray(n_resamples) if not isinstance(n_resamples, str | bytes) else None
    if (
        arr is None
        or arr.ndim != 0
        or arr.dtype == bool
        or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating))
        or not np.isfinite(arr)
        or arr != np.round(arr)
        or arr < MIN_RESAMPLES
        or arr > MAX_COUNT
    ):
        raise ValueError(
            f"{method}: n_resamples must be a whole number of at least {MIN_RESAMPLES} "
            f"(MIN_RESAMPLES); got {n_resamples!r}. With fewer "
            f"resamples the percentile interval rests on a handful of replicates and need not "
            f"even contain the estimate."
        )
    n = int(arr)
    tail = n * alpha / 2
    if tail < 1:
        raise ValueError(
            f"{method}: n_resamples={n} is too few for alpha={alpha:g}: the percentile interval "
            f"needs the alpha/2 quantile of the replicates, and {n} replicates hold only "
            f"{tail:.3g} beyond each end, so the interval would be the extreme replicates, not a "
            f"{1 - alpha:.6g} interval. Use n_resamples >= {math.ceil(20 / alpha):,} "
            f"(10 replicates beyond each end) or a larger alpha."
        )
    if n < RELIABLE_RESAMPLES or tail < 5:
        why = (
            f"n_resamples={n} is below {RELIABLE_RESAMPLES}"
            if n < RELIABLE_RESAMPLES
            else f"with alpha={alpha:g} only {tail:.3g} of the {n} replicates lie beyond each end"
        )
        warnings.warn(
            f"{method}: {why}, so the ends of the bootstrap interval carry Monte Carlo error "
            f"(they move with the seed). Use n_resamples >= "
            f"{max(RELIABLE_RESAMPLES, math.ceil(20 / alpha)):,} for an interval you report.",
            SmallSampleWarning,
            stacklevel=3,
        )
    return n


def check_seed(random_seed, name: str = "random_seed"):
    """Return ``random_seed`` if :func:`numpy.random.default_rng` accepts it; else raise.

    Accepted: None, a non-negative integer of any size (not a bool), a non-empty sequence of
    them, a :class:`numpy.random.Generator`, :class:`numpy.random.BitGenerator` or
    :class:`numpy.random.SeedSequence`.
    """
    if random_seed is None or is_seed(random_seed):
        return random_seed
    if isinstance(
        random_seed, np.random.Generator | np.random.BitGenerator | np.random.SeedSequence
    ):
        return random_seed
    if isinstance(random_seed, list | tuple | np.ndarray):  # entropy for SeedSequence
        flat = np.asarray(random_seed, dtype=object).ravel()
        if flat.size and all(is_seed(v) for v in flat):
            return random_seed
    raise ValueError(
        f"{name} must be None, a non-negative integer (e.g. 0 or 2**70) or a "
        f"numpy.random.Generator; got {random_seed!r}. Pass an integer to get reproducible "
        f"results, or a Generator to continue its stream."
    )


def is_seed(value) -> bool:
    """Return True for a non-negative integer (not a bool): what ``SeedSequence`` accepts."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool) and value >= 0


#: How a calibration set was collected, for the bootstraps: ``"stratified"`` (m0 and m1 fixed
#: by design) or ``"random"`` (calibration items drawn at random, so m0 and m1 vary).
CALIBRATION_DESIGNS = ("stratified", "random")


def check_design(calibration_design, name: str = "calibration_design") -> str:
    """Return ``calibration_design`` after checking it is one of :data:`CALIBRATION_DESIGNS`."""
    if not isinstance(calibration_design, str) or calibration_design not in CALIBRATION_DESIGNS:
        raise ValueError(
            f"{name} must be one of {CALIBRATION_DESIGNS}; got "
            f"{calibration_design!r}. Use 'stratified' when m0 and m1 were fixed by design "
            f"(items sampled per human label) and 'random' when calibration items were drawn "
            f"at random, so m0 and m1 vary."
        )
    return calibration_design


def check_resample_count(n_resamples) -> int:
    """Return ``n_resamples`` as an int of at least 1 (the Youden bootstrap).

    The bootstraps of θ use the stricter :func:`check_resamples`.
    """
    arr = np.asarray(n_resamples)
    if (
        arr.ndim != 0
        or arr.dtype == bool
        or not np.issubdtype(arr.dtype, np.number)
        or not np.isfinite(arr)
        or arr != np.round(arr)
        or arr < 1
    ):
        raise ValueError(
            f"n_resamples must be a whole number of at least 1 (e.g. 10_000); got {n_resamples!r}."
        )
    return int(arr)


def as_calibration_counts(suffix: str, tn, m0, tp, m1):
    """Validate one calibration table ``tn, m0, tp, m1``; both strata must be non-empty.

    ``suffix`` is appended to the argument names in messages (e.g. ``"_a"``).
    """
    tn, m0 = as_subcount(f"tn{suffix}", tn, f"m0{suffix}", m0, positive_total=True)
    tp, m1 = as_subcount(f"tp{suffix}", tp, f"m1{suffix}", m1, positive_total=True)
    return tn, m0, tp, m1


def raise_if_not_identified(undefined, q0, q1, system: str = "") -> None:
    """Raise where ``undefined`` (a plug-in q0 + q1 == 1): the J = 0 policy "raise".

    ``q0``, ``q1`` (arrays of the shape of ``undefined``) are shown for up to five positions;
    ``system`` (e.g. ``" for A"``) is added after "estimate" in the message.
    """
    if not undefined.any():
        return
    where = np.argwhere(undefined)
    shown = ", ".join(
        f"{tuple(int(i) for i in pos) if pos.size else '()'}: q0={q0[tuple(pos)]:.6g}, "
        f"q1={q1[tuple(pos)]:.6g}"
        for pos in where[:5]
    )
    raise ValueError(
        f"The Rogan-Gladen estimate{system} is not identified where q0 + q1 == 1 (the judge "
        f"is no better than chance on the calibration set): at position(s) {shown}. Use "
        f"bayesjudge.core.correction.lang_reiczigel_interval (its smoothed J gives an honest "
        f"wide interval), label more calibration items, or use a better judge."
    )


#: Smallest alpha of the Lang-Reiczigel interval (z ≈ 4.89, z² ≈ 23.9). The adjustment adds
#: z²/2 pseudo-items to the test set and shifts the centre by O(z²/m); below this level those
#: terms swamp calibration groups of tens of items, and the interval stops widening as alpha
#: falls (with n = 1000, m0 = m1 = 100 and alpha = 1e-300 it is [0, 0] around θ̂ = 0.17).
LR_MIN_ALPHA = 1e-6


def check_lr_alpha(alpha) -> float:
    """Validate alpha for the Lang-Reiczigel family: as check_alpha, and at least 1e-6."""
    alpha = check_alpha(alpha)
    if alpha < LR_MIN_ALPHA:
        raise ValueError(
            f"alpha must be at least {LR_MIN_ALPHA:g} for the Lang-Reiczigel interval "
            f"(lang_reiczigel_interval, estimate(method='lang-reiczigel')); got {alpha:g}. Its "
            f"adjustment adds z²/2 pseudo-items and shifts the centre by O(z²/m), which for "
            f"z² = {two_sided_z(alpha) ** 2:.3g} swamps calibration sets of usual size: the "
            f"interval no longer widens as alpha falls (it can collapse to [0, 0]). Use alpha "
            f">= {LR_MIN_ALPHA:g}, or method='bootstrap' with n_resamples >= 20 / alpha."
        )
    return alpha


def check_categorical_counts(test, calibration):
    """Validate test (…, K) and calibration (…, K, K) counts; return float arrays, broadcast."""
    x = as_count("test", test)
    c = as_count("calibration", calibration)
    if x.ndim < 1 or x.shape[-1] < 2:
        raise ValueError(
            f"test must hold the verdict counts over K >= 2 categories on its last axis; got "
            f"shape {x.shape}."
        )
    k = x.shape[-1]
    if c.ndim < 2 or c.shape[-2:] != (k, k):
        raise ValueError(
            f"calibration must hold (..., K, K) counts, rows = truth and columns = verdict, with "
            f"the K = {k} categories of test; got shape {c.shape}."
        )
    lead = np.broadcast_shapes(x.shape[:-1], c.shape[:-2])
    x = np.broadcast_to(x, (*lead, k))
    c = np.broadcast_to(c, (*lead, k, k))
    return x, c


def is_real_number(value) -> bool:
    """Whether ``value`` is a real Python or numpy number (not a bool).

    Examples
    --------
    >>> is_real_number(1e-10), is_real_number(True), is_real_number("1")
    (True, False, False)
    """
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)


def check_em_options(v, lab, smoothing, max_iter, tol) -> None:
    """Refuse an unidentified jury and bad options of a Dawid–Skene EM (binary or K classes).

    ``v`` is the (P, J) verdict matrix and ``lab`` the labelled counts: without labelled items
    fewer than three judges do not identify the model.

    Examples
    --------
    >>> check_em_options(np.zeros((2, 3)), np.zeros((2, 2)), 0.0, 100, 1e-10)
    """
    if lab.sum() == 0 and v.shape[1] < 3:
        raise ValueError(
            f"With {v.shape[1]} judge(s) and no labelled items the model is not identified "
            f"(more parameters than free pattern probabilities). Pass labelled counts, or at "
            f"least 3 judges."
        )
    ok = isinstance(max_iter, int | np.integer) and not isinstance(max_iter, bool)
    if not ok or max_iter < 1:
        raise ValueError(f"max_iter must be a whole number >= 1; got {max_iter!r}.")
    if not (is_real_number(tol) and np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive number, e.g. 1e-10; got {tol!r}.")
    if not (is_real_number(smoothing) and np.isfinite(smoothing) and smoothing >= 0):
        raise ValueError(
            f"smoothing must be a number >= 0 (pseudo-items per verdict and class); got "
            f"{smoothing!r}. Use 0 for the maximum-likelihood estimate."
        )
