"""What several commands share: argparse types and options, input and output checks, tables.

Every mistake found here raises :class:`UsageError`, which ``bayesjudge.cli.main`` prints as
one ``bayesjudge: error:`` line with exit status 2.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from bayesjudge._io import check_output_file as check_writable
from bayesjudge._progress import show_progress
from bayesjudge._text import fmt_interval, terminal_safe
from bayesjudge.core._validation import CALIBRATION_DESIGNS
from bayesjudge.data import JudgeCounts, as_frame
from bayesjudge.data.harness import (
    FORMATS,
    HARNESS_FORMATS,
    check_gold_labels,
    harness_format,
    join_gold,
    read_table,
)

#: Files this run has written (each atomically), named in the message after Ctrl-C.
WRITTEN: list[str] = []

#: Whether this run draws a progress bar (its line is ended before a message after Ctrl-C).
PROGRESS: list[bool] = []

#: Upper bounds of --draws, --tune, --reps and --chains: far beyond any useful run, below
#: any overflow or allocation error deep inside numpy or the sampler.
MAX_STEPS = 100_000_000
MAX_CHAINS = 1_000

#: Refuse a fit whose posterior draws would take more than this share of the machine's memory.
MEMORY_SHARE = 0.5


class UsageError(Exception):
    """A mistake in the command line or its input files, reported in one line."""


#: The table columns that give a calibration set its own groups, by dim.
_GROUP_FLAGS = {"system": "--system", "stratum": "--stratum"}


def resolve_calibration_model(value, counts, flag: str, dims=("system", "stratum"), exact=None):
    """Return (model, pool_over, note) for --calibration-model / --calibration-design.

    Not given (``value`` None): "shared", pooled over the dims whose one calibration set every
    group shares (a calibration table without the --system column holds one set for every
    system: ``counts.calibration_shared_over``), else "separate"; ``note`` says which and why
    (None for "separate"). Given as "separate" for such a shared set: a UsageError in the
    command line's words (the models would count the one set once per group).
    ``pool_over`` is None where the model's default applies. ``dims``: the dims whose
    sharing matters (``("system",)`` for comparisons of systems). ``exact``: (the option that
    asked for the exact engine, the option that fits MCMC instead) where the command line
    asked for it, refused with such a shared set (the engine needs each group's own).
    """
    shared = tuple(d for d in counts.calibration_shared_over if d in dims)
    columns = " or ".join(_GROUP_FLAGS.get(d, d) for d in shared)
    if value is None:
        if not shared:
            return "separate", None, None
        note = (
            f"the calibration table has no {columns} column, so one set serves every "
            f"{' and '.join(shared)}"
        )
        if exact is not None:
            raise UsageError(
                f"{exact[0]} needs each group's own calibration set, but {note}. Use "
                f"{exact[1]} (it fits {flag} shared), or label items per system and give the "
                "calibration table a --system column."
            )
        return "shared", shared, note
    if value == "separate" and shared:
        raise UsageError(
            f"{flag} separate gives each group its own calibration set, but the calibration "
            f"table has no {columns} column: its one set is shared over {','.join(shared)} and "
            f"would be counted once per group. Use {flag} shared (the default for such a "
            f"table), or label items per group and give the calibration table a {columns} "
            "column."
        )
    return value, None, None


#: Python spellings in the library's messages and their command-line options, in the order
#: applied (the longer phrase first).
CLI_WORDS = (
    ("design='stratified' was passed", "--design stratified was given"),
    ("design='stratified'", "--design stratified"),
    ("design='random'", "--design random"),
    ("(or leave design out)", "(or leave --design out)"),
    ("as calibration= and the unlabelled rows as test=",
     "with --calibration and the unlabelled rows with --test"),
)  # fmt: skip


def cli_words(text: str) -> str:
    """Return a library message with its design options spelled as on the command line.

    The data layer serves Python and the command line alike and names its arguments
    (``design='random'``); a message reaching the terminal names the option instead.

    Examples
    --------
    >>> cli_words("design='stratified' was passed, ...; pass design='random'.")
    '--design stratified was given, ...; pass --design random.'
    """
    for python, option in CLI_WORDS:
        text = text.replace(python, option)
    return text


def show_progress_for(args) -> bool:
    """Resolve ``--progress/--no-progress`` (None: a terminal, not CI or tests) and note it."""
    shown = show_progress(args.progress)
    PROGRESS.append(shown)
    return shown


# --- argparse types and options ---------------------------------------------------------------


def parse_seed(text: str) -> int:
    """Parse a random seed: a non-negative integer of any size (argparse type)."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < 0:
        raise argparse.ArgumentTypeError(
            f"must be a non-negative integer (any size), e.g. 1 or 2026; got {text!r}. "
            "Leave it out to draw one"
        )
    return value


def parse_whole(example: str, low: int = 0):
    """Return an argparse type for a whole number >= ``low`` of any size (the library bounds it)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low:
            raise argparse.ArgumentTypeError(
                f"must be a whole number >= {low} written in digits, e.g. {example}; got {text!r}"
            )
        return value

    return parse


def parse_unit(example: str):
    """Return an argparse type for a probability strictly between 0 and 1."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not 0 < value < 1:  # NaN fails too
            raise argparse.ArgumentTypeError(
                f"must be a number strictly between 0 and 1, e.g. {example}; got {text!r}"
            )
        return value

    return parse


def parse_open_unit(text: str) -> float:
    """Parse a probability strictly between 0 and 1 (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1), e.g. 0.95; got {text!r}")
    return value


def parse_ci_prob(text: str) -> float:
    """Parse ``--ci-prob``: a probability in (0, 1) with 1 − value below 1 (argparse type).

    ``1 - 1e-300`` is exactly 1.0 in floating point, so a level that small would reach the
    library as alpha = 1 and fail there under another name.
    """
    value = parse_open_unit(text)
    if not 1 - value < 1:
        raise argparse.ArgumentTypeError(
            f"{text!r} is too small: 1 − ci_prob rounds to 1 in floating point, so no interval "
            "of that level can be computed; give a level such as 0.9, 0.95 or 0.99"
        )
    return value


def parse_min_probability(text: str) -> float:
    """Parse ``--min-probability``: a probability in (0.5, 1) (argparse type).

    At 0.5 or below, a claim the posterior finds no more likely than its opposite would be
    supported, and so could the claim and its opposite together.
    """
    value = parse_open_unit(text)
    if not value > 0.5:
        raise argparse.ArgumentTypeError(
            f"must be above 0.5; got {text!r}. At or below 0.5 a claim the posterior finds no "
            "more likely than its opposite would pass, and so could 'A over B' and 'B over A' "
            "together; use e.g. 0.95 (the default) or 0.99"
        )
    return value


def parse_int_at_least(low: int, high: int | None = None):
    """Return an argparse type that accepts an integer >= ``low`` (and <= ``high``)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low:
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}; got {text!r}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(
                f"must be an integer of at most {high:,}; got {text!r}"
            )
        return value

    return parse


def add_progress_option(parser: argparse.ArgumentParser, what: str) -> None:
    """Add ``--progress/--no-progress``: default None, resolved by ``show_progress``."""
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"{what} on stderr (default: shown in a terminal, not in CI, pipes or tests)",
    )


def add_table_options(parser: argparse.ArgumentParser) -> None:
    """Add the options that read item-level test and calibration tables (estimate, fit, ...)."""
    parser.add_argument(
        "--test",
        required=True,
        help="the judged items: CSV/Parquet, an Inspect AI log (.eval/.json), an lm-eval "
        "sample file (samples_*.jsonl) or JSON Lines. If a CSV/Parquet table also has the "
        "--human column, filled for the labelled rows and empty for the rest, it is the one "
        "table of the random labelling design and --calibration is not needed",
    )
    parser.add_argument(
        "--calibration",
        help="CSV/Parquet of human-labelled calibration items (not needed when --test holds "
        "the human labels)",
    )
    parser.add_argument(
        "--gold",
        metavar="FILE",
        help="human labels joined to --test by item id (CSV/Parquet/JSON Lines with columns "
        "item and --human; system and epoch where the log has several): labels of judged items "
        "(random design), or a separate calibration set with its own --judge column "
        "(stratified design)",
    )
    parser.add_argument(
        "--test-format",
        choices=FORMATS,
        default=None,
        help="format of --test (default: by its suffix: .eval/.json Inspect, samples_*.jsonl "
        "lm-eval, .jsonl JSON Lines, .csv, .parquet)",
    )
    parser.add_argument(
        "--scorer", help="Inspect log: the scorer whose values are the verdicts (if several)"
    )
    parser.add_argument(
        "--metric",
        help="lm-eval samples: the per-sample metric that is the verdict, e.g. acc or "
        "'exact_match,strict-match' (with lm-eval's filter)",
    )
    parser.add_argument("--judge", default="judge", help="judge verdict column (default: judge)")
    parser.add_argument("--human", default="human", help="human label column (default: human)")
    parser.add_argument(
        "--system",
        help="column naming the evaluated system (Inspect/lm-eval log: the system's name, in "
        "place of the model the log names)",
    )
    parser.add_argument("--stratum", help="column naming the stratum (task type, length, ...)")
    parser.add_argument(
        "--item",
        metavar="COLUMN",
        help="item id column of --test: matches --gold's labels (and labelled items of "
        "--calibration) with the judged items, pairs systems judged on the same items, and "
        "with --repeats groups an item's repeated verdicts (a log's items are its sample ids)",
    )
    parser.add_argument(
        "--judges",
        metavar="COLUMN",
        help="CSV/Parquet tables with one row per (item, judge): the column naming the judge. "
        "Several judges' verdicts on the same items are then analysed together (their verdict "
        "patterns; needs --item)",
    )
    parser.add_argument(
        "--covariates",
        metavar="COLUMNS",
        help="with --judges: comma-separated numeric columns (answer length, position shown, "
        "...) on which each judge's q0 and q1 depend (logistic); one row per verdict, so a "
        "judge may grade an item in both answer orders",
    )
    parser.add_argument(
        "--theta-covariates",
        metavar="COLUMNS",
        help="with --covariates: comma-separated numeric item-level columns (the length "
        "difference of a pair, ...) on which the truth itself depends (logistic); θ is then "
        "averaged over the test items. Constant within an item; may repeat a --covariates column",
    )
    parser.add_argument(
        "--repeats",
        metavar="COLUMN",
        help="CSV/Parquet --test: the column numbering the repeated verdicts of an item "
        "(epoch, sample); with --item, rows of one item are one cluster and the intervals "
        "treat the items as the units (cluster-delta, cluster-bootstrap). Logs: their epochs",
    )
    parser.add_argument(
        "--positive",
        help="label value meaning 'correct' if not yes/no, 1/0, ... (Inspect's C/I verdicts "
        "are read without it)",
    )
    parser.add_argument(
        "--design",
        choices=CALIBRATION_DESIGNS,
        default=None,
        help="how the labelled items were chosen: 'stratified' (a calibration set sampled per "
        "human label, Lee et al.) or 'random' (humans labelled a random subset of the judged "
        "items; each item is counted once). Default: inferred — 'random' for one --test table "
        "with human labels, or where --item ids show the labelled items among the judged "
        "ones (report); else 'stratified'",
    )


# --- input and output checks, before any work --------------------------------------------------


def check_input_file(option: str, path) -> None:
    """Fail before any work unless ``path`` (the value of ``option``) is a readable file."""
    if path is None or not isinstance(path, str | os.PathLike):
        return
    text = os.fspath(path)
    shown = terminal_safe(text)
    if not text.strip():
        raise UsageError(f"{option}: the path is empty; give a CSV or Parquet file.")
    file = Path(text).expanduser()
    if file.is_dir():
        raise UsageError(
            f"{option} {shown}: is a folder, not a file; give the CSV or Parquet file inside it."
        )
    if not file.exists():
        where = "" if file.is_absolute() else f" in {terminal_safe(os.getcwd())}"
        raise UsageError(f"{option} {shown}: no such file{where}; check the name and folder.")
    if not os.access(file, os.R_OK):
        raise UsageError(f"{option} {shown}: cannot be read (permission denied); check its mode.")
    if file.is_file() and file.stat().st_size == 0:
        raise UsageError(
            f"{option} {shown}: the file is empty; it needs a header row naming the columns "
            "and one row per item."
        )


def check_output_file(option: str, path, inputs: dict | None = None) -> Path:
    """Check before any work that ``path`` (the value of ``option``) can be written; return it.

    An existing file is replaced at the end, atomically: a reader sees the old file or the new
    one, never half of either. Devices and other special files (``/dev/full``) are refused,
    and so is a path that is one of ``inputs`` (``{option: path}`` of the files the command
    reads; None values are skipped): the result would replace the data it was computed from.
    """
    if not str(path).strip():
        raise UsageError(f"{option}: the path is empty; give a file name such as 'fit.nc'.")
    file = Path(path).expanduser()
    try:
        check_writable(file, what=f"{option} {terminal_safe(path)}")
    except ValueError as err:
        raise UsageError(str(err)) from None
    if file.exists() and not file.is_file():
        raise UsageError(
            f"{option} {terminal_safe(path)}: exists and is not a regular file (a device, pipe "
            "or socket); give the path of a file."
        )
    _probe_folder(option, path, file.parent)
    for source, given in (inputs or {}).items():
        if not isinstance(given, str | os.PathLike) or not str(given).strip():
            continue
        if _same_file(file, Path(os.fspath(given)).expanduser()):
            raise UsageError(
                f"{option} {terminal_safe(path)} is the {source} file "
                f"({terminal_safe(given)}): writing the result there would replace the data "
                f"it is computed from; give {option} another file name."
            )
    return file


def _probe_folder(option: str, path, folder: Path) -> None:
    """Create and remove a file in ``folder``, as the atomic write will at the end.

    Permission bits do not tell everything (``/proc``, a read-only mount, a full disk): the
    write would fail only after all the work.
    """
    try:
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".bayesjudge-", suffix=".tmp")
    except OSError as err:
        raise UsageError(
            f"{option} {terminal_safe(path)}: cannot create a file in "
            f"{terminal_safe(folder)} ({err.strerror or err}); give a path in a folder you "
            "can write to."
        ) from None
    os.close(handle)
    os.unlink(probe)


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file: the same inode if both exist, else the same path."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one does not exist (yet): compare the resolved paths
        return a.resolve() == b.resolve()


def check_output_folder(option: str, path) -> Path:
    """Check before any work that folder ``path`` exists or can be created; return it.

    Nothing is created here: the folder is made when its files are written, at the end (see
    :func:`bayesjudge.studies._framework.staged_folder`), so that an interrupted or failed run
    leaves no empty folder behind.
    """
    if path is None or not str(path).strip():
        raise UsageError(
            f"{option}: the folder name is empty; give a folder, e.g. {option} results "
            "(use '.' for the current folder)."
        )
    shown = terminal_safe(path)
    folder = Path(path).expanduser()
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{option} {shown}: exists and is not a folder; choose another name.")
    existing = folder
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(
            f"{option} {shown}: cannot create the folder, because {terminal_safe(existing)} is a "
            "file; choose another path."
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        where = "the folder" if existing == folder else f"its parent {terminal_safe(existing)}"
        raise UsageError(
            f"{option} {shown}: {where} is not writable (permission denied); choose another path."
        )
    return folder


def physical_memory() -> int | None:
    """Return the machine's physical memory in bytes, or None where it cannot be read."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return None


def check_draws_fit_in_memory(args) -> None:
    """Refuse --draws x --chains that cannot be held in memory, before reading or sampling.

    The posterior keeps about a dozen float64 values per draw and group (θ, q0, q1, J, p,
    θ_total, sampler statistics); a lower bound with one group is checked here, so that
    ``--draws 10**12`` fails at once with the fix rather than after minutes or with a crash.
    """
    memory = physical_memory()
    if memory is None:
        return
    needed = 12 * 8 * args.draws * args.chains
    if needed > MEMORY_SHARE * memory:
        raise UsageError(
            f"--draws {args.draws} x --chains {args.chains} would keep about "
            f"{needed / 2**30:,.0f} GiB of posterior draws per group, more than this machine "
            f"can hold ({memory / 2**30:,.0f} GiB); 1000 to 10000 draws per chain are plenty. "
            "Lower --draws or --chains."
        )


# --- reading tables -----------------------------------------------------------------------------


def read_counts(args) -> JudgeCounts:
    """Count the --test and --calibration tables with the table options of the command.

    A calibration table without the --system (or --stratum) column is one set that serves
    every system (stratum): it is counted once and attached to every group, and the models
    count it once (``JudgeCounts.calibration_shared_over``); a human column of the test table
    is then not read. Without --calibration, a test table holding the --human column is the
    one table of the random labelling design (rows with a human label are the labelled
    items). ``--design`` (default: inferred), ``--item`` and ``--repeats`` (the column
    numbering the repeated verdicts of an item: clusters) are passed on to
    :meth:`JudgeCounts.from_frames`.
    """
    options = {"judge": args.judge, "positive": args.positive}
    groups = {"system": args.system, "stratum": args.stratum}
    item = getattr(args, "item", None)
    repeats = getattr(args, "repeats", None)
    design = getattr(args, "design", None)
    if getattr(args, "gold", None) is not None or is_harness_log(args):
        return _read_log_counts(args)
    if repeats is not None and item is None:
        raise UsageError(
            f"--repeats {terminal_safe(repeats)} numbers the repeated verdicts of an item: "
            "give the item id column with --item too (rows with the same id are one item)."
        )
    if args.calibration is not None:
        columns = as_frame(args.calibration, "calibration").collect_schema().names()
        absent = [dim for dim, col in groups.items() if col is not None and col not in columns]
        if absent:
            tests = JudgeCounts.from_frames(
                args.test, None, **groups, **options, human=None, item=item, repeats=repeats
            )
            kept = {dim: None if dim in absent else col for dim, col in groups.items()}
            calibration = JudgeCounts.from_frames(
                None, args.calibration, **kept, **options, human=args.human, design=design
            )
            return tests.with_calibration_from(calibration)
    return JudgeCounts.from_frames(
        args.test,
        args.calibration,
        **groups,
        **options,
        human=args.human,
        item=item,
        design=design,
        repeats=repeats,
    )


def is_harness_log(args) -> bool:
    """Whether --test is a harness log or JSON Lines (read by ``data.harness``)."""
    fmt = getattr(args, "test_format", None)
    if fmt is None:
        # Only the log suffixes: any other file keeps the table reader's own message.
        return Path(str(args.test)).suffix.lower() in (".eval", ".json", ".jsonl", ".ndjson")
    return fmt in HARNESS_FORMATS


class LogTables(NamedTuple):
    """--test read by ``data.harness.read_table`` and joined with --gold: what both counts take.

    ``test`` and ``calibration`` are the tables to count (``calibration`` the gold rows of
    the stratified design, else None); ``judge``, ``item`` and ``system`` name their columns
    (a log's tidy ``judge``, ``item`` and ``system``, a table's own columns); ``repeats`` the
    ``from_frames`` option numbering repeated verdicts of an item (``{}`` when none).
    """

    test: pd.DataFrame
    calibration: pd.DataFrame | None
    design: str | None
    judge: str
    item: str
    system: str | None
    repeats: dict
    log: bool
    positive: object


def read_log_tables(args) -> LogTables:
    """Read --test with ``data.harness.read_table`` and join --gold's human labels by item id.

    A log's rows are one verdict each (``item``, ``system``, ``judge``, ``epoch``); epochs of
    an item are its repeated verdicts (``repeats={"repeats": "epoch"}``); JSON Lines take
    their epoch key from --repeats, CSV/Parquet tables joined with --gold their --repeats
    column. Item ids are text (``"007"`` is not ``"7"``); --gold's labels are joined by
    :func:`bayesjudge.data.harness.join_gold`: labels of judged items are the random design's
    one table (``test`` with the --human column), a separate set with its own judge column the
    stratified design. The verdict values are kept as the log has them.
    """
    if args.calibration is not None:
        raise UsageError(
            "--gold and harness logs take the human labels from --gold; leave out "
            "--calibration (or pass CSV/Parquet tables with --test and --calibration)."
        )
    check_input_file("--gold", getattr(args, "gold", None))
    item = getattr(args, "item", None) or "item"
    fmt = harness_format(args.test, getattr(args, "test_format", None))
    log = fmt in HARNESS_FORMATS
    given = getattr(args, "repeats", None)
    if fmt in ("inspect", "lm-eval") and given not in (None, "epoch"):
        raise UsageError(
            f"--repeats {terminal_safe(given)}: an {fmt} log numbers the repeated verdicts of "
            "an item itself (its epochs, counted as repeats); leave out --repeats."
        )
    table = read_table(
        args.test,
        format=fmt,
        scorer=getattr(args, "scorer", None),
        metric=getattr(args, "metric", None),
        system=args.system,
        item=item,
        judge=args.judge,
        **({"epoch": given} if fmt == "jsonl" and given is not None else {}),
    )
    judge = "judge" if log else args.judge
    item = "item" if log else item
    if args.gold is not None:
        joined = join_gold(
            table, args.gold, item=item, human=args.human, judge=judge,
            system=None if log else getattr(args, "system", None),
        )  # fmt: skip
        test, calibration, design = joined.test, joined.calibration, joined.design
    else:
        test, calibration, design = table, None, None
    # Labelled items judged in several epochs are clusters of the calibration too.
    epochs = log and test["epoch"].nunique() > 1
    # a log's epochs; a CSV/Parquet table's --repeats column, which from_frames checks
    repeats = {"repeats": "epoch"} if epochs else {} if log else {"repeats": given}
    return LogTables(
        test=test,
        calibration=calibration,
        design=getattr(args, "design", None) or design,
        judge=judge,
        item=item,
        system="system" if log else args.system,
        repeats={k: v for k, v in repeats.items() if v is not None},
        log=log,
        positive=table.attrs.get("positive"),
    )


def _read_log_counts(args) -> JudgeCounts:
    """Count --test and --gold (:func:`read_log_tables`) as correct/incorrect verdicts."""
    return log_judge_counts(args, read_log_tables(args))


def log_judge_counts(args, tables: LogTables) -> JudgeCounts:
    """Count :func:`read_log_tables`' tables as binary verdicts.

    Inspect's "C" means correct unless --positive says otherwise. A gold file without the
    system column of a log of several systems is one calibration set serving every system.
    """
    test, calibration, judge, item = tables.test, tables.calibration, tables.judge, tables.item
    if args.gold is not None:
        check_gold_labels(
            args.gold, human=args.human, positive=args.positive, log_positive=tables.positive
        )
    positive = args.positive
    if positive is None and tables.positive is not None:
        positive = {judge: tables.positive}
    options = {"judge": judge, "positive": positive, "stratum": args.stratum}
    system, repeat = tables.system, tables.repeats
    if calibration is not None and system is not None and system not in calibration.columns:
        # One calibration set for every system: counted once, attached to each (read_counts).
        tests = JudgeCounts.from_frames(test, None, system=system, item=item, **options, **repeat)
        labelled = JudgeCounts.from_frames(
            None, calibration, **options, human=args.human, design="stratified"
        )
        return tests.with_calibration_from(labelled)
    return JudgeCounts.from_frames(
        test,
        calibration,
        **options,
        human=args.human if args.gold is not None else None,
        system=system,
        item=item,
        design=tables.design,
        **repeat,
    )


# --- tables and values for the terminal and JSON ----------------------------------------------


def ci_label(alpha: float) -> str:
    """Return the column name of ``1 - alpha`` intervals, e.g. ``95% interval``."""
    return f"{100 * (1 - alpha):g}% interval"


def intervals(lower, upper) -> list[str]:
    """Return the table cells ``[lower, upper]`` of paired bounds ("—" where one is NaN)."""
    return [fmt_interval(a, b) for a, b in zip(lower, upper, strict=True)]


def label(value) -> str:
    """Return a system or stratum name for a terminal table: "—" for none, codes escaped."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "—"
    return terminal_safe(value)


def jsonable(value):
    """Return a JSON-ready Python scalar: full float precision, NaN and ±inf as null.

    JSON has neither; an infinite value (a singular judge's error amplification) is null,
    and the warning printed beside it says why.
    """
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def result_frame(result, truth=None) -> pd.DataFrame:
    """Tidy one row per (system, stratum) from an ``estimate`` Dataset."""
    rows = []
    for system in result["system"].values:
        for stratum in result["stratum"].values:
            r = result.sel(system=system, stratum=stratum)
            row = {
                "system": str(system),
                "stratum": str(stratum),
                "estimate": float(r["estimate"]),
                "lower": float(r["ci"].sel(ci_bound="lower")),
                "upper": float(r["ci"].sel(ci_bound="upper")),
                "youden": float(r["youden"]),
            }
            if truth is not None:
                row["truth"] = float(truth.sel(system=system, stratum=stratum))
            rows.append(row)
    return pd.DataFrame(rows)


def add_sampling_sizes(parser: argparse.ArgumentParser, *, tune_help: str) -> None:
    """Add ``--draws``, ``--tune`` and ``--chains`` of an MCMC fit (``fit`` and ``report``)."""
    parser.add_argument(
        "--draws", type=parse_int_at_least(1, MAX_STEPS), default=1000, help="draws per chain"
    )
    parser.add_argument(
        "--tune", type=parse_int_at_least(0, MAX_STEPS), default=1000, help=tune_help
    )
    parser.add_argument(
        "--chains", type=parse_int_at_least(1, MAX_CHAINS), default=4, help="chains (default 4)"
    )
