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

from bayesjudge.core._validation import check_design
from bayesjudge.data._common import (
    DEFAULT_DESIGN,
    DEFAULT_LABEL,
    DESIGN_ATTR,
    DIMS,
    FIELDS,
    JOINT,
    JOINT_DIMS,
    KEY_COLUMN,
    MAX_GROUPS_SHOWN,
    PATTERN,
    ROWS_COLUMN,
    VERDICT,
    VERDICT_KEY,
    check_group_labels,
    group_name,
    is_blank,
    is_missing,
    label_array,
    plain_value,
    rows_text,
    sorted_labels,
)
from bayesjudge.data.clusters import REPEAT_KEY, clusters_from_query, with_cluster_tables
from bayesjudge.data.design import (
    INFERRED,
    JudgedRow,
    LabelledRow,
    check_labelled_ids,
    check_once,
    match_labelled,
    one_table_design,
)
from bayesjudge.data.labels import check_positive_held, classify, normalise
from bayesjudge.data.patterns import ItemQuery, joint_from_frame
from bayesjudge.data.reading import as_frame, missing_lines
from bayesjudge.warnings import BayesJudgeWarning, DesignWarning, MissingLabelWarning

#: Systems that judged different items (no id in ``item`` judged for two systems).
UNPAIRED = (
    "No item id in column {item!r} was judged for two systems: the systems judged different "
    "items, so there is nothing to pair; the counts carry no joint verdict table and "
    "comparisons are unpaired (the systems as independent samples). If they did judge the "
    "same items, give each item one id across the systems."
)


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
    # One table (split on the human column): group -> Counter of (verdict, truth) of the rows
    # with a human label (per_group then holds the unlabelled rows); else None.
    labelled: dict | None = None
    # The calibration table with item ids: its counted rows (LabelledRow); else None.
    items: list | None = None


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


def _tally(
    source: _Table, labels: dict[str, str], combos: _Combos, mappings, split: bool = False
) -> tuple[dict, dict | None]:
    """Add up the rows per group and 0/1 label tuple; warn about rows missing a label.

    With ``split`` (one table holding judge and human columns), a row without a human label
    is an unlabelled item, counted by its verdict in the first dict; rows with both labels
    are counted by (verdict, truth) in the second; only a missing verdict drops a row.
    """
    per_group: dict[tuple, Counter] = defaultdict(Counter)
    labelled: dict[tuple, Counter] | None = defaultdict(Counter) if split else None
    dropped_by_column: Counter = Counter()
    dropped_by_group: Counter = Counter()
    for i, (group, rows_here) in enumerate(zip(combos.groups, combos.counts, strict=True)):
        label_row = [values[i] for values in combos.labels]
        per_group[group]  # register the group even if all its rows are dropped
        if split:
            labelled[group]  # registers the group
            if label_row[0] is not None and label_row[1] is None:
                per_group[group][(mappings[0][label_row[0]],)] += rows_here
                continue
            if label_row[0] is not None:
                values = (mappings[0][label_row[0]], mappings[1][label_row[1]])
                labelled[group][values] += rows_here
                continue
            label_row = label_row[:1]  # only the missing verdict drops the row
        if any(v is None for v in label_row):
            for role, v in zip(labels, label_row, strict=False):
                if v is None:
                    dropped_by_column[labels[role]] += rows_here
            dropped_by_group[group] += rows_here
            continue
        per_group[group][tuple(m[v] for m, v in zip(mappings, label_row, strict=True))] += rows_here
    if dropped_by_group:
        _warn_dropped(source, dropped_by_column, dropped_by_group, sum(combos.counts))
    return per_group, labelled


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
    source: _Table,
    exprs: list[nw.Expr],
    keys: list[str],
    item: str,
    combos: _Combos,
    mapping,
    keep: nw.Expr | None = None,
    repeats: str | None = None,
) -> ItemQuery:
    """Return the per-item query of the test table's first label column (joint_from_frame).

    ``keep`` (an expression on the table's columns) selects the rows that count: the
    unlabelled rows of one table with a human column. ``repeats`` (a column) is kept as
    ``REPEAT_KEY`` for counting repeated verdicts of an item (:func:`clusters_from_query`).
    """
    n_groups = len(keys) - len(combos.labels)
    # The raw (engine-side) label values meaning correct and incorrect; the rest are missing.
    raw = [plain_value(v) for v in combos.raw[keys[n_groups]]]
    by_verdict: dict[int, list] = {0: [], 1: []}
    for value, normal in zip(raw, combos.labels[0], strict=True):
        if normal is not None and value not in by_verdict[mapping[normal]]:
            by_verdict[mapping[normal]].append(value)
    dtype = source.schema[item]
    frame = source.frame if keep is None else source.frame.filter(keep)
    return ItemQuery(
        frame=frame.select(
            *exprs[:n_groups],  # the group columns
            _id_key(item, dtype, source.from_file).alias(KEY_COLUMN.format("item")),
            exprs[n_groups].alias(VERDICT_KEY),
            *([] if repeats is None else [nw.col(repeats).alias(REPEAT_KEY)]),
        ),
        item_is_float=isinstance(dtype, nw.Float32 | nw.Float64),
        item_is_text=_cast_id(dtype, source.from_file) or isinstance(dtype, nw.String),
        correct=by_verdict[1],
        incorrect=by_verdict[0],
    )


def _blank_label(source: _Table, column: str, raw: list) -> nw.Expr:
    """Select the rows of ``column`` without a label (null, NaN, empty or blank text).

    ``raw`` are the distinct values of the column's counting key (:func:`_label_key`); those
    that :func:`normalise` reads as missing but the engine does not (``""``, ``"  "`` in an
    object column) are matched by value.
    """
    dtype = source.schema[column]
    key = _label_key(column, dtype)
    blank = key.is_null()
    if isinstance(dtype, nw.Float32 | nw.Float64):
        blank = blank | key.is_nan()
    values = [v for v in map(plain_value, raw) if not is_missing(v) and normalise(v) is None]
    if values:
        blank = blank | key.is_in(values)
    return blank


def _labelled_rows(
    source: _Table,
    exprs: list[nw.Expr],
    item: str,
    mappings,
    labelled: nw.Expr | None = None,
    repeats: str | None = None,
) -> list[LabelledRow]:
    """Collect the counted rows of the calibration table with their item ids.

    Rows missing the judge or the human label are left out, as in the counts. ``labelled``
    selects the labelled rows of one table first (so that only they are collected);
    ``repeats`` (a column) adds each row's repeat number.
    """
    item_key = KEY_COLUMN.format("item")
    id_expr = _id_key(item, source.schema[item], source.from_file).alias(item_key)
    frame = source.frame if labelled is None else source.frame.filter(labelled)
    extra = [] if repeats is None else [nw.col(repeats).alias(REPEAT_KEY)]
    rows = frame.select(*exprs, id_expr, *extra).collect().to_dict(as_series=False)
    size = len(rows[item_key])

    def column(key: str) -> list:
        return rows[key] if key in rows else [DEFAULT_LABEL] * size

    out = []
    for s, t, i, v, h, e in zip(
        column(KEY_COLUMN.format("system")),
        column(KEY_COLUMN.format("stratum")),
        rows[item_key],
        rows[KEY_COLUMN.format("judge")],
        rows[KEY_COLUMN.format("human")],
        rows[REPEAT_KEY] if repeats is not None else [None] * size,
        strict=True,
    ):
        verdict, truth = normalise(plain_value(v)), normalise(plain_value(h))
        if verdict is None or truth is None:
            continue
        out.append(
            LabelledRow(
                plain_value(s),
                plain_value(t),
                plain_value(i),
                mappings[0][verdict],
                mappings[1][truth],
                None if repeats is None else plain_value(e),
            )
        )
    return out


def _count_table(
    source: _Table,
    labels: dict[str, str],
    groups: dict[str, str | None],
    positive,
    item: str | None = None,
    repeats: str | None = None,
) -> _Counted:
    """Count one item table by group and label combination.

    Returns per-group counters keyed by label tuples (0/1 per label column, in the order of
    ``labels``); every group seen is a key, including those whose rows were all dropped.
    The counting query runs on the table's own engine; only the small result is collected.
    With ``item`` (a column name), also returns, for the test table, the :class:`ItemQuery`
    from which :func:`joint_from_frame` counts the joint verdict table of the first label
    column once all systems are known, and for the calibration table its counted rows with
    their item ids (:class:`LabelledRow`). A test table counted with a ``"human"`` label (one
    table) is split into its unlabelled rows (``per_group``) and labelled rows
    (``labelled``); its item query keeps the unlabelled rows only.
    """
    wanted = {**labels, **{dim: col for dim, col in groups.items() if col is not None}}
    if item is not None:
        wanted["item"] = item
    if repeats is not None:
        wanted["repeats"] = repeats
    _check_columns(source, wanted)
    exprs, keys = _key_exprs(source, labels, groups), _query_keys(labels, groups)
    combos = _count_combos(source, exprs, keys, wanted)
    typed = _group_labels(source, groups, combos)
    mappings, uses = _label_mappings(source, labels, combos, positive)
    split = source.name == "test" and "human" in labels
    per_group, labelled = _tally(source, labels, combos, mappings, split)
    counted = _Counted(per_group, None, uses, typed, source.where, labelled)
    if item is None:
        return counted
    if source.name == "calibration":
        return counted._replace(items=_labelled_rows(source, exprs, item, mappings, None, repeats))
    if not split:
        query = _item_query(source, exprs, keys, item, combos, mappings[0], repeats=repeats)
        return counted._replace(item_query=query)
    keep = _blank_label(source, labels["human"], combos.raw[KEY_COLUMN.format("human")])
    query = _item_query(source, exprs, keys, item, combos, mappings[0], keep, repeats)
    rows = _labelled_rows(source, exprs, item, mappings, ~keep, repeats)
    return counted._replace(item_query=query, items=rows)


def _id_kind(source: _Table, column: str) -> str:
    """Return the kind of an item-id column as counted: text, integer, float, object, ..."""
    dtype = source.schema[column]
    if _cast_id(dtype, source.from_file) or isinstance(dtype, nw.String | nw.Categorical | nw.Enum):
        return "text"
    if dtype.is_integer():
        return "integer"
    if dtype.is_float():
        return "float"
    return "object" if isinstance(dtype, nw.Object) else str(dtype)


_KIND_TYPES = {"text": str, "integer": int, "float": float}


def _judged_rows(
    query: ItemQuery, labelled: list[LabelledRow], test: _Table, calib: _Table, item: str
) -> list[JudgedRow]:
    """Collect the test rows whose item id is a labelled item's id (on the test's engine).

    The id columns must be of one kind in both tables (ids compare by value and type), else
    no labelled item could ever match a judged one: that is an error, not a silent miss.
    """
    item_key = KEY_COLUMN.format("item")
    kinds = _id_kind(test, item), _id_kind(calib, item)
    if kinds[0] != kinds[1] and "object" not in kinds:
        # Ids of different types never match; refuse only those that would match as text.
        as_text = sorted({str(r.item) for r in labelled})
        matched = (
            query.frame.select(nw.col(item_key).cast(nw.String))
            .filter(nw.col(item_key).is_in(as_text))
            .unique()
            .head(MAX_GROUPS_SHOWN)
            .collect()
            .to_dict(as_series=False)[item_key]
        )
        if matched:
            raise ValueError(
                f"Column {item!r} (item) holds {kinds[0]} ids in the {test.where} and "
                f"{kinds[1]} ids in the {calib.where}, and some match only as text (e.g. "
                f"{', '.join(map(repr, sorted(matched)))}). Item ids are compared by value and "
                f"type (7 and '7' are different ids; so are '007' and '7'), so these labelled "
                f"items would not be matched with the judged ones. Convert the column to one "
                f"type in both tables (e.g. .astype(str)); if the tables number different "
                f"items, give them ids that differ as text too."
            )
        return []
    wanted = _KIND_TYPES.get(kinds[0])
    ids = list(
        {
            r.item
            for r in labelled
            if wanted is None or (isinstance(r.item, wanted) and not isinstance(r.item, bool))
        }
    )
    return _rows_with_ids(query, ids)


def _refuse_matched_repeats(repeats: str | None, judged: list, item: str) -> None:
    """Refuse a calibration table with repeated verdicts whose items are also judged items."""
    if repeats is not None and judged:
        shown = ", ".join(sorted({repr(r.item) for r in judged}, key=str)[:5])
        raise ValueError(
            f"The calibration table numbers repeated verdicts ({repeats!r}) and its items are "
            f"also judged test items ({item!r}: {shown}): labelled items judged several times "
            f"in the random design are counted from one table whose labelled rows carry the "
            f"human label on every verdict (from_frames(table, item=..., repeats=...)), not "
            f"matched by id. A calibration table with repeated verdicts needs one verdict per "
            f"labelled item when matched, or items of its own (stratified design)."
        )


def _rows_with_ids(query: ItemQuery, ids: list) -> list[JudgedRow]:
    """Collect the rows of an item query whose id is among ``ids`` (on its engine)."""
    if not ids:
        return []
    item_key = KEY_COLUMN.format("item")
    rows = query.frame.filter(nw.col(item_key).is_in(ids)).collect().to_dict(as_series=False)
    size = len(rows[item_key])

    def column(key: str) -> list:
        return rows[key] if key in rows else [DEFAULT_LABEL] * size

    verdicts = {**dict.fromkeys(query.correct, 1), **dict.fromkeys(query.incorrect, 0)}
    return [
        JudgedRow(plain_value(s), plain_value(t), plain_value(i), verdicts.get(plain_value(v)))
        for s, t, i, v in zip(
            column(KEY_COLUMN.format("system")),
            column(KEY_COLUMN.format("stratum")),
            rows[item_key],
            rows[VERDICT_KEY],
            strict=True,
        )
    ]


def _without_labelled(query: ItemQuery, ids: dict) -> ItemQuery:
    """Return the item query without the labelled items (pairs of system and item id).

    The joint table then counts only unlabelled items, which are among each system's ``n``.
    """
    system_key, item_key = KEY_COLUMN.format("system"), KEY_COLUMN.format("item")
    if system_key in query.frame.collect_schema().names():
        labelled = None
        for system, items in ids.items():
            here = (nw.col(system_key) == system) & nw.col(item_key).is_in(items)
            labelled = here if labelled is None else labelled | here
    else:
        labelled = nw.col(item_key).is_in([i for items in ids.values() for i in items])
    return query._replace(frame=query.frame.filter(~labelled.fill_null(False)))


def _check_options(
    test, calibration, judge: str, human: str | None, positive, item, repeats=None
) -> None:
    """Refuse option combinations of :meth:`JudgeCounts.from_frames` that cannot work."""
    if test is None and calibration is None:
        raise ValueError("Pass a test table, a calibration table, or both.")
    if human is None and calibration is not None:
        raise ValueError(
            "human=None says the tables have no human-label column, but a calibration table "
            "needs one: pass human=<column of the human labels>."
        )
    if positive is not None and isinstance(positive, Mapping):
        stray = [c for c in positive if c not in (judge, human)]
        if stray:
            raise ValueError(
                f"positive= names columns {stray} that are not label columns; use the "
                f"judge ({judge!r}) or human ({human!r}) column names as keys."
            )
    if item is not None and test is None:
        raise ValueError("item= names a column of the test table; pass a test table.")
    if repeats is not None and (item is None or test is None):
        raise ValueError(
            f"repeats={repeats!r} numbers the repeated verdicts of an item in the test table: "
            f"pass the test table and item=<its item-id column> too (rows with the same item "
            f"id and different {repeats!r} values are verdicts of one item)."
        )


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


def _subtract(test_counts: dict, removed: dict) -> None:
    """Take the labelled items out of the test counters (in place)."""
    for group, counter in removed.items():
        test_counts[group].subtract(counter)


def count_frames(
    test,
    calibration,
    *,
    judge: str,
    human: str,
    system,
    stratum,
    positive,
    item,
    design: str | None = None,
    repeats: str | None = None,
) -> xr.Dataset:
    """Count item tables into a counts dataset: the work of :meth:`JudgeCounts.from_frames`.

    Each table is counted by :func:`_count_table` (its warnings point at the caller of
    ``from_frames``, two frames up); the labels are checked across the tables; the labelling
    design is resolved (one table with a human column; labelled items matched with judged
    items by ``item``: see :mod:`bayesjudge.data.design`) and stored in
    ``attrs["design"]``; the joint verdict table is counted with ``item`` (none, unpaired
    counts, when no two systems judged one item).
    """
    _check_options(test, calibration, judge, human, positive, item, repeats)
    design = None if design is None else check_design(design, "design")
    cal_repeats = None
    groups = {"system": system, "stratum": stratum}
    sources = [
        _open_table(table, name)
        for table, name in ((test, "test"), (calibration, "calibration"))
        if table is not None
    ]
    one_table = calibration is None and human is not None and human in sources[0].schema.names()
    tables: list[_Counted] = []
    if test is not None:
        labels = {"judge": judge, "human": human} if one_table else {"judge": judge}
        tables.append(
            _count_table(sources[0], labels, groups, positive, item=item, repeats=repeats)
        )
    if calibration is not None:
        calib_item = item if item in sources[-1].schema.names() else None
        # A calibration table's own repeated verdicts (stratified design), by the same column.
        cal_repeats = repeats if calib_item and repeats in sources[-1].schema.names() else None
        labels = {"judge": judge, "human": human}
        tables.append(_count_table(sources[-1], labels, groups, positive, calib_item, cal_repeats))
    check_positive_held(positive, [use for t in tables for use in t.positive_uses])
    _check_labels_across(tables, groups)
    test_counts = tables[0].per_group if test is not None else {}
    calib_counts = tables[-1].per_group if calibration is not None else {}
    item_query = tables[0].item_query if test is not None else None
    if one_table:
        calib_counts = tables[0].labelled
        design = one_table_design(design, calib_counts, sources[0].where)
        if item_query is not None:  # an item with a labelled and an unlabelled row
            check_labelled_ids(tables[0].items, item, sources[0].where, repeats)
            ids = list({r.item for r in tables[0].items})
            check_once(tables[0].items, _rows_with_ids(item_query, ids), item, sources[0].where)
    elif item_query is not None and tables[-1].items is not None:
        check_labelled_ids(tables[-1].items, item, sources[-1].where, cal_repeats)
        judged = _judged_rows(item_query, tables[-1].items, sources[0], sources[-1], item)
        _refuse_matched_repeats(cal_repeats, judged, item)
        overlap = match_labelled(tables[-1].items, judged, item, design)
        design = overlap.design
        if overlap.labelled:
            _subtract(test_counts, overlap.removed)
            item_query = _without_labelled(item_query, overlap.labelled)
        if overlap.inferred:
            unlabelled = sum(sum(c.values()) for c in test_counts.values())
            message = INFERRED.format(
                matched=overlap.n_labelled, column=item, unlabelled=unlabelled
            )
            warnings.warn(message, DesignWarning, stacklevel=3)
    systems, strata = _coordinates(tables, set(test_counts) | set(calib_counts), groups)
    arrays = _count_arrays(test_counts, calib_counts, systems, strata)
    ds = xr.Dataset(
        {f: (DIMS, arrays[f]) for f in FIELDS},
        coords={
            "system": label_array("system", systems),
            "stratum": label_array("stratum", strata),
        },
        attrs={DESIGN_ATTR: design or DEFAULT_DESIGN},
    )
    if item_query is None:
        return ds
    if repeats is not None:  # repeated verdicts: a cluster table, no joint verdict table
        clusters = clusters_from_query(item_query, systems, strata, item, repeats, sources[0])
        labelled = tables[0].items if one_table else cal_repeats and tables[-1].items
        return with_cluster_tables(
            ds, clusters, labelled, systems, strata, item, repeats, sources[0].where
        )
    joint = joint_from_frame(item_query, systems, strata, item)
    if joint is None:  # the systems judged different items: nothing to pair, unpaired counts
        if int((ds["n"].sum("stratum") > 0).sum()) > 1:  # two systems with unlabelled items
            warnings.warn(UNPAIRED.format(item=item), BayesJudgeWarning, stacklevel=3)
        return ds
    table, matrix = joint
    return ds.assign({JOINT: (JOINT_DIMS, table)}).assign_coords(
        {VERDICT: ((PATTERN, "system"), matrix)}
    )
