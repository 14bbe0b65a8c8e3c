"""The joint model of several judges (models/jury.md): likelihood, dims, fit, results, input.

The compiled log-likelihood is checked against independent computations: the Dawid–Skene
likelihood of ``bayesjudge.core.jury.jury_log_likelihood`` (numpy) for every calibration
option and both designs, and ``scipy.integrate.quad`` for the item effect's integral (the
model's trapezoid rule). One small fit (shared by the module: the nutpie compile costs ~20 s)
checks recovery, the results' shapes and save/load. SBC and the agreement check's power:
tests/models/test_jury_model_slow.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pymc as pm
import pytest
import xarray as xr
from pytensor.compile.mode import Mode
from scipy import integrate
from scipy.special import ndtr, ndtri
from scipy.stats import norm

import bayesjudge as bj
from bayesjudge.core.jury import jury_log_likelihood, pattern_log_likelihood
from bayesjudge.data.jury import JuryCounts, pattern_strings
from bayesjudge.models.fit import load
from bayesjudge.models.jury import (
    JuryFit,
    build_jury_model,
    fit_jury,
    jury_model_config,
    pattern_log_probabilities,
    warn_unlabelled,
)
from bayesjudge.warnings import BayesJudgeWarning

# Python linker: the logp graphs compile in well under a second (the C linker takes ~20 s).
PY_MODE = Mode(linker="py", optimizer="fast_compile")
JUDGES = ["gpt", "claude", "llama"]


# ------------------------------------------------------------------------------ simulation


def simulate_verdicts(rng, truth, q0, q1, b=None, missing=0.0):
    """Verdicts (items, J) of judges with specificity q0, sensitivity q1 (J,) on items of truth.

    With an item effect b = (b_0, b_1), P(v_j = 1 | t, u) = Φ(a_jt + b_t u), u ~ N(0, 1), with
    a_jt set so that the marginal rates are q1 (t = 1) and 1 − q0 (t = 0).
    """
    if b is None:
        p1 = np.where(truth[:, None], q1, 1 - q0)
    else:
        u = rng.normal(size=(truth.size, 1))
        a1 = ndtri(q1) * np.sqrt(1 + b[1] ** 2)
        a0 = -ndtri(q0) * np.sqrt(1 + b[0] ** 2)
        p1 = ndtr(np.where(truth[:, None], a1 + b[1] * u, a0 + b[0] * u))
    v = (rng.random(p1.shape) < p1).astype(int)
    if missing:
        gone = rng.random(v.shape) < missing
        gone[gone.all(axis=1), 0] = False  # every item keeps one verdict
        v[gone] = -1
    return v


def simulate_jury(rng, theta, q0, q1, n, m0, m1, *, b=None, design="stratified", missing=0.0):
    """JuryCounts of n test and m0 + m1 labelled items per group (own generator, numpy only).

    theta (S, R); q0, q1 (J, S, R). Stratified design: m0 truly incorrect and m1 truly correct
    labelled items; random design: m0 + m1 items with truths drawn from θ.
    """
    theta = np.asarray(theta, dtype=float)
    n_sys, n_str = theta.shape
    rows: dict[tuple, int] = {}
    for s in range(n_sys):
        for r in range(n_str):
            qs = (q0[:, s, r], q1[:, s, r])
            blocks = [("test", rng.random(n) < theta[s, r])]
            if design == "random":
                truths = rng.random(m0 + m1) < theta[s, r]
            else:
                truths = np.r_[np.zeros(m0, bool), np.ones(m1, bool)]
            blocks += [(t, truths[truths == t]) for t in (0, 1)]
            for kind, truth in blocks:
                for p in pattern_strings(simulate_verdicts(rng, truth, *qs, b, missing)):
                    rows[(s, r, kind, p)] = rows.get((s, r, kind, p), 0) + 1
    patterns = sorted({key[3] for key in rows})
    test = np.zeros((n_sys, n_str, len(patterns)), dtype=int)
    labelled = np.zeros((n_sys, n_str, 2, len(patterns)), dtype=int)
    for (s, r, kind, p), count in rows.items():
        if kind == "test":
            test[s, r, patterns.index(p)] += count
        else:
            labelled[s, r, kind, patterns.index(p)] += count
    judges = JUDGES if len(q0) == 3 else [f"j{i}" for i in range(len(q0))]
    return JuryCounts.from_counts(
        patterns, test, labelled, judges=judges,
        systems=[f"s{i}" for i in range(n_sys)], strata=[f"r{i}" for i in range(n_str)],
        design=design,
    )  # fmt: skip


# ------------------------------------------------------------------------------ likelihood

# Hand-written counts with missing verdicts, 2 systems × 2 strata, every judge in every group.
PATTERNS = ["111", "110", "101", "011", "100", "010", "001", "000", "1-0", "-11", "0--"]


def _counts(design: str) -> JuryCounts:
    rng = np.random.default_rng(20261127)
    test = rng.integers(0, 30, size=(2, 2, len(PATTERNS)))
    labelled = rng.integers(0, 6, size=(2, 2, 2, len(PATTERNS)))
    return JuryCounts.from_counts(
        PATTERNS, test, labelled, judges=JUDGES, systems=["A", "B"], strata=["x", "y"],
        design=design,
    )  # fmt: skip


def _observed_logp(model: pm.Model, values: dict) -> float:
    """Log-likelihood of the observed counts at fixed θ, q0, q1 (and item effect)."""
    fixed = pm.do(model, values)
    logp = fixed.compile_logp(vars=fixed.observed_RVs, jacobian=False, mode=PY_MODE)
    point = {fixed.rvs_to_values[v].name: np.zeros(v.shape.eval()) for v in fixed.free_RVs}
    return float(logp(point))


def _parameters(model: pm.Model, rng) -> dict:
    shape = tuple(model["q0"].shape.eval())
    return {
        "theta": rng.uniform(0.2, 0.8, size=(2, 2)),
        "q0": rng.uniform(0.55, 0.95, size=shape),
        "q1": rng.uniform(0.55, 0.95, size=shape),
    }


def _full(q, shape=(3, 2, 2)):
    """q over (judge, stratum) [shared] or (judge, system, stratum) as (judge, system, stratum)."""
    return np.broadcast_to(q[:, None, :] if q.ndim == 2 else q, shape)


@pytest.mark.parametrize(
    ("options", "design"),
    [
        ({}, "stratified"),
        ({}, "random"),
        ({"calibration": "separate"}, "random"),
        ({"calibration": "hierarchical"}, "stratified"),
        ({"pool_judges": True}, "random"),
        ({"calibration": "hierarchical", "pool_judges": True}, "stratified"),
        ({"judge_better_than_chance": True}, "stratified"),
    ],
)
def test_log_likelihood_matches_dawid_skene_reference(options, design):
    counts = _counts(design)
    model = build_jury_model(counts, **options)
    values = _parameters(model, np.random.default_rng(7))
    q0, q1 = _full(values["q0"]), _full(values["q1"])
    expected = 0.0
    for s in range(2):
        for r in range(2):
            expected += jury_log_likelihood(
                counts.verdicts, counts.test.values[s, r], counts.labelled.values[s, r],
                values["theta"][s, r], q0[:, s, r], q1[:, s, r], design=design,
            )  # fmt: skip
    np.testing.assert_allclose(_observed_logp(model, values), expected, rtol=1e-12)


def _quad_pattern_probability(v, q0, q1, b, t) -> float:
    """P(v | t) = ∫ Π_j P(v_j | t, u) φ(u) du by adaptive quadrature (scipy)."""
    a = ndtri(q1) * np.sqrt(1 + b[1] ** 2) if t == 1 else -ndtri(q0) * np.sqrt(1 + b[0] ** 2)

    def integrand(u):
        p = ndtr(a + b[t] * u)
        return np.prod(np.where(v == 1, p, np.where(v == 0, 1 - p, 1.0))) * norm.pdf(u)

    return integrate.quad(integrand, -np.inf, np.inf, epsabs=1e-14, epsrel=1e-12)[0]


def test_item_effect_log_likelihood_matches_adaptive_quadrature():
    counts = {d: _counts(d) for d in ("stratified", "random")}  # the same counts, two designs
    models = {d: build_jury_model(c, calibration="separate", dependence="item")
              for d, c in counts.items()}  # fmt: skip
    values = _parameters(models["random"], np.random.default_rng(8))
    values["item_effect"] = b = np.array([0.8, 1.7])
    expected = dict.fromkeys(counts, 0.0)
    verdicts = counts["random"].verdicts
    for s in range(2):
        for r in range(2):
            th, q0, q1 = values["theta"][s, r], values["q0"][:, s, r], values["q1"][:, s, r]
            p = np.array(
                [[_quad_pattern_probability(v, q0, q1, b, t) for v in verdicts] for t in (0, 1)]
            )
            test, lab = counts["random"].test.values[s, r], counts["random"].labelled.values[s, r]
            mixture = test @ np.log(th * p[1] + (1 - th) * p[0])
            expected["stratified"] += mixture + (lab * np.log(p)).sum()
            expected["random"] += mixture + (lab * np.log(p * [[1 - th], [th]])).sum()
    for design, model in models.items():
        # The trapezoid rule (73 nodes): measured difference 0.0 here (b up to 1.7).
        got = _observed_logp(model, values)
        np.testing.assert_allclose(got, expected[design], rtol=0, atol=1e-8, err_msg=design)


def test_pattern_probabilities_reduce_and_agree():
    rng = np.random.default_rng(9)
    v = _counts("stratified").verdicts
    q0, q1 = rng.uniform(0.5, 0.95, size=(2, 3)), rng.uniform(0.5, 0.95, size=(2, 3))
    independent = pattern_log_probabilities(v, q0, q1)
    for i in range(2):
        np.testing.assert_allclose(independent[i], pattern_log_likelihood(v, q0[i], q1[i]))
    # No item effect (b = 0): the quadrature gives the independent model.
    none = pattern_log_probabilities(v, q0, q1, item_effect=np.zeros((2, 2)))
    np.testing.assert_allclose(none, independent, rtol=1e-10)
    # With an item effect, P(v | t) over the patterns of one missingness mask still sums to 1,
    # and agreeing patterns are more likely than under independence.
    full = np.array([[int(c) for c in f"{k:03b}"] for k in range(8)])
    dep = np.exp(pattern_log_probabilities(full, q0[0], q1[0], item_effect=[1.5, 1.5]))
    np.testing.assert_allclose(dep.sum(-1), 1.0, rtol=1e-12)
    ind = np.exp(pattern_log_probabilities(full, q0[0], q1[0]))
    assert (dep[:, [0, 7]] > ind[:, [0, 7]]).all()
    # Every pattern's log-probability against adaptive quadrature, up to b = 3 (HalfNormal(1)
    # prior: P(b > 3) = 0.003); measured max error 5e-6 at b = 3, 1e-14 at b = 1.5.
    for b in ([0.8, 1.7], [3.0, 3.0]):
        exact = [[_quad_pattern_probability(v, q0[1], q1[1], np.array(b), t) for v in full]
                 for t in (0, 1)]  # fmt: skip
        got = pattern_log_probabilities(full, q0[1], q1[1], item_effect=b)
        np.testing.assert_allclose(got, np.log(exact), rtol=0, atol=2e-5)


# ------------------------------------------------------------------------------ dims


@pytest.mark.parametrize(
    ("options", "q_dims", "free"),
    [
        ({}, ("judge", "stratum"), {"theta", "q0", "q1"}),
        ({"calibration": "separate"}, ("judge", "system", "stratum"), {"theta", "q0", "q1"}),
        (
            {"calibration": "hierarchical"},
            ("judge", "system", "stratum"),
            {"theta", "q0_logit_mean", "q0_logit_scale", "q0_z", "q1_logit_mean",
             "q1_logit_scale", "q1_z"},
        ),
        (
            {"pool_judges": True, "dependence": "item"},
            ("judge", "stratum"),
            {"theta", "q0_judges_mean", "q0_judges_scale", "q0_judges_z", "q1_judges_mean",
             "q1_judges_scale", "q1_judges_z", "item_effect"},
        ),
    ],
)  # fmt: skip
def test_dims_and_coords(options, q_dims, free):
    counts = _counts("stratified")
    model = build_jury_model(counts, **options)
    dims = model.named_vars_to_dims
    assert {v.name for v in model.free_RVs} == free
    assert dims["theta"] == ("system", "stratum")
    assert dims["q0"] == dims["q1"] == dims["youden"] == q_dims
    assert dims["test"] == ("system", "stratum", "pattern")
    assert dims["labelled"] == ("system", "stratum", "truth", "pattern")
    unnamed = [v.name for v in model.free_RVs + model.deterministics if v.name not in dims]
    assert not unnamed
    assert model.coords["judge"] == tuple(JUDGES)
    assert model.coords["pattern"] == tuple(counts.patterns)
    assert model.coords["truth"] == (0, 1)


# ------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"calibration": "pooled"}, r"calibration must be one of \['shared', 'separate'"),
        ({"dependence": "items"}, r"dependence must be one of \[None, 'item'\]"),
        ({"pool_judges": "yes"}, "pool_judges must be True or False"),
        ({"priors": bj.Priors(q1=0.9)}, "known q0/q1"),
        (
            {"calibration": "hierarchical", "judge_better_than_chance": True},
            "judge_better_than_chance=True restricts Beta priors",
        ),
        ({"draws": 0}, "draws must be an integer >= 1"),
        ({"random_seed": -1}, "random_seed must be a non-negative int"),
        ({"target_accept": 1.5}, "target_accept"),
    ],
)
def test_bad_options_are_refused_before_compiling(options, match):
    with pytest.raises(ValueError, match=match):
        fit_jury(_counts("stratified"), **options)


def test_counts_the_model_cannot_use_are_refused():
    one = JuryCounts.from_counts(["1", "0"], [5, 5], [[0, 3], [3, 0]], judges=["a"])
    with pytest.raises(ValueError, match=r"for_judge\(judge\)"):
        jury_model_config(one)
    two = JuryCounts.from_counts(["11", "00"], [5, 5], judges=["a", "b"])
    with pytest.raises(ValueError, match="not identified"):
        jury_model_config(two)
    three = JuryCounts.from_counts(["111", "000"], [5, 5], judges=JUDGES)
    with pytest.raises(ValueError, match=r"dependence='item'.*not identified"):
        jury_model_config(three, dependence="item")
    no_test = JuryCounts.from_counts(["111", "000"], [0, 0], [[0, 4], [4, 0]], judges=JUDGES)
    with pytest.raises(ValueError, match="no test items"):
        jury_model_config(no_test)
    with pytest.raises(ValueError, match="must be a JuryCounts"):
        jury_model_config(bj.JudgeCounts.from_counts(n=10, k=5))
    # Without labels and 3 judges: allowed, restricted to better-than-chance judges, warned.
    config = jury_model_config(three)
    assert config["judge_better_than_chance"]
    with pytest.warns(BayesJudgeWarning, match="anchored only by that better-than-chance"):
        warn_unlabelled(three, config, stacklevel=1)


def test_fit_dispatch_refuses_single_judge_options():
    counts = _counts("stratified")
    with pytest.raises(ValueError, match=r"aggregate='dirichlet'.*JuryCounts"):
        bj.fit(counts, aggregate="dirichlet")
    with pytest.raises(ValueError, match="dependence= are options of several judges"):
        bj.fit(bj.JudgeCounts.from_counts(n=10, k=5, m0=5, tn=4, m1=5, tp=4), dependence="item")


# ------------------------------------------------------------------------------ one fit

THETA = np.array([[0.35], [0.7]])  # 2 systems × 1 stratum
Q0 = np.array([0.85, 0.75, 0.9])[:, None, None] * np.ones((3, 2, 1))
Q1 = np.array([0.8, 0.9, 0.7])[:, None, None] * np.ones((3, 2, 1))
DRAWS, CHAINS = 1000, 2


@pytest.fixture(scope="module")
def jury_fit() -> JuryFit:
    rng = np.random.default_rng(5)
    counts = simulate_jury(rng, THETA, Q0, Q1, n=400, m0=40, m1=40, missing=0.1)
    # Through bj.fit: the dispatch hands JuryCounts to fit_jury (default calibration shared).
    return bj.fit(counts, draws=DRAWS, tune=500, chains=CHAINS, random_seed=11)


def test_fit_recovers_the_simulated_parameters(jury_fit):
    assert isinstance(jury_fit, JuryFit)
    assert jury_fit.config["calibration"] == "shared"
    post = jury_fit.posterior
    # Fixed seed: each truth within 3 posterior sd of the posterior mean (MC error of the
    # mean, sd / sqrt(ESS > 400), is below 0.05 sd).
    for name, truth in (("theta", THETA), ("q0", Q0[:, 0, :]), ("q1", Q1[:, 0, :])):
        mean, sd = post[name].mean(("chain", "draw")), post[name].std(("chain", "draw"))
        z = np.abs(mean.values - truth) / sd.values
        assert (z < 3).all(), (name, z)
    assert jury_fit.diagnostics()["divergences"] == 0


def test_summary_and_compare_shapes(jury_fit):
    s = jury_fit.summary(ci_prob=0.9)
    assert s["theta"].dims == ("system", "stratum")
    assert s["theta_ci"].dims == ("ci_bound", "system", "stratum")  # as CategoricalFit
    assert s["theta_ci"]["ci_bound"].values.tolist() == ["lower", "upper"]
    for name in ("q0", "q1", "youden"):
        assert s[name].dims == ("judge", "stratum")
        for suffix in ("sd", "median", "ci", "r_hat", "ess_bulk"):
            assert f"{name}_{suffix}" in s
    lower, upper = s["theta_ci"].sel(ci_bound="lower"), s["theta_ci"].sel(ci_bound="upper")
    assert bool((lower < s["theta_median"]).all() and (s["theta_median"] < upper).all())
    assert s.attrs == {"ci_kind": "eti", "ci_prob": 0.9, "calibration": "shared",
                       "dependence": "None", "design": "stratified"}  # fmt: skip
    c = jury_fit.compare()
    assert c["pair"].values.tolist() == ["s1 - s0"] or c["pair"].values.tolist() == ["s0 - s1"]
    assert c["prob_greater"].dims == ("pair", "stratum")
    # θ(s0) = 0.35 < θ(s1) = 0.7 with 400 items each: P(s0 > s1) is essentially 0.
    assert float(c["prob_greater"].sel(pair="s0 - s1").item()) < 0.01
    with pytest.raises(ValueError, match="compare needs at least 2 stratum"):
        jury_fit.compare(dim="stratum")
    assert "JuryFit calibration='shared'" in repr(jury_fit)


def test_ppc_shapes_and_message(jury_fit):
    check = jury_fit.ppc(random_seed=3)
    items = ["test", "labelled_incorrect", "labelled_correct"]
    assert check.observed["agreement"].dims == ("items", "pair", "system", "stratum")
    assert check.observed["items"].values.tolist() == items
    assert check.observed.sizes["pair"] == 3
    assert check.replicated["log_odds_ratio"].sizes["draw"] == DRAWS
    assert check.pooled["p_value"].dims == ("check", "system", "stratum")
    assert check.flagged.dims == ("system", "stratum")
    table = check.table()
    assert len(table) == 3 * 3 * 2 and {"agreement_p", "log_odds_ratio_p", "flagged"} <= set(table)
    assert ((table["agreement_p"] >= 0) & (table["agreement_p"] <= 1)).all()
    # Observed test items agree with JuryCounts.pair_table (the items both judges graded).
    pair = jury_fit.counts.pair_table("gpt", "claude")
    graded = check.observed["items_graded"].sel(items="test", pair="gpt - claude")
    np.testing.assert_array_equal(graded.values, pair.sum(("verdict_a", "verdict_b")).values)
    cells = pair.values.astype(float) + 0.5
    lor = np.log(cells[..., 1, 1] * cells[..., 0, 0] / (cells[..., 1, 0] * cells[..., 0, 1]))
    np.testing.assert_allclose(
        check.observed["log_odds_ratio"].sel(items="test", pair="gpt - claude").values, lor
    )
    # Labelled items per truth: 40 each, a tenth of the verdicts missing.
    lab = check.observed["items_graded"].sel(items="labelled_correct")
    assert bool(((lab > 25) & (lab <= 40)).all())
    # Independent judges were simulated: nothing flagged at this seed, and the message says so.
    assert not bool(check.flagged.any())
    assert "conditionally independent" in check.message
    again = jury_fit.ppc(random_seed=3)
    xr.testing.assert_equal(again.replicated, check.replicated)


def test_report_of_the_fit(jury_fit):
    report = jury_fit.report(random_seed=3)
    assert report.tables["ppc"].shape[0] == 3 * 3 * 2  # JuryPosteriorPredictiveCheck.table()
    assert report.paths == {}


def test_save_and_load_round_trip(jury_fit, tmp_path):
    path = jury_fit.save(tmp_path / "jury.nc")
    loaded = load(path)
    assert isinstance(loaded, JuryFit)
    assert loaded.config == jury_fit.config
    xr.testing.assert_allclose(loaded.summary(), jury_fit.summary())
    assert loaded.counts.patterns == jury_fit.counts.patterns
    assert {v.name for v in loaded.model.free_RVs} == {"theta", "q0", "q1"}
    # A changed file is refused.
    tree = loaded.tree.copy()
    tree["posterior"]["theta"] = tree["posterior"]["theta"] * 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree.to_netcdf(tmp_path / "edited.nc", engine="h5netcdf")
    with pytest.raises(ValueError, match="changed after it was saved"):
        load(tmp_path / "edited.nc")
