"""``bayesjudge profile`` reads a log as ``estimate`` does (session 2026-11-28 d, huntA).

F2: --system names a JSON Lines key (or renames an Inspect log's model), --repeats the epoch
key, --item/--judge the keys, and the next command carries them; F4: a gold file of Inspect's
grades C/I gets --positive C; F8: Inspect's grades C/P/I are ordered I, P, C with the scores
I=0, P=0.5, C=1, other labels get a placeholder example.
"""

from __future__ import annotations

import json
import random

import pandas as pd
import pytest
from harness_logs import write_inspect_log

from bayesjudge.data.harness import read_table
from bayesjudge.data.profile import profile_table


def _write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _profile(run_cli, *args):
    code, out, err = run_cli(["profile", *map(str, args), "--json"])
    assert code == 0, err
    return json.loads(out)


def _estimate(run_cli, argv):
    code, out, err = run_cli([*argv[1:], "--json"])
    assert code == 0, err
    return json.loads(out)


def _errors(profile):
    return [p for p in profile["problems"] if p["severity"] == "error"]


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """One epoch of the mock Inspect run (C/I), and one with partial credit (C/P/I)."""
    folder = tmp_path_factory.mktemp("inspect")
    return {
        "binary": write_inspect_log(folder / "one", epochs=1),
        "partial": write_inspect_log(folder / "partial", epochs=1, partial=True),
    }


def test_profile_reads_a_json_lines_system_key_as_estimate_does(tmp_path, run_cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = random.Random(3)
    rows = [
        {"item": f"q{i}", "judge": rng.choice(["yes", "no"]), "model": m}
        for m in "AB"
        for i in range(30)
    ]
    _write_jsonl(tmp_path / "two.jsonl", rows)
    gold = pd.DataFrame(
        {
            "item": [f"q{i}" for i in range(12)] * 2,
            "human": [["yes", "no"][i % 2] for i in range(24)],
            "model": ["A"] * 12 + ["B"] * 12,  # named like the log's key, as estimate joins it
        }
    )
    gold.to_csv(tmp_path / "gold.csv", index=False)
    # before: "Column 'model' (given as the system column) is not in the test table"
    out = _profile(run_cli, "two.jsonl", "--gold", "gold.csv", "--system", "model")
    assert [s["name"] for s in out["systems"]] == ["A", "B"]
    assert not _errors(out), out["problems"]
    argv = out["next_command"]["argv"]
    assert argv[argv.index("--system") + 1] == "model"
    assert out["overlap"]["both"] == 24  # matched by (system, item): 12 items of each system
    result = _estimate(run_cli, argv)
    groups = {g["system"]: (g["n"], g["m0"] + g["m1"]) for g in result["results"]}
    assert groups == {"A": (18, 12), "B": (18, 12)}
    assert groups == {c["system"]: (c["n"], c["m0"] + c["m1"]) for c in out["counts"]}


def test_profile_reads_json_lines_keys_and_an_epoch_key(tmp_path, run_cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rows = [
        {"id": f"q{i}", "verdict": ["yes", "no"][(i + ep) % 2], "ep": ep}
        for ep in (1, 2)
        for i in range(20)
    ]
    _write_jsonl(tmp_path / "ep.jsonl", rows)
    # the gold file's id column named like the log's key (--item id names both)
    (tmp_path / "gold.csv").write_text(
        "id,human\n" + "".join(f"q{i},{['yes', 'no'][i % 2]}\n" for i in range(10))
    )
    options = ["--item", "id", "--judge", "verdict", "--repeats", "ep", "--gold", "gold.csv"]
    out = _profile(run_cli, "ep.jsonl", *options)
    assert not _errors(out), out["problems"]
    argv = out["next_command"]["argv"]
    for option, key in (("--item", "id"), ("--judge", "verdict"), ("--repeats", "ep")):
        assert argv[argv.index(option) + 1] == key
    assert out["items"]["verdicts_per_item"] == {"2": 20}
    result = _estimate(run_cli, argv)
    # 20 items of 2 verdicts each: 10 labelled (20 verdicts), 10 unlabelled (20 verdicts)
    (group,) = result["results"]
    assert (group["n"], group["m0"] + group["m1"]) == (20, 20)
    assert [(c["n"], c["m0"] + c["m1"]) for c in out["counts"]] == [(20, 20)]


def test_profile_renames_an_inspect_logs_model(logs, run_cli):
    out = _profile(run_cli, logs["binary"], "--scorer", "model_graded_qa", "--system", "renamed")
    assert [s["name"] for s in out["systems"]] == ["renamed"]
    argv = out["next_command"]["argv"]
    assert argv[argv.index("--system") + 1] == "renamed"
    with pytest.raises(ValueError, match="an inspect log numbers the repeated verdicts"):
        profile_table(logs["binary"], scorer="model_graded_qa", repeats="kind")


def test_a_gold_file_of_inspect_grades_gets_positive_c(logs, tmp_path, run_cli):
    gold = tmp_path / "grades.csv"
    # labels of the sample ids 007, 7, 11, 12, q-7, 8, 9, x: Inspect's own grades
    gold.write_text("item,human\n007,C\n7,I\n11,C\n12,I\nq-7,C\n8,C\n9,I\nx,C\n")
    out = _profile(run_cli, logs["binary"], "--gold", gold, "--scorer", "model_graded_qa")
    codes = {p["code"]: p for p in out["problems"]}
    assert codes["gold_inspect_grades"]["severity"] == "note"
    assert "--positive C" in codes["gold_inspect_grades"]["message"]
    assert not _errors(out), out["problems"]  # before: unmapped_labels, an error
    argv = out["next_command"]["argv"]
    assert argv[-2:] == ["--positive", "C"]
    result = _estimate(run_cli, argv)
    (group,) = result["results"]
    # 5 labels C (m1) and 3 I (m0) of the 8 labelled items; 2 unlabelled ('a\nb', '<b>x</b>')
    assert (group["m1"], group["m0"], group["n"]) == (5, 3, 2)
    assert [(c["m1"], c["m0"], c["n"]) for c in out["counts"]] == [(5, 3, 2)]


def test_inspect_partial_credit_is_ordered_and_scored_as_inspect_defines(logs, tmp_path):
    gold = tmp_path / "cpi.csv"
    gold.write_text("item,human\n007,C\n7,I\n11,P\n12,C\nq-7,I\n8,C\n9,P\nx,C\n")
    profile = profile_table(logs["partial"], gold, scorer="model_graded_qa")
    assert profile.categories == ("I", "P", "C")
    # before: "--scores C=1,I=0.5,P=0" (the alphabet's order scored 1, 0.5, 0)
    assert "--scores I=0,P=0.5,C=1" in profile.notes[0]
    assert profile.command[profile.command.index("--categories") + 1] == "I,P,C"


def test_other_labels_get_a_placeholder_scores_example(tmp_path):
    labels = ["A", "tie", "B"]
    table = pd.DataFrame(
        {
            "judge": [labels[i % 3] for i in range(30)],
            "human": [labels[(i + i // 10) % 3] if i % 2 else None for i in range(30)],
        }
    )
    profile = profile_table(table)
    assert profile.categories == ("A", "B", "tie")
    assert "--scores 'A=…,B=…,tie=…'" in profile.notes[0]


def test_an_unfinished_inspect_run_is_warned_of(logs, tmp_path, run_cli):
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(logs["binary"]))
    log.status = "cancelled"
    log.samples = log.samples[:6]
    path = tmp_path / "cancelled.json"
    write_eval_log(log, str(path), format="json")
    with pytest.warns(UserWarning, match=r"has status 'cancelled'.*6 of the 10 × 1 samples"):
        table = read_table(path, scorer="model_graded_qa")
    assert len(table) == 6 and table.attrs["status"] == "cancelled"
    out = _profile(run_cli, path, "--scorer", "model_graded_qa")
    codes = {p["code"]: p for p in out["problems"]}
    assert "status 'cancelled'" in codes["reading_warning"]["message"]


def test_a_continuous_lm_eval_metric_is_named_as_not_a_verdict(tmp_path):
    rng = random.Random(3)
    rows = [
        {"doc_id": i, "filter": "none", "metrics": ["f1"], "f1": round(rng.random(), 3)}
        for i in range(60)
    ]
    path = _write_jsonl(tmp_path / "samples_f1_2026.jsonl", rows)
    (tmp_path / "results_2026.json").write_text(json.dumps({"model_name": "m"}))
    profile = profile_table(path)
    codes = {p.code: p for p in profile.problems}
    # before: "no_verdict_column ... name it with --judge", an option lm-eval files ignore
    assert "no_verdict_column" not in codes
    message = codes["verdict_not_binary"].message
    assert "the metric 'f1,none'" in message and "--metric" in message
    low, high = min(r["f1"] for r in rows), max(r["f1"] for r in rows)
    distinct = len({r["f1"] for r in rows})
    assert f"{distinct} distinct numbers between {low:g} and {high:g}" in message


def test_an_unread_system_key_is_noted(tmp_path):
    rows = [{"item": f"q{i}", "judge": "yes", "model": "m"} for i in range(5)]
    profile = profile_table(_write_jsonl(tmp_path / "one.jsonl", rows))
    (note,) = [p for p in profile.problems if p.code == "unread_key"]
    assert note.severity == "note" and "--system model" in note.message
    given = profile_table(tmp_path / "one.jsonl", system="model")
    assert not [p for p in given.problems if p.code == "unread_key"]
    assert [s for s, _ in given.systems] == ["m"]


def test_estimate_names_the_gold_file_of_inspect_grades(logs, tmp_path, run_cli, one_error_line):
    gold = tmp_path / "grades.csv"
    gold.write_text("item,human\n007,C\n7,I\n11,C\n12,I\nq-7,C\n8,C\n9,I\nx,C\n")
    code, _, err = run_cli(
        ["estimate", "--test", str(logs["binary"]), "--gold", str(gold),
         "--scorer", "model_graded_qa"]
    )  # fmt: skip
    line = one_error_line(err)
    assert code == 2 and f"of the gold file {str(gold)!r}" in line
    assert "'C' (5 rows), 'I' (3 rows)" in line and "--positive C" in line


def test_a_csv_gold_file_is_joined_by_the_system_column(tmp_path, run_cli):
    rows = "".join(f"q{i},{['yes', 'no'][i % 2]},{m}\n" for m in "AB" for i in range(30))
    (tmp_path / "t.csv").write_text("item,judge,model\n" + rows)
    labels = "".join(f"q{i},{['yes', 'no'][i % 3 == 0]},A\n" for i in range(12))
    (tmp_path / "g.csv").write_text("item,human,model\n" + labels)
    code, out, err = run_cli(
        ["estimate", "--test", str(tmp_path / "t.csv"), "--gold", str(tmp_path / "g.csv"),
         "--system", "model", "--item", "item", "--json"]
    )  # fmt: skip
    # B's answers carry no label: before, A's 12 labels were joined to B's rows by item id.
    assert code == 0, err
    m = {r["system"]: r["m0"] + r["m1"] for r in json.loads(out)["results"]}
    assert m == {"A": 12, "B": 0}, err
