"""Counts of K-category judge verdicts: the :class:`CategoricalCounts` container.

The K-category analogue of :class:`~bayesjudge.data.JudgeCounts`. A judge that emits one of K
categories (a pairwise preference with ties, a 1–5 rubric grade, correct / partial / wrong)
has, per group (system × stratum), two sufficient statistics:

- ``test`` (``category``): how many test items the judge put in each category;
- ``calibration`` (``truth`` × ``verdict``): how many labelled items of each human category
  (row, the truth) the judge put in each category (column, the verdict).

Both labelling designs of :class:`JudgeCounts` carry over: ``"stratified"`` (a calibration
set sampled per human category, its row totals fixed by design) and ``"random"`` (humans
labelled a random subset of the judged items; ``test`` counts the unlabelled items only, each
item counted once, and the row totals of ``calibration`` are data about the category shares).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import xarray as xr

from bayesjudge.core._validation import MAX_COUNT, check_design, format_values
from bayesjudge.data._common import (
    DEFAULT_DESIGN,
    DEFAULT_LABEL,
    DESIGN_ATTR,
    DIMS,
    MAX_GROUPS_SHOWN,
    POOLED_LABEL,
    SHARED_ATTR,
    dims_arg,
    group_indexers,
    label_array,
    plain_value,
    shared_dims,
)
from bayesjudge.data.categorical_counting import count_arrays, count_categorical_frames
from bayesjudge.data.category_labels import (
    category_array as category_array,
)
from bayesjudge.data.category_labels import (
    infer_categories as infer_categories,
)
from bayesjudge.data.category_labels import label_key, plain_label
from bayesjudge.data.counts import JudgeCounts

#: The dims and variables of :class:`CategoricalCounts`.
CATEGORY = "category"
TRUTH = "truth"
VERDICT = "verdict"
TEST = "test"
CALIBRATION = "calibration"
TEST_DIMS = (*DIMS, CATEGORY)
CALIBRATION_DIMS = (*DIMS, TRUTH, VERDICT)
#: Dataset attributes: the category labels in order, whether they are ordinal, and where the
#: order came from ("given", "inferred" from the tables' values, or "default" 0..K-1).
CATEGORIES_ATTR = "categories"
ORDERED_ATTR = "ordered"
SOURCE_ATTR = "categories_source"
#: The categories of :meth:`CategoricalCounts.from_judge_counts`: 0 = incorrect, 1 = correct.
BINARY_CATEGORIES = ("incorrect", "correct")

_ROWS = ", rows = truth, columns = verdict"
_MEANING = {
    TEST: "test items per judge category",
    CALIBRATION: "labelled items per (human category, judge category)",
}


# ---------------------------------------------------------------------------- count checks


def _describe(mask: np.ndarray, arr: np.ndarray, dims: Sequence[str], coords: Mapping) -> str:
    where = np.argwhere(mask)
    parts = []
    for index in where[:MAX_GROUPS_SHOWN]:
        at = ", ".join(
            f"{d}={plain_value(coords[d][i])!r}" for d, i in zip(dims, index, strict=True)
        )
        parts.append(f"{plain_value(arr[tuple(index)])!r} at ({at})")
    more = len(where) - MAX_GROUPS_SHOWN
    return "; ".join(parts) + (f"; … ({more} more)" if more > 0 else "")


def _check_count_array(name: str, value, dims: Sequence[str], coords: Mapping) -> np.ndarray:
    """Return a count array as int64 after checking whole, finite, non-negative, ≤ 2**53."""
    arr = np.asarray(value)
    if arr.dtype == object and arr.size:
        if not all(
            isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool)
            for v in arr.flat
        ):
            arr = np.asarray(arr.tolist())
        else:
            big = np.array([abs(v) > MAX_COUNT for v in arr.flat]).reshape(arr.shape)
            if big.any():
                raise ValueError(
                    f"{name} ({_MEANING[name]}) exceeds 2**53 = {MAX_COUNT}, the largest count "
                    f"float64 arithmetic keeps exact: {_describe(big, arr, dims, coords)}."
                )
            arr = arr.astype(float)
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise ValueError(
            f"{name} ({_MEANING[name]}) must hold whole-number counts; got values of type "
            f"{arr.dtype}. Pass integers such as 0, 1, 2."
        )
    with np.errstate(invalid="ignore"):
        as_float = arr.astype(float)
    bad = ~np.isfinite(as_float) | (as_float < 0) | (as_float != np.round(as_float))
    if bad.any():
        raise ValueError(
            f"{name} ({_MEANING[name]}) must be non-negative whole numbers; got "
            f"{format_values(arr[bad])}: {_describe(bad, arr, dims, coords)}. Pass item "
            f"counts (0, 1, 2, …), not proportions."
        )
    too_big = (arr > MAX_COUNT) if arr.dtype.kind in "iu" else (as_float > MAX_COUNT)
    if too_big.any():
        raise ValueError(
            f"{name} ({_MEANING[name]}) exceeds 2**53 = {MAX_COUNT}, the largest count float64 "
            f"arithmetic keeps exact: {_describe(too_big, arr, dims, coords)}."
        )
    return as_float.astype(np.int64) if arr.dtype.kind == "f" else arr.astype(np.int64)


def _group_shape(systems, strata) -> tuple[int, ...]:
    return tuple(len(v) for v in (systems, strata) if v is not None)


def _broadcast_counts(name: str, value, systems, strata, tail: tuple[int, ...]) -> np.ndarray:
    """Broadcast a (…, K) or (…, K, K) count array to (system, stratum, *tail)."""
    shape = _group_shape(systems, strata)
    full = (
        len(systems) if systems is not None else 1,
        len(strata) if strata is not None else 1,
    )
    arr = np.zeros(tail, dtype=np.int64) if value is None else np.asarray(value)
    if value is not None and not isinstance(value, np.ndarray) and arr.dtype != object:
        # numpy turns True in a list of ints into 1 silently; a bool is not a count.
        if any(isinstance(v, bool | np.bool_) for v in np.asarray(value, dtype=object).flat):
            raise ValueError(
                f"{name} ({_MEANING[name]}) must hold whole-number counts; got a boolean. Pass "
                f"integers such as 0, 1, 2."
            )
    axes = "(K,)" if len(tail) == 1 else "(K, K)"
    if arr.shape[arr.ndim - len(tail) :] != tail or arr.ndim < len(tail):
        raise ValueError(
            f"{name} has shape {arr.shape}; its last {len(tail)} axes must be {tail} (K = "
            f"{tail[0]} categories: {axes}{_ROWS if len(tail) == 2 else ''})."
        )
    groups = arr.shape[: arr.ndim - len(tail)]
    if groups and groups != shape:
        hint = (
            "pass system= (or stratum=) labels, one per entry of the leading axes; both for "
            "two leading axes"
            if not shape
            else f"the labels give {shape} (system: "
            f"{'none' if systems is None else len(systems)}, stratum: "
            f"{'none' if strata is None else len(strata)})"
        )
        raise ValueError(
            f"{name} has group axes {groups} (shape {arr.shape}) but {hint}; pass one count "
            f"array per group, or one {axes} array for all groups."
        )
    return np.broadcast_to(arr, (*shape, *tail)).reshape(*full, *tail)


# ----------------------------------------------------------------------------- container


class CategoricalCounts:
    r"""Test and calibration counts of a K-category judge, per system and stratum.

    A thin wrapper around an :class:`xarray.Dataset` with two int64 variables:

    - ``test`` (``system``, ``stratum``, ``category``): test items per judge category;
    - ``calibration`` (``system``, ``stratum``, ``truth``, ``verdict``): labelled items per
      human category (``truth``, the row) and judge category (``verdict``, the column).

    The coordinates ``category``, ``truth`` and ``verdict`` are the category labels, in
    order; ``attrs`` hold ``categories`` (that order, a list), ``ordered`` (True for an
    ordinal scale such as a 1–5 rubric), ``design`` (``"stratified"`` or ``"random"``, as for
    :class:`JudgeCounts`) and ``categories_source`` (``"given"``, ``"inferred"`` from the
    tables or ``"default"``).

    Parameters
    ----------
    dataset : xarray.Dataset or CategoricalCounts
        Dataset holding ``test`` and ``calibration``. A missing ``system`` or ``stratum``
        dimension is added with the single label ``"all"``; a variable lacking a dimension
        is broadcast along it. Whole-number floats become int64. Without a ``categories``
        attribute the order is the ``category`` coordinate's.

    Raises
    ------
    TypeError
        If ``dataset`` is not an :class:`xarray.Dataset`.
    ValueError
        If a variable is missing or extra, a dimension is unknown, empty or unlabelled, the
        ``category``/``truth``/``verdict`` labels differ from each other or from
        ``attrs["categories"]``, category labels are look-alikes, or a count is negative,
        fractional, NaN/inf or above 2**53 (the message names the variable and the cell).

    See Also
    --------
    CategoricalCounts.from_counts : Build from arrays.
    CategoricalCounts.from_frames : Count item tables (every engine of
        :meth:`JudgeCounts.from_frames`).
    CategoricalCounts.from_judge_counts : The K = 2 case from binary counts.

    Notes
    -----
    A category may have no test and no calibration items at all (a grade nobody used); it is
    kept, listed by :attr:`empty_categories` and in the repr. Rows of ``calibration`` with no
    items leave the judge's behaviour on that truth unobserved: :meth:`confusion_hat` is NaN
    there.

    Examples
    --------
    >>> counts = CategoricalCounts.from_counts(
    ...     test=[30, 10, 60],
    ...     calibration=[[18, 1, 1], [2, 6, 2], [1, 1, 18]],
    ...     categories=["A", "tie", "B"],
    ... )
    >>> print(repr(counts).splitlines()[0].replace(", 100", ",\n100"))
    CategoricalCounts: 1 system × 1 stratum, K = 3 categories ['A', 'tie', 'B'],
    100 test items, 50 calibration items (stratified calibration design)
    >>> counts.test.sel(category="B").item(), counts.K
    (60, 3)
    """

    __slots__ = ("_ds",)

    def __init__(self, dataset: xr.Dataset | CategoricalCounts) -> None:
        if isinstance(dataset, CategoricalCounts):
            dataset = dataset.ds
        if not isinstance(dataset, xr.Dataset):
            raise TypeError(
                f"CategoricalCounts wraps an xarray.Dataset; got {type(dataset).__name__}. Use "
                f"CategoricalCounts.from_counts(...) for arrays or "
                f"CategoricalCounts.from_frames(...) for item tables."
            )
        present = list(dataset.data_vars)
        missing = [v for v in (TEST, CALIBRATION) if v not in present]
        extra = [v for v in present if v not in (TEST, CALIBRATION)]
        if missing or extra:
            raise ValueError(
                f"The dataset must hold exactly the variables {[TEST, CALIBRATION]}; missing "
                f"{missing}, unexpected {extra} (it holds {present})."
            )
        allowed = {TEST: TEST_DIMS, CALIBRATION: CALIBRATION_DIMS}
        for var, dims in allowed.items():
            unknown = [d for d in dataset[var].dims if d not in dims]
            if unknown:
                raise ValueError(
                    f"{var!r} has dimensions {unknown} besides {list(dims)}. Sum over them or "
                    f"select one label before wrapping it."
                )
        for dim in DIMS:
            if dim not in dataset.dims:
                dataset = dataset.expand_dims({dim: [DEFAULT_LABEL]})
        for dim in (*DIMS, CATEGORY, TRUTH, VERDICT):
            if dim in dataset.dims and dim not in dataset.indexes:
                raise ValueError(
                    f"The {dim!r} dimension has no coordinate labels; add them with "
                    f"dataset.assign_coords({dim}=[...])."
                )
            if dim in dataset.dims and dataset.sizes[dim] == 0:
                raise ValueError(f"The {dim!r} dimension is empty.")
        categories = self._categories_of(dataset)
        systems = label_array("system", dataset.indexes["system"].tolist())
        strata = label_array("stratum", dataset.indexes["stratum"].tolist())
        labels = categories.tolist()
        coords = {
            "system": systems,
            "stratum": strata,
            CATEGORY: categories,
            TRUTH: categories,
            VERDICT: categories,
        }
        data = {}
        for var, dims in allowed.items():
            values = dataset[var]
            for dim in dims:
                if dim not in values.dims:
                    values = values.expand_dims({dim: coords[dim]})
                elif dim not in DIMS:
                    # By position: .sel with a list of booleans would be a mask.
                    existing = [label_key(plain_value(v)) for v in values.indexes[dim].tolist()]
                    values = values.isel({dim: [existing.index(label_key(c)) for c in labels]})
                    values = values.assign_coords({dim: coords[dim]})
            checked = _check_count_array(var, values.transpose(*dims).values, dims, coords)
            data[var] = (dims, checked)
        attrs = dict(dataset.attrs)
        attrs[CATEGORIES_ATTR] = labels
        ordered = plain_value(attrs.get(ORDERED_ATTR, False))
        # netCDF has no boolean attributes: a saved dataset may hold 0/1 instead.
        if not (isinstance(ordered, bool) or (isinstance(ordered, int) and ordered in (0, 1))):
            raise ValueError(
                f"attrs[{ORDERED_ATTR!r}] must be True or False (or 1/0); got {ordered!r}."
            )
        attrs[ORDERED_ATTR] = bool(ordered)
        attrs.setdefault(SOURCE_ATTR, "given")
        attrs[DESIGN_ATTR] = check_design(
            attrs.get(DESIGN_ATTR, DEFAULT_DESIGN), f"attrs[{DESIGN_ATTR!r}] (the labelling design)"
        )
        shared = shared_dims(attrs.get(SHARED_ATTR, ""))
        for dim in shared:
            cal = data[CALIBRATION][1]
            axis = DIMS.index(dim)
            if not (cal == np.take(cal, [0], axis=axis)).all():
                raise ValueError(
                    f"attrs[{SHARED_ATTR!r}] says one calibration set is shared over {dim!r}, "
                    f"but the calibration counts differ between {dim} labels. Remove the "
                    f"attribute if each {dim} has its own calibration set."
                )
        if shared:
            attrs[SHARED_ATTR] = ",".join(shared)
        else:
            attrs.pop(SHARED_ATTR, None)
        self._ds = xr.Dataset(data, coords=coords, attrs=attrs)

    @staticmethod
    def _categories_of(dataset: xr.Dataset) -> np.ndarray:
        """Return the category order: attrs["categories"], else the first categorical coordinate."""
        found = {
            dim: dataset.indexes[dim].tolist()
            for dim in (CATEGORY, TRUTH, VERDICT)
            if dim in dataset.indexes
        }
        if CATEGORIES_ATTR in dataset.attrs:
            categories = category_array(
                list(np.atleast_1d(dataset.attrs[CATEGORIES_ATTR])),
                f"attrs[{CATEGORIES_ATTR!r}]",
            )
        elif found:
            categories = category_array(next(iter(found.values())), "the category labels")
        else:
            raise ValueError(
                "The dataset has no category labels: give the dims 'category' (test) and "
                "'truth', 'verdict' (calibration) coordinates, or attrs['categories']."
            )
        wanted = categories.tolist()
        for dim, labels in found.items():
            if sorted(map(repr, labels)) != sorted(map(repr, wanted)) or len(labels) != len(wanted):
                raise ValueError(
                    f"The {dim!r} labels {labels!r} differ from the categories {wanted!r}; "
                    f"'category', 'truth' and 'verdict' must hold the same category labels."
                )
        return categories

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_counts(
        cls,
        test=None,
        calibration=None,
        *,
        categories=None,
        ordered: bool = False,
        system=None,
        stratum=None,
        design: str = DEFAULT_DESIGN,
    ) -> CategoricalCounts:
        """Build counts from arrays: test ``(..., K)``, calibration ``(..., K, K)``.

        Parameters
        ----------
        test : array_like of int, optional
            Test items per judge category: shape ``(K,)`` for every group, or with leading
            group axes ``(system, K)``, ``(stratum, K)`` or ``(system, stratum, K)`` as the
            labels say. None: zeros (a calibration-only object).
        calibration : array_like of int, optional
            Labelled items, rows = human category (truth), columns = judge category
            (verdict): ``(K, K)`` or with the leading group axes. None: zeros.
        categories : sequence of labels, optional
            The K category labels, in order (the order of the last axes). Default
            ``0, 1, …, K-1`` (``attrs["categories_source"] = "default"``).
        ordered : bool, default False
            Whether the categories are an ordinal scale in the order given (a rubric).
        system, stratum : label or sequence of labels, optional
            Group labels, as in :meth:`JudgeCounts.from_counts`.
        design : {"stratified", "random"}, default "stratified"
            The labelling design (see :attr:`design`).

        Returns
        -------
        CategoricalCounts

        Raises
        ------
        ValueError
            If neither array is given, the shapes do not fit K or the labels, the categories
            are invalid (fewer than two, repeated, look-alikes), or a count is not a
            non-negative whole number (the message names the variable and the cell).

        Examples
        --------
        >>> counts = CategoricalCounts.from_counts(
        ...     test=[[30, 10, 60], [50, 20, 30]],
        ...     calibration=[[18, 1, 1], [2, 6, 2], [1, 1, 18]],
        ...     categories=["A", "tie", "B"], system=["x", "y"],
        ... )
        >>> counts.systems, counts.categories
        (['x', 'y'], ['A', 'tie', 'B'])
        >>> counts.calibration.sel(system="y", truth="tie").values.ravel().tolist()
        [2, 6, 2]
        """
        if test is None and calibration is None:
            raise ValueError(
                "No counts given; pass test (..., K), calibration (..., K, K), or both."
            )
        if not isinstance(ordered, bool | np.bool_):
            raise ValueError(f"ordered must be True or False; got {ordered!r}.")
        shapes = [np.shape(test)[-1:] if test is not None else ()]
        shapes.append(np.shape(calibration)[-1:] if calibration is not None else ())
        if categories is None:
            k = next(s[0] for s in shapes if s)
            labels, source = np.arange(k, dtype=np.int64), "default"
        else:
            labels, source = category_array(categories), "given"
        k = len(labels)
        systems = label_array("system", system) if system is not None else None
        strata = label_array("stratum", stratum) if stratum is not None else None
        test_arr = _broadcast_counts(TEST, test, systems, strata, (k,))
        cal_arr = _broadcast_counts(CALIBRATION, calibration, systems, strata, (k, k))
        if calibration is not None and np.ndim(calibration) >= 2:
            if np.shape(calibration)[-2] != k:
                raise ValueError(
                    f"calibration has shape {np.shape(calibration)}; a K × K table needs "
                    f"(…, {k}, {k})."
                )
        ds = xr.Dataset(
            {TEST: (TEST_DIMS, test_arr), CALIBRATION: (CALIBRATION_DIMS, cal_arr)},
            coords={
                "system": systems if systems is not None else [DEFAULT_LABEL],
                "stratum": strata if strata is not None else [DEFAULT_LABEL],
                CATEGORY: labels,
                TRUTH: labels,
                VERDICT: labels,
            },
            attrs={
                CATEGORIES_ATTR: labels.tolist(),
                ORDERED_ATTR: bool(ordered),
                SOURCE_ATTR: source,
                DESIGN_ATTR: check_design(design, "design"),
            },
        )
        return cls(ds)

    @classmethod
    def from_frames(
        cls,
        test=None,
        calibration=None,
        *,
        judge: str = "judge",
        human: str | None = "human",
        categories=None,
        ordered: bool = False,
        system: str | None = None,
        stratum: str | None = None,
        item: str | None = None,
        design: str | None = None,
    ) -> CategoricalCounts:
        """Count item tables of K-category judge verdicts and human labels.

        The tables and options are those of :meth:`JudgeCounts.from_frames` (any engine
        narwhals reads — pandas, polars, pyarrow, DuckDB, Dask, PySpark — or a CSV/Parquet
        path; both labelling designs), with categories in place of correct/incorrect.

        Parameters
        ----------
        test : dataframe or path, optional
            One row per test item, the judge's category in column ``judge``. Without
            ``calibration``, a ``human`` column makes it *one table* of the random design:
            rows with a human label are the labelled items, rows with an empty one the
            unlabelled items.
        calibration : dataframe or path, optional
            One row per labelled item: ``judge`` and ``human`` columns.
        judge, human : str, default "judge", "human"
            The label columns. ``human=None``: the test table is test items only.
        categories : sequence of labels, optional
            The categories in order. Default: every value in the label columns, sorted
            (numbers and numeric text by value), recorded as
            ``attrs["categories_source"] = "inferred"``.
        ordered : bool, default False
            Whether the categories are an ordinal scale in that order.
        system, stratum : str, optional
            Group columns (in both tables when given).
        item : str, optional
            Item-id column: labelled items of the calibration table whose ids are among the
            judged test items (same system) are counted once, as in
            :meth:`JudgeCounts.from_frames` (the random design; a mix is an error).
        design : {"stratified", "random"}, optional
            The labelling design; inferred as :meth:`JudgeCounts.from_frames` does when
            omitted.

        Returns
        -------
        CategoricalCounts

        Raises
        ------
        ValueError
            If a label is not among ``categories`` (the message lists the values, their
            types and row counts, and says when one matches a category only as text or
            ignoring case); if a label column holds values that print alike, compare equal
            or are one number written differently (``1`` and ``"1"``, ``"1"`` and ``"01"``,
            ``1`` and ``True``), in one column or, for inferred categories, across columns;
            if fewer than two categories are found; and for every table, column, group and
            design error of :meth:`JudgeCounts.from_frames`.

        Warns
        -----
        MissingLabelWarning
            When rows with a missing judge (or, in a calibration table, human) label are
            dropped.
        DesignWarning
            When the random design is inferred from matching ``item`` ids.

        Notes
        -----
        Label values are compared by value and type, text stripped of surrounding spaces
        but not case-folded: ``"Tie"`` is not ``"tie"``, and ``"1"`` (text) is not ``1``
        (a number). Whole floats are numbers like ints (a pandas column with a missing value
        turns 1 into 1.0). A CSV file's labels are text, so pass categories as text for it
        (``["1", "2", "3"]``). No joint verdict table is counted (``item`` only matches the
        labelled items).

        Examples
        --------
        >>> import pandas as pd
        >>> test = pd.DataFrame({"judge": ["A", "tie", "B", "B", "A"]})
        >>> calib = pd.DataFrame({"judge": ["A", "B", "tie"], "human": ["A", "B", "B"]})
        >>> counts = CategoricalCounts.from_frames(test, calib, categories=["A", "tie", "B"])
        >>> counts.test.values.ravel().tolist()
        [2, 1, 2]
        >>> counts.calibration.sel(truth="B").values.ravel().tolist()
        [0, 1, 1]

        One table of the random design (empty ``human`` = unlabelled):

        >>> table = pd.DataFrame({"judge": [1, 2, 3, 3, 2], "human": [1, None, 3, None, None]})
        >>> counts = CategoricalCounts.from_frames(table, ordered=True)
        >>> counts.categories, counts.design, counts.test.values.ravel().tolist()
        ([1, 2, 3], 'random', [0, 2, 1])
        """
        if not isinstance(ordered, bool | np.bool_):
            raise ValueError(f"ordered must be True or False; got {ordered!r}.")
        test_counts, calib_counts, systems, strata, labels, source, design = (
            count_categorical_frames(
                test,
                calibration,
                judge=judge,
                human=human,
                categories=categories,
                system=system,
                stratum=stratum,
                item=item,
                design=design,
            )
        )
        test_arr, cal_arr = count_arrays(test_counts, calib_counts, systems, strata, len(labels))
        cats = category_array(labels)
        ds = xr.Dataset(
            {TEST: (TEST_DIMS, test_arr), CALIBRATION: (CALIBRATION_DIMS, cal_arr)},
            coords={
                "system": label_array("system", systems),
                "stratum": label_array("stratum", strata),
                CATEGORY: cats,
                TRUTH: cats,
                VERDICT: cats,
            },
            attrs={
                CATEGORIES_ATTR: labels,
                ORDERED_ATTR: bool(ordered),
                SOURCE_ATTR: source,
                DESIGN_ATTR: design,
            },
        )
        return cls(ds)

    @classmethod
    def from_judge_counts(
        cls, counts: JudgeCounts, categories: Sequence = BINARY_CATEGORIES
    ) -> CategoricalCounts:
        """Build the K = 2 counts of binary :class:`JudgeCounts`, exactly.

        Parameters
        ----------
        counts : JudgeCounts
            Binary counts.
        categories : pair of labels, default ("incorrect", "correct")
            Labels of the negative (0, incorrect) and positive (1, correct) category, in that
            order.

        Returns
        -------
        CategoricalCounts
            ``test = [n - k, k]``, ``calibration = [[tn, m0 - tn], [m1 - tp, tp]]``, with the
            same groups, design and shared-calibration dims. A joint verdict table is not
            carried (categorical counts have none).

        Examples
        --------
        >>> binary = JudgeCounts.from_counts(n=100, k=70, m0=40, tn=30, m1=60, tp=54)
        >>> cat = CategoricalCounts.from_judge_counts(binary)
        >>> cat.test.values.ravel().tolist(), cat.calibration.values.ravel().tolist()
        ([30, 70], [30, 10, 6, 54])
        >>> cat.to_judge_counts(positive="correct").dataset.equals(binary.dataset)
        True
        """
        counts = JudgeCounts(counts)
        labels = category_array(categories)
        if len(labels) != 2:
            raise ValueError(
                f"categories must be two labels (negative first, then positive); got "
                f"{labels.tolist()!r}."
            )
        ds = counts.dataset
        test = xr.concat([ds["n"] - ds["k"], ds["k"]], dim=CATEGORY)
        rows = [
            xr.concat([ds["tn"], ds["m0"] - ds["tn"]], dim=VERDICT),
            xr.concat([ds["m1"] - ds["tp"], ds["tp"]], dim=VERDICT),
        ]
        calibration = xr.concat(rows, dim=TRUTH)
        attrs = {k: v for k, v in ds.attrs.items() if k in (DESIGN_ATTR, SHARED_ATTR)}
        out = xr.Dataset(
            {
                TEST: test.transpose(*DIMS, CATEGORY),
                CALIBRATION: calibration.transpose(*CALIBRATION_DIMS),
            },
            coords={CATEGORY: labels, TRUTH: labels, VERDICT: labels},
            attrs={**attrs, CATEGORIES_ATTR: labels.tolist(), ORDERED_ATTR: False},
        )
        return cls(out)

    def to_judge_counts(self, positive=None) -> JudgeCounts:
        """Binary :class:`JudgeCounts` of K = 2 counts, exactly.

        Parameters
        ----------
        positive : label, optional
            The category meaning "correct" (the other one is "incorrect"). May be left out
            when the categories are ``("incorrect", "correct")``, ``(0, 1)`` or
            ``(False, True)``.

        Returns
        -------
        JudgeCounts
            ``n`` = all test items, ``k`` = those in ``positive``; ``m1``/``tp`` from the
            positive truth row, ``m0``/``tn`` from the other; same groups, design and shared
            calibration dims.

        Raises
        ------
        ValueError
            If K != 2, or ``positive`` is not a category (or is needed and left out).

        Examples
        --------
        >>> cat = CategoricalCounts.from_counts([30, 70], [[30, 10], [6, 54]],
        ...                                     categories=["fail", "pass"])
        >>> jc = cat.to_judge_counts(positive="pass")
        >>> [jc[f].item() for f in jc]
        [100, 70, 40, 30, 60, 54]
        """
        if self.K != 2:
            raise ValueError(
                f"to_judge_counts needs K = 2 categories; these counts have K = {self.K} "
                f"({self.categories!r}). Merge categories first (e.g. sum the calibration rows "
                f"and columns) if a binary view is meant."
            )
        labels = self.categories
        if positive is None:
            known = {("incorrect", "correct"), (0, 1), (False, True)}
            if tuple(labels) not in known:
                raise ValueError(
                    f"Pass positive= (one of {labels!r}): the category that means correct."
                )
            positive = labels[1]
        given = plain_value(positive)
        # by value and type, as labels are matched: 1.0 names the category 1, True does not
        matches = [c for c in labels if label_key(plain_label(c)) == label_key(plain_label(given))]
        if not matches:
            raise ValueError(
                f"positive={given!r} is not one of the categories {labels!r} (compared by "
                f"value and type)."
            )
        positive = matches[0]
        negative = next(c for c in labels if c is not positive)
        test, cal = self._ds[TEST], self._ds[CALIBRATION]
        ds = xr.Dataset(
            {
                "n": test.sum(CATEGORY),
                "k": test.sel({CATEGORY: positive}, drop=True),
                "m0": cal.sel({TRUTH: negative}, drop=True).sum(VERDICT),
                "tn": cal.sel({TRUTH: negative, VERDICT: negative}, drop=True),
                "m1": cal.sel({TRUTH: positive}, drop=True).sum(VERDICT),
                "tp": cal.sel({TRUTH: positive, VERDICT: positive}, drop=True),
            },
            attrs={k: v for k, v in self._ds.attrs.items() if k in (DESIGN_ATTR, SHARED_ATTR)},
        )
        return JudgeCounts(ds.transpose(*DIMS))

    # ------------------------------------------------------------------- accessors

    @property
    def ds(self) -> xr.Dataset:
        """The underlying :class:`xarray.Dataset` (``test``, ``calibration``; int64)."""
        return self._ds

    @property
    def dataset(self) -> xr.Dataset:
        """The same as :attr:`ds` (the name :class:`JudgeCounts` uses)."""
        return self._ds

    def keys(self) -> list[str]:
        """Names of the count variables, ``["test", "calibration"]``.

        ``counts[name]`` is ``getattr(counts, name)``, as for :class:`JudgeCounts`.

        Examples
        --------
        >>> c = CategoricalCounts.from_counts([1, 2], categories=["a", "b"])
        >>> c.keys(), c["test"].values.ravel().tolist(), "n" in c
        (['test', 'calibration'], [1, 2], False)
        """
        return [TEST, CALIBRATION]

    def __getitem__(self, name: str) -> xr.DataArray:
        if not isinstance(name, str) or name not in self.keys():
            raise KeyError(
                f"{name!r} is not a variable of these counts; they hold {self.keys()} "
                f"(counts[name] is the same as counts.name)."
            )
        return self._ds[name]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.keys()

    def __iter__(self):
        return iter(self.keys())

    @property
    def test(self) -> xr.DataArray:
        """Test items per judge category, dims ``(system, stratum, category)``."""
        return self._ds[TEST]

    @property
    def calibration(self) -> xr.DataArray:
        """Labelled items, dims ``(system, stratum, truth, verdict)``; rows = truth."""
        return self._ds[CALIBRATION]

    @property
    def categories(self) -> list:
        """The category labels, in order."""
        return list(self._ds.attrs[CATEGORIES_ATTR])

    @property
    def K(self) -> int:
        """The number of categories."""
        return len(self.categories)

    @property
    def ordered(self) -> bool:
        """Whether the categories are an ordinal scale, in the order of :attr:`categories`."""
        return bool(self._ds.attrs[ORDERED_ATTR])

    @property
    def design(self) -> str:
        """The labelling design, ``"stratified"`` or ``"random"`` (see :attr:`JudgeCounts.design`).

        ``"stratified"``: the calibration set was sampled per human category, so its row
        totals are fixed by design. ``"random"``: humans labelled a random subset of the
        judged items; ``test`` counts only the unlabelled items, and the row totals of
        ``calibration`` are multinomial draws from the category shares.
        """
        return self._ds.attrs[DESIGN_ATTR]

    @property
    def calibration_shared_over(self) -> tuple[str, ...]:
        """Dims along which every group carries copies of one calibration set."""
        return shared_dims(self._ds.attrs.get(SHARED_ATTR, ""))

    @property
    def systems(self) -> list:
        """System labels, in coordinate order."""
        return self._ds.indexes["system"].tolist()

    @property
    def strata(self) -> list:
        """Stratum labels, in coordinate order."""
        return self._ds.indexes["stratum"].tolist()

    @property
    def sizes(self) -> dict[str, int]:
        """``{"system": S, "stratum": T, "category": K}``."""
        return {d: int(self._ds.sizes[d]) for d in (*DIMS, CATEGORY)}

    @property
    def empty_categories(self) -> list:
        """Categories with no test and no calibration items anywhere (kept, but unused).

        Examples
        --------
        >>> CategoricalCounts.from_counts([5, 0, 3], categories=[1, 2, 3]).empty_categories
        [2]
        """
        test = self._ds[TEST].sum(DIMS)
        cal = self._ds[CALIBRATION].sum(DIMS)
        used = (test + cal.sum(VERDICT).rename({TRUTH: CATEGORY})).values + cal.sum(TRUTH).values
        return [c for c, u in zip(self.categories, used, strict=True) if u == 0]

    # ----------------------------------------------------------- derived quantities

    def n(self) -> xr.DataArray:
        """Test items per group, ``test.sum("category")``."""
        return self._ds[TEST].sum(CATEGORY).rename("n")

    def m(self) -> xr.DataArray:
        """Labelled items per group and truth, dims ``(system, stratum, truth)``."""
        return self._ds[CALIBRATION].sum(VERDICT).rename("m")

    def p_hat(self) -> xr.DataArray:
        """Shares of test verdicts per category; NaN where a group has no test items.

        Examples
        --------
        >>> CategoricalCounts.from_counts([1, 3], categories=["a", "b"]).p_hat(
        ...     ).values.ravel().tolist()
        [0.25, 0.75]
        """
        n = self.n()
        return (self._ds[TEST] / n.where(n > 0)).rename("p_hat")

    def confusion_hat(self) -> xr.DataArray:
        """Row shares of the calibration table, P̂(verdict | truth); NaN for empty rows.

        Examples
        --------
        >>> c = CategoricalCounts.from_counts(calibration=[[3, 1], [0, 0]], categories=[0, 1])
        >>> c.confusion_hat().values.reshape(2, 2).tolist()
        [[0.75, 0.25], [nan, nan]]
        """
        m = self.m()
        return (self._ds[CALIBRATION] / m.where(m > 0)).rename("confusion_hat")

    # ------------------------------------------------------------------ reshaping

    def sel(self, system=None, stratum=None) -> CategoricalCounts:
        """Select groups by label; both group dims are always kept.

        Examples
        --------
        >>> c = CategoricalCounts.from_counts([[1, 2], [3, 4]], categories=["a", "b"],
        ...                                   system=["x", "y"])
        >>> c.sel(system="y").test.values.tolist()
        [[[3, 4]]]
        """
        return CategoricalCounts(self._ds.sel(group_indexers(self._ds, system, stratum)))

    def _summed_calibration(self, dims: Sequence[str]) -> xr.DataArray:
        shared = self.calibration_shared_over
        cal = self._ds[CALIBRATION].isel({d: 0 for d in dims if d in shared}, drop=True)
        return cal.sum([d for d in dims if d not in shared])

    def pool(self, dim: str | Sequence[str] = "system") -> CategoricalCounts:
        """Add up the counts over a group dim, keeping it with the single label ``"pooled"``.

        Copies of a shared calibration set count once (as in :meth:`JudgeCounts.pool`).

        Examples
        --------
        >>> c = CategoricalCounts.from_counts([[1, 2], [3, 4]], categories=["a", "b"],
        ...                                   system=["x", "y"])
        >>> c.pool("system").test.values.ravel().tolist()
        [4, 6]
        """
        dims = dims_arg(dim)
        test = self._ds[TEST].sum(dims)
        cal = self._summed_calibration(dims)
        ds = xr.Dataset({TEST: test, CALIBRATION: cal}, attrs=dict(self._ds.attrs))
        ds.attrs[SHARED_ATTR] = ",".join(d for d in self.calibration_shared_over if d not in dims)
        ds = ds.expand_dims({d: [POOLED_LABEL] for d in dims})
        return CategoricalCounts(ds)

    def pooled_calibration(self, dim: str | Sequence[str] = "system") -> CategoricalCounts:
        """Give every group along ``dim`` the calibration counts pooled over it.

        Examples
        --------
        >>> c = CategoricalCounts.from_counts(calibration=[[[1, 0], [0, 1]], [[2, 1], [0, 3]]],
        ...                                   categories=["a", "b"], system=["x", "y"])
        >>> c.pooled_calibration().calibration.sel(system="x").values.ravel().tolist()
        [3, 1, 0, 4]
        """
        dims = dims_arg(dim)
        shared = set(dims) | set(self.calibration_shared_over)
        pooled = self._summed_calibration(sorted(shared))
        ds = self._ds.copy()
        ds[CALIBRATION] = pooled.broadcast_like(self._ds[CALIBRATION]).transpose(*CALIBRATION_DIMS)
        ds.attrs[SHARED_ATTR] = ",".join(d for d in DIMS if d in shared)
        return CategoricalCounts(ds)

    def with_calibration_from(self, other: CategoricalCounts) -> CategoricalCounts:
        """Return these test counts with the calibration counts of ``other``.

        ``other`` holds every label of ``self`` along a group dim (matched by label), or one
        group with another label (``"all"``, ``"pooled"``), which every group then shares.

        Examples
        --------
        >>> tests = CategoricalCounts.from_counts([[5, 5], [2, 8]], categories=["a", "b"],
        ...                                       system=["x", "y"])
        >>> cal = CategoricalCounts.from_counts(calibration=[[4, 1], [1, 4]],
        ...                                     categories=["a", "b"])
        >>> both = tests.with_calibration_from(cal)
        >>> both.calibration_shared_over, both.calibration.sel(system="y").values.ravel().tolist()
        (('system',), [4, 1, 1, 4])
        """
        other = CategoricalCounts(other)
        if other.categories != self.categories:
            raise ValueError(
                f"The calibration counts have categories {other.categories!r}, these counts "
                f"{self.categories!r}; they must be the same, in the same order."
            )
        src = other.ds[CALIBRATION]
        shared = set(other.calibration_shared_over)
        for dim in DIMS:
            mine, theirs = self._ds.indexes[dim].tolist(), other.ds.indexes[dim].tolist()
            if all(v in theirs for v in mine):
                src = src.sel({dim: mine})
            elif len(theirs) == 1 and theirs[0] not in mine:
                src = src.isel({dim: 0}, drop=True)
                shared.add(dim)
            else:
                absent = [v for v in mine if v not in theirs]
                raise ValueError(
                    f"The calibration counts lack the {dim} labels {absent!r} (they have "
                    f"{theirs!r}). Give calibration for every {dim}, or a single pooled group."
                )
        ds = self._ds.copy()
        ds[CALIBRATION] = src.broadcast_like(self._ds[CALIBRATION]).transpose(*CALIBRATION_DIMS)
        ds.attrs[SHARED_ATTR] = ",".join(d for d in DIMS if d in shared)
        ds.attrs[DESIGN_ATTR] = other.design
        return CategoricalCounts(ds)

    def to_frame(self):
        """Tidy :class:`pandas.DataFrame`: one row per group and (truth, verdict) or category.

        Returns
        -------
        pandas.DataFrame
            Columns ``system, stratum, table, truth, verdict, count``: ``table`` is
            ``"test"`` (``truth`` empty, ``verdict`` the category) or ``"calibration"``.

        Examples
        --------
        >>> c = CategoricalCounts.from_counts([3, 1], [[2, 0], [1, 1]], categories=["a", "b"])
        >>> print(c.to_frame().to_string(index=False))
        system stratum       table truth verdict  count
           all     all        test  None       a      3
           all     all        test  None       b      1
           all     all calibration     a       a      2
           all     all calibration     a       b      0
           all     all calibration     b       a      1
           all     all calibration     b       b      1
        """
        import pandas as pd

        test = self._ds[TEST].rename({CATEGORY: VERDICT}).to_dataframe("count").reset_index()
        test.insert(2, "table", "test")
        test.insert(3, TRUTH, None)
        cal = self._ds[CALIBRATION].to_dataframe("count").reset_index()
        cal.insert(2, "table", "calibration")
        return pd.concat([test, cal], ignore_index=True)[
            ["system", "stratum", "table", TRUTH, VERDICT, "count"]
        ]

    # ------------------------------------------------------------------------ repr

    def _header(self) -> str:
        s, t = self.sizes["system"], self.sizes["stratum"]
        n_test = int(self._ds[TEST].sum())
        n_cal = int(self._summed_calibration(list(DIMS)).sum())
        if self.design == "random":
            items = f"{n_test} unlabelled items, {n_cal} labelled items (random labelling design)"
        else:
            items = (
                f"{n_test} test items, {n_cal} calibration items (stratified calibration design)"
            )
        scale = "ordered " if self.ordered else ""
        empty = self.empty_categories
        note = f"; no items in {empty!r}" if empty else ""
        inferred = (
            " (inferred from the tables)" if self._ds.attrs[SOURCE_ATTR] == "inferred" else ""
        )
        return (
            f"CategoricalCounts: {s} system{'s' if s != 1 else ''} × {t} "
            f"strat{'a' if t != 1 else 'um'}, K = {self.K} {scale}categories "
            f"{self.categories!r}{inferred}{note}, {items}"
        )

    def __repr__(self) -> str:
        return f"{self._header()}\n{self._ds!r}"

    def _repr_html_(self) -> str:
        return f"<p><b>{self._header()}</b></p>{self._ds._repr_html_()}"
