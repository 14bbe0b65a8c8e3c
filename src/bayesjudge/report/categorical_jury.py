"""The report of several judges' K-category verdicts (:class:`CategoricalJuryCounts`).

The K-category counterpart of :func:`~bayesjudge.report.jury.build_jury_report`: the share of
every true category per (system, stratum) from all judges together — the K-class Dawid–Skene
estimate and, with a fit, the Bayesian joint model's — beside the plurality vote (naive) and
the single judge whose own corrected interval is narrowest; the mean score when ``scores`` are
given; every judge's confusion matrix (from its labelled items, from Dawid–Skene and from the
fit), its accuracy and agreement with the humans (Cohen's κ, Gwet's AC1); the agreement
between judges; the posterior predictive check of conditional independence (with a fit). The
fit is used through ``fit.summary()``, ``fit.posterior``, ``fit.check_sampling()`` and
``fit.ppc()``: nothing here imports PyMC.
"""

from __future__ import annotations

import datetime as _dt
import io
import itertools
import json
import platform
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd

from bayesjudge._text import plain_label
from bayesjudge._version import __version__
from bayesjudge.categorical_estimate import score_vector
from bayesjudge.categorical_jury_estimate import categorical_jury_estimate
from bayesjudge.core._validation import check_alpha
from bayesjudge.core.naive import naive
from bayesjudge.data import CategoricalJuryCounts
from bayesjudge.diagnostics import caught_by_category, emit_caught
from bayesjudge.jury_estimate import jury_agreement
from bayesjudge.plots import plot_theta_forest
from bayesjudge.report.categorical_tables import category_headers, column_keys
from bayesjudge.report.document import Plain, Report, ReportSection
from bayesjudge.report.tables import settings_table
from bayesjudge.warnings import BayesJudgeWarning

__all__ = ["CATEGORICAL_JURY_SECTIONS", "build_categorical_jury_report"]

CATEGORICAL_JURY_SECTIONS = {
    "bottom_line": "The bottom line",
    "data": "1. Judges, items and verdict patterns",
    "judge": "2. Each judge's confusion matrix and accuracy",
    "agreement": "3. Agreement between judges and with the humans",
    "checks": "4. Are the judges conditionally independent?",
    "warnings": "5. Warnings and what to do",
    "methods": "6. Methods",
    "reproducibility": "7. Reproducibility",
}
#: Groups (system × stratum) drawn in the figures; the tables hold every group.
PANELS_MAX = 12
_METHOD_LABELS = {
    "jury": "Dawid–Skene (all judges)",
    "bayes": "Bayesian joint model",
    "plurality": "plurality vote (naive)",
    "single": "narrowest single judge",
}


def _groups(counts):
    return list(itertools.product(counts.systems, counts.strata))


def _bounds(ci) -> tuple[float, float]:
    return float(ci.sel(ci_bound="lower")), float(ci.sel(ci_bound="upper"))


def _whole(values) -> pd.Series:
    """Return counts as whole numbers, None ("—") where missing (floats would show 20.000)."""
    return pd.Series([None if pd.isna(v) else int(v) for v in values], dtype=object)


def _best_judges(counts, per_judge) -> dict:
    """Per group: the index of the judge whose own θ intervals are narrowest on average.

    -1 where no judge has a finite interval (no labelled items, or every judge singular).
    """
    width = (per_judge["ci"].sel(ci_bound="upper") - per_judge["ci"].sel(ci_bound="lower")).mean(
        "category", skipna=False
    )
    # A judge without an estimate (no labelled item of some truth) reports [0, 1]: not a width.
    width = width.where(per_judge["estimate"].notnull().all("category"))
    out = {}
    for s, r in _groups(counts):
        w = width.sel(system=s, stratum=r).transpose("judge").values
        out[(s, r)] = (
            int(np.argmin(np.where(np.isfinite(w), w, np.inf))) if np.isfinite(w).any() else -1
        )
    return out


def _theta_table(counts, jury, plurality, per_judge, best, bayes) -> pd.DataFrame:
    """One row per group and category: the jury, Bayesian, plurality and best single judge."""
    rows = []
    for (s, r), (k, category) in itertools.product(_groups(counts), enumerate(counts.categories)):
        at = {"system": s, "stratum": r}
        b = best[(s, r)]
        row = {
            **at,
            "category": category,
            "test_items": int(counts.test.sel(at).sum()),
            "labelled_items": int(counts.labelled.sel(at).sum()),
        }
        for name, ds in (("jury", jury), ("plurality", plurality)):
            one = ds.sel(at).isel(category=k)
            row[name] = float(one["estimate"])
            row[f"{name}_lower"], row[f"{name}_upper"] = _bounds(one["ci"])
        if bayes is not None:
            row["bayes"] = float(bayes["theta"].sel(at).isel(category=k))
            row["bayes_lower"], row["bayes_upper"] = _bounds(
                bayes["theta_ci"].sel(at).isel(category=k)
            )
        row["best_judge"] = counts.judges[b] if b >= 0 else None
        one = per_judge.sel(at).isel(category=k, judge=max(b, 0))
        row["single"] = float(one["estimate"]) if b >= 0 else np.nan
        lo, hi = _bounds(one["ci"]) if b >= 0 else (np.nan, np.nan)
        row["single_lower"], row["single_upper"] = lo, hi
        rows.append(row)
    table = pd.DataFrame(rows)
    table.attrs["headers"] = {
        "jury": "jury θ: Dawid–Skene [Wald]",
        "bayes": "jury θ: Bayesian mean [ETI]",
        "plurality": "plurality vote share [Wilson] (not θ)",
        "best_judge": "narrowest single judge",
        "single": "its own θ̂ [score-type delta]",
        "test_items": "test items",
        "labelled_items": "labelled items",
    }
    return table


def _posterior_score(fit, values, alpha):
    """Posterior mean and equal-tailed interval of Σ_k v_k θ_k from the fit's θ draws."""
    draws = (fit.posterior["theta"] * np.asarray(values)).sum("category")
    mean = draws.mean(("chain", "draw"))
    ci = draws.quantile([alpha / 2, 1 - alpha / 2], dim=("chain", "draw"))
    return mean, ci.rename(quantile="ci_bound").assign_coords(ci_bound=["lower", "upper"])


def _score_table(counts, jury, plurality, per_judge, best, fit, values, alpha) -> pd.DataFrame:
    """One row per group: the mean score of the jury, the fit, the plurality and the best judge."""
    bayes = None if fit is None else _posterior_score(fit, values, alpha)
    rows = []
    for s, r in _groups(counts):
        at = {"system": s, "stratum": r}
        row = dict(at)
        for name, ds in (("jury", jury), ("plurality", plurality)):
            row[name] = float(ds["score"].sel(at))
            row[f"{name}_lower"], row[f"{name}_upper"] = _bounds(ds["score_ci"].sel(at))
        if bayes is not None:
            row["bayes"] = float(bayes[0].sel(at))
            row["bayes_lower"], row["bayes_upper"] = _bounds(bayes[1].sel(at))
        b = best[(s, r)]
        row["best_judge"] = counts.judges[b] if b >= 0 else None
        one = per_judge.sel(at).isel(judge=max(b, 0))
        row["single"] = float(one["score"]) if b >= 0 else np.nan
        lo, hi = _bounds(one["score_ci"]) if b >= 0 else (np.nan, np.nan)
        row["single_lower"], row["single_upper"] = lo, hi
        rows.append(row)
    table = pd.DataFrame(rows)
    table.attrs["headers"] = {
        "jury": "jury score: Dawid–Skene [Wald]",
        "bayes": "jury score: Bayesian mean [ETI]",
        "plurality": "plurality vote score [Wilson, rescaled] (not corrected)",
        "best_judge": "narrowest single judge",
        "single": "its own score [score-type delta]",
    }
    return table


def _human_table(counts, agreement, jury, alpha) -> pd.DataFrame:
    """Per group and judge: accuracy on the labelled items, κ and AC1 with the humans."""
    rows = []
    for (s, r), judge in itertools.product(_groups(counts), counts.judges):
        at = {"system": s, "stratum": r}
        cal = counts.for_judge(judge).calibration.sel(at).transpose("truth", "verdict").values
        size = int(cal.sum())
        row = {**at, "judge": judge, "labelled_graded": size}
        if size > 0:
            res = naive(int(np.trace(cal)), size, alpha=alpha)
            row["accuracy"] = float(res.estimate)
            row["accuracy_lower"], row["accuracy_upper"] = float(res.lower), float(res.upper)
        else:
            row["accuracy"] = np.nan
        theta = jury["estimate"].sel(at).values
        diagonal = np.diagonal(jury["confusion_hat"].sel(at).sel(judge=judge).values)
        row["accuracy_jury"] = float(theta @ diagonal)
        one = agreement.sel(at).sel(judge=judge)
        for name in ("kappa", "ac1"):
            row[name] = float(one[f"{name}_human"])
            row[f"{name}_lower"], row[f"{name}_upper"] = _bounds(one[f"{name}_human_ci"])
        rows.append(row)
    table = pd.DataFrame(rows)
    table.attrs["headers"] = {
        "labelled_graded": "labelled items graded",
        "accuracy": "accuracy on the labelled items [Wilson]",
        "accuracy_jury": "accuracy Σ θ̂_t Ĉ_tt (Dawid–Skene)",
        "kappa": "Cohen's κ with the humans [Wald]",
        "ac1": "Gwet's AC1 with the humans [Wald]",
    }
    return table


def _confusion_table(counts, jury, summary) -> pd.DataFrame:
    """Every judge's confusion matrix per group: its labelled items, Dawid–Skene, the fit.

    One row per (group, judge, truth, source), a column per verdict. The labelled items'
    row shares are the judge's own calibration table (the stratified design's rows, or the
    random design's items of that human category).
    """
    keys = column_keys(counts.K)
    rows = []
    bayes = None
    if summary is not None:
        bayes = summary["confusion"]
        bayes_ci = summary["confusion_ci"]
    for (s, r), judge in itertools.product(_groups(counts), counts.judges):
        at = {"system": s, "stratum": r}
        cal = counts.for_judge(judge).calibration.sel(at).transpose("truth", "verdict").values
        ds = jury["confusion_hat"].sel(at).sel(judge=judge).transpose("truth", "verdict").values
        for t, truth in enumerate(counts.categories):
            base = {**at, "judge": judge, "truth": truth}
            m = cal[t].sum()
            labels = cal[t] / m if m > 0 else np.full(counts.K, np.nan)
            rows.append(
                {
                    **base,
                    "method": "labelled items",
                    "m": int(m),
                    **dict(zip(keys, labels, strict=True)),
                }
            )
            rows.append(
                {
                    **base,
                    "method": "Dawid–Skene",
                    "m": np.nan,
                    **dict(zip(keys, ds[t], strict=True)),
                }
            )
            if bayes is not None:
                sel = {d: v for d, v in {**at, "judge": judge}.items() if d in bayes.dims}
                mean = bayes.sel(sel).transpose("truth", "verdict").values[t]
                ci = bayes_ci.sel(sel).transpose("truth", "verdict", "ci_bound").values[t]
                row = {**base, "method": "Bayesian", "m": np.nan}
                for j, key in enumerate(keys):
                    row[key], row[f"{key}_lower"], row[f"{key}_upper"] = mean[j], *ci[j]
                rows.append(row)
    table = pd.DataFrame(rows)
    table["m"] = _whole(table["m"])
    table.attrs["headers"] = {
        **category_headers(counts.categories, "verdict ")[0],
        "truth": "truth (human)",
        "m": "labelled items of this truth",
        "method": "from",
    }
    return table


def _agreement_table(agreement) -> pd.DataFrame:
    """Cohen's κ and Gwet's AC1 of every pair of judges, per group."""
    columns = ["system", "stratum", "judge_a", "judge_b", "kappa", "ac1"]
    if "pair" not in agreement.dims:
        return pd.DataFrame(columns=columns)
    rows = []
    for s, r in itertools.product(agreement["system"].values, agreement["stratum"].values):
        for p in range(agreement.sizes["pair"]):
            one = agreement.isel(pair=p).sel(system=s, stratum=r)
            row = {"system": s, "stratum": r, "judge_a": one["judge_a"].item(),
                   "judge_b": one["judge_b"].item()}  # fmt: skip
            for name in ("kappa", "ac1"):
                row[name] = float(one[name])
                row[f"{name}_lower"], row[f"{name}_upper"] = _bounds(one[f"{name}_ci"])
            rows.append(row)
    table = pd.DataFrame(rows, columns=None)
    table.attrs["headers"] = {"kappa": "Cohen's κ [Wald]", "ac1": "Gwet's AC1 [Wald]"}
    return table


def _patterns_table(counts) -> pd.DataFrame:
    """One row per group and observed pattern: test items and labelled items per truth."""
    keys = column_keys(counts.K)
    test = counts.test.transpose("system", "stratum", "pattern").values
    lab = counts.labelled.transpose("system", "stratum", "pattern", "truth").values
    rows = []
    for (a, s), (b, r) in itertools.product(enumerate(counts.systems), enumerate(counts.strata)):
        for p, pattern in enumerate(counts.patterns):
            if test[a, b, p] + lab[a, b, p].sum() == 0:
                continue
            row = {"system": s, "stratum": r, "pattern": pattern, "test": int(test[a, b, p])}
            rows.append(row | dict(zip(keys, lab[a, b, p].astype(int).tolist(), strict=True)))
    table = pd.DataFrame(rows, columns=["system", "stratum", "pattern", "test", *keys])
    table.attrs["headers"] = {
        **category_headers(counts.categories, "labelled ")[0],
        "test": "test items",
    }
    return table


def _pooled_table(check) -> pd.DataFrame:
    """Return the check's three pooled statistics per group (the flag is decided on these)."""
    frame = check.pooled.to_dataframe().reset_index()
    frame = frame[["system", "stratum", "check", "observed", "replicated_mean", "p_value"]]
    frame["check"] = frame["check"].map(
        {
            "test_pairs": "pair tables, test items",
            "labelled_pairs": "pair tables, labelled items",
            "patterns": "test patterns",
        }
    )
    frame.attrs["headers"] = {
        "check": "statistic (G²)",
        "replicated_mean": "replicated mean",
        "p_value": "P(G²_rep ≥ G²_obs)",
    }
    return frame


def _ppc_table(check) -> pd.DataFrame:
    frame = check.table()
    columns = ["system", "stratum", "items", "judge_a", "judge_b", "items_graded", "agreement",
               "agreement_replicated", "agreement_p", "flagged"]  # fmt: skip
    frame = frame[columns].copy()
    frame["items_graded"] = _whole(frame["items_graded"])
    frame.attrs["headers"] = {
        "items": "items",
        "items_graded": "graded by both",
        "agreement": "observed agreement",
        "agreement_replicated": "replicated agreement (mean)",
        "agreement_p": "two-sided mid-p",
    }
    return frame


# ----------------------------------------------------------------------------- figures


def _png(draw, panels: int, cell_w: float, cell_h: float, columns: int = 3) -> bytes:
    """Draw ``panels`` axes on a grid and return PNG bytes (no pyplot state)."""
    from matplotlib.figure import Figure  # matplotlib loads on the first figure, not on import

    ncols = min(panels, columns)
    nrows = -(-panels // ncols)
    fig = Figure(figsize=(cell_w * ncols, cell_h * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for axis in axes[panels:]:
        axis.set_visible(False)
    draw(axes[:panels])
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    return buffer.getvalue()


def _titles(counts) -> list[str]:
    several = len(counts.strata) > 1
    return [plain_label(f"{s} / {r}" if several else str(s)) for s, r in _groups(counts)]


def _theta_figure(theta: pd.DataFrame, counts) -> bytes:
    """θ per category, one panel per group: every estimator of the θ table."""
    k = counts.K
    shown = min(len(_groups(counts)), PANELS_MAX)
    long = []
    for col, label in _METHOD_LABELS.items():
        if col in theta:
            long.append(pd.DataFrame({
                "system": [str(c) for c in theta["category"]],
                "stratum": np.repeat(np.arange(len(theta) // k), k),
                "method": label, "estimate": theta[col].to_numpy(float),
                "lower": theta[f"{col}_lower"].to_numpy(float),
                "upper": theta[f"{col}_upper"].to_numpy(float),
            }))  # fmt: skip
    long = pd.concat(long, ignore_index=True)
    titles = _titles(counts)

    def draw(axes):
        for i, axis in enumerate(axes):
            plot_theta_forest(long[long["stratum"] == i], ax=[axis], xlabel="share of the category")
            axis.set_title(titles[i], fontsize=9)
            legend = axis.get_legend()
            if i and legend is not None:  # one legend is enough
                legend.remove()

    return _png(draw, shown, 5.2, 0.6 * k + 1.6, columns=2)


def _confusion_figure(jury, counts) -> bytes:
    """Heat maps of every judge's Dawid–Skene confusion matrix in the first group."""
    s, r = _groups(counts)[0]
    conf = jury["confusion_hat"].sel(system=s, stratum=r).transpose("judge", "truth", "verdict")
    judges = counts.judges[:PANELS_MAX]
    k = counts.K
    labels = [plain_label(str(c)[:12]) for c in counts.categories]
    tilt = max(len(label) for label in labels) > 3

    def draw(axes):
        for axis, judge, matrix in zip(axes, judges, conf.values, strict=False):
            axis.imshow(matrix, vmin=0.0, vmax=1.0, cmap="Blues")
            axis.set_xticks(range(k), labels, rotation=45 if tilt else 0,
                            ha="right" if tilt else "center")  # fmt: skip
            axis.set_yticks(range(k), labels)
            axis.set_xlabel("judge verdict")
            axis.set_ylabel("truth")
            axis.set_title(plain_label(str(judge)[:40]), fontsize=9)
            if k <= 7:
                for (t, v), value in np.ndenumerate(matrix):
                    text = "—" if np.isnan(value) else f"{value:.2f}"
                    axis.text(v, t, text, ha="center", va="center", fontsize=8,
                              color="white" if value > 0.6 else "black")  # fmt: skip

    size = 1.2 + 0.55 * k
    return _png(draw, len(judges), size + 0.6, size + 0.4, columns=4)


# ----------------------------------------------------------------------------- the report


def _checked(counts, fit):
    if fit is not None:
        fitted = fit.counts
        if counts is not None and not CategoricalJuryCounts(counts).dataset.equals(fitted.dataset):
            raise ValueError(
                "counts differ from the fit's counts; pass only fit= (the report uses the fitted "
                "counts) or refit the model to these counts."
            )
        counts = fitted
    if counts is None:
        raise ValueError("Pass counts, a fit, or both: the report needs data to describe.")
    if not isinstance(counts, CategoricalJuryCounts):
        raise TypeError(
            f"build_categorical_jury_report needs a CategoricalJuryCounts or its fit "
            f"(bj.fit(counts)); got {type(counts).__name__}."
        )
    return counts


def _score_values(scores, fit, categories):
    """Return ``{category: value}`` in category order and its vector; (None, None) without."""
    if scores is None and fit is not None and fit.config.get("scores") is not None:
        scores = dict(zip(categories, fit.config["scores"], strict=True))
    if scores is None:
        return None, None
    if isinstance(scores, Mapping) and not all(c in scores for c in categories):
        by_text = {str(k): v for k, v in scores.items()}
        if set(by_text) == {str(c) for c in categories}:
            scores = {c: by_text[str(c)] for c in categories}
    values = score_vector(scores, categories)
    return dict(zip(categories, values.tolist(), strict=True)), values


def _records(caught, check, warn: bool) -> list[dict]:
    """Return the diagnoses (each distinct message once); emit one warning per kind."""
    ours = [w for w in caught if issubclass(w.category, BayesJudgeWarning)]
    by_category = caught_by_category(ours)
    records = [
        {"code": category.__name__, "level": "warning", "message": message}
        for category, messages in by_category.items()
        for message in messages
    ]
    if check is not None and bool(check.flagged.any()):
        records.append({"code": "ppc_flagged", "level": "caution", "message": check.message})
    if warn:
        emit_caught(by_category, stacklevel=3)
    return records


def _model_name(config: dict) -> str:
    pool = bool(config.get("pool_judges", False))
    dependence = config.get("dependence") or "none"
    return (
        f"K-category jury (calibration {config.get('calibration')}, pool_judges {pool}, "
        f"dependence {dependence})"
    )


def _settings(counts, fit, scores, alpha, random_seed) -> dict:
    out = {
        "bayesjudge": __version__,
        "date": _dt.date.today().isoformat(),
        "python": platform.python_version(),
        "alpha": f"{alpha:g}",
        "design": counts.design,
        "categories": json.dumps([str(c) for c in counts.categories], ensure_ascii=False),
        "scores": "none" if scores is None
        else json.dumps({str(k): v for k, v in scores.items()}, ensure_ascii=False),
        "closed form": "K-class Dawid–Skene (EM, Wald interval on the logit scale)",
        "single judges": "estimate_categorical of each judge's own counts (score-type delta)",
        "plurality": "share of the test items' plurality verdicts, ties split (Wilson)",
        "random_seed": random_seed,
        "model": "none",
    }  # fmt: skip
    if fit is not None:
        c = fit.config
        out["model"] = _model_name(c)
        out["sampler"] = (
            f"nutpie NUTS, {c.get('chains')} chains × {c.get('draws')} draws, tune "
            f"{c.get('tune')}, target_accept {c.get('target_accept')}, seed {c.get('random_seed')}"
        )
    return out


def build_categorical_jury_report(
    counts: CategoricalJuryCounts | None = None,
    *,
    fit=None,
    scores=None,
    alpha: float = 0.05,
    random_seed: int | None = None,
    ppc: bool = True,
    warn: bool = True,
    title: str = "LLM-as-a-judge evaluation report: several judges, K categories",
) -> Report:
    """Build the report of several judges' K-category verdicts, with or without a fit.

    Parameters
    ----------
    counts : CategoricalJuryCounts, optional
        The verdict patterns; with a fit, the fit's (passing other counts is an error).
    fit : CategoricalJuryFit, optional
        ``bj.fit(categorical_jury_counts)``; adds the Bayesian θ, the fit's confusion matrices
        and the posterior predictive check of the pairwise agreement.
    scores : dict, optional
        ``{category: value}``: also report the mean score Σ value_k θ_k (default: the fit's
        scores; without any, the category shares only).
    alpha : float, default 0.05
        Every interval has probability ``1 - alpha``.
    random_seed : int, optional
        Seed of the posterior predictive draws; drawn and reported when None.
    ppc : bool, default True
        Run the posterior predictive check (with a fit).
    warn : bool, default True
        Also emit the estimators' and the sampler's warnings (one per kind).
    title : str

    Returns
    -------
    Report
        Sections :data:`CATEGORICAL_JURY_SECTIONS`; tables ``theta`` (one row per group and
        category), ``judges``, ``confusion``, ``agreement``, ``patterns``, ``diagnoses``,
        ``settings``, with scores ``scores``, with a fit and ``ppc`` ``ppc`` and
        ``ppc_pooled``; figures ``theta_forest`` and ``confusion``.

    Raises
    ------
    ValueError
        If neither counts nor a fit is given, the counts differ from the fit's, or
        ``alpha`` or ``scores`` are invalid.
    TypeError
        If ``counts`` is not a :class:`~bayesjudge.data.CategoricalJuryCounts`.

    Examples
    --------
    >>> from bayesjudge.data import CategoricalJuryCounts
    >>> counts = CategoricalJuryCounts.from_counts(
    ...     ["000", "111", "222", "001", "121", "220", "010"],
    ...     test=[120, 60, 150, 30, 20, 25, 15],
    ...     labelled=[[10, 0, 0, 2, 0, 0, 1], [0, 8, 0, 1, 3, 0, 0], [0, 0, 12, 0, 0, 2, 0]],
    ...     judges=["a", "b", "c"], categories=["A", "tie", "B"])
    >>> report = build_categorical_jury_report(counts, scores={"A": 1, "tie": 0.5, "B": 0},
    ...                                        random_seed=1)
    >>> [s.key for s in report.sections][:3]
    ['bottom_line', 'data', 'judge']
    >>> report.tables["theta"]["jury"].round(2).tolist()
    [0.39, 0.19, 0.42]
    >>> round(float(report.tables["scores"]["jury"].iloc[0]), 3)
    0.488
    """
    alpha = check_alpha(alpha)
    ci_prob = 1 - alpha
    counts = _checked(counts, fit)
    scores, values = _score_values(scores, fit, counts.categories)
    if random_seed is None:
        random_seed = int(np.random.default_rng().integers(2**31))
    labelled = int(counts.labelled.sum()) > 0
    options = {"alpha": alpha, "scores": scores}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", BayesJudgeWarning)
        jury = categorical_jury_estimate(counts, method="dawid-skene", **options)
        plurality = categorical_jury_estimate(counts, method="plurality", **options)
        # Without labelled items no judge alone is corrected (its estimate is NaN, warned).
        per_judge = categorical_jury_estimate(counts, method="per-judge", **options)
        agreement = jury_agreement(counts, alpha=alpha)
        summary = None if fit is None else fit.summary(ci_prob=ci_prob)
        if fit is not None:
            fit.check_sampling()  # the sampler's warnings become the report's diagnoses
    check = fit.ppc(random_seed=random_seed) if fit is not None and ppc else None
    records = _records(caught, check, warn)
    best = _best_judges(counts, per_judge)
    tables = {"theta": _theta_table(counts, jury, plurality, per_judge, best, summary)}
    if values is not None:
        tables["scores"] = _score_table(
            counts, jury, plurality, per_judge, best, fit, values, alpha
        )
    tables |= {
        "judges": _human_table(counts, agreement, jury, alpha),
        "confusion": _confusion_table(counts, jury, summary),
        "agreement": _agreement_table(agreement),
        "patterns": _patterns_table(counts),
        "diagnoses": pd.DataFrame(records, columns=["code", "level", "message"]),
    }
    if check is not None:
        tables["ppc"] = _ppc_table(check)
        tables["ppc_pooled"] = _pooled_table(check)
    settings = _settings(counts, fit, scores, alpha, random_seed)
    tables["settings"] = settings_table(settings)
    figures = {
        "theta_forest": _theta_figure(tables["theta"], counts),
        "confusion": _confusion_figure(jury, counts),
    }
    context = {"labelled": labelled, "scores": scores, "ci_prob": ci_prob,
               "kappa_undefined": _kappa_undefined(agreement)}  # fmt: skip
    sections = _sections(counts, fit, tables, records, check, context)
    return Report(title, sections, tables, figures, records, settings)


# ----------------------------------------------------------------------------- the words


def _names(values) -> list:
    """Names as a list of text parts: each name literal (:class:`Plain`), comma-separated."""
    parts: list = []
    for i, value in enumerate(values):
        parts += ([", "] if i else []) + [Plain(str(value))]
    return parts


def _legend(section: ReportSection, categories, prefix: str) -> None:
    """Name the categories where the table headers show their positions (unsafe names)."""
    _, positions = category_headers(categories, prefix)
    if positions:
        parts: list = [f"Columns “{prefix.strip()} 1” … “{prefix.strip()} {len(categories)}”: "]
        for j, c in enumerate(categories):
            parts += ([", "] if j else []) + [f"{j + 1} = ", Plain(str(c))]
        section.text([*parts, "."])


def _kappa_undefined(agreement) -> bool:
    """Whether some κ is NaN beside a defined AC1: every item of both raters in one category."""
    return any(
        bool((agreement[kappa].isnull() & agreement[ac1].notnull()).any())
        for kappa, ac1 in (("kappa", "ac1"), ("kappa_human", "ac1_human"))
    )


def _sections(counts, fit, tables, records, check, context) -> list[ReportSection]:
    pct = f"{context['ci_prob']:.0%}"
    out = {key: ReportSection(key, title) for key, title in CATEGORICAL_JURY_SECTIONS.items()}
    s = out["bottom_line"]
    intro = (
        f"The share θ of every true category per group from all {len(counts.judges)} judges "
        "together (the latent-truth model of conditionally independent judges, anchored by "
        f"the {int(counts.labelled.sum())} labelled items), with {pct} intervals, beside the "
        "plurality vote (naive: it estimates how often the plurality says a category, not θ) "
        "and the single judge whose own corrected intervals are narrowest on average. "
        "Categories: "
    )
    s.text([intro, *_names(counts.categories), "."])
    if not context["labelled"]:
        s.text(
            "**No labelled items**: the latent categories are told apart only by assuming the "
            "judges mostly agree with the truth, and no judge alone can be corrected."
        )
    s.table(
        "theta",
        "θ per group and category: the jury, the plurality vote and the narrowest single judge.",
    )
    if context["scores"] is not None:
        values = _names(f"{k}: {v:g}" for k, v in context["scores"].items())
        s.text(["Mean score Σ value_k θ_k with the values ", *values, "."])
        s.table("scores", "Mean score per group.")
    s.figure("theta_forest", "θ per category: every estimator, one panel per group.")
    data = out["data"]
    sizes = (
        f"); {int(counts.test.sum())} unlabelled and {int(counts.labelled.sum())} labelled "
        f"items in {len(counts.patterns)} distinct verdict patterns (one character per judge, "
        f"the category's position 0 … {counts.K - 1}; '-': no verdict); labelling design "
        f"{counts.design}."
    )
    data.text([f"{len(counts.judges)} judges (", *_names(counts.judges), sizes])
    data.table("patterns", "Items per verdict pattern (labelled items per human category).")
    _legend(data, counts.categories, "labelled ")
    judge = out["judge"]
    judge.text(
        "Rows are the truth, columns the judge's verdict: each row is P(verdict | truth). "
        "From the judge's labelled items (row shares), from the Dawid–Skene fit of all judges"
        + (" and from the Bayesian fit (mean [ETI])." if fit is not None else ".")
    )
    _legend(judge, counts.categories, "verdict ")
    if fit is not None and fit.config.get("calibration") == "shared":
        judge.text(
            "The Bayesian fit shares each judge's confusion matrix over the systems "
            "(calibration shared): its rows repeat for every system of a stratum."
        )
    judge.table("confusion", "Each judge's confusion matrix per group.")
    judge.figure("confusion", "Dawid–Skene confusion matrices of the judges (first group).")
    judge.table("judges", "Each judge's accuracy and agreement with the human labels.")
    agree = out["agreement"]
    agree.text(
        "Cohen's κ drops when one category dominates; Gwet's AC1 does not. Two judges who "
        "agree beyond what their accuracy explains share errors."
        + (
            " κ is shown as — (here and in the judges' table) where both raters put every "
            "item in the same single category: their chance agreement is then 1, so κ is "
            "undefined (0/0); AC1 and the raw agreement are 1 there."
            if context["kappa_undefined"]
            else ""
        )
    )
    agree.table("agreement", "Agreement of every pair of judges (all items).")
    _write_checks(out["checks"], check)
    warn = out["warnings"]
    if records:
        warn.bullets([[f"**{r['level']}** ", Plain(r["message"])] for r in records])
    else:
        warn.text("No warnings.")
    out["methods"].bullets(_methods(fit))
    out["reproducibility"].table("settings", "Settings of this report.")
    return list(out.values())


def _write_checks(checks: ReportSection, check) -> None:
    if check is None:
        checks.text(
            "Not run: the check needs a Bayesian fit (`bj.fit(counts)`, then "
            "`build_report(fit=fit)`, or `bayesjudge report` without `--method none`). The "
            "Dawid–Skene interval is too narrow when judges share errors; fit the model and "
            "read its posterior predictive check before trusting a jury's interval."
        )
        return
    verdict = "**Flagged**: " if bool(check.flagged.any()) else "Not flagged: "
    checks.text(
        [
            "Posterior predictive check of each pair's K × K table on the test items and on "
            "the labelled items of each truth, and of the test items' pattern counts. A group "
            "is flagged when one of the three pooled statistics has P(G²_rep ≥ G²_obs) below "
            f"{check.alpha:g} / 3. ",
            verdict,
            Plain(check.message),
        ]
    )
    checks.table("ppc_pooled", "The check's pooled statistics per group.")
    checks.table("ppc", "Pairwise agreement: observed against the model's replicates.")


def _methods(fit) -> list[str]:
    out = [
        "K-class Dawid–Skene (1979): EM for the maximum-likelihood θ and every judge's "
        "confusion matrix, the labelled items anchoring the latent categories; Wald interval "
        "of logit θ_k from the observed information of all parameters "
        '(`bj.estimate(counts, method="dawid-skene")`).',
        "Plurality vote: the share of test items that the plurality of judges puts in each "
        "category, ties split equally, with Wilson intervals; it estimates P(plurality says "
        "k), not θ_k, and is shown as the naive baseline.",
        "Single judges: each judge's own corrected shares from its labelled items "
        "(`bj.estimate(counts.for_judge(j))`, score-type delta interval); the narrowest is the "
        "judge whose intervals are narrowest on average over the categories.",
        "Cohen's κ and Gwet's AC1 (unweighted, K × K tables) with Wald intervals.",
        "Assumption: the judges' verdicts are independent given the truth. Judges that share "
        "a position or length bias violate it, and the jury's intervals are then too narrow "
        "(section 4).",
    ]
    if fit is not None:
        out.append(
            f"Bayesian model: {_model_name(fit.config)} (models/categorical-jury.md), "
            "equal-tailed intervals of the posterior."
        )
    return out
