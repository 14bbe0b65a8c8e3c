"""The command line reads harness logs (issue 18): --test LOG, --gold, --scorer, --metric.

The logs are written by Inspect AI and lm-evaluation-harness themselves in the test run
(``tests/references/harness_logs.py``), once per module. The counts behind the printed table
equal those of the Python API on the same files.
"""

import json

import pandas as pd
import pytest
from harness_logs import EPOCHS, INSPECT_IDS, LM_MODEL, MODEL

import bayesjudge as bj
from bayesjudge.data.harness import join_gold, read_table


@pytest.fixture(scope="module")
def inspect_log(tmp_path_factory):
    from harness_logs import write_inspect_log

    return write_inspect_log(tmp_path_factory.mktemp("inspect-cli"))


@pytest.fixture(scope="module")
def lm_samples(tmp_path_factory):
    from harness_logs import run_lm_eval

    return run_lm_eval(tmp_path_factory.mktemp("lm-eval-cli"))


def test_estimate_from_an_lm_eval_run_and_a_gold_file(lm_samples, tmp_path, run_cli):
    gold = tmp_path / "gold.csv"
    # Ten labelled documents: the human agrees with lm-eval's acc on nine of them.
    lines = [json.loads(line) for line in lm_samples.read_text().splitlines()][:10]
    labels = [("yes" if line["acc"] == 1 else "no") for line in lines]
    labels[0] = "no" if labels[0] == "yes" else "yes"
    gold.write_text("item,human\n" + "".join(f"{i},{h}\n" for i, h in enumerate(labels)))
    code, out, err = run_cli(
        ["estimate", "--test", str(lm_samples), "--gold", str(gold), "--metric", "acc", "--json"]
    )
    assert code == 0, err
    rows = json.loads(out)["results"]
    joined = join_gold(read_table(lm_samples, metric="acc"), gold)
    counts = bj.JudgeCounts.from_frames(
        joined.test, system="system", item="item", design=joined.design
    )
    expected = bj.estimate(counts)
    row = rows[0]
    assert row["system"] == LM_MODEL
    assert row["estimate"] == pytest.approx(float(expected["estimate"].squeeze()), nan_ok=True)
    assert counts.n.item() == 30 and counts.m0.item() + counts.m1.item() == 10
    assert {k: row[k] for k in bj.data.FIELDS} == {k: counts[k].item() for k in bj.data.FIELDS}


def test_inspect_log_with_a_calibration_set_as_gold(inspect_log, tmp_path, run_cli, one_error_line):
    code, _, err = run_cli(["estimate", "--test", str(inspect_log), "--method", "naive"])
    assert code == 2
    line = one_error_line(err)
    assert "several scorers: 'model_graded_qa', 'match'" in line and "--scorer" in line
    # A separate calibration set (stratified design): its own ids and the judge's verdicts.
    gold = tmp_path / "gold.csv"
    # The human agrees with the judge on 38 of the 40 (8 "I"/no, 30 "C"/yes, 2 "C"/no).
    rows = [
        (f"cal-{i}", "C" if i % 5 else "I", "yes" if (i % 5 != 0) != (i in (1, 7)) else "no")
        for i in range(40)
    ]
    gold.write_text("item,judge,human\n" + "".join(",".join(r) + "\n" for r in rows))
    code, out, err = run_cli(
        ["estimate", "--test", str(inspect_log), "--scorer", "model_graded_qa", "--gold",
         str(gold), "--json"]
    )  # fmt: skip
    assert code == 0, err
    table = read_table(inspect_log, scorer="model_graded_qa")
    joined = join_gold(table, gold)
    assert joined.design == "stratified"
    tests = bj.JudgeCounts.from_frames(
        joined.test, system="system", item="item", repeats="epoch", positive={"judge": "C"},
        human=None,
    )  # fmt: skip
    # The calibration set has no system column: one set for every system.
    labelled = bj.JudgeCounts.from_frames(None, joined.calibration, positive={"judge": "C"})
    counts = tests.with_calibration_from(labelled)
    result = json.loads(out)["results"][0]
    assert result["system"] == MODEL
    # Every epoch's verdict is counted; the calibration set by a direct tally of its rows.
    assert result["n"] == counts.n.item() == len(INSPECT_IDS) * EPOCHS
    assert result["k"] == (table["judge"] == "C").sum()
    assert (result["m0"], result["tn"], result["m1"], result["tp"]) == (10, 8, 30, 30)
    assert result["estimate"] == pytest.approx(float(bj.estimate(counts)["estimate"].squeeze()))


def test_gold_errors_are_one_line(inspect_log, lm_samples, tmp_path, run_cli, one_error_line):
    gold = tmp_path / "gold.csv"
    gold.write_text("item,human\n007,yes\n999,no\n")
    code, _, err = run_cli(
        ["estimate", "--test", str(lm_samples), "--metric", "acc", "--gold", str(gold)]
    )
    assert code == 2
    assert "not in the log: '007', '999'" in one_error_line(err)
    code, _, err = run_cli(
        ["estimate", "--test", str(lm_samples), "--metric", "acc", "--gold", str(tmp_path / "x")]
    )
    assert code == 2 and "--gold" in one_error_line(err)
    code, _, err = run_cli(["estimate", "--test", str(lm_samples), "--metric", "nope"])
    assert code == 2 and "no per-sample metric 'nope'" in one_error_line(err)
    # Labels of items judged in several epochs: labelled clusters, counted as the API does.
    gold.write_text("item,human\n007,yes\n7,no\n")
    code, out, err = run_cli(
        ["estimate", "--test", str(inspect_log), "--scorer", "model_graded_qa", "--gold",
         str(gold), "--json"]
    )  # fmt: skip
    assert code == 0, err
    joined = join_gold(read_table(inspect_log, scorer="model_graded_qa"), gold)
    counts = bj.JudgeCounts.from_frames(
        joined.test, system="system", item="item", repeats="epoch", design=joined.design,
        positive={"judge": "C"},
    )  # fmt: skip
    row = json.loads(out)["results"][0]
    assert {k: row[k] for k in bj.data.FIELDS} == {k: counts[k].item() for k in bj.data.FIELDS}


def test_jsonl_test_table_with_gold(tmp_path, run_cli):
    records = [{"item": f"{i:03d}", "judge": i % 4 != 0} for i in range(40)]
    test = tmp_path / "verdicts.jsonl"
    test.write_text("".join(json.dumps(r) + "\n" for r in records))
    gold = tmp_path / "gold.csv"
    # The human agrees with the judge on 18 of the 20 labelled items.
    humans = [int((i % 4 != 0) != (i in (3, 10))) for i in range(20)]
    gold.write_text("item,human\n" + "".join(f"{i:03d},{h}\n" for i, h in enumerate(humans)))
    code, out, err = run_cli(["estimate", "--test", str(test), "--gold", str(gold), "--json"])
    assert code == 0, err
    joined = join_gold(read_table(test), pd.read_csv(gold, dtype=str))
    counts = bj.JudgeCounts.from_frames(joined.test, item="item", design="random")
    assert counts.n.item() == 20 and counts.m0.item() + counts.m1.item() == 20
    rows = json.loads(out)["results"]
    assert rows[0]["estimate"] == pytest.approx(float(bj.estimate(counts)["estimate"].squeeze()))
    assert {k: rows[0][k] for k in bj.data.FIELDS} == {k: counts[k].item() for k in bj.data.FIELDS}


def test_profile_of_a_log_with_two_scorers_passes_scorer_on(
    inspect_log, tmp_path, run_cli, one_error_line
):
    """docs/harness.md, step 1: profile the log and a gold file; run the command it suggests."""
    gold = tmp_path / "gold.csv"
    # A separate calibration set (its own ids and verdicts): 8 "I"/no, 30 "C"/yes, 2 "C"/no.
    rows = [
        (f"cal-{i}", "C" if i % 5 else "I", "yes" if (i % 5 != 0) != (i in (1, 7)) else "no")
        for i in range(40)
    ]
    gold.write_text("item,judge,human\n" + "".join(",".join(r) + "\n" for r in rows))
    code, _, err = run_cli(["profile", str(inspect_log), "--gold", str(gold)])
    assert code == 2
    line = one_error_line(err)
    assert "several scorers: 'model_graded_qa', 'match'" in line and "--scorer" in line
    code, out, err = run_cli(
        ["profile", str(inspect_log), "--gold", str(gold), "--scorer", "model_graded_qa",
         "--test-format", "inspect", "--json"]
    )  # fmt: skip
    assert code == 0, err
    profile = json.loads(out)
    argv = profile["next_command"]["argv"]
    assert argv == [
        "bayesjudge", "estimate", "--test", str(inspect_log), "--test-format", "inspect",
        "--scorer", "model_graded_qa", "--gold", str(gold),
    ]  # fmt: skip
    code, out, err = run_cli([*argv[1:], "--json"])
    assert code == 0, err
    result = json.loads(out)["results"][0]
    table = read_table(inspect_log, scorer="model_graded_qa")
    tally = {
        "n": len(table), "k": int((table["judge"] == "C").sum()), "m0": 10, "tn": 8, "m1": 30,
        "tp": 30,
    }  # fmt: skip
    assert {k: result[k] for k in bj.data.FIELDS} == tally
    assert {k: profile["counts"][0][k] for k in bj.data.FIELDS} == tally
    assert result["n"] == len(INSPECT_IDS) * EPOCHS
