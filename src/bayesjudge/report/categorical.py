"""The report of K-category verdicts: :func:`build_categorical_report`.

The K-category counterpart of :func:`bayesjudge.report.build_report` for a
:class:`~bayesjudge.data.CategoricalCounts` (a pairwise preference with ties, a graded rubric,
a few labels), with or without a Bayesian fit of it (``bj.fit(counts)``). It returns the same
:class:`~bayesjudge.report.document.Report`, so ``to_markdown()``, ``to_html()`` and
``save()`` work as for the binary report. The numbers come from
:mod:`~bayesjudge.report.categorical_tables`, the words around them from
:mod:`~bayesjudge.report.categorical_sections`, the figures from
:func:`~bayesjudge.report.figures.draw_categorical_figures`. The fit is received as an
object (its ``summary``, ``compare``, ``score_draws``, ``ppc``, ``diagnostics`` and
``check_sampling``): nothing here imports the Bayesian layer.
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd

from bayesjudge._progress import REPORT_PROGRESS_MIN_SYSTEMS, advance, steps_bar
from bayesjudge._version import __version__
from bayesjudge.categorical_estimate import CATEGORICAL_METHODS, score_vector
from bayesjudge.core._validation import check_alpha
from bayesjudge.data import CategoricalCounts
from bayesjudge.diagnostics import caught_by_category, emit_caught
from bayesjudge.report import categorical_tables as _tables
from bayesjudge.report.categorical_sections import write_categorical_sections
from bayesjudge.report.document import Report
from bayesjudge.report.figures import draw_categorical_figures
from bayesjudge.report.tables import ALL_PAIRS_MAX_SYSTEMS, settings_table
from bayesjudge.warnings import BayesJudgeWarning

__all__ = ["build_categorical_report"]


def build_categorical_report(
    counts: CategoricalCounts | None = None,
    *,
    fit=None,
    scores=None,
    alpha: float = 0.05,
    method: str = "delta",
    n_resamples: int = 2000,
    random_seed: int | None = None,
    ppc: bool = True,
    warn: bool = True,
    title: str = "LLM-as-a-judge evaluation report",
    progress: bool | None = None,
) -> Report:
    """Build the evaluation report of K-category judge counts, with or without a fit.

    Parameters
    ----------
    counts : CategoricalCounts, optional
        Test verdict counts per category and calibration counts (rows = truth, columns =
        verdict) per group. Needed without ``fit``; with a fit, the fit's counts are used
        (passing other counts is an error).
    fit : CategoricalFit, optional
        A Bayesian fit of the counts (``bj.fit(categorical_counts)``). Without it the report
        gives the closed forms only and says that the Bayesian parts were not run.
    scores : dict, optional
        ``{category: value}``: the mean score to report, rank and compare (a rubric mean;
        ``{"A": 1, "tie": 0.5, "B": 0}`` is A's win rate with ties counted half). Default: the
        fit's ``scores``; without any, the report gives the category shares and no ranking.
    alpha : float, default 0.05
        Every interval has probability ``1 - alpha``: confidence for the closed forms,
        equal-tailed credible for the posterior.
    method : {"delta", "wald", "bootstrap"}, default "delta"
        Interval of the closed forms (:func:`bayesjudge.estimate` of categorical counts). The
        comparisons use the bootstrap with ``"bootstrap"`` and the delta method otherwise.
    n_resamples : int, default 2000
        Bootstrap resamples (``method="bootstrap"``).
    random_seed : int, optional
        Seed of the bootstrap and of the posterior predictive draws; drawn (and reported)
        when None, so every report can be repeated.
    ppc : bool, default True
        Run the posterior predictive check (with a fit).
    warn : bool, default True
        Also emit the estimators' and the sampler's warnings (one per kind).
    title : str
        The report's title.
    progress : bool, optional
        Show a progress bar of the report's steps on stderr; None shows it for 30 systems or
        more, in a terminal or notebook only.

    Returns
    -------
    Report
        Sections ``bottom_line``, ``data``, ``judge``, ``categories``, ``scores``,
        ``warnings``, ``checks``, ``methods``, ``reproducibility``. Tables ``bottom_line``,
        ``test_counts``, ``calibration_counts``, ``confusion``, ``conditioning``,
        ``categories``, ``diagnoses``, ``settings``; with scores ``scores`` and (two or more
        systems) ``score_difference``; with a fit and ``ppc`` ``ppc``. Figures
        ``confusion``, ``categories`` and, with scores, ``scores``.

    Raises
    ------
    ValueError
        If neither counts nor a fit is given, the counts differ from the fit's, the counts
        have no calibration items, or ``scores``/``method`` are invalid.
    TypeError
        If ``counts`` is not a :class:`CategoricalCounts`.

    Examples
    --------
    >>> from bayesjudge.data import CategoricalCounts
    >>> from bayesjudge.report.categorical import build_categorical_report
    >>> counts = CategoricalCounts.from_counts(
    ...     test=[[400, 200, 400], [300, 200, 500]],
    ...     calibration=[[80, 15, 5], [10, 80, 10], [5, 15, 80]],
    ...     categories=["A", "tie", "B"], system=["x", "y"])
    >>> report = build_categorical_report(counts, scores={"A": 1, "tie": 0.5, "B": 0},
    ...                                   random_seed=1)
    >>> [s.key for s in report.sections][:3]
    ['bottom_line', 'data', 'judge']
    >>> report.tables["bottom_line"][["system", "score"]].round(3).values.tolist()
    [['x', 0.5], ['y', 0.367]]
    """
    alpha = check_alpha(alpha)
    if method not in CATEGORICAL_METHODS:
        raise ValueError(f"method must be one of {list(CATEGORICAL_METHODS)}; got {method!r}.")
    ci_prob = 1 - alpha
    counts = _checked_counts(counts, fit)
    if random_seed is None:
        random_seed = int(np.random.default_rng().integers(2**31))
    scores, values = _scores(scores, fit, counts.categories)
    calibration = "shared" if "system" in counts.calibration_shared_over else "separate"
    options = {
        "alpha": alpha,
        "calibration": calibration,
        "n_resamples": n_resamples,
        "random_seed": random_seed,
    }
    n_systems = len(counts.systems)
    bar = steps_bar(
        progress,
        4,
        f"categorical report of {n_systems} systems",
        n_systems,
        REPORT_PROGRESS_MIN_SYSTEMS,
    )
    collected: list = []
    advance(bar, "closed forms")
    est = _tables.closed_forms(counts, scores, method=method, collected=collected, **options)
    summary = None
    if fit is not None:
        summary = fit.summary(ci_prob=ci_prob, scores=scores)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", BayesJudgeWarning)
            fit.check_sampling()
        collected += [w for w in caught if issubclass(w.category, BayesJudgeWarning)]
    tables = {
        "test_counts": _tables.verdict_table(counts),
        "calibration_counts": _tables.calibration_table(counts),
        "confusion": _tables.confusion_table(counts, summary, alpha),
        "conditioning": _tables.conditioning_table(counts, est),
        "categories": _tables.categories_table(counts, est, summary, alpha),
    }
    advance(bar, "scores and comparisons")
    comparison = _score_tables(
        tables, counts, fit, scores, values, est, summary, method, ci_prob, collected, options
    )
    check = None
    advance(bar, "posterior predictive check")
    if fit is not None and ppc:
        check = fit.ppc(random_seed=random_seed)
        tables["ppc"] = _tables.ppc_table(check, ci_prob)
    records = _records(collected, tables.get("ppc"), ci_prob, warn)
    tables["diagnoses"] = _tables_of_records(records)
    settings = _settings(counts, fit, est, scores, comparison, random_seed, method, alpha)
    tables["settings"] = settings_table(settings)
    advance(bar, "figures")
    score_range = None if values is None else (float(values.min()), float(values.max()))
    figures = draw_categorical_figures(tables, counts.categories, score_range)
    sections = write_categorical_sections(
        counts=counts,
        fit=fit,
        tables=tables,
        figures=figures,
        records=records,
        settings=settings,
        ci_prob=ci_prob,
        estimate=est,
        scores=scores,
        comparison=comparison,
    )
    advance(bar, None)
    return Report(title, sections, tables, figures, records, settings)


def _checked_counts(counts, fit) -> CategoricalCounts:
    """Return the counts to report: the fit's with a fit; check they can be corrected."""
    if fit is not None:
        fitted = getattr(fit, "counts", None)
        if fitted is None:  # CategoricalFit keeps its counts' Dataset in its tree
            fitted = CategoricalCounts(fit.tree["counts"].dataset)
        if counts is not None and not CategoricalCounts(counts).ds.equals(fitted.ds):
            raise ValueError(
                "counts differ from the fit's counts; pass only fit= (the report uses the "
                "fitted counts) or refit the model to these counts."
            )
        counts = fitted
    if counts is None:
        raise ValueError("Pass counts, a fit, or both: the report needs data to describe.")
    if not isinstance(counts, CategoricalCounts):
        raise TypeError(
            f"counts must be a bayesjudge.CategoricalCounts; got {type(counts).__name__}. "
            "Binary JudgeCounts have their own report (bayesjudge.report.build_report)."
        )
    if int(counts.ds["calibration"].sum()) == 0:
        raise ValueError(
            "The counts have no calibration items, so the judge's confusion matrix and the "
            "corrected shares cannot be estimated; add a human-labelled calibration table."
        )
    return counts


def _scores(scores, fit, categories):
    """Return ``{category: value}`` keyed by the categories themselves and its vector.

    Keys may also be the categories' text (``"1"`` for the grade 1), as a fit stores them.
    Default: the fit's scores; (None, None) without any.
    """
    if scores is None and fit is not None:
        scores = fit.config.get("scores")
    if scores is None:
        return None, None
    if isinstance(scores, Mapping) and not all(c in scores for c in categories):
        by_text = {str(k): v for k, v in scores.items()}
        if len(by_text) == len(scores) and set(by_text) == {str(c) for c in categories}:
            scores = {c: by_text[str(c)] for c in categories}
    values = score_vector(scores, categories)
    return dict(zip(categories, values.tolist(), strict=True)), values


def _score_tables(
    tables, counts, fit, scores, values, est, summary, method, ci_prob, collected, options
) -> dict | None:
    """Add the score, comparison and bottom-line tables; return the comparison's settings."""
    if values is None:
        column = "bayes" if fit is not None else "corrected"
        tables["bottom_line"] = _tables.shares_table(
            tables["categories"], column, counts.categories
        )
        return None
    tables["scores"] = _tables.score_table(counts, est, summary, values)
    n_systems = len(counts.systems)
    freq = draws = None
    comparison = None
    if n_systems >= 2:
        column = "bayes" if fit is not None else "corrected"
        pairs = (
            None
            if n_systems <= ALL_PAIRS_MAX_SYSTEMS
            else _tables.neighbour_pairs(tables["scores"], column, counts.systems)
        )
        compare_method = "bootstrap" if method == "bootstrap" else "delta"
        freq = _tables.closed_form_differences(
            counts, scores, pairs, method=compare_method, collected=collected, **options
        )
        comparison = {
            "method": compare_method,
            "pairs": "all" if pairs is None else "neighbours in rank",
            **options,
        }
        bayes = None
        if fit is not None:
            draws = fit.score_draws(scores).transpose("chain", "draw", "system", "stratum")
            if pairs is None:
                bayes = fit.compare(scores=scores, dim="system", ci_prob=ci_prob)
        tables["score_difference"] = _tables.difference_table(freq, bayes)
    tables["bottom_line"] = _tables.bottom_line_table(tables["scores"], draws, freq, ci_prob)
    return comparison


#: The order of importance of the K-category report's diagnoses, most important first: a
#: sampler that did not converge can make every posterior number wrong; an ill-conditioned
#: (or singular) judge amplifies every error of the correction; missing items leave numbers
#: undefined; a posterior predictive misfit says the model does not reproduce the data.
CATEGORICAL_WARNING_PRIORITY = (
    "ConvergenceWarning",
    "IllConditionedJudgeWarning",
    "SmallSampleWarning",
    "ppc_misfit",
)


def _records(collected, ppc_frame, ci_prob: float, warn: bool) -> list:
    """Return the diagnoses, most important first; with ``warn``, emit one warning per kind."""
    by_category = caught_by_category(collected)
    records = [
        _tables.CategoricalRecord(category.__name__, "warning", message)
        for category, messages in by_category.items()
        for message in messages
    ]
    if ppc_frame is not None and ppc_frame["misfit"].any():
        bad = ppc_frame[ppc_frame["misfit"]]
        records.append(
            _tables.CategoricalRecord(
                "ppc_misfit",
                "caution",
                (
                    f"The posterior predictive check flags {len(bad)} of {len(ppc_frame)} "
                    f"observed count vectors (chi-square discrepancy P(T(rep) ≥ T(obs)) below "
                    f"{(1 - ci_prob) / 2:g}): the model does not reproduce the data there. Check "
                    "the calibration model (shared or structured confusions assume the judge "
                    "errs alike) and the listed groups in the model checks."
                ),
            )
        )
    rank = {code: i for i, code in enumerate(CATEGORICAL_WARNING_PRIORITY)}
    records.sort(key=lambda r: rank.get(r.code, len(rank)))
    if warn:
        emit_caught(by_category, stacklevel=3)
    return records


def _tables_of_records(records) -> pd.DataFrame:
    return pd.DataFrame(
        [{"code": r.code, "level": r.level, "message": r.message} for r in records],
        columns=["code", "level", "message"],
    )


def _settings(counts, fit, est, scores, comparison, random_seed, method, alpha) -> dict:
    """Return the reproducibility block: versions, date, alpha, methods, seeds, fit settings."""
    out = {
        "bayesjudge version": __version__,
        "date (UTC)": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M:%S"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "interval probability (1 - alpha)": f"{1 - alpha:g}",
        "labelling design": counts.design,
        "categories": json.dumps([str(c) for c in counts.categories], ensure_ascii=False),
        "ordered categories": counts.ordered,
        "scores": "none"
        if scores is None
        else json.dumps({str(k): v for k, v in scores.items()}, ensure_ascii=False),
        "closed forms": f"bayesjudge.estimate(counts, method={method!r}, "
        f"calibration={est.attrs['calibration']!r}): generalised Rogan–Gladen projected onto "
        f"the simplex, {est.attrs['ci_kind']} interval; naive shares and Ĉ cells with Wilson "
        "intervals",
        "report random_seed": random_seed,
    }
    if method == "bootstrap":
        out["bootstrap"] = f"{est.attrs['n_resamples']} resamples ({counts.design} design)"
    if comparison is not None:
        out["frequentist comparison"] = (
            f"bayesjudge.compare(counts, scores=..., method={comparison['method']!r}, "
            f"calibration={comparison['calibration']!r}, n_resamples={comparison['n_resamples']}, "
            f"random_seed={comparison['random_seed']}), pairs: {comparison['pairs']}"
        )
    if fit is None:
        out["Bayesian fit"] = "not run"
        return out
    c = fit.config
    out["Bayesian fit"] = (
        f"categorical model, calibration={c.get('calibration')!r}, "
        f"pool_over={c.get('pool_over')}, confusion={c.get('confusion')!r}"
    )
    out["priors"] = json.dumps(c.get("priors"), ensure_ascii=False)
    out["sampler"] = (
        f"nutpie NUTS, {c.get('chains')} chains × {c.get('draws')} draws, tune "
        f"{c.get('tune')}, target_accept {c.get('target_accept')}"
    )
    out["fit random_seed"] = c.get("random_seed")
    return out
