"""The ``bayesjudge`` command line: profile, estimate, compare, fit, report, and more.

User mistakes (a missing file or column, bad labels, bad numbers, an output path that cannot
be written) print one line starting with ``bayesjudge: error:`` to stderr and exit with status
2; output paths are checked before any work. bayesjudge's own warnings print as
``bayesjudge: warning:`` lines, each once; other libraries' warnings only with ``--verbose``.
Names from the data are shown with control characters escaped. No traceback reaches the user.
Ctrl-C exits with status 130 and leaves no partial file: every output is written atomically
(``bayesjudge._io``; a study's or report's files together, ``studies._framework.staged_folder``).

Each command is a module of this package (``bayesjudge.cli.fit``, ...) with ``add_parser``,
which adds its subcommand, and ``run(args)``, which carries it out; what several share is in
``bayesjudge.cli._common``. This module assembles the parser and turns whatever a command
raises into an exit status and at most one line on stderr.

``fit`` and the Bayesian part of ``demo`` and ``report`` import PyMC when they run, not when
this package is imported; ``study`` imports a study's module only when it runs or lists it.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import warnings
from collections.abc import Sequence

from bayesjudge._text import terminal_safe
from bayesjudge._version import __version__
from bayesjudge.cli import allocate, compare, demo, estimate, fit, profile, report, study
from bayesjudge.cli._common import PROGRESS, WRITTEN, UsageError, cli_words
from bayesjudge.warnings import BayesJudgeWarning

__all__ = ["main"]

#: The commands, in the order ``bayesjudge --help`` lists them.
COMMANDS = (demo, profile, estimate, compare, fit, report, allocate, study)

#: Exit status after Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130

#: Exit status when the reader of stdout went away (128 + SIGPIPE), as shells report it.
_EXIT_BROKEN_PIPE = 141


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``bayesjudge`` command line and return its exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; defaults to ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success; 2 on a usage or input error (one ``bayesjudge: error:`` line on stderr);
        130 after Ctrl-C (``bayesjudge: interrupted; ...``: no output file is left half
        written, each is written atomically); 141 when stdout is a pipe closed by its reader;
        1 on an internal error (one line; ``--verbose`` shows the traceback); 3 when a gate's
        claim (``compare``/``report`` ``--claim``/``--rank``) is not supported by the data
        (``bayesjudge.cli.compare.EXIT_UNSUPPORTED``).

    Examples
    --------
    >>> from bayesjudge.cli import main
    >>> main(["allocate", "--budget", "200", "--p-hat", "0.4", "--q0", "0.7", "--q1", "0.9",
    ...       "--json"])  # doctest: +ELLIPSIS
    {
      "budget": 200,
    ...
    0
    """
    WRITTEN.clear()
    PROGRESS.clear()
    try:
        return _main(argv)
    except KeyboardInterrupt:
        if any(PROGRESS):
            print(file=sys.stderr)  # end the progress bar's line
        if WRITTEN:
            files = ", ".join(terminal_safe(name) for name in WRITTEN)
            done = f"{files} had been written in full, nothing else"
        else:
            done = "nothing was written"
        print(f"bayesjudge: interrupted; {done}", file=sys.stderr)
        return EXIT_INTERRUPTED


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr and exit status 2."""

    def error(self, message):
        self.exit(2, f"bayesjudge: error: {message} (see '{self.prog} --help')\n")


def _build_parser() -> argparse.ArgumentParser:
    """Return the parser of ``bayesjudge``: each command module adds its subcommand."""
    parser = _Parser(
        prog="bayesjudge",
        description="Honest estimates of true quality from LLM-as-a-judge verdicts.",
    )
    parser.add_argument("--version", action="version", version=f"bayesjudge {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    for command in sub.choices.values():
        command.add_argument(
            "--verbose",
            action="store_true",
            help="also show other libraries' warnings (matplotlib, numpy, ...), in Python's "
            "format; bayesjudge's own warnings are always shown",
        )
    return parser


def _main(argv: Sequence[str] | None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    verbose = getattr(args, "verbose", False)
    stdout = sys.stdout
    sys.stdout = _Stdout(stdout)
    try:
        return _run(args, verbose)
    finally:
        if isinstance(sys.stdout, _Stdout):
            sys.stdout = stdout


def _run(args, verbose: bool) -> int:
    """Run the command of ``args``; map what it raises to an exit status and one line."""
    with warnings.catch_warnings():
        # The command line reports every bayesjudge warning once, whatever the caller's filters.
        warnings.simplefilter("always", BayesJudgeWarning)
        warnings.showwarning = _warning_printer(verbose)
        try:
            code = args.func(args)
        except BrokenPipeError:
            _detach_stdout()
            return _EXIT_BROKEN_PIPE
        except _StdoutError as err:
            _detach_stdout()
            _error(_stdout_message(err))
            return 2
        except (UsageError, ValueError, OSError, OverflowError) as err:
            _error(str(err) or type(err).__name__)
            return _flush_stdout() or 2
        except MemoryError:
            _error(
                f"out of memory: 'bayesjudge {args.command}' needs more memory than this "
                "machine has; use fewer draws, chains, replications or resamples."
            )
            return 2
        except Exception as err:  # a bug, not the user's mistake: one line, traceback on demand
            if verbose:
                traceback.print_exc()
            _error(
                f"{type(err).__name__}: {err}. This is a bug in bayesjudge, not in your input: "
                "please report it with the command line and the traceback (--verbose shows it).",
                prefix="bayesjudge: internal error:",
            )
            return 1
    return _flush_stdout() or code


def _warning_printer(verbose: bool = False):
    """Return a ``warnings.showwarning`` replacement for the command line.

    bayesjudge's own warnings (:class:`~bayesjudge.warnings.BayesJudgeWarning` and its
    subclasses) print as one ``bayesjudge: warning:`` line each, once per distinct message,
    with control characters in names shown escaped. Warnings of other libraries (matplotlib's
    missing glyphs, numpy, ...) are not bayesjudge's to explain: they are hidden unless
    ``verbose``, then shown once each in Python's own format.
    """
    seen: set[tuple[type, str]] = set()

    def show(message, category, filename, lineno, file=None, line=None):
        ours = isinstance(category, type) and issubclass(category, BayesJudgeWarning)
        if not (ours or verbose):
            return
        text = str(message).strip()
        if (category, text) in seen:
            return
        seen.add((category, text))
        if ours:
            print(f"bayesjudge: warning: {terminal_safe(cli_words(text))}", file=sys.stderr)
        else:
            formatted = warnings.formatwarning(message, category, filename, lineno, "")
            sys.stderr.write(terminal_safe(formatted.rstrip("\n")) + "\n")

    return show


def _error(message: str, prefix: str = "bayesjudge: error:") -> None:
    """Print ``message`` as one line on stderr, control characters in names escaped."""
    text = cli_words(" ".join(str(message).split("\n")).strip())
    print(f"{prefix} {terminal_safe(text)}", file=sys.stderr)


class _StdoutError(OSError):
    """Writing to stdout failed (a full disk, ``/dev/full``), not writing an output file."""


class _Stdout:
    """Stdout whose write errors (other than a closed pipe) raise :class:`_StdoutError`."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as err:
            raise _StdoutError(err.errno, err.strerror) from err

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as err:
            raise _StdoutError(err.errno, err.strerror) from err

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _stdout_message(err: OSError) -> str:
    return (
        f"cannot write the output to stdout ({err.strerror or err}); redirect it to a file on "
        "a disk with free space, or to a pipe."
    )


def _flush_stdout() -> int:
    """Flush stdout; return 0, or 2 (after one error line) when it cannot be written."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _detach_stdout()
        return _EXIT_BROKEN_PIPE
    except OSError as err:
        _detach_stdout()
        _error(_stdout_message(err))
        return 2
    return 0


def _detach_stdout() -> None:
    """Point stdout at the null device: Python's own flush at exit must not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (e.g. captured by tests)
        pass
