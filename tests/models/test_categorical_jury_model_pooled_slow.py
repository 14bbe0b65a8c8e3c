"""Validation of the K-category jury's pooled, hierarchical and item-effect models. Slow.

1. Simulation-based calibration (SBC, Talts et al. 2018; ranks and the chi-square test of
   ``sbc.py``), 3 judges, K = 3, 150 test items and 15 labelled items per truth per data set,
   every parameter drawn from the model's prior:

   - ``pool_judges=True`` with ``calibration="separate"``: each system is a data set (its own
     θ, population μ, σ and judges' z), 10 data sets per fit;
   - ``calibration="hierarchical"``: each stratum is a data set (each judge's mean and scale
     per stratum, 2 systems drawn around them), 6 data sets per fit;
   - ``dependence="item"`` with ``calibration="separate"``: 4 data sets per fit as systems
     sharing one b (b_t is shared by every group), verdicts drawn by the model's probit law
     (:func:`_draw_verdicts`).

   Rule: every rank-uniformity chi-square test has p > 0.01.
2. The dependence study: judges simulated with a shared item effect
   (``simulate_categorical_jury(..., dependence=1.5)``, logit scale): the default model
   undercovers θ, ``dependence="item"`` restores its coverage; the agreement check flags 4 of
   20 data sets only (3 judges, 20 labels per truth: little power).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest
from sbc import rank_uniformity, ranks
from scipy.special import ndtr, ndtri, softmax

from bayesjudge.data.categorical_jury import CategoricalJuryCounts, categorical_pattern_strings
from bayesjudge.models.categorical import error_cells
from bayesjudge.models.categorical_jury import fit_categorical_jury
from bayesjudge.simulate import simulate_categorical_jury
from bayesjudge.warnings import ConvergenceWarning

K, J = 3, 3
CATEGORIES = ["A", "tie", "B"]
JUDGES = ["j0", "j1", "j2"]
SBC_LEVEL = 0.01
N, M = 150, 15
DRAWS, TUNE, CHAINS, THIN = 400, 400, 2, 4  # L = 2 * 100 = 200 draws per rank
MU, SD, TAU = -1.5, 1.5, 1.0  # CategoricalPriors' error_logit_mean, error_logit_scale
_, ROWS, COLS = error_cells(range(K))


def _fit(counts, **options):
    """Fit, recording (not raising) ConvergenceWarnings; return (fit, warned)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        fit = fit_categorical_jury(counts, **options)
    for w in caught:
        if not issubclass(w.category, ConvergenceWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return fit, any(issubclass(w.category, ConvergenceWarning) for w in caught)


def _softmax_rows(eta_off: np.ndarray) -> np.ndarray:
    """Confusion (..., K, K) from the off-diagonal log-ratios (..., K(K − 1)), diagonal 0."""
    eta = np.zeros((*eta_off.shape[:-1], K, K))
    eta[..., ROWS, COLS] = eta_off
    return softmax(eta, axis=-1)


def _all_patterns() -> list[str]:
    grid = np.array(np.meshgrid(*[range(K)] * J, indexing="ij")).reshape(J, -1).T
    return categorical_pattern_strings(grid)


def _counts_from_items(verdicts_by_group, systems, strata) -> CategoricalJuryCounts:
    """Counts over every complete pattern (one structure for every fit: one compile)."""
    patterns = _all_patterns()
    index = {p: i for i, p in enumerate(patterns)}
    test = np.zeros((len(systems), len(strata), len(patterns)), dtype=int)
    labelled = np.zeros((len(systems), len(strata), K, len(patterns)), dtype=int)
    for (s, r), (v_test, v_lab, t_lab) in verdicts_by_group.items():
        for p in categorical_pattern_strings(v_test):
            test[s, r, index[p]] += 1
        for p, t in zip(categorical_pattern_strings(v_lab), t_lab, strict=True):
            labelled[s, r, t, index[p]] += 1
    return CategoricalJuryCounts.from_counts(
        patterns, test, labelled, judges=JUDGES, categories=CATEGORIES, systems=systems,
        strata=strata,
    )  # fmt: skip


def _draw_verdicts(rng, truth, conf, b=None) -> np.ndarray:
    """Verdicts (items, J) under the model's law: C rows, or the probit item effect."""
    if b is None:
        cdf = np.cumsum(conf[:, truth], axis=-1)  # (J, items, K)
        u = rng.random((J, truth.size, 1))
        return np.minimum((u > cdf).sum(-1), K - 1).T
    diag = np.diagonal(conf, axis1=-2, axis2=-1)  # (J, K)
    a = ndtri(diag) * np.sqrt(1 + b**2)
    u = rng.standard_normal(truth.size)
    right = rng.random((truth.size, J)) < ndtr(a[:, truth].T + b[truth][:, None] * u[:, None])
    off = np.where(np.eye(K, dtype=bool), 0.0, conf)
    off = off / off.sum(-1, keepdims=True)
    wrong = _draw_verdicts(rng, truth, off)
    return np.where(right, truth[:, None], wrong)


def _group(rng, pi, conf, b=None):
    truth = rng.choice(K, size=N, p=pi)
    t_lab = np.repeat(np.arange(K), M)
    return _draw_verdicts(rng, truth, conf, b), _draw_verdicts(rng, t_lab, conf, b), t_lab


def _diag_ranks(conf_draws, conf_true) -> np.ndarray:
    """Ranks of every diagonal C[t, t] (conf_draws: chain, draw, ..., truth, verdict)."""
    return np.concatenate([
        ranks(conf_draws.isel(truth=t, verdict=t), conf_true[..., t, t], THIN).ravel()
        for t in range(K)
    ])  # fmt: skip


def _check(name, collected, n_fits, seconds, warned, divergences, transitions):
    n_draws = CHAINS * len(range(0, DRAWS, THIN))
    # About 8 ranks per bin at least (the chi-square approximation).
    tests = {key: rank_uniformity(np.concatenate(v), n_draws, min(10, len(np.concatenate(v)) // 8))
             for key, v in collected.items()}  # fmt: skip
    print(f"\nSBC {name}: {n_fits} fits in {seconds:.0f} s; divergences {divergences} of "
          f"{transitions}; {warned} fits with a ConvergenceWarning")  # fmt: skip
    for key, (stat, p) in tests.items():
        print(f"  {key}: chi2 = {stat:.1f}, p = {p:.3f}")
    for key, (_, p) in tests.items():
        assert p > SBC_LEVEL, (key, tests)
    assert divergences <= 0.01 * transitions, divergences


@pytest.mark.slow
def test_sbc_pooled_judges():
    rng = np.random.default_rng(3031)
    # 5 fits (was 8: CI's 90 minutes): 150 θ ranks, 450 diagonal ranks, 10 bins each.
    n_sets, n_fits = 10, 5
    systems = [f"set{i}" for i in range(n_sets)]
    collected = {"theta": [], "diagonal": [], "A->tie": []}
    warned = divergences = transitions = 0
    start = time.perf_counter()
    for i in range(n_fits):
        pi = rng.dirichlet(np.ones(K), size=n_sets)
        mu = rng.normal(MU, SD, size=(n_sets, K * (K - 1)))
        sigma = np.abs(rng.normal(0, TAU, size=(n_sets, K)))
        z = rng.standard_normal((n_sets, J, K * (K - 1)))
        conf = _softmax_rows(mu[:, None] + sigma[:, None][..., ROWS] * z)  # (set, J, K, K)
        groups = {(s, 0): _group(rng, pi[s], conf[s]) for s in range(n_sets)}
        counts = _counts_from_items(groups, systems, ["all"])
        fit, bad = _fit(counts, calibration="separate", pool_judges=True, draws=DRAWS,
                        tune=TUNE, chains=CHAINS, random_seed=200 + i)  # fmt: skip
        warned += bad
        post = fit.posterior
        theta = post["theta"].isel(stratum=0).transpose("chain", "draw", "system", "category")
        collected["theta"].append(ranks(theta, pi, THIN).ravel())
        c = post["confusion"].isel(stratum=0).transpose("chain", "draw", "judge", "system", ...)
        collected["diagonal"].append(_diag_ranks(c, conf.transpose(1, 0, 2, 3)))
        collected["A->tie"].append(
            ranks(c.isel(truth=0, verdict=1), conf.transpose(1, 0, 2, 3)[..., 0, 1], THIN).ravel()
        )
        stats = fit.diagnostics()
        divergences, transitions = divergences + stats["divergences"], transitions + stats["draws"]
    _check("pool_judges", collected, n_fits, time.perf_counter() - start, warned, divergences,
           transitions)  # fmt: skip


@pytest.mark.slow
def test_sbc_hierarchical():
    rng = np.random.default_rng(3032)
    # 4 fits (was 8: CI's 90 minutes): 144 θ ranks and 432 diagonal ranks, 10 bins each.
    n_sets, n_sys, n_fits = 6, 2, 4
    strata = [f"set{i}" for i in range(n_sets)]
    systems = [f"s{i}" for i in range(n_sys)]
    collected = {"theta": [], "diagonal": []}
    warned = divergences = transitions = 0
    start = time.perf_counter()
    for i in range(n_fits):
        pi = rng.dirichlet(np.ones(K), size=(n_sys, n_sets))
        mu = rng.normal(MU, SD, size=(J, n_sets, K * (K - 1)))
        sigma = np.abs(rng.normal(0, TAU, size=(J, n_sets, K)))
        z = rng.standard_normal((J, n_sys, n_sets, K * (K - 1)))
        conf = _softmax_rows(mu[:, None] + sigma[:, None][..., ROWS] * z)  # (J, S, R, K, K)
        groups = {(s, r): _group(rng, pi[s, r], conf[:, s, r])
                  for s in range(n_sys) for r in range(n_sets)}  # fmt: skip
        counts = _counts_from_items(groups, systems, strata)
        fit, bad = _fit(counts, calibration="hierarchical", draws=DRAWS, tune=TUNE,
                        chains=CHAINS, random_seed=300 + i)  # fmt: skip
        warned += bad
        post = fit.posterior
        theta = post["theta"].transpose("chain", "draw", "system", "stratum", "category")
        collected["theta"].append(ranks(theta, pi, THIN).ravel())
        c = post["confusion"].transpose("chain", "draw", "judge", "system", "stratum", ...)
        collected["diagonal"].append(_diag_ranks(c, conf))
        stats = fit.diagnostics()
        divergences, transitions = divergences + stats["divergences"], transitions + stats["draws"]
    _check("hierarchical", collected, n_fits, time.perf_counter() - start, warned, divergences,
           transitions)  # fmt: skip


@pytest.mark.slow
def test_sbc_item_effect():
    # b_t is shared by every group: each fit holds 2 data sets as systems with their own θ
    # and confusion ("separate") and one b (48 ranks of b over the fits, 6 bins). Two sets a
    # fit, not four, halve the time (for CI) and keep b's ranks.
    rng = np.random.default_rng(3033)
    n_sets, n_fits = 2, 16
    systems = [f"set{i}" for i in range(n_sets)]
    collected = {"theta": [], "diagonal": [], "item_effect": []}
    warned = divergences = transitions = 0
    start = time.perf_counter()
    for i in range(n_fits):
        pi = rng.dirichlet(np.ones(K), size=n_sets)
        conf = rng.dirichlet(np.full(K, 1 / K), size=(n_sets, J, K))
        b = np.abs(rng.normal(0, 1.0, size=K))  # ITEM_EFFECT_SCALE
        groups = {(s, 0): _group(rng, pi[s], conf[s], b) for s in range(n_sets)}
        counts = _counts_from_items(groups, systems, ["all"])
        fit, bad = _fit(counts, calibration="separate", dependence="item", draws=DRAWS,
                        tune=TUNE, chains=CHAINS, random_seed=400 + i)  # fmt: skip
        warned += bad
        post = fit.posterior
        theta = post["theta"].isel(stratum=0).transpose("chain", "draw", "system", "category")
        collected["theta"].append(ranks(theta, pi, THIN).ravel())
        c = post["confusion"].isel(stratum=0).transpose("chain", "draw", "judge", "system", ...)
        collected["diagonal"].append(_diag_ranks(c, conf.transpose(1, 0, 2, 3)))
        effect = post["item_effect"].transpose("chain", "draw", "truth")
        collected["item_effect"].append(ranks(effect, b, THIN).ravel())
        stats = fit.diagnostics()
        divergences, transitions = divergences + stats["divergences"], transitions + stats["draws"]
    _check("dependence='item'", collected, n_fits, time.perf_counter() - start, warned,
           divergences, transitions)  # fmt: skip


# ------------------------------------------------------------------------ dependence study

STUDY_SETS, STUDY_N, STUDY_M, STUDY_SIGMA = 10, 400, 20, 1.5
STUDY_PI = np.array([0.4, 0.2, 0.4])
STUDY_CONF = np.array(
    [
        [[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.1, 0.1, 0.8]],
        [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.05, 0.15, 0.8]],
        [[0.85, 0.1, 0.05], [0.15, 0.6, 0.25], [0.1, 0.2, 0.7]],
    ]
)


def _coverage(fit) -> np.ndarray:
    ci = fit.summary()["theta_ci"].isel(stratum=0).transpose("ci_bound", "system", "category")
    return (ci.values[0] <= STUDY_PI) & (STUDY_PI <= ci.values[1])


@pytest.mark.slow
def test_dependent_judges_flagged_and_item_effect_restores_coverage():
    # 20 data sets (systems, calibration="separate") of 3 judges sharing an item effect of sd
    # 1.5 on the logit of a right verdict (marginal confusion kept): 60 θ intervals per model.
    counts = simulate_categorical_jury(
        STUDY_PI, np.broadcast_to(STUDY_CONF, (STUDY_SETS, J, K, K)), n=STUDY_N,
        m=[STUDY_M] * K, system=[f"set{i}" for i in range(STUDY_SETS)], categories=CATEGORIES,
        judges=JUDGES, dependence=STUDY_SIGMA, random_seed=4040,
    )  # fmt: skip
    start = time.perf_counter()
    default, _ = _fit(counts, calibration="separate", draws=500, tune=500, chains=2,
                      random_seed=41)  # fmt: skip
    flagged = float(default.ppc(random_seed=42).flagged.mean())
    item, _ = _fit(counts, calibration="separate", dependence="item", draws=500, tune=500,
                   chains=2, random_seed=43)  # fmt: skip
    cover_default, cover_item = _coverage(default).mean(), _coverage(item).mean()
    n = STUDY_SETS * K
    se = np.sqrt(0.95 * 0.05 / n)
    print(f"\ndependence study ({time.perf_counter() - start:.0f} s): flagged "
          f"{flagged:.2f} of {STUDY_SETS} sets; θ coverage (nominal 0.95, MC-SE {se:.3f}, "
          f"{n} intervals): default {cover_default:.2f}, item {cover_item:.2f}; item_effect "
          f"{item.summary()['item_effect'].values.round(2)}")  # fmt: skip
    # Measured (263 s on one core, the other busy): flagged 0.30 (3 of 10 sets); coverage
    # default 0.63, item 0.97; b 1.18, 0.86, 1.09 (probit scale; σ = 1.5 on the logit is
    # about 0.9). An earlier run with 20 sets and 2 × 1000 draws (1700 s at load average 5):
    # flagged 4 of 20, coverage default 0.77, item 0.95; b 1.08, 0.86, 0.98. With 3
    # judges and 20 labels per truth the check has little power, as the binary model's (0 and
    # 4 of 25 there at 20 + 20 labels): "flags most data sets" needs more labels or judges
    # (binary: 40 + 40 labels or 5 judges, 19 of 20), not run here for K = 3.
    assert flagged >= 0.1, flagged
    # The default model undercovers by more than 3 MC-SE; the item model within 3 MC-SE of the
    # nominal rate (intervals of one set are correlated: the band is a floor).
    assert cover_default < 0.95 - 3 * se, cover_default
    assert cover_item >= 0.95 - 3 * se, cover_item
