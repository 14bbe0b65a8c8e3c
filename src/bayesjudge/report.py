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

This is the top layer: it imports matplotlib (figures are drawn on
:class:`matplotlib.figure.Figure` objects, never through pyplot's global state) and, only when
a fit is given, the Bayesian layer.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import platform
import re
import warnings
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from bayesjudge._io import atomic_write
from bayesjudge._text import markdown_escape, terminal_safe
from bayesjudge._version import __version__
from bayesjudge.compare import compare
from bayesjudge.core._validation import check_alpha
from bayesjudge.core.naive import naive
from bayesjudge.core.youden import youden, youden_difference
from bayesjudge.data import JudgeCounts
from bayesjudge.diagnostics import (
    MAX_LISTED,
    check_comparison,
    emit_grouped,
    format_probability,
    judge_diagnostics,
    posterior_differences,
)
from bayesjudge.estimate import LOW_J_THRESHOLD, estimate
from bayesjudge.warnings import BayesJudgeWarning

__all__ = [
    "ALL_PAIRS_MAX_SYSTEMS",
    "FIGURE_ROWS_MAX",
    "SECTIONS",
    "Report",
    "ReportSection",
    "build_report",
    "write_report",
]

#: Up to this many systems the report compares every pair (45 pairs for 10 systems). Beyond,
#: the number of pairs grows quadratically (300 systems: 44,850), so the report compares each
#: system with the best one and with its neighbours in rank (2K − 3 pairs), and writes the
#: closed-form Δθ and ΔJ of every pair to ``comparisons_all_pairs.csv`` beside the report.
ALL_PAIRS_MAX_SYSTEMS = 10
#: A figure draws one labelled row per system (or pair) up to this many rows; beyond, it
#: summarises: estimates with intervals against their rank, names in the tables.
FIGURE_ROWS_MAX = 40


class _Plain(str):
    """Text from user data (names, messages quoting names): shown literally, never as markup.

    A block's text may be a ``str`` (the report's own text, with ```code``` and ``**bold**``)
    or a list of parts mixing ``str`` and ``_Plain``; ``_Plain`` parts are escaped for
    Markdown (:func:`bayesjudge._text.markdown_escape`) and for HTML (:func:`html.escape`,
    without the code/bold markup).
    """


def _md_text(value) -> str:
    if isinstance(value, _Plain):
        return markdown_escape(value)
    if isinstance(value, str):
        return value
    return "".join(_md_text(part) for part in value)


def _html_text(value) -> str:
    if isinstance(value, _Plain):
        return html.escape(terminal_safe(value))
    if isinstance(value, str):
        return _inline_html(value)
    return "".join(_html_text(part) for part in value)


def _head_text(value) -> str:
    """Return the leading markup of a block's text (for the warning level of a list item)."""
    if isinstance(value, str):
        return "" if isinstance(value, _Plain) else value
    return _head_text(value[0]) if value else ""


#: The report's sections, in order: key and title. Every report has all of them; a section
#: whose content does not apply (e.g. comparisons of a single system) says why.
SECTIONS = {
    "estimand": "1. Estimand",
    "design": "2. Data and calibration design",
    "intervals": "3. Estimators and intervals",
    "accuracy": "4. True accuracy θ",
    "judge": "5. Judge quality: q0, q1 and J",
    "comparisons": "6. Comparisons of systems",
    "warnings": "7. Warnings and what to do",
    "checks": "8. Model checks",
    "reproducibility": "9. Reproducibility",
}

_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;max-width:1100px;
margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
h1{border-bottom:2px solid #444;padding-bottom:.2em}
h2{border-bottom:1px solid #bbb;padding-bottom:.15em;margin-top:1.8em}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f0f0f0}td:first-child,th:first-child,td.t{text-align:left}
caption{caption-side:top;text-align:left;font-style:italic;padding-bottom:.3em}
figure{margin:1em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-style:italic;font-size:.9em}
code{background:#f4f4f4;padding:0 .2em;border-radius:3px}
li.error{color:#a00}li.warning{color:#8a5a00}
"""


# ----------------------------------------------------------------------------- the Report


@dataclass
class ReportSection:
    """One section of a :class:`Report`: a title and a list of blocks.

    Attributes
    ----------
    key : str
        Key in :data:`SECTIONS` (``"estimand"``, ``"design"``, ...).
    title : str
        Heading.
    blocks : list of tuple
        ``("p", text)`` a paragraph; ``("list", [text, ...])`` a bullet list;
        ``("table", name, caption)`` the table ``Report.tables[name]``;
        ``("figure", name, caption)`` the figure ``Report.figures[name]``. Text may use
        ```code``` and ``**bold**``.
    """

    key: str
    title: str
    blocks: list = field(default_factory=list)

    def text(self, value: str) -> None:
        """Append a paragraph."""
        self.blocks.append(("p", value))

    def bullets(self, items) -> None:
        """Append a bullet list (nothing when ``items`` is empty)."""
        items = list(items)
        if items:
            self.blocks.append(("list", items))

    def table(self, name: str, caption: str) -> None:
        """Append the table ``name`` with a caption."""
        self.blocks.append(("table", name, caption))

    def figure(self, name: str, caption: str) -> None:
        """Append the figure ``name`` with a caption."""
        self.blocks.append(("figure", name, caption))


@dataclass
class Report:
    """An evaluation report: sections, the numbers behind them, figures and diagnoses.

    Built by :func:`build_report`. The tables hold numbers (interval bounds in ``*_lower`` /
    ``*_upper`` columns); the Markdown and HTML render them to 3 decimals, each estimate with
    its interval in one cell, ``0.512 [0.470, 0.553]``.

    Attributes
    ----------
    title : str
        The report's title.
    sections : list of ReportSection
        In the order of :data:`SECTIONS`.
    tables : dict of str to pandas.DataFrame
        ``"counts"``, ``"theta"``, ``"judge"``, ``"diagnoses"``, ``"settings"`` always;
        ``"theta_total"``, ``"theta_difference"``, ``"youden_difference"``,
        ``"calibration_scale"`` (hierarchical fit) and ``"ppc"`` when they apply. With more
        than :data:`ALL_PAIRS_MAX_SYSTEMS` systems the difference tables hold each system
        against the best one and its neighbour in rank (column ``comparison``), and
        ``"all_pairs"`` the closed-form Δθ and ΔJ of every pair (saved as
        ``comparisons_all_pairs.csv``).
    figures : dict of str to bytes
        PNG images: ``"theta_forest"``, ``"judge"``, and ``"theta_difference"`` (two or more
        systems) and ``"ppc"`` (with a fit).
    diagnoses : list
        The warnings as records with ``code``, ``level`` and ``message`` (from
        ``bayesjudge.diagnostics.check_comparison`` and from the estimators).
    settings : dict
        Reproducibility block: version, date, alpha, methods, seeds, model configuration.
    paths : dict of str to pathlib.Path
        Files written by :func:`write_report` (empty until then).
    """

    title: str
    sections: list[ReportSection]
    tables: dict[str, pd.DataFrame]
    figures: dict[str, bytes]
    diagnoses: list
    settings: dict
    paths: dict = field(default_factory=dict)

    def section(self, key: str) -> ReportSection:
        """Return the section with ``key`` (one of :data:`SECTIONS`)."""
        for s in self.sections:
            if s.key == key:
                return s
        raise KeyError(f"no section {key!r}; the sections are {[s.key for s in self.sections]}.")

    # -------------------------------------------------------------- rendering

    def to_markdown(self, image_prefix: str = "") -> str:
        """Render the report as Markdown; figures are linked as ``{image_prefix}{name}.png``.

        Parameters
        ----------
        image_prefix : str, default ""
            Prefix of the image links; :meth:`save` writes the PNGs beside ``report.md``,
            so the default relative names resolve there.

        Returns
        -------
        str
        """
        out = [f"# {markdown_escape(self.title)}", ""]
        for section in self.sections:
            out += [f"## {section.title}", ""]
            for block in section.blocks:
                kind = block[0]
                if kind == "p":
                    out += [_md_text(block[1]), ""]
                elif kind == "list":
                    out += [f"- {_md_text(item)}" for item in block[1]] + [""]
                elif kind == "table":
                    _, name, caption = block
                    out += [f"*{caption}*", "", _markdown_table(_display(self.tables[name])), ""]
                elif kind == "figure":
                    _, name, caption = block
                    out += [f"![{caption}]({image_prefix}{name}.png)", "", f"*{caption}*", ""]
        return "\n".join(out).rstrip() + "\n"

    def to_html(self) -> str:
        """Render the report as one self-contained HTML page.

        The CSS is inline and every figure is a ``data:image/png;base64`` URI, so the page
        needs no other file and no network.

        Returns
        -------
        str
        """
        body = [f"<h1>{html.escape(self.title)}</h1>"]
        for section in self.sections:
            body.append(f'<section id="{section.key}"><h2>{html.escape(section.title)}</h2>')
            for block in section.blocks:
                kind = block[0]
                if kind == "p":
                    body.append(f"<p>{_html_text(block[1])}</p>")
                elif kind == "list":
                    items = []
                    for item in block[1]:
                        level = re.match(r"\*\*(error|warning|info|caution)\*\*", _head_text(item))
                        cls = f' class="{level.group(1)}"' if level else ""
                        items.append(f"<li{cls}>{_html_text(item)}</li>")
                    body.append("<ul>" + "".join(items) + "</ul>")
                elif kind == "table":
                    _, name, caption = block
                    body.append(_html_table(_display(self.tables[name]), caption, name))
                elif kind == "figure":
                    _, name, caption = block
                    data = base64.b64encode(self.figures[name]).decode("ascii")
                    body.append(
                        f'<figure id="figure-{name}"><img alt="{html.escape(caption)}" '
                        f'src="data:image/png;base64,{data}">'
                        f"<figcaption>{_inline_html(caption)}</figcaption></figure>"
                    )
            body.append("</section>")
        return (
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{html.escape(self.title)}</title>\n<style>{_CSS}</style>\n</head>\n"
            "<body>\n" + "\n".join(body) + "\n</body>\n</html>\n"
        )

    def save(self, out_dir) -> dict[str, Path]:
        """Write ``report.md`` with its PNGs beside it, and the self-contained ``report.html``.

        Parameters
        ----------
        out_dir : str or path-like
            Folder to write into (created if needed; existing files of the same names are
            replaced).

        Returns
        -------
        dict of str to pathlib.Path
            ``"markdown"``, ``"html"``, one entry per figure name and, for a report of more
            than :data:`ALL_PAIRS_MAX_SYSTEMS` systems, ``"all_pairs"``
            (``comparisons_all_pairs.csv``: closed-form Δθ and ΔJ of every pair).

        Notes
        -----
        Both pages are rendered before anything is written, and every file is written
        atomically (:func:`bayesjudge._io.atomic_write`: a temporary file renamed into
        place), the pages last: a failure or an interruption leaves no half-written file,
        and no new ``report.md`` or ``report.html`` unless every file they refer to is there.
        """
        markdown, page = self.to_markdown(), self.to_html()
        out = Path(out_dir).expanduser()
        out.mkdir(parents=True, exist_ok=True)
        paths = {}
        for name, png in self.figures.items():
            paths[name] = atomic_write(out / f"{name}.png", png)
        if "all_pairs" in self.tables:
            csv = self.tables["all_pairs"].to_csv(index=False, float_format="%.6g")
            paths["all_pairs"] = atomic_write(out / "comparisons_all_pairs.csv", csv)
        paths["markdown"] = atomic_write(out / "report.md", markdown)
        paths["html"] = atomic_write(out / "report.html", page)
        return paths

    def __repr__(self) -> str:
        return (
            f"<bayesjudge.Report {self.title!r}: {len(self.sections)} sections, "
            f"{len(self.tables)} tables, {len(self.figures)} figures, "
            f"{len(self.diagnoses)} diagnoses>"
        )

    def _repr_html_(self) -> str:
        return self.to_html()


# ----------------------------------------------------------------------------- rendering helpers


def _fmt(x) -> str:
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return "—"
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        return f"{x:.3f}"
    return _Plain(x)  # names and messages: user data, escaped when rendered


def _display(frame: pd.DataFrame) -> pd.DataFrame:
    """Strings for display: ``c`` with ``c_lower``/``c_upper`` becomes ``"c [lower, upper]"``."""
    columns = list(frame.columns)
    out = {}
    for col in columns:
        if col.endswith(("_lower", "_upper")) and col.rsplit("_", 1)[0] in columns:
            continue
        values = frame[col].tolist()
        if col == "prob_greater":
            out[_HEADERS[col]] = [_fmt(v) if np.isnan(v) else format_probability(v) for v in values]
            continue
        if f"{col}_lower" in columns and f"{col}_upper" in columns:
            cells = []
            for v, lo, hi in zip(values, frame[f"{col}_lower"], frame[f"{col}_upper"], strict=True):
                cell = _fmt(v)
                if not (np.isnan(lo) or np.isnan(hi)):
                    cell += f" [{lo:.3f}, {hi:.3f}]"
                cells.append(cell)
            out[_HEADERS.get(col, col)] = cells
        elif col in _OWN_TEXT:  # the report's own words, not user data
            out[_HEADERS.get(col, col)] = [str(_fmt(v)) for v in values]
        else:
            out[_HEADERS.get(col, col)] = [_fmt(v) for v in values]
    return pd.DataFrame(out, dtype=object)


#: Text columns that hold the report's own words; every other text cell is user data (names,
#: messages quoting them) and is escaped when rendered.
_OWN_TEXT = frozenset({"setting", "method", "variable", "code", "level", "comparison"})


#: Column headers of the rendered tables (the numeric tables keep the short names).
_HEADERS = {
    "p_hat": "p̂ = k/n",
    "naive": "naive p̂ [Wilson]",
    "corrected": "Rogan–Gladen θ̂ [Lang–Reiczigel]",
    "bayes": "Bayesian θ: mean [ETI]",
    "q0": "q0 [interval]",
    "q1": "q1 [interval]",
    "J": "J [interval]",
    "frequentist": "frequentist Δ [interval]",
    "bayes_difference": "Bayesian Δ: mean [ETI]",
    "prob_greater": "P(a > b)",
    "closed_form": "ΔJ [Newcombe]",
    "bayes_youden": "Bayesian ΔJ: mean [ETI]",
    "bootstrap": "ΔJ [bootstrap]",
    "shared_bias": "Δθ bias if calibration were shared (App. C)",
    "mean": "posterior mean [ETI]",
    "delta_theta": "Δθ [interval]",
    "delta_J": "ΔJ [interval]",
    "margin": "distance of 0 from the nearer end",
    "amplification": "1/J",
}


def _markdown_table(frame: pd.DataFrame) -> str:
    def cell(value) -> str:
        if isinstance(value, _Plain):
            return markdown_escape(value)
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(c) for c in frame.columns) + " |"]
    lines.append("|" + "|".join("---" for _ in frame.columns) + "|")
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(cell(v) for v in row) + " |")
    return "\n".join(lines)


def _inline_html(text: str) -> str:
    text = html.escape(text)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)


def _html_table(frame: pd.DataFrame, caption: str, name: str) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)

    def cell(value) -> str:
        text = terminal_safe(value)
        numeric = not isinstance(value, _Plain) and (
            text == "—" or re.match(r"^[-+<>]?\s*[\d.]", text) is not None
        )
        return (
            f"<td>{html.escape(text)}</td>"
            if numeric
            else f'<td class="t">{html.escape(text)}</td>'
        )

    rows = "".join(
        "<tr>" + "".join(cell(v) for v in row) + "</tr>" for row in frame.itertuples(index=False)
    )
    return (
        f'<table id="table-{name}"><caption>{_inline_html(caption)}</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
    )


def _png(draw, panels: int, width: float, height: float, stacked: bool = False) -> bytes:
    """Draw on a fresh matplotlib Figure (no pyplot state) and return it as PNG bytes.

    The panels stand side by side, or one above the other when ``stacked``.
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    shape = (panels, 1) if stacked else (1, panels)
    axes = fig.subplots(*shape, squeeze=False).ravel()
    draw(axes)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    return buffer.getvalue()


# ----------------------------------------------------------------------------- numbers


def _groups(counts: JudgeCounts):
    ds = counts.dataset
    for i, system in enumerate(counts.systems):
        for j, stratum in enumerate(counts.strata):
            yield i, j, system, stratum, {f: int(ds[f].values[i, j]) for f in _FIELDS}


_FIELDS = ("n", "k", "m0", "tn", "m1", "tp")


def _proportion(x: int, size: int, alpha: float) -> tuple[float, float, float]:
    if size == 0:
        return (np.nan, np.nan, np.nan)
    est, lo, hi = naive(x, size, alpha=alpha, method="wilson")
    return float(est), float(lo), float(hi)


def _counts_table(counts: JudgeCounts) -> pd.DataFrame:
    frame = counts.to_frame()
    frame.insert(
        4, "p_hat", np.where(frame["n"] > 0, frame["k"] / frame["n"].where(frame["n"] > 0), np.nan)
    )
    return frame


def _theta_table(counts, alpha, fit, ci_prob, collected):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", BayesJudgeWarning)
        naive_est = estimate(counts, method="naive", alpha=alpha)
        corrected = estimate(counts, method="lang-reiczigel", alpha=alpha)
    collected += [w for w in caught if issubclass(w.category, BayesJudgeWarning)]
    n_strata = len(counts.strata)
    columns = {
        "system": np.repeat(np.asarray(counts.systems, dtype=object), n_strata),
        "stratum": np.tile(np.asarray(counts.strata, dtype=object), len(counts.systems)),
    }
    for name, result in (("naive", naive_est), ("corrected", corrected)):
        # One (system, stratum) row each, in the counts' order (no per-row selection).
        result = result.sel(system=counts.systems, stratum=counts.strata)
        ci = result["ci"].transpose("system", "stratum", "ci_bound").values.reshape(-1, 2)
        columns[name] = result["estimate"].transpose("system", "stratum").values.ravel()
        columns[f"{name}_lower"], columns[f"{name}_upper"] = ci[:, 0], ci[:, 1]
    frame = pd.DataFrame({k: v if k in ("system", "stratum") else np.asarray(v, dtype=float)
                          for k, v in columns.items()})  # fmt: skip
    if fit is not None:
        stats = _posterior_stats(fit, "theta", ci_prob, counts)
        frame["bayes"], frame["bayes_lower"], frame["bayes_upper"] = stats
    return frame


def _posterior_stats(fit, name, ci_prob, counts):
    """Posterior mean and ETI of ``name`` from ``fit.summary``, broadcast to (system, stratum)."""
    ds = fit.summary(ci_prob=ci_prob, var_names=[name], as_xarray=True)[name].dataset
    like = counts.dataset["n"]
    mean = ds["mean"].broadcast_like(like).transpose("system", "stratum").values.ravel()
    eti = ds["eti"].broadcast_like(like)
    lower = eti.sel(ci_bound="lower").transpose("system", "stratum").values.ravel()
    upper = eti.sel(ci_bound="upper").transpose("system", "stratum").values.ravel()
    return mean, lower, upper


def _judge_table(counts, alpha, fit, ci_prob):
    rows = []
    for _, _, system, stratum, c in _groups(counts):
        row = {"system": system, "stratum": stratum, "method": "closed form"}
        row["m0"], row["m1"] = c["m0"], c["m1"]
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


def _pairs(counts, pairs=None):
    """Return ``(a, b, "a - b")`` per compared pair: every pair, or the index pairs given."""
    if pairs is None:
        return [(a, b, f"{a} - {b}") for a, b in combinations(counts.systems, 2)]
    systems = counts.systems
    return [(systems[i], systems[j], f"{systems[i]} - {systems[j]}") for i, j in pairs]


def _shown_pairs(counts, theta: pd.DataFrame) -> list[tuple[int, int]] | None:
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


def _all_pairs_table(counts, alpha) -> pd.DataFrame:
    """Closed-form Δθ (delta method) and ΔJ (Newcombe) of every pair and stratum, vectorised.

    The CSV file beside a report of more than ALL_PAIRS_MAX_SYSTEMS systems: the numbers of
    ``bayesjudge.diagnostics.judge_diagnostics`` (``delta_theta``, ``delta_theta_ci``,
    ``prob_greater``, ``delta_youden``, ``delta_youden_ci``) for all K(K − 1)/2 pairs.
    """
    from bayesjudge.diagnostics import _comparison_table

    table = _comparison_table(counts, alpha)
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


_CAL = ("tn", "m0", "tp", "m1")


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


def _difference_table(counts, alpha, fit, ci_prob, comparison, collected, pairs=None):
    """Δθ per pair and stratum: frequentist (bayesjudge.compare) and Bayesian (fit.compare)."""
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
        bayes = _posterior_columns(fit, "theta", ci_prob, "bayes_difference", pairs)
        frame = frame.merge(bayes, on=["pair", "stratum"], how="left")
        if "theta_total" in fit.posterior.data_vars:
            total = _posterior_columns(fit, "theta_total", ci_prob, "bayes_difference", pairs)
            total["stratum"] = "all strata (θ_total)"
            for col in frame.columns:
                if col not in total:
                    total[col] = np.nan
            frame = pd.concat([frame, total[frame.columns]], ignore_index=True)
    if pairs is not None:  # many systems: say which comparison each row is
        best = len(counts.systems) - 1  # the first K - 1 pairs: the best against each other
        kind = {p: _WITH_BEST if i < best else _NEIGHBOURS for i, (_, _, p) in enumerate(labels)}
        frame.insert(1, "comparison", frame["pair"].map(kind))
    return frame, freq


_WITH_BEST = "with the best system"
_NEIGHBOURS = "between neighbours in rank"


def _youden_difference_table(counts, alpha, fit, ci_prob, pairs=None):
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


def _add_bootstrap_and_bias(frame, diag):
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


def _ppc_table(check, ci_prob: float, counts: JudgeCounts) -> pd.DataFrame:
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
        frame.insert(0, "variable", var)
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    for dim in ("system", "stratum"):
        if dim not in out:
            out[dim] = "(shared)"
        out[dim] = out[dim].where(out[dim].notna(), "(shared)")
    out = out[["variable", "system", "stratum", "observed", "p_value"]]
    out["outside"] = (out["p_value"] < lo) | (out["p_value"] > hi)
    return out


def _diagnoses(counts, fit, alpha, target_width, random_seed, notes, freq=None, pairs=None):
    """Return check_comparison's records (not emitted) and judge_diagnostics' Dataset."""
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
        notes.append(["The judge diagnostics could not run: ", _Plain(err)])
        return [], None
    return records, diag


@dataclass
class _Record:
    """A diagnosis from an estimator's warning (same fields as check_comparison's records)."""

    code: str
    level: str
    message: str


def _level(record) -> str:
    return str(getattr(record, "level", "warning"))


def _emit_estimator_warnings(caught) -> None:
    """Re-emit the estimators' warnings, one per category and distinct message count.

    One message as it is; several of a category as one warning that shows the first
    :data:`~bayesjudge.diagnostics.MAX_LISTED` and says how many more are in the report.
    """
    by_category: dict = {}
    for w in caught:
        by_category.setdefault(w.category, [])
        if str(w.message) not in by_category[w.category]:
            by_category[w.category].append(str(w.message))
    for category, messages in by_category.items():
        if len(messages) == 1:
            warnings.warn(messages[0], category, stacklevel=3)
            continue
        more = len(messages) - MAX_LISTED
        text = f"{len(messages)} warnings of this kind from the estimators: " + " | ".join(
            messages[:MAX_LISTED]
        )
        if more > 0:
            text += f" | and {more} more (every one is in section 7 of the report)."
        warnings.warn(text, category, stacklevel=3)


# ----------------------------------------------------------------------------- build


def build_report(
    counts: JudgeCounts | None = None,
    *,
    fit=None,
    alpha: float = 0.05,
    comparison_method: str = "bootstrap",
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
        ``fit.counts`` (passing other counts is an error).
    fit : bayesjudge.Fit, optional
        A Bayesian fit of the counts (MCMC or ``method="exact"``). Without it the report
        gives the closed forms only and says that the Bayesian parts were not run.
    alpha : float, default 0.05
        Every interval has probability ``1 - alpha``: confidence for the closed forms,
        equal-tailed credible for the posterior.
    comparison_method : {"bootstrap", "delta"}, default "bootstrap"
        Frequentist Δθ of :func:`bayesjudge.compare.compare` (paired when the counts carry
        a joint verdict table).
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

    Examples
    --------
    >>> import bayesjudge as bj
    >>> from bayesjudge.report import build_report
    >>> counts = bj.simulate_counts([0.6, 0.8], 0.85, 0.9, n=1000, m0=200, m1=200,
    ...                             system=["a", "b"], random_seed=3)
    >>> report = build_report(counts, random_seed=1, n_resamples=2000)
    >>> [s.key for s in report.sections][:3]
    ['estimand', 'design', 'intervals']
    >>> report.tables["theta"][["system", "corrected"]].round(3).values.tolist()
    [['a', 0.612], ['b', 0.804]]
    """
    alpha = check_alpha(alpha)
    ci_prob = 1 - alpha
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
    if random_seed is None:
        random_seed = int(np.random.default_rng().integers(2**31))
    shared_systems = "system" in counts.calibration_shared_over
    n_systems = counts.sizes["system"]
    collected: list = []
    notes: list[str] = []

    bar = _progress_bar(progress, n_systems)
    _step(bar, "θ and judge tables")
    tables: dict[str, pd.DataFrame] = {"counts": _counts_table(counts)}
    tables["theta"] = _theta_table(counts, alpha, fit, ci_prob, collected)
    tables["judge"] = _judge_table(counts, alpha, fit, ci_prob)
    if fit is not None and "theta_total" in fit.posterior.data_vars:
        mean, lower, upper = (np.asarray(v) for v in _total_stats(fit, ci_prob))
        tables["theta_total"] = pd.DataFrame(
            {"system": counts.systems, "bayes": mean, "bayes_lower": lower, "bayes_upper": upper}
        )
    if fit is not None:
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
    comparison = {
        "method": comparison_method,
        "calibration": "shared" if shared_systems else "separate",
        "alpha": alpha,
        "n_resamples": n_resamples,
        "random_seed": random_seed,
    }
    freq = None
    pairs = _shown_pairs(counts, tables["theta"])
    _step(bar, "comparisons")
    if n_systems >= 2:
        tables["theta_difference"], freq = _difference_table(
            counts, alpha, fit, ci_prob, comparison, collected, pairs
        )
        if not shared_systems:
            tables["youden_difference"] = _youden_difference_table(
                counts, alpha, fit, ci_prob, pairs
            )
    if pairs is not None:
        tables["all_pairs"] = _all_pairs_table(counts, alpha)
    _step(bar, "diagnostics")
    records, diag = _diagnoses(counts, fit, alpha, target_width, random_seed, notes, freq, pairs)
    recommendation = None if diag is None else diag.attrs.get("recommendation")
    if diag is not None and "youden_difference" in tables:
        tables["youden_difference"] = _add_bootstrap_and_bias(tables["youden_difference"], diag)
    codes = {getattr(r, "code", "") for r in records}
    if warn:  # one warning per kind: a report of many systems must not flood the terminal
        emit_grouped(records, stacklevel=2, total="every case is in section 7 of the report")
    estimator_warnings = []
    for w in collected:
        category = w.category.__name__
        # check_comparison reports low J itself, with the 1/J amplification; keep one of them.
        if category == "LowJudgeQualityWarning" and "low_j" in codes:
            continue
        records.append(_Record(category, "warning", str(w.message)))
        estimator_warnings.append(w)
    if warn:
        _emit_estimator_warnings(estimator_warnings)
    tables["diagnoses"] = pd.DataFrame(
        [
            {"code": getattr(r, "code", ""), "level": _level(r), "message": r.message}
            for r in records
        ],
        columns=["code", "level", "message"],
    )

    check = None
    _step(bar, "posterior predictive check")
    if fit is not None and ppc:
        check = fit.ppc(random_seed=random_seed)
        tables["ppc"] = _ppc_table(check, ci_prob, counts)

    settings = _settings(counts, fit, alpha, comparison if n_systems >= 2 else None, freq,
                         random_seed, target_width)  # fmt: skip
    tables["settings"] = pd.DataFrame(
        {"setting": list(settings), "value": [str(v) for v in settings.values()]}
    )
    _step(bar, "figures")
    figures = _figures(tables, check, ci_prob)
    sections = _sections(
        counts, fit, tables, figures, records, recommendation, notes, settings, ci_prob
    )
    _step(bar, None)
    return Report(title, sections, tables, figures, records, settings)


# A report of fewer systems takes seconds: by default its bar is drawn only from this many on.
PROGRESS_MIN_SYSTEMS = 30


def _progress_bar(progress, n_systems: int):
    """Return a plain-text bar over the report's five steps, or None when none is shown."""
    from bayesjudge._progress import progress_bar, show_progress

    if not show_progress(progress) or (progress is None and n_systems < PROGRESS_MIN_SYSTEMS):
        return None
    bar = progress_bar(5, f"report of {n_systems} systems")
    bar.steps = 0
    return bar


def _step(bar, what: str | None) -> None:
    """Mark the previous step done on the bar (all of them when ``what`` is None)."""
    if bar is None:
        return
    if what is None:
        bar.update(bar.total - bar.done)
        return
    if bar.steps:
        bar.update(1)
    bar.steps += 1
    bar.desc = f"{bar.desc.split(':')[0]}: {what}"


def _total_stats(fit, ci_prob):
    ds = fit.summary(ci_prob=ci_prob, var_names=["theta_total"], as_xarray=True)["theta_total"]
    ds = ds.dataset
    return (
        ds["mean"].values,
        ds["eti"].sel(ci_bound="lower").values,
        ds["eti"].sel(ci_bound="upper").values,
    )


def _settings(counts, fit, alpha, comparison, freq, random_seed, target_width) -> dict:
    import numpy

    settings = {
        "bayesjudge version": __version__,
        "date (UTC)": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M:%S"),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "interval probability (1 - alpha)": f"{1 - alpha:g}",
        "closed forms": "naive p̂ with Wilson interval; Rogan–Gladen θ̂ with Lang–Reiczigel "
        "interval; q0, q1 Wilson; J, ΔJ Newcombe",
        "report random_seed": random_seed,
    }
    if comparison is not None:
        settings["frequentist comparison"] = (
            f"bayesjudge.compare(method={comparison['method']!r}, "
            f"calibration={comparison['calibration']!r}, n_resamples={comparison['n_resamples']}, "
            f"random_seed={comparison['random_seed']})"
        )
        settings["frequentist method"] = comparison["method"]
        if freq is not None:
            settings["frequentist comparison paired"] = bool(freq.attrs.get("paired", False))
    if target_width is not None:
        settings["target interval width"] = target_width
    if fit is None:
        settings["Bayesian fit"] = "not run"
    else:
        c = fit.config
        settings["Bayesian fit"] = (
            f"method={c.get('method', 'mcmc')!r}, calibration={c['calibration']!r}, "
            f"pool_over={c.get('pool_over')}, aggregate={c.get('aggregate')!r}"
            + (f", paired={c['paired']}" if "paired" in c else "")
        )
        settings["priors"] = c.get("priors")
        settings["sampler"] = (
            f"exact posterior, {c.get('chains')} × {c.get('draws')} independent draws"
            if c.get("method") == "exact"
            else f"{c.get('sampler')}, {c.get('chains')} chains × {c.get('draws')} draws, "
            f"tune {c.get('tune')}, target_accept {c.get('target_accept')}"
        )
        settings["fit random_seed"] = c.get("random_seed")
        try:
            import pymc

            settings["pymc"] = pymc.__version__
        except ImportError:  # pragma: no cover
            pass
    return settings


# ----------------------------------------------------------------------------- figures


def _figures(tables, check, ci_prob) -> dict[str, bytes]:
    from bayesjudge.plots import plot_differences, plot_judge, plot_ppc, plot_theta_forest

    figures = {}
    theta = tables["theta"]
    long = []
    for col, label in (
        ("naive", "naive p̂ (not θ)"),
        ("corrected", "Lang–Reiczigel"),
        ("bayes", "Bayesian"),
    ):
        if col in theta:
            part = theta[["system", "stratum"]].copy()
            part["method"] = label
            part["estimate"] = theta[col]
            part["lower"], part["upper"] = theta[f"{col}_lower"], theta[f"{col}_upper"]
            long.append(part)
    long = pd.concat(long, ignore_index=True)
    long["system"] = long["system"].astype(str)
    n_strata = long["stratum"].nunique()
    n_systems = long["system"].nunique()
    many = n_systems > FIGURE_ROWS_MAX
    if many:  # one column per system, by rank: a forest plot would be metres tall
        figures["theta_forest"] = _png(
            lambda ax: _ranked_panels(long, "system", ax, "true accuracy θ"),
            n_strata,
            12,
            3.6 * n_strata + 0.6,
            stacked=True,
        )
    else:
        figures["theta_forest"] = _png(
            lambda ax: plot_theta_forest(long, ax=ax),
            n_strata,
            min(4.2 * n_strata, 16),
            0.55 * n_systems + 1.8,
        )
    judge = tables["judge"].copy()
    judge["system"] = judge["system"].astype(str)
    groups = len(judge[["system", "stratum"]].drop_duplicates())
    if groups > FIGURE_ROWS_MAX:
        figures["judge"] = _png(lambda ax: _judge_ranked(judge, ax), 3, 12, 10, stacked=True)
    else:
        figures["judge"] = _png(
            lambda ax: plot_judge(judge, ax=ax), 3, 12, min(0.5 * groups + 1.8, 0.3 * groups + 3)
        )
    if "theta_difference" in tables:
        diff = tables["theta_difference"]
        long = []
        for col, label in (("frequentist", "frequentist"), ("bayes_difference", "Bayesian")):
            if col in diff and diff[col].notna().any():
                keep = ["pair", "stratum"] + (["comparison"] if "comparison" in diff else [])
                part = diff[keep].copy()
                part["method"] = label
                part["estimate"] = diff[col]
                part["lower"], part["upper"] = diff[f"{col}_lower"], diff[f"{col}_upper"]
                part["prob_greater"] = diff["prob_greater"] if col != "frequentist" else np.nan
                long.append(part)
        if long:
            long = pd.concat(long, ignore_index=True)
            long = long[long["estimate"].notna()]
            panels = long["stratum"].nunique()
            pairs = long["pair"].nunique()
            if "comparison" in long:  # many systems: with the best, and neighbours in rank
                kinds = list(dict.fromkeys(long["comparison"]))
                figures["theta_difference"] = _png(
                    lambda ax: _difference_ranked(long, kinds, ax),
                    panels * len(kinds),
                    12,
                    3.4 * panels * len(kinds) + 0.6,
                    stacked=True,
                )
            else:
                # Side by side only while it stays readable; else one panel per stratum.
                stacked = panels > 2 or (panels > 1 and pairs > 6)
                row_height = 0.55 if pairs <= 6 else 0.35
                figures["theta_difference"] = _png(
                    lambda ax: plot_differences(long, ax=ax),
                    panels,
                    10 if stacked else 5.6 * panels + 1.2,
                    (row_height * pairs + 1.3) * (panels if stacked else 1) + 0.5,
                    stacked=stacked,
                )
    if check is not None:
        groups = int(check.observed["k"].size)
        wide = groups > 8
        crowded = groups > FIGURE_ROWS_MAX

        figures["ppc"] = _png(
            # Hundreds of tick labels overlap (and take minutes to lay out): the table names them.
            lambda ax: plot_ppc(check, ci_prob=ci_prob, ax=ax, tick_labels=not crowded),
            3,
            min(max(12, 0.35 * groups), 16) if wide else 12,
            3 * 4.2 if wide else 3.8,
            stacked=wide,
        )
    return figures


def _ranked_panels(long, label_col, ax, ylabel):
    """θ by rank, one panel per stratum (many systems)."""
    from bayesjudge.plots import plot_ranked

    strata = list(dict.fromkeys(long["stratum"]))
    for axis, stratum in zip(ax, strata, strict=True):
        rows = long[long["stratum"] == stratum]
        ranked = rows[rows["method"] == "Lang–Reiczigel"]
        order = _order(ranked if len(ranked) else rows, label_col)
        title = f"stratum {stratum}: " if len(strata) > 1 else ""
        plot_ranked(rows, ax=axis, label_col=label_col, order=order, ylabel=ylabel,
                    title=f"{title}{len(order)} systems by corrected θ̂")  # fmt: skip
        axis.set_ylim(-0.02, 1.02)


def _order(rows, label_col):
    values = rows.groupby(label_col, sort=False)["estimate"].first()
    key = values.to_numpy(float)
    key = np.where(np.isnan(key), np.inf, -key)
    return [values.index[i] for i in np.argsort(key, kind="stable")]


def _judge_ranked(judge, ax):
    """q0, q1 and J of many groups, each sorted by its closed-form estimate."""
    from bayesjudge.plots import plot_ranked

    several = judge["stratum"].nunique() > 1
    judge = judge.copy()
    judge["group"] = [
        f"{a} / {b}" if several else str(a)
        for a, b in zip(judge["system"], judge["stratum"], strict=True)
    ]
    titles = ("specificity q0", "sensitivity q1", "Youden J = q0 + q1 − 1")
    for axis, var, title in zip(ax, ("q0", "q1", "J"), titles, strict=True):
        rows = judge[["group", "method"]].copy()
        rows["estimate"] = judge[var]
        rows["lower"], rows["upper"] = judge[f"{var}_lower"], judge[f"{var}_upper"]
        order = _order(rows[rows["method"] == rows["method"].iloc[0]], "group")
        plot_ranked(rows, ax=axis, label_col="group", order=order, ylabel=var,
                    title=f"{title}: {len(order)} groups by estimate")  # fmt: skip
        if var == "J":
            axis.axhline(0, color="C3", lw=0.8, ls="--")
            axis.axhline(0.2, color="0.5", lw=0.8, ls=":")


def _difference_ranked(long, kinds, ax):
    """Δθ with the best system and between neighbours in rank, in rank order (many systems)."""
    from bayesjudge.plots import plot_ranked

    strata = list(dict.fromkeys(long["stratum"]))
    axes = iter(ax)
    for stratum in strata:
        for kind in kinds:
            axis = next(axes)
            rows = long[(long["stratum"] == stratum) & (long["comparison"] == kind)]
            order = list(dict.fromkeys(rows["pair"]))
            where = f"stratum {stratum}: " if len(strata) > 1 else ""
            plot_ranked(rows, ax=axis, label_col="pair", order=order, ylabel="Δθ = θ_a − θ_b",
                        title=f"{where}Δθ {kind} ({len(order)} pairs, by rank)")  # fmt: skip
            axis.axhline(0, color="0.3", lw=0.8, ls="--")


# ----------------------------------------------------------------------------- sections


#: A warning code with more records than this is summarised: its first message in full, then
#: one table row per record with its numbers (keeps a report of many systems readable).
_MAX_BULLETS_PER_CODE = 3


def _warning_blocks(section: ReportSection, records, tables: dict) -> None:
    """Bullets of the diagnoses; a code with many records gets one bullet and a table."""
    by_code: dict[str, list] = {}
    for r in records:
        by_code.setdefault(str(getattr(r, "code", "")), []).append(r)
    items, extra = [], []
    for code, group in by_code.items():
        if len(group) <= _MAX_BULLETS_PER_CODE or not all(hasattr(r, "values") for r in group):
            items += [[f"**{_level(r)}** `{code}`: ", _Plain(r.message)] for r in group]
            continue
        items.append([
            f"**{_level(group[0])}** `{code}` ({len(group)} cases, each in the table below; the "
            f"first in full): ",
            _Plain(group[0].message),
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


def _max_paired() -> int:
    from bayesjudge.models.build import MAX_PAIRED_SYSTEMS

    return MAX_PAIRED_SYSTEMS


def _pct(ci_prob: float) -> str:
    return f"{100 * ci_prob:g}%"


def _sections(counts, fit, tables, figures, records, recommendation, notes, settings, ci_prob):
    sections = {key: ReportSection(key, title) for key, title in SECTIONS.items()}
    pct = _pct(ci_prob)
    n_systems, n_strata = counts.sizes["system"], counts.sizes["stratum"]
    shared = counts.calibration_shared_over
    has_joint = bool(getattr(counts, "has_joint", False))
    bayes = fit is not None

    s = sections["estimand"]
    s.text(
        "The estimand is **θ, the true accuracy**: the probability that a system's answer to an "
        "item drawn like the test items is truly correct (as a human would label it), per system"
        + (" and stratum" if n_strata > 1 else "")
        + " — the share of correct answers in the population the test items were sampled from, "
        "not only in this test set (so the intervals carry test-set sampling). The LLM "
        "judge's share of items judged correct, p̂ = k/n, is **not** θ: it "
        "estimates p = θ·q1 + (1 − θ)(1 − q0), where q0 (specificity) = P(judged incorrect | "
        "truly incorrect) and q1 (sensitivity) = P(judged correct | truly correct). p̂ is "
        "biased towards 1 − q0 for weak systems and towards q1 for strong ones."
    )
    s.text(
        "**All θ estimates below are corrected** for the judge's errors, which are estimated "
        "from a human-labelled calibration set; p̂ is shown only for reference."
        + (
            f" This report covers {n_systems} systems: besides each system's θ (single-system "
            "estimation), it compares them (differences Δθ = θ_a − θ_b), which needs a "
            "calibration design that keeps the judge's errors comparable across systems."
            if n_systems > 1
            else " This is single-system estimation; there is nothing to compare."
        )
    )

    s = sections["design"]
    n_cal = int(counts.dataset["m0"].sum() + counts.dataset["m1"].sum())
    if shared:
        design = (
            f"**Shared calibration**: one calibration set serves every {' and '.join(shared)} "
            "label (the same human-labelled items correct all of them). Shared calibration "
            "assumes the judge errs alike on every system (ΔJ = 0); it cannot be checked from "
            "a shared set itself and needs justification (Fiedler Sec. 7, App. C)."
        )
        if "system" in shared:
            cal = counts.shared_calibration_counts(list(shared))
            n_cal = int(cal["m0"].sum() + cal["m1"].sum())
    else:
        design = (
            "**System-specific calibration**: every (system, stratum) group has its own "
            "human-labelled calibration items, so the judge's q0, q1 are estimated separately "
            "for each and ΔJ can be checked."
        )
    s.text(design)
    if bayes and fit.config["calibration"] != "separate":
        pooled = fit.config.get("pool_over") or ["system", "stratum"]
        s.text(
            f"The Bayesian model uses **{fit.config['calibration']} calibration** pooled over "
            f"{', '.join(pooled)}: "
            + (
                "one q0, q1 for all groups along those dims."
                if fit.config["calibration"] == "shared"
                else "each group's q0, q1 drawn from a common population (partial pooling), "
                "whose spread σ is estimated."
            )
            + " The closed forms use each group's calibration counts as given."
        )
    test_items = int(counts.dataset["n"].sum())
    s.text(
        f"Sizes: {test_items} judged test items and {n_cal} human-labelled calibration items "
        f"in all; per group (m0 truly incorrect and m1 truly correct calibration items, tn and "
        f"tp of them judged right):"
    )
    s.table("counts", "Counts per system and stratum: n test items, k judged correct, p̂ = k/n; "
            "calibration m0, tn, m1, tp.")  # fmt: skip
    if n_systems > 1:
        if has_joint:
            joint = counts.joint
            per_stratum = joint.sum("pattern")
            items = ", ".join(
                f"{int(v)} in stratum {st}" if n_strata > 1 else f"{int(v)}"
                for st, v in zip(per_stratum["stratum"].values, per_stratum.values, strict=True)
            )
            s.text([
                "**Paired design**: the systems answered shared items (",
                _Plain(items),
                " items answered "
                "by every system), and the joint verdict table is used: comparisons resample "
                "items, keeping each item's verdicts together (Fiedler App. B)"
                + "."
                + (
                    ""
                    if not bayes
                    else " The Bayesian model is the paired one (latent joint correctness)."
                    if fit.config.get("paired")
                    else " The Bayesian model is **unpaired** (it treats the systems' test "
                    "items as independent, so its Δθ intervals ignore the pairing and are "
                    "wider when correctness is positively correlated); fit with "
                    "method='mcmc' (`bayesjudge report --method mcmc`) for the paired model"
                    + (
                        ", or use bayesjudge.fit_pairwise: the joint model takes at most "
                        f"{_max_paired()} systems"
                        if n_systems > _max_paired()
                        else ""
                    )
                    + "."
                ),
            ])  # fmt: skip
        else:
            s.text(
                "**Unpaired design**: no item ids link the systems' test items (no joint verdict "
                "table), so comparisons treat the systems' test sets as independent. If the "
                "systems answered the same items, give the item column (`--item`) — pairing "
                "narrows Δθ intervals when correctness is correlated."
            )

    s = sections["intervals"]
    s.text(f"Every interval has probability {pct}.")
    items = [
        "**naive p̂ with Wilson interval**: carries test-set sampling only, and is an interval "
        "for p, not θ — its coverage of θ can be near 0.",
        "**Rogan–Gladen θ̂ = (p̂ + q̂0 − 1)/(q̂0 + q̂1 − 1) with the Lang–Reiczigel interval** "
        "(Lee et al. eqs. 5–8; clipped to [0, 1]): a confidence interval that carries "
        "test-set sampling (n) and calibration sampling (m0, m1).",
        "**q0, q1 with Wilson intervals; J and ΔJ with Newcombe's hybrid score interval**: carry "
        "calibration sampling only (the diagnostic question is how well the judge is known).",
    ]
    if n_systems > 1:
        items.append(
            "**Frequentist Δθ** "
            f"(`{settings.get('frequentist comparison', 'bayesjudge.compare: not run')}`): "
            + (
                (
                    "a paired bootstrap that resamples items (keeping each item's verdicts on "
                    "all systems together) and the calibration sets"
                    if has_joint
                    else "a bootstrap that resamples each system's test set and the "
                    "calibration sets independently"
                )
                if settings.get("frequentist method") == "bootstrap"
                else "a normal interval with Fiedler's delta-method standard error (App. B), "
                "which carries test-set and calibration sampling"
                + (" and the pairing of verdicts on shared items" if has_joint else "")
            )
            + (
                "; with shared calibration the common calibration draw enters both systems."
                if "system" in shared
                else "."
            )
        )
    if bayes:
        items.append(
            "**Bayesian posterior** (`bayesjudge.fit`, "
            f"{settings['Bayesian fit']}): equal-tailed credible intervals (ETI) given the test "
            "and calibration counts and the priors; they carry the uncertainty of the test "
            "share and of q0, q1 (and, for hierarchical calibration, of the population of "
            "judges). Differences are taken draw by draw, so they keep the posterior "
            "correlation of the two systems; P(θ_a > θ_b) is the posterior share of draws with "
            "θ_a > θ_b."
        )
    else:
        items.append(
            "**Bayesian parts were not run** (no fit given): no posterior θ, no P(θ_a > θ_b), "
            "no posterior predictive check. Run `bayesjudge report --method exact` (or mcmc), "
            "or pass `fit=bj.fit(counts, ...)`."
        )
    items.append(
        "No interval here carries repeated judge runs (one verdict per item) or the choice of "
        "which items were labelled beyond random sampling; they assume the calibration items "
        "are representative of the test items given their truth."
    )
    s.bullets(items)

    s = sections["accuracy"]
    s.table("theta", f"θ per system and stratum: naive p̂ (for reference), corrected θ̂ "
            f"and, if run, the Bayesian posterior mean; {pct} intervals in brackets.")  # fmt: skip
    if "theta_total" in tables:
        s.table(
            "theta_total",
            f"Bayesian θ_total per system over all strata (strata weighted as configured: "
            f"{fit.config.get('aggregate')}); {pct} ETI.",
        )
    s.figure(
        "theta_forest",
        f"Forest plot of θ per system{' and stratum' if n_strata > 1 else ''}: naive p̂ "
        f"(grey; an estimate of p, not θ), Lang–Reiczigel (blue) and Bayesian (orange), "
        f"{pct} intervals.",
    )

    s = sections["judge"]
    s.text(
        "J = q0 + q1 − 1 (Youden's index) measures how well the judge separates correct from "
        "incorrect answers; the correction divides by J, so every error of θ̂ is amplified by "
        f"about 1/|J|. J = 0 is a judge no better than chance, and J < 0 one that is worse (it "
        "calls truly incorrect answers correct more often than truly correct ones: check that "
        "the labels, e.g. `--positive`, are not swapped); for 0 < J < "
        f"{LOW_J_THRESHOLD:g} the amplification exceeds 5×."
    )
    s.table("judge", f"Judge quality per system and stratum with {pct} intervals "
            "(closed form: Wilson for q0, q1, Newcombe for J; Bayesian: ETI).")  # fmt: skip
    if "calibration_scale" in tables:
        s.text(
            "Hierarchical calibration: σ is the spread of the groups' logit q0 and logit q1 "
            "around their population mean. σ near 0 says the judge behaves alike across the "
            "pooled groups (sharing would be defensible); a large σ says it does not."
        )
        s.table("calibration_scale", f"Posterior of the calibration scales σ: mean [{pct} ETI].")
    s.figure("judge", f"Judge diagnostics: q0, q1 and J per group with {pct} intervals; the "
             "dashed line marks J = 0, the dotted one J = 0.2.")  # fmt: skip

    s = sections["comparisons"]
    if n_systems < 2:
        s.text("One system: there are no comparisons.")
    else:
        paired_note = (
            " The frequentist Δθ is paired (items resampled with all their verdicts)."
            if has_joint
            else ""
        ) + (
            (
                " The Bayesian Δθ is from the paired model."
                if fit.config.get("paired")
                else " The Bayesian Δθ is from the unpaired model."
            )
            if bayes and has_joint
            else ""
        )
        if "comparison" in tables["theta_difference"]:
            s.text(
                f"**{n_systems} systems** make {n_systems * (n_systems - 1) // 2} pairs; the "
                "tables and figures compare each system with the best one (by corrected θ̂, "
                "averaged over strata) and with its neighbour in rank "
                f"({2 * n_systems - 3} pairs, column `comparison`): how far each is from the "
                "best, and whether each step of the ranking is decided. The closed-form Δθ "
                "(delta method, with P(θ_a > θ_b)) and ΔJ (Newcombe) of every pair are in "
                "`comparisons_all_pairs.csv` beside the report."
            )
        s.table(
            "theta_difference",
            f"Δθ = θ_a − θ_b per pair and stratum with {pct} intervals"
            + (
                "; P(a > b) is the posterior probability that θ_a > θ_b."
                if bayes
                else " (no Bayesian fit, so no P(θ_a > θ_b))."
            )
            + paired_note,
        )
        if "theta_difference" in figures:
            s.figure(
                "theta_difference",
                f"Pairwise Δθ with {pct} intervals against 0 (dashed)"
                + (
                    " (frequentist and Bayesian); P(θ_a > θ_b) from the posterior beside each pair."
                    if bayes
                    else " (frequentist)."
                ),
            )
        if "youden_difference" in tables:
            fit_design = fit.config["calibration"] if bayes else "separate"
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
                        else "partially "
                        "(hierarchical), which shrinks the systems' J towards each other"
                    )
                    + ", so its Δθ relies on ΔJ ≈ 0"
                    + (" and is biased otherwise." if fit_design == "shared" else ".")
                    if fit_design != "separate"
                    else "."
                )
            )
            s.table(
                "youden_difference",
                f"ΔJ per pair and stratum with {pct} intervals: Newcombe (closed form), "
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
        if recommendation:
            s.text([
                "**Calibration design**: ",
                _Plain(recommendation),
                " (The rule reports a difference "
                "only when a simultaneous interval of Δq0, Δq1 or ΔJ excludes 0, a false-alarm "
                "rate of at most 5 %; it calls sharing defensible only when an upper confidence "
                "bound of the App. C bias is below half the standard error of Δθ; otherwise it "
                "keeps system-specific calibration as the safe choice.)",
            ])  # fmt: skip

    s = sections["warnings"]
    if records:
        s.text(
            "The diagnostics below flag trouble; where they do, **weaken the claim** rather than "
            "choosing the most favourable estimate (Fiedler Sec. 7, item 7)."
        )
        _warning_blocks(s, records, tables)
    else:
        s.text("No warnings: judge quality, ΔJ, near ties and calibration size raised no flag.")
    s.bullets(notes)

    s = sections["checks"]
    if not bayes:
        s.text(
            "The Bayesian parts were not run (no fit): no sampler diagnostics and no "
            "posterior predictive check."
        )
    else:
        d = fit.diagnostics()
        if fit.config.get("method") == "exact":
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
        if "ppc" in tables:
            bad = tables["ppc"]["outside"].sum()
            s.text(
                "Posterior predictive check: the observed counts against counts replicated "
                f"from the posterior; mid-p p-values outside the central {pct} are flagged "
                f"({int(bad)} of {len(tables['ppc'])} flagged). "
                + (
                    "This fit has separate calibration: every group has its own θ, q0 and q1, "
                    "so the model reproduces each group's counts by construction and the check "
                    "cannot detect misfit (p-values near 0.5); it has power where groups share "
                    "parameters (shared or hierarchical calibration)."
                    if fit.config["calibration"] == "separate" and not fit.config.get("paired")
                    else "Groups share parameters in this fit ("
                    + (
                        "the paired model's joint verdict table"
                        if fit.config["calibration"] == "separate"
                        else f"{fit.config['calibration']} calibration"
                    )
                    + "), so a flagged count says the model does not reproduce the data there."
                )
            )
            s.table("ppc", "Posterior predictive p-values per observed count.")
            s.figure("ppc", f"Observed shares (dots) against their replicated {pct} "
                     "intervals (grey).")  # fmt: skip
        else:
            s.text("The posterior predictive check was not run (ppc=False).")

    s = sections["reproducibility"]
    s.table("settings", "Settings of this report.")
    return [sections[key] for key in SECTIONS]


# ----------------------------------------------------------------------------- write


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
    if isinstance(source, JudgeCounts):
        report = build_report(source, **options)
    elif hasattr(source, "posterior") and hasattr(source, "counts"):
        report = build_report(fit=source, **options)
    else:
        raise TypeError(
            f"source must be a bayesjudge.Fit or JudgeCounts; got {type(source).__name__}."
        )
    report.paths = report.save(out_dir) if out_dir is not None else {}
    return report
