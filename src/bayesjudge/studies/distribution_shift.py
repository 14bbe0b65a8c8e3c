"""Five estimators when the calibration accuracy θ_Q ≠ θ_P (Lee et al. Fig. 7).

Lee et al. Sec. 8 (Table 2, Fig. 7, App. E). A test set of ``n`` items is drawn from P with
true accuracy θ_P, a calibration set of ``m`` items from Q with θ_Q; the judge's behaviour
Pr(Ẑ | Z) — specificity q0, sensitivity q1 — is the same on both (eq. 12 and the invariance
assumption before it). Per replication, with test counts (n, k) and calibration counts
(m0, tn, m1, tp), m = m0 + m1, fp = m0 − tn (judge says correct, truth incorrect) and
fn = m1 − tp, and p̂ = k / n:

(i) naive ``E_P[Ẑ]``: ``p̂``.
(ii) calibration-only ``E_Q[Z]``: ``m1 / m`` (the human-label mean).
(iii) difference (PPI) ``E_P[Ẑ] + E_Q[Z − Ẑ]``: ``p̂ + (m1 − (tp + fp)) / m``.
(iv) conditional calibration ``Pr_Q(Z | Ẑ) E_P[Ẑ]``:
     ``p̂ · tp / (tp + fp) + (1 − p̂) · fn / (fn + tn)``.
(v) misclassification-adjusted = Rogan–Gladen ``Pr_Q(Ẑ | Z)⁻¹ E_P[Ẑ]`` (App. B.3):
    ``(p̂ + q̂0 − 1) / (q̂0 + q̂1 − 1)`` with q̂0 = tn / m0, q̂1 = tp / m1, **unclipped**
    (:func:`bayesjudge.core.correction.rogan_gladen` with ``clip=False``), so its mean is the
    estimator's own expectation rather than a truncated one.

Expectations (used by the tests and stored in the table as ``expected``), with
p_P = θ_P q1 + (1 − θ_P)(1 − q0), p_Q likewise with θ_Q, J = q0 + q1 − 1:

(i) ``p_P``; bias ``p_P − θ_P``, whatever θ_Q.
(ii) ``θ_Q``; bias ``θ_Q − θ_P``.
(iii) ``p_P + θ_Q − p_Q``; bias ``(θ_Q − θ_P)(1 − J)`` — the sign of θ_Q − θ_P, shrunk by
      1 − J.
(iv) Given the number of calibration items the judge calls correct, K ~ Bin(m, p_Q) with
     0 < K < m, tp | K ~ Bin(K, PPV_Q) and fn | K ~ Bin(m − K, FOR_Q), with
     PPV_Q = θ_Q q1 / p_Q and FOR_Q = θ_Q (1 − q1) / (1 − p_Q). So, exactly (given 0 < K < m),
     ``E = p_P PPV_Q + (1 − p_P) FOR_Q``; zero bias at θ_Q = θ_P, and the sign of θ_Q − θ_P
     otherwise.
(v) Linear in p̂, so ``E = E[(p_P + q̂0 − 1) / Ĵ]`` over the calibration counts; computed
    exactly by summing over m1 ~ Bin(m, θ_Q), tn ~ Bin(m0, q0), tp ~ Bin(m1, q1), given
    m0, m1 > 0 and Ĵ ≠ 0. It does not depend on the shift except through the sizes m0, m1:
    the bias is the O(1/m) bias of Prop. 5.1, ≈ (θ_P Var q̂1 − (1 − θ_P) Var q̂0) / J², not
    θ_Q − θ_P.

Replications where an estimator is undefined (m0 or m1 = 0, or Ĵ = 0 for RG; no calibration
item judged correct, or none judged incorrect, for (iv)) are left out of its moments and
counted in ``undefined``; the exact expectations condition on the same events. With the paper's
sizes this never happens in practice (probability < 1e-25). An estimator that is never defined
at a design point (RG at θ_Q ∈ {0, 1}, where every calibration item has the same human label)
has ``undefined`` = 1 and NaN moments and expectation there.
"""

from __future__ import annotations

import numpy as np
import xarray as xr
from scipy import stats

from bayesjudge.core._validation import as_count, as_probability
from bayesjudge.core.correction import rogan_gladen
from bayesjudge.simulate import simulate_count_arrays
from bayesjudge.studies._framework import (
    StudyResult,
    check_grid,
    check_number,
    check_reps,
    check_seed,
    mcse_mean,
    point_rngs,
    progress_bar,
    study_attrs,
)

__all__ = ["ESTIMATORS", "estimates", "expected_estimates", "plot", "run"]

NAME = "distribution-shift"
ESTIMATORS = (
    "naive",
    "calibration_only",
    "difference",
    "conditional_calibration",
    "rogan_gladen",
)
_LABELS = {
    "naive": "(i) naive p̂",
    "calibration_only": "(ii) calibration-only",
    "difference": "(iii) difference (PPI)",
    "conditional_calibration": "(iv) conditional calibration",
    "rogan_gladen": "(v) misclassification-adjusted (RG)",
}
_TAIL = 1e-15
DEFAULT_GRID = tuple(np.round(np.linspace(0.25, 0.75, 11), 10).tolist())


def estimates(n, k, m0, tn, m1, tp) -> dict[str, np.ndarray]:
    """Return the five Table 2 estimates from count arrays (NaN where undefined).

    Parameters
    ----------
    n, k, m0, tn, m1, tp : array_like of int
        Test and calibration counts, any common shape.

    Returns
    -------
    dict of str to numpy.ndarray
        One float array per name in :data:`ESTIMATORS`.

    Examples
    --------
    >>> from bayesjudge.studies.distribution_shift import estimates
    >>> est = estimates(n=1000, k=600, m0=100, tn=70, m1=100, tp=90)
    >>> {name: round(float(v), 3) for name, v in est.items()}  # doctest: +NORMALIZE_WHITESPACE
    {'naive': 0.6, 'calibration_only': 0.5, 'difference': 0.5,
     'conditional_calibration': 0.5, 'rogan_gladen': 0.5}
    """
    arrays = np.broadcast_arrays(*(np.asarray(a, float) for a in (n, k, m0, tn, m1, tp)))
    shape = arrays[0].shape
    n, k, m0, tn, m1, tp = (a.reshape(-1) for a in arrays)
    m = m0 + m1
    fp, fn = m0 - tn, m1 - tp
    p_hat = k / n
    with np.errstate(invalid="ignore", divide="ignore"):
        ppv = tp / (tp + fp)
        false_omission = fn / (fn + tn)
        q0_hat, q1_hat = tn / m0, tp / m1
    rg = np.full(p_hat.shape, np.nan)
    ok = (m0 > 0) & (m1 > 0)
    ok[ok] = q0_hat[ok] + q1_hat[ok] != 1
    rg[ok] = rogan_gladen(p_hat[ok], q0_hat[ok], q1_hat[ok], clip=False)
    out = {
        "naive": p_hat,
        "calibration_only": m1 / m,
        "difference": p_hat + (m1 - (tp + fp)) / m,
        "conditional_calibration": ppv * p_hat + false_omission * (1 - p_hat),
        "rogan_gladen": rg,
    }
    return {name: value.reshape(shape) for name, value in out.items()}


def _support(size: int, prob: float, lowest: int = 0) -> np.ndarray:
    """Values of Binomial(size, prob) outside whose range lies < 2e-15 of the probability."""
    low = max(int(stats.binom.ppf(_TAIL, size, prob)) - 1, lowest)
    high = min(int(stats.binom.isf(_TAIL, size, prob)) + 1, size - lowest)
    return np.arange(low, high + 1)


def _expected_rogan_gladen(p_test: float, theta_q: float, q0: float, q1: float, m: int) -> float:
    """E[(p_P + q̂0 − 1) / Ĵ] given m0, m1 > 0 and Ĵ ≠ 0, by exact summation.

    The sums run over m1 ~ Bin(m, θ_Q), tn ~ Bin(m0, q0) and tp ~ Bin(m1, q1), each cut to
    the range that holds all but 2e-15 of its probability (a relative error below 1e-12 with
    the paper's sizes); within the range every table is summed exactly.
    """
    total, weight = 0.0, 0.0
    for m1 in _support(m, theta_q, lowest=1):
        m0 = m - m1
        tn = _support(m0, q0)[:, None]
        tp = _support(m1, q1)[None, :]
        w = stats.binom.pmf(tn, m0, q0) * stats.binom.pmf(tp, m1, q1)
        q0_hat, q1_hat = tn / m0, tp / m1
        j_hat = q0_hat + q1_hat - 1
        defined = j_hat != 0
        value = np.where(defined, (p_test + q0_hat - 1) / np.where(defined, j_hat, 1), 0.0)
        w_m1 = stats.binom.pmf(m1, m, theta_q)
        total += w_m1 * float((w * value).sum())
        weight += w_m1 * float(w[defined].sum())
    # θ_Q ∈ {0, 1}: m0 or m1 is 0 with probability 1, so RG is never defined.
    return total / weight if weight > 0 else float("nan")


def expected_estimates(theta_test, theta_calibration, q0, q1, m) -> dict[str, float]:
    """Exact expectations of the five estimators (see the module notes for the formulas).

    Parameters
    ----------
    theta_test, theta_calibration : float
        True accuracy θ_P of the test set and θ_Q of the calibration distribution.
    q0, q1 : float
        Judge specificity and sensitivity (the same on P and Q).
    m : int
        Calibration items drawn at random from Q.

    Returns
    -------
    dict of str to float
        Expectation per estimator, conditional on the estimator being defined. The test size
        n does not enter: every estimator is linear in p̂ given the calibration counts.

    Examples
    --------
    >>> from bayesjudge.studies.distribution_shift import expected_estimates
    >>> e = expected_estimates(0.5, 0.75, 0.7, 0.9, m=200)
    >>> [round(e[name], 4) for name in ("naive", "calibration_only", "difference")]
    [0.6, 0.75, 0.6]
    >>> round(e["conditional_calibration"], 4)
    0.66
    """
    theta_p = float(as_probability("theta_test", theta_test))
    theta_q = float(as_probability("theta_calibration", theta_calibration))
    q0, q1 = float(as_probability("q0", q0)), float(as_probability("q1", q1))
    m = int(as_count("m", m, positive=True))
    p_test = theta_p * q1 + (1 - theta_p) * (1 - q0)
    p_cal = theta_q * q1 + (1 - theta_q) * (1 - q0)
    ppv = theta_q * q1 / p_cal if p_cal > 0 else np.nan
    false_omission = theta_q * (1 - q1) / (1 - p_cal) if p_cal < 1 else np.nan
    return {
        "naive": p_test,
        "calibration_only": theta_q,
        "difference": p_test + theta_q - p_cal,
        "conditional_calibration": p_test * ppv + (1 - p_test) * false_omission,
        "rogan_gladen": _expected_rogan_gladen(p_test, theta_q, q0, q1, m),
    }


def run(
    *,
    reps: int = 10_000,
    random_seed: int = 20_260_408,
    progress: bool = False,
    theta_test: float = 0.5,
    theta_calibration=DEFAULT_GRID,
    q0: float = 0.7,
    q1: float = 0.9,
    n: int = 1000,
    m: int = 200,
) -> StudyResult:
    """Bias of the five Table 2 estimators as the calibration accuracy θ_Q moves (Fig. 7).

    Parameters
    ----------
    reps : int, default 10000
        Monte Carlo replications per θ_Q (the paper's 10,000).
    random_seed : int
        Seed; each θ_Q gets its own stream keyed by its value (:func:`point_rngs`).
    progress : bool, default False
        Show a progress bar on stderr.
    theta_test : float, default 0.5
        θ_P, the test-set accuracy.
    theta_calibration : sequence of float, default 0.25, 0.30, …, 0.75
        θ_Q grid.
    q0, q1 : float, default 0.7, 0.9
        Judge specificity and sensitivity.
    n, m : int, default 1000, 200
        Test items and calibration items (drawn at random from Q) per replication.

    Returns
    -------
    StudyResult
        Table over dims ``(theta_calibration, estimator)`` with ``mean``, ``bias``, ``sd``,
        ``rmse`` (each with ``*_mcse``: sd/√R for mean and bias, the delta method for sd,
        √((μ̂4 − s⁴)/R)/(2s), and for rmse, neither assuming normal estimates), ``expected``
        and ``expected_bias`` (exact, from :func:`expected_estimates`) and ``undefined``
        (share of replications left out).

    References
    ----------
    .. [1] C. Lee et al., "How to Correctly Report LLM-as-a-Judge Evaluations", Sec. 8,
       Table 2, Fig. 7 and App. E.

    Examples
    --------
    >>> from bayesjudge.studies import distribution_shift
    >>> result = distribution_shift.run(reps=200, theta_calibration=[0.25, 0.5])
    >>> result.table["bias"].sizes
    Frozen({'theta_calibration': 2, 'estimator': 5})
    >>> round(float(result.table["expected_bias"].sel(theta_calibration=0.25,
    ...                                               estimator="calibration_only")), 2)
    -0.25
    """
    reps = check_reps(reps)
    random_seed = check_seed(random_seed)
    grid = np.array(check_grid("theta_calibration", theta_calibration, low=0, high=1))
    theta_p = check_number("theta_test", theta_test, low=0, high=1)
    q0 = check_number("q0", q0, low=0, high=1)
    q1 = check_number("q1", q1, low=0, high=1)
    n = check_number("n", n, low=1, integer=True)
    m = check_number("m", m, low=1, integer=True)

    shape = (grid.size, len(ESTIMATORS))
    out = {
        name: np.empty(shape)
        for name in (
            "mean",
            "mean_mcse",
            "bias",
            "bias_mcse",
            "sd",
            "sd_mcse",
            "rmse",
            "rmse_mcse",
            "expected",
            "expected_bias",
            "undefined",
        )
    }
    bar = progress_bar(grid.size, NAME, enabled=progress)
    for i, theta_q in enumerate(grid):
        rng = point_rngs(random_seed, theta_q)[0]
        draws = simulate_count_arrays(
            theta_p,
            q0,
            q1,
            n,
            calibration="random",
            m=m,
            theta_calibration=theta_q,
            size=(reps,),
            random_seed=rng,
        )
        values = estimates(**draws)
        expected = expected_estimates(theta_p, theta_q, q0, q1, m)
        for j, name in enumerate(ESTIMATORS):
            v = values[name]
            v = v[np.isfinite(v)]
            used = v.size
            out["undefined"][i, j] = 1 - used / reps
            out["expected"][i, j] = expected[name]
            out["expected_bias"][i, j] = expected[name] - theta_p
            if used < 2:  # never defined (e.g. RG at θ_Q ∈ {0, 1}): no moments, say so
                for key in ("mean", "mean_mcse", "bias", "bias_mcse", "sd", "sd_mcse"):
                    out[key][i, j] = np.nan
                out["rmse"][i, j] = out["rmse_mcse"][i, j] = np.nan
                continue
            error = v - theta_p
            mean, sd = v.mean(), v.std(ddof=1)
            rmse = np.sqrt(np.mean(error**2))
            out["mean"][i, j] = mean
            out["bias"][i, j] = mean - theta_p
            out["mean_mcse"][i, j] = out["bias_mcse"][i, j] = mcse_mean(v)
            out["sd"][i, j] = sd
            # Delta method, no normality: SE(s) = SE(s²)/(2s), SE(s²) = √((μ̂4 − s⁴)/R).
            fourth = np.mean((v - mean) ** 4)
            out["sd_mcse"][i, j] = (
                np.sqrt(max(fourth - sd**4, 0.0) / used) / (2 * sd) if sd > 0 else 0.0
            )
            out["rmse"][i, j] = rmse
            # delta method: SE(sqrt(mean e^2)) = SE(mean e^2) / (2 rmse)
            out["rmse_mcse"][i, j] = mcse_mean(error**2) / (2 * rmse) if rmse > 0 else 0.0
        bar.update()

    dims = ("theta_calibration", "estimator")
    table = xr.Dataset(
        {name: (dims, values) for name, values in out.items()},
        coords={"theta_calibration": grid, "estimator": list(ESTIMATORS)},
        attrs=study_attrs(
            NAME,
            reps=reps,
            random_seed=random_seed,
            theta_test=theta_p,
            theta_calibration=grid,
            q0=q0,
            q1=q1,
            n=n,
            m=m,
            rogan_gladen_clipped=False,
        ),
    )
    table["bias"].attrs["description"] = "mean estimate minus theta_test"
    table["expected"].attrs["description"] = "exact expectation (module notes)"
    table["undefined"].attrs["description"] = "share of replications where undefined"
    return StudyResult(NAME, table, plot)


def plot(table: xr.Dataset):
    """Bias against θ_Q per estimator, with ±2 MC-SE bands and the exact expected bias.

    Parameters
    ----------
    table : xarray.Dataset
        The table of :func:`run`.

    Returns
    -------
    matplotlib.figure.Figure
        One panel, like Lee et al. Fig. 7.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from bayesjudge.studies import distribution_shift
    >>> fig = distribution_shift.plot(distribution_shift.run(reps=50).table)
    >>> fig.axes[0].get_xlabel()
    'calibration accuracy θ_Q'
    >>> plt.close(fig)
    """
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    x = table["theta_calibration"].values
    for name in table["estimator"].values.tolist():
        bias = table["bias"].sel(estimator=name).values
        band = 2 * table["bias_mcse"].sel(estimator=name).values
        (line,) = ax.plot(x, bias, marker="o", ms=3, label=_LABELS.get(name, name))
        ax.fill_between(x, bias - band, bias + band, color=line.get_color(), alpha=0.25)
        if "expected_bias" in table:
            ax.plot(
                x,
                table["expected_bias"].sel(estimator=name).values,
                ls=":",
                color=line.get_color(),
            )
    ax.axhline(0, color="black", lw=0.8)
    theta_p = table.attrs.get("theta_test")
    if theta_p is not None:
        ax.axvline(theta_p, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("calibration accuracy θ_Q")
    ax.set_ylabel("bias (estimate − θ_P)")
    ax.set_title(
        f"Distribution shift: θ_P = {theta_p}, q0 = {table.attrs.get('q0')}, "
        f"q1 = {table.attrs.get('q1')}, n = {table.attrs.get('n')}, m = {table.attrs.get('m')}"
        f" ({table.attrs.get('reps')} reps; bands ±2 MC-SE, dotted: exact)",
        fontsize=9,
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
