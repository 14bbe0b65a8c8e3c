"""estimate() of several judges (JuryCounts) and their agreement, per group."""

from __future__ import annotations

import numpy as np
import pytest

import bayesjudge as bj
from bayesjudge.core import jury as core_jury
from bayesjudge.data.jury import JuryCounts
from bayesjudge.jury_estimate import jury_agreement, jury_estimate
from bayesjudge.warnings import SmallSampleWarning


def _simulated(seed=0, theta=(0.3, 0.7), n=400, m=30):
    """Two systems of three conditionally independent judges, a stratified calibration set."""
    rng = np.random.default_rng(seed)
    q0, q1 = np.array([0.85, 0.8, 0.75]), np.array([0.9, 0.8, 0.85])
    patterns = {}

    def draw(truths):
        said = np.where(truths[:, None] == 1, rng.random((len(truths), 3)) < q1,
                        rng.random((len(truths), 3)) >= q0)  # fmt: skip
        return ["".join("1" if x else "0" for x in row) for row in said]

    test, lab = [], []
    for th in theta:
        t = draw((rng.random(n) < th).astype(int))
        cal0, cal1 = draw(np.zeros(m, int)), draw(np.ones(m, int))
        test.append(t)
        lab.append((cal0, cal1))
    every = sorted({p for t in test for p in t} | {p for c in lab for half in c for p in half})
    patterns = every
    test_arr = np.array([[[t.count(p) for p in patterns]] for t in test])
    lab_arr = np.array([[[[c0.count(p) for p in patterns], [c1.count(p) for p in patterns]]]
                        for c0, c1 in lab])  # fmt: skip
    return JuryCounts.from_counts(
        patterns, test_arr, lab_arr, judges=["a", "b", "c"], systems=["x", "y"]
    )


def test_dawid_skene_per_group_equals_the_core_on_each_group():
    counts = _simulated()
    ds = bj.estimate(counts)  # default: dawid-skene
    assert ds.attrs["method"] == "dawid-skene" and ds.attrs["ci_prob"] == 0.95
    for system in counts.systems:
        one = counts.sel(system=system)
        v = one.verdicts.astype(int)
        core = core_jury.dawid_skene_interval(
            v, one.test.values[0, 0], one.labelled.values[0, 0], alpha=0.05
        )
        got = ds.sel(system=system, stratum="all")
        assert float(got["estimate"]) == pytest.approx(core.estimate, abs=1e-9)
        assert got["ci"].values.tolist() == pytest.approx([core.lower, core.upper], abs=1e-9)
        assert bool(got["converged"])


def test_per_judge_is_each_judges_own_estimate():
    counts = _simulated(seed=2)
    per = bj.estimate(counts, method="per-judge")
    assert per["estimate"].dims == ("judge", "system", "stratum")
    for judge in counts.judges:
        alone = bj.estimate(counts.for_judge(judge))
        np.testing.assert_allclose(per["estimate"].sel(judge=judge), alone["estimate"])
        np.testing.assert_allclose(per["ci"].sel(judge=judge), alone["ci"])
    assert per.attrs["judge_method"] == "lang-reiczigel"


def test_jury_interval_is_narrower_than_each_judge():
    counts = _simulated(seed=3)
    jury = bj.estimate(counts)
    per = bj.estimate(counts, method="per-judge")
    width = jury["ci"].diff("ci_bound").squeeze("ci_bound")
    per_width = per["ci"].diff("ci_bound").squeeze("ci_bound")
    assert (width < per_width.min("judge")).all()


def test_majority_is_the_naive_share():
    counts = JuryCounts.from_counts(["111", "110", "100", "000"], [4, 3, 2, 1], judges=list("abc"))
    ds = bj.estimate(counts, method="majority")
    assert float(ds["estimate"].squeeze()) == pytest.approx(0.7)


def test_bootstrap_interval_is_seeded():
    counts = _simulated(seed=4)
    with pytest.warns(SmallSampleWarning, match="below 1000"):
        a = bj.estimate(counts, method="dawid-skene-bootstrap", random_seed=5, n_resamples=200)
    with pytest.warns(SmallSampleWarning, match="below 1000"):
        b = bj.estimate(counts, method="dawid-skene-bootstrap", random_seed=5, n_resamples=200)
    np.testing.assert_array_equal(a["ci"].values, b["ci"].values)
    assert a.attrs["random_seed"] == "5"


def test_unknown_method_and_groups_without_a_judge():
    counts = _simulated()
    with pytest.raises(ValueError, match="for several judges"):
        bj.estimate(counts, method="lang-reiczigel")
    gap = JuryCounts.from_counts(
        ["11-", "00-", "1-1"], [[[5, 5, 0]], [[0, 0, 6]]], judges=list("abc"), systems=["x", "y"]
    )
    with pytest.warns(SmallSampleWarning, match="θ is NaN"):
        ds = jury_estimate(gap)
    assert np.isnan(ds["estimate"].values).all()
    with pytest.raises(TypeError, match="JuryCounts"):
        jury_estimate(counts.for_judge("a"))


def test_agreement_against_hand_computation():
    counts = JuryCounts.from_counts(
        ["11", "10", "01", "00"],
        [40, 5, 5, 50],
        labelled=[[0, 1, 2, 20], [18, 1, 0, 1]],
        judges=["a", "b"],
    )
    ds = jury_agreement(counts)
    # all items: 11 -> 58, 10 -> 7, 01 -> 7, 00 -> 71 (n = 143)
    po, pa = 129 / 143, 65 / 143
    pe = pa**2 + (1 - pa) ** 2
    assert float(ds["kappa"].sel(judge_a="a", judge_b="b").squeeze()) == pytest.approx(
        (po - pe) / (1 - pe)
    )
    pe1 = 2 * ((pa + pa) / 2) * (1 - (pa + pa) / 2)  # Gwet's chance term, two categories
    assert float(ds["ac1"].sel(judge_a="a", judge_b="b").squeeze()) == pytest.approx(
        (po - pe1) / (1 - pe1)
    )
    # judge a against the humans: truth-0 items (0,1,2,20): a says 0 on 2 + 20; truth 1: 18 + 1
    human_po = (22 + 19) / 43
    kh = float(ds["kappa_human"].sel(judge="a").squeeze())
    assert -1 <= kh <= 1 and kh == pytest.approx(
        core_jury.cohen_kappa(np.array([[22, 1], [1, 19]])).estimate
    )
    assert human_po == pytest.approx(41 / 43)


def test_agreement_of_k_category_verdicts():
    from statsmodels.stats.inter_rater import cohens_kappa

    from bayesjudge.data.categorical_jury import CategoricalJuryCounts
    from bayesjudge.simulate import simulate_categorical_jury, simulate_jury

    conf = np.array([[[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]]] * 2)
    conf = np.concatenate([conf, [[[0.6, 0.3, 0.1], [0.2, 0.6, 0.2], [0.1, 0.3, 0.6]]]])
    counts = simulate_categorical_jury(
        [0.3, 0.2, 0.5], conf, 300, [20, 20, 20], categories=["A", "tie", "B"],
        judges=["a", "b", "c"], random_seed=9,
    )  # fmt: skip
    ds = jury_agreement(counts)
    table = counts.pair_table("a", "c", items="all").squeeze().values
    ref = cohens_kappa(table)  # statsmodels: κ and its (non-null) standard error
    one = ds.sel(judge_a="a", judge_b="c").squeeze()
    assert float(one["kappa"]) == pytest.approx(ref.kappa, abs=1e-12)
    assert float(one["kappa_ci"].diff("ci_bound").squeeze()) == pytest.approx(
        2 * 1.959963984540054 * ref.std_kappa, rel=1e-9
    )
    human = counts.for_judge("b").calibration.squeeze().values  # rows human, columns judge
    ref_h = cohens_kappa(human)
    assert float(ds["kappa_human"].sel(judge="b").squeeze()) == pytest.approx(ref_h.kappa)
    # K = 2: the same numbers as the binary container.
    binary = simulate_jury(0.4, [0.8, 0.9, 0.7], [0.85, 0.8, 0.75], n=200, m0=20, m1=20,
                              random_seed=4)  # fmt: skip
    as_k = CategoricalJuryCounts.from_jury_counts(binary)
    for name in ("kappa", "ac1", "kappa_human", "ac1_human"):
        np.testing.assert_allclose(
            jury_agreement(as_k)[name].values, jury_agreement(binary)[name].values, rtol=1e-12
        )
