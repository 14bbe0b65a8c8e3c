"""Tests of the item-effect model of repeated verdicts (``build_item_effect_model``).

References, independent of the model's PyTensor graph:

* the mixture log-likelihood of the cluster table written with ``scipy.stats.betabinom``;
* with one verdict per item, the separate model's Binomial log p of ``k`` (``build_model``)
  minus the constant log C(n, k) (a Bernoulli product);
* the posterior mean of θ on a tiny data set by a 4-D midpoint quadrature over
  (θ, q0, q1, ρ) with the model's priors (slow: MCMC against it within 4 Monte Carlo SE);
* the posterior predictive check on posteriors fixed at the generating values (no MCMC).
"""

from __future__ import annotations

from pathlib import Path

import arviz as az
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import special, stats

import bayesjudge as bj
from bayesjudge.models.build import ITEM_ICC_PRIOR, build_item_effect_model, build_model
from bayesjudge.models.item_effect import fit_item_effect, item_effect_ppc
from bayesjudge.simulate import simulate_repeated_items


def point(model, **values):
    """A point of the model's value variables: the given values on the log-odds scale."""
    # Built by hand: model.initial_point() compiles a function (seconds).
    start = {}
    for rv in model.free_RVs:
        shape = tuple(len(model.coords[d]) for d in model.named_vars_to_dims[rv.name])
        start[model.rvs_to_values[rv].name] = np.full(shape, special.logit(values[rv.name]))
    return start


def logp(model, name, start):
    """The log p term ``name`` (an observed variable or a Potential) at ``start``."""
    # FAST_COMPILE: these graphs run once; a C compilation would cost more than it saves.
    fn = model.compile_logp(vars=[model[name]], jacobian=False, mode="FAST_COMPILE")
    return float(fn(start))


def potential(model, start):
    return logp(model, "clusters", start)


@pytest.fixture(scope="module")
def counts():
    test = pd.DataFrame({
        "item": [1, 1, 1, 2, 2, 2, 3, 3, 4, 5, 5, 5, 6, 6],
        "epoch": [1, 2, 3, 1, 2, 3, 1, 2, 1, 1, 2, 3, 1, 2],
        "judge": [1, 1, 1, 0, 1, 0, 1, 1, 0, 0, 0, 0, 1, 0],
    })  # fmt: skip
    calib = pd.DataFrame({"judge": [1, 1, 1, 0, 0, 1, 0, 0], "human": [1, 1, 1, 1, 0, 0, 0, 0]})
    return bj.JudgeCounts.from_frames(test, calib, item="item", repeats="epoch")


def scipy_mixture(table, theta, q0, q1, icc):
    kappa = (1 - icc) / icc
    total = 0.0
    for r0, k in zip(*np.nonzero(table), strict=True):
        r = r0 + 1
        good = stats.betabinom.logpmf(k, r, q1 * kappa, (1 - q1) * kappa)
        bad = stats.betabinom.logpmf(k, r, (1 - q0) * kappa, q0 * kappa)
        total += table[r0, k] * np.logaddexp(np.log(theta) + good, np.log1p(-theta) + bad)
    return total


@pytest.mark.parametrize(
    ("theta", "q0", "q1", "icc"),
    [(0.6, 0.8, 0.9, 0.3), (0.2, 0.55, 0.7, 0.05), (0.9, 0.9, 0.6, 0.8)],
)
def test_likelihood_matches_scipy_betabinom(counts, theta, q0, q1, icc):
    model = build_item_effect_model(counts)
    start = point(model, theta=theta, q0=q0, q1=q1, item_icc=icc)
    table = counts.clusters.squeeze(("system", "stratum")).values
    assert potential(model, start) == pytest.approx(scipy_mixture(table, theta, q0, q1, icc),
                                                    rel=1e-10)  # fmt: skip
    # The calibration terms are the separate model's Binomials.
    expected_tn = stats.binom.logpmf(counts.tn.item(), counts.m0.item(), q0)
    assert logp(model, "tn", start) == pytest.approx(expected_tn, rel=1e-10)


def test_one_verdict_per_item_is_the_separate_models_binomial():
    c = bj.JudgeCounts.from_counts(n=[40, 25], k=[22, 9], m0=20, tn=15, m1=20, tp=17,
                                   system=["a", "b"])  # fmt: skip
    model = build_item_effect_model(c)
    start = point(model, theta=0.45, q0=0.75, q1=0.85, item_icc=0.4)
    separate = build_model(c)
    binomial = logp(separate, "k", point(separate, theta=0.45, q0=0.75, q1=0.85))
    n, k = c.n.values, c.k.values
    log_choose = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
    expected = binomial - float(log_choose.sum())
    # With r = 1 the item effect (any icc) drops out: a Bernoulli mixture is Bernoulli(p).
    assert potential(model, start) == pytest.approx(expected, rel=1e-10)


def test_model_layout(counts):
    model = build_item_effect_model(counts)
    assert sorted(v.name for v in model.free_RVs) == ["item_icc", "q0", "q1", "theta"]
    for name in ("theta", "q0", "q1", "item_icc", "concentration", "p", "youden"):
        assert model.named_vars_to_dims[name] == ("system", "stratum")
    start = point(model, theta=0.5, q0=0.5, q1=0.5, item_icc=0.5)
    assert logp(model, "item_icc", start) == pytest.approx(stats.beta.logpdf(0.5, *ITEM_ICC_PRIOR))


def test_fit_refuses_clustered_counts_and_names_the_way_out(counts):
    with pytest.raises(ValueError, match="build_item_effect_model"):
        bj.fit(counts)


def test_builder_refuses_what_it_cannot_model(counts):
    with pytest.raises(ValueError, match="known q"):
        build_item_effect_model(counts, bj.Priors(q0=1.0))
    shared = counts.with_calibration_from(
        bj.JudgeCounts.from_counts(m0=10, tn=8, m1=10, tp=9).pool("system")
    )
    with pytest.raises(ValueError, match="shared calibration"):
        build_item_effect_model(shared)


def fixed_posterior(theta, q0, q1, concentration, draws=400):
    dims = ("chain", "draw", "system", "stratum")
    values = {"theta": theta, "q0": q0, "q1": q1, "concentration": concentration}
    full = {v: (dims, np.full((1, draws, 1, 1), x)) for v, x in values.items()}
    return xr.Dataset(full, coords={"system": ["all"], "stratum": ["all"]})


def test_ppc_accepts_the_true_law_and_flags_a_missing_item_effect():
    test, calib = simulate_repeated_items(0.5, 0.8, 0.9, n=300, m0=50, m1=50, epochs=4,
                                          icc=0.6, random_seed=8)  # fmt: skip
    c = bj.JudgeCounts.from_frames(test, calib, item="item", repeats="epoch")
    kappa = (1 - 0.6) / 0.6
    right = item_effect_ppc(c, fixed_posterior(0.5, 0.8, 0.9, kappa), random_seed=1)
    # Without an item effect (κ huge) the spread of k per item is far too small.
    wrong = item_effect_ppc(c, fixed_posterior(0.5, 0.8, 0.9, 1e9), random_seed=1)
    assert float(right["p_value"].squeeze()) > 0.05
    assert float(wrong["p_value"].squeeze()) == 0.0
    assert right["observed"].equals(c.clusters.transpose("system", "stratum", ...))
    # The predictive mean of the row totals is the number of items with r verdicts.
    assert float(right["predicted_mean"].sel(repeats=4).sum()) == pytest.approx(300)


def quadrature_theta_mean(table, tn, m0, tp, m1, nodes=36):
    """Posterior mean of θ by a midpoint rule over (θ, q0, q1, ρ) with the model's priors."""
    grid = (np.arange(nodes) + 0.5) / nodes
    th, q0, q1, rho = np.meshgrid(grid, grid, grid, grid, indexing="ij", sparse=True)
    log_post = stats.beta.logpdf(rho, *ITEM_ICC_PRIOR) + stats.binom.logpmf(tn, m0, q0)
    log_post = log_post + stats.binom.logpmf(tp, m1, q1) + scipy_mixture(table, th, q0, q1, rho)
    w = np.exp(log_post - log_post.max())
    return float((w * th).sum() / w.sum())


@pytest.mark.slow
def test_mcmc_matches_quadrature_on_a_tiny_case(counts):
    table = counts.clusters.squeeze(("system", "stratum")).values
    cal = [int(counts[v].item()) for v in ("tn", "m0", "tp", "m1")]
    expected = quadrature_theta_mean(table, *cal)
    # The midpoint rule's own error: compare two grid sizes.
    assert abs(expected - quadrature_theta_mean(table, *cal, nodes=24)) < 2e-3
    tree = fit_item_effect(counts, draws=2000, tune=1000, chains=4, random_seed=5, sampler="pymc")
    theta = tree["posterior"].dataset["theta"]
    draws = theta.values.ravel()
    ess = float(az.ess(theta).values.min())
    assert abs(draws.mean() - expected) <= 4 * draws.std() / np.sqrt(ess) + 2e-3


def card_rows(header: str) -> list[list[str]]:
    """Rows of the table with ``header`` in models/item-effect.md (backticks dropped)."""
    text = (Path(__file__).resolve().parents[2] / "models" / "item-effect.md").read_text()
    lines = text.splitlines()
    start = lines.index(header)
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip().strip("`") for cell in line.strip("|").split("|")])
    return rows


def test_model_card_variables_match_the_built_model(counts):
    model = build_item_effect_model(counts)
    kinds = {v.name: "free" for v in model.free_RVs}
    kinds |= {v.name: "observed" for v in model.observed_RVs}
    kinds |= {v.name: "deterministic" for v in model.deterministics}
    kinds |= {v.name: "potential" for v in model.potentials}
    kinds |= {v.name: "data" for v in model.data_vars}
    documented = {
        row[0]: (row[2], row[1]) for row in card_rows("| variable | dims | kind | meaning |")
    }
    actual = {
        name: (kind, str(model.named_vars_to_dims.get(name, ()) or "()").replace("'", ""))
        for name, kind in kinds.items()
    }
    assert documented == actual
    random = bj.JudgeCounts.from_counts(n=10, k=6, m0=4, tn=3, m1=6, tp=5, design="random")
    extra = set(build_item_effect_model(random).named_vars) - set(model.named_vars)
    assert extra == {row[1] for row in card_rows("| design | variable | dims | kind | meaning |")}


def test_item_effect_refuses_repeated_labelled_verdicts():
    t = pd.DataFrame(
        {
            "item": [1, 1, 2, 2, 3, 3],
            "epoch": [1, 2] * 3,
            "judge": [1, 1, 0, 1, 1, 0],
            "human": [1, 1, 0, 0, None, None],
        }
    )
    c = bj.JudgeCounts.from_frames(t, item="item", repeats="epoch")
    with pytest.raises(ValueError, match="calibration_clusters"):
        build_item_effect_model(c)
