"""Several judges with K-category verdicts: the :class:`CategoricalJuryCounts` container.

The K-category analogue of :class:`~bayesjudge.data.jury.JuryCounts` (several judges on the
same items) and the several-judge analogue of :class:`~bayesjudge.data.CategoricalCounts`
(K categories: a preference with ties, a graded score). An item's data is its *verdict
pattern*: one character per judge, the index of the judge's category written with
``"0123456789abcdefghijklmnopqrstuvwxyz"`` (so K <= 36), or ``"-"`` where that judge gave no
verdict. With the categories ``("incorrect", "correct")`` the patterns are exactly the binary
:class:`JuryCounts` strings. The pattern counts of the unlabelled items and of the labelled
items per human category are the sufficient statistics of every model of conditionally
independent judges (Dawid & Skene 1979).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

import numpy as np
import xarray as xr

from bayesjudge._text import terminal_safe
from bayesjudge.core._validation import as_count, check_design
from bayesjudge.data._common import (
    DEFAULT_DESIGN,
    DEFAULT_LABEL,
    DESIGN_ATTR,
    DIMS,
    group_indexers,
    label_array,
    plain_value,
)
from bayesjudge.data.categorical import (
    BINARY_CATEGORIES,
    CALIBRATION,
    CALIBRATION_DIMS,
    CATEGORIES_ATTR,
    CATEGORY,
    ORDERED_ATTR,
    SOURCE_ATTR,
    TEST,
    TEST_DIMS,
    CategoricalCounts,
)
from bayesjudge.data.category_labels import category_array, label_key, plain_label
from bayesjudge.data.jury import (
    JUDGE,
    JURY_PATTERN,
    MAX_JUDGES,
    TRUTH,
    JuryCounts,
    check_distinct_patterns,
    check_pattern_lengths,
)
from bayesjudge.data.jury_counting import count_jury_frames

__all__ = [
    "MAX_CATEGORIES",
    "PATTERN_DIGITS",
    "CategoricalJuryCounts",
    "categorical_pattern_strings",
    "categorical_verdict_matrix",
]

#: The characters of a pattern: category index k is ``PATTERN_DIGITS[k]``; ``"-"`` = missing.
PATTERN_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
MISSING = "-"
#: One character per judge and category: the most categories a pattern string can write.
MAX_CATEGORIES = len(PATTERN_DIGITS)
_BINARY_LABELS = ((*BINARY_CATEGORIES,), (0, 1), (False, True))


def categorical_pattern_strings(verdicts) -> list[str]:
    """Write each row of a (P, J) matrix of category indices (-1 = no verdict) as a string.

    Examples
    --------
    >>> categorical_pattern_strings(np.array([[0, 2, -1], [11, 1, 1]]))
    ['02-', 'b11']
    """
    table = np.array([*PATTERN_DIGITS, MISSING])  # index -1 is the last entry: "-"
    matrix = np.asarray(verdicts, dtype=np.int64)
    return ["".join(row) for row in table[matrix].reshape(matrix.shape).tolist()]


def _check_k(k: int) -> None:
    if k > MAX_CATEGORIES:
        raise ValueError(
            f"At most {MAX_CATEGORIES} categories can be written in a verdict pattern (one "
            f"character 0-9, a-z per judge); got K = {k}. Merge categories (e.g. bin a fine "
            f"score) before analysing several judges together."
        )


def categorical_verdict_matrix(patterns, n_judges: int | None, k: int) -> np.ndarray:
    """Return patterns (strings or a (P, J) integer matrix) as an int8 matrix of 0..K-1, -1.

    Parameters
    ----------
    patterns : sequence of str or array of shape (P, J)
        Pattern strings (``"02-"``) or category indices with -1 for no verdict.
    n_judges : int or None
        The number of judges each pattern must cover (None: not checked).
    k : int
        The number of categories.

    Returns
    -------
    numpy.ndarray of int8, shape (P, J)

    Raises
    ------
    ValueError
        If an entry is not a category index (or ``"-"``), patterns differ in length or from
        ``n_judges``, or a pattern has no verdict at all.

    Examples
    --------
    >>> categorical_verdict_matrix(["02-", "110"], 3, 3).tolist()
    [[0, 2, -1], [1, 1, 0]]
    """
    _check_k(k)
    if isinstance(patterns, np.ndarray) and patterns.dtype.kind in "iub" and patterns.ndim == 2:
        matrix = patterns.astype(np.int64)
        bad = (matrix < -1) | (matrix >= k)
        if bad.any():
            raise ValueError(
                f"verdicts must hold category indices 0 to {k - 1} (K = {k}) or -1 (no "
                f"verdict); got {sorted(set(matrix[bad].tolist()))[:5]}."
            )
    else:
        if isinstance(patterns, str):
            patterns = [patterns]
        rows = [str(p) for p in patterns]
        allowed = {c: i for i, c in enumerate(PATTERN_DIGITS[:k])} | {MISSING: -1}
        bad = [p for p in rows if any(c not in allowed for c in p)]
        if bad:
            raise ValueError(
                f"A verdict pattern holds one character per judge: the category index "
                f"({PATTERN_DIGITS[0]!r} to {PATTERN_DIGITS[k - 1]!r} for K = {k}) or "
                f"{MISSING!r} (no verdict); got {bad[:5]!r}."
            )
        width = check_pattern_lengths(rows, n_judges)
        matrix = np.array([[allowed[c] for c in p] for p in rows], dtype=np.int64)
        matrix = matrix.reshape(len(rows), width)
    if n_judges is not None and matrix.shape[1] != n_judges:
        raise ValueError(
            f"The verdict patterns have {matrix.shape[1]} entries each but there are {n_judges} "
            f"judges; give one entry per judge, in the order of judges=."
        )
    empty = (matrix == -1).all(axis=1)
    if empty.any():
        raise ValueError(
            f"A verdict pattern with no verdict at all "
            f"({categorical_pattern_strings(matrix[empty][:1])[0]!r}) carries no information; "
            f"drop it (an item no judge graded is not a judged item)."
        )
    return matrix.astype(np.int8)


def _counts(name: str, values, shape: tuple[int, ...]) -> np.ndarray:
    """Validate counts with the core's rule (:func:`as_count`) and their shape; int64 out."""
    arr = np.asarray(values)
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}; got {arr.shape}.")
    return as_count(name, arr).astype(np.int64)


def _categories(labels, name: str = "categories") -> np.ndarray:
    cats = category_array(labels, name)
    _check_k(len(cats))
    return cats


def _as_list(value) -> list:
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        return [value]
    return list(value)


def _canonical(matrix, test, labelled, systems, strata, judges, categories, attrs: dict):
    """Merge repeated patterns, drop all-missing and never-observed ones, sort, wrap.

    Patterns repeat here only where a judge selection or a recoding makes them alike
    (:meth:`CategoricalJuryCounts.sel`, a wrapped Dataset);
    :meth:`CategoricalJuryCounts.from_counts` refuses repeats in its input before.
    """
    k = len(categories)
    keep = ~(matrix == -1).all(axis=1)
    matrix, test, labelled = matrix[keep], test[..., keep], labelled[..., keep]
    shape = test.shape[:2]
    # Missing sorts after every category: sort on the index with -1 written as K.
    keyed = np.where(matrix < 0, k, matrix).astype(np.int64).reshape(len(matrix), len(judges))
    unique, where = np.unique(keyed, axis=0, return_inverse=True)
    where = np.asarray(where).reshape(-1)
    merged_test = np.zeros((*shape, len(unique)), dtype=np.int64)
    merged_lab = np.zeros((*shape, k, len(unique)), dtype=np.int64)
    np.add.at(np.moveaxis(merged_test, -1, 0), where, np.moveaxis(test, -1, 0))
    np.add.at(np.moveaxis(merged_lab, -1, 0), where, np.moveaxis(labelled, -1, 0))
    seen = (merged_test.sum(axis=(0, 1)) + merged_lab.sum(axis=(0, 1, 2))) > 0
    out = np.where(unique[seen] == k, -1, unique[seen]).astype(np.int8)
    strings = categorical_pattern_strings(out)
    design = check_design(
        attrs.get(DESIGN_ATTR, DEFAULT_DESIGN), f"attrs[{DESIGN_ATTR!r}] (the labelling design)"
    )
    ordered = plain_value(attrs.get(ORDERED_ATTR, False))
    if not (isinstance(ordered, bool) or (isinstance(ordered, int) and ordered in (0, 1))):
        raise ValueError(f"attrs[{ORDERED_ATTR!r}] must be True or False; got {ordered!r}.")
    return xr.Dataset(
        {
            "test": ((*DIMS, JURY_PATTERN), merged_test[..., seen]),
            "labelled": ((*DIMS, TRUTH, JURY_PATTERN), merged_lab[..., seen]),
        },
        coords={
            "system": systems,
            "stratum": strata,
            JUDGE: judges,
            TRUTH: categories,
            JURY_PATTERN: np.array(strings, dtype=f"<U{max(len(judges), 1)}"),
            "verdict": ((JURY_PATTERN, JUDGE), out.reshape(len(strings), len(judges))),
        },
        attrs={
            **attrs,
            CATEGORIES_ATTR: categories.tolist(),
            ORDERED_ATTR: bool(ordered),
            SOURCE_ATTR: attrs.get(SOURCE_ATTR, "given"),
            DESIGN_ATTR: design,
        },
    )


def _truth_order(dataset: xr.Dataset, categories: np.ndarray) -> list[int]:
    """Positions of the categories along the dataset's ``truth`` labels (matched by key)."""
    if TRUTH not in dataset.indexes:
        return list(range(len(categories)))
    existing = [label_key(plain_label(v)) for v in dataset.indexes[TRUTH].tolist()]
    wanted = [label_key(plain_label(c)) for c in categories.tolist()]
    if sorted(map(repr, existing)) != sorted(map(repr, wanted)) or len(existing) != len(wanted):
        raise ValueError(
            f"The 'truth' labels {dataset.indexes[TRUTH].tolist()!r} differ from the categories "
            f"{categories.tolist()!r}; they must be the same labels."
        )
    return [existing.index(w) for w in wanted]


class CategoricalJuryCounts:
    """K-category verdict patterns of several judges on the same items, per group.

    A thin wrapper around an :class:`xarray.Dataset` with

    - ``test`` (``system``, ``stratum``, ``pattern``): unlabelled test items per verdict
      pattern;
    - ``labelled`` (``system``, ``stratum``, ``truth``, ``pattern``): human-labelled items per
      human category (``truth``, coordinate = the category labels) and pattern;
    - the coordinate ``verdict`` (``pattern``, ``judge``), int8: each judge's category index
      0..K-1, -1 where it gave no verdict; the ``pattern`` labels write the same as strings,
      one character per judge (``"02-"``: judge 0 said category 0, judge 1 category 2, judge
      2 nothing).

    Only observed patterns are stored, in lexicographic order of the category indices per
    position, missing last. ``attrs`` hold ``categories`` (the labels, in order), ``ordered``,
    ``categories_source`` (``"given"`` or ``"inferred"``) and ``design`` (``"stratified"`` or
    ``"random"``, as for :class:`~bayesjudge.data.jury.JuryCounts`).

    Parameters
    ----------
    dataset : xarray.Dataset or CategoricalJuryCounts
        Holding ``test``, ``labelled`` and the ``verdict`` coordinate; the categories are
        ``attrs["categories"]``, else the ``truth`` labels. A missing ``system`` or
        ``stratum`` dimension is added with the single label ``"all"``.

    See Also
    --------
    CategoricalJuryCounts.from_counts : Build from pattern counts.
    CategoricalJuryCounts.from_frames : Count long item tables with a judge column.
    CategoricalJuryCounts.from_jury_counts : The K = 2 case from binary ``JuryCounts``.

    Examples
    --------
    >>> counts = CategoricalJuryCounts.from_counts(
    ...     ["000", "012", "222", "1-1"], test=[50, 10, 30, 5],
    ...     labelled=[[12, 1, 0, 0], [0, 2, 0, 3], [0, 0, 15, 0]],
    ...     judges=["gpt", "claude", "llama"], categories=["A", "tie", "B"])
    >>> counts.sizes
    {'system': 1, 'stratum': 1, 'judge': 3, 'pattern': 4, 'category': 3}
    >>> counts.for_judge("llama").test.values.ravel().tolist()
    [50, 5, 40]
    """

    __slots__ = ("_ds",)

    def __init__(self, dataset: xr.Dataset | CategoricalJuryCounts) -> None:
        if isinstance(dataset, CategoricalJuryCounts):
            dataset = dataset.dataset
        if not isinstance(dataset, xr.Dataset):
            raise TypeError(
                f"CategoricalJuryCounts wraps an xarray.Dataset; got {type(dataset).__name__}. "
                f"Use CategoricalJuryCounts.from_counts(...) or .from_frames(...)."
            )
        missing = [v for v in ("test", "labelled") if v not in dataset.data_vars]
        if missing:
            raise ValueError(
                f"The dataset must hold the variables 'test' and 'labelled'; it holds "
                f"{list(dataset.data_vars)}."
            )
        if "verdict" not in dataset.coords:
            raise ValueError("The dataset needs the coordinate 'verdict' (pattern, judge).")
        if CATEGORIES_ATTR in dataset.attrs:
            labels = list(np.atleast_1d(dataset.attrs[CATEGORIES_ATTR]))
            categories = _categories(labels, f"attrs[{CATEGORIES_ATTR!r}]")
        elif TRUTH in dataset.indexes:
            categories = _categories(dataset.indexes[TRUTH].tolist(), "the 'truth' labels")
        else:
            raise ValueError(
                "The dataset has no category labels: give attrs['categories'] or 'truth' "
                "coordinate labels."
            )
        judges = label_array("judge", dataset.indexes[JUDGE].tolist())
        verdicts = dataset.coords["verdict"].transpose(JURY_PATTERN, JUDGE).values
        matrix = categorical_verdict_matrix(verdicts, len(judges), len(categories))
        for dim in DIMS:
            if dim not in dataset.dims:
                dataset = dataset.expand_dims({dim: [DEFAULT_LABEL]})
        systems = label_array("system", dataset.indexes["system"].tolist())
        strata = label_array("stratum", dataset.indexes["stratum"].tolist())
        shape = (len(systems), len(strata))
        test = _counts(
            "test", dataset["test"].transpose(*DIMS, JURY_PATTERN).values, (*shape, len(matrix))
        )
        labelled = dataset["labelled"].transpose(*DIMS, TRUTH, JURY_PATTERN)
        labelled = labelled.values[:, :, _truth_order(dataset, categories)]
        labelled = _counts("labelled", labelled, (*shape, len(categories), len(matrix)))
        self._ds = _canonical(
            matrix, test, labelled, systems, strata, judges, categories, dict(dataset.attrs)
        )

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_counts(
        cls,
        patterns: Sequence[str] | np.ndarray,
        test,
        labelled=None,
        *,
        judges: Sequence[Hashable],
        categories: Sequence[Hashable],
        systems: Sequence[Hashable] | None = None,
        strata: Sequence[Hashable] | None = None,
        design: str = DEFAULT_DESIGN,
        ordered: bool = False,
    ) -> CategoricalJuryCounts:
        """Build from the number of items per verdict pattern.

        Parameters
        ----------
        patterns : sequence of str or array of shape (P, J)
            The distinct verdict patterns: strings of category indices (``"0"``–``"9"``,
            ``"a"``–``"z"``) and ``"-"``, one character per judge, or a matrix of indices
            0..K-1 with -1 for no verdict; each given once (a repeated pattern is refused: add
            up its counts first).
        test : array_like
            Unlabelled test items per pattern: shape (P,), or (systems, strata, P).
        labelled : array_like, optional
            Labelled items per human category and pattern: shape (K, P) or (systems, strata,
            K, P), rows in the order of ``categories``. Default: none.
        judges : sequence
            The judges' labels, in the order of the pattern positions.
        categories : sequence
            The K category labels, in order (2 <= K <= 36).
        systems, strata : sequence, optional
            Group labels (default one group ``"all"``).
        design : {"stratified", "random"}
            The labelling design (see :class:`CategoricalJuryCounts`).
        ordered : bool, default False
            Whether the categories are an ordinal scale in the order given.

        Returns
        -------
        CategoricalJuryCounts

        Raises
        ------
        ValueError
            If the categories are invalid (fewer than two, more than 36, repeated,
            look-alikes), a pattern is repeated or does not fit the judges or K, a count is
            not a non-negative whole number up to 2**53, or a shape does not fit.

        Examples
        --------
        >>> counts = CategoricalJuryCounts.from_counts(
        ...     ["00", "21", "22"], [40, 5, 20], judges=["a", "b"], categories=[1, 2, 3])
        >>> counts.test.values.tolist(), counts.patterns
        ([[[40, 5, 20]]], ['00', '21', '22'])
        """
        if not isinstance(ordered, bool | np.bool_):
            raise ValueError(f"ordered must be True or False; got {ordered!r}.")
        judges = label_array("judges", judges)
        if len(judges) > MAX_JUDGES:
            raise ValueError(
                f"At most {MAX_JUDGES} judges are supported; got {len(judges)}. Select the "
                f"judges to analyse together."
            )
        cats = _categories(categories)
        k = len(cats)
        matrix = categorical_verdict_matrix(patterns, len(judges), k)
        check_distinct_patterns(categorical_pattern_strings(matrix))
        systems = label_array("systems", [DEFAULT_LABEL] if systems is None else systems)
        strata = label_array("strata", [DEFAULT_LABEL] if strata is None else strata)
        shape = (len(systems), len(strata))
        test = np.asarray(test)
        if test.ndim == 1:
            test = np.broadcast_to(test, (*shape, test.shape[0]))
        labelled = np.zeros((*shape, k, len(matrix))) if labelled is None else np.asarray(labelled)
        if labelled.ndim == 2:
            labelled = np.broadcast_to(labelled, (*shape, *labelled.shape))
        test = _counts("test", test, (*shape, len(matrix)))
        labelled = _counts("labelled", labelled, (*shape, k, len(matrix)))
        attrs = {DESIGN_ATTR: check_design(design, "design"), ORDERED_ATTR: bool(ordered)}
        attrs[SOURCE_ATTR] = "given"
        return cls(_canonical(matrix, test, labelled, systems, strata, judges, cats, attrs))

    @classmethod
    def from_frames(
        cls,
        test,
        calibration=None,
        *,
        judges: str,
        item: str,
        judge: str = "judge",
        human: str | None = "human",
        system: str | None = None,
        stratum: str | None = None,
        categories=None,
        ordered: bool = False,
        design: str | None = None,
    ) -> CategoricalJuryCounts:
        """Count long item tables of several judges' K-category verdicts.

        The tables, designs and checks are those of
        :meth:`~bayesjudge.data.jury.JuryCounts.from_frames` (one row per (item, judge), any
        engine it reads: pandas, polars, pyarrow, DuckDB, …), with the labels read as
        :meth:`~bayesjudge.data.CategoricalCounts.from_frames` reads them.

        Parameters
        ----------
        test : dataframe or path
            One row per (item, judge) of the judged items: the judge's name in column
            ``judges``, its category in column ``judge``, the item id in ``item``. With a
            ``human`` column and no ``calibration``, one table of the random labelling design
            (labelled items carry the human category, the others leave it empty).
        calibration : dataframe or path, optional
            The labelled items in the same long layout, with a ``human`` column. Ids shared
            with the test table make the design random (each item counted once); none shared
            make it stratified; a mix is an error.
        judges, item : str
            The column naming each row's judge; the item-id column.
        judge, human : str, default "judge", "human"
            The verdict and human-label columns.
        system, stratum : str, optional
            Group columns. An item belongs to one stratum; ids are unique within a system.
        categories : sequence, optional
            The categories in order. Default: every value of the verdict and human columns of
            both tables, sorted as :meth:`CategoricalCounts.from_frames` sorts them
            (``attrs["categories_source"] = "inferred"``).
        ordered : bool, default False
            Whether the categories are an ordinal scale in that order.
        design : {"stratified", "random"}, optional
            The labelling design; inferred as described above when omitted.

        Returns
        -------
        CategoricalJuryCounts

        Raises
        ------
        ValueError
            If a label is outside ``categories`` (naming the column, the values and the fix),
            a column holds look-alike labels, there are fewer than two or more than 36
            categories, and for every table, id and design error of
            :meth:`JuryCounts.from_frames` (repeated (item, judge), an item in two strata or
            with two human labels, a mix of designs).

        Warns
        -----
        MissingLabelWarning
            When rows without a verdict are dropped (counted per judge).
        DesignWarning
            When the random design is inferred from matching ids.

        Examples
        --------
        >>> import pandas as pd
        >>> rows = pd.DataFrame({
        ...     "item": [1, 1, 2, 2, 3],
        ...     "grader": ["a", "b", "a", "b", "a"],
        ...     "verdict": ["A", "tie", "B", "B", "A"],
        ...     "human": ["A", "A", None, None, None]})
        >>> counts = CategoricalJuryCounts.from_frames(
        ...     rows, judges="grader", item="item", judge="verdict",
        ...     categories=["A", "tie", "B"])
        >>> counts.patterns, counts.design
        (['01', '0-', '22'], 'random')
        >>> counts.test.values.ravel().tolist(), counts.labelled.values[0, 0, 0].tolist()
        ([0, 1, 1], [1, 0, 0])
        """
        if not isinstance(ordered, bool | np.bool_):
            raise ValueError(f"ordered must be True or False; got {ordered!r}.")
        table = count_jury_frames(
            test,
            calibration,
            judges=judges,
            item=item,
            judge=judge,
            human=human,
            system=system,
            stratum=stratum,
            design=design,
            categories=categories,
            categorical=True,
        )
        cats = _categories(table.categories, "the categories")
        attrs = {DESIGN_ATTR: table.design, ORDERED_ATTR: bool(ordered), "judges_column": judges}
        attrs[SOURCE_ATTR] = table.categories_source
        return cls(
            _canonical(
                table.verdicts.astype(np.int8),
                table.test,
                table.labelled,
                table.systems,
                table.strata,
                label_array("judges", table.judges),
                cats,
                attrs,
            )
        )

    @classmethod
    def from_jury_counts(
        cls, counts: JuryCounts, categories: Sequence = BINARY_CATEGORIES
    ) -> CategoricalJuryCounts:
        """Build the K = 2 counts of binary :class:`~bayesjudge.data.jury.JuryCounts`, exactly.

        Verdict 0 (incorrect) becomes category 0 and 1 (correct) category 1, so the pattern
        strings are unchanged; truth rows likewise.

        Parameters
        ----------
        counts : JuryCounts
        categories : pair of labels, default ("incorrect", "correct")
            Labels of the negative and the positive category, in that order.

        Returns
        -------
        CategoricalJuryCounts

        Examples
        --------
        >>> binary = JuryCounts.from_counts(["11", "10", "0-"], [40, 5, 20],
        ...                                 [[0, 1, 9], [8, 2, 0]], judges=["a", "b"])
        >>> cat = CategoricalJuryCounts.from_jury_counts(binary)
        >>> cat.patterns, cat.labelled.sel(truth="correct").values.ravel().tolist()
        (['0-', '10', '11'], [0, 2, 8])
        >>> cat.to_jury_counts().dataset.equals(binary.dataset)
        True
        """
        counts = JuryCounts(counts)
        cats = _categories(categories)
        if len(cats) != 2:
            raise ValueError(
                f"categories must be two labels (negative first, then positive); got "
                f"{cats.tolist()!r}."
            )
        ds = counts.dataset
        attrs = {k: v for k, v in ds.attrs.items() if k not in (CATEGORIES_ATTR, SOURCE_ATTR)}
        attrs[SOURCE_ATTR] = "given"
        return cls(
            _canonical(
                counts.verdicts.astype(np.int8),
                ds["test"].transpose(*DIMS, JURY_PATTERN).values,
                ds["labelled"].transpose(*DIMS, TRUTH, JURY_PATTERN).values,
                ds.indexes["system"].values,
                ds.indexes["stratum"].values,
                ds.indexes[JUDGE].values,
                cats,
                attrs,
            )
        )

    def to_jury_counts(self, positive=None) -> JuryCounts:
        """Binary :class:`~bayesjudge.data.jury.JuryCounts` of K = 2 counts, exactly.

        Parameters
        ----------
        positive : label, optional
            The category meaning correct; may be left out for the categories
            ``("incorrect", "correct")``, ``(0, 1)`` or ``(False, True)``.

        Returns
        -------
        JuryCounts

        Raises
        ------
        ValueError
            If K != 2, or ``positive`` is not a category (or is needed and left out).

        Examples
        --------
        >>> cat = CategoricalJuryCounts.from_counts(["01", "11"], [3, 4], judges=["a", "b"],
        ...                                         categories=["fail", "pass"])
        >>> cat.to_jury_counts(positive="pass").patterns
        ['11', '01']
        """
        labels = self.categories
        if self.K != 2:
            raise ValueError(
                f"to_jury_counts needs K = 2 categories; these counts have K = {self.K} "
                f"({labels!r}). Merge categories first if a binary view is meant."
            )
        if positive is None:
            if tuple(labels) not in _BINARY_LABELS:
                raise ValueError(
                    f"Pass positive= (one of {labels!r}): the category meaning correct."
                )
            positive = labels[1]
        keys = [label_key(plain_label(c)) for c in labels]
        given = label_key(plain_label(plain_value(positive)))
        if given not in keys:
            raise ValueError(
                f"positive={positive!r} is not one of the categories {labels!r} (compared by "
                f"value and type)."
            )
        pos = keys.index(given)
        v = self.verdicts
        binary = np.where(v < 0, -1, (v == pos).astype(np.int8)).astype(np.int8)
        labelled = self.labelled.transpose(*DIMS, TRUTH, JURY_PATTERN).values[:, :, [1 - pos, pos]]
        attrs = {k: v for k, v in self._ds.attrs.items() if k not in (CATEGORIES_ATTR,)}
        for key in (ORDERED_ATTR, SOURCE_ATTR):
            attrs.pop(key, None)
        ds = xr.Dataset(
            {
                "test": ((*DIMS, JURY_PATTERN), self.test.transpose(*DIMS, JURY_PATTERN).values),
                "labelled": ((*DIMS, TRUTH, JURY_PATTERN), labelled),
            },
            coords={
                "system": self._ds.indexes["system"],
                "stratum": self._ds.indexes["stratum"],
                JUDGE: self._ds.indexes[JUDGE],
                TRUTH: [0, 1],
                "verdict": ((JURY_PATTERN, JUDGE), binary),
            },
            attrs=attrs,
        )
        return JuryCounts(ds)

    # ------------------------------------------------------------------- accessors

    @property
    def dataset(self) -> xr.Dataset:
        """The underlying dataset (not a copy: do not modify it)."""
        return self._ds

    @property
    def test(self) -> xr.DataArray:
        """Unlabelled test items per (system, stratum, pattern)."""
        return self._ds["test"]

    @property
    def labelled(self) -> xr.DataArray:
        """Labelled items per (system, stratum, truth, pattern); ``truth`` = category labels."""
        return self._ds["labelled"]

    @property
    def verdicts(self) -> np.ndarray:
        """The (pattern, judge) int8 matrix of category indices, -1 = no verdict."""
        return self._ds.coords["verdict"].values

    @property
    def patterns(self) -> list[str]:
        """The pattern labels, one character per judge."""
        return [str(p) for p in self._ds.indexes[JURY_PATTERN]]

    @property
    def judges(self) -> list:
        """The judges' labels."""
        return self._ds.indexes[JUDGE].tolist()

    @property
    def systems(self) -> list:
        """The systems' labels."""
        return self._ds.indexes["system"].tolist()

    @property
    def strata(self) -> list:
        """The strata's labels."""
        return self._ds.indexes["stratum"].tolist()

    @property
    def categories(self) -> list:
        """The category labels, in order (index k of a pattern is ``categories[k]``)."""
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
        """The labelling design, ``"stratified"`` or ``"random"``."""
        return self._ds.attrs[DESIGN_ATTR]

    @property
    def sizes(self) -> dict[str, int]:
        """Sizes of ``system``, ``stratum``, ``judge``, ``pattern`` and ``category`` (K)."""
        out = {d: int(self._ds.sizes[d]) for d in (*DIMS, JUDGE, JURY_PATTERN)}
        return {**out, CATEGORY: self.K}

    # ------------------------------------------------------------------- views

    def _judge_index(self, judge) -> int:
        keys = [label_key(plain_value(j)) for j in self.judges]
        wanted = label_key(plain_value(judge))
        if wanted not in keys:
            raise ValueError(f"judge {judge!r} is not one of the judges {self.judges!r}.")
        return keys.index(wanted)

    def _onehot(self, column: int) -> np.ndarray:
        """(P, K) indicator of each pattern's category for one judge (0 where missing)."""
        return (self.verdicts[:, column, None] == np.arange(self.K)[None, :]).astype(np.int64)

    def for_judge(self, judge) -> CategoricalCounts:
        """One judge's own counts as a :class:`~bayesjudge.data.CategoricalCounts`.

        Test items per category and the calibration table (truth × verdict) of the items the
        judge graded; items it gave no verdict on are left out.

        Examples
        --------
        >>> counts = CategoricalJuryCounts.from_counts(
        ...     ["00", "12", "1-"], [40, 5, 20], [[3, 0, 0], [0, 2, 1], [0, 0, 0]],
        ...     judges=["a", "b"], categories=["A", "tie", "B"])
        >>> counts.for_judge("b").calibration.values.reshape(3, 3).tolist()
        [[3, 0, 0], [0, 0, 2], [0, 0, 0]]
        """
        onehot = self._onehot(self._judge_index(judge))
        test = self.test.transpose(*DIMS, JURY_PATTERN).values @ onehot
        cal = self.labelled.transpose(*DIMS, TRUTH, JURY_PATTERN).values @ onehot
        cats = _categories(self.categories)
        attrs = {k: self._ds.attrs[k] for k in (CATEGORIES_ATTR, ORDERED_ATTR, SOURCE_ATTR)}
        ds = xr.Dataset(
            {TEST: (TEST_DIMS, test), CALIBRATION: (CALIBRATION_DIMS, cal)},
            coords={
                "system": self._ds.indexes["system"],
                "stratum": self._ds.indexes["stratum"],
                CATEGORY: cats,
                TRUTH: cats,
                "verdict": cats,
            },
            attrs={**attrs, DESIGN_ATTR: self.design},
        )
        return CategoricalCounts(ds)

    def pair_table(self, a, b, *, items: str = "test") -> xr.DataArray:
        """Return the K × K table of two judges' categories on the items both graded.

        Parameters
        ----------
        a, b : judge labels
        items : {"test", "labelled", "all"}
            Which items to count.

        Returns
        -------
        xarray.DataArray
            Dims (system, stratum, ``verdict_a``, ``verdict_b``), coords the categories.

        Examples
        --------
        >>> counts = CategoricalJuryCounts.from_counts(
        ...     ["00", "01", "11", "1-"], [4, 1, 3, 2], judges=["a", "b"], categories=["x", "y"])
        >>> counts.pair_table("a", "b").values.reshape(2, 2).tolist()
        [[4, 1], [0, 3]]
        """
        if items not in ("test", "labelled", "all"):
            raise ValueError(f"items must be 'test', 'labelled' or 'all'; got {items!r}.")
        ia, ib = self._judge_index(a), self._judge_index(b)
        counts = {
            "test": self.test,
            "labelled": self.labelled.sum(TRUTH),
            "all": self.test + self.labelled.sum(TRUTH),
        }[items]
        values = counts.transpose(*DIMS, JURY_PATTERN).values
        oa, ob = self._onehot(ia), self._onehot(ib)
        cells = np.einsum("stp,pi,pj->stij", values, oa, ob)
        cats = _categories(self.categories)
        return xr.DataArray(
            cells.astype(np.int64),
            dims=(*DIMS, "verdict_a", "verdict_b"),
            coords={
                "system": self._ds.indexes["system"],
                "stratum": self._ds.indexes["stratum"],
                "verdict_a": cats,
                "verdict_b": cats,
            },
            name=f"pair_table_{items}",
            attrs={"judge_a": plain_value(a), "judge_b": plain_value(b)},
        )

    def sel(self, system=None, stratum=None, judge=None) -> CategoricalJuryCounts:
        """Select systems, strata and judges; dropped judges' verdicts are marginalised.

        Items that only dropped judges graded disappear (they carry no information for the
        judges kept).

        Examples
        --------
        >>> counts = CategoricalJuryCounts.from_counts(
        ...     ["00", "01", "-1"], [4, 1, 3], judges=["a", "b"], categories=["x", "y"])
        >>> kept = counts.sel(judge="a")
        >>> kept.patterns, kept.test.values.ravel().tolist()
        (['0'], [5])
        """
        ds = self._ds.sel(group_indexers(self._ds, system, stratum))
        if judge is None:
            return CategoricalJuryCounts(ds)
        keep = _as_list(judge)
        cols = [self._judge_index(j) for j in keep]
        return CategoricalJuryCounts(
            _canonical(
                self.verdicts[:, cols],
                ds["test"].transpose(*DIMS, JURY_PATTERN).values,
                ds["labelled"].transpose(*DIMS, TRUTH, JURY_PATTERN).values,
                ds.indexes["system"].values,
                ds.indexes["stratum"].values,
                label_array("judge", [self.judges[c] for c in cols]),
                _categories(self.categories),
                dict(ds.attrs),
            )
        )

    def to_frame(self):
        """Tidy :class:`pandas.DataFrame`: one row per (system, stratum, pattern, table, truth).

        Columns ``system, stratum, pattern, table, truth, count``: ``table`` is ``"test"``
        (``truth`` empty) or ``"labelled"`` (one row per human category).

        Examples
        --------
        >>> counts = CategoricalJuryCounts.from_counts(
        ...     ["01", "11"], [4, 1], [[1, 0], [0, 2]], judges=["a", "b"], categories=["x", "y"])
        >>> print(counts.to_frame().to_string(index=False))
        system stratum pattern    table truth  count
           all     all      01     test  None      4
           all     all      11     test  None      1
           all     all      01 labelled     x      1
           all     all      01 labelled     y      0
           all     all      11 labelled     x      0
           all     all      11 labelled     y      2
        """
        import pandas as pd

        test = self.test.drop_vars("verdict", errors="ignore").to_dataframe("count").reset_index()
        test.insert(3, "table", "test")
        test.insert(4, TRUTH, None)
        lab = self.labelled.transpose(*DIMS, JURY_PATTERN, TRUTH)
        lab = lab.drop_vars("verdict", errors="ignore").to_dataframe("count").reset_index()
        lab.insert(3, "table", "labelled")
        lab = lab[["system", "stratum", JURY_PATTERN, "table", TRUTH, "count"]]
        return pd.concat([test, lab], ignore_index=True)

    def __repr__(self) -> str:
        s = self.sizes
        n_lab = int(self.labelled.sum())
        per_judge = [int(self.for_judge(j).test.sum()) for j in self.judges]
        scale = "ordered " if self.ordered else ""
        lines = [
            f"<bayesjudge.CategoricalJuryCounts: {s['judge']} judges × {s['system']} systems × "
            f"{s['stratum']} strata, K = {self.K} {scale}categories {self.categories!r}, "
            f"{s['pattern']} verdict patterns, design {self.design!r}>",
            f"judges: {', '.join(repr(plain_value(j)) for j in self.judges)}",
            f"test items: {int(self.test.sum())} (verdicts per judge: "
            f"{', '.join(map(str, per_judge))}); labelled items: {n_lab}",
        ]
        return "\n".join(terminal_safe(line) for line in lines)
