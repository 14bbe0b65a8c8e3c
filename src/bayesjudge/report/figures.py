"""The report's figures, drawn from its tables as PNG bytes.

Each figure is drawn by :mod:`bayesjudge.plots` on a fresh :class:`matplotlib.figure.Figure`
(never through pyplot's global state) and kept as PNG bytes. Up to :data:`FIGURE_ROWS_MAX`
rows a figure names every system (or pair); beyond, it shows the estimates against their rank
and leaves the names to the tables. matplotlib is imported on the first figure drawn, not with
``bayesjudge``.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd

from bayesjudge._text import FIXED_POINT_MAX, plain_label
from bayesjudge.plots import (
    plot_differences,
    plot_judge,
    plot_ppc,
    plot_ranked,
    plot_theta_forest,
)

__all__ = ["CONFUSION_PANELS_MAX", "FIGURE_ROWS_MAX", "draw_categorical_figures", "draw_figures"]

#: A figure draws one labelled row per system (or pair) up to this many rows; beyond, it
#: summarises: estimates with intervals against their rank, names in the tables.
FIGURE_ROWS_MAX = 40

#: The K-category report draws a confusion-matrix heat map (and a panel of category shares)
#: for at most this many groups; the tables hold every group.
CONFUSION_PANELS_MAX = 12

#: Colour of a confusion cell without an estimate (a truth row nobody labelled), its legend
#: entry, and the colour bar's label where the cells carry no numbers (K > 7).
_NO_ITEMS_COLOUR = "lightgrey"
_NO_ITEMS_LABEL = "no labelled items"
_COLOURBAR_LABEL = "P(verdict | truth)"


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


# ----------------------------------------------------------------------------- K categories


def draw_categorical_figures(tables: dict, categories, score_range=None) -> dict[str, bytes]:
    """Return the K-category report's figures from its tables.

    ``"confusion"``: a heat map of the closed-form Ĉ (rows = truth, columns = verdict) per
    group; ``"categories"``: naive p̂, corrected θ̂ and (with a fit) Bayesian θ per category,
    one panel per group; ``"scores"`` (with scores): the score per system, one panel per
    stratum, its axis over ``score_range``. At most :data:`CONFUSION_PANELS_MAX` groups are
    drawn in the first two.
    """
    out = {"confusion": _confusion_figure(tables["confusion"], categories)}
    out["categories"] = _categories_figure(tables["categories"])
    if "scores" in tables and len(tables["scores"]) <= FIGURE_ROWS_MAX * 4:
        out["scores"] = _scores_figure(tables["scores"], score_range)
    return out


def _grid_png(draw, panels: int, cell_w: float, cell_h: float, columns: int = 4) -> bytes:
    """Draw ``panels`` axes on a grid (at most ``columns`` wide) and return PNG bytes."""
    from matplotlib.figure import Figure  # matplotlib loads on the first figure, not on import

    ncols = min(panels, columns)
    nrows = -(-panels // ncols)
    fig = Figure(figsize=(cell_w * ncols, cell_h * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for axis in axes[panels:]:
        axis.set_visible(False)
    draw(axes[:panels])
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    return buffer.getvalue()


def _group_titles(frame: pd.DataFrame) -> list[str]:
    """One title per (system, stratum) row group of ``frame``, in order (names as text)."""
    keys = list(dict.fromkeys(zip(frame["system"], frame["stratum"], strict=True)))
    several = len({s for _, s in keys}) > 1
    return [plain_label(f"{a} / {b}" if several else str(a)) for a, b in keys]


def _confusion_figure(confusion: pd.DataFrame, categories) -> bytes:
    """Heat maps of the closed-form Ĉ, one panel per group.

    Up to K = 7 each cell is annotated with its value; beyond, the cells are too small for
    text and a colour bar gives the scale. A truth row without calibration items (NaN) is
    drawn light grey, named in a legend: white would read as 0.
    """
    from matplotlib.patches import Patch  # matplotlib loads on the first figure, not on import

    closed = confusion[confusion["method"] == "closed form"]
    k = len(categories)
    keys = [f"c{j}" for j in range(k)]
    matrices = closed[keys].to_numpy(float).reshape(-1, k, k)
    titles = _group_titles(closed)
    shown = min(len(matrices), CONFUSION_PANELS_MAX)
    # Long names are cut in the figure (the tables have them whole) and tilted to stay apart.
    labels = [plain_label(_cut(str(c))) for c in categories]
    tilt = max(len(label) for label in labels) > 3
    annotate = k <= 7
    missing = bool(np.isnan(matrices[:shown]).any())

    def draw(axes):
        import matplotlib as mpl

        cmap = mpl.colormaps["Blues"].with_extremes(bad=_NO_ITEMS_COLOUR)
        for axis, matrix, title in zip(axes, matrices[:shown], titles[:shown], strict=True):
            image = axis.imshow(matrix, vmin=0.0, vmax=1.0, cmap=cmap)
            axis.set_xticks(
                range(k), labels, rotation=45 if tilt else 0, ha="right" if tilt else "center"
            )
            axis.set_yticks(range(k), labels)
            axis.set_xlabel("judge verdict")
            axis.set_ylabel("truth (human)")
            axis.set_title(title, fontsize=9)
            if annotate:
                for (t, v), value in np.ndenumerate(matrix):
                    text = "—" if np.isnan(value) else f"{value:.2f}"
                    colour = "white" if value > 0.6 else "black"
                    axis.text(v, t, text, ha="center", va="center", color=colour, fontsize=8)
        figure = axes[0].figure
        if not annotate:
            figure.colorbar(image, ax=list(axes), label=_COLOURBAR_LABEL, shrink=0.8)
        if missing:
            figure.legend(
                handles=[Patch(facecolor=_NO_ITEMS_COLOUR, edgecolor="0.5", label=_NO_ITEMS_LABEL)],
                loc="outside lower center", fontsize=8, frameon=False,
            )  # fmt: skip

    size = 1.2 + 0.55 * k
    return _grid_png(
        draw, shown, size + 0.6 + (0 if annotate else 0.4), size + 0.4 + (0.3 if missing else 0)
    )


def _cut(name: str, most: int = 24) -> str:
    """Return ``name``, cut to ``most`` characters with an ellipsis."""
    return name if len(name) <= most else name[: most - 1] + "…"


def _categories_figure(frame: pd.DataFrame) -> bytes:
    """Naive p̂, corrected θ̂ and Bayesian θ per category, one panel per group."""
    titles = _group_titles(frame)
    k = int(
        (
            frame["system"].eq(frame["system"].iloc[0])
            & frame["stratum"].eq(frame["stratum"].iloc[0])
        ).sum()
    )
    shown = min(len(titles), CONFUSION_PANELS_MAX)
    long = []
    for col, label in (("naive", "naive p̂ (not θ)"), ("corrected", "corrected θ̂"),
                       ("bayes", "Bayesian")):  # fmt: skip
        if col in frame:
            part = pd.DataFrame({
                "system": [plain_label(c) for c in frame["category"]],
                "stratum": np.repeat(np.arange(len(titles)), k),
                "method": label, "estimate": frame[col].to_numpy(float),
                "lower": frame[f"{col}_lower"].to_numpy(float),
                "upper": frame[f"{col}_upper"].to_numpy(float),
            })  # fmt: skip
            long.append(part)
    long = pd.concat(long, ignore_index=True)

    def draw(axes):
        for i, (axis, title) in enumerate(zip(axes, titles[:shown], strict=True)):
            plot_theta_forest(long[long["stratum"] == i], ax=[axis], xlabel="share of the category")
            axis.set_title(title, fontsize=9)
            legend = axis.get_legend()
            if i and legend is not None:  # one legend is enough
                legend.remove()

    return _grid_png(draw, shown, 4.2, 0.5 * k + 1.6, columns=3)


def _scores_figure(scores: pd.DataFrame, score_range) -> bytes:
    """Draw the score per system: naive, corrected and Bayesian, one panel per stratum.

    Scores from :data:`~bayesjudge._text.FIXED_POINT_MAX` in magnitude on are drawn in units
    of a power of ten named in the axis label: matplotlib cannot lay out an axis whose width
    overflows (scores near ±1e308), and the tables write such scores in scientific notation.
    """
    low, high = score_range if score_range is not None else (0.0, 1.0)
    scale = _axis_scale(low, high)
    long = []
    for col, label in (("corrected", "corrected"), ("bayes", "Bayesian")):
        if col in scores:
            part = scores[["system", "stratum"]].copy()
            part["system"] = part["system"].astype(str)
            part["method"] = label
            part["estimate"] = scores[col].to_numpy(float) / scale
            part["lower"] = scores[f"{col}_lower"].to_numpy(float) / scale
            part["upper"] = scores[f"{col}_upper"].to_numpy(float) / scale
            long.append(part)
    naive = scores[["system", "stratum"]].copy()
    naive["system"] = naive["system"].astype(str)
    naive["method"] = "naive (not corrected)"
    naive["estimate"] = naive["lower"] = naive["upper"] = scores["naive"].to_numpy(float) / scale
    long = pd.concat([naive, *long], ignore_index=True)
    panels = long["stratum"].nunique()
    n_systems = long["system"].nunique()
    low, high = low / scale, high / scale
    pad = 0.02 * (high - low or 1.0)
    xlabel = "mean score" if scale == 1.0 else f"mean score (× {scale:.0e})"

    def draw(axes):
        plot_theta_forest(long, ax=axes, xlabel=xlabel)
        for axis in axes:
            axis.set_xlim(low - pad, high + pad)

    return _png(draw, panels, min(4.2 * panels, 16), 0.55 * n_systems + 1.8)


def _axis_scale(low: float, high: float) -> float:
    """Return 1, or the power of ten that brings scores of ``FIXED_POINT_MAX`` on to [1, 10).

    >>> _axis_scale(0.0, 1.0), _axis_scale(-1e308, 1e308), _axis_scale(0.0, 2.5e7)
    (1.0, 1e+308, 10000000.0)
    """
    biggest = max(abs(low), abs(high))
    if not biggest < FIXED_POINT_MAX:
        return 10.0 ** math.floor(math.log10(biggest))
    return 1.0
