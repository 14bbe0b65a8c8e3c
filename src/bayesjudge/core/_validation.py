"""Argument checks shared by the numpy/scipy core.

Every check raises ``ValueError`` naming the argument, showing (a few of) the offending
values and saying how to fix them, so that users never meet a silent NaN.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "as_count",
    "as_probability",
    "as_subcount",
    "check_alpha",
    "check_not_greater",
    "check_open_unit",
    "format_values",
    "is_seed",
]

_MAX_SHOWN = 5


def format_values(values: np.ndarray) -> str:
    """Return up to five distinct offending values as a short string (whole floats as ints)."""
    flat = np.unique(np.asarray(values).ravel())

    def show(v) -> str:
        v = v.item() if hasattr(v, "item") else v
        if isinstance(v, float) and v.is_integer():
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


def as_count(name: str, value, *, positive: bool = False) -> np.ndarray:
    """Return ``value`` as a float array of non-negative (or positive) whole numbers.

    Counts are returned as float so that they broadcast with proportions without casts;
    they are checked to be finite, whole and non-negative.
    """
    arr = np.asarray(value)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"{name} must be a whole-number count; got values of type {arr.dtype}.")
    arr = arr.astype(float)
    bad = ~np.isfinite(arr) | (arr < 0) | (arr != np.round(arr))
    if bad.any():
        raise ValueError(
            f"{name} must be a non-negative whole-number count; got {format_values(arr[bad])}."
        )
    if positive and (arr <= 0).any():
        raise ValueError(
            f"{name} must be at least 1; got {format_values(arr[arr <= 0])}. "
            f"A group with no items carries no information about this quantity."
        )
    return arr


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
    small_arr, big_arr = np.broadcast_arrays(np.asarray(small), np.asarray(big))
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


def check_open_unit(name: str, value, hint: str) -> float:
    """Return scalar ``value`` as a float after checking ``0 < value < 1``."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in (0, 1); got {value!r}.") from None
    if not 0 < number < 1:
        raise ValueError(f"{name} must be in (0, 1) ({hint}); got {value!r}.")
    return number


def check_alpha(alpha) -> float:
    """Return ``alpha`` as a float after checking ``0 < alpha < 1``."""
    return check_open_unit("alpha", alpha, "e.g. 0.05 for a 95% interval")


def is_seed(value) -> bool:
    """Return True for a non-negative integer (not a bool): what ``SeedSequence`` accepts."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool) and value >= 0
