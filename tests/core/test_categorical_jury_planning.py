"""Planning the K-class Dawid–Skene π̂: expected information, planned widths (core).

Checked: the unit information at K = 2 against the binary one (the coordinates differ by
signs and order only) and the plan against ``core.jury.dawid_skene_plan`` (1e-9); the plan of
one judge against the delta-method variance of the matrix-correction estimator (the model is
then just identified, so the MLE is that estimator; 1e-9); the observed information against
minus a numerical Hessian of a log-likelihood written with scipy.stats.multinomial (1e-4
relative); the expected information against the Monte Carlo mean of the observed information
(4 MC-SE per entry, both designs); the planned width against the mean width of the Wald
interval of simulated data sets at two budgets (3 MC-SE).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import multinomial

from bayesjudge.core.categorical_jury import (
    MAX_PLANNED_PATTERNS,
    categorical_dawid_skene_information,
    categorical_dawid_skene_interval,
    categorical_dawid_skene_plan,
    categorical_dawid_skene_unit_information,
)
from bayesjudge.core.jury import dawid_skene_plan, dawid_skene_unit_information
from bayesjudge.simulate import simulate_categorical_jury_arrays

# The slow coverage test's judges (tests/core/test_categorical_jury_slow.py): A / tie / B,
# leaning towards A.
CONF = np.array([
    [[0.85, 0.10, 0.05], [0.30, 0.55, 0.15], [0.15, 0.10, 0.75]],
    [[0.80, 0.15, 0.05], [0.25, 0.60, 0.15], [0.10, 0.15, 0.75]],
    [[0.90, 0.05, 0.05], [0.35, 0.45, 0.20], [0.20, 0.05, 0.75]],
])  # fmt: skip
PI = np.array([0.45, 0.15, 0.40])
SCORES = np.array([1.0, 0.5, 0.0])
#: CONF with its 0.05 entries set to 0 (rows renormalised): a boundary the plan refuses.
ZEROED = np.where(CONF == 0.05, 0.0, CONF) / np.where(CONF == 0.05, 0.0, CONF).sum(-1)[..., None]


def binary_confusion(q0, q1):
    return np.stack([[[a, 1 - a], [1 - b, b]] for a, b in zip(q0, q1, strict=True)])


# ------------------------------------------------------------------------------ K = 2


def test_unit_information_at_k2_is_the_binary_one_in_other_coordinates():
    """Binary order [logit θ, logit q0_j…, logit q1_j…]; K-class order [π coordinate, then
    (judge 0, truth 0), (judge 0, truth 1), …], each the log-odds against the row's larger
    entry: with θ < 0.5 and every q > 0.5 that is +logit θ, -logit q0_j and -logit q1_j."""
    theta, q0, q1 = 0.37, np.array([0.8, 0.7, 0.9]), np.array([0.85, 0.75, 0.65])
    for design in ("stratified", "random"):
        ours = categorical_dawid_skene_unit_information(
            [1 - theta, theta], binary_confusion(q0, q1), design=design
        )
        ref = dawid_skene_unit_information(theta, q0, q1, design=design)
        order = [0, 1, 4, 2, 5, 3, 6]  # binary index of each K-class coordinate
        sign = np.array([1, -1, -1, -1, -1, -1, -1])
        ref = ref[:, order][:, :, order] * sign[:, None] * sign[None, :]
        # the labelled items: K-class truth 0, 1 = binary truth 0, 1
        np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("design", ["stratified", "random"])
def test_plan_at_k2_equals_the_binary_plan(design):
    theta, q0, q1 = 0.62, np.array([0.8, 0.7, 0.9]), np.array([0.85, 0.75, 0.65])
    m0, m1 = np.array([[5.0, 10.0], [20.0, 0.0]]), np.array([[7.0, 30.0], [0.0, 0.0]])
    ref = dawid_skene_plan(theta, q0, q1, 400, m0, m1, design=design)
    ours = categorical_dawid_skene_plan([1 - theta, theta], binary_confusion(q0, q1), 400,
                                        np.stack([m0, m1], axis=-1), design=design,
                                        scores=[0, 1])  # fmt: skip
    for name in ("sd", "width", "lower", "upper"):
        np.testing.assert_allclose(getattr(ours, name)[..., 1], getattr(ref, name), atol=1e-9)
    # θ_0 = 1 - θ has the same width and sd; the score with values (0, 1) is θ itself
    np.testing.assert_allclose(ours.width[..., 0], ref.width, atol=1e-9)
    np.testing.assert_allclose(ours.score_width, ref.width, atol=1e-9)
    np.testing.assert_allclose(ours.score_sd, ref.sd, atol=1e-9)


def test_two_judges_without_labels_are_not_identified():
    conf = binary_confusion([0.8, 0.7], [0.85, 0.75])
    plan = categorical_dawid_skene_plan([0.4, 0.6], conf, 1000, [0, 0])
    assert np.isinf(plan.sd).all() and (plan.width == 1).all()
    assert (plan.lower == 0).all() and (plan.upper == 1).all()
    ref = dawid_skene_plan(0.6, [0.8, 0.7], [0.85, 0.75], 1000, 0, 0)
    assert np.isinf(ref.sd) and ref.width == 1


# ------------------------------------------------------------- one judge: a closed form


def matrix_correction_variance(pi, conf, n, m):
    """Delta-method covariance of π̂ = (Cᵀ)⁻¹ p̂ with p̂ from n test items and each row C_k
    of the confusion matrix from m_k labelled items of truth k (independent multinomials)."""
    p = conf.T @ pi
    inv = np.linalg.inv(conf.T)
    var = (np.diag(p) - np.outer(p, p)) / n
    for k in range(pi.size):
        var += pi[k] ** 2 * (np.diag(conf[k]) - np.outer(conf[k], conf[k])) / m[k]
    return inv @ var @ inv.T


@pytest.mark.parametrize("judge", [0, 1, 2])
def test_one_judge_plan_is_the_delta_method_of_the_matrix_correction(judge):
    """One judge is just identified (as many free probabilities as parameters), so the
    maximum-likelihood π̂ is the matrix-correction estimator and their variances agree."""
    n, m = 800, np.array([30.0, 50.0, 40.0])
    ref = matrix_correction_variance(PI, CONF[judge], n, m)
    plan = categorical_dawid_skene_plan(PI, CONF[judge : judge + 1], n, m, scores=SCORES)
    np.testing.assert_allclose(plan.sd, np.sqrt(np.diag(ref)), rtol=1e-9)
    np.testing.assert_allclose(plan.score_sd, np.sqrt(SCORES @ ref @ SCORES), rtol=1e-9)


# --------------------------------------------------- the information: scipy.stats Hessian


def scipy_log_likelihood(eta, patterns, test, lab, layout):
    """Log-likelihood at log-odds ``eta`` (coordinates as the module's), by scipy.stats.

    ``layout`` = (reference category of π, reference verdict of every confusion row).
    """
    ref_pi, ref_rows = layout
    k, n_judges = CONF.shape[-1], CONF.shape[0]
    logits = np.zeros(k)
    logits[np.arange(k) != ref_pi] = eta[: k - 1]
    pi = np.exp(logits) / np.exp(logits).sum()
    conf = np.zeros((n_judges, k, k))
    pos = k - 1
    for j in range(n_judges):
        for t in range(k):
            row = np.zeros(k)
            row[np.arange(k) != ref_rows[j, t]] = eta[pos : pos + k - 1]
            pos += k - 1
            conf[j, t] = np.exp(row) / np.exp(row).sum()
    # P(pattern | truth) as a product of one-trial multinomial pmfs, one per judge
    prob = np.ones((len(patterns), k))
    for t in range(k):
        for j in range(n_judges):
            prob[:, t] *= multinomial.pmf(np.eye(k)[patterns[:, j]], 1, conf[j, t])
    total = multinomial.logpmf(test, test.sum(), prob @ pi)
    for t in range(k):
        if lab[t].sum():
            total += multinomial.logpmf(lab[t], lab[t].sum(), prob[:, t])
    return total


def test_observed_information_is_minus_the_hessian_of_the_scipy_likelihood():
    d = simulate_categorical_jury_arrays(PI, CONF, n=300, m=[10, 10, 10], random_seed=3)
    pats, test, lab = d["patterns"], d["test"], d["labelled"]
    info = categorical_dawid_skene_information(pats, test, lab, PI, CONF)
    # the module's coordinates: every entry free, references the largest of each row
    layout = (int(np.argmax(PI)), np.argmax(CONF, axis=-1))
    eta0 = [np.log(np.delete(PI, layout[0]) / PI[layout[0]])]
    for j in range(3):
        for t in range(3):
            r = layout[1][j, t]
            eta0.append(np.log(np.delete(CONF[j, t], r) / CONF[j, t, r]))
    eta0 = np.concatenate(eta0)

    def f(e):
        return scipy_log_likelihood(e, pats, test, lab, layout)

    h, size = 1e-4, eta0.size
    hess = np.zeros((size, size))
    for a in range(size):
        for b in range(a, size):
            ea, eb = np.eye(size)[a] * h, np.eye(size)[b] * h
            val = (f(eta0 + ea + eb) - f(eta0 + ea - eb) - f(eta0 - ea + eb)
                   + f(eta0 - ea - eb)) / (4 * h * h)  # fmt: skip
            hess[a, b] = hess[b, a] = val
    np.testing.assert_allclose(info, -hess, rtol=1e-4, atol=1e-3)


# ------------------------------------------- expected = Monte Carlo mean of the observed


@pytest.mark.parametrize("design", ["stratified", "random"])
def test_expected_information_is_the_mean_observed_information(design):
    """R = 400 data sets drawn with ``simulate_categorical_jury_arrays(PI, CONF, n=200,
    m=m, design=design, size=400, random_seed=11)``; each entry of the mean observed
    information (at the true parameters) within 4 MC-SE of the expected one."""
    n, reps = 200, 400
    m = [10, 20, 15] if design == "stratified" else 45
    d = simulate_categorical_jury_arrays(PI, CONF, n=n, m=m, design=design, size=reps,
                                         random_seed=11)  # fmt: skip
    obs = np.stack(
        [
            categorical_dawid_skene_information(
                d["patterns"], d["test"][r], d["labelled"][r], PI, CONF, design=design
            )
            for r in range(reps)
        ]
    )
    unit = categorical_dawid_skene_unit_information(PI, CONF, design=design)
    weights = np.asarray(m, float) if design == "stratified" else m * PI
    expected = n * unit[0] + np.einsum("k,kde->de", weights, unit[1:])
    mean, se = obs.mean(axis=0), obs.std(axis=0, ddof=1) / np.sqrt(reps)
    z = np.abs(mean - expected) / np.where(se > 0, se, np.inf)
    assert np.all(np.abs(mean - expected)[se == 0] < 1e-9)
    assert z.max() <= 4.0, z.max()
    # and the check can fail: a wrong n is far outside
    wrong = (n + 20) * unit[0] + np.einsum("k,kde->de", weights, unit[1:])
    assert (np.abs(mean - wrong) / np.where(se > 0, se, np.inf)).max() > 4.0


# ------------------------------------------------------ planned width = simulated width


@pytest.mark.parametrize("m", [[60, 60, 60], [20, 60, 120]])
def test_planned_width_is_the_mean_wald_width(m):
    """R = 300 data sets, ``simulate_categorical_jury_arrays(PI, CONF, n=500, m=m,
    size=300, random_seed=5)``; the Wald interval at the maximum-likelihood estimate
    (interval_smoothing=0, what the plan's asymptotics describe). Mean width of every θ_k and
    of the score within 3 MC-SE of the plan. Measured (2026-11-28) for m = (60, 60, 60): plan
    0.1225, 0.1219, 0.1142; score 0.1021; simulated 0.1231, 0.1227, 0.1141; 0.1021 (MC-SE
    0.0004, 0.0008, 0.0003; 0.0002). The default interval (1/K pseudo-items per cell) was
    0.2-0.7 % narrower there, 3-6 % at 10 labels per category."""
    reps = 300
    plan = categorical_dawid_skene_plan(PI, CONF, 500, m, scores=SCORES)
    d = simulate_categorical_jury_arrays(PI, CONF, n=500, m=m, size=reps, random_seed=5)
    widths = np.empty((reps, 4))
    for r in range(reps):
        seen = (d["test"][r] + d["labelled"][r].sum(axis=0)) > 0
        res = categorical_dawid_skene_interval(
            d["patterns"][seen], d["test"][r][seen], d["labelled"][r][:, seen],
            scores=SCORES, interval_smoothing=0.0,
        )  # fmt: skip
        widths[r] = [*(res.upper - res.lower), res.score_upper - res.score_lower]
    mcse = widths.std(axis=0, ddof=1) / np.sqrt(reps)
    planned = np.append(plan.width, plan.score_width)
    assert np.all(np.abs(widths.mean(axis=0) - planned) <= 3 * mcse), (
        widths.mean(axis=0), planned, mcse)  # fmt: skip


def test_more_labels_and_items_narrow_the_plan():
    plan = categorical_dawid_skene_plan(PI, CONF, 500, [[10, 10, 10], [40, 40, 40]])
    assert (plan.width[1] < plan.width[0]).all()
    more = categorical_dawid_skene_plan(PI, CONF, 2000, [10, 10, 10])
    assert (more.width < plan.width[0]).all()
    assert np.all(plan.lower < PI) and np.all(plan.upper > PI)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"pi": [0.5, 0.5, 0.0]}, "strictly between 0 and 1"),
        ({"confusion": ZEROED}, "confusion hold 0 or 1"),
        ({"m": [10, 10]}, r"m must have shape \(\.\.\., 3\)"),
        ({"m": [10, -1, 10]}, "m must hold finite, non-negative"),
        ({"n": -5}, "n must be one finite"),
        ({"n": [100, 200]}, "n must be one finite"),
        ({"pi": [0.5, 0.6, -0.1]}, "pi must hold shares"),
        ({"scores": [1, 0]}, "scores must be 3 finite numbers"),
    ],
)
def test_bad_input(kwargs, match):
    args = {"pi": PI, "confusion": CONF, "n": 500, "m": [10, 10, 10]} | kwargs
    with pytest.raises(ValueError, match=match):
        categorical_dawid_skene_plan(**args)


def test_too_many_patterns_are_refused():
    conf = np.broadcast_to(CONF[0], (11, 3, 3))  # 3**11 > 2**16
    assert 3**11 > MAX_PLANNED_PATTERNS
    with pytest.raises(ValueError, match=r"K\*\*J = 3\*\*11"):
        categorical_dawid_skene_unit_information(PI, conf)


def test_information_needs_interior_parameters():
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        categorical_dawid_skene_information([[0, 0, 0]], [5], None, [1.0, 0.0, 0.0], CONF)
