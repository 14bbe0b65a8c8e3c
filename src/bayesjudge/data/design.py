"""The labelling design read from item tables: which items were labelled, each counted once.

Two ways to the random labelling design (humans labelled a random subset of the judged
items), besides declaring it with ``design="random"``:

- **one table** (:func:`one_table_design`): a test table with a human column and no
  calibration table; rows with a human label are the labelled items, rows without one the
  unlabelled items;
- **matching item ids** (:func:`match_labelled`): every labelled item of the calibration
  table is also among the judged items of the test table (same system and item id); those
  items leave the test counts and enter only the calibration counts, with their verdicts.

The functions here work on the small, already collected rows; the queries that collect them
run on the tables' own engines (:mod:`bayesjudge.data.counting`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from bayesjudge.data._common import (
    DEFAULT_DESIGN,
    MAX_GROUPS_SHOWN,
    group_name,
    is_blank,
    rows_text,
)

#: The message of a :class:`DesignWarning` when matching ids show the random design.
INFERRED = (
    "{matched} labelled items of the calibration table are also among the judged items of "
    "the test table (same system and {column!r} id), so the labelling design is taken to be "
    "'random' (humans labelled a random subset of the judged items): each item is counted "
    "once, the labelled ones only in the calibration counts (n, k count the {unlabelled} "
    "unlabelled items). Pass design='random' to say so and silence this warning; if the "
    "labelled items were chosen by their human label (a stratified calibration set), they "
    "cannot also be judged test items: drop them from the test table."
)


def _ids_shown(ids: Iterable, limit: int = MAX_GROUPS_SHOWN) -> str:
    """Return a few ids for a message: ``'a', 'b', … (7 more)``."""
    ids = list(ids)
    shown = ", ".join(repr(i) for i in ids[:limit])
    return shown + (f", … ({len(ids) - limit} more)" if len(ids) > limit else "")


def one_table_design(design: str | None, labelled: Mapping[tuple, Counter], where: str) -> str:
    """Return the design of one table with a human column (``from_frames(table, human=...)``).

    Rows with a human label are a subset of the table's items chosen without regard to their
    truth, so the design is ``"random"``; with no labelled row at all the table is test-only
    and the design is the one given (default ``"stratified"``: nothing was labelled, so the
    choice changes nothing). ``design="stratified"`` with labelled rows is refused.
    """
    n_labelled = sum(sum(c.values()) for c in labelled.values())
    if n_labelled == 0:
        return design or DEFAULT_DESIGN
    if design == "stratified":
        raise ValueError(
            f"design='stratified' was passed with one table (the {where}) holding "
            f"{n_labelled} human-labelled rows among its judged items. In one table the "
            f"labelled rows are a subset of the judged items, which is the random labelling "
            f"design: pass design='random' (or leave design out). If the labelled items were "
            f"instead chosen by their human label (a stratified calibration set), they are not "
            f"test items: pass them as calibration= and the unlabelled rows as test=."
        )
    return "random"


class LabelledRow(NamedTuple):
    """One counted row of the calibration table, with its item id."""

    system: Any
    stratum: Any
    item: Any
    verdict: int
    truth: int
    repeat: Any = None  # the repeat number (from_frames(repeats=...)), else None


class JudgedRow(NamedTuple):
    """One row of the test table whose item id is among the labelled ids."""

    system: Any
    stratum: Any
    item: Any
    verdict: int | None  # None: missing (the row was dropped from n, k)


class Overlap(NamedTuple):
    """What :func:`match_labelled` found: the design and what leaves the test counts."""

    design: str
    removed: dict  # (system, stratum) -> Counter of (verdict,) to take out of the test counts
    labelled: dict  # system -> list of labelled item ids that are judged test items
    inferred: bool  # the random design was inferred (warn and say so)
    n_labelled: int  # labelled items matched


# Added to the repeated-id errors of labelled items: what to do with repeated verdicts.
REPEATED_LABELLED = (
    " Labelled items judged several times (repeats=, e.g. Inspect epochs) are counted from one "
    "table whose labelled rows carry the human label on every verdict of the item "
    "(from_frames(table, item=..., repeats=...)); a separate calibration table, or one matched "
    "by item ids, needs one verdict per labelled item."
)


def check_labelled_ids(
    rows: list[LabelledRow], column: str, where: str, repeats: str | None = None
) -> None:
    """Refuse missing and repeated item ids of the calibration table (with ``item=``).

    With ``repeats`` (one table, labelled items judged several times) an item may have
    several rows; a repeated (item, repeat) pair is refused instead.
    """
    missing = sum(is_blank(r.item) for r in rows)
    if missing:
        raise ValueError(
            f"Column {column!r} (item) in the {where} has {rows_text(missing)} with a human "
            f"label but a missing item id. With item=, the ids tell which labelled items are "
            f"also judged items; fill in the ids or drop those rows"
            + (
                f" (or drop the {column!r} column from the calibration table if its ids name "
                f"other items)."
                if where.startswith("calibration")
                else "."
            )
        )
    if repeats is not None:
        twice = Counter((r.system, r.item, r.repeat) for r in rows)
        pairs = [(s, i, e, c) for (s, i, e), c in twice.items() if c > 1]
        if pairs:
            shown = ", ".join(
                f"item {i!r} {repeats}={e!r} (system {s!r}, {c} rows)" for s, i, e, c in pairs[:5]
            )
            raise ValueError(
                f"In the labelled rows of the {where}, {len(pairs)} (item, {repeats}) pairs "
                f"occur more than once: {shown}{' …' if len(pairs) > 5 else ''}. Each verdict "
                f"of an item needs its own {repeats!r} value; remove duplicate rows."
            )
        return
    seen = Counter((r.system, r.item) for r in rows)
    repeated = [(s, i, c) for (s, i), c in seen.items() if c > 1]
    if repeated:
        shown = ", ".join(f"{i!r} (system {s!r}, {c} rows)" for s, i, c in repeated[:5])
        raise ValueError(
            f"Item ids in column {column!r} of the {where} must be unique within each system, "
            f"or a labelled item would be counted more than once; {len(repeated)} repeat: "
            f"{shown}{' …' if len(repeated) > 5 else ''}. Keep one row per item (e.g. the "
            f"majority of several raters' labels), or give distinct items distinct ids."
            + REPEATED_LABELLED
        )


def check_once(
    labelled: list[LabelledRow], unlabelled: list[JudgedRow], column: str, where: str
) -> None:
    """Refuse an item of one table with both a labelled and an unlabelled row (one system)."""
    keys = {(r.system, r.item) for r in labelled}
    twice = sorted({(r.system, r.item) for r in unlabelled if (r.system, r.item) in keys}, key=str)
    if twice:
        shown = ", ".join(f"{i!r} (system {s!r})" for s, i in twice[:MAX_GROUPS_SHOWN])
        more = f", … ({len(twice) - MAX_GROUPS_SHOWN} more)" if len(twice) > 5 else ""
        raise ValueError(
            f"{len(twice)} item ids in column {column!r} of the {where} have a row with a "
            f"human label and another without one for the same system: {shown}{more}. Each "
            f"item is one row per system, labelled or not; drop the duplicate rows (keep the "
            f"labelled one), or give distinct items distinct ids."
        )


def _check_pairs(pairs: list[tuple[LabelledRow, JudgedRow]], column: str) -> None:
    """Refuse a matched item in another stratum or with another verdict in the test table."""
    moved = [(lab, test) for lab, test in pairs if lab.stratum != test.stratum]
    if moved:
        shown = "; ".join(
            f"{lab.item!r} (system {lab.system!r}: {lab.stratum!r} vs {test.stratum!r})"
            for lab, test in moved[:MAX_GROUPS_SHOWN]
        )
        raise ValueError(
            f"{len(moved)} labelled items lie in a different stratum in the calibration table "
            f"than in the test table (column {column!r}, calibration vs test): {shown}. An "
            f"item lies in one stratum; fix the stratum column of one table."
        )
    differ = [
        (lab, test)
        for lab, test in pairs
        if test.verdict is not None and test.verdict != lab.verdict
    ]
    if differ:
        shown = "; ".join(
            f"{lab.item!r} (system {lab.system!r}: calibration {lab.verdict}, test {test.verdict})"
            for lab, test in differ[:MAX_GROUPS_SHOWN]
        )
        more = f" (and {len(differ) - MAX_GROUPS_SHOWN} more)" if len(differ) > 5 else ""
        binary = all(v.verdict in (0, 1) for p in differ for v in p)
        legend = " (1 = correct)" if binary else ""
        raise ValueError(
            f"{len(differ)} of the {len(pairs)} labelled items whose ids (column {column!r}) "
            f"are also among the judged test items have a different judge verdict in the two "
            f"tables{legend}: {shown}{more}. Matching ids mean the same item judged "
            f"once, so the verdicts must agree: fix the verdicts, or, if the two tables number "
            f"different items with the same ids, rename the calibration table's ids (e.g. "
            f"prefix them with 'cal-') or drop its {column!r} column."
        )


def _mixed_error(n_in: int, outside: list[LabelledRow], column: str) -> ValueError:
    """Return the error for labelled items only partly among the judged items (a mix of designs)."""
    total = n_in + len(outside)
    shown = ", ".join(f"{r.item!r} (system {r.system!r})" for r in outside[:MAX_GROUPS_SHOWN])
    if len(outside) > MAX_GROUPS_SHOWN:
        shown += f", … ({len(outside) - MAX_GROUPS_SHOWN} more)"
    return ValueError(
        f"Only {n_in} of the {total} labelled items of the calibration table are among the "
        f"judged items of the test table (matched by system and column {column!r}); "
        f"{len(outside)} are not: {shown}. That mixes two designs — "
        f"labelled items drawn from the judged items (random) and a separate calibration set "
        f"— which the counts cannot hold. If every labelled item was drawn from the judged "
        f"items, add the missing ones to the test table with their judge verdicts (and check "
        f"that ids are spelled alike: '007' and '7' are different ids). If the calibration "
        f"set is separate from the test items, remove the {n_in} overlapping items from the "
        f"test table (or give them distinct ids), so that no item is counted twice."
    )


def match_labelled(
    labelled: list[LabelledRow],
    test_rows: list[JudgedRow],
    column: str,
    design: str | None,
) -> Overlap:
    """Match the calibration table's labelled items with the judged test items.

    Matching is by system and item id (ids compare by value and type: ``"007"`` and
    ``"7"`` are two items). Either every labelled item is a judged test item (the random
    design: they leave ``n, k``; inferred when ``design`` is None), or none is (separate
    sets: the design given, default ``"stratified"``); a mix is an error, and so is
    ``design="stratified"`` with any overlap (the items would be counted twice).
    """
    by_key: dict[tuple, list[JudgedRow]] = defaultdict(list)
    for row in test_rows:
        by_key[(row.system, row.item)].append(row)
    repeated = [(key, rows) for key, rows in by_key.items() if len(rows) > 1]
    if repeated:
        shown = ", ".join(
            f"{key[1]!r} (system {key[0]!r}, {len(rows)} rows)" for key, rows in repeated[:5]
        )
        raise ValueError(
            f"Item ids in column {column!r} must be unique within each system of the test "
            f"table; {len(repeated)} labelled items repeat there: {shown}. Remove the "
            f"duplicate rows, or give distinct items distinct ids." + REPEATED_LABELLED
        )
    pairs = [
        (lab, by_key[(lab.system, lab.item)][0])
        for lab in labelled
        if (lab.system, lab.item) in by_key
    ]
    if not pairs:
        return Overlap(design or DEFAULT_DESIGN, {}, {}, False, 0)
    if design == "stratified":
        raise ValueError(
            f"design='stratified' was passed, but {len(pairs)} of the {len(labelled)} "
            f"labelled items of the calibration table are also judged items of the test "
            f"table (same system and {column!r} id, e.g. "
            f"{_ids_shown([lab.item for lab, _ in pairs], 3)}): counted in both tables, they "
            f"would be counted twice. If the labelled items were drawn from the judged items, "
            f"pass design='random' (each item is then counted once); if they are a separate, "
            f"stratified calibration set, drop the overlapping items from the test table (or "
            f"give distinct items distinct ids)."
        )
    outside = [lab for lab in labelled if (lab.system, lab.item) not in by_key]
    if outside:
        raise _mixed_error(len(pairs), outside, column)
    _check_pairs(pairs, column)
    removed: dict[tuple, Counter] = defaultdict(Counter)
    ids: dict[Any, list] = defaultdict(list)
    for lab, test in pairs:
        ids[lab.system].append(lab.item)
        if test.verdict is not None:  # a row without a verdict was never in n, k
            removed[(test.system, test.stratum)][(test.verdict,)] += 1
    return Overlap("random", dict(removed), dict(ids), design is None, len(pairs))


def describe_removed(removed: Mapping[tuple, Counter]) -> str:
    """``system='a', stratum='all': 20``: labelled items taken out of the test counts."""
    return "; ".join(
        f"{group_name(*g)}: {sum(c.values())}" for g, c in sorted(removed.items(), key=str)
    )
