"""Sufficient statistics of a judge evaluation: the :class:`JudgeCounts` container.

Every estimator in bayesjudge needs only six counts per group (system × stratum): the test
counts ``n`` and ``k`` and the calibration counts ``m0``, ``tn``, ``m1`` and ``tp``.
:class:`JudgeCounts` holds them in an :class:`xarray.Dataset` and builds them either from
numbers (:meth:`JudgeCounts.from_counts`) or from item-level tables
(:meth:`JudgeCounts.from_frames`), counting on the user's dataframe engine through narwhals.
"""

from __future__ import annotations

import csv
import importlib.util
import itertools
import math
import unicodedata
import warnings
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, NamedTuple

import narwhals.stable.v2 as nw
import numpy as np
import xarray as xr

from bayesjudge.core._validation import MAX_COUNT, as_count, format_values
from bayesjudge.warnings import MissingLabelWarning

__all__ = ["JudgeCounts"]

DIMS = ("system", "stratum")
FIELDS = ("n", "k", "m0", "tn", "m1", "tp")
TEST_FIELDS = ("n", "k")
CALIBRATION_FIELDS = ("m0", "tn", "m1", "tp")
DEFAULT_LABEL = "all"
POOLED_LABEL = "pooled"
# Dataset attribute naming the dims along which one calibration set is repeated (comma-joined,
# a netCDF-friendly string): those copies are one set of labelled items, not several.
SHARED_ATTR = "calibration_shared_over"
# The optional joint verdict table of the systems' test verdicts on shared items.
JOINT = "joint"
PATTERN = "pattern"
VERDICT = "verdict"
JOINT_DIMS = ("stratum", PATTERN)
MAX_FULL_SYSTEMS = 16

_MEANING = {
    "n": "test items",
    "k": "test items the judge called correct",
    "m0": "calibration items humans called incorrect",
    "tn": "calibration items humans and judge both called incorrect",
    "m1": "calibration items humans called correct",
    "tp": "calibration items humans and judge both called correct",
}
# (sub-count, total) pairs: the sub-count counts items among the total.
_PAIRS = (("k", "n"), ("tn", "m0"), ("tp", "m1"))
_MAX_GROUPS_SHOWN = 5

_POSITIVE_WORDS = frozenset({"yes", "correct", "pass", "true", "1"})
_NEGATIVE_WORDS = frozenset({"no", "incorrect", "fail", "false", "0"})
_RECOGNISED = (
    "booleans, the numbers 0/1 (also as text, e.g. '1' or '1.0'), and (case-insensitive, "
    "whitespace-stripped) yes/no, correct/incorrect, pass/fail, true/false"
)
# Aliases for the columns of the counting query; unlikely to clash with user columns.
_KEY = "__bayesjudge_{}__"
_ROWS = "__bayesjudge_rows__"
_ROW_INDEX = "__bayesjudge_row_index__"
_VERDICT_KEY = "__bayesjudge_verdict__"
# Systems per int64 verdict-pattern code in the per-item query of item= (see _joint_from_frame).
_CODE_BITS = 62


# --------------------------------------------------------------------------- helpers


def _group_name(system: Hashable, stratum: Hashable) -> str:
    return f"system={system!r}, stratum={stratum!r}"


def _describe_groups(
    mask: np.ndarray, parts: Sequence[tuple[str, np.ndarray]], systems, strata
) -> str:
    """List the groups where ``mask`` holds, e.g. ``n=-1 in (system='a', stratum='all')``."""
    where = np.argwhere(mask)
    items = []
    for i, j in where[:_MAX_GROUPS_SHOWN]:
        values = " > ".join(f"{name}={_plain(arr[i, j])!r}" for name, arr in parts)
        items.append(f"{values} in ({_group_name(systems[i], strata[j])})")
    more = len(where) - _MAX_GROUPS_SHOWN
    return "; ".join(items) + (f"; … ({more} more groups)" if more > 0 else "")


def _check_counts(values: Mapping[str, Any], systems, strata) -> dict[str, np.ndarray]:
    """Validate six (S, T) count arrays group by group and return them as int64."""
    out = {}
    for name in FIELDS:
        arr = np.asarray(values[name])
        if arr.dtype == object and arr.size and all(_is_number(v) for v in arr.flat):
            # Python ints beyond int64 (and mixed int/float lists) arrive as object arrays.
            _check_count_limit(
                name, np.array([abs(v) > MAX_COUNT for v in arr.flat]), arr, systems, strata
            )
            arr = arr.astype(float)
        if arr.dtype == bool or arr.dtype.kind not in "iuf":
            raise ValueError(
                f"{name} ({_MEANING[name]}) must hold whole-number counts; got values of type "
                f"{arr.dtype} ({format_values(arr) if arr.dtype.kind in 'US' else 'non-numeric'}). "
                f"Pass integers such as 0, 1, 2, and 0 for a group without items."
            )
        with np.errstate(invalid="ignore"):
            as_float = arr.astype(float)
        bad = ~np.isfinite(as_float) | (as_float < 0) | (as_float != np.round(as_float))
        if bad.any():
            raise ValueError(
                f"{name} ({_MEANING[name]}) must be a non-negative whole number in every group; "
                f"got {format_values(arr[bad])}: "
                f"{_describe_groups(bad, [(name, arr)], systems, strata)}. "
                f"Pass item counts (0, 1, 2, …), not proportions, and 0 for a group "
                f"without items."
            )
        _check_count_limit(
            name, (arr if arr.dtype.kind in "iu" else as_float) > MAX_COUNT, arr, systems, strata
        )
        out[name] = as_float.astype(np.int64) if arr.dtype.kind == "f" else arr.astype(np.int64)
    for small, big in _PAIRS:
        bad = out[small] > out[big]
        if bad.any():
            raise ValueError(
                f"{small} ({_MEANING[small]}) counts items among the {big} ({_MEANING[big]}), "
                f"so it cannot exceed {big}; got "
                f"{_describe_groups(bad, [(small, out[small]), (big, out[big])], systems, strata)}"
                f". Check that the counts were not swapped."
            )
    return out


def _is_number(value) -> bool:
    """Whether ``value`` is a real number (not a bool): int, float or their numpy types."""
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(
        value, bool | np.bool_
    )


def _check_count_limit(name: str, too_big: np.ndarray, arr: np.ndarray, systems, strata) -> None:
    """Refuse counts above :data:`MAX_COUNT`, which float64 arithmetic could not keep exact."""
    too_big = np.asarray(too_big).reshape(np.shape(arr))
    if too_big.any():
        raise ValueError(
            f"{name} ({_MEANING[name]}) exceeds the largest count bayesjudge accepts, "
            f"2**53 = {MAX_COUNT} (the largest whole number that float64 arithmetic keeps "
            f"exact): {_describe_groups(too_big, [(name, arr)], systems, strata)}. Check the "
            f"counts for an overflow or a units mistake; counts this large cannot be exact."
        )


def _dims_arg(dim) -> list[str]:
    """Validate a ``dim=`` argument of "system", "stratum" or a sequence of them."""
    dims = [dim] if isinstance(dim, str) else list(dim)
    if not dims or any(d not in DIMS for d in dims):
        raise ValueError(f"dim must be 'system' and/or 'stratum'; got {dim!r}.")
    return dims


def _shared_dims(value) -> tuple[str, ...]:
    """Parse the calibration_shared_over attribute into dims, in DIMS order."""
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",") if v.strip()]
    else:
        items = [str(v) for v in np.atleast_1d(value)]
    bad = [v for v in items if v not in DIMS]
    if bad:
        raise ValueError(
            f"attrs[{SHARED_ATTR!r}] must name dims among {list(DIMS)}; got {value!r}."
        )
    return tuple(d for d in DIMS if d in items)


def _is_missing(value) -> bool:
    """Return True for None, NaN, NaT and pandas.NA (empty strings are handled by callers)."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except TypeError:  # pandas.NA refuses to be a bool
        return type(value).__name__ == "NAType"


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _rows(count: int) -> str:
    return f"{count} row{'' if count == 1 else 's'}"


def _label_array(name: str, labels) -> np.ndarray:
    """Return group labels as a 1-D array after checking they are present and unique."""
    if isinstance(labels, np.ndarray):
        labels = labels.tolist()  # a 0-d array becomes a scalar
    if isinstance(labels, str | bytes) or not isinstance(labels, Iterable):
        labels = [labels]
    values = [_plain(v) for v in labels]
    if not values:
        raise ValueError(f"{name} needs at least one label; got an empty list.")
    if any(_is_blank(v) for v in values):
        raise ValueError(
            f"{name} labels must not be missing (None/NaN) or empty; got {values!r}. Give "
            f"every group a label."
        )
    duplicates = [v for v, c in Counter(values).items() if c > 1]
    if duplicates:
        raise ValueError(
            f"{name} labels must be unique; got duplicates {duplicates!r} in {values!r}. "
            f"Add up the counts of groups that share a label, or rename them."
        )
    _check_group_labels(name, None, dict.fromkeys(((type(v), v) for v in values), ""))
    # Keep strings as strings and ints as ints; only genuinely mixed labels become object.
    if all(isinstance(v, str) for v in values):
        return np.array(values, dtype=str)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return np.array(values, dtype=np.int64)
    return np.array(values, dtype=object)


def _sorted_labels(labels: Iterable[Hashable]) -> list:
    labels = list(set(labels))
    try:
        return sorted(labels)
    except TypeError:  # mixed types such as 1 and "a": sort by type name, then text
        return sorted(labels, key=lambda v: (type(v).__name__, str(v)))


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


# ------------------------------------------------------------------ reading the tables


class _CsvLayout(NamedTuple):
    """What one pass of :mod:`csv` over a delimited file found (see :func:`_csv_layout`)."""

    header: list[str]
    blank_rows: list[int]  # positions (0-based, as polars counts rows) of blank lines


def _file_label(path: Path, table_name: str, *, start: bool = False) -> str:
    """Return ``the test file 'x.csv'`` (``The ...`` with ``start``), for messages."""
    return f"{'The' if start else 'the'} {table_name} file {str(path)!r}"


def _csv_layout(path: Path, table_name: str, separator: str) -> _CsvLayout:
    """Check the structure of a CSV/TSV file in one pass and return its header.

    The engines guess where the csv module does not: polars names a repeated header
    ``judge_duplicated_0``, reads a blank line as a row of missing values and fails on a row
    with extra fields without naming it; pandas renames repeated headers and fills short rows
    with NaN. So the file is read once with :mod:`csv` first, and any of these is an error
    naming the file and line: an empty file, a blank or repeated header, a row with more or
    fewer fields than the header. Blank lines are not rows; their positions are returned so
    that the engine's rows for them can be left out.
    """
    where = _file_label(path, table_name)
    blank: list[int] = []
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle, delimiter=separator)
            header = next(reader, None)
            if header is None:
                raise ValueError(
                    f"{_file_label(path, table_name, start=True)} is empty: it has no header "
                    f"line. Write the column names (e.g. judge,human) on its first line and one "
                    f"row per item below."
                )
            if not header:
                raise ValueError(
                    f"Line 1 of {where} is blank; the first line must be the header (the "
                    f"column names). Remove the blank line(s) at the top."
                )
            repeated = [name for name, c in Counter(header).items() if c > 1]
            if repeated:
                raise ValueError(
                    f"The header of {where} names the column(s) {repeated!r} more than once "
                    f"(header: {header!r}), so which column is meant is ambiguous. Give every "
                    f"column its own name."
                )
            width = len(header)
            # Fast path: the field counts alone, at C speed; a second pass finds the lines.
            if set(map(len, reader)) <= {width}:
                return _CsvLayout(header, [])
            handle.seek(0)
            reader = csv.reader(handle, delimiter=separator)
            next(reader)
            for position, row in enumerate(reader):
                if len(row) == width:
                    continue
                if not row:
                    blank.append(position)
                    continue
                what = "more" if len(row) > width else "fewer"
                raise ValueError(
                    f"Line {reader.line_num} of {where} has {len(row)} "
                    f"field{'s' if len(row) > 1 else ''}, {what} than the "
                    f"{width} columns of its header {header!r}: {row!r}. Fix that row (quote "
                    f"values that contain the separator {separator!r})."
                )
    except UnicodeDecodeError as err:
        raise ValueError(
            f"{_file_label(path, table_name, start=True)} is not UTF-8 text (byte "
            f"{err.start} cannot be decoded). Save it as UTF-8, or load it yourself and pass "
            f"the table."
        ) from None
    except csv.Error as err:
        raise ValueError(
            f"Line {reader.line_num} of {where} cannot be read as CSV: {err}. Fix that line."
        ) from None
    return _CsvLayout(header, blank)


def _as_frame(table, table_name: str):
    """Return ``table`` (a dataframe or a file path) as a narwhals LazyFrame.

    CSV/TSV files are read with every column as text, so that identifiers are never
    type-guessed (``01`` stays ``01``, ``NA`` stays ``NA``); label columns are matched as
    text too (see :func:`_classify`). Parquet files keep their stored column types.
    """
    if isinstance(table, str | Path):
        path = Path(table)
        if path.is_dir():
            raise IsADirectoryError(
                f"{_file_label(path, table_name, start=True)} is a directory, not a file. Pass "
                f"the path of a .csv, .tsv, .parquet or .pq file (for a folder of Parquet "
                f"files, pass pl.scan_parquet('folder/*.parquet') or a DuckDB relation)."
            )
        if not path.is_file():
            raise FileNotFoundError(f"The {table_name} file {str(path)!r} does not exist.")
        suffix = path.suffix.lower()
        if suffix in (".csv", ".tsv"):
            separator = "\t" if suffix == ".tsv" else ","
            layout = _csv_layout(path, table_name, separator)
            if _installed("polars"):
                if not layout.blank_rows:
                    return nw.scan_csv(
                        str(path), backend="polars", separator=separator, infer_schema=False
                    )
                frame = nw.scan_csv(
                    str(path),
                    backend="polars",
                    separator=separator,
                    infer_schema=False,
                    row_index_name=_ROW_INDEX,
                )
                return frame.filter(~nw.col(_ROW_INDEX).is_in(layout.blank_rows)).drop(_ROW_INDEX)
            # pandas skips blank lines itself; keep_default_na=False keeps "NA", "None" and
            # "nan" as text (empty cells stay "" and count as missing).
            return nw.read_csv(
                str(path),
                backend="pandas",
                separator=separator,
                dtype=str,
                keep_default_na=False,
                skip_blank_lines=True,
                encoding="utf-8-sig",
            ).lazy()
        if suffix in (".parquet", ".pq"):
            if _installed("polars"):
                return nw.scan_parquet(str(path), backend="polars")
            if _installed("pyarrow"):
                return nw.read_parquet(str(path), backend="pyarrow").lazy()
            raise ValueError(
                f"Reading the Parquet file {str(path)!r} ({table_name} table) needs pyarrow or "
                f"polars, and neither is installed. Install one (pip install pyarrow) or load "
                f"the file yourself and pass the table."
            )
        raise ValueError(
            f"Cannot read the {table_name} file {str(path)!r}: only .csv, .tsv, .parquet and "
            f".pq files are read directly. Load it yourself and pass the table (pandas, "
            f"polars or pyarrow)."
        )
    try:
        return nw.from_native(table).lazy()
    except TypeError:
        raise TypeError(
            f"{table_name} must be a pandas, polars (eager or lazy) or pyarrow table, a "
            f"DuckDB relation, a Dask or PySpark DataFrame, or the path of a CSV or Parquet "
            f"file; got {type(table).__name__}."
        ) from None


def _id_key(column: str, dtype, from_file: bool) -> nw.Expr:
    """Return a system, stratum or item column; read from a file, as text.

    A CSV file is read as text already; a Parquet file's integer (bool, date, ...) id column
    is cast to text here, so that a file gives the same labels whatever its format (``1`` in
    a Parquet file and ``1`` in a CSV file are one system). Float columns keep their type:
    the engines spell ``1.0`` as text differently, and NaN must stay missing.
    """
    expr = nw.col(column)
    if not _cast_id(dtype, from_file):
        return expr
    return expr.cast(nw.String)


def _cast_id(dtype, from_file: bool) -> bool:
    """Whether :func:`_id_key` casts a column of this dtype to text."""
    return from_file and not isinstance(dtype, nw.String | nw.Float32 | nw.Float64)


def _label_key(column: str, dtype) -> nw.Expr:
    """Normalise a label column on the user's engine (strip and lowercase strings)."""
    expr = nw.col(column)
    if isinstance(dtype, nw.Categorical | nw.Enum):
        expr = expr.cast(nw.String)
    if isinstance(dtype, nw.String | nw.Categorical | nw.Enum):
        expr = expr.str.strip_chars().str.to_lowercase()
    # Object columns (pandas) may mix types; their distinct values are normalised in Python.
    return expr


def _normalise(value):
    """Canonical form of one distinct label value: None for missing, else str/bool/number."""
    if isinstance(value, np.generic):
        value = value.item()
    if _is_missing(value):
        return None
    if isinstance(value, str):
        value = value.strip().lower()
        return value or None
    return value


def _numeric(value) -> Decimal | None:
    """Return the exact value of a numeric label (also text such as ``"1.0"``), else None.

    Booleans are not numbers here; NaN and infinities have no value to compare.
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, Decimal):
        return value if value.is_finite() else None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            number = Decimal(value)
        except InvalidOperation:
            return None
        return number if number.is_finite() else None
    return None


def _matches(value, target) -> bool:
    """Whether the (normalised) label ``value`` is the (normalised) positive ``target``.

    Equal values match; otherwise a number, numeric text or a bool matches by value, so that
    ``positive="2"`` (as the command line passes it) finds ``2`` in a numeric column and
    ``positive=2`` finds ``"2"`` in a column read as text. ``"true"``/``"false"`` match the
    booleans.
    """
    if isinstance(value, bool) or isinstance(target, bool):
        flag, other = (value, target) if isinstance(value, bool) else (target, value)
        if isinstance(other, bool):
            return flag is other
        if isinstance(other, str) and other in ("true", "false"):
            return flag is (other == "true")
        return _numeric(other) == int(flag)
    if type(value) is type(target) and value == target:
        return True
    number = _numeric(value)
    return number is not None and number == _numeric(target)


def _shown(values: Mapping[Any, int]) -> str:
    """Return ``'a' (3 rows), 'b' (1 row)``, most frequent first."""
    return ", ".join(
        f"{v!r} ({_rows(c)})" for v, c in sorted(values.items(), key=lambda kv: -kv[1])
    )


class _PositiveUse(NamedTuple):
    """Whether one label column holds the value of ``positive=`` (checked across tables)."""

    column: str
    where: str  # "test table", "test table 'x.csv'", ...
    held: bool
    values: dict  # the column's distinct non-missing labels and their row counts


def _classify(
    values: Mapping[Any, int], column: str, where: str, positive
) -> tuple[dict, _PositiveUse | None]:
    """Map each distinct non-missing label to 1 (correct) or 0 (incorrect).

    With ``positive``, also returns whether the column holds it: a column may hold only the
    other value (all incorrect), but a positive that no label column holds is an error, raised
    by :meth:`JudgeCounts.from_frames` once every table is counted.
    """
    if positive is not None:
        target = _normalise(positive)
        if target is None:
            raise ValueError(
                f"positive={positive!r} is empty or missing; pass the label value that means "
                f"correct in column {column!r} of the {where}."
            )
        matched = [v for v in values if _matches(v, target)]
        if len({type(v) for v in matched}) > 1:
            raise ValueError(
                f"positive={positive!r} matches several different values of column {column!r} "
                f"in the {where}: {_shown({v: values[v] for v in matched})}; they would be "
                f"counted as one label. Convert the column to one type (e.g. all text or all "
                f"numbers) so that its values are distinct."
            )
        others = [v for v in values if v not in matched]
        if not matched and len(others) > 1:
            raise ValueError(
                f"positive={positive!r} is not a value of column {column!r} in the {where}, "
                f"which holds {_shown(values)}. Pass the value that means correct, exactly as "
                f"the column holds it (text is compared stripped and lowercased, numbers by "
                f"value)."
            )
        if len(others) > 1:
            shown = _shown({v: values[v] for v in others})
            raise ValueError(
                f"With positive={positive!r}, column {column!r} in the {where} must "
                f"hold {target!r} and at most one other value (meaning incorrect); it also "
                f"holds {shown}. Fix the stray values or the value of positive=."
            )
        use = _PositiveUse(column, where, bool(matched), dict(values))
        return {v: int(v in matched) for v in values}, use
    mapping, unknown = {}, {}
    for v in values:
        if isinstance(v, bool):
            mapping[v] = int(v)
        elif isinstance(v, str) and v in _POSITIVE_WORDS:
            mapping[v] = 1
        elif isinstance(v, str) and v in _NEGATIVE_WORDS:
            mapping[v] = 0
        elif _numeric(v) in (0, 1):  # 0/1 as numbers or as text such as "1.0"
            mapping[v] = int(_numeric(v))
        else:
            unknown[v] = values[v]
    if unknown:
        raise ValueError(
            f"Column {column!r} in the {where} has labels that are not recognised: "
            f"{_shown(unknown)}. Recognised labels are {_RECOGNISED}. Pass positive=<value "
            f"meaning correct> (e.g. positive='good'), or positive={{{column!r}: ...}} for this "
            f"column only, when the column holds that value and one other."
        )
    return mapping, None


def _check_positive_held(positive, uses: Sequence[_PositiveUse]) -> None:
    """Refuse a ``positive=`` value that no label column it applies to holds (a typo).

    A column may hold only the other value (every item incorrect) as long as another column
    the same positive applies to — the other label column, or the same column of the other
    table — holds it.
    """
    scopes: dict[Any, list[_PositiveUse]] = defaultdict(list)
    for use in uses:
        scopes[use.column if isinstance(positive, Mapping) else None].append(use)
    for scope, scope_uses in scopes.items():
        if any(use.held for use in scope_uses):
            continue
        value = positive[scope] if scope is not None else positive
        holds = "; ".join(
            f"column {use.column!r} in the {use.where} holds "
            f"{_shown(use.values) if use.values else 'no labels at all'}"
            for use in scope_uses
        )
        raise ValueError(
            f"positive={value!r} is not a value of the label column(s) it applies to, so no "
            f"item would count as correct: {holds}. Pass the value that means correct, "
            f"exactly as the column holds it (text is compared stripped and lowercased, "
            f"numbers by value)."
        )


class _Counted(NamedTuple):
    """One table counted by :func:`_count_table`."""

    per_group: dict[tuple, Counter]  # group -> Counter of label tuples
    item_query: Any  # _ItemQuery or None
    positive_uses: list  # _PositiveUse per label column when positive= applies
    labels: dict  # dim -> {(type, label): where}: the group labels, for cross-table checks
    where: str


def _is_blank(value) -> bool:
    """Missing (None, NaN, NA) or text that is empty after stripping: no label at all."""
    return _is_missing(value) or (isinstance(value, str) and not value.strip())


def _missing_lines(path: Path, column: str) -> str:
    """`` (lines 3, 7)``: where a CSV file has no value in ``column`` (for messages)."""
    separator = "\t" if path.suffix.lower() == ".tsv" else ","
    lines = []
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle, delimiter=separator)
        position = next(reader).index(column)
        for row in reader:
            if row and not row[position].strip():
                lines.append(reader.line_num)
    if not lines:
        return ""
    more = f", … ({len(lines) - _MAX_GROUPS_SHOWN} more)" if len(lines) > _MAX_GROUPS_SHOWN else ""
    shown = ", ".join(str(n) for n in lines[:_MAX_GROUPS_SHOWN])
    return f" (line{'s' if len(lines) > 1 else ''} {shown}{more})"


def _typed_labels(frame, column: str, dtype, distinct: Iterable) -> set[tuple]:
    """Distinct ``(type, label)`` pairs of a group column.

    pandas groups an object column by equality, so that ``1``, ``1.0`` and ``True`` fall into
    one group silently; for such columns the pairs are taken from the values themselves.
    """
    if isinstance(dtype, nw.Object) and frame.implementation.is_pandas():
        series = nw.to_native(frame)[column]
        return {(type(v), v) for v in map(_plain, series[series.notna()])}
    return {(type(v), v) for v in distinct}


def _check_group_labels(dim: str, column: str | None, labels: Mapping[tuple, str]) -> None:
    """Refuse distinct labels that print alike or compare equal (``1`` and ``'1'``).

    ``labels`` maps ``(type, label)`` to where it was found. Such labels would become
    separate groups that print alike, or be merged silently; neither is a guess to make for
    the user.
    """
    by_text: dict[str, list] = defaultdict(list)
    by_value: dict[Any, list] = defaultdict(list)
    for key in labels:
        by_text[unicodedata.normalize("NFC", str(key[1]).strip())].append(key)
        by_value[key[1]].append(key)  # 1, 1.0 and True are one dict key
    clashes = {frozenset(keys) for keys in (*by_text.values(), *by_value.values()) if len(keys) > 1}
    if not clashes:
        return
    wheres = set(labels.values())

    def show(key) -> str:
        place = f", {labels[key]}" if len(wheres) > 1 else ""
        return f"{key[1]!r} ({key[0].__name__}{place})"

    shown = "; ".join(
        " and ".join(show(k) for k in sorted(keys, key=lambda k: (k[0].__name__, repr(k[1]))))
        for keys in sorted(clashes, key=lambda ks: sorted(repr(k[1]) for k in ks))[:3]
    )
    more = f" (and {len(clashes) - 3} more)" if len(clashes) > 3 else ""
    if column is None:  # labels given directly (from_counts, a Dataset's coordinates)
        raise ValueError(
            f"The {dim} labels include different values that print alike or compare equal: "
            f"{shown}{more}. They would become separate {dim}s that look the same, so they "
            f"are refused. Give each {dim} one label of one type, without surrounding spaces."
        )
    raise ValueError(
        f"Column {column!r} ({dim}) holds {dim} labels that are different values but print "
        f"alike or compare equal: {shown}{more}. They would become separate {dim}s that look "
        f"the same, or be merged silently, so they are refused. Make the labels one type "
        f"with no surrounding spaces in every table (e.g. df[{column!r}].astype(str).str."
        f"strip()) if they name the same {dim}, or rename them if they do not."
    )


def _count_table(
    table,
    table_name: str,
    labels: dict[str, str],
    groups: dict[str, str | None],
    positive,
    item: str | None = None,
) -> _Counted:
    """Count one item table by group and label combination.

    Returns per-group counters keyed by label tuples (0/1 per label column, in the order of
    ``labels``); every group seen is a key, including those whose rows were all dropped.
    The counting query runs on the table's own engine; only the small result is collected.
    With ``item`` (a column name), also returns the :class:`_ItemQuery` from which
    :func:`_joint_from_frame` counts the joint verdict table of the first label column once
    all systems are known; otherwise None.
    """
    frame = _as_frame(table, table_name)
    path = Path(table) if isinstance(table, str | Path) else None
    where = f"{table_name} table" + (f" {str(path)!r}" if path is not None else "")
    schema = frame.collect_schema()
    names = schema.names()
    wanted = {**labels, **{dim: col for dim, col in groups.items() if col is not None}}
    if item is not None:
        wanted["item"] = item
    for role, column in wanted.items():
        if column not in names:
            shared = (
                f" If one calibration set serves every {role}, count it on its own "
                f"(JudgeCounts.from_frames(calibration=...) without {role}=) and attach it "
                f"with test_counts.with_calibration_from(...)."
                if role in DIMS and table_name == "calibration"
                else ""
            )
            near = [n for n in names if n.strip().casefold() == column.strip().casefold()]
            hint = (
                f" Column {near[0]!r} differs only in case or surrounding spaces; pass "
                f"{role}={near[0]!r} or rename it."
                if near
                else ""
            )
            raise ValueError(
                f"Column {column!r} ({role}) is not in the {where}; its columns are "
                f"{names}. Pass {role}=<column name> naming the right column.{hint}{shared}"
            )
        if isinstance(schema[column], nw.List | nw.Array | nw.Struct):
            raise ValueError(
                f"Column {column!r} ({role}) in the {where} holds nested values of type "
                f"{schema[column]} (a list or struct per row); the {role} column needs one "
                f"plain value (text, number or bool) per row. Extract that value first, e.g. "
                f"with .explode({column!r}) or .list.first()."
            )
    clashes = [c for c, n in Counter(wanted.values()).items() if n > 1]
    if clashes:
        raise ValueError(
            f"Column {clashes[0]!r} is used for more than one role "
            f"({[r for r, c in wanted.items() if c == clashes[0]]}) in the {where}; "
            f"each of judge=, human=, system=, stratum= and item= needs its own column."
        )
    from_file = path is not None
    exprs = [
        _id_key(groups[d], schema[groups[d]], from_file).alias(_KEY.format(d))
        for d in DIMS
        if groups[d] is not None
    ]
    exprs += [_label_key(col, schema[col]).alias(_KEY.format(role)) for role, col in labels.items()]
    keys = [_KEY.format(d) for d in DIMS if groups[d] is not None]
    keys += [_KEY.format(role) for role in labels]
    try:
        small = frame.select(*exprs).group_by(*keys).agg(nw.len().alias(_ROWS)).collect()
    except TypeError as err:
        if "unhashable" not in str(err):
            raise
        columns = [c for c in wanted.values() if isinstance(schema[c], nw.Object)]
        raise ValueError(
            f"The {where} holds values that cannot be grouped ({err}) in its object column(s) "
            f"{columns}: a list, dict or set in a cell. Give each of these columns one plain "
            f"value (text, number or bool) per row."
        ) from None
    rows = small.to_dict(as_series=False)
    n_combos = len(rows[_ROWS])

    def column_values(key: str) -> list:
        return rows[key] if key in rows else [DEFAULT_LABEL] * n_combos

    group_values = [
        tuple(_plain(v) for v in g)
        for g in zip(*(column_values(_KEY.format(d)) for d in DIMS), strict=True)
    ]
    label_values = [[_normalise(v) for v in rows[_KEY.format(role)]] for role in labels]
    counts = rows[_ROWS]

    typed: dict[str, dict] = {}
    for d_index, dim in enumerate(DIMS):
        if groups[dim] is None:
            continue
        column = groups[dim]
        missing = sum(c for g, c in zip(group_values, counts, strict=True) if _is_blank(g[d_index]))
        if missing:
            lines = (
                _missing_lines(path, column)
                if path is not None and path.suffix.lower() in (".csv", ".tsv")
                else ""
            )
            raise ValueError(
                f"Column {column!r} ({dim}) in the {where} has {_rows(missing)}{lines} "
                f"with a missing label (empty, null or NaN). Fill in the {dim} labels or drop "
                f"those rows."
            )
        present = {g[d_index] for g in group_values}
        dtype = nw.String if _cast_id(schema[column], from_file) else schema[column]
        pairs = _typed_labels(frame, column, dtype, present)
        typed[dim] = dict.fromkeys(pairs, where)
        _check_group_labels(dim, column, typed[dim])

    mappings, uses = [], []
    for role, values in zip(labels, label_values, strict=True):
        distinct: Counter = Counter()
        for v, c in zip(values, counts, strict=True):
            if v is not None:
                distinct[v] += c
        col_positive = positive.get(labels[role]) if isinstance(positive, Mapping) else positive
        mapping, use = _classify(distinct, labels[role], where, col_positive)
        mappings.append(mapping)
        if use is not None:
            uses.append(use)

    per_group: dict[tuple, Counter] = defaultdict(Counter)
    dropped_by_column: Counter = Counter()
    dropped_by_group: Counter = Counter()
    for i, (group, rows_here) in enumerate(zip(group_values, counts, strict=True)):
        label_row = [values[i] for values in label_values]
        per_group[group]  # register the group even if all its rows are dropped
        if any(v is None for v in label_row):
            for role, v in zip(labels, label_row, strict=True):
                if v is None:
                    dropped_by_column[labels[role]] += rows_here
            dropped_by_group[group] += rows_here
            continue
        per_group[group][tuple(m[v] for m, v in zip(mappings, label_row, strict=True))] += rows_here
    if dropped_by_group:
        total = sum(dropped_by_group.values())
        is_csv = path is not None and path.suffix.lower() in (".csv", ".tsv")
        by_column = ", ".join(
            f"{c!r}: {_rows(n)}{_missing_lines(path, c) if is_csv else ''}"
            for c, n in dropped_by_column.items()
        )
        by_group = "; ".join(
            f"{_group_name(*g)}: {_rows(n)}" for g, n in sorted(dropped_by_group.items(), key=str)
        )
        warnings.warn(
            f"Dropped {total} of {sum(counts)} rows of the {where} because a label "
            f"was missing (null, NaN or empty) — by column: {by_column}; by group: {by_group}. "
            f"Fill in or remove these rows to silence this warning.",
            MissingLabelWarning,
            stacklevel=3,  # the caller of JudgeCounts.from_frames
        )
    if item is None:
        return _Counted(per_group, None, uses, typed, where)
    role = next(iter(labels))
    # The raw (engine-side) label values meaning correct and incorrect; the rest are missing.
    raw = [_plain(v) for v in rows[_KEY.format(role)]]
    by_verdict: dict[int, list] = {0: [], 1: []}
    for value, normal in zip(raw, label_values[0], strict=True):
        if normal is not None and value not in by_verdict[mappings[0][normal]]:
            by_verdict[mappings[0][normal]].append(value)
    n_groups = len(keys) - len(labels)
    query = _ItemQuery(
        frame=frame.select(
            *exprs[:n_groups],  # the group columns
            _id_key(item, schema[item], from_file).alias(_KEY.format("item")),
            exprs[n_groups].alias(_VERDICT_KEY),
        ),
        item_is_float=isinstance(schema[item], nw.Float32 | nw.Float64),
        item_is_text=_cast_id(schema[item], from_file) or isinstance(schema[item], nw.String),
        correct=by_verdict[1],
        incorrect=by_verdict[0],
    )
    return _Counted(per_group, query, uses, typed, where)


class _ItemQuery(NamedTuple):
    """What :func:`_joint_from_frame` needs to count a test table by item on its engine."""

    frame: Any  # narwhals LazyFrame: group keys, item id and (normalised) verdict key
    item_is_float: bool
    item_is_text: bool  # then an empty (or all-space) id is missing too
    correct: list  # raw verdict-key values meaning correct
    incorrect: list  # ... and incorrect; any other value is a missing verdict


# ------------------------------------------------------------------ joint verdict tables


def all_patterns(n_systems: int) -> list[str]:
    """All ``2**n_systems`` verdict patterns in canonical order, ``"1…1"`` first, ``"0…0"`` last.

    Character ``j`` of a pattern is the verdict on system ``j`` ("1" = judged correct).

    Examples
    --------
    >>> all_patterns(2)
    ['11', '10', '01', '00']
    """
    return ["".join(p) for p in itertools.product("10", repeat=int(n_systems))]


def _pattern_strings(verdict: np.ndarray) -> list[str]:
    return ["".join("1" if v else "0" for v in row) for row in np.asarray(verdict)]


def _parse_patterns(labels, n_systems: int, systems) -> np.ndarray:
    """Verdict matrix (pattern, system) from pattern labels such as ``"10"``."""
    texts = [v.decode() if isinstance(v, bytes) else str(v) for v in labels]
    bad = [t for t in texts if len(t) != n_systems or set(t) - {"0", "1"}]
    if bad:
        raise ValueError(
            f"joint pattern labels must be strings of {n_systems} characters '1'/'0', one per "
            f"system in the order {list(systems)} ('1' = judged correct); got {bad[:5]!r}"
            f"{' …' if len(bad) > 5 else ''}. Label the columns like "
            f"{all_patterns(n_systems)[: min(4, 2**n_systems)]!r}."
        )
    matrix = np.array([[c == "1" for c in t] for t in texts], dtype=np.int8)
    return matrix.reshape(len(texts), n_systems)


def _joint_arrays(joint: xr.DataArray, verdict, systems, strata) -> tuple[np.ndarray, np.ndarray]:
    """Validate a joint table and return its counts (stratum, pattern) and verdicts."""
    dims = set(joint.dims)
    if PATTERN not in dims or not dims <= set(JOINT_DIMS):
        raise ValueError(
            f"The joint verdict table must have dims ('stratum', 'pattern') (or just "
            f"'pattern' for a single stratum); got {joint.dims}."
        )
    if "stratum" in dims:
        if "stratum" in joint.indexes:
            labels = [_plain(v) for v in joint.indexes["stratum"].tolist()]
            absent = [t for t in strata if t not in labels]
            extra = [t for t in labels if t not in strata]
            if absent or extra:
                raise ValueError(
                    f"The joint verdict table's stratum labels {labels!r} must be the counts' "
                    f"strata {list(strata)!r} (missing {absent!r}, unexpected {extra!r})."
                )
            joint = joint.sel(stratum=list(strata))
        elif joint.sizes["stratum"] != len(strata):
            raise ValueError(
                f"The joint verdict table has {joint.sizes['stratum']} strata but the counts "
                f"have {len(strata)} ({list(strata)!r})."
            )
    elif len(strata) == 1:
        joint = joint.expand_dims(stratum=1)
    else:
        raise ValueError(
            f"The joint verdict table needs a 'stratum' dim: the counts have {len(strata)} "
            f"strata ({list(strata)!r})."
        )
    values = as_count("joint", joint.transpose(*JOINT_DIMS).values).astype(np.int64)
    if verdict is not None:
        matrix = np.asarray(verdict)
        if matrix.shape != (values.shape[1], len(systems)) or set(np.unique(matrix)) - {0, 1}:
            raise ValueError(
                f"The {VERDICT!r} coordinate must be a 0/1 matrix (pattern, system) of shape "
                f"{(values.shape[1], len(systems))}; got shape {matrix.shape}."
            )
        matrix = matrix.astype(np.int8)
    else:
        if PATTERN not in joint.indexes:
            raise ValueError(
                "The joint verdict table needs 'pattern' labels such as '10' (one character "
                "per system, '1' = judged correct)."
            )
        matrix = _parse_patterns(joint.indexes[PATTERN].tolist(), len(systems), systems)
    return values, matrix


def _canonical_joint(values: np.ndarray, matrix: np.ndarray):
    """Merge equal patterns, drop unobserved ones and sort ("1…1" first)."""
    merged: dict[str, np.ndarray] = {}
    for pattern, column in zip(_pattern_strings(matrix), values.T, strict=True):
        merged[pattern] = merged.get(pattern, 0) + column
    patterns = sorted((p for p, c in merged.items() if np.any(c)), reverse=True)
    n_strata, n_systems = values.shape[0], matrix.shape[1]
    table = np.zeros((n_strata, len(patterns)), dtype=np.int64)
    for j, p in enumerate(patterns):
        table[:, j] = merged[p]
    verdict = np.array([[c == "1" for c in p] for p in patterns], dtype=np.int8)
    return table, patterns, verdict.reshape(len(patterns), n_systems)


def _check_joint_against_counts(table, verdict, n, k, systems, strata) -> None:
    """Shared items are a subset of each system's test items: check n, k against them."""
    shared = table.sum(axis=1)[None, :]  # (1, stratum)
    ones = (table @ verdict).T  # (system, stratum)
    zeros = shared - ones
    for bad, parts, what in (
        (ones > k, [("joint verdict-1 count", ones), ("k", k)], "judged correct"),
        (zeros > n - k, [("joint verdict-0 count", zeros), ("n - k", n - k)], "judged incorrect"),
    ):
        if bad.any():
            raise ValueError(
                f"The joint verdict table counts more shared items {what} than the system's "
                f"test counts allow: {_describe_groups(bad, parts, systems, strata)}. The "
                f"shared items are among each system's test items, so n and k must include "
                f"them; check that the joint table and the counts come from the same items."
            )


def _joint_from_items(rows, systems, strata, item_column: str):
    """Count items judged for every system by stratum and verdict pattern.

    ``rows`` are ``(system, stratum, item, verdict or None)``. Returns the table
    (stratum, pattern) and the verdict matrix, in canonical form.
    """
    if any(_is_blank(r[2]) for r in rows):
        missing = sum(_is_blank(r[2]) for r in rows)
        raise ValueError(
            f"Column {item_column!r} (item) in the test table has {_rows(missing)} with a "
            f"missing item id. Fill in the item ids or drop those rows."
        )
    per_system_item = Counter((r[0], r[2]) for r in rows)
    repeated = [(s, i, c) for (s, i), c in per_system_item.items() if c > 1]
    if repeated:
        shown = ", ".join(f"{i!r} (system {s!r}, {c} rows)" for s, i, c in repeated[:5])
        raise ValueError(
            f"Item ids in column {item_column!r} must be unique within each system; "
            f"{len(repeated)} repeat: {shown}{' …' if len(repeated) > 5 else ''}. Remove the "
            f"duplicate rows, or give distinct items distinct ids."
        )
    item_strata: dict[Any, set] = defaultdict(set)
    item_verdicts: dict[Any, dict] = defaultdict(dict)
    for s, t, i, v in rows:
        item_strata[i].add(t)
        if v is not None:
            item_verdicts[i][s] = v
    mixed = [(i, ts) for i, ts in item_strata.items() if len(ts) > 1]
    if mixed:
        shown = ", ".join(f"{i!r} ({_sorted_labels(ts)!r})" for i, ts in mixed[:5])
        raise ValueError(
            f"An item must lie in one stratum for every system; {len(mixed)} item ids in "
            f"column {item_column!r} have several: {shown}{' …' if len(mixed) > 5 else ''}. "
            f"Make the stratum column constant per item."
        )
    t_index = {t: j for j, t in enumerate(strata)}
    counter: Counter = Counter()
    for i, verdicts in item_verdicts.items():
        if len(verdicts) == len(systems):
            pattern = "".join("1" if verdicts[s] else "0" for s in systems)
            counter[(t_index[next(iter(item_strata[i]))], pattern)] += 1
    if not counter:
        raise ValueError(
            f"No item id in column {item_column!r} has a judge verdict for every system "
            f"({list(systems)!r}), so there is no joint verdict table."
            f"{_why_nothing_shared(item_verdicts, systems)} Check that the item ids name the "
            f"same item across systems, select the systems that share items first, or omit "
            f"item= for unpaired counts."
        )
    patterns = sorted({p for _, p in counter}, reverse=True)
    table = np.zeros((len(strata), len(patterns)), dtype=np.int64)
    for (j, p), c in counter.items():
        table[j, patterns.index(p)] += c
    verdict = _parse_patterns(patterns, len(systems), systems)
    return table, verdict


def _item_rows(query: _ItemQuery) -> list[tuple]:
    """Collect the item-level rows ``(system, stratum, item id, verdict or None)``."""
    full = query.frame.collect().to_dict(as_series=False)
    n_rows = len(full[_KEY.format("item")])

    def column(key: str) -> list:
        return full[key] if key in full else [DEFAULT_LABEL] * n_rows

    verdicts = {**dict.fromkeys(query.correct, 1), **dict.fromkeys(query.incorrect, 0)}
    return [
        (_plain(s), _plain(t), _plain(i), verdicts.get(_plain(v)))
        for s, t, i, v in zip(
            column(_KEY.format("system")),
            column(_KEY.format("stratum")),
            full[_KEY.format("item")],
            full[_VERDICT_KEY],
            strict=True,
        )
    ]


def _joint_from_frame(query: _ItemQuery, systems, strata, item_column: str):
    """Count items judged for every system by stratum and verdict pattern, on the engine.

    Two ``group_by`` steps run on the table's engine as one query: per item (rows, systems,
    strata, verdicts, and the verdict pattern as bit codes), then over those per-item
    summaries; only the second, small result (one row per stratum and observed pattern,
    plus flags) is collected. If a check fails (missing or repeated item ids, an item in
    several strata, no shared item), the item rows are collected and
    :func:`_joint_from_items` raises the error that names the offending ids.
    """
    names = query.frame.collect_schema().names()
    system_key, stratum_key = _KEY.format("system"), _KEY.format("stratum")
    item_key, verdict = _KEY.format("item"), nw.col(_VERDICT_KEY)

    def flag(expr: nw.Expr) -> nw.Expr:
        return expr.cast(nw.Int64)

    def is_in(values: list) -> nw.Expr:
        return verdict.is_in(values) if values else verdict.is_null() & ~verdict.is_null()

    missing = nw.col(item_key).is_null()
    if query.item_is_float:
        missing = missing | nw.col(item_key).is_nan()
    if query.item_is_text:
        missing = missing | (nw.col(item_key).str.strip_chars() == "")
    correct = flag(is_in(query.correct))
    columns = [
        nw.col(item_key),
        flag(missing).alias("missing"),
        flag(is_in(query.correct + query.incorrect)).alias("valid"),
    ]
    if stratum_key in names:
        index = sum(
            (flag(nw.col(stratum_key) == t) * j for j, t in enumerate(strata) if j),
            start=nw.lit(0, dtype=nw.Int64),
        )
        columns.append(index.alias("stratum"))
    else:
        columns.append(nw.lit(0, dtype=nw.Int64).alias("stratum"))
    # Bit j of code c is the verdict of system c * _CODE_BITS + j (sums of distinct powers of
    # two stay below 2**_CODE_BITS, so int64 never overflows).
    n_codes = -(-len(systems) // _CODE_BITS)
    codes = [f"code{c}" for c in range(n_codes)]
    # One presence flag per system: per item, the number of systems is the sum of their
    # maxima and a repeated id shows as more rows than systems. (Not n_unique, which
    # narwhals' Dask backend sums over partitions, nor a group_by over (item, system), which
    # reduces nothing when every item has one row per system and takes twice as long.)
    present = [f"present{j}" for j in range(len(systems))] if system_key in names else []
    if present:
        for c, code in enumerate(codes):
            chunk = systems[c * _CODE_BITS : (c + 1) * _CODE_BITS]
            bits = sum(
                (flag(nw.col(system_key) == s) * (2**j) for j, s in enumerate(chunk)),
                start=nw.lit(0, dtype=nw.Int64),
            )
            columns.append((bits * correct).alias(code))
        columns += [
            (nw.col(system_key) == s).cast(nw.Int8).alias(name)
            for s, name in zip(systems, present, strict=True)
        ]
    else:
        columns.append(correct.alias(codes[0]))
    per_item = (
        query.frame.select(*columns)
        .group_by(item_key)
        .agg(
            nw.len().alias(_ROWS),
            *(nw.col(c).sum() for c in ["missing", "valid", *codes]),
            nw.col("stratum").min().alias("lo"),
            nw.col("stratum").max().alias("hi"),
            *(nw.col(name).max() for name in present),
        )
    )
    distinct = (
        sum((nw.col(name).cast(nw.Int64) for name in present), start=nw.lit(0, dtype=nw.Int64))
        if present
        else nw.lit(1, dtype=nw.Int64)
    )
    bad = (nw.col("missing") > 0) | (nw.col("lo") != nw.col("hi")) | (nw.col(_ROWS) > distinct)
    shared = flag(~bad & (nw.col("valid") == len(systems)))
    small = (
        per_item.select(
            flag(bad).alias("bad"),
            shared.alias("shared"),
            (nw.col("lo") * shared).alias("stratum"),
            *((nw.col(code) * shared).alias(code) for code in codes),
        )
        .group_by("bad", "shared", "stratum", *codes)
        .agg(nw.len().alias(_ROWS))
        .collect()
        .to_dict(as_series=False)
    )
    counter: Counter = Counter()
    for i, n_items in enumerate(small[_ROWS]):
        if small["shared"][i]:
            bits = "".join(format(int(small[code][i]), f"0{_CODE_BITS}b")[::-1] for code in codes)
            counter[(int(small["stratum"][i]), bits[: len(systems)])] += int(n_items)
    if any(small["bad"]) or not counter:
        return _joint_from_items(_item_rows(query), systems, strata, item_column)
    patterns = sorted({p for _, p in counter}, reverse=True)
    table = np.zeros((len(strata), len(patterns)), dtype=np.int64)
    for (j, p), c in counter.items():
        table[j, patterns.index(p)] += c
    return table, _parse_patterns(patterns, len(systems), systems)


def _why_nothing_shared(item_verdicts: Mapping, systems) -> str:
    """Name the systems that share no item with the others, and ids that differ only in type."""
    ids: dict[Any, set] = defaultdict(set)
    for i, verdicts in item_verdicts.items():
        for s in verdicts:
            ids[s].add(i)
    alone = [s for s in systems if not ids[s] & set().union(*(ids[o] for o in systems if o != s))]
    hints = []
    if alone:
        hints.append(f" Systems {alone!r} share no item id with any other system.")
    as_text = [{str(i) for i in ids[s]} for s in systems]
    if set.intersection(*as_text) and len({type(i) for i in item_verdicts}) > 1:
        types = sorted({type(i).__name__ for i in item_verdicts})
        hints.append(
            f" Some ids match only as text: the column mixes types {types} (e.g. 1 and '1'); "
            f"convert it to one type."
        )
    return "".join(hints)


def _attach_joint(ds: xr.Dataset, joint, systems: list, strata: list) -> xr.Dataset:
    """Add a user-given joint verdict table (array or DataArray) to a counts dataset."""
    n_systems = len(systems)
    if isinstance(joint, xr.DataArray):
        da = joint.reset_coords(drop=True)
    else:
        values = np.asarray(joint)
        if n_systems > MAX_FULL_SYSTEMS:
            raise ValueError(
                f"With {n_systems} systems, pass joint as an xarray.DataArray over the observed "
                f"patterns only (dims ('stratum', 'pattern')); a full table would have "
                f"2**{n_systems} columns."
            )
        width = 2**n_systems
        if values.ndim == 1 and len(strata) == 1:
            values = values[None, :]
        if values.ndim != 2 or values.shape != (len(strata), width):
            raise ValueError(
                f"joint must have shape (stratum, 2**K) = {(len(strata), width)}, one column "
                f"per verdict pattern in the order {all_patterns(n_systems)[:4]}"
                f"{' …' if width > 4 else ''}; got shape {values.shape}."
            )
        da = xr.DataArray(values, dims=JOINT_DIMS, coords={PATTERN: all_patterns(n_systems)})
    values, matrix = _joint_arrays(da, None, systems, strata)
    table, patterns, matrix = _canonical_joint(values, matrix)
    return ds.assign({JOINT: (JOINT_DIMS, table)}).assign_coords(
        {
            PATTERN: np.array(patterns, dtype=f"<U{max(n_systems, 1)}"),
            VERDICT: ((PATTERN, "system"), matrix),
        }
    )


# ------------------------------------------------------------------------- the class


class JudgeCounts:
    """Test and calibration counts of a judge evaluation, per system and stratum.

    A thin wrapper around an :class:`xarray.Dataset` with dimensions ``("system",
    "stratum")`` and six int64 data variables: ``n`` (test items), ``k`` (test items the judge
    called correct), ``m0`` (calibration items humans called incorrect), ``tn`` (of those, the
    judge also said incorrect), ``m1`` (calibration items humans called correct) and ``tp``
    (of those, the judge also said correct). These are the sufficient statistics of every
    estimator in bayesjudge.

    Parameters
    ----------
    dataset : xarray.Dataset or JudgeCounts
        Dataset holding the six count variables. A missing ``system`` or ``stratum``
        dimension is added with the single label ``"all"``; variables lacking a dimension are
        broadcast along it. Whole-number floats are converted to int64.

    Raises
    ------
    TypeError
        If ``dataset`` is not an :class:`xarray.Dataset`.
    ValueError
        If a count variable is missing or an extra variable is present, a dimension other
        than ``system``/``stratum`` appears, a dimension is empty or lacks (unique, present)
        coordinate labels, or a count is negative, fractional, NaN/inf, or a sub-count exceeds
        its total (``k > n``, ``tn > m0``, ``tp > m1``). The message names the variable, the
        values and the group.

    See Also
    --------
    JudgeCounts.from_counts : Build from numbers.
    JudgeCounts.from_frames : Count item-level tables (pandas, polars, pyarrow, DuckDB, Dask,
        PySpark, files).

    Notes
    -----
    Groups may lack a test set (``n == 0``) or calibration (``m0 == 0`` or ``m1 == 0``) —
    for instance a system evaluated with a shared calibration set. Derived proportions are
    NaN exactly where their denominator is zero; use :meth:`has_test` and
    :meth:`has_calibration` to find those groups, and :meth:`pooled_calibration` or
    :meth:`with_calibration_from` to supply calibration. Only the dimension coordinates are
    kept; other coordinates are dropped, attributes are kept.

    The dataset may also hold the optional joint verdict table ``joint`` (dims
    ``("stratum", "pattern")``, with the coordinate ``verdict`` (pattern, system)) of the
    systems' test verdicts on shared items; see :attr:`joint`. It is checked against ``n``
    and ``k`` (shared items are among each system's test items) and re-marginalised when
    systems are selected.

    Examples
    --------
    >>> import xarray as xr
    >>> ds = xr.Dataset({"n": 100, "k": 70, "m0": 40, "tn": 30, "m1": 60, "tp": 54})
    >>> counts = JudgeCounts(ds)
    >>> counts.sizes
    {'system': 1, 'stratum': 1}
    >>> print(counts.q1_hat().item())
    0.9
    """

    __slots__ = ("_ds",)

    def __init__(self, dataset: xr.Dataset | JudgeCounts) -> None:
        if isinstance(dataset, JudgeCounts):
            dataset = dataset.dataset
        if not isinstance(dataset, xr.Dataset):
            raise TypeError(
                f"JudgeCounts wraps an xarray.Dataset; got {type(dataset).__name__}. Use "
                f"JudgeCounts.from_counts(...) for numbers or JudgeCounts.from_frames(...) for "
                f"item tables."
            )
        present = list(dataset.data_vars)
        missing = [f for f in FIELDS if f not in dataset.data_vars]
        extra = [v for v in present if v not in (*FIELDS, JOINT)]
        if missing or extra:
            raise ValueError(
                f"The dataset must hold exactly the count variables {list(FIELDS)} (and "
                f"optionally the joint verdict table {JOINT!r}); missing {missing}, unexpected "
                f"{extra} (it holds {present}). Rename or drop variables so that exactly these "
                f"remain."
            )
        joint = dataset[JOINT] if JOINT in dataset.data_vars else None
        verdict = (
            dataset.coords[VERDICT] if joint is not None and VERDICT in dataset.coords else None
        )
        if joint is not None:
            if verdict is not None and set(verdict.dims) != {PATTERN, "system"}:
                raise ValueError(
                    f"The {VERDICT!r} coordinate must have dims ('pattern', 'system'); got "
                    f"{verdict.dims}."
                )
            dataset = dataset.drop_vars(
                [v for v in (JOINT, VERDICT, PATTERN) if v in dataset.variables]
            )
        unknown = [d for d in dataset.dims if d not in DIMS]
        if unknown:
            raise ValueError(
                f"The dataset has dimensions {unknown} besides {list(DIMS)}. Sum over them "
                f"(dataset.sum({unknown[0]!r})) or select one label before wrapping it."
            )
        for dim in DIMS:
            if dim not in dataset.dims:
                dataset = dataset.expand_dims({dim: [DEFAULT_LABEL]})
            elif dim not in dataset.indexes:
                raise ValueError(
                    f"The {dim!r} dimension has no coordinate labels; add them with "
                    f"dataset.assign_coords({dim}=[...])."
                )
            if dataset.sizes[dim] == 0:
                raise ValueError(f"The {dim!r} dimension is empty; JudgeCounts needs a group.")
        systems = _label_array("system", dataset.indexes["system"].tolist())
        strata = _label_array("stratum", dataset.indexes["stratum"].tolist())
        arrays = {f: dataset[f].broadcast_like(dataset).transpose(*DIMS).values for f in FIELDS}
        checked = _check_counts(arrays, systems.tolist(), strata.tolist())
        data_vars = {f: (DIMS, checked[f]) for f in FIELDS}
        coords = {"system": systems, "stratum": strata}
        if joint is not None:
            if verdict is not None:
                verdict = verdict.transpose(PATTERN, "system").values
            values, matrix = _joint_arrays(joint, verdict, systems.tolist(), strata.tolist())
            table, patterns, matrix = _canonical_joint(values, matrix)
            _check_joint_against_counts(
                table, matrix, checked["n"], checked["k"], systems.tolist(), strata.tolist()
            )
            data_vars[JOINT] = (JOINT_DIMS, table)
            coords[PATTERN] = np.array(patterns, dtype=f"<U{max(len(systems), 1)}")
            coords[VERDICT] = ((PATTERN, "system"), matrix)
        attrs = dict(dataset.attrs)
        shared = _shared_dims(attrs.get(SHARED_ATTR, ""))
        for dim in shared:
            axis = DIMS.index(dim)
            for f in CALIBRATION_FIELDS:
                first = np.take(checked[f], [0], axis=axis)
                if not (checked[f] == first).all():
                    raise ValueError(
                        f"The dataset says its calibration is shared over {dim!r} "
                        f"(attrs[{SHARED_ATTR!r}] = {attrs[SHARED_ATTR]!r}) but {f} differs "
                        f"between {dim} labels. Remove the attribute if each {dim} has its own "
                        f"calibration set, or attach one set with with_calibration_from(...)."
                    )
        if shared:
            attrs[SHARED_ATTR] = ",".join(shared)
        else:
            attrs.pop(SHARED_ATTR, None)
        self._ds = xr.Dataset(data_vars, coords=coords, attrs=attrs)

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_counts(
        cls,
        *,
        n=None,
        k=None,
        m0=None,
        tn=None,
        m1=None,
        tp=None,
        system=None,
        stratum=None,
        joint=None,
    ) -> JudgeCounts:
        """Build counts from numbers: scalars, or arrays with one entry per group.

        Parameters
        ----------
        n, k : int or array_like, optional
            Test items and test items the judge called correct. Give both or neither
            (neither: zeros, a calibration-only object).
        m0, tn : int or array_like, optional
            Calibration items humans called incorrect, and those the judge also called
            incorrect. Give both or neither (zeros).
        m1, tp : int or array_like, optional
            Calibration items humans called correct, and those the judge also called correct.
            Give both or neither (zeros).
        system, stratum : label or sequence of labels, optional
            Group labels. 1-D counts need ``system`` or ``stratum`` (one label per entry);
            2-D counts need both (shape ``(len(system), len(stratum))``). Scalars are used
            for every group. An absent dimension gets the single label ``"all"``.
        joint : array_like or xarray.DataArray, optional
            Joint verdict table of the systems' test verdicts on shared items (items judged
            for every system): counts of shape ``(stratum, 2**K)`` (or ``(2**K,)`` for one
            stratum), columns in the order of :func:`all_patterns` (``"1…1"`` first;
            character ``j`` is the verdict on system ``j``, ``"1"`` = judged correct); or a
            DataArray with dims ``("stratum", "pattern")`` (or ``"pattern"`` only, for one
            stratum) and pattern labels such as ``"10"`` in the order of ``system`` (any
            subset of the patterns).

        Returns
        -------
        JudgeCounts
            Validated int64 counts with dimensions ``("system", "stratum")``.

        Raises
        ------
        ValueError
            If only half of a pair is given, a shape does not match the labels, labels are
            duplicated or missing, or a count is negative, fractional, NaN/inf or exceeds
            its total (``k > n``, ``tn > m0``, ``tp > m1``); the message names the field,
            the values and the group.

        Notes
        -----
        Counts are checked, never clipped: an impossible count is an error, not a NaN.
        Omitted pairs become zeros, so test-only or calibration-only counts can be combined
        later with :meth:`with_calibration_from`.

        References
        ----------
        .. [1] Lee et al., "How to Correctly Report LLM-as-a-Judge Evaluations", Sec. 2
           (notation n, k, m0, m1 and the estimators q̂0 = tn/m0, q̂1 = tp/m1, p̂ = k/n).

        Examples
        --------
        >>> counts = JudgeCounts.from_counts(
        ...     n=[1000, 800], k=[700, 500], m0=60, tn=[42, 45], m1=140, tp=[126, 120],
        ...     system=["model-a", "model-b"],
        ... )
        >>> counts.systems, counts.strata
        (['model-a', 'model-b'], ['all'])
        >>> counts.p_hat().values.ravel().tolist()
        [0.7, 0.625]
        """
        given = {"n": n, "k": k, "m0": m0, "tn": tn, "m1": m1, "tp": tp}
        for total, sub in (("n", "k"), ("m0", "tn"), ("m1", "tp")):
            if (given[total] is None) != (given[sub] is None):
                absent, other = (total, sub) if given[total] is None else (sub, total)
                raise ValueError(
                    f"{absent} ({_MEANING[absent]}) is missing while {other} is given; pass "
                    f"both {total} and {sub}, or neither for zeros."
                )
        if all(v is None for v in given.values()):
            raise ValueError(
                "No counts given; pass n and k (test), m0/tn/m1/tp (calibration), or both."
            )
        systems = _label_array("system", system) if system is not None else None
        strata = _label_array("stratum", stratum) if stratum is not None else None
        if systems is None and strata is None:
            shape: tuple[int, ...] = ()
        elif strata is None:
            shape = (len(systems),)
        elif systems is None:
            shape = (len(strata),)
        else:
            shape = (len(systems), len(strata))
        full = (
            len(systems) if systems is not None else 1,
            len(strata) if strata is not None else 1,
        )
        arrays = {}
        for name, value in given.items():
            arr = np.zeros((), dtype=np.int64) if value is None else np.asarray(value)
            if arr.ndim and arr.shape != shape:
                if not shape:
                    hint = (
                        "1-D counts need system= (or stratum=) labels, one per entry; 2-D "
                        "counts need both"
                    )
                else:
                    hint = (
                        f"the labels give shape {shape} (system: "
                        f"{'none' if systems is None else len(systems)}, stratum: "
                        f"{'none' if strata is None else len(strata)}); pass one value per "
                        f"group or a scalar for all groups"
                    )
                raise ValueError(f"{name} has shape {arr.shape} but {hint}.")
            arrays[name] = np.broadcast_to(arr, shape).reshape(full)
        systems = systems if systems is not None else np.array([DEFAULT_LABEL])
        strata = strata if strata is not None else np.array([DEFAULT_LABEL])
        checked = _check_counts(arrays, systems.tolist(), strata.tolist())
        ds = xr.Dataset(
            {f: (DIMS, checked[f]) for f in FIELDS},
            coords={"system": systems, "stratum": strata},
        )
        if joint is not None:
            ds = _attach_joint(ds, joint, systems.tolist(), strata.tolist())
        return cls(ds)

    @classmethod
    def from_frames(
        cls,
        test=None,
        calibration=None,
        *,
        judge: str = "judge",
        human: str = "human",
        system: str | None = None,
        stratum: str | None = None,
        positive=None,
        item: str | None = None,
    ) -> JudgeCounts:
        """Count item-level tables of judge verdicts and human labels.

        Parameters
        ----------
        test : dataframe or path, optional
            One row per test item, with the judge's verdict in column ``judge`` (and
            optional ``system``/``stratum`` columns). A pandas, polars (``DataFrame`` or
            ``LazyFrame``) or pyarrow table, a DuckDB relation
            (:class:`duckdb.DuckDBPyRelation`), a Dask DataFrame or a PySpark DataFrame —
            anything :func:`narwhals.from_native` accepts — or the path (``str`` or
            :class:`pathlib.Path`) of a ``.csv``/``.tsv`` or ``.parquet``/``.pq`` file.
        calibration : dataframe or path, optional
            One row per calibration item, with columns ``judge`` and ``human`` (and the same
            optional group columns). At least one of ``test`` and ``calibration`` is needed.
        judge, human : str, default "judge", "human"
            Names of the judge-verdict and human-label columns.
        system, stratum : str, optional
            Names of the group columns. When given, both tables must have them; when
            omitted, the dimension has the single label ``"all"``.
        positive : scalar or mapping, optional
            The label value meaning "correct", for labels outside the recognised vocabulary.
            A scalar applies to every label column; a mapping ``{column: value}`` to the named
            columns only. String values are compared stripped and lowercased; a number and
            numeric text match by value (``"2"`` finds ``2`` and ``2.0``, ``"1"`` finds
            ``True``), so that a positive given as text (as on the command line) works on a
            numeric column. Some label column it applies to must hold it.
        item : str, optional
            Name of an item-id column of the test table. When given, the items judged for
            every system (shared items) are also counted by stratum and by the pattern of
            the judge's verdicts across systems: the joint verdict table :attr:`joint`, which
            paired comparisons use. ``n`` and ``k`` still count all of a system's items.

        Returns
        -------
        JudgeCounts
            Counts per group. Groups found in only one table get zeros for the other set.

        Raises
        ------
        ValueError
            If a column is missing (the message lists the columns that exist) or holds lists
            or structs, a group column has missing (empty, null, NaN) values, two group labels
            differ but print alike or compare equal (``1`` and ``"1"``, ``1`` and ``1.0``,
            ``"a"`` and ``" a"``, within or across the tables), a label column holds
            unrecognised values (the message lists them with row counts and suggests
            ``positive=``), ``positive`` is held by no label column it applies to, matches
            values of different types or leaves more than one other value, or a file cannot
            be read: an unknown suffix, an empty file, a repeated header name, a row with more
            or fewer fields than the header, text that is not UTF-8 (the message names the
            file and line). With ``item``: if an item id is missing, repeats within a system
            (the message names the ids), lies in different strata for different systems, or
            no item has a verdict for every system.
        TypeError
            If a table is not a dataframe or a path.
        FileNotFoundError
            If a path does not exist.
        IsADirectoryError
            If a path is a directory.

        Warns
        -----
        MissingLabelWarning
            When rows with a missing judge or human label (null, NaN or empty string) are
            dropped; the message gives the row counts per column and per group.

        Notes
        -----
        *Labels.* Without ``positive``, a label column may hold booleans, the numbers 0 and 1,
        or (case-insensitive, surrounding whitespace ignored) "yes"/"no", "correct"/
        "incorrect", "pass"/"fail", "true"/"false", "1"/"0"; words from different pairs may
        be mixed; numbers written as text (``"1.0"``) count by value. With ``positive``, the
        column must hold that value and at most one other (which then means incorrect); a
        column holding only the other value is all incorrect, provided another column the
        positive applies to (the other label column, or the same column of the other table)
        holds it. Any third value, and a positive that no such column holds, is an error
        rather than being silently counted as incorrect, so that typos surface.

        *Files.* Every column of a CSV/TSV file is read as text, and the system, stratum and
        item columns of a Parquet file are cast to text (float columns keep their type), so
        that identifiers are never type-guessed: ``01`` and ``1`` are two systems, ``007``
        and ``7`` two items, and ``NA``, ``None``, ``nan`` or ``1e3`` are labels like any
        other (an empty cell is missing). Select labels of such counts as text
        (``counts.sel(system="1")``). A CSV file is first read once with :mod:`csv` to check
        its structure (header, fields per row); blank lines are not rows.

        *Engines.* The tables are never converted to pandas. Through narwhals, one query per
        table — label normalisation (strip, lowercase), ``group_by`` over group and label
        columns and a row count — runs on the table's own engine, lazily for polars
        LazyFrames, DuckDB relations, Dask and PySpark DataFrames and files (CSV is scanned
        with polars when installed, else read with pandas; Parquet needs polars or pyarrow).
        Only the small table of distinct (group, label) combinations is collected and
        checked in Python. With ``item``, one more query on the engine groups the test table
        by item, then by stratum and verdict pattern; only one row per (stratum, observed
        pattern) is collected. Grouping by item touches every item, so it costs more than
        the counts. Only when an item check fails are the test table's group, item and
        verdict columns collected, to name the offending ids.

        *Groups.* Coordinates are the union of the labels in both tables, sorted (mixed
        types: by type name, then text), so the result does not depend on row order or
        engine. A group whose rows all lack labels is kept with zero counts.

        *Items.* With ``item``, an item enters the joint table when every system has a
        (non-missing) verdict on it; rows with a missing verdict are dropped with the
        :class:`~bayesjudge.warnings.MissingLabelWarning` above, so their item is then not
        shared. Items not shared by all systems stay in ``n`` and ``k`` — nothing is dropped
        from the estimates; how many there are per system is shown in the repr and in
        ``counts.joint.attrs["unshared_items"]``, and comparisons treat them as unpaired.
        Only the test table is read for the joint table; the calibration table ignores
        ``item``.

        References
        ----------
        .. [1] Lee et al., "How to Correctly Report LLM-as-a-Judge Evaluations", Sec. 2
           (test and calibration sets and their counts).
        .. [2] Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", Sec. 4 and
           App. A (shared versus model-specific calibration).

        Examples
        --------
        >>> import pandas as pd
        >>> test = pd.DataFrame({"model": ["a", "a", "b"], "judge": ["yes", "no", "YES "]})
        >>> calib = pd.DataFrame({"model": ["a", "a", "b"], "judge": [1, 0, 1],
        ...                       "human": [1, 1, 0]})
        >>> counts = JudgeCounts.from_frames(test, calib, system="model")
        >>> print(counts.to_frame().to_string(index=False))
        system stratum  n  k  m0  tn  m1  tp
             a     all  2  1   0   0   2   1
             b     all  1  1   1   0   0   0
        """
        if test is None and calibration is None:
            raise ValueError("Pass a test table, a calibration table, or both.")
        if positive is not None and isinstance(positive, Mapping):
            stray = [c for c in positive if c not in (judge, human)]
            if stray:
                raise ValueError(
                    f"positive= names columns {stray} that are not label columns; use the "
                    f"judge ({judge!r}) or human ({human!r}) column names as keys."
                )
        groups = {"system": system, "stratum": stratum}
        if item is not None and test is None:
            raise ValueError("item= names a column of the test table; pass a test table.")
        tables: list[_Counted] = []
        if test is not None:
            tables.append(_count_table(test, "test", {"judge": judge}, groups, positive, item=item))
        if calibration is not None:
            tables.append(
                _count_table(
                    calibration, "calibration", {"judge": judge, "human": human}, groups, positive
                )
            )
        _check_positive_held(positive, [use for t in tables for use in t.positive_uses])
        for dim in DIMS:
            if groups[dim] is not None and len(tables) > 1:
                labels: dict[tuple, str] = {}
                for t in tables:
                    for key, where in t.labels[dim].items():
                        labels[key] = f"{labels[key]} and {where}" if key in labels else where
                _check_group_labels(dim, groups[dim], labels)
        test_counts = tables[0].per_group if test is not None else {}
        calib_counts = tables[-1].per_group if calibration is not None else {}
        item_query = tables[0].item_query if test is not None else None
        all_groups = set(test_counts) | set(calib_counts)
        systems = _sorted_labels(g[0] for g in all_groups)
        strata = _sorted_labels(g[1] for g in all_groups)
        if system is None:
            systems = [DEFAULT_LABEL]
        if stratum is None:
            strata = [DEFAULT_LABEL]
        if not systems or not strata:
            empty = " and the ".join(t.where for t in tables)
            raise ValueError(
                f"The {empty} {'have' if len(tables) > 1 else 'has'} no rows, so there are no "
                f"groups to count. Pass non-empty tables."
            )
        s_index = {s: i for i, s in enumerate(systems)}
        t_index = {t: j for j, t in enumerate(strata)}
        arrays = {f: np.zeros((len(systems), len(strata)), dtype=np.int64) for f in FIELDS}
        for (s, t), counter in test_counts.items():
            i, j = s_index[s], t_index[t]
            for (verdict,), c in counter.items():
                arrays["n"][i, j] += c
                arrays["k"][i, j] += c * verdict
        for (s, t), counter in calib_counts.items():
            i, j = s_index[s], t_index[t]
            for (verdict, truth), c in counter.items():
                if truth:
                    arrays["m1"][i, j] += c
                    arrays["tp"][i, j] += c * verdict
                else:
                    arrays["m0"][i, j] += c
                    arrays["tn"][i, j] += c * (1 - verdict)
        ds = xr.Dataset(
            {f: (DIMS, arrays[f]) for f in FIELDS},
            coords={
                "system": _label_array("system", systems),
                "stratum": _label_array("stratum", strata),
            },
        )
        if item_query is not None:
            table, matrix = _joint_from_frame(item_query, systems, strata, item)
            ds = ds.assign({JOINT: (JOINT_DIMS, table)}).assign_coords(
                {VERDICT: ((PATTERN, "system"), matrix)}
            )
        return cls(ds)

    # ------------------------------------------------------------------- accessors

    @property
    def dataset(self) -> xr.Dataset:
        """The underlying :class:`xarray.Dataset` (int64 counts, dims system × stratum)."""
        return self._ds

    def keys(self) -> list[str]:
        """Names of the count variables (and ``"joint"`` when there is a joint table).

        Returns
        -------
        list of str
            ``["n", "k", "m0", "tn", "m1", "tp"]``, plus ``"joint"`` if :attr:`has_joint`.

        Notes
        -----
        ``counts[name]`` is ``getattr(counts, name)`` for each of these names, ``name in
        counts`` tests membership and iterating over ``counts`` yields them, as for the
        :class:`xarray.Dataset` the repr shows.

        Examples
        --------
        >>> c = JudgeCounts.from_counts(n=10, k=7)
        >>> c.keys()
        ['n', 'k', 'm0', 'tn', 'm1', 'tp']
        >>> c["k"].item(), "k" in c, "theta" in c
        (7, True, False)
        """
        return [*FIELDS, JOINT] if self.has_joint else list(FIELDS)

    def __getitem__(self, name: str) -> xr.DataArray:
        if not isinstance(name, str) or name not in self.keys():
            raise KeyError(
                f"{name!r} is not a variable of these counts; they hold {self.keys()} "
                f"(counts[name] is the same as counts.name)."
            )
        return getattr(self, name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.keys()

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    @property
    def n(self) -> xr.DataArray:
        """Test items per group."""
        return self._ds["n"]

    @property
    def k(self) -> xr.DataArray:
        """Test items the judge called correct."""
        return self._ds["k"]

    @property
    def m0(self) -> xr.DataArray:
        """Calibration items humans called incorrect."""
        return self._ds["m0"]

    @property
    def tn(self) -> xr.DataArray:
        """Calibration items humans and the judge both called incorrect."""
        return self._ds["tn"]

    @property
    def m1(self) -> xr.DataArray:
        """Calibration items humans called correct."""
        return self._ds["m1"]

    @property
    def tp(self) -> xr.DataArray:
        """Calibration items humans and the judge both called correct."""
        return self._ds["tp"]

    @property
    def systems(self) -> list:
        """System labels, in coordinate order."""
        return self._ds.indexes["system"].tolist()

    @property
    def strata(self) -> list:
        """Stratum labels, in coordinate order."""
        return self._ds.indexes["stratum"].tolist()

    @property
    def has_joint(self) -> bool:
        """Whether the counts carry a joint verdict table (see :attr:`joint`).

        Examples
        --------
        >>> JudgeCounts.from_counts(n=[3, 3], k=[2, 1], system=["a", "b"]).has_joint
        False
        """
        return JOINT in self._ds.data_vars

    @property
    def joint(self) -> xr.DataArray | None:
        """Joint verdict table of the systems' test verdicts on shared items, or None.

        Shared items are the test items judged for every system (see
        :meth:`from_frames` with ``item=``). The table counts them per stratum and per
        pattern of verdicts: coordinate ``pattern`` holds strings of ``"1"``/``"0"`` of length
        K in :attr:`systems` order (``"10"``: first system judged correct, second judged
        incorrect); only observed patterns are stored, ``"1…1"`` first. The same 0/1 matrix,
        dims ``("pattern", "system")``, is :attr:`joint_verdicts` (and the coordinate
        ``verdict`` of :attr:`dataset`; a DataArray cannot carry a coordinate over
        ``system``, which is not one of its dims).

        Returns
        -------
        xarray.DataArray or None
            int64 counts, dims ``("stratum", "pattern")``. ``attrs`` give
            ``systems`` (the system labels, the order of the pattern characters),
            ``shared_items`` (total) and ``unshared_items`` (``{system: count}``, the
            system's test items that are not in the table, ``n - shared`` summed over
            strata). None when there is no joint table.

        Examples
        --------
        >>> c = JudgeCounts.from_counts(n=[4, 5], k=[3, 2], system=["a", "b"],
        ...                             joint=[2, 1, 0, 1])
        >>> c.joint.pattern.values.tolist(), c.joint.values.ravel().tolist()
        (['11', '10', '00'], [2, 1, 1])
        >>> c.joint.attrs["unshared_items"]
        {'a': 0, 'b': 1}
        """
        if not self.has_joint:
            return None
        joint = self._ds[JOINT].copy()
        shared = joint.sum(JOINT_DIMS).item()
        unshared = (self._ds["n"].sum("stratum") - joint.sum(JOINT_DIMS)).values.tolist()
        joint.attrs = {
            "description": "shared test items by verdict pattern (1 = judged correct), "
            "characters in system order",
            "systems": self.systems,
            "shared_items": int(shared),
            "unshared_items": dict(zip(self.systems, unshared, strict=True)),
        }
        return joint

    @property
    def joint_verdicts(self) -> xr.DataArray | None:
        """The 0/1 verdict matrix of the joint table's patterns, or None.

        Returns
        -------
        xarray.DataArray or None
            int8, dims ``("pattern", "system")``: entry 1 where the pattern has the judge
            calling that system correct. None when there is no joint table.

        Examples
        --------
        >>> c = JudgeCounts.from_counts(n=[4, 5], k=[3, 2], system=["a", "b"],
        ...                             joint=[2, 1, 0, 1])
        >>> c.joint_verdicts.sel(system="a").values.tolist()
        [1, 1, 0]
        """
        if not self.has_joint:
            return None
        return self._ds[VERDICT].rename("verdict")

    def joint_table(self, full: bool = True) -> xr.DataArray:
        """Return the joint verdict table, with all 2**K patterns when ``full``.

        Parameters
        ----------
        full : bool, default True
            Fill in the unobserved patterns with zeros, in the order of :func:`all_patterns`
            (``"1…1"`` first). False returns :attr:`joint` as stored.

        Returns
        -------
        xarray.DataArray
            int64 counts, dims ``("stratum", "pattern")``, attrs as :attr:`joint`.

        Raises
        ------
        ValueError
            If there is no joint table, or ``full`` with more than 16 systems.

        Examples
        --------
        >>> c = JudgeCounts.from_counts(n=[4, 5], k=[3, 2], system=["a", "b"],
        ...                             joint=[2, 1, 0, 1])
        >>> c.joint_table().values.ravel().tolist()
        [2, 1, 0, 1]
        """
        joint = self._require_joint("joint_table")
        if not full:
            return joint
        n_systems = len(self.systems)
        if n_systems > MAX_FULL_SYSTEMS:
            raise ValueError(
                f"A full joint table of {n_systems} systems would have 2**{n_systems} "
                f"patterns; use joint_table(full=False) (observed patterns) or pair_table()."
            )
        filled = joint.reindex({PATTERN: all_patterns(n_systems)}, fill_value=0)
        filled.attrs = joint.attrs
        return filled

    def pair_table(self, a, b) -> xr.DataArray:
        """Return the 2×2 table of two systems' verdicts on the shared items, per stratum.

        Parameters
        ----------
        a, b : label
            The two systems (distinct).

        Returns
        -------
        xarray.DataArray
            int64 counts, dims ``("stratum", "cell")``, cells ``["11", "10", "01", "00"]``
            (``"10"``: ``a`` judged correct, ``b`` judged incorrect). Items shared by all
            systems of these counts, marginalised over the other systems.

        Raises
        ------
        ValueError
            If there is no joint table, a label does not exist, or ``a == b``.

        Examples
        --------
        >>> c = JudgeCounts.from_counts(n=[4, 5], k=[3, 2], system=["a", "b"],
        ...                             joint=[2, 1, 0, 1])
        >>> c.pair_table("b", "a").values.ravel().tolist()
        [2, 0, 1, 1]
        """
        self._require_joint("pair_table")
        if _plain(a) == _plain(b):
            raise ValueError(f"pair_table needs two different systems; got {a!r} twice.")
        table = self.sel(system=[a, b]).joint_table(full=True).rename({PATTERN: "cell"})
        table.attrs = {"systems": f"{a}, {b}"}
        return table

    def _require_joint(self, what: str) -> xr.DataArray:
        if not self.has_joint:
            raise ValueError(
                f"{what} needs a joint verdict table, and these counts have none; count item "
                f"tables with JudgeCounts.from_frames(..., item='item') or pass "
                f"from_counts(..., joint=...)."
            )
        return self.joint

    @property
    def calibration_shared_over(self) -> tuple[str, ...]:
        """Dims along which every group carries copies of one calibration set.

        Set by :meth:`with_calibration_from` (when one set is broadcast) and
        :meth:`pooled_calibration`; stored in ``dataset.attrs["calibration_shared_over"]``.
        Models use it so that the copies count as one set of labelled items, not several.

        Examples
        --------
        >>> tests = JudgeCounts.from_counts(n=[100, 80], k=[70, 50], system=["a", "b"])
        >>> calib = JudgeCounts.from_counts(m0=40, tn=30, m1=60, tp=54)
        >>> tests.with_calibration_from(calib).calibration_shared_over
        ('system',)
        """
        return _shared_dims(self._ds.attrs.get(SHARED_ATTR, ""))

    def shared_calibration_counts(self, dims: Sequence[str]) -> xr.Dataset:
        """Calibration counts of one set per label of the dims not in ``dims``.

        Copies of a shared set (see :attr:`calibration_shared_over`) are taken once; separate
        sets along ``dims`` are added up.

        Parameters
        ----------
        dims : sequence of {"system", "stratum"}
            Dims over which the calibration is pooled.

        Returns
        -------
        xarray.Dataset
            ``m0, tn, m1, tp`` over the remaining dims.

        Raises
        ------
        ValueError
            If the calibration is shared over a dim not in ``dims`` (one set cannot be split).

        Examples
        --------
        >>> c = JudgeCounts.from_counts(n=[100, 80], k=[70, 50], m0=[20, 30], tn=[15, 20],
        ...                             m1=[30, 20], tp=[27, 18], system=["a", "b"])
        >>> c.shared_calibration_counts(["system"])["m0"].values.tolist()
        [50]
        """
        dims = tuple(d for d in DIMS if d in dims)
        shared = self.calibration_shared_over
        outside = [d for d in shared if d not in dims]
        if outside:
            raise ValueError(
                f"These counts carry one calibration set shared over {outside} "
                f"(calibration_shared_over={shared}), so the calibration cannot be kept "
                f"separate along {outside}; pool over {list(shared)} as well."
            )
        return self._summed_calibration(dims)

    def _summed_calibration(self, dims: Sequence[str]) -> xr.Dataset:
        """Calibration counts added up over ``dims``; copies of a shared set count once."""
        shared = self.calibration_shared_over
        cal = self._ds[list(CALIBRATION_FIELDS)]
        cal = cal.isel({d: 0 for d in dims if d in shared}, drop=True)
        return cal.sum([d for d in dims if d not in shared])

    @property
    def sizes(self) -> dict[str, int]:
        """Number of labels along each dimension, ``{"system": S, "stratum": T}``."""
        return {dim: int(self._ds.sizes[dim]) for dim in DIMS}

    def _header(self) -> str:
        s, t = self.sizes["system"], self.sizes["stratum"]
        n_test = int(self._ds["n"].sum())
        n_cal = int(self._ds["m0"].sum() + self._ds["m1"].sum())
        return (
            f"JudgeCounts: {s} system{'s' if s != 1 else ''} × {t} "
            f"strat{'a' if t != 1 else 'um'}, {n_test} test items, {n_cal} calibration items"
        )

    def _joint_line(self) -> str:
        if not self.has_joint:
            return ""
        attrs = self.joint.attrs
        unshared = ", ".join(f"{s}: {c}" for s, c in attrs["unshared_items"].items())
        return (
            f"Joint verdict table: {attrs['shared_items']} test items judged for all "
            f"{len(self.systems)} systems, {self._ds.sizes[PATTERN]} observed patterns; test "
            f"items not in it (unpaired) — {unshared}"
        )

    def __repr__(self) -> str:
        joint = f"\n{self._joint_line()}" if self.has_joint else ""
        return f"{self._header()}{joint}\n{self._ds!r}"

    def _repr_html_(self) -> str:
        joint = f"<p>{self._joint_line()}</p>" if self.has_joint else ""
        return f"<p><b>{self._header()}</b></p>{joint}{self._ds._repr_html_()}"

    # ----------------------------------------------------------- derived quantities

    @staticmethod
    def _ratio(num: xr.DataArray, den: xr.DataArray, name: str) -> xr.DataArray:
        # Dividing by NaN (not by 0) yields NaN exactly where den == 0, without warnings.
        return (num / den.where(den > 0)).rename(name)

    def has_test(self) -> xr.DataArray:
        """Return where a group has test items (``n > 0``).

        Returns
        -------
        xarray.DataArray
            Boolean, dims ``("system", "stratum")``.

        Notes
        -----
        :meth:`p_hat` is NaN exactly where this is False.

        Examples
        --------
        >>> JudgeCounts.from_counts(n=[10, 0], k=[5, 0], system=["a", "b"]).has_test(
        ...     ).values.ravel().tolist()
        [True, False]
        """
        return (self._ds["n"] > 0).rename("has_test")

    def has_calibration(self) -> xr.DataArray:
        """Return where a group has calibration items of both kinds (``m0 > 0`` and ``m1 > 0``).

        Returns
        -------
        xarray.DataArray
            Boolean, dims ``("system", "stratum")``.

        Notes
        -----
        :meth:`youden_hat` is NaN exactly where this is False; :meth:`q0_hat` needs only
        ``m0 > 0`` and :meth:`q1_hat` only ``m1 > 0``.

        Examples
        --------
        >>> c = JudgeCounts.from_counts(m0=[5, 0], tn=[4, 0], m1=[5, 3], tp=[5, 2],
        ...                             system=["a", "b"])
        >>> c.has_calibration().values.ravel().tolist()
        [True, False]
        """
        return ((self._ds["m0"] > 0) & (self._ds["m1"] > 0)).rename("has_calibration")

    def p_hat(self) -> xr.DataArray:
        """Share of test items the judge called correct, ``k / n``.

        Returns
        -------
        xarray.DataArray
            Float, dims ``("system", "stratum")``; NaN exactly where ``n == 0``
            (see :meth:`has_test`).

        Notes
        -----
        NaN here means "no test items in this group", never a numerical failure; the counts
        themselves are validated, so no other NaN can occur.

        References
        ----------
        .. [1] Lee et al., "How to Correctly Report LLM-as-a-Judge Evaluations", Sec. 2
           (p̂ = k/n, the naive estimate).

        Examples
        --------
        >>> JudgeCounts.from_counts(n=[10, 0], k=[7, 0], system=["a", "b"]).p_hat(
        ...     ).values.ravel().tolist()
        [0.7, nan]
        """
        return self._ratio(self._ds["k"], self._ds["n"], "p_hat")

    def q0_hat(self) -> xr.DataArray:
        """Estimated specificity ``tn / m0``.

        Returns
        -------
        xarray.DataArray
            Float, dims ``("system", "stratum")``; NaN exactly where ``m0 == 0``.

        Notes
        -----
        NaN means "no calibration items that humans called incorrect in this group"; supply
        calibration with :meth:`pooled_calibration` or :meth:`with_calibration_from`.

        References
        ----------
        .. [1] Lee et al., "How to Correctly Report LLM-as-a-Judge Evaluations", Sec. 2
           (q̂0 = tn/m0 in the Rogan–Gladen estimator, eq. 5).

        Examples
        --------
        >>> JudgeCounts.from_counts(m0=40, tn=30, m1=60, tp=54).q0_hat().item()
        0.75
        """
        return self._ratio(self._ds["tn"], self._ds["m0"], "q0_hat")

    def q1_hat(self) -> xr.DataArray:
        """Estimated sensitivity ``tp / m1``.

        Returns
        -------
        xarray.DataArray
            Float, dims ``("system", "stratum")``; NaN exactly where ``m1 == 0``.

        Notes
        -----
        NaN means "no calibration items that humans called correct in this group".

        References
        ----------
        .. [1] Lee et al., "How to Correctly Report LLM-as-a-Judge Evaluations", Sec. 2
           (q̂1 = tp/m1 in the Rogan–Gladen estimator, eq. 5).

        Examples
        --------
        >>> JudgeCounts.from_counts(m0=40, tn=30, m1=60, tp=54).q1_hat().item()
        0.9
        """
        return self._ratio(self._ds["tp"], self._ds["m1"], "q1_hat")

    def youden_hat(self) -> xr.DataArray:
        """Estimated Youden index ``Ĵ = q̂0 + q̂1 - 1``.

        Returns
        -------
        xarray.DataArray
            Float, dims ``("system", "stratum")``; NaN exactly where
            :meth:`has_calibration` is False.

        Notes
        -----
        Ĵ near or below zero means the judge is no better than chance and corrected
        estimates, which divide by Ĵ, are unstable.

        References
        ----------
        .. [1] Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", Sec. 4
           (J = sensitivity + specificity − 1 as a judge-quality diagnostic).

        Examples
        --------
        >>> print(round(JudgeCounts.from_counts(m0=40, tn=30, m1=60, tp=54).youden_hat().item(), 2))
        0.65
        """
        return (self.q0_hat() + self.q1_hat() - 1).rename("youden_hat")

    # ------------------------------------------------------------------ reshaping

    def sel(self, system=None, stratum=None) -> JudgeCounts:
        """Select groups by label; both dimensions are always kept.

        Parameters
        ----------
        system, stratum : label or sequence of labels, optional
            Labels to keep, in the order given. A single label keeps a size-1 dimension.

        Returns
        -------
        JudgeCounts
            The selected groups.

        Raises
        ------
        ValueError
            If a label does not exist (the message lists the labels that do).

        Notes
        -----
        Unlike :meth:`xarray.Dataset.sel`, a scalar label does not drop the dimension, so the
        result is still a valid :class:`JudgeCounts`. A joint verdict table is kept: selected
        strata keep their rows, and selected systems get the patterns re-marginalised to them
        (over the items shared by all the original systems).

        Examples
        --------
        >>> c = JudgeCounts.from_counts(n=[10, 20], k=[5, 9], system=["a", "b"])
        >>> c.sel(system="b").n.values.tolist()
        [[20]]
        """
        indexers = {}
        for dim, wanted in (("system", system), ("stratum", stratum)):
            if wanted is None:
                continue
            labels = _label_array(dim, wanted).tolist()
            existing = self._ds.indexes[dim].tolist()
            unknown = [v for v in labels if v not in existing]
            if unknown:
                raise ValueError(
                    f"{dim} labels {unknown!r} do not exist; the {dim} labels are {existing!r}."
                )
            indexers[dim] = labels
        return JudgeCounts(self._ds.sel(indexers))

    def pool(self, dim: str | Sequence[str] = "system") -> JudgeCounts:
        """Add up the counts over a dimension, keeping it with the single label ``"pooled"``.

        Parameters
        ----------
        dim : {"system", "stratum"} or sequence of them, default "system"
            Dimension(s) to sum over.

        Returns
        -------
        JudgeCounts
            Counts with a size-1 ``dim`` labelled ``"pooled"``.

        Notes
        -----
        The dimension is kept (size 1) rather than dropped so that every JudgeCounts has the
        same two dimensions. Pooling calibration over systems gives the "shared calibration"
        of Fiedler, valid only if the judge's error rates do not differ between systems
        (check :meth:`youden_hat` per system first). Pooling test counts over strata is the
        unweighted total; it is not a stratified estimate. A joint verdict table is summed
        over pooled strata and dropped when systems are pooled.

        References
        ----------
        .. [1] Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", Sec. 4 and
           App. A (shared calibration).

        Examples
        --------
        >>> c = JudgeCounts.from_counts(n=[10, 20], k=[5, 9], system=["a", "b"])
        >>> pooled = c.pool("system")
        >>> pooled.systems, pooled.n.values.tolist()
        (['pooled'], [[30]])
        """
        dims = _dims_arg(dim)
        ds = self._ds[list(TEST_FIELDS)].sum(dims, keep_attrs=True)
        ds.update(self._summed_calibration(dims))
        ds.attrs[SHARED_ATTR] = ",".join(d for d in self.calibration_shared_over if d not in dims)
        ds = ds.expand_dims({d: [POOLED_LABEL] for d in dims}).transpose(*DIMS)
        if self.has_joint and "system" not in dims:  # pooled systems have no joint verdicts
            joint = self._ds[JOINT].sum("stratum").expand_dims(stratum=[POOLED_LABEL])
            ds = ds.assign({JOINT: joint.transpose(*JOINT_DIMS)})
        return JudgeCounts(ds)

    def with_calibration_from(self, other: JudgeCounts) -> JudgeCounts:
        """Return these test counts with the calibration counts of ``other``.

        Parameters
        ----------
        other : JudgeCounts
            Source of ``m0, tn, m1, tp``. Along each dimension it must either hold every
            label of ``self`` (matched by label), or have a single group whose label is not
            one of ``self``'s (such as ``"all"`` or ``"pooled"``), which is then used for
            every group.

        Returns
        -------
        JudgeCounts
            ``n`` and ``k`` from ``self``; ``m0, tn, m1, tp`` from ``other``.

        Raises
        ------
        ValueError
            If ``other`` lacks some of ``self``'s labels along a dimension and is not a
            single group to broadcast.

        Notes
        -----
        Use it to attach one shared calibration set, counted separately, to test counts of
        several systems. The same calibration items then inform every group, so estimates
        for different groups are correlated. The dims along which the set is broadcast are
        recorded in :attr:`calibration_shared_over`, so that pooling and the models count the
        copies as one set.

        References
        ----------
        .. [1] Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", Sec. 4 and
           App. A (shared calibration).

        Examples
        --------
        >>> tests = JudgeCounts.from_counts(n=[100, 80], k=[70, 50], system=["a", "b"])
        >>> calib = JudgeCounts.from_counts(m0=40, tn=30, m1=60, tp=54)
        >>> tests.with_calibration_from(calib).m1.values.ravel().tolist()
        [60, 60]
        """
        other = JudgeCounts(other)
        src = other.dataset[list(CALIBRATION_FIELDS)]
        shared = set(other.calibration_shared_over)
        for dim in DIMS:
            mine = self._ds.indexes[dim].tolist()
            theirs = other.dataset.indexes[dim].tolist()
            if all(v in theirs for v in mine):
                src = src.sel({dim: mine})
            elif len(theirs) == 1 and theirs[0] not in mine:
                src = src.isel({dim: 0}, drop=True)
                shared.add(dim)
            else:
                absent = [v for v in mine if v not in theirs]
                raise ValueError(
                    f"The calibration counts lack the {dim} labels {absent!r} (they have "
                    f"{theirs!r}). Give calibration for every {dim}, or a single pooled group "
                    f"(e.g. other.pool({dim!r})) to share across all of them."
                )
        ds = self._ds.copy()
        for f in CALIBRATION_FIELDS:
            ds[f] = src[f].broadcast_like(self._ds[f]).transpose(*DIMS)
        ds.attrs[SHARED_ATTR] = ",".join(d for d in DIMS if d in shared)
        return JudgeCounts(ds)

    def pooled_calibration(self, dim: str | Sequence[str] = "system") -> JudgeCounts:
        """Replace each group's calibration counts by their total over ``dim``.

        Parameters
        ----------
        dim : {"system", "stratum"} or sequence of them, default "system"
            Dimension(s) to pool the calibration over.

        Returns
        -------
        JudgeCounts
            Same groups and test counts; every group along ``dim`` gets the pooled
            ``m0, tn, m1, tp``.

        Notes
        -----
        This is the "shared calibration" design of Fiedler: one calibration set for all
        systems. It cuts labelling cost but, if the judge's error rates differ between
        systems (ΔJ ≠ 0), biases comparisons by an amount that scales with 1/J. Check the
        per-system :meth:`youden_hat` first.

        References
        ----------
        .. [1] Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", Sec. 4 and
           App. A (shared calibration and the ΔJ diagnostic).

        Examples
        --------
        >>> c = JudgeCounts.from_counts(n=[100, 80], k=[70, 50], m0=[20, 30], tn=[15, 20],
        ...                             m1=[30, 20], tp=[27, 18], system=["a", "b"])
        >>> c.pooled_calibration().m0.values.ravel().tolist()
        [50, 50]
        """
        dims = _dims_arg(dim)
        pooled = self.shared_calibration_counts(set(dims) | set(self.calibration_shared_over))
        ds = self._ds.copy()
        for f in CALIBRATION_FIELDS:
            ds[f] = pooled[f].broadcast_like(self._ds[f]).transpose(*DIMS)
        ds.attrs[SHARED_ATTR] = ",".join(
            d for d in DIMS if d in dims or d in self.calibration_shared_over
        )
        return JudgeCounts(ds)

    def to_frame(self):
        """Return the counts as a tidy :class:`pandas.DataFrame`, one row per group.

        Returns
        -------
        pandas.DataFrame
            Columns ``system, stratum, n, k, m0, tn, m1, tp`` (counts as int64), rows in
            coordinate order (system-major).

        Notes
        -----
        Every group appears, including those with zero counts.

        Examples
        --------
        >>> c = JudgeCounts.from_counts(n=[10, 20], k=[5, 9], system=["a", "b"])
        >>> print(c.to_frame()[["system", "n", "k"]].to_string(index=False))
        system  n  k
             a 10  5
             b 20  9
        """
        return self._ds[list(FIELDS)].to_dataframe().reset_index()[[*DIMS, *FIELDS]]
