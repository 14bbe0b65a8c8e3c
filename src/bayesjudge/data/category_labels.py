"""Category labels of K-category verdicts: checking, ordering and matching them.

Used by :class:`~bayesjudge.data.CategoricalCounts` and the counting of its item tables
(:mod:`bayesjudge.data.categorical_counting`). Labels are compared by value and type: text by
its (stripped) text, numbers by value (a whole float is an int), booleans by themselves, so
that ``"1"`` and ``1``, or ``"1"`` and ``"01"``, never merge silently.
"""

from __future__ import annotations

import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, KeysView, Mapping, Set
from decimal import Decimal, InvalidOperation

import numpy as np

from bayesjudge.core._validation import MAX_COUNT
from bayesjudge.data._common import is_blank, plain_value, sorted_labels

_INT64 = np.iinfo(np.int64)
#: The most categories read from the tables without ``categories=``: more distinct labels
#: than this is a free-text or id column taken for the verdicts (K² cells per group).
MAX_INFERRED_CATEGORIES = 256


def as_number(value) -> Decimal | None:
    """Return the exact value of a number or of numeric text (``"01"``, ``"1.0"``); else None.

    Examples
    --------
    >>> as_number("01") == as_number(1.0), as_number(True), as_number("tie")
    (True, None, None)
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        number = Decimal(value)
    elif isinstance(value, str):
        try:
            number = Decimal(value.strip())
        except InvalidOperation:
            return None
    else:
        return None
    return number if number.is_finite() else None


def plain_label(value):
    """Return a label as Python sees it: numpy scalars unwrapped, whole floats as ints.

    A float column holding 1.0, 2.0 (pandas makes integer columns float when they have a
    missing value) then matches the categories 1, 2; text stays text, bools stay bools.

    Examples
    --------
    >>> plain_label(2.0), plain_label(" tie "), plain_label(2.5), plain_label(True)
    (2, 'tie', 2.5, True)
    """
    value = plain_value(value)
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_COUNT:
        return int(value)
    if isinstance(value, str):
        return value.strip()
    return value


def label_kind(value) -> str:
    """Return the kind a label is matched by: ``"bool"``, ``"number"`` or its type name.

    Examples
    --------
    >>> label_kind(True), label_kind(1.5), label_kind("A")
    ('bool', 'number', 'str')
    """
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def _printed(text: str) -> str:
    """Return text as it prints: NFC-normalised, without invisible format characters."""
    # Zero-width spaces, joiners and direction marks (category Cf) print as nothing.
    text = unicodedata.normalize("NFC", text)
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def lookalikes(values: Iterable) -> list[tuple]:
    """Return the pairs of distinct values that print alike, compare equal or are one number.

    Values are bucketed by their text, by value (``1``, ``1.0`` and ``True`` are one dict
    key) and, for numeric text, by number, so that a column of many distinct values is
    checked in linear time.

    Examples
    --------
    >>> lookalikes([1, "1", "01", "A"])
    [(1, '1'), ('1', '01')]
    >>> lookalikes(["A", "tie", "B"])
    []
    """
    distinct = list({(type(v), v): v for v in values}.values())
    buckets: dict[tuple, list] = defaultdict(list)
    for v in distinct:
        buckets[("text", _printed(str(v)))].append(v)
        buckets[("value", v)].append(v)
        if isinstance(v, str) and as_number(v) is not None:
            buckets[("number", as_number(v))].append(v)
    clashes = []
    seen = set()
    for group in buckets.values():
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                pair = ((type(a), a), (type(b), b))
                if a is not b and pair not in seen:
                    seen.add(pair)
                    clashes.append((a, b))
    return clashes


def show_pairs(pairs: list[tuple]) -> str:
    """Return up to three look-alike pairs for a message.

    Examples
    --------
    >>> show_pairs([(1, "1")])
    "1 (int) and '1' (str)"
    """
    shown = "; ".join(
        f"{a!r} ({type(a).__name__}) and {b!r} ({type(b).__name__})" for a, b in pairs[:3]
    )
    return shown + (f" (and {len(pairs) - 3} more)" if len(pairs) > 3 else "")


def _kind(value) -> str:
    """``"text"``, ``"boolean"`` or ``"number"``: the label types a column cannot mix."""
    if isinstance(value, str):
        return "text"
    return "boolean" if isinstance(value, bool) else "number"


def category_array(categories, name: str = "categories") -> np.ndarray:
    """Check category labels (at least two, present, unique, no look-alikes) and return them.

    Strings stay strings, ints ints and numbers with a fraction among them floats (as 1-D
    arrays of that dtype); anything else, and ints beyond 64 bits, an object array. Labels
    that are different values but print alike or compare equal (``1`` and ``"1"``, ``1`` and
    ``True``) or are one number written differently (``"1"`` and ``"01"``) are refused: they
    would be separate categories that look the same.

    Parameters
    ----------
    categories : sequence of labels
        The category labels, in their order.
    name : str, default "categories"
        The argument's name, for messages.

    Returns
    -------
    numpy.ndarray
        The labels, 1-D.

    Raises
    ------
    ValueError
        If there are fewer than two labels, a label is missing or blank, a label repeats, or
        two labels are look-alikes.

    Examples
    --------
    >>> category_array(["A", "tie", "B"]).tolist()
    ['A', 'tie', 'B']
    >>> category_array([1, 2, 3]).dtype
    dtype('int64')
    """
    if isinstance(categories, np.ndarray):
        categories = categories.tolist()
    if isinstance(categories, str | bytes) or not isinstance(categories, Iterable):
        raise ValueError(
            f"{name} must be a sequence of at least two category labels, e.g. ['A', 'tie', "
            f"'B'] or [1, 2, 3, 4, 5]; got {categories!r}."
        )
    if isinstance(categories, Set | Mapping) and not isinstance(categories, KeysView):
        # The order of the labels is the order of the count axes: a set has none (a str set
        # changes order between runs), and a dict here is usually scores= put in its place;
        # a dict's keys() keep their order and are taken.
        raise ValueError(
            f"{name} must be an ordered sequence (a list or tuple), the order of the count "
            f"axes; got a {type(categories).__name__} {categories!r}, whose order is not "
            f"the categories'. Pass e.g. {sorted(map(str, categories))!r} in the order meant."
        )
    values = [plain_value(v) for v in categories]
    if len(values) < 2:
        raise ValueError(
            f"{name} needs at least two categories; got {values!r}. A judge with one "
            f"possible verdict carries no information."
        )
    blank = [v for v in values if is_blank(v)]
    if blank:
        raise ValueError(
            f"{name} must not hold missing (None/NaN) or empty labels; got {values!r}. Give "
            f"every category a label."
        )
    if any(isinstance(v, str) and v != v.strip() for v in values):
        raise ValueError(
            f"{name} labels must not have surrounding spaces (table values are compared "
            f"stripped); got {values!r}."
        )
    repeated = [v for (_, v), c in Counter((type(v), v) for v in values).items() if c > 1]
    if repeated:
        raise ValueError(f"{name} must be unique; {repeated!r} repeat in {values!r}.")
    if any(not isinstance(v, str | bool | int | float) for v in values):
        odd = [v for v in values if not isinstance(v, str | bool | int | float)]
        raise ValueError(
            f"{name} must be text, numbers or booleans; got {odd!r} of type "
            f"{type(odd[0]).__name__}."
        )
    infinite = [v for v in values if isinstance(v, float) and not np.isfinite(v)]
    if infinite:
        raise ValueError(
            f"{name} must not hold infinite numbers (they print as a JSON token no reader "
            f"takes); got {infinite!r} in {values!r}. Give every category a finite label."
        )
    clashes = lookalikes(values)
    if clashes:
        raise ValueError(
            f"{name} holds different labels that print alike, compare equal or are one "
            f"number written differently: {show_pairs(clashes)}. They would be separate "
            f"categories that look the same; give each category one label of one type."
        )
    kinds = {_kind(v) for v in values}
    if len(kinds) > 1:
        raise ValueError(
            f"{name} mixes {' and '.join(sorted(kinds))} labels: {values!r}. A label column "
            f"holds one type; give every category a label of the same type, e.g. all text: "
            f"{[str(v) for v in values]!r}."
        )
    if all(isinstance(v, str) for v in values):
        return np.array(values, dtype=str)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        if all(_INT64.min <= v <= _INT64.max for v in values):
            return np.array(values, dtype=np.int64)
    elif all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        # ints and fractions (0, 0.5, 1): one float array, as xarray would index them anyway
        if all(isinstance(v, float) or abs(v) <= 2**53 for v in values):
            return np.array(values, dtype=np.float64)
        big = [v for v in values if isinstance(v, int) and abs(v) > 2**53]
        # Beside fractions, the labels are one float index, which would round these ints.
        raise ValueError(
            f"{name} mixes fractions with whole numbers beyond 2**53 ({big!r}), which a float "
            f"label cannot hold exactly; give the categories as text, e.g. "
            f"{[str(v) for v in values]!r}."
        )
    array = np.empty(len(values), dtype=object)  # ints beyond 64 bits stay Python ints
    array[:] = values
    return array


def infer_categories(values: Iterable) -> list:
    """Sort observed category labels: numbers (and numeric text) by value, else as text.

    Numeric text sorts by its value (``"2"`` before ``"10"``), so that a rubric read from a
    CSV file keeps its order; mixed kinds sort by kind, then text.

    Examples
    --------
    >>> infer_categories(["10", "2", "1"])
    ['1', '2', '10']
    >>> infer_categories(["tie", "B", "A"])
    ['A', 'B', 'tie']
    """
    values = list(dict.fromkeys(values))
    if values and all(as_number(v) is not None for v in values):
        return sorted(values, key=lambda v: (as_number(v), str(v)))
    return sorted_labels(values)


def check_inferred_count(values: list, where: str, option: str = "categories=") -> None:
    """Refuse more than MAX_INFERRED_CATEGORIES distinct labels found without categories.

    Examples
    --------
    >>> check_inferred_count(["A", "tie", "B"], "the label columns")
    """
    if len(values) <= MAX_INFERRED_CATEGORIES:
        return
    shown = ", ".join(repr(v) for v in values[:5])
    raise ValueError(
        f"{where} hold {len(values)} distinct values ({shown}, …): read as categories that "
        f"is a {len(values)} × {len(values)} confusion matrix per group. Is the judge (or "
        f"human) column the verdict column, not a free-text or id column? To use more than "
        f"{MAX_INFERRED_CATEGORIES} categories on purpose, name them with {option}."
    )


def label_key(value) -> tuple:
    """Return the match key of a label: text by text, numbers by value, bools by themselves.

    Examples
    --------
    >>> label_key(1) == label_key(1.0), label_key(1) == label_key(True)
    (True, False)
    """
    return (label_kind(value), value)


def numbers_for_text(reference: Iterable, labels: Iterable) -> dict:
    """Return ``{text: number}`` to read numeric-text labels as the numbers of ``reference``.

    A gold file read from CSV holds text (``"1"``, ``"0.5"``) where a harness log's verdicts
    are numbers (lm-eval's ``1.0``, a numeric grade): the labels are then read by value, as
    the binary reader matches ``"1"`` and ``1``. Empty (nothing is converted) unless every
    non-blank reference label is a number and every non-blank label is numeric text, and no
    two labels are one number written differently (``"1"`` and ``"01"``: left as text for
    the look-alike error to name them). Whole numbers become ints.

    Examples
    --------
    >>> numbers_for_text([1, 0.5, 0], ["1", "0.5", "0"])
    {'1': 1, '0.5': 0.5, '0': 0}
    >>> numbers_for_text([1, 2], ["1", "01"]), numbers_for_text(["A"], ["1"])
    ({}, {})
    """
    numbers = [plain_label(v) for v in reference if not is_blank(v)]
    if not numbers or any(label_kind(v) != "number" for v in numbers):
        return {}
    texts = list(dict.fromkeys(v for v in labels if not is_blank(v)))
    if not texts or any(not isinstance(v, str) or as_number(v) is None for v in texts):
        return {}
    values = {text: as_number(text) for text in texts}
    if len(set(values.values())) < len(values):
        return {}
    return {
        text: plain_label(int(value) if value == value.to_integral() else float(value))
        for text, value in values.items()
    }
