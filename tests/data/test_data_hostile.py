"""The data layer never guesses, merges or drops user data (issue 13, part B).

Hostile inputs to ``JudgeCounts.from_frames``/``from_counts`` and ``bayesjudge estimate``: ids
that look like numbers or missing values, labels of mixed types, typos in ``positive=``,
malformed CSV files, nested columns and counts too large to be exact. Each either works
exactly or fails with a message naming the file, column, row or value and the fix.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pytest

import bayesjudge.data.reading as data_module
from bayesjudge.core._validation import MAX_COUNT
from bayesjudge.data import FIELDS, JudgeCounts
from bayesjudge.warnings import MissingLabelWarning


@pytest.fixture(params=["polars", "pandas"])
def csv_reader(request, monkeypatch):
    """Read CSV files with polars (the default) or with pandas (polars not installed)."""
    if request.param == "pandas":
        installed = data_module._installed
        monkeypatch.setattr(
            data_module, "_installed", lambda module: module != "polars" and installed(module)
        )
    return request.param


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", newline="")
    return path


def counts_of(counts: JudgeCounts) -> dict:
    frame = counts.to_frame()
    return {
        (s, t): tuple(int(frame.loc[i, f]) for f in FIELDS)
        for i, (s, t) in enumerate(zip(frame["system"], frame["stratum"], strict=True))
    }


# ----------------------------------------------------------- 1. ids are text in files


def test_csv_system_ids_are_text_01_and_1_are_two_systems(tmp_path, csv_reader):
    # Regression: "1" and "01" were both read as the integer 1 and merged into one system.
    path = write(tmp_path, "t.csv", "system,judge\n1,yes\n01,no\n01,no\n")
    counts = JudgeCounts.from_frames(path, system="system")
    assert counts.systems == ["01", "1"]
    assert counts.n.values.ravel().tolist() == [2, 1]
    assert counts.k.values.ravel().tolist() == [0, 1]


def test_csv_item_ids_are_text_007_and_7_are_two_items(tmp_path, csv_reader):
    # Regression: item ids "007" and "7" were both read as 7, a false duplicate-id error.
    path = write(tmp_path, "t.csv", "system,item,judge\na,007,yes\na,7,no\nb,007,yes\nb,7,yes\n")
    counts = JudgeCounts.from_frames(path, system="system", item="item")
    assert counts.n.values.ravel().tolist() == [2, 2]
    assert dict(
        zip(counts.joint.pattern.values.tolist(), counts.joint.values.ravel().tolist(), strict=True)
    ) == {"11": 1, "01": 1}


def test_csv_missing_like_ids_stay_labels(tmp_path, csv_reader):
    # pandas reads "NA", "None", "nan", "null" as missing by default; they are system names.
    names = ["NA", "None", "nan", "null", "1e3", "N/A", "-"]
    body = "".join(f"{name},yes\n" for name in names)
    counts = JudgeCounts.from_frames(
        write(tmp_path, "t.csv", "system,judge\n" + body), system="system"
    )
    assert counts.systems == sorted(names)
    assert counts.n.values.ravel().tolist() == [1] * len(names)


def test_csv_label_1_then_1_point_0_after_row_100(tmp_path, csv_reader):
    # Regression: polars inferred int64 from the first 100 rows and failed on "1.0" with a raw
    # parse error; labels are text and "1.0"/"0.0" count by value.
    path = write(tmp_path, "t.csv", "judge\n" + "1\n0\n" * 75 + "1.0\n0.0\n1.0\n")
    counts = JudgeCounts.from_frames(path)
    assert (int(counts.n.item()), int(counts.k.item())) == (153, 77)


@pytest.mark.parametrize("reader", ["polars", "pyarrow"])
def test_parquet_int_ids_are_text_and_float_ids_keep_their_type(reader, tmp_path, monkeypatch):
    if reader == "pyarrow":
        installed = data_module._installed
        monkeypatch.setattr(
            data_module, "_installed", lambda module: module != "polars" and installed(module)
        )
    pd.DataFrame({"m": [1, 10, 2], "judge": [1, 0, 1]}).to_parquet(tmp_path / "i.parquet")
    assert JudgeCounts.from_frames(tmp_path / "i.parquet", system="m").systems == ["1", "10", "2"]
    pd.DataFrame({"m": [1.0, 2.5], "judge": [1, 0]}).to_parquet(tmp_path / "f.parquet")
    assert JudgeCounts.from_frames(tmp_path / "f.parquet", system="m").systems == [1.0, 2.5]


def test_parquet_ids_are_text_too_and_match_csv_ids(tmp_path):
    frame = pd.DataFrame({"system": [1, 1, 2], "judge": [True, False, True]})
    frame.to_parquet(tmp_path / "t.parquet", index=False)
    write(tmp_path, "c.csv", "system,judge,human\n1,yes,yes\n2,no,no\n")
    counts = JudgeCounts.from_frames(tmp_path / "t.parquet", tmp_path / "c.csv", system="system")
    assert counts.systems == ["1", "2"]
    assert counts_of(counts) == {("1", "all"): (2, 1, 0, 0, 1, 1), ("2", "all"): (1, 1, 1, 1, 0, 0)}


def test_parquet_float_ids_keep_nan_missing(tmp_path):
    frame = pd.DataFrame({"system": [1.0, np.nan], "judge": ["yes", "no"]})
    frame.to_parquet(tmp_path / "t.parquet", index=False)
    with pytest.raises(ValueError, match=r"Column 'system' \(system\) .* 1 row .*missing label"):
        JudgeCounts.from_frames(tmp_path / "t.parquet", system="system")


# ------------------------------------------------------------------ 4. positive= values


def test_positive_no_column_holds_is_an_error_listing_the_values():
    # Regression: positive='goood' on a column of 'bad' counted every row as incorrect.
    only_bad = pd.DataFrame({"judge": ["bad", "bad", "Bad"]})
    with pytest.raises(
        ValueError,
        match=r"positive='goood' is not a value .*column 'judge' in the test table "
        r"holds 'bad' \(3 rows\)",
    ):
        JudgeCounts.from_frames(only_bad, positive="goood")
    both = pd.DataFrame({"judge": ["good", "bad", "bad"]})
    with pytest.raises(
        ValueError,
        match=r"positive='goood' is not a value of column 'judge' in the test table, "
        r"which holds 'bad' \(2 rows\), 'good' \(1 row\)",
    ):
        JudgeCounts.from_frames(both, positive="goood")
    with pytest.raises(ValueError, match=r"positive='goood' is not a value"):
        JudgeCounts.from_frames(calibration=both.assign(human=1), positive={"judge": "goood"})


def test_positive_held_by_another_column_allows_an_all_incorrect_column():
    test = pd.DataFrame({"judge": ["bad", "bad"]})
    cal = pd.DataFrame({"judge": ["good", "bad"], "human": ["good", "bad"]})
    counts = JudgeCounts.from_frames(test, cal, positive="good")
    assert [int(getattr(counts, f).item()) for f in FIELDS] == [2, 0, 1, 1, 1, 1]


@pytest.mark.parametrize("engine", ["pandas", "polars", "parquet", "csv"])
@pytest.mark.parametrize("positive", ["2", 2, " 2 ", "2.0", 2.0])
def test_positive_matches_numbers_and_numeric_text_by_value(engine, positive, tmp_path):
    frame = pd.DataFrame({"judge": [2, 5, 2, 2, 5]})
    if engine == "polars":
        frame = pl.from_pandas(frame)
    elif engine == "parquet":
        frame.to_parquet(tmp_path / "t.parquet", index=False)
        frame = tmp_path / "t.parquet"
    elif engine == "csv":
        frame.to_csv(tmp_path / "t.csv", index=False)
        frame = tmp_path / "t.csv"
    counts = JudgeCounts.from_frames(frame, positive=positive)
    assert (int(counts.n.item()), int(counts.k.item())) == (5, 3)


@pytest.mark.parametrize(("positive", "k"), [(True, 2), ("true", 2), ("1", 2), (0, 1), ("0", 1)])
def test_positive_on_a_boolean_column(positive, k):
    counts = JudgeCounts.from_frames(
        pd.DataFrame({"judge": [True, False, True]}), positive=positive
    )
    assert int(counts.k.item()) == k


def test_positive_matching_values_of_two_types_is_ambiguous():
    frame = pd.DataFrame({"judge": pd.Series(["1", 1, "0", 0], dtype=object)})
    with pytest.raises(
        ValueError,
        match=r"positive='1' matches several different values of column 'judge'.*"
        r"'1' \(1 row\), 1 \(1 row\).*one type",
    ):
        JudgeCounts.from_frames(frame, positive="1")


def test_empty_positive_is_refused():
    with pytest.raises(ValueError, match=r"positive='  ' is empty"):
        JudgeCounts.from_frames(pd.DataFrame({"judge": ["a", "b"]}), positive="  ")


# ------------------------------------------------- 8. labels that print alike are refused


@pytest.mark.parametrize(
    ("values", "shown"),
    [
        ([1, "1", 2], r"1 \(int\) and '1' \(str\)"),
        ([1, 1.0, 2], r"1\.0 \(float\) and 1 \(int\)"),
        ([True, 1, 2], r"True \(bool\) and 1 \(int\)"),
        (["a", " a", "b"], r"' a' \(str\) and 'a' \(str\)"),
    ],
)
def test_group_labels_that_print_alike_or_compare_equal_are_refused(values, shown):
    # Regression: 1 and "1" became two groups printed alike; pandas merged 1, 1.0 and True.
    frame = pd.DataFrame({"model": pd.Series(values, dtype=object), "judge": ["yes", "no", "no"]})
    with pytest.raises(
        ValueError, match=rf"Column 'model' \(system\) holds system labels .*{shown}"
    ):
        JudgeCounts.from_frames(frame, system="model")
    with pytest.raises(ValueError, match=rf"Column 'model' \(stratum\) .*{shown}"):
        JudgeCounts.from_frames(frame, stratum="model")


def test_group_labels_that_collide_across_tables_name_both_tables():
    test = pl.DataFrame({"model": [1, 2], "judge": ["yes", "no"]})
    cal = pd.DataFrame({"model": ["1", "2"], "judge": [1, 0], "human": [1, 0]})
    with pytest.raises(
        ValueError, match=r"1 \(int, test table\) and '1' \(str, calibration table\)"
    ):
        JudgeCounts.from_frames(test, cal, system="model")


def test_mixed_types_that_do_not_collide_are_kept():
    frame = pd.DataFrame({"model": pd.Series([1, "z", 2], dtype=object), "judge": [1, 0, 1]})
    assert JudgeCounts.from_frames(frame, system="model").systems == [1, 2, "z"]


# ---------------------------------------------------------------- 15. files and columns


def test_empty_csv_names_the_file(tmp_path, csv_reader):
    path = write(tmp_path, "empty.csv", "")
    with pytest.raises(
        ValueError, match=r"The test file '.*empty\.csv' is empty: it has no header"
    ):
        JudgeCounts.from_frames(path)
    header_only = write(tmp_path, "header.csv", "model,judge\n")
    with pytest.raises(ValueError, match=r"The test table '.*header\.csv' has no rows"):
        JudgeCounts.from_frames(header_only, system="model")


def test_directory_named_like_a_csv_is_not_reported_missing(tmp_path):
    (tmp_path / "x.csv").mkdir()
    with pytest.raises(IsADirectoryError, match=r"The test file '.*x\.csv' is a directory"):
        JudgeCounts.from_frames(tmp_path / "x.csv")


@pytest.mark.parametrize("text", ["m,judge\na,yes\nb,no\n\n", "m,judge\na,yes\n\nb,no\n\n\n"])
def test_blank_csv_lines_are_not_rows(text, tmp_path, csv_reader):
    # Regression: a trailing blank line was a row with a missing system label (an error).
    counts = JudgeCounts.from_frames(write(tmp_path, "t.csv", text), system="m")
    assert counts.n.values.ravel().tolist() == [1, 1]


def test_blank_lines_in_a_one_column_csv_are_not_dropped_rows(tmp_path, csv_reader):
    # Regression: polars read the blank line as a row with a missing label (a warning).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        counts = JudgeCounts.from_frames(write(tmp_path, "t.csv", "judge\nyes\n\nno\n\n"))
    assert (int(counts.n.item()), int(counts.k.item())) == (2, 1)


def test_blank_lines_are_skipped_for_the_joint_table_too(tmp_path, csv_reader):
    text = "m,item,judge\na,1,yes\n\nb,1,no\na,2,no\n\nb,2,yes\n"
    counts = JudgeCounts.from_frames(write(tmp_path, "t.csv", text), system="m", item="item")
    assert counts.joint.values.ravel().tolist() == [1, 1]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("m,judge\na,yes,extra\nb,no\n", r"Line 2 of the test file .* has 3 fields, more than"),
        ("m,judge\na,yes\nb,no,x\n", r"Line 3 of the test file .* has 3 fields, more than"),
        ("m,judge\na,yes\nb\n", r"Line 3 of the test file .* has 1 field, fewer than"),
        ("judge,judge\nyes,no\n", r"names the column\(s\) \['judge'\] more than once"),
        ("\nm,judge\na,yes\n", r"Line 1 of the test file .* is blank"),
    ],
)
def test_malformed_csv_is_an_error_naming_the_line(text, message, tmp_path, csv_reader):
    # Regression: extra fields were accepted silently or failed with a raw polars error, and a
    # repeated header silently used the first of the columns.
    with pytest.raises(ValueError, match=message):
        JudgeCounts.from_frames(write(tmp_path, "t.csv", text), system="m")


def test_csv_that_is_not_utf8_names_the_file(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes("m,judge\ncaf\xe9,yes\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"The test file '.*latin\.csv' is not UTF-8 text"):
        JudgeCounts.from_frames(path, system="m")


def test_missing_group_labels_in_a_csv_name_the_lines(tmp_path, csv_reader):
    path = write(tmp_path, "t.csv", "m,judge\na,yes\n,no\nb,yes\n  ,no\n")
    with pytest.raises(
        ValueError,
        match=r"Column 'm' \(system\) in the test table '.*t\.csv' has 2 rows "
        r"\(lines 3, 5\) with a missing label",
    ):
        JudgeCounts.from_frames(path, system="m")


def test_empty_item_ids_are_missing(tmp_path, csv_reader):
    path = write(tmp_path, "t.csv", "m,item,judge\na,1,yes\nb,1,no\na, ,no\nb,2,no\n")
    with pytest.raises(ValueError, match=r"Column 'item' \(item\) .* 1 row with a missing item"):
        JudgeCounts.from_frames(path, system="m", item="item")


def test_every_dropped_row_is_counted_in_the_warning(tmp_path, csv_reader):
    path = write(tmp_path, "t.csv", "m,judge\na,yes\nb,\nb,yes\nb,  \na,no\n")
    with pytest.warns(
        MissingLabelWarning,
        match=r"Dropped 2 of 5 rows of the test table '.*t\.csv' .*"
        r"'judge': 2 rows \(lines 3, 5\); by group: system='b', stratum='all': 2 rows",
    ):
        counts = JudgeCounts.from_frames(path, system="m")
    assert counts.n.values.ravel().tolist() == [2, 1]


@pytest.mark.parametrize("role", ["judge", "system"])
def test_nested_columns_are_refused_by_name(role):
    # Regression: a polars list column failed with "unhashable type: 'list'".
    frame = pl.DataFrame({"m": ["a", "b"], "judge": ["yes", "no"]})
    column = "judge" if role == "judge" else "m"
    frame = frame.with_columns(pl.col(column).map_elements(lambda v: [v], pl.List(pl.String)))
    with pytest.raises(ValueError, match=rf"Column '{column}' \({role}\) .* List\(String\)"):
        JudgeCounts.from_frames(frame, system="m")
    with pytest.raises(ValueError, match=rf"object column\(s\) \['{column}'\]"):
        JudgeCounts.from_frames(frame.to_pandas(), system="m")


# ---------------------------------------------------------- JudgeCounts as a mapping


def test_counts_support_item_access_like_attributes():
    # Regression: counts["k"] raised TypeError although counts.k worked.
    counts = JudgeCounts.from_counts(n=[4, 5], k=[3, 2], system=["a", "b"])
    for name in FIELDS:
        assert counts[name].identical(getattr(counts, name))
        assert name in counts
    assert counts.keys() == list(FIELDS) and list(counts) == list(FIELDS)
    assert "joint" not in counts and "theta" not in counts and 0 not in counts
    with pytest.raises(KeyError, match=r"'theta' is not a variable of these counts; they hold"):
        counts["theta"]
    paired = JudgeCounts.from_counts(n=[4, 5], k=[3, 2], system=["a", "b"], joint=[2, 1, 0, 1])
    assert "joint" in paired and paired["joint"].identical(paired.joint)


# ------------------------------------------------------------------------ from_counts


@pytest.mark.parametrize(
    "n",
    [
        np.int64(MAX_COUNT + 1),
        np.array([MAX_COUNT + 2], dtype=np.uint64)[0],
        2**64 + 1,
        2**70,
        1e17,
    ],
    ids=["int64", "uint64", "python-int", "huge-python-int", "float"],
)
def test_counts_above_2_to_the_53_are_refused(n):
    # Regression: 2**53 + 2 was accepted and rounded in float arithmetic; 2**63 + 2 wrapped to
    # a negative int64 and 2**70 was called "non-numeric".
    with pytest.raises(ValueError, match=r"n \(test items\) exceeds the largest count .*2\*\*53"):
        JudgeCounts.from_counts(n=n, k=1)


def test_counts_up_to_2_to_the_53_are_exact():
    counts = JudgeCounts.from_counts(n=[MAX_COUNT, 3], k=[MAX_COUNT - 1, 2], system=["a", "b"])
    assert counts.n.values.ravel().tolist() == [MAX_COUNT, 3]
    assert counts.k.values.ravel().tolist() == [MAX_COUNT - 1, 2]


@pytest.mark.parametrize("bad", [[1, np.nan], [True, False], [1.5, 2]])
def test_nan_bool_and_fractional_counts_are_refused(bad):
    with pytest.raises(ValueError, match=r"n \(test items\) must"):
        JudgeCounts.from_counts(n=bad, k=[0, 0], system=["a", "b"])


# ------------------------------------------------------------------------- the CLI


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_cli_estimate_with_integer_system_names(suffix, tmp_path, capsys, run_cli):
    # Regression: estimate failed on integer system names ("You are trying to merge on str
    # and int64 columns"), and "1"/"01" in a CSV were merged.
    test = pd.DataFrame({"model": [1, 1, 2, 2, 10], "judge": ["yes", "no", "yes", "yes", "no"]})
    if suffix == "csv":
        write(tmp_path, "t.csv", "model,judge\n1,yes\n1,no\n2,yes\n2,yes\n10,no\n01,yes\n")
    else:
        test.to_parquet(tmp_path / "t.parquet", index=False)
    code, out, err = run_cli(
        [
            "estimate",
            "--test",
            str(tmp_path / f"t.{suffix}"),
            "--system",
            "model",
            "--method",
            "naive",
            "--json",
        ]
    )
    assert code == 0, err
    systems = [row["system"] for row in json.loads(out)["results"]]
    assert systems == (["01", "1", "10", "2"] if suffix == "csv" else ["1", "10", "2"])


def test_cli_positive_on_a_numeric_column(tmp_path, capsys, run_cli):
    pd.DataFrame({"judge": [2, 1, 2]}).to_parquet(tmp_path / "t.parquet", index=False)
    args = ["estimate", "--test", str(tmp_path / "t.parquet"), "--method", "naive", "--json"]
    code, out, err = run_cli([*args, "--positive", "2"])
    assert code == 0, err
    assert json.loads(out)["results"][0]["n"] == 3
    code, out, err = run_cli([*args, "--positive", "3"])
    assert code == 2 and out == ""
    assert err.startswith("bayesjudge: error: positive='3' is not a value of column 'judge'")
    assert "holds 2 (2 rows), 1 (1 row)" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("judge\n" + "1\n" * 120 + "1.0\nmaybe\n", "labels that are not recognised: 'maybe'"),
        ("judge,judge\nyes,no\n", "names the column(s) ['judge'] more than once"),
        ("judge\nyes\nno,extra\n", "Line 3 of the test file"),
    ],
)
def test_cli_bad_csv_is_one_error_line(text, message, tmp_path, capsys, run_cli):
    path = write(tmp_path, "t.csv", text)
    code, out, err = run_cli(["estimate", "--test", str(path), "--method", "naive"])
    assert code == 2 and out == ""
    assert err.startswith("bayesjudge: error: ") and message in err
    assert err.count("\n") == 1


def test_utf8_bom_tsv_and_crlf_files(tmp_path, csv_reader):
    # The byte-order mark is not part of the first column name, also on the second pass that
    # a blank line triggers.
    bom = tmp_path / "bom.csv"
    bom.write_text("m,judge\r\na,yes\r\n\r\nb,no\r\n", encoding="utf-8-sig", newline="")
    assert JudgeCounts.from_frames(bom, system="m").systems == ["a", "b"]
    tsv = write(tmp_path, "t.tsv", "m\tjudge\n01\tyes\n1\tno\n")
    assert JudgeCounts.from_frames(tsv, system="m").systems == ["01", "1"]


def test_labels_equal_after_unicode_normalisation_are_refused():
    frame = pd.DataFrame({"m": ["e\u0301", "\u00e9"], "judge": [1, 0]})  # both print "é"
    with pytest.raises(ValueError, match=r"Column 'm' \(system\) holds system labels"):
        JudgeCounts.from_frames(frame, system="m")


def test_names_with_markup_newlines_and_dollars_are_kept_verbatim(tmp_path, csv_reader):
    path = write(tmp_path, "t.csv", 'm,judge\n"<b>x</b>",yes\n"a\nb",no\n$x$,yes\n"[a](b)",no\n')
    assert JudgeCounts.from_frames(path, system="m").systems == [
        "$x$",
        "<b>x</b>",
        "[a](b)",
        "a\nb",
    ]


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ([1, "1"], r"print alike or compare equal: 1 \(int\) and '1' \(str\)"),
        (["a", " a"], r"' a' \(str\) and 'a' \(str\)"),
        (["", "b"], r"must not be missing \(None/NaN\) or empty"),
        (["  ", "b"], r"must not be missing \(None/NaN\) or empty"),
    ],
)
def test_from_counts_refuses_labels_that_print_alike_or_are_blank(labels, message):
    with pytest.raises(ValueError, match=message):
        JudgeCounts.from_counts(n=[1, 2], k=[0, 1], system=labels)
    with pytest.raises(ValueError, match=message):
        JudgeCounts.from_counts(n=[1, 2], k=[0, 1], stratum=labels)


def test_header_with_spaces_or_other_case_is_named_in_the_error(tmp_path, csv_reader):
    path = write(tmp_path, "t.csv", "Model, judge\na,yes\n")
    with pytest.raises(
        ValueError, match=r"Column 'judge' \(judge\) is not in .* Column ' judge' differs only"
    ):
        JudgeCounts.from_frames(path, system="Model")
    with pytest.raises(ValueError, match=r"Column 'Model' differs only in case"):
        JudgeCounts.from_frames(path, system="model", judge=" judge")
