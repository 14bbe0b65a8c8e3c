"""The documentation's math renders offline: a docs page built with the site's math renderer,
opened in headless Chromium with every network request refused, shows rendered MathML.

``docs/conf.py`` renders math with ``docs/_ext/offline_math.py`` (TeX → MathML while the pages
are written, no MathJax CDN). This test builds two real pages with a lot of math
(``docs/problem.md``, inline and display formulas and amsmath environments, and the model card
``models/separate.md``) with that extension, then opens them in Chromium (Debian's, as
``tests/report/test_report_browser.py``) with the host resolver mapping every name to nothing,
so that a script or font from a CDN could not load. A probe script checks that there are
formulas, that each has a non-zero size, that fractions are laid out (numerator above
denominator) and subscripts set smaller and lower than their base, which only a MathML layout
does, and that no raw TeX (``\\frac``, ``$``) is
left in the page's text.

Run with ``make test-browser`` (``pytest -m browser``).
"""

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from sphinx.cmd.build import build_main

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
PAGES = {"problem": REPO / "docs" / "problem.md", "separate": REPO / "models" / "separate.md"}

_CONF = f"""
import sys
sys.path.insert(0, {str(REPO / "docs" / "_ext")!r})
extensions = ["myst_parser", "offline_math"]
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
html_math_renderer = "mathml"
html_theme = "basic"
suppress_warnings = ["myst.xref_missing", "toc.not_included", "myst.header"]
"""

_PROBE = """
<script>
window.addEventListener("load", function () {
  var formulas = Array.prototype.map.call(document.querySelectorAll("math"), function (m) {
    var r = m.getBoundingClientRect();
    return {width: r.width, height: r.height, display: m.getAttribute("display")};
  });
  var fractions = Array.prototype.map.call(document.querySelectorAll("mfrac"), function (f) {
    var num = f.children[0].getBoundingClientRect(), den = f.children[1].getBoundingClientRect();
    return {stacked: num.bottom <= den.top + 1 && num.height > 0 && den.height > 0};
  });
  var subscripts = Array.prototype.map.call(document.querySelectorAll("msub"), function (m) {
    var base = m.children[0].getBoundingClientRect(), sub = m.children[1].getBoundingClientRect();
    var size = function (e) { return parseFloat(getComputedStyle(e).fontSize); };
    return {lowered: sub.height > 0 && sub.top + sub.bottom > base.top + base.bottom
                     && size(m.children[1]) < size(m.children[0])};
  });
  var probe = document.createElement("pre");
  probe.id = "bj-probe";
  probe.textContent = JSON.stringify({formulas: formulas, fractions: fractions,
      subscripts: subscripts,
      scripts: Array.prototype.map.call(document.scripts, function (s) { return s.src; }),
      text: document.body.innerText});
  document.body.appendChild(probe);
});
</script>
"""


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None and Path("/usr/bin/chromium").exists():
        path = "/usr/bin/chromium"
    if path is None:
        pytest.fail(
            "Debian's chromium is needed for the browser test of the docs' math: "
            "apt-get install chromium (CI's .ci/run does this before make test-browser).",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The two pages built as HTML with the site's math renderer."""
    source = tmp_path_factory.mktemp("docs_src")
    (source / "conf.py").write_text(_CONF, encoding="utf-8")
    toctree = "\n".join(PAGES)
    (source / "index.md").write_text(
        f"# Math\n\n```{{toctree}}\n{toctree}\n```\n", encoding="utf-8"
    )
    for name, path in PAGES.items():
        shutil.copy(path, source / f"{name}.md")
    out = tmp_path_factory.mktemp("docs_html")
    status = build_main(["-q", "-b", "html", str(source), str(out)])
    assert status == 0
    return out


@pytest.mark.parametrize("page", list(PAGES))
def test_docs_math_renders_offline_in_chromium(built, page, tmp_path):
    text = (built / f"{page}.html").read_text(encoding="utf-8")
    # No MathJax (or any other script or style) from the network.
    assert not re.findall(r'<(?:script|link)[^>]+(?:src|href)="(?:https?:)?//', text)
    assert "tex-mml-chtml" not in text
    probed = built / f"{page}.probed.html"
    probed.write_text(text.replace("</body>", _PROBE + "</body>"), encoding="utf-8")
    command = [
        _chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
        "--host-resolver-rules=MAP * ~NOTFOUND",  # offline: no name resolves
        "--virtual-time-budget=10000", "--dump-dom", probed.as_uri(),
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    match = re.search(r'<pre id="bj-probe">(.*?)</pre>', result.stdout, flags=re.S)
    assert match, f"the probe did not run; chromium printed: {result.stdout[:500]}"
    probe = json.loads(html.unescape(match.group(1)))

    formulas = probe["formulas"]
    source = PAGES[page].read_text(encoding="utf-8")
    # At least one formula per "$$" block and per inline pair in the source.
    assert len(formulas) >= source.count("$$") // 2 + 5, len(formulas)
    assert {f["display"] for f in formulas} == {"inline", "block"}
    for formula in formulas:
        assert formula["width"] > 0 and formula["height"] > 0, formula
    # Laid out as mathematics, not as a line of text: fractions stacked, subscripts smaller
    # and lowered (a browser without MathML shows them inline, at the text's size).
    assert probe["subscripts"], "no subscript on the page"
    assert all(f["stacked"] for f in probe["fractions"]), probe["fractions"]
    assert all(s["lowered"] for s in probe["subscripts"]), probe["subscripts"]
    if page == "problem":
        assert probe["fractions"], "no fraction on the page"
    assert not [s for s in probe["scripts"] if s.startswith("http")], probe["scripts"]
    # No TeX left as text: no command, no math delimiter.
    left = re.findall(r"\\[A-Za-z]+|\$", probe["text"])
    assert not left, left[:10]
