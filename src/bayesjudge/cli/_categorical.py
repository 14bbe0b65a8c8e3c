"""K-category verdicts on the command line: ``--categories``, ``--scores`` and their tables.

``estimate``, ``fit`` and ``report`` read their tables with :func:`read_table_counts`: binary
:class:`~bayesjudge.data.JudgeCounts` as before, or :class:`~bayesjudge.data.CategoricalCounts`
when the judge and human label columns hold more than two distinct values, or when
``--categories`` is given. Labels are compared as the tables hold them: a CSV file's labels
are text (``"1"`` and ``"01"`` are two labels, and refused together because they look alike),
a Parquet column keeps its type. Without ``--categories`` the order is the sorted one of
:func:`bayesjudge.data.category_labels.infer_categories` (numbers and numeric text by value,
else alphabetically), and every command prints it.

``--categories`` and ``--scores`` take a short form (``A,B,C`` and ``A=1,B=0.5,C=0``) and, for
labels holding ``,`` or ``=`` (or surrounding spaces), a JSON form (``'["A,1", "B"]'`` and
``'{"A=1": 1, "B": 0}'``).
"""

from __future__ import annotations

import argparse
import json
import math

import narwhals.stable.v2 as nw

from bayesjudge._text import terminal_safe
from bayesjudge.cli._common import UsageError, is_harness_log, read_counts
from bayesjudge.data import CategoricalCounts, JudgeCounts, as_frame
from bayesjudge.data.category_labels import infer_categories, label_key, lookalikes, plain_label
from bayesjudge.data.labels import classify

#: How many label values an error message lists before "and N more".
_SHOWN = 20


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


def read_table_counts(args) -> JudgeCounts | CategoricalCounts:
    """Count --test and --calibration as binary or K-category counts (module docstring).

    Binary unless ``--categories`` is given or the judge column (of both tables) or the human
    column holds more than two distinct values; ``--positive`` keeps its binary meaning and is
    refused with ``--categories`` of K != 2. Raises :class:`UsageError` for what K-category
    counts cannot take (``--repeats``, harness logs and ``--gold``, repeated item ids), for
    labels outside ``--categories`` and for look-alike labels.
    """
    categories = getattr(args, "categories", None)
    scores = getattr(args, "scores", None)
    if getattr(args, "gold", None) is not None or is_harness_log(args):
        if categories is not None or scores is not None:
            raise UsageError(
                "--categories and --scores read K-category verdicts from CSV/Parquet tables "
                "(--test, --calibration); harness logs and --gold are read as correct/"
                "incorrect verdicts. Export the verdicts to a table, or drop these options."
            )
        return read_counts(args)
    judge, human = _label_values(args)
    found = {**judge, **human}
    if args.positive is not None:
        _check_positive(args, categories, found)
        return read_counts(args)
    if categories is None and _binary_classes(judge) <= 2 and _binary_classes(human) <= 2:
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
        return read_counts(args)
    return _categorical_counts(args, categories, found)


def _binary_classes(labels: dict) -> int:
    """Count distinct labels once those the binary reader recognises are merged into 0 and 1.

    ``'1'``, ``'1.0'``, ``'yes'`` and ``True`` are one class, so a correct/incorrect column with
    one stray value ("1", "1.0", "maybe") stays binary, and the binary reader's error names the
    stray value rather than calling the column three categories.
    """
    classes = set()
    for key, label in labels.items():
        try:
            mapping, _ = classify({label: 1}, "label", "table", None)
        except ValueError:  # not a binary label
            classes.add(key)
        else:
            classes.add(("binary", mapping[label]))
    return len(classes)


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


def _categorical_counts(args, given, found) -> CategoricalCounts:
    """Build CategoricalCounts from the tables (the shared-calibration case as read_counts)."""
    if getattr(args, "repeats", None) is not None:
        raise UsageError(
            f"--repeats {terminal_safe(args.repeats)}: repeated verdicts of an item are not "
            "supported for K-category verdicts yet (their counts have no clusters); keep one "
            "verdict per item, or drop --repeats and --item to count every verdict as an "
            "independent item on purpose."
        )
    clashes = lookalikes(list(found.values()))
    if clashes:
        shown = "; ".join(f"{terminal_safe(repr(a))} and {terminal_safe(repr(b))}"
                          for a, b in clashes[:3])  # fmt: skip
        raise UsageError(
            f"the label columns hold different labels that look alike or are one number "
            f"written differently: {shown}. They would be separate categories; make each "
            f"category one label in the tables (e.g. '1' everywhere, not '1' and '01')."
        )
    categories = _typed(given, found) if given is not None else infer_categories(found.values())
    _check_inside(categories, found)
    item = getattr(args, "item", None)
    if item is not None:
        _check_unique_items(args.test, item, args.system)
    ordered = bool(getattr(args, "ordered", False) or getattr(args, "confusion", None) == "ordinal")
    options = {"judge": args.judge, "categories": categories, "ordered": ordered}
    groups = {"system": args.system, "stratum": args.stratum}
    design = getattr(args, "design", None)
    if args.calibration is not None:
        columns = as_frame(args.calibration, "calibration").collect_schema().names()
        absent = [dim for dim, col in groups.items() if col is not None and col not in columns]
        if absent:  # one calibration set serving every system (stratum): counted once
            tests = CategoricalCounts.from_frames(
                args.test, None, **groups, **options, human=None, item=item
            )
            kept = {dim: None if dim in absent else col for dim, col in groups.items()}
            calibration = CategoricalCounts.from_frames(
                None, args.calibration, **kept, **options, human=args.human, design=design
            )
            counts = tests.with_calibration_from(calibration)
            return _source(counts, given)
    counts = CategoricalCounts.from_frames(
        args.test, args.calibration, **groups, **options, human=args.human, item=item,
        design=design,
    )  # fmt: skip
    return _source(counts, given)


def _source(counts: CategoricalCounts, given) -> CategoricalCounts:
    """Record where the order came from: --categories ("given") or the sorted values."""
    counts.dataset.attrs["categories_source"] = "given" if given is not None else "inferred"
    return counts


def _label_values(args) -> tuple[dict, dict]:
    """Return the distinct non-blank labels of the judge and of the human columns, by key.

    The judge column of both tables, and the human column of the calibration table (or of
    the test table when it is the one table of the random design). A column that is absent
    is left to the counting's own message. The two roles are kept apart: binary tables may
    write verdicts as yes/no and labels as 1/0.
    """
    tables = [("test", args.test, {"judge": args.judge})]
    if args.calibration is None:
        tables[0][2]["human"] = args.human
    else:
        tables.append(("calibration", args.calibration, {"judge": args.judge, "human": args.human}))
    found: dict = {"judge": {}, "human": {}}
    for name, path, roles in tables:
        frame = as_frame(path, name)
        present = frame.collect_schema().names()
        for role, column in roles.items():
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
    """Match --categories' text to the tables' labels: a Parquet int column takes ints."""
    by_text = {str(label): label for label in found.values()}
    numbers = bool(found) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in found.values()
    )
    out = []
    for text in given:
        if text in by_text:
            out.append(by_text[text])
        elif numbers and _is_int(text):
            out.append(int(text))
        else:
            out.append(text)
    return out


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return "_" not in text


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
    repeated = (
        frame.group_by(keys).agg(nw.len().alias("__rows__"))
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
    missing = [c for c in categories if str(c) not in scores]
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
