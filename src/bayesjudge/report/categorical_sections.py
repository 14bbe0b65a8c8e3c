"""The K-category report's sections: one function per section writes its words around tables.

:func:`write_categorical_sections` lists them in the order of :data:`CATEGORICAL_SECTIONS`.
The section functions compute nothing beyond counts of the tables' rows. User data (system,
stratum and category names, warning messages quoting them) enter the text only as
:class:`~bayesjudge.report.document.Plain` parts, escaped when rendered.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayesjudge._text import format_probability
from bayesjudge.core.kernels import LOW_J_THRESHOLD
from bayesjudge.report.categorical_tables import INTERVAL_LABELS, category_headers
from bayesjudge.report.document import Plain, ReportSection
from bayesjudge.report.figures import CONFUSION_PANELS_MAX
from bayesjudge.report.tables import BOTTOM_LINE_MAX_SYSTEMS, SETTLED_PROBABILITY

__all__ = ["CATEGORICAL_SECTIONS", "REFERENCES", "describe_priors", "write_categorical_sections"]

#: The K-category report's sections, in order: key and title. The bottom line comes first.
CATEGORICAL_SECTIONS = {
    "bottom_line": "The bottom line",
    "data": "1. Data: test and calibration counts",
    "judge": "2. The judge: confusion matrix and conditioning",
    "categories": "3. Category shares θ",
    "scores": "4. Scores and comparisons of systems",
    "warnings": "5. Warnings and what to do",
    "checks": "6. Model checks",
    "methods": "7. Methods",
    "reproducibility": "8. Reproducibility",
}

#: The works the methods section cites.
REFERENCES = (
    "W. J. Rogan and B. Gladen, “Estimating prevalence from the results of a screening test”, "
    "*Am. J. Epidemiol.* 107(1), 1978 (the binary correction).",
    "M. Saerens, P. Latinne and C. Decaestecker, “Adjusting the outputs of a classifier to new "
    "a priori probabilities”, *Neural Computation* 14(1), 2002; Z. Lipton, Y.-X. Wang and "
    "A. Smola, “Detecting and correcting for label shift with black box predictors”, ICML 2018 "
    "(the K-class inversion (Ĉᵀ)⁻¹ p̂ and its error bound through σ_min).",
    "W. Wang and M. Á. Carreira-Perpiñán, “Projection onto the probability simplex: an "
    "efficient algorithm with a simple proof”, arXiv:1309.1541, 2013.",
    "E. B. Wilson, “Probable inference, the law of succession, and statistical inference”, "
    "*JASA* 22(158), 1927 (score-type intervals).",
    "B. Efron and R. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall, 1993.",
    "A. Gelman et al., *Bayesian Data Analysis*, 3rd ed., 2013, Sec. 6.3 (posterior "
    "predictive checks).",
    "C. Lee et al., “How to Correctly Report LLM-as-a-Judge Evaluations”, 2026 (the binary "
    "correction with calibration uncertainty; the multinomial extension as future work).",
    "J. Fiedler, “Bias and Uncertainty in LLM-as-a-Judge Estimation”, 2026 (the reporting "
    "checklist; ordinal outputs carry the same bias).",
)

_RANKING_MAX_STRATA = 5


@dataclass(frozen=True)
class _Context:
    counts: object
    fit: object
    tables: dict
    figures: dict
    records: list
    settings: dict
    ci_prob: float
    estimate: object
    scores: dict | None
    comparison: dict | None

    @property
    def pct(self) -> str:
        return f"{100 * self.ci_prob:g}%"

    @property
    def bayes(self) -> bool:
        return self.fit is not None

    @property
    def ci_kind(self) -> str:
        return INTERVAL_LABELS[self.estimate.attrs["method"]]


def write_categorical_sections(**context) -> list[ReportSection]:
    """Return the sections of the K-category report, in the order of CATEGORICAL_SECTIONS."""
    c = _Context(**context)
    writers = {
        "bottom_line": _write_bottom_line,
        "data": _write_data,
        "judge": _write_judge,
        "categories": _write_categories,
        "scores": _write_scores,
        "warnings": _write_warnings,
        "checks": _write_checks,
        "methods": _write_methods,
        "reproducibility": _write_reproducibility,
    }
    sections = []
    for key, title in CATEGORICAL_SECTIONS.items():
        section = ReportSection(key, title)
        writers[key](section, c)
        sections.append(section)
    return sections


def _quoted(names) -> list:
    """Return ``“a”, “b”`` as text parts, each name :class:`Plain`."""
    parts: list = []
    for i, name in enumerate(names):
        parts += [", " if i else "", "“", Plain(name), "”"]
    return parts


def _legend(section: ReportSection, categories, prefix: str = "") -> None:
    """Name the categories of positional column headers (names that need escaping)."""
    if not category_headers(categories)[1]:
        return
    parts: list = [f"The {prefix}columns name the categories by position: "]
    for j, name in enumerate(categories):
        parts += ["; " if j else "", f"{j + 1} = “", Plain(name), "”"]
    section.text([*parts, "."])


def _scores_text(scores: dict) -> list:
    parts: list = ["scores "]
    for i, (category, value) in enumerate(scores.items()):
        parts += [", " if i else "", "“", Plain(category), f"” = {value:g}"]
    return parts


def _write_bottom_line(s: ReportSection, c: _Context) -> None:
    """Write the answer first: each score (or the shares), the ranking, the main warning."""
    multi = len(c.counts.systems) > 1
    what = (
        f"the Bayesian posterior mean with its {c.pct} equal-tailed interval"
        if c.bayes
        else f"the closed form (generalised Rogan–Gladen, {c.ci_kind} interval, {c.pct})"
    )
    if c.scores is None:
        s.text(
            f"Share of each true category, corrected for the judge's errors: {what}. No "
            "scores were given (`scores={category: value}`), so the systems are not ranked; "
            "pass scores to rank and compare them on a mean score."
        )
        s.table("bottom_line", "Corrected share of each category per system.")
        _legend(s, c.counts.categories)
    else:
        rule = (
            f"P(score_this > score_next) ≥ {SETTLED_PROBABILITY:g}"
            if c.bayes
            else f"the {c.pct} interval of Δ to the next excludes 0"
        )
        s.text(
            [
                "Mean score (",
                *_scores_text(c.scores),
                "), corrected for the judge's errors: ",
                f"{what}; best first"
                + (" in each stratum" if len(c.counts.strata) > 1 else "")
                + (
                    f". A step of the ranking is **settled** when {rule}."
                    if multi
                    else ". One system: nothing to rank."
                ),
            ]
        )
        table = c.tables["bottom_line"]
        hidden = table.attrs.get("hidden", 0)
        s.table(
            "bottom_line",
            "Score per system, best first"
            + (
                f" (the top {BOTTOM_LINE_MAX_SYSTEMS}; {hidden} more rows in section 4)."
                if hidden
                else "."
            ),
        )
        if multi:
            s.bullets(_ranking_lines(table, c))
    if not c.records:
        s.text("No warnings (section 5).")
        return
    record = c.records[0]
    more = len(c.records) - 1
    s.text(
        [
            f"**Warning that matters most** ({record.level} `{record.code}`"
            + (f"; {more} more in section 5" if more else "; section 5 says what to do")
            + "): ",
            Plain(record.message),
        ]
    )


def _ranking_lines(table, c: _Context) -> list:
    """One line per stratum: the order, and whether every step of it is settled."""
    lines = []
    strata = list(dict.fromkeys(table["stratum"]))
    for stratum in strata[:_RANKING_MAX_STRATA]:
        every = table[table["stratum"] == stratum]
        rows = every[np.isfinite(every["score"].to_numpy(float))]  # systems with an estimate
        parts: list = (
            ["Ranking: "] if len(strata) == 1 else ["Ranking in stratum “", Plain(stratum), "”: "]
        )
        for i, name in enumerate(rows["system"]):
            parts += [" > " if i else "", "“", Plain(name), "”"]
        if table.attrs.get("hidden"):
            parts.append(" > …")
        steps = rows.iloc[:-1]
        open_steps = steps[steps["settled"] != "yes"]
        if len(rows) < 2:
            parts.append(" — nothing to rank" if len(rows) else "— nothing to rank")
        elif open_steps.empty:
            parts.append(" — **settled** (every step)")
        else:
            first = open_steps.iloc[0]
            position = list(rows.index).index(first.name)
            nxt = rows["system"].iloc[position + 1]
            if "prob_greater" in rows and first["prob_greater"] == first["prob_greater"]:
                sure = f"P(a > b) {format_probability(first['prob_greater'], relation=True)}"
            else:
                sure = "its Δ interval includes 0 or is unknown"
            parts += [
                f" — **not settled** ({len(open_steps)} of {len(steps)} steps): “",
                Plain(first["system"]),
                "” over “",
                Plain(nxt),
                f"”: {sure}",
            ]
        missing = every["system"][~every.index.isin(rows.index)].tolist()
        if missing:
            parts += ["; no estimate for ", *_quoted(missing)]
        lines.append(parts)
    if len(strata) > _RANKING_MAX_STRATA:
        lines.append(f"… and {len(strata) - _RANKING_MAX_STRATA} more strata in the table.")
    return lines


def _write_data(s: ReportSection, c: _Context) -> None:
    """1. The categories, the labelling design, the test and calibration counts."""
    counts = c.counts
    test = int(counts.ds["test"].sum())
    s.text(
        [
            f"K = {counts.K} categories" + (" (an ordered scale)" if counts.ordered else "") + ": ",
            *_quoted(counts.categories),
            f". {len(counts.systems)} system(s) × {len(counts.strata)} stratum/strata, {test} "
            "test items judged.",
        ]
    )
    if counts.design == "random":
        s.text(
            "Labelling design: **random** — humans labelled a random subset of the judged "
            "items; the test counts hold the unlabelled items, and the calibration rows' "
            "totals are data about the category shares (the Bayesian model uses them)."
        )
    else:
        s.text(
            "Labelling design: **stratified** — a calibration set sampled per human "
            "category; its row totals are fixed by design and say nothing about θ."
        )
    shared = list(counts.calibration_shared_over)
    if shared:
        s.text(
            f"One calibration set is shared over {', '.join(shared)} (shown once, "
            "“(shared)”): the judge is assumed to err alike there."
        )
    if counts.empty_categories:
        s.text(
            [
                "Categories with no items at all (kept, but unused): ",
                *_quoted(counts.empty_categories),
                ".",
            ]
        )
    s.table("test_counts", "Test items per judge verdict (n = all test items of the group).")
    s.table(
        "calibration_counts", "Calibration counts: rows = human truth, columns = judge verdict."
    )
    _legend(s, counts.categories, "count ")


def _write_judge(s: ReportSection, c: _Context) -> None:
    """2. The estimated confusion matrix with intervals, its heat map, the conditioning."""
    s.text(
        "The judge's confusion matrix Ĉ[t, v] = P̂(verdict v | truth t), each row the share of "
        "the calibration items of one true category that the judge put in each verdict, with "
        f"its {c.pct} Wilson interval"
        + (
            f"; the Bayesian rows give the posterior mean and {c.pct} equal-tailed interval"
            f" ({c.fit.config.get('calibration')} calibration, "
            f"{c.fit.config.get('confusion')} confusion)"
            if c.bayes
            else ""
        )
        + ". At K = 2 the diagonal is the binary report's q0 and q1."
    )
    s.table("confusion", "Estimated confusion matrix per group: rows = truth, columns = verdict.")
    _legend(s, c.counts.categories)
    groups = int((c.tables["confusion"]["method"] == "closed form").sum() // c.counts.K)
    extra = (
        f" (the first {CONFUSION_PANELS_MAX} of {groups} groups; the table has all)"
        if groups > CONFUSION_PANELS_MAX
        else ""
    )
    s.figure("confusion", f"Closed-form Ĉ per group, rows = truth, columns = verdict{extra}.")
    frame = c.tables["conditioning"]
    bad = frame[frame["condition"] != "fine"]
    s.text(
        "**Conditioning** (the K-category analogue of Youden's J): the correction solves "
        "Ĉᵀ θ = p̂, so sampling errors in p̂ and Ĉ are amplified by up to 1/σ_min, σ_min "
        "the smallest singular value of Ĉ on the sum-zero subspace (|J| at K = 2). Below "
        f"{LOW_J_THRESHOLD:g} (the binary low-J threshold) the judge is **ill-conditioned**: "
        "the corrected intervals are wide and the point estimates unstable; a singular Ĉ "
        "(some true categories indistinguishable from the verdicts) leaves θ undefined. "
        + (
            f"{len(bad)} of {len(frame)} groups are not fine: see the table and section 5."
            if len(bad)
            else "Every group is fine."
        )
    )
    s.table("conditioning", "Conditioning of Ĉ per group.")
    s.bullets(
        [
            ["**warning** `IllConditionedJudgeWarning`: ", Plain(r.message)]
            for r in c.records
            if r.code == "IllConditionedJudgeWarning"
        ]
    )


def _write_categories(s: ReportSection, c: _Context) -> None:
    """3. Naive share against the corrected one (closed form and posterior), per category."""
    frame = c.tables["categories"]
    projected = int(frame.groupby(["system", "stratum"], sort=False)["projected"].first().sum())
    s.text(
        "Share of each true category: the naive share p̂ of the judge's verdicts (a Wilson "
        "interval for the verdicts, **not** for the truth), the generalised Rogan–Gladen "
        f"estimate θ̂ with its {c.ci_kind} interval, θ̃ = (Ĉᵀ)⁻¹ p̂ before the projection "
        "onto the simplex"
        + (", and the Bayesian posterior mean with its equal-tailed interval" if c.bayes else "")
        + f". The projection moved {projected} group(s) (θ̃ had a negative share)."
    )
    s.table("categories", "Category shares per group: naive, corrected and Bayesian.")
    s.figure(
        "categories",
        "Shares per category and group: naive p̂ (not θ), corrected θ̂"
        + (", Bayesian θ" if c.bayes else "")
        + ".",
    )


def _write_scores(s: ReportSection, c: _Context) -> None:
    """4. The mean score with intervals, and the systems' pairwise differences."""
    if c.scores is None:
        s.text(
            "No scores were given: pass `scores={category: value}` to estimate and "
            "compare a mean score (e.g. a rubric mean, or a win rate with ties counted "
            "half: {A: 1, tie: 0.5, B: 0})."
        )
        return
    s.text(
        [
            "The mean score Σ_k v_k θ_k (",
            *_scores_text(c.scores),
            "): naive Σ v·p̂ (the "
            f"judge's verdicts taken at face value), corrected with its {c.ci_kind} interval"
            + (", and the posterior mean with its equal-tailed interval." if c.bayes else "."),
        ]
    )
    s.table("scores", "Mean score per group.")
    if "scores" in c.figures:
        s.figure(
            "scores",
            "Mean score per system: naive, corrected" + (" and Bayesian." if c.bayes else "."),
        )
    if "score_difference" not in c.tables:
        s.text("One system: no comparison.")
        return
    cmp = c.comparison
    how = (
        "percentile bootstrap of the projected difference"
        if cmp["method"] == "bootstrap"
        else "Wald interval of the difference with its delta-method standard error"
    )
    s.text(
        f"Differences of the score, Δ = score_a − score_b, within each stratum: {how} "
        f"({cmp['calibration']} calibration; independent test items, no pairing)"
        + (
            ", and the posterior of the draw-by-draw difference with P(a > b)"
            if c.bayes and "prob_greater" in c.tables["score_difference"]
            else ""
        )
        + (
            ". Only neighbours in rank are compared (many systems)."
            if cmp["pairs"] != "all"
            else "."
        )
    )
    s.table("score_difference", "Pairwise differences of the mean score.")


def _write_warnings(s: ReportSection, c: _Context) -> None:
    """5. The diagnoses, most important first, and what to do."""
    if not c.records:
        s.text(
            "No warnings: every group was corrected, the judge is well conditioned"
            + (", the sampler converged and the model reproduces the counts." if c.bayes else ".")
        )
        return
    s.text(
        "Where these flag trouble, **weaken the claim** rather than choosing the most "
        "favourable estimate (Fiedler Sec. 7)."
    )
    s.bullets([[f"**{r.level}** `{r.code}`: ", Plain(r.message)] for r in c.records])


def _write_checks(s: ReportSection, c: _Context) -> None:
    """6. Sampler diagnostics and the posterior predictive check."""
    if not c.bayes:
        s.text(
            "The Bayesian parts were not run (no fit): no sampler diagnostics and no "
            "posterior predictive check."
        )
        return
    d = c.fit.diagnostics()
    s.text(
        f"Sampler: {d['divergences']} divergences in {d['draws']} draws; largest r_hat "
        f"{d['r_hat_max']:.3f} (should be ≤ 1.01); smallest bulk ESS {d['ess_bulk_min']:.0f} "
        f"and tail ESS {d['ess_tail_min']:.0f} (should be ≥ 400)."
    )
    if "ppc" not in c.tables:
        s.text("The posterior predictive check was not run (ppc=False).")
        return
    frame = c.tables["ppc"]
    separate = (
        c.fit.config.get("calibration") == "separate" and c.fit.config.get("confusion") == "free"
    )
    s.text(
        "Posterior predictive check: counts replicated from the posterior against the "
        "observed ones; per count vector the chi-square discrepancy's tail probability "
        f"P(T(rep) ≥ T(obs)) (flagged below {(1 - c.ci_prob) / 2:g}: "
        f"{int(frame['misfit'].sum())} of {len(frame)}) and the number of cells whose mid-p "
        f"value lies outside the central {c.pct}. "
        + (
            "With separate calibration and free confusion rows every group has its own θ and "
            "C, so the model reproduces each group's counts nearly by construction and the "
            "check has little power; it has power where groups share parameters."
            if separate
            else "Groups share parameters in this fit, so a flagged count says the "
            "model does not reproduce the data there."
        )
    )
    s.table("ppc", "Posterior predictive check per observed count vector.")


def _write_methods(s: ReportSection, c: _Context) -> None:
    """7. The estimators and their references."""
    s.bullets(
        [
            "**Generalised Rogan–Gladen.** With C[t, v] = P(verdict v | truth t) the verdict "
            "shares are p = Cᵀ θ; the estimate solves Ĉᵀ θ̃ = p̂ with Ĉ the calibration rows' "
            "shares and p̂ the test verdict shares. θ̃ sums to 1 but can leave the simplex near a "
            "share of 0: the reported θ̂ is its Euclidean projection onto the simplex (exact, no "
            "iteration; at K = 2 the binary clip to [0, 1]). At K = 2 θ̂ is the binary "
            "Rogan–Gladen estimate.",
            '**Score-type delta interval** (`method="delta"`, the default). To first order '
            "δθ = (Ĉᵀ)⁻¹(δp − Σ_t θ_t δĈ_t), with p̂ and every calibration row independent "
            "multinomial shares, so a score s = vᵀθ has Var(ŝ) = [Σ_j p_j w_j² − s²]/n + "
            "Σ_t θ_t² [Σ_j Ĉ_tj w_j² − v_t²]/m_t, w = Ĉ⁻¹ v. The interval is every s with "
            "(ŝ − s)² ≤ z² Var(s), the variance taken at the hypothesised value (as in Wilson's "
            "interval), so it keeps its width at a share of 0 and never leaves the range; "
            '`"wald"` is ŝ ± z·SE and collapses there.',
            '**Bootstrap** (`method="bootstrap"`): percentile interval from resamples of the '
            "test counts and of each calibration row (the whole table under the random design), "
            "the rows drawn from their shares with one pseudo-item per row (1/K per cell), so "
            "an error never seen among the labelled items can still occur in a resample; every "
            "replicate is projected, and one with a singular Ĉ* counts against the interval. "
            "Comparisons of systems use the bootstrap of the difference, or the delta method's "
            "Wald interval of the difference.",
            "**Bayesian model** (with a fit): θ_g ~ Dirichlet, confusion rows C_g[t, ·] ~ "
            "Dirichlet (separate), one C across pooled groups (shared) or off-diagonal log-ratios "
            "~ Normal(μ, σ) non-centred (hierarchical), or the symmetric-preference and ordinal "
            "structures; test ~ Multinomial(n, Cᵀθ), calibration rows ~ Multinomial(m_t, C[t]) "
            "and, under the random design, the labelled items' truth ~ Multinomial(m, θ). "
            "Scores and their differences are computed draw by draw, P(a > b) is the share of "
            "draws with a positive difference. Model cards: `models/categorical.md`.",
            *(
                [f"**Priors of this fit**: {describe_priors(c.fit.config)}."]
                if c.fit is not None
                else []
            ),
            "**Conditioning**: σ_min of Ĉ on the sum-zero subspace bounds the amplification of "
            "errors, ‖δθ‖ ≤ ‖δp − δĈᵀθ‖ / σ_min (Lipton et al. 2018).",
        ]
    )
    s.text("References:")
    s.bullets(list(REFERENCES))


def describe_priors(config: dict) -> str:
    """Return the priors of a K-category fit in words, from its ``config`` (the values used).

    Examples
    --------
    >>> config = {"categories": ["A", "tie", "B"], "calibration": "separate",
    ...           "confusion": "free", "priors": {"theta": 1.0, "confusion": [4.0, 1.0],
    ...           "error_logit_mean": [-1.5, 1.5], "error_logit_scale": 1.0}}
    >>> describe_priors(config)
    'θ ~ Dirichlet(1, 1, 1) (flat); confusion rows ~ Dirichlet(4 on the diagonal, 1 off it)'
    >>> describe_priors(config | {"priors": {**config["priors"], "confusion": 1.0}})
    'θ ~ Dirichlet(1, 1, 1) (flat); confusion rows ~ Dirichlet(1 in every cell) (flat)'
    >>> describe_priors(config | {"priors": {**config["priors"], "confusion": None}})
    'θ ~ Dirichlet(1, 1, 1) (flat); confusion rows ~ Dirichlet(1/3 in every cell) (Perks)'
    >>> for part in describe_priors(config | {"calibration": "hierarchical"}).split("; "):
    ...     print(part)
    θ ~ Dirichlet(1, 1, 1) (flat)
    confusion rows' off-diagonal log-ratios ~ Normal(μ, σ), μ ~ Normal(-1.5, 1.5), σ ~ HalfNormal(1)
    """
    priors, k = config["priors"], len(config["categories"])
    theta = priors["theta"]
    alphas = [theta] * k if not isinstance(theta, list) else theta
    text = f"θ ~ Dirichlet({', '.join(f'{a:g}' for a in alphas)})"
    if all(a == 1 for a in alphas):
        text += " (flat)"
    if config["confusion"] == "ordinal":
        scale = (
            f", population spread σ ~ HalfNormal({priors['error_logit_scale']:g})"
            if config["calibration"] == "hierarchical"
            else ""
        )
        return text + f"; ordinal confusion: Normal priors of its cutpoints and steps{scale}"
    if config["calibration"] == "hierarchical":
        mu, sd = priors["error_logit_mean"]
        return text + (
            f"; confusion rows' off-diagonal log-ratios ~ Normal(μ, σ), μ ~ Normal({mu:g}, "
            f"{sd:g}), σ ~ HalfNormal({priors['error_logit_scale']:g})"
        )
    conf = priors["confusion"]
    if conf is None:  # the default: Perks's 1/K in every cell
        return text + f"; confusion rows ~ Dirichlet(1/{k} in every cell) (Perks)"
    if isinstance(conf, list) and conf and isinstance(conf[0], list):
        rows = "; ".join(", ".join(f"{v:g}" for v in row) for row in conf)
        shown = f"the rows of [{rows}]"
    elif isinstance(conf, list):
        shown = f"{conf[0]:g} on the diagonal, {conf[1]:g} off it"
    else:
        shown = f"{conf:g} in every cell"
    flat = " (flat)" if not isinstance(conf, list) and conf == 1 else ""
    return text + f"; confusion rows ~ Dirichlet({shown}){flat}"


def _write_reproducibility(s: ReportSection, c: _Context) -> None:
    """8. The settings that reproduce every number."""
    s.table("settings", "Settings of this report.")
