"""The K-category Bayesian models (bayesjudge.models.categorical), fast tier.

* The model's log density equals the same density written with scipy.stats (Dirichlet,
  Multinomial, Normal, HalfNormal) at random points, for every calibration model and both
  labelling designs, to rtol 1e-10 (no sampling; ``mode="FAST_COMPILE"``).
* Options are checked before anything is built; bad input raises naming the field.
* One small fit (K = 3, one group) matches an independent importance-sampling reference
  written in plain numpy (``_importance_reference``), within Monte Carlo error.
* The fit's summary, compare, ppc, save/load and prior predictive have the promised shape.
"""

from __future__ import annotations

import ast
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from pymc.model.transform.conditioning import remove_value_transforms
from scipy import special, stats

from bayesjudge.data import CategoricalCounts
from bayesjudge.models import categorical as cm
from bayesjudge.warnings import SmallSampleWarning

RTOL = 1e-10
MODE = "FAST_COMPILE"
CATS = ["A", "tie", "B"]
SYSTEMS = ["s1", "s2"]
STRATA = ["x", "y", "z"]
RNG = np.random.default_rng(20261127)
# 2 × 3 groups, K = 3; one group without test items (n = 0) and one empty truth row.
TEST = RNG.integers(0, 60, size=(2, 3, 3))
TEST[0, 2] = 0
CAL = RNG.integers(0, 8, size=(2, 3, 3, 3)) + 12 * np.eye(3, dtype=np.int64)
PRIORS = cm.CategoricalPriors(
    theta=(1.3, 2.1, 0.7),
    confusion=[[4.1, 1.3, 0.9], [1.1, 3.3, 1.7], [0.6, 1.2, 5.1]],
    error_logit_mean=(-1.7, 1.3),
    error_logit_scale=0.8,
)


def _counts(design="stratified", test=TEST, cal=CAL, **kwargs):
    return CategoricalCounts.from_counts(
        test, cal, categories=CATS, system=SYSTEMS, stratum=STRATA, design=design, **kwargs
    )


# ----------------------------------------------------------------------------- log density


def _scipy_logp(point: dict, config: dict, design: str) -> float:
    """log prior + log likelihood of the model, written independently with scipy.stats."""
    k = len(CATS)
    theta = point["theta"]  # (system, stratum, category)
    total = 0.0
    alpha_theta = PRIORS.theta_alpha(k)
    for g in np.ndindex(theta.shape[:2]):
        total += stats.dirichlet.logpdf(theta[g], alpha_theta)
    if config["calibration"] == "hierarchical":
        mean, sd = PRIORS.error_logit_mean
        mu, sigma, z = point["error_logit_mean"], point["error_logit_scale"], point["error_z"]
        total += stats.norm.logpdf(mu, mean, sd).sum()
        total += stats.halfnorm.logpdf(sigma, scale=PRIORS.error_logit_scale).sum()
        total += stats.norm.logpdf(z).sum()
        conf = np.zeros((*theta.shape[:2], k, k))
        e = 0
        for t in range(k):
            for v in range(k):
                if t != v:
                    conf[..., t, v] = mu[e] + sigma[t] * z[..., e]
                    e += 1
        conf = special.softmax(conf, axis=-1)
    else:
        conf = point["confusion"]
        alpha = PRIORS.confusion_alpha(k)
        for g in np.ndindex(conf.shape[:-2]):
            for t in range(k):
                total += stats.dirichlet.logpdf(conf[g][t], alpha[t])
        if config["calibration"] == "shared":  # one matrix for every group
            conf = np.broadcast_to(conf, (*theta.shape[:2], k, k))
    for g in np.ndindex(theta.shape[:2]):
        p = theta[g] @ conf[g]
        total += stats.multinomial.logpmf(TEST[g], TEST[g].sum(), p)
        for t in range(k):
            total += stats.multinomial.logpmf(CAL[g][t], CAL[g][t].sum(), conf[g][t])
        if design == "random":
            m = CAL[g].sum(-1)
            total += stats.multinomial.logpmf(m, m.sum(), theta[g])
    return float(total)


def _random_point(model, rng) -> dict:
    point = {}
    for rv in model.free_RVs:
        shape = tuple(model[rv.name].shape.eval())
        if rv.name in ("theta", "confusion"):
            point[rv.name] = rng.dirichlet(np.ones(shape[-1]), size=shape[:-1])
        elif rv.name == "error_logit_scale":
            point[rv.name] = rng.uniform(0.2, 2.0, size=shape)
        else:
            point[rv.name] = rng.normal(0.0, 1.0, size=shape)
    return point


@pytest.mark.parametrize("design", ["stratified", "random"])
@pytest.mark.parametrize("calibration", ["separate", "shared", "hierarchical"])
def test_log_density_equals_scipy(calibration, design):
    counts = _counts(design)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every confusion row has calibration items
        model = cm.build_categorical_model(counts, calibration=calibration, priors=PRIORS)
    config = cm.categorical_model_config(counts, calibration, priors=PRIORS)
    plain = remove_value_transforms(model)
    logp = plain.compile_logp(jacobian=False, mode=MODE)
    rng = np.random.default_rng(7)
    observed = {v.name for v in model.observed_RVs}
    assert observed == {"test", "calibration"} | ({"truth_counts"} if design == "random" else set())
    for _ in range(3):
        point = _random_point(model, rng)
        got = logp({plain.rvs_to_values[plain[k]].name: v for k, v in point.items()})
        np.testing.assert_allclose(got, _scipy_logp(point, config, design), rtol=RTOL)


def test_log_density_has_teeth():
    # A wrong prior or a dropped calibration row changes the scipy density: the test can fail.
    counts = _counts()
    model = remove_value_transforms(cm.build_categorical_model(counts, priors=PRIORS))
    logp = model.compile_logp(jacobian=False, mode=MODE)
    point = _random_point(model, np.random.default_rng(1))
    config = cm.categorical_model_config(counts, priors=PRIORS)
    reference = _scipy_logp(point, config, "stratified")
    got = logp({model.rvs_to_values[model[k]].name: v for k, v in point.items()})
    assert not np.isclose(got, reference + stats.dirichlet.logpdf(point["theta"][0, 0], [1, 1, 1]))
    assert not np.isclose(got, _scipy_logp(point, config, "random"), rtol=RTOL)


def test_multinomial_logp_equals_scipy_multinomial():
    # The models' observed counts use cm.multinomial_logp (a smaller graph than PyMC's
    # Multinomial, for numba's compile); it must be scipy's logpmf, constant included, in a
    # batch of groups, with zero cells and a zero probability under a zero count.
    rng = np.random.default_rng(11)
    k = 4
    p = rng.dirichlet(np.ones(k), size=(2, 3))
    p[0, 1] = [0.0, 0.5, 0.25, 0.25]  # p = 0 where the count is 0: the cell adds 0
    sizes = [0, 7, 30, 1, 200, 55]
    value = np.stack([rng.multinomial(n, q) for n, q in zip(sizes, p.reshape(6, k), strict=True)])
    value = value.reshape(2, 3, k)
    value[0, 1] = [0, 3, 4, 0]
    n = value.sum(-1)
    got = cm.multinomial_logp(value, n, p).eval(mode=MODE)
    expected = np.vectorize(stats.multinomial.logpmf, signature="(k),(),(k)->()")(value, n, p)
    assert got.shape == (2, 3)
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=1e-12)
    # Teeth: a different p, or a dropped constant, changes it.
    assert not np.isclose(got[1, 1], stats.multinomial.logpmf(value[1, 1], n[1, 1], p[1, 2]))
    assert not np.isclose(got[1, 1], (value[1, 1] * np.log(p[1, 1])).sum())


def test_binary_counts_give_the_binary_parametrisation():
    # At K = 2 the categories are ("incorrect", "correct"): θ[1] is accuracy, C[0, 0] = q0.
    import bayesjudge as bj

    binary = bj.JudgeCounts.from_counts(n=100, k=60, m0=40, tn=30, m1=60, tp=54)
    model = cm.build_categorical_model(binary)
    assert list(model.coords["category"]) == ["incorrect", "correct"]
    assert model["calibration"].owner is not None
    observed = cm.build_categorical_model(binary)["calibration_observed"].get_value()
    assert observed[0, 0].tolist() == [[30, 10], [6, 54]]


# ----------------------------------------------------------------------------- options


def test_options_are_checked_with_clear_messages():
    counts = _counts()
    with pytest.raises(ValueError, match="calibration must be one of"):
        cm.build_categorical_model(counts, calibration="pooled")
    with pytest.raises(ValueError, match=r"pool_over=.*applies to calibration='shared'"):
        cm.build_categorical_model(counts, pool_over="system")
    with pytest.raises(ValueError, match="pool_over must name"):
        cm.build_categorical_model(counts, calibration="shared", pool_over="judge")
    with pytest.raises(ValueError, match="confusion must be one of"):
        cm.build_categorical_model(counts, confusion="diagonal")
    with pytest.raises(ValueError, match="ordered categories"):
        cm.build_categorical_model(counts, confusion="ordinal")
    with pytest.raises(ValueError, match=r"missing \['B'\], not a category \['C'\]"):
        cm.build_categorical_model(counts, scores={"A": 1, "tie": 0.5, "C": 0})
    with pytest.raises(TypeError, match="scores must be a dict"):
        cm.build_categorical_model(counts, scores=[1, 0.5, 0])
    with pytest.raises(ValueError, match=r"shape \(2,\).*shape \(3,\)"):
        cm.build_categorical_model(counts, priors=cm.CategoricalPriors(theta=(1, 2)))
    with pytest.raises(ValueError, match="finite and > 0"):
        cm.CategoricalPriors(confusion=0)
    with pytest.raises(ValueError, match="error_logit_scale"):
        cm.CategoricalPriors(error_logit_scale=-1)
    with pytest.raises(TypeError, match="CategoricalCounts"):
        cm.build_categorical_model({"test": [1, 2, 3]})
    with pytest.raises(ValueError, match="draws must be an integer"):
        cm.fit_categorical(counts, draws=0)
    with pytest.raises(ValueError, match="random_seed"):
        cm.fit_categorical(counts, random_seed=-1)


def test_priors_round_trip_and_pair_form():
    priors = cm.CategoricalPriors(theta=(1, 2, 3), confusion=(4, 1))
    again = cm.CategoricalPriors.from_dict(json.loads(json.dumps(priors.to_dict())))
    assert again == priors
    np.testing.assert_array_equal(priors.confusion_alpha(2), [[4, 1], [1, 4]])
    with pytest.raises(ValueError, match="Unknown prior names"):
        cm.CategoricalPriors.from_dict({"q0": (1, 1)})


def test_empty_confusion_row_warns():
    cal = CAL.copy()
    cal[1, 0, 2] = 0  # truth "B" of (s2, x): no calibration items
    counts = _counts(cal=cal)
    with pytest.warns(SmallSampleWarning, match=r"system='s2', stratum='x', truth='B'"):
        cm.build_categorical_model(counts)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the shared matrix sees the other groups' B items
        cm.build_categorical_model(counts, calibration="shared")


def test_shared_calibration_set_is_taken_once():
    one = CategoricalCounts.from_counts(TEST[:, 0], categories=CATS, system=SYSTEMS)
    attached = one.with_calibration_from(
        CategoricalCounts.from_counts(calibration=CAL[0, 0], categories=CATS)
    )
    assert attached.calibration_shared_over
    with pytest.raises(ValueError, match=r"count it\s+once per group"):
        cm.build_categorical_model(attached)
    model = cm.build_categorical_model(attached, calibration="shared")
    seen = model["calibration_observed"].get_value()
    assert seen.sum() == CAL[0, 0].sum()  # one copy, not one per system


# ----------------------------------------------------------------------------- results


def _fit_from_draws(counts, *, scores=None, chains=2, draws=400, seed=0):
    """A CategoricalFit whose posterior is i.i.d. numpy draws (no sampler: fast).

    θ and every confusion row are drawn from Dirichlet(1 + counts), so the summaries below
    can be checked against numpy on the same draws.
    """
    import xarray as xr

    rng = np.random.default_rng(seed)
    config = cm.categorical_model_config(counts, scores=scores)
    test, cal = TEST, CAL
    theta = rng.dirichlet(np.ones(3), size=(chains, draws, 2, 3))
    theta = (theta + test / np.maximum(test.sum(-1, keepdims=True), 1)) / 2
    conf = np.stack(
        [rng.dirichlet(1.0 + cal[g][t], size=(chains, draws))
         for g in np.ndindex(2, 3) for t in range(3)],
        axis=2,
    ).reshape(chains, draws, 2, 3, 3, 3)  # fmt: skip
    p = np.einsum("cdgst,cdgstv->cdgsv", theta, conf)
    coords = {"chain": range(chains), "draw": range(draws), "system": SYSTEMS,
              "stratum": STRATA, "category": CATS, "truth": CATS, "verdict": CATS}  # fmt: skip
    posterior = xr.Dataset(
        {"theta": (("chain", "draw", *cm.TEST_DIMS), theta),
         "confusion": (("chain", "draw", *cm.CAL_DIMS), conf),
         "p": (("chain", "draw", *cm.TEST_DIMS), p)},
        coords=coords,
    )  # fmt: skip
    stats_ = xr.Dataset({"diverging": (("chain", "draw"), np.zeros((chains, draws), bool))})
    tree = xr.DataTree.from_dict({"posterior": posterior, "sample_stats": stats_})
    arrays = cm._arrays(counts)
    tree = cm._with_counts(tree, arrays, counts)
    settings = {"draws": draws, "tune": 0, "chains": chains, "random_seed": seed,
                "target_accept": 0.9}  # fmt: skip
    return cm.CategoricalFit(tree, {**config, **settings})


WIN = {"A": 1.0, "tie": 0.5, "B": 0.0}


def test_summary_is_the_draws_statistics():
    fit = _fit_from_draws(_counts(), scores=WIN)
    table = fit.summary(ci_prob=0.9)
    theta = fit.posterior["theta"].values
    np.testing.assert_allclose(table["theta"].transpose(*cm.TEST_DIMS), theta.mean((0, 1)))
    score = theta @ np.array([1.0, 0.5, 0.0])
    ci = table["score_ci"].transpose("system", "stratum", "ci_bound").values
    np.testing.assert_allclose(ci[..., 0], np.quantile(score, 0.05, axis=(0, 1)))
    np.testing.assert_allclose(ci[..., 1], np.quantile(score, 0.95, axis=(0, 1)))
    assert table.attrs["ci_kind"] == "eti" and table.attrs["ci_prob"] == 0.9
    assert list(table["theta_ci"]["ci_bound"].values) == ["lower", "upper"]
    assert set(table["confusion"].dims) == set(cm.CAL_DIMS)
    # Without scores there is no score; scores= at summary time adds it.
    bare = _fit_from_draws(_counts())
    assert "score" not in bare.summary()
    rubric = bare.summary(scores={"A": 3, "tie": 2, "B": 1})
    np.testing.assert_allclose(rubric["score"], (theta @ [3.0, 2.0, 1.0]).mean((0, 1)))


def test_compare_gives_every_pair_with_probability():
    fit = _fit_from_draws(_counts(), scores=WIN)
    out = fit.compare(ci_prob=0.95)
    score = fit.posterior["theta"].values @ np.array([1.0, 0.5, 0.0])
    diff = score[:, :, 0] - score[:, :, 1]
    assert out["pair"].values.tolist() == ["s1 - s2"]
    np.testing.assert_allclose(out["prob_greater"].sel(pair="s1 - s2"), (diff > 0).mean((0, 1)))
    np.testing.assert_allclose(out["mean"].sel(pair="s1 - s2"), diff.mean((0, 1)))
    assert out.attrs["var"] == "score"
    by_stratum = fit.compare(dim="stratum")
    assert by_stratum.sizes["pair"] == 3
    theta_pairs = _fit_from_draws(_counts()).compare()
    assert theta_pairs.attrs["var"] == "theta" and "category" in theta_pairs["mean"].dims
    with pytest.raises(ValueError, match="dim must be one of"):
        fit.compare(dim="category")


def test_ppc_tail_probabilities(tmp_path):
    fit = _fit_from_draws(_counts("random"))
    check = fit.ppc(random_seed=3)
    assert set(check.replicated.data_vars) == {"test", "calibration", "truth_counts"}
    # Replicates keep the observed totals.
    np.testing.assert_array_equal(
        check.replicated["test"].sum("category").isel(chain=0, draw=0), TEST.sum(-1)
    )
    for name in ("test", "calibration", "truth_counts"):
        values = check.p_value[name].values
        assert ((values >= 0) & (values <= 1)).all()
    again = fit.ppc(random_seed=3)
    xr_equal = again.p_value.equals(check.p_value)
    assert xr_equal
    # A group whose test counts contradict its θ draws gets a small discrepancy p-value.
    bad = TEST.copy()
    bad[1, 1] = [0, 0, 300]
    worse = _fit_from_draws(_counts(test=bad)).ppc(random_seed=3)
    assert float(worse.discrepancy_p["test"].sel(system="s2", stratum="y")) < 0.01


def test_save_and_load_round_trip(tmp_path):
    fit = _fit_from_draws(_counts(), scores=WIN)
    path = fit.save(tmp_path / "fit.nc")
    loaded = cm.load_categorical(path)
    assert loaded.config == fit.config
    assert loaded.tree.attrs["bayesjudge_config_hash"] == fit.tree.attrs["bayesjudge_config_hash"]
    np.testing.assert_allclose(loaded.summary()["score"], fit.summary()["score"])
    with pytest.raises(ValueError, match="not a bayesjudge categorical fit"):
        bad = tmp_path / "other.nc"
        fit.posterior.to_netcdf(bad, engine="h5netcdf")
        cm.load_categorical(bad)


# ----------------------------------------------------------------------------- model card

CARD = Path(__file__).resolve().parents[2] / "models" / "categorical.md"


def _card_rows(header: str) -> list[list[str]]:
    lines = CARD.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip().replace("`", "") for c in line.strip("|").split("|")])
    return rows


def _variables(model) -> dict:
    kinds = {"free": model.free_RVs, "observed": model.observed_RVs,
             "deterministic": model.deterministics, "data": model.data_vars}  # fmt: skip
    return {
        name: (tuple(model.named_vars_to_dims.get(name) or ()),
               next(k for k, members in kinds.items() if any(var is m for m in members)))
        for name, var in model.named_vars.items()
    }  # fmt: skip


def _dims(cell: str, pooled: tuple) -> tuple:
    cell = cell.replace("dims not in pool_over", ", ".join(d for d in DIMS if d not in pooled))
    return tuple(d.strip() for d in cell.strip("()").split(",") if d.strip())


DIMS = ("system", "stratum")
CARD_OPTIONS = {
    'calibration="shared"': ({"calibration": "shared", "pool_over": "system"}, ("system",)),
    'calibration="hierarchical"': (
        {"calibration": "hierarchical", "pool_over": "stratum"}, ("stratum",)),
    'counts.design="random"': ({}, ()),
    "scores={...}": ({"scores": {"A": 1, "tie": 0.5, "B": 0}}, ()),
}  # fmt: skip


def test_model_card_tables_match_the_built_model():
    base = _variables(cm.build_categorical_model(_counts()))
    documented = {row[0]: (_dims(row[1], ()), row[2]) for row in _card_rows("| variable |")}
    assert documented == base
    for option, variable, dims, kind, _meaning in _card_rows("| option |"):
        kwargs, pooled = CARD_OPTIONS[option]
        design = "random" if "random" in option else "stratified"
        built = _variables(cm.build_categorical_model(_counts(design), **kwargs))
        assert built[variable] == (_dims(dims, pooled), kind), (option, variable)
    defaults = cm.CategoricalPriors()
    for field, default, _prior in _card_rows("| prior field |"):
        name = field.removeprefix("CategoricalPriors.")
        assert getattr(defaults, name) == ast.literal_eval(default), field


def test_prior_predictive_draws_from_the_priors():
    counts = _counts("random")
    tree = cm.prior_predictive_categorical(counts, priors=PRIORS, draws=400, random_seed=2)
    theta = tree["prior"].dataset["theta"]
    # Dirichlet(1.3, 2.1, 0.7) means, over 400 draws × 6 groups: MC se ≤ 0.24 / sqrt(2400).
    mean = PRIORS.theta_alpha(3) / PRIORS.theta_alpha(3).sum()
    got = theta.mean(("chain", "draw", "system", "stratum")).values
    np.testing.assert_allclose(got, mean, atol=4 * 0.24 / np.sqrt(2400))
    replicated = tree["prior_predictive"].dataset
    assert set(replicated.data_vars) == {"test", "calibration", "truth_counts"}
    np.testing.assert_array_equal(
        replicated["test"].sum("category").isel(chain=0, draw=5).values, TEST.sum(-1)
    )
    np.testing.assert_array_equal(
        replicated["truth_counts"].sum("truth").isel(chain=0, draw=5).values,
        CAL.sum((-2, -1)),
    )
    assert tree.attrs["random_seed"] == 2


def test_the_facade_hands_categorical_counts_to_the_categorical_models():
    import bayesjudge as bj
    from bayesjudge.data import CategoricalCounts

    counts = CategoricalCounts.from_counts(
        test=[30, 10, 60],
        calibration=[[8, 1, 1], [1, 8, 1], [1, 1, 8]],
        categories=["A", "tie", "B"],
    )
    model = bj.build_model(counts, calibration="separate")
    assert {"theta", "confusion"} <= set(model.named_vars)
    with pytest.raises(ValueError, match="method='exact'"):
        bj.fit(counts, method="exact")
    with pytest.raises(ValueError, match="paired="):
        bj.build_model(counts, paired=True)
    binary = bj.JudgeCounts.from_counts(n=100, k=40, m0=50, tn=40, m1=50, tp=45)
    with pytest.raises(ValueError, match="confusion= and scores="):
        bj.fit(binary, scores={"A": 1})
