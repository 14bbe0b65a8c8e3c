"""Sphinx configuration of the bayesjudge documentation site.

Build with ``make docs`` (``sphinx -W --keep-going -b html docs docs/_build/html``).

The pages in ``docs/`` are written to read well on GitHub too, so they link to files outside
``docs/`` (``../models/separate.md``, ``../README.md#which-estimator-when``, figures under
``../benchmarks/``). Sphinx only reads files inside ``docs/``, so before the build this file
copies every linked file from outside ``docs/`` — and the model cards and notebooks as a whole —
to the same path under ``docs/_generated/`` (ignored by git), and rewrites relative links while
reading a page (``source-read``) and while copying, so that each link points at the copy. The
copies are rewritten the same way, recursively (a model card's ``../docs/bayesian.md`` becomes a
link back to the page in ``docs/``). Notebooks are rendered from their committed outputs, never
executed here (the test suite executes them).
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
GENERATED = DOCS / "_generated"
sys.path.insert(0, str(REPO / "src"))

import bayesjudge  # noqa: E402

# -- project -------------------------------------------------------------------------------------

project = "bayesjudge"
author = "the bayesjudge authors"
copyright = "the bayesjudge authors; MIT licence"
release = bayesjudge.__version__
version = release

extensions = [
    "myst_nb",  # MyST Markdown pages and Jupyter notebooks (includes myst_parser)
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "_templates", "**.ipynb_checkpoints", "Thumbs.db", ".DS_Store"]
# The source files are Markdown (MyST) and notebooks only; conf.py needs no other suffix.

# -- MyST and myst-nb ----------------------------------------------------------------------------

myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
# GitHub-style anchors for headings, so that links such as cli.md#study resolve in Sphinx too.
myst_heading_anchors = 4
nb_execution_mode = "off"  # notebooks are committed executed; tests/test_notebooks.py runs them
nb_merge_streams = True

# -- API reference: autosummary + numpydoc -------------------------------------------------------

autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
autodoc_typehints = "none"  # the numpydoc "Parameters" sections carry the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# -- HTML ----------------------------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"bayesjudge {release}"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
}
html_show_sourcelink = False
html_static_path: list[str] = []

# -- copies of files outside docs/ ---------------------------------------------------------------

# A Markdown link or image: [text](target) or ![alt](target); the text has no unbalanced ']'.
_LINK = re.compile(r"(!?\[(?:[^\[\]]|\[[^\]]*\])*\]\()([^)\s]+)(\))")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def _docs_path(repo_path: str) -> str:
    """Where a repository file is found in the Sphinx source tree (a path under ``docs/``)."""
    if repo_path.startswith("docs/") and not repo_path.startswith("docs/_generated/"):
        return repo_path[len("docs/") :]
    return f"_generated/{repo_path}"


def _resolve_directory(repo_path: str) -> str | None:
    """Return the README.md a folder link goes to: the folder's own, else the nearest above."""
    folder = repo_path.rstrip("/")
    while folder not in ("", "."):
        if (REPO / folder / "README.md").is_file():
            return f"{folder}/README.md"
        folder = posixpath.dirname(folder)
    return None


def _rewrite(text: str, repo_path: str, pending: set[str]) -> str:
    """Point the relative links of ``text`` (the file ``repo_path``) at their Sphinx location.

    Targets outside ``docs/`` are added to ``pending`` so that they are copied.
    """
    here = posixpath.dirname(repo_path)
    here_docs = posixpath.dirname(_docs_path(repo_path))

    def replace(match: re.Match) -> str:
        head, target, tail = match.groups()
        if _SCHEME.match(target) or target.startswith(("#", "/")):
            return match.group(0)
        path, _, anchor = target.partition("#")
        resolved = posixpath.normpath(posixpath.join(here, path))
        if resolved.startswith("..") or not (REPO / resolved).exists():
            return match.group(0)  # outside the repository, or a broken link: leave it alone
        if (REPO / resolved).is_dir():
            readme = _resolve_directory(resolved)
            if readme is None:
                return match.group(0)
            resolved = readme
        docs_target = _docs_path(resolved)
        if docs_target.startswith("_generated/"):
            pending.add(resolved)
        new = posixpath.relpath(docs_target, here_docs or ".")
        return f"{head}{new}{'#' + anchor if anchor else ''}{tail}"

    return _LINK.sub(replace, text)


def _write_if_changed(path: Path, data: bytes) -> None:
    """Write only when the content changed, so that incremental builds stay incremental."""
    if path.exists() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _copy(repo_path: str, pending: set[str]) -> None:
    """Copy one repository file to ``docs/_generated/``, rewriting the links of text pages."""
    source = REPO / repo_path
    target = DOCS / _docs_path(repo_path)
    if repo_path.endswith(".md"):
        text = _rewrite(source.read_text(encoding="utf-8"), repo_path, pending)
        # Copies are reached by links, the model cards and notebooks also by a toctree; an
        # orphan page may be in a toctree, so mark them all and Sphinx never warns about them.
        _write_if_changed(target, ("---\norphan: true\n---\n\n" + text).encode("utf-8"))
    elif repo_path.endswith(".ipynb"):
        notebook = json.loads(source.read_text(encoding="utf-8"))
        for cell in notebook.get("cells", []):
            if cell.get("cell_type") == "markdown":
                text = (
                    "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
                )
                cell["source"] = _rewrite(text, repo_path, pending)
        data = json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
        _write_if_changed(target, data.encode("utf-8"))
    else:
        _write_if_changed(target, source.read_bytes())


def copy_external_files() -> list[str]:
    """Copy the model cards, the notebooks and every file a page links outside ``docs/``."""
    pending = {f"models/{p.name}" for p in (REPO / "models").glob("*.md")}
    pending |= {f"notebooks/{p.name}" for p in (REPO / "notebooks").glob("*.ipynb")}
    pending.add("notebooks/README.md")
    for page in DOCS.glob("*.md"):  # the links the pages in docs/ will be rewritten to
        _rewrite(page.read_text(encoding="utf-8"), f"docs/{page.name}", pending)
    done: set[str] = set()
    while pending - done:
        repo_path = sorted(pending - done)[0]
        done.add(repo_path)
        _copy(repo_path, pending)
    # Remove stale copies (a renamed card or notebook), but keep autosummary's stubs.
    wanted = {DOCS / _docs_path(p) for p in done}
    for path in GENERATED.rglob("*"):
        if path.is_file() and path not in wanted and "api" not in path.relative_to(GENERATED).parts:
            path.unlink()
    for path in sorted(GENERATED.rglob("*"), reverse=True):
        if path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    return sorted(done)


def _source_read(app, docname: str, source: list[str]) -> None:
    """Rewrite the links of the pages in ``docs/`` (the copies are rewritten when copied)."""
    if docname.startswith("_generated/"):
        return
    path = DOCS / f"{docname}.md"
    if path.is_file():
        source[0] = _rewrite(source[0], f"docs/{docname}.md", set())


def _config_inited(app, config) -> None:
    """Copy the files outside ``docs/`` before Sphinx looks for source files."""
    copied = copy_external_files()
    if os.environ.get("BAYESJUDGE_DOCS_VERBOSE"):
        print("copied into docs/_generated:", *copied, sep="\n  ")


def setup(app):
    """Copy the external files at the start of the build and rewrite the pages' links."""
    app.connect("config-inited", _config_inited)
    app.connect("source-read", _source_read)
