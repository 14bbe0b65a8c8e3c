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

REPO = Path(__file__).resolve().parents[2]


def _blocks(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (REPO / "docs" / page).read_text(), flags=re.S)


def _tables():
    systems = ["A", "B"]
    test = bj.simulate.simulate_paired_items(
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
    # The page reads the copy shipped with the package (never ../shared).
    monkeypatch.delenv("BAYESJUDGE_DATA", raising=False)
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


def test_studies_page_example_runs(tmp_path, monkeypatch):
    # docs/studies.md runs the allocation-length study at its full 10,000 replications; the same
    # code with 20 (about 3 s) checks the API it shows: table, to_frame, settings, plot, save.
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    blocks = _blocks("studies.md")
    assert len(blocks) == 1 and blocks[0].count("reps=10_000") == 1
    monkeypatch.chdir(tmp_path)
    namespace = {}
    exec(compile(blocks[0].replace("reps=10_000", "reps=20"), "docs/studies.md", "exec"), namespace)
    plt.close("all")
    assert namespace["result"].settings["reps"] == 20
    saved = {p.name for p in (tmp_path / "out").iterdir()}
    assert saved == {f"allocation_length.{ext}" for ext in ("csv", "nc", "json", "png")}


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


def _api_reference_names() -> set[str]:
    """The fully qualified names that docs/api.md lists, each under its ``currentmodule``."""
    names, module = set(), None
    for line in (REPO / "docs" / "api.md").read_text().splitlines():
        if match := re.match(r"^\.\. currentmodule:: ([\w.]+)$", line):
            module = match[1]
        elif match := re.match(r"^   ([\w.]+)$", line):
            names.add(f"{module}.{match[1]}")
    return names


def test_api_reference_lists_the_public_api():
    import bayesjudge.studies

    listed = _api_reference_names()
    # The top level: every name of bayesjudge.__all__ (datasets: its own section below).
    top = {f"bayesjudge.{n}" for n in bayesjudge.__all__} - {
        "bayesjudge.__version__",
        "bayesjudge.datasets",
    }
    assert top <= listed, top - listed
    # The names that left the top level stay documented in their submodule.
    paired = set(importlib.import_module("bayesjudge.core.paired").__all__)
    for name, home in bayesjudge._MOVED.items():
        assert hasattr(importlib.import_module(home), name)
        documented = "bayesjudge.core.paired" if name in paired else home
        assert f"{documented}.{name}" in listed, name
    # The modules' own public functions: plots, the LLMBar loader and the studies.
    for module in ("plots", "datasets"):
        names = importlib.import_module(f"bayesjudge.{module}").__all__
        functions = {f"bayesjudge.{module}.{n}" for n in names if n.islower()}
        assert functions <= listed, functions - listed
    studies = {
        f"bayesjudge.studies.{m.split('.')[-1]}" for m in bayesjudge.studies.STUDIES.values()
    }
    assert studies <= listed


# ------------------------------------------------------------------------------ API reference stubs
# The class template docs/_templates/autosummary/class.rst gives each method and property a class
# defines its own page; docs/conf.py clears the stub folder at the start of every build, so that
# the stub of a removed object cannot break `make docs`, and keeps unchanged stubs' times. Checked
# on a minimal Sphinx project (no build: autosummary writes the stubs while Sphinx starts up).
def _start_sphinx(project: Path) -> None:
    from sphinx.application import Sphinx

    Sphinx(
        project, project, project / "_build", project / "_build" / "doctrees", "dummy", status=None
    )


def test_class_template_gives_methods_and_properties_pages_and_stale_stubs_go(tmp_path):
    api_md = (REPO / "docs" / "api.md").read_text()
    assert ":template:" not in api_md  # every class listed there uses the class template
    conf_py = str(REPO / "docs" / "conf.py")
    (tmp_path / "conf.py").write_text(
        "import importlib.util\n"
        "from pathlib import Path\n"
        f"spec = importlib.util.spec_from_file_location('docs_conf', {conf_py!r})\n"
        "docs_conf = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(docs_conf)\n"
        "extensions = ['sphinx.ext.autodoc', 'sphinx.ext.autosummary']\n"
        f"templates_path = [{str(REPO / 'docs' / '_templates')!r}]\n"
        "autosummary_generate = True\n"
        "autosummary_context = docs_conf.autosummary_context\n"
        "def setup(app):\n"
        "    docs_conf.connect_stub_cleanup(app, Path(__file__).parent / 'api')\n"
    )
    (tmp_path / "index.rst").write_text(
        ".. currentmodule:: bayesjudge\n\n.. autosummary::\n   :toctree: api\n\n"
        "   JudgeCounts\n   Fit\n   core.Interval\n   Priors\n"
    )
    api = tmp_path / "api"
    api.mkdir()
    stale = api / "bayesjudge.Removed.rst"  # a stub left by an earlier build
    stale.write_text(
        "bayesjudge.Removed\n==================\n\n.. autoclass:: bayesjudge.Removed\n"
    )
    _start_sphinx(tmp_path)
    stubs = {path.name.removeprefix("bayesjudge.").removesuffix(".rst") for path in api.iterdir()}
    # The pages the API reference lacked: a classmethod, methods and properties.
    wanted = {"JudgeCounts.from_frames", "JudgeCounts.from_counts", "JudgeCounts.systems"}
    wanted |= {f"Fit.{m}" for m in ("summary", "compare", "ppc", "report", "save", "posterior")}
    wanted |= {"Priors.known", "JudgeCounts", "Fit", "core.Interval", "Priors"}
    assert wanted <= stubs, wanted - stubs
    # Not: the constructor, tuple methods a namedtuple inherits, the fields of a namedtuple or
    # dataclass (documented by the class docstring) and the stale stub.
    for unwanted in (
        "Fit.__init__",
        "core.Interval.count",
        "core.Interval.index",
        "core.Interval.lower",
        "Priors.q0",
        "Priors.theta",
        "Removed",
    ):
        assert unwanted not in stubs
    assert "~Fit.summary" in (api / "bayesjudge.Fit.rst").read_text()
    # A second start rewrites every stub with the same text and restores its time, so that an
    # incremental build does not read the API pages again.
    summary = api / "bayesjudge.Fit.summary.rst"
    os.utime(summary, ns=(10**18, 10**18))
    _start_sphinx(tmp_path)
    assert summary.stat().st_mtime_ns == 10**18


# ------------------------------------------------------------------------------------ display math
# MyST (dollarmath) reads $$ ... $$ as display math only where it starts a block: after a blank
# line. Right after a line of text it is inline math and renders as garbage. So a line starting
# with $$ must follow a blank line, or close a $$ block that an earlier line opened (Markdown
# pages, model cards, the README and the notebooks' Markdown cells).
def _display_math_after_text(text: str) -> list[int]:
    bad, in_math, in_code, previous = [], False, False, ""
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_code = not in_code
        elif not in_code:
            if stripped.startswith("$$") and not in_math and previous.strip():
                bad.append(number)
            if line.count("$$") % 2:
                in_math = not in_math
        previous = line
    return bad


def test_display_math_starts_a_block():
    assert _display_math_after_text("text\n\n  $$a = b$$\n\nmore\n$$\nc\n$$\n") == [6]
    assert _display_math_after_text("x\n\n$$a\n$$\n") == []  # the closing $$ of an open block
    assert _display_math_after_text("x\n```\n$$a$$\n```\n") == []  # code is not math
    sources = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    sources += sorted((REPO / "models").glob("*.md"))
    texts = {str(path.relative_to(REPO)): path.read_text(encoding="utf-8") for path in sources}
    for path in sorted((REPO / "notebooks").glob("*.ipynb")):  # each Markdown cell on its own
        for number, cell in enumerate(nbformat.read(path, as_version=4).cells):
            if cell.cell_type == "markdown":
                texts[f"{path.relative_to(REPO)} cell {number}"] = cell.source
    bad = {name: lines for name, text in texts.items() if (lines := _display_math_after_text(text))}
    assert not bad, f"$$ right after a line of text (needs a blank line before it): {bad}"


# ------------------------------------------------------------------ every Python example is run
# Where the ```python blocks of each docs/*.md page run: a test in this file, or the test file
# that owns the page's examples. A new page with Python examples must be added here, and so to
# some test.
PAGES_RUN_BY = {
    "getting-started.md": "test_guide_page_prints_what_it_shows",  # PRINTING_PAGES
    "problem.md": "test_guide_page_prints_what_it_shows",
    "calibration-design.md": "test_guide_page_prints_what_it_shows",
    "strata.md": "test_guide_page_prints_what_it_shows",
    "comparisons.md": "test_guide_examples_run",
    "report.md": "test_guide_examples_run",
    "llmbar.md": "test_llmbar_page_example_runs",
    "studies.md": "test_studies_page_example_runs",
    # its one block is a simulation (slow), output compared with the page
    "labelling-design.md": "tests/package/test_readme_labelling_design.py",
    # blocks run, numbers within GUIDE_TOLERANCE
    "bayesian.md": "tests/package/test_model_cards.py",
    "scaling.md": "tests/data/test_engines.py",  # every engine's block (Spark in the slow tier)
    "categorical.md": "tests/data/test_categorical.py",  # prints checked against comments
    "harness.md": "tests/data/test_harness.py",  # run with an Inspect log written in the test
    "repeated-verdicts.md": "tests/data/test_repeats.py",
    "juries.md": "test_juries_page_example_runs",  # the LLMBar jury example, its assert
}
_ANY_PYTHON_FENCE = re.compile(r"^\s*(```|~~~)\s*\{?(python|py|python3|ipython3?|pycon)\b", re.M)


def test_every_python_example_is_run_by_a_test():
    pages = {}
    for path in sorted((REPO / "docs").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        fences = len(_ANY_PYTHON_FENCE.findall(text))
        if fences:
            # The runners find blocks by "```python" followed by a newline; any other spelling
            # of a Python fence would be skipped silently.
            assert text.count("```python\n") == fences, f"docs/{path.name}: write ```python"
            pages[path.name] = fences
    assert set(pages) == set(PAGES_RUN_BY), set(pages) ^ set(PAGES_RUN_BY)
    for page, runner in PAGES_RUN_BY.items():
        if runner.startswith("tests/"):
            source = (REPO / runner).read_text(encoding="utf-8")
            assert page in source and "exec(compile(" in source, (page, runner)
        else:
            assert callable(globals().get(runner)), runner
    assert {p for p, r in PAGES_RUN_BY.items() if r == "test_guide_page_prints_what_it_shows"} == (
        set(PRINTING_PAGES)
    )
    parametrized = test_guide_examples_run.pytestmark[0].args[1]
    assert {p for p, r in PAGES_RUN_BY.items() if r == "test_guide_examples_run"} == set(
        parametrized
    )


def test_juries_page_example_runs(monkeypatch):
    blocks = _blocks("juries.md")
    assert blocks
    monkeypatch.delenv("BAYESJUDGE_DATA", raising=False)  # the copy shipped with the package
    for block in blocks:
        exec(compile(block, "docs/juries.md", "exec"), {})
