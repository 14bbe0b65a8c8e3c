"""Tests of bayesjudge.estimate: the xarray layer over the closed-form core."""

import re

import numpy as np
import pytest
import xarray as xr
from reference_lee import confidence_interval, point_estimator

from bayesjudge.core.bootstrap import bootstrap_rogan_gladen
from bayesjudge.core.naive import naive
from bayesjudge.core.ppi import ppi_mean
from bayesjudge.data import JudgeCounts
from bayesjudge.estimate import estimate
from bayesjudge.simulate import simulate_counts
from bayesjudge.warnings import LowJudgeQualityWarning, SmallSampleWarning


def _two_by_two():
    # Two systems x two strata with good judges (J >= 0.5) and full calibration.
    return JudgeCounts.from_counts(
        n=[[1000, 500], [800, 300]],
        k=[[400, 260], [500, 90]],
        m0=[[200, 100], [150, 80]],
        tn=[[140, 75], [120, 60]],
        m1=[[200, 100], [150, 90]],
        tp=[[180, 88], [130, 80]],
        system=["a", "b"],
        stratum=["x", "y"],
    )


def test_published_value_through_estimate():
    # Lee et al. Appendix C / README: confidence_interval(0.4, 0.7, 0.9, 1000, 200, 200, 0.05)
    # = (0.05635072484160894, 0.2627330257859588);
    # point_estimator(0.4, 0.7, 0.9) = 0.1666666666666668.
    counts = JudgeCounts.from_counts(n=1000, k=400, m0=200, tn=140, m1=200, tp=180)
    result = estimate(counts, method="lang-reiczigel", alpha=0.05)
    assert float(result["estimate"].squeeze()) == pytest.approx(0.1666666666666668, abs=1e-12)
    np.testing.assert_allclose(
        result["ci"].squeeze().values, [0.05635072484160894, 0.2627330257859588], atol=1e-12
    )


def test_lang_reiczigel_per_group_equals_reference():
    counts = _two_by_two()
    result = estimate(counts, method="lang-reiczigel", alpha=0.1)
    ds = counts.dataset
    for s in ds["system"].values:
        for t in ds["stratum"].values:
            g = {
                v: float(ds[v].sel(system=s, stratum=t)) for v in ("n", "k", "m0", "tn", "m1", "tp")
            }
            p, q0, q1 = g["k"] / g["n"], g["tn"] / g["m0"], g["tp"] / g["m1"]
            ref = confidence_interval(p, q0, q1, g["n"], g["m0"], g["m1"], 0.1)
            got = result["ci"].sel(system=s, stratum=t).values
            np.testing.assert_allclose(got, ref, atol=1e-12)
            assert float(result["estimate"].sel(system=s, stratum=t)) == pytest.approx(
                point_estimator(p, q0, q1), abs=1e-12
            )


def test_result_vocabulary():
    result = estimate(_two_by_two(), alpha=0.1)
    assert isinstance(result, xr.Dataset)
    assert result["ci"].dims == ("system", "stratum", "ci_bound")
    assert result["ci_bound"].values.tolist() == ["lower", "upper"]
    assert result["system"].values.tolist() == ["a", "b"]
    assert result["stratum"].values.tolist() == ["x", "y"]
    assert result.attrs["ci_prob"] == pytest.approx(0.9)
    assert result.attrs["method"] == "lang-reiczigel"
    assert {"ci_kind", "calibration", "random_seed", "bayesjudge_version"} <= set(result.attrs)
    lower, upper = result["ci"].sel(ci_bound="lower"), result["ci"].sel(ci_bound="upper")
    assert bool(((0 <= lower) & (lower <= upper) & (upper <= 1)).all())


@pytest.mark.parametrize("method", ["naive", "bootstrap", "ppi++"])
def test_other_methods_equal_core_functions(method):
    counts = _two_by_two()
    result = estimate(counts, method=method, alpha=0.05, random_seed=7, n_resamples=2000)
    ds = counts.dataset.transpose("system", "stratum")
    n, k, m0, tn, m1, tp = (ds[v].values for v in ("n", "k", "m0", "tn", "m1", "tp"))
    if method == "naive":
        expected = naive(k.ravel(), n.ravel(), alpha=0.05, method="wilson")
    elif method == "ppi++":
        expected = ppi_mean(k.ravel(), n.ravel(), tn.ravel(), m0.ravel(), tp.ravel(), m1.ravel())
    else:
        expected = bootstrap_rogan_gladen(
            k.ravel(),
            n.ravel(),
            tn.ravel(),
            m0.ravel(),
            tp.ravel(),
            m1.ravel(),
            alpha=0.05,
            n_resamples=2000,
            random_seed=7,
        )
    np.testing.assert_allclose(result["estimate"].values.ravel(), expected[0], atol=1e-12)
    np.testing.assert_allclose(result["ci"].values[..., 0].ravel(), expected[1], atol=1e-12)
    np.testing.assert_allclose(result["ci"].values[..., 1].ravel(), expected[2], atol=1e-12)
    assert result.attrs["method"] == method


def test_bootstrap_is_reproducible_with_seed():
    counts = _two_by_two()
    a = estimate(counts, method="bootstrap", random_seed=3, n_resamples=1000)
    b = estimate(counts, method="bootstrap", random_seed=3, n_resamples=1000)
    xr.testing.assert_identical(a, b)
    assert a.attrs["random_seed"] == "3"
    assert a.attrs["n_resamples"] == 1000


def test_shared_calibration_pools_over_systems():
    counts = _two_by_two()
    shared = estimate(counts, calibration="shared")
    ds = counts.dataset
    for t in ["x", "y"]:
        pool = {v: float(ds[v].sel(stratum=t).sum()) for v in ("m0", "tn", "m1", "tp")}
        for s in ["a", "b"]:
            n, k = float(ds["n"].sel(system=s, stratum=t)), float(ds["k"].sel(system=s, stratum=t))
            ref = confidence_interval(
                k / n, pool["tn"] / pool["m0"], pool["tp"] / pool["m1"], n, pool["m0"], pool["m1"]
            )
            np.testing.assert_allclose(
                shared["ci"].sel(system=s, stratum=t).values, ref, atol=1e-12
            )
    assert shared.attrs["calibration"] == "shared"


def test_group_without_calibration_warns_and_shared_fixes_it():
    counts = JudgeCounts.from_counts(
        n=[1000, 1000],
        k=[400, 600],
        m0=[100, 0],
        tn=[70, 0],
        m1=[100, 0],
        tp=[90, 0],
        system=["with-cal", "no-cal"],
    )
    with pytest.warns(SmallSampleWarning, match=r"system=no-cal/stratum=all.*calibration='shared'"):
        own = estimate(counts)
    assert np.isnan(own["estimate"].sel(system="no-cal")).all()
    assert np.isfinite(own["estimate"].sel(system="with-cal")).all()
    shared = estimate(counts, calibration="shared")
    assert np.isfinite(shared["estimate"]).all()
    # naive needs no calibration, so no warning either
    assert np.isfinite(estimate(counts, method="naive")["estimate"]).all()


def test_calibration_only_group_warns():
    counts = JudgeCounts.from_counts(
        n=[1000, 0],
        k=[400, 0],
        m0=[100, 50],
        tn=[70, 40],
        m1=[100, 50],
        tp=[90, 45],
        system=["tested", "calibration-only"],
    )
    with pytest.warns(SmallSampleWarning, match=r"No test items in system=calibration-only"):
        result = estimate(counts)
    assert np.isnan(result["estimate"].sel(system="calibration-only")).all()


def test_low_judge_quality_warns_with_numbers_and_gives_honest_interval():
    # J_hat = 0.55 + 0.5 - 1 = 0.05: amplification about 20x.
    counts = JudgeCounts.from_counts(n=1000, k=480, m0=100, tn=55, m1=100, tp=50)
    with pytest.warns(LowJudgeQualityWarning, match=r"J = 0\.05.*amplified about 20x"):
        result = estimate(counts)
    lower, upper = result["ci"].squeeze().values
    assert 0 <= lower <= upper <= 1
    assert upper - lower > 0.5  # honest: very wide


def test_judge_worse_than_chance_is_named_and_amplified_by_one_over_abs_j():
    # J_hat = 0.2 + 0.2 - 1 = -0.6 with m0 = m1 = 100: clearly below 0, so the message says
    # "worse than chance" (swapped labels?) with amplification 1/|J| = 1.7, not "without bound".
    counts = JudgeCounts.from_counts(n=1000, k=500, m0=100, tn=20, m1=100, tp=20)
    with pytest.warns(LowJudgeQualityWarning) as record:
        estimate(counts)
    (message,) = [str(w.message) for w in record]
    assert re.search(r"worse than chance.*J = -0\.60 .*amplified about 2x", message)
    assert "swapped labels" in message and "without bound" not in message
    # J_hat = 0.45 + 0.45 - 1 = -0.1: near chance, amplified 1/|J| = 10x.
    counts = JudgeCounts.from_counts(n=1000, k=500, m0=100, tn=45, m1=100, tp=45)
    with pytest.warns(LowJudgeQualityWarning, match=r"near 0\) in .*J = -0\.10 .*about 10x"):
        estimate(counts)


def test_tiny_calibration_warns_that_judge_quality_is_uncertain():
    # J_hat = 2/3 + 3/3 - 1 = 0.67 from 3 + 3 calibration items; its Newcombe interval (the
    # one low-J rule, core.kernels.low_j; it was Agresti-Caffo's (-0.154, 0.954) before)
    # youden(2, 3, 3, 3, method="newcombe") = (-0.059, 0.939) cannot exclude 0.
    counts = JudgeCounts.from_counts(n=100, k=40, m0=3, tn=2, m1=3, tp=3)
    with pytest.warns(LowJudgeQualityWarning, match=r"uncertain.*J = 0\.67 \(95% interval -0\.06"):
        estimate(counts)


def test_chance_level_judge_gives_full_interval_not_nan():
    # q0_hat = q1_hat = 0.5 and m0 = m1: J_hat = J_tilde = 0, theta is not identified.
    counts = JudgeCounts.from_counts(n=200, k=100, m0=10, tn=5, m1=10, tp=5)
    with pytest.warns(LowJudgeQualityWarning, match="undefined there and reported as NaN"):
        result = estimate(counts)
    np.testing.assert_array_equal(result["ci"].squeeze().values, [0.0, 1.0])
    assert np.isnan(float(result["estimate"].squeeze()))


def test_bootstrap_with_chance_level_group_keeps_other_groups():
    counts = JudgeCounts.from_counts(
        n=[200, 1000],
        k=[100, 400],
        m0=[10, 100],
        tn=[5, 70],
        m1=[10, 100],
        tp=[5, 90],
        system=["chance", "good"],
    )
    with pytest.warns(LowJudgeQualityWarning, match="system=chance"):
        result = estimate(counts, method="bootstrap", random_seed=1, n_resamples=2000)
    np.testing.assert_array_equal(result["ci"].sel(system="chance").squeeze().values, [0, 1])
    assert np.isnan(float(result["estimate"].sel(system="chance").squeeze()))
    good = result.sel(system="good").squeeze()
    assert float(good["estimate"]) == pytest.approx(1 / 6)
    assert 0 < float(good["ci"][0]) < 1 / 6 < float(good["ci"][1]) < 1


def test_coverage_through_estimate_matches_nominal():
    # End-to-end: 4000 simulated groups at theta = 0.3 with the paper's judge; the share of
    # Lang-Reiczigel intervals covering theta must be within 3 Monte Carlo SE of 0.95.
    groups = 4000
    counts = simulate_counts(
        0.3,
        0.7,
        0.9,
        n=1000,
        m0=100,
        m1=100,
        system=[f"s{i}" for i in range(groups)],
        random_seed=20261126,
    )
    # broadcasting scalars over 4000 system labels needs arrays of that length
    result = estimate(counts)
    lower, upper = result["ci"].sel(ci_bound="lower"), result["ci"].sel(ci_bound="upper")
    coverage = float(((lower <= 0.3) & (0.3 <= upper)).mean())
    mcse = np.sqrt(0.95 * 0.05 / groups)
    assert abs(coverage - 0.95) <= 3 * mcse, coverage


def test_bad_arguments_are_named():
    counts = _two_by_two()
    with pytest.raises(ValueError, match="method must be one of"):
        estimate(counts, method="magic")
    with pytest.raises(ValueError, match="calibration must be one of"):
        estimate(counts, calibration="borrowed")
    with pytest.raises(ValueError, match="alpha"):
        estimate(counts, alpha=1.5)
    with pytest.raises(TypeError, match="JudgeCounts"):
        estimate({"n": 1})
