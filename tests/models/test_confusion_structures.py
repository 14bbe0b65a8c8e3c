"""The structured confusions (models/confusion_structures.py): structure, density, shapes.

Every check draws or evaluates the graphs in PyTensor's FAST_COMPILE mode (Python kernels):
the graphs are tiny and compiling them with numba or C would cost far more than running them.
The slow tests at the end fit simulated data with NUTS and compare with the study's numpy
sampler (bayesjudge.studies.categorical_structure), which tests/studies/
test_categorical_structure.py checks against exact K = 2 posteriors.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest
from pymc.model.transform.conditioning import remove_value_transforms
from scipy import special, stats

from bayesjudge.models.categorical import CategoricalPriors, fit_categorical
from bayesjudge.models.confusion_structures import (
    ORDINAL_PRIOR,
    ordinal_confusion,
    ordinal_parameter_labels,
    ordinal_rows,
    structure_parameter_count,
    symmetric_parameter_labels,
    symmetric_preference_confusion,
)
from bayesjudge.simulate import simulate_categorical_counts
from bayesjudge.studies.categorical_structure import SETTINGS, posterior_draws, scenario_confusion

FAST = "FAST_COMPILE"
GROUPS = {"system": ["a", "b"], "stratum": ["x", "y", "z"]}
CATS = {2: ["A", "B"], 3: ["A", "tie", "B"], 4: ["A>>B", "A>B", "B>A", "B>>A"],
        5: ["A>>B", "A>B", "tie", "B>A", "B>>A"]}  # fmt: skip


def _build(structure, k, *, hierarchical=False, group_dims=("system", "stratum"), **kwargs):
    with pm.Model(coords=GROUPS) as model:
        conf = structure(
            categories=CATS[k], group_dims=group_dims, hierarchical=hierarchical, **kwargs
        )
        pm.Deterministic("confusion", conf, dims=(*group_dims, "truth", "verdict"))
    return model


def _draws(model, names, n=200, seed=1):
    values = pm.draw([model[name] for name in names], draws=n, random_seed=seed, mode=FAST)
    return dict(zip(names, values, strict=True))


def _simplex_rows(c):
    assert (c >= 0).all()
    np.testing.assert_allclose(c.sum(-1), 1.0, rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------- symmetric


@pytest.mark.parametrize("k", [2, 3, 4, 5])
@pytest.mark.parametrize("hierarchical", [False, True])
def test_symmetric_confusion_is_centrosymmetric_in_every_prior_draw(k, hierarchical):
    model = _build(symmetric_preference_confusion, k, hierarchical=hierarchical)
    c = _draws(model, ["confusion"])["confusion"]
    assert c.shape == (200, 2, 3, k, k)
    _simplex_rows(c)
    # Exactly (bitwise): the mirror rows are the same numbers, reversed.
    np.testing.assert_array_equal(c, c[..., ::-1, ::-1])
    # Teeth: rows differ, and from K = 3 on the matrix is not symmetric in the ordinary sense
    # (at K = 2, [[a, 1 − a], [1 − a, a]] is both).
    assert k == 2 or not np.allclose(c, np.swapaxes(c, -1, -2))
    assert np.abs(c[..., 0, 0] - c[..., 0, -1]).max() > 0.1


@pytest.mark.parametrize("hierarchical", [False, True])
def test_free_tie_row_leaves_only_the_tie_row_asymmetric(hierarchical):
    model = _build(symmetric_preference_confusion, 5, hierarchical=hierarchical, tie_row="free")
    c = _draws(model, ["confusion"])["confusion"]
    _simplex_rows(c)
    mirrored = c[..., ::-1, ::-1]
    sides = [0, 1, 3, 4]
    np.testing.assert_array_equal(c[..., sides, :], mirrored[..., sides, :])
    assert np.abs(c[..., 2, 0] - c[..., 2, 4]).max() > 0.1  # tie → A and tie → B differ


def test_symmetric_tie_row_prior_has_the_free_rows_marginals():
    # With flat rows (alpha=1) the half-cells are Dirichlet(2, 2, 1) at K = 5 (pair totals get
    # the summed concentration), so C[tie, tie] ~ Beta(1, 4) and C[tie, A] + C[tie, B] ~
    # Beta(2, 3): the laws they have under a free Dirichlet(1, 1, 1, 1, 1) row. KS test at
    # 4000 draws, seed 3; a Dirichlet(1, 1, 1) over half-cells would give Beta(1, 2) (p ≈ 0).
    with pm.Model() as model:
        conf = symmetric_preference_confusion(categories=CATS[5], alpha=1.0)
    c = pm.draw(conf, draws=4000, random_seed=3, mode=FAST)
    assert stats.kstest(c[:, 2, 2], stats.beta(1, 4).cdf).pvalue > 0.01
    assert stats.kstest(c[:, 2, 0] + c[:, 2, 4], stats.beta(2, 3).cdf).pvalue > 0.01
    assert stats.kstest(c[:, 2, 2], stats.beta(1, 2).cdf).pvalue < 1e-6
    assert stats.kstest(c[:, 0, 0], stats.beta(1, 4).cdf).pvalue > 0.01
    assert model["symmetric_tie"].owner.op.__class__.__name__ == "DirichletRV"


@pytest.mark.parametrize("k", [2, 3, 4, 5])
@pytest.mark.parametrize("structure", ["symmetric", "ordinal"])
def test_parameter_count_is_the_models_free_dimension(k, structure):
    function = {"symmetric": symmetric_preference_confusion, "ordinal": ordinal_confusion}
    with pm.Model() as model:
        function[structure](categories=CATS[k])
    # Unconstrained dimension per group (a Dirichlet of K cells has K − 1).
    free = sum(np.size(v) for v in model.initial_point().values())
    assert free == structure_parameter_count(k, structure)
    # Fewer than the free K(K − 1) from K = 3 on (at K = 2 both structures have 2 or fewer).
    assert free < structure_parameter_count(k, "free") or k == 2
    if structure == "symmetric":
        assert len(symmetric_parameter_labels(CATS[k])) == free
    else:
        assert len(ordinal_parameter_labels(CATS[k])) == free


def test_parameter_count_of_a_free_tie_row():
    with pm.Model() as model:
        symmetric_preference_confusion(categories=CATS[5], tie_row="free")
    free = sum(np.size(v) for v in model.initial_point().values())
    assert free == structure_parameter_count(5, "symmetric", tie_row="free") == 12


def _symmetric_numpy(side, tie_half):
    """C from the free rows and the tie half-cells, written independently (K = 5)."""
    k = side.shape[-1]
    c = np.zeros((k, k))
    for t in range(k // 2):
        c[t] = side[t]
        c[k - 1 - t] = side[t][::-1]
    c[2] = [tie_half[0] / 2, tie_half[1] / 2, tie_half[2], tie_half[1] / 2, tie_half[0] / 2]
    return c


def test_symmetric_log_density_matches_scipy():
    counts = np.array([[9, 3, 2, 1, 0], [2, 8, 4, 1, 1], [1, 3, 10, 2, 0],
                       [0, 2, 3, 7, 3], [1, 0, 2, 2, 11]])  # fmt: skip
    with pm.Model() as model:
        conf = symmetric_preference_confusion(categories=CATS[5], alpha=[[2.0] * 5] * 5)
        pm.Multinomial("cal", n=counts.sum(1), p=conf, observed=counts, dims=("truth", "verdict"))
    side = np.array([[0.5, 0.2, 0.15, 0.1, 0.05], [0.1, 0.6, 0.2, 0.06, 0.04]])
    tie_half = np.array([0.1, 0.3, 0.6])
    plain = remove_value_transforms(model)
    logp = plain.compile_logp(mode=FAST)({"symmetric_side": side, "symmetric_tie": tie_half})
    c = _symmetric_numpy(side, tie_half)
    expected = (
        sum(stats.dirichlet.logpdf(row, [2.0] * 5) for row in side)
        + stats.dirichlet.logpdf(tie_half, [4.0, 4.0, 2.0])
        + sum(stats.multinomial.logpmf(counts[t], counts[t].sum(), c[t]) for t in range(5))
    )
    np.testing.assert_allclose(logp, expected, rtol=1e-12)


def test_hierarchical_symmetric_log_density_matches_scipy():
    # K = 3, one population over 2 systems: parameters A→tie, A→B, tie→A|B.
    counts = np.array([[[7, 2, 1], [1, 5, 2], [0, 3, 9]], [[5, 3, 2], [2, 6, 0], [1, 1, 8]]])
    with pm.Model(coords={"system": ["a", "b"]}) as model:
        conf = symmetric_preference_confusion(
            categories=CATS[3], group_dims=("system",), hierarchical=True,
            error_logit_mean=(-1.0, 2.0), error_logit_scale=0.5,
        )  # fmt: skip
        pm.Multinomial("cal", n=counts.sum(-1), p=conf, observed=counts,
                       dims=("system", "truth", "verdict"))  # fmt: skip
    mean = np.array([-1.2, -2.0, -0.7])
    scale = np.array([0.4, 0.9])  # rows A and tie
    z = np.array([[0.3, -1.1, 0.5], [-0.4, 0.8, 1.6]])
    plain = remove_value_transforms(model)
    point = {"symmetric_logratio_mean": mean, "symmetric_logratio_scale": scale,
             "symmetric_logratio_z": z}  # fmt: skip
    logp = plain.compile_logp(mode=FAST)(point)
    u = mean + scale[[0, 0, 1]] * z
    expected = (
        stats.norm.logpdf(mean, -1.0, 2.0).sum()
        + stats.halfnorm.logpdf(scale, scale=0.5).sum()
        + stats.norm.logpdf(z).sum()
    )
    for g in range(2):
        a = special.softmax([0.0, u[g, 0], u[g, 1]])  # row A: reference A→A
        tie = special.softmax([u[g, 2], 0.0, u[g, 2]])  # tie row: tie→A = tie→B
        c = np.array([a, tie, a[::-1]])
        expected += sum(stats.multinomial.logpmf(counts[g, t], counts[g, t].sum(), c[t])
                        for t in range(3))  # fmt: skip
    np.testing.assert_allclose(logp, expected, rtol=1e-12)


# ----------------------------------------------------------------------------- ordinal


def _cumulative_logits(c):
    """logit P(v ≤ j | t) as log(head sum) − log(tail sum): no 1 − cum cancellation."""
    head = np.cumsum(c, axis=-1)[..., :-1]
    tail = np.cumsum(c[..., ::-1], axis=-1)[..., ::-1][..., 1:]
    return np.log(head) - np.log(tail)


@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("hierarchical", [False, True])
def test_ordinal_confusion_is_a_cumulative_logit_judge_in_every_prior_draw(k, hierarchical):
    model = _build(ordinal_confusion, k, hierarchical=hierarchical)
    d = _draws(model, ["confusion", "ordinal_cutpoints", "ordinal_location"])
    c, kappa, eta = d["confusion"], d["ordinal_cutpoints"], d["ordinal_location"]
    assert c.shape == (200, 2, 3, k, k) and kappa.shape == (200, 2, 3, k - 1)
    _simplex_rows(c)
    assert (np.diff(kappa, axis=-1) > 0).all() and (np.diff(eta, axis=-1) > 0).all()
    assert (eta[..., 0] == 0).all()
    # Stochastic order: P(v ≤ j | c) falls as the truth c rises (the judge is ordinal).
    cum = np.cumsum(c, axis=-1)[..., :-1]
    assert (np.diff(cum, axis=-2) <= 1e-12).all()
    # The rows are exactly the cumulative-logit judge's, computed with scipy's expit.
    expected_cum = special.expit(kappa[..., None, :] - eta[..., :, None])
    np.testing.assert_allclose(cum, expected_cum, rtol=0, atol=1e-12)


def test_ordinal_rows_have_proportional_odds():
    # logit P(v ≤ j | c) − logit P(v ≤ j | c') = η_c' − η_c for every j: the structure.
    model = _build(ordinal_confusion, 5)
    d = _draws(model, ["confusion", "ordinal_location"], n=100, seed=5)
    logits = _cumulative_logits(d["confusion"])
    keep = d["confusion"].min(axis=(-1, -2)) > 1e-250  # every cell resolved in float64
    assert keep.mean() > 0.9
    gaps = logits[..., :1, :] - logits[..., 1:, :]  # (…, truth 1..4, cutpoint)
    location = np.broadcast_to(d["ordinal_location"][..., 1:, None], gaps.shape)
    np.testing.assert_allclose(gaps[keep], location[keep], rtol=0, atol=1e-9)


def test_ordinal_rows_match_pymc_ordered_logistic():
    # An independent implementation of the same density: PyMC's OrderedLogistic.
    kappa = np.array([-2.0, 0.5, 1.0, 4.0])
    eta = np.array([0.0, 0.8, 2.5, 3.0, 6.0])
    rows = ordinal_rows(pt.as_tensor(kappa), pt.as_tensor(eta)).eval(mode=FAST)
    dist = pm.OrderedLogistic.dist(eta=eta[:, None], cutpoints=kappa, shape=(5, 5))
    logp = pm.logp(dist, np.broadcast_to(np.arange(5), (5, 5))).eval(mode=FAST)
    np.testing.assert_allclose(np.log(rows), logp, rtol=1e-10)


def test_ordinal_rows_stay_accurate_where_the_logistics_saturate():
    # σ(42) − σ(40) is about e^-40 − e^-42; 1 − 1 in float64 would give 0 (log 0 = −inf).
    kappa, eta = np.array([40.0, 42.0]), np.array([0.0, 1.0, 100.0])
    rows = ordinal_rows(pt.as_tensor(kappa), pt.as_tensor(eta)).eval(mode=FAST)
    np.testing.assert_allclose(rows[0, 1], special.expit(-40.0) - special.expit(-42.0),
                               rtol=1e-12)  # fmt: skip
    np.testing.assert_allclose(rows[2], [special.expit(-60.0), special.expit(-58.0)
                                         - special.expit(-60.0), special.expit(58.0)],
                               rtol=1e-12)  # fmt: skip
    assert (rows > 0).all()


def test_ordinal_log_density_matches_scipy():
    counts = np.array([[8, 3, 1], [2, 9, 3], [0, 4, 10]])
    with pm.Model() as model:
        conf = ordinal_confusion(categories=[1, 2, 3])
        pm.Multinomial("cal", n=counts.sum(1), p=conf, observed=counts, dims=("truth", "verdict"))
    raw = np.array([1.2, np.log(2.5), np.log(2.0), np.log(3.5)])
    logp = model.compile_logp(mode=FAST)({"ordinal_raw": raw})
    kappa = np.array([1.2, 1.2 + 2.5])
    eta = np.array([0.0, 2.0, 5.5])
    cum = special.expit(kappa[None, :] - eta[:, None])
    c = np.diff(np.column_stack([np.zeros(3), cum, np.ones(3)]), axis=1)
    prior = [ORDINAL_PRIOR["cutpoint"], ORDINAL_PRIOR["log_gap"], *[ORDINAL_PRIOR["log_step"]] * 2]
    expected = sum(stats.norm.logpdf(x, m, s) for x, (m, s) in zip(raw, prior, strict=True))
    expected += sum(stats.multinomial.logpmf(counts[t], counts[t].sum(), c[t]) for t in range(3))
    np.testing.assert_allclose(logp, expected, rtol=1e-12)


def test_hierarchical_ordinal_log_density_matches_scipy():
    # K = 2 over 3 systems × 2 strata, pooled over system only: μ, σ per stratum.
    coords = {"system": ["a", "b", "c"], "stratum": ["x", "y"]}
    dims = ("system", "stratum", "truth", "verdict")
    counts = np.arange(24).reshape(3, 2, 2, 2) % 7
    with pm.Model(coords=coords) as model:
        conf = ordinal_confusion(
            categories=["no", "yes"], group_dims=("system", "stratum"), hierarchical=True,
            pool_over="system", scale_prior=0.7,
        )  # fmt: skip
        pm.Multinomial("cal", n=counts.sum(-1), p=conf, observed=counts, dims=dims)
    assert model.named_vars_to_dims["ordinal_raw_mean"] == ("stratum", "ordinal_parameter")
    assert model.named_vars_to_dims["ordinal_raw_z"] == ("system", "stratum", "ordinal_parameter")
    rng = np.random.default_rng(0)
    mean, scale, z = (
        rng.normal(size=(2, 2)),
        rng.uniform(0.2, 1, (2, 2)),
        rng.normal(size=(3, 2, 2)),
    )
    plain = remove_value_transforms(model)
    point = {"ordinal_raw_mean": mean, "ordinal_raw_scale": scale, "ordinal_raw_z": z}
    logp = plain.compile_logp(mode=FAST)(point)
    prior = np.array([ORDINAL_PRIOR["cutpoint"], ORDINAL_PRIOR["log_step"]])
    expected = (
        stats.norm.logpdf(mean, prior[:, 0], prior[:, 1]).sum()
        + stats.halfnorm.logpdf(scale, scale=0.7).sum()
        + stats.norm.logpdf(z).sum()
    )
    raw = mean + scale * z  # (system, stratum, parameter): κ_0 and log η_1
    q0 = special.expit(raw[..., 0])  # P(no | no)
    q1 = 1 - special.expit(raw[..., 0] - np.exp(raw[..., 1]))  # P(yes | yes)
    expected += stats.binom.logpmf(counts[..., 0, 0], counts[..., 0, :].sum(-1), q0).sum()
    expected += stats.binom.logpmf(counts[..., 1, 1], counts[..., 1, :].sum(-1), q1).sum()
    np.testing.assert_allclose(logp, expected, rtol=1e-12)


def test_symmetric_default_rows_are_perks_like_the_free_model():
    # Default alpha: 1/K per cell (default_confusion_prior), the free model's default rows.
    # At K = 5: C[A, A] ~ Beta(1/5, 4/5), C[tie, tie] ~ Beta(1/5, 4/5) and the tie row's
    # mirror pair C[tie, A] + C[tie, B] ~ Beta(2/5, 3/5). KS at 4000 draws, seed 4; flat rows
    # (Beta(1, 4)) are rejected.
    with pm.Model():
        conf = symmetric_preference_confusion(categories=CATS[5])
    c = pm.draw(conf, draws=4000, random_seed=4, mode=FAST)
    assert stats.kstest(c[:, 0, 0], stats.beta(0.2, 0.8).cdf).pvalue > 0.01
    assert stats.kstest(c[:, 2, 2], stats.beta(0.2, 0.8).cdf).pvalue > 0.01
    assert stats.kstest(c[:, 2, 0] + c[:, 2, 4], stats.beta(0.4, 0.6).cdf).pvalue > 0.01
    assert stats.kstest(c[:, 0, 0], stats.beta(1, 4).cdf).pvalue < 1e-6


# ----------------------------------------------------------------------------- shapes, input


def test_prior_predictive_shapes_and_dims():
    with pm.Model(coords=GROUPS) as model:
        sym = symmetric_preference_confusion(categories=CATS[3], group_dims=("system", "stratum"))
        pm.Deterministic("confusion", sym, dims=("system", "stratum", "truth", "verdict"))
        pm.Multinomial("cal", n=20, p=sym, dims=("system", "stratum", "truth", "verdict"))
    prior = pm.sample_prior_predictive(
        draws=7, model=model, random_seed=1, compile_kwargs={"mode": FAST}
    )
    ds = prior["prior"].dataset
    assert ds["confusion"].dims == ("chain", "draw", "system", "stratum", "truth", "verdict")
    assert ds["confusion"].shape == (1, 7, 2, 3, 3, 3)
    assert ds["symmetric_side"].dims[2:] == ("system", "stratum", "truth_side", "verdict")
    assert ds["symmetric_tie"].shape[2:] == (2, 3, 2)
    assert ds["truth"].values.tolist() == CATS[3]
    cal = ds["cal"]  # not observed: a prior variable
    assert cal.shape == (1, 7, 2, 3, 3, 3) and (cal.sum("verdict") == 20).all()


def test_every_variable_has_dims():
    for structure in (symmetric_preference_confusion, ordinal_confusion):
        for hierarchical in (False, True):
            model = _build(structure, 5, hierarchical=hierarchical)
            for name in model.named_vars:
                assert model.named_vars_to_dims.get(name), f"{name} has no dims"


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"categories": "AB"}, TypeError, "list of category labels"),
        ({"categories": ["A"]}, ValueError, "at least 2 distinct"),
        ({"categories": ["A", "A", "B"]}, ValueError, "at least 2 distinct"),
        ({"categories": ["A", "B"], "group_dims": ("judge",)}, ValueError, "no coords"),
        ({"categories": ["A", "B"], "hierarchical": True, "pool_over": "x"}, ValueError, "pool"),
        ({"categories": ["A", "t", "B"], "tie_row": "mirror"}, ValueError, "tie_row"),
        ({"categories": ["A", "B"], "alpha": -1}, ValueError, "alpha"),
        ({"categories": ["A", "B"], "alpha": [[1, 1]]}, ValueError, r"\(2, 2\)"),
    ],
)
def test_symmetric_bad_input(kwargs, error, match):
    with pm.Model(), pytest.raises(error, match=match):
        symmetric_preference_confusion(**kwargs)


def test_ordinal_bad_input_and_coord_clash():
    with pm.Model(), pytest.raises(ValueError, match="log_spread"):
        ordinal_confusion(categories=[1, 2, 3], prior={"log_spread": (0, 1)})
    with pm.Model(coords={"truth": [1, 2, 3]}), pytest.raises(ValueError, match="coord 'truth'"):
        ordinal_confusion(categories=[1, 2, 3, 4])
    with pytest.raises(ValueError, match="'free', 'symmetric' or 'ordinal'"):
        structure_parameter_count(3, "banded")


# ----------------------------------------------------------------------------- fits (slow)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("setting", "structure", "m", "copies"),
    [("symmetric", "symmetric", 30, 16), ("ordinal", "ordinal", 30, 16),
     ("ordinal", "free", 10, 64)],
)  # fmt: skip
def test_fit_recovers_the_truth_and_agrees_with_an_independent_sampler(
    setting, structure, m, copies
):
    # bayesjudge.models.categorical.fit_categorical (NUTS) against the study's numpy sampler
    # (data augmentation + confusion moves, checked against quadratures at K = 2) on one
    # simulated data set of the study's setting where the structure holds; then recovery of
    # the true θ. "free" on the K = 5 rubric at the study's m = 10 is its reference model,
    # whose default rows (Dirichlet(1/5)) differ most from the flat ones; its moves are
    # accepted less often (0.09), hence 64 chains.
    settings = SETTINGS[setting]
    cats, theta = settings["categories"], np.asarray(settings["theta"])
    conf = scenario_confusion(setting, "holds")
    counts = simulate_categorical_counts(
        theta, conf, n=800, m=[m] * len(cats), categories=cats,
        ordered=setting == "ordinal", random_seed=11,
    )  # fmt: skip
    # Both at their default priors: θ ~ Dirichlet(1), the free and symmetric rows
    # ~ Dirichlet(1/K) (Perks, CategoricalPriors().confusion_alpha), the ordinal judge
    # ~ ORDINAL_PRIOR; the sampler reads the same definitions (checked here, so a drift fails
    # loudly).
    default_rows = CategoricalPriors().confusion_alpha(len(cats))
    np.testing.assert_array_equal(default_rows, np.full_like(default_rows, 1 / len(cats)))
    fit = fit_categorical(counts, confusion=structure, draws=1000, chains=4, random_seed=3)
    post = fit.posterior["theta"].squeeze(drop=True)  # (chain, draw, category)
    nuts_mean = post.mean(("chain", "draw")).values
    nuts_sd = post.std(("chain", "draw")).values
    nuts_mcse = nuts_sd / np.sqrt(400)  # the fit warns below ESS 400
    test = counts.ds["test"].values.reshape(1, -1)
    cal = counts.ds["calibration"].values.reshape(1, len(cats), len(cats))

    def sampler(**priors):
        draws, info = posterior_draws(
            np.repeat(test, copies, 0), np.repeat(cal, copies, 0), confusion=structure,
            iterations=3000, rng=np.random.default_rng(4), ordinal_prior=ORDINAL_PRIOR, **priors,
        )  # fmt: skip
        chain_means = draws.mean(0)  # (chain, category)
        return chain_means.mean(0), chain_means.std(0, ddof=1) / np.sqrt(copies), info

    gibbs_mean, gibbs_mcse, info = sampler()
    assert info["confusion_prior"] == default_rows[0, 0]
    tolerance = 4 * np.sqrt(gibbs_mcse**2 + nuts_mcse**2) + 1e-4
    np.testing.assert_array_less(np.abs(nuts_mean - gibbs_mean), tolerance)
    if structure == "free":
        # Teeth: the sampler with the flat rows first recorded misses the default fit
        # (measured: θ_1 off by 0.031 against a tolerance of 0.016).
        flat_mean, _, _ = sampler(confusion_prior=1.0)
        assert (np.abs(nuts_mean - flat_mean) > tolerance).any()
    # Recovery: the truth lies within 4 posterior sd of the posterior mean.
    np.testing.assert_array_less(np.abs(nuts_mean - theta), 4 * nuts_sd)
