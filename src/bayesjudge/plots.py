"""Matplotlib plots of fits and checks (the top layer; imports matplotlib lazily).

Every label, title, tick and legend entry built from user data (system, stratum, pair and
method names) goes through :func:`bayesjudge._text.plain_label`: names are text, so a ``$`` in
a name never starts mathtext and a newline or escape code is shown escaped.
"""

from __future__ import annotations

import numpy as np

from bayesjudge._text import format_probability, plain_label

__all__ = ["plot_differences", "plot_judge", "plot_ppc", "plot_ranked", "plot_theta_forest"]

_SHARE = {
    "k": ("n", "share judged correct, k / n"),
    "tn": ("m0", "specificity, tn / m0"),
    "tp": ("m1", "sensitivity, tp / m1"),
    "truth": ("m0 + m1", "labelled truly correct, m1 / (m0 + m1)"),
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


def plot_ppc(check, ci_prob: float = 0.95, ax=None, tick_labels: bool = True):
    """Plot observed shares (k/n, tn/m0, tp/m1) against their posterior predictive intervals.

    Under the random labelling design a fourth panel checks the labelled items' truth counts,
    m1 / (m0 + m1), which are data about θ there.

    Parameters
    ----------
    check : PosteriorPredictiveCheck
        The output of :meth:`bayesjudge.Fit.ppc`.
    ci_prob : float, default 0.95
        Probability of the replicated interval drawn per group.
    ax : sequence of 3 (random design: 4) matplotlib Axes, optional
        Axes for ``k``, ``tn``, ``tp`` (and ``truth`` under the random labelling design); a
        new figure is made when None.
    tick_labels : bool, default True
        Name each group on the x axis; False for hundreds of groups (their labels would
        overlap, and laying them out takes minutes): the axis then says so.

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

    checked = ("k", "tn", "tp", "truth") if "truth" in check.observed else ("k", "tn", "tp")
    if ax is None:
        _, ax = plt.subplots(
            1, len(checked), figsize=(4 * len(checked), 3.6), constrained_layout=True
        )
    ax = np.asarray(ax).ravel()
    if ax.size != len(checked):
        raise ValueError(
            f"plot_ppc needs {len(checked)} axes (for {', '.join(checked)}); got {ax.size}."
        )
    constant = check.tree["constant_data"].dataset
    lo, hi = (1 - ci_prob) / 2, (1 + ci_prob) / 2
    for axis, var in zip(ax, checked, strict=True):
        total_name, title = _SHARE[var]
        if var == "truth":  # labelled items: m0 + m1, on the truth counts' own dims
            total = _flat(constant["m0"] + constant["m1"]).values.astype(float)
        else:
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
        if tick_labels:
            labels = [plain_label(v) for v in _group_labels(check.observed[var])]
            axis.set_xticks(x, labels, rotation=45, ha="right")
        else:
            axis.set_xticks([])
            axis.set_xlabel(f"{x.size} groups (names in the table)")
        axis.set_title(title)
        axis.set_ylim(-0.02, 1.02)
    ax[0].legend(loc="best", fontsize="small")
    return ax


# ----------------------------------------------------------------------------- forest plots

#: Colours and markers of the estimators in the forest plots; other methods (e.g. calibration
#: designs) cycle through colours C2, C3, ... and markers together, so that they differ in
#: shape as well as colour (readable in greyscale and for colour-blind readers).
_METHOD_STYLE = {
    "naive": ("0.55", "s"),
    "Lang–Reiczigel": ("C0", "o"),
    "closed form": ("C0", "o"),
    "frequentist": ("C0", "o"),
    "Bayesian": ("C1", "D"),
}


_OTHER_MARKERS = ("^", "v", "s", "P", "X", "<", ">")


def _style(method: str, index: int) -> tuple[str, str]:
    for key, style in _METHOD_STYLE.items():
        if str(method).startswith(key):
            return style
    return f"C{(index + 2) % 10}", _OTHER_MARKERS[index % len(_OTHER_MARKERS)]


def _require(frame, columns: list[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(
            f"{what} needs the columns {columns}; {missing} are missing (the frame has "
            f"{list(frame.columns)})."
        )


def _new_axes(count: int, ax, width: float, height: float):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(1, count, figsize=(width * count, height), squeeze=False)
    ax = np.asarray(ax).ravel()
    if ax.size != count:
        raise ValueError(f"ax must hold {count} Axes (one per panel); got {ax.size}.")
    return ax


def _hide_repeated_labels(ax) -> None:
    """Drop the y tick labels of panels that stand in the first panel's row (same labels)."""
    first = ax[0].get_subplotspec()
    if first is None:
        return
    for axis in ax[1:]:
        spec = axis.get_subplotspec()
        if spec is not None and spec.rowspan == first.rowspan:
            axis.tick_params(labelleft=False)


def _forest_panel(axis, frame, label_col: str, value: str, lower: str, upper: str, labels):
    """Draw one forest panel: one row per label, one offset marker per method, top to bottom."""
    methods = list(dict.fromkeys(frame["method"]))
    step = 0.7 / max(len(methods), 1)
    y = {label: len(labels) - 1 - i for i, label in enumerate(labels)}
    for m_index, method in enumerate(methods):
        rows = frame[frame["method"] == method]
        colour, marker = _style(method, m_index)
        offset = 0.35 - step / 2 - m_index * step if len(methods) > 1 else 0.0
        ys = np.array([y[v] for v in rows[label_col]], dtype=float) + offset
        est = rows[value].to_numpy(float)
        lo, hi = rows[lower].to_numpy(float), rows[upper].to_numpy(float)
        ok = np.isfinite(lo) & np.isfinite(hi)
        axis.hlines(ys[ok], lo[ok], hi[ok], color=colour, lw=2)
        axis.plot(est, ys, marker, color=colour, label=plain_label(method), ms=5)
    axis.set_yticks(list(y.values()), [plain_label(v) for v in y])
    axis.set_ylim(-0.6, len(labels) - 0.4)
    axis.grid(axis="x", color="0.9")
    axis.set_axisbelow(True)


def plot_theta_forest(frame, ax=None, xlabel: str = "true accuracy θ"):
    """Forest plot of θ per system (one panel per stratum), one row per estimator.

    Parameters
    ----------
    frame : pandas.DataFrame
        Tidy rows with columns ``system``, ``stratum``, ``method`` (e.g. ``"naive p̂"``,
        ``"Lang–Reiczigel"``, ``"Bayesian"``), ``estimate``, ``lower`` and ``upper``.
    ax : sequence of matplotlib Axes, optional
        One Axes per stratum; a new figure is made when None.
    xlabel : str, default "true accuracy θ"
        Label of the x axis.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"system": ["a", "a", "b", "b"], "stratum": "all",
    ...                       "method": ["naive p̂", "Lang–Reiczigel"] * 2,
    ...                       "estimate": [0.6, 0.55, 0.7, 0.72],
    ...                       "lower": [0.55, 0.45, 0.65, 0.6], "upper": [0.65, 0.65, 0.75, 0.84]})
    >>> axes = plot_theta_forest(frame)
    >>> [t.get_text() for t in axes[0].get_yticklabels()]
    ['a', 'b']
    """
    _require(
        frame, ["system", "stratum", "method", "estimate", "lower", "upper"], "plot_theta_forest"
    )
    strata = list(dict.fromkeys(frame["stratum"]))
    ax = _new_axes(len(strata), ax, 4.2, 0.55 * frame["system"].nunique() + 1.6)
    systems = list(dict.fromkeys(frame["system"]))
    for axis, stratum in zip(ax, strata, strict=True):
        rows = frame[frame["stratum"] == stratum]
        _forest_panel(axis, rows, "system", "estimate", "lower", "upper", systems)
        axis.set_xlim(-0.02, 1.02)
        axis.set_xlabel(xlabel)
        axis.set_title(plain_label(f"stratum {stratum}") if len(strata) > 1 else "all items")
    _hide_repeated_labels(ax)
    ax[-1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    return ax


def plot_differences(frame, ax=None, xlabel: str | None = None):
    """Forest plot of pairwise differences with P(a > b) written beside each pair.

    Parameters
    ----------
    frame : pandas.DataFrame
        Tidy rows with columns ``pair`` (``"a - b"``), ``stratum``, ``method``, ``estimate``,
        ``lower``, ``upper`` and optionally ``prob_greater`` (P(θ_a > θ_b), written as
        ``P = ...`` right of its pair's row where not NaN; when several methods of a pair
        carry one, each is written with its method's name).
    ax : sequence of matplotlib Axes, optional
        One Axes per stratum; a new figure is made when None.
    xlabel : str, optional
        Label of the x axis; default "difference θ_a − θ_b", with "; P = P(θ_a > θ_b)" when
        probabilities are shown.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"pair": ["a - b"], "stratum": ["all"], "method": ["Bayesian"],
    ...                       "estimate": [0.1], "lower": [0.02], "upper": [0.18],
    ...                       "prob_greater": [0.99]})
    >>> axes = plot_differences(frame)
    >>> [t.get_text() for t in axes[0].texts]
    ['P = 0.990']
    """
    _require(frame, ["pair", "stratum", "method", "estimate", "lower", "upper"], "plot_differences")
    strata = list(dict.fromkeys(frame["stratum"]))
    pairs = list(dict.fromkeys(frame["pair"]))
    ax = _new_axes(len(strata), ax, 5.0, 0.55 * len(pairs) + 1.6)
    if xlabel is None:
        shown = "prob_greater" in frame and frame["prob_greater"].notna().any()
        xlabel = "difference θ_a − θ_b" + ("; P = P(θ_a > θ_b)" if shown else "")
    for axis, stratum in zip(ax, strata, strict=True):
        rows = frame[frame["stratum"] == stratum]
        _forest_panel(axis, rows, "pair", "estimate", "lower", "upper", pairs)
        axis.axvline(0, color="0.3", lw=0.8, ls="--")
        axis.set_xlabel(xlabel)
        axis.set_title(plain_label(f"stratum {stratum}") if len(strata) > 1 else "all items")
        if "prob_greater" in rows:
            for i, pair in enumerate(pairs):
                carrying = rows[(rows["pair"] == pair) & rows["prob_greater"].notna()]
                if not len(carrying):
                    continue
                # Several methods (e.g. calibration designs) each have their own P: name them.
                named = carrying["method"].nunique() > 1
                text = "; ".join(
                    f"P {format_probability(float(p), relation=True)}"
                    + (f" ({method})" if named else "")
                    for method, p in zip(carrying["method"], carrying["prob_greater"], strict=True)
                )
                axis.text(
                    1.02,
                    len(pairs) - 1 - i,
                    plain_label(text),
                    transform=axis.get_yaxis_transform(),
                    va="center",
                    fontsize="small",
                )
    ax[0].legend(loc="best", fontsize="small")
    return ax


def plot_judge(frame, ax=None):
    """Judge diagnostics: q0, q1 and J = q0 + q1 − 1 per group with intervals.

    Parameters
    ----------
    frame : pandas.DataFrame
        Tidy rows with columns ``system``, ``stratum``, ``method`` and, for each of ``q0``,
        ``q1`` and ``J``, the estimate and its ``_lower``/``_upper`` bounds (``q0``,
        ``q0_lower``, ``q0_upper``, ...).
    ax : sequence of 3 matplotlib Axes, optional
        Axes for q0, q1 and J; a new figure is made when None.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes

    Notes
    -----
    The J panel marks 0 (a judge no better than chance) and 0.2, below which the corrected
    estimate's error is amplified more than 5× (``bayesjudge.estimate.LOW_J_THRESHOLD``).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"system": ["a"], "stratum": ["all"], "method": ["closed form"],
    ...                       "q0": [0.7], "q0_lower": [0.6], "q0_upper": [0.78],
    ...                       "q1": [0.9], "q1_lower": [0.82], "q1_upper": [0.95],
    ...                       "J": [0.6], "J_lower": [0.48], "J_upper": [0.7]})
    >>> [a.get_title() for a in plot_judge(frame)]
    ['specificity q0', 'sensitivity q1', 'Youden J = q0 + q1 − 1']
    """
    columns = ["system", "stratum", "method"]
    columns += [f"{v}{s}" for v in ("q0", "q1", "J") for s in ("", "_lower", "_upper")]
    _require(frame, columns, "plot_judge")
    frame = frame.copy()
    several = frame["stratum"].nunique() > 1
    frame["group"] = [
        f"{a} / {b}" if several else str(a)
        for a, b in zip(frame["system"], frame["stratum"], strict=True)
    ]
    groups = list(dict.fromkeys(frame["group"]))
    ax = _new_axes(3, ax, 3.8, 0.5 * len(groups) + 1.6)
    titles = ("specificity q0", "sensitivity q1", "Youden J = q0 + q1 − 1")
    for axis, var, title in zip(ax, ("q0", "q1", "J"), titles, strict=True):
        _forest_panel(axis, frame, "group", var, f"{var}_lower", f"{var}_upper", groups)
        axis.set_title(title)
        if var == "J":
            axis.axvline(0, color="C3", lw=0.8, ls="--")
            axis.axvline(0.2, color="0.5", lw=0.8, ls=":")
            axis.set_xlim(-1.02, 1.02)
        else:
            axis.set_xlim(-0.02, 1.02)
    _hide_repeated_labels(ax)
    ax[-1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    return ax


# ----------------------------------------------------------------------------- many systems


def _ranked_panel(axis, frame, label_col: str, order, value="estimate", lower="lower",
                  upper="upper"):  # fmt: skip
    """One panel of estimates with intervals against rank (x = 1, 2, ...), one colour/method."""
    x_of = {label: i + 1 for i, label in enumerate(order)}
    methods = list(dict.fromkeys(frame["method"]))
    spread = 0.5 if len(methods) > 1 else 0.0
    for m_index, method in enumerate(methods):
        rows = frame[frame["method"] == method]
        colour, marker = _style(method, m_index)
        offset = (m_index / max(len(methods) - 1, 1) - 0.5) * spread if spread else 0.0
        xs = np.array([x_of[v] for v in rows[label_col]], dtype=float) + offset
        est = rows[value].to_numpy(float)
        lo, hi = rows[lower].to_numpy(float), rows[upper].to_numpy(float)
        ok = np.isfinite(lo) & np.isfinite(hi)
        axis.vlines(xs[ok], lo[ok], hi[ok], color=colour, lw=0.8, alpha=0.7)
        axis.plot(xs, est, marker, color=colour, label=plain_label(method), ms=2.5)
    axis.set_xlim(0.3, len(order) + 0.7)
    axis.grid(axis="y", color="0.9")
    axis.set_axisbelow(True)


def _order_by(frame, label_col: str, value: str = "estimate", ascending: bool = False) -> list:
    """Labels sorted by the first method's ``value`` (NaN last)."""
    first = frame[frame["method"] == frame["method"].iloc[0]]
    values = first.set_index(label_col)[value]
    values = values[~values.index.duplicated()]
    key = values.to_numpy(float)
    key = np.where(np.isnan(key), np.inf, key if ascending else -key)
    return [values.index[i] for i in np.argsort(key, kind="stable")]


def plot_ranked(frame, ax=None, label_col: str = "system", order=None, ylabel: str = "θ",
                title: str | None = None):  # fmt: skip
    """Summary plot for many systems: estimates with intervals against their rank.

    A forest plot of hundreds of systems would be metres tall; this draws one column per
    system (or pair), sorted, without names: the report's tables hold them. One marker colour
    and shape per method, as in :func:`plot_theta_forest`.

    Parameters
    ----------
    frame : pandas.DataFrame
        Tidy rows with columns ``label_col``, ``method``, ``estimate``, ``lower``, ``upper``.
    ax : matplotlib Axes, optional
        Axes to draw on; a new figure is made when None.
    label_col : str, default "system"
        Column naming the rows.
    order : sequence, optional
        Labels in the order drawn (rank 1 first); default: by the first method's estimate,
        highest first.
    ylabel : str, default "θ"
        Label of the y axis.
    title : str, optional
        Title of the panel.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"system": list("abc"), "method": "Lang–Reiczigel",
    ...                       "estimate": [0.5, 0.7, 0.6], "lower": [0.4, 0.6, 0.5],
    ...                       "upper": [0.6, 0.8, 0.7]})
    >>> axis = plot_ranked(frame)
    >>> axis.get_xlabel()
    'rank (names in the tables)'
    """
    _require(frame, [label_col, "method", "estimate", "lower", "upper"], "plot_ranked")
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(12, 4))
    order = _order_by(frame, label_col) if order is None else list(order)
    _ranked_panel(ax, frame, label_col, order)
    ax.set_xlabel("rank (names in the tables)")
    ax.set_ylabel(plain_label(ylabel))
    if title:
        ax.set_title(plain_label(title))
    ax.legend(loc="best", fontsize="small")
    return ax
