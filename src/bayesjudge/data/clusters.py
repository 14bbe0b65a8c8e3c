"""Repeated verdicts of an item (clusters): the cluster table of :class:`JudgeCounts`.

When each test item is judged several times (Inspect epochs, several samples per prompt), a
group's test data is summarised by its *cluster table* ``clusters`` over dims
``(system, stratum, repeats, positives)``: the number of items judged ``r`` times (coordinate
``repeats``, 1 … R) of which ``k`` verdicts said correct (coordinate ``positives``, 0 … R).
``n`` and ``k`` are then the *verdict* totals ``Σ r`` and ``Σ k``, so that ``p̂ = k/n`` is
the share of verdicts called correct and every point estimate stays what it was; the table
tells the estimators that the items, not the verdicts, are the independent units
(:mod:`bayesjudge.core.cluster`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import xarray as xr

from bayesjudge.data._common import (
    DIMS,
    KEY_COLUMN,
    ROWS_COLUMN,
    VERDICT_KEY,
    group_name,
    is_blank,
    plain_value,
    rows_text,
)

__all__ = [
    "CALIBRATION_CLUSTERS",
    "CALIBRATION_CLUSTER_DIMS",
    "CLUSTERS",
    "CLUSTER_DIMS",
    "POSITIVES",
    "REPEATS",
    "TRUTH",
    "check_calibration_clusters",
    "check_cluster_table",
    "cluster_table_from_items",
]

CLUSTERS = "clusters"
REPEATS = "repeats"
POSITIVES = "positives"
CLUSTER_DIMS = (*DIMS, REPEATS, POSITIVES)
# Labelled items judged several times: their cluster table per human label (truth 0: labelled
# incorrect, 1: labelled correct); ``positives`` counts the verdicts that said *correct*.
CALIBRATION_CLUSTERS = "calibration_clusters"
TRUTH = "truth"
CALIBRATION_CLUSTER_DIMS = (*DIMS, TRUTH, REPEATS, POSITIVES)
# The repeat-number column in the per-item query of from_frames(repeats=...).
REPEAT_KEY = "__bayesjudge_repeat__"
MAX_SHOWN = 5


def cluster_coords(max_repeats: int) -> dict[str, np.ndarray]:
    """Return the coordinates of a cluster table with up to ``max_repeats`` verdicts per item."""
    return {
        REPEATS: np.arange(1, max_repeats + 1, dtype=np.int64),
        POSITIVES: np.arange(0, max_repeats + 1, dtype=np.int64),
    }


def check_cluster_table(
    clusters: xr.DataArray, systems: list, strata: list, n: np.ndarray, k: np.ndarray
) -> np.ndarray:
    """Validate a ``clusters`` variable against the groups and ``n``, ``k``; return int64.

    The table must have dims ``repeats`` and ``positives`` (plus ``system``/``stratum``,
    broadcast where absent), coordinates 1 … R and 0 … R, whole non-negative counts, zeros
    where ``positives > repeats``, and add up to the verdict totals: ``Σ c·r == n`` and
    ``Σ c·k == k`` in every group.
    """
    extra = [d for d in clusters.dims if d not in CLUSTER_DIMS]
    if extra or REPEATS not in clusters.dims or POSITIVES not in clusters.dims:
        raise ValueError(
            f"The {CLUSTERS!r} variable (items by number of verdicts and of 'correct' verdicts) "
            f"must have dims {list(CLUSTER_DIMS)}; got {list(clusters.dims)}."
        )
    values = _cluster_values(clusters, systems, strata, CLUSTERS)
    r = np.arange(1, values.shape[-2] + 1)[:, None]
    pos = np.arange(values.shape[-1])[None, :]
    _check_totals(values, {"n": (n, r), "k": (k, pos)}, systems, strata, CLUSTERS)
    return values


def _check_totals(values, wanted: dict, systems, strata, name: str) -> None:
    """Refuse a table whose Σ c·weight differs from a given total in some group."""
    for total, (given, weight) in wanted.items():
        have = (values * weight).sum(axis=(-2, -1))
        bad = np.argwhere(have != given)
        if bad.size:
            i, j = bad[0]
            raise ValueError(
                f"{name!r} does not add up to {total} (a verdict total) in "
                f"({group_name(systems[i], strata[j])}): {total}={int(given[i, j])} but the "
                f"table gives {int(have[i, j])}. With repeated verdicts, n, m0 and m1 count "
                f"verdicts (Σ items·repeats), k the 'correct' ones, tn and tp the verdicts that "
                f"agree with the human label."
            )


def _cluster_values(clusters: xr.DataArray, systems: list, strata: list, name: str):
    """Coordinates, broadcast, whole non-negative counts, zeros above k = r: int64 values."""
    size = clusters.sizes[REPEATS]
    want = cluster_coords(size)
    for dim in (REPEATS, POSITIVES):
        got = clusters[dim].values if dim in clusters.coords else None
        if got is None or got.shape != want[dim].shape or (got != want[dim]).any():
            raise ValueError(
                f"The {name!r} coordinate {dim!r} must be {want[dim].tolist()} (repeats 1 … R, "
                f"positives 0 … R); got {None if got is None else got.tolist()}."
            )
    for dim, labels in (("system", systems), ("stratum", strata)):
        if dim not in clusters.dims:
            clusters = clusters.expand_dims({dim: labels})
    order = [d for d in CALIBRATION_CLUSTER_DIMS if d in clusters.dims]
    values = clusters.sel(system=systems, stratum=strata).transpose(*order).values
    if values.dtype.kind not in "biuf" or not np.isfinite(values).all():
        raise ValueError(f"{name!r} must hold finite whole numbers; got dtype {values.dtype}.")
    if (values < 0).any() or (values != np.round(values)).any():
        raise ValueError(
            f"{name!r} counts items, whole numbers >= 0; got "
            f"{values[(values < 0) | (values != np.round(values))][:5].tolist()}."
        )
    values = values.astype(np.int64)
    if (values[..., want[POSITIVES][None, :] > want[REPEATS][:, None]] != 0).any():
        raise ValueError(
            f"{name!r} has items with more 'correct' verdicts than verdicts "
            f"(positives > repeats); those entries must be 0."
        )
    return values


def check_calibration_clusters(
    table: xr.DataArray, systems: list, strata: list, totals: dict[str, np.ndarray]
) -> np.ndarray:
    """Validate ``calibration_clusters`` against the groups and ``m0, tn, m1, tp``; return int64.

    Dims ``(system, stratum, truth, repeats, positives)`` (system/stratum broadcast where
    absent), ``truth`` coordinate ``[0, 1]``, the value checks of :func:`check_cluster_table`,
    and the verdict totals ``m0 = Σ c·r``, ``tn = Σ c·(r − k)`` (truth 0) and ``m1 = Σ c·r``,
    ``tp = Σ c·k`` (truth 1). Returned with dims in ``CALIBRATION_CLUSTER_DIMS`` order.
    """
    dims = set(table.dims)
    if not {TRUTH, REPEATS, POSITIVES} <= dims or dims - set(CALIBRATION_CLUSTER_DIMS):
        raise ValueError(
            f"The {CALIBRATION_CLUSTERS!r} variable (labelled items by human label, number of "
            f"verdicts and of 'correct' verdicts) must have dims "
            f"{list(CALIBRATION_CLUSTER_DIMS)}; got {list(table.dims)}."
        )
    got = table[TRUTH].values.tolist() if TRUTH in table.coords else None
    if got != [0, 1]:
        raise ValueError(
            f"The {CALIBRATION_CLUSTERS!r} coordinate {TRUTH!r} must be [0, 1] (0: labelled "
            f"incorrect, 1: labelled correct); got {got}."
        )
    values = _cluster_values(table, systems, strata, CALIBRATION_CLUSTERS)
    r = np.arange(1, values.shape[-2] + 1)[:, None]
    pos = np.arange(values.shape[-1])[None, :]
    name = CALIBRATION_CLUSTERS
    _check_totals(values[:, :, 0], {"m0": (totals["m0"], r), "tn": (totals["tn"], r - pos)},
                  systems, strata, name)  # fmt: skip
    _check_totals(values[:, :, 1], {"m1": (totals["m1"], r), "tp": (totals["tp"], pos)},
                  systems, strata, name)  # fmt: skip
    return values


def cluster_table_from_items(per_item: dict, systems: list, strata: list) -> xr.DataArray:
    """Tally per-item (system, stratum, verdicts r, positives k) into a cluster table.

    ``per_item`` maps ``"system"``, ``"stratum"``, ``"r"`` and ``"k"`` to equal-length lists
    (one entry per item; an item with no valid verdict has r = 0 and is left out).
    """
    r_all = [int(v) for v in per_item["r"]]
    size = max([1, *r_all])
    table = np.zeros((len(systems), len(strata), size, size + 1), dtype=np.int64)
    sys_index = {s: i for i, s in enumerate(systems)}
    str_index = {t: j for j, t in enumerate(strata)}
    counter = Counter(
        zip(
            per_item["system"],
            per_item["stratum"],
            r_all,
            (int(v) for v in per_item["k"]),
            strict=True,
        )
    )
    for (s, t, r, k), c in counter.items():
        if r > 0:
            table[sys_index[s], str_index[t], r - 1, k] += c
    return xr.DataArray(
        table,
        dims=CLUSTER_DIMS,
        coords={"system": systems, "stratum": strata, **cluster_coords(size)},
    )


def _shown(pairs: list) -> str:
    more = len(pairs) - MAX_SHOWN
    return ", ".join(pairs[:MAX_SHOWN]) + (f" … ({more} more)" if more > 0 else "")


def _check_repeat_pairs(frame, keys: list[str], item: str, repeats: str, where: str) -> None:
    """Refuse missing repeat numbers and an (item, repeat) pair that occurs twice."""
    repeat_key = nw.col(REPEAT_KEY)
    missing = frame.select(repeat_key.is_null().cast(nw.Int64).sum().alias("m")).collect()
    n_missing = int(missing.to_dict(as_series=False)["m"][0])
    if n_missing:
        raise ValueError(
            f"Column {repeats!r} (repeats) in the {where} has {rows_text(n_missing)} without a "
            f"value; every verdict of a repeated item needs its repeat number (e.g. its epoch)."
        )
    twice = (
        frame.group_by(*keys, REPEAT_KEY)
        .agg(nw.len().alias(ROWS_COLUMN))
        .filter(nw.col(ROWS_COLUMN) > 1)
        .collect()
        .to_dict(as_series=False)
    )
    if twice[ROWS_COLUMN]:
        item_key = KEY_COLUMN.format("item")
        pairs = [
            f"item {plain_value(i)!r} {repeats}={plain_value(e)!r} ({c} rows)"
            for i, e, c in zip(twice[item_key], twice[REPEAT_KEY], twice[ROWS_COLUMN], strict=True)
        ]
        raise ValueError(
            f"In the {where}, {len(pairs)} (item, {repeats}) pairs occur more than once "
            f"(within a system): {_shown(pairs)}. Each verdict of an item needs its own "
            f"{repeats!r} value; remove duplicate rows or number the repeats."
        )


def clusters_from_query(query: Any, systems: list, strata: list, item: str, repeats: str, source):
    """Count the test table's items by (verdicts, 'correct' verdicts) per group, on its engine.

    ``query`` is the test table's :class:`~bayesjudge.data.patterns.ItemQuery` with the
    ``REPEAT_KEY`` column. Rows without a valid verdict were dropped from ``n`` (with a
    warning) and are not counted here either; an item whose verdicts all are missing is not
    an item of the table. Missing item ids, an item in two strata and a repeated (item,
    repeat) pair are errors.
    """
    frame, where = query.frame, source.where
    names = frame.collect_schema().names()
    system_key, stratum_key = KEY_COLUMN.format("system"), KEY_COLUMN.format("stratum")
    item_key, verdict = KEY_COLUMN.format("item"), nw.col(VERDICT_KEY)
    keys = [k for k in (system_key,) if k in names] + [item_key]
    _check_repeat_pairs(frame, keys, item, repeats, where)
    valid = (
        verdict.is_in(query.correct + query.incorrect) if query.correct + query.incorrect else None
    )
    correct = verdict.is_in(query.correct) if query.correct else None

    def flag(expr):
        return nw.lit(0, dtype=nw.Int64) if expr is None else expr.cast(nw.Int64)

    group_keys = keys if stratum_key not in names else [*keys, stratum_key]
    per_item = (
        frame.with_columns(flag(valid).alias("r"), flag(correct).alias("k"))
        .group_by(*group_keys)
        .agg(nw.col("r").sum(), nw.col("k").sum())
        .collect()
        .to_dict(as_series=False)
    )
    ids = [plain_value(i) for i in per_item[item_key]]
    if any(is_blank(i) for i in ids):
        raise ValueError(
            f"Column {item!r} (item) in the {where} has rows with a missing item id; with "
            f"repeats={repeats!r} every verdict must name its item. Fill in the ids or drop "
            f"those rows."
        )
    size = len(ids)
    system = per_item.get(system_key, [systems[0]] * size)
    stratum = per_item.get(stratum_key, [strata[0]] * size)
    system = [plain_value(v) for v in system]
    stratum = [plain_value(v) for v in stratum]
    seen: dict[tuple, Any] = {}
    for s, t, i in zip(system, stratum, ids, strict=True):
        if seen.setdefault((s, i), t) != t:
            raise ValueError(
                f"Item {i!r} (system {s!r}) appears in two strata ({seen[(s, i)]!r} and {t!r}) "
                f"in the {where}: the verdicts of one item belong to one stratum. Fix the "
                f"stratum column or give distinct items distinct ids."
            )
    return cluster_table_from_items(
        {"system": system, "stratum": stratum, "r": per_item["r"], "k": per_item["k"]},
        systems,
        strata,
    )


def calibration_clusters_from_rows(
    rows: list, systems: list, strata: list, item: str, repeats: str, where: str
) -> xr.DataArray:
    """Tally labelled rows (:class:`~bayesjudge.data.design.LabelledRow`) into clusters per truth.

    Rows of one (system, item) are the verdicts of one labelled item; its human label and
    stratum must be the same on all of them, and every row needs its repeat number.
    """
    if any(is_blank(r.repeat) for r in rows):
        missing = sum(is_blank(r.repeat) for r in rows)
        raise ValueError(
            f"Column {repeats!r} (repeats) in the labelled rows of the {where} has "
            f"{rows_text(missing)} without a value; every verdict of a repeated item needs its "
            f"repeat number (e.g. its epoch)."
        )
    per_item: dict[tuple, list] = {}
    for row in rows:
        per_item.setdefault((row.system, row.item), []).append(row)
    mixed = [key for key, rs in per_item.items() if len({r.truth for r in rs}) > 1]
    if mixed:
        shown = _shown([f"{i!r} (system {s!r})" for s, i in mixed])
        raise ValueError(
            f"{len(mixed)} labelled items of the {where} carry different human labels on "
            f"different verdict rows ({item!r}: {shown}). A human label is about the item: "
            f"give every row of an item the same label."
        )
    moved = [key for key, rs in per_item.items() if len({r.stratum for r in rs}) > 1]
    if moved:
        shown = _shown([f"{i!r} (system {s!r})" for s, i in moved])
        raise ValueError(
            f"{len(moved)} labelled items of the {where} lie in two strata ({item!r}: {shown}): "
            f"the verdicts of one item belong to one stratum. Fix the stratum column."
        )
    size = max(len(rs) for rs in per_item.values())
    table = np.zeros((len(systems), len(strata), 2, size, size + 1), dtype=np.int64)
    sys_index = {s: i for i, s in enumerate(systems)}
    str_index = {t: j for j, t in enumerate(strata)}
    for (s, _), rs in per_item.items():
        r, k = len(rs), sum(x.verdict for x in rs)
        table[sys_index[s], str_index[rs[0].stratum], rs[0].truth, r - 1, k] += 1
    return xr.DataArray(
        table,
        dims=CALIBRATION_CLUSTER_DIMS,
        coords={"system": systems, "stratum": strata, TRUTH: [0, 1], **cluster_coords(size)},
    )


def _padded(table: xr.DataArray, size: int) -> xr.DataArray:
    """Return the table with repeats 1 … size and positives 0 … size (zeros added)."""
    return table.reindex(cluster_coords(size), fill_value=0)


def with_cluster_tables(
    ds: xr.Dataset,
    clusters: xr.DataArray,
    labelled: list | None,
    systems: list,
    strata: list,
    item: str,
    repeats: str,
    where: str,
) -> xr.Dataset:
    """Attach the test items' cluster table and, from labelled rows, the labelled items' one.

    Both share the ``repeats``/``positives`` axes, padded to the larger number of verdicts.
    """
    if not labelled:
        return ds.assign({CLUSTERS: clusters})
    cal = calibration_clusters_from_rows(labelled, systems, strata, item, repeats, where)
    size = max(clusters.sizes[REPEATS], cal.sizes[REPEATS])
    return ds.assign({CLUSTERS: _padded(clusters, size), CALIBRATION_CLUSTERS: _padded(cal, size)})
