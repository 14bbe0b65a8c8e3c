"""One calibration set attached to every system counts once (calibration_shared_over)."""

import numpy as np
import pytest
import xarray as xr

import bayesjudge as bj
from bayesjudge.data import SHARED_ATTR

SYSTEMS = ["a", "b", "c"]


@pytest.fixture
def attached():
    tests = bj.JudgeCounts.from_counts(n=[100, 80, 60], k=[70, 50, 30], system=SYSTEMS)
    return tests.with_calibration_from(bj.JudgeCounts.from_counts(m0=40, tn=30, m1=60, tp=54))


def test_with_calibration_from_records_the_shared_dims(attached):
    assert attached.calibration_shared_over == ("system",)
    assert attached.dataset.attrs[SHARED_ATTR] == "system"
    per_system = bj.JudgeCounts.from_counts(
        m0=[40, 41, 42], tn=[30, 31, 32], m1=60, tp=54, system=SYSTEMS
    )
    tests = bj.JudgeCounts.from_counts(n=[100, 80, 60], k=[70, 50, 30], system=SYSTEMS)
    assert tests.with_calibration_from(per_system).calibration_shared_over == ()


def test_pool_counts_a_shared_set_once(attached):
    pooled = attached.pool("system")
    assert pooled.n.item() == 240 and pooled.m0.item() == 40 and pooled.tp.item() == 54
    assert pooled.calibration_shared_over == ()


def test_pooled_calibration_is_idempotent_and_sums_distinct_sets(attached):
    assert attached.pooled_calibration("system").m0.values.ravel().tolist() == [40, 40, 40]
    own = bj.JudgeCounts.from_counts(
        n=[100, 80], k=[70, 50], m0=[20, 30], tn=[15, 20], m1=[30, 20], tp=[27, 18],
        system=["a", "b"],
    )  # fmt: skip
    once = own.pooled_calibration("system")
    assert once.m0.values.ravel().tolist() == [50, 50]
    assert once.calibration_shared_over == ("system",)
    twice = once.pooled_calibration("system")
    xr.testing.assert_identical(twice.dataset, once.dataset)


def test_estimate_shared_uses_the_attached_set_once(attached):
    shared = bj.estimate(attached, calibration="shared")
    own = bj.estimate(attached, calibration="own")
    # Every system carries exactly the one set, so pooling must change nothing.
    xr.testing.assert_allclose(shared["estimate"], own["estimate"])
    xr.testing.assert_allclose(shared["ci"], own["ci"])
    np.testing.assert_allclose(shared["q0_hat"].values, 30 / 40)


def test_constructor_rejects_an_attribute_that_contradicts_the_counts():
    ds = bj.JudgeCounts.from_counts(
        n=[10, 20], k=[5, 9], m0=[4, 5], tn=[3, 3], m1=6, tp=5, system=["a", "b"]
    ).dataset.assign_attrs({SHARED_ATTR: "system"})
    with pytest.raises(
        ValueError, match=r"says its calibration is shared over 'system' .* but m0 differs"
    ):
        bj.JudgeCounts(ds)
    with pytest.raises(ValueError, match=r"must name dims among \['system', 'stratum'\]"):
        bj.JudgeCounts(ds.assign_attrs({SHARED_ATTR: "judge"}))


def test_shared_calibration_counts_cannot_split_one_set(attached):
    with pytest.raises(ValueError, match=r"one calibration set shared over \['system'\]"):
        attached.shared_calibration_counts(["stratum"])
    assert attached.shared_calibration_counts(["system"])["m0"].values.tolist() == [40]
