"""The report as a document: :class:`Report` and its sections, rendered as Markdown and HTML.

Nothing here computes a number: a :class:`Report` holds sections of blocks (paragraphs,
bullets, tables, figures) and the tables and figures they refer to, and renders them. Tables
hold numbers; :func:`_display` turns them into the text of the rendered cells (3 decimals,
each estimate with its interval in one cell). :meth:`Report.save` writes every file
atomically.
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from bayesjudge._io import atomic_write
from bayesjudge._text import (
    fmt_interval,
    fmt_number,
    format_probability,
    markdown_escape,
    terminal_safe,
)

__all__ = ["SECTIONS", "Report", "ReportSection"]

#: The report's sections, in order: key and title. Every report has all of them; a section
#: whose content does not apply (e.g. comparisons of a single system) says why. The bottom
#: line (unnumbered) comes first: the answer before the methods.
SECTIONS = {
    "bottom_line": "The bottom line",
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


class Plain(str):
    """Text from user data (names, messages quoting names): shown literally, never as markup.

    A block's text may be a ``str`` (the report's own text, with ```code``` and ``**bold**``)
    or a list of parts mixing ``str`` and ``Plain``; ``Plain`` parts are escaped for
    Markdown (:func:`bayesjudge._text.markdown_escape`) and for HTML (:func:`html.escape`,
    without the code/bold markup).
    """


def _md_text(value) -> str:
    if isinstance(value, Plain):
        return markdown_escape(value)
    if isinstance(value, str):
        return value
    return "".join(_md_text(part) for part in value)


def _html_text(value) -> str:
    if isinstance(value, Plain):
        return html.escape(terminal_safe(value))
    if isinstance(value, str):
        return _inline_html(value)
    return "".join(_html_text(part) for part in value)


def _head_text(value) -> str:
    """Return the leading markup of a block's text (for the warning level of a list item)."""
    if isinstance(value, str):
        return "" if isinstance(value, Plain) else value
    return _head_text(value[0]) if value else ""


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
        ``comparisons_all_pairs.csv``). For random-design counts ``"theta"`` also holds the
        human-only baseline (``human``) and ``width_ratio``; its ``attrs`` name the corrected
        estimator (``method``) and the ``estimand``.
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
            body += [self._html_block(block) for block in section.blocks]
            body.append("</section>")
        return (
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{html.escape(self.title)}</title>\n<style>{_CSS}</style>\n</head>\n"
            "<body>\n" + "\n".join(body) + "\n</body>\n</html>\n"
        )

    def _html_block(self, block: tuple) -> str:
        """Return one block of a section as HTML."""
        kind = block[0]
        if kind == "p":
            return f"<p>{_html_text(block[1])}</p>"
        if kind == "list":
            items = []
            for item in block[1]:
                level = re.match(r"\*\*(error|warning|info|caution)\*\*", _head_text(item))
                cls = f' class="{level.group(1)}"' if level else ""
                items.append(f"<li{cls}>{_html_text(item)}</li>")
            return "<ul>" + "".join(items) + "</ul>"
        _, name, caption = block
        if kind == "table":
            return _html_table(_display(self.tables[name]), caption, name)
        data = base64.b64encode(self.figures[name]).decode("ascii")
        return (
            f'<figure id="figure-{name}"><img alt="{html.escape(caption)}" '
            f'src="data:image/png;base64,{data}">'
            f"<figcaption>{_inline_html(caption)}</figcaption></figure>"
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


# ----------------------------------------------------------------------------- table cells


def _fmt(x) -> str:
    """Return the text of one table cell: numbers to 3 decimals, user text as :class:`Plain`.

    >>> _fmt(0.12345), _fmt(np.int64(3)), _fmt(np.True_), _fmt(None)
    ('0.123', '3', 'True', '—')
    """
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return "—"
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        return fmt_number(x)
    return Plain(x)  # names and messages: user data, escaped when rendered


def _display(frame: pd.DataFrame) -> pd.DataFrame:
    """Strings for display: ``c`` with ``c_lower``/``c_upper`` becomes ``"c [lower, upper]"``.

    Headers come from :data:`_HEADERS`, overridden by the table's own ``attrs["headers"]``
    (the θ table names its corrected estimator there).
    """
    columns = list(frame.columns)
    headers = {**_HEADERS, **frame.attrs.get("headers", {})}
    out = {}
    for col in columns:
        if col.endswith(("_lower", "_upper")) and col.rsplit("_", 1)[0] in columns:
            continue
        values = frame[col].tolist()
        if col == "prob_greater":
            out[headers[col]] = [_fmt(v) if np.isnan(v) else format_probability(v) for v in values]
            continue
        if f"{col}_lower" in columns and f"{col}_upper" in columns:
            cells = []
            for v, lo, hi in zip(values, frame[f"{col}_lower"], frame[f"{col}_upper"], strict=True):
                cell = _fmt(v)
                if not (np.isnan(lo) or np.isnan(hi)):
                    cell += " " + fmt_interval(lo, hi)
                cells.append(cell)
            out[headers.get(col, col)] = cells
        elif col in _OWN_TEXT:  # the report's own words, not user data
            out[headers.get(col, col)] = [str(_fmt(v)) for v in values]
        else:
            out[headers.get(col, col)] = [_fmt(v) for v in values]
    return pd.DataFrame(out, dtype=object)


#: Text columns that hold the report's own words; every other text cell is user data (names,
#: messages quoting them) and is escaped when rendered.
_OWN_TEXT = frozenset({"setting", "method", "variable", "code", "level", "comparison", "settled"})


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
        if isinstance(value, Plain):
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
        numeric = not isinstance(value, Plain) and (
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
