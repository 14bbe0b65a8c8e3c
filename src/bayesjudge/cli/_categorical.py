"""K-category verdicts on the command line: ``--categories``, ``--scores`` and their tables.

``estimate``, ``fit`` and ``report`` read their tables with :func:`read_table_counts`: binary
:class:`~bayesjudge.data.JudgeCounts` as before, or :class:`~bayesjudge.data.CategoricalCounts`
when the judge and human label columns hold more than two distinct values, or when
``--categories`` is given. The same holds for harness logs and ``--gold`` files, read and
joined by item id as for binary verdicts (:func:`~bayesjudge.cli._common.read_log_tables`).
Labels are compared as the tables hold them: a CSV file's labels are text (``"1"`` and ``"01"``
are two labels, and refused together because they look alike), a Parquet column keeps its
type; a log's numbers match a CSV gold file's numeric text by value. Without ``--categories``
the order is the sorted one of :func:`bayesjudge.data.category_labels.infer_categories`
(numbers and numeric text by value, else alphabetically), and every command prints it.

``--categories`` and ``--scores`` take a short form (``A,B,C`` and ``A=1,B=0.5,C=0``) and, for
labels holding ``,`` or ``=``, a JSON form (``'["A,1", "B"]'`` and
``'{"A=1": 1, "B": 0}'``). ``--prior-theta``, ``--prior-confusion``, ``--prior-error-mean``
and ``--prior-error-scale`` (``fit``, ``report``) give the priors of
:class:`~bayesjudge.models.categorical.CategoricalPriors`.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import NamedTuple

import narwhals.stable.v2 as nw

from bayesjudge._text import terminal_safe
from bayesjudge.cli._common import (
    LogTables,
    UsageError,
    is_harness_log,
    log_judge_counts,
    read_counts,
    read_log_tables,
)
from bayesjudge.data import CategoricalCounts, JudgeCounts, as_frame
from bayesjudge.data.category_labels import (
    as_number,
    check_inferred_count,
    infer_categories,
    label_key,
    label_kind,
    lookalikes,
    numbers_for_text,
    plain_label,
)
from bayesjudge.data.harness import INSPECT_CORRECT, INSPECT_INCORRECT
from bayesjudge.data.labels import binary_classes, binary_value

#: How many label values an error message lists before "and N more".
_SHOWN = 20

#: How many values of each column the vocabulary error lists (and how many odd values).
_ODD_SHOWN = 5

#: An Inspect log's grades read as correct/incorrect (the log's ``attrs["positive"]``).
_INSPECT = {INSPECT_CORRECT: 1, INSPECT_INCORRECT: 0}


# --- argparse types ----------------------------------------------------------------------------


def parse_categories(text: str) -> list:
    """Parse ``--categories``: ``A,B,C`` or a JSON list ``'["A,1", "B"]'`` (argparse type).

    Examples
    --------
    >>> parse_categories("A, tie ,B"), parse_categories('["x,1", "y"]')
    (['A', 'tie', 'B'], ['x,1', 'y'])
    """
    if text.lstrip().startswith("["):
        try:
            values = json.loads(text)
        except json.JSONDecodeError as err:
            raise argparse.ArgumentTypeError(
                f"{text!r} starts with '[' but is not a JSON list ({err.msg}); write e.g. "
                '\'["A", "tie", "B"]\' or A,tie,B'
            ) from None
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise argparse.ArgumentTypeError(
                f"the JSON form must be a list of strings (the labels as text), e.g. "
                f'\'["A", "tie", "B"]\'; got {text!r}'
            )
    else:
        values = [part.strip() for part in text.split(",")]
    if any(not v.strip() for v in values):
        raise argparse.ArgumentTypeError(
            f"every category needs a label (no empty item between commas); got {text!r}. A "
            'label holding a comma is written in the JSON form, e.g. \'["A,1", "B"]\''
        )
    spaced = [v for v in values if v != v.strip()]
    if spaced:
        # The tables' labels are read stripped: " A" could never match a label.
        raise argparse.ArgumentTypeError(
            f"labels are compared without surrounding spaces (the tables' values are read "
            f"stripped), so {spaced!r} would match nothing; write {[v.strip() for v in spaced]!r}"
        )
    if len(values) < 2:
        raise argparse.ArgumentTypeError(
            f"needs at least two categories in order, e.g. A,tie,B or 1,2,3,4,5; got {text!r}"
        )
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        raise argparse.ArgumentTypeError(f"each category once; {repeated!r} repeat in {text!r}")
    return values


def parse_scores(text: str) -> dict[str, float]:
    """Parse ``--scores``: ``A=1,B=0.5,C=0`` or a JSON object (argparse type).

    Every value must be a finite number; names are matched to the categories later.

    Examples
    --------
    >>> parse_scores("A=1, tie=0.5, B=0"), parse_scores('{"a=b": 1, "c": -2.5}')
    ({'A': 1.0, 'tie': 0.5, 'B': 0.0}, {'a=b': 1.0, 'c': -2.5})
    """
    if text.lstrip().startswith("{"):
        pairs = _json_scores(text)
    else:
        pairs = []
        for part in text.split(","):
            pieces = part.split("=")
            if len(pieces) != 2 or not pieces[0].strip():
                raise argparse.ArgumentTypeError(
                    f"each item must be CATEGORY=VALUE, e.g. A=1,tie=0.5,B=0; got {part!r} in "
                    f"{text!r}. For a category holding '=' or ',' use the JSON form, e.g. "
                    '\'{"A=1": 1, "B": 0}\''
                )
            name, raw = pieces[0].strip(), pieces[1].strip()
            try:
                value = float(raw)
            except ValueError:
                value = math.nan
            if not raw or "_" in raw or not math.isfinite(value):
                raise argparse.ArgumentTypeError(
                    f"the score of {name!r} must be a finite number, e.g. 1 or 0.5; got {raw!r}"
                )
            pairs.append((name, value))
    names = [name for name, _ in pairs]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise argparse.ArgumentTypeError(f"each category once; {repeated!r} repeat in {text!r}")
    if not pairs:
        raise argparse.ArgumentTypeError(f"needs one CATEGORY=VALUE per category; got {text!r}")
    return dict(pairs)


def _json_scores(text: str) -> list[tuple[str, float]]:
    try:
        pairs = json.loads(text, object_pairs_hook=list)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(
            f"{text!r} starts with '{{' but is not a JSON object ({err.msg}); write e.g. "
            '\'{"A": 1, "tie": 0.5, "B": 0}\' or A=1,tie=0.5,B=0'
        ) from None
    if not isinstance(pairs, list) or any(not isinstance(p, tuple | list) for p in pairs):
        raise argparse.ArgumentTypeError(f"must be one JSON object; got {text!r}")
    out = []
    for name, value in pairs:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not math.isfinite(value):
            raise argparse.ArgumentTypeError(
                f"the score of {name!r} must be a finite JSON number, e.g. 1 or 0.5; got "
                f"{json.dumps(value)}"
            )
        out.append((name, float(value)))
    return out


def add_category_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--categories``, ``--ordered`` and ``--scores`` (estimate, fit, report)."""
    group = parser.add_argument_group(
        "K-category verdicts (preferences with ties, graded rubrics: label columns with more "
        "than two values)"
    )
    group.add_argument(
        "--categories",
        type=parse_categories,
        metavar="A,B,C",
        help="the categories of the label columns, in order: reads them as K categories "
        "(also K = 2). Default, where the columns hold more than two values: every value "
        "found, sorted (numbers and numeric text by value, else alphabetically; printed). A "
        'label holding a comma: the JSON form \'["A,1", "B"]\'. An error with --positive '
        "unless K = 2",
    )
    group.add_argument(
        "--ordered",
        action="store_true",
        help="the categories are an ordinal scale in that order (a graded rubric); implied "
        "by fit's --confusion ordinal",
    )
    group.add_argument(
        "--scores",
        type=parse_scores,
        metavar="A=1,B=0.5,C=0",
        help="a value for every category: also estimate the mean score Σ value × share (a "
        "rubric mean; A=1,tie=0.5,B=0 is A's win rate with ties counted half). Names holding "
        "'=' or ',': the JSON form '{\"A=1\": 1, \"B\": 0}'",
    )


# --- reading the tables --------------------------------------------------------------------------


class _Tables(NamedTuple):
    """The tables K-category counts are built from, and their column names."""

    test: object  # a path or a dataframe
    calibration: object
    judge: str
    human: str | None
    system: str | None
    item: str | None
    design: str | None
    epochs: int  # a harness log's epochs (1: one verdict per item); 0 for tables
    positive: object = None  # a log's value meaning correct (Inspect's "C"), else None


def _check_roles(args) -> None:
    """Refuse one table column named for two roles (--item and --system, …)."""
    roles = ("judge", "human", "system", "stratum", "item", "repeats")
    seen: dict = {}
    for role in roles:
        column = getattr(args, role, None)
        if column is None:
            continue
        if column in seen:
            raise UsageError(
                f"--{seen[column]} and --{role} name the same column "
                f"{terminal_safe(repr(column))}; each role needs its own column."
            )
        seen[column] = role


def read_table_counts(args) -> JudgeCounts | CategoricalCounts:
    """Count --test and --calibration (or --gold) as binary or K-category counts (module doc).

    Binary unless ``--categories`` is given or the judge column (of both tables) or the human
    column holds more than two distinct values; ``--positive`` keeps its binary meaning and is
    refused with ``--categories`` of K != 2. A harness log (Inspect, lm-eval, JSON Lines) or a
    table with --gold is read by :func:`~bayesjudge.cli._common.read_log_tables` for both: its
    verdicts as the log holds them (Inspect's C, I, P, N; numbers; text), --gold's labels
    joined by item id. Raises :class:`UsageError` for what K-category counts cannot take
    (``--repeats``, a log's epochs, repeated item ids), for labels outside ``--categories``,
    for look-alike labels, for inferred categories where the verdicts and the human labels
    are not one vocabulary (:func:`_refuse_foreign_labels`), and for a list or object where a
    log holds a verdict (:func:`_refuse_nested_labels`).
    """
    categories = getattr(args, "categories", None)
    scores = getattr(args, "scores", None)
    log = None
    if getattr(args, "gold", None) is not None or is_harness_log(args):
        log = read_log_tables(args)
        _refuse_nested_labels(log, args)
        log = _numeric_gold(log, args.human)
        tables = _Tables(
            log.test, log.calibration, log.judge,
            args.human if args.gold is not None else None, log.system, log.item, log.design,
            int(log.test["epoch"].max()) if log.log and len(log.test) else 0, log.positive,
        )  # fmt: skip
    else:
        _check_roles(args)
        tables = _Tables(
            args.test, args.calibration, args.judge, args.human, args.system,
            getattr(args, "item", None), getattr(args, "design", None), 0,
        )  # fmt: skip
    judge, human = _label_values(tables)
    found = {**judge, **human}
    if args.positive is not None:
        _check_positive(args, categories, found)
        return read_counts(args) if log is None else log_judge_counts(args, log)
    if categories is None and binary_classes(judge) <= 2 and binary_classes(human) <= 2:
        if getattr(args, "ordered", False):
            raise UsageError(
                "--ordered is for K-category labels; these label columns hold two values each, "
                "read as correct/incorrect. Drop --ordered, or name the categories in order "
                "with --categories."
            )
        if scores is not None:
            raise UsageError(
                f"--scores is for K-category labels; the judge column holds "
                f"{_listed(infer_categories(judge.values()))} and the human column "
                f"{_listed(infer_categories(human.values()))}, "
                "read as correct/incorrect. To score two categories, name them in order "
                "with --categories."
            )
        try:
            return read_counts(args) if log is None else log_judge_counts(args, log)
        except ValueError as err:
            _binary_hint(err, found)
            raise
    return _categorical_counts(args, categories, (judge, human), tables)


def _label_class(label, inspect: bool = False):
    """Return a label's binary class (``'yes'``, ``1`` and ``True`` are one), else its key.

    With ``inspect`` (an Inspect log), its grades ``C`` and ``I`` are correct and incorrect.
    """
    if inspect and label in _INSPECT:
        return ("binary", _INSPECT[label])
    value = binary_value(label)
    return ("binary", value) if value is not None else label_key(label)


def _refuse_foreign_labels(args, tables: _Tables, judge: dict, human: dict) -> None:
    """Refuse inferred categories where the verdicts and the labels are not one vocabulary.

    K categories are inferred from the union of both columns, so a judge's ``'c'`` beside
    human ``yes``/``no`` labels (no value in common), or one stray ``'maybe'`` among 0/1
    labels (at most two shared values: the rest is binary), would become K >= 3 categories
    of which some have no calibration items or no verdicts: every estimate undefined, exit 0.
    The message names the odd values with their rows and items, both vocabularies, and
    ``--positive`` / ``--categories``.
    """
    if not judge or not human:
        return
    found = {"judge": judge, "human": human}
    inspect = tables.positive == INSPECT_CORRECT
    classes = {
        role: {_label_class(v, inspect) for v in labels.values()} for role, labels in found.items()
    }
    shared = classes["judge"] & classes["human"]
    if len(shared) > 2:
        return
    census = _label_census(tables, found)
    parts = []
    for role, other, name in (("judge", "human", "verdict"), ("human", "judge", "human label")):
        odd = [
            k for k in census[role] if _label_class(found[role][k], inspect) not in classes[other]
        ]
        if not shared or not odd:
            odd = _rare_values(census[role], inspect) if shared or len(classes[other]) <= 2 else []
        for key in odd[:_ODD_SHOWN]:
            rows, items = census[role][key]
            shown = f": item(s) {_listed(items)}" if items else ""
            parts.append(f"{name} {terminal_safe(repr(found[role][key]))} ({_rows(rows)}{shown})")
        if len(odd) > _ODD_SHOWN:
            parts.append(f"… ({len(odd) - _ODD_SHOWN} more {name}s)")
    why = "they share no value"
    if shared:
        both = [v for v in judge.values() if _label_class(v, inspect) in shared]
        why = (
            f"they have only {len(shared)} value(s) in common ({_listed(infer_categories(both))}"
            f"; {'C and I of an Inspect log are correct and incorrect, ' if inspect else ''}"
            f"'yes', 1 and True are one value, so are 'no', 0 and False), and K categories "
            f"need the same values in both"
        )
    where = _label_sources(args, tables)
    vocab = "; ".join(
        f"{what} ({where[role]}): "
        + ", ".join(
            f"{terminal_safe(repr(found[role][k]))} ({_rows(census[role][k][0])})"
            for k in list(census[role])[:_ODD_SHOWN]
        )
        + (f", … ({len(census[role]) - _ODD_SHOWN} more)" if len(census[role]) > _ODD_SHOWN else "")
        for role, what in (("judge", "verdicts"), ("human", "human labels"))
    )
    odd_text = f" The odd value(s): {'; '.join(parts)}." if parts else ""
    if len(judge) > 2 * _ODD_SHOWN and all(label_kind(v) == "number" for v in judge.values()):
        odd_text += (
            f" The judge column holds {len(judge)} distinct numbers: a score, not a verdict? "
            f"Turn it into verdicts (a threshold), or pick a 0/1 metric (--metric, lm-eval)."
        )
    raise UsageError(
        f"The judge's verdicts and the human labels are not one set of categories: {why}. "
        f"{vocab}.{odd_text} Read as K = {len({**judge, **human})} categories, those a column "
        f"never holds would have no calibration items or no verdicts, and every estimate "
        f"would be undefined. If the labels mean correct/incorrect, fix or drop the odd rows "
        f"(a mistyped or failed verdict, a stray label), or pass --positive VALUE (the value "
        f"meaning correct); if K categories are meant, name them in order with --categories."
    )


def _rare_values(census: dict, inspect: bool) -> list:
    """Return the keys of a column's values beyond its two usual ones, rarer than both.

    The two usual values are the most frequent (an Inspect log's ``C`` first); a value is
    named only when it is rarer than the second of them, so a tie names none.
    """
    first = label_key(INSPECT_CORRECT) if inspect else None
    ranked = sorted(census, key=lambda k: (k != first, -census[k][0]))
    if len(ranked) <= 2:
        return []
    second = census[ranked[1]][0]
    return [k for k in ranked[2:] if census[k][0] < second]


def _rows(n: int) -> str:
    return f"{n} row{'s' if n != 1 else ''}"


def _label_sources(args, tables: _Tables) -> dict[str, str]:
    """Where the judge and the human column are read from, for messages."""
    test = f"column {terminal_safe(repr(tables.judge))} of --test {terminal_safe(str(args.test))}"
    if getattr(args, "gold", None) is not None:
        source = f"--gold {terminal_safe(str(args.gold))}"
    elif tables.calibration is not None:
        source = f"--calibration {terminal_safe(str(args.calibration))}"
    else:
        source = f"--test {terminal_safe(str(args.test))}"
    return {"judge": test, "human": f"column {terminal_safe(repr(tables.human))} of {source}"}


def _label_roles(tables: _Tables) -> list[tuple[str, object, dict[str, str]]]:
    """Return (table name, table, {role: column}) of every label column that is read.

    The judge column of both tables, the human column of the calibration table (of the test
    table when it is the one table of the random design).
    """
    if tables.calibration is None:
        return [("test", tables.test, {"judge": tables.judge, "human": tables.human})]
    return [
        ("test", tables.test, {"judge": tables.judge}),
        ("calibration", tables.calibration, {"judge": tables.judge, "human": tables.human}),
    ]


def _label_census(tables: _Tables, found: dict[str, dict]) -> dict[str, dict]:
    """Per role and label key (of ``found``): the number of rows and up to 5 item ids.

    Counted over the tables :func:`_label_values` reads; item ids where the table has the
    item column. Called only to word an error, so it may read every row.
    """
    census: dict[str, dict] = {role: {} for role in found}
    roles = _label_roles(tables)
    for name, table, columns in roles:
        frame = as_frame(table, name)
        present = frame.collect_schema().names()
        for role, column in columns.items():
            if column is None or column not in present:
                continue
            wanted = [column] + ([tables.item] if tables.item in present else [])
            data = frame.select(*(nw.col(c) for c in dict.fromkeys(wanted))).collect()
            data = data.to_dict(as_series=False)
            ids = data.get(tables.item) if tables.item in present else None
            for i, value in enumerate(data[column]):
                label = plain_label(value)
                if label is None or isinstance(label, list | dict):
                    continue
                key = label_key(label)
                if key not in found[role]:
                    continue
                rows, items = census[role].get(key, (0, []))
                if ids is not None and len(items) < 5 and str(ids[i]) not in items:
                    items = [*items, str(ids[i])]
                census[role][key] = (rows + 1, items)
    return census


def _binary_hint(err: ValueError, found: dict) -> None:
    """Raise the binary reader's error with --categories named, where labels are not binary.

    Two classes per column are read as correct/incorrect; a 1/2 rubric or labels such as
    A/B then fail there with a message about ``positive`` only, never naming the option
    that reads them as categories.
    """
    odd = [v for v in found.values() if binary_value(v) is None]
    if not any(repr(v) in str(err) for v in odd):
        return  # an error about something else (a column, a group): no hint
    labels = infer_categories(found.values())
    plain = all("," not in str(v) and str(v) == str(v).strip() for v in labels)
    example = ""
    if plain and not lookalikes(labels) and len(labels) <= _SHOWN:
        example = " " + terminal_safe(",".join(str(v) for v in labels))
    raise UsageError(
        f"{err} Or, if the labels {_listed(labels)} are categories (a graded rubric, a "
        f"preference), not correct/incorrect, name them in order with --categories{example}."
    ) from None


def _refuse_nested_labels(log: LogTables, args) -> None:
    """Refuse a list or object where one verdict or label belongs (a JSON Lines value).

    A JSON Lines record may hold ``"judge": [1]``; counting (and reading numbers from the
    gold file) groups the label columns, which a list cannot be. The message names the key,
    the file and the items (a JSON Lines --test is refused with its lines by the reader).
    """
    gold = f"--gold {terminal_safe(str(args.gold))}" if args.gold is not None else None
    checks = [
        (log.test, log.judge, f"--test {terminal_safe(str(args.test))}", args.judge),
        (log.test, args.human, gold, args.human),
        (log.calibration, log.judge, gold, args.judge),
        (log.calibration, args.human, gold, args.human),
    ]
    for frame, column, where, key in checks:
        if frame is None or column not in frame.columns or frame[column].dtype != object:
            continue
        values = frame[column].to_numpy()
        rows = [i for i, v in enumerate(values) if isinstance(v, list | dict)]
        if not rows:
            continue
        items = [str(frame[log.item].iloc[i]) for i in rows[:5]]
        shown = [
            f"item {terminal_safe(repr(item))}: {terminal_safe(json.dumps(values[i], default=str))}"
            for item, i in zip(items, rows, strict=False)
        ]
        more = f"; … ({len(rows) - 5} more)" if len(rows) > 5 else ""
        raise UsageError(
            f"{where}: the key {terminal_safe(repr(key))} holds a list or object, not one "
            f"{'verdict' if key == args.judge else 'label'}, on {len(rows)} row(s): "
            f"{'; '.join(shown)}{more}. Give every record one value (text, a number or "
            f"true/false), or name the key holding it with "
            f"{'--judge' if key == args.judge else '--human'}."
        )


def _numeric_gold(log: LogTables, human: str) -> LogTables:
    """Read --gold's numeric text as numbers where the log's verdicts are numbers.

    A CSV gold file holds ``"1"`` where lm-eval or a JSON Lines log has the verdict ``1``
    (:func:`~bayesjudge.data.category_labels.numbers_for_text`); the binary reader matches
    them by value, and so do K categories. The log's own verdicts are never changed.
    """
    verdicts = log.test[log.judge].dropna().unique().tolist()
    frames = {"test": log.test, "calibration": log.calibration}
    columns = [("test", human), ("calibration", log.judge), ("calibration", human)]
    for name, column in columns:
        frame = frames[name]
        if frame is None or column not in frame.columns:
            continue
        mapping = numbers_for_text(verdicts, frame[column].dropna().unique().tolist())
        if mapping:
            frame = frame.copy() if frame is getattr(log, name) else frame
            frame[column] = frame[column].map(lambda v, m=mapping: m.get(v, v))
            frames[name] = frame
    return log._replace(**frames)


def _check_positive(args, categories, found) -> None:
    """Refuse --positive beside --categories of K != 2, or not among them."""
    if categories is None:
        return
    if len(categories) != 2:
        raise UsageError(
            f"--positive {terminal_safe(args.positive)} reads two labels as correct/incorrect, "
            f"but --categories names K = {len(categories)} categories "
            f"({_listed(categories)}): drop --positive to estimate every category's share "
            f"(with --scores for a mean score), or give two --categories."
        )
    if args.positive not in categories:
        raise UsageError(
            f"--positive {terminal_safe(args.positive)} is not one of --categories "
            f"{_listed(categories)}."
        )
    _check_inside(_typed(categories, found), found)


def _categorical_counts(args, given, roles: tuple[dict, dict], tables: _Tables):
    """Build CategoricalCounts from the tables (the shared-calibration case as read_counts).

    ``roles`` are the judge's and the human labels (:func:`_label_values`).
    """
    _check_single_verdicts(args, tables)
    found = {**roles[0], **roles[1]}
    clashes = lookalikes(list(found.values()))
    if clashes:
        shown = "; ".join(f"{terminal_safe(repr(a))} and {terminal_safe(repr(b))}"
                          for a, b in clashes[:3])  # fmt: skip
        raise UsageError(
            f"the label columns hold different labels that look alike or are one number "
            f"written differently: {shown}. They would be separate categories; make each "
            f"category one label in the tables (e.g. '1' everywhere, not '1' and '01')."
        )
    if given is None:
        try:
            check_inferred_count(list(found.values()), "the label columns", "--categories")
        except ValueError as err:
            raise UsageError(terminal_safe(str(err))) from None
        _refuse_foreign_labels(args, tables, *roles)
    categories = _typed(given, found) if given is not None else infer_categories(found.values())
    if given is not None:
        same = [
            [t for t, c in zip(given, categories, strict=True) if label_key(c) == key]
            for key in dict.fromkeys(label_key(c) for c in categories)
        ]
        same = [texts for texts in same if len(texts) > 1]
        if same:
            raise UsageError(
                f"--categories {_listed(same[0])} name one label of the tables (they are "
                f"read as numbers, as the label columns hold numbers); give each category once."
            )
    _check_inside(categories, found)
    if tables.item is not None and not tables.epochs:
        _check_unique_items(tables.test, tables.item, tables.system)
    ordered = bool(getattr(args, "ordered", False) or getattr(args, "confusion", None) == "ordinal")
    options = {"judge": tables.judge, "categories": categories, "ordered": ordered}
    groups = {"system": tables.system, "stratum": args.stratum}
    item, design = tables.item, tables.design
    if tables.calibration is not None:
        columns = as_frame(tables.calibration, "calibration").collect_schema().names()
        absent = [dim for dim, col in groups.items() if col is not None and col not in columns]
        if absent:  # one calibration set serving every system (stratum): counted once
            tests = CategoricalCounts.from_frames(
                tables.test, None, **groups, **options, human=None, item=item
            )
            kept = {dim: None if dim in absent else col for dim, col in groups.items()}
            calibration = CategoricalCounts.from_frames(
                None, tables.calibration, **kept, **options, human=tables.human,
                design="stratified" if tables.epochs else design,  # a log's separate gold set
            )  # fmt: skip
            counts = tests.with_calibration_from(calibration)
            return _source(counts, given)
    counts = CategoricalCounts.from_frames(
        tables.test, tables.calibration, **groups, **options, human=tables.human, item=item,
        design=design,
    )  # fmt: skip
    return _source(counts, given)


def _check_single_verdicts(args, tables: _Tables) -> None:
    """Refuse repeated verdicts of an item (--repeats, a log's epochs): no clusters yet."""
    if getattr(args, "repeats", None) is not None and tables.epochs <= 1:
        raise UsageError(
            f"--repeats {terminal_safe(args.repeats)}: repeated verdicts of an item are not "
            "supported for K-category verdicts yet (their counts have no clusters); keep one "
            "verdict per item, or drop --repeats and --item to count every verdict as an "
            "independent item on purpose."
        )
    if tables.epochs > 1:
        raise UsageError(
            f"--test {terminal_safe(args.test)}: the log judged each item in {tables.epochs} "
            "epochs; repeated verdicts of an item are not supported for K-category verdicts "
            "yet (their counts have no clusters, and counting every epoch as an item would "
            "understate the uncertainty). Run the evaluation with one epoch, or export one "
            "verdict per item to a CSV/Parquet table for --test."
        )


def _source(counts: CategoricalCounts, given) -> CategoricalCounts:
    """Record where the order came from: --categories ("given") or the sorted values."""
    counts.dataset.attrs["categories_source"] = "given" if given is not None else "inferred"
    return counts


def _label_values(tables: _Tables) -> tuple[dict, dict]:
    """Return the distinct non-blank labels of the judge and of the human columns, by key.

    The judge column of both tables, and the human column of the calibration table (or of
    the test table when it is the one table of the random design). A column that is absent
    is left to the counting's own message. The two roles are kept apart: binary tables may
    write verdicts as yes/no and labels as 1/0.
    """
    roles = _label_roles(tables)
    found: dict = {"judge": {}, "human": {}}
    for name, table, columns in roles:
        frame = as_frame(table, name)
        present = frame.collect_schema().names()
        for role, column in columns.items():
            if column is None or column not in present:
                continue
            values = frame.select(nw.col(column)).unique().collect().get_column(column)
            for value in values.to_list():
                label = plain_label(value)
                if label is None or (isinstance(label, float) and math.isnan(label)):
                    continue
                if isinstance(label, str) and not label:
                    continue
                found[role].setdefault(label_key(label), label)
    return found["judge"], found["human"]


def _typed(given: list[str], found: dict) -> list:
    """Match --categories' text to the tables' labels: numeric labels take numbers.

    A Parquet int column or a log's numeric verdicts (lm-eval's 0.0/0.5/1.0, Inspect's
    numeric scores) are matched by value: ``--categories 0,0.5,1`` names 0, 0.5 and 1.
    """
    by_text = {str(label): label for label in found.values()}
    numbers = bool(found) and all(label_kind(v) == "number" for v in found.values())
    # by float value: the text 0.1 names the float 0.1 (their exact decimals differ)
    by_value = {float(v): v for v in found.values()} if numbers else {}
    out = []
    for text in given:
        value = as_number(text) if numbers and "_" not in text else None
        if text in by_text:
            out.append(by_text[text])
        elif value is not None and float(value) in by_value:
            out.append(by_value[float(value)])
        elif value is not None:
            out.append(plain_label(int(value) if value == value.to_integral() else float(value)))
        else:
            out.append(text)
    return out


def _check_inside(categories: list, found: dict) -> None:
    """Refuse labels of the tables that are not among --categories, listing both."""
    allowed = {label_key(c) for c in categories}
    values = infer_categories(found.values())  # sorted: the tables' order is no order
    outside = [v for v in values if label_key(v) not in allowed]
    if outside:
        raise UsageError(
            f"the label columns hold {_listed(outside)}, not among --categories "
            f"{_listed(categories)}. Values found: {_listed(values)}. Add the missing "
            "categories to --categories, or fix the labels (a typo is never counted silently)."
        )


def _listed(values) -> str:
    """Return labels for a message: quoted, control characters escaped, at most 20."""
    values = list(values)
    shown = ", ".join(terminal_safe(repr(v)) for v in values[:_SHOWN])
    more = f" and {len(values) - _SHOWN} more" if len(values) > _SHOWN else ""
    return f"[{shown}{more}]"


def _check_unique_items(test, item: str, system: str | None) -> None:
    """Refuse item ids that repeat within a system: repeated verdicts are not supported."""
    frame = as_frame(test, "test")
    names = frame.collect_schema().names()
    if item not in names:
        return  # the counting names the missing column
    keys = [c for c in (system, item) if c is not None and c in names]
    # Rows without an id are items that match nothing, as the counting reads them: their
    # blanks are not one id repeated.
    present = ~nw.col(item).is_null()
    if frame.collect_schema()[item].is_float():
        present = present & ~nw.col(item).is_nan().fill_null(True)
    repeated = (
        frame.filter(present).group_by(keys).agg(nw.len().alias("__rows__"))
        .filter(nw.col("__rows__") > 1).collect()
    )  # fmt: skip
    if len(repeated):
        ids = repeated.get_column(item).to_list()
        raise UsageError(
            f"--item {terminal_safe(item)}: {len(ids)} item ids repeat in --test "
            f"({_listed(ids[:5])}{' ...' if len(ids) > 5 else ''}), i.e. items judged several "
            "times; repeated verdicts of an item are not supported for K-category verdicts yet. "
            "Keep one verdict per item (per system), or drop --item to count every verdict as "
            "an independent item on purpose."
        )


# --- scores and what the commands print -----------------------------------------------------


def score_map(scores: dict[str, float] | None, categories: list) -> dict | None:
    """Return ``{category: value}`` with the categories' own labels; check every one is there."""
    if scores is None:
        return None
    by_text = {str(c): c for c in categories}
    if categories and all(label_kind(c) == "number" for c in categories):
        # numeric categories are named by value, as --categories names them: 1.0 is 1
        by_value = {as_number(c): c for c in categories}
        for name in scores:
            if name not in by_text and as_number(name) in by_value and "_" not in name:
                by_text[name] = by_value[as_number(name)]
    named: dict = {}
    for name in scores:
        if name in by_text:
            named.setdefault(label_key(by_text[name]), []).append(name)
    twice = [names for names in named.values() if len(names) > 1]
    if twice:
        raise UsageError(
            f"--scores names one category more than once: {_listed(twice[0])} are one number."
        )
    missing = [c for c in categories if label_key(c) not in named]
    extra = [name for name in scores if name not in by_text]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"no score for {_listed(missing)}")
        if extra:
            parts.append(f"{_listed(extra)} not a category")
        raise UsageError(
            f"--scores needs one finite number for each category {_listed(categories)}: "
            f"{'; '.join(parts)}."
        )
    return {by_text[name]: value for name, value in scores.items()}


def describe_categories(counts: CategoricalCounts) -> str:
    """Return the line that states the categories and where their order came from."""
    names = ", ".join(terminal_safe(c) for c in counts.categories)
    if counts.dataset.attrs.get("categories_source") == "given":
        source = "in the order of --categories"
    else:
        source = (
            "sorted: numbers and numeric text by value, else alphabetically; --categories "
            "sets another order"
        )
    scale = "; an ordinal scale" if counts.ordered else ""
    return f"categories (K = {counts.K}; {source}{scale}): {names}"


def describe_scores(scores: dict | None) -> str:
    """Return ``A = 1, tie = 0.5, B = 0`` (names escaped) for the printed settings."""
    if not scores:
        return ""
    return ", ".join(f"{terminal_safe(c)} = {v:g}" for c, v in scores.items())


def check_labelled(counts: CategoricalCounts) -> None:
    """Refuse K-category counts without a human-labelled item (estimate, fit, report)."""
    if not int(counts.calibration.sum()):
        raise UsageError(
            "--calibration is required (the judge's confusion between categories is estimated "
            "from human-labelled items, and none was counted: rows without a judge or human "
            "label are dropped): pass a human-labelled CSV/Parquet file, a --test "
            "table with a --human column filled for the labelled rows, or --gold with the "
            "human labels of a log's items."
        )


# --- priors of the K-category model -----------------------------------------------------------

#: The accepted forms of the prior options, for their help and messages.
PRIOR_THETA_FORMS = (
    "K categories: A (every category) or A1,...,AK (one per category, in the categories' "
    "order), Dirichlet concentrations > 0; correct/incorrect verdicts: A,B (Beta(A, B))"
)
PRIOR_CONFUSION_FORMS = (
    "A (every cell), D,O (D on the diagonal, O off it) or the K x K matrix row by row, "
    "'4,1,1;1,4,1;1,1,4' (rows = truth), Dirichlet concentrations > 0"
)


def _numbers(text: str, what: str) -> tuple[float, ...]:
    """Parse ``a,b,...`` into floats; ``ArgumentTypeError`` naming the forms otherwise."""
    parts = [part.strip() for part in text.split(",")]
    values = []
    for part in parts:
        try:
            value = float(part) if part and "_" not in part else math.nan
        except ValueError:
            value = math.nan
        if math.isnan(value):
            raise argparse.ArgumentTypeError(
                f"must be numbers separated by commas: {what}; got {text!r}"
            )
        values.append(value)
    return tuple(values)


def parse_prior_theta(text: str) -> tuple[float, ...]:
    """Parse ``--prior-theta``: one number or several, comma-separated (argparse type).

    The count is checked against the verdicts once they are read: A,B for correct/incorrect
    verdicts, A or A1,...,AK for K categories.

    Examples
    --------
    >>> parse_prior_theta("2"), parse_prior_theta("1, 2.5,3")
    ((2.0,), (1.0, 2.5, 3.0))
    """
    return _numbers(text, PRIOR_THETA_FORMS)


def parse_prior_confusion(text: str) -> float | tuple:
    """Parse ``--prior-confusion``: ``A``, ``D,O`` or a matrix ``a,b;c,d`` (argparse type).

    Examples
    --------
    >>> parse_prior_confusion("2"), parse_prior_confusion("4,1")
    (2.0, (4.0, 1.0))
    >>> parse_prior_confusion("4,1;1,4")
    ((4.0, 1.0), (1.0, 4.0))
    """
    rows = text.split(";")
    if len(rows) == 1:
        values = _numbers(text, PRIOR_CONFUSION_FORMS)
        if len(values) > 2:
            raise argparse.ArgumentTypeError(
                f"one number A or a pair D,O, or a matrix with its rows separated by ';'; got "
                f"{text!r} ({len(values)} numbers in one row). Accepted: {PRIOR_CONFUSION_FORMS}"
            )
        return values[0] if len(values) == 1 else values
    matrix = tuple(_numbers(row, PRIOR_CONFUSION_FORMS) for row in rows)
    if any(len(row) != len(rows) for row in matrix):
        raise argparse.ArgumentTypeError(
            f"a matrix needs as many numbers in every row as it has rows (K x K, rows = "
            f"truth); got {text!r}. Accepted: {PRIOR_CONFUSION_FORMS}"
        )
    return matrix


PRIOR_ERROR_MEAN_FORMS = (
    "MU,SD: a Normal(MU, SD) prior, SD > 0 (a negative MU with '=', e.g. "
    "--prior-error-mean=-1.5,1.5)"
)
PRIOR_ERROR_SCALE_FORMS = "TAU: a HalfNormal(TAU) prior, TAU > 0, e.g. 1"


def parse_prior_error_mean(text: str) -> tuple[float, float]:
    """Parse ``--prior-error-mean MU,SD`` (argparse type).

    Examples
    --------
    >>> parse_prior_error_mean("-2, 1")
    (-2.0, 1.0)
    """
    values = _numbers(text, PRIOR_ERROR_MEAN_FORMS)
    if len(values) != 2:
        raise argparse.ArgumentTypeError(
            f"must be two numbers, {PRIOR_ERROR_MEAN_FORMS}; got {text!r}"
        )
    return values


def parse_prior_error_scale(text: str) -> float:
    """Parse ``--prior-error-scale TAU`` (argparse type).

    Examples
    --------
    >>> parse_prior_error_scale("0.5")
    0.5
    """
    values = _numbers(text, PRIOR_ERROR_SCALE_FORMS)
    if len(values) != 1:
        raise argparse.ArgumentTypeError(
            f"must be one number, {PRIOR_ERROR_SCALE_FORMS}; got {text!r}"
        )
    return values[0]


def add_prior_options(parser: argparse.ArgumentParser, *, theta_help: str) -> None:
    """Add the prior options of the K-category model (``fit``, ``report``)."""
    parser.add_argument(
        "--prior-theta", type=parse_prior_theta, metavar="A|A1,...,AK", help=theta_help
    )
    parser.add_argument(
        "--prior-confusion",
        type=parse_prior_confusion,
        metavar="A|D,O|MATRIX",
        help="K categories: the Dirichlet concentration of each confusion row (separate or "
        f"shared calibration, free or symmetric confusion): {PRIOR_CONFUSION_FORMS}",
    )
    parser.add_argument(
        "--prior-error-mean",
        type=parse_prior_error_mean,
        metavar="MU,SD",
        help="K categories, hierarchical calibration (free or symmetric confusion): the prior "
        "of the population mean of the confusion rows' off-diagonal log-ratios, "
        f"{PRIOR_ERROR_MEAN_FORMS} (default: the model's)",
    )
    parser.add_argument(
        "--prior-error-scale",
        type=parse_prior_error_scale,
        metavar="TAU",
        help="K categories, hierarchical calibration: the prior of the log-ratios' spread "
        f"across the pooled groups, {PRIOR_ERROR_SCALE_FORMS} (default: the model's)",
    )


#: The K-category prior options: (attribute, option, CategoricalPriors field).
PRIOR_OPTIONS = (
    ("prior_theta", "--prior-theta", "theta"),
    ("prior_confusion", "--prior-confusion", "confusion"),
    ("prior_error_mean", "--prior-error-mean", "error_logit_mean"),
    ("prior_error_scale", "--prior-error-scale", "error_logit_scale"),
)


def given_prior_options(args, options=PRIOR_OPTIONS) -> list[str]:
    """Return the flags of the K-category prior ``options`` given on the command line."""
    return [option for attr, option, _ in options if getattr(args, attr, None) is not None]


def categorical_priors(args, counts: CategoricalCounts, priors_class):
    """Build ``CategoricalPriors`` (``priors_class``) from the --prior-* options.

    Errors name the option, the value and the accepted forms; an option is refused where the
    model has no such prior: --prior-confusion without Dirichlet rows (hierarchical
    calibration, ordinal confusion), --prior-error-mean/-scale without a hierarchy (and the
    mean with the ordinal confusion, whose hierarchy has its own).
    """
    theta = getattr(args, "prior_theta", None)
    confusion = getattr(args, "prior_confusion", None)
    given: dict = {}
    k = counts.K
    calibration = getattr(args, "calibration_model", None) or getattr(
        args, "calibration_design", None
    )
    _check_hierarchy_priors(args, calibration)
    if theta is not None:
        shown = ",".join(f"{v:g}" for v in theta)
        if len(theta) not in (1, k):
            raise UsageError(
                f"--prior-theta {shown}: {len(theta)} numbers for K = {k} categories "
                f"{_listed(counts.categories)}; give one number (every category) or {k}, in "
                f"the categories' order. Accepted: {PRIOR_THETA_FORMS}."
            )
        given["theta"] = theta[0] if len(theta) == 1 else theta
    if confusion is not None:
        shown = _shown_values(confusion)
        if calibration == "hierarchical" or args.confusion == "ordinal":
            why = (
                "the hierarchical model draws the rows' off-diagonal log-ratios from a "
                "population (Normal priors, models/categorical.md)"
                if calibration == "hierarchical"
                else "the ordinal confusion is built from cutpoints and steps with Normal "
                "priors (models/categorical-ordinal.md)"
            )
            raise UsageError(
                f"--prior-confusion {shown}: a Dirichlet prior of the confusion rows, which "
                f"this model does not have: {why}. Drop --prior-confusion, or use separate or "
                "shared calibration with the free or symmetric confusion."
            )
        matrix = isinstance(confusion, tuple) and isinstance(confusion[0], tuple)
        if matrix and len(confusion) != k:
            raise UsageError(
                f"--prior-confusion {shown}: a {len(confusion)} x {len(confusion)} matrix for "
                f"K = {k} categories {_listed(counts.categories)}. Accepted: "
                f"{PRIOR_CONFUSION_FORMS}."
            )
        given["confusion"] = confusion
    for attr, field in (
        ("prior_error_mean", "error_logit_mean"),
        ("prior_error_scale", "error_logit_scale"),
    ):
        if getattr(args, attr, None) is not None:
            given[field] = getattr(args, attr)
    accepted = {
        "theta": PRIOR_THETA_FORMS,
        "confusion": PRIOR_CONFUSION_FORMS,
        "error_logit_mean": PRIOR_ERROR_MEAN_FORMS,
        "error_logit_scale": PRIOR_ERROR_SCALE_FORMS,
    }
    options = {field: option for _, option, field in PRIOR_OPTIONS}
    for name, value in given.items():
        try:
            priors_class(**{name: value})
        except ValueError as err:
            raw = _shown_values(value)
            raise UsageError(f"{options[name]} {raw}: {err} Accepted: {accepted[name]}.") from None
    return priors_class(**given)


def _check_hierarchy_priors(args, calibration) -> None:
    """Refuse --prior-error-mean/-scale where the model has no such prior."""
    mean = getattr(args, "prior_error_mean", None)
    scale = getattr(args, "prior_error_scale", None)
    given = [(o, v) for o, v in (("--prior-error-mean", mean), ("--prior-error-scale", scale))
             if v is not None]  # fmt: skip
    if given and calibration != "hierarchical":
        option, value = given[0]
        raise UsageError(
            f"{option} {_shown_values(value)}: a prior of the hierarchical calibration model "
            f"(the confusion across pooled groups); this fit's calibration is {calibration!r}. "
            "Use --calibration-model hierarchical (report: --calibration-design), or "
            "--prior-confusion for the Dirichlet rows of separate or shared calibration."
        )
    if mean is not None and args.confusion == "ordinal":
        raise UsageError(
            f"--prior-error-mean {_shown_values(mean)}: the ordinal confusion's hierarchy "
            "has Normal priors of its own cutpoints and steps (models/categorical-ordinal.md), "
            "not a prior of the off-diagonal log-ratios; drop it (--prior-error-scale sets "
            "its spread)."
        )


def _shown_values(value) -> str:
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):
        return ";".join(",".join(f"{v:g}" for v in row) for row in value)
    if isinstance(value, tuple):
        return ",".join(f"{v:g}" for v in value)
    return f"{value:g}"
