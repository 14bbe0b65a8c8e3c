"""Tests of the item-effect model of repeated verdicts (``build_item_effect_model``).

References, independent of the model's PyTensor graph:

* the multinomial log-likelihood of each row of the cluster tables (test items: a θ-mixture of
  ``scipy.stats.betabinom``; labelled items: the betabinom of their known truth), written with
  ``scipy.stats.multinomial``;
* with one verdict per item, the separate model's Binomial log p of ``k`` (and of ``tn``,
  ``tp`` for labelled items) from ``build_model``, exactly (a multinomial over two cells is a
  binomial);
* the posterior mean of θ on a tiny data set by a 4-D midpoint quadrature over
  (θ, q0, q1, ρ) with the model's priors (slow: MCMC against it within 4 Monte Carlo SE);
* the posterior predictive check on posteriors fixed at the generating values (no MCMC).

Fitting through ``bj.fit`` (compiles the model: tens of seconds) is tested in
``test_item_effect_fit.py`` (slow).
"""

from __future__ import annotations

import re
from pathlib import Path

import arviz as az
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import special, stats

import bayesjudge as bj
from bayesjudge.models.build import (
    ITEM_ICC_PRIOR,
    build_item_effect_model,
    build_model,
    cluster_tables,
)
from bayesjudge.models.item_effect import (
    ITEM_EFFECT,
    fit_item_effect,
    item_effect_config,
    item_effect_ppc,
)
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
    """The log p term ``name`` (a variable of the model) at ``start``."""
    return terms(model, [name])(start)[0]


def terms(model, names):
    """One compiled function: the log p terms of ``names`` at a point, as a list of floats."""
    # FAST_COMPILE: these graphs run a few times; a C compilation would cost more than it saves.
    fn = model.compile_logp(vars=[model[v] for v in names], jacobian=False, sum=False,
                            mode="FAST_COMPILE")  # fmt: skip

    def at(start):
        return [float(np.sum(t)) for t in fn(start)]

    return at


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


@pytest.fixture(scope="module")
def labelled():
    """One table, random design: labelled and unlabelled items judged up to three times."""
    table = pd.DataFrame({
        "item": [1, 1, 1, 2, 2, 3, 3, 3, 4, 5, 5, 6, 6, 6, 7, 8, 8],
        "epoch": [1, 2, 3, 1, 2, 1, 2, 3, 1, 1, 2, 1, 2, 3, 1, 1, 2],
        "judge": [1, 1, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1],
        "human": [1, 1, 1, 0, 0, 1, 1, 1, 0, None, None, None, None, None, None, 1, 1],
    })  # fmt: skip
    return bj.JudgeCounts.from_frames(table, item="item", repeats="epoch")


def row_probabilities(r, theta, q0, q1, icc, truth=None):
    """P(k 'correct' verdicts of r) for k = 0 … r by scipy.stats.betabinom (truth None: mixed)."""
    kappa = (1 - icc) / icc
    k = np.arange(r + 1)
    right = stats.betabinom.pmf(k, r, q1 * kappa, (1 - q1) * kappa)
    wrong = stats.betabinom.pmf(k, r, (1 - q0) * kappa, q0 * kappa)
    return {None: theta * right + (1 - theta) * wrong, 0: wrong, 1: right}[truth]


def scipy_rows(table, theta, q0, q1, icc, truth=None):
    """Σ over rows r of multinomial log p(row; items, row_probabilities) (scipy)."""
    total = 0.0
    for r0, row in enumerate(table):
        r = r0 + 1
        assert not row[r + 1 :].any()
        probabilities = row_probabilities(r, theta, q0, q1, icc, truth)
        total += stats.multinomial.logpmf(row[: r + 1], row.sum(), probabilities)
    return total


def scipy_mixture(table, theta, q0, q1, icc):
    """Σ over items of log(θ·betabinom_right + (1 − θ)·betabinom_wrong): no multinomial term."""
    kappa = (1 - icc) / icc
    total = 0.0
    for r0, k in zip(*np.nonzero(table), strict=True):
        r = r0 + 1
        good = stats.betabinom.logpmf(k, r, q1 * kappa, (1 - q1) * kappa)
        bad = stats.betabinom.logpmf(k, r, (1 - q0) * kappa, q0 * kappa)
        total += table[r0, k] * np.logaddexp(np.log(theta) + good, np.log1p(-theta) + bad)
    return total


PARAMETERS = [(0.6, 0.8, 0.9, 0.3), (0.2, 0.55, 0.7, 0.05), (0.9, 0.9, 0.6, 0.8)]


def test_likelihood_matches_scipy_betabinom(counts):
    model = build_item_effect_model(counts)
    table = counts.clusters.squeeze(("system", "stratum")).values
    at = terms(model, ["clusters", "tn", "k"])
    for theta, q0, q1, icc in PARAMETERS:
        got = at(point(model, theta=theta, q0=q0, q1=q1, item_icc=icc))
        expected = scipy_rows(table, theta, q0, q1, icc)
        assert got[0] == pytest.approx(expected, rel=1e-10)
        # The multinomial rows differ from the per-item mixture by log(items! / Π counts!).
        constant = sum(
            special.gammaln(row.sum() + 1) - special.gammaln(row + 1).sum() for row in table
        )
        assert expected == pytest.approx(scipy_mixture(table, theta, q0, q1, icc) + constant)
        # The calibration terms are the separate model's Binomials; k is the table's total.
        assert got[1] == pytest.approx(
            stats.binom.logpmf(counts.tn.item(), counts.m0.item(), q0), rel=1e-10
        )
        assert got[2] == 0.0


def test_labelled_repeats_likelihood_matches_scipy_betabinom(labelled):
    assert labelled.design == "random"
    model = build_item_effect_model(labelled)
    at = terms(model, ["calibration_clusters", "clusters", "truth", "tn", "tp"])
    cal = labelled.calibration_clusters.squeeze(("system", "stratum"))
    test = labelled.clusters.squeeze(("system", "stratum")).values
    # Random design: the labelled *items* (2 truly incorrect, 3 correct), not their verdicts.
    items = cal.sum(("repeats", "positives")).values
    assert items.tolist() == [2, 3]
    for theta, q0, q1, icc in PARAMETERS:
        got = at(point(model, theta=theta, q0=q0, q1=q1, item_icc=icc))
        expected = sum(scipy_rows(cal.sel(truth=t).values, theta, q0, q1, icc, truth=t)
                       for t in (0, 1))  # fmt: skip
        assert got[0] == pytest.approx(expected, rel=1e-10)
        assert got[1] == pytest.approx(scipy_rows(test, theta, q0, q1, icc), rel=1e-10)
        assert got[2] == pytest.approx(stats.binom.logpmf(items[1], items.sum(), theta), rel=1e-10)
        # tn, tp (verdicts agreeing with the label) are the table's totals: no likelihood.
        assert got[3] == got[4] == 0.0


def test_one_verdict_per_item_is_the_separate_models_binomial():
    c = bj.JudgeCounts.from_counts(n=[40, 25], k=[22, 9], m0=20, tn=15, m1=20, tp=17,
                                   system=["a", "b"])  # fmt: skip
    model = build_item_effect_model(c)
    start = point(model, theta=0.45, q0=0.75, q1=0.85, item_icc=0.4)
    separate = build_model(c)
    at = point(separate, theta=0.45, q0=0.75, q1=0.85)
    # With r = 1 the item effect (any icc) drops out: a Bernoulli mixture is Bernoulli(p),
    # and a multinomial over (k = 0, k = 1) is the Binomial of k.
    assert potential(model, start) == pytest.approx(logp(separate, "k", at), rel=1e-10)


def test_labelled_single_verdicts_are_the_separate_models_binomials():
    """A labelled cluster table with one verdict per item gives the Binomials of tn and tp."""
    table = np.zeros((2, 2, 3), dtype=int)
    table[0, 0, :2] = [14, 6]  # 20 truly incorrect items with one verdict: 6 called correct
    table[1, 0, :2] = [3, 17]  # 20 truly correct items: 17 called correct
    test = np.zeros((2, 3), dtype=int)
    test[1] = [5, 9, 11]  # 25 test items judged twice
    ds = xr.Dataset(
        {"n": 50, "k": 31, "m0": 20, "tn": 14, "m1": 20, "tp": 17,
         "clusters": (("repeats", "positives"), test),
         "calibration_clusters": (("truth", "repeats", "positives"), table)},
        coords={"repeats": [1, 2], "positives": [0, 1, 2], "truth": [0, 1]},
    )  # fmt: skip
    c = bj.JudgeCounts(ds)
    model = build_item_effect_model(c)
    start = point(model, theta=0.45, q0=0.75, q1=0.85, item_icc=0.4)
    separate = build_model(c.without_clusters())
    at = point(separate, theta=0.45, q0=0.75, q1=0.85)
    binomials = logp(separate, "tn", at) + logp(separate, "tp", at)
    assert logp(model, "calibration_clusters", start) == pytest.approx(binomials, rel=1e-10)


def test_model_layout(labelled):
    model = build_item_effect_model(labelled)
    assert sorted(v.name for v in model.free_RVs) == ["item_icc", "q0", "q1", "theta"]
    for name in ("theta", "q0", "q1", "item_icc", "concentration", "p", "youden", "k", "tn"):
        assert model.named_vars_to_dims[name] == ("system", "stratum")
    assert model.named_vars_to_dims["calibration_clusters"] == (
        "system", "stratum", "label", "repeats", "positives")  # fmt: skip
    start = point(model, theta=0.5, q0=0.5, q1=0.5, item_icc=0.5)
    assert logp(model, "item_icc", start) == pytest.approx(stats.beta.logpdf(0.5, *ITEM_ICC_PRIOR))


def test_cluster_tables_share_one_repeats_axis(labelled, counts):
    tables = cluster_tables(labelled)
    assert tables["test"].shape == (1, 1, 3, 4) and tables["labelled"].shape == (1, 1, 2, 3, 4)
    assert tables["test"].sum() == labelled.clusters.sum()
    # Without labelled repeats the calibration counts stay Binomial (no labelled table).
    assert cluster_tables(counts)["labelled"] is None


def test_builder_refuses_what_it_cannot_model(counts):
    with pytest.raises(ValueError, match="known q"):
        build_item_effect_model(counts, bj.Priors(q0=1.0))
    shared = counts.with_calibration_from(
        bj.JudgeCounts.from_counts(m0=10, tn=8, m1=10, tp=9).pool("system")
    )
    with pytest.raises(ValueError, match="shared calibration"):
        build_item_effect_model(shared)
    # build_model of clustered counts is the item-effect model, or a clear refusal.
    assert "item_icc" in build_model(counts).named_vars
    with pytest.raises(ValueError, match=r"calibration='hierarchical' is not available"):
        build_model(counts, calibration="hierarchical")


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"method": "exact"}, "method='exact'"),
        ({"calibration": "hierarchical"}, "calibration='hierarchical'"),
        ({"calibration": "shared", "pool_over": "system"}, "pool_over='system'"),
        ({"aggregate": "dirichlet"}, "aggregate='dirichlet'"),
        ({"judge_better_than_chance": True}, "judge_better_than_chance=True"),
        ({"estimand": "test-set"}, "estimand='test-set'"),
        ({"paired": True}, "paired=True"),
        ({"priors": bj.Priors(q1=0.9)}, "known q"),
    ],
)
def test_fit_refuses_what_the_item_effect_model_cannot_fit(labelled, options, named):
    # Refused before anything is compiled (fast).
    with pytest.raises(ValueError, match=re.escape(named)):
        bj.fit(labelled, **options)


def test_item_effect_config_records_the_model_and_its_shape(labelled, counts):
    config = item_effect_config(labelled)
    assert (config["model"], config["repeats"], config["labelled_repeats"]) == (
        ITEM_EFFECT, 3, True)  # fmt: skip
    assert config["design"] == "random" and config["aggregate"] is None
    assert item_effect_config(counts)["labelled_repeats"] is False


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


def test_model_card_variables_match_the_built_model(counts, labelled):
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
    extras = {}
    for condition, other in (('counts.design="random"', random), ("labelled repeats", labelled)):
        built = build_item_effect_model(other)
        for name in set(built.named_vars) - set(model.named_vars) - set(extras):
            dims = str(built.named_vars_to_dims.get(name, ()) or "()").replace("'", "")
            extras[name] = (condition, dims)
    rows = card_rows("| design | variable | dims | kind | meaning |")
    assert {row[1]: (row[0], row[2]) for row in rows} == extras


def test_all_data_enter_as_containers_so_a_compiled_model_can_be_reused(labelled):
    """Model A with B's data in its containers has B's log p (no data baked in as constants).

    nutpie reuses a compiled model for new data of the same shape by swapping its data
    containers (``bj.fit``'s cache): a count left as a constant would silently stay A's.
    """
    table = pd.DataFrame({
        "item": [1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 7, 8],
        "epoch": [1, 2, 3, 1, 2, 3, 1, 2, 1, 2, 1, 2, 1, 1, 2, 1],
        "judge": [0, 0, 0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 0, 1, 1],
        "human": [0, 0, 0, 1, 1, 1, 0, 0, None, None, None, None, None, 1, 1, 0],
    })  # fmt: skip
    other = bj.JudgeCounts.from_frames(table, item="item", repeats="epoch")
    a, b = build_item_effect_model(labelled), build_item_effect_model(other)
    assert {v.name: v.get_value().shape for v in a.data_vars} == {
        v.name: v.get_value().shape for v in b.data_vars}  # fmt: skip
    start = point(a, theta=0.35, q0=0.7, q1=0.8, item_icc=0.2)
    names = ["clusters", "calibration_clusters", "truth", "k", "tn", "tp"]
    expected = terms(b, names)(start)
    for var in a.data_vars:
        var.set_value(b[var.name].get_value())
    assert terms(a, names)(start) == pytest.approx(expected, rel=1e-12)
