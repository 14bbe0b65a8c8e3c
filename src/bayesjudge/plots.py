"""Matplotlib plots of fits and checks (the top layer; imports matplotlib lazily)."""

from __future__ import annotations

import numpy as np

__all__ = ["plot_ppc"]

_SHARE = {
    "k": ("n", "share judged correct, k / n"),
    "tn": ("m0", "specificity, tn / m0"),
    "tp": ("m1", "sensitivity, tp / m1"),
}


def _group_labels(da) -> list[str]:
    dims = [d for d in da.dims if d not in ("chain", "draw")]
    if not dims:
        return ["all"]
    stacked = da.stack(group=dims) if len(dims) > 1 else da.rename({dims[0]: "group"})
    values = stacked["group"].values
    return [" / ".join(map(str, v)) if isinstance(v, tuple) else str(v) for v in values]


def _flat(da):
    dims = [d for d in da.dims if d not in ("chain", "draw")]
    if not dims:
        return da.expand_dims(group=[0])
    return da.stack(group=dims) if len(dims) > 1 else da.rename({dims[0]: "group"})


def plot_ppc(check, ci_prob: float = 0.95, ax=None):
    """Plot observed shares (k/n, tn/m0, tp/m1) against their posterior predictive intervals.

    Parameters
    ----------
    check : PosteriorPredictiveCheck
        The output of :meth:`bayesjudge.Fit.ppc`.
    ci_prob : float, default 0.95
        Probability of the replicated interval drawn per group.
    ax : sequence of 3 matplotlib Axes, optional
        Axes for ``k``, ``tn`` and ``tp``; a new figure is made when None.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes

    Notes
    -----
    Each panel shows, per group, the central ``ci_prob`` interval and median of the
    replicated share (grey) and the observed share (dot, red when its mid-p p-value lies
    outside [(1 − ci_prob)/2, (1 + ci_prob)/2]).

    Examples
    --------
    >>> import bayesjudge as bj
    >>> counts = bj.JudgeCounts.from_counts(n=1000, k=400, m0=100, tn=70, m1=100, tp=90)
    >>> check = bj.fit(counts, random_seed=1).ppc(random_seed=2)
    >>> axes = check.plot()
    >>> [a.get_title() for a in axes]
    ['share judged correct, k / n', 'specificity, tn / m0', 'sensitivity, tp / m1']
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(1, 3, figsize=(12, 3.6), constrained_layout=True)
    ax = np.asarray(ax).ravel()
    constant = check.tree["constant_data"].dataset
    lo, hi = (1 - ci_prob) / 2, (1 + ci_prob) / 2
    for axis, var in zip(ax, ("k", "tn", "tp"), strict=True):
        total_name, title = _SHARE[var]
        total = _flat(constant[total_name]).values.astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            rep = _flat(check.replicated[var]).values.reshape(-1, total.size) / total
            obs = _flat(check.observed[var]).values.astype(float) / total
        p = _flat(check.p_value[var]).values
        x = np.arange(total.size)
        has = total > 0
        q = np.nanquantile(rep[:, has], [lo, 0.5, hi], axis=0) if has.any() else None
        if q is not None:
            axis.vlines(x[has], q[0], q[2], color="0.6", lw=6, label=f"replicated {ci_prob:.0%}")
            axis.plot(x[has], q[1], "_", color="0.3", ms=14)
        bad = has & ((p < lo) | (p > hi))
        axis.plot(x[has & ~bad], obs[has & ~bad], "o", color="C0", label="observed")
        if bad.any():
            axis.plot(x[bad], obs[bad], "o", color="C3", label="observed (outside)")
        axis.set_xticks(x, _group_labels(check.observed[var]), rotation=45, ha="right")
        axis.set_title(title)
        axis.set_ylim(-0.02, 1.02)
    ax[0].legend(loc="best", fontsize="small")
    return ax
