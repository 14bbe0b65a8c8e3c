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

import warnings
from collections.abc import Hashable
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import xarray as xr
from scipy import stats

from bayesjudge.core._validation import check_alpha
from bayesjudge.core.allocation import allocation_report
from bayesjudge.core.correction import lang_reiczigel_length
from bayesjudge.core.naive import wilson_limits
from bayesjudge.core.paired import pair_cells, rg_difference_se, shared_calibration_shift
from bayesjudge.core.youden import youden, youden_difference
from bayesjudge.data import JudgeCounts
from bayesjudge.estimate import LOW_J_THRESHOLD
from bayesjudge.warnings import (
    BayesJudgeWarning,
    CalibrationDesignWarning,
    CalibrationSizeWarning,
    LowJudgeQualityWarning,
    NearTieWarning,
)

__all__ = [
    "BIAS_RATIO_MAX",
    "DESIGNS",
    "NEAR_TIE_FRACTION",
    "Diagnosis",
    "check_comparison",
    "judge_diagnostics",
]

#: Largest |shared-calibration bias| / SE(Δθ̂) at which a shared calibration set is called
#: defensible: a bias of half a standard error keeps a nominal 95% interval's coverage at 92.1%.
BIAS_RATIO_MAX = 0.5
#: A Δθ interval is a near tie when 0 lies within this fraction of its half-width from one of
#: its ends (inside or outside the interval).
NEAR_TIE_FRACTION = 0.5
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
    """

    code: str
    level: str
    message: str
    category: type = BayesJudgeWarning
    system: Hashable | None = None
    stratum: Hashable | None = None
    values: dict = field(default_factory=dict)

    def emit(self, stacklevel: int = 2) -> None:
        """Emit the message as a Python warning of :attr:`category`."""
        warnings.warn(self.message, self.category, stacklevel=stacklevel + 1)


# --------------------------------------------------------------------------- helpers


def _pairs(systems: list) -> list[tuple[int, int]]:
    return list(combinations(range(len(systems)), 2))


def _pair_coords(systems: list) -> dict:
    pairs = _pairs(systems)
    return {
        "pair": [f"{systems[i]} - {systems[j]}" for i, j in pairs],
        "first": ("pair", [systems[i] for i, _ in pairs]),
        "second": ("pair", [systems[j] for _, j in pairs]),
    }


def _shared_over_systems(counts: JudgeCounts) -> bool:
    return "system" in counts.calibration_shared_over


def _arrays(counts: JudgeCounts) -> dict[str, np.ndarray]:
    ds = counts.dataset
    return {v: ds[v].values.astype(float) for v in ("n", "k", "m0", "tn", "m1", "tp")}


def _rg(p, q0, q1):
    """Unclipped Rogan–Gladen θ̂ (NaN where J = 0)."""
    j = q0 + q1 - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(j != 0, (p + q0 - 1) / np.where(j != 0, j, 1.0), np.nan)


def _pooled_calibration(arr: dict[str, np.ndarray], shared: bool) -> tuple[np.ndarray, ...]:
    """``tn, m0, tp, m1`` of the calibration sets pooled over systems, shape (T,)."""
    if shared:  # copies of one set: take it once
        return tuple(arr[f][0] for f in _CAL)
    return tuple(arr[f].sum(0) for f in _CAL)


def _identified(tn, m0, tp, m1) -> np.ndarray:
    """Where a plug-in J ≠ 0, tested exactly on the integer counts (as the core)."""
    return tn * m1 + tp * m0 - m0 * m1 != 0


def _delta(cells, cal_a, cal_b, totals, valid) -> tuple[np.ndarray, np.ndarray]:
    """:func:`rg_difference_se` over strata, NaN where ``valid`` is False.

    Invalid strata (a system without test items, or J = 0) get harmless stand-in counts so
    that the core function, which rejects them, can run over all strata at once.
    """

    def fill(x, stand_in):
        return np.where(valid, x, stand_in)

    cells = [fill(c, 0.0) for c in cells]
    k_a, n_a, k_b, n_b = (fill(x, s) for x, s in zip(totals, (0.0, 1.0, 0.0, 1.0), strict=True))
    stand_in = dict(zip(_CAL, (1.0, 1.0, 1.0, 1.0), strict=True))  # q0 = q1 = 1, J = 1
    cal_a = [fill(c, stand_in[f]) for f, c in zip(_CAL, cal_a, strict=True)]
    kwargs = {"shared_calibration": cal_b is None}
    if cal_b is not None:
        kwargs |= {f"{f}_b": fill(c, stand_in[f]) for f, c in zip(_CAL, cal_b, strict=True)}
    res = rg_difference_se(*cells, *cal_a, k_a=k_a, n_a=n_a, k_b=k_b, n_b=n_b, **kwargs)
    nan = np.full(valid.shape, np.nan)
    return np.where(valid, res.estimate, nan), np.where(valid, res.se, nan)


def _comparison_table(counts: JudgeCounts, alpha: float) -> xr.Dataset:
    """Closed-form Δθ per (pair, stratum): estimate, SE and interval, and the shared-design bias.

    ``delta_theta``/``delta_theta_se``: Rogan–Gladen difference with each system's own
    calibration, or with the one calibration set when the counts carry a set shared over
    systems (:func:`~bayesjudge.core.paired.rg_difference_se`: Lee et al. eq. 10 per system,
    Fiedler App. B for the shared set; the paired covariance from the joint verdict table).
    ``shared_se``: App. B SE of the shared-design difference with the calibration pooled over
    systems. ``shared_bias``: App. C bias of that difference, evaluated at the estimates
    (:func:`~bayesjudge.core.paired.shared_calibration_shift`).
    """
    arr = _arrays(counts)
    shared = _shared_over_systems(counts)
    z = float(stats.norm.isf(alpha / 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = arr["k"] / arr["n"]
        q0, q1 = arr["tn"] / arr["m0"], arr["tp"] / arr["m1"]
    theta = _rg(p, q0, q1)
    pooled = _pooled_calibration(arr, shared)
    q0c, q1c = pooled[0] / pooled[1], pooled[2] / pooled[3]
    shift = shared_calibration_shift(theta, q0, q1, q0c, q1c)  # App. C per system
    own = _identified(*(arr[f] for f in _CAL))  # (system, stratum)
    pooled_ok = _identified(*pooled)  # (stratum,)
    has_test = arr["n"] > 0
    if counts.has_joint:
        joint = counts.joint.transpose("stratum", "pattern").values
        verdicts = counts.joint_verdicts.transpose("pattern", "system").values
    else:
        joint = np.zeros((len(counts.strata), 0))
        verdicts = np.zeros((0, len(counts.systems)), dtype=np.int8)
    systems = counts.systems
    out = {k: [] for k in ("est", "se", "shared_se", "shared_bias", "shared_est")}
    for i, jdx in _pairs(systems):
        cells = pair_cells(joint, verdicts, i, jdx)
        totals = (arr["k"][i], arr["n"][i], arr["k"][jdx], arr["n"][jdx])
        tested = has_test[i] & has_test[jdx]
        shared_est, shared_se = _delta(cells, pooled, None, totals, tested & pooled_ok)
        if shared:
            est, se = shared_est, shared_se
        else:
            own_a, own_b = ([arr[f][x] for f in _CAL] for x in (i, jdx))
            est, se = _delta(cells, own_a, own_b, totals, tested & own[i] & own[jdx])
        out["est"].append(est)
        out["se"].append(se)
        out["shared_se"].append(shared_se)
        out["shared_est"].append(shared_est)
        out["shared_bias"].append(np.full_like(est, np.nan) if shared else shift[i] - shift[jdx])
    coords = {**_pair_coords(systems), "stratum": counts.strata}
    dims = ("pair", "stratum")

    def da(name):
        return xr.DataArray(np.array(out[name]).reshape(-1, len(counts.strata)), dims=dims)

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


def _recommend(counts: JudgeCounts, excludes: xr.DataArray, ratio: xr.DataArray):
    """Apply the design rule per stratum; return (design per stratum, plain-language text)."""
    k = len(counts.systems)
    designs, reasons = [], []
    for s in counts.strata:
        if k < 2:
            designs.append("shared")
            reasons.append(f"stratum {s}: one system, nothing to compare")
            continue
        if _shared_over_systems(counts):
            designs.append("unverified")
            reasons.append(
                f"stratum {s}: one calibration set is shared by all systems, so ΔJ cannot be "
                f"estimated; label a calibration sample of each system's answers to check it"
            )
            continue
        ex = excludes.sel(stratum=s).values
        r = ratio.sel(stratum=s).values
        n_ex, n_pairs = int(ex.sum()), ex.size
        finite = np.isfinite(r)
        # No finite ratio: some system lacks test items (or J = 0) in every pair, so the bias
        # cannot be evaluated and ΔJ alone decides.
        worst = float(r[finite].max()) if finite.any() else None
        if n_ex == 0 and (worst is None or worst <= BIAS_RATIO_MAX):
            designs.append("shared")
            bias = (
                "the shared-calibration bias cannot be evaluated (a system has no test items "
                "or J = 0 here)"
                if worst is None
                else f"the shared-calibration bias is at most {worst:.2f} standard errors of "
                f"Δθ (≤ {BIAS_RATIO_MAX})"
            )
            reasons.append(f"stratum {s}: no ΔJ interval excludes 0 and {bias}")
        elif k >= 3 and n_ex < n_pairs:
            designs.append("hierarchical")
            what = (
                f"{n_ex} of {n_pairs} ΔJ intervals exclude 0"
                if n_ex
                else f"no ΔJ interval excludes 0 but the shared-calibration bias reaches "
                f"{worst:.2f} standard errors of Δθ (> {BIAS_RATIO_MAX})"
            )
            reasons.append(f"stratum {s}: {what}; partial pooling lets similar systems share")
        else:
            designs.append("system-specific")
            what = (
                f"{n_ex} of {n_pairs} ΔJ interval(s) exclude 0"
                if n_ex
                else f"the shared-calibration bias reaches {worst:.2f} standard errors of Δθ "
                f"(> {BIAS_RATIO_MAX})"
            )
            reasons.append(f"stratum {s}: {what}")
    overall = max(designs, key=_ORDER.__getitem__)
    text = {
        "shared": "A shared calibration set is defensible",
        "hierarchical": "Use hierarchical calibration (calibration='hierarchical')",
        "system-specific": "Use system-specific calibration (calibration='separate')",
        "unverified": "The shared calibration cannot be checked",
    }[overall]
    return designs, f"{text}: " + "; ".join(reasons) + "."


def _posterior_block(fit, alpha: float) -> dict:
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
        if "system" in j.dims and j.sizes["system"] > 1:
            cmp = fit.compare("system", "youden", ci_prob=ci_prob)
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
        the estimates) of the shared-calibration difference; ``bias_ratio`` = |shared_bias| /
        shared_se. Over ``stratum``: ``design``. With a fit: ``youden_posterior``,
        ``youden_posterior_ci``, ``delta_youden_posterior``, ``delta_youden_posterior_ci``
        and, for the hierarchical model, ``q0_logit_scale``, ``q1_logit_scale`` with
        ``*_ci``. Attrs: ``ci_prob``, ``ci_kind``, ``alpha``, ``method``,
        ``recommendation`` (plain words), ``design`` (the overall design), ``shared_design``
        (True when the counts or the fit share one calibration set over systems).

    Notes
    -----
    **Design rule**, applied per stratum (the overall design is the most cautious one, in the
    order shared < hierarchical < system-specific < unverified):

    1. *unverified* — the counts carry one calibration set shared over systems
       (``counts.calibration_shared_over`` includes ``"system"``): ΔJ is not estimable.
    2. *shared* — no ΔJ interval (``method``, level 1 − alpha) excludes 0 **and** every
       pair's |shared_bias| ≤ ``BIAS_RATIO_MAX`` (0.5) × shared_se. A bias of half a standard
       error lowers a nominal 95% interval's coverage to 92.1%.
    3. *hierarchical* — otherwise, when there are ≥ 3 systems and not every pair's ΔJ
       interval excludes 0 (some systems look alike, others do not: partial pooling).
    4. *system-specific* — otherwise (two systems, or all pairs differ).

    ``shared_bias`` is Fiedler's App. C bias evaluated at the estimates
    (:func:`~bayesjudge.core.paired.shared_calibration_shift`): for each system X,
    θ̂*_X − θ̂_X = [θ̂_X (q̂1_X − q̂1_c) − (1 − θ̂_X)(q̂0_X − q̂0_c)] / Ĵ_c, where q̂_c pools the
    calibration sets of all systems in the stratum (as ``counts.pooled_calibration()`` and
    ``calibration="shared"`` do) and θ̂ is the unclipped Rogan–Gladen estimate with the
    system's own calibration; the bias of Δθ̂ is the difference of the two. It equals
    :func:`bayesjudge.studies.comparison.shared_rg_bias` with ``shared_from="pooled"`` when
    each system's calibration set has m0 ∝ 1 − θ and m1 ∝ θ (equal random samples). It is an
    estimate, noisy when the calibration sets are small, so the rule can call for
    system-specific calibration on data where the judge is in fact stable: the data cannot
    confirm a shared design more precisely than they measure the per-system q0, q1
    (Fiedler, Sec. 4.4: part of the labelling savings of sharing is unrealisable).

    The SEs are :func:`~bayesjudge.core.paired.rg_difference_se` (as ``bayesjudge.compare``
    with ``method="delta"``): with a joint verdict table their test term carries the
    covariance of the pair's verdicts on the items shared by all systems, and the other
    items of each system enter as independent; without one the systems are treated as
    independent, which overstates the SE when their verdicts are positively correlated. A
    stratum where a system has no test items (or a plug-in J = 0) gives NaN for its pairs;
    when no pair's bias can be evaluated there, ΔJ alone decides the design.

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
    z = float(stats.norm.isf(alpha / 2))
    rng = np.random.default_rng(random_seed)
    dims = ("system", "stratum")
    coords = {"system": counts.systems, "stratum": counts.strata}

    def interval(lo, hi, d=dims):
        return xr.DataArray(np.stack([lo, hi], axis=-1), dims=(*d, "ci_bound"))

    out = {}
    for name, x, m in (("q0", "tn", "m0"), ("q1", "tp", "m1")):
        out[name] = xr.DataArray(arr[x] / arr[m], dims=dims)
        out[f"{name}_ci"] = interval(*wilson_limits(arr[x], arr[m], z))
    cal = (arr["tn"], arr["m0"], arr["tp"], arr["m1"])
    j = youden(*cal, alpha=alpha, method=method)
    jb = youden(*cal, alpha=alpha, method="bootstrap", n_resamples=n_resamples, random_seed=rng)
    out["youden"] = xr.DataArray(np.asarray(j.estimate, dtype=float), dims=dims)
    out["youden_ci"] = interval(j.lower, j.upper)
    out["youden_bootstrap_ci"] = interval(jb.lower, jb.upper)

    pdims = ("pair", "stratum")
    pairs = _pairs(counts.systems)
    shared = _shared_over_systems(counts)
    if pairs:
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
        out["delta_youden"] = xr.DataArray(np.asarray(d.estimate, dtype=float), dims=pdims)
        out["delta_youden_ci"] = interval(d.lower, d.upper, pdims)
        out["delta_youden_bootstrap_ci"] = interval(db.lower, db.upper, pdims)
        out["delta_youden_excludes_0"] = xr.DataArray(
            (np.asarray(d.lower) > 0) | (np.asarray(d.upper) < 0), dims=pdims
        )
        coords |= _pair_coords(counts.systems)
    result = xr.Dataset(out, coords=coords)
    result = result.assign_coords(ci_bound=_CI)
    if pairs:
        table = _comparison_table(counts, alpha)
        result = result.merge(table, compat="override", join="exact")
        result["bias_ratio"] = abs(result["shared_bias"]) / result["shared_se"]
        excludes = result["delta_youden_excludes_0"]
        ratio = result["bias_ratio"]
    else:
        excludes = ratio = None
    designs, text = _recommend(counts, excludes, ratio)
    result["design"] = xr.DataArray(np.array(designs, dtype=object), dims=("stratum",))
    fit_shared = False
    if fit is not None:
        result = result.assign(_posterior_block(fit, alpha))
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
            "recommendation": text,
            "shared_design": bool(shared or fit_shared),
        }
    )
    return result


def _group(system, stratum) -> str:
    return f"system={system}/stratum={stratum}"


def _required_calibration(p, q0, q1, n, m0, m1, alpha, target):
    """Smallest total m whose exact allocation predicts an interval ≤ target, or None."""
    m_pilot = int(min(m0, m1))
    now = int(m0 + m1)

    def length(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LowJudgeQualityWarning)
            r = allocation_report(m, p, q0, q1, m_pilot=m_pilot, n=int(n), alpha=alpha)
        return float(r.exact.length), r.exact

    hi = max(now, 2 * m_pilot)
    limit = 10_000_000
    while length(hi)[0] > target:
        if hi >= limit:
            return None
        hi = min(2 * hi, limit)
    lo = max(now, 2 * m_pilot) - 1
    if length(lo + 1)[0] <= target:
        return length(lo + 1)[1]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if length(mid)[0] <= target:
            hi = mid
        else:
            lo = mid
    return length(hi)[1]


def check_comparison(
    counts: JudgeCounts,
    fit=None,
    *,
    target_width: float | None = None,
    alpha: float = 0.05,
    warn: bool = True,
    random_seed=None,
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

    Returns
    -------
    list of Diagnosis
        Empty when nothing is wrong.

    Warns
    -----
    LowJudgeQualityWarning
        ``"low_j"``: Ĵ < 0.2 (``bayesjudge.estimate.LOW_J_THRESHOLD``; errors amplified
        more than 5×) or the interval of J reaches 0 (posterior ETI with a fit, else the
        Newcombe interval).
    CalibrationDesignWarning
        ``"calibration_design"``: a ΔJ interval (Newcombe) excludes 0, so a shared
        calibration set is not defensible; the message gives ΔJ and the App. C bias that
        sharing implies (see :func:`judge_diagnostics`).
    NearTieWarning
        ``"near_tie"``: zero lies within half the half-width of an end of a Δθ interval
        [L, U], i.e. min(|L|, |U|) < (U − L)/4, inside or just outside the interval. For a
        normal interval this is P(θ_a > θ_b) between 0.836 and 0.998 (or between 0.002 and
        0.164) at 95%: the data lean one way but a small residual bias (Fiedler Sec. 4.4)
        could flip or erase the direction. Δθ is the posterior ETI and P(θ_a > θ_b) with a
        fit, else the closed-form interval of :func:`judge_diagnostics`.
    CalibrationSizeWarning
        ``"calibration_size"``: with ``target_width``, a group's Lang–Reiczigel interval is
        wider than the target; the message gives the calibration size and split
        (:func:`bayesjudge.allocation_report`, exact split, the current calibration as
        pilot) that is predicted to reach it, or says that no calibration size can because
        the test set alone is too small.

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
    >>> print(found[0].message[:58])
    ΔJ(a - b) = 0.200 [0.092, 0.304] in stratum all excludes 0
    """
    counts = JudgeCounts(counts)
    alpha = check_alpha(alpha)
    if target_width is not None and not (0 < float(target_width) <= 2):
        raise ValueError(f"target_width must be in (0, 2]; got {target_width!r}.")
    diag = judge_diagnostics(counts, fit, alpha=alpha, random_seed=random_seed, n_resamples=200)
    level = f"{100 * (1 - alpha):g}%"
    found: list[Diagnosis] = []

    # ---- low J
    use_post = "youden_posterior" in diag
    j = diag["youden_posterior"] if use_post else diag["youden"]
    j_ci = diag["youden_posterior_ci"] if use_post else diag["youden_ci"]
    j = j.broadcast_like(diag["youden"])
    j_ci = j_ci.broadcast_like(diag["youden_ci"])
    source = "posterior" if use_post else "Newcombe"
    for sys in counts.systems:
        for st in counts.strata:
            jj = float(j.sel(system=sys, stratum=st))
            lo, hi = (float(v) for v in j_ci.sel(system=sys, stratum=st).values)
            if not (jj < LOW_J_THRESHOLD or lo <= 0):
                continue
            amp = f"≈ {1 / jj:.1f}×" if jj > 0.02 else "without bound"
            msg = (
                f"J = {jj:.2f} [{lo:.2f}, {hi:.2f}] ({level} {source} interval) for "
                f"{_group(sys, st)}: the corrected estimate's error is amplified 1/J {amp}"
                + ("" if lo > 0 else " and the interval cannot rule out a judge no better than "
                   "chance")
                + ". Treat its estimates with caution and weaken the claim; use a better judge "
                "or prompt, or label more calibration items of both kinds."
            )  # fmt: skip
            found.append(
                Diagnosis("low_j", "warning", msg, LowJudgeQualityWarning, sys, st,
                          {"J": jj, "lower": lo, "upper": hi,
                           "amplification": 1 / jj if jj > 0 else float("inf")})
            )  # fmt: skip

    pairs = diag["pair"].values.tolist() if "pair" in diag.coords else []
    # ---- calibration design
    fit_shared = fit is not None and fit.config.get("calibration") == "shared"
    for pair in pairs:
        for st in counts.strata:
            if not bool(diag["delta_youden_excludes_0"].sel(pair=pair, stratum=st)):
                continue
            dj = float(diag["delta_youden"].sel(pair=pair, stratum=st))
            lo, hi = (float(v) for v in diag["delta_youden_ci"].sel(pair=pair, stratum=st).values)
            bias = float(diag["shared_bias"].sel(pair=pair, stratum=st))
            se = float(diag["shared_se"].sel(pair=pair, stratum=st))
            now = (
                "This fit uses calibration='shared', so its Δθ is biased"
                if fit_shared
                else "Sharing one calibration set would bias Δθ"
            )
            msg = (
                f"ΔJ({pair}) = {dj:.3f} [{lo:.3f}, {hi:.3f}] in stratum {st} excludes 0: the "
                f"judge discriminates differently on the two systems' answers, so a shared "
                f"calibration set is not defensible (Fiedler Sec. 4.4). {now} by about "
                f"{bias:+.3f} (Fiedler App. C at the estimates; {abs(bias) / se:.1f} standard "
                f"errors of Δθ). Use calibration='separate'"
                + (" or 'hierarchical'" if len(counts.systems) >= 3 else "")
                + " with a calibration sample of each system's answers."
            )
            found.append(
                Diagnosis("calibration_design", "warning", msg, CalibrationDesignWarning, pair,
                          st, {"delta_J": dj, "lower": lo, "upper": hi, "shared_bias": bias,
                               "shared_se": se})
            )  # fmt: skip

    # ---- near tie
    if pairs:
        if fit is not None:
            cmp = fit.compare("system", "theta", ci_prob=1 - alpha)
            est, ci, prob = cmp["mean"], cmp["ci"], cmp["prob_greater"]
            source = "posterior"
        else:
            est, ci, prob = diag["delta_theta"], diag["delta_theta_ci"], diag["prob_greater"]
            source = "closed-form"
        for pair in pairs:
            for st in counts.strata:
                sel = {"pair": pair, "stratum": st}
                lo, hi = (float(v) for v in ci.sel(sel).values)
                half = (hi - lo) / 2
                near = min(abs(lo), abs(hi))
                if not near < NEAR_TIE_FRACTION * half:
                    continue
                d, pg = float(est.sel(sel)), float(prob.sel(sel))
                first, second = pair.split(" - ", 1)
                inside = "includes" if lo <= 0 <= hi else "excludes"
                msg = (
                    f"Near tie: Δθ({pair}) = {d:+.3f} [{lo:+.3f}, {hi:+.3f}] ({level} {source}) "
                    f"in stratum {st}, P(θ_{first} > θ_{second}) = {pg:.3f}. The interval "
                    f"{inside} 0 by only {near:.3f}, less than half its half-width "
                    f"({half:.3f}): a small residual bias (e.g. from calibration mismatch) "
                    f"could change the conclusion. Do not claim a direction on this alone; "
                    f"collect more test or calibration items, or report it as a tie."
                )
                found.append(
                    Diagnosis("near_tie", "caution", msg, NearTieWarning, pair, st,
                              {"delta_theta": d, "lower": lo, "upper": hi,
                               "prob_greater": pg, "margin": near})
                )  # fmt: skip

    # ---- calibration size
    if target_width is not None:
        target = float(target_width)
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
                    f"The {level} interval of θ for {_group(sys, st)} is {width:.3f} wide, "
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
                    m0n, m1n = int(need.m0), int(need.m1)
                    msg = head + (
                        f"About m0 = {m0n}, m1 = {m1n} (m = {m0n + m1n}, {m0n + m1n - m_now} "
                        f"more labels) are predicted to give {float(need.length):.3f} "
                        f"(bayesjudge.allocation_report, exact split, current calibration as "
                        f"pilot)."
                    )
                    values = {"width": width, "target": target, "m0": m0n, "m1": m1n,
                              "predicted_width": float(need.length)}  # fmt: skip
                found.append(
                    Diagnosis("calibration_size", "warning", msg, CalibrationSizeWarning, sys,
                              st, values)
                )  # fmt: skip

    if warn:
        for d in found:
            d.emit(stacklevel=2)
    return found
