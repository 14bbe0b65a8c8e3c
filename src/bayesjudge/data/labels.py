"""The label vocabulary: which judge and human labels mean correct and incorrect."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any, NamedTuple

import numpy as np

from bayesjudge.data._common import is_missing, rows_text

_POSITIVE_WORDS = frozenset({"yes", "correct", "pass", "true", "1"})
_NEGATIVE_WORDS = frozenset({"no", "incorrect", "fail", "false", "0"})
_RECOGNISED = (
    "booleans, the numbers 0/1 (also as text, e.g. '1' or '1.0'), and (case-insensitive, "
    "whitespace-stripped) yes/no, correct/incorrect, pass/fail, true/false"
)


def normalise(value):
    """Canonical form of one distinct label value: None for missing, else str/bool/number."""
    if isinstance(value, np.generic):
        value = value.item()
    if is_missing(value):
        return None
    if isinstance(value, str):
        value = value.strip().lower()
        return value or None
    return value


def _numeric(value) -> Decimal | None:
    """Return the exact value of a numeric label (also text such as ``"1.0"``), else None.

    Booleans are not numbers here; NaN and infinities have no value to compare.
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, Decimal):
        return value if value.is_finite() else None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            number = Decimal(value)
        except InvalidOperation:
            return None
        return number if number.is_finite() else None
    return None


def _matches(value, target) -> bool:
    """Whether the (normalised) label ``value`` is the (normalised) positive ``target``.

    Equal values match; otherwise a number, numeric text or a bool matches by value, so that
    ``positive="2"`` (as the command line passes it) finds ``2`` in a numeric column and
    ``positive=2`` finds ``"2"`` in a column read as text. ``"true"``/``"false"`` match the
    booleans.
    """
    if isinstance(value, bool) or isinstance(target, bool):
        flag, other = (value, target) if isinstance(value, bool) else (target, value)
        if isinstance(other, bool):
            return flag is other
        if isinstance(other, str) and other in ("true", "false"):
            return flag is (other == "true")
        return _numeric(other) == int(flag)
    if type(value) is type(target) and value == target:
        return True
    number = _numeric(value)
    return number is not None and number == _numeric(target)


def _shown(values: Mapping[Any, int]) -> str:
    """Return ``'a' (3 rows), 'b' (1 row)``, most frequent first."""
    return ", ".join(
        f"{v!r} ({rows_text(c)})" for v, c in sorted(values.items(), key=lambda kv: -kv[1])
    )


class _PositiveUse(NamedTuple):
    """Whether one label column holds the value of ``positive=`` (checked across tables)."""

    column: str
    where: str  # "test table", "test table 'x.csv'", ...
    held: bool
    values: dict  # the column's distinct non-missing labels and their row counts


def classify(
    values: Mapping[Any, int], column: str, where: str, positive
) -> tuple[dict, _PositiveUse | None]:
    """Map each distinct non-missing label to 1 (correct) or 0 (incorrect).

    With ``positive``, also returns whether the column holds it: a column may hold only the
    other value (all incorrect), but a positive that no label column holds is an error, raised
    by :meth:`JudgeCounts.from_frames` once every table is counted.
    """
    if positive is not None:
        target = normalise(positive)
        if target is None:
            raise ValueError(
                f"positive={positive!r} is empty or missing; pass the label value that means "
                f"correct in column {column!r} of the {where}."
            )
        matched = [v for v in values if _matches(v, target)]
        if len({type(v) for v in matched}) > 1:
            raise ValueError(
                f"positive={positive!r} matches several different values of column {column!r} "
                f"in the {where}: {_shown({v: values[v] for v in matched})}; they would be "
                f"counted as one label. Convert the column to one type (e.g. all text or all "
                f"numbers) so that its values are distinct."
            )
        others = [v for v in values if v not in matched]
        if not matched and len(others) > 1:
            raise ValueError(
                f"positive={positive!r} is not a value of column {column!r} in the {where}, "
                f"which holds {_shown(values)}. Pass the value that means correct, exactly as "
                f"the column holds it (text is compared stripped and lowercased, numbers by "
                f"value)."
            )
        if len(others) > 1:
            shown = _shown({v: values[v] for v in others})
            raise ValueError(
                f"With positive={positive!r}, column {column!r} in the {where} must "
                f"hold {target!r} and at most one other value (meaning incorrect); it also "
                f"holds {shown}. Fix the stray values or the value of positive=."
            )
        use = _PositiveUse(column, where, bool(matched), dict(values))
        return {v: int(v in matched) for v in values}, use
    mapping, unknown = {}, {}
    for v in values:
        if isinstance(v, bool):
            mapping[v] = int(v)
        elif isinstance(v, str) and v in _POSITIVE_WORDS:
            mapping[v] = 1
        elif isinstance(v, str) and v in _NEGATIVE_WORDS:
            mapping[v] = 0
        elif _numeric(v) in (0, 1):  # 0/1 as numbers or as text such as "1.0"
            mapping[v] = int(_numeric(v))
        else:
            unknown[v] = values[v]
    if unknown:
        raise ValueError(
            f"Column {column!r} in the {where} has labels that are not recognised: "
            f"{_shown(unknown)}. Recognised labels are {_RECOGNISED}. Pass positive=<value "
            f"meaning correct> (e.g. positive='good'), or positive={{{column!r}: ...}} for this "
            f"column only, when the column holds that value and one other."
        )
    return mapping, None


def check_positive_held(positive, uses: Sequence[_PositiveUse]) -> None:
    """Refuse a ``positive=`` value that no label column it applies to holds (a typo).

    A column may hold only the other value (every item incorrect) as long as another column
    the same positive applies to — the other label column, or the same column of the other
    table — holds it.
    """
    scopes: dict[Any, list[_PositiveUse]] = defaultdict(list)
    for use in uses:
        scopes[use.column if isinstance(positive, Mapping) else None].append(use)
    for scope, scope_uses in scopes.items():
        if any(use.held for use in scope_uses):
            continue
        value = positive[scope] if scope is not None else positive
        holds = "; ".join(
            f"column {use.column!r} in the {use.where} holds "
            f"{_shown(use.values) if use.values else 'no labels at all'}"
            for use in scope_uses
        )
        raise ValueError(
            f"positive={value!r} is not a value of the label column(s) it applies to, so no "
            f"item would count as correct: {holds}. Pass the value that means correct, "
            f"exactly as the column holds it (text is compared stripped and lowercased, "
            f"numbers by value)."
        )


def binary_classes(labels: Mapping) -> int:
    """Count distinct labels once those the binary reader recognises are merged into 0 and 1.

    ``labels`` maps a label's key (e.g. :func:`~bayesjudge.data.category_labels.label_key`)
    to the label. ``'1'``, ``'1.0'``, ``'yes'`` and ``True`` are one class, so a
    correct/incorrect column with one stray value ("1", "1.0", "maybe") stays binary, and the
    binary reader's error names the stray value rather than calling the column three
    categories. The commands (``estimate``, ``fit``, ``report``) read the label columns as K
    categories when either holds more than two classes; the profile uses the same rule.

    Examples
    --------
    >>> binary_classes({1: "1", 2: "1.0", 3: "maybe"}), binary_classes({1: "A", 2: "tie", 3: "B"})
    (2, 3)
    """
    classes = set()
    for key, label in labels.items():
        value = binary_value(label)
        classes.add(key if value is None else ("binary", value))
    return len(classes)


def binary_value(label) -> int | None:
    """Return 1 or 0 for a label the binary reader recognises without ``positive``, else None.

    Examples
    --------
    >>> binary_value("yes"), binary_value("1.0"), binary_value(False), binary_value("maybe")
    (1, 1, 0, None)
    """
    try:
        mapping, _ = classify({label: 1}, "label", "table", None)
    except ValueError:  # not a binary label
        return None
    return mapping[label]
