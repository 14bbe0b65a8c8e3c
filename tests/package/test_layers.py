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


# The layers, bottom up (docs/architecture.md). A module may import its own layer and the
# layers below; `bayesjudge/__init__.py` (the facade) may import any of them.
LAYERS = {
    "core": 0,
    "_io": 1,
    "_interrupt": 1,  # Ctrl-C while the command line imports (imported first by the facade)
    "_text": 1,
    "_progress": 1,
    "_version": 1,
    "warnings": 0,  # the warning classes: no imports, used by every layer
    "data": 2,
    "datasets": 2,
    "estimate": 3,
    "compare": 3,
    "categorical_estimate": 3,  # estimate and compare of CategoricalCounts
    "jury_estimate": 3,  # closed forms and agreement of several judges (JuryCounts)
    "categorical_jury_estimate": 3,  # closed forms of several judges' K-category verdicts
    "diagnostics": 3,
    "simulate": 3,
    "plots": 4,
    "report": 4,
    "models": 5,
    "_lazy": 6,  # the one lazy door to the Bayesian layer (PyMC), see its docstring
    "studies": 6,
    "cli": 6,
}


def _unit(module: str) -> str:
    """The layer unit of a dotted module name: its first part below ``bayesjudge``."""
    parts = module.split(".")
    assert parts[0] == "bayesjudge", module
    return parts[1] if len(parts) > 1 else "bayesjudge"


def _modules():
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield path, ".".join(parts), path.name == "__init__.py"


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if node.level == 0:
        return node.module
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _bayesjudge_imports(tree: ast.AST, module: str, is_package: bool):
    """Yield (node, imported module, names, inside a function) for bayesjudge imports."""
    inside = set()
    for func in ast.walk(tree):
        if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            inside |= {id(n) for n in ast.walk(func) if n is not func}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _absolute(node, module, is_package)
            if target.split(".")[0] == "bayesjudge":
                names = [a.name for a in node.names]
                yield node, target, names, id(node) in inside
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "bayesjudge":
                    yield node, alias.name, [], id(node) in inside


def _is_module(dotted: str) -> bool:
    path = SRC.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def test_every_module_has_a_layer():
    units = {_unit(module) for _, module, _ in _modules()} - {"bayesjudge"}
    assert units <= set(LAYERS), f"modules without a layer in LAYERS: {units - set(LAYERS)}"


def test_imports_only_go_down():
    upward = []
    for path, module, is_package in _modules():
        unit = _unit(module)
        if unit == "bayesjudge":
            continue  # the facade re-exports every layer
        for node, target, _, _ in _bayesjudge_imports(ast.parse(path.read_text()), module,
                                                      is_package):  # fmt: skip
            other = _unit(target)
            if other == "bayesjudge" or LAYERS[other] > LAYERS[unit]:
                upward.append(f"{module}:{node.lineno} imports {target}")
    assert not upward, "imports of a higher layer:\n" + "\n".join(upward)


def test_no_module_imports_another_modules_private_names():
    private = []
    for path, module, is_package in _modules():
        for node, target, names, _ in _bayesjudge_imports(ast.parse(path.read_text()), module,
                                                          is_package):  # fmt: skip
            for name in names:
                if _is_module(f"{target}.{name}"):
                    continue  # a (private) submodule, as in `import bayesjudge._text`
                if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
                    private.append(f"{module}:{node.lineno} imports {target}.{name}")
    assert not private, "imports of private names:\n" + "\n".join(private)


def test_no_bayesjudge_import_hides_inside_a_function():
    hidden = []
    for path, module, is_package in _modules():
        for node, target, _, inside in _bayesjudge_imports(ast.parse(path.read_text()), module,
                                                           is_package):  # fmt: skip
            if inside:
                hidden.append(f"{module}:{node.lineno} imports {target} inside a function")
    assert not hidden, "\n".join(hidden)


def test_the_bayesian_layer_is_loaded_lazily_in_one_place():
    """Only bayesjudge._lazy names bayesjudge.models to load it later (PyMC takes seconds)."""
    loaders = []
    for path, module, _ in _modules():
        if module.startswith(("bayesjudge.models", "bayesjudge._lazy")):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if node.value.startswith("bayesjudge.models"):
                    loaders.append(f"{module}:{node.lineno} names {node.value!r}")
    assert not loaders, "\n".join(loaders)


def test_the_layer_rules_catch_violations(tmp_path):
    """The checks above see an upward, a private and a hidden import (they can fail)."""
    code = (
        "from bayesjudge.models.fit import fit\n"
        "from bayesjudge.core.bootstrap import _draw\n"
        "def f():\n    import bayesjudge.report\n"
    )
    tree = ast.parse(code)
    found = list(_bayesjudge_imports(tree, "bayesjudge.core.naive", False))
    assert [(t, n, i) for _, t, n, i in found] == [
        ("bayesjudge.models.fit", ["fit"], False),
        ("bayesjudge.core.bootstrap", ["_draw"], False),
        ("bayesjudge.report", [], True),
    ]
    assert LAYERS[_unit("bayesjudge.models.fit")] > LAYERS[_unit("bayesjudge.core.naive")]
    relative = ast.parse("from ._common import x\nfrom .. import core\n").body
    assert _absolute(relative[0], "bayesjudge.data.counts", False) == "bayesjudge.data._common"
    assert _absolute(relative[1], "bayesjudge.data.counts", False) == "bayesjudge"


MAX_CODE_LINES = 120


def _code_lines(func: ast.FunctionDef, lines: list[str]) -> int:
    """Lines of ``func`` that hold code: not its docstring, blank lines or comments."""
    skip = set()
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        if isinstance(body[0].value.value, str):
            skip |= set(range(body[0].lineno, body[0].end_lineno + 1))
    count = 0
    for number in range(func.lineno, func.end_lineno + 1):
        text = lines[number - 1].strip()
        if number not in skip and text and not text.startswith("#"):
            count += 1
    return count


def test_no_function_is_longer_than_120_code_lines_outside_the_studies():
    long = []
    for path, module, _ in _modules():
        if module.startswith("bayesjudge.studies"):
            continue
        text = path.read_text()
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = _code_lines(node, lines)
                if size > MAX_CODE_LINES:
                    long.append(f"{module}.{node.name}: {size} code lines")
    assert not long, "\n".join(long)


def test_code_lines_skip_the_docstring_and_comments():
    code = 'def f():\n    """Doc.\n\n    More.\n    """\n    # why\n    x = 1\n\n    return x\n'
    func = ast.parse(code).body[0]
    assert _code_lines(func, code.splitlines()) == 3
