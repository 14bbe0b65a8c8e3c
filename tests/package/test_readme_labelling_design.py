"""docs/labelling-design.md: its simulation prints what the page shows (slow: about 85 s).

The page's table of "one design declared for the other" comes from the Python block on the
page (fixed seed 20260115); the block's printed output is pasted below it as a ``text`` block.
This reruns the block and compares the output line by line, then checks that the table's cells
are the printed numbers, so that the page, its code and its table cannot drift apart.
"""

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "labelling-design.md"


def _parts():
    text = PAGE.read_text()
    code = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    printed = re.findall(r"```text\n(.*?)```", text, flags=re.S)
    assert len(code) == 1 and len(printed) == 1
    return text, code[0], printed[0]


def test_page_is_linked_from_the_index_and_the_readme():
    root = PAGE.parents[1]
    assert "labelling-design.md" in (root / "docs" / "index.md").read_text()
    assert "labelling-design" in (root / "docs" / "index.md").read_text().split("toctree")[-1]
    assert "docs/labelling-design.md" in (root / "README.md").read_text()


def test_table_cells_are_the_printed_numbers():
    text, _, printed = _parts()
    rows = re.findall(r"^\| (random|stratified) labelling \| ([\d.]+) \| (.*) \|$", text, re.M)
    assert len(rows) == 4
    blocks = re.split(r"^data: ", printed, flags=re.M)[1:]
    assert len(blocks) == 4
    for (design, theta, cells), block in zip(rows, blocks, strict=True):
        assert block.startswith(f"{design} labelling, θ = {float(theta):g}")
        found = re.findall(r"coverage ([\d.]+)  mean width ([\d.]+)  bias ([+-][\d.]+)", block)
        shown = [re.sub(r"\*\*", "", c).strip().replace("−", "-") for c in cells.split(" | ")]
        assert shown == [f"{c} / {w} / {b}" for c, w, b in found]


@pytest.mark.slow
def test_simulation_prints_what_the_page_shows(capsys):
    _, code, printed = _parts()
    exec(compile(code, str(PAGE), "exec"), {})
    assert capsys.readouterr().out == printed
