"""Label values the command line must refuse by name, and logs of systems judged apart (s10).

huntA F1: a JSON Lines verdict that is a list or object ended in "internal error: TypeError".
huntA F10 / huntC F3: one odd verdict ('c' in an Inspect log, 'NaN' in JSON Lines) or one
stray human label ('maybe') silently turned a binary table into K categories of NaN, exit 0.
huntA F7: a JSON Lines log of systems that judged different items was refused with "omit
item=", an option a log cannot take; it is now counted unpaired with a warning.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest


def write_jsonl(path, records) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def yes_no_log(folder, odd=None, n=40):
    """A JSON Lines log of one system (yes/no verdicts) and a gold file of its first 20 items.

    ``odd`` replaces the verdict of item q3 (line 4).
    """
    rng = np.random.default_rng(5)
    records = [
        {"item": f"q{i}", "judge": ["no", "yes"][int(rng.random() < 0.6)], "model": "m"}
        for i in range(n)
    ]
    if odd is not None:
        records[3]["judge"] = odd
    gold = folder / "gold.csv"
    pd.DataFrame(
        {"item": [f"q{i}" for i in range(20)], "human": ["yes", "no", "yes", "yes"] * 5}
    ).to_csv(gold, index=False)
    return write_jsonl(folder / "log.jsonl", records), str(gold)


@pytest.mark.parametrize(("odd", "shown"), [([1], "[1]"), ({"a": 1}, '{"a": 1}')])
@pytest.mark.parametrize("with_gold", [False, True])
def test_nested_verdict_is_refused_naming_key_item_line_value(
    run_cli, one_error_line, tmp_path, odd, shown, with_gold
):
    log, gold = yes_no_log(tmp_path, odd=odd)
    extra = ["--gold", gold] if with_gold else []
    code, out, err = run_cli(["estimate", "--test", log, "--system", "model", *extra])
    line = one_error_line(err)
    assert code == 2 and out == ""
    assert "internal error" not in line
    for words in ("key 'judge'", "list or object", "item 'q3' (line 4)", shown, "--judge"):
        assert words in line, line


def test_odd_json_lines_verdict_is_refused_not_read_as_categories(
    run_cli, one_error_line, tmp_path
):
    log, gold = yes_no_log(tmp_path, odd="NaN")
    code, out, err = run_cli(["estimate", "--test", log, "--gold", gold])
    line = one_error_line(err)
    assert code == 2 and out == ""
    for words in ("verdict 'NaN' (1 row: item(s) ['q3'])", "'no'", "'yes'", "--positive",
                  "--categories", "not one set of categories"):  # fmt: skip
        assert words in line, line
    # The same log without the odd verdict is binary and estimated (the positive control).
    log, gold = yes_no_log(tmp_path)
    code, out, err = run_cli(["estimate", "--test", log, "--gold", gold])
    assert code == 0 and "categories (K" not in out


def test_verdicts_and_labels_sharing_no_value_are_refused(run_cli, one_error_line, tmp_path):
    # Verdicts A/B/C (a JSON Lines log) against yes/no labels: no category in common.
    records = [{"item": f"q{i}", "judge": "ABC"[i % 3]} for i in range(30)]
    log = write_jsonl(tmp_path / "abc.jsonl", records)
    gold = tmp_path / "g.csv"
    pd.DataFrame({"item": [f"q{i}" for i in range(12)], "human": ["yes", "no"] * 6}).to_csv(
        gold, index=False
    )
    code, out, err = run_cli(["estimate", "--test", log, "--gold", str(gold)])
    line = one_error_line(err)
    assert code == 2 and out == ""
    assert "they share no value" in line
    assert "'A' (10 rows), 'B' (10 rows), 'C' (10 rows)" in line
    assert "'yes' (6 rows), 'no' (6 rows)" in line
    assert "odd value" not in line  # A, B and C are equally frequent: none is singled out


def one_table(folder, stray=None) -> str:
    """One table of 120 judged items, 50 labelled 0/1 (random design); ``stray`` at row 7."""
    rng = np.random.default_rng(8)
    truth = rng.integers(0, 2, 120)
    judge = np.where(rng.random(120) < 0.85, truth, 1 - truth)
    human = np.where(np.arange(120) < 50, truth.astype(str), "")
    if stray is not None:
        human[7] = stray
    path = folder / "one.csv"
    items = [f"i{i:03d}" for i in range(120)]
    pd.DataFrame({"item": items, "judge": judge, "human": human}).to_csv(path, index=False)
    return str(path)


def test_one_stray_human_label_is_named_with_its_column_and_rows(run_cli, one_error_line, tmp_path):
    path = one_table(tmp_path, stray="maybe")
    code, out, err = run_cli(["estimate", "--test", path])
    line = one_error_line(err)
    assert code == 2 and out == ""
    for words in ("human label 'maybe' (1 row)", "column 'human' of --test", "--categories",
                  "'0' (", "'1' ("):  # fmt: skip
        assert words in line, line
    # With --item the row's item id is named too.
    code, out, err = run_cli(["estimate", "--test", path, "--item", "item"])
    assert "human label 'maybe' (1 row: item(s) ['i007'])" in one_error_line(err)
    # Meant as K = 3: --categories reads them so (no refusal of the vocabularies).
    code, out, err = run_cli(["estimate", "--test", path, "--categories", "0,1,maybe"])
    assert "not one set of categories" not in err
    assert "categories (K = 3" in out


def test_three_categories_in_both_columns_still_read_as_categories(run_cli, tmp_path):
    rng = np.random.default_rng(9)
    truth = rng.choice(["A", "B", "tie"], 200)
    judge = np.where(rng.random(200) < 0.8, truth, rng.choice(["A", "B", "tie"], 200))
    test, cal = tmp_path / "t.csv", tmp_path / "c.csv"
    pd.DataFrame({"judge": judge[:120]}).to_csv(test, index=False)
    pd.DataFrame({"judge": judge[120:], "human": truth[120:]}).to_csv(cal, index=False)
    code, out, err = run_cli(["estimate", "--test", str(test), "--calibration", str(cal)])
    assert code == 0, err
    assert "categories (K = 3" in out


@pytest.fixture(scope="module")
def inspect_logs(tmp_path_factory):
    """An Inspect log (one epoch) as JSON, and a copy whose sample 4 is graded 'c'."""
    from harness_logs import write_inspect_log
    from inspect_ai.log import read_eval_log, write_eval_log

    folder = tmp_path_factory.mktemp("inspect-labels")
    log = read_eval_log(str(write_inspect_log(folder, epochs=1)))
    write_eval_log(log, str(folder / "plain.json"), format="json")
    odd_id = str(log.samples[3].id)
    log.samples[3].scores["model_graded_qa"].value = "c"
    write_eval_log(log, str(folder / "odd.json"), format="json")
    gold = folder / "gold.csv"
    ids = [str(s.id) for s in log.samples[:8]]
    pd.DataFrame({"item": ids, "human": ["yes", "no"] * 4}).to_csv(gold, index=False)
    return folder, odd_id, str(gold)


def test_odd_inspect_grade_is_refused_naming_item(run_cli, one_error_line, inspect_logs):
    folder, odd_id, gold = inspect_logs
    options = ["--gold", gold, "--scorer", "model_graded_qa"]
    code, out, err = run_cli(["estimate", "--test", str(folder / "odd.json"), *options])
    line = one_error_line(err)
    assert code == 2 and out == ""
    assert f"verdict 'c' (1 row: item(s) [{odd_id!r}])" in line
    assert "C and I of an Inspect log are correct and incorrect" in line
    assert "'yes'" in line and "--positive" in line and "--categories" in line
    code, out, err = run_cli(["estimate", "--test", str(folder / "plain.json"), *options])
    assert code == 0 and "categories (K" not in out


def test_log_of_systems_judged_apart_is_counted_unpaired(run_cli, tmp_path):
    rng = np.random.default_rng(6)
    records = [
        {"item": f"{m}{i}", "judge": ["yes", "no"][int(rng.random() < 0.4)], "model": m}
        for m in "AB"
        for i in range(30)
    ]
    log = write_jsonl(tmp_path / "apart.jsonl", records)
    gold = tmp_path / "g.csv"
    rows = [{"item": f"{m}{i}", "human": ["yes", "no"][i % 3 == 0], "system": m}
            for m in "AB" for i in range(12)]  # fmt: skip
    pd.DataFrame(rows).to_csv(gold, index=False)
    options = ["--test", log, "--system", "model", "--gold", str(gold)]
    code, out, err = run_cli(["estimate", *options])
    assert code == 0, err
    assert "was judged for two systems: the systems judged different items" in err
    lines = [line.split() for line in out.splitlines() if line.split()[:1] in (["A"], ["B"])]
    assert [(r[0], int(r[2])) for r in lines] == [("A", 18), ("B", 18)]  # 30 judged - 12 labelled
    code, out, err = run_cli(["compare", *options, "--seed", "1", "--method", "delta"])
    assert code == 0, err
    assert "unpaired" in out


def test_continuous_score_is_refused_in_one_bounded_line(run_cli, one_error_line, tmp_path):
    # huntA F17: a score with dozens of values beside 0/1 labels: a short message, not a list
    # of every value.
    records = [{"item": f"q{i}", "judge": round(0.1 * (i % 30), 1)} for i in range(60)]
    log = write_jsonl(tmp_path / "score.jsonl", records)
    gold = tmp_path / "g.csv"
    pd.DataFrame({"item": [f"q{i}" for i in range(20)], "human": [0, 1] * 10}).to_csv(
        gold, index=False
    )
    code, out, err = run_cli(["estimate", "--test", log, "--gold", str(gold)])
    line = one_error_line(err)
    assert code == 2 and out == ""
    assert "30 distinct numbers: a score, not a verdict?" in line
    assert "… (25 more)" in line and "more verdicts)" in line
    assert len(line) < 1500
