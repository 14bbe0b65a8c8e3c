"""Counting item tables on their own dataframe engine (:meth:`JudgeCounts.from_frames`)."""

from __future__ import annotations

import warnings
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import narwhals.stable.v2 as nw
import numpy as np
import xarray as xr

from bayesjudge.data._common import (
    DEFAULT_LABEL,
    DIMS,
    FIELDS,
    JOINT,
    JOINT_DIMS,
    KEY_COLUMN,
    PATTERN,
    ROWS_COLUMN,
    VERDICT,
    VERDICT_KEY,
    check_group_labels,
    group_name,
    is_blank,
    label_array,
    plain_value,
    rows_text,
    sorted_labels,
)
from bayesjudge.data.labels import check_positive_held, classify, normalise
from bayesjudge.data.patterns import ItemQuery, joint_from_frame
from bayesjudge.data.reading import as_frame, missing_lines
from bayesjudge.warnings import MissingLabelWarning


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


class _Counted(NamedTuple):
    """One table counted by :func:`_count_table`."""

    per_group: dict[tuple, Counter]  # group -> Counter of label tuples
    item_query: Any  # ItemQuery or None
    positive_uses: list  # _PositiveUse per label column when positive= applies
    labels: dict  # dim -> {(type, label): where}: the group labels, for cross-table checks
    where: str


def _typed_labels(frame, column: str, dtype, distinct: Iterable) -> set[tuple]:
    """Distinct ``(type, label)`` pairs of a group column.

    pandas groups an object column by equality, so that ``1``, ``1.0`` and ``True`` fall into
    one group silently; for such columns the pairs are taken from the values themselves.
    """
    if isinstance(dtype, nw.Object) and frame.implementation.is_pandas():
        series = nw.to_native(frame)[column]
        return {(type(v), v) for v in map(plain_value, series[series.notna()])}
    return {(type(v), v) for v in distinct}


class _Table(NamedTuple):
    """One item table opened for counting: its frame, where it came from, its columns."""

    frame: Any  # narwhals LazyFrame
    name: str  # "test" or "calibration"
    path: Path | None  # the file read, if any
    where: str  # "test table", "test table 'x.csv'", ... (for messages)
    schema: Any  # narwhals Schema

    @property
    def from_file(self) -> bool:
        return self.path is not None

    @property
    def is_csv(self) -> bool:
        return self.path is not None and self.path.suffix.lower() in (".csv", ".tsv")


class _Combos(NamedTuple):
    """The collected result of the counting query: one entry per distinct combination."""

    groups: list[tuple]  # (system, stratum) labels; "all" for an absent group column
    labels: list[list]  # per label column: the normalised label (None: missing)
    counts: list[int]  # rows of each combination
    raw: dict  # the collected columns, by query alias


def _open_table(table, table_name: str) -> _Table:
    """Read a dataframe or file lazily (see :func:`as_frame`) and name it for messages."""
    frame = as_frame(table, table_name)
    path = Path(table) if isinstance(table, str | Path) else None
    where = f"{table_name} table" + (f" {str(path)!r}" if path is not None else "")
    return _Table(frame, table_name, path, where, frame.collect_schema())


def _check_columns(source: _Table, wanted: dict[str, str]) -> None:
    """Check that every column of a role exists, holds plain values and has one role."""
    names = source.schema.names()
    for role, column in wanted.items():
        if column not in names:
            shared = (
                f" If one calibration set serves every {role}, count it on its own "
                f"(JudgeCounts.from_frames(calibration=...) without {role}=) and attach it "
                f"with test_counts.with_calibration_from(...)."
                if role in DIMS and source.name == "calibration"
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
                f"Column {column!r} ({role}) is not in the {source.where}; its columns are "
                f"{names}. Pass {role}=<column name> naming the right column.{hint}{shared}"
            )
        if isinstance(source.schema[column], nw.List | nw.Array | nw.Struct):
            raise ValueError(
                f"Column {column!r} ({role}) in the {source.where} holds nested values of type "
                f"{source.schema[column]} (a list or struct per row); the {role} column needs "
                f"one plain value (text, number or bool) per row. Extract that value first, "
                f"e.g. with .explode({column!r}) or .list.first()."
            )
    clashes = [c for c, n in Counter(wanted.values()).items() if n > 1]
    if clashes:
        raise ValueError(
            f"Column {clashes[0]!r} is used for more than one role "
            f"({[r for r, c in wanted.items() if c == clashes[0]]}) in the {source.where}; "
            f"each of judge=, human=, system=, stratum= and item= needs its own column."
        )


def _key_exprs(source: _Table, labels: dict[str, str], groups: dict) -> list[nw.Expr]:
    """Return the counting query's columns: the group columns (as ids), then the label columns.

    Aliased ``KEY_COLUMN.format(dim)`` and ``KEY_COLUMN.format(role)``; see :func:`_query_keys`.
    """
    exprs = [
        _id_key(groups[d], source.schema[groups[d]], source.from_file).alias(KEY_COLUMN.format(d))
        for d in DIMS
        if groups[d] is not None
    ]
    return exprs + [
        _label_key(col, source.schema[col]).alias(KEY_COLUMN.format(role))
        for role, col in labels.items()
    ]


def _query_keys(labels: dict[str, str], groups: dict) -> list[str]:
    """Return the aliases of the :func:`_key_exprs` columns, in their order."""
    keys = [KEY_COLUMN.format(d) for d in DIMS if groups[d] is not None]
    return keys + [KEY_COLUMN.format(role) for role in labels]


def _count_combos(
    source: _Table, exprs: list[nw.Expr], keys: list[str], wanted: dict[str, str]
) -> _Combos:
    """Count the rows of each (group, labels) combination on the table's engine."""
    try:
        small = (
            source.frame.select(*exprs).group_by(*keys).agg(nw.len().alias(ROWS_COLUMN)).collect()
        )
    except TypeError as err:
        if "unhashable" not in str(err):
            raise
        columns = [c for c in wanted.values() if isinstance(source.schema[c], nw.Object)]
        raise ValueError(
            f"The {source.where} holds values that cannot be grouped ({err}) in its object "
            f"column(s) {columns}: a list, dict or set in a cell. Give each of these columns "
            f"one plain value (text, number or bool) per row."
        ) from None
    rows = small.to_dict(as_series=False)
    n_combos = len(rows[ROWS_COLUMN])

    def column_values(key: str) -> list:
        return rows[key] if key in rows else [DEFAULT_LABEL] * n_combos

    groups = [
        tuple(plain_value(v) for v in g)
        for g in zip(*(column_values(KEY_COLUMN.format(d)) for d in DIMS), strict=True)
    ]
    group_keys = {KEY_COLUMN.format(d) for d in DIMS}
    labels = [[normalise(v) for v in rows[key]] for key in keys if key not in group_keys]
    return _Combos(groups, labels, rows[ROWS_COLUMN], rows)


def _group_labels(source: _Table, groups: dict, combos: _Combos) -> dict[str, dict]:
    """Check the group columns (no missing label, no look-alikes); their typed labels."""
    typed: dict[str, dict] = {}
    for d_index, dim in enumerate(DIMS):
        if groups[dim] is None:
            continue
        column = groups[dim]
        missing = sum(
            c for g, c in zip(combos.groups, combos.counts, strict=True) if is_blank(g[d_index])
        )
        if missing:
            lines = missing_lines(source.path, column) if source.is_csv else ""
            raise ValueError(
                f"Column {column!r} ({dim}) in the {source.where} has {rows_text(missing)}{lines} "
                f"with a missing label (empty, null or NaN). Fill in the {dim} labels or drop "
                f"those rows."
            )
        present = {g[d_index] for g in combos.groups}
        schema = source.schema[column]
        dtype = nw.String if _cast_id(schema, source.from_file) else schema
        pairs = _typed_labels(source.frame, column, dtype, present)
        typed[dim] = dict.fromkeys(pairs, source.where)
        check_group_labels(dim, column, typed[dim])
    return typed


def _label_mappings(source: _Table, labels: dict[str, str], combos: _Combos, positive):
    """Map each label column's distinct values to 0/1; the uses of ``positive=``."""
    mappings, uses = [], []
    for role, values in zip(labels, combos.labels, strict=True):
        distinct: Counter = Counter()
        for v, c in zip(values, combos.counts, strict=True):
            if v is not None:
                distinct[v] += c
        col_positive = positive.get(labels[role]) if isinstance(positive, Mapping) else positive
        mapping, use = classify(distinct, labels[role], source.where, col_positive)
        mappings.append(mapping)
        if use is not None:
            uses.append(use)
    return mappings, uses


def _tally(source: _Table, labels: dict[str, str], combos: _Combos, mappings) -> dict:
    """Add up the rows per group and 0/1 label tuple; warn about rows missing a label."""
    per_group: dict[tuple, Counter] = defaultdict(Counter)
    dropped_by_column: Counter = Counter()
    dropped_by_group: Counter = Counter()
    for i, (group, rows_here) in enumerate(zip(combos.groups, combos.counts, strict=True)):
        label_row = [values[i] for values in combos.labels]
        per_group[group]  # register the group even if all its rows are dropped
        if any(v is None for v in label_row):
            for role, v in zip(labels, label_row, strict=True):
                if v is None:
                    dropped_by_column[labels[role]] += rows_here
            dropped_by_group[group] += rows_here
            continue
        per_group[group][tuple(m[v] for m, v in zip(mappings, label_row, strict=True))] += rows_here
    if dropped_by_group:
        _warn_dropped(source, dropped_by_column, dropped_by_group, sum(combos.counts))
    return per_group


def _warn_dropped(source: _Table, by_column: Counter, by_group: Counter, rows: int) -> None:
    """Warn that rows missing a label were dropped, by column and by group."""
    columns = ", ".join(
        f"{c!r}: {rows_text(n)}{missing_lines(source.path, c) if source.is_csv else ''}"
        for c, n in by_column.items()
    )
    groups = "; ".join(
        f"{group_name(*g)}: {rows_text(n)}" for g, n in sorted(by_group.items(), key=str)
    )
    warnings.warn(
        f"Dropped {sum(by_group.values())} of {rows} rows of the {source.where} because a "
        f"label was missing (null, NaN or empty) — by column: {columns}; by group: {groups}. "
        f"Fill in or remove these rows to silence this warning.",
        MissingLabelWarning,
        # The caller of JudgeCounts.from_frames: from _tally, _count_table, count_frames and
        # from_frames.
        stacklevel=6,
    )


def _item_query(
    source: _Table, exprs: list[nw.Expr], keys: list[str], item: str, combos: _Combos, mapping
) -> ItemQuery:
    """Return the per-item query of the test table's first label column (joint_from_frame)."""
    n_groups = len(keys) - len(combos.labels)
    # The raw (engine-side) label values meaning correct and incorrect; the rest are missing.
    raw = [plain_value(v) for v in combos.raw[keys[n_groups]]]
    by_verdict: dict[int, list] = {0: [], 1: []}
    for value, normal in zip(raw, combos.labels[0], strict=True):
        if normal is not None and value not in by_verdict[mapping[normal]]:
            by_verdict[mapping[normal]].append(value)
    dtype = source.schema[item]
    return ItemQuery(
        frame=source.frame.select(
            *exprs[:n_groups],  # the group columns
            _id_key(item, dtype, source.from_file).alias(KEY_COLUMN.format("item")),
            exprs[n_groups].alias(VERDICT_KEY),
        ),
        item_is_float=isinstance(dtype, nw.Float32 | nw.Float64),
        item_is_text=_cast_id(dtype, source.from_file) or isinstance(dtype, nw.String),
        correct=by_verdict[1],
        incorrect=by_verdict[0],
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
    With ``item`` (a column name), also returns the :class:`ItemQuery` from which
    :func:`joint_from_frame` counts the joint verdict table of the first label column once
    all systems are known; otherwise None.
    """
    source = _open_table(table, table_name)
    wanted = {**labels, **{dim: col for dim, col in groups.items() if col is not None}}
    if item is not None:
        wanted["item"] = item
    _check_columns(source, wanted)
    exprs, keys = _key_exprs(source, labels, groups), _query_keys(labels, groups)
    combos = _count_combos(source, exprs, keys, wanted)
    typed = _group_labels(source, groups, combos)
    mappings, uses = _label_mappings(source, labels, combos, positive)
    per_group = _tally(source, labels, combos, mappings)
    if item is None:
        return _Counted(per_group, None, uses, typed, source.where)
    query = _item_query(source, exprs, keys, item, combos, mappings[0])
    return _Counted(per_group, query, uses, typed, source.where)


def _check_options(test, calibration, judge: str, human: str, positive, item) -> None:
    """Refuse option combinations of :meth:`JudgeCounts.from_frames` that cannot work."""
    if test is None and calibration is None:
        raise ValueError("Pass a test table, a calibration table, or both.")
    if positive is not None and isinstance(positive, Mapping):
        stray = [c for c in positive if c not in (judge, human)]
        if stray:
            raise ValueError(
                f"positive= names columns {stray} that are not label columns; use the "
                f"judge ({judge!r}) or human ({human!r}) column names as keys."
            )
    if item is not None and test is None:
        raise ValueError("item= names a column of the test table; pass a test table.")


def _check_labels_across(tables: list[_Counted], groups: dict) -> None:
    """Refuse group labels of the two tables that print alike or compare equal."""
    for dim in DIMS:
        if groups[dim] is not None and len(tables) > 1:
            labels: dict[tuple, str] = {}
            for t in tables:
                for key, where in t.labels[dim].items():
                    labels[key] = f"{labels[key]} and {where}" if key in labels else where
            check_group_labels(dim, groups[dim], labels)


def _coordinates(tables: list[_Counted], all_groups: set, groups: dict) -> tuple[list, list]:
    """Return the system and stratum labels: the union over both tables, sorted."""
    systems = sorted_labels(g[0] for g in all_groups)
    strata = sorted_labels(g[1] for g in all_groups)
    if groups["system"] is None:
        systems = [DEFAULT_LABEL]
    if groups["stratum"] is None:
        strata = [DEFAULT_LABEL]
    if not systems or not strata:
        empty = " and the ".join(t.where for t in tables)
        raise ValueError(
            f"The {empty} {'have' if len(tables) > 1 else 'has'} no rows, so there are no "
            f"groups to count. Pass non-empty tables."
        )
    return systems, strata


def _count_arrays(test_counts, calib_counts, systems, strata) -> dict[str, np.ndarray]:
    """Return the six (system, stratum) count arrays from the per-group label counters."""
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
    return arrays


def count_frames(
    test, calibration, *, judge: str, human: str, system, stratum, positive, item
) -> xr.Dataset:
    """Count item tables into a counts dataset: the work of :meth:`JudgeCounts.from_frames`.

    Each table is counted by :func:`_count_table` (its warnings point at the caller of
    ``from_frames``, two frames up); the labels are checked across the tables; the joint
    verdict table is counted with ``item``.
    """
    _check_options(test, calibration, judge, human, positive, item)
    groups = {"system": system, "stratum": stratum}
    tables: list[_Counted] = []
    if test is not None:
        tables.append(_count_table(test, "test", {"judge": judge}, groups, positive, item=item))
    if calibration is not None:
        tables.append(
            _count_table(
                calibration, "calibration", {"judge": judge, "human": human}, groups, positive
            )
        )
    check_positive_held(positive, [use for t in tables for use in t.positive_uses])
    _check_labels_across(tables, groups)
    test_counts = tables[0].per_group if test is not None else {}
    calib_counts = tables[-1].per_group if calibration is not None else {}
    systems, strata = _coordinates(tables, set(test_counts) | set(calib_counts), groups)
    arrays = _count_arrays(test_counts, calib_counts, systems, strata)
    ds = xr.Dataset(
        {f: (DIMS, arrays[f]) for f in FIELDS},
        coords={
            "system": label_array("system", systems),
            "stratum": label_array("stratum", strata),
        },
    )
    item_query = tables[0].item_query if test is not None else None
    if item_query is None:
        return ds
    table, matrix = joint_from_frame(item_query, systems, strata, item)
    return ds.assign({JOINT: (JOINT_DIMS, table)}).assign_coords(
        {VERDICT: ((PATTERN, "system"), matrix)}
    )
