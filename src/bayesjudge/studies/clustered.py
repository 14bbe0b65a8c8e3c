"""Repeated verdicts of an item: coverage of naive and cluster-aware intervals (issue 18).

When the judge grades each test item several times (Inspect epochs), the verdicts of one item
are correlated: each item has its own propensity to be called correct. The study simulates
that law (:func:`bayesjudge.simulate.simulate_cluster_tables`: per item a Beta propensity
with mean q1 or 1 − q0 by its truth and intra-item correlation ``icc``; ``epochs`` verdicts
per item; a stratified calibration set of one verdict per labelled item) and scores, on the
same data in every replication,

``naive-lang-reiczigel``
    Rogan–Gladen with the Lang–Reiczigel interval on the verdict totals (n = Σr, k = Σk):
    what the package computes for counts that forget their clusters
    (``estimate(counts.without_clusters())``).
``naive-bootstrap``
    The percentile bootstrap that resamples the verdicts as independent items
    (:func:`bayesjudge.core.bootstrap.bootstrap_rogan_gladen` on the totals).
``cluster-delta``
    :func:`bayesjudge.core.cluster.cluster_delta`: the Wald interval with the cluster-robust
    (ratio-estimator) variance of p̂ = Σk/Σr.
``cluster-bootstrap``
    :func:`bayesjudge.core.cluster.cluster_bootstrap`: items resampled with all their
    verdicts, the calibration set as the naive bootstrap does.

The truth is θ, the share of *items* truly correct. Design: ``epochs`` ∈ {1, 3, 5} ×
``icc`` ∈ {0, 0.3, 0.6}, n = 200 items, m0 = m1 = 100 labelled items, q0 = 0.8, q1 = 0.9,
θ ∈ {0.3, 0.7}. With one verdict per item the naive intervals are right (the cluster ones
must agree); with several verdicts per item the naive intervals are too
narrow — even at ``icc = 0``, because the verdicts of one item share its truth: their
correlation is ``θ(1−θ)J² / (p(1−p))`` plus the item effect. Goals (:func:`goals`): the
cluster intervals never cover below the nominal level − 3 nominal Monte Carlo SE and cover as
they do with one verdict per item; the naive ones fall below nominal − 3 MC-SE wherever
``epochs > 1``.

Seeding: every design point has its own stream derived from ``random_seed`` and the point's
values (:func:`~bayesjudge.studies._framework.point_rngs`): one for the data, one per
bootstrap.
"""

from __future__ import annotations

import itertools
import json
import time
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
import xarray as xr

from bayesjudge.core.bootstrap import bootstrap_rogan_gladen
from bayesjudge.core.cluster import cluster_bootstrap, cluster_delta
from bayesjudge.core.correction import lang_reiczigel_interval
from bayesjudge.core.kernels import rogan_gladen_counts
from bayesjudge.simulate import simulate_cluster_tables
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
from bayesjudge.warnings import LowJudgeQualityWarning, SmallSampleWarning

__all__ = [
    "CLUSTER_ESTIMATORS",
    "DEFAULT_SEED",
    "ESTIMATORS",
    "NAIVE_ESTIMATORS",
    "QUICK_OPTIONS",
    "QUICK_REPS",
    "goals",
    "plot",
    "run",
]

NAME = "clustered"
DEFAULT_SEED = 20_261_127
NAIVE_ESTIMATORS = ("naive-lang-reiczigel", "naive-bootstrap")
CLUSTER_ESTIMATORS = ("cluster-delta", "cluster-bootstrap")
ESTIMATORS = (*NAIVE_ESTIMATORS, *CLUSTER_ESTIMATORS)
#: ``bayesjudge study clustered --quick``: one θ, fewer bootstrap resamples.
QUICK_REPS = 200
QUICK_OPTIONS = {"theta": [0.5], "n_resamples": 400}
_LABELS = {
    "naive-lang-reiczigel": "naive: Lang–Reiczigel on verdicts",
    "naive-bootstrap": "naive: bootstrap of verdicts",
    "cluster-delta": "cluster-robust delta (Wald)",
    "cluster-bootstrap": "cluster bootstrap (items)",
}
# Replications per bootstrap call: bounds memory (reps x resamples x table cells).
_CHUNK = 100


def _totals(data):
    table = data["table"]
    r = np.arange(1, table.shape[-2] + 1)[:, None]
    k = np.arange(table.shape[-1])[None, :]
    return (table * k).sum(axis=(-2, -1)), (table * r).sum(axis=(-2, -1))


def _naive_lr(data, alpha, rng, n_resamples):
    k, n = _totals(data)
    cal = [data[v] for v in ("tn", "m0", "tp", "m1")]
    theta, _ = rogan_gladen_counts(k, n, *cal, clip=True)
    lower, upper = lang_reiczigel_interval(
        k / n, cal[0] / cal[1], cal[2] / cal[3], n, cal[1], cal[3], alpha=alpha
    )
    return theta, lower, upper


def _bootstrap(function, args, alpha, rng, n_resamples):
    out = [np.empty(args[0].shape[0]) for _ in range(3)]
    for part in chunks(args[0].shape[0], _CHUNK):
        res = function(
            *(a[part] for a in args), alpha=alpha, n_resamples=n_resamples, random_seed=rng
        )
        for o, v in zip(out, res, strict=True):
            o[part] = v
    return tuple(out)


def _naive_bootstrap(data, alpha, rng, n_resamples):
    k, n = _totals(data)
    args = (k, n, *(data[v] for v in ("tn", "m0", "tp", "m1")))
    return _bootstrap(bootstrap_rogan_gladen, args, alpha, rng, n_resamples)


def _cluster_delta(data, alpha, rng, n_resamples):
    return cluster_delta(data["table"], *(data[v] for v in ("tn", "m0", "tp", "m1")), alpha=alpha)


def _cluster_bootstrap(data, alpha, rng, n_resamples):
    args = (data["table"], *(data[v] for v in ("tn", "m0", "tp", "m1")))
    return _bootstrap(cluster_bootstrap, args, alpha, rng, n_resamples)


_FUNCTIONS = {
    "naive-lang-reiczigel": _naive_lr,
    "naive-bootstrap": _naive_bootstrap,
    "cluster-delta": _cluster_delta,
    "cluster-bootstrap": _cluster_bootstrap,
}


def _check_estimators(estimators) -> list[str]:
    names = [estimators] if isinstance(estimators, str) else list(estimators)
    unknown = [e for e in names if e not in ESTIMATORS]
    if unknown or not names or len(set(names)) != len(names):
        raise ValueError(
            f"estimators must be distinct names among {list(ESTIMATORS)}; got {estimators!r}."
        )
    return names


def run(
    *,
    reps: int = 2000,
    random_seed: int = DEFAULT_SEED,
    progress: bool = False,
    epochs: Sequence[int] = (1, 3, 5),
    icc: Sequence[float] = (0.0, 0.3, 0.6),
    theta: Sequence[float] = (0.3, 0.7),
    n: int = 200,
    m: int = 100,
    q0: float = 0.8,
    q1: float = 0.9,
    estimators: Sequence[str] = ESTIMATORS,
    alpha: float = 0.05,
    n_resamples: int = 1000,
) -> StudyResult:
    """Run the clustered-verdicts study: coverage of naive vs cluster-aware intervals.

    Parameters
    ----------
    reps : int, default 2000
        Replications per design point (Monte Carlo SE of a 95 % coverage: 0.0049).
    random_seed : int, default DEFAULT_SEED
        Seed; each design point derives its own streams from it and its values.
    progress : bool, default False
        Show a progress bar on stderr (one step per design point).
    epochs : sequence of int, default (1, 3, 5)
        Verdicts per test item.
    icc : sequence of float, default (0, 0.3, 0.6)
        Correlation of two verdicts of one item, in [0, 1).
    theta : sequence of float, default (0.3, 0.7)
        True accuracies (share of items truly correct).
    n, m : int, default 200, 100
        Test items; labelled items per truth (m0 = m1 = m, one verdict each).
    q0, q1 : float, default 0.8, 0.9
        The judge's per-verdict specificity and sensitivity.
    estimators : sequence of str, default all four
        Any of :data:`ESTIMATORS`; all run on the same data.
    alpha : float, default 0.05
        Intervals have nominal coverage 1 − alpha.
    n_resamples : int, default 1000
        Resamples per bootstrap interval (at least 100).

    Returns
    -------
    StudyResult
        Table with dims ``(epochs, icc, theta, estimator)`` and variables ``bias``,
        ``coverage``, ``length`` (mean interval length), each with ``<name>_mcse``;
        ``attrs`` hold the settings, ``goals`` (JSON of :func:`goals`) and ``seconds``.

    Examples
    --------
    >>> from bayesjudge.studies import clustered
    >>> res = clustered.run(reps=50, epochs=[3], icc=[0.6], theta=[0.5],
    ...                     estimators=["naive-lang-reiczigel", "cluster-delta"])
    >>> res.table["coverage"].dims
    ('epochs', 'icc', 'theta', 'estimator')
    """
    reps = check_reps(reps)
    random_seed = check_seed(random_seed)
    epochs = check_grid("epochs", epochs, low=1, integer=True)
    icc = check_grid("icc", icc, low=0, high=1, high_open=True)
    thetas = check_grid("theta", theta, low=0, high=1, low_open=True, high_open=True)
    n = check_number("n", n, low=2, integer=True)
    m = check_number("m", m, low=2, integer=True)
    q0 = check_number("q0", q0, low=0, high=1)
    q1 = check_number("q1", q1, low=0, high=1)
    if q0 + q1 <= 1:
        raise ValueError(f"q0 + q1 must exceed 1 (a judge better than chance); got {q0 + q1:g}.")
    alpha = check_number("alpha", alpha, low=0, high=1, low_open=True, high_open=True)
    n_resamples = check_number("n_resamples", n_resamples, low=100, integer=True)
    estimators = _check_estimators(estimators)

    dims = ("epochs", "icc", "theta", "estimator")
    coords = {"epochs": list(epochs), "icc": list(icc), "theta": list(thetas)}
    coords["estimator"] = estimators
    shape = tuple(len(coords[d]) for d in dims)
    values = {name: np.full(shape, np.nan) for name in ("bias", "coverage", "length")}
    mcse = {name: np.full(shape, np.nan) for name in values}
    seconds = dict.fromkeys(("simulate", *estimators), 0.0)
    points = list(itertools.product(*(range(s) for s in shape[:3])))
    bar = progress_bar(len(points), f"study {NAME}", progress)
    for point in points:
        r, rho, th = (coords[d][i] for d, i in zip(dims, point, strict=False))
        streams = point_rngs(random_seed, r, rho, th, n, m, q0, q1, count=1 + len(ESTIMATORS))
        start = time.perf_counter()
        data = simulate_cluster_tables(
            th, q0, q1, n, m, m, epochs=r, icc=rho, size=reps, random_seed=streams[0]
        )
        seconds["simulate"] += time.perf_counter() - start
        for i_e, name in enumerate(estimators):
            start = time.perf_counter()
            with warnings.catch_warnings():
                # Replicates with J* = 0 are counted at the ends (conservative) and are
                # vanishingly rare here (J = 0.7, m = 100); the study reports coverage.
                warnings.simplefilter("ignore", LowJudgeQualityWarning)
                warnings.simplefilter("ignore", SmallSampleWarning)
                rng = streams[1 + ESTIMATORS.index(name)]
                est, lower, upper = _FUNCTIONS[name](data, alpha, rng, n_resamples)
            seconds[name] += time.perf_counter() - start
            covered = (lower <= th) & (th <= upper)
            cell = (*point, i_e)
            error, length = np.asarray(est) - th, np.asarray(upper) - lower
            values["bias"][cell], mcse["bias"][cell] = error.mean(), mcse_mean(error)
            values["coverage"][cell] = covered.mean()
            mcse["coverage"][cell] = mcse_proportion(covered.mean(), reps)
            values["length"][cell], mcse["length"][cell] = length.mean(), mcse_mean(length)
        bar.update()

    data_vars = {}
    for name in values:
        data_vars[name] = (dims, values[name])
        data_vars[f"{name}_mcse"] = (dims, mcse[name])
    table = xr.Dataset(data_vars, coords=coords)
    table.attrs = study_attrs(
        NAME,
        reps=reps,
        random_seed=random_seed,
        epochs=list(epochs),
        icc=list(icc),
        theta=list(thetas),
        n=n,
        m0=m,
        m1=m,
        q0=q0,
        q1=q1,
        estimators=estimators,
        alpha=float(alpha),
        ci_prob=1.0 - float(alpha),
        n_resamples=n_resamples,
        item_effect="per-item propensity Beta(mu*kappa, (1-mu)*kappa), kappa=(1-icc)/icc",
        reproduces="issue 18 (repeated verdicts of an item)",
    )
    table.attrs["seconds"] = json.dumps({key: round(v, 3) for key, v in seconds.items()})
    table.attrs["goals"] = goals(table).to_json(orient="records")
    return StudyResult(NAME, table, plot)


def goals(table: xr.Dataset) -> pd.DataFrame:
    """Check the study's goals; one row per (goal, estimator, design point) check.

    With ``band = 3 · sqrt(nominal (1 − nominal) / reps)`` (3 nominal Monte Carlo SE):

    * ``nominal``: a cluster estimator's coverage is at least ``nominal − band`` at every
      point (it does not understate the uncertainty). Over-coverage is not held against it:
      the Wald interval of the Rogan–Gladen ratio is itself slightly conservative at some θ,
      with one verdict per item too (see ``as one verdict``).
    * ``as one verdict``: where the table has ``epochs = 1``, a cluster estimator's coverage
      at ``epochs > 1`` is within ``sqrt(2) · band`` (two independent estimates) of its own
      coverage with one verdict per item at the same ``icc`` and θ: clustering costs it no
      coverage.
    * ``undercovers``: a naive estimator's coverage is below ``nominal − band`` at every
      point with ``epochs > 1`` (with ``icc = 0`` too: the verdicts of one item share its
      truth, so they are correlated even without an item effect on the judge).

    Parameters
    ----------
    table : xarray.Dataset
        The table of :func:`run`.

    Returns
    -------
    pandas.DataFrame
        Columns ``goal, estimator, epochs, icc, theta, coverage, target, passed``.

    Examples
    --------
    >>> from bayesjudge.studies import clustered
    >>> res = clustered.run(reps=50, epochs=[3], icc=[0.6], theta=[0.5],
    ...                     estimators=["cluster-delta"])
    >>> clustered.goals(res.table)["goal"].tolist()
    ['nominal']
    """
    nominal = float(table.attrs.get("ci_prob", 0.95))
    band = 3 * np.sqrt(nominal * (1 - nominal) / int(table.attrs["reps"]))
    rows = []
    baseline = 1 in table["epochs"].values
    wide = np.sqrt(2) * band  # the difference of two independent coverage estimates
    for name in (str(e) for e in table["estimator"].values):
        cover = table["coverage"].sel(estimator=name)
        for r, rho, th in itertools.product(*(table[d].values for d in ("epochs", "icc", "theta"))):
            value = float(cover.sel(epochs=r, icc=rho, theta=th))
            key = {"estimator": name, "epochs": int(r), "icc": float(rho), "theta": float(th)}
            if name in CLUSTER_ESTIMATORS:
                rows.append({"goal": "nominal", **key, "coverage": value,
                             "target": f">= {nominal - band:.4f}",
                             "passed": bool(value >= nominal - band)})  # fmt: skip
                if baseline and r > 1:
                    one = float(cover.sel(epochs=1, icc=rho, theta=th))
                    rows.append({"goal": "as one verdict", **key, "coverage": value,
                                 "target": f"{one:.4f} ± {wide:.4f}",
                                 "passed": bool(abs(value - one) <= wide)})  # fmt: skip
            elif r > 1:
                rows.append({"goal": "undercovers", **key, "coverage": value,
                             "target": f"< {nominal - band:.4f}",
                             "passed": bool(value < nominal - band)})  # fmt: skip
    return pd.DataFrame(
        rows,
        columns=["goal", "estimator", "epochs", "icc", "theta", "coverage", "target", "passed"],
    )


def plot(table: xr.Dataset):
    """Draw coverage and mean width against the intra-item correlation, one column per epochs.

    Parameters
    ----------
    table : xarray.Dataset
        The table of :func:`run`.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (close it with ``matplotlib.pyplot.close``).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from bayesjudge.studies import clustered
    >>> res = clustered.run(reps=20, epochs=[1, 3], icc=[0.0, 0.5], theta=[0.5],
    ...                     estimators=["cluster-delta"])
    >>> fig = clustered.plot(res.table)
    >>> len(fig.axes)
    4
    >>> plt.close(fig)
    """
    import matplotlib.pyplot as plt

    epochs = table["epochs"].values
    nominal = float(table.attrs.get("ci_prob", 0.95))
    band = 3 * np.sqrt(nominal * (1 - nominal) / int(table.attrs.get("reps", 1)))
    fig, axes = plt.subplots(2, len(epochs), figsize=(4.5 * len(epochs), 6.5), squeeze=False,
                             constrained_layout=True)  # fmt: skip
    icc = table["icc"].values
    for col, r in enumerate(epochs):
        for estimator in table["estimator"].values:
            for th in table["theta"].values:
                cell = table.sel(epochs=r, estimator=estimator, theta=th)
                label = f"{_LABELS.get(str(estimator), estimator)}, θ={th:g}"
                for row, var in enumerate(("coverage", "length")):
                    axes[row, col].errorbar(icc, cell[var], yerr=cell[f"{var}_mcse"], marker="o",
                                            ms=3, lw=1, capsize=2, label=label)  # fmt: skip
        axes[0, col].axhline(nominal, color="k", lw=0.8, ls="--")
        axes[0, col].axhspan(nominal - band, nominal + band, color="0.85", zorder=0)
        axes[0, col].set_title(f"{int(r)} verdict{'s' if r != 1 else ''} per item", fontsize=9)
        for row in (0, 1):
            axes[row, col].set_xlabel("intra-item correlation of verdicts (icc)")
        axes[0, col].set_ylabel("coverage of θ")
        axes[1, col].set_ylabel("mean interval length")
    axes[0, 0].legend(fontsize=6)
    return fig
