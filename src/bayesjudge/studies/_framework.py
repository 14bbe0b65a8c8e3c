"""What every study shares: the result object, seeding, settings and the progress bar.

A study is a function ``run(*, reps, random_seed, progress, **options) -> StudyResult``. Its
table is a tidy :class:`xarray.Dataset` (one variable per measured quantity, with its Monte
Carlo standard error beside it as ``<name>_mcse``) whose ``attrs`` carry every setting needed to
rerun it; ``StudyResult.save`` writes the table as CSV and netCDF, the settings as JSON and the
figure as PNG.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from bayesjudge._progress import progress_bar
from bayesjudge._version import __version__
from bayesjudge.core._validation import is_seed

__all__ = [
    "StudyResult",
    "check_calibration_grid",
    "check_grid",
    "check_names",
    "check_number",
    "check_reps",
    "check_seed",
    "chunks",
    "mcse_mean",
    "mcse_proportion",
    "point_rngs",
    "probe_folder",
    "progress_bar",
    "spawn_rngs",
    "staged_folder",
    "study_attrs",
]


def _jsonable(value: Any):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


def study_attrs(name: str, *, reps: int, random_seed: int, **settings) -> dict[str, Any]:
    """Return the attrs that make a study's table reproducible.

    Scalars are stored as attrs of their own; the full settings (grids included) are stored
    as one JSON string under ``"settings"``, because netCDF attrs cannot hold nested values.

    Examples
    --------
    >>> attrs = study_attrs("coverage", reps=10, random_seed=1, n=1000, theta=[0.1, 0.2])
    >>> attrs["study"], attrs["reps"], attrs["random_seed"]
    ('coverage', 10, 1)
    >>> import json
    >>> json.loads(attrs["settings"])["theta"]
    [0.1, 0.2]
    """
    full = {"study": name, "reps": int(reps), "random_seed": int(random_seed), **settings}
    full = _jsonable(full)
    flat = {k: v for k, v in full.items() if isinstance(v, str | int | float | bool)}
    return {
        **{k: int(v) if isinstance(v, bool) else v for k, v in flat.items()},
        "settings": json.dumps(full, sort_keys=True),
        "bayesjudge_version": __version__,
    }


def check_reps(reps, name: str = "reps") -> int:
    """Return ``reps`` as an int of at least 2, or raise a ValueError that says how to fix it.

    Examples
    --------
    >>> check_reps(100)
    100
    """
    if isinstance(reps, bool) or not isinstance(reps, int | np.integer) or reps < 2:
        raise ValueError(
            f"{name} must be an integer of at least 2 (Monte Carlo standard errors need "
            f"replications); got {reps!r}."
        )
    return int(reps)


def _bounds_text(low, high, low_open, high_open) -> str:
    left = "(" if low_open else "["
    right = ")" if high_open else "]"
    lower = "-inf" if low is None else f"{low:g}"
    upper = "inf" if high is None else f"{high:g}"
    return f"{left}{lower}, {upper}{right}"


def _outside(arr, low, high, low_open, high_open) -> np.ndarray:
    bad = np.zeros(arr.shape, dtype=bool)
    if low is not None:
        bad |= arr <= low if low_open else arr < low
    if high is not None:
        bad |= arr >= high if high_open else arr > high
    return bad


def check_grid(
    name: str,
    values,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    integer: bool = False,
) -> tuple:
    """Return a design grid as a tuple of distinct numbers, or raise a ValueError naming it.

    ``values`` is one number or a non-empty 1-D sequence of finite, distinct numbers within
    the bounds (``low``/``high``, open where ``low_open``/``high_open``); with ``integer`` they
    must be whole numbers and come back as ints.

    Examples
    --------
    >>> check_grid("theta", [0.1, 0.5], low=0, high=1)
    (0.1, 0.5)
    >>> check_grid("m", 200, low=2, integer=True)
    (200,)
    >>> check_grid("theta", "abc")
    Traceback (most recent call last):
    ...
    ValueError: theta must be a number or a list of numbers; got 'abc'.
    """
    if isinstance(values, str | bytes | dict) or (
        isinstance(values, list | tuple) and any(isinstance(v, bool | str) for v in values)
    ):
        raise ValueError(f"{name} must be a number or a list of numbers; got {values!r}.")
    try:
        arr = np.atleast_1d(np.asarray(values, dtype=float))
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or a list of numbers; got {values!r}.") from None
    if isinstance(values, bool) or arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a number or a list of numbers; got {values!r}.")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} values must be finite; got {arr.tolist()}.")
    if np.unique(arr).size != arr.size:
        raise ValueError(f"{name} must not repeat values; got {arr.tolist()}.")
    bad = _outside(arr, low, high, low_open, high_open)
    if bad.any():
        raise ValueError(
            f"{name} values must lie in {_bounds_text(low, high, low_open, high_open)}; got "
            f"{arr[bad].tolist()}."
        )
    if integer:
        if not np.all(arr == np.round(arr)):
            raise ValueError(f"{name} must hold whole numbers; got {arr.tolist()}.")
        return tuple(int(v) for v in arr)
    return tuple(float(v) for v in arr)


def check_calibration_grid(grid, grids: Mapping[str, Mapping]) -> Mapping:
    """Resolve a grid over n, m, q0, q1: a name from ``grids`` or a dict of value lists.

    The calibration sample splits m0 = m1 = m / 2, so every m must be even.
    """
    keys = ("n", "m", "q0", "q1")
    if isinstance(grid, str) and grid in grids:
        design = grids[grid]
    elif isinstance(grid, Mapping):
        if set(grid) != set(keys):
            raise ValueError(
                f"grid needs the keys {list(keys)} (each a list of values); got keys "
                f"{sorted(map(str, grid))}."
            )
        design = {
            "n": check_grid("grid n", grid["n"], low=1, integer=True),
            "m": check_grid("grid m", grid["m"], low=2, integer=True),
            "q0": check_grid("grid q0", grid["q0"], low=0, high=1),
            "q1": check_grid("grid q1", grid["q1"], low=0, high=1),
        }
    else:
        raise ValueError(
            f"grid must be one of {sorted(grids)} or a dict with keys {list(keys)}; got {grid!r}."
        )
    if any(int(m) % 2 for m in design["m"]):
        raise ValueError(
            f"grid m: the stratified sample splits the labelled items m0 = m1 = m / 2, so every "
            f"m must be even; got {list(design['m'])}."
        )
    return design


def check_names(name: str, values, allowed) -> tuple:
    """Return ``values`` (one name or several) as a tuple of distinct names from ``allowed``."""
    values = (values,) if isinstance(values, str) else tuple(values)
    if not values or len(set(values)) != len(values) or any(v not in allowed for v in values):
        raise ValueError(f"{name} must be distinct names from {allowed}; got {values!r}.")
    return values


def check_number(
    name: str,
    value,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    integer: bool = False,
    allow_none: bool = False,
):
    """Return one number option (float, or int with ``integer``), or raise a ValueError naming it.

    Examples
    --------
    >>> check_number("alpha", 0.05, low=0, high=1, low_open=True, high_open=True)
    0.05
    >>> check_number("n", 1000.0, low=1, integer=True)
    1000
    >>> check_number("n", None, low=1, integer=True, allow_none=True) is None
    True
    """
    if value is None and allow_none:
        return None
    kind = "a whole number" if integer else "a number"
    fix = f"{kind}{' or None' if allow_none else ''}"
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{name} must be {fix}; got {value!r}.")
    number = float(value)
    if not np.isfinite(number) or (integer and number != round(number)):
        raise ValueError(f"{name} must be {fix}; got {value!r}.")
    if _outside(np.asarray(number), low, high, low_open, high_open):
        if integer and high is None and low is not None and not low_open:
            raise ValueError(f"{name} must be a whole number of at least {low:g}; got {value!r}.")
        raise ValueError(
            f"{name} must lie in {_bounds_text(low, high, low_open, high_open)}; got {value!r}."
        )
    return round(number) if integer else number


def spawn_rngs(random_seed: int, count: int) -> list[np.random.Generator]:
    """Return ``count`` independent generators derived from one seed.

    Each design point of a study gets its own stream, so its numbers do not depend on which
    other points were run or in what order.

    Examples
    --------
    >>> a, b = spawn_rngs(1, 2)
    >>> bool(a.random() != b.random())
    True
    >>> float(spawn_rngs(1, 2)[1].random()) == float(spawn_rngs(1, 3)[1].random())
    True
    """
    children = np.random.SeedSequence(random_seed).spawn(count)
    return [np.random.default_rng(child) for child in children]


def check_seed(random_seed) -> int:
    """Return ``random_seed`` as an int, or raise a ValueError that names it and says why.

    Studies take a non-negative integer seed (stored with the results so that a run can be
    repeated); ``None`` or a Generator would make the stored settings useless.

    Examples
    --------
    >>> check_seed(7)
    7
    """
    if not is_seed(random_seed):
        raise ValueError(
            f"random_seed must be a non-negative integer; got {random_seed!r}. A study stores "
            f"its seed with the results, so pass a number such as 1 (or leave the default)."
        )
    return int(random_seed)


def point_rngs(random_seed: int, *values, count: int = 1) -> list[np.random.Generator]:
    """Return ``count`` independent generators keyed by a design point's values.

    Unlike :func:`spawn_rngs`, the streams depend on the point's values (rounded to 1e-6), not
    on its position in the grid, so running a subset of a grid reproduces the full run's
    numbers at those points.

    Examples
    --------
    >>> a = point_rngs(1, 1000, 0.25)[0].random()
    >>> b = point_rngs(1, 1000, 0.25)[0].random()
    >>> c = point_rngs(1, 1000, 0.30)[0].random()
    >>> bool(a == b), bool(a == c)
    (True, False)
    >>> bool(point_rngs(1, 0.1)[0].random() != point_rngs(1, -0.1)[0].random())
    True
    """
    random_seed = check_seed(random_seed)
    scaled = (round(float(v) * 1_000_000) for v in values)
    # SeedSequence keys must be non-negative: interleave signs (0, -1, 1, -2, ... -> 0, 1, 2, ...).
    key = tuple(2 * x if x >= 0 else -2 * x - 1 for x in scaled)
    seq = np.random.SeedSequence(int(random_seed), spawn_key=key)
    return [np.random.default_rng(child) for child in seq.spawn(count)]


@dataclass(frozen=True)
class StudyResult:
    """A study's tidy table, its settings and how to draw its figure.

    Attributes
    ----------
    name : str
        The study's name, as given to ``bayesjudge study NAME``.
    table : xarray.Dataset
        The results over the study's design dims; ``attrs`` hold the settings.
    plot_function : callable
        ``plot_function(table) -> matplotlib.figure.Figure``.
    """

    name: str
    table: xr.Dataset
    plot_function: Callable[[xr.Dataset], Any] = field(repr=False)

    @property
    def settings(self) -> dict[str, Any]:
        """The settings the study ran with (reps, seed, grids, version)."""
        return json.loads(self.table.attrs["settings"])

    def to_frame(self) -> pd.DataFrame:
        """Return the table as a tidy long DataFrame, one row per design point."""
        return self.table.to_dataframe().reset_index()

    def plot(self):
        """Draw the study's figure and return the matplotlib Figure."""
        return self.plot_function(self.table)

    def save(self, out_dir) -> dict[str, Path]:
        """Write ``NAME.csv``, ``NAME.nc``, ``NAME.json`` (settings) and ``NAME.png``.

        The four files are written together (:func:`staged_folder`): into a hidden staging
        folder beside ``out_dir`` first, which then takes its place (created if missing;
        other files of an existing ``out_dir`` are kept, files of the same names replaced).
        A failure or Ctrl-C while writing leaves ``out_dir`` as it was: never some new files
        beside old ones.

        Parameters
        ----------
        out_dir : str or path-like
            The folder to write into.

        Returns
        -------
        dict of str to pathlib.Path
            The written files by kind.
        """
        import matplotlib.pyplot as plt

        out = Path(out_dir).expanduser()
        stem = self.name.replace("-", "_")
        names = {kind: f"{stem}.{kind}" for kind in ("csv", "nc", "json", "png")}
        table = self.table.copy()
        # netCDF attrs hold 64-bit integers at most: a larger seed is stored as text (the
        # "settings" JSON keeps the number itself).
        table.attrs = {k: _netcdf_attr(v) for k, v in table.attrs.items()}
        figure = self.plot()
        try:
            with staged_folder(out) as staging:
                self.to_frame().to_csv(staging / names["csv"], index=False)
                table.to_netcdf(staging / names["nc"], engine="h5netcdf")
                (staging / names["json"]).write_text(
                    json.dumps(self.settings, indent=2, sort_keys=True) + "\n"
                )
                figure.savefig(staging / names["png"], dpi=120, bbox_inches="tight")
        finally:
            plt.close(figure)
        return {kind: out / name for kind, name in names.items()}


def _netcdf_attr(value):
    """Return ``value`` as a netCDF attribute: an int beyond int64 becomes its decimal text."""
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        return str(value)
    return value


@contextlib.contextmanager
def staged_folder(out_dir) -> Iterator[Path]:
    """Yield an empty staging folder whose files land in ``out_dir`` only if the block succeeds.

    For writers of several files that belong together (a study's table, settings and figure;
    a report and its figures): ``out_dir`` ends up with either all of the new files or, after
    an exception (``KeyboardInterrupt`` included), exactly what it held before, never a mix.
    The staging folder is made beside ``out_dir`` (inside it where its parent is not
    writable, or where ``out_dir`` holds the current folder). When ``out_dir`` does not exist,
    the staging folder is renamed to ``out_dir`` in one step. When it exists, the staged files
    are moved in one by one, each file they replace kept aside and put back if a later step
    fails or is interrupted; the other entries of ``out_dir`` are left alone, and a folder
    whose name a new file would take is refused before anything moves (it is not a file of
    ours to replace).

    Parameters
    ----------
    out_dir : str or path-like
        The destination folder; its missing parent folders are created first (and left if
        the block fails). A symbolic link to a folder is followed: its target is written.

    Yields
    ------
    pathlib.Path
        The staging folder: write the files into it (flat, no subfolders).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "results"
    >>> with staged_folder(out) as staging:
    ...     _ = (staging / "table.csv").write_text("a,b")
    >>> sorted(p.name for p in out.iterdir())
    ['table.csv']
    """
    out = _destination(out_dir)
    staging, beside = _make_staging(out)
    try:
        yield staging
        if beside and not out.exists():
            staging.rename(out)
        else:
            _move_in(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def probe_folder(out_dir) -> None:
    """Do, then undo, what :func:`staged_folder` does first, so a folder it cannot use fails now.

    Creates the missing parent folders and ``out_dir``'s staging folder where
    :func:`staged_folder` would (``os.access`` alone misses read-only or special file
    systems, names that are too long, and runs as root), then removes all it made. Call it
    before long work whose result goes to ``out_dir``.

    Parameters
    ----------
    out_dir : str or path-like
        The destination folder.

    Raises
    ------
    OSError
        Where a folder cannot be created; ``filename`` names it.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> base = pathlib.Path(tempfile.mkdtemp())
    >>> probe_folder(base / "new" / "results")
    >>> list(base.iterdir())
    []
    """
    out = _destination(out_dir)
    made = []
    try:
        missing = [p for p in (out.parent, *out.parent.parents) if not p.exists()]
        for folder in reversed(missing):
            folder.mkdir()
            made.append(folder)
        staging, _ = _make_staging(out)
        staging.rmdir()
    finally:
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()


def _destination(out_dir) -> Path:
    """``out_dir`` as an absolute path, a link to a folder replaced by its target."""
    out = Path(out_dir).expanduser()
    if out.is_symlink() and out.is_dir():
        return Path(os.path.realpath(out))
    return Path(os.path.abspath(out))


def _make_staging(out: Path) -> tuple[Path, bool]:
    """Return (staging folder, whether it is beside ``out``) — beside where possible."""
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        mode = 0o777 & ~_umask()  # mkdtemp's 0o700 would become out_dir's mode
    elif out.resolve() in (here := Path.cwd().resolve(), *here.parents):
        # Renaming the current folder aside would leave this process in the removed one.
        return Path(tempfile.mkdtemp(prefix=".bayesjudge-", suffix=".tmp", dir=out)), False
    else:
        mode = stat.S_IMODE(out.stat().st_mode)
    try:
        # The name cut short: a folder name near the length limit must still fit.
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name[:64]}.", suffix=".tmp", dir=out.parent))
    except OSError:
        if not out.exists():
            raise
        return Path(tempfile.mkdtemp(prefix=".bayesjudge-", suffix=".tmp", dir=out)), False
    staging.chmod(mode)
    return staging, True


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _link_or_copy(source, target) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _move_in(staging: Path, out: Path) -> None:
    """Move the staged files into ``out`` one by one, undoing every move if one fails."""
    names = sorted(item.name for item in staging.iterdir())
    for name in names:
        if (out / name).is_dir() and not (out / name).is_symlink():
            raise IsADirectoryError(errno.EISDIR, "a folder is in the way", str(out / name))
    aside = Path(tempfile.mkdtemp(prefix=".bayesjudge-old-", suffix=".tmp", dir=out))
    try:
        for name in names:
            if (out / name).exists() or (out / name).is_symlink():
                os.replace(out / name, aside / name)
            os.replace(staging / name, out / name)
    except BaseException:
        for name in names:
            if (aside / name).exists() or (aside / name).is_symlink():
                os.replace(aside / name, out / name)
            elif not (staging / name).exists():
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(out / name)
        raise
    finally:
        shutil.rmtree(aside, ignore_errors=True)
    staging.rmdir()


def mcse_proportion(share: np.ndarray, reps: int) -> np.ndarray:
    """Monte Carlo standard error of a proportion estimated from ``reps`` replications."""
    share = np.asarray(share, dtype=float)
    return np.sqrt(share * (1 - share) / reps)


def mcse_mean(values: np.ndarray, axis: int = -1) -> np.ndarray:
    """Monte Carlo standard error of a mean over ``axis`` (sample sd / sqrt(count))."""
    values = np.asarray(values, dtype=float)
    count = values.shape[axis]
    return values.std(axis=axis, ddof=1) / np.sqrt(count)


def chunks(total: int, size: int) -> Iterable[slice]:
    """Slices that cover ``range(total)`` in pieces of at most ``size`` (bounded memory)."""
    for start in range(0, total, size):
        yield slice(start, min(start + size, total))
