"""Random labelling: coverage and width of six estimators, and a design declared wrongly.

Issue 15's validation study. Most evaluations let the judge grade every item and have humans
label a random subset of those same items (the *random labelling design*); each item is
counted once, so ``n, k`` count the unlabelled items and ``m0, m1, tn, tp`` the labelled ones,
and the truth counts are data: ``m1 ~ Bin(m0 + m1, θ)``. On the same simulated data in every
replication the study runs

``bayes-random``
    The exact posterior of the full likelihood (flat priors θ, q0, q1 ~ Beta(1, 1),
    ``design="random"`` in :mod:`bayesjudge.core.exact`): posterior median and equal-tailed
    interval. For the test-set θ: the equal-tailed interval of posterior draws of
    (m1 + T_u) / N, the unlabelled items' truth T_u drawn given each posterior draw of
    (θ, q0, q1) (:func:`bayesjudge.core.exact.test_set_theta_draws`).
``bayes-stratified``
    The same posterior with the design declared ``"stratified"`` (m0, m1 fixed; bayesjudge's
    answer before issue 15).
``ppi``
    PPI++ (:func:`bayesjudge.core.ppi.ppi_mean`, λ tuned), its Wald interval cut to [0, 1].
``likelihood``
    The double-sampling MLE with its profile-likelihood interval
    (:func:`bayesjudge.core.likelihood.likelihood_interval`); for the test-set θ,
    :func:`bayesjudge.core.likelihood.test_set_interval`.
``lang-reiczigel``
    Rogan–Gladen (clipped) with the Lang–Reiczigel interval (valid for either design, as it
    conditions on m0 and m1).
``human-only``
    The labelled items alone: m1 / (m0 + m1) with its Wilson interval
    (:func:`bayesjudge.core.likelihood.human_only`).

Estimators without an interval of their own for the test-set θ (``bayes-stratified``,
``ppi``, ``lang-reiczigel``, ``human-only``) are scored against it with their population
interval (the table's ``attrs["test_set_intervals"]`` says which interval each used).

Two samples of the labelled items (dim ``sample``):

``"random"``
    The random labelling design: ``n + m`` judged items, a random ``m`` of them labelled.
    The design-aware estimators (``bayes-random``, ``ppi``, ``likelihood``, ``human-only``)
    are declared correctly; ``bayes-stratified`` and ``lang-reiczigel`` are a random sample
    declared stratified: valid but wider.
``"stratified"``
    Lee et al.'s design, ``m0 = m1 = m / 2`` labelled items sampled per human label and a
    separate test set of ``n`` items, fed to the same estimators: the random-design ones now
    have the design declared wrongly (θ pulled towards m1 / (m0 + m1) = ½), the stratified
    ones are right. The test-set θ here is the share truly correct among the ``n`` test items
    (the labelled items are not part of the evaluated set).

Design (issue 15): ``grid="issue15"``: 1,800 unlabelled + 200 labelled items, q0 = 0.8,
q1 = 0.9; ``grid="fig5"``: Lee et al.'s Fig. 5 sizes and judge (n = 1000 unlabelled, m = 200
labelled, q0 = 0.7, q1 = 0.9). θ runs over the interior of Fig. 5's grid, 0.05, 0.10, …,
0.95 (at 0 and 1 an interval with a density never covers). Goals (:func:`goals`): coverage
within the nominal level ± 3 Monte Carlo SE for ``bayes-random``, ``ppi`` and
``likelihood`` (both estimands), and mean ``bayes-random`` width at most 1.05 × PPI++'s and
at most 0.7 × ``bayes-stratified``'s on the random sample.

Seeding: every design point (n, m, q0, q1, θ) has its own streams derived from
``random_seed`` and the point's values (not its position in the grid): one per sample for
the data and one for the posterior draws, so leaving estimators out changes nothing else.
"""

from __future__ import annotations

import itertools
import json
import time
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import xarray as xr

from bayesjudge.core.correction import lang_reiczigel_interval
from bayesjudge.core.exact import exact_draws, exact_theta_interval, test_set_theta_draws
from bayesjudge.core.kernels import rogan_gladen_counts
from bayesjudge.core.likelihood import human_only, likelihood_interval, test_set_interval
from bayesjudge.core.ppi import ppi_mean
from bayesjudge.simulate import simulate_count_arrays
from bayesjudge.studies._framework import (
    StudyResult,
    check_calibration_grid,
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
from bayesjudge.warnings import SmallSampleWarning

__all__ = [
    "DEFAULT_SEED",
    "ESTIMANDS",
    "ESTIMATORS",
    "GOAL_ESTIMATORS",
    "GRIDS",
    "QUICK_OPTIONS",
    "QUICK_REPS",
    "SAMPLES",
    "THETAS",
    "goals",
    "plot",
    "run",
]

NAME = "random-design"
DEFAULT_SEED = 20_251_115
ESTIMATORS = (
    "bayes-random",
    "bayes-stratified",
    "ppi",
    "likelihood",
    "lang-reiczigel",
    "human-only",
)
#: The estimators the coverage goal applies to (issue 15: the posterior, PPI++, likelihood).
GOAL_ESTIMATORS = ("bayes-random", "ppi", "likelihood")
SAMPLES = ("random", "stratified")
ESTIMANDS = ("population", "test-set")
THETAS = tuple(np.round(np.linspace(0.05, 0.95, 19), 2).tolist())
GRIDS = {
    "issue15": {"n": (1800,), "m": (200,), "q0": (0.8,), "q1": (0.9,)},
    "fig5": {"n": (1000,), "m": (200,), "q0": (0.7,), "q1": (0.9,)},
}
#: ``bayesjudge study random-design --quick``: a few θ, few posterior draws (seconds).
QUICK_REPS = 100
QUICK_OPTIONS = {"theta": [0.1, 0.3, 0.5], "draws": 200}
_LABELS = {
    "bayes-random": "exact Bayes, design='random'",
    "bayes-stratified": "exact Bayes, declared 'stratified'",
    "ppi": "PPI++",
    "likelihood": "profile likelihood",
    "lang-reiczigel": "Rogan–Gladen + Lang–Reiczigel",
    "human-only": "human labels only (Wilson)",
}
# What each estimator's test-set interval is (stored in the table's attrs).
_TEST_SET_INTERVALS = {
    "bayes-random": "posterior of (m1 + T_u) / N (exact draws of theta, q0, q1, then T_u); "
    "on the stratified sample its population interval",
    "bayes-stratified": "its population interval",
    "ppi": "its population interval",
    "likelihood": "core.likelihood.test_set_interval",
    "lang-reiczigel": "its population interval",
    "human-only": "its population interval",
}
_COUNTS = ("k", "n", "tn", "m0", "tp", "m1")
_YLABELS = {
    "bias": "bias (mean estimate − truth)",
    "coverage": "coverage of the interval",
    "length": "mean interval length",
}


# --- estimators ------------------------------------------------------------------------------
# Each takes the data of one (design point, sample) and returns
# {"population": (estimate, lower, upper), "test-set": (...)} and a mask of replications where
# the estimator has no answer (reported as ½ with [0, 1] and counted in ``undefined_share``).


def _exact(data, alpha, design):
    """Exact posterior median and ETI of θ; each distinct count vector computed once."""
    rows = np.stack([data[key] for key in ("k", "tn", "m0", "tp", "m1")], axis=1)
    unique, inverse = np.unique(rows, axis=0, return_inverse=True)
    parts = [p for p in np.array_split(np.arange(len(unique)), 2) if p.size]

    def work(part):
        k, tn, m0, tp, m1 = unique[part].T
        res = exact_theta_interval(k, data["n"][0], tn, m0, tp, m1, ci_prob=1 - alpha,
                                   design=design)  # fmt: skip
        return res.median, res.lower, res.upper

    with ThreadPoolExecutor(len(parts)) as pool:
        results = list(pool.map(work, parts))
    inverse = inverse.ravel()
    return tuple(np.concatenate([r[i] for r in results])[inverse] for i in range(3))


def _bayes_random(data, alpha, rng, options):
    mask = _one_label(data)
    kept = _kept(data, mask)
    out = {"population": _fill(mask, _exact(kept, alpha, "random") if kept else None)}
    if options["test_set"]:
        test_set = None
        if kept:
            counts = [kept[key] for key in _COUNTS]
            post = exact_draws(*counts, size=options["draws"], rng=rng, design="random")
            theta_test = test_set_theta_draws(
                post["theta"], post["q0"], post["q1"], kept["k"], kept["n"], kept["m0"],
                kept["m1"], design="random", rng=rng,
            )  # fmt: skip
            lower, upper = np.quantile(theta_test, [alpha / 2, 1 - alpha / 2], axis=0)
            test_set = (np.median(theta_test, axis=0), lower, upper)
        out["test-set"] = _fill(mask, test_set)
    return out, mask


def _bayes_stratified(data, alpha, rng, options):
    mask = _one_label(data)
    kept = _kept(data, mask)
    return {"population": _fill(mask, _exact(kept, alpha, "stratified") if kept else None)}, mask


def _one_label(data):
    return (data["m0"] == 0) | (data["m1"] == 0)


# The exact engine refuses m0 = 0 or m1 = 0 (q0 or q1 left to its prior, which it does not
# integrate accurately); such replications (small θ or m, θ at 0 or 1) are undefined for the
# Bayesian estimators, scored as ½ with [0, 1] and counted in ``undefined_share``, as the
# closed forms' are, rather than aborting the study.
def _kept(data, mask):
    """Return the replications not in ``mask`` (every array of ``data``); None if none is left."""
    if mask.all():
        return None
    return {key: value[~mask] for key, value in data.items()}


def _fill(mask, result):
    """Spread (estimate, lower, upper) of the kept replications back; ½, [0, 1] elsewhere."""
    out = (np.full(mask.size, 0.5), np.zeros(mask.size), np.ones(mask.size))
    if result is not None:
        for full, part in zip(out, result, strict=True):
            full[~mask] = part
    return out


def _undefined(mask, estimate, lower, upper):
    """½ with [0, 1] where ``mask``; intervals cut to [0, 1]."""
    estimate = np.where(mask, 0.5, estimate)
    lower, upper = np.where(mask, 0.0, lower), np.where(mask, 1.0, upper)
    return estimate, np.clip(lower, 0.0, 1.0), np.clip(upper, 0.0, 1.0)


def _ppi(data, alpha, rng, options):
    with warnings.catch_warnings():
        # One label only: PPI++ has no answer (NaN); counted in ``undefined_share``.
        warnings.simplefilter("ignore", SmallSampleWarning)
        estimate, lower, upper, _ = ppi_mean(*(data[key] for key in _COUNTS), alpha=alpha)
    mask = _one_label(data)
    return {"population": _undefined(mask, estimate, lower, upper)}, mask


def _likelihood(data, alpha, rng, options):
    counts = [data[key] for key in _COUNTS]
    estimate, lower, upper = likelihood_interval(*counts, alpha=alpha)
    mask = np.isnan(estimate)  # the MLE is not unique; the interval still holds every maximiser
    est, lo, hi = test_set_interval(*counts, alpha=alpha)  # cheap: on both samples
    out = {
        "population": (np.where(mask, 0.5, estimate), lower, upper),
        "test-set": (np.where(np.isnan(est), 0.5, est), lo, hi),
    }
    return out, mask


def _lang_reiczigel(data, alpha, rng, options):
    k, n, tn, m0, tp, m1 = (data[key] for key in _COUNTS)
    mask = _one_label(data)
    m0s, m1s = np.maximum(m0, 1), np.maximum(m1, 1)  # masked rows: any valid placeholder
    lower, upper = lang_reiczigel_interval(k / n, tn / m0s, tp / m1s, n, m0s, m1s, alpha)
    theta, identified = rogan_gladen_counts(k, n, tn, m0s, tp, m1s, clip=True)
    estimate = np.where(identified, theta, 0.5)  # J = 0 policy: ½ (as the coverage study)
    return {"population": _undefined(mask, estimate, lower, upper)}, mask


def _human_only(data, alpha, rng, options):
    estimate, lower, upper = human_only(data["tn"], data["m0"], data["tp"], data["m1"],
                                        alpha=alpha)  # fmt: skip
    return {"population": (estimate, lower, upper)}, np.zeros(data["k"].size, dtype=bool)


_ESTIMATOR_FUNCTIONS = {
    "bayes-random": _bayes_random,
    "bayes-stratified": _bayes_stratified,
    "ppi": _ppi,
    "likelihood": _likelihood,
    "lang-reiczigel": _lang_reiczigel,
    "human-only": _human_only,
}


# --- the study -------------------------------------------------------------------------------


def _check_options(grid, theta, estimators, samples, alpha, draws):
    design = check_calibration_grid(grid, GRIDS)
    thetas = THETAS if theta is None else check_grid("theta", theta, low=0, high=1)
    estimators = check_names("estimators", estimators, ESTIMATORS)
    samples = check_names("samples", samples, SAMPLES)
    alpha = check_number("alpha", alpha, low=0, high=1, low_open=True, high_open=True)
    draws = check_number("draws", draws, low=100, integer=True)
    return design, thetas, estimators, samples, alpha, draws


def _simulate(rng, sample, theta, q0, q1, n, m, reps):
    """One sample's data: counts (int arrays) and the true test-set θ ``theta_test``."""
    if sample == "random":
        return simulate_count_arrays(theta, q0, q1, n, m=m, design="random", test_set=True,
                                     size=(reps,), random_seed=rng)  # fmt: skip
    return simulate_count_arrays(theta, q0, q1, n, m // 2, m // 2, test_set=True, size=(reps,),
                                 random_seed=rng)  # fmt: skip


def _score(values, mcse, cell, estimate, lower, upper, truth):
    """Bias, coverage and mean length of one estimator at one cell, with their MC-SEs."""
    error = np.asarray(estimate, dtype=float) - truth
    covered = (lower <= truth) & (truth <= upper)
    length = np.asarray(upper, dtype=float) - lower
    reps = error.size
    values["bias"][cell], mcse["bias"][cell] = error.mean(), mcse_mean(error)
    values["coverage"][cell] = covered.mean()
    mcse["coverage"][cell] = mcse_proportion(covered.mean(), reps)
    values["length"][cell], mcse["length"][cell] = length.mean(), mcse_mean(length)


def run(
    *,
    reps: int = 1000,
    random_seed: int = DEFAULT_SEED,
    progress: bool = False,
    grid: str | dict = "issue15",
    theta: Sequence[float] | None = None,
    estimators: Sequence[str] = ESTIMATORS,
    samples: Sequence[str] = SAMPLES,
    alpha: float = 0.05,
    draws: int = 500,
) -> StudyResult:
    """Run the random-design study: coverage and width under random labelling (issue 15).

    Parameters
    ----------
    reps : int, default 1000
        Replications per design point and sample (Monte Carlo SE of a 95 % coverage:
        0.0069 at 1,000).
    random_seed : int, default DEFAULT_SEED
        Seed; each design point derives its own streams from it and its values.
    progress : bool, default False
        Show a progress bar on stderr (one step per design point and θ).
    grid : {"issue15", "fig5"} or dict, default "issue15"
        ``"issue15"``: 1,800 unlabelled + 200 labelled items, q0 = 0.8, q1 = 0.9.
        ``"fig5"``: 1,000 + 200, q0 = 0.7, q1 = 0.9 (Lee et al.'s Fig. 5 sizes and judge).
        A dict with keys ``n`` (unlabelled items), ``m`` (labelled items, even), ``q0``,
        ``q1`` gives any full grid.
    theta : sequence of float, optional
        True accuracies; default 0.05, 0.10, …, 0.95.
    estimators : sequence of str, default all six
        Any of :data:`ESTIMATORS`; all run on the same data.
    samples : sequence of str, default ("random", "stratified")
        How the labelled items are drawn: ``"random"`` (the random labelling design) and/or
        ``"stratified"`` (m0 = m1 = m / 2, a separate test set: the misdeclaration check).
    alpha : float, default 0.05
        Intervals have nominal coverage 1 - alpha.
    draws : int, default 500
        Posterior draws per data set for ``bayes-random``'s test-set interval (at least 100;
        with 500 draws the Monte Carlo error of the interval's ends, about 0.12 posterior
        sd, lowers its coverage by about 0.002 for a normal posterior).

    Returns
    -------
    StudyResult
        Table with dims ``(n, m, q0, q1, sample, theta, estimand, estimator)`` and variables
        ``bias`` (mean estimate - truth), ``coverage``, ``length`` (mean interval length, in
        [0, 1]), each with ``<name>_mcse``, and ``undefined_share`` (replications where the
        estimator had no answer and was scored as ½ with [0, 1]: labelled items of one human
        label only (m0 = 0 or m1 = 0) for PPI++, Lang–Reiczigel and the two Bayesian
        estimators, whose exact engine needs both, a non-unique MLE for the likelihood). The
        truth is θ for ``estimand="population"`` and the realised test-set share for
        ``"test-set"`` (of the ``n + m`` judged items of the random sample, of the ``n`` test
        items of the stratified one). ``attrs`` hold the settings, ``goals`` (JSON of
        :func:`goals`) and ``seconds`` (wall time per estimator).

    Examples
    --------
    >>> from bayesjudge.studies import random_design
    >>> res = random_design.run(reps=40, theta=[0.3], samples=["random"],
    ...                         estimators=["ppi", "likelihood"])
    >>> res.table["length"].sel(estimand="population").squeeze().round(2).values.tolist()
    [0.1, 0.1]
    """
    reps = check_reps(reps)
    random_seed = check_seed(random_seed)
    design, thetas, estimators, samples, alpha, draws = _check_options(
        grid, theta, estimators, samples, alpha, draws
    )
    dims = ("n", "m", "q0", "q1", "sample", "theta", "estimand", "estimator")
    coords = {key: list(design[key]) for key in ("n", "m", "q0", "q1")}
    coords |= {"sample": list(samples), "theta": list(thetas), "estimand": list(ESTIMANDS)}
    coords["estimator"] = list(estimators)
    shape = tuple(len(coords[d]) for d in dims)
    values = {name: np.full(shape, np.nan) for name in ("bias", "coverage", "length")}
    mcse = {name: np.full(shape, np.nan) for name in values}
    undefined = np.full(shape, np.nan)
    seconds = dict.fromkeys(("simulate", *estimators), 0.0)

    points = list(itertools.product(*(range(s) for s in shape[:4])))
    bar = progress_bar(len(points) * len(thetas), f"study {NAME}", progress)
    for point in points:
        n, m, q0, q1 = (coords[d][i] for d, i in zip(dims, point, strict=False))
        for i_t, th in enumerate(thetas):
            streams = point_rngs(random_seed, n, m, q0, q1, th, count=1 + len(SAMPLES))
            rng_draws = streams[-1]
            for i_s, sample in enumerate(samples):
                start = time.perf_counter()
                data = _simulate(streams[SAMPLES.index(sample)], sample, th, q0, q1, n, m, reps)
                seconds["simulate"] += time.perf_counter() - start
                # Posterior draws of the test-set θ on the random sample only: on the stratified
                # one the misdeclared posterior contradicts the test data and draws slowly.
                options = {"test_set": sample == "random", "draws": draws}
                for i_e, name in enumerate(estimators):
                    start = time.perf_counter()
                    result, mask = _ESTIMATOR_FUNCTIONS[name](data, alpha, rng_draws, options)
                    seconds[name] += time.perf_counter() - start
                    for i_d, estimand in enumerate(ESTIMANDS):
                        truth = th if estimand == "population" else data["theta_test"]
                        est, lower, upper = result.get(estimand, result["population"])
                        cell = (*point, i_s, i_t, i_d, i_e)
                        _score(values, mcse, cell, est, lower, upper, truth)
                        undefined[cell] = mask.mean()
            bar.update()

    data_vars = {"undefined_share": (dims, undefined)}
    for name in values:
        data_vars[name] = (dims, values[name])
        data_vars[f"{name}_mcse"] = (dims, mcse[name])
    table = xr.Dataset(data_vars, coords=coords)
    table.attrs = study_attrs(
        NAME,
        reps=reps,
        random_seed=random_seed,
        grid=grid if isinstance(grid, str) else "custom",
        design={key: list(v) for key, v in design.items()},
        theta=list(thetas),
        estimators=list(estimators),
        samples=list(samples),
        alpha=float(alpha),
        ci_prob=1.0 - float(alpha),
        draws=int(draws),
        stratified_split="m0 = m1 = m / 2, separate test set of n items",
        bayes_point="posterior median",
        bayes_priors="theta, q0, q1 ~ Beta(1, 1)",
        test_set_intervals={name: _TEST_SET_INTERVALS[name] for name in estimators},
        reproduces="issue 15 (random labelling), on Lee et al.'s Fig. 5 theta grid",
    )
    table.attrs["seconds"] = json.dumps({key: round(v, 3) for key, v in seconds.items()})
    table.attrs["goals"] = goals(table).to_json(orient="records")
    return StudyResult(NAME, table, plot)


# --- the goals -------------------------------------------------------------------------------


def goals(table: xr.Dataset) -> pd.DataFrame:
    """Check issue 15's goals on a study table (random sample only); one row per check.

    * ``coverage``: for each of :data:`GOAL_ESTIMATORS` and estimand, the share of θ points
      whose coverage lies within the nominal level ± 3 nominal Monte Carlo SE
      (``sqrt(nominal (1 - nominal) / reps)``); it passes when every point does.
    * ``width vs ppi``: the largest ratio over θ of ``bayes-random``'s mean population width
      to PPI++'s; passes at most 1.05.
    * ``width vs stratified``: the same against ``bayes-stratified``; passes at most 0.7.

    Parameters
    ----------
    table : xarray.Dataset
        The table of :func:`run` (with the ``"random"`` sample).

    Returns
    -------
    pandas.DataFrame
        Columns ``n, m, q0, q1, goal, estimator, estimand, value, worst_theta, target,
        passed``; checks whose estimators are missing from the table are left out.

    Examples
    --------
    >>> from bayesjudge.studies import random_design
    >>> res = random_design.run(reps=40, theta=[0.3], samples=["random"],
    ...                         estimators=["bayes-random", "ppi"], draws=200)
    >>> random_design.goals(res.table)["goal"].tolist()
    ['coverage', 'coverage', 'coverage', 'coverage', 'width vs ppi']
    """
    if "random" not in table["sample"].values:
        return pd.DataFrame(columns=[*"n m q0 q1".split(), "goal", "estimator", "estimand",
                                     "value", "worst_theta", "target", "passed"])  # fmt: skip
    nominal = float(table.attrs.get("ci_prob", 0.95))
    band = 3 * np.sqrt(nominal * (1 - nominal) / int(table.attrs["reps"]))
    present = [str(e) for e in table["estimator"].values]
    rows = []
    stacked = table.sel(sample="random").stack(design=("n", "m", "q0", "q1"))
    for index in range(stacked.sizes["design"]):
        cell = stacked.isel(design=index)
        key = dict(zip(("n", "m", "q0", "q1"), cell["design"].item(), strict=True))
        theta = cell["theta"].values
        for name in (e for e in GOAL_ESTIMATORS if e in present):
            for estimand in ESTIMANDS:
                cover = cell["coverage"].sel(estimator=name, estimand=estimand).values
                off = np.abs(cover - nominal)
                rows.append(key | {
                    "goal": "coverage", "estimator": name, "estimand": estimand,
                    "value": float(np.mean(off <= band)), "worst_theta": float(theta[off.argmax()]),
                    "target": f"{nominal:g} ± {band:.4f} at every θ",
                    "passed": bool((off <= band).all()),
                })  # fmt: skip
        for other, limit in (("ppi", 1.05), ("bayes-stratified", 0.7)):
            if "bayes-random" not in present or other not in present:
                continue
            length = cell["length"].sel(estimand="population")
            ratio = (length.sel(estimator="bayes-random") / length.sel(estimator=other)).values
            rows.append(key | {
                "goal": f"width vs {other.split('-')[-1]}", "estimator": "bayes-random",
                "estimand": "population", "value": float(ratio.max()),
                "worst_theta": float(theta[ratio.argmax()]), "target": f"<= {limit:g}",
                "passed": bool((ratio <= limit).all()),
            })  # fmt: skip
    return pd.DataFrame(rows)


# --- the figure ------------------------------------------------------------------------------


def plot(table: xr.Dataset):
    """Draw bias, coverage (population and test-set) and mean width against θ.

    One row per design point and sample; every estimator is one line with ±1 MC-SE error
    bars; the coverage panels show the nominal level with a band of ±3 nominal MC-SE.

    Parameters
    ----------
    table : xarray.Dataset
        The table of :func:`run`.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (close it with ``matplotlib.pyplot.close``).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from bayesjudge.studies import random_design
    >>> res = random_design.run(reps=20, theta=[0.3, 0.6], estimators=["ppi", "likelihood"])
    >>> fig = random_design.plot(res.table)
    >>> len(fig.axes)
    8
    >>> plt.close(fig)
    """
    import matplotlib.pyplot as plt

    stacked = table.stack(row=("n", "m", "q0", "q1", "sample"))
    rows = stacked.sizes["row"]
    nominal = float(table.attrs.get("ci_prob", 0.95))
    band = 3 * np.sqrt(nominal * (1 - nominal) / int(table.attrs.get("reps", 1)))
    fig, axes = plt.subplots(rows, 4, figsize=(17, 3.4 * rows), squeeze=False,
                             constrained_layout=True)  # fmt: skip
    theta = table["theta"].to_numpy()
    panels = (("bias", "population"), ("coverage", "population"), ("coverage", "test-set"),
              ("length", "population"))  # fmt: skip
    for row in range(rows):
        cell = stacked.isel(row=row)
        n, m, q0, q1, sample = cell["row"].item()
        for ax, (var, estimand) in zip(axes[row], panels, strict=True):
            for estimator in table["estimator"].to_numpy():
                est = cell.sel(estimator=estimator, estimand=estimand)
                label = _LABELS.get(str(estimator), str(estimator))
                ax.errorbar(theta, est[var], yerr=est[f"{var}_mcse"], marker="o", ms=3, lw=1,
                            capsize=2, label=label)  # fmt: skip
            if var == "coverage":
                ax.axhline(nominal, color="k", lw=0.8, ls="--")
                ax.axhspan(nominal - band, nominal + band, color="0.85", zorder=0)
            if var == "bias":
                ax.axhline(0.0, color="k", lw=0.8, ls="--")
            ax.set_title(f"{var} ({estimand}) [{sample} sample, n={n}, m={m}, q0={q0}, q1={q1}]",
                         fontsize=8)  # fmt: skip
            ax.set_xlabel("true accuracy θ")
            ax.set_ylabel(_YLABELS[var])
    axes[0, 0].legend(fontsize=7)
    return fig
