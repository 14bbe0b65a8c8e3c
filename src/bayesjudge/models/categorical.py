"""PyMC models of K-category verdicts: θ over categories and the judge's confusion matrix.

Every group g = (system, stratum) has a true category distribution θ_g on the simplex and a
judge confusion matrix C_g (rows = truth t, columns = verdict v, each row on the simplex:
C_g[t, v] = P(judge says v | truth t)). The likelihood is::

    θ_g          ~ Dirichlet(α_θ)
    C_g[t, :]    ~ Dirichlet(α_C[t, :])                (or a pooled / structured form)
    p_g          = C_gᵀ θ_g                             verdict shares on test items
    test_g       ~ Multinomial(n_g, p_g)                test verdict counts over categories
    cal_g[t, :]  ~ Multinomial(m_g[t], C_g[t, :])       calibration: verdicts of the items
                                                        humans labelled t
    m_g          ~ Multinomial(Σ_t m_g[t], θ_g)         random labelling design only

and differs in how C is shared between groups (``calibration=``): ``"separate"`` (every
group its own C), ``"shared"`` (one C across the ``pool_over`` dims) and ``"hierarchical"``
(the off-diagonal log-ratios log C[t, v] − log C[t, t] ~ Normal(μ[t, v], σ[t]) across the
pooled groups, non-centred). ``confusion="symmetric"`` or ``"ordinal"`` replace the free rows
by the structured confusions of :mod:`bayesjudge.models.confusion_structures`. At K = 2 the
model is the binary one of :mod:`bayesjudge.models.build` with q0 = C[0, 0], q1 = C[1, 1]
and θ = θ[1] (the second category is "correct"). The model card is ``models/categorical.md``.

The PyMC model is the definition. nutpie samples ``confusion="free"`` (every calibration
model, both designs) through hand-written numba kernels of the same log density and gradient
(:mod:`bayesjudge.models.categorical_numba`, tested equal to this model's compiled ones),
which compile in seconds where numba needs minutes for PyTensor's graph; the structured
confusions through nutpie's compile of the model's graph.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from itertools import combinations
from numbers import Real
from pathlib import Path

import arviz as az
import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr

from bayesjudge._io import atomic_path, check_output_file
from bayesjudge._progress import show_progress
from bayesjudge._text import pair_label
from bayesjudge._version import __version__
from bayesjudge.categorical_estimate import score_vector
from bayesjudge.core._validation import check_open_unit
from bayesjudge.core.categorical_posterior import THETA_PRIOR, default_confusion_prior
from bayesjudge.data import DIMS, CategoricalCounts, JudgeCounts
from bayesjudge.models import categorical_numba
from bayesjudge.models.confusion_structures import ordinal_confusion, symmetric_preference_confusion
from bayesjudge.models.sampling import (
    ESS_MIN,
    RHAT_MAX,
    check_int,
    check_seed,
    config_hash,
    eti,
    quiet_pymc,
    read_fit_tree,
    sampler_seed,
    varies,
)
from bayesjudge.models.storage import DIGEST_ATTR, content_digest
from bayesjudge.report.categorical import build_categorical_report
from bayesjudge.warnings import BayesJudgeWarning, ConvergenceWarning, SmallSampleWarning

__all__ = [
    "CATEGORICAL_CALIBRATIONS",
    "CONFUSIONS",
    "CategoricalFit",
    "CategoricalPosteriorPredictiveCheck",
    "CategoricalPriors",
    "build_categorical_model",
    "categorical_model_config",
    "fit_categorical",
    "load_categorical",
    "multinomial_logp",
    "posterior_intervals",
    "prior_predictive_categorical",
]

CATEGORICAL_CALIBRATIONS = ("separate", "shared", "hierarchical")
CONFUSIONS = ("free", "symmetric", "ordinal")
DESIGNS = ("stratified", "random")
# Dims of the count arrays (the CategoricalCounts container's).
TEST_DIMS = (*DIMS, "category")
CAL_DIMS = (*DIMS, "truth", "verdict")
TRUTH_DIMS = (*DIMS, "truth")
# Observed variables the posterior predictive check replicates; "truth_counts" only under the
# random labelling design.
OBSERVED = ("test", "calibration", "truth_counts")
REPORTED = (
    "theta",
    "score",
    "confusion",
    "error_logit_mean",
    "error_logit_scale",
)
#: The ``format`` attr of a saved K-category fit (:func:`bayesjudge.load` dispatches on it).
CATEGORICAL_FORMAT = "bayesjudge-categorical-fit-1"
# Compiled nutpie models keyed by model structure (see models/fit.py: the same idea).
_COMPILED: OrderedDict[str, object] = OrderedDict()
_COMPILED_MAX = 8


# ----------------------------------------------------------------------------- priors


def _concentration(name: str, value, shape: tuple[int, ...]) -> np.ndarray:
    """Broadcast a Dirichlet concentration to ``shape``; refuse non-positive values."""
    try:
        alpha = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"CategoricalPriors.{name} must be a positive number or an array of them; got "
            f"{value!r}."
        ) from None
    if alpha.ndim and alpha.shape != shape:
        raise ValueError(
            f"CategoricalPriors.{name} has shape {alpha.shape}, but these counts need a number "
            f"or shape {shape} (categories in the counts' order)."
        )
    if not (np.isfinite(alpha).all() and (alpha > 0).all()):
        raise ValueError(
            f"CategoricalPriors.{name} = {value!r}: Dirichlet concentrations must be finite and "
            f"> 0; 1 is the flat prior."
        )
    return np.broadcast_to(alpha, shape).astype(float)


@dataclass(frozen=True)
class CategoricalPriors:
    """Priors of the K-category models (:func:`build_categorical_model`).

    Parameters
    ----------
    theta : float or sequence of K floats, default 1
        Dirichlet concentration of θ (one number for every category, or one per category in
        the counts' order). 1 is the flat prior on the simplex.
    confusion : float, (diagonal, off-diagonal), K × K nested sequence or None, default None
        Dirichlet concentration of each confusion row (``"separate"``, ``"shared"``, and the
        free rows of ``confusion="symmetric"``): one number for every cell, a pair for the
        cells on and off the diagonal (``(4, 1)`` leans towards a judge that is mostly right),
        or a full matrix (rows = truth). None (the default) is Perks's Dirichlet(1/K, …, 1/K):
        one pseudo-item per row whatever K
        (:func:`bayesjudge.core.categorical_posterior.default_confusion_prior`). The flat
        Dirichlet(1) adds K pseudo-items per row, which pulls an accurate judge's diagonal
        towards 1/K (0.8 to 0.73 at K = 5, m = 40) and made the mean grade's 95 % interval
        cover 0.82 in the rubric coverage study; pass ``confusion=1`` for it (at K = 2 it is
        the binary model's Beta(1, 1) on q0 and q1).
    error_logit_mean : (float, float), default (-1.5, 1.5)
        Normal(mu, sd) prior on the population mean of every off-diagonal log-ratio
        log C[t, v] − log C[t, t] (``"hierarchical"``). At K = 2 this is the binary model's
        Normal(1.5, 1.5) on logit q0 and logit q1.
    error_logit_scale : float, default 1.0
        HalfNormal(tau) prior on the spread of the log-ratios of each truth row across the
        pooled groups (``"hierarchical"``).

    Examples
    --------
    >>> from bayesjudge.models.categorical import CategoricalPriors
    >>> CategoricalPriors().confusion_alpha(4)[0].tolist()
    [0.25, 0.25, 0.25, 0.25]
    >>> CategoricalPriors(confusion=(4, 1)).confusion_alpha(3).tolist()
    [[4.0, 1.0, 1.0], [1.0, 4.0, 1.0], [1.0, 1.0, 4.0]]
    >>> CategoricalPriors.from_dict(CategoricalPriors(theta=2).to_dict()).theta
    2.0
    """

    theta: float | tuple = THETA_PRIOR
    confusion: float | tuple | None = None
    error_logit_mean: tuple[float, float] = (-1.5, 1.5)
    error_logit_scale: float = 1.0

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # frozen: normalise once (tuples, floats) for hashing
        set_(self, "theta", _as_tuple("theta", self.theta))
        if self.confusion is not None:  # None: the default, Perks's 1/K per cell
            set_(self, "confusion", _as_tuple("confusion", self.confusion))
        try:
            mu, sd = (float(x) for x in self.error_logit_mean)
        except (TypeError, ValueError):
            raise ValueError(
                f"CategoricalPriors.error_logit_mean must be a pair (mu, sd); got "
                f"{self.error_logit_mean!r}."
            ) from None
        if not (math.isfinite(mu) and math.isfinite(sd) and sd > 0):
            raise ValueError(
                f"CategoricalPriors.error_logit_mean = ({mu!r}, {sd!r}) needs finite mu and sd > 0."
            )
        set_(self, "error_logit_mean", (mu, sd))
        tau = self.error_logit_scale
        if isinstance(tau, bool) or not isinstance(tau, Real) or not (0 < tau < math.inf):
            raise ValueError(
                f"CategoricalPriors.error_logit_scale must be a finite number > 0 (the "
                f"HalfNormal scale of the log-ratios' spread across groups); got {tau!r}."
            )
        set_(self, "error_logit_scale", float(tau))

    def theta_alpha(self, k: int) -> np.ndarray:
        """Return the Dirichlet concentration of θ for K = ``k`` categories, shape (k,)."""
        return _concentration("theta", self.theta, (k,))

    def confusion_alpha(self, k: int) -> np.ndarray:
        """Return the Dirichlet concentration of the confusion rows, shape (k, k), rows = truth."""
        value = self.confusion
        if value is None:
            return np.full((k, k), default_confusion_prior(k))
        if (
            isinstance(value, tuple)
            and len(value) == 2
            and all(isinstance(v, float) for v in value)
        ):
            diagonal, off = value
            return np.where(np.eye(k, dtype=bool), diagonal, off) * np.ones((k, k))
        return _concentration("confusion", value, (k, k))

    def to_dict(self) -> dict:
        """Return the priors as a JSON-friendly dict (tuples become lists)."""

        def plain(v):
            return [plain(x) for x in v] if isinstance(v, tuple) else v

        return {k: plain(v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, values: Mapping) -> CategoricalPriors:
        """Rebuild priors from :meth:`to_dict` output."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - names)
        if unknown:
            raise ValueError(f"Unknown prior names {unknown}; the names are {sorted(names)}.")
        return cls(**dict(values))


def _as_tuple(name: str, value):
    """Return a number as a float, a (nested) sequence as (nested) tuples of floats."""
    if isinstance(value, bool):
        raise ValueError(f"CategoricalPriors.{name} must be a number or numbers; got {value!r}.")
    if isinstance(value, Real):
        value = float(value)
        if not (math.isfinite(value) and value > 0):
            raise ValueError(
                f"CategoricalPriors.{name} = {value!r}: a Dirichlet concentration must be "
                f"finite and > 0; 1 is the flat prior."
            )
        return value
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"CategoricalPriors.{name} must be a number or a (nested) sequence of numbers; got "
            f"{value!r}."
        ) from None
    if array.ndim not in (1, 2) or not (np.isfinite(array).all() and (array > 0).all()):
        raise ValueError(
            f"CategoricalPriors.{name} = {value!r}: Dirichlet concentrations must be finite "
            f"and > 0, given as a number, a sequence or a matrix."
        )
    return tuple(tuple(row) for row in array.tolist()) if array.ndim == 2 else tuple(array.tolist())


# ----------------------------------------------------------------------------- counts


@dataclass(frozen=True)
class _Arrays:
    """The counts of a CategoricalCounts as plain arrays in the model's dim order."""

    test: np.ndarray  # (system, stratum, category)
    calibration: np.ndarray  # (system, stratum, truth, verdict)
    systems: list
    strata: list
    categories: list
    design: str
    ordered: bool

    @property
    def k(self) -> int:
        return len(self.categories)


def _container(counts) -> CategoricalCounts:
    """Return ``counts`` as a checked :class:`CategoricalCounts` (binary counts converted)."""
    if isinstance(counts, JudgeCounts):
        return CategoricalCounts.from_judge_counts(counts)
    if not isinstance(counts, CategoricalCounts | xr.Dataset):
        raise TypeError(
            f"counts must be a bayesjudge.data.CategoricalCounts (or its Dataset); got "
            f"{type(counts).__name__}. Build one with CategoricalCounts.from_counts(test, "
            f"calibration, categories=[...]) or CategoricalCounts.from_frames(...)."
        )
    return CategoricalCounts(counts)


def _arrays(counts, calibration: str | None = None, pool_over=()) -> _Arrays:
    """Read the counts into arrays; a calibration set shared over dims is taken once.

    A set attached to every group (:attr:`CategoricalCounts.calibration_shared_over`) can only
    inform one confusion shared over those dims: its copies beyond the first are zeroed, so
    the set counts once. Other models (or the random design, whose truth counts would need
    to know which groups' items were labelled) refuse it.
    """
    counts = _container(counts)
    test = counts.ds["test"].transpose(*TEST_DIMS).values.astype(np.int64)
    cal = counts.ds["calibration"].transpose(*CAL_DIMS).values.astype(np.int64)
    shared = tuple(counts.calibration_shared_over)
    if shared and calibration is not None:
        if calibration != "shared" or not set(shared) <= set(pool_over):
            raise ValueError(
                f"These counts carry one calibration set shared over {list(shared)}, but "
                f"calibration={calibration!r} with pool_over={list(pool_over)} would count it "
                f"once per group. Use calibration='shared' with pool_over={list(shared)} (or "
                f"more dims), or give each group its own calibration counts."
            )
        if counts.design == "random":
            raise ValueError(
                f"Under the random labelling design the labelled items' truth counts inform "
                f"θ of the groups they were drawn from, but this calibration set is shared "
                f"over {list(shared)}; give each group its own labelled items."
            )
        first = np.zeros(cal.shape[:2], dtype=bool)
        first[tuple(0 if d in shared else slice(None) for d in DIMS)] = True
        cal = np.where(first[..., None, None], cal, 0)
    return _Arrays(
        test=test,
        calibration=cal,
        systems=list(counts.systems),
        strata=list(counts.strata),
        categories=list(counts.categories),
        design=counts.design,
        ordered=counts.ordered,
    )


def _score_vector(scores, categories: list, *, stored: bool = False) -> np.ndarray | None:
    """Return the score of each category in the counts' order; None without scores.

    A user's ``scores`` are matched as :func:`bayesjudge.categorical_estimate.score_vector`
    matches them (keys by value and type: ``"1"`` does not name the category ``1``, two keys
    naming one category are refused); ``stored=True`` reads the fit's config, whose keys
    :func:`_scores_dict` wrote as text.
    """
    if scores is None:
        return None
    if not stored:
        return score_vector(scores, categories)
    if not isinstance(scores, Mapping):
        raise TypeError(
            f"scores must be a mapping {{category: value}}, e.g. {{'A': 1, 'tie': 0.5, "
            f"'B': 0}} for a win rate with ties counted half; got {type(scores).__name__}."
        )
    lookup = {str(k): v for k, v in scores.items()}
    names = [str(c) for c in categories]
    missing = [c for c in names if c not in lookup]
    extra = [k for k in lookup if k not in names]
    if missing or extra:
        raise ValueError(
            f"scores must give a value for every category {names}; missing {missing}, "
            f"unknown {extra}."
        )
    values = np.array([float(lookup[c]) for c in names])
    if not np.isfinite(values).all():
        raise ValueError(
            f"scores must be finite numbers; got {dict(zip(names, values, strict=True))}."
        )
    return values


def _scores_dict(values: np.ndarray | None, categories: list) -> dict | None:
    if values is None:
        return None
    return {str(c): float(v) for c, v in zip(categories, values, strict=True)}


# ----------------------------------------------------------------------------- model


def _pool_dims(calibration: str, pool_over) -> tuple[str, ...]:
    if calibration == "separate":
        if pool_over is not None:
            raise ValueError(
                f"pool_over={pool_over!r} applies to calibration='shared' or 'hierarchical'; "
                f"calibration='separate' gives every group its own confusion matrix. Drop "
                f"pool_over or choose another calibration model."
            )
        return ()
    if pool_over is None:
        return DIMS
    items = [pool_over] if isinstance(pool_over, str) else list(pool_over)
    bad = [d for d in items if d not in DIMS]
    if bad or not items:
        raise ValueError(
            f"pool_over must name one or both of {list(DIMS)}; got {pool_over!r}. For example "
            f"pool_over='system' shares the judge's confusion across systems within each stratum."
        )
    return tuple(d for d in DIMS if d in items)


def categorical_model_config(
    counts,
    calibration: str = "separate",
    pool_over=None,
    confusion: str = "free",
    priors: CategoricalPriors | Mapping | None = None,
    scores=None,
) -> dict:
    """Check the options of a K-category model and return them as a JSON-friendly dict.

    The dict (``kind``, ``calibration``, ``pool_over``, ``confusion``, ``priors``,
    ``scores``, ``design``, ``categories``) is what a :class:`CategoricalFit` stores and
    hashes (``bayesjudge_config_hash``).

    Examples
    --------
    >>> from bayesjudge.data import CategoricalCounts
    >>> counts = CategoricalCounts.from_counts([5, 3, 2], [[4, 0, 0], [0, 4, 0], [0, 0, 4]],
    ...                                        categories=["A", "tie", "B"])
    >>> categorical_model_config(counts, "shared", pool_over="system")["pool_over"]
    ['system']
    """
    if calibration not in CATEGORICAL_CALIBRATIONS:
        raise ValueError(
            f"calibration must be one of {list(CATEGORICAL_CALIBRATIONS)}; got {calibration!r}."
        )
    pooled = _pool_dims(calibration, pool_over)
    arrays = _arrays(counts, calibration, pooled)
    if confusion not in CONFUSIONS:
        raise ValueError(
            f"confusion must be one of {list(CONFUSIONS)}; got {confusion!r}. 'symmetric' "
            f"(preference verdicts: A↔B mistakes equally likely) and 'ordinal' (errors only "
            f"to neighbouring grades) need fewer calibration items than 'free'."
        )
    if confusion == "ordinal" and not arrays.ordered:
        raise ValueError(
            "confusion='ordinal' needs ordered categories (a graded scale); these counts were "
            "built with ordered=False. Pass ordered=True to CategoricalCounts.from_counts."
        )
    if priors is None:
        priors = CategoricalPriors()
    elif isinstance(priors, Mapping):
        priors = CategoricalPriors.from_dict(priors)
    elif not isinstance(priors, CategoricalPriors):
        raise TypeError(
            f"priors must be a CategoricalPriors (or its to_dict()); got {type(priors).__name__}."
        )
    priors.theta_alpha(arrays.k)  # shape checks against K, before anything is built
    priors.confusion_alpha(arrays.k)
    return {
        "kind": "categorical",
        "calibration": calibration,
        "pool_over": list(pooled),
        "confusion": confusion,
        "priors": priors.to_dict(),
        "scores": _scores_dict(_score_vector(scores, arrays.categories), arrays.categories),
        "design": arrays.design,
        "categories": [str(c) for c in arrays.categories],
    }


def _expand(x, dims: tuple[str, ...]):
    """Broadcast a tensor with leading ``dims`` to leading (system, stratum), trailing kept."""
    for axis, dim in enumerate(DIMS):
        if dim not in dims:
            x = pt.expand_dims(x, axis)
    return x


def error_cells(categories: Sequence) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Labels and (truth, verdict) indices of the K(K − 1) off-diagonal confusion cells.

    The hierarchical model's log-ratios live on these cells (coord ``error``), row by row.

    Examples
    --------
    >>> labels, rows, cols = error_cells(["A", "tie", "B"])
    >>> labels[:2], rows.tolist(), cols.tolist()
    (['A->tie', 'A->B'], [0, 0, 1, 1, 2, 2], [1, 2, 0, 2, 0, 1])
    """
    k = len(categories)
    pairs = [(t, v) for t in range(k) for v in range(k) if t != v]
    labels = [f"{categories[t]}->{categories[v]}" for t, v in pairs]
    return labels, np.array([t for t, _ in pairs]), np.array([v for _, v in pairs])


def _hierarchical_confusion(priors: CategoricalPriors, categories: list, kept: tuple):
    """Non-centred off-diagonal log-ratios η = μ + σ z across the pooled groups; C = softmax."""
    k = len(categories)
    _, rows, cols = error_cells(categories)
    mean, sd = priors.error_logit_mean
    mu = pm.Normal("error_logit_mean", np.float64(mean), np.float64(sd), dims=(*kept, "error"))
    sigma = pm.HalfNormal(
        "error_logit_scale", np.float64(priors.error_logit_scale), dims=(*kept, "truth")
    )
    z = pm.Normal("error_z", np.float64(0.0), np.float64(1.0), dims=(*DIMS, "error"))
    eta_off = _expand(mu, kept) + _expand(sigma, kept)[..., rows] * z  # (system, stratum, error)
    # The diagonal log-ratio is 0 (the reference of each row).
    scatter = np.zeros((len(rows), k, k))
    scatter[np.arange(len(rows)), rows, cols] = 1.0
    eta = pt.tensordot(eta_off, scatter, axes=[[-1], [0]])
    return pm.Deterministic("confusion", pt.special.softmax(eta, axis=-1), dims=CAL_DIMS), DIMS


def _structured_confusion(config: dict, priors: CategoricalPriors, categories: list, group):
    """Return the structure helper's confusion, registered as ``confusion``, and its group dims.

    ``"shared"`` gives the structure the unpooled dims as its groups; ``"hierarchical"``
    gives it every group and the pooled dims as its population (``pool_over``).
    """
    hierarchical = config["calibration"] == "hierarchical"
    options = {
        "categories": list(categories),
        "group_dims": group,
        "hierarchical": hierarchical,
        "pool_over": tuple(config["pool_over"]) if hierarchical else None,
    }
    if config["confusion"] == "symmetric":
        value = symmetric_preference_confusion(
            **options,
            alpha=priors.confusion_alpha(len(categories)),
            error_logit_mean=priors.error_logit_mean,
            error_logit_scale=priors.error_logit_scale,
        )
    else:
        value = ordinal_confusion(**options, scale_prior=priors.error_logit_scale)
    return pm.Deterministic("confusion", value, dims=(*group, "truth", "verdict")), group


def _confusion(config: dict, priors: CategoricalPriors, categories: list):
    """Return the confusion tensor and its group dims (before the truth and verdict dims)."""
    calibration, pooled = config["calibration"], tuple(config["pool_over"])
    kept = tuple(d for d in DIMS if d not in pooled)
    if config["confusion"] != "free":
        group = kept if calibration == "shared" else DIMS
        return _structured_confusion(config, priors, categories, group)
    if calibration == "hierarchical":
        return _hierarchical_confusion(priors, categories, kept)
    group = DIMS if calibration == "separate" else kept
    coords = pm.modelcontext(None).coords
    shape = tuple(len(coords[d]) for d in group)
    alpha = np.broadcast_to(
        priors.confusion_alpha(len(categories)), (*shape, *([len(categories)] * 2))
    )
    return pm.Dirichlet("confusion", a=alpha.copy(), dims=(*group, "truth", "verdict")), group


def multinomial_logp(value, n, p):
    """Return log Multinomial(value | n, p) over the last axis, constant log n! − Σ log value! kept.

    The observed counts of these models are validated data whose totals are n by
    construction, so PyMC's Multinomial checks (p on the simplex, Σ value = n, value ≥ 0) and
    its ``logpow`` switch are dropped: a smaller graph for numba to compile, the same density.
    A cell with value 0 adds 0 even where p = 0.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> got = multinomial_logp(np.array([3, 0, 2]), 5, np.array([0.5, 0.2, 0.3])).eval(
    ...     mode="FAST_COMPILE")  # a tiny graph: evaluate without compiling
    >>> bool(np.isclose(got, stats.multinomial.logpmf([3, 0, 2], 5, [0.5, 0.2, 0.3])))
    True
    """
    value = pt.as_tensor_variable(value)
    cells = pt.switch(pt.gt(value, 0), value * pt.log(p), np.float64(0.0))
    return (
        pt.gammaln(pt.as_tensor_variable(n) + np.float64(1.0))
        - pt.gammaln(value + np.float64(1.0)).sum(axis=-1)
        + cells.sum(axis=-1)
    )


def _multinomial_dist(n, p, size):
    return pm.Multinomial.dist(n=n, p=p, size=size)


def _multinomial(name: str, n, p, *, observed, dims):
    """Register an observed Multinomial(n, p) whose log density is :func:`multinomial_logp`.

    Draws (prior predictive) come from PyMC's Multinomial; only the log density is replaced.
    """
    return pm.CustomDist(
        name,
        n,
        p,
        dist=_multinomial_dist,
        logp=multinomial_logp,
        signature="(),(k)->(k)",
        observed=observed,
        dims=dims,
    )


def build_categorical_model(
    counts,
    *,
    calibration: str = "separate",
    pool_over=None,
    confusion: str = "free",
    priors: CategoricalPriors | None = None,
    scores=None,
) -> pm.Model:
    """Build the PyMC model of θ (K categories) and the judge's confusion matrix.

    Parameters
    ----------
    counts : CategoricalCounts
        Test verdict counts (system, stratum, category) and calibration counts (system,
        stratum, truth, verdict); its ``design`` decides whether the labelled items' truth
        counts are data.
    calibration : {"separate", "shared", "hierarchical"}, default "separate"
        ``"separate"``: every group has its own confusion matrix from its own calibration
        counts. ``"shared"``: one confusion matrix across the ``pool_over`` dims (all the
        pooled groups' calibration counts inform it). ``"hierarchical"``: off-diagonal
        log-ratios log C[t, v] − log C[t, t] = μ[t, v] + σ[t] z_g[t, v] with z ~ Normal(0, 1)
        per group (non-centred), μ and σ shared across ``pool_over``.
    pool_over : str or sequence of {"system", "stratum"}, optional
        Dims across which ``"shared"`` and ``"hierarchical"`` pool; default both.
    confusion : {"free", "symmetric", "ordinal"}, default "free"
        ``"free"``: Dirichlet rows. ``"symmetric"`` and ``"ordinal"``: the structured
        confusions of :mod:`bayesjudge.models.confusion_structures` (called inside the model
        with the group dims of the calibration model).
    priors : CategoricalPriors, optional
        Default: θ ~ Dirichlet(1) (flat) and each confusion row ~ Dirichlet(1/K) (Perks: one
        pseudo-item per row; ``CategoricalPriors(confusion=1)`` for flat rows).
    scores : mapping, optional
        ``{category: value}``: adds the deterministic ``score`` = Σ_c θ_c · value_c per group
        (a rubric mean; a win rate with ``{"A": 1, "tie": 0.5, "B": 0}``).

    Returns
    -------
    pymc.Model
        Coords ``system``, ``stratum``, ``category``, ``truth``, ``verdict`` (and ``error``,
        the off-diagonal cells, for ``"hierarchical"``); free ``theta`` (system, stratum,
        category) and ``confusion`` (its group dims, truth, verdict), deterministic ``p``
        (system, stratum, category), observed ``test``, ``calibration`` and, under the random
        design, ``truth_counts`` (system, stratum, truth).

    Examples
    --------
    >>> from bayesjudge.data import CategoricalCounts
    >>> ds = CategoricalCounts.from_counts([50, 30, 20], [[8, 1, 1], [1, 8, 1], [0, 2, 8]],
    ...                                    categories=["A", "tie", "B"])
    >>> model = build_categorical_model(ds, scores={"A": 1, "tie": 0.5, "B": 0})
    >>> sorted(v.name for v in model.free_RVs)
    ['confusion', 'theta']
    >>> model.named_vars_to_dims["confusion"]
    ('system', 'stratum', 'truth', 'verdict')
    """
    config = categorical_model_config(counts, calibration, pool_over, confusion, priors, scores)
    return build_categorical_from_config(counts, config)


def build_categorical_from_config(counts, config: dict) -> pm.Model:
    """Build the model of :func:`build_categorical_model` from a checked configuration.

    Raises
    ------
    ValueError
        If the configuration's design or categories are not the counts'.
    """
    arrays = _arrays(counts, config["calibration"], config["pool_over"])
    if config["design"] != arrays.design or config["categories"] != [
        str(c) for c in arrays.categories
    ]:
        raise ValueError(
            f"The model configuration (design {config['design']!r}, categories "
            f"{config['categories']}) does not match the counts (design {arrays.design!r}, "
            f"categories {arrays.categories}); build the configuration from these counts."
        )
    priors = CategoricalPriors.from_dict(config["priors"])
    _warn_uncalibrated(arrays, config)
    k = arrays.k
    coords = {
        "system": arrays.systems,
        "stratum": arrays.strata,
        "category": arrays.categories,
        "truth": arrays.categories,
        "verdict": arrays.categories,
    }
    if config["calibration"] == "hierarchical" and config["confusion"] == "free":
        coords["error"] = error_cells(arrays.categories)[0]
    with pm.Model(coords=coords) as model:
        test_obs = pm.Data("test_observed", arrays.test, dims=TEST_DIMS)
        cal_obs = pm.Data("calibration_observed", arrays.calibration, dims=CAL_DIMS)
        n = pm.Data("n", arrays.test.sum(-1), dims=DIMS)
        m = pm.Data("m", arrays.calibration.sum(-1), dims=TRUTH_DIMS)
        alpha = np.broadcast_to(priors.theta_alpha(k), arrays.test.shape).copy()
        theta = pm.Dirichlet("theta", a=alpha, dims=TEST_DIMS)
        conf, group = _confusion(config, priors, arrays.categories)
        full = _expand(conf, group)  # (system, stratum, truth, verdict), broadcast
        p = pm.Deterministic("p", (theta[..., :, None] * full).sum(axis=-2), dims=TEST_DIMS)
        _multinomial("test", n, p, observed=test_obs, dims=TEST_DIMS)
        cal_p = pt.broadcast_to(full, arrays.calibration.shape)
        _multinomial("calibration", m, cal_p, observed=cal_obs, dims=CAL_DIMS)
        if arrays.design == "random":
            # The labelled items are a random sample of the group's items: their truth
            # counts are Multinomial(Σ_t m[t], θ) (the binary model's m1 ~ Bin(m0 + m1, θ)).
            _multinomial("truth_counts", m.sum(axis=-1), theta, observed=m, dims=TRUTH_DIMS)
        values = _score_vector(config["scores"], arrays.categories, stored=True)
        if values is not None:
            pm.Deterministic("score", pt.dot(theta, values), dims=DIMS)
    return model


def _warn_uncalibrated(arrays: _Arrays, config: dict) -> None:
    """Warn when a confusion row is informed by no calibration item (its prior alone)."""
    m = arrays.calibration.sum(-1)  # (system, stratum, truth)
    pooled = tuple(config["pool_over"])
    if config["calibration"] == "shared":
        m = m.sum(axis=tuple(DIMS.index(d) for d in pooled), keepdims=True)
    lacking = m == 0
    if not lacking.any():
        return
    first = np.argwhere(lacking)[0]
    where = ", ".join(
        f"{dim}={labels[i]!r}"
        for dim, labels, i in zip(DIMS, (arrays.systems, arrays.strata), first[:2], strict=True)
        if dim not in pooled or config["calibration"] != "shared"
    )
    hint = {
        "separate": "its row comes from the prior alone, so θ is barely identified. Use "
        "calibration='hierarchical' or 'shared' to borrow from other groups, a structured "
        "confusion ('symmetric', 'ordinal'), or an informative CategoricalPriors(confusion=...).",
        "shared": "its row comes from the prior alone. Label items of that category.",
        "hierarchical": "its row is drawn from the population of the other groups, so its θ "
        "interval is wider; it is right only if this group's judge behaves like theirs.",
    }[config["calibration"]]
    warnings.warn(
        f"{int(lacking.sum())} confusion row(s) have no calibration items (first: "
        f"{where or 'the pooled set'}, truth={arrays.categories[first[2]]!r}); {hint}",
        SmallSampleWarning,
        stacklevel=4,
    )


# ----------------------------------------------------------------------------- sampling


def _structure_key(arrays: _Arrays, config: dict) -> str:
    # repr, not str: labels 1 and "1" must not share a compiled model (its coords).
    key = {
        "model": config,
        "system": [repr(s) for s in arrays.systems],
        "stratum": [repr(s) for s in arrays.strata],
    }
    return json.dumps(key, sort_keys=True)


def uses_kernels(config: dict) -> bool:
    """Whether the model has hand-written kernels (:mod:`.categorical_numba`).

    ``confusion="free"`` (every calibration model, both designs) does; the structured
    confusions are sampled through PyTensor's compiled graph.
    """
    return config["confusion"] == "free"


def _compile_kernels(model: pm.Model, arrays: _Arrays, config: dict):
    """Return the nutpie model of the hand-written log density of ``model``.

    The kernels are checked against PyMC's log density and gradient by the tests; here the
    free variables' names and order are checked against the model they stand for.
    """
    priors = CategoricalPriors.from_dict(config["priors"])
    k = arrays.k
    layout = categorical_numba.free_layout(
        arrays.test,
        arrays.calibration,
        design=arrays.design,
        calibration_model=config["calibration"],
        pool_over=config["pool_over"],
        alpha_theta=priors.theta_alpha(k),
        alpha_confusion=priors.confusion_alpha(k),
        error_logit_mean=priors.error_logit_mean,
        error_logit_scale=priors.error_logit_scale,
    )
    free = [model.rvs_to_values[v].name for v in model.free_RVs]
    if free != layout.names:  # a model change the kernels do not follow: a bug, say so
        raise RuntimeError(
            f"The hand-written K-category kernels expect the free variables {layout.names}, "
            f"but the PyMC model has {free}; update bayesjudge.models.categorical_numba."
        )
    values = _score_vector(config["scores"], arrays.categories, stored=True)
    return categorical_numba.compile_free_model(
        layout,
        coords={name: list(labels) for name, labels in model.coords.items()},
        dims=model.named_vars_to_dims,
        scores=values,
    )


def compile_categorical(model: pm.Model, arrays: _Arrays, config: dict):
    """Return the nutpie-compiled model, cached by model structure.

    ``confusion="free"`` gets the hand-written kernels of :mod:`.categorical_numba`
    (seconds to compile, kept on disk by numba); the structured confusions get PyTensor's
    numba compile of the model's graph, cached in memory by structure: a cached model gets
    the new data (every data container), so refits of the same structure skip the compile.
    """
    import nutpie

    if uses_kernels(config):
        return _compile_kernels(model, arrays, config)
    key = _structure_key(arrays, config)
    compiled = _COMPILED.get(key)
    if compiled is None:
        compiled = nutpie.compile_pymc_model(model)
        _COMPILED[key] = compiled
        while len(_COMPILED) > _COMPILED_MAX:
            _COMPILED.popitem(last=False)
        return compiled
    _COMPILED.move_to_end(key)
    return compiled.with_data(**{v.name: v.get_value() for v in model.data_vars})


def _sample(compiled, *, draws, tune, chains, seed, target_accept, progress) -> xr.DataTree:
    import nutpie

    tree = nutpie.sample(
        compiled,
        draws=draws,
        tune=tune,
        chains=chains,
        cores=min(chains, os.cpu_count() or 1),
        seed=sampler_seed(seed),
        target_accept=target_accept,
        progress_bar=progress,
        save_warmup=False,
    )
    post = tree["posterior"].dataset
    if (post.sizes.get("chain"), post.sizes.get("draw")) != (chains, draws) or any(
        bool(np.isnan(post[v].isel(draw=-1)).any()) for v in post.data_vars
    ):
        raise KeyboardInterrupt("sampling stopped early; no result was kept")
    return xr.DataTree.from_dict({g: tree[g].dataset for g in ("posterior", "sample_stats")})


def _with_counts(tree: xr.DataTree, arrays: _Arrays, counts) -> xr.DataTree:
    """Add the observed counts (``observed_data``) and the counts' Dataset (``counts``)."""
    observed = {
        "test": (TEST_DIMS, arrays.test),
        "calibration": (CAL_DIMS, arrays.calibration),
    }
    if arrays.design == "random":
        observed["truth_counts"] = (TRUTH_DIMS, arrays.calibration.sum(-1))
    coords = {
        "system": arrays.systems,
        "stratum": arrays.strata,
        "category": arrays.categories,
        "truth": arrays.categories,
        "verdict": arrays.categories,
    }
    tree["observed_data"] = xr.DataTree(xr.Dataset(observed, coords=coords))
    tree["counts"] = xr.DataTree(_container(counts).ds)
    return tree


def fit_categorical(
    counts,
    *,
    calibration: str = "separate",
    pool_over=None,
    confusion: str = "free",
    priors: CategoricalPriors | None = None,
    scores=None,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    random_seed: int | None = None,
    target_accept: float | None = None,
    progressbar: bool | None = None,
) -> CategoricalFit:
    """Fit the K-category model (θ and the judge's confusion matrix) by NUTS (nutpie).

    Parameters
    ----------
    counts : CategoricalCounts
        Test and calibration counts per (system, stratum) group.
    calibration, pool_over, confusion, priors, scores
        The model, as in :func:`build_categorical_model`. ``scores`` also sets the default
        score of :meth:`CategoricalFit.summary` and :meth:`CategoricalFit.compare`.
    draws, tune, chains : int, default 1000, 1000, 4
        Draws kept per chain, tuning steps per chain, chains.
    random_seed : int, optional
        Seed of the sampler (drawn and stored when None).
    target_accept : float, optional
        NUTS target acceptance; default 0.9 (0.99 for ``"hierarchical"``, whose log-ratio
        scales make a funnel, as in the binary model).
    progressbar : bool, optional
        Show nutpie's progress bar (default: in a terminal or notebook, not under pytest/CI).

    Returns
    -------
    CategoricalFit

    Warns
    -----
    ConvergenceWarning
        On divergences, r_hat > 1.01 or bulk/tail ESS < 400 (with the numbers and advice).
    SmallSampleWarning
        If a confusion row has no calibration items.

    Examples
    --------
    >>> from bayesjudge.data import CategoricalCounts
    >>> ds = CategoricalCounts.from_counts([50, 30, 20], [[18, 1, 1], [2, 16, 2], [0, 2, 18]],
    ...                                    categories=["A", "tie", "B"])
    >>> scores = {"A": 1, "tie": 0.5, "B": 0}  # a win rate of A over B, ties counted half
    >>> fit_categorical(ds, scores=scores, draws=0)  # options are checked before compiling
    Traceback (most recent call last):
    ValueError: draws must be an integer >= 1; got 0.

    A fit (``fit_categorical(ds, scores=scores, random_seed=1)``) then gives
    ``result.summary(ci_prob=0.95)["score_ci"]`` and ``result.compare()["prob_greater"]``.
    """
    config = categorical_model_config(counts, calibration, pool_over, confusion, priors, scores)
    settings = {
        "draws": check_int("draws", draws, 1),
        "tune": check_int("tune", tune, 0),
        "chains": check_int("chains", chains, 1),
        "random_seed": check_seed(random_seed),
    }
    if target_accept is None:
        target_accept = 0.99 if calibration == "hierarchical" else 0.9
    settings["target_accept"] = check_open_unit("target_accept", target_accept, "e.g. 0.9")
    progress = show_progress(progressbar, name="progressbar")
    arrays = _arrays(counts, config["calibration"], config["pool_over"])
    model = build_categorical_from_config(counts, config)
    compiled = compile_categorical(model, arrays, config)
    tree = _sample(
        compiled,
        draws=settings["draws"],
        tune=settings["tune"],
        chains=settings["chains"],
        seed=settings["random_seed"],
        target_accept=settings["target_accept"],
        progress=progress,
    )
    result = CategoricalFit(_with_counts(tree, arrays, counts), {**config, **settings}, model)
    result.check_sampling(stacklevel=3)
    return result


def prior_predictive_categorical(
    counts,
    *,
    calibration: str = "separate",
    pool_over=None,
    confusion: str = "free",
    priors: CategoricalPriors | None = None,
    scores=None,
    draws: int = 500,
    random_seed: int | None = None,
) -> xr.DataTree:
    """Draw θ, the confusion and the counts from the prior (the counts' sizes kept).

    Only the sizes of ``counts`` are used: n per group and m[t] per truth row (under the
    random design Σ_t m[t], the truth split being drawn as ``truth_counts``; the calibration
    rows are then drawn given the observed m[t]).

    Returns
    -------
    xarray.DataTree
        Groups ``prior``, ``prior_predictive`` (``test``, ``calibration`` and, under the
        random design, ``truth_counts``) and ``observed_data``; attrs ``random_seed`` and the
        configuration.

    Examples
    --------
    >>> from bayesjudge.data import CategoricalCounts
    >>> ds = CategoricalCounts.from_counts([50, 30], [[9, 1], [2, 8]], categories=["A", "B"])
    >>> prior = prior_predictive_categorical(ds, draws=100, random_seed=1)
    >>> prior["prior_predictive"].dataset["test"].sum("category").values.ravel()[:3].tolist()
    [80, 80, 80]
    """
    config = categorical_model_config(counts, calibration, pool_over, confusion, priors, scores)
    check_int("draws", draws, 1)
    seed = check_seed(random_seed)
    arrays = _arrays(counts, config["calibration"], config["pool_over"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BayesJudgeWarning)  # no data yet: nothing to warn on
        model = build_categorical_from_config(counts, config)
    names = [v for v in OBSERVED if v in model.named_vars]
    with quiet_pymc():
        # Forward draws through PyTensor's Python mode: no numba compile (minutes under
        # load for a one-off draw), and the same random graph.
        tree = pm.sample_prior_predictive(
            draws=int(draws),
            model=model,
            random_seed=sampler_seed(seed),
            compile_kwargs={"mode": "FAST_COMPILE"},
        )
    out = xr.DataTree.from_dict(
        {
            "prior": tree["prior"].dataset,
            "prior_predictive": tree["prior_predictive"].dataset[names],
        }
    )
    out = _with_counts(out, arrays, counts)
    del out["counts"]
    out.attrs.update({"random_seed": seed, "bayesjudge_config": json.dumps(config, sort_keys=True)})
    return out


# ----------------------------------------------------------------------------- results


def _mid_p(replicated: xr.DataArray, observed: xr.DataArray) -> xr.DataArray:
    sample = ("chain", "draw")
    return (replicated > observed).mean(sample) + 0.5 * (replicated == observed).mean(sample)


@dataclass(frozen=True)
class CategoricalPosteriorPredictiveCheck:
    """Posterior predictive draws of the K-category counts and their tail probabilities.

    Attributes
    ----------
    tree : xarray.DataTree
        Groups ``posterior_predictive`` (replicated ``test``, ``calibration`` and, under the
        random design, ``truth_counts``) and ``observed_data``.
    p_value : xarray.Dataset
        Per observed variable and cell, the mid-p ``P(rep > obs) + P(rep = obs) / 2``.
    discrepancy_p : xarray.Dataset
        Per observed variable and group (and truth row of ``calibration``), the posterior
        predictive p-value of the chi-square discrepancy of the whole multinomial,
        ``P(T(rep, φ) >= T(obs, φ))`` with ``T = Σ (y − E[y | φ])² / E[y | φ]`` (Gelman et
        al., BDA3 Sec. 6.3). Small values (say < 0.025) mean the model does not reproduce
        the counts of that group.
    """

    tree: xr.DataTree
    p_value: xr.Dataset
    discrepancy_p: xr.Dataset

    @property
    def replicated(self) -> xr.Dataset:
        """The replicated counts."""
        return self.tree["posterior_predictive"].dataset

    @property
    def observed(self) -> xr.Dataset:
        """The observed counts."""
        return self.tree["observed_data"].dataset


class CategoricalFit:
    """A fitted K-category model: the posterior as an :class:`xarray.DataTree` and settings.

    Attributes
    ----------
    tree : xarray.DataTree
        Groups ``posterior``, ``sample_stats``, ``observed_data`` and ``counts``; root attrs
        ``bayesjudge_config`` (JSON) and ``bayesjudge_config_hash``.
    config : dict
        Model and sampler settings (:func:`categorical_model_config` plus draws, tune,
        chains, random_seed, target_accept).
    """

    def __init__(self, tree: xr.DataTree, config: dict, model: pm.Model | None = None) -> None:
        self.tree = tree
        self.config = dict(config)
        self._model = model
        self.tree.attrs.update(
            {
                "bayesjudge_version": __version__,
                "bayesjudge_config": json.dumps(self.config, sort_keys=True),
                "bayesjudge_config_hash": config_hash(self.config),
                "random_seed": self.config["random_seed"]
                if self.config["random_seed"] < 2**63
                else str(self.config["random_seed"]),
                "calibration": self.config["calibration"],
                "confusion": self.config["confusion"],
                "design": self.config["design"],
            }
        )

    @property
    def posterior(self) -> xr.Dataset:
        """The posterior draws (dims chain, draw, system, stratum, category, ...)."""
        return self.tree["posterior"].dataset

    @property
    def categories(self) -> list[str]:
        """The category labels, in the counts' order."""
        return list(self.config["categories"])

    @property
    def counts(self) -> CategoricalCounts:
        """The fitted counts, as a :class:`~bayesjudge.data.CategoricalCounts`."""
        return CategoricalCounts(self.tree["counts"].dataset)

    def report(self, out_dir=None, **options):
        """Build the evaluation report of this fit: Markdown and a self-contained HTML page.

        Parameters
        ----------
        out_dir : str or path-like, optional
            Folder for ``report.md``, its PNGs and ``report.html``; nothing is written when
            None.
        **options
            Passed to :func:`bayesjudge.report.categorical.build_categorical_report`
            (``scores``, ``alpha``, ``method``, ``random_seed``, ``ppc``, ``warn``, ...).

        Returns
        -------
        bayesjudge.Report
            Sections, tables, figures and diagnoses; the written paths in ``.paths``.

        Examples
        --------
        A fit (``fit = bj.fit(counts, scores={"A": 1, "tie": 0.5, "B": 0})``) gives
        ``fit.report("my-report", random_seed=1)``: the bottom line ranks the systems by
        their posterior mean score with P(A > B).
        """
        report = build_categorical_report(fit=self, **options)
        report.paths = report.save(out_dir) if out_dir is not None else {}
        return report

    @property
    def model(self) -> pm.Model:
        """The PyMC model (rebuilt from the stored counts after :func:`load_categorical`)."""
        if self._model is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", BayesJudgeWarning)
                self._model = build_categorical_from_config(
                    self.tree["counts"].dataset, self._model_config()
                )
        return self._model

    def _model_config(self) -> dict:
        keys = ("kind", "calibration", "pool_over", "confusion", "priors", "scores", "design",
                "categories")  # fmt: skip
        return {k: self.config[k] for k in keys}

    def __repr__(self) -> str:
        c, sizes = self.config, self.posterior.sizes
        return (
            f"<bayesjudge.CategoricalFit calibration={c['calibration']!r} "
            f"confusion={c['confusion']!r} K={len(c['categories'])} systems={sizes['system']} "
            f"strata={sizes['stratum']} draws={c['chains']}×{c['draws']} seed={c['random_seed']}>"
        )

    # ------------------------------------------------------------ estimands

    def score_draws(self, scores=None) -> xr.DataArray:
        """Posterior draws of the mean score Σ_c θ_c · scores[c] per group.

        ``scores`` default: the fit's ``scores``. Raises ValueError when neither is given.
        """
        stored = scores is None
        if stored:
            scores = self.config.get("scores")
        if scores is None:
            raise ValueError(
                "No scores: pass scores={category: value} (e.g. {'A': 1, 'tie': 0.5, 'B': 0} "
                "for a win rate with ties counted half), here or to fit_categorical."
            )
        values = _score_vector(scores, self.categories, stored=stored)
        weights = xr.DataArray(
            values, dims="category", coords={"category": self.posterior["category"]}
        )
        return xr.dot(self.posterior["theta"], weights, dim="category")

    # ------------------------------------------------------------ diagnostics

    def diagnostics(self) -> dict:
        """Divergences, the largest r_hat and the smallest bulk/tail ESS of the parameters."""
        post = self.posterior[[v for v in REPORTED if v in self.posterior.data_vars]]
        varying = [v for v in post.data_vars if varies(post[v])]
        diverging = self.tree["sample_stats"].dataset["diverging"]
        out = {"divergences": int(diverging.sum()), "draws": int(diverging.size), "worst": {}}
        for key, stat in (
            ("r_hat_max", az.rhat(post[varying])),
            ("ess_bulk_min", az.ess(post[varying], method="bulk")),
            ("ess_tail_min", az.ess(post[varying], method="tail")),
        ):
            values = {
                v: float(stat[v].max() if key == "r_hat_max" else stat[v].min()) for v in varying
            }
            name = (max if key == "r_hat_max" else min)(values, key=values.get)
            out[key], out["worst"][key] = values[name], name
        return out

    def check_sampling(self, stacklevel: int = 2) -> dict:
        """Warn (:class:`ConvergenceWarning`) with numbers and advice on bad diagnostics."""
        d = self.diagnostics()
        problems = []
        if d["divergences"]:
            problems.append(
                f"{d['divergences']} of {d['draws']} draws diverged (the draws may be biased); "
                f"refit with target_accept="
                f"{0.995 if self.config['target_accept'] >= 0.99 else 0.99}"
                + (
                    ", or pool over more groups or tighten error_logit_scale"
                    if self.config["calibration"] == "hierarchical"
                    else ""
                )
            )
        if d["r_hat_max"] > RHAT_MAX:
            problems.append(
                f"r_hat = {d['r_hat_max']:.3f} > {RHAT_MAX} for {d['worst']['r_hat_max']!r} "
                f"(the chains disagree); run more tune and draws, and check for confusion rows "
                f"without calibration items (label switching between categories)"
            )
        for key, label in (("ess_bulk_min", "bulk"), ("ess_tail_min", "tail")):
            if d[key] < ESS_MIN:
                problems.append(
                    f"{label} ESS = {d[key]:.0f} < {ESS_MIN} for {d['worst'][key]!r}; raise "
                    f"draws (now {self.config['draws']} per chain × {self.config['chains']} "
                    f"chains)"
                )
        if problems:
            warnings.warn(
                "Sampler diagnostics: " + "; ".join(problems) + ".",
                ConvergenceWarning,
                stacklevel=stacklevel + 1,
            )
        return d

    # ------------------------------------------------------------ summaries

    def summary(self, ci_prob: float = 0.95, scores=None) -> xr.Dataset:
        """Posterior mean, sd, median and equal-tailed interval of θ, the confusion and the score.

        Parameters
        ----------
        ci_prob : float, default 0.95
            Probability of the equal-tailed intervals.
        scores : mapping, optional
            ``{category: value}``; default the fit's ``scores``. Without either, no score.

        Returns
        -------
        xarray.Dataset
            ``theta`` (posterior mean; dims system, stratum, category), ``theta_sd``,
            ``theta_median``, ``theta_ci`` (+ ``ci_bound``), ``theta_r_hat``,
            ``theta_ess_bulk``; the same for ``confusion`` (its group dims, truth, verdict)
            and, with scores, ``score`` (system, stratum). Attrs ``ci_kind="eti"``,
            ``ci_prob``, ``calibration``, ``confusion``, ``design``, ``scores``.
        """
        ci_prob = check_open_unit("ci_prob", ci_prob, "e.g. 0.95 for a 95 % interval")
        variables = {"theta": self.posterior["theta"], "confusion": self.posterior["confusion"]}
        if scores is not None or self.config.get("scores") is not None:
            variables["score"] = self.score_draws(scores)
        out = {}
        sample = ("chain", "draw")
        for name, draws in variables.items():
            single = draws.rename(name).to_dataset()
            out[name] = draws.mean(sample)
            out[f"{name}_sd"] = draws.std(sample, ddof=1)
            out[f"{name}_median"] = draws.median(sample)
            out[f"{name}_ci"] = eti(draws, ci_prob)
            out[f"{name}_r_hat"] = az.rhat(single)[name]
            out[f"{name}_ess_bulk"] = az.ess(single, method="bulk")[name]
        used = scores if scores is not None else self.config.get("scores")
        attrs = {
            "ci_kind": "eti",
            "ci_prob": ci_prob,
            "calibration": self.config["calibration"],
            "confusion": self.config["confusion"],
            "design": self.config["design"],
            "scores": json.dumps(
                _scores_dict(
                    _score_vector(used, self.categories, stored=scores is None), self.categories
                )
            ),
        }
        return xr.Dataset(out, attrs=attrs)

    def compare(self, scores=None, dim: str = "system", ci_prob: float = 0.95) -> xr.Dataset:
        """Posterior of every pairwise difference of the score (or of θ) along ``dim``.

        Parameters
        ----------
        scores : mapping, optional
            ``{category: value}``; default the fit's ``scores``. Without either, θ itself is
            compared, category by category.
        dim : {"system", "stratum"}, default "system"
        ci_prob : float, default 0.95

        Returns
        -------
        xarray.Dataset
            Dim ``pair`` (labels ``"a - b"``, coords ``first``/``second``) and the other dims;
            ``difference`` (draws), ``mean``, ``median``, ``sd``, ``ci`` (along ``ci_bound``)
            and ``prob_greater`` = P(a > b). Attrs ``ci_kind="eti"``, ``ci_prob``, ``var``
            (``"score"`` or ``"theta"``), ``dim``, ``scores``.
        """
        ci_prob = check_open_unit("ci_prob", ci_prob, "e.g. 0.95 for a 95 % interval")
        if dim not in DIMS:
            raise ValueError(f"dim must be one of {list(DIMS)}; got {dim!r}.")
        has_scores = scores is not None or self.config.get("scores") is not None
        draws = self.score_draws(scores) if has_scores else self.posterior["theta"]
        labels = draws[dim].values.tolist()
        if len(labels) < 2:
            raise ValueError(f"compare needs at least 2 {dim} labels; got {labels}.")
        pairs = list(combinations(range(len(labels)), 2))
        diff = xr.concat(
            [draws.isel({dim: i}, drop=True) - draws.isel({dim: j}, drop=True) for i, j in pairs],
            dim="pair",
        ).assign_coords(
            pair=[pair_label(labels[i], labels[j]) for i, j in pairs],
            first=("pair", [labels[i] for i, _ in pairs]),
            second=("pair", [labels[j] for _, j in pairs]),
        )
        sample = ("chain", "draw")
        used = scores if scores is not None else self.config.get("scores")
        return xr.Dataset(
            {
                "difference": diff,
                "mean": diff.mean(sample),
                "median": diff.median(sample),
                "sd": diff.std(sample, ddof=1),
                "ci": eti(diff, ci_prob),
                "prob_greater": (diff > 0).mean(sample),
            },
            attrs={
                "ci_kind": "eti",
                "ci_prob": ci_prob,
                "var": "score" if has_scores else "theta",
                "dim": dim,
                "scores": json.dumps(
                    _scores_dict(
                        _score_vector(used, self.categories, stored=scores is None), self.categories
                    )
                ),
            },
        )

    # ------------------------------------------------------------ checks

    def ppc(self, random_seed: int | None = None) -> CategoricalPosteriorPredictiveCheck:
        """Posterior predictive check of the test, calibration (and truth) counts.

        One replicate per posterior draw, drawn with numpy from the draw's multinomials
        (test given n, calibration rows given m[t], truth counts given Σ_t m[t]).

        Returns
        -------
        CategoricalPosteriorPredictiveCheck
            Per-cell mid-p values and per-group chi-square discrepancy tail probabilities.
        """
        seed = check_seed(random_seed)
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2,)))
        observed = self.tree["observed_data"].dataset
        post = self.posterior
        theta = post["theta"].transpose("chain", "draw", *TEST_DIMS)
        full = post["confusion"].broadcast_like(post["theta"].isel(category=0, drop=True))
        full = full.transpose("chain", "draw", *CAL_DIMS)
        expected = {
            "test": (post["p"].transpose(*theta.dims), observed["test"]),
            "calibration": (full, observed["calibration"]),
        }
        if "truth_counts" in observed:
            expected["truth_counts"] = (theta.rename(category="truth"), observed["truth_counts"])
        replicated, p_value, discrepancy = {}, {}, {}
        for name, (prob, obs) in expected.items():
            size = obs.sum(obs.dims[-1])
            probs = np.clip(prob.values, 0.0, None)
            probs = probs / probs.sum(-1, keepdims=True)
            n = np.broadcast_to(size.values, probs.shape[:-1])
            rep = xr.DataArray(rng.multinomial(n, probs), dims=prob.dims, coords=prob.coords)
            rep = (
                rep.rename({prob.dims[-1]: obs.dims[-1]}) if prob.dims[-1] != obs.dims[-1] else rep
            )
            mean = xr.DataArray(probs * n[..., None], dims=rep.dims, coords=rep.coords)
            replicated[name] = rep
            p_value[name] = _mid_p(rep, obs)
            discrepancy[name] = _chi_square_p(rep, obs, mean)
        tree = xr.DataTree.from_dict(
            {"posterior_predictive": xr.Dataset(replicated), "observed_data": observed}
        )
        attrs = {"random_seed": seed}
        return CategoricalPosteriorPredictiveCheck(
            tree,
            xr.Dataset(p_value, attrs={"kind": "mid-p, P(rep > obs) + P(rep = obs) / 2", **attrs}),
            xr.Dataset(discrepancy, attrs={"kind": "P(T(rep) >= T(obs)), chi-square", **attrs}),
        )

    # ------------------------------------------------------------ persistence

    def save(self, path) -> Path:
        """Write the fit to a netCDF file, atomically (:func:`load_categorical` reads it)."""
        path = check_output_file(path, what="fit file")
        tree = self.tree.copy()
        stats = tree["sample_stats"].dataset
        drop = [v for v in stats.data_vars if stats[v].dtype == object]
        tree["sample_stats"] = xr.DataTree(stats.drop_vars(drop))
        counts = tree["counts"].dataset
        # netCDF has no boolean attributes: ``ordered`` is stored as 0/1 (read back by load).
        counts.attrs = {k: int(v) if isinstance(v, bool) else v for k, v in counts.attrs.items()}
        tree["counts"] = xr.DataTree(counts)
        tree.attrs["format"] = CATEGORICAL_FORMAT
        tree.attrs.pop(DIGEST_ATTR, None)
        tree.attrs[DIGEST_ATTR] = content_digest(tree)
        with atomic_path(path) as tmp:
            tree.to_netcdf(tmp, engine="h5netcdf")
        return path


def _chi_square_p(rep: xr.DataArray, obs: xr.DataArray, mean: xr.DataArray) -> xr.DataArray:
    """P(T(rep, φ) >= T(obs, φ)) over the draws, T = Σ_cells (y − E)² / E (E > 0 cells)."""
    last = obs.dims[-1]
    safe = mean.where(mean > 0)
    t_rep = ((rep - mean) ** 2 / safe).sum(last, skipna=True)
    t_obs = ((obs - mean) ** 2 / safe).sum(last, skipna=True)
    return (t_rep >= t_obs).mean(("chain", "draw"))


def load_categorical(path) -> CategoricalFit:
    """Read a fit written by :meth:`CategoricalFit.save`; its configuration hash is checked.

    Raises
    ------
    FileNotFoundError
        If there is no file at ``path``.
    ValueError
        Naming the path and what is wrong: the file cannot be read (truncated, not netCDF),
        is not a saved categorical fit, its configuration does not match its stored hash, or
        its content (draws, counts) does not match the digest stored at save.

    Examples
    --------
    >>> load_categorical("no-such-fit.nc")
    Traceback (most recent call last):
    ...
    FileNotFoundError: No categorical fit file at 'no-such-fit.nc'.
    """
    tree, config = read_fit_tree(
        path, fmt=CATEGORICAL_FORMAT, what="categorical fit", saver="CategoricalFit.save"
    )
    counts = tree["counts"].dataset
    counts.attrs["ordered"] = bool(counts.attrs.get("ordered", False))
    tree["counts"] = xr.DataTree(counts)
    return CategoricalFit(tree, config)


def posterior_intervals(
    test,
    calibration,
    scores=None,
    *,
    alpha: float = 0.05,
    categories=None,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    random_seed: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed posterior intervals of θ (and a score) for many independent data sets.

    The hook of the coverage studies (:mod:`bayesjudge.studies.categorical`): every
    replication becomes one system of a single ``calibration="separate"`` fit (flat priors,
    stratified design), so the posteriors are independent and one compiled model serves all.

    Parameters
    ----------
    test : array_like of int, shape (reps, K)
        Test verdict counts per replication.
    calibration : array_like of int, shape (reps, K, K)
        Calibration counts per replication, rows = truth.
    scores : array_like of float, shape (K,), optional
        Score of each category; adds a last column with the score's interval.
    alpha : float, default 0.05
        1 − the interval's probability.
    categories : sequence, optional
        Category labels (default ``0 … K−1``).
    draws, tune, chains, random_seed
        As in :func:`fit_categorical`.

    Returns
    -------
    lower, upper : numpy.ndarray, shape (reps, K) or (reps, K + 1) with scores

    Examples
    --------
    >>> posterior_intervals([[5, 5]], [[[4, 1], [1, 4]]], draws=0)
    Traceback (most recent call last):
    ValueError: draws must be an integer >= 1; got 0.
    """
    test = np.asarray(test)
    calibration = np.asarray(calibration)
    k = test.shape[-1]
    labels = list(categories) if categories is not None else [str(i) for i in range(k)]
    counts = CategoricalCounts.from_counts(
        test,
        calibration,
        categories=labels,
        system=[f"rep{i}" for i in range(test.shape[0])],
    )
    score_map = None if scores is None else dict(zip(labels, np.asarray(scores), strict=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BayesJudgeWarning)  # a study counts failures itself
        result = fit_categorical(
            counts,
            scores=score_map,
            draws=draws,
            tune=tune,
            chains=chains,
            random_seed=random_seed,
        )
    table = result.summary(ci_prob=1 - alpha)
    ci = table["theta_ci"].isel(stratum=0).transpose("system", "category", "ci_bound").values
    if score_map is not None:
        score = table["score_ci"].isel(stratum=0).transpose("system", "ci_bound").values
        ci = np.concatenate([ci, score[:, None, :]], axis=1)
    return ci[..., 0], ci[..., 1]
