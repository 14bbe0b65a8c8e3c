"""Ctrl-C while the ``bayesjudge`` command is still importing its libraries.

The command line turns Ctrl-C into one line and exit status 130 (:func:`bayesjudge.cli.main`),
but only once its modules are loaded: pandas, scipy and matplotlib take about two seconds, and
a SIGINT in that time would end in Python's traceback of the import. The package imports this
module before anything else; in a process started as the ``bayesjudge`` command it replaces
:data:`sys.excepthook` for :class:`KeyboardInterrupt` only, so an interrupt that escapes the
imports ends like one inside the command (nothing has been written then). In any other process
(a notebook, pytest, a script) it does nothing.
"""

from __future__ import annotations

import os
import sys

__all__ = ["CLI_NAMES", "started_as_cli"]

#: File names of the console script that runs :func:`bayesjudge.cli.main`.
CLI_NAMES = ("bayesjudge", "bayesjudge.exe", "bayesjudge-script.py")

#: Exit status after Ctrl-C (128 + SIGINT), as :data:`bayesjudge.cli.EXIT_INTERRUPTED`.
_EXIT_INTERRUPTED = 130


def started_as_cli(argv: list[str] | None = None) -> bool:
    """Return True in a process started as the ``bayesjudge`` command.

    Examples
    --------
    >>> started_as_cli(["/home/me/.venv/bin/bayesjudge", "fit"])
    True
    >>> started_as_cli(["/usr/bin/pytest"])
    False
    """
    argv = sys.argv if argv is None else argv
    return bool(argv) and os.path.basename(str(argv[0])) in CLI_NAMES


def _excepthook(kind, value, tb, _previous=sys.excepthook):
    if not issubclass(kind, KeyboardInterrupt):
        _previous(kind, value, tb)
        return
    sys.stderr.write("bayesjudge: interrupted; nothing was written\n")
    sys.stderr.flush()
    os._exit(_EXIT_INTERRUPTED)  # the interpreter would re-raise SIGINT (status -2), not 130


if started_as_cli():
    sys.excepthook = _excepthook
