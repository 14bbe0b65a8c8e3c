"""Several judges whose errors depend on the item: the Bayesian covariate model (PyMC).

The Bayesian twin of :func:`bayesjudge.jury_estimate.jury_covariate_estimate`. Every verdict
row r (item i, judge j, standardised covariates x_r) says "correct" with probability

    P(v_r = 1 | Z_i = t) = expit(β[j, t, 0] + β[j, t, 1:] · x_r),

the verdicts of an item independent given its truth Z_i ~ Bernoulli(θ_g) (latent for
unlabelled items, known for labelled ones), θ per group g = (system, stratum). The truth is
summed out item by item in one vectorised ``pm.Potential`` (segment sums over the rows). The
model card is ``models/jury-covariates.md``; :func:`fit_jury_covariates` fits it with nutpie
and returns a :class:`JuryCovariateFit`.

With theta covariates (``JuryItems.from_frames(..., theta_covariates=)``) the truth depends on
item covariates w_i too: P(Z_i = 1) = expit(α_g + δ · w_i) (w standardised), α_g ~
Normal(0, THETA_INTERCEPT_SD), δ ~ Normal(0, SLOPE_SD); ``theta`` is then the Deterministic
mean of that probability over the group's test items (all its items under the random design).
"""

from __future__ import annotations

import json
import warnings
from collections import OrderedDict
from pathlib import Path

import arviz as az
import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr
from scipy.special import expit

from bayesjudge._io import atomic_path, check_output_file
from bayesjudge._progress import show_progress
from bayesjudge._version import __version__
from bayesjudge.core._validation import check_open_unit
from bayesjudge.core.jury_covariates import covariate_levels
from bayesjudge.data import DIMS
from bayesjudge.data.jury import JUDGE
from bayesjudge.data.jury_items import COVARIATE, ITEM, ROW, THETA_COVARIATE, JuryItems
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
    warn_sampling,
)
from bayesjudge.models.storage import DIGEST_ATTR, content_digest
from bayesjudge.warnings import BayesJudgeWarning

__all__ = [
    "JURY_COVARIATES_FORMAT",
    "SLOPE_POOL_SCALE",
    "SLOPE_SD",
    "THETA_INTERCEPT_SD",
    "JuryCovariateFit",
    "build_jury_covariate_model",
    "fit_jury_covariates",
    "jury_covariate_config",
    "load_jury_covariates",
    "standardised_covariates",
]

#: Normal(0, SLOPE_SD) prior of every slope (per standard deviation of its covariate); with
#: ``pool_judges=True`` the prior of the judges' common mean slope.
SLOPE_SD = 1.0
#: Normal(0, THETA_INTERCEPT_SD) prior of each group's logit P(Z = 1) at the mean item, with
#: theta covariates (about uniform on θ between 0.05 and 0.95).
THETA_INTERCEPT_SD = 1.5
#: HalfNormal scale of the judges' spread of slopes around their mean (``pool_judges=True``).
SLOPE_POOL_SCALE = 0.5
#: The ``format`` attr of a saved fit.
JURY_COVARIATES_FORMAT = "bayesjudge-jury-covariates-fit-1"
TRUTH = "truth"
TERM = "term"
REPORTED = ("theta", "coef", "theta_slope")
_COMPILED: OrderedDict[str, object] = OrderedDict()
_COMPILED_MAX = 8
_MODEL_KEYS = ("kind", "pool_judges", "priors", "judge_better_than_chance", "design",
               "covariates", "center", "scale", "slope_sd", "slope_pool_scale",
               "theta_covariates", "theta_center", "theta_scale",
               "theta_intercept_sd")  # fmt: skip
#: What a fit saved before theta covariates lacks (the constant-θ model).
_NO_THETA_COVARIATES = {"theta_covariates": [], "theta_center": [], "theta_scale": [],
                        "theta_intercept_sd": THETA_INTERCEPT_SD}  # fmt: skip


# ----------------------------------------------------------------------------- configuration


def _check_items(items) -> JuryItems:
    if not isinstance(items, JuryItems):
        raise ValueError(
            f"items must be a JuryItems (verdict rows with covariates: JuryItems.from_frames("
            f"..., covariates=[...])); got {type(items).__name__}. For verdict patterns "
            f"without covariates (a JuryCounts) use bayesjudge.models.jury.fit_jury."
        )
    if items.sizes[COVARIATE] == 0:
        raise ValueError(
            "items has no covariates: without them the covariate model is the pattern model "
            "of Dawid and Skene. Fit items.counts() with bayesjudge.models.jury.fit_jury, or "
            "read the rows with JuryItems.from_frames(..., covariates=[...])."
        )
    if "intercept" in items.covariate_names:
        raise ValueError(
            "A covariate is named 'intercept', the name of the coefficients' constant term; "
            "rename that column."
        )
    return items


def standardised_covariates(items: JuryItems) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Centred and scaled covariates (R, p), their centre and scale (as the closed form).

    A constant covariate keeps scale 1 (its slope is then informed by the prior alone).

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"item": [1, 1, 2], "grader": ["a", "b", "a"],
    ...                      "judge": [1, 0, 1], "first": [0.0, 2.0, 4.0]})
    >>> x, center, scale = standardised_covariates(
    ...     JuryItems.from_frames(rows, judges="grader", item="item", covariates="first"))
    >>> center.tolist(), np.round(scale, 3).tolist(), np.round(x[:, 0], 3).tolist()
    ([2.0], [1.633], [-1.225, 0.0, 1.225])
    """
    x = np.asarray(items.dataset["covariates"].values, dtype=float)
    center = x.mean(axis=0)
    sd = x.std(axis=0)
    scale = np.where(sd > 0, sd, 1.0)
    return (x - center) / scale, center, scale


def _check_flag(name: str, value) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be True or False; got {value!r}.")
    return bool(value)


def jury_covariate_config(
    items: JuryItems,
    pool_judges: bool = False,
    priors: Priors | None = None,
    judge_better_than_chance: bool | None = None,
) -> dict:
    """Check the covariate model's options against the data; return its JSON-ready config.

    Parameters
    ----------
    items : JuryItems
        Verdict rows with at least one covariate. With theta covariates
        (``JuryItems.from_frames(..., theta_covariates=)``) the truth is logistic in them
        (``theta_intercept``, ``theta_slope``; ``Priors.theta`` is then not used).
    pool_judges : bool, default False
        Draw every judge's slopes around a common mean per (truth, covariate), non-centred.
    priors : Priors, optional
        ``theta`` (Beta) and ``q0_logit_mean``, ``q1_logit_mean`` (Normal priors of each
        judge's logit q0, logit q1 at the mean item); other fields are not used.
    judge_better_than_chance : bool, optional
        Restrict every judge to q0 + q1 > 1 at the mean item. Default: True exactly when no
        item is labelled (it then fixes the label switching).

    Returns
    -------
    dict

    Raises
    ------
    ValueError
        Not a JuryItems, no covariates, or fewer than 3 judges without labelled items.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"item": [1, 1, 2, 2], "grader": ["a", "b", "a", "b"],
    ...                      "judge": [1, 0, 1, 1], "first": [1, 0, 1, 0],
    ...                      "human": [1, 1, None, None]})
    >>> items = JuryItems.from_frames(rows, judges="grader", item="item", covariates="first")
    >>> config = jury_covariate_config(items)
    >>> config["covariates"], config["judge_better_than_chance"], config["design"]
    (['first'], False, 'random')
    """
    items = _check_items(items)
    pool_judges = _check_flag("pool_judges", pool_judges)
    priors = Priors() if priors is None else priors
    if not isinstance(priors, Priors):
        raise ValueError(f"priors must be a bayesjudge.Priors; got {type(priors).__name__}.")
    labelled = int((items.dataset["truth"].values >= 0).sum())
    n_judges = items.sizes[JUDGE]
    if labelled == 0 and n_judges < 3:
        raise ValueError(
            f"With {n_judges} judge(s) and no labelled items the covariate model is not "
            f"identified. Label some items, or add judges (at least 3, Hui & Walter 1980)."
        )
    if judge_better_than_chance is None:
        judge_better_than_chance = labelled == 0
    judge_better_than_chance = _check_flag("judge_better_than_chance", judge_better_than_chance)
    _, center, scale = standardised_covariates(items)
    w = items.theta_covariates()
    t_center, t_sd = w.mean(axis=0), w.std(axis=0)
    return {
        "kind": "jury-covariates",
        "pool_judges": pool_judges,
        "priors": priors.to_dict(),
        "judge_better_than_chance": judge_better_than_chance,
        "design": items.design,
        "covariates": items.covariate_names,
        "center": [float(v) for v in center],
        "scale": [float(v) for v in scale],
        "slope_sd": SLOPE_SD,
        "slope_pool_scale": SLOPE_POOL_SCALE,
        "theta_covariates": items.theta_covariate_names,
        "theta_center": [float(v) for v in t_center],
        "theta_scale": [float(v) if v > 0 else 1.0 for v in t_sd],
        "theta_intercept_sd": THETA_INTERCEPT_SD,
    }


# ------------------------------------------------------------------------------- the model


def _f64(*values) -> list[np.float64]:
    """Prior parameters as float64 (pytensor would make exact floats float32)."""
    return [np.float64(v) for v in values]


def _intercepts(priors: Priors, better: bool):
    """Return logit q0, logit q1 of every judge at the mean item; optionally q0 + q1 > 1."""
    m0, s0 = _f64(*priors.q0_logit_mean)
    m1, s1 = _f64(*priors.q1_logit_mean)
    q1 = pm.Normal("q1_logit", m1, s1, dims=JUDGE)
    if not better:
        return pm.Normal("q0_logit", m0, s0, dims=JUDGE), q1
    # q0 + q1 > 1 ⇔ logit q0 > −logit q1: logit q0 truncated below at −logit q1; the Potential
    # restores the joint prior ∝ N(logit q0) N(logit q1) 1{logit q0 + logit q1 > 0}.
    dist = pm.Normal.dist(m0, s0)
    q0 = pm.Truncated("q0_logit", dist, lower=-q1, dims=JUDGE)
    pm.Potential("judge_better_than_chance", pt.log1mexp(pm.logcdf(dist, -q1)).sum())
    return q0, q1


def _slopes(config: dict):
    """Slopes (judge, truth, covariate): independent Normals or pooled over the judges."""
    dims = (JUDGE, TRUTH, COVARIATE)
    if not config["pool_judges"]:
        return pm.Normal("slope", *_f64(0.0, config["slope_sd"]), dims=dims)
    mean = pm.Normal("slope_mean", *_f64(0.0, config["slope_sd"]), dims=dims[1:])
    scale = pm.HalfNormal("slope_scale", *_f64(config["slope_pool_scale"]), dims=dims[1:])
    z = pm.Normal("slope_z", *_f64(0.0, 1.0), dims=dims)
    return pm.Deterministic("slope", mean + scale * z, dims=dims)


def _item_log_likelihood(coef, log_truth, data: dict, random: bool):
    """Σ over items of log P(item's verdicts[, truth]) (pytensor), the truth summed out.

    ``log_truth`` (I, 2): log P(Z_i = 0), log P(Z_i = 1). ``data``: ``row_item``,
    ``row_judge``, ``verdict`` (R,), ``design`` (R, 1 + p: the intercept column first),
    ``item_truth`` (I,: -1 unlabelled).
    """
    eta = (data["design"][:, None, :] * coef[data["row_judge"]]).sum(axis=-1)  # (R, 2)
    sign = (2 * data["verdict"] - 1)[:, None]
    row_ll = -pt.softplus(-sign * eta)  # log expit(±η): log P(v_r | t) for t = 0, 1
    truth = data["item_truth"]
    per_item = pt.inc_subtensor(pt.zeros((truth.shape[0], 2))[data["row_item"]], row_ll)
    mixed = pm.math.logsumexp(per_item + log_truth, axis=1, keepdims=False)
    known_t = pt.maximum(truth, 0)
    index = pt.arange(truth.shape[0])
    known = per_item[index, known_t]
    if random:  # a labelled item's truth was drawn from θ too
        known = known + log_truth[index, known_t]
    return pt.switch(pt.lt(truth, 0), mixed, known).sum()


def _data_arrays(items: JuryItems, config: dict) -> dict[str, np.ndarray]:
    ds = items.dataset
    x = (np.asarray(ds["covariates"].values, float) - config["center"]) / np.asarray(
        config["scale"]
    )
    return {
        "row_item": ds["row_item"].values.astype(np.int64),
        "row_judge": ds["row_judge"].values.astype(np.int64),
        "verdict": ds["verdict"].values.astype(np.int64),
        "design": np.column_stack([np.ones(len(x)), x]),
        "item_truth": ds["truth"].values.astype(np.int64),
        "item_group": items.group_index().astype(np.int64),
    }


def _theta_arrays(items: JuryItems, config: dict) -> dict[str, np.ndarray]:
    """Return the standardised theta covariates (I, p_t) and θ's averaging weights (S, R, I).

    A group's weights are 1/n over its test items (all its items under the random design, a
    group without test items: all its items), 0 elsewhere.
    """
    w = (items.theta_covariates() - config["theta_center"]) / np.asarray(config["theta_scale"])
    truth, group = items.dataset["truth"].values, items.group_index()
    n_s, n_r = len(items.systems), len(items.strata)
    weights = np.zeros((n_s * n_r, len(truth)))
    for g in range(n_s * n_r):
        mine = group == g
        sel = mine & ((truth < 0) | (config["design"] == "random"))
        sel = sel if sel.any() else mine
        weights[g, sel] = 1.0 / max(sel.sum(), 1)
    return {"theta_design": w, "theta_weights": weights.reshape(n_s, n_r, -1)}


def _truth_prior(priors: Priors, config: dict, data: dict):
    """Log P(Z_i = 0), log P(Z_i = 1) per item (I, 2), and θ: constant or logistic in w."""
    group = data["item_group"]
    if not config.get("theta_covariates"):
        theta = pm.Beta("theta", *_f64(*priors.theta), dims=DIMS)
        th = theta.flatten()[group]
        return pt.stack([pt.log1p(-th), pt.log(th)], axis=1)
    intercept = pm.Normal("theta_intercept", *_f64(0.0, config["theta_intercept_sd"]),
                          dims=DIMS)  # fmt: skip
    slope = pm.Normal("theta_slope", *_f64(0.0, config["slope_sd"]), dims=THETA_COVARIATE)
    eta = intercept.flatten()[group] + pt.dot(data["theta_design"], slope)
    pm.Deterministic("theta", (data["theta_weights"] * pt.sigmoid(eta)).sum(axis=-1),
                     dims=DIMS)  # fmt: skip
    return pt.stack([-pt.softplus(eta), -pt.softplus(-eta)], axis=1)


def build_jury_covariates_from_config(items: JuryItems, config: dict) -> pm.Model:
    """Build the PyMC model from a :func:`jury_covariate_config` configuration.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"item": [1, 1, 2, 2], "grader": ["a", "b", "a", "b"],
    ...                      "judge": [1, 0, 1, 1], "first": [1, 0, 1, 0],
    ...                      "human": [1, 1, None, None]})
    >>> items = JuryItems.from_frames(rows, judges="grader", item="item", covariates="first")
    >>> model = build_jury_covariates_from_config(items, jury_covariate_config(items))
    >>> sorted(v.name for v in model.free_RVs)
    ['q0_logit', 'q1_logit', 'slope', 'theta']
    """
    priors = Priors.from_dict(config["priors"])
    arrays = _data_arrays(items, config)
    if config.get("theta_covariates"):
        arrays |= _theta_arrays(items, config)
    n_rows, n_items = len(arrays["verdict"]), len(arrays["item_truth"])
    coords = {
        "system": items.systems,
        "stratum": items.strata,
        JUDGE: items.judges,
        TRUTH: [0, 1],
        TERM: ["intercept", *config["covariates"]],
        COVARIATE: config["covariates"],
        ROW: np.arange(n_rows),
        ITEM: np.arange(n_items),
    }
    if config.get("theta_covariates"):
        coords[THETA_COVARIATE] = config["theta_covariates"]
    data_dims = {"row_item": (ROW,), "row_judge": (ROW,), "verdict": (ROW,),
                 "design": (ROW, TERM), "item_truth": (ITEM,), "item_group": (ITEM,),
                 "theta_design": (ITEM, THETA_COVARIATE),
                 "theta_weights": (*DIMS, ITEM)}  # fmt: skip
    with pm.Model(coords=coords) as model:
        data = {k: pm.Data(k, v, dims=data_dims[k]) for k, v in arrays.items()}
        log_truth = _truth_prior(priors, config, data)
        q0_logit, q1_logit = _intercepts(priors, config["judge_better_than_chance"])
        slope = _slopes(config)
        intercept = pt.stack([-q0_logit, q1_logit], axis=1)  # β[j, t, 0]
        coef = pm.Deterministic(
            "coef",
            pt.concatenate([intercept[:, :, None], slope], axis=2),
            dims=(JUDGE, TRUTH, TERM),
        )
        random = config["design"] == "random"
        pm.Potential("loglik", _item_log_likelihood(coef, log_truth, data, random))
    return model


def build_jury_covariate_model(
    items: JuryItems,
    *,
    pool_judges: bool = False,
    priors: Priors | None = None,
    judge_better_than_chance: bool | None = None,
) -> pm.Model:
    """Build the PyMC covariate model of several judges (see ``models/jury-covariates.md``).

    Parameters are those of :func:`jury_covariate_config`.

    Returns
    -------
    pymc.Model
        ``theta`` (system, stratum); ``q0_logit``, ``q1_logit`` (judge): each judge's logit
        q0, q1 at the mean item; ``slope`` (judge, truth, covariate); ``coef`` (judge, truth,
        term): the logistic coefficients of P(says correct | truth), as the closed form's;
        the data (row, item dims) and the likelihood ``loglik`` (a Potential). With theta
        covariates: ``theta_intercept`` (system, stratum), ``theta_slope`` (theta_covariate)
        and ``theta`` a Deterministic (the mean P(Z = 1) over the group's test items).

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"item": [1, 1, 2, 2], "grader": ["a", "b", "a", "b"],
    ...                      "judge": [1, 0, 1, 1], "first": [1, 0, 1, 0],
    ...                      "human": [1, 1, None, None]})
    >>> items = JuryItems.from_frames(rows, judges="grader", item="item", covariates="first")
    >>> build_jury_covariate_model(items).named_vars_to_dims["coef"]
    ('judge', 'truth', 'term')
    """
    config = jury_covariate_config(items, pool_judges, priors, judge_better_than_chance)
    return build_jury_covariates_from_config(items, config)


# ------------------------------------------------------------------------------- fitting


def _initial_points(model: pm.Model, config: dict) -> dict[str, np.ndarray]:
    """Start every judge at q0 = q1 ≈ 0.82 at the mean item: inside q0 + q1 > 1, labelled mode."""
    if not config["judge_better_than_chance"]:
        return {}
    n = len(model.coords[JUDGE])
    return {"q1_logit": np.full(n, 1.5), "q0_logit": np.full(n, 1.5)}


def _compile(model: pm.Model, items: JuryItems, config: dict):
    """Return the nutpie-compiled model, cached by structure; a cached one gets the new data."""
    import nutpie

    key = json.dumps(
        {
            "model": {
                k: config.get(k)
                for k in _MODEL_KEYS
                if k not in ("center", "scale", "theta_center", "theta_scale")
            },
            "labels": [repr(v) for v in (items.systems, items.strata, items.judges)],
            "sizes": items.sizes,
        },
        sort_keys=True,
    )
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


def _storable(items: JuryItems) -> xr.Dataset:
    """Return the items' dataset with text item ids (netCDF stores no mixed object arrays)."""
    ds = items.dataset.copy()
    return ds.assign_coords(item_id=(ITEM, [str(v) for v in ds["item_id"].values]))


def fit_jury_covariates(
    items: JuryItems,
    *,
    pool_judges: bool = False,
    priors: Priors | None = None,
    judge_better_than_chance: bool | None = None,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    random_seed: int | None = None,
    target_accept: float | None = None,
    progressbar: bool | None = None,
) -> JuryCovariateFit:
    """Fit the covariate model of several judges by NUTS (nutpie).

    Parameters
    ----------
    items : JuryItems
        Verdict rows with covariates (:meth:`JuryItems.from_frames`).
    pool_judges, priors, judge_better_than_chance
        The model, as in :func:`jury_covariate_config`.
    draws, tune, chains : int, default 1000, 1000, 4
        Draws kept per chain, tuning steps per chain, chains.
    random_seed : int, optional
        Seed of the sampler (drawn and stored when None).
    target_accept : float, optional
        NUTS target acceptance; default 0.9 (0.99 with ``pool_judges=True``: its scale makes
        a funnel).
    progressbar : bool, optional
        Show nutpie's progress bar (default: in a terminal or notebook, not under pytest/CI).

    Returns
    -------
    JuryCovariateFit

    Raises
    ------
    ValueError
        For bad input or options (see :func:`jury_covariate_config`), before compiling.

    Warns
    -----
    BayesJudgeWarning
        Without labelled items (θ then rests on the better-than-chance restriction).
    ConvergenceWarning
        On divergences, r_hat > 1.01 or bulk/tail ESS < 400.

    Examples
    --------
    >>> fit_jury_covariates("rows.csv")
    Traceback (most recent call last):
    ValueError: items must be a JuryItems (verdict rows with covariates: ...

    A fit (``fit_jury_covariates(items, random_seed=1)``) gives ``result.summary()`` with
    ``theta_ci``, the coefficients and every judge's ``q0``, ``q1`` at each covariate's low
    and high value.
    """
    config = jury_covariate_config(items, pool_judges, priors, judge_better_than_chance)
    settings = {
        "draws": check_int("draws", draws, 1),
        "tune": check_int("tune", tune, 0),
        "chains": check_int("chains", chains, 1),
        "random_seed": check_seed(random_seed),
        "target_accept": check_open_unit(
            "target_accept",
            (0.99 if config["pool_judges"] else 0.9) if target_accept is None else target_accept,
            "e.g. 0.9",
        ),
    }
    progress = show_progress(progressbar, name="progressbar")
    if config["judge_better_than_chance"]:
        warnings.warn(
            "No labelled items: θ and the judges' coefficients are identified only up to label "
            "switching, which the restriction q0 + q1 > 1 (at the mean item) resolves. Label "
            "some items to check it.",
            BayesJudgeWarning,
            stacklevel=2,
        )
    model = build_jury_covariates_from_config(items, config)
    tree = sample_nutpie(_compile(model, items, config), settings, progress)
    tree["items"] = xr.DataTree(_storable(items))
    result = JuryCovariateFit(tree, {**config, **settings}, model)
    result.check_sampling(stacklevel=3)
    return result


# ------------------------------------------------------------------------------ the result


class JuryCovariateFit:
    """A fitted covariate model: the posterior as an :class:`xarray.DataTree` and its config.

    Attributes
    ----------
    tree : xarray.DataTree
        Groups ``posterior``, ``sample_stats`` and ``items`` (the :class:`JuryItems` dataset,
        item ids as text); root attrs ``bayesjudge_config`` (JSON) and its hash.
    config : dict
        :func:`jury_covariate_config` plus draws, tune, chains, random_seed, target_accept.
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
                "design": self.config["design"],
            }
        )

    @property
    def posterior(self) -> xr.Dataset:
        """The posterior draws (dims chain, draw, system, stratum, judge, truth, term, ...)."""
        return self.tree["posterior"].dataset

    @property
    def items(self) -> JuryItems:
        """The fitted verdict rows."""
        return JuryItems(self.tree["items"].dataset)

    @property
    def model(self) -> pm.Model:
        """The PyMC model (rebuilt from the stored rows after :func:`load_jury_covariates`)."""
        if self._model is None:
            config = {k: self.config.get(k, _NO_THETA_COVARIATES.get(k)) for k in _MODEL_KEYS}
            self._model = build_jury_covariates_from_config(self.items, config)
        return self._model

    def __repr__(self) -> str:
        c, s = self.config, self.items.sizes
        return (
            f"<bayesjudge.JuryCovariateFit covariates={c['covariates']} "
            f"pool_judges={c['pool_judges']} judges={s[JUDGE]} items={s[ITEM]} rows={s[ROW]} "
            f"design={c['design']!r} draws={c['chains']}×{c['draws']} seed={c['random_seed']}>"
        )

    def diagnostics(self) -> dict:
        """Divergences, the largest r_hat and the smallest bulk/tail ESS of θ and coef."""
        return sampling_diagnostics(
            self.posterior[self._reported()], self.tree["sample_stats"].dataset
        )

    def _reported(self) -> list[str]:
        return [n for n in REPORTED if n in self.posterior]

    def check_sampling(self, stacklevel: int = 2) -> dict:
        """Warn (:class:`ConvergenceWarning`) with numbers and advice on bad diagnostics."""
        advice = (
            "without enough labelled items the chains may sit in different latent classes: "
            "label items"
        )
        return warn_sampling(self.diagnostics(), self.config, advice, stacklevel + 1)

    def q_draws(self) -> xr.Dataset:
        """Draws of every judge's q0, q1 at each covariate's low and high raw value.

        The other covariates sit at their mean (as in ``jury_covariate_estimate``). Dims
        chain, draw, judge, covariate, level (``"low"``, ``"high"``); also
        ``covariate_low``, ``covariate_high``.
        """
        raw = np.asarray(self.tree["items"].dataset["covariates"].values, float)
        low, high = covariate_levels(raw)
        center, scale = np.asarray(self.config["center"]), np.asarray(self.config["scale"])
        p = len(center)
        points = np.zeros((p, 2, 1 + p))  # (covariate, level, term) on the standardised scale
        points[..., 0] = 1.0
        for c in range(p):
            points[c, 0, 1 + c] = (low[c] - center[c]) / scale[c]
            points[c, 1, 1 + c] = (high[c] - center[c]) / scale[c]
        coef = self.posterior["coef"].transpose("chain", "draw", JUDGE, TRUTH, TERM).values
        eta = np.einsum("cdjtk,vlk->cdjtvl", coef, points)
        dims = ("chain", "draw", JUDGE, COVARIATE, "level")
        coords = {
            "chain": self.posterior["chain"].values,
            "draw": self.posterior["draw"].values,
            JUDGE: self.posterior[JUDGE].values,
            COVARIATE: self.config["covariates"],
            "level": ["low", "high"],
        }
        return xr.Dataset(
            {
                "q0": (dims, expit(-eta[:, :, :, 0])),
                "q1": (dims, expit(eta[:, :, :, 1])),
                "covariate_low": (COVARIATE, low),
                "covariate_high": (COVARIATE, high),
            },
            coords=coords,
        )

    def summary(self, ci_prob: float = 0.95) -> xr.Dataset:
        """Posterior mean, sd, median, equal-tailed interval, r_hat and bulk ESS.

        Parameters
        ----------
        ci_prob : float, default 0.95

        Returns
        -------
        xarray.Dataset
            ``theta`` (posterior mean; system, stratum), ``theta_sd``, ``theta_median``,
            ``theta_ci`` (+ ``ci_bound``), ``theta_r_hat``, ``theta_ess_bulk``; the same for
            ``coef`` (judge, truth, term), with theta covariates for ``theta_slope``
            (theta_covariate: δ per standard deviation), and for ``q0``, ``q1`` (judge,
            covariate, level: the judge's quality at each covariate's low and high value),
            and ``covariate_low``, ``covariate_high`` (raw values). Attrs ``ci_kind="eti"``,
            ``ci_prob``, ``design``, ``covariates``, ``center``, ``scale``,
            ``theta_covariates``.
        """
        ci_prob = check_open_unit("ci_prob", ci_prob, "e.g. 0.95 for a 95 % interval")
        sample = ("chain", "draw")
        out = {}
        q = self.q_draws()
        draws_of = {name: self.posterior[name] for name in self._reported()}
        draws_of.update(q0=q["q0"], q1=q["q1"])
        for name, draws in draws_of.items():
            single = draws.to_dataset(name=name)
            out[name] = draws.mean(sample)
            out[f"{name}_sd"] = draws.std(sample, ddof=1)
            out[f"{name}_median"] = draws.median(sample)
            out[f"{name}_ci"] = eti(draws, ci_prob)
            out[f"{name}_r_hat"] = az.rhat(single)[name]
            out[f"{name}_ess_bulk"] = az.ess(single, method="bulk")[name]
        out["covariate_low"], out["covariate_high"] = q["covariate_low"], q["covariate_high"]
        attrs = {
            "ci_kind": "eti",
            "ci_prob": ci_prob,
            "design": self.config["design"],
            "covariates": list(self.config["covariates"]),
            "center": list(self.config["center"]),
            "scale": list(self.config["scale"]),
            "theta_covariates": list(self.config.get("theta_covariates", [])),
        }
        return xr.Dataset(out, attrs=attrs)

    def save(self, path) -> Path:
        """Write the fit to a netCDF file, atomically (:func:`load_jury_covariates` reads it).

        A SHA-256 digest of the content is stored; loading refuses a file changed since.
        """
        path = check_output_file(path, what="fit file")
        tree = self.tree.copy()
        stats = tree["sample_stats"].dataset
        drop = [v for v in stats.data_vars if stats[v].dtype == object]  # nutpie's messages
        tree["sample_stats"] = xr.DataTree(stats.drop_vars(drop))
        tree.attrs["format"] = JURY_COVARIATES_FORMAT
        tree.attrs.pop(DIGEST_ATTR, None)
        tree.attrs[DIGEST_ATTR] = content_digest(tree)
        with atomic_path(path) as tmp:
            tree.to_netcdf(tmp, engine="h5netcdf")
        return path


def load_jury_covariates(path) -> JuryCovariateFit:
    """Read a fit written by :meth:`JuryCovariateFit.save`; its config and content are checked.

    Raises
    ------
    FileNotFoundError
        If there is no file at ``path``.
    ValueError
        Unreadable, not a covariate fit, a config that does not match its hash, or content
        changed after it was saved.

    Examples
    --------
    >>> load_jury_covariates("no-such-fit.nc")
    Traceback (most recent call last):
    ...
    FileNotFoundError: No covariate jury fit file at 'no-such-fit.nc'.
    """
    tree, config = read_fit_tree(
        path, fmt=JURY_COVARIATES_FORMAT, what="covariate jury fit", saver="JuryCovariateFit.save"
    )
    return JuryCovariateFit(tree, config)
