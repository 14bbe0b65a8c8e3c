"""Several judges' K-category verdicts (issue 17): coverage and width of the jury's intervals.

Three judges of differing quality give pairwise-preference verdicts with ties (K = 3: A
better, tie, B better) on the same items, conditionally independent given the truth. Judge j
is right on a decisive item with probability ``accuracy[j]`` (default 0.70, 0.75, 0.85), calls
a decisive item a tie with probability ``tie_rate`` (0.10) and a true tie a tie with
probability ``accuracy[j]`` (:func:`bayesjudge.simulate.preference_confusion`). The truth's
shares are θ(t) = ((1 − t)·0.55, t, (1 − t)·0.45) for the tie shares t = ``tie``. The data of
a design point are drawn by :func:`bayesjudge.simulate.simulate_categorical_jury_arrays`:
``n`` unlabelled test items and the labelled items (``labels``: ``"stratified:10"`` = 10
items of each true category, ``"random:60"`` = 60 items whose truths are drawn from θ).

Methods (:data:`METHODS`), all on the same data sets, every interval per category:

``best-single``
    The judge with the highest *true* accuracy alone: the generalised Rogan–Gladen estimate
    with the score-type delta interval on its own counts (the default of
    :func:`bayesjudge.estimate` for one judge's K-category counts,
    :func:`~bayesjudge.core.categorical.categorical_interval`); a replication where it is not
    identified (a singular or unlabelled confusion row) gets 1/K and [0, 1] and is counted in
    ``undefined_share``.
``ds-wald``
    The K-class Dawid–Skene maximum-likelihood θ̂ of all judges, anchored by the labelled
    items, with the logit-scale Wald interval
    (:func:`~bayesjudge.core.categorical_jury.categorical_dawid_skene_interval`).
``plurality``
    The share of test items the plurality of judges puts in each category (ties split) with
    Wilson intervals: it estimates P(plurality says k), not θ_k; the naive baseline.
``bayes-joint``
    The Bayesian joint model (:func:`bayesjudge.models.categorical_jury.fit_categorical_jury`,
    default priors, shared calibration), equal-tailed interval; it also records whether its
    posterior predictive check flags the data (``ppc_flagged``: with conditionally independent
    judges, a false alarm). On the first ``bayes_reps`` replications of the points in
    ``bayes_points`` only (each fit costs seconds).
``bayes-single``
    The best single judge's own Bayesian K-category model on the same replications
    (θ ~ Dirichlet(1), each confusion row ~ Dirichlet(1/K), exact importance sampling,
    :func:`~bayesjudge.core.categorical_posterior.posterior_summary`): the reference of the
    joint model's width.

Measured per (point, method, category): ``coverage`` of θ_k, ``miss_below`` (intervals wholly
above θ_k), ``miss_above``, mean ``width``, ``bias``, ``width_ratio`` (mean width over that of
the best single judge on the same replications: ``best-single`` for the closed forms,
``bayes-single`` for the Bayesian methods), each with its Monte Carlo SE (``<name>_mcse``; the
ratio's by the delta method on paired replications), ``reps_used``, ``undefined_share`` and
``ppc_flagged``. Cells a method does not run are NaN.

Goals (:func:`goals`, issue 17): the joint intervals (``ds-wald``, ``bayes-joint``) cover at
nominal (within ±3 nominal MC-SE at each cell's replications) and are at most 0.85 × as wide
as the best single judge's (``width_ratio`` ≤ 0.85 in every cell).

Seeding: every design point has its own streams (data; Bayesian fits) keyed by
``random_seed`` and its values (:func:`~bayesjudge.studies._framework.point_rngs`), so a
subset of the grid reproduces the full run's numbers there.
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
import xarray as xr

from bayesjudge._lazy import bayesian
from bayesjudge.core.categorical import categorical_interval
from bayesjudge.core.categorical_jury import categorical_dawid_skene_interval, plurality_vote
from bayesjudge.core.categorical_posterior import posterior_summary
from bayesjudge.data.categorical_jury import CategoricalJuryCounts, categorical_pattern_strings
from bayesjudge.simulate import preference_confusion, simulate_categorical_jury_arrays
from bayesjudge.studies._framework import (
    StudyResult,
    check_grid,
    check_names,
    check_number,
    check_reps,
    check_seed,
    mcse_mean,
    mcse_proportion,
    point_rngs,
    progress_bar,
    study_attrs,
)
from bayesjudge.warnings import BayesJudgeWarning

__all__ = [
    "ACCURACY",
    "BAYES_METHODS",
    "CATEGORIES",
    "CLOSED_FORMS",
    "DEFAULT_SEED",
    "LABELS",
    "METHODS",
    "QUICK_OPTIONS",
    "QUICK_REPS",
    "TIE_RATE",
    "WIDTH_RATIO_GOAL",
    "goals",
    "plot",
    "run",
    "true_shares",
]

NAME = "categorical-jury"
DEFAULT_SEED = 20_261_171
CATEGORIES = ("A", "tie", "B")
#: The judges' accuracy on decisive items (the third is the best single judge).
ACCURACY = (0.70, 0.75, 0.85)
#: P(verdict = tie | one answer truly better), every judge.
TIE_RATE = 0.10
CLOSED_FORMS = ("best-single", "ds-wald", "plurality")
BAYES_METHODS = ("bayes-joint", "bayes-single")
METHODS = CLOSED_FORMS + BAYES_METHODS
LABELS = ("stratified:10", "stratified:30")
#: Points (tie, n, labels) where the Bayesian methods run by default.
BAYES_POINTS = ((0.1, 300, "stratified:10"), (0.3, 300, "stratified:10"))
#: ``bayesjudge study categorical-jury --quick``-sized options (closed forms only).
QUICK_REPS = 100
QUICK_OPTIONS = {"methods": list(CLOSED_FORMS)}
#: The issue's goal: the jury's mean width at most this share of the best single judge's.
WIDTH_RATIO_GOAL = 0.85
_MEASURES = ("coverage", "miss_below", "miss_above", "width", "bias", "width_ratio")
_KEYS = ("estimate", "lower", "upper")


def true_shares(tie: float) -> np.ndarray:
    """Return θ(t) = ((1 − t)·0.55, t, (1 − t)·0.45), the truth's shares at tie share t.

    Examples
    --------
    >>> true_shares(0.2).round(3).tolist()
    [0.44, 0.2, 0.36]
    """
    return np.array([(1 - tie) * 0.55, tie, (1 - tie) * 0.45])


# --------------------------------------------------------------------------- options


def _parse_labels(labels) -> tuple[tuple[str, str, int], ...]:
    """``("stratified:10", ...)`` -> ((text, design, m), ...); a ValueError names the option."""
    labels = (labels,) if isinstance(labels, str) else tuple(labels)
    out = []
    for text in labels:
        design, _, size = str(text).partition(":")
        if design not in ("stratified", "random") or not size.isdigit() or int(size) < 1:
            raise ValueError(
                f"labels must be strings 'stratified:M' (M labelled items of each true "
                f"category) or 'random:M' (M labelled items, truths drawn from θ), M >= 1; got "
                f"{text!r}."
            )
        out.append((str(text), design, int(size)))
    if not out or len({o[0] for o in out}) != len(out):
        raise ValueError(f"labels must be distinct and not empty; got {list(labels)!r}.")
    return tuple(out)


def _check_judges(accuracy, tie_rate) -> tuple[np.ndarray, float]:
    tie_rate = check_number("tie_rate", tie_rate, low=0, high=1, high_open=True)
    try:
        accuracy = np.asarray(accuracy, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"accuracy must be a list of numbers; got {accuracy!r}.") from None
    top = np.sort(accuracy)[-2:] if accuracy.ndim == 1 else np.zeros(2)
    if (
        accuracy.ndim != 1
        or accuracy.size < 2
        or not ((accuracy > 1 / 3) & (accuracy + tie_rate <= 1)).all()
        or top[0] == top[1]
    ):
        raise ValueError(
            f"accuracy must hold one number per judge (at least 2), each above 1/3 (better than "
            f"chance) with accuracy + tie_rate <= 1, and one judge must be best (a unique "
            f"highest accuracy); got {np.asarray(accuracy).tolist()} with tie_rate {tie_rate}."
        )
    return accuracy, tie_rate


def _check_options(tie, n, labels, methods, alpha, counts):
    ties = check_grid("tie", tie, low=0, high=1, low_open=True, high_open=True)
    ns = check_grid("n", n, low=1, integer=True)
    labels = _parse_labels(labels)
    methods = check_names("methods", methods, METHODS)
    if "bayes-joint" in methods and "bayes-single" not in methods:
        methods = (*methods, "bayes-single")  # the joint model's width is judged against it
    alpha = check_number("alpha", alpha, low=0, high=1, low_open=True, high_open=True)
    counts = {k: check_number(k, v, low=1, integer=True) for k, v in counts.items()}
    return ties, ns, labels, methods, alpha, counts


def _check_bayes_points(points, ties, ns, labels) -> tuple:
    grid = {(t, n, lab) for t in ties for n in ns for lab in labels}
    try:
        points = tuple((float(t), int(n), str(lab)) for t, n, lab in points)
    except (TypeError, ValueError):
        raise ValueError(
            f"bayes_points must be a list of points (tie, n, labels); got {points!r}."
        ) from None
    outside = [p for p in points if p not in grid]
    if outside:
        raise ValueError(
            f"bayes_points must be points (tie, n, labels) of the grid; not in it: {outside[:3]}."
        )
    return points


# --------------------------------------------------------------------------- methods


def _empty(reps: int, k: int) -> dict:
    return {key: np.full((reps, k), np.nan) for key in _KEYS} | {
        "undefined": np.zeros(reps, dtype=bool)
    }


def _undefined(out: dict, r: int, k: int) -> None:
    out["estimate"][r], out["lower"][r], out["upper"][r] = 1 / k, 0.0, 1.0
    out["undefined"][r] = True


def _own_counts(data, judge: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """One judge's test verdict counts (reps, K) and calibration tables (reps, K, K)."""
    onehot = (data["patterns"][:, judge, None] == np.arange(k)).astype(np.int64)
    return data["test"] @ onehot, data["labelled"] @ onehot


def _best_single(data, best: int, alpha: float) -> dict:
    x, c = _own_counts(data, best, data["labelled"].shape[1])
    reps, k = x.shape
    out = _empty(reps, k)
    try:
        res = categorical_interval(x, c, alpha=alpha)
        out["estimate"][:], out["lower"][:], out["upper"][:] = res
        return out
    except ValueError:  # some replication is not identified: one at a time
        pass
    for r in range(reps):
        try:
            out["estimate"][r], out["lower"][r], out["upper"][r] = categorical_interval(
                x[r], c[r], alpha=alpha
            )
        except ValueError:
            _undefined(out, r, k)
    return out


def _dawid_skene(data, design: str, alpha: float) -> dict:
    reps, k = data["test"].shape[0], data["labelled"].shape[1]
    out = _empty(reps, k)
    for r in range(reps):
        # The study's coverage shows the effect of small samples: no warnings per data set.
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", BayesJudgeWarning)
            try:
                res = categorical_dawid_skene_interval(
                    data["patterns"], data["test"][r], data["labelled"][r], design=design,
                    n_categories=k, alpha=alpha,
                )  # fmt: skip
            except ValueError:
                _undefined(out, r, k)
                continue
        out["estimate"][r], out["lower"][r], out["upper"][r] = res[:3]
    return out


def _plurality(data, alpha: float) -> dict:
    reps, k = data["test"].shape[0], data["labelled"].shape[1]
    out = _empty(reps, k)
    for r in range(reps):
        res = plurality_vote(data["patterns"], data["test"][r], k, alpha=alpha)
        out["estimate"][r], out["lower"][r], out["upper"][r] = res[:3]
    return out


def _closed_form(method: str, data, design: str, best: int, alpha: float) -> dict:
    if method == "best-single":
        return _best_single(data, best, alpha)
    if method == "ds-wald":
        return _dawid_skene(data, design, alpha)
    return _plurality(data, alpha)


def _bayes(data, design, best, alpha, reps, rng, options, bar) -> dict:
    """Run the Bayesian methods on the first ``reps`` replications; a dict per method."""
    k = data["labelled"].shape[1]
    methods = [m for m in options["methods"] if m in BAYES_METHODS]
    out = {m: _empty(reps, k) for m in methods}
    seeds = rng.integers(0, 2**31 - 1, size=(reps, 3))
    if "bayes-single" in out:
        x, c = _own_counts(data, best, k)
        res = posterior_summary(
            x[:reps], c[:reps], np.eye(k), alpha=alpha, calibration_design=design,
            random_seed=int(seeds[0, 2]), warn=False,
        )  # fmt: skip
        for key, value in zip(_KEYS, res[:3], strict=True):
            out["bayes-single"][key][:] = value
    if "bayes-joint" not in out:
        bar.update(reps)
        return out
    fit_jury = bayesian("categorical_jury").fit_categorical_jury  # imports PyMC, when fitting
    out["bayes-joint"]["flagged"] = np.zeros(reps, dtype=bool)
    strings = categorical_pattern_strings(data["patterns"])
    judges = [f"j{j}" for j in range(data["patterns"].shape[1])]
    sampling = {key: options[key] for key in ("draws", "tune", "chains")}
    for r in range(reps):
        counts = CategoricalJuryCounts.from_counts(
            strings, data["test"][r], data["labelled"][r], judges=judges,
            categories=list(CATEGORIES), design=design,
        )  # fmt: skip
        with warnings.catch_warnings():
            # Short chains warn about ESS; the study measures coverage, which shows their effect.
            warnings.simplefilter("ignore", BayesJudgeWarning)
            fit = fit_jury(counts, random_seed=int(seeds[r, 0]), progressbar=False, **sampling)
            ci = fit.summary(1 - alpha)["theta_ci"].isel(system=0, stratum=0)
            flagged = fit.ppc(random_seed=int(seeds[r, 1])).flagged
        one = out["bayes-joint"]
        one["estimate"][r] = (
            fit.posterior["theta"].isel(system=0, stratum=0).median(("chain", "draw"))
        )
        one["lower"][r] = ci.sel(ci_bound="lower").values
        one["upper"][r] = ci.sel(ci_bound="upper").values
        one["flagged"][r] = bool(np.any(flagged))
        bar.update()
    return out


# --------------------------------------------------------------------------- measures


def _measure(res: dict, theta: np.ndarray, reference: np.ndarray) -> dict:
    """Coverage, misses, width, bias and width ratio (with MC-SEs) per category: (K,) each."""
    lower, upper, estimate = res["lower"], res["upper"], res["estimate"]
    reps = lower.shape[0]
    width, error = upper - lower, estimate - theta
    shares = {
        "coverage": (lower <= theta) & (theta <= upper),
        "miss_below": lower > theta,
        "miss_above": upper < theta,
    }
    out = {}
    for name, hit in shares.items():
        share = hit.mean(axis=0)
        out[name] = (share, mcse_proportion(share, reps))
    out["width"] = (width.mean(axis=0), mcse_mean(width, axis=0))
    out["bias"] = (error.mean(axis=0), mcse_mean(error, axis=0))
    ref = reference[:reps]
    ratio = width.mean(axis=0) / ref.mean(axis=0)
    # Delta method on paired replications: Var(W̄ / R̄) ≈ Var(W − ratio·R) / (reps R̄²).
    out["width_ratio"] = (ratio, mcse_mean(width - ratio * ref, axis=0) / ref.mean(axis=0))
    return out


def _fill(table: dict, index: tuple, methods, results: dict, theta: np.ndarray) -> None:
    """Write the measures of every method run at one point into the table arrays."""
    for i_m, method in enumerate(methods):
        if method not in results:
            continue
        res = results[method]
        # The Bayesian joint model is judged against the single judge's Bayesian model.
        reference = results.get(
            "bayes-single" if method.startswith("bayes") else "best-single", res
        )
        ref_width = reference["upper"] - reference["lower"]
        cell = (*index, i_m)
        for name, (value, se) in _measure(res, theta, ref_width).items():
            table[name][cell], table[f"{name}_mcse"][cell] = value, se
        table["reps_used"][cell] = res["lower"].shape[0]
        table["undefined_share"][cell] = float(res["undefined"].mean())
        if "flagged" in res:
            share = res["flagged"].mean()
            table["ppc_flagged"][cell] = share
            table["ppc_flagged_mcse"][cell] = mcse_proportion(share, res["flagged"].size)


# --------------------------------------------------------------------------- the study


def run(
    *,
    reps: int = 500,
    random_seed: int = DEFAULT_SEED,
    progress: bool = False,
    tie: Sequence[float] = (0.1, 0.3),
    n: Sequence[int] = (300, 1000),
    labels: Sequence[str] = LABELS,
    accuracy: Sequence[float] = ACCURACY,
    tie_rate: float = TIE_RATE,
    methods: Sequence[str] = METHODS,
    alpha: float = 0.05,
    bayes_reps: int = 40,
    bayes_points: Sequence[tuple] = BAYES_POINTS,
    draws: int = 300,
    tune: int = 300,
    chains: int = 2,
) -> StudyResult:
    """Run the K-category jury study: coverage and width of the jury's and one judge's θ_k.

    Parameters
    ----------
    reps : int, default 500
        Replications per design point (closed forms).
    random_seed : int, default DEFAULT_SEED
        Seed; each design point derives its own streams from it and its values.
    progress : bool, default False
        Show a progress bar on stderr.
    tie, n : sequence
        True tie shares t (θ = :func:`true_shares` (t)) and unlabelled test items per data set.
    labels : sequence of str, default LABELS
        Labelled items, ``"stratified:M"`` (M of each true category) or ``"random:M"``.
    accuracy : sequence of float, default ACCURACY
        Each judge's accuracy (one judge must be the most accurate); ``tie_rate`` (default
        :data:`TIE_RATE`) its share of tie verdicts on decisive items.
    methods : sequence of str, default METHODS
        Any of :data:`METHODS` (``bayes-joint`` brings ``bayes-single``, its reference).
    alpha : float, default 0.05
        Intervals have nominal coverage 1 - alpha.
    bayes_reps : int, default 40
        Replications (the first ones) the Bayesian methods run on, at ``bayes_points`` only.
    bayes_points : sequence of (tie, n, labels), default BAYES_POINTS
        Grid points where the Bayesian methods run.
    draws, tune, chains : int, default 300, 300, 2
        NUTS settings of the joint model.

    Returns
    -------
    StudyResult
        Table with dims ``(tie, n, labels, method, category)``: the measures of the module
        notes with their ``_mcse``, ``reps_used``, ``undefined_share`` and ``ppc_flagged``;
        ``attrs`` hold the settings and ``seconds`` per method.

    Examples
    --------
    >>> from bayesjudge.studies import categorical_jury
    >>> res = categorical_jury.run(reps=40, tie=[0.2], n=[300], labels=["stratified:10"],
    ...                            methods=["best-single", "ds-wald", "plurality"])
    >>> res.table["width_ratio"].sel({"method": "ds-wald"}).round(2).values.ravel().tolist()
    [0.35, 0.33, 0.37]
    """
    reps, random_seed = check_reps(reps), check_seed(random_seed)
    ties, ns, labels, methods, alpha, counts = _check_options(
        tie, n, labels, methods, alpha,
        {"bayes_reps": bayes_reps, "draws": draws, "tune": tune, "chains": chains},
    )  # fmt: skip
    accuracy, tie_rate = _check_judges(accuracy, tie_rate)
    confusion = preference_confusion(accuracy, tie_rate=tie_rate)
    best = int(np.argmax(accuracy))
    label_texts = [text for text, _, _ in labels]
    bayes = [m for m in methods if m in BAYES_METHODS]
    points = _check_bayes_points(bayes_points, ties, ns, label_texts) if bayes else ()
    bayes_reps = min(counts["bayes_reps"], reps)
    options = {**counts, "methods": methods}
    dims = ("tie", "n", "labels", "method", "category")
    coords = {"tie": list(ties), "n": list(ns), "labels": label_texts, "method": list(methods),
              "category": list(CATEGORIES)}  # fmt: skip
    shape = tuple(len(coords[d]) for d in dims)
    table = {f"{m}{s}": np.full(shape, np.nan) for m in _MEASURES for s in ("", "_mcse")}
    extra = ("reps_used", "undefined_share", "ppc_flagged", "ppc_flagged_mcse")
    table |= {name: np.full(shape, np.nan) for name in extra}
    seconds = dict.fromkeys(("simulate", *methods), 0.0)
    grid = [(a, b, c) for a in range(len(ties)) for b in range(len(ns)) for c in range(len(labels))]
    bar = progress_bar(len(grid) + len(points) * bayes_reps, f"study {NAME}", progress)
    for index in grid:
        t, size, (text, design, m) = ties[index[0]], ns[index[1]], labels[index[2]]
        theta = true_shares(t)
        code = 0 if design == "stratified" else 1
        rng_data, rng_bayes = point_rngs(random_seed, code, m, size, t, count=2)
        start = time.perf_counter()
        data = simulate_categorical_jury_arrays(
            theta, confusion, n=size, m=[m] * len(theta) if design == "stratified" else m,
            design=design, size=reps, random_seed=rng_data,
        )  # fmt: skip
        seconds["simulate"] += time.perf_counter() - start
        results = {}
        for method in (m for m in methods if m in CLOSED_FORMS):
            start = time.perf_counter()
            results[method] = _closed_form(method, data, design, best, alpha)
            seconds[method] += time.perf_counter() - start
        if bayes and (t, size, text) in points:
            start = time.perf_counter()
            results |= _bayes(data, design, best, alpha, bayes_reps, rng_bayes, options, bar)
            for method in bayes:
                seconds[method] += (time.perf_counter() - start) / len(bayes)
        _fill(table, index, methods, results, theta)
        bar.update()
    scope = {"reps": reps, "random_seed": random_seed, "accuracy": accuracy, "alpha": alpha,
             "tie_rate": tie_rate, "best": best, "bayes_reps": bayes_reps, "points": points,
             "counts": counts}  # fmt: skip
    return _result(table, dims, coords, seconds, scope)


def _result(table, dims, coords, seconds, scope) -> StudyResult:
    ds = xr.Dataset({name: (dims, values) for name, values in table.items()}, coords=coords)
    ds.attrs = study_attrs(
        NAME,
        reps=scope["reps"],
        random_seed=scope["random_seed"],
        tie=list(coords["tie"]),
        n=list(coords["n"]),
        labels=list(coords["labels"]),
        categories=list(coords["category"]),
        true_shares="((1 - tie) * 0.55, tie, (1 - tie) * 0.45)",
        accuracy=scope["accuracy"].tolist(),
        tie_rate=float(scope["tie_rate"]),
        best_judge=int(scope["best"]),
        methods=list(coords["method"]),
        alpha=float(scope["alpha"]),
        ci_prob=1.0 - float(scope["alpha"]),
        bayes_reps=int(scope["bayes_reps"]),
        bayes_points=[list(p) for p in scope["points"]],
        draws=scope["counts"]["draws"],
        tune=scope["counts"]["tune"],
        chains=scope["counts"]["chains"],
        width_ratio_goal=WIDTH_RATIO_GOAL,
    )
    ds.attrs["seconds"] = json.dumps({k: round(v, 3) for k, v in seconds.items()})
    return StudyResult(NAME, ds, plot)


# --------------------------------------------------------------------------- goals


def _band(table: xr.Dataset, reps) -> np.ndarray:
    nominal = float(table.attrs.get("ci_prob", 0.95))
    return 3 * np.sqrt(nominal * (1 - nominal) / np.asarray(reps, dtype=float))


def goals(table: xr.Dataset) -> pd.DataFrame:
    """Check the study's goals (issue 17) on its table, one row per goal and method.

    The coverage band is ±3 nominal Monte Carlo SEs at each cell's ``reps_used``.

    Returns
    -------
    pandas.DataFrame
        Columns ``goal, method, cells, passed, no_undercoverage, worst, worst_cell``:
        ``cells`` the (point, category) cells the goal is judged on (NaN cells, methods not
        run, are left out; a goal without cells is not passed), ``no_undercoverage`` no
        coverage cell below the band, ``worst`` the value farthest from the goal at
        ``worst_cell`` = (tie, n, labels, category).

        Goals: ``covers`` (every interval method but the plurality vote), ``width <= 0.85 x
        best single`` (``ds-wald`` against ``best-single``, ``bayes-joint`` against
        ``bayes-single``), ``undercovers`` (the plurality vote: shown, not wanted).

    Examples
    --------
    >>> from bayesjudge.studies import categorical_jury
    >>> res = categorical_jury.run(reps=40, tie=[0.2], n=[300], labels=["stratified:10"],
    ...                            methods=["best-single", "ds-wald", "plurality"])
    >>> categorical_jury.goals(res.table)[["goal", "method", "passed"]].values.tolist()[2]
    ['width <= 0.85 x best single', 'ds-wald', True]
    """
    nominal = float(table.attrs.get("ci_prob", 0.95))
    stacked = table.stack(cell=("tie", "n", "labels", "category"))
    rows = []

    def add(goal, method, values, ok, distance):
        one = stacked.sel({"method": method})
        v = one[values].values
        use = ~np.isnan(v)
        band = _band(table, np.nan_to_num(one["reps_used"].values, nan=1.0))
        far = distance(v, band)[use]
        low = (v < nominal - band)[use] if values == "coverage" else np.zeros(far.size, bool)
        worst = int(np.argmax(far)) if far.size else None
        cells = one["cell"].values[use]
        rows.append({
            "goal": goal, "method": method, "cells": int(use.sum()),
            "passed": bool(use.any() and ok(v, band)[use].all()),
            "no_undercoverage": bool(use.any() and not low.any()),
            "worst": float(v[use][worst]) if worst is not None else np.nan,
            "worst_cell": str(tuple(cells[worst])) if worst is not None else "",
        })  # fmt: skip

    methods = [str(m) for m in table["method"].values]
    for method in methods:
        if method != "plurality":
            add("covers", method, "coverage", lambda v, band: np.abs(v - nominal) <= band,
                lambda v, _: np.abs(v - nominal))  # fmt: skip
    for method in ("ds-wald", "bayes-joint"):
        if method in methods:
            add(f"width <= {WIDTH_RATIO_GOAL} x best single", method, "width_ratio",
                lambda v, _: v <= WIDTH_RATIO_GOAL, lambda v, _: v)  # fmt: skip
    if "plurality" in methods:
        add("undercovers", "plurality", "coverage", lambda v, band: v < nominal - band,
            lambda v, _: v)  # fmt: skip
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- the figure


def plot(table: xr.Dataset):
    """Draw coverage (with the nominal band) and the width ratio per point, one column per category.

    Parameters
    ----------
    table : xarray.Dataset
        The table of :func:`run`.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from bayesjudge.studies import categorical_jury
    >>> res = categorical_jury.run(reps=10, tie=[0.2], n=[300], labels=["stratified:10"],
    ...                            methods=["best-single", "plurality"])
    >>> fig = categorical_jury.plot(res.table)
    >>> len(fig.axes)
    6
    >>> plt.close(fig)
    """
    import matplotlib.pyplot as plt

    nominal = float(table.attrs.get("ci_prob", 0.95))
    band = float(_band(table, int(table.attrs.get("reps", 1))))
    categories = table["category"].values
    fig, axes = plt.subplots(2, len(categories), figsize=(5.5 * len(categories), 8),
                             squeeze=False, constrained_layout=True)  # fmt: skip
    for col, category in enumerate(categories):
        part = table.sel(category=category).stack(point=("tie", "n", "labels"))
        ticks = [f"{t:g}\n{n}\n{_short(lab)}" for t, n, lab in part["point"].values]
        x = np.arange(len(ticks))
        ax_cov, ax_ratio = axes[0, col], axes[1, col]
        for offset, method in enumerate(table["method"].values):
            cell = part.sel({"method": method})
            if np.isnan(cell["coverage"].values).all():
                continue
            shift = x + 0.06 * (offset - len(table["method"]) / 2)
            style = {"fmt": "o", "ms": 3, "capsize": 2, "label": str(method),
                     "color": f"C{METHODS.index(str(method)) % 10}"}  # fmt: skip
            ax_cov.errorbar(shift, cell["coverage"], yerr=cell["coverage_mcse"], **style)
            ax_ratio.errorbar(shift, cell["width_ratio"], yerr=cell["width_ratio_mcse"], **style)
        ax_cov.axhline(nominal, color="k", lw=0.8, ls="--")
        ax_cov.axhspan(nominal - band, nominal + band, color="0.85", zorder=0)
        ax_ratio.axhline(1.0, color="k", lw=0.8, ls="--")
        ax_ratio.axhline(WIDTH_RATIO_GOAL, color="tab:red", lw=0.8, ls=":")
        ax_cov.set_title(f"coverage of θ[{category}] (band: ±3 MC-SE)", fontsize=9)
        ax_ratio.set_title(f"width of θ[{category}] / best single judge's (dotted: goal)",
                           fontsize=9)  # fmt: skip
        for ax in (ax_cov, ax_ratio):
            ax.set_xticks(x, ticks, fontsize=7)
            ax.set_xlabel("design point: tie share, n, labels (S10 = 10 per category)")
    for ax in axes[0]:
        ax.set_ylabel(f"coverage of the {nominal:.0%} interval")
    for ax in axes[1]:
        ax.set_ylabel("width ratio")
    handles = {}
    for ax in axes.ravel():
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    axes[0, 0].legend(handles.values(), handles.keys(), fontsize=7)
    return fig


def _short(labels: str) -> str:
    design, _, m = labels.partition(":")
    return f"{design[:1].upper()}{m}"
