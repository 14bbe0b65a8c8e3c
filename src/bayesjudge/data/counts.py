"""The :class:`JudgeCounts` container of a judge evaluation's sufficient statistics."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from bayesjudge.core._validation import check_design
from bayesjudge.data._common import (
    CALIBRATION_FIELDS,
    DEFAULT_DESIGN,
    DEFAULT_LABEL,
    DESIGN_ATTR,
    DIMS,
    FIELDS,
    JOINT,
    JOINT_DIMS,
    MAX_FULL_SYSTEMS,
    MEANING,
    PATTERN,
    POOLED_LABEL,
    SHARED_ATTR,
    TEST_FIELDS,
    VERDICT,
    check_counts,
    dims_arg,
    group_indexers,
    label_array,
    plain_value,
    shared_dims,
)
from bayesjudge.data.clusters import (
    CALIBRATION_CLUSTER_DIMS,
    CALIBRATION_CLUSTERS,
    CLUSTERS,
    POSITIVES,
    REPEATS,
    TRUTH,
    check_calibration_clusters,
    check_cluster_table,
)
from bayesjudge.data.counting import count_frames
from bayesjudge.data.patterns import (
    all_patterns,
    attach_joint,
    canonical_joint,
    check_joint_against_counts,
    joint_arrays,
)


def _check_given(given: Mapping[str, Any]) -> None:
    """Refuse half a pair of counts (``n`` without ``k``, ...) and no counts at all."""
    for total, sub in (("n", "k"), ("m0", "tn"), ("m1", "tp")):
        if (given[total] is None) != (given[sub] is None):
            absent, other = (total, sub) if given[total] is None else (sub, total)
            raise ValueError(
                f"{absent} ({MEANING[absent]}) is missing while {other} is given; pass "
                f"both {total} and {sub}, or neither for zeros."
            )
    if all(v is None for v in given.values()):
        raise ValueError(
            "No counts given; pass n and k (test), m0/tn/m1/tp (calibration), or both."
        )


def _group_arrays(given: Mapping[str, Any], systems, strata) -> dict[str, np.ndarray]:
    """Broadcast the given counts (zeros for None) to (system, stratum) arrays.

    Scalars serve every group; arrays must have the shape the labels give: ``(system,)`` or
    ``(stratum,)`` with one label list, ``(system, stratum)`` with both.
    """
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
    return arrays


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
    JudgeCounts.from_frames : Count item-level tables (pandas, polars, pyarrow, DuckDB, Dask,
        PySpark, files).

    Notes
    -----
    Groups may lack a test set (``n == 0``) or calibration (``m0 == 0`` or ``m1 == 0``) —
    for instance a system evaluated with a shared calibration set. Derived proportions are
    NaN exactly where their denominator is zero; use :meth:`has_test` and
    :meth:`has_calibration` to find those groups, and :meth:`pooled_calibration` or
    :meth:`with_calibration_from` to supply calibration. Only the dimension coordinates are
    kept; other coordinates are dropped, attributes are kept.

    The dataset may also hold the optional joint verdict table ``joint`` (dims
    ``("stratum", "pattern")``, with the coordinate ``verdict`` (pattern, system)) of the
    systems' test verdicts on shared items; see :attr:`joint`. It is checked against ``n``
    and ``k`` (shared items are among each system's test items) and re-marginalised when
    systems are selected.

    It may also hold the cluster table ``clusters`` (dims ``("system", "stratum", "repeats",
    "positives")``) of test items judged several times (:meth:`from_frames` with
    ``repeats=``); ``n`` and ``k`` then count verdicts and must equal the table's totals. See
    :attr:`clusters`.

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
        extra = [v for v in present if v not in (*FIELDS, JOINT, CLUSTERS, CALIBRATION_CLUSTERS)]
        if missing or extra:
            raise ValueError(
                f"The dataset must hold exactly the count variables {list(FIELDS)} (and "
                f"optionally the joint verdict table {JOINT!r} and the cluster table "
                f"{CLUSTERS!r} of repeated verdicts, and {CALIBRATION_CLUSTERS!r} of repeated "
                f"labelled verdicts); missing {missing}, unexpected "
                f"{extra} (it holds {present}). Rename or drop variables so that exactly these "
                f"remain."
            )
        clusters = dataset[CLUSTERS] if CLUSTERS in dataset.data_vars else None
        cal_clusters = (
            dataset[CALIBRATION_CLUSTERS] if CALIBRATION_CLUSTERS in dataset.data_vars else None
        )
        if clusters is not None or cal_clusters is not None:
            dataset = dataset.drop_vars(
                [
                    v
                    for v in (CLUSTERS, CALIBRATION_CLUSTERS, REPEATS, POSITIVES, TRUTH)
                    if v in dataset.variables
                ]
            )
        joint = dataset[JOINT] if JOINT in dataset.data_vars else None
        verdict = (
            dataset.coords[VERDICT] if joint is not None and VERDICT in dataset.coords else None
        )
        if joint is not None:
            if verdict is not None and set(verdict.dims) != {PATTERN, "system"}:
                raise ValueError(
                    f"The {VERDICT!r} coordinate must have dims ('pattern', 'system'); got "
                    f"{verdict.dims}."
                )
            dataset = dataset.drop_vars(
                [v for v in (JOINT, VERDICT, PATTERN) if v in dataset.variables]
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
        systems = label_array("system", dataset.indexes["system"].tolist())
        strata = label_array("stratum", dataset.indexes["stratum"].tolist())
        arrays = {f: dataset[f].broadcast_like(dataset).transpose(*DIMS).values for f in FIELDS}
        checked = check_counts(arrays, systems.tolist(), strata.tolist())
        data_vars = {f: (DIMS, checked[f]) for f in FIELDS}
        coords = {"system": systems, "stratum": strata}
        if clusters is not None:
            table = check_cluster_table(
                clusters, systems.tolist(), strata.tolist(), checked["n"], checked["k"]
            )
            data_vars[CLUSTERS] = ((*DIMS, REPEATS, POSITIVES), table)
            coords[REPEATS] = clusters[REPEATS].values.astype(np.int64)
            coords[POSITIVES] = clusters[POSITIVES].values.astype(np.int64)
        if cal_clusters is not None:
            table = check_calibration_clusters(
                cal_clusters, systems.tolist(), strata.tolist(), checked
            )
            data_vars[CALIBRATION_CLUSTERS] = (CALIBRATION_CLUSTER_DIMS, table)
            coords[TRUTH] = np.array([0, 1], dtype=np.int64)
            coords[REPEATS] = cal_clusters[REPEATS].values.astype(np.int64)
            coords[POSITIVES] = cal_clusters[POSITIVES].values.astype(np.int64)
        if joint is not None:
            if verdict is not None:
                verdict = verdict.transpose(PATTERN, "system").values
            values, matrix = joint_arrays(joint, verdict, systems.tolist(), strata.tolist())
            table, patterns, matrix = canonical_joint(values, matrix)
            check_joint_against_counts(
                table,
                matrix,
                checked["n"],
                checked["k"],
                systems.tolist(),
                strata.tolist(),
            )
            data_vars[JOINT] = (JOINT_DIMS, table)
            coords[PATTERN] = np.array(patterns, dtype=f"<U{max(len(systems), 1)}")
            coords[VERDICT] = ((PATTERN, "system"), matrix)
        attrs = dict(dataset.attrs)
        shared = shared_dims(attrs.get(SHARED_ATTR, ""))
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
        attrs[DESIGN_ATTR] = check_design(
            attrs.get(DESIGN_ATTR, DEFAULT_DESIGN), f"attrs[{DESIGN_ATTR!r}] (the labelling design)"
        )
        self._ds = xr.Dataset(data_vars, coords=coords, attrs=attrs)

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
        joint=None,
        design: str = DEFAULT_DESIGN,
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
        joint : array_like or xarray.DataArray, optional
            Joint verdict table of the systems' test verdicts on shared items (items judged
            for every system): counts of shape ``(stratum, 2**K)`` (or ``(2**K,)`` for one
            stratum), columns in the order of :func:`all_patterns` (``"1…1"`` first;
            character ``j`` is the verdict on system ``j``, ``"1"`` = judged correct); or a
            DataArray with dims ``("stratum", "pattern")`` (or ``"pattern"`` only, for one
            stratum) and pattern labels such as ``"10"`` in the order of ``system`` (any
            subset of the patterns).
        design : {"stratified", "random"}, default "stratified"
            How the labelled (calibration) items were chosen; see :attr:`design`.
            ``"stratified"``: a set sampled per human label, so m0 and m1 are fixed by design
            (Lee et al.). ``"random"``: a random subset of the evaluation's items was labelled,
            so ``n, k`` count the unlabelled items and the truth counts m0, m1 are evidence
            about theta.

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
        _check_given(given)
        systems = label_array("system", system) if system is not None else None
        strata = label_array("stratum", stratum) if stratum is not None else None
        arrays = _group_arrays(given, systems, strata)
        systems = systems if systems is not None else np.array([DEFAULT_LABEL])
        strata = strata if strata is not None else np.array([DEFAULT_LABEL])
        checked = check_counts(arrays, systems.tolist(), strata.tolist())
        ds = xr.Dataset(
            {f: (DIMS, checked[f]) for f in FIELDS},
            coords={"system": systems, "stratum": strata},
            attrs={DESIGN_ATTR: check_design(design, "design")},
        )
        if joint is not None:
            ds = attach_joint(ds, joint, systems.tolist(), strata.tolist())
        return cls(ds)

    @classmethod
    def from_frames(
        cls,
        test=None,
        calibration=None,
        *,
        judge: str = "judge",
        human: str | None = "human",
        system: str | None = None,
        stratum: str | None = None,
        positive=None,
        item: str | None = None,
        design: str | None = None,
        repeats: str | None = None,
    ) -> JudgeCounts:
        """Count item-level tables of judge verdicts and human labels.

        Parameters
        ----------
        test : dataframe or path, optional
            One row per test item, with the judge's verdict in column ``judge`` (and
            optional ``system``/``stratum`` columns). Without ``calibration``, a test table
            that also has the ``human`` column is *one table* of the random labelling design:
            rows with a human label are the labelled items, rows with an empty (null, NaN,
            blank) label the unlabelled ones (see Notes). A pandas, polars (``DataFrame`` or
            ``LazyFrame``) or pyarrow table, a DuckDB relation
            (:class:`duckdb.DuckDBPyRelation`), a Dask DataFrame or a PySpark DataFrame —
            anything :func:`narwhals.from_native` accepts — or the path (``str`` or
            :class:`pathlib.Path`) of a ``.csv``/``.tsv`` or ``.parquet``/``.pq`` file.
        calibration : dataframe or path, optional
            One row per calibration item, with columns ``judge`` and ``human`` (and the same
            optional group columns). At least one of ``test`` and ``calibration`` is needed.
        judge, human : str, default "judge", "human"
            Names of the judge-verdict and human-label columns. ``human=None``: the tables
            have no human column (a test table is then counted as test items only, even if
            it has a column named ``"human"``); not with ``calibration``.
        system, stratum : str, optional
            Names of the group columns. When given, both tables must have them; when
            omitted, the dimension has the single label ``"all"``.
        positive : scalar or mapping, optional
            The label value meaning "correct", for labels outside the recognised vocabulary.
            A scalar applies to every label column; a mapping ``{column: value}`` to the named
            columns only. String values are compared stripped and lowercased; a number and
            numeric text match by value (``"2"`` finds ``2`` and ``2.0``, ``"1"`` finds
            ``True``), so that a positive given as text (as on the command line) works on a
            numeric column. Some label column it applies to must hold it.
        item : str, optional
            Name of an item-id column of the test table. When given, the items judged for
            every system (shared items) are also counted by stratum and by the pattern of
            the judge's verdicts across systems: the joint verdict table :attr:`joint`, which
            paired comparisons use. ``n`` and ``k`` still count all of a system's unlabelled
            items. If the calibration table has this column too, its ids tell which labelled
            items are also judged test items: each is then counted once (see Notes).
        design : {"stratified", "random"}, optional
            How the labelled items were chosen (:attr:`design`, stored in
            ``attrs["design"]``). Default: inferred — ``"random"`` for one table with human
            labels and when every labelled item is also a judged test item (matching
            ``item`` ids; a :class:`~bayesjudge.warnings.DesignWarning` says so), else
            ``"stratified"``. ``"random"`` given without ``item`` says that the test table
            holds only the unlabelled items (the labelled ones already removed).
        repeats : str, optional
            Name of the test table's column that numbers the repeated verdicts of an item
            (e.g. ``"epoch"`` of an Inspect log; needs ``item``). Rows with the same item id
            (within a system) and different ``repeats`` values are verdicts of one item: a
            cluster. ``n`` and ``k`` then count verdicts, and the cluster table
            :attr:`clusters` counts the items by number of verdicts and of 'correct' ones
            (see ``docs/repeated-verdicts.md``). A repeated (item, repeats) pair is an error.
            In one table with a human column, labelled items may have several verdicts too:
            their rows carry the item's label, ``m0, tn, m1, tp`` count verdicts and
            :attr:`calibration_clusters` counts the labelled items per truth; so is a separate
            calibration table with ``item`` and ``repeats`` columns (stratified design). Not
            supported yet: such a table whose items are matched to judged items by id, and a
            joint verdict table (no paired comparisons of clustered counts).

        Returns
        -------
        JudgeCounts
            Counts per group. Groups found in only one table get zeros for the other set.

        Raises
        ------
        ValueError
            If ``design`` is not ``"stratified"``/``"random"``; if ``design="stratified"``
            is passed for one table with human labels, or while labelled items are also
            judged test items (they would be counted twice); if the labelled items are only
            partly among the judged items (a mix of designs), a labelled item's judge verdict
            or stratum differs between the tables, the item-id columns of the two tables are
            of different types, or a calibration item id is missing or repeats within a
            system (the messages name the ids and both fixes).
            If a column is missing (the message lists the columns that exist) or holds lists
            or structs, a group column has missing (empty, null, NaN) values, two group labels
            differ but print alike or compare equal (``1`` and ``"1"``, ``1`` and ``1.0``,
            ``"a"`` and ``" a"``, within or across the tables), a label column holds
            unrecognised values (the message lists them with row counts and suggests
            ``positive=``), ``positive`` is held by no label column it applies to, matches
            values of different types or leaves more than one other value, or a file cannot
            be read: an unknown suffix, an empty file, a repeated header name, a row with more
            or fewer fields than the header, text that is not UTF-8 (the message names the
            file and line). With ``item``: if an item id is missing, repeats within a system
            (the message names the ids), lies in different strata for different systems, or
            no item has a verdict for every system.
        TypeError
            If a table is not a dataframe or a path.
        FileNotFoundError
            If a path does not exist.
        IsADirectoryError
            If a path is a directory.

        Warns
        -----
        MissingLabelWarning
            When rows with a missing judge or human label (null, NaN or empty string) are
            dropped; the message gives the row counts per column and per group. In one table
            with a human column, an empty human label is the design (an unlabelled item),
            not missing data: only rows with a missing judge verdict are dropped.
        DesignWarning
            When the random design is inferred from matching ``item`` ids (pass
            ``design="random"`` to declare it).

        Notes
        -----
        *Labels.* Without ``positive``, a label column may hold booleans, the numbers 0 and 1,
        or (case-insensitive, surrounding whitespace ignored) "yes"/"no", "correct"/
        "incorrect", "pass"/"fail", "true"/"false", "1"/"0"; words from different pairs may
        be mixed; numbers written as text (``"1.0"``) count by value. With ``positive``, the
        column must hold that value and at most one other (which then means incorrect); a
        column holding only the other value is all incorrect, provided another column the
        positive applies to (the other label column, or the same column of the other table)
        holds it. Any third value, and a positive that no such column holds, is an error
        rather than being silently counted as incorrect, so that typos surface.

        *Files.* Every column of a CSV/TSV file is read as text, and the system, stratum and
        item columns of a Parquet file are cast to text (float columns keep their type), so
        that identifiers are never type-guessed: ``01`` and ``1`` are two systems, ``007``
        and ``7`` two items, and ``NA``, ``None``, ``nan`` or ``1e3`` are labels like any
        other (an empty cell is missing). Select labels of such counts as text
        (``counts.sel(system="1")``). A CSV file is first read once with :mod:`csv` to check
        its structure (header, fields per row); blank lines are not rows.

        *Engines.* The tables are never converted to pandas. Through narwhals, one query per
        table — label normalisation (strip, lowercase), ``group_by`` over group and label
        columns and a row count — runs on the table's own engine, lazily for polars
        LazyFrames, DuckDB relations, Dask and PySpark DataFrames and files (CSV is scanned
        with polars when installed, else read with pandas; Parquet needs polars or pyarrow).
        Only the small table of distinct (group, label) combinations is collected and
        checked in Python. With ``item``, one more query on the engine groups the test table
        by item, then by stratum and verdict pattern; only one row per (stratum, observed
        pattern) is collected. Grouping by item touches every item, so it costs more than
        the counts. Only when an item check fails are the test table's group, item and
        verdict columns collected, to name the offending ids.

        *Groups.* Coordinates are the union of the labels in both tables, sorted (mixed
        types: by type name, then text), so the result does not depend on row order or
        engine. A group whose rows all lack labels is kept with zero counts.

        *Items.* With ``item``, an item enters the joint table when every system has a
        (non-missing) verdict on it; rows with a missing verdict are dropped with the
        :class:`~bayesjudge.warnings.MissingLabelWarning` above, so their item is then not
        shared. Items not shared by all systems stay in ``n`` and ``k`` — nothing is dropped
        from the estimates; how many there are per system is shown in the repr and in
        ``counts.joint.attrs["unshared_items"]``, and comparisons treat them as unpaired.
        Only the test table is read for the joint table.

        *The labelling design.* In the stratified design (Lee et al.) the calibration set is
        sampled per human label and is separate from the test items. In the random design
        humans label a random subset of the judged items; each item must then be counted
        once: ``n, k`` count the unlabelled items and m0, tn, m1, tp the labelled ones
        with their verdicts. The random design is read from the tables in two ways:

        - *One table*: ``from_frames(table, human="human")`` without ``calibration``, the
          ``human`` column filled for the labelled rows and empty for the rest. Design
          ``"random"``; with no labelled row at all the table is test-only and the design
          stays the one given (default ``"stratified"``, which changes nothing without
          labelled items); with every row labelled, ``n = 0``. ``design="stratified"`` is
          refused when rows are labelled: labelled rows of the judged items are a random
          subset by construction (pass a stratified set as ``calibration=``).
        - *Matching ids*: with ``item`` and an ``item`` column in the calibration table too,
          a labelled item is matched with a judged one by system and id (by value and type:
          ``"007"`` and ``"7"`` are two items; a CSV file's ids are text, so pass ids of one
          type in both tables). If every labelled item is a judged test item, those items
          leave ``n, k`` and enter only the calibration counts, the design is ``"random"``
          (a :class:`~bayesjudge.warnings.DesignWarning` says so unless ``design="random"``
          was given) and the joint verdict table counts only the unlabelled items (so that
          it stays among each system's ``n``). If none is, the sets are separate. A mix is
          an error, as is a labelled item whose verdict or stratum differs between the
          tables. Only the calibration table is collected item by item, and only the test
          rows with a labelled id.

        Without ``item``, items cannot be matched: overlapping tables would count their
        shared items twice, so remove the labelled items from the test table and pass
        ``design="random"`` (or pass one table). With ``calibration``, a ``human`` column of
        the test table is not read.

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
        >>> counts.design
        'stratified'

        One table of the random design: the judge graded six items, humans labelled three.

        >>> table = pd.DataFrame({"judge": [1, 1, 0, 1, 0, 1],
        ...                       "human": [1, None, 0, None, 1, None]})
        >>> counts = JudgeCounts.from_frames(table)
        >>> print(counts.to_frame().to_string(index=False))
        system stratum  n  k  m0  tn  m1  tp
           all     all  3  3   1   1   2   1
        >>> counts.design
        'random'

        Labelled items that are also judged items (matching ids) are counted once:

        >>> test = pd.DataFrame({"id": [1, 2, 3, 4, 5, 6], "judge": [1, 1, 0, 1, 0, 1]})
        >>> calib = pd.DataFrame({"id": [1, 3, 5], "judge": [1, 0, 0], "human": [1, 0, 1]})
        >>> counts = JudgeCounts.from_frames(test, calib, item="id", design="random")
        >>> counts.n.item(), counts.k.item(), counts.m0.item(), counts.m1.item()
        (3, 3, 1, 2)
        """
        ds = count_frames(
            test,
            calibration,
            judge=judge,
            human=human,
            system=system,
            stratum=stratum,
            positive=positive,
            item=item,
            design=design,
            repeats=repeats,
        )
        return cls(ds)

    # ------------------------------------------------------------------- accessors

    @property
    def dataset(self) -> xr.Dataset:
        """The underlying :class:`xarray.Dataset` (int64 counts, dims system × stratum)."""
        return self._ds

    def keys(self) -> list[str]:
        """Names of the count variables (and ``"joint"`` when there is a joint table).

        Returns
        -------
        list of str
            ``["n", "k", "m0", "tn", "m1", "tp"]``, plus ``"joint"`` if :attr:`has_joint`.

        Notes
        -----
        ``counts[name]`` is ``getattr(counts, name)`` for each of these names, ``name in
        counts`` tests membership and iterating over ``counts`` yields them, as for the
        :class:`xarray.Dataset` the repr shows.

        Examples
        --------
        >>> c = JudgeCounts.from_counts(n=10, k=7)
        >>> c.keys()
        ['n', 'k', 'm0', 'tn', 'm1', 'tp']
        >>> c["k"].item(), "k" in c, "theta" in c
        (7, True, False)
        """
        extra = [v for v in (JOINT, CLUSTERS) if v in self._ds.data_vars]
        return [*FIELDS, *extra]

    def __getitem__(self, name: str) -> xr.DataArray:
        if not isinstance(name, str) or name not in self.keys():
            raise KeyError(
                f"{name!r} is not a variable of these counts; they hold {self.keys()} "
                f"(counts[name] is the same as counts.name)."
            )
        return getattr(self, name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.keys()

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

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
    def has_joint(self) -> bool:
        """Whether the counts carry a joint verdict table (see :attr:`joint`).

        Examples
        --------
        >>> JudgeCounts.from_counts(n=[3, 3], k=[2, 1], system=["a", "b"]).has_joint
        False
        """
        return JOINT in self._ds.data_vars

    @property
    def has_clusters(self) -> bool:
        """Whether some test or labelled item has several verdicts.

        See :attr:`clusters` and :attr:`calibration_clusters`.

        Examples
        --------
        >>> JudgeCounts.from_counts(n=3, k=2).has_clusters
        False
        """
        return any(
            bool(self._ds[v].sel({REPEATS: slice(2, None)}).sum() > 0)
            for v in (CLUSTERS, CALIBRATION_CLUSTERS)
            if v in self._ds.data_vars
        )

    @property
    def calibration_clusters(self) -> xr.DataArray | None:
        """The cluster table of repeated verdicts of the labelled items, or None.

        ``calibration_clusters[system, stratum, truth=t, repeats=r, positives=j]`` counts the
        labelled items with human label ``t`` (0: incorrect, 1: correct) judged ``r`` times,
        of which ``j`` verdicts said *correct* (:meth:`from_frames` with ``repeats=`` and
        labelled rows that repeat an item). With it, ``m0, tn, m1, tp`` count *verdicts*
        (``m0 = Σ r``, ``tn = Σ (r − j)`` over truth 0; ``m1 = Σ r``, ``tp = Σ j`` over
        truth 1), so ``q̂0 = tn/m0`` and ``q̂1 = tp/m1`` are per-verdict rates; the labelled
        *items* per truth are the table's sums over ``repeats`` and ``positives``. See
        ``docs/repeated-verdicts.md``.

        Examples
        --------
        >>> import pandas as pd
        >>> table = pd.DataFrame({"item": [1, 1, 2, 2, 3], "epoch": [1, 2, 1, 2, 1],
        ...                       "judge": [1, 1, 0, 1, 1], "human": [1, 1, 0, 0, None]})
        >>> c = JudgeCounts.from_frames(table, item="item", repeats="epoch")
        >>> c.calibration_clusters.sum(("repeats", "positives")).squeeze().values.tolist()
        [1, 1]
        >>> c.m0.item(), c.tn.item(), c.m1.item(), c.tp.item()
        (2, 1, 2, 2)
        """
        return (
            self._ds[CALIBRATION_CLUSTERS] if CALIBRATION_CLUSTERS in self._ds.data_vars else None
        )

    @property
    def clusters(self) -> xr.DataArray | None:
        """The cluster table of repeated verdicts of the test items, or None.

        ``clusters[system, stratum, repeats=r, positives=j]`` counts the test items judged
        ``r`` times of which ``j`` verdicts said correct (:meth:`from_frames` with
        ``repeats=``). With it, :attr:`n` and :attr:`k` count *verdicts* (``Σ r`` and
        ``Σ j``), so ``p̂ = k/n`` is the share of verdicts called correct; the estimators
        that know the table (``estimate(method="cluster-delta")``, ``"cluster-bootstrap"``)
        treat the items as the independent units. See ``docs/repeated-verdicts.md``.

        Examples
        --------
        >>> import pandas as pd
        >>> test = pd.DataFrame({"item": [1, 1, 2, 2], "epoch": [1, 2, 1, 2],
        ...                      "judge": [1, 1, 0, 1]})
        >>> c = JudgeCounts.from_frames(test, item="item", repeats="epoch", human=None)
        >>> c.clusters.sel(repeats=2).squeeze().values.tolist()  # positives 0, 1, 2
        [0, 1, 1]
        >>> c.n.item(), c.k.item(), c.has_clusters
        (4, 3, True)
        """
        return self._ds[CLUSTERS] if CLUSTERS in self._ds.data_vars else None

    def without_clusters(self) -> JudgeCounts:
        """Return these counts with every verdict counted as an independent item.

        ``n`` and ``k`` stay the verdict totals; only the information that verdicts share an
        item is dropped. Intervals computed from the result understate the uncertainty when
        verdicts of one item are correlated: use it only to compare with the naive analysis,
        or when the repeats are known to be independent.

        Examples
        --------
        >>> import pandas as pd
        >>> test = pd.DataFrame({"item": [1, 1], "epoch": [1, 2], "judge": [1, 0]})
        >>> c = JudgeCounts.from_frames(test, item="item", repeats="epoch", human=None)
        >>> c.without_clusters().has_clusters, c.without_clusters().n.item()
        (False, 2)
        """
        names = (CLUSTERS, CALIBRATION_CLUSTERS, REPEATS, POSITIVES, TRUTH)
        ds = self._ds.drop_vars([v for v in names if v in self._ds.variables])
        return JudgeCounts(ds)

    @property
    def joint(self) -> xr.DataArray | None:
        """Joint verdict table of the systems' test verdicts on shared items, or None.

        Shared items are the test items judged for every system (see
        :meth:`from_frames` with ``item=``). The table counts them per stratum and per
        pattern of verdicts: coordinate ``pattern`` holds strings of ``"1"``/``"0"`` of length
        K in :attr:`systems` order (``"10"``: first system judged correct, second judged
        incorrect); only observed patterns are stored, ``"1…1"`` first. The same 0/1 matrix,
        dims ``("pattern", "system")``, is :attr:`joint_verdicts` (and the coordinate
        ``verdict`` of :attr:`dataset`; a DataArray cannot carry a coordinate over
        ``system``, which is not one of its dims).

        Returns
        -------
        xarray.DataArray or None
            int64 counts, dims ``("stratum", "pattern")``. ``attrs`` give
            ``systems`` (the system labels, the order of the pattern characters),
            ``shared_items`` (total) and ``unshared_items`` (``{system: count}``, the
            system's test items that are not in the table, ``n - shared`` summed over
            strata). None when there is no joint table.

        Examples
        --------
        >>> c = JudgeCounts.from_counts(n=[4, 5], k=[3, 2], system=["a", "b"],
        ...                             joint=[2, 1, 0, 1])
        >>> c.joint.pattern.values.tolist(), c.joint.values.ravel().tolist()
        (['11', '10', '00'], [2, 1, 1])
        >>> c.joint.attrs["unshared_items"]
        {'a': 0, 'b': 1}
        """
        if not self.has_joint:
            return None
        joint = self._ds[JOINT].copy()
        shared = joint.sum(JOINT_DIMS).item()
        unshared = (self._ds["n"].sum("stratum") - joint.sum(JOINT_DIMS)).values.tolist()
        joint.attrs = {
            "description": "shared test items by verdict pattern (1 = judged correct), "
            "characters in system order",
            "systems": self.systems,
            "shared_items": int(shared),
            "unshared_items": dict(zip(self.systems, unshared, strict=True)),
        }
        return joint

    @property
    def joint_verdicts(self) -> xr.DataArray | None:
        """The 0/1 verdict matrix of the joint table's patterns, or None.

        Returns
        -------
        xarray.DataArray or None
            int8, dims ``("pattern", "system")``: entry 1 where the pattern has the judge
            calling that system correct. None when there is no joint table.

        Examples
        --------
        >>> c = JudgeCounts.from_counts(n=[4, 5], k=[3, 2], system=["a", "b"],
        ...                             joint=[2, 1, 0, 1])
        >>> c.joint_verdicts.sel(system="a").values.tolist()
        [1, 1, 0]
        """
        if not self.has_joint:
            return None
        return self._ds[VERDICT].rename("verdict")

    def joint_table(self, full: bool = True) -> xr.DataArray:
        """Return the joint verdict table, with all 2**K patterns when ``full``.

        Parameters
        ----------
        full : bool, default True
            Fill in the unobserved patterns with zeros, in the order of :func:`all_patterns`
            (``"1…1"`` first). False returns :attr:`joint` as stored.

        Returns
        -------
        xarray.DataArray
            int64 counts, dims ``("stratum", "pattern")``, attrs as :attr:`joint`.

        Raises
        ------
        ValueError
            If there is no joint table, or ``full`` with more than 16 systems.

        Examples
        --------
        >>> c = JudgeCounts.from_counts(n=[4, 5], k=[3, 2], system=["a", "b"],
        ...                             joint=[2, 1, 0, 1])
        >>> c.joint_table().values.ravel().tolist()
        [2, 1, 0, 1]
        """
        joint = self._require_joint("joint_table")
        if not full:
            return joint
        n_systems = len(self.systems)
        if n_systems > MAX_FULL_SYSTEMS:
            raise ValueError(
                f"A full joint table of {n_systems} systems would have 2**{n_systems} "
                f"patterns; use joint_table(full=False) (observed patterns) or pair_table()."
            )
        filled = joint.reindex({PATTERN: all_patterns(n_systems)}, fill_value=0)
        filled.attrs = joint.attrs
        return filled

    def pair_table(self, a, b) -> xr.DataArray:
        """Return the 2×2 table of two systems' verdicts on the shared items, per stratum.

        Parameters
        ----------
        a, b : label
            The two systems (distinct).

        Returns
        -------
        xarray.DataArray
            int64 counts, dims ``("stratum", "cell")``, cells ``["11", "10", "01", "00"]``
            (``"10"``: ``a`` judged correct, ``b`` judged incorrect). Items shared by all
            systems of these counts, marginalised over the other systems.

        Raises
        ------
        ValueError
            If there is no joint table, a label does not exist, or ``a == b``.

        Examples
        --------
        >>> c = JudgeCounts.from_counts(n=[4, 5], k=[3, 2], system=["a", "b"],
        ...                             joint=[2, 1, 0, 1])
        >>> c.pair_table("b", "a").values.ravel().tolist()
        [2, 0, 1, 1]
        """
        self._require_joint("pair_table")
        if plain_value(a) == plain_value(b):
            raise ValueError(f"pair_table needs two different systems; got {a!r} twice.")
        table = self.sel(system=[a, b]).joint_table(full=True).rename({PATTERN: "cell"})
        table.attrs = {"systems": f"{a}, {b}"}
        return table

    def _require_joint(self, what: str) -> xr.DataArray:
        if not self.has_joint:
            raise ValueError(
                f"{what} needs a joint verdict table, and these counts have none; count item "
                f"tables with JudgeCounts.from_frames(..., item='item') or pass "
                f"from_counts(..., joint=...)."
            )
        return self.joint

    @property
    def design(self) -> str:
        """The labelling design: ``"stratified"`` or ``"random"``.

        ``"stratified"`` (Lee et al.'s design, the default): the calibration set was sampled
        per human label, so m0 and m1 are fixed by design and carry no information about
        theta; ``n, k`` count test items that are not in it. ``"random"``: humans labelled a
        random subset of the evaluation's items; ``n, k`` count the unlabelled items only
        (each item is counted once) and ``m0 + m1`` the labelled ones, whose truth counts are
        data: m1 ~ Binomial(m0 + m1, theta). Where one calibration set is shared over a
        dim (:attr:`calibration_shared_over`), its truth counts inform the mean of theta
        over that dim weighted by the groups' test items.

        Declaring a truth-stratified sample ``"random"`` biases theta toward m1 / (m0 + m1);
        declaring a random sample ``"stratified"`` is valid but throws away information.
        Stored in ``dataset.attrs["design"]``.

        Examples
        --------
        >>> JudgeCounts.from_counts(n=1800, k=1000, m0=80, tn=64, m1=120, tp=108,
        ...                         design="random").design
        'random'
        """
        return self._ds.attrs[DESIGN_ATTR]

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
        return shared_dims(self._ds.attrs.get(SHARED_ATTR, ""))

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
        if self.design == "random":
            items = f"{n_test} unlabelled items, {n_cal} labelled items (random labelling design)"
        else:
            items = (
                f"{n_test} test items, {n_cal} calibration items (stratified calibration design)"
            )
        if CLUSTERS in self._ds.data_vars:
            n_items = int(self._ds[CLUSTERS].sum())
            items = f"{n_test} verdicts of {n_items} repeatedly judged items; " + items.replace(
                f"{n_test} test items, ", ""
            ).replace(f"{n_test} unlabelled items, ", "")
        if CALIBRATION_CLUSTERS in self._ds.data_vars:
            n_items = int(self._ds[CALIBRATION_CLUSTERS].sum())
            items = items.replace(
                f"{n_cal} labelled items", f"{n_cal} verdicts of {n_items} labelled items"
            ).replace(
                f"{n_cal} calibration items", f"{n_cal} verdicts of {n_items} calibration items"
            )
        return (
            f"JudgeCounts: {s} system{'s' if s != 1 else ''} × {t} "
            f"strat{'a' if t != 1 else 'um'}, {items}"
        )

    def _joint_line(self) -> str:
        if not self.has_joint:
            return ""
        attrs = self.joint.attrs
        unshared = ", ".join(f"{s}: {c}" for s, c in attrs["unshared_items"].items())
        return (
            f"Joint verdict table: {attrs['shared_items']} test items judged for all "
            f"{len(self.systems)} systems, {self._ds.sizes[PATTERN]} observed patterns; test "
            f"items not in it (unpaired) — {unshared}"
        )

    def __repr__(self) -> str:
        joint = f"\n{self._joint_line()}" if self.has_joint else ""
        return f"{self._header()}{joint}\n{self._ds!r}"

    def _repr_html_(self) -> str:
        joint = f"<p>{self._joint_line()}</p>" if self.has_joint else ""
        return f"<p><b>{self._header()}</b></p>{joint}{self._ds._repr_html_()}"

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
        result is still a valid :class:`JudgeCounts`. A joint verdict table is kept: selected
        strata keep their rows, and selected systems get the patterns re-marginalised to them
        (over the items shared by all the original systems).

        Examples
        --------
        >>> c = JudgeCounts.from_counts(n=[10, 20], k=[5, 9], system=["a", "b"])
        >>> c.sel(system="b").n.values.tolist()
        [[20]]
        """
        return JudgeCounts(self._ds.sel(group_indexers(self._ds, system, stratum)))

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
        unweighted total; it is not a stratified estimate. A joint verdict table is summed
        over pooled strata and dropped when systems are pooled.

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
        dims = dims_arg(dim)
        ds = self._ds[list(TEST_FIELDS)].sum(dims, keep_attrs=True)
        ds.update(self._summed_calibration(dims))
        ds.attrs[SHARED_ATTR] = ",".join(d for d in self.calibration_shared_over if d not in dims)
        ds = ds.expand_dims({d: [POOLED_LABEL] for d in dims}).transpose(*DIMS)
        if CLUSTERS in self._ds.data_vars:  # items of pooled groups stay distinct items
            pooled = self._ds[CLUSTERS].sum(dims).expand_dims({d: [POOLED_LABEL] for d in dims})
            ds = ds.assign({CLUSTERS: pooled.transpose(*DIMS, REPEATS, POSITIVES)})
        if CALIBRATION_CLUSTERS in self._ds.data_vars:  # as _summed_calibration: shared once
            shared = self.calibration_shared_over
            cal = self._ds[CALIBRATION_CLUSTERS].isel({d: 0 for d in dims if d in shared})
            cal = cal.drop_vars([d for d in dims if d in shared])
            cal = cal.sum([d for d in dims if d not in shared])
            cal = cal.expand_dims({d: [POOLED_LABEL] for d in dims})
            ds = ds.assign({CALIBRATION_CLUSTERS: cal.transpose(*CALIBRATION_CLUSTER_DIMS)})
        if self.has_joint and "system" not in dims:  # pooled systems have no joint verdicts
            joint = self._ds[JOINT].sum("stratum").expand_dims(stratum=[POOLED_LABEL])
            ds = ds.assign({JOINT: joint.transpose(*JOINT_DIMS)})
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
        several systems. The result takes ``other``'s labelling :attr:`design`. The same
        calibration items then inform every group, so estimates for different groups are
        correlated. The dims along which the set is broadcast are
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
        _refuse_calibration_clusters("with_calibration_from", self, other)
        ds = self._ds.copy()
        for f in CALIBRATION_FIELDS:
            ds[f] = src[f].broadcast_like(self._ds[f]).transpose(*DIMS)
        ds.attrs[SHARED_ATTR] = ",".join(d for d in DIMS if d in shared)
        # The calibration set decides the labelling design.
        ds.attrs[DESIGN_ATTR] = other.design
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
        dims = dims_arg(dim)
        _refuse_calibration_clusters("pooled_calibration", self)
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
        return self._ds[list(FIELDS)].to_dataframe().reset_index()[[*DIMS, *FIELDS]]


def _refuse_calibration_clusters(what: str, *counts: JudgeCounts) -> None:
    """Refuse an operation that would treat repeated labelled verdicts as labelled items."""
    if any(c.calibration_clusters is not None for c in counts):
        raise ValueError(
            f"{what}: these counts hold labelled items judged several times "
            f"(calibration_clusters), whose m0, tn, m1, tp count verdicts; moving or pooling "
            f"those totals alone would drop which verdicts share an item. Not supported yet: "
            f"count the tables together with JudgeCounts.from_frames(..., repeats=...), or "
            f"pass counts.without_clusters() to treat every verdict as an item on purpose."
        )
