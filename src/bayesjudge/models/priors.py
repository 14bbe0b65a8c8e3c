"""Priors of the Bayesian misclassification models (plain Python; importing it needs no PyMC)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from numbers import Real

__all__ = ["Priors"]

_BETA_FIELDS = ("theta", "q0", "q1")
_LOGIT_MEAN_FIELDS = ("q0_logit_mean", "q1_logit_mean")
_LOGIT_SCALE_FIELDS = ("q0_logit_scale", "q1_logit_scale")


def _beta_pair(name: str, value, *, allow_known: bool) -> tuple[float, float] | float:
    if isinstance(value, Real) and not isinstance(value, bool):
        if not allow_known:
            raise ValueError(
                f"Priors.{name} must be a Beta prior (a, b); got the number {value!r}. Only q0 "
                f"and q1 may be fixed to a known value."
            )
        v = float(value)
        if not 0.0 <= v <= 1.0:
            raise ValueError(
                f"Priors.{name} = {value!r} fixes a known judge quality, so it must lie in "
                f"[0, 1]; pass a probability such as 0.9, or a Beta prior (a, b)."
            )
        return v
    try:
        a, b = (float(x) for x in value)
    except (TypeError, ValueError):
        raise ValueError(
            f"Priors.{name} must be a pair (a, b) of Beta parameters"
            f"{' or a known value in [0, 1]' if allow_known else ''}; got {value!r}."
        ) from None
    if not (a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b)):
        raise ValueError(
            f"Priors.{name} = ({a!r}, {b!r}): Beta parameters must be finite and > 0; "
            f"(1, 1) is the flat prior."
        )
    return (a, b)


@dataclass(frozen=True)
class Priors:
    """Prior distributions of θ, q0 and q1 for :func:`bayesjudge.build_model`.

    Parameters
    ----------
    theta : (float, float), default (1, 1)
        Beta(a, b) prior on the true accuracy θ of every group.
    q0, q1 : (float, float) or float, default (1, 1)
        Beta(a, b) priors on specificity and sensitivity (``calibration="separate"`` or
        ``"shared"``); a number in [0, 1] fixes a judge quality known exactly (Lee et al.
        eq. 4). Not used by ``calibration="hierarchical"``.
    q0_logit_mean, q1_logit_mean : (float, float), default (1.5, 1.5)
        Normal(mu, sd) prior on the population mean of logit q0 / logit q1
        (``calibration="hierarchical"``).
    q0_logit_scale, q1_logit_scale : float, default 1.0
        HalfNormal(tau) prior on the population standard deviation of logit q0 / logit q1
        (``calibration="hierarchical"``).

    Notes
    -----
    The hierarchical defaults are weakly informative. Normal(1.5, 1.5) on the logit mean puts
    95 % prior mass on a typical judge quality between 0.19 and 0.99 (median 0.82,
    ``expit(1.5 ± 1.96 · 1.5)``), so judges worse than chance stay possible. HalfNormal(1) on
    the logit scale allows anything from identical behaviour across groups (σ ≈ 0) to large
    differences (with σ = 2, 95 % of groups around a typical quality of 0.82 lie between 0.08
    and 0.996).

    Examples
    --------
    >>> from bayesjudge import Priors
    >>> Priors()
    Priors(theta=(1.0, 1.0), q0=(1.0, 1.0), q1=(1.0, 1.0), ...)
    >>> Priors(q1=0.9).known("q1")
    True
    """

    theta: tuple[float, float] = (1.0, 1.0)
    q0: tuple[float, float] | float = (1.0, 1.0)
    q1: tuple[float, float] | float = (1.0, 1.0)
    q0_logit_mean: tuple[float, float] = (1.5, 1.5)
    q1_logit_mean: tuple[float, float] = (1.5, 1.5)
    q0_logit_scale: float = 1.0
    q1_logit_scale: float = 1.0

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # frozen dataclass: normalise the values once
        for name in _BETA_FIELDS:
            set_(self, name, _beta_pair(name, getattr(self, name), allow_known=name != "theta"))
        for name in _LOGIT_MEAN_FIELDS:
            value = getattr(self, name)
            try:
                mu, sd = (float(x) for x in value)
            except (TypeError, ValueError):
                raise ValueError(
                    f"Priors.{name} must be a pair (mu, sd) of a Normal prior on the logit "
                    f"scale; got {value!r}."
                ) from None
            if not (math.isfinite(mu) and math.isfinite(sd) and sd > 0):
                raise ValueError(f"Priors.{name} = ({mu!r}, {sd!r}) needs finite mu and sd > 0.")
            set_(self, name, (mu, sd))
        for name in _LOGIT_SCALE_FIELDS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, Real):
                raise ValueError(f"Priors.{name} must be a positive number; got {value!r}.")
            if not (math.isfinite(value) and value > 0):
                raise ValueError(
                    f"Priors.{name} = {value!r} is the HalfNormal scale of the spread of the "
                    f"judge's logit quality across groups; it must be finite and > 0."
                )
            set_(self, name, float(value))

    def __repr__(self) -> str:
        parts = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)[:3])
        return f"Priors({parts}, ...)"

    def known(self, name: str) -> bool:
        """Return True if ``q0`` or ``q1`` is fixed to a known value.

        Examples
        --------
        >>> Priors(q0=0.95).known("q0"), Priors().known("q0")
        (True, False)
        """
        if name not in ("q0", "q1"):
            raise ValueError(f"name must be 'q0' or 'q1'; got {name!r}.")
        return isinstance(getattr(self, name), float)

    def to_dict(self) -> dict:
        """Return the priors as a JSON-friendly dict (tuples become lists).

        Examples
        --------
        >>> Priors(q1=0.9).to_dict()["q1"]
        0.9
        """
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, values: dict) -> Priors:
        """Rebuild priors from :meth:`to_dict` output.

        Examples
        --------
        >>> p = Priors(theta=(2, 2))
        >>> Priors.from_dict(p.to_dict()) == p
        True
        """
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - names)
        if unknown:
            raise ValueError(f"Unknown prior names {unknown}; the names are {sorted(names)}.")
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})
