"""bayesjudge.core.categorical_jury: the K-class Dawid–Skene model and the plurality vote.

References: K = 2 against bayesjudge.core.jury (1e-9), K = 3 against crowd-kit 1.4.2's
DawidSkene (vendored, tests/references/crowdkit_dawid_skene.py; 1e-9), the likelihood against
products of scipy.stats.multinomial pmfs summed over the truth by brute force (1e-12), the EM
optimum against scipy.optimize.minimize on the softmax parametrisation (1e-4), the observed
information against a central-difference Hessian of the log-likelihood.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from crowdkit_dawid_skene import DawidSkene  # tests/references, vendored
from scipy.optimize import minimize
from scipy.special import log_softmax
from scipy.stats import multinomial

from bayesjudge.core import jury
from bayesjudge.core.categorical_jury import (
    _information,
    categorical_dawid_skene,
    categorical_dawid_skene_interval,
    categorical_jury_log_likelihood,
    categorical_pattern_log_likelihood,
    plurality_verdicts,
    plurality_vote,
)

TOL = 1e-9
K3 = 3
# Three judges grading A / tie / B: the tie is the hard category.
CONF3 = np.array([
    [[0.80, 0.12, 0.08], [0.20, 0.60, 0.20], [0.05, 0.15, 0.80]],
    [[0.70, 0.20, 0.10], [0.15, 0.70, 0.15], [0.10, 0.10, 0.80]],
    [[0.85, 0.10, 0.05], [0.25, 0.50, 0.25], [0.05, 0.10, 0.85]],
])  # fmt: skip
PI3 = np.array([0.45, 0.15, 0.40])
# Judges who lean towards A (position bias): a tie is called A 25-35% of the time.
CONF_BIAS = np.array([
    [[0.85, 0.10, 0.05], [0.30, 0.55, 0.15], [0.15, 0.10, 0.75]],
    [[0.80, 0.15, 0.05], [0.25, 0.60, 0.15], [0.10, 0.15, 0.75]],
    [[0.90, 0.05, 0.05], [0.35, 0.45, 0.20], [0.20, 0.05, 0.75]],
])  # fmt: skip
# Four good judges: EM without labels converges in about 100 steps (crowd-kit is slow).
CONF4 = np.array([[[0.85, 0.10, 0.05], [0.10, 0.80, 0.10], [0.05, 0.10, 0.85]]] * 4)
CONF4[1] = [[0.80, 0.10, 0.10], [0.15, 0.75, 0.10], [0.10, 0.10, 0.80]]


def simulate_items(seed, n, pi, conf, missing=0.0):
    """Item-level truths (n,) and verdicts (n, J), with a share ``missing`` of -1 entries."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(len(pi), size=n, p=pi)
    cum = conf[np.arange(conf.shape[0])[None, :], truth[:, None]].cumsum(axis=-1)
    says = (rng.random((n, conf.shape[0], 1)) > cum).sum(axis=-1)
    gone = rng.random(says.shape) < missing
    gone[gone.all(axis=1), 0] = False
    return truth, np.where(gone, -1, says)


def to_counts(truth, verdicts, labelled_mask, k):
    """Distinct patterns (P, J), test counts (P,) and labelled counts (K, P)."""
    pats, inv = np.unique(verdicts, axis=0, return_inverse=True)
    test = np.bincount(inv[~labelled_mask], minlength=len(pats))
    lab = np.stack(
        [np.bincount(inv[labelled_mask & (truth == t)], minlength=len(pats)) for t in range(k)]
    )
    return pats, test, lab


def draw3(seed, n=500, m=30, missing=0.1, pi=PI3):
    """Simulated K = 3 data: n test items and m labelled items per truth (stratified)."""
    truth, verdicts = simulate_items(seed, n, pi, CONF3, missing)
    rng = np.random.default_rng(seed + 1)
    lab_truth = np.repeat(np.arange(K3), m)
    cal = np.array([simulate_items(int(rng.integers(2**32)), 1, np.eye(K3)[t], CONF3, missing)[1][0]
                    for t in lab_truth])  # fmt: skip
    allv = np.vstack([verdicts, cal])
    mask = np.r_[np.zeros(n, bool), np.ones(len(cal), bool)]
    return to_counts(np.r_[truth, lab_truth], allv, mask, K3)


def draw2(seed, n=400, n_gold=60):
    """Binary data of 3 judges, 10% missing; the first n_gold items labelled."""
    conf = np.array([[[0.8, 0.2], [0.3, 0.7]], [[0.85, 0.15], [0.1, 0.9]],
                     [[0.9, 0.1], [0.15, 0.85]]])  # fmt: skip
    truth, verdicts = simulate_items(seed, n, np.array([0.4, 0.6]), conf, 0.1)
    return to_counts(truth, verdicts, np.arange(n) < n_gold, 2)


# ------------------------------------------------------------------- K = 2: core.jury


@pytest.mark.parametrize("design", ["stratified", "random"])
@pytest.mark.parametrize("labelled", [True, False])
def test_k2_reduces_to_binary_dawid_skene(design, labelled):
    pats, test, lab = draw2(seed=1)
    lab = lab if labelled else None
    b = jury.dawid_skene(pats, test, lab, design=design)
    c = categorical_dawid_skene(pats, test, lab, design=design, n_categories=2)
    assert c.pi[1] == pytest.approx(b.theta, abs=TOL)
    np.testing.assert_allclose(c.confusion[:, 0, 0], b.q0, atol=TOL)
    np.testing.assert_allclose(c.confusion[:, 1, 1], b.q1, atol=TOL)
    np.testing.assert_allclose(c.posterior[:, 1], b.posterior, atol=TOL)
    assert c.log_likelihood == pytest.approx(b.log_likelihood, abs=1e-9 * abs(b.log_likelihood))
    assert c.converged and b.converged
    bi = jury.dawid_skene_interval(pats, test, lab, design=design)
    ci = categorical_dawid_skene_interval(
        pats, test, lab, design=design, n_categories=2, scores=[0, 1], interval_smoothing=0.0
    )
    assert (ci.lower[1], ci.upper[1]) == pytest.approx((bi.lower, bi.upper), abs=TOL)
    assert (ci.lower[0], ci.upper[0]) == pytest.approx((1 - bi.upper, 1 - bi.lower), abs=TOL)
    assert (ci.score, ci.score_lower, ci.score_upper) == pytest.approx(tuple(bi), abs=TOL)
    # The default Wald interval is built around the fit with 1/K = 0.5 pseudo-items per cell:
    # the binary interval with smoothing=0.5, while the estimate stays the unsmoothed one.
    bs = jury.dawid_skene_interval(pats, test, lab, design=design, smoothing=0.5)
    cs = categorical_dawid_skene_interval(
        pats, test, lab, design=design, n_categories=2, scores=[0, 1]
    )
    assert (cs.lower[1], cs.upper[1]) == pytest.approx((bs.lower, bs.upper), abs=TOL)
    assert (cs.score_lower, cs.score_upper) == pytest.approx((bs.lower, bs.upper), abs=TOL)
    assert cs.estimate[1] == cs.score == pytest.approx(b.theta, abs=TOL)


@pytest.mark.parametrize("design", ["stratified", "random"])
def test_k2_bootstrap_reduces_to_binary(design):
    # Same resampling order and same batched EM: identical replicates from the same seed.
    pats, test, lab = draw2(seed=2)
    with warnings.catch_warnings():  # fewer than 1000 resamples warn; enough to compare
        warnings.simplefilter("ignore")
        b = jury.dawid_skene_interval(
            pats, test, lab, design=design, method="bootstrap", n_resamples=300, random_seed=5
        )
        c = categorical_dawid_skene_interval(
            pats, test, lab, design=design, method="bootstrap", n_resamples=300, random_seed=5
        )
    assert (c.lower[1], c.upper[1]) == pytest.approx((b.lower, b.upper), abs=TOL)


def test_k2_plurality_reduces_to_majority_vote():
    pats, test, _ = draw2(seed=3)
    b = jury.majority_vote(pats, test)
    c = plurality_vote(pats, test, 2, scores=[0, 1])
    assert (c.estimate[1], c.lower[1], c.upper[1]) == pytest.approx(tuple(b), abs=TOL)
    assert (c.score, c.score_lower, c.score_upper) == pytest.approx(tuple(b), abs=TOL)
    np.testing.assert_allclose(plurality_verdicts(pats, 2)[:, 1], jury.majority_verdicts(pats))


# -------------------------------------------------------------------- K = 3: crowd-kit


def long_format(verdicts):
    rows = [
        (f"t{i}", f"w{j}", int(verdicts[i, j]))
        for i in range(verdicts.shape[0])
        for j in range(verdicts.shape[1])
        if verdicts[i, j] >= 0
    ]
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


@pytest.mark.parametrize("n_gold", [0, 60])
def test_k3_dawid_skene_matches_crowdkit(n_gold):
    # crowd-kit's true_labels keep gold tasks in the prior's mean: our design="random".
    # It runs a fixed number of steps (tol=-inf; see tests/core/test_jury_crowdkit.py).
    n = 300
    truth, verdicts = simulate_items(22 + n_gold, n, PI3, CONF4, missing=0.15)
    gold = np.arange(n) < n_gold
    pats, test, lab = to_counts(truth, verdicts, gold, K3)
    _, inv = np.unique(verdicts, axis=0, return_inverse=True)
    ours = categorical_dawid_skene(pats, test, lab, design="random", tol=1e-11)
    assert ours.converged
    true_labels = (
        pd.Series(truth[gold], index=[f"t{i}" for i in np.flatnonzero(gold)]) if n_gold else None
    )
    with warnings.catch_warnings():  # pandas deprecations inside crowd-kit's code
        warnings.simplefilter("ignore")
        ck = DawidSkene(n_iter=ours.n_iter + 10, tol=-np.inf)
        ck.fit(long_format(verdicts), true_labels)
    np.testing.assert_allclose(ours.pi, ck.priors_.reindex(range(K3)).to_numpy(), atol=TOL)
    errors = ck.errors_  # errors_.loc[(worker, observed), true] = P(observed | true)
    ck_conf = np.array([[[errors.loc[(f"w{j}", c), t] for c in range(K3)] for t in range(K3)]
                        for j in range(4)])  # fmt: skip
    assert ours.confusion.min() > 1e-3  # crowd-kit's 1e-10 clip plays no part
    np.testing.assert_allclose(ours.confusion, ck_conf, atol=TOL)
    ck_post = ck.probas_.reindex(index=[f"t{i}" for i in range(n)], columns=range(K3))
    np.testing.assert_allclose(ours.posterior[inv[~gold]], ck_post.to_numpy()[~gold], atol=TOL)


# ----------------------------------------------------------------- likelihood: scipy.stats


def brute_loglik(pats, test, lab, pi, conf, design):
    """Σ over items of log Σ_k π_k Π_j Categorical(v_j; conf[j, k]) (scipy.stats pmfs)."""
    k = len(pi)
    like = np.ones((len(pats), k))
    for p, row in enumerate(pats):
        for t in range(k):
            for j, c in enumerate(row):
                if c >= 0:
                    like[p, t] *= multinomial.pmf(np.eye(k)[c], 1, conf[j, t])
    total = float(test @ np.log(like @ pi))
    total += float((lab * np.log(like.T)).sum())
    if design == "random":
        total += float(lab.sum(axis=1) @ np.log(pi))
    return total


@pytest.mark.parametrize("design", ["stratified", "random"])
def test_log_likelihood_matches_scipy(design):
    pats, test, lab = draw3(seed=4, n=200, m=10, missing=0.2)
    assert (pats < 0).any()  # missing entries are exercised
    pi, conf = np.array([0.3, 0.3, 0.4]), CONF3[[1, 0, 2]]
    ours = categorical_jury_log_likelihood(pats, test, lab, pi, conf, design=design)
    assert ours == pytest.approx(brute_loglik(pats, test, lab, pi, conf, design), abs=1e-12,
                                 rel=1e-12)  # fmt: skip
    ll = categorical_pattern_log_likelihood(pats, conf)
    ref = [[sum(multinomial.logpmf(np.eye(K3)[c], 1, conf[j, t]) for j, c in enumerate(row)
                if c >= 0) for t in range(K3)] for row in pats]  # fmt: skip
    np.testing.assert_allclose(ll, ref, rtol=1e-12, atol=1e-12)


def test_log_likelihood_zero_probability_is_minus_inf_not_nan():
    conf = np.array([[[1.0, 0.0], [0.3, 0.7]]] * 3)
    ll = categorical_pattern_log_likelihood([[1, 1, 1], [0, 0, 0]], conf)
    assert np.isneginf(ll[0, 0]) and np.isfinite(ll[1]).all()
    total = categorical_jury_log_likelihood([[1, 1, 1], [0, 0, 0]], [0, 5], None, [0.5, 0.5],
                                            conf)  # fmt: skip
    assert np.isfinite(total)


# ------------------------------------------------------------- EM optimum: scipy.optimize


def softmax_params(z, k, n_judges):
    """π (K,) and confusion (J, K, K) from unconstrained z (first logit of each row 0)."""
    logits = np.concatenate([[0.0], z[: k - 1]])
    rows = np.concatenate([np.zeros((n_judges * k, 1)), z[k - 1 :].reshape(-1, k - 1)], axis=1)
    return np.exp(log_softmax(logits)), np.exp(log_softmax(rows, axis=1)).reshape(n_judges, k, k)


@pytest.mark.parametrize("design", ["stratified", "random"])
def test_em_optimum_matches_scipy_minimize(design):
    pats, test, lab = draw3(seed=5)
    fit = categorical_dawid_skene(pats, test, lab, design=design, tol=1e-12)

    def negloglik(z):
        pi, conf = softmax_params(z, K3, 3)
        return -brute_loglik_fast(pats, test, lab, pi, conf, design)

    z0 = np.concatenate([np.zeros(K3 - 1), np.tile([-1.0, -1.0], 9)])  # a neutral start
    res = minimize(negloglik, z0, method="BFGS", options={"gtol": 1e-8, "maxiter": 5000})
    pi, conf = softmax_params(res.x, K3, 3)
    np.testing.assert_allclose(fit.pi, pi, atol=1e-4)
    np.testing.assert_allclose(fit.confusion, conf, atol=1e-3)
    assert fit.log_likelihood == pytest.approx(-res.fun, abs=1e-5)


def brute_loglik_fast(pats, test, lab, pi, conf, design):
    """The same likelihood as brute_loglik with products of indexed probabilities (fast)."""
    like = np.ones((len(pats), len(pi)))
    for j in range(pats.shape[1]):
        seen = pats[:, j] >= 0
        like[seen] *= conf[j][:, pats[seen, j]].T
    total = test @ np.log(like @ pi) + (lab * np.log(like.T)).sum()
    return total + (lab.sum(axis=1) @ np.log(pi) if design == "random" else 0.0)


# ------------------------------------------------------------------ Wald: the information


def free_loglik(z, fit_pi, fit_conf, lay, pats, test, lab, design):
    """Log-likelihood as a function of the free log-odds coordinates of _information."""
    pi = fit_pi.copy()
    ref = np.argmax(fit_pi)
    eta = np.log(fit_pi / fit_pi[ref])
    eta[lay.pi_free] = z[: lay.pi_free.size]
    pi = np.exp(eta) / np.exp(eta).sum()
    conf = fit_conf.copy()
    for j, t, free, start in lay.cells:
        row = np.log(fit_conf[j, t] / fit_conf[j, t].max())
        row[free] = z[start : start + free.size]
        conf[j, t] = np.exp(row) / np.exp(row).sum()
    return categorical_jury_log_likelihood(pats, test, lab, pi, conf, design=design)


@pytest.mark.parametrize("design", ["stratified", "random"])
@pytest.mark.parametrize("at_optimum", [True, False])
def test_observed_information_matches_numerical_hessian(design, at_optimum):
    pats, test, lab = draw3(seed=6, n=300, m=20)
    fit = categorical_dawid_skene(pats, test, lab, design=design, tol=1e-13)
    pi, conf = fit.pi, fit.confusion
    if not at_optimum:  # Louis' identity is exact anywhere, not only at the MLE
        pi, conf = 0.8 * pi + 0.2 / K3, 0.8 * conf + 0.2 / K3
    info, lay = _information(pats, test.astype(float), lab.astype(float), pi, conf,
                             random=design == "random", smoothing=0.0)  # fmt: skip
    if not at_optimum:  # every coordinate free (at the optimum a zero count fixes a cell)
        assert lay.size == (K3 - 1) + 3 * K3 * (K3 - 1)
    z0 = np.concatenate(
        [np.log(pi / pi.max())[lay.pi_free]]
        + [np.log(conf[j, t, f] / conf[j, t].max()) for j, t, f, _ in lay.cells]
    )
    step, d = 1e-4, lay.size
    hess = np.empty((d, d))
    eye = np.eye(d) * step
    for i in range(d):
        for j in range(i, d):
            f = [free_loglik(z0 + a * eye[i] + b * eye[j], pi, conf, lay, pats, test, lab, design)
                 for a, b in ((1, 1), (1, -1), (-1, 1), (-1, -1))]  # fmt: skip
            hess[i, j] = hess[j, i] = (f[0] - f[1] - f[2] + f[3]) / (4 * step**2)
    # Central differences of a log-likelihood of size ~1e3: error ~ 1e-13·1e3/1e-8 ≈ 1e-2.
    np.testing.assert_allclose(info, -hess, rtol=1e-5, atol=1e-4 * np.abs(hess).max())


def test_wald_and_bootstrap_agree_on_a_large_sample():
    pats, test, lab = draw3(seed=7, n=4000, m=200, missing=0.0)
    wald = categorical_dawid_skene_interval(pats, test, lab, scores=[1, 0.5, 0])
    boot = categorical_dawid_skene_interval(
        pats, test, lab, scores=[1, 0.5, 0], method="bootstrap", n_resamples=1000, random_seed=1
    )
    # Both estimate the same sampling spread; 1000 resamples put ~5% MC error on the width.
    np.testing.assert_allclose(wald.upper - wald.lower, boot.upper - boot.lower, rtol=0.15)
    assert wald.score_upper - wald.score_lower == pytest.approx(
        boot.score_upper - boot.score_lower, rel=0.15
    )
    assert (wald.lower < wald.estimate).all() and (wald.estimate < wald.upper).all()
    assert wald.score_lower < wald.score < wald.score_upper
    assert wald.score == pytest.approx(wald.estimate @ [1, 0.5, 0], abs=1e-12)


PATS_ALL = np.array([[a, b, c] for a in range(3) for b in range(3) for c in range(3)])


def test_boundary_share_gets_the_exact_binomial_limit():
    # No item is truly a tie and every judge is perfect: π̂_tie = 0.
    pats = np.array([[0, 0, 0], [2, 2, 2]])
    test, lab = np.array([30, 70]), np.array([[5, 0], [0, 0], [0, 5]])
    res = categorical_dawid_skene_interval(pats, test, lab)
    assert res.estimate[1] == 0.0
    assert res.lower[1] == 0.0 and res.upper[1] == pytest.approx(1 - 0.025 ** (1 / 100))
    assert res.lower[0] < 0.3 < res.upper[0]


# -------------------------------------------------------------------- plurality vote


def test_plurality_estimates_its_own_expectation_not_pi():
    # Exact P(plurality says k) = Σ_p P(p) V_pk under CONF_BIAS, π = PI3: (0.501, 0.126, 0.373)
    # against π = (0.45, 0.15, 0.40). On 20 000 items the Wilson interval (half-width <= 0.007)
    # holds the expectation and misses π; Dawid–Skene recovers π (4 SE + 0.005 for its bias).
    pk = np.stack([np.prod([CONF_BIAS[j][t][PATS_ALL[:, j]] for j in range(3)], axis=0)
                   for t in range(K3)])  # fmt: skip
    expected = (PI3 @ pk) @ plurality_verdicts(PATS_ALL, K3)
    np.testing.assert_allclose(expected, [0.5007125, 0.1260875, 0.3732], atol=1e-7)
    rng = np.random.default_rng(9)
    test = rng.multinomial(20_000, PI3 @ pk)
    lab = np.stack([rng.multinomial(200, pk[t]) for t in range(K3)])
    naive = plurality_vote(PATS_ALL, test, K3)
    assert np.all((naive.lower <= expected) & (expected <= naive.upper))
    assert np.all((PI3 < naive.lower) | (naive.upper < PI3))
    ds = categorical_dawid_skene(PATS_ALL, test, lab)
    assert np.all(np.abs(ds.pi - PI3) <= 4 * np.sqrt(PI3 * (1 - PI3) / 20_000) + 0.005), ds.pi


def test_plurality_verdicts_split_ties():
    out = plurality_verdicts([[0, 1, 2], [1, 1, -1], [2, 0, -1]], 3)
    np.testing.assert_allclose(out, [[1 / 3] * 3, [0, 1, 0], [0.5, 0, 0.5]])
    with pytest.raises(ValueError, match="ties"):
        plurality_verdicts([[0, 1, 2]], 3, ties="first")


def test_wald_is_built_around_the_fit_with_one_pseudo_item_per_row():
    pats, test, lab = draw3(seed=8, n=300, m=20, missing=0.1)
    default = categorical_dawid_skene_interval(pats, test, lab, scores=[1, 0.5, 0])
    smoothed = categorical_dawid_skene_interval(
        pats, test, lab, scores=[1, 0.5, 0], smoothing=1 / 3, interval_smoothing=1 / 3
    )
    mle = categorical_dawid_skene(pats, test, lab)
    assert not np.allclose(smoothed.estimate, mle.pi, atol=1e-4)  # the smoothing matters here
    np.testing.assert_allclose(default.estimate, mle.pi, atol=TOL)
    np.testing.assert_allclose(default.lower, smoothed.lower, atol=TOL)
    np.testing.assert_allclose(default.upper, smoothed.upper, atol=TOL)
    assert (default.score_lower, default.score_upper) == pytest.approx(
        (smoothed.score_lower, smoothed.score_upper), abs=TOL
    )
    assert (default.lower < default.estimate).all() and (default.estimate < default.upper).all()


# ------------------------------------------------------------------------ bad input


def test_bad_input_is_refused_with_a_message():
    pats, test, lab = PATS_ALL, np.ones(27), np.ones((3, 27))
    with pytest.raises(ValueError, match=r"0\.\.2 \(K = 3\).*\[3\]"):
        categorical_dawid_skene(np.where(PATS_ALL == 2, 3, PATS_ALL)[:8], test[:8], lab[:, :8])
    with pytest.raises(ValueError, match=r"labelled must have shape \(3, 27\)"):
        categorical_dawid_skene(pats, test, np.ones((3, 26)), n_categories=3)
    with pytest.raises(ValueError, match="labelled must have shape"):
        categorical_dawid_skene(pats, test, np.ones(27))
    with pytest.raises(ValueError, match="non-negative"):
        categorical_dawid_skene(pats, -test, lab)
    with pytest.raises(ValueError, match="non-negative"):
        categorical_dawid_skene(pats, test, -lab)
    with pytest.raises(ValueError, match="not identified"):
        categorical_dawid_skene(PATS_ALL[::3, :2], np.ones(9), None, n_categories=3)
    with pytest.raises(ValueError, match="n_categories"):
        categorical_dawid_skene(pats, test, None)
    with pytest.raises(ValueError, match="graded no item"):
        categorical_dawid_skene([[0, -1], [1, -1]], [3, 4], np.ones((2, 2)))
    with pytest.raises(ValueError, match="distinct rows"):
        categorical_dawid_skene([[0, 1], [0, 1]], [3, 4], np.ones((2, 2)))
    with pytest.raises(ValueError, match="scores"):
        categorical_dawid_skene_interval(pats, test, lab, scores=[1, 0])
    with pytest.raises(ValueError, match="method"):
        categorical_dawid_skene_interval(pats, test, lab, method="profile")
    with pytest.raises(ValueError, match="n_resamples"):
        categorical_dawid_skene_interval(pats, test, lab, method="bootstrap", n_resamples=10)
    with pytest.raises(ValueError, match=r"interval_smoothing must be None.*-1"):
        categorical_dawid_skene_interval(pats, test, lab, interval_smoothing=-1)
    with pytest.raises(ValueError, match="pi must"):
        categorical_jury_log_likelihood(pats, test, lab, [0.5, 0.6, 0.1], CONF3)
    with pytest.raises(ValueError, match="confusion must"):
        categorical_jury_log_likelihood(pats, test, lab, PI3, CONF3[:2])


def test_interval_reuses_a_given_fit_and_refuses_another():
    pats = [[0, 0, 0], [1, 1, 1], [2, 2, 2], [0, 0, 1], [1, 2, 1], [2, 2, 0], [0, 1, 0]]
    test = [120, 60, 150, 30, 20, 25, 15]
    fit = categorical_dawid_skene(pats, test, n_categories=3)
    for method in ("wald", "bootstrap"):
        kw = {"method": method, "random_seed": 1, "n_resamples": 1000, "n_categories": 3}
        ref = categorical_dawid_skene_interval(pats, test, **kw)
        got = categorical_dawid_skene_interval(pats, test, fit=fit, **kw)
        for a, b in zip(got, ref, strict=True):
            np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="fit must be the CategoricalDawidSkeneResult"):
        categorical_dawid_skene_interval(pats[:6], test[:6], n_categories=3, fit=fit)
