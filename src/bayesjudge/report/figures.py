"""The report's figures, drawn from its tables as PNG bytes.

Each figure is drawn by :mod:`bayesjudge.plots` on a fresh :class:`matplotlib.figure.Figure`
(never through pyplot's global state) and kept as PNG bytes. Up to :data:`FIGURE_ROWS_MAX`
rows a figure names every system (or pair); beyond, it shows the estimates against their rank
and leaves the names to the tables. matplotlib is imported on the first figure drawn, not with
``bayesjudge``.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from bayesjudge.plots import (
    plot_differences,
    plot_judge,
    plot_ppc,
    plot_ranked,
    plot_theta_forest,
)

__all__ = ["FIGURE_ROWS_MAX", "draw_figures"]

#: A figure draws one labelled row per system (or pair) up to this many rows; beyond, it
#: summarises: estimates with intervals against their rank, names in the tables.
FIGURE_ROWS_MAX = 40


def draw_figures(tables: dict, check, ci_prob: float) -> dict[str, bytes]:
    """Return the report's figures: θ forest, judge, Δθ (two or more systems), PPC (a check)."""
    out = {"theta_forest": _theta_figure(tables["theta"])}
    out["judge"] = _judge_figure(tables["judge"])
    if "theta_difference" in tables:
        difference = _difference_figure(tables["theta_difference"])
        if difference is not None:
            out["theta_difference"] = difference
    if check is not None:
        out["ppc"] = _ppc_figure(check, ci_prob)
    return out


def _png(draw, panels: int, width: float, height: float, stacked: bool = False) -> bytes:
    """Draw on a fresh matplotlib Figure (no pyplot state) and return it as PNG bytes.

    The panels stand side by side, or one above the other when ``stacked``.
    """
    from matplotlib.figure import Figure  # matplotlib loads on the first figure, not on import

    fig = Figure(figsize=(width, height), layout="constrained")
    shape = (panels, 1) if stacked else (1, panels)
    axes = fig.subplots(*shape, squeeze=False).ravel()
    draw(axes)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    return buffer.getvalue()


def _theta_figure(theta: pd.DataFrame) -> bytes:
    """Forest plot of θ per system and stratum; by rank for many systems."""
    long = []
    labels = {"corrected": "Lang–Reiczigel", **theta.attrs.get("labels", {})}
    for col, label in (
        ("naive", "naive p̂ (not θ)"),
        ("corrected", labels["corrected"]),
        ("human", labels.get("human", "human labels only")),
        ("bayes", "Bayesian"),
    ):
        if col in theta:
            part = theta[["system", "stratum"]].copy()
            part["method"] = label
            part["estimate"] = theta[col]
            part["lower"], part["upper"] = theta[f"{col}_lower"], theta[f"{col}_upper"]
            long.append(part)
    long = pd.concat(long, ignore_index=True)
    long["system"] = long["system"].astype(str)
    n_strata = long["stratum"].nunique()
    n_systems = long["system"].nunique()
    if n_systems > FIGURE_ROWS_MAX:  # one column per system, by rank: a forest plot would
        return _png(  # be metres tall
            lambda ax: _ranked_panels(long, "system", ax, "true accuracy θ"),
            n_strata,
            12,
            3.6 * n_strata + 0.6,
            stacked=True,
        )
    return _png(
        lambda ax: plot_theta_forest(long, ax=ax),
        n_strata,
        min(4.2 * n_strata, 16),
        0.55 * n_systems + 1.8,
    )


def _judge_figure(judge: pd.DataFrame) -> bytes:
    """q0, q1 and J per group; each sorted by its estimate for many groups."""
    judge = judge.copy()
    judge["system"] = judge["system"].astype(str)
    groups = len(judge[["system", "stratum"]].drop_duplicates())
    if groups > FIGURE_ROWS_MAX:
        return _png(lambda ax: _judge_ranked(judge, ax), 3, 12, 10, stacked=True)
    return _png(
        lambda ax: plot_judge(judge, ax=ax), 3, 12, min(0.5 * groups + 1.8, 0.3 * groups + 3)
    )


def _difference_figure(diff: pd.DataFrame) -> bytes | None:
    """Pairwise Δθ, frequentist and Bayesian; None when no method has a Δθ."""
    long = []
    for col, label in (("frequentist", "frequentist"), ("bayes_difference", "Bayesian")):
        if col in diff and diff[col].notna().any():
            keep = ["pair", "stratum"] + (["comparison"] if "comparison" in diff else [])
            part = diff[keep].copy()
            part["method"] = label
            part["estimate"] = diff[col]
            part["lower"], part["upper"] = diff[f"{col}_lower"], diff[f"{col}_upper"]
            part["prob_greater"] = diff["prob_greater"] if col != "frequentist" else np.nan
            long.append(part)
    if not long:
        return None
    long = pd.concat(long, ignore_index=True)
    long = long[long["estimate"].notna()]
    panels = long["stratum"].nunique()
    pairs = long["pair"].nunique()
    if "comparison" in long:  # many systems: with the best, and neighbours in rank
        kinds = list(dict.fromkeys(long["comparison"]))
        return _png(
            lambda ax: _difference_ranked(long, kinds, ax),
            panels * len(kinds),
            12,
            3.4 * panels * len(kinds) + 0.6,
            stacked=True,
        )
    # Side by side only while it stays readable; else one panel per stratum.
    stacked = panels > 2 or (panels > 1 and pairs > 6)
    row_height = 0.55 if pairs <= 6 else 0.35
    return _png(
        lambda ax: plot_differences(long, ax=ax),
        panels,
        10 if stacked else 5.6 * panels + 1.2,
        (row_height * pairs + 1.3) * (panels if stacked else 1) + 0.5,
        stacked=stacked,
    )


def _ppc_figure(check, ci_prob: float) -> bytes:
    """Observed shares against their replicated intervals."""
    groups = int(check.observed["k"].size)
    wide = groups > 8
    crowded = groups > FIGURE_ROWS_MAX
    panels = 4 if "truth" in check.observed else 3  # the random design checks truth counts
    return _png(
        # Hundreds of tick labels overlap (and take minutes to lay out): the table names them.
        lambda ax: plot_ppc(check, ci_prob=ci_prob, ax=ax, tick_labels=not crowded),
        panels,
        min(max(4 * panels, 0.35 * groups), 16) if wide else 4 * panels,
        panels * 4.2 if wide else 3.8,
        stacked=wide,
    )


def _ranked_panels(long, label_col, ax, ylabel):
    """θ by rank, one panel per stratum (many systems)."""
    strata = list(dict.fromkeys(long["stratum"]))
    for axis, stratum in zip(ax, strata, strict=True):
        rows = long[long["stratum"] == stratum]
        ranked = rows[rows["method"] == "Lang–Reiczigel"]
        order = _order(ranked if len(ranked) else rows, label_col)
        title = f"stratum {stratum}: " if len(strata) > 1 else ""
        plot_ranked(rows, ax=axis, label_col=label_col, order=order, ylabel=ylabel,
                    title=f"{title}{len(order)} systems by corrected θ̂")  # fmt: skip
        axis.set_ylim(-0.02, 1.02)


def _order(rows, label_col):
    values = rows.groupby(label_col, sort=False)["estimate"].first()
    key = values.to_numpy(float)
    key = np.where(np.isnan(key), np.inf, -key)
    return [values.index[i] for i in np.argsort(key, kind="stable")]


def _judge_ranked(judge, ax):
    """q0, q1 and J of many groups, each sorted by its closed-form estimate."""
    several = judge["stratum"].nunique() > 1
    judge = judge.copy()
    judge["group"] = [
        f"{a} / {b}" if several else str(a)
        for a, b in zip(judge["system"], judge["stratum"], strict=True)
    ]
    titles = ("specificity q0", "sensitivity q1", "Youden J = q0 + q1 − 1")
    for axis, var, title in zip(ax, ("q0", "q1", "J"), titles, strict=True):
        rows = judge[["group", "method"]].copy()
        rows["estimate"] = judge[var]
        rows["lower"], rows["upper"] = judge[f"{var}_lower"], judge[f"{var}_upper"]
        order = _order(rows[rows["method"] == rows["method"].iloc[0]], "group")
        plot_ranked(rows, ax=axis, label_col="group", order=order, ylabel=var,
                    title=f"{title}: {len(order)} groups by estimate")  # fmt: skip
        if var == "J":
            axis.axhline(0, color="C3", lw=0.8, ls="--")
            axis.axhline(0.2, color="0.5", lw=0.8, ls=":")


def _difference_ranked(long, kinds, ax):
    """Δθ with the best system and between neighbours in rank, in rank order (many systems)."""
    strata = list(dict.fromkeys(long["stratum"]))
    axes = iter(ax)
    for stratum in strata:
        for kind in kinds:
            axis = next(axes)
            rows = long[(long["stratum"] == stratum) & (long["comparison"] == kind)]
            order = list(dict.fromkeys(rows["pair"]))
            where = f"stratum {stratum}: " if len(strata) > 1 else ""
            plot_ranked(rows, ax=axis, label_col="pair", order=order, ylabel="Δθ = θ_a − θ_b",
                        title=f"{where}Δθ {kind} ({len(order)} pairs, by rank)")  # fmt: skip
            axis.axhline(0, color="0.3", lw=0.8, ls="--")
