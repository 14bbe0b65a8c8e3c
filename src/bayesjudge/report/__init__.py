"""The evaluation report: Markdown and one self-contained HTML page that follow the checklist.

:func:`build_report` gathers, for a :class:`~bayesjudge.JudgeCounts` (and optionally a Bayesian
:class:`~bayesjudge.Fit` of it), everything that Fiedler's reporting checklist (Sec. 7) and Lee
et al. ask an LLM-as-a-judge evaluation to state: the estimand and that it is corrected, the
estimators and the calibration design with its sizes, intervals and which randomness they carry,
the judge's q0, q1 and J with intervals, ΔJ for comparisons, the warnings, and the figures
(forest plot of θ, pairwise Δθ with P(θ_a > θ_b), judge diagnostics, posterior predictive
check). :class:`Report` renders it as Markdown (:meth:`Report.to_markdown`) and as one HTML
page with inline CSS and every figure a base64 PNG (:meth:`Report.to_html`); :meth:`Report.save`
writes both. The command line's ``bayesjudge report`` and ``Fit.report()`` call
:func:`write_report`.

This is the top layer. Its modules, each importing only those listed before it:

``document``
    :class:`Report` and :class:`ReportSection`, the rendering of Markdown and HTML, the text
    of table cells, and the atomic writing of the files.
``tables``
    The tidy tables of numbers (and ``comparison_rows``, shared with ``bayesjudge fit``).
``figures``
    The figures, drawn with :mod:`bayesjudge.plots` on :class:`matplotlib.figure.Figure`
    objects (never through pyplot's global state) and kept as PNG bytes.
``sections``
    One function per section of the report, and the driver that lists them in order.
``categorical``
    :func:`build_categorical_report`, the report of K-category counts
    (:class:`~bayesjudge.data.CategoricalCounts`; its tables in ``categorical_tables``, its
    words in ``categorical_sections``).
``jury``, ``categorical_jury``
    :func:`~bayesjudge.report.jury.build_jury_report` and
    :func:`build_categorical_jury_report`, the reports of several judges' binary and
    K-category verdict patterns.
``build``
    :func:`build_report` (which hands K-category counts to :func:`build_categorical_report`
    and several judges' counts to the jury reports) and :func:`write_report`.

A fit is received as an object: the report never imports ``bayesjudge.models.fit``.
"""

from __future__ import annotations

from bayesjudge.report.build import PROGRESS_MIN_SYSTEMS, build_report, write_report
from bayesjudge.report.categorical import build_categorical_report
from bayesjudge.report.categorical_jury import build_categorical_jury_report
from bayesjudge.report.document import SECTIONS, Report, ReportSection
from bayesjudge.report.figures import FIGURE_ROWS_MAX
from bayesjudge.report.tables import ALL_PAIRS_MAX_SYSTEMS, comparison_rows

__all__ = [
    "ALL_PAIRS_MAX_SYSTEMS",
    "FIGURE_ROWS_MAX",
    "PROGRESS_MIN_SYSTEMS",
    "SECTIONS",
    "Report",
    "ReportSection",
    "build_categorical_jury_report",
    "build_categorical_report",
    "build_report",
    "comparison_rows",
    "write_report",
]
