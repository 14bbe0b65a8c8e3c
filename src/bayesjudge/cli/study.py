"""``bayesjudge study``: run a Monte Carlo study of the papers (table, settings, figure).

A study's module is imported only when it runs or ``--list`` describes it.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import sys
import time
from pathlib import Path

from bayesjudge._text import terminal_safe
from bayesjudge.cli._common import (
    MAX_STEPS,
    WRITTEN,
    UsageError,
    add_progress_option,
    check_output_folder,
    parse_int_at_least,
    parse_seed,
    show_progress_for,
)
from bayesjudge.studies import STUDIES
from bayesjudge.studies._framework import probe_folder

#: Replications per design point under ``study --quick`` for studies that do not set their
#: own ``QUICK_REPS``: enough for every table cell and the figure, not for the conclusions.
_QUICK_REPS = 200


def add_parser(subparsers) -> None:
    """Add the ``study`` command to ``subparsers``."""
    study = subparsers.add_parser(
        "study", help="run a Monte Carlo study of the papers (table, settings, figure)"
    )
    study.add_argument("name", nargs="?", metavar="NAME", help="study to run (see --list)")
    study.add_argument("--list", action="store_true", help="list the studies and exit")
    study.add_argument(
        "--reps",
        type=parse_int_at_least(2, MAX_STEPS),
        help="replications per design point (study's default)",
    )
    study.add_argument(
        "--quick",
        action="store_true",
        help=f"a fast smoke run (about {_QUICK_REPS} reps; fewer Bayesian fits)",
    )
    study.add_argument(
        "--seed",
        type=parse_seed,
        help="random seed, a non-negative integer (default: the study's fixed seed)",
    )
    study.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="a study option, e.g. --set m=1000 or --set p=0.3,0.5 (repeatable; VALUE is JSON "
        "or a comma list; see the study's run() for its options)",
    )
    study.add_argument(
        "--out",
        metavar="DIR",
        help="folder for NAME.csv/.nc/.json/.png (default ./study-NAME; created when the run "
        "ends; files of the same names are replaced)",
    )
    study.add_argument("--no-save", action="store_true", help="print only; write no files")
    add_progress_option(study, "a progress bar")
    study.add_argument(
        "--format",
        default="table",
        choices=["table", "csv"],
        help="compact table with the settings, or the tidy table as CSV on stdout",
    )
    study.add_argument(
        "--max-rows", type=parse_int_at_least(1), default=40, help="rows shown in the table (40)"
    )
    study.set_defaults(func=run)


def run(args) -> int:
    """Run study NAME (or ``--list`` the studies), print its table and save its files."""
    if args.list:
        if args.name is not None:
            raise UsageError("give either a study NAME or --list, not both.")
        return _list_studies()
    if args.name is None:
        raise UsageError(
            f"name a study: one of {', '.join(STUDIES)} (bayesjudge study --list describes them)."
        )
    if args.quick and args.reps is not None:
        raise UsageError("--quick sets the replications itself; drop --reps or --quick.")
    if args.no_save and args.out is not None:
        raise UsageError("--out names where to save; drop --out or --no-save.")
    module = _study_module(args.name)
    options = _run_options(args, module)
    progress = show_progress_for(args)
    out = None
    if not args.no_save:
        # Before the run, which can take an hour: a folder that cannot be made fails now. It
        # is made, with all its files at once, only when the run has finished.
        out = f"study-{args.name}" if args.out is None else args.out
        try:
            out = check_output_folder("--out", out)
            # os.access can say yes where nothing can be created (root, special or read-only
            # file systems, names too long): make and remove the staging folder now.
            probe_folder(out)
        except OSError as err:
            raise _out_error(out, err) from None

    start = time.perf_counter()
    try:
        result = module.run(progress=progress, **options)
    except (TypeError, KeyError) as err:
        # The studies check their options; this catches a value of a type they did not expect.
        given = ", ".join(f"{k}={v!r}" for k, v in options.items() if k != "reps") or "none"
        raise UsageError(
            f"study {args.name}: an option has a value of the wrong type ({err}); options "
            f"given: {given}. See the study's run() for what each option takes."
        ) from None
    except ValueError as err:
        # A study's check names its option ("draws must be ..."): say which --set gave it.
        usage = _set_error(err, args.set or [])
        if usage is None:
            raise
        raise usage from None
    elapsed = time.perf_counter() - start
    frame = result.to_frame()
    paths = {}
    failed = None
    if out is not None:
        try:
            paths = result.save(out)
        except OSError as err:
            failed = _out_error(out, err)  # raised after the table, which is not lost
        WRITTEN.extend(str(path) for path in paths.values())
    # Under --format csv stdout carries the table only; the notes go to stderr.
    notes = sys.stderr if args.format == "csv" else sys.stdout
    if args.format == "csv":
        print(frame.to_csv(index=False), end="")
    else:
        _print_table(args, module, result.settings, frame, elapsed)
    if len(frame) > args.max_rows and args.format == "table":
        where = f" (all rows in {terminal_safe(paths['csv'])})" if paths else ""
        print(f"[{len(frame)} rows, {args.max_rows} shown{where}]", file=notes)
    if paths:
        files = ", ".join(p.name for p in paths.values())
        print(f"saved {files} to {terminal_safe(out)}", file=notes)
    if failed is not None:
        raise failed
    return 0


def _out_error(out, err: OSError) -> UsageError:
    """Return the error of a --out folder that cannot be written, in the command line's words."""
    where = Path(err.filename) if err.filename else Path(out)
    if where.name.startswith(".") and where.name.endswith(".tmp"):
        where = where.parent  # a staging folder's name means nothing to the user
    reason = err.strerror or str(err)
    return UsageError(
        f"--out {terminal_safe(out)}: cannot write there ({reason}: {terminal_safe(where)}); "
        "nothing was saved. Choose another folder with --out, or --no-save."
    )


def _set_error(err: ValueError, pairs: list[str]) -> UsageError | None:
    """Return the error of a study option's check naming the ``--set`` that gave it."""
    message = str(err).strip()
    key = message.split(" ", 1)[0]
    for pair in reversed(pairs):
        if pair.partition("=")[0].strip().replace("-", "_") == key:
            return UsageError(f"--set {terminal_safe(pair.strip())}: {message}")
    return None


def _run_options(args, module) -> dict:
    """Return the keyword options of the study's ``run``: --set, --reps or --quick, --seed."""
    options = _study_options(module, args.set or [])
    if args.reps is not None:
        options["reps"] = args.reps
    elif args.quick:
        # A study's QUICK_OPTIONS (e.g. fewer Bayesian fits) apply unless --set gives them.
        quick = {"reps": int(getattr(module, "QUICK_REPS", _QUICK_REPS))}
        quick |= dict(getattr(module, "QUICK_OPTIONS", {}))
        options = quick | options
    if args.seed is not None:
        options["random_seed"] = args.seed
    return options


def _print_table(args, module, settings: dict, frame, elapsed: float) -> None:
    """Print the study's header (summary, settings, seed, time) and its table, cut short."""
    print(f"study {args.name}: {_study_summary(module)}")
    if "reproduces" in settings:
        print(f"reproduces: {settings['reproduces']}")
    print(
        f"{settings['reps']} replications per design point, seed {settings['random_seed']} "
        f"(repeat with --seed {settings['random_seed']}), {elapsed:.1f} s"
    )
    shown = frame.copy()
    for column in shown.select_dtypes(include="object").columns:
        shown[column] = shown[column].map(terminal_safe)
    print(shown.to_string(index=False, max_rows=args.max_rows, float_format=lambda x: f"{x:.4g}"))


def _study_module(name: str):
    """Import the module of study ``name``; unknown or missing studies are usage errors."""
    if name not in STUDIES:
        raise UsageError(
            f"unknown study {name!r}; choose one of {', '.join(STUDIES)} "
            "(bayesjudge study --list describes them)."
        )
    try:
        return importlib.import_module(STUDIES[name])
    except ModuleNotFoundError as err:
        if err.name != STUDIES[name]:
            raise
        raise UsageError(
            f"study {name!r} is registered but its module {STUDIES[name]} is not installed."
        ) from None


def _study_summary(module) -> str:
    """First line of a study module's docstring, without a prefix that repeats its name."""
    doc = (module.__doc__ or "").strip()
    line = doc.splitlines()[0].rstrip(".").replace("``", "") if doc else ""
    # "Study NAME: ..." or "The NAME study: ..." would print "study NAME: Study NAME: ...".
    return re.sub(r"^(?:study\s+\S+|the\s+\S+\s+study)\s*:\s*", "", line, flags=re.I)


def _list_studies() -> int:
    width = max(len(name) for name in STUDIES)
    for name in STUDIES:
        try:
            line = _study_summary(_study_module(name))
        except UsageError:
            line = "(not installed in this version)"
        print(f"{name:<{width}}  {line}")
    return 0


def _study_value(text: str):
    """Parse the VALUE of ``--set KEY=VALUE``: JSON, else a comma list, else a string."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    if "," in text:
        return [_study_value(item.strip()) for item in text.split(",")]
    return text


def _study_options(module, pairs: list[str]) -> dict:
    """Turn ``--set KEY=VALUE`` pairs into keyword options of the study's ``run``."""
    params = inspect.signature(module.run).parameters
    allowed = [
        name
        for name, param in params.items()
        if param.kind is inspect.Parameter.KEYWORD_ONLY
        and name not in ("reps", "random_seed", "progress")
    ]
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise UsageError(f"--set takes KEY=VALUE, e.g. --set m=1000; got {pair!r}.")
        if key in ("reps", "random_seed", "seed", "progress"):
            raise UsageError(f"--set {key}: use the --reps, --seed or --progress option instead.")
        if key not in allowed:
            raise UsageError(
                f"--set {key}: the study has no such option; its options are "
                f"{', '.join(allowed) or 'none'}."
            )
        options[key] = _study_value(value.strip())
    return options
