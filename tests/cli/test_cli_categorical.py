"""``bayesjudge estimate|fit|report`` with K-category label columns (--categories, --scores).

Every command runs in-process through ``bayesjudge.cli.main``. The tables are written from
fixed count arrays (no random draws), so the counts the command reads are checked against
the arrays, and every number it prints against ``bayesjudge.estimate`` (``bayesjudge.fit``)
of the same counts, exactly (JSON, CSV) or to the printed digits (tables).
"""

import json
import re
import warnings
from io import StringIO

import numpy as np
import pandas as pd
import pytest

import bayesjudge as bj
from bayesjudge._text import fmt_interval, fmt_number
from bayesjudge.cli._common import cli_words
from bayesjudge.data import CategoricalCounts

PREFERENCE = ["A", "tie", "B"]
WIN_RATE = {"A": 1.0, "tie": 0.5, "B": 0.0}
#: Test verdict counts per system over PREFERENCE, and calibration counts (rows = truth).
PREF_TEST = {"x": [132, 83, 85], "y": [81, 72, 147]}
PREF_CAL = {
    "x": [[32, 6, 2], [4, 30, 6], [2, 6, 32]],
    "y": [[30, 8, 2], [5, 31, 4], [1, 7, 32]],
}
GRADES = ["1", "2", "3", "4", "5"]
#: A 1-5 rubric in two strata of one system: test counts and near-diagonal calibration.
RUBRIC_TEST = {"easy": [5, 10, 30, 60, 45], "hard": [30, 45, 40, 20, 5]}
RUBRIC_CAL = {
    "easy": [[8, 2, 0, 0, 0], [1, 9, 2, 0, 0], [0, 2, 10, 2, 0], [0, 0, 2, 11, 1], [0, 0, 0, 2, 9]],
    "hard": [[9, 1, 0, 0, 0], [2, 8, 1, 0, 0], [0, 1, 9, 2, 0], [0, 0, 1, 9, 1], [0, 0, 0, 1, 8]],
}


def _rows(group_column, group, labels, test, cal, human="human"):
    """Item rows of one group: the test rows (judge) and the calibration rows (judge, human)."""
    tests = [
        {group_column: group, "judge": c}
        for c, n in zip(labels, test, strict=True)
        for _ in range(n)
    ]
    cals = [
        {group_column: group, "judge": v, human: t}
        for t, row in zip(labels, cal, strict=True)
        for v, n in zip(labels, row, strict=True)
        for _ in range(n)
    ]
    return tests, cals


def _write(folder, group_column, labels, test_counts, cal_counts, name):
    tests, cals = [], []
    for group in test_counts:
        t, c = _rows(group_column, group, labels, test_counts[group], cal_counts[group])
        tests += t
        cals += c
    test_csv, cal_csv = folder / f"{name}_test.csv", folder / f"{name}_cal.csv"
    pd.DataFrame(tests).to_csv(test_csv, index=False)
    pd.DataFrame(cals).to_csv(cal_csv, index=False)
    return str(test_csv), str(cal_csv)


@pytest.fixture
def preference(tmp_path):
    """(test, calibration) CSV paths of the K = 3 preference tables, systems in ``system``."""
    return _write(tmp_path, "system", PREFERENCE, PREF_TEST, PREF_CAL, "pref")


@pytest.fixture
def rubric(tmp_path):
    """(test, calibration) CSV paths of the K = 5 rubric, strata in ``level``."""
    return _write(tmp_path, "level", GRADES, RUBRIC_TEST, RUBRIC_CAL, "rubric")


def _estimate_json(run_cli, tables, *extra):
    """Run ``estimate --json`` on (test, calibration); calibration None: --test alone."""
    calibration = [] if tables[1] is None else ["--calibration", tables[1]]
    code, out, err = run_cli(["estimate", "--test", tables[0], *calibration, *extra, "--json"])
    assert code == 0, err
    return json.loads(out), err


def _check_against_api(payload, result, categories):
    """Every share, bound and score of the CLI's JSON equals the API's result exactly."""
    rows = payload["results"]
    assert len(rows) == result.sizes["system"] * result.sizes["stratum"] * len(categories)
    for row in rows:
        at = {"system": row["system"], "stratum": row["stratum"], "category": row["category"]}
        expected = [
            float(result["estimate"].sel(at)),
            float(result["ci"].sel({**at, "ci_bound": "lower"})),
            float(result["ci"].sel({**at, "ci_bound": "upper"})),
            float(result["p_hat"].sel(at)),
        ]
        got = [row["estimate"], row["lower"], row["upper"], row["p_hat"]]
        # JSON writes NaN (no estimate) as null
        assert [np.nan if v is None else v for v in got] == pytest.approx(
            expected, rel=0, abs=0, nan_ok=True
        )
    for group in payload["groups"]:
        at = {"system": group["system"], "stratum": group["stratum"]}
        if "score" in result:
            assert group["score"] == float(result["score"].sel(at))
            assert group["score_lower"] == float(
                result["score_ci"].sel({**at, "ci_bound": "lower"})
            )
            assert group["score_upper"] == float(
                result["score_ci"].sel({**at, "ci_bound": "upper"})
            )
        assert group["sigma_min"] == float(result["sigma_min"].sel(at))


# --- estimate ------------------------------------------------------------------------------------


def test_preference_estimate_json_equals_the_api(run_cli, preference):
    payload, err = _estimate_json(
        run_cli,
        preference,
        "--system",
        "system",
        "--categories",
        "A,tie,B",
        "--scores",
        "A=1,tie=0.5,B=0",
    )
    assert err == ""
    counts = CategoricalCounts.from_frames(*preference, system="system", categories=PREFERENCE)
    # The tables hold exactly the counts they were written from.
    for system in PREF_TEST:
        assert counts.test.sel(system=system).values.ravel().tolist() == PREF_TEST[system]
        cal = counts.calibration.sel(system=system).squeeze("stratum").values.tolist()
        assert cal == PREF_CAL[system]
    result = bj.estimate(counts, scores=WIN_RATE)
    assert payload["settings"]["categories"] == PREFERENCE
    assert payload["settings"]["categories_source"] == "given"
    assert payload["settings"]["method"] == "delta"
    _check_against_api(payload, result, PREFERENCE)
    verdicts = {(r["system"], r["category"]): r["verdicts"] for r in payload["results"]}
    assert verdicts[("y", "B")] == 147


def test_preference_table_prints_order_shares_and_score(run_cli, preference):
    args = [
        "estimate",
        "--test",
        preference[0],
        "--calibration",
        preference[1],
        "--system",
        "system",
        "--scores",
        "A=1,tie=0.5,B=0",
    ]
    code, out, err = run_cli(args)
    assert code == 0, err
    # Without --categories: the values found, sorted alphabetically, and said so.
    assert "categories (K = 3; sorted: numbers and numeric text by value, else " in out
    assert "): A, B, tie" in out
    counts = CategoricalCounts.from_frames(*preference, system="system")
    assert counts.categories == ["A", "B", "tie"]
    result = bj.estimate(counts, scores=WIN_RATE)
    lines = [line.split() for line in out.splitlines()]
    for system in ("x", "y"):
        for category in ("A", "B", "tie"):
            r = result.sel(system=system, category=category).squeeze("stratum")
            cell = fmt_interval(*r["ci"].values).split()
            row = [
                system,
                "all",
                category,
                str(int(counts.test.sel(system=system, category=category).squeeze())),
                fmt_number(float(r["p_hat"])),
                fmt_number(float(r["estimate"])),
                *cell,
            ]
            assert row in lines, (row, out)
        s = result.sel(system=system).squeeze("stratum")
        score_cells = [fmt_number(float(s["score"])), *fmt_interval(*s["score_ci"].values).split()]
        assert any(line[:2] == [system, "all"] and line[-3:] == score_cells for line in lines)
    assert "A = 1, tie = 0.5, B = 0" in out


def test_rubric_k5_numeric_text_labels_stay_text(run_cli, rubric):
    scores_json = json.dumps({g: float(g) for g in GRADES})
    payload, err = _estimate_json(
        run_cli, rubric, "--stratum", "level", "--scores", scores_json, "--ordered"
    )
    assert err == ""
    # CSV labels are text: the categories are the strings, sorted by their value.
    assert payload["settings"]["categories"] == GRADES
    assert payload["settings"]["categories_source"] == "inferred"
    assert payload["settings"]["ordered"] is True
    counts = CategoricalCounts.from_frames(*rubric, stratum="level", categories=GRADES)
    for level in RUBRIC_TEST:
        assert counts.test.sel(stratum=level).values.ravel().tolist() == RUBRIC_TEST[level]
    result = bj.estimate(counts, scores={g: float(g) for g in GRADES})
    _check_against_api(payload, result, GRADES)


def test_rubric_short_scores_and_bootstrap_equal_the_api(run_cli, rubric):
    payload, _ = _estimate_json(
        run_cli,
        rubric,
        "--stratum",
        "level",
        "--scores",
        "1=0,2=0.25,3=0.5,4=0.75,5=1",
        "--method",
        "bootstrap",
        "--seed",
        "7",
        "--n-resamples",
        "1000",
        "--alpha",
        "0.1",
    )
    counts = CategoricalCounts.from_frames(*rubric, stratum="level")
    scores = dict(zip(GRADES, [0, 0.25, 0.5, 0.75, 1], strict=True))
    result = bj.estimate(
        counts, method="bootstrap", scores=scores, random_seed=7, n_resamples=1000, alpha=0.1
    )
    assert payload["settings"]["method"] == "bootstrap"
    assert payload["settings"]["ci_prob"] == pytest.approx(0.9)
    _check_against_api(payload, result, GRADES)


def test_numeric_text_sorts_by_value(run_cli, tmp_path):
    labels = ["2", "10", "1"]
    test, cal = _write(
        tmp_path,
        "system",
        labels,
        {"s": [5, 6, 7]},
        {"s": [[5, 1, 0], [1, 5, 1], [0, 1, 5]]},
        "num",
    )
    payload, _ = _estimate_json(run_cli, (test, cal))
    assert payload["settings"]["categories"] == ["1", "2", "10"]


def test_random_design_one_table_with_strata_equals_the_api(run_cli, tmp_path):
    # 120 items per stratum; every fourth labelled by a human (all truths, mostly agreeing).
    truth = ["A", "tie", "B", "A", "B"] * 48
    judge = [t if i % 7 else {"A": "tie", "tie": "B", "B": "A"}[t] for i, t in enumerate(truth)]
    table = pd.DataFrame(
        {
            "level": ["easy", "hard"] * 120,
            "judge": judge,
            "human": [t if i % 4 < 2 else "" for i, t in enumerate(truth)],
        }
    )
    path = tmp_path / "one.csv"
    table.to_csv(path, index=False)
    code, out, err = run_cli(
        [
            "estimate",
            "--test",
            str(path),
            "--stratum",
            "level",
            "--json",
            "--calibration-design",
            "shared",
        ]
    )
    counts = CategoricalCounts.from_frames(str(path), stratum="level")
    assert counts.design == "random"
    result = bj.estimate(counts, calibration="shared")
    assert err == ""
    payload = json.loads(out)
    assert payload["settings"]["design"] == "random"
    _check_against_api(payload, result, ["A", "B", "tie"])
    assert code == 0


def test_shared_calibration_without_the_system_column(run_cli, preference, tmp_path):
    test, cal = preference
    one = pd.read_csv(cal, dtype=str)
    one = one[one["system"] == "x"].drop(columns="system")
    path = tmp_path / "one_cal.csv"
    one.to_csv(path, index=False)
    payload, _ = _estimate_json(run_cli, (test, str(path)), "--system", "system")
    tests = CategoricalCounts.from_frames(test, None, system="system", human=None)
    counts = tests.with_calibration_from(CategoricalCounts.from_frames(None, str(path)))
    result = bj.estimate(counts)
    _check_against_api(payload, result, ["A", "B", "tie"])
    x = [r for r in payload["results"] if r["system"] == "x"]
    y = [r for r in payload["results"] if r["system"] == "y"]
    # The one calibration set serves both systems.
    assert {g["m"] for g in payload["groups"]} == {120}
    assert [r["estimate"] for r in x] != [r["estimate"] for r in y]


def test_k2_with_categories_is_categorical_and_binary_stays_binary(
    run_cli, default_tables, tmp_path
):
    labels = ["no", "yes"]
    tables = _write(tmp_path, "system", labels, {"s": [30, 70]}, {"s": [[20, 5], [3, 22]]}, "k2")
    payload, _ = _estimate_json(run_cli, tables, "--categories", "no,yes")
    assert payload["settings"]["categories"] == labels
    counts = CategoricalCounts.from_frames(*tables, categories=labels)
    _check_against_api(payload, bj.estimate(counts), labels)
    # Binary verdicts yes/no and human labels 0/1: two values each, read as correct/incorrect.
    code, out, _ = run_cli(
        [
            "estimate",
            "--test",
            default_tables[0],
            "--calibration",
            default_tables[1],
            "--system",
            "model",
        ]
    )
    assert code == 0 and "Ĵ" in out and "categories" not in out


def test_parquet_integer_labels_take_categories_as_numbers(run_cli, tmp_path):
    test = pd.DataFrame({"judge": [1, 2, 3, 3, 2, 1, 3, 3]})
    cal = pd.DataFrame({"judge": [1, 2, 3, 1, 2, 3, 2], "human": [1, 2, 3, 1, 2, 3, 3]})
    test.to_parquet(tmp_path / "t.parquet")
    cal.to_parquet(tmp_path / "c.parquet")
    payload, _ = _estimate_json(
        run_cli,
        (str(tmp_path / "t.parquet"), str(tmp_path / "c.parquet")),
        "--categories",
        "3,2,1",
        "--scores",
        "1=1,2=2,3=3",
    )
    assert payload["settings"]["categories"] == [3, 2, 1]
    counts = CategoricalCounts.from_frames(test, cal, categories=[3, 2, 1])
    _check_against_api(payload, bj.estimate(counts, scores={1: 1, 2: 2, 3: 3}), [3, 2, 1])


# --- hostile input -------------------------------------------------------------------------------


def test_hostile_labels_are_escaped_on_the_terminal(run_cli, tmp_path):
    labels = ["$HOME", "a\nb", "<b>x</b>"]
    test, cal = _write(
        tmp_path,
        "system",
        labels,
        {"s": [20, 30, 40]},
        {"s": [[9, 1, 0], [1, 9, 1], [0, 1, 9]]},
        "hostile",
    )
    scores = json.dumps(dict(zip(labels, [1, 0.5, 0], strict=True)))
    code, out, err = run_cli(["estimate", "--test", test, "--calibration", cal, "--scores", scores])
    assert code == 0, err
    assert "a\\nb" in out and "$HOME" in out and "<b>x</b>" in out
    assert not re.search(r"a\nb", out)  # the newline of the label is never printed raw
    payload, _ = _estimate_json(run_cli, (test, cal), "--scores", scores)
    assert sorted(payload["settings"]["categories"]) == sorted(labels)


def test_numeric_lookalike_labels_are_refused(run_cli, one_error_line, tmp_path):
    test, cal = _write(
        tmp_path,
        "system",
        ["2", "02", "3"],  # not 1/0: those the binary reader takes as correct/incorrect
        {"s": [5, 5, 5]},
        {"s": [[3, 1, 0], [1, 3, 1], [0, 1, 3]]},
        "look",
    )
    code, _, err = run_cli(["estimate", "--test", test, "--calibration", cal])
    assert code == 2
    line = one_error_line(err)
    assert "'2' and '02'" in line and "look alike" in line


def test_a_binary_column_with_one_stray_value_stays_binary(run_cli, one_error_line, tmp_path):
    # "1", "1.0" (both correct to the binary reader) and a stray "maybe": the binary reader's
    # error names "maybe", rather than three look-alike categories.
    test, cal = _write(
        tmp_path,
        "system",
        ["1", "1.0", "maybe"],
        {"s": [5, 5, 5]},
        {"s": [[3, 1, 0], [1, 3, 1], [0, 1, 3]]},
        "stray",
    )
    code, _, err = run_cli(["estimate", "--test", test, "--calibration", cal])
    assert code == 2
    assert "labels that are not recognised: 'maybe'" in one_error_line(err)


def test_label_outside_categories_lists_found_and_allowed(run_cli, one_error_line, preference):
    code, _, err = run_cli(
        ["estimate", "--test", preference[0], "--calibration", preference[1], "--categories", "A,B"]
    )
    assert code == 2
    line = one_error_line(err)
    assert "['tie'], not among --categories ['A', 'B']" in line
    assert "Values found: ['A', 'B', 'tie']" in line


def test_category_without_calibration_items_warns_and_gives_no_number(run_cli, tmp_path):
    # The judge says "tie" sometimes, but no calibration item is truly a tie.
    test, cal = _write(
        tmp_path,
        "system",
        PREFERENCE,
        {"s": [40, 20, 40]},
        {"s": [[18, 2, 0], [0, 0, 0], [1, 1, 18]]},
        "notie",
    )
    code, out, err = run_cli(
        ["estimate", "--test", test, "--calibration", cal, "--categories", "A,tie,B", "--json"]
    )
    assert code == 0
    assert err.startswith("bayesjudge: warning: A true category has no calibration items")
    payload = json.loads(out)
    assert all(r["estimate"] is None for r in payload["results"])
    assert all(r["lower"] == 0.0 and r["upper"] == 1.0 for r in payload["results"])


def test_a_singular_judge_gives_json_with_nulls(run_cli, tmp_path):
    # Regression: the infinite error amplification of a singular confusion matrix crashed
    # --json ("Out of range float values are not JSON compliant: inf").
    test, cal = _write(
        tmp_path,
        "system",
        PREFERENCE,
        {"s": [40, 20, 40]},
        {"s": [[10, 0, 10], [0, 10, 0], [10, 0, 10]]},  # rows A and B are the same
        "singular",
    )
    code, out, err = run_cli(
        ["estimate", "--test", test, "--calibration", cal, "--categories", "A,tie,B", "--json"]
    )
    assert code == 0, err
    assert "confusion matrix is singular" in err
    payload = json.loads(out)
    assert [g["amplification"] for g in payload["groups"]] == [None]
    assert all(r["estimate"] is None for r in payload["results"])


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--categories", "A,tie,B", "--positive", "A"], "K = 3 categories"),
        (["--positive", "A"], "must hold 'a' and at most one other value"),
        (["--scores", "A=1,tie=0.5"], "no score for ['B']"),
        (["--scores", "A=1,tie=0.5,B=0,C=2"], "['C'] not a category"),
        (["--scores", "A=1,tie=nan,B=0"], "must be a finite number"),
        (["--scores", "A=1,tie=inf,B=0"], "must be a finite number"),
        (["--scores", "A=1,tie=,B=0"], "must be a finite number"),
        (["--scores", "A=1,A=0,tie=1,B=0"], "each category once"),
        (["--scores", "A:1,tie=0.5,B=0"], "CATEGORY=VALUE"),
        (["--scores", '{"A": 1, "tie": true, "B": 0}'], "finite JSON number"),
        (["--scores", '{"A": 1, "tie": NaN, "B": 0}'], "finite JSON number"),
        (["--scores", '{"A": 1,'], "not a JSON object"),
        (["--categories", "A,,B"], "every category needs a label"),
        (["--categories", "A,A,tie,B"], "each category once"),
        (["--categories", '["A", 1]'], "list of strings"),
        (["--method", "lang-reiczigel"], "K-category verdicts take --method delta"),
        (["--estimand", "test-set"], "--estimand test-set is not available"),
        (["--item", "system"], "item ids repeat"),
        (["--item", "system", "--repeats", "epoch"], "not supported for K-category"),
        (["--item", "judge"], "--judge and --item name the same column 'judge'"),
    ],
)
def test_bad_options_are_one_error_line(run_cli, one_error_line, preference, extra, words):
    code, out, err = run_cli(
        ["estimate", "--test", preference[0], "--calibration", preference[1], *extra]
    )
    assert code == 2
    assert words in one_error_line(err), err
    assert out == ""


def test_binary_labels_refuse_categorical_options(run_cli, one_error_line, default_tables):
    base = ["--test", default_tables[0], "--calibration", default_tables[1]]
    for args, words in (
        (["estimate", *base, "--scores", "yes=1,no=0"], "--scores is for K-category labels"),
        (["estimate", *base, "--method", "delta"], "a method of K-category verdicts"),
        (["estimate", *base, "--ordered"], "--ordered is for K-category labels"),
        (["fit", *base, "--confusion", "ordinal"], "a model of K-category verdicts"),
        (["report", *base, "--confusion", "symmetric", "--out", "x"], "K-category verdicts"),
    ):
        code, _, err = run_cli(args)
        assert code == 2
        assert words in one_error_line(err)


def test_scores_with_json_names_holding_separators(run_cli, tmp_path):
    labels = ["A,1", "B=2", "tie"]
    test, cal = _write(
        tmp_path,
        "system",
        labels,
        {"s": [20, 30, 40]},
        {"s": [[9, 1, 0], [1, 9, 1], [0, 1, 9]]},
        "sep",
    )
    payload, _ = _estimate_json(
        run_cli,
        (test, cal),
        "--categories",
        '["tie", "A,1", "B=2"]',
        "--scores",
        '{"A,1": 1, "B=2": 0, "tie": 0.5}',
    )
    assert payload["settings"]["categories"] == ["tie", "A,1", "B=2"]
    counts = CategoricalCounts.from_frames(test, cal, categories=["tie", "A,1", "B=2"])
    result = bj.estimate(counts, scores={"A,1": 1, "B=2": 0, "tie": 0.5})
    _check_against_api(payload, result, ["tie", "A,1", "B=2"])


# --- fit and report: option errors before any sampling ----------------------------------------


@pytest.mark.parametrize(
    "extra",
    [
        ["--prior-q0", "2,2"],
        ["--method", "exact"],
        ["--aggregate", "test"],
        ["--judge-better-than-chance"],
        ["--estimand", "test-set"],
    ],
)
def test_fit_refuses_binary_model_options(run_cli, one_error_line, preference, extra):
    code, _, err = run_cli(["fit", "--test", preference[0], "--calibration", preference[1], *extra])
    assert code == 2
    assert "options of the binary model" in one_error_line(err)


def test_report_refuses_gate_options(run_cli, one_error_line, preference, tmp_path):
    code, _, err = run_cli(
        [
            "report",
            "--test",
            preference[0],
            "--calibration",
            preference[1],
            "--system",
            "system",
            "--claim",
            "x",
            "--over",
            "y",
            "--out",
            str(tmp_path / "r"),
        ]
    )
    assert code == 2
    assert "for correct/incorrect verdicts only" in one_error_line(err)
    assert not (tmp_path / "r").exists()


def test_report_closed_forms_of_a_preference_table(run_cli, preference, tmp_path):
    out_dir = tmp_path / "report"
    code, out, err = run_cli(
        [
            "report",
            "--test",
            preference[0],
            "--calibration",
            preference[1],
            "--system",
            "system",
            "--categories",
            "A,tie,B",
            "--scores",
            "A=1,tie=0.5,B=0",
            "--method",
            "none",
            "--seed",
            "3",
            "--out",
            str(out_dir),
        ]
    )
    assert code == 0, err
    assert "categories (K = 3; in the order of --categories): A, tie, B" in out
    assert "2 systems × 1 stratum, stratified labelling design, no Bayesian fit" in out
    assert "seed 3" in out
    markdown = (out_dir / "report.md").read_text()
    assert (out_dir / "report.html").is_file()
    # The report's score of each system is the closed form of bj.estimate, to its digits.
    counts = CategoricalCounts.from_frames(*preference, system="system", categories=PREFERENCE)
    result = bj.estimate(counts, scores=WIN_RATE)
    for system in ("x", "y"):
        score = float(result["score"].sel(system=system).squeeze())
        assert f"{score:.3f}" in markdown


# --- fit and report with MCMC (numba compile + NUTS: slow tier, run by `make test-slow`) --------

SAMPLING = ["--draws", "300", "--tune", "300", "--chains", "2", "--seed", "5"]


@pytest.mark.slow
def test_fit_csv_and_table_equal_the_api_and_save_loads(run_cli, preference, tmp_path):
    from bayesjudge.models.categorical import load_categorical
    from bayesjudge.warnings import ConvergenceWarning

    save = tmp_path / "fit.nc"
    base = [
        "fit",
        "--test",
        preference[0],
        "--calibration",
        preference[1],
        "--system",
        "system",
        "--categories",
        "A,tie,B",
        "--scores",
        "A=1,tie=0.5,B=0",
        *SAMPLING,
    ]
    code, out, err = run_cli([*base, "--format", "csv", "--save", str(save)])
    assert code == 0, err
    frame = pd.read_csv(StringIO(out))
    counts = CategoricalCounts.from_frames(*preference, system="system", categories=PREFERENCE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # 2 x 300 draws: ESS < 400
        reference = bj.fit(counts, scores=WIN_RATE, draws=300, tune=300, chains=2, random_seed=5)
    summary = reference.summary(ci_prob=0.95)
    theta = frame[frame["variable"] == "theta"]
    assert len(theta) == 6
    for _, row in theta.iterrows():
        at = {"system": row["system"], "stratum": row["stratum"], "category": row["category"]}
        assert row["mean"] == float(summary["theta"].sel(at))
        assert row["eti_lower"] == float(summary["theta_ci"].sel({**at, "ci_bound": "lower"}))
    score = frame[frame["variable"] == "score"].set_index("system")["mean"]
    for system in ("x", "y"):
        assert score[system] == float(summary["score"].sel(system=system).squeeze())
    diff = frame[frame["variable"] == "score_difference"]
    compared = reference.compare(ci_prob=0.95)
    assert diff["system"].tolist() == ["x - y"]
    assert diff["prob_greater"].iloc[0] == float(compared["prob_greater"].squeeze())
    assert (frame["variable"] == "confusion").sum() == 2 * 9
    loaded = load_categorical(save)
    assert loaded.posterior["theta"].equals(reference.posterior["theta"])
    # The table prints the same numbers to its digits (the compiled model is reused).
    code, out, err = run_cli(base)
    assert code == 0
    assert "confusion free, calibration separate; scores A = 1, tie = 0.5, B = 0" in out
    lines = [line.split() for line in out.splitlines()]
    row = ["score", "x", "all", fmt_number(score["x"])]
    assert any(line[:4] == row for line in lines), out


@pytest.mark.slow
def test_fit_rubric_ordinal_confusion(run_cli, rubric):
    code, out, err = run_cli(
        [
            "fit",
            "--test",
            rubric[0],
            "--calibration",
            rubric[1],
            "--stratum",
            "level",
            "--confusion",
            "ordinal",
            "--scores",
            "1=1,2=2,3=3,4=4,5=5",
            *SAMPLING,
        ]
    )
    assert code == 0, err
    assert "an ordinal scale): 1, 2, 3, 4, 5" in out
    assert "confusion ordinal" in out
    assert sum(line.split()[:1] == ["score"] for line in out.splitlines()) == 2


@pytest.mark.slow
def test_report_with_a_fit(run_cli, preference, tmp_path):
    out_dir = tmp_path / "report"
    code, out, err = run_cli(
        [
            "report",
            "--test",
            preference[0],
            "--calibration",
            preference[1],
            "--system",
            "system",
            "--scores",
            "A=1,tie=0.5,B=0",
            *SAMPLING,
            "--out",
            str(out_dir),
        ]
    )
    assert code == 0, err
    assert "Bayesian fit: mcmc (separate calibration, free confusion)" in out
    assert (out_dir / "report.md").is_file() and (out_dir / "report.html").is_file()


def test_item_ids_match_labelled_items_among_the_judged(run_cli, tmp_path):
    # 60 judged items; humans labelled items 0, 3, 6, ... (their ids are among the judged ones).
    truth = ["A", "tie", "B", "B", "A"] * 12
    judge = [t if i % 5 else {"A": "tie", "tie": "B", "B": "A"}[t] for i, t in enumerate(truth)]
    test = pd.DataFrame({"id": [f"q{i}" for i in range(60)], "judge": judge})
    labelled = test.iloc[::3].assign(human=[truth[i] for i in range(0, 60, 3)])
    test.to_csv(tmp_path / "t.csv", index=False)
    labelled.to_csv(tmp_path / "c.csv", index=False)
    tables = (str(tmp_path / "t.csv"), str(tmp_path / "c.csv"))
    code, out, err = run_cli(
        ["estimate", "--test", tables[0], "--calibration", tables[1], "--item", "id", "--json"]
    )
    assert code == 0
    with pytest.warns(bj.warnings.DesignWarning) as caught:
        counts = CategoricalCounts.from_frames(*tables, item="id")
    assert counts.design == "random"
    assert int(counts.test.sum()) == 40 and int(counts.calibration.sum()) == 20  # once each
    # The CLI shows the same warning as one line.
    assert err == f"bayesjudge: warning: {cli_words(str(caught[0].message))}\n"
    payload = json.loads(out)
    assert payload["settings"]["design"] == "random"
    _check_against_api(payload, bj.estimate(counts), ["A", "B", "tie"])


# --- harness logs and --gold with K categories ------------------------------------------------

#: Item ids of the JSON Lines logs: ids that look like numbers ("1" and "01" are two items), a
#: "$", HTML and a newline; the systems' names hold HTML and a "$".
LOG_IDS = ["1", "01", "a$b", "<b>x</b>", "q\nz"] + [f"i{i}" for i in range(35)]
LOG_SYSTEMS = ["x<i>", "$y"]


def _truth(i: int) -> str:
    return PREFERENCE[(i * 7) % 3]


def _verdict(i: int, system: int) -> str:
    """A judge right on 4 of 5 items, its errors moving the truth one step round the cycle."""
    truth = _truth(i)
    return truth if (i + system) % 5 else PREFERENCE[(PREFERENCE.index(truth) + 1) % 3]


def _write_log(folder, labelled=range(0, 40, 2), gold_judge=False):
    """A JSON Lines log of two systems (keys id, model, verdict) and a gold CSV.

    The gold file labels the items ``labelled`` of both systems (random design, column
    system) or, with ``gold_judge``, 30 items of its own with the judge's verdicts and no
    system column (a separate calibration set shared by the systems).
    """
    log = folder / "verdicts.jsonl"
    records = [
        {"id": item, "model": system, "verdict": _verdict(i, s)}
        for s, system in enumerate(LOG_SYSTEMS)
        for i, item in enumerate(LOG_IDS)
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    if gold_judge:
        rows = [
            {"item": f"cal-{i}", "judge": _verdict(i, 0), "human": _truth(i)} for i in range(30)
        ]
    else:
        rows = [
            {"item": LOG_IDS[i], "system": system, "human": _truth(i)}
            for system in LOG_SYSTEMS
            for i in labelled
        ]
    gold = folder / "gold.csv"
    pd.DataFrame(rows).to_csv(gold, index=False)
    return str(log), str(gold)


LOG_OPTIONS = ["--item", "id", "--judge", "verdict", "--system", "model"]


def test_jsonl_log_and_gold_labels_of_judged_items_are_the_random_design(run_cli, tmp_path):
    from bayesjudge.data.harness import join_gold, read_table

    log, gold = _write_log(tmp_path)
    code, out, err = run_cli(
        ["estimate", "--test", log, "--gold", gold, *LOG_OPTIONS, "--scores", "A=1,tie=0.5,B=0",
         "--json"]
    )  # fmt: skip
    assert code == 0, err
    payload = json.loads(out)
    assert payload["settings"]["design"] == "random"
    assert payload["settings"]["categories"] == ["A", "B", "tie"]  # sorted: none given
    # The API on the same files: the gold labels joined by id, the one table of the design.
    joined = join_gold(read_table(log, item="id", judge="verdict", system="model"), gold)
    assert joined.design == "random"
    counts = CategoricalCounts.from_frames(
        joined.test, system="system", item="item", design="random"
    )
    assert counts.design == "random"
    for group in payload["groups"]:
        # 20 of the 40 judged items labelled, each item counted once.
        assert (group["n"], group["m"]) == (20, 20)
    # "1" is labelled (index 0) and "01" (index 1) is not: ids are text, never merged.
    x = joined.test[joined.test["system"] == "x<i>"].set_index("item")["human"]
    assert x["1"] == _truth(0) and pd.isna(x["01"])
    _check_against_api(payload, bj.estimate(counts, scores=WIN_RATE), ["A", "B", "tie"])
    # The table escapes the names and states the design and the categories.
    code, out, err = run_cli(["estimate", "--test", log, "--gold", gold, *LOG_OPTIONS])
    assert code == 0, err
    assert "labelling design: random" in out and "categories (K = 3; sorted" in out
    assert "x<i>" in out and "$y" in out


def test_gold_as_a_calibration_set_shared_by_the_systems(run_cli, tmp_path):
    from bayesjudge.data.harness import join_gold, read_table

    log, gold = _write_log(tmp_path, gold_judge=True)
    payload, _ = _estimate_json(
        run_cli, (log, None), "--gold", gold, *LOG_OPTIONS, "--categories", "A,tie,B"
    )
    assert payload["settings"]["design"] == "stratified"
    joined = join_gold(read_table(log, item="id", judge="verdict", system="model"), gold)
    assert joined.design == "stratified"
    tests = CategoricalCounts.from_frames(
        joined.test, system="system", item="item", human=None, categories=PREFERENCE
    )
    labelled = CategoricalCounts.from_frames(
        None, joined.calibration, categories=PREFERENCE, design="stratified"
    )
    counts = tests.with_calibration_from(labelled)
    assert counts.calibration_shared_over == ("system",)
    assert [g["m"] for g in payload["groups"]] == [30, 30]
    _check_against_api(payload, bj.estimate(counts), PREFERENCE)


def test_an_inspect_log_with_partial_credit_is_read_as_three_categories(run_cli, tmp_path):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "references"))
    from harness_logs import INSPECT_IDS, write_inspect_log

    from bayesjudge.data.harness import join_gold, read_table

    # Inspect's own eval() and log writer; its grader gives "P" (partial) for question 2.
    log = str(write_inspect_log(tmp_path, partial=True, epochs=1))
    table = read_table(log, scorer="model_graded_qa")
    verdicts = dict(zip(table["item"], table["judge"], strict=True))
    assert set(verdicts.values()) == {"C", "I", "P"}
    # Humans labelled seven of the ten answers; ids as the log has them ("007", a newline).
    labelled = [str(i) for i in INSPECT_IDS[:7]]
    human = {item: verdicts[item] for item in labelled} | {"007": "P"}
    gold = tmp_path / "gold.csv"
    pd.DataFrame({"item": list(human), "human": list(human.values())}).to_csv(gold, index=False)
    scores = "I=0,P=0.5,C=1"
    args = ["--scorer", "model_graded_qa", "--gold", str(gold), "--categories", "I,P,C"]
    payload, _ = _estimate_json(run_cli, (log, None), *args, "--scores", scores)
    joined = join_gold(table, gold)
    counts = CategoricalCounts.from_frames(
        joined.test, system="system", item="item", design=joined.design, categories=["I", "P", "C"]
    )
    assert joined.design == "random" and payload["settings"]["design"] == "random"
    assert [(g["n"], g["m"]) for g in payload["groups"]] == [(3, 7)]
    _check_against_api(
        payload, bj.estimate(counts, scores={"I": 0, "P": 0.5, "C": 1}), ["I", "P", "C"]
    )


def test_numeric_verdicts_match_a_csv_gold_by_value(run_cli, tmp_path):
    # A 1-5 grade as JSON numbers in the log, as text in the CSV gold file.
    log = tmp_path / "grades.jsonl"
    grades = [1 + (i * 3) % 5 for i in range(50)]
    log.write_text("".join(json.dumps({"item": str(i), "judge": g}) + "\n"
                           for i, g in enumerate(grades)))  # fmt: skip
    gold = tmp_path / "gold.csv"
    gold.write_text("item,human\n" + "".join(f"{i},{grades[i]}\n" for i in range(0, 50, 2)))
    payload, _ = _estimate_json(run_cli, (str(log), None), "--gold", str(gold))
    assert payload["settings"]["categories"] == [1, 2, 3, 4, 5]
    given, _ = _estimate_json(
        run_cli, (str(log), None), "--gold", str(gold), "--categories", "1,2,3,4,5"
    )
    assert given["results"] == payload["results"]
    table = pd.DataFrame({"judge": grades, "human": [g if i % 2 == 0 else None
                                                     for i, g in enumerate(grades)]})  # fmt: skip
    counts = CategoricalCounts.from_frames(table, design="random")
    _check_against_api(payload, bj.estimate(counts), [1, 2, 3, 4, 5])
    # lm-eval-like float scores 0, 0.5, 1 named as text by --categories.
    log.write_text("".join(json.dumps({"item": str(i), "judge": [0.0, 0.5, 1.0][i % 3]}) + "\n"
                           for i in range(30)))  # fmt: skip
    gold.write_text("item,human\n" + "".join(f"{i},{['0', '0.5', '1'][i % 3]}\n"
                                             for i in range(0, 30, 2)))  # fmt: skip
    payload, _ = _estimate_json(
        run_cli, (str(log), None), "--gold", str(gold), "--categories", "0,0.5,1"
    )
    assert payload["settings"]["categories"] == [0, 0.5, 1]
    assert [g["m"] for g in payload["groups"]] == [15]


def test_labels_beyond_64_bits_are_categories(run_cli, tmp_path):
    big = [10**30, 10**30 + 1, 10**30 + 2]
    log = tmp_path / "big.jsonl"
    log.write_text("".join(json.dumps({"item": str(i), "judge": big[i % 3]}) + "\n"
                           for i in range(12)))  # fmt: skip
    gold = tmp_path / "gold.csv"
    gold.write_text("item,human\n" + "".join(f"{i},{big[i % 3]}\n" for i in range(6)))
    payload, _ = _estimate_json(run_cli, (str(log), None), "--gold", str(gold))
    assert payload["settings"]["categories"] == big
    assert [(g["n"], g["m"]) for g in payload["groups"]] == [(6, 6)]


def test_a_csv_table_with_gold_labels_equals_the_api(run_cli, one_error_line, tmp_path):
    from bayesjudge.data.harness import join_gold

    table = pd.DataFrame({"id": [f"q{i}" for i in range(30)],
                          "verdict": [_verdict(i, 0) for i in range(30)]})  # fmt: skip
    gold = pd.DataFrame({"id": [f"q{i}" for i in range(0, 30, 2)],
                         "human": [_truth(i) for i in range(0, 30, 2)]})  # fmt: skip
    table.to_csv(tmp_path / "t.csv", index=False)
    gold.to_csv(tmp_path / "g.csv", index=False)
    paths = (str(tmp_path / "t.csv"), None)
    extra = ["--gold", str(tmp_path / "g.csv"), "--item", "id", "--judge", "verdict"]
    payload, _ = _estimate_json(run_cli, paths, *extra)
    joined = join_gold(table.astype(str), gold, item="id", judge="verdict")
    counts = CategoricalCounts.from_frames(joined.test, judge="verdict", item="id", design="random")
    assert [(g["n"], g["m"]) for g in payload["groups"]] == [(15, 15)]
    _check_against_api(payload, bj.estimate(counts), ["A", "B", "tie"])
    # An item judged twice in the table is refused, never counted twice.
    pd.concat([table, table.iloc[[1]]]).to_csv(tmp_path / "t.csv", index=False)
    code, _, err = run_cli(["estimate", "--test", paths[0], *extra])
    assert code == 2 and "['q1']" in one_error_line(err)


def _gold_case(folder, case):
    """Write a gold file for one hostile case; return (extra options, words of the error)."""
    gold = folder / "g.csv"
    frames = {
        "absent": ({"item": ["1", "99"], "system": "x<i>", "human": ["A", "B"]}, "'99'"),
        "duplicate": ({"item": ["1", "1"], "system": "x<i>", "human": ["A", "B"]},
                      "'1' more than once"),
        "zero-padded": ({"item": ["001"], "system": "x<i>", "human": ["A"]}, "'001'"),
        "outside": ({"item": ["1", "01"], "system": "x<i>", "human": ["A", "B\n<b>$C</b>"]},
                    "'B\\n<b>$C</b>'"),
        "lookalike": ({"item": ["1", "01", "a$b"], "system": "x<i>", "human": ["1", "01", "A"]},
                      "'1' and '01'"),
        "no system": ({"item": ["1"], "human": ["A"]}, "no 'system'"),
    }  # fmt: skip
    rows, words = frames[case]
    pd.DataFrame(rows).to_csv(gold, index=False)
    extra = ["--categories", "A,tie,B"] if case == "outside" else []
    return ["--gold", str(gold), *extra], words


@pytest.mark.parametrize(
    "case", ["absent", "duplicate", "zero-padded", "outside", "lookalike", "no system"]
)
def test_gold_mistakes_are_one_line_naming_the_values(run_cli, one_error_line, tmp_path, case):
    log, _ = _write_log(tmp_path)
    extra, words = _gold_case(tmp_path, case)
    code, out, err = run_cli(["estimate", "--test", log, *LOG_OPTIONS, *extra])
    assert code == 2 and out == ""
    assert words in one_error_line(err)


def test_log_mistakes_are_one_line(run_cli, one_error_line, tmp_path):
    log, gold = _write_log(tmp_path)
    epochs = tmp_path / "epochs.jsonl"
    records = [{"item": str(i // 2), "judge": "ABC"[i % 3], "try": 1 + i % 2} for i in range(20)]
    epochs.write_text("".join(json.dumps(r) + "\n" for r in records))
    cases = [
        (["--test", str(epochs), "--repeats", "try"], "in 2 epochs"),
        (["--test", log, "--gold", gold, *LOG_OPTIONS, "--calibration", gold],
         "leave out --calibration"),
        (["--test", log, *LOG_OPTIONS], "--calibration is required"),
    ]  # fmt: skip
    for args, words in cases:
        code, out, err = run_cli(["estimate", *args])
        assert code == 2 and out == ""
        assert words in one_error_line(err), err


# --- priors of the K-category fit ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--prior-theta", "1,2"], "--prior-theta 1,2: 2 numbers for K = 3 categories"),
        (["--prior-theta", "0,1,1"], "--prior-theta 0,1,1: CategoricalPriors.theta"),
        (["--prior-theta", "1e400"], "--prior-theta inf"),
        (["--prior-theta", "a"], "argument --prior-theta: must be numbers separated by commas"),
        (["--prior-confusion", "4,1,1"], "one number A or a pair D,O"),
        (["--prior-confusion", "1,1;1,1"], "a 2 x 2 matrix for K = 3 categories"),
        (["--prior-confusion", "1,1;1"], "as many numbers in every row"),
        (["--prior-confusion", "-1"], "--prior-confusion -1: CategoricalPriors.confusion"),
        (["--prior-confusion", "2", "--calibration-model", "hierarchical"], "hierarchical model"),
        (["--prior-confusion", "2", "--confusion", "ordinal"], "ordinal confusion is built"),
        (["--prior-q1", "2,2"], "--prior-q1: options of the binary model"),
        (["--prior-error-mean", "0,1"], "a prior of the hierarchical calibration model"),
        (["--prior-error-mean", "1"], "argument --prior-error-mean: must be two numbers"),
        (
            ["--prior-error-scale", "0", "--calibration-model", "hierarchical"],
            "--prior-error-scale 0: CategoricalPriors.error_logit_scale",
        ),
        (
            ["--prior-error-mean", "0,-1", "--calibration-model", "hierarchical"],
            "--prior-error-mean 0,-1: CategoricalPriors.error_logit_mean",
        ),
        (
            [
                "--prior-error-mean",
                "0,1",
                "--calibration-model",
                "hierarchical",
                "--confusion",
                "ordinal",
            ],
            "the ordinal confusion's hierarchy",
        ),
    ],
)
def test_bad_priors_name_the_option_and_the_forms(
    run_cli, one_error_line, preference, extra, words
):
    code, out, err = run_cli(["fit", "--test", preference[0], "--calibration", preference[1],
                              *extra])  # fmt: skip
    assert code == 2 and out == ""
    line = one_error_line(err)
    assert words in line
    if any(w in words for w in ("CategoricalPriors", "K = 3", "D,O", "every row")):
        assert "Accepted: " in line  # the accepted forms, beside the bad value


def test_binary_and_k_category_priors_are_refused_by_name(
    run_cli, one_error_line, default_tables, preference, tmp_path
):
    binary = ["--test", default_tables[0], "--calibration", default_tables[1]]
    k3 = ["--test", preference[0], "--calibration", preference[1]]
    out_dir = str(tmp_path / "r")
    cases = [
        (["fit", *binary, "--prior-confusion", "2"], "--prior-confusion: a prior of the K-cat"),
        (["fit", *binary, "--prior-theta", "1,2,3"], "θ takes A,B"),
        (["fit", *binary, "--prior-error-scale", "1"], "--prior-error-scale: a prior of the K"),
        (["report", *binary, "--prior-theta", "2", "--out", out_dir], "--prior-theta: priors"),
        (["report", *k3, "--prior-theta", "2", "--method", "none", "--out", out_dir],
         "--method none does not run"),
        (["report", *k3, "--prior-theta", "1,2", "--out", out_dir], "2 numbers for K = 3"),
    ]  # fmt: skip
    for args, words in cases:
        code, _, err = run_cli(args)
        assert code == 2
        assert words in one_error_line(err), err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("extra", "theta", "confusion"),
    [
        ([], None, None),  # the model's defaults
        (["--prior-theta", "2"], [2.0, 2.0, 2.0], None),
        (["--prior-theta", "3,1,0.5", "--prior-confusion", "4,1"], [3.0, 1.0, 0.5],
         1 + 3 * np.eye(3)),
        (["--prior-confusion", "5,1,1;1,4,1;1,2,3"], [1.0, 1.0, 1.0],
         np.array([[5, 1, 1], [1, 4, 1], [1, 2, 3]])),
    ],
)  # fmt: skip
def test_priors_reach_the_model_and_ctrl_c_writes_nothing(
    run_cli, monkeypatch, tmp_path, extra, theta, confusion
):
    import bayesjudge.models.fit as fit_module

    seen = {}

    def interrupted(counts, **options):  # Ctrl-C once the model's options are known
        seen.update(options, counts=counts)
        raise KeyboardInterrupt

    monkeypatch.setattr(fit_module, "fit", interrupted)
    log, gold = _write_log(tmp_path)
    save = tmp_path / "fit.nc"
    code, out, err = run_cli(
        ["fit", "--test", log, "--gold", gold, *LOG_OPTIONS, "--categories", "A,tie,B", *extra,
         "--save", str(save)]
    )  # fmt: skip
    assert code == 130
    assert err == "bayesjudge: interrupted; nothing was written\n" and out == ""
    assert not save.exists()
    assert isinstance(seen["counts"], CategoricalCounts) and seen["counts"].design == "random"
    from bayesjudge.models.categorical import CategoricalPriors

    default = CategoricalPriors()
    priors = seen["priors"]
    assert priors.theta_alpha(3).tolist() == (theta or default.theta_alpha(3).tolist())
    expected = default.confusion_alpha(3) if confusion is None else confusion
    assert np.array_equal(priors.confusion_alpha(3), expected)
    # The report's fit takes them too, and an interrupted report leaves no folder.
    out_dir = tmp_path / "report"
    code, _, err = run_cli(
        ["report", "--test", log, "--gold", gold, *LOG_OPTIONS, "--categories", "A,tie,B",
         *extra, "--out", str(out_dir)]
    )  # fmt: skip
    assert code == 130 and "nothing was written" in err
    assert not out_dir.exists()
    assert seen["priors"] == priors


@pytest.mark.slow
def test_fit_and_report_of_a_log_state_the_priors(run_cli, tmp_path):
    from bayesjudge.models.categorical import CategoricalPriors

    log, gold = _write_log(tmp_path)
    base = ["--test", log, "--gold", gold, *LOG_OPTIONS, "--categories", "A,tie,B",
            "--prior-theta", "2,1,1", "--prior-confusion", "4,1", *SAMPLING]  # fmt: skip
    save = tmp_path / "fit.nc"
    code, out, err = run_cli(["fit", *base, "--save", str(save)])
    assert code == 0, err
    assert "data: random labelling design" in out
    line = "priors: θ ~ Dirichlet(2, 1, 1); confusion rows ~ Dirichlet(4 on the diagonal, 1 off it)"
    assert line in out.splitlines()
    fitted = bj.load(save)
    assert fitted.config["priors"] == CategoricalPriors(theta=(2, 1, 1), confusion=(4, 1)).to_dict()
    out_dir = tmp_path / "report"
    code, out, err = run_cli(["report", *base, "--out", str(out_dir)])
    assert code == 0, err
    assert line in out.splitlines()
    markdown = (out_dir / "report.md").read_text()
    # The reproducibility table (Markdown-escaped JSON of the fit's priors).
    row = next(r for r in markdown.splitlines() if r.startswith("| priors |"))
    assert '"theta": \\[2.0, 1.0, 1.0\\]' in row and '"confusion": \\[4.0, 1.0\\]' in row
    # The methods section states them in words.
    assert f"**Priors of this fit**: {line.removeprefix('priors: ')}." in markdown


def test_hierarchical_priors_reach_the_model(run_cli, monkeypatch, preference):
    import bayesjudge.models.fit as fit_module
    from bayesjudge.models.categorical import CategoricalPriors

    seen = {}

    def interrupted(counts, **options):
        seen.update(options)
        raise KeyboardInterrupt

    monkeypatch.setattr(fit_module, "fit", interrupted)
    code, _, err = run_cli(
        ["fit", "--test", preference[0], "--calibration", preference[1], "--system", "system",
         "--calibration-model", "hierarchical", "--prior-theta", "2",
         "--prior-error-mean=-2,0.5", "--prior-error-scale", "0.25"]
    )  # fmt: skip
    assert code == 130, err
    assert seen["calibration"] == "hierarchical"
    assert seen["priors"] == CategoricalPriors(
        theta=2, error_logit_mean=(-2, 0.5), error_logit_scale=0.25
    )
