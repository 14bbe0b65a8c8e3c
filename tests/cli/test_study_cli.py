"""Tests of ``bayesjudge study`` and of the study registry.

Commands run in-process through ``bayesjudge.cli.main`` with the two cheap studies
(allocation-length, human-vs-judge, well under a second at reduced replications); what they
print and save is checked against the Python API called with the same settings.
"""

import inspect
import io
import json

import pandas as pd
import pytest

from bayesjudge.studies import STUDIES, allocation_length, run_study


def test_registry_names_importable_modules_with_run_and_plot():
    # The five studies of issue 4, the LLMBar case study of issue 5, the random design (15),
    # repeated verdicts (18), K categories (16) and several judges (17); each module has
    # run(*, reps, random_seed, progress, ...) with defaults and a plot(table) function, and a
    # one-line summary for --list.
    assert set(STUDIES) == {
        "allocation-length",
        "coverage",
        "distribution-shift",
        "human-vs-judge",
        "comparison",
        "llmbar",
        "random-design",
        "clustered",
        "categorical-preference",
        "categorical-rubric",
        "categorical-structure",
        "jury",
        "categorical-jury",
        "llmbar-jury",
    }
    import importlib

    for name, module_name in STUDIES.items():
        module = importlib.import_module(module_name)
        assert callable(module.run) and callable(module.plot), name
        params = inspect.signature(module.run).parameters
        for option in ("reps", "random_seed", "progress"):
            assert option in params, (name, option)
            assert params[option].kind is inspect.Parameter.KEYWORD_ONLY, (name, option)
            assert params[option].default is not inspect.Parameter.empty, (name, option)
        assert isinstance(params["random_seed"].default, int), name
        assert (module.__doc__ or "").strip(), name


def test_list_describes_every_study(run_cli):
    code, out, err = run_cli(["study", "--list"])
    assert code == 0, err
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == list(STUDIES)
    assert "Algorithm 1" in out and "human-only" in out


def test_study_prints_and_saves_what_the_api_computes(tmp_path, run_cli):
    out_dir = tmp_path / "alloc"
    args = ["study", "allocation-length", "--reps", "200", "--seed", "3", "--out", str(out_dir)]
    code, out, err = run_cli(args)
    assert code == 0, err
    assert err == ""  # no progress bar unless asked (stderr is not a terminal here)
    assert "study allocation-length:" in out
    assert "200 replications per design point, seed 3 (repeat with --seed 3)" in out
    assert "Lee et al., Fig. 3" in out
    assert "saved allocation_length.csv, allocation_length.nc, allocation_length.json, " in out
    expected = allocation_length.run(reps=200, random_seed=3).to_frame()
    saved = pd.read_csv(out_dir / "allocation_length.csv")
    pd.testing.assert_frame_equal(saved, expected, check_exact=False, rtol=1e-12)
    settings = json.loads((out_dir / "allocation_length.json").read_text())
    assert settings["reps"] == 200 and settings["random_seed"] == 3
    assert (out_dir / "allocation_length.png").stat().st_size > 0
    # 96 rows: the table is cut to --max-rows (40) and says where the rest is.
    assert "[96 rows, 40 shown (all rows in" in out


def test_csv_format_is_the_tidy_table_on_stdout(tmp_path, run_cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["study", "human-vs-judge", "--quick", "--seed", "9", "--format", "csv", "--no-save"]
    code, out, err = run_cli(args)
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out))
    expected = run_study("human-vs-judge", reps=200, random_seed=9).to_frame()
    pd.testing.assert_frame_equal(frame, expected, check_exact=False, rtol=1e-12)
    assert list(tmp_path.iterdir()) == []  # --no-save writes nothing


def test_default_out_dir_and_progress(tmp_path, run_cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(["study", "human-vs-judge", "--reps", "50", "--progress"])
    assert code == 0, err
    assert "human-vs-judge [" in err and "475/475" in err
    folder = tmp_path / "study-human-vs-judge"
    assert sorted(p.name for p in folder.iterdir()) == [
        "human_vs_judge.csv",
        "human_vs_judge.json",
        "human_vs_judge.nc",
        "human_vs_judge.png",
    ]
    assert "saved human_vs_judge.csv" in out and "study-human-vs-judge" in out


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["study", "nope"], "unknown study 'nope'; choose one of allocation-length, coverage"),
        (["study"], "name a study: one of allocation-length"),
        (["study", "coverage", "--list"], "either a study NAME or --list"),
        (["study", "human-vs-judge", "--quick", "--reps", "50"], "--quick"),
        (["study", "human-vs-judge", "--no-save", "--out", "x"], "--no-save"),
        (["study", "human-vs-judge", "--reps", "1"], "--reps"),
        (["study", "human-vs-judge", "--max-rows", "0"], "--max-rows"),
        (["study", "human-vs-judge", "--set", "foo=1"], "no such option; its options are q0"),
        (["study", "human-vs-judge", "--set", "seed=1"], "use the --reps, --seed"),
        (["study", "human-vs-judge", "--set", "m"], "KEY=VALUE"),
        (["study", "allocation-length", "--set", "p=0.1", "--no-save"], "p (the share judged"),
    ],
)
def test_mistakes_print_one_line_and_exit_2(args, match, run_cli, one_error_line):
    code, _, err = run_cli(args)
    assert code == 2
    assert match in one_error_line(err)


def test_set_passes_study_options(run_cli):
    # VALUE is JSON (numbers, [lists], null) or a comma list.
    args = ["study", "allocation-length", "--reps", "50", "--no-save", "--format", "csv"]
    args += ["--set", "p=0.5,0.7", "--set", "m=[100]", "--set", "n=1000", "--set", "m-pilot=20"]
    code, out, err = run_cli(args)
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out))
    expected = allocation_length.run(reps=50, p=[0.5, 0.7], m=[100], n=1000, m_pilot=20)
    pd.testing.assert_frame_equal(frame, expected.to_frame(), check_exact=False, rtol=1e-12)


def test_out_must_be_a_folder(tmp_path, run_cli, one_error_line):
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    code, _, err = run_cli(["study", "human-vs-judge", "--out", str(a_file)])
    assert code == 2 and "not a folder" in one_error_line(err)


def test_registered_but_missing_module(run_cli, monkeypatch, one_error_line):
    monkeypatch.setitem(STUDIES, "ghost", "bayesjudge.studies.no_such_module")
    code, _, err = run_cli(["study", "ghost"])
    assert code == 2 and "not installed" in one_error_line(err)
    code, out, err = run_cli(["study", "--list"])
    assert code == 0, err
    assert "ghost" in out and "(not installed in this version)" in out


# --- review (issue 4): headers, wrong types, seeds, --out, --quick ------------------------------


def test_summary_line_does_not_repeat_the_study_name(run_cli):
    # The header printed "study distribution-shift: Study distribution-shift: five estimators"
    # and "study coverage: The coverage study: bias, ...".
    code, out, err = run_cli(["study", "--list"])
    assert code == 0, err
    for line in out.splitlines():
        name, summary = line.split(maxsplit=1)
        assert f"study {name}" not in summary.lower(), line
        assert f"{name} study" not in summary.lower(), line
        assert not summary.lower().startswith("study"), line
    args = ["study", "distribution-shift", "--quick", "--no-save", "--set", "theta_calibration=0.5"]
    code, out, err = run_cli(args)
    assert code == 0, err
    assert out.splitlines()[0] == (
        "study distribution-shift: Five estimators when the calibration accuracy θ_Q ≠ θ_P "
        "(Lee et al. Fig. 7)"
    )


@pytest.mark.parametrize(
    ("args", "match"),
    [
        # A TypeError / KeyError inside run() used to reach the user as a traceback.
        (["study", "coverage", "--set", "grid=[1,2]"], "grid must be one of"),
        (["study", "coverage", "--set", 'grid={"n": [1000]}'], "grid needs the keys"),
        (["study", "coverage", "--set", "n_resamples=abc"], "n_resamples must be"),
        (["study", "coverage", "--set", "theta=abc"], "theta must be a number or a list"),
        (["study", "coverage", "--set", "theta=0.5,0.5"], "theta must not repeat"),
        (["study", "human-vs-judge", "--set", "m=[1,2]"], "m must be a whole number"),
        (["study", "human-vs-judge", "--set", "theta=abc"], "theta must be a number or a list"),
        (["study", "comparison", "--set", "j_grid=abc"], "j_grid must be a number or a list"),
        (["study", "comparison", "--set", "n=[1000]"], "n must be a whole number"),
        (["study", "distribution-shift", "--set", "theta_calibration=abc"], "theta_calibration"),
        (["study", "distribution-shift", "--set", "m=abc"], "m must be"),
        (["study", "allocation-length", "--set", "q0=[0.7]"], "q0 must be a number"),
        (["study", "allocation-length", "--set", "alpha=true"], "alpha must be a number"),
        # A negative seed gave numpy's "expected non-negative integer".
        (["study", "human-vs-judge", "--seed", "-1"], "--seed"),
    ],
)
def test_wrong_types_and_values_print_one_line(args, match, run_cli, one_error_line):
    code, _, err = run_cli([*args, "--quick", "--no-save"])
    assert code == 2
    assert match in one_error_line(err)


def test_out_is_checked_before_the_study_runs(tmp_path, run_cli, monkeypatch, one_error_line):
    # --out below a file used to fail only after the (possibly hour-long) run, losing it.
    (tmp_path / "file.txt").write_text("x")
    ran = []
    monkeypatch.setattr(allocation_length, "run", lambda **kw: ran.append(kw))
    code, _, err = run_cli(["study", "allocation-length", "--out", str(tmp_path / "file.txt/sub")])
    assert code == 2 and "--out" in one_error_line(err)
    assert ran == []


def _captured_options(name, args, run_cli, monkeypatch):
    import functools
    import importlib

    module = importlib.import_module(STUDIES[name])
    seen = {}

    @functools.wraps(module.run)  # keeps the signature that --set checks names against
    def fake_run(**options):
        seen.update(options)
        raise ValueError("stop here")

    monkeypatch.setattr(module, "run", fake_run)
    code, _, err = run_cli(["study", name, "--no-save", *args])
    assert code == 2 and "stop here" in err
    return seen


@pytest.mark.parametrize("name", list(STUDIES))
def test_quick_is_a_smoke_run_for_every_study(name, run_cli, monkeypatch):
    seen = _captured_options(name, ["--quick"], run_cli, monkeypatch)
    assert seen["reps"] <= 200
    if name == "comparison":
        # The default 200 hierarchical fits per design point (18 points) took 30-60 min; the
        # quick run fits a few per point with short chains.
        assert seen["bayes_reps"] <= 4 and seen["draws"] <= 200 and seen["tune"] <= 200


def test_set_overrides_quick_settings(run_cli, monkeypatch):
    seen = _captured_options(
        "comparison", ["--quick", "--set", "bayes_reps=10"], run_cli, monkeypatch
    )
    assert seen["bayes_reps"] == 10 and seen["reps"] == 200


def test_progress_default_follows_show_progress(tmp_path, run_cli, monkeypatch):
    # Issue 13: the default of --progress is bayesjudge._progress.show_progress(None) for
    # study, fit and report alike: a bar in a terminal, none in CI, pipes or tests.
    import bayesjudge._progress as progress

    args = ["study", "human-vs-judge", "--reps", "20", "--set", "m=100", "--no-save"]
    monkeypatch.setattr(progress, "interactive", lambda: True)
    code, _, err = run_cli(args)
    assert code == 0 and "human-vs-judge [" in err
    code, _, err = run_cli([*args, "--no-progress"])
    assert code == 0 and err == ""
    monkeypatch.setattr(progress, "interactive", lambda: False)
    code, _, err = run_cli(args)
    assert code == 0 and err == ""


def test_huge_seed_and_atomic_save(tmp_path, run_cli):
    # --seed 2**70 ran but the netCDF attrs could not hold it; the four files are written
    # together into a new folder (no staging folder left beside it).
    seed = str(2**70)
    out_dir = tmp_path / "deep" / "out"
    args = ["study", "human-vs-judge", "--reps", "20", "--set", "m=100", "--seed", seed]
    code, out, err = run_cli([*args, "--out", str(out_dir)])
    assert code == 0, err
    assert f"seed {seed} (repeat with --seed {seed})" in out
    assert sorted(p.name for p in out_dir.iterdir()) == [
        "human_vs_judge.csv",
        "human_vs_judge.json",
        "human_vs_judge.nc",
        "human_vs_judge.png",
    ]
    assert [p.name for p in (tmp_path / "deep").iterdir()] == ["out"]
    assert json.loads((out_dir / "human_vs_judge.json").read_text())["random_seed"] == 2**70
