"""What a verdict file holds and how bayesjudge would read it: :func:`profile_table`.

A profile looks at a table of judge verdicts (and, optionally, a gold file of human labels)
before anything is estimated: its columns and their kinds; which column looks like the judge's
verdict, the human label, the system, the stratum, the judge's name, the item id and the
repeat number (each guessed from names and values unless given, and said to be guessed); the
label values and what they mean; the systems, strata, judges and items; items judged several
times; the overlap between judged and labelled items and the labelling design it implies;
the problems it finds; and the ``bayesjudge estimate`` command that reads the files that way.

The labels are mapped with the package's own vocabulary (:mod:`bayesjudge.data.labels`), the
one-table design with :func:`bayesjudge.data.design.one_table_design`, and the suggested
reading is checked by counting the tables with :meth:`JudgeCounts.from_frames` itself, so
that what the profile says is what ``estimate`` will do. Label columns that hold more than two
values (A / tie / B, a rubric) are read as K categories by the rule the commands use
(:func:`bayesjudge.data.labels.binary_classes`) and counted with
:meth:`CategoricalCounts.from_frames`. Nothing here prints.
"""

from __future__ import annotations

import json
import re
import shlex
import warnings
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import pandas as pd

from bayesjudge.data import harness
from bayesjudge.data._common import is_blank, plain_value, rows_text
from bayesjudge.data.categorical import CategoricalCounts
from bayesjudge.data.category_labels import (
    as_number,
    infer_categories,
    label_key,
    plain_label,
)
from bayesjudge.data.counts import JudgeCounts
from bayesjudge.data.design import one_table_design
from bayesjudge.data.labels import binary_classes, binary_value, classify, normalise
from bayesjudge.data.reading import as_frame

__all__ = ["MIN_LABELS", "Profile", "profile_table"]

#: Fewer labelled items of either human class than this in a group is a problem ("few_labels"):
#: the judge's error rate on that class is estimated from a handful of items.
MIN_LABELS = 10

#: The roles a column can play, in the order they are assigned (one role per column).
ROLES = ("judge", "human", "item", "evaluator", "system", "stratum", "repeats")

#: Column names (lowercased, non-alphanumerics as ``_``) that suggest a role, best first.
ROLE_NAMES: Mapping[str, tuple[str, ...]] = {
    "judge": (
        "judge", "verdict", "judge_verdict", "judgement", "judgment", "judge_label",
        "llm_label", "grade", "score", "pred", "prediction", "predicted", "is_correct",
        "correct", "passed",
    ),
    "human": (
        "human", "gold", "human_label", "gold_label", "label", "truth", "ground_truth",
        "annotation", "human_verdict", "target", "y_true",
    ),
    "item": (
        "item", "item_id", "id", "sample_id", "example_id", "question_id", "prompt_id",
        "doc_id", "uid", "qid", "idx",
    ),
    "evaluator": (
        "evaluator", "judge_model", "judge_name", "grader", "scorer", "rater", "judge_id",
    ),
    "system": (
        "system", "model", "model_name", "system_name", "candidate", "policy", "generator",
        "submission", "agent",
    ),
    "stratum": (
        "stratum", "subset", "category", "task", "domain", "difficulty", "topic", "split",
        "group", "type",
    ),
    "repeats": ("epoch", "repeat", "trial", "attempt", "replicate", "run"),
}  # fmt: skip

#: Inspect's grades in their order, with their values (``inspect_ai.scorer.value_to_float``:
#: NOANSWER and INCORRECT 0, PARTIAL 0.5, CORRECT 1).
_INSPECT_SCORES = {"N": 0.0, "I": 0.0, "P": 0.5, "C": 1.0}

#: The ``bayesjudge estimate`` option of each role (the judge's name has none).
_OPTIONS = {
    "judge": "--judge",
    "human": "--human",
    "system": "--system",
    "stratum": "--stratum",
    "item": "--item",
}
_DEFAULTS = {"judge": "judge", "human": "human"}
_LABEL_MAX = 10  # a label column holds at most this many distinct values
_SHOWN = 10  # values shown per column
_FILE_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq")


@dataclass(frozen=True)
class Column:
    """One column: its kind, missing and distinct values, the most frequent ones, its role."""

    table: str  # "test" or "gold"
    name: str
    dtype: str
    kind: str  # "label", "id", "number", "category", "text" or "empty"
    rows: int
    missing: int
    distinct: int
    top: tuple[tuple[str, int], ...]
    role: str | None = None
    # how the role was found: "given", "name", "values", or "test" (the verdict file's column)
    how: str | None = None

    def to_dict(self) -> dict:
        return {
            "table": self.table,
            "name": self.name,
            "dtype": self.dtype,
            "kind": self.kind,
            "rows": self.rows,
            "missing": self.missing,
            "distinct": self.distinct,
            "top": [{"value": v, "rows": c} for v, c in self.top],
            "role": self.role,
            "how": self.how,
        }


@dataclass(frozen=True)
class Labels:
    """The values of a verdict or human-label column and what each means."""

    table: str
    column: str
    role: str  # "judge" or "human"
    missing: int
    values: tuple[tuple[str, int, int | None], ...]  # (value as text, rows, 1 / 0 / None)
    categorical: bool = False  # read as K categories: every value is a category

    def to_dict(self) -> dict:
        means = {1: "correct", 0: "incorrect", None: "category" if self.categorical else None}
        return {
            "table": self.table,
            "column": self.column,
            "role": self.role,
            "missing": self.missing,
            "values": [{"value": v, "rows": c, "means": means[m]} for v, c, m in self.values],
        }


@dataclass(frozen=True)
class Problem:
    """Something that would make ``estimate`` fail, mislead, or need an option."""

    code: str
    severity: str  # "error" (no estimate, or a wrong one), "warning" or "note"
    message: str

    def to_dict(self) -> dict:
        return {"code": self.code, "severity": self.severity, "message": self.message}


@dataclass(frozen=True)
class Profile:
    """What :func:`profile_table` found; :meth:`to_dict` is its JSON form (stable keys).

    Attributes
    ----------
    files, columns, roles, labels, systems, strata, judges, items, overlap
        What the tables hold (see :meth:`to_dict` and ``docs/cli.md`` for the fields).
    design, design_reason : str
        The labelling design inferred (``"random"``, ``"stratified"``, ``"mixed"``,
        ``"none"`` or ``"unknown"``) and why.
    counts : tuple of dict or None
        n, k, m0, tn, m1, tp per (system, stratum) as ``estimate`` counts them; None when an
        error stands.
    problems : tuple of Problem
        Each with a ``code``, a ``severity`` ("error", "warning" or "note") and a message.
    command : tuple of str or None
        The next command's argv (``command_line``: one shell-quoted line).
    categories : tuple or None
        The categories, in the order ``estimate`` would use, where the label columns are read
        as K categories (:class:`~bayesjudge.data.CategoricalCounts`); None for
        correct/incorrect labels.

    Examples
    --------
    >>> import pandas as pd
    >>> p = profile_table(pd.DataFrame({"judge": ["pass", "fail", "pass"]}))
    >>> p.design, p.to_dict()["design"]["reason"]
    ('none', 'no column looks like a human label')
    >>> sorted(p.to_dict())[:4]
    ['columns', 'counts', 'design', 'files']
    """

    files: dict  # {"test": {"source", "format", "rows"}, "gold": {...} or None}
    columns: tuple[Column, ...]
    roles: dict  # {"test": {role: column}, "gold": {role: column}}
    labels: tuple[Labels, ...]
    systems: tuple[tuple[str, int], ...]
    strata: tuple[tuple[str, int], ...]
    judges: tuple[tuple[str, int], ...]
    items: dict | None
    overlap: dict | None
    design: str  # "random", "stratified", "mixed", "none" (no labels) or "unknown"
    design_reason: str
    counts: tuple[dict, ...] | None
    problems: tuple[Problem, ...]
    command: tuple[str, ...] | None
    notes: tuple[str, ...] = field(default=())
    categories: tuple | None = None  # K categories in the commands' order; None: binary

    @property
    def command_line(self) -> str | None:
        """The next command as one shell line (each argument quoted with :func:`shlex.quote`)."""
        return None if self.command is None else shlex.join(self.command)

    @property
    def guessed(self) -> tuple[str, ...]:
        """``"test.judge"``, …: the roles found from names or values rather than given."""
        return tuple(
            f"{c.table}.{c.role}" for c in self.columns if c.role and c.how in ("name", "values")
        )

    def to_dict(self) -> dict:
        """Return the profile as JSON-ready Python objects (keys documented in docs/cli.md)."""

        def named(pairs):
            return [{"name": n, "rows": c} for n, c in pairs]

        return {
            "schema": "bayesjudge.profile/1",
            "files": self.files,
            "columns": [c.to_dict() for c in self.columns],
            "roles": self.roles,
            "guessed": list(self.guessed),
            "labels": [lab.to_dict() for lab in self.labels],
            "systems": named(self.systems),
            "strata": named(self.strata),
            "judges": named(self.judges),
            "items": self.items,
            "overlap": self.overlap,
            "design": {"name": self.design, "reason": self.design_reason},
            "counts": None if self.counts is None else list(self.counts),
            "problems": [p.to_dict() for p in self.problems],
            "next_command": None
            if self.command is None
            else {"argv": list(self.command), "line": self.command_line},
            "notes": list(self.notes),
            # only where the labels are read as K categories: binary profiles keep their keys
            **({} if self.categories is None else {"categories": list(self.categories)}),
        }


# --- reading ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Table:
    """One table read for profiling, and what to pass on to ``from_frames`` for it."""

    name: str  # "test" or "gold"
    frame: pd.DataFrame
    source: str
    format: str
    path: str | None  # the file to name in the next command
    counted: Any  # the path (CSV/Parquet, read as estimate reads it) or the frame
    positive: Any = None  # the verdict meaning correct, where the file format defines it


def _read(table, name: str, format: str | None, keys: Mapping[str, str | None]) -> _Table:
    """Read a file or dataframe into pandas, as ``bayesjudge estimate`` reads it.

    CSV/TSV and Parquet files are read with :func:`as_frame` (CSV as text); other files of
    the verdicts with :func:`harness.read_table` (``format`` or the suffix says which), with
    ``keys`` as estimate's options: ``item``, ``judge``, ``system`` and ``repeats`` name the
    keys of JSON Lines, ``system`` renames an Inspect or lm-eval log's model; a gold file in
    JSON Lines with :func:`harness.read_gold`, keeping the stored types.
    """
    if not isinstance(table, str | Path):
        frame = as_frame(table, name).collect().to_pandas()
        return _Table(name, frame, f"a {type(table).__name__}", "dataframe", None, table)
    path = Path(table)
    kind = harness.harness_format(path, format if name == "test" else None)
    if kind in ("csv", "parquet"):
        frame = as_frame(path, name).collect().to_pandas()
        return _Table(name, frame, str(path), kind, str(path), str(path))
    if name == "gold":
        if not path.is_file():
            raise FileNotFoundError(f"The gold file {str(path)!r} does not exist.")
        frame = harness.read_gold(path)
        return _Table(name, frame, str(path), kind, str(path), frame)
    repeats = keys.get("repeats")
    if kind in ("inspect", "lm-eval") and repeats not in (None, "epoch"):
        raise ValueError(
            f"--repeats {repeats}: an {kind} log numbers the repeated verdicts of an item "
            f"itself (its epochs, counted as repeats); leave out --repeats."
        )
    frame = harness.read_table(
        path,
        format=kind,
        item=keys.get("item") or "item",
        judge=keys.get("judge") or "judge",
        scorer=keys.get("scorer"),
        metric=keys.get("metric"),
        system=keys.get("system"),
        epoch=repeats if kind == "jsonl" else None,
    )
    return _Table(name, frame, str(path), kind, str(path), frame, frame.attrs.get("positive"))


# --- columns and roles -----------------------------------------------------------------------


def _blank(series: pd.Series) -> pd.Series:
    """Missing (None, NaN, NA) or blank text, element-wise: ``is_blank`` on a whole column."""
    missing = series.isna()
    if series.dtype.kind in "biufcmM":
        return missing
    return missing | series.astype(str).str.strip().eq("")


def _value_counts(series: pd.Series) -> pd.Series:
    """Count the distinct values, most frequent first."""
    # The index keeps numpy scalars: the few values looked at go through plain_value there.
    return series.value_counts(sort=True, dropna=True)


def _key(name: object) -> str:
    return re.sub(r"[^0-9a-z]+", "_", str(name).strip().lower()).strip("_")


def _shown(value) -> str:
    value = plain_value(value)
    if isinstance(value, float) and value.is_integer():
        return str(value)
    return str(value)


def _number(value) -> Decimal | None:
    """Return the value of a number or numeric text (``"007"`` -> 7), else None."""
    value = plain_value(value)
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def _meanings(values: Mapping, column: str, where: str, positive) -> dict:
    """Map each distinct normalised label to 1, 0 or None (not understood), value by value."""
    out = {}
    if positive is not None:
        try:
            mapping, _ = classify(dict(values), column, where, positive)
            return dict(mapping)
        except ValueError:
            # Not the positive and one other value: only the positive is understood (alone,
            # any value classifies, so a one-value call cannot tell the strays).
            for value, rows in values.items():
                mapping, _ = classify({value: rows}, column, where, positive)
                out[value] = 1 if mapping[value] == 1 else None
            return out
    for value, rows in values.items():
        try:
            mapping, _ = classify({value: rows}, column, where, None)
            out[value] = mapping[value]
        except ValueError:
            out[value] = None
    return out


def _column(table: str, name: str, series: pd.Series) -> tuple[Column, dict]:
    """Profile one column; also return its distinct normalised labels (if few) and rows."""
    blank = _blank(series)
    present = series[~blank]
    counts = _value_counts(present)
    top = tuple((_shown(v), int(c)) for v, c in counts.head(_SHOWN).items())
    normalised = Counter()
    if len(counts) <= 4 * _LABEL_MAX:
        for value, rows in counts.items():
            normalised[normalise(value)] += int(rows)
    kind = _kind(series, present, counts, normalised, name)
    column = Column(
        table, name, str(series.dtype), kind, len(series), int(blank.sum()), len(counts), top
    )
    return column, dict(normalised) if len(normalised) <= _LABEL_MAX else {}


def _kind(series, present, counts, normalised, name) -> str:
    if present.empty:
        return "empty"
    if normalised and len(normalised) <= 2:
        meanings = _meanings(normalised, str(name), "table", None)
        if all(m is not None for m in meanings.values()):
            return "label"
    if len(counts) == len(present) and len(present) > 2:
        return "id"
    if all(_number(v) is not None for v in counts.index[:1000]):
        return "number"
    if len(counts) <= max(20, len(present) // 10):
        return "category"
    return "text"


def _fits(role: str, column: Column) -> bool:
    """Whether the values of ``column`` can play ``role`` (a name alone is not enough)."""
    if column.kind == "empty":
        return role == "human"  # a gold column may be all blank in the test table
    if role in ("judge", "human"):
        return column.kind == "label" or column.distinct <= _LABEL_MAX
    if role in ("system", "stratum", "evaluator"):
        return column.kind != "id" or column.rows <= 2
    if role == "repeats":
        return column.kind in ("number", "label", "category")
    return True


def _assign(
    columns: list[Column], given: Mapping[str, str | None], table: str, inherited=()
) -> list[Column]:
    """Give each role a column: as given, else by name, else (some roles) by values.

    Roles in ``inherited`` were found in the verdict file and are marked ``"test"``.
    """
    by_name = {c.name: c for c in columns}
    roles: dict[str, tuple[str, str]] = {}
    for role in ROLES:
        name = given.get(role)
        if name is None:
            continue
        if name not in by_name:
            raise ValueError(
                f"Column {name!r} (given as the {role} column) is not in the {table} table, "
                f"which has the columns {list(by_name)!r}. Pass one of those, or leave the "
                f"option out to let the profile guess."
            )
        roles[name] = (role, "test" if role in inherited else "given")
    taken = {role for role, _ in roles.values()}
    for role in ROLES:
        if role in taken:
            continue
        for wanted in ROLE_NAMES[role]:
            hit = next((c for c in columns if _key(c.name) == wanted and c.name not in roles), None)
            if hit is not None and _fits(role, hit):
                roles[hit.name] = (role, "name")
                taken.add(role)
                break
    _assign_by_values(columns, roles, taken, table)
    return [
        Column(**{**c.__dict__, "role": roles[c.name][0], "how": roles[c.name][1]})
        if c.name in roles
        else c
        for c in columns
    ]


def _assign_by_values(columns, roles: dict, taken: set, table: str) -> None:
    """Guess the verdict, human and item columns from their values where no name told."""
    free = [c for c in columns if c.name not in roles]
    labels = [c for c in free if c.kind == "label"]
    if "judge" not in taken and table == "test" and labels:
        # the verdict is filled on every row; a human column is often filled on a few
        hit = min(labels, key=lambda c: c.missing > 0)
        roles[hit.name] = ("judge", "values")
        taken.add("judge")
        labels.remove(hit)
    if "human" not in taken and labels:
        hit = min(labels, key=lambda c: c.missing == 0) if table == "test" else labels[0]
        roles[hit.name] = ("human", "values")
        taken.add("human")
    if "item" not in taken:
        hit = next((c for c in free if c.kind == "id" and c.name not in roles), None)
        if hit is not None:
            roles[hit.name] = ("item", "values")


def _roles(columns: list[Column], table: str) -> dict[str, str]:
    found = {c.role: c.name for c in columns if c.table == table and c.role}
    return {role: found[role] for role in ROLES if role in found}


# --- labels, groups and items ----------------------------------------------------------------


def _labels(table: _Table, roles: Mapping[str, str], positive) -> list[Labels]:
    """Return the values of the verdict and human columns, each with its meaning."""
    out = []
    for role in ("judge", "human"):
        column = roles.get(role)
        if column is None:
            continue
        series = table.frame[column]
        blank = _blank(series)
        raw = _value_counts(series[~blank])
        if len(raw) > 4 * _LABEL_MAX:
            raw = raw.head(4 * _LABEL_MAX)
        normalised = Counter()
        for value, rows in raw.items():
            normalised[normalise(value)] += int(rows)
        use = positive if positive is not None else (table.positive if role == "judge" else None)
        where = f"{table.name} table"
        meanings = _meanings(normalised, column, where, use)
        values = tuple((_shown(v), int(c), meanings.get(normalise(v))) for v, c in raw.items())
        out.append(Labels(table.name, column, role, int(blank.sum()), values))
    return out


def _label_problems(labels: list[Labels], positive) -> list[Problem]:
    out = []
    for lab in labels:
        what = "verdicts" if lab.role == "judge" else "human labels"
        strays = [(v, c) for v, c, m in lab.values if m is None]
        if strays:
            shown = ", ".join(f"{v!r} ({rows_text(c)})" for v, c in strays[:_SHOWN])
            if positive is not None:
                hint = (
                    f" --positive {positive!r} applies to every label column, and this one "
                    f"does not hold it and at most one other value: fix the column, or map "
                    f"its values to yes/no first."
                )
            elif len(lab.values) == 2:
                hint = (
                    f" If one value means correct and the other incorrect, pass --positive "
                    f"{shlex.quote(strays[0][0])} (or the value that means correct)."
                )
            else:
                hint = (
                    " Fix or drop those rows, or pass --positive <value meaning correct> when "
                    "the column holds that value and one other."
                )
            out.append(
                Problem(
                    "unparsed_verdicts" if lab.role == "judge" else "unmapped_labels",
                    "error",
                    f"Column {lab.column!r} ({lab.table} table) holds {what} that cannot be "
                    f"read as correct/incorrect: {shown}. Understood without --positive: "
                    f"yes/no, correct/incorrect, pass/fail, true/false, 1/0.{hint}",
                )
            )
        if lab.missing and lab.role == "judge":
            out.append(
                Problem(
                    "missing_verdicts",
                    "warning",
                    f"{rows_text(lab.missing)} of the {lab.table} table have no verdict in column "
                    f"{lab.column!r}; estimate leaves them out (which assumes they are missing "
                    f"at random).",
                )
            )
    return out


def _groups(frame: pd.DataFrame, column: str | None) -> tuple[tuple[str, int], ...]:
    if column is None:
        return ()
    counts = _value_counts(frame[column][~_blank(frame[column])])
    return tuple((_shown(v), int(c)) for v, c in sorted(counts.items(), key=lambda kv: str(kv[0])))


def _id(value, from_file: bool):
    """Return an item id as the counting compares it: text when read from a file."""
    value = plain_value(value)
    return str(value) if from_file else value


def _items(table: _Table, roles: Mapping[str, str]) -> tuple[dict | None, list[Problem]]:
    """How many items, how many judged more than once (same id in one system, stratum, judge)."""
    column = roles.get("item")
    if column is None:
        return None, []
    frame = table.frame
    ids = frame[column]
    blank = _blank(ids)
    keys = [roles[r] for r in ("system", "stratum", "evaluator") if r in roles]
    present = frame[~blank]
    per = present.groupby([*keys, column], dropna=False, sort=False).size()
    repeats = {int(r): int(c) for r, c in per.value_counts().items()}
    repeated = int(sum(c for r, c in repeats.items() if r > 1))
    info = {
        "column": column,
        "distinct": int(ids[~blank].nunique()),
        "missing": int(blank.sum()),
        "within": keys,
        "repeated": repeated,
        "max_verdicts": max(repeats) if repeats else 0,
        "verdicts_per_item": {str(r): int(c) for r, c in sorted(repeats.items())},
    }
    problems = []
    if blank.any():
        problems.append(
            Problem(
                "missing_ids",
                "warning",
                f"{int(blank.sum())} rows of the {table.name} table have no item id in column "
                f"{column!r}; they cannot be matched with human labels.",
            )
        )
    if repeated:
        log = table.format in harness.HARNESS_FORMATS
        problems.append(_repeat_problem(present, per, keys, column, roles, info, log))
    problems.extend(_numeric_ids(ids[~blank], column, table))
    return info, problems


def _repeat_problem(present, per, keys, column, roles, info, log: bool) -> Problem:
    """Say which items repeat and which columns differ between their rows."""
    varying = []
    known = (*keys, column, roles.get("judge"), roles.get("repeats"))
    others = [c for c in present.columns if c not in known]
    repeated_rows = present.set_index([*keys, column]).index.isin(per[per > 1].index)
    sample = present[repeated_rows].head(20_000)
    for other in others:
        if sample.groupby([*keys, column], dropna=False)[other].nunique(dropna=False).max() > 1:
            varying.append(other)
    within = f" within each {', '.join(repr(k) for k in keys)}" if keys else ""
    differ = (
        f" Their rows differ in {', '.join(repr(v) for v in varying[:_SHOWN])}."
        if varying
        else " Their rows differ in no other column."
    )
    if log:
        return Problem(
            "repeated_items",
            "note",
            f"{info['repeated']} items of the log were judged several times (up to "
            f"{info['max_verdicts']} epochs); estimate counts the epochs of an item as one "
            f"cluster of repeated verdicts.",
        )
    repeats = roles.get("repeats")
    if repeats is not None:
        return Problem(
            "repeated_items",
            "note",
            f"{info['repeated']} item ids in column {column!r} have several rows{within} (up "
            f"to {info['max_verdicts']}), numbered by column {repeats!r}.{differ} The next "
            f"command counts them as repeated verdicts of one item (--item "
            f"{shlex.quote(column)} --repeats {shlex.quote(repeats)}): a cluster, with "
            f"intervals that treat the items as the units. If they are not repeats of one "
            f"judgement (different judges or settings), select one of them first (or use "
            f"that column as --system).",
        )
    fix = (
        f" If they are repeated verdicts of one item (epochs, samples), estimate would count "
        f"them as separate items from this table, which understates the uncertainty: add a "
        f"column numbering the repeats (1, 2, ... within an item) and pass --item "
        f"{shlex.quote(column)} --repeats COLUMN. If the differing columns name different "
        f"judges or settings, select one of them first (or use it as --system)."
    )
    return Problem(
        "repeated_items",
        "warning",
        f"{info['repeated']} item ids in column {column!r} have several rows{within} (up to "
        f"{info['max_verdicts']}).{differ}{fix}",
    )


def _numeric_key(text: str) -> str | None:
    """Return the number a text id writes (``"007"`` and ``"7.0"`` give ``"7"``), else None."""
    number = _number(text)
    if number is None:
        return None
    number = number.normalize()
    if number == number.to_integral_value() and abs(number.adjusted()) < 50:
        return str(int(number))
    return str(number)


def _numeric_keys(text: pd.Series) -> pd.Series:
    """Return :func:`_numeric_key` of the numeric-looking texts (others left out)."""
    # Plain digit strings are keyed at C speed (leading zeros stripped); only the rare other
    # numeric-looking ids ("7.0", "1e3", " 7") go through Decimal.
    digits = text.str.fullmatch(r"[0-9]+")
    keys = text[digits].str.lstrip("0").replace("", "0")
    other = text[~digits & text.str.contains(r"[0-9]")]
    return pd.concat([keys, other.map(_numeric_key).dropna()]).astype(object)


def _numeric_ids(ids: pd.Series, column: str, table: _Table) -> list[Problem]:
    """Distinct ids of one table that are the same number (``"007"`` and ``"7"``)."""
    text = pd.Series(ids.unique()).astype(str)
    keys = _numeric_keys(text)
    keys = keys[keys.duplicated(keep=False)]  # distinct ids, so a repeated key is a clash
    groups = text[keys.index].groupby(keys.to_numpy()).unique()
    alike = [sorted(v) for v in groups if len(v) > 1]
    if not alike:
        return []
    alike.sort()
    shown = "; ".join(" and ".join(repr(v) for v in group) for group in alike[:5])
    return [
        Problem(
            "ids_differ_as_text",
            "warning",
            f"Column {column!r} of the {table.name} table holds ids that are the same number "
            f"written differently: {shown}{' …' if len(alike) > 5 else ''}. They are different "
            f"items to bayesjudge (ids compare as text); write each id one way if they are "
            f"the same item.",
        )
    ]


# --- K categories ------------------------------------------------------------------------------


def _stray_binary(labels: Mapping) -> bool:
    """Whether a column is correct/incorrect with one stray text value (yes, no, maybe).

    Read as three categories by the commands, such a column is a binary column with a typo
    or an undecided verdict far more often than a rubric: the profile keeps its binary
    reading and names the stray value (a numeric third value, as in 0/1/2, is a scale).
    """
    values = [(label, binary_value(label)) for label in labels.values()]
    strays = [label for label, value in values if value is None]
    classes = {value for _, value in values if value is not None}
    return classes == {0, 1} and len(strays) == 1 and as_number(strays[0]) is None


@dataclass(frozen=True)
class _Categories:
    """K-category labels: the categories in the commands' order, and labels of one role only."""

    categories: list
    judge_only: list  # verdicts no human label holds
    human_only: list  # human labels the judge never gives
    numeric: bool  # ordered by value (a scale); else sorted alphabetically
    inspect: bool = False  # Inspect's grades (C, P, I, N), ordered from no answer to correct


def _label_sets(tables: list[_Table], troles, groles) -> tuple[dict, dict]:
    """Return the distinct non-blank labels of the judge and human columns, by label key.

    As the commands read them (``cli._categorical``): the verdicts of both tables, the
    human labels of the gold file (or of the one table); labels as the tables hold them.
    """
    found: dict[str, dict] = {"judge": {}, "human": {}}

    def add(role: str, table: _Table, column: str | None) -> None:
        if column is None or column not in table.frame.columns:
            return
        for value in table.frame[column].dropna().unique():
            label = plain_label(value)
            if not is_blank(label):
                found[role].setdefault(label_key(label), label)

    add("judge", tables[0], troles.get("judge"))
    if len(tables) == 1:
        add("human", tables[0], troles.get("human"))
    else:
        add("judge", tables[1], groles.get("judge"))
        add("human", tables[1], groles.get("human"))
    return found["judge"], found["human"]


def _categorical(tables: list[_Table], troles, groles, positive) -> _Categories | None:
    """Return the K categories where the commands read the labels so, else None (binary)."""
    if positive is not None or "judge" not in troles:
        return None  # --positive keeps the binary reading, as in the commands
    judge, human = _label_sets(tables, troles, groles)
    if binary_classes(judge) <= 2 and binary_classes(human) <= 2:
        return None
    if _stray_binary(judge) or _stray_binary(human):
        return None
    # look-alikes ('1' and '01') are refused by the counting, whose message names them
    categories = infer_categories({**judge, **human}.values())
    inspect = {str(c) for c in categories} <= set(_INSPECT_SCORES) and {"C", "I"} <= {
        str(c) for c in categories
    }
    if inspect:  # their own order (value_to_float), not the alphabet's
        categories = sorted(categories, key=lambda c: list(_INSPECT_SCORES).index(str(c)))
    only_judge = set(judge) - set(human) if human else set()
    only_human = set(human) - set(judge)
    return _Categories(
        categories,
        [c for c in categories if label_key(c) in only_judge],
        [c for c in categories if label_key(c) in only_human],
        all(as_number(c) is not None for c in categories),
        inspect,
    )


def _listed(values) -> str:
    return ", ".join(repr(v) for v in values[:_SHOWN]) + (
        f" and {len(values) - _SHOWN} more" if len(values) > _SHOWN else ""
    )


def _category_problems(found: _Categories, troles, groles, tables) -> list[Problem]:
    """Warn of verdicts no human label holds and of labels the judge never gives."""
    judge = repr(troles["judge"])
    human = repr((groles if len(tables) > 1 else troles).get("human"))
    out = []
    if found.judge_only:
        out.append(
            Problem(
                "categories_unlabelled",
                "warning",
                f"The judge's verdicts (column {judge}) hold {_listed(found.judge_only)}, which "
                f"no human label (column {human}) holds. Read as K categories, such a category "
                f"has no labelled items, so the judge's verdicts for that truth are unknown and "
                f"the corrected estimate is NaN (estimate warns: a true category has no "
                f"calibration items). Label items of that category, or fix the verdicts (a typo "
                f"or a value to merge into another category).",
            )
        )
    if found.human_only:
        out.append(
            Problem(
                "categories_never_judged",
                "warning",
                f"The human labels (column {human}) hold {_listed(found.human_only)}, which the "
                f"judge's verdicts (column {judge}) never hold. Read as K categories, the "
                f"judge's confusion matrix then has an empty column: it is singular, and the "
                f"corrected estimate is NaN (estimate warns: the confusion matrix is singular). "
                f"Fix the labels (a typo or a value to merge into another category), or check "
                f"that the judge can give that verdict.",
            )
        )
    return out


def _category_option(categories: list) -> str:
    """``--categories`` for the next command: ``A,tie,B``, or the JSON form where needed."""
    texts = [str(c) for c in categories]
    short = ",".join(texts)
    if any("," in t for t in texts) or short.lstrip().startswith("["):
        return json.dumps(texts, ensure_ascii=False)
    return short


def _scores_example(found: _Categories) -> str:
    """Return an example ``--scores``, quoted: values only where the labels define them.

    A rubric's own numbers; Inspect's grades their values (``I=0,P=0.5,C=1``, ``N`` no
    answer 0, as Inspect's ``value_to_float``); other labels a placeholder per category
    (``A=…``), since no order or value of theirs is known (an alphabetical 1 … 0 would read
    as a meaningful mapping).
    """
    texts = [str(c) for c in found.categories]
    if found.numeric:
        values = [f"{float(as_number(c)):g}" for c in found.categories]
    elif found.inspect:
        values = [f"{_INSPECT_SCORES[t]:g}" for t in texts]
    else:
        values = ["…"] * len(texts)
    if any(ch in t for t in texts for ch in ",=") or texts[0].lstrip().startswith("{"):
        shown = [v if v == "…" else float(v) for v in values]
        text = json.dumps(dict(zip(texts, shown, strict=True)), ensure_ascii=False)
    else:
        text = ",".join(f"{t}={v}" for t, v in zip(texts, values, strict=True))
    return shlex.quote(text)


def _category_note(found: _Categories, named: bool) -> str:
    """Return the info line: K categories, their order, what --categories and --scores do."""
    k = len(found.categories)
    shown = ", ".join(repr(c) for c in found.categories)
    if found.numeric:
        order = "ordered by value"
    elif found.inspect:
        order = (
            "Inspect's grades, ordered from incorrect to correct: N no answer, I incorrect, P "
            "partial, C correct"
            + ("; the next command names the order with --categories" if named else "")
        )
    else:
        order = (
            "sorted alphabetically, an order of no meaning; the next command names it with "
            "--categories: put them in their own order there (e.g. a tie between the two "
            "sides) where it matters, for --ordered or fit's --confusion ordinal"
            if named
            else "sorted alphabetically"
        )
    return (
        f"The label columns hold K = {k} categories, read as K categories as estimate, fit "
        f"and report read them (not as correct/incorrect): {shown} ({order}). To also "
        f"estimate a mean score (a rubric mean; a win rate with ties counted half), add "
        f"--scores with a value for every category, e.g. --scores {_scores_example(found)}."
    )


def _categorical_rows(counts: CategoricalCounts) -> tuple[dict, ...]:
    """Per group: n test items and m labelled items, as ``estimate`` prints them."""
    ds = counts.dataset
    n = ds["test"].sum("category")
    m = ds["calibration"].sum(("truth", "verdict"))
    return tuple(
        {"system": plain_value(s), "stratum": plain_value(t),
         "n": int(n.sel(system=s, stratum=t)), "m": int(m.sel(system=s, stratum=t))}
        for s in ds["system"].values for t in ds["stratum"].values
    )  # fmt: skip


# --- the labelling design --------------------------------------------------------------------


class _Design:
    """The labelling design found, why, and the overlap of judged and labelled items."""

    def __init__(self, name: str, reason: str, overlap: dict | None = None) -> None:
        self.name, self.reason, self.overlap = name, reason, overlap
        self.problems: list[Problem] = []


def _labelled(frame: pd.DataFrame, human: str | None) -> pd.Series:
    if human is None or human not in frame.columns:
        return pd.Series(False, index=frame.index)
    return ~_blank(frame[human])


def _one_table(test: _Table, roles: Mapping[str, str]) -> _Design:
    """No gold file: one table, labelled where its human column is filled (or no labels)."""
    labelled = _labelled(test.frame, roles.get("human"))
    n_labelled = int(labelled.sum())
    if n_labelled == 0:
        why = (
            f"column {roles['human']!r} is empty on every row"
            if "human" in roles
            else "no column looks like a human label"
        )
        return _Design("none", why)
    design = one_table_design(None, {("all",): Counter({0: n_labelled})}, "test table")
    overlap = {
        "key": [],
        "judged": len(test.frame),
        "labelled": n_labelled,
        "both": n_labelled,
        "labelled_only": 0,
        "judged_only": len(test.frame) - n_labelled,
    }
    return _Design(
        design,
        f"one table: column {roles['human']!r} is filled on {n_labelled} of "
        f"{len(test.frame)} rows, a subset of the judged items",
        overlap,
    )


def _gold_design(test: _Table, gold: _Table, troles, groles) -> _Design:
    """Find the design of a gold file: random if its labelled ids are judged ids."""
    if "human" not in groles:
        return _Design("unknown", "the gold file has no column that looks like a human label")
    labelled = _labelled(gold.frame, groles["human"])
    if not labelled.any():
        return _Design("unknown", f"column {groles['human']!r} of the gold file is empty")
    has_verdicts = "judge" in groles
    if "item" not in troles or "item" not in groles:
        if has_verdicts:
            return _Design(
                "stratified",
                "no item ids to match the two files, and the gold file has its own verdicts: "
                "taken as a separate calibration set",
            )
        return _Design(
            "unknown",
            "the gold file has no verdicts of its own and the files share no item-id column, "
            "so its labels cannot be matched with the judged items",
        )
    # the system column of each file (a JSON Lines log's key may name the gold's: "model")
    both_systems = "system" in troles and "system" in groles
    keys = [troles["system"]] if both_systems else []
    file_ids = test.path is not None and gold.path is not None

    def ids(table: _Table, column: str, rows, system: str | None) -> set:
        frame = table.frame[rows] if rows is not None else table.frame
        frame = frame[~_blank(frame[column])]
        parts = [frame[system].map(plain_value)] if system is not None else []
        parts.append(frame[column].map(lambda v: _id(v, file_ids)))
        return set(zip(*parts, strict=True))

    judged = ids(test, troles["item"], None, troles["system"] if both_systems else None)
    marked = ids(gold, groles["item"], labelled, groles["system"] if both_systems else None)
    both = judged & marked
    overlap = {
        "key": [*keys, troles["item"]],
        "judged": len(judged),
        "labelled": len(marked),
        "both": len(both),
        "labelled_only": len(marked - judged),
        "judged_only": len(judged - marked),
    }
    if both and both == marked:
        return _Design(
            "random",
            f"all {len(marked)} labelled items of the gold file are among the {len(judged)} "
            f"judged items (matched by {', '.join(map(repr, overlap['key']))})",
            overlap,
        )
    if not both:
        design = _Design(
            "stratified" if has_verdicts else "unknown",
            "no labelled item of the gold file is a judged item"
            + (
                ": a separate calibration set with its own verdicts"
                if has_verdicts
                else ", and the gold file has no verdicts of its own"
            ),
            overlap,
        )
    else:
        design = _Design(
            "mixed",
            f"{len(both)} of the {len(marked)} labelled items are judged items and "
            f"{len(marked - judged)} are not: a mix of the random and the stratified design",
            overlap,
        )
    design.problems = _unmatched(marked - judged, judged, overlap, design.name)
    return design


def _unmatched(outside: set, judged: set, overlap: dict, name: str) -> list[Problem]:
    """Problems of labelled ids that match no judged id, and ids alike as numbers."""
    problems = []
    key = overlap["key"]
    shown = ", ".join(repr(k[-1]) for k in sorted(outside, key=str)[:5])
    more = f", … ({len(outside) - 5} more)" if len(outside) > 5 else ""
    if name == "mixed":
        problems.append(
            Problem(
                "design_mixed",
                "error",
                f"{overlap['both']} labelled items of the gold file are judged items but "
                f"{len(outside)} are not ({shown}{more}; matched by {key!r}). If every "
                f"labelled item was drawn from the judged items, add the missing ones to the "
                f"verdict file (or fix their ids); if the gold file is a separate calibration "
                f"set, give its items ids that are not the judged items' ids.",
            )
        )
    elif name == "unknown" and outside:
        problems.append(
            Problem(
                "gold_unknown_ids",
                "error",
                f"None of the {len(outside)} labelled items of the gold file is a judged item "
                f"({shown}{more}; matched by {key!r}), and the gold file has no verdicts of "
                f"its own, so its labels tell nothing about the judge. Check the item ids.",
            )
        )
    alike = []
    wanted = {}
    for k in outside:
        key = _numeric_key(str(k[-1]))
        if key is not None:
            wanted[(*k[:-1], key)] = k[-1]
    if wanted:
        judged = list(judged)
        texts = pd.Series([str(k[-1]) for k in judged])
        for position, key in _numeric_keys(texts).items():
            twin = wanted.get((*judged[position][:-1], key))
            if twin is not None:
                alike.append((twin, judged[position][-1]))
        alike.sort(key=str)
    if alike:
        pairs = "; ".join(f"{a!r} (gold) and {b!r} (verdicts)" for a, b in alike[:5])
        problems.append(
            Problem(
                "ids_differ_as_text",
                "error",
                f"{len(alike)} labelled ids of the gold file match a judged id only as a "
                f"number: {pairs}. bayesjudge compares ids as text, so these are different "
                f"items: write the ids alike in both files (e.g. without leading zeros).",
            )
        )
    return problems


# --- the next command and its check ----------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    """How ``estimate`` should read the files: its options and the from_frames arguments."""

    argv: tuple[str, ...] | None
    options: dict  # from_frames keywords (column names, positive)
    gold_as: str | None  # "gold" (joined by item id), "calibration" or None
    notes: tuple[str, ...]


def _plan(
    test: _Table,
    gold: _Table | None,
    troles,
    groles,
    design: str,
    positive,
    reading: dict,
    repeated: bool = False,
    categories: _Categories | None = None,
) -> _Plan:
    """Choose the options of ``bayesjudge estimate`` from the roles and the design.

    They mirror how ``estimate`` reads its input: CSV/Parquet tables with the column options
    (a gold file of a random design joined by item id with ``--gold``, a separate calibration
    set with ``--calibration``; items with several rows (``repeated``) and a column numbering
    them counted as clusters with ``--item`` and ``--repeats``); a harness log through
    ``harness.read_table`` (tidy columns ``item``, ``system``, ``judge``, ``epoch``; epochs
    counted as repeats; the log's own positive verdict), labels from ``--gold``.
    """
    notes = []
    roles = dict(troles)
    labelled = design not in ("none", "unknown")
    log = test.format in harness.HARNESS_FORMATS
    human = (groles if gold is not None else roles).get("human") if labelled else None
    system = roles.get("system")
    if system is None and "evaluator" in roles and _several(test.frame, roles["evaluator"]):
        system = roles["evaluator"]
        notes.append(
            f"Several judges in column {system!r} and no system column: each judge is "
            f"counted as a system (--system {shlex.quote(system)})."
        )
    options = {
        "judge": "judge" if log else roles.get("judge", "judge"),
        "human": human,
        "system": "system" if log else system,
        "stratum": roles.get("stratum"),
        "positive": positive,
        "item": "item" if log else None,
    }
    if log and positive is None and test.positive is not None:
        options["positive"] = {"judge": test.positive}
    if log and "epoch" in test.frame and test.frame["epoch"].nunique() > 1:
        options["repeats"] = "epoch"
    elif not log and repeated and "item" in roles and "repeats" in roles:
        options["item"], options["repeats"] = roles["item"], roles["repeats"]
    gold_as = None
    if gold is not None and labelled:
        # a mixed design too: estimate's --gold join then stops with the message to fix it
        gold_as = "gold" if log or design in ("random", "mixed") else "calibration"
        if gold_as == "gold":
            options["item"] = roles.get("item", "item")
    if test.path is None or (gold is not None and gold.path is None):
        notes.append(
            "A dataframe has no file name to put in a command: write it to CSV or Parquet and "
            "profile the file, or count it with JudgeCounts.from_frames(...) with the columns "
            "above."
        )
        return _Plan(None, options, gold_as, tuple(notes))
    argv = ["bayesjudge", "estimate", "--test", test.path]
    for option, value in reading.items():
        if value is not None:
            argv += [f"--{option}", value]
    if gold_as is not None:
        argv += [f"--{gold_as}", gold.path]
    shown = dict(options, system=None if log else options["system"])
    if log:
        shown["judge"] = roles.get("judge") if test.format == "jsonl" else None
    # estimate's --item has no default for a CSV/Parquet table read without --gold
    implied = {**_DEFAULTS, "item": "item" if log or gold_as == "gold" else None}
    for role in ("judge", "human", "system", "stratum", "item"):
        value = shown[role]
        if value is not None and value != implied.get(role):
            argv += [_OPTIONS[role], str(value)]
    if not log and "repeats" in options:
        argv += ["--repeats", str(options["repeats"])]
    if positive is not None:
        argv += ["--positive", str(positive)]
    if categories is not None and not categories.numeric:
        # the alphabetical order is no order: name it, for the user to see and set
        argv += ["--categories", _category_option(categories.categories)]
    if not labelled and "repeats" in options:
        notes.append(
            "No human labels, and the verdicts hold repeated verdicts of an item (epochs, "
            "samples), for which estimate has no uncorrected (naive) estimate: label some "
            "items in a gold file (a separate calibration set with its own verdicts, columns "
            "item, judge and human) and profile again with --gold."
        )
        return _Plan(None, options, gold_as, tuple(notes))
    if not labelled and categories is not None:
        notes.append(
            "No human labels: estimate has no uncorrected (naive) estimate of K-category "
            "verdicts (its methods correct for the judge's confusion, estimated from labelled "
            "items). Label a random subset of the judged items in a --human column (or a gold "
            "file) and profile again."
        )
        return _Plan(None, options, gold_as, tuple(notes))
    if not labelled:
        argv += ["--method", "naive"]
        notes.append(
            "Without human labels only the naive estimate (the judge's raw pass rate, "
            "uncorrected) can be computed; label a random subset of the judged items "
            "(bayesjudge allocate sizes it) to correct it."
        )
    return _Plan(tuple(argv), options, gold_as, tuple(notes))


def _several(frame: pd.DataFrame, column: str) -> bool:
    return frame[column][~_blank(frame[column])].nunique() > 1


def _count(
    test: _Table, gold: _Table | None, plan: _Plan, found: _Categories | None = None
) -> tuple[JudgeCounts | CategoricalCounts, list[str]]:
    """Count the tables as the next command would; return the counts and warnings raised.

    K-category labels (``found``) are counted by :meth:`CategoricalCounts.from_frames` with
    the categories in the commands' order (``cli._categorical.read_table_counts``).
    """
    options = dict(plan.options)
    cls = JudgeCounts
    if found is not None:
        if "repeats" in options:
            raise ValueError(
                "repeated verdicts of an item (a repeat column, a log's epochs) are not "
                "supported for K-category verdicts yet: keep one verdict per item, or count "
                "every row as an independent item on purpose (no --item, no --repeats)."
            )
        cls = CategoricalCounts
        options = {k: options[k] for k in ("judge", "human", "system", "stratum", "item")}
        options["categories"] = found.categories
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if plan.gold_as == "gold":
            joined = harness.join_gold(
                test.frame, gold.frame, item=options["item"], human=options["human"],
                judge=options["judge"],
            )  # fmt: skip
            counts = _from_frames(joined.test, joined.calibration, options, joined.design, cls)
        else:
            calibration = gold.counted if plan.gold_as == "calibration" else None
            counts = _from_frames(test.counted, calibration, options, cls=cls)
    return counts, [str(w.message) for w in caught]


def _from_frames(test, calibration, options: dict, design=None, cls=JudgeCounts):
    """Count the tables as ``estimate`` does (``cli._common.read_counts``); ``cls`` counts.

    A calibration set without the system (stratum) column is one set for every system
    (stratum): counted once and attached to each group.
    """
    groups = {dim: options.get(dim) for dim in ("system", "stratum")}
    if calibration is not None and any(groups.values()):
        columns = as_frame(calibration, "calibration").collect_schema().names()
        absent = {dim for dim, col in groups.items() if col is not None and col not in columns}
        if absent:
            tests = cls.from_frames(test, None, **{**options, "human": None})
            kept = {k: v for k, v in options.items() if k not in ("item", "repeats", *absent)}
            labelled = cls.from_frames(None, calibration, **kept, design="stratified")
            return tests.with_calibration_from(labelled)
    return cls.from_frames(test, calibration, design=design, **options)


def _group_problems(counts: JudgeCounts) -> list[Problem]:
    """Find groups whose labelled items lack a human class or hold few of one, empty groups."""
    frame = counts.to_frame()
    out = []
    empty = frame[frame[["n", "m0", "m1"]].sum(axis=1) == 0]
    if len(empty):
        shown = "; ".join(
            f"system={r.system!s}, stratum={r.stratum!s}" for r in empty.head(5).itertuples()
        )
        out.append(
            Problem(
                "empty_groups",
                "note",
                f"{len(empty)} (system, stratum) groups have no items at all ({shown}"
                f"{' …' if len(empty) > 5 else ''}): that system was not judged on that "
                f"stratum. Their estimates are undefined (NaN).",
            )
        )
    if int(frame["n"].sum()) == 0 and int((frame["m0"] + frame["m1"]).sum()) > 0:
        out.append(
            Problem(
                "all_labelled",
                "note",
                "Every judged item has a human label (n = 0): the human labels alone estimate "
                "θ (estimate's human-only column); the judge adds nothing to it.",
            )
        )
    lacking = frame[((frame["m0"] == 0) | (frame["m1"] == 0)) & (frame["m0"] + frame["m1"] > 0)]
    if len(lacking):
        shown = "; ".join(
            f"system={r.system!s}, stratum={r.stratum!s}: m0={r.m0}, m1={r.m1}"
            for r in lacking.head(5).itertuples()
        )
        out.append(
            Problem(
                "one_class",
                "error",
                f"In {len(lacking)} groups the labelled items are all of one human class "
                f"({shown}), so the judge's accuracy on the other class cannot be estimated "
                f"and neither can θ there. Label items of both classes in every group (or "
                f"estimate without --stratum / --system to pool the groups).",
            )
        )
    few = frame[
        (frame[["m0", "m1"]].min(axis=1) > 0) & (frame[["m0", "m1"]].min(axis=1) < MIN_LABELS)
    ]
    if len(few):
        shown = "; ".join(
            f"system={r.system!s}, stratum={r.stratum!s}: m0={r.m0}, m1={r.m1}"
            for r in few.head(5).itertuples()
        )
        out.append(
            Problem(
                "few_labels",
                "warning",
                f"{len(few)} groups have fewer than {MIN_LABELS} labelled items of a human "
                f"class ({shown}): their intervals will be wide. bayesjudge allocate says how "
                f"many labels a target width needs.",
            )
        )
    return out


def _evaluator_problems(table: _Table, roles, labels: list[Labels]) -> list[Problem]:
    """Find judges (by name) whose labelled items all have one human label."""
    if "evaluator" not in roles or "human" not in roles:
        return []
    human = roles["human"]
    lab = next((x for x in labels if x.table == table.name and x.column == human), None)
    if lab is None:
        return []
    meaning = {v: m for v, _, m in lab.values}
    frame = table.frame[_labelled(table.frame, human)]
    classes = frame[human].map(lambda v: meaning.get(_shown(v))).groupby(frame[roles["evaluator"]])
    lacking = [str(name) for name, vals in classes if vals.dropna().nunique() < 2]
    if not lacking:
        return []
    return [
        Problem(
            "judge_one_class",
            "error",
            f"The labelled items of {len(lacking)} judges (column {roles['evaluator']!r}: "
            f"{', '.join(repr(n) for n in lacking[:5])}) all have one human label, so that "
            f"judge's errors on the other class cannot be estimated.",
        )
    ]


# --- the profile -----------------------------------------------------------------------------


def profile_table(
    test,
    gold=None,
    *,
    judge: str | None = None,
    human: str | None = None,
    system: str | None = None,
    stratum: str | None = None,
    item: str | None = None,
    evaluator: str | None = None,
    repeats: str | None = None,
    positive=None,
    format: str | None = None,
    scorer: str | None = None,
    metric: str | None = None,
) -> Profile:
    """Profile a table of judge verdicts (and a gold file of human labels) before estimating.

    Parameters
    ----------
    test : dataframe or path
        The judged items: a CSV/TSV or Parquet file (read as :meth:`JudgeCounts.from_frames`
        reads it: CSV as text), an evaluation harness log read by
        :func:`bayesjudge.data.harness.read_table` (Inspect ``.eval``/``.json``, lm-eval
        ``samples_*.jsonl``, JSON Lines), or any dataframe narwhals accepts.
    gold : dataframe or path, optional
        Human labels: a subset of the judged items (matched by item id: the random
        labelling design) or a separate calibration set with its own verdicts (stratified).
    judge, human, system, stratum, item, evaluator, repeats : str, optional
        The columns of the verdict, the human label, the evaluated system, the stratum, the
        item id, the judge's name and the repeat number (epoch). Each one not given is
        guessed from the column names (:data:`ROLE_NAMES`) and, for the verdict, the human
        label and the item id, from the values; :attr:`Profile.guessed` lists the guesses.
    positive : scalar, optional
        The label value meaning correct, as ``estimate --positive``.
    format : str, optional
        The format of ``test`` (see :func:`harness.read_table`); default: by its suffix.
    scorer, metric : str, optional
        Which scorer (Inspect) or metric (lm-eval) of a log holds the verdicts, as
        ``estimate --scorer/--metric``.

    Returns
    -------
    Profile
        Columns and roles, label values and their meanings, groups, items and repeats, the
        overlap of judged and labelled items, the labelling design, the counts ``estimate``
        would use, the problems found and the next command (``Profile.command_line``).

    Raises
    ------
    ValueError
        If a given column is not in the table, or a file cannot be read (the reader's message).
    FileNotFoundError, IsADirectoryError, TypeError
        As :func:`bayesjudge.data.as_frame`.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"id": ["a", "b", "c", "d"], "model": ["x", "x", "y", "y"],
    ...                       "verdict": ["yes", "no", "yes", "yes"],
    ...                       "gold": ["yes", None, None, "no"]})
    >>> p = profile_table(table)
    >>> p.roles["test"]
    {'judge': 'verdict', 'human': 'gold', 'item': 'id', 'system': 'model'}
    >>> p.design, [c["n"] for c in p.counts]
    ('random', [1, 1])
    >>> [q.code for q in p.problems]
    ['one_class']
    """
    log_keys = {
        "item": item, "judge": judge, "scorer": scorer, "metric": metric, "system": system,
        "repeats": repeats,
    }  # fmt: skip
    read, reading, read_problems, names = _read_test(test, format, log_keys)
    tables = [read]
    item, judge, system, repeats = (names[r] for r in ("item", "judge", "system", "repeats"))
    if gold is not None:
        # A log's own positive verdict (Inspect's "C") reads a gold file's verdicts too, as
        # estimate's join of the two does.
        tables.append(replace(_read(gold, "gold", None, {}), positive=tables[0].positive))
    given = {
        "judge": judge, "human": human, "system": system, "stratum": stratum, "item": item,
        "evaluator": evaluator, "repeats": repeats,
    }  # fmt: skip
    columns = _test_columns(tables[0], given, gold is not None)
    troles = _roles(columns, "test")
    groles: dict[str, str] = {}
    if gold is not None:
        gold_given = {r: c for r, c in troles.items() if c in tables[1].frame.columns}
        if human is not None or "human" not in gold_given:
            gold_given.pop("human", None)
            if human is not None:
                gold_given["human"] = human
        inherited = {r for r in gold_given if r != "human" or human is None}
        gold_columns = _assign(_profile_columns(tables[1]), gold_given, "gold", inherited)
        columns += gold_columns
        groles = _roles(gold_columns, "gold")
    graded = _gold_grades(tables, groles) if positive is None else None
    if graded is not None:
        positive = tables[0].positive  # the next command passes it: --positive C
    labels = [
        lab
        for t, r in zip(tables, (troles, groles), strict=False)
        for lab in _labels(t, r, positive)
    ]
    found_k = _categorical(tables, troles, groles, positive)
    if found_k is None:
        problems = _label_problems(labels, positive)
    else:
        labels = [
            replace(lab, values=tuple((v, c, None) for v, c, _ in lab.values), categorical=True)
            for lab in labels
        ]
        problems = [p for p in _label_problems(labels, positive) if p.code == "missing_verdicts"]
        problems += _category_problems(found_k, troles, groles, tables)
    items, item_problems = _items(tables[0], troles)
    problems += item_problems + ([graded] if graded is not None else [])
    problems += read_problems
    design = (
        _one_table(tables[0], troles) if gold is None else _gold_design(*tables, troles, groles)
    )
    problems += design.problems
    problems += _role_problems(tables, troles, groles, design)
    continuous = _not_a_verdict(tables[0], troles)
    if continuous is not None:  # says more than "no column looks like a verdict"
        problems = [continuous, *(p for p in problems if p.code != "no_verdict_column")]
    plan = _plan(
        tables[0], tables[1] if gold is not None else None, troles, groles, design.name,
        positive, reading, repeated=bool(items and items["repeated"]), categories=found_k,
    )  # fmt: skip
    counts = None
    if "judge" in troles and not any(p.severity == "error" for p in problems):
        try:
            found, caught = _count(
                tables[0], tables[1] if gold is not None else None, plan, found_k
            )
        except ValueError as err:
            problems.append(Problem("command_fails", "error", f"estimate would stop: {err}"))
        else:
            problems += [Problem("counting_warning", "warning", m) for m in caught]
            if found_k is not None:
                counts = _categorical_rows(found)
            else:
                counts = tuple(
                    {k: plain_value(v) for k, v in row.items()}
                    for row in found.to_frame().to_dict(orient="records")
                )
                problems += _group_problems(found)
    if found_k is None:  # a judge's labels of one human class: a correct/incorrect check
        table, roles = (tables[1], groles) if gold is not None else (tables[0], troles)
        problems += _evaluator_problems(table, roles, labels)
    files = {t.name: {"source": t.source, "format": t.format, "rows": len(t.frame)} for t in tables}
    files.setdefault("gold", None)
    return Profile(
        files=files,
        columns=tuple(columns),
        roles={"test": troles, "gold": groles if gold is not None else None},
        labels=tuple(labels),
        systems=_groups(tables[0].frame, troles.get("system")),
        strata=_groups(tables[0].frame, troles.get("stratum")),
        judges=_groups(tables[0].frame, troles.get("evaluator")),
        items=items,
        overlap=design.overlap,
        design=design.name,
        design_reason=design.reason,
        counts=counts,
        problems=tuple(problems),
        command=plan.argv,
        notes=plan.notes
        if found_k is None
        else (_category_note(found_k, plan.argv is not None), *plan.notes),
        categories=None if found_k is None else tuple(found_k.categories),
    )


def _gold_grades(tables: list[_Table], groles) -> Problem | None:
    """Return a note where the gold file's human labels are Inspect's grades (as the log's).

    estimate reads a gold file's ``C``/``I`` as correct/incorrect only with ``--positive C``
    (the letters of a gold file are its authors'); the next command passes it, and says so.
    """
    positive = tables[0].positive
    if len(tables) < 2 or positive != harness.INSPECT_CORRECT or "human" not in groles:
        return None
    column = tables[1].frame[groles["human"]]
    values = {str(v).strip() for v in column[~_blank(column)].unique()}
    if not values or not values <= {harness.INSPECT_CORRECT, harness.INSPECT_INCORRECT}:
        return None
    return Problem(
        "gold_inspect_grades",
        "note",
        f"The gold file's human labels (column {groles['human']!r}) are Inspect's grades "
        f"{', '.join(repr(v) for v in sorted(values))}, as the log's verdicts are; estimate "
        f"reads them as correct/incorrect only with --positive {positive} ('C' correct, 'I' "
        f"incorrect, in both files), so the next command passes it.",
    )


def _read_test(test, format, keys: dict) -> tuple[_Table, dict, list[Problem], dict]:
    """Read the verdict file as estimate does (:func:`_read`).

    Return it, the next command's options that read it so, the reader's problems (its
    warnings, keys no option reads) and the columns of the given item, judge, system and
    repeats in the table read: a log's options name its keys (JSON Lines) or rename its model,
    and the tidy table read with them has the columns item, judge, system and epoch.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # a log's own warnings (a run that did not finish)
        table = _read(test, "test", format, keys)
    reading = {"test-format": format, "scorer": keys["scorer"], "metric": keys["metric"]}
    problems = _unread_keys(table, keys)
    problems += [Problem("reading_warning", "warning", str(w.message)) for w in caught]
    names = {role: keys[role] for role in ("item", "judge", "system", "repeats")}
    if table.format in harness.HARNESS_FORMATS:
        reading.update(_log_options(table.format, keys))
        tidy = {"item": "item", "judge": "judge", "system": "system", "repeats": "epoch"}
        names = {role: name and tidy[role] for role, name in names.items()}
    return table, reading, problems, names


def _unread_keys(table: _Table, keys: Mapping[str, str | None]) -> list[Problem]:
    """Return notes of JSON Lines keys named like a system or a repeat number, not read.

    estimate reads one system ``all`` and one verdict per item unless --system and
    --repeats name the keys, as the profile does; a key named ``model`` or ``epoch`` is
    likely meant, so the note gives the option.
    """
    if table.format != "jsonl" or table.path is None:
        return []
    with open(table.path, encoding="utf-8-sig") as handle:
        line = next((x for x in handle if x.strip()), "{}")
    try:
        first = json.loads(line)
    except ValueError:
        return []
    out = []
    for role, option in (("system", "--system"), ("repeats", "--repeats")):
        if keys.get(role) is not None or not isinstance(first, dict):
            continue
        hit = next((k for k in first if _key(k) in ROLE_NAMES[role]), None)
        if hit is not None and hit not in (keys.get("item"), keys.get("judge")):
            what = "the system" if role == "system" else "the repeat number of an item"
            out.append(
                Problem(
                    "unread_key",
                    "note",
                    f"The JSON Lines records have a key {hit!r}, named like {what}, which "
                    f"is not read without {option} {shlex.quote(hit)} (as in estimate): "
                    f"{'one system, all' if role == 'system' else 'one verdict per item'}. "
                    f"Profile again with {option} {shlex.quote(hit)} if that is what it holds.",
                )
            )
    return out


def _not_a_verdict(table: _Table, troles) -> Problem | None:
    """Return an error where a log's verdict column holds a continuous score (lm-eval's f1).

    A log's reader makes the ``judge`` column from the metric or scorer chosen; many distinct
    numbers, some not whole, are a score to threshold or a metric to change, not a verdict.
    """
    if table.format not in harness.HARNESS_FORMATS or "judge" in troles:
        return None
    if "judge" not in table.frame.columns:
        return None
    values = pd.to_numeric(table.frame["judge"].dropna(), errors="coerce")
    distinct = values.dropna().unique()
    if values.isna().any() or len(distinct) <= _LABEL_MAX or (distinct % 1 == 0).all():
        return None
    frame = table.frame
    source = {
        "lm-eval": f"the metric {frame['metric'].iloc[0]!r}" if "metric" in frame else "",
        "inspect": f"the scorer {frame['scorer'].iloc[0]!r}" if "scorer" in frame else "",
    }.get(table.format) or "the verdict key"
    option = {"lm-eval": "--metric", "inspect": "--scorer"}.get(table.format, "--judge")
    return Problem(
        "verdict_not_binary",
        "error",
        f"The verdicts of {table.source!r} ({source}) are not verdicts: {len(distinct)} "
        f"distinct numbers between {distinct.min():g} and {distinct.max():g}. Choose one with "
        f"two values (correct/incorrect, e.g. 0/1) with {option}, or threshold the score "
        f"into a verdict first.",
    )


def _log_options(kind: str, keys: Mapping[str, str | None]) -> dict:
    """Return the next command's options that read a log as the profile read it.

    JSON Lines: the keys of the item, the verdict, the system and the repeat number
    (defaults left out); Inspect and lm-eval: ``--system``, the name given to the model.
    """
    if kind != "jsonl":
        return {"system": keys.get("system")}
    defaults = {"item": "item", "judge": "judge", "system": None, "repeats": None}
    return {
        option: keys.get(option)
        for option, default in defaults.items()
        if keys.get(option) not in (None, default)
    }


def _profile_columns(table: _Table) -> list[Column]:
    return [_column(table.name, str(name), table.frame[name])[0] for name in table.frame.columns]


def _test_columns(table: _Table, given: dict, has_gold: bool) -> list[Column]:
    """Profile the test table's columns and give them roles (a human column only if present)."""
    given = dict(given)
    if has_gold and given.get("human") not in table.frame.columns:
        given["human"] = None  # the gold file's column
    columns = _profile_columns(table)
    assigned = _assign(columns, given, "test")
    if has_gold:  # the labels come from the gold file; a test column is not read
        assigned = [
            Column(**{**c.__dict__, "role": None, "how": None}) if c.role == "human" else c
            for c in assigned
        ]
    return assigned


def _role_problems(tables, troles, groles, design: _Design) -> list[Problem]:
    """Missing verdict column; several judges pooled; no labels."""
    out = []
    if "judge" not in troles:
        out.append(
            Problem(
                "no_verdict_column",
                "error",
                "No column of the verdict file looks like the judge's verdict (two values such "
                "as yes/no, 1/0, pass/fail, or a column named judge/verdict/score); name it "
                "with --judge.",
            )
        )
    if (
        "system" in troles
        and "evaluator" in troles
        and _several(tables[0].frame, troles["evaluator"])
    ):
        out.append(
            Problem(
                "several_judges",
                "warning",
                f"Column {troles['evaluator']!r} names several judges; estimate counts their "
                f"verdicts together per system. Profile and estimate one judge's rows at a time "
                f"(one file per judge).",
            )
        )
    if design.name in ("none", "unknown"):
        out.append(
            Problem(
                "no_labels",
                "error" if design.name == "unknown" else "warning",
                f"No usable human labels ({design.reason}): the judge's errors cannot be "
                f"estimated, so no corrected estimate can be made.",
            )
        )
    return out
