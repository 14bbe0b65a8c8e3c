"""Small result tuples returned by the closed-form functions.

They are ``NamedTuple`` s so that ``lower, upper = f(...)`` unpacks, while the fields keep
their names in notebooks. Each field is a numpy array (a numpy scalar for scalar input).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["EstimateInterval", "Interval", "scalar_or_array"]


class Interval(NamedTuple):
    """A two-sided interval ``(lower, upper)``."""

    lower: np.ndarray
    upper: np.ndarray


class EstimateInterval(NamedTuple):
    """A point estimate with a two-sided interval ``(estimate, lower, upper)``."""

    estimate: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


def scalar_or_array(arr: np.ndarray):
    """Return a numpy scalar for 0-d input and the array otherwise."""
    arr = np.asarray(arr)
    return arr[()] if arr.ndim == 0 else arr
