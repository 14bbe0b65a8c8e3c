"""Tests of the allocation-length study (Lee et al. Fig. 3, Algorithm 1, Prop. 5.2).

With an unlimited test set (the study's default, as in Fig. 3) a replicate is a function of
the pilot counts and of the calibration counts only, so the expected interval length of every
split can be computed exactly by enumerating all outcomes. The Monte Carlo means must match
those expectations within Monte Carlo error; this checks the simulation (pilot reuse, nested
calibration streams, the allocation calls and the interval) independently of the sampling.
"""

import json
import warnings

import numpy as np
import pytest
from scipy import stats

from bayesjudge.core.allocation import allocate_calibration
from bayesjudge.core.correction import lang_reiczigel_interval, lang_reiczigel_length
from bayesjudge.studies import allocation_length
from bayesjudge.studies.allocation_length import ALLOCATIONS, oracle_m1, run
from bayesjudge.warnings import LowJudgeQualityWarning

Q0, Q1, M_PILOT, ALPHA = 0.7, 0.9, 10, 0.05
P_GRID = (0.3, 0.5, 0.7, 0.9)


def _exact_expectations(p, m):
    """Mean and sd of the length, the coverage and m1 per split, by full enumeration.

    The pilot (c0, c1) takes 11 x 11 values; given it, each split is fixed, and the extra
    items are independent binomials, so every moment is a finite weighted sum.
    """
    theta = float(np.clip((p + Q0 - 1) / (Q0 + Q1 - 1), 0, 1))
    c = np.arange(M_PILOT + 1)
    w0 = stats.binom.pmf(c, M_PILOT, Q0)
    w1 = stats.binom.pmf(c, M_PILOT, Q1)
    first = {k: np.zeros(len(ALLOCATIONS)) for k in ("length", "coverage", "m1")}
    second = {k: np.zeros(len(ALLOCATIONS)) for k in first}
    oracle = oracle_m1(p, Q0, Q1, m, M_PILOT)
    for c0 in c:
        for c1 in c:
            weight = w0[c0] * w1[c1]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", LowJudgeQualityWarning)
                pilot = (m, p, c0 / M_PILOT, c1 / M_PILOT, M_PILOT)
                splits = [
                    m // 2,
                    int(allocate_calibration(*pilot).m1),
                    int(allocate_calibration(*pilot, method="exact").m1),
                    oracle,
                ]
            for a, m1 in enumerate(splits):
                m0 = m - m1
                x0 = np.arange(m0 - M_PILOT + 1)[:, None]
                x1 = np.arange(m1 - M_PILOT + 1)[None, :]
                pmf = stats.binom.pmf(x0, m0 - M_PILOT, Q0) * stats.binom.pmf(x1, m1 - M_PILOT, Q1)
                args = (p, (c0 + x0) / m0, (c1 + x1) / m1, np.inf, m0, m1, ALPHA)
                lo, hi = lang_reiczigel_interval(*args)
                values = {
                    "length": hi - lo,
                    "coverage": (lo <= theta) & (theta <= hi),
                    "m1": np.full(pmf.shape, m1),
                }
                for key, v in values.items():
                    first[key][a] += weight * np.sum(pmf * v)
                    second[key][a] += weight * np.sum(pmf * v**2)
    return {k: (first[k], np.sqrt(np.maximum(second[k] - first[k] ** 2, 0))) for k in first}


@pytest.fixture(scope="module")
def small():
    # 20,000 replicates at m = 40 and 100 (all four p): about 0.3 s.
    return run(reps=20_000, random_seed=7, m=[40, 100])


def test_monte_carlo_means_match_exact_enumeration(small):
    # 4 p x 2 m x 4 splits x 3 quantities = 96 comparisons, each within 4 standard errors
    # sd/sqrt(reps) computed from the exact sd (a false alarm has probability ~6e-5 per
    # comparison); the sd from the sample would be 0 where a rare pilot was never drawn.
    # Measured with this seed: 87 comparisons with se > 0, max |z| = 2.19, mean z = -0.16,
    # sd of z = 0.95 (as for N(0, 1) draws).
    reps = small.table.attrs["reps"]
    worst = 0.0
    for p in P_GRID:
        for m in (40, 100):
            t = small.table.sel(p=p, m=m)
            for key, (mean, sd) in _exact_expectations(p, m).items():
                got, se = t[key].values, sd / np.sqrt(reps)
                tol = 4 * se + 1e-9  # symmetric and oracle m1 are constant: an exact match
                assert np.all(np.abs(got - mean) <= tol), (p, m, key, got, mean, se)
                worst = max(worst, float((np.abs(got - mean)[se > 0] / se[se > 0]).max()))
                # The reported MC-SE is the exact one up to its own sampling error.
                if key != "m1":
                    np.testing.assert_allclose(t[f"{key}_mcse"], se, rtol=0.1, atol=1e-6)
    assert 0 < worst < 4, worst


def test_oracle_minimises_the_planned_length():
    for p in P_GRID:
        for m in (40, 200, 1000):
            best = oracle_m1(p, Q0, Q1, m, M_PILOT)
            m1 = np.arange(M_PILOT, m - M_PILOT + 1)
            lengths = lang_reiczigel_length(p, Q0, Q1, np.inf, m - m1, m1, ALPHA)
            assert lengths[best - M_PILOT] == lengths.min()
    # Fig. 3's plug-in curves: the oracle is never longer than the other splits.
    table = run(reps=2, m=[40, 200, 1000]).table["length_plugin"]
    assert (table.sel(allocation="oracle") <= table + 1e-12).all()


def test_paired_differences_fig3():
    # 10,000 replicates at m = 200, 500, 1000, 2000 (about 0.3 s); paired MC-SE of the
    # differences 0.00001-0.0011. Measured with the study's default seed (rows p = 0.3, 0.5,
    # 0.7, 0.9; columns m = 200, 500, 1000, 2000):
    #   oracle - symmetric      algorithm1 - symmetric     algorithm1 - oracle
    #   -.021 -.018 -.014 -.011  -.018 -.014 -.011 -.008   .0026 .0037 .0038 .0033
    #   -.020 -.014 -.010 -.007  -.013 -.007 -.005 -.003   .0073 .0062 .0050 .0037
    #   -.002 -.001 -.001 -.001  -.002 .0001 .0003 .0003   .0002 .0012 .0011 .0008
    #   -.013 -.011 -.009 -.007  -.015 -.011 -.008 -.006   -.002 .0002 .0006 .0008
    table = run(m=[200, 500, 1000, 2000]).table
    diff, se = table["length_diff"], table["length_diff_mcse"]
    # The oracle split beats the symmetric one at every p once m >= 200.
    assert (diff.sel(allocation="oracle") + 3 * se.sel(allocation="oracle") < 0).all()
    # Algorithm 1 beats symmetric where the symmetric split is far from optimal ...
    far = table.sel(p=[0.3, 0.5, 0.9], allocation="algorithm1")
    assert (far["length_diff"] + 3 * far["length_diff_mcse"] < 0).all()
    # ... and at p = 0.3 and 0.5 it lies between the oracle and the symmetric split (the SE
    # of the gap is bounded by the sum of the two paired SEs).
    mid = table.sel(p=[0.3, 0.5])
    alg1, oracle = mid.sel(allocation="algorithm1"), mid.sel(allocation="oracle")
    gap = alg1["length_diff"] - oracle["length_diff"]
    assert (gap > 3 * (alg1["length_diff_mcse"] + oracle["length_diff_mcse"])).all()
    # Near the symmetric optimum (p = 0.7) its noisy split no longer helps at large m.
    near = table.sel(p=0.7, m=2000, allocation="algorithm1")
    assert near["length_diff"] > 3 * near["length_diff_mcse"]


def test_fig5c_setting_with_finite_test_set():
    # Lee et al. Fig. 5c: n = 1000, m = 200, theta = 0.1, 0.2 (p = theta*0.6 + 0.3).
    # tests/core/test_allocation.py measured Algorithm 1 - symmetric = -0.015 and -0.018 there;
    # here (5,000 reps, default seed): -0.0134 and -0.0175, MC-SE 0.0004 and 0.0003.
    result = run(reps=5_000, p=[0.36, 0.42], m=[200], n=1000)
    diff = result.table["length_diff"].sel(allocation="algorithm1", m=200)
    se = result.table["length_diff_mcse"].sel(allocation="algorithm1", m=200)
    assert (diff + 3 * se < 0).all()
    assert result.settings["n"] == 1000


def test_seed_reproduces_and_points_are_independent():
    a = run(reps=500, random_seed=3, p=[0.5, 0.9], m=[100]).table
    b = run(reps=500, random_seed=3, p=[0.5, 0.9], m=[100]).table
    c = run(reps=500, random_seed=4, p=[0.5, 0.9], m=[100]).table
    assert a.identical(b)
    assert not np.allclose(a["length"], c["length"])
    assert a.attrs["random_seed"] == 3 and a.attrs["reps"] == 500


def test_table_settings_and_save(small, tmp_path):
    import matplotlib.pyplot as plt

    t = small.table
    assert dict(t.sizes) == {"p": 4, "m": 2, "allocation": 4}
    np.testing.assert_allclose(t["theta"], [0, 1 / 3, 2 / 3, 1], atol=1e-12)
    for name in ("length", "length_diff", "coverage", "m1"):
        assert f"{name}_mcse" in t
    settings = small.settings
    assert settings["study"] == "allocation-length"
    assert (settings["q0"], settings["q1"], settings["m_pilot"], settings["n"]) == (
        0.7,
        0.9,
        10,
        None,
    )
    paths = small.save(tmp_path)
    assert json.loads(paths["json"].read_text())["m"] == [40, 100]
    assert paths["png"].stat().st_size > 0
    frame = small.to_frame()
    assert len(frame) == 4 * 2 * 4 and {"p", "m", "allocation", "length"} <= set(frame)
    plt.close("all")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"p": [0.2]}, "must lie in"),
        ({"m": [15]}, "must hold the pilot"),
        ({"m": [100.5]}, "whole numbers"),
        ({"q0": 0.4, "q1": 0.5}, "q0 \\+ q1 > 1"),
        ({"n": 0}, "n must be"),
        ({"m_pilot": 0}, "m_pilot"),
        ({"reps": 1}, "reps"),
        ({"p": [0.5, 0.5]}, "repeat"),
    ],
)
def test_bad_settings(kwargs, match):
    with pytest.raises(ValueError, match=match):
        run(**kwargs)


def test_module_is_registered():
    from bayesjudge.studies import STUDIES

    assert STUDIES["allocation-length"] == allocation_length.__name__
