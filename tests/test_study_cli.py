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

from bayesjudge.cli import main
from bayesjudge.studies import STUDIES, allocation_length, run_study


def _run(args, capsys):
    try:
        code = main(args)
    except SystemExit as exc:  # argparse's own errors exit here
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("bayesjudge: error:")
    return lines[0]


def test_registry_names_importable_modules_with_run_and_plot():
    # All five studies of issue 4; each module has run(*, reps, random_seed, progress, ...)
    # with defaults and a plot(table) function, and a one-line summary for --list.
    assert set(STUDIES) == {
        "allocation-length",
        "coverage",
        "distribution-shift",
        "human-vs-judge",
        "comparison",
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


def test_list_describes_every_study(capsys):
    code, out, err = _run(["study", "--list"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == list(STUDIES)
    assert "Algorithm 1" in out and "human-only" in out


def test_study_prints_and_saves_what_the_api_computes(tmp_path, capsys):
    out_dir = tmp_path / "alloc"
    args = ["study", "allocation-length", "--reps", "200", "--seed", "3", "--out", str(out_dir)]
    code, out, err = _run(args, capsys)
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


def test_csv_format_is_the_tidy_table_on_stdout(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["study", "human-vs-judge", "--quick", "--seed", "9", "--format", "csv", "--no-save"]
    code, out, err = _run(args, capsys)
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out))
    expected = run_study("human-vs-judge", reps=200, random_seed=9).to_frame()
    pd.testing.assert_frame_equal(frame, expected, check_exact=False, rtol=1e-12)
    assert list(tmp_path.iterdir()) == []  # --no-save writes nothing


def test_default_out_dir_and_progress(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(["study", "human-vs-judge", "--reps", "50", "--progress"], capsys)
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
def test_mistakes_print_one_line_and_exit_2(args, match, capsys):
    code, _, err = _run(args, capsys)
    assert code == 2
    assert match in _one_error_line(err)


def test_set_passes_study_options(capsys):
    # VALUE is JSON (numbers, [lists], null) or a comma list.
    args = ["study", "allocation-length", "--reps", "50", "--no-save", "--format", "csv"]
    args += ["--set", "p=0.5,0.7", "--set", "m=[100]", "--set", "n=1000", "--set", "m-pilot=20"]
    code, out, err = _run(args, capsys)
    assert code == 0, err
    frame = pd.read_csv(io.StringIO(out))
    expected = allocation_length.run(reps=50, p=[0.5, 0.7], m=[100], n=1000, m_pilot=20)
    pd.testing.assert_frame_equal(frame, expected.to_frame(), check_exact=False, rtol=1e-12)


def test_out_must_be_a_folder(tmp_path, capsys):
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    code, _, err = _run(["study", "human-vs-judge", "--out", str(a_file)], capsys)
    assert code == 2 and "not a folder" in _one_error_line(err)


def test_registered_but_missing_module(capsys, monkeypatch):
    monkeypatch.setitem(STUDIES, "ghost", "bayesjudge.studies.no_such_module")
    code, _, err = _run(["study", "ghost"], capsys)
    assert code == 2 and "not installed" in _one_error_line(err)
    code, out, err = _run(["study", "--list"], capsys)
    assert code == 0, err
    assert "ghost" in out and "(not installed in this version)" in out
