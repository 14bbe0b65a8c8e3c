"""The HTML report in a real browser: Debian's headless Chromium loads it, shows every table and
decodes every image.

Run with ``make test-browser`` (``pytest -m browser``); CI installs chromium first
(``apt-get install chromium``). A copy of the page gets a small script that, on ``load``,
writes into the DOM how many tables there are and, for each ``<img>``, whether it loaded
(``img.complete && img.naturalWidth > 0``) and its decoded size; ``chromium --dump-dom``
prints the resulting DOM. A screenshot of the original page is written too; its path is
printed (``pytest -m browser -s``) and kept in ``$BAYESJUDGE_SCREENSHOT`` when that is set.
"""

import html
import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

import bayesjudge as bj
from bayesjudge.report import build_report

pytestmark = pytest.mark.browser

_PROBE = """
<script>
window.addEventListener("load", function () {
  var images = Array.prototype.map.call(document.images, function (img) {
    var figure = img.closest("figure");
    return {figure: figure ? figure.id : null, loaded: img.complete && img.naturalWidth > 0,
            width: img.naturalWidth, height: img.naturalHeight};
  });
  var tables = Array.prototype.map.call(document.querySelectorAll("table"), function (t) {
    return {id: t.id, rows: t.querySelectorAll("tbody tr").length,
            visible: t.getBoundingClientRect().height > 0};
  });
  var probe = document.createElement("pre");
  probe.id = "bj-probe";
  probe.textContent = JSON.stringify({tables: tables, images: images,
                                      sections: document.querySelectorAll("section").length});
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
            "Debian's chromium is needed for the browser test of the HTML report: "
            "apt-get install chromium (CI's .ci/run does this before make test-browser).",
            pytrace=False,
        )
    return path


def _run_chromium(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    command = [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        *args,
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, f"chromium failed ({result.returncode}): {result.stderr[-2000:]}"
    return result


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def saved_report(tmp_path_factory):
    """A report with every section filled: 3 systems × 2 strata, an exact fit, all figures."""
    counts = bj.simulate_counts(
        [[0.5, 0.7], [0.75, 0.9], [0.6, 0.65]], 0.85, 0.9, n=600, m0=150, m1=150,
        system=["alpha", "beta", "gamma"], stratum=["short", "long"], random_seed=21,
    )  # fmt: skip
    result = bj.fit(counts, method="exact", random_seed=3)
    # The diagnoses are listed in the report; this test is about the page, not the warnings.
    report = build_report(fit=result, random_seed=3, n_resamples=1000, warn=False)
    folder = tmp_path_factory.mktemp("browser")
    return report, report.save(folder)


def test_report_loads_in_headless_chromium(saved_report, tmp_path):
    binary = _chromium()
    report, paths = saved_report
    page = paths["html"].read_text(encoding="utf-8")
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", _PROBE + "</body>"), encoding="utf-8")
    result = _run_chromium(
        binary,
        tmp_path / "profile",
        "--virtual-time-budget=10000",
        "--dump-dom",
        probed.as_uri(),
    )
    match = re.search(r'<pre id="bj-probe">(.*?)</pre>', result.stdout, flags=re.S)
    assert match, f"the probe did not run; chromium printed: {result.stdout[:500]}"
    probe = json.loads(html.unescape(match.group(1)))

    expected_tables = [
        f"table-{b[1]}" for s in report.sections for b in s.blocks if b[0] == "table"
    ]
    assert [t["id"] for t in probe["tables"]] == expected_tables
    for table in probe["tables"]:
        assert table["visible"], table
        assert table["rows"] == len(report.tables[table["id"].removeprefix("table-")]), table
    assert probe["sections"] == len(report.sections)

    assert [i["figure"] for i in probe["images"]] == [f"figure-{n}" for n in report.figures]
    for image in probe["images"]:
        name = image["figure"].removeprefix("figure-")
        assert image["loaded"], f"image {name} did not load: {image}"
        assert (image["width"], image["height"]) == _png_size(report.figures[name])


def test_report_screenshot(saved_report, tmp_path):
    binary = _chromium()
    _, paths = saved_report
    target = Path(os.environ.get("BAYESJUDGE_SCREENSHOT", tmp_path / "report.png"))
    target.parent.mkdir(parents=True, exist_ok=True)
    _run_chromium(
        binary,
        tmp_path / "profile",
        "--virtual-time-budget=10000",
        "--window-size=1200,5000",
        f"--screenshot={target}",
        paths["html"].as_uri(),
    )
    width, height = _png_size(target.read_bytes())
    assert (width, height) == (1200, 5000)
    print(f"\nscreenshot of the HTML report: {target}")
