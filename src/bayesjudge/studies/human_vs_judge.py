"""When a corrected judge beats human-only labelling with the same label budget.

Reproduces Lee et al., Sec. 6, Fig. 4 and Prop. 6.1 analytically and by Monte Carlo. A budget
of ``m`` human labels can either (i) calibrate the judge, whose verdicts on an unlimited test
set are then corrected (Rogan–Gladen, eq. 5), or (ii) label ``m`` test items directly, giving
the human-only estimate φ̂ = M1/m. Fig. 4 shades the (q0, q1, θ) where (i) has the smaller
variance as ``m → ∞``; Prop. 6.1 gives the region in closed form for q0 = q1 = q:
θ(1 − θ) ≥ q(1 − q)/(2q − 1)², non-empty iff q ≥ 1/2 + 1/(2√2) ≈ 0.854.

Design (defaults; every one is an option of :func:`run`)
--------------------------------------------------------
* q0, q1 ∈ {0.75, 0.8, 0.85, 0.9, 0.95} (all 25 pairs; the diagonal is Prop. 6.1's q),
  θ ∈ {0.05, 0.10, …, 0.95}.
* m = 1000 human labels; unlimited test set (``n = None``, as in Fig. 4 and Prop. 6.1).
* 10,000 replications per (q0, q1, θ).

One replicate: the m labelled items are a random sample of the test distribution, so
M1 ~ Binomial(m, θ) of them are truly correct; the judge gets tp ~ Binomial(M1, q1) and
tn ~ Binomial(m − M1, q0) of them right. The judge estimate is the unclipped Rogan–Gladen
θ̂ = (p + q̂0 − 1)/(q̂0 + q̂1 − 1) with p = θ q1 + (1 − θ)(1 − q0) (or p̂ = k/n for a finite
``n``), and the human-only estimate is φ̂ = M1/m from the *same* labels, so the two variances
come from one set of draws. Replicates in which q̂0 or q̂1 is undefined (M1 ∈ {0, m}) or
q̂0 + q̂1 = 1 are dropped and counted (``undefined_share``; 0 at the defaults).

Table (dims ``q0``, ``q1``, ``theta``)
--------------------------------------
``var_judge``, ``var_human``: Monte Carlo variances of θ̂ and φ̂, with MC-SE
√((μ̂4 − s⁴)/R); ``ratio`` = var_judge/var_human with the MC-SE of a ratio of means of the
squared deviations a_i, b_i from the same draws, sd(a_i − r b_i)/(√R · mean(b)) (delta method;
it accounts for the two being computed from the same replicates).
``var_judge_analytic``, ``var_human_analytic``, ``ratio_analytic``: eq. (10) at the true values
with the expected split m1 = θ m, and θ(1 − θ)/m
(:func:`~bayesjudge.core.allocation.variance_vs_human_only`); with ``n = None`` the ratio does
not depend on m and is Fig. 4's quantity, and on the diagonal ``ratio_analytic <= 1`` is exactly
Prop. 6.1's region (:func:`~bayesjudge.core.allocation.human_only_regime`).
``judge_better_analytic``: ``ratio_analytic < 1``.

What it shows (default run)
---------------------------
* The judge wins around θ = 1/2 once q0 and q1 are high, never for q0 = q1 ≤ 0.85 (Prop. 6.1's
  threshold is 0.854), and the region reaches further towards θ = 0 as q0 → 1 and towards
  θ = 1 as q1 → 1: with a random calibration sample the judge's variance is
  [(1 − θ) q0(1 − q0) + θ q1(1 − q1)]/(m J²), dominated by the errors on the *common* label
  type, while the human-only variance θ(1 − θ)/m vanishes at the ends.
* The Monte Carlo ratios agree with the analytic ones point by point within about 4 MC-SE
  (relative MC-SE 2 %), but at m = 1000 the simulated judge variance is on average 1–2 %
  above eq. (10): the delta method is O(1/m) optimistic for a ratio estimator. The offset is
  invisible at m = 20,000. Classification (judge better or not) agrees with Prop. 6.1 at
  every diagonal point not within 4 MC-SE of the boundary.

Run it with ``bayesjudge study human-vs-judge`` or :func:`run`.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayesjudge.core.allocation import human_only_regime, variance_vs_human_only
from bayesjudge.core.kernels import rogan_gladen_ratio, youden_is_zero
from bayesjudge.studies._framework import (
    StudyResult,
    check_grid,
    check_number,
    check_reps,
    check_seed,
    mcse_proportion,
    point_rngs,
    progress_bar,
    study_attrs,
)

__all__ = ["plot", "run"]

NAME = "human-vs-judge"
_DEFAULT_Q = (0.75, 0.8, 0.85, 0.9, 0.95)
_DEFAULT_THETA = tuple(round(0.05 * i, 2) for i in range(1, 20))


def _check_settings(q0, q1, theta, m, n):
    q0 = check_grid("q0", q0, low=0.5, high=1.0, low_open=True, high_open=True)
    q1 = check_grid("q1", q1, low=0.5, high=1.0, low_open=True, high_open=True)
    theta = check_grid("theta", theta, low=0.0, high=1.0, low_open=True, high_open=True)
    m = check_number("m", m, low=2, integer=True)
    n = check_number("n", n, low=1, integer=True, allow_none=True)
    return q0, q1, theta, m, n


def _simulate_point(rng, theta, q0, q1, m, n, reps):
    """Draw ``reps`` judge estimates θ̂ and human-only estimates φ̂ from the same labels.

    Returns
    -------
    judge, human : ndarray
        Unclipped Rogan–Gladen estimates and M1/m, over the replicates where θ̂ is defined.
    undefined : int
        Replicates dropped because q̂0 or q̂1 is undefined or q̂0 + q̂1 = 1.
    """
    big_m1 = rng.binomial(m, theta, reps)
    tp = rng.binomial(big_m1, q1)
    tn = rng.binomial(m - big_m1, q0)
    p = theta * q1 + (1 - theta) * (1 - q0)
    p_hat = np.full(reps, p) if n is None else rng.binomial(n, p, reps) / n
    # Rogan–Gladen, eq. (5), not clipped; identified: m0, m1 > 0 and Ĵ ≠ 0 (exact on counts).
    judge, ok = rogan_gladen_ratio(
        p_hat, tn / np.maximum(m - big_m1, 1), tp / np.maximum(big_m1, 1)
    )
    ok &= (big_m1 > 0) & (big_m1 < m) & ~youden_is_zero(tn, m - big_m1, tp, big_m1)
    return judge[ok], big_m1[ok] / m, int((~ok).sum())  # J = 0 policy: drop (counted)


def _variance_and_se(x: np.ndarray) -> tuple[float, float]:
    """Sample variance and its MC-SE √((μ̂4 − s⁴)/R)."""
    v = float(x.var(ddof=1))
    c = x - x.mean()
    return v, float(np.sqrt(max(np.mean(c**4) - v**2, 0.0) / x.size))


def _ratio_and_se(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Var(x)/Var(y) from paired draws and its delta-method MC-SE."""
    a = (x - x.mean()) ** 2
    b = (y - y.mean()) ** 2
    r = float(a.mean() / b.mean())
    return r, float((a - r * b).std(ddof=1) / (np.sqrt(a.size) * b.mean()))


def run(
    *,
    reps: int = 10_000,
    random_seed: int = 20_261,
    progress: bool = False,
    q0=_DEFAULT_Q,
    q1=_DEFAULT_Q,
    theta=_DEFAULT_THETA,
    m: int = 1000,
    n: int | None = None,
) -> StudyResult:
    """Simulate and compute the corrected judge's variance against human-only labelling.

    Parameters
    ----------
    reps : int, default 10,000
        Replications per (q0, q1, θ).
    random_seed : int, default 20261
        Seed; each design point draws from its own stream keyed by its values (:func:`point_rngs`).
    progress : bool, default False
        Show a progress bar on stderr.
    q0, q1 : sequence of float, default (0.75, 0.8, 0.85, 0.9, 0.95)
        Judge specificities and sensitivities, each in (0.5, 1); every pair is run.
    theta : sequence of float, default 0.05, 0.10, ..., 0.95
        True accuracies, each in (0, 1).
    m : int, default 1000
        Human-label budget: calibration items for the judge or test items for φ̂.
    n : int, optional
        Judge-scored test items; None (default) means unlimited, as in Prop. 6.1.

    Returns
    -------
    StudyResult
        Table with dims ``q0``, ``q1``, ``theta`` (see the module docstring).

    Examples
    --------
    >>> t = run(reps=2000, q0=[0.9], q1=[0.9], theta=[0.5]).table.squeeze()
    >>> print(f"analytic {float(t.ratio_analytic):.4f}")
    analytic 0.5625
    >>> bool(abs(t.ratio - t.ratio_analytic) < 4 * t.ratio_mcse)
    True
    """
    reps = check_reps(reps)
    random_seed = check_seed(random_seed)
    q0, q1, theta, m, n = _check_settings(q0, q1, theta, m, n)
    shape = (len(q0), len(q1), len(theta))
    keys = ("var_judge", "var_human", "ratio")
    est = {k: np.empty(shape) for k in keys}
    se = {k: np.empty(shape) for k in keys}
    undefined = np.empty(shape)
    bar = progress_bar(int(np.prod(shape)), NAME, enabled=progress)
    for idx in np.ndindex(shape):
        i, j, k = idx
        judge, human, dropped = _simulate_point(
            point_rngs(random_seed, q0[i], q1[j], theta[k])[0], theta[k], q0[i], q1[j], m, n, reps
        )
        est["var_judge"][idx], se["var_judge"][idx] = _variance_and_se(judge)
        est["var_human"][idx], se["var_human"][idx] = _variance_and_se(human)
        est["ratio"][idx], se["ratio"][idx] = _ratio_and_se(judge, human)
        undefined[idx] = dropped / reps
        bar.update()
    grid = np.meshgrid(q0, q1, theta, indexing="ij")
    analytic = variance_vs_human_only(grid[2], grid[0], grid[1], m, n=n)
    dims = ("q0", "q1", "theta")
    data = {}
    for key in keys:
        data[key] = (dims, est[key])
        data[f"{key}_mcse"] = (dims, se[key])
    data["var_judge_analytic"] = (dims, np.asarray(analytic.judge))
    data["var_human_analytic"] = (dims, np.asarray(analytic.human))
    data["ratio_analytic"] = (dims, np.asarray(analytic.ratio))
    data["judge_better_analytic"] = (dims, np.asarray(analytic.ratio) < 1)
    data["undefined_share"] = (dims, undefined)
    data["undefined_share_mcse"] = (dims, mcse_proportion(undefined, reps))
    table = xr.Dataset(
        data,
        coords={"q0": list(q0), "q1": list(q1), "theta": list(theta)},
        attrs=study_attrs(
            NAME,
            reps=reps,
            random_seed=random_seed,
            q0=list(q0),
            q1=list(q1),
            theta=list(theta),
            m=m,
            n=n,
            reproduces="Lee et al., Fig. 4 and Prop. 6.1 (Sec. 6)",
        ),
    )
    return StudyResult(NAME, table, plot)


def plot(table: xr.Dataset):
    """Draw the region where the judge wins, analytic and Monte Carlo, one panel per q0.

    Each panel has θ on the x-axis and q1 on the y-axis. Shaded: the analytic region
    ``ratio_analytic < 1`` (eq. 10 with the expected split, evaluated on a fine grid, solid
    boundary), as in Lee et al.'s Fig. 4. Markers: the Monte Carlo ratio at each design point,
    filled where it is below 1 by more than 2 MC-SE, open where above 1 by more than 2 MC-SE,
    grey where undecided. A black bar at q1 = q0 marks Prop. 6.1's interval of θ.

    Parameters
    ----------
    table : xarray.Dataset
        The table of :func:`run`.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig = plot(run(reps=100, q0=[0.8, 0.9], q1=[0.8, 0.9], theta=[0.3, 0.5]).table)
    >>> len(fig.axes)
    2
    >>> plt.close(fig)
    """
    import json

    import matplotlib.pyplot as plt

    settings = json.loads(table.attrs["settings"])
    m, n = settings["m"], settings["n"]
    q0s = table["q0"].values
    q1s, thetas = table["q1"].values, table["theta"].values
    fig, axes = plt.subplots(
        1, len(q0s), figsize=(max(3.2 * len(q0s), 7.5), 3.9), sharey=True, squeeze=False
    )
    fine_theta = np.linspace(0.005, 0.995, 199)
    fine_q1 = np.linspace(min(q1s.min(), 0.75) - 0.02, min(q1s.max() + 0.02, 0.999), 120)
    tt, qq = np.meshgrid(fine_theta, fine_q1)
    for ax, q0 in zip(axes[0], q0s, strict=True):
        ratio = variance_vs_human_only(tt, q0, qq, m, n=n).ratio
        ax.contourf(tt, qq, ratio, levels=[0, 1], colors=["C0"], alpha=0.25)
        ax.contour(tt, qq, ratio, levels=[1], colors=["C0"], linewidths=1)
        t = table.sel(q0=q0)
        r, se = t["ratio"].values, t["ratio_mcse"].values
        x, y = np.meshgrid(thetas, q1s)
        wins, loses = r + 2 * se < 1, r - 2 * se > 1
        unclear = ~(wins | loses)
        ax.scatter(x[wins], y[wins], s=14, color="C0", label="MC: judge better")
        ax.scatter(
            x[loses],
            y[loses],
            s=14,
            facecolors="none",
            edgecolors="C3",
            label="MC: human-only better",
        )
        ax.scatter(x[unclear], y[unclear], s=14, color="0.6", label="MC: within 2 MC-SE")
        regime = human_only_regime(q0)
        if regime.exists:
            ax.plot([regime.lower, regime.upper], [q0, q0], color="k", lw=2, label="Prop. 6.1")
        ax.set_title(f"specificity q0 = {q0:g}")
        ax.set_xlabel("true accuracy θ")
        ax.set_xlim(0, 1)
    axes[0, 0].set_ylabel("sensitivity q1")
    handles, labels = [], []
    for ax in axes[0]:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    handles.insert(0, plt.Rectangle((0, 0), 1, 1, color="C0", alpha=0.25))
    labels.insert(0, "analytic: judge better")
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize="small")
    test = "n = ∞" if n is None else f"n = {n}"
    fig.suptitle(
        f"Corrected judge vs human-only labelling, same budget: shaded = analytic region "
        f"(m → ∞ shape), markers = Monte Carlo at m = {m}, {test}, {settings['reps']} reps",
        fontsize="medium",
    )
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig
