"""The harness readers (issue 18) on logs written by the harnesses themselves in the test run.

An Inspect AI ``eval()`` with the mock model and a model-graded scorer (3 epochs, one failed
sample) and a real lm-evaluation-harness run of a tiny local task with its dummy model
(``tests/references/harness_logs.py``) are each written once per module. Round trips: the
counts of ``read_table`` -> ``JudgeCounts.from_frames`` equal a direct tally of the samples as
the harness's own reader (``EvalLog.samples``) or the JSONL lines give them.
"""

import json
import sys
import warnings
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from harness_logs import EPOCHS, INSPECT_IDS, LM_DOCS, LM_MODEL, MODEL
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayesjudge as bj
from bayesjudge.data import harness
from bayesjudge.data.harness import join_gold, read_table
from bayesjudge.warnings import MissingLabelWarning

SCORER = "model_graded_qa"


@pytest.fixture(scope="module")
def inspect_log(tmp_path_factory):
    from harness_logs import write_inspect_log

    return write_inspect_log(tmp_path_factory.mktemp("inspect"), fail_one=True)


@pytest.fixture(scope="module")
def inspect_json(inspect_log):
    from inspect_ai.log import read_eval_log, write_eval_log

    path = inspect_log.with_suffix(".json")
    write_eval_log(read_eval_log(str(inspect_log)), str(path), format="json")
    return path


@pytest.fixture(scope="module")
def lm_samples(tmp_path_factory):
    from harness_logs import run_lm_eval

    return run_lm_eval(tmp_path_factory.mktemp("lm-eval"))


def _inspect_tally(path):
    """Count the samples as Inspect's own full reader gives them (EvalLog.samples)."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(path))
    verdicts = [s.scores[SCORER].value for s in log.samples if s.scores]
    by_item = {}
    for s in log.samples:
        if s.scores:
            by_item.setdefault(str(s.id), []).append(s.scores[SCORER].value == "C")
    return log, verdicts, by_item


# --- Inspect AI -------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["eval", "json"])
def test_inspect_round_trip_counts_equal_a_tally_of_the_samples(which, inspect_log, inspect_json):
    path = inspect_log if which == "eval" else inspect_json
    table = read_table(path, scorer=SCORER)
    log, verdicts, by_item = _inspect_tally(path)
    assert table.attrs["format"] == "inspect" and table.attrs["positive"] == "C"
    assert len(table) == len(log.samples) == len(INSPECT_IDS) * EPOCHS
    assert set(table["system"]) == {log.eval.model} == {MODEL}
    assert sorted(table["epoch"].unique()) == list(range(1, EPOCHS + 1))
    # The failed sample (question 3, epoch 1) is a row without a verdict, named in the attrs.
    assert table.attrs["unparsed"] == {"<b>x</b> (epoch 1)": None}
    assert table["judge"].isna().sum() == 1
    with pytest.warns(MissingLabelWarning, match="1 row"):
        counts = bj.JudgeCounts.from_frames(
            table, system="system", item="item", repeats="epoch", positive={"judge": "C"}
        )
    assert counts.n.item() == len(verdicts) == len(INSPECT_IDS) * EPOCHS - 1
    assert counts.k.item() == Counter(verdicts)["C"]
    # The cluster table counts items by number of verdicts and of "C" verdicts.
    tally = Counter((len(v), sum(v)) for v in by_item.values())
    clusters = counts.dataset["clusters"].sel(system=MODEL, stratum="all")
    for (size, positives), count in tally.items():
        assert clusters.sel(repeats=size, positives=positives).item() == count
    assert clusters.sum().item() == len(INSPECT_IDS)


def test_inspect_ids_and_names_stay_as_the_log_has_them(inspect_log):
    table = read_table(inspect_log, scorer=SCORER)
    # Ids as text: "007" and 7, "12" and 12-like ids never merge; newline and HTML kept.
    assert sorted(set(table["item"])) == sorted(str(i) for i in INSPECT_IDS)
    assert table.groupby("item").size().eq(EPOCHS).all()
    # Metadata come from Inspect's sample summaries, which collapse whitespace in text values
    # (inspect_ai.log's thin_text); the HTML is kept as is.
    assert {"long <i>html</i>", "short"} == set(table["kind"])
    # A metadata key clashing with a tidy column is renamed, never overwrites it.
    assert set(table["metadata_item"]) == {"clash"}
    renamed = read_table(inspect_log, scorer=SCORER, system="judge\n<b>A</b>")
    assert set(renamed["system"]) == {"judge\n<b>A</b>"}


def test_inspect_strata_from_metadata_count_like_a_tally(inspect_log):
    table = read_table(inspect_log, scorer=SCORER)
    with pytest.warns(MissingLabelWarning, match="1 row"):
        counts = bj.JudgeCounts.from_frames(
            table,
            system="system",
            stratum="kind",
            item="item",
            repeats="epoch",
            positive={"judge": "C"},
            human=None,
        )
    # The failed sample has no score: a row without a verdict, in no stratum's counts.
    scored = table.dropna(subset=["judge"]).groupby("kind").size()
    assert scored.sum() == len(table) - 1
    for kind in scored.index:
        assert counts.n.sel(stratum=kind).item() == scored[kind]
    assert counts.k.sum().item() == (table["judge"] == "C").sum()


def test_inspect_several_scorers_need_a_choice(inspect_log):
    with pytest.raises(ValueError, match=r"several scorers: 'model_graded_qa', 'match'.*scorer="):
        read_table(inspect_log)
    with pytest.raises(ValueError, match=r"no scorer 'nope'.*'model_graded_qa', 'match'"):
        read_table(inspect_log, scorer="nope")


def test_inspect_partial_credit_is_reported_as_unparsed(tmp_path):
    from harness_logs import write_inspect_log

    path = write_inspect_log(tmp_path, partial=True)
    table = read_table(path, scorer=SCORER)
    assert table.attrs["unparsed"] == {f"a\nb (epoch {e})": "P" for e in range(1, EPOCHS + 1)}
    # Counting refuses the third value rather than dropping or merging it.
    with pytest.raises(ValueError, match=r"'p' \(3 rows\)"):
        bj.JudgeCounts.from_frames(
            table, system="system", item="item", repeats="epoch", positive={"judge": "C"}
        )


def test_inspect_empty_log_is_an_error(inspect_log, tmp_path):
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(inspect_log))
    log.samples = []
    empty = tmp_path / "empty.eval"
    write_eval_log(log, str(empty))
    with pytest.raises(ValueError, match="has no samples"):
        read_table(empty)


def test_missing_extra_names_the_install_command(inspect_log, monkeypatch):
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    with pytest.raises(ImportError, match=r"pip install 'bayesjudge\[inspect\]'"):
        read_table(inspect_log)


# --- lm-evaluation-harness ----------------------------------------------------------------------


def test_lm_eval_round_trip_counts_equal_a_tally_of_the_lines(lm_samples):
    lines = [json.loads(line) for line in lm_samples.read_text().splitlines()]
    table = read_table(lm_samples, metric="acc")
    assert table.attrs["format"] == "lm-eval"
    assert set(table["system"]) == {LM_MODEL}  # from lm-eval's results_*.json beside it
    assert table["item"].tolist() == [str(line["doc_id"]) for line in lines]
    assert len(table) == LM_DOCS and set(table["metric"]) == {"acc,none"}
    counts = bj.JudgeCounts.from_frames(table, system="system", human=None)
    assert counts.n.item() == len(lines)
    assert counts.k.item() == sum(line["acc"] == 1 for line in lines)
    assert 0 < counts.k.item() < len(lines)  # the dummy model's random verdicts vary
    norm = read_table(lm_samples, metric="acc_norm,none")
    assert norm["judge"].tolist() == [line["acc_norm"] for line in lines]


def test_lm_eval_metric_filter_and_system_choices(lm_samples, tmp_path):
    with pytest.raises(ValueError, match=r"several per-sample metrics: 'acc', 'acc_norm'"):
        read_table(lm_samples)
    with pytest.raises(ValueError, match=r"no per-sample metric 'bleu'"):
        read_table(lm_samples, metric="bleu")
    with pytest.raises(ValueError, match=r"no filter 'strict'; it has 'none'"):
        read_table(lm_samples, metric="acc,strict")
    # Without the results file beside it, the system must be named.
    alone = tmp_path / lm_samples.name
    alone.write_bytes(lm_samples.read_bytes())
    with pytest.raises(ValueError, match=r"no results_\*\.json .*system="):
        read_table(alone, metric="acc")
    assert set(read_table(alone, metric="acc", system="mine")["system"]) == {"mine"}


def test_lm_eval_several_filters_need_a_choice(lm_samples, tmp_path):
    from lm_eval.loggers import EvaluationTracker

    # lm-eval's own writer, given the run's samples under two filters (as a task with a
    # filter_list writes them: one line per document and filter).
    lines = [json.loads(line) for line in lm_samples.read_text().splitlines()]
    samples = []
    for name in ("strict-match", "flexible-extract"):
        for line in lines:
            sample = dict(line, filter=name, acc=float(line["doc_id"] % 2 == (name[0] == "s")))
            sample["arguments"] = [tuple(v.values()) for v in line["arguments"].values()]
            samples.append(sample)
    tracker = EvaluationTracker(output_path=str(tmp_path))
    tracker.general_config_tracker.model_name_sanitized = "m"
    tracker.date_id = "2026-11-27T00-00-00"
    tracker.save_results_samples(task_name="tiny", samples=samples)
    (path,) = tmp_path.glob("m/samples_tiny_*.jsonl")
    with pytest.raises(ValueError, match=r"several filters: 'strict-match', 'flexible-extract'"):
        read_table(path, metric="acc", system="m")
    strict = read_table(path, metric="acc,strict-match", system="m")
    assert strict["judge"].tolist() == [float(i % 2 == 1) for i in range(LM_DOCS)]
    assert set(strict["metric"]) == {"acc,strict-match"}


# --- generic JSON Lines ---------------------------------------------------------------------------


def _write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_jsonl_columns_ids_and_both_parsers_agree(tmp_path, monkeypatch):
    records = [
        {"id": "007", "model": "a\n<b>", "verdict": "yes", "try": 1},
        {"id": "7", "model": "a\n<b>", "verdict": "no", "try": 1},
        {"id": "007", "model": "a\n<b>", "verdict": "no", "try": 2},
        {"id": "x", "model": "b", "verdict": "yes", "try": 1},
    ]
    path = _write_jsonl(tmp_path / "v.jsonl", records)
    options = {"item": "id", "judge": "verdict", "system": "model", "epoch": "try"}
    fast = read_table(path, **options)
    assert fast["item"].tolist() == ["007", "7", "007", "x"]
    assert fast["epoch"].tolist() == [1, 1, 2, 1]
    assert fast["system"].tolist() == ["a\n<b>", "a\n<b>", "a\n<b>", "b"]
    # The standard-library path (no pyarrow) reads the same table.
    monkeypatch.setattr(harness, "_records_arrow", lambda path, keys, exact: None)
    pd.testing.assert_frame_equal(read_table(path, **options), fast)


def test_jsonl_hostile_inputs(tmp_path):
    mixed = _write_jsonl(tmp_path / "m.jsonl", [{"item": 7, "judge": 1}, {"item": "7", "judge": 0}])
    with pytest.raises(ValueError, match=r"item ids 7 and '7' are different ids"):
        read_table(mixed)
    numbers = _write_jsonl(tmp_path / "n.jsonl", [{"item": 7, "judge": 1}, {"item": 8, "judge": 0}])
    assert read_table(numbers)["item"].tolist() == ["7", "8"]
    repeated = _write_jsonl(tmp_path / "r.jsonl", [{"item": "a", "judge": 1}] * 2)
    with pytest.raises(ValueError, match=r"'a' appear more than once.*epoch"):
        read_table(repeated)
    (tmp_path / "e.jsonl").write_text("\n\n")
    with pytest.raises(ValueError, match="is empty"):
        read_table(tmp_path / "e.jsonl")
    (tmp_path / "b.jsonl").write_text('{"item": "a", "judge": 1}\n{"item": oops}\n')
    with pytest.raises(ValueError, match=r"Line 2 of .* is not JSON"):
        read_table(tmp_path / "b.jsonl")
    with pytest.raises(ValueError, match=r"no key for judge='verdict'.*'item', 'judge'"):
        read_table(numbers, judge="verdict")
    blank = _write_jsonl(tmp_path / "x.jsonl", [{"item": "a", "judge": 1}, {"item": None}])
    with pytest.raises(ValueError, match=r"record\(s\) 2 have no value for .item."):
        read_table(blank)
    missing = _write_jsonl(tmp_path / "v.jsonl", [{"item": "a", "judge": None}, {"item": "b"}])
    assert read_table(missing).attrs["unparsed"] == {"a (epoch 1)": None, "b (epoch 1)": None}
    with pytest.raises(ValueError, match=r"format must be one of"):
        read_table(numbers, format="yaml")
    with pytest.raises(ValueError, match=r"suffix '\.txt'"):
        harness.harness_format(tmp_path / "v.txt")


def _both_parsers(path, monkeypatch, **options):
    """Read ``path`` with pyarrow's fast path and with the standard library's exact one.

    Returns the two tables (or the two error messages) and whether the fast path was taken.
    """
    taken = []
    fast_reader = harness._records_arrow

    def spy(*args):
        result = fast_reader(*args)
        taken.append(result is not None)
        return result

    out = []
    for reader in (spy, lambda path, keys, exact: None):
        monkeypatch.setattr(harness, "_records_arrow", reader)
        try:
            out.append(read_table(path, **options))
        except ValueError as err:
            out.append(str(err))
    return out, any(taken)


def _same(pair):
    fast, exact = pair
    if isinstance(exact, str):
        assert fast == exact
        return
    pd.testing.assert_frame_equal(fast, exact)
    assert fast.attrs == exact.attrs
    for column in fast.columns:  # the same Python types, not only equal values
        assert [type(v) for v in fast[column]] == [type(v) for v in exact[column]], column


# Each case: the file's text, whether pyarrow may read it (else the exact path does), and what
# the exact path gives (a column of the table, or the error message's start).
ODD_LINES = {
    "missing and null verdicts, unicode, text ids": (
        '{"item": "007", "judge": 1, "s": "é😀"}\n{"item": "7", "judge": null, "s": "x"}\n'
        '{"item": "ü\\n", "s": "y"}\n',
        True,
        ("judge", [1, None, None]),
    ),
    "a null verdict first": (
        '{"item": "a", "judge": null}\n{"item": "b", "judge": 1}\n',
        True,
        ("judge", [None, 1]),
    ),
    "nulls among decimal and whole numbers": (
        '{"item": "a", "judge": null}\n{"item": "b", "judge": 0.5}\n{"item": "c", "judge": 1}\n',
        True,
        ("judge", [None, 0.5, 1.0]),
    ),
    # A verdict that is an object (a nested metric) is refused by the reader, whichever
    # parser: tests/data/test_harness_hostile_s10.py.
    "decimal then whole numbers": (
        '{"item": 1, "judge": 0.5}\n{"item": 2, "judge": 1}\n{"item": 3, "judge": 0}\n',
        True,
        ("judge", [0.5, 1.0, 0.0]),
    ),
    "whole then decimal numbers": (
        '{"item": 1, "judge": 1}\n{"item": 2, "judge": 0.5}\n',
        False,
        ("judge", [1.0, 0.5]),
    ),
    "booleans and text": (
        '{"item": "a", "judge": true}\n{"item": "b", "judge": "yes"}\n',
        False,
        ("judge", [True, "yes"]),
    ),
    "booleans with a null": (
        '{"item": "a", "judge": true}\n{"item": "b", "judge": null}\n{"item": "c", "judge": false}',
        True,
        ("judge", [True, None, False]),
    ),
    "windows line ends": ('{"item": "a", "judge": 1}\r\n{"item": "b", "judge": 0}\r\n', True, None),
    "blank lines and spaces": (
        '\n{"item": "a", "judge": 1}  \n\n {"item": "b", "judge": 0}\n',
        False,
        None,
    ),
    "a lone carriage return ends a line": (
        '{"item": "a", "judge": 1}\r{"item": "b", "judge": 0}\n',
        False,
        ("item", ["a", "b"]),
    ),
    "a decimal item id": (
        '{"item": 1.5, "judge": 1}\n{"item": 7, "judge": 0}\n',
        False,
        ("item", ["1.5", "7"]),
    ),
    "a number beyond 64 bits": (
        '{"item": "a", "judge": 99999999999999999999}\n',
        False,
        ("judge", [99999999999999999999]),
    ),
    "two records on one line": (
        '{"item": "a", "judge": 1} {"item": "b", "judge": 0}\n',
        False,
        "Line 1 ",
    ),
    "one record over two lines": ('{"item": "a",\n "judge": 1}\n', False, "Line 1 "),
    "both at once": (
        '{"item": "a", "judge": 1} {"item": "b", "judge": 0}\n{"item": "c",\n"judge": 1}\n',
        False,
        "Line 1 ",
    ),
    "a list where a record belongs": ('{"item": "a", "judge": 1}\n[1, 2]\n', False, "Line 2 "),
    "a line that is not JSON": (
        '{"item": "a", "judge": 1}\n{"item": "b", "judge": NO}\n',
        False,
        "Line 2 ",
    ),
    "ids 7 and '7'": ('{"item": 7, "judge": 1}\n{"item": "7", "judge": 0}\n', False, "The JSON"),
}


@pytest.mark.parametrize("case", list(ODD_LINES))
def test_jsonl_fast_and_exact_parsers_give_identical_tables(case, tmp_path, monkeypatch):
    text, fast, expected = ODD_LINES[case]
    path = tmp_path / "v.jsonl"
    path.write_bytes(text.encode("utf-8"))
    pair, taken = _both_parsers(path, monkeypatch)
    assert taken == fast
    _same(pair)
    exact = pair[1]
    if isinstance(expected, str):
        assert isinstance(exact, str) and exact.startswith(expected), exact
    elif expected is not None:
        assert exact[expected[0]].tolist() == expected[1]
    else:
        assert exact["item"].tolist() == ["a", "b"] and exact["judge"].tolist() == [1, 0]


_VERDICT = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["C", "I", "yes", "", " ", "é😀"]),
    st.dictionaries(st.sampled_from(["acc", "x"]), st.integers(0, 1), max_size=1),
)
_ROW = st.tuples(st.booleans(), st.booleans(), _VERDICT, st.integers(1, 3), st.booleans())


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=st.lists(_ROW, min_size=1, max_size=8), crlf=st.booleans())
def test_jsonl_parsers_agree_on_random_records(rows, crlf, tmp_path, monkeypatch):
    # Item ids numbered by row (text or a number), verdicts of every JSON type or absent,
    # epochs: both parsers give the same table, or the same error.
    lines = []
    for n, (text_id, has_verdict, verdict, epoch, ascii_only) in enumerate(rows):
        record = {"item": f"0{n}" if text_id else n, "epoch": epoch}
        if has_verdict:
            record["judge"] = verdict
        lines.append(json.dumps(record, ensure_ascii=ascii_only))
    path = tmp_path / "random.jsonl"
    path.write_bytes((("\r\n" if crlf else "\n").join(lines) + "\n").encode())
    pair, _ = _both_parsers(path, monkeypatch, epoch="epoch")
    _same(pair)
    monkeypatch.undo()


def test_without_pyarrow_the_tables_are_the_same(lm_samples, tmp_path, monkeypatch):
    rows = [{"item": i, "judge": i % 2, "system": "m", "epoch": 1} for i in (7, -3, 0, 10**12)]
    jsonl = _write_jsonl(tmp_path / "v.jsonl", rows)
    tables = []
    for missing in (False, True):
        if missing:  # an import of pyarrow now fails, as where it is not installed
            monkeypatch.setitem(sys.modules, "pyarrow", None)
        tables.append(
            (
                read_table(jsonl, system="system", epoch="epoch"),
                read_table(lm_samples, metric="acc"),
            )
        )
    for with_arrow, without in zip(*tables, strict=True):
        _same((with_arrow, without))
    assert tables[1][0]["item"].tolist() == ["7", "-3", "0", "1000000000000"]


def test_jsonl_bytes_that_are_not_utf8_are_refused_by_both_parsers(tmp_path, monkeypatch):
    # pyarrow skips the fields it does not read without checking their UTF-8; the file is
    # refused all the same, with the message the exact path gives.
    path = tmp_path / "v.jsonl"
    path.write_bytes(b'{"item": "a", "judge": 1, "note": "\xff"}\n{"item": "b", "judge": 0}\n')
    (fast, exact), _ = _both_parsers(path, monkeypatch)
    assert fast == exact and "is not UTF-8 text" in exact
    # A character cut by the scan's block boundary is still valid UTF-8.
    text = '{"item": "a", "judge": 1, "note": "' + "é" * 40 + '"}\n'
    data = np.frombuffer(text.encode(), dtype=np.uint8)
    assert harness._line_shape(data, 1, block=7)
    cut = np.frombuffer(b'{"item": "a", "judge": 1, "note": "\xc3"}\n', dtype=np.uint8)
    assert not harness._line_shape(cut, 1, block=7)  # half a character, then a quote


def test_jsonl_epochs_systems_and_gold_agree_between_parsers(tmp_path, monkeypatch):
    rows = [
        {"id": i, "model": ("m", "n")[i % 2], "verdict": [1, 0, None][i % 3], "try": 1 + i // 4}
        for i in range(12)
    ]
    path = _write_jsonl(tmp_path / "v.jsonl", rows)
    options = {"item": "id", "judge": "verdict", "system": "model", "epoch": "try"}
    pair, taken = _both_parsers(path, monkeypatch, **options)
    assert taken
    _same(pair)
    assert pair[0].attrs["unparsed"] == {f"{i} (epoch {1 + i // 4})": None for i in (2, 5, 8, 11)}
    bad = _write_jsonl(tmp_path / "e.jsonl", [{"item": "a", "judge": 1, "epoch": 1.0}])
    pair, _ = _both_parsers(bad, monkeypatch, epoch="epoch")
    _same(pair)
    assert "epoch key must hold whole numbers >= 1; got 1.0" in pair[0]
    gold = _write_jsonl(tmp_path / "g.jsonl", [{"item": 7, "human": 1}, {"item": 8, "human": 0.5}])
    log = pd.DataFrame({"item": ["7", "8"], "system": "m", "judge": [1, 0], "epoch": 1})
    monkeypatch.setattr(harness, "_records_arrow", lambda path, keys, exact: None)
    exact = join_gold(log, gold).test
    monkeypatch.undo()
    pd.testing.assert_frame_equal(join_gold(log, gold).test, exact)
    assert exact["human"].tolist() == [1, 0.5]


def test_lm_eval_fast_and_exact_parsers_agree_on_odd_lines(lm_samples, tmp_path, monkeypatch):
    # lm-eval's own lines, three of them altered: a null metric, a metric lm-eval writes as an
    # object, text beyond ASCII in the document.
    lines = [json.loads(line) for line in lm_samples.read_text().splitlines()]
    lines[1]["acc"] = None
    lines[2]["acc"] = {"score": 1.0}
    lines[3]["doc"] = {"question": "¿Qué? 😀"}
    folder = tmp_path / "run"
    folder.mkdir()
    results = next(lm_samples.parent.glob("results_*.json"))
    (folder / results.name).write_bytes(results.read_bytes())
    for name, altered in (("same", False), ("odd", True)):
        path = folder / lm_samples.name.replace("samples_", f"samples_{name}")
        chosen = lines if altered else [json.loads(x) for x in lm_samples.read_text().splitlines()]
        path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in chosen))
        pair, taken = _both_parsers(path, monkeypatch, metric="acc")
        assert taken == (not altered)  # an object where a number was: the exact path
        _same(pair)
    table = pair[1]
    assert table["judge"].tolist()[1:3] == [None, {"score": 1.0}]
    assert set(table.attrs["unparsed"]) == {"1 (epoch 1)", "2 (epoch 1)"}


# --- gold files -----------------------------------------------------------------------------------


def _log(items, systems=("m",), verdicts=None):
    rows = [(i, s) for s in systems for i in items]
    judge = verdicts or [("C", "I")[n % 2] for n in range(len(rows))]
    return pd.DataFrame(
        {"item": [r[0] for r in rows], "system": [r[1] for r in rows], "judge": judge, "epoch": 1}
    )


def test_join_gold_random_design_one_table(tmp_path):
    log = _log(["007", "7", "a", "b", "c", "d"])
    gold = tmp_path / "gold.csv"
    gold.write_text("item,human\n007,yes\na,no\nc,yes\n")  # CSV ids are text: 007 stays 007
    joined = join_gold(log, gold)
    assert joined.design == "random" and joined.calibration is None
    assert joined.test["human"].tolist() == ["yes", np.nan, "no", np.nan, "yes", np.nan]
    counts = bj.JudgeCounts.from_frames(joined.test, item="item", system="system",
                                        positive={"judge": "C"})  # fmt: skip
    # Direct tally: labelled 007 (C, yes), a (C, no), c (C, yes); unlabelled 7, b, d all "I":
    # m0 = 1 (a), tn = 0, m1 = 2 (007, c), tp = 2.
    assert (counts.n.item(), counts.k.item()) == (3, 0)
    assert (counts.m0.item(), counts.tn.item(), counts.m1.item(), counts.tp.item()) == (1, 0, 2, 2)
    assert counts.design == "random"


def test_join_gold_stratified_design(tmp_path):
    log = _log(["1", "2", "3"])
    gold = pd.DataFrame({"item": ["c1", "c2"], "human": ["yes", "no"], "judge": ["C", "C"]})
    joined = join_gold(log, gold)
    assert joined.design == "stratified"
    counts = bj.JudgeCounts.from_frames(
        joined.test, joined.calibration, positive={"judge": "C"}, design=joined.design
    )
    assert (counts.n.item(), counts.k.item(), counts.m1.item(), counts.tp.item()) == (3, 2, 1, 1)
    assert (counts.m0.item(), counts.tn.item()) == (1, 0)


def test_join_gold_errors_name_the_items():
    log = _log(["007", "8"])
    with pytest.raises(ValueError, match=r"not in the log: '7'.*'007' is not '7'"):
        join_gold(log, pd.DataFrame({"item": [7, "8"], "human": ["yes", "no"]}).astype(str))
    with pytest.raises(ValueError, match=r"1 labelled item\(s\) of the gold file are in the log"):
        join_gold(log, pd.DataFrame({"item": ["8", "z"], "human": [1, 0], "judge": ["C", "I"]}))
    with pytest.raises(ValueError, match=r"rows without an item id \(rows 2\)"):
        join_gold(log, pd.DataFrame({"item": ["8", None], "human": [1, 0]}))
    with pytest.raises(ValueError, match=r"labels '8' more than once"):
        join_gold(log, pd.DataFrame({"item": ["8", "8"], "human": [1, 0]}))
    with pytest.raises(ValueError, match=r"no column 'human'"):
        join_gold(log, pd.DataFrame({"item": ["8"], "label": [1]}))
    with pytest.raises(ValueError, match=r"2 systems and the gold file has no 'system' column"):
        join_gold(_log(["1"], systems=("a", "b")), pd.DataFrame({"item": ["1"], "human": [1]}))


def test_a_separate_calibration_set_without_systems_serves_every_system():
    # Its own ids and judge column, no system column: the stratified design, one set for both
    # systems (counted once by with_calibration_from); judged ids without a system stay an error.
    log = _log(["1", "2"], systems=("a", "b"))
    gold = pd.DataFrame({"item": ["c1", "c2"], "judge": ["C", "I"], "human": ["yes", "no"]})
    joined = join_gold(log, gold)
    assert joined.design == "stratified"
    assert joined.test.values.tolist() == log.values.tolist()
    assert joined.calibration.values.tolist() == gold.values.tolist()
    tests = bj.JudgeCounts.from_frames(
        joined.test, system="system", item="item", human=None, positive={"judge": "C"}
    )
    labelled = bj.JudgeCounts.from_frames(
        None, joined.calibration, positive={"judge": "C"}, design="stratified"
    )
    counts = tests.with_calibration_from(labelled)
    assert counts.calibration_shared_over == ("system",)
    assert counts.m1.values.ravel().tolist() == [1, 1] and counts.tp.values.ravel().tolist() == [
        1,
        1,
    ]
    mixed = pd.DataFrame({"item": ["1", "c2"], "judge": ["C", "I"], "human": ["yes", "no"]})
    with pytest.raises(ValueError, match=r"2 systems and the gold file has no 'system' column"):
        join_gold(log, mixed)


def test_join_gold_by_system_and_epoch():
    log = pd.concat([_log(["1", "2"], systems=("a", "b")).assign(epoch=e) for e in (1, 2)])
    gold = pd.DataFrame(
        {"item": ["1", "2"], "system": ["a", "b"], "epoch": [2, 1], "human": ["yes", "no"]}
    )
    joined = join_gold(log, gold)
    labelled = joined.test.dropna(subset=["human"])
    assert labelled[["item", "system", "epoch", "human"]].values.tolist() == [
        ["2", "b", 1, "no"],
        ["1", "a", 2, "yes"],
    ]


def test_join_gold_reads_jsonl_and_keeps_unlabelled_rows(tmp_path):
    gold = _write_jsonl(tmp_path / "gold.jsonl", [{"item": "a", "human": 1}])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        joined = join_gold(_log(["a", "b"]), gold)
    assert joined.test["human"].isna().tolist() == [False, True]
    assert joined.test["human"].iloc[0] == 1
    assert len(joined.test) == 2  # never a row dropped


# --- docs/harness.md ------------------------------------------------------------------------------


def test_harness_page_example_runs(tmp_path, monkeypatch, capsys):
    import re
    from pathlib import Path

    from harness_logs import _grade, write_inspect_log

    # The page's run.eval: one epoch of 60 questions; gold.csv labels the first 30 (random
    # design; both verdicts among them), the human agreeing with the mock grader on all but 3.
    ids = [f"q-{i:03d}" for i in range(60)]
    log = write_inspect_log(tmp_path, ids=ids, epochs=1)
    monkeypatch.chdir(tmp_path)
    log.rename(tmp_path / "run.eval")
    labels = [("yes" if (_grade(i, 1) == "C") != (i in (4, 9, 14)) else "no") for i in range(30)]
    Path("gold.csv").write_text(
        "item,human\n" + "".join(f"{ids[i]},{h}\n" for i, h in enumerate(labels))
    )
    page = (Path(__file__).resolve().parents[2] / "docs" / "harness.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    assert len(blocks) == 2
    (block,) = [b for b in blocks if "run.eval" in b]
    namespace = {}
    exec(compile(block, "docs/harness.md", "exec"), namespace)
    printed = capsys.readouterr().out
    assert "random 30 30" in printed
    counts = namespace["counts"]
    assert (counts.n.item(), counts.m0.item() + counts.m1.item()) == (30, 30)
    assert counts.m0.item() == labels.count("no")
    assert np.isfinite(namespace["result"]["estimate"]).all()


def test_harness_page_k_category_example_runs(tmp_path, monkeypatch, capsys):
    import re
    from pathlib import Path

    # The page's prefs.jsonl: two systems judging 30 pairs A/tie/B; prefs_gold.csv labels the
    # first 12 of each system's (the random design), the judge wrong on every fifth label.
    cats = ["A", "tie", "B"]
    truth = [cats[(i * 7) % 3] for i in range(30)]
    records, gold = [], ["item,system,human"]
    for s, model in enumerate(["m1", "m2"]):
        for i in range(30):
            verdict = truth[i] if (i + s) % 5 else cats[(cats.index(truth[i]) + 1) % 3]
            records.append({"item": f"p{i}", "model": model, "judge": verdict})
        gold += [f"p{i},{model},{truth[i]}" for i in range(12)]
    monkeypatch.chdir(tmp_path)
    Path("prefs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    Path("prefs_gold.csv").write_text("\n".join(gold) + "\n")
    page = (Path(__file__).resolve().parents[2] / "docs" / "harness.md").read_text()
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", page, flags=re.S) if "prefs" in b]
    namespace = {}
    exec(compile(block, "docs/harness.md", "exec"), namespace)
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "random [18, 18] [12, 12]"
    # The same counts from the rows directly: 18 unlabelled verdicts and a 3 x 3 table each.
    counts = namespace["counts"]
    for model in ["m1", "m2"]:
        rows = [r for r in records if r["model"] == model]
        test = [sum(r["judge"] == c for r in rows[12:]) for c in cats]
        assert counts.test.sel(system=model).values.ravel().tolist() == test
        table = [[sum(truth[i] == t and rows[i]["judge"] == v for i in range(12)) for v in cats]
                 for t in cats]  # fmt: skip
        assert counts.calibration.sel(system=model).values.squeeze().tolist() == table
    score = namespace["result"]["score"].values.ravel().round(3).tolist()
    assert printed[1] == str(score) and all(0 <= x <= 1 for x in score)
