"""Closed-form estimates of θ from several judges, and their agreement, per group as xarray.

The numpy formulas live in :mod:`bayesjudge.core.jury`; this module applies them to every
(system, stratum) group of a :class:`~bayesjudge.data.jury.JuryCounts` and labels the results.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import xarray as xr

from bayesjudge._version import __version__
from bayesjudge.core import jury as core_jury
from bayesjudge.core._validation import check_alpha
from bayesjudge.core.jury_covariates import covariate_dawid_skene, covariate_levels, covariate_q
from bayesjudge.data._common import DIMS
from bayesjudge.data.jury import JUDGE, JuryCounts
from bayesjudge.data.jury_items import JuryItems
from bayesjudge.warnings import SmallSampleWarning

__all__ = ["JURY_METHODS", "jury_agreement", "jury_covariate_estimate", "jury_estimate"]

JURY_METHODS = ("dawid-skene", "majority")
CI_BOUND = ["lower", "upper"]


def _ci_coords(counts: JuryCounts) -> dict:
    return {
        "system": counts.dataset.indexes["system"],
        "stratum": counts.dataset.indexes["stratum"],
        "ci_bound": CI_BOUND,
    }


def _dawid_skene(counts: JuryCounts, alpha, interval, random_seed, n_resamples, smoothing):
    """Dawid–Skene θ, its interval and each judge's q0, q1, group by group."""
    v = counts.verdicts.astype(np.int64)
    s, r, j = len(counts.systems), len(counts.strata), len(counts.judges)
    theta = np.full((s, r), np.nan)
    ci = np.full((s, r, 2), np.nan)
    q0 = np.full((s, r, j), np.nan)
    q1 = np.full((s, r, j), np.nan)
    converged = np.zeros((s, r), dtype=bool)
    test = counts.test.transpose(*DIMS, "pattern").values
    lab = counts.labelled.transpose(*DIMS, "truth", "pattern").values
    rng = np.random.default_rng(random_seed) if interval == "bootstrap" else None
    empty = []
    for a, b in itertools.product(range(s), range(r)):
        seen = (test[a, b] + lab[a, b].sum(axis=0)) > 0
        graded = (v[seen] >= 0).any(axis=0)
        if test[a, b].sum() == 0 or not graded.all():
            empty.append((counts.systems[a], counts.strata[b]))
            continue
        args = (v[seen], test[a, b][seen], lab[a, b][:, seen])
        fit = core_jury.dawid_skene(*args, design=counts.design, smoothing=smoothing)
        res = core_jury.dawid_skene_interval(
            *args,
            design=counts.design,
            alpha=alpha,
            method=interval,
            n_resamples=n_resamples,
            random_seed=rng,
            smoothing=smoothing,
        )
        theta[a, b], ci[a, b] = fit.theta, (res.lower, res.upper)
        q0[a, b], q1[a, b], converged[a, b] = fit.q0, fit.q1, fit.converged
    if empty:
        warnings.warn(
            f"Dawid–Skene needs test items and a verdict of every judge in each group; "
            f"θ is NaN for (system, stratum) {empty[:5]!r}"
            f"{' …' if len(empty) > 5 else ''}. Select the judges who graded those groups "
            f"(counts.sel(judge=[...])) or add items.",
            SmallSampleWarning,
            stacklevel=3,
        )
    coords = _ci_coords(counts)
    judges = counts.dataset.indexes[JUDGE]
    return xr.Dataset(
        {
            "estimate": (DIMS, theta),
            "ci": ((*DIMS, "ci_bound"), ci),
            "q0_hat": ((*DIMS, JUDGE), q0),
            "q1_hat": ((*DIMS, JUDGE), q1),
            "youden": ((*DIMS, JUDGE), q0 + q1 - 1),
            "converged": (DIMS, converged),
        },
        coords={**coords, JUDGE: judges},
    )


def _majority(counts: JuryCounts, alpha, ties):
    v = counts.verdicts.astype(np.int64)
    test = counts.test.transpose(*DIMS, "pattern").values
    est = np.full(test.shape[:2], np.nan)
    ci = np.full((*test.shape[:2], 2), np.nan)
    for a, b in itertools.product(*map(range, test.shape[:2])):
        if test[a, b].sum() > 0:
            res = core_jury.majority_vote(v, test[a, b], ties=ties, alpha=alpha)
            est[a, b], ci[a, b] = res.estimate, (res.lower, res.upper)
    return xr.Dataset(
        {"estimate": (DIMS, est), "ci": ((*DIMS, "ci_bound"), ci)}, coords=_ci_coords(counts)
    )


def jury_estimate(
    counts: JuryCounts,
    method: str = "dawid-skene",
    alpha: float = 0.05,
    random_seed=None,
    *,
    interval: str = "wald",
    ties: str = "half",
    n_resamples: int = 2_000,
    smoothing: float = 0.0,
) -> xr.Dataset:
    """Estimate θ of every (system, stratum) group from several judges' verdict patterns.

    Parameters
    ----------
    counts : JuryCounts
        Verdict patterns of the judges (:meth:`JuryCounts.from_frames`).
    method : {"dawid-skene", "majority"}, default "dawid-skene"
        ``"dawid-skene"``: the maximum-likelihood θ of the latent-truth model of
        conditionally independent judges, anchored by the labelled items
        (:func:`~bayesjudge.core.jury.dawid_skene`), per group. ``"majority"``: the share of
        test items the majority of judges calls correct (naive: it estimates P(majority says
        correct), not θ). Each judge's own corrected estimate is
        ``bj.estimate(counts, method="per-judge")``.
    alpha : float, default 0.05
        One minus the interval's coverage probability.
    random_seed : int, numpy.random.Generator or None
        Seed of the bootstrap (``interval="bootstrap"``).
    interval : {"wald", "bootstrap"}, default "wald"
        The Dawid–Skene interval (:func:`~bayesjudge.core.jury.dawid_skene_interval`).
    ties : {"half", "incorrect", "correct"}, default "half"
        How the majority vote counts a tied item.
    n_resamples : int, default 2000
        Bootstrap resamples.
    smoothing : float, default 0.0
        Beta pseudo-counts of the Dawid–Skene EM (see :func:`~bayesjudge.core.jury.dawid_skene`).

    Returns
    -------
    xarray.Dataset
        ``estimate`` and ``ci`` (``ci_bound = ["lower", "upper"]``) per (system, stratum);
        for ``"dawid-skene"`` also ``q0_hat``, ``q1_hat``, ``youden`` per judge and
        ``converged``. Attrs ``method``, ``ci_kind``,
        ``ci_prob``, ``alpha``, ``design``, ``interval``, ``random_seed``.

    Notes
    -----
    The Dawid–Skene estimate uses every judge's verdict on every item; it is consistent when
    the judges are conditionally independent given the truth. Judges that err on the same
    items (a shared difficulty) break that assumption and make its interval too narrow; the
    Bayesian model's ``dependence="item"`` option and its posterior predictive check of the
    pairwise agreement address this (``models/jury.md``).

    References
    ----------
    .. [1] Dawid, A. P. and Skene, A. M. (1979). Maximum likelihood estimation of observer
       error-rates using the EM algorithm. *Applied Statistics* 28(1), 20–28.
    .. [2] Hui, S. L. and Walter, S. D. (1980). Estimating the error rates of diagnostic
       tests. *Biometrics* 36(1), 167–171.

    Examples
    --------
    >>> from bayesjudge.data.jury import JuryCounts
    >>> counts = JuryCounts.from_counts(
    ...     ["111", "110", "101", "011", "100", "010", "001", "000"],
    ...     test=[300, 40, 35, 30, 20, 25, 30, 200],
    ...     labelled=[[1, 1, 2, 1, 3, 4, 3, 25], [24, 3, 4, 2, 1, 2, 1, 3]],
    ...     judges=["a", "b", "c"])
    >>> ds = jury_estimate(counts)
    >>> round(float(ds["estimate"].item()), 2), ds.attrs["method"]
    (0.6, 'dawid-skene')
    """
    if not isinstance(counts, JuryCounts):
        raise TypeError(
            f"jury_estimate needs a JuryCounts (JuryCounts.from_frames(..., judges=...)); got "
            f"{type(counts).__name__}."
        )
    if method not in JURY_METHODS:
        raise ValueError(f"method must be one of {JURY_METHODS}; got {method!r}.")
    alpha = check_alpha(alpha)
    if method == "dawid-skene":
        out = _dawid_skene(counts, alpha, interval, random_seed, n_resamples, smoothing)
    else:
        out = _majority(counts, alpha, ties)
    out.attrs = {
        "method": method,
        "design": counts.design,
        "ci_kind": "confidence",
        "ci_prob": 1 - alpha,
        "alpha": alpha,
        "interval": interval if method == "dawid-skene" else "",
        "ties": ties if method == "majority" else "",
        "random_seed": "" if random_seed is None else str(random_seed),
        "bayesjudge_version": __version__,
    }
    return out


def jury_agreement(counts: JuryCounts, *, items: str = "all", alpha: float = 0.05) -> xr.Dataset:
    """Cohen's κ and Gwet's AC1 between every pair of judges, and of each judge with the humans.

    Parameters
    ----------
    counts : JuryCounts
    items : {"all", "test", "labelled"}, default "all"
        Which items the judge–judge tables count (judge–human tables count labelled items).
    alpha : float, default 0.05
        One minus the coverage of the Wald intervals.

    Returns
    -------
    xarray.Dataset
        ``kappa``, ``ac1`` (with ``_ci``) per (system, stratum, ``judge_a``, ``judge_b``) for
        pairs a < b, and ``kappa_human``, ``ac1_human`` per (system, stratum, judge); NaN where
        a table is empty. Attrs ``ci_kind``, ``ci_prob``, ``items``.

    Notes
    -----
    κ corrects the observed agreement for the agreement expected from each rater's own
    marginal shares, so it drops when one verdict dominates (the "κ paradox"); AC1's chance
    term stays small there. Report both (Gwet 2008).

    Examples
    --------
    >>> from bayesjudge.data.jury import JuryCounts
    >>> counts = JuryCounts.from_counts(["11", "10", "01", "00"], [40, 5, 5, 50],
    ...                                 labelled=[[0, 1, 2, 20], [18, 1, 0, 1]], judges=["a", "b"])
    >>> ds = jury_agreement(counts)
    >>> round(float(ds["kappa"].sel(judge_a="a", judge_b="b").item()), 3)
    0.803
    """
    alpha = check_alpha(alpha)
    judges = counts.judges
    s, r = len(counts.systems), len(counts.strata)
    pairs = list(itertools.combinations(range(len(judges)), 2))
    out = {name: np.full((s, r, len(pairs), 3), np.nan) for name in ("kappa", "ac1")} | {
        name: np.full((s, r, len(judges), 3), np.nan) for name in ("kappa_human", "ac1_human")
    }
    for p, (ia, ib) in enumerate(pairs):
        table = counts.pair_table(judges[ia], judges[ib], items=items).values
        for a, b in itertools.product(range(s), range(r)):
            if table[a, b].sum() > 0:
                out["kappa"][a, b, p] = _three(core_jury.cohen_kappa(table[a, b], alpha=alpha))
                out["ac1"][a, b, p] = _three(core_jury.gwet_ac1(table[a, b], alpha=alpha))
    marginal = counts.marginal()
    for j, judge in enumerate(judges):
        m = marginal.sel({JUDGE: judge})
        for a, b in itertools.product(range(s), range(r)):
            tn, m0 = int(m["tn"][a, b]), int(m["m0"][a, b])
            tp, m1 = int(m["tp"][a, b]), int(m["m1"][a, b])
            table = np.array([[tn, m0 - tn], [m1 - tp, tp]])  # rows human, columns judge
            if table.sum() > 0:
                out["kappa_human"][a, b, j] = _three(core_jury.cohen_kappa(table, alpha=alpha))
                out["ac1_human"][a, b, j] = _three(core_jury.gwet_ac1(table, alpha=alpha))
    pair_index = {
        "judge_a": ("pair", [judges[a] for a, _ in pairs]),
        "judge_b": ("pair", [judges[b] for _, b in pairs]),
    }
    data = {}
    for name, arr in out.items():
        dims = (*DIMS, "pair" if name in ("kappa", "ac1") else JUDGE)
        data[name] = (dims, arr[..., 0])
        data[f"{name}_ci"] = ((*dims, "ci_bound"), arr[..., 1:])
    ds = xr.Dataset(
        data,
        coords={**_ci_coords(counts), JUDGE: counts.dataset.indexes[JUDGE], **pair_index},
        attrs={"ci_kind": "confidence", "ci_prob": 1 - alpha, "items": items},
    )
    return ds.set_index(pair=["judge_a", "judge_b"]) if pairs else ds


def _three(res) -> tuple[float, float, float]:
    return (res.estimate, res.lower, res.upper)


def jury_covariate_estimate(items: JuryItems, alpha: float = 0.05, *, ridge: float = 1e-3):
    """θ per group and each judge's q0, q1 as logistic functions of the item covariates.

    The closed-form (maximum-likelihood, EM) fit of the covariate model
    (:func:`~bayesjudge.core.jury_covariates.covariate_dawid_skene`): the verdicts are
    independent given the truth, and every judge's logit P(says correct | t) is linear in the
    verdict's covariates, with coefficients shared by all groups; θ has one value per
    (system, stratum). The covariates are centred and scaled (z-scores) before fitting, so a
    coefficient is the change of the logit per standard deviation.

    Parameters
    ----------
    items : JuryItems
        Verdict rows with covariates (:meth:`JuryItems.from_frames`).
    alpha : float, default 0.05
        One minus the coverage of the Wald intervals.
    ridge : float, default 1e-3
        L2 penalty on the coefficients (on the standardised scale).

    Returns
    -------
    xarray.Dataset
        ``estimate``, ``ci`` (system, stratum[, ci_bound]) of θ; ``coef``, ``coef_se``
        (judge, truth, term) with terms ``"intercept"`` and the covariates; ``q0``, ``q1``
        and their ``_ci`` (judge, covariate, level) at each covariate's ``"low"`` and
        ``"high"`` value (its two values if it has two, else its 10th and 90th percentile),
        the others at their mean; ``covariate_low``, ``covariate_high``. Attrs ``method``
        (``"covariate-dawid-skene"``), ``ci_kind``, ``ci_prob``, ``design``, ``center``,
        ``scale``, ``converged``.

    Examples
    --------
    >>> import pandas as pd
    >>> from bayesjudge.data.jury_items import JuryItems
    >>> rng = np.random.default_rng(0)
    >>> truth = rng.random(200) < 0.5
    >>> rows = pd.DataFrame([{"item": i, "grader": g, "first": o,
    ...                       "judge": int(rng.random() < (0.85 if truth[i] else 0.2 + 0.3 * o)),
    ...                       "human": int(truth[i]) if i < 40 else None}
    ...                      for i in range(200) for g in "abc" for o in (0, 1)])
    >>> items = JuryItems.from_frames(rows, judges="grader", item="item", covariates="first")
    >>> ds = jury_covariate_estimate(items)
    >>> float(ds["q0"].sel(judge="a", covariate="first", level="low")) > float(
    ...     ds["q0"].sel(judge="a", covariate="first", level="high"))  # shown first: favoured
    True
    """
    if not isinstance(items, JuryItems):
        raise TypeError(
            f"jury_covariate_estimate needs a JuryItems (JuryItems.from_frames(..., "
            f"covariates=...)); got {type(items).__name__}."
        )
    alpha = check_alpha(alpha)
    ds = items.dataset
    x = ds["covariates"].values
    center = x.mean(axis=0)
    scale = np.where(x.std(axis=0) > 0, x.std(axis=0), 1.0)
    fit = covariate_dawid_skene(
        ds["row_item"].values,
        ds["row_judge"].values,
        ds["verdict"].values.astype(np.int64),
        (x - center) / scale,
        ds["truth"].values.astype(np.int64),
        group=items.group_index(),
        design=items.design,
        alpha=alpha,
        ridge=ridge,
    )
    if not fit.converged:
        warnings.warn(
            f"The covariate model's EM did not converge in {fit.n_iter} iterations; the "
            f"estimates may be off. Check for a judge whose verdicts a covariate separates "
            f"perfectly, or raise ridge=.",
            SmallSampleWarning,
            stacklevel=2,
        )
    n_s, n_r = len(items.systems), len(items.strata)
    names = items.covariate_names
    low, high = covariate_levels(x)
    points = []
    for c in range(len(names)):
        for value in (low[c], high[c]):
            point = center.copy()
            point[c] = value
            points.append((point - center) / scale)
    q = covariate_q(fit.coef, np.array(points), fit.coef_cov, alpha=alpha)
    shape = (len(items.judges), len(names), 2)
    terms = ["intercept", *names]
    se = np.sqrt(np.clip(np.diag(fit.coef_cov), 0, None)).reshape(fit.coef.shape)
    out = xr.Dataset(
        {
            "estimate": (DIMS, fit.theta.reshape(n_s, n_r)),
            "ci": (
                (*DIMS, "ci_bound"),
                np.stack([fit.theta_lower, fit.theta_upper], axis=-1).reshape(n_s, n_r, 2),
            ),
            "coef": ((JUDGE, "truth", "term"), fit.coef),
            "coef_se": ((JUDGE, "truth", "term"), se),
            "q0": ((JUDGE, "covariate", "level"), q["q0"].reshape(shape)),
            "q1": ((JUDGE, "covariate", "level"), q["q1"].reshape(shape)),
            "q0_ci": ((JUDGE, "covariate", "level", "ci_bound"), q["q0_ci"].reshape(*shape, 2)),
            "q1_ci": ((JUDGE, "covariate", "level", "ci_bound"), q["q1_ci"].reshape(*shape, 2)),
            "covariate_low": ("covariate", low),
            "covariate_high": ("covariate", high),
        },
        coords={
            "system": ds.indexes["system"],
            "stratum": ds.indexes["stratum"],
            "ci_bound": CI_BOUND,
            JUDGE: ds.indexes[JUDGE],
            "truth": [0, 1],
            "term": terms,
            "covariate": names,
            "level": ["low", "high"],
        },
        attrs={
            "method": "covariate-dawid-skene",
            "ci_kind": "confidence",
            "ci_prob": 1 - alpha,
            "alpha": alpha,
            "design": items.design,
            "center": [float(v) for v in center],
            "scale": [float(v) for v in scale],
            "ridge": ridge,
            "converged": int(fit.converged),
            "bayesjudge_version": __version__,
        },
    )
    return out
