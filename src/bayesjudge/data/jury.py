"""Several judges on the same items: the :class:`JuryCounts` container of verdict patterns.

With J judges grading the same items, an item's data is its *verdict pattern*: one character
per judge, ``"1"`` (judged correct), ``"0"`` (judged incorrect) or ``"-"`` (that judge gave no
verdict on the item). The patterns of the unlabelled test items and of the human-labelled
items (by their truth) are the sufficient statistics of every model of conditionally
independent judges (Dawid & Skene 1979; Hui & Walter 1980), so :class:`JuryCounts` stores
only how many items show each observed pattern, per system and stratum.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np
import xarray as xr

from bayesjudge.core._validation import as_count, check_design
from bayesjudge.data._common import (
    DEFAULT_DESIGN,
    DEFAULT_LABEL,
    DESIGN_ATTR,
    DIMS,
    label_array,
    plain_value,
)
from bayesjudge.data.counts import JudgeCounts
from bayesjudge.data.jury_counting import count_jury_frames

__all__ = [
    "JUDGE",
    "JURY_PATTERN",
    "MAX_JUDGES",
    "MISSING_VERDICT",
    "TRUTH",
    "JuryCounts",
    "pattern_strings",
]

JUDGE = "judge"
JURY_PATTERN = "pattern"
TRUTH = "truth"
MISSING_VERDICT = "-"
# One character per judge in a pattern; with missing entries up to 3**J patterns can occur,
# and only the observed ones are stored, so the bound is on the models' per-judge parameters.
MAX_JUDGES = 32
_CHAR = {1: "1", 0: "0", -1: MISSING_VERDICT}
_CODE = {"1": 1, "0": 0, MISSING_VERDICT: -1}
_ORDER = {"1": 0, "0": 1, MISSING_VERDICT: 2}  # "1…1" first, then "0", then missing


def pattern_strings(verdicts: np.ndarray) -> list[str]:
    """Write each row of a (P, J) verdict matrix (1, 0, -1) as a pattern string.

    Examples
    --------
    >>> pattern_strings(np.array([[1, 0, -1], [0, 0, 1]]))
    ['10-', '001']
    """
    return ["".join(_CHAR[int(v)] for v in row) for row in np.asarray(verdicts)]


def _verdict_matrix(patterns, n_judges: int | None) -> np.ndarray:
    """Return patterns (strings or a (P, J) matrix) as an int8 matrix of 1, 0 and -1."""
    if isinstance(patterns, np.ndarray) and patterns.dtype.kind in "iub" and patterns.ndim == 2:
        matrix = patterns.astype(np.int64)
        bad = ~np.isin(matrix, (1, 0, -1))
        if bad.any():
            raise ValueError(
                f"verdicts must hold 1 (judged correct), 0 (judged incorrect) or -1 (no "
                f"verdict); got {sorted(set(matrix[bad].tolist()))[:5]}."
            )
    else:
        rows = [str(p) for p in patterns]
        bad = [p for p in rows if any(c not in _CODE for c in p)]
        if bad:
            raise ValueError(
                f"A verdict pattern holds one character per judge: '1' (judged correct), '0' "
                f"(judged incorrect) or '{MISSING_VERDICT}' (no verdict); got {bad[:5]!r}."
            )
        width = check_pattern_lengths(rows, n_judges)
        matrix = np.array([[_CODE[c] for c in p] for p in rows], dtype=np.int64)
        matrix = matrix.reshape(len(rows), width)
    if n_judges is not None and matrix.shape[1] != n_judges:
        raise ValueError(
            f"The verdict patterns have {matrix.shape[1]} entries each but there are {n_judges} "
            f"judges; give one entry per judge, in the order of judges=."
        )
    empty = (matrix == -1).all(axis=1)
    if empty.any():
        raise ValueError(
            f"A verdict pattern with no verdict at all ({pattern_strings(matrix[empty])[0]!r}) "
            f"carries no information; drop it (an item no judge graded is not a judged item)."
        )
    return matrix.astype(np.int8)


def check_pattern_lengths(rows: Sequence[str], n_judges: int | None) -> int:
    """Return the common length of pattern strings, refusing any that do not fit the judges.

    Parameters
    ----------
    rows : sequence of str
        Verdict patterns, one character per judge.
    n_judges : int or None
        The number of judges (None: the patterns need only share one length).

    Returns
    -------
    int
        The patterns' length (``n_judges`` where given; 0 for no patterns and no judges).

    Raises
    ------
    ValueError
        Naming the number of judges and the patterns of another length.

    Examples
    --------
    >>> check_pattern_lengths(["110", "0-1"], 3)
    3
    >>> check_pattern_lengths(["11", "101"], 2)
    Traceback (most recent call last):
    ...
    ValueError: There are 2 judges, so every verdict pattern needs 2 characters, one per judge \
in the order of judges=; got patterns of lengths [2, 3]. Of another length than 2: '101' \
(position 1, length 3). Fix or drop those patterns, or name one judge per position in judges=.
    """
    lengths = Counter(len(p) for p in rows)
    if n_judges is None:
        if len(lengths) <= 1:
            return next(iter(lengths), 0)
        width = lengths.most_common(1)[0][0]
        head = (
            f"Every verdict pattern needs one character per judge, so all patterns have one "
            f"length (most have {width})"
        )
    else:
        width = n_judges
        head = (
            f"There are {n_judges} judges, so every verdict pattern needs {n_judges} "
            f"characters, one per judge in the order of judges="
        )
    wrong = [(i, p) for i, p in enumerate(rows) if len(p) != width]
    if not wrong:
        return width
    shown = ", ".join(
        f"{p if len(p) <= 40 else p[:37] + '...'!r} (position {i}, length {len(p)})"
        for i, p in wrong[:5]
    )
    more = f" and {len(wrong) - 5} more" if len(wrong) > 5 else ""
    raise ValueError(
        f"{head}; got patterns of lengths {sorted(lengths)}. Of another length than {width}: "
        f"{shown}{more}. Fix or drop those patterns, or name one judge per position in judges=."
    )


def check_distinct_patterns(strings: Sequence[str]) -> None:
    """Refuse a verdict pattern given more than once.

    Adding up the repeats silently would hide a row pasted twice or two exports put one
    after the other, as repeated judge or system labels would; both are refused.

    Parameters
    ----------
    strings : sequence of str
        The verdict patterns as given, written as strings.

    Raises
    ------
    ValueError
        Naming each repeated pattern and its positions.

    Examples
    --------
    >>> check_distinct_patterns(["11", "10"])
    >>> check_distinct_patterns(["11", "10", "11"])
    Traceback (most recent call last):
    ...
    ValueError: patterns must be distinct; got the repeated pattern(s) '11' (positions 0, 2). \
Give each pattern once, with its counts added up (test and labelled), or check that no row \
was pasted twice and no two exports were put one after the other.
    """
    positions: dict[str, list[int]] = {}
    for i, p in enumerate(strings):
        positions.setdefault(p, []).append(i)
    repeated = [(p, where) for p, where in positions.items() if len(where) > 1]
    if not repeated:
        return
    shown = "; ".join(
        f"{p!r} (positions {', '.join(str(i) for i in where[:10])}"
        f"{', ...' if len(where) > 10 else ''})"
        for p, where in repeated[:5]
    )
    more = f"; and {len(repeated) - 5} more" if len(repeated) > 5 else ""
    raise ValueError(
        f"patterns must be distinct; got the repeated pattern(s) {shown}{more}. Give each "
        f"pattern once, with its counts added up (test and labelled), or check that no row "
        f"was pasted twice and no two exports were put one after the other."
    )


def _check_count_array(name: str, values, shape: tuple[int, ...]) -> np.ndarray:
    """Validate counts with the core's rule (:func:`as_count`) and their shape; int64 out."""
    arr = np.asarray(values)
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}; got {arr.shape}.")
    return as_count(name, arr).astype(np.int64)


class JuryCounts:
    """Verdict patterns of several judges on the same items, per system and stratum.

    A thin wrapper around an :class:`xarray.Dataset` with

    - ``test`` (``system``, ``stratum``, ``pattern``): unlabelled test items per verdict
      pattern;
    - ``labelled`` (``system``, ``stratum``, ``truth``, ``pattern``): human-labelled items per
      pattern, ``truth`` 0 (truly incorrect) and 1 (truly correct);
    - the coordinate ``verdict`` (``pattern``, ``judge``): 1, 0 or -1 (no verdict), the
      pattern written as a matrix; the ``pattern`` labels are the same as strings
      (``"10-"``: judge 0 said correct, judge 1 incorrect, judge 2 gave no verdict).

    Only observed patterns are stored (a pattern absent from every group is dropped), in a
    fixed order: ``"1…1"`` first, each position ordered ``"1"``, ``"0"``, ``"-"``.
    ``attrs["design"]`` is the labelling design, as in :class:`JudgeCounts`: ``"stratified"``
    (labelled items chosen per truth, or a separate calibration set: their truths say nothing
    about θ) or ``"random"`` (a random subset of the judged items was labelled; ``test`` then
    counts only the unlabelled ones).

    Parameters
    ----------
    dataset : xarray.Dataset or JuryCounts

    See Also
    --------
    JuryCounts.from_counts : Build from pattern counts.
    JuryCounts.from_frames : Count item-level tables with a judge column.

    Examples
    --------
    >>> counts = JuryCounts.from_counts(
    ...     ["111", "110", "000", "0-0"], test=[50, 10, 30, 5],
    ...     labelled=[[0, 1, 12, 1], [15, 3, 0, 0]], judges=["gpt", "claude", "llama"])
    >>> counts.sizes
    {'system': 1, 'stratum': 1, 'judge': 3, 'pattern': 4}
    >>> counts.marginal()["k"].sel(judge="claude").item()
    60
    """

    __slots__ = ("_ds",)

    def __init__(self, dataset: xr.Dataset | JuryCounts) -> None:
        if isinstance(dataset, JuryCounts):
            dataset = dataset.dataset
        if not isinstance(dataset, xr.Dataset):
            raise TypeError(
                f"JuryCounts wraps an xarray.Dataset; got {type(dataset).__name__}. Use "
                f"JuryCounts.from_counts(...) or JuryCounts.from_frames(...)."
            )
        for name in ("test", "labelled"):
            if name not in dataset.data_vars:
                raise ValueError(
                    f"The dataset must hold the variables 'test' and 'labelled'; it holds "
                    f"{list(dataset.data_vars)}."
                )
        if "verdict" not in dataset.coords:
            raise ValueError("The dataset needs the coordinate 'verdict' (pattern, judge).")
        judges = label_array("judge", dataset.indexes[JUDGE].tolist())
        matrix = _verdict_matrix(
            dataset.coords["verdict"].transpose(JURY_PATTERN, JUDGE).values, len(judges)
        )
        for dim in DIMS:
            if dim not in dataset.dims:
                dataset = dataset.expand_dims({dim: [DEFAULT_LABEL]})
        systems = label_array("system", dataset.indexes["system"].tolist())
        strata = label_array("stratum", dataset.indexes["stratum"].tolist())
        n_p = matrix.shape[0]
        test = _check_count_array(
            "test",
            dataset["test"].transpose(*DIMS, JURY_PATTERN).values,
            (len(systems), len(strata), n_p),
        )
        labelled = _check_count_array(
            "labelled",
            dataset["labelled"].transpose(*DIMS, TRUTH, JURY_PATTERN).values,
            (len(systems), len(strata), 2, n_p),
        )
        self._ds = _canonical(matrix, test, labelled, systems, strata, judges, dataset.attrs)

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_counts(
        cls,
        patterns: Sequence[str] | np.ndarray,
        test,
        labelled=None,
        *,
        judges: Sequence[Hashable],
        systems: Sequence[Hashable] | None = None,
        strata: Sequence[Hashable] | None = None,
        design: str = DEFAULT_DESIGN,
    ) -> JuryCounts:
        """Build from the number of items per verdict pattern.

        Parameters
        ----------
        patterns : sequence of str or array of shape (P, J)
            The distinct verdict patterns, as strings of ``"1"``, ``"0"`` and ``"-"`` (one
            character per judge) or as a matrix of 1, 0 and -1; each given once (a repeated
            pattern is refused: add up its counts first).
        test : array_like
            Unlabelled test items per pattern: shape (P,), or (systems, strata, P).
        labelled : array_like, optional
            Labelled items per truth and pattern: shape (2, P) or (systems, strata, 2, P); row
            0 truly incorrect, row 1 truly correct. Default: none.
        judges : sequence
            The judges' labels, in the order of the pattern positions.
        systems, strata : sequence, optional
            Group labels (default: one group ``"all"``).
        design : {"stratified", "random"}
            The labelling design (see :class:`JuryCounts`).

        Returns
        -------
        JuryCounts

        Raises
        ------
        ValueError
            If a pattern is repeated, does not fit the judges or has no verdict at all, a
            count is not a non-negative whole number, or a shape does not fit.

        Examples
        --------
        >>> counts = JuryCounts.from_counts(["11", "10", "00"], [40, 5, 20], judges=["a", "b"])
        >>> counts.test.values.tolist()
        [[[40, 5, 20]]]
        """
        judges = label_array("judges", judges)
        if len(judges) > MAX_JUDGES:
            raise ValueError(
                f"At most {MAX_JUDGES} judges are supported; got {len(judges)}. Select the "
                f"judges to analyse together."
            )
        matrix = _verdict_matrix(patterns, len(judges))
        check_distinct_patterns(pattern_strings(matrix))
        systems = label_array("systems", [DEFAULT_LABEL] if systems is None else systems)
        strata = label_array("strata", [DEFAULT_LABEL] if strata is None else strata)
        shape = (len(systems), len(strata))
        test = np.asarray(test)
        if test.ndim == 1:
            test = np.broadcast_to(test, (*shape, test.shape[0]))
        labelled = np.zeros((*shape, 2, len(matrix))) if labelled is None else np.asarray(labelled)
        if labelled.ndim == 2:
            labelled = np.broadcast_to(labelled, (*shape, *labelled.shape))
        test = _check_count_array("test", test, (*shape, len(matrix)))
        labelled = _check_count_array("labelled", labelled, (*shape, 2, len(matrix)))
        ds = xr.Dataset(
            {
                "test": ((*DIMS, JURY_PATTERN), test),
                "labelled": ((*DIMS, TRUTH, JURY_PATTERN), labelled),
            },
            coords={
                "system": systems,
                "stratum": strata,
                JUDGE: judges,
                TRUTH: [0, 1],
                "verdict": ((JURY_PATTERN, JUDGE), matrix),
            },
            attrs={DESIGN_ATTR: design},
        )
        return cls(ds)

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
        positive=None,
        design: str | None = None,
    ) -> JuryCounts:
        """Count long item tables of several judges: one row per (item, judge).

        Parameters
        ----------
        test : dataframe or path
            One row per (item, judge) of the judged items: the judge's name in column
            ``judges``, its verdict in column ``judge``, the item id in ``item`` (and the
            optional ``system``/``stratum`` columns). Any table
            :meth:`JudgeCounts.from_frames` reads (pandas, polars, pyarrow, DuckDB, Dask,
            PySpark, CSV/Parquet files). With a ``human`` column and no ``calibration``, it is
            one table of the random labelling design: rows of labelled items carry the human
            label (on every judge's row of the item), the others leave it empty.
        calibration : dataframe or path, optional
            The labelled items, in the same long layout with a ``human`` column. If every
            labelled (system, item) is also a test item, the design is random and each item
            is counted once, as labelled; if none is, the sets are separate (stratified).
        judges : str
            The column naming the judge of each row.
        item : str
            The item-id column; an item's verdicts across judges form its pattern.
        judge, human : str, default "judge", "human"
            The verdict and human-label columns (labels as in :meth:`JudgeCounts.from_frames`:
            booleans, 0/1, yes/no, correct/incorrect, pass/fail, true/false, or ``positive=``).
        system, stratum : str, optional
            Group columns. An item belongs to one stratum; ids are unique within a system.
        positive : scalar or mapping, optional
            The label value meaning correct (see :meth:`JudgeCounts.from_frames`).
        design : {"stratified", "random"}, optional
            The labelling design; default inferred as described above.

        Returns
        -------
        JuryCounts

        Raises
        ------
        ValueError
            If a column is missing or used for two roles, an id or group value is missing,
            labels are not recognised, a judge graded an item twice, an item lies in two
            strata or carries two human labels, or the labelled items are partly among the
            test items (a mix of designs). The message names the rows or ids.

        Warns
        -----
        MissingLabelWarning
            When rows without a verdict are dropped (counted per judge); their items keep the
            other judges' verdicts, with ``"-"`` in the pattern.
        DesignWarning
            When the random design is inferred from matching ids.

        Notes
        -----
        The columns the count needs are collected from the table's engine (one row per item
        and judge), so memory grows with the table; the patterns are built in numpy. Items
        are matched by value and type (``"7"`` and ``7`` are two items).

        Examples
        --------
        >>> import pandas as pd
        >>> rows = pd.DataFrame({
        ...     "item": [1, 1, 1, 2, 2, 2, 3, 3],
        ...     "grader": ["a", "b", "c", "a", "b", "c", "a", "b"],
        ...     "verdict": [1, 1, 0, 0, 0, 0, 1, 1],
        ...     "human": [1, 1, 1, None, None, None, None, None]})
        >>> counts = JuryCounts.from_frames(rows, judges="grader", item="item", judge="verdict")
        >>> counts.patterns, counts.design
        (['110', '11-', '000'], 'random')
        >>> counts.test.values.tolist(), counts.labelled.values[0, 0, 1].tolist()
        ([[[0, 1, 1]]], [1, 0, 0])
        """
        table = count_jury_frames(
            test,
            calibration,
            judges=judges,
            item=item,
            judge=judge,
            human=human,
            system=system,
            stratum=stratum,
            positive=positive,
            design=design,
        )
        ds = xr.Dataset(
            {
                "test": ((*DIMS, JURY_PATTERN), table.test),
                "labelled": ((*DIMS, TRUTH, JURY_PATTERN), table.labelled),
            },
            coords={
                "system": table.systems,
                "stratum": table.strata,
                JUDGE: table.judges,
                TRUTH: [0, 1],
                "verdict": ((JURY_PATTERN, JUDGE), table.verdicts),
            },
            attrs={DESIGN_ATTR: table.design, "judges_column": judges},
        )
        return cls(ds)

    # ------------------------------------------------------------------- accessors

    @property
    def dataset(self) -> xr.Dataset:
        """The underlying dataset (a copy is not made: do not modify it)."""
        return self._ds

    @property
    def test(self) -> xr.DataArray:
        """Unlabelled test items per (system, stratum, pattern)."""
        return self._ds["test"]

    @property
    def labelled(self) -> xr.DataArray:
        """Labelled items per (system, stratum, truth, pattern)."""
        return self._ds["labelled"]

    @property
    def verdicts(self) -> np.ndarray:
        """The (pattern, judge) matrix of 1, 0 and -1 (no verdict)."""
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
    def design(self) -> str:
        """The labelling design, ``"stratified"`` or ``"random"``."""
        return self._ds.attrs[DESIGN_ATTR]

    @property
    def sizes(self) -> dict[str, int]:
        """Sizes of the dimensions ``system``, ``stratum``, ``judge`` and ``pattern``."""
        return {d: self._ds.sizes[d] for d in (*DIMS, JUDGE, JURY_PATTERN)}

    def marginal(self) -> xr.Dataset:
        """Each judge's own counts: ``n, k, m0, tn, m1, tp`` per (system, stratum, judge).

        ``n`` counts the test items the judge graded and ``k`` those it called correct;
        ``m0``/``m1`` the labelled items it graded by truth, ``tn``/``tp`` those it got right.
        """
        v = self._ds.coords["verdict"].reset_coords(drop=True)
        said = (v >= 0).astype(np.int64)
        correct = (v == 1).astype(np.int64)
        test, lab = self.test, self.labelled
        out = xr.Dataset(
            {
                "n": (test * said).sum(JURY_PATTERN),
                "k": (test * correct).sum(JURY_PATTERN),
                "m0": (lab.sel(truth=0, drop=True) * said).sum(JURY_PATTERN),
                "tn": (lab.sel(truth=0, drop=True) * (said - correct)).sum(JURY_PATTERN),
                "m1": (lab.sel(truth=1, drop=True) * said).sum(JURY_PATTERN),
                "tp": (lab.sel(truth=1, drop=True) * correct).sum(JURY_PATTERN),
            }
        )
        return out.transpose(*DIMS, JUDGE).drop_vars(["verdict"], errors="ignore")

    def for_judge(self, judge) -> JudgeCounts:
        """One judge's counts as a :class:`JudgeCounts` (its own analysis, ignoring the rest).

        Examples
        --------
        >>> counts = JuryCounts.from_counts(["11", "10", "0-"], [40, 5, 20], judges=["a", "b"])
        >>> print(counts.for_judge("b").to_frame().to_string(index=False))
        system stratum  n  k  m0  tn  m1  tp
           all     all 45 40   0   0   0   0
        """
        if judge not in self.judges:
            raise ValueError(f"judge {judge!r} is not one of the judges {self.judges!r}.")
        ds = self.marginal().sel({JUDGE: judge}, drop=True)
        ds.attrs[DESIGN_ATTR] = self.design
        return JudgeCounts(ds)

    def pair_table(self, a, b, *, items: str = "test") -> xr.DataArray:
        """Return the 2×2 table of two judges' verdicts on the items both graded.

        Parameters
        ----------
        a, b : judge labels
        items : {"test", "labelled", "all"}
            Which items to count.

        Returns
        -------
        xarray.DataArray
            Dims (system, stratum, ``verdict_a``, ``verdict_b``), coords 0 and 1.
        """
        if items not in ("test", "labelled", "all"):
            raise ValueError(f"items must be 'test', 'labelled' or 'all'; got {items!r}.")
        for j in (a, b):
            if j not in self.judges:
                raise ValueError(f"judge {j!r} is not one of the judges {self.judges!r}.")
        counts = {
            "test": self.test,
            "labelled": self.labelled.sum(TRUTH),
            "all": self.test + self.labelled.sum(TRUTH),
        }[items]
        ia, ib = self.judges.index(a), self.judges.index(b)
        va, vb = self.verdicts[:, ia], self.verdicts[:, ib]
        cells = np.zeros((len(self.systems), len(self.strata), 2, 2), dtype=np.int64)
        values = counts.transpose(*DIMS, JURY_PATTERN).values
        for x in (0, 1):
            for y in (0, 1):
                cells[:, :, x, y] = values[:, :, (va == x) & (vb == y)].sum(axis=-1)
        return xr.DataArray(
            cells,
            dims=(*DIMS, "verdict_a", "verdict_b"),
            coords={
                "system": self._ds.indexes["system"],
                "stratum": self._ds.indexes["stratum"],
                "verdict_a": [0, 1],
                "verdict_b": [0, 1],
            },
            name=f"pair_table_{items}",
            attrs={"judge_a": plain_value(a), "judge_b": plain_value(b)},
        )

    def sel(self, system=None, stratum=None, judge=None) -> JuryCounts:
        """Select systems, strata and judges; dropped judges' verdicts are marginalised.

        Items that only dropped judges graded disappear (they carry no information about the
        truth for the remaining judges).
        """
        ds = self._ds
        for dim, value in (("system", system), ("stratum", stratum)):
            if value is not None:
                ds = ds.sel({dim: _as_list(value)})
        if judge is None:
            return JuryCounts(ds)
        keep = _as_list(judge)
        missing = [j for j in keep if j not in self.judges]
        if missing:
            raise ValueError(f"judge {missing!r} is not among the judges {self.judges!r}.")
        cols = [self.judges.index(j) for j in keep]
        matrix = self.verdicts[:, cols]
        return JuryCounts(
            _canonical(
                matrix,
                ds["test"].transpose(*DIMS, JURY_PATTERN).values,
                ds["labelled"].transpose(*DIMS, TRUTH, JURY_PATTERN).values,
                ds.indexes["system"].values,
                ds.indexes["stratum"].values,
                label_array("judge", keep),
                ds.attrs,
            )
        )

    def to_frame(self):
        """One row per (system, stratum, pattern): test and labelled items (pandas)."""
        frame = (
            xr.Dataset(
                {
                    "test": self.test,
                    "labelled_incorrect": self.labelled.sel(truth=0, drop=True),
                    "labelled_correct": self.labelled.sel(truth=1, drop=True),
                }
            )
            .drop_vars("verdict", errors="ignore")
            .to_dataframe()
            .reset_index()
        )
        return frame

    def __repr__(self) -> str:
        s = self.sizes
        m = self.marginal()
        return (
            f"<bayesjudge.JuryCounts: {s['judge']} judges × {s['system']} systems × "
            f"{s['stratum']} strata, {s['pattern']} verdict patterns, design {self.design!r}>\n"
            f"judges: {', '.join(map(str, self.judges))}\n"
            f"test items: {int(self.test.sum())} (verdicts per judge: "
            f"{', '.join(str(int(x)) for x in m['n'].sum(DIMS).values)}); labelled items: "
            f"{int(self.labelled.sum())}"
        )


def _as_list(value) -> list:
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        return [value]
    return list(value)


def _canonical(matrix, test, labelled, systems, strata, judges, attrs: dict[str, Any]):
    """Merge repeated patterns, drop all-missing and never-observed ones, sort, wrap.

    Patterns repeat here only where a judge selection or a recoding makes them alike
    (:meth:`JuryCounts.sel`, a wrapped Dataset); :meth:`JuryCounts.from_counts` refuses
    repeats in its input before.
    """
    keep = ~(matrix == -1).all(axis=1)
    matrix, test, labelled = matrix[keep], test[..., keep], labelled[..., keep]
    strings = pattern_strings(matrix)
    unique = sorted(set(strings), key=lambda p: [_ORDER[c] for c in p])
    index = {p: i for i, p in enumerate(unique)}
    where = np.array([index[p] for p in strings], dtype=np.int64)
    shape = test.shape[:2]
    merged_test = np.zeros((*shape, len(unique)), dtype=np.int64)
    merged_lab = np.zeros((*shape, 2, len(unique)), dtype=np.int64)
    for i, w in enumerate(where):
        merged_test[..., w] += test[..., i]
        merged_lab[..., w] += labelled[..., i]
    seen = (merged_test.sum(axis=(0, 1)) + merged_lab.sum(axis=(0, 1, 2))) > 0
    unique = [p for p, s in zip(unique, seen, strict=True) if s]
    merged_test, merged_lab = merged_test[..., seen], merged_lab[..., seen]
    out_matrix = _verdict_matrix(unique, len(judges)) if unique else np.zeros((0, len(judges)))
    design = check_design(
        attrs.get(DESIGN_ATTR, DEFAULT_DESIGN), f"attrs[{DESIGN_ATTR!r}] (the labelling design)"
    )
    return xr.Dataset(
        {
            "test": ((*DIMS, JURY_PATTERN), merged_test),
            "labelled": ((*DIMS, TRUTH, JURY_PATTERN), merged_lab),
        },
        coords={
            "system": systems,
            "stratum": strata,
            JUDGE: judges,
            TRUTH: np.array([0, 1], dtype=np.int64),
            JURY_PATTERN: np.array(unique, dtype=f"<U{max(len(judges), 1)}"),
            "verdict": ((JURY_PATTERN, JUDGE), out_matrix.astype(np.int8)),
        },
        attrs={**attrs, DESIGN_ATTR: design},
    )
