"""Joint verdict patterns of several systems on shared items, and the joint table."""

from __future__ import annotations

import itertools
import warnings
from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Any, NamedTuple

import narwhals.stable.v2 as nw
import numpy as np
import xarray as xr

from bayesjudge.core._validation import as_count
from bayesjudge.data._common import (
    CODE_BITS,
    DEFAULT_LABEL,
    JOINT,
    JOINT_DIMS,
    KEY_COLUMN,
    MAX_FULL_SYSTEMS,
    PATTERN,
    ROWS_COLUMN,
    VERDICT,
    VERDICT_KEY,
    describe_groups,
    is_blank,
    plain_value,
    rows_text,
    sorted_labels,
)


class ItemQuery(NamedTuple):
    """What :func:`joint_from_frame` needs to count a test table by item on its engine."""

    frame: Any  # narwhals LazyFrame: group keys, item id and (normalised) verdict key
    item_is_float: bool
    item_is_text: bool  # then an empty (or all-space) id is missing too
    correct: list  # raw verdict-key values meaning correct
    incorrect: list  # ... and incorrect; any other value is a missing verdict


def verdict_patterns(n_systems: int, *, ascending: bool = False) -> list[str]:
    """All ``2**n_systems`` verdict patterns of K systems: the one listing of the patterns.

    A pattern is a string of K characters ``"1"``/``"0"``, character ``j`` the verdict on
    system ``j`` (``"1"`` = judged correct; the paired model reads the same strings as the
    systems' latent correctness). Read as a binary number (system 0 the most significant
    digit), the patterns are listed from the largest (``"1…1"``) down to ``"0…0"``; with
    ``ascending``, from ``"0…0"`` up, the reverse order.

    The two orders are both observable and each stays where it is: ``"1…1"`` first is the
    order of :attr:`JudgeCounts.joint`, :meth:`JudgeCounts.joint_table` and the ``joint=``
    argument of :meth:`JudgeCounts.from_counts` (:func:`all_patterns`); ``"0…0"`` first is
    the order of the paired model's ``cell`` and ``pattern`` coordinates (``paired_cells`` in
    :mod:`bayesjudge.models.build`), stored in saved fits.

    Parameters
    ----------
    n_systems : int
        K, the number of systems.
    ascending : bool, default False
        List ``"0…0"`` first instead of ``"1…1"`` first.

    Returns
    -------
    list of str
        The ``2**K`` patterns.

    Examples
    --------
    >>> verdict_patterns(2)
    ['11', '10', '01', '00']
    >>> verdict_patterns(2, ascending=True)
    ['00', '01', '10', '11']
    """
    digits = "01" if ascending else "10"
    return ["".join(p) for p in itertools.product(digits, repeat=int(n_systems))]


def pattern_matrix(patterns, n_systems: int) -> np.ndarray:
    """Return the 0/1 verdict matrix (pattern, system) of pattern strings such as ``"10"``.

    ``matrix[c, s]`` is 1 when pattern ``c`` has the judge calling system ``s`` correct
    (character ``s`` is ``"1"``); see :func:`verdict_patterns`.

    Examples
    --------
    >>> pattern_matrix(["10", "01"], 2).tolist()
    [[1, 0], [0, 1]]
    """
    matrix = np.array([[c == "1" for c in p] for p in patterns], dtype=np.int8)
    return matrix.reshape(len(patterns), int(n_systems))


def all_patterns(n_systems: int) -> list[str]:
    """All ``2**n_systems`` verdict patterns in canonical order, ``"1…1"`` first, ``"0…0"`` last.

    Character ``j`` of a pattern is the verdict on system ``j`` ("1" = judged correct); the
    order of :func:`verdict_patterns`.

    Examples
    --------
    >>> all_patterns(2)
    ['11', '10', '01', '00']
    """
    return verdict_patterns(n_systems)


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
    return pattern_matrix(texts, n_systems)


def joint_arrays(joint: xr.DataArray, verdict, systems, strata) -> tuple[np.ndarray, np.ndarray]:
    """Validate a joint table and return its counts (stratum, pattern) and verdicts."""
    dims = set(joint.dims)
    if PATTERN not in dims or not dims <= set(JOINT_DIMS):
        raise ValueError(
            f"The joint verdict table must have dims ('stratum', 'pattern') (or just "
            f"'pattern' for a single stratum); got {joint.dims}."
        )
    if "stratum" in dims:
        if "stratum" in joint.indexes:
            labels = [plain_value(v) for v in joint.indexes["stratum"].tolist()]
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
        if matrix.shape != (values.shape[1], len(systems)) or set(np.unique(matrix)) - {
            0,
            1,
        }:
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


def canonical_joint(values: np.ndarray, matrix: np.ndarray):
    """Merge equal patterns, drop unobserved ones and sort ("1…1" first)."""
    merged: dict[str, np.ndarray] = {}
    for pattern, column in zip(_pattern_strings(matrix), values.T, strict=True):
        merged[pattern] = merged.get(pattern, 0) + column
    patterns = sorted((p for p, c in merged.items() if np.any(c)), reverse=True)
    n_strata, n_systems = values.shape[0], matrix.shape[1]
    table = np.zeros((n_strata, len(patterns)), dtype=np.int64)
    for j, p in enumerate(patterns):
        table[:, j] = merged[p]
    return table, patterns, pattern_matrix(patterns, n_systems)


def check_joint_against_counts(table, verdict, n, k, systems, strata) -> None:
    """Shared items are a subset of each system's test items: check n, k against them."""
    shared = table.sum(axis=1)[None, :]  # (1, stratum)
    ones = (table @ verdict).T  # (system, stratum)
    zeros = shared - ones
    for bad, parts, what in (
        (ones > k, [("joint verdict-1 count", ones), ("k", k)], "judged correct"),
        (
            zeros > n - k,
            [("joint verdict-0 count", zeros), ("n - k", n - k)],
            "judged incorrect",
        ),
    ):
        if bad.any():
            raise ValueError(
                f"The joint verdict table counts more shared items {what} than the system's "
                f"test counts allow: {describe_groups(bad, parts, systems, strata)}. The "
                f"shared items are among each system's test items, so n and k must include "
                f"them; check that the joint table and the counts come from the same items."
            )


def _joint_from_items(rows, systems, strata, item_column: str):
    """Count items judged for every system by stratum and verdict pattern.

    ``rows`` are ``(system, stratum, item, verdict or None)``. Returns the table
    (stratum, pattern) and the verdict matrix, in canonical form; None when no two systems
    share an item (:func:`_judged_apart`).
    """
    if any(is_blank(r[2]) for r in rows):
        missing = sum(is_blank(r[2]) for r in rows)
        raise ValueError(
            f"Column {item_column!r} (item) in the test table has {rows_text(missing)} with a "
            f"missing item id. Fill in the item ids or drop those rows."
        )
    per_system_item = Counter((r[0], r[2]) for r in rows)
    repeated = [(s, i, c) for (s, i), c in per_system_item.items() if c > 1]
    if repeated:
        shown = ", ".join(f"{i!r} (system {s!r}, {c} rows)" for s, i, c in repeated[:5])
        raise ValueError(
            f"Item ids in column {item_column!r} must be unique within each system; "
            f"{len(repeated)} repeat: {shown}{' …' if len(repeated) > 5 else ''}. Remove the "
            f"duplicate rows, or give distinct items distinct ids. If the rows are repeated "
            f"verdicts of one item (Inspect epochs, several samples per prompt), pass "
            f"repeats=<the column numbering them>, e.g. repeats='epoch': they are then counted "
            f"as one item judged several times."
        )
    item_strata: dict[Any, set] = defaultdict(set)
    item_verdicts: dict[Any, dict] = defaultdict(dict)
    for s, t, i, v in rows:
        item_strata[i].add(t)
        if v is not None:
            item_verdicts[i][s] = v
    mixed = [(i, ts) for i, ts in item_strata.items() if len(ts) > 1]
    if mixed:
        shown = ", ".join(f"{i!r} ({sorted_labels(ts)!r})" for i, ts in mixed[:5])
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
        if _judged_apart(item_verdicts, systems):
            return None
        raise ValueError(
            f"No item id in column {item_column!r} has a judge verdict for every system "
            f"({list(systems)!r}), so there is no joint verdict table."
            f"{_why_nothing_shared(item_verdicts, systems)} Check that the item ids name the "
            f"same item across systems, or select the systems that share items first (for a "
            f"harness log: one log per group of systems that judged the same items). Counts "
            f"without item= (a CSV/Parquet --test without --item) are unpaired."
        )
    patterns = sorted({p for _, p in counter}, reverse=True)
    table = np.zeros((len(strata), len(patterns)), dtype=np.int64)
    for (j, p), c in counter.items():
        table[j, patterns.index(p)] += c
    verdict = _parse_patterns(patterns, len(systems), systems)
    return table, verdict


def _item_rows(query: ItemQuery) -> list[tuple]:
    """Collect the item-level rows ``(system, stratum, item id, verdict or None)``."""
    full = query.frame.collect().to_dict(as_series=False)
    n_rows = len(full[KEY_COLUMN.format("item")])

    def column(key: str) -> list:
        return full[key] if key in full else [DEFAULT_LABEL] * n_rows

    verdicts = {**dict.fromkeys(query.correct, 1), **dict.fromkeys(query.incorrect, 0)}
    return [
        (plain_value(s), plain_value(t), plain_value(i), verdicts.get(plain_value(v)))
        for s, t, i, v in zip(
            column(KEY_COLUMN.format("system")),
            column(KEY_COLUMN.format("stratum")),
            full[KEY_COLUMN.format("item")],
            full[VERDICT_KEY],
            strict=True,
        )
    ]


def _flat_sum(terms: list) -> nw.Expr:
    """Sum Int64 expressions as one horizontal sum (0 when there are none).

    A chain ``a + b + c + …`` nests one level per term, and narwhals' pandas backend
    evaluates it recursively: some 240 systems (one term each) exceeded Python's recursion
    limit. ``sum_horizontal`` adds the columns in one flat step on every engine.
    """
    if not terms:
        return nw.lit(0, dtype=nw.Int64)
    return nw.sum_horizontal(*terms).cast(nw.Int64)


def joint_from_frame(query: ItemQuery, systems, strata, item_column: str):
    """Count items judged for every system by stratum and verdict pattern, on the engine.

    Two ``group_by`` steps run on the table's engine as one query: per item (rows, systems,
    strata, verdicts, and the verdict pattern as bit codes), then over those per-item
    summaries; only the second, small result (one row per stratum and observed pattern,
    plus flags) is collected. If a check fails (missing or repeated item ids, an item in
    several strata, no shared item), the item rows are collected and
    :func:`_joint_from_items` raises the error that names the offending ids. Returns None
    (no joint table: unpaired counts) when no two systems judged one item.
    """
    names = query.frame.collect_schema().names()
    system_key, stratum_key = KEY_COLUMN.format("system"), KEY_COLUMN.format("stratum")
    item_key, verdict = KEY_COLUMN.format("item"), nw.col(VERDICT_KEY)

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
        index = _flat_sum([flag(nw.col(stratum_key) == t) * j for j, t in enumerate(strata) if j])
        columns.append(index.alias("stratum"))
    else:
        columns.append(nw.lit(0, dtype=nw.Int64).alias("stratum"))
    # Bit j of code c is the verdict of system c * CODE_BITS + j (sums of distinct powers of
    # two stay below 2**CODE_BITS, so int64 never overflows).
    n_codes = -(-len(systems) // CODE_BITS)
    codes = [f"code{c}" for c in range(n_codes)]
    # One presence flag per system: per item, the number of systems is the sum of their
    # maxima and a repeated id shows as more rows than systems. (Not n_unique, which
    # narwhals' Dask backend sums over partitions, nor a group_by over (item, system), which
    # reduces nothing when every item has one row per system and takes twice as long.)
    present = [f"present{j}" for j in range(len(systems))] if system_key in names else []
    if present:
        for c, code in enumerate(codes):
            chunk = systems[c * CODE_BITS : (c + 1) * CODE_BITS]
            bits = _flat_sum([flag(nw.col(system_key) == s) * (2**j) for j, s in enumerate(chunk)])
            columns.append((bits * correct).alias(code))
        columns += [
            (nw.col(system_key) == s).cast(nw.Int8).alias(name)
            for s, name in zip(systems, present, strict=True)
        ]
    else:
        columns.append(correct.alias(codes[0]))
    with warnings.catch_warnings():
        # pandas calls a wide aggregation (one presence column per system) "highly
        # fragmented": a performance note about narwhals' own intermediate frame.
        warnings.filterwarnings("ignore", message="DataFrame is highly fragmented")
        per_item = (
            query.frame.select(*columns)
            .group_by(item_key)
            .agg(
                nw.len().alias(ROWS_COLUMN),
                *(nw.col(c).sum() for c in ["missing", "valid", *codes]),
                nw.col("stratum").min().alias("lo"),
                nw.col("stratum").max().alias("hi"),
                *(nw.col(name).max() for name in present),
            )
        )
        distinct = (
            _flat_sum([nw.col(name).cast(nw.Int64) for name in present])
            if present
            else nw.lit(1, dtype=nw.Int64)
        )
        bad = (
            (nw.col("missing") > 0)
            | (nw.col("lo") != nw.col("hi"))
            | (nw.col(ROWS_COLUMN) > distinct)
        )
        shared = flag(~bad & (nw.col("valid") == len(systems)))
        small = (
            per_item.select(
                flag(bad).alias("bad"),
                shared.alias("shared"),
                (nw.col("lo") * shared).alias("stratum"),
                *((nw.col(code) * shared).alias(code) for code in codes),
            )
            .group_by("bad", "shared", "stratum", *codes)
            .agg(nw.len().alias(ROWS_COLUMN))
            .collect()
            .to_dict(as_series=False)
        )
    counter: Counter = Counter()
    for i, n_items in enumerate(small[ROWS_COLUMN]):
        if small["shared"][i]:
            bits = "".join(format(int(small[code][i]), f"0{CODE_BITS}b")[::-1] for code in codes)
            counter[(int(small["stratum"][i]), bits[: len(systems)])] += int(n_items)
    one_type = not isinstance(query.frame.collect_schema()[item_key], nw.Object | nw.Unknown)
    if not any(small["bad"]) and not counter and one_type:
        # No item is shared by every system: one more (one-row) query tells whether any item
        # was judged for two; if none was, the counts are unpaired (_judged_apart) without
        # collecting the item rows.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="DataFrame is highly fragmented")
            multi = (
                per_item.select(flag(distinct > 1).alias("multi"))
                .select(nw.col("multi").max())
                .collect()
                .to_dict(as_series=False)["multi"]
            )
        if not multi or not multi[0]:
            return None
    if any(small["bad"]) or not counter:
        return _joint_from_items(_item_rows(query), systems, strata, item_column)
    patterns = sorted({p for _, p in counter}, reverse=True)
    table = np.zeros((len(strata), len(patterns)), dtype=np.int64)
    for (j, p), c in counter.items():
        table[j, patterns.index(p)] += c
    return table, _parse_patterns(patterns, len(systems), systems)


def _judged_apart(item_verdicts: Mapping, systems) -> bool:
    """Return True when no two systems share an item id with a verdict, even compared as text.

    The systems then judged different items (one system; a held-out split per system; or,
    in the random design, every judged item labelled): there is nothing to pair, and the
    counts are unpaired, as without ``item=``. Systems that share items with some systems
    but not with all are refused instead (:func:`_joint_from_items`): the joint table would
    silently drop every pairing.
    """
    seen: dict[str, Any] = {}
    for i, verdicts in item_verdicts.items():
        for s in verdicts:
            if seen.setdefault(str(i), s) != s:
                return False
    return True


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


def attach_joint(ds: xr.Dataset, joint, systems: list, strata: list) -> xr.Dataset:
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
    values, matrix = joint_arrays(da, None, systems, strata)
    table, patterns, matrix = canonical_joint(values, matrix)
    return ds.assign({JOINT: (JOINT_DIMS, table)}).assign_coords(
        {
            PATTERN: np.array(patterns, dtype=f"<U{max(n_systems, 1)}"),
            VERDICT: ((PATTERN, "system"), matrix),
        }
    )
