"""Tests for bayesjudge.compare.compare (pairwise Δθ per stratum, xarray layer)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bayesjudge as bj
from bayesjudge.compare import compare
from bayesjudge.core.bootstrap import bootstrap_difference
from bayesjudge.core.paired import rg_difference_se
from bayesjudge.data import JudgeCounts
from bayesjudge.warnings import LowJudgeQualityWarning, SmallSampleWarning

# Two strata, two systems, every pattern observed so the stored joint table is the full
# canonical 11, 10, 01, 00 table.
JOINT_2 = np.array([[450, 100, 50, 400], [30, 12, 3, 15]])
K_2 = JOINT_2[:, 0] + JOINT_2[:, 1], JOINT_2[:, 0] + JOINT_2[:, 2]
CAL_2 = {
    "m0": [[100, 25], [90, 26]],
    "tn": [[70, 20], [60, 21]],
    "m1": [[100, 30], [95, 30]],
    "tp": [[90, 28], [85, 27]],
}


def two_system_counts() -> JudgeCounts:
    n = JOINT_2.sum(axis=1)
    return JudgeCounts.from_counts(
        n=[n, n],
        k=[K_2[0], K_2[1]],
        **CAL_2,
        system=["a", "b"],
        stratum=["s", "t"],
        joint=JOINT_2,
    )


def test_bootstrap_two_systems_equals_bootstrap_difference():
    counts = two_system_counts()
    out = compare(counts, "bootstrap", "separate", n_resamples=3000, random_seed=4)
    cal = {f: np.array(v) for f, v in CAL_2.items()}
    ref = bootstrap_difference(
        *JOINT_2.T,
        cal["tn"][0], cal["m0"][0], cal["tp"][0], cal["m1"][0],
        cal["tn"][1], cal["m0"][1], cal["tp"][1], cal["m1"][1],
        n_resamples=3000,
        random_seed=4,
    )  # fmt: skip
    np.testing.assert_array_equal(out.estimate.sel(pair="a - b").values, ref.estimate)
    np.testing.assert_array_equal(out.ci.sel(pair="a - b", ci_bound="lower").values, ref.lower)
    np.testing.assert_array_equal(out.ci.sel(pair="a - b", ci_bound="upper").values, ref.upper)
    assert out.estimate.dims == ("pair", "stratum")
    assert out.ci.dims == ("pair", "stratum", "ci_bound")
    assert out.first.values.tolist() == ["a"] and out.second.values.tolist() == ["b"]
    assert "se" not in out
    assert out.attrs["paired"] is True
    assert out.attrs["shared_items"] == int(JOINT_2.sum())
    assert out.attrs["method"] == "bootstrap" and out.attrs["calibration"] == "separate"
    assert out.attrs["ci_prob"] == pytest.approx(0.95)
    assert out.attrs["n_resamples"] == 3000 and out.attrs["random_seed"] == "4"


def three_system_counts(with_joint: bool = True) -> JudgeCounts:
    frame = bj.simulate.simulate_paired_items(
        [0.55, 0.6, 0.7], [0.7, 0.75, 0.8], 0.9, n=600, correlation=0.5,
        system=["x", "y", "z"], random_seed=8,
    )  # fmt: skip
    frame["stratum"] = np.where(frame["item"] % 3 == 0, "hard", "easy")
    # Drop z's answers on items 0..49: those items are unshared (in n, k of x and y only).
    frame = frame[~((frame["system"] == "z") & (frame["item"] < 50))]
    cal = pd.DataFrame(
        {
            "system": np.repeat(["x", "y", "z"], 4),
            "stratum": np.tile(["easy", "easy", "hard", "hard"], 3),
            "judge": [1, 0, 1, 0] * 3,
            "human": [1, 0, 1, 0] * 3,
        }
    )
    cal = pd.concat([cal] * 40 + [cal.assign(judge=1 - cal["judge"])] * 8)
    return JudgeCounts.from_frames(
        frame, cal, system="system", stratum="stratum", item="item" if with_joint else None
    )


def test_delta_three_systems_equals_core_per_pair():
    counts = three_system_counts()
    assert counts.joint.attrs["unshared_items"] == {"x": 50, "y": 50, "z": 0}
    out = compare(counts, "delta", "separate")
    assert out.pair.values.tolist() == ["x - y", "x - z", "y - z"]
    for pair, (a, b) in zip(out.pair.values, [("x", "y"), ("x", "z"), ("y", "z")], strict=True):
        table = counts.pair_table(a, b)
        ca, cb = counts.sel(system=a), counts.sel(system=b)
        ref = rg_difference_se(
            *(table.sel(cell=c).values for c in ("11", "10", "01", "00")),
            *(ca.dataset[f].values.ravel() for f in ("tn", "m0", "tp", "m1")),
            *(cb.dataset[f].values.ravel() for f in ("tn", "m0", "tp", "m1")),
            k_a=ca.k.values.ravel(), n_a=ca.n.values.ravel(),
            k_b=cb.k.values.ravel(), n_b=cb.n.values.ravel(),
        )  # fmt: skip
        np.testing.assert_allclose(out.estimate.sel(pair=pair).values, ref.estimate, rtol=1e-12)
        np.testing.assert_allclose(out.se.sel(pair=pair).values, ref.se, rtol=1e-12)
        z = 1.959963984540054
        np.testing.assert_allclose(
            out.ci.sel(pair=pair, ci_bound="lower").values,
            np.clip(ref.estimate - z * ref.se, -1, 1),
            rtol=1e-9,
        )


def test_unpaired_without_joint_table():
    paired = three_system_counts()
    unpaired = three_system_counts(with_joint=False)
    assert not unpaired.has_joint
    out_u = compare(unpaired, "delta")
    out_p = compare(paired, "delta")
    assert out_u.attrs["paired"] is False and out_u.attrs["shared_items"] == 0
    np.testing.assert_allclose(out_u.estimate.values, out_p.estimate.values, rtol=1e-12)
    # Positively correlated correctness -> positively correlated verdicts -> the paired SE
    # is smaller in every pair and stratum.
    assert (out_p.se < out_u.se).all()
    a, b = unpaired.sel(system="x"), unpaired.sel(system="y")
    ref = rg_difference_se(
        0, 0, 0, 0,
        *(a.dataset[f].values.ravel() for f in ("tn", "m0", "tp", "m1")),
        *(b.dataset[f].values.ravel() for f in ("tn", "m0", "tp", "m1")),
        k_a=a.k.values.ravel(), n_a=a.n.values.ravel(),
        k_b=b.k.values.ravel(), n_b=b.n.values.ravel(),
    )  # fmt: skip
    np.testing.assert_allclose(out_u.se.sel(pair="x - y").values, ref.se, rtol=1e-12)
    boot = compare(unpaired, "bootstrap", n_resamples=1000, random_seed=1)
    assert boot.attrs["paired"] is False
    assert (boot.ci.sel(ci_bound="lower") <= boot.estimate).all()


def test_shared_calibration():
    tests = JudgeCounts.from_counts(
        n=1000, k=[550, 500], system=["a", "b"], joint=[450, 100, 50, 400]
    )
    calib = JudgeCounts.from_counts(m0=100, tn=70, m1=100, tp=90)
    counts = tests.with_calibration_from(calib)
    out = compare(counts, "bootstrap", "shared", random_seed=0)
    ref = bootstrap_difference(450, 100, 50, 400, 70, 100, 90, 100, shared_calibration=True,
                               random_seed=0)  # fmt: skip
    assert out.ci.sel(ci_bound="lower").item() == ref.lower
    assert out.ci.sel(ci_bound="upper").item() == ref.upper
    with pytest.raises(ValueError, match="use calibration='shared'"):
        compare(counts, "bootstrap", "separate")
    # Separate calibration sets pooled for "shared": same as pooled_calibration's table.
    separate = two_system_counts()
    pooled = separate.pooled_calibration()
    np.testing.assert_array_equal(
        compare(separate, "delta", "shared").se.values, compare(pooled, "delta", "shared").se.values
    )


def test_unusable_strata_are_nan_with_warnings():
    counts = JudgeCounts.from_counts(
        n=[[100, 0, 50], [100, 10, 50]],
        k=[[60, 0, 30], [50, 5, 20]],
        m0=[[40, 40, 0], [40, 40, 40]],
        tn=[[30, 30, 0], [28, 28, 30]],
        m1=[[40, 40, 40], [40, 40, 40]],
        tp=[[35, 35, 35], [36, 36, 35]],
        system=["a", "b"],
        stratum=["ok", "no-test", "no-cal"],
    )
    with (
        pytest.warns(SmallSampleWarning, match=r"no test items in strata \['no-test'\]"),
        pytest.warns(SmallSampleWarning, match=r"m0 = 0 or m1 = 0.*\['no-cal'\]"),
    ):
        out = compare(counts, "delta")
    assert np.isfinite(out.estimate.sel(stratum="ok").values).all()
    assert np.isnan(out.estimate.sel(stratum=["no-test", "no-cal"]).values).all()
    chance = JudgeCounts.from_counts(
        n=100, k=[60, 50], m0=40, tn=[20, 30], m1=40, tp=[20, 35], system=["a", "b"]
    )
    with pytest.warns(LowJudgeQualityWarning, match="no better than chance"):
        out = compare(chance, "bootstrap", n_resamples=1000, random_seed=0)
    assert np.isnan(out.estimate.values).all()


def test_errors():
    counts = two_system_counts()
    with pytest.raises(ValueError, match="method must be one of"):
        compare(counts, "wald")
    with pytest.raises(ValueError, match="calibration must be one of"):
        compare(counts, calibration="own")
    with pytest.raises(ValueError, match="at least two systems"):
        compare(counts.sel(system="a"))


def test_one_unusable_system_does_not_blank_the_other_pairs():
    # Review bug: system b has no test items in stratum y (and, in stratum z, no truly
    # incorrect calibration item), which used to make every pair NaN there. Pairs without b
    # are now compared, and equal the comparison of the sub-counts without b (the bootstrap
    # exactly: a lone partial stratum draws from a fresh stream of the same seed).
    counts = JudgeCounts.from_counts(
        n=[[100, 50, 60], [120, 0, 60], [100, 50, 60]],
        k=[[60, 30, 40], [70, 0, 30], [50, 20, 35]],
        m0=[[50, 50, 50], [50, 50, 0], [50, 50, 50]],
        tn=[[40, 40, 40], [40, 40, 0], [40, 40, 42]],
        m1=50,
        tp=[[45, 45, 45], [45, 45, 45], [45, 45, 44]],
        system=["a", "b", "c"],
        stratum=["x", "y", "z"],
    )
    with (
        pytest.warns(SmallSampleWarning, match=r"no test items .*'y' \('b'\)"),
        pytest.warns(SmallSampleWarning, match=r"m0 = 0 or m1 = 0.*'z' \('b'\)"),
    ):
        delta = compare(counts, "delta")
    assert np.isfinite(delta.estimate.sel(stratum="x")).all()
    for stratum in ("y", "z"):
        assert np.isnan(delta.estimate.sel(stratum=stratum, pair=["a - b", "b - c"])).all()
        sub = compare(counts.sel(system=["a", "c"], stratum=stratum), "delta")
        got = delta.sel(stratum=stratum, pair="a - c")
        np.testing.assert_array_equal(got.ci.values, sub.ci.values.ravel())
        assert got.se.item() == sub.se.item()
    lone = counts.sel(stratum="y")
    with pytest.warns(SmallSampleWarning):
        boot = compare(lone, "bootstrap", n_resamples=2000, random_seed=4)
    sub = compare(lone.sel(system=["a", "c"]), "bootstrap", n_resamples=2000, random_seed=4)
    np.testing.assert_array_equal(boot.ci.sel(pair="a - c").values, sub.ci.values[0])
    with pytest.warns(SmallSampleWarning):
        both = compare(counts, "bootstrap", n_resamples=500, random_seed=4)
    assert np.isfinite(both.ci.sel(pair="a - c").values).all()
    assert np.isnan(both.ci.sel(pair="a - b", stratum=["y", "z"]).values).all()
