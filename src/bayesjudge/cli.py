"""The ``bayesjudge`` command line: ``demo``, ``estimate`` and ``allocate``.

User mistakes (a missing file or column, bad labels, bad numbers) print one line starting with
``bayesjudge: error:`` to stderr and exit with status 2; warnings print as
``bayesjudge: warning:`` lines. No traceback reaches the user for such mistakes.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from bayesjudge._version import __version__
from bayesjudge.warnings import BayesJudgeWarning

__all__ = ["main"]


class UsageError(Exception):
    """A mistake in the command line or its input files, reported in one line."""


def _print_warning(message, category, filename, lineno, file=None, line=None):
    print(f"bayesjudge: warning: {message}", file=sys.stderr)


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
    print(
        "bayesjudge demo: a simulated evaluation with known truth\n"
        "  3 systems x 2 strata; each group: 1000 judged test items and 100 + 100 human-labelled\n"
        "  calibration items (truly incorrect + truly correct). One judge grades everything with\n"
        "  specificity q0 = 0.7 and sensitivity q1 = 0.9 (Lee et al. Sec. 7).\n"
        f"  Generating process: models/misclassification.md; random_seed = {args.seed}.\n"
    )
    table = pd.DataFrame(
        {
            "system": naive["system"],
            "stratum": naive["stratum"],
            "true θ": naive["truth"].map(_fmt),
            "naive p̂": naive["estimate"].map(_fmt),
            f"naive {ci}": [
                _fmt_interval(a, b) for a, b in zip(naive["lower"], naive["upper"], strict=True)
            ],
            "corrected θ̂": corrected["estimate"].map(_fmt),
            f"Lang-Reiczigel {ci}": [
                _fmt_interval(a, b)
                for a, b in zip(corrected["lower"], corrected["upper"], strict=True)
            ],
            "Ĵ": corrected["youden"].map(_fmt),
        }
    )
    print(table.to_string(index=False))
    covered_naive = int(
        ((naive["lower"] <= naive["truth"]) & (naive["truth"] <= naive["upper"])).sum()
    )
    covered = int(
        (
            (corrected["lower"] <= corrected["truth"]) & (corrected["truth"] <= corrected["upper"])
        ).sum()
    )
    print(
        f"\nThe true θ lies inside {covered_naive} of {len(naive)} naive intervals and inside "
        f"{covered} of {len(corrected)} corrected intervals.\n"
        "The naive share judged correct estimates p = θ·q1 + (1 − θ)(1 − q0), not θ: this judge\n"
        "over-calls 'correct' on weak systems and under-calls it on strong ones. The corrected\n"
        "estimate (Rogan–Gladen) and its interval account for the judge's errors and for the\n"
        "uncertainty of both the test and the calibration set."
    )
    return 0


def _cmd_estimate(args) -> int:
    from bayesjudge.data import JudgeCounts
    from bayesjudge.estimate import estimate

    if args.calibration is None and args.method != "naive":
        raise UsageError(
            f"--calibration is required for --method {args.method} (the judge's errors are "
            "estimated from it); pass a human-labelled CSV/Parquet file or use --method naive."
        )
    counts = JudgeCounts.from_frames(
        args.test,
        args.calibration,
        judge=args.judge,
        human=args.human,
        system=args.system,
        stratum=args.stratum,
        positive=args.positive,
    )
    result = estimate(
        counts,
        method=args.method,
        alpha=args.alpha,
        random_seed=args.seed,
        calibration=args.calibration_design,
        n_resamples=args.n_resamples,
    )
    frame = _result_frame(result)
    counts_frame = counts.dataset.to_dataframe().reset_index()
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
            "system": frame["system"],
            "stratum": frame["stratum"],
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


def _cmd_allocate(args) -> int:
    from bayesjudge.core.allocation import allocation_report

    report = allocation_report(
        args.budget,
        args.p_hat,
        args.q0,
        args.q1,
        m_pilot=args.m_pilot,
        n=args.n,
        alpha=args.alpha,
    )
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


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr and exit status 2."""

    def error(self, message):
        self.exit(2, f"bayesjudge: error: {message} (see '{self.prog} --help')\n")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="bayesjudge",
        description="Honest estimates of true quality from LLM-as-a-judge verdicts.",
    )
    parser.add_argument("--version", action="version", version=f"bayesjudge {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser("demo", help="simulate an evaluation and compare naive vs corrected")
    demo.add_argument("--seed", type=int, default=2026, help="random seed (default 2026)")
    demo.add_argument("--alpha", type=float, default=0.05, help="1 - interval coverage")
    demo.set_defaults(func=_cmd_demo)

    est = sub.add_parser("estimate", help="estimate true accuracy from verdict tables")
    est.add_argument("--test", required=True, help="CSV/Parquet of judged test items")
    est.add_argument("--calibration", help="CSV/Parquet of human-labelled calibration items")
    est.add_argument("--judge", default="judge", help="judge verdict column (default: judge)")
    est.add_argument("--human", default="human", help="human label column (default: human)")
    est.add_argument("--system", help="column naming the evaluated system")
    est.add_argument("--stratum", help="column naming the stratum (task type, length, ...)")
    est.add_argument("--positive", help="label value meaning 'correct' if not yes/no, 1/0, ...")
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
    est.add_argument("--alpha", type=float, default=0.05, help="1 - interval coverage")
    est.add_argument("--seed", type=int, default=None, help="random seed for the bootstrap")
    est.add_argument("--n-resamples", type=int, default=10_000, help="bootstrap resamples")
    est.add_argument("--json", action="store_true", help="print JSON instead of a table")
    est.set_defaults(func=_cmd_estimate)

    alloc = sub.add_parser("allocate", help="split a calibration budget between label types")
    alloc.add_argument("--budget", type=int, required=True, help="total calibration items m")
    alloc.add_argument("--p-hat", type=float, required=True, help="share judged correct on test")
    alloc.add_argument("--q0", type=float, required=True, help="pilot specificity estimate")
    alloc.add_argument("--q1", type=float, required=True, help="pilot sensitivity estimate")
    alloc.add_argument("--m-pilot", type=int, default=10, help="pilot items per label (10)")
    alloc.add_argument("--n", type=int, default=None, help="test-set size (default: infinite)")
    alloc.add_argument("--alpha", type=float, default=0.05, help="1 - interval coverage")
    alloc.add_argument("--json", action="store_true", help="print JSON instead of a table")
    alloc.set_defaults(func=_cmd_allocate)
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
        0 on success, 2 on a usage or input error (reported on one stderr line).

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
    parser = _build_parser()
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        # The command line reports every bayesjudge warning once, whatever the caller's filters.
        warnings.simplefilter("default", BayesJudgeWarning)
        warnings.showwarning = _print_warning
        try:
            return args.func(args)
        except (UsageError, ValueError, OSError) as err:
            message = str(err).strip().replace("\n", " ") or type(err).__name__
            print(f"bayesjudge: error: {message}", file=sys.stderr)
            return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
