"""``bj.fit`` of counts with repeated verdicts: the item-effect model as a normal ``Fit`` (slow).

Every test here compiles the item-effect model (tens of seconds of numba; nutpie then reuses
it for data of the same shape), so all are ``slow``. The references:

* simulation-based calibration (Talts et al. 2018): parameters drawn from the priors, data
  from the generative story of ``models/item-effect.md`` written here in numpy, the rank of
  each true value among thinned posterior draws; ranks uniform by a χ² test;
* with one verdict per item, the ordinary separate model (``bj.fit`` of the same counts
  without a cluster table) within Monte Carlo error;
* recovery of θ on data simulated by ``bayesjudge.simulate.simulate_repeated_items``.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import arviz as az
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats

import bayesjudge as bj
from bayesjudge.models.build import ITEM_ICC_PRIOR
from bayesjudge.models.item_effect import fit_item_effect
from bayesjudge.simulate import simulate_repeated_items
from bayesjudge.warnings import ConvergenceWarning

pytestmark = pytest.mark.slow


def labelled_repeats_table(seed: int) -> pd.DataFrame:
    """Two systems, one table (random design): items judged 3 times, 25 of 60 labelled."""
    frames = []
    for offset, (system, theta) in enumerate((("a", 0.75), ("b", 0.45))):
        test, _ = simulate_repeated_items(theta, 0.8, 0.85, n=60, m0=0, m1=0, epochs=3,
                                          icc=0.4, random_seed=seed + offset)  # fmt: skip
        test["system"] = system
        test["human"] = np.where(test["item"] < 25, test["truth"], np.nan)
        frames.append(test.drop(columns="truth"))
    return pd.concat(frames, ignore_index=True)


@pytest.fixture(scope="module")
def fitted():
    table = labelled_repeats_table(11)
    counts = bj.JudgeCounts.from_frames(table, system="system", item="item", repeats="epoch")
    assert counts.design == "random" and counts.calibration_clusters is not None
    return bj.fit(counts, draws=500, chains=4, random_seed=3)


def test_fit_of_clustered_counts_is_a_normal_fit(fitted):
    assert type(fitted) is bj.Fit
    assert fitted.config["model"] == "item-effect" and fitted.config["labelled_repeats"]
    post = fitted.posterior
    for name in ("theta", "q0", "q1", "youden", "item_icc"):
        assert post[name].dims == ("chain", "draw", "system", "stratum")
    assert post.sizes["chain"] == 4 and post.sizes["draw"] == 500
    table = fitted.summary(ci_prob=0.9, var_names=["theta", "item_icc"])
    assert set(table["variable"]) == {"theta", "item_icc"} and (table["r_hat"] < 1.01).all()
    diff = fitted.compare()
    draws = post["theta"].sel(system="a") - post["theta"].sel(system="b")
    assert float(diff["prob_greater"].squeeze()) == pytest.approx(float((draws > 0).mean()))
    assert diff.attrs["ci_prob"] == 0.95 and diff.attrs["ci_kind"] == "eti"


def test_ppc_replicates_the_counts_from_replicated_tables(fitted):
    check = fitted.ppc(random_seed=4)
    assert set(check.p_value) == {"k", "tn", "tp", "truth", "clusters", "calibration_clusters"}
    rep = check.replicated
    # The cluster tables are replicated row by row (multinomial given the row's items): every
    # replicated table keeps the observed items per number of verdicts.
    for name in ("clusters", "calibration_clusters"):
        observed = check.observed[name]
        assert (rep[name].sum("positives") == observed.sum("positives")).all()
        assert observed.values.tolist() == fitted.tree["observed_data"][name].values.tolist()
    # k is the replicated table's total of 'correct' verdicts.
    total = (rep["clusters"] * rep["clusters"]["positives"]).sum(("repeats", "positives"))
    assert (total == rep["k"]).all()
    # Replicated tables keep their row totals (items per number of verdicts), so the
    # replicated k lies in 0 … n; tn within 0 … m0 (verdicts of labelled-incorrect items).
    n = fitted.counts.n.broadcast_like(rep["k"])
    assert ((rep["k"] >= 0) & (rep["k"] <= n)).all()
    assert (rep["tn"] <= fitted.counts.m0.broadcast_like(rep["tn"])).all()
    # Over-dispersion: with item_icc ≈ 0.4 the replicated k spreads more than a Binomial(n, p).
    p = fitted.posterior["p"].mean(("chain", "draw"))
    binomial_sd = np.sqrt(fitted.counts.n * p * (1 - p))
    assert (rep["k"].std(("chain", "draw")) > 1.2 * binomial_sd).all()


def test_save_and_load_round_trip(fitted, tmp_path):
    path = fitted.save(tmp_path / "item-effect.nc")
    loaded = bj.load(path)
    assert loaded.config == fitted.config
    assert (
        loaded.tree.attrs["bayesjudge_config_hash"] == fitted.tree.attrs["bayesjudge_config_hash"]
    )
    xr.testing.assert_identical(loaded.posterior["item_icc"], fitted.posterior["item_icc"])
    assert "item_icc" in loaded.model.named_vars  # rebuilt from the counts: the same model
    assert loaded.counts.calibration_clusters.equals(fitted.counts.calibration_clusters)


def test_recovers_theta_on_simulated_repeats():
    # One data set, large enough that the 95 % interval is a few points wide; many labelled
    # items, so that the test items' share of the variance (what the clustering changes) is
    # large: the delta-method variance predicts a naive/cluster width ratio of about 0.75.
    test, calib = simulate_repeated_items(0.62, 0.85, 0.8, n=600, m0=600, m1=600, epochs=3,
                                          icc=0.5, random_seed=21)  # fmt: skip
    counts = bj.JudgeCounts.from_frames(test, calib, item="item", repeats="epoch")
    result = bj.fit(counts, draws=1000, chains=4, random_seed=2)
    row = result.summary(var_names=["theta", "item_icc"]).set_index("variable")
    assert row.loc["theta", "eti_lower"] < 0.62 < row.loc["theta", "eti_upper"]
    assert row.loc["item_icc", "eti_lower"] < 0.5 < row.loc["item_icc", "eti_upper"]
    # The naive fit (every verdict an item) is narrower: it ignores the item effect.
    naive = bj.fit(counts.without_clusters(), draws=1000, chains=4, random_seed=2)
    width = row.loc["theta", "eti_upper"] - row.loc["theta", "eti_lower"]
    naive_row = naive.summary(var_names=["theta"]).iloc[0]
    assert naive_row["eti_upper"] - naive_row["eti_lower"] < 0.9 * width


def test_one_verdict_per_item_matches_the_ordinary_model():
    """With every cluster of size 1, θ's posterior is the separate model's (MC error).

    ``bj.fit`` of such counts is the ordinary model (``has_clusters`` is False), so the
    item-effect model is sampled by ``fit_item_effect``. Means agree within 4 Monte Carlo
    standard errors (sd / √ESS of each, combined); the sds within 10 % (their relative Monte
    Carlo error is ≈ 1/√(2 ESS) < 2.5 % at ESS ≥ 1000).
    """
    counts = bj.JudgeCounts.from_counts(n=80, k=47, m0=25, tn=20, m1=25, tp=21)
    ordinary = bj.fit(counts, draws=2000, chains=4, random_seed=5).posterior["theta"]
    tree = fit_item_effect(counts, draws=2000, tune=1000, chains=4, random_seed=6)
    item = tree["posterior"].dataset["theta"]
    # ρ is not identified by one verdict per item: its posterior is its prior.
    icc = tree["posterior"].dataset["item_icc"].values.ravel()
    assert stats.kstest(icc[::8], stats.beta(*ITEM_ICC_PRIOR).cdf).pvalue > 0.001
    mcse = [float(d.std() / np.sqrt(az.ess(d).min())) for d in (ordinary, item)]
    assert abs(float(ordinary.mean() - item.mean())) < 4 * np.hypot(*mcse)
    assert float(item.std() / ordinary.std()) == pytest.approx(1.0, abs=0.1)


# ----------------------------------------------------------------------------- SBC

SBC_REPS = 200
SBC_THIN = 10  # 2 chains × 500 draws → 100 draws per rank (ranks 0 … 100)
SBC_BINS = 10
SBC_P_MIN = 0.001  # per parameter; 4 parameters: family-wise false alarm ≤ 0.004


def draw_clustered_counts(rng, theta, q0, q1, icc, n_items=30, labelled=8, repeats=3):
    """Data from the generative story: test items judged 3 times, 8 + 8 labelled items twice."""
    kappa = (1 - icc) / icc

    def verdicts(truth, r):
        mu = np.where(truth == 1, q1, 1 - q0)
        return rng.binomial(r, rng.beta(mu * kappa, (1 - mu) * kappa))

    truth = (rng.random(n_items) < theta).astype(int)
    test = np.zeros((repeats, repeats + 1), dtype=int)
    np.add.at(test[repeats - 1], verdicts(truth, repeats), 1)
    cal = np.zeros((2, repeats, repeats + 1), dtype=int)
    for t in (0, 1):
        np.add.at(cal[t, 1], verdicts(np.full(labelled, t), 2), 1)
    pos = np.arange(repeats + 1)
    ds = xr.Dataset(
        {"n": n_items * repeats, "k": int((test * pos).sum()), "m0": 2 * labelled,
         "tn": int((cal[0] * (2 - pos)).sum()), "m1": 2 * labelled, "tp": int((cal[1] * pos).sum()),
         "clusters": (("repeats", "positives"), test),
         "calibration_clusters": (("truth", "repeats", "positives"), cal)},
        coords={"repeats": np.arange(1, repeats + 1), "positives": pos, "truth": [0, 1]},
    )  # fmt: skip
    return bj.JudgeCounts(ds)


def test_simulation_based_calibration():
    """Ranks of θ, q0, q1, ρ over 200 prior draws are uniform (χ², 10 bins, p > 0.001).

    ~1 s of CPU per replicate after one compilation (nutpie reuses the compiled model).
    """
    rng = np.random.default_rng(20261127)
    names = ("theta", "q0", "q1", "item_icc")
    ranks = {v: [] for v in names}
    for rep in range(SBC_REPS):
        truth = dict(zip(names[:3], rng.uniform(size=3), strict=True))
        truth["item_icc"] = rng.beta(*ITEM_ICC_PRIOR)
        counts = draw_clustered_counts(rng, **{k if k != "item_icc" else "icc": v
                                              for k, v in truth.items()})  # fmt: skip
        with warnings.catch_warnings():
            # A few replicates near the prior's edges have low ESS; SBC judges all of them.
            warnings.simplefilter("ignore", ConvergenceWarning)
            post = bj.fit(counts, draws=500, tune=500, chains=2, random_seed=rep).posterior
        for v in names:
            draws = post[v].values.reshape(-1)[::SBC_THIN]
            ranks[v].append(int((draws < truth[v]).sum()))
    size = 2 * 500 // SBC_THIN + 1  # possible ranks 0 … 100
    for v in names:
        counts_per_bin = np.bincount(np.asarray(ranks[v]) * SBC_BINS // size, minlength=SBC_BINS)
        p = stats.chisquare(counts_per_bin).pvalue
        print(f"SBC {v}: bins {counts_per_bin.tolist()}, chi-square p = {p:.3f}")
        assert p > SBC_P_MIN, (v, counts_per_bin.tolist(), p)


def test_docs_model_section_example_runs():
    # docs/repeated-verdicts.md, "Bayesian: the item-effect model": its code block as written.
    page = Path(__file__).resolve().parents[2] / "docs" / "repeated-verdicts.md"
    section = page.read_text(encoding="utf-8").split("## Bayesian: the item-effect model", 1)[1]
    section = section.split("\n## ", 1)[0]
    (block,) = re.findall(r"```\n(.*?)```", section, flags=re.S)
    namespace: dict = {}
    exec(compile(block, str(page), "exec"), namespace)
    fit = namespace["fit"]
    assert fit.config["model"] == "item-effect"
    theta = fit.summary(var_names=["theta"]).iloc[0]
    assert theta["eti_lower"] < 0.7 < theta["eti_upper"]
