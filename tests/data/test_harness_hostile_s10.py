"""Hostile inputs to the harness readers and the gold join (session 2026-11-28 d, huntA).

F5/F14: a gold file written with a JSON Lines log's own keys; F6: whole numbers beyond 64
bits; F9: a gold file's epoch column; F15: system names of mixed types; F4: a gold file of
Inspect's grades; F2: the duplicate-id message of JSON Lines names the CLI options.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import bayesjudge as bj
from bayesjudge.data import harness
from bayesjudge.data.harness import check_gold_labels, join_gold, read_table

BIG = 2**70  # 1180591620717411303424: beyond int64


def _write_jsonl(path, records, blank_after: int | None = None):
    lines = [json.dumps(r) for r in records]
    if blank_after is not None:
        lines.insert(blank_after, "")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(params=["fast", "exact"])
def parser(request, monkeypatch):
    """Both JSON Lines parsers: pyarrow's and the standard library's line by line."""
    if request.param == "exact":
        monkeypatch.setattr(harness, "_records_arrow", lambda path, keys, exact: None)
    return request.param


# --- F6: whole numbers beyond 64 bits -------------------------------------------------------


def test_an_id_beyond_64_bits_is_read_as_its_text(tmp_path, parser):
    rows = [{"item": i, "judge": ["yes", "no"][i % 2]} for i in range(6)]
    rows[3]["item"] = BIG
    table = read_table(_write_jsonl(tmp_path / "big.jsonl", rows))
    assert table["item"].tolist() == ["0", "1", "2", str(BIG), "4", "5"]
    # the text of the id, exactly: a gold file labels it by that text
    gold = pd.DataFrame({"item": [str(BIG), "0"], "human": ["yes", "no"]})
    joined = join_gold(table, gold)
    assert joined.test.set_index("item")["human"].dropna().to_dict() == {
        "0": "no",
        str(BIG): "yes",
    }


def test_an_lm_eval_doc_id_beyond_64_bits_is_read_as_its_text(tmp_path, parser):
    # The three keys the reader takes from lm-eval's --log_samples lines (doc_id, filter, the
    # metric) and its "metrics" list; one doc_id beyond int64.
    rows = [
        {"doc_id": i, "filter": "none", "metrics": ["acc"], "acc": float(i % 2)} for i in range(5)
    ]
    rows[2]["doc_id"] = BIG
    path = _write_jsonl(tmp_path / "samples_tiny_2026.jsonl", rows)
    table = read_table(path, system="m")
    assert table["item"].tolist() == ["0", "1", str(BIG), "3", "4"]
    assert table["judge"].tolist() == [0.0, 1.0, 0.0, 1.0, 0.0]


def test_an_epoch_beyond_64_bits_is_refused_naming_file_key_line_and_value(tmp_path, parser):
    rows = [{"item": f"q{i}", "judge": "yes", "ep": 1} for i in range(6)]
    rows[3]["ep"] = BIG
    path = _write_jsonl(tmp_path / "bigep.jsonl", rows, blank_after=1)  # line 2 is blank
    with pytest.raises(ValueError) as err:
        read_table(path, epoch="ep")
    message = str(err.value)
    assert "'bigep.jsonl'" in message.replace(str(tmp_path) + "/", "")
    assert f"got {BIG} on line 5" in message  # record 4 is line 5 after the blank line
    assert "'ep'" in message and "--repeats" in message


def test_a_missing_or_decimal_epoch_names_its_line(tmp_path, parser):
    rows = [{"item": f"q{i}", "judge": "yes", "ep": 1} for i in range(9)]
    del rows[7]["ep"]
    rows[4]["ep"] = 2.0
    path = _write_jsonl(tmp_path / "ep.jsonl", rows)
    with pytest.raises(
        ValueError, match=r"got 2\.0 on line 5, no value on line 8\. The epoch key 'ep'"
    ):
        read_table(path, epoch="ep")


# --- F15: system names ------------------------------------------------------------------------


def test_system_names_of_different_types_are_never_merged(tmp_path, parser):
    values = [1, 1.0, True]
    rows = [{"item": f"q{i}", "judge": "yes", "model": m} for m in values for i in range(2)]
    table = read_table(_write_jsonl(tmp_path / "sys.jsonl", rows), system="model")
    # before: pd.factorize merged 1, 1.0 and True (equal hashes) into one system "1"
    assert table["system"].value_counts().to_dict() == {"1": 2, "1.0": 2, "True": 2}
    rows = [{"item": "q0", "judge": "yes", "model": 1}, {"item": "q0", "judge": "no", "model": "1"}]
    with pytest.raises(ValueError, match=r"system names 1 and '1' are different names"):
        read_table(_write_jsonl(tmp_path / "sys2.jsonl", rows), system="model")


# --- F2: the duplicate-id message ---------------------------------------------------------


def test_repeated_ids_in_json_lines_name_the_system_and_epoch_options(tmp_path):
    rows = [{"item": f"q{i}", "judge": "yes", "model": m} for m in "AB" for i in range(3)]
    with pytest.raises(ValueError) as err:
        read_table(_write_jsonl(tmp_path / "two.jsonl", rows))
    message = str(err.value)
    assert "--system KEY" in message and "--repeats KEY" in message
    assert "other keys are 'model'" in message


# --- F5, F14: a gold file written with the log's keys ------------------------------------------


def _two_systems(tmp_path):
    rows = [
        {"id": f"q{i}", "verdict": ["yes", "no"][(i + (m == "B")) % 2], "model": m}
        for m in "AB"
        for i in range(4)
    ]
    return read_table(
        _write_jsonl(tmp_path / "two.jsonl", rows), item="id", judge="verdict", system="model"
    )


def test_a_gold_file_with_the_logs_system_and_id_keys_is_joined_by_them(tmp_path):
    log = _two_systems(tmp_path)
    assert log.attrs["keys"] == {"item": "id", "judge": "verdict", "system": "model", "epoch": None}
    gold = pd.DataFrame(
        {"id": ["q0", "q1", "q0", "q1"], "model": ["A", "A", "B", "B"], "human": list("yyny")}
    )
    joined = join_gold(log, gold)  # before: "labels 'q0', 'q1' more than once (by ['item'])"
    labelled = joined.test.dropna(subset=["human"])
    assert labelled[["item", "system", "human"]].values.tolist() == [
        ["q0", "A", "y"],
        ["q1", "A", "y"],
        ["q0", "B", "n"],
        ["q1", "B", "y"],
    ]
    # The same counts as a gold file with the tidy names (item, system).
    tidy = gold.rename(columns={"id": "item", "model": "system"})
    again = join_gold(log, tidy)
    pd.testing.assert_frame_equal(joined.test, again.test)


def test_a_gold_system_column_by_another_name(tmp_path):
    log = _two_systems(tmp_path)
    log.attrs.clear()  # a table from elsewhere: no keys to go by
    gold = pd.DataFrame({"item": ["q0", "q0"], "run_by": ["A", "B"], "human": ["y", "n"]})
    with pytest.raises(ValueError) as err:
        join_gold(log, gold)
    message = str(err.value)
    # the system column is missing: said before any "labels ... more than once"
    assert "has no 'system' column" in message and "more than once" not in message
    assert "It has 'run_by', whose values are the log's systems" in message
    joined = join_gold(log, gold, system="run_by")
    assert joined.test["human"].notna().sum() == 2


# --- F9: a gold file's epoch column ----------------------------------------------------------


def _epochs_log():
    return pd.DataFrame(
        {
            "item": ["7", "8"] * 3,
            "system": "m",
            "judge": ["C", "I"] * 3,
            "epoch": [1, 1, 2, 2, 3, 3],
        }
    )


@pytest.mark.parametrize(
    ("epoch", "shown"),
    [("", "row 2: blank"), ("1.5", "row 2: '1.5'"), ("0", "row 2: '0'"), (str(BIG), str(BIG))],
)
def test_gold_epochs_that_are_not_whole_numbers_are_refused(tmp_path, epoch, shown):
    gold = tmp_path / "gold.csv"
    gold.write_text(f"item,human,epoch\n7,yes,1\n8,no,{epoch}\n")
    with pytest.raises(ValueError) as err:
        join_gold(_epochs_log(), gold)
    message = str(err.value)
    assert f"Column 'epoch' of the gold file {str(gold)!r}" in message
    assert shown in message and "whole number >= 1" in message


def test_an_epoch_not_in_the_log_is_named_with_its_item(tmp_path):
    gold = tmp_path / "gold.csv"
    gold.write_text("item,human,epoch\n7,yes,1\n8,no,9\n")
    with pytest.raises(ValueError) as err:
        join_gold(_epochs_log(), gold)
    message = str(err.value)
    assert "1 labelled (item, epoch) row(s)" in message
    assert "'8' (epoch 9; the item is in the log)" in message


def test_gold_epochs_that_are_whole_numbers_still_join():
    gold = pd.DataFrame({"item": ["7", "8"], "human": ["yes", "no"], "epoch": [np.int64(2), 3]})
    joined = join_gold(_epochs_log(), gold)
    labelled = joined.test.dropna(subset=["human"])
    assert labelled[["item", "epoch", "human"]].values.tolist() == [["7", 2, "yes"], ["8", 3, "no"]]


# --- F4: a gold file of Inspect's grades ------------------------------------------------------


def test_gold_labels_of_inspect_grades_name_the_gold_file_and_positive(tmp_path):
    gold = tmp_path / "gold.csv"
    gold.write_text("item,human\n007,C\n7,I\n11,C\n")
    with pytest.raises(ValueError) as err:
        check_gold_labels(gold, log_positive="C")
    message = str(err.value)
    assert f"Column 'human' of the gold file {str(gold)!r}" in message
    assert "'C' (2 rows), 'I' (1 row)" in message  # as written, not lowercased
    assert "--positive C" in message and "Inspect's grades" in message
    check_gold_labels(gold, positive="C")  # what --positive C reads
    check_gold_labels(gold, positive={"human": "C"})
    # other labels: the option, with the value meaning correct left to the user
    gold.write_text("item,human\n1,good\n2,bad\n3,good\n")
    with pytest.raises(ValueError, match=r"'good' \(2 rows\), 'bad' \(1 row\).*--positive good"):
        check_gold_labels(gold)
    gold.write_text("item,human\n1,yes\n2,no\n3,\n")
    check_gold_labels(gold)  # understood labels (a blank one is unlabelled)


def test_gold_labels_that_positive_cannot_read(tmp_path):
    gold = pd.DataFrame({"item": ["1", "2", "3"], "human": ["C", "I", "P"]})
    with pytest.raises(ValueError, match=r"With --positive C .* at most one other"):
        check_gold_labels(gold, positive="C")


def test_gold_labels_read_with_positive_count_as_a_tally(tmp_path):
    # Direct tally of the joined rows, with C correct in both columns: labelled 1 (C, C),
    # 2 (I, C), 3 (C, I): m1 = 2 (items 1, 2), tp = 1 (item 1); m0 = 1 (item 3), tn = 0;
    # unlabelled 4 (I), 5 (C): n = 2, k = 1.
    log = pd.DataFrame({"item": list("12345"), "system": "m", "judge": list("CICIC"), "epoch": 1})
    gold = pd.DataFrame({"item": list("123"), "human": list("CCI")})
    check_gold_labels(gold, positive="C")
    joined = join_gold(log, gold)
    counts = bj.JudgeCounts.from_frames(joined.test, item="item", positive="C")
    assert (counts.n.item(), counts.k.item()) == (2, 1)
    assert (counts.m1.item(), counts.tp.item(), counts.m0.item(), counts.tn.item()) == (2, 1, 1, 0)


# --- F11f: a byte order mark -------------------------------------------------------------------


def test_a_byte_order_mark_at_the_start_is_dropped(tmp_path, parser):
    rows = [{"item": "a", "judge": "yes"}, {"item": "b", "judge": "no"}]
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(r) + "\r\n" for r in rows).encode())
    table = read_table(path)  # before: "Unexpected UTF-8 BOM (decode using utf-8-sig)"
    assert table[["item", "judge"]].values.tolist() == [["a", "yes"], ["b", "no"]]
    path.write_bytes(("".join(json.dumps(r) + "\n" for r in rows) + "\ufeff{}\n").encode())
    with pytest.raises(ValueError, match=r"Line 3 of the JSON Lines file .* is not JSON"):
        read_table(path)  # a mark anywhere else is not JSON


# --- F18: a JSON Lines export named samples_* ------------------------------------------------


def test_a_samples_file_without_lm_eval_keys_is_json_lines(tmp_path):
    rows = [{"item": "a", "judge": "yes"}, {"item": "b", "judge": "no"}]
    path = _write_jsonl(tmp_path / "samples_export.jsonl", rows)
    assert harness.harness_format(path) == "jsonl"  # before: "lm-eval", by the name alone
    assert read_table(path)["item"].tolist() == ["a", "b"]
    lm = _write_jsonl(
        tmp_path / "out.jsonl", [{"doc_id": 0, "filter": "none", "metrics": ["acc"], "acc": 1.0}]
    )
    assert harness.harness_format(lm) == "lm-eval"  # by its keys, whatever its name
    (tmp_path / "samples_bad.jsonl").write_text("not json\n")
    assert harness.harness_format(tmp_path / "samples_bad.jsonl") == "lm-eval"
    with pytest.raises(ValueError, match=r"--test-format jsonl on the command line"):
        read_table(path, format="lm-eval")


# --- F19: a gold row with an id and no label -------------------------------------------------


def test_a_gold_row_without_a_label_is_warned_of(tmp_path):
    log = pd.DataFrame({"item": list("abcd"), "system": "m", "judge": list("CICI"), "epoch": 1})
    gold = tmp_path / "gold.csv"
    gold.write_text("item,human\na,yes\nb,\nc,no\n")
    with pytest.warns(bj.warnings.MissingLabelWarning) as caught:
        joined = join_gold(log, gold)
    (message,) = [str(w.message) for w in caught]
    assert f"1 row of the gold file {str(gold)!r} has an item id but no human label" in message
    assert "row 2 (item 'b')" in message
    assert joined.test["human"].notna().tolist() == [True, False, True, False]


# --- F11h: ids that differ only in Unicode form ----------------------------------------------


def test_ids_differing_only_in_unicode_form_are_named_escaped():
    log = pd.DataFrame({"item": ["caf\u00e9", "x"], "system": "m", "judge": ["C", "I"], "epoch": 1})
    gold = pd.DataFrame({"item": ["cafe\u0301", "x"], "human": ["yes", "no"]})
    with pytest.raises(ValueError) as err:
        join_gold(log, gold)
    assert "'cafe\\u0301' (gold) and 'caf\\xe9' (log)" in str(err.value)
    assert "Unicode form" in str(err.value)


@pytest.mark.parametrize("verdict", [[1], {"a": 1}])
def test_a_list_or_object_verdict_in_json_lines_is_refused_by_line(tmp_path, verdict):
    # huntA F1: a list or object verdict reached the counting (an internal TypeError in
    # `profile`); the reader now refuses it naming the key, line, item and value.
    rows = [{"item": f"q{i}", "judge": ["yes", "no"][i % 3 == 0], "model": "m"} for i in range(6)]
    rows[3]["judge"] = verdict
    path = tmp_path / "v.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    shown = json.dumps(verdict)
    with pytest.raises(ValueError, match="the judge key 'judge'") as err:
        read_table(path, system="model")
    assert f"item 'q3' (line 4): {shown}" in str(err.value)
