"""Reading the item tables: dataframes of any narwhals engine, CSV/TSV and Parquet files."""

from __future__ import annotations

import csv
import importlib.util
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import narwhals.stable.v2 as nw

from bayesjudge.data._common import MAX_GROUPS_SHOWN, ROW_INDEX


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


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


def as_frame(table, table_name: str):
    """Return ``table`` (a dataframe or a file path) as a narwhals LazyFrame.

    CSV/TSV files are read with every column as text, so that identifiers are never
    type-guessed (``01`` stays ``01``, ``NA`` stays ``NA``); label columns are matched as
    text too (see :func:`classify`). Parquet files keep their stored column types.
    """
    if isinstance(table, str | Path):
        path = Path(table)
        if path.is_dir():
            raise IsADirectoryError(
                f"{_file_label(path, table_name, start=True)} is a directory, not a file. Pass "
                f"the path of a .csv, .tsv, .parquet or .pq file (for a folder of Parquet "
                f"files, pass pl.scan_parquet('folder/*.parquet') or a DuckDB relation)."
            )
        if path.exists() and not path.is_file():
            raise ValueError(
                f"{_file_label(path, table_name, start=True)} is not a regular file (a device, "
                f"pipe or socket, e.g. /dev/null or a shell's <(...)): the table is read more "
                f"than once, so save it to a .csv, .tsv or .parquet file first."
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
                        str(path),
                        backend="polars",
                        separator=separator,
                        infer_schema=False,
                    )
                frame = nw.scan_csv(
                    str(path),
                    backend="polars",
                    separator=separator,
                    infer_schema=False,
                    row_index_name=ROW_INDEX,
                )
                return frame.filter(~nw.col(ROW_INDEX).is_in(layout.blank_rows)).drop(ROW_INDEX)
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


def missing_lines(path: Path, column: str) -> str:
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
    more = f", … ({len(lines) - MAX_GROUPS_SHOWN} more)" if len(lines) > MAX_GROUPS_SHOWN else ""
    shown = ", ".join(str(n) for n in lines[:MAX_GROUPS_SHOWN])
    return f" (line{'s' if len(lines) > 1 else ''} {shown}{more})"
