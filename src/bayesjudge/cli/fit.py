"""``bayesjudge fit``: the Bayesian posterior of true accuracy from verdict tables."""

from __future__ import annotations

import argparse
import functools

import numpy as np
import pandas as pd

from bayesjudge._lazy import bayesian
from bayesjudge._text import fmt_number, format_probability, pair_label, terminal_safe
from bayesjudge.cli._common import (
    WRITTEN,
    UsageError,
    add_progress_option,
    add_sampling_sizes,
    add_table_options,
    check_draws_fit_in_memory,
    check_input_file,
    check_output_file,
    intervals,
    label,
    parse_open_unit,
    parse_seed,
    read_counts,
    show_progress_for,
)
from bayesjudge.report import comparison_rows

_LABELS = {
    "theta": "θ",
    "theta_total": "θ_total",
    "theta_test": "θ (test set)",
    "theta_total_test": "θ_total (test set)",
    "youden": "J",
}


def add_parser(subparsers) -> None:
    """Add the ``fit`` command to ``subparsers``."""
    fit = subparsers.add_parser(
        "fit", help="Bayesian posterior of true accuracy from verdict tables"
    )
    add_table_options(fit)
    _add_model_options(fit)
    _add_sampler_options(fit)
    fit.add_argument(
        "--save",
        metavar="FIT.nc",
        help="write the fit to a netCDF file; an existing file is replaced (atomically, when "
        "the fit has finished)",
    )
    add_progress_option(fit, "the sampler's progress bar")
    fit.add_argument(
        "--format",
        default="table",
        choices=["table", "csv"],
        help="tables with settings, or one tidy CSV (summary and comparison rows)",
    )
    fit.set_defaults(func=run)


def _add_model_options(fit: argparse.ArgumentParser) -> None:
    """Add the options of the model: calibration design, pooling, aggregate and priors."""
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
    fit.add_argument(
        "--estimand",
        default="population",
        choices=["population", "test-set"],
        help="θ of the population the items were drawn from (default), or the share of truly "
        "correct answers among this evaluation's items (the posterior holds theta_test)",
    )
    fit.add_argument("--prior-theta", type=_prior, metavar="A,B", help="Beta prior of θ (1,1)")
    fit.add_argument(
        "--prior-q0", type=_prior, metavar="A,B|VALUE", help="Beta prior of q0, or a known q0"
    )
    fit.add_argument(
        "--prior-q1", type=_prior, metavar="A,B|VALUE", help="Beta prior of q1, or a known q1"
    )


def _add_sampler_options(fit: argparse.ArgumentParser) -> None:
    """Add the options of the sampler and of the intervals it reports."""
    add_sampling_sizes(fit, tune_help="tuning steps per chain")
    fit.add_argument(
        "--seed",
        type=parse_seed,
        default=None,
        help="sampler seed, an integer >= 0 (default: drawn)",
    )
    fit.add_argument(
        "--ci-prob", type=parse_open_unit, default=0.95, help="credible interval probability (0.95)"
    )
    fit.add_argument(
        "--target-accept",
        type=parse_open_unit,
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


def run(args) -> int:
    """Fit the posterior and print its summary and comparisons (or one CSV); save it."""
    _check_options(args)
    check_input_file("--test", args.test)
    check_input_file("--calibration", args.calibration)
    save = None if args.save is None else check_output_file("--save", args.save)
    check_draws_fit_in_memory(args)
    models = bayesian("fit")  # imports PyMC: only when a command fits (bayesjudge._lazy)
    priors = _fit_priors(args, models.Priors)
    counts = read_counts(args)
    labelled = int(counts.dataset["m0"].sum() + counts.dataset["m1"].sum())
    if not labelled and not (priors.known("q0") and priors.known("q1")):
        raise UsageError(
            "--calibration is required (the judge's errors q0, q1 are estimated from "
            "human-labelled items) unless the --test table has a --human column filled for "
            "the labelled rows, or --prior-q0 and --prior-q1 both give known values."
        )
    aggregate = None if args.aggregate == "none" else args.aggregate
    options = {
        "calibration": args.calibration_model,
        "pool_over": args.pool_over,
        "priors": priors,
        "aggregate": aggregate,
        "judge_better_than_chance": args.judge_better_than_chance,
        "estimand": args.estimand,
    }
    result = models.fit(counts, **options, **_sampling(args))
    summary, comparisons = _fit_frames(result, args.ci_prob)
    if save is not None:
        result.save(save)
        WRITTEN.append(str(save))
    if args.format == "csv":
        frame = (
            pd.concat([summary, comparisons], ignore_index=True) if len(comparisons) else summary
        )
        if "prob_greater" not in frame:
            frame["prob_greater"] = np.nan
        print(frame.to_csv(index=False), end="")
        return 0
    ci = f"{100 * args.ci_prob:g}% interval"
    _print_settings(args, result, priors, _describe_aggregate(aggregate, counts), ci)
    _print_tables(summary, comparisons, ci)
    if save is not None:
        print(f"\nSaved the fit to {terminal_safe(args.save)} (read it with bayesjudge.load).")
    return 0


def _check_options(args) -> None:
    """Refuse combinations of options that the chosen model or method does not take."""
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


def _sampling(args) -> dict:
    """Return the sampler options of ``bayesjudge.fit`` for --method exact or mcmc."""
    sampling = {"draws": args.draws, "chains": args.chains, "random_seed": args.seed}
    if args.method == "exact":
        sampling["method"] = "exact"
    else:
        sampling |= {"tune": args.tune, "sampler": args.sampler}
        sampling["progressbar"] = show_progress_for(args)
        if args.target_accept is not None:  # else bayesjudge.fit's default for the model
            sampling["target_accept"] = args.target_accept
    return sampling


def _fit_priors(args, priors_class):
    """Build ``Priors`` (``priors_class``) from the --prior-* options; errors name the option."""
    given = {}
    for field in ("theta", "q0", "q1"):
        value = getattr(args, f"prior_{field}")
        if value is None:
            continue
        option = f"--prior-{field.replace('_', '-')}"
        raw = ",".join(f"{v:g}" for v in value) if isinstance(value, tuple) else f"{value:g}"
        try:
            priors_class(**{field: value})
        except ValueError as err:
            raise UsageError(f"{option} {raw}: {err}") from None
        given[field] = value
    return priors_class(**given)


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


def _describe_design(design: str) -> str:
    """Return the labelling design in words (the first line of the settings)."""
    if design == "random":
        return (
            "random labelling design (humans labelled a random subset of the judged items; "
            "their truth counts m0, m1 are evidence about θ)"
        )
    return (
        "stratified labelling design (a calibration set sampled per human label, separate "
        "from the test items; m0, m1 fixed by design)"
    )


def _describe_estimand(estimand: str) -> str:
    """Return the estimand in words."""
    if estimand == "test-set":
        return "test-set θ (the share truly correct among this evaluation's items: theta_test)"
    return "population θ (the accuracy in the population the items were drawn from)"


def _describe_aggregate(aggregate, counts) -> str:
    if aggregate == "auto":
        aggregate = "test" if counts.sizes["stratum"] > 1 else None
    return {
        None: "none (θ per stratum only)",
        "test": "θ_total = strata weighted by each system's test counts",
        "dirichlet": "θ_total = strata weighted by Dirichlet shares of the population",
    }[aggregate]


def _fit_frames(result, ci_prob: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the tidy summary and the pairwise comparisons of systems (empty if one)."""
    summary = result.summary(ci_prob=ci_prob)
    frames = []
    if result.counts.sizes["system"] >= 2:
        test_set = result.estimand == "test-set"
        compared = ("theta_test", "theta_total_test") if test_set else ("theta", "theta_total")
        for var in compared:
            if var in result.posterior.data_vars:
                rows = comparison_rows(result, var, ci_prob)
                rows.insert(0, "variable", f"{var}_difference")
                names = {"pair": "system", "lower": "eti_lower", "upper": "eti_upper"}
                frames.append(rows.rename(columns=names))
    return summary, (pd.concat(frames, ignore_index=True) if frames else pd.DataFrame())


def _print_settings(args, result, priors, aggregate: str, ci: str) -> None:
    """Print what was fitted: design, estimand, model, priors, sampler (with its seed).

    The fit's ``config`` holds the settings with defaults (and a drawn seed) resolved.
    """
    settings = result.config
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
        f"data: {_describe_design(result.counts.design)}\n"
        f"estimand: {_describe_estimand(args.estimand)}\n"
        f"model: calibration {settings['calibration']}{pooled}"
        + ("; judge better than chance (J > 0)" if settings["judge_better_than_chance"] else "")
        + f"; aggregate: {aggregate}\n"
        f"priors: {_describe_priors(priors, settings['calibration'])}\n"
        f"sampler: {sampler}\n"
        f"intervals: {ci.replace('interval', 'equal-tailed credible intervals')}"
    )


def _print_tables(summary: pd.DataFrame, comparisons: pd.DataFrame, ci: str) -> None:
    """Print the posterior summary and, with two systems or more, their comparisons."""
    table = pd.DataFrame(
        {
            "quantity": summary["variable"].map(lambda v: _LABELS.get(v, v)),
            "system": summary["system"].map(label),
            "stratum": summary["stratum"].map(label),
            "mean": summary["mean"].map(fmt_number),
            "sd": summary["sd"].map(fmt_number),
            ci: intervals(summary["eti_lower"], summary["eti_upper"]),
            "ess_bulk": summary["ess_bulk"].map(functools.partial(fmt_number, digits=0)),
            "ess_tail": summary["ess_tail"].map(functools.partial(fmt_number, digits=0)),
            "r_hat": summary["r_hat"].map(fmt_number),
        }
    )
    print("\nPosterior summary (J = q0 + q1 − 1, the judge's Youden index)")
    print(table.to_string(index=False))
    if not len(comparisons):
        return
    table = pd.DataFrame(
        {
            "difference": comparisons["variable"].map(
                lambda v: "Δ" + _LABELS[v.removesuffix("_difference")]
            ),
            f"systems {pair_label('a', 'b')}": comparisons["system"].map(label),
            "stratum": comparisons["stratum"].map(label),
            "mean": comparisons["mean"].map(fmt_number),
            ci: intervals(comparisons["eti_lower"], comparisons["eti_upper"]),
            "P(a > b)": comparisons["prob_greater"].map(format_probability),
        }
    )
    print("\nComparisons of systems (posterior of the difference, draw by draw)")
    print(table.to_string(index=False))
