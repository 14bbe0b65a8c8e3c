"""Several judges on the command line: ``--judges COLUMN`` of ``estimate`` and ``fit``."""

from __future__ import annotations

import contextlib
import json
import re
import warnings

import numpy as np
import pandas as pd
import xarray as xr

from bayesjudge._lazy import bayesian
from bayesjudge._text import fmt_number, terminal_safe
from bayesjudge.categorical_jury_estimate import CATEGORICAL_JURY_METHODS
from bayesjudge.cli._categorical import describe_categories, given_prior_options, score_map
from bayesjudge.cli._common import (
    WRITTEN,
    UsageError,
    ci_label,
    intervals,
    jsonable,
    label,
    show_progress_for,
)
from bayesjudge.data.categorical_jury import CategoricalJuryCounts
from bayesjudge.data.jury import JuryCounts
from bayesjudge.data.jury_items import JuryItems
from bayesjudge.estimate import JURY_ESTIMATE_METHODS, estimate
from bayesjudge.jury_estimate import jury_covariate_estimate, jury_plan

__all__ = [
    "add_jury_model_options",
    "check_jury_estimate_options",
    "check_jury_options",
    "covariate_names",
    "fit_jury_from_args",
    "jury_prior_options",
    "plan_usage_error",
    "read_jury_counts",
    "run_jury_estimate",
    "run_jury_fit",
    "tidy_jury_summary",
]

#: Options that read one judge's tables and mean nothing for a long table of several judges.
_SINGLE_JUDGE_OPTIONS = {
    "gold": "--gold",
    "repeats": "--repeats",
    "test_format": "--test-format",
    "scorer": "--scorer",
    "metric": "--metric",
}


def check_jury_options(args) -> None:
    """Refuse options that do not combine with ``--judges`` (one message, before any work)."""
    if getattr(args, "covariates", None) and args.judges is None:
        raise UsageError(
            "--covariates belongs to several judges' verdicts: name the judge column with "
            "--judges (and the item ids with --item)."
        )
    if getattr(args, "theta_covariates", None) and not getattr(args, "covariates", None):
        raise UsageError(
            "--theta-covariates belongs to the covariate model of several judges: give "
            "--covariates (and --judges) too."
        )
    if getattr(args, "item", None) is None:
        raise UsageError(
            f"--judges {terminal_safe(args.judges)} reads one row per (item, judge): give the "
            "item id column with --item too (an item's verdicts across judges are its pattern)."
        )
    if getattr(args, "categories", None) is None and (
        getattr(args, "scores", None) or getattr(args, "ordered", False)
    ):
        raise UsageError(
            "--scores and --ordered belong to K-category verdicts: name the categories in "
            "order with --categories (e.g. --categories A,tie,B)."
        )
    if getattr(args, "categories", None) is not None and getattr(args, "covariates", None):
        raise UsageError(
            "--covariates fits correct/incorrect verdicts; the covariate model of K-category "
            "verdicts is not available. Drop --categories or --covariates."
        )
    if getattr(args, "categories", None) is not None and getattr(args, "positive", None):
        raise UsageError(
            f"--positive {terminal_safe(args.positive)} cannot be combined with --judges and "
            "--categories: the verdicts are read as the K categories, every category's share "
            "is estimated and none is 'the correct one'. Drop --positive, or drop --categories "
            "to read correct/incorrect verdicts."
        )
    given = [flag for attr, flag in _SINGLE_JUDGE_OPTIONS.items() if getattr(args, attr, None)]
    if given:
        raise UsageError(
            f"{', '.join(given)} cannot be combined with --judges: several judges are read "
            "from CSV/Parquet tables with one row per (item, judge) and correct/incorrect "
            "verdicts. Drop the option, or analyse one judge at a time without --judges."
        )


def check_jury_estimate_options(args) -> None:
    """Refuse the options of one judge's closed forms that ``estimate --judges`` has no use for.

    The closed forms of several judges estimate the population θ of every (system, stratum)
    group from that group's verdict patterns alone (each judge's errors per group).
    """
    given = [
        flag
        for flag, on in (
            ("--estimand test-set", getattr(args, "estimand", "population") != "population"),
            (
                f"--calibration-design {getattr(args, 'calibration_design', 'own')}",
                getattr(args, "calibration_design", "own") != "own",
            ),
        )
        if on
    ]
    if given:
        raise UsageError(
            f"{', '.join(given)} cannot be combined with --judges: the closed forms of several "
            "judges estimate the population θ of every (system, stratum) group from its own "
            "verdict patterns (each judge's errors per group). Drop the option; the joint "
            "model 'bayesjudge fit --judges ... --calibration-model shared' pools the judges' "
            "errors over the groups."
        )


def jury_prior_options(args) -> list[str]:
    """Return the prior options given on the command line, which the jury paths refuse.

    The joint model of several judges is fitted (by ``fit`` and ``report``) with its default
    priors; the one-judge options ``--prior-*`` and ``--judge-better-than-chance`` do not map
    onto it and are refused by name rather than ignored.

    Examples
    --------
    >>> from argparse import Namespace
    >>> jury_prior_options(Namespace(prior_theta=(2.0,), judge_better_than_chance=True))
    ['--prior-theta', '--judge-better-than-chance']
    """
    given = given_prior_options(args)
    given += [f for a, f in (("prior_q0", "--prior-q0"), ("prior_q1", "--prior-q1"))
              if getattr(args, a, None) is not None]  # fmt: skip
    if getattr(args, "judge_better_than_chance", False):
        given.append("--judge-better-than-chance")
    return given


def covariate_names(args) -> list[str]:
    """Return the --covariates columns, refusing an empty name."""
    names = [c.strip() for c in args.covariates.split(",")]
    if any(not c for c in names):
        raise UsageError(
            f"--covariates {terminal_safe(args.covariates)} has an empty column name; give "
            "comma-separated column names, e.g. --covariates length,position."
        )
    return names


def theta_covariate_names(args) -> list[str] | None:
    """Return the --theta-covariates columns (None without), refusing misuse."""
    text = getattr(args, "theta_covariates", None)
    if text is None:
        return None
    names = [c.strip() for c in text.split(",")]
    if any(not c for c in names):
        raise UsageError(
            f"--theta-covariates {terminal_safe(text)} has an empty column name; give "
            "comma-separated column names, e.g. --theta-covariates length_diff."
        )
    return names


def read_jury_items(args) -> JuryItems:
    """Read the --test (and --calibration) verdict rows with their --covariates."""
    check_jury_options(args)
    return JuryItems.from_frames(
        args.test, args.calibration, covariates=covariate_names(args), positive=args.positive,
        theta_covariates=theta_covariate_names(args), **_table_roles(args),
    )  # fmt: skip


def _run_covariates(args) -> int:
    if args.method is not None:
        raise UsageError(
            "--covariates fits the covariate model (Dawid–Skene with q0, q1 logistic in the "
            "covariates); drop --method."
        )
    items = read_jury_items(args)
    result = jury_covariate_estimate(items, alpha=args.alpha)
    ci = ci_label(args.alpha)
    theta = [
        {
            "system": s,
            "stratum": r,
            "estimate": float(result["estimate"].sel(system=s, stratum=r)),
            "lower": float(result["ci"].sel(system=s, stratum=r, ci_bound="lower")),
            "upper": float(result["ci"].sel(system=s, stratum=r, ci_bound="upper")),
        }
        for s in items.systems
        for r in items.strata
    ]
    judges = result[["q0", "q1"]].to_dataframe().reset_index()
    slopes = [
        {"theta_covariate": c, "estimate": float(result["theta_coef"].sel(theta_covariate=c)),
         "se": float(result["theta_coef_se"].sel(theta_covariate=c)),
         "lower": float(result["theta_coef_ci"].sel(theta_covariate=c, ci_bound="lower")),
         "upper": float(result["theta_coef_ci"].sel(theta_covariate=c, ci_bound="upper"))}
        for c in items.theta_covariate_names
    ]  # fmt: skip
    if args.json:
        payload = {
            "settings": {k: jsonable(v) for k, v in result.attrs.items()},
            "judges": [jsonable(j) for j in items.judges],
            "results": [{k: jsonable(v) for k, v in row.items()} for row in theta],
            "judge_quality": [
                {k: jsonable(v) for k, v in row.items()} for row in judges.to_dict(orient="records")
            ],
            "theta_slopes": [{k: jsonable(v) for k, v in row.items()} for row in slopes],
        }
        print(json.dumps(payload, indent=2))
        return 0
    frame = pd.DataFrame(theta)
    print(
        f"judges ({len(items.judges)}): {', '.join(label(j) for j in items.judges)}\n"
        f"labelling design: {items.design}; method: covariate-dawid-skene (q0, q1 logistic in "
        f"{', '.join(label(c) for c in items.covariate_names)})"
    )
    print(
        pd.DataFrame(
            {
                "system": frame["system"].map(label),
                "stratum": frame["stratum"].map(label),
                "estimate": frame["estimate"].map(fmt_number),
                ci: intervals(frame["lower"], frame["upper"]),
            }
        ).to_string(index=False)
    )
    if slopes:
        print(
            f"\nθ logistic in {', '.join(label(c) for c in items.theta_covariate_names)} "
            f"(θ averaged over {result.attrs['theta_over']}); slope per SD:"
        )
        for row in slopes:
            print(f"  {label(row['theta_covariate'])}: {fmt_number(row['estimate'])} "
                  f"{ci} {intervals([row['lower']], [row['upper']])[0]}")  # fmt: skip
    print("\njudge quality at each covariate's low and high value (others at their mean):")
    judges["judge"] = judges["judge"].map(label)
    judges["covariate"] = judges["covariate"].map(label)
    for q in ("q0", "q1"):
        judges[q] = judges[q].map(fmt_number)
    print(judges.to_string(index=False))
    return 0


def _table_roles(args) -> dict:
    """Return the reader arguments every table of several judges takes from the command line."""
    return {
        "judges": args.judges,
        "item": args.item,
        "judge": args.judge,
        "human": args.human,
        "system": args.system,
        "stratum": args.stratum,
        "design": getattr(args, "design", None),
    }


@contextlib.contextmanager
def _warnings_in_cli_words():
    """Re-issue the readers' warnings with the option ``--design random`` for Python's argument."""
    caught: list = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
    finally:
        for w in caught:
            message = w.message
            if isinstance(message, Warning) and "design='random'" in str(message):
                text = str(message).replace("design='random'", "--design random")
                with contextlib.suppress(TypeError):  # a class that takes other arguments
                    message = type(message)(text)
            warnings.warn_explicit(message, w.category, w.filename, w.lineno)


def read_jury_counts(args) -> JuryCounts | CategoricalJuryCounts:
    """Count the --test (and --calibration) tables of several judges (K with --categories)."""
    check_jury_options(args)
    roles = _table_roles(args)
    if getattr(args, "categories", None) is not None:
        with _warnings_in_cli_words():
            return CategoricalJuryCounts.from_frames(
                args.test, args.calibration, categories=args.categories,
                ordered=bool(getattr(args, "ordered", False)), **roles,
            )  # fmt: skip
    try:
        with _warnings_in_cli_words():
            return JuryCounts.from_frames(
                args.test, args.calibration, positive=args.positive, **roles
            )
    except ValueError as err:
        if "more than two kinds of verdicts" not in str(err):
            raise
        raise UsageError(
            f"{err} On the command line: name the categories in order with --categories "
            "(e.g. --categories A,tie,B) to read them as K categories."
        ) from None


def _rows(result, counts: JuryCounts) -> pd.DataFrame:
    rows = []
    per_judge = "judge" in result["estimate"].dims
    for s in counts.systems:
        for r in counts.strata:
            for j in counts.judges if per_judge else [None]:
                sel = {"system": s, "stratum": r} | ({"judge": j} if per_judge else {})
                one = result.sel(sel)
                rows.append(
                    {
                        "system": s,
                        "stratum": r,
                        **({"judge": j} if per_judge else {}),
                        "estimate": float(one["estimate"]),
                        "lower": float(one["ci"].sel(ci_bound="lower")),
                        "upper": float(one["ci"].sel(ci_bound="upper")),
                        "test_items": int(counts.test.sel(system=s, stratum=r).sum()),
                        "labelled_items": int(counts.labelled.sel(system=s, stratum=r).sum()),
                    }
                )
    return pd.DataFrame(rows)


def plan_budgets(text: str) -> list[int]:
    """Parse ``--plan BUDGETS`` (comma-separated whole numbers ≥ 2) or raise a UsageError.

    A budget given twice is refused: the plan has one row per budget and would silently
    drop the repeat.

    Examples
    --------
    >>> plan_budgets("20, 40,80")
    [20, 40, 80]
    """
    parts = [p.strip() for p in text.split(",")]
    if not all(p.isdigit() and int(p) >= 2 for p in parts):
        raise UsageError(
            f"--plan {terminal_safe(text)}: give comma-separated label budgets, whole numbers of "
            "at least 2 written in digits, e.g. --plan 20,40,80."
        )
    budgets = [int(p) for p in parts]
    repeated = sorted({b for b in budgets if budgets.count(b) > 1})
    if repeated:
        raise UsageError(
            f"--plan {terminal_safe(text)}: the budget(s) {', '.join(map(str, repeated))} are "
            "given more than once; give each label budget once, e.g. --plan 20,40,80."
        )
    return budgets


def plan_usage_error(err: ValueError, text: str) -> UsageError:
    """Return the error of ``jury_plan`` in the command line's words (``--plan``, ``--plan-items``).

    Examples
    --------
    >>> str(plan_usage_error(ValueError("budgets must be at least K = 3 labelled items"), "2"))
    '--plan 2: budgets must be at least K = 3 labelled items'
    """
    message = str(err).replace("n=<", "--plan-items <")
    if message.startswith("budgets "):
        message = f"--plan {terminal_safe(text)}: {message}"
    return UsageError(message)


def _run_plan(args) -> int:
    """``estimate --judges COL --plan BUDGETS``: the narrowest jury per label budget."""
    if args.method is not None or getattr(args, "covariates", None):
        raise UsageError(
            "--plan plans the Dawid–Skene interval of every jury; drop --method and --covariates."
        )
    budgets = plan_budgets(args.plan)
    counts = read_jury_counts(args)
    allocation = "proportional" if counts.design == "random" else "optimal"
    try:
        plan = jury_plan(
            counts, budgets, n=args.plan_items, allocation=allocation, alpha=args.alpha
        )
    except ValueError as err:
        raise plan_usage_error(err, args.plan) from None
    rows = []
    for s in counts.systems:
        for r in counts.strata:
            for b in plan["budget"].values:
                one = plan.sel(system=s, stratum=r, budget=b)
                best = str(one["best_jury"].values)
                single = str(one["best_single"].values)
                rows.append(
                    {
                        "system": s,
                        "stratum": r,
                        "budget": int(b),
                        "best_jury": best,
                        "width": float(one["width"].sel(jury=best)) if best else np.nan,
                        "m1": float(one["m1"].sel(jury=best)) if best else np.nan,
                        "best_single_judge": single,
                        "single_width": float(one["width"].sel(jury=single)) if single else np.nan,
                        "ratio": float(one["ratio"]),
                    }
                )
    frame = pd.DataFrame(rows)
    if args.json:
        payload = {
            "settings": {k: jsonable(v) for k, v in plan.attrs.items()},
            "judges": [jsonable(j) for j in counts.judges],
            "plan": [{k: jsonable(v) for k, v in row.items()} for row in frame.to_dict("records")],
            "widths": {
                str(j): plan["width"].sel(jury=j).values.tolist() for j in plan["jury"].values
            },
        }
        print(json.dumps(payload, indent=2))
        return 0
    print(
        f"judges ({len(counts.judges)}): {', '.join(label(j) for j in counts.judges)}\n"
        f"plan: planned width of the {1 - args.alpha:.0%} Dawid–Skene interval per label budget "
        f"({allocation} split of each budget; these tables are the pilot). Asymptotic: "
        f"check coverage by simulation for small budgets, and dependence with 'fit --judges'."
    )
    shown = pd.DataFrame(
        {
            "system": frame["system"].map(label),
            "stratum": frame["stratum"].map(label),
            "labels": frame["budget"],
            "narrowest jury": frame["best_jury"].map(label),
            "width": frame["width"].map(fmt_number),
            "of them correct": frame["m1"].map(lambda v: "" if np.isnan(v) else f"{v:.0f}"),
            "best single judge": frame["best_single_judge"].map(label),
            "its width": frame["single_width"].map(fmt_number),
            "ratio": frame["ratio"].map(fmt_number),
        }
    )
    print(shown.to_string(index=False))
    return 0


def _run_categorical_jury(args, counts: CategoricalJuryCounts) -> int:
    """``estimate --judges COL --categories ...``: every category's share (and the score)."""
    if args.method is not None and args.method not in CATEGORICAL_JURY_METHODS:
        raise UsageError(
            f"--method {args.method} is not a method of several judges' K-category verdicts; "
            f"choose one of {', '.join(CATEGORICAL_JURY_METHODS)} (default dawid-skene)."
        )
    scores = score_map(args.scores, counts.categories)
    with _estimate_errors_in_cli_words(args):
        result = estimate(
            counts, method=args.method or "dawid-skene", alpha=args.alpha, random_seed=args.seed,
            n_resamples=args.n_resamples, scores=scores,
        )  # fmt: skip
    per_judge = "judge" in result["estimate"].dims
    rows, score_rows = [], []
    for index in np.ndindex(*(result["estimate"].sizes[d] for d in result["estimate"].dims)):
        sel = dict(zip(result["estimate"].dims, index, strict=True))
        one = result.isel(sel)
        row = {d: one[d].values.item() for d in result["estimate"].dims}
        ci = one["ci"]
        rows.append(row | {
            "estimate": float(one["estimate"]),
            "lower": float(ci.sel(ci_bound="lower")),
            "upper": float(ci.sel(ci_bound="upper")),
        })  # fmt: skip
        if scores is not None and sel.get("category", 0) == 0:
            sci = one["score_ci"]
            score_rows.append({d: v for d, v in row.items() if d != "category"} | {
                "score": float(one["score"]),
                "lower": float(sci.sel(ci_bound="lower")),
                "upper": float(sci.sel(ci_bound="upper")),
            })  # fmt: skip
    if args.json:
        payload = {
            "settings": {k: jsonable(v) for k, v in result.attrs.items()}
            | {"categories": [jsonable(c) for c in counts.categories]},
            "judges": [jsonable(j) for j in counts.judges],
            "results": [{k: jsonable(v) for k, v in r.items()} for r in rows],
            "scores": [{k: jsonable(v) for k, v in r.items()} for r in score_rows],
        }
        print(json.dumps(payload, indent=2, allow_nan=False))
        return 0
    ci = ci_label(args.alpha)
    frame = pd.DataFrame(rows)
    print(
        f"judges ({len(counts.judges)}): {', '.join(label(j) for j in counts.judges)}\n"
        f"{describe_categories(counts)}\nlabelling design: {counts.design}; method: "
        f"{result.attrs['method']} ({result.attrs['ci_kind']})"
    )
    columns = {d: frame[d].map(label) for d in ("system", "stratum", "judge") if d in frame}
    columns |= {
        "category": frame["category"].map(label),
        "estimate": frame["estimate"].map(fmt_number),
        ci: intervals(frame["lower"], frame["upper"]),
    }
    print("\nShare of each true category" + (", each judge alone" if per_judge else ""))
    print(pd.DataFrame(columns).to_string(index=False))
    if score_rows:
        sf = pd.DataFrame(score_rows)
        columns = {d: sf[d].map(label) for d in ("system", "stratum", "judge") if d in sf}
        columns |= {"score": sf["score"].map(fmt_number), ci: intervals(sf["lower"], sf["upper"])}
        print("\nMean score")
        print(pd.DataFrame(columns).to_string(index=False))
    return 0


@contextlib.contextmanager
def _estimate_errors_in_cli_words(args):
    """Name ``--n-resamples`` where the estimator's error names its ``n_resamples`` argument."""
    try:
        yield
    except ValueError as err:
        found = re.search(r"n_resamples must be a whole number of at least (\d+)", str(err))
        if found is None:
            raise
        why = str(err).split("; got ", 1)[-1].partition(". ")[2]
        raise UsageError(
            f"--n-resamples {args.n_resamples}: the bootstrap of several judges needs at least "
            f"{found.group(1)} resamples (default 10000). {why}".rstrip()
        ) from None


def run_jury_estimate(args) -> int:
    """``bayesjudge estimate --judges COLUMN``: the jury's closed forms per group."""
    if getattr(args, "plan", None) is not None:
        return _run_plan(args)
    if getattr(args, "plan_items", None) is not None:
        raise UsageError("--plan-items sets the test items of --plan; give --plan BUDGETS too.")
    if getattr(args, "covariates", None):
        return _run_covariates(args)
    if getattr(args, "categories", None) is not None:
        return _run_categorical_jury(args, read_jury_counts(args))
    if args.method in set(CATEGORICAL_JURY_METHODS) - set(JURY_ESTIMATE_METHODS):
        raise UsageError(
            f"--method {args.method} is a method of several judges' K-category verdicts: name "
            "the categories in order with --categories (e.g. --categories A,tie,B), or choose "
            f"one of {', '.join(JURY_ESTIMATE_METHODS)} for correct/incorrect verdicts."
        )
    if args.method is not None and args.method not in JURY_ESTIMATE_METHODS:
        raise UsageError(
            f"--method {args.method} is a method of one judge; with --judges choose one of "
            f"{', '.join(JURY_ESTIMATE_METHODS)} (default dawid-skene)."
        )
    counts = read_jury_counts(args)
    method = args.method or "dawid-skene"
    if method not in ("majority",) and int(counts.labelled.sum()) == 0 and len(counts.judges) < 3:
        raise UsageError(
            "With fewer than three judges the latent-truth model needs human-labelled items: "
            "pass --calibration, or a --test table with the --human column filled for the "
            "labelled rows (or use --method majority, which estimates P(majority says "
            "correct), not θ)."
        )
    with _estimate_errors_in_cli_words(args):
        result = estimate(
            counts,
            method=method,
            alpha=args.alpha,
            random_seed=args.seed,
            n_resamples=args.n_resamples,
        )
    frame = _rows(result, counts)
    if args.json:
        payload = {
            "settings": {k: jsonable(v) for k, v in result.attrs.items()},
            "judges": [jsonable(j) for j in counts.judges],
            "results": [
                {key: jsonable(value) for key, value in row.items()}
                for row in frame.to_dict(orient="records")
            ],
        }
        print(json.dumps(payload, indent=2))
        return 0
    ci = ci_label(args.alpha)
    columns = {"system": frame["system"].map(label), "stratum": frame["stratum"].map(label)}
    if "judge" in frame:
        columns["judge"] = frame["judge"].map(label)
    columns |= {
        "test items": frame["test_items"],
        "labelled": frame["labelled_items"],
        "estimate": frame["estimate"].map(fmt_number),
        ci: intervals(frame["lower"], frame["upper"]),
    }
    print(
        f"judges ({len(counts.judges)}): {', '.join(label(j) for j in counts.judges)}\n"
        f"labelling design: {counts.design}; method: {method}"
        + (" (latent truth, conditionally independent judges)" if "dawid" in method else "")
    )
    print(pd.DataFrame(columns).to_string(index=False))
    return 0


def add_jury_model_options(parser) -> None:
    """Add the options of the joint model of several judges (``fit``/``report``)."""
    parser.add_argument(
        "--dependence",
        choices=["none", "item"],
        default="none",
        help="with --judges: conditionally independent judges (none, default) or a shared item "
        "effect on every judge (item), for judges that err on the same items",
    )
    parser.add_argument(
        "--pool-judges",
        action="store_true",
        help="with --judges: draw the judges' q0, q1 (K categories: confusion rows) from a "
        "common population (partial pooling)",
    )


def _jury_only_options(args) -> None:
    """Refuse the joint model's options without --judges, and one judge's options with it."""
    jury = {"--dependence": args.dependence != "none", "--pool-judges": args.pool_judges}
    if args.judges is None:
        given = [flag for flag, on in jury.items() if on]
        if given:
            raise UsageError(
                f"{', '.join(given)} belong to several judges' verdicts: name the judge column "
                "with --judges (and the item ids with --item)."
            )
        return
    priors = jury_prior_options(args)
    if priors:
        raise UsageError(
            f"{', '.join(priors)} cannot be combined with --judges: the joint model of several "
            "judges is fitted with its default priors. Drop the option, or fit one judge at a "
            "time without --judges."
        )
    single = {
        "--pool-over": getattr(args, "pool_over", None) is not None,
        "--aggregate": getattr(args, "aggregate", "auto") not in ("auto", None),
        "--estimand": getattr(args, "estimand", "population") != "population",
        "--confusion": getattr(args, "confusion", "free") != "free",
        "--method exact": getattr(args, "method", None) == "exact",
        "--sampler pymc": getattr(args, "sampler", "nutpie") != "nutpie",
    }
    given = [flag for flag, on in single.items() if on]
    if given:
        raise UsageError(
            f"{', '.join(given)} cannot be combined with --judges: the joint model of several "
            "judges is sampled with nutpie and takes --calibration-model, --dependence and "
            "--pool-judges."
        )
    if getattr(args, "covariates", None):
        clash = {
            "--dependence item": args.dependence != "none",
            "--calibration-model": getattr(args, "calibration_model", None) is not None,
        }
        given = [flag for flag, on in clash.items() if on]
        if given:
            raise UsageError(
                f"{', '.join(given)} cannot be combined with --covariates: the covariate model "
                "shares each judge's coefficients across all groups and has no item effect. "
                "Drop the option, or drop --covariates for the joint model."
            )


def fit_jury_from_args(args, seed: int):
    """Read the tables and fit the joint model of several judges (imports PyMC)."""
    _jury_only_options(args)
    if getattr(args, "covariates", None):
        return bayesian("jury_covariates").fit_jury_covariates(
            read_jury_items(args), pool_judges=args.pool_judges, draws=args.draws,
            tune=args.tune, chains=args.chains, random_seed=seed,
            target_accept=getattr(args, "target_accept", None),
            progressbar=show_progress_for(args),
        )  # fmt: skip
    counts = read_jury_counts(args)
    if len(counts.judges) < 2:
        raise UsageError(
            f"--judges {terminal_safe(args.judges)}: the tables hold {len(counts.judges)} "
            "judge(s); the joint model of several judges needs at least 2. For one judge, fit "
            "without --judges: the rows are then read as that judge's verdicts."
        )
    if isinstance(counts, CategoricalJuryCounts):
        return bayesian("categorical_jury").fit_categorical_jury(
            counts,
            calibration=getattr(args, "calibration_model", None) or "shared",
            pool_judges=args.pool_judges,
            dependence=None if args.dependence == "none" else args.dependence,
            scores=score_map(getattr(args, "scores", None), counts.categories),
            draws=args.draws, tune=args.tune, chains=args.chains, random_seed=seed,
            target_accept=getattr(args, "target_accept", None),
            progressbar=show_progress_for(args),
        )  # fmt: skip
    models = bayesian("jury")
    return models.fit_jury(
        counts,
        calibration=getattr(args, "calibration_model", None)
        or getattr(args, "calibration_design", None)
        or "shared",
        pool_judges=args.pool_judges,
        dependence=None if args.dependence == "none" else args.dependence,
        draws=args.draws,
        tune=args.tune,
        chains=args.chains,
        random_seed=seed,
        target_accept=getattr(args, "target_accept", None),
        progressbar=show_progress_for(args),
    )


def run_jury_fit(args, save) -> int:
    """``bayesjudge fit --judges COLUMN``: the joint model's θ and every judge's q0, q1."""
    seed = args.seed if args.seed is not None else int(np.random.default_rng().integers(2**31))
    result = fit_jury_from_args(args, seed)
    summary = result.summary(ci_prob=args.ci_prob)
    if save is not None:
        result.save(save)
        WRITTEN.append(str(save))
    if args.format == "csv":  # the tidy summary, before the display's check and tables
        print(tidy_jury_summary(summary).to_csv(index=False), end="")
        return 0
    if getattr(args, "covariates", None):
        return _print_covariate_fit(result, summary, seed, save)
    if isinstance(result.counts, CategoricalJuryCounts):
        return _print_categorical_fit(args, result, summary, seed, save)
    check = result.ppc(random_seed=seed)
    theta = _interval_frame(summary, "theta", ["system", "stratum"], name="θ")
    judges = pd.concat(
        [_interval_frame(summary, q, ["judge", "system", "stratum"], name=q) for q in ("q0", "q1")],
        axis=1,
    )
    judges = judges.loc[:, ~judges.columns.duplicated()]
    config = result.config
    print(
        f"joint model of {len(result.counts.judges)} judges: calibration "
        f"{config['calibration']}, dependence {config.get('dependence') or 'none'}, "
        f"pool_judges {config.get('pool_judges')}; seed {seed}"
    )
    print(theta.to_string(index=False))
    print()
    print(judges.to_string(index=False))
    print()
    print(f"posterior predictive check of the pairwise agreement: {check.message}")
    if save is not None:
        print(f"wrote {terminal_safe(save)}")
    return 0


def _print_covariate_fit(result, summary, seed: int, save) -> int:
    """Print the Bayesian covariate model: θ per group, q0 and q1 at each covariate's range."""
    theta = _interval_frame(summary, "theta", ["system", "stratum"], name="θ")
    dims = ["judge", "covariate", "level"]
    judges = pd.concat([_interval_frame(summary, q, dims, name=q) for q in ("q0", "q1")], axis=1)
    judges = judges.loc[:, ~judges.columns.duplicated()]
    names = ", ".join(label(c) for c in summary.attrs.get("covariates", []))
    print(
        f"covariate model of {len(result.items.judges)} judges (q0, q1 logistic in {names}), "
        f"pool_judges {result.config.get('pool_judges')}; seed {seed}"
    )
    print(theta.to_string(index=False))
    if "theta_slope" in summary:
        print("\nθ logistic in the theta covariates (slope per SD):")
        print(_interval_frame(summary, "theta_slope", ["theta_covariate"], name="δ")
              .to_string(index=False))  # fmt: skip
    print("\njudge quality at each covariate's low and high value (others at their mean):")
    print(judges.to_string(index=False))
    if save is not None:
        print(f"wrote {terminal_safe(save)}")
    return 0


def _print_categorical_fit(args, result, summary, seed: int, save) -> int:
    """Print the K-category joint model: every category's share, the score, the check."""
    theta = _interval_frame(summary, "theta", ["system", "stratum", "category"], name="θ")
    counts = result.counts
    config = result.config
    print(
        f"joint model of {len(counts.judges)} judges' K-category verdicts: calibration "
        f"{config['calibration']}, dependence {config.get('dependence') or 'none'}, "
        f"pool_judges {config.get('pool_judges', False)}; {describe_categories(counts)}; "
        f"seed {seed}"
    )
    print(theta.to_string(index=False))
    if "score" in summary:
        print()
        print(_interval_frame(summary, "score", ["system", "stratum"], name="score").to_string(
            index=False
        ))  # fmt: skip
    check = result.ppc(random_seed=seed)
    print(f"\nposterior predictive check of the pairwise agreement: {check.message}")
    if save is not None:
        print(f"wrote {terminal_safe(save)}")
    return 0


def _interval_frame(summary, var: str, dims: list[str], name: str = "estimate") -> pd.DataFrame:
    """One row per coordinate: the posterior mean and its interval as text."""
    mean = summary[var]
    ci = summary[f"{var}_ci"]
    rows = []
    keep = [d for d in dims if d in mean.dims]
    for index in np.ndindex(*(mean.sizes[d] for d in keep)):
        sel = {d: i for d, i in zip(keep, index, strict=True)}
        row = {d: label(mean[d].values[i]) for d, i in sel.items()}
        one = ci.isel(sel)
        row[name] = fmt_number(float(mean.isel(sel)))
        row[f"{name} {summary.attrs['ci_prob']:.0%} interval"] = intervals(
            [float(one.sel(ci_bound="lower"))], [float(one.sel(ci_bound="upper"))]
        )[0]
        rows.append(row)
    return pd.DataFrame(rows)


#: The statistics of a tidy summary row, in the order of the one-judge ``fit --format csv``.
_TIDY_STATS = ("mean", "sd", "median", "eti_lower", "eti_upper", "ess_bulk", "r_hat")
#: Coordinate columns first, in this order; any other coordinate follows them.
_TIDY_FIRST = ("system", "stratum", "judge", "category", "truth", "verdict")


def tidy_jury_summary(summary: xr.Dataset) -> pd.DataFrame:
    """Return the jury fit's ``summary()`` as one tidy table (``fit --judges --format csv``).

    One row per variable and coordinate: ``variable``, the coordinates (``system``,
    ``stratum``, ``judge``, ``category``, ``truth``, ``verdict``, ... where the variable has
    them, empty elsewhere) and ``mean``, ``sd``, ``median``, ``eti_lower``, ``eti_upper``,
    ``ess_bulk``, ``r_hat`` at full precision, as the one-judge ``fit --format csv``.

    Examples
    --------
    >>> import xarray as xr
    >>> ci = xr.DataArray([[0.2, 0.6]], dims=("system", "ci_bound"),
    ...                   coords={"system": ["s"], "ci_bound": ["lower", "upper"]})
    >>> one = xr.DataArray([0.4], dims="system", coords={"system": ["s"]})
    >>> summary = xr.Dataset({"theta": one, "theta_sd": one / 4, "theta_median": one,
    ...                       "theta_ci": ci, "theta_ess_bulk": one * 1000, "theta_r_hat": one})
    >>> tidy_jury_summary(summary)[["variable", "system", "mean", "eti_upper"]]
      variable system  mean  eti_upper
    0    theta      s   0.4        0.6
    """
    frames = []
    for name in summary.data_vars:
        if f"{name}_ci" not in summary.data_vars:
            continue  # a statistic of another variable (theta_sd, ...), or no interval
        ci = summary[f"{name}_ci"]
        columns = xr.Dataset({
            "mean": summary[name], "sd": summary[f"{name}_sd"],
            "median": summary[f"{name}_median"],
            "eti_lower": ci.sel(ci_bound="lower", drop=True),
            "eti_upper": ci.sel(ci_bound="upper", drop=True),
            "ess_bulk": summary[f"{name}_ess_bulk"], "r_hat": summary[f"{name}_r_hat"],
        })  # fmt: skip
        if columns["mean"].ndim == 0:
            frame = pd.DataFrame([{k: float(v) for k, v in columns.data_vars.items()}])
        else:
            frame = columns.to_dataframe().reset_index()
        frame.insert(0, "variable", str(name))
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    coords = [c for c in frame.columns if c != "variable" and c not in _TIDY_STATS]
    first = [c for c in _TIDY_FIRST if c in coords]
    return frame[["variable", *first, *[c for c in coords if c not in first], *_TIDY_STATS]]
