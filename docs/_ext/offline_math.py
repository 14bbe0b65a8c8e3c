r"""Sphinx extension: render the documentation's math to MathML when the site is built.

``sphinx.ext.mathjax`` leaves the TeX in the page and loads MathJax from a CDN, so a page read
offline (a downloaded copy of the site, a docs folder opened from disk, a network that blocks
the CDN) shows raw ``\\frac{...}`` text. This renderer converts every formula (MyST ``$...$``,
``$$...$$``, ``{math}`` blocks and amsmath environments) to MathML with the pure-Python
converter ``latex2mathml`` while the pages are written; Chromium, Firefox and Safari render
MathML natively, so the pages need no script and no network.

A formula that cannot be converted, or whose MathML still holds a TeX command (latex2mathml
passes unknown commands through as text, e.g. ``<mi>\\foo</mi>``), is a Sphinx warning that
names the page and the TeX: ``make docs`` builds with ``-W``, so it fails rather than
publishing raw TeX. The TeX is kept on each ``<math>`` element as ``data-latex``.
"""

from __future__ import annotations

import html
import re

from docutils import nodes
from latex2mathml.converter import convert
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)

#: A TeX command left in the MathML's text: latex2mathml did not know it.
_LEFT_OVER = re.compile(r">[^<]*\\[A-Za-z]+[^<]*<")

#: TeX that latex2mathml renders poorly or not at all, rewritten to an equivalent it knows.
_REWRITES = (
    (re.compile(r"\\sim(?![A-Za-z])"), r"\\thicksim"),  # latex2mathml maps \sim to "~" (ASCII)
)

#: Bits of CSS: display formulas centred and scrollable when wider than the page.
_CSS = """
div.math{overflow-x:auto;overflow-y:hidden;margin:.8em 0;text-align:center}
div.math math{display:block;margin:0 auto}
span.eqno{float:right}
"""


def to_mathml(latex: str, *, display: bool) -> str:
    r"""Return ``latex`` as a ``<math>`` element; raise ValueError where it cannot be rendered.

    Examples
    --------
    >>> to_mathml(r"\\frac{a}{b}", display=False)[:60]
    '<math xmlns="http://www.w3.org/1998/Math/MathML" display="in'
    """
    tex = latex.strip()
    for pattern, replacement in _REWRITES:
        tex = pattern.sub(replacement, tex)
    try:
        mathml = convert(tex, display="block" if display else "inline")
    except Exception as err:  # latex2mathml raises its own exception classes
        raise ValueError(f"latex2mathml cannot convert it ({type(err).__name__}: {err})") from err
    left = _LEFT_OVER.search(mathml)
    if left:
        raise ValueError(f"latex2mathml does not know {left.group(0)[1:-1].strip()!r}")
    attribute = f' data-latex="{html.escape(latex.strip(), quote=True)}"'
    return mathml.replace("<math ", f"<math{attribute} ", 1)


def _render(self, node, latex: str, display: bool) -> str:
    try:
        return to_mathml(latex, display=display)
    except ValueError as err:
        logger.warning("math cannot be rendered as MathML: %s; TeX: %r", err, latex, location=node)
        return f'<code class="math-error">{self.encode(latex)}</code>'


def visit_math(self, node: nodes.math) -> None:
    """Write an inline formula as MathML."""
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate"))
    self.body.append(_render(self, node, node.astext(), display=False) + "</span>")
    raise nodes.SkipNode


def visit_displaymath(self, node: nodes.math_block) -> None:
    """Write a display formula (one MathML block per equation, blank-line separated)."""
    self.body.append(self.starttag(node, "div", CLASS="math notranslate"))
    if node.get("number"):
        number = get_node_equation_number(self, node)
        self.body.append(f'<span class="eqno">({number})')
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    nowrap = node.get("no-wrap", node.get("nowrap", False))
    parts = [node.astext()] if nowrap else [p for p in node.astext().split("\n\n") if p.strip()]
    for part in parts:
        if not nowrap and "\\\\" in part and "\\begin" not in part:
            part = f"\\begin{{aligned}}{part}\\end{{aligned}}"  # several lines, as MathJax's split
        self.body.append(_render(self, node, part, display=True))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def _add_css(app, pagename, templatename, context, doctree) -> None:
    if context.get("has_maths_elements") or (doctree is not None and _has_math(doctree)):
        context["metatags"] = context.get("metatags", "") + f"\n<style>{_CSS}</style>"


def _has_math(doctree) -> bool:
    return any(
        True for _ in doctree.findall(lambda n: isinstance(n, nodes.math | nodes.math_block))
    )


def setup(app):
    """Register the ``mathml`` renderer (select it with ``html_math_renderer = "mathml"``)."""
    app.add_html_math_renderer(
        "mathml", inline_renderers=(visit_math, None), block_renderers=(visit_displaymath, None)
    )
    app.connect("html-page-context", _add_css)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
