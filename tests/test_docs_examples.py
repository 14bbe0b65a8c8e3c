"""The Python examples of the user-guide pages run as written.

The pages show snippets that start from item-level tables ``test`` and ``calibration``; the
test supplies them (simulated, two systems on shared items) and runs each block in a fresh
namespace, in a temporary working folder. bayesjudge warnings are errors here (pyproject).
"""

import importlib
import importlib.util
import os
import re
from pathlib import Path

import nbformat
import pytest

import bayesjudge as bj

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BAYESJUDGE_DATA") or REPO.parent / "shared" / "data")


def _blocks(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (REPO / "docs" / page).read_text(), flags=re.S)


def _tables():
    systems = ["A", "B"]
    test = bj.simulate_paired_items(
        [0.65, 0.80], 0.85, 0.90, n=600, correlation=0.5, system=systems, random_seed=1
    )
    _, calibration = bj.simulate_items(
        [0.65, 0.80], 0.85, 0.90, n=1, m0=200, m1=200, system=systems, random_seed=2
    )
    # docs/report.md names the system column "model".
    test["model"] = test["system"]
    calibration["model"] = calibration["system"]
    return test, calibration


@pytest.mark.parametrize("page", ["comparisons.md", "report.md"])
def test_guide_examples_run(page, tmp_path, monkeypatch):
    blocks = _blocks(page)
    assert blocks, f"docs/{page} has no python example"
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        test, calibration = _tables()
        exec(compile(block, f"docs/{page}", "exec"), {"test": test, "calibration": calibration})


def test_llmbar_page_example_runs(monkeypatch):
    blocks = _blocks("llmbar.md")
    assert blocks
    assert DATA.exists(), f"the LLMBar data is missing at {DATA}; set BAYESJUDGE_DATA"
    monkeypatch.setenv("BAYESJUDGE_DATA", str(DATA))  # the page reads the variable
    for block in blocks:
        namespace = {}
        # The real data has unparsed verdicts: the loader says so, and so does the counting that
        # leaves them out (docs/llmbar.md).
        with (
            pytest.warns(bj.MissingLabelWarning, match="rows of the calibration table"),
            pytest.warns(bj.MissingLabelWarning, match="rows of the test table"),
            pytest.warns(bj.MissingLabelWarning, match="could not be parsed"),
        ):
            exec(compile(block, "docs/llmbar.md", "exec"), namespace)
        assert isinstance(namespace["counts"], bj.JudgeCounts)


# --------------------------------------------------------------------------- the new guide pages
# Each Python block of these pages is followed by a ```text block with what it prints; the blocks
# of a page run in order in one namespace (later blocks continue the earlier ones). The printed
# numbers come from closed forms or from the exact posterior with a fixed seed (quadrature and
# seeded i.i.d. draws, no MCMC), so they are reproduced exactly.
PRINTING_PAGES = ["getting-started.md", "problem.md", "calibration-design.md", "strata.md"]
_BLOCK_WITH_OUTPUT = re.compile(r"```python\n(.*?)```(?:\n\n```text\n(.*?)```)?", flags=re.S)


@pytest.mark.parametrize("page", PRINTING_PAGES)
def test_guide_page_prints_what_it_shows(page, capsys):
    blocks = _BLOCK_WITH_OUTPUT.findall((REPO / "docs" / page).read_text())
    assert blocks, f"docs/{page} has no python example"
    namespace = {}
    for code, expected in blocks:
        assert expected, f"docs/{page}: every python block is followed by its output"
        exec(compile(code, f"docs/{page}", "exec"), namespace)
        assert capsys.readouterr().out == expected


# ------------------------------------------------------------------------------- links of the site
# docs/conf.py copies the files that docs/*.md link outside docs/ (model cards, notebooks, figures)
# into docs/_generated/ and rewrites the links to the copies; `make docs` fails on any link Sphinx
# cannot resolve. These checks are the cheap part of that, run with the tests.
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)\)")


def _markdown_sources():
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        yield path, path.read_text(encoding="utf-8")
    for path in sorted((REPO / "models").glob("*.md")):
        yield path, path.read_text(encoding="utf-8")
    for path in sorted((REPO / "notebooks").glob("*.ipynb")):
        cells = nbformat.read(path, as_version=4).cells
        yield path, "\n".join(c.source for c in cells if c.cell_type == "markdown")


def test_relative_links_point_at_existing_files():
    broken = []
    for path, text in _markdown_sources():
        for target in _LINK.findall(text):
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
                continue
            if not (path.parent / target.partition("#")[0]).exists():
                broken.append(f"{path.relative_to(REPO)}: {target}")
    assert not broken, broken


def _conf():
    spec = importlib.util.spec_from_file_location("docs_conf", REPO / "docs" / "conf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # defines the configuration; copies nothing until a build
    return module


def test_conf_rewrites_links_to_the_copies():
    conf = _conf()
    pending = set()
    # A guide page linking a model card, an anchor in the README and a recorded figure.
    text = (
        "[card](../models/separate.md) [table](../README.md#which-estimator-when) "
        "![fig](../benchmarks/studies/results/coverage/coverage.png) [page](studies.md#x) "
        "[web](https://example.org/a.md)"
    )
    assert conf._rewrite(text, "docs/bayesian.md", pending) == (
        "[card](_generated/models/separate.md) [table](_generated/README.md#which-estimator-when) "
        "![fig](_generated/benchmarks/studies/results/coverage/coverage.png) [page](studies.md#x) "
        "[web](https://example.org/a.md)"
    )
    assert pending == {
        "models/separate.md",
        "README.md",
        "benchmarks/studies/results/coverage/coverage.png",
    }
    # A model card (copied to docs/_generated/models/) linking back into docs/ and to a sibling;
    # a folder link goes to the folder's README.md.
    pending = set()
    text = (
        "[guide](../docs/bayesian.md) [shared](shared.md) "
        "[results](../benchmarks/studies/results/llmbar/)"
    )
    assert conf._rewrite(text, "models/separate.md", pending) == (
        "[guide](../../bayesian.md) [shared](shared.md) "
        "[results](../benchmarks/studies/results/README.md)"
    )
    assert pending == {"models/shared.md", "benchmarks/studies/results/README.md"}
    # Notebooks are rendered from the committed outputs, never executed by the site build.
    assert conf.nb_execution_mode == "off"


def test_api_reference_lists_the_public_api():
    import bayesjudge.studies

    listed = set(re.findall(r"^   ([\w.]+)$", (REPO / "docs" / "api.md").read_text(), flags=re.M))
    assert set(bayesjudge.__all__) - {"__version__"} <= listed
    # The modules' own public functions: plots, the LLMBar loader and the studies.
    for module in ("plots", "datasets"):
        names = importlib.import_module(f"bayesjudge.{module}").__all__
        functions = {f"{module}.{n}" for n in names if n.islower()}
        assert functions <= listed, functions - listed
    assert {f"studies.{m.split('.')[-1]}" for m in bayesjudge.studies.STUDIES.values()} <= listed
