"""Counting item tables of K-category verdicts (:meth:`CategoricalCounts.from_frames`).

As :mod:`bayesjudge.data.counting` does for binary verdicts: one ``group_by`` query per table
on its own engine (through narwhals), the small result collected and checked in Python; the
labelling design resolved with :mod:`bayesjudge.data.design` (one table with a human column;
labelled items matched with judged items by id, each counted once).
"""

from __future__ import annotations

import warnings
from collections import Counter, defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import narwhals.stable.v2 as nw
import numpy as np

from bayesjudge.core._validation import check_design
from bayesjudge.data._common import (
    DEFAULT_DESIGN,
    DEFAULT_LABEL,
    DIMS,
    KEY_COLUMN,
    MAX_GROUPS_SHOWN,
    ROWS_COLUMN,
    check_group_labels,
    group_name,
    is_blank,
    plain_value,
    rows_text,
    sorted_labels,
)
from bayesjudge.data.category_labels import (
    as_number,
    category_array,
    check_inferred_count,
    infer_categories,
    label_key,
    lookalikes,
    plain_label,
    show_pairs,
)
from bayesjudge.data.design import (
    INFERRED,
    JudgedRow,
    LabelledRow,
    check_labelled_ids,
    check_once,
    match_labelled,
    one_table_design,
)
from bayesjudge.data.reading import as_frame, missing_lines
from bayesjudge.warnings import DesignWarning, MissingLabelWarning


class _Source(NamedTuple):
    """One item table opened for counting."""

    frame: Any  # narwhals LazyFrame
    name: str  # "test" or "calibration"
    path: Path | None
    where: str  # for messages
    schema: Any

    @property
    def is_csv(self) -> bool:
        return self.path is not None and self.path.suffix.lower() in (".csv", ".tsv")


def _open(table, name: str) -> _Source:
    frame = as_frame(table, name)
    path = Path(table) if isinstance(table, str | Path) else None
    where = f"{name} table" + (f" {str(path)!r}" if path is not None else "")
    return _Source(frame, name, path, where, frame.collect_schema())


def _check_columns(source: _Source, wanted: Mapping[str, str]) -> None:
    """Every role's column exists, holds plain values, and no column has two roles."""
    names = source.schema.names()
    for role, column in wanted.items():
        if column not in names:
            raise ValueError(
                f"Column {column!r} ({role}) is not in the {source.where}; its columns are "
                f"{names}. Pass {role}=<column name> naming the right column."
            )
        if isinstance(source.schema[column], nw.List | nw.Array | nw.Struct):
            raise ValueError(
                f"Column {column!r} ({role}) in the {source.where} holds nested values "
                f"({source.schema[column]}); it needs one plain value (text, number or bool) "
                f"per row."
            )
    clashes = [c for c, k in Counter(wanted.values()).items() if k > 1]
    if clashes:
        raise ValueError(
            f"Column {clashes[0]!r} is used for more than one role "
            f"({[r for r, c in wanted.items() if c == clashes[0]]}) in the {source.where}; "
            f"each of judge=, human=, system=, stratum= and item= needs its own column."
        )


def _id_expr(source: _Source, column: str, alias: str) -> nw.Expr:
    """Return a group or item column; from a file, as text (ids are never type-guessed)."""
    expr = nw.col(column)
    dtype = source.schema[column]
    if source.path is not None and not isinstance(dtype, nw.String | nw.Float32 | nw.Float64):
        expr = expr.cast(nw.String)
    return expr.alias(alias)


def _label_expr(source: _Source, column: str, alias: str) -> nw.Expr:
    expr = nw.col(column)
    if isinstance(source.schema[column], nw.Categorical | nw.Enum):
        expr = expr.cast(nw.String)
    return expr.alias(alias)


class _Tallied(NamedTuple):
    """One table counted: rows per (group, label values), and its typed group labels."""

    combos: list[tuple]  # (system, stratum, *label values as plain_label, None = missing)
    counts: list[int]
    labels: dict  # dim -> {(type, label): where}
    values: dict  # label column -> Counter of typed distinct values (for categories)


def _typed_object_values(source: _Source, column: str, label: bool = True) -> set | None:
    """Distinct (type, value) of a pandas object column: pandas groups 1, 1.0, True as one.

    ``label``: values as labels (whole floats as ints); else as group labels (unchanged).
    """
    if not (
        isinstance(source.schema[column], nw.Object) and source.frame.implementation.is_pandas()
    ):
        return None
    series = nw.to_native(source.frame)[column]
    as_value = plain_label if label else plain_value
    return {(type(v), v) for v in map(as_value, series[series.notna()]) if not is_blank(v)}


def _count_source(source: _Source, roles: dict[str, str], groups: dict) -> _Tallied:
    """Group the table by its group and label columns on its own engine; collect the tally."""
    exprs = [
        _id_expr(source, groups[d], KEY_COLUMN.format(d)) for d in DIMS if groups[d] is not None
    ]
    exprs += [_label_expr(source, col, KEY_COLUMN.format(r)) for r, col in roles.items()]
    keys = [e for e in (KEY_COLUMN.format(d) for d in DIMS if groups[d] is not None)]
    keys += [KEY_COLUMN.format(r) for r in roles]
    try:
        small = (
            source.frame.select(*exprs).group_by(*keys).agg(nw.len().alias(ROWS_COLUMN)).collect()
        )
    except TypeError as err:
        if "unhashable" not in str(err):
            raise
        raise ValueError(
            f"The {source.where} holds values that cannot be grouped ({err}): a list, dict or "
            f"set in a cell. Give each column one plain value per row."
        ) from None
    rows = small.to_dict(as_series=False)
    size = len(rows[ROWS_COLUMN])

    def column(key):
        return rows[key] if key in rows else [DEFAULT_LABEL] * size

    combos = [
        (
            plain_value(s),
            plain_value(t),
            *(None if is_blank(v) else plain_label(v) for v in labels),
        )
        for s, t, *labels in zip(
            column(KEY_COLUMN.format("system")),
            column(KEY_COLUMN.format("stratum")),
            *(rows[KEY_COLUMN.format(r)] for r in roles),
            strict=True,
        )
    ]
    counts = [int(c) for c in rows[ROWS_COLUMN]]
    typed: dict[str, dict] = {}
    for index, dim in enumerate(DIMS):
        if groups[dim] is None:
            continue
        missing = sum(c for g, c in zip(combos, counts, strict=True) if is_blank(g[index]))
        if missing:
            lines = missing_lines(source.path, groups[dim]) if source.is_csv else ""
            raise ValueError(
                f"Column {groups[dim]!r} ({dim}) in the {source.where} has "
                f"{rows_text(missing)}{lines} with a missing label (empty, null or NaN). Fill "
                f"in the {dim} labels or drop those rows."
            )
        pairs = _typed_object_values(source, groups[dim], label=False) or {
            (type(g[index]), g[index]) for g in combos
        }
        typed[dim] = dict.fromkeys(pairs, source.where)
        check_group_labels(dim, groups[dim], typed[dim])
    values: dict[str, Counter] = {}
    for offset, (role, col) in enumerate(roles.items()):
        tally: Counter = Counter()
        for combo, c in zip(combos, counts, strict=True):
            if combo[2 + offset] is not None:
                tally[combo[2 + offset]] += c
        values[role] = tally
        clashes = lookalikes(sorted(tally, key=repr))
        objects = _typed_object_values(source, col)
        if objects is not None:
            clashes += lookalikes(sorted({v for _, v in objects}, key=repr))
            if len(objects) > len({v for _, v in objects}):
                clashes.append(tuple(v for _, v in sorted(objects, key=repr))[:2])
        # one pair found both in the tally and among the pandas objects: name it once
        clashes = list({frozenset((type(v), v) for v in pair): pair for pair in clashes}.values())
        if clashes:
            raise ValueError(
                f"Column {col!r} ({role}) in the {source.where} holds different values that "
                f"print alike, compare equal or are one number written differently: "
                f"{show_pairs(clashes)}. They would be merged into one category, or split "
                f"into two that look the same, so they are refused; make the column one type "
                f"(e.g. df[{col!r}].astype(str)) or fix the spelling."
            )
    return _Tallied(combos, counts, typed, values)


def _category_index(
    categories: list, tallies: list[tuple[_Source, str, str, Counter]]
) -> dict[tuple, int]:
    """Map each label value to its category's index; refuse values not among the categories."""
    index = {label_key(c): i for i, c in enumerate(categories)}
    problems = []
    for source, role, col, tally in tallies:
        bad = {v: c for v, c in tally.items() if label_key(v) not in index}
        if not bad:
            continue
        shown = ", ".join(
            f"{v!r} ({type(v).__name__}, {rows_text(c)})"
            for v, c in sorted(bad.items(), key=lambda vc: -vc[1])[:MAX_GROUPS_SHOWN]
        )
        more = f", … ({len(bad) - MAX_GROUPS_SHOWN} more)" if len(bad) > MAX_GROUPS_SHOWN else ""
        hints = []
        for v in bad:
            number = as_number(v)
            as_text = [
                c
                for c in categories
                if str(c) == str(v) or (number is not None and as_number(c) == number)
            ]
            folded = [
                c
                for c in categories
                if isinstance(c, str) and isinstance(v, str) and c.casefold() == v.casefold()
            ]
            if as_text and not folded:
                hints.append(
                    f"{v!r} ({type(v).__name__}) matches the category {as_text[0]!r} "
                    f"({type(as_text[0]).__name__}) only as text or as a number: labels are "
                    f"compared by value and type, so convert the column or give categories "
                    f"of the column's type"
                )
            elif folded:
                hints.append(f"{v!r} matches {folded[0]!r} only ignoring case")
        hint = f" ({'; '.join(hints[:3])})" if hints else ""
        problems.append(f"column {col!r} ({role}) of the {source.where} holds {shown}{more}{hint}")
    if problems:
        raise ValueError(
            f"Labels outside the categories {categories!r}: {'; '.join(problems)}. Add them to "
            f"categories= if they are categories, or fix the labels (a typo is never counted "
            f"silently)."
        )
    return index


def _resolve_categories(categories, tallies) -> tuple[list, str]:
    """Return the category order: given, or inferred from every label value of both tables."""
    if categories is not None:
        return category_array(categories).tolist(), "given"
    seen: dict[tuple, Any] = {}
    for _, _, _, tally in tallies:
        for v in tally:
            seen.setdefault((type(v), v), v)
    values = list(seen.values())
    clashes = lookalikes(sorted(values, key=repr))
    if clashes:
        raise ValueError(
            f"The label columns hold different values that print alike, compare equal or are "
            f"one number written differently: {show_pairs(clashes)} (across the judge and "
            f"human columns of the tables). Inferred, they would be separate categories that "
            f"look the same; make the columns one type, or pass categories= and labels of "
            f"that type."
        )
    check_inferred_count(values, "The label columns")
    if len(values) < 2:
        raise ValueError(
            f"The label columns hold {len(values)} distinct value(s) {values!r}; K-category "
            f"counts need at least two categories: pass categories=[...] naming them all."
        )
    return category_array(infer_categories(values), "the inferred categories").tolist(), (
        "inferred"
    )


def _warn_dropped(source: _Source, by_column: Counter, by_group: Counter, rows: int) -> None:
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
        # _warn_dropped, _split, count_categorical_frames, from_frames: the caller's line.
        stacklevel=5,
    )


def _split(source: _Source, tallied: _Tallied, roles: dict, index: dict, one_table: bool):
    """Per group: Counter of verdict indices (unlabelled) and of (verdict, truth) (labelled)."""
    unlabelled: dict[tuple, Counter] = defaultdict(Counter)
    labelled: dict[tuple, Counter] = defaultdict(Counter)
    by_column: Counter = Counter()
    by_group: Counter = Counter()
    with_human = "human" in roles
    for combo, c in zip(tallied.combos, tallied.counts, strict=True):
        group, verdict = combo[:2], combo[2]
        truth = combo[3] if with_human else None
        unlabelled[group]
        labelled[group]  # every group seen is kept, even with all its rows dropped
        if verdict is None or (with_human and truth is None and not one_table):
            for role, value in zip(roles, combo[2:], strict=True):
                if value is None:
                    by_column[roles[role]] += c
            by_group[group] += c
            continue
        if with_human and truth is not None:
            labelled[group][(index[label_key(verdict)], index[label_key(truth)])] += c
        else:
            unlabelled[group][(index[label_key(verdict)],)] += c
    if by_group:
        _warn_dropped(source, by_column, by_group, sum(tallied.counts))
    return unlabelled, labelled


def _item_rows(source: _Source, roles: dict, groups: dict, item: str, keep=None) -> dict:
    """Collect the group, item and label columns of the rows ``keep`` selects."""
    exprs = [
        _id_expr(source, groups[d], KEY_COLUMN.format(d)) for d in DIMS if groups[d] is not None
    ]
    exprs += [_label_expr(source, col, KEY_COLUMN.format(r)) for r, col in roles.items()]
    exprs.append(_id_expr(source, item, KEY_COLUMN.format("item")))
    frame = source.frame if keep is None else source.frame.filter(keep)
    rows = frame.select(*exprs).collect().to_dict(as_series=False)
    size = len(rows[KEY_COLUMN.format("item")])
    for d in DIMS:
        rows.setdefault(KEY_COLUMN.format(d), [DEFAULT_LABEL] * size)
    return rows


def _labelled_rows(rows: dict, canon: dict) -> list[LabelledRow]:
    """Return the labelled rows with item ids; verdict and truth as category labels."""
    out = []
    for s, t, i, v, h in zip(
        rows[KEY_COLUMN.format("system")],
        rows[KEY_COLUMN.format("stratum")],
        rows[KEY_COLUMN.format("item")],
        rows[KEY_COLUMN.format("judge")],
        rows[KEY_COLUMN.format("human")],
        strict=True,
    ):
        if is_blank(v) or is_blank(h):
            continue
        out.append(
            LabelledRow(
                plain_value(s),
                plain_value(t),
                plain_value(i),
                canon[label_key(plain_label(v))],
                canon[label_key(plain_label(h))],
            )
        )
    return out


def _judged_rows(rows: dict, canon: dict, unlabelled_only: bool = False) -> list[JudgedRow]:
    humans = rows.get(KEY_COLUMN.format("human"))
    out = []
    for n, (s, t, i, v) in enumerate(
        zip(
            rows[KEY_COLUMN.format("system")],
            rows[KEY_COLUMN.format("stratum")],
            rows[KEY_COLUMN.format("item")],
            rows[KEY_COLUMN.format("judge")],
            strict=True,
        )
    ):
        if unlabelled_only and humans is not None and not is_blank(humans[n]):
            continue
        verdict = None if is_blank(v) else canon[label_key(plain_label(v))]
        out.append(JudgedRow(plain_value(s), plain_value(t), plain_value(i), verdict))
    return out


def _present(source: _Source, column: str) -> nw.Expr:
    """Rows whose ``column`` holds a value (not null, not NaN, not blank text)."""
    dtype = source.schema[column]
    expr = ~nw.col(column).is_null()
    if isinstance(dtype, nw.Float32 | nw.Float64):
        expr = expr & ~nw.col(column).is_nan().fill_null(True)
    elif isinstance(dtype, nw.String):
        expr = expr & (nw.col(column).str.strip_chars() != "")
    return expr


def _id_kind(source: _Source, column: str) -> str:
    dtype = source.schema[column]
    if source.path is not None and not isinstance(dtype, nw.Float32 | nw.Float64):
        return "text"
    if isinstance(dtype, nw.String | nw.Categorical | nw.Enum):
        return "text"
    if dtype.is_integer():
        return "integer"
    if dtype.is_float():
        return "float"
    return "object" if isinstance(dtype, nw.Object) else str(dtype)


def _test_rows_with_ids(test: _Source, calib: _Source, roles, groups, item, labelled) -> dict:
    """Collect the test rows whose item id is a labelled item's (ids of one kind in both)."""
    kinds = _id_kind(test, item), _id_kind(calib, item)
    ids = sorted({r.item for r in labelled}, key=repr)
    if kinds[0] != kinds[1] and "object" not in kinds:
        texts = sorted({str(i) for i in ids})
        matched = (
            test.frame.select(nw.col(item).cast(nw.String).alias("id"))
            .filter(nw.col("id").is_in(texts))
            .unique()
            .head(MAX_GROUPS_SHOWN)
            .collect()
            .to_dict(as_series=False)["id"]
        )
        if matched:
            raise ValueError(
                f"Column {item!r} (item) holds {kinds[0]} ids in the {test.where} and "
                f"{kinds[1]} ids in the {calib.where}, and some match only as text (e.g. "
                f"{', '.join(map(repr, sorted(matched)))}). Ids compare by value and type (7 "
                f"and '7' differ); convert the column to one type in both tables."
            )
        ids = []
    if not ids:
        return {KEY_COLUMN.format(k): [] for k in ("system", "stratum", "item", "judge")}
    key = _id_expr(test, item, "__id__")
    return _item_rows(test, roles, groups, item, keep=key.is_in(ids))


def _check_unique_ids(source: _Source, groups: dict, item: str) -> None:
    """Refuse an item id that occurs twice for one system (it would be counted twice)."""
    # On the engine (a lazy DuckDB/Dask/Spark table stays lazy): only repeated ids come back.
    keys = [KEY_COLUMN.format("item")]
    exprs = [_id_expr(source, item, keys[0])]
    if groups["system"] is not None:
        keys.insert(0, KEY_COLUMN.format("system"))
        exprs.insert(0, _id_expr(source, groups["system"], keys[0]))
    twice = (
        source.frame.select(*exprs)
        .filter(~nw.col(keys[-1]).is_null())
        .group_by(*keys)
        .agg(nw.len().alias(ROWS_COLUMN))
        .filter(nw.col(ROWS_COLUMN) > 1)
    )
    rows = twice.head(MAX_GROUPS_SHOWN).collect().to_dict(as_series=False)
    repeated = [
        (rows[keys[0]][n] if len(keys) > 1 else DEFAULT_LABEL, rows[keys[-1]][n], c)
        for n, c in enumerate(rows[ROWS_COLUMN])
    ]
    repeated = [(s, i, c) for s, i, c in repeated if not is_blank(i)]
    if repeated:
        total = int(twice.select(nw.len()).collect().item())
        shown = ", ".join(f"{i!r} (system {s!r}, {c} rows)" for s, i, c in repeated[:5])
        raise ValueError(
            f"Item ids in column {item!r} of the {source.where} must be unique within each "
            f"system; {total} repeat: {shown}{' …' if total > len(repeated) else ''}. "
            f"Remove the duplicate rows, or give distinct items distinct ids (repeated "
            f"verdicts of an item are not supported for K categories yet: keep one verdict "
            f"per item, e.g. the first epoch)."
        )


def count_categorical_frames(
    test,
    calibration,
    *,
    judge: str,
    human: str | None,
    categories,
    system,
    stratum,
    item,
    design,
) -> tuple[dict, dict, list, list, list, str, str]:
    """Count item tables into per-group category counters: the work of ``from_frames``."""
    if test is None and calibration is None:
        raise ValueError("Pass a test table, a calibration table, or both.")
    if human is None and calibration is not None:
        raise ValueError(
            "human=None says the tables have no human-label column, but a calibration table "
            "needs one: pass human=<column of the human labels>."
        )
    if item is not None and test is None:
        raise ValueError("item= names a column of the test table; pass a test table.")
    design = None if design is None else check_design(design, "design")
    groups = {"system": system, "stratum": stratum}
    sources = {
        name: _open(table, name)
        for table, name in ((test, "test"), (calibration, "calibration"))
        if table is not None
    }
    one_table = (
        calibration is None and human is not None and human in sources["test"].schema.names()
    )
    plan = {}
    if test is not None:
        plan["test"] = {"judge": judge, "human": human} if one_table else {"judge": judge}
    if calibration is not None:
        plan["calibration"] = {"judge": judge, "human": human}
    tallied = {}
    for name, roles in plan.items():
        source = sources[name]
        wanted = {**roles, **{d: c for d, c in groups.items() if c is not None}}
        item_here = item is not None and (name == "test" or item in source.schema.names())
        if item_here:
            wanted["item"] = item
        _check_columns(source, wanted)
        tallied[name] = _count_source(source, roles, groups)
    for dim in DIMS:
        if groups[dim] is not None and len(tallied) > 1:
            merged: dict = {}
            for t in tallied.values():
                for key, where in t.labels[dim].items():
                    merged[key] = f"{merged[key]} and {where}" if key in merged else where
            check_group_labels(dim, groups[dim], merged)
    tallies = [
        (sources[name], role, col, tallied[name].values[role])
        for name, roles in plan.items()
        for role, col in roles.items()
    ]
    labels, source_kind = _resolve_categories(categories, tallies)
    index = _category_index(labels, tallies)
    canon = {key: labels[i] for key, i in index.items()}  # match key -> category label
    test_counts: dict = {}
    calib_counts: dict = {}
    if test is not None:
        test_counts, labelled = _split(
            sources["test"], tallied["test"], plan["test"], index, one_table
        )
        if one_table:
            calib_counts = labelled
            design = one_table_design(design, labelled, sources["test"].where)
            if item is not None:
                src = sources["test"]
                keep = _present(src, human)
                rows = _item_rows(src, plan["test"], groups, item, keep=keep)
                lab = _labelled_rows(rows, canon)
                check_labelled_ids(lab, item, src.where)
                ids = sorted({r.item for r in lab}, key=repr)
                if ids:
                    rows = _item_rows(
                        src, plan["test"], groups, item,
                        keep=_id_expr(src, item, "__id__").is_in(ids),
                    )  # fmt: skip
                    check_once(lab, _judged_rows(rows, canon, True), item, src.where)
    if test is not None and item is not None:
        # After the labelled/unlabelled checks above, whose messages say more.
        _check_unique_ids(sources["test"], groups, item)
    if calibration is not None:
        _, calib_counts = _split(
            sources["calibration"], tallied["calibration"], plan["calibration"], index, False
        )
        cal_src = sources["calibration"]
        if item is not None and test is not None and item in cal_src.schema.names():
            rows = _item_rows(cal_src, plan["calibration"], groups, item)
            lab = _labelled_rows(rows, canon)
            check_labelled_ids(lab, item, cal_src.where)
            judged_rows = _test_rows_with_ids(
                sources["test"], cal_src, plan["test"], groups, item, lab
            )
            judged = _judged_rows(judged_rows, canon)
            overlap = match_labelled(lab, judged, item, design)
            design = overlap.design
            for group, counter in overlap.removed.items():
                test_counts[group].subtract(
                    Counter({(index[label_key(v)],): c for (v,), c in counter.items()})
                )
            if overlap.inferred:
                unlabelled = sum(sum(c.values()) for c in test_counts.values())
                warnings.warn(
                    INFERRED.format(matched=overlap.n_labelled, column=item, unlabelled=unlabelled),
                    DesignWarning,
                    stacklevel=3,
                )
    all_groups = set(test_counts) | set(calib_counts)
    systems = sorted_labels(g[0] for g in all_groups) if system is not None else [DEFAULT_LABEL]
    strata = sorted_labels(g[1] for g in all_groups) if stratum is not None else [DEFAULT_LABEL]
    if not all_groups:
        raise ValueError("The tables have no rows, so there are no groups to count.")
    return test_counts, calib_counts, systems, strata, labels, source_kind, design or DEFAULT_DESIGN


def count_arrays(test_counts, calib_counts, systems, strata, k: int):
    """Return the (system, stratum, K) test and (…, K, K) calibration arrays of the counters."""
    s_index = {s: i for i, s in enumerate(systems)}
    t_index = {t: j for j, t in enumerate(strata)}
    test = np.zeros((len(systems), len(strata), k), dtype=np.int64)
    cal = np.zeros((len(systems), len(strata), k, k), dtype=np.int64)
    for (s, t), counter in test_counts.items():
        for (verdict,), c in counter.items():
            test[s_index[s], t_index[t], verdict] += c
    for (s, t), counter in calib_counts.items():
        for (verdict, truth), c in counter.items():
            cal[s_index[s], t_index[t], truth, verdict] += c
    return test, cal
