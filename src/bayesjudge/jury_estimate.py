"""Closed-form estimates of θ from several judges, and their agreement, per group as xarray.

The numpy formulas live in :mod:`bayesjudge.core.jury`; this module applies them to every
(system, stratum) group of a :class:`~bayesjudge.data.jury.JuryCounts` and labels the results.
"""

from __future__ import annotations

import itertools
import json
import math
import warnings

import numpy as np
import xarray as xr

from bayesjudge._text import terminal_safe
from bayesjudge._version import __version__
from bayesjudge.categorical_estimate import score_vector
from bayesjudge.core import categorical_jury as core_cat
from bayesjudge.core import jury as core_jury
from bayesjudge.core._validation import check_alpha, is_real_number, two_sided_z
from bayesjudge.core.jury_covariates import (
    N_STARTS,
    covariate_dawid_skene,
    covariate_levels,
    covariate_q,
)
from bayesjudge.data._common import DIMS, plain_value
from bayesjudge.data.categorical_jury import CategoricalJuryCounts
from bayesjudge.data.jury import JUDGE, JuryCounts
from bayesjudge.data.jury_items import JuryItems
from bayesjudge.warnings import SmallSampleWarning

__all__ = [
    "JURY_METHODS",
    "PLAN_ALLOCATIONS",
    "jury_agreement",
    "jury_covariate_estimate",
    "jury_estimate",
    "jury_plan",
    "split_steps",
]

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
            fit=fit,
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


def jury_agreement(
    counts: JuryCounts | CategoricalJuryCounts, *, items: str = "all", alpha: float = 0.05
) -> xr.Dataset:
    """Cohen's κ and Gwet's AC1 between every pair of judges, and of each judge with the humans.

    Parameters
    ----------
    counts : JuryCounts or CategoricalJuryCounts
        Binary verdicts (2 × 2 tables) or K-category verdicts (K × K tables: unweighted κ and
        AC1, every disagreement counted alike).
    items : {"all", "test", "labelled"}, default "all"
        Which items the judge–judge tables count (judge–human tables count labelled items).
    alpha : float, default 0.05
        One minus the coverage of the Wald intervals.

    Returns
    -------
    xarray.Dataset
        ``kappa``, ``ac1`` (with ``_ci``) per (system, stratum, ``judge_a``, ``judge_b``) for
        pairs a < b, and ``kappa_human``, ``ac1_human`` per (system, stratum, judge); NaN where
        a table is empty, and κ NaN where both raters put every item in the same single
        category (κ is undefined there: chance agreement 1; AC1 is 1). Attrs ``ci_kind``,
        ``ci_prob``, ``items``.

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
                out["kappa"][a, b, p] = _kappa(table[a, b], alpha)
                out["ac1"][a, b, p] = _three(core_jury.gwet_ac1(table[a, b], alpha=alpha))
    for j, judge in enumerate(judges):
        human = _human_tables(counts, judge)  # (system, stratum, human, judge)
        for a, b in itertools.product(range(s), range(r)):
            table = human[a, b]
            if table.sum() > 0:
                out["kappa_human"][a, b, j] = _kappa(table, alpha)
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


def _human_tables(counts, judge) -> np.ndarray:
    """Each group's table of the human labels (rows) by one judge's verdicts (columns)."""
    if isinstance(counts, CategoricalJuryCounts):
        return counts.for_judge(judge).calibration.transpose(*DIMS, "truth", "verdict").values
    m = counts.marginal().sel({JUDGE: judge}).transpose(*DIMS)
    tn, m0, tp, m1 = (m[name].values.astype(np.int64) for name in ("tn", "m0", "tp", "m1"))
    return np.stack([np.stack([tn, m0 - tn], -1), np.stack([m1 - tp, tp], -1)], -2)


def _kappa(table, alpha: float) -> tuple[float, float, float]:
    """Cohen's κ and its limits; NaN where κ is undefined (chance agreement 1).

    κ is undefined when both raters put every item in the same single category; AC1 and the
    raw agreement are defined there (both 1), so the table is reported with κ left NaN.
    """
    try:
        return _three(core_jury.cohen_kappa(table, alpha=alpha))
    except ValueError as err:
        if "cohen_kappa is undefined" not in str(err):
            raise
        return (np.nan, np.nan, np.nan)


def _three(res) -> tuple[float, float, float]:
    return (res.estimate, res.lower, res.upper)


def _theta_design(items: JuryItems):
    """Return the standardised theta covariates (I, p_t), their centre and scale, or Nones."""
    w = items.theta_covariates()
    if w.shape[1] == 0:
        return None, None, None
    center, sd = w.mean(axis=0), w.std(axis=0)
    scale = np.where(sd > 0, sd, 1.0)
    return (w - center) / scale, center, scale


def _theta_part(items: JuryItems, fit, alpha: float, center, scale) -> tuple[dict, dict, dict]:
    """Variables, coordinates and attrs of the truth model's slopes δ (per SD)."""
    if center is None:
        return {}, {}, {"theta_model": "constant"}
    g = fit.theta_coef.size - center.size
    delta = fit.theta_coef[g:]
    se = np.sqrt(np.clip(np.diag(fit.theta_coef_cov)[g:], 0, None))
    z = two_sided_z(alpha)
    dim = "theta_covariate"
    data = {
        "theta_coef": (dim, delta),
        "theta_coef_se": (dim, se),
        "theta_coef_ci": ((dim, "ci_bound"), np.stack([delta - z * se, delta + z * se], -1)),
    }
    attrs = {
        "theta_model": "logistic",
        "theta_over": "all items" if items.design == "random" else "test items",
        "theta_center": [float(v) for v in center],
        "theta_scale": [float(v) for v in scale],
    }
    return data, {dim: items.theta_covariate_names}, attrs


def jury_covariate_estimate(
    items: JuryItems,
    alpha: float = 0.05,
    *,
    ridge: float = 1e-3,
    n_starts: int = N_STARTS,
    random_seed=0,
):
    """θ per group and each judge's q0, q1 as logistic functions of the item covariates.

    The closed-form (maximum-likelihood, EM) fit of the covariate model
    (:func:`~bayesjudge.core.jury_covariates.covariate_dawid_skene`): the verdicts are
    independent given the truth, and every judge's logit P(says correct | t) is linear in the
    verdict's covariates, with coefficients shared by all groups; θ has one value per
    (system, stratum). The covariates are centred and scaled (z-scores) before fitting, so a
    coefficient is the change of the logit per standard deviation.

    When ``items`` has theta covariates (``JuryItems.from_frames(..., theta_covariates=)``),
    the truth depends on them too: P(Z_i = 1) = expit(α_g + δᵀ w_i) (w standardised, δ shared
    by the groups), so that a truth that rises with, say, the length difference is not read as
    the judges' length bias. ``estimate`` is then θ_g averaged over the group's test items
    (all its items under the random design, whose labelled items are drawn from them), with
    a delta-method Wald interval given those items' covariates.

    Parameters
    ----------
    items : JuryItems
        Verdict rows with covariates (:meth:`JuryItems.from_frames`).
    alpha : float, default 0.05
        One minus the coverage of the Wald intervals.
    ridge : float, default 1e-3
        L2 penalty on the coefficients (on the standardised scale).
    n_starts : int, default 5
        EM starts (the majority vote, the labels-only fit, random ones); the fit with the
        highest penalised likelihood is kept
        (:func:`~bayesjudge.core.jury_covariates.covariate_dawid_skene`).
    random_seed : int, numpy.random.Generator or None, default 0
        Seed of the random starts.

    Returns
    -------
    xarray.Dataset
        ``estimate``, ``ci`` (system, stratum[, ci_bound]) of θ; ``coef``, ``coef_se``
        (judge, truth, term) with terms ``"intercept"`` and the covariates; ``q0``, ``q1``
        and their ``_ci`` (judge, covariate, level) at each covariate's ``"low"`` and
        ``"high"`` value (its two values if it has two, else its 10th and 90th percentile),
        the others at their mean; ``covariate_low``, ``covariate_high``. Attrs ``method``
        (``"covariate-dawid-skene"``), ``ci_kind``, ``ci_prob``, ``design``, ``center``,
        ``scale``, ``converged``, ``theta_model`` (``"constant"`` or ``"logistic"``),
        ``n_starts`` and ``n_best_starts`` (the EM starts that reached the kept optimum: fewer
        than ``n_starts`` say the likelihood has several maxima). With
        theta covariates also ``theta_coef``, ``theta_coef_se``, ``theta_coef_ci``
        (theta_covariate[, ci_bound]): δ per standard deviation, Wald; attrs ``theta_over``,
        ``theta_center``, ``theta_scale``.

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
    w, t_center, t_scale = _theta_design(items)
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
        theta_covariates=w,
        n_starts=n_starts,
        random_seed=random_seed,
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
    t_data, t_coords, t_attrs = _theta_part(items, fit, alpha, t_center, t_scale)
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
            **t_data,
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
            **t_coords,
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
            "n_starts": int(fit.n_starts),
            "n_best_starts": int(fit.n_best),
            "bayesjudge_version": __version__,
            **t_attrs,
        },
    )
    return out


# ------------------------------------------------------------------------------ planning

#: Label-budget allocations of :func:`jury_plan`.
PLAN_ALLOCATIONS = ("optimal", "balanced", "proportional")
#: Above this many judges every sub-jury is too many to list: name them with juries=.
MAX_ENUMERATED_JUDGES = 10
#: Shares of the budget given to truly correct items that "optimal" tries.
_SPLITS = np.linspace(0.02, 0.98, 49)


def _juries(judges: list, juries, max_size) -> list[tuple[int, ...]]:
    """Judge index tuples of the juries to plan (every non-empty subset by default)."""
    if juries is None:
        if len(judges) > MAX_ENUMERATED_JUDGES:
            raise ValueError(
                f"{len(judges)} judges have {2 ** len(judges) - 1} sub-juries; name the ones to "
                f"plan with juries=[[judge, ...], ...] (or keep at most "
                f"{MAX_ENUMERATED_JUDGES} judges with counts.sel(judge=[...]))."
            )
        top = len(judges) if max_size is None else int(max_size)
        if top < 1:
            raise ValueError(f"max_size must be at least 1; got {max_size!r}.")
        return [
            c for k in range(1, min(top, len(judges)) + 1)
            for c in itertools.combinations(range(len(judges)), k)
        ]  # fmt: skip
    out = []
    for jury in juries:
        names = [jury] if isinstance(jury, str) or not hasattr(jury, "__iter__") else list(jury)
        unknown = [name for name in names if name not in judges]
        if unknown or not names or len(set(names)) < len(names):
            raise ValueError(
                f"Each jury in juries= is a non-empty list of distinct judges out of {judges}; "
                f"got {names!r}."
            )
        out.append(tuple(sorted(judges.index(name) for name in names)))
    return list(dict.fromkeys(out))


def _budget_split(budgets: np.ndarray, theta: float, allocation: str):
    """Candidate (m0, m1) of every budget: shape (budgets, splits)."""
    if allocation == "optimal":
        share = _SPLITS
    elif allocation == "balanced":
        share = np.array([0.5])
    else:
        share = np.array([theta])
    # At least one label of each truth: a plan that relies on the model alone to learn one
    # class's error rate is not one to recommend.
    m1 = np.clip(np.round(budgets[:, None] * share[None, :]), 1, budgets[:, None] - 1)
    return budgets[:, None] - m1, m1


#: Budgets are planned in float64: above this a whole number of labels is no longer exact.
MAX_BUDGET = 2**53


def _check_budgets(budgets) -> np.ndarray:
    values = list(np.atleast_1d(np.asarray(budgets, dtype=object)).ravel())
    huge = [v for v in values if isinstance(v, int | np.integer) and abs(int(v)) > MAX_BUDGET]
    if huge:
        raise ValueError(
            f"budgets must be at most 2**53 = {MAX_BUDGET} labelled items (counts above it "
            f"are not exact in float64); got {huge[:5]}."
        )
    arr = np.atleast_1d(np.asarray(budgets))
    if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iuf":
        raise ValueError(f"budgets must be a list of label counts; got {budgets!r}.")
    if not (np.isfinite(arr).all() and (arr >= 2).all() and (arr == np.round(arr)).all()):
        raise ValueError(
            f"budgets must be whole numbers of labelled items, at least 2 each; got "
            f"{arr[~(np.isfinite(arr) & (arr >= 2) & (arr == np.round(arr)))][:5].tolist()}."
        )
    return np.unique(arr.astype(float))


def _check_plan_n(n):
    """None, or a whole number of test items of at least 1 (θ is planned from them)."""
    if n is None:
        return None
    # Checked before np.isfinite, which refuses Python ints beyond 64 bits with a TypeError.
    if is_real_number(n) and n != math.inf and n > MAX_BUDGET:
        raise ValueError(
            f"n must be at most 2**53 = {MAX_BUDGET} unlabelled test items (counts above it "
            f"are not exact in float64); got {n!r}. On the command line n is --plan-items."
        )
    if not (is_real_number(n) and np.isfinite(n) and n >= 1 and float(n) == round(float(n))):
        raise ValueError(
            f"n must be a whole number of unlabelled test items, at least 1; got {n!r}. The "
            f"plan is the width of θ's interval for a test set of n items: without test items "
            f"there is no θ to plan. Leave n out to plan for each group's test items."
        )
    return float(n)


def _check_plan_scores(values, categories) -> None:
    """Scores that are all equal make the scored mean a constant: nothing to plan or rank."""
    if values is not None and np.ptp(values) == 0:
        given = dict(zip(map(plain_value, categories), values.tolist(), strict=True))
        raise ValueError(
            f"scores must not all be equal; got {given}. With "
            f"one value v for every category the mean score Σ v θ_k = v for every θ, so every "
            f"jury and split has width 0 and none is better. Give the categories different "
            f"values, or drop scores= to plan the widest category's share."
        )


def _plan_group(theta, q0, q1, n, budgets, juries, allocation, alpha, design):
    """Planned width, sd and chosen m1 of every (jury, budget) of one group."""
    width = np.full((len(juries), len(budgets)), np.inf)
    sd, m1_best = np.full_like(width, np.inf), np.full_like(width, np.nan)
    m0, m1 = _budget_split(budgets, theta, allocation)
    for i, jury in enumerate(juries):
        idx = list(jury)
        plan = core_jury.dawid_skene_plan(
            theta, q0[idx], q1[idx], n, m0, m1, alpha=alpha, design=design
        )
        best = np.argmin(plan.width, axis=1)
        rows = np.arange(len(budgets))
        width[i], sd[i], m1_best[i] = plan.width[rows, best], plan.sd[rows, best], m1[rows, best]
    return width, sd, m1_best


def jury_plan(
    counts: JuryCounts | CategoricalJuryCounts,
    budgets,
    *,
    juries=None,
    max_size: int | None = None,
    n: int | None = None,
    allocation: str = "optimal",
    alpha: float = 0.05,
    smoothing: float = 0.5,
    scores=None,
) -> xr.Dataset:
    """Which judge or jury gives the narrowest interval for each label budget.

    From a pilot (the counts at hand), every group's θ and every judge's q0, q1 are estimated
    by Dawid–Skene (with ``smoothing`` Beta pseudo-counts, so that a judge without errors in
    the pilot is not planned as perfect). For every jury (a subset of the judges) and every
    budget of human labels the function then gives the width that the Dawid–Skene Wald
    interval of θ converges to (:func:`~bayesjudge.core.jury.dawid_skene_plan`), with the
    budget split between truly incorrect and truly correct items as ``allocation`` says.

    K-category counts (:class:`~bayesjudge.data.CategoricalJuryCounts`) are planned the same
    way with the K-class model (pilot by
    :func:`~bayesjudge.core.categorical_jury.categorical_dawid_skene`, widths by
    :func:`~bayesjudge.core.categorical_jury.categorical_dawid_skene_plan`): a width per
    category θ_k (and for the mean score with ``scores``), the budget split over the K true
    categories. Juries and splits are then compared on one number, the *target width*: the
    score's width with ``scores``, else the widest category's.

    Parameters
    ----------
    counts : JuryCounts or CategoricalJuryCounts
        The pilot: verdict patterns of the judges (with labelled items, or three or more
        judges).
    budgets : sequence of int
        Total labelled items to plan for (each at least 2; at least K for K categories).
    juries : sequence of sequences of judges, optional
        The juries to compare. Default: every non-empty subset of the judges (at most
        ``max_size`` of them), up to 10 judges.
    max_size : int, optional
        Largest jury of the default enumeration.
    n : int, optional
        Unlabelled test items to plan for, a whole number of at least 1. Default: each
        group's test items in ``counts``.
    allocation : {"optimal", "balanced", "proportional"}, default "optimal"
        How a budget splits between truly incorrect (m0) and truly correct (m1) items:
        ``"optimal"`` the split (in steps of 2 % of the budget, at least one item of each
        truth) that minimises the width,
        ``"balanced"`` half each, ``"proportional"`` m1 = budget·θ̂ (what a random sample of
        the items gives; the only choice for ``design="random"`` counts). With K categories
        the budget splits over the true categories: ``"optimal"`` the split with the
        narrowest target width among all splits in steps of 1/G of the budget, every
        category at least one step and one item (G = 50 for K ≤ 3, smaller above so that at
        most 1500 splits are tried, and fewer for juries of many parameters: see
        :func:`split_steps`; attr ``split_steps``; at K = 2 the binary grid); ``"balanced"``
        budget/K each,
        ``"proportional"`` budget·θ̂_k (rounded, at least one item of each category).
    alpha : float, default 0.05
        One minus the interval's coverage probability.
    smoothing : float, default 0.5
        Beta pseudo-counts of the pilot fit (:func:`~bayesjudge.core.jury.dawid_skene`); with
        K categories, Dirichlet pseudo-items per verdict and true category (the same at K = 2).
    scores : dict, optional
        K categories only: ``{category: value}``; also plan the mean score ``Σ value_k θ_k``,
        whose width then decides the best jury and the optimal split. The values must not
        all be equal (the mean score would then be the same constant for every θ).

    Returns
    -------
    xarray.Dataset
        Dims ``(system, stratum, jury, budget)``: ``width`` and ``sd`` (planned width of the
        95 % interval and standard error of θ̂; ``inf`` where the jury is not identified at that
        budget), ``m1`` (the truly correct items of the chosen split). Per (system, stratum,
        budget): ``best_jury`` (the narrowest), ``best_single`` (the narrowest single judge)
        and ``ratio`` (best jury's width over the best single judge's). Coords ``jury``
        (judges joined by ``+``), ``jury_size``; the pilot's ``theta_hat``, ``q0_hat``,
        ``q1_hat``. Attrs ``method``, ``allocation``, ``alpha``, ``ci_prob``, ``design``,
        ``smoothing``.

        K categories: ``width``, ``sd`` and ``m`` (labelled items of each true category in the
        chosen split) gain a ``category`` dim; ``target_width`` (system, stratum, jury,
        budget) is what ``best_jury``, ``best_single``, ``ratio`` and the split compare;
        with ``scores`` also ``score_width``, ``score_sd``. Coords ``theta_hat`` (system,
        stratum, category) and ``confusion_hat`` (system, stratum, judge, truth, verdict)
        of the pilot; attrs also ``target`` (``"score"`` or ``"widest category"``),
        ``categories`` and ``scores`` (JSON).

    Raises
    ------
    ValueError
        For bad budgets, ``n`` (a whole number from 1 to 2**53), allocation or scores; and for
        K categories where the largest jury has more than ``MAX_PLAN_PARAMETERS`` (600)
        parameters (K − 1)(1 + J·K): K = 14 with 3 judges plans in under a minute, K = 20 took
        5 to 12 minutes.

    Warns
    -----
    SmallSampleWarning
        Where a group has no pilot, and where a judge gave no verdict in a group (its juries
        are not planned there: width NaN; the pilot is the other judges' fit).

    Notes
    -----
    The widths are asymptotic (expected Fisher information at the pilot's estimates): they
    rank juries and budgets, and they are the widths that an honest interval reaches at
    these sizes only where the Wald interval covers. The jury study measured 0.933–0.960
    coverage with three judges, 500 test items and 20–80 labels per truth; with fewer labels
    or a weak judge, check coverage by simulation (:func:`bayesjudge.simulate_jury` with the
    pilot's estimates). Judges that err on the same items (dependence) make every jury look
    better than it is: check with the joint model's agreement check (``JuryFit.ppc``).

    Examples
    --------
    >>> from bayesjudge.data.jury import JuryCounts
    >>> counts = JuryCounts.from_counts(
    ...     ["111", "110", "101", "011", "100", "010", "001", "000"],
    ...     test=[300, 40, 35, 30, 20, 25, 30, 200],
    ...     labelled=[[1, 1, 2, 1, 3, 4, 3, 25], [24, 3, 4, 2, 1, 2, 1, 3]],
    ...     judges=["a", "b", "c"])
    >>> plan = jury_plan(counts, [20, 80])
    >>> plan["best_jury"].squeeze().values.tolist()
    ['a+b+c', 'a+b+c']
    >>> round(float(plan["ratio"].squeeze()[1]), 2)
    0.47

    K categories, choosing on the width of A's win rate (ties counted half):

    >>> from bayesjudge.data import CategoricalJuryCounts
    >>> cat = CategoricalJuryCounts.from_counts(
    ...     ["000", "111", "222", "001", "121", "220", "010", "012"],
    ...     test=[120, 60, 150, 30, 20, 25, 15, 10],
    ...     labelled=[[10, 0, 0, 2, 0, 1, 1, 0], [1, 8, 0, 1, 3, 0, 1, 1],
    ...               [0, 0, 12, 0, 1, 2, 0, 0]],
    ...     judges=["a", "b", "c"], categories=["A", "tie", "B"])
    >>> plan = jury_plan(cat, [30, 90], scores={"A": 1, "tie": 0.5, "B": 0})
    >>> plan["best_jury"].squeeze().values.tolist(), plan["ratio"].squeeze().round(2).values
    (['a+b+c', 'a+b+c'], array([0.8 , 0.91]))
    """
    categorical = isinstance(counts, CategoricalJuryCounts)
    if not (categorical or isinstance(counts, JuryCounts)):
        raise TypeError(
            f"jury_plan needs a JuryCounts or a CategoricalJuryCounts; got {type(counts).__name__}."
        )
    if scores is not None and not categorical:
        raise ValueError(
            "scores= values the categories of K-category counts (CategoricalJuryCounts); these "
            "counts are correct/incorrect, whose θ is planned directly. Drop scores=."
        )
    if allocation not in PLAN_ALLOCATIONS:
        raise ValueError(f"allocation must be one of {PLAN_ALLOCATIONS}; got {allocation!r}.")
    if counts.design == "random" and allocation != "proportional":
        raise ValueError(
            "These counts follow the random labelling design (a random subset labelled): its "
            "labels split as the truth does. Pass allocation='proportional'."
        )
    alpha = check_alpha(alpha)
    budgets = _check_budgets(budgets)
    n = _check_plan_n(n)
    judges = list(counts.judges)
    chosen = _juries(judges, juries, max_size)
    if categorical:
        return _categorical_plan(counts, budgets, chosen, n, allocation, alpha, smoothing, scores)
    pilot = _pilot(counts, smoothing)
    test = counts.test.sum("pattern").transpose(*DIMS).values
    if n is None and ((test == 0) & np.isfinite(pilot["estimate"].values)).any():
        raise ValueError(
            "A group of the pilot has no unlabelled test items, so the test set to plan for "
            "is unknown: pass n=<unlabelled items to plan for>."
        )
    s, r = test.shape
    shape = (s, r, len(chosen), len(budgets))
    width, sd, m1 = np.full(shape, np.nan), np.full(shape, np.nan), np.full(shape, np.nan)
    for a, b in itertools.product(range(s), range(r)):
        theta = float(pilot["estimate"][a, b])
        if not np.isfinite(theta):
            continue
        q0 = np.clip(pilot["q0_hat"].values[a, b], 1e-6, 1 - 1e-6)
        q1 = np.clip(pilot["q1_hat"].values[a, b], 1e-6, 1 - 1e-6)
        theta = float(np.clip(theta, 1e-6, 1 - 1e-6))
        width[a, b], sd[a, b], m1[a, b] = _plan_group(
            theta, q0, q1, float(test[a, b] if n is None else n), budgets, chosen, allocation,
            alpha, counts.design,
        )  # fmt: skip
    return _plan_dataset(
        counts, pilot, chosen, budgets, width, sd, m1, allocation, alpha, smoothing
    )


def _pilot(counts: JuryCounts, smoothing: float) -> xr.Dataset:
    """θ̂, q̂0, q̂1 per group: Dawid–Skene, or the labelled rates when every item is labelled."""
    v = counts.verdicts.astype(np.int64)
    test = counts.test.transpose(*DIMS, "pattern").values
    lab = counts.labelled.transpose(*DIMS, "truth", "pattern").values
    s, r, j = (*test.shape[:2], v.shape[1])
    theta, q0, q1 = np.full((s, r), np.nan), np.full((s, r, j), np.nan), np.full((s, r, j), np.nan)
    marginal = counts.marginal()
    empty = []
    for a, b in itertools.product(range(s), range(r)):
        seen = (test[a, b] + lab[a, b].sum(axis=0)) > 0
        if not (v[seen] >= 0).any(axis=0).all():
            empty.append((counts.systems[a], counts.strata[b]))
        elif test[a, b].sum() > 0:
            fit = core_jury.dawid_skene(
                v[seen], test[a, b][seen], lab[a, b][:, seen], design=counts.design,
                smoothing=smoothing,
            )  # fmt: skip
            theta[a, b], q0[a, b], q1[a, b] = fit.theta, fit.q0, fit.q1
        elif counts.design == "random" and lab[a, b].sum() > 0:
            # A fully labelled pilot: every item's truth is known, so the estimates are the
            # labelled shares and rates (with the same pseudo-counts).
            g = marginal.isel(system=a, stratum=b)
            m0, m1 = lab[a, b].sum(axis=1)
            theta[a, b] = m1 / (m0 + m1)
            q0[a, b] = (g["tn"].values + smoothing) / (g["m0"].values + 2 * smoothing)
            q1[a, b] = (g["tp"].values + smoothing) / (g["m1"].values + 2 * smoothing)
        else:
            empty.append((counts.systems[a], counts.strata[b]))
    if empty:
        warnings.warn(
            f"No plan for (system, stratum) {empty[:5]!r}{' …' if len(empty) > 5 else ''}: the "
            f"pilot needs test items (or, under the random design, labelled items) and a "
            f"verdict of every judge. Select the judges who graded those groups "
            f"(counts.sel(judge=[...])) or add items.",
            SmallSampleWarning,
            stacklevel=3,
        )
    return xr.Dataset(
        {"estimate": (DIMS, theta), "q0_hat": ((*DIMS, JUDGE), q0), "q1_hat": ((*DIMS, JUDGE), q1)}
    )


def _jury_names(counts, chosen) -> list[str]:
    """Each jury's name, its judges joined by '+'; refuse names that two juries share."""
    judges = list(counts.judges)
    names = ["+".join(str(judges[i]) for i in jury) for jury in chosen]
    if len(set(names)) < len(names):
        plus = [j for j in judges if "+" in str(j)]
        raise ValueError(
            f"Juries are named by their judges joined with '+', and the judges {plus!r} contain "
            f"'+', so two juries get the same name. Rename those judges in the tables, or with "
            f"JuryCounts(counts.dataset.assign_coords(judge=[...])), before planning."
        )
    return names


def _plan_choices(ds: xr.Dataset, width: np.ndarray, names: list[str], size) -> xr.Dataset:
    """Add best_jury, best_single and ratio, chosen on ``width`` (system, stratum, jury, budget)."""
    finite = np.where(np.isnan(width), np.inf, width)
    best = np.argmin(finite, axis=2)
    singles = np.where(size == 1)[0]
    no_plan = np.isnan(width).all(axis=2)
    ds["best_jury"] = (
        (*DIMS, "budget"),
        np.where(no_plan, "", np.array(names, dtype=object)[best]),
    )
    if singles.size:
        pick = singles[np.argmin(finite[:, :, singles], axis=2)]
        best_single = np.where(no_plan, "", np.array(names, dtype=object)[pick])
        ds["best_single"] = ((*DIMS, "budget"), best_single)
        top = np.take_along_axis(finite, best[:, :, None], axis=2)[:, :, 0]
        one = np.take_along_axis(finite, pick[:, :, None], axis=2)[:, :, 0]
        with np.errstate(invalid="ignore"):
            ds["ratio"] = ((*DIMS, "budget"), np.where(no_plan, np.nan, top / one))
    return ds


def _plan_dataset(counts, pilot, chosen, budgets, width, sd, m1, allocation, alpha, smoothing):
    names = _jury_names(counts, chosen)
    size = np.array([len(jury) for jury in chosen])
    ds = xr.Dataset(
        {
            "width": ((*DIMS, "jury", "budget"), width),
            "sd": ((*DIMS, "jury", "budget"), sd),
            "m1": ((*DIMS, "jury", "budget"), m1),
        },
        coords={
            "system": counts.dataset.indexes["system"],
            "stratum": counts.dataset.indexes["stratum"],
            "jury": names,
            "jury_size": ("jury", size),
            "budget": budgets.astype(np.int64),
            JUDGE: counts.dataset.indexes[JUDGE],
            "theta_hat": (DIMS, pilot["estimate"].values),
            "q0_hat": ((*DIMS, JUDGE), pilot["q0_hat"].values),
            "q1_hat": ((*DIMS, JUDGE), pilot["q1_hat"].values),
        },
    )
    ds = _plan_choices(ds, width, names, size)
    ds["width"].attrs["long_name"] = "planned width of the Dawid–Skene Wald interval of θ"
    ds.attrs = {
        "method": "dawid-skene-plan",
        "allocation": allocation,
        "alpha": alpha,
        "ci_prob": 1 - alpha,
        "design": counts.design,
        "smoothing": smoothing,
        "bayesjudge_version": __version__,
    }
    return ds


# ------------------------------------------------------------- planning, K categories

#: "optimal" searches the splits of a budget over the K true categories on a grid of shares
#: in steps of 1/G (every category at least one step): G = 50 at K = 2 (the binary plan's
#: 2 % steps) and K = 3, less above, so that at most this many splits are tried.
MAX_PLAN_SPLITS = 1500

#: … and at most this many splits × D³ (D = (K − 1)(1 + J·K) parameters of the largest jury
#: planned): each split inverts a D-square information, so large juries over many categories
#: search a coarser grid. Up to D = 64 (K = 3 with up to 10 judges, K = 5 with 3) the grid is
#: the one above; K = 15 with one judge (D = 224) tries 15 splits, not 680 (68 s measured on
#: the 2-core test machine under load).
MAX_PLAN_WORK = MAX_PLAN_SPLITS * 64**3


def split_steps(k: int, parameters: int) -> int:
    """G of the "optimal" search of :func:`jury_plan`: its splits are in steps of 1/G.

    The largest G ≤ 50 whose splits (every category at least one step: C(G − 1, K − 1) of
    them) number at most :data:`MAX_PLAN_SPLITS` and cost at most :data:`MAX_PLAN_WORK`, a
    split costing ``parameters``³ (the information inverted for it); at least K (one split:
    the balanced one).

    Examples
    --------
    >>> split_steps(2, 3), split_steps(3, 20), split_steps(15, 224)
    (50, 50, 16)
    """
    cap = min(MAX_PLAN_SPLITS, MAX_PLAN_WORK // max(parameters, 1) ** 3)
    return max([k] + [g for g in range(k, 51) if math.comb(g - 1, k - 1) <= cap])


def _share_grid(k: int, steps: int) -> np.ndarray:
    """Every split of ``steps`` steps over K categories, each at least one step (S, K).

    At K = 2 the order is that of the binary plan: the second category's share ascending.
    """
    cuts = np.array(list(itertools.combinations(range(1, steps), k - 1)), dtype=float)
    parts = np.diff(np.column_stack([np.zeros(len(cuts)), cuts, np.full(len(cuts), steps)]))
    return parts[:, ::-1] / steps


def _round_split(budget: float, shares: np.ndarray) -> np.ndarray:
    """Whole labelled items per category (S, K) summing to ``budget``, at least one each.

    Categories 1..K-1 get round(budget · share) (at least 1) and category 0 the rest; where
    that leaves category 0 empty the largest of the others gives up items. At K = 2 this is
    the binary plan's m1 = clip(round(budget · share), 1, budget - 1).
    """
    m = np.round(budget * shares)
    m[:, 1:] = np.maximum(m[:, 1:], 1.0)
    m[:, 0] = budget - m[:, 1:].sum(axis=1)
    for row in np.flatnonzero(m[:, 0] < 1):
        while m[row, 0] < 1:
            top = 1 + int(np.argmax(m[row, 1:]))
            m[row, top] -= 1
            m[row, 0] += 1
    _, first = np.unique(m, axis=0, return_index=True)
    return m[np.sort(first)]


def _category_splits(budget: float, pi: np.ndarray, allocation: str, steps: int) -> np.ndarray:
    k = pi.size
    if allocation == "optimal":
        shares = _share_grid(k, steps)
    elif allocation == "balanced":
        shares = np.full((1, k), 1.0 / k)
    else:
        shares = pi[None, :]
    return _round_split(budget, shares)


def _categorical_plan_group(pi, conf, n, budgets, juries, allocation, alpha, design, values):
    """Planned widths, sds (jury, budget, K), score's (jury, budget) and chosen m, one group."""
    k, nj, nb = pi.size, len(juries), len(budgets)
    width, sd, m = (np.full((nj, nb, k), np.nan) for _ in range(3))
    score_width, score_sd = np.full((nj, nb), np.nan), np.full((nj, nb), np.nan)
    steps = split_steps(k, _plan_parameters(k, juries))
    splits = [_category_splits(b, pi, allocation, steps) for b in budgets]
    grid = np.concatenate(splits)
    ends = np.cumsum([len(split) for split in splits])[:-1]
    for i, jury in enumerate(juries):
        if not np.isfinite(conf[list(jury)]).all():  # a judge without verdicts in the pilot
            continue
        plan = core_cat.categorical_dawid_skene_plan(
            pi, conf[list(jury)], n, grid, alpha=alpha, design=design, scores=values
        )
        # The split is chosen on the score's width, or else on the widest category's.
        target = plan.width.max(axis=-1) if values is None else plan.score_width
        for b, rows in enumerate(np.split(np.arange(len(grid)), ends)):
            best = rows[np.argmin(np.where(np.isnan(target[rows]), np.inf, target[rows]))]
            width[i, b], sd[i, b], m[i, b] = plan.width[best], plan.sd[best], grid[best]
            score_width[i, b], score_sd[i, b] = plan.score_width[best], plan.score_sd[best]
    return width, sd, m, score_width, score_sd


def _interior(p: np.ndarray) -> np.ndarray:
    """Shares (last axis) clipped to [1e-6, 1 - 1e-6] and renormalised, for finite log-odds."""
    p = np.clip(p, 1e-6, 1.0 - 1e-6)
    return p / p.sum(axis=-1, keepdims=True)


#: Most parameters, (K − 1)(1 + J·K), of the largest K-category jury planned. The plan builds
#: and inverts that many-square information for each of the K + 1 kinds of item over all K^J
#: verdict patterns; its time grows about as the cube. Measured (`estimate --plan 60`, 3
#: judges, 400 items, the 2-core test machine under load): K = 10 (279 parameters) 11 s,
#: K = 14 (559) 10–45 s, K = 20 (1159) 284–738 s and 3.5 GB.
MAX_PLAN_PARAMETERS = 600


def _plan_parameters(k: int, chosen) -> int:
    """(K − 1)(1 + J·K): parameters of the largest jury planned."""
    return (k - 1) * (1 + max(len(jury) for jury in chosen) * k)


def _check_plan_size(k: int, chosen) -> None:
    size = max(len(jury) for jury in chosen)
    params = _plan_parameters(k, chosen)
    if params > MAX_PLAN_PARAMETERS:
        raise ValueError(
            f"Planning a jury of {size} judges over K = {k} categories needs the information of "
            f"(K - 1)(1 + J·K) = {params} parameters, above the limit of {MAX_PLAN_PARAMETERS} "
            f"(MAX_PLAN_PARAMETERS: beyond it the plan takes many minutes and gigabytes; K = "
            f"20 with 3 judges took 5 to 12 minutes and 3.5 GB). Merge categories, or plan "
            f"smaller juries (in Python: max_size= or juries=)."
        )


def _categorical_plan(counts, budgets, chosen, n, allocation, alpha, smoothing, scores):
    k = counts.K
    _check_plan_size(k, chosen)
    if (budgets < k).any():
        raise ValueError(
            f"budgets must be at least K = {k} labelled items (one of each category); got "
            f"{budgets[budgets < k].astype(int).tolist()}."
        )
    values = None if scores is None else score_vector(scores, counts.categories)
    _check_plan_scores(values, counts.categories)
    pi_hat, conf_hat = _categorical_pilot(counts, smoothing)
    test = counts.test.sum("pattern").transpose(*DIMS).values
    if n is None and ((test == 0) & np.isfinite(pi_hat[..., 0])).any():
        raise ValueError(
            "A group of the pilot has no unlabelled test items, so the test set to plan for "
            "is unknown: pass n=<unlabelled items to plan for>."
        )
    s, r = test.shape
    shape = (s, r, len(chosen), len(budgets))
    width, sd, m = (np.full((*shape, k), np.nan) for _ in range(3))
    score_width, score_sd = np.full(shape, np.nan), np.full(shape, np.nan)
    for a, b in itertools.product(range(s), range(r)):
        if not np.isfinite(pi_hat[a, b]).all():
            continue
        width[a, b], sd[a, b], m[a, b], score_width[a, b], score_sd[a, b] = (
            _categorical_plan_group(
                _interior(pi_hat[a, b]), _interior(conf_hat[a, b]),
                float(test[a, b] if n is None else n), budgets, chosen, allocation, alpha,
                counts.design, values,
            )
        )  # fmt: skip
    target = np.max(width, axis=-1) if values is None else score_width
    data = {"width": width, "sd": sd, "m": m, "target_width": target}
    if values is not None:
        data |= {"score_width": score_width, "score_sd": score_sd}
    return _categorical_plan_dataset(
        counts, chosen, budgets, data, (pi_hat, conf_hat), values,
        {"allocation": allocation, "alpha": alpha, "smoothing": smoothing,
         "split_steps": split_steps(k, _plan_parameters(k, chosen))
         if allocation == "optimal" else 0},
    )  # fmt: skip


def _labelled_pilot(v, lab, k: int, smoothing: float):
    """π̂ and confusion of a fully labelled group: labelled shares and smoothed rates."""
    pi = lab.sum(axis=1) / lab.sum()
    hot = (v[..., None] == np.arange(k)).astype(float)  # (P, J, C)
    table = np.einsum("tp,pjc->jtc", lab, hot) + smoothing
    return pi, table / table.sum(axis=-1, keepdims=True)


def _categorical_pilot(counts: CategoricalJuryCounts, smoothing: float):
    """π̂ (S, R, K) and confusion (S, R, J, K, K) per group by Dawid–Skene; NaN where none."""
    v = counts.verdicts.astype(np.int64)
    test = counts.test.transpose(*DIMS, "pattern").values.astype(float)
    lab = counts.labelled.transpose(*DIMS, "truth", "pattern").values.astype(float)
    s, r, j, k = (*test.shape[:2], v.shape[1], counts.K)
    pi, conf = np.full((s, r, k), np.nan), np.full((s, r, j, k, k), np.nan)
    empty, left_out = [], []
    for a, b in itertools.product(range(s), range(r)):
        seen = (test[a, b] + lab[a, b].sum(axis=0)) > 0
        # A judge with no verdict in the group adds nothing to its likelihood: the pilot is
        # the other judges' fit, and only the juries without that judge are planned there.
        graded = (v[seen] >= 0).any(axis=0)
        vg = np.ascontiguousarray(v[seen][:, graded])
        fits = test[a, b].sum() > 0 and (lab[a, b].sum() > 0 or graded.sum() >= 3)
        if not graded.all():
            left_out.append((a, b, np.flatnonzero(~graded).tolist()))
        if not graded.any():
            empty.append((counts.systems[a], counts.strata[b]))
        elif fits:
            fit = core_cat.categorical_dawid_skene(
                vg, test[a, b][seen], lab[a, b][:, seen], design=counts.design,
                smoothing=smoothing,
            )  # fmt: skip
            pi[a, b], conf[a, b, graded] = fit.pi, fit.confusion
        elif counts.design == "random" and test[a, b].sum() == 0 and lab[a, b].sum() > 0:
            pi[a, b], conf[a, b, graded] = _labelled_pilot(vg, lab[a, b][:, seen], k, smoothing)
        else:
            empty.append((counts.systems[a], counts.strata[b]))
    if left_out:
        _warn_no_verdicts(counts, left_out)
    if empty:
        warnings.warn(
            f"No plan for (system, stratum) {empty[:5]!r}{' …' if len(empty) > 5 else ''}: the "
            f"pilot needs test items (with labelled items, or at least 3 judges with verdicts; "
            f"under the random design labelled items alone will do). Add items or label some.",
            SmallSampleWarning,
            stacklevel=4,
        )
    return pi, conf


def _warn_no_verdicts(counts, left_out) -> None:
    """Name the judges without a verdict in a group: no jury with them is planned there."""
    names = sorted({j for _, _, js in left_out for j in js})
    groups = [(counts.systems[a], counts.strata[b]) for a, b, _ in left_out]
    warnings.warn(
        f"Judge(s) {[terminal_safe(counts.judges[j]) for j in names]} gave no verdict in "
        f"(system, stratum) {groups[:5]!r}{' …' if len(groups) > 5 else ''}: the pilot there "
        f"is the other judges' Dawid–Skene fit, and no jury with them is planned there (width "
        f"NaN). Check the judge's verdict column (empty verdicts are dropped).",
        SmallSampleWarning,
        stacklevel=5,
    )


def _categorical_plan_dataset(counts, chosen, budgets, data, pilot, values, settings):
    names = _jury_names(counts, chosen)
    size = np.array([len(jury) for jury in chosen])
    cats = counts.categories
    per_cat = (*DIMS, "jury", "budget", "category")
    ds = xr.Dataset(
        {
            name: (per_cat if value.ndim == 5 else per_cat[:-1], value)
            for name, value in data.items()
        },
        coords={
            "system": counts.dataset.indexes["system"],
            "stratum": counts.dataset.indexes["stratum"],
            "jury": names,
            "jury_size": ("jury", size),
            "budget": budgets.astype(np.int64),
            "category": cats,
            JUDGE: counts.dataset.indexes[JUDGE],
            "truth": cats,
            "verdict": cats,
            "theta_hat": ((*DIMS, "category"), pilot[0]),
            "confusion_hat": ((*DIMS, JUDGE, "truth", "verdict"), pilot[1]),
        },
    )
    ds = _plan_choices(ds, data["target_width"], names, size)
    ds["width"].attrs["long_name"] = "planned width of the Dawid–Skene Wald interval of θ_k"
    ds["m"].attrs["long_name"] = "labelled items of each true category in the chosen split"
    target = "widest category" if values is None else "score"
    ds["target_width"].attrs["long_name"] = f"planned width the choices minimise ({target})"
    ds.attrs = {
        "method": "dawid-skene-plan",
        **settings,
        "ci_prob": 1 - settings["alpha"],
        "design": counts.design,
        "target": target,
        "categories": json.dumps([plain_value(c) for c in cats]),
        "scores": ""
        if values is None
        else json.dumps(dict(zip(map(str, cats), values.tolist(), strict=True))),
        "bayesjudge_version": __version__,
    }
    return ds
