"""``bayesjudge report``: the evaluation report (Markdown + self-contained HTML).

With the gate options of ``bayesjudge compare`` (``--claim``/``--over``, ``--rank``,
``--min-probability``, ``--require-excludes-zero``) the report is written all the same, then
the claims are evaluated on the report's own comparison (the Bayesian fit's P(θ_a > θ_b), or
with ``--method none`` the closed-form bootstrap Δθ with the report's seed) and the exit
status says the verdict: 0 when every claim is supported, 3
(:data:`bayesjudge.cli.compare.EXIT_UNSUPPORTED`) when some claim is not.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from bayesjudge._lazy import bayesian
from bayesjudge._text import terminal_safe
from bayesjudge.cli._categorical import (
    add_category_options,
    add_prior_options,
    categorical_priors,
    check_labelled,
    describe_categories,
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
    check_output_folder,
    parse_ci_prob,
    parse_int_at_least,
    parse_open_unit,
    parse_seed,
    resolve_calibration_model,
    show_progress_for,
)
from bayesjudge.cli._jury import (
    add_jury_model_options,
    check_jury_options,
    fit_jury_from_args,
    jury_prior_options,
    read_jury_counts,
)
from bayesjudge.cli.compare import (
    add_gate_options,
    bayesian_source,
    check_gate_settings,
    closed_form_source,
    evaluate_gate,
    gate_claims,
    gate_lines,
    str_to_system,
)
from bayesjudge.compare import compare
from bayesjudge.data import MAX_PAIRED_SYSTEMS, CategoricalCounts, CategoricalJuryCounts
from bayesjudge.report import write_report
from bayesjudge.report.categorical import build_categorical_report
from bayesjudge.report.categorical_sections import describe_priors
from bayesjudge.studies._framework import probe_folder, staged_folder
from bayesjudge.warnings import ConvergenceWarning


def add_parser(subparsers) -> None:
    """Add the ``report`` command to ``subparsers``."""
    rep = subparsers.add_parser(
        "report", help="write the evaluation report (Markdown + self-contained HTML)"
    )
    add_table_options(rep)
    add_category_options(rep)
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
        default=None,
        choices=["separate", "shared", "hierarchical"],
        help="calibration model of the Bayesian fit (default: separate, or shared over the "
        "systems when the calibration table has no --system column)",
    )
    rep.add_argument(
        "--confusion",
        default="free",
        choices=["free", "symmetric", "ordinal"],
        help="K categories: the confusion matrix of the Bayesian fit (as fit's --confusion)",
    )
    add_prior_options(
        rep,
        theta_help="K categories: the Dirichlet concentration of θ in the Bayesian fit, one "
        "number or one per category in the categories' order (default: the model's, flat)",
    )
    add_sampling_sizes(rep, tune_help="MCMC tuning steps per chain")
    rep.add_argument(
        "--seed", type=parse_seed, default=None, help="seed of fit and bootstrap (drawn), >= 0"
    )
    rep.add_argument(
        "--ci-prob", type=parse_ci_prob, default=0.95, help="interval probability (default 0.95)"
    )
    rep.add_argument(
        "--n-resamples", type=parse_int_at_least(100), default=10_000, help="bootstrap resamples"
    )
    rep.add_argument(
        "--target-width",
        type=parse_open_unit,
        default=None,
        help="desired width of the θ intervals: warn where calibration is too small for it",
    )
    add_progress_option(rep, "the MCMC sampler's progress bar")
    add_jury_model_options(rep)
    add_gate_options(rep)
    rep.set_defaults(func=run, claims=None)


def run(args) -> int:
    """Fit (unless --method none), write the report's files to --out and name them."""
    if args.method == "exact" and args.calibration_design not in (None, "separate"):
        raise UsageError(
            f"--method exact computes the posterior for --calibration-design separate only; "
            f"use --method mcmc (or auto) for {args.calibration_design!r} calibration."
        )
    check_gate_settings(args, bayes=args.method != "none")
    # Before the fit, so that a bad --out fails at once; the folder is made, with all the
    # report's files at once, when the report is written.
    out = check_output_folder("--out", args.out)
    try:
        probe_folder(out)  # os.access says yes as root and on special file systems
    except OSError as err:
        raise _out_error(out, err) from None
    check_input_file("--test", args.test)
    check_input_file("--calibration", args.calibration)
    check_draws_fit_in_memory(args)
    if args.judges is not None or args.dependence != "none" or args.pool_judges or args.covariates:
        return _run_jury(args, out)
    counts = read_table_counts(args)
    _resolve_calibration(args, counts)
    if isinstance(counts, CategoricalCounts):
        return _run_categorical(args, counts, out)
    if args.confusion != "free":
        raise UsageError(
            f"--confusion {args.confusion} is a model of K-category verdicts; these label "
            "columns are read as correct/incorrect (q0, q1). Drop --confusion, or give "
            "--categories to read the labels as categories."
        )
    given = given_prior_options(args)
    if given:
        raise UsageError(
            f"{', '.join(given)}: priors of the K-category model; the report of correct/"
            "incorrect verdicts fits θ, q0, q1 with Beta(1, 1) priors (other priors: "
            "'bayesjudge fit --prior-theta/--prior-q0/--prior-q1 --save FIT.nc'), or give "
            "--categories to read the labels as categories."
        )
    if not int(counts.dataset["m0"].sum() + counts.dataset["m1"].sum()):
        raise UsageError(
            "--calibration is required: the report corrects the judge's verdicts with "
            "human-labelled items, a calibration table (CSV/Parquet with the --judge and "
            "--human columns) or a --human column of the --test table filled for the labelled "
            "rows."
        )
    claims = gate_claims(args, counts.systems)  # before the fit: a misspelt name fails at once
    seed = args.seed if args.seed is not None else int(np.random.default_rng().integers(2**31))
    method, fit_result = _fit(args, counts, seed)
    options = {
        "alpha": 1 - args.ci_prob,
        "random_seed": seed,
        "n_resamples": args.n_resamples,
        "target_width": args.target_width,
    }
    report = write_report(fit_result if fit_result is not None else counts, None, **options)
    _save(report, out)
    if fit_result is None:
        bayes = "no Bayesian fit"
    else:
        paired = "paired" if fit_result.config.get("paired") else "unpaired"
        bayes = (
            f"Bayesian fit: {method} ({paired}, {args.calibration_design} calibration"
            f"{_default_note(args)})"
        )
    print(
        f"report: {_plural(counts.sizes['system'], 'system', 'systems')} × "
        f"{_plural(counts.sizes['stratum'], 'stratum', 'strata')}, "
        f"{counts.design} labelling design, {bayes}, "
        f"{_plural(len(report.diagnoses), 'warning', 'warnings')}, seed {seed} "
        f"(repeat with --seed {seed})"
    )
    markdown, html = (terminal_safe(report.paths[kind]) for kind in ("markdown", "html"))
    print(f"wrote {markdown} (with {len(report.figures)} PNG figures)")
    print(f"wrote {html} (self-contained)")
    if not claims:
        return 0
    return _gate(args, counts, fit_result, claims, seed)


def _run_jury(args, out) -> int:
    """``report --judges``: the jury report, with the joint model unless --method none.

    With ``--categories`` the verdicts are K categories: the report of several judges'
    K-category verdicts (:func:`~bayesjudge.report.categorical_jury.build_categorical_jury_report`),
    its mean score from ``--scores``.
    """
    _check_jury_report_options(args)
    seed = args.seed if args.seed is not None else int(np.random.default_rng().integers(2**31))
    options = {"alpha": 1 - args.ci_prob, "random_seed": seed}
    if args.method == "none":
        check_jury_options(args)
        source = read_jury_counts(args)
        if isinstance(source, CategoricalJuryCounts):
            options["scores"] = score_map(args.scores, source.categories)
    else:
        if args.categories is not None:
            _categorical_calibration(args)
        with warnings.catch_warnings():
            # The report repeats the sampler's warnings (section 5); print them once.
            warnings.simplefilter("ignore", ConvergenceWarning)
            source = fit_jury_from_args(args, seed)
    report = write_report(source, None, **options)
    _save(report, out)
    counts = source if args.method == "none" else source.counts
    scale = "" if args.categories is None else f", {describe_categories(counts)}"
    print(
        f"report: {len(counts.judges)} judges{scale}, "
        f"{_plural(len(counts.systems), 'system', 'systems')} × "
        f"{_plural(len(counts.strata), 'stratum', 'strata')}, {counts.design} labelling design, "
        f"{'no Bayesian fit' if args.method == 'none' else 'joint model of the judges'}, "
        f"{_plural(len(report.diagnoses), 'warning', 'warnings')}, seed {seed} "
        f"(repeat with --seed {seed})"
    )
    markdown, html = (terminal_safe(report.paths[kind]) for kind in ("markdown", "html"))
    print(f"wrote {markdown} (with {len(report.figures)} PNG figures)")
    print(f"wrote {html} (self-contained)")
    return 0


def _categorical_calibration(args) -> None:
    """Hand --calibration-design to the K-category joint model, refusing one it lacks.

    The joint model reads its calibration model from ``--calibration-model`` (fit's name of
    it); the report's ``--calibration-design`` is the same choice.
    """
    allowed = bayesian("categorical_jury").CATEGORICAL_JURY_CALIBRATIONS
    if args.calibration_design is not None and args.calibration_design not in allowed:
        raise UsageError(
            f"--calibration-design {args.calibration_design}: the joint model of several "
            f"judges' K-category verdicts takes {' or '.join(allowed)} (default shared: one "
            "confusion matrix per judge and stratum for every system)."
        )
    args.calibration_model = args.calibration_design


def _check_jury_report_options(args) -> None:
    """Refuse, before any work, the options that the report of several judges does not take."""
    if args.claims:
        raise UsageError(
            "--claim/--rank gates compare systems of one judge's report; drop them with --judges."
        )
    if args.method == "exact":
        raise UsageError("--method exact has no jury model; use --method auto, mcmc or none.")
    if args.covariates:
        raise UsageError(
            "--covariates: the report of several judges covers their verdict patterns, not the "
            "covariate model; its results print with 'bayesjudge fit --judges ... --covariates "
            "...' (Bayesian) or 'bayesjudge estimate --judges ... --covariates ...' (closed "
            "form). Drop --covariates for the jury report."
        )
    single = [
        flag
        for flag, given in (
            ("--rank", args.rank),
            ("--min-probability", args.min_probability),
            ("--require-excludes-zero", args.require_excludes_zero or None),
            ("--target-width", args.target_width),
            ("--confusion", None if args.confusion == "free" else args.confusion),
            *((flag, True) for flag in jury_prior_options(args)),
        )
        if given is not None
    ]
    if single:
        raise UsageError(
            f"{', '.join(single)} cannot be combined with --judges: the report of several "
            "judges fits the joint model with its default priors and has no gate or "
            "calibration-size planner. Drop the option, or report one judge at a time."
        )
    fit_only = {"--dependence": args.dependence != "none", "--pool-judges": args.pool_judges}
    given = [flag for flag, on in fit_only.items() if on]
    if args.method == "none" and given:
        raise UsageError(
            f"{', '.join(given)}: options of the joint model, which --method none does not fit. "
            "Drop them, or use --method auto or mcmc."
        )


def _gate(args, counts, fit_result, claims, seed: int) -> int:
    """Evaluate the claims on the report's comparison; print the verdict, return the status."""
    if fit_result is not None:
        source = bayesian_source(
            fit_result, args.ci_prob, args.min_probability, args.require_excludes_zero
        )
    else:
        # The report's own closed-form Δθ: the same method, calibration, seed and resamples
        # (compare's bootstrap replicates do not depend on which pairs are asked for).
        result = compare(
            counts,
            method=None,  # compare's default: "bootstrap", or "cluster-delta" for repeats
            calibration="shared" if "system" in counts.calibration_shared_over else "separate",
            alpha=1 - args.ci_prob,
            n_resamples=args.n_resamples,
            random_seed=seed,
        )
        source = closed_form_source(result, args.ci_prob)
    rank = [str_to_system(counts.systems, r) for r in args.rank] if args.rank else None
    gate = evaluate_gate(claims, source, rank)
    print("\n".join(gate_lines(gate, source["rule"])))
    return gate["exit_status"]


def _fit(args, counts, seed: int):
    """Return the resolved --method and the report's Bayesian fit (None for --method none)."""
    if args.method == "none":
        return "none", None
    method, fit_options = _report_method(args, counts, MAX_PAIRED_SYSTEMS)
    with warnings.catch_warnings():
        # The report repeats the sampler's warnings (section 7); print them once.
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit_result = bayesian("fit").fit(
            counts,
            calibration=args.calibration_design,
            pool_over=args.pool_over,
            draws=args.draws,
            chains=args.chains,
            random_seed=seed,
            method=method,
            **(
                {"tune": args.tune, "progressbar": show_progress_for(args)}
                if method == "mcmc"
                else {}
            ),
            **fit_options,
        )
    return method, fit_result


def _resolve_calibration(args, counts) -> None:
    """Set --calibration-design where not given (shared for a calibration set shared by all).

    ``args.pool_over``: the dims of that shared set, else None (the model's default).
    """
    binary = not isinstance(counts, CategoricalCounts)  # K categories refuse --method exact
    exact = (
        ("--method exact", "--method auto or mcmc") if binary and args.method == "exact" else None
    )
    design, pool_over, note = resolve_calibration_model(
        args.calibration_design, counts, "--calibration-design", exact=exact
    )
    args.calibration_design, args.pool_over, args.calibration_note = design, pool_over, note


def _default_note(args) -> str:
    note = getattr(args, "calibration_note", None)
    return f", the default here: {note}" if note else ""


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _out_error(out, err: OSError) -> UsageError:
    where = Path(err.filename) if err.filename else Path(out)
    if where.name.startswith(".") and where.name.endswith(".tmp"):
        where = where.parent  # a staging folder's name means nothing to the user
    return UsageError(
        f"--out {terminal_safe(out)}: cannot write there ({err.strerror or err}: "
        f"{terminal_safe(where)}); nothing was saved. Choose another folder with --out."
    )


def _save(report, out: Path) -> None:
    """Write the report's files to --out at once and record the paths written.

    The files are staged, so an interrupted or failed write leaves --out as it was.
    """
    try:
        with staged_folder(out) as staging:
            written = report.save(staging)
    except OSError as err:
        raise _out_error(out, err) from None
    report.paths = {kind: out / Path(path).name for kind, path in written.items()}
    WRITTEN.extend(str(path) for path in report.paths.values())


def _report_method(args, counts, max_paired: int) -> tuple[str, dict]:
    """Resolve ``bayesjudge report --method``: return (method, extra fit options).

    ``auto`` fits what the data and design call for: the paired MCMC model when the systems'
    verdicts on shared items are tabulated (``--item``, 2 to ``max_paired`` systems, the
    models' ``MAX_PAIRED_SYSTEMS``) or MCMC when the calibration design is shared or
    hierarchical, or the items were judged several times (the item-effect model); otherwise
    the exact posterior.
    """
    pairable = counts.has_joint and 2 <= counts.sizes["system"] <= max_paired
    method = args.method
    if method == "auto":
        needs_mcmc = pairable or args.calibration_design != "separate" or counts.has_clusters
        method = "mcmc" if needs_mcmc else "exact"
    options = {}
    if counts.has_joint and (method == "exact" or not pairable):
        # The exact engine (and the joint model beyond MAX_PAIRED_SYSTEMS) fits the unpaired
        # model; the report says so in bold and its frequentist Δθ stays paired.
        options["paired"] = False
    return method, options


def _run_categorical(args, counts: CategoricalCounts, out: Path) -> int:
    """Write the report of K-category counts (``build_categorical_report``) to --out."""
    binary = [
        flag
        for flag, value in (
            ("--claim/--over", args.claims),
            ("--rank", args.rank),
            ("--min-probability", args.min_probability),
            ("--require-excludes-zero", args.require_excludes_zero or None),
            ("--target-width", args.target_width),
            ("--method exact", "exact" if args.method == "exact" else None),
        )
        if value is not None
    ]
    if binary:
        raise UsageError(
            f"{', '.join(binary)}: for correct/incorrect verdicts only; the report of K-category "
            "verdicts ranks and compares systems on --scores, with MCMC (--method auto or mcmc) "
            "or closed forms only (--method none). Drop these options."
        )
    check_labelled(counts)
    priors = None
    given = given_prior_options(args)
    if args.method == "none" and given:
        raise UsageError(
            f"{', '.join(given)}: priors of the Bayesian fit, which --method none does not "
            "run. Drop them, or use --method auto or mcmc."
        )
    if args.method != "none":
        priors = categorical_priors(args, counts, bayesian("categorical").CategoricalPriors)
    scores = score_map(args.scores, counts.categories)
    seed = args.seed if args.seed is not None else int(np.random.default_rng().integers(2**31))
    fit_result = None
    if args.method != "none":
        with warnings.catch_warnings():
            # The report repeats the sampler's warnings; print them once.
            warnings.simplefilter("ignore", ConvergenceWarning)
            fit_result = bayesian("fit").fit(
                counts, calibration=args.calibration_design, pool_over=args.pool_over,
                confusion=args.confusion,
                scores=scores, priors=priors, draws=args.draws, tune=args.tune,
                chains=args.chains, random_seed=seed, progressbar=show_progress_for(args),
            )  # fmt: skip
    report = build_categorical_report(
        None if fit_result is not None else counts, fit=fit_result, scores=scores,
        alpha=1 - args.ci_prob, n_resamples=args.n_resamples, random_seed=seed,
    )  # fmt: skip
    _save(report, out)
    bayes = "no Bayesian fit" if fit_result is None else (
        f"Bayesian fit: mcmc ({args.calibration_design} calibration{_default_note(args)}, "
        f"{args.confusion} confusion)"
    )  # fmt: skip
    print(describe_categories(counts))
    if fit_result is not None:
        print(f"priors: {describe_priors(fit_result.config)}")
    print(
        f"report: {_plural(counts.sizes['system'], 'system', 'systems')} × "
        f"{_plural(counts.sizes['stratum'], 'stratum', 'strata')}, "
        f"{counts.design} labelling design, {bayes}, "
        f"{_plural(len(report.diagnoses), 'warning', 'warnings')}, seed {seed} "
        f"(repeat with --seed {seed})"
    )
    markdown, html = (terminal_safe(report.paths[kind]) for kind in ("markdown", "html"))
    print(f"wrote {markdown} (with {len(report.figures)} PNG figures)")
    print(f"wrote {html} (self-contained)")
    return 0
