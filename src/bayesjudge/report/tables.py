"""The report's numbers: one tidy table per topic, each copied from the function computing it.

Every table is a :class:`pandas.DataFrame` with one row per system (or pair) and stratum, an
estimate in a column ``c`` and its interval in ``c_lower`` / ``c_upper``. The numbers come
from the estimators (:func:`bayesjudge.estimate.estimate`, :func:`bayesjudge.compare.compare`,
:mod:`bayesjudge.core`), the diagnostics (:mod:`bayesjudge.diagnostics`) and, with a fit, the
fit's own methods (``summary``, ``compare``, ``ppc``); this module only arranges them. The
Bayesian fit is passed in as an object: nothing here imports the Bayesian layer.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import platform
import warnings
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
import xarray as xr

from bayesjudge._text import pair_label
from bayesjudge._version import __version__
from bayesjudge.compare import compare
from bayesjudge.core._validation import two_sided_z
from bayesjudge.core.cluster import calibration_effective_counts, cluster_wilson
from bayesjudge.core.kernels import linear_combination_interval, wilson_limits
from bayesjudge.core.naive import naive
from bayesjudge.core.youden import youden, youden_difference
from bayesjudge.data import JudgeCounts
from bayesjudge.diagnostics import (
    check_comparison,
    check_pooled_calibration,
    comparison_table,
    judge_diagnostics,
    posterior_differences,
)
from bayesjudge.estimate import estimate
from bayesjudge.report.document import Plain
from bayesjudge.warnings import BayesJudgeWarning

__all__ = ["ALL_PAIRS_MAX_SYSTEMS", "BOTTOM_LINE_MAX_SYSTEMS", "SETTLED_PROBABILITY",
           "comparison_rows"]  # fmt: skip

#: Up to this many systems the report compares every pair (45 pairs for 10 systems). Beyond,
#: the number of pairs grows quadratically (300 systems: 44,850), so the report compares each
#: system with the best one and with its neighbours in rank (2K − 3 pairs), and writes the
#: closed-form Δθ and ΔJ of every pair to ``comparisons_all_pairs.csv`` beside the report.
ALL_PAIRS_MAX_SYSTEMS = 10

#: With a fit, a step of the ranking is settled when P(θ_a > θ_b) reaches this (the default
#: threshold of the CI gate, ``bayesjudge compare --min-probability``); without one, when the
#: closed-form Δθ interval excludes 0.
SETTLED_PROBABILITY = 0.95

#: The stratum label of the bottom line's ranking by θ over strata (a fit's ``theta_total``),
#: as in the Δθ table.
TOTAL_LABEL = "all strata (θ_total)"

#: The bottom line lists this many systems per stratum, best first.
BOTTOM_LINE_MAX_SYSTEMS = 10

_FIELDS = ("n", "k", "m0", "tn", "m1", "tp")
_CAL = ("tn", "m0", "tp", "m1")
_WITH_BEST = "with the best system"
_NEIGHBOURS = "between neighbours in rank"


# ----------------------------------------------------------------------------- θ and the judge


def _groups(counts: JudgeCounts):
    ds = counts.dataset
    for i, system in enumerate(counts.systems):
        for j, stratum in enumerate(counts.strata):
            yield i, j, system, stratum, {f: int(ds[f].values[i, j]) for f in _FIELDS}


def _proportion(x: int, size: int, alpha: float) -> tuple[float, float, float]:
    if size == 0:
        return (np.nan, np.nan, np.nan)
    est, lo, hi = naive(x, size, alpha=alpha, method="wilson")
    return float(est), float(lo), float(hi)


def counts_table(counts: JudgeCounts) -> pd.DataFrame:
    """Return the counts per system and stratum, with p̂ = k/n."""
    frame = counts.to_frame()
    frame.insert(
        4, "p_hat", np.where(frame["n"] > 0, frame["k"] / frame["n"].where(frame["n"] > 0), np.nan)
    )
    return frame


#: How the report names each corrected estimator: the header of its column in the θ table
#: and its label in the forest plot (``estimate``'s ``method`` attr; else its ``ci_kind``).
CORRECTED_LABELS = {
    "lang-reiczigel": ("Rogan–Gladen θ̂ [Lang–Reiczigel]", "Lang–Reiczigel"),
    "likelihood": ("maximum-likelihood θ̂ [profile likelihood]", "profile likelihood"),
    "ppi++": ("PPI++ θ̂ [Wald]", "PPI++"),
    "bootstrap": ("Rogan–Gladen θ̂ [bootstrap]", "bootstrap"),
    "cluster-delta": ("Rogan–Gladen θ̂ [cluster-robust Wald]", "cluster delta"),
    "cluster-bootstrap": ("Rogan–Gladen θ̂ [cluster bootstrap]", "cluster bootstrap"),
}

#: The human-only baseline in the θ table and the forest plot (random labelling design).
HUMAN_LABELS = ("human labels only: m1/(m0 + m1) [Wilson]", "human labels only")

#: The corrected estimators as the settings table names them.
_SETTINGS_TEXT = {
    "lang-reiczigel": "Rogan–Gladen θ̂ with Lang–Reiczigel interval",
    "likelihood": "maximum-likelihood θ̂ with profile-likelihood interval",
    "ppi++": "PPI++ θ̂ with Wald interval",
    "bootstrap": "Rogan–Gladen θ̂ with percentile bootstrap interval",
    "cluster-delta": "Rogan–Gladen θ̂ on p̂ = Σk/Σr with a cluster-robust Wald interval "
    "(items as the units)",
    "cluster-bootstrap": "Rogan–Gladen θ̂ on p̂ = Σk/Σr with a percentile cluster bootstrap "
    "(items resampled with all their verdicts)",
}

#: The header of the ratio of the corrected interval's width to the human-only one's.
WIDTH_RATIO_LABEL = "width: corrected / human-only"
#: The naive column's header for repeated verdicts of an item.
CLUSTER_NAIVE_LABEL = "naive p̂ = Σk/Σr [cluster-robust Wilson]"


def fit_estimand(fit) -> str:
    """Return the estimand a fit was made for: ``"population"`` (default) or ``"test-set"``."""
    if fit is None:
        return "population"
    return str(getattr(fit, "estimand", None) or fit.config.get("estimand", "population"))


def theta_table(counts, alpha, fit, ci_prob, collected) -> pd.DataFrame:
    """θ per system and stratum: naive, corrected (the design's estimator) and Bayesian.

    The corrected column comes from :func:`~bayesjudge.estimate.estimate` without a method,
    that is with the estimator of the counts' labelling design (Lang–Reiczigel for the
    stratified design, the profile-likelihood interval for the random one), for the
    estimand of the fit (population θ without one) where it has a closed form (the test-set
    θ has one for the likelihood only; ``attrs["closed_form_estimand"]`` says which it is).
    For the random design the table also holds the human-only baseline (``human``:
    m1/(m0 + m1) with its Wilson interval, from the same call) and, for the population θ,
    ``width_ratio``, the corrected interval's width over the human-only one's (below 1: the
    judge helps, Lee et al. Sec. 6). ``frame.attrs`` holds ``method`` (the corrected
    estimator), ``estimand``, ``closed_form_estimand``, ``headers`` and ``labels`` (its names
    in the tables and the forest plot). The estimators' warnings are appended to
    ``collected``.
    """
    estimand = fit_estimand(fit)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", BayesJudgeWarning)
        if counts.has_clusters:  # Σk/Σr with a cluster-robust interval
            naive_est = _cluster_naive(counts, alpha)
        else:
            naive_est = estimate(counts, method="naive", alpha=alpha)
        corrected = estimate(counts, method=None, alpha=alpha)
        if estimand == "test-set" and corrected.attrs["method"] == "likelihood":
            # The test-set θ has a closed form only for the random design's likelihood.
            corrected = estimate(counts, method=None, alpha=alpha, estimand=estimand)
    collected += [w for w in caught if issubclass(w.category, BayesJudgeWarning)]
    n_strata = len(counts.strata)
    columns = {
        "system": np.repeat(np.asarray(counts.systems, dtype=object), n_strata),
        "stratum": np.tile(np.asarray(counts.strata, dtype=object), len(counts.systems)),
    }
    shown = [("naive", naive_est, "estimate", "ci"), ("corrected", corrected, "estimate", "ci")]
    if counts.design == "random":
        shown.append(("human", corrected, "human_estimate", "human_ci"))
    for name, result, var, ci_var in shown:
        # One (system, stratum) row each, in the counts' order (no per-row selection).
        result = result.sel(system=counts.systems, stratum=counts.strata)
        ci = result[ci_var].transpose("system", "stratum", "ci_bound").values.reshape(-1, 2)
        columns[name] = result[var].transpose("system", "stratum").values.ravel()
        columns[f"{name}_lower"], columns[f"{name}_upper"] = ci[:, 0], ci[:, 1]
    frame = pd.DataFrame({k: v if k in ("system", "stratum") else np.asarray(v, dtype=float)
                          for k, v in columns.items()})  # fmt: skip
    if "human" in frame and corrected.attrs["estimand"] == "population":
        human_width = (frame["human_upper"] - frame["human_lower"]).to_numpy(float)
        width = (frame["corrected_upper"] - frame["corrected_lower"]).to_numpy(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            frame["width_ratio"] = np.where(human_width > 0, width / human_width, np.nan)
    if fit is not None:
        var = "theta_test" if estimand == "test-set" else "theta"
        stats = _posterior_stats(fit, var, ci_prob, counts)
        frame["bayes"], frame["bayes_lower"], frame["bayes_upper"] = stats
    method = str(corrected.attrs["method"])
    header, label = CORRECTED_LABELS.get(
        method, (f"corrected θ̂ [{corrected.attrs['ci_kind']}]", method)
    )
    frame.attrs.update(
        method=method,
        estimand=estimand,
        closed_form_estimand=str(corrected.attrs["estimand"]),
        headers={
            "corrected": header,
            "human": HUMAN_LABELS[0],
            "width_ratio": WIDTH_RATIO_LABEL,
            **({"naive": CLUSTER_NAIVE_LABEL} if counts.has_clusters else {}),
        },
        labels={"corrected": label, "human": HUMAN_LABELS[1]},
    )
    return frame


def _cluster_naive(counts, alpha) -> xr.Dataset:
    """Return the naive column of repeated verdicts: p̂ = Σk/Σr, cluster-robust Wilson interval.

    :func:`~bayesjudge.core.cluster.cluster_wilson` per (system, stratum); NaN without test
    items (as ``estimate(method="naive")``).
    """
    table = _cluster_test_tables(counts)
    has = table.sum(axis=(-2, -1)) > 0
    point, lower, upper = (np.full(has.shape, np.nan) for _ in range(3))
    if has.any():
        res = cluster_wilson(table[has], alpha=alpha)
        point[has], lower[has], upper[has] = res.estimate, res.lower, res.upper
    dims = ("system", "stratum")
    return xr.Dataset(
        {"estimate": (dims, point), "ci": ((*dims, "ci_bound"), np.stack([lower, upper], -1))},
        coords={"system": counts.systems, "stratum": counts.strata,
                "ci_bound": ["lower", "upper"]},
    )  # fmt: skip


def _cluster_test_tables(counts) -> np.ndarray:
    """Return the test cluster tables (system, stratum, R, R + 1); r = 1 where none is stored."""
    if counts.clusters is not None:
        return counts.clusters.transpose("system", "stratum", "repeats", "positives").values
    n, k = (counts.dataset[v].transpose("system", "stratum").values for v in ("n", "k"))
    return np.stack([n - k, k], axis=-1)[..., None, :]


def _posterior_stats(fit, name, ci_prob, counts):
    """Posterior mean and ETI of ``name`` from ``fit.summary``, broadcast to (system, stratum)."""
    ds = fit.summary(ci_prob=ci_prob, var_names=[name], as_xarray=True)[name].dataset
    like = counts.dataset["n"]
    mean = ds["mean"].broadcast_like(like).transpose("system", "stratum").values.ravel()
    eti = ds["eti"].broadcast_like(like)
    lower = eti.sel(ci_bound="lower").transpose("system", "stratum").values.ravel()
    upper = eti.sel(ci_bound="upper").transpose("system", "stratum").values.ravel()
    return mean, lower, upper


def judge_table(counts, alpha, fit, ci_prob) -> pd.DataFrame:
    """q0, q1 and J per system and stratum: closed form and, with a fit, Bayesian rows."""
    rows = []
    effective = _effective_calibration(counts)
    for i, j_index, system, stratum, c in _groups(counts):
        row = {"system": system, "stratum": stratum, "method": "closed form"}
        row["m0"], row["m1"] = c["m0"], c["m1"]
        if effective is not None:
            # Labelled items judged several times: the same q̂0, q̂1 and Newcombe's J on
            # Kish's effective counts, so that the intervals count items, not verdicts.
            row.update(_effective_judge_row(*(a[i, j_index] for a in effective), alpha))
            rows.append(row)
            continue
        for name, x, size in (("q0", c["tn"], c["m0"]), ("q1", c["tp"], c["m1"])):
            row[name], row[f"{name}_lower"], row[f"{name}_upper"] = _proportion(x, size, alpha)
        if c["m0"] and c["m1"]:
            j = youden(c["tn"], c["m0"], c["tp"], c["m1"], alpha=alpha, method="newcombe")
            row["J"], row["J_lower"], row["J_upper"] = (float(v) for v in j)
        else:
            row["J"] = row["J_lower"] = row["J_upper"] = np.nan
        rows.append(row)
    frame = pd.DataFrame(rows)
    if fit is not None:
        bayes = frame[["system", "stratum"]].copy()
        bayes["method"] = "Bayesian"
        bayes["m0"], bayes["m1"] = frame["m0"], frame["m1"]
        for name, var in (("q0", "q0"), ("q1", "q1"), ("J", "youden")):
            stats = _posterior_stats(fit, var, ci_prob, counts)
            bayes[name], bayes[f"{name}_lower"], bayes[f"{name}_upper"] = stats
        frame = pd.concat([frame, bayes], ignore_index=True)
    return frame


def _effective_calibration(counts):
    """Kish's effective ``(tn, m0, tp, m1)`` (system, stratum) of repeated labelled verdicts.

    None when every labelled item has one verdict (the verdict counts are then exact).
    """
    if counts.calibration_clusters is None:
        return None
    dims = ("system", "stratum", "truth", "repeats", "positives")
    return calibration_effective_counts(counts.calibration_clusters.transpose(*dims).values)


def _effective_judge_row(tn, m0, tp, m1, alpha) -> dict:
    """q0, q1 (Wilson) and J (Newcombe) with their intervals from effective counts."""
    z = two_sided_z(alpha)
    row = {}
    for name, x, size in (("q0", tn, m0), ("q1", tp, m1)):
        if size > 0:
            lo, hi = wilson_limits(x, size, z)
            row[name], row[f"{name}_lower"], row[f"{name}_upper"] = (
                float(x / size), float(max(lo, 0.0)), float(min(hi, 1.0)))  # fmt: skip
        else:
            row[name] = row[f"{name}_lower"] = row[f"{name}_upper"] = np.nan
    if m0 > 0 and m1 > 0:
        j = linear_combination_interval([(tn, m0), (tp, m1)], (1, 1), -1.0, alpha, "newcombe", 1.0)
        row["J"], row["J_lower"], row["J_upper"] = (float(v) for v in j)
    else:
        row["J"] = row["J_lower"] = row["J_upper"] = np.nan
    return row


def fit_tables(fit, counts, ci_prob, collected) -> dict[str, pd.DataFrame]:
    """Return the tables only a fit has: ``theta_total``, ``calibration_scale`` if they apply.

    An MCMC fit's sampler warnings (``fit.check_sampling()``) are appended to ``collected``.
    """
    tables = {}
    total = "theta_total_test" if fit_estimand(fit) == "test-set" else "theta_total"
    if total in fit.posterior.data_vars:
        mean, lower, upper = (np.asarray(v) for v in _total_stats(fit, ci_prob, total))
        tables["theta_total"] = pd.DataFrame(
            {"system": counts.systems, "bayes": mean, "bayes_lower": lower, "bayes_upper": upper}
        )
    scales = [v for v in ("q0_logit_scale", "q1_logit_scale") if v in fit.posterior]
    if scales:
        summary = fit.summary(ci_prob=ci_prob, var_names=scales)
        tables["calibration_scale"] = summary[
            ["variable", "system", "stratum", "mean", "eti_lower", "eti_upper"]
        ].rename(columns={"eti_lower": "mean_lower", "eti_upper": "mean_upper"})
    if fit.config.get("method", "mcmc") == "mcmc":
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", BayesJudgeWarning)
            fit.check_sampling()
        collected += [w for w in caught if issubclass(w.category, BayesJudgeWarning)]
    return tables


def pooled_dims(counts, fit) -> tuple[str, ...]:
    """Return the dims over which a fit pools calibration that the counts hold per group.

    A fit with ``calibration="shared"`` uses one q0, q1 across its ``pool_over`` dims (both
    by default). Along a dim where the counts have their own labelled items per group (not
    one set shared over it), whether the judge's q0, q1 really are alike can be tested; along
    a dim the counts share one calibration set over, it cannot, and none is returned.
    """
    if fit is None or fit.config.get("calibration") != "shared":
        return ()
    pooled = fit.config.get("pool_over") or ("system", "stratum")
    shared = counts.calibration_shared_over
    return tuple(d for d in pooled if d not in shared and counts.sizes[d] > 1)


def check_pooling(counts, dims, alpha, collected) -> None:
    """Test whether q0, q1 differ between the groups pooled over ``dims``; collect warnings.

    :func:`bayesjudge.diagnostics.check_pooled_calibration` warns
    (``PooledCalibrationWarning``) with the bias that pooling implies; its warnings are
    appended to ``collected``, so that the report states them (sections 2 and 7).
    """
    if not dims:
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", BayesJudgeWarning)
        check_pooled_calibration(counts, dims=dims, alpha=alpha)
    collected += [w for w in caught if issubclass(w.category, BayesJudgeWarning)]


def _total_stats(fit, ci_prob, var="theta_total"):
    ds = fit.summary(ci_prob=ci_prob, var_names=[var], as_xarray=True)[var]
    ds = ds.dataset
    return (
        ds["mean"].values,
        ds["eti"].sel(ci_bound="lower").values,
        ds["eti"].sel(ci_bound="upper").values,
    )


# ----------------------------------------------------------------------------- pairs


def _pairs(counts, pairs=None):
    """Return ``(a, b, "a - b")`` per compared pair: every pair, or the index pairs given."""
    if pairs is None:
        return [(a, b, pair_label(a, b)) for a, b in combinations(counts.systems, 2)]
    systems = counts.systems
    return [(systems[i], systems[j], pair_label(systems[i], systems[j])) for i, j in pairs]


def shown_pairs(counts, theta: pd.DataFrame) -> list[tuple[int, int]] | None:
    """Return the pairs a report compares: all (None) up to ALL_PAIRS_MAX_SYSTEMS systems.

    Beyond, the systems are ranked by their corrected θ̂ (mean over strata) and each is
    compared with the best one and with the next one in rank: 2K − 3 pairs, oriented so that
    the higher-ranked system comes first. These answer "how far is each system from the best?"
    and "is each step of the ranking decided?"; every other pair is in the CSV file.
    """
    n_systems = len(counts.systems)
    if n_systems <= ALL_PAIRS_MAX_SYSTEMS:
        return None
    score = theta["corrected"].to_numpy(float).reshape(n_systems, -1)
    finite = np.isfinite(score)
    mean = np.where(finite, score, 0.0).sum(1) / np.maximum(finite.sum(1), 1)
    mean = np.where(finite.any(1), mean, -np.inf)
    order = [int(i) for i in np.argsort(-mean, kind="stable")]
    best = order[0]
    pairs = [(best, other) for other in order[1:]]
    pairs += [(order[r], order[r + 1]) for r in range(1, n_systems - 1)]
    return pairs


def all_pairs_table(counts, alpha) -> pd.DataFrame:
    """Closed-form Δθ (delta method) and ΔJ (Newcombe) of every pair and stratum, vectorised.

    The CSV file beside a report of more than ALL_PAIRS_MAX_SYSTEMS systems: the numbers of
    ``bayesjudge.diagnostics.judge_diagnostics`` (``delta_theta``, ``delta_theta_ci``,
    ``prob_greater``, ``delta_youden``, ``delta_youden_ci``) for all K(K − 1)/2 pairs.
    """
    table = comparison_table(counts, alpha)
    ds = counts.dataset
    first = table["first"].values
    second = table["second"].values
    position = {s: i for i, s in enumerate(counts.systems)}
    ia = np.array([position[a] for a in first], dtype=int)
    ib = np.array([position[b] for b in second], dtype=int)
    cal = {f: ds[f].transpose("system", "stratum").values.astype(float) for f in _CAL}
    frame = {
        "pair": np.repeat(table["pair"].values, len(counts.strata)),
        "first": np.repeat(first, len(counts.strata)),
        "second": np.repeat(second, len(counts.strata)),
        "stratum": np.tile(np.asarray(counts.strata, dtype=object), len(ia)),
        "delta_theta": table["delta_theta"].values.ravel(),
        "delta_theta_lower": table["delta_theta_ci"].sel(ci_bound="lower").values.ravel(),
        "delta_theta_upper": table["delta_theta_ci"].sel(ci_bound="upper").values.ravel(),
        "delta_theta_se": table["delta_theta_se"].values.ravel(),
        "prob_greater": table["prob_greater"].values.ravel(),
    }
    if "system" not in counts.calibration_shared_over:
        valid = np.minimum.reduce([cal[f][ia] for f in ("m0", "m1")] +
                                  [cal[f][ib] for f in ("m0", "m1")]) > 0  # fmt: skip
        args = [np.where(valid, cal[f][x], 1.0) for x in (ia, ib) for f in _CAL]
        d = youden_difference(*args, alpha=alpha, method="newcombe")
        for name, v in (("delta_J", d.estimate), ("delta_J_lower", d.lower),
                        ("delta_J_upper", d.upper)):  # fmt: skip
            frame[name] = np.where(valid, np.asarray(v, dtype=float), np.nan).ravel()
    return pd.DataFrame(frame)


def comparison_rows(fit, var: str, ci_prob: float, pairs=None) -> pd.DataFrame:
    """``fit.compare`` of ``var`` between systems as tidy rows (one per pair and stratum).

    Columns ``pair``, ``stratum`` (None when ``var`` has no stratum dim), ``mean``, ``sd``,
    ``median``, ``lower``, ``upper`` (the equal-tailed interval) and ``prob_greater``; shared
    by the report's tables and ``bayesjudge fit``. ``pairs`` (index pairs ``(i, j)``) limits
    the rows to those pairs (:func:`bayesjudge.diagnostics.posterior_differences`: the same
    numbers, without the draws of every pair in memory).
    """
    if pairs is None:
        comp = fit.compare(dim="system", var=var, ci_prob=ci_prob)
    else:
        comp = posterior_differences(fit, var, pairs, ci_prob)
    strata = comp["stratum"].values.tolist() if "stratum" in comp.dims else [None]
    dims = ("pair", "stratum") if "stratum" in comp.dims else ("pair",)
    ci = comp["ci"].transpose(*dims, "ci_bound").values.reshape(-1, 2)
    columns = {k: comp[k].transpose(*dims).values.ravel() for k in ("mean", "sd", "median")}
    frame = pd.DataFrame(
        {
            "pair": np.repeat(np.asarray(comp["pair"].values, dtype=object), len(strata)),
            "stratum": np.tile(np.asarray(strata, dtype=object), comp.sizes["pair"]),
            **{k: v.astype(float) for k, v in columns.items()},
            "lower": ci[:, 0].astype(float),
            "upper": ci[:, 1].astype(float),
            "prob_greater": comp["prob_greater"].transpose(*dims).values.ravel().astype(float),
        }
    )
    return frame


def _posterior_columns(fit, var, ci_prob, name, pairs=None):
    """``comparison_rows`` renamed to ``name``, ``name_lower``, ``name_upper`` (+ P)."""
    rows = comparison_rows(fit, var, ci_prob, pairs).drop(columns=["sd", "median"])
    return rows.rename(columns={"mean": name, "lower": f"{name}_lower", "upper": f"{name}_upper"})


def difference_table(counts, alpha, fit, ci_prob, comparison, collected, pairs=None):
    """Δθ per pair and stratum: frequentist (bayesjudge.compare) and Bayesian (fit.compare).

    Returns the table and :func:`~bayesjudge.compare.compare`'s Dataset; the comparison's
    warnings are appended to ``collected``.
    """
    labels = _pairs(counts, pairs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", BayesJudgeWarning)
        if pairs is None:
            freq = compare(counts, **comparison)
        else:
            freq = compare(counts, **comparison, pairs=[(a, b) for a, b, _ in labels])
    collected += [w for w in caught if issubclass(w.category, BayesJudgeWarning)]
    n_strata = len(counts.strata)
    freq_rows = freq.transpose("pair", "stratum", "ci_bound")
    ci = freq_rows["ci"].values.reshape(-1, 2)
    frame = pd.DataFrame(
        {
            "pair": np.repeat(np.asarray([p for _, _, p in labels], dtype=object), n_strata),
            "stratum": np.tile(np.asarray(counts.strata, dtype=object), len(labels)),
            "frequentist": freq_rows["estimate"].values.ravel().astype(float),
            "frequentist_lower": ci[:, 0].astype(float),
            "frequentist_upper": ci[:, 1].astype(float),
        }
    )
    if fit is not None:
        theta, total_var = ("theta", "theta_total")
        if fit_estimand(fit) == "test-set":
            theta, total_var = ("theta_test", "theta_total_test")
        bayes = _posterior_columns(fit, theta, ci_prob, "bayes_difference", pairs)
        frame = frame.merge(bayes, on=["pair", "stratum"], how="left")
        if total_var in fit.posterior.data_vars:
            total = _posterior_columns(fit, total_var, ci_prob, "bayes_difference", pairs)
            total["stratum"] = TOTAL_LABEL
            for col in frame.columns:
                if col not in total:
                    total[col] = np.nan
            frame = pd.concat([frame, total[frame.columns]], ignore_index=True)
    if pairs is not None:  # many systems: say which comparison each row is
        best = len(counts.systems) - 1  # the first K - 1 pairs: the best against each other
        kind = {p: _WITH_BEST if i < best else _NEIGHBOURS for i, (_, _, p) in enumerate(labels)}
        frame.insert(1, "comparison", frame["pair"].map(kind))
    return frame, freq


def youden_difference_table(counts, alpha, fit, ci_prob, pairs=None) -> pd.DataFrame:
    """ΔJ per pair and stratum: Newcombe (closed form) and, with a fit, Bayesian."""
    labels = _pairs(counts, pairs)
    position = {s: i for i, s in enumerate(counts.systems)}
    ia = np.array([position[a] for a, _, _ in labels], dtype=int)
    ib = np.array([position[b] for _, b, _ in labels], dtype=int)
    ds = counts.dataset
    cal = {f: ds[f].transpose("system", "stratum").values for f in _CAL}
    valid = np.minimum.reduce([cal[f][x] for x in (ia, ib) for f in ("m0", "m1")]) > 0
    columns = {}
    if valid.any():
        args = [np.where(valid, cal[f][x], 1) for x in (ia, ib) for f in _CAL]
        d = youden_difference(*args, alpha=alpha, method="newcombe")
        for key, v in (("", d.estimate), ("_lower", d.lower), ("_upper", d.upper)):
            columns[f"closed_form{key}"] = np.where(valid, np.asarray(v, dtype=float), np.nan)
    else:
        for key in ("", "_lower", "_upper"):
            columns[f"closed_form{key}"] = np.full(valid.shape, np.nan)
    n_strata = len(counts.strata)
    frame = pd.DataFrame(
        {
            "pair": np.repeat(np.asarray([p for _, _, p in labels], dtype=object), n_strata),
            "stratum": np.tile(np.asarray(counts.strata, dtype=object), len(labels)),
            **{k: v.ravel() for k, v in columns.items()},
        }
    )
    if fit is not None and "system" in fit.posterior["youden"].dims:
        bayes = _posterior_columns(fit, "youden", ci_prob, "bayes_youden", pairs)
        bayes = bayes.drop(columns="prob_greater")
        if "stratum" not in fit.posterior["youden"].dims:
            frame = frame.merge(bayes.drop(columns="stratum"), on="pair", how="left")
        else:
            frame = frame.merge(bayes, on=["pair", "stratum"], how="left")
    return frame


def add_bootstrap_and_bias(frame, diag) -> pd.DataFrame:
    """Add judge_diagnostics' bootstrap ΔJ interval and Fiedler App. C shared-design bias."""
    frame = frame.copy()
    at_pair = {p: i for i, p in enumerate(diag["pair"].values.tolist())}
    at_stratum = {s: i for i, s in enumerate(diag["stratum"].values.tolist())}
    rows = [(at_pair.get(p), at_stratum.get(s)) for p, s in zip(frame["pair"], frame["stratum"],
                                                                strict=True)]  # fmt: skip
    found = np.array([p is not None and s is not None for p, s in rows], dtype=bool)
    index = (np.array([r[0] or 0 for r in rows], dtype=int),
             np.array([r[1] or 0 for r in rows], dtype=int))  # fmt: skip
    boot = diag["delta_youden_bootstrap_ci"].transpose("pair", "stratum", "ci_bound").values
    for col, values in (
        ("bootstrap", diag["delta_youden"].transpose("pair", "stratum").values),
        ("bootstrap_lower", boot[..., 0]),
        ("bootstrap_upper", boot[..., 1]),
        ("shared_bias", diag["shared_bias"].transpose("pair", "stratum").values),
    ):
        frame[col] = np.where(found, values[index], np.nan) if rows else np.nan
    first = ["pair", "stratum", "closed_form", "closed_form_lower", "closed_form_upper"]
    first += ["bootstrap", "bootstrap_lower", "bootstrap_upper"]
    return frame[first + [c for c in frame.columns if c not in first and c != "shared_bias"]
                 + ["shared_bias"]]  # fmt: skip


# ----------------------------------------------------------------------------- model checks


def ppc_table(check, ci_prob: float, counts: JudgeCounts) -> pd.DataFrame:
    """One row per observed count: variable, system (or joint verdict pattern), stratum.

    The paired model's ``k_unshared`` (test items outside the joint table) is kept only where a
    system has such items; its rows are trivial (always 0) otherwise.
    """
    lo, hi = (1 - ci_prob) / 2, (1 + ci_prob) / 2
    unshared = None
    if counts.has_joint:
        shared = counts.joint.sum("pattern")
        unshared = (counts.dataset["n"] - shared).transpose("system", "stratum")
    frames = []
    for var in check.p_value.data_vars:
        p = check.p_value[var]
        obs = check.observed[var].broadcast_like(p).transpose(*p.dims)
        frame = p.rename("p_value").to_dataframe().reset_index()
        frame["observed"] = obs.values.ravel()
        if "pattern" in frame:  # the joint verdict table: one row per pattern of verdicts
            frame["system"] = "pattern " + frame["pattern"].astype(str)
        if var == "k_unshared" and unshared is not None:
            keep = [
                int(unshared.sel(system=a, stratum=b)) > 0
                for a, b in zip(frame["system"], frame["stratum"], strict=True)
            ]
            frame = frame[keep]
        label = pd.Series(var, index=frame.index)
        if "repeats" in frame:  # an item-effect cluster table: one row per (r, j) cell
            keys = [d for d in ("system", "stratum", "label", "repeats") if d in frame]
            frame = frame[frame.groupby(keys)["observed"].transform("sum") > 0]
            truth = "truth " + frame["label"].astype(str) + ", " if "label" in frame else ""
            label = (
                var + " [" + truth + "items judged " + frame["repeats"].astype(str)
                + "× with " + frame["positives"].astype(str) + " correct]"
            )  # fmt: skip
        frame.insert(0, "variable", label)
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    for dim in ("system", "stratum"):
        if dim not in out:
            out[dim] = "(shared)"
        out[dim] = out[dim].where(out[dim].notna(), "(shared)")
    out = out[["variable", "system", "stratum", "observed", "p_value"]]
    out["outside"] = (out["p_value"] < lo) | (out["p_value"] > hi)
    return out


# ----------------------------------------------------------------------------- bottom line


def bottom_line_table(
    counts, fit, theta: pd.DataFrame, freq, ci_prob: float, total: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Return the systems of each stratum best first, with θ and how sure each step is.

    θ is the fit's posterior mean with its equal-tailed interval (the ``bayes`` columns of
    the θ table), or without a fit the corrected closed form (``corrected``). Each row also
    holds Δθ to the next system in rank (``next_difference``, with its interval): with a fit
    the posterior mean and ETI of the draw-by-draw difference, and ``prob_greater``
    P(θ_this > θ_next); without one, the frequentist Δθ of the report's comparison
    (:func:`bayesjudge.compare.compare`, ``freq``; NaN where that pair was not compared).
    ``settled`` says whether that step is decided: P ≥ :data:`SETTLED_PROBABILITY` with a
    fit, the Δθ interval excluding 0 without; ``"—"`` for the last system or where nothing is
    known. Systems with no estimate come last, ranked ``"—"``. With a fit's θ over strata
    (``total``, the ``theta_total`` table) its ranking comes first, as stratum
    ``"all strata (θ_total)"``.
    ``BOTTOM_LINE_MAX_SYSTEMS`` rows per stratum; ``frame.attrs["hidden"]`` counts the rows
    left out, ``attrs["total"]`` whether the first rows rank θ over strata.
    """
    column = "bayes" if fit is not None else "corrected"
    draws = _theta_draws(fit, counts) if fit is not None else None
    freq_at = _freq_pairs(freq)
    groups = []
    if fit is not None and total is not None:
        var = "theta_total_test" if fit_estimand(fit) == "test-set" else "theta_total"
        at = fit.posterior[var].transpose("chain", "draw", "system")
        groups.append((TOTAL_LABEL, total, at, None))
    for stratum in counts.strata:
        part = theta[theta["stratum"] == stratum]
        groups.append((stratum, part, None if draws is None else draws.sel(stratum=stratum),
                       stratum))  # fmt: skip
    rows, hidden = [], 0
    for label, part, at, freq_stratum in groups:
        score = part[column].to_numpy(float)
        order = np.argsort(-np.where(np.isfinite(score), score, -np.inf), kind="stable")
        names = part["system"].to_numpy(object)[order]
        hidden += max(len(order) - BOTTOM_LINE_MAX_SYSTEMS, 0)
        for rank, position in enumerate(order[:BOTTOM_LINE_MAX_SYSTEMS]):
            row = {"rank": rank + 1, "system": names[rank], "stratum": label}
            for suffix in ("", "_lower", "_upper"):
                row[f"theta{suffix}"] = float(part[f"{column}{suffix}"].to_numpy(float)[position])
            if not np.isfinite(row["theta"]):
                row["rank"] = "—"  # no estimate, no place in the ranking (listed last)
            nxt = names[rank + 1] if rank + 1 < len(names) else None
            row.update(next_step(names[rank], nxt, at, freq_at, freq_stratum, ci_prob))
            rows.append(row)
    frame = pd.DataFrame(rows)
    if fit is None:
        frame = frame.drop(columns="prob_greater")
    if len(groups) == 1:
        frame = frame.drop(columns="stratum")
    theta_header = (
        "Bayesian θ: mean [ETI]" if fit is not None else theta.attrs["headers"]["corrected"]
    )
    rule = f"P ≥ {SETTLED_PROBABILITY:g}" if fit is not None else "interval excludes 0"
    frame.attrs.update(
        hidden=hidden,
        total=groups[0][0] is TOTAL_LABEL,  # the first rows rank θ over strata
        headers={"theta": theta_header, "next_difference": "Δθ to the next [interval]",
                 "prob_greater": "P(above the next)", "settled": f"settled ({rule})"},
    )  # fmt: skip
    return frame


def _theta_draws(fit, counts):
    """Return the fit's θ draws, (chain, draw, system, stratum), over every group."""
    draws = fit.posterior["theta_test" if fit_estimand(fit) == "test-set" else "theta"]
    like = counts.dataset["n"]
    return draws.broadcast_like(like).transpose("chain", "draw", "system", "stratum")


def _freq_pairs(freq) -> dict:
    """``{(first, second): that pair's rows}`` of a ``compare`` result, by its coords.

    By the coords, never by the ``"a - b"`` label: a system may be called ``"x - y"``.
    """
    if freq is None:
        return {}
    first, second = freq["first"].values.tolist(), freq["second"].values.tolist()
    return {(a, b): freq.isel(pair=i) for i, (a, b) in enumerate(zip(first, second, strict=True))}


def next_step(this, nxt, draws, freq_at, stratum, ci_prob) -> dict:
    """Δθ from ``this`` system to the next in rank, P(θ_this > θ_next) and whether settled.

    ``draws`` are the group's θ draws (chain, draw, system) with a fit, else None: then the
    frequentist Δθ of ``freq_at`` in ``stratum`` (None: none is known, e.g. over strata).
    """
    out = {"next_difference": np.nan, "next_difference_lower": np.nan,
           "next_difference_upper": np.nan, "prob_greater": np.nan, "settled": "—"}  # fmt: skip
    if nxt is None:
        return out
    if draws is not None:
        diff = (draws.sel(system=this) - draws.sel(system=nxt)).values.ravel()
        if not np.isfinite(diff).all():
            return out
        tail = (1 - ci_prob) / 2
        lower, upper = np.quantile(diff, [tail, 1 - tail])
        prob = float(np.mean(diff > 0))
        out.update(next_difference=float(diff.mean()), next_difference_lower=float(lower),
                   next_difference_upper=float(upper), prob_greater=prob,
                   settled="yes" if prob >= SETTLED_PROBABILITY else "no")  # fmt: skip
        return out
    if stratum is None:
        return out
    if (this, nxt) in freq_at:
        r, sign = freq_at[(this, nxt)], 1.0
    elif (nxt, this) in freq_at:
        r, sign = freq_at[(nxt, this)], -1.0
    else:
        return out
    r = r.sel(stratum=stratum)
    est = sign * float(r["estimate"])
    lo, hi = sorted(sign * float(v) for v in r["ci"].values)
    if np.isfinite(est) and np.isfinite(lo):
        out.update(next_difference=est, next_difference_lower=lo, next_difference_upper=hi,
                   settled="yes" if lo > 0 else "no")  # fmt: skip
    return out


# ----------------------------------------------------------------------------- diagnoses


@dataclass
class _Record:
    """A diagnosis from an estimator's warning (same fields as check_comparison's records)."""

    code: str
    level: str
    message: str


def diagnosis_level(record) -> str:
    return str(getattr(record, "level", "warning"))


def diagnoses(counts, fit, alpha, target_width, random_seed, notes, freq=None, pairs=None):
    """Return check_comparison's records (not emitted) and judge_diagnostics' Dataset.

    When the diagnostics cannot run, say why in ``notes`` and return ``([], None)``.
    """
    try:
        labels = None if pairs is None else [(a, b) for a, b, _ in _pairs(counts, pairs)]
        diag = judge_diagnostics(counts, fit, alpha=alpha, random_seed=random_seed, pairs=labels)
        records = list(
            check_comparison(
                counts,
                fit,
                target_width=target_width,
                alpha=alpha,
                warn=False,
                random_seed=random_seed,
                differences=freq,
                diagnostics=diag,
            )
        )
    except ValueError as err:
        notes.append(["The judge diagnostics could not run: ", Plain(err)])
        return [], None
    return records, diag


def diagnoses_table(records) -> pd.DataFrame:
    """Return the diagnoses as rows ``code``, ``level``, ``message``."""
    return pd.DataFrame(
        [
            {"code": getattr(r, "code", ""), "level": diagnosis_level(r), "message": r.message}
            for r in records
        ],
        columns=["code", "level", "message"],
    )


# ----------------------------------------------------------------------------- settings


def reproducibility_settings(
    counts, fit, alpha, comparison, freq, random_seed, target_width, theta=None
) -> dict:
    """Return the reproducibility block: versions, date, alpha, methods, seeds, model.

    ``theta`` is the θ table (:func:`theta_table`), whose attrs name the corrected estimator
    and the estimand; without it, Lang–Reiczigel and the population θ are assumed.
    """
    attrs = {} if theta is None else theta.attrs
    method = attrs.get("method", "lang-reiczigel")
    corrected = _SETTINGS_TEXT.get(method, f"corrected θ̂ (bayesjudge.estimate(method={method!r}))")
    human = (
        "; human-only baseline m1/(m0 + m1) with Wilson interval"
        if counts.design == "random"
        else ""
    )
    naive = (
        "naive p̂ = Σk/Σr with a cluster-robust Wilson interval (cluster_wilson)"
        if counts.has_clusters
        else "naive p̂ with Wilson interval"
    )
    out = {
        "bayesjudge version": __version__,
        "date (UTC)": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M:%S"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "interval probability (1 - alpha)": f"{1 - alpha:g}",
        "labelling design": counts.design,
        "estimand": attrs.get("estimand", "population"),
        "closed forms": f"{naive}; {corrected}{human}; q0, q1 Wilson; J, ΔJ Newcombe"
        + ("; q0, q1, J on effective counts" if counts.calibration_clusters is not None else ""),
        "report random_seed": random_seed,
    }
    if comparison is not None:
        out["frequentist comparison"] = (
            f"bayesjudge.compare(method={comparison['method']!r}, "
            f"calibration={comparison['calibration']!r}, n_resamples={comparison['n_resamples']}, "
            f"random_seed={comparison['random_seed']})"
        )
        out["frequentist method"] = comparison["method"]
        if freq is not None:
            out["frequentist comparison paired"] = bool(freq.attrs.get("paired", False))
    if target_width is not None:
        out["target interval width"] = target_width
    if fit is None:
        out["Bayesian fit"] = "not run"
    else:
        c = fit.config
        out["Bayesian fit"] = (
            (f"model={c['model']!r}, " if c.get("model") else "")
            + f"method={c.get('method', 'mcmc')!r}, calibration={c['calibration']!r}, "
            f"pool_over={c.get('pool_over')}, aggregate={c.get('aggregate')!r}"
            + (f", paired={c['paired']}" if "paired" in c else "")
        )
        out["priors"] = c.get("priors")
        out["sampler"] = (
            f"exact posterior, {c.get('chains')} × {c.get('draws')} independent draws"
            if c.get("method") == "exact"
            else f"{c.get('sampler')}, {c.get('chains')} chains × {c.get('draws')} draws, "
            f"tune {c.get('tune')}, target_accept {c.get('target_accept')}"
        )
        out["fit random_seed"] = c.get("random_seed")
        version = _installed_version("pymc")
        if version is not None:
            out["pymc"] = version
    return out


def settings_table(settings: dict) -> pd.DataFrame:
    """Return the reproducibility block as rows ``setting``, ``value``."""
    return pd.DataFrame({"setting": list(settings), "value": [str(v) for v in settings.values()]})


def _installed_version(distribution: str) -> str | None:
    """Return the installed version of ``distribution`` without importing it (None if absent)."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover
        return None
