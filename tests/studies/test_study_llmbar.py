"""The LLMBar case study at reduced size on the real data: layout, counts, seeds, a finding.

Reference values come from the data directly (pandas here, not the study code): under random
splits the test set is a simple random sample of the stratum, so E[k/n] = p_S and
E[θ_test] = θ_S and the naive estimator's expected error is exactly p_S − θ_S, where p_S is the
share of verdicts "output 1" and θ_S the share of items whose output 1 is better.
Tolerances are multiples of the study's Monte Carlo standard errors.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

from bayesjudge.datasets import PACKAGED_DATA, load_llmbar
from bayesjudge.studies import STUDIES, llmbar, run_study
from bayesjudge.studies._framework import point_rngs
from bayesjudge.warnings import MissingLabelWarning

# The copy shipped with the package (never ../shared; BAYESJUDGE_DATA does not apply here).
DATA = Path(str(resources.files("bayesjudge").joinpath(PACKAGED_DATA)))
JUDGES = ["GPT-4", "ChatGPT"]
SUBSETS = ["LLMBar/Natural", "LLMBar/Adversarial/Neighbor", "LLMBar/Adversarial/GPTInst"]
CLOSED = [m for m in llmbar.METHODS if m != "bayes-hierarchical"]
REPS = 60


@pytest.fixture(scope="module")
def result():
    return llmbar.run(reps=REPS, path=DATA, judges=JUDGES, subsets=SUBSETS, methods=CLOSED)


@pytest.fixture(scope="module")
def frame():
    with pytest.warns(MissingLabelWarning):
        return load_llmbar(DATA, strategy="Vanilla_NoRules", swap=False, subset=SUBSETS)


def test_registered():
    assert STUDIES["llmbar"] == "bayesjudge.studies.llmbar"


def test_table_layout_attrs_and_mcse(result):
    t = result.table
    assert dict(t.sizes) == {"judge": 2, "stratum": 5, "approach": 10, "estimand": 2}
    # The tidy frame has one row per (judge, stratum, approach, estimand).
    assert len(result.to_frame()) == 2 * 5 * 10 * 2
    assert t["estimand"].to_numpy().tolist() == ["test-set", "unlabelled"]
    assert t["stratum"].to_numpy().tolist() == [*SUBSETS, "output_1", "output_2"]
    assert t["xi"].to_numpy().tolist() == ["subset"] * 3 + ["longer"] * 2
    assert t["calibration"].to_numpy().tolist() == ["none", "stratum", "pooled", "stratum",
                                                     "pooled", *["stratum"] * 5]  # fmt: skip
    assert t["design"].to_numpy().tolist() == ["none", *["stratified"] * 4, *["random"] * 5]
    assert t.attrs["design"] == "random" and t.attrs["width_reference"] == "bayes-stratum"
    for var in ("coverage", "bias", "rmse", "length"):
        assert f"{var}_mcse" in t
        assert bool(np.isfinite(t[var]).all()), var
        assert bool((t[f"{var}_mcse"] >= 0).all())
    assert bool((t["reps_used"] == REPS).all())
    settings = result.settings
    assert settings["reps"] == REPS and settings["random_seed"] == llmbar.DEFAULT_SEED
    assert settings["strategy"] == "Vanilla_NoRules" and settings["swap"] is False
    assert settings["ties_dropped"] == 1  # Natural has one tie (items table; Manual the other)
    assert set(json.loads(t.attrs["seconds"])) == {"data", "closed", "exact", "hierarchical"}
    # The coverage MC-SE is the binomial one of the stated replications.
    cov = t["coverage"].to_numpy()
    assert np.allclose(t["coverage_mcse"], np.sqrt(cov * (1 - cov) / REPS))


def test_descriptives_match_the_data(result, frame):
    t = result.table
    for judge in JUDGES:
        for subset in SUBSETS:
            g = frame[(frame.evaluator == judge) & (frame.subset == subset)]
            g = g.dropna(subset=["judge"])
            z, v = g["human"].to_numpy(bool), g["judge"].to_numpy(bool)
            cell = t.sel(judge=judge, stratum=subset)
            assert float(cell["theta"]) == pytest.approx(z.mean(), abs=1e-12)
            assert float(cell["p"]) == pytest.approx(v.mean(), abs=1e-12)
            assert float(cell["youden"]) == pytest.approx(
                (~v[~z]).mean() + v[z].mean() - 1, abs=1e-12
            )
            assert int(cell["items"]) == len(g)


def test_study_counts_equal_a_pandas_count_of_the_same_split(frame):
    subset = "LLMBar/Adversarial/Neighbor"
    data = llmbar.stratum_data(frame, JUDGES, "subset", [subset])[subset]
    masks = llmbar.split_masks(len(data["z"]), 0.5, 3, np.random.default_rng(3))
    counts = llmbar._counts(data, masks)
    items = data["items"]
    for r in range(3):
        calib = {items[i] for i in np.flatnonzero(masks[r])}
        for a, judge in enumerate(JUDGES):
            g = frame[(frame.evaluator == judge) & (frame.subset == subset)]
            g = g.dropna(subset=["judge"])
            in_calib = np.array([(s, i) in calib for s, i in zip(g.subset, g["item"],
                                                                 strict=True)])  # fmt: skip
            z, v = g["human"].to_numpy(bool), g["judge"].to_numpy(bool)
            test = ~in_calib
            assert counts["n"][r, a] == test.sum() and counts["k"][r, a] == (v & test).sum()
            assert counts["z_test"][r, a] == (z & test).sum()
            assert counts["m1"][r, a] == (z & in_calib).sum()
            assert counts["tp"][r, a] == (z & v & in_calib).sum()
            assert counts["m0"][r, a] == (~z & in_calib).sum()
            assert counts["tn"][r, a] == (~z & ~v & in_calib).sum()
    assert masks.sum(axis=1).tolist() == [67, 67, 67]  # round(0.5 * 134)


def test_seeds_are_value_keyed_and_reproduce(result):
    # Same seed, fewer judges and strata: the same splits, so the same numbers.
    small = llmbar.run(reps=REPS, path=DATA, judges=["ChatGPT"], subsets=SUBSETS[1:2],
                       xi=["subset"], methods=["naive", "lr-stratum"])  # fmt: skip
    sel = {"judge": "ChatGPT", "stratum": SUBSETS[1]}
    for var in ("coverage", "bias", "length"):
        for m in ("naive", "lr-stratum"):
            a = small.table[var].sel(**sel, approach=m).to_numpy()
            b = result.table[var].sel(**sel, approach=m).to_numpy()
            # Same splits; only the order of floating-point sums may differ.
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12, err_msg=f"{var} {m}")
    other = llmbar.run(reps=REPS, random_seed=1, path=DATA, judges=["ChatGPT"],
                       subsets=SUBSETS[1:2], xi=["subset"], methods=["naive"])  # fmt: skip
    assert not np.array_equal(
        other.table["bias"].sel(**sel).to_numpy(),
        small.table["bias"].sel(**sel, approach=["naive"]).to_numpy(),
    )
    # The split stream of a stratum is keyed by (seed, ξ, name, share), not by position.
    rng = point_rngs(llmbar.DEFAULT_SEED, 0, llmbar._key(SUBSETS[1]), 0.5)[0]
    assert llmbar.split_masks(134, 0.5, 1, rng).sum() == 67


@pytest.mark.parametrize("subset", ["LLMBar/Adversarial/GPTInst", "LLMBar/Adversarial/Neighbor"])
def test_naive_bias_is_p_minus_theta_of_the_stratum(result, frame, subset):
    # Exact: E[k/n − θ_test] = p_S − θ_S (simple random test sets; ChatGPT has no missing
    # verdicts here). GPTInst: p_S = 67/92, θ_S = 45/92, so +0.239 (strongly positive: ChatGPT
    # picks output 1 far more often than it is better); Neighbor: +0.022.
    g = frame[(frame.evaluator == "ChatGPT") & (frame.subset == subset)]
    assert not g["judge"].isna().any()
    exact = g["judge"].to_numpy(bool).mean() - g["human"].to_numpy(bool).mean()
    cell = result.table.sel(
        judge="ChatGPT", stratum=subset, approach="naive", estimand="unlabelled"
    )
    assert abs(float(cell["bias"]) - exact) <= 4 * float(cell["bias_mcse"])
    assert float(
        result.table["bias_asymptotic"].sel(judge="ChatGPT", stratum=subset, approach="naive")
    ) == pytest.approx(exact)
    if subset.endswith("GPTInst"):
        assert exact == pytest.approx(22 / 92)


def test_pooled_calibration_on_below_chance_subsets(result):
    # ChatGPT is below chance (J < 0) on Neighbor and GPTInst but not on Natural: calibration
    # pooled over these three subsets applies one (q0, q1) to all and misses badly, while the
    # per-stratum correction is close to unbiased. Large-sample bias of pooled RG (whole-stratum
    # plug-in): Natural far too high, GPTInst far too low (clipped at 0).
    t = result.table.sel(judge="ChatGPT", estimand="unlabelled")
    j = t["youden"]
    assert float(j.sel(stratum="LLMBar/Natural")) > 0.5
    assert float(j.sel(stratum=SUBSETS[1])) < -0.6 and float(j.sel(stratum=SUBSETS[2])) < -0.4
    pooled = t.sel(approach="lr-pooled")
    per = t.sel(approach="lr-stratum")
    nat, inst = "LLMBar/Natural", SUBSETS[2]
    assert float(pooled["bias"].sel(stratum=nat) - 4 * pooled["bias_mcse"].sel(stratum=nat)) > 0.1
    assert (
        float(pooled["bias"].sel(stratum=inst) + 4 * pooled["bias_mcse"].sel(stratum=inst)) < -0.1
    )
    asym = result.table["bias_asymptotic"].sel(judge="ChatGPT", approach="lr-pooled")
    assert float(asym.sel(stratum=nat)) > 0.3 and float(asym.sel(stratum=inst)) < -0.3
    for s in SUBSETS:
        assert abs(float(per["bias"].sel(stratum=s))) <= 0.05 + 4 * float(
            per["bias_mcse"].sel(stratum=s)
        )


class _StubFit:
    """What the study reads from a Fit: posterior theta and sample_stats diverging."""

    def __init__(self, theta, diverging):
        import xarray as xr

        self.posterior = xr.Dataset({"theta": theta})
        stats = xr.Dataset({"diverging": (("chain", "draw"), diverging)})
        self.tree = {"sample_stats": xr.DataTree(stats)}


def test_hierarchical_wiring_with_a_stub_fit(monkeypatch, tmp_path):
    # The wiring of the hierarchical approach without MCMC (the real fits, ~15-30 s of numba
    # compile, run in tests/studies/test_study_llmbar_slow.py): the stub's posterior of θ is k/n +
    # a uniform grid of half-width 0.1 (100 draws split over 2 chains, stored with dims in an
    # unusual order), so the study's posterior median must equal k/n exactly (its bias equals
    # the naive one), its 95 % interval has length 0.19, and the (judge, stratum) axes must not
    # be transposed (2 judges × 3 strata). The first fit raises a ConvergenceWarning and the
    # second has a divergence (shares 1/2 each); a fit's other warnings are re-emitted.
    import xarray as xr

    import bayesjudge.models.fit as fit_module
    from bayesjudge.warnings import ConvergenceWarning, LowJudgeQualityWarning

    calls = []
    grid = np.linspace(-0.1, 0.1, 100)

    def stub(counts, **options):
        calls.append((counts, options))
        p = counts.dataset["k"].transpose("system", "stratum") / counts.dataset["n"]
        draws = xr.DataArray(grid.reshape(2, 50), dims=("chain", "draw"))
        theta = (p + draws).transpose("stratum", "draw", "system", "chain")
        if len(calls) == 1:
            import warnings

            warnings.warn("ess low", ConvergenceWarning, stacklevel=1)
            warnings.warn("J low", LowJudgeQualityWarning, stacklevel=1)
        diverging = np.zeros((2, 50), dtype=bool)
        diverging[1, 7] = len(calls) == 2
        return _StubFit(theta, diverging)

    monkeypatch.setattr(fit_module, "fit", stub)
    with pytest.warns(LowJudgeQualityWarning, match="J low"):
        res = run_study("llmbar", reps=2, path=DATA, judges=JUDGES, subsets=SUBSETS,
                        xi=["subset"], methods=["naive", "bayes-hierarchical"], bayes_reps=2,
                        draws=20, tune=30, chains=2)  # fmt: skip
    assert len(calls) == 2
    counts, options = calls[0]
    assert counts.systems == JUDGES and counts.strata == SUBSETS
    assert options["calibration"] == "hierarchical" and options["pool_over"] == "stratum"
    assert (options["draws"], options["tune"], options["chains"]) == (20, 30, 2)
    assert calls[0][1]["random_seed"] != calls[1][1]["random_seed"]
    t = res.table.sel(estimand="unlabelled")
    h, naive = t.sel(approach="bayes-hierarchical"), t.sel(approach="naive")
    np.testing.assert_allclose(h["bias"], naive["bias"], rtol=0, atol=1e-12)
    # numpy's linear 2.5 % quantile of the 100-point grid: -0.1 + 2.475 × 0.2 / 99 = -0.095.
    np.testing.assert_allclose(h["length"], 0.19, rtol=0, atol=1e-12)
    assert res.table["warning_share"].to_numpy().tolist() == [0.5] * 3
    assert res.table["divergence_share"].to_numpy().tolist() == [0.5] * 3
    # The split counts handed to the fit are the study's own (first replication).
    frame = load_llmbar(DATA, strategy="Vanilla_NoRules", swap=False, subset=SUBSETS, warn=False)
    data = llmbar.stratum_data(frame, JUDGES, "subset", SUBSETS)
    for b, s in enumerate(SUBSETS):
        rng = point_rngs(llmbar.DEFAULT_SEED, 0, llmbar._key(s), 0.5)[0]
        own = llmbar._counts(data[s], llmbar.split_masks(len(data[s]["z"]), 0.5, 2, rng))
        for f in ("n", "k", "m0", "tn", "m1", "tp"):
            got = counts.dataset[f].transpose("system", "stratum").to_numpy()[:, b]
            np.testing.assert_array_equal(got, own[f][0], err_msg=f"{s} {f}")
    paths = res.save(tmp_path)
    assert all(path.exists() for path in paths.values())
    plt.close("all")


def _lr_coverage(z, v, design, reps, rng):
    """Coverage of θ_test and θ_S by per-stratum Lang–Reiczigel, calibration = half the items."""
    size = len(z)
    m = round(size / 2)
    if design == "finite":  # the study's design: complementary halves of the stratum
        idx = np.argsort(rng.random((reps, size)), axis=1)
        cal, tst = idx[:, :m], idx[:, m:]
    else:  # an infinite population with the stratum's distribution: i.i.d. draws
        cal, tst = rng.integers(0, size, (reps, m)), rng.integers(0, size, (reps, size - m))
    zc, vc, zt, vt = z[cal], v[cal], z[tst], v[tst]
    _, lower, upper, _ = llmbar._lang_reiczigel(
        vt.sum(1),
        tst.shape[1],
        (~zc & ~vc).sum(1),
        (~zc).sum(1),
        (zc & vc).sum(1),
        zc.sum(1),
        0.05,
    )
    theta_test = zt.mean(1)
    return (((lower <= theta_test) & (theta_test <= upper)).mean(),
            ((lower <= z.mean()) & (z.mean() <= upper)).mean())  # fmt: skip


def test_why_coverage_of_the_test_share_is_conservative(frame):
    # docs point 2. GPT-4 on Natural (J = 0.84), 4000 splits per design (seed 7). Not the
    # finite population: with i.i.d. draws (infinite population) the coverage of θ_test is the
    # same as with complementary halves. It is the estimand: the interval carries the binomial
    # variance θ(1 − θ)/n of the test items' truth, which θ_test does not have (coverage of
    # the population θ under i.i.d. draws is nominal). The finite population matters for θ_S:
    # there the halves' finite-population correction makes the interval conservative.
    # Measured: finite θ_test 0.996, θ_S 0.975; infinite θ_test 0.9965, θ 0.9485.
    g = frame[(frame.evaluator == "GPT-4") & (frame.subset == "LLMBar/Natural")]
    z, v = g["human"].to_numpy(bool), g["judge"].to_numpy(bool)
    reps = 4000
    rng = np.random.default_rng(7)
    fin_test, fin_s = _lr_coverage(z, v, "finite", reps, rng)
    inf_test, inf_theta = _lr_coverage(z, v, "infinite", reps, rng)

    def se(c):
        return np.sqrt(max(c * (1 - c), 0.95 * 0.05 / 10) / reps)  # floor: c near 1

    def gap(a, b):
        return 4 * np.hypot(se(a), se(b))

    assert abs(fin_test - inf_test) <= gap(fin_test, inf_test)
    assert abs(inf_theta - 0.95) <= 4 * se(0.95)
    assert inf_test - inf_theta > gap(inf_test, inf_theta)
    assert fin_s - inf_theta > gap(fin_s, inf_theta)


def test_options_are_checked():
    with pytest.raises(ValueError, match="lack the Processed subsets"):
        llmbar.run(reps=2, path=DATA, judges=["GPT-4", "Falcon"], subsets=["Processed/MT-Bench"],
                   methods=CLOSED)  # fmt: skip
    with pytest.raises(ValueError, match="methods: unknown"):
        llmbar.run(reps=2, path=DATA, methods=["magic"])
    with pytest.raises(ValueError, match=r"bayes_reps \(3\) must not exceed reps"):
        llmbar.run(reps=2, path=DATA, bayes_reps=3)
    with pytest.raises(ValueError, match="xi: unknown"):
        llmbar.run(reps=2, path=DATA, xi=["width"], methods=CLOSED)


def test_plot(result):
    fig = llmbar.plot(result.table)
    assert len(fig.axes) == 2 * 4  # 2 judges × (coverage, bias) × 2 ξ
    plt.close(fig)


# --------------------------------------------------------------------------- random design

NEIGHBOR = "LLMBar/Adversarial/Neighbor"


def _split_counts(frame, judges, subset, reps):
    """The study's own counts of ``subset`` over its first ``reps`` splits (default seed)."""
    data = llmbar.stratum_data(frame, judges, "subset", [subset])[subset]
    rng = point_rngs(llmbar.DEFAULT_SEED, 0, llmbar._key(subset), 0.5)[0]
    return data, llmbar._counts(data, llmbar.split_masks(len(data["z"]), 0.5, reps, rng))


def test_each_item_is_counted_once_and_the_test_set_theta_is_the_stratum_share(frame, result):
    # The random design: labelled and unlabelled items partition the judge's items, so
    # n + m0 + m1 is the number of items with a verdict in every split, and the test-set θ
    # ((z among the unlabelled + m1) / N) is the stratum share θ_S in every split.
    for subset in SUBSETS:
        data, c = _split_counts(frame, JUDGES, subset, 5)
        items = data["valid"].sum(axis=1)
        np.testing.assert_array_equal(c["n"] + c["m0"] + c["m1"], np.broadcast_to(items, (5, 2)))
        theta_set = (c["z_test"] + c["m1"]) / items
        theta_s = result.table["theta"].sel(stratum=subset).to_numpy()
        np.testing.assert_allclose(theta_set, np.broadcast_to(theta_s, (5, 2)), rtol=0, atol=1e-15)


def test_bayes_random_is_the_stratified_posterior_under_the_shifted_prior(frame):
    # The random design's extra factor θ^m1 (1 − θ)^m0 turns the flat prior into
    # Beta(1 + m1, 1 + m0): the study's bayes-random interval of each split must equal the
    # stratified exact posterior under that prior (computed here one split at a time).
    from bayesjudge.core.exact import exact_theta_interval

    _, c = _split_counts(frame, ["GPT-4", "ChatGPT"], NEIGHBOR, 3)
    f = [c[x] for x in ("k", "n", "tn", "m0", "tp", "m1")]
    median, lower, upper, undefined = llmbar._exact(*f, 0.05, design="random")
    assert not undefined.any()
    for r in range(3):
        for a in range(2):
            k, n, tn, m0, tp, m1 = (int(x[r, a]) for x in f)
            ref = exact_theta_interval(k, n, tn, m0, tp, m1, theta_prior=(1 + m1, 1 + m0))
            np.testing.assert_allclose([median[r, a], lower[r, a], upper[r, a]],
                                       [ref.median, ref.lower, ref.upper], rtol=0,
                                       atol=1e-9)  # fmt: skip


def _full_loglik(theta, q0, q1, k, n, tn, m0, tp, m1):
    """The random design's log-likelihood, from scipy's binomial pmfs (independent of core)."""
    from scipy import stats

    p = theta * q1 + (1 - theta) * (1 - q0)
    return (stats.binom.logpmf(k, n, p) + stats.binom.logpmf(tn, m0, q0)
            + stats.binom.logpmf(tp, m1, q1) + stats.binom.logpmf(m1, m0 + m1, theta))  # fmt: skip


def _profile(theta, counts):
    """max over (q0, q1) of the full log-likelihood at θ, by scipy (Nelder–Mead on logits)."""
    from scipy import optimize, special

    def negative(x):
        return -_full_loglik(theta, *special.expit(x), *counts)

    tn, m0, tp, m1 = counts[2:]
    start = special.logit(np.clip([(tn + 0.5) / (m0 + 1), (tp + 0.5) / (m1 + 1)], 1e-6, 1 - 1e-6))
    best = optimize.minimize(negative, start, method="Nelder-Mead",
                             options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 4000})  # fmt: skip
    return -best.fun


def test_likelihood_approach_is_the_double_sampling_mle_with_its_profile_interval(frame):
    # Reference: Tenenbein's closed form θ̂ = (K/N)·tp/(tp + fp) + (1 − K/N)·fn/(fn + tn)
    # (K judged correct of all N items), and the 95 % profile-likelihood interval: the
    # deviance 2 (logL(θ̂) − max_q logL(θ, q)) equals χ²₁(0.95) = 3.8415 at both ends, the profile
    # maximised here by scipy over (q0, q1) of the full likelihood (scipy binomial pmfs).
    from scipy import stats

    _, c = _split_counts(frame, ["GPT-4"], NEIGHBOR, 2)
    f = [c[x] for x in ("k", "n", "tn", "m0", "tp", "m1")]
    estimate, lower, upper, undefined = llmbar._likelihood(*f, 0.05)
    assert not undefined.any()
    crit = stats.chi2.ppf(0.95, 1)
    for r in range(2):
        k, n, tn, m0, tp, m1 = (int(x[r, 0]) for x in f)
        fp, fn = m0 - tn, m1 - tp
        big_n, big_k = n + m0 + m1, k + tp + fp
        mle = big_k / big_n * tp / (tp + fp) + (1 - big_k / big_n) * fn / (fn + tn)
        assert estimate[r, 0] == pytest.approx(mle, abs=1e-9)
        counts = (k, n, tn, m0, tp, m1)
        top = _profile(mle, counts)
        for end in (lower[r, 0], upper[r, 0]):
            assert 0 < end < 1
            assert 2 * (top - _profile(end, counts)) == pytest.approx(crit, abs=2e-3)


def test_ppi_approach_is_ppi_mean(frame):
    from bayesjudge.core.ppi import ppi_mean

    _, c = _split_counts(frame, JUDGES, NEIGHBOR, 4)
    f = [c[x] for x in ("k", "n", "tn", "m0", "tp", "m1")]
    estimate, lower, upper, undefined = llmbar._ppi(*f, 0.05)
    ref = ppi_mean(*f, alpha=0.05)
    assert not undefined.any()
    np.testing.assert_array_equal(estimate, ref.estimate)
    np.testing.assert_array_equal(lower, ref.lower)
    np.testing.assert_array_equal(upper, ref.upper)


def test_human_only_and_test_set_approaches(frame):
    # human-only: m1 / (m0 + m1) with the Wilson interval, computed here from its formula
    # (z = 1.959964); likelihood-test-set: the likelihood point estimate, and an interval that
    # lies inside [m1 / N, (m1 + n) / N] (the values the test-set θ can take) and is narrower
    # than the population interval (the labelled items' truth is known).
    from scipy import stats

    _, c = _split_counts(frame, JUDGES, NEIGHBOR, 4)
    f = [c[x] for x in ("k", "n", "tn", "m0", "tp", "m1")]
    est, lo, hi, undefined = llmbar._human_only(*f[2:], 0.05)
    assert not undefined.any()
    m, x = c["m0"] + c["m1"], c["m1"]
    z = stats.norm.isf(0.025)
    centre = (x + z**2 / 2) / (m + z**2)
    half = z * np.sqrt(x * (m - x) / m + z**2 / 4) / (m + z**2)
    np.testing.assert_allclose(est, x / m, rtol=0, atol=1e-15)
    np.testing.assert_allclose(lo, centre - half, rtol=0, atol=1e-12)
    np.testing.assert_allclose(hi, centre + half, rtol=0, atol=1e-12)
    pop = llmbar._likelihood(*f, 0.05)
    tset = llmbar._likelihood(*f, 0.05, estimand="test-set")
    np.testing.assert_allclose(tset[0], pop[0], rtol=0, atol=1e-12)
    big_n = c["n"] + c["m0"] + c["m1"]
    assert (tset[1] >= c["m1"] / big_n - 1e-12).all()
    assert (tset[2] <= (c["m1"] + c["n"]) / big_n + 1e-12).all()
    assert (tset[2] - tset[1] < pop[2] - pop[1]).all()


def test_width_ratio_is_the_mean_per_split_ratio_to_the_stratified_posterior(frame):
    reps = 6
    res = llmbar.run(reps=reps, path=DATA, judges=["ChatGPT"], subsets=[NEIGHBOR], xi=["subset"],
                     methods=["bayes-stratum", "bayes-random", "likelihood"])  # fmt: skip
    _, c = _split_counts(frame, ["ChatGPT"], NEIGHBOR, reps)
    f = [c[x] for x in ("k", "n", "tn", "m0", "tp", "m1")]
    _, lo_s, hi_s, _ = llmbar._exact(*f, 0.05)
    _, lo_r, hi_r, _ = llmbar._exact(*f, 0.05, design="random")
    ratio = (hi_r - lo_r) / (hi_s - lo_s)
    cell = res.table.sel(judge="ChatGPT", stratum=NEIGHBOR)
    assert float(cell["width_ratio"].sel(approach="bayes-random")) == pytest.approx(
        ratio.mean(), abs=1e-12
    )
    assert float(cell["width_ratio_mcse"].sel(approach="bayes-random")) == pytest.approx(
        ratio.std(ddof=1) / np.sqrt(reps), abs=1e-12
    )
    assert float(cell["width_ratio"].sel(approach="bayes-stratum")) == 1.0
    # Without the reference approach there is no ratio.
    alone = llmbar.run(reps=2, path=DATA, judges=["ChatGPT"], subsets=[NEIGHBOR], xi=["subset"],
                       methods=["likelihood"])  # fmt: skip
    assert bool(alone.table["width_ratio"].isnull().all())
    assert alone.table.attrs["width_reference"] == ""
