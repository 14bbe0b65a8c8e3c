"""Fitting the Bayesian models and using the result: :func:`fit`, :class:`Fit`, :func:`load`."""

from __future__ import annotations

import contextlib
import hashlib
import html
import json
import logging
import os
import signal
import threading
import warnings
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import arviz as az
import numpy as np
import pandas as pd
import pymc as pm
import xarray as xr

from bayesjudge._io import atomic_path, check_output_file
from bayesjudge._progress import show_progress
from bayesjudge._text import pair_label, terminal_safe
from bayesjudge._version import __version__
from bayesjudge.core._validation import check_open_unit, is_seed
from bayesjudge.core.exact import (
    Marginal,
    data_conflict,
    exact_draws,
    exact_marginals,
    hdi,
    test_set_theta_draws,
)
from bayesjudge.data import DEFAULT_DESIGN, DIMS, CategoricalCounts, JudgeCounts
from bayesjudge.data.categorical_jury import CategoricalJuryCounts
from bayesjudge.data.jury import JuryCounts
from bayesjudge.data.jury_items import JuryItems
from bayesjudge.diagnostics import (
    MAX_LISTED,
    check_pooled_calibration,
    judge_diagnostics,
    label_pairs,
)
from bayesjudge.models.build import (
    aggregate_weights,
    build_from_config,
    initial_points,
    model_config,
    paired_cells,
    resolve_paired,
)
from bayesjudge.models.categorical import CATEGORICAL_FORMAT, fit_categorical, load_categorical
from bayesjudge.models.categorical_jury import (
    CATEGORICAL_JURY_FORMAT,
    fit_categorical_jury,
    load_categorical_jury,
)
from bayesjudge.models.item_effect import item_effect_config
from bayesjudge.models.jury import JURY_FORMAT, fit_jury, load_jury
from bayesjudge.models.jury_covariates import (
    JURY_COVARIATES_FORMAT,
    fit_jury_covariates,
    load_jury_covariates,
)
from bayesjudge.models.priors import Priors
from bayesjudge.models.sampling import summary_names
from bayesjudge.models.storage import DIGEST_ATTR, content_digest
from bayesjudge.plots import plot_ppc
from bayesjudge.report import write_report
from bayesjudge.warnings import BayesJudgeWarning, ConvergenceWarning

__all__ = ["Fit", "PosteriorPredictiveCheck", "fit", "fit_pairwise", "load", "prior_predictive"]

SAMPLERS = ("nutpie", "pymc")
METHODS = ("mcmc", "exact")
# What fit(estimand=...) reports as θ: the population θ, or the share truly correct among
# this evaluation's items (theta_test, see _test_set_theta).
ESTIMANDS = ("population", "test-set")
# Posterior variables fit() derives from the draws for estimand="test-set" (not in the model).
TEST_SET_VARS = ("theta_test", "theta_total_test")
# Quadrature settings of method="exact" (bayesjudge.core.exact.exact_marginals).
# q_nodes None: 12 with the flat θ prior, 24 otherwise.
EXACT_ENGINE = {"nodes": 12, "grid": 65, "theta_nodes": 24, "q_nodes": None, "q_grid": 81}
# Threads over the exact engine's blocks of groups (512 a block): the CPUs available, at most 4.
EXACT_MAX_THREADS = 4
_EXACT_VARS = ("theta", "q0", "q1")
# Variables reported by summary() and checked for convergence, in this order when present.
REPORTED = (
    "theta_test",
    "theta",
    "theta_total_test",
    "theta_total",
    "q0",
    "q1",
    "youden",
    "q0_logit_mean",
    "q0_logit_scale",
    "q1_logit_mean",
    "q1_logit_scale",
)
OBSERVED = ("k", "tn", "tp")
# The random labelling design's truth counts m1 ~ Bin(m0 + m1, θ) (observed "truth").
TRUTH = "truth"
# The paired model's observed variables; "k" (every test item) is derived from the first two.
PAIRED_OBSERVED = ("k_unshared", "joint", "tn", "tp")
# The item-effect model's cluster tables (repeated verdicts of an item; models/item-effect.md).
CLUSTER_OBSERVED = ("clusters", "calibration_clusters")
RHAT_MAX = 1.01
ESS_MIN = 400
_FORMAT = "bayesjudge-fit-1"
# nutpie and PyMC take seeds below 2**64; larger ones are reduced through SeedSequence.
_SEED_LIMIT = 2**64

# Compiled nutpie models keyed by model structure; refits of the same structure (new data,
# new seed) reuse the compiled logp instead of paying the numba compile again.
_COMPILED: OrderedDict[str, object] = OrderedDict()
_COMPILED_MAX = 16


@contextlib.contextmanager
def _quiet_pymc():
    """Silence PyMC's INFO lines ("Sampling: [k, tn, tp]") that clutter notebooks and the CLI."""
    logger = logging.getLogger("pymc")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


@contextlib.contextmanager
def _interruptible():
    """Re-raise a Ctrl-C that a sampler swallows, so that no partial result is ever returned.

    nutpie (``nutpie.sample``) and PyMC (``pm.sample``, ``sample_posterior_predictive``,
    ``sample_prior_predictive``) catch ``KeyboardInterrupt`` and return the draws made so far.
    While the block runs, SIGINT is recorded (and handed on to the previous handler, which
    still stops the sampler); after the block a recorded SIGINT raises ``KeyboardInterrupt``.
    Signal handlers can only be set in the main thread; elsewhere the block runs unguarded
    (:func:`_check_complete` still refuses a short trace). Yields the list of SIGINTs
    received, for callbacks that stop a sampler's later chains.
    """
    interrupted: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield interrupted
        return
    previous = signal.getsignal(signal.SIGINT)

    def handler(signum, frame):
        interrupted.append(signum)
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt

    message = "sampling was interrupted; no result was kept"
    signal.signal(signal.SIGINT, handler)
    try:
        yield interrupted
    except Exception as err:
        # e.g. PyMC's "Not enough samples to build a trace" after a Ctrl-C during tuning.
        if interrupted:
            raise KeyboardInterrupt(message) from err
        raise
    finally:
        signal.signal(signal.SIGINT, previous)
    if interrupted:
        raise KeyboardInterrupt(message)


def _check_complete(tree: xr.DataTree, draws: int, chains: int) -> None:
    """Raise ``KeyboardInterrupt`` when a sampler returned fewer draws than asked.

    A sampler stopped early (Ctrl-C) returns the draws made so far: fewer chains or draws, or
    nutpie's NaN padding of the unfinished ones. Such a trace is never turned into a Fit.
    """
    post = tree["posterior"].dataset
    sizes = (post.sizes.get("chain", 0), post.sizes.get("draw", 0))
    short = sizes != (chains, draws)
    if not short:
        # nutpie pads unfinished draws with NaN: a chain whose last draw is all NaN stopped.
        last = post.isel(draw=-1)
        short = any(
            bool(np.isnan(last[v]).all(set(last[v].dims) - {"chain"}).any())
            for v in post.data_vars
            if post[v].dtype.kind == "f"
        )
    if short:
        raise KeyboardInterrupt(
            f"sampling stopped early ({sizes[0]} chains × {sizes[1]} draws, or unfinished "
            f"draws, of {chains} × {draws} asked); no result was kept"
        )


def _config_hash(config: dict) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]


def _model_config(fit_config: dict) -> dict:
    # Fits saved before the paired model (the labelling design) existed have no "paired"
    # ("design") entry: they are unpaired (stratified).
    defaults = {"paired": False, "design": DEFAULT_DESIGN}
    return {
        k: fit_config.get(k, defaults[k]) if k in defaults else fit_config[k]
        for k in model_config()
    }


def _structure_key(counts: JudgeCounts, config: dict) -> str:
    # "auto", "test" and explicit weights build the same graph (a stratum_weight data
    # container, or none with one stratum), so they share one compiled model.
    kind, _ = aggregate_weights(counts, config["aggregate"])
    key = {
        "model": {**config, "aggregate": kind if kind in (None, "dirichlet") else "weights"},
        # repr, not str: labels 1 and "1" must not share a compiled model (its coords).
        "system": [repr(s) for s in counts.systems],
        "stratum": [repr(s) for s in counts.strata],
        "shared": counts.calibration_shared_over,
    }
    return json.dumps(key, sort_keys=True)


def _sample_nutpie(model, counts, config, *, draws, tune, chains, seed, target_accept, progress):
    """Sample with nutpie; a Ctrl-C raises ``KeyboardInterrupt`` (no partial trace)."""
    import nutpie

    key = _structure_key(counts, config)
    compiled = _COMPILED.get(key)
    if compiled is None:
        compiled = nutpie.compile_pymc_model(
            model, initial_points=initial_points(model, config) or None
        )
        _COMPILED[key] = compiled
        while len(_COMPILED) > _COMPILED_MAX:
            _COMPILED.popitem(last=False)
    else:
        _COMPILED.move_to_end(key)
        # Every data container, so no count of the new data set is left out.
        data = {v.name: v.get_value() for v in model.data_vars}
        compiled = compiled.with_data(**data)
    with _interruptible():
        tree = nutpie.sample(
            compiled,
            draws=draws,
            tune=tune,
            chains=chains,
            cores=min(chains, os.cpu_count() or 1),
            seed=_sampler_seed(seed),
            target_accept=target_accept,
            progress_bar=progress,
            save_warmup=False,
        )
    tree = _draws_tree(tree)
    _check_complete(tree, draws, chains)
    return tree


def _sample_pymc(model, *, draws, tune, chains, seed, target_accept, progress, initvals):
    """Sample with PyMC's NUTS; a Ctrl-C raises ``KeyboardInterrupt`` (no partial trace)."""

    def stop_after_interrupt(trace, draw):
        # PyMC ends only the running chain on Ctrl-C and starts the next: end them all.
        if interrupted:
            raise KeyboardInterrupt

    with _quiet_pymc(), _interruptible() as interrupted:
        tree = pm.sample(
            callback=stop_after_interrupt,
            initvals=initvals or None,
            model=model,
            nuts_sampler="pymc",  # PyMC 6 would otherwise pick nutpie when it is installed
            draws=draws,
            tune=tune,
            chains=chains,
            cores=1,  # forking a process that already runs threads (nutpie, BLAS) can deadlock
            random_seed=_sampler_seed(seed),
            target_accept=target_accept,
            progressbar=progress,
            compute_convergence_checks=False,
        )
    tree = _draws_tree(tree)
    _check_complete(tree, draws, chains)
    return tree


def _draws_tree(tree: xr.DataTree) -> xr.DataTree:
    """Keep the posterior and sample_stats groups of a sampler's output."""
    return xr.DataTree.from_dict(
        {group: tree[group].dataset for group in ("posterior", "sample_stats")}
    )


def _observed_names(model) -> tuple[str, ...]:
    """Return the observed variables that the posterior predictive check replicates.

    Under the random labelling design the truth counts (``truth``) are among them; the
    item-effect model's cluster tables too.
    """
    names = PAIRED_OBSERVED if "joint" in model.named_vars else OBSERVED
    names = (*names, *(v for v in CLUSTER_OBSERVED if v in model.named_vars))
    return (*names, TRUTH) if TRUTH in model.named_vars else names


def _constant_value(var) -> np.ndarray:
    """Return the value of a data variable, or of a cast of one, without compiling.

    ``var.eval()`` compiles a PyTensor function (~30 ms each, most of a one-group exact fit);
    the observed counts are ``Cast(shared data)``. Other graphs fall back to ``eval()``.
    """
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.scalar import Cast
    from pytensor.tensor.elemwise import Elemwise

    if isinstance(var, SharedVariable):
        return np.asarray(var.get_value())
    owner = var.owner
    if (
        owner is not None
        and isinstance(owner.op, Elemwise)
        and isinstance(owner.op.scalar_op, Cast)
        and isinstance(owner.inputs[0], SharedVariable)
    ):
        return np.asarray(owner.inputs[0].get_value()).astype(var.dtype)
    return np.asarray(var.eval())


def _observed_tree(model) -> dict[str, xr.Dataset]:
    """observed_data and constant_data datasets of a built model.

    The paired model's observed ``k_unshared`` is an expression of its data; ``k`` (every test
    item of a system, shared or not) is added to its observed data so that both models report
    the same counts.
    """
    coords = {d: list(v) for d, v in model.coords.items()}
    dims = model.named_vars_to_dims
    values = {rv.name: model.rvs_to_values[rv] for rv in model.observed_RVs}
    names = _observed_names(model)
    observed = xr.Dataset(
        {name: (dims[name], _constant_value(values[name])) for name in names},
        coords=coords,
    )
    if "k" not in observed:
        observed["k"] = (dims["k_observed"], model["k_observed"].get_value())
    constant = xr.Dataset(
        {
            v.name: (dims[v.name], v.get_value())
            for v in model.data_vars
            if not v.name.endswith("_observed")
        },
        coords=coords,
    )
    return {"observed_data": observed, "constant_data": constant}


def _with_total_k(replicated: xr.Dataset) -> xr.Dataset:
    """Add the paired model's replicated ``k`` = ``k_unshared`` + shared items judged correct."""
    if "joint" not in replicated:
        return replicated
    _, matrix = paired_cells(replicated.sizes["system"])
    ones = xr.DataArray(matrix, dims=("pattern", "system"))
    shared_k = xr.dot(replicated["joint"], ones, dim="pattern")
    total = (replicated["k_unshared"] + shared_k).transpose(*replicated["k_unshared"].dims)
    return replicated.assign(k=total)[["k", *replicated.data_vars]]


def _check_int(name: str, value, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}; got {value!r}.")


def _check_seed(random_seed) -> int:
    """Return the seed as an int, drawing one when None (so that it can be stored).

    Every non-negative integer is accepted, however large (see :func:`_sampler_seed`).
    """
    if random_seed is None:
        return int(np.random.SeedSequence().generate_state(1)[0])
    if not is_seed(random_seed):
        raise ValueError(
            f"random_seed must be a non-negative int or None; got {random_seed!r} "
            f"({type(random_seed).__name__}). Pass a whole number such as 1, or None to draw one."
        )
    return int(random_seed)


def _sampler_seed(seed: int) -> int:
    """Reduce a seed to what nutpie and PyMC accept (< 2**64), deterministically.

    Seeds below 2**64 are passed unchanged; larger ones are hashed by
    :class:`numpy.random.SeedSequence`, so that 2**70 always gives the same draws.

    Examples
    --------
    >>> _sampler_seed(7), _sampler_seed(2**70) == _sampler_seed(2**70) < 2**64
    (7, True)
    """
    if seed < _SEED_LIMIT:
        return int(seed)
    return int(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0])


def _attr_seed(seed):
    """Return a seed as a netCDF attribute: an int when it fits in int64, else as text."""
    if seed is None or (isinstance(seed, int | np.integer) and seed < 2**63):
        return seed
    return str(seed)


def _varies(draws: xr.DataArray) -> bool:
    """Return False for a variable fixed by a known prior (constant up to rounding)."""
    return bool((draws.max(("chain", "draw")) > draws.min(("chain", "draw"))).any())


def _convergence(single: xr.Dataset, name: str) -> dict[str, xr.DataArray]:
    """Bulk/tail ESS and r_hat of one variable; NaN for a constant (known) variable."""
    if not _varies(single[name]):
        nan = xr.full_like(single[name].isel(chain=0, draw=0, drop=True), np.nan, dtype=float)
        return {"ess_bulk": nan, "ess_tail": nan, "r_hat": nan}
    return {
        "ess_bulk": az.ess(single, method="bulk")[name],
        "ess_tail": az.ess(single, method="tail")[name],
        "r_hat": az.rhat(single)[name],
    }


def fit(
    counts: JudgeCounts,
    calibration: str | None = None,
    pool_over=None,
    priors=None,
    aggregate="auto",
    judge_better_than_chance: bool = False,
    paired: bool | None = None,
    *,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    random_seed: int | None = None,
    sampler: str = "nutpie",
    target_accept: float | None = None,
    progressbar: bool | None = None,
    method: str = "mcmc",
    estimand: str = "population",
    confusion: str = "free",
    scores=None,
    pool_judges: bool = False,
    dependence: str | None = None,
) -> Fit:
    """Fit the Bayesian model of θ, q0, q1 to judge counts by MCMC (NUTS) or exactly.

    K-category counts (:class:`~bayesjudge.CategoricalCounts`) are handed to
    :func:`bayesjudge.models.categorical.fit_categorical` (θ ~ Dirichlet, confusion rows
    ~ Dirichlet; ``confusion=`` ``"free"``, ``"symmetric"`` or ``"ordinal"``, ``scores=``),
    which returns a ``CategoricalFit``. Several judges' verdict patterns
    (:class:`~bayesjudge.data.jury.JuryCounts`) are handed to
    :func:`bayesjudge.models.jury.fit_jury` (``calibration`` default ``"shared"``,
    ``pool_judges=``, ``dependence=``, ``judge_better_than_chance=True`` or automatic),
    which returns a ``JuryFit``; verdict rows with covariates
    (:class:`~bayesjudge.data.jury_items.JuryItems`) to
    :func:`bayesjudge.models.jury_covariates.fit_jury_covariates` (``pool_judges=``),
    which returns a ``JuryCovariateFit``. K-category verdict patterns of several judges
    (:class:`~bayesjudge.data.categorical_jury.CategoricalJuryCounts`) are handed to
    :func:`bayesjudge.models.categorical_jury.fit_categorical_jury` (``calibration`` default
    ``"shared"``, or ``"separate"``, ``"hierarchical"``; ``pool_judges=``, ``dependence=``;
    ``priors`` a ``CategoricalPriors``, ``scores=``), which returns a ``CategoricalJuryFit``.

    The labelling design of the counts (:attr:`JudgeCounts.design`) is part of the model:
    under ``"random"`` the truth counts of the labelled items, m1 ~ Binomial(m0 + m1, θ),
    are data (see :func:`bayesjudge.build_model`).

    Parameters
    ----------
    counts : JudgeCounts
        Test and calibration counts per (system, stratum) group.
    calibration, pool_over, priors, aggregate, judge_better_than_chance, paired
        The model, as in :func:`bayesjudge.build_model` (``calibration`` default
        ``"separate"``; ``"shared"`` for a :class:`~bayesjudge.data.jury.JuryCounts`).
        ``paired`` None (default) fits the paired model (``models/paired.md``) when
        ``counts`` carry a joint verdict table of 2 to 6 systems; see :func:`fit_pairwise`
        for more systems.
    draws, tune, chains : int, default 1000, 1000, 4
        Posterior draws kept per chain, tuning steps per chain, and number of chains.
    random_seed : int, optional
        Seed of the sampler: any non-negative integer (seeds of 2**64 and more are reduced
        through :class:`numpy.random.SeedSequence` to one the sampler accepts, always the
        same). When None, a seed is drawn. The seed is stored in ``fit.config`` and
        ``fit.tree.attrs["random_seed"]`` so that the fit can be repeated.
    sampler : {"nutpie", "pymc"}, default "nutpie"
        ``"nutpie"`` (fast, compiled with numba; a model of the same structure is compiled
        once per session) or PyMC's own NUTS (its chains run one after another).
    target_accept : float, optional
        Target acceptance rate of NUTS; raise it if divergences are reported. Default 0.9
        (0.99 for ``calibration="hierarchical"``), above PyMC's 0.8: θ and q0 lie on a
        narrow ridge (the test share p pins θ·J + 1 − q0), where the smaller steps raise the
        bulk ESS by about 15 % at similar cost (8 seeds on a single group). The hierarchical
        model adds the funnel of the logit scales: with 6 well-calibrated systems, 2 of 6
        seeds diverged at 0.95, 1 at 0.98 and none at 0.99, whose ESS was as high.
    progressbar : bool, optional
        Show the sampler's progress bar. None (default): shown in a terminal or a Jupyter
        notebook, not when the environment variable ``CI`` is set or under pytest
        (:func:`bayesjudge._progress.show_progress`).
    method : {"mcmc", "exact"}, default "mcmc"
        ``"exact"`` computes the posterior without MCMC (:mod:`bayesjudge.core.exact`):
        available for ``calibration="separate"`` with Beta (parameters ≥ 1) or known priors,
        every group with its own calibration counts, ``aggregate`` None, ``"auto"``,
        ``"test"`` or weights, and ``judge_better_than_chance=False``. ``summary()`` then
        reports the exact mean, sd, median, equal-tailed interval and HDI of θ, q0, q1
        (quantile error < 1e-4) and, with the flat θ prior of the stratified design, of
        ``youden``; ``posterior`` holds ``chains × draws`` i.i.d. exact draws (default
        4 × 1000, the chain dim kept for ArviZ), made from ``random_seed`` on first access
        (not by ``fit`` or such a summary), from which the other derived variables (``p``,
        ``theta_total``), ``compare`` and ``ppc`` are computed. ``tune``, ``sampler`` and
        ``target_accept`` are not used; ESS is the number of draws and r_hat is 1
        (independent draws); no ConvergenceWarning. The engine's blocks of 512 groups run
        on a thread pool (the CPUs available, at most 4; the result does not depend on
        it). Not
        available for the paired model. Under the random labelling design the engine is
        called with ``design="random"`` (the posterior of the stratified design with θ prior
        Beta(a + m1, b + m0)).
    estimand : {"population", "test-set"}, default "population"
        What θ means in the results. ``"population"``: the probability that an answer of
        the system (in the stratum) is correct. ``"test-set"``: the share of truly correct
        answers among this evaluation's items; the posterior then also holds ``theta_test``
        (system, stratum), and ``theta_total_test`` (system) beside ``theta_total``, which
        :meth:`Fit.summary`, :meth:`Fit.compare` and the report use in place of ``theta``
        (``theta`` stays in the posterior). Per posterior draw the truly correct count
        among the n unlabelled items is drawn as T_u = Bin(k, θ q1 / p) +
        Bin(n − k, θ (1 − q1) / (1 − p)) (seeded from ``random_seed``); under the random
        design θ_test = (m1 + T_u) / (n + m0 + m1) (the labelled items' truth is known),
        under the stratified design θ_test = T_u / n (the test items only; NaN where n = 0).

    pool_judges : bool, default False
        Jury counts only (binary or K-category): draw the judges' logit q's (K categories: the
        logits of their confusion rows) around a common mean.
    dependence : {None, "item"}, default None
        Jury counts only (binary or K-category): ``"item"`` adds a shared item effect on the
        judges given the truth.

    Returns
    -------
    Fit
        The posterior as an :class:`xarray.DataTree` with settings, and methods for
        summaries, comparisons, posterior predictive checks and saving.

    Raises
    ------
    ValueError
        For a bad option or seed (named in the message), before anything is compiled; for
        ``estimand="test-set"`` with the random design and one calibration set shared over a
        dim (its truth counts do not say which group's items they are).
    KeyboardInterrupt
        When sampling is interrupted (Ctrl-C): the samplers' partial draws are discarded, so
        no Fit of fewer draws than asked is ever returned.

    Warns
    -----
    ConvergenceWarning
        On divergent transitions, r_hat > 1.01, or bulk/tail ESS < 400, with the numbers and
        what to try.
    SmallSampleWarning
        If a calibration group lacks truly-incorrect or truly-correct items.
    LowJudgeQualityWarning
        With ``judge_better_than_chance=True``, before sampling, if a calibration group's
        counts contradict J > 0 (even the 97.5 % upper bounds of q0 and q1 sum to less than 1).

    See Also
    --------
    bayesjudge.build_model : The model, to inspect or extend it.
    bayesjudge.estimate : Closed-form estimates (Rogan-Gladen, Lang-Reiczigel, ...).

    Notes
    -----
    The posterior interval of θ accounts for the uncertainty of the test share and of the
    judge's q0, q1 (from the calibration counts and, in the hierarchical model, from the
    other groups). With flat priors and moderate samples it is close to the Lang-Reiczigel
    interval: at n = 1000, m0 = m1 = 250 and J ≥ 0.6 its ends lie within 0.015 (measured:
    0.012 at most). With a weaker judge the posterior of θ = (p + q0 − 1) / J is skewed while
    the Lang-Reiczigel interval is symmetric (0.016 apart at q0 = q1 = 0.7). Near the
    boundaries it stays inside [0, 1] where the closed form is clipped.

    Counts with repeated verdicts of an item (``counts.has_clusters``: Inspect epochs,
    several samples per prompt) are fitted by the item-effect model (``models/item-effect.md``):
    a Beta propensity per item, so an item's verdicts are correlated; separate calibration,
    NUTS, population θ, no ``theta_total``; ``fit.config["model"] == "item-effect"``. The
    options it cannot honour are refused by name
    (:func:`bayesjudge.models.item_effect.item_effect_config`).

    Examples
    --------
    >>> import bayesjudge as bj
    >>> counts = bj.JudgeCounts.from_counts(n=1000, k=400, m0=100, tn=70, m1=100, tp=90)
    >>> result = bj.fit(counts, random_seed=1)
    >>> table = result.summary(ci_prob=0.95)
    >>> theta = table[table.variable == "theta"].iloc[0]
    >>> bool(theta.eti_lower < 1 / 6 < theta.eti_upper)  # Rogan-Gladen: (0.4 - 0.3) / 0.6
    True
    >>> result.compare  # doctest: +ELLIPSIS
    <bound method Fit.compare of <bayesjudge.Fit calibration='separate' systems=1 ...>>
    """
    if isinstance(counts, JuryItems | CategoricalJuryCounts | JuryCounts):
        return _fit_several_judges(
            counts, pool_over=pool_over, aggregate=aggregate, paired=paired, sampler=sampler,
            method=method, estimand=estimand, confusion=confusion, scores=scores,
            calibration=calibration, dependence=dependence, pool_judges=pool_judges,
            priors=priors, judge_better_than_chance=judge_better_than_chance, draws=draws,
            tune=tune, chains=chains, random_seed=random_seed, target_accept=target_accept,
            progressbar=progressbar,
        )  # fmt: skip
    if pool_judges is not False or dependence is not None:
        raise ValueError(
            "pool_judges= and dependence= are options of several judges' verdict patterns "
            "(JuryCounts); drop them, or build a JuryCounts."
        )
    calibration = "separate" if calibration is None else calibration
    if isinstance(counts, CategoricalCounts):
        _check_categorical_options(
            aggregate=aggregate, judge_better_than_chance=judge_better_than_chance,
            paired=paired, sampler=sampler, method=method, estimand=estimand,
        )  # fmt: skip
        return fit_categorical(
            counts, calibration=calibration, pool_over=pool_over, confusion=confusion,
            priors=priors, scores=scores, draws=draws, tune=tune, chains=chains,
            random_seed=random_seed, target_accept=target_accept, progressbar=progressbar,
        )  # fmt: skip
    if confusion != "free" or scores is not None:
        raise ValueError(
            "confusion= and scores= are options of K-category counts (CategoricalCounts); "
            "binary counts have q0, q1. Drop them, or build a CategoricalCounts."
        )
    counts = JudgeCounts(counts)
    if counts.has_clusters:
        # Repeated verdicts of an item are correlated: the item-effect model (its own options
        # check; build_from_config builds it for clustered counts, here and after load).
        config = item_effect_config(
            counts, calibration=calibration, pool_over=pool_over, priors=priors,
            aggregate=aggregate, judge_better_than_chance=judge_better_than_chance,
            paired=paired, method=method, estimand=estimand,
        )  # fmt: skip
        settings = _mcmc_settings(
            sampler, "separate", draws=draws, tune=tune, chains=chains,
            random_seed=random_seed, target_accept=target_accept,
        )  # fmt: skip
        return _fit_mcmc(counts, config, sampler=sampler, settings=settings,
                         progress=show_progress(progressbar, name="progressbar"))  # fmt: skip
    paired = resolve_paired(counts, paired)
    config = model_config(
        calibration, pool_over, priors, aggregate, judge_better_than_chance, paired,
        counts.design,
    )  # fmt: skip
    if method not in METHODS:
        raise ValueError(f"method must be one of {list(METHODS)}; got {method!r}.")
    estimand = _check_estimand(counts, estimand)
    if config["calibration"] == "shared":
        # One q0, q1 for the pooled groups: test on their own labels that this fits (Fiedler).
        check_pooled_calibration(counts, tuple(config["pool_over"]), alpha=0.05, stacklevel=3)
    progressbar = show_progress(progressbar, name="progressbar")
    if method != "exact":
        _warn_conflict(counts, stacklevel=3)
    if method == "exact":
        result = _fit_exact_checked(counts, config, draws=draws, chains=chains,
                                    random_seed=random_seed, estimand=estimand)  # fmt: skip
        return _with_estimand(result)
    settings = _mcmc_settings(
        sampler,
        calibration,
        draws=draws,
        tune=tune,
        chains=chains,
        random_seed=random_seed,
        target_accept=target_accept,
    )
    result = _fit_mcmc(
        counts, config, sampler=sampler, settings=settings, progress=progressbar,
        estimand=estimand,
    )  # fmt: skip
    return _with_estimand(result)


MAX_COMPARE_VALUES = 200_000_000  # Fit.compare: draws of differences kept at most (1.6 GB)


CONFLICT_SD = 3.0  # test counts contradicting the calibration by more: a warning before NUTS


def _warn_conflict(counts: JudgeCounts, stacklevel: int) -> None:
    """Warn where a group's test counts contradict its calibration (separated modes)."""
    if counts.design != "stratified":
        return
    ds = counts.dataset
    k, n, tn, m0, tp, m1 = (ds[v].transpose("system", "stratum").values
                            for v in ("k", "n", "tn", "m0", "tp", "m1"))  # fmt: skip
    both = (m0 > 0) & (m1 > 0)  # without labels of a kind a q is left to its prior
    sds = np.zeros(k.shape)
    sds[both] = data_conflict(k[both], n[both], tn[both], m0[both], tp[both], m1[both])
    bad = np.argwhere(sds > CONFLICT_SD)
    if not bad.size:
        return
    where = ", ".join(
        f"{terminal_safe(str(counts.systems[i]))}/{terminal_safe(str(counts.strata[j]))} "
        f"({sds[i, j]:.1f} sd)"
        for i, j in bad[:MAX_LISTED]
    )
    more = f" and {len(bad) - MAX_LISTED} more" if len(bad) > MAX_LISTED else ""
    warnings.warn(
        f"The test counts contradict the calibration counts in {len(bad)} group(s): {where}"
        f"{more}. No θ in [0, 1] reconciles the judged-correct share with the calibrated "
        "sensitivity and specificity, so the posterior has separated modes (θ near 0 with q0 "
        "near 1, θ near 1 with q1 near 1) that NUTS chains may not all find, and r_hat "
        "cannot tell when every chain sits in the same, negligible one. Compare with "
        "method='exact' (exact for such groups), or run more chains, and check the data (does "
        "the judge behave differently on the test set?).",
        ConvergenceWarning,
        stacklevel=stacklevel + 1,
    )


def _check_estimand(counts: JudgeCounts, estimand) -> str:
    """Return ``estimand`` after checking it is one of :data:`ESTIMANDS` and defined here."""
    if not isinstance(estimand, str) or estimand not in ESTIMANDS:
        raise ValueError(
            f"estimand must be one of {list(ESTIMANDS)}; got {estimand!r}. Use 'population' "
            f"for the probability that a system's answer is correct, or 'test-set' for the "
            f"share of truly correct answers among this evaluation's items."
        )
    if estimand == "test-set" and counts.design == "random" and counts.calibration_shared_over:
        raise ValueError(
            f"estimand='test-set' is not defined for these counts: under the random labelling "
            f"design the labelled items are part of the test set, but one calibration set is "
            f"shared over {list(counts.calibration_shared_over)}, so its known truth counts "
            f"m1 cannot be assigned to a group. Give each group its own labelled items, or use "
            f"estimand='population'."
        )
    return estimand


def _test_set_theta(posterior: xr.Dataset, counts: JudgeCounts, seed: int) -> dict:
    """Draws of the test-set θ per group (and over strata): see ``estimand`` in :func:`fit`.

    Per posterior draw, :func:`bayesjudge.core.exact.test_set_theta_draws`: T_u truly correct
    among the n unlabelled (test) items; θ_test = (m1 + T_u) / (n + m0 + m1) under the random
    design, T_u / n under the stratified design (NaN where the denominator is 0). The
    generator is seeded from ``seed`` (its SeedSequence child 1, apart from the sampler's).
    ``theta_total_test`` (with ``theta_total``) is the share over all strata's items.
    """
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1,)))
    theta = posterior["theta"].transpose("chain", "draw", *DIMS)
    q0, q1 = (posterior[v].broadcast_like(theta).transpose(*theta.dims).values
              for v in ("q0", "q1"))  # fmt: skip
    ds = counts.dataset
    k, n, m0, m1 = (ds[v].transpose(*DIMS).values.astype(np.int64) for v in ("k", "n", "m0", "m1"))
    group = test_set_theta_draws(theta.values, q0, q1, k, n, m0, m1, design=counts.design, rng=rng)
    out = {"theta_test": theta.copy(data=group)}
    if "theta_total" in posterior:
        size = n + m0 + m1 if counts.design == "random" else n
        total = size.sum(-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.nansum(group * size, axis=-1) / np.where(total > 0, total, 1)
        share = np.where(total > 0, share, np.nan)
        out["theta_total_test"] = theta.isel(stratum=0, drop=True).copy(data=share)
    return out


def _with_estimand(result: Fit) -> Fit:
    """Add the test-set θ draws to a fit made for ``estimand="test-set"`` (else unchanged)."""
    if result.estimand != "test-set":
        return result
    posterior = result.posterior
    derived = _test_set_theta(posterior, result.counts, int(result.config["random_seed"]))
    result.tree["posterior"] = xr.DataTree(posterior.assign(derived))
    return result


def _fit_exact_checked(
    counts: JudgeCounts, config: dict, *, draws, chains, random_seed, estimand="population"
):
    """Check the options of ``method="exact"`` and fit exactly (see :func:`_fit_exact`)."""
    if config["paired"]:
        raise ValueError(
            "method='exact' integrates the unpaired model group by group; the paired model "
            "(a Dirichlet over the systems' joint correctness, used because these counts carry "
            "a joint verdict table) needs method='mcmc'. Pass paired=False to use the exact "
            "engine without the pairing."
        )
    for name, value, low in (("draws", draws, 1), ("chains", chains, 1)):
        _check_int(name, value, low)
    return _fit_exact(counts, config, draws=int(draws), chains=int(chains),
                      random_seed=_check_seed(random_seed), estimand=estimand)  # fmt: skip


def _mcmc_settings(
    sampler: str, calibration: str, *, draws, tune, chains, random_seed, target_accept
) -> dict:
    """Check the sampler options of :func:`fit` and return them as sampler settings."""
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {list(SAMPLERS)}; got {sampler!r}.")
    for name, value, low in (("draws", draws, 1), ("tune", tune, 0), ("chains", chains, 1)):
        _check_int(name, value, low)
    if target_accept is None:
        target_accept = 0.99 if calibration == "hierarchical" else 0.9
    target_accept = check_open_unit(
        "target_accept", target_accept, "e.g. 0.9, or 0.99 after divergences"
    )
    return dict(
        draws=int(draws),
        tune=int(tune),
        chains=int(chains),
        seed=int(_check_seed(random_seed)),
        target_accept=target_accept,
    )


def _fit_mcmc(
    counts: JudgeCounts, config: dict, *, sampler: str, settings: dict, progress,
    estimand: str = "population",
):  # fmt: skip
    """Build the model, sample it and return the checked :class:`Fit` (``method="mcmc"``)."""
    model = build_from_config(counts, config)
    if sampler == "nutpie":
        tree = _sample_nutpie(model, counts, config, progress=progress, **settings)
    else:
        tree = _sample_pymc(
            model, progress=progress, initvals=initial_points(model, config), **settings
        )
    fit_config = {
        **config,
        "draws": settings["draws"],
        "tune": settings["tune"],
        "chains": settings["chains"],
        "random_seed": settings["seed"],
        "sampler": sampler,
        "target_accept": settings["target_accept"],
        "estimand": estimand,
    }
    for name, ds in _observed_tree(model).items():
        tree[name] = xr.DataTree(ds)
    tree["counts"] = xr.DataTree(counts.dataset)
    result = Fit(tree, fit_config, model=model)
    result.check_sampling(stacklevel=3)  # the caller of fit
    return result


PAIR_LABELS = ("first", "second")


def _pair_counts(counts: JudgeCounts, i: int, j: int) -> JudgeCounts:
    """Return counts of systems i, j relabelled ``PAIR_LABELS`` with their marginal joint table.

    :meth:`JudgeCounts.sel` sums the joint table of all K systems over the other systems'
    verdicts (and keeps a shared calibration set shared). The fixed labels give every pair the
    same model structure, compiled once.
    """
    systems = counts.systems
    pair = counts.sel(system=[systems[i], systems[j]]).dataset
    return JudgeCounts(pair.assign_coords(system=list(PAIR_LABELS)))


def fit_pairwise(
    counts: JudgeCounts,
    pairs=None,
    *,
    var: str = "theta",
    ci_prob: float = 0.95,
    random_seed: int | None = None,
    **fit_kwargs,
) -> xr.Dataset:
    """Paired differences of every pair of systems, each from its own 2-system paired fit.

    The route for comparisons of more than 6 systems on shared items, where the joint model
    of :func:`fit` (2^K cells) is too large: for each pair (a, b) the joint verdict table is
    summed over the other systems, and the paired model of a and b alone is fitted. All pairs
    share one model structure, compiled once.

    Parameters
    ----------
    counts : JudgeCounts
        Counts with a joint verdict table (:attr:`JudgeCounts.joint`) of at least 2 systems.
    pairs : sequence of (label, label), optional
        The pairs to compare; default every pair in the order of ``counts.systems``.
    var : {"theta", "theta_total"}, default "theta"
        The variable whose difference is reported.
    ci_prob : float, default 0.95
        Probability of the equal-tailed interval.
    random_seed : int, optional
        Seed from which each pair's sampler seed is derived.
    **fit_kwargs
        Model and sampler options of :func:`fit` (``calibration``, ``priors``, ``draws``,
        ...); not ``paired`` (always True) or ``method="exact"``.

    Returns
    -------
    xarray.Dataset
        As :meth:`Fit.compare`: dim ``pair`` (labels ``"a - b"``, coords ``first``,
        ``second``), variables ``difference`` (draws), ``mean``, ``median``, ``sd``, ``ci``,
        ``prob_greater``; plus ``r_hat`` and ``ess_bulk`` of the difference per pair, and
        attrs ``ci_prob``, ``ci_kind``, ``var``, ``dim``, ``method`` and the pair seeds.

    Raises
    ------
    ValueError
        If ``counts`` have no joint verdict table, a pair names an unknown or the same
        system, or ``fit_kwargs`` set ``paired``.

    Warns
    -----
    ConvergenceWarning, SmallSampleWarning
        From a pair's fit, with the pair named (its systems appear as "first" and "second").

    Notes
    -----
    Each difference uses the pairing of its two systems on the items shared by all K systems
    (the joint table); items shared by only some systems enter as unpaired. The differences
    of different pairs come from separate fits, so their draws are not jointly distributed:
    use them pair by pair, not in sums across pairs.

    Examples
    --------
    >>> import bayesjudge as bj
    >>> from bayesjudge.models.fit import fit_pairwise
    >>> systems = ["a", "b", "c"]
    >>> frame = bj.simulate.simulate_paired_items(
    ...     [0.7, 0.6, 0.5], 0.9, 0.9, n=300, correlation=0.5, system=systems, random_seed=5
    ... )
    >>> _, cal = bj.simulate_items([0.7, 0.6, 0.5], 0.9, 0.9, n=1, m0=100, m1=100,
    ...                            system=systems, random_seed=6)
    >>> counts = bj.JudgeCounts.from_frames(frame, cal, system="system", item="item")
    >>> d = fit_pairwise(counts, pairs=[("a", "c")], random_seed=8)
    >>> d["pair"].values.tolist(), bool(d["ci"].sel(ci_bound="lower").item() > 0)
    (['a - c'], True)
    """
    counts = JudgeCounts(counts)
    pairs = _checked_pairs(counts, pairs, fit_kwargs)
    seed = _check_seed(random_seed)
    seeds = np.random.SeedSequence(seed).generate_state(len(pairs)).tolist()
    results = [
        _fit_pair(counts, a, b, int(pair_seed), var=var, ci_prob=ci_prob, fit_kwargs=fit_kwargs)
        for (a, b), pair_seed in zip(pairs, seeds, strict=True)
    ]
    out = xr.concat(results, dim="pair", combine_attrs="drop_conflicts")
    out.attrs.update(
        {
            "ci_prob": ci_prob,
            "ci_kind": "eti",
            "var": var,
            "dim": "system",
            "method": "pairwise paired model (one 2-system fit per pair)",
            "random_seed": _attr_seed(seed),
            "pair_seeds": json.dumps(seeds),
        }
    )
    return out


def _checked_pairs(counts: JudgeCounts, pairs, fit_kwargs: dict) -> list[tuple]:
    """Check the counts, pairs and options of :func:`fit_pairwise`; the pairs as tuples."""
    if "paired" in fit_kwargs:
        raise ValueError("fit_pairwise always fits the paired model; do not pass paired=.")
    if getattr(counts, "joint", None) is None:
        raise ValueError(
            "fit_pairwise needs the joint verdict table of the systems on shared items; these "
            "counts have none. Count item-level tables with JudgeCounts.from_frames(test, "
            "calibration, system='system', item='item')."
        )
    systems = counts.systems
    if pairs is None:
        pairs = list(combinations(systems, 2))
    pairs = [tuple(pair) for pair in pairs]
    for pair in pairs:
        if len(pair) != 2 or pair[0] == pair[1] or any(s not in systems for s in pair):
            raise ValueError(
                f"pairs must hold two different system labels of {systems}; got {pair!r}."
            )
    if not pairs:
        raise ValueError(f"fit_pairwise needs at least one pair of systems; got {pairs!r}.")
    return pairs


def _fit_pair(
    counts: JudgeCounts, a, b, seed: int, *, var: str, ci_prob: float, fit_kwargs: dict
) -> xr.Dataset:
    """Fit the paired model of systems a and b; their difference as one ``pair`` of compare.

    The pair's warnings are re-issued naming the pair, pointing at the caller of
    :func:`fit_pairwise`.
    """
    systems = counts.systems
    sub = _pair_counts(counts, systems.index(a), systems.index(b))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fit(sub, paired=True, random_seed=seed, **fit_kwargs)
    for w in caught:
        message = str(w.message)
        if issubclass(w.category, BayesJudgeWarning):
            message = f"pair {a!r} - {b!r} (shown as 'first', 'second'): {message}"
        warnings.warn(message, w.category, stacklevel=3)
    compared = result.compare(dim="system", var=var, ci_prob=ci_prob)
    single = compared["difference"].isel(pair=0, drop=True).to_dataset(name="d")
    compared["r_hat"] = az.rhat(single)["d"].expand_dims(pair=compared["pair"].values)
    compared["ess_bulk"] = az.ess(single, method="bulk")["d"].expand_dims(
        pair=compared["pair"].values
    )
    return compared.assign_coords(
        pair=[pair_label(a, b)], first=("pair", [a]), second=("pair", [b])
    )


CALIBRATION_DESIGNS = ("separate", "shared", "hierarchical")


def compare_designs(
    counts: JudgeCounts,
    designs=CALIBRATION_DESIGNS,
    *,
    var: str = "theta",
    ci_prob: float = 0.95,
    random_seed: int | None = None,
    **fit_kwargs,
) -> xr.Dataset:
    """Pairwise Δθ under shared, system-specific and hierarchical calibration, side by side.

    Fits the model once per calibration design, with the judge's q's shared or pooled across
    systems (``pool_over="system"``, so every stratum keeps its own), and stacks
    :meth:`Fit.compare` along a ``design`` dim. The design the calibration data support,
    from :func:`bayesjudge.judge_diagnostics`, is in the attrs.

    Parameters
    ----------
    counts : JudgeCounts
        Counts of at least 2 systems with a calibration set per system (shared calibration
        cannot be checked, or fitted as ``"separate"``, when one set serves every system).
    designs : sequence of {"separate", "shared", "hierarchical"}, default all three
        The calibration designs to fit.
    var : {"theta", "theta_total"}, default "theta"
        The variable whose pairwise difference is compared.
    ci_prob : float, default 0.95
        Probability of the equal-tailed credible interval.
    random_seed : int, optional
        Seed from which each design's sampler seed and the diagnostics' bootstrap seed are
        derived; drawn and recorded in the attrs when None.
    **fit_kwargs
        Options of :func:`fit` (``priors``, ``draws``, ``paired``, ...); not ``calibration``
        or ``pool_over``.

    Returns
    -------
    xarray.Dataset
        Dims ``design``, ``pair`` (labels ``"a - b"``, coords ``first``, ``second``), the
        variable's other dims and ``ci_bound``; variables ``mean``, ``median``, ``sd``, ``ci``,
        ``prob_greater``, and ``youden`` (posterior mean J per system under each design).
        attrs ``ci_prob``, ``ci_kind="eti"``, ``var``, ``random_seed``, ``design_seeds``,
        ``supported_design`` and ``recommendation`` (plain words, from the calibration data).

    Raises
    ------
    ValueError
        For an unknown design, fewer than 2 systems, or ``fit_kwargs`` that set
        ``calibration`` or ``pool_over``.

    Notes
    -----
    A shared design narrows Δθ by assuming the judge errs alike on every system; when ΔJ ≠ 0
    that assumption moves Δθ by Fiedler's App. C bias, so a shared Δθ that differs from the
    separate one by more than its width is a sign the assumption fails. Hierarchical
    calibration lies in between: it shrinks the systems' q's towards each other as far as the
    calibration data allow.

    Examples
    --------
    >>> import bayesjudge as bj
    >>> from bayesjudge.models.fit import compare_designs
    >>> counts = bj.JudgeCounts.from_counts(
    ...     n=[800, 800], k=[520, 560], m0=[150, 150], tn=[128, 124], m1=[150, 150],
    ...     tp=[133, 137], system=["a", "b"])
    >>> table = compare_designs(counts, designs=["separate", "shared"], random_seed=3)
    >>> table["design"].values.tolist(), table["mean"].dims
    (['separate', 'shared'], ('design', 'pair', 'stratum'))
    """
    counts = JudgeCounts(counts)
    clash = sorted({"calibration", "pool_over"} & set(fit_kwargs))
    if clash:
        raise ValueError(
            f"compare_designs sets {clash} itself (one fit per design, pooled over systems); "
            f"remove them, or call bj.fit directly."
        )
    designs = [designs] if isinstance(designs, str) else list(designs)
    bad = [d for d in designs if d not in CALIBRATION_DESIGNS]
    if bad or not designs or len(set(designs)) != len(designs):
        raise ValueError(
            f"designs must be distinct values of {CALIBRATION_DESIGNS}; got {designs!r}."
        )
    if len(counts.systems) < 2:
        raise ValueError(
            f"compare_designs compares systems and needs at least 2; got {counts.systems}."
        )
    seed = _check_seed(random_seed)
    design_seeds = np.random.SeedSequence(seed).generate_state(len(designs) + 1).tolist()
    tables = []
    for design, design_seed in zip(designs, design_seeds, strict=False):
        pool = {} if design == "separate" else {"pool_over": "system"}
        result = fit(counts, calibration=design, random_seed=int(design_seed), **pool, **fit_kwargs)
        table = result.compare(dim="system", var=var, ci_prob=ci_prob).drop_vars("difference")
        youden = result.posterior["youden"].mean(("chain", "draw"))
        if "system" not in youden.dims:
            youden = youden.expand_dims(system=counts.systems)
        table["youden"] = youden
        tables.append(table)
    out = xr.concat(tables, dim="design", combine_attrs="override", join="outer")
    out = out.assign_coords(design=designs)
    diagnostics = judge_diagnostics(counts, random_seed=int(design_seeds[-1]))
    out.attrs = {
        "ci_prob": ci_prob,
        "ci_kind": "eti",
        "var": var,
        "random_seed": _attr_seed(seed),
        "design_seeds": json.dumps([int(s) for s in design_seeds[: len(designs)]]),
        "supported_design": diagnostics.attrs["design"],
        "recommendation": diagnostics.attrs["recommendation"],
    }
    return out


def _exact_unsupported(counts: JudgeCounts, config: dict) -> str | None:
    """Why method="exact" cannot fit this model (None if it can)."""
    priors = Priors.from_dict(config["priors"])
    if config["calibration"] != "separate":
        return (
            f"calibration={config['calibration']!r} couples the groups' q0, q1; the exact "
            f"engine handles calibration='separate' only. Use method='mcmc'."
        )
    if config["judge_better_than_chance"]:
        return (
            "judge_better_than_chance=True (the J > 0 truncation) is not supported by the exact "
            "engine; use method='mcmc', or drop the option when the calibration sets are "
            "informative."
        )
    if config["aggregate"] == "dirichlet":
        return (
            "aggregate='dirichlet' adds Dirichlet stratum weights to the model, which the exact "
            "engine does not integrate; use aggregate='test' or fixed weights with "
            "method='exact', or method='mcmc'."
        )
    if counts.calibration_shared_over:
        random = (
            " (under the random labelling design its truth counts inform the mean of θ over "
            "the groups that share it, which couples them)"
            if counts.design == "random"
            else ""
        )
        return (
            f"these counts carry one calibration set shared over "
            f"{list(counts.calibration_shared_over)}{random}; the exact engine needs every "
            f"group's own calibration counts. Use calibration='shared' with method='mcmc'."
        )
    a, b = priors.theta
    if a < 1 or b < 1:
        return (
            f"Priors.theta = {priors.theta} has an unbounded density; the exact engine needs "
            f"Beta parameters >= 1. Use method='mcmc'."
        )
    ds = counts.dataset
    for q, size, kind in (("q0", "m0", "incorrect"), ("q1", "m1", "correct")):
        empty = (ds[size] == 0).values
        if not priors.known(q) and empty.any():
            rows, cols = np.nonzero(empty)
            groups = [
                (counts.systems[i], counts.strata[j]) for i, j in zip(rows, cols, strict=True)
            ]
            groups = groups[:5]
            return (
                f"{size} = 0 for (system, stratum) {groups}: without truly {kind} calibration "
                f"items {q} is left to its prior, which the exact engine does not integrate "
                f"accurately. Add calibration items, fix {q} with Priors({q}=value), or use "
                f"method='mcmc'."
            )
    return None


def _fit_exact(
    counts: JudgeCounts, config: dict, *, draws: int, chains: int, random_seed: int,
    estimand: str = "population",
):  # fmt: skip
    """Fit ``method="exact"``: the exact marginals now, the i.i.d. draws when first needed.

    summary() of θ, q0, q1 (and of youden under the flat θ prior) comes from the marginals;
    the ``chains × draws`` joint draws (:func:`_exact_draws`, seeded by ``random_seed``, so
    the same whenever they are made) are made on the first access to ``posterior`` or
    ``tree``, which is most of an exact fit's cost at thousands of groups (issue 13).
    """
    reason = _exact_unsupported(counts, config)
    if reason:
        raise ValueError(f"method='exact' is not available here: {reason}")
    priors = Priors.from_dict(config["priors"])
    # Validates the counts against the priors; used by ppc().
    model = build_from_config(counts, config)
    ds = counts.dataset
    data = [ds[v].values for v in ("k", "n", "tn", "m0", "tp", "m1")]
    # The random design's truth counts: the engine's design keyword (Beta(a + m1, b + m0)).
    engine = {"theta_prior": priors.theta, "q0_prior": priors.q0, "q1_prior": priors.q1,
              "design": counts.design}  # fmt: skip
    # J's exact marginal needs the flat θ prior (stratified design); else youden from draws.
    flat = counts.design == "stratified" and tuple(priors.theta) == (1.0, 1.0)
    variables = (*_EXACT_VARS, "youden") if flat else _EXACT_VARS
    try:
        with ThreadPoolExecutor(max_workers=_exact_threads()) as pool:
            marginals = exact_marginals(*data, **engine, **EXACT_ENGINE, variables=variables,
                                        mapper=pool.map)  # fmt: skip
    except ValueError as err:
        raise ValueError(f"method='exact' is not available here: {err}") from None
    youden = marginals.get("youden")
    parts = () if youden is None else (youden.grid, youden.density, youden.cdf_values)
    if not all(np.all(np.isfinite(x)) for x in parts):
        del marginals["youden"]  # an extreme group the lattice misses: youden from the draws
    coords = {"system": counts.systems, "stratum": counts.strata}
    grids = {}
    for v, m in marginals.items():
        point = ("system", "stratum", f"{v}_point")
        grids[f"{v}_grid"] = (point, m.grid)
        grids[f"{v}_density"] = (point, m.density)
        grids[f"{v}_cdf"] = (point, m.cdf_values)
    exact = xr.Dataset(grids, coords=coords)
    exact.attrs.update({k: int(v) for k, v in EXACT_ENGINE.items() if v is not None})
    tree = xr.DataTree.from_dict({"exact": exact})
    for name, frame in _observed_tree(model).items():
        tree[name] = xr.DataTree(frame)
    tree["counts"] = xr.DataTree(counts.dataset)
    fit_config = {
        **config,
        "method": "exact",
        "engine": dict(EXACT_ENGINE),
        "draws": draws,
        "tune": 0,
        "chains": chains,
        "random_seed": random_seed,
        "sampler": "exact",
        "target_accept": None,
        "estimand": estimand,
    }
    names = [*_EXACT_VARS, "youden", "p"]
    if aggregate_weights(counts, config["aggregate"])[0] is not None:
        names.append("theta_total")
    tree.attrs["method"] = "exact"
    return Fit(tree, fit_config, model=model, lazy_posterior=(_exact_draws, names))


def _exact_threads() -> int:
    """Threads for the exact engine's blocks: the CPUs this process may use, at most 4.

    numpy and scipy release the GIL in the blocks' array work; the marginals do not depend
    on the number of threads (each block is computed as it would be alone).
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(EXACT_MAX_THREADS, cpus))


def _exact_draws(counts: JudgeCounts, config: dict) -> xr.Dataset:
    """Make the exact fit's posterior: ``chains × draws`` i.i.d. joint draws and derived ones.

    Reproducible: the draws depend on the counts, priors and ``random_seed`` only.
    """
    priors = Priors.from_dict(config["priors"])
    ds = counts.dataset
    data = [ds[v].values for v in ("k", "n", "tn", "m0", "tp", "m1")]
    chains, draws = int(config["chains"]), int(config["draws"])
    try:
        drawn = exact_draws(
            *data, size=draws * chains, rng=config["random_seed"], theta_prior=priors.theta,
            q0_prior=priors.q0, q1_prior=priors.q1, design=counts.design,
        )  # fmt: skip
    except ValueError as err:
        raise ValueError(f"method='exact' is not available here: {err}") from None
    coords = {"chain": np.arange(chains), "draw": np.arange(draws)}
    coords |= {"system": counts.systems, "stratum": counts.strata}
    dims = ("chain", "draw", *DIMS)
    drawn = {v: x.reshape(chains, draws, *x.shape[1:]) for v, x in drawn.items()}
    drawn["youden"] = drawn["q0"] + drawn["q1"] - 1
    drawn["p"] = drawn["theta"] * drawn["youden"] + (1 - drawn["q0"])  # θ q1 + (1 − θ)(1 − q0)
    posterior = xr.Dataset({v: (dims, x) for v, x in drawn.items()}, coords=coords)
    kind, weights = aggregate_weights(counts, config["aggregate"])
    if kind is not None:
        w = xr.DataArray(weights, dims=DIMS, coords={d: coords[d] for d in DIMS})
        posterior["theta_total"] = (posterior["theta"] * w).sum("stratum")
    posterior.attrs.update({"method": "exact", "draws": "i.i.d. from the exact posterior"})
    return posterior


def prior_predictive(
    counts: JudgeCounts,
    calibration: str = "separate",
    pool_over=None,
    priors=None,
    aggregate="auto",
    judge_better_than_chance: bool = False,
    paired: bool | None = None,
    *,
    draws: int = 500,
    random_seed: int | None = None,
) -> xr.DataTree:
    """Draw parameters and counts from the prior of a model, before seeing the counts.

    Parameters
    ----------
    counts : JudgeCounts
        Only the sizes (n, m0, m1), labels and labelling design are used; the observed k,
        tn, tp are returned for comparison but do not inform the draws. Under the random
        design the truth counts are drawn too: ``truth`` ~ Binomial(m0 + m1, θ) with
        m0 + m1 fixed (tn and tp are drawn given the observed m0, m1).
    calibration, pool_over, priors, aggregate, judge_better_than_chance, paired
        The model, as in :func:`bayesjudge.build_model`.
    draws : int, default 500
        Number of prior draws.
    random_seed : int, optional
        Seed of the draws; stored in the result's attrs.

    Returns
    -------
    xarray.DataTree
        Groups ``prior`` (θ, q0, q1, J, p, ...), ``prior_predictive`` (k, tn, tp, and
        ``truth`` under the random design) and ``observed_data``; dims ``chain`` (size 1),
        ``draw`` and the model's dims. Attrs ``random_seed``, ``design`` and the model
        configuration.

    Examples
    --------
    >>> import bayesjudge as bj
    >>> counts = bj.JudgeCounts.from_counts(n=100, k=40, m0=20, tn=14, m1=20, tp=18)
    >>> prior = bj.prior_predictive(counts, draws=200, random_seed=1)
    >>> prior["prior_predictive"].dataset["k"].sizes["draw"]
    200
    """
    counts = JudgeCounts(counts)
    config = model_config(
        calibration, pool_over, priors, aggregate, judge_better_than_chance,
        resolve_paired(counts, paired), counts.design,
    )  # fmt: skip
    _check_int("draws", draws, 1)
    random_seed = _check_seed(random_seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BayesJudgeWarning)  # no data yet: nothing to warn on
        model = build_from_config(counts, config)
    priors = Priors.from_dict(config["priors"])
    if config["judge_better_than_chance"] and not (priors.known("q0") or priors.known("q1")):
        prior = _prior_by_mcmc(counts, config, int(draws), random_seed)
        with _quiet_pymc(), _interruptible(), warnings.catch_warnings():
            # The draws already carry the Potential; PyMC's note that it ignores it is moot.
            warnings.filterwarnings("ignore", message="The effect of Potentials")
            replicated = pm.sample_posterior_predictive(
                xr.DataTree.from_dict({"posterior": prior}),
                model=model,
                var_names=list(_observed_names(model)),
                random_seed=_sampler_seed(random_seed),
                progressbar=False,
            )["posterior_predictive"].dataset
    else:
        with _quiet_pymc(), _interruptible():
            tree = pm.sample_prior_predictive(
                draws=int(draws), model=model, random_seed=_sampler_seed(random_seed)
            )
        prior, replicated = tree["prior"].dataset, tree["prior_predictive"].dataset
    observed = _observed_tree(model)["observed_data"]
    out = xr.DataTree.from_dict(
        {
            "prior": prior,
            "prior_predictive": _with_total_k(replicated[list(_observed_names(model))]),
            "observed_data": observed,
        }
    )
    out.attrs.update({"random_seed": _attr_seed(random_seed), "design": counts.design})
    out.attrs["bayesjudge_config"] = json.dumps(config, sort_keys=True)
    return out


def _prior_by_mcmc(counts: JudgeCounts, config: dict, draws: int, seed: int) -> xr.Dataset:
    """Prior draws by NUTS on empty counts (needed where the prior has a Potential).

    ``pm.sample_prior_predictive`` ignores Potentials, so the J > 0 prior with both q's free
    would come out wrong. With every count 0 the likelihood is flat and the posterior is the
    prior; strata weights from the test counts are passed as fixed weights.
    """
    empty = JudgeCounts(counts.dataset.map(np.zeros_like, keep_attrs=True))
    kind, weights = aggregate_weights(counts, config["aggregate"])
    config = {**config, "aggregate": weights.tolist() if weights is not None else kind}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BayesJudgeWarning)
        model = build_from_config(empty, config)
    tree = _sample_nutpie(
        model, empty, config, draws=draws, tune=1000, chains=1, seed=seed, target_accept=0.9,
        progress=False,
    )  # fmt: skip
    return tree["posterior"].dataset


@dataclass(frozen=True)
class PosteriorPredictiveCheck:
    """Posterior predictive draws of the observed counts and their Bayesian p-values.

    Attributes
    ----------
    tree : xarray.DataTree
        Groups ``posterior_predictive`` (replicated ``k``, ``tn``, ``tp`` per chain and draw,
        and ``truth`` under the random labelling design) and ``observed_data``.
    p_value : xarray.Dataset
        Per observed variable and group, the mid-p posterior predictive p-value
        ``P(rep > obs) + P(rep = obs) / 2``. Values near 0 or 1 (say below 0.025 or above
        0.975) mean the model does not reproduce that count.
    """

    tree: xr.DataTree
    p_value: xr.Dataset

    @property
    def replicated(self) -> xr.Dataset:
        """The replicated counts (``posterior_predictive`` group)."""
        return self.tree["posterior_predictive"].dataset

    @property
    def observed(self) -> xr.Dataset:
        """The observed counts (``observed_data`` group)."""
        return self.tree["observed_data"].dataset

    def plot(self, ci_prob: float = 0.95, ax=None):
        """Plot observed against replicated shares (:func:`bayesjudge.plots.plot_ppc`)."""
        return plot_ppc(self, ci_prob=ci_prob, ax=ax)


def _sorted_stats(x: np.ndarray, ci_prob: float) -> dict[str, np.ndarray]:
    """Mean, sd, median, ETI and HDI of i.i.d. draws x (draws on the last axis), one sort.

    The same numbers as ``mean``, ``std(ddof=1)``, ``median``, :func:`_quantile_interval` and
    ``az.hdi`` (its "nearest" rule: the narrowest interval between draws i and
    i + floor(ci_prob · n)), which sorted the draws twice; the quantiles by numpy's default
    (linear) rule, read off the sorted draws.
    """
    x = np.sort(x, axis=-1)
    n = x.shape[-1]
    quantiles = []
    for prob in ((1 - ci_prob) / 2, 0.5, (1 + ci_prob) / 2):
        h = prob * (n - 1)
        i = min(int(np.floor(h)), n - 2) if n > 1 else 0
        t = h - i
        a, b = x[..., i], x[..., min(i + 1, n - 1)]
        # numpy's lerp: from the nearer end, so that t = 1 gives b exactly.
        quantiles.append(b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t)
    inc = min(int(np.floor(ci_prob * n)), n - 1)
    best = np.argmin(x[..., inc:] - x[..., : n - inc], axis=-1)[..., None]
    lower = np.take_along_axis(x, best, -1)[..., 0]
    upper = np.take_along_axis(x, best + inc, -1)[..., 0]
    return {
        "mean": x.mean(-1),
        "sd": x.std(-1, ddof=1),
        "median": quantiles[1],
        "eti": (quantiles[0], quantiles[2]),
        "hdi": (lower, upper),
    }


def _summary_frame(ds: xr.Dataset) -> pd.DataFrame:
    """One variable's summary Dataset as rows (reset index), intervals as _lower/_upper columns.

    Built from the numpy arrays: per-column assignments into the Dataset re-aligned the group
    coordinates each time (~0.1 s of a 2,000-group summary).
    """
    dims = ds["mean"].dims
    if not dims:
        flat = ds.drop_vars(["eti", "hdi", "ci_bound"])
        for bound in ("lower", "upper"):
            flat[f"eti_{bound}"] = ds["eti"].sel(ci_bound=bound, drop=True)
            flat[f"hdi_{bound}"] = ds["hdi"].sel(ci_bound=bound, drop=True)
        return pd.DataFrame([flat.to_pandas()]).reset_index()
    cols = {}
    for v in ("mean", "sd", "median", "ess_bulk", "ess_tail", "r_hat"):
        cols[v] = ds[v].transpose(*dims).values.ravel()
    for v in ("eti", "hdi"):
        for bound in ("lower", "upper"):
            cols[f"{v}_{bound}"] = ds[v].sel(ci_bound=bound).transpose(*dims).values.ravel()
    levels = [ds.indexes[d] if d in ds.indexes else pd.RangeIndex(ds.sizes[d]) for d in dims]
    index = pd.MultiIndex.from_product(levels, names=list(dims))
    return pd.DataFrame(cols, index=index).reset_index()


def _quantile_interval(draws: xr.DataArray, ci_prob: float) -> xr.DataArray:
    q = draws.quantile([(1 - ci_prob) / 2, (1 + ci_prob) / 2], dim=("chain", "draw"))
    return q.rename(quantile="ci_bound").assign_coords(ci_bound=["lower", "upper"])


class Fit:
    """A fitted Bayesian model: the posterior as an :class:`xarray.DataTree` plus its settings.

    Built by :func:`bayesjudge.fit` or :func:`bayesjudge.load`; not meant to be constructed
    directly.

    Attributes
    ----------
    tree : xarray.DataTree
        Groups ``posterior``, ``sample_stats``, ``observed_data``, ``constant_data`` and
        ``counts`` (the :class:`JudgeCounts` data); root attrs hold the settings.
    config : dict
        Model and sampler settings (calibration, pool_over, priors, aggregate, design,
        estimand, draws, ...). The root attrs (and the posterior's) carry ``design`` and
        ``estimand`` too.
    """

    def __init__(self, tree: xr.DataTree, config: dict, model=None, lazy_posterior=None) -> None:
        # lazy_posterior: (make, names) of an exact fit whose draws are made on first access
        # to ``posterior`` or ``tree``, by make(counts, config) (variables ``names``).
        self._tree = tree
        self._lazy = lazy_posterior
        self.config = dict(config)
        self._model = model
        labelling = {"design": self.design, "estimand": self.estimand}
        self._tree.attrs.update(
            {
                "bayesjudge_version": __version__,
                "bayesjudge_config": json.dumps(self.config, sort_keys=True),
                "bayesjudge_config_hash": _config_hash(self.config),
                "random_seed": _attr_seed(self.config["random_seed"]),
                "calibration": self.config["calibration"],
                **labelling,
            }
        )
        if "posterior" in self._tree.children:
            self._tree["posterior"].attrs.update(labelling)

    # ----------------------------------------------------------------- access

    @property
    def tree(self) -> xr.DataTree:
        """The fit's DataTree (an exact fit makes its posterior draws on first access)."""
        if self._lazy is not None:
            make, _ = self._lazy
            posterior = make(self.counts, self.config)
            posterior.attrs.update({"design": self.design, "estimand": self.estimand})
            children = {"posterior": xr.DataTree(posterior), **dict(self._tree.children)}
            self._tree = xr.DataTree(dataset=self._tree.to_dataset(inherit=False),
                                     children=children)  # fmt: skip
            self._lazy = None
        return self._tree

    @tree.setter
    def tree(self, value: xr.DataTree) -> None:
        self._tree = value
        self._lazy = None

    @property
    def posterior(self) -> xr.Dataset:
        """The posterior draws, dims ``(chain, draw, system, stratum)``."""
        return self.tree["posterior"].dataset

    def _posterior_vars(self) -> list[str]:
        """Return the posterior's variable names, without making an exact fit's draws."""
        if self._lazy is not None:
            return list(self._lazy[1])
        return list(self._tree["posterior"].dataset.data_vars)

    @property
    def design(self) -> str:
        """The labelling design of the counts, ``"stratified"`` or ``"random"``.

        Fits saved before the design existed are ``"stratified"``.
        """
        return str(self.config.get("design", DEFAULT_DESIGN))

    @property
    def estimand(self) -> str:
        """``"population"`` or ``"test-set"`` (see ``estimand`` in :func:`bayesjudge.fit`)."""
        return str(self.config.get("estimand", "population"))

    @property
    def theta_var(self) -> str:
        """The posterior variable reported as θ: ``"theta_test"`` for the test-set estimand.

        Examples
        --------
        >>> import bayesjudge as bj
        >>> counts = bj.JudgeCounts.from_counts(n=900, k=500, m0=40, tn=32, m1=60, tp=54,
        ...                                     design="random")
        >>> bj.fit(counts, method="exact", estimand="test-set", random_seed=1).theta_var
        'theta_test'
        """
        return "theta_test" if self.estimand == "test-set" else "theta"

    @property
    def counts(self) -> JudgeCounts:
        """The counts the model was fitted to."""
        return JudgeCounts(self._tree["counts"].dataset)

    @property
    def model(self) -> pm.Model:
        """The PyMC model (rebuilt from the counts and configuration after :func:`load`)."""
        if self._model is None:
            self._model = build_from_config(self.counts, _model_config(self.config))
        return self._model

    def __repr__(self) -> str:
        c = self.config
        sizes = self.counts.sizes
        return (
            f"<bayesjudge.Fit calibration={c['calibration']!r} "
            + ("paired=True " if c.get("paired") else "")
            + (f"design={self.design!r} " if self.design != DEFAULT_DESIGN else "")
            + (f"estimand={self.estimand!r} " if self.estimand != "population" else "")
            + f"systems={sizes['system']} "
            f"strata={sizes['stratum']} draws={c['chains']}×{c['draws']} "
            + ("method='exact'" if self.method == "exact" else f"sampler={c['sampler']!r}")
            + f" seed={c['random_seed']}>"
        )

    def _repr_html_(self) -> str:
        table = self.summary(
            ci_prob=0.95,
            var_names=[
                v
                for v in (self.theta_var, self.theta_var.replace("theta", "theta_total"))
                if v in self._posterior_vars()
            ],
        )
        cols = ["variable", "system", "stratum", "mean", "eti_lower", "eti_upper", "r_hat"]
        body = table[cols].to_html(index=False, float_format=lambda x: f"{x:.3f}", na_rep="")
        return f"<p>{html.escape(repr(self))}</p>{body}"

    def _reported(self) -> list[str]:
        # The test-set estimand reports theta_test (theta_total_test) in place of θ (θ_total).
        skip = ("theta", "theta_total") if self.estimand == "test-set" else TEST_SET_VARS
        present = self._posterior_vars()
        return [v for v in REPORTED if v in present and v not in skip]

    @property
    def method(self) -> str:
        """``"mcmc"`` or ``"exact"`` (see :func:`bayesjudge.fit`)."""
        return self.config.get("method", "mcmc")

    def _exact_marginal(self, name: str):
        """Return the exact marginal of theta, q0, q1 or youden (a core.exact.Marginal)."""
        ds = self._tree["exact"].dataset
        return Marginal(
            grid=ds[f"{name}_grid"].values,
            density=ds[f"{name}_density"].values,
            cdf_values=ds[f"{name}_cdf"].values,
        )

    def _exact_stats(self, name: str, ci_prob: float) -> dict[str, np.ndarray]:
        """Exact mean, sd, median, ETI and HDI of theta, q0 or q1 (arrays over the groups)."""
        m = self._exact_marginal(name)
        probs = np.array([(1 - ci_prob) / 2, 0.5, (1 + ci_prob) / 2])
        q = m.quantile(probs.reshape(3, *(1,) * (m.grid.ndim - 1)))
        known = m.known
        value = m.grid[..., 0]
        q = np.where(known, value, q)
        first, var = m._moments()  # once for both (mean() and sd() would each integrate)
        return {
            "mean": np.where(known, value, first),
            "sd": np.where(known, 0.0, np.sqrt(var)),
            "median": q[1],
            "eti": (q[0], q[2]),
            "hdi": hdi(m, ci_prob),
        }

    def _exact_summary(self, name: str, ci_prob: float) -> xr.Dataset:
        """summary()'s Dataset of one variable of an exact fit, computed on numpy arrays.

        θ, q0, q1 (and youden, whose marginal an exact fit under the flat θ prior holds) from
        the exact marginals, HDI included, without making the draws; p, theta_total (and
        youden otherwise) from one sort of the i.i.d. draws (az.hdi and quantile sorted them
        twice). The Dataset is built once at the end: xarray's per-operation alignment of the
        group coordinates cost more than the statistics themselves at thousands of groups.
        """
        size = float(int(self.config["chains"]) * int(self.config["draws"]))
        if f"{name}_grid" in self._tree["exact"].dataset:
            dims = DIMS
            counts = self._tree["counts"].dataset
            coords = {d: counts.coords[d] for d in dims if d in counts.coords}
            stats = self._exact_stats(name, ci_prob)
            fixed = self._exact_marginal(name).known
        else:
            draws = self.posterior[name]
            dims = tuple(d for d in draws.dims if d not in ("chain", "draw"))
            x = draws.transpose(*dims, "chain", "draw").values
            x = x.reshape(*x.shape[:-2], -1)  # a view where the draws lie contiguous per group
            stats = _sorted_stats(x, ci_prob)
            fixed = ~(x.max(-1) > x.min(-1))
            coords = {d: draws.coords[d] for d in dims if d in draws.coords}
        shape = fixed.shape
        data = {k: (dims, np.asarray(stats[k], dtype=float).reshape(shape))
                for k in ("mean", "sd", "median")}  # fmt: skip
        for k in ("eti", "hdi"):
            bounds = [np.asarray(b, dtype=float).reshape(shape) for b in stats[k]]
            data[k] = (("ci_bound", *dims), np.stack(bounds))
        for k, value in (("ess_bulk", size), ("ess_tail", size), ("r_hat", 1.0)):
            data[k] = (dims, np.where(fixed, np.nan, value))
        return xr.Dataset(
            data,
            coords={**coords, "ci_bound": ["lower", "upper"]},
            attrs={"ci_prob": ci_prob, "ci_kind": "eti and hdi"},
        )

    # ----------------------------------------------------------------- diagnostics

    def diagnostics(self) -> dict:
        """Divergences, the largest r_hat and the smallest bulk/tail ESS of the reported variables.

        Examples
        --------
        >>> import bayesjudge as bj
        >>> counts = bj.JudgeCounts.from_counts(n=1000, k=400, m0=100, tn=70, m1=100, tp=90)
        >>> d = bj.fit(counts, random_seed=1).diagnostics()
        >>> d["divergences"], d["r_hat_max"] < 1.01, d["ess_bulk_min"] > 400
        (0, True, True)
        """
        if self.method == "exact":
            size = int(self.config["chains"]) * int(self.config["draws"])
            # I.i.d. draws from the exact posterior: nothing to diagnose.
            return {
                "divergences": 0,
                "draws": size,
                "r_hat_max": 1.0,
                "ess_bulk_min": float(size),
                "ess_tail_min": float(size),
                "worst": {},
            }
        # The model's variables (not the test-set θ, drawn afresh per draw from them).
        post = self.posterior[
            [v for v in REPORTED if v in self.posterior.data_vars and v not in TEST_SET_VARS]
        ]
        # Variables fixed by known priors are constant; their r_hat/ESS are undefined.
        varying = [v for v in post.data_vars if _varies(post[v])]
        post = post[varying]
        diverging = self.tree["sample_stats"].dataset["diverging"]
        out = {
            "divergences": int(diverging.sum()),
            "draws": int(diverging.size),
            "r_hat_max": float("nan"),
            "ess_bulk_min": float("nan"),
            "ess_tail_min": float("nan"),
            "worst": {},
        }
        if not varying:
            return out
        for key, stat in (
            ("r_hat_max", az.rhat(post)),
            ("ess_bulk_min", az.ess(post, method="bulk")),
            ("ess_tail_min", az.ess(post, method="tail")),
        ):
            pick = max if key == "r_hat_max" else min
            values = {
                v: float(getattr(stat[v], "max" if pick is max else "min")()) for v in varying
            }
            name = pick(values, key=values.get)
            out[key] = values[name]
            out["worst"][key] = name
        return out

    def check_sampling(self, stacklevel: int = 2) -> dict:
        """Warn, with numbers and advice, if the sampler's diagnostics flag a problem.

        Returns
        -------
        dict
            The output of :meth:`diagnostics`.
        """
        d = self.diagnostics()
        problems = []
        if d["divergences"]:
            problems.append(
                f"{d['divergences']} of {d['draws']} draws diverged (the sampler could not "
                f"follow the posterior's geometry, so the draws may be biased); refit with "
                f"target_accept={0.995 if self.config['target_accept'] >= 0.99 else 0.99}"
                + (
                    ", or try pool_over with more groups or tighter logit-scale priors"
                    if self.config["calibration"] == "hierarchical"
                    else ""
                )
            )
        # θ and 1 − θ fit equally well only where a group lacks one label type and the prior
        # does not rule out judges worse than chance.
        mirrored = (
            self.config["calibration"] == "separate"
            and not self.config["judge_better_than_chance"]
            and bool(((self.counts.m0 == 0) | (self.counts.m1 == 0)).any())
        )
        if d["r_hat_max"] > RHAT_MAX:
            problems.append(
                f"r_hat = {d['r_hat_max']:.3f} > {RHAT_MAX} for {d['worst']['r_hat_max']!r} "
                f"(the chains disagree); run more tune and draws"
                + (
                    ", and check for a bimodal posterior (a group without calibration can "
                    "fit θ or 1 − θ: consider judge_better_than_chance=True)"
                    if mirrored
                    else ""
                )
            )
        for key, label in (("ess_bulk_min", "bulk"), ("ess_tail_min", "tail")):
            if d[key] < ESS_MIN:
                problems.append(
                    f"{label} ESS = {d[key]:.0f} < {ESS_MIN} for {d['worst'][key]!r} (too few "
                    f"effective draws for stable {'means' if label == 'bulk' else 'intervals'}"
                    f"); raise draws (now {self.config['draws']} per chain × "
                    f"{self.config['chains']} chains)"
                )
        if problems:
            warnings.warn(
                "Sampler diagnostics: " + "; ".join(problems) + ".",
                ConvergenceWarning,
                stacklevel=stacklevel + 1,
            )
        return d

    # ----------------------------------------------------------------- summaries

    def summary(self, ci_prob: float = 0.95, var_names=None, as_xarray: bool = False):
        """Posterior summary of θ, q0, q1, J (and θ_total, hyperparameters).

        Parameters
        ----------
        ci_prob : float, default 0.95
            Probability of the equal-tailed and highest-density intervals.
        var_names : sequence of str, optional
            Variables to summarise; default ``theta`` (``theta_test`` for a fit made with
            ``estimand="test-set"``), ``theta_total`` (``theta_total_test``), ``q0``, ``q1``,
            ``youden`` and the hierarchical hyperparameters present in the model.
        as_xarray : bool, default False
            Return an :class:`xarray.DataTree` with one node per variable (dims kept, intervals
            along ``ci_bound``) instead of a tidy :class:`pandas.DataFrame`.

        Returns
        -------
        pandas.DataFrame or xarray.DataTree
            Columns/variables ``mean``, ``sd``, ``median``, ``eti_lower``, ``eti_upper``,
            ``hdi_lower``, ``hdi_upper``, ``ess_bulk``, ``ess_tail``, ``r_hat``; the frame
            has a row per variable and group, with ``system``/``stratum`` None where the
            variable does not vary along that dim. ``attrs`` carry ``ci_prob``,
            ``calibration``, ``design`` (the labelling design) and ``estimand``.
        """
        ci_prob = check_open_unit("ci_prob", ci_prob, "e.g. 0.95 for a 95 % interval")
        names = summary_names(var_names, self._posterior_vars(), self._reported())
        tree = xr.DataTree()
        for name in names:
            if self.method == "exact":
                tree[name] = xr.DataTree(self._exact_summary(name, ci_prob))
                continue
            draws = self.posterior[name]
            single = draws.to_dataset()
            hdi = az.hdi(single, prob=ci_prob)[name]
            stats = {
                "mean": draws.mean(("chain", "draw")),
                "sd": draws.std(("chain", "draw"), ddof=1),
                "median": draws.median(("chain", "draw")),
                "eti": _quantile_interval(draws, ci_prob),
            }
            diag = _convergence(single, name)
            ds = xr.Dataset(
                {**stats, "hdi": hdi, **diag},
                attrs={"ci_prob": ci_prob, "ci_kind": "eti and hdi"},
            )
            tree[name] = xr.DataTree(ds)
        labelling = {"design": self.design, "estimand": self.estimand}
        tree.attrs.update(
            {"ci_prob": ci_prob, "calibration": self.config["calibration"], **labelling}
        )
        if as_xarray:
            return tree
        rows = []
        for name in names:
            frame = _summary_frame(tree[name].dataset)
            for dim in DIMS:
                if dim not in frame:
                    frame[dim] = None
            frame.insert(0, "variable", name)
            rows.append(frame)
        columns = ["variable", *DIMS, "mean", "sd", "median", "eti_lower", "eti_upper"]
        columns += ["hdi_lower", "hdi_upper", "ess_bulk", "ess_tail", "r_hat"]
        out = pd.concat(rows, ignore_index=True)[columns]
        out.attrs.update(
            {"ci_prob": ci_prob, "calibration": self.config["calibration"], **labelling}
        )
        return out

    def compare(
        self, dim: str = "system", var: str | None = None, ci_prob: float = 0.95, pairs=None
    ):
        """Posterior of every pairwise difference ``var[a] − var[b]`` along ``dim``.

        Parameters
        ----------
        dim : {"system", "stratum"}, default "system"
            Dim whose labels are compared pairwise (in coordinate order, a before b).
        var : str, optional
            Posterior variable, e.g. ``"theta"``, ``"theta_total"`` or ``"youden"``; default
            :attr:`theta_var` (``"theta"``, or ``"theta_test"`` for the test-set estimand).
        ci_prob : float, default 0.95
            Probability of the equal-tailed credible interval.
        pairs : sequence of (label, label), optional
            The comparisons wanted, as pairs of ``dim`` labels ``(a, b)`` (difference a − b);
            default every pair. All pairs of many systems do not fit in memory (the draws of
            every difference are kept): beyond ``MAX_COMPARE_VALUES`` values a ValueError asks
            for ``pairs``.

        Returns
        -------
        xarray.Dataset
            Dim ``pair`` (labels ``"a - b"``, coords ``first``/``second``) and the variable's
            other dims; variables ``difference`` (draws), ``mean``, ``median``, ``sd``,
            ``ci`` (along ``ci_bound``) and ``prob_greater`` = P(var[a] > var[b]). Attrs
            ``ci_prob``, ``ci_kind="eti"``, ``var``, ``dim``, ``design``, ``estimand``.

        Notes
        -----
        The difference is taken draw by draw, so it carries the posterior correlation
        between the two groups — e.g. through a shared or hierarchical calibration.
        """
        ci_prob = check_open_unit("ci_prob", ci_prob, "e.g. 0.95 for a 95 % interval")
        if var is None:
            var = self.theta_var
        if var not in self.posterior.data_vars:
            raise ValueError(f"var {var!r} is not in the posterior: {list(self.posterior)}.")
        draws = self.posterior[var]
        if dim not in draws.dims:
            raise ValueError(
                f"{var!r} does not vary along {dim!r} (its dims are {draws.dims[2:]}); "
                f"compare along one of those."
            )
        labels = draws[dim].values.tolist()
        if len(labels) < 2:
            raise ValueError(f"compare needs at least 2 {dim} labels; got {labels}.")
        pairs = label_pairs(labels, pairs, dim)
        if not pairs:
            raise ValueError("pairs is empty: name at least one (a, b) pair, or None for all.")
        size = len(pairs) * draws.size // len(labels)
        if size > MAX_COMPARE_VALUES:
            raise ValueError(
                f"compare along {dim!r} would keep {len(pairs):,} pairs × "
                f"{draws.size // len(labels):,} draws = {size:,} values ({size * 8 / 1e9:.1f} "
                f"GB; at most {MAX_COMPARE_VALUES:,}); pass pairs=[(a, b), ...] with the "
                "comparisons you need (e.g. each system against a baseline)."
            )
        diff = xr.concat(
            [draws.isel({dim: i}, drop=True) - draws.isel({dim: j}, drop=True) for i, j in pairs],
            dim="pair",
        )
        diff = diff.assign_coords(
            pair=[pair_label(labels[i], labels[j]) for i, j in pairs],
            first=("pair", [labels[i] for i, _ in pairs]),
            second=("pair", [labels[j] for _, j in pairs]),
        )
        sample = ("chain", "draw")
        # A pair with a system whose draws are NaN (θ_test of a system without test items)
        # has no difference: NaN throughout, not P = 0 (NaN > 0 is False).
        defined = diff.notnull().all(sample)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "All-NaN slice", RuntimeWarning)
            interval = _quantile_interval(diff, ci_prob)
        return xr.Dataset(
            {
                "difference": diff,
                "mean": diff.mean(sample),
                "median": diff.median(sample),
                "sd": diff.std(sample, ddof=1),
                "ci": interval,
                "prob_greater": (diff > 0).mean(sample).where(defined),
            },
            attrs={
                "ci_prob": ci_prob,
                "ci_kind": "eti",
                "var": var,
                "dim": dim,
                "design": self.design,
                "estimand": self.estimand,
            },
        )

    # ----------------------------------------------------------------- checks

    def ppc(self, random_seed: int | None = None) -> PosteriorPredictiveCheck:
        """Posterior predictive check of the observed counts ``k``, ``tn``, ``tp``.

        Under the random labelling design the truth counts ``truth`` (m1 of m0 + m1 labelled
        items, Binomial(m0 + m1, θ)) are checked too; ``tn`` and ``tp`` are replicated
        given the observed m0, m1.

        The paired model also replicates the joint verdict table ``joint`` (stratum,
        pattern: shared items per verdict pattern) and ``k_unshared`` (the items not shared
        by every system); its ``k`` is the sum of both, as observed.

        Parameters
        ----------
        random_seed : int, optional
            Seed of the replicated draws: any non-negative integer, or None for fresh ones.

        Returns
        -------
        PosteriorPredictiveCheck
            Replicated counts, observed counts, mid-p p-values per group, and ``.plot()``.

        Notes
        -----
        In the ``"separate"`` model every group has as many parameters as counts, so the
        check can only fail through the prior. It has power where groups share parameters:
        with ``"shared"`` or ``"hierarchical"`` calibration, a system whose judge behaves
        differently gets p-values near 0 or 1 for its ``tn``/``tp``. In the paired model the
        p-values of ``joint`` check the dependence between the systems' verdicts, which θ
        and the q's alone do not fix.
        """
        if random_seed is not None:
            random_seed = _check_seed(random_seed)
        posterior = self.tree["posterior"].dataset
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BayesJudgeWarning)
            model = self.model
        names = list(_observed_names(model))
        with _quiet_pymc(), _interruptible(), warnings.catch_warnings():
            # Every free variable comes from the posterior, which already carries any Potential.
            warnings.filterwarnings("ignore", message="The effect of Potentials")
            pp = pm.sample_posterior_predictive(
                xr.DataTree.from_dict({"posterior": posterior}),
                model=model,
                var_names=names,
                random_seed=None if random_seed is None else _sampler_seed(random_seed),
                progressbar=False,
            )
        replicated = _with_total_k(pp["posterior_predictive"].dataset[names])
        observed = self.tree["observed_data"].dataset[list(replicated.data_vars)]
        p_value = xr.Dataset(
            {
                v: (replicated[v] > observed[v]).mean(("chain", "draw"))
                + 0.5 * (replicated[v] == observed[v]).mean(("chain", "draw"))
                for v in replicated.data_vars
            },
            attrs={
                "kind": "mid-p, P(rep > obs) + P(rep = obs) / 2",
                "random_seed": _attr_seed(random_seed),
            },
        )
        tree = xr.DataTree.from_dict(
            {
                "posterior_predictive": replicated,
                "observed_data": observed,
                "constant_data": self.tree["constant_data"].dataset,
            }
        )
        return PosteriorPredictiveCheck(tree, p_value)

    # ----------------------------------------------------------------- persistence

    def report(self, out_dir=None, **options):
        """Build the evaluation report of this fit: Markdown and a self-contained HTML page.

        Parameters
        ----------
        out_dir : str or path-like, optional
            Folder for ``report.md``, its PNGs and ``report.html``; nothing is written when None.
        **options
            Passed to :func:`bayesjudge.build_report` (``alpha``, ``random_seed``,
            ``target_width``, ``comparison_method``, ``ppc``, ``warn``, ...).

        Returns
        -------
        bayesjudge.Report
            Sections, tables, figures and diagnoses; ``.to_markdown()``, ``.to_html()`` and
            the written paths in ``.paths``.

        Examples
        --------
        >>> import bayesjudge as bj
        >>> counts = bj.JudgeCounts.from_counts(n=1000, k=400, m0=100, tn=70, m1=100, tp=90)
        >>> fit = bj.fit(counts, method="exact", random_seed=1)
        >>> report = fit.report(random_seed=1)
        >>> "Rogan–Gladen" in report.to_markdown()
        True
        """
        return write_report(self, out_dir, **options)

    def save(self, path) -> Path:
        """Write the fit to a netCDF file (posterior, counts, configuration, version).

        The file is written atomically: to a temporary file beside ``path``, then renamed
        onto it, so a failure or Ctrl-C leaves no file and an existing ``path`` intact. A
        SHA-256 digest of the content is stored in the root attr ``bayesjudge_digest``;
        :func:`load` refuses a file whose content no longer matches it.

        Parameters
        ----------
        path : str or path-like
            Output file, conventionally ``*.nc``; an existing file is replaced.

        Returns
        -------
        pathlib.Path
            The path written.

        Raises
        ------
        ValueError
            If ``path`` is empty, a folder, or its folder is missing or not writable.
        """
        path = check_output_file(path, what="fit file")
        tree = self.tree.copy()
        if "sample_stats" in tree.children:
            stats = tree["sample_stats"].dataset
            # netCDF cannot store object arrays of None (e.g. nutpie's divergence messages).
            drop = [v for v in stats.data_vars if stats[v].dtype == object]
            tree["sample_stats"] = xr.DataTree(stats.drop_vars(drop))
        tree.attrs["format"] = _FORMAT
        tree.attrs.pop(DIGEST_ATTR, None)
        tree.attrs[DIGEST_ATTR] = content_digest(tree)
        with atomic_path(path) as tmp:
            tree.to_netcdf(tmp, engine="h5netcdf")
        return path


def _damaged(path: Path, what: str) -> ValueError:
    return ValueError(
        f"{str(path)!r} cannot be loaded as a bayesjudge fit: {what}. Refit and save again with "
        f"Fit.save(path), or load another file."
    )


def load(path) -> Fit:
    """Read a fit written by :meth:`Fit.save`, check it and rebuild its model.

    The content (every group's values, dims and coords, and the configuration) is checked
    against the SHA-256 digest stored at save, so a file edited or damaged afterwards is
    refused rather than loaded silently.

    Parameters
    ----------
    path : str or path-like
        A file written by :meth:`Fit.save`.

    Returns
    -------
    Fit, CategoricalFit or JuryFit
        A :class:`~bayesjudge.models.categorical.CategoricalFit` for a file written by
        :meth:`CategoricalFit.save` (read by
        :func:`~bayesjudge.models.categorical.load_categorical`, with the same checks), a
        :class:`~bayesjudge.models.jury.JuryFit` for one written by :meth:`JuryFit.save`
        (read by :func:`~bayesjudge.models.jury.load_jury`).

    Raises
    ------
    FileNotFoundError
        If there is no file at ``path``.
    ValueError
        Naming the path and what is wrong: the file cannot be read (truncated, not netCDF, a
        folder), is not a bayesjudge fit, its configuration does not match its stored hash,
        its content does not match its stored digest (changed after it was saved), its draws
        do not match its configuration, or the rebuilt model's variables do not match the
        stored posterior.

    Warns
    -----
    BayesJudgeWarning
        If the file was written by another bayesjudge version, or has no content digest
        (saved before digests were stored): it is loaded unchecked.
    """
    path = Path(path)
    if path.is_dir():
        raise _damaged(path, "it is a folder, not a file")
    if not path.exists():
        raise FileNotFoundError(
            f"No fit file at {str(path)!r}; check the path, or write one with Fit.save(path)."
        )
    try:
        with xr.open_datatree(path, engine="h5netcdf") as opened:
            tree = opened.load()
    except Exception as err:  # h5py OSError, xarray ValueError, ...: all mean "unreadable"
        raise _damaged(
            path,
            f"it is not a readable netCDF file, or it is truncated ({type(err).__name__}: {err})",
        ) from err
    attrs = tree.attrs
    if attrs.get("format") == CATEGORICAL_FORMAT:  # a K-category fit: its own reader
        return load_categorical(path)
    if attrs.get("format") == CATEGORICAL_JURY_FORMAT:  # several judges, K categories
        return load_categorical_jury(path)
    if attrs.get("format") == JURY_FORMAT:  # several judges: its own reader
        return load_jury(path)
    if attrs.get("format") == JURY_COVARIATES_FORMAT:  # the covariate model of several judges
        return load_jury_covariates(path)
    if attrs.get("format") != _FORMAT or "bayesjudge_config" not in attrs:
        raise ValueError(
            f"{str(path)!r} is not a bayesjudge fit (format {attrs.get('format')!r}); write one "
            f"with Fit.save(path)."
        )
    try:
        config = json.loads(attrs["bayesjudge_config"])
    except (TypeError, ValueError) as err:
        raise _damaged(path, f"its configuration is not valid JSON ({err})") from None
    if not isinstance(config, dict) or _config_hash(config) != attrs.get("bayesjudge_config_hash"):
        raise ValueError(
            f"The configuration stored in {str(path)!r} does not match its hash; the file was "
            f"modified or damaged. Refit and save again."
        )
    stored = attrs.get(DIGEST_ATTR)
    if stored is None:
        warnings.warn(
            f"{str(path)!r} has no content digest (saved by a bayesjudge without one), so "
            f"whether it was changed after saving cannot be checked; it is loaded as it is. "
            f"Save it again with Fit.save(path) to add a digest.",
            BayesJudgeWarning,
            stacklevel=2,
        )
    else:
        check = tree.copy()
        check.attrs.pop(DIGEST_ATTR, None)
        if content_digest(check) != stored:
            raise ValueError(
                f"{str(path)!r} was changed after it was saved: its content (posterior draws, "
                f"counts or other data) no longer matches the digest stored by Fit.save. Do "
                f"not edit saved fits; refit and save again, or load the original file."
            )
    if attrs.get("bayesjudge_version") != __version__:
        warnings.warn(
            f"{str(path)!r} was written by bayesjudge {attrs.get('bayesjudge_version')} and is "
            f"read by {__version__}; check results against a refit if the models changed.",
            BayesJudgeWarning,
            stacklevel=2,
        )
    missing = [g for g in ("posterior", "counts") if g not in tree.children]
    if missing:
        raise _damaged(path, f"it lacks the group(s) {missing}")
    try:
        result = Fit(tree, config)
        sizes = result.posterior.sizes
        asked = (config["chains"], config["draws"])
        if (sizes.get("chain"), sizes.get("draw")) != asked:
            raise _damaged(
                path,
                f"it holds {sizes.get('chain')} chains × {sizes.get('draw')} draws but its "
                f"configuration says {asked[0]} × {asked[1]} (an interrupted or edited fit)",
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BayesJudgeWarning)
            model = result.model
    except (KeyError, TypeError) as err:
        raise _damaged(path, f"its content is incomplete ({type(err).__name__}: {err})") from err
    expected = set(model.free_RVs + model.deterministics)
    names = {v.name for v in expected}
    if result.estimand == "test-set":
        # Drawn from the model's variables at fit time, not variables of the model.
        names |= {v for v in TEST_SET_VARS if v in result.posterior.data_vars}
    stored = set(result.posterior.data_vars)
    if names != stored:
        raise ValueError(
            f"The model rebuilt from {str(path)!r} has variables {sorted(names)} but the file "
            f"holds {sorted(stored)}; it was written by an incompatible version."
        )
    return result


def _check_categorical_options(**given) -> None:
    """Refuse the binary-only options of ``fit`` for K-category counts, naming them."""
    defaults = {"aggregate": "auto", "judge_better_than_chance": False, "paired": None,
                "sampler": "nutpie", "method": "mcmc", "estimand": "population"}  # fmt: skip
    changed = {name: value for name, value in given.items() if value != defaults[name]}
    if changed:
        shown = ", ".join(f"{name}={value!r}" for name, value in changed.items())
        raise ValueError(
            f"{shown}: not available for K-category counts (CategoricalCounts), which are fitted "
            "by NUTS (nutpie) per (system, stratum) group with the population estimand. Drop "
            "these options; see bayesjudge.models.categorical.fit_categorical."
        )


def _fit_several_judges(counts, **o):
    """``fit`` of several judges' data: JuryItems, CategoricalJuryCounts or JuryCounts."""
    single = {k: o[k] for k in ("pool_over", "aggregate", "paired", "sampler", "method",
                                "estimand", "confusion")}  # fmt: skip
    sampling = {k: o[k] for k in ("draws", "tune", "chains", "random_seed", "target_accept",
                                  "progressbar")}  # fmt: skip
    better = True if o["judge_better_than_chance"] else None
    calibration = "shared" if o["calibration"] is None else o["calibration"]
    if isinstance(counts, JuryItems):  # verdict rows with covariates: the covariate model
        _check_jury_options(
            counts, **single, scores=o["scores"], calibration=o["calibration"],
            dependence=o["dependence"],
        )  # fmt: skip
        return fit_jury_covariates(
            counts, pool_judges=o["pool_judges"], priors=o["priors"],
            judge_better_than_chance=better, **sampling,
        )  # fmt: skip
    if isinstance(counts, CategoricalJuryCounts):  # several judges' K-category verdicts
        _check_jury_options(counts, **single)
        if o["judge_better_than_chance"]:
            raise ValueError(
                "judge_better_than_chance= is an option of binary verdict patterns "
                "(JuryCounts); the K-category jury starts every chain with every judge mostly "
                "right instead. Drop it; see "
                "bayesjudge.models.categorical_jury.fit_categorical_jury."
            )
        return fit_categorical_jury(
            counts, calibration=calibration, priors=o["priors"], scores=o["scores"],
            pool_judges=o["pool_judges"], dependence=o["dependence"], **sampling,
        )  # fmt: skip
    _check_jury_options(counts, **single, scores=o["scores"])
    return fit_jury(
        counts, calibration=calibration, pool_judges=o["pool_judges"],
        dependence=o["dependence"], priors=o["priors"], judge_better_than_chance=better,
        **sampling,
    )  # fmt: skip


def _check_jury_options(counts, **given) -> None:
    """Refuse the single-judge options of ``fit`` for several judges' data, naming them."""
    defaults = {"pool_over": None, "aggregate": "auto", "paired": None, "sampler": "nutpie",
                "method": "mcmc", "estimand": "population", "confusion": "free",
                "scores": None, "calibration": None, "dependence": None}  # fmt: skip
    changed = {name: value for name, value in given.items() if value != defaults[name]}
    if changed:
        shown = ", ".join(f"{name}={value!r}" for name, value in changed.items())
        kind, see = {
            JuryItems: ("JuryItems, the covariate model with one set of coefficients per judge "
                        "for all groups", "bayesjudge.models.jury_covariates.fit_jury_covariates"),
            CategoricalJuryCounts: ("CategoricalJuryCounts",
                                    "bayesjudge.models.categorical_jury.fit_categorical_jury"),
        }.get(type(counts), ("JuryCounts", "bayesjudge.models.jury.fit_jury"))  # fmt: skip
        raise ValueError(
            f"{shown}: not available for several judges' verdicts ({kind}), which are fitted "
            f"by NUTS (nutpie) with the population estimand. Drop these options; see {see}."
        )
