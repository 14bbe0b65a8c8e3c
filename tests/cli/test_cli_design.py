"""The labelling design on the command line: one --test table with human labels, --design.

``read_counts`` is checked through the commands' own parser (the counts it reads, exactly),
and ``bayesjudge estimate`` runs on one table; mistakes are one ``bayesjudge: error:`` line.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from bayesjudge.cli import _build_parser
from bayesjudge.cli._common import read_counts

# One table of 400 items: item i judged correct unless i % 4 == 0 (300 of 400); labelled
# where i % 5 == 0 (80 items), human label incorrect where i % 15 == 0 (27 of them:
# 0, 15, ..., 390). Among the labelled: judged incorrect where i % 20 == 0 (20 items), so
#   n = 400 - 80 = 320, k = 300 - (80 - 20) = 240;
#   m0 = 27, tn = #{i % 60 == 0} = 7 (0, 60, ..., 360);
#   m1 = 80 - 27 = 53, tp = 80 - 20 - 27 + 7 = 40.
EXPECTED = {"n": 320, "k": 240, "m0": 27, "tn": 7, "m1": 53, "tp": 40}


def write_one_table(path, *, system: bool = False) -> str:
    i = np.arange(400)
    human = np.where(i % 5 == 0, np.where(i % 15 == 0, "no", "yes"), "")
    frame = pd.DataFrame({"judge": np.where(i % 4 != 0, "yes", "no"), "human": human})
    if system:  # the same table for two systems
        frame = pd.concat([frame.assign(model="a"), frame.assign(model="b")])
    frame.to_csv(path, index=False)
    return str(path)


def counts_for(argv: list[str]):
    return read_counts(_build_parser().parse_args(argv))


def totals(counts) -> dict[str, int]:
    return {f: int(counts.dataset[f].sum()) for f in EXPECTED}


def test_read_counts_of_one_table(tmp_path):
    path = write_one_table(tmp_path / "one.csv")
    counts = counts_for(["estimate", "--test", path])
    assert totals(counts) == EXPECTED and counts.design == "random"
    counts = counts_for(["estimate", "--test", path, "--design", "random"])
    assert totals(counts) == EXPECTED and counts.design == "random"


def test_read_counts_of_one_table_per_system(tmp_path):
    path = write_one_table(tmp_path / "one.csv", system=True)
    counts = counts_for(["fit", "--test", path, "--system", "model"])
    assert counts.systems == ["a", "b"] and counts.design == "random"
    for system in ("a", "b"):
        assert totals(counts.sel(system=system)) == EXPECTED


def test_read_counts_keeps_the_two_table_behaviour(default_tables):
    # Without a human column in --test, nothing changes: two tables, design stratified.
    test_csv, cal_csv = default_tables
    counts = counts_for(["estimate", "--test", test_csv, "--calibration", cal_csv,
                         "--system", "model"])  # fmt: skip
    assert counts.design == "stratified"
    assert counts.n.values.ravel().tolist() == [300, 300]
    assert (counts.m0 + counts.m1).values.ravel().tolist() == [120, 120]
    declared = counts_for(["estimate", "--test", test_csv, "--calibration", cal_csv,
                           "--system", "model", "--design", "random"])  # fmt: skip
    assert declared.design == "random"
    assert declared.n.values.ravel().tolist() == [300, 300]


def test_shared_calibration_ignores_a_human_column_of_the_test_table(tmp_path):
    # --calibration without the --system column: one set for every system, attached to the
    # test counts; the test table's human column is not read then (n counts every row).
    path = write_one_table(tmp_path / "one.csv", system=True)
    cal = tmp_path / "cal.csv"
    pd.DataFrame({"judge": ["yes", "no", "no"], "human": ["yes", "no", "yes"]}).to_csv(
        cal, index=False
    )
    counts = counts_for(["estimate", "--test", path, "--calibration", str(cal),
                         "--system", "model", "--design", "random"])  # fmt: skip
    assert counts.n.values.ravel().tolist() == [400, 400]
    assert counts.m0.values.ravel().tolist() == [1, 1] and counts.design == "random"
    assert counts.calibration_shared_over == ("system",)


def test_estimate_runs_on_one_table(tmp_path, run_cli):
    path = write_one_table(tmp_path / "one.csv")
    code, out, err = run_cli(["estimate", "--test", path, "--json"])
    assert code == 0, err
    assert json.loads(out)  # valid JSON; its fields belong to the estimate command's tests


def test_one_table_declared_stratified_is_one_error_line(tmp_path, run_cli, one_error_line):
    path = write_one_table(tmp_path / "one.csv")
    code, _, err = run_cli(["estimate", "--test", path, "--design", "stratified"])
    assert code == 2
    line = one_error_line(err)
    assert "80 human-labelled rows" in line and "--design random" in line and "design='" not in line


@pytest.mark.parametrize("value", ["Random", "both"])
def test_unknown_design_is_refused_by_the_parser(tmp_path, run_cli, value):
    path = write_one_table(tmp_path / "one.csv")
    code, _, err = run_cli(["estimate", "--test", path, "--design", value])
    assert code == 2
    assert "invalid choice" in err and "stratified" in err and "random" in err


def test_mixed_designs_are_one_error_line(tmp_path, run_cli, one_error_line):
    # report reads item ids: labelled items partly among the judged ones.
    (tmp_path / "t.csv").write_text("id,judge\n1,yes\n2,no\n3,yes\n4,no\n")
    (tmp_path / "c.csv").write_text("id,judge,human\n1,yes,yes\n9,no,no\n")
    parsed = _build_parser().parse_args(
        ["report", "--test", str(tmp_path / "t.csv"), "--calibration", str(tmp_path / "c.csv"),
         "--item", "id", "--out", str(tmp_path / "out")]
    )  # fmt: skip
    with pytest.raises(ValueError, match="Only 1 of the 2 labelled items"):
        read_counts(parsed)
    code, _, err = run_cli(
        ["report", "--test", str(tmp_path / "t.csv"), "--calibration", str(tmp_path / "c.csv"),
         "--item", "id", "--out", str(tmp_path / "out"), "--method", "exact"]
    )  # fmt: skip
    assert code == 2
    assert "Only 1 of the 2 labelled items" in one_error_line(err)
