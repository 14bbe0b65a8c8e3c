"""Judge diagnostics for comparisons: q0, q1, J, ΔJ, the calibration design, and warnings.

Fiedler (Sec. 4.4 and the checklist of Sec. 7) asks two questions before a corrected comparison
is trusted: is the judge good enough (Youden's J well above 0) and, when one calibration set is
shared between systems, does the judge behave the same on every system (ΔJ ≈ 0)?
:func:`judge_diagnostics` answers both with intervals (closed-form, bootstrap and, when a
:class:`~bayesjudge.Fit` is given, posterior) and recommends a calibration design;
:func:`check_comparison` turns the answers into :class:`Diagnosis` records and warnings with
numbers and what to do.

This module is an xarray layer over :mod:`bayesjudge.core`; it imports PyMC only through a
:class:`~bayesjudge.Fit` that the caller passes in.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Hashable
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import xarray as xr
from scipy import stats

from bayesjudge._text import format_probability, group_label, pair_label, terminal_safe
from bayesjudge.core._validation import MIN_ALPHA, check_alpha
from bayesjudge.core.allocation import allocation_report, labels_for_width
from bayesjudge.core.cluster import calibration_effective_counts, effective_counts
from bayesjudge.core.correction import lang_reiczigel_length
from bayesjudge.core.kernels import (
    LOW_J_THRESHOLD,
    low_j,
    low_j_category,
    rg_difference_delta,
    rogan_gladen_ratio,
    wilson_limits,
    youden_is_zero,
)
from bayesjudge.core.likelihood import double_sampling_mle, likelihood_interval
from bayesjudge.core.paired import (
    pair_cells_many,
    shared_calibration_bias_se,
    shared_calibration_shift,
)
from bayesjudge.core.pooling import homogeneity_test, pooled_half_width, pooling_bias
from bayesjudge.core.youden import simultaneous_differences, youden, youden_difference
from bayesjudge.data import DIMS, FIELDS, JudgeCounts
from bayesjudge.warnings import (
    BayesJudgeWarning,
    CalibrationDesignWarning,
    CalibrationSizeWarning,
    LowJudgeQualityWarning,
    NearTieWarning,
    PooledCalibrationWarning,
)

__all__ = [
    "BIAS_RATIO_MAX",
    "DESIGNS",
    "MAX_LISTED",
    "NEAR_TIE_FRACTION",
    "POOLED_BIAS_RATIO_MAX",
    "POOLED_LISTED",
    "Diagnosis",
    "check_comparison",
    "check_pooled_calibration",
    "collapsed_interval_message",
    "collapsed_intervals",
    "comparison_table",
    "emit_grouped",
    "grouped_message",
    "judge_diagnostics",
    "posterior_differences",
]

#: Largest |shared-calibration bias| / SE(Δθ̂) at which a shared calibration set is called
#: defensible: a bias of half a standard error keeps a nominal 95% interval's coverage at 92.1%.
BIAS_RATIO_MAX = 0.5
#: A Δθ interval that excludes 0 is a near tie when 0 lies within this fraction of its
#: half-width from its nearer end. For a normal 95% interval that is |Δθ̂| < 1.3 × 1.96 = 2.55
#: standard errors, P(θ_a > θ_b) between 0.005 and 0.995: about where a 99% interval (2.58 SE)
#: would include 0. (It was 0.5, i.e. 2.94 SE, which called P = 0.998 a near tie.)
NEAR_TIE_FRACTION = 0.3
#: A grouped warning lists at most this many cases, then says how many more there are.
MAX_LISTED = 3
#: The calibration designs :func:`judge_diagnostics` can recommend.
DESIGNS = ("shared", "hierarchical", "system-specific", "unverified")
_ORDER = {"shared": 0, "hierarchical": 1, "system-specific": 2, "unverified": 3}
_CI = ["lower", "upper"]
_CAL = ("tn", "m0", "tp", "m1")


@dataclass(frozen=True)
class Diagnosis:
    """One finding of :func:`check_comparison`: what, where, the numbers, and what to do.

    Attributes
    ----------
    code : str
        ``"low_j"``, ``"calibration_design"``, ``"near_tie"`` or ``"calibration_size"``.
    level : str
        ``"warning"`` (the claim needs weakening or the design changing) or ``"caution"``.
    message : str
        Plain-language text with the numbers and the remedy.
    category : type
        The :class:`~bayesjudge.BayesJudgeWarning` subclass emitted for it.
    system : Hashable or None
        The system, or the pair label ``"a - b"``, it concerns.
    stratum : Hashable or None
        The stratum it concerns.
    values : dict
        The numbers in the message, by name (for reports and tests).
    summary : str
        One line with where and the key numbers, for a grouped warning that lists many
        findings of one kind (the message when empty).
    """

    code: str
    level: str
    message: str
    category: type = BayesJudgeWarning
    system: Hashable | None = None
    stratum: Hashable | None = None
    values: dict = field(default_factory=dict)
    summary: str = ""

    def emit(self, stacklevel: int = 2) -> None:
        """Emit the message as a Python warning of :attr:`category`."""
        warnings.warn(self.message, self.category, stacklevel=stacklevel + 1)


#: The head of a grouped warning: what happened in how many cases, and what to do.
_GROUP_HEADS = {
    "low_j": "Low judge quality in {n} (system, stratum) groups: J is below "
    f"{LOW_J_THRESHOLD:g} or its interval reaches 0, so the corrected estimates' errors are "
    "amplified 1/J; weaken those claims, and use a better judge or prompt or label more "
    "calibration items of both kinds.",
    "calibration_design": "The judge may err differently on the systems' answers in {n} "
    "(pair, stratum) comparisons, so one shared calibration set is not shown to be "
    "defensible; use calibration='separate' (or 'hierarchical') with a calibration sample "
    "of each system's answers.",
    "near_tie": "{n} comparisons are ties or near ties: their Δθ interval includes 0 or "
    f"misses it by less than {NEAR_TIE_FRACTION:g} of its half-width, so the data do not "
    "establish (or barely establish) which system is better; report them as ties, or "
    "collect more test or calibration items.",
    "calibration_size": "The θ interval is wider than the target in {n} (system, stratum) "
    "groups; collect the calibration labels each case names.",
}


def grouped_message(group: list[Diagnosis], total: str = "") -> str:
    """Return one warning message for many findings of a kind: what, how many, what to do.

    The head says what happened in how many cases and what to do; then at most
    :data:`MAX_LISTED` cases and how many more there are (``total`` says where to find them
    all). One line: the command line prints each warning on one line, with control
    characters (a newline too) shown escaped.
    """
    first = group[0]
    if first.code in _GROUP_HEADS:
        head = _GROUP_HEADS[first.code].format(n=len(group))
    else:  # the message may hold names with braces: never format it
        head = f"{len(group)} findings of one kind ({first.code}):"
    listed = "; ".join(d.summary or d.message for d in group[:MAX_LISTED])
    more = len(group) - MAX_LISTED
    tail = f"; and {more} more" + (f" ({total})" if total else "") if more > 0 else ""
    return f"{head} Cases: {listed}{tail}."


def emit_grouped(found: list[Diagnosis], stacklevel: int = 2, total: str = "") -> None:
    """Emit the findings as warnings, one per kind: a single finding as it is, many grouped.

    A comparison of many systems has many pairs; one warning per pair would flood the
    terminal (40 systems gave 679 lines). Each kind (``code``) gives one warning of its
    category: the message of a single finding, or :func:`grouped_message` for several.
    """
    by_code: dict[str, list[Diagnosis]] = {}
    for d in found:
        by_code.setdefault(d.code, []).append(d)
    for group in by_code.values():
        if len(group) == 1:
            group[0].emit(stacklevel=stacklevel + 1)
        else:
            warnings.warn(
                grouped_message(group, total or "every case is in check_comparison's result"),
                group[0].category,
                stacklevel=stacklevel + 1,
            )


def caught_by_category(caught) -> dict[type, list[str]]:
    """Group caught warnings' messages by category, each distinct message once, in order."""
    out: dict[type, list[str]] = {}
    for w in caught:
        messages = out.setdefault(w.category, [])
        if str(w.message) not in messages:
            messages.append(str(w.message))
    return out


def emit_caught(
    by_category: dict[type, list[str]], stacklevel: int = 2, where: str = "the report",
    head: str = "warnings of this kind",
) -> None:  # fmt: skip
    """Re-emit caught warnings, one per category: one message as it is, several grouped.

    Several messages of a category become one warning that says how many there are, shows
    the first :data:`MAX_LISTED` and says how many more are in ``where`` (a report of many
    systems would otherwise flood the terminal).

    Examples
    --------
    >>> import warnings
    >>> from bayesjudge.diagnostics import emit_caught
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     emit_caught({UserWarning: ["a", "b"]})
    >>> str(seen[0].message)
    '2 warnings of this kind: a | b'
    """
    for category, messages in by_category.items():
        text = messages[0]
        if len(messages) > 1:
            more = len(messages) - MAX_LISTED
            text = f"{len(messages)} {head}: " + " | ".join(messages[:MAX_LISTED])
            if more > 0:
                text += f" | and {more} more (every one is in {where})."
        warnings.warn(text, category, stacklevel=stacklevel + 1)


# --------------------------------------------------------------------------- helpers


def label_pairs(labels: list, pairs=None, dim: str = "system") -> list[tuple[int, int]]:
    """Index pairs ``(i, j)`` of ``labels``: every pair (i < j) when ``pairs`` is None.

    ``pairs`` lists pairs of labels ``(a, b)`` (differences a minus b), e.g. the comparisons
    a report of many systems shows; an unknown label, a label paired with itself, a pair
    listed twice or an entry that is not a pair (a string is not one) is a ValueError. So is
    a list of pairs two of which share the label ``"a - b"`` (:func:`~bayesjudge._text.
    pair_label`) because a name holds ``" - "`` (``("x - y", "z")`` and ``("x", "y - z")``):
    results name a pair by that label, and a message or a selection could not tell them apart.
    Every pair (``pairs=None``) is not refused for that: results keep the coords ``first`` and
    ``second``, which identify each pair.

    Examples
    --------
    >>> from bayesjudge.diagnostics import label_pairs
    >>> label_pairs(["a", "b", "c"]), label_pairs(["a", "b", "c"], [("c", "a")])
    ([(0, 1), (0, 2), (1, 2)], [(2, 0)])
    """
    if pairs is None:
        return list(combinations(range(len(labels)), 2))
    index = {s: i for i, s in enumerate(labels)}
    out = []
    for pair in pairs:
        try:
            if isinstance(pair, str | bytes):
                raise TypeError
            a, b = pair
        except (TypeError, ValueError):
            raise ValueError(
                f"pairs must be a sequence of ({dim}_a, {dim}_b) label pairs; got "
                f"{_shown_value(pair)}."
            ) from None
        missing = [x for x in (a, b) if x not in index]
        if missing or a == b:
            raise ValueError(
                f"pair {_shown_value(pair)}: "
                + (f"no {dim} {_shown_value(missing)}" if missing else f"a {dim} with itself")
                + f"; the {dim} labels are {_shown_value(labels[:10])}"
                + ("..." if len(labels) > 10 else "")
                + "."
            )
        out.append((index[a], index[b]))
    _refuse_colliding_pairs(labels, out, dim)
    return out


def _shown_value(value) -> str:
    """Return a label, or a list or tuple of them, quoted for a message (never repr)."""
    if isinstance(value, list | tuple):
        inner = ", ".join(_shown_value(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    if isinstance(value, str):
        return f"'{terminal_safe(value, escape_backslash=True)}'"
    return terminal_safe(value, escape_backslash=True)


def _refuse_colliding_pairs(labels: list, pairs: list[tuple[int, int]], dim: str) -> None:
    """Raise where two of ``pairs`` (or one listed twice) get the same ``"a - b"`` label."""
    seen: dict[str, tuple[int, int]] = {}
    for i, j in pairs:
        text = pair_label(labels[i], labels[j])
        if text not in seen:
            seen[text] = (i, j)
            continue
        k, m = seen[text]
        if (k, m) == (i, j):
            raise ValueError(
                f"pairs lists the pair {_shown_value((labels[i], labels[j]))} more than once; "
                "name each pair once."
            )
        raise ValueError(
            f"the {dim} pairs {_shown_value((labels[k], labels[m]))} and "
            f"{_shown_value((labels[i], labels[j]))} would both be labelled "
            f"{_shown_value(text)} (a {dim} name holds ' - '), so results and messages could "
            f"not tell them apart; rename one of these {dim}s (in Python, or leave one of the "
            "two pairs out of pairs=)."
        )


def _pair_coords(systems: list, pairs: list[tuple[int, int]] | None = None) -> dict:
    pairs = label_pairs(systems) if pairs is None else pairs
    return {
        "pair": [pair_label(systems[i], systems[j]) for i, j in pairs],
        "first": ("pair", [systems[i] for i, _ in pairs]),
        "second": ("pair", [systems[j] for _, j in pairs]),
    }


def _shared_over_any(counts: JudgeCounts) -> bool:
    return bool(counts.calibration_shared_over)


def _shared_over_systems(counts: JudgeCounts) -> bool:
    return "system" in counts.calibration_shared_over


def _arrays(counts: JudgeCounts, effective: bool = False) -> dict[str, np.ndarray]:
    """Return the counts as float arrays (system, stratum).

    ``effective``: for repeated verdicts of an item, Kish's effective counts of the test items
    (:func:`~bayesjudge.core.cluster.effective_counts`) and, where labelled items were judged
    several times, of the labelled items
    (:func:`~bayesjudge.core.cluster.calibration_effective_counts`): the same p̂, q̂0, q̂1,
    with the binomial variances that the delta method and the Newcombe interval of J read
    from them equal to the cluster-robust ones (items, not verdicts, as the units).
    """
    ds = counts.dataset.transpose("system", "stratum", ...)
    arr = {v: ds[v].values.astype(float) for v in ("n", "k", "m0", "tn", "m1", "tp")}
    if effective and counts.clusters is not None:
        table = counts.clusters.transpose("system", "stratum", "repeats", "positives").values
        arr["k"], arr["n"] = effective_counts(table)
    if effective and counts.calibration_clusters is not None:
        dims = ("system", "stratum", "truth", "repeats", "positives")
        tables = counts.calibration_clusters.transpose(*dims).values
        arr["tn"], arr["m0"], arr["tp"], arr["m1"] = calibration_effective_counts(tables)
    return arr


def _pooled_calibration(arr: dict[str, np.ndarray], shared: bool) -> tuple[np.ndarray, ...]:
    """``tn, m0, tp, m1`` of the calibration sets pooled over systems, shape (T,)."""
    if shared:  # copies of one set: take it once
        return tuple(arr[f][0] for f in _CAL)
    return tuple(arr[f].sum(0) for f in _CAL)


def _delta(cells, cal_a, cal_b, totals, valid) -> tuple[np.ndarray, np.ndarray]:
    """Delta-method Δθ and SE (the kernel ``rg_difference_delta``), NaN where not ``valid``.

    J = 0 policy: NaN (``valid`` excludes a plug-in Ĵ = 0 and systems without test items).
    """
    res = rg_difference_delta(cells, totals, cal_a, cal_b)
    nan = np.full(valid.shape, np.nan)
    return np.where(valid, res.estimate, nan), np.where(valid, res.se, nan)


def comparison_table(counts: JudgeCounts, alpha: float, pairs=None) -> xr.Dataset:
    """Closed-form Δθ per (pair, stratum): estimate, SE and interval, and the shared-design bias.

    Parameters
    ----------
    counts : JudgeCounts
        Test and calibration counts of at least two systems.
    alpha : float
        The intervals have level ``1 - alpha``.
    pairs : list of (int, int), optional
        Positions of the pairs of systems (difference first minus second); every pair when
        None.

    Returns
    -------
    xarray.Dataset
        Over ``(pair, stratum)``: ``delta_theta``, ``delta_theta_se``, ``delta_theta_ci``
        (dim ``ci_bound``), ``prob_greater``, ``shared_delta_theta``, ``shared_se`` and
        ``shared_bias``; NaN where a system has no test items or a plug-in Ĵ = 0.

    Notes
    -----
    ``delta_theta``/``delta_theta_se``: Rogan–Gladen difference with each system's own
    calibration, or with the one calibration set when the counts carry a set shared over
    systems (:func:`~bayesjudge.core.paired.rg_difference_se`: Lee et al. eq. 10 per system,
    Fiedler App. B for the shared set; the paired covariance from the joint verdict table).
    ``shared_se``: App. B SE of the shared-design difference with the calibration pooled over
    systems. ``shared_bias``: App. C bias of that difference, evaluated at the estimates
    (:func:`~bayesjudge.core.paired.shared_calibration_shift`).

    Examples
    --------
    >>> import bayesjudge as bj
    >>> from bayesjudge.diagnostics import comparison_table
    >>> counts = bj.JudgeCounts.from_counts(
    ...     n=[1000, 1000], k=[600, 500], m0=[200, 200], tn=[160, 120],
    ...     m1=[200, 200], tp=[180, 180], system=["a", "b"])
    >>> t = comparison_table(counts, 0.05)
    >>> print(t.pair.values.tolist(), f"{t.delta_theta.item():.4f}")
    ['a - b'] 0.3714
    """
    arr = _arrays(counts, effective=True)
    shared = _shared_over_systems(counts)
    z = float(stats.norm.isf(alpha / 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = arr["k"] / arr["n"]
        q0, q1 = arr["tn"] / arr["m0"], arr["tp"] / arr["m1"]
    own = ~youden_is_zero(*(arr[f] for f in _CAL))  # (system, stratum), exact on the counts
    # Unclipped θ̂ with each system's own calibration. J = 0 policy: NaN.
    theta = np.where(own, rogan_gladen_ratio(p, q0, q1).theta, np.nan)
    pooled = _pooled_calibration(arr, shared)
    q0c, q1c = pooled[0] / pooled[1], pooled[2] / pooled[3]
    shift = shared_calibration_shift(theta, q0, q1, q0c, q1c)  # App. C per system
    pooled_ok = ~youden_is_zero(*pooled)  # (stratum,)
    has_test = arr["n"] > 0
    systems = counts.systems
    pairs = label_pairs(systems) if pairs is None else pairs
    ia = np.array([i for i, _ in pairs], dtype=int)
    ib = np.array([j for _, j in pairs], dtype=int)
    cells = _pair_cells(counts, ia, ib)  # each (pair, stratum)
    totals = (arr["k"][ia], arr["n"][ia], arr["k"][ib], arr["n"][ib])
    tested = has_test[ia] & has_test[ib]
    pooled_pp = tuple(np.broadcast_to(c, tested.shape) for c in pooled)
    out = {}
    out["shared_est"], out["shared_se"] = _delta(cells, pooled_pp, None, totals,
                                                 tested & pooled_ok)  # fmt: skip
    if shared:
        out["est"], out["se"] = out["shared_est"], out["shared_se"]
        out["shared_bias"] = np.full(tested.shape, np.nan)
    elif (
        counts.design == "random" and counts.clusters is None and not counts.calibration_shared_over
    ):
        # As compare and estimate: the random design's MLE of each system, plug-in variances.
        rd = random_design_cells(*(arr[f] for f in ("k", "n", "tn", "m0", "tp", "m1")))
        theta_rd, var_rd = random_design_theta(rd), random_design_theta_variance(rd)
        ok = (arr["m0"] > 0) & (arr["m1"] > 0)
        valid = ok[ia] & ok[ib]
        out["est"] = np.where(valid, theta_rd[ia] - theta_rd[ib], np.nan)
        out["se"] = np.where(valid, np.sqrt(var_rd[ia] + var_rd[ib]), np.nan)
        out["shared_bias"] = shift[ia] - shift[ib]
    else:
        own_a, own_b = ([arr[f][x] for f in _CAL] for x in (ia, ib))
        out["est"], out["se"] = _delta(cells, own_a, own_b, totals, tested & own[ia] & own[ib])
        out["shared_bias"] = shift[ia] - shift[ib]
    coords = {**_pair_coords(systems, pairs), "stratum": counts.strata}
    dims = ("pair", "stratum")

    def da(name):
        return xr.DataArray(np.asarray(out[name], dtype=float).reshape(len(pairs), -1), dims=dims)

    est, se = da("est"), da("se")
    ci = xr.concat([est - z * se, est + z * se], dim="ci_bound").transpose(*dims, "ci_bound")
    return xr.Dataset(
        {
            "delta_theta": est,
            "delta_theta_se": se,
            "delta_theta_ci": ci.assign_coords(ci_bound=_CI),
            "prob_greater": xr.DataArray(stats.norm.cdf(est / se), dims=dims),
            "shared_delta_theta": da("shared_est"),
            "shared_se": da("shared_se"),
            "shared_bias": da("shared_bias"),
        },
        coords=coords,
    )


def random_design_cells(k, n, tn, m0, tp, m1) -> np.ndarray:
    """Return the random design's cells (..., 6) of the counts.

    Unlabelled items judged correct and incorrect, then the labelled tp, fp, fn, tn: the
    input of :func:`random_design_theta` and :func:`random_design_theta_variance` (shared by
    ``compare`` and :func:`comparison_table`, so that both give ``estimate``'s θ̂).
    """
    return np.stack([k, n - k, tp, m0 - tn, m1 - tp, tn], axis=-1)


def random_design_theta(cells: np.ndarray) -> np.ndarray:
    """Return the random-design MLE of θ from cells (..., 6), as ``estimate`` computes it.

    The cells: unlabelled items judged correct and incorrect, then the labelled tp, fp, fn,
    tn (:func:`~bayesjudge.core.likelihood.double_sampling_mle`, NaN where a verdict some
    item got has no labelled item).
    """
    k, rest, tp, fp, fn, tn = np.moveaxis(cells, -1, 0)
    return double_sampling_mle(k, k + rest, tn, tn + fp, tp, tp + fn)


def random_design_theta_variance(cells: np.ndarray) -> np.ndarray:
    """Return the plug-in asymptotic variance of the MLE of cells (..., 6).

    :func:`~bayesjudge.core.allocation.random_design_variance`'s delta method:
    (a − b)² φ(1 − φ)/N + [φ a(1 − a) + (1 − φ) b(1 − b)]/L, with a, b the shares truly
    correct among the labelled items judged correct, incorrect, φ the share of all N items
    judged correct and L the labelled items.
    """
    k, rest, tp, fp, fn, tn = (c.astype(float) for c in np.moveaxis(cells, -1, 0))
    total, labelled = k + rest + tp + fp + fn + tn, tp + fp + fn + tn
    with np.errstate(divide="ignore", invalid="ignore"):
        phi = (k + tp + fp) / total
        a = np.where(tp + fp > 0, tp / (tp + fp), 0.0)  # a term weighted by φ = 0 if none
        b = np.where(fn + tn > 0, fn / (fn + tn), 0.0)
        return (a - b) ** 2 * phi * (1 - phi) / total + (
            phi * a * (1 - a) + (1 - phi) * b * (1 - b)
        ) / labelled


def _pair_cells(counts: JudgeCounts, ia: np.ndarray, ib: np.ndarray) -> tuple[np.ndarray, ...]:
    """Return the 2×2 verdict tables ``(n11, n10, n01, n00)`` of the pairs as floats.

    Each of shape (pair, stratum).

    :func:`~bayesjudge.core.paired.pair_cells_many` (zeros without a joint verdict table).
    """
    shape = (len(ia), len(counts.strata))
    if not counts.has_joint:
        return tuple(np.zeros(shape) for _ in range(4))
    joint = counts.joint.transpose("stratum", "pattern").values
    verdicts = counts.joint_verdicts.transpose("pattern", "system").values
    return tuple(c.astype(float) for c in pair_cells_many(joint, verdicts, ia, ib))


def _bias_se(arr, pooled, a, b) -> np.ndarray:
    """:func:`~bayesjudge.core.paired.shared_calibration_bias_se` of the counts' arrays."""
    cols = (arr[v] for v in ("k", "n", "tn", "m0", "tp", "m1"))
    return shared_calibration_bias_se(*cols, pooled, a, b)


#: Half-normal median: |B̂| of an unbiased normal estimate is below 0.674 SE half the time.
_HALF_NORMAL_MEDIAN = float(stats.norm.isf(0.25))


def _recommend(counts: JudgeCounts, result: xr.Dataset | None, alpha: float):
    """Apply the design rule per stratum; return (designs, bases, plain-language text)."""
    k = len(counts.systems)
    designs, bases, reasons = [], [], []
    z1 = float(stats.norm.isf(alpha))
    for s in counts.strata:
        if k < 2:
            designs.append("shared")
            bases.append("one system")
            reasons.append(f"stratum {s}: one system, nothing to compare")
            continue
        if _shared_over_systems(counts):
            designs.append("unverified")
            bases.append("unverified")
            reasons.append(
                f"stratum {s}: one calibration set is shared by all systems, so ΔJ cannot be "
                f"estimated; label a calibration sample of each system's answers to check it"
            )
            continue
        r = result.sel(stratum=s)
        pairs = r["pair"].values.tolist()
        evidence = r["evidence_of_difference"].values
        n_ev, n_pairs = int(evidence.sum()), len(pairs)
        if n_ev:
            what = []
            for pair, ev in zip(pairs, evidence, strict=True):
                if not ev:
                    continue
                parts = []
                for name, label in (("delta_q0", "Δq0"), ("delta_q1", "Δq1"),
                                    ("delta_youden", "ΔJ")):  # fmt: skip
                    ci_name = "delta_youden_simultaneous_ci" if name == "delta_youden" else (
                        f"{name}_ci")  # fmt: skip
                    lo, hi = (float(v) for v in r[ci_name].sel(pair=pair).values)
                    if lo > 0 or hi < 0:
                        est = float(r[name].sel(pair=pair))
                        parts.append(f"{label} = {est:+.3f} [{lo:+.3f}, {hi:+.3f}]")
                what.append(f"{pair}: " + ", ".join(parts))
            head = (
                f"stratum {s}: the judge differs between systems in {n_ev} of {n_pairs} "
                f"pair(s) (simultaneous intervals excluding 0: " + "; ".join(what) + ")"
            )
            if k >= 3 and n_ev < n_pairs:
                designs.append("hierarchical")
                reasons.append(head + "; partial pooling lets the similar systems share")
            else:
                designs.append("system-specific")
                reasons.append(head)
            bases.append("difference")
            continue
        upper = r["shared_bias_upper"].values
        tol = BIAS_RATIO_MAX * r["shared_se"].values
        dj_single = r["delta_youden_excludes_0"].values
        if not np.isfinite(upper).all() or not np.isfinite(tol).all():
            designs.append("system-specific")
            bases.append("not evaluable")
            reasons.append(
                f"stratum {s}: no difference detected, but the shared-calibration bias cannot "
                f"be evaluated here (a system has no test items, or J = 0), so sharing cannot "
                f"be shown to be safe; keep system-specific calibration"
            )
            continue
        ratio = upper / r["shared_se"].values
        if (upper <= tol).all() and not dj_single.any():
            designs.append("shared")
            bases.append("equivalent")
            reasons.append(
                f"stratum {s}: no simultaneous interval of Δq0, Δq1 or ΔJ excludes 0, and the "
                f"shared-calibration bias is at most {float(upper.max()):.3f} "
                f"({100 * (1 - alpha):g}% upper bound; {float(ratio.max()):.2f} standard "
                f"errors of Δθ, ≤ {BIAS_RATIO_MAX})"
            )
            continue
        designs.append("system-specific")
        bases.append("inconclusive")
        worst = int(np.argmax(ratio))
        se_b = r["shared_bias_se"].values
        need = ((z1 + _HALF_NORMAL_MEDIAN) * se_b / tol) ** 2  # scale factor of every set
        factor = float(np.nanmax(need))
        ds = counts.dataset.sel(stratum=s)
        m_now = float(((ds["m0"] + ds["m1"]) / 2).mean())
        more = max(int(np.ceil((factor - 1) * m_now)), 1)
        single = (
            f" (ΔJ({pairs[int(np.argmax(dj_single))]}) excludes 0 on its own "
            f"{100 * (1 - alpha):g}% interval, which the simultaneous intervals do not "
            f"confirm)"
            if dj_single.any()
            else ""
        )
        reasons.append(
            f"stratum {s}: no difference detected (no simultaneous interval of Δq0, Δq1 or ΔJ "
            f"excludes 0){single}, but the calibration sets are too small to rule out a "
            f"shared-calibration bias of up to {float(upper[worst]):.3f} in Δθ({pairs[worst]}) "
            f"({float(ratio[worst]):.1f} standard errors of Δθ; sharing needs ≤ "
            f"{BIAS_RATIO_MAX}); keep system-specific calibration (safe) or label about "
            f"{more} more items per label for each system (≈ {factor:.1f}× the current "
            f"{m_now:.0f}), after which, if the judge is the same, this check passes about "
            f"half the time"
        )
    overall = max(designs, key=_ORDER.__getitem__)
    if overall == "system-specific" and "difference" not in bases:
        text = (
            "Keep system-specific calibration (calibration='separate'); sharing is not shown "
            "to be safe"
        )
    else:
        text = {
            "shared": "A shared calibration set is defensible",
            "hierarchical": "Use hierarchical calibration (calibration='hierarchical')",
            "system-specific": "Use system-specific calibration (calibration='separate')",
            "unverified": "The shared calibration cannot be checked",
        }[overall]
    return designs, bases, f"{text}: " + "; ".join(reasons) + "."


#: Pairs per chunk when posterior differences are summarised: bounds the memory of the draws
#: of the differences (pairs × chains × draws × strata) for reports of hundreds of systems.
_PAIR_CHUNK = 256


def posterior_differences(fit, var: str, pairs, ci_prob: float) -> xr.Dataset:
    """Posterior summary of ``var[a] − var[b]`` along ``system`` for the given index pairs.

    The numbers of :meth:`bayesjudge.Fit.compare` (``mean``, ``median``, ``sd``, ``ci`` —
    the linear-interpolation quantiles — and ``prob_greater``, from the differences taken draw
    by draw; equal up to rounding), for the listed pairs only and without keeping the draws:
    the pairs are summarised in chunks with numpy, so the time and memory grow with the
    number of pairs given, not with K(K − 1)/2.

    Parameters
    ----------
    fit : bayesjudge.Fit
    var : str
        Posterior variable with a ``system`` dim.
    pairs : list of tuple of int
        ``(i, j)`` positions of the systems (difference i minus j).
    ci_prob : float
        Probability of the equal-tailed interval.

    Returns
    -------
    xarray.Dataset
        Dim ``pair`` (labels ``"a - b"``, coords ``first``, ``second``) and the variable's
        other dims.
    """
    draws = fit.posterior[var]
    labels = draws["system"].values.tolist()
    rest = [d for d in draws.dims if d not in ("chain", "draw", "system")]
    values = draws.transpose("chain", "draw", "system", *rest).values
    values = values.reshape(-1, *values.shape[2:])  # (sample, system, *rest)
    lo, hi = (1 - ci_prob) / 2, (1 + ci_prob) / 2
    parts = {k: [] for k in ("mean", "median", "sd", "ci", "prob_greater")}
    for start in range(0, len(pairs), _PAIR_CHUNK):
        chunk = pairs[start : start + _PAIR_CHUNK]
        ia = np.array([i for i, _ in chunk], dtype=np.intp)
        ib = np.array([j for _, j in chunk], dtype=np.intp)
        diff = values[:, ia] - values[:, ib]  # (sample, pair, *rest), draw by draw
        q = np.quantile(diff, [lo, 0.5, hi], axis=0)  # linear, as xarray's quantile
        parts["mean"].append(diff.mean(0))
        parts["median"].append(q[1])
        parts["sd"].append(diff.std(0, ddof=1))
        parts["ci"].append(q[[0, 2]])
        parts["prob_greater"].append((diff > 0).mean(0))
    dims = ("pair", *rest)
    data = {k: (dims, np.concatenate(v, axis=0)) for k, v in parts.items() if k != "ci"}
    data["ci"] = (("ci_bound", *dims), np.concatenate(parts["ci"], axis=1))
    coords = {name: draws[name].values for name in rest if name in draws.coords}
    out = xr.Dataset(
        data,
        coords={
            **coords,
            "pair": [pair_label(labels[i], labels[j]) for i, j in pairs],
            "first": ("pair", [labels[i] for i, _ in pairs]),
            "second": ("pair", [labels[j] for _, j in pairs]),
            "ci_bound": ["lower", "upper"],
        },
    )
    out.attrs.update({"ci_prob": ci_prob, "ci_kind": "eti", "var": var, "dim": "system"})
    return out


def _posterior_block(fit, alpha: float, pairs=None) -> dict:
    """Posterior J, ΔJ and hierarchical scales from a Fit (ETI at 1 - alpha)."""
    post = fit.posterior
    ci_prob = 1 - alpha
    q = [alpha / 2, 1 - alpha / 2]
    out = {}
    sample = ("chain", "draw")
    if "youden" in post:
        j = post["youden"]
        out["youden_posterior"] = j.mean(sample)
        out["youden_posterior_ci"] = (
            j.quantile(q, dim=sample).rename(quantile="ci_bound").assign_coords(ci_bound=_CI)
        )
        if "system" in j.dims and j.sizes["system"] > 1 and pairs:
            cmp = posterior_differences(fit, "youden", pairs, ci_prob)
            out["delta_youden_posterior"] = cmp["mean"]
            out["delta_youden_posterior_ci"] = cmp["ci"]
    for name in ("q0_logit_scale", "q1_logit_scale"):
        if name in post:
            draws = post[name]
            out[name] = draws.mean(sample)
            out[f"{name}_ci"] = (
                draws.quantile(q, dim=sample)
                .rename(quantile="ci_bound")
                .assign_coords(ci_bound=_CI)
            )
    return out


# --------------------------------------------------------------------------- public API


def judge_diagnostics(
    counts: JudgeCounts,
    fit=None,
    *,
    alpha: float = 0.05,
    method: str = "newcombe",
    n_resamples: int = 2_000,
    random_seed=None,
    pairs=None,
) -> xr.Dataset:
    """Judge quality per system and its stability across systems, with a design recommendation.

    Parameters
    ----------
    counts : JudgeCounts
        Test and calibration counts per (system, stratum).
    fit : bayesjudge.Fit, optional
        A fitted model of these counts; adds posterior J, ΔJ and (hierarchical model) the
        posterior of the calibration scales σ.
    alpha : float, default 0.05
        Intervals have level ``1 - alpha``.
    method : {"newcombe", "agresti-caffo", "wald"}, default "newcombe"
        Closed-form interval of J and ΔJ (see :func:`bayesjudge.youden`); q0, q1 get Wilson
        intervals.
    n_resamples : int, default 2000
        Resamples of the percentile bootstrap of J and ΔJ (calibration items resampled).
    random_seed : int, numpy.random.Generator or None
        Seed of the bootstrap.
    pairs : sequence of (label, label), optional
        The pairs of systems ``(a, b)`` to diagnose (differences a minus b); every pair when
        None. A report of many systems passes the pairs it shows (each system against the
        best and its neighbours in rank) so that the cost grows linearly with the number of
        systems, not with the number of pairs; the simultaneous intervals of the design rule
        then cover these pairs (Bonferroni over the pairs given).

    Returns
    -------
    xarray.Dataset
        Over ``(system, stratum)``: ``q0``, ``q1``, ``youden`` and their ``*_ci`` (dim
        ``ci_bound``), ``youden_bootstrap_ci``. Over ``(pair, stratum)`` (pair labels
        ``"a - b"``, coords ``first``/``second``, differences a minus b): ``delta_youden``
        with ``delta_youden_ci`` and ``delta_youden_bootstrap_ci``; ``delta_youden_excludes_0``
        (the closed-form interval); ``delta_theta``, ``delta_theta_se``, ``delta_theta_ci``,
        ``prob_greater`` (closed-form Δθ of the counts' own design, normal approximation);
        ``shared_delta_theta``, ``shared_se`` (Fiedler App. B) and ``shared_bias`` (App. C at
        the estimates) of the shared-calibration difference; ``bias_ratio`` = ``|shared_bias| /
        shared_se``; ``shared_bias_se`` (delta method) and ``shared_bias_upper`` (one-sided
        1 − alpha upper bound of ``|bias|``); ``delta_q0``, ``delta_q1`` with simultaneous
        intervals ``delta_q0_ci``, ``delta_q1_ci`` and ``delta_youden_simultaneous_ci``;
        ``evidence_of_difference`` (one of the three excludes 0). Over ``stratum``:
        ``design`` and ``design_basis`` (``"difference"``, ``"equivalent"``,
        ``"inconclusive"``, ``"not evaluable"``, ``"unverified"`` or ``"one system"``). With
        a fit: ``youden_posterior``, ``youden_posterior_ci``, ``delta_youden_posterior``,
        ``delta_youden_posterior_ci`` and, for the hierarchical model, ``q0_logit_scale``,
        ``q1_logit_scale`` with ``*_ci``. Attrs: ``ci_prob``, ``ci_kind``, ``alpha``,
        ``method``, ``recommendation`` (plain words), ``design`` (the overall design),
        ``evidence_of_difference`` (any pair, any stratum), ``simultaneous_ci_prob`` (level
        of each simultaneous interval), ``shared_design`` (True when the counts or the fit
        share one calibration set over systems).

    Notes
    -----
    **Design rule.** It separates *evidence that the judge differs* between systems from
    *sharing not shown to be safe*. Applied per stratum; the overall design is the most
    cautious one, in the order shared < hierarchical < system-specific < unverified:

    1. *unverified* — the counts carry one calibration set shared over systems
       (``counts.calibration_shared_over`` includes ``"system"``): ΔJ is not estimable.
    2. **Evidence of a difference** — for some pair, a simultaneous interval of Δq0, Δq1 or
       ΔJ excludes 0. The family is all ``3 × pairs × strata`` intervals of the call, each at
       level 1 − alpha / (3 × pairs × strata) (Bonferroni; ``method`` intervals, Wilson-based
       for Δq0 and Δq1), so with an identical judge on every system the rule reports a
       difference anywhere with probability at most alpha. Δq0 and Δq1 are tested besides
       ΔJ because the App. C bias depends on each (a judge stricter on one system and more
       lenient on the other can keep ΔJ ≈ 0 and still bias Δθ). Then *system-specific*, or
       *hierarchical* with ≥ 3 systems when not every pair differs (partial pooling lets the
       similar systems share).
    3. *shared* (basis ``"equivalent"``) — no evidence of a difference, no single ΔJ interval
       (``delta_youden_ci``, which the CalibrationDesignWarning uses) excludes 0, **and** for
       every pair the one-sided 1 − alpha upper bound ``|B̂| + z SE(B̂)`` of the App. C bias
       (z the 1 − alpha normal quantile, 1.645 at alpha = 0.05) is at most
       ``BIAS_RATIO_MAX`` (0.5) × shared_se: a bias of half a standard error lowers a
       nominal 95% interval's coverage to 92.1%. This is an equivalence test (TOST): a bias
       larger than the tolerance passes it with probability at most alpha per pair.
    4. *inconclusive* — otherwise: no difference detected, but the calibration sets are too
       small to rule out a bias above the tolerance. The design returned is
       *system-specific*, which is valid whatever the judge does; the text gives the bound
       and about how many more items per label and system would make the check pass half the
       time if the judge is in fact the same (every set scaled by
       ((z + 0.674) SE(B̂) / (0.5 shared_se))², 0.674 being the median of ``|N(0, 1)|``;
       the test-set part of shared_se is held fixed, so this is approximate). A stratum where
       the bias cannot be evaluated (a system without test items, or J = 0) is treated the
       same way (basis ``"not evaluable"``).

    Rates, by simulation (``tests/estimate/test_diagnostics_slow.py``; two systems, θ = 0.7,
    q0 = 0.85, q1 = 0.9, n = 1000, m items per label and system; 1000 data sets, 500 for
    the last two): with an identical judge, evidence of a difference in 3.9% (m = 100),
    3.7% (m = 1000) and 5.0% (m = 10 000) of data sets (designed ≤ 5%); *shared* in 0% at
    m = 100 and 1000 and 83% at m = 10 000. Sharing is hard to confirm because SE(B̂)
    shrinks with the calibration size m while shared_se is mostly test noise (∝ 1/√n): with
    m = n, SE(B̂) ≈ 0.5 shared_se, so the bound stays above 0.5 shared_se; it falls below
    it typically once m is about ten times n. With q0 = 0.85 against 0.70 at m = 200:
    evidence of a difference in 87%, *system-specific* in 100% (the rest inconclusive).

    ``shared_bias`` is Fiedler's App. C bias evaluated at the estimates
    (:func:`~bayesjudge.core.paired.shared_calibration_shift`): for each system X,
    θ̂*_X − θ̂_X = [θ̂_X (q̂1_X − q̂1_c) − (1 − θ̂_X)(q̂0_X − q̂0_c)] / Ĵ_c, where q̂_c pools the
    calibration sets of all systems in the stratum (as ``counts.pooled_calibration()`` and
    ``calibration="shared"`` do) and θ̂ is the unclipped Rogan–Gladen estimate with the
    system's own calibration; the bias of Δθ̂ is the difference of the two, i.e.
    B̂ = shared_delta_theta − delta_theta. It equals
    :func:`bayesjudge.studies.comparison.shared_rg_bias` with ``shared_from="pooled"`` when
    each system's calibration set has m0 ∝ 1 − θ and m1 ∝ θ (equal random samples). It is an
    estimate, mostly calibration noise when the judge is stable; ``shared_bias_se`` is its
    delta-method SE over the test proportions p̂_a, p̂_b and every system's q̂0, q̂1 (all enter
    q̂_c), with binomial variances at (x + 1)/(m + 2); the paired covariance of p̂_a and p̂_b
    is left out (its coefficients 1/Ĵ_c − 1/Ĵ_X vanish for an identical judge). In the
    simulations above it matched the Monte Carlo SD of B̂ within 1% (identical judge) and
    5% (q0 0.85 against 0.70).

    The SEs are :func:`~bayesjudge.core.paired.rg_difference_se` (as ``bayesjudge.compare``
    with ``method="delta"``): with a joint verdict table their test term carries the
    covariance of the pair's verdicts on the items shared by all systems, and the other
    items of each system enter as independent; without one the systems are treated as
    independent, which overstates the SE when their verdicts are positively correlated. A
    stratum where a system has no test items (or a plug-in J = 0) gives NaN for its pairs.

    References
    ----------
    Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", Sec. 4.4, App. B, App. C,
    Sec. 7 (items 5-7).

    Examples
    --------
    >>> import bayesjudge as bj
    >>> from bayesjudge.diagnostics import judge_diagnostics
    >>> counts = bj.JudgeCounts.from_counts(
    ...     n=[1000, 1000], k=[600, 500], m0=[200, 200], tn=[160, 120],
    ...     m1=[200, 200], tp=[180, 180], system=["a", "b"])
    >>> d = judge_diagnostics(counts, random_seed=0)
    >>> print(f"{d.delta_youden.item():.2f} excludes 0: {d.delta_youden_excludes_0.item()}")
    0.20 excludes 0: True
    >>> d.attrs["design"]
    'system-specific'
    """
    counts = JudgeCounts(counts)
    alpha = check_alpha(alpha)
    if method not in ("newcombe", "agresti-caffo", "wald"):
        raise ValueError(
            f"method must be 'newcombe', 'agresti-caffo' or 'wald'; got {method!r} (the "
            f"bootstrap interval is always added as *_bootstrap_ci)."
        )
    missing = ~counts.has_calibration().values
    if missing.any():
        rows, cols = np.nonzero(missing)
        where = [(counts.systems[i], counts.strata[j]) for i, j in zip(rows, cols, strict=True)]
        raise ValueError(
            f"J needs calibration items of both true labels in every group; (system, stratum) "
            f"{where[:5]} have m0 = 0 or m1 = 0. Label some, or attach a calibration set with "
            f"counts.with_calibration_from(...) or counts.pooled_calibration()."
        )
    arr = _arrays(counts)
    rng = np.random.default_rng(random_seed)
    coords = {"system": counts.systems, "stratum": counts.strata}
    out = _judge_block(arr, alpha, method, n_resamples, rng)
    pairs = label_pairs(counts.systems, pairs)
    shared = _shared_over_systems(counts)
    if pairs:
        out |= _delta_youden_block(arr, pairs, shared, alpha, method, n_resamples, rng)
        coords |= _pair_coords(counts.systems, pairs)
    result = xr.Dataset(out, coords=coords)
    result = result.assign_coords(ci_bound=_CI)
    if pairs:
        result = _add_design_evidence(result, counts, arr, pairs, shared, alpha, method)
    designs, bases, text = _recommend(counts, result if pairs else None, alpha)
    result["design"] = xr.DataArray(np.array(designs, dtype=object), dims=("stratum",))
    result["design_basis"] = xr.DataArray(np.array(bases, dtype=object), dims=("stratum",))
    fit_shared = False
    if fit is not None:
        result = result.assign(_posterior_block(fit, alpha, pairs))
        fit_shared = fit.config.get("calibration") == "shared"
    overall = max(designs, key=_ORDER.__getitem__)
    result.attrs.update(
        {
            "ci_prob": 1 - alpha,
            "ci_kind": f"{method} (closed form), percentile bootstrap"
            + (", posterior eti" if fit is not None else ""),
            "alpha": alpha,
            "method": method,
            "n_resamples": int(n_resamples),
            "design": overall,
            "evidence_of_difference": bool(pairs and result["evidence_of_difference"].values.any()),
            "recommendation": text,
            "shared_design": bool(shared or fit_shared),
        }
    )
    return result


def _interval(lo, hi, dims=("system", "stratum")) -> xr.DataArray:
    return xr.DataArray(np.stack([lo, hi], axis=-1), dims=(*dims, "ci_bound"))


def _judge_block(arr, alpha, method, n_resamples, rng) -> dict:
    """q0, q1 (Wilson) and J (``method`` and bootstrap intervals) per (system, stratum)."""
    z = float(stats.norm.isf(alpha / 2))
    dims = ("system", "stratum")
    out = {}
    for name, x, m in (("q0", "tn", "m0"), ("q1", "tp", "m1")):
        out[name] = xr.DataArray(arr[x] / arr[m], dims=dims)
        out[f"{name}_ci"] = _interval(*wilson_limits(arr[x], arr[m], z))
    cal = (arr["tn"], arr["m0"], arr["tp"], arr["m1"])
    j = youden(*cal, alpha=alpha, method=method)
    jb = youden(*cal, alpha=alpha, method="bootstrap", n_resamples=n_resamples, random_seed=rng)
    out["youden"] = xr.DataArray(np.asarray(j.estimate, dtype=float), dims=dims)
    out["youden_ci"] = _interval(j.lower, j.upper)
    out["youden_bootstrap_ci"] = _interval(jb.lower, jb.upper)
    return out


def _delta_youden_block(arr, pairs, shared, alpha, method, n_resamples, rng) -> dict:
    """ΔJ per (pair, stratum) with its ``method`` and bootstrap intervals (NaN when shared)."""
    pdims = ("pair", "stratum")
    cal = (arr["tn"], arr["m0"], arr["tp"], arr["m1"])
    ia = [i for i, _ in pairs]
    ib = [k for _, k in pairs]
    a_cal = [c[ia] for c in cal]
    b_cal = [c[ib] for c in cal]
    d = youden_difference(*a_cal, *b_cal, alpha=alpha, method=method)
    db = youden_difference(
        *a_cal, *b_cal, alpha=alpha, method="bootstrap", n_resamples=n_resamples,
        random_seed=rng,
    )  # fmt: skip
    if shared:  # one set copied to every system: ΔJ is 0 by construction, not evidence
        nan = np.full(np.shape(d.estimate), np.nan)
        d = type(d)(nan, nan, nan)
        db = type(db)(nan, nan, nan)
    return {
        "delta_youden": xr.DataArray(np.asarray(d.estimate, dtype=float), dims=pdims),
        "delta_youden_ci": _interval(d.lower, d.upper, pdims),
        "delta_youden_bootstrap_ci": _interval(db.lower, db.upper, pdims),
        "delta_youden_excludes_0": xr.DataArray(
            (np.asarray(d.lower) > 0) | (np.asarray(d.upper) < 0), dims=pdims
        ),
    }


def _add_design_evidence(result, counts, arr, pairs, shared, alpha, method) -> xr.Dataset:
    """Add Δθ, the shared-design bias and the simultaneous Δq0, Δq1, ΔJ of the design rule."""
    pdims = ("pair", "stratum")
    ia = [i for i, _ in pairs]
    ib = [k for _, k in pairs]
    table = comparison_table(counts, alpha, pairs)
    result = result.merge(table, compat="override", join="exact")
    result["bias_ratio"] = abs(result["shared_bias"]) / result["shared_se"]
    intervals = 3 * len(pairs) * arr["n"].shape[1]
    if alpha / intervals < MIN_ALPHA:  # say so in the caller's terms, not the adjusted level
        raise ValueError(
            f"alpha={alpha:g} is too small for the design rule's {intervals} simultaneous "
            f"intervals (3 × {len(pairs)} pairs × {arr['n'].shape[1]} strata, each at level "
            f"alpha / {intervals}, which must be at least {MIN_ALPHA:g}); pass alpha >= "
            f"{MIN_ALPHA * intervals:.3g}, e.g. 0.05, or fewer pairs with pairs=."
        )
    sim = simultaneous_differences(*(arr[f] for f in _CAL), ia, ib, alpha, method)
    pooled = _pooled_calibration(arr, shared)
    se_b = _bias_se(arr, pooled, ia, ib)
    for name in ("delta_q0", "delta_q1"):
        result[name] = xr.DataArray(sim[name], dims=pdims)
        result[f"{name}_ci"] = xr.DataArray(sim[f"{name}_ci"], dims=(*pdims, "ci_bound"))
    result["delta_youden_simultaneous_ci"] = xr.DataArray(
        sim["delta_youden_simultaneous_ci"], dims=(*pdims, "ci_bound")
    )
    excl = [
        (result[v].sel(ci_bound="lower") > 0) | (result[v].sel(ci_bound="upper") < 0)
        for v in ("delta_q0_ci", "delta_q1_ci", "delta_youden_simultaneous_ci")
    ]
    result["evidence_of_difference"] = (excl[0] | excl[1] | excl[2]).drop_vars(
        "ci_bound", errors="ignore"
    )
    result["shared_bias_se"] = xr.DataArray(se_b, dims=pdims)
    z1 = float(stats.norm.isf(alpha))
    result["shared_bias_upper"] = abs(result["shared_bias"]) + z1 * result["shared_bias_se"]
    if shared:
        for name in ("delta_q0", "delta_q1", "shared_bias_se", "shared_bias_upper"):
            result[name] = result[name].where(False)
        for name in ("delta_q0_ci", "delta_q1_ci", "delta_youden_simultaneous_ci"):
            result[name] = result[name].where(False)
        result["evidence_of_difference"] = result["evidence_of_difference"] & False
    result = result.assign_coords(ci_bound=_CI)
    result.attrs["simultaneous_ci_prob"] = 1 - sim["level"]
    return result


def _required_calibration(p, q0, q1, n, m0, m1, alpha, target):
    """Smallest plan (m0', m1') beyond the current labels predicted to reach ``target``.

    The labels collected so far are the pilot, with their own per-type sizes
    (``allocation_report(..., m0_pilot=m0, m1_pilot=m1)``): the plug-ins q̃ = (x + 1)/(m + 2)
    use all of them, and only splits with ``m0' >= m0`` and ``m1' >= m1`` are searched, so no
    collected label is given up. Returns the exact-split ``AllocationOption`` of the smallest
    total ``m > m0 + m1`` whose predicted length is at most ``target`` (the caller found the
    current interval wider than the target), or None where no total up to 10^7 reaches it.
    The best predicted length falls strictly with ``m`` (one more label of either type lowers
    it), so bisection finds the smallest such total.
    """
    m0, m1 = int(m0), int(m1)
    now = m0 + m1

    def plan(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LowJudgeQualityWarning)
            r = allocation_report(m, p, q0, q1, n=int(n), alpha=alpha, m0_pilot=m0, m1_pilot=m1)
        return r.exact

    limit = 10_000_000
    lo, hi = now, now + 1  # lo: the current labels, known to miss the target
    while float(plan(hi).length) > target:
        if hi >= limit:
            return None
        lo, hi = hi, min(2 * hi, limit)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if float(plan(mid).length) <= target:
            hi = mid
        else:
            lo = mid
    return plan(hi)


def _given_differences(differences: xr.Dataset, wanted: list[tuple], level: str):
    """Estimate, interval, P(θ_a > θ_b) (or None) and labels from a ``bj.compare`` Dataset.

    ``wanted`` lists the (first, second) systems checked; the rows of ``differences`` are
    taken by its coords ``first`` and ``second`` in that order, never by the ``"a - b"``
    label (a system may be called ``"x - y"``).
    """
    missing = [v for v in ("estimate", "ci", "first", "second") if v not in differences]
    if missing or "pair" not in differences.dims:
        raise ValueError(
            f"differences must be a bayesjudge.compare(...) Dataset with dim 'pair', "
            f"variables 'estimate' and 'ci' and coords 'first' and 'second'; it lacks "
            f"{missing or ['dim pair']}."
        )
    firsts = differences["first"].values.tolist()
    seconds = differences["second"].values.tolist()
    row = {}
    for p, key in enumerate(zip(firsts, seconds, strict=True)):
        row.setdefault(key, p)
    absent = [pair for pair in wanted if pair not in row]
    if absent:
        raise ValueError(
            f"differences has no pair(s) {_shown_value(absent[:10])} (by its coords first "
            "and second); pass compare(counts, ...) of the same counts and pairs."
        )
    differences = differences.isel(pair=[row[pair] for pair in wanted])
    est, ci = differences["estimate"], differences["ci"]
    prob = None
    if "se" in differences:  # delta method: the normal approximation the interval uses
        prob = xr.apply_ufunc(stats.norm.cdf, est / differences["se"])
    ci_prob = differences.attrs.get("ci_prob")
    tie_level = level if ci_prob is None else f"{100 * float(ci_prob):g}%"
    source = str(differences.attrs.get("ci_kind", differences.attrs.get("method", "frequentist")))
    return est, ci, prob, source, tie_level


def check_comparison(
    counts: JudgeCounts,
    fit=None,
    *,
    target_width: float | None = None,
    alpha: float = 0.05,
    warn: bool = True,
    random_seed=None,
    differences: xr.Dataset | None = None,
    diagnostics: xr.Dataset | None = None,
    pairs=None,
) -> list[Diagnosis]:
    """Check a comparison of systems for the problems Fiedler's checklist names.

    Parameters
    ----------
    counts : JudgeCounts
        Test and calibration counts per (system, stratum).
    fit : bayesjudge.Fit, optional
        When given, J and Δθ come from its posterior (and the design check also covers a
        fit with ``calibration="shared"``).
    target_width : float, optional
        Requested full width of each system's 1 − alpha interval of θ; enables the
        calibration-size check.
    alpha : float, default 0.05
        Level of all intervals.
    warn : bool, default True
        Also emit every diagnosis as a Python warning of its ``category``.
    random_seed : int, numpy.random.Generator or None
        Seed of the bootstrap inside :func:`judge_diagnostics`.
    differences : xarray.Dataset, optional
        A ``bayesjudge.compare(counts, ...)`` result (dims ``pair``, ``stratum``; variables
        ``estimate``, ``ci`` and, for ``method="delta"``, ``se``). Without a fit, the near-tie
        check then uses its intervals (e.g. the paired bootstrap a report shows) instead of
        the closed-form delta intervals of :func:`judge_diagnostics`; P(θ_a > θ_b) is quoted
        only where it has an SE.
    diagnostics : xarray.Dataset, optional
        The result of :func:`judge_diagnostics` for the same ``counts``, ``fit`` and ``alpha``,
        when the caller has it already (a report shows it); computed here otherwise.
    pairs : sequence of (label, label), optional
        The pairs of systems to check (see :func:`judge_diagnostics`); every pair when None.
        Ignored when ``diagnostics`` is given (its pairs are used).

    Returns
    -------
    list of Diagnosis
        Empty when nothing is wrong. With ``warn``, each kind of finding is emitted as one
        warning (:func:`emit_grouped`): a single finding with its full message, several as
        one message that says how many, what to do, and lists :data:`MAX_LISTED` of them.

    Warns
    -----
    LowJudgeQualityWarning
        ``"low_j"``: Ĵ < 0.2 (``bayesjudge.estimate.LOW_J_THRESHOLD``; errors amplified
        more than 5×) or the interval of J reaches 0 (posterior ETI with a fit, else the
        Newcombe interval): the one low-J rule, :func:`bayesjudge.core.kernels.low_j`, which
        ``bayesjudge.estimate`` applies too. When the whole interval is below 0 the message
        says the judge is worse than chance (verdicts anti-correlated with the truth; check
        for swapped labels) and gives the amplification ``1/|J|``.
    CalibrationDesignWarning
        ``"calibration_design"``: a ΔJ interval (Newcombe, 1 − alpha, one per pair and
        stratum) excludes 0, or the design rule of :func:`judge_diagnostics` finds evidence
        of a difference (a simultaneous interval of Δq0, Δq1 or ΔJ excludes 0: the App. C
        bias depends on q0 and q1 separately, so a difference in either makes sharing
        indefensible even when ΔJ ≈ 0). So a shared calibration set is not defensible; the
        message gives ΔJ, the differing Δq, and the App. C bias that sharing implies. Where
        only the single ΔJ interval excludes 0 the message says that the simultaneous
        intervals do not confirm it (with an identical judge about alpha of the single
        intervals exclude 0).
    NearTieWarning
        ``"near_tie"``: the Δθ interval [L, U] includes 0 (a tie; the message starts "Tie:"),
        or excludes it by less than :data:`NEAR_TIE_FRACTION` (0.3) of its half-width
        (``min(|L|, |U|) < 0.3 (U − L)/2``; "Near tie:"): the ranking of the pair is fragile.
        For a normal interval this is ``|Δθ̂|`` < 1.3 z SE (2.55 SE at 95%), i.e.
        P(θ_a > θ_b) between 0.005 and 0.995 — about where a 99% interval would include 0: it
        fires for 98.9% of truly tied pairs, and for a true difference of 2, 3, 4 or 5 SE in
        71%, 33%, 7% or 0.7% of data sets (normal theory). The fraction was 0.5 (2.94 SE)
        before, which called Δθ = +0.29 [0.09, 0.49] with P = 0.998 a near tie. Δθ is the
        posterior ETI and
        P(θ_a > θ_b) with a fit, else the ``differences`` given, else the closed-form
        interval of :func:`judge_diagnostics`. P is printed as "< 0.001" / "> 0.999" at the
        ends, as in the report.
    CalibrationSizeWarning
        ``"calibration_size"``: with ``target_width``, a group's Lang–Reiczigel interval is
        wider than the target; the message gives how many more truly-incorrect and
        truly-correct labels are predicted to reach it — the smallest total whose exact split
        (:func:`bayesjudge.core.allocation_report` with the labels so far as a pilot of their
        own sizes, ``m0_pilot=m0, m1_pilot=m1``) reaches the target, never fewer labels of a type
        than are already collected — or says that no calibration size can because the test
        set alone is too small. ``values`` holds the planned ``m0``, ``m1`` and the new
        labels ``more_m0``, ``more_m1``.

    Examples
    --------
    >>> import warnings
    >>> import bayesjudge as bj
    >>> from bayesjudge.diagnostics import check_comparison
    >>> counts = bj.JudgeCounts.from_counts(
    ...     n=[1000, 1000], k=[600, 500], m0=[200, 200], tn=[160, 120],
    ...     m1=[200, 200], tp=[180, 180], system=["a", "b"])
    >>> found = check_comparison(counts, warn=False, random_seed=0)
    >>> [d.code for d in found]
    ['calibration_design']
    >>> print(found[0].message[:73])
    ΔJ(a - b) = 0.200 [0.092, 0.304] (95% interval) in stratum all excludes 0
    """
    counts = JudgeCounts(counts)
    alpha = check_alpha(alpha)
    if target_width is not None and (
        isinstance(target_width, bool)
        or not isinstance(target_width, numbers.Real)
        or not 0 < float(target_width) <= 2
    ):  # a number, as alpha: the text "0.1" is refused, not read
        raise ValueError(
            f"target_width must be a number in (0, 2], the full width of a θ interval, e.g. "
            f"0.1; got {_shown_value(target_width)}."
        )
    if diagnostics is None:
        # The checks use the closed-form and posterior intervals only; few resamples suffice.
        diag = judge_diagnostics(
            counts, fit, alpha=alpha, random_seed=random_seed, n_resamples=200, pairs=pairs
        )
    else:
        if diagnostics.attrs.get("alpha") != alpha or diagnostics.sizes.get("system") != len(
            counts.systems
        ):
            raise ValueError(
                "diagnostics must come from judge_diagnostics(counts, fit, alpha=alpha) with "
                f"the same counts and alpha={alpha}; got alpha={diagnostics.attrs.get('alpha')} "
                f"and {diagnostics.sizes.get('system')} systems for {len(counts.systems)}."
            )
        diag = diagnostics
    level = f"{100 * (1 - alpha):g}%"
    found = _low_j_findings(counts, diag, alpha, level)
    pairs = diag["pair"].values.tolist() if "pair" in diag.coords else []
    found += _design_findings(counts, diag, fit, alpha, level, pairs)
    if pairs:
        found += _near_tie_findings(counts, diag, fit, alpha, level, pairs, differences)
    if target_width is not None:
        found += _calibration_size_findings(counts, alpha, level, float(target_width))

    if warn:
        emit_grouped(found, stacklevel=2)
    return found


def _low_j_findings(counts: JudgeCounts, diag: xr.Dataset, alpha: float, level: str):
    """``"low_j"`` findings: the one low-J rule (:func:`~bayesjudge.core.kernels.low_j`).

    Ĵ and its Newcombe interval from the counts (as ``bj.estimate``), or the posterior J and
    its ETI when ``diag`` has them (a fit); every class but ``"fine"`` is a finding.
    """
    use_post = "youden_posterior" in diag
    if use_post:
        j = diag["youden_posterior"].broadcast_like(diag["youden"])
        j_ci = diag["youden_posterior_ci"].broadcast_like(diag["youden_ci"])
        j_values = j.transpose("system", "stratum").values
        j_bounds = j_ci.transpose("system", "stratum", "ci_bound").values
        category = low_j_category(j_values, j_bounds[..., 0], j_bounds[..., 1])
        source = "posterior"
    else:
        arr = _arrays(counts, effective=True)  # labelled items judged several times
        rule = low_j(*(arr[f] for f in _CAL), alpha, undefined_at_zero=False)
        j_values = np.asarray(rule.youden, dtype=float)
        j_bounds = np.stack([rule.lower, rule.upper], axis=-1)
        category = np.asarray(rule.category)
        source = "Newcombe"
    found = []
    for s_index, t_index in zip(*np.nonzero(category != "fine"), strict=True):
        sys, st = counts.systems[s_index], counts.strata[t_index]
        jj = float(j_values[s_index, t_index])
        lo, hi = (float(v) for v in j_bounds[s_index, t_index])
        head = (
            f"J = {jj:.2f} [{lo:.2f}, {hi:.2f}] ({level} {source} interval) for "
            f"{group_label(sys, st)}"
        )
        if hi < 0:  # the whole interval below 0: worse than chance, not merely weak
            msg = (
                f"{head}: worse than chance (J < 0): the judge's verdicts are "
                f"anti-correlated with the truth; check for swapped labels (--positive). "
                f"If the labels are right, the corrected estimate's error is amplified "
                f"1/|J| ≈ {1 / abs(jj):.1f}×; use a better judge or prompt."
            )
        else:
            amp = f"≈ {1 / abs(jj):.1f}×" if abs(jj) > 0.02 else "without bound"
            msg = (
                f"{head}: the corrected estimate's error is amplified "
                f"{'1/J' if jj > 0 else '1/|J|'} {amp}"
                + ("" if lo > 0 else " and the interval cannot rule out a judge no better "
                   "than chance")
                + ". Treat its estimates with caution and weaken the claim; use a better "
                "judge or prompt, or label more calibration items of both kinds."
            )  # fmt: skip
        found.append(
            Diagnosis("low_j", "warning", msg, LowJudgeQualityWarning, sys, st,
                      {"J": jj, "lower": lo, "upper": hi,
                       "amplification": 1 / abs(jj) if jj != 0 else float("inf")},
                      f"{group_label(sys, st)}: J = {jj:.2f} [{lo:.2f}, {hi:.2f}]")
        )  # fmt: skip
    return found


def _design_findings(counts, diag, fit, alpha, level, pairs) -> list[Diagnosis]:
    """``"calibration_design"`` findings: a ΔJ interval or the design rule finds a difference."""
    found: list[Diagnosis] = []
    fit_shared = fit is not None and fit.config.get("calibration") == "shared"
    simultaneous = f"{100 * diag.attrs.get('simultaneous_ci_prob', np.nan):.4g}%"
    arrays = {}
    if pairs:  # numpy views over (pair, stratum[, ci_bound]): no per-pair xarray selection
        for name in ("delta_youden_excludes_0", "evidence_of_difference", "delta_youden",
                     "shared_bias", "shared_se", "delta_q0", "delta_q1"):  # fmt: skip
            arrays[name] = diag[name].transpose("pair", "stratum").values
        for name in ("delta_youden_ci", "delta_q0_ci", "delta_q1_ci"):
            arrays[name] = diag[name].transpose("pair", "stratum", "ci_bound").values
        flagged = arrays["delta_youden_excludes_0"] | arrays["evidence_of_difference"]
    else:
        flagged = np.zeros((0, len(counts.strata)), dtype=bool)
    for p_index, t_index in zip(*np.nonzero(flagged), strict=True):
        pair, st = pairs[p_index], counts.strata[t_index]
        shown_pair, shown_st = terminal_safe(pair), terminal_safe(st)
        single = bool(arrays["delta_youden_excludes_0"][p_index, t_index])
        evidence = bool(arrays["evidence_of_difference"][p_index, t_index])
        dj = float(arrays["delta_youden"][p_index, t_index])
        lo, hi = (float(v) for v in arrays["delta_youden_ci"][p_index, t_index])
        bias = float(arrays["shared_bias"][p_index, t_index])
        se = float(arrays["shared_se"][p_index, t_index])
        now = (
            "This fit uses calibration='shared', so its Δθ is biased"
            if fit_shared
            else "Sharing one calibration set would bias Δθ"
        )
        parts = []
        for name, label in (("delta_q0", "Δq0"), ("delta_q1", "Δq1")):
            c_lo, c_hi = (float(v) for v in arrays[f"{name}_ci"][p_index, t_index])
            if c_lo > 0 or c_hi < 0:
                est = float(arrays[name][p_index, t_index])
                parts.append(f"{label} = {est:+.3f} [{c_lo:+.3f}, {c_hi:+.3f}]")
        if single:
            head = (
                f"ΔJ({shown_pair}) = {dj:.3f} [{lo:.3f}, {hi:.3f}] ({level} interval) in "
                f"stratum {shown_st} excludes 0"
            )
            if parts:
                head += f", and so does {', '.join(parts)} ({simultaneous} simultaneous)"
        else:  # ΔJ covers 0 but q0 or q1 differs: App. C bias depends on each, not on ΔJ
            head = (
                f"{' and '.join(parts)} ({simultaneous} simultaneous interval) for "
                f"{shown_pair} in stratum {shown_st} excludes 0 although ΔJ = {dj:.3f} "
                f"[{lo:.3f}, {hi:.3f}] "
                f"({level} interval) does not"
            )
        n_single = diag.sizes["pair"] * diag.sizes["stratum"]
        caveat = (
            ""
            if evidence
            else f" This ΔJ interval is unadjusted (one per pair and stratum, {n_single} in "
            f"all); the simultaneous intervals of the design rule do not confirm it, so it "
            f"may be chance (with an identical judge about {100 * alpha:g}% of such "
            f"intervals exclude 0)."
        )
        verdict = (
            "the judge errs differently on the two systems' answers, so a shared "
            "calibration set is not defensible"
            if evidence
            else "the judge may err differently on the two systems' answers, so a shared "
            "calibration set is not shown to be defensible"
        )
        msg = (
            f"{head}: {verdict} (Fiedler Sec. 4.4). {now} by about "
            f"{bias:+.3f} (Fiedler App. C at the estimates; {abs(bias) / se:.1f} standard "
            f"errors of Δθ). Use calibration='separate'"
            + (" or 'hierarchical'" if len(counts.systems) >= 3 else "")
            + " with a calibration sample of each system's answers."
            + caveat
        )
        found.append(
            Diagnosis("calibration_design", "warning", msg, CalibrationDesignWarning, pair,
                      st, {"delta_J": dj, "lower": lo, "upper": hi, "shared_bias": bias,
                           "shared_se": se, "evidence_of_difference": evidence},
                      f"{shown_pair} in stratum {shown_st}: ΔJ = {dj:+.3f} [{lo:+.3f}, "
                      f"{hi:+.3f}], shared-calibration bias {bias:+.3f}")
        )  # fmt: skip
    return found


def _near_tie_findings(counts, diag, fit, alpha, level, pairs, differences) -> list[Diagnosis]:
    """``"near_tie"`` findings: the Δθ interval includes 0 or misses it narrowly."""
    found: list[Diagnosis] = []
    position = {x: i for i, x in enumerate(counts.systems)}
    firsts, seconds = diag["first"].values.tolist(), diag["second"].values.tolist()
    index = [(position[a], position[b]) for a, b in zip(firsts, seconds, strict=True)]
    if fit is not None:
        cmp = posterior_differences(fit, "theta", index, 1 - alpha)
        est, ci, prob = cmp["mean"], cmp["ci"], cmp["prob_greater"]
        source, tie_level = "posterior", level
    elif differences is not None:
        wanted = list(zip(firsts, seconds, strict=True))
        est, ci, prob, source, tie_level = _given_differences(differences, wanted, level)
    else:
        est, ci, prob = diag["delta_theta"], diag["delta_theta_ci"], diag["prob_greater"]
        source, tie_level = "closed-form", level

    def values(da, *extra):  # every source is in the order of diag's pairs already
        if "stratum" not in da.dims:
            da = da.expand_dims(stratum=counts.strata)
        return da.transpose("pair", "stratum", *extra).values

    est_v = values(est)
    ci_v = values(ci, "ci_bound")
    prob_v = None if prob is None else values(prob)
    lo_v, hi_v = ci_v[..., 0], ci_v[..., 1]
    half_v = (hi_v - lo_v) / 2
    inside_v = (lo_v <= 0) & (0 <= hi_v)
    near_v = np.minimum(abs(lo_v), abs(hi_v))
    with np.errstate(invalid="ignore"):
        tie = np.isfinite(half_v) & (inside_v | (near_v < NEAR_TIE_FRACTION * half_v))
    for p_index, t_index in zip(*np.nonzero(tie), strict=True):
        pair, st = pairs[p_index], counts.strata[t_index]
        lo, hi = float(lo_v[p_index, t_index]), float(hi_v[p_index, t_index])
        half, near = float(half_v[p_index, t_index]), float(near_v[p_index, t_index])
        inside = bool(inside_v[p_index, t_index])
        d = float(est_v[p_index, t_index])
        pg = None if prob_v is None else float(prob_v[p_index, t_index])
        first, second = (terminal_safe(x) for x in (firsts[p_index], seconds[p_index]))
        p_text = (
            ""
            if pg is None
            else f", P(θ_{first} > θ_{second}) {format_probability(pg, relation=True)}"
        )
        numbers = f"Δθ({terminal_safe(pair)}) = {d:+.3f} [{lo:+.3f}, {hi:+.3f}]"
        where = (
            f"{'Tie' if inside else 'Near tie'}: {numbers} ({tie_level} {source}) in "
            f"stratum {terminal_safe(st)}{p_text}. "
        )
        if inside:
            msg = where + (
                "The interval includes 0: the data do not establish which system is "
                "better. Do not rank them on this; report a tie, or collect more test "
                "or calibration items."
            )
        else:
            msg = where + (
                f"The interval excludes 0 by only {near:.3f}, less than "
                f"{NEAR_TIE_FRACTION:g} of its half-width ({half:.3f}): a small residual "
                f"bias (e.g. from calibration mismatch) could change the conclusion. Do not "
                f"claim a direction on this alone; collect more test or calibration items, "
                f"or report it as a tie."
            )
        found.append(
            Diagnosis("near_tie", "caution", msg, NearTieWarning, pair, st,
                      {"delta_theta": d, "lower": lo, "upper": hi,
                       "prob_greater": pg, "margin": near, "includes_0": inside},
                      f"{numbers} in stratum {terminal_safe(st)}{p_text}"
                      + ("" if inside else f" (misses 0 by {near:.3f})"))
        )  # fmt: skip
    return found


def _random_design_size_findings(counts, alpha, level, target) -> list[Diagnosis]:
    """``"calibration_size"`` of the random design: its likelihood width, random labels to add.

    The interval ``estimate`` reports for this design (the profile likelihood,
    :func:`~bayesjudge.core.likelihood.likelihood_interval`) and the plan of
    :func:`~bayesjudge.core.allocation.labels_for_width` at the MLE θ̂, q̂0, q̂1: more items
    labelled at random among the judged ones, not a stratified calibration sample.
    """
    found: list[Diagnosis] = []
    arr = _arrays(counts)
    for i, sys in enumerate(counts.systems):
        for t, st in enumerate(counts.strata):
            n, k, m0, tn, m1, tp = (int(arr[f][i, t]) for f in ("n", "k", "m0", "tn", "m1", "tp"))
            judged, labelled = n + m0 + m1, m0 + m1
            if judged == 0 or labelled == 0:
                continue
            res = likelihood_interval(k, n, tn, m0, tp, m1, alpha=alpha)
            width = float(res.upper - res.lower)
            if not width > target:
                continue
            theta, fp, fn = float(res.estimate), m0 - tn, m1 - tp
            phi = (k + tp + fp) / judged
            with np.errstate(divide="ignore", invalid="ignore"):
                # the MLE of q1, q0 from the shares truly correct among each verdict
                q1 = phi * (tp / (tp + fp)) / theta if tp + fp else 1.0
                q0 = (1 - phi) * (tn / (tn + fn)) / (1 - theta) if tn + fn else 1.0
            head = (
                f"The {level} interval of θ for {group_label(sys, st)} is {width:.3g} wide, "
                f"above the target {target:.3g}, with {labelled} of the {judged} judged items "
                f"labelled at random. "
            )
            plan = None
            if np.isfinite([theta, q0, q1]).all():
                plan = labels_for_width(
                    target, theta, min(max(q0, 0.0), 1.0), min(max(q1, 0.0), 1.0),
                    judged=judged, alpha=alpha,
                )  # fmt: skip
            values = {"width": width, "target": target, "m0": None, "m1": None}
            if plan is None or not bool(plan.reachable):
                msg = head + (
                    f"Labelling all {judged} judged items would not reach it (random design, "
                    "bayesjudge.core.labels_for_width); add test items, or use a better judge."
                )
            else:
                more = int(plan.labels) - labelled
                msg = head + (
                    f"Label about {more} more item{'s' * (more != 1)} drawn at random from the "
                    f"judged ones ({int(plan.labels)} in all): predicted to give "
                    f"{float(plan.width):.3g} (bayesjudge.core.labels_for_width, random design, "
                    "at the estimates)."
                )
                values.update(labels=int(plan.labels), more_labels=more,
                              predicted_width=float(plan.width))  # fmt: skip
            found.append(
                Diagnosis("calibration_size", "warning", msg, CalibrationSizeWarning, sys, st,
                          values, f"{group_label(sys, st)}: {width:.3g} wide, target "
                          f"{target:.3g}")
            )  # fmt: skip
    return found


def _calibration_size_findings(counts, alpha, level, target) -> list[Diagnosis]:
    """``"calibration_size"`` findings: θ intervals wider than ``target``; the labels to add."""
    if counts.design == "random" and not counts.calibration_shared_over:
        return _random_design_size_findings(counts, alpha, level, target)
    found: list[Diagnosis] = []
    arr = _arrays(counts)
    with np.errstate(divide="ignore", invalid="ignore"):
        p, q0, q1 = arr["k"] / arr["n"], arr["tn"] / arr["m0"], arr["tp"] / arr["m1"]
    for i, sys in enumerate(counts.systems):
        for t, st in enumerate(counts.strata):
            if arr["n"][i, t] == 0:
                continue
            args = (p[i, t], q0[i, t], q1[i, t], arr["n"][i, t], arr["m0"][i, t],
                    arr["m1"][i, t])  # fmt: skip
            width = float(lang_reiczigel_length(*args, alpha=alpha, clip=True))
            if width <= target:
                continue
            need = _required_calibration(*args, alpha, target)
            m_now = int(arr["m0"][i, t] + arr["m1"][i, t])
            head = (
                f"The {level} interval of θ for {group_label(sys, st)} is {width:.3f} wide, "
                f"above the target {target:.3f}, with m0 = {int(arr['m0'][i, t])}, "
                f"m1 = {int(arr['m1'][i, t])} calibration items. "
            )
            if need is None:
                msg = head + (
                    f"No calibration size reaches it: the {int(arr['n'][i, t])} test items "
                    f"alone give a wider interval. Add test items, or use a better judge."
                )
                values = {"width": width, "target": target, "m0": None, "m1": None}
            else:
                m0_now, m1_now = int(arr["m0"][i, t]), int(arr["m1"][i, t])
                m0n, m1n = int(need.m0), int(need.m1)
                more = [f"{x} more truly-{kind}"
                        for x, kind in ((m0n - m0_now, "incorrect"), (m1n - m1_now, "correct"))
                        if x > 0]  # fmt: skip
                plural = "s" * (m0n + m1n - m_now != 1)
                msg = head + (
                    f"Collect about {' and '.join(more)} label{plural} ({m0n + m1n - m_now} "
                    f"in all, to m0 = {m0n}, m1 = {m1n}): predicted to give "
                    f"{float(need.length):.3f} "
                    f"(bayesjudge.core.allocation_report, exact split, the labels so far as "
                    f"pilot: m0_pilot={m0_now}, m1_pilot={m1_now})."
                )
                values = {"width": width, "target": target, "m0": m0n, "m1": m1n,
                          "more_m0": m0n - m0_now, "more_m1": m1n - m1_now,
                          "predicted_width": float(need.length)}  # fmt: skip
            found.append(
                Diagnosis("calibration_size", "warning", msg, CalibrationSizeWarning, sys,
                          st, values, f"{group_label(sys, st)}: {width:.3f} wide, target "
                          f"{target:.3f}" + ("" if need is None else
                                             f", to m0 = {m0n}, m1 = {m1n}"))
            )  # fmt: skip
    return found


# --------------------------------------------------------------------- pooled calibration

#: A bias that pooling adds matters when it exceeds this many standard errors of the pooled
#: estimate (the same yardstick as :data:`BIAS_RATIO_MAX`: half an SE keeps a nominal 95%
#: interval's coverage at 92.1%; a bias of one half-width, 1.96 SE, drops it to 50%).
POOLED_BIAS_RATIO_MAX = BIAS_RATIO_MAX
#: A pooled-calibration warning lists at most this many groups per stratum (worst first).
POOLED_LISTED = 10


def _pooled_dims(dims) -> tuple[str, ...]:
    """Validate ``dims`` of :func:`check_pooled_calibration`; return them in DIMS order."""
    given = (dims,) if isinstance(dims, str) else tuple(dims)
    bad = [d for d in given if d not in DIMS]
    if bad or not given:
        raise ValueError(
            f"dims must name the dims the calibration is pooled over, some of {list(DIMS)}; "
            f"got {dims!r}. Pass dims=('system',) for calibration pooled over systems."
        )
    return tuple(d for d in DIMS if d in given)


def _group_names(ds: xr.Dataset, dims: tuple[str, ...]) -> list[str]:
    """Labels of the groups along ``dims`` (their product, C order), shown safely."""
    if len(dims) == 1:
        return [terminal_safe(v) for v in ds[dims[0]].values.tolist()]
    return [group_label(s, t) for s in ds["system"].values.tolist()
            for t in ds["stratum"].values.tolist()]  # fmt: skip


def _pooled_findings(arr: dict, alpha: float) -> dict:
    """Apply the rule of :func:`check_pooled_calibration` to ``(group, rest)`` arrays."""
    out = {}
    for q, (x, m) in (("q0", ("tn", "m0")), ("q1", ("tp", "m1"))):
        h = homogeneity_test(arr[x], arr[m], axis=0)
        out[f"{q}_statistic"], out[f"{q}_df"] = h.statistic, h.df
        out[f"{q}_pvalue"], out[f"{q}_pooled"] = h.pvalue, h.pooled
        with np.errstate(divide="ignore", invalid="ignore"):
            out[f"{q}_hat"] = arr[x] / arr[m]
    pooled = tuple(arr[f].sum(axis=0) for f in _CAL)
    res = pooling_bias(arr["k"], arr["n"], *(arr[f] for f in _CAL), axis=0)
    half = pooled_half_width(arr["k"], arr["n"], *pooled, alpha=alpha)
    tol = POOLED_BIAS_RATIO_MAX * half / float(stats.norm.isf(alpha / 2))
    testable = np.isfinite(res.linear) & np.isfinite(tol)
    tested = np.isfinite(out["q0_pvalue"]) | np.isfinite(out["q1_pvalue"])  # (rest,)
    # Bonferroni: alpha/2 for the 2 homogeneity tests per tested stratum, alpha/2 for the
    # per-group bias tests (two-sided), so a judge equal on every group warns at most alpha.
    level_q = alpha / (4 * max(int(tested.sum()), 1))
    z_b = float(stats.norm.isf(alpha / (4 * max(int(testable.sum()), 1))))
    with np.errstate(invalid="ignore"):
        differs = tested & ((np.nan_to_num(out["q0_pvalue"], nan=1.0) < level_q)
                            | (np.nan_to_num(out["q1_pvalue"], nan=1.0) < level_q))  # fmt: skip
        excess = testable & (np.abs(res.linear) - z_b * res.se > tol)
        small = testable & (np.abs(res.linear) + z_b * res.se <= tol)
    present = (arr["n"] > 0) & ((arr["m0"] > 0) | (arr["m1"] > 0))
    shown_small = np.all(small | ~present, axis=0)
    out.update(
        bias=res.bias, bias_linear=res.linear, bias_se=res.se, theta_pooled=res.theta_pooled,
        theta_own=res.theta_own, identified=res.identified, half_width=half, tolerance=tol,
        bias_excess=excess,
        q_differs=differs, flagged=(differs & ~shown_small) | excess.any(axis=0),
        level_q=level_q, z_bias=z_b,
    )  # fmt: skip
    return out


def _pooled_message(out: dict, names: list[str], where: list[str], what: str, alpha: float):
    """Return the warning text of :func:`check_pooled_calibration` for the flagged strata."""
    level = f"{100 * (1 - alpha):g}%"
    parts = []
    for r in np.nonzero(out["flagged"])[0]:
        tests = []
        for q in ("q0", "q1"):
            if np.isfinite(out[f"{q}_pvalue"][r]):
                tests.append(
                    f"{q} X² = {out[f'{q}_statistic'][r]:.1f} (df {int(out[f'{q}_df'][r])}, "
                    f"p {format_probability(float(out[f'{q}_pvalue'][r]), relation=True)})"
                )
        bias = out["bias"][:, r]
        size = np.where(np.isfinite(bias), np.abs(bias), np.abs(out["bias_linear"][:, r]))
        order = np.argsort(-np.nan_to_num(size, nan=np.inf), kind="stable")
        listed = []
        for g in order[:POOLED_LISTED]:
            q0, q1 = out["q0_hat"][g, r], out["q1_hat"][g, r]
            own = f"{names[g]}: q̂0 = {q0:.2f}, q̂1 = {q1:.2f}, "
            lin, se = out["bias_linear"][g, r], out["bias_se"][g, r]
            first = f"first order {lin:+.3f} ± {se:.3f}" if np.isfinite(lin) else ""
            if out["identified"][g, r]:
                own += f"bias {bias[g]:+.3f} ({first})"
            else:
                jj = q0 + q1 - 1
                own += (f"bias not identifiable (own Ĵ = {jj:.2f}" if np.isfinite(jj)
                        else "bias not identifiable (a label is missing")  # fmt: skip
                own += f"; {first})" if first else ")"
            listed.append(own)
        more = len(order) - POOLED_LISTED
        tail = f"; and {more} more (in the returned Dataset)" if more > 0 else ""
        half = np.nanmax(out["half_width"][:, r]) if np.isfinite(
            out["half_width"][:, r]).any() else np.nan  # fmt: skip
        parts.append(
            f"{where[r]}the judge's accuracy differs between the {len(names)} {what} whose "
            f"calibration is pooled ({'; '.join(tests) or 'not testable'}); own q̂0, q̂1 and "
            f"the bias pooling adds to θ̂ (pooled minus own; the pooled {level} intervals' "
            f"half-width is at most {half:.3f}): " + "; ".join(listed) + tail
        )
    return (
        "Pooled calibration does not fit: " + ". ".join(parts) + ". Pooled intervals are "
        "narrow around values that are wrong by about these biases (amplified 1/J, and a "
        "group where the judge is near chance is corrected as if it were as good as the "
        f"others). Do not pool: use each of the {what}' own calibration "
        "(estimate(..., calibration='own'), fit(..., calibration='separate')) or a "
        "hierarchical model (fit(..., calibration='hierarchical')), and label calibration "
        f"items of each of the {what}."
    )


def check_pooled_calibration(
    counts: JudgeCounts, dims=("system",), *, alpha: float = 0.05, stacklevel: int = 2
) -> xr.Dataset:
    """Test whether one calibration set may serve the groups it is pooled over; warn if not.

    Parameters
    ----------
    counts : JudgeCounts
        Test and calibration counts with each group's own calibration labels (before
        pooling).
    dims : str or sequence of {"system", "stratum"}, default ("system",)
        The dims the calibration is (to be) pooled over; the test is made separately for
        each label of the other dim (each stratum, for pooling over systems).
    alpha : float, default 0.05
        The false-alarm rate of the whole check for a judge that is the same on every
        group, and the level of the pooled interval whose SE scales the bias tolerance.
    stacklevel : int, default 2
        Passed to :func:`warnings.warn` (2: the caller of this function; a function that
        calls this on its user's behalf passes 3).

    Returns
    -------
    xarray.Dataset
        Over ``(system, stratum)``: ``q0_hat``, ``q1_hat`` (own), ``bias`` (θ̂ with the pooled
        calibration minus θ̂ with the own, unclipped), ``bias_linear`` (its first-order
        version) and ``bias_se`` (the SE of that), ``theta_pooled``,
        ``theta_own``, ``identified``, ``half_width`` (of the pooled delta-method interval),
        ``tolerance`` and ``bias_excess``. Over the other dim (``stratum`` for
        ``dims=("system",)``; none when pooling over both): ``q0_statistic``, ``q0_df``,
        ``q0_pvalue``, ``q0_pooled`` and the same for q1, ``q_differs`` and ``flagged``.
        Attrs: ``alpha``, ``dims``, ``tested`` (False, with a ``reason``, where nothing
        could be tested: every variable is then NaN or False), ``level_q``, ``z_bias``.

    Warns
    -----
    PooledCalibrationWarning
        Once, where some stratum is ``flagged``; the message names the groups with their
        q̂0, q̂1 and implied bias (worst first, at most :data:`POOLED_LISTED` per stratum),
        the test statistics, and what to do (each group's own calibration, or a
        hierarchical model).

    Notes
    -----
    The rule, per label of the other dim (say, stratum):

    1. **The judge differs** (``q_differs``): Pearson's chi-square test of homogeneity of
       ``tn/m0`` (q0) or of ``tp/m1`` (q1) over the groups
       (:func:`bayesjudge.core.pooling.homogeneity_test`) has p below
       ``alpha / (4 R)``, R the number of tested strata (Bonferroni: ``alpha/2`` over the 2R
       tests).
    2. **A bias that matters** (``bias_excess``): for a group with test items and labels
       of both kinds, ``|bias_linear| − z·bias_se > tolerance``, with ``tolerance`` =
       :data:`POOLED_BIAS_RATIO_MAX` (0.5) standard errors of the group's pooled estimate
       (eq. 10 with the pooled calibration) and z the normal quantile at
       ``alpha / (4 N)``, N the number of such groups (``alpha/2`` over the N two-sided
       tests). The test uses the first-order bias, linear in the proportions, and the
       larger of its null and unrestricted SEs
       (:func:`bayesjudge.core.pooling.pooling_bias`): the exact ``bias`` divides by the
       group's own Ĵ and is too heavy-tailed to test with few labels.

    A stratum is ``flagged`` when some group shows a bias that matters, or when the judge
    differs and the biases are not all shown small (``|bias_linear| + z·bias_se <=
    tolerance`` for every group with test and calibration items; a group without labels of
    both kinds cannot be shown small). So a large calibration set that detects a q
    difference too small to move any estimate does not warn. With a
    judge that is the same on every group the check warns with probability at most
    ``alpha`` (asymptotically; checked by simulation in the tests).

    Nothing is tested (``attrs["tested"]`` False, no warning) when the counts carry copies
    of one calibration set along a dim in ``dims`` (:attr:`JudgeCounts.
    calibration_shared_over`: the groups' own labels are not known), or when there is only
    one group to pool.

    References
    ----------
    Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", Sec. 4.4 and App. C (the
    bias of a shared calibration set); Agresti, *Categorical Data Analysis*, Sec. 3.2.

    Examples
    --------
    Two systems on which the judge errs differently (q̂0 0.9 and 0.5):

    >>> import warnings
    >>> import bayesjudge as bj
    >>> from bayesjudge.diagnostics import check_pooled_calibration
    >>> counts = bj.JudgeCounts.from_counts(
    ...     n=[1000, 1000], k=[600, 600], m0=[100, 100], tn=[90, 50],
    ...     m1=[100, 100], tp=[90, 90], system=["a", "b"])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     r = check_pooled_calibration(counts)
    >>> [type(w.message).__name__ for w in caught]
    ['PooledCalibrationWarning']
    >>> r["bias"].values.ravel().round(3).tolist(), bool(r["flagged"].item())
    ([-0.125, 0.25], True)
    """
    counts = JudgeCounts(counts)
    alpha = check_alpha(alpha)
    dims = _pooled_dims(dims)
    rest = tuple(d for d in DIMS if d not in dims)
    ds = counts.dataset[list(FIELDS)].transpose(*dims, *rest)  # not the joint table
    n_groups = int(np.prod([ds.sizes[d] for d in dims]))
    shape = (n_groups, -1)
    arr = {v: ds[v].values.astype(float).reshape(shape) for v in ("n", "k", *_CAL)}
    shared = [d for d in dims if d in counts.calibration_shared_over]
    reason = ""
    if shared:
        reason = (f"the counts carry one calibration set shared over {shared}: the groups' "
                  f"own labels are not known")  # fmt: skip
    elif n_groups < 2:
        reason = "only one group to pool"
    out = _pooled_findings(arr, alpha)
    if reason:
        out = {k: (np.zeros_like(v, dtype=bool) if np.asarray(v).dtype == bool
                   else np.full(np.shape(v), np.nan)) for k, v in out.items()}  # fmt: skip
    full_dims = (*dims, *rest)
    rest_shape = tuple(ds.sizes[d] for d in rest)
    full_shape = tuple(ds.sizes[d] for d in full_dims)
    data = {}
    for name, value in out.items():
        value = np.asarray(value)
        if name in ("level_q", "z_bias"):
            continue
        if value.ndim == 2:
            data[name] = xr.DataArray(value.reshape(full_shape), dims=full_dims)
        else:
            data[name] = xr.DataArray(value.reshape(rest_shape), dims=rest)
    result = xr.Dataset(data, coords={d: ds[d].values for d in DIMS})
    result = result.transpose(*(d for d in DIMS if d in result.dims))
    result.attrs = {"alpha": alpha, "dims": ",".join(dims), "tested": not reason,
                    "reason": reason, "level_q": float(np.asarray(out["level_q"])),
                    "z_bias": float(np.asarray(out["z_bias"]))}  # fmt: skip
    flagged = np.atleast_1d(np.asarray(out["flagged"], dtype=bool))
    if not reason and flagged.any():
        if rest:
            labels = ds[rest[0]].values.tolist()
            where = [f"In {rest[0]} {terminal_safe(v)}, " for v in labels]
        else:
            where = [""]
        what = "groups" if len(dims) > 1 else f"{dims[0].replace('system', 'systems')}"
        what = "strata" if what == "stratum" else what
        flat = {k: (np.asarray(v).reshape(n_groups, -1) if np.ndim(v) == 2
                    else np.atleast_1d(np.asarray(v))) for k, v in out.items()}  # fmt: skip
        msg = _pooled_message(flat, _group_names(ds, dims), where, what, alpha)
        warnings.warn(msg, PooledCalibrationWarning, stacklevel=stacklevel)
    return result


# ------------------------------------------------------------------ collapsed intervals


def collapsed_intervals(result: xr.Dataset, var: str = "ci") -> xr.DataArray:
    """Return where an interval was clipped to a single point at 0 or 1.

    Parameters
    ----------
    result : xarray.Dataset
        A result with an interval variable ``var`` along dim ``ci_bound``
        (``bayesjudge.estimate(...)``).
    var : str, default "ci"
        The interval variable.

    Returns
    -------
    xarray.DataArray
        Boolean, over the interval's other dims: True where ``lower == upper`` and the bound
        is 0 or 1 — an interval truncated to [0, 1] from an estimate (and a whole interval)
        outside [0, 1], which is not a certain θ.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from bayesjudge.diagnostics import collapsed_intervals
    >>> ci = xr.DataArray([[0.0, 0.0], [0.2, 0.4], [1.0, 1.0]], dims=("system", "ci_bound"),
    ...                   coords={"ci_bound": ["lower", "upper"]})
    >>> collapsed_intervals(xr.Dataset({"ci": ci})).values.tolist()
    [True, False, True]
    """
    if var not in result or "ci_bound" not in result[var].dims:
        raise ValueError(
            f"result must hold an interval variable {var!r} along dim 'ci_bound' (as "
            f"bayesjudge.estimate returns); it has {sorted(result.data_vars)}."
        )
    lower = result[var].sel(ci_bound="lower", drop=True)
    upper = result[var].sel(ci_bound="upper", drop=True)
    return (lower == upper) & ((lower == 0) | (lower == 1))


def collapsed_interval_message(result: xr.Dataset, var: str = "ci") -> str | None:
    """Return where intervals collapsed to a point at 0 or 1 and what it means (None if none).

    For an ``estimate`` result over ``(system, stratum)``: names the groups (at most
    :data:`MAX_LISTED`) with p̂, q̂0, q̂1 where the result has them, and says that the
    corrected estimate fell outside [0, 1] — p̂ below the judge's false-positive rate
    1 − q̂0 gives θ̂ < 0, p̂ above q̂1 gives θ̂ > 1 — so the calibration does not fit that
    group's verdicts (a calibration pooled over groups where the judge differs, a judge near
    chance, or chance with few labels). The point is not a certain θ.

    Examples
    --------
    >>> import xarray as xr
    >>> from bayesjudge.diagnostics import collapsed_interval_message
    >>> ds = xr.Dataset(
    ...     {"ci": (("system", "stratum", "ci_bound"), [[[1.0, 1.0]]]),
    ...      "p_hat": (("system", "stratum"), [[0.95]]),
    ...      "q0_hat": (("system", "stratum"), [[0.8]]),
    ...      "q1_hat": (("system", "stratum"), [[0.9]])},
    ...     coords={"system": ["a"], "stratum": ["all"], "ci_bound": ["lower", "upper"]})
    >>> print(collapsed_interval_message(ds)[:76])
    The interval of system=a/stratum=all is the single point [1, 1] (p̂ = 0.950,
    """
    mask = collapsed_intervals(result, var)
    if not bool(mask.any()):
        return None
    mask = mask.transpose("system", "stratum") if set(mask.dims) == set(DIMS) else mask
    cases = []
    for index in zip(*np.nonzero(mask.values), strict=True):
        where = {d: mask[d].values[i] for d, i in zip(mask.dims, index, strict=True)}
        label = (group_label(where["system"], where["stratum"]) if set(where) == set(DIMS)
                 else ", ".join(f"{d}={terminal_safe(v)}" for d, v in where.items()))  # fmt: skip
        bound = float(result[var].sel(where).sel(ci_bound="lower"))
        numbers = [
            f"{name} = {float(result[key].sel(where)):.3f}"
            for key, name in (("p_hat", "p̂"), ("q0_hat", "q̂0"), ("q1_hat", "q̂1"))
            if key in result and set(result[key].dims) <= set(where)
        ]
        shown = f" ({', '.join(numbers)})" if numbers else ""
        cases.append(f"{label} is the single point [{bound:g}, {bound:g}]{shown}")
    more = len(cases) - MAX_LISTED
    listed = "; ".join(cases[:MAX_LISTED]) + (f"; and {more} more" if more > 0 else "")
    return (
        f"The interval of {listed}: the corrected estimate fell outside [0, 1] (p̂ below the "
        "judge's false-positive rate 1 − q̂0 gives θ̂ < 0, p̂ above q̂1 gives θ̂ > 1), and the "
        "interval was clipped to a point. That is not a certain θ: the calibration does not "
        "fit these verdicts (a calibration pooled over groups where the judge differs, a "
        "judge near chance, or chance with few labels). Check with "
        "bayesjudge.diagnostics.check_pooled_calibration, use each group's own calibration, "
        "or use the Bayesian model (bayesjudge.fit), whose interval stays in [0, 1] honestly."
    )
