"""``bayesjudge profile``: what a verdict file holds, and the ``estimate`` command that reads it.

The work is :func:`bayesjudge.data.profile.profile_table`; this module reads the options,
prints the profile for people (names from the data shown with control characters escaped) or
as JSON (``--json``, the keys of :meth:`Profile.to_dict`, documented in ``docs/cli.md``), and
writes the same text to ``--output`` atomically. The exit status is 0 whenever the file could
be profiled, problems or not; the problems are in the output (``problems``, each with a
``severity``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import warnings

import pandas as pd

from bayesjudge._io import atomic_write
from bayesjudge._text import terminal_safe
from bayesjudge.cli import estimate
from bayesjudge.cli._categorical import check_labelled, read_table_counts
from bayesjudge.cli._common import (
    WRITTEN,
    UsageError,
    check_input_file,
    check_output_file,
    label,
)
from bayesjudge.data import CategoricalCounts
from bayesjudge.data.harness import FORMATS
from bayesjudge.data.profile import Problem, Profile, profile_table

_ROLE_OPTIONS = (
    ("judge", "the judge's verdict"),
    ("human", "the human label"),
    ("system", "the evaluated system"),
    ("stratum", "the stratum (task type, subset, ...)"),
    ("item", "the item id"),
    ("evaluator", "the judge's name (several judges in one file)"),
    ("repeats", "the repeat number of an item judged several times (epoch)"),
)


def add_parser(subparsers) -> None:
    """Add the ``profile`` command to ``subparsers``."""
    pro = subparsers.add_parser(
        "profile",
        help="show what a verdict file holds and the estimate command that reads it",
        description="Profile a file of judge verdicts (CSV, Parquet or an evaluation log) and, "
        "optionally, a gold file of human labels: columns and what they look like, label "
        "values, systems, strata, judges, items and repeats, the overlap of judged and "
        "labelled items, the labelling design, problems, and the next command to run.",
    )
    pro.add_argument("file", metavar="FILE", help="the judge verdicts: CSV/TSV, Parquet or a log")
    pro.add_argument(
        "--gold",
        metavar="FILE",
        help="human labels: a subset of the judged items (matched by item id) or a separate "
        "calibration set with its own verdicts",
    )
    for role, what in _ROLE_OPTIONS:
        pro.add_argument(f"--{role}", metavar="COLUMN", help=f"column of {what} (default: guessed)")
    pro.add_argument("--positive", help="label value meaning 'correct' if not yes/no, 1/0, ...")
    pro.add_argument(
        "--test-format",
        "--format",
        dest="format",
        choices=FORMATS,
        help="format of FILE, as estimate's --test-format (default: by the file's suffix)",
    )
    pro.add_argument(
        "--scorer",
        help="Inspect log: the scorer whose values are the verdicts (if several; the error "
        "lists them); passed on to the next command",
    )
    pro.add_argument(
        "--metric",
        help="lm-eval samples: the per-sample metric that is the verdict, e.g. acc; passed on "
        "to the next command",
    )
    pro.add_argument("--json", action="store_true", help="print JSON instead of text")
    pro.add_argument(
        "--output", metavar="FILE", help="also write what is printed to FILE, atomically"
    )
    pro.set_defaults(func=run)


def run(args) -> int:
    """Profile the files and print (and write) the profile."""
    check_input_file("FILE", args.file)
    check_input_file("--gold", args.gold)
    inputs = {"FILE": args.file, "--gold": args.gold}
    output = None if args.output is None else check_output_file("--output", args.output, inputs)
    profile = profile_table(
        args.file,
        args.gold,
        **{role: getattr(args, role) for role, _ in _ROLE_OPTIONS},
        positive=args.positive,
        format=args.format,
        scorer=args.scorer,
        metric=args.metric,
    )
    profile = _check_command(profile)
    if args.json:
        text = json.dumps(profile.to_dict(), indent=2, ensure_ascii=False)
    else:
        text = _render(profile)
    print(text)
    if output is not None:
        atomic_write(output, text + "\n")
        WRITTEN.append(str(output))
    return 0


class _ArgvError(Exception):
    """The suggested command does not parse with this bayesjudge's ``estimate``."""


class _StrictParser(argparse.ArgumentParser):
    def error(self, message):
        raise _ArgvError(message)


def _check_command(profile: Profile) -> Profile:
    """Read the files as the suggested command would; add a problem where that fails.

    The profile (layer 2) counts the files as ``estimate`` does; this check runs the command
    line's own parser and reader (``read_table_counts``: correct/incorrect or K-category
    labels) on the suggested arguments, so that an option this version lacks, or a rule of
    the command line itself, is found too.
    """
    if profile.command is None:
        return profile
    parser = _StrictParser(prog="bayesjudge")
    estimate.add_parser(parser.add_subparsers(dest="command"))
    try:
        args, unknown = parser.parse_known_args(list(profile.command[1:]))
        if unknown:
            raise _ArgvError(f"unrecognized arguments: {' '.join(unknown)}")
    except _ArgvError as err:
        problem = Problem(
            "command_unsupported",
            "error",
            f"This bayesjudge's estimate does not accept the suggested command ({err}); "
            "rename the columns to the defaults (judge, human, item) or count the tables in "
            "Python with JudgeCounts.from_frames.",
        )
        return dataclasses.replace(profile, problems=(*profile.problems, problem))
    kept = tuple(p for p in profile.problems if p.code != "command_fails")
    if any(p.severity == "error" for p in kept):
        return profile  # the command stops anyway; the problems above say why
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the profile lists the counting's warnings
            counts = read_table_counts(args)
            if isinstance(counts, CategoricalCounts):
                check_labelled(counts)
    except (UsageError, ValueError, OSError) as err:
        # the command line's own message, which the user would see, replaces the counting's
        problem = Problem("command_fails", "error", f"estimate would stop: {err}")
        return dataclasses.replace(profile, problems=(*kept, problem))
    return profile


def _render(profile: Profile) -> str:
    """Return the profile as text for a terminal, names from the data escaped."""
    lines = []
    for name, info in profile.files.items():
        if info is not None:
            lines.append(
                f"{name}: {terminal_safe(info['source'])} ({info['format']}, {info['rows']} rows)"
            )
    lines += ["", "Columns:", _indent(_columns_table(profile))]
    if profile.labels:
        lines += ["", "Label values:"]
        for lab in profile.labels:
            meaning = {
                1: "correct", 0: "incorrect",
                None: "a category" if lab.categorical else "NOT UNDERSTOOD",
            }  # fmt: skip
            values = "; ".join(
                f"{terminal_safe(repr(v))} {_rows(c)} → {meaning[m]}" for v, c, m in lab.values
            )
            missing = f"; {_rows(lab.missing)} empty" if lab.missing else ""
            lines.append(
                f"  {lab.role} column {terminal_safe(repr(lab.column))} ({lab.table}): "
                f"{values or 'none'}{missing}"
            )
    lines.append("")
    for title, groups in (
        ("Systems", profile.systems),
        ("Strata", profile.strata),
        ("Judges", profile.judges),
    ):
        lines.append(f"{title}: {_groups_text(groups)}")
    lines += _items_lines(profile)
    lines += ["", f"Labelling design: {profile.design} ({terminal_safe(profile.design_reason)})"]
    if profile.counts:
        frame = pd.DataFrame(list(profile.counts))
        for dim in ("system", "stratum"):
            frame[dim] = frame[dim].map(label)
        lines += ["", "Counts estimate will use:", _indent(frame.to_string(index=False))]
    lines += _problem_lines(profile)
    lines += _command_lines(profile)
    return "\n".join(lines)


def _rows(count: int) -> str:
    return f"{count} row{'' if count == 1 else 's'}"


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())


def _columns_table(profile: Profile) -> str:
    rows = []
    for c in profile.columns:
        guessed = f" ({c.how})" if c.role else ""
        values = ", ".join(terminal_safe(repr(_short(v))) for v, _ in c.top[:4])
        more = ", …" if c.distinct > 4 else ""
        rows.append(
            {
                "table": c.table,
                "column": label(c.name),
                "kind": c.kind,
                "missing": c.missing,
                "distinct": c.distinct,
                "role": f"{c.role or '—'}{guessed}",
                "values": f"{values}{more}",
            }
        )
    return pd.DataFrame(rows).to_string(index=False)


def _short(text: str, width: int = 20) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _groups_text(groups) -> str:
    if not groups:
        return "—"
    shown = ", ".join(f"{label(n)} ({_rows(c)})" for n, c in groups[:12])
    more = f", … ({len(groups) - 12} more)" if len(groups) > 12 else ""
    return f"{len(groups)}: {shown}{more}"


def _items_lines(profile: Profile) -> list[str]:
    lines = []
    items = profile.items
    if items is None:
        lines.append("Items: no item-id column")
    else:
        repeats = ", ".join(f"{r}×: {n}" for r, n in items["verdicts_per_item"].items())
        column = terminal_safe(repr(items["column"]))
        lines.append(
            f"Items: {items['distinct']} distinct ids in column {column}"
            f"; rows per item: {repeats or '—'}"
            + (f"; {items['repeated']} items repeated" if items["repeated"] else "")
        )
    overlap = profile.overlap
    if overlap is not None:
        lines.append(
            f"Overlap: {overlap['judged']} judged, {overlap['labelled']} labelled, "
            f"{overlap['both']} both, {overlap['labelled_only']} labelled but not judged"
        )
    return lines


def _problem_lines(profile: Profile) -> list[str]:
    if not profile.problems:
        return ["", "Problems: none found"]
    lines = ["", f"Problems ({len(profile.problems)}):"]
    for p in profile.problems:
        lines.append(f"  {p.severity}: [{p.code}] {terminal_safe(p.message)}")
    return lines


def _command_lines(profile: Profile) -> list[str]:
    lines = ["", *(f"Note: {terminal_safe(n)}" for n in profile.notes)]
    guessed = ", ".join(profile.guessed)
    if guessed:
        lines.append(f"Guessed from names or values: {guessed}; pass the options to override.")
    if profile.command is None:
        return lines
    errors = any(p.severity == "error" for p in profile.problems)
    head = (
        "Next command (fix the errors above first; as it stands it stops or gives no estimate):"
        if errors
        else "Next command:"
    )
    line = profile.command_line
    lines += [head, f"  {terminal_safe(line)}"]
    if terminal_safe(line) != line:
        lines.append(
            "  (control characters in names are shown escaped; --json gives the exact argv)"
        )
    return lines
