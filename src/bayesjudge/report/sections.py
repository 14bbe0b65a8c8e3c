"""The report's sections: one function per section writes its text, tables and figures.

:func:`write_sections` is the driver: it lists the sections in the order of
:data:`~bayesjudge.report.document.SECTIONS` and hands each a :class:`_Context` of the numbers
already computed (tables, figures, diagnoses, settings). The section functions only write
words around those numbers; they compute nothing beyond sums and counts of the tables.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayesjudge._text import format_probability
from bayesjudge.core.kernels import LOW_J_THRESHOLD
from bayesjudge.data import MAX_PAIRED_SYSTEMS
from bayesjudge.report.document import SECTIONS, Plain, ReportSection
from bayesjudge.report.tables import (
    BOTTOM_LINE_MAX_SYSTEMS,
    SETTLED_PROBABILITY,
    diagnosis_level,
)

__all__ = ["WARNING_PRIORITY", "most_important_warning", "write_sections"]

#: A warning code with more records than this is summarised: its first message in full, then
#: one table row per record with its numbers (keeps a report of many systems readable).
_MAX_BULLETS_PER_CODE = 3

#: The order of importance of the warnings, most important first: the bottom line names the
#: first warning found in this order (a record's code is ``check_comparison``'s code or the
#: estimator's warning class). Why this order: a warning ranks higher the more of the
#: headline numbers it can make wrong, not merely wide.
#:
#: 1. the sampler did not converge: every posterior number may be wrong;
#: 2. low judge quality: θ is barely identified and every corrected error is amplified 1/J;
#: 3. calibration pooled over systems that the data say differ: Δθ, hence the ranking, is
#:    biased (Fiedler App. C);
#: 4. missing labels or empty groups: some numbers are missing or rest on very few items;
#: 5. a calibration set too small for the target width: honest but wide intervals;
#: 6. a design remark, then anything not listed here;
#: 7. near ties: the bottom line's ranking already says which steps are not settled.
#:
#: Within one rank an ``error`` comes before a ``warning``, a ``warning`` before a
#: ``caution``, then the report's own order.
WARNING_PRIORITY = (
    ("ConvergenceWarning",),
    ("low_j", "LowJudgeQualityWarning"),
    ("PooledCalibrationWarning", "calibration_design", "CalibrationDesignWarning"),
    ("MissingLabelWarning", "SmallSampleWarning"),
    ("calibration_size", "CalibrationSizeWarning"),
    ("DesignWarning",),
    ("near_tie", "NearTieWarning"),
)
_LEVEL_ORDER = {"error": 0, "warning": 1, "caution": 2, "info": 3}

#: Strata whose ranking the bottom line spells out (the table has every stratum's rows).
_BOTTOM_LINE_MAX_STRATA = 5

#: The diagnosis code (warning class) of ``check_pooled_calibration``'s warning.
_POOLED_CODE = "PooledCalibrationWarning"


@dataclass(frozen=True)
class _Context:
    """What the sections describe: the counts, the fit and the numbers computed from them."""

    counts: object
    fit: object
    tables: dict
    figures: dict
    records: list
    recommendation: str | None
    notes: list
    settings: dict
    ci_prob: float
    pooled_dims: tuple = ()

    @property
    def pct(self) -> str:
        """The interval probability as text, ``"95%"``."""
        return f"{100 * self.ci_prob:g}%"

    @property
    def n_systems(self) -> int:
        return self.counts.sizes["system"]

    @property
    def n_strata(self) -> int:
        return self.counts.sizes["stratum"]

    @property
    def shared(self):
        """The dims the calibration is shared over (empty: system-specific calibration)."""
        return self.counts.calibration_shared_over

    @property
    def has_joint(self) -> bool:
        """Whether the counts carry a joint verdict table (paired design)."""
        return bool(getattr(self.counts, "has_joint", False))

    @property
    def bayes(self) -> bool:
        """Whether a Bayesian fit was given."""
        return self.fit is not None

    @property
    def clusters(self) -> bool:
        """Whether some item was judged several times (repeated verdicts, ``has_clusters``)."""
        return bool(getattr(self.counts, "has_clusters", False))

    @property
    def labelled_repeats(self) -> bool:
        """Whether labelled items were judged several times (``calibration_clusters``)."""
        return getattr(self.counts, "calibration_clusters", None) is not None

    @property
    def random(self) -> bool:
        """Whether the labelled items are a random subset of the judged ones (random design)."""
        return self.counts.design == "random"

    @property
    def method(self) -> str:
        """The corrected estimator of the θ table (``estimate``'s ``method``)."""
        return str(self.tables["theta"].attrs.get("method", "lang-reiczigel"))

    @property
    def corrected_label(self) -> str:
        """The corrected estimator's short name, as in the forest plot's legend."""
        return str(self.tables["theta"].attrs.get("labels", {}).get("corrected", self.method))

    @property
    def test_set(self) -> bool:
        """Whether the estimand is the test-set θ (a fit made with ``estimand="test-set"``)."""
        return self.tables["theta"].attrs.get("estimand") == "test-set"


def write_sections(
    counts, fit, tables, figures, records, recommendation, notes, settings, ci_prob,
    pooled_dims=(),
) -> list[ReportSection]:  # fmt: skip
    """Return the report's sections, in the order of :data:`SECTIONS`.

    ``pooled_dims`` are the dims over which the fit pools calibration that was tested with
    ``check_pooled_calibration`` (its warnings are among ``records``). The warnings section
    adds a table ``warnings_<code>`` to ``tables`` for each warning code with many records.
    """
    c = _Context(
        counts, fit, tables, figures, records, recommendation, notes, settings, ci_prob,
        tuple(pooled_dims),
    )  # fmt: skip
    writers = {
        "bottom_line": _write_bottom_line,
        "estimand": _write_estimand,
        "design": _write_design,
        "intervals": _write_intervals,
        "accuracy": _write_accuracy,
        "judge": _write_judge,
        "comparisons": _write_comparisons,
        "warnings": _write_warnings,
        "checks": _write_checks,
        "reproducibility": _write_reproducibility,
    }
    sections = []
    for key, title in SECTIONS.items():
        section = ReportSection(key, title)
        writers[key](section, c)
        sections.append(section)
    return sections


def most_important_warning(records):
    """Return the record that matters most by :data:`WARNING_PRIORITY` (None without any)."""
    rank = {code: i for i, codes in enumerate(WARNING_PRIORITY) for code in codes}
    unlisted = rank["near_tie"]  # unlisted codes go after the listed ones but before ties

    def key(item):
        position, record = item
        code = str(getattr(record, "code", ""))
        level = _LEVEL_ORDER.get(diagnosis_level(record), len(_LEVEL_ORDER))
        return (rank.get(code, unlisted - 0.5), level, position)

    ordered = sorted(enumerate(records), key=key)
    return ordered[0][1] if ordered else None


def _write_bottom_line(s: ReportSection, c: _Context) -> None:
    """Write the answer first: θ best first, how sure the order is, the main warning."""
    table = c.tables["bottom_line"]
    if c.bayes:
        how = "exact posterior" if c.fit.config.get("method") == "exact" else "MCMC"
        what = f"the Bayesian posterior mean ({how}) with its {c.pct} equal-tailed interval"
        rule = f"P(θ_this > θ_next) ≥ {SETTLED_PROBABILITY:g}"
    else:
        what = f"the closed form {c.corrected_label} with its {c.pct} interval"
        rule = f"the {c.pct} interval of Δθ to the next excludes 0"
    s.text(
        f"True accuracy θ, corrected for the judge's errors: {what}; best first"
        + (" in each stratum" if c.n_strata > 1 else "")
        + (
            f". A step of the ranking is **settled** when {rule}."
            if c.n_systems > 1
            else ". One system: nothing to rank."
        )
    )
    hidden = table.attrs.get("hidden", 0)
    caption = "θ per system, best first" + (
        f" (the top {BOTTOM_LINE_MAX_SYSTEMS}; {hidden} more rows in section 4)" if hidden else ""
    )
    s.table("bottom_line", caption + ".")
    if c.n_systems > 1:
        s.bullets(_ranking_lines(table, c))
    record = most_important_warning(c.records)
    if record is None:
        s.text("No warnings (section 7).")
        return
    others = len(c.records) - 1
    more = f"; {others} more in section 7" if others else "; section 7 says what to do"
    s.text([
        f"**Warning that matters most** ({diagnosis_level(record)} "
        f"`{getattr(record, 'code', '')}`{more}): ",
        Plain(record.message),
    ])  # fmt: skip


def _ranking_lines(table: pd.DataFrame, c: _Context) -> list:
    """One line per stratum: the order, and whether every step of it is settled."""
    lines = []
    strata = list(dict.fromkeys(table["stratum"])) if "stratum" in table else [None]
    for i, stratum in enumerate(strata[:_BOTTOM_LINE_MAX_STRATA]):
        every = table if stratum is None else table[table["stratum"] == stratum]
        rows = every[np.isfinite(every["theta"].to_numpy(float))]  # systems with an estimate
        if stratum is None:
            parts: list = ["Ranking: "]
        elif i == 0 and table.attrs.get("total"):
            parts = [f"Ranking over {stratum}: "]
        else:
            parts = ["Ranking in stratum “", Plain(stratum), "”: "]
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
            nxt = rows["system"].iloc[rows.index.get_loc(first.name) + 1]
            if "prob_greater" in rows and first["prob_greater"] == first["prob_greater"]:
                sure = f"P(θ_a > θ_b) {format_probability(first['prob_greater'], relation=True)}"
            else:
                sure = "its Δθ interval includes 0 or is unknown"
            parts += [
                f" — **not settled** ({len(open_steps)} of {len(steps)} steps): “",
                Plain(first["system"]),
                "” over “",
                Plain(nxt),
                f"”: {sure}",
            ]
        missing = every["system"][~every.index.isin(rows.index)].tolist()
        if missing:
            parts.append("; no estimate for ")
            for j, name in enumerate(missing):
                parts += [", " if j else "", "“", Plain(name), "”"]
        lines.append(parts)
    if len(strata) > _BOTTOM_LINE_MAX_STRATA:
        lines.append(f"… and {len(strata) - _BOTTOM_LINE_MAX_STRATA} more strata in the table.")
    return lines


def _write_estimand(s: ReportSection, c: _Context) -> None:
    """1. The estimand θ, that it is corrected, and single-system estimation or comparison."""
    per = " and stratum" if c.n_strata > 1 else ""
    s.text(
        (
            "The estimand is **the test-set θ**: the share of truly correct answers among this "
            f"evaluation's items, per system{per} (the labelled items' known truth plus what "
            "the judge's verdicts say of the unlabelled ones) — not the accuracy in the "
            "population the items were drawn from, so its intervals carry no sampling of "
            "items, only the uncertainty about which unlabelled answers are correct. The LLM "
            if c.test_set
            else "The estimand is **θ, the true accuracy**: the probability that a system's "
            "answer to an item drawn like the test items is truly correct (as a human would "
            f"label it), per system{per} — the share of correct answers in the population the "
            "test items were sampled from, not only in this test set (so the intervals carry "
            "test-set sampling). The LLM "
        )
        + "judge's share of items judged correct, p̂ = k/n, is **not** θ: it "
        "estimates p = θ·q1 + (1 − θ)(1 − q0), where q0 (specificity) = P(judged incorrect | "
        "truly incorrect) and q1 (sensitivity) = P(judged correct | truly correct). p̂ is "
        "biased towards 1 − q0 for weak systems and towards q1 for strong ones."
    )
    s.text(
        "**All θ estimates below are corrected** for the judge's errors, which are estimated "
        "from a human-labelled calibration set; p̂ is shown only for reference."
        + (
            f" This report covers {c.n_systems} systems: besides each system's θ (single-system "
            "estimation), it compares them (differences Δθ = θ_a − θ_b), which needs a "
            "calibration design that keeps the judge's errors comparable across systems."
            if c.n_systems > 1
            else " This is single-system estimation; there is nothing to compare."
        )
    )


def _labelling_design(c: _Context) -> str:
    """Return the labelling design in a sentence, and what goes wrong if declared wrongly."""
    if c.random:
        return (
            "**Labelling design: random.** The judge graded every item and humans labelled a "
            "random subset of those same items, so each item is counted once (n, k: the "
            "unlabelled items; m0, m1: the labelled ones) and the share of labelled items that "
            "are truly correct, m1/(m0 + m1), is itself evidence about θ, which the random "
            "design's estimators use. If the labelled items were in fact chosen per human "
            "label (a fixed number of each), this declaration is wrong: θ would be pulled "
            "towards the labelled share m1/(m0 + m1) and the intervals would be too narrow; "
            'declare `design="stratified"` then.'
        )
    return (
        "**Labelling design: stratified** (Lee et al.). The human-labelled calibration items "
        "were sampled per human label (m0 truly incorrect and m1 truly correct items, numbers "
        "fixed by design) and are separate from the judged test items, so m0 and m1 say "
        "nothing about θ. If the labelled items were in fact a random subset of the judged "
        "items, this declaration wastes their evidence (intervals up to several times wider "
        "than needed) and may count items both judged and labelled twice; declare "
        '`design="random"` (`--design random`) then.'
    )


def _write_design(s: ReportSection, c: _Context) -> None:
    """2. The labelling and calibration designs, the sizes, pairing of test items."""
    s.text(_labelling_design(c))
    n_cal = int(c.counts.dataset["m0"].sum() + c.counts.dataset["m1"].sum())
    if c.shared:
        design = (
            f"**Shared calibration**: one calibration set serves every {' and '.join(c.shared)} "
            "label (the same human-labelled items correct all of them). Shared calibration "
            "assumes the judge errs alike on every system (ΔJ = 0); it cannot be checked from "
            "a shared set itself and needs justification (Fiedler Sec. 7, App. C)."
        )
        if "system" in c.shared:
            cal = c.counts.shared_calibration_counts(list(c.shared))
            n_cal = int(cal["m0"].sum() + cal["m1"].sum())
    else:
        design = (
            "**System-specific calibration**: every (system, stratum) group has its own "
            "human-labelled calibration items, so the judge's q0, q1 are estimated separately "
            "for each and ΔJ can be checked."
        )
    s.text(design)
    if c.bayes and c.fit.config["calibration"] != "separate":
        pooled = c.fit.config.get("pool_over") or ["system", "stratum"]
        s.text(
            f"The Bayesian model uses **{c.fit.config['calibration']} calibration** pooled over "
            f"{', '.join(pooled)}: "
            + (
                "one q0, q1 for all groups along those dims."
                if c.fit.config["calibration"] == "shared"
                else "each group's q0, q1 drawn from a common population (partial pooling), "
                "whose spread σ is estimated."
            )
            + " The closed forms use each group's calibration counts as given."
        )
        _write_pooling_check(s, c)
    test_items, cal_items, unit = _sizes(c.counts, n_cal)
    if c.random:
        s.text(
            f"Sizes: {test_items} unlabelled judged items and {cal_items} labelled items "
            f"(judged and labelled) in all; per group (m0 labelled {unit} humans called "
            f"incorrect and m1 called correct, tn and tp of them judged right):"
        )
        s.table("counts", f"Counts per system and stratum: n unlabelled {unit}, k of them "
                f"judged correct, p̂ = k/n; labelled m0, tn, m1, tp.")  # fmt: skip
    else:
        s.text(
            f"Sizes: {test_items} judged test items and {cal_items} human-labelled calibration "
            f"items in all; per group (m0 truly incorrect and m1 truly correct calibration "
            f"{unit}, tn and tp of them judged right):"
        )
        s.table("counts", f"Counts per system and stratum: n test {unit}, k judged correct, "
                f"p̂ = k/n; calibration m0, tn, m1, tp.")  # fmt: skip
    if c.n_systems > 1:
        if c.has_joint:
            joint = c.counts.joint
            per_stratum = joint.sum("pattern")
            items = ", ".join(
                f"{int(v)} in stratum {st}" if c.n_strata > 1 else f"{int(v)}"
                for st, v in zip(per_stratum["stratum"].values, per_stratum.values, strict=True)
            )
            s.text([
                "**Paired design**: the systems answered shared items (",
                Plain(items),
                " items answered "
                "by every system), and the joint verdict table is used: comparisons resample "
                "items, keeping each item's verdicts together (Fiedler App. B)"
                + "."
                + (
                    ""
                    if not c.bayes
                    else " The Bayesian model is the paired one (latent joint correctness)."
                    if c.fit.config.get("paired")
                    else " The Bayesian model is **unpaired** (it treats the systems' test "
                    "items as independent, so its Δθ intervals ignore the pairing and are "
                    "wider when correctness is positively correlated); fit with "
                    "method='mcmc' (`bayesjudge report --method mcmc`) for the paired model"
                    + (
                        ", or use bayesjudge.fit_pairwise: the joint model takes at most "
                        f"{MAX_PAIRED_SYSTEMS} systems"
                        if c.n_systems > MAX_PAIRED_SYSTEMS
                        else ""
                    )
                    + "."
                ),
            ])  # fmt: skip
        elif c.clusters:
            s.text(
                "**Repeated verdicts, unpaired comparisons**: items were judged several times "
                "(repeated verdicts of an item, e.g. epochs), so every interval treats the "
                "items, not the verdicts, as the independent units (a cluster-robust variance "
                "or a bootstrap of items with all their verdicts). Repeated verdicts carry no "
                "joint verdict table, so comparisons treat the systems' test sets as "
                "independent: conservative when the systems answered the same items and "
                "their correctness is positively correlated."
            )
        else:
            s.text(
                "**Unpaired design**: no item ids link the systems' test items (no joint verdict "
                "table), so comparisons treat the systems' test sets as independent. If the "
                "systems answered the same items, give the item column (`--item`) — pairing "
                "narrows Δθ intervals when correctness is correlated."
            )


#: Section 3's description of each corrected estimator (``estimate``'s method).
_CORRECTED_TEXT = {
    "lang-reiczigel": "**Rogan–Gladen θ̂ = (p̂ + q̂0 − 1)/(q̂0 + q̂1 − 1) with the Lang–Reiczigel "
    "interval** (Lee et al. eqs. 5–8; clipped to [0, 1]): a confidence interval that carries "
    "test-set sampling (n) and calibration sampling (m0, m1).",
    "likelihood": "**Maximum-likelihood θ̂ with the profile-likelihood interval** (Tenenbein's "
    "double-sampling estimator θ̂ = φ̂·tp/(tp + fp) + (1 − φ̂)·fn/(fn + tn), φ̂ the share of "
    "all judged items judged correct): uses the full likelihood of the random design — every "
    "item's verdict, and the labelled items' human labels, whose share m1/(m0 + m1) is itself "
    "evidence about θ; a confidence interval that carries the sampling of the items and of "
    "which of them were labelled.",
    "ppi++": "**PPI++ θ̂ with its Wald interval** (prediction-powered inference, power-tuned "
    "λ): valid where the labelled items are a random subset of the judged ones; carries "
    "test-set and labelled-set sampling.",
    "cluster-delta": "**Rogan–Gladen θ̂ on p̂ = Σk/Σr with a cluster-robust Wald interval "
    "(items as the units)**: the items were judged several times (repeated verdicts, e.g. "
    "epochs), so p̂ pools every verdict and its variance is that of a ratio of cluster sums "
    "(`bayesjudge.core.cluster.cluster_delta`); treating the verdicts as independent items "
    "would understate the uncertainty.",
    "cluster-bootstrap": "**Rogan–Gladen θ̂ on p̂ = Σk/Σr with a percentile cluster bootstrap "
    "(items resampled with all their verdicts)**: the items were judged several times "
    "(repeated verdicts, e.g. epochs), so the interval resamples items, not verdicts, and the "
    "calibration set (`bayesjudge.core.cluster.cluster_bootstrap`).",
}


def _sizes(counts, n_cal: int) -> tuple[str, str, str]:
    """Test and labelled sizes as text, and what n and m count ("items" or "verdicts").

    With repeated verdicts of an item (clusters) n and m count verdicts, not items: the text
    says "5 verdicts of 2" unlabelled items, as the counts' own header does.
    """
    ds = counts.dataset
    n_test = int(ds["n"].sum())
    test = f"{n_test}"
    cal = f"{n_cal}"
    repeated = False
    if "clusters" in ds.data_vars:
        test, repeated = f"{n_test} verdicts of {int(ds['clusters'].sum())}", True
    shared = n_cal != int(ds["m0"].sum() + ds["m1"].sum())  # one set counted once
    if "calibration_clusters" in ds.data_vars and not shared:
        cal, repeated = f"{n_cal} verdicts of {int(ds['calibration_clusters'].sum())}", True
    return test, cal, "verdicts" if repeated else "items"


def _write_pooling_check(s: ReportSection, c: _Context) -> None:
    """Section 2, continued: the test of the calibration that the fit pools over groups."""
    if not c.pooled_dims:
        return
    found = [r for r in c.records if getattr(r, "code", "") == _POOLED_CODE]
    check = "`bayesjudge.diagnostics.check_pooled_calibration`"
    groups = " and ".join(c.pooled_dims)
    if not found:
        s.text(
            f"**Pooling check** ({check}): the labelled items of each {groups} show no "
            "significant difference of the judge's q0, q1 between the pooled groups. That "
            "does not prove them equal: with few labelled items per group a real difference "
            "can go undetected, and pooling would then bias θ."
        )
        return
    parts = [
        f"**Pooling check** ({check}): the judge's q0, q1 differ between the groups this fit "
        f"pools over {groups}, so one q0, q1 for all of them biases θ (also in section 7): "
    ]
    for i, record in enumerate(found[:_MAX_BULLETS_PER_CODE]):
        parts += [" " if i else "", Plain(record.message)]
    if len(found) > _MAX_BULLETS_PER_CODE:
        parts.append(f" ({len(found) - _MAX_BULLETS_PER_CODE} more in section 7.)")
    s.text(parts)


def _write_intervals(s: ReportSection, c: _Context) -> None:
    """3. Which estimator gives each interval and which randomness it carries."""
    s.text(f"Every interval has probability {c.pct}.")
    naive = (
        "**naive p̂ = Σk/Σr (the share of verdicts judged correct) with a cluster-robust Wilson "
        "interval** (`bayesjudge.core.cluster.cluster_wilson`: Wilson at the effective sample "
        "size p̂(1 − p̂)/V, V the variance of a ratio of cluster sums over items)"
        if c.clusters
        else "**naive p̂ with Wilson interval**"
    )
    items = [
        f"{naive}: carries test-set sampling only, and is an interval "
        "for p, not θ — its coverage of θ can be near 0.",
        _CORRECTED_TEXT.get(
            c.method,
            f"**corrected θ̂ (`bayesjudge.estimate(method={c.method!r})`)**: a confidence "
            "interval that carries test-set and calibration sampling.",
        )
        + (
            f" It is the random design's estimator (`bayesjudge.estimate` without a method "
            f"chooses `method={c.method!r}` for these counts), in place of Lang–Reiczigel, "
            "which treats m0, m1 as fixed and so ignores what they say about θ."
            if c.random
            else ""
        ),
    ]
    if c.random:
        items.append(
            "**Human-only baseline m1/(m0 + m1) with Wilson interval**: the labelled items "
            "alone, without the judge; valid because they are a random subset of the items. "
            "The judge is worth using only where the corrected interval is narrower (Lee et al. "
            "Sec. 6; column `width: corrected / human-only` below 1)."
        )
    items.append(
        "**q0, q1 with Wilson intervals; J and ΔJ with Newcombe's hybrid score interval**: carry "
        "calibration sampling only (the diagnostic question is how well the judge is known)."
        + (
            " Labelled items were judged several times: q̂0, q̂1 count verdicts, and the q0, "
            "q1, J intervals of section 5 and the low-J warning use Kish's effective counts "
            "(`bayesjudge.core.cluster.calibration_effective_counts`: the number of "
            "independent verdicts with the same variance), so that they count items, not "
            "verdicts. The ΔJ intervals and the calibration-design rule of section 6 still "
            "count verdicts as labelled items and are too narrow."
            if c.labelled_repeats
            else ""
        )
    )
    if c.n_systems > 1:
        items.append(_frequentist_comparison_text(c))
    if c.bayes:
        items.append(
            "**Bayesian posterior** (`bayesjudge.fit`, "
            f"{c.settings['Bayesian fit']}): equal-tailed credible intervals (ETI) given the test "
            "and calibration counts and the priors; they carry the uncertainty of the test "
            "share and of q0, q1 (and, for hierarchical calibration, of the population of "
            "judges). Differences are taken draw by draw, so they keep the posterior "
            "correlation of the two systems; P(θ_a > θ_b) is the posterior share of draws with "
            "θ_a > θ_b."
            + (
                " For repeated verdicts of an item the fit is the item-effect model: each item "
                "has its own propensity to be called correct, so an item's verdicts are "
                "correlated and the items, not the verdicts, carry the evidence."
                if c.clusters
                else ""
            )
        )
    else:
        items.append(
            "**Bayesian parts were not run** (no fit given): no posterior θ, no P(θ_a > θ_b), "
            "no posterior predictive check. Run `bayesjudge report --method exact` (or mcmc), "
            "or pass `fit=bj.fit(counts, ...)`."
        )
    items.append(
        (
            "The closed-form intervals treat an item's repeated verdicts as one cluster; none "
            "carries the choice of which items were labelled beyond random sampling; they assume "
            if c.clusters
            else "No interval here carries repeated judge runs (one verdict per item) or the "
            "choice of which items were labelled beyond random sampling; they assume "
        )
        + (
            "the labelled items are a random subset of the judged items."
            if c.random
            else "the calibration items are representative of the test items given their truth."
        )
    )
    s.bullets(items)


def _frequentist_comparison_text(c: _Context) -> str:
    """Return the bullet of section 3 naming the frequentist Δθ and the randomness it carries."""
    return (
        "**Frequentist Δθ** "
        f"(`{c.settings.get('frequentist comparison', 'bayesjudge.compare: not run')}`): "
        + (
            (
                "a paired bootstrap that resamples items (keeping each item's verdicts on "
                "all systems together) and the calibration sets"
                if c.has_joint
                else "a bootstrap that resamples each system's test set and the "
                "calibration sets independently"
            )
            if c.settings.get("frequentist method") == "bootstrap"
            else (
                "a bootstrap that resamples each system's test items with all their "
                "verdicts, and the calibration "
                + ("items with all their verdicts" if c.labelled_repeats else "sets")
            )
            if c.settings.get("frequentist method") == "cluster-bootstrap"
            else (
                "a normal interval with a cluster-robust delta-method standard error "
                "(`bayesjudge.core.cluster.cluster_difference_delta`: each system's p̂ with "
                "the variance of a ratio of cluster sums over items"
                + (", q̂0 and q̂1 likewise over labelled items" if c.labelled_repeats else "")
                + "), which carries test-set and calibration sampling"
            )
            if c.settings.get("frequentist method") == "cluster-delta"
            else "a normal interval with Fiedler's delta-method standard error (App. B), "
            "which carries test-set and calibration sampling"
            + (" and the pairing of verdicts on shared items" if c.has_joint else "")
        )
        + (
            "; with shared calibration the common calibration draw enters both systems."
            if "system" in c.shared
            else "."
        )
    )


def _write_accuracy(s: ReportSection, c: _Context) -> None:
    """4. θ per system and stratum (and θ_total), with the forest plot."""
    s.table(
        "theta",
        "θ per system and stratum: naive p̂ (for reference), corrected θ̂"
        + (", the human-only baseline (population θ)" if c.random else "")
        + (" and the ratio of their interval widths" if "width_ratio" in c.tables["theta"] else "")
        + f" and, if run, the Bayesian posterior mean; {c.pct} intervals in brackets.",
    )
    if c.test_set and c.tables["theta"].attrs.get("closed_form_estimand") != "test-set":
        s.text(
            "The closed-form corrected θ̂ here is for the population θ: the test-set θ has a "
            "closed form only for the random design's likelihood (each group with its own "
            "labelled items); the Bayesian column is the test-set θ."
        )
    if "width_ratio" in c.tables["theta"]:
        _write_judge_helps(s, c)
    if "theta_total" in c.tables:
        s.table(
            "theta_total",
            f"Bayesian θ_total per system over all strata (strata weighted as configured: "
            f"{c.fit.config.get('aggregate')}); {c.pct} ETI.",
        )
    methods = (
        f"{c.corrected_label}, human labels only" if c.random else f"{c.corrected_label} (blue)"
    )
    s.figure(
        "theta_forest",
        f"Forest plot of θ per system{' and stratum' if c.n_strata > 1 else ''}: naive p̂ "
        f"(grey; an estimate of p, not θ), {methods} and Bayesian (orange), {c.pct} intervals.",
    )


def _write_judge_helps(s: ReportSection, c: _Context) -> None:
    """Section 4, random design: where the judge narrows the interval (Lee et al. Sec. 6)."""
    theta = c.tables["theta"]
    ratio = theta["width_ratio"].to_numpy(float)
    known = ratio[ratio == ratio]
    helps = int((known < 1).sum())
    text = [
        "**Does the judge help?** The human-only baseline estimates θ from the labelled items "
        "alone. The judge is worth its correction only where the corrected interval is "
        "narrower than the human-only one (Lee et al. Sec. 6): "
    ]
    if not known.size:
        s.text([*text, "no group has both intervals, so this cannot be told here."])
        return
    text.append(
        f"here it is narrower in {helps} of {known.size} groups"
        + (f" (median width ratio {float(np.median(known)):.2f})." if known.size > 1 else ".")
    )
    worse = [(a, b) for a, b, r in zip(theta["system"], theta["stratum"], ratio, strict=True)
             if r >= 1]  # fmt: skip
    if worse:
        text.append(" Where it is not (")
        for i, (system, stratum) in enumerate(worse[:_MAX_BULLETS_PER_CODE]):
            text += [", " if i else "", Plain(system)]
            if c.n_strata > 1:
                text += [" / ", Plain(stratum)]
        if len(worse) > _MAX_BULLETS_PER_CODE:
            text.append(f" and {len(worse) - _MAX_BULLETS_PER_CODE} more")
        text.append(
            "), the judge adds no precision: report the human-only estimate there, or label "
            "more items."
        )
    s.text(text)


def _write_judge(s: ReportSection, c: _Context) -> None:
    """5. The judge's q0, q1 and J with intervals (and the calibration scales σ)."""
    s.text(
        "J = q0 + q1 − 1 (Youden's index) measures how well the judge separates correct from "
        "incorrect answers; the correction divides by J, so every error of θ̂ is amplified by "
        f"about 1/|J|. J = 0 is a judge no better than chance, and J < 0 one that is worse (it "
        "calls truly incorrect answers correct more often than truly correct ones: check that "
        "the labels, e.g. `--positive`, are not swapped); for 0 < J < "
        f"{LOW_J_THRESHOLD:g} the amplification exceeds 5×."
    )
    effective = " on effective counts (labelled items judged several times)"
    s.table("judge", f"Judge quality per system and stratum with {c.pct} intervals "
            f"(closed form: Wilson for q0, q1, Newcombe for J"
            f"{effective if c.labelled_repeats else ''}; Bayesian: ETI).")  # fmt: skip
    if "calibration_scale" in c.tables:
        s.text(
            "Hierarchical calibration: σ is the spread of the groups' logit q0 and logit q1 "
            "around their population mean. σ near 0 says the judge behaves alike across the "
            "pooled groups (sharing would be defensible); a large σ says it does not."
        )
        s.table("calibration_scale", f"Posterior of the calibration scales σ: mean [{c.pct} ETI].")
    s.figure("judge", f"Judge diagnostics: q0, q1 and J per group with {c.pct} intervals; the "
             "dashed line marks J = 0, the dotted one J = 0.2.")  # fmt: skip


def _write_comparisons(s: ReportSection, c: _Context) -> None:
    """6. Δθ and ΔJ per pair, and the calibration design the diagnostics recommend."""
    if c.n_systems < 2:
        s.text("One system: there are no comparisons.")
        return
    paired_note = (
        " The frequentist Δθ is paired (items resampled with all their verdicts)."
        if c.has_joint
        else ""
    ) + (
        (
            " The Bayesian Δθ is from the paired model."
            if c.fit.config.get("paired")
            else " The Bayesian Δθ is from the unpaired model."
        )
        if c.bayes and c.has_joint
        else ""
    )
    if "comparison" in c.tables["theta_difference"]:
        s.text(
            f"**{c.n_systems} systems** make {c.n_systems * (c.n_systems - 1) // 2} pairs; the "
            "tables and figures compare each system with the best one (by corrected θ̂, "
            "averaged over strata) and with its neighbour in rank "
            f"({2 * c.n_systems - 3} pairs, column `comparison`): how far each is from the "
            "best, and whether each step of the ranking is decided. The closed-form Δθ "
            "(delta method, with P(θ_a > θ_b)) and ΔJ (Newcombe) of every pair are in "
            "`comparisons_all_pairs.csv` beside the report."
        )
    s.table(
        "theta_difference",
        f"Δθ = θ_a − θ_b per pair and stratum with {c.pct} intervals"
        + (
            "; P(a > b) is the posterior probability that θ_a > θ_b."
            if c.bayes
            else " (no Bayesian fit, so no P(θ_a > θ_b))."
        )
        + paired_note,
    )
    if "theta_difference" in c.figures:
        s.figure(
            "theta_difference",
            f"Pairwise Δθ with {c.pct} intervals against 0 (dashed)"
            + (
                " (frequentist and Bayesian); P(θ_a > θ_b) from the posterior beside each pair."
                if c.bayes
                else " (frequentist)."
            ),
        )
    _write_judge_differences(s, c)


def _write_judge_differences(s: ReportSection, c: _Context) -> None:
    """Section 6, continued: ΔJ per pair and the recommended calibration design."""
    if "youden_difference" in c.tables:
        fit_design = c.fit.config["calibration"] if c.bayes else "separate"
        s.text(
            "ΔJ = J_a − J_b checks whether the judge errs alike on both systems. An "
            "interval excluding 0 is a strong warning that a shared calibration set would "
            "bias the comparison (Fiedler App. C); the closed forms here use each system's "
            "own calibration and stay valid"
            + (
                ", but the Bayesian fit pools the calibration "
                + (
                    "into one q0, q1 (shared)"
                    if fit_design == "shared"
                    else "partially (hierarchical), which shrinks the systems' J towards each other"
                )
                + ", so its Δθ relies on ΔJ ≈ 0"
                + (" and is biased otherwise." if fit_design == "shared" else ".")
                if fit_design != "separate"
                else "."
            )
        )
        s.table(
            "youden_difference",
            f"ΔJ per pair and stratum with {c.pct} intervals: Newcombe (closed form), "
            "percentile bootstrap over calibration items, and, if run, Bayesian ETI; the "
            "last column is Fiedler's App. C bias that one shared calibration set would add "
            "to Δθ̂, evaluated at the estimates.",
        )
    else:
        s.text(
            "ΔJ cannot be estimated: the systems share one calibration set, so their J are "
            "the same by construction. Whether the judge errs alike on every system is an "
            "untested assumption here; label a small calibration set per system to check it."
        )
    if c.recommendation:
        s.text([
            "**Calibration design**: ",
            Plain(c.recommendation),
            " (The rule reports a difference "
            "only when a simultaneous interval of Δq0, Δq1 or ΔJ excludes 0, a false-alarm "
            "rate of at most 5 %; it calls sharing defensible only when an upper confidence "
            "bound of the App. C bias is below half the standard error of Δθ; otherwise it "
            "keeps system-specific calibration as the safe choice.)",
        ])  # fmt: skip


def _write_warnings(s: ReportSection, c: _Context) -> None:
    """7. The diagnoses, and what to do about them."""
    if c.records:
        s.text(
            "The diagnostics below flag trouble; where they do, **weaken the claim** rather than "
            "choosing the most favourable estimate (Fiedler Sec. 7, item 7)."
        )
        _warning_blocks(s, c.records, c.tables)
    else:
        s.text("No warnings: judge quality, ΔJ, near ties and calibration size raised no flag.")
    s.bullets(c.notes)


def _write_checks(s: ReportSection, c: _Context) -> None:
    """8. Sampler diagnostics and the posterior predictive check."""
    if not c.bayes:
        s.text(
            "The Bayesian parts were not run (no fit): no sampler diagnostics and no "
            "posterior predictive check."
        )
    else:
        d = c.fit.diagnostics()
        if c.fit.config.get("method") == "exact":
            s.text(
                f"Exact posterior (no MCMC): {d['draws']} independent draws; nothing to "
                "diagnose for convergence."
            )
        else:
            s.text(
                f"Sampler: {d['divergences']} divergences in {d['draws']} draws; largest r_hat "
                f"{d['r_hat_max']:.3f} (should be ≤ 1.01); smallest bulk ESS "
                f"{d['ess_bulk_min']:.0f} and tail ESS {d['ess_tail_min']:.0f} (should be ≥ 400)."
            )
        if "ppc" in c.tables:
            bad = c.tables["ppc"]["outside"].sum()
            s.text(
                "Posterior predictive check: the observed counts against counts replicated "
                f"from the posterior; mid-p p-values outside the central {c.pct} are flagged "
                f"({int(bad)} of {len(c.tables['ppc'])} flagged). "
                + (
                    "This fit has separate calibration: every group has its own θ, q0 and q1, "
                    "so the model reproduces each group's counts by construction and the check "
                    "cannot detect misfit (p-values near 0.5); it has power where groups share "
                    "parameters (shared or hierarchical calibration)."
                    if c.fit.config["calibration"] == "separate" and not c.fit.config.get("paired")
                    else "Groups share parameters in this fit ("
                    + (
                        "the paired model's joint verdict table"
                        if c.fit.config["calibration"] == "separate"
                        else f"{c.fit.config['calibration']} calibration"
                    )
                    + "), so a flagged count says the model does not reproduce the data there."
                )
            )
            s.table("ppc", "Posterior predictive p-values per observed count.")
            s.figure("ppc", f"Observed shares (dots) against their replicated {c.pct} "
                     "intervals (grey).")  # fmt: skip
        else:
            s.text("The posterior predictive check was not run (ppc=False).")


def _write_reproducibility(s: ReportSection, c: _Context) -> None:
    """9. The settings that reproduce every number."""
    s.table("settings", "Settings of this report.")


def _warning_blocks(section: ReportSection, records, tables: dict) -> None:
    """Bullets of the diagnoses; a code with many records gets one bullet and a table."""
    by_code: dict[str, list] = {}
    for r in records:
        by_code.setdefault(str(getattr(r, "code", "")), []).append(r)
    items, extra = [], []
    for code, group in by_code.items():
        if len(group) <= _MAX_BULLETS_PER_CODE or not all(hasattr(r, "values") for r in group):
            items += [[f"**{diagnosis_level(r)}** `{code}`: ", Plain(r.message)] for r in group]
            continue
        items.append([
            f"**{diagnosis_level(group[0])}** `{code}` ({len(group)} cases, each in the table "
            f"below; the first in full): ",
            Plain(group[0].message),
        ])  # fmt: skip
        rows = []
        for r in group:
            row = {"system or pair": r.system, "stratum": r.stratum}
            values = {k: v for k, v in r.values.items() if v is not None}
            head = next(iter(values), None)  # the estimate: its interval goes beside it
            for key, value in values.items():
                row[f"{head}_{key}" if key in ("lower", "upper") else key] = value
            rows.append(row)
        name = f"warnings_{code}"
        tables[name] = pd.DataFrame(rows)
        extra.append((name, f"All {len(group)} `{code}` cases with their numbers."))
    section.bullets(items)
    for name, caption in extra:
        section.table(name, caption)
