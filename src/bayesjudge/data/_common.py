"""Constants and checks shared by the data layer: count fields, dims, group labels."""

from __future__ import annotations

import unicodedata
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from bayesjudge.core._validation import MAX_COUNT, format_values

DIMS = ("system", "stratum")
FIELDS = ("n", "k", "m0", "tn", "m1", "tp")
TEST_FIELDS = ("n", "k")
CALIBRATION_FIELDS = ("m0", "tn", "m1", "tp")
DEFAULT_LABEL = "all"
POOLED_LABEL = "pooled"
# Dataset attribute naming the dims along which one calibration set is repeated (comma-joined,
# a netCDF-friendly string): those copies are one set of labelled items, not several.
SHARED_ATTR = "calibration_shared_over"
# Dataset attribute holding the labelling design, "stratified" or "random" (see
# JudgeCounts.design): whether the truth counts m0, m1 are data about theta.
DESIGN_ATTR = "design"
DEFAULT_DESIGN = "stratified"
# The optional joint verdict table of the systems' test verdicts on shared items.
JOINT = "joint"
PATTERN = "pattern"
VERDICT = "verdict"
JOINT_DIMS = ("stratum", PATTERN)
MAX_FULL_SYSTEMS = 16
# The paired model (bayesjudge.fit(paired=True)) has 2^K latent cells and 2^K verdict patterns
# per stratum; beyond K = 6 it grows past 64 x 64 and fit_pairwise compares the systems two
# at a time instead. Defined here, with the joint verdict patterns, so that the report and the
# command line know the limit without importing the Bayesian layer (PyMC).
MAX_PAIRED_SYSTEMS = 6

MEANING = {
    "n": "test items",
    "k": "test items the judge called correct",
    "m0": "calibration items humans called incorrect",
    "tn": "calibration items humans and judge both called incorrect",
    "m1": "calibration items humans called correct",
    "tp": "calibration items humans and judge both called correct",
}
# (sub-count, total) pairs: the sub-count counts items among the total.
_PAIRS = (("k", "n"), ("tn", "m0"), ("tp", "m1"))
MAX_GROUPS_SHOWN = 5

# Aliases for the columns of the counting query; unlikely to clash with user columns.
KEY_COLUMN = "__bayesjudge_{}__"
ROWS_COLUMN = "__bayesjudge_rows__"
ROW_INDEX = "__bayesjudge_row_index__"
VERDICT_KEY = "__bayesjudge_verdict__"
# Systems per int64 verdict-pattern code in the per-item query of item= (see joint_from_frame).
CODE_BITS = 62


def group_name(system: Hashable, stratum: Hashable) -> str:
    return f"system={system!r}, stratum={stratum!r}"


def describe_groups(
    mask: np.ndarray, parts: Sequence[tuple[str, np.ndarray]], systems, strata
) -> str:
    """List the groups where ``mask`` holds, e.g. ``n=-1 in (system='a', stratum='all')``."""
    where = np.argwhere(mask)
    items = []
    for i, j in where[:MAX_GROUPS_SHOWN]:
        values = " > ".join(f"{name}={plain_value(arr[i, j])!r}" for name, arr in parts)
        items.append(f"{values} in ({group_name(systems[i], strata[j])})")
    more = len(where) - MAX_GROUPS_SHOWN
    return "; ".join(items) + (f"; … ({more} more groups)" if more > 0 else "")


def check_counts(values: Mapping[str, Any], systems, strata) -> dict[str, np.ndarray]:
    """Validate six (S, T) count arrays group by group and return them as int64."""
    out = {}
    for name in FIELDS:
        arr = np.asarray(values[name])
        if arr.dtype == object and arr.size and all(_is_number(v) for v in arr.flat):
            # Python ints beyond int64 (and mixed int/float lists) arrive as object arrays.
            _check_count_limit(
                name,
                np.array([abs(v) > MAX_COUNT for v in arr.flat]),
                arr,
                systems,
                strata,
            )
            arr = arr.astype(float)
        if arr.dtype == bool or arr.dtype.kind not in "iuf":
            raise ValueError(
                f"{name} ({MEANING[name]}) must hold whole-number counts; got values of type "
                f"{arr.dtype} ({format_values(arr) if arr.dtype.kind in 'US' else 'non-numeric'}). "
                f"Pass integers such as 0, 1, 2, and 0 for a group without items."
            )
        with np.errstate(invalid="ignore"):
            as_float = arr.astype(float)
        bad = ~np.isfinite(as_float) | (as_float < 0) | (as_float != np.round(as_float))
        if bad.any():
            raise ValueError(
                f"{name} ({MEANING[name]}) must be a non-negative whole number in every group; "
                f"got {format_values(arr[bad])}: "
                f"{describe_groups(bad, [(name, arr)], systems, strata)}. "
                f"Pass item counts (0, 1, 2, …), not proportions, and 0 for a group "
                f"without items."
            )
        _check_count_limit(
            name,
            (arr if arr.dtype.kind in "iu" else as_float) > MAX_COUNT,
            arr,
            systems,
            strata,
        )
        out[name] = as_float.astype(np.int64) if arr.dtype.kind == "f" else arr.astype(np.int64)
    for small, big in _PAIRS:
        bad = out[small] > out[big]
        if bad.any():
            raise ValueError(
                f"{small} ({MEANING[small]}) counts items among the {big} ({MEANING[big]}), "
                f"so it cannot exceed {big}; got "
                f"{describe_groups(bad, [(small, out[small]), (big, out[big])], systems, strata)}"
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
            f"{name} ({MEANING[name]}) exceeds the largest count bayesjudge accepts, "
            f"2**53 = {MAX_COUNT} (the largest whole number that float64 arithmetic keeps "
            f"exact): {describe_groups(too_big, [(name, arr)], systems, strata)}. Check the "
            f"counts for an overflow or a units mistake; counts this large cannot be exact."
        )


def dims_arg(dim) -> list[str]:
    """Validate a ``dim=`` argument of "system", "stratum" or a sequence of them."""
    dims = [dim] if isinstance(dim, str) else list(dim)
    if not dims or any(d not in DIMS for d in dims):
        raise ValueError(f"dim must be 'system' and/or 'stratum'; got {dim!r}.")
    return dims


def shared_dims(value) -> tuple[str, ...]:
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


def is_missing(value) -> bool:
    """Return True for None, NaN, NaT and pandas.NA (empty strings are handled by callers)."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except TypeError:  # pandas.NA refuses to be a bool
        return type(value).__name__ == "NAType"


def plain_value(value):
    return value.item() if isinstance(value, np.generic) else value


def rows_text(count: int) -> str:
    return f"{count} row{'' if count == 1 else 's'}"


def group_indexers(ds, system=None, stratum=None) -> dict[str, list]:
    """Return ``.sel`` indexers for the given system/stratum labels, refusing unknown ones."""
    indexers = {}
    for dim, wanted in (("system", system), ("stratum", stratum)):
        if wanted is None:
            continue
        labels = label_array(dim, wanted).tolist()
        existing = ds.indexes[dim].tolist()
        unknown = [v for v in labels if v not in existing]
        if unknown:
            raise ValueError(
                f"{dim} labels {unknown!r} do not exist; the {dim} labels are {existing!r}."
            )
        indexers[dim] = labels
    return indexers


def label_array(name: str, labels) -> np.ndarray:
    """Return group labels as a 1-D array after checking they are present and unique."""
    if isinstance(labels, np.ndarray):
        labels = labels.tolist()  # a 0-d array becomes a scalar
    if isinstance(labels, str | bytes) or not isinstance(labels, Iterable):
        labels = [labels]
    values = [plain_value(v) for v in labels]
    if not values:
        raise ValueError(f"{name} needs at least one label; got an empty list.")
    if any(is_blank(v) for v in values):
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
    check_group_labels(name, None, dict.fromkeys(((type(v), v) for v in values), ""))
    # Keep strings as strings and ints as ints; only genuinely mixed labels become object.
    if all(isinstance(v, str) for v in values):
        return np.array(values, dtype=str)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return np.array(values, dtype=np.int64)
    return np.array(values, dtype=object)


def sorted_labels(labels: Iterable[Hashable]) -> list:
    labels = list(set(labels))
    try:
        return sorted(labels)
    except TypeError:  # mixed types such as 1 and "a": sort by type name, then text
        return sorted(labels, key=lambda v: (type(v).__name__, str(v)))


def is_blank(value) -> bool:
    """Missing (None, NaN, NA) or text that is empty after stripping: no label at all."""
    return is_missing(value) or (isinstance(value, str) and not value.strip())


# The label checks are called with a dim ("system") or an argument name ("systems"); the
# messages need both the one and the many of it.
_NOUNS = {
    "system": ("system", "systems"),
    "stratum": ("stratum", "strata"),
    "judge": ("judge", "judges"),
    "category": ("category", "categories"),
}
_NOUNS |= {plural: (one, plural) for one, plural in _NOUNS.values()}


def _nouns(name: str) -> tuple[str, str]:
    """Return the singular and plural of a label kind: ``"judges"`` -> ``("judge", "judges")``."""
    return _NOUNS.get(name, (name, f"{name}s"))


def check_group_labels(dim: str, column: str | None, labels: Mapping[tuple, str]) -> None:
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
    one, many = _nouns(dim)
    if column is None:  # labels given directly (from_counts, a Dataset's coordinates)
        raise ValueError(
            f"The {one} labels include different values that print alike or compare equal: "
            f"{shown}{more}. They would become separate {many} that look the same, so they "
            f"are refused. Give each {one} one label of one type, without surrounding spaces."
        )
    raise ValueError(
        f"Column {column!r} ({one}) holds {one} labels that are different values but print "
        f"alike or compare equal: {shown}{more}. They would become separate {many} that look "
        f"the same, or be merged silently, so they are refused. Make the labels one type "
        f"with no surrounding spaces in every table (e.g. df[{column!r}].astype(str).str."
        f"strip()) if they name the same {one}, or rename them if they do not."
    )
