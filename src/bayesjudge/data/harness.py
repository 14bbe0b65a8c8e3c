"""Reading evaluation-harness logs: Inspect AI, lm-evaluation-harness, JSON Lines; gold files.

Judge verdicts rarely start as a tidy CSV file: they sit in an Inspect AI log (``.eval`` or
``.json``), in lm-evaluation-harness's per-sample output (``--log_samples``:
``samples_<task>_<date>.jsonl``) or in a JSON Lines export, and the human labels in a separate
gold file. :func:`read_table` reads each of them with the harness's own reader where it has
one (``inspect_ai.log``) into one tidy table, one row per verdict: ``item`` (text), ``system``
(text), ``judge`` (the verdict as the log has it), ``epoch`` (1-based; 1 where the harness has
none) and the name of the scorer or metric the verdict came from. :func:`join_gold` joins the
human labels of a gold file by item id, for either labelling design. The optional libraries
are imported only by the reader that needs them (``pip install 'bayesjudge[inspect]'``,
``'bayesjudge[lm-eval]'``).
"""

from __future__ import annotations

import codecs
import importlib
import json
import mmap
import re
import unicodedata
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from bayesjudge._text import terminal_safe
from bayesjudge.data._common import MAX_GROUPS_SHOWN, is_blank, rows_text
from bayesjudge.data.labels import classify, normalise
from bayesjudge.data.reading import as_frame
from bayesjudge.warnings import BayesJudgeWarning, MissingLabelWarning

__all__ = ["FORMATS", "GoldJoin", "check_gold_labels", "join_gold", "read_gold", "read_table"]

#: The formats :func:`read_table` reads (``format=``).
FORMATS = ("inspect", "lm-eval", "jsonl", "csv", "parquet")
#: The formats whose rows are one verdict each, in the tidy columns below.
HARNESS_FORMATS = ("inspect", "lm-eval", "jsonl")
#: The tidy columns of a harness log, in order.
TIDY = ("item", "system", "judge", "epoch")
#: Inspect's own score values of a model-graded scorer (``inspect_ai.scorer.CORRECT`` ...).
INSPECT_CORRECT, INSPECT_INCORRECT = "C", "I"
_BINARY = frozenset({0, 1})
_SUFFIXES = {
    ".eval": "inspect",
    ".json": "inspect",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".tsv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
}
_EXTRAS = {"inspect_ai": "inspect", "lm_eval": "lm-eval"}


def _shown(values: Iterable, limit: int = MAX_GROUPS_SHOWN) -> str:
    """Show values for a message, ``'a', 'b', … (3 more)`` (repr: newlines escaped)."""
    values = list(values)
    text = ", ".join(repr(v) for v in values[:limit])
    return text + (f", … ({len(values) - limit} more)" if len(values) > limit else "")


def _optional(module: str):
    """Import an optional harness library, or say which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        extra = _EXTRAS[module.split(".")[0]]
        raise ImportError(
            f"Reading this log needs the {module.split('.')[0]!r} package, which is not "
            f"installed. Install it with: pip install 'bayesjudge[{extra}]'"
        ) from None


def harness_format(path, format: str | None = None) -> str:
    """Return the format of ``path``: ``format`` if given, else from the suffix (and name).

    A ``.jsonl`` file whose first line has lm-eval's ``doc_id`` and ``metrics`` keys is an
    lm-eval sample file, and so is one named ``samples_*`` whose first line is not a JSON
    object (its reader names the line); any other ``.jsonl`` is generic JSON Lines, whatever
    its name (an export called ``samples_export.jsonl``).

    Examples
    --------
    >>> harness_format("run.eval"), harness_format("x.csv"), harness_format("x.txt", "jsonl")
    ('inspect', 'csv', 'jsonl')
    """
    if format is not None:
        if format not in FORMATS:
            raise ValueError(f"format must be one of {list(FORMATS)}; got {format!r}.")
        return format
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in _SUFFIXES:
        raise ValueError(
            f"Cannot tell the format of {terminal_safe(str(path))!r} from its suffix "
            f"{suffix!r}: pass format= (one of {list(FORMATS)}); known suffixes: "
            f"{sorted(_SUFFIXES)}."
        )
    found = _SUFFIXES[suffix]
    if found == "jsonl":
        looks = _looks_like_lm_eval(path)
        if looks or (looks is None and path.name.startswith("samples_")):
            return "lm-eval"
    return found


def _looks_like_lm_eval(path: Path) -> bool | None:
    """Whether the first line has lm-eval's keys; None where it is not a JSON object."""
    try:
        with path.open(encoding="utf-8-sig") as handle:
            first = json.loads(handle.readline() or "{}")
    except (OSError, ValueError):
        return None
    if not isinstance(first, dict):
        return None
    return "doc_id" in first and "metrics" in first


def read_table(
    path,
    *,
    format: str | None = None,
    scorer: str | None = None,
    metric: str | None = None,
    system: str | None = None,
    item: str = "item",
    judge: str = "judge",
    epoch: str | None = None,
) -> pd.DataFrame:
    r"""Read an evaluation log or item table into a pandas DataFrame, one row per verdict.

    Parameters
    ----------
    path : str or path-like
        The file: an Inspect AI log (``.eval``, or Inspect's ``.json``), an lm-evaluation-harness
        sample file (``samples_<task>_<date>.jsonl`` from ``--log_samples``), generic JSON Lines
        (``.jsonl``), CSV/TSV or Parquet.
    format : {"inspect", "lm-eval", "jsonl", "csv", "parquet"}, optional
        The format; default: from the suffix (see :func:`harness_format`).
    scorer : str, optional
        Inspect: the scorer whose values are the verdicts (e.g. ``"model_graded_qa"``); needed
        when the log has several.
    metric : str, optional
        lm-eval: the per-sample metric that is the verdict (e.g. ``"acc"``); needed when a
        sample has several. ``"exact_match,strict-match"`` also picks lm-eval's filter, needed
        when the file holds several filters.
    system : str, optional
        Inspect and lm-eval: the system's name, in place of the model the log names (lm-eval
        needs it when no ``results_*.json`` lies beside the sample file). JSON Lines: the
        column naming the system.
    item, judge, epoch : str, optional
        JSON Lines: the keys holding the item id (default ``"item"``), the verdict (default
        ``"judge"``) and the repeat number of an item (default: none, every row epoch 1).

    Returns
    -------
    pandas.DataFrame
        Harness logs: columns ``item`` (text: ``"007"`` and ``7`` stay two items), ``system``
        (text), ``judge`` (the verdict as the log has it, e.g. ``"C"``/``"I"`` or ``1.0``;
        missing where the log has none), ``epoch`` (int, 1-based), ``scorer`` (Inspect) or
        ``metric`` (lm-eval), and the samples' scalar metadata (Inspect) as further columns.
        CSV and Parquet: the table as :meth:`JudgeCounts.from_frames` reads it (CSV as text).
        ``attrs``: ``format``, ``source`` (the path), ``positive`` (the verdict meaning correct
        where the harness defines one: ``"C"`` for Inspect's CORRECT), ``unparsed`` (the
        rows whose verdict is missing or not a binary value, ``{"item (epoch e)": value}``) and,
        for JSON Lines, ``keys`` (the file's keys of ``item``, ``judge``, ``system`` and
        ``epoch``, which :func:`join_gold` also looks for in a gold file).

    Raises
    ------
    ValueError
        An empty log, a log without verdicts, several scorers or metrics and none chosen (the
        message lists them), a chosen one the log lacks, an item id that repeats within an
        epoch, ids whose text forms collide (``7`` and ``"7"``), lines that are not JSON.
    ImportError
        The harness's library is not installed (the message names the extra to install).

    Warns
    -----
    MissingLabelWarning
        Not raised here: rows without a verdict stay in the table (``judge`` missing), listed in
        ``attrs["unparsed"]``; counting them warns and leaves them out.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> lines = [{"id": "007", "verdict": "yes"}, {"id": 7, "verdict": "no"}]
    >>> _ = (folder / "v.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    >>> table = read_table(folder / "v.jsonl", item="id", judge="verdict")
    >>> table[["item", "judge", "epoch"]].values.tolist()
    [['007', 'yes', 1], ['7', 'no', 1]]
    """
    path = Path(path)
    if not path.is_file():
        what = "a folder, not a file" if path.is_dir() else "not an existing file"
        raise FileNotFoundError(f"{terminal_safe(str(path))!r} is {what}; give the log file.")
    kind = harness_format(path, format)
    if kind == "inspect":
        frame = _read_inspect(path, scorer, system)
    elif kind == "lm-eval":
        frame = _read_lm_eval(path, metric, system)
    elif kind == "jsonl":
        frame = _read_jsonl(path, item=item, judge=judge, system=system, epoch=epoch)
        frame.attrs["keys"] = {"item": item, "judge": judge, "system": system, "epoch": epoch}
    else:
        frame = as_frame(path, "test").collect().to_pandas()
        frame.attrs.update(format=kind, source=str(path))
        return frame
    frame.attrs.update(format=kind, source=str(path))
    frame.attrs["unparsed"] = _unparsed(frame)
    return frame


def _unparsed(frame: pd.DataFrame) -> dict[str, object]:
    """Find the rows whose verdict is missing or not binary: ``{"item (epoch e)": value}``.

    Each distinct verdict is classified once (a log holds a handful), then the rows are
    selected at once, so that a million rows cost a hash pass, not a Python loop.
    """
    positive = frame.attrs.get("positive")
    binary = {positive, INSPECT_INCORRECT} if positive is not None else set()
    judge = frame["judge"]
    missing = judge.isna().to_numpy()

    def ok(value) -> bool:
        if isinstance(value, bool | np.bool_):
            return True
        if isinstance(value, int | float | np.number):
            return value in _BINARY
        if isinstance(value, str):
            return value.strip() != "" and (value in binary or not binary)
        return False

    values = judge.to_numpy()
    try:
        # Numbers stay a numeric array (np.float64 is a float): a million need no boxing.
        bad_values = [v for v in pd.unique(values[~missing]) if not ok(v)]
        bad = missing | judge.isin(bad_values).to_numpy() if bad_values else missing
    except TypeError:  # an object or a list among the verdicts (not hashable): one by one
        bad = missing | np.fromiter((not ok(v) for v in values), dtype=bool, count=values.size)
    if not bad.any():
        return {}
    rows = frame.loc[bad, ["item", "epoch", "judge"]]
    return {
        f"{key} (epoch {epoch})": None if is_blank(value) else value
        for key, epoch, value in rows.itertuples(index=False)
    }


def _text_ids(ids, where: str, what: str = "item ids") -> np.ndarray:
    """Item ids as text (an object array), refusing ids of different types whose text collides.

    ``"007"`` and ``7`` stay two ids; ``7`` and ``"7"`` would become one, so they are an error.
    ``1``, ``1.0`` and ``True`` are three (``"1"``, ``"1.0"``, ``"True"``), never merged by
    equality. ``what`` names the values in the message (system names are read the same way).
    """
    values = np.asarray(ids, dtype=object) if not isinstance(ids, np.ndarray) else ids
    kind = pd.api.types.infer_dtype(values, skipna=False)
    if kind == "string":
        return values.astype(object)
    if kind == "integer":
        if values.dtype.kind == "i":
            return _int_text(values)
        # Python ints, some beyond 64 bits (JSON has no limit): an id is text, so no cast
        return np.array([str(v) for v in values], dtype=object)
    text = np.array([v if isinstance(v, str) else str(v) for v in values], dtype=object)
    seen: dict[str, object] = {}
    for raw, key in zip(values, text, strict=True):
        first = seen.setdefault(key, raw)
        if isinstance(first, str) != isinstance(raw, str):
            raise ValueError(
                f"{where}: the {what} {_plain(first)!r} and {_plain(raw)!r} are different "
                f"{what.split()[-1]} (a number and a text) with the same text form {key!r}; "
                f"bayesjudge keeps {what} as text, so they would merge into one. Write each "
                f"one way (all text or all numbers), or make them distinct."
            )
    return text


def _int_text(values: np.ndarray) -> np.ndarray:
    """Whole numbers as their decimal text (an object array), the same with or without pyarrow."""
    try:
        import pyarrow as pa
    except ImportError:
        return values.astype(str).astype(object)
    return pa.array(values, type=pa.int64()).cast(pa.string()).to_numpy(zero_copy_only=False)


def _check_unique(
    frame: pd.DataFrame, where: str, repeated: np.ndarray | None = None, fix: str | None = None
) -> None:
    """Refuse a (system, item, epoch) that repeats; ``repeated``: its rows, where known.

    ``fix`` says how to tell the rows apart (JSON Lines: the keys of the system and epoch).
    """
    if repeated is None:
        repeated = frame.duplicated(["system", "item", "epoch"], keep=False).to_numpy()
    if repeated.any():
        shown = _shown(sorted(set(frame.loc[repeated, "item"])))
        raise ValueError(
            f"{where}: item id(s) {shown} appear more than once within one system and epoch "
            f"({int(repeated.sum())} rows); each verdict needs its own (item, epoch). "
            + (
                fix
                or "Number the repeats with an epoch column (epoch=) or give the items "
                "distinct ids."
            )
        )


# --- Inspect AI -------------------------------------------------------------------------------


def _read_inspect(path: Path, scorer: str | None, system: str | None) -> pd.DataFrame:
    """Read an Inspect log with ``inspect_ai.log``: the header, then the sample summaries.

    The sample summaries carry each sample's scores without its messages and events, so the
    log's bulk is never parsed: 2.1 s against 32 s for ``read_eval_log(exclude_fields=...)``
    on a 2000-sample log (one loaded machine, 2026-11-27). Inspect shortens text metadata in
    the summaries (whitespace collapsed, cut at 1024 characters), so metadata columns are meant
    for short labels such as a stratum.
    """
    log = _optional("inspect_ai.log")
    where = f"The Inspect log {terminal_safe(str(path))!r}"
    try:
        header = log.read_eval_log(str(path), header_only=True)
        summaries = log.read_eval_log_sample_summaries(str(path))
    except (ValueError, KeyError, OSError) as err:
        raise ValueError(f"{where} cannot be read by inspect_ai.log: {err}") from None
    if not summaries:
        raise ValueError(
            f"{where} has no samples (status {header.status!r}); an evaluation that ran "
            f"nothing has no verdicts to count."
        )
    scorers = list(dict.fromkeys(name for s in summaries for name in (s.scores or {})))
    if not scorers:
        raise ValueError(
            f"{where} has {len(summaries)} samples but no scores (status {header.status!r}); "
            f"score it first (inspect score) or read a scored log."
        )
    if scorer is None:
        if len(scorers) > 1:
            raise ValueError(
                f"{where} has several scorers: {_shown(scorers, len(scorers))}; choose the one "
                f"whose values are the judge's verdicts with scorer= (--scorer on the command "
                f"line), e.g. scorer={scorers[0]!r}."
            )
        scorer = scorers[0]
    elif scorer not in scorers:
        raise ValueError(
            f"{where} has no scorer {scorer!r}; its scorers are {_shown(scorers, len(scorers))}."
        )
    name = header.eval.model if system is None else system
    ids = _text_ids([s.id for s in summaries], where)
    values = [
        _score_value(s.scores, scorer, where, key) for s, key in zip(summaries, ids, strict=True)
    ]
    frame = pd.DataFrame(
        {
            "item": pd.array(ids, dtype=object),
            "system": str(name),
            "judge": pd.array(values, dtype=object),
            "epoch": np.array([s.epoch for s in summaries], dtype=np.int64),
            "scorer": scorer,
        }
    )
    metadata = _metadata_columns([s.metadata for s in summaries], set(frame.columns))
    for column, column_values in metadata.items():
        frame[column] = column_values
    if {INSPECT_CORRECT, INSPECT_INCORRECT} & {v for v in values if isinstance(v, str)}:
        frame.attrs["positive"] = INSPECT_CORRECT  # Inspect's CORRECT; numeric scores need none
    _check_unique(frame, where)
    _warn_unfinished(header, len(summaries), where)
    frame.attrs["status"] = header.status
    return frame


def _warn_unfinished(header, samples: int, where: str) -> None:
    """Warn of a run that did not finish: which samples it judged is not a random choice."""
    if header.status in ("success", "started"):
        return  # "started": a log still being written, read on purpose
    dataset = getattr(getattr(header.eval, "dataset", None), "samples", None)
    epochs = getattr(getattr(header.eval, "config", None), "epochs", None) or 1
    planned = (
        f" of the {dataset} × {epochs} samples of its dataset" if isinstance(dataset, int) else ""
    )
    warnings.warn(
        f"{where} has status {header.status!r}: the run did not finish, and the log holds "
        f"{samples}{planned}. The estimate covers the samples judged, which an aborted or "
        f"failed run does not choose at random (a crash on hard items): finish the run "
        f"(inspect eval-retry) and read that log.",
        BayesJudgeWarning,
        stacklevel=4,
    )


def _score_value(scores, scorer: str, where: str, item: str):
    """Return the value of ``scorer`` for one sample: None where the sample has no score."""
    score = (scores or {}).get(scorer)
    if score is None:
        return None
    value = score.value
    if isinstance(value, dict | list):
        raise ValueError(
            f"{where}: scorer {scorer!r} gives item {item!r} the value {value!r}, not one "
            f"verdict; choose a scorer with one value per sample (scorer=)."
        )
    return value


def _metadata_columns(metadata: list, taken: set[str]) -> dict[str, list]:
    """Scalar metadata keys as columns (a key clashing with a tidy column gets ``metadata_``)."""
    keys = list(dict.fromkeys(k for m in metadata for k in (m or {})))
    out = {}
    for key in keys:
        values = [(m or {}).get(key) for m in metadata]
        if all(v is None or isinstance(v, str | int | float | bool) for v in values):
            column = key if key not in taken else f"metadata_{key}"
            out[column] = pd.array(values, dtype=object)
    return out


# --- lm-evaluation-harness ----------------------------------------------------------------------


def _read_lm_eval(path: Path, metric: str | None, system: str | None) -> pd.DataFrame:
    """Read lm-eval's ``--log_samples`` JSONL: one line per (doc_id, filter)."""
    where = f"The lm-eval sample file {terminal_safe(str(path))!r}"
    first = _first_record(path, where)
    if not {"doc_id", "metrics"} <= set(first):
        raise ValueError(
            f"{where} is not an lm-eval sample file: its first line has no 'doc_id' and "
            f"'metrics' keys (it has {_shown(first, 10)}). Read it as JSON Lines: "
            f"--test-format jsonl on the command line (format='jsonl' in Python)."
        )
    metrics = list(first["metrics"])
    wanted, _, wanted_filter = (metric or "").partition(",")
    if not wanted:
        if len(metrics) != 1:
            raise ValueError(
                f"{where} has several per-sample metrics: {_shown(metrics, len(metrics))}; "
                f"choose the verdict with metric= (--metric), e.g. metric={metrics[0]!r}."
            )
        wanted = metrics[0]
    elif wanted not in metrics:
        raise ValueError(
            f"{where} has no per-sample metric {wanted!r}; it has {_shown(metrics, len(metrics))}."
        )
    records = _records(path, ("doc_id", "filter", wanted), where, exact=("doc_id",))
    filters = list(dict.fromkeys(pd.unique(records["filter"]).tolist()))
    if wanted_filter:
        if wanted_filter not in filters:
            raise ValueError(
                f"{where} has no filter {wanted_filter!r}; it has {_shown(filters, len(filters))}."
            )
    elif len(filters) > 1:
        raise ValueError(
            f"{where} holds the metric {wanted!r} under several filters: "
            f"{_shown(filters, len(filters))}; choose one with metric='{wanted},<filter>', "
            f"e.g. metric='{wanted},{filters[0]}'."
        )
    else:
        wanted_filter = filters[0]
    keep = records["filter"] == wanted_filter
    doc_ids = records["doc_id"][keep]
    if doc_ids.dtype.kind != "i":
        if any(isinstance(v, bool) or not isinstance(v, int) for v in doc_ids):
            raise ValueError(
                f"{where}: every doc_id must be a whole number, as lm-eval writes it; got "
                f"{_shown([v for v in doc_ids if not isinstance(v, int)])}."
            )
        try:
            doc_ids = doc_ids.astype(np.int64)
        except OverflowError:
            pass  # a doc_id beyond 64 bits: kept as Python ints, written as their text
    name = system if system is not None else _lm_eval_model(path, where)
    frame = pd.DataFrame(
        {
            "item": _text_ids(doc_ids, where),
            "system": str(name),
            "judge": records[wanted][keep],
            "epoch": np.ones(int(keep.sum()), dtype=np.int64),
            "metric": f"{wanted},{wanted_filter}",
        }
    )
    # One system and epoch: a repeated doc_id is a repeated (system, item, epoch); ints hash
    # fast where the text ids would not.
    _check_unique(frame, where, pd.Series(doc_ids).duplicated(keep=False).to_numpy())
    return frame


def _lm_eval_model(path: Path, where: str) -> str:
    """Return the model name of the ``results_*.json`` beside an lm-eval sample file."""
    stamp = re.sub(r"^samples_.*_(?=[^_]+$)", "", path.stem)
    candidates = sorted(path.parent.glob(f"results_{stamp}.json")) or sorted(
        path.parent.glob("results_*.json")
    )
    names = set()
    for results in candidates:
        try:
            data = json.loads(results.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        name = data.get("model_name") or (data.get("config") or {}).get("model")
        if name:
            names.add(str(name))
    if len(names) == 1:
        return names.pop()
    found = (
        f"the results files beside it name {_shown(sorted(names))}"
        if names
        else ("no results_*.json beside it names the model")
    )
    raise ValueError(f"{where}: {found}; give the system's name with system= (--system).")


# --- JSON Lines ---------------------------------------------------------------------------------


def _lines(path: Path, where: str):
    """Yield ``(number, line)`` of a UTF-8 text file (Python's universal newlines).

    A byte order mark at the start (Windows tools write one) is dropped, as the CSV reader
    drops it; one anywhere else stays, and that line is not JSON.
    """
    try:
        with path.open(encoding="utf-8-sig") as handle:
            yield from enumerate(handle, start=1)
    except UnicodeDecodeError as err:
        raise ValueError(
            f"{where} is not UTF-8 text ({err}); JSON Lines are UTF-8: save the file as UTF-8."
        ) from None


def _first_record(path: Path, where: str) -> dict:
    for number, line in _lines(path, where):
        if line.strip():
            return _parse_line(line, number, where)
    raise ValueError(f"{where} is empty: it holds no JSON lines, so no verdicts.")


def _parse_line(line: str, number: int, where: str) -> dict:
    where = where[:1].lower() + where[1:]  # "The JSON Lines file ...", mid-sentence here
    try:
        record = json.loads(line)
    except ValueError as err:
        raise ValueError(f"Line {number} of {where} is not JSON ({err}); fix that line.") from None
    if not isinstance(record, dict):
        raise ValueError(
            f"Line {number} of {where} is {type(record).__name__}, not a JSON object "
            f'({{"key": value, ...}}); each line must be one record.'
        )
    return record


def _records(
    path: Path, keys: tuple[str | None, ...], where: str, exact: Iterable[str] = ()
) -> dict[str, np.ndarray]:
    """Return the values of ``keys`` in every line (None where a line lacks a key).

    pyarrow's multithreaded JSON reader reads the keys when it gives what the standard library
    would (:func:`_records_arrow` says when); otherwise, and without pyarrow, the standard
    library reads each line. Both give each key as the same numpy array (:func:`_column`).
    ``exact`` keys (ids, epochs) keep whole and decimal numbers apart: ``7`` is not ``7.0``.
    """
    keys = tuple(k for k in dict.fromkeys(keys) if k is not None)
    exact = frozenset(exact)
    fast = _records_arrow(path, keys, exact)
    if fast is not None:
        return fast
    out: dict[str, list] = {k: [] for k in keys}
    for number, line in _lines(path, where):
        if not line.strip():
            continue
        record = _parse_line(line, number, where)
        for key in keys:
            out[key].append(record.get(key))
    return {key: _column(values, key in exact) for key, values in out.items()}


def _object_array(values: list) -> np.ndarray:
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


def _column(values: list, exact: bool = False) -> np.ndarray:
    """One key's values as the array both parsers give.

    int64 for whole numbers, float64 for numbers with a decimal one among them (not for
    ``exact`` keys: ids and epochs keep ``7`` and ``7.0`` apart), else objects: text,
    booleans, None for a missing value (never NaN).
    """
    types = set(map(type, values))
    if types == {int}:
        try:
            return np.array(values, dtype=np.int64)
        except OverflowError:
            pass  # beyond 64 bits: kept as Python ints
    elif not exact and types in ({float}, {int, float}):
        return np.array(values, dtype=np.float64)
    elif not exact and types == {int, float, type(None)}:
        values = [float(v) if type(v) is int else v for v in values]
    return _object_array(values)


def _records_arrow(
    path: Path, keys: tuple[str, ...], exact: frozenset = frozenset()
) -> dict[str, np.ndarray] | None:
    """Read ``keys`` with pyarrow's JSON reader, or None where the standard library must.

    Only the keys are materialised (``explicit_schema``, other fields ignored), each typed by
    its first value that is not null (:func:`_first_values`). pyarrow is more lenient than
    ``json.loads`` line by line in three ways, each checked so that it never accepts a file
    the exact path refuses or reads it differently: it takes several objects on one line or
    one object over several lines (:func:`_one_per_line`), it does not check the UTF-8 of the
    fields it skips (checked there too), and it reads a key whose first value is a decimal
    number as float throughout (refused for ``exact`` keys; :func:`_column` does the same to
    the exact path's numbers). A missing value stays None, as in the exact path.
    Any key whose type changes, any line that is not JSON: None.
    """
    try:
        import pyarrow as pa
        from pyarrow import json as pa_json
    except ImportError:
        return None
    first = _first_values(path, keys)
    fields = []
    for key in keys:
        value = first.get(key)
        if isinstance(value, bool):
            kind = pa.bool_()
        elif isinstance(value, int):
            kind = pa.int64()
        elif isinstance(value, float) and key not in exact:
            kind = pa.float64()
        elif isinstance(value, str):
            kind = pa.string()
        else:
            return None  # no value, a list or an object: the exact path decides
        fields.append(pa.field(key, kind))
    options = pa_json.ParseOptions(
        explicit_schema=pa.schema(fields), unexpected_field_behavior="ignore"
    )
    try:
        table = pa_json.read_json(
            str(path),
            read_options=pa_json.ReadOptions(block_size=1 << 24),
            parse_options=options,
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None  # a key changes type, a line is not JSON, ...: the exact path says which
    if not _one_per_line(path, table.num_rows):
        return None
    out = {}
    for key in keys:
        column = table.column(key)
        if column.null_count or pa.types.is_boolean(column.type):
            out[key] = _column(column.to_pylist(), key in exact)  # None stays None, bools bools
        elif pa.types.is_string(column.type):
            out[key] = column.to_numpy(zero_copy_only=False).astype(object)
        else:
            out[key] = column.to_numpy()
    return out


def _first_values(path: Path, keys: tuple[str, ...], lines: int = 1000) -> dict:
    """Return each key's first value that is not null, within the first ``lines`` records.

    A line that is not a JSON object gives ``{}``: the exact path then says which line it is.
    """
    found = {}
    try:
        for number, line in _lines(path, ""):
            if line.strip():
                record = _parse_line(line, number, "")
                found.update(
                    (k, record[k]) for k in keys if k not in found and record.get(k) is not None
                )
            if len(found) == len(keys) or number >= lines:
                break
    except ValueError:
        return {}
    return found


def _one_per_line(path: Path, records: int) -> bool:
    """Whether ``path`` is ``records`` lines of one JSON object each, in valid UTF-8.

    Given that pyarrow parsed the file into ``records`` objects, this holds when every line
    break sits between a ``}`` and a ``{`` (inside an object or array a ``}`` is followed by
    ``,``, ``}`` or ``]``, and a string holds no raw line break, so such a break is between two
    objects), no carriage return stands alone (Python's text mode would end a line there) and
    the count of lines is ``records``. Blank lines or spaces around an object fail it too, and
    the file goes to the exact path. A vectorised pass over the bytes: no Python loop per line.
    """
    if path.stat().st_size == 0:
        return False
    with path.open("rb") as handle:
        try:
            mm = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return False  # a file system without memory maps: the exact path reads it
        with mm:
            data = np.frombuffer(mm, dtype=np.uint8)
            try:
                return _line_shape(data, records)
            finally:
                del data  # the map closes only once no array views it


def _line_shape(data: np.ndarray, records: int, block: int = 1 << 24) -> bool:
    """:func:`_one_per_line` on the file's bytes, scanned in blocks of ``block`` bytes."""
    breaks, returns = [], 0
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for start in range(0, data.size, block):
            part = data[start : start + block]
            low = np.flatnonzero(part <= 13)  # one pass finds both LF (10) and CR (13)
            kinds = part[low]
            breaks.append(low[kinds == 10] + start)
            returns += int(np.count_nonzero(kinds == 13))
            if part.max() >= 0x80 or decoder.getstate()[0]:
                decoder.decode(part.tobytes())  # only text beyond ASCII needs the check
        decoder.decode(b"", True)
    except UnicodeDecodeError:
        return False
    breaks = np.concatenate(breaks)
    first, last = int(data[0]), int(data[-1])
    if first != ord("{") or last not in (10, ord("}")) or records != breaks.size + (last != 10):
        return False
    if not breaks.size:
        return returns == 0
    before = data[breaks - 1]  # breaks > 0: the file starts with "{"
    crlf = before == 13
    closing = np.where(crlf, data[breaks - 2], before)
    inner = breaks[:-1] if last == 10 else breaks
    return (
        returns == int(crlf.sum())
        and bool((closing == ord("}")).all())
        and bool((data[inner + 1] == ord("{")).all())
    )


def _read_jsonl(path: Path, *, item: str, judge: str, system, epoch) -> pd.DataFrame:
    """Read generic JSON Lines: one record per verdict, the columns named by the options."""
    where = f"The JSON Lines file {terminal_safe(str(path))!r}"
    first = _first_record(path, where)
    absent = [
        f"{option}={key!r}"
        for option, key in (("item", item), ("judge", judge), ("system", system), ("epoch", epoch))
        if key is not None and key not in first
    ]
    if absent:
        raise ValueError(
            f"{where}: its first record has no key for {', '.join(absent)}; its keys are "
            f"{_shown(first, 20)}. Name the keys with item=, judge=, system= and epoch= "
            f"(--item, --judge, --system on the command line)."
        )
    records = _records(path, (item, judge, system, epoch), where, exact=(item, system, epoch))
    ids = records[item]
    _refuse_nested_verdicts(records[judge], ids, judge, where, path)
    for key in (item, system):
        values = records[key] if key is not None else None
        if values is not None and values.dtype == object:
            missing = np.flatnonzero(pd.isna(values) | (values == ""))
            if missing.size:
                raise ValueError(
                    f"{where}: record(s) {_shown((missing + 1).tolist())} have no value for "
                    f"{key!r}; give every verdict its item id and system."
                )
    # System names are text as ids are: 1, 1.0 and true stay three systems; 1 and "1" collide.
    names = (
        np.full(ids.size, "all", dtype=object)
        if system is None
        else _text_ids(records[system], f"{where}, key {system!r} (the system)", "system names")
    )
    frame = pd.DataFrame(
        {
            "item": _text_ids(ids, where),
            "system": names,
            "judge": records[judge],
            "epoch": _epochs(records[epoch] if epoch else None, ids.size, where, epoch, path),
        }
    )
    keys = [k for k in first if k not in (item, judge, system, epoch)]
    _check_unique(
        frame,
        where,
        fix=(
            f"If a key tells the rows apart, name it: the key of the system (system=KEY, "
            f"--system KEY on the command line) or of the repeat number (epoch=KEY, --repeats "
            f"KEY); its first record's other keys are {_shown(keys, 20) or 'none'}. Otherwise "
            f"give the items distinct ids."
        ),
    )
    return frame


def _refuse_nested_verdicts(verdicts, ids, judge: str, where: str, path: Path) -> None:
    """Refuse a list or object as a verdict (as :func:`_score_value` does for Inspect)."""
    if verdicts.dtype != object:
        return
    nested = np.flatnonzero([isinstance(v, list | dict) for v in verdicts])
    if not nested.size:
        return
    lines = _line_numbers(path, nested[:MAX_GROUPS_SHOWN])
    shown = ", ".join(
        f"item {terminal_safe(repr(str(ids[i])))} (line {n}): "
        f"{terminal_safe(json.dumps(verdicts[i], default=str))}"
        for n, i in zip(lines, nested, strict=False)
    )
    raise ValueError(
        f"{where}: the judge key {judge!r} (judge=, --judge on the command line) holds a list "
        f"or object, not one verdict, on {nested.size} line(s): {shown}. Give every record one "
        f"verdict (text, a number or true/false)."
    )


#: The largest epoch an int64 column holds.
_MAX_EPOCH = np.iinfo(np.int64).max


def _epochs(values, size: int, where: str, key: str | None, path: Path) -> np.ndarray:
    """Return the epoch key's values as int64, refusing any not a whole number in 1..2**63-1.

    The message names the key, the lines (blank lines counted) and the values.
    """
    if values is None:
        return np.ones(size, dtype=np.int64)
    if values.dtype.kind == "i":
        bad = np.flatnonzero(values < 1)
    else:
        bad = np.flatnonzero(
            [
                isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= _MAX_EPOCH
                for v in values
            ]
        )
    if bad.size:
        lines = _line_numbers(path, bad[:MAX_GROUPS_SHOWN])
        shown = ", ".join(
            f"{'no value' if values[i] is None else repr(_plain(values[i]))} on line {n}"
            for n, i in zip(lines, bad, strict=False)
        )
        more = f", … ({bad.size - len(lines)} more)" if bad.size > len(lines) else ""
        raise ValueError(
            f"{where}: the epoch key must hold whole numbers >= 1; got {shown}{more}. The "
            f"epoch key {key!r} (epoch=, --repeats on the command line) numbers an item's "
            f"repeated verdicts 1, 2, ... (at most 2**63-1) on every line."
        )
    return values.astype(np.int64)


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _line_numbers(path: Path, records: Iterable[int]) -> list[int]:
    """Return the line numbers of the given records (0-based, blank lines skipped), in order."""
    wanted = sorted(int(r) for r in records)
    out, record = [], -1
    for number, line in _lines(path, ""):
        if not line.strip():
            continue
        record += 1
        if record == wanted[len(out)]:
            out.append(number)
            if len(out) == len(wanted):
                break
    return out


# --- gold files ---------------------------------------------------------------------------------


class GoldJoin(NamedTuple):
    """The tables :meth:`JudgeCounts.from_frames` counts after :func:`join_gold`.

    ``JudgeCounts.from_frames(j.test, j.calibration, item="item", design=j.design, ...)``
    counts either design.
    """

    test: pd.DataFrame  # random: the one table with a human column; stratified: the log
    calibration: pd.DataFrame | None  # stratified: the gold rows; random: None
    design: str  # "random" or "stratified"


def join_gold(
    test,
    gold,
    *,
    item: str = "item",
    human: str = "human",
    judge: str = "judge",
    system: str | None = None,
) -> GoldJoin:
    """Join the human labels of a gold file to judged items by item id, for either design.

    Parameters
    ----------
    test : pandas.DataFrame or path
        The judged items, e.g. from :func:`read_table` (columns ``item``, ``system``, ``judge``,
        ``epoch``); a path is read with :func:`read_table`.
    gold : pandas.DataFrame or path
        One row per labelled item: the item id (column ``item``) and the human label (column
        ``human``); a system column where the log has several systems (the label is about
        one system's answer), and a ``judge`` column where the labelled items were judged
        apart from the log (the stratified design). An ``epoch`` column (whole numbers >= 1)
        matches the rows to the log's epochs; a label is about the item, so every epoch of a
        labelled item needs the same label (counting refuses anything else). A path is read
        as text (CSV) or with its stored types (Parquet, JSON Lines); ids are compared as text.
    item, human, judge : str
        Column names of the item id, the human label and the judge verdict in ``gold`` (and of
        the item id and verdict in ``test``). For a JSON Lines log, a gold column named like
        the log's own key (``read_table(..., item="id")``: ``id``) serves where ``gold`` has
        no column of the tidy name (``item``); the same for the system, epoch and judge keys.
    system : str, optional
        The gold file's column naming the system, matched with the log's ``system`` column (or
        the column of that name in ``test``). Default: ``system``, else the JSON Lines key the
        log's systems were read from (``read_table(..., system="model")``: ``model``).

    Returns
    -------
    GoldJoin
        ``design="random"`` when every labelled item is among the judged ones: ``test`` is the
        one table with a ``human`` column, missing for the unlabelled rows (the random
        labelling design's one-table form), ``calibration`` None. ``design="stratified"`` when
        no labelled item is in the log and the gold file has its own judge column: ``test`` is
        the log, ``calibration`` the gold rows (without a system column: one calibration
        set serving every system of the log).

    Raises
    ------
    ValueError
        A column missing, an epoch that is not a whole number >= 1, a gold file without a
        system column for a log of several systems, a labelled key repeated, labelled items
        (or item, epoch pairs) outside the log without a judge column (the message names
        them), or labelled items partly inside and partly outside the log.

    Examples
    --------
    >>> import pandas as pd
    >>> log = pd.DataFrame({"item": ["1", "2", "3"], "system": "m", "judge": ["C", "I", "C"],
    ...                     "epoch": 1})
    >>> gold = pd.DataFrame({"item": ["1", "3"], "human": ["yes", "no"]})
    >>> joined = join_gold(log, gold)
    >>> joined.design, joined.test["human"].tolist()
    ('random', ['yes', nan, 'no'])
    """
    log = read_table(test) if isinstance(test, str | Path) else test.copy()
    labels = read_gold(gold)
    labels = labels.rename(columns=_gold_names(log, labels, item, judge, system))
    system = system or "system"
    where = (
        "the gold file"
        if isinstance(gold, pd.DataFrame)
        else f"the gold file {terminal_safe(str(gold))!r}"
    )
    for name, frame, columns in (("test", log, (item, judge)), ("gold", labels, (item, human))):
        absent = [c for c in columns if c not in frame.columns]
        if absent:
            raise ValueError(
                f"The {name} table has no column {_shown(absent)}; its columns are "
                f"{_shown(frame.columns, 20)}. Name the columns with item=, human=, judge=."
            )
    blank = labels[item].map(is_blank).to_numpy()
    if blank.any():
        rows = (np.flatnonzero(blank) + 1).tolist()
        raise ValueError(
            f"The gold file has rows without an item id (rows {_shown(rows)}); give every "
            f"labelled row the id of its item."
        )
    log[item] = _text_column(log[item], "The test table")
    labels[item] = _text_column(labels[item], where[0].upper() + where[1:])
    named = system if system in log.columns else "system"
    keys = [item] + [c for c in (named, "epoch") if c in labels.columns and c in log.columns]
    if "epoch" in keys:
        labels["epoch"] = _gold_epochs(labels["epoch"], where)
    if named not in keys and named in log.columns and log[named].nunique() > 1:
        # A separate calibration set (own judge column, no judged item) serves every system.
        separate = judge in labels.columns and not labels[item].isin(set(log[item])).any()
        if not separate:
            others = labels.drop(columns=[c for c in (item, human, judge) if c in labels])
            raise ValueError(_no_system_column(log[named], others, system, judge, where))
        _check_once(labels, keys, item, where)
        return GoldJoin(log, labels, "stratified")
    _check_once(labels, keys, item, where)
    judged = pd.MultiIndex.from_frame(log[keys].astype(str).drop_duplicates())
    inside = pd.MultiIndex.from_frame(labels[keys].astype(str)).isin(judged)
    if inside.all():
        _warn_blank_labels(labels, item, human, where)
        joined = log.merge(
            labels[[*keys, human]], on=keys, how="left", validate="many_to_one", sort=False
        )
        joined.attrs.update(log.attrs, design="random")
        return GoldJoin(joined, None, "random")
    outside = _outside(labels.loc[~inside, keys], log, item)
    shown = ", ".join(outside[:MAX_GROUPS_SHOWN]) + (
        f", … ({len(outside) - MAX_GROUPS_SHOWN} more)" if len(outside) > MAX_GROUPS_SHOWN else ""
    )
    if judge not in labels.columns:
        raise ValueError(
            f"{len(outside)} labelled {_key_name(keys, item)} of {where} are not in the log: "
            f"{shown}. Without a judge column the gold file can only label judged items (random "
            f"design): check the ids (compared as text: '007' is not '7'), or add the judge's "
            f"verdicts of these items as a {judge!r} column (stratified design)."
            + _unicode_twins(labels.loc[~inside, item], log[item])
        )
    if inside.any():
        raise ValueError(
            f"{int(inside.sum())} labelled item(s) of the gold file are in the log and "
            f"{len(outside)} are not ({shown}): a mix of the "
            f"two designs. Label either judged items (random design) or a separate calibration "
            f"set with its own judge column (stratified design)."
        )
    return GoldJoin(log, labels, "stratified")


def _gold_names(log: pd.DataFrame, labels: pd.DataFrame, item, judge, system) -> dict:
    """Rename the gold columns named like a JSON Lines log's keys to the log's column names.

    ``read_table(..., item="id", system="model")`` reads the keys ``id`` and ``model`` into
    the columns ``item`` and ``system``; a gold file written with the same keys is joined by
    them where it has no column of the log's name.
    """
    read = log.attrs.get("keys") or {}
    tidy = {"item": item, "judge": judge, "system": system or "system", "epoch": "epoch"}
    wanted = dict(tidy)
    if system is None:
        wanted["system"] = "system" if "system" in labels.columns else read.get("system")
    elif "system" in log.columns and system not in log.columns:
        wanted["system"] = system  # the gold's own name of the log's tidy system column
        tidy["system"] = "system"
    for role in ("item", "judge", "epoch"):
        if tidy[role] not in labels.columns:
            wanted[role] = read.get(role)
    return {
        wanted[role]: tidy[role]
        for role in tidy
        if wanted[role] is not None
        and wanted[role] != tidy[role]
        and wanted[role] in labels.columns
        and tidy[role] not in labels.columns
    }


def _warn_blank_labels(labels: pd.DataFrame, item: str, human: str, where: str) -> None:
    """Warn of gold rows with an item id and no label: they join as unlabelled items.

    Every row of a gold file says the item was labelled; a blank label there is a lost one
    (a skipped item, an export problem), and in the random design which items carry a label
    must not depend on their truth.
    """
    blank = labels[human].map(is_blank).to_numpy()
    if not blank.any():
        return
    rows = np.flatnonzero(blank)
    shown = ", ".join(
        f"row {i + 1} (item {labels[item].iloc[i]!r})" for i in rows[:MAX_GROUPS_SHOWN]
    ) + (f", … ({rows.size - MAX_GROUPS_SHOWN} more)" if rows.size > MAX_GROUPS_SHOWN else "")
    warnings.warn(
        f"{rows_text(int(rows.size))} of {where} {'has' if rows.size == 1 else 'have'} an item "
        f"id but no human label in column {human!r}: {shown}. They are counted as unlabelled "
        f"judged items; fill in the labels, or delete the rows.",
        MissingLabelWarning,
        stacklevel=3,
    )


def _unicode_twins(outside: pd.Series, judged: pd.Series) -> str:
    """Name gold ids that differ from a judged id only in Unicode form (NFC and NFD café)."""
    forms = {unicodedata.normalize("NFC", v): v for v in set(judged) if isinstance(v, str)}
    twins = []
    for value in dict.fromkeys(outside):
        twin = forms.get(unicodedata.normalize("NFC", value)) if isinstance(value, str) else None
        if twin is not None and twin != value:
            twins.append(f"{value!a} (gold) and {twin!a} (log)")
    if not twins:
        return ""
    return (
        f" {len(twins)} of them look like a judged id but differ in Unicode form (composed or "
        f"decomposed accents, shown escaped): {', '.join(twins[:MAX_GROUPS_SHOWN])}; write the "
        f"ids alike in both files (e.g. normalised to NFC)."
    )


def _check_once(labels: pd.DataFrame, keys: list[str], item: str, where: str) -> None:
    repeated = labels.duplicated(keys, keep=False)
    if repeated.any():
        raise ValueError(
            f"The gold file labels {_shown(sorted(set(labels.loc[repeated, item])))} more than "
            f"once (by {keys}); keep one label per item."
        )


def _gold_epochs(column: pd.Series, where: str) -> np.ndarray:
    """Return a gold file's epoch column as int64: whole numbers >= 1 (not 1.0), else raise."""

    def epoch(value):
        value = _plain(value)
        if isinstance(value, str) and re.fullmatch(r"\s*[0-9]+\s*", value):
            value = int(value)
        if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= _MAX_EPOCH:
            return value
        return None

    values = [epoch(v) for v in column.tolist()]
    bad = [i for i, v in enumerate(values) if v is None]
    if bad:
        shown = ", ".join(
            f"row {i + 1}: {'blank' if is_blank(column.iloc[i]) else repr(_plain(column.iloc[i]))}"
            for i in bad[:MAX_GROUPS_SHOWN]
        )
        more = f", … ({len(bad) - MAX_GROUPS_SHOWN} more)" if len(bad) > MAX_GROUPS_SHOWN else ""
        raise ValueError(
            f"Column 'epoch' of {where} must hold a whole number >= 1 (an epoch of the log) on "
            f"every row; {shown}{more}. Fill in the epoch, or drop the column to label the "
            f"item (a label is about the item: every epoch of it gets the same label)."
        )
    return np.asarray(values, dtype=np.int64)


def _no_system_column(systems: pd.Series, labels: pd.DataFrame, system, judge, where) -> str:
    """Return the message for a gold file without a system column (naming a look-alike)."""
    names = set(systems.astype(str))
    alike = [
        c
        for c in labels.columns
        if labels[c].notna().any() and set(labels[c].dropna().astype(str)) <= names
    ]
    hint = (
        f" It has {_shown(alike)}, whose values are the log's systems: rename it {system!r} "
        f"(from Python, or name it with join_gold(..., system={alike[0]!r}))."
        if alike
        else ""
    )
    return (
        f"The log holds {systems.nunique()} systems and {where} has no {system!r} column: a "
        f"label of a judged item is about one system's answer.{hint} Add a system column naming "
        f"the system of each labelled answer (a separate calibration set, with its own "
        f"{judge!r} column and ids not in the log, serves every system without one)."
    )


def _key_name(keys: list[str], item: str) -> str:
    return "item(s)" if keys == [item] else f"({', '.join(keys)}) row(s)"


def _outside(rows: pd.DataFrame, log: pd.DataFrame, item: str) -> list[str]:
    """Labelled keys not in the log, shown as ``'7'`` or ``'7' (epoch 9; item in the log)``."""
    judged = set(log[item])
    out = []
    for row in rows.drop_duplicates().itertuples(index=False):
        values = dict(zip(rows.columns, row, strict=True))
        text = repr(values.pop(item))
        if values:
            parts = [
                f"{k} {_plain(v)!r}" if k != "epoch" else f"epoch {v}" for k, v in values.items()
            ]
            note = "; the item is in the log" if values and row[0] in judged else ""
            text += f" ({', '.join(parts)}{note})"
        out.append(text)
    return sorted(out)


def check_gold_labels(gold, *, human: str = "human", positive=None, log_positive=None) -> None:
    """Refuse human labels of a gold file that cannot be read as correct/incorrect.

    The counting's own message names the joined table and the labels lowercased; this one
    names the gold file's column and its values as written, and the option that reads them.

    Parameters
    ----------
    gold : pandas.DataFrame or path
        The gold file (read as :func:`join_gold` reads it).
    human : str
        Its column of human labels.
    positive : scalar or dict, optional
        The label meaning correct (``--positive``); a dict gives it per column.
    log_positive : scalar, optional
        The log's own verdict meaning correct (``read_table(...).attrs["positive"]``: ``"C"``
        for an Inspect log). Inspect's grades ``C``/``I`` in the gold file are not read as
        correct/incorrect unasked (a gold file's letters are its authors'); with this given,
        the message says that ``--positive C`` reads them as the log's verdicts are read.

    Raises
    ------
    ValueError
        Labels outside the vocabulary (yes/no, correct/incorrect, pass/fail, true/false, 1/0)
        without ``positive``, or not ``positive`` and one other value with it.

    Examples
    --------
    >>> import pandas as pd
    >>> check_gold_labels(pd.DataFrame({"item": ["1", "2"], "human": ["yes", "no"]}))
    >>> gold = pd.DataFrame({"item": ["1", "2", "3"], "human": ["C", "I", "C"]})
    >>> check_gold_labels(gold, positive="C")
    >>> try:
    ...     check_gold_labels(gold, log_positive="C")
    ... except ValueError as err:
    ...     print(str(err).split(": ")[1])
    'C' (2 rows), 'I' (1 row). Understood without --positive
    """
    labels = read_gold(gold)
    where = (
        "the gold file"
        if isinstance(gold, pd.DataFrame)
        else f"the gold file {terminal_safe(str(gold))!r}"
    )
    if human not in labels.columns:
        return  # join_gold names a missing column
    if isinstance(positive, dict):
        positive = positive.get(human)
    column = labels[human][~labels[human].map(is_blank)]
    written = column.map(_plain).value_counts(sort=True)
    distinct: dict = {}
    for value, rows in written.items():
        key = normalise(value)
        distinct[key] = distinct.get(key, 0) + int(rows)
    try:
        classify(distinct, human, where, positive)
    except ValueError:
        pass
    else:
        return
    shown = ", ".join(f"{_plain(v)!r} ({rows_text(int(c))})" for v, c in written.head(10).items())
    values = [str(v).strip() for v in written.index]
    if positive is not None:
        hint = (
            f"With --positive {positive} (positive={positive!r} in Python) the column must hold "
            f"that value and at most one other (meaning incorrect): fix the labels, or the value "
            f"of --positive."
        )
    elif log_positive is not None and set(values) <= {INSPECT_CORRECT, INSPECT_INCORRECT}:
        hint = (
            f"They are Inspect's grades, as the log's verdicts are: pass --positive "
            f"{log_positive} (positive={log_positive!r} in Python) to read {log_positive!r} as "
            f"correct and the other grade as incorrect, in both files."
        )
    elif len(written) == 2:
        first = _plain(written.index[0])
        hint = (
            f"If one value means correct and the other incorrect, pass --positive followed by "
            f"the one meaning correct (e.g. --positive {first}; positive={first!r} in Python)."
        )
    else:
        hint = (
            "Fix the labels, or read more than two values as K categories (--categories "
            "with the judge's verdicts and these labels)."
        )
    raise ValueError(
        f"Column {human!r} of {where} holds labels that are not correct/incorrect: {shown}. "
        f"Understood without --positive: yes/no, correct/incorrect, pass/fail, true/false, "
        f"1/0. {hint}"
    )


def read_gold(gold) -> pd.DataFrame:
    r"""Read a gold file as :func:`join_gold` does: CSV as text, Parquet and JSON Lines typed.

    JSON Lines are read by the log's reader, so ``7`` and ``7.0`` stay apart and a line that is
    not JSON is named; a DataFrame is copied.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "gold.jsonl"
    >>> _ = path.write_text(json.dumps({"item": 7, "human": "yes"}) + "\n")
    >>> read_gold(path).values.tolist()
    [[7, 'yes']]
    """
    if isinstance(gold, pd.DataFrame):
        return gold.copy()
    path = Path(gold)
    kind = harness_format(path)
    if kind in ("csv", "parquet"):
        return as_frame(path, "gold").collect().to_pandas()
    where = f"The gold file {terminal_safe(str(path))!r}"
    first = _first_record(path, where)
    records = _records(path, tuple(first), where, exact=tuple(first))
    return pd.DataFrame({k: pd.array(v, dtype=object) for k, v in records.items()})


def _text_column(column: pd.Series, where: str) -> pd.Series:
    values = column.tolist()
    return pd.Series(_text_ids(values, where), index=column.index, dtype=object)
