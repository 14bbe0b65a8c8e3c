"""The K-category report's numbers: one tidy table per topic, copied from what computes them.

The closed forms come from :func:`bayesjudge.categorical_estimate.estimate_categorical` and
:func:`~bayesjudge.categorical_estimate.compare_categorical` (what ``bj.estimate`` and
``bj.compare`` call for a :class:`~bayesjudge.data.CategoricalCounts`), the naive shares'
Wilson intervals from :func:`bayesjudge.core.naive.naive`; a fit's numbers from its own
methods (``summary``, ``compare``, ``score_draws``, ``ppc``, ``diagnostics``). Nothing here
imports the Bayesian layer. Estimates sit in a column ``c`` with their interval in ``c_lower``
and ``c_upper``, as in the binary report's tables.

Category labels are user data. Long tables hold them in a ``category`` or ``truth`` column
(escaped when rendered). Wide tables (a column per category) use the keys ``c0``, ``c1``, ...
and name the categories in ``attrs["headers"]`` only where the name needs no escaping in
Markdown or HTML (:func:`category_headers`); otherwise the header is the category's position
and the section lists the names, escaped.
"""

from __future__ import annotations

import html
import warnings
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import pandas as pd
import xarray as xr

from bayesjudge._text import markdown_escape
from bayesjudge.categorical_estimate import compare_categorical, estimate_categorical
from bayesjudge.core.kernels import LOW_J_THRESHOLD
from bayesjudge.core.naive import naive
from bayesjudge.report.tables import BOTTOM_LINE_MAX_SYSTEMS, SETTLED_PROBABILITY, next_step
from bayesjudge.warnings import BayesJudgeWarning

__all__ = [
    "CategoricalRecord",
    "bottom_line_table",
    "calibration_table",
    "categories_table",
    "category_headers",
    "closed_forms",
    "conditioning_table",
    "confusion_table",
    "difference_table",
    "ppc_table",
    "score_table",
    "shares_table",
    "verdict_table",
]

#: Short names of the closed-form intervals (``estimate_categorical``'s ``method``) in headers.
INTERVAL_LABELS = {"delta": "score-type delta", "wald": "Wald", "bootstrap": "bootstrap"}

_DIFFERENCE_LABELS = {"delta": "Wald, delta method", "bootstrap": "bootstrap"}

#: The label of a dim over which a calibration set (or a fit's confusion) is shared.
SHARED_LABEL = "(shared)"


@dataclass
class CategoricalRecord:
    """A diagnosis of the K-category report: ``code`` (warning class or check), level, text."""

    code: str
    level: str
    message: str


def column_keys(k: int) -> list[str]:
    """Return the keys of the per-category columns of the wide tables: ``c0 … c{K-1}``."""
    return [f"c{j}" for j in range(k)]


def _shown_as_is(name: str) -> bool:
    """Whether a category's name reads the same, unescaped, in Markdown and in HTML."""
    return bool(name.strip()) and markdown_escape(name) == name == html.escape(name)


def category_headers(categories, prefix: str = "") -> tuple[dict[str, str], bool]:
    """Return the headers of the per-category columns, and whether they are positions.

    A header is the category's name in quotes (``“A”``, after ``prefix``) when every name
    reads the same unescaped in Markdown and HTML and the headers are distinct; otherwise
    every header is the category's position (``category 1``), and the section names them.

    Examples
    --------
    >>> category_headers(["A", "tie"])
    ({'c0': '“A”', 'c1': '“tie”'}, False)
    >>> category_headers(["<b>", "x"], prefix="verdict ")
    ({'c0': 'verdict 1', 'c1': 'verdict 2'}, True)
    """
    names = [str(c) for c in categories]
    keys = column_keys(len(names))
    if all(_shown_as_is(n) for n in names) and len(set(names)) == len(names):
        return {k: f"{prefix}“{n}”" for k, n in zip(keys, names, strict=True)}, False
    label = prefix or "category "
    return {k: f"{label}{j + 1}" for j, k in enumerate(keys)}, True


def _group_rows(counts):
    """(system, stratum) labels of every group, systems outer, as two object arrays."""
    systems, strata = counts.systems, counts.strata
    return (
        np.repeat(np.asarray(systems, dtype=object), len(strata)),
        np.tile(np.asarray(strata, dtype=object), len(systems)),
    )


def _groups_values(da: xr.DataArray, *tail: str) -> np.ndarray:
    """Values with dims (system, stratum, *tail) flattened to (groups, *tail)."""
    values = da.transpose("system", "stratum", *tail).values
    return values.reshape(-1, *values.shape[2:])


# ----------------------------------------------------------------------------- counts


def verdict_table(counts) -> pd.DataFrame:
    """Test verdict counts per group: ``n`` and one column per category (``c0`` …)."""
    system, stratum = _group_rows(counts)
    test = _groups_values(counts.ds["test"], "category")
    frame = pd.DataFrame({"system": system, "stratum": stratum, "n": test.sum(-1)})
    for j, key in enumerate(column_keys(counts.K)):
        frame[key] = test[:, j]
    frame.attrs["headers"] = category_headers(counts.categories)[0]
    return frame


def calibration_table(counts) -> pd.DataFrame:
    """Calibration counts per group and true category (rows = truth, columns = verdict).

    A set shared over a dim (:attr:`CategoricalCounts.calibration_shared_over`) is shown
    once, that dim labelled ``"(shared)"``.
    """
    shared = tuple(counts.calibration_shared_over)
    cal = counts.ds["calibration"].transpose("system", "stratum", "truth", "verdict")
    cal = cal.isel({d: [0] for d in shared})
    rows = []
    for i, system in enumerate(cal["system"].values):
        for j, stratum in enumerate(cal["stratum"].values):
            for t, truth in enumerate(counts.categories):
                values = cal.values[i, j, t]
                row = {
                    "system": SHARED_LABEL if "system" in shared else system,
                    "stratum": SHARED_LABEL if "stratum" in shared else stratum,
                    "truth": truth,
                    "m": int(values.sum()),
                }
                row.update(zip(column_keys(counts.K), (int(v) for v in values), strict=True))
                rows.append(row)
    frame = pd.DataFrame(rows)
    frame.attrs["headers"] = {
        **category_headers(counts.categories, "verdict ")[0],
        "truth": "truth (human)",
        "m": "m (labelled)",
    }
    return frame


# ----------------------------------------------------------------------------- closed forms


def closed_forms(
    counts, scores, *, method, alpha, calibration, n_resamples, random_seed, collected
) -> xr.Dataset:
    """``estimate_categorical`` of the counts; its warnings are appended to ``collected``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", BayesJudgeWarning)
        out = estimate_categorical(
            counts,
            method=method,
            alpha=alpha,
            scores=scores,
            calibration=calibration,
            n_resamples=n_resamples,
            random_seed=random_seed,
        )
    collected += [w for w in caught if issubclass(w.category, BayesJudgeWarning)]
    return out


def closed_form_differences(
    counts, scores, pairs, *, method, alpha, calibration, n_resamples, random_seed, collected
) -> xr.Dataset:
    """``compare_categorical`` of the score; warnings are appended to ``collected``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", BayesJudgeWarning)
        out = compare_categorical(
            counts,
            scores=scores,
            method=method,
            alpha=alpha,
            calibration=calibration,
            n_resamples=n_resamples,
            random_seed=random_seed,
            pairs=pairs,
        )
    collected += [w for w in caught if issubclass(w.category, BayesJudgeWarning)]
    return out


def _interval(ci: xr.DataArray, *tail: str) -> tuple[np.ndarray, np.ndarray]:
    lower = _groups_values(ci.sel(ci_bound="lower", drop=True), *tail)
    upper = _groups_values(ci.sel(ci_bound="upper", drop=True), *tail)
    return lower, upper


def _naive_shares(counts, alpha: float):
    """p̂ per group and category with the Wilson interval; NaN where a group has no items."""
    test = _groups_values(counts.ds["test"], "category")
    n = np.broadcast_to(test.sum(-1, keepdims=True), test.shape)
    out = np.full((3, *test.shape), np.nan)
    has = n > 0
    if has.any():
        out[:, has] = np.asarray(naive(test[has], n[has], alpha=alpha, method="wilson"))
    return out


def categories_table(counts, est: xr.Dataset, summary, alpha: float) -> pd.DataFrame:
    """One row per group and category: naive p̂ [Wilson], corrected θ̂ [interval], θ̃, Bayesian.

    ``raw`` is θ̃ = (Ĉᵀ)⁻¹ p̂ before the projection onto the simplex, ``projected`` whether
    the projection moved that group; ``bayes`` the posterior mean and ETI of ``summary``
    (``fit.summary``), when given.
    """
    k = counts.K
    system, stratum = _group_rows(counts)
    frame = pd.DataFrame(
        {
            "system": np.repeat(system, k),
            "stratum": np.repeat(stratum, k),
            "category": np.tile(np.asarray(counts.categories, dtype=object), len(system)),
        }
    )
    p, p_lo, p_hi = _naive_shares(counts, alpha)
    frame["naive"], frame["naive_lower"], frame["naive_upper"] = (
        p.ravel(),
        p_lo.ravel(),
        p_hi.ravel(),
    )
    lower, upper = _interval(est["ci"], "category")
    frame["corrected"] = _groups_values(est["estimate"], "category").ravel()
    frame["corrected_lower"], frame["corrected_upper"] = lower.ravel(), upper.ravel()
    frame["raw"] = _groups_values(est["estimate_raw"], "category").ravel()
    frame["projected"] = np.repeat(_groups_values(est["projected"]).ravel(), k)
    if summary is not None:
        frame["bayes"] = _groups_values(summary["theta"], "category").ravel()
        lower, upper = _interval(summary["theta_ci"], "category")
        frame["bayes_lower"], frame["bayes_upper"] = lower.ravel(), upper.ravel()
    frame.attrs["headers"] = {
        "naive": "naive p̂ [Wilson] (not θ)",
        "corrected": f"corrected θ̂ [{INTERVAL_LABELS[est.attrs['method']]}]",
        "raw": "θ̃ before projection",
        "projected": "projected onto the simplex",
        "bayes": "Bayesian θ: mean [ETI]",
    }
    return frame


def score_table(counts, est: xr.Dataset, summary, values: np.ndarray) -> pd.DataFrame:
    """Return the mean score per group: naive Σ v p̂, corrected Σ v θ̂, Bayesian [ETI]."""
    system, stratum = _group_rows(counts)
    p_hat = _groups_values(counts.p_hat(), "category")
    frame = pd.DataFrame({"system": system, "stratum": stratum, "naive": p_hat @ values})
    frame["corrected"] = _groups_values(est["score"])
    frame["corrected_lower"], frame["corrected_upper"] = _interval(est["score_ci"])
    if summary is not None:
        frame["bayes"] = _groups_values(summary["score"])
        frame["bayes_lower"], frame["bayes_upper"] = _interval(summary["score_ci"])
    frame.attrs["headers"] = {
        "naive": "naive Σ v·p̂ (not corrected)",
        "corrected": f"corrected score [{INTERVAL_LABELS[est.attrs['method']]}]",
        "bayes": "Bayesian score: mean [ETI]",
    }
    return frame


def shares_table(categories_frame: pd.DataFrame, column: str, categories) -> pd.DataFrame:
    """Return the shares of one column of :func:`categories_table`, one row per group."""
    k = len(categories)
    base = categories_frame.iloc[::k]
    frame = pd.DataFrame(
        {"system": base["system"].to_numpy(object), "stratum": base["stratum"].to_numpy(object)}
    )
    for j, key in enumerate(column_keys(k)):
        rows = categories_frame.iloc[j::k]
        for suffix in ("", "_lower", "_upper"):
            frame[f"{key}{suffix}"] = rows[f"{column}{suffix}"].to_numpy(float)
    frame.attrs["headers"] = category_headers(categories)[0]
    return frame


# ----------------------------------------------------------------------------- the judge


def _wilson_rows(cal: np.ndarray, alpha: float):
    """Row shares of calibration tables (..., truth, verdict) with Wilson intervals per cell."""
    m = np.broadcast_to(cal.sum(-1, keepdims=True), cal.shape)
    out = np.full((3, *cal.shape), np.nan)
    has = m > 0
    if has.any():
        out[:, has] = np.asarray(naive(cal[has], m[has], alpha=alpha, method="wilson"))
    return out


def confusion_table(counts, summary, alpha: float) -> pd.DataFrame:
    """Ĉ[truth, verdict] per group: closed form (Wilson per cell) and, with a fit, Bayesian.

    One row per group and true category, a column per verdict (``c0`` …). A calibration set
    shared over a dim is shown once (that dim ``"(shared)"``); so is a fit's confusion that
    is shared over a dim (its ``pool_over``).
    """
    cal_frame = calibration_table(counts)
    k = counts.K
    keys = column_keys(k)
    cells = cal_frame[keys].to_numpy(float)
    est, lower, upper = _wilson_rows(cells, alpha)
    frame = cal_frame[["system", "stratum", "truth", "m"]].copy()
    frame.insert(3, "method", "closed form")
    for j, key in enumerate(keys):
        frame[key], frame[f"{key}_lower"], frame[f"{key}_upper"] = (
            est[:, j],
            lower[:, j],
            upper[:, j],
        )
    if summary is not None:
        frame = pd.concat([frame, _bayes_confusion(summary, counts, keys)], ignore_index=True)
    frame.attrs["headers"] = {
        **category_headers(counts.categories, "verdict ")[0],
        "truth": "truth (human)",
        "m": "m (labelled)",
    }
    return frame


def _bayes_confusion(summary, counts, keys) -> pd.DataFrame:
    """Return the fit's posterior confusion (mean and ETI) per group of its own dims."""
    mean, ci = summary["confusion"], summary["confusion_ci"]
    groups = [d for d in ("system", "stratum") if d in mean.dims]
    mean = mean.transpose(*groups, "truth", "verdict")
    ci = ci.transpose(*groups, "truth", "verdict", "ci_bound")
    labels = {"system": counts.systems, "stratum": counts.strata}
    rows = []
    for index in np.ndindex(*(mean.sizes[d] for d in groups)):
        at = dict(zip(groups, index, strict=True))
        for t, truth in enumerate(counts.categories):
            row = {d: labels[d][at[d]] if d in at else SHARED_LABEL for d in ("system", "stratum")}
            row.update(truth=truth, method="Bayesian", m=np.nan)
            for j, key in enumerate(keys):
                row[key] = float(mean.values[(*index, t, j)])
                row[f"{key}_lower"], row[f"{key}_upper"] = (
                    float(v) for v in ci.values[(*index, t, j)]
                )
            rows.append(row)
    return pd.DataFrame(rows)


def conditioning_table(counts, est: xr.Dataset) -> pd.DataFrame:
    """Per group: det Ĉ, its smallest singular value on the sum-zero subspace, 1/σ_min, verdict."""
    system, stratum = _group_rows(counts)
    frame = pd.DataFrame({"system": system, "stratum": stratum})
    for name in ("determinant", "sigma_min", "amplification"):
        frame[name] = _groups_values(est[name]).astype(float)
    smin = frame["sigma_min"].to_numpy(float)
    status = np.where(smin < LOW_J_THRESHOLD, "ill-conditioned", "fine")
    status = np.where(np.isnan(smin), "no full calibration", status)
    status = np.where(
        np.isfinite(smin) & (smin <= 0) | np.isinf(frame["amplification"]), "singular", status
    )
    frame["condition"] = status
    frame.attrs["headers"] = {
        "determinant": "det Ĉ (J at K = 2)",
        "sigma_min": "σ_min (|J| at K = 2)",
        "amplification": "error amplification 1/σ_min",
        "condition": f"condition (σ_min < {LOW_J_THRESHOLD:g}: ill-conditioned)",
    }
    return frame


# ----------------------------------------------------------------------------- comparisons


def difference_table(freq, bayes) -> pd.DataFrame:
    """Δ score of each pair and stratum: frequentist [interval], Bayesian [ETI], P(a > b)."""
    source = freq if freq is not None else bayes
    pairs, strata = source["pair"].values, source["stratum"].values
    frame = pd.DataFrame(
        {
            "pair": np.repeat(pairs.astype(object), len(strata)),
            "stratum": np.tile(strata.astype(object), len(pairs)),
        }
    )
    for name, result, var in (
        ("frequentist", freq, "estimate"),
        ("bayes_difference", bayes, "mean"),
    ):
        if result is None:
            continue
        at = result[var].transpose("pair", "stratum")
        ci = result["ci"].transpose("pair", "stratum", "ci_bound").values.reshape(-1, 2)
        frame[name] = at.values.ravel()
        frame[f"{name}_lower"], frame[f"{name}_upper"] = ci[:, 0], ci[:, 1]
    if bayes is not None:
        frame["prob_greater"] = bayes["prob_greater"].transpose("pair", "stratum").values.ravel()
    frame.attrs["headers"] = {
        "frequentist": f"Δ score [{_DIFFERENCE_LABELS[freq.attrs['method']]}]"
        if freq is not None
        else "frequentist Δ",
        "bayes_difference": "Bayesian Δ score: mean [ETI]",
    }
    return frame


def neighbour_pairs(frame: pd.DataFrame, column: str, systems) -> list[tuple]:
    """Return the pairs of systems next to each other in rank by ``column``, any stratum."""
    pairs = []
    for _, rows in frame.groupby("stratum", sort=False):
        order = _ranked(rows[column].to_numpy(float))
        names = rows["system"].to_numpy(object)[order]
        pairs += list(pairwise(names))
    known = set()
    out = []
    for a, b in pairs:
        if (a, b) not in known and (b, a) not in known:
            known.add((a, b))
            out.append((a, b))
    return out


def _ranked(score: np.ndarray) -> np.ndarray:
    """Positions best first (stable); groups without an estimate last."""
    return np.argsort(-np.where(np.isfinite(score), score, -np.inf), kind="stable")


def bottom_line_table(scores_frame, draws, freq, ci_prob: float) -> pd.DataFrame:
    """Return each stratum's systems best first by score, with Δ to the next and how sure.

    With a fit (``draws``: the score draws, dims chain, draw, system, stratum) the score is
    the posterior mean [ETI], Δ to the next the mean and ETI of the draw-by-draw difference
    and ``prob_greater`` P(score_this > score_next); a step is settled when it reaches
    :data:`~bayesjudge.report.tables.SETTLED_PROBABILITY`. Without one the corrected score
    and the closed-form Δ of ``freq`` (``compare_categorical``), settled when its interval
    excludes 0. At most ``BOTTOM_LINE_MAX_SYSTEMS`` rows per stratum (``attrs["hidden"]``).
    """
    column = "bayes" if draws is not None else "corrected"
    freq_at = {}
    if freq is not None:
        for i, (a, b) in enumerate(zip(freq["first"].values, freq["second"].values, strict=True)):
            freq_at[(a, b)] = freq.isel(pair=i)
    rows, hidden = [], 0
    for stratum, part in scores_frame.groupby("stratum", sort=False):
        order = _ranked(part[column].to_numpy(float))
        names = part["system"].to_numpy(object)[order]
        hidden += max(len(order) - BOTTOM_LINE_MAX_SYSTEMS, 0)
        for rank, position in enumerate(order[:BOTTOM_LINE_MAX_SYSTEMS]):
            row = {"rank": rank + 1, "system": names[rank], "stratum": stratum}
            for suffix in ("", "_lower", "_upper"):
                row[f"score{suffix}"] = float(part[f"{column}{suffix}"].to_numpy(float)[position])
            if not np.isfinite(row["score"]):
                row["rank"] = "—"  # no estimate, no place in the ranking (listed last)
            nxt = names[rank + 1] if rank + 1 < len(names) else None
            at = None if draws is None else draws.sel(stratum=stratum)
            row.update(next_step(names[rank], nxt, at, freq_at, stratum, ci_prob))
            rows.append(row)
    frame = pd.DataFrame(rows)
    if draws is None:
        frame = frame.drop(columns="prob_greater")
    rule = f"P ≥ {SETTLED_PROBABILITY:g}" if draws is not None else "interval excludes 0"
    frame.attrs.update(
        hidden=hidden,
        headers={
            "score": "Bayesian score: mean [ETI]"
            if draws is not None
            else "corrected score [interval]",
            "next_difference": "Δ to the next [interval]",
            "prob_greater": "P(above the next)",
            "settled": f"settled ({rule})",
        },
    )
    return frame


# ----------------------------------------------------------------------------- model checks


def ppc_table(check, ci_prob: float) -> pd.DataFrame:
    """Per observed variable, group (and truth row): the chi-square discrepancy p and cell flags.

    ``discrepancy_p`` is the fit's ``P(T(rep) ≥ T(obs))`` (``ppc().discrepancy_p``); a group
    is flagged (``misfit``) when it is below ``(1 − ci_prob) / 2``. ``cells_outside`` counts
    the cells whose mid-p value (``ppc().p_value``) lies outside the central ``ci_prob``.
    """
    lo, hi = (1 - ci_prob) / 2, (1 + ci_prob) / 2
    frames = []
    for var in check.discrepancy_p.data_vars:
        disc = check.discrepancy_p[var]
        cell = check.p_value[var]
        last = check.observed[var].dims[-1]
        outside = ((cell < lo) | (cell > hi)).sum(last)
        observed = check.observed[var].sum(last)
        frame = disc.rename("discrepancy_p").to_dataframe().reset_index()
        frame["observed"] = observed.broadcast_like(disc).transpose(*disc.dims).values.ravel()
        frame["cells_outside"] = outside.broadcast_like(disc).transpose(*disc.dims).values.ravel()
        frame["cells"] = int(cell.sizes[last])
        frame.insert(0, "variable", var)
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    if "truth" not in out:
        out["truth"] = None
    out["truth"] = out["truth"].astype(object).where(out["truth"].notna(), "—")
    out = out[
        [
            "variable",
            "system",
            "stratum",
            "truth",
            "observed",
            "discrepancy_p",
            "cells_outside",
            "cells",
        ]
    ]
    out["misfit"] = out["discrepancy_p"] < lo
    out.attrs["headers"] = {
        "observed": "observed total",
        "discrepancy_p": "P(T(rep) ≥ T(obs))",
        "cells_outside": f"cells with mid-p outside the central {100 * ci_prob:g}%",
        "cells": "cells",
    }
    return out
