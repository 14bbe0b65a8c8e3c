"""``bayesjudge demo``: a simulated evaluation with known truth, naive vs corrected intervals."""

from __future__ import annotations

import pandas as pd

from bayesjudge._lazy import bayesian
from bayesjudge._text import fmt_number
from bayesjudge.cli._common import (
    ci_label,
    intervals,
    parse_seed,
    parse_unit,
    result_frame,
)
from bayesjudge.estimate import estimate
from bayesjudge.simulate import demo_design, simulate_counts

# Sampler settings of the Bayesian fit in ``demo``: about a second of sampling once compiled.
_DEMO_SAMPLING = {"draws": 1000, "tune": 1000, "chains": 4}


def add_parser(subparsers) -> None:
    """Add the ``demo`` command to ``subparsers``."""
    demo = subparsers.add_parser(
        "demo", help="simulate an evaluation and compare naive vs corrected"
    )
    demo.add_argument(
        "--seed", type=parse_seed, default=2026, help="random seed, an integer >= 0 (default 2026)"
    )
    demo.add_argument(
        "--alpha", type=parse_unit("0.05"), default=0.05, help="1 - interval coverage (0.05)"
    )
    demo.add_argument(
        "--no-bayes", action="store_true", help="skip the Bayesian fit (no PyMC, no compile)"
    )
    demo.set_defaults(func=run)


def run(args) -> int:
    """Simulate the demo design, estimate it and print the intervals beside the truth."""
    design = demo_design()
    counts = simulate_counts(
        **{v: design[v].values for v in ("theta", "q0", "q1", "n", "m0", "m1")},
        system=design["system"].values.tolist(),
        stratum=design["stratum"].values.tolist(),
        random_seed=args.seed,
    )
    naive = result_frame(estimate(counts, method="naive", alpha=args.alpha), design["theta"])
    corrected = result_frame(
        estimate(counts, method="lang-reiczigel", alpha=args.alpha), design["theta"]
    )
    ci = ci_label(args.alpha)
    _print_design(args)
    columns = {
        "system": naive["system"],
        "stratum": naive["stratum"],
        "true θ": naive["truth"].map(fmt_number),
        "naive p̂": naive["estimate"].map(fmt_number),
        f"naive {ci}": intervals(naive["lower"], naive["upper"]),
        "corrected θ̂": corrected["estimate"].map(fmt_number),
        f"Lang-Reiczigel {ci}": intervals(corrected["lower"], corrected["upper"]),
        "Ĵ": corrected["youden"].map(fmt_number),
    }
    coverage = (
        f"The true θ lies inside {_covered(naive['lower'], naive['upper'], naive['truth'])} of "
        f"{len(naive)} naive intervals and inside "
        f"{_covered(corrected['lower'], corrected['upper'], corrected['truth'])} of "
        f"{len(corrected)} corrected intervals"
    )
    if not args.no_bayes:
        bayes = _demo_bayes(counts, args, naive)
        columns[f"Bayesian {ci}"] = intervals(bayes["lower"], bayes["upper"])
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


def _print_design(args) -> None:
    """Print what the demo simulates and how (before the table, which may take a fit)."""
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
        "  calibration items (truly incorrect + truly correct: the stratified labelling design\n"
        "  of Lee et al.). One judge grades everything with specificity q0 = 0.7 and\n"
        "  sensitivity q1 = 0.9 (Lee et al. Sec. 7).\n"
        f"  Generating process: models/misclassification.md; random_seed = {args.seed}.\n"
        + bayes_line,
        flush=True,
    )


def _covered(lower, upper, truth) -> int:
    return int(((lower <= truth) & (truth <= upper)).sum())


def _demo_bayes(counts, args, frame: pd.DataFrame) -> pd.DataFrame:
    """ETI of θ per group from ``bayesjudge.fit`` (separate calibration), rows as ``frame``."""
    result = bayesian("fit").fit(counts, random_seed=args.seed, **_DEMO_SAMPLING)
    summary = result.summary(ci_prob=1 - args.alpha, var_names=["theta"])
    summary = summary.rename(columns={"eti_lower": "lower", "eti_upper": "upper"})
    summary[["system", "stratum"]] = summary[["system", "stratum"]].astype(str)
    return frame[["system", "stratum"]].merge(summary, on=["system", "stratum"], how="left")
