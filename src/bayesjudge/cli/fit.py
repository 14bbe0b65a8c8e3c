"""``bayesjudge fit``: the Bayesian posterior of true accuracy from verdict tables."""

from __future__ import annotations

import argparse
import functools

import numpy as np
import pandas as pd
import xarray as xr

from bayesjudge._lazy import bayesian
from bayesjudge._text import fmt_number, format_probability, pair_label, terminal_safe
from bayesjudge.cli._categorical import (
    PRIOR_OPTIONS,
    PRIOR_THETA_FORMS,
    add_category_options,
    add_prior_options,
    categorical_priors,
    check_labelled,
    describe_categories,
    describe_scores,
    given_prior_options,
    read_table_counts,
    score_map,
)
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
    parse_ci_prob,
    parse_open_unit,
    parse_seed,
    resolve_calibration_model,
    show_progress_for,
)
from bayesjudge.cli._jury import add_jury_model_options, run_jury_fit
from bayesjudge.data import CategoricalCounts
from bayesjudge.report import comparison_rows
from bayesjudge.report.categorical_sections import describe_priors

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
    add_category_options(fit)
    _add_model_options(fit)
    add_jury_model_options(fit)
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
        default=None,
        choices=["separate", "shared", "hierarchical"],
        help="each group's own q0, q1; one q0, q1 shared across --pool-over; or q0, q1 drawn "
        "from a population across --pool-over (K categories: the same for the confusion "
        "matrix, rows on the log-ratio scale). Default: separate, or shared over the systems "
        "when the calibration table has no --system column (one set for every system)",
    )
    fit.add_argument(
        "--confusion",
        default="free",
        choices=["free", "symmetric", "ordinal"],
        help="K categories: the judge's confusion matrix, free (default), symmetric (a "
        "preference judge mistakes 'A better' for 'B better' as often as the reverse) or "
        "ordinal (errors only to neighbouring grades; implies --ordered)",
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
    add_prior_options(fit, theta_help=f"prior of θ (default: flat). {PRIOR_THETA_FORMS}")
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
        "--ci-prob", type=parse_ci_prob, default=0.95, help="credible interval probability (0.95)"
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
    check_input_file("--test", args.test)
    check_input_file("--calibration", args.calibration)
    inputs = {"--test": args.test, "--calibration": args.calibration,
              "--gold": getattr(args, "gold", None)}  # fmt: skip
    save = None if args.save is None else check_output_file("--save", args.save, inputs)
    check_draws_fit_in_memory(args)
    if args.judges is not None or args.dependence != "none" or args.pool_judges or args.covariates:
        return run_jury_fit(args, save)
    counts = read_table_counts(args)
    _resolve_calibration(args, counts)
    if isinstance(counts, CategoricalCounts):
        return _run_categorical(args, counts, save)
    if args.confusion != "free":
        raise UsageError(
            f"--confusion {args.confusion} is a model of K-category verdicts; these label "
            "columns are read as correct/incorrect (q0, q1). Drop --confusion, or give "
            "--categories to read the labels as categories."
        )
    models = bayesian("fit")  # imports PyMC: only when a command fits (bayesjudge._lazy)
    priors = _fit_priors(args, models.Priors)
    labelled = int(counts.dataset["m0"].sum() + counts.dataset["m1"].sum())
    if not labelled and not (priors.known("q0") and priors.known("q1")):
        raise UsageError(
            "--calibration is required (the judge's errors q0, q1 are estimated from "
            "human-labelled items) unless the --test table has a --human column filled for "
            "the labelled rows, or --prior-q0 and --prior-q1 both give known values."
        )
    aggregate = None if args.aggregate == "none" else args.aggregate
    if counts.has_clusters and aggregate == "auto":
        aggregate = None  # the item-effect model has no theta_total
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


def _resolve_calibration(args, counts) -> None:
    """Set --calibration-model (and --pool-over) where not given, then check the options."""
    binary = not isinstance(counts, CategoricalCounts)  # K categories refuse --method by name
    exact = ("--method exact", "--method mcmc") if binary and args.method == "exact" else None
    model, pool_over, note = resolve_calibration_model(
        args.calibration_model, counts, "--calibration-model", exact=exact
    )
    args.calibration_model, args.calibration_note = model, note
    if note is not None and args.pool_over is None:
        args.pool_over = pool_over
    _check_options(args, binary)


def _check_options(args, binary: bool = True) -> None:
    """Refuse combinations of options that the chosen model or method does not take.

    K-category fits (``binary`` False) refuse the binary model's options by name themselves.
    """
    if args.pool_over is not None and args.calibration_model == "separate":
        raise UsageError(
            "--pool-over applies to --calibration-model shared or hierarchical; 'separate' "
            "gives every group its own q0, q1. Drop --pool-over or choose another model."
        )
    if not binary:
        return
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
    given = given_prior_options(args, PRIOR_OPTIONS[1:])  # all but --prior-theta
    if given:
        raise UsageError(
            f"{', '.join(given)}: a prior of the K-category model's confusion; these label "
            "columns are read as correct/incorrect (q0, q1): use --prior-q0 and --prior-q1, or "
            "give --categories to read the labels as categories."
        )
    theta = args.prior_theta
    if theta is not None and len(theta) != 2:
        raise UsageError(
            f"--prior-theta {','.join(f'{v:g}' for v in theta)}: for correct/incorrect "
            "verdicts θ takes A,B, the parameters of a Beta(A, B) prior (e.g. 2,2); one number "
            "or K numbers are the Dirichlet prior of K categories (with --categories)."
        )
    given = {}
    for field in ("theta", "q0", "q1"):
        value = getattr(args, f"prior_{field}")
        if field == "theta" and value is not None:
            value = tuple(value)
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
    item_effect = result.config.get("model") == "item-effect"
    summary = result.summary(
        ci_prob=ci_prob,
        var_names=["theta", "q0", "q1", "youden", "item_icc"] if item_effect else None,
    )
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
    if getattr(args, "calibration_note", None):
        pooled += f" (the default here: {args.calibration_note})"
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
        + (
            "model: item-effect (repeated verdicts of an item: a Beta propensity per item; "
            "models/item-effect.md)\n"
            if settings.get("model") == "item-effect"
            else ""
        )
        + f"model: calibration {settings['calibration']}{pooled}"
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


#: Options of the binary model that K-category fits do not take: (attribute, default, flag).
_BINARY_ONLY = (
    ("prior_q0", None, "--prior-q0"),
    ("prior_q1", None, "--prior-q1"),
    ("judge_better_than_chance", False, "--judge-better-than-chance"),
    ("aggregate", "auto", "--aggregate"),
    ("estimand", "population", "--estimand"),
    ("method", "mcmc", "--method"),
    ("sampler", "nutpie", "--sampler"),
)


def _run_categorical(args, counts: CategoricalCounts, save) -> int:
    """Fit the K-category model (``bayesjudge.fit``); print its summary or one CSV; save it."""
    given = [flag for attr, default, flag in _BINARY_ONLY if getattr(args, attr) != default]
    if given:
        raise UsageError(
            f"{', '.join(given)}: options of the binary model (q0, q1); K-category verdicts "
            "are fitted by NUTS (nutpie), priors set by --prior-theta, --prior-confusion, "
            "--prior-error-mean and --prior-error-scale, the population shares per (system, "
            "stratum) group. Drop them."
        )
    check_labelled(counts)
    priors = categorical_priors(args, counts, bayesian("categorical").CategoricalPriors)
    scores = score_map(args.scores, counts.categories)
    sampling = {"draws": args.draws, "tune": args.tune, "chains": args.chains,
                "random_seed": args.seed, "progressbar": show_progress_for(args)}  # fmt: skip
    if args.target_accept is not None:
        sampling["target_accept"] = args.target_accept
    result = bayesian("fit").fit(
        counts, calibration=args.calibration_model, pool_over=args.pool_over,
        confusion=args.confusion, scores=scores, priors=priors, **sampling,
    )  # fmt: skip
    summary = _categorical_summary(result.summary(ci_prob=args.ci_prob))
    comparisons = pd.DataFrame()
    if counts.sizes["system"] >= 2:
        comparisons = _categorical_comparisons(result.compare(ci_prob=args.ci_prob))
    if save is not None:
        result.save(save)
        WRITTEN.append(str(save))
    if args.format == "csv":
        frame = pd.concat([summary, comparisons], ignore_index=True)
        if "prob_greater" not in frame:
            frame["prob_greater"] = np.nan
        print(frame.to_csv(index=False), end="")
        return 0
    ci = f"{100 * args.ci_prob:g}% interval"
    config = result.config
    pooled = f" pooled over {','.join(config['pool_over'])}" if config["pool_over"] else ""
    if getattr(args, "calibration_note", None):
        pooled += f" (the default here: {args.calibration_note})"
    seed = config["random_seed"]
    print(
        f"data: {_describe_categorical_design(counts.design)}\n"
        f"{describe_categories(counts)}\n"
        f"model: θ ~ Dirichlet per group; confusion {config['confusion']}, calibration "
        f"{config['calibration']}{pooled}"
        + (f"; scores {describe_scores(scores)}" if scores else "")
        + f"\npriors: {describe_priors(config)}"
        + f"\nsampler: nutpie, {config['chains']} chains x {config['draws']} draws after "
        f"{config['tune']} tuning steps, target_accept {config['target_accept']:g}, seed "
        f"{seed} (repeat with --seed {seed})\n"
        f"intervals: {ci.replace('interval', 'equal-tailed credible intervals')}"
    )
    _print_categorical_tables(summary, comparisons, ci)
    if save is not None:
        print(f"\nSaved the fit to {terminal_safe(args.save)} (read it with bayesjudge.load).")
    return 0


def _describe_categorical_design(design: str) -> str:
    """Return the labelling design of K-category counts in words."""
    if design == "random":
        return (
            "random labelling design (humans labelled a random subset of the judged items; "
            "their true-category counts are evidence about θ)"
        )
    return (
        "stratified labelling design (a calibration set sampled per human category, separate "
        "from the test items; its row totals fixed by design)"
    )


def _categorical_summary(summary) -> pd.DataFrame:
    """Tidy rows of ``CategoricalFit.summary``: θ, the confusion matrix and the score."""
    frames = []
    for name in ("theta", "score", "confusion"):
        if name not in summary:
            continue
        ci = summary[f"{name}_ci"]
        columns = {
            "mean": summary[name],
            "sd": summary[f"{name}_sd"],
            "median": summary[f"{name}_median"],
            "eti_lower": ci.sel(ci_bound="lower", drop=True),
            "eti_upper": ci.sel(ci_bound="upper", drop=True),
            "ess_bulk": summary[f"{name}_ess_bulk"],
            "r_hat": summary[f"{name}_r_hat"],
        }
        frame = xr.Dataset(columns).to_dataframe().reset_index()
        frame.insert(0, "variable", name)
        frames.append(frame)
    return _column_order(pd.concat(frames, ignore_index=True))


def _categorical_comparisons(compared) -> pd.DataFrame:
    """Tidy rows of ``CategoricalFit.compare``: the pair in ``system``, as the binary CSV."""
    ci = compared["ci"]
    columns = {
        "mean": compared["mean"],
        "sd": compared["sd"],
        "median": compared["median"],
        "eti_lower": ci.sel(ci_bound="lower", drop=True),
        "eti_upper": ci.sel(ci_bound="upper", drop=True),
        "prob_greater": compared["prob_greater"],
    }
    ds = xr.Dataset(columns).drop_vars(["first", "second"], errors="ignore")
    frame = ds.to_dataframe().reset_index().rename(columns={"pair": "system"})
    frame.insert(0, "variable", f"{compared.attrs['var']}_difference")
    return _column_order(frame)


def _column_order(frame: pd.DataFrame) -> pd.DataFrame:
    first = ["variable", "system", "stratum", "category", "truth", "verdict"]
    for column in first:
        if column not in frame:
            frame[column] = None
    return frame[first + [c for c in frame.columns if c not in first]]


def _quantity(row) -> str:
    if row["variable"] == "theta":
        return f"θ[{terminal_safe(row['category'])}]"
    if row["variable"] == "theta_difference":
        return f"Δθ[{terminal_safe(row['category'])}]"
    return {"score": "score", "score_difference": "Δscore"}[row["variable"]]


def _print_categorical_tables(summary: pd.DataFrame, comparisons: pd.DataFrame, ci) -> None:
    """Print θ and the score per group, then the comparisons of systems (if two or more)."""
    shown = summary[summary["variable"] != "confusion"]
    table = pd.DataFrame(
        {
            "quantity": shown.apply(_quantity, axis=1),
            "system": shown["system"].map(label),
            "stratum": shown["stratum"].map(label),
            "mean": shown["mean"].map(fmt_number),
            "sd": shown["sd"].map(fmt_number),
            ci: intervals(shown["eti_lower"], shown["eti_upper"]),
            "ess_bulk": shown["ess_bulk"].map(functools.partial(fmt_number, digits=0)),
            "r_hat": shown["r_hat"].map(fmt_number),
        }
    )
    print("\nPosterior summary (θ[c]: the share of true category c; the judge's confusion "
          "matrix is in --format csv)")  # fmt: skip
    print(table.to_string(index=False))
    if not len(comparisons):
        return
    table = pd.DataFrame(
        {
            "difference": comparisons.apply(_quantity, axis=1),
            f"systems {pair_label('a', 'b')}": comparisons["system"].map(label),
            "stratum": comparisons["stratum"].map(label),
            "mean": comparisons["mean"].map(fmt_number),
            ci: intervals(comparisons["eti_lower"], comparisons["eti_upper"]),
            "P(a > b)": comparisons["prob_greater"].map(format_probability),
        }
    )
    print("\nComparisons of systems (posterior of the difference, draw by draw)")
    print(table.to_string(index=False))
