"""Fiedler Fig. 1: bias and coverage of a two-system comparison Δθ over J and ΔJ.

Design (Fiedler, *Bias and Uncertainty in LLM-as-a-Judge Estimation*, Sec. 5,
``/work/shared/papers/004_627fe5a0e5e077bc.txt`` lines 131-153, Fig. 1 caption line 145):

* Two systems A and B; the estimand is the true accuracy difference
  ``Δθ = θ_B − θ_A = δ = 0.05`` (line 135: "θ_B − θ_A = 0.05").
* The judge has equal specificity and sensitivity per system (line 135, "equal specificity
  q0 and sensitivity q1 for analytical transparency"), so Youden's ``J = q0 + q1 − 1`` gives
  ``q0 = q1 = (1 + J) / 2``.
* ``ΔJ = J_B − J_A ≥ 0`` (B is the easier system for the judge, line 135). Sweep ``"j"``:
  ``J_A`` over a grid with ``ΔJ = 0.05``; sweep ``"delta_j"``: ``ΔJ`` over a grid with
  ``J_A = 0.3`` (lines 135, 145).

Signs follow the paper: the system whose J is swept (or fixed at 0.3) is A, the weaker and
harder-to-judge one; ``Δθ`` and ``ΔJ`` are B minus A.

**Not in the paper.** θ_A, θ_B, the test size and the calibration size are "in the
accompanying code" (line 135), which is not available. Our choices, all options of
:func:`run`: ``θ_A = 0.70`` (so ``θ_B = 0.75``; the MMLU-Pro math accuracies of the case study
are about 0.74, Table 7, and App. C assumes ``0.5 < θ_A``), ``n = 1000`` test items per system
and ``m = 200`` calibration items per system, drawn at random from that system's outputs
(``m1 ~ Binomial(m, θ)``, as the random one-third calibration split of App. E.3). The grids are
``J_A ∈ {0.1, 0.2, …, 0.9}`` and ``ΔJ ∈ {0, 0.05, …, 0.4}`` (the text discusses ΔJ up to 0.3,
line 153). With θ_A = 0.5 the shared-calibration bias would vanish (see
:func:`shared_rg_bias`), so θ_A matters.

**Data per replication.** Counts come from :func:`bayesjudge.simulate_counts` with
``system=["A", "B"]`` (one stratum label per replication). The two systems answer the same
``n`` items and are scored independently; the joint verdict table that a paired bootstrap
needs is obtained by pairing item indices, ``n11 ~ Hypergeometric(k_A, n − k_A, k_B)`` (the
overlap of A's and B's "correct" verdicts under independent item-level verdicts).

**Estimators** (``estimators=``), all of ``Δθ = θ_B − θ_A``:

``"naive"``
    ``p̂_B − p̂_A`` with the paired Wald interval ``± z √(Var̂(Ẑ_B − Ẑ_A) / n)``.
``"rg_shared"``
    Rogan–Gladen for both systems with *one* calibration set (Fiedler's "RG"): by default
    system B's (``shared_from="B"``: the incumbent's labels reused for the challenger, App. E.3
    line "RG uses the entire calibration set with true labels from Qwen 2.5 7B only", and the
    setting of App. C); ``"A"`` uses A's, ``"pooled"`` merges both sets.
``"rg_separate"``
    Rogan–Gladen with each system's own calibration set (Fiedler's "RG 2×").
``"ppi"``
    PPI++ (:func:`bayesjudge.ppi_mean`) per system on its own calibration set (Fiedler's
    "PPI++ 2×"), difference of the estimates, Wald interval with ``se² = se_A² + se_B²``
    (the systems' calibration sets and verdicts are independent here).
``"bayes"``
    :func:`bayesjudge.fit` with ``calibration="hierarchical"`` on the per-system counts, then
    ``fit.compare("system", "theta")``: posterior mean and equal-tailed interval of
    ``θ_B − θ_A``. Runs on the first ``bayes_reps`` replications of the same data.

**Intervals for the RG differences.** Fiedler uses the bootstrap throughout (Sec. 4.3, App.
E.4): test and calibration sets resampled separately, pairs of test items kept together,
percentile interval. That is ``rg_interval="bootstrap"`` (default), via
:func:`bayesjudge.core.bootstrap_difference` with ``calibration_design="random"`` and
``n_resamples=1000`` per replication (the paper used 10,000 on its case study; 1000 keeps the
percentile noise well below the Monte Carlo error of coverage). ``rg_interval="delta"`` uses
the delta method instead: App. B's formula for the shared design and, for separate
calibration, the paired test term plus each system's calibration term of Lee et al. eq. (10).
The point estimates are the clipped Rogan–Gladen difference (each θ̂ in [0, 1]) that the
bootstrap returns; ``bias_unclipped`` reports the unclipped ratio as well. A replication where
a plug-in Ĵ is exactly 0 (or a calibration set lacks one human label) has no RG estimate: it
gets the no-information interval [−1, 1], is left out of the bias, and is counted in
``undefined_share``; where no replication of a design point has one (e.g. θ_B = 1: B's
calibration set then holds no truly incorrect item), the bias is NaN and ``undefined_share``
is 1. PPI++ per system stays defined there; its zero standard error for a calibration set with
one human label only is not warned about inside the study (coverage shows its effect).

**Table** (dims ``design`` × ``estimator``; coords ``sweep``, ``j_a``, ``j_b``, ``delta_j``,
``q_a``, ``q_b`` on ``design``): ``bias``, ``coverage``, ``length`` (mean interval length),
``bias_unclipped`` (RG only), each with ``<name>_mcse``; ``bias_asymptotic`` (the large-sample
bias: :func:`naive_bias` exactly, :func:`shared_rg_bias` (App. C) for shared RG, 0 for
separate RG and PPI++, NaN for the Bayesian model); ``reps_used``; ``undefined_share``; and
for the Bayesian model ``warning_share`` (fits that raised a
:class:`~bayesjudge.ConvergenceWarning`, caught and counted), ``divergence_share`` (fits with
at least one divergent transition) and ``theta_converged_share`` (fits whose θ alone has
r_hat ≤ 1.01 and bulk and tail ESS ≥ 400, the thresholds of :func:`bayesjudge.fit`).

**Cost.** The closed forms take about 4 s per design point at the default 2000 replications
(the bootstrap dominates; about 75 s for both sweeps). The Bayesian model costs 0.5–1 s per
fit with ``draws=500, tune=500, chains=2`` after one ~10 s compile, so the default 18 points ×
200 replications take 30–60 minutes on two cores; leave ``"bayes"`` out of ``estimators`` for
a quick run. With 500 draws × 2 chains essentially every hierarchical fit warns (measured:
all of 480 fits at J_A ∈ {0.3, 0.6}), about the ESS of the population parameters
``q*_logit_mean``/``q*_logit_scale`` with two systems; 0–4 % of fits had a divergence.
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr
from scipy.stats import norm

from bayesjudge._lazy import bayesian
from bayesjudge.core.bootstrap import bootstrap_difference
from bayesjudge.core.kernels import rogan_gladen_counts, youden_numerator
from bayesjudge.core.paired import SHARED_FROM, naive_difference_bias, shared_calibration_bias
from bayesjudge.core.ppi import ppi_mean
from bayesjudge.data import JudgeCounts
from bayesjudge.simulate import simulate_counts
from bayesjudge.studies._framework import (
    StudyResult,
    check_grid,
    check_number,
    check_reps,
    check_seed,
    chunks,
    mcse_mean,
    mcse_proportion,
    point_rngs,
    progress_bar,
    study_attrs,
)
from bayesjudge.warnings import BayesJudgeWarning, ConvergenceWarning, SmallSampleWarning

__all__ = [
    "ESTIMATORS",
    "QUICK_OPTIONS",
    "QUICK_REPS",
    "SWEEPS",
    "naive_bias",
    "plot",
    "run",
    "shared_rg_bias",
    "simulate_comparison",
]

NAME = "comparison"
ESTIMATORS = ("naive", "rg_shared", "rg_separate", "ppi", "bayes")
SWEEPS = ("j", "delta_j")
RG_INTERVALS = ("bootstrap", "delta")
J_GRID = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
DELTA_J_GRID = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4)
LABELS = {
    "naive": "naive",
    "rg_shared": "RG (shared calibration)",
    "rg_separate": "RG 2× (per-system calibration)",
    "ppi": "PPI++ (per-system calibration)",
    "bayes": "Bayes (hierarchical)",
}
#: ``bayesjudge study comparison --quick``: 200 replications of the closed forms and 4 short
#: hierarchical fits per design point (about a minute on two cores, compile included), not
#: the default's 200 fits per point (30-60 minutes).
QUICK_REPS = 200
QUICK_OPTIONS = {"bayes_reps": 4, "draws": 200, "tune": 200}
_CHUNK = 500  # replications per bootstrap call (memory ~ chunk × n_resamples × 100 bytes)


# --------------------------------------------------------------------------- closed forms


# Fiedler's App. C bias formulas live in the core (bayesjudge.core.paired); the study keeps
# its historical names.
naive_bias = naive_difference_bias
shared_rg_bias = shared_calibration_bias


# --------------------------------------------------------------------------- simulation


def simulate_comparison(theta_a, theta_b, q_a, q_b, n, m, reps, random_seed=None) -> xr.Dataset:
    """Draw ``reps`` replications of the two-system comparison design.

    Each system's ``m`` calibration items are a random sample of its outputs
    (``m1 ~ Binomial(m, θ)``, ``m0 = m − m1``); test and calibration verdicts come from
    :func:`bayesjudge.simulate_counts` with ``q0 = q1 = q`` per system; the paired test table
    pairs item indices of the independent verdicts, ``n11 ~ Hypergeometric(k_A, n − k_A, k_B)``.

    Parameters
    ----------
    theta_a, theta_b : float
        True accuracies of systems A and B.
    q_a, q_b : float
        The judge's specificity = sensitivity on A's and on B's answers.
    n, m : int
        Test items (shared by both systems) and calibration items per system.
    reps : int
        Replications.
    random_seed : int, numpy.random.Generator or None
        Seed of the draws.

    Returns
    -------
    xarray.Dataset
        Variables ``n, k, m0, tn, m1, tp`` over ``(system, rep)`` and ``n11`` over ``rep``
        (test items that both systems' answers were judged correct on).

    Examples
    --------
    >>> from bayesjudge.studies.comparison import simulate_comparison
    >>> data = simulate_comparison(0.70, 0.75, 0.65, 0.675, n=1000, m=200, reps=3,
    ...                            random_seed=1)
    >>> data["k"].dims, data.sizes["rep"]
    (('system', 'rep'), 3)
    >>> bool(((data.m0 + data.m1) == 200).all())
    True
    """
    rng = np.random.default_rng(random_seed)
    theta = np.array([[theta_a], [theta_b]], dtype=float)
    q = np.array([[q_a], [q_b]], dtype=float)
    m1 = rng.binomial(int(m), theta, size=(2, reps))
    labels = [f"rep{i}" for i in range(reps)]
    counts = simulate_counts(
        theta, q, q, int(n), int(m) - m1, m1, system=["A", "B"], stratum=labels, random_seed=rng
    )
    data = counts.dataset.rename(stratum="rep")
    k_a, k_b = data["k"].sel(system="A").values, data["k"].sel(system="B").values
    n11 = rng.hypergeometric(k_a, int(n) - k_a, k_b)
    return data.assign(n11=("rep", n11))


# --------------------------------------------------------------------------- estimators


def _rg_theta(p, tn, m0, tp, m1):
    """Unclipped Rogan–Gladen θ̂ and Ĵ from counts; NaN where not identified.

    The kernel :func:`~bayesjudge.core.kernels.rogan_gladen_counts` (with ``k = p``,
    ``n = 1``) tests Ĵ = 0 exactly on the integer numerator ``tn·m1 + tp·m0 − m0·m1`` of Ĵ (in
    floating point ``tn/m0 + tp/m1 − 1`` can be 1e-17 instead of 0); ``m0 = 0`` or ``m1 = 0``
    is not identified either.
    """
    theta, ok = rogan_gladen_counts(p, 1, tn, m0, tp, m1)  # J = 0 policy: NaN
    with np.errstate(divide="ignore", invalid="ignore"):
        q0, q1 = tn / m0, tp / m1
        j = np.where(ok, youden_numerator(tn, m0, tp, m1) / np.where(ok, m0 * m1, 1), np.nan)
    return theta, j, q0, q1


def _paired_test_var(n11, n10, n01, n, wa, wb):
    """Var̂(wb·Ẑ_B − wa·Ẑ_A) / n over the joint table (population variance, as App. B)."""
    n00 = n - n11 - n10 - n01
    values = (wb - wa, -wa, wb, 0.0)
    weights = (n11, n10, n01, n00)
    mean = sum(w * v for v, w in zip(values, weights, strict=True)) / n
    var = sum(w * (v - mean) ** 2 for v, w in zip(values, weights, strict=True)) / n
    return var / n


class _Results:
    """Per-replication estimates and intervals of one estimator."""

    def __init__(self, reps: int) -> None:
        self.estimate = np.full(reps, np.nan)
        self.unclipped = np.full(reps, np.nan)
        self.lower = np.full(reps, -1.0)
        self.upper = np.full(reps, 1.0)
        self.undefined = np.zeros(reps, dtype=bool)
        self.warned = np.zeros(reps, dtype=bool)
        self.diverged = np.zeros(reps, dtype=bool)
        self.theta_ok = np.zeros(reps, dtype=bool)


def _wald(res, estimate, se, z):
    res.estimate[:] = estimate
    res.lower[:] = estimate - z * se
    res.upper[:] = estimate + z * se


def _cal(data, system):
    d = data.sel(system=system)
    return tuple(d[v].values.astype(np.int64) for v in ("tn", "m0", "tp", "m1"))


def _rg(data, shared_from, rg_interval, alpha, n_resamples, rng, shared):
    """Shared (``shared=True``) or per-system Rogan–Gladen difference θ_B − θ_A."""
    reps = data.sizes["rep"]
    n = int(data["n"].values[0, 0])
    k_a = data["k"].sel(system="A").values
    k_b = data["k"].sel(system="B").values
    n11 = data["n11"].values
    n10, n01 = k_a - n11, k_b - n11
    cal_a, cal_b = _cal(data, "A"), _cal(data, "B")
    if shared:
        if shared_from == "pooled":
            cal_c = tuple(x + y for x, y in zip(cal_a, cal_b, strict=True))
        else:
            cal_c = cal_b if shared_from == "B" else cal_a
        cal_a = cal_b = cal_c
    theta_a, j_a, q0_a, q1_a = _rg_theta(k_a / n, *cal_a)
    theta_b, j_b, q0_b, q1_b = _rg_theta(k_b / n, *cal_b)
    res = _Results(reps)
    res.undefined = np.isnan(theta_a) | np.isnan(theta_b)
    ok = ~res.undefined
    res.unclipped[ok] = (theta_b - theta_a)[ok]
    res.estimate[ok] = (np.clip(theta_b, 0, 1) - np.clip(theta_a, 0, 1))[ok]
    if rg_interval == "bootstrap":
        idx = np.flatnonzero(ok)
        for part in chunks(idx.size, _CHUNK):
            rows = idx[part]
            # B goes first so that the bootstrap's "A - B" is θ_B − θ_A; with shared
            # calibration its "_a" table is the shared one, used for both systems.
            args = (n11[rows], n01[rows], n10[rows], n - k_a[rows] - k_b[rows] + n11[rows])
            if shared:
                extra = {"shared_calibration": True}
                first = tuple(c[rows] for c in cal_c)
            else:
                extra = dict(
                    zip(("tn_b", "m0_b", "tp_b", "m1_b"), (c[rows] for c in cal_a), strict=True)
                )
                first = tuple(c[rows] for c in cal_b)
            with warnings.catch_warnings():
                # Resamples with Ĵ* = 0 are counted against the interval (conservative); the
                # warning says so once per call, which is noise inside a study.
                warnings.simplefilter("ignore", BayesJudgeWarning)
                boot = bootstrap_difference(
                    *args,
                    *first,
                    **extra,
                    alpha=alpha,
                    n_resamples=n_resamples,
                    calibration_design="random",
                    random_seed=rng,
                )
            res.lower[rows], res.upper[rows] = boot.lower, boot.upper
    else:
        z = norm.ppf(1 - alpha / 2)
        with np.errstate(divide="ignore", invalid="ignore"):
            if shared:
                # Fiedler App. B: paired test term / Ĵ² + Δp̂² (calibration variance of Ĵ) / Ĵ⁴.
                dp = (k_b - k_a) / n
                var_j = q0_a * (1 - q0_a) / cal_a[1] + q1_a * (1 - q1_a) / cal_a[3]
                var = _paired_test_var(n11, n10, n01, n, 1.0, 1.0) / j_a**2
                var += dp**2 * var_j / j_a**4
            else:
                # Paired test term of θ̂_B − θ̂_A plus each calibration term of Lee eq. (10).
                var = _paired_test_var(n11, n10, n01, n, 1 / j_a, 1 / j_b)
                for th, q0, q1, cal, j in (
                    (theta_a, q0_a, q1_a, cal_a, j_a),
                    (theta_b, q0_b, q1_b, cal_b, j_b),
                ):
                    var += (
                        (1 - th) ** 2 * q0 * (1 - q0) / cal[1] + th**2 * q1 * (1 - q1) / cal[3]
                    ) / j**2
        half = z * np.sqrt(var)
        res.lower[ok] = np.clip(res.unclipped - half, -1, 1)[ok]
        res.upper[ok] = np.clip(res.unclipped + half, -1, 1)[ok]
    return res


def _naive(data, alpha):
    reps = data.sizes["rep"]
    n = int(data["n"].values[0, 0])
    k_a = data["k"].sel(system="A").values
    k_b = data["k"].sel(system="B").values
    n11 = data["n11"].values
    res = _Results(reps)
    var = _paired_test_var(n11, k_a - n11, k_b - n11, n, 1.0, 1.0)
    _wald(res, (k_b - k_a) / n, np.sqrt(var), norm.ppf(1 - alpha / 2))
    return res


def _ppi(data, alpha):
    reps = data.sizes["rep"]
    z = norm.ppf(1 - alpha / 2)
    est, se = {}, {}
    for system in ("A", "B"):
        d = data.sel(system=system)
        with warnings.catch_warnings():
            # A calibration set with one human label only (θ near 0 or 1, small m) gives a
            # zero standard error; the interval's coverage counts the consequence, so the
            # per-call warning is noise inside a study.
            warnings.simplefilter("ignore", SmallSampleWarning)
            r = ppi_mean(
                d.k.values,
                d.n.values,
                d.tn.values,
                d.m0.values,
                d.tp.values,
                d.m1.values,
                alpha=alpha,
            )
        est[system], se[system] = r.estimate, (r.upper - r.lower) / (2 * z)
    res = _Results(reps)
    _wald(res, est["B"] - est["A"], np.sqrt(se["A"] ** 2 + se["B"] ** 2), z)
    # ppi_mean gives NaN where a labelled set has one human label only: undefined, as for RG.
    res.undefined = np.isnan(res.estimate)
    res.lower[res.undefined], res.upper[res.undefined] = -1.0, 1.0
    return res


def _bayes(data, bayes_reps, alpha, draws, tune, chains, rng, bar):
    import arviz as az

    models = bayesian("fit")  # imports PyMC, only when the study fits (bayesjudge._lazy)
    fit, rhat_max, ess_min = models.fit, models.RHAT_MAX, models.ESS_MIN
    reps = data.sizes["rep"]
    res = _Results(reps)
    seeds = rng.integers(0, 2**31 - 1, size=bayes_reps)
    for i in range(bayes_reps):
        d = data.isel(rep=i)
        counts = JudgeCounts.from_counts(
            **{v: d[v].values for v in ("n", "k", "m0", "tn", "m1", "tp")}, system=["A", "B"]
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = fit(
                counts,
                calibration="hierarchical",
                draws=draws,
                tune=tune,
                chains=chains,
                random_seed=int(seeds[i]),
            )
        for w in caught:
            if issubclass(w.category, ConvergenceWarning):
                res.warned[i] = True
            else:  # not ours to hide
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        res.diverged[i] = bool(result.tree["sample_stats"].dataset["diverging"].any())
        # The warnings of short runs mostly concern the population scales; record whether θ
        # itself meets the fit's thresholds.
        theta = result.posterior[["theta"]]
        res.theta_ok[i] = bool(
            (az.rhat(theta)["theta"] <= rhat_max).all()
            and (az.ess(theta, method="bulk")["theta"] >= ess_min).all()
            and (az.ess(theta, method="tail")["theta"] >= ess_min).all()
        )
        # compare() gives "A - B"; the estimand is θ_B − θ_A.
        cmp = result.compare("system", "theta", ci_prob=1 - alpha).squeeze()
        res.estimate[i] = -float(cmp["mean"])
        res.unclipped[i] = res.estimate[i]
        res.lower[i] = -float(cmp["ci"].sel(ci_bound="upper"))
        res.upper[i] = -float(cmp["ci"].sel(ci_bound="lower"))
        bar.update()
    used = slice(0, bayes_reps)
    for name in vars(res):
        setattr(res, name, getattr(res, name)[used])
    return res


# --------------------------------------------------------------------------- the study


def _designs(j_grid, delta_j_grid, fixed_delta_j, fixed_j_a):
    """Every design point of both sweeps, in a fixed order."""
    out = [("j", float(j), float(fixed_delta_j)) for j in j_grid]
    out += [("delta_j", float(fixed_j_a), float(dj)) for dj in delta_j_grid]
    return out


def _check_options(sweep, estimators, shared_from, rg_interval, theta_a, delta, designs):
    if sweep not in ("both", *SWEEPS):
        raise ValueError(f"sweep must be 'both', 'j' or 'delta_j'; got {sweep!r}.")
    estimators = (estimators,) if isinstance(estimators, str) else tuple(estimators)
    unknown = [e for e in estimators if e not in ESTIMATORS]
    if unknown or not estimators or len(set(estimators)) != len(estimators):
        raise ValueError(
            f"estimators must be distinct names from {ESTIMATORS}; got {list(estimators)}."
        )
    if shared_from not in SHARED_FROM:
        raise ValueError(f"shared_from must be one of {SHARED_FROM}; got {shared_from!r}.")
    if rg_interval not in RG_INTERVALS:
        raise ValueError(f"rg_interval must be one of {RG_INTERVALS}; got {rg_interval!r}.")
    if not (0 <= theta_a <= 1 and 0 <= theta_a + delta <= 1):
        raise ValueError(
            f"theta_a and theta_b = theta_a + delta must lie in [0, 1]; got {theta_a}, {delta}."
        )
    for _, j_a, dj in designs:
        if not (0 < j_a <= 1 and 0 < j_a + dj <= 1):
            raise ValueError(
                f"J_A = {j_a:g} and J_B = J_A + ΔJ = {j_a + dj:g} must lie in (0, 1] (the judge "
                f"must beat chance on both systems); check j_grid, delta_j_grid, fixed_j_a and "
                f"fixed_delta_j."
            )
    return estimators


def _check_numbers(options: dict) -> dict:
    """Check the numeric options of :func:`run`; return them as floats / ints."""
    out = dict(options)
    out["j_grid"] = check_grid("j_grid", options["j_grid"])
    out["delta_j_grid"] = check_grid("delta_j_grid", options["delta_j_grid"])
    for name in ("theta_a", "delta", "fixed_delta_j", "fixed_j_a"):
        out[name] = check_number(name, options[name])
    out["alpha"] = check_number(
        "alpha", options["alpha"], low=0, high=1, low_open=True, high_open=True
    )
    for name, low in (("n", 1), ("m", 2), ("n_resamples", 2), ("draws", 1), ("tune", 0),
                      ("chains", 1)):  # fmt: skip
        out[name] = check_number(name, options[name], low=low, integer=True)
    return out


def run(
    *,
    reps: int = 2000,
    random_seed: int = 20260505,
    progress: bool = False,
    sweep: str = "both",
    estimators=ESTIMATORS,
    bayes_reps: int = 200,
    theta_a: float = 0.70,
    delta: float = 0.05,
    n: int = 1000,
    m: int = 200,
    j_grid=J_GRID,
    delta_j_grid=DELTA_J_GRID,
    fixed_delta_j: float = 0.05,
    fixed_j_a: float = 0.3,
    shared_from: str = "B",
    rg_interval: str = "bootstrap",
    n_resamples: int = 1000,
    alpha: float = 0.05,
    draws: int = 500,
    tune: int = 500,
    chains: int = 2,
) -> StudyResult:
    """Run Fiedler's Fig. 1 study: bias, coverage and length of Δθ = θ_B − θ_A estimates.

    See the module docstring for the design, the estimators and the table.

    Parameters
    ----------
    reps : int, default 2000
        Replications per design point for the closed-form estimators.
    random_seed : int, default 20260505
        Seed; each design point gets its own stream keyed by (J_A, ΔJ) (:func:`point_rngs`), so a
        point's numbers do not depend on ``sweep`` or on the other grid points.
    progress : bool, default False
        Show a progress bar on stderr.
    sweep : {"both", "j", "delta_j"}, default "both"
        Which sweep(s) to run.
    estimators : sequence of str, default all of :data:`ESTIMATORS`
        Subset of ``("naive", "rg_shared", "rg_separate", "ppi", "bayes")``.
    bayes_reps : int, default 200
        Replications (the first ``bayes_reps`` of the same data) fitted by the Bayesian
        model; at most ``reps``.
    theta_a, delta : float, default 0.70, 0.05
        θ_A and δ = θ_B − θ_A.
    n, m : int, default 1000, 200
        Test items per system (shared items) and calibration items per system.
    j_grid, delta_j_grid : sequence of float
        J_A values of sweep ``"j"`` and ΔJ values of sweep ``"delta_j"``.
    fixed_delta_j, fixed_j_a : float, default 0.05, 0.3
        ΔJ held fixed in sweep ``"j"`` and J_A held fixed in sweep ``"delta_j"``.
    shared_from : {"B", "A", "pooled"}, default "B"
        Whose calibration set the shared-calibration RG uses (see :func:`shared_rg_bias`).
    rg_interval : {"bootstrap", "delta"}, default "bootstrap"
        Interval of the RG differences: Fiedler's paired percentile bootstrap or the delta
        method (App. B).
    n_resamples : int, default 1000
        Bootstrap resamples per replication.
    alpha : float, default 0.05
        One minus the nominal coverage.
    draws, tune, chains : int, default 500, 500, 2
        Sampler settings of the Bayesian fits.

    Returns
    -------
    StudyResult
        Table over ``design`` × ``estimator`` and :func:`plot` as its figure.

    Examples
    --------
    >>> from bayesjudge.studies import comparison
    >>> res = comparison.run(reps=200, sweep="delta_j", delta_j_grid=[0.0, 0.3],
    ...                      estimators=["naive", "rg_shared"], rg_interval="delta")
    >>> res.table["bias"].dims
    ('design', 'estimator')
    >>> res.table["bias_asymptotic"].sel(estimator="rg_shared").values.round(3)
    array([0. , 0.1])
    """
    reps = check_reps(reps)
    random_seed = check_seed(random_seed)
    bayes_reps = check_reps(bayes_reps, "bayes_reps")
    numbers = _check_numbers(
        {
            "j_grid": j_grid,
            "delta_j_grid": delta_j_grid,
            "theta_a": theta_a,
            "delta": delta,
            "fixed_delta_j": fixed_delta_j,
            "fixed_j_a": fixed_j_a,
            "alpha": alpha,
            "n": n,
            "m": m,
            "n_resamples": n_resamples,
            "draws": draws,
            "tune": tune,
            "chains": chains,
        }
    )
    j_grid, delta_j_grid = numbers["j_grid"], numbers["delta_j_grid"]
    theta_a, delta, alpha = numbers["theta_a"], numbers["delta"], numbers["alpha"]
    fixed_delta_j, fixed_j_a = numbers["fixed_delta_j"], numbers["fixed_j_a"]
    n, m, n_resamples = numbers["n"], numbers["m"], numbers["n_resamples"]
    draws, tune, chains = numbers["draws"], numbers["tune"], numbers["chains"]
    all_designs = _designs(j_grid, delta_j_grid, fixed_delta_j, fixed_j_a)
    estimators = _check_options(
        sweep, estimators, shared_from, rg_interval, theta_a, delta, all_designs
    )
    if "bayes" in estimators and bayes_reps > reps:
        raise ValueError(f"bayes_reps ({bayes_reps}) cannot exceed reps ({reps}).")
    chosen = [i for i, d in enumerate(all_designs) if sweep in ("both", d[0])]
    theta_b = theta_a + delta
    fits = bayes_reps * len(chosen) if "bayes" in estimators else 0
    bar = progress_bar(len(chosen) + fits, f"study {NAME}", enabled=progress)

    fields = ("bias", "coverage", "length", "bias_unclipped")
    out = {f: np.full((len(chosen), len(estimators)), np.nan) for f in fields}
    out.update({f"{f}_mcse": np.full_like(out["bias"], np.nan) for f in fields})
    for extra in (
        "bias_asymptotic",
        "undefined_share",
        "warning_share",
        "divergence_share",
        "theta_converged_share",
    ):
        out[extra] = np.full_like(out["bias"], np.nan)
    out["reps_used"] = np.zeros_like(out["bias"], dtype=np.int64)

    for row, index in enumerate(chosen):
        _, j_a, dj = all_designs[index]
        q_a, q_b = (1 + j_a) / 2, (1 + j_a + dj) / 2
        rng = point_rngs(random_seed, j_a, dj)[0]
        # Fixed order: the sub-streams do not depend on which estimators run.
        boot_shared, boot_separate, bayes_rng, data_rng = rng.spawn(4)
        data = simulate_comparison(theta_a, theta_b, q_a, q_b, n, m, reps, data_rng)
        truth = theta_b - theta_a
        asym = {
            "naive": naive_bias(theta_a, theta_b, q_a, q_a, q_b, q_b),
            "rg_shared": shared_rg_bias(theta_a, theta_b, q_a, q_a, q_b, q_b, shared_from),
            "rg_separate": 0.0,
            "ppi": 0.0,
            "bayes": np.nan,
        }
        for col, name in enumerate(estimators):
            if name == "naive":
                res = _naive(data, alpha)
            elif name == "rg_shared":
                res = _rg(data, shared_from, rg_interval, alpha, n_resamples, boot_shared, True)
            elif name == "rg_separate":
                res = _rg(data, shared_from, rg_interval, alpha, n_resamples, boot_separate, False)
            elif name == "ppi":
                res = _ppi(data, alpha)
            else:
                res = _bayes(data, bayes_reps, alpha, draws, tune, chains, bayes_rng, bar)
            used = res.estimate.size
            ok = ~res.undefined
            err = res.estimate[ok] - truth
            covered = (res.lower <= truth) & (truth <= res.upper)
            length = res.upper - res.lower
            if err.size >= 2:  # else never defined here: NaN bias, undefined_share says why
                out["bias"][row, col] = err.mean()
                out["bias_mcse"][row, col] = mcse_mean(err)
            out["coverage"][row, col] = covered.mean()
            out["coverage_mcse"][row, col] = mcse_proportion(covered.mean(), used)
            out["length"][row, col] = length.mean()
            out["length_mcse"][row, col] = mcse_mean(length)
            if name.startswith("rg") and err.size >= 2:
                err_u = res.unclipped[ok] - truth
                out["bias_unclipped"][row, col] = err_u.mean()
                out["bias_unclipped_mcse"][row, col] = mcse_mean(err_u)
            if name == "bayes":
                out["warning_share"][row, col] = res.warned.mean()
                out["divergence_share"][row, col] = res.diverged.mean()
                out["theta_converged_share"][row, col] = res.theta_ok.mean()
            out["bias_asymptotic"][row, col] = asym[name]
            out["undefined_share"][row, col] = res.undefined.mean()
            out["reps_used"][row, col] = used
        bar.update()

    picked = [all_designs[i] for i in chosen]
    j_a = np.array([d[1] for d in picked])
    dj = np.array([d[2] for d in picked])
    dims = ("design", "estimator")
    table = xr.Dataset(
        {name: (dims, values) for name, values in out.items()},
        coords={
            "design": np.arange(len(picked)),
            "estimator": list(estimators),
            "sweep": ("design", [d[0] for d in picked]),
            "j_a": ("design", j_a),
            "j_b": ("design", j_a + dj),
            "delta_j": ("design", dj),
            "q_a": ("design", (1 + j_a) / 2),
            "q_b": ("design", (1 + j_a + dj) / 2),
        },
        attrs=study_attrs(
            NAME,
            reps=reps,
            random_seed=random_seed,
            sweep=sweep,
            estimators=list(estimators),
            bayes_reps=bayes_reps if "bayes" in estimators else 0,
            theta_a=theta_a,
            theta_b=theta_b,
            delta=delta,
            n=n,
            m=m,
            j_grid=[float(v) for v in j_grid],
            delta_j_grid=[float(v) for v in delta_j_grid],
            fixed_delta_j=fixed_delta_j,
            fixed_j_a=fixed_j_a,
            shared_from=shared_from,
            rg_interval=rg_interval,
            n_resamples=n_resamples,
            alpha=alpha,
            draws=draws,
            tune=tune,
            chains=chains,
            estimand="theta_B - theta_A",
            judge="q0 = q1 = (1 + J) / 2",
        ),
    )
    return StudyResult(NAME, table, plot)


# --------------------------------------------------------------------------- figure


def plot(table: xr.Dataset):
    """Fiedler's Fig. 1: coverage (top) and bias (bottom) against J_A (left) and ΔJ (right).

    Error bars are ±2 Monte Carlo standard errors; thin dashed lines are the large-sample bias
    of the naive and shared-calibration RG estimators (``bias_asymptotic``).

    Parameters
    ----------
    table : xarray.Dataset
        The table of :func:`run`.

    Returns
    -------
    matplotlib.figure.Figure
        The 2 × 2 figure.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from bayesjudge.studies import comparison
    >>> res = comparison.run(reps=50, sweep="j", j_grid=[0.5, 0.7], rg_interval="delta",
    ...                      estimators=["naive", "rg_separate"])
    >>> fig = comparison.plot(res.table)
    >>> len(fig.axes)
    4
    >>> plt.close(fig)
    """
    import matplotlib.pyplot as plt

    alpha = float(table.attrs.get("alpha", 0.05))
    fig, axes = plt.subplots(
        2, 2, figsize=(11, 8), sharex="col", sharey="row", constrained_layout=True
    )
    colors = dict(zip(ESTIMATORS, plt.rcParams["axes.prop_cycle"].by_key()["color"], strict=False))
    for col, (sweep, xname, xlabel) in enumerate(
        (
            ("j", "j_a", f"$J_A$ ($\\Delta J$ = {table.attrs.get('fixed_delta_j', 0.05)})"),
            ("delta_j", "delta_j", f"$\\Delta J$ ($J_A$ = {table.attrs.get('fixed_j_a', 0.3)})"),
        )
    ):
        part = table.where(table["sweep"] == sweep, drop=True)
        ax_cov, ax_bias = axes[0, col], axes[1, col]
        ax_cov.axhline(1 - alpha, color="k", linestyle=":", linewidth=1)
        ax_bias.axhline(0.0, color="k", linestyle=":", linewidth=1)
        if part.sizes.get("design", 0) == 0:
            for ax in (ax_cov, ax_bias):
                ax.text(0.5, 0.5, f"sweep {sweep!r} not run", ha="center", transform=ax.transAxes)
        for name in table["estimator"].values.tolist():
            if part.sizes.get("design", 0) == 0:
                break
            sel = part.sel(estimator=name)
            x = sel[xname].values
            style = dict(color=colors[name], marker="o", markersize=4, capsize=2)
            ax_cov.errorbar(
                x, sel["coverage"], yerr=2 * sel["coverage_mcse"], label=LABELS[name], **style
            )
            ax_bias.errorbar(x, sel["bias"], yerr=2 * sel["bias_mcse"], label=LABELS[name], **style)
            if name in ("naive", "rg_shared"):
                ax_bias.plot(
                    x, sel["bias_asymptotic"], color=colors[name], linestyle="--", linewidth=1
                )
        ax_cov.set_title(f"Coverage vs {xlabel}")
        ax_bias.set_title(f"Bias vs {xlabel}")
        ax_bias.set_xlabel(xlabel)
    axes[0, 0].set_ylabel(f"coverage of the {1 - alpha:.0%} interval")
    axes[1, 0].set_ylabel("bias of $\\hat\\theta_B - \\hat\\theta_A$")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    if not handles:
        handles, labels = axes[0, 1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=3, frameon=False)
    fig.suptitle(
        f"Model comparison, δ = θ_B − θ_A = {table.attrs.get('delta', 0.05)}, "
        f"q0 = q1 = (1 + J)/2 (Fiedler Fig. 1); dashed: large-sample bias"
    )
    return fig
