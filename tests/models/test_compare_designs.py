"""compare_designs: Δθ under each calibration design, stacked, equal to the individual fits."""

import warnings

import numpy as np
import pytest
import xarray as xr

import bayesjudge as bj
from bayesjudge.models.fit import compare_designs

# Two systems, one stratum; the judge's specificity differs between them (tn 128 vs 104 of 150),
# so ΔJ ≈ −0.16 and a shared calibration set moves Δθ.
COUNTS = bj.JudgeCounts.from_counts(
    n=[800, 800],
    k=[520, 560],
    m0=[150, 150],
    tn=[128, 104],
    m1=[150, 150],
    tp=[133, 140],
    system=["a", "b"],
)


@pytest.fixture(scope="module")
def table():
    # The judge differs between the systems (the point of the comparison): the shared design's
    # fit says so before its numbers.
    with pytest.warns(bj.PooledCalibrationWarning, match="Pooled calibration does not fit"):
        return compare_designs(COUNTS, designs=["separate", "shared"], random_seed=11)


# slow tier: kept out of `make test` (15-minute budget), run by `make test-slow` in CI
@pytest.mark.slow
def test_each_design_equals_its_own_fit(table):
    seeds = np.random.SeedSequence(11).generate_state(3).tolist()
    for design, seed, pool in (
        ("separate", seeds[0], {}),
        ("shared", seeds[1], {"pool_over": "system"}),
    ):
        with warnings.catch_warnings():  # the shared fit warns as in the fixture
            warnings.simplefilter("ignore", bj.PooledCalibrationWarning)
            own = bj.fit(COUNTS, calibration=design, random_seed=int(seed), **pool).compare()
        got = table.sel(design=design)
        for var in ("mean", "median", "sd", "prob_greater"):
            np.testing.assert_array_equal(got[var].values, own[var].values, err_msg=var)
        np.testing.assert_array_equal(got["ci"].values, own["ci"].values)
    assert table.attrs["design_seeds"] == str([int(s) for s in seeds[:2]])


# slow tier: kept out of `make test` (15-minute budget), run by `make test-slow` in CI
@pytest.mark.slow
def test_attrs_carry_the_supported_design(table):
    seed = int(np.random.SeedSequence(11).generate_state(3)[-1])
    diagnostics = bj.judge_diagnostics(COUNTS, random_seed=seed)
    assert table.attrs["recommendation"] == diagnostics.attrs["recommendation"]
    assert table.attrs["supported_design"] == diagnostics.attrs["design"]
    assert table.attrs["ci_prob"] == 0.95 and table.attrs["ci_kind"] == "eti"
    assert set(table["ci"].dims) == {"design", "pair", "stratum", "ci_bound"}


# slow tier: kept out of `make test` (15-minute budget), run by `make test-slow` in CI
@pytest.mark.slow
def test_shared_design_moves_delta_theta_by_about_the_app_c_bias(table):
    # Fiedler App. C at the estimates (pooled calibration) predicts how far the shared design
    # moves Δθ; the posterior means differ by that amount up to the posterior's own spread.
    shift = table["mean"].sel(design="shared") - table["mean"].sel(design="separate")
    q0 = COUNTS.q0_hat().values.ravel()
    q1 = COUNTS.q1_hat().values.ravel()
    p = COUNTS.p_hat().values.ravel()
    theta = (p + q0 - 1) / (q0 + q1 - 1)
    q0_c = COUNTS.tn.values.sum() / COUNTS.m0.values.sum()
    q1_c = COUNTS.tp.values.sum() / COUNTS.m1.values.sum()
    moved = bj.core.paired.shared_calibration_shift(theta, q0, q1, q0_c, q1_c)
    expected = moved[0] - moved[1]
    sd = float(table["sd"].sel(design="separate").item())
    assert abs(expected) > sd  # the design matters here
    assert float(shift.item()) == pytest.approx(expected, abs=sd / 2)
    assert isinstance(table, xr.Dataset)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"designs": ["separate", "pooled"]}, "designs must be distinct values"),
        ({"designs": ["shared", "shared"]}, "designs must be distinct values"),
        ({"calibration": "shared"}, "sets \\['calibration'\\] itself"),
        ({"pool_over": "system"}, "sets \\['pool_over'\\] itself"),
    ],
)
def test_bad_options_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        compare_designs(COUNTS, **kwargs)


def test_one_system_is_refused():
    with pytest.raises(ValueError, match="needs at least 2"):
        compare_designs(COUNTS.sel(system=["a"]))
