"""The comparison study (Fiedler Fig. 1): layout, seeding, saving, and the paper's bias results.

Reference values are computed here independently of the study code:

* naive bias: ``p_B − p_A − δ`` with ``p = θ q1 + (1 − θ)(1 − q0)`` (exact at any n);
* shared-calibration RG: Fiedler App. C, ``bias(θ̂*_A) = (θ_A ΔJ − Δq0) / J_B`` with
  ``ΔJ = J_A − J_B``, ``Δq0 = q0_A − q0_B`` (written out below in the paper's form), and the
  exact finite-m expectation by enumerating the calibration counts (``_calibration_moments``);
* per-system RG: the exact finite-m expectation by the same enumeration.

Tolerances are multiples of the Monte Carlo standard error the study reports.
"""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import numpy as np
import pytest
import xarray as xr
from scipy.stats import binom

from bayesjudge.studies import STUDIES, comparison, run_study
from bayesjudge.studies.comparison import (
    naive_bias,
    shared_rg_bias,
    simulate_comparison,
)

CLOSED = ["naive", "rg_shared", "rg_separate", "ppi"]
THETA_A, THETA_B = 0.70, 0.75  # the study's defaults


def q_of(j):
    return (1 + j) / 2


def p_of(theta, q0, q1):
    return theta * q1 + (1 - theta) * (1 - q0)


def appendix_c_bias(theta_a, q0_a, q1_a, q0_b, q1_b):
    """Fiedler App. C, bias of θ̂*_RG,A (A's test data, B's calibration), as printed."""
    j_a, j_b = q0_a + q1_a - 1, q0_b + q1_b - 1
    delta_j, delta_q0 = j_a - j_b, q0_a - q0_b
    return (theta_a * delta_j - delta_q0) / j_b


def _calibration_moments(theta, q, m, tail=1e-16):
    """Exact moments of one random calibration set of m items (m1 ~ Bin(m, θ), q0 = q1 = q).

    Returns (E[1/Ĵ | defined], E[(q̂0 − 1)/Ĵ | defined], P(undefined)); undefined means
    Ĵ == 0 exactly (which includes m0 = 0 or m1 = 0), as in the study. Counts whose
    probability is below ``tail`` in either binomial tail are skipped (|1/Ĵ| ≤ m0·m1, so
    they change the moments by less than m²·tail).
    """
    e_inv = e_num = p_undefined = 0.0
    lo, hi = (int(v) for v in binom.ppf([tail, 1 - tail], m, theta))
    for m1 in range(max(lo - 1, 0), min(hi + 1, m) + 1):
        weight = binom.pmf(m1, m, theta)
        m0 = m - m1
        tn = np.arange(*_support(m0, q, tail))[:, None]
        tp = np.arange(*_support(m1, q, tail))[None, :]
        prob = weight * binom.pmf(tn, m0, q) * binom.pmf(tp, m1, q)
        den = tn * m1 + tp * m0 - m0 * m1  # m0·m1·Ĵ, exact integers
        zero = den == 0
        p_undefined += prob[zero].sum()
        if m0 == 0 or m1 == 0:
            continue
        j = np.where(zero, 1, den) / (m0 * m1)
        e_inv += np.where(zero, 0.0, prob / j).sum()
        e_num += np.where(zero, 0.0, prob * (tn / m0 - 1) / j).sum()
    defined = 1 - p_undefined
    return e_inv / defined, e_num / defined, p_undefined


def _support(size, q, tail):
    lo, hi = binom.ppf([tail, 1 - tail], size, q)
    return max(int(lo) - 1, 0), min(int(hi) + 1, size) + 1


def exact_bias_separate(theta_a, theta_b, j_a, j_b, n_cal):
    """Exact bias of the unclipped per-system RG difference (given both are defined)."""
    out, worst = 0.0, 0.0
    for sign, theta, j in ((-1, theta_a, j_a), (1, theta_b, j_b)):
        q = q_of(j)
        e_inv, e_num, p_undef = _calibration_moments(theta, q, n_cal)
        out += sign * (p_of(theta, q, q) * e_inv + e_num)
        worst = max(worst, p_undef)
    return out - (theta_b - theta_a), worst


def exact_bias_shared_b(theta_a, theta_b, j_a, j_b, n_cal, tail=1e-16):
    """Exact bias of (p̂_B − p̂_A) / Ĵ_B with B's random calibration set (given defined)."""
    qa, qb = q_of(j_a), q_of(j_b)
    e_inv, _, p_undef = _calibration_moments(theta_b, qb, n_cal, tail)
    return (p_of(theta_b, qb, qb) - p_of(theta_a, qa, qa)) * e_inv - (theta_b - theta_a), p_undef


# --------------------------------------------------------------------------- closed forms


def test_shared_rg_bias_is_appendix_c():
    rng = np.random.default_rng(3)
    theta_a, theta_b = rng.uniform(0.05, 0.95, (2, 50))
    q0_a, q1_a, q0_b, q1_b = rng.uniform(0.55, 0.99, (4, 50))
    # shared_from="B": Δθ̂ = θ̂_B − θ̂*_A, θ̂_B consistent, so the bias is −bias(θ̂*_A).
    np.testing.assert_allclose(
        shared_rg_bias(theta_a, theta_b, q0_a, q1_a, q0_b, q1_b, "B"),
        -appendix_c_bias(theta_a, q0_a, q1_a, q0_b, q1_b),
        rtol=1e-12,
        atol=1e-14,
    )
    # shared_from="A": App. C with the roles swapped (B's data, A's calibration).
    np.testing.assert_allclose(
        shared_rg_bias(theta_a, theta_b, q0_a, q1_a, q0_b, q1_b, "A"),
        appendix_c_bias(theta_b, q0_b, q1_b, q0_a, q1_a),
        rtol=1e-12,
        atol=1e-14,
    )
    # Sec. 5 judge (q = (1 + J)/2): ΔJ (θ_A − 1/2) / J_B, zero at θ_A = 1/2 or ΔJ = 0.
    j_a, dj = 0.3, np.array([0.0, 0.1, 0.3])
    got = shared_rg_bias(0.7, 0.75, q_of(j_a), q_of(j_a), q_of(j_a + dj), q_of(j_a + dj))
    np.testing.assert_allclose(got, dj * 0.2 / (j_a + dj), atol=1e-15)
    assert shared_rg_bias(0.5, 0.55, 0.6, 0.6, 0.7, 0.7) == pytest.approx(0.0, abs=1e-15)


def test_shared_rg_bias_pooled_matches_large_pooled_calibration():
    # Pooled: merged calibration counts; their large-sample q's are count-weighted averages.
    theta_a, theta_b, qa, qb, m = 0.7, 0.75, 0.65, 0.8, 10**7
    tn = (1 - theta_a) * m * qa + (1 - theta_b) * m * qb
    m0 = (1 - theta_a) * m + (1 - theta_b) * m
    tp = theta_a * m * qa + theta_b * m * qb
    m1 = (theta_a + theta_b) * m
    j_c = tn / m0 + tp / m1 - 1
    expected = (p_of(theta_b, qb, qb) - p_of(theta_a, qa, qa)) / j_c - 0.05
    got = shared_rg_bias(theta_a, theta_b, qa, qa, qb, qb, "pooled")
    assert got == pytest.approx(expected, rel=1e-12)


def test_naive_bias_closed_form():
    # q = (1 + J)/2 gives p = 1/2 + J (θ − 1/2), so the bias is J_B(θ_B − ½) − J_A(θ_A − ½) − δ.
    j_a, j_b = 0.3, 0.6
    expected = j_b * (0.75 - 0.5) - j_a * (0.7 - 0.5) - 0.05
    assert naive_bias(0.7, 0.75, 0.65, 0.65, 0.8, 0.8) == pytest.approx(expected, abs=1e-15)
    assert naive_bias(0.7, 0.75, 1.0, 1.0, 1.0, 1.0) == 0.0  # perfect judge


def test_simulate_comparison_tables():
    data = simulate_comparison(0.7, 0.75, 0.65, 0.8, n=1000, m=200, reps=4000, random_seed=5)
    k_a, k_b = data.k.sel(system="A").values, data.k.sel(system="B").values
    n11 = data.n11.values
    assert (n11 <= np.minimum(k_a, k_b)).all() and (1000 - k_a - k_b + n11 >= 0).all()
    # Independent verdicts paired by item: E[n11 | k_A, k_B] = k_A k_B / n.
    resid = n11 - k_a * k_b / 1000
    assert abs(resid.mean()) < 4 * resid.std(ddof=1) / np.sqrt(resid.size)
    assert ((data.m0 + data.m1) == 200).all()
    # m1 ~ Bin(200, θ): mean 140 for A (θ = 0.7); k_B ~ Bin(1000, p_B).
    m1_a = data.m1.sel(system="A").values
    assert abs(m1_a.mean() - 140) < 4 * np.sqrt(200 * 0.7 * 0.3 / m1_a.size)
    p_b = p_of(0.75, 0.8, 0.8)
    assert abs(k_b.mean() - 1000 * p_b) < 4 * np.sqrt(1000 * p_b * (1 - p_b) / k_b.size)


# --------------------------------------------------------------------------- the run


SMALL = dict(
    reps=30,
    j_grid=[0.3, 0.6],
    delta_j_grid=[0.0, 0.2],
    estimators=CLOSED,
    n_resamples=200,
    random_seed=11,
)


@pytest.fixture(scope="module")
def small():
    return comparison.run(**SMALL)


def test_layout(small):
    table = small.table
    assert small.name == "comparison" and STUDIES["comparison"] == comparison.__name__
    assert table["bias"].dims == ("design", "estimator")
    assert table["estimator"].values.tolist() == CLOSED
    assert table["sweep"].values.tolist() == ["j", "j", "delta_j", "delta_j"]
    np.testing.assert_allclose(table["j_a"], [0.3, 0.6, 0.3, 0.3])
    np.testing.assert_allclose(table["delta_j"], [0.05, 0.05, 0.0, 0.2])
    np.testing.assert_allclose(table["j_b"], table["j_a"] + table["delta_j"])
    np.testing.assert_allclose(table["q_b"], (1 + table["j_b"]) / 2)
    for name in ("bias", "coverage", "length", "bias_unclipped"):
        assert f"{name}_mcse" in table
    assert (table["reps_used"] == 30).all()
    cov = table["coverage"].values
    assert ((cov >= 0) & (cov <= 1)).all()
    np.testing.assert_allclose(table["coverage_mcse"], np.sqrt(cov * (1 - cov) / 30))
    assert (table["length"] > 0).all()
    # bias_unclipped only for the RG estimators; Bayes diagnostics absent without Bayes.
    rg = table["bias_unclipped"].sel(estimator=["rg_shared", "rg_separate"])
    assert rg.notnull().all() and table["bias_unclipped"].sel(estimator="ppi").isnull().all()
    assert table["warning_share"].isnull().all()
    settings = small.settings
    assert settings["reps"] == 30 and settings["random_seed"] == 11
    assert settings["theta_a"] == THETA_A and settings["theta_b"] == pytest.approx(THETA_B)
    assert settings["estimand"] == "theta_B - theta_A"
    assert settings["bayes_reps"] == 0


def test_reproducible_and_points_independent_of_sweep(small):
    again = comparison.run(**SMALL)
    xr.testing.assert_identical(small.table, again.table)
    other = comparison.run(**{**SMALL, "random_seed": 12})
    assert not np.allclose(other.table["bias"], small.table["bias"])
    # A point's numbers do not depend on which sweep ran (its own stream).
    only = comparison.run(**{**SMALL, "sweep": "delta_j"})
    both = small.table.isel(design=[2, 3])
    for name in ("bias", "coverage", "length"):
        np.testing.assert_array_equal(only.table[name].values, both[name].values)
    # ... nor on which estimators ran.
    ppi_only = comparison.run(**{**SMALL, "estimators": ["ppi"]})
    np.testing.assert_array_equal(
        ppi_only.table["bias"].sel(estimator="ppi"), small.table["bias"].sel(estimator="ppi")
    )


def test_save(small, tmp_path):
    paths = small.save(tmp_path)
    assert sorted(paths) == ["csv", "json", "nc", "png"]
    assert all(p.exists() and p.stat().st_size > 0 for p in paths.values())
    back = xr.load_dataset(paths["nc"], engine="h5netcdf")
    np.testing.assert_array_equal(back["bias"].values, small.table["bias"].values)
    assert json.loads(paths["json"].read_text())["study"] == "comparison"
    frame = small.to_frame()
    assert len(frame) == 4 * len(CLOSED) and {"sweep", "j_a", "delta_j"} <= set(frame)


def test_plot_one_sweep():
    res = run_study(
        "comparison", reps=10, sweep="j", j_grid=[0.5], estimators=["naive"], rg_interval="delta"
    )
    fig = res.plot()
    try:
        assert len(fig.axes) == 4
        texts = [t.get_text() for t in fig.axes[1].texts]
        assert "sweep 'delta_j' not run" in texts
    finally:
        plt.close(fig)


@pytest.mark.parametrize(
    ("option", "value", "match"),
    [
        ("sweep", "theta", "sweep must be"),
        ("estimators", ["naive", "exact"], "estimators must be"),
        ("estimators", [], "estimators must be"),
        ("shared_from", "C", "shared_from"),
        ("rg_interval", "wald", "rg_interval"),
        ("theta_a", 0.98, "theta_a"),
        ("j_grid", [0.0], "J_A"),
        ("delta_j_grid", [0.8], "J_A"),
        ("reps", 1, "reps must be"),
    ],
)
def test_invalid_options(option, value, match):
    with pytest.raises(ValueError, match=match):
        comparison.run(**{"reps": 5, "estimators": ["naive"], option: value})


# slow tier: kept out of `make test` (15-minute budget), run by `make test-slow` in CI
@pytest.mark.slow
def test_bayes_path_small():
    # Three hierarchical fits at one point; δ = 0.5 makes a wrong sign obvious (bias ≈ −1).
    res = comparison.run(
        reps=3,
        bayes_reps=3,
        sweep="j",
        j_grid=[0.7],
        estimators=["rg_separate", "bayes"],
        theta_a=0.3,
        delta=0.5,
        rg_interval="delta",
        random_seed=2,
    )
    bayes = res.table.sel(estimator="bayes").isel(design=0)
    assert int(bayes["reps_used"]) == 3
    assert abs(float(bayes["bias"])) < 0.15
    assert 0 <= float(bayes["warning_share"]) <= 1
    assert 0 <= float(bayes["divergence_share"]) <= 1
    assert float(bayes["coverage"]) in (0.0, 1 / 3, 2 / 3, 1.0)
    # The posterior interval is much narrower than "anything in [-1, 1]".
    assert 0 < float(bayes["length"]) < 0.6
    with pytest.raises(ValueError, match="bayes_reps"):
        comparison.run(reps=3, bayes_reps=4, estimators=["bayes"])


# --------------------------------------------------------------------------- the paper's bias


BIG = 20_000  # closed forms only: MC-SE of the bias ≈ 0.00016 (naive) to 0.003 (RG 2× at J=0.4)


@pytest.fixture(scope="module")
def big_default_m():
    """Default design (m = 200) at points where Ĵ is far from 0 (J ≥ 0.4 for the RG used).

    Per-system RG at J_A = 0.3 (all of sweep "delta_j") is left out of the unbiasedness test:
    there P(Ĵ_A = 0) ≈ 1e-6 and near-zero Ĵ make the unclipped estimator heavy-tailed, so its
    Monte Carlo SE is unreliable (one default run gave 0.0142 ± 0.0041 against an exact bias of
    0.00006). Shared RG uses B's calibration, J_B ≥ 0.45 at every point here.
    """
    return comparison.run(
        reps=BIG,
        j_grid=[0.4, 0.6, 0.8],
        delta_j_grid=[0.15, 0.3],
        estimators=["naive", "rg_shared", "rg_separate"],
        rg_interval="delta",
        random_seed=404,
    ).table


def test_naive_bias_matches_closed_form(big_default_m):
    sel = big_default_m.sel(estimator="naive")
    expected = naive_bias(
        THETA_A, THETA_B, sel["q_a"], sel["q_a"], sel["q_b"], sel["q_b"]
    )  # p_B − p_A − δ
    z = (sel["bias"] - expected) / sel["bias_mcse"]
    assert (np.abs(z) < 4).all(), z.values
    np.testing.assert_allclose(sel["bias_asymptotic"], expected)


def test_separate_rg_is_unbiased(big_default_m):
    sel = big_default_m.sel(estimator="rg_separate").where(big_default_m["sweep"] == "j", drop=True)
    assert sel.sizes["design"] == 3
    for d in range(sel.sizes["design"]):
        point = sel.isel(design=d)
        exact, p_undef = exact_bias_separate(
            THETA_A, THETA_B, float(point.j_a), float(point.j_b), 200
        )
        # The exact finite-m bias is far below the Monte Carlo resolution ...
        assert p_undef * BIG < 1e-3 and abs(exact) < 0.25 * float(point["bias_unclipped_mcse"])
        # ... so the simulation must be centred on the truth.
        assert abs(float(point["bias_unclipped"])) < 3 * float(point["bias_unclipped_mcse"])
    assert (sel["undefined_share"] == 0).all()


def test_shared_rg_bias_exact_finite_m(big_default_m):
    # With m = 200 the bias is App. C's plus an O(1/m) term (E[1/Ĵ] > 1/J), computed exactly.
    sel = big_default_m.sel(estimator="rg_shared")
    for d in range(sel.sizes["design"]):
        point = sel.isel(design=d)
        exact, p_undef = exact_bias_shared_b(
            THETA_A, THETA_B, float(point.j_a), float(point.j_b), 200
        )
        assert p_undef * BIG < 1e-3
        z = (float(point["bias_unclipped"]) - exact) / float(point["bias_unclipped_mcse"])
        assert abs(z) < 4, (float(point.j_a), float(point.delta_j), z)


def test_shared_rg_bias_matches_appendix_c_large_calibration():
    # Large calibration sets (m = 5000 per system): the O(1/m) term is < 0.5 MC-SE (measured
    # 0.00014 at J_B = 0.4, checked exactly below), so the simulated bias must match App. C's
    # asymptotic formula.
    table = comparison.run(
        reps=BIG,
        m=5000,
        j_grid=[0.4, 0.6],
        delta_j_grid=[0.1, 0.2, 0.3],
        estimators=["rg_shared"],
        rg_interval="delta",
        random_seed=405,
    ).table
    sel = table.sel(estimator="rg_shared")
    # The O(1/m) term is largest where J_B is smallest (J_A = 0.3, ΔJ = 0.1): check it there.
    worst = sel.isel(design=int(np.argmin(sel["j_b"].values)))
    exact, _ = exact_bias_shared_b(
        THETA_A, THETA_B, float(worst.j_a), float(worst.j_b), 5000, tail=1e-12
    )
    q_a, q_b = float(worst.q_a), float(worst.q_b)
    gap = abs(exact + appendix_c_bias(THETA_A, q_a, q_a, q_b, q_b))
    assert gap < 0.5 * float(worst["bias_unclipped_mcse"])
    for d in range(sel.sizes["design"]):
        point = sel.isel(design=d)
        q_a, q_b = float(point.q_a), float(point.q_b)
        expected = -appendix_c_bias(THETA_A, q_a, q_a, q_b, q_b)
        assert float(point["bias_asymptotic"]) == pytest.approx(expected, abs=1e-14)
        mcse = float(point["bias_unclipped_mcse"])
        z = (float(point["bias_unclipped"]) - expected) / mcse
        assert abs(z) < 4, (float(point.j_a), float(point.delta_j), z)
        # The bias is real: many standard errors away from zero.
        assert abs(expected) > 20 * mcse


# --------------------------------------------------------------------------- slow


@pytest.mark.slow
def test_bayes_hierarchical_coverage():
    # Where the posterior of Δθ is close to normal (J_A ≥ 0.6), the hierarchical model's 95 %
    # interval covers within 3 MC-SE of nominal. At J_A = 0.3 it over-covers (0.99 ± 0.008 in
    # 120 replications at ΔJ = 0): θ's posteriors are wide and bounded by [0, 1] there.
    reps = 300
    res = comparison.run(
        reps=reps,
        bayes_reps=reps,
        sweep="j",
        j_grid=[0.6, 0.8],
        estimators=["bayes"],
        random_seed=7,
    )
    sel = res.table.sel(estimator="bayes")
    cov, mcse = sel["coverage"].values, np.sqrt(0.95 * 0.05 / reps)
    assert (np.abs(cov - 0.95) < 3 * mcse).all(), cov
    assert (sel["theta_converged_share"] > 0.5).all(), sel["theta_converged_share"].values


# --------------------------------------------------------------------------- review (issue 4)


def test_single_estimator_name_and_beat_chance_checks():
    # A bare string used to be split into letters ("n", "a", "i", ...).
    res = comparison.run(reps=5, sweep="j", j_grid=[0.5], estimators="naive")
    assert res.table["estimator"].values.tolist() == ["naive"]
    # J_B = 0 passed the check and failed later with "shared calibration has J == 0";
    # J_A > 1 failed with "q0 must be a proportion".
    with pytest.raises(ValueError, match=r"J_B = J_A \+ ΔJ = 0 must lie in \(0, 1\]"):
        comparison.run(reps=5, sweep="j", j_grid=[0.5], fixed_delta_j=-0.5, estimators="naive")
    with pytest.raises(ValueError, match=r"J_A = 1.5 and J_B .* must lie in \(0, 1\]"):
        comparison.run(reps=5, sweep="j", j_grid=[1.5], fixed_delta_j=-0.6, estimators="naive")
    with pytest.raises(ValueError, match="j_grid must be a number or a list"):
        comparison.run(reps=5, j_grid="abc", estimators="naive")


def test_system_at_accuracy_one_is_counted_not_warned():
    # θ_B = 1: B's calibration set has no truly incorrect item, so q̂0_B and per-system RG are
    # never defined, and B's PPI++ standard error is 0. That used to raise "Mean of empty
    # slice" and PPI's SmallSampleWarning inside the study.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = comparison.run(
            reps=50,
            sweep="j",
            j_grid=[0.5],
            theta_a=0.95,
            delta=0.05,
            estimators=["naive", "rg_separate", "ppi"],
            rg_interval="delta",
        )
    table = res.table.isel(design=0)
    sep = table.sel(estimator="rg_separate")
    assert float(sep["undefined_share"]) == 1.0
    assert sep["bias"].isnull() and sep["bias_mcse"].isnull()
    # Undefined replications get the no-information interval [-1, 1], which covers.
    assert float(sep["coverage"]) == 1.0 and float(sep["length"]) == 2.0
    assert table["bias"].sel(estimator="naive").notnull()
    assert float(table["undefined_share"].sel(estimator="naive")) == 0.0
    # PPI++ is undefined for B too (labelled items of one human label: ppi_mean gives NaN,
    # not the zero-width [1, 1] it gave before issue 13).
    assert float(table["undefined_share"].sel(estimator="ppi")) == 1.0
