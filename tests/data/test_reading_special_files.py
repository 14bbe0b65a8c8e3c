"""A table path that is a device or a pipe is refused by name, not reported as missing.

Regression (hunt of 2026-11-28 d, finding B-F12): `--test /dev/null` and a shell's
`<(zcat x.csv.gz)` (a pipe) said "The test file ... does not exist".
"""

from __future__ import annotations

import os

import pytest

from bayesjudge.data import JudgeCounts


@pytest.mark.parametrize("kind", ["device", "pipe"])
def test_a_special_file_is_refused_as_not_regular(tmp_path, kind):
    if kind == "device":
        path = "/dev/null"
    else:
        path = str(tmp_path / "fifo.csv")
        os.mkfifo(path)  # never opened: the check comes first, so nothing blocks
    with pytest.raises(ValueError, match="is not a regular file") as err:
        JudgeCounts.from_frames(path)
    assert f"The test file {path!r}" in str(err.value)
    assert "does not exist" not in str(err.value) and "save it to a .csv" in str(err.value)


def test_a_missing_file_is_still_reported_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        JudgeCounts.from_frames(str(tmp_path / "nope.csv"))
