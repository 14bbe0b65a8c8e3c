"""Building the report: :func:`build_report` computes it, :func:`write_report` also saves it.

The driver of the package: it checks the input, computes the tables
(:mod:`~bayesjudge.report.tables`), gathers and emits the diagnoses, draws the figures
(:mod:`~bayesjudge.report.figures`), writes the sections (:mod:`~bayesjudge.report.sections`)
and returns the :class:`~bayesjudge.report.document.Report`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesjudge._progress import REPORT_PROGRESS_MIN_SYSTEMS, advance, steps_bar
from bayesjudge.core._validation import check_alpha
from bayesjudge.data import CategoricalCounts, CategoricalJuryCounts, JudgeCounts
from bayesjudge.data.jury import JuryCounts
from bayesjudge.diagnostics import caught_by_category, emit_caught, emit_grouped
from bayesjudge.report import tables as _tables
from bayesjudge.report.categorical import build_categorical_report
from bayesjudge.report.categorical_jury import build_categorical_jury_report
from bayesjudge.report.document import Report
from bayesjudge.report.figures import draw_figures
from bayesjudge.report.jury import build_jury_report
from bayesjudge.report.sections import write_sections

__all__ = ["PROGRESS_MIN_SYSTEMS", "build_report", "write_report"]

PROGRESS_MIN_SYSTEMS = REPORT_PROGRESS_MIN_SYSTEMS


def build_report(
    counts: JudgeCounts | CategoricalCounts | None = None,
    *,
    fit=None,
    scores=None,
    alpha: float = 0.05,
    comparison_method: str | None = None,
    n_resamples: int = 10_000,
    random_seed: int | None = None,
    target_width: float | None = None,
    ppc: bool = True,
    warn: bool = True,
    title: str = "LLM-as-a-judge evaluation report",
    progress: bool | None = None,
) -> Report:
    """Build the evaluation report of judge counts, with or without a Bayesian fit.

    Parameters
    ----------
    counts : JudgeCounts, optional
        Test and calibration counts (with a joint verdict table when the systems answered
        the same items). Needed without ``fit``; with a fit, the counts come from
        ``fit.counts`` (passing other counts is an error). K-category counts and several
        judges' verdict patterns (``JuryCounts``, ``CategoricalJuryCounts``) get their own
        reports (:func:`build_categorical_report`,
        :func:`~bayesjudge.report.jury.build_jury_report`,
        :func:`~bayesjudge.report.categorical_jury.build_categorical_jury_report`).
    fit : bayesjudge.Fit, optional
        A Bayesian fit of the counts (MCMC or ``method="exact"``). Without it the report
        gives the closed forms only and says that the Bayesian parts were not run.
    scores : dict, optional
        ``{category: value}`` for K-category counts (:class:`~bayesjudge.data.CategoricalCounts`,
        or several judges' :class:`~bayesjudge.data.CategoricalJuryCounts`):
        the mean score that the report estimates, ranks and compares (default: the fit's
        scores). Not used for binary counts (an error there).
    alpha : float, default 0.05
        Every interval has probability ``1 - alpha``: confidence for the closed forms,
        equal-tailed credible for the posterior.
    comparison_method : {"bootstrap", "delta", "cluster-delta", "cluster-bootstrap", None}
        Frequentist Δθ of :func:`bayesjudge.compare.compare` (paired when the counts carry
        a joint verdict table). None (default): compare's default, ``"bootstrap"``, or
        ``"cluster-delta"`` for repeated verdicts of an item (``counts.has_clusters``), whose
        only methods are the two cluster ones.
    n_resamples : int, default 10000
        Bootstrap resamples of the frequentist comparison.
    random_seed : int, optional
        Seed of the bootstrap and of the posterior predictive draws; drawn (and reported)
        when None, so every report can be repeated.
    target_width : float, optional
        Desired width of the θ intervals; when given, the report warns where the calibration
        set is too small for it and states the m0, m1 that would achieve it.
    ppc : bool, default True
        Run the posterior predictive check (with a fit).
    warn : bool, default True
        Also emit every diagnosis as a Python warning (a :class:`BayesJudgeWarning`).
    title : str
        The report's title.
    progress : bool, optional
        Show a progress bar of the report's steps (tables, comparisons, diagnostics,
        figures) on stderr. None (default) shows it for reports of 30 systems or more
        (``PROGRESS_MIN_SYSTEMS``; fewer take seconds), and only in a terminal or a notebook,
        never in tests or CI (:func:`bayesjudge._progress.show_progress`).

    Returns
    -------
    Report

    Raises
    ------
    ValueError
        If neither counts nor a fit is given, the counts differ from ``fit.counts``, or the
        counts have no calibration items at all.

    Notes
    -----
    The sections follow Fiedler's reporting checklist (Sec. 7) — estimand, single-system
    estimation versus comparison, calibration design and sizes, intervals and the randomness
    they carry, q0/q1/J with intervals, ΔJ for comparisons, weakened claims where diagnostics
    indicate trouble — and Lee et al. (report the corrected θ̂ with its interval, not p̂).

    The report states the counts' labelling design (:attr:`JudgeCounts.design`) and uses its
    estimator: :func:`bayesjudge.estimate` without a method (Lang–Reiczigel for the
    stratified design, the profile-likelihood interval for the random one). For the random
    design it shows the human-only baseline (the labelled items alone, Wilson interval)
    beside the corrected θ̂ and says where the judge narrows the interval (Lee et al. Sec. 6).
    Where the fit pools calibration over groups that have their own labelled items
    (``calibration="shared"``), the report tests whether the judge's q0, q1 differ between
    them (:func:`bayesjudge.diagnostics.check_pooled_calibration`) and states its warning.

    Examples
    --------
    >>> import bayesjudge as bj
    >>> from bayesjudge.report import build_report
    >>> counts = bj.simulate_counts([0.6, 0.8], 0.85, 0.9, n=1000, m0=200, m1=200,
    ...                             system=["a", "b"], random_seed=3)
    >>> report = build_report(counts, random_seed=1, n_resamples=2000)
    >>> [s.key for s in report.sections][:3]
    ['bottom_line', 'estimand', 'design']
    >>> report.tables["theta"][["system", "corrected"]].round(3).values.tolist()
    [['a', 0.612], ['b', 0.804]]
    """
    other = _other_report(
        counts, fit, scores, target_width,
        {"alpha": alpha, "random_seed": random_seed, "ppc": ppc, "warn": warn, "title": title},
        progress,
    )  # fmt: skip
    if other is not None:
        return other
    if scores is not None:
        raise ValueError(
            "scores= is for K-category counts (CategoricalCounts); binary counts report the "
            "share truly correct. Drop scores=, or build a CategoricalCounts."
        )
    alpha = check_alpha(alpha)
    ci_prob = 1 - alpha
    counts = _checked_counts(counts, fit)
    if random_seed is None:
        random_seed = int(np.random.default_rng().integers(2**31))
    shared_systems = "system" in counts.calibration_shared_over
    n_systems = counts.sizes["system"]
    collected: list = []  # the estimators' warnings
    notes: list[str] = []

    bar = steps_bar(progress, 5, f"report of {n_systems} systems", n_systems, PROGRESS_MIN_SYSTEMS)
    advance(bar, "θ and judge tables")
    tables: dict[str, pd.DataFrame] = {"counts": _tables.counts_table(counts)}
    tables["theta"] = _tables.theta_table(counts, alpha, fit, ci_prob, collected)
    tables["judge"] = _tables.judge_table(counts, alpha, fit, ci_prob)
    if fit is not None:
        tables.update(_tables.fit_tables(fit, counts, ci_prob, collected))
    # Calibration pooled by the fit: test it where each group's labels are known.
    pooled = _tables.pooled_dims(counts, fit)
    _tables.check_pooling(counts, pooled, alpha, collected)
    comparison = {
        "method": comparison_method,
        "calibration": "shared" if shared_systems else "separate",
        "alpha": alpha,
        "n_resamples": n_resamples,
        "random_seed": random_seed,
    }
    freq = None
    pairs = _tables.shown_pairs(counts, tables["theta"])
    advance(bar, "comparisons")
    if n_systems >= 2:
        tables["theta_difference"], freq = _tables.difference_table(
            counts, alpha, fit, ci_prob, comparison, collected, pairs
        )
        comparison["method"] = freq.attrs.get("method", comparison["method"])  # None resolved
        if not shared_systems:
            tables["youden_difference"] = _tables.youden_difference_table(
                counts, alpha, fit, ci_prob, pairs
            )
    if pairs is not None:
        tables["all_pairs"] = _tables.all_pairs_table(counts, alpha)
    tables["bottom_line"] = _tables.bottom_line_table(
        counts, fit, tables["theta"], freq, ci_prob, total=tables.get("theta_total")
    )
    advance(bar, "diagnostics")
    records, diag = _tables.diagnoses(
        counts, fit, alpha, target_width, random_seed, notes, freq, pairs
    )
    recommendation = None if diag is None else diag.attrs.get("recommendation")
    if diag is not None and "youden_difference" in tables:
        tables["youden_difference"] = _tables.add_bootstrap_and_bias(
            tables["youden_difference"], diag
        )
    records = _gather_diagnoses(records, collected, warn)
    tables["diagnoses"] = _tables.diagnoses_table(records)

    check = None
    advance(bar, "posterior predictive check")
    if fit is not None and ppc:
        check = fit.ppc(random_seed=random_seed)
        tables["ppc"] = _tables.ppc_table(check, ci_prob, counts)

    settings = _tables.reproducibility_settings(
        counts, fit, alpha, comparison if n_systems >= 2 else None, freq, random_seed,
        target_width, tables["theta"],
    )  # fmt: skip
    tables["settings"] = _tables.settings_table(settings)
    advance(bar, "figures")
    figures = draw_figures(tables, check, ci_prob)
    sections = write_sections(
        counts, fit, tables, figures, records, recommendation, notes, settings, ci_prob,
        pooled_dims=pooled,
    )  # fmt: skip
    advance(bar, None)
    return Report(title, sections, tables, figures, records, settings)


def _other_report(counts, fit, scores, target_width, options: dict, progress) -> Report | None:
    """Return the report of several judges' or of K-category counts; None for binary counts.

    ``options`` are the keywords every report takes (alpha, random_seed, ppc, warn, title).
    """
    if isinstance(counts, CategoricalJuryCounts) or (
        fit is not None and getattr(fit, "config", {}).get("kind") == "categorical-jury"
    ):
        if target_width is not None:
            raise ValueError(
                "target_width applies to one judge's binary counts; the report of several "
                "judges' K-category verdicts has no calibration-size planner. Drop target_width."
            )
        return build_categorical_jury_report(counts, fit=fit, scores=scores, **options)
    if isinstance(counts, JuryCounts) or (
        fit is not None and isinstance(getattr(fit, "counts", None), JuryCounts)
    ):
        if target_width is not None or scores is not None:
            raise ValueError(
                "target_width and scores= apply to one judge's counts; drop them for several "
                "judges' verdicts (JuryCounts)."
            )
        return build_jury_report(counts, fit=fit, **options)
    if isinstance(counts, CategoricalCounts) or (
        fit is not None and getattr(fit, "config", {}).get("kind") == "categorical"
    ):
        if target_width is not None:
            raise ValueError(
                "target_width applies to binary counts (θ intervals of a JudgeCounts); the "
                "K-category report has no calibration-size planner. Drop target_width."
            )
        # K categories: the score-type delta interval and delta-method comparisons;
        # build_categorical_report(method="bootstrap") bootstraps both.
        return build_categorical_report(
            counts, fit=fit, scores=scores, method="delta", progress=progress, **options
        )
    return None


def _checked_counts(counts, fit) -> JudgeCounts:
    """Return the counts to report: ``fit.counts`` with a fit; check they can be corrected."""
    if fit is not None:
        fitted = fit.counts
        if counts is not None and not JudgeCounts(counts).dataset.equals(fitted.dataset):
            raise ValueError(
                "counts differ from fit.counts; pass only fit= (the report uses the fitted "
                "counts) or refit the model to these counts."
            )
        counts = fitted
    if counts is None:
        raise ValueError("Pass counts, a fit, or both: the report needs data to describe.")
    counts = JudgeCounts(counts)
    ds = counts.dataset
    if int(ds["m0"].sum() + ds["m1"].sum()) == 0:
        raise ValueError(
            "The counts have no calibration items, so q0, q1 and the corrected θ cannot be "
            "estimated; add a human-labelled calibration table."
        )
    return counts


def _gather_diagnoses(records: list, collected: list, warn: bool) -> list:
    """Return check_comparison's records and the estimators' warnings as one list.

    With ``warn``, emit them: one warning per kind (a report of many systems must not flood
    the terminal). A low-J warning of the estimators is dropped when check_comparison reports
    low J itself, with the 1/J amplification.
    """
    codes = {getattr(r, "code", "") for r in records}
    if warn:
        emit_grouped(records, stacklevel=3, total="every case is in section 7 of the report")
    estimator_warnings = []
    for w in collected:
        category = w.category.__name__
        if category == "LowJudgeQualityWarning" and "low_j" in codes:
            continue
        records.append(_tables._Record(category, "warning", str(w.message)))
        estimator_warnings.append(w)
    if warn:
        _emit_estimator_warnings(estimator_warnings)
    return records


def _emit_estimator_warnings(caught) -> None:
    """Re-emit the estimators' warnings, one per category and distinct message count.

    One message as it is; several of a category as one warning that shows the first
    :data:`~bayesjudge.diagnostics.MAX_LISTED` and says how many more are in the report.
    """
    emit_caught(caught_by_category(caught), stacklevel=4, where="section 7 of the report",
                head="warnings of this kind from the estimators")  # fmt: skip


def write_report(source, out_dir=None, **options) -> Report:
    """Build the report of a fit or of counts and, when ``out_dir`` is given, save it there.

    Parameters
    ----------
    source : bayesjudge.Fit or JudgeCounts
        A Bayesian fit (its counts are used) or counts (closed forms only).
    out_dir : str or path-like, optional
        Folder for ``report.md``, its PNGs and ``report.html``; nothing is written when None.
    **options
        Passed to :func:`build_report` (``alpha``, ``random_seed``, ``target_width``, ...).

    Returns
    -------
    Report
        With the written paths in ``report.paths`` (empty when ``out_dir`` is None).

    Examples
    --------
    >>> import tempfile
    >>> import bayesjudge as bj
    >>> from bayesjudge.report import write_report
    >>> counts = bj.JudgeCounts.from_counts(n=1000, k=400, m0=100, tn=70, m1=100, tp=90)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     report = write_report(counts, folder, random_seed=1)
    ...     sorted(p.name for p in report.paths.values())
    ['judge.png', 'report.html', 'report.md', 'theta_forest.png']
    """
    if isinstance(source, JudgeCounts | CategoricalCounts | JuryCounts | CategoricalJuryCounts):
        report = build_report(source, **options)
    elif hasattr(source, "posterior") and hasattr(source, "counts"):
        # A Fit, recognised by what the report uses: importing bayesjudge.models.fit to test
        # isinstance would import PyMC, which a report of counts must not pay for.
        report = build_report(fit=source, **options)
    else:
        raise TypeError(
            f"source must be a bayesjudge.Fit or JudgeCounts; got {type(source).__name__}."
        )
    report.paths = report.save(out_dir) if out_dir is not None else {}
    return report
