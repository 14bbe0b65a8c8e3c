"""Atomic output (bayesjudge._io) and safe display of user names (bayesjudge._text)."""

import os
import stat

import pytest

from bayesjudge._io import atomic_path, atomic_write, check_output_file
from bayesjudge._text import markdown_escape, plain_label, terminal_safe


def test_atomic_write_replaces_whole_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "out.md"
    target.write_text("old")
    atomic_write(target, "new")
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["out.md"]


@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError])
def test_interrupted_write_leaves_the_old_file_and_no_temporary(tmp_path, error):
    target = tmp_path / "fit.nc"
    target.write_bytes(b"complete")
    with pytest.raises(error), atomic_path(target) as tmp:
        tmp.write_bytes(b"half")
        raise error
    assert target.read_bytes() == b"complete"
    assert [p.name for p in tmp_path.iterdir()] == ["fit.nc"]


def test_interrupted_first_write_leaves_nothing(tmp_path):
    with pytest.raises(KeyboardInterrupt), atomic_path(tmp_path / "report.html") as tmp:
        tmp.write_text("<html>")
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_written_files_get_the_mode_of_a_plain_open(tmp_path):
    # mkstemp makes 0600 files; a report or saved fit must be readable like any other file.
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    atomic_write(tmp_path / "atomic.txt", "x")
    mode = stat.S_IMODE(os.stat(tmp_path / "atomic.txt").st_mode)
    assert mode == stat.S_IMODE(os.stat(plain).st_mode)


def test_temporary_keeps_the_suffix(tmp_path):
    with atomic_path(tmp_path / "figure.png") as tmp:
        assert tmp.suffix == ".png" and tmp.parent == tmp_path
        tmp.write_bytes(b"")


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda d: "", "the path is empty"),
        (lambda d: "   ", "the path is empty"),
        (lambda d: d, "is an existing folder"),
        (lambda d: d / "missing" / "fit.nc", "does not exist"),
    ],
)
def test_check_output_file_names_the_problem(tmp_path, make, match):
    with pytest.raises(ValueError, match=match):
        check_output_file(make(tmp_path), what="fit file")


def test_check_output_file_parent_is_a_file(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="is not a folder"):
        check_output_file(tmp_path / "file" / "fit.nc")


def test_check_output_file_accepts_new_and_existing_files(tmp_path):
    assert check_output_file(tmp_path / "fit.nc") == tmp_path / "fit.nc"
    (tmp_path / "fit.nc").write_text("")
    assert check_output_file(tmp_path / "fit.nc") == tmp_path / "fit.nc"


def test_terminal_safe_escapes_control_characters_only():
    assert terminal_safe("a\nb\rc\x1b[31m\td") == "a\\nb\\rc\\x1b[31m\\td"
    assert terminal_safe("Mistral 7B — é ü 中文") == "Mistral 7B — é ü 中文"
    assert terminal_safe(1) == "1"


def test_markdown_escape_leaves_no_markup():
    markdown_it = pytest.importorskip("markdown_it")
    name = '"><img src=x onerror=alert(1)> <script>alert(1)</script> *b* | `c` $x$'
    html = markdown_it.MarkdownIt("commonmark").render(f"| {markdown_escape(name)} |\n")
    assert "<img" not in html and "<script" not in html and "<em>" not in html
    assert "&lt;script&gt;" in html


def test_plain_label_never_starts_mathtext():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.set_title(plain_label("$\\frac{a}{$"))
    fig.canvas.draw()  # raises a mathtext ParseSyntaxException without the escaping
    assert ax.get_title() == "\\$\\frac{a}{\\$"
    plt.close(fig)
