"""``bayesjudge compare``: pairwise Δθ of the systems, and gates on claimed orderings for CI.

Without a claim the command prints every pair's Δθ = θ_a − θ_b per stratum with its interval
(and, with ``--model``, the posterior probability P(θ_a > θ_b)). With claims it is a gate: it
exits with :data:`EXIT_UNSUPPORTED` (3) when some claim is not supported by the data, 0 when
every one is, and the command line's usual 1 (internal error), 2 (usage or input error) and
130 (Ctrl-C) otherwise, so a CI job can fail on an improvement the data do not support.

A claim is given as ``--claim A --over B`` ("A is more accurate than B"), a whole ordering as
``--rank A --rank B --rank C`` (best first). Each name is its own argument: names with spaces,
``>``, ``-`` or quotes need no escaping beyond the shell's, and a name starting with ``-`` is
passed as ``--claim=-name``. A syntax such as ``--claim "A>B"`` would have to split the text
and could not name a system called ``"x>y"``.

The gate's rule (documented in ``docs/ci-gates.md``):

- with a Bayesian fit (``--model exact`` or ``--model mcmc``): a claim A over B is supported in
  a stratum when P(θ_A > θ_B) ≥ ``--min-probability`` (default 0.95) and, with
  ``--require-excludes-zero``, also the lower end of the equal-tailed credible interval of
  Δθ = θ_A − θ_B is above 0; a ranking is supported when each adjacent claim is and the
  joint posterior probability of the whole order is ≥ ``--min-probability``;
- with a closed form (``--method bootstrap`` (the default) or ``delta``; for repeated
  verdicts of an item, ``--item`` with ``--repeats``, ``cluster-delta`` (the default there)
  or ``cluster-bootstrap``, which treat the items as the units): a claim is
  supported when the Δθ interval (level ``--ci-prob``) lies above 0; a closed form gives no
  probability, so ``--min-probability`` is refused; a ranking is supported when each adjacent
  claim is.

With several strata a claim must hold in every stratum; a stratum where Δθ cannot be
estimated (no usable calibration or test items) does not support it.

K-category verdicts (label columns read as categories by
:func:`~bayesjudge.cli._categorical.read_table_counts`, as ``estimate`` reads them) are
compared on the mean score of ``--scores`` (required: Δ score = score_a − score_b, score =
Σ value × share) by :func:`~bayesjudge.categorical_estimate.compare_categorical`,
``--method delta`` (default) or ``bootstrap``, as independent samples; their claims follow
the closed-form rule on the Δ score interval. The options of correct/incorrect verdicts only
(``--model``, ``--min-probability``, ``--require-excludes-zero``, the cluster methods,
hierarchical calibration) are refused by name.

:func:`add_gate_options`, :func:`check_gate_settings`, :func:`gate_claims`,
:func:`closed_form_source`, :func:`bayesian_source`, :func:`evaluate_gate` and
:func:`gate_lines` are used by ``bayesjudge report`` too.
"""

from __future__ import annotations

import argparse
import itertools
import json
import warnings
from decimal import Decimal

import numpy as np
import pandas as pd

from bayesjudge._io import atomic_write
from bayesjudge._lazy import bayesian
from bayesjudge._text import fmt_interval, fmt_number, format_probability, terminal_safe
from bayesjudge.categorical_estimate import COMPARE_CATEGORICAL_METHODS, compare_categorical
from bayesjudge.cli._categorical import (
    add_category_options,
    check_labelled,
    describe_categories,
    describe_scores,
    read_table_counts,
    score_map,
)
from bayesjudge.cli._common import (
    WRITTEN,
    UsageError,
    add_sampling_sizes,
    add_table_options,
    check_draws_fit_in_memory,
    check_input_file,
    check_output_file,
    jsonable,
    parse_ci_prob,
    parse_int_at_least,
    parse_min_probability,
    parse_seed,
    resolve_calibration_model,
)
from bayesjudge.compare import compare
from bayesjudge.data import CategoricalCounts
from bayesjudge.warnings import BayesJudgeWarning, SmallSampleWarning

__all__ = [
    "EXIT_SUPPORTED",
    "EXIT_UNSUPPORTED",
    "add_gate_options",
    "add_parser",
    "bayesian_source",
    "check_gate_settings",
    "closed_form_source",
    "evaluate_gate",
    "gate_claims",
    "gate_lines",
    "run",
    "str_to_system",
]

#: Exit status when every claim is supported (or no claim was made).
EXIT_SUPPORTED = 0

#: Exit status when some claim (``--claim``/``--over`` or ``--rank``) is not supported.
#: Distinct from 1 (internal error), 2 (usage or input error) and 130 (Ctrl-C).
EXIT_UNSUPPORTED = 3

#: Default threshold of P(θ_a > θ_b) for a claim under a Bayesian fit.
DEFAULT_MIN_PROBABILITY = 0.95

#: Systems named in the error message for an unknown name (a report may hold hundreds).
_MAX_NAMED = 20


def _shown(name) -> str:
    """Return a system, stratum or category name for the terminal: codes escaped, "—" for none.

    A literal backslash is shown doubled, so that a name holding a newline and one holding a
    backslash and an n print differently; never repr() this text, which would double every
    backslash again.
    """
    if name is None or (isinstance(name, float) and np.isnan(name)):
        return "—"
    return terminal_safe(name, escape_backslash=True)


def _quoted(name) -> str:
    """:func:`_shown` between single quotes, for claims and messages."""
    return f"'{_shown(name)}'"


# --- the gate's options -----------------------------------------------------------------------


class _Claim(argparse.Action):
    """``--claim A``: start a claim "A is more accurate than ...", completed by ``--over``."""

    def __call__(self, parser, namespace, values, option_string=None):
        claims = list(getattr(namespace, "claims", None) or [])
        if claims and claims[-1][1] is None:
            raise argparse.ArgumentError(
                self,
                f"--claim {_quoted(claims[-1][0])} has no --over; write "
                "--claim BETTER --over WORSE for each claim",
            )
        claims.append([values, None])
        namespace.claims = claims


class _Over(argparse.Action):
    """``--over B``: the system the preceding ``--claim`` says is less accurate."""

    def __call__(self, parser, namespace, values, option_string=None):
        claims = list(getattr(namespace, "claims", None) or [])
        if not claims or claims[-1][1] is not None:
            raise argparse.ArgumentError(
                self,
                f"--over {_quoted(values)} follows no --claim; write "
                "--claim BETTER --over WORSE for each claim",
            )
        claims[-1][1] = values
        namespace.claims = claims


def add_gate_options(parser: argparse.ArgumentParser) -> None:
    """Add the gate's options: ``--claim``/``--over``, ``--rank`` and the thresholds."""
    gate = parser.add_argument_group(
        "gate (exit status 3 when a claim is not supported, 0 when every one is)"
    )
    gate.add_argument(
        "--claim",
        action=_Claim,
        dest="claims",
        default=None,
        metavar="BETTER",
        help="claim that system BETTER is more accurate (K-category verdicts in compare: has "
        "the higher --scores mean) than the system of the following "
        "--over (repeatable: --claim A --over B --claim A --over C). Each name is one "
        "argument, so spaces and '>' need no escaping; a name starting with '-' is written "
        "--claim=-name",
    )
    gate.add_argument("--over", action=_Over, dest="claims", metavar="WORSE", help="see --claim")
    gate.add_argument(
        "--rank",
        action="append",
        default=None,
        metavar="SYSTEM",
        help="claim a whole ordering, best first (repeat: --rank A --rank B --rank C); "
        "supported when each adjacent claim is and, with --model, the posterior probability "
        "of the whole order reaches --min-probability",
    )
    gate.add_argument(
        "--min-probability",
        type=parse_min_probability,
        default=None,
        help="with --model: the least P(θ_better > θ_worse) that supports a claim (default "
        f"{DEFAULT_MIN_PROBABILITY}); closed forms gate on their interval instead (--ci-prob)",
    )
    gate.add_argument(
        "--require-excludes-zero",
        action="store_true",
        help="with --model: also require the Δθ credible interval (--ci-prob) to lie above 0 "
        "(closed forms always require it)",
    )


def gate_claims(args, systems) -> list[tuple[str, str]]:
    """Return the claims of ``args`` as (better, worse) system labels; check every name.

    The names are matched to the systems' labels as text. Raises :class:`UsageError` for a
    ``--claim`` without ``--over``, a claim of a system over itself, a ranking of fewer than
    two or repeated systems, or a name that is no system (the message lists the systems).
    """
    by_name = {str(s): s for s in systems}
    claims = []
    for better, worse in getattr(args, "claims", None) or []:
        if worse is None:
            raise UsageError(
                f"--claim {_quoted(better)} has no --over; write --claim BETTER "
                "--over WORSE for each claim."
            )
        claims.append((better, worse))
    rank = getattr(args, "rank", None) or []
    if rank:
        if len(rank) < 2:
            raise UsageError("--rank needs at least two systems, best first: --rank A --rank B.")
        repeated = sorted({r for r in rank if rank.count(r) > 1})
        if repeated:
            raise UsageError(
                f"--rank names {', '.join(_quoted(r) for r in repeated)} more than "
                "once; name each system once, best first."
            )
        claims += list(itertools.pairwise(rank))
    for better, worse in claims:
        for name in (better, worse):
            if name not in by_name:
                raise UsageError(_unknown_system(name, list(by_name)))
        if better == worse:
            raise UsageError(
                f"--claim {_quoted(better)} --over {_quoted(worse)}: a system "
                "cannot be claimed better than itself."
            )
    if claims and len(systems) < 2:
        raise UsageError(f"a claim needs at least two systems; the data hold {len(systems)}.")
    return [(by_name[b], by_name[w]) for b, w in claims]


def _unknown_system(name: str, known: list[str]) -> str:
    shown = ", ".join(_quoted(s) for s in known[:_MAX_NAMED])
    more = f" and {len(known) - _MAX_NAMED} more" if len(known) > _MAX_NAMED else ""
    return (
        f"no system {_quoted(name)} in the data (claims name systems by their label "
        f"in the --system column, exactly as written there); the systems are {shown}{more}."
    )


def check_gate_settings(args, bayes: bool) -> None:
    """Refuse the Bayesian-only thresholds without a Bayesian fit."""
    if bayes:
        return
    for option, value in (
        ("--min-probability", args.min_probability),
        ("--require-excludes-zero", args.require_excludes_zero or None),
    ):
        if value is not None:
            raise UsageError(
                f"{option} needs a posterior probability, which only a Bayesian fit gives "
                "('compare --model exact|mcmc', 'report --method auto|exact|mcmc'); a closed form "
                "supports a claim when its Δθ interval lies above 0 (its level is --ci-prob)."
            )


# --- evaluating claims ------------------------------------------------------------------------


def _oriented(source: dict, better, worse, stratum) -> dict:
    """Δθ = θ_better − θ_worse in ``stratum``: estimate, lower, upper, probability (or None)."""
    if (better, worse) in source["pairs"]:
        p, sign = source["pairs"][(better, worse)], 1.0
    else:
        p, sign = source["pairs"][(worse, better)], -1.0
    ds = source["data"].isel(pair=p).sel(stratum=stratum)
    est = sign * float(ds[source["estimate"]])
    lo, hi = (sign * float(v) for v in ds["ci"].values)
    lo, hi = min(lo, hi), max(lo, hi)
    prob = None
    if "difference" in ds:
        draws = sign * ds["difference"].values.ravel()
        prob = float(np.mean(draws > 0)) if np.isfinite(draws).all() else float("nan")
    return {"estimate": est, "lower": lo, "upper": hi, "probability": prob}


def _not_evidence(source: dict, better, worse, stratum) -> str | None:
    """Why the pair's interval cannot carry a claim in ``stratum`` (None when it can).

    A closed form's interval flagged ``degenerate`` by ``compare`` (a single test item, or one
    point), or a Bayesian θ without test items (its posterior is its prior).
    """
    empty = [s for s in (better, worse) if (s, stratum) in source.get("no_test", ())]
    if empty:
        names = " and ".join(_quoted(s) for s in empty)
        return (
            f"{names} {'has' if len(empty) == 1 else 'have'} no test items in this stratum, so "
            "the posterior of θ there is the prior alone: the data cannot support a claim"
        )
    data = source["data"]
    if "degenerate" not in data:  # a Bayesian fit, or K-category scores
        return None
    pair = source["pairs"].get((better, worse), source["pairs"].get((worse, better)))
    if not bool(data["degenerate"].isel(pair=pair).sel(stratum=stratum)):
        return None
    # One test item (or cluster) has no spread, so the interval holds the calibration's
    # uncertainty at most: one item per system would otherwise pass (bj.compare warns).
    return (
        f"the {source['rule']['pct']} interval has no test-set width (a system of this pair has "
        "a single test item, or the interval is one point), so it cannot support a claim; "
        "collect more test items, or gate on a Bayesian fit (--model exact, or --model mcmc "
        "for repeated verdicts)"
    )


def _verdict(row: dict, rule: dict, not_evidence: str | None = None) -> tuple[bool, str]:
    """Whether one claim in one stratum is supported, and why in words."""
    ci = f"the {rule['pct']} interval {fmt_interval(row['lower'], row['upper'])}"
    if not np.isfinite(row["estimate"]) or not np.isfinite(row["lower"]):
        symbol = rule.get("symbol", "Δθ")
        return False, f"{symbol} cannot be estimated here (no usable test or calibration items)"
    if not_evidence is not None:
        return False, not_evidence
    if rule["bayes"]:
        p, least = row["probability"], rule["min_probability"]
        shown = f"P(θ_better > θ_worse) {format_probability(p, relation=True)}"
        if not p >= least:  # NaN too
            return False, f"{shown} is below the threshold {least:g}"
        if rule["excludes_zero"] and not row["lower"] > 0:
            return False, f"{shown} reaches {least:g} but {ci} does not lie above 0"
        extra = f" and {ci} lies above 0" if rule["excludes_zero"] else ""
        return True, f"{shown} reaches the threshold {least:g}{extra}"
    if row["lower"] > 0:
        return True, f"{ci} lies above 0"
    if row["upper"] < 0:
        return False, f"{ci} lies below 0: the data favour the opposite order"
    return False, f"{ci} includes 0: the data cannot tell the order"


def evaluate_gate(claims, source: dict, rank=None) -> dict:
    """Evaluate ``claims`` (better, worse) on a comparison; return the gate's result.

    ``source`` is what :func:`closed_form_source` or :func:`bayesian_source` return. The
    result has ``claims`` (one entry per claim and stratum: ``better``, ``worse``,
    ``stratum``, ``estimate``, ``lower``, ``upper``, ``probability``, ``supported``, ``why``),
    ``ranking`` (one entry per stratum for ``--rank``, else empty), ``supported`` (all of
    them) and ``exit_status``.
    """
    rule = source["rule"]
    rows = []
    # A claim given twice (or a --rank pair also given by --claim) is one claim, counted once.
    for better, worse in dict.fromkeys(claims):
        for stratum in source["strata"]:
            row = _oriented(source, better, worse, stratum)
            reason = _not_evidence(source, better, worse, stratum)
            supported, why = _verdict(row, rule, reason)
            rows.append(
                {
                    "better": better,
                    "worse": worse,
                    "stratum": stratum,
                    **row,
                    "supported": supported,
                    "why": why,
                }
            )
    ranking = []
    if rank:
        for stratum in source["strata"]:
            adjacent = [
                r
                for r in rows
                if r["stratum"] == stratum
                and (r["better"], r["worse"]) in set(itertools.pairwise(rank))
            ]
            failed = [r for r in adjacent if not r["supported"]]
            prob = _order_probability(source, rank, stratum)
            supported = not failed
            why = "every adjacent claim is supported"
            if failed:
                first = failed[0]
                pair = f"{_quoted(first['better'])} over {_quoted(first['worse'])}"
                why = (
                    f"{len(failed)} of {len(adjacent)} adjacent claims not supported, e.g. "
                    f"{pair}: {first['why']}"
                )
            elif prob is not None and not prob >= rule["min_probability"]:
                supported = False
                why = (
                    f"P(the whole order) {format_probability(prob, relation=True)} is below "
                    f"the threshold {rule['min_probability']:g}"
                )
            elif prob is not None:
                why += f", and P(the whole order) {format_probability(prob, relation=True)}"
            ranking.append(
                {
                    "order": list(rank),
                    "stratum": stratum,
                    "probability": prob,
                    "supported": supported,
                    "why": why,
                }
            )
    ok = all(r["supported"] for r in rows) and all(r["supported"] for r in ranking)
    return {
        "claims": rows,
        "ranking": ranking,
        "supported": ok,
        "exit_status": EXIT_SUPPORTED if ok else EXIT_UNSUPPORTED,
    }


def _order_probability(source: dict, rank, stratum) -> float | None:
    """Posterior probability that θ follows ``rank`` (best first) in ``stratum``; None if no fit."""
    theta = source.get("theta")
    if theta is None:
        return None
    draws = theta.sel(stratum=stratum)
    holds = None
    for better, worse in itertools.pairwise(rank):
        step = (draws.sel(system=better) > draws.sel(system=worse)).values
        holds = step if holds is None else holds & step
    return float(np.mean(holds))


def closed_form_source(result, ci_prob: float, symbol: str = "Δθ") -> dict:
    """Return the gate's view of a closed-form comparison (:func:`bayesjudge.compare`).

    ``symbol`` names the difference in the gate's lines: ``"Δθ"`` for correct/incorrect
    verdicts, ``"Δ score"`` for K-category verdicts compared on a score.
    """
    return {
        "data": result,
        "estimate": "estimate",
        "pairs": _pair_index(result),
        "strata": list(result["stratum"].values),
        "rule": {"bayes": False, "pct": f"{100 * ci_prob:g}%", "symbol": symbol},
    }


def bayesian_source(fit, ci_prob: float, min_probability, excludes_zero: bool, pairs=None) -> dict:
    """Return the gate's view of :meth:`Fit.compare` (P(θ_a > θ_b) from the posterior draws).

    ``pairs`` limits the comparison to those (a, b) pairs (every pair when None).
    """
    result = fit.compare(ci_prob=ci_prob, pairs=pairs)
    least = DEFAULT_MIN_PROBABILITY if min_probability is None else min_probability
    return {
        "data": result,
        "estimate": "mean",
        "pairs": _pair_index(result),
        "strata": list(result["stratum"].values),
        "no_test": _without_test_items(fit),
        "theta": fit.posterior[fit.theta_var],
        "rule": {
            "bayes": True,
            "pct": f"{100 * ci_prob:g}%",
            "min_probability": least,
            "excludes_zero": bool(excludes_zero),
        },
    }


def _without_test_items(fit) -> set:
    """(system, stratum) groups of the fit's counts without test items, with a warning.

    Their θ posterior is the prior: a gate must not read a claim about them from it (the
    closed forms give NaN there). Under the random design the labelled items are test items.
    """
    counts = getattr(fit, "counts", None)
    if counts is None or "n" not in getattr(counts, "dataset", {}):
        return set()
    items = counts.n
    if counts.design == "random":
        items = items + counts.m0 + counts.m1
    items = items.transpose("system", "stratum")
    empty = {
        (items["system"].values[i], items["stratum"].values[j])
        for i, j in zip(*np.nonzero(items.values == 0), strict=True)
    }
    if empty:
        shown = ", ".join(
            f"system={_shown(a)}/stratum={_shown(b)}" for a, b in sorted(empty, key=str)[:6]
        )
        more = f" and {len(empty) - 6} more" if len(empty) > 6 else ""
        warnings.warn(
            f"No test items in {shown}{more}: the posterior of θ there is its prior, so "
            "P(θ_a > θ_b) for its pairs says nothing about the data; a claim about it is not "
            "supported there. Add the system's test verdicts, or leave it out of the claims.",
            SmallSampleWarning,
            stacklevel=3,
        )
    return empty


def _pair_index(result) -> dict:
    # By the coords first/second, never by the "a - b" label (a system may be called "x - y").
    first, second = result["first"].values.tolist(), result["second"].values.tolist()
    return {(a, b): i for i, (a, b) in enumerate(zip(first, second, strict=True))}


def gate_lines(gate: dict, rule: dict) -> list[str]:
    """Return the gate's verdict as lines for the terminal (names shown safely)."""
    symbol = rule.get("symbol", "Δθ")
    if rule["bayes"]:
        how = f"P(θ_better > θ_worse) ≥ {rule['min_probability']:g}"
        if rule["excludes_zero"]:
            how += f" and the {rule['pct']} credible interval of Δθ lies above 0"
    else:
        how = f"the {rule['pct']} interval of {symbol} lies above 0"
    lines = [f"gate: a claim is supported when {how}"]
    for r in gate["claims"]:
        mark = "supported    " if r["supported"] else "NOT SUPPORTED"
        lines.append(
            f"  {mark} {_quoted(r['better'])} over {_quoted(r['worse'])} "
            f"(stratum {_quoted(r['stratum'])}): {symbol} {fmt_number(r['estimate'])} "
            f"{fmt_interval(r['lower'], r['upper'])}; {terminal_safe(r['why'])}"
        )
    for r in gate["ranking"]:
        mark = "supported    " if r["supported"] else "NOT SUPPORTED"
        order = " > ".join(_quoted(s) for s in r["order"])
        lines.append(
            f"  {mark} ranking {order} (stratum {_quoted(r['stratum'])}): {terminal_safe(r['why'])}"
        )
    failed = sum(not r["supported"] for r in gate["claims"] + gate["ranking"])
    total = len(gate["claims"]) + len(gate["ranking"])
    lines.append(
        f"verdict: every claim supported (exit status {EXIT_SUPPORTED})"
        if gate["supported"]
        else f"verdict: {failed} of {total} claims not supported (exit status {EXIT_UNSUPPORTED})"
    )
    return lines


# --- the command ------------------------------------------------------------------------------


def add_parser(subparsers) -> None:
    """Add the ``compare`` command to ``subparsers``."""
    cmp = subparsers.add_parser(
        "compare",
        help="pairwise Δθ of the systems; gate claimed orderings (exit status 3 if unsupported)",
        description="Compare every pair of systems (Δθ = θ_a − θ_b per stratum, with an "
        "interval and, with --model, P(θ_a > θ_b)). K-category verdicts (label columns of "
        "more than two values, or --categories) are compared on the mean score of --scores "
        "(Δ score = score_a − score_b). With --claim/--over or --rank it is a CI "
        "gate: exit status 0 when every claim is supported, 3 when some claim is not, 2 for a "
        "usage or input error, 1 for an internal error.",
    )
    add_table_options(cmp)
    add_category_options(cmp)
    how = cmp.add_mutually_exclusive_group()
    how.add_argument(
        "--method",
        choices=["bootstrap", "delta", "cluster-delta", "cluster-bootstrap"],
        default=None,
        help="closed-form Δθ (default bootstrap: percentile interval of a bootstrap that "
        "resamples shared items jointly; delta: Wald interval of the delta method). With "
        "repeated verdicts of an item (--item with --repeats) only cluster-delta (the "
        "default there: cluster-robust Wald) and cluster-bootstrap (items resampled with "
        "their verdicts). K categories: delta (the default there) or bootstrap, on the "
        "--scores mean",
    )
    how.add_argument(
        "--model",
        choices=["exact", "mcmc"],
        default=None,
        help="fit the Bayesian model instead and gate on P(θ_a > θ_b): exact posterior "
        "(fast; separate calibration, unpaired) or MCMC (correct/incorrect verdicts only)",
    )
    cmp.add_argument(
        "--calibration-design",
        default=None,
        choices=["separate", "shared", "hierarchical"],
        help="each system's own calibration, one shared by every system, or (--model mcmc "
        "only) hierarchical. Default: separate, or shared when the calibration table has no "
        "--system column (one set for every system)",
    )
    cmp.add_argument(
        "--ci-prob", type=parse_ci_prob, default=0.95, help="interval probability (0.95)"
    )
    cmp.add_argument(
        "--n-resamples", type=parse_int_at_least(100), default=10_000, help="bootstrap resamples"
    )
    cmp.add_argument(
        "--seed", type=parse_seed, default=None, help="seed of bootstrap or fit (default: drawn)"
    )
    add_sampling_sizes(cmp, tune_help="MCMC tuning steps per chain")
    add_gate_options(cmp)
    cmp.add_argument("--json", action="store_true", help="print JSON instead of tables")
    cmp.add_argument(
        "--output",
        metavar="FILE",
        help="also write what is printed (the JSON with --json) to FILE, atomically",
    )
    cmp.set_defaults(func=run, claims=None)


#: The options naming files that compare reads: --output may be none of them.
_INPUTS = ("--test", "--calibration", "--gold")


def run(args) -> int:
    """Compare the systems, evaluate the claims, print (and write) the result."""
    check_input_file("--test", args.test)
    check_input_file("--calibration", args.calibration)
    inputs = {option: getattr(args, option[2:], None) for option in _INPUTS}
    output = None
    if args.output is not None:
        output = check_output_file("--output", args.output, inputs)
    # Read first: whether the labels are K categories (which takes other options) is a
    # property of the tables.
    counts = read_table_counts(args)
    binary = not isinstance(counts, CategoricalCounts)  # K categories refuse --model by name
    exact = ("--model exact", "--model mcmc") if binary and args.model == "exact" else None
    args.calibration_design, args.pool_over, args.calibration_note = resolve_calibration_model(
        args.calibration_design, counts, "--calibration-design", dims=("system",), exact=exact
    )
    categorical = isinstance(counts, CategoricalCounts)
    if categorical:
        scores = _check_categorical_settings(args, counts)
    else:
        _check_binary_settings(args)
    if len(counts.systems) < 2:
        raise UsageError(
            f"compare needs at least two systems; the data hold {len(counts.systems)} "
            "(name the column of system names with --system)."
        )
    claims = gate_claims(args, counts.systems)
    seed = args.seed if args.seed is not None else int(np.random.default_rng().integers(2**31))
    if categorical:
        source, settings = _categorical_comparison(args, counts, scores, seed)
    else:
        source, settings = _comparison(args, counts, seed, claims)
    rank = [str_to_system(counts.systems, r) for r in args.rank] if args.rank else None
    gate = evaluate_gate(claims, source, rank)
    text = _json(source, settings, gate) if args.json else _text(source, settings, gate)
    print(text)
    if output is not None:
        atomic_write(output, text + "\n")
        WRITTEN.append(str(output))
    return gate["exit_status"]


def _check_binary_settings(args) -> None:
    """Refuse option combinations of correct/incorrect verdicts that cannot work together."""
    bayes = args.model is not None
    check_gate_settings(args, bayes)
    if args.model == "exact" and args.calibration_design != "separate":
        raise UsageError(
            "--model exact computes the posterior for --calibration-design separate only; use "
            f"--model mcmc for {args.calibration_design!r} calibration."
        )
    if not bayes and args.calibration_design == "hierarchical":
        raise UsageError(
            "--calibration-design hierarchical is a Bayesian model: add --model mcmc (the "
            "closed forms take separate or shared)."
        )
    if bayes:
        check_draws_fit_in_memory(args)
    _warn_unused_options(args)


def _warn_unused_options(args) -> None:
    """Say which sizes given have no effect here (the K-category path refuses them by name).

    A value at its default cannot be told from one left out, so only other values are named.
    """
    unused = []
    delta = args.method in ("delta", "cluster-delta") or (args.method is None and args.item
                                                             and args.repeats)  # fmt: skip
    if args.n_resamples != 10_000 and (args.model is not None or delta):
        unused.append(("--n-resamples", "sets the closed-form bootstrap's replicates"))
    if args.model is None:
        for option, default in (("--draws", 1000), ("--tune", 1000), ("--chains", 4)):
            if getattr(args, option[2:]) != default:
                unused.append((option, "sizes the Bayesian fit of --model"))
    elif args.model == "exact" and args.tune != 1000:
        unused.append(("--tune", "sets the MCMC sampler's tuning steps; --model exact draws "
                                 "from the posterior directly"))  # fmt: skip
    for option, what in unused:
        warnings.warn(
            f"{option} has no effect here: it {what}. Leave it out, or pick the method it "
            "belongs to.",
            BayesJudgeWarning,
            stacklevel=2,
        )


#: Options of correct/incorrect verdicts that K-category compare refuses, and why.
_BINARY_ONLY = {
    "--model": "a Bayesian fit of correct/incorrect verdicts",
    "--min-probability": "a threshold on the posterior probability of a Bayesian fit",
    "--require-excludes-zero": "a condition on the credible interval of a Bayesian fit",
}


def _check_categorical_settings(args, counts: CategoricalCounts) -> dict:
    """Refuse what K-category compare cannot take; return the ``--scores`` map."""
    given = {
        "--model": args.model,
        "--min-probability": args.min_probability,
        "--require-excludes-zero": args.require_excludes_zero or None,
    }
    for option, value in given.items():
        if value is not None:
            raise UsageError(
                f"{option} is {_BINARY_ONLY[option]}; K-category verdicts ({_categories(counts)})"
                " are compared with a closed form, --method delta (default) or bootstrap, and a "
                "claim is supported when its Δ score interval (level --ci-prob) lies above 0. "
                f"Drop {option}."
            )
    if args.method is not None and args.method not in COMPARE_CATEGORICAL_METHODS:
        raise UsageError(
            f"--method {args.method} is for repeated correct/incorrect verdicts of an item; "
            f"K-category verdicts take --method {' or '.join(COMPARE_CATEGORICAL_METHODS)} "
            "(default delta)."
        )
    if args.calibration_design == "hierarchical":
        raise UsageError(
            "--calibration-design hierarchical is a Bayesian model of correct/incorrect "
            "verdicts; K-category verdicts take separate (default) or shared."
        )
    if args.scores is None:
        raise UsageError(
            f"comparing K-category verdicts needs --scores, a value for each category "
            f"({_categories(counts)}): the difference of two systems is that of their mean "
            "scores Σ value × share, e.g. --scores A=1,tie=0.5,B=0 (A's win rate, ties "
            "counted half) or --scores 1=1,2=2,3=3,4=4,5=5 (a rubric's mean grade)."
        )
    check_labelled(counts)
    scores = score_map(args.scores, counts.categories)
    if len(set(scores.values())) == 1:  # every Δ score would be 0: no claim could pass
        raise UsageError(
            f"--scores gives every category the same value ({next(iter(scores.values())):g}), "
            "so every Δ score is 0 and no claim can be supported; give the categories "
            "different values, e.g. --scores A=1,tie=0.5,B=0."
        )
    return scores


def _categories(counts: CategoricalCounts) -> str:
    shown = ", ".join(_quoted(c) for c in counts.categories[:_MAX_NAMED])
    more = f" and {counts.K - _MAX_NAMED} more" if counts.K > _MAX_NAMED else ""
    return f"categories {shown}{more}"


def str_to_system(systems, name: str):
    """Return the system whose label, as text, is ``name`` (checked by :func:`gate_claims`)."""
    return {str(s): s for s in systems}[name]


def _categorical_comparison(args, counts, scores: dict, seed: int) -> tuple[dict, dict]:
    """Compare K-category counts on ``scores``: the gate's source and the settings to show."""
    # 1 - 0.95 is 0.050000000000000044 in floating point: take the decimal difference of the
    # number as written, so that the numbers equal bj.compare(counts, alpha=0.05)'s
    alpha = float(Decimal(1) - Decimal(repr(args.ci_prob)))
    result = compare_categorical(
        counts,
        scores=scores,
        method=args.method or "delta",
        alpha=alpha,
        calibration=args.calibration_design,
        n_resamples=args.n_resamples,
        random_seed=seed,
    )
    settings = {
        "ci_prob": args.ci_prob,
        "random_seed": seed,
        "design": counts.design,
        "calibration": args.calibration_design,
        "method": result.attrs["method"],
        "model": None,
        "ci_kind": result.attrs["ci_kind"],
        "paired": result.attrs["paired"],
        "clusters": 0,
        "n_resamples": result.attrs["n_resamples"],
        "categories": [jsonable(c) for c in counts.categories],
        "categories_source": counts.dataset.attrs.get("categories_source"),
        "ordered": counts.ordered,
        "scores": [{"category": jsonable(c), "value": v} for c, v in scores.items()],
        "describe": [describe_categories(counts), describe_scores(scores)],
    }
    if args.calibration_note:
        settings["calibration_note"] = args.calibration_note
    return closed_form_source(result, args.ci_prob, symbol="Δ score"), settings


def _comparison(args, counts, seed: int, claims=()) -> tuple[dict, dict]:
    """Run the comparison of ``args``: return the gate's source and the settings to show.

    A Bayesian fit summarises only the claimed pairs when there are claims: the draws of
    every pair of hundreds of systems would not fit in memory (Fit.compare).
    """
    settings = {
        "ci_prob": args.ci_prob,
        "random_seed": seed,
        "design": counts.design,
        "calibration": args.calibration_design,
    }
    if args.calibration_note:
        settings["calibration_note"] = args.calibration_note
    if args.model is None:
        result = compare(
            counts,
            method=args.method,
            calibration=args.calibration_design,
            alpha=1 - args.ci_prob,
            n_resamples=args.n_resamples,
            random_seed=seed,
        )
        settings.update(
            {
                "method": result.attrs["method"],
                "model": None,
                "ci_kind": result.attrs["ci_kind"],
                "paired": result.attrs["paired"],
                "clusters": result.attrs["clusters"],
                "n_resamples": result.attrs["n_resamples"],
            }
        )
        return closed_form_source(result, args.ci_prob), settings
    options = {}
    if args.model == "mcmc":
        options = {"tune": args.tune, "progressbar": False}
    if counts.has_joint and args.model == "exact":
        options["paired"] = False
    fit = bayesian("fit").fit(
        counts,
        calibration=args.calibration_design,
        pool_over=args.pool_over,
        draws=args.draws,
        chains=args.chains,
        random_seed=seed,
        method=args.model,
        **options,
    )
    source = bayesian_source(
        fit, args.ci_prob, args.min_probability, args.require_excludes_zero, _pairs_of(claims)
    )
    settings.update(
        {
            "method": None,
            "model": args.model,
            "ci_kind": "eti",
            "paired": bool(fit.config.get("paired")),
            "draws": args.draws,
            "chains": args.chains,
            "min_probability": source["rule"]["min_probability"],
            "require_excludes_zero": source["rule"]["excludes_zero"],
        }
    )
    return source, settings


def _pairs_of(claims) -> list | None:
    """Return the claims' pairs, each once in its first orientation; None for no claim."""
    seen, pairs = set(), []
    for better, worse in claims:
        if frozenset((better, worse)) not in seen:
            seen.add(frozenset((better, worse)))
            pairs.append((better, worse))
    return pairs or None


def _rows(source: dict) -> pd.DataFrame:
    """Every compared pair and stratum: first, second, stratum, estimate, lower, upper, P."""
    rows = []
    for (first, second), _ in source["pairs"].items():
        for stratum in source["strata"]:
            row = _oriented(source, first, second, stratum)
            rows.append({"first": first, "second": second, "stratum": stratum, **row})
    return pd.DataFrame(rows)


def _json(source: dict, settings: dict, gate: dict) -> str:
    def clean(record: dict) -> dict:
        return {k: jsonable(v) if not isinstance(v, list) else v for k, v in record.items()}

    shown = {k: v for k, v in settings.items() if k != "describe"}
    payload = {
        "settings": clean(shown),
        "comparisons": [clean(r) for r in _rows(source).to_dict(orient="records")],
        "claims": [clean(r) for r in gate["claims"]],
        "ranking": [clean(r) for r in gate["ranking"]],
        "supported": gate["supported"],
        "exit_status": gate["exit_status"],
    }
    # allow_nan=False: NaN and infinities are no JSON (jsonable wrote them as null)
    return json.dumps(payload, indent=2, ensure_ascii=False, default=str, allow_nan=False)


def _text(source: dict, settings: dict, gate: dict) -> str:
    pct = f"{100 * settings['ci_prob']:g}%"
    symbol = source["rule"].get("symbol", "Δθ")
    if settings["model"] is None:
        how = (
            f"closed form {settings['method']} ({settings['ci_kind']}), "
            f"{'paired' if settings['paired'] else 'unpaired'}"
        )
    else:
        how = (
            f"Bayesian fit ({settings['model']}, {settings['draws']} draws x "
            f"{settings['chains']} chains), equal-tailed credible intervals"
        )
    what = "Δθ = θ_first − θ_second"
    if "describe" in settings:
        categories, scores = settings["describe"]
        what = f"{categories}\nΔ score = score_first − score_second, score = Σ value × share " + (
            f"with {scores}"
        )
    note = settings.get("calibration_note")
    note = f" (the default here: {note})" if note else ""
    lines = [
        f"{what}: {how}; {settings['calibration']} calibration{note}; "
        f"{settings['design']} labelling design; seed {settings['random_seed']} (repeat with "
        f"--seed {settings['random_seed']})"
    ]
    frame = _rows(source)
    columns = {
        "first": frame["first"].map(_shown),
        "second": frame["second"].map(_shown),
        "stratum": frame["stratum"].map(_shown),
        symbol: frame["estimate"].map(fmt_number),
        f"{pct} interval": [
            fmt_interval(a, b) for a, b in zip(frame["lower"], frame["upper"], strict=True)
        ],
    }
    if settings["model"] is not None:
        columns["P(first > second)"] = [format_probability(p) for p in frame["probability"]]
    lines.append(pd.DataFrame(columns).to_string(index=False))
    if gate["claims"] or gate["ranking"]:
        lines += ["", *gate_lines(gate, source["rule"])]
    return "\n".join(lines)
