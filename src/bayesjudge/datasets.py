"""Real judge data: the LLMBar verdicts (Zeng et al., ICLR 2024) in bayesjudge's vocabulary.

The two gzip'd CSV tables ``llmbar_verdicts.csv.gz`` and ``llmbar_items.csv.gz`` (about 260 kB,
from github.com/princeton-nlp/LLMBar, MIT licence) ship with the package as package data
(``bayesjudge/_datasets``, with their licence notice and README), so :func:`load_llmbar` reads
them with no argument: ``bj.datasets.load_llmbar()``. A folder given as ``path`` or in the
``BAYESJUDGE_DATA`` environment variable overrides them (another copy in the same layout).

Each LLMBar item is an instruction with two outputs, exactly one of which is better (the
human-verified gold label); a judge ("evaluator") says which one it prefers. In bayesjudge's
terms the truth is Z = 1 when output 1 is the better one (``human == 1``) and the verdict is
Ẑ = 1 when the judge picks output 1 (``judge == "1"``), so θ is the share of items whose first
output is better and q0, q1 are the judge's specificity and sensitivity for "output 1 is
better".

:func:`split_calibration` draws a random calibration/test split of the items and
:func:`llmbar_counts` turns one prompting strategy's verdicts into
:class:`~bayesjudge.JudgeCounts` with the judges as systems and the subsets (or which output
is longer) as strata.
"""

from __future__ import annotations

import contextlib
import os
import warnings
import zlib
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from bayesjudge.data import JudgeCounts
from bayesjudge.warnings import MissingLabelWarning

__all__ = [
    "DATA_ENV",
    "LLMBAR_FILES",
    "PACKAGED_DATA",
    "llmbar_counts",
    "load_llmbar",
    "missing_verdicts",
    "split_calibration",
]

#: Environment variable naming a folder that holds the LLMBar tables (overrides the shipped ones).
DATA_ENV = "BAYESJUDGE_DATA"
#: The two files :func:`load_llmbar` reads from the data folder.
LLMBAR_FILES = {"verdicts": "llmbar_verdicts.csv.gz", "items": "llmbar_items.csv.gz"}
#: The package-data folder (inside ``bayesjudge``) that ships the LLMBar tables and their licence.
PACKAGED_DATA = "_datasets"

_VERDICT_COLUMNS = ("subset", "item", "human", "evaluator", "strategy", "swap", "judge")
_ITEM_COLUMNS = ("subset", "item", "human", "input_chars", "output_1_chars", "output_2_chars")
_KEY = ["subset", "item", "evaluator", "strategy", "swap"]
_COLUMNS = [
    "subset", "item", "evaluator", "strategy", "swap", "human", "judge",
    "input_chars", "output_1_chars", "output_2_chars", "longer",
]  # fmt: skip


# --------------------------------------------------------------------------- reading


def _check_folder(folder: Path, origin: str) -> Path:
    """Return ``folder`` if it holds both tables; a FileNotFoundError naming ``origin`` if not."""
    if folder.is_file() and folder.name in LLMBAR_FILES.values():
        folder = folder.parent
    if folder.exists() and not folder.is_dir():
        raise FileNotFoundError(
            f"LLMBar data path {str(folder)!r} (from {origin}) is a file, not a folder. Pass "
            f"the folder holding {LLMBAR_FILES['verdicts']} and {LLMBAR_FILES['items']} (or "
            f"one of those two files) as path=... or set {DATA_ENV} to it."
        )
    if not folder.is_dir():
        raise FileNotFoundError(
            f"LLMBar data folder {str(folder)!r} (from {origin}) does not exist. Pass the "
            f"folder holding {LLMBAR_FILES['verdicts']} and {LLMBAR_FILES['items']} as path=... "
            f"or set {DATA_ENV} to it."
        )
    missing = [name for name in LLMBAR_FILES.values() if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"LLMBar data folder {str(folder)!r} (from {origin}) lacks {', '.join(missing)}. "
            f"It must hold {LLMBAR_FILES['verdicts']} and {LLMBAR_FILES['items']}; pass the "
            f"right folder as path=... or set {DATA_ENV} to it."
        )
    return folder


@contextlib.contextmanager
def _data_folder(path) -> Iterator[Path]:
    """Yield the folder to read: ``path``, else ``$BAYESJUDGE_DATA``, else the shipped copy.

    The shipped copy is located with :mod:`importlib.resources`; from an installed wheel or
    a source checkout it is the package's own folder (no copy is made).
    """
    if path is not None:
        yield _check_folder(Path(path).expanduser(), f"path={str(path)!r}")
        return
    env = os.environ.get(DATA_ENV, "").strip()
    if env:
        yield _check_folder(Path(env).expanduser(), f"{DATA_ENV}={env!r}")
        return
    packaged = resources.files("bayesjudge").joinpath(PACKAGED_DATA)
    with resources.as_file(packaged) as folder:
        yield _check_folder(
            Path(folder),
            f"the copy shipped with bayesjudge; reinstall bayesjudge, or pass path=... or set "
            f"{DATA_ENV}",
        )


def _read(file: Path, columns: Sequence[str]) -> pd.DataFrame:
    try:
        frame = pd.read_csv(
            file, dtype=str, keep_default_na=False, na_values=[], compression="gzip"
        )
    except pd.errors.EmptyDataError:
        raise ValueError(
            f"{file}: the file is empty, or holds an empty table once decompressed; it must be "
            f"a gzip'd CSV with the columns {list(columns)}. Replace it with a complete copy."
        ) from None
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, pd.errors.ParserError) as err:
        raise ValueError(
            f"{file}: cannot be read as a gzip'd CSV table ({type(err).__name__}: {err}); "
            "the file is damaged or not gzip'd. Replace it with a complete copy."
        ) from None
    absent = [c for c in columns if c not in frame.columns]
    if absent:
        raise ValueError(
            f"{file.name}: missing column(s) {absent}; it has {list(frame.columns)}, "
            f"needs {list(columns)}."
        )
    if frame.empty:
        raise ValueError(
            f"{file}: the table has a header but no data rows; replace the file with a "
            "complete copy."
        )
    return frame[list(columns)].apply(lambda col: col.str.strip())


def _bad_values(file: Path, column: str, values: pd.Series, allowed: str) -> ValueError:
    counts = values.value_counts()
    shown = ", ".join(f"{v!r} ({c} rows)" for v, c in counts.head(5).items())
    more = f" and {len(counts) - 5} more" if len(counts) > 5 else ""
    return ValueError(f"{file.name}: column {column!r} must hold {allowed}; found {shown}{more}.")


def _whole(file: Path, frame: pd.DataFrame, column: str) -> pd.Series:
    text = frame[column]
    ok = text.str.fullmatch(r"\d+")
    if not ok.all():
        raise _bad_values(file, column, text[~ok], "non-negative whole numbers")
    return text.astype(np.int64)


def _choice(file: Path, frame: pd.DataFrame, column: str, mapping: dict) -> pd.Series:
    text = frame[column]
    ok = text.isin(list(mapping))
    if not ok.all():
        allowed = " or ".join(repr(v) if v else "empty" for v in mapping)
        raise _bad_values(file, column, text[~ok], allowed)
    return text.map(mapping)


def _non_empty(file: Path, frame: pd.DataFrame, column: str) -> None:
    empty = frame[column] == ""
    if empty.any():
        raise ValueError(
            f"{file.name}: column {column!r} is empty in {int(empty.sum())} row(s) (first at "
            f"data row {int(np.flatnonzero(empty.to_numpy())[0]) + 1}); every row needs it."
        )


def _selection(name: str, value, available: Sequence) -> list | None:
    if value is None:
        return None
    chosen = [value] if isinstance(value, str | bool | np.bool_) else list(value)
    if not chosen:
        raise ValueError(f"{name} must name at least one value; got {value!r}.")
    unknown = [v for v in chosen if v not in set(available)]
    if unknown:
        raise ValueError(
            f"{name}: unknown value(s) {unknown}; the data have {sorted(available, key=str)}."
        )
    return chosen


def missing_verdicts(frame: pd.DataFrame, by: Sequence[str] = ("evaluator", "strategy")):
    """Count the rows of a :func:`load_llmbar` frame whose verdict is missing, by group.

    Parameters
    ----------
    frame : pandas.DataFrame
        A frame from :func:`load_llmbar` (column ``judge`` missing where the judge's answer
        could not be parsed).
    by : sequence of str, default ("evaluator", "strategy")
        Columns to group by.

    Returns
    -------
    pandas.Series
        Missing verdicts per group (groups without any are left out), named ``"missing"``.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"evaluator": ["a", "a", "b"], "strategy": ["s", "s", "s"],
    ...                       "judge": pd.array([True, None, None], dtype="boolean")})
    >>> missing_verdicts(frame).to_dict()
    {('a', 's'): 1, ('b', 's'): 1}
    """
    by = list(by)
    missing = frame[frame["judge"].isna()]
    out = missing.groupby(by, observed=True, sort=True).size().rename("missing")
    return out.astype(np.int64)


def load_llmbar(
    path=None,
    *,
    evaluator: str | Sequence[str] | None = None,
    strategy: str | Sequence[str] | None = None,
    subset: str | Sequence[str] | None = None,
    swap: bool | None = None,
    warn: bool = True,
) -> pd.DataFrame:
    r"""Load the LLMBar judge verdicts as an item-level frame in bayesjudge's vocabulary.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        The folder holding ``llmbar_verdicts.csv.gz`` and ``llmbar_items.csv.gz`` (or one of
        those files), to read another copy of the tables. Default: the folder named by the
        ``BAYESJUDGE_DATA`` environment variable if it is set, else the copy shipped with
        bayesjudge (package data, see Notes).
    evaluator, strategy, subset : str or sequence of str, optional
        Keep only these judges (``"GPT-4"``, ``"ChatGPT"``, ...), prompting strategies
        (``"Vanilla_NoRules"``, ...) and LLMBar subsets (``"LLMBar/Natural"``, ...). Unknown
        names raise a ValueError listing the available ones.
    swap : bool, optional
        Keep only the verdicts with the outputs shown in the original order (``False``) or
        swapped (``True``; the verdict is already mapped back to the original numbering).
    warn : bool, default True
        Emit a :class:`~bayesjudge.MissingLabelWarning` when the selection holds unparsed
        verdicts. They are kept as missing either way and counted in
        ``frame.attrs["missing_verdicts"]``.

    Returns
    -------
    pandas.DataFrame
        One row per (item, evaluator, strategy, swap), sorted by those columns, with columns
        ``subset``, ``item`` (index within the subset), ``evaluator``, ``strategy``, ``swap``
        (bool), ``human`` (bool: True when output 1 is the better one, Z = 1), ``judge``
        (pandas ``"boolean"``: True when the judge picked output 1, missing where its answer
        could not be parsed), ``input_chars``, ``output_1_chars``, ``output_2_chars`` (from
        the items table) and ``longer`` (``"output_1"``, ``"output_2"`` or ``"tie"``: which
        output has more characters). ``frame.attrs`` holds ``missing_verdicts`` (a dict
        ``{"evaluator/strategy": count}`` of the unparsed verdicts in the selection),
        ``source`` (the folder read) and ``rows_read``.

    Raises
    ------
    FileNotFoundError
        If the folder given (``path`` or ``BAYESJUDGE_DATA``) or one of its two files is
        missing; the message says where it looked and where the folder came from.
    ValueError
        If a file is empty, damaged or not gzip'd (the message names the file), a column is
        missing or holds bad values (the message names the column and the values), a verdict
        row repeats, an item of the verdicts is not in the items table, the two tables
        disagree on an item's gold label, or a selection names unknown values.

    Warns
    -----
    MissingLabelWarning
        When the selection has unparsed verdicts (with ``warn=True``); the message gives
        their count per evaluator and strategy.

    Notes
    -----
    The full tables have 80,826 verdict rows on 1,200 items; 348 verdicts are missing. They
    ship with bayesjudge as package data in ``bayesjudge/_datasets``, beside a README (columns,
    source: github.com/princeton-nlp/LLMBar at commit 900616b) and the source's MIT licence
    notice (``LICENSE``), which must accompany any copy of the tables.

    Examples
    --------
    The shipped tables (``warn=False``: the 348 unparsed verdicts are counted in ``attrs``):

    >>> import bayesjudge as bj
    >>> frame = bj.datasets.load_llmbar(warn=False)
    >>> len(frame), sum(frame.attrs["missing_verdicts"].values())
    (80826, 348)
    >>> len(frame.drop_duplicates(["subset", "item"])), frame["evaluator"].nunique()
    (1200, 6)

    Two tiny tables in the LLMBar layout, read from their folder:

    >>> import gzip, tempfile, warnings
    >>> from pathlib import Path
    >>> from bayesjudge.datasets import load_llmbar
    >>> folder = Path(tempfile.mkdtemp())
    >>> with gzip.open(folder / "llmbar_verdicts.csv.gz", "wt") as fh:
    ...     _ = fh.write("subset,item,human,evaluator,strategy,swap,judge\n"
    ...                  "S,0,1,GPT-4,Vanilla,False,1\nS,1,2,GPT-4,Vanilla,False,\n")
    >>> with gzip.open(folder / "llmbar_items.csv.gz", "wt") as fh:
    ...     _ = fh.write("subset,item,human,input_chars,output_1_chars,output_2_chars\n"
    ...                  "S,0,1,10,120,80\nS,1,2,10,50,90\n")
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     frame = load_llmbar(folder)
    >>> frame[["item", "human", "judge", "longer"]]
       item  human  judge    longer
    0     0   True   True  output_1
    1     1  False   <NA>  output_2
    >>> frame.attrs["missing_verdicts"], caught[0].category.__name__
    ({'GPT-4/Vanilla': 1}, 'MissingLabelWarning')
    """
    with _data_folder(path) as folder:
        v_file, i_file = (folder / LLMBAR_FILES[k] for k in ("verdicts", "items"))
        verdicts = _read(v_file, _VERDICT_COLUMNS)
        items = _read(i_file, _ITEM_COLUMNS)
    rows_read = len(verdicts)
    for column in ("subset", "evaluator", "strategy"):
        _non_empty(v_file, verdicts, column)
    _non_empty(i_file, items, "subset")
    _parse_verdicts(v_file, verdicts)
    _parse_items(i_file, items)
    _check_unique(v_file, verdicts, _KEY)
    _check_unique(i_file, items, ["subset", "item"])
    merged = _join_items(v_file, verdicts, i_file, items)
    merged = _select(merged, evaluator=evaluator, strategy=strategy, subset=subset, swap=swap)
    frame = merged[_COLUMNS].sort_values(_KEY, kind="stable").reset_index(drop=True)
    missing = missing_verdicts(frame)
    frame.attrs = {
        "missing_verdicts": {f"{e}/{s}": int(c) for (e, s), c in missing.items()},
        "source": str(folder),
        "rows_read": int(rows_read),
    }
    if warn and len(missing):
        parts = ", ".join(f"{e} {s}: {c}" for (e, s), c in missing.items())
        warnings.warn(
            f"{int(missing.sum())} of {len(frame)} LLMBar verdicts could not be parsed and are "
            f"missing (judge is <NA>; by evaluator and strategy: {parts}). They are kept in "
            "the frame; counts drop them, which assumes they are missing at random. See "
            "frame.attrs['missing_verdicts'].",
            MissingLabelWarning,
            stacklevel=2,
        )
    return frame


def _parse_verdicts(file: Path, verdicts: pd.DataFrame) -> None:
    """Check and convert the verdicts table's columns in place (bool human, swap, judge)."""
    verdicts["item"] = _whole(file, verdicts, "item")
    verdicts["human"] = _choice(file, verdicts, "human", {"1": True, "2": False})
    verdicts["swap"] = _choice(
        file, verdicts, "swap", {"False": False, "True": True, "false": False, "true": True}
    )
    judge = _choice(file, verdicts, "judge", {"1": True, "2": False, "": None})
    verdicts["judge"] = pd.array(judge.to_list(), dtype="boolean")


def _parse_items(file: Path, items: pd.DataFrame) -> None:
    """Check and convert the items table's columns in place (bool human, whole lengths)."""
    items["item"] = _whole(file, items, "item")
    items["human"] = _choice(file, items, "human", {"1": True, "2": False})
    for column in ("input_chars", "output_1_chars", "output_2_chars"):
        items[column] = _whole(file, items, column)


def _check_unique(file: Path, frame: pd.DataFrame, key: list[str]) -> None:
    """Refuse rows that repeat a key."""
    repeated = frame.duplicated(key, keep=False)
    if repeated.any():
        first = frame.loc[repeated, key].iloc[0].to_dict()
        raise ValueError(
            f"{file.name}: {int(repeated.sum())} rows repeat a key {key} (e.g. {first}); "
            "each key must appear once."
        )


def _join_items(
    v_file: Path, verdicts: pd.DataFrame, i_file: Path, items: pd.DataFrame
) -> pd.DataFrame:
    """Join the items' lengths to the verdicts, checking the gold labels agree; add longer."""
    merged = verdicts.merge(
        items, on=["subset", "item"], how="left", suffixes=("", "_items"), indicator=True
    )
    orphan = merged["_merge"] == "left_only"
    if orphan.any():
        pairs = merged.loc[orphan, ["subset", "item"]].drop_duplicates()
        raise ValueError(
            f"{v_file.name}: {len(pairs)} item(s) are not in {i_file.name} (e.g. "
            f"{pairs.iloc[0].to_dict()}); join on (subset, item) failed."
        )
    disagree = merged["human"] != merged["human_items"]
    if disagree.any():
        pairs = merged.loc[disagree, ["subset", "item"]].drop_duplicates()
        raise ValueError(
            f"{v_file.name} and {i_file.name} disagree on the gold label 'human' of "
            f"{len(pairs)} item(s) (e.g. {pairs.iloc[0].to_dict()})."
        )
    merged["longer"] = np.select(
        [merged["output_1_chars"] > merged["output_2_chars"],
         merged["output_1_chars"] < merged["output_2_chars"]],
        ["output_1", "output_2"],
        "tie",
    )  # fmt: skip
    return merged


def _select(merged: pd.DataFrame, *, evaluator, strategy, subset, swap) -> pd.DataFrame:
    """Keep the selected evaluators, strategies, subsets and swap; refuse an empty result."""
    # Names are checked against the whole table (a subset the chosen judge lacks is not
    # "unknown"); an empty combination is reported below.
    chosen = {
        name: _selection(name, value, merged[name].unique().tolist())
        for name, value in (("evaluator", evaluator), ("strategy", strategy), ("subset", subset))
    }
    for name, values in chosen.items():
        if values is not None:
            merged = merged[merged[name].isin(values)]
    if swap is not None:
        if not isinstance(swap, bool | np.bool_):
            raise ValueError(f"swap must be True, False or None; got {swap!r}.")
        merged = merged[merged["swap"] == bool(swap)]
    if merged.empty:
        raise ValueError(
            f"no verdicts for evaluator={evaluator!r}, strategy={strategy!r}, "
            f"subset={subset!r}, swap={swap!r} together; the data lack that combination."
        )
    return merged


# --------------------------------------------------------------------------- splitting


def _single(frame: pd.DataFrame, column: str) -> None:
    values = frame[column].unique()
    if len(values) > 1:
        raise ValueError(
            f"the frame mixes several {column} values {sorted(values.tolist(), key=str)}; "
            f"select one (e.g. load_llmbar(..., {column}=...)) so that every item has one "
            "verdict per judge."
        )


def split_calibration(
    frame: pd.DataFrame,
    *,
    share: float = 0.5,
    by: str = "subset",
    random_seed=None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Split the items of a :func:`load_llmbar` frame at random into test and calibration.

    Items (not rows) are split: all judges' verdicts on an item go to the same side, as when a
    human labels a random set of items once and every judge is calibrated on them. Within each
    group of ``by``, ``round(share × N)`` of its ``N`` items are drawn without replacement for
    calibration (at least one, and at least one left for test when N ≥ 2).

    Parameters
    ----------
    frame : pandas.DataFrame
        From :func:`load_llmbar` (columns ``subset``, ``item`` and ``by``).
    share : float, default 0.5
        Share of each group's items used for calibration, in (0, 1).
    by : str, default "subset"
        Column whose groups are split separately (``"subset"`` or ``"longer"``).
    random_seed : int or numpy.random.Generator, optional
        Seed of the split.

    Returns
    -------
    (test, calibration) : tuple of pandas.DataFrame
        The rows of the test items and of the calibration items.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"subset": ["a"] * 4, "item": [0, 1, 2, 3],
    ...                       "human": [True, False, True, False],
    ...                       "judge": [True, False, False, False]})
    >>> test, calib = split_calibration(frame, share=0.5, random_seed=1)
    >>> len(test), len(calib), sorted(set(test["item"]) | set(calib["item"]))
    (2, 2, [0, 1, 2, 3])
    """
    share = float(share)
    if not 0 < share < 1:
        raise ValueError(f"share must lie in (0, 1); got {share!r}.")
    for column in ("subset", "item", by):
        if column not in frame.columns:
            raise ValueError(f"frame lacks column {column!r}; it has {list(frame.columns)}.")
    rng = np.random.default_rng(random_seed)
    columns = list(dict.fromkeys(["subset", "item", by]))
    items = frame[columns].drop_duplicates(["subset", "item"])
    if len(items) != len(frame[columns].drop_duplicates()):
        raise ValueError(f"column {by!r} must be constant within each item.")
    chosen = []
    for _, group in items.sort_values(["subset", "item"]).groupby(by, sort=True):
        size = len(group)
        m = min(max(round(share * size), 1), max(size - 1, 1))
        pick = rng.choice(size, size=m, replace=False)
        chosen.append(group.iloc[np.sort(pick)][["subset", "item"]])
    calib_items = pd.concat(chosen)
    key = pd.MultiIndex.from_frame(frame[["subset", "item"]])
    in_calib = key.isin(pd.MultiIndex.from_frame(calib_items))
    return frame[~in_calib].copy(), frame[in_calib].copy()


def llmbar_counts(
    frame: pd.DataFrame,
    *,
    stratum: str = "subset",
    share: float = 0.5,
    random_seed=None,
    design: str = "random",
):
    """Count one strategy's LLMBar verdicts: judges as systems, ``stratum`` as strata.

    Splits the items at random (:func:`split_calibration`, separately within each stratum)
    and counts them with :meth:`bayesjudge.JudgeCounts.from_frames`. Unparsed verdicts are
    left out of the counts of their judge (a :class:`~bayesjudge.MissingLabelWarning` says
    how many). The labelled ("calibration") items are a random subset of each stratum's
    items, not chosen by their gold label, so the counts carry the random labelling design
    (``design="random"``; each item is counted once, the labelled ones only in m0, tn, m1,
    tp); see ``docs/labelling-design.md``.

    Parameters
    ----------
    frame : pandas.DataFrame
        From :func:`load_llmbar`, with one strategy and one ``swap`` value.
    stratum : str, default "subset"
        Column defining the strata (``"subset"`` or ``"longer"``).
    share : float, default 0.5
        Share of each stratum's items used for calibration.
    random_seed : int or numpy.random.Generator, optional
        Seed of the split.
    design : {"random", "stratified"}, default "random"
        The labelling design the counts declare. ``"random"`` is the design of this split;
        ``"stratified"`` declares it stratified (m0, m1 treated as fixed by design), which
        ignores the information in the labelled items' gold labels: valid, but wider.

    Returns
    -------
    JudgeCounts
        Dims (system, stratum): systems are the evaluators; ``counts.design`` is ``design``.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"subset": ["a"] * 4, "item": [0, 1, 2, 3],
    ...                       "evaluator": "J", "strategy": "s", "swap": False,
    ...                       "human": [True, False, True, False],
    ...                       "judge": pd.array([True, False, True, True], dtype="boolean")})
    >>> counts = llmbar_counts(frame, random_seed=0)
    >>> int(counts.n.sum() + counts.m0.sum() + counts.m1.sum()), counts.design
    (4, 'random')
    """
    for column in ("strategy", "swap"):
        if column in frame.columns:
            _single(frame, column)
    test, calib = split_calibration(frame, share=share, by=stratum, random_seed=random_seed)
    columns = ["evaluator", stratum, "judge", "human"]
    return JudgeCounts.from_frames(
        test[columns].astype({"judge": "object"}).replace({pd.NA: None}),
        calib[columns].astype({"judge": "object"}).replace({pd.NA: None}),
        system="evaluator",
        stratum=stratum,
        design=design,
    )
