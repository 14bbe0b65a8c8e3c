"""Hostile command lines for K-category labels: each test failed before the fix it guards."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest


def _tables(folder, test_labels, cal_judge, cal_human):
    test, cal = folder / "test.csv", folder / "cal.csv"
    pd.DataFrame({"judge": test_labels}).to_csv(test, index=False)
    pd.DataFrame({"judge": cal_judge, "human": cal_human}).to_csv(cal, index=False)
    return ["--test", str(test), "--calibration", str(cal)]


def test_two_grade_rubric_error_names_categories(run_cli, one_error_line, tmp_path):
    # A 1/2 rubric has two classes per column, so it is read as correct/incorrect and '2' is
    # refused; before, the message only said "Pass positive=...", never --categories.
    files = _tables(tmp_path, ["1", "2", "2", "1"] * 10, ["1", "2"] * 10, ["1", "1", "2", "2"] * 5)
    code, _, err = run_cli(["estimate", *files])
    line = one_error_line(err)
    assert code == 2
    assert "'2' (20 rows)" in line  # the binary reader's own message is kept
    assert line.endswith("name them in order with --categories 1,2.")
    code, out, err = run_cli(["estimate", *files, "--categories", "1,2", "--json"])
    assert code == 0, err
    assert json.loads(out)["settings"]["categories"] == ["1", "2"]  # a CSV's labels are text


def test_look_alike_labels_get_no_example_categories(run_cli, one_error_line, tmp_path):
    # '1' and '1.0' cannot both be categories: the hint names --categories without an example.
    files = _tables(tmp_path, ["1.0", "2", "2", "1"] * 10, ["1", "2"] * 10, ["1", "2"] * 10)
    code, _, err = run_cli(["estimate", *files])
    line = one_error_line(err)
    assert code == 2
    assert "the labels ['1', '1.0', '2'] are categories" in line
    assert line.endswith("with --categories.")


@pytest.mark.parametrize("labels", [["yes", "no"], ["1", "0"]])
def test_binary_labels_keep_the_binary_message(run_cli, one_error_line, tmp_path, labels):
    # recognised binary labels with a bad --positive: no --categories hint is appended
    files = _tables(tmp_path, labels * 10, labels * 5, labels[::-1] * 5)
    code, _, err = run_cli(["estimate", *files, "--positive", "maybe"])
    assert code == 2
    assert "--categories 1,2" not in one_error_line(err)


def test_items_without_an_id_are_not_a_repeated_id(run_cli, one_error_line, tmp_path):
    # Before: two rows with a blank --item id were refused as "1 item ids repeat ([None])";
    # the counting itself reads a blank id as an item that matches nothing.
    files = _tables(tmp_path, ["A", "B", "C", "A"] * 10, ["A", "B", "C"] * 5, ["A", "B", "C"] * 5)
    ids = [None, None, *range(38)]
    pd.DataFrame({"judge": ["A", "B", "C", "A"] * 10, "item": ids}).to_csv(files[1], index=False)
    code, out, err = run_cli(["estimate", *files, "--item", "item", "--json"])
    assert code == 0, err
    assert sum(r["verdicts"] for r in json.loads(out)["results"]) == 40
    # a real repeat is still refused, blanks or not
    ids[4] = 0  # ids[2] is 0 too
    pd.DataFrame({"judge": ["A", "B", "C", "A"] * 10, "item": ids}).to_csv(files[1], index=False)
    code, _, err = run_cli(["estimate", *files, "--item", "item"])
    assert code == 2
    assert "1 item ids repeat in --test" in one_error_line(err)


def test_categories_with_surrounding_spaces_are_refused_up_front(run_cli, one_error_line, tmp_path):
    # Before: the JSON form took " A" (the module doc and docs/cli.md said it was for labels
    # with surrounding spaces), then the tables' stripped "A" was "not among --categories".
    files = _tables(tmp_path, ["A", "tie", "B"] * 10, ["A", "tie", "B"] * 5, ["A", "tie", "B"] * 5)
    code, _, err = run_cli(["estimate", *files, "--categories", '[" A", "tie", "B"]'])
    assert code == 2
    assert "so [' A'] would match nothing; write ['A']" in one_error_line(err)


def _rubric(folder):
    test, cal = folder / "test.parquet", folder / "cal.parquet"
    grades = [1, 2, 3, 4, 5]
    pd.DataFrame({"judge": grades * 20}).to_parquet(test)
    pd.DataFrame({"judge": grades * 6, "human": grades[1:] + grades[:1] + grades * 5}).to_parquet(
        cal
    )
    return ["--test", str(test), "--calibration", str(cal)]


def test_numeric_categories_and_scores_are_named_by_value(run_cli, one_error_line, tmp_path):
    # Parquet int labels: --categories 1.0 names the grade 1, so --scores 1.0=... must too
    # (before: "no score for [1]; ['1.0'] not a category"), and two spellings of one grade
    # are one category named twice (before: "categories must be unique; [1] repeat in [1, 1,
    # ...]", naming neither spelling the user wrote).
    files = _rubric(tmp_path)
    scores = "1=1,2=2,3=3,4=4,5=5"
    code, out, err = run_cli(["estimate", *files, "--scores", scores, "--json"])
    assert code == 0, err
    reference = json.loads(out)["groups"][0]["score"]
    code, out, err = run_cli(["estimate", *files, "--categories", "1.0,2,3,4,5", "--scores",
                              "1.0=1,2=2,3=3,4=4,5=5", "--json"])  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["groups"][0]["score"] == reference
    code, _, err = run_cli(["estimate", *files, "--categories", "1,01,2,3,4,5"])
    assert code == 2
    assert "--categories ['1', '01'] name one label" in one_error_line(err)
    code, _, err = run_cli(["estimate", *files, "--scores", "1.0=1,1=1,2=2,3=3,4=4,5=5"])
    assert code == 2
    assert "['1.0', '1'] are one number" in one_error_line(err)


def test_calibration_file_without_labels_says_none_was_counted(run_cli, tmp_path):
    # Before: "--calibration is required" alone, though --calibration was passed (every one
    # of its rows lacks a human label and was dropped, as the warning above it says).
    files = _tables(tmp_path, ["A", "B", "C"] * 10, ["A", "B", "C"] * 5, [None] * 15)
    code, _, err = run_cli(["estimate", *files])
    assert code == 2
    error = [line for line in err.splitlines() if line.startswith("bayesjudge: error:")]
    assert len(error) == 1 and "Traceback" not in err
    assert "none was counted: rows without a judge or human label are dropped" in error[0]
    assert "Dropped 15 of 15 rows of the calibration table" in err  # the warning before it


def test_an_id_column_taken_for_the_verdicts_is_one_error_line(run_cli, one_error_line, tmp_path):
    answers = [f"answer {i}" for i in range(300)]
    files = _tables(tmp_path, answers, ["A", "B", "C"] * 5, ["A", "B", "C"] * 5)
    code, _, err = run_cli(["estimate", *files])
    assert code == 2
    line = one_error_line(err)
    assert "the label columns hold 303 distinct values" in line
    assert line.endswith("name them with --categories.")


def test_no_categories_hint_on_an_unrelated_error(run_cli, one_error_line, tmp_path):
    files = _tables(tmp_path, ["1", "2", "2", "1"] * 10, ["1", "2"] * 10, ["1", "1", "2", "2"] * 5)
    code, _, err = run_cli(["estimate", *files, "--system", "nope"])
    assert code == 2
    line = one_error_line(err)
    assert "'nope'" in line and "--categories" not in line


def test_fit_and_report_share_a_calibration_table_without_a_system_column(
    run_cli, one_error_line, tmp_path
):
    # One calibration file for every system (no --system column) is the common layout. Before,
    # fit and report failed with their defaults ("Use calibration='shared' with
    # pool_over=['system']", the API's words); now the default is the shared model pooled over
    # the systems, as the API asks for, and the printed settings say why.
    rng = np.random.default_rng(5)
    cats = ["A", "tie", "B"]
    test = tmp_path / "test.csv"
    pd.DataFrame({"system": np.repeat(["x", "y"], 60), "judge": rng.choice(cats, 120)}).to_csv(
        test, index=False
    )
    human = np.repeat(cats, 20)
    judge = np.where(rng.random(60) < 0.8, human, rng.choice(cats, 60))
    cal = tmp_path / "cal.csv"
    pd.DataFrame({"judge": judge, "human": human}).to_csv(cal, index=False)
    base = ["--test", str(test), "--calibration", str(cal), "--system", "system"]
    small = ["--draws", "100", "--tune", "100", "--chains", "2", "--seed", "3", "--no-progress"]
    code, out, err = run_cli(["fit", *base, *small])
    assert code == 0, err
    assert "calibration shared pooled over system (the default here: the calibration table " \
        "has no --system column, so one set serves every system)" in out  # fmt: skip
    code, _, err = run_cli(["fit", *base, "--calibration-model", "separate"])
    assert code == 2 and "--calibration-model shared" in one_error_line(err)
    code, out, err = run_cli(["report", *base, *small, "--out", str(tmp_path / "r")])
    assert code == 0, err
    assert "Bayesian fit: mcmc (shared calibration, the default here" in out
    assert (tmp_path / "r" / "report.html").exists()


def test_one_column_for_two_roles_is_one_line(run_cli, one_error_line, tmp_path):
    # --item naming the --system column leaked polars' "group_by keys contained duplicate
    # output name 'system'" for K-category tables.
    test, cal = tmp_path / "t.csv", tmp_path / "c.csv"
    pd.DataFrame({"system": ["a", "b"] * 20, "judge": ["A", "tie", "B", "A"] * 10}).to_csv(
        test, index=False
    )
    pd.DataFrame({"judge": ["A", "tie", "B"] * 5, "human": ["A", "tie", "B"] * 5}).to_csv(
        cal, index=False
    )
    for command in ("estimate", "compare"):
        code, _, err = run_cli([command, "--test", str(test), "--calibration", str(cal),
                                "--system", "system", "--item", "system",
                                "--scores", "A=1,tie=0.5,B=0"])  # fmt: skip
        assert code == 2
        assert one_error_line(err).endswith(
            "--system and --item name the same column 'system'; each role needs its own column."
        )
