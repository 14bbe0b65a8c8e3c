"""Sufficient statistics of a judge evaluation: the :class:`JudgeCounts` container.

Every estimator in bayesjudge needs only six counts per group (system × stratum): the test
counts ``n`` and ``k`` and the calibration counts ``m0``, ``tn``, ``m1`` and ``tp``.
:class:`JudgeCounts` holds them in an :class:`xarray.Dataset` and builds them either from
numbers (:meth:`JudgeCounts.from_counts`) or from item-level tables
(:meth:`JudgeCounts.from_frames`), counting on the user's dataframe engine through narwhals.
"""

from __future__ import annotations

import importlib.util
import warnings
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import xarray as xr

from bayesjudge.core._validation import format_values
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
    "booleans, the numbers 0/1, and (case-insensitive, whitespace-stripped) "
    "yes/no, correct/incorrect, pass/fail, true/false, '1'/'0'"
)
# Aliases for the columns of the counting query; unlikely to clash with user columns.
_KEY = "__bayesjudge_{}__"
_ROWS = "__bayesjudge_rows__"


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
        values = " > ".join(f"{name}={arr[i, j].item()!r}" for name, arr in parts)
        items.append(f"{values} in ({_group_name(systems[i], strata[j])})")
    more = len(where) - _MAX_GROUPS_SHOWN
    return "; ".join(items) + (f"; … ({more} more groups)" if more > 0 else "")


def _check_counts(values: Mapping[str, Any], systems, strata) -> dict[str, np.ndarray]:
    """Validate six (S, T) count arrays group by group and return them as int64."""
    out = {}
    for name in FIELDS:
        arr = np.asarray(values[name])
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
        out[name] = as_float.astype(np.int64)
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
    if any(_is_missing(v) for v in values):
        raise ValueError(
            f"{name} labels must not be missing (None/NaN); got {values!r}. Give every group a "
            f"label."
        )
    duplicates = [v for v, c in Counter(values).items() if c > 1]
    if duplicates:
        raise ValueError(
            f"{name} labels must be unique; got duplicates {duplicates!r} in {values!r}. "
            f"Add up the counts of groups that share a label, or rename them."
        )
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


def _as_frame(table, table_name: str):
    """Return ``table`` (a dataframe or a file path) as a narwhals LazyFrame."""
    if isinstance(table, str | Path):
        path = Path(table)
        if not path.is_file():
            raise FileNotFoundError(f"The {table_name} file {str(path)!r} does not exist.")
        suffix = path.suffix.lower()
        if suffix in (".csv", ".tsv"):
            separator = "\t" if suffix == ".tsv" else ","
            if _installed("polars"):
                return nw.scan_csv(str(path), backend="polars", separator=separator)
            return nw.read_csv(str(path), backend="pandas", separator=separator).lazy()
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
            f"{table_name} must be a pandas, polars (eager or lazy) or pyarrow table, or the "
            f"path of a CSV or Parquet file; got {type(table).__name__}."
        ) from None


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


def _classify(values: Mapping[Any, int], column: str, table_name: str, positive) -> dict:
    """Map each distinct non-missing label to 1 (correct) or 0 (incorrect)."""
    if positive is not None:
        target = _normalise(positive)
        others = [v for v in values if v != target]
        if len(others) > 1:
            shown = ", ".join(f"{v!r} ({_rows(values[v])})" for v in others)
            raise ValueError(
                f"With positive={positive!r}, column {column!r} in the {table_name} table must "
                f"hold {target!r} and at most one other value (meaning incorrect); it also "
                f"holds {shown}. Fix the stray values or the value of positive=."
            )
        return {v: int(v == target) for v in values}
    mapping, unknown = {}, {}
    for v in values:
        if isinstance(v, bool):
            mapping[v] = int(v)
        elif isinstance(v, int | float) and v in (0, 1):
            mapping[v] = int(v)
        elif isinstance(v, str) and v in _POSITIVE_WORDS:
            mapping[v] = 1
        elif isinstance(v, str) and v in _NEGATIVE_WORDS:
            mapping[v] = 0
        else:
            unknown[v] = values[v]
    if unknown:
        shown = ", ".join(
            f"{v!r} ({_rows(c)})" for v, c in sorted(unknown.items(), key=lambda kv: -kv[1])
        )
        raise ValueError(
            f"Column {column!r} in the {table_name} table has labels that are not recognised: "
            f"{shown}. Recognised labels are {_RECOGNISED}. Pass positive=<value meaning "
            f"correct> (e.g. positive='good'), or positive={{{column!r}: ...}} for this column "
            f"only, when the column holds that value and one other."
        )
    return mapping


def _count_table(
    table, table_name: str, labels: dict[str, str], groups: dict[str, str | None], positive
) -> dict[tuple, Counter]:
    """Count one item table by group and label combination.

    Returns per-group counters keyed by label tuples (0/1 per label column, in the order of
    ``labels``); every group seen is a key, including those whose rows were all dropped.
    The counting query runs on the table's own engine; only the small result is collected.
    """
    frame = _as_frame(table, table_name)
    schema = frame.collect_schema()
    names = schema.names()
    wanted = {**labels, **{dim: col for dim, col in groups.items() if col is not None}}
    for role, column in wanted.items():
        if column not in names:
            shared = (
                f" If one calibration set serves every {role}, count it on its own "
                f"(JudgeCounts.from_frames(calibration=...) without {role}=) and attach it "
                f"with test_counts.with_calibration_from(...)."
                if role in DIMS and table_name == "calibration"
                else ""
            )
            raise ValueError(
                f"Column {column!r} ({role}) is not in the {table_name} table; its columns are "
                f"{names}. Pass {role}=<column name> naming the right column.{shared}"
            )
    clashes = [c for c, n in Counter(wanted.values()).items() if n > 1]
    if clashes:
        raise ValueError(
            f"Column {clashes[0]!r} is used for more than one role "
            f"({[r for r, c in wanted.items() if c == clashes[0]]}) in the {table_name} table; "
            f"each of judge=, human=, system= and stratum= needs its own column."
        )
    exprs = [nw.col(groups[d]).alias(_KEY.format(d)) for d in DIMS if groups[d] is not None]
    exprs += [_label_key(col, schema[col]).alias(_KEY.format(role)) for role, col in labels.items()]
    keys = [_KEY.format(d) for d in DIMS if groups[d] is not None]
    keys += [_KEY.format(role) for role in labels]
    small = frame.select(*exprs).group_by(*keys).agg(nw.len().alias(_ROWS)).collect()
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

    for d_index, dim in enumerate(DIMS):
        missing = sum(
            c for g, c in zip(group_values, counts, strict=True) if _is_missing(g[d_index])
        )
        if missing:
            raise ValueError(
                f"Column {groups[dim]!r} ({dim}) in the {table_name} table has {_rows(missing)} "
                f"with a missing label. Fill in the {dim} labels or drop those rows."
            )

    mappings = []
    for role, values in zip(labels, label_values, strict=True):
        distinct: Counter = Counter()
        for v, c in zip(values, counts, strict=True):
            if v is not None:
                distinct[v] += c
        col_positive = positive.get(labels[role]) if isinstance(positive, Mapping) else positive
        mappings.append(_classify(distinct, labels[role], table_name, col_positive))

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
        by_column = ", ".join(f"{c!r}: {_rows(n)}" for c, n in dropped_by_column.items())
        by_group = "; ".join(
            f"{_group_name(*g)}: {_rows(n)}" for g, n in sorted(dropped_by_group.items(), key=str)
        )
        warnings.warn(
            f"Dropped {total} of {sum(counts)} rows of the {table_name} table because a label "
            f"was missing (null, NaN or empty) — by column: {by_column}; by group: {by_group}. "
            f"Fill in or remove these rows to silence this warning.",
            MissingLabelWarning,
            stacklevel=3,  # the caller of JudgeCounts.from_frames
        )
    return per_group


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
    JudgeCounts.from_frames : Count item-level tables (pandas, polars, pyarrow, files).

    Notes
    -----
    Groups may lack a test set (``n == 0``) or calibration (``m0 == 0`` or ``m1 == 0``) —
    for instance a system evaluated with a shared calibration set. Derived proportions are
    NaN exactly where their denominator is zero; use :meth:`has_test` and
    :meth:`has_calibration` to find those groups, and :meth:`pooled_calibration` or
    :meth:`with_calibration_from` to supply calibration. Only the dimension coordinates are
    kept; other coordinates are dropped, attributes are kept.

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
        extra = [v for v in present if v not in FIELDS]
        if missing or extra:
            raise ValueError(
                f"The dataset must hold exactly the count variables {list(FIELDS)}; "
                f"missing {missing}, unexpected {extra} (it holds {present}). Rename or drop "
                f"variables so that exactly these six remain."
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
        self._ds = xr.Dataset(
            {f: (DIMS, checked[f]) for f in FIELDS},
            coords={"system": systems, "stratum": strata},
            attrs=attrs,
        )

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
        return cls(
            xr.Dataset(
                {f: (DIMS, checked[f]) for f in FIELDS},
                coords={"system": systems, "stratum": strata},
            )
        )

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
    ) -> JudgeCounts:
        """Count item-level tables of judge verdicts and human labels.

        Parameters
        ----------
        test : dataframe or path, optional
            One row per test item, with the judge's verdict in column ``judge`` (and
            optional ``system``/``stratum`` columns). A pandas, polars (eager or lazy) or
            pyarrow table — anything :func:`narwhals.from_native` accepts — or the path
            (``str`` or :class:`pathlib.Path`) of a ``.csv``/``.tsv`` or ``.parquet``/``.pq``
            file.
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
            columns only. String values are compared stripped and lowercased.

        Returns
        -------
        JudgeCounts
            Counts per group. Groups found in only one table get zeros for the other set.

        Raises
        ------
        ValueError
            If a column is missing (the message lists the columns that exist), a group column
            has missing values, a label column holds unrecognised values (the message lists
            them with row counts and suggests ``positive=``), ``positive`` leaves more than
            one other value, or a file type cannot be read.
        TypeError
            If a table is not a dataframe or a path.
        FileNotFoundError
            If a path does not exist.

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
        be mixed. With ``positive``, the column must hold that value and at most one other
        (which then means incorrect); a column holding only the other value is all
        incorrect. Any third value is an error rather than being silently counted as
        incorrect, so that typos surface.

        *Engines.* The tables are never converted to pandas. Through narwhals, one query per
        table — label normalisation (strip, lowercase), ``group_by`` over group and label
        columns and a row count — runs on the table's own engine, lazily for polars
        LazyFrames and files (CSV is scanned with polars when installed, else read with
        pandas; Parquet needs polars or pyarrow). Only the small table of distinct
        (group, label) combinations is collected and checked in Python.

        *Groups.* Coordinates are the union of the labels in both tables, sorted (mixed
        types: by type name, then text), so the result does not depend on row order or
        engine. A group whose rows all lack labels is kept with zero counts.

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
        test_counts: dict[tuple, Counter] = {}
        calib_counts: dict[tuple, Counter] = {}
        if test is not None:
            test_counts = _count_table(test, "test", {"judge": judge}, groups, positive)
        if calibration is not None:
            calib_counts = _count_table(
                calibration, "calibration", {"judge": judge, "human": human}, groups, positive
            )
        all_groups = set(test_counts) | set(calib_counts)
        systems = _sorted_labels(g[0] for g in all_groups)
        strata = _sorted_labels(g[1] for g in all_groups)
        if system is None:
            systems = [DEFAULT_LABEL]
        if stratum is None:
            strata = [DEFAULT_LABEL]
        if not systems or not strata:
            raise ValueError(
                "The tables have no rows, so there are no groups to count. Pass non-empty tables."
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
        return cls(
            xr.Dataset(
                {f: (DIMS, arrays[f]) for f in FIELDS},
                coords={
                    "system": _label_array("system", systems),
                    "stratum": _label_array("stratum", strata),
                },
            )
        )

    # ------------------------------------------------------------------- accessors

    @property
    def dataset(self) -> xr.Dataset:
        """The underlying :class:`xarray.Dataset` (int64 counts, dims system × stratum)."""
        return self._ds

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

    def __repr__(self) -> str:
        return f"{self._header()}\n{self._ds!r}"

    def _repr_html_(self) -> str:
        return f"<p><b>{self._header()}</b></p>{self._ds._repr_html_()}"

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
        result is still a valid :class:`JudgeCounts`.

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
        unweighted total; it is not a stratified estimate.

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
        return self._ds.to_dataframe().reset_index()[[*DIMS, *FIELDS]]
