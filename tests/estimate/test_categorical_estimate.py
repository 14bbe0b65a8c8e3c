"""estimate_categorical / compare_categorical: the core applied to every group, as xarray.

References: the numpy core (bayesjudge.core.categorical, itself tested against exact
solutions, a numerical Jacobian and scipy), and at K = 2 the binary bj.estimate / bj.compare
(counts converted with CategoricalCounts.from_judge_counts), to 1e-12.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from bayesjudge.categorical_estimate import (
    compare_categorical,
    estimate_categorical,
    score_vector,
)
from bayesjudge.compare import compare
from bayesjudge.core.categorical import (
    categorical_interval,
    rogan_gladen_categorical,
    score_difference,
)
from bayesjudge.data import CategoricalCounts, JudgeCounts
from bayesjudge.estimate import estimate
from bayesjudge.warnings import (
    IllConditionedJudgeWarning,
    LowJudgeQualityWarning,
    SmallSampleWarning,
)

CATS = ["A", "tie", "B"]
WIN = {"A": 1, "tie": 0.5, "B": 0}
CAL = np.array([[80, 15, 5], [10, 80, 10], [5, 15, 80]])


def _counts():
    test = np.array([[[400, 200, 400], [350, 100, 550]], [[300, 200, 500], [500, 50, 450]]])
    cal = np.stack([np.stack([CAL, CAL + 1]), np.stack([CAL + 2, CAL])])
    return CategoricalCounts.from_counts(test=test, calibration=cal, categories=CATS,
                                         system=["x", "y"], stratum=["s1", "s2"])  # fmt: skip


def test_every_group_equals_the_core():
    counts = _counts()
    out = estimate_categorical(counts, scores=WIN)
    test = counts.test.values
    cal = counts.calibration.values
    core = categorical_interval(test, cal)
    assert np.allclose(out["estimate"].values, core.estimate, atol=1e-15)
    assert np.allclose(out["ci"].sel(ci_bound="lower").values, core.lower, atol=1e-15)
    assert np.allclose(out["ci"].sel(ci_bound="upper").values, core.upper, atol=1e-15)
    score = categorical_interval(test, cal, [1, 0.5, 0])
    assert np.allclose(out["score_ci"].values, np.stack([score.lower, score.upper], -1))
    assert np.allclose(out["estimate_raw"].values, rogan_gladen_categorical(test, cal).raw)
    assert out.attrs["ci_prob"] == 0.95 and out.attrs["method"] == "delta"
    assert json.loads(out.attrs["categories"]) == CATS
    assert json.loads(out.attrs["scores"]) == {"A": 1.0, "tie": 0.5, "B": 0.0}
    assert list(out["ci_bound"].values) == ["lower", "upper"]
    assert set(out["estimate"].dims) == {"system", "stratum", "category"}


def test_k2_equals_the_binary_estimate():
    binary = JudgeCounts.from_counts(n=[1000, 800], k=[400, 620], m0=200, tn=140, m1=200,
                                     tp=[180, 150], system=["a", "b"])  # fmt: skip
    cat = CategoricalCounts.from_judge_counts(binary)
    ours = estimate_categorical(cat, method="wald")
    theirs = estimate(binary)
    diff = ours["estimate"].sel(category="correct") - theirs["estimate"]
    assert float(abs(diff).max()) < 1e-12
    # The conditioning diagnostic is J there: determinant = J, sigma_min = |J|.
    assert float(abs(ours["determinant"] - theirs["youden"]).max()) < 1e-12
    assert float(abs(ours["sigma_min"] - abs(theirs["youden"])).max()) < 1e-12


def test_k2_compare_delta_equals_the_binary_compare():
    binary = JudgeCounts.from_counts(n=[1000, 800], k=[400, 620], m0=[200, 150], tn=[140, 120],
                                     m1=[200, 250], tp=[180, 210], system=["a", "b"])  # fmt: skip
    cat = CategoricalCounts.from_judge_counts(binary)
    ours = compare_categorical(cat, scores={"incorrect": 0, "correct": 1})
    theirs = compare(binary, method="delta")
    assert float(abs(ours["estimate"] - theirs["estimate"]).max()) < 1e-12
    assert float(abs(ours["se"] - theirs["se"]).max()) < 1e-12


def test_scores_and_their_errors():
    assert score_vector({1: 0, 2: 1, 3: 2}, [1, 2, 3]).tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="missing \\['B'\\]"):
        estimate_categorical(_counts(), scores={"A": 1, "tie": 0.5})
    with pytest.raises(ValueError, match="not a category \\['C'\\]"):
        estimate_categorical(_counts(), scores={**WIN, "C": 2})
    with pytest.raises(TypeError, match="scores must be a dict"):
        estimate_categorical(_counts(), scores=[1, 0.5, 0])
    with pytest.raises(ValueError, match="method must be one of"):
        estimate_categorical(_counts(), method="likelihood")
    with pytest.raises(TypeError, match="CategoricalCounts"):
        estimate_categorical(np.zeros(3))


def test_unusable_groups_are_nan_with_warnings():
    test = np.array([[300, 200, 500], [0, 0, 0], [300, 200, 500], [300, 200, 500]])
    cal = np.stack([CAL, CAL, CAL * [[1], [0], [1]], [[10, 5, 5], [10, 5, 5], [2, 3, 15]]])
    systems = ["ok", "no-test", "no-row", "singular"]
    counts = CategoricalCounts.from_counts(
        test=test, calibration=cal, categories=CATS, system=systems
    )
    with (
        pytest.warns(SmallSampleWarning, match="No test items in system=no-test"),
        pytest.warns(SmallSampleWarning, match="no calibration items in system=no-row"),
        pytest.warns(IllConditionedJudgeWarning, match="singular in system=singular"),
    ):
        out = estimate_categorical(counts, scores=WIN)
    est = out["estimate"].squeeze("stratum")
    assert np.isfinite(est.sel(system="ok")).all()
    assert np.isnan(est.sel(system=["no-test", "no-row", "singular"])).all()
    ci = out["score_ci"].sel(system="singular").squeeze()
    assert ci.values.tolist() == [0.0, 1.0]  # the whole range, never a silent NaN
    assert issubclass(IllConditionedJudgeWarning, LowJudgeQualityWarning)


def test_low_conditioning_warns_with_the_amplification():
    weak = np.array([[40, 35, 25], [33, 34, 33], [25, 35, 40]])
    counts = CategoricalCounts.from_counts(test=[300, 300, 400], calibration=weak,
                                           categories=CATS)  # fmt: skip
    with pytest.warns(IllConditionedJudgeWarning, match=r"amplifies sampling errors up to \d+x"):
        out = estimate_categorical(counts)
    assert float(out["amplification"].squeeze()) > 5


def test_shared_calibration_pools_the_systems():
    counts = _counts()
    out = estimate_categorical(counts, calibration="shared")
    pooled = counts.calibration.sum("system").values  # (stratum, truth, verdict)
    core = rogan_gladen_categorical(counts.test.values, pooled[None])
    assert np.allclose(out["estimate"].values, core.theta, atol=1e-15)


def test_bootstrap_is_seeded_and_close_to_the_delta_interval():
    counts = _counts()
    a = estimate_categorical(counts, method="bootstrap", scores=WIN, random_seed=3)
    b = estimate_categorical(counts, method="bootstrap", scores=WIN, random_seed=3)
    assert a.identical(b)
    d = estimate_categorical(counts, scores=WIN)
    assert float(abs(a["score_ci"] - d["score_ci"]).max()) < 0.02
    assert a.attrs["n_resamples"] == 2000 and a.attrs["bootstrap_design"] == "stratified"


def test_compare_equals_the_core_and_shared_is_narrower():
    counts = _counts()
    out = compare_categorical(counts, scores=WIN)
    t, c = counts.test.values, counts.calibration.values
    core = score_difference(t[0], t[1], c[0], c[1], [1, 0.5, 0])
    assert np.allclose(out["estimate"].values[0], core.estimate)
    assert np.allclose(out["se"].values[0], core.se)
    shared = compare_categorical(counts, scores=WIN, calibration="shared")
    assert (shared["se"] < out["se"]).all()
    boot = compare_categorical(counts, scores=WIN, method="bootstrap", random_seed=1)
    assert float(abs(boot["ci"] - out["ci"]).max()) < 0.03
    with pytest.raises(ValueError, match="at least two systems"):
        compare_categorical(counts.sel(system="x"), scores=WIN)


def test_compare_delta_coverage():
    # 2,000 simulated pairs of independent systems with separate calibration sets; the delta
    # Wald interval of the win-rate difference covers within 0.95 ± 3 MC-SE (0.0146).
    rng = np.random.default_rng(11)
    conf = CAL / CAL.sum(1, keepdims=True)
    theta_a, theta_b = np.array([0.5, 0.2, 0.3]), np.array([0.4, 0.2, 0.4])
    v = np.array([1.0, 0.5, 0.0])
    reps = 2000

    def draw(theta):
        x = rng.multinomial(600, theta @ conf, size=reps)
        c = np.stack([rng.multinomial(100, conf[i], size=reps) for i in range(3)], axis=1)
        return x, c

    (xa, ca), (xb, cb) = draw(theta_a), draw(theta_b)
    res = score_difference(xa, xb, ca, cb, v)
    truth = (theta_a - theta_b) @ v
    covered = ((res.lower <= truth) & (truth <= res.upper)).mean()
    assert abs(covered - 0.95) <= 3 * np.sqrt(0.95 * 0.05 / reps), covered
