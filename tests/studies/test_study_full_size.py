"""Full-size (``slow``) runs of three studies against the findings their documentation states.

Each test runs a study at its DEFAULT size and seed (what ``bayesjudge study NAME`` prints) and
checks the claims of ``docs/studies.md`` and of the study's module docstring. Margins come
from the Monte Carlo standard errors in the table's ``*_mcse`` variables; a number the docs
print rounded (e.g. "0.009") is checked as ``|measured − printed| ≤ half a unit of the last
printed digit + 3 MC-SE``. Reference values that are not simulated come from closed forms or
exact enumerations, with the generating call written beside them.

Measured on 2 shared cores (the study alone): allocation-length 0.4 s, human-vs-judge 1.8 s
(plus 1.3 s at m = 20,000), comparison without the Bayesian model 62 s.

Where the measured full-size numbers differ slightly from the printed text the test checks
what holds and says so in a comment marked "Docs:".
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

# Exact finite-m references for the comparison study (helpers of that study's fast tests).
from test_study_comparison import exact_bias_shared_b, p_of, q_of

from bayesjudge.core.allocation import (
    HUMAN_ONLY_Q_THRESHOLD,
    allocate_calibration,
    human_only_regime,
)
from bayesjudge.core.correction import lang_reiczigel_interval, lang_reiczigel_length
from bayesjudge.studies import allocation_length, comparison, human_vs_judge
from bayesjudge.studies._framework import point_rngs
from bayesjudge.warnings import LowJudgeQualityWarning

pytestmark = pytest.mark.slow


def _rounded(measured, printed, half_unit, se, k=3.0):
    """Whether ``measured`` matches a number printed rounded, within ``k`` MC-SE."""
    return np.abs(np.asarray(measured) - printed) <= half_unit + k * np.asarray(se)


# --------------------------------------------------------------------------- allocation-length


@pytest.fixture(scope="module")
def allocation():
    # allocation_length.run(): p in {0.3, 0.5, 0.7, 0.9} x m in {40, ..., 2000}, 10,000 reps,
    # seed 20253 (0.4 s).
    result = allocation_length.run()
    assert result.settings["reps"] == 10_000 and result.settings["random_seed"] == 20_253
    return result.table


def test_allocation_algorithm1_gain_where_symmetric_is_far_from_optimal(allocation):
    # docs/studies.md: "Algorithm 1 shortens the interval wherever the symmetric split is far
    # from optimal (p̂ = 0.3, 0.5, 0.9; by 0.003–0.023)", at every budget (module docstring).
    # Measured gains (symmetric − Algorithm 1), m = 40 ... 2000:
    #   p = 0.3: .0201 .0214 .0186 .0142 .0105 .0080
    #   p = 0.5: .0138 .0166 .0124 .0072 .0049 .0034
    #   p = 0.9: .0194 .0173 .0146 .0109 .0086 .0063   (paired MC-SE 0.00004-0.0008)
    far = allocation.sel(p=[0.3, 0.5, 0.9], allocation="algorithm1")
    gain, se = -far["length_diff"], far["length_diff_mcse"]
    assert (gain - 3 * se > 0).all(), gain.values
    assert (gain + 3 * se >= 0.003).all() and (gain - 3 * se <= 0.023).all(), gain.values
    # "... within a few thousandths of the oracle at p = 0.3 and 0.9": measured
    # |Algorithm 1 − oracle| ≤ 0.0050 (p = 0.9, m = 100); the SE of the gap is at most the
    # sum of the two paired SEs.
    ends = allocation.sel(p=[0.3, 0.9])
    a, o = ends.sel(allocation="algorithm1"), ends.sel(allocation="oracle")
    gap = np.abs(a["length_diff"] - o["length_diff"])
    assert (gap <= 0.005 + 3 * (a["length_diff_mcse"] + o["length_diff_mcse"])).all(), gap.values
    # Docs: "MC-SE of paired differences ≤ 0.001" holds for Algorithm 1 and the oracle
    # (max 0.0008); the exact plug-in arm reaches 0.00114 (p = 0.5, m = 2000).
    assert (
        float(allocation["length_diff_mcse"].sel(allocation=["algorithm1", "oracle"]).max()) < 1e-3
    )


def test_allocation_algorithm1_near_the_symmetric_optimum(allocation):
    # docs: at p̂ = 0.7 "its noisy pilot makes it slightly *longer* than symmetric for
    # m ≥ 1000"; module docstring: "Algorithm 1's gain (0.009 at m = 40) vanishes by m = 500
    # and at m ≥ 1000 it is 0.0003 longer". Measured (Algorithm 1 − symmetric, MC-SE):
    # m = 40: −0.00953 (0.00066); 500: −0.000015 (0.000067); 1000: +0.00037 (0.000037);
    # 2000: +0.00034 (0.000020).
    t = allocation.sel(p=0.7, allocation="algorithm1")
    diff, se = t["length_diff"], t["length_diff_mcse"]
    assert _rounded(-diff.sel(m=40), 0.009, 0.0005, se.sel(m=40))
    assert abs(float(diff.sel(m=500))) < 3 * float(se.sel(m=500))
    large = t.sel(m=[1000, 2000])
    assert (large["length_diff"] - 3 * large["length_diff_mcse"] > 0).all()
    assert _rounded(large["length_diff"], 0.0003, 0.00005, large["length_diff_mcse"]).all()


def test_allocation_exact_plugin_split_is_fragile(allocation):
    # docs: "The exact plug-in split is fragile with a 10-item pilot (0.01–0.035 longer than
    # symmetric at p̂ = 0.5, 0.7)" for m ≥ 200. Measured (exact − symmetric), m = 200 ... 2000:
    #   p = 0.5: .0104 .0235 .0304 .0362   p = 0.7: .0222 .0274 .0273 .0274  (MC-SE ≤ .0011)
    # Docs: the largest is 0.0362 ± 0.0011, within MC error of the printed 0.035 (0.036 would
    # be the rounded value).
    t = allocation.sel(p=[0.5, 0.7], m=[200, 500, 1000, 2000], allocation="exact")
    diff, se = t["length_diff"], t["length_diff_mcse"]
    assert (diff - 3 * se > 0).all(), diff.values
    assert (diff + 3 * se >= 0.01).all() and (diff - 3 * se <= 0.035).all(), diff.values


def test_allocation_exact_plugin_clipping_share_and_cost():
    # Module docstring: "At p = 0.5, m = 1000, 15 % of pilots give a plug-in θ̃ clipped to 0 or
    # 1, which leaves only the pilot's 10 items for one label type; those intervals average
    # 0.33 against 0.09 for the other pilots."
    # Exact share by enumerating the 11 x 11 pilots (c0 ~ Bin(10, 0.7), c1 ~ Bin(10, 0.9)):
    # sum of pmf over pilots with allocate_calibration(1000, 0.5, c0/10, c1/10, 10,
    # method="exact").m1 in {10, 990}  ->  0.14988.
    c = np.arange(11)
    w0, w1 = stats.binom.pmf(c, 10, 0.7), stats.binom.pmf(c, 10, 0.9)
    exact_share = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LowJudgeQualityWarning)  # pilots no better than chance
        for c0 in c:
            for c1 in c:
                m1 = int(allocate_calibration(1000, 0.5, c0 / 10, c1 / 10, 10, "exact").m1)
                exact_share += w0[c0] * w1[c1] * (m1 in (10, 990))
    assert abs(exact_share - 0.15) < 0.005, exact_share
    # The study's own replicates at that point: the stream of run()'s point (p=0.5, m=1000)
    # with the default seed, so these are exactly the default run's 10,000 replicates.
    rng = point_rngs(20_253, 0.5, 1000)[0]
    sim = allocation_length._simulate_point(rng, 0.5, 1000, 0.7, 0.9, None, 10, 0.05, 10_000)
    table = allocation_length.run(p=[0.5], m=[1000]).table.squeeze()
    np.testing.assert_allclose(sim["length"].mean(axis=0), table["length"], rtol=1e-12)
    extreme = np.isin(sim["m1"][:, 2], (10, 990))
    share = extreme.mean()  # measured 0.1481
    assert abs(share - exact_share) < 4 * np.sqrt(exact_share * (1 - exact_share) / extreme.size)
    length = sim["length"][:, 2]
    clipped, other = length[extreme], length[~extreme]  # measured 0.327, 0.0900
    se_c = clipped.std(ddof=1) / np.sqrt(clipped.size)
    se_o = other.std(ddof=1) / np.sqrt(other.size)
    assert _rounded(clipped.mean(), 0.33, 0.005, se_c), (clipped.mean(), se_c)
    assert _rounded(other.mean(), 0.09, 0.005, se_o), (other.mean(), se_o)


def test_allocation_oracle_and_coverage(allocation):
    # Module docstring: the oracle "for m ≥ 200 beats the symmetric split at every p, but at
    # m = 40 (p = 0.5, 0.7) [it] is longer on average than the symmetric one". Measured oracle
    # − symmetric at m = 40: +0.0037 (0.0008), +0.0071 (0.0008); for m ≥ 200 the smallest
    # gain is 0.00049 (0.00001) at p = 0.7, m = 2000.
    oracle = allocation.sel(allocation="oracle")
    big = oracle.sel(m=[200, 500, 1000, 2000])
    assert (big["length_diff"] + 3 * big["length_diff_mcse"] < 0).all()
    small = oracle.sel(m=40, p=[0.5, 0.7])
    assert (small["length_diff"] - 3 * small["length_diff_mcse"] > 0).all()
    # "Coverage stays between 0.947 and 1 for every split and budget (nominal 0.95, MC-SE
    # about 0.002)". Measured min 0.9466 (exact split, p = 0.7, m = 500; MC-SE 0.0022), which
    # the printed 0.947 rounds; nothing is significantly below nominal.
    cov, se = allocation["coverage"], allocation["coverage_mcse"]
    assert (cov + 3 * se >= 0.947).all() and (cov <= 1).all()
    assert (cov + 3 * se >= 0.95).all(), cov.values


def test_allocation_text_example_of_lee_et_al(allocation):
    # docs: at p̂ = 0.3 with the symmetric split "the untruncated length first drops below 0.1
    # at m = 1,802, the truncated one at m = 362"; module docstring: "0.306 at m = 200".
    # Reference: eq. (6) (lang_reiczigel_length / lang_reiczigel_interval) with m0 = m1 = h,
    # observed proportions equal to the truth (p, q0, q1) = (0.3, 0.7, 0.9), n = ∞.
    # Docs: with the study's split of odd budgets (m1 = ⌊m/2⌋) the first budgets are 1,801 and
    # 361; the printed 1,802 and 362 are the first budgets with m0 = m1 exactly.
    h = np.arange(20, 1500)
    untruncated = lang_reiczigel_length(0.3, 0.7, 0.9, np.inf, h, h, 0.05)
    lower, upper = lang_reiczigel_interval(0.3, 0.7, 0.9, np.inf, h, h, 0.05)
    assert 2 * h[np.argmax(untruncated < 0.1)] == 1802
    assert 2 * h[np.argmax(upper - lower < 0.1)] == 362
    plugin = float(allocation["length_plugin"].sel(p=0.3, m=200, allocation="symmetric"))
    assert abs(plugin - 0.306) <= 0.0005, plugin  # 0.30551


# --------------------------------------------------------------------------- human-vs-judge


@pytest.fixture(scope="module")
def hvj():
    # human_vs_judge.run(): 25 (q0, q1) x 19 theta, m = 1000, 10,000 reps, seed 20261 (1.8 s).
    result = human_vs_judge.run()
    assert result.settings["reps"] == 10_000 and result.settings["m"] == 1000
    return result.table


def _z(table, name):
    return ((table[name] - table[f"{name}_analytic"]) / table[f"{name}_mcse"]).values.ravel()


def _mean_relative_excess(table, name):
    """Grid mean of simulated/analytic − 1 and its MC-SE (the grid points are independent)."""
    analytic = table[f"{name}_analytic"]
    rel = (table[name] / analytic - 1).values.ravel()
    se = (table[f"{name}_mcse"] / analytic).values.ravel()
    return rel.mean(), np.sqrt(np.sum(se**2)) / rel.size


def test_hvj_simulation_agrees_with_eq10_up_to_the_finite_m_excess(hvj):
    # docs: "the simulated ratios agree with the analytic ones within Monte Carlo error, but at
    # m = 1000 the judge's simulated variance is on average 1–2 % above the delta-method
    # value"; module docstring: "within about 4 MC-SE (relative MC-SE 2 %)".
    # Measured: mean relative excess of var_judge 0.0134 (MC-SE 0.0007), of the ratio 0.0146
    # (0.0009), of var_human −0.0010 (0.0006); mean z 0.90 (judge), 0.69 (ratio); max |z| of
    # the ratio 3.48; relative MC-SE of the ratio 1.95-2.11 %.
    excess, se = _mean_relative_excess(hvj, "var_judge")
    assert excess - 3 * se > 0, (excess, se)  # the excess is real ...
    assert 0.01 - 3 * se <= excess <= 0.02 + 3 * se, (excess, se)  # ... and 1-2 %
    ratio_excess, ratio_se = _mean_relative_excess(hvj, "ratio")
    assert 0 < ratio_excess - 3 * ratio_se and ratio_excess + 3 * ratio_se < 0.03
    human_excess, human_se = _mean_relative_excess(hvj, "var_human")  # θ(1 − θ)/m is exact
    assert abs(human_excess) < 3 * human_se, (human_excess, human_se)
    # Mean z over 475 independent points is N(0, 1/475) without an offset.
    bound = 3 / np.sqrt(hvj["ratio"].size)
    assert _z(hvj, "var_judge").mean() > bound and _z(hvj, "ratio").mean() > bound
    # Point by point within "about 4" MC-SE: a 0.7-SE mean offset plus N(0, 1) noise over
    # 475 points exceeds 4.5 with probability about 3 %.
    assert np.abs(_z(hvj, "ratio")).max() < 4.5
    rel = (hvj["ratio_mcse"] / hvj["ratio"]).values
    assert 0.015 < rel.min() and rel.max() < 0.025
    assert float(hvj["undefined_share"].max()) == 0.0


def test_hvj_excess_is_gone_at_large_m(hvj):
    # docs: "(an O(1/m) effect, gone at m = 20,000)". Full default grid at m = 20,000 (1.3 s):
    # measured mean relative excess 0.0009 (MC-SE 0.00065) for var_judge, 0.0018 (0.0009) for
    # the ratio; an O(1/m) excess would be 0.0134 / 20 = 0.0007 there.
    large = human_vs_judge.run(m=20_000).table
    excess, se = _mean_relative_excess(large, "var_judge")
    assert abs(excess) < 3 * se, (excess, se)
    ratio_excess, ratio_se = _mean_relative_excess(large, "ratio")
    assert abs(ratio_excess) < 3 * ratio_se, (ratio_excess, ratio_se)
    at_1000, se_1000 = _mean_relative_excess(hvj, "var_judge")
    assert at_1000 - excess > 3 * np.hypot(se, se_1000)


def test_hvj_prop_6_1_classification(hvj):
    # docs: on the diagonal q0 = q1 = q, ratio_analytic ≤ 1 "is exactly Prop. 6.1's region
    # θ(1 − θ) ≥ q(1 − q)/(2q − 1)²"; module docstring: "Classification (judge better or not)
    # agrees with Prop. 6.1 at every diagonal point not within 4 MC-SE of the boundary".
    # Measured: 30 inside and 60 outside points clear of the boundary; the 5 unclear ones are
    # at q = 0.85 (θ = 0.35-0.65, analytic ratio 1.04-1.14).
    inside_total = outside_total = 0
    for q in hvj["q0"].values:
        d = hvj.sel(q0=q, q1=q)
        theta = d["theta"].values
        inside = theta * (1 - theta) >= q * (1 - q) / (2 * q - 1) ** 2  # Prop. 6.1 as printed
        np.testing.assert_array_equal(np.asarray(human_only_regime(q).contains(theta)), inside)
        np.testing.assert_array_equal(d["judge_better_analytic"].values, inside)
        clear = np.abs(d["ratio_analytic"] - 1).values > 4 * d["ratio_mcse"].values
        ratio, se = d["ratio"].values, d["ratio_mcse"].values
        assert (ratio + 3 * se < 1)[clear & inside].all(), (q, ratio)
        assert (ratio - 3 * se > 1)[clear & ~inside].all(), (q, ratio)
        inside_total += int((clear & inside).sum())
        outside_total += int((clear & ~inside).sum())
    assert inside_total >= 20 and outside_total >= 40, (inside_total, outside_total)


def test_hvj_where_the_judge_wins(hvj):
    # docs: "The judge never wins for q0 = q1 ≤ 0.85 and wins around θ = ½ once both are
    # high; the region reaches towards θ = 0 as q0 → 1 (and θ = 1 as q1 → 1)".
    # Never for q0 = q1 ≤ 0.85 (below Prop. 6.1's threshold 0.8536); it also holds for every
    # pair with both q ≤ 0.85: analytic ratio > 1, and no Monte Carlo ratio significantly < 1.
    # Measured: smallest MC ratio there 1.042 (q = 0.85, θ = 0.55, MC-SE 0.021).
    assert HUMAN_ONLY_Q_THRESHOLD == pytest.approx(0.5 + 1 / (2 * np.sqrt(2)))
    low = hvj.sel(q0=[0.75, 0.8, 0.85], q1=[0.75, 0.8, 0.85])
    assert (low["ratio_analytic"] > 1).all() and not low["judge_better_analytic"].any()
    assert (low["ratio"] + 3 * low["ratio_mcse"] > 1).all()
    # Where q = 0.85 comes closest (θ = 0.35-0.65, analytic 1.04-1.14) the judge still loses
    # on average: measured mean ratio 1.091, MC-SE 0.0083 (independent points).
    close = hvj.sel(q0=0.85, q1=0.85, theta=[0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65])
    mean, mean_se = (
        float(close["ratio"].mean()),
        float(np.sqrt((close["ratio_mcse"] ** 2).sum()) / 7),
    )
    assert mean - 3 * mean_se > 1, (mean, mean_se)
    # Wins at θ = ½ once both are high (measured ratio 0.234-0.569, MC-SE ≤ 0.012).
    high = hvj.sel(q0=[0.9, 0.95], q1=[0.9, 0.95], theta=0.5)
    assert (high["ratio"] + 3 * high["ratio_mcse"] < 1).all()
    # Towards θ = 0 as q0 → 1 (q1 = 0.95) and towards θ = 1 as q1 → 1 (q0 = 0.95): the lowest
    # (highest) θ of the region, analytic and Monte Carlo (ratio + 3 MC-SE < 1).
    # Measured, q0 = 0.75 ... 0.95 at q1 = 0.95: analytic 0.5 0.35 0.25 0.15 0.1, MC 0.5 0.4
    # 0.25 0.15 0.1; q1 = 0.75 ... 0.95 at q0 = 0.95: analytic 0.5 0.65 0.75 0.85 0.9, MC
    # 0.45 0.6 0.75 0.85 0.9.
    theta = hvj["theta"].values

    def ends(d):
        analytic = theta[d["judge_better_analytic"].values]
        mc = theta[(d["ratio"] + 3 * d["ratio_mcse"] < 1).values]
        return analytic, mc

    qs = hvj["q0"].values
    lowest = np.array([[e.min() for e in ends(hvj.sel(q0=q, q1=0.95))] for q in qs])
    highest = np.array([[e.max() for e in ends(hvj.sel(q0=0.95, q1=q))] for q in qs])
    assert (np.diff(lowest, axis=0) <= 0).all() and (lowest[-1] < lowest[0]).all(), lowest
    assert (np.diff(highest, axis=0) >= 0).all() and (highest[-1] > highest[0]).all(), highest
    assert (lowest[-1] <= 0.1).all() and (highest[-1] >= 0.9).all()


# --------------------------------------------------------------------------- comparison

CLOSED = ("naive", "rg_shared", "rg_separate", "ppi")
THETA_A, THETA_B, M_CAL = 0.70, 0.75, 200  # the study's defaults


@pytest.fixture(scope="module")
def cmp():
    # comparison.run(estimators=("naive", "rg_shared", "rg_separate", "ppi")): both sweeps
    # (18 design points), 2000 reps, bootstrap intervals with 1000 resamples, seed 20260505
    # (62 s on two cores).
    result = comparison.run(estimators=CLOSED)
    settings = result.settings
    assert settings["reps"] == 2000 and settings["random_seed"] == 20_260_505
    assert settings["rg_interval"] == "bootstrap" and settings["n_resamples"] == 1000
    assert (settings["theta_a"], settings["m"], settings["n"]) == (THETA_A, M_CAL, 1000)
    return result.table


def _sweep(table, name):
    return table.where(table["sweep"] == name, drop=True)


def test_comparison_naive_bias_is_its_closed_form(cmp):
    # Reference: p_B − p_A − δ with p = θ q1 + (1 − θ)(1 − q0), q0 = q1 = (1 + J)/2 (Fiedler
    # eq. 1), written out here with p_of/q_of; unbiasedness of p̂ makes it exact at any n.
    # Measured max |z| 2.61 (J_A = 0.6) over the 18 points.
    naive = cmp.sel(estimator="naive")
    q_a, q_b = q_of(naive["j_a"]), q_of(naive["j_b"])
    expected = p_of(THETA_B, q_b, q_b) - p_of(THETA_A, q_a, q_a) - (THETA_B - THETA_A)
    z = (naive["bias"] - expected) / naive["bias_mcse"]
    assert (np.abs(z) < 4).all(), z.values
    np.testing.assert_allclose(naive["bias_asymptotic"], expected, atol=1e-14)


def test_comparison_shared_rg_bias_grows_with_delta_j(cmp):
    # docs: "a shared calibration set biases Δθ as ΔJ grows". Reference: the exact finite-m
    # bias of (p̂_B − p̂_A)/Ĵ_B with B's random calibration set,
    # exact_bias_shared_b(0.7, 0.75, 0.3, 0.3 + ΔJ, 200) (tests/studies/test_study_comparison.py):
    #   ΔJ   0     .05   .10   .15   .20   .25   .30   .35   .40
    #   .0048 .0333 .0541 .0701 .0829 .0933 .1019 .1092 .1155   (P(Ĵ_B = 0) ≤ 4.5e-6)
    # Measured (unclipped) .0077 .0334 .0546 .0719 .0819 .0942 .1019 .1099 .1154, MC-SE
    # .0020-.0008; max |z| 1.45.
    shared = _sweep(cmp, "delta_j").sel(estimator="rg_shared")
    dj = shared["delta_j"].values
    np.testing.assert_allclose(dj, np.arange(9) * 0.05, atol=1e-12)
    for d in range(shared.sizes["design"]):
        point = shared.isel(design=d)
        exact, p_undefined = exact_bias_shared_b(
            THETA_A, THETA_B, float(point["j_a"]), float(point["j_b"]), M_CAL
        )
        assert p_undefined * 2000 < 0.01
        z = (float(point["bias_unclipped"]) - exact) / float(point["bias_unclipped_mcse"])
        assert abs(z) < 4, (dj[d], z)
    # Strictly increasing: every step of the (clipped) bias is > 3 SE of the difference of two
    # independent points (measured smallest step 0.0055, 4.9 SE).
    bias, se = shared["bias"].values, shared["bias_mcse"].values
    assert (np.diff(bias) > 3 * np.hypot(se[1:], se[:-1])).all(), bias
    # Coverage falls with ΔJ: no step up beyond 3 SE, and a large fall overall. Measured
    # .9635 .9560 .8695 .7175 .5795 .3735 .2200 .1070 .0415.
    cov, cov_se = shared["coverage"].values, shared["coverage_mcse"].values
    assert (np.diff(cov) < 3 * np.hypot(cov_se[1:], cov_se[:-1])).all(), cov
    assert cov[0] - cov[-1] > 0.9
    # The numbers quoted for ΔJ = 0.3 (bias 0.102, coverage 0.22; the large-sample App. C bias
    # is ΔJ (θ_A − ½)/J_B = 0.3 · 0.2 / 0.6 = 0.1, shared_rg_bias(0.7, 0.75, .65, .65, .8, .8)).
    at = shared.isel(design=int(np.argmin(np.abs(dj - 0.3))))
    assert _rounded(at["bias"], 0.102, 0.0005, at["bias_mcse"])
    assert _rounded(at["coverage"], 0.22, 0.005, at["coverage_mcse"])
    assert float(at["bias_asymptotic"]) == pytest.approx(0.3 * 0.2 / 0.6, abs=1e-12)


def test_comparison_separate_rg_unbiased_and_never_under_covers(cmp):
    # docs: "system-specific calibration stays unbiased". Measured |bias / MC-SE| ≤ 1.82 (the
    # clipped estimate, whose MC-SE is reliable; the unclipped one is heavy-tailed at J ≤ 0.3).
    sep = cmp.sel(estimator="rg_separate")
    assert (np.abs(sep["bias"]) < 4 * sep["bias_mcse"]).all(), sep["bias"].values
    # Coverage of the paired percentile bootstrap. Measured (sweep "j", J_A = 0.1 ... 0.9):
    # .9965 .9785 .9625 .9535 .9480 .9435 .9455 .9510 .9480; sweep "delta_j" (J_A = 0.3):
    # .9420-.9625. Never significantly below nominal anywhere; within 3 MC-SE of 0.95 for
    # J_A ≥ 0.4; it over-covers at J_A ≤ 0.2, where Ĵ is small and the bootstrap interval
    # is very wide (length 1.60 and 1.11), and mildly at J_A = 0.3 (z = (cov − 0.95)/MC-SE
    # from −1.5 to 2.9 over the 9 points there, mean 1.5). Docs: not mentioned.
    cov, se = sep["coverage"], sep["coverage_mcse"]
    assert (cov + 3 * se >= 0.95).all(), cov.values
    j_ok = sep.where(sep["j_a"] >= 0.4, drop=True)
    assert j_ok.sizes["design"] == 6
    assert (np.abs(j_ok["coverage"] - 0.95) < 3 * j_ok["coverage_mcse"]).all()
    weak = sep.where(sep["j_a"] <= 0.2, drop=True)
    assert weak.sizes["design"] == 2
    assert (weak["coverage"] - 3 * weak["coverage_mcse"] > 0.95).all()


def test_comparison_ppi_coverage_near_nominal(cmp):
    # PPI++ per system (Wald interval). Quoted range 0.935-0.957; measured 0.9375 (ΔJ = 0.15)
    # to 0.9545 (ΔJ = 0.3) over the 17 distinct design points, MC-SE about 0.005, each within
    # 3 MC-SE of 0.95 (max |z| 2.3); bias within 4 MC-SE of 0 (max |z| 2.67).
    # The design J_A = 0.3, ΔJ = 0.05 is in both sweeps (the same stream, identical numbers).
    ppi = cmp.sel(estimator="ppi")
    cov, se = ppi["coverage"], ppi["coverage_mcse"]
    assert (np.abs(cov - 0.95) < 3 * se).all(), cov.values
    assert 0.935 <= float(cov.min()) and float(cov.max()) <= 0.957, cov.values
    assert (np.abs(ppi["bias"]) < 4 * ppi["bias_mcse"]).all(), ppi["bias"].values
