"""Fitting and checking the item-effect model of repeated verdicts (model card ``item-effect.md``).

``bj.fit(counts)`` fits it whenever ``counts.has_clusters`` and returns a normal
:class:`bayesjudge.Fit` (:func:`item_effect_config` checks the options and records
``model="item-effect"``; :func:`~bayesjudge.models.build.build_from_config` builds the model
for clustered counts). :func:`~bayesjudge.models.build.build_item_effect_model` builds it;
:func:`fit_item_effect` samples it directly (NUTS, also for counts without repeats) and
returns the raw :class:`xarray.DataTree`; :func:`item_effect_ppc` draws replicated cluster
tables from a posterior and compares them with the observed one.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import xarray as xr

from bayesjudge.core._validation import is_seed
from bayesjudge.data import DIMS, JudgeCounts
from bayesjudge.models.build import (
    build_item_effect_model,
    check_item_effect_counts,
    cluster_tables,
    model_config,
)
from bayesjudge.models.priors import Priors

__all__ = ["ITEM_EFFECT", "fit_item_effect", "item_effect_config", "item_effect_ppc"]

#: The ``model`` entry of the configuration of a fit of the item-effect model.
ITEM_EFFECT = "item-effect"


def item_effect_config(
    counts: JudgeCounts,
    *,
    calibration="separate",
    pool_over=None,
    priors=None,
    aggregate="auto",
    judge_better_than_chance=False,
    paired=None,
    method="mcmc",
    estimand="population",
) -> dict:
    """Check :func:`bayesjudge.fit`'s options for counts with repeated verdicts; return its config.

    ``bj.fit(counts)`` fits the item-effect model when ``counts.has_clusters``: separate
    calibration per group, NUTS, the population θ, no ``theta_total``. Any other choice is
    refused with the way out, before anything is compiled.

    Returns
    -------
    dict
        :func:`~bayesjudge.models.build.model_config` of the separate model (``aggregate``
        None) plus ``model`` (``"item-effect"``), ``repeats`` (the tables' largest number of
        verdicts per item) and ``labelled_repeats`` (whether labelled items repeat): what
        fixes the model's structure, so that the compiled model is reused only for counts of
        the same shape.

    Raises
    ------
    ValueError
        Naming the option: ``method="exact"``, ``calibration`` other than ``"separate"``,
        ``pool_over``, ``aggregate`` weights, ``judge_better_than_chance=True``,
        ``paired=True``, ``estimand="test-set"``; and, from the model, a shared calibration
        set, a joint verdict table and known q's.

    Examples
    --------
    >>> import pandas as pd
    >>> import bayesjudge as bj
    >>> test = pd.DataFrame({"item": [1, 1, 2, 2], "epoch": [1, 2] * 2, "judge": [1, 1, 0, 1]})
    >>> calib = pd.DataFrame({"judge": [1, 0, 1, 0], "human": [1, 0, 1, 1]})
    >>> counts = bj.JudgeCounts.from_frames(test, calib, item="item", repeats="epoch")
    >>> config = item_effect_config(counts)
    >>> config["model"], config["repeats"], config["labelled_repeats"]
    ('item-effect', 2, False)
    >>> bj.fit(counts, method="exact")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: method='exact' integrates the models of independent verdicts; ...
    """
    counts = JudgeCounts(counts)
    where = "these counts hold repeated verdicts of an item (counts.has_clusters)"
    if method == "exact":
        raise ValueError(
            f"method='exact' integrates the models of independent verdicts; {where}, fitted "
            f"by the item-effect model with NUTS. Use method='mcmc', or bj.estimate(counts) "
            f"for cluster-robust closed forms."
        )
    if method != "mcmc":
        raise ValueError(f"method must be one of ['mcmc', 'exact']; got {method!r}.")
    refused = {
        "calibration": (calibration, "separate"),
        "pool_over": (pool_over, None),
        "judge_better_than_chance": (bool(judge_better_than_chance), False),
        "estimand": (estimand, "population"),
    }
    bad = [f"{k}={v!r}" for k, (v, ok) in refused.items() if v != ok]
    if paired:
        bad.append(f"paired={paired!r}")
    if not (aggregate is None or (isinstance(aggregate, str) and aggregate == "auto")):
        bad.append(f"aggregate={aggregate!r}")
    if bad:
        raise ValueError(
            f"{', '.join(bad)}: not available here: {where}, fitted by the item-effect model "
            f"(each group's own q0, q1 with an item effect, the population θ per group, no "
            f"θ_total, no pairing; models/item-effect.md). Drop these options, use "
            f"bj.estimate(counts) (cluster-delta / cluster-bootstrap), or pass "
            f"counts.without_clusters() to treat every verdict as an independent item."
        )
    config = model_config("separate", None, priors, None, False, False, counts.design)
    check_item_effect_counts(counts, Priors.from_dict(config["priors"]))
    tables = cluster_tables(counts)
    return {
        **config,
        "model": ITEM_EFFECT,
        "repeats": int(tables["test"].shape[-2]),
        "labelled_repeats": tables["labelled"] is not None,
    }


def fit_item_effect(
    counts: JudgeCounts,
    priors: Priors | None = None,
    *,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    random_seed: int | None = None,
    sampler: str = "nutpie",
    progressbar: bool = False,
) -> xr.DataTree:
    """Sample the item-effect model of ``counts`` with NUTS.

    Parameters
    ----------
    counts : JudgeCounts
        Counts with repeated verdicts of an item (``from_frames(..., repeats="epoch")``).
    priors : Priors, optional
        Priors of θ, q0, q1 (Beta); the intra-item correlation has
        :data:`~bayesjudge.models.build.ITEM_ICC_PRIOR`.
    draws, tune, chains : int
        NUTS settings.
    random_seed : int, optional
        Seed of the sampler.
    sampler : {"nutpie", "pymc"}, default "nutpie"
        The NUTS implementation (``pymc.sample(nuts_sampler=...)``).
    progressbar : bool, default False
        Show the sampler's progress.

    Returns
    -------
    xarray.DataTree
        The sampler's tree; ``tree["posterior"].dataset`` holds ``theta``, ``q0``, ``q1``,
        ``item_icc``, ``concentration``, ``youden`` and ``p`` with dims ``(chain, draw,
        system, stratum)``; ``attrs`` record the settings.

    Examples
    --------
    Sampling compiles the model (seconds), so this example stops before it;
    ``tests/models/test_item_effect.py`` fits it.

    >>> import pandas as pd
    >>> import bayesjudge as bj
    >>> from bayesjudge.models.item_effect import fit_item_effect
    >>> test = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3], "epoch": [1, 2] * 3,
    ...                      "judge": [1, 1, 0, 0, 1, 0]})
    >>> calib = pd.DataFrame({"judge": [1, 0, 1, 0, 0], "human": [1, 0, 1, 1, 0]})
    >>> counts = bj.JudgeCounts.from_frames(test, calib, item="item", repeats="epoch")
    >>> fit_item_effect(counts, sampler="stan")
    Traceback (most recent call last):
    ...
    ValueError: sampler must be 'nutpie' or 'pymc'; got 'stan'.
    >>> # tree = fit_item_effect(counts, random_seed=1); tree["posterior"].dataset["theta"]
    """
    if sampler not in ("nutpie", "pymc"):
        raise ValueError(f"sampler must be 'nutpie' or 'pymc'; got {sampler!r}.")
    if random_seed is not None and not is_seed(random_seed):
        raise ValueError(
            f"random_seed must be a non-negative integer or None; got {random_seed!r}."
        )
    model = build_item_effect_model(counts, priors)
    options = {} if sampler == "nutpie" else {"cores": 1, "compute_convergence_checks": False}
    tree = pm.sample(
        model=model,
        draws=int(draws),
        tune=int(tune),
        chains=int(chains),
        random_seed=random_seed,
        nuts_sampler=sampler,
        progressbar=progressbar,
        **options,
    )
    tree.attrs |= {
        "model": "item-effect",
        "draws": int(draws),
        "tune": int(tune),
        "chains": int(chains),
        "random_seed": "None" if random_seed is None else str(random_seed),
        "sampler": sampler,
    }
    return tree


def _propensity(rng, mean, kappa, size):
    """Per-item Beta(mean·κ, (1 − mean)·κ) propensities, shape (draws, size)."""
    a = np.clip(mean * kappa, 1e-12, None)[:, None]
    b = np.clip((1 - mean) * kappa, 1e-12, None)[:, None]
    return rng.beta(np.broadcast_to(a, (a.shape[0], size)), np.broadcast_to(b, (b.shape[0], size)))


def item_effect_ppc(
    counts: JudgeCounts, posterior: xr.Dataset, *, max_draws: int = 1000, random_seed=None
) -> xr.Dataset:
    """Posterior predictive check of the cluster table under the item-effect model.

    For each of up to ``max_draws`` posterior draws and each group, every row ``r`` of the
    cluster table (its ``N_r`` items) is replicated: each item truly correct with probability
    θ, its propensity Beta(μκ, (1 − μ)κ) by its truth, its ``r`` verdicts Binomial. The
    discrepancy of a table is ``Σ (x − e)² / max(e, 1)`` over its cells, ``e`` the
    predictive mean; ``p_value`` is the share of replicated tables at least as discrepant as
    the observed one (small: the model misses the spread of 'correct' verdicts per item).

    Parameters
    ----------
    counts : JudgeCounts
        The counts that were fitted (with their cluster table).
    posterior : xarray.Dataset
        ``fit.posterior`` of ``bj.fit(counts)``, or ``tree["posterior"].dataset`` of
        :func:`fit_item_effect`.
    max_draws : int, default 1000
        Posterior draws used (evenly thinned).
    random_seed : int, numpy.random.Generator or None
        Seed of the replicated tables.

    Returns
    -------
    xarray.Dataset
        ``observed`` and ``predicted_mean`` (system, stratum, repeats, positives),
        ``predicted_ci`` (…, ci_bound; 95 % equal-tailed) and ``p_value`` (system, stratum).

    Examples
    --------
    A posterior fixed at the generating values of simulated data (one chain, 200 draws):

    >>> import numpy as np, xarray as xr
    >>> import bayesjudge as bj
    >>> from bayesjudge.simulate import simulate_repeated_items
    >>> test, calib = simulate_repeated_items(0.5, 0.8, 0.9, n=100, m0=30, m1=30, epochs=3,
    ...                                       icc=0.5, random_seed=2)
    >>> counts = bj.JudgeCounts.from_frames(test, calib, item="item", repeats="epoch")
    >>> dims = ("chain", "draw", "system", "stratum")
    >>> posterior = xr.Dataset({v: (dims, np.full((1, 200, 1, 1), x)) for v, x in
    ...                         {"theta": 0.5, "q0": 0.8, "q1": 0.9, "concentration": 1.0}.items()})
    >>> check = item_effect_ppc(counts, posterior, random_seed=0)
    >>> check["predicted_mean"].sel(repeats=3).sum().item()
    100.0
    """
    counts = JudgeCounts(counts)
    rng = np.random.default_rng(random_seed)
    if counts.clusters is not None:
        observed = counts.clusters.transpose(*DIMS, "repeats", "positives")
    else:
        raise ValueError("item_effect_ppc needs counts with a cluster table (repeats=...).")
    stacked = posterior.stack(sample=("chain", "draw"))
    total = stacked.sizes["sample"]
    take = np.unique(np.linspace(0, total - 1, min(int(max_draws), total)).astype(int))
    values = {v: stacked[v].transpose(*DIMS, "sample").values[..., take] for v in
              ("theta", "q0", "q1", "concentration")}  # fmt: skip
    obs = observed.values
    size_r, size_k = obs.shape[-2], obs.shape[-1]
    reps = np.zeros((*obs.shape[:2], take.size, size_r, size_k), dtype=np.int64)
    for i, j in np.ndindex(*obs.shape[:2]):
        th, q0, q1, kappa = (values[v][i, j] for v in ("theta", "q0", "q1", "concentration"))
        for r0 in range(size_r):
            n_items = int(obs[i, j, r0].sum())
            if n_items == 0:
                continue
            truth = rng.random((take.size, n_items)) < th[:, None]
            pi = np.where(truth, _propensity(rng, q1, kappa, n_items),
                          _propensity(rng, 1 - q0, kappa, n_items))  # fmt: skip
            k = rng.binomial(r0 + 1, pi)
            for pos in range(r0 + 2):
                reps[i, j, :, r0, pos] = (k == pos).sum(axis=1)
    mean = reps.mean(axis=2)
    scale = np.maximum(mean, 1.0)
    obs_disc = (((obs - mean) ** 2) / scale).sum(axis=(-2, -1))
    rep_disc = (((reps - mean[:, :, None]) ** 2) / scale[:, :, None]).sum(axis=(-2, -1))
    p_value = (rep_disc >= obs_disc[..., None]).mean(axis=-1)
    ci = np.quantile(reps, [0.025, 0.975], axis=2)
    dims = (*DIMS, "repeats", "positives")
    return xr.Dataset(
        {
            "observed": (dims, obs),
            "predicted_mean": (dims, mean),
            "predicted_ci": ((*dims, "ci_bound"), np.moveaxis(ci, 0, -1)),
            "p_value": (DIMS, p_value),
        },
        coords={**{d: observed[d].values for d in dims}, "ci_bound": ["lower", "upper"]},
        attrs={"ci_kind": "equal-tailed predictive", "ci_prob": 0.95, "draws": int(take.size)},
    )
