"""Several judges on the same items (issue 17): coverage and width of the jury's intervals.

Three judges grade every item; their Youden indices differ (default q0 = (0.80, 0.75, 0.90),
q1 = (0.70, 0.85, 0.80): J = 0.5, 0.6, 0.7). The data of a design point are drawn by
:func:`bayesjudge.simulate.simulate_jury_arrays` (pattern counts): θ, the test size ``n``,
the labelled items (``labels``: ``"stratified:20"`` = 20 truly incorrect + 20 truly correct
items of their own; ``"random:40"`` = 40 of the ``n`` judged items labelled at random) and the
sd ``sigma`` of a shared item effect on the judges' logit scale (0: conditionally independent
judges; the judges' marginal q0, q1 stay the same).

Methods (:data:`METHODS`), all on the same data sets:

``best-single``
    The judge with the highest *true* J alone: clipped Rogan–Gladen with the Lang–Reiczigel
    interval on its own counts (:func:`~bayesjudge.core.correction.lang_reiczigel_interval`);
    a replication where it is not identified (Ĵ = 0, or no labelled item of one truth under the
    random design) gets ½ and [0, 1] and is counted in ``undefined_share``.
``ds-wald``, ``ds-bootstrap``
    The Dawid–Skene maximum-likelihood θ̂ of all judges, anchored by the labelled items, with
    the logit-scale Wald interval or the percentile bootstrap
    (:func:`~bayesjudge.core.jury.dawid_skene_interval`). The bootstrap refits every resample,
    so it runs on the first ``bootstrap_reps`` replications only.
``majority``
    The share of test items the majority calls correct with its Wilson interval
    (:func:`~bayesjudge.core.jury.majority_vote`): it estimates P(majority says correct), not
    θ, so it is biased and undercovers; shown as the naive baseline.
``bayes-joint``, ``bayes-item``
    The joint Bayesian model of the jury (:func:`bayesjudge.models.jury.fit_jury`, shared
    calibration), conditionally independent judges or ``dependence="item"``; the equal-tailed
    interval of θ. ``bayes-joint`` also records whether its posterior predictive check flags
    the data (``ppc_flagged``). On the first ``bayes_reps`` replications of the points of
    ``bayes_points`` only (each fit costs seconds).
``bayes-single``
    The best single judge's Bayesian interval: :func:`bayesjudge.fit` on its own counts with
    the exact engine (flat priors, ``method="exact"``), on the same replications as the joint
    model.

Measured per (point, method): ``coverage`` of θ, ``miss_below`` (share of intervals wholly
above θ: the truth lies below them), ``miss_above``, mean ``width``, ``bias`` of the point
estimate, ``width_ratio`` (mean width over the mean width of the best single judge on the
same replications: ``best-single`` for the closed forms, ``bayes-single`` for the Bayesian
methods), each with its Monte Carlo SE (``<name>_mcse``; the ratio's by the delta method on
paired replications), and ``reps_used``. Cells a method does not run (a Bayesian method away
from ``bayes_points``, ``bayes-item`` at σ = 0, ``ppc_flagged`` of the other methods) are NaN.

Goals (:func:`goals`, issue 17): with conditionally independent judges the joint interval
covers at nominal (within 3 nominal MC-SE) and is at most 0.85 × as wide as the best single
judge's; with dependence the default model's PPC flags most data sets and
``dependence="item"`` restores coverage.

Why the check of dependence has little power with three judges: the conditionally
independent model of J = 3 judges has 2J + 1 = 7 parameters, as many as the 2^J − 1 = 7 free
pattern probabilities of the test items, so it reproduces *any* distribution of test patterns,
dependent ones included (with distorted q's and θ). Only the labelled items, whose truths are
known, contradict it, and 20 + 20 or 50 + 50 of them carry little evidence (a pair's
within-truth log odds ratio at σ = 1.5 is about 1.3, z ≈ 1.0 at 20 items per truth and 1.6 at
50). With J ≥ 4 judges the test patterns alone over-determine the model. Measured (side runs,
20 fits per point, σ = 1.5): at n = 300 with 20 + 20 labels the PPC flagged 1-2 of 25 data
sets, at n = 1000 with 50 + 50 labels 13-16 of 20.

Seeding: every design point has its own streams (data; bootstrap; Bayesian fits) keyed by
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
from bayesjudge.core.correction import lang_reiczigel_interval
from bayesjudge.core.jury import dawid_skene_interval, majority_vote
from bayesjudge.core.kernels import rogan_gladen_counts
from bayesjudge.data.jury import JuryCounts
from bayesjudge.simulate import simulate_jury_arrays
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
from bayesjudge.warnings import BayesJudgeWarning, SmallSampleWarning

__all__ = [
    "BAYES_METHODS",
    "CLOSED_FORMS",
    "DEFAULT_SEED",
    "LABELS",
    "METHODS",
    "Q0",
    "Q1",
    "QUICK_OPTIONS",
    "QUICK_REPS",
    "goals",
    "plot",
    "run",
]

NAME = "jury"
DEFAULT_SEED = 20_261_170
#: Default judges: J = q0 + q1 - 1 = 0.5, 0.6, 0.7 (the third is the best single judge).
Q0 = (0.80, 0.75, 0.90)
Q1 = (0.70, 0.85, 0.80)
CLOSED_FORMS = ("best-single", "ds-wald", "ds-bootstrap", "majority")
BAYES_METHODS = ("bayes-joint", "bayes-item", "bayes-single")
METHODS = CLOSED_FORMS + BAYES_METHODS
#: Labelled items: "stratified:M" = M truly incorrect + M truly correct items of their own,
#: "random:M" = M of the n judged items labelled at random.
LABELS = ("stratified:20", "stratified:50", "random:40", "random:100")
#: Points (theta, n, labels, sigma) where the Bayesian methods run by default.
BAYES_POINTS = tuple(
    (theta, 300, "stratified:20", sigma) for theta in (0.3, 0.7) for sigma in (0.0, 1.5)
)
#: ``bayesjudge study jury --quick``-sized options (closed forms only, no bootstrap).
QUICK_REPS = 100
QUICK_OPTIONS = {"methods": ["best-single", "ds-wald", "majority"]}
_MEASURES = ("coverage", "miss_below", "miss_above", "width", "bias", "width_ratio")
_WIDTH_RATIO_GOAL = 0.85
_DS_TOL = 1e-9  # EM tolerance: far below the Monte Carlo error of θ̂ (about 1e-2)


# --------------------------------------------------------------------------- options


def _parse_labels(labels) -> tuple[tuple[str, str, int], ...]:
    """``("stratified:20", ...)`` -> ((text, design, m), ...); a ValueError names the option."""
    labels = (labels,) if isinstance(labels, str) else tuple(labels)
    out = []
    for text in labels:
        design, _, size = str(text).partition(":")
        if design not in ("stratified", "random") or not size.isdigit() or int(size) < 1:
            raise ValueError(
                f"labels must be strings 'stratified:M' (M truly incorrect + M truly correct "
                f"labelled items) or 'random:M' (M of the n items labelled at random), M >= 1; "
                f"got {text!r}."
            )
        out.append((str(text), design, int(size)))
    if not out or len({o[0] for o in out}) != len(out):
        raise ValueError(f"labels must be distinct and not empty; got {list(labels)!r}.")
    return tuple(out)


def _check_judges(q0, q1) -> tuple[np.ndarray, np.ndarray]:
    try:
        q0, q1 = (np.asarray(q, dtype=float) for q in (q0, q1))
    except (TypeError, ValueError):
        raise ValueError(f"q0 and q1 must be lists of numbers; got {q0!r} and {q1!r}.") from None
    for name, q in (("q0", q0), ("q1", q1)):
        if q.ndim != 1 or not ((q >= 0) & (q <= 1)).all():
            raise ValueError(f"{name} must be a list of proportions, one per judge; got {q!r}.")
    if q0.size != q1.size or q0.size < 2:
        raise ValueError(
            f"q0 and q1 need one entry per judge (at least 2 judges), of equal length; got "
            f"{q0.tolist()} and {q1.tolist()}."
        )
    youden = q0 + q1 - 1
    if (youden <= 0).any() or np.sort(youden)[-1] == np.sort(youden)[-2]:
        raise ValueError(
            f"every judge must beat chance (q0 + q1 > 1) and one judge must be best (a unique "
            f"highest J = q0 + q1 - 1); got J = {youden.round(4).tolist()}."
        )
    return q0, q1


def _check_bayes_points(points, thetas, ns, labels, sigmas) -> tuple:
    grid = {(t, n, lab, s) for t in thetas for n in ns for lab in labels for s in sigmas}
    points = tuple((float(t), int(n), str(lab), float(s)) for t, n, lab, s in points)
    outside = [p for p in points if p not in grid]
    if outside:
        raise ValueError(
            f"bayes_points must be points (theta, n, labels, sigma) of the grid; not in it: "
            f"{outside[:3]}."
        )
    return points


# --------------------------------------------------------------------------- methods


def _best_counts(data, best: int):
    """Return the best judge's own counts (k, n, tn, m0, tp, m1), one per replication."""
    said1 = (data["patterns"][:, best] == 1).astype(np.int64)
    said0 = (data["patterns"][:, best] == 0).astype(np.int64)
    lab0, lab1 = data["labelled"][:, 0, :], data["labelled"][:, 1, :]
    return (data["test"] @ said1, data["test"].sum(axis=1), lab0 @ said0, lab0.sum(axis=1),
            lab1 @ said1, lab1.sum(axis=1))  # fmt: skip


def _best_single(data, best, alpha, reps, rng, options):
    k, n, tn, m0, tp, m1 = _best_counts(data, best)
    estimate, identified = rogan_gladen_counts(k, n, tn, m0, tp, m1, clip=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        lower, upper = lang_reiczigel_interval(
            k / n, tn / np.maximum(m0, 1), tp / np.maximum(m1, 1), n, m0, m1, alpha
        )
    undefined = ~np.asarray(identified, dtype=bool)
    estimate = np.where(undefined, 0.5, estimate)
    lower, upper = np.where(undefined, 0.0, lower), np.where(undefined, 1.0, upper)
    return {"estimate": estimate, "lower": lower, "upper": upper, "undefined": undefined}


def _dawid_skene(data, design, alpha, reps, rng, method, n_resamples):
    out = {name: np.empty(reps) for name in ("estimate", "lower", "upper")}
    seeds = rng.integers(0, 2**63, size=reps)
    for r in range(reps):
        # 0 · log 0 of patterns no item shows is masked in the core; numpy still evaluates it.
        # The study's coverage shows the effect of fewer than 1000 resamples: no warning.
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", SmallSampleWarning)
            res = dawid_skene_interval(
                data["patterns"], data["test"][r], data["labelled"][r], design=design,
                alpha=alpha, method=method, n_resamples=n_resamples,
                random_seed=int(seeds[r]), tol=_DS_TOL,
            )  # fmt: skip
        out["estimate"][r], out["lower"][r], out["upper"][r] = res
    return out


def _majority(data, alpha, reps):
    out = {name: np.empty(reps) for name in ("estimate", "lower", "upper")}
    for r in range(reps):
        res = majority_vote(data["patterns"], data["test"][r], alpha=alpha)
        out["estimate"][r], out["lower"][r], out["upper"][r] = res
    return out


def _jury_counts(data, r, design, n_judges) -> JuryCounts:
    return JuryCounts.from_counts(
        data["patterns"], data["test"][r], data["labelled"][r],
        judges=[f"j{j}" for j in range(n_judges)], design=design,
    )  # fmt: skip


def _bayes(data, design, best, alpha, reps, rng, options, sigma, bar):
    """Run the Bayesian methods on the first ``reps`` replications; a dict per method."""
    fit_jury = bayesian("jury").fit_jury  # imports PyMC, only when the study fits
    fit_one = bayesian("fit").fit
    methods = [m for m in options["methods"] if m in BAYES_METHODS]
    if sigma == 0:
        methods = [m for m in methods if m != "bayes-item"]  # no dependence to model
    out = {m: {k: np.full(reps, np.nan) for k in ("estimate", "lower", "upper")} for m in methods}
    if "bayes-joint" in out:
        out["bayes-joint"]["flagged"] = np.zeros(reps, dtype=bool)
    seeds = rng.integers(0, 2**31 - 1, size=(reps, 2))
    sampling = {k: options[k] for k in ("draws", "tune", "chains")}
    for r in range(reps):
        counts = _jury_counts(data, r, design, data["patterns"].shape[1])
        with warnings.catch_warnings():
            # Short chains warn about ESS; the study measures coverage, which shows their effect.
            warnings.simplefilter("ignore", BayesJudgeWarning)
            for method in methods:
                if method == "bayes-single":
                    fit = fit_one(counts.for_judge(f"j{best}"), method="exact")
                    row = fit.summary(1 - alpha, var_names=["theta"]).iloc[0]
                    res = (row["median"], row["eti_lower"], row["eti_upper"])
                else:
                    fit = fit_jury(
                        counts, calibration="shared",
                        dependence="item" if method == "bayes-item" else None,
                        random_seed=int(seeds[r, 0]), **sampling,
                    )  # fmt: skip
                    ci = fit.summary(1 - alpha)["theta_ci"].squeeze()
                    draws = fit.posterior["theta"].values
                    res = (np.median(draws), float(ci.sel(ci_bound="lower")),
                           float(ci.sel(ci_bound="upper")))  # fmt: skip
                    if method == "bayes-joint":
                        flagged = fit.ppc(random_seed=int(seeds[r, 1])).flagged
                        out[method]["flagged"][r] = bool(np.any(flagged))
                for key, value in zip(("estimate", "lower", "upper"), res, strict=True):
                    out[method][key][r] = float(value)
        bar.update()
    return out


# --------------------------------------------------------------------------- measures


def _measure(res, theta, reference):
    """Coverage, misses, width, bias and width ratio (with MC-SEs) of one method at a point."""
    lower, upper, estimate = res["lower"], res["upper"], res["estimate"]
    reps = lower.size
    width, error = upper - lower, estimate - theta
    shares = {
        "coverage": (lower <= theta) & (theta <= upper),
        "miss_below": lower > theta,
        "miss_above": upper < theta,
    }
    out = {}
    for name, hit in shares.items():
        out[name] = (hit.mean(), mcse_proportion(hit.mean(), reps))
    out["width"] = (width.mean(), mcse_mean(width))
    out["bias"] = (error.mean(), mcse_mean(error))
    ref = reference[:reps]
    ratio = width.mean() / ref.mean()
    # Delta method on paired replications: Var(W̄ / B̄) ≈ Var(W - R B) / (reps B̄²).
    out["width_ratio"] = (ratio, mcse_mean(width - ratio * ref) / ref.mean())
    return out


def _point_options(design, m):
    return {"m0": m, "m1": m} if design == "stratified" else {"m": m}


# --------------------------------------------------------------------------- the study


def _check_options(theta, n, labels, sigma, methods, alpha, counts):
    thetas = check_grid("theta", theta, low=0, high=1, low_open=True, high_open=True)
    ns = check_grid("n", n, low=1, integer=True)
    labels = _parse_labels(labels)
    sigmas = check_grid("sigma", sigma, low=0, high=5)
    methods = check_names("methods", methods, METHODS)
    alpha = check_number("alpha", alpha, low=0, high=1, low_open=True, high_open=True)
    for text, design, m in labels:
        if design == "random" and m > min(ns):
            raise ValueError(f"labels {text!r}: m = {m} exceeds the smallest n = {min(ns)}.")
    counts = {
        k: check_number(k, v, low=low, integer=True)
        for (k, v), low in zip(counts.items(), (2, 0, 0, 1, 1, 1), strict=True)
    }
    return thetas, ns, labels, sigmas, methods, alpha, counts


def run(
    *,
    reps: int = 1000,
    random_seed: int = DEFAULT_SEED,
    progress: bool = False,
    theta: Sequence[float] = (0.3, 0.7),
    n: Sequence[int] = (300, 1000),
    labels: Sequence[str] = LABELS,
    sigma: Sequence[float] = (0.0, 1.5),
    q0: Sequence[float] = Q0,
    q1: Sequence[float] = Q1,
    methods: Sequence[str] = ("best-single", "ds-wald", "majority", *BAYES_METHODS),
    alpha: float = 0.05,
    n_resamples: int = 500,
    bootstrap_reps: int = 100,
    bayes_reps: int = 25,
    bayes_points: Sequence[tuple] = BAYES_POINTS,
    draws: int = 300,
    tune: int = 300,
    chains: int = 2,
) -> StudyResult:
    """Run the jury study: coverage and width of the closed forms and the joint posterior.

    Parameters
    ----------
    reps : int, default 1000
        Replications per design point (closed forms).
    random_seed : int, default DEFAULT_SEED
        Seed; each design point derives its own streams from it and its values.
    progress : bool, default False
        Show a progress bar on stderr.
    theta, n, sigma : sequence
        True accuracies, judged items per group, sd of the shared item effect (logit scale).
    labels : sequence of str, default LABELS
        Labelled items, ``"stratified:M"`` (M + M items of their own) or ``"random:M"`` (M of
        the n judged items).
    q0, q1 : sequence of float, default Q0, Q1
        The judges' marginal specificities and sensitivities (one judge must have the highest
        J).
    methods : sequence of str
        Any of :data:`METHODS`; default all but ``"ds-bootstrap"`` (it refits every resample).
    alpha : float, default 0.05
        Intervals have nominal coverage 1 - alpha.
    n_resamples, bootstrap_reps : int, default 500, 100
        Bootstrap resamples per data set; replications (the first ones) it runs on.
    bayes_reps : int, default 25
        Replications (the first ones) the Bayesian methods run on, at ``bayes_points`` only.
    bayes_points : sequence of (theta, n, labels, sigma), default BAYES_POINTS
        Grid points where the Bayesian methods run.
    draws, tune, chains : int, default 300, 300, 2
        NUTS settings of the joint model.

    Returns
    -------
    StudyResult
        Table with dims ``(theta, n, labels, sigma, method)``: the measures of the module
        notes with their ``_mcse``, ``reps_used``, ``undefined_share`` and ``ppc_flagged``
        (``bayes-joint`` only); ``attrs`` hold the settings and ``seconds`` per method.

    Examples
    --------
    >>> from bayesjudge.studies import jury
    >>> res = jury.run(reps=50, theta=[0.7], n=[300], labels=["stratified:20"], sigma=[0.0],
    ...                methods=["best-single", "ds-wald", "majority"])
    >>> res.table["coverage"].squeeze().to_series().to_dict()  # majority: P(says correct)
    {'best-single': 0.94, 'ds-wald': 0.92, 'majority': 0.54}
    """
    reps, random_seed = check_reps(reps), check_seed(random_seed)
    counts = {"n_resamples": n_resamples, "bootstrap_reps": bootstrap_reps,
              "bayes_reps": bayes_reps, "draws": draws, "tune": tune, "chains": chains}  # fmt: skip
    thetas, ns, labels, sigmas, methods, alpha, counts = _check_options(
        theta, n, labels, sigma, methods, alpha, counts
    )
    q0, q1 = _check_judges(q0, q1)
    best = int(np.argmax(q0 + q1 - 1))
    label_texts = [text for text, _, _ in labels]
    bayes = [m for m in methods if m in BAYES_METHODS]
    points = _check_bayes_points(bayes_points, thetas, ns, label_texts, sigmas) if bayes else ()
    bayes_reps = min(counts["bayes_reps"], reps)
    boot_reps = min(counts["bootstrap_reps"], reps)
    options = {**counts, "methods": methods}
    dims = ("theta", "n", "labels", "sigma", "method")
    coords = {"theta": list(thetas), "n": list(ns), "labels": label_texts,
              "sigma": list(sigmas), "method": list(methods)}  # fmt: skip
    shape = tuple(len(coords[d]) for d in dims)
    table = {f"{m}{s}": np.full(shape, np.nan) for m in _MEASURES for s in ("", "_mcse")}
    extra = ("reps_used", "undefined_share", "ppc_flagged", "ppc_flagged_mcse")
    table |= {name: np.full(shape, np.nan) for name in extra}
    seconds = dict.fromkeys(("simulate", *methods), 0.0)
    grid = [(a, b, c, d) for a in range(shape[0]) for b in range(shape[1])
            for c in range(shape[2]) for d in range(shape[3])]  # fmt: skip
    bar = progress_bar(len(grid) + len(points) * bayes_reps, f"study {NAME}", progress)
    for index in grid:
        th, size, (text, design, m), sig = (thetas[index[0]], ns[index[1]], labels[index[2]],
                                            sigmas[index[3]])  # fmt: skip
        code = 0 if design == "stratified" else 1
        rng_data, rng_boot, rng_bayes = point_rngs(random_seed, code, m, size, th, sig, count=3)
        start = time.perf_counter()
        data = simulate_jury_arrays(
            th, q0, q1, n=size, dependence=sig, design=design, size=reps, random_seed=rng_data,
            **_point_options(design, m),
        )  # fmt: skip
        seconds["simulate"] += time.perf_counter() - start
        results = {}
        for method in methods:
            start = time.perf_counter()
            if method == "best-single":
                results[method] = _best_single(data, best, alpha, reps, None, options)
            elif method == "ds-wald":
                results[method] = _dawid_skene(data, design, alpha, reps, rng_boot, "wald", 0)
            elif method == "ds-bootstrap":
                results[method] = _dawid_skene(data, design, alpha, boot_reps, rng_boot,
                                               "bootstrap", counts["n_resamples"])  # fmt: skip
            elif method == "majority":
                results[method] = _majority(data, alpha, reps)
            seconds[method] += time.perf_counter() - start
        if bayes and (th, size, text, sig) in points:
            start = time.perf_counter()
            results |= _bayes(data, design, best, alpha, bayes_reps, rng_bayes, options, sig, bar)
            for method in bayes:
                seconds[method] += (time.perf_counter() - start) / len(bayes)
        _fill(table, index, coords, results, th)
        bar.update()
    return _result(table, dims, coords, seconds, locals())


def _fill(table, index, coords, results, theta):
    """Write the measures of every method run at one point into the table arrays."""
    for i_m, method in enumerate(coords["method"]):
        if method not in results:
            continue
        res = results[method]
        if method.startswith("bayes") and "bayes-single" in results:
            reference = results["bayes-single"]
        else:
            reference = results["best-single"] if "best-single" in results else res
        ref_width = reference["upper"] - reference["lower"]
        cell = (*index, i_m)
        for name, (value, se) in _measure(res, theta, ref_width).items():
            table[name][cell], table[f"{name}_mcse"][cell] = value, se
        table["reps_used"][cell] = res["lower"].size
        table["undefined_share"][cell] = float(np.mean(res.get("undefined", False)))
        if "flagged" in res:
            share = res["flagged"].mean()
            table["ppc_flagged"][cell] = share
            table["ppc_flagged_mcse"][cell] = mcse_proportion(share, res["flagged"].size)


def _result(table, dims, coords, seconds, scope) -> StudyResult:
    data_vars = {name: (dims, values) for name, values in table.items()}
    ds = xr.Dataset(data_vars, coords=coords)
    q0, q1 = scope["q0"], scope["q1"]
    ds.attrs = study_attrs(
        NAME,
        reps=scope["reps"],
        random_seed=scope["random_seed"],
        theta=list(coords["theta"]),
        n=list(coords["n"]),
        labels=list(coords["labels"]),
        sigma=list(coords["sigma"]),
        q0=q0.tolist(),
        q1=q1.tolist(),
        youden=(q0 + q1 - 1).round(10).tolist(),
        best_judge=int(scope["best"]),
        methods=list(coords["method"]),
        alpha=float(scope["alpha"]),
        ci_prob=1.0 - float(scope["alpha"]),
        n_resamples=scope["counts"]["n_resamples"],
        bootstrap_reps=int(scope["boot_reps"]),
        bayes_reps=int(scope["bayes_reps"]),
        bayes_points=[list(p) for p in scope["points"]],
        draws=scope["counts"]["draws"],
        tune=scope["counts"]["tune"],
        chains=scope["counts"]["chains"],
        dependence_scale="logit (simulate_jury's shared item effect, marginal q kept)",
    )
    ds.attrs["seconds"] = json.dumps({k: round(v, 3) for k, v in seconds.items()})
    return StudyResult(NAME, ds, plot)


# --------------------------------------------------------------------------- goals


def _band(table: xr.Dataset, reps) -> np.ndarray:
    nominal = float(table.attrs.get("ci_prob", 0.95))
    return 3 * np.sqrt(nominal * (1 - nominal) / reps)


def goals(table: xr.Dataset) -> pd.DataFrame:
    """Check the study's goals (issue 17) on its table, one row per goal and method.

    The band is ±3 nominal Monte Carlo SEs at each cell's ``reps_used``.

    Returns
    -------
    pandas.DataFrame
        Columns ``goal, method, points, passed, no_undercoverage, worst, worst_point``:
        ``points`` the cells the goal is judged on (NaN cells, methods not run, are left out; a
        goal without cells is not passed), ``no_undercoverage`` no coverage cell below the
        band (a conservative interval, e.g. Lang–Reiczigel's, passes it), ``worst`` the value
        farthest from the goal at ``worst_point`` = (theta, n, labels, sigma).

        Goals: ``covers at sigma = 0`` (within the band; every interval method but
        ``bayes-item``), ``width <= 0.85 x best single at sigma = 0`` (``ds-wald``,
        ``bayes-joint``), ``PPC flags dependence in most data sets`` (``bayes-joint``, σ > 0,
        share > ½), ``dependence option covers at sigma > 0`` (``bayes-item``),
        ``undercovers`` (the majority vote, every point: shown, not wanted), ``covers at
        sigma > 0`` (every other method: informative, the conditional-independence models are
        expected to fail).

    Examples
    --------
    >>> from bayesjudge.studies import jury
    >>> res = jury.run(reps=50, theta=[0.7], n=[300], labels=["stratified:20"], sigma=[0.0],
    ...                methods=["best-single", "ds-wald", "majority"])
    >>> jury.goals(res.table)[["goal", "method", "passed"]].values.tolist()[-1]
    ['undercovers', 'majority', True]
    """
    nominal = float(table.attrs.get("ci_prob", 0.95))
    stacked = table.stack(point=("theta", "n", "labels", "sigma"))
    sigma = stacked["sigma"].values
    rows = []

    def add(goal, method, values, where, ok, distance):
        cell = stacked.sel({"method": method})
        v = cell[values].values
        use = where & ~np.isnan(v)
        band = _band(table, cell["reps_used"].values)
        passed_cells, far = ok(v, band)[use], distance(v, band)[use]
        low = (v < nominal - band)[use] if values == "coverage" else np.zeros(far.size, bool)
        worst = int(np.argmax(far)) if far.size else None
        points = cell["point"].values[use]
        rows.append({
            "goal": goal, "method": method, "points": int(use.sum()),
            "passed": bool(use.any() and passed_cells.all()),
            "no_undercoverage": bool(use.any() and not low.any()),
            "worst": float(v[use][worst]) if worst is not None else np.nan,
            "worst_point": str(tuple(points[worst])) if worst is not None else "",
        })  # fmt: skip

    def within(v, band):
        return np.abs(v - nominal) <= band

    def off(v, band):
        return np.abs(v - nominal)

    methods = [str(m) for m in table["method"].values]
    for method in methods:
        if method not in ("majority", "bayes-item"):  # bayes-item runs at sigma > 0 only
            add("covers at sigma = 0", method, "coverage", sigma == 0, within, off)
    for method in ("ds-wald", "bayes-joint"):
        if method in methods:
            add(f"width <= {_WIDTH_RATIO_GOAL} x best single at sigma = 0", method,
                "width_ratio", sigma == 0, lambda v, _: v <= _WIDTH_RATIO_GOAL,
                lambda v, _: v)  # fmt: skip
    if "bayes-joint" in methods:
        add("PPC flags dependence in most data sets", "bayes-joint", "ppc_flagged", sigma > 0,
            lambda v, _: v > 0.5, lambda v, _: 1 - v)  # fmt: skip
    if "bayes-item" in methods:
        add("dependence option covers at sigma > 0", "bayes-item", "coverage", sigma > 0,
            within, off)  # fmt: skip
    for method in methods:
        if method not in ("majority", "bayes-item"):
            add("covers at sigma > 0", method, "coverage", sigma > 0, within, off)
    if "majority" in methods:
        add("undercovers", "majority", "coverage", np.ones(sigma.size, dtype=bool),
            lambda v, band: v < nominal - band, lambda v, _: v)  # fmt: skip
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- the figure


def plot(table: xr.Dataset):
    """Draw coverage (with the nominal band) and the width ratio per point, one column per σ.

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
    >>> from bayesjudge.studies import jury
    >>> res = jury.run(reps=20, theta=[0.7], n=[300], labels=["stratified:20"], sigma=[0.0],
    ...                methods=["best-single", "majority"])
    >>> fig = jury.plot(res.table)
    >>> len(fig.axes)
    2
    >>> plt.close(fig)
    """
    import matplotlib.pyplot as plt

    nominal = float(table.attrs.get("ci_prob", 0.95))
    band = _band(table, int(table.attrs.get("reps", 1)))
    sigmas = table["sigma"].values
    fig, axes = plt.subplots(2, len(sigmas), figsize=(7 * len(sigmas), 8), squeeze=False,
                             constrained_layout=True)  # fmt: skip
    for col, sig in enumerate(sigmas):
        part = table.sel(sigma=sig).stack(point=("theta", "n", "labels"))
        ticks = [f"{t:g}\n{n}\n{_short(lab)}" for t, n, lab in part["point"].values]
        x = np.arange(len(ticks))
        ax_cov, ax_ratio = axes[0, col], axes[1, col]
        for offset, method in enumerate(table["method"].values):
            cell = part.sel({"method": method})
            if np.isnan(cell["coverage"].values).all():
                continue
            shift = x + 0.06 * (offset - len(table["method"]) / 2)
            # One colour per method in every panel (a panel may lack some methods).
            style = {"fmt": "o", "ms": 3, "capsize": 2, "label": str(method),
                     "color": f"C{METHODS.index(str(method)) % 10}"}  # fmt: skip
            ax_cov.errorbar(shift, cell["coverage"], yerr=cell["coverage_mcse"], **style)
            ax_ratio.errorbar(shift, cell["width_ratio"], yerr=cell["width_ratio_mcse"], **style)
        ax_cov.axhline(nominal, color="k", lw=0.8, ls="--")
        ax_cov.axhspan(nominal - band, nominal + band, color="0.85", zorder=0)
        ax_ratio.axhline(1.0, color="k", lw=0.8, ls="--")
        ax_ratio.axhline(_WIDTH_RATIO_GOAL, color="tab:red", lw=0.8, ls=":")
        ax_cov.set_title(f"coverage, item effect sd σ = {sig:g} (band: ±3 MC-SE)", fontsize=9)
        ax_ratio.set_title("mean width / best single judge's (dotted: goal 0.85)", fontsize=9)
        ax_cov.set_ylabel(f"coverage of the {nominal:.0%} interval")
        ax_ratio.set_ylabel("width ratio")
        for ax in (ax_cov, ax_ratio):
            ax.set_xticks(x, ticks, fontsize=7)
            ax.set_xlabel("design point: θ, n, labels (S20 = 20 + 20 stratified, R40 = 40 random)")
    handles = {}
    for ax in axes.ravel():
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    axes[0, 0].legend(handles.values(), handles.keys(), fontsize=7)
    return fig


def _short(labels: str) -> str:
    design, _, m = labels.partition(":")
    return f"{design[:1].upper()}{m}"
