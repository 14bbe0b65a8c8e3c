"""Hostile names in the report, the figures and the warnings (issue 13, items 9-11).

System and stratum names are user data. They must come out literally — never as Markdown or
HTML markup in ``report.md``, never as mathtext in a figure, never as control codes in a
terminal — and the report must still be written.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import bayesjudge as bj
from bayesjudge._text import markdown_escape, plain_label, terminal_safe
from bayesjudge.diagnostics import check_comparison
from bayesjudge.plots import (
    plot_differences,
    plot_judge,
    plot_ppc,
    plot_ranked,
    plot_theta_forest,
)
from bayesjudge.report import build_report, write_report

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
MATH = "$\\frac{a}{$"
CONTROL = "line\nbreak\r\x1b[31mred"
LINK = "[click](javascript:alert(1))"
NAMES = [SCRIPT, IMG, MATH, CONTROL, LINK]


@pytest.fixture(scope="module")
def hostile_counts():
    return bj.simulate_counts(
        [0.6, 0.7, 0.8, 0.65, 0.75], 0.85, 0.9, n=400, m0=100, m1=100, system=NAMES,
        random_seed=1,
    )  # fmt: skip


@pytest.fixture(scope="module")
def written(hostile_counts, tmp_path_factory):
    out = tmp_path_factory.mktemp("hostile")
    report = write_report(hostile_counts, out, random_seed=1, n_resamples=1000, warn=False)
    return report, out


def _render(markdown: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(markdown)


def test_markdown_renders_names_as_text_not_tags(written):
    report, out = written
    md = (out / "report.md").read_text(encoding="utf-8")
    html = _render(md)
    assert "<script" not in html
    # The only images are the report's own figures, linked by file name.
    images = html.count("<img")
    assert images == len(report.figures)
    assert "javascript:" not in html.split('href="')[-1] or 'href="javascript' not in html
    assert 'href="javascript' not in html
    # The names survive literally (HTML-escaped by the renderer, as text).
    for name in (SCRIPT, IMG, LINK):
        text = name.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        text = text.replace('"', "&quot;")
        assert text in html, name
    assert "line\\nbreak\\r\\x1b[31mred" in html  # control characters shown escaped
    assert "\x1b" not in md and "\r" not in md


def test_markdown_table_rows_stay_rows(written):
    _, out = written
    md = (out / "report.md").read_text(encoding="utf-8")
    for line in md.splitlines():
        if line.startswith("| ") and "|---" not in line:
            # Every table row has the same number of unescaped cell separators as its header.
            assert not line.rstrip().endswith("\\|"), line


def test_html_page_is_still_safe(written):
    _, out = written
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<script" not in page and "<img src=x" not in page


def test_title_is_escaped_in_markdown(hostile_counts):
    report = build_report(hostile_counts, random_seed=1, n_resamples=1000, warn=False,
                          title=f"Eval of {SCRIPT}")  # fmt: skip
    html = _render(report.to_markdown())
    assert "<script" not in html and "Eval of &lt;script&gt;" in html


def test_dollar_in_a_name_writes_every_figure(written):
    """A name like $\\frac{a}{$ raised a mathtext ParseSyntaxException and wrote nothing."""
    report, out = written
    assert {"theta_forest", "judge", "theta_difference"} <= set(report.figures)
    for name in report.figures:
        assert (out / f"{name}.png").stat().st_size > 0


def _long(names, label="system"):
    return pd.DataFrame({label: names, "stratum": MATH, "method": MATH,
                         "estimate": 0.5, "lower": 0.4, "upper": 0.6})  # fmt: skip


def _texts(axes):
    import matplotlib

    out = []
    for axis in np.ravel(axes):
        out += [t.get_text() for t in axis.get_yticklabels() + axis.get_xticklabels()]
        out += [t.get_text() for t in axis.texts] + [axis.get_title()]
        legend = axis.get_legend()
        if legend is not None:
            out += [t.get_text() for t in legend.get_texts()]
        axis.figure.canvas.draw()  # mathtext is parsed here: must not raise
    matplotlib.pyplot.close("all")
    return out


def test_every_plot_function_takes_names_as_text():
    names = [MATH, "a$b$c", CONTROL]
    texts = _texts(plot_theta_forest(_long(names)))
    assert plain_label(MATH) in texts and plain_label(CONTROL) in texts
    frame = _long([f"{n} - x" for n in names], "pair")
    frame["prob_greater"] = 0.7
    frame = pd.concat([frame, frame.assign(method="other$")], ignore_index=True)
    texts = _texts(plot_differences(frame))
    assert any(r"\$" in t for t in texts)
    judge = pd.DataFrame({"system": names, "stratum": [MATH] * 3, "method": MATH,
                          **{f"{v}{s}": 0.5 for v in ("q0", "q1", "J")
                             for s in ("", "_lower", "_upper")}})  # fmt: skip
    _texts(plot_judge(judge))
    _texts(plot_ranked(_long(names), title=MATH, ylabel=MATH))


def test_ppc_plot_takes_names_as_text():
    counts = bj.simulate_counts([0.6, 0.7], 0.85, 0.9, n=200, m0=60, m1=60,
                                system=[MATH, "a$b$"], random_seed=2)  # fmt: skip
    check = bj.fit(counts, method="exact", random_seed=1, draws=200).ppc(random_seed=1)
    texts = _texts(plot_ppc(check))
    assert any(plain_label(MATH) in t for t in texts)


def test_warnings_show_names_escaped(hostile_counts):
    low = bj.JudgeCounts.from_counts(
        n=[500, 500], k=[250, 260], m0=[100, 100], tn=[52, 53], m1=[100, 100], tp=[52, 54],
        system=[CONTROL, SCRIPT],
    )  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = check_comparison(low, random_seed=0)
    assert found and caught
    for w in caught:
        text = str(w.message)
        assert "\x1b" not in text and "\r" not in text
        assert "line\\nbreak" in text or SCRIPT in text
    # The records keep the names themselves (data), only the text shows them escaped.
    assert {d.system for d in found if d.code == "low_j"} <= {CONTROL, SCRIPT}


def test_report_warnings_show_names_escaped(hostile_counts):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build_report(hostile_counts, random_seed=1, n_resamples=1000, target_width=0.01)
    assert caught
    for w in caught:
        assert "\x1b" not in str(w.message) and "\r" not in str(w.message)


def test_text_helpers():
    assert terminal_safe(CONTROL) == "line\\nbreak\\r\\x1b[31mred"
    assert markdown_escape("a|b*c_") == "a\\|b\\*c\\_"
    assert plain_label("$x$") == "\\$x\\$"


def test_report_progress_bar_is_plain_text_on_stderr(capsys):
    # Issue 13, item 19: no tqdm (not a dependency); every step reaches the last, 5/5.
    counts = bj.simulate_counts(
        [0.6, 0.7], 0.85, 0.9, 300, 60, 60, system=["a", "b"], random_seed=1
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bj.BayesJudgeWarning)
        build_report(counts, random_seed=1, n_resamples=1000, progress=True)
    err = capsys.readouterr().err
    assert "report of 2 systems" in err and "5/5" in err and err.endswith("\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bj.BayesJudgeWarning)
        build_report(counts, random_seed=1, n_resamples=1000, progress=False)
    assert capsys.readouterr().err == ""
