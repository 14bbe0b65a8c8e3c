"""Ctrl-C while the command line is still importing its libraries (the first ~2 s).

Regression (left open by the 2026-11-28 hunt): a SIGINT then printed Python's traceback of
the import (``KeyboardInterrupt`` in pandas or scipy) instead of the one line the CLI prints
for Ctrl-C later on.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

BAYESJUDGE = str(Path(sys.executable).with_name("bayesjudge"))


def test_ctrl_c_during_the_import_is_one_line_and_exit_130(tmp_path):
    proc = subprocess.Popen(
        [BAYESJUDGE, "--version"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        # A child of a non-interactive shell may start with SIGINT ignored: start it with the
        # default action, as a terminal would.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(0.4)  # past the interpreter's start, well inside the ~2 s import
    assert proc.poll() is None, "the import finished before the signal: nothing was tested"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    err = err.decode()
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert err == "bayesjudge: interrupted; nothing was written\n", err
    assert proc.returncode == 130
    assert out == b""
