"""Hostile input to the closed-form entry points: never a wrong number quietly (issue 13).

Each test pins a behaviour that was wrong before: a bootstrap of one resample whose interval
excluded its own estimate, counts rounded above 2**53, NaN bounds at tiny alpha, a budget split
that did not add up, PPI++ answering [1, 1] from labelled items of one kind, warnings that
spoke of the wrong method, and raw numpy errors for bad shapes and seeds.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import bayesjudge as bj
from bayesjudge.core._validation import MAX_COUNT, MIN_ALPHA
from bayesjudge.core.correction import LR_MIN_ALPHA
from bayesjudge.core.kernels import youden_is_zero
from bayesjudge.warnings import LowJudgeQualityWarning, SmallSampleWarning

RG = (400, 1000, 70, 100, 90, 100)  # k, n, tn, m0, tp, m1 (Lee et al.'s example)
TABLE = (450, 100, 50, 400, 70, 100, 90, 100)  # n11, n10, n01, n00, tn_a, m0_a, tp_a, m1_a
CELLS = [[1, 1], [1, 0], [0, 1], [0, 0]]


def _two_systems():
    tests = bj.JudgeCounts.from_counts(
        n=1000, k=[550, 500], system=["a", "b"], joint=[450, 100, 50, 400]
    )
    return tests.with_calibration_from(bj.JudgeCounts.from_counts(m0=100, tn=70, m1=100, tp=90))


def _bootstraps(n_resamples, alpha=0.05, random_seed=0):
    """Every bootstrap entry point, called with the given options."""
    common = dict(n_resamples=n_resamples, alpha=alpha, random_seed=random_seed)
    return {
        "bootstrap_rogan_gladen": lambda: bj.bootstrap_rogan_gladen(*RG, **common),
        "bootstrap_difference": lambda: bj.core.bootstrap_difference(
            *TABLE, shared_calibration=True, **common
        ),
        "paired_bootstrap": lambda: bj.core.paired_bootstrap(
            [450, 100, 50, 400], CELLS, 70, 100, 90, 100, shared_calibration=True, **common
        ),
        "estimate(method='bootstrap')": lambda: bj.estimate(
            bj.JudgeCounts.from_counts(n=1000, k=400, m0=100, tn=70, m1=100, tp=90),
            method="bootstrap",
            **common,
        ),
        "compare(method='bootstrap')": lambda: bj.compare(
            _two_systems(), "bootstrap", calibration="shared", **common
        ),
    }


# --- item 5: a bootstrap too small to mean anything ------------------------------------------


def test_one_resample_no_longer_gives_an_interval_excluding_the_estimate():
    # Before: EstimateInterval(0.1667, 0.1982, 0.1982), an interval that excludes its estimate.
    with pytest.raises(ValueError, match=r"n_resamples must be a whole number of at least 100"):
        bj.bootstrap_rogan_gladen(*RG, n_resamples=1, random_seed=0)


@pytest.mark.parametrize("name", list(_bootstraps(1)))
@pytest.mark.parametrize("n_resamples", [1, 99])
def test_fewer_than_100_resamples_are_refused_everywhere(name, n_resamples):
    with pytest.raises(ValueError, match=rf"{re.escape(name)}: n_resamples .* at least 100"):
        _bootstraps(n_resamples)[name]()


@pytest.mark.parametrize("name", list(_bootstraps(1)))
def test_fewer_than_1000_resamples_warn_once_naming_the_method(name):
    with pytest.warns(SmallSampleWarning) as record:
        _bootstraps(100)[name]()
    small = [w for w in record if issubclass(w.category, SmallSampleWarning)]
    assert len(small) == 1, [str(w.message) for w in small]
    message = str(small[0].message)
    assert message.startswith(f"{name}: n_resamples=100 is below 1000")
    assert "Monte Carlo error" in message and "n_resamples >= 1,000" in message


@pytest.mark.parametrize("name", list(_bootstraps(1)))
def test_1000_resamples_do_not_warn(name):
    _bootstraps(1000)[name]()  # filterwarnings=error would turn a warning into a failure


@pytest.mark.parametrize("name", list(_bootstraps(1)))
def test_alpha_beyond_the_most_extreme_replicate_is_refused(name):
    # 10_000 replicates hold 0.5 beyond each end at alpha = 1e-4: the "interval" would be the
    # extreme replicates, labelled 99.99 %.
    with pytest.raises(ValueError, match=r"too few for alpha=0\.0001.*n_resamples >= 200,000"):
        _bootstraps(10_000, alpha=1e-4)[name]()


def test_thin_tails_warn_even_with_many_resamples():
    with pytest.warns(SmallSampleWarning, match=r"only 4\.5 of the 9000 replicates lie beyond"):
        bj.bootstrap_rogan_gladen(*RG, n_resamples=9000, alpha=1e-3, random_seed=0)


# --- item 6: numbers beyond float precision ----------------------------------------------------


@pytest.mark.parametrize(
    "n", [2**53 + 2, 2**63, 2**64, 10**20, np.uint64(2**63), np.int64(2**62), 1e300, 2.0**60]
)
def test_counts_above_2_53_are_refused_with_the_limit(n):
    with pytest.raises(ValueError, match=r"n must be at most 2\*\*53 = 9,007,199,254,740,992"):
        bj.naive(0, n)


def test_count_of_2_63_is_refused_not_wrapped_to_negative():
    # Before: np.asarray(2**63) is uint64; as int64 it is -2**63.
    with pytest.raises(ValueError, match="9223372036854775808"):
        bj.bootstrap_rogan_gladen(1, 2**63, 70, 100, 90, 100)


def test_2_53_itself_is_exact_and_accepted():
    est = bj.naive(2**52, 2**53)
    assert est.estimate == 0.5
    assert MAX_COUNT == 2**53


@pytest.mark.parametrize("budget", [10**18, 10**20, 2**53 + 1])
def test_budget_beyond_the_limit_says_so(budget):
    # Before: 10**18 gave m0 + m1 = budget + 64 and 10**20 a message about "type object".
    with pytest.raises(ValueError, match=r"m must be at most 2\*\*53") as info:
        bj.allocate_calibration(budget, 0.4, 0.7, 0.9)
    assert "type object" not in str(info.value)


@pytest.mark.parametrize("method", ["algorithm1", "exact"])
@pytest.mark.parametrize("budget", [2**53, 2**53 - 1, 10**15 + 7])
def test_split_adds_up_to_the_budget_exactly(method, budget):
    split = bj.allocate_calibration(budget, 0.37, 0.71, 0.93, method=method)
    assert isinstance(split.m0, int) and isinstance(split.m1, int)
    assert split.m0 + split.m1 == budget
    report = bj.core.allocation_report(budget, 0.37, 0.71, 0.93)
    for option in (report.symmetric, report.algorithm1, report.exact):
        assert option.m0 + option.m1 == budget


def test_exact_youden_zero_test_for_large_calibration_sets():
    # m0 * m1 = 2**82: float products would round; the test uses integers there.
    big = 2**41
    assert youden_is_zero(2**40, big, 2**40, big)
    assert not youden_is_zero(2**40 + 1, big, 2**40, big)
    assert not youden_is_zero(2**40 + 1, big, 2**40, big + 1)
    with pytest.raises(ValueError, match="not identified"):
        bj.bootstrap_rogan_gladen(2**50, 2**51, 2**40, big, 2**40, big)


@pytest.mark.parametrize("alpha", [1e-300, 1e-200, 1e-17, 1e-12])
def test_tiny_alpha_gives_finite_bounds_not_nan(alpha):
    # Before: alpha=1e-300 gave NaN bounds (z = Φ⁻¹(1 − alpha/2) = inf), silently.
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy "invalid value" warning either
        naive = bj.naive(400, 1000, alpha=alpha)
        ppi = bj.ppi_mean(540, 1000, 84, 120, 72, 80, alpha=alpha)
        judge = bj.youden(70, 100, 90, 100, alpha=alpha, method="newcombe")
        # Near a 100 % interval J's interval reaches 0 and compare warns, as estimate does.
        warnings.filterwarnings("ignore", "Judge quality is uncertain", bj.LowJudgeQualityWarning)
        delta = bj.compare(_two_systems(), "delta", calibration="shared", alpha=alpha)
    assert 0 < naive.lower < 0.4 < naive.upper < 1
    assert np.isfinite([ppi.lower, ppi.upper]).all() and ppi.lower < ppi.estimate < ppi.upper
    assert np.isfinite([judge.lower, judge.upper]).all()
    assert np.isfinite(delta.ci.values).all()


def test_alpha_below_the_floor_is_refused_with_the_limit():
    assert MIN_ALPHA == 1e-300
    with pytest.raises(ValueError, match=r"alpha must be at least 1e-300 \(MIN_ALPHA\)"):
        bj.naive(400, 1000, alpha=1e-301)


def test_lang_reiczigel_refuses_alpha_where_its_adjustment_swamps_the_data():
    # Before (with a finite z) the paper's example gave [0, 0] around θ̂ = 0.17 at 1e-300.
    with pytest.raises(ValueError, match=r"at least 1e-06 for the Lang-Reiczigel interval"):
        bj.lang_reiczigel_interval(0.4, 0.7, 0.9, 1000, 100, 100, alpha=1e-300)
    counts = bj.JudgeCounts.from_counts(n=1000, k=400, m0=100, tn=70, m1=100, tp=90)
    with pytest.raises(ValueError, match=r"estimate\(method='lang-reiczigel'\)"):
        bj.estimate(counts, alpha=1e-7)
    lo, hi = bj.lang_reiczigel_interval(0.4, 0.7, 0.9, 1000, 100, 100, alpha=LR_MIN_ALPHA)
    assert 0 <= lo < 1 / 6 < hi <= 1


@pytest.mark.parametrize(
    "alpha", [0, 1, -0.1, 1.5, float("nan"), float("inf"), True, "0.05", [0.05], None]
)
def test_bad_alpha_is_refused_everywhere(alpha):
    calls = [
        lambda: bj.naive(4, 10, alpha=alpha),
        lambda: bj.lang_reiczigel_interval(0.4, 0.7, 0.9, 1000, 100, 100, alpha=alpha),
        lambda: bj.ppi_mean(*RG, alpha=alpha),
        lambda: bj.bootstrap_rogan_gladen(*RG, alpha=alpha),
        lambda: bj.youden(7, 10, 8, 10, alpha=alpha),
        lambda: bj.estimate(
            bj.JudgeCounts.from_counts(n=10, k=4, m0=10, tn=7, m1=10, tp=8), alpha=alpha
        ),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="alpha must be"):
            call()


def test_numpy_scalar_alpha_and_counts_are_accepted():
    ref = bj.naive(4, 10, alpha=0.1)
    assert bj.naive(np.int16(4), np.uint8(10), alpha=np.float64(0.1)) == ref
    assert bj.naive(4.0, 10.0, alpha=np.array(0.1)) == ref


# --- PPI++ with labelled items of one kind -----------------------------------------------------


def test_ppi_with_m0_zero_is_one_answer_from_both_entry_points():
    # Before: ppi_mean returned 1.0 with the interval [1, 1]; estimate returned NaN with advice
    # about calibration="shared" (which PPI++ cannot use).
    with pytest.warns(SmallSampleWarning, match=r"PPI\+\+ is undefined.*m0 = 0.*NaN"):
        res = bj.ppi_mean(250, 300, 0, 0, 45, 50)
    assert np.isnan([res.estimate, res.lower, res.upper]).all()
    counts = bj.JudgeCounts.from_counts(n=300, k=250, m0=0, tn=0, m1=50, tp=45)
    with pytest.warns(SmallSampleWarning, match=r"PPI\+\+ estimate is NaN") as record:
        out = bj.estimate(counts, method="ppi++")
    assert np.isnan(out.estimate.values).all() and np.isnan(out.ci.values).all()
    message = " ".join(str(w.message) for w in record)
    assert "zero-width interval" in message and "calibration='shared'" not in message


# --- warnings speak of their method -------------------------------------------------------------


def test_ppi_low_j_warning_does_not_claim_a_division_by_j():
    counts = bj.JudgeCounts.from_counts(n=1000, k=500, m0=100, tn=55, m1=100, tp=55)
    with pytest.warns(LowJudgeQualityWarning) as record:
        out = bj.estimate(counts, method="ppi++")
    message = " ".join(str(w.message) for w in record)
    assert "PPI++ does not divide by J" in message and "labelled items alone" in message
    assert "correction divides by J" not in message
    lo, hi = out.ci.values.ravel()
    assert hi - lo < 0.2  # the fallback interval is not "all of [0, 1]"


def test_rogan_gladen_low_j_warning_names_its_interval():
    counts = bj.JudgeCounts.from_counts(n=1000, k=500, m0=100, tn=55, m1=100, tp=55)
    with pytest.warns(LowJudgeQualityWarning, match="divides by J.*its Lang-Reiczigel interval"):
        bj.estimate(counts)


@pytest.mark.parametrize("method", ["lang-reiczigel", "bootstrap"])
def test_zero_j_gives_nan_and_the_whole_interval_with_a_warning_saying_so(method):
    # A judge that calls every item correct: q0 = 0/2, q1 = 100/100, J = 0. Before, the
    # Lang-Reiczigel estimate was NaN with the interval [0.944, 1] (an artefact of the +1
    # smoothing) and the warning did not say that the estimate was NaN.
    counts = bj.JudgeCounts.from_counts(n=1000, k=1000, m0=2, tn=0, m1=100, tp=100)
    with pytest.warns(LowJudgeQualityWarning, match="undefined there and reported as NaN"):
        out = bj.estimate(counts, method=method, random_seed=0)
    assert np.isnan(out.estimate.values).all()
    np.testing.assert_array_equal(out.ci.values.ravel(), [0.0, 1.0])


# --- bad counts, shapes and seeds ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: bj.naive(True, 3), "k must be a whole-number count; got values of type bool"),
        (lambda: bj.naive(3.5, 5), r"k must be a non-negative whole-number count; got \[3\.5\]"),
        (lambda: bj.naive(5, 3), "cannot exceed n; got k=5 > n=3"),
        (lambda: bj.ppi_mean(4, 10, 8, 7, 8, 10), "cannot exceed m0; got tn=8 > m0=7"),
        (lambda: bj.naive([1, 2], [3, 4, 5]), r"shapes k \(2,\), n \(3,\)"),
        (lambda: bj.rogan_gladen([0.1, 0.2], [0.7, 0.8, 0.9], 0.9), r"shapes p \(2,\), q0 \(3,\)"),
        (
            lambda: bj.lang_reiczigel_interval([0.1, 0.2], 0.7, 0.9, [10, 20, 30], 10, 10),
            r"shapes p \(2,\), q0 \(\), q1 \(\), n \(3,\)",
        ),
        (lambda: bj.bootstrap_rogan_gladen([1, 2], [3, 4, 5], 7, 10, 9, 10), r"k \(2,\), n \(3,"),
        (
            lambda: bj.core.bootstrap_difference(
                [1, 2], [1, 2, 3], 1, 1, 7, 10, 9, 10, shared_calibration=True
            ),
            r"shapes n11 \(2,\), n10 \(3,\)",
        ),
        (
            lambda: bj.core.variance_vs_human_only([0.1, 0.2], [0.7, 0.8, 0.9], 0.9, 100),
            r"shapes theta \(2,\), q0 \(3,\)",
        ),
        (
            lambda: bj.core.shared_calibration_bias(
                [0.1, 0.2], [0.1, 0.2, 0.3], 0.7, 0.9, 0.7, 0.9
            ),
            r"shapes theta_a \(2,\), theta_b \(3,\)",
        ),
    ],
)
def test_bad_counts_and_shapes_are_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_whole_float_counts_equal_int_counts():
    assert bj.naive(3.0, 5.0) == bj.naive(3, 5)
    assert bj.ppi_mean(*(float(v) for v in RG)) == bj.ppi_mean(*RG)


def test_empty_arrays_give_empty_results_not_nan():
    for res in (
        bj.naive([], []),
        bj.lang_reiczigel_interval([], [], [], [], [], []),
        bj.ppi_mean([], [], [], [], [], []),
    ):
        assert all(np.asarray(v).shape == (0,) for v in res)


def _seeded_calls(seed):
    return [
        lambda: bj.bootstrap_rogan_gladen(*RG, n_resamples=1000, random_seed=seed),
        lambda: bj.core.bootstrap_difference(
            *TABLE, shared_calibration=True, n_resamples=1000, random_seed=seed
        ),
        lambda: bj.core.paired_bootstrap(
            [450, 100, 50, 400],
            CELLS,
            70,
            100,
            90,
            100,
            shared_calibration=True,
            n_resamples=1000,
            random_seed=seed,
        ),
        lambda: bj.youden(70, 100, 90, 100, method="bootstrap", n_resamples=1000, random_seed=seed),
        lambda: bj.estimate(
            bj.JudgeCounts.from_counts(n=1000, k=400, m0=100, tn=70, m1=100, tp=90),
            method="bootstrap",
            n_resamples=1000,
            random_seed=seed,
        ),
        lambda: bj.compare(
            _two_systems(), calibration="shared", n_resamples=1000, random_seed=seed
        ),
    ]


@pytest.mark.parametrize(
    "seed", [2**70, np.uint64(2**63), [2**70, 3], np.random.default_rng(2**70)]
)
def test_huge_seeds_and_generators_work_everywhere(seed):
    for call in _seeded_calls(seed):
        call()


def test_huge_seed_is_reproducible():
    a = bj.bootstrap_rogan_gladen(*RG, n_resamples=1000, random_seed=2**70)
    b = bj.bootstrap_rogan_gladen(*RG, n_resamples=1000, random_seed=2**70)
    assert a == b


@pytest.mark.parametrize("seed", [-1, 1.5, True, "seed", [1, -2]])
def test_bad_seeds_are_refused_naming_random_seed(seed):
    for call in _seeded_calls(seed):
        with pytest.raises(ValueError, match=r"random_seed must be None, a non-negative integer"):
            call()
