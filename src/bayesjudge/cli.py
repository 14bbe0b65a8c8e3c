"""The ``bayesjudge`` command line: demo, estimate, fit, report, allocate and study.

User mistakes (a missing file or column, bad labels, bad numbers) print one line starting with
``bayesjudge: error:`` to stderr and exit with status 2; warnings print as
``bayesjudge: warning:`` lines. No traceback reaches the user for such mistakes.

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


# ----------------------------------------------------------------------------- fit

_LABELS = {"theta": "θ", "theta_total": "θ_total", "youden": "J"}


def _int_at_least(low: int):
    """Return an argparse type that accepts an integer >= ``low``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low:
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}; got {text!r}")
        return value

    return parse


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
    return "—" if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)


def _cmd_fit(args) -> int:
    from pathlib import Path

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
    if args.save is not None:
        parent = Path(args.save).expanduser().resolve().parent
        if not parent.is_dir():
            raise UsageError(f"--save {args.save}: the folder {str(parent)!r} does not exist.")

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
    sampling = {"draws": args.draws, "tune": args.tune, "chains": args.chains}
    sampling |= {"random_seed": args.seed, "sampler": args.sampler}
    if args.target_accept is not None:  # else bayesjudge.fit's default for the model
        sampling["target_accept"] = args.target_accept
    result = fit(counts, **options, **sampling)
    summary, comparisons = _fit_frames(result, args.ci_prob)
    if args.save is not None:
        result.save(Path(args.save).expanduser())
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
    print(
        f"model: calibration {settings['calibration']}{pooled}"
        + ("; judge better than chance (J > 0)" if settings["judge_better_than_chance"] else "")
        + f"; aggregate: {_describe_aggregate(aggregate, counts.sizes['stratum'])}\n"
        f"priors: {_describe_priors(priors, settings['calibration'])}\n"
        f"sampler: {settings['sampler']}, {settings['chains']} chains x {settings['draws']} draws "
        f"after {settings['tune']} tuning steps, target_accept {settings['target_accept']:g}, "
        f"seed {seed} (repeat with --seed {seed})\n"
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
                "systems a - b": comparisons["system"],
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
    if args.save is not None:
        print(f"\nSaved the fit to {args.save} (read it with bayesjudge.load).")
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
    out = Path(args.out).expanduser()
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a folder.")
    counts = _read_counts(args)
    try:  # before the fit, so that a bad --out fails at once
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UsageError(f"--out {out}: cannot create the folder ({err.strerror}).") from None
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
                **({"tune": args.tune} if method == "mcmc" else {}),
                **fit_options,
            )
    from bayesjudge.report import write_report

    options = {
        "alpha": 1 - args.ci_prob,
        "random_seed": seed,
        "n_resamples": args.n_resamples,
        "target_width": args.target_width,
    }
    try:
        report = write_report(fit_result if fit_result is not None else counts, out, **options)
    except OSError as err:
        where = err.filename or out
        raise UsageError(f"--out {out}: cannot write {where} ({err.strerror}).") from None
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
    print(f"wrote {report.paths['markdown']} (with {len(report.figures)} PNG figures)")
    print(f"wrote {report.paths['html']} (self-contained)")
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
    from pathlib import Path

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
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    out = None if args.no_save else Path(args.out or f"study-{args.name}").expanduser()
    if out is not None:
        # Before the run, which can take an hour: a folder that cannot be made fails now.
        if out.exists() and not out.is_dir():
            raise UsageError(f"--out {out}: exists and is not a folder.")
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise UsageError(f"--out {out}: cannot create the folder ({err.strerror}).") from None

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
    paths = result.save(out) if out is not None else {}
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
        print(
            frame.to_string(index=False, max_rows=args.max_rows, float_format=lambda x: f"{x:.4g}")
        )
    if len(frame) > args.max_rows and args.format == "table":
        where = f" (all rows in {paths['csv']})" if paths else ""
        print(f"[{len(frame)} rows, {args.max_rows} shown{where}]", file=notes)
    if paths:
        files = ", ".join(p.name for p in paths.values())
        print(f"saved {files} to {out}", file=notes)
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
    demo.add_argument("--seed", type=int, default=2026, help="random seed (default 2026)")
    demo.add_argument("--alpha", type=float, default=0.05, help="1 - interval coverage")
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
    est.add_argument("--alpha", type=float, default=0.05, help="1 - interval coverage")
    est.add_argument("--seed", type=int, default=None, help="random seed for the bootstrap")
    est.add_argument("--n-resamples", type=int, default=10_000, help="bootstrap resamples")
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
    fit.add_argument("--draws", type=_int_at_least(1), default=1000, help="draws per chain")
    fit.add_argument("--tune", type=_int_at_least(0), default=1000, help="tuning steps per chain")
    fit.add_argument("--chains", type=_int_at_least(1), default=4, help="chains (default 4)")
    fit.add_argument("--seed", type=int, default=None, help="sampler seed (default: drawn)")
    fit.add_argument(
        "--ci-prob", type=_open_unit, default=0.95, help="credible interval probability (0.95)"
    )
    fit.add_argument(
        "--target-accept",
        type=_open_unit,
        help="NUTS target acceptance rate (default: bayesjudge.fit's); raise it on divergences",
    )
    fit.add_argument("--sampler", default="nutpie", choices=["nutpie", "pymc"])
    fit.add_argument("--save", metavar="FIT.nc", help="write the fit to a netCDF file")
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
        "--out", default="bayesjudge-report", help="output folder (default ./bayesjudge-report)"
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
    rep.add_argument("--draws", type=_int_at_least(1), default=1000, help="draws per chain")
    rep.add_argument(
        "--tune", type=_int_at_least(0), default=1000, help="MCMC tuning steps per chain"
    )
    rep.add_argument("--chains", type=_int_at_least(1), default=4, help="chains (default 4)")
    rep.add_argument(
        "--seed", type=_int_at_least(0), default=None, help="seed of fit and bootstrap (drawn)"
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
    rep.set_defaults(func=_cmd_report)

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

    study = sub.add_parser(
        "study", help="run a Monte Carlo study of the papers (table, settings, figure)"
    )
    study.add_argument("name", nargs="?", metavar="NAME", help="study to run (see --list)")
    study.add_argument("--list", action="store_true", help="list the studies and exit")
    study.add_argument(
        "--reps", type=_int_at_least(2), help="replications per design point (study's default)"
    )
    study.add_argument(
        "--quick",
        action="store_true",
        help=f"a fast smoke run (about {_QUICK_REPS} reps; fewer Bayesian fits)",
    )
    study.add_argument(
        "--seed",
        type=_int_at_least(0),
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
        "--out", metavar="DIR", help="folder for NAME.csv/.nc/.json/.png (default ./study-NAME)"
    )
    study.add_argument("--no-save", action="store_true", help="print only; write no files")
    study.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar on stderr (default: when stderr is a terminal)",
    )
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
