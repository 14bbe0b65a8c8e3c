"""Interval length vs calibration budget: symmetric, Algorithm 1, exact and oracle splits.

Reproduces Lee et al., Fig. 3 (Sec. 4, Prop. 5.2, Algorithm 1 in Appendix A) by Monte Carlo.
The paper's figure plots the Lang–Reiczigel interval length (eq. 6) against the calibration
budget ``m = m0 + m1`` for a judge with q̂0 = 0.7, q̂1 = 0.9, an unlimited test set
(``n → ∞``) and four test-set shares p̂ ∈ {0.3, 0.5, 0.7, 0.9}, comparing the symmetric split
``m0 = m1`` (dashed) with Algorithm 1 (solid). The figure is a plug-in calculation; this study
simulates what a user would actually get.

Design (defaults; every one is an option of :func:`run`)
--------------------------------------------------------
* Judge: q0 = 0.7, q1 = 0.9 (the paper's Fig. 3 and Sec. 7).
* Test set: ``n = None`` (unlimited, so p̂ = p exactly, as in Fig. 3), with
  p ∈ {0.3, 0.5, 0.7, 0.9}; the true accuracy is θ = (p + q0 − 1)/(q0 + q1 − 1), i.e.
  θ ∈ {0, 1/3, 2/3, 1}. A finite ``n`` draws k ~ Binomial(n, p) per replicate.
* Budget grid: m ∈ {40, 100, 200, 500, 1000, 2000} (the paper does not print its grid).
* Pilot (Algorithm 1): ``m_pilot = 10`` items per label type, as in the paper.
* 95 % intervals (``alpha = 0.05``), 10,000 replications per (p, m).

One replicate at (p, m): draw the pilot, c0 ~ Binomial(m_pilot, q0) and
c1 ~ Binomial(m_pilot, q1); split the budget by each strategy; top each label group up to its
size with fresh items; compute the Lang–Reiczigel interval from all of them (pilot included,
since the pilot is part of the budget). The four strategies (``allocation`` dim):

* ``symmetric``: m1 = ⌊m/2⌋, m0 = m − m1 (the paper's dashed curves).
* ``algorithm1``: Lee et al.'s Algorithm 1 from the pilot and p̂
  (:func:`~bayesjudge.core.allocation.allocate_calibration`, the paper's solid curves).
* ``exact``: the split that minimises eq. (6) at the pilot's plug-in values
  (``allocate_calibration(method="exact")``), no q → 1 approximation.
* ``oracle``: the split that minimises eq. (6) at the true p, q0, q1 (what a user who knew the
  judge would pick), found by searching every integer m1 in [m_pilot, m − m_pilot].

All strategies share each replicate's pilot and test set, and their calibration items come from
one stream per label type (a group of size s holds the first s items of it), so differences
between strategies are paired and their Monte Carlo errors small.

Table (dims ``p``, ``m``, ``allocation``; coordinate ``theta`` along ``p``)
---------------------------------------------------------------------------
``length``: mean realised interval length after truncation to [0, 1] (what a report shows;
the untruncated length 2·z·SE has no mean here, it is infinite when the smoothed calibration
counts sit exactly at chance, which small budgets reach with positive probability);
``length_diff``: paired mean of ``length`` minus the symmetric arm's; ``coverage``: share of
intervals that contain θ; ``m1``: mean size of the truly-correct group; each with ``*_mcse``.
``length_plugin``: the paper's Fig. 3 curve itself, eq. (6) at the true values with the split
a noise-free pilot (observed proportions equal to q0, q1) would give, no simulation.
``low_pilot_share`` (dims ``p``, ``m``): share of pilots with q̃0 + q̃1 ≤ 1, where Algorithm 1
has no sound basis (those replicates are kept; the exact method then falls back to Algorithm 1).

What it shows (default run, 10,000 reps; MC-SE of paired differences ≤ 0.001)
-----------------------------------------------------------------------------
* The paper's claim holds where the symmetric split is far from optimal: Algorithm 1 shortens
  the realised interval at p = 0.3, 0.5 and 0.9 at every budget (by 0.003–0.023), and is within
  a few thousandths of the oracle at p = 0.3 and 0.9.
* At p = 0.7 (θ = 2/3) the symmetric split is already close to optimal; Algorithm 1's gain
  (0.009 at m = 40) vanishes by m = 500 and at m ≥ 1000 it is 0.0003 *longer* than symmetric:
  the 10-item pilot makes its split noisy, which costs more than the small planned gain.
* The ``exact`` plug-in split is fragile with a 10-item pilot: at p = 0.5 and 0.7 it is
  0.01–0.035 longer than symmetric for m ≥ 200 (as the notes of
  :func:`~bayesjudge.core.allocation.allocate_calibration` warn). At p = 0.5, m = 1000, 15 %
  of pilots give a plug-in θ̃ clipped to 0 or 1, which leaves only the pilot's 10 items for
  one label type; those intervals average 0.33 against 0.09 for the other pilots.
* The ``oracle`` minimises the *planned* length of eq. (6), not the expected realised one;
  for m ≥ 200 it beats the symmetric split at every p, but at m = 40 (p = 0.5, 0.7) a split
  that leaves ~14 items in one group is longer on average than the symmetric one.
* Coverage stays between 0.947 and 1 for every split and budget (nominal 0.95, MC-SE about
  0.002): choosing the split from the pilot does not distort it.
* The text's example ("an interval shorter than 0.1 requires m ≈ 200" at p̂ = 0.3,
  symmetric) does not follow from eq. (6): the untruncated length there is 0.306 at m = 200
  and first drops below 0.1 at m = 1,802; the truncated length (θ = 0 sits at the boundary,
  so half the interval is cut off) at m = 362.

Run it with ``bayesjudge study allocation-length`` or :func:`run`.
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr

from bayesjudge.core.allocation import allocate_calibration
from bayesjudge.core.correction import lang_reiczigel_interval, lang_reiczigel_length
from bayesjudge.core.kernels import rogan_gladen_ratio
from bayesjudge.studies._framework import (
    StudyResult,
    check_grid,
    check_number,
    check_reps,
    check_seed,
    mcse_mean,
    mcse_proportion,
    point_rngs,
    progress_bar,
    study_attrs,
)
from bayesjudge.warnings import LowJudgeQualityWarning

__all__ = ["ALLOCATIONS", "plot", "run"]

NAME = "allocation-length"
#: The calibration splits compared, in the order of the ``allocation`` dim.
ALLOCATIONS = ("symmetric", "algorithm1", "exact", "oracle")

_DEFAULT_P = (0.3, 0.5, 0.7, 0.9)
_DEFAULT_M = (40, 100, 200, 500, 1000, 2000)


def _check_settings(p, m, q0, q1, n, m_pilot, alpha):
    p = check_grid("p", p, low=0, high=1)
    m = check_grid("m", m, low=2, integer=True)
    q0 = check_number("q0", q0, low=0, high=1)
    q1 = check_number("q1", q1, low=0, high=1)
    alpha = check_number("alpha", alpha, low=0, high=1, low_open=True, high_open=True)
    if not q0 + q1 > 1:
        raise ValueError(
            f"q0 and q1 must be proportions with q0 + q1 > 1 (a judge better than chance); "
            f"got q0={q0}, q1={q1}."
        )
    lo, hi = 1 - q0, q1
    bad = [v for v in p if not lo - 1e-12 <= v <= hi + 1e-12]  # 1 - 0.7 != 0.3 in floats
    if bad:
        raise ValueError(
            f"p (the share judged correct) must lie in [1 - q0, q1] = [{lo:g}, {hi:g}] so that "
            f"the true accuracy θ = (p + q0 - 1)/(q0 + q1 - 1) is in [0, 1]; got {bad}."
        )
    m_pilot = check_number("m_pilot", m_pilot, low=1, integer=True)
    small = [v for v in m if v < 2 * m_pilot]
    if small:
        raise ValueError(
            f"every budget m must hold the pilot (2 * m_pilot = {2 * m_pilot} items); got {small}."
        )
    n = check_number("n", n, low=1, integer=True, allow_none=True)
    return p, m, q0, q1, n, m_pilot, alpha


def oracle_m1(p: float, q0: float, q1: float, m: int, m_pilot: int, n=None, alpha=0.05) -> int:
    """Return the m1 that minimises the eq. (6) length at the true values (the oracle split).

    Parameters
    ----------
    p, q0, q1 : float
        True share judged correct, specificity and sensitivity.
    m : int
        Calibration budget ``m0 + m1``.
    m_pilot : int
        Both groups keep at least ``m_pilot`` items, as for the pilot-based splits.
    n : int, optional
        Test-set size; None means unlimited.
    alpha : float, default 0.05
        Interval level ``1 - alpha``.

    Returns
    -------
    int
        The smallest minimiser over every integer ``m1`` in ``[m_pilot, m - m_pilot]`` of the
        untruncated length of eq. (6) with the observed proportions equal to the true ones.

    Examples
    --------
    >>> oracle_m1(0.5, 0.7, 0.9, m=200, m_pilot=10)
    56
    """
    m1 = np.arange(m_pilot, m - m_pilot + 1)
    length = lang_reiczigel_length(p, q0, q1, np.inf if n is None else n, m - m1, m1, alpha)
    return int(m1[np.argmin(length)])


def _nested_counts(rng, pilot, extra, q):
    """Judge-correct counts when a group of size m_pilot + extra[:, a] is drawn for each arm.

    Every arm of a replicate sees the same stream of items (the pilot first), so a bigger
    group holds the smaller one: increments between the sorted sizes are independent
    binomials, which makes arm-to-arm differences paired.
    """
    order = np.argsort(extra, axis=1, kind="stable")
    sizes = np.take_along_axis(extra, order, axis=1)
    steps = np.diff(sizes, axis=1, prepend=0)
    counts = np.cumsum(rng.binomial(steps, q), axis=1)
    out = np.empty_like(counts)
    np.put_along_axis(out, order, counts, axis=1)
    return pilot[:, None] + out


def _theta(p, q0, q1) -> float:
    # J = 0 policy: raise, in _check_settings (q0 + q1 > 1 is required of the design).
    return float(rogan_gladen_ratio(p, q0, q1, clip=True).theta)


def _simulate_point(rng, p, m, q0, q1, n, m_pilot, alpha, reps):
    """Simulate ``reps`` replicates at one design point; arrays of shape (reps, allocation)."""
    theta = _theta(p, q0, q1)
    p_hat = np.full(reps, p) if n is None else rng.binomial(n, p, reps) / n
    c0 = rng.binomial(m_pilot, q0, reps)
    c1 = rng.binomial(m_pilot, q1, reps)
    m1 = np.empty((reps, len(ALLOCATIONS)), dtype=np.int64)
    m1[:, 0] = m // 2
    with warnings.catch_warnings():
        # A pilot with q̃0 + q̃1 <= 1 is part of the design; its share is reported instead.
        warnings.simplefilter("ignore", LowJudgeQualityWarning)
        for a, method in ((1, "algorithm1"), (2, "exact")):
            m1[:, a] = allocate_calibration(
                m, p_hat, c0 / m_pilot, c1 / m_pilot, m_pilot, method=method, n=n, alpha=alpha
            ).m1
    m1[:, 3] = oracle_m1(p, q0, q1, m, m_pilot, n, alpha)
    m0 = m - m1
    tn = _nested_counts(rng, c0, m0 - m_pilot, q0)
    tp = _nested_counts(rng, c1, m1 - m_pilot, q1)
    n_eff = np.inf if n is None else n
    args = (p_hat[:, None], tn / m0, tp / m1, n_eff, m0, m1, alpha)
    lower, upper = lang_reiczigel_interval(*args)
    return {
        "length": upper - lower,
        "covered": (lower <= theta) & (theta <= upper),
        "m1": m1,
        "low_pilot": (c0 + c1 + 2) <= (m_pilot + 2),  # q̃0 + q̃1 - 1 <= 0
    }


def _plugin_lengths(p, m, q0, q1, n, m_pilot, alpha) -> np.ndarray:
    """Fig. 3 as printed: eq. (6) at the truth, split from a noise-free pilot (no simulation)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LowJudgeQualityWarning)
        m1 = [
            m // 2,
            allocate_calibration(m, p, q0, q1, m_pilot, "algorithm1").m1,
            allocate_calibration(m, p, q0, q1, m_pilot, "exact", n=n, alpha=alpha).m1,
            oracle_m1(p, q0, q1, m, m_pilot, n, alpha),
        ]
    m1 = np.asarray(m1)
    n_eff = np.inf if n is None else n
    return lang_reiczigel_length(p, q0, q1, n_eff, m - m1, m1, alpha)


def run(
    *,
    reps: int = 10_000,
    random_seed: int = 20_253,
    progress: bool = False,
    p=_DEFAULT_P,
    m=_DEFAULT_M,
    q0: float = 0.7,
    q1: float = 0.9,
    n: int | None = None,
    m_pilot: int = 10,
    alpha: float = 0.05,
) -> StudyResult:
    """Monte Carlo interval lengths for four calibration splits over a grid of budgets.

    Parameters
    ----------
    reps : int, default 10,000
        Replications per (p, m) design point.
    random_seed : int, default 20253
        Seed; each design point draws from its own stream keyed by its values (:func:`point_rngs`).
    progress : bool, default False
        Show a progress bar on stderr.
    p : sequence of float, default (0.3, 0.5, 0.7, 0.9)
        True shares judged correct, each in [1 − q0, q1] (Fig. 3's p̂ values).
    m : sequence of int, default (40, 100, 200, 500, 1000, 2000)
        Calibration budgets ``m0 + m1``, each at least ``2 * m_pilot``.
    q0, q1 : float, default 0.7, 0.9
        True specificity and sensitivity of the judge.
    n : int, optional
        Test-set size; None (default) means unlimited, p̂ = p, as in Fig. 3. Lee et al.'s
        Fig. 5c uses ``n=1000, m=[200]``.
    m_pilot : int, default 10
        Pilot items per label type for Algorithm 1 and the exact plug-in split.
    alpha : float, default 0.05
        Intervals at level ``1 - alpha``.

    Returns
    -------
    StudyResult
        Table with dims ``p``, ``m``, ``allocation`` (see the module docstring).

    Examples
    --------
    >>> result = run(reps=200, p=[0.5], m=[100])
    >>> t = result.table
    >>> t["allocation"].values.tolist()
    ['symmetric', 'algorithm1', 'exact', 'oracle']
    >>> bool(t["length"].sel(allocation="oracle") < t["length"].sel(allocation="symmetric"))
    True
    """
    reps = check_reps(reps)
    random_seed = check_seed(random_seed)
    p, m, q0, q1, n, m_pilot, alpha = _check_settings(p, m, q0, q1, n, m_pilot, alpha)
    shape = (len(p), len(m), len(ALLOCATIONS))
    names = ("length", "length_diff", "coverage", "m1")
    means = {k: np.empty(shape) for k in names}
    ses = {k: np.empty(shape) for k in names}
    plugin = np.empty(shape)
    low_pilot = np.empty(shape[:2])
    bar = progress_bar(len(p) * len(m), NAME, enabled=progress)
    for i, p_i in enumerate(p):
        for j, m_j in enumerate(m):
            sim = _simulate_point(
                point_rngs(random_seed, p_i, m_j)[0], p_i, m_j, q0, q1, n, m_pilot, alpha, reps
            )
            samples = {
                "length": sim["length"],
                "length_diff": sim["length"] - sim["length"][:, :1],
                "m1": sim["m1"],
            }
            for key, values in samples.items():
                means[key][i, j] = values.mean(axis=0)
                ses[key][i, j] = mcse_mean(values, axis=0)
            means["coverage"][i, j] = sim["covered"].mean(axis=0)
            ses["coverage"][i, j] = mcse_proportion(means["coverage"][i, j], reps)
            low_pilot[i, j] = sim["low_pilot"].mean()
            plugin[i, j] = _plugin_lengths(p_i, m_j, q0, q1, n, m_pilot, alpha)
            bar.update()
    dims = ("p", "m", "allocation")
    data = {}
    for key in names:
        data[key] = (dims, means[key])
        data[f"{key}_mcse"] = (dims, ses[key])
    data["length_plugin"] = (dims, plugin)
    data["low_pilot_share"] = (("p", "m"), low_pilot)
    data["low_pilot_share_mcse"] = (("p", "m"), mcse_proportion(low_pilot, reps))
    theta = [_theta(v, q0, q1) for v in p]
    table = xr.Dataset(
        data,
        coords={
            "p": list(p),
            "m": list(m),
            "allocation": list(ALLOCATIONS),
            "theta": ("p", theta),
        },
        attrs=study_attrs(
            NAME,
            reps=reps,
            random_seed=random_seed,
            p=list(p),
            m=list(m),
            q0=q0,
            q1=q1,
            n=n,
            m_pilot=m_pilot,
            alpha=alpha,
            reproduces="Lee et al., Fig. 3 (Algorithm 1, Prop. 5.2)",
        ),
    )
    return StudyResult(NAME, table, plot)


_STYLE = {
    "symmetric": {"linestyle": "--", "color": "0.4"},
    "algorithm1": {"linestyle": "-", "color": "C0"},
    "exact": {"linestyle": "-.", "color": "C2"},
    "oracle": {"linestyle": ":", "color": "C3"},
}


def plot(table: xr.Dataset):
    """Draw mean interval length and the paired gain over the symmetric split against m.

    One column per p; top row: mean truncated length per split (lines) with the paper's
    plug-in Fig. 3 curves (thin grey: symmetric dashed, Algorithm 1 solid); bottom row: the
    paired difference from the symmetric split with ±2 MC-SE bands.

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
    >>> fig = plot(run(reps=50, p=[0.5, 0.7], m=[40, 100]).table)
    >>> len(fig.axes)
    4
    >>> plt.close(fig)
    """
    import matplotlib.pyplot as plt

    ps = table["p"].values
    fig, axes = plt.subplots(
        2, len(ps), figsize=(3.2 * len(ps), 5.6), sharex=True, sharey="row", squeeze=False
    )
    m = table["m"].values
    for col, p in enumerate(ps):
        t = table.sel(p=p)
        top, bottom = axes[0, col], axes[1, col]
        for name in table["allocation"].values:
            s = t.sel(allocation=name)
            style = _STYLE.get(str(name), {})
            top.errorbar(m, s["length"], yerr=2 * s["length_mcse"], label=str(name), **style)
            if name != "symmetric":
                diff, se = s["length_diff"].values, s["length_diff_mcse"].values
                bottom.plot(m, diff, label=str(name), **style)
                bottom.fill_between(
                    m, diff - 2 * se, diff + 2 * se, alpha=0.2, color=style["color"]
                )
        for name, ls in (("symmetric", "--"), ("algorithm1", "-")):
            top.plot(m, t["length_plugin"].sel(allocation=name), ls, color="0.75", lw=1)
        bottom.axhline(0, color="0.4", lw=0.8)
        top.set_title(f"p = {p:g} (θ = {float(t['theta']):.2f})")
        top.set_xscale("log")
        bottom.set_xlabel("calibration budget m")
    axes[0, 0].set_ylabel("mean interval length")
    axes[1, 0].set_ylabel("length − symmetric")
    axes[0, 0].plot([], [], color="0.75", lw=1, label="Fig. 3 plug-in (untruncated)")
    axes[0, 0].legend(fontsize="small")
    settings = table.attrs
    fig.suptitle(
        f"Interval length vs calibration budget: q0 = {settings['q0']:g}, "
        f"q1 = {settings['q1']:g}, pilot {settings['m_pilot']} per label, "
        f"{settings['reps']} reps"
    )
    fig.tight_layout()
    return fig
