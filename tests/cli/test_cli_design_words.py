"""The labelling-design messages of the data layer reach the terminal in command-line words.

Regression (hunt of 2026-11-28 d, finding C-F11): `estimate --design stratified` on one table
with human labels printed "design='stratified' was passed ... pass design='random' ... as
calibration= and the unlabelled rows as test=" (Python spellings) on the command line.
"""

from __future__ import annotations

import pytest

from bayesjudge.cli import main
from bayesjudge.cli._common import cli_words
from bayesjudge.data import JudgeCounts


def _one_table(path):
    rows = ["item,judge,human"]
    rows += [f"i{i},{'yes' if i % 3 else 'no'},{('yes' if i % 2 else 'no') if i < 20 else ''}"
             for i in range(60)]  # fmt: skip
    path.write_text("\n".join(rows) + "\n")
    return path


def test_the_error_names_the_options(tmp_path, capsys):
    table = _one_table(tmp_path / "one.csv")
    assert main(["estimate", "--test", str(table), "--design", "stratified"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bayesjudge: error: --design stratified was given with one table")
    assert "pass --design random (or leave --design out)" in err
    assert "with --calibration and the unlabelled rows with --test" in err
    assert "design='" not in err and "calibration=" not in err


def test_python_users_keep_the_argument_names(tmp_path):
    import pandas as pd

    frame = pd.read_csv(_one_table(tmp_path / "one.csv"))
    with pytest.raises(ValueError, match="design='stratified' was passed") as err:
        JudgeCounts.from_frames(frame, human="human", design="stratified")
    assert "pass design='random'" in str(err.value)
    assert cli_words(str(err.value)).startswith("--design stratified was given")
