"""The ``bayesjudge`` command line: demo, estimate, fit, report, allocate and study.

User mistakes (a missing file or column, bad labels, bad numbers, an output path that cannot
be written) print one line starting with ``bayesjudge: error:`` to stderr and exit with status
2; output paths are checked before any work. bayesjudge's own warnings print as
``bayesjudge: warning:`` lines, each once; other libraries' warnings only with ``--verbose``.
Names from the data are shown with control characters escaped. No traceback reaches the user.
Ctrl-C exits with status 130 and leaves no partial file: every output is written atomically
(``bayesjudge._io``; a study's or report's files together, ``studies._framework.staged_folder``).

``fit`` and the Bayesian part of ``demo`` import PyMC when they run, not when this module is
imported; ``study`` imports a study's module only when it runs or lists it.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from bayesjudge._progress import show_progress
from bayesjudge._text import terminal_safe
from bayesjudge._version import __version__
from bayesjudge.warnings import BayesJudgeWarning

__all__ = ["main"]

#: Exit status after Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130

#: Files this run has written (each atomically), named in the message after Ctrl-C.
_WRITTEN: list[str] = []

#: Whether this run draws a progress bar (its line is ended before a message after Ctrl-C).
_PROGRESS: list[bool] = []


def _show_progress(args) -> bool:
    """Resolve ``--progress/--no-progress`` (None: a terminal, not CI or tests) and note it."""
    shown = show_progress(args.progress)
    _PROGRESS.append(shown)
    return shown


class UsageError(Exception):
    """A mistake in the command line or its input files, reported in one line."""


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
            print(f"bayesjudge: warning: {terminal_safe(text)}", file=sys.stderr)
        else:
            formatted = warnings.formatwarning(message, category, filename, lineno, "")
            sys.stderr.write(terminal_safe(formatted.rstrip("\n")) + "\n")

    return show


def _seed(text: str) -> int:
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


def _whole(example: str):
    """Return an argparse type for a whole number >= 0 of any size (the library bounds it)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < 0:
            raise argparse.ArgumentTypeError(
                f"must be a whole number >= 0 written in digits, e.g. {example}; got {text!r}"
            )
        return value

    return parse


def _add_progress_option(parser: argparse.ArgumentParser, what: str) -> None:
    """Add ``--progress/--no-progress``: default None, resolved by ``show_progress``."""
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"{what} on stderr (default: shown in a terminal, not in CI, pipes or tests)",
    )


def _unit(example: str):
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


def _check_input_file(option: str, path) -> None:
    """Fail before any work unless ``path`` (the value of ``option``) is a readable file."""
    import os
    from pathlib import Path

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


def _check_output_file(option: str, path):
    """Check before any work that ``path`` (the value of ``option``) can be written; return it.

    An existing file is replaced at the end, atomically: a reader sees the old file or the new
    one, never half of either. Devices and other special files (``/dev/full``) are refused.
    """
    from pathlib import Path

    from bayesjudge._io import check_output_file

    if not str(path).strip():
        raise UsageError(f"{option}: the path is empty; give a file name such as 'fit.nc'.")
    file = Path(path).expanduser()
    try:
        check_output_file(file, what=f"{option} {terminal_safe(path)}")
    except ValueError as err:
        raise UsageError(str(err)) from None
    if file.exists() and not file.is_file():
        raise UsageError(
            f"{option} {terminal_safe(path)}: exists and is not a regular file (a device, pipe "
            "or socket); give the path of a file."
        )
    return file


def _check_output_folder(option: str, path):
    """Check before any work that folder ``path`` exists or can be created; return it.

    Nothing is created here: the folder is made when its files are written, at the end (see
    :func:`bayesjudge.studies._framework.staged_folder`), so that an interrupted or failed run
    leaves no empty folder behind.
    """
    import os
    from pathlib import Path

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


def _ci_label(alpha: float) -> str:
    return f"{100 * (1 - alpha):g}% interval"


def _fmt_interval(lower: float, upper: float) -> str:
    if np.isnan(lower) or np.isnan(upper):
        return "—"
    return f"[{lower:.3f}, {upper:.3f}]"


def _jsonable(value):
    """Return a JSON-ready Python scalar: full float precision, NaN as null."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and np.isnan(value):
        return None
    return value


def _fmt(x: float) -> str:
    return "—" if np.isnan(x) else f"{x:.3f}"


def _result_frame(result, truth=None) -> pd.DataFrame:
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


def _covered(lower, upper, truth) -> int:
    return int(((lower <= truth) & (truth <= upper)).sum())


def _cmd_demo(args) -> int:
    from bayesjudge.estimate import estimate
    from bayesjudge.simulate import demo_design, simulate_counts

    design = demo_design()
    counts = simulate_counts(
        **{v: design[v].values for v in ("theta", "q0", "q1", "n", "m0", "m1")},
        system=design["system"].values.tolist(),
        stratum=design["stratum"].values.tolist(),
        random_seed=args.seed,
    )
    naive = _result_frame(estimate(counts, method="naive", alpha=args.alpha), design["theta"])
    corrected = _result_frame(
        estimate(counts, method="lang-reiczigel", alpha=args.alpha), design["theta"]
    )
    ci = _ci_label(args.alpha)
    bayes_line = (
        ""
        if args.no_bayes
        else (
            f"  Bayesian fit (bayesjudge fit): own calibration per group, flat Beta(1, 1) priors,\n"
            f"  {_DEMO_SAMPLING['chains']} chains x {_DEMO_SAMPLING['draws']} draws, "
            f"random_seed = {args.seed}; equal-tailed credible intervals.\n"
        )
    )
    print(
        "bayesjudge demo: a simulated evaluation with known truth\n"
        "  3 systems x 2 strata; each group: 1000 judged test items and 100 + 100 human-labelled\n"
        "  calibration items (truly incorrect + truly correct). One judge grades everything with\n"
        "  specificity q0 = 0.7 and sensitivity q1 = 0.9 (Lee et al. Sec. 7).\n"
        f"  Generating process: models/misclassification.md; random_seed = {args.seed}.\n"
        + bayes_line,
        flush=True,
    )
    columns = {
        "system": naive["system"],
        "stratum": naive["stratum"],
        "true θ": naive["truth"].map(_fmt),
        "naive p̂": naive["estimate"].map(_fmt),
        f"naive {ci}": [
            _fmt_interval(a, b) for a, b in zip(naive["lower"], naive["upper"], strict=True)
        ],
        "corrected θ̂": corrected["estimate"].map(_fmt),
        f"Lang-Reiczigel {ci}": [
            _fmt_interval(a, b) for a, b in zip(corrected["lower"], corrected["upper"], strict=True)
        ],
        "Ĵ": corrected["youden"].map(_fmt),
    }
    coverage = (
        f"The true θ lies inside {_covered(naive['lower'], naive['upper'], naive['truth'])} of "
        f"{len(naive)} naive intervals and inside "
        f"{_covered(corrected['lower'], corrected['upper'], corrected['truth'])} of "
        f"{len(corrected)} corrected intervals"
    )
    if not args.no_bayes:
        bayes = _demo_bayes(counts, args, naive)
        columns[f"Bayesian {ci}"] = [
            _fmt_interval(a, b) for a, b in zip(bayes["lower"], bayes["upper"], strict=True)
        ]
        n_bayes = _covered(bayes["lower"], bayes["upper"], naive["truth"])
        coverage = coverage.replace(" and inside", ", inside") + (
            f"\nand inside {n_bayes} of {len(bayes)} Bayesian intervals"
        )
    print(pd.DataFrame(columns).to_string(index=False))
    print(
        f"\n{coverage}.\n"
        "The naive share judged correct estimates p = θ·q1 + (1 − θ)(1 − q0), not θ: this judge\n"
        "over-calls 'correct' on weak systems and under-calls it on strong ones. The corrected\n"
        "estimate (Rogan–Gladen) and its interval account for the judge's errors and for the\n"
        "uncertainty of both the test and the calibration set."
        + (
            ""
            if args.no_bayes
            else "\nSo does the Bayesian posterior of θ, whose intervals stay inside [0, 1];\n"
            "'bayesjudge fit' also gives θ over all strata per system and P(system a beats b)."
        )
    )
    return 0


# Sampler settings of the Bayesian fit in ``demo``: about a second of sampling once compiled.
_DEMO_SAMPLING = {"draws": 1000, "tune": 1000, "chains": 4}


def _demo_bayes(counts, args, frame: pd.DataFrame) -> pd.DataFrame:
    """ETI of θ per group from ``bayesjudge.fit`` (separate calibration), rows as ``frame``."""
    from bayesjudge.models.fit import fit

    result = fit(counts, random_seed=args.seed, **_DEMO_SAMPLING)
    summary = result.summary(ci_prob=1 - args.alpha, var_names=["theta"])
    summary = summary.rename(columns={"eti_lower": "lower", "eti_upper": "upper"})
    summary[["system", "stratum"]] = summary[["system", "stratum"]].astype(str)
    return frame[["system", "stratum"]].merge(summary, on=["system", "stratum"], how="left")


def _read_counts(args):
    """Count the --test and --calibration tables with the table options of the command.

    A calibration table without the --system (or --stratum) column is one set that serves
    every system (stratum): it is counted once and attached to every group, and the models
    count it once (``JudgeCounts.calibration_shared_over``).
    """
    from bayesjudge.data import JudgeCounts, _as_frame

    options = {"judge": args.judge, "human": args.human, "positive": args.positive}
    groups = {"system": args.system, "stratum": args.stratum}
    item = getattr(args, "item", None)  # only ``report`` reads item ids (joint verdicts)
    if args.calibration is not None:
        columns = _as_frame(args.calibration, "calibration").collect_schema().names()
        absent = [dim for dim, col in groups.items() if col is not None and col not in columns]
        if absent:
            tests = JudgeCounts.from_frames(args.test, None, **groups, **options, item=item)
            kept = {dim: None if dim in absent else col for dim, col in groups.items()}
            calibration = JudgeCounts.from_frames(None, args.calibration, **kept, **options)
            return tests.with_calibration_from(calibration)
    return JudgeCounts.from_frames(args.test, args.calibration, **groups, **options, item=item)


def _cmd_estimate(args) -> int:
    from bayesjudge.estimate import estimate

    if args.calibration is None and args.method != "naive":
        raise UsageError(
            f"--calibration is required for --method {args.method} (the judge's errors are "
            "estimated from it); pass a human-labelled CSV/Parquet file or use --method naive."
        )
    _check_input_file("--test", args.test)
    _check_input_file("--calibration", args.calibration)
    counts = _read_counts(args)
    result = estimate(
        counts,
        method=args.method,
        alpha=args.alpha,
        random_seed=args.seed,
        calibration=args.calibration_design,
        n_resamples=args.n_resamples,
    )
    frame = _result_frame(result)
    counts_frame = counts.to_frame()
    frame = frame.merge(counts_frame, on=["system", "stratum"], how="left")
    if args.json:
        payload = {
            "settings": {
                k: (v.item() if hasattr(v, "item") else v) for k, v in result.attrs.items()
            },
            "results": [
                {key: _jsonable(value) for key, value in row.items()}
                for row in frame.to_dict(orient="records")
            ],
        }
        print(json.dumps(payload, indent=2))
        return 0
    ci = _ci_label(args.alpha)
    table = pd.DataFrame(
        {
            "system": frame["system"].map(_label),
            "stratum": frame["stratum"].map(_label),
            "n": frame["n"],
            "m0": frame["m0"],
            "m1": frame["m1"],
            "estimate": frame["estimate"].map(_fmt),
            ci: [_fmt_interval(a, b) for a, b in zip(frame["lower"], frame["upper"], strict=True)],
            "Ĵ": frame["youden"].map(_fmt),
        }
    )
    print(
        f"method: {args.method} ({result.attrs['ci_kind']}); calibration: {args.calibration_design}"
    )
    print(table.to_string(index=False))
    return 0


# ----------------------------------------------------------------------------- fit

_LABELS = {"theta": "θ", "theta_total": "θ_total", "youden": "J"}


def _int_at_least(low: int, high: int | None = None):
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


#: Upper bounds of --draws, --tune, --reps and --chains: far beyond any useful run, below
#: any overflow or allocation error deep inside numpy or the sampler.
_MAX_STEPS = 100_000_000
_MAX_CHAINS = 1_000


def _open_unit(text: str) -> float:
    """Parse a probability strictly between 0 and 1 (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1), e.g. 0.95; got {text!r}")
    return value


def _pool_over(text: str) -> tuple[str, ...]:
    """Parse ``system``, ``stratum`` or ``system,stratum`` (argparse type)."""
    items = [item.strip() for item in text.split(",")]
    if not items or any(item not in ("system", "stratum") for item in items):
        raise argparse.ArgumentTypeError(
            f"must be system, stratum or system,stratum (the dims across which the judge's "
            f"quality is shared); got {text!r}"
        )
    return tuple(d for d in ("system", "stratum") if d in items)


def _prior(text: str) -> tuple[float, float] | float:
    """Parse ``A,B`` (Beta parameters) or one number, a known value (argparse type)."""
    parts = text.split(",")
    try:
        values = [float(part) for part in parts]
    except ValueError:
        values = []
    if len(values) not in (1, 2):
        raise argparse.ArgumentTypeError(
            f"must be A,B (the parameters of a Beta(A, B) prior) or, for q0 and q1, one known "
            f"value in [0, 1]; got {text!r}"
        )
    return values[0] if len(values) == 1 else (values[0], values[1])


def _fit_priors(args):
    """Build ``Priors`` from the --prior-* options; errors name the option."""
    from bayesjudge.models.priors import Priors

    given = {}
    for field in ("theta", "q0", "q1"):
        value = getattr(args, f"prior_{field}")
        if value is None:
            continue
        option = f"--prior-{field.replace('_', '-')}"
        raw = ",".join(f"{v:g}" for v in value) if isinstance(value, tuple) else f"{value:g}"
        try:
            Priors(**{field: value})
        except ValueError as err:
            raise UsageError(f"{option} {raw}: {err}") from None
        given[field] = value
    return Priors(**given)


def _describe_priors(priors, calibration: str) -> str:
    def beta(name):
        value = getattr(priors, name)
        if isinstance(value, float):
            return f"{name} = {value:g} (known)"
        return f"{name} ~ Beta({value[0]:g}, {value[1]:g})"

    parts = [beta("theta").replace("theta", "θ")]
    if calibration == "hierarchical":
        for q in ("q0", "q1"):
            mu, sd = getattr(priors, f"{q}_logit_mean")
            tau = getattr(priors, f"{q}_logit_scale")
            parts.append(
                f"logit {q} ~ Normal(μ, σ), μ ~ Normal({mu:g}, {sd:g}), σ ~ HalfNormal({tau:g})"
            )
    else:
        parts += [beta("q0"), beta("q1")]
    return "; ".join(parts)


def _describe_aggregate(aggregate, n_strata: int) -> str:
    if aggregate == "auto":
        aggregate = "test" if n_strata > 1 else None
    return {
        None: "none (θ per stratum only)",
        "test": "θ_total = strata weighted by each system's test counts",
        "dirichlet": "θ_total = strata weighted by Dirichlet shares of the population",
    }[aggregate]


def _fit_frames(result, ci_prob: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the tidy summary and the pairwise comparisons of systems (empty if one)."""
    from bayesjudge.report import comparison_rows

    summary = result.summary(ci_prob=ci_prob)
    frames = []
    if result.counts.sizes["system"] >= 2:
        for var in ("theta", "theta_total"):
            if var in result.posterior.data_vars:
                rows = comparison_rows(result, var, ci_prob)
                rows.insert(0, "variable", f"{var}_difference")
                frames.append(rows.rename(columns={"pair": "system", "lower": "eti_lower",
                                                   "upper": "eti_upper"}))  # fmt: skip
    return summary, (pd.concat(frames, ignore_index=True) if frames else pd.DataFrame())


def _fmt_int(x: float) -> str:
    return "—" if np.isnan(x) else f"{x:.0f}"


def _label(value) -> str:
    """Return a system or stratum name for a terminal table: "—" for none, codes escaped."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "—"
    return terminal_safe(value)


#: Refuse a fit whose posterior draws would take more than this share of the machine's memory.
_MEMORY_SHARE = 0.5


def _physical_memory() -> int | None:
    import os

    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return None


def _check_draws_fit_in_memory(args) -> None:
    """Refuse --draws x --chains that cannot be held in memory, before reading or sampling.

    The posterior keeps about a dozen float64 values per draw and group (θ, q0, q1, J, p,
    θ_total, sampler statistics); a lower bound with one group is checked here, so that
    ``--draws 10**12`` fails at once with the fix rather than after minutes or with a crash.
    """
    memory = _physical_memory()
    if memory is None:
        return
    needed = 12 * 8 * args.draws * args.chains
    if needed > _MEMORY_SHARE * memory:
        raise UsageError(
            f"--draws {args.draws} x --chains {args.chains} would keep about "
            f"{needed / 2**30:,.0f} GiB of posterior draws per group, more than this machine "
            f"can hold ({memory / 2**30:,.0f} GiB); 1000 to 10000 draws per chain are plenty. "
            "Lower --draws or --chains."
        )


def _cmd_fit(args) -> int:
    from bayesjudge.diagnostics import format_probability

    if args.pool_over is not None and args.calibration_model == "separate":
        raise UsageError(
            "--pool-over applies to --calibration-model shared or hierarchical; 'separate' "
            "gives every group its own q0, q1. Drop --pool-over or choose another model."
        )
    if args.judge_better_than_chance and args.calibration_model == "hierarchical":
        raise UsageError(
            "--judge-better-than-chance applies to --calibration-model separate or shared; the "
            "hierarchical model's population of calibrated groups already tells θ from 1 − θ."
        )
    if args.method == "exact" and args.calibration_model != "separate":
        raise UsageError(
            f"--method exact computes the posterior for --calibration-model separate only; "
            f"use --method mcmc for {args.calibration_model!r} calibration."
        )
    if args.method == "exact" and args.target_accept is not None:
        raise UsageError(
            "--target-accept tunes the MCMC sampler; --method exact draws from the exact "
            "posterior and has none. Drop --target-accept or use --method mcmc."
        )
    _check_input_file("--test", args.test)
    _check_input_file("--calibration", args.calibration)
    save = None if args.save is None else _check_output_file("--save", args.save)
    _check_draws_fit_in_memory(args)

    from bayesjudge.models.fit import fit

    priors = _fit_priors(args)
    if args.calibration is None and not (priors.known("q0") and priors.known("q1")):
        raise UsageError(
            "--calibration is required (the judge's errors q0, q1 are estimated from it) unless "
            "--prior-q0 and --prior-q1 both give known values."
        )
    counts = _read_counts(args)
    aggregate = None if args.aggregate == "none" else args.aggregate
    options = {
        "calibration": args.calibration_model,
        "pool_over": args.pool_over,
        "priors": priors,
        "aggregate": aggregate,
        "judge_better_than_chance": args.judge_better_than_chance,
    }
    sampling = {"draws": args.draws, "chains": args.chains, "random_seed": args.seed}
    if args.method == "exact":
        sampling["method"] = "exact"
    else:
        sampling |= {"tune": args.tune, "sampler": args.sampler}
        sampling["progressbar"] = _show_progress(args)
        if args.target_accept is not None:  # else bayesjudge.fit's default for the model
            sampling["target_accept"] = args.target_accept
    result = fit(counts, **options, **sampling)
    summary, comparisons = _fit_frames(result, args.ci_prob)
    if save is not None:
        result.save(save)
        _WRITTEN.append(str(save))
    if args.format == "csv":
        frame = (
            pd.concat([summary, comparisons], ignore_index=True) if len(comparisons) else summary
        )
        if "prob_greater" not in frame:
            frame["prob_greater"] = np.nan
        print(frame.to_csv(index=False), end="")
        return 0
    ci = f"{100 * args.ci_prob:g}% interval"
    settings = result.config  # what was fitted, defaults (and a drawn seed) resolved
    seed = settings["random_seed"]
    pooled = f" pooled over {','.join(settings['pool_over'])}" if settings["pool_over"] else ""
    if args.method == "exact":
        sampler = (
            f"exact posterior (no MCMC): {settings['chains']} x {settings['draws']} independent "
            f"draws for the HDI and comparisons, seed {seed} (repeat with --seed {seed})"
        )
    else:
        sampler = (
            f"{settings['sampler']}, {settings['chains']} chains x {settings['draws']} draws "
            f"after {settings['tune']} tuning steps, target_accept "
            f"{settings['target_accept']:g}, seed {seed} (repeat with --seed {seed})"
        )
    print(
        f"model: calibration {settings['calibration']}{pooled}"
        + ("; judge better than chance (J > 0)" if settings["judge_better_than_chance"] else "")
        + f"; aggregate: {_describe_aggregate(aggregate, counts.sizes['stratum'])}\n"
        f"priors: {_describe_priors(priors, settings['calibration'])}\n"
        f"sampler: {sampler}\n"
        f"intervals: {ci.replace('interval', 'equal-tailed credible intervals')}"
    )
    table = pd.DataFrame(
        {
            "quantity": summary["variable"].map(lambda v: _LABELS.get(v, v)),
            "system": summary["system"].map(_label),
            "stratum": summary["stratum"].map(_label),
            "mean": summary["mean"].map(_fmt),
            "sd": summary["sd"].map(_fmt),
            ci: [
                _fmt_interval(a, b)
                for a, b in zip(summary["eti_lower"], summary["eti_upper"], strict=True)
            ],
            "ess_bulk": summary["ess_bulk"].map(_fmt_int),
            "ess_tail": summary["ess_tail"].map(_fmt_int),
            "r_hat": summary["r_hat"].map(_fmt),
        }
    )
    print("\nPosterior summary (J = q0 + q1 − 1, the judge's Youden index)")
    print(table.to_string(index=False))
    if len(comparisons):
        table = pd.DataFrame(
            {
                "difference": comparisons["variable"].map(
                    lambda v: "Δ" + _LABELS[v.removesuffix("_difference")]
                ),
                "systems a - b": comparisons["system"].map(_label),
                "stratum": comparisons["stratum"].map(_label),
                "mean": comparisons["mean"].map(_fmt),
                ci: [
                    _fmt_interval(a, b)
                    for a, b in zip(comparisons["eti_lower"], comparisons["eti_upper"], strict=True)
                ],
                "P(a > b)": comparisons["prob_greater"].map(format_probability),
            }
        )
        print("\nComparisons of systems (posterior of the difference, draw by draw)")
        print(table.to_string(index=False))
    if save is not None:
        print(f"\nSaved the fit to {terminal_safe(args.save)} (read it with bayesjudge.load).")
    return 0


# ----------------------------------------------------------------------------- report


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _report_method(args, counts) -> tuple[str, dict]:
    """Resolve ``bayesjudge report --method``: return (method, extra fit options).

    ``auto`` fits what the data and design call for: the paired MCMC model when the systems'
    verdicts on shared items are tabulated (``--item``, 2 to ``MAX_PAIRED_SYSTEMS`` systems) or
    MCMC when the calibration design is shared or hierarchical; otherwise the exact posterior.
    """
    from bayesjudge.models.build import MAX_PAIRED_SYSTEMS

    pairable = counts.has_joint and 2 <= counts.sizes["system"] <= MAX_PAIRED_SYSTEMS
    method = args.method
    if method == "auto":
        method = "mcmc" if pairable or args.calibration_design != "separate" else "exact"
    options = {}
    if counts.has_joint and (method == "exact" or not pairable):
        # The exact engine (and the joint model beyond MAX_PAIRED_SYSTEMS) fits the unpaired
        # model; the report says so in bold and its frequentist Δθ stays paired.
        options["paired"] = False
    return method, options


def _cmd_report(args) -> int:
    from pathlib import Path

    if args.calibration is None:
        raise UsageError(
            "--calibration is required: the report corrects the judge's verdicts with a "
            "human-labelled calibration table (CSV/Parquet with the --judge and --human columns)."
        )
    if args.method == "exact" and args.calibration_design != "separate":
        raise UsageError(
            f"--method exact computes the posterior for --calibration-design separate only; "
            f"use --method mcmc (or auto) for {args.calibration_design!r} calibration."
        )
    # Before the fit, so that a bad --out fails at once; the folder is made, with all the
    # report's files at once, when the report is written.
    out = _check_output_folder("--out", args.out)
    _check_input_file("--test", args.test)
    _check_input_file("--calibration", args.calibration)
    _check_draws_fit_in_memory(args)
    counts = _read_counts(args)
    seed = args.seed if args.seed is not None else int(np.random.default_rng().integers(2**31))
    fit_result = None
    method, fit_options = _report_method(args, counts)
    if method != "none":
        from bayesjudge.models.fit import fit
        from bayesjudge.warnings import ConvergenceWarning

        with warnings.catch_warnings():
            # The report repeats the sampler's warnings (section 7); print them once.
            warnings.simplefilter("ignore", ConvergenceWarning)
            fit_result = fit(
                counts,
                calibration=args.calibration_design,
                draws=args.draws,
                chains=args.chains,
                random_seed=seed,
                method=method,
                **(
                    {"tune": args.tune, "progressbar": _show_progress(args)}
                    if method == "mcmc"
                    else {}
                ),
                **fit_options,
            )
    from bayesjudge.report import write_report
    from bayesjudge.studies._framework import staged_folder

    options = {
        "alpha": 1 - args.ci_prob,
        "random_seed": seed,
        "n_resamples": args.n_resamples,
        "target_width": args.target_width,
    }
    report = write_report(fit_result if fit_result is not None else counts, None, **options)
    try:  # all files at once: an interrupted or failed write leaves --out as it was
        with staged_folder(out) as staging:
            written = report.save(staging)
    except OSError as err:
        where = terminal_safe(err.filename or out)
        raise UsageError(
            f"--out {terminal_safe(out)}: cannot write {where} ({err.strerror})."
        ) from None
    report.paths = {kind: out / Path(path).name for kind, path in written.items()}
    _WRITTEN.extend(str(path) for path in report.paths.values())
    if fit_result is None:
        bayes = "no Bayesian fit"
    else:
        paired = "paired" if fit_result.config.get("paired") else "unpaired"
        bayes = f"Bayesian fit: {method} ({paired}, {args.calibration_design} calibration)"
    print(
        f"report: {_plural(counts.sizes['system'], 'system', 'systems')} × "
        f"{_plural(counts.sizes['stratum'], 'stratum', 'strata')}, "
        f"{bayes}, {_plural(len(report.diagnoses), 'warning', 'warnings')}, seed {seed} "
        f"(repeat with --seed {seed})"
    )
    markdown, html = (terminal_safe(report.paths[kind]) for kind in ("markdown", "html"))
    print(f"wrote {markdown} (with {len(report.figures)} PNG figures)")
    print(f"wrote {html} (self-contained)")
    return 0


def _allocation_rows(report) -> list[dict]:
    """One row per allocation strategy of an ``AllocationReport``."""
    return [
        {
            "method": name,
            "m0": int(getattr(report, name).m0),
            "m1": int(getattr(report, name).m1),
            "interval_length": float(getattr(report, name).length),
        }
        for name in ("symmetric", "algorithm1", "exact")
    ]


#: The parameters of ``allocation_report`` and the ``allocate`` options that give them.
_ALLOCATE_OPTIONS = {
    "m": "--budget",
    "budget": "--budget",
    "p_hat": "--p-hat",
    "q0": "--q0",
    "q1": "--q1",
    "q0_pilot": "--q0",
    "q1_pilot": "--q1",
    "m_pilot": "--m-pilot",
    "n": "--n",
    "alpha": "--alpha",
}


def _cmd_allocate(args) -> int:
    from bayesjudge.core.allocation import allocation_report

    try:
        report = allocation_report(
            args.budget,
            args.p_hat,
            args.q0,
            args.q1,
            m_pilot=args.m_pilot,
            n=args.n,
            alpha=args.alpha,
        )
    except (ValueError, OverflowError, TypeError) as err:
        # The library names its parameters (m, p_hat, ...); say which option was wrong.
        message = str(err).strip()
        name = message.split(" ", 1)[0]
        option = _ALLOCATE_OPTIONS.get(name)
        if option is None:
            raise
        value = getattr(args, option[2:].replace("-", "_"))
        raise UsageError(f"{option} {value}: {message}") from None
    rows = _allocation_rows(report)
    if args.json:
        print(json.dumps({"budget": args.budget, "allocations": rows}, indent=2))
        return 0
    print(
        f"Calibration budget m = {args.budget} (pilot {args.m_pilot} per label), p̂ = {args.p_hat}, "
        f"pilot q0 = {args.q0}, q1 = {args.q1}, "
        f"test size n = {'∞' if args.n is None else args.n}"
    )
    table = pd.DataFrame(rows)
    table["interval_length"] = table["interval_length"].map(lambda x: f"{x:.3f}")
    table = table.rename(columns={"interval_length": f"expected {_ci_label(args.alpha)} length"})
    print(table.to_string(index=False))
    print(
        "\nLabel m0 truly incorrect and m1 truly correct items. 'algorithm1' is Lee et al.'s\n"
        "Algorithm 1 (Prop. 5.2 approximation); 'exact' minimises the Lang–Reiczigel length\n"
        "at the pilot estimates without that approximation. Lengths are predicted at the pilot\n"
        "estimates: with a small pilot (about 10 items per label) those are noisy, and in\n"
        "simulation Algorithm 1 then gives shorter real intervals than 'exact'; prefer 'exact'\n"
        "once the pilot has about 50 items per label."
    )
    return 0


# ----------------------------------------------------------------------------- study

#: Replications per design point under ``study --quick`` for studies that do not set their
#: own ``QUICK_REPS``: enough for every table cell and the figure, not for the conclusions.
_QUICK_REPS = 200


def _study_module(name: str):
    """Import the module of study ``name``; unknown or missing studies are usage errors."""
    import importlib

    from bayesjudge.studies import STUDIES

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
    import re

    doc = (module.__doc__ or "").strip()
    line = doc.splitlines()[0].rstrip(".").replace("``", "") if doc else ""
    # "Study NAME: ..." or "The NAME study: ..." would print "study NAME: Study NAME: ...".
    return re.sub(r"^(?:study\s+\S+|the\s+\S+\s+study)\s*:\s*", "", line, flags=re.I)


def _list_studies() -> int:
    from bayesjudge.studies import STUDIES

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
    import inspect

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


def _cmd_study(args) -> int:
    import time

    if args.list:
        if args.name is not None:
            raise UsageError("give either a study NAME or --list, not both.")
        return _list_studies()
    if args.name is None:
        from bayesjudge.studies import STUDIES

        raise UsageError(
            f"name a study: one of {', '.join(STUDIES)} (bayesjudge study --list describes them)."
        )
    if args.quick and args.reps is not None:
        raise UsageError("--quick sets the replications itself; drop --reps or --quick.")
    if args.no_save and args.out is not None:
        raise UsageError("--out names where to save; drop --out or --no-save.")
    module = _study_module(args.name)
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
    progress = _show_progress(args)
    out = None
    if not args.no_save:
        # Before the run, which can take an hour: a folder that cannot be made fails now. It
        # is made, with all its files at once, only when the run has finished.
        out = _check_output_folder("--out", f"study-{args.name}" if args.out is None else args.out)

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
    elapsed = time.perf_counter() - start
    settings = result.settings
    frame = result.to_frame()
    paths = {}
    if out is not None:
        paths = result.save(out)
        _WRITTEN.extend(str(path) for path in paths.values())
    # Under --format csv stdout carries the table only; the notes go to stderr.
    notes = sys.stderr if args.format == "csv" else sys.stdout
    if args.format == "csv":
        print(frame.to_csv(index=False), end="")
    else:
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
        print(
            shown.to_string(index=False, max_rows=args.max_rows, float_format=lambda x: f"{x:.4g}")
        )
    if len(frame) > args.max_rows and args.format == "table":
        where = f" (all rows in {terminal_safe(paths['csv'])})" if paths else ""
        print(f"[{len(frame)} rows, {args.max_rows} shown{where}]", file=notes)
    if paths:
        files = ", ".join(p.name for p in paths.values())
        print(f"saved {files} to {terminal_safe(out)}", file=notes)
    return 0


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr and exit status 2."""

    def error(self, message):
        self.exit(2, f"bayesjudge: error: {message} (see '{self.prog} --help')\n")


def _add_table_options(parser: argparse.ArgumentParser) -> None:
    """Add the options that read item-level test and calibration tables (estimate, fit)."""
    parser.add_argument("--test", required=True, help="CSV/Parquet of judged test items")
    parser.add_argument("--calibration", help="CSV/Parquet of human-labelled calibration items")
    parser.add_argument("--judge", default="judge", help="judge verdict column (default: judge)")
    parser.add_argument("--human", default="human", help="human label column (default: human)")
    parser.add_argument("--system", help="column naming the evaluated system")
    parser.add_argument("--stratum", help="column naming the stratum (task type, length, ...)")
    parser.add_argument("--positive", help="label value meaning 'correct' if not yes/no, 1/0, ...")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="bayesjudge",
        description="Honest estimates of true quality from LLM-as-a-judge verdicts.",
    )
    parser.add_argument("--version", action="version", version=f"bayesjudge {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser("demo", help="simulate an evaluation and compare naive vs corrected")
    demo.add_argument(
        "--seed", type=_seed, default=2026, help="random seed, an integer >= 0 (default 2026)"
    )
    demo.add_argument(
        "--alpha", type=_unit("0.05"), default=0.05, help="1 - interval coverage (0.05)"
    )
    demo.add_argument(
        "--no-bayes", action="store_true", help="skip the Bayesian fit (no PyMC, no compile)"
    )
    demo.set_defaults(func=_cmd_demo)

    est = sub.add_parser("estimate", help="estimate true accuracy from verdict tables")
    _add_table_options(est)
    est.add_argument(
        "--method",
        default="lang-reiczigel",
        choices=["lang-reiczigel", "naive", "bootstrap", "ppi++"],
    )
    est.add_argument(
        "--calibration-design",
        default="own",
        choices=["own", "shared"],
        help="correct each system with its own calibration, or pool calibration over systems",
    )
    est.add_argument(
        "--alpha", type=_unit("0.05"), default=0.05, help="1 - interval coverage (0.05)"
    )
    est.add_argument("--seed", type=_seed, default=None, help="random seed for the bootstrap")
    est.add_argument(
        "--n-resamples", type=_int_at_least(1), default=10_000, help="bootstrap resamples"
    )
    est.add_argument("--json", action="store_true", help="print JSON instead of a table")
    est.set_defaults(func=_cmd_estimate)

    fit = sub.add_parser("fit", help="Bayesian posterior of true accuracy from verdict tables")
    _add_table_options(fit)
    fit.add_argument(
        "--calibration-model",
        default="separate",
        choices=["separate", "shared", "hierarchical"],
        help="each group's own q0, q1 (default); one q0, q1 shared across --pool-over; or "
        "q0, q1 drawn from a population across --pool-over",
    )
    fit.add_argument(
        "--pool-over",
        type=_pool_over,
        help="dims sharing the judge's quality: system, stratum or system,stratum (default both)",
    )
    fit.add_argument(
        "--judge-better-than-chance",
        action="store_true",
        help="restrict the prior to J = q0 + q1 - 1 > 0 (separate and shared models)",
    )
    fit.add_argument(
        "--aggregate",
        default="auto",
        choices=["auto", "test", "dirichlet", "none"],
        help="θ_total per system over strata: weights from test counts, Dirichlet, or none; "
        "auto = test when there are several strata",
    )
    fit.add_argument("--prior-theta", type=_prior, metavar="A,B", help="Beta prior of θ (1,1)")
    fit.add_argument(
        "--prior-q0", type=_prior, metavar="A,B|VALUE", help="Beta prior of q0, or a known q0"
    )
    fit.add_argument(
        "--prior-q1", type=_prior, metavar="A,B|VALUE", help="Beta prior of q1, or a known q1"
    )
    fit.add_argument(
        "--draws", type=_int_at_least(1, _MAX_STEPS), default=1000, help="draws per chain"
    )
    fit.add_argument(
        "--tune", type=_int_at_least(0, _MAX_STEPS), default=1000, help="tuning steps per chain"
    )
    fit.add_argument(
        "--chains", type=_int_at_least(1, _MAX_CHAINS), default=4, help="chains (default 4)"
    )
    fit.add_argument(
        "--seed", type=_seed, default=None, help="sampler seed, an integer >= 0 (default: drawn)"
    )
    fit.add_argument(
        "--ci-prob", type=_open_unit, default=0.95, help="credible interval probability (0.95)"
    )
    fit.add_argument(
        "--target-accept",
        type=_open_unit,
        help="NUTS target acceptance rate (default: bayesjudge.fit's); raise it on divergences",
    )
    fit.add_argument("--sampler", default="nutpie", choices=["nutpie", "pymc"])
    fit.add_argument(
        "--method",
        default="mcmc",
        choices=["mcmc", "exact"],
        help="MCMC (NUTS; default) or the exact posterior (fast, no sampler: --calibration-model "
        "separate with Beta priors, as in 'bayesjudge report --method exact')",
    )
    fit.add_argument(
        "--save",
        metavar="FIT.nc",
        help="write the fit to a netCDF file; an existing file is replaced (atomically, when "
        "the fit has finished)",
    )
    _add_progress_option(fit, "the sampler's progress bar")
    fit.add_argument(
        "--format",
        default="table",
        choices=["table", "csv"],
        help="tables with settings, or one tidy CSV (summary and comparison rows)",
    )
    fit.set_defaults(func=_cmd_fit)

    rep = sub.add_parser(
        "report", help="write the evaluation report (Markdown + self-contained HTML)"
    )
    _add_table_options(rep)
    rep.add_argument(
        "--item", help="item id column: systems' verdicts on the same items are paired"
    )
    rep.add_argument(
        "--out",
        default="bayesjudge-report",
        help="output folder (default ./bayesjudge-report; created when the report is written; "
        "files of the same names are replaced)",
    )
    rep.add_argument(
        "--method",
        default="auto",
        choices=["auto", "exact", "mcmc", "none"],
        help="Bayesian fit: auto (default: the paired MCMC model with --item, MCMC for a "
        "shared or hierarchical design, else exact), exact posterior (fast; separate "
        "calibration, unpaired), MCMC, or none (closed forms only)",
    )
    rep.add_argument(
        "--calibration-design",
        default="separate",
        choices=["separate", "shared", "hierarchical"],
        help="calibration model of the Bayesian fit (default separate)",
    )
    rep.add_argument(
        "--draws", type=_int_at_least(1, _MAX_STEPS), default=1000, help="draws per chain"
    )
    rep.add_argument(
        "--tune",
        type=_int_at_least(0, _MAX_STEPS),
        default=1000,
        help="MCMC tuning steps per chain",
    )
    rep.add_argument(
        "--chains", type=_int_at_least(1, _MAX_CHAINS), default=4, help="chains (default 4)"
    )
    rep.add_argument(
        "--seed", type=_seed, default=None, help="seed of fit and bootstrap (drawn), >= 0"
    )
    rep.add_argument(
        "--ci-prob", type=_open_unit, default=0.95, help="interval probability (default 0.95)"
    )
    rep.add_argument(
        "--n-resamples", type=_int_at_least(100), default=10_000, help="bootstrap resamples"
    )
    rep.add_argument(
        "--target-width",
        type=_open_unit,
        default=None,
        help="desired width of the θ intervals: warn where calibration is too small for it",
    )
    _add_progress_option(rep, "the MCMC sampler's progress bar")
    rep.set_defaults(func=_cmd_report)

    alloc = sub.add_parser("allocate", help="split a calibration budget between label types")
    alloc.add_argument(
        "--budget", type=_whole("200"), required=True, help="total calibration items m"
    )
    alloc.add_argument("--p-hat", type=float, required=True, help="share judged correct on test")
    alloc.add_argument("--q0", type=float, required=True, help="pilot specificity estimate")
    alloc.add_argument("--q1", type=float, required=True, help="pilot sensitivity estimate")
    alloc.add_argument(
        "--m-pilot", type=_whole("10"), default=10, help="pilot items per label (10)"
    )
    alloc.add_argument(
        "--n", type=_whole("5000"), default=None, help="test-set size (default: infinite)"
    )
    alloc.add_argument(
        "--alpha", type=_unit("0.05"), default=0.05, help="1 - interval coverage (0.05)"
    )
    alloc.add_argument("--json", action="store_true", help="print JSON instead of a table")
    alloc.set_defaults(func=_cmd_allocate)

    study = sub.add_parser(
        "study", help="run a Monte Carlo study of the papers (table, settings, figure)"
    )
    study.add_argument("name", nargs="?", metavar="NAME", help="study to run (see --list)")
    study.add_argument("--list", action="store_true", help="list the studies and exit")
    study.add_argument(
        "--reps",
        type=_int_at_least(2, _MAX_STEPS),
        help="replications per design point (study's default)",
    )
    study.add_argument(
        "--quick",
        action="store_true",
        help=f"a fast smoke run (about {_QUICK_REPS} reps; fewer Bayesian fits)",
    )
    study.add_argument(
        "--seed",
        type=_seed,
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
    _add_progress_option(study, "a progress bar")
    study.add_argument(
        "--format",
        default="table",
        choices=["table", "csv"],
        help="compact table with the settings, or the tidy table as CSV on stdout",
    )
    study.add_argument(
        "--max-rows", type=_int_at_least(1), default=40, help="rows shown in the table (40)"
    )
    study.set_defaults(func=_cmd_study)
    for command in sub.choices.values():
        command.add_argument(
            "--verbose",
            action="store_true",
            help="also show other libraries' warnings (matplotlib, numpy, ...), in Python's "
            "format; bayesjudge's own warnings are always shown",
        )
    return parser


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
        1 on an internal error (one line; ``--verbose`` shows the traceback).

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
    _WRITTEN.clear()
    _PROGRESS.clear()
    try:
        return _main(argv)
    except KeyboardInterrupt:
        if any(_PROGRESS):
            print(file=sys.stderr)  # end the progress bar's line
        if _WRITTEN:
            files = ", ".join(terminal_safe(name) for name in _WRITTEN)
            done = f"{files} had been written in full, nothing else"
        else:
            done = "nothing was written"
        print(f"bayesjudge: interrupted; {done}", file=sys.stderr)
        return EXIT_INTERRUPTED


#: Exit status when the reader of stdout went away (128 + SIGPIPE), as shells report it.
_EXIT_BROKEN_PIPE = 141


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
                import traceback

                traceback.print_exc()
            _error(
                f"{type(err).__name__}: {err}. This is a bug in bayesjudge, not in your input: "
                "please report it with the command line and the traceback (--verbose shows it).",
                prefix="bayesjudge: internal error:",
            )
            return 1
    return _flush_stdout() or code


def _error(message: str, prefix: str = "bayesjudge: error:") -> None:
    """Print ``message`` as one line on stderr, control characters in names escaped."""
    text = " ".join(str(message).split("\n")).strip()
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
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (e.g. captured by tests)
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
