"""Several judges grading the same items: the joint latent-class model of a jury (PyMC).

Each item of a group g = (system, stratum) is truly correct with probability θ_g; given its
truth the judges' verdicts are independent (Dawid & Skene 1979; Hui & Walter 1980), or, with
``dependence="item"``, share an item effect u ~ N(0, 1). The latent truth is summed out, so
the pattern counts of :class:`~bayesjudge.data.jury.JuryCounts` are the data. The model card
is ``models/jury.md``; :func:`fit_jury` fits it with nutpie and returns a :class:`JuryFit`.
"""

from __future__ import annotations

import json
import warnings
from collections import OrderedDict
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import arviz as az
import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt
import xarray as xr
from scipy.special import log_ndtr, logsumexp, ndtri

from bayesjudge._io import atomic_path, check_output_file
from bayesjudge._progress import show_progress
from bayesjudge._text import pair_label
from bayesjudge._version import __version__
from bayesjudge.core._validation import check_open_unit
from bayesjudge.data import DIMS
from bayesjudge.data.jury import JUDGE, JURY_PATTERN, TRUTH, JuryCounts
from bayesjudge.models.priors import Priors
from bayesjudge.models.sampling import (
    check_int,
    check_seed,
    config_hash,
    eti,
    quiet_pymc,
    read_fit_tree,
    sample_nutpie,
    sampling_diagnostics,
    summary_names,
    warn_sampling,
)
from bayesjudge.models.storage import DIGEST_ATTR, content_digest
from bayesjudge.report.jury import build_jury_report
from bayesjudge.warnings import BayesJudgeWarning

__all__ = [
    "DEPENDENCES",
    "JURY_CALIBRATIONS",
    "JURY_FORMAT",
    "QUADRATURE_STEP",
    "JuryFit",
    "JuryPosteriorPredictiveCheck",
    "build_jury_model",
    "fit_jury",
    "jury_model_config",
    "load_jury",
    "pattern_log_probabilities",
    "warn_unlabelled",
]

JURY_CALIBRATIONS = ("shared", "separate", "hierarchical")
DEPENDENCES = (None, "item")
#: Step and half-width of the trapezoid grid over the item effect u (see quadrature_rule).
QUADRATURE_STEP = 0.25
QUADRATURE_LIMIT = 9.0
#: HalfNormal scale of the item effect b_t (probit scale): b = 1 makes two verdicts of an item
#: given its truth correlate by about 0.5 on the latent scale; b = 3 is nearly determined.
ITEM_EFFECT_SCALE = 1.0
#: The ``format`` attr of a saved jury fit (:func:`bayesjudge.load` dispatches on it).
JURY_FORMAT = "bayesjudge-jury-fit-1"
# Variables summarised and checked for convergence, when present.
REPORTED = ("theta", "q0", "q1", "youden", "item_effect")
#: Family-wise level of the agreement check's flag (Bonferroni over the judge pairs).
PPC_ALPHA = 0.05
TEST_DIMS = (*DIMS, JURY_PATTERN)
LABELLED_DIMS = (*DIMS, TRUTH, JURY_PATTERN)

# Compiled nutpie models keyed by model structure (as in models/fit.py): refits of the same
# structure (new counts, new seed) reuse the compiled log density.
_COMPILED: OrderedDict[str, object] = OrderedDict()
_COMPILED_MAX = 16


# ----------------------------------------------------------------------------- configuration


def _check_flag(name: str, value) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be True or False; got {value!r}.")
    return bool(value)


def jury_model_config(
    counts: JuryCounts,
    calibration: str = "shared",
    pool_judges: bool = False,
    dependence: str | None = None,
    priors: Priors | None = None,
    judge_better_than_chance: bool | None = None,
) -> dict:
    """Check the jury model's options against the counts; return its JSON-ready configuration.

    Parameters
    ----------
    counts : JuryCounts
    calibration : {"shared", "separate", "hierarchical"}, default "shared"
        ``"shared"``: one q0, q1 per judge and stratum for every system; ``"separate"``: per
        judge, system and stratum; ``"hierarchical"``: logit q per judge, system and stratum
        drawn around a per judge-and-stratum mean (non-centred).
    pool_judges : bool, default False
        Draw the judges' logit q's around a common mean (non-centred) instead of independent
        Beta priors (or per-judge logit means).
    dependence : {None, "item"}, default None
        ``"item"``: a shared item effect on all judges' verdicts given the truth.
    priors : Priors, optional
        θ, q0, q1 Beta priors and the logit means/scales (default :class:`Priors`).
    judge_better_than_chance : bool, optional
        Restrict every judge to q0 + q1 > 1 (Beta q's only). Default: True exactly when no
        item is labelled (the restriction then fixes the label switching).

    Returns
    -------
    dict

    Raises
    ------
    ValueError
        For a bad option (named, with the allowed values), fewer than 2 judges, no test items,
        or fewer than 3 judges without labelled items (not identified).

    Examples
    --------
    >>> counts = JuryCounts.from_counts(["11", "10", "00"], [40, 5, 20],
    ...                                 labelled=[[0, 1, 9], [8, 1, 0]], judges=["a", "b"])
    >>> jury_model_config(counts)["calibration"]
    'shared'
    >>> jury_model_config(counts, calibration="pooled")
    Traceback (most recent call last):
    ValueError: calibration must be one of ['shared', 'separate', 'hierarchical']; got 'pooled'.
    """
    if not isinstance(counts, JuryCounts):
        raise ValueError(
            f"counts must be a JuryCounts (several judges on the same items); got "
            f"{type(counts).__name__}. Build one with JuryCounts.from_counts(...)."
        )
    if not isinstance(calibration, str) or calibration not in JURY_CALIBRATIONS:
        raise ValueError(
            f"calibration must be one of {list(JURY_CALIBRATIONS)}; got {calibration!r}."
        )
    pool_judges = _check_flag("pool_judges", pool_judges)
    if not (dependence is None or (isinstance(dependence, str) and dependence in DEPENDENCES)):
        raise ValueError(f"dependence must be one of {list(DEPENDENCES)}; got {dependence!r}.")
    priors = Priors() if priors is None else priors
    if not isinstance(priors, Priors):
        raise ValueError(f"priors must be a bayesjudge.Priors; got {type(priors).__name__}.")
    if priors.known("q0") or priors.known("q1"):
        raise ValueError(
            "priors: known q0/q1 values are not available for a jury (each judge has its own "
            "q0, q1); pass Beta priors (a, b)."
        )
    n_judges = counts.sizes[JUDGE]
    if n_judges < 2:
        raise ValueError(
            f"counts holds {n_judges} judge(s); the jury model needs at least 2. For one judge "
            f"use bj.fit(counts.for_judge(judge)) (the single-judge models)."
        )
    if int(counts.test.sum()) == 0:
        raise ValueError("counts holds no test items: θ is the share of the test items.")
    labelled = int(counts.labelled.sum())
    if labelled == 0 and n_judges < 3:
        raise ValueError(
            f"With {n_judges} judges and no labelled items the jury model is not identified "
            f"(3 free pattern probabilities per group, 5 parameters). Add labelled items, or "
            f"at least 3 conditionally independent judges (Hui & Walter 1980)."
        )
    if dependence == "item" and labelled == 0 and n_judges < 4:
        raise ValueError(
            f"dependence='item' with {n_judges} judges and no labelled items is not "
            f"identified (the independent model already uses all 7 pattern probabilities of "
            f"each group). Add labelled items, or a fourth judge."
        )
    beta = calibration != "hierarchical" and not pool_judges
    if judge_better_than_chance is None:
        judge_better_than_chance = beta and labelled == 0
    judge_better_than_chance = _check_flag("judge_better_than_chance", judge_better_than_chance)
    if judge_better_than_chance and not beta:
        raise ValueError(
            "judge_better_than_chance=True restricts Beta priors of q0, q1: available for "
            "calibration='shared' or 'separate' with pool_judges=False. The logit-normal "
            "priors favour better-than-chance judges through Priors.q0_logit_mean."
        )
    return {
        "kind": "jury",
        "calibration": calibration,
        "pool_judges": pool_judges,
        "dependence": dependence,
        "priors": priors.to_dict(),
        "judge_better_than_chance": judge_better_than_chance,
        "design": counts.design,
        "quadrature_step": QUADRATURE_STEP if dependence == "item" else None,
        "item_effect_scale": ITEM_EFFECT_SCALE if dependence == "item" else None,
    }


# ------------------------------------------------------------------------------- the model


def _f64(values) -> list[np.float64]:
    """Prior parameters as float64: pytensor would make exact floats (2.0, 1.5) float32."""
    return [np.float64(v) for v in values]


def _quality_dims(config: dict) -> tuple[str, ...]:
    """Dims of q0, q1: (judge, stratum) for shared calibration, else (judge, system, stratum)."""
    return (JUDGE, "stratum") if config["calibration"] == "shared" else (JUDGE, *DIMS)


def _judge_level_dims(config: dict) -> tuple[str, ...]:
    # The judge-level parameters: q itself (shared, separate) or its logit mean (hierarchical).
    return (JUDGE, *DIMS) if config["calibration"] == "separate" else (JUDGE, "stratum")


def _logit_quality(name: str, config: dict, priors: Priors):
    """q0 or q1 from logit-normal priors: pooled over judges and/or hierarchical over systems."""
    level = _judge_level_dims(config)
    mean_prior = _f64(getattr(priors, f"{name}_logit_mean"))
    scale_prior = _f64([getattr(priors, f"{name}_logit_scale")])
    if config["pool_judges"]:
        rest = level[1:]
        mean = pm.Normal(f"{name}_judges_mean", *mean_prior, dims=rest)
        scale = pm.HalfNormal(f"{name}_judges_scale", *scale_prior, dims=rest)
        z = pm.Normal(f"{name}_judges_z", *_f64([0.0, 1.0]), dims=level)
        logit = mean + scale * z  # rest are the trailing dims of level: numpy broadcasting
        if config["calibration"] != "hierarchical":
            return pm.Deterministic(name, pm.math.invlogit(logit), dims=level)
        mu = pm.Deterministic(f"{name}_logit_mean", logit, dims=level)
    else:
        mu = pm.Normal(f"{name}_logit_mean", *mean_prior, dims=level)
    sigma = pm.HalfNormal(f"{name}_logit_scale", *scale_prior, dims=level)
    z = pm.Normal(f"{name}_z", *_f64([0.0, 1.0]), dims=(JUDGE, *DIMS))
    logit = mu[:, None, :] + sigma[:, None, :] * z
    return pm.Deterministic(name, pm.math.invlogit(logit), dims=(JUDGE, *DIMS))


def _qualities(config: dict, priors: Priors):
    """q0, q1 over :func:`_quality_dims`, with the better-than-chance restriction if asked."""
    dims = _quality_dims(config)
    if config["calibration"] == "hierarchical" or config["pool_judges"]:
        return _logit_quality("q0", config, priors), _logit_quality("q1", config, priors)
    if not config["judge_better_than_chance"]:
        return (pm.Beta(n, *_f64(getattr(priors, n)), dims=dims) for n in ("q0", "q1"))
    # J > 0 ⇔ q0 > 1 − q1 (as build.py's _beta_qs): q1 first, q0 truncated below at 1 − q1;
    # the Potential restores the joint prior ∝ Beta(q0) Beta(q1) 1{q0 + q1 > 1}.
    q1 = pm.Beta("q1", *_f64(priors.q1), dims=dims)
    dist = pm.Beta.dist(*_f64(priors.q0))
    q0 = pm.Truncated("q0", dist, lower=1 - q1, upper=1.0, dims=dims)
    pm.Potential("judge_better_than_chance", pt.log1mexp(pm.logcdf(dist, 1 - q1)).sum())
    return q0, q1


def _per_group(q, config: dict):
    """Broadcast a q over :func:`_quality_dims` to a (system, stratum, judge) tensor."""
    if config["calibration"] == "shared":
        return q.dimshuffle("x", 1, 0)
    return q.dimshuffle(1, 2, 0)


def _count_logp(value, log_prob):
    """Σ count · log P with 0 · (−inf) = 0; the multinomial coefficients are constants."""
    return pt.switch(pt.gt(value, 0), value * log_prob, 0.0)


def _log_patterns(said0, said1, q0, q1):
    """Return log P(v | t) (system, stratum, 2, pattern) of conditionally independent judges."""
    axes = [[2], [1]]  # contract the judge axis of (S, R, J) with that of (P, J)
    lp0 = pt.tensordot(pt.log(q0), said0, axes) + pt.tensordot(pt.log1p(-q0), said1, axes)
    lp1 = pt.tensordot(pt.log(q1), said1, axes) + pt.tensordot(pt.log1p(-q1), said0, axes)
    return pt.stack([lp0, lp1], axis=2)


def quadrature_rule(step: float = QUADRATURE_STEP) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and log weights of the trapezoid rule for E[f(u)], u ~ N(0, 1).

    A fixed grid of step ``step`` on [−9, 9] (73 nodes at the default 0.25): for an integrand
    as smooth as Φ(a + b u) φ(u) the trapezoid rule converges geometrically in 1/step (its
    error in log P(v | t) measured < 5e-6 for b ≤ 3 against ``scipy.integrate.quad``), where
    20 Gauss–Hermite nodes err by up to 1e-2 in the log-probability of rare patterns at
    b = 1.7 (the integrand is steep where those patterns are likely).

    Examples
    --------
    >>> x, logw = quadrature_rule()
    >>> x.size, round(float(np.exp(logw) @ x**2), 12)  # E[u²] = 1
    (73, 1.0)
    """
    x = np.arange(-QUADRATURE_LIMIT, QUADRATURE_LIMIT + step / 2, step)
    return x, np.log(step) - 0.5 * x**2 - 0.5 * np.log(2 * np.pi)


_SQRT2 = np.float64(np.sqrt(2.0))  # a float64 constant: pytensor makes sqrt(2.0) float32


def _probit(p):
    """Φ⁻¹(p) in float64 (``pm.math.probit`` computes √2 in float32)."""
    return -_SQRT2 * pt.erfcinv(2 * p)


def _log_ndtr(z):
    """Log Φ(z), stable in both tails (PyMC's normal_lcdf, with a float64 √2)."""
    return pt.switch(
        pt.lt(z, -1),
        pt.log(pt.erfcx(-z / _SQRT2) / 2) - pt.sqr(z) / 2,
        pt.log1p(-pt.erfc(z / _SQRT2) / 2),
    )


def _log_patterns_item(said0, said1, q0, q1, b, step: float):
    """Return log P(v | t) (system, stratum, 2, pattern), the item effect summed out.

    P(v_j = 1 | t, u) = Φ(a_jt + b_t u) with a chosen so that the marginal rates over u are
    q1 (t = 1) and 1 − q0 (t = 0): Φ(a / √(1 + b²)) is the marginal of a probit.
    """
    x, logw = quadrature_rule(step)
    scale = pt.sqrt(1 + b**2)
    offsets = (-_probit(q0) * scale[0], _probit(q1) * scale[1])
    out = []
    for t, a in enumerate(offsets):
        eta = a[..., None] + b[t] * x  # (S, R, J, K)
        up, down = _log_ndtr(eta), _log_ndtr(-eta)
        lp = pt.tensordot(up, said1, [[2], [1]]) + pt.tensordot(down, said0, [[2], [1]])
        out.append(pm.math.logsumexp(lp + logw[:, None], axis=2, keepdims=False))  # (S, R, P)
    return pt.stack(out, axis=2)


def _coords(counts: JuryCounts) -> dict:
    return {
        "system": counts.systems,
        "stratum": counts.strata,
        JUDGE: counts.judges,
        JURY_PATTERN: counts.patterns,
        TRUTH: [0, 1],
    }


def build_jury_from_config(counts: JuryCounts, config: dict) -> pm.Model:
    """Build the PyMC jury model from a :func:`jury_model_config` configuration.

    Examples
    --------
    >>> counts = JuryCounts.from_counts(["111", "110", "000"], [40, 5, 20],
    ...                                 labelled=[[0, 1, 9], [8, 1, 0]], judges=["a", "b", "c"])
    >>> model = build_jury_from_config(counts, jury_model_config(counts))
    >>> sorted(model.named_vars_to_dims["q1"])
    ['judge', 'stratum']
    """
    counts = JuryCounts(counts)
    priors = Priors.from_dict(config["priors"])
    v = counts.verdicts
    with pm.Model(coords=_coords(counts)) as model:
        said0 = pm.Data("said_incorrect", (v == 0).astype(float), dims=(JURY_PATTERN, JUDGE))
        said1 = pm.Data("said_correct", (v == 1).astype(float), dims=(JURY_PATTERN, JUDGE))
        test = pm.Data("test_observed", counts.test.transpose(*TEST_DIMS).values, dims=TEST_DIMS)
        labelled = pm.Data(
            "labelled_observed",
            counts.labelled.transpose(*LABELLED_DIMS).values,
            dims=LABELLED_DIMS,
        )
        theta = pm.Beta("theta", *_f64(priors.theta), dims=DIMS)
        q0, q1 = _qualities(config, priors)
        pm.Deterministic("youden", q0 + q1 - 1, dims=_quality_dims(config))
        q0g, q1g = _per_group(q0, config), _per_group(q1, config)
        if config["dependence"] == "item":
            b = pm.HalfNormal("item_effect", *_f64([config["item_effect_scale"]]), dims=TRUTH)
            log_pv = _log_patterns_item(said0, said1, q0g, q1g, b, config["quadrature_step"])
        else:
            log_pv = _log_patterns(said0, said1, q0g, q1g)
        log_truth = pt.stack([pt.log1p(-theta), pt.log(theta)], axis=-1)[..., None]  # S,R,2,1
        mixture = pm.math.logsumexp(log_pv + log_truth, axis=2, keepdims=False)
        pm.CustomDist("test", mixture, logp=_count_logp, observed=test, dims=TEST_DIMS)
        # Random design: a labelled item's truth was drawn with P(t) = θ^t (1 − θ)^(1 − t).
        joint = log_pv + log_truth if config["design"] == "random" else log_pv
        pm.CustomDist("labelled", joint, logp=_count_logp, observed=labelled, dims=LABELLED_DIMS)
    return model


def build_jury_model(
    counts: JuryCounts,
    *,
    calibration: str = "shared",
    pool_judges: bool = False,
    dependence: str | None = None,
    priors: Priors | None = None,
    judge_better_than_chance: bool | None = None,
) -> pm.Model:
    """Build the PyMC model of several judges on the same items (see ``models/jury.md``).

    Parameters are those of :func:`jury_model_config`.

    Returns
    -------
    pymc.Model
        Dims ``system``, ``stratum``, ``judge``, ``pattern``, ``truth``; ``theta``, ``q0``,
        ``q1``, ``youden`` named as in the single-judge models; the observed ``test`` and
        ``labelled`` pattern counts.

    Examples
    --------
    >>> counts = JuryCounts.from_counts(["111", "110", "000"], [40, 5, 20],
    ...                                 labelled=[[0, 1, 9], [8, 1, 0]], judges=["a", "b", "c"])
    >>> model = build_jury_model(counts, dependence="item")
    >>> model.named_vars_to_dims["item_effect"]
    ('truth',)
    """
    config = jury_model_config(
        counts, calibration, pool_judges, dependence, priors, judge_better_than_chance
    )
    return build_jury_from_config(counts, config)


def _initial_points(model: pm.Model, config: dict) -> dict[str, np.ndarray]:
    """Return starting values with every judge better than chance (q1 = 0.75, q0 = 0.875).

    Inside J > 0 for the better-than-chance restriction; without it, the start of every chain
    in the labelled mode. The latent-class posterior has a mirror mode (truth flipped, every
    judge worse than chance) that the labelled items make improbable but not impossible: on
    LLMBar/Natural with 20 labels, chains started at random settled in it half the time
    (r_hat 1.73), all four started here agree (models/jury.md, "Label switching").
    """
    del config  # the same start serves both, kept in the signature for the cache key's sake
    shape = tuple(model["q1"].shape.eval())
    return {"q1": np.full(shape, 0.75), "q0": np.full(shape, 0.875)}


# --------------------------------------------------------------------- pattern probabilities


def pattern_log_probabilities(
    verdicts, q0, q1, item_effect=None, *, step: float = QUADRATURE_STEP
) -> np.ndarray:
    """Return log P(v | t) of each verdict pattern under the jury model (numpy; batched).

    Parameters
    ----------
    verdicts : array_like of int, shape (P, J)
        1 judged correct, 0 judged incorrect, -1 no verdict (contributes nothing).
    q0, q1 : array_like, shape (..., J)
        Each judge's specificity and sensitivity (marginal over the item effect).
    item_effect : array_like, shape (..., 2), optional
        b_0, b_1 of ``dependence="item"``; None: conditionally independent judges.
    step : float, default QUADRATURE_STEP
        Step of the trapezoid grid of the item effect's integral (:func:`quadrature_rule`).

    Returns
    -------
    numpy.ndarray, shape (..., 2, P)
        Row t holds log P(v | t).

    Examples
    --------
    >>> v = np.array([[1, 1], [0, -1]])
    >>> np.exp(pattern_log_probabilities(v, [0.8, 0.9], [0.7, 0.6])).round(3).tolist()
    [[0.02, 0.8], [0.42, 0.3]]
    >>> lp = pattern_log_probabilities(v, [0.8, 0.9], [0.7, 0.6], item_effect=[1.0, 1.0])
    >>> np.exp(lp[:, 1]).round(3).tolist()  # one judge: the marginal rates are kept
    [0.8, 0.3]
    """
    v = np.asarray(verdicts)
    s0, s1 = (v == 0).astype(float), (v == 1).astype(float)
    q0, q1 = np.asarray(q0, dtype=float), np.asarray(q1, dtype=float)
    if item_effect is None:
        with np.errstate(divide="ignore"):
            lp0 = np.log(q0) @ s0.T + np.log1p(-q0) @ s1.T
            lp1 = np.log(q1) @ s1.T + np.log1p(-q1) @ s0.T
        return np.stack([lp0, lp1], axis=-2)
    b = np.asarray(item_effect, dtype=float)
    x, logw = quadrature_rule(step)
    scale = np.sqrt(1 + b**2)
    offsets = (-ndtri(q0) * scale[..., 0:1], ndtri(q1) * scale[..., 1:2])
    out = []
    for t, a in enumerate(offsets):
        eta = a[..., None] + b[..., t, None, None] * x  # (..., J, K)
        lp = np.einsum("...jk,pj->...pk", log_ndtr(eta), s1)
        lp = lp + np.einsum("...jk,pj->...pk", log_ndtr(-eta), s0)
        out.append(logsumexp(lp + logw, axis=-1))
    return np.stack(out, axis=-2)


# ------------------------------------------------------------------------------- fitting


def _structure_key(counts: JuryCounts, config: dict) -> str:
    # repr, not str: labels 1 and "1" must not share a compiled model (its coords).
    key = {
        "model": config,
        "system": [repr(s) for s in counts.systems],
        "stratum": [repr(s) for s in counts.strata],
        "judge": [repr(j) for j in counts.judges],
        "pattern": counts.patterns,
    }
    return json.dumps(key, sort_keys=True)


def _compile(model: pm.Model, counts: JuryCounts, config: dict):
    """Return the nutpie-compiled model, cached by structure; a cached one gets the new data."""
    import nutpie

    key = _structure_key(counts, config)
    compiled = _COMPILED.get(key)
    if compiled is None:
        with quiet_pymc():
            compiled = nutpie.compile_pymc_model(
                model, initial_points=_initial_points(model, config) or None
            )
        _COMPILED[key] = compiled
        while len(_COMPILED) > _COMPILED_MAX:
            _COMPILED.popitem(last=False)
        return compiled
    _COMPILED.move_to_end(key)
    return compiled.with_data(**{v.name: v.get_value() for v in model.data_vars})


def _observed(counts: JuryCounts) -> xr.Dataset:
    return xr.Dataset({"test": counts.test, "labelled": counts.labelled}).drop_vars(
        "verdict", errors="ignore"
    )


def warn_unlabelled(counts: JuryCounts, config: dict, stacklevel: int = 2) -> None:
    """Warn (:class:`BayesJudgeWarning`) that a jury without labelled items rests on a prior.

    Examples
    --------
    >>> counts = JuryCounts.from_counts(["111", "000"], [30, 20], judges=["a", "b", "c"])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_unlabelled(counts, jury_model_config(counts))
    >>> caught[0].category.__name__
    'BayesJudgeWarning'
    """
    if int(counts.labelled.sum()) > 0:
        return
    resolved = (
        "judge_better_than_chance (q0 + q1 > 1 for every judge) resolves"
        if config["judge_better_than_chance"]
        else "only the logit-mean prior (Priors.q0_logit_mean, q1_logit_mean) favours"
    )
    warnings.warn(
        f"No labelled items: the {counts.sizes[JUDGE]} judges identify the model (Hui & "
        f"Walter) only up to label switching, which {resolved}. Its θ is anchored only by "
        f"that better-than-chance prior; label some items to check it.",
        BayesJudgeWarning,
        stacklevel=stacklevel + 1,
    )


def fit_jury(
    counts: JuryCounts,
    *,
    calibration: str = "shared",
    pool_judges: bool = False,
    dependence: str | None = None,
    priors: Priors | None = None,
    judge_better_than_chance: bool | None = None,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    random_seed: int | None = None,
    target_accept: float | None = None,
    progressbar: bool | None = None,
) -> JuryFit:
    """Fit the joint model of several judges on the same items by NUTS (nutpie).

    Parameters
    ----------
    counts : JuryCounts
        Verdict patterns of the test and labelled items per (system, stratum).
    calibration, pool_judges, dependence, priors, judge_better_than_chance
        The model, as in :func:`jury_model_config` (default: one q0, q1 per judge and
        stratum shared by all systems, conditionally independent judges).
    draws, tune, chains : int, default 1000, 1000, 4
        Draws kept per chain, tuning steps per chain, chains.
    random_seed : int, optional
        Seed of the sampler (drawn and stored when None).
    target_accept : float, optional
        NUTS target acceptance; default 0.9 (0.99 with ``calibration="hierarchical"`` or
        ``pool_judges=True``, whose logit scales make a funnel).
    progressbar : bool, optional
        Show nutpie's progress bar (default: in a terminal or notebook, not under pytest/CI).

    Returns
    -------
    JuryFit

    Raises
    ------
    ValueError
        For a bad option or counts the model cannot identify (see :func:`jury_model_config`),
        before anything is compiled.

    Warns
    -----
    BayesJudgeWarning
        Without labelled items: the latent classes are then anchored only by the
        better-than-chance prior (label switching is otherwise unresolved).
    ConvergenceWarning
        On divergences, r_hat > 1.01 or bulk/tail ESS < 400 (with the numbers and advice).

    Examples
    --------
    >>> counts = JuryCounts.from_counts(["111", "110", "000"], [40, 5, 20],
    ...                                 labelled=[[0, 1, 9], [8, 1, 0]], judges=["a", "b", "c"])
    >>> fit_jury(counts, dependence="items")
    Traceback (most recent call last):
    ValueError: dependence must be one of [None, 'item']; got 'items'.

    A fit (``fit_jury(counts, random_seed=1)``) gives ``result.summary()["theta_ci"]``, the
    judges' ``q0``/``q1`` and ``result.ppc().table()``.
    """
    config = jury_model_config(
        counts, calibration, pool_judges, dependence, priors, judge_better_than_chance
    )
    funnel = calibration == "hierarchical" or config["pool_judges"]
    settings = {
        "draws": check_int("draws", draws, 1),
        "tune": check_int("tune", tune, 0),
        "chains": check_int("chains", chains, 1),
        "random_seed": check_seed(random_seed),
        "target_accept": check_open_unit(
            "target_accept", (0.99 if funnel else 0.9) if target_accept is None else target_accept,
            "e.g. 0.9",
        ),
    }  # fmt: skip
    progress = show_progress(progressbar, name="progressbar")
    warn_unlabelled(counts, config, stacklevel=3)
    model = build_jury_from_config(counts, config)
    tree = sample_nutpie(_compile(model, counts, config), settings, progress)
    tree["observed_data"] = xr.DataTree(_observed(counts))
    tree["counts"] = xr.DataTree(counts.dataset)
    result = JuryFit(tree, {**config, **settings}, model)
    result.check_sampling(stacklevel=3)
    return result


# --------------------------------------------------------------------- the agreement check


def _masks(verdicts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every complete pattern of each observed missingness mask.

    Returns the enumerated patterns V (Q, J), the mask of each of them (Q,) and the mask of
    each observed pattern (P,): the replicates keep each item's set of judges.
    """
    seen = verdicts >= 0
    masks, observed_mask = np.unique(seen, axis=0, return_inverse=True)
    rows, which = [], []
    for m, mask in enumerate(masks):
        judges = np.flatnonzero(mask)
        grid = np.array(np.meshgrid(*[[1, 0]] * judges.size, indexing="ij")).reshape(
            judges.size, -1
        )
        block = np.full((grid.shape[1], verdicts.shape[1]), -1)
        block[:, judges] = grid.T
        rows.append(block)
        which.extend([m] * grid.shape[1])
    return np.concatenate(rows), np.asarray(which), np.asarray(observed_mask).ravel()


def _pair_cells(counts: np.ndarray, verdicts: np.ndarray, a: int, b: int) -> np.ndarray:
    """Return the 2×2 table (..., 2, 2) of judges a, b from pattern counts (..., Q)."""
    cells = [
        [counts @ ((verdicts[:, a] == x) & (verdicts[:, b] == y)) for y in (0, 1)] for x in (0, 1)
    ]
    return np.moveaxis(np.asarray(cells, dtype=float), (0, 1), (-2, -1))


def _agreement_stats(cells: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Items, agreement share and log odds ratio (with ½ added to every cell) of 2×2 tables."""
    n = cells.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        agree = (cells[..., 0, 0] + cells[..., 1, 1]) / n
        c = cells + 0.5
        lor = np.log(c[..., 1, 1] * c[..., 0, 0] / (c[..., 1, 0] * c[..., 0, 1]))
    lor = np.where(n > 0, lor, np.nan)
    return n, agree, lor


def _two_sided_mid_p(rep: xr.DataArray, obs: xr.DataArray) -> xr.DataArray:
    sample = ("chain", "draw")
    upper = (rep > obs).mean(sample) + 0.5 * (rep == obs).mean(sample)
    p = np.minimum(1.0, 2 * np.minimum(upper, 1 - upper))
    return p.where(obs.notnull())


@dataclass(frozen=True)
class JuryPosteriorPredictiveCheck:
    """Pairwise agreement of the judges, observed and replicated from the posterior.

    Conditionally independent judges agree, given θ and their q's, as much as the model
    implies: on labelled items of one truth their 2×2 table has an odds ratio of 1, on the
    test items the odds ratio that the mixture over the truth implies. Judges that share an
    item's difficulty (positively dependent) agree more: an observed log odds ratio above its
    replicates. With 3 judges the independent model reproduces any test-item table (it is
    saturated: 7 parameters, 7 pattern frequencies), so the labelled items carry the check.

    Attributes
    ----------
    observed : xarray.Dataset
        ``items_graded`` (items both judges graded), ``agreement`` (share with equal
        verdicts) and ``log_odds_ratio`` (of the 2×2 table, ½ added to every cell); dims
        ``items`` (``"test"``, ``"labelled_incorrect"``, ``"labelled_correct"``), ``pair``
        (``"a - b"``, coords ``judge_a``, ``judge_b``), ``system``, ``stratum``. NaN where a
        pair graded no item of the set.
    replicated : xarray.Dataset
        ``agreement`` and ``log_odds_ratio`` of one replicate per posterior draw (dims
        ``chain``, ``draw`` added): each group's items redrawn per missingness mask (the same
        number of items per set of judges), test items from P(v) = θ P(v | 1) + (1 − θ)
        P(v | 0), labelled items of truth t from P(v | t).
    p_value : xarray.Dataset
        Per pair: two-sided mid-p values, 2 min(u, 1 − u) with u = P(rep > obs) +
        P(rep = obs)/2.
    pooled : xarray.Dataset
        The flag's statistics, dim ``check`` (``"test"``: the mean log odds ratio over the
        pairs on the test items; ``"labelled"``: over the pairs and both truths of the
        labelled items, both with two-sided mid-p values; ``"patterns"``: the G² of the test
        items' pattern counts against each draw's expectation, observed (averaged over the
        draws) and replicated, with the one-sided p-value P(G²_rep ≥ G²_obs)):
        ``observed``, ``replicated_mean`` and ``p_value``.
    flagged : xarray.DataArray
        Per (system, stratum): some check's p-value < ``alpha`` / 3 (Bonferroni over the
        three checks).
    alpha : float
    random_seed : int
    """

    observed: xr.Dataset
    replicated: xr.Dataset
    p_value: xr.Dataset
    pooled: xr.Dataset
    flagged: xr.DataArray
    alpha: float
    random_seed: int

    @property
    def message(self) -> str:
        """What the check found and what to do."""
        groups = [
            f"{s}/{r}"
            for s in self.flagged["system"].values
            for r in self.flagged["stratum"].values
            if bool(self.flagged.sel(system=s, stratum=r))
        ]
        if not groups:
            return (
                "The judges' agreement is what conditionally independent judges would show (no "
                f"check's p-value below {self.alpha:g} / {self.pooled.sizes['check']}: the mean "
                "log odds ratio of the pairs on the test and on the labelled items, the fit of "
                "the test patterns)."
            )
        return (
            f"The judges' pairwise agreement departs from conditional independence in "
            f"{len(groups)} group(s) ({', '.join(groups[:5])}): they share item difficulty, so "
            f"the independent model overstates how much they confirm each other and its "
            f"interval of θ is too narrow. Refit with dependence='item'."
        )

    def table(self) -> pd.DataFrame:
        """One row per item set, pair and group: observed, replicated mean and p-values.

        ``flagged`` is the group's flag (pooled over the pairs, see ``pooled``).
        """
        rep = self.replicated.mean(("chain", "draw"))
        frame = xr.Dataset(
            {
                "items_graded": self.observed["items_graded"],
                "agreement": self.observed["agreement"],
                "agreement_replicated": rep["agreement"],
                "agreement_p": self.p_value["agreement"],
                "log_odds_ratio": self.observed["log_odds_ratio"],
                "log_odds_ratio_replicated": rep["log_odds_ratio"],
                "log_odds_ratio_p": self.p_value["log_odds_ratio"],
            }
        )
        frame["flagged"] = self.flagged.broadcast_like(frame["agreement"])
        return frame.to_dataframe().reset_index()


def _posterior_arrays(posterior: xr.Dataset):
    """θ (chain, draw, S, R), q0, q1 (chain, draw, S, R, J) and b (chain, draw, 1, 1, 2)."""
    order = ("chain", "draw", *DIMS)
    theta = posterior["theta"].transpose(*order)
    q0, q1 = (
        posterior[n].broadcast_like(theta).transpose(*order, JUDGE).values for n in ("q0", "q1")
    )
    b = None
    if "item_effect" in posterior:
        b = posterior["item_effect"].transpose("chain", "draw", TRUTH).values[:, :, None, None]
    return theta, q0, q1, b


def _replicate(rng, prob: np.ndarray, counts: np.ndarray, enum_mask, observed_mask) -> np.ndarray:
    """Pattern counts (D, S, R, Q) drawn per missingness mask with the observed totals."""
    rep = np.zeros(prob.shape, dtype=np.int64)
    for m in range(int(enum_mask.max()) + 1):
        cols = np.flatnonzero(enum_mask == m)
        n = np.broadcast_to(counts[..., observed_mask == m].sum(-1), prob.shape[:-1])
        p = prob[..., cols] / prob[..., cols].sum(-1, keepdims=True)
        rep[..., cols] = rng.multinomial(n, p)
    return rep


def _agreement_check(
    posterior: xr.Dataset, counts: JuryCounts, *, random_seed: int, step: float = QUADRATURE_STEP
) -> JuryPosteriorPredictiveCheck:
    """Run the posterior predictive check of pairwise agreement (see :meth:`JuryFit.ppc`)."""
    rng = np.random.default_rng(np.random.SeedSequence(random_seed, spawn_key=(3,)))
    theta, q0, q1, b = _posterior_arrays(posterior)
    enumerated, enum_mask, observed_mask = _masks(counts.verdicts)
    lp = pattern_log_probabilities(enumerated, q0, q1, b, step=step)
    th = theta.values[..., None]
    with np.errstate(divide="ignore"):
        mixture = np.logaddexp(np.log1p(-th) + lp[..., 0, :], np.log(th) + lp[..., 1, :])
    labelled = counts.labelled.transpose(*DIMS, TRUTH, JURY_PATTERN).values
    # The test items from P(v); the labelled items of each truth t from P(v | t).
    sets = {
        "test": (np.exp(mixture), counts.test.transpose(*TEST_DIMS).values),
        "labelled_incorrect": (np.exp(lp[..., 0, :]), labelled[..., 0, :]),
        "labelled_correct": (np.exp(lp[..., 1, :]), labelled[..., 1, :]),
    }
    judges = counts.judges
    pairs = list(combinations(range(len(judges)), 2))
    obs_stats, rep_stats, fit_check = [], [], None
    for name, (prob, observed) in sets.items():
        rep = _replicate(rng, prob, observed, enum_mask, observed_mask)
        if name == "test":
            fit_check = _pattern_fit(counts.verdicts, enumerated, enum_mask, prob, observed, rep)
        obs_stats.append(
            [_agreement_stats(_pair_cells(observed, counts.verdicts, a, c)) for a, c in pairs]
        )
        rep_stats.append([_agreement_stats(_pair_cells(rep, enumerated, a, c)) for a, c in pairs])
    coords = {
        "items": list(sets),
        "pair": [pair_label(judges[a], judges[c]) for a, c in pairs],
        "judge_a": ("pair", [judges[a] for a, _ in pairs]),
        "judge_b": ("pair", [judges[c] for _, c in pairs]),
        "system": counts.systems,
        "stratum": counts.strata,
    }
    names = ("items_graded", "agreement", "log_odds_ratio")
    observed = xr.Dataset(
        {
            k: (("items", "pair", *DIMS), np.array([[s[i] for s in row] for row in obs_stats]))
            for i, k in enumerate(names)
        },
        coords=coords,
    )
    dims = ("items", "pair", "chain", "draw", *DIMS)
    replicated = xr.Dataset(
        {
            k: (dims, np.array([[s[i] for s in row] for row in rep_stats]))
            for i, k in enumerate(names)
            if i > 0
        },
        coords={**coords, "chain": theta["chain"].values, "draw": theta["draw"].values},
    ).transpose("chain", "draw", "items", "pair", *DIMS)
    p_value = xr.Dataset({k: _two_sided_mid_p(replicated[k], observed[k]) for k in names[1:]})
    pooled = _pooled(observed["log_odds_ratio"], replicated["log_odds_ratio"])
    g_obs, g_rep = (
        xr.DataArray(g, dims=("chain", "draw", *DIMS), coords={"system": counts.systems,
                                                               "stratum": counts.strata})
        for g in fit_check
    )  # fmt: skip
    patterns = xr.Dataset(
        {
            "observed": g_obs.mean(("chain", "draw")),
            "replicated_mean": g_rep.mean(("chain", "draw")),
            # one-sided: a misfit makes the observed counts fit worse than the replicates
            "p_value": (g_rep >= g_obs).mean(("chain", "draw")),
        }
    ).expand_dims(check=["patterns"])
    pooled = xr.concat([pooled, patterns], "check")
    flagged = (pooled["p_value"] < PPC_ALPHA / pooled.sizes["check"]).any("check")
    return JuryPosteriorPredictiveCheck(
        observed, replicated, p_value, pooled, flagged, PPC_ALPHA, int(random_seed)
    )


def _pattern_fit(verdicts, enumerated, enum_mask, prob, observed, rep):
    """G² of the test items' pattern counts against their posterior expectation, per draw.

    Returns (observed, replicated) G² of shape (chain, draw, S, R): the discrepancy of the
    observed counts and of each draw's replicate from that draw's expected counts (the
    patterns of each missingness mask with that mask's item total). With 3 complete judges the
    independent model is saturated and this check has no power; with more judges (or a
    missing-entry structure) the test patterns alone can reveal dependent judges.
    """
    index = {tuple(row): q for q, row in enumerate(enumerated.tolist())}
    on_enum = np.zeros((*observed.shape[:-1], len(enumerated)))
    for p, row in enumerate(verdicts.tolist()):
        on_enum[..., index[tuple(row)]] += observed[..., p]
    expected = np.zeros(prob.shape)
    for m in range(int(enum_mask.max()) + 1):
        cols = np.flatnonzero(enum_mask == m)
        share = prob[..., cols] / prob[..., cols].sum(-1, keepdims=True)
        expected[..., cols] = share * on_enum[..., cols].sum(-1, keepdims=True)

    def g2(y):
        with np.errstate(divide="ignore", invalid="ignore"):
            return 2 * np.where(y > 0, y * np.log(y / expected), 0.0).sum(-1)

    return g2(np.broadcast_to(on_enum, prob.shape)), g2(rep)


def _pooled(observed: xr.DataArray, replicated: xr.DataArray) -> xr.Dataset:
    """Mean log odds ratio over the pairs: of the test items, and of the labelled items.

    A shared item effect raises every pair's odds ratio at once, so the mean over the pairs
    (and over the two truths of the labelled items) is a more powerful statistic than the
    pairs one by one. NaN (no items) are skipped; a group without any is not flagged.
    """
    labelled = ["labelled_incorrect", "labelled_correct"]
    parts = {
        "test": (("pair",), dict(items="test")),
        "labelled": (("items", "pair"), dict(items=labelled)),
    }
    obs, rep = [], []
    for dims, where in parts.values():
        obs.append(observed.sel(where).mean(dims, skipna=True).drop_vars("items", errors="ignore"))
        rep.append(
            replicated.sel(where).mean(dims, skipna=True).drop_vars("items", errors="ignore")
        )
    obs = xr.concat(obs, "check").assign_coords(check=list(parts))
    rep = xr.concat(rep, "check").assign_coords(check=list(parts))
    return xr.Dataset(
        {
            "observed": obs,
            "replicated_mean": rep.mean(("chain", "draw")),
            "p_value": _two_sided_mid_p(rep, obs),
        }
    )


# ------------------------------------------------------------------------------ the result


_MODEL_KEYS = (
    "kind",
    "calibration",
    "pool_judges",
    "dependence",
    "priors",
    "judge_better_than_chance",
    "design",
    "quadrature_step",
    "item_effect_scale",
)


class JuryFit:
    """A fitted jury model: the posterior as an :class:`xarray.DataTree` and its settings.

    Attributes
    ----------
    tree : xarray.DataTree
        Groups ``posterior``, ``sample_stats``, ``observed_data`` (``test``, ``labelled``)
        and ``counts`` (the :class:`JuryCounts` dataset); root attrs ``bayesjudge_config``
        (JSON) and ``bayesjudge_config_hash``.
    config : dict
        :func:`jury_model_config` plus draws, tune, chains, random_seed, target_accept.
    """

    def __init__(self, tree: xr.DataTree, config: dict, model: pm.Model | None = None) -> None:
        self.tree = tree
        self.config = dict(config)
        self._model = model
        seed = self.config["random_seed"]
        self.tree.attrs.update(
            {
                "bayesjudge_version": __version__,
                "bayesjudge_config": json.dumps(self.config, sort_keys=True),
                "bayesjudge_config_hash": config_hash(self.config),
                "random_seed": seed if seed < 2**63 else str(seed),
                "calibration": self.config["calibration"],
                "dependence": str(self.config["dependence"]),
                "design": self.config["design"],
            }
        )

    @property
    def posterior(self) -> xr.Dataset:
        """The posterior draws (dims chain, draw, system, stratum, judge, ...)."""
        return self.tree["posterior"].dataset

    @property
    def counts(self) -> JuryCounts:
        """The fitted counts."""
        return JuryCounts(self.tree["counts"].dataset)

    @property
    def model(self) -> pm.Model:
        """The PyMC model (rebuilt from the stored counts after :func:`load_jury`)."""
        if self._model is None:
            self._model = build_jury_from_config(
                self.counts, {k: self.config[k] for k in _MODEL_KEYS}
            )
        return self._model

    def __repr__(self) -> str:
        c, s = self.config, self.counts.sizes
        return (
            f"<bayesjudge.JuryFit calibration={c['calibration']!r} "
            f"dependence={c['dependence']!r} pool_judges={c['pool_judges']} "
            f"judges={s[JUDGE]} systems={s['system']} strata={s['stratum']} "
            f"design={c['design']!r} draws={c['chains']}×{c['draws']} seed={c['random_seed']}>"
        )

    def report(self, out_dir=None, **options):
        """Build the report of the jury with this fit: Markdown and a self-contained HTML page.

        Parameters
        ----------
        out_dir : str or path-like, optional
            Folder for the report's files; nothing is written when None.
        **options
            Passed to :func:`bayesjudge.report.jury.build_jury_report` (``alpha``,
            ``random_seed``, ``ppc``, ``warn``, ``title``).

        Returns
        -------
        bayesjudge.Report
            Sections, tables (``ppc``: :meth:`JuryPosteriorPredictiveCheck.table`), figures;
            the written paths in ``.paths``.

        Examples
        --------
        A fit (``fit = bj.fit(jury_counts)``) gives ``fit.report("my-report", random_seed=1)``.
        """
        report = build_jury_report(fit=self, **options)
        report.paths = report.save(out_dir) if out_dir is not None else {}
        return report

    # ------------------------------------------------------------ diagnostics

    def _reported(self) -> list[str]:
        return [v for v in REPORTED if v in self.posterior.data_vars]

    def diagnostics(self) -> dict:
        """Divergences, the largest r_hat and the smallest bulk/tail ESS of the parameters."""
        return sampling_diagnostics(
            self.posterior[self._reported()], self.tree["sample_stats"].dataset
        )

    def check_sampling(self, stacklevel: int = 2) -> dict:
        """Warn (:class:`ConvergenceWarning`) with numbers and advice on bad diagnostics."""
        advice = (
            "without enough labelled items the chains may sit in different latent classes "
            "(label switching): label items, or use judge_better_than_chance=True"
        )
        return warn_sampling(self.diagnostics(), self.config, advice, stacklevel + 1)

    # ------------------------------------------------------------ summaries

    def summary(self, ci_prob: float = 0.95, var_names=None) -> xr.Dataset:
        """Posterior mean, sd, median, equal-tailed interval, r_hat and bulk ESS.

        Parameters
        ----------
        ci_prob : float, default 0.95
            Probability of the equal-tailed intervals.
        var_names : str or sequence of str, optional
            Posterior variables to summarise (as ``Fit.summary(var_names=...)``); default the
            reported ones listed below, those the model has.

        Returns
        -------
        xarray.Dataset
            ``theta`` (posterior mean; dims system, stratum), ``theta_sd``, ``theta_median``,
            ``theta_ci`` (+ ``ci_bound`` = lower, upper), ``theta_r_hat``,
            ``theta_ess_bulk``; the same for ``q0``, ``q1``, ``youden`` (judge and their
            group dims) and, with ``dependence="item"``, ``item_effect`` (truth). Attrs
            ``ci_kind="eti"``, ``ci_prob``, ``calibration``, ``dependence``, ``design``.
        """
        ci_prob = check_open_unit("ci_prob", ci_prob, "e.g. 0.95 for a 95 % interval")
        names = summary_names(var_names, list(self.posterior.data_vars), self._reported())
        out = {}
        sample = ("chain", "draw")
        for name in names:
            draws = self.posterior[name]
            single = draws.to_dataset(name=name)
            out[name] = draws.mean(sample)
            out[f"{name}_sd"] = draws.std(sample, ddof=1)
            out[f"{name}_median"] = draws.median(sample)
            out[f"{name}_ci"] = eti(draws, ci_prob)
            out[f"{name}_r_hat"] = az.rhat(single)[name]
            out[f"{name}_ess_bulk"] = az.ess(single, method="bulk")[name]
        attrs = {
            "ci_kind": "eti",
            "ci_prob": ci_prob,
            "calibration": self.config["calibration"],
            "dependence": str(self.config["dependence"]),
            "design": self.config["design"],
        }
        return xr.Dataset(out, attrs=attrs)

    def compare(self, dim: str = "system", ci_prob: float = 0.95) -> xr.Dataset:
        """Posterior of every pairwise difference of θ along ``dim``.

        Returns
        -------
        xarray.Dataset
            Dim ``pair`` (labels ``"a - b"``, coords ``first``/``second``) and the other
            group dim; ``difference`` (draws), ``mean``, ``median``, ``sd``, ``ci`` (along
            ``ci_bound``) and ``prob_greater`` = P(θ_a > θ_b). Attrs ``ci_kind="eti"``,
            ``ci_prob``, ``var="theta"``, ``dim``.
        """
        ci_prob = check_open_unit("ci_prob", ci_prob, "e.g. 0.95 for a 95 % interval")
        if dim not in DIMS:
            raise ValueError(f"dim must be one of {list(DIMS)}; got {dim!r}.")
        draws = self.posterior["theta"]
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
        return xr.Dataset(
            {
                "difference": diff,
                "mean": diff.mean(sample),
                "median": diff.median(sample),
                "sd": diff.std(sample, ddof=1),
                "ci": eti(diff, ci_prob),
                "prob_greater": (diff > 0).mean(sample),
            },
            attrs={"ci_kind": "eti", "ci_prob": ci_prob, "var": "theta", "dim": dim},
        )

    def ppc(self, random_seed: int | None = None) -> JuryPosteriorPredictiveCheck:
        """Posterior predictive check of the judges' pairwise agreement (test and labelled items).

        One replicate per posterior draw: each group's test items are redrawn per
        missingness mask (the same number of items graded by each set of judges) from the
        draw's pattern probabilities P(v) = θ P(v | 1) + (1 − θ) P(v | 0); for every pair of
        judges the replicated agreement share and log odds ratio are compared with the
        observed ones; the same for the labelled items of each truth, redrawn from P(v | t).
        A group is flagged when the two-sided p-value of the mean log odds ratio over the
        pairs, on the test items or on the labelled items, is below 0.05 / 2; then refit
        with ``dependence="item"`` (see ``message``).

        Returns
        -------
        JuryPosteriorPredictiveCheck
        """
        seed = check_seed(random_seed)
        step = self.config.get("quadrature_step") or QUADRATURE_STEP
        return _agreement_check(self.posterior, self.counts, random_seed=seed, step=step)

    # ------------------------------------------------------------ persistence

    def save(self, path) -> Path:
        """Write the fit to a netCDF file, atomically (:func:`bayesjudge.load` reads it).

        A SHA-256 digest of the content is stored; loading refuses a file changed since.
        """
        path = check_output_file(path, what="fit file")
        tree = self.tree.copy()
        stats = tree["sample_stats"].dataset
        # netCDF cannot store object arrays (nutpie's divergence messages).
        drop = [v for v in stats.data_vars if stats[v].dtype == object]
        tree["sample_stats"] = xr.DataTree(stats.drop_vars(drop))
        tree.attrs["format"] = JURY_FORMAT
        tree.attrs.pop(DIGEST_ATTR, None)
        tree.attrs[DIGEST_ATTR] = content_digest(tree)
        with atomic_path(path) as tmp:
            tree.to_netcdf(tmp, engine="h5netcdf")
        return path


def load_jury(path) -> JuryFit:
    """Read a fit written by :meth:`JuryFit.save`; its configuration and content are checked.

    Raises
    ------
    FileNotFoundError
        If there is no file at ``path``.
    ValueError
        Naming the path and what is wrong: unreadable, not a jury fit, a configuration that
        does not match its hash, or content that does not match the digest stored at save.

    Examples
    --------
    >>> load_jury("no-such-fit.nc")
    Traceback (most recent call last):
    ...
    FileNotFoundError: No jury fit file at 'no-such-fit.nc'.
    """
    tree, config = read_fit_tree(path, fmt=JURY_FORMAT, what="jury fit", saver="JuryFit.save")
    return JuryFit(tree, config)
