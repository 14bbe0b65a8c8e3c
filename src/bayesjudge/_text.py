"""Names from user data shown safely: in a terminal, in Markdown and in figures.

System, stratum and judge names come from the user's files and may hold anything: newlines,
ANSI escape sequences, Markdown or HTML, ``$`` signs. They are data, never markup or control
codes. These helpers show them as text in each medium; the names themselves are never changed
in results.
"""

from __future__ import annotations

import math
import re
import unicodedata

__all__ = [
    "FIXED_POINT_MAX",
    "fmt_interval",
    "fmt_number",
    "format_probability",
    "group_label",
    "markdown_escape",
    "pair_label",
    "plain_label",
    "terminal_safe",
]

#: Characters that can start Markdown or HTML markup inside a line: emphasis, code, links and
#: images (``[``), raw HTML and autolinks (``<``), entities (``&``), table cells (``|``),
#: strikethrough (``~``), math in MyST and other renderers (``$``), roles and attributes (``{``),
#: a closing heading sequence (``#``) and the escape itself. Other punctuation (``-``, ``.``,
#: ``(``) only acts at the start of a line, which :func:`markdown_escape` handles separately,
#: so that names such as ``gpt-4.1 (2025)`` stay readable in the Markdown source.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~$&!])")
_MD_LINE_START = re.compile(r"^(\s*)([-+=>]|\d+(?=[.)]))")


def terminal_safe(text: object, *, escape_backslash: bool = False) -> str:
    r"""Return ``text`` with control characters (newlines, ``\r``, ANSI escapes) shown escaped.

    Printable characters, non-ASCII letters included, are kept as they are.

    Parameters
    ----------
    text : object
        A name or a message (``str(text)`` is shown).
    escape_backslash : bool, default False
        Also show a literal backslash doubled (``\\``), so that every backslash shown starts
        an escape: a name holding a newline (shown ``\n``) and one holding a backslash and
        ``n`` (shown ``\\n``) print differently. For one *name*, once. The default leaves
        backslashes alone so that the function is idempotent: the command line passes whole
        messages through it again, and those hold names escaped already.

    Examples
    --------
    >>> terminal_safe("gpt-4\n\x1b[31mred")
    'gpt-4\\n\\x1b[31mred'
    >>> terminal_safe("Mistral-7B é")
    'Mistral-7B é'
    >>> print(terminal_safe("new\nline", escape_backslash=True),
    ...       terminal_safe("new\\nline", escape_backslash=True))
    new\nline new\\nline
    """
    text = str(text)
    if all(ch.isprintable() for ch in text) and not (escape_backslash and "\\" in text):
        return text
    out = []
    for ch in text:
        if ch == "\\" and escape_backslash:
            out.append("\\\\")
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(repr(ch)[1:-1] if unicodedata.category(ch) != "Zs" else ch)
    return "".join(out)


def markdown_escape(text: object) -> str:
    r"""Return ``text`` for a Markdown table cell or heading: shown literally, never as markup.

    Backslash-escapes the Markdown and HTML punctuation that can start markup inside a line
    (CommonMark renders an escaped ``<`` as a literal ``<``, so no tag can be injected, and an
    escaped ``[`` starts no link), a list, heading-underline or block-quote marker at the start,
    and shows control characters escaped (a newline would end a table row or a heading).

    Examples
    --------
    >>> markdown_escape("<script>alert(1)</script>")
    '\\<script\\>alert(1)\\</script\\>'
    >>> markdown_escape("a|b")
    'a\\|b'
    >>> markdown_escape("gpt-4.1 (2025)")
    'gpt-4.1 (2025)'
    >>> markdown_escape("- item")
    '\\- item'
    >>> markdown_escape("6.4.0")
    '6\\.4.0'
    """
    text = _MD_SPECIAL.sub(r"\\\1", terminal_safe(text))
    # A leading "-", "+", "=" or ">" is escaped itself; "1." and "1)" on their punctuation.
    return _MD_LINE_START.sub(_escape_line_start, text)


def _escape_line_start(match: re.Match) -> str:
    space, marker = match.group(1), match.group(2)
    if marker.isdigit():
        return space + marker + "\\"
    return space + "\\" + marker


def plain_label(text: object) -> str:
    r"""Return ``text`` for a matplotlib label: a ``$`` never starts mathtext.

    Examples
    --------
    >>> plain_label("$\\frac{a}{$")
    '\\$\\frac{a}{\\$'
    """
    return terminal_safe(text).replace("$", r"\$")


def pair_label(first: object, second: object) -> str:
    """Return the label of the pair (first, second): ``"first - second"``, the one spelling.

    Comparisons (``compare``, ``Fit.compare``, the report, the diagnostics) name a pair of
    systems or strata by this label in their ``pair`` coordinate.

    Examples
    --------
    >>> pair_label("gpt-4", "llama")
    'gpt-4 - llama'
    """
    return f"{first} - {second}"


#: Numbers at least this large in magnitude are shown in scientific notation by
#: :func:`fmt_number` and :func:`fmt_interval` (``1.000e+300``); smaller ones in fixed point.
#: Fixed point would spell a score of ``1e300`` with 301 digits.
FIXED_POINT_MAX = 1e6


def _number(x: float, digits: int) -> str:
    """Return ``x``: fixed point below :data:`FIXED_POINT_MAX`, else scientific notation.

    Scientific notation keeps at least 3 decimals: a count of 1 234 567 is not ``1e+06``.
    """
    if abs(x) < FIXED_POINT_MAX or not math.isfinite(x):
        return f"{x:.{digits}f}"
    return f"{x:.{max(digits, 3)}e}"


def fmt_number(x, digits: int = 3) -> str:
    """Return a number for a table cell: ``digits`` decimals, "—" for None or NaN.

    Magnitudes from :data:`FIXED_POINT_MAX` (10⁶) on are written in scientific notation,
    with ``digits`` (at least 3) decimals in the mantissa; infinities as ``inf`` and ``-inf``.

    Examples
    --------
    >>> fmt_number(0.12345), fmt_number(float("nan")), fmt_number(3.0, digits=0)
    ('0.123', '—', '3')
    >>> fmt_number(999_999.5), fmt_number(-1e300), fmt_number(float("inf"))
    ('999999.500', '-1.000e+300', 'inf')
    """
    if x is None or (isinstance(x, float | int) and x != x):
        return "—"
    return _number(float(x), digits)


def fmt_interval(lower, upper, digits: int = 3) -> str:
    """Return an interval for a table cell: ``[lower, upper]``, "—" if either end is NaN.

    Each end is written as by :func:`fmt_number`.

    Examples
    --------
    >>> fmt_interval(0.1, 0.25), fmt_interval(float("nan"), 0.2)
    ('[0.100, 0.250]', '—')
    >>> fmt_interval(-2e6, 5.0)
    '[-2.000e+06, 5.000]'
    """
    if fmt_number(lower) == "—" or fmt_number(upper) == "—":
        return "—"
    return f"[{_number(float(lower), digits)}, {_number(float(upper), digits)}]"


def format_probability(p: float, relation: bool = False) -> str:
    """``0.873``, or ``< 0.001`` / ``> 0.999`` where 3 decimals would round to 0 or 1.

    With ``relation``, a plain value reads ``= 0.873`` (for "P(θ_a > θ_b) = 0.873"). Shared by
    the warnings, the report's tables and its figures so that they print P alike.

    Examples
    --------
    >>> format_probability(0.8731), format_probability(0.0001), format_probability(0.5, True)
    ('0.873', '< 0.001', '= 0.500')
    """
    if p < 0.0005:
        return "< 0.001"
    if p >= 0.9995:
        return "> 0.999"
    return f"= {p:.3f}" if relation else f"{p:.3f}"


def group_label(system: object, stratum: object) -> str:
    r"""Return the label of a (system, stratum) group for a warning: ``system=a/stratum=b``.

    Names are shown with :func:`terminal_safe` (control characters escaped).

    Examples
    --------
    >>> group_label("gpt-4", "all"), group_label("a\nb", 1)
    ('system=gpt-4/stratum=all', 'system=a\\nb/stratum=1')
    """
    return f"system={terminal_safe(system)}/stratum={terminal_safe(stratum)}"
