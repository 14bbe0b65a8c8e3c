"""``bayesjudge estimate``: closed-form estimates of true accuracy from verdict tables."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from bayesjudge._text import fmt_number
from bayesjudge.categorical_estimate import CATEGORICAL_METHODS
from bayesjudge.categorical_jury_estimate import CATEGORICAL_JURY_METHODS
from bayesjudge.cli._categorical import (
    add_category_options,
    check_labelled,
    describe_categories,
    describe_scores,
    read_table_counts,
    score_map,
)
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
    result_frame,
)
from bayesjudge.cli._jury import (
    check_jury_estimate_options,
    plan_budgets,
    plan_usage_error,
    read_jury_counts,
    run_jury_estimate,
)
from bayesjudge.data import CategoricalCounts
from bayesjudge.estimate import (
    CLUSTER_METHODS,
    JURY_ESTIMATE_METHODS,
    METHODS,
    OWN_LABELS_METHODS,
    estimate,
)
from bayesjudge.jury_estimate import jury_plan

#: The methods of K-category counts that binary counts do not have (``bootstrap`` is both's).
_CATEGORICAL_ONLY = [m for m in CATEGORICAL_METHODS if m not in METHODS]
#: The methods of several judges' verdict patterns (``--judges``).
_JURY_ONLY = [
    m
    for m in dict.fromkeys([*JURY_ESTIMATE_METHODS, *CATEGORICAL_JURY_METHODS])
    if m not in (*METHODS, *_CATEGORICAL_ONLY)
]


def add_parser(subparsers) -> None:
    """Add the ``estimate`` command to ``subparsers``."""
    est = subparsers.add_parser("estimate", help="estimate true accuracy from verdict tables")
    add_table_options(est)
    add_category_options(est)
    est.add_argument(
        "--method",
        default=None,
        choices=[*METHODS, *_CATEGORICAL_ONLY, *_JURY_ONLY],
        help="estimator (default: cluster-delta for repeated verdicts of an item (--repeats, "
        "a log's epochs), else the labelling design's: lang-reiczigel for a stratified "
        "calibration set, likelihood, the profile-likelihood interval, for a random one); "
        "cluster-delta and cluster-bootstrap treat the items, not the verdicts, as the units. "
        "K categories: delta (default; score-type delta-method interval), wald or bootstrap. "
        "Several judges (--judges): dawid-skene (default), dawid-skene-bootstrap, majority or "
        "per-judge; with --categories: dawid-skene, dawid-skene-bootstrap, plurality or "
        "per-judge",
    )
    est.add_argument(
        "--estimand",
        default="population",
        choices=["population", "test-set"],
        help="θ of the population the items were drawn from (default), or the share of "
        "truly correct answers among this evaluation's items",
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
    est.add_argument(
        "--seed", type=parse_seed, default=None, help="random seed of the (cluster) bootstrap"
    )
    est.add_argument(
        "--n-resamples", type=parse_int_at_least(1), default=10_000, help="bootstrap resamples"
    )
    est.add_argument(
        "--plan",
        default=None,
        metavar="BUDGETS",
        help="with --judges: instead of estimating, plan the human labels: for each "
        "comma-separated label budget (e.g. 20,40,80) the planned interval width of every jury "
        "(Dawid–Skene, from these tables as a pilot) and the narrowest; with --categories, "
        "the width of every category's share (of the --scores mean where given), the budget "
        "split over the true categories",
    )
    est.add_argument(
        "--plan-items",
        type=parse_int_at_least(1),
        default=None,
        help="with --plan: unlabelled test items to plan for (default: the tables' test items)",
    )
    est.add_argument("--json", action="store_true", help="print JSON instead of a table")
    est.set_defaults(func=run)


def _check_own_labels(args, counts) -> None:
    """Refuse --method likelihood / ppi++ without each group's own labelled items."""
    shared_over = tuple(counts.calibration_shared_over)
    if args.method not in OWN_LABELS_METHODS or not (
        args.calibration_design == "shared" or shared_over
    ):
        return
    why = (
        "--calibration-design shared pools the labelled items over the systems"
        if args.calibration_design == "shared"
        else "the calibration table has no "
        + " or ".join(f"{getattr(args, d, None) or d!r} column (--{d})" for d in shared_over)
        + f", so one labelled set serves every {' and every '.join(shared_over)}"
    )
    raise UsageError(
        f"--method {args.method} needs each group's own labelled items, but {why}: that "
        "set's human labels would count as evidence for every group's θ and pull each "
        "estimate toward the set's share. Give the calibration table the group column "
        "(each group's own labelled items), use --method lang-reiczigel (the default "
        "here), or 'bayesjudge fit', which models one shared set correctly."
    )


def run(args) -> int:
    """Estimate θ per (system, stratum) and print a table or JSON."""
    check_input_file("--test", args.test)
    check_input_file("--calibration", args.calibration)
    if args.judges is not None:
        check_jury_estimate_options(args)
    if args.judges is not None and args.plan is not None and args.categories is not None:
        return _run_categorical_plan(args)
    if args.judges is not None or args.covariates is not None:
        return run_jury_estimate(args)
    if args.plan is not None or args.plan_items is not None:
        raise UsageError(
            "--plan compares juries of several judges: name the judge column with --judges "
            "(and the item ids with --item). For one judge, 'bayesjudge allocate' plans the "
            "labels."
        )
    if args.method in _JURY_ONLY:
        raise UsageError(
            f"--method {args.method} combines several judges' verdicts: name the column of "
            "the judge of each row with --judges (and the item ids with --item)."
        )
    counts = read_table_counts(args)
    if isinstance(counts, CategoricalCounts):
        return _run_categorical(args, counts)
    if args.method in _CATEGORICAL_ONLY:
        raise UsageError(
            f"--method {args.method} is a method of K-category verdicts; these label columns "
            f"are read as correct/incorrect. Choose one of {', '.join(METHODS)}, or give "
            "--categories to read the labels as categories."
        )
    if args.method != "naive" and not _has_labels(counts):
        method = "" if args.method is None else f" for --method {args.method}"
        raise UsageError(
            f"--calibration is required{method} (the judge's errors are estimated from "
            "human-labelled items): pass a human-labelled CSV/Parquet file, a --test table "
            "with a --human column filled for the labelled rows, or use --method naive."
        )
    if counts.has_clusters and args.method not in (None, *CLUSTER_METHODS):
        raise UsageError(
            f"--method {args.method} counts every verdict as an independent item, but some "
            "items were judged several times (--repeats, or a log's epochs), and their verdicts "
            "are correlated: use --method cluster-delta (the default here) or cluster-bootstrap, "
            "which treat the items as the units; leave out --repeats to treat the verdicts as "
            "independent items on purpose."
        )
    _check_own_labels(args, counts)
    result = estimate(
        counts,
        method=args.method,
        alpha=args.alpha,
        random_seed=args.seed,
        calibration=args.calibration_design,
        n_resamples=args.n_resamples,
        estimand=args.estimand,
    )
    frame = result_frame(result).merge(_human_frame(result), on=["system", "stratum"])
    frame = frame.merge(counts.to_frame(), on=["system", "stratum"], how="left")
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
    ci = ci_label(args.alpha)
    columns = {
        "system": frame["system"].map(label),
        "stratum": frame["stratum"].map(label),
        "n": frame["n"],
        "m0": frame["m0"],
        "m1": frame["m1"],
        "estimate": frame["estimate"].map(fmt_number),
        ci: intervals(frame["lower"], frame["upper"]),
    }
    if counts.design == "random":  # the human-only baseline is an estimate of θ only here
        columns["human-only"] = frame["human_estimate"].map(fmt_number)
        columns[f"human-only {ci}"] = intervals(frame["human_lower"], frame["human_upper"])
    columns["Ĵ"] = frame["youden"].map(fmt_number)
    print(_header(args, counts, result))
    print(pd.DataFrame(columns).to_string(index=False))
    if counts.design == "random" and args.method != "naive" and args.estimand == "population":
        helps = _judge_helps(frame)
        if helps:
            print(helps)
    return 0


def _has_labels(counts) -> bool:
    """Whether the counts hold any human-labelled item (a calibration table or column)."""
    ds = counts.dataset
    return int(ds["m0"].sum() + ds["m1"].sum()) > 0


def _human_frame(result) -> pd.DataFrame:
    """Tidy the human-only baseline (``human_estimate``, ``human_ci``) per (system, stratum)."""
    ci = result["human_ci"].transpose("system", "stratum", "ci_bound")
    est = result["human_estimate"].transpose("system", "stratum")
    n_strata = result.sizes["stratum"]
    return pd.DataFrame(
        {
            "system": [str(v) for v in result["system"].values for _ in range(n_strata)],
            "stratum": [str(v) for v in result["stratum"].values] * result.sizes["system"],
            "human_estimate": est.values.ravel().astype(float),
            "human_lower": ci.values[..., 0].ravel().astype(float),
            "human_upper": ci.values[..., 1].ravel().astype(float),
        }
    )


def _header(args, counts, result) -> str:
    """Return the lines above the table: the labelling design, the method, the estimand."""
    attrs = result.attrs
    method = attrs.get("method", args.method)
    if args.method is not None:
        chosen = "chosen with --method"
    elif counts.has_clusters:
        chosen = "the default for repeated verdicts of an item; --method chooses another"
    else:
        chosen = f"the {counts.design} design's default; --method chooses another"
    design = (
        "random (humans labelled a random subset of the judged items; each item counted once)"
        if counts.design == "random"
        else "stratified (a calibration set sampled per human label, separate from the test items)"
    )
    return (
        f"labelling design: {design}\n"
        f"method: {method} ({attrs['ci_kind']}; {chosen}); estimand: "
        f"{attrs.get('estimand', args.estimand)}; calibration: {args.calibration_design}"
    )


def _judge_helps(frame: pd.DataFrame) -> str:
    """Say in how many groups the corrected interval is narrower than the human-only one.

    Empty where no group has both intervals (e.g. one labelled set shared by the groups).
    """
    width = (frame["upper"] - frame["lower"]).to_numpy(float)
    human = (frame["human_upper"] - frame["human_lower"]).to_numpy(float)
    known = (width == width) & (human == human)
    narrower = int((width[known] < human[known]).sum())
    if not known.any():
        return ""
    return (
        f"\nThe corrected interval is narrower than the human-only one (labelled items alone) in "
        f"{narrower} of {int(known.sum())} groups; where it is not, the judge adds no precision "
        "(Lee et al. Sec. 6): report the human-only estimate there."
    )


def _run_categorical(args, counts: CategoricalCounts) -> int:
    """Estimate every category's share (and the --scores mean) per group; print or JSON."""
    if args.method is not None and args.method not in CATEGORICAL_METHODS:
        raise UsageError(
            f"--method {args.method} estimates a binary accuracy; K-category verdicts take "
            f"--method {', '.join(CATEGORICAL_METHODS)} (default delta)."
        )
    if args.estimand != "population":
        raise UsageError(
            f"--estimand {args.estimand} is not available for K-category verdicts: only the "
            "population shares are estimated. Drop --estimand."
        )
    check_labelled(counts)
    scores = score_map(args.scores, counts.categories)
    result = estimate(
        counts,
        method=args.method,
        alpha=args.alpha,
        random_seed=args.seed,
        calibration=args.calibration_design,
        n_resamples=args.n_resamples,
        scores=scores,
    )
    shares, groups = _categorical_frames(counts, result)
    if args.json:
        settings = {k: jsonable(v) for k, v in result.attrs.items()}
        settings["categories"] = [jsonable(c) for c in counts.categories]
        settings["categories_source"] = counts.dataset.attrs.get("categories_source")
        settings["ordered"] = counts.ordered
        settings["scores"] = None if scores is None else [
            {"category": jsonable(c), "value": v} for c, v in scores.items()
        ]  # fmt: skip
        payload = {
            "settings": settings,
            "results": _records(shares),
            "groups": _records(groups),
        }
        print(json.dumps(payload, indent=2, allow_nan=False))
        return 0
    ci = ci_label(args.alpha)
    method = result.attrs["method"]
    chosen = "chosen with --method" if args.method else "the default; --method chooses another"
    print(
        f"labelling design: {_design_words(counts.design)}\n"
        f"{describe_categories(counts)}\n"
        f"method: {method} ({result.attrs['ci_kind']}; {chosen}); calibration: "
        f"{args.calibration_design}"
    )
    table = {
        "system": shares["system"].map(label),
        "stratum": shares["stratum"].map(label),
        "category": shares["category"].map(label),
        "verdicts": shares["verdicts"],
        "judge share": shares["p_hat"].map(fmt_number),
        "estimate": shares["estimate"].map(fmt_number),
        ci: intervals(shares["lower"], shares["upper"]),
    }
    print("\nShare of each true category, corrected for the judge's confusion")
    print(pd.DataFrame(table).to_string(index=False))
    table = {
        "system": groups["system"].map(label),
        "stratum": groups["stratum"].map(label),
        "n": groups["n"],
        "m": groups["m"],
        "σ_min": groups["sigma_min"].map(fmt_number),
    }
    title = (
        "\nGroups (n test items, m labelled items; σ_min: the judge's conditioning, |J| at K = 2)"
    )
    if scores is not None:
        table["score"] = groups["score"].map(fmt_number)
        table[ci] = intervals(groups["score_lower"], groups["score_upper"])
        title += f"\nMean score Σ value × share, with {describe_scores(scores)}"
    print(title)
    print(pd.DataFrame(table).to_string(index=False))
    return 0


def _design_words(design: str) -> str:
    if design == "random":
        return (
            "random (humans labelled a random subset of the judged items; each item counted once)"
        )
    return "stratified (a calibration set sampled per human label, separate from the test items)"


def _categorical_frames(counts: CategoricalCounts, result) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tidy rows per (system, stratum, category) and per (system, stratum) of the estimate."""
    dims = ("system", "stratum")
    est = result["estimate"].transpose(*dims, "category").values
    ci = result["ci"].transpose(*dims, "category", "ci_bound").values
    p_hat = result["p_hat"].transpose(*dims, "category").values
    test = counts.test.transpose(*dims, "category").values
    cal = counts.calibration.transpose(*dims, "truth", "verdict").values
    shares, groups = [], []
    for i, system in enumerate(result["system"].values.tolist()):
        for j, stratum in enumerate(result["stratum"].values.tolist()):
            for c, category in enumerate(counts.categories):
                shares.append({
                    "system": system, "stratum": stratum, "category": category,
                    "verdicts": int(test[i, j, c]), "p_hat": float(p_hat[i, j, c]),
                    "estimate": float(est[i, j, c]), "lower": float(ci[i, j, c, 0]),
                    "upper": float(ci[i, j, c, 1]),
                })  # fmt: skip
            row = {
                "system": system, "stratum": stratum, "n": int(test[i, j].sum()),
                "m": int(cal[i, j].sum()),
                "projected": bool(result["projected"].values[i, j]),
                "sigma_min": float(result["sigma_min"].values[i, j]),
                "amplification": float(result["amplification"].values[i, j]),
            }  # fmt: skip
            if "score" in result:
                row["score"] = float(result["score"].values[i, j])
                row["score_lower"], row["score_upper"] = (
                    float(x) for x in result["score_ci"].values[i, j]
                )
            groups.append(row)
    return pd.DataFrame(shares), pd.DataFrame(groups)


def _records(frame: pd.DataFrame) -> list[dict]:
    return [
        {key: jsonable(value) for key, value in row.items()}
        for row in frame.to_dict(orient="records")
    ]


def _split_text(m, categories) -> str:
    """Return the labelled items of each true category, as ``A 10, tie 5, B 15``."""
    if np.isnan(m).any():
        return ""
    return ", ".join(f"{label(c)} {v:.0f}" for c, v in zip(categories, m, strict=True))


def _categorical_plan_rows(plan, counts) -> list[dict]:
    rows = []
    for s in counts.systems:
        for r in counts.strata:
            for b in plan["budget"].values:
                one = plan.sel(system=s, stratum=r, budget=b)
                best, single = str(one["best_jury"].values), str(one["best_single"].values)
                rows.append({
                    "system": s, "stratum": r, "budget": int(b), "best_jury": best,
                    "width": float(one["target_width"].sel(jury=best)) if best else np.nan,
                    "split": one["m"].sel(jury=best).values.tolist() if best else [],
                    "best_single_judge": single,
                    "single_width": (
                        float(one["target_width"].sel(jury=single)) if single else np.nan
                    ),
                    "ratio": float(one["ratio"]),
                })  # fmt: skip
    return rows


def _run_categorical_plan(args) -> int:
    """``estimate --judges COL --categories ... --plan BUDGETS``: the K-category jury plan."""
    if args.method is not None or args.covariates is not None:
        raise UsageError(
            "--plan plans the Dawid–Skene interval of every jury; drop --method and --covariates."
        )
    budgets = plan_budgets(args.plan)
    counts = read_jury_counts(args)
    scores = score_map(args.scores, counts.categories)
    allocation = "proportional" if counts.design == "random" else "optimal"
    try:
        plan = jury_plan(
            counts, budgets, n=args.plan_items, allocation=allocation, alpha=args.alpha,
            scores=scores,
        )  # fmt: skip
    except ValueError as err:
        raise plan_usage_error(err, args.plan) from None
    rows = _categorical_plan_rows(plan, counts)
    if args.json:
        payload = {
            "settings": {k: jsonable(v) for k, v in plan.attrs.items()}
            | {"categories": [jsonable(c) for c in counts.categories]},
            "judges": [jsonable(j) for j in counts.judges],
            "plan": [{k: jsonable(v) for k, v in row.items()} for row in rows],
            "widths": {
                str(j): plan["width"].sel(jury=j).values.tolist() for j in plan["jury"].values
            },
            "target_widths": {
                str(j): plan["target_width"].sel(jury=j).values.tolist()
                for j in plan["jury"].values
            },
        }
        print(json.dumps(payload, indent=2))
        return 0
    target = (
        f"the {1 - args.alpha:.0%} interval of the mean score ({describe_scores(scores)})"
        if scores is not None
        else f"the widest of the categories' {1 - args.alpha:.0%} intervals"
    )
    print(
        f"judges ({len(counts.judges)}): {', '.join(label(j) for j in counts.judges)}\n"
        f"{describe_categories(counts)}\n"
        f"plan: planned width of {target} (Dawid–Skene) per label budget ({allocation} split "
        f"of each budget over the true categories; these tables are the pilot). Asymptotic: "
        f"check coverage by simulation for small budgets, and dependence with 'fit --judges'."
    )
    frame = pd.DataFrame(rows)
    shown = pd.DataFrame(
        {
            "system": frame["system"].map(label),
            "stratum": frame["stratum"].map(label),
            "labels": frame["budget"],
            "narrowest jury": frame["best_jury"].map(label),
            "width": frame["width"].map(fmt_number),
            "labels per true category": [
                _split_text(np.asarray(m, dtype=float), counts.categories) if m else ""
                for m in frame["split"]
            ],
            "best single judge": frame["best_single_judge"].map(label),
            "its width": frame["single_width"].map(fmt_number),
            "ratio": frame["ratio"].map(fmt_number),
        }
    )
    print(shown.to_string(index=False))
    return 0
