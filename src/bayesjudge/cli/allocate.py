"""``bayesjudge allocate``: plan the human labels (split a budget, or labels for a width)."""

from __future__ import annotations

import json

import pandas as pd

from bayesjudge.cli._common import UsageError, ci_label, parse_unit, parse_whole
from bayesjudge.core import allocation

#: The parameters of ``allocation_report`` / ``labels_for_width`` and the options that give them.
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
    "judged": "--n",
    "alpha": "--alpha",
    "target_width": "--target-width",
}
_STRATIFIED = ("symmetric", "algorithm1", "exact")


def add_parser(subparsers) -> None:
    """Add the ``allocate`` command to ``subparsers``."""
    alloc = subparsers.add_parser(
        "allocate", help="plan human labels: split a calibration budget, or labels for a width"
    )
    alloc.add_argument(
        "--budget", type=parse_whole("200", low=1), required=True, help="total human labels m"
    )
    alloc.add_argument("--p-hat", type=float, required=True, help="share judged correct on test")
    alloc.add_argument("--q0", type=float, required=True, help="pilot specificity estimate")
    alloc.add_argument("--q1", type=float, required=True, help="pilot sensitivity estimate")
    alloc.add_argument(
        "--m-pilot", type=parse_whole("10", low=1), default=10, help="pilot items per label (10)"
    )
    alloc.add_argument(
        "--n",
        type=parse_whole("5000", low=1),
        default=None,
        help="items the judge grades (the test set; default: infinite)",
    )
    alloc.add_argument(
        "--alpha", type=parse_unit("0.05"), default=0.05, help="1 - interval coverage (0.05)"
    )
    alloc.add_argument(
        "--design",
        choices=allocation.REPORT_DESIGNS,
        default="stratified",
        help="labelling design: 'stratified' (a calibration sample drawn per human label), "
        "'random' (humans label a random subset of the judged items) or 'both' side by side",
    )
    alloc.add_argument(
        "--target-width",
        type=parse_unit("0.1"),
        default=None,
        help="also say how many labels give an interval of this full width",
    )
    alloc.add_argument("--json", action="store_true", help="print JSON instead of a table")
    alloc.set_defaults(func=run)


def _usage_error(err: Exception, args) -> UsageError | None:
    """Turn a library error that names a parameter into one naming the option."""
    message = str(err).strip()
    option = _ALLOCATE_OPTIONS.get(message.split(" ", 1)[0])
    if option is None:
        return None
    value = getattr(args, option[2:].replace("-", "_"))
    return UsageError(f"{option} {value}: {message}")


def run(args) -> int:
    """Print the allocations of the chosen design(s) with their interval lengths."""
    design = getattr(args, "design", "stratified")
    target = getattr(args, "target_width", None)
    if 2 * args.m_pilot > args.budget:
        raise UsageError(
            f"--budget {args.budget}: the pilot's --m-pilot {args.m_pilot} items of each label "
            f"type are part of the budget, so --budget must be at least 2 × --m-pilot = "
            f"{2 * args.m_pilot}. Raise --budget or lower --m-pilot (default 10)."
        )
    try:
        # Looked up on the module when the command runs (tests replace it there).
        kwargs = {"m_pilot": args.m_pilot, "n": args.n, "alpha": args.alpha}
        if design != "stratified":
            kwargs["design"] = design
        report = allocation.allocation_report(args.budget, args.p_hat, args.q0, args.q1, **kwargs)
        plans = [] if target is None else _plans(report, design, target, args)
    except (ValueError, OverflowError, TypeError) as err:
        # The library names its parameters (m, p_hat, ...); say which option was wrong.
        usage = _usage_error(err, args)
        if usage is None:
            raise
        raise usage from None
    rows = _allocation_rows(report)
    if args.json:
        payload = {"budget": args.budget, "design": design, "allocations": rows}
        if target is not None:
            payload["target_width"] = target
            payload["labels_for_width"] = plans
        print(json.dumps(payload, indent=2))
        return 0
    print(
        f"Label budget m = {args.budget} (pilot {args.m_pilot} per label), p̂ = {args.p_hat}, "
        f"pilot q0 = {args.q0}, q1 = {args.q1}, "
        f"judged items n = {'∞' if args.n is None else args.n}"
    )
    table = pd.DataFrame(rows)
    table["interval_length"] = table["interval_length"].map(lambda x: f"{x:.3f}")
    table = table.rename(columns={"interval_length": f"expected {ci_label(args.alpha)} length"})
    print(table.to_string(index=False))
    if plans:
        print(f"\nLabels for a {ci_label(args.alpha)} of width {target} (at the pilot values):")
        for plan in plans:
            print("  " + _plan_line(plan))
    print("\n" + _notes(design))
    return 0


def _plans(report, design: str, target: float, args) -> list[dict]:
    """``labels_for_width`` at the report's plug-in values, for each design shown."""
    shown = ("stratified", "random") if design == "both" else (design,)
    plans = []
    for name in shown:
        # The random plan's θ is kept off a boundary the stratified plug-in may sit on.
        theta = report.random_theta if name == "random" else report.theta_tilde
        values = (theta, report.q0_tilde, report.q1_tilde)
        if name == "stratified" and report.q0_tilde + report.q1_tilde <= 1:
            plans.append({"design": name, "labels": None, "m0": None, "m1": None,
                          "width": None, "reachable": False})  # fmt: skip
            continue
        plan = allocation.labels_for_width(
            target, *values, judged=args.n, alpha=args.alpha, design=name
        )
        ok = bool(plan.reachable)
        plans.append(
            {
                "design": name,
                "labels": int(plan.labels) if ok or name == "random" else None,
                "m0": int(plan.m0) if ok else None,
                "m1": int(plan.m1) if ok else None,
                "width": float(plan.width),
                "reachable": ok,
            }
        )
    return plans


def _plan_line(plan: dict) -> str:
    """Return one line of the labels-for-width answer."""
    name = plan["design"]
    if plan["reachable"]:
        how = "items at random among the judged items" if name == "random" else "calibration items"
        return (
            f"{name}: label {plan['labels']} {how} (m0 = {plan['m0']}, m1 = "
            f"{plan['m1']}{' expected' if name == 'random' else ''}): predicted width "
            f"{plan['width']:.3f}"
        )
    if name == "random":
        return (
            f"random: not reachable; labelling all {plan['labels']} judged items gives "
            f"{plan['width']:.3f}"
        )
    if plan["width"] is None:
        return "stratified: not reachable (pilot J ≤ 0: the correction is undefined)"
    return "stratified: not reachable (the test set alone gives a wider interval)"


def _notes(design: str) -> str:
    """Return the explanation printed under the table."""
    stratified = (
        "Label m0 truly incorrect and m1 truly correct items. 'algorithm1' is Lee et al.'s\n"
        "Algorithm 1 (Prop. 5.2 approximation); 'exact' minimises the Lang–Reiczigel length\n"
        "at the pilot estimates without that approximation. Lengths are predicted at the pilot\n"
        "estimates: with a small pilot (about 10 items per label) those are noisy, and in\n"
        "simulation Algorithm 1 then gives shorter real intervals than 'exact'; prefer 'exact'\n"
        "once the pilot has about 50 items per label."
    )
    random = (
        "'random': humans label m of the n judged items drawn at random (m0, m1: the expected\n"
        "split); the length is that of the maximum-likelihood interval, whose labelled items'\n"
        "truth counts are evidence about θ too (bayesjudge.core.allocation."
        "random_design_variance)."
    )
    return {"stratified": stratified, "random": random}.get(design, stratified + "\n" + random)


def _allocation_rows(report) -> list[dict]:
    """One row per allocation of an ``AllocationReport`` (the designs it holds)."""
    names = [n for n in _STRATIFIED if getattr(report, n) is not None]
    if getattr(report, "random", None) is not None:
        names.append("random")
    return [
        {
            "method": name,
            "m0": int(getattr(report, name).m0),
            "m1": int(getattr(report, name).m1),
            "interval_length": float(getattr(report, name).length),
        }
        for name in names
    ]
