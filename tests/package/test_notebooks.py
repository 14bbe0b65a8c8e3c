"""Every notebook in notebooks/ runs top to bottom in a fresh kernel, and is committed executed.

The kernel is the ``python3`` kernelspec that ipykernel installs into the venv
(``.venv/share/jupyter/kernels/python3``, argv ``python -m ipykernel_launcher``); jupyter_client
starts a spec whose argv[0] is ``python`` with the Python running the tests, so nothing is
registered globally. A user-level ``python3`` kernelspec would take precedence, so the test
asks the kernel for its ``sys.prefix`` and checks it is the test's own.
"""

import json
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = REPO / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
EXPECTED = [
    "01_quickstart",
    "02_priors_and_checks",
    "03_comparing_systems",
    "04_stratified_judge",
    "05_calibration_budget",
    "06_validation",
    "07_preferences_and_grades",
    "08_juries",
]
SMALL_DRAWS = 200
SMALL_REPS = 50  # Monte Carlo replications of the notebooks that run studies

PROBE = """\
import json, sys
print(json.dumps({"prefix": sys.prefix, "draws": DRAWS, "tune": TUNE,
                  "reps": globals().get("REPS")}))
"""


def test_notebooks_exist():
    assert [path.stem for path in NOTEBOOKS] == EXPECTED


def code_cells(nb):
    return [cell for cell in nb.cells if cell.cell_type == "code"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_notebook_was_executed_cleanly(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    cells = code_cells(nb)
    # Executed once, top to bottom, in one fresh kernel: execution counts 1, 2, ..., N.
    assert [cell.execution_count for cell in cells] == list(range(1, len(cells) + 1))
    outputs = [out for cell in cells for out in cell.outputs]
    assert outputs, "the committed notebook has no outputs; execute it before committing"
    assert not [out for out in outputs if out.output_type == "error"]
    # Full-draw outputs carry no warnings (convergence warnings belong to the small CI runs).
    stderr = [out.text for out in outputs if out.output_type == "stream" and out.name == "stderr"]
    assert not [text for text in stderr if "Warning" in text], stderr
    assert any("image/png" in out.get("data", {}) for out in outputs), (
        "expected at least one figure"
    )


# The four longest notebooks run in the slow tier (`make test-slow`, run by CI), keeping
# `make test` within its 15-minute budget; every notebook still runs in CI on each change.
SLOW_NOTEBOOKS = {
    "02_priors_and_checks.ipynb",
    "03_comparing_systems.ipynb",
    "06_validation.ipynb",
    "07_preferences_and_grades.ipynb",  # three K-category models to compile (minutes cold)
    "08_juries.ipynb",  # two jury models to compile and the LLMBar splits
}


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=pytest.mark.slow) if p.name in SLOW_NOTEBOOKS else p for p in NOTEBOOKS],
    ids=lambda p: p.name,
)
def test_notebook_runs_top_to_bottom(path, monkeypatch):
    monkeypatch.setenv("BAYESJUDGE_NOTEBOOK_DRAWS", str(SMALL_DRAWS))
    monkeypatch.setenv("BAYESJUDGE_NOTEBOOK_TUNE", str(SMALL_DRAWS))
    monkeypatch.setenv("BAYESJUDGE_NOTEBOOK_REPS", str(SMALL_REPS))
    # 04_stratified_judge reads the LLMBar data shipped with the package, never ../shared.
    monkeypatch.delenv("BAYESJUDGE_DATA", raising=False)
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(PROBE))
    client = NotebookClient(
        nb,
        kernel_name="python3",
        timeout=300,
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()  # raises CellExecutionError, with the traceback, on any cell error

    cells = code_cells(nb)
    assert [cell.execution_count for cell in cells] == list(range(1, len(cells) + 1))
    assert not [out for cell in cells for out in cell.outputs if out.output_type == "error"]
    probe = [out.text for out in cells[-1].outputs if out.output_type == "stream"]
    info = json.loads("".join(probe))
    # The kernel ran in the venv running the tests, with the reduced draws.
    assert Path(info["prefix"]).resolve() == Path(sys.prefix).resolve()
    assert info["draws"] == SMALL_DRAWS
    assert info["tune"] == SMALL_DRAWS
    # A notebook that runs Monte Carlo studies reads REPS from the environment too.
    assert info["reps"] in (None, SMALL_REPS)
