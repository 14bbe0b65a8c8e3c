"""``report --out`` that cannot be written is refused before any work.

Regression (hunt of 2026-11-28 d, finding C-F7): `report --out /proc/nope` passed the
up-front check (os.access says yes there, and as root), fitted for ~20 s, then failed naming an
internal staging folder. The folder is now tried first, as `study --out` is.
"""

from __future__ import annotations

import pandas as pd

import bayesjudge.cli.report as report_cli
from bayesjudge.cli import main


def test_an_unwritable_out_folder_fails_before_the_fit(tmp_path, capsys, monkeypatch):
    rows = [{"judge": i % 3 != 0} for i in range(40)]
    cal = [{"judge": i % 4 != 0, "human": i % 2 == 0} for i in range(40)]
    pd.DataFrame(rows).to_csv(tmp_path / "test.csv", index=False)
    pd.DataFrame(cal).to_csv(tmp_path / "cal.csv", index=False)

    def no_work(*args, **kwargs):
        raise AssertionError("the report was built although --out cannot be written")

    monkeypatch.setattr(report_cli, "write_report", no_work)
    argv = ["report", "--test", str(tmp_path / "test.csv"), "--calibration",
            str(tmp_path / "cal.csv"), "--out", "/proc/bayesjudge-nope"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("bayesjudge: error: --out /proc/bayesjudge-nope: cannot write there")
    assert ".tmp" not in err and "Choose another folder with --out" in err
