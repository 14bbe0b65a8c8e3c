"""The evaluation report of several judges on the same items (:class:`JuryCounts`).

The jury's answer first (Dawid–Skene θ per group, or the Bayesian joint model's when a fit is
given), beside the best single judge's; then the data (judges, items, verdict patterns), each
judge's quality from the labelled items and from the jury model, the agreement between judges
and with the humans, the check of conditional independence (the posterior predictive check of
the pairwise agreement, with a fit), the methods and the settings. Nothing here imports PyMC:
the fit is used through ``fit.summary()`` and ``fit.ppc()``.
"""

from __future__ import annotations

import datetime as _dt
import io
import itertools
import platform
import warnings

import numpy as np
import pandas as pd

from bayesjudge._version import __version__
from bayesjudge.core._validation import check_alpha
from bayesjudge.core.naive import naive
from bayesjudge.data.jury import JuryCounts
from bayesjudge.estimate import estimate
from bayesjudge.jury_estimate import jury_agreement, jury_estimate
from bayesjudge.report.document import Report, ReportSection
from bayesjudge.report.tables import settings_table
from bayesjudge.warnings import BayesJudgeWarning

__all__ = ["JURY_SECTIONS", "build_jury_report"]

JURY_SECTIONS = {
    "bottom_line": "The bottom line",
    "data": "1. Judges, items and verdict patterns",
    "judge": "2. Each judge's quality",
    "agreement": "3. Agreement between judges and with the humans",
    "checks": "4. Are the judges conditionally independent?",
    "warnings": "5. Warnings and what to do",
    "methods": "6. Methods",
    "reproducibility": "7. Reproducibility",
}


def _model_name(config: dict) -> str:
    dependence = config.get("dependence") or "none"
    return (
        f"jury (calibration {config.get('calibration')}, pool_judges "
        f"{config.get('pool_judges')}, dependence {dependence})"
    )


def _groups(counts: JuryCounts):
    return list(itertools.product(counts.systems, counts.strata))


def _theta_table(counts, jury, per_judge, summary) -> pd.DataFrame:
    """θ per group: the jury (closed form and Bayesian) and the narrowest single judge."""
    rows = []
    for s, r in _groups(counts):
        one = jury.sel(system=s, stratum=r)
        per = per_judge.sel(system=s, stratum=r)
        width = (per["ci"].sel(ci_bound="upper") - per["ci"].sel(ci_bound="lower")).values
        best = int(np.nanargmin(np.where(np.isnan(width), np.inf, width)))
        row = {
            "system": s,
            "stratum": r,
            "test_items": int(counts.test.sel(system=s, stratum=r).sum()),
            "labelled_items": int(counts.labelled.sel(system=s, stratum=r).sum()),
            "jury": float(one["estimate"]),
            "jury_lower": float(one["ci"].sel(ci_bound="lower")),
            "jury_upper": float(one["ci"].sel(ci_bound="upper")),
            "best_judge": counts.judges[best],
            "single": float(per["estimate"][best]),
            "single_lower": float(per["ci"].sel(ci_bound="lower")[best]),
            "single_upper": float(per["ci"].sel(ci_bound="upper")[best]),
        }
        if summary is not None:
            theta = summary["theta_ci"].sel(system=s, stratum=r)
            row |= {
                "bayes": float(summary["theta"].sel(system=s, stratum=r)),
                "bayes_lower": float(theta.sel(ci_bound="lower")),
                "bayes_upper": float(theta.sel(ci_bound="upper")),
            }
        rows.append(row)
    table = pd.DataFrame(rows)
    table.attrs["headers"] = {
        "jury": "jury θ: Dawid–Skene [Wald]",
        "single": "narrowest single judge θ [interval]",
        "bayes": "jury θ: Bayesian mean [ETI]",
        "best_judge": "narrowest single judge",
    }
    return table


def _judge_table(counts: JuryCounts, jury, alpha: float) -> pd.DataFrame:
    """Each judge's q0, q1 from its labelled items (Wilson) and from the jury model."""
    marginal = counts.marginal()
    rows = []
    for (s, r), judge in itertools.product(_groups(counts), counts.judges):
        m = marginal.sel(system=s, stratum=r, judge=judge)
        row = {"system": s, "stratum": r, "judge": judge, "graded": int(m["n"] + m["m0"] + m["m1"])}
        for name, hit, size in (("q0", "tn", "m0"), ("q1", "tp", "m1")):
            if int(m[size]) > 0:
                res = naive(int(m[hit]), int(m[size]), alpha=alpha)
                row |= {
                    f"{name}_labels": float(res.estimate),
                    f"{name}_labels_lower": float(res.lower),
                    f"{name}_labels_upper": float(res.upper),
                }
            else:
                row |= {f"{name}_labels": np.nan}
            row[f"{name}_jury"] = float(jury[f"{name}_hat"].sel(system=s, stratum=r, judge=judge))
        rows.append(row)
    table = pd.DataFrame(rows)
    table.attrs["headers"] = {
        "q0_labels": "q0 from the labels [Wilson]",
        "q1_labels": "q1 from the labels [Wilson]",
        "q0_jury": "q0 (Dawid–Skene)",
        "q1_jury": "q1 (Dawid–Skene)",
        "graded": "items graded",
    }
    return table


def _agreement_table(agreement) -> pd.DataFrame:
    rows = []
    if "pair" not in agreement.dims:
        return pd.DataFrame(columns=["system", "stratum", "pair", "kappa", "ac1"])
    for s, r in itertools.product(agreement["system"].values, agreement["stratum"].values):
        for p in range(agreement.sizes["pair"]):
            one = agreement.isel(pair=p).sel(system=s, stratum=r)
            rows.append(
                {
                    "system": s,
                    "stratum": r,
                    "judge_a": one["judge_a"].item(),
                    "judge_b": one["judge_b"].item(),
                    "kappa": float(one["kappa"]),
                    "kappa_lower": float(one["kappa_ci"].sel(ci_bound="lower")),
                    "kappa_upper": float(one["kappa_ci"].sel(ci_bound="upper")),
                    "ac1": float(one["ac1"]),
                    "ac1_lower": float(one["ac1_ci"].sel(ci_bound="lower")),
                    "ac1_upper": float(one["ac1_ci"].sel(ci_bound="upper")),
                }
            )
    table = pd.DataFrame(rows)
    table.attrs["headers"] = {"kappa": "Cohen's κ [Wald]", "ac1": "Gwet's AC1 [Wald]"}
    return table


def _human_table(agreement) -> pd.DataFrame:
    rows = []
    for s, r, judge in itertools.product(
        agreement["system"].values, agreement["stratum"].values, agreement["judge"].values
    ):
        one = agreement.sel(system=s, stratum=r, judge=judge)
        row = {"system": s, "stratum": r, "judge": judge}
        for name in ("kappa", "ac1"):
            ci = one[f"{name}_human_ci"]
            row |= {
                name: float(one[f"{name}_human"]),
                f"{name}_lower": float(ci.sel(ci_bound="lower")),
                f"{name}_upper": float(ci.sel(ci_bound="upper")),
            }
        rows.append(row)
    table = pd.DataFrame(rows)
    table.attrs["headers"] = {"kappa": "Cohen's κ [Wald]", "ac1": "Gwet's AC1 [Wald]"}
    return table


def _figure(theta: pd.DataFrame, per_judge, counts: JuryCounts, ci_prob: float) -> bytes:
    """Forest plot: every judge alone and the jury, per group."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = _groups(counts)
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(groups) * (len(counts.judges) + 2) + 1))
    y, ticks, labels = 0, [], []
    for s, r in groups:
        per = per_judge.sel(system=s, stratum=r)
        for j, judge in enumerate(counts.judges):
            lo, hi = per["ci"].sel(ci_bound="lower")[j], per["ci"].sel(ci_bound="upper")[j]
            ax.plot([lo, hi], [y, y], color="0.6")
            ax.plot(per["estimate"][j], y, "o", color="0.4", ms=3)
            ticks.append(y)
            labels.append(f"{s} / {r}: {judge}")
            y += 1
        row = theta[(theta["system"] == s) & (theta["stratum"] == r)].iloc[0]
        ax.plot([row["jury_lower"], row["jury_upper"]], [y, y], color="C3", lw=2.5)
        ax.plot(row["jury"], y, "o", color="C3")
        ticks.append(y)
        labels.append(f"{s} / {r}: jury (Dawid–Skene)")
        y += 2
    ax.set_yticks(ticks, [str(label)[:60] for label in labels], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel(f"θ with its {ci_prob:.0%} interval")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    return buffer.getvalue()


def build_jury_report(
    counts: JuryCounts | None = None,
    *,
    fit=None,
    alpha: float = 0.05,
    random_seed: int | None = None,
    ppc: bool = True,
    warn: bool = True,
    title: str = "LLM-as-a-judge evaluation report: several judges",
) -> Report:
    """Build the report of several judges' verdict patterns, with or without a Bayesian fit.

    Parameters
    ----------
    counts : JuryCounts, optional
        The verdict patterns; with a fit, the fit's (passing others is an error).
    fit : JuryFit, optional
        ``bj.fit(jury_counts)``; adds the Bayesian θ and the posterior predictive check of the
        pairwise agreement (conditional independence).
    alpha : float, default 0.05
        Every interval has probability ``1 - alpha``.
    random_seed : int, optional
        Seed of the posterior predictive draws; drawn and reported when None.
    ppc : bool, default True
        Run the posterior predictive check (with a fit).
    warn : bool, default True
        Also emit the estimators' warnings.
    title : str

    Returns
    -------
    Report
        Sections :data:`JURY_SECTIONS`; tables ``theta``, ``judges``, ``agreement``,
        ``human_agreement``, ``patterns``, ``diagnoses``, ``settings`` (and ``ppc`` with a
        fit); figure ``theta_forest``.

    Examples
    --------
    >>> from bayesjudge.data.jury import JuryCounts
    >>> counts = JuryCounts.from_counts(
    ...     ["111", "110", "101", "011", "100", "010", "001", "000"],
    ...     test=[300, 40, 35, 30, 20, 25, 30, 200],
    ...     labelled=[[1, 1, 2, 1, 3, 4, 3, 25], [24, 3, 4, 2, 1, 2, 1, 3]],
    ...     judges=["a", "b", "c"])
    >>> report = build_jury_report(counts)
    >>> [s.key for s in report.sections][:3]
    ['bottom_line', 'data', 'judge']
    >>> round(float(report.tables["theta"]["jury"].iloc[0]), 3)
    0.602
    """
    alpha = check_alpha(alpha)
    ci_prob = 1 - alpha
    if fit is not None:
        if counts is not None and counts is not fit.counts:
            raise ValueError("Pass either counts or a fit (the report uses the fit's counts).")
        counts = fit.counts
    if not isinstance(counts, JuryCounts):
        raise TypeError(
            f"build_jury_report needs a JuryCounts or a jury fit; got {type(counts).__name__}."
        )
    if random_seed is None:
        random_seed = int(np.random.default_rng().integers(2**31))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", BayesJudgeWarning)
        jury = jury_estimate(counts, alpha=alpha)
        per_judge = estimate(counts, method="per-judge", alpha=alpha)
        agreement = jury_agreement(counts, alpha=alpha)
        summary = None if fit is None else fit.summary(ci_prob=ci_prob)
        if fit is not None:
            fit.check_sampling()  # the sampler's warnings become the report's diagnoses
        check = fit.ppc(random_seed=random_seed) if fit is not None and ppc else None
    records = [
        {"code": w.category.__name__, "level": "warning", "message": str(w.message)}
        for w in caught
        if issubclass(w.category, BayesJudgeWarning)
    ]
    if warn:
        for w in caught:
            warnings.warn(w.message, w.category, stacklevel=2)
    tables = {
        "theta": _theta_table(counts, jury, per_judge, summary),
        "judges": _judge_table(counts, jury, alpha),
        "agreement": _agreement_table(agreement),
        "human_agreement": _human_table(agreement),
        "patterns": counts.to_frame(),
        "diagnoses": pd.DataFrame(records, columns=["code", "level", "message"]),
    }
    if check is not None:
        tables["ppc"] = check.table()
    settings = {
        "bayesjudge": __version__,
        "date": _dt.date.today().isoformat(),
        "python": platform.python_version(),
        "alpha": alpha,
        "design": counts.design,
        "closed form": "Dawid–Skene (EM, Wald interval on the logit scale)",
        "single judges": per_judge.attrs.get("judge_method", ""),
        "random_seed": random_seed,
        "model": "none" if fit is None else _model_name(fit.config),
    }
    tables["settings"] = settings_table(settings)
    figures = {"theta_forest": _figure(tables["theta"], per_judge, counts, ci_prob)}
    sections = _sections(counts, fit, tables, records, check, ci_prob)
    return Report(title, sections, tables, figures, records, settings)


def _sections(counts, fit, tables, records, check, ci_prob) -> list[ReportSection]:
    pct = f"{ci_prob:.0%}"
    out = {key: ReportSection(key, title) for key, title in JURY_SECTIONS.items()}
    s = out["bottom_line"]
    s.text(
        f"True accuracy θ per group from all {len(counts.judges)} judges together (the "
        f"latent-truth model of conditionally independent judges, anchored by the "
        f"{int(counts.labelled.sum())} labelled items), with {pct} intervals, beside the "
        f"single judge whose own interval is narrowest."
    )
    s.table("theta", "θ per group: the jury and the narrowest single judge.")
    s.figure("theta_forest", "Every judge alone (grey) and the jury (red).")
    data = out["data"]
    data.text(
        f"{len(counts.judges)} judges ({', '.join(map(str, counts.judges))}); "
        f"{int(counts.test.sum())} unlabelled and {int(counts.labelled.sum())} labelled "
        f"items in {len(counts.patterns)} distinct verdict patterns ('-': no verdict); "
        f"labelling design {counts.design}."
    )
    data.table("patterns", "Items per verdict pattern (one character per judge).")
    out["judge"].table(
        "judges", "Each judge's q0 and q1 from its labelled items and from the jury model."
    )
    out["agreement"].text(
        "Cohen's κ drops when one verdict dominates; Gwet's AC1 does not. High agreement "
        "between two judges beyond what their accuracy explains means shared errors."
    )
    out["agreement"].table("agreement", "Agreement of every pair of judges (all items).")
    out["agreement"].table("human_agreement", "Agreement of each judge with the human labels.")
    checks = out["checks"]
    if check is None:
        checks.text(
            "Not run: the check needs a Bayesian fit (`bj.fit(counts)`, then "
            "`fit.report()`). The Dawid–Skene interval is too narrow when judges share "
            "errors; fit the model and read its posterior predictive check before trusting "
            "a jury's interval."
        )
    else:
        checks.text(
            "Posterior predictive check of each pair's agreement on the test items and on the "
            "labelled items of each truth (with three judges the independent model fits any "
            "table of test patterns, so only the labelled items can contradict it): a small "
            "p-value says the judges agree more (or less) than conditional independence given "
            "the truth allows. "
            + ("**Flagged**: " + check.message if bool(check.flagged.any()) else "Not flagged.")
        )
        checks.table("ppc", "Pairwise agreement: observed against the model's replicates.")
    warn = out["warnings"]
    if records:
        warn.bullets([r["message"] for r in records])
    else:
        warn.text("No warnings.")
    out["methods"].bullets(
        [
            "Dawid–Skene (1979): EM for the maximum-likelihood θ and q0, q1 of every judge, "
            "the labelled items' posteriors fixed at their truth; Wald interval of logit θ "
            "from the observed information of all parameters.",
            "Single judges: each judge's own corrected estimate from its labelled items "
            "(`bj.estimate(counts.for_judge(j))`).",
            "Assumption: the judges' verdicts are independent given the truth. LLM judges "
            "that share a position or length bias violate it; the intervals are then too "
            "narrow (section 4).",
        ]
        + ([] if fit is None else [f"Bayesian model: {_model_name(fit.config)} (models/jury.md)."])
    )
    out["reproducibility"].table("settings", "Settings of this report.")
    return list(out.values())
