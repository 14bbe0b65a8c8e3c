"""When to show a progress bar: in a terminal or a notebook, never in tests or CI.

Long work (MCMC sampling, studies, reports of many systems) takes ``progress=None`` by default
and asks :func:`show_progress` whether to draw a bar. An explicit ``True`` or ``False`` always
wins; ``None`` means "decide from the environment" (:func:`interactive`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator

__all__ = [
    "REPORT_PROGRESS_MIN_SYSTEMS",
    "advance",
    "interactive",
    "progress_bar",
    "show_progress",
    "steps_bar",
]

#: A report of fewer systems takes seconds: by default its bar is drawn only from this many on.
REPORT_PROGRESS_MIN_SYSTEMS = 30


def _in_jupyter_kernel() -> bool:
    """Return True when running inside a Jupyter (IPython kernel) session."""
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()  # type: ignore[attr-defined]
    except Exception:  # pragma: no cover - exotic IPython states
        return False
    if ip is None:
        return False
    return type(ip).__name__ == "ZMQInteractiveShell" or "IPKernelApp" in getattr(ip, "config", {})


def _stderr_is_tty() -> bool:
    stream = sys.stderr
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError):  # closed or replaced streams
        return False


def interactive() -> bool:
    """Return True when a person is probably watching: a terminal or a Jupyter notebook.

    False when the environment variable ``CI`` is set (to anything but ``""``, ``"0"`` or
    ``"false"``), when running under pytest (``PYTEST_CURRENT_TEST`` is set), or when stderr is
    not a terminal and no Jupyter kernel is running.

    Examples
    --------
    >>> import os
    >>> "PYTEST_CURRENT_TEST" in os.environ and interactive()
    False
    """
    ci = os.environ.get("CI", "").strip().lower()
    if ci not in ("", "0", "false", "no"):
        return False
    if os.environ.get("PYTEST_CURRENT_TEST"):
        return False
    return _stderr_is_tty() or _in_jupyter_kernel()


def show_progress(progress: bool | None, *, name: str = "progress") -> bool:
    """Resolve a ``progress`` option: explicit True/False wins, None asks :func:`interactive`.

    Parameters
    ----------
    progress : bool or None
        The user's choice; ``None`` for the default.
    name : str, default "progress"
        The option's name, for the error message.

    Returns
    -------
    bool
        Whether to draw a progress bar.

    Raises
    ------
    ValueError
        When ``progress`` is not ``True``, ``False`` or ``None``.

    Examples
    --------
    >>> show_progress(True), show_progress(False)
    (True, False)
    """
    if progress is None:
        return interactive()
    if isinstance(progress, bool):
        return progress
    try:
        import numpy as np

        if isinstance(progress, np.bool_):
            return bool(progress)
    except ImportError:  # pragma: no cover - numpy is a dependency
        pass
    raise ValueError(
        f"{name} must be True, False or None (None: shown in a terminal or notebook); got "
        f"{progress!r}."
    )


class _Progress:
    def __init__(self, total: int, desc: str, enabled: bool, stream) -> None:
        self.total, self.desc, self.enabled, self.stream = total, desc, enabled, stream
        self.done = 0
        self.start = time.perf_counter()

    def update(self, steps: int = 1) -> None:
        self.done += steps
        if self.enabled:
            elapsed = time.perf_counter() - self.start
            width = 30
            filled = int(width * self.done / max(self.total, 1))
            bar = "#" * filled + "-" * (width - filled)
            self.stream.write(f"\r{self.desc} [{bar}] {self.done}/{self.total} ({elapsed:.1f} s)")
            if self.done >= self.total:
                self.stream.write("\n")
            self.stream.flush()

    def __iter__(self) -> Iterator[int]:
        for i in range(self.total):
            yield i
            self.update()


def progress_bar(total: int, desc: str, enabled: bool = True, stream=None) -> _Progress:
    """Return a plain-text progress bar written to stderr (no extra dependency).

    Use ``bar.update(k)`` after each unit of work, or iterate over the bar for ``range(total)``.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> bar = progress_bar(2, "coverage", stream=out)
    >>> list(bar)
    [0, 1]
    >>> out.getvalue().splitlines()[-1].split(" (")[0].strip()
    'coverage [##############################] 2/2'
    """
    return _Progress(total, desc, enabled, sys.stderr if stream is None else stream)


def steps_bar(progress, steps: int, desc: str, n_systems: int, min_systems: int):
    """Return a bar over a job's named steps, or None when none is shown.

    Shown when ``progress`` is True, or when it is None (the default: a terminal or a
    notebook, never in tests or CI) and the job has at least ``min_systems`` systems; move it
    on with :func:`advance`.

    Examples
    --------
    >>> steps_bar(False, 3, "report", n_systems=500, min_systems=30) is None
    True
    """
    if not show_progress(progress) or (progress is None and n_systems < min_systems):
        return None
    bar = progress_bar(steps, desc)
    bar.steps = 0
    return bar


def advance(bar, what: str | None) -> None:
    """Mark the previous step of a :func:`steps_bar` done and name the next (None: finish).

    Examples
    --------
    >>> import io
    >>> bar = progress_bar(2, "report", stream=io.StringIO())
    >>> bar.steps = 0
    >>> advance(bar, "tables"); advance(bar, "figures"); bar.done, bar.desc
    (1, 'report: figures')
    >>> advance(bar, None); bar.done
    2
    """
    if bar is None:
        return
    if what is None:
        bar.update(bar.total - bar.done)
        return
    if bar.steps:
        bar.update(1)
    bar.steps += 1
    bar.desc = f"{bar.desc.split(':')[0]}: {what}"
