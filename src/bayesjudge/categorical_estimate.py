"""``estimate_categorical`` and ``compare_categorical``: K-category closed forms as xarray.

The layer-3 counterpart of :mod:`bayesjudge.estimate` and :mod:`bayesjudge.compare` for a
:class:`~bayesjudge.data.CategoricalCounts`: every (system, stratum) group is corrected with
the generalised Rogan–Gladen estimate of :mod:`bayesjudge.core.categorical`, and the result is
a tidy :class:`xarray.Dataset` in the package's interval vocabulary (``ci_bound = ["lower",
"upper"]``, attrs ``ci_kind`` and ``ci_prob``). It also owns the warnings that need group
labels (empty groups, an ill-conditioned judge).
"""

from __future__ import annotations

import json
import numbers
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import xarray as xr

from bayesjudge._text import pair_label, terminal_safe
from bayesjudge._version import __version__
from bayesjudge.core._validation import check_alpha, check_design, check_resamples, check_seed
from bayesjudge.core.categorical import (
    bootstrap_linear,
    bootstrap_score_difference,
    categorical_interval,
    confusion_condition,
    rogan_gladen_categorical,
    score_difference,
)
from bayesjudge.core.kernels import LOW_J_THRESHOLD
from bayesjudge.core.paired import system_pairs
from bayesjudge.data import CategoricalCounts
from bayesjudge.data.category_labels import label_key, label_kind, plain_label
from bayesjudge.warnings import IllConditionedJudgeWarning, SmallSampleWarning

__all__ = ["CATEGORICAL_METHODS", "COMPARE_CATEGORICAL_METHODS", "compare_categorical",
           "estimate_categorical", "score_vector"]  # fmt: skip

#: Methods of :func:`estimate_categorical`, with the ``ci_kind`` each one reports.
CATEGORICAL_METHODS = {
    "delta": "score-type delta method (variance at the hypothesised value)",
    "wald": "Wald (delta method)",
    "bootstrap": "percentile bootstrap",
}
#: Methods of :func:`compare_categorical`.
COMPARE_CATEGORICAL_METHODS = {"delta": "Wald (delta method)", "bootstrap": "percentile bootstrap"}
_CORE_METHOD = {"delta": "score", "wald": "wald"}
_CALIBRATIONS = ("separate", "shared")
_DIMS = ("system", "stratum")


def score_vector(scores, categories) -> np.ndarray:
    """Return the value of every category, in order, from ``{category: value}``.

    Keys are matched to the categories by value and type, as labels are (``1.0`` names the
    category ``1``; ``"1"`` and ``True`` do not).

    Raises
    ------
    TypeError
        If ``scores`` is not a mapping, or a value is not a real number (text, a bool).
    ValueError
        If a category has no value, a key is not a category, two keys name one category, or
        a value is not finite.

    Examples
    --------
    >>> score_vector({"A": 1, "tie": 0.5, "B": 0}, ["A", "tie", "B"]).tolist()
    [1.0, 0.5, 0.0]
    """
    if not isinstance(scores, Mapping):
        raise TypeError(
            f"scores must be a dict {{category: value}}; got {type(scores).__name__}. E.g. "
            "scores={'A': 1, 'tie': 0.5, 'B': 0} for a win rate of A with ties counted half."
        )
    categories = list(categories)
    keys: dict[tuple, list] = {}
    for name in scores:
        keys.setdefault(label_key(plain_label(name)), []).append(name)
    twice = [names for names in keys.values() if len(names) > 1]
    if twice:
        raise ValueError(
            f"scores names one category more than once: {twice[0]!r}; give each category "
            f"{categories!r} one value."
        )
    wanted = {label_key(c): c for c in categories}
    missing = [c for c in categories if label_key(c) not in keys]
    extra = [names[0] for key, names in keys.items() if key not in wanted]
    if missing or extra:
        hint = ""
        if any(isinstance(k, str) for k in extra) and all(
            label_kind(c) == "number" for c in categories
        ):
            hint = " The categories are numbers: write the keys as numbers, e.g. {1: 1.0}."
        raise ValueError(
            f"scores must give one value for each category {categories!r} (keys compared by "
            f"value and type); missing {missing!r}, not a category {extra!r}.{hint}"
        )
    raw = [scores[keys[label_key(c)][0]] for c in categories]
    odd = [
        (c, x)
        for c, x in zip(categories, raw, strict=True)
        if isinstance(x, bool | np.bool_) or not isinstance(x, numbers.Real)
    ]
    if odd:
        raise TypeError(
            f"scores values must be real numbers; got {
                ', '.join(f'{c!r}: {x!r} ({type(x).__name__})' for c, x in odd[:3])
            }. Write e.g. 0.5, not '0.5' or True."
        )
    values = np.array(raw, dtype=float)
    if not np.isfinite(values).all():
        bad = [c for c, x in zip(categories, values, strict=True) if not np.isfinite(x)]
        raise ValueError(
            f"scores must be finite numbers; the value of {bad!r} is not: {dict(scores)!r}."
        )
    return values


def _standardised(v: np.ndarray) -> tuple[float, float, np.ndarray]:
    """Return (centre, half-range, (v - centre) / half-range) of score values.

    A mean score and its interval are affine in the values: working on [-1, 1] and mapping
    back keeps the variance (squares of the values) from overflowing for values near 1e308.
    """
    # halves first: max - min overflows for values of opposite sign near 1e308
    centre = v.max() / 2 + v.min() / 2
    scale = v.max() / 2 - v.min() / 2
    if scale == 0:  # one value for every category: the score is that value
        scale = 1.0
    return float(centre), float(scale), (v - centre) / scale


def _group_names(ds: xr.Dataset, mask: np.ndarray, limit: int = 6) -> str:
    systems = [terminal_safe(v) for v in ds["system"].values]
    strata = [terminal_safe(v) for v in ds["stratum"].values]
    names = [f"system={systems[i]}/stratum={strata[j]}" for i, j in zip(*np.nonzero(mask),
                                                                        strict=True)]  # fmt: skip
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _usable(ds: xr.Dataset, test, cal, calibration: str):
    """Mask of groups that can be corrected, the conditioning per group; warn where not."""
    no_test = test.sum(-1) == 0
    empty_row = (cal.sum(-1) == 0).any(-1)
    shape = test.shape[:-1]
    det, smin, amp = (np.full(shape, np.nan) for _ in range(3))
    singular = np.zeros(shape, dtype=bool)
    has_cal = ~empty_row
    if has_cal.any():
        cond = confusion_condition(cal[has_cal])
        det[has_cal], smin[has_cal], amp[has_cal] = (
            cond.determinant,
            cond.sigma_min,
            (cond.amplification),
        )
        singular[has_cal] = cond.singular
    if no_test.any():
        warnings.warn(
            f"No test items in {_group_names(ds, no_test)}: their estimate is NaN. Drop them "
            "with counts.sel(...) or add their judged items.",
            SmallSampleWarning,
            stacklevel=3,
        )
    if (empty_row & ~no_test).any():
        hint = (
            "pass calibration='shared' (--calibration-design shared) to pool the systems' sets, or "
            if calibration == "separate" and ds.sizes["system"] > 1
            else ""
        )
        flagged = empty_row & ~no_test
        rows = (cal.sum(-1) == 0)[flagged].any(0)
        unlabelled = [_plain(c) for c, r in zip(ds["truth"].values, rows, strict=True) if r]
        warnings.warn(
            f"A true category has no calibration items in {_group_names(ds, flagged)} (truth "
            f"{terminal_safe(repr(unlabelled))}): the judge's verdicts for it are unknown, "
            f"so the corrected estimate is NaN there. To fix it, {hint}label items of every "
            "true category for these groups (a category no item has: leave it out of "
            "categories).",
            SmallSampleWarning,
            stacklevel=3,
        )
    _warn_conditioning(ds, singular & ~no_test, smin, amp, ~no_test & has_cal & ~singular)
    return ~no_test & has_cal & ~singular, (det, smin, amp)


def _warn_conditioning(ds, singular, smin, amp, checked) -> None:
    if singular.any():
        warnings.warn(
            f"The judge's estimated confusion matrix is singular in {_group_names(ds, singular)} "
            "(some true categories are indistinguishable from its verdicts on the calibration "
            "set: the K-category analogue of q0 + q1 = 1), so the correction is undefined "
            "there: the estimate is NaN and the interval the whole range. Merge the categories "
            "the judge confuses, label more calibration items, or use a better judge.",
            IllConditionedJudgeWarning,
            stacklevel=4,
        )
    low = checked & (smin < LOW_J_THRESHOLD)
    if low.any():
        worst = float(np.nanmax(np.where(low, amp, np.nan)))
        warnings.warn(
            f"Ill-conditioned judge in {_group_names(ds, low)}: the smallest singular value of "
            f"the estimated confusion matrix (on the sum-zero subspace, |J| at K = 2) is below "
            f"{LOW_J_THRESHOLD:g}, so the correction amplifies sampling errors up to "
            f"{worst:.0f}x and the intervals are wide. Use a better judge or prompt, merge "
            "categories the judge confuses, or label more calibration items.",
            IllConditionedJudgeWarning,
            stacklevel=4,
        )


def _arrays(counts: CategoricalCounts, calibration: str):
    if not isinstance(counts, CategoricalCounts):
        raise TypeError(
            f"counts must be a bayesjudge.CategoricalCounts; got {type(counts).__name__}. Build "
            "one with CategoricalCounts.from_counts(...) or .from_frames(...)."
        )
    if calibration not in _CALIBRATIONS:
        raise ValueError(f"calibration must be one of {list(_CALIBRATIONS)}; got {calibration!r}.")
    if calibration == "shared":
        counts = counts.pooled_calibration("system")
    ds = counts.ds
    test = ds["test"].transpose(*_DIMS, "category").values.astype(float)
    cal = ds["calibration"].transpose(*_DIMS, "truth", "verdict").values.astype(float)
    return counts, ds, test, cal


def estimate_categorical(
    counts: CategoricalCounts,
    *,
    method: str = "delta",
    alpha: float = 0.05,
    scores=None,
    calibration: str = "separate",
    n_resamples: int = 2000,
    random_seed=None,
) -> xr.Dataset:
    """Correct every (system, stratum) group's category shares (and a score) for judge error.

    Parameters
    ----------
    counts : CategoricalCounts
        Test verdict counts and calibration counts (rows = truth) per group.
    method : {"delta", "wald", "bootstrap"}, default "delta"
        ``"delta"``: the delta-method variance (test and calibration sampling) inverted as a
        score-type interval, with the variance at the hypothesised value
        (:func:`~bayesjudge.core.categorical.categorical_interval`, ``method="score"``): it
        keeps its width where a share is estimated at 0. ``"wald"``: estimate ± z·SE, cut to
        the range; it collapses at a share of 0 (kept for comparison).
        ``"bootstrap"``: percentile bootstrap resampling the test set and the calibration by
        the counts' design, each calibration row from ``(c_i + 1/K) / (m_i + 1)`` so that an
        empty cell is not resampled as a zero error rate
        (:func:`~bayesjudge.core.categorical.bootstrap_linear`).
    alpha : float, default 0.05
        One minus the coverage (``ci_prob = 1 - alpha``).
    scores : dict, optional
        ``{category: value}``: also estimate the mean score ``Σ value_k θ_k`` (a rubric
        mean; ``{"A": 1, "tie": 0.5, "B": 0}`` is A's win rate with ties counted half).
    calibration : {"separate", "shared"}, default "separate"
        ``"separate"``: each group's own calibration counts; ``"shared"``: the calibration
        pooled over systems within each stratum (assumes the judge errs alike on every
        system).
    n_resamples : int, default 2000
        Bootstrap resamples (``method="bootstrap"``).
    random_seed : int, numpy.random.Generator or None
        Seed of the bootstrap.

    Returns
    -------
    xarray.Dataset
        Dims ``(system, stratum, category, ci_bound)`` (and ``truth``, ``verdict`` for
        ``confusion_hat``). Variables ``estimate`` (θ̂ on the simplex), ``ci``,
        ``estimate_raw`` (θ̃ before the projection), ``projected``, ``p_hat``,
        ``confusion_hat``, the conditioning ``determinant`` (J at K = 2), ``sigma_min``
        (``|J|`` at K = 2) and ``amplification`` (``1/|J|``); with ``scores`` also ``score`` and
        ``score_ci``. Attrs ``method``, ``design``, ``estimand``, ``ci_kind``, ``ci_prob``,
        ``alpha``, ``calibration``, ``categories``, ``scores`` (JSON), ``random_seed``,
        ``n_resamples``, ``bootstrap_design``, ``bayesjudge_version``.

    Warns
    -----
    SmallSampleWarning
        Where a group has no test items or a true category without calibration items (NaN).
    IllConditionedJudgeWarning
        Where Ĉ is singular (NaN, the interval the whole range) or its smallest singular
        value on the sum-zero subspace is below 0.2 (the binary low-J threshold).

    Examples
    --------
    >>> from bayesjudge.data import CategoricalCounts
    >>> counts = CategoricalCounts.from_counts(
    ...     test=[300, 200, 500], calibration=[[80, 15, 5], [10, 80, 10], [5, 15, 80]],
    ...     categories=["A", "tie", "B"])
    >>> out = estimate_categorical(counts, scores={"A": 1, "tie": 0.5, "B": 0})
    >>> out["estimate"].squeeze().round(3).values.tolist()
    [0.328, 0.077, 0.595]
    >>> round(float(out["score"].squeeze()), 3), out.attrs["ci_kind"][:10]
    (0.367, 'score-type')
    """
    if method not in CATEGORICAL_METHODS:
        raise ValueError(f"method must be one of {list(CATEGORICAL_METHODS)}; got {method!r}.")
    alpha = check_alpha(alpha)
    random_seed = check_seed(random_seed)
    counts, ds, test, cal = _arrays(counts, calibration)
    categories = counts.categories
    k = len(categories)
    v = None if scores is None else score_vector(scores, categories)
    if v is not None:
        centre, scale, vs = _standardised(v)
    if method == "bootstrap":
        n_resamples = check_resamples(n_resamples, "estimate_categorical(method='bootstrap')",
                                      alpha)  # fmt: skip
    usable, (det, smin, amp) = _usable(ds, test, cal, calibration)
    shape = test.shape[:-1]
    nan_k = np.full((*shape, k), np.nan)
    est, lower, upper, raw = nan_k.copy(), nan_k.copy(), nan_k.copy(), nan_k.copy()
    score, s_lo, s_hi = (np.full(shape, np.nan) for _ in range(3))
    projected = np.zeros(shape, dtype=bool)
    lower[~usable], upper[~usable] = 0.0, 1.0
    if v is not None:
        s_lo[~usable], s_hi[~usable] = v.min(), v.max()
    if usable.any():
        x, c = test[usable], cal[usable]
        rg = rogan_gladen_categorical(x, c)
        raw[usable], projected[usable] = rg.raw, rg.projected
        if method == "bootstrap":
            w = np.eye(k) if v is None else np.vstack([np.eye(k), vs])
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", "bootstrap_categorical: n_resamples",
                                        SmallSampleWarning)  # fmt: skip
                res = bootstrap_linear(x, c, w, alpha=alpha, n_resamples=n_resamples,
                                       calibration_design=check_design(counts.design),
                                       random_seed=random_seed)  # fmt: skip
            est[usable], lower[usable], upper[usable] = (a[..., :k] for a in res)
            if v is not None:
                score[usable], s_lo[usable], s_hi[usable] = (
                    centre + scale * a[..., k] for a in res
                )
        else:
            core = _CORE_METHOD[method]
            est[usable], lower[usable], upper[usable] = categorical_interval(
                x, c, method=core, alpha=alpha
            )
            if v is not None:
                score[usable], s_lo[usable], s_hi[usable] = (
                    centre + scale * a
                    for a in categorical_interval(x, c, vs, method=core, alpha=alpha)
                )
    n = test.sum(-1, keepdims=True)
    m = cal.sum(-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_hat = np.where(n > 0, test / np.where(n > 0, n, 1), np.nan)
        conf = np.where(m > 0, cal / np.where(m > 0, m, 1), np.nan)
    coords = {"system": ds["system"].values, "stratum": ds["stratum"].values,
              "category": ds["category"].values, "truth": ds["truth"].values,
              "verdict": ds["verdict"].values, "ci_bound": ["lower", "upper"]}  # fmt: skip
    cat = (*_DIMS, "category")
    data = {
        "estimate": (cat, est),
        "ci": ((*cat, "ci_bound"), np.stack([lower, upper], -1)),
        "estimate_raw": (cat, raw),
        "projected": (_DIMS, projected),
        "p_hat": (cat, p_hat),
        "confusion_hat": ((*_DIMS, "truth", "verdict"), conf),
        "determinant": (_DIMS, det),
        "sigma_min": (_DIMS, smin),
        "amplification": (_DIMS, amp),
    }
    if v is not None:
        data["score"] = (_DIMS, score)
        data["score_ci"] = ((*_DIMS, "ci_bound"), np.stack([s_lo, s_hi], -1))
    out = xr.Dataset(data, coords=coords)
    out.attrs = {
        "method": method,
        "design": counts.design,
        "estimand": "population",
        "ci_kind": CATEGORICAL_METHODS[method],
        "ci_prob": 1 - alpha,
        "alpha": alpha,
        "calibration": calibration,
        "categories": json.dumps([_plain(c) for c in categories]),
        "scores": ""
        if v is None
        else json.dumps(dict(zip(map(str, categories), v.tolist(), strict=True))),
        "random_seed": "None" if random_seed is None else str(random_seed),
        "n_resamples": n_resamples if method == "bootstrap" else 0,
        "bootstrap_design": counts.design if method == "bootstrap" else "",
        "bayesjudge_version": __version__,
    }
    out["estimate"].attrs["long_name"] = "corrected share of each true category (theta)"
    if v is not None:
        out["score"].attrs["long_name"] = "corrected mean score, sum of value_k * theta_k"
    return out


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def compare_categorical(
    counts: CategoricalCounts,
    *,
    scores,
    method: str = "delta",
    alpha: float = 0.05,
    calibration: str = "separate",
    n_resamples: int = 2000,
    random_seed=None,
    pairs=None,
) -> xr.Dataset:
    """Compare every pair of systems within every stratum on a score: Δ = score_a − score_b.

    Parameters
    ----------
    counts : CategoricalCounts
        Counts of at least two systems (independent test items: no pairing is used).
    scores : dict
        ``{category: value}``, as for :func:`estimate_categorical`.
    method : {"delta", "bootstrap"}, default "delta"
        ``"delta"``: Wald interval of the unprojected difference with the delta-method SE
        (:func:`~bayesjudge.core.categorical.score_difference`), cut to ± the score's range.
        ``"bootstrap"``: percentile interval of the projected difference from resamples of
        each system's test and (smoothed, as in :func:`estimate_categorical`) calibration
        counts (one shared calibration resample for both systems with
        ``calibration="shared"``).
    alpha : float, default 0.05
        One minus the coverage.
    calibration : {"separate", "shared"}, default "separate"
        Each system's own calibration, or one set pooled over the systems of a stratum (its
        error then moves both scores together and mostly cancels in Δ).
    n_resamples : int, default 2000
        Bootstrap resamples.
    random_seed : int, numpy.random.Generator or None
        Seed of the bootstrap.
    pairs : sequence of (label, label), optional
        Compare only these pairs; every pair in coordinate order when None.

    Returns
    -------
    xarray.Dataset
        Dims ``(pair, stratum, ci_bound)``, ``pair`` labelled ``"a - b"`` with coords
        ``first`` and ``second`` (as :func:`bayesjudge.compare.compare`). Variables
        ``estimate``, ``ci`` and, for ``"delta"``, ``se``. Attrs ``method``, ``calibration``,
        ``alpha``, ``ci_prob``, ``ci_kind``, ``scores``, ``paired`` (False), ``design``,
        ``n_resamples``, ``random_seed``, ``bayesjudge_version``.

    Examples
    --------
    >>> from bayesjudge.data import CategoricalCounts
    >>> counts = CategoricalCounts.from_counts(
    ...     test=[[400, 200, 400], [300, 200, 500]],
    ...     calibration=[[80, 15, 5], [10, 80, 10], [5, 15, 80]],
    ...     categories=["A", "tie", "B"], system=["x", "y"])
    >>> out = compare_categorical(counts, scores={"A": 1, "tie": 0.5, "B": 0})
    >>> out.pair.values.tolist(), round(float(out["estimate"].squeeze()), 4)
    (['x - y'], 0.1333)
    """
    if method not in COMPARE_CATEGORICAL_METHODS:
        raise ValueError(
            f"method must be one of {list(COMPARE_CATEGORICAL_METHODS)}; got {method!r}."
        )
    alpha = check_alpha(alpha)
    random_seed = check_seed(random_seed)
    if (
        calibration == "separate"
        and isinstance(counts, CategoricalCounts)
        and "system" in counts.calibration_shared_over
    ):
        # Two copies of one set taken as independent would count its error twice in Δ.
        raise ValueError(
            "These counts carry one calibration set shared over systems (attached with "
            "with_calibration_from or pooled_calibration), so the systems have no separate "
            "calibration; use calibration='shared'."
        )
    counts, ds, test, cal = _arrays(counts, calibration)
    v = score_vector(scores, counts.categories)
    _, scale, vs = _standardised(v)  # Δ is linear in the values: no centre
    systems = counts.systems
    if len(systems) < 2:
        raise ValueError(f"compare_categorical needs at least two systems; got {systems!r}.")
    if method == "bootstrap":
        n_resamples = check_resamples(n_resamples, "compare_categorical(method='bootstrap')",
                                      alpha)  # fmt: skip
    usable, _ = _usable(ds, test, cal, calibration)
    first, second = _pair_positions(systems, pairs)
    shape = (len(first), test.shape[1])
    estimate, se, lower, upper = (np.full(shape, np.nan) for _ in range(4))
    rng = np.random.default_rng(random_seed)
    for p, (a, b) in enumerate(zip(first, second, strict=True)):
        ok = usable[a] & usable[b]
        if not ok.any():
            continue
        if method == "delta":
            res = score_difference(test[a][ok], test[b][ok], cal[a][ok],
                                   None if calibration == "shared" else cal[b][ok], vs,
                                   alpha=alpha)  # fmt: skip
            estimate[p, ok], se[p, ok], lower[p, ok], upper[p, ok] = (scale * a for a in res)
        else:
            difference = _bootstrap_difference(
                test[a][ok], test[b][ok], cal[a][ok], cal[b][ok], vs, alpha, n_resamples,
                calibration == "shared", rng, check_design(counts.design),
            )  # fmt: skip
            estimate[p, ok], lower[p, ok], upper[p, ok] = (scale * d for d in difference)
    data = {"estimate": (("pair", "stratum"), estimate),
            "ci": (("pair", "stratum", "ci_bound"), np.stack([lower, upper], -1))}  # fmt: skip
    if method == "delta":
        data["se"] = (("pair", "stratum"), se)
    out = xr.Dataset(data, coords={
        "pair": [pair_label(systems[i], systems[j]) for i, j in zip(first, second, strict=True)],
        "first": ("pair", [systems[i] for i in first]),
        "second": ("pair", [systems[j] for j in second]),
        "stratum": ds["stratum"].values, "ci_bound": ["lower", "upper"],
    })  # fmt: skip
    out.attrs = {
        "method": method, "calibration": calibration, "alpha": alpha, "ci_prob": 1 - alpha,
        "ci_kind": COMPARE_CATEGORICAL_METHODS[method],
        "scores": json.dumps(dict(zip(map(str, counts.categories), v.tolist(), strict=True))),
        "paired": False, "design": counts.design,
        "n_resamples": n_resamples if method == "bootstrap" else 0,
        "random_seed": "None" if random_seed is None else str(random_seed),
        "bayesjudge_version": __version__,
    }  # fmt: skip
    return out


def _pair_positions(systems, pairs):
    if pairs is None:
        return system_pairs(len(systems))
    position = {s: i for i, s in enumerate(systems)}
    pairs = list(pairs)
    flat = [p for p in pairs if isinstance(p, str) or not isinstance(p, Sequence | np.ndarray)]
    if flat:
        raise ValueError(
            f"pairs must be a list of (system, system) pairs, e.g. [{tuple(systems[:2])!r}]; "
            f"got {flat[:3]!r} as entries (one pair is written [(a, b)], not (a, b))."
        )
    unknown = [p for p in pairs if len(p) != 2 or p[0] not in position or p[1] not in position]
    if unknown:
        raise ValueError(f"pairs {unknown[:3]!r} are not pairs of the systems {systems[:10]!r}.")
    itself = [p for p in pairs if position[p[0]] == position[p[1]]]
    if itself:
        raise ValueError(
            f"pairs {itself[:3]!r} compare a system with itself (Δ = 0 by construction); "
            f"name two different systems."
        )
    return (np.array([position[a] for a, _ in pairs], dtype=np.intp),
            np.array([position[b] for _, b in pairs], dtype=np.intp))  # fmt: skip


def _bootstrap_difference(xa, xb, ca, cb, v, alpha, n_resamples, shared, rng, design):
    """Percentile interval of Δ score (shared: one calibration resample for both systems)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "bootstrap_score_difference: n_resamples",
                                SmallSampleWarning)  # fmt: skip
        return bootstrap_score_difference(
            xa, xb, ca, None if shared else cb, v, alpha=alpha, n_resamples=n_resamples,
            calibration_design=design, random_seed=rng,
        )  # fmt: skip
