"""Tests of the bayesjudge command line."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from bayesjudge.data import JudgeCounts
from bayesjudge.estimate import estimate


def test_demo_prints_truth_naive_and_corrected(run_cli):
    # --no-bayes skips the Bayesian fit (tested in test_cli_fit.py) and PyMC's compile.
    code, out, err = run_cli(["demo", "--seed", "1", "--no-bayes"])
    assert code == 0, err
    assert "true θ" in out and "naive p̂" in out and "corrected θ̂" in out
    assert "model-a" in out and "knowledge" in out
    assert "random_seed = 1" in out
    assert "Bayesian" not in out


def test_estimate_table_and_json_match_python_api(tables, run_cli):
    test_csv, cal_csv = tables
    common = [
        "estimate",
        "--test",
        str(test_csv),
        "--calibration",
        str(cal_csv),
        "--judge",
        "verdict",
        "--human",
        "gold",
        "--system",
        "model",
    ]
    code, out, err = run_cli(common)
    assert code == 0, err
    assert "alpha" in out and "beta" in out and "95% interval" in out

    code, out, err = run_cli([*common, "--json"])
    assert code == 0, err
    payload = json.loads(out)
    counts = JudgeCounts.from_frames(
        str(test_csv), str(cal_csv), judge="verdict", human="gold", system="model"
    )
    expected = estimate(counts)
    by_system = {r["system"]: r for r in payload["results"]}
    for system in ("alpha", "beta"):
        exp = expected.sel(system=system).squeeze()
        assert by_system[system]["estimate"] == pytest.approx(float(exp["estimate"]), abs=1e-12)
        assert by_system[system]["lower"] == pytest.approx(float(exp["ci"][0]), abs=1e-12)
        assert by_system[system]["upper"] == pytest.approx(float(exp["ci"][1]), abs=1e-12)
        assert by_system[system]["n"] == 600
    assert payload["settings"]["method"] == "lang-reiczigel"


def test_allocate_reports_algorithm1_published_value(run_cli):
    # Lee et al. repository README: allocate_calibration_sample(200, 0.4, q0_pilot=0.7,
    # q1_pilot=0.9, m_pilot=10) = (136, 64).
    code, out, err = run_cli(
        ["allocate", "--budget", "200", "--p-hat", "0.4", "--q0", "0.7", "--q1", "0.9", "--json"]
    )
    assert code == 0, err
    rows = {r["method"]: r for r in json.loads(out)["allocations"]}
    assert (rows["algorithm1"]["m0"], rows["algorithm1"]["m1"]) == (136, 64)
    assert rows["exact"]["interval_length"] <= rows["symmetric"]["interval_length"]
    code, out, err = run_cli(
        ["allocate", "--budget", "200", "--p-hat", "0.4", "--q0", "0.7", "--q1", "0.9"]
    )
    assert code == 0 and "algorithm1" in out and "136" in out


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["estimate", "--test", "nowhere.csv", "--calibration", "nowhere.csv"], "nowhere.csv"),
        (["allocate", "--budget", "200", "--p-hat", "1.5", "--q0", "0.7", "--q1", "0.9"], "p_hat"),
        (["allocate", "--budget", "-5", "--p-hat", "0.4", "--q0", "0.7", "--q1", "0.9"], "m"),
        (["allocate", "--budget", "ten", "--p-hat", "0.4", "--q0", "0.7", "--q1", "0.9"], "budget"),
        (["demo", "--alpha", "2"], "alpha"),
        (["estimate", "--test", "x.csv", "--method", "magic"], "method"),
    ],
)
def test_user_mistakes_print_one_line_and_exit_2(args, match, run_cli):
    code, _, err = run_cli(args)
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("bayesjudge: error:")
    assert match in lines[0]


def test_data_mistakes_in_files(tables, tmp_path, run_cli):
    test_csv, cal_csv = tables
    # a missing column
    code, _, err = run_cli(
        ["estimate", "--test", str(test_csv), "--calibration", str(cal_csv), "--judge", "nope"]
    )
    assert code == 2 and err.count("\n") == 1 and "nope" in err
    # unknown labels
    bad = pd.read_csv(cal_csv)
    bad["gold"] = bad["gold"].map({0: "meh", 1: "great"})
    bad_csv = tmp_path / "bad.csv"
    bad.to_csv(bad_csv, index=False)
    code, _, err = run_cli(
        [
            "estimate",
            "--test",
            str(test_csv),
            "--calibration",
            str(bad_csv),
            "--judge",
            "verdict",
            "--human",
            "gold",
        ]
    )
    assert code == 2 and err.count("\n") == 1 and "gold" in err and "meh" in err
    # corrected methods need a calibration file
    code, _, err = run_cli(["estimate", "--test", str(test_csv), "--judge", "verdict"])
    assert code == 2 and "--calibration is required" in err
    # ... but naive does not
    code, out, err = run_cli(
        ["estimate", "--test", str(test_csv), "--judge", "verdict", "--method", "naive"]
    )
    assert code == 0, err
    assert "naive" in out and "alpha" not in out  # no --system: one pooled group


def test_warnings_are_one_line_each_and_do_not_fail(tmp_path, run_cli):
    test_csv, cal_csv = tmp_path / "t.csv", tmp_path / "c.csv"
    # A blank line is skipped silently; an empty label in a row is dropped with a warning.
    test_csv.write_text("judge,id\nyes,1\nno,2\n,3\nyes,4\n")
    cal_csv.write_text("judge,human\n" + "yes,1\nno,0\n" * 20 + "no,\n")
    code, _out, err = run_cli(["estimate", "--test", str(test_csv), "--calibration", str(cal_csv)])
    assert code == 0
    lines = err.splitlines()
    assert len(lines) == 2
    assert all(line.startswith("bayesjudge: warning: Dropped 1 of") for line in lines)
    assert "test table" in lines[0] and "calibration table" in lines[1]


def test_console_script_entry_point():
    exe = Path(sys.executable).with_name("bayesjudge")
    proc = subprocess.run([str(exe), "--version"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0
    assert proc.stdout.startswith("bayesjudge ")
    proc = subprocess.run(
        [str(exe), "allocate", "--budget", "3", "--p-hat", "0.4", "--q0", "0.7", "--q1", "0.9"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("bayesjudge: error:")
