"""``bayesjudge estimate``: closed-form estimates of true accuracy from verdict tables."""

from __future__ import annotations

import json

import pandas as pd

from bayesjudge._text import fmt_number
from bayesjudge.cli._common import (
    UsageError,
    add_table_options,
    check_input_file,
    ci_label,
    intervals,
    jsonable,
    label,
    parse_int_at_least,
    parse_seed,
    parse_unit,
    read_counts,
    result_frame,
)
from bayesjudge.estimate import estimate


def add_parser(subparsers) -> None:
    """Add the ``estimate`` command to ``subparsers``."""
    est = subparsers.add_parser("estimate", help="estimate true accuracy from verdict tables")
    add_table_options(est)
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
        "--alpha", type=parse_unit("0.05"), default=0.05, help="1 - interval coverage (0.05)"
    )
    est.add_argument("--seed", type=parse_seed, default=None, help="random seed for the bootstrap")
    est.add_argument(
        "--n-resamples", type=parse_int_at_least(1), default=10_000, help="bootstrap resamples"
    )
    est.add_argument("--json", action="store_true", help="print JSON instead of a table")
    est.set_defaults(func=run)


def run(args) -> int:
    """Estimate θ per (system, stratum) and print a table or JSON."""
    if args.calibration is None and args.method != "naive":
        raise UsageError(
            f"--calibration is required for --method {args.method} (the judge's errors are "
            "estimated from it); pass a human-labelled CSV/Parquet file or use --method naive."
        )
    check_input_file("--test", args.test)
    check_input_file("--calibration", args.calibration)
    counts = read_counts(args)
    result = estimate(
        counts,
        method=args.method,
        alpha=args.alpha,
        random_seed=args.seed,
        calibration=args.calibration_design,
        n_resamples=args.n_resamples,
    )
    frame = result_frame(result)
    counts_frame = counts.to_frame()
    frame = frame.merge(counts_frame, on=["system", "stratum"], how="left")
    if args.json:
        payload = {
            "settings": {
                k: (v.item() if hasattr(v, "item") else v) for k, v in result.attrs.items()
            },
            "results": [
                {key: jsonable(value) for key, value in row.items()}
                for row in frame.to_dict(orient="records")
            ],
        }
        print(json.dumps(payload, indent=2))
        return 0
    table = pd.DataFrame(
        {
            "system": frame["system"].map(label),
            "stratum": frame["stratum"].map(label),
            "n": frame["n"],
            "m0": frame["m0"],
            "m1": frame["m1"],
            "estimate": frame["estimate"].map(fmt_number),
            ci_label(args.alpha): intervals(frame["lower"], frame["upper"]),
            "Ĵ": frame["youden"].map(fmt_number),
        }
    )
    print(
        f"method: {args.method} ({result.attrs['ci_kind']}); calibration: {args.calibration_design}"
    )
    print(table.to_string(index=False))
    return 0
