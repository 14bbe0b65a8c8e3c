"""The command line against a hostile user (issue 13): interrupts, outputs, seeds, messages.

Every mistake must give one ``bayesjudge: error:`` line naming the option or file and the fix,
exit status 2 and no traceback; Ctrl-C exits 130 and leaves no output file; output files and
folders are checked before any work and written atomically. Commands run in-process through
``bayesjudge.cli.main``, except where a real signal or a real file descriptor is needed. The
Bayesian fits here use ``--method exact`` (no MCMC compile) or a stubbed ``bayesjudge.fit``.
"""

import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayesjudge as bj
import bayesjudge.models.fit as fit_module
from bayesjudge.cli import main
from bayesjudge.studies import _framework, allocation_length
from bayesjudge.warnings import BayesJudgeWarning

HUGE_SEED = str(2**70)  # 1180591620717411303424
BAYESJUDGE = str(Path(sys.executable).with_name("bayesjudge"))


def _fit_args(tables, *extra):
    test_csv, cal_csv = tables
    return ["fit", "--test", test_csv, "--calibration", cal_csv, "--system", "model", *extra]


@pytest.fixture
def no_fit(monkeypatch):
    """Replace ``bayesjudge.fit`` by a stub that records its calls and fails the test."""
    calls = []

    def fake(*args, **kwargs):
        calls.append(kwargs)
        raise AssertionError("the fit ran although the command line was wrong")

    monkeypatch.setattr(fit_module, "fit", fake)
    return calls


# --- item 2: Ctrl-C exits 130 and writes nothing -----------------------------------------------


# slow tier: kept out of `make test` (15-minute budget), run by `make test-slow` in CI
@pytest.mark.slow
def test_ctrl_c_during_a_study_exits_130_and_leaves_no_file(tmp_path):
    # A real SIGINT while the study runs (after its progress bar has appeared, i.e. past the
    # imports): exit 130, one line saying so, no --out folder and no temporary files.
    out_dir = tmp_path / "results"
    command = [BAYESJUDGE, "study", "allocation-length", "--reps", "1000000", "--progress"]
    proc = subprocess.Popen(
        [*command, "--out", str(out_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        # A child of a non-interactive shell may start with SIGINT ignored; Python then keeps
        # ignoring it. Start it with the default action, as a terminal would.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    seen = b""
    deadline = time.monotonic() + 120
    while b"[" not in seen and time.monotonic() < deadline:
        chunk = proc.stderr.read1(100)
        if not chunk:
            break
        seen += chunk
    assert b"allocation-length [" in seen, seen
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    err = (seen + err).decode()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert err.rstrip().endswith("bayesjudge: interrupted; nothing was written"), err
    assert err.count("\n") >= 1  # the progress bar's line was ended first
    assert not out_dir.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no staging folder left
    assert out == b""


def test_ctrl_c_during_a_fit_exits_130_and_saves_nothing(
    default_tables, tmp_path, run_cli, monkeypatch
):
    # bayesjudge.fit raises KeyboardInterrupt on Ctrl-C (it used to return a partial trace).
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(fit_module, "fit", interrupted)
    path = tmp_path / "fit.nc"
    code, out, err = run_cli(_fit_args(default_tables, "--save", str(path)))
    assert code == 130
    assert err == "bayesjudge: interrupted; nothing was written\n"
    assert out == ""
    assert not path.exists()


def test_ctrl_c_while_a_study_saves_leaves_the_folder_as_it_was(tmp_path, run_cli, monkeypatch):
    # The four files of a study are written together: an interrupt while drawing the figure
    # (the last file) leaves neither a new folder nor a mix of old and new files.
    out_dir = tmp_path / "old"
    out_dir.mkdir()
    (out_dir / "allocation_length.csv").write_text("old\n")
    import matplotlib.figure

    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", interrupted)
    args = ["study", "allocation-length", "--reps", "20", "--set", "p=0.5", "--set", "m=[100]"]
    for folder in (tmp_path / "new", out_dir):
        code, _, err = run_cli([*args, "--out", str(folder)])
        assert code == 130 and "nothing was written" in err
    assert not (tmp_path / "new").exists()
    assert sorted(p.name for p in out_dir.iterdir()) == ["allocation_length.csv"]
    assert (out_dir / "allocation_length.csv").read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old"]


def test_staged_folder_moves_files_only_on_success(tmp_path):
    out = tmp_path / "a" / "b"
    with pytest.raises(RuntimeError), _framework.staged_folder(out) as staging:
        (staging / "x.csv").write_text("1")
        raise RuntimeError("failed")
    assert not out.exists()
    with _framework.staged_folder(out) as staging:
        (staging / "x.csv").write_text("2")
    assert (out / "x.csv").read_text() == "2"
    assert oct(out.stat().st_mode & 0o777) != oct(0o700)  # the usual mode, not mkdtemp's
    with _framework.staged_folder(out) as staging:  # an existing folder: files replaced
        (staging / "x.csv").write_text("3")
    assert [p.name for p in out.iterdir()] == ["x.csv"]
    assert (out / "x.csv").read_text() == "3"


# --- item 13: output paths are checked before any work ------------------------------------------


@pytest.mark.parametrize(
    ("save", "match"),
    [
        ("{tmp}", "is an existing folder, not a file"),
        ("{tmp}/missing/fit.nc", "does not exist"),
        ("", "--save: the path is empty"),
        ("/dev/full", "is not a regular file"),
    ],
)
def test_fit_save_is_checked_before_sampling(
    default_tables, tmp_path, run_cli, no_fit, save, match, one_error_line
):
    code, out, err = run_cli(_fit_args(default_tables, "--save", save.format(tmp=tmp_path)))
    assert code == 2
    line = one_error_line(err)
    assert "--save" in line and match in line
    assert no_fit == [] and out == ""


def test_two_fits_saving_one_file_replace_it(default_tables, tmp_path, run_cli):
    # With atomic renames, the second run replaces the first file whole (documented).
    path = tmp_path / "fit.nc"
    for seed in ("1", HUGE_SEED):
        args = _fit_args(default_tables, "--method", "exact", "--seed", seed, "--save", str(path))
        code, out, err = run_cli(args)
        assert code == 0, err
        assert f"Saved the fit to {path}" in out
    assert bj.load(path).config["random_seed"] == 2**70
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cal.csv", "fit.nc", "test.csv"]


@pytest.mark.parametrize("command", ["report", "study"])
@pytest.mark.parametrize(
    ("out", "match"),
    [
        ("", "the folder name is empty"),
        ("{tmp}/test.csv", "exists and is not a folder"),
        ("{tmp}/test.csv/sub", "is a file"),
    ],
)
def test_out_folders_are_checked_before_any_work(
    default_tables, tmp_path, run_cli, monkeypatch, no_fit, command, out, match, one_error_line
):
    # --out '' used to write into the current folder.
    ran = []
    monkeypatch.setattr(allocation_length, "run", lambda **kw: ran.append(kw))
    monkeypatch.chdir(tmp_path)
    test_csv, cal_csv = default_tables
    args = (
        ["report", "--test", test_csv, "--calibration", cal_csv, "--method", "mcmc"]
        if command == "report"
        else ["study", "allocation-length"]
    )
    code, _, err = run_cli([*args, "--out", out.format(tmp=tmp_path)])
    assert code == 2
    line = one_error_line(err)
    assert "--out" in line and match in line
    assert ran == [] and no_fit == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cal.csv", "test.csv"]


# --- items 14 and 15: seeds, budgets, input files -------------------------------------------------


# slow tier: kept out of `make test` (15-minute budget), run by `make test-slow` in CI
@pytest.mark.slow
def test_huge_seeds_work_in_every_command(default_tables, tmp_path, run_cli):
    test_csv, cal_csv = default_tables
    table = ["--test", test_csv, "--calibration", cal_csv, "--system", "model"]
    commands = [
        ["demo", "--no-bayes"],
        ["estimate", *table, "--method", "bootstrap", "--n-resamples", "200"],
        ["fit", *table, "--method", "exact"],
        ["report", *table, "--method", "exact", "--n-resamples", "200", "--out", str(tmp_path)],
        ["study", "human-vs-judge", "--reps", "20", "--set", "m=100", "--out", str(tmp_path)],
    ]
    for args in commands:
        code, out, err = run_cli([*args, "--seed", HUGE_SEED])
        assert code == 0, (args, err)
        assert "Traceback" not in err
        if args[0] in ("fit", "report", "study"):
            assert f"repeat with --seed {HUGE_SEED}" in out, out
    # The study's netCDF keeps the seed as text (attrs hold 64-bit integers at most); its JSON
    # settings keep the number.
    import json

    import xarray as xr

    settings = json.loads((tmp_path / "human_vs_judge.json").read_text())
    assert settings["random_seed"] == 2**70
    with xr.open_dataset(tmp_path / "human_vs_judge.nc", engine="h5netcdf") as saved:
        assert saved.attrs["random_seed"] == HUGE_SEED


@pytest.mark.parametrize(
    "args",
    [
        ["demo", "--no-bayes"],
        ["estimate", "--test", "t.csv", "--method", "bootstrap"],
        ["fit", "--test", "t.csv"],
        ["report", "--test", "t.csv"],
        ["study", "human-vs-judge", "--no-save"],
    ],
)
def test_negative_seed_names_the_option_and_the_fix(args, run_cli, one_error_line):
    code, _, err = run_cli([*args, "--seed", "-1"])
    assert code == 2
    line = one_error_line(err)
    assert "--seed" in line and "non-negative integer" in line and "'-1'" in line


@pytest.mark.parametrize(
    ("budget", "match"),
    [
        ("10**20", "whole number >= 1 written in digits"),
        (str(10**20), "--budget 100000000000000000000:"),
        (str(10**18), "--budget 1000000000000000000:"),
        ("-5", "--budget"),
        ("nan", "--budget"),
    ],
)
def test_allocate_budget_errors_name_the_option(budget, match, run_cli, one_error_line):
    args = ["allocate", "--budget", budget, "--p-hat", "0.4", "--q0", "0.7", "--q1", "0.9"]
    code, _, err = run_cli(args)
    assert code == 2
    line = one_error_line(err)
    assert match in line and "type object" not in line


@pytest.mark.parametrize("command", ["estimate", "fit", "report"])
def test_input_files_folder_empty_missing(
    default_tables, tmp_path, run_cli, no_fit, command, one_error_line
):
    _, cal_csv = default_tables
    folder = tmp_path / "x.csv"
    folder.mkdir()
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    cases = [
        (str(folder), "--test", "is a folder, not a file"),  # was "does not exist"
        (str(empty), "--test", "the file is empty"),  # was "empty CSV" (which file?)
        (str(tmp_path / "nope.csv"), "--test", "no such file"),
    ]
    for path, option, match in cases:
        code, _, err = run_cli(
            [command, "--test", path, "--calibration", cal_csv, "--out", str(tmp_path / "r")]
            if command == "report"
            else [command, "--test", path, "--calibration", cal_csv]
        )
        assert code == 2
        line = one_error_line(err)
        assert f"{option} {path}" in line and match in line, line
    code, _, err = run_cli([command, "--test", cal_csv, "--calibration", str(empty)])
    assert code == 2 and "--calibration" in one_error_line(err)
    assert no_fit == []


# --- item 16 and 11: warnings and names on the terminal ------------------------------------------


def test_own_warnings_once_and_escaped_third_party_hidden(run_cli, monkeypatch):
    import bayesjudge.core.allocation as allocation

    real = allocation.allocation_report

    def noisy(*args, **kwargs):
        for _ in range(4):
            warnings.warn("Glyph 952 missing from font(s) DejaVu Sans.", UserWarning, stacklevel=1)
            warnings.warn("system 'a\x1b[31m\nb' has few items", BayesJudgeWarning, stacklevel=1)
        return real(*args, **kwargs)

    monkeypatch.setattr(allocation, "allocation_report", noisy)
    args = ["allocate", "--budget", "200", "--p-hat", "0.4", "--q0", "0.7", "--q1", "0.9"]
    code, _, err = run_cli(args)
    assert code == 0
    assert err == "bayesjudge: warning: system 'a\\x1b[31m\\nb' has few items\n"
    code, _, err = run_cli([*args, "--verbose"])
    assert code == 0
    ours, other = sorted(err.splitlines(), key=lambda line: not line.startswith("bayesjudge"))
    assert ours == "bayesjudge: warning: system 'a\\x1b[31m\\nb' has few items"
    # Another library's warning in Python's own format, once, not dressed as bayesjudge's.
    assert "UserWarning: Glyph 952 missing" in other
    assert err.count("Glyph") == 1


def test_names_with_control_characters_are_escaped_in_tables(tmp_path, run_cli):
    rng = np.random.default_rng(3)
    names = ["plain", "red\x1b[31m", "two\nlines\r"]
    test = pd.DataFrame({"model": np.repeat(names, 200), "judge": rng.choice(["yes", "no"], 600)})
    cal = pd.DataFrame(
        {
            "model": np.repeat(names, 80),
            "judge": rng.choice(["yes", "no"], 240),
            "human": np.tile([0, 1], 120),
        }
    )
    test.to_csv(tmp_path / "t.csv", index=False)
    cal.to_csv(tmp_path / "c.csv", index=False)
    table = ["--test", str(tmp_path / "t.csv"), "--calibration", str(tmp_path / "c.csv")]
    for args in (["estimate", *table], ["fit", *table, "--method", "exact", "--seed", "1"]):
        code, out, err = run_cli([*args, "--system", "model"])
        assert code == 0, err
        for text in (out, err):
            assert "\x1b" not in text and "\r" not in text
        assert "red\\x1b[31m" in out and "two\\nlines\\r" in out


# --- --method exact, progress ---------------------------------------------------------------------


def test_fit_method_exact_matches_the_python_api(default_tables, run_cli, one_error_line):
    code, out, err = run_cli(_fit_args(default_tables, "--method", "exact", "--seed", "5"))
    assert code == 0, err
    assert err == ""
    assert "sampler: exact posterior (no MCMC): 4 x 1000 independent draws" in out
    assert "repeat with --seed 5" in out
    test_csv, cal_csv = default_tables
    counts = bj.JudgeCounts.from_frames(test_csv, cal_csv, system="model")
    summary = bj.fit(counts, method="exact", random_seed=5).summary(ci_prob=0.95)
    theta = summary[summary["variable"] == "theta"]
    lines = [line.split() for line in out.splitlines()]
    for row in theta.itertuples():
        assert ["θ", row.system, row.stratum, f"{row.mean:.3f}", f"{row.sd:.3f}"] in [
            line[:5] for line in lines
        ]
    for extra, match in (
        (["--calibration-model", "shared"], "separate only"),
        (["--target-accept", "0.95"], "--target-accept"),
    ):
        code, _, err = run_cli(_fit_args(default_tables, "--method", "exact", *extra))
        assert code == 2 and match in one_error_line(err)


@pytest.mark.parametrize(
    ("extra", "expected"), [([], False), (["--progress"], True), (["--no-progress"], False)]
)
def test_fit_progress_default_is_quiet_under_tests(
    default_tables, run_cli, monkeypatch, extra, expected
):
    seen = {}

    def fake(*args, **kwargs):
        seen.update(kwargs)
        raise ValueError("stop here")

    monkeypatch.setattr(fit_module, "fit", fake)
    code, _, err = run_cli(_fit_args(default_tables, *extra))
    assert code == 2 and "stop here" in err
    assert seen["progressbar"] is expected
    seen.clear()
    test_csv, cal_csv = default_tables
    args = ["report", "--test", test_csv, "--calibration", cal_csv, "--method", "mcmc"]
    code, _, err = run_cli([*args, "--out", "unused", *extra])
    assert code == 2 and "stop here" in err
    assert seen["progressbar"] is expected


# --- the hostile matrix --------------------------------------------------------------------------


def _hostile_cases(tmp: Path, tables) -> list[list[str]]:
    test_csv, cal_csv = tables
    folder = tmp / "folder.csv"
    folder.mkdir(exist_ok=True)
    empty = tmp / "empty.csv"
    empty.write_text("")
    header = tmp / "header.csv"
    header.write_text("model,judge,human\n")
    files = [str(tmp / "missing.csv"), str(folder), str(empty), str(header)]
    cases = []
    for command in ("estimate", "fit", "report"):
        extra = {"report": ["--out", str(tmp / "rep")], "fit": ["--method", "exact"]}
        extra = extra.get(command, [])
        for bad in files:
            cases.append([command, "--test", bad, "--calibration", cal_csv, *extra])
            cases.append([command, "--test", test_csv, "--calibration", bad, *extra])
    table = ["--test", test_csv, "--calibration", cal_csv, "--system", "model"]
    huge = str(10**30)
    cases += [
        ["fit", *table, "--draws", huge],
        ["fit", *table, "--draws", str(10**12)],
        ["fit", *table, "--chains", "0"],
        ["fit", *table, "--tune", huge],
        ["report", *table, "--draws", huge, "--out", str(tmp / "rep")],
        ["report", *table, "--chains", "0", "--out", str(tmp / "rep")],
        ["estimate", *table, "--n-resamples", "0", "--method", "bootstrap"],
    ]
    allocate = ["allocate", "--budget", "200", "--p-hat", "0.4", "--q0", "0.7", "--q1", "0.9"]
    for alpha in ("0", "1", "nan", "-0.1", "inf"):
        cases += [
            ["demo", "--no-bayes", "--alpha", alpha],
            ["estimate", *table, "--alpha", alpha],
            [*allocate, "--alpha", alpha],
            ["fit", *table, "--ci-prob", alpha],
            ["report", *table, "--ci-prob", alpha, "--out", str(tmp / "rep")],
        ]
    for budget in (str(10**18), str(10**20), "0", "1e3"):
        cases.append(
            ["allocate", "--budget", budget, "--p-hat", "0.4", "--q0", "0.7", "--q1", "0.9"]
        )
    for value in ("nan", "-1", "2", "inf"):
        cases.append(
            ["allocate", "--budget", "200", "--p-hat", value, "--q0", "0.7", "--q1", "0.9"]
        )
    cases += [
        ["study", "human-vs-judge", "--reps", "0"],
        ["study", "human-vs-judge", "--reps", huge, "--no-save"],
        ["study", "human-vs-judge", "--out", str(empty)],
        ["study", "human-vs-judge", "--out", ""],
        ["report", *table, "--out", ""],
        ["report", *table, "--out", str(empty)],
    ]
    return cases


def test_hostile_inputs_give_an_error_line_never_a_traceback(
    default_tables, tmp_path, run_cli, monkeypatch, one_error_line
):
    # Each case exits 2 with one error line (or 0 where the input is merely odd, e.g. a file
    # with a header only, which gives warnings). No MCMC fit may start: those cases fail before.
    exact, mcmc = fit_module.fit, []

    def fit(*args, **kwargs):
        if kwargs.get("method") == "exact":
            return exact(*args, **kwargs)
        mcmc.append(kwargs)
        raise AssertionError("an MCMC fit started")

    monkeypatch.setattr(fit_module, "fit", fit)
    for args in _hostile_cases(tmp_path, default_tables):
        code, _, err = run_cli(args)
        assert code in (0, 2), (args, err[-3000:])
        assert "Traceback" not in err and "internal error" not in err, (args, err)
        if code == 2:
            one_error_line(err)
    assert mcmc == []


def test_unreadable_file(default_tables, tmp_path, run_cli, monkeypatch, one_error_line):
    test_csv, cal_csv = default_tables
    os.chmod(test_csv, 0)
    if os.geteuid() == 0:  # root reads files whatever their mode: answer as a user would get
        real_access = os.access
        monkeypatch.setattr(
            os, "access", lambda p, mode, **kw: str(p) != str(test_csv) and real_access(p, mode)
        )
    code, _, err = run_cli(["estimate", "--test", test_csv, "--calibration", cal_csv])
    assert code == 2 and "permission denied" in one_error_line(err)


def test_stdout_to_dev_full_is_an_error_line():
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    args = ["allocate", "--budget", "200", "--p-hat", "0.4", "--q0", "0.7", "--q1", "0.9"]
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [BAYESJUDGE, *args], stdout=full, stderr=subprocess.PIPE, text=True, check=False
        )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    assert proc.stderr == (
        "bayesjudge: error: cannot write the output to stdout (No space left on device); "
        "redirect it to a file on a disk with free space, or to a pipe.\n"
    )


# --- internal errors and closed pipes -------------------------------------------------------------

ALLOCATE = ["allocate", "--budget", "200", "--p-hat", "0.4", "--q0", "0.7", "--q1", "0.9"]


def test_internal_error_is_one_line_and_verbose_shows_the_traceback(run_cli, monkeypatch):
    import bayesjudge.core.allocation as allocation

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(allocation, "allocation_report", broken)
    code, _, err = run_cli(ALLOCATE)
    assert code == 1
    assert err.startswith("bayesjudge: internal error: RuntimeError: boom. This is a bug")
    assert err.count("\n") == 1 and "Traceback" not in err
    code, _, err = run_cli([*ALLOCATE, "--verbose"])
    assert code == 1 and "Traceback (most recent call last)" in err and "boom" in err


def test_stdout_closed_by_its_reader_exits_141_quietly(capsys, monkeypatch):
    class ClosedPipe:
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            pass

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    code = main(ALLOCATE)
    assert code == 141
    assert capsys.readouterr().err == ""
