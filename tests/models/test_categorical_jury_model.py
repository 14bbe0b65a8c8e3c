"""The joint model of several judges' K-category verdicts (models/categorical-jury.md).

The PyMC model's log-likelihood is checked against independent computations: a loop over
patterns and judges with ``scipy.special.logsumexp`` (and ``scipy.stats.dirichlet`` for the
priors), the core's ``categorical_jury_log_likelihood``, and at K = 2 the binary jury's
likelihood (``core.jury.jury_log_likelihood`` and ``models.jury``'s model). The hand-written
numba log density that nutpie samples is checked equal to the PyMC model's log density, its
gradient against central differences. One small fit (shared by the module) checks recovery,
the results and save/load. SBC, recovery at large n and the agreement check's power:
test_categorical_jury_slow.py.
"""

from __future__ import annotations

import warnings
from itertools import product

import numpy as np
import pymc as pm
import pytest
import xarray as xr
from pytensor.compile.mode import Mode
from scipy.special import logsumexp
from scipy.stats import dirichlet

from bayesjudge.core.categorical_jury import categorical_jury_log_likelihood
from bayesjudge.core.jury import jury_log_likelihood
from bayesjudge.data.categorical_jury import CategoricalJuryCounts
from bayesjudge.data.jury import JuryCounts
from bayesjudge.models import categorical_jury
from bayesjudge.models.categorical import CategoricalPriors
from bayesjudge.models.categorical_jury import (
    CategoricalJuryFit,
    build_categorical_jury_model,
    categorical_jury_model_config,
    fit_categorical_jury,
    kernel_layout,
    load_categorical_jury,
    log_density,
    pattern_log_probabilities,
    warn_unlabelled,
)
from bayesjudge.models.jury import build_jury_model
from bayesjudge.simulate import simulate_categorical_jury
from bayesjudge.warnings import BayesJudgeWarning

# Python linker: the logp graphs compile in well under a second (the C linker takes ~20 s).
PY_MODE = Mode(linker="py", optimizer="fast_compile")
JUDGES = ["gpt", "claude", "llama"]
CATEGORIES = ["A", "tie", "B"]
# Hand-written patterns with missing verdicts ("-"), 2 systems × 2 strata.
PATTERNS = ["000", "012", "222", "111", "201", "1-1", "-20", "21-", "0-0", "--2"]


def _counts(design: str, k: int = 3) -> CategoricalJuryCounts:
    rng = np.random.default_rng(20261128)
    patterns = PATTERNS if k == 3 else ["000", "011", "101", "111", "1-0", "-11", "0--"]
    test = rng.integers(0, 30, size=(2, 2, len(patterns)))
    labelled = rng.integers(0, 6, size=(2, 2, k, len(patterns)))
    return CategoricalJuryCounts.from_counts(
        patterns, test, labelled, judges=JUDGES, categories=CATEGORIES[:k] if k == 3
        else ["incorrect", "correct"], systems=["s", "t"], strata=["x", "y"], design=design,
    )  # fmt: skip


def _parameters(model: pm.Model, rng) -> dict:
    k = model["theta"].shape.eval()[-1]
    shape = tuple(model["confusion"].shape.eval())
    return {
        "theta": rng.dirichlet(np.ones(k), size=(2, 2)),
        "confusion": rng.dirichlet(np.ones(k), size=shape[:-1]),
    }


def _per_group(confusion: np.ndarray, s: int, r: int) -> np.ndarray:
    """(J, K, K) confusion of group (s, r) from (J, R, K, K) shared or (J, S, R, K, K)."""
    return confusion[:, r] if confusion.ndim == 4 else confusion[:, s, r]


def _reference_log_likelihood(counts, theta, confusion, design) -> float:
    """Σ_groups Σ_p n_p logsumexp_t(log θ_t + Σ_j log C_j[t, v_j]) + labelled terms (loops)."""
    v = counts.verdicts
    test = counts.test.transpose("system", "stratum", "pattern").values
    lab = counts.labelled.transpose("system", "stratum", "truth", "pattern").values
    total = 0.0
    for s, r in product(range(2), range(2)):
        conf = _per_group(confusion, s, r)
        for p, row in enumerate(v):
            log_pv = np.array(
                [sum(np.log(conf[j, t, c]) for j, c in enumerate(row) if c >= 0)
                 for t in range(theta.shape[-1])]
            )  # fmt: skip
            total += test[s, r, p] * logsumexp(np.log(theta[s, r]) + log_pv)
            total += lab[s, r, :, p] @ log_pv
            if design == "random":
                total += lab[s, r, :, p] @ np.log(theta[s, r])
    return total


def _observed_logp(model: pm.Model, values: dict) -> float:
    """Log-likelihood of the observed counts at fixed parameters (one compile per call)."""
    fixed = pm.do(model, values)
    logp = fixed.compile_logp(vars=fixed.observed_RVs, jacobian=False, mode=PY_MODE)
    return float(logp({}))


def _simplex_forward(x: np.ndarray) -> np.ndarray:
    """PyMC's simplex transform (inverse of softmax(y_1 … y_(K−1), −Σ y)), numpy."""
    z = np.log(x) - np.log(x).mean(-1, keepdims=True)
    return z[..., :-1]


def _point(values: dict) -> dict:
    return {f"{name}_simplex__": _simplex_forward(v) for name, v in values.items()}


@pytest.mark.parametrize("calibration", ["shared", "separate"])
@pytest.mark.parametrize("design", ["stratified", "random"])
def test_log_likelihood_matches_independent_references(design, calibration):
    counts = _counts(design)
    model = build_categorical_jury_model(counts, calibration=calibration)
    logp = model.compile_logp(vars=model.observed_RVs, jacobian=False, mode=PY_MODE)
    rng = np.random.default_rng(7)
    for _ in range(3):
        values = _parameters(model, rng)
        got = float(logp(_point(values)))
        reference = _reference_log_likelihood(counts, values["theta"], values["confusion"], design)
        np.testing.assert_allclose(got, reference, rtol=1e-10)
        core = sum(
            categorical_jury_log_likelihood(
                counts.verdicts, counts.test.values[s, r], counts.labelled.values[s, r],
                values["theta"][s, r], _per_group(values["confusion"], s, r), design=design,
            )
            for s, r in product(range(2), range(2))
        )  # fmt: skip
        np.testing.assert_allclose(got, core, rtol=1e-10)


def test_full_log_density_adds_the_dirichlet_priors():
    # model.logp without the Jacobian at (θ, C) = likelihood + scipy's Dirichlet log-densities.
    counts = _counts("random")
    priors = CategoricalPriors(theta=(2.0, 1.0, 3.0), confusion=(4.0, 1.0))
    model = build_categorical_jury_model(counts, calibration="separate", priors=priors)
    values = _parameters(model, np.random.default_rng(11))
    got = float(model.compile_logp(jacobian=False, mode=PY_MODE)(_point(values)))
    alpha_c = priors.confusion_alpha(3)
    expected = _reference_log_likelihood(counts, values["theta"], values["confusion"], "random")
    expected += sum(dirichlet.logpdf(th, [2.0, 1.0, 3.0]) for th in values["theta"].reshape(-1, 3))
    rows = values["confusion"].reshape(-1, 3, 3)
    expected += sum(dirichlet.logpdf(c[t], alpha_c[t]) for c in rows for t in range(3))
    np.testing.assert_allclose(got, expected, rtol=1e-10)


@pytest.mark.parametrize("design", ["stratified", "random"])
def test_two_categories_give_the_binary_jury_likelihood(design):
    binary = JuryCounts(_counts(design, k=2).to_jury_counts().dataset)
    counts = CategoricalJuryCounts.from_jury_counts(binary)
    model = build_categorical_jury_model(counts, calibration="separate")
    binary_model = build_jury_model(binary, calibration="separate")
    rng = np.random.default_rng(3)
    q0, q1 = rng.uniform(0.55, 0.95, size=(2, 3, 2, 2))
    theta = rng.uniform(0.2, 0.8, size=(2, 2))
    # C_j = [[q0, 1 − q0], [1 − q1, q1]]: row 0 truth incorrect, row 1 truth correct.
    conf = np.stack([np.stack([q0, 1 - q0], -1), np.stack([1 - q1, q1], -1)], -2)
    got = _observed_logp(model, {"theta": np.stack([1 - theta, theta], -1), "confusion": conf})
    expected = _observed_logp(binary_model, {"theta": theta, "q0": q0, "q1": q1})
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    core = sum(
        jury_log_likelihood(binary.verdicts, binary.test.values[s, r],
                            binary.labelled.values[s, r], theta[s, r], q0[:, s, r],
                            q1[:, s, r], design=design)
        for s, r in product(range(2), range(2))
    )  # fmt: skip
    np.testing.assert_allclose(got, core, rtol=1e-10)


@pytest.mark.parametrize(
    ("design", "calibration", "scores"),
    [("stratified", "shared", None), ("random", "separate", {"A": 1, "tie": 0.5, "B": 0})],
)
def test_sampled_log_density_is_the_pymc_model(design, calibration, scores):
    # The numba kernels nutpie samples equal PyMC's log density (constants included) at
    # random unconstrained points (measured difference ~1e-12), and their gradient equals the
    # central differences of that density (step 1e-6: truncation and rounding ~1e-7).
    counts = _counts(design)
    config = categorical_jury_model_config(counts, calibration, None, scores)
    model = build_categorical_jury_model(counts, calibration=calibration, scores=scores)
    logp = model.compile_logp(mode=PY_MODE)
    layout = kernel_layout(counts, config)
    start = model.initial_point()
    names = [model.rvs_to_values[v].name for v in model.free_RVs]
    assert names == ["theta_simplex__", "confusion_simplex__"]
    rng = np.random.default_rng(5)
    sizes = np.cumsum([start[n].size for n in names])[:-1]
    for _ in range(3):
        x = rng.normal(scale=2.0, size=layout.n_dim)
        point = {n: part.reshape(start[n].shape)
                 for n, part in zip(names, np.split(x, sizes), strict=True)}  # fmt: skip
        value, grad = log_density(layout, x)
        np.testing.assert_allclose(value, float(logp(point)), rtol=1e-12)
        step = 1e-6 * np.eye(layout.n_dim)
        numeric = [(log_density(layout, x + h)[0] - log_density(layout, x - h)[0]) / 2e-6
                   for h in step]  # fmt: skip
        np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-4)


def test_pattern_probabilities_against_a_product_over_judges():
    rng = np.random.default_rng(9)
    conf = rng.dirichlet(np.ones(3), size=(2, 3, 3))  # (batch, judge, truth) rows
    full = np.array(list(product(range(3), repeat=3)))
    got = np.exp(pattern_log_probabilities(full, conf))
    brute = np.array(
        [[[np.prod([conf[b, j, t, v[j]] for j in range(3)]) for v in full] for t in range(3)]
         for b in range(2)]
    )  # fmt: skip
    np.testing.assert_allclose(got, brute, rtol=1e-12)
    np.testing.assert_allclose(got.sum(-1), 1.0, rtol=1e-12)
    # A missing verdict contributes nothing: "0-" has P(v_0 = 0 | t).
    one = np.exp(pattern_log_probabilities([[0, -1]], conf[0, :2]))
    np.testing.assert_allclose(one[:, 0], conf[0, 0, :, 0], rtol=1e-12)


# ------------------------------------------------------------------------------ dims


@pytest.mark.parametrize(
    ("calibration", "confusion_dims"),
    [
        ("shared", ("judge", "stratum", "truth", "verdict")),
        ("separate", ("judge", "system", "stratum", "truth", "verdict")),
    ],
)
def test_dims_and_coords(calibration, confusion_dims):
    counts = _counts("stratified")
    model = build_categorical_jury_model(counts, calibration=calibration,
                                         scores={"A": 1, "tie": 0.5, "B": 0})  # fmt: skip
    dims = model.named_vars_to_dims
    assert {v.name for v in model.free_RVs} == {"theta", "confusion"}
    assert dims["theta"] == ("system", "stratum", "category")
    assert dims["confusion"] == confusion_dims
    assert dims["score"] == ("system", "stratum")
    assert dims["test"] == ("system", "stratum", "pattern")
    assert dims["labelled"] == ("system", "stratum", "truth", "pattern")
    assert dims["said"] == ("pattern", "judge", "verdict")
    unnamed = [v.name for v in model.free_RVs + model.deterministics if v.name not in dims]
    assert not unnamed
    assert model.coords["judge"] == tuple(JUDGES)
    assert model.coords["pattern"] == tuple(counts.patterns)
    assert model.coords["truth"] == model.coords["category"] == tuple(CATEGORIES)


# ------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("options", "match"),
    [
        (
            {"calibration": "pooled"},
            r"calibration must be one of \['shared', 'separate', 'hierarchical'\]",
        ),
        ({"dependence": "items"}, r"dependence must be one of \[None, 'item'\]"),
        ({"priors": CategoricalPriors(theta=(1.0, 2.0))}, r"theta has shape \(2,\)"),
        ({"priors": "flat"}, "priors must be a bayesjudge.models.categorical.CategoricalPriors"),
        ({"scores": {"A": 1, "tie": 0.5}}, "scores"),
        ({"draws": 0}, "draws must be an integer >= 1"),
        ({"random_seed": -1}, "random_seed must be a non-negative int"),
        ({"target_accept": 1.5}, "target_accept"),
    ],
)
def test_bad_options_are_refused_before_compiling(options, match):
    with pytest.raises(ValueError, match=match):
        fit_categorical_jury(_counts("stratified"), **options)


def test_counts_the_model_cannot_use_are_refused():
    one = CategoricalJuryCounts.from_counts(["0", "1"], [5, 5], [[3, 0], [0, 3]], judges=["a"],
                                            categories=["x", "y"])  # fmt: skip
    with pytest.raises(ValueError, match=r"for_judge\(judge\)"):
        categorical_jury_model_config(one)
    two = CategoricalJuryCounts.from_counts(["00", "11"], [5, 5], judges=["a", "b"],
                                            categories=["x", "y"])  # fmt: skip
    with pytest.raises(ValueError, match="not identified"):
        categorical_jury_model_config(two)
    no_test = CategoricalJuryCounts.from_counts(
        ["000", "111"], [0, 0], [[4, 0], [0, 4]], judges=JUDGES, categories=["x", "y"]
    )
    with pytest.raises(ValueError, match="no test items"):
        categorical_jury_model_config(no_test)
    with pytest.raises(ValueError, match="must be a CategoricalJuryCounts"):
        categorical_jury_model_config(JuryCounts.from_counts(["11"], [5], judges=["a", "b"]))


# ------------------------------------------------------------------------------ one fit

PI = np.array([[0.5, 0.2, 0.3], [0.25, 0.25, 0.5]])  # 2 systems × 1 stratum
CONF = np.array(
    [
        [[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.1, 0.1, 0.8]],
        [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.05, 0.15, 0.8]],
        [[0.85, 0.1, 0.05], [0.15, 0.6, 0.25], [0.1, 0.2, 0.7]],
    ]
)
SCORES = {"A": 1.0, "tie": 0.5, "B": 0.0}
DRAWS, CHAINS = 1000, 2
DIMS_AB = ("system", "stratum", "verdict_a", "verdict_b")


@pytest.fixture(scope="module")
def catjury_fit() -> CategoricalJuryFit:
    counts = simulate_categorical_jury(
        PI, np.broadcast_to(CONF, (2, 3, 3, 3)), n=400, m=[30, 30, 30], missing=0.1,
        system=["s0", "s1"], categories=CATEGORIES, judges=JUDGES, random_seed=5,
    )  # fmt: skip
    return fit_categorical_jury(
        counts, scores=SCORES, draws=DRAWS, tune=1000, chains=CHAINS, random_seed=11
    )


def test_fit_recovers_the_simulated_parameters(catjury_fit):
    post = catjury_fit.posterior
    score = PI @ np.array([1.0, 0.5, 0.0])
    # Fixed seed: each truth within 3.5 posterior sd of the posterior mean (35 θ, score and
    # confusion numbers: P(|z| > 3.5) = 5e-4 each; the MC error of the mean, sd / sqrt(ESS
    # > 200), is below 0.07 sd).
    for name, truth in (
        ("theta", PI[:, None]),
        ("score", score[:, None]),
        ("confusion", CONF[:, None]),
    ):
        mean, sd = post[name].mean(("chain", "draw")), post[name].std(("chain", "draw"))
        z = np.abs(mean.values - truth) / sd.values
        assert (z < 3.5).all(), (name, z)
    assert catjury_fit.diagnostics()["divergences"] == 0


def test_summary_and_compare(catjury_fit):
    s = catjury_fit.summary(ci_prob=0.9)
    assert s["theta"].dims == ("system", "stratum", "category")
    assert s["theta_ci"].dims == ("ci_bound", "system", "stratum", "category")
    assert s["theta_ci"]["ci_bound"].values.tolist() == ["lower", "upper"]
    assert s["confusion"].dims == ("judge", "stratum", "truth", "verdict")
    assert s["score"].dims == ("system", "stratum")
    for name in ("theta", "confusion", "score"):
        for suffix in ("sd", "median", "ci", "r_hat", "ess_bulk"):
            assert f"{name}_{suffix}" in s
    np.testing.assert_allclose(s["theta"].sum("category"), 1.0, rtol=1e-12)
    np.testing.assert_allclose(s["confusion"].sum("verdict"), 1.0, rtol=1e-12)
    assert {k: s.attrs[k] for k in ("ci_kind", "ci_prob", "calibration", "design")} == {
        "ci_kind": "eti",
        "ci_prob": 0.9,
        "calibration": "shared",
        "design": "stratified",
    }
    c = catjury_fit.compare()
    assert c["pair"].values.tolist() == ["s0 - s1"]
    assert c["theta_prob_greater"].dims == ("pair", "stratum", "category")
    assert c["score_ci"].dims == ("ci_bound", "pair", "stratum")
    # θ_A: 0.5 vs 0.25 with 400 items each: P(s0 > s1) near 1; the score 0.6 vs 0.375.
    assert float(c["theta_prob_greater"].sel(category="A").item()) > 0.99
    assert float(c["score_prob_greater"].item()) > 0.99
    with pytest.raises(ValueError, match="compare needs at least 2 stratum"):
        catjury_fit.compare(dim="stratum")
    assert "CategoricalJuryFit calibration='shared' K=3 judges=3" in repr(catjury_fit)


def test_ppc_shapes_and_observed_tables(catjury_fit):
    check = catjury_fit.ppc(random_seed=3)
    items = ["test", "labelled_A", "labelled_tie", "labelled_B"]
    assert check.observed["agreement"].dims == ("items", "pair", "system", "stratum")
    assert check.observed["items"].values.tolist() == items
    assert check.replicated["agreement"].sizes["draw"] == DRAWS
    assert check.pooled["check"].values.tolist() == ["test_pairs", "labelled_pairs", "patterns"]
    assert check.flagged.dims == ("system", "stratum")
    # The observed K × K tables are CategoricalJuryCounts.pair_table's (the labelled items'
    # summed over the truths).
    tables = check.tables.sel(pair="gpt - llama").transpose("items", *DIMS_AB)
    for where, got in (("test", tables.sel(items="test")), ("labelled", tables[1:].sum("items"))):
        table = catjury_fit.counts.pair_table("gpt", "llama", items=where)
        np.testing.assert_array_equal(got.values, table.transpose(*DIMS_AB).values)
    frame = check.table()
    assert len(frame) == 4 * 3 * 2
    assert ((frame["agreement_p"] >= 0) & (frame["agreement_p"] <= 1)).all()
    # Independent judges were simulated: nothing flagged at this seed.
    assert not bool(check.flagged.any()), check.pooled["p_value"].values
    assert "conditionally independent" in check.message
    xr.testing.assert_equal(catjury_fit.ppc(random_seed=3).replicated, check.replicated)


def test_ppc_thins_the_draws_beyond_its_memory_bound(catjury_fit, monkeypatch):
    # 2 groups × 2000 draws × the possible patterns of the observed masks (complete: 27,
    # one missing: 3 × 9, two missing: 3 × 3 → 63) = 252000 cells; a bound of 100000 takes
    # every 3rd draw: 334 of 1000 per chain.
    masks = {tuple(row >= 0) for row in catjury_fit.counts.verdicts}
    assert sum(3 ** sum(m) for m in masks) == 63
    monkeypatch.setattr(categorical_jury, "PPC_CELLS", 100_000)
    check = catjury_fit.ppc(random_seed=3)
    assert check.replicated.sizes["draw"] == 334


def test_save_and_load_round_trip(catjury_fit, tmp_path):
    path = catjury_fit.save(tmp_path / "catjury.nc")
    loaded = load_categorical_jury(path)
    assert isinstance(loaded, CategoricalJuryFit)
    assert loaded.config == catjury_fit.config
    xr.testing.assert_allclose(loaded.summary(), catjury_fit.summary())
    assert loaded.counts.patterns == catjury_fit.counts.patterns
    assert loaded.counts.categories == CATEGORIES
    assert {v.name for v in loaded.model.free_RVs} == {"theta", "confusion"}
    tree = loaded.tree.copy()
    tree["posterior"]["theta"] = tree["posterior"]["theta"] * 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree.to_netcdf(tmp_path / "edited.nc", engine="h5netcdf")
    with pytest.raises(ValueError, match="changed after it was saved"):
        load_categorical_jury(tmp_path / "edited.nc")
    with pytest.raises(ValueError, match="is not a bayesjudge K-category jury fit"):
        xr.DataTree(xr.Dataset({"a": ("x", [1])})).to_netcdf(tmp_path / "x.nc", engine="h5netcdf")
        load_categorical_jury(tmp_path / "x.nc")


def test_unlabelled_jury_warns():
    counts = CategoricalJuryCounts.from_counts(
        ["000", "111", "222", "012"], [30, 20, 25, 5], judges=JUDGES, categories=CATEGORIES
    )
    with pytest.warns(BayesJudgeWarning, match="label switching"):
        warn_unlabelled(counts, stacklevel=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_unlabelled(_counts("stratified"), stacklevel=1)  # labelled: silent


def test_fit_and_load_dispatch(catjury_fit, tmp_path):
    import bayesjudge as bj

    with pytest.raises(ValueError, match=r"aggregate='dirichlet'"):
        bj.fit(catjury_fit.counts, aggregate="dirichlet")
    with pytest.raises(ValueError, match="judge_better_than_chance= is an option of binary"):
        bj.fit(catjury_fit.counts, judge_better_than_chance=True)
    path = catjury_fit.save(tmp_path / "catjury.nc")
    assert isinstance(bj.load(path), CategoricalJuryFit)
