"""The layers stay visible: the numpy/scipy core never imports PyMC, xarray or pandas."""

import ast
import subprocess
import sys
from pathlib import Path

import bayesjudge

SRC = Path(bayesjudge.__file__).parent
CORE_ALLOWED = {
    "numpy",
    "scipy",
    "math",
    "typing",
    "__future__",
    "dataclasses",
    "warnings",
    "collections",
    "functools",
    "numbers",
    "bayesjudge",
}


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_core_imports_only_numpy_scipy_and_stdlib():
    files = sorted((SRC / "core").glob("*.py"))
    assert len(files) >= 6
    for path in files:
        extra = _imported_roots(path) - CORE_ALLOWED
        assert not extra, f"{path.name} imports {extra}"
        if "bayesjudge" in _imported_roots(path):
            text = path.read_text()
            assert "bayesjudge.data" not in text and "bayesjudge.estimate" not in text, path.name


def test_importing_the_package_does_not_import_pymc():
    code = (
        "import sys, bayesjudge, bayesjudge.cli; "
        "print('pymc' in sys.modules, 'pytensor' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
