"""Closed-form category shares from several judges' K-category verdicts, per group as xarray.

The numpy formulas live in :mod:`bayesjudge.core.categorical_jury`; this module applies them
to every (system, stratum) group of a :class:`~bayesjudge.data.CategoricalJuryCounts` and
labels the results in the vocabulary of
:func:`~bayesjudge.categorical_estimate.estimate_categorical` (dims ``system``, ``stratum``,
``category``, ``ci_bound``) and :func:`~bayesjudge.jury_estimate.jury_estimate`.
"""

from __future__ import annotations

import itertools
import json
import warnings

import numpy as np
import xarray as xr

from bayesjudge._text import terminal_safe
from bayesjudge._version import __version__
from bayesjudge.categorical_estimate import estimate_categorical, score_vector
from bayesjudge.core import categorical_jury as core
from bayesjudge.core._validation import check_alpha, check_resamples, check_seed
from bayesjudge.data import CategoricalJuryCounts
from bayesjudge.data._common import DIMS
from bayesjudge.data.jury import JUDGE
from bayesjudge.warnings import BayesJudgeWarning, ConvergenceWarning, SmallSampleWarning

__all__ = ["CATEGORICAL_JURY_METHODS", "categorical_jury_estimate"]

#: Methods of :func:`categorical_jury_estimate`, with the ``ci_kind`` each reports.
CATEGORICAL_JURY_METHODS = {
    "dawid-skene": "Wald (logit scale, observed information)",
    "dawid-skene-bootstrap": "percentile bootstrap",
    "plurality": "Wilson (naive: share of the plurality verdicts)",
    "per-judge": "score-type delta method, each judge on its own",
}
CI_BOUND = ["lower", "upper"]
CATEGORY = "category"


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _group_list(counts, groups) -> str:
    shown = [
        f"system={terminal_safe(counts.systems[a])}/stratum={terminal_safe(counts.strata[b])}"
        for a, b in groups[:5]
    ]
    return ", ".join(shown) + (f" and {len(groups) - 5} more" if len(groups) > 5 else "")


def _group_arrays(v, test, lab):
    """Patterns seen in a group, with its counts, and which judges gave a verdict there.

    A judge without any verdict in the group is left out of its patterns: every pattern
    seen has "no verdict" for that judge, so the likelihood does not depend on the judge's
    confusion matrix, and the other judges' estimate is the maximum-likelihood one (as the
    Bayesian jury model, which skips missing verdicts, would give). The patterns stay distinct
    without that column. None where the model cannot be fitted.
    """
    seen = (test + lab.sum(axis=0)) > 0
    graded = (v[seen] >= 0).any(axis=0)
    if test.sum() == 0 or not graded.any():
        return None
    if lab.sum() == 0 and graded.sum() < 3:
        return None
    # Contiguous, as v[seen] was: the EM then sums in the same order (bit-identical results).
    return np.ascontiguousarray(v[seen][:, graded]), test[seen], lab[:, seen], graded


def _warn_left_out(counts, left_out) -> None:
    """Name the judges left out of a group's Dawid–Skene fit for want of any verdict there."""
    names = sorted({j for _, js in left_out for j in js})
    shown = [terminal_safe(counts.judges[j]) for j in names]
    warnings.warn(
        f"Dawid–Skene: judge(s) {shown} gave no verdict in "
        f"{_group_list(counts, [g for g, _ in left_out])}; they are left out there, the "
        f"estimate is that of the other judges, and their confusion_hat is NaN. Check the "
        f"judge's verdict column (empty verdicts are dropped), or leave the judge's rows out.",
        SmallSampleWarning,
        stacklevel=4,
    )


def _blind_categories(v, lab) -> np.ndarray:
    """Flag the true categories with no labelled item and no verdict in a group's patterns.

    No item anchors such a category's confusion row, so any share of items that every judge
    put elsewhere fits the data: its share is not informed. The EM cannot even explore it
    (no start gives it weight, so π_k stays exactly 0), hence the NaN and [0, 1] its callers
    report instead of the EM's 0 with an interval for "0 of n items", which reads as evidence.
    """
    k = lab.shape[0]
    return np.array([lab[t].sum() == 0 and not (v == t).any() for t in range(k)])


def _warn_blind(counts, blind, categories, scored: bool) -> None:
    names = sorted({c for _, cats in blind for c in cats})
    shown = [terminal_safe(categories[c]) for c in names]
    warnings.warn(
        f"Dawid–Skene: the true categories {shown} have no labelled items and no judge's "
        f"verdict in {_group_list(counts, [g for g, _ in blind])}. Nothing in the data tells "
        f"how many items are truly of them (an item every judge put in another category looks "
        f"like an item of that category), so their estimate is NaN and their interval [0, 1]"
        f"{' (and the score NaN, its interval the range of the scores)' if scored else ''}; "
        f"the other categories' shares there are those of a model in which no item is of them. "
        f"If no item can be of these categories, leave them out of categories; otherwise "
        f"label some items of them.",
        SmallSampleWarning,
        stacklevel=4,
    )


def _warn_groups(counts, empty, unlabelled, stuck) -> None:
    if empty:
        warnings.warn(
            f"Dawid–Skene needs test items, and labelled items or at least 3 judges with "
            f"verdicts, in each group; the estimates are NaN for "
            f"{_group_list(counts, empty)}. Add items, or label some.",
            SmallSampleWarning,
            stacklevel=4,
        )
    if unlabelled:
        warnings.warn(
            f"No labelled items in {_group_list(counts, unlabelled)}: there the latent "
            f"categories are told apart only by assuming the judges mostly agree with the truth "
            f"(the EM starts from their vote), and the judges' errors are assumed independent "
            f"given the truth. Label some items of every category to anchor them.",
            SmallSampleWarning,
            stacklevel=4,
        )
    if stuck:
        warnings.warn(
            f"The Dawid–Skene EM did not converge in 10,000 iterations in "
            f"{_group_list(counts, stuck)} (converged = False): a flat likelihood, usually too "
            f"few items for the number of judges and categories. Label more items, merge "
            f"categories, or drop judges.",
            ConvergenceWarning,
            stacklevel=4,
        )


def _dawid_skene(counts, alpha, interval, scores, n_resamples, rng):
    """Dawid–Skene shares, intervals, score and confusion matrices, group by group."""
    v = counts.verdicts.astype(np.int64)
    s, r, j, k = len(counts.systems), len(counts.strata), len(counts.judges), counts.K
    est, ci = np.full((s, r, k), np.nan), np.full((s, r, k, 2), np.nan)
    score, score_ci = np.full((s, r), np.nan), np.full((s, r, 2), np.nan)
    conf = np.full((s, r, j, k, k), np.nan)
    converged = np.zeros((s, r), dtype=bool)
    test = counts.test.transpose(*DIMS, "pattern").values.astype(float)
    lab = counts.labelled.transpose(*DIMS, "truth", "pattern").values.astype(float)
    empty, unlabelled, stuck, blind, left_out = [], [], [], [], []
    for a, b in itertools.product(range(s), range(r)):
        group = _group_arrays(v, test[a, b], lab[a, b])
        if group is None:
            empty.append((a, b))
            continue
        *args, graded = group
        if not graded.all():
            left_out.append(((a, b), np.flatnonzero(~graded).tolist()))
        unlabelled += [(a, b)] if lab[a, b].sum() == 0 else []
        fit = core.categorical_dawid_skene(*args, design=counts.design)
        res = core.categorical_dawid_skene_interval(
            *args, design=counts.design, alpha=alpha, method=interval, scores=scores,
            n_resamples=n_resamples, random_seed=rng, fit=fit,
        )  # fmt: skip
        est[a, b], ci[a, b] = res.estimate, np.column_stack([res.lower, res.upper])
        score[a, b], score_ci[a, b] = res.score, (res.score_lower, res.score_upper)
        conf[a, b, graded], converged[a, b] = fit.confusion, fit.converged
        stuck += [] if fit.converged else [(a, b)]
        hidden = _blind_categories(args[0], args[2])
        if hidden.any():
            blind.append(((a, b), np.flatnonzero(hidden).tolist()))
            est[a, b, hidden], ci[a, b, hidden] = np.nan, (0.0, 1.0)
            conf[a, b][:, hidden] = np.nan
            if scores is not None:
                score[a, b], score_ci[a, b] = np.nan, (scores.min(), scores.max())
    _warn_groups(counts, empty, unlabelled, stuck)
    if left_out:
        _warn_left_out(counts, left_out)
    if blind:
        _warn_blind(counts, blind, counts.categories, scores is not None)
    cat = (*DIMS, CATEGORY)
    data = {
        "estimate": (cat, est),
        "ci": ((*cat, "ci_bound"), ci),
        "confusion_hat": ((*DIMS, JUDGE, "truth", "verdict"), conf),
        "converged": (DIMS, converged),
    }
    if scores is not None:
        data["score"] = (DIMS, score)
        data["score_ci"] = ((*DIMS, "ci_bound"), score_ci)
    return xr.Dataset(data)


def _plurality(counts, alpha, scores):
    v = counts.verdicts.astype(np.int64)
    test = counts.test.transpose(*DIMS, "pattern").values
    shape, k = test.shape[:2], counts.K
    est, ci = np.full((*shape, k), np.nan), np.full((*shape, k, 2), np.nan)
    score, score_ci = np.full(shape, np.nan), np.full((*shape, 2), np.nan)
    empty = []
    for a, b in itertools.product(*map(range, shape)):
        if test[a, b].sum() == 0:
            empty.append((a, b))
            continue
        res = core.plurality_vote(v, test[a, b], k, alpha=alpha, scores=scores)
        est[a, b], ci[a, b] = res.estimate, np.column_stack([res.lower, res.upper])
        score[a, b], score_ci[a, b] = res.score, (res.score_lower, res.score_upper)
    if empty:
        warnings.warn(
            f"No test items in {_group_list(counts, empty)}: their estimate is NaN. Drop them "
            f"with counts.sel(...) or add their judged items.",
            SmallSampleWarning,
            stacklevel=3,
        )
    cat = (*DIMS, CATEGORY)
    data = {"estimate": (cat, est), "ci": ((*cat, "ci_bound"), ci)}
    if scores is not None:
        data["score"] = (DIMS, score)
        data["score_ci"] = ((*DIMS, "ci_bound"), score_ci)
    return xr.Dataset(data)


def _per_judge(counts, alpha, scores_map):
    parts = []
    for judge in counts.judges:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            parts.append(estimate_categorical(counts.for_judge(judge), alpha=alpha,
                                              scores=scores_map))  # fmt: skip
        # One judge's warning ("No test items in ...") must say which judge it is about.
        for w in caught:
            own = issubclass(w.category, BayesJudgeWarning)
            text = f"Judge {terminal_safe(judge)!r} alone: {w.message}" if own else w.message
            warnings.warn(text, w.category, stacklevel=3)
    keep = ["estimate", "ci", "p_hat", "confusion_hat"]
    keep += ["score", "score_ci"] if scores_map is not None else []
    out = xr.concat(
        [p[keep] for p in parts], dim=xr.DataArray(counts.dataset.indexes[JUDGE], dims=JUDGE)
    )
    return out.transpose(*DIMS, JUDGE, ...)


def categorical_jury_estimate(
    counts: CategoricalJuryCounts,
    *,
    method: str = "dawid-skene",
    alpha: float = 0.05,
    scores=None,
    n_resamples: int = 2000,
    random_seed=None,
) -> xr.Dataset:
    """Estimate every group's true category shares θ_k from several judges' verdict patterns.

    Parameters
    ----------
    counts : CategoricalJuryCounts
        K-category verdict patterns of the judges
        (:meth:`~bayesjudge.data.CategoricalJuryCounts.from_frames`).
    method : {"dawid-skene", "dawid-skene-bootstrap", "plurality", "per-judge"}
        ``"dawid-skene"``: the maximum-likelihood shares of the latent-truth model of
        conditionally independent judges, anchored by the labelled items
        (:func:`~bayesjudge.core.categorical_jury.categorical_dawid_skene`), with Wald
        intervals on the logit scale; ``"dawid-skene-bootstrap"``: the same estimate with
        percentile-bootstrap intervals (resampling by the counts' design).
        ``"plurality"``: the share of test items the plurality of judges puts in each
        category, ties split equally (naive: it estimates P(plurality says k), not θ_k).
        ``"per-judge"``: each judge's own corrected shares
        (:func:`~bayesjudge.categorical_estimate.estimate_categorical` on
        ``counts.for_judge(j)``), along a ``judge`` dimension.
    alpha : float, default 0.05
        One minus the coverage of each interval (``ci_prob = 1 - alpha``).
    scores : dict, optional
        ``{category: value}``: also estimate the mean score ``Σ value_k θ_k`` (e.g.
        ``{"A": 1, "tie": 0.5, "B": 0}``, A's win rate with ties counted half).
    n_resamples : int, default 2000
        Bootstrap resamples (``method="dawid-skene-bootstrap"``).
    random_seed : int, numpy.random.Generator or None
        Seed of the bootstrap.

    Returns
    -------
    xarray.Dataset
        Dims ``(system, stratum, category, ci_bound)`` (and ``judge`` for ``"per-judge"``).
        Variables ``estimate``, ``ci``; with ``scores`` also ``score`` and ``score_ci``; for
        the Dawid–Skene methods ``confusion_hat`` (system, stratum, judge, truth, verdict) and
        ``converged``; for ``"per-judge"`` each judge's ``p_hat`` and ``confusion_hat``
        (from its calibration table). Attrs ``method``, ``ci_kind``, ``ci_prob``, ``alpha``,
        ``design``, ``categories`` (JSON), ``scores`` (JSON), ``random_seed``,
        ``n_resamples``, ``bayesjudge_version``.

    Raises
    ------
    TypeError
        If ``counts`` is not a CategoricalJuryCounts.
    ValueError
        For an unknown method, a bad ``alpha``, ``scores``, ``n_resamples`` or seed.

    Warns
    -----
    SmallSampleWarning
        Where a group cannot be fitted (no test items, or no labelled items with fewer than 3
        judges with verdicts there: NaN); where a judge gave no verdict in a group (left out
        of that group's Dawid–Skene fit, the other judges' estimate given, its
        ``confusion_hat`` NaN there); and where a group has no labelled
        items (the latent categories then rest on the judges agreeing with the truth). For the
        Dawid–Skene methods, where a true category has neither labelled items nor any
        judge's verdict in a group: its estimate is NaN, its interval [0, 1] and its
        confusion rows NaN there (with ``scores``, the score is NaN and its interval the
        range of the scores), as the data say nothing about how many items are of it.
    ConvergenceWarning
        Where the EM did not converge.

    Notes
    -----
    The Dawid–Skene estimate is consistent when the judges are conditionally independent
    given the truth; judges who err on the same items make its intervals too narrow.

    Examples
    --------
    >>> from bayesjudge.data import CategoricalJuryCounts
    >>> counts = CategoricalJuryCounts.from_counts(
    ...     ["000", "111", "222", "001", "121", "220", "010"],
    ...     test=[120, 60, 150, 30, 20, 25, 15],
    ...     labelled=[[10, 0, 0, 2, 0, 0, 1], [0, 8, 0, 1, 3, 0, 0], [0, 0, 12, 0, 0, 2, 0]],
    ...     judges=["a", "b", "c"], categories=["A", "tie", "B"])
    >>> ds = categorical_jury_estimate(counts, scores={"A": 1, "tie": 0.5, "B": 0})
    >>> ds["estimate"].squeeze().round(2).values.tolist(), round(ds["score"].item(), 3)
    ([0.39, 0.19, 0.42], 0.488)
    """
    if not isinstance(counts, CategoricalJuryCounts):
        raise TypeError(
            f"categorical_jury_estimate needs a CategoricalJuryCounts "
            f"(CategoricalJuryCounts.from_frames(..., judges=...)); got {type(counts).__name__}."
        )
    if method not in CATEGORICAL_JURY_METHODS:
        raise ValueError(f"method must be one of {list(CATEGORICAL_JURY_METHODS)}; got {method!r}.")
    alpha = check_alpha(alpha)
    random_seed = check_seed(random_seed)
    bootstrap = method == "dawid-skene-bootstrap"
    if bootstrap:
        n_resamples = check_resamples(
            n_resamples, "categorical_jury_estimate(method='dawid-skene-bootstrap')", alpha
        )
    categories = counts.categories
    values = None if scores is None else score_vector(scores, categories)
    if method == "per-judge":
        out = _per_judge(counts, alpha, scores)
    elif method == "plurality":
        out = _plurality(counts, alpha, values)
    else:
        rng = np.random.default_rng(random_seed) if bootstrap else None
        with warnings.catch_warnings():  # check_resamples above has warned once already
            warnings.filterwarnings("ignore", "categorical_dawid_skene_interval: n_resamples")
            out = _dawid_skene(counts, alpha, "bootstrap" if bootstrap else "wald", values,
                               n_resamples, rng)  # fmt: skip
    out = out.assign_coords(
        system=counts.dataset.indexes["system"],
        stratum=counts.dataset.indexes["stratum"],
        category=categories,
        ci_bound=CI_BOUND,
    )
    if "confusion_hat" in out and method != "per-judge":
        out = out.assign_coords(
            judge=counts.dataset.indexes[JUDGE], truth=out["category"].values,
            verdict=out["category"].values,
        )  # fmt: skip
    out.attrs = {
        "method": method,
        "design": counts.design,
        "estimand": "population",
        "ci_kind": CATEGORICAL_JURY_METHODS[method],
        "ci_prob": 1 - alpha,
        "alpha": alpha,
        "categories": json.dumps([_plain(c) for c in categories]),
        "scores": ""
        if values is None
        else json.dumps(dict(zip(map(str, categories), values.tolist(), strict=True))),
        "random_seed": "None" if random_seed is None else str(random_seed),
        "n_resamples": n_resamples if bootstrap else 0,
        "judge_method": "delta" if method == "per-judge" else "",
        "bayesjudge_version": __version__,
    }
    out["estimate"].attrs["long_name"] = "share of each true category (theta)"
    if values is not None:
        out["score"].attrs["long_name"] = "mean score, sum of value_k * theta_k"
    return out
