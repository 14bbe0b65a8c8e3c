"""Session-10 hostile findings on ``bayesjudge study`` (huntC F5, F7)."""

from __future__ import annotations

import os

import pytest

from bayesjudge.studies import _framework, human_vs_judge

QUICK = ["study", "human-vs-judge", "--reps", "2"]


@pytest.fixture
def runs(monkeypatch):
    """Record the study runs (so a check 'before the run' can be seen to come first)."""
    calls = []
    real = human_vs_judge.run

    def run(**kwargs):
        calls.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(human_vs_judge, "run", run)
    return calls


@pytest.mark.parametrize("where", ["/proc/nope", "/sys/kernel/x"])
def test_out_that_cannot_be_written_fails_before_the_run(where, run_cli, one_error_line, runs):
    # huntC F7: os.access says yes (root) where nothing can be created; before the fix the run
    # finished and then "[Errno 2] No such file or directory: '/proc/.nope.0bmct5u_.tmp'".
    if not os.path.isdir(os.path.dirname(where)):
        pytest.skip(f"no {os.path.dirname(where)} here")
    code, _, err = run_cli([*QUICK, "--out", where])
    assert code == 2 and runs == []
    line = one_error_line(err)
    # As root only the probe catches it ("cannot write there"); otherwise os.access does.
    assert line.startswith(f"bayesjudge: error: --out {where}: "), line
    assert ".tmp" not in line and "Errno" not in line
    if os.geteuid() == 0:
        assert "cannot write there" in line and "--no-save" in line


def test_out_name_too_long_fails_before_the_run(tmp_path, run_cli, one_error_line, runs):
    where = str(tmp_path / ("a" * 300))
    code, _, err = run_cli([*QUICK, "--out", where])
    assert code == 2 and runs == []
    line = one_error_line(err)
    assert "--out" in line and "File name too long" in line and "Errno" not in line


def test_late_write_error_names_out_and_keeps_the_table(tmp_path, run_cli, monkeypatch):
    def broken(self, out_dir):
        raise OSError(30, "Read-only file system", str(tmp_path / "r" / ".r.abc.tmp"))

    monkeypatch.setattr(_framework.StudyResult, "save", broken)
    code, out, err = run_cli([*QUICK, "--out", str(tmp_path / "r")])
    assert code == 2
    assert "human-vs-judge" in out and "theta" in out  # the computed table still printed
    assert err.strip() == (
        f"bayesjudge: error: --out {tmp_path / 'r'}: cannot write there (Read-only file "
        f"system: {tmp_path / 'r'}); nothing was saved. Choose another folder with --out, or "
        "--no-save."
    )


def test_random_design_study_with_rare_labels_runs(run_cli):
    # huntC F5: rc 2 "m1 = 0 in group(s) [0] (flat index) ..." after the simulation started.
    code, out, err = run_cli(
        ["study", "random-design", "--reps", "20", "--set", "draws=100", "--set", "theta=0.01",
         "--set", "samples=random", "--no-save", "--format", "csv"]
    )  # fmt: skip
    assert code == 0, err
    rows = [line.split(",") for line in out.strip().splitlines()]
    header = rows[0]
    share = {
        (r[header.index("estimand")], r[header.index("estimator")]): float(
            r[header.index("undefined_share")]
        )
        for r in rows[1:]
    }
    assert share["population", "bayes-random"] > 0 and share["population", "likelihood"] == 0


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("draws=20", "draws must be a whole number of at least 100; got 20."),
        ("theta=1.5", "theta values must lie in [0, 1]; got [1.5]."),
    ],
)
def test_study_option_errors_name_the_set(pair, message, run_cli, one_error_line):
    # huntC F11: "draws must be ..." did not say it came from --set.
    code, _, err = run_cli(["study", "random-design", "--set", pair, "--no-save"])
    assert code == 2
    assert one_error_line(err) == f"bayesjudge: error: --set {pair}: {message}"
