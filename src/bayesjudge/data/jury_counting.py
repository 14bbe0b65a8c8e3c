"""Counting item tables of several judges into verdict patterns (:meth:`JuryCounts.from_frames`).

The tables are long: one row per (item, judge), the judge named in a column. Only the columns
the count needs are collected from the user's engine (through narwhals); the patterns are then
built in numpy, one row per item. Every row is accounted for: a missing verdict is dropped
with a :class:`~bayesjudge.warnings.MissingLabelWarning` that counts it, and a repeated
(item, judge) row, an item in two strata or with two human labels is an error naming the ids.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Mapping
from typing import Any, NamedTuple

import narwhals.stable.v2 as nw
import numpy as np

from bayesjudge.data._common import (
    DEFAULT_DESIGN,
    DEFAULT_LABEL,
    MAX_GROUPS_SHOWN,
    is_blank,
    label_array,
    plain_value,
    sorted_labels,
)
from bayesjudge.data.category_labels import (
    category_array,
    check_inferred_count,
    infer_categories,
    label_key,
    lookalikes,
    plain_label,
    show_pairs,
)
from bayesjudge.data.labels import binary_classes, check_positive_held, classify, normalise
from bayesjudge.data.reading import as_frame
from bayesjudge.warnings import DesignWarning, MissingLabelWarning

__all__ = ["JuryTable", "count_jury_frames"]


class JuryTable(NamedTuple):
    """The arrays :class:`~bayesjudge.data.jury.JuryCounts` is built from."""

    verdicts: np.ndarray  # (P, J) of 1, 0, -1
    test: np.ndarray  # (systems, strata, P)
    labelled: np.ndarray  # (systems, strata, 2, P)
    judges: np.ndarray
    systems: np.ndarray
    strata: np.ndarray
    design: str
    # K-category mode (``categorical=True``): the category labels and where they came from;
    # verdicts are then category indices 0..K-1 (-1 missing), ``labelled`` (…, K, P).
    categories: list | None = None
    categories_source: str | None = None


class _Rows(NamedTuple):
    """One table's rows, collected: plain Python values per role."""

    where: str
    columns: dict[str, list]  # role -> values


def _shown(values, limit: int = MAX_GROUPS_SHOWN) -> str:
    values = list(values)
    more = len(values) - limit
    text = ", ".join(repr(plain_value(v)) for v in values[:limit])
    return text + (f", … ({more} more)" if more > 0 else "")


def _collect(table, name: str, roles: dict[str, str | None], optional=()) -> _Rows:
    """Read the role columns of one table (any narwhals engine or a file) into lists.

    A role in ``optional`` whose column is absent is left out (a test table without a human
    column is test items only).
    """
    frame = as_frame(table, f"{name} table")
    names = frame.collect_schema().names()
    wanted = {
        role: col
        for role, col in roles.items()
        if col is not None and not (role in optional and col not in names)
    }
    for role, column in wanted.items():
        if column not in names:
            raise ValueError(
                f"Column {column!r} ({role}=) is not in the {name} table; its columns are "
                f"{names}. Pass {role}=<column name> naming the right column."
            )
    clashes = [c for c, n in Counter(wanted.values()).items() if n > 1]
    if clashes:
        raise ValueError(
            f"Column {clashes[0]!r} is used for more than one role "
            f"({[r for r, c in wanted.items() if c == clashes[0]]}) in the {name} table; each of "
            f"judges=, judge=, human=, item=, system= and stratum= needs its own column."
        )
    # Collecting a role column twice would fail on some engines; select each once.
    collected = frame.select([nw.col(c) for c in dict.fromkeys(wanted.values())]).collect()
    columns = {
        role: [plain_value(v) for v in collected[col].to_list()] for role, col in wanted.items()
    }
    return _Rows(f"{name} table", columns)


def _check_present(rows: _Rows, role: str, column: str) -> None:
    """Refuse missing values in an id or group column (they cannot be guessed)."""
    values = rows.columns[role]
    bad = [i for i, v in enumerate(values) if is_blank(v)]
    if bad:
        raise ValueError(
            f"Column {column!r} ({role}=) of the {rows.where} has {len(bad)} missing or empty "
            f"value(s) (rows {_shown(bad)}, 0-based). Every row needs a {role}; fill them or "
            f"drop those rows."
        )


def _verdict_codes(rows: _Rows, column: str, positive) -> tuple[np.ndarray, Any]:
    """Map the verdict column to 1/0, and -1 where missing (rows dropped later, counted)."""
    normal = [normalise(v) for v in rows.columns["judge"]]
    distinct = Counter(v for v in normal if v is not None)
    pos = positive.get(column) if isinstance(positive, Mapping) else positive
    if pos is None and binary_classes({v: v for v in distinct}) > 2:
        raise ValueError(
            f"Column {column!r} of the {rows.where} holds more than two kinds of verdicts "
            f"({_shown(list(distinct))}). JuryCounts reads several judges' verdicts as correct/"
            f"incorrect; for K-category verdicts of several judges (ties, grades) use "
            f"CategoricalJuryCounts.from_frames(...), or pass positive=<the value meaning "
            f"correct> if there are only two."
        )
    mapping, use = classify(distinct, column, rows.where, pos)
    codes = np.array([-1 if v is None else mapping[v] for v in normal], dtype=np.int64)
    return codes, use


def _human_codes(rows: _Rows, column: str, positive, *, required: bool):
    normal = [normalise(v) for v in rows.columns["human"]]
    distinct = Counter(v for v in normal if v is not None)
    pos = positive.get(column) if isinstance(positive, Mapping) else positive
    mapping, use = classify(distinct, column, rows.where, pos) if distinct else ({}, None)
    codes = np.array([-1 if v is None else mapping[v] for v in normal], dtype=np.int64)
    if required:
        _require_human(rows, column, codes)
    return codes, use


def _require_human(rows: _Rows, column: str, codes: np.ndarray) -> None:
    """Every row of a calibration table needs a human label."""
    if (codes < 0).any():
        raise ValueError(
            f"Column {column!r} (human=) of the {rows.where} has {int((codes < 0).sum())} "
            f"missing labels; every row of the calibration table needs a human label (drop "
            f"unlabelled rows, or pass one table with the human column empty for them)."
        )


# ------------------------------------------------------------------ K-category labels


def _labels(rows: _Rows, role: str) -> list:
    """Return the role column's values as category labels (None where missing)."""
    return [None if is_blank(v) else plain_label(v) for v in rows.columns[role]]


def _category_plan(tables: list, columns: dict, categories) -> tuple[list, str]:
    """Return the category labels (given, or inferred from every label column) and source."""
    seen: dict[tuple, Any] = {}
    for rows, with_human in tables:
        for role in ("judge", "human") if with_human else ("judge",):
            distinct = {(type(v), v): v for v in _labels(rows, role) if v is not None}
            values = list(distinct.values())
            clashes = lookalikes(sorted(values, key=repr))
            if clashes:
                raise ValueError(
                    f"Column {columns[role]!r} ({role}=) of the {rows.where} holds different "
                    f"values that print alike, compare equal or are one number written "
                    f"differently: {show_pairs(clashes)}. They would be merged into one "
                    f"category, or split into two that look the same; make the column one "
                    f"type (e.g. df[{columns[role]!r}].astype(str)) or fix the spelling."
                )
            for key, v in distinct.items():
                seen.setdefault(key, v)
    if categories is not None:
        return category_array(categories).tolist(), "given"
    values = list(seen.values())
    clashes = lookalikes(sorted(values, key=repr))
    if clashes:
        raise ValueError(
            f"The label columns hold different values that print alike, compare equal or are "
            f"one number written differently: {show_pairs(clashes)} (across the verdict and "
            f"human columns of the tables). Make the columns one type, or pass categories= "
            f"and labels of that type."
        )
    check_inferred_count(values, "The label columns")
    if len(values) < 2:
        raise ValueError(
            f"The label columns hold {len(values)} distinct value(s) {values!r}; K-category "
            f"verdicts need at least two categories: pass categories=[...] naming them all."
        )
    labels = category_array(infer_categories(values), "the inferred categories").tolist()
    return labels, "inferred"


def _category_codes(rows: _Rows, role: str, column: str, labels: list) -> np.ndarray:
    """Map a label column to category indices, -1 where missing; refuse other values."""
    index = {label_key(c): i for i, c in enumerate(labels)}
    values = _labels(rows, role)
    bad = Counter(v for v in values if v is not None and label_key(v) not in index)
    if bad:
        shown = ", ".join(
            f"{v!r} ({type(v).__name__}, {c} row{'s' if c != 1 else ''})"
            for v, c in bad.most_common(MAX_GROUPS_SHOWN)
        )
        more = len(bad) - MAX_GROUPS_SHOWN
        text = [c for c in labels if any(str(c) == str(v) for v in bad)]
        folded = [c for c in labels if any(str(c).casefold() == str(v).casefold() for v in bad)]
        hint = (
            f" Labels compare by value and type: {text[0]!r} ({type(text[0]).__name__}) "
            f"matches only as text, so convert the column or give categories of its type."
            if text
            else f" {folded[0]!r} matches only ignoring case."
            if folded
            else ""
        )
        raise ValueError(
            f"Column {column!r} ({role}=) of the {rows.where} holds labels outside the "
            f"categories {labels!r}: {shown}{f', … ({more} more)' if more > 0 else ''}.{hint} "
            f"Add them to categories= if they are categories, or fix the labels (a typo is "
            f"never counted silently)."
        )
    return np.array([-1 if v is None else index[label_key(v)] for v in values], dtype=np.int64)


def _items(rows: _Rows, verdict: np.ndarray, human: np.ndarray | None, has: dict) -> dict:
    """Group one table's rows by (system, item): stratum, human label and judge verdicts."""
    items: dict[tuple, dict] = {}
    repeated, strata_clash, human_clash = [], [], []
    system = rows.columns.get("system")
    stratum = rows.columns.get("stratum")
    for r, (item, judge) in enumerate(
        zip(rows.columns["item"], rows.columns["judges"], strict=True)
    ):
        key = (system[r] if has["system"] else DEFAULT_LABEL, item)
        entry = items.setdefault(
            key,
            {"stratum": stratum[r] if has["stratum"] else DEFAULT_LABEL, "human": -1, "v": {}},
        )
        if has["stratum"] and entry["stratum"] != stratum[r]:
            strata_clash.append(key)
        if human is not None and human[r] >= 0:
            if entry["human"] >= 0 and entry["human"] != human[r]:
                human_clash.append(key)
            entry["human"] = int(human[r])
        if judge in entry["v"]:
            repeated.append((key, judge))
        entry["v"][judge] = int(verdict[r])
    if strata_clash:
        raise ValueError(
            f"Items of the {rows.where} lie in more than one stratum across their rows: "
            f"(system, item) {_shown(dict.fromkeys(strata_clash))}. An item's stratum must be "
            f"the same on every judge's row. Item ids must be unique within a system: if they "
            f"restart in each stratum, combine them with the stratum (e.g. 'subset/17')."
        )
    if repeated:
        raise ValueError(
            f"The {rows.where} has more than one row for the same (item, judge): "
            f"{_shown(repeated)}. Each judge grades an item once here; keep one verdict per "
            f"judge and item (repeated verdicts of one judge are read with "
            f"JudgeCounts.from_frames(..., repeats=) for that judge alone)."
        )
    if human_clash:
        raise ValueError(
            f"Items of the {rows.where} have different human labels on different rows: "
            f"(system, item) {_shown(dict.fromkeys(human_clash))}. Give each item one label."
        )
    return items


def _warn_missing(where: str, column: str, judges: list, codes: np.ndarray) -> None:
    missing = codes < 0
    if not missing.any():
        return
    by_judge = Counter(j for j, m in zip(judges, missing, strict=True) if m)
    detail = ", ".join(f"{plain_value(j)!r}: {c}" for j, c in sorted(by_judge.items(), key=str))
    warnings.warn(
        f"{int(missing.sum())} row(s) of the {where} have no verdict in column {column!r} and "
        f"were dropped (by judge: {detail}). Their items keep the other judges' verdicts (a "
        f"'-' in the verdict pattern). Check the judge's output parsing if this is unexpected.",
        MissingLabelWarning,
        stacklevel=4,
    )


def _design(test_items: dict, cal_items: dict | None, design: str | None, one_table: bool):
    """Decide the labelling design; return it with the labelled items and the test items."""
    if cal_items is None:
        labelled = {k: v for k, v in test_items.items() if v["human"] >= 0}
        unlabelled = {k: v for k, v in test_items.items() if v["human"] < 0}
        if labelled and design == "stratified":
            raise ValueError(
                "design='stratified' was passed for one table with human labels: labelled rows "
                "of the judged items are a random subset by construction. Pass the stratified "
                "set as calibration=, or design='random'."
            )
        return ("random" if labelled else (design or DEFAULT_DESIGN)), labelled, unlabelled
    shared = [k for k in cal_items if k in test_items]
    if not shared:
        return (design or DEFAULT_DESIGN), cal_items, test_items
    if len(shared) < len(cal_items):
        outside = [k for k in cal_items if k not in test_items]
        raise ValueError(
            f"Some labelled items are also judged test items ((system, item) "
            f"{_shown(shared)}) and others are not ({_shown(outside)}): a mix of designs. "
            f"Either label a random subset of the judged items (every labelled id among the "
            f"test ids) or keep a separate calibration set (no shared ids)."
        )
    if design == "stratified":
        raise ValueError(
            f"design='stratified' was passed, but every labelled item is also a judged test "
            f"item ((system, item) {_shown(shared)}): that is the random design. Pass "
            f"design='random' (each item is then counted once), or use separate ids."
        )
    if design is None:
        warnings.warn(
            "Every labelled item is also a judged test item (matching item ids): the design "
            "is taken to be 'random' and each item is counted once, as a labelled item. Pass "
            "design='random' to declare it.",
            DesignWarning,
            stacklevel=4,
        )
    merged = {}
    for key, entry in cal_items.items():
        verdicts = dict(test_items[key]["v"])
        for judge, v in entry["v"].items():
            if judge in verdicts and verdicts[judge] >= 0 and v >= 0 and verdicts[judge] != v:
                raise ValueError(
                    f"Judge {plain_value(judge)!r} gave item {key!r} different verdicts in the "
                    f"test and calibration tables; a labelled item's verdicts must agree."
                )
            if v >= 0 or judge not in verdicts:
                verdicts[judge] = v
        merged[key] = {**entry, "v": verdicts}
    unlabelled = {k: v for k, v in test_items.items() if k not in merged}
    return "random", merged, unlabelled


def _arrays(labelled: dict, unlabelled: dict, judges: list, k: int | None = None) -> JuryTable:
    """Count items per (system, stratum, truth, pattern); ``k``: K categories (else binary)."""
    every = list(unlabelled.items()) + list(labelled.items())
    systems = label_array("system", sorted_labels(k[0] for k, _ in every))
    strata = label_array("stratum", sorted_labels(v["stratum"] for _, v in every))
    s_index = {plain_value(s): i for i, s in enumerate(systems.tolist())}
    r_index = {plain_value(r): i for i, r in enumerate(strata.tolist())}
    cells: Counter = Counter()
    for source, (key, entry) in [("t", e) for e in unlabelled.items()] + [
        ("l", e) for e in labelled.items()
    ]:
        pattern = tuple(entry["v"].get(j, -1) for j in judges)
        if all(v < 0 for v in pattern):
            continue  # every verdict of the item was missing: counted in the warning
        truth = entry["human"] if source == "l" else -1
        cells[(s_index[key[0]], r_index[entry["stratum"]], truth, pattern)] += 1
    if k is None:
        patterns = sorted({c[3] for c in cells}, key=lambda p: [(0, 1, 2)[1 - v] for v in p])
    else:  # category indices in order, missing last
        patterns = sorted({c[3] for c in cells}, key=lambda p: [v if v >= 0 else k for v in p])
    p_index = {p: i for i, p in enumerate(patterns)}
    test = np.zeros((len(systems), len(strata), len(patterns)), dtype=np.int64)
    lab = np.zeros((len(systems), len(strata), k or 2, len(patterns)), dtype=np.int64)
    for (s, r, truth, pattern), count in cells.items():
        if truth < 0:
            test[s, r, p_index[pattern]] += count
        else:
            lab[s, r, truth, p_index[pattern]] += count
    verdicts = np.array(patterns, dtype=np.int64).reshape(len(patterns), len(judges))
    return JuryTable(verdicts, test, lab, np.asarray(judges), systems, strata, DEFAULT_DESIGN)


def count_jury_frames(
    test,
    calibration=None,
    *,
    judges: str,
    item: str,
    judge: str = "judge",
    human: str | None = "human",
    system: str | None = None,
    stratum: str | None = None,
    positive=None,
    design: str | None = None,
    categories=None,
    categorical: bool = False,
) -> JuryTable:
    """Count long item tables of several judges; see :meth:`JuryCounts.from_frames`.

    ``categorical=True`` reads K-category labels instead (``categories=`` given or inferred,
    matched by value and type): see :meth:`CategoricalJuryCounts.from_frames`.
    """
    if categorical and positive is not None:
        raise ValueError("positive= applies to binary verdicts; pass categories= instead.")
    if categories is not None and not categorical:
        raise ValueError("categories= applies to K-category verdicts (categorical=True).")
    if design not in (None, "stratified", "random"):
        raise ValueError(f"design must be 'stratified', 'random' or None; got {design!r}.")
    if test is None:
        raise ValueError("JuryCounts.from_frames needs a test table (test=).")
    has = {"system": system is not None, "stratum": stratum is not None}
    roles = {"judges": judges, "item": item, "judge": judge, "system": system, "stratum": stratum}
    one_table = calibration is None
    test_roles = {**roles, "human": human} if one_table else roles
    rows = _collect(test, "test", test_roles, optional=("human",))
    tables = [(rows, one_table and "human" in rows.columns)]
    if calibration is not None:
        if human is None:
            raise ValueError("human=None cannot be combined with calibration=; name its column.")
        tables.append((_collect(calibration, "calibration", {**roles, "human": human}), True))
    uses, parsed = [], []
    labels, source = None, None
    if categorical:
        for table_rows, _ in tables:
            for role, column in roles.items():
                if column is not None and role != "judge":
                    _check_present(table_rows, role, column)
        labels, source = _category_plan(tables, {"judge": judge, "human": human}, categories)
    for table_rows, with_human in tables:
        for role, column in roles.items():
            if column is not None and role != "judge":
                _check_present(table_rows, role, column)
        if categorical:
            codes, use = _category_codes(table_rows, "judge", judge, labels), None
        else:
            codes, use = _verdict_codes(table_rows, judge, positive)
        uses.append(use)
        _warn_missing(table_rows.where, judge, table_rows.columns["judges"], codes)
        human_codes = None
        if with_human and categorical:
            human_codes = _category_codes(table_rows, "human", human, labels)
            if table_rows.where.startswith("calibration"):
                _require_human(table_rows, human, human_codes)
        elif with_human:
            human_codes, h_use = _human_codes(
                table_rows, human, positive, required=table_rows.where.startswith("calibration")
            )
            uses.append(h_use)
        parsed.append(_items(table_rows, codes, human_codes, has))
    if positive is not None:
        check_positive_held(positive, [u for u in uses if u is not None])
    all_judges = [j for t, _ in tables for j in t.columns["judges"]]
    judge_labels = label_array("judges", sorted_labels(all_judges)).tolist()
    chosen, labelled, unlabelled = _design(
        parsed[0], parsed[1] if len(parsed) > 1 else None, design, one_table
    )
    table = _arrays(labelled, unlabelled, judge_labels, len(labels) if categorical else None)
    return table._replace(design=chosen, categories=labels, categories_source=source)


class ItemRows(NamedTuple):
    """Verdict rows of several judges with covariates (:class:`JuryItems`)."""

    row_item: np.ndarray  # (R,) index into the items
    row_judge: np.ndarray  # (R,) index into judges
    verdict: np.ndarray  # (R,) 1/0
    covariates: np.ndarray  # (R, p) float
    truth: np.ndarray  # (I,) -1 unlabelled, 0, 1
    item_system: np.ndarray  # (I,) index into systems
    item_stratum: np.ndarray  # (I,) index into strata
    item_ids: list
    judges: np.ndarray
    systems: np.ndarray
    strata: np.ndarray
    design: str


def _covariate_values(rows: _Rows, column: str) -> np.ndarray:
    values = rows.columns[f"covariate:{column}"]
    out = np.empty(len(values))
    bad = []
    for r, v in enumerate(values):
        if isinstance(v, bool | np.bool_):
            out[r] = float(v)
        elif isinstance(v, int | float | np.integer | np.floating) and np.isfinite(v):
            out[r] = float(v)
        else:
            try:
                out[r] = float(str(v).strip())
                if not np.isfinite(out[r]):
                    bad.append(r)
            except ValueError:
                bad.append(r)
    if bad:
        raise ValueError(
            f"Covariate column {column!r} of the {rows.where} has {len(bad)} value(s) that are "
            f"missing or not numbers (rows {_shown(bad)}, 0-based; e.g. "
            f"{_shown([values[r] for r in bad[:3]])}). Covariates must be numbers (booleans "
            f"count 0/1); fill or drop those rows, or encode a category as 0/1 columns."
        )
    return out


def count_jury_items(
    test,
    calibration=None,
    *,
    judges: str,
    item: str,
    covariates,
    judge: str = "judge",
    human: str | None = "human",
    system: str | None = None,
    stratum: str | None = None,
    positive=None,
    design: str | None = None,
) -> ItemRows:
    """Read verdict rows with covariates; see :meth:`JuryItems.from_frames`."""
    if isinstance(covariates, str):
        covariates = [covariates]
    covariates = list(covariates)
    if not covariates:
        raise ValueError("covariates= needs at least one column name.")
    if design not in (None, "stratified", "random"):
        raise ValueError(f"design must be 'stratified', 'random' or None; got {design!r}.")
    roles = {"judges": judges, "item": item, "judge": judge, "system": system, "stratum": stratum}
    roles |= {f"covariate:{c}": c for c in covariates}
    has = {"system": system is not None, "stratum": stratum is not None}
    tables = [_collect(test, "test", {**roles, "human": human}, optional=("human",))]
    if calibration is not None:
        tables.append(_collect(calibration, "calibration", {**roles, "human": human}))
    parsed, uses = [], []
    for rows in tables:
        for role, column in roles.items():
            if column is not None and role not in ("judge",) and not role.startswith("cov"):
                _check_present(rows, role, column)
        codes, use = _verdict_codes(rows, judge, positive)
        _warn_missing(rows.where, judge, rows.columns["judges"], codes)
        human_codes = None
        if "human" in rows.columns:
            human_codes, h_use = _human_codes(
                rows, human, positive, required=rows.where.startswith("calibration")
            )
            uses.append(h_use)
        uses.append(use)
        x = np.column_stack([_covariate_values(rows, c) for c in covariates])
        parsed.append((rows, codes, human_codes, x))
    if positive is not None:
        check_positive_held(positive, [u for u in uses if u is not None])
    return _item_rows(parsed, has, covariates, design, calibration is not None)


def _item_rows(parsed, has, covariates, design, separate: bool) -> ItemRows:
    """Index the items (per system and id) and their rows; decide the design."""
    keys: dict[tuple, int] = {}
    truth, strata_of, rows_out = [], [], []
    for table, (rows, codes, human, x) in enumerate(parsed):
        for r, item in enumerate(rows.columns["item"]):
            if codes[r] < 0:
                continue
            key = (rows.columns["system"][r] if has["system"] else DEFAULT_LABEL, item)
            stratum = rows.columns["stratum"][r] if has["stratum"] else DEFAULT_LABEL
            if key not in keys:
                keys[key] = len(keys)
                truth.append(-1)
                strata_of.append(stratum)
            i = keys[key]
            if strata_of[i] != stratum:
                raise ValueError(
                    f"Item {key!r} lies in more than one stratum across its rows; an item's "
                    f"stratum must be the same on every row. Item ids must be unique within a "
                    f"system: if they restart in each stratum, combine them with the stratum "
                    f"(e.g. 'subset/17')."
                )
            if human is not None and human[r] >= 0:
                if truth[i] >= 0 and truth[i] != human[r]:
                    raise ValueError(f"Item {key!r} has different human labels on its rows.")
                truth[i] = int(human[r])
            rows_out.append((i, rows.columns["judges"][r], int(codes[r]), x[r], table))
    if separate:
        test_items = {i for i, *_, t in rows_out if t == 0}
        cal_items = {i for i, *_, t in rows_out if t == 1}
        if test_items & cal_items:
            raise ValueError(
                "Some calibration items are also test items (matching system and item id). For "
                "labelled items among the judged ones, pass one table with the human column "
                "filled for them (the random design); a separate calibration table must use "
                "its own ids."
            )
    chosen = "random" if (not separate and any(t >= 0 for t in truth)) else (design or "stratified")
    if not separate and design == "stratified" and chosen == "random":
        raise ValueError(
            "design='stratified' was passed for one table with human labels: labelled rows of "
            "the judged items are a random subset by construction. Pass the stratified set as "
            "calibration=, or design='random'."
        )
    judges = label_array("judges", sorted_labels(j for _, j, *_ in rows_out))
    systems = label_array("system", sorted_labels(k[0] for k in keys))
    strata = label_array("stratum", sorted_labels(strata_of))
    j_index = {plain_value(j): n for n, j in enumerate(judges.tolist())}
    s_index = {plain_value(s): n for n, s in enumerate(systems.tolist())}
    r_index = {plain_value(s): n for n, s in enumerate(strata.tolist())}
    return ItemRows(
        np.array([i for i, *_ in rows_out], dtype=np.int64),
        np.array([j_index[j] for _, j, *_ in rows_out], dtype=np.int64),
        np.array([v for _, _, v, *_ in rows_out], dtype=np.int8),
        np.array([x for *_, x, _ in rows_out], dtype=float).reshape(-1, len(covariates)),
        np.array(truth, dtype=np.int8),
        np.array([s_index[k[0]] for k in keys], dtype=np.int64),
        np.array([r_index[s] for s in strata_of], dtype=np.int64),
        [k[1] for k in keys],
        judges,
        systems,
        strata,
        chosen,
    )
