"""Names from user data shown safely: in a terminal, in Markdown and in figures.

System, stratum and judge names come from the user's files and may hold anything: newlines,
ANSI escape sequences, Markdown or HTML, ``$`` signs. They are data, never markup or control
codes. These helpers show them as text in each medium; the names themselves are never changed
in results.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["markdown_escape", "plain_label", "terminal_safe"]

#: Characters that can start Markdown or HTML markup inside a line: emphasis, code, links and
#: images (``[``), raw HTML and autolinks (``<``), entities (``&``), table cells (``|``),
#: strikethrough (``~``), math in MyST and other renderers (``$``), roles and attributes (``{``),
#: a closing heading sequence (``#``) and the escape itself. Other punctuation (``-``, ``.``,
#: ``(``) only acts at the start of a line, which :func:`markdown_escape` handles separately,
#: so that names such as ``gpt-4.1 (2025)`` stay readable in the Markdown source.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~$&!])")
_MD_LINE_START = re.compile(r"^(\s*)([-+=>]|\d+(?=[.)]))")


def terminal_safe(text: object) -> str:
    r"""Return ``text`` with control characters (newlines, ``\r``, ANSI escapes) shown escaped.

    Printable characters, non-ASCII letters included, are kept as they are.

    Examples
    --------
    >>> terminal_safe("gpt-4\n\x1b[31mred")
    'gpt-4\\n\\x1b[31mred'
    >>> terminal_safe("Mistral-7B é")
    'Mistral-7B é'
    """
    text = str(text)
    if all(ch.isprintable() for ch in text):
        return text
    out = []
    for ch in text:
        if ch.isprintable():
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
