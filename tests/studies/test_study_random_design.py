"""Tests of the random-design study (issue 15): random labelling, misdeclared designs.

References used here are independent of the study's code path:

* the human-only (Wilson) coverage and mean length on the random sample: exact sums over
  m1 = 0..m of the Bin(m, θ) pmf (scipy), the Wilson interval written out here;
* on the stratified sample m1 / (m0 + m1) = ½ in every replication, so the human-only bias is
  exactly ½ − θ;
* every estimator's per-replication numbers recomputed from the core functions on the same
  simulated data (same seeded streams), and the study's scores checked against them.

Monte Carlo tolerances are 3 MC-SE (fixed seeds); the full-size goals are in
``test_study_random_design_slow.py``.
"""

from __future__ import annotations

import json
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pytest
from scipy import stats

from bayesjudge.core.correction import lang_reiczigel_interval

# Imported under other names: pytest would collect functions named test_* as tests.
from bayesjudge.core.exact import exact_draws, exact_theta_interval
from bayesjudge.core.exact import test_set_theta_draws as theta_test_draws
from bayesjudge.core.kernels import rogan_gladen_counts
from bayesjudge.core.likelihood import human_only, likelihood_interval
from bayesjudge.core.likelihood import test_set_interval as likelihood_test_set
from bayesjudge.core.ppi import ppi_mean
from bayesjudge.simulate import simulate_count_arrays
from bayesjudge.studies import STUDIES, StudyResult, random_design, run_study
from bayesjudge.studies._framework import point_rngs

N, M, Q0, Q1 = 1800, 200, 0.8, 0.9
COUNTS = ("k", "n", "tn", "m0", "tp", "m1")


def wilson(m1, m, alpha=0.05):
    """Wilson score interval of m1 / m (Wilson 1927), written out."""
    z = stats.norm.isf(alpha / 2)
    phat = m1 / m
    centre = (phat + z * z / (2 * m)) / (1 + z * z / m)
    half = z * np.sqrt(phat * (1 - phat) / m + z * z / (4 * m * m)) / (1 + z * z / m)
    return centre - half, centre + half


def exact_human_only(theta, m=M):
    m1 = np.arange(m + 1)
    w = stats.binom.pmf(m1, m, theta)
    lo, hi = wilson(m1, m)
    lo, hi = np.where(m1 == 0, 0.0, lo), np.where(m1 == m, 1.0, hi)
    return {
        "coverage": float(np.sum(w * ((lo <= theta) & (theta <= hi)))),
        "length": float(np.sum(w * (hi - lo))),
    }


@pytest.fixture(scope="module")
def small():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return random_design.run(reps=30, theta=[0.1, 0.5], draws=200, random_seed=11)


def test_registered_and_runs_through_the_registry():
    assert STUDIES["random-design"] == "bayesjudge.studies.random_design"
    res = run_study("random-design", reps=5, theta=[0.4], estimators=["ppi"], samples=["random"])
    assert isinstance(res, StudyResult) and res.name == "random-design"


def test_table_layout_and_settings(small):
    table = small.table
    assert table["coverage"].dims == (
        "n", "m", "q0", "q1", "sample", "theta", "estimand", "estimator",
    )  # fmt: skip
    assert list(table["estimator"].values) == list(random_design.ESTIMATORS)
    assert list(table["sample"].values) == ["random", "stratified"]
    assert list(table["estimand"].values) == ["population", "test-set"]
    assert (table["n"].item(), table["m"].item()) == (N, M)
    settings = small.settings
    assert settings["reps"] == 30 and settings["random_seed"] == 11 and settings["draws"] == 200
    assert settings["grid"] == "issue15" and settings["samples"] == ["random", "stratified"]
    for var in ("bias", "coverage", "length", "undefined_share"):
        assert not np.isnan(table[var].values).any(), var
    goals = json.loads(table.attrs["goals"])
    assert {row["goal"] for row in goals} == {"coverage", "width vs ppi", "width vs stratified"}
    assert set(json.loads(table.attrs["seconds"])) == {"simulate", *random_design.ESTIMATORS}


def _data(sample, theta, seed=11, reps=30):
    streams = point_rngs(seed, N, M, Q0, Q1, theta, count=3)
    if sample == "random":
        data = simulate_count_arrays(theta, Q0, Q1, N, m=M, design="random", test_set=True,
                                     size=(reps,), random_seed=streams[0])  # fmt: skip
    else:
        data = simulate_count_arrays(theta, Q0, Q1, N, M // 2, M // 2, test_set=True,
                                     size=(reps,), random_seed=streams[1])  # fmt: skip
    return data, streams[2]


def _scores(estimate, lower, upper, truth):
    return {
        "bias": np.mean(estimate - truth),
        "coverage": np.mean((lower <= truth) & (truth <= upper)),
        "length": np.mean(upper - lower),
    }


@pytest.mark.parametrize("theta", [0.1, 0.5])
def test_scores_equal_the_core_functions_on_the_same_data(small, theta):
    # Recompute every cell from the core functions on the data the study's streams draw.
    expected = {}
    for sample in ("random", "stratified"):
        data, rng = _data(sample, theta)
        counts = [data[key] for key in COUNTS]
        truth = {"population": theta, "test-set": data["theta_test"]}
        bayes = exact_theta_interval(*counts, design="random")
        pop = {
            "bayes-random": (bayes.median, bayes.lower, bayes.upper),
            "likelihood": likelihood_interval(*counts),
            "human-only": human_only(data["tn"], data["m0"], data["tp"], data["m1"]),
        }
        strat = exact_theta_interval(*counts, design="stratified")
        pop["bayes-stratified"] = (strat.median, strat.lower, strat.upper)
        ppi = ppi_mean(*counts)
        pop["ppi"] = (ppi.estimate, np.clip(ppi.lower, 0, 1), np.clip(ppi.upper, 0, 1))
        k, n, tn, m0, tp, m1 = counts
        lo, hi = lang_reiczigel_interval(k / n, tn / m0, tp / m1, n, m0, m1, 0.05)
        rg, ok = rogan_gladen_counts(k, n, tn, m0, tp, m1, clip=True)
        pop["lang-reiczigel"] = (np.where(ok, rg, 0.5), lo, hi)
        test = dict(pop)
        test["likelihood"] = likelihood_test_set(*counts)
        if sample == "random":
            post = exact_draws(*counts, size=200, rng=rng, design="random")
            draws = theta_test_draws(post["theta"], post["q0"], post["q1"], k, n, m0, m1,
                                     design="random", rng=rng)  # fmt: skip
            lo, hi = np.quantile(draws, [0.025, 0.975], axis=0)
            test["bayes-random"] = (np.median(draws, axis=0), lo, hi)
        for estimand, intervals in (("population", pop), ("test-set", test)):
            for name, (est, lo, hi) in intervals.items():
                expected[sample, estimand, name] = _scores(
                    np.asarray(est, float), lo, hi, truth[estimand]
                )
    table = small.table.sel(theta=theta).squeeze(("n", "m", "q0", "q1"))
    for (sample, estimand, name), scores in expected.items():
        cell = table.sel(sample=sample, estimand=estimand, estimator=name)
        for var, value in scores.items():
            assert float(cell[var]) == pytest.approx(value, abs=1e-12), (sample, estimand, name)


@pytest.mark.parametrize("theta", [0.1, 0.3])
def test_human_only_coverage_and_length_match_the_binomial_sums(theta):
    reps = 4000
    res = random_design.run(reps=reps, theta=[theta], estimators=["human-only"],
                            samples=["random"], random_seed=3)  # fmt: skip
    cell = res.table.sel(estimand="population", estimator="human-only").squeeze()
    exact = exact_human_only(theta)
    se = np.sqrt(exact["coverage"] * (1 - exact["coverage"]) / reps)
    assert abs(float(cell["coverage"]) - exact["coverage"]) < 3 * se
    assert abs(float(cell["length"]) - exact["length"]) < 3 * float(cell["length_mcse"])


def test_stratified_sample_declared_random_is_biased_towards_the_labelled_share(small):
    # m1 / (m0 + m1) = 1/2 in every stratified replication: the human-only bias is exactly
    # 1/2 - theta, and the estimators that take m1 as evidence are pulled the same way.
    table = small.table.sel(sample="stratified", estimand="population").squeeze(
        ("n", "m", "q0", "q1")
    )
    human = table.sel(estimator="human-only")
    np.testing.assert_allclose(human["bias"].values, 0.5 - np.array([0.1, 0.5]), atol=1e-12)
    at = table.sel(theta=0.1)
    for name in ("bayes-random", "likelihood", "ppi"):
        assert float(at["bias"].sel(estimator=name)) > 0.1, name  # pulled up towards 1/2
        assert float(at["coverage"].sel(estimator=name)) < 0.5, name  # collapsed
    for name in ("bayes-stratified", "lang-reiczigel"):  # declared right: valid
        assert float(at["coverage"].sel(estimator=name)) > 0.8, name
        assert abs(float(at["bias"].sel(estimator=name))) < 0.05, name


def test_random_sample_declared_stratified_is_valid_but_wider(small):
    table = small.table.sel(sample="random", estimand="population").squeeze(("n", "m", "q0", "q1"))
    length = table["length"]
    # The numbers at theta = 0.3 were 0.100 (full likelihood) vs 0.201 (stratified).
    assert (
        length.sel(estimator="bayes-random") < 0.7 * length.sel(estimator="bayes-stratified")
    ).all()
    assert (length.sel(estimator="bayes-random") <= 1.05 * length.sel(estimator="ppi")).all()
    assert (table["coverage"].sel(estimator="bayes-stratified") > 0.8).all()


def test_goals_pass_and_fail_on_constructed_tables(small):
    table = small.table.sel(theta=[0.5]).copy(deep=True)
    table.attrs = dict(table.attrs) | {"reps": 10_000}
    band = 3 * np.sqrt(0.95 * 0.05 / 10_000)
    index = {"sample": "random", "theta": 0.5}
    for name in random_design.GOAL_ESTIMATORS:
        table["coverage"].loc[index | {"estimator": name}] = 0.95 + 0.9 * band
    table["length"].loc[index | {"estimator": "bayes-random"}] = 0.1
    table["length"].loc[index | {"estimator": "ppi"}] = 0.1 / 1.04
    table["length"].loc[index | {"estimator": "bayes-stratified"}] = 0.1 / 0.69
    goals = random_design.goals(table)
    assert goals["passed"].all(), goals
    table["coverage"].loc[index | {"estimator": "ppi", "estimand": "test-set"}] = 0.95 - 1.1 * band
    table["length"].loc[index | {"estimator": "ppi"}] = 0.1 / 1.06
    goals = random_design.goals(table).set_index(["goal", "estimator", "estimand"])
    assert not goals.loc[("coverage", "ppi", "test-set"), "passed"]
    assert goals.loc[("coverage", "ppi", "population"), "passed"]
    assert not goals.loc[("width vs ppi", "bayes-random", "population"), "passed"]
    assert goals.loc[("width vs ppi", "bayes-random", "population"), "value"] == pytest.approx(1.06)
    assert goals.loc[("width vs stratified", "bayes-random", "population"), "passed"]


def test_subset_of_estimators_and_theta_reproduces_the_full_run(small):
    part = random_design.run(reps=30, theta=[0.5], draws=200, random_seed=11,
                             estimators=["bayes-random", "ppi"])  # fmt: skip
    whole = small.table.sel(theta=[0.5], estimator=["bayes-random", "ppi"])
    for var in ("bias", "coverage", "length"):
        np.testing.assert_array_equal(part.table[var].values, whole[var].values)


def test_figure_has_a_row_per_sample(small):
    figure = small.plot()
    try:
        assert len(figure.axes) == 8
        assert all(ax.get_xlabel() and ax.get_ylabel() for ax in figure.axes)
    finally:
        plt.close(figure)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"grid": "nope"}, r"grid must be one of \['fig5', 'issue15'\]"),
        ({"grid": {"n": [100], "m": [21], "q0": [0.8], "q1": [0.9]}}, r"must be even.*21"),
        ({"grid": {"n": [100]}}, r"grid needs the keys"),
        ({"estimators": ["bayes"]}, r"estimators must be distinct names from"),
        ({"samples": ["random", "random"]}, r"samples must be distinct names"),
        ({"draws": 50}, r"draws must be"),
        ({"alpha": 1.5}, r"alpha must lie in"),
        ({"theta": [0.2, 1.2]}, r"theta values must lie in"),
        ({"reps": 1}, r"reps must be an integer of at least 2"),
    ],
)
def test_bad_options_are_named(options, match):
    with pytest.raises(ValueError, match=match):
        random_design.run(**({"reps": 5} | options))


def test_cli_runs_the_study(run_cli):
    args = ["study", "random-design", "--reps", "4", "--seed", "2", "--set", "theta=0.4",
            "--set", "draws=100", "--set", "samples=random", "--set", "estimators=ppi,likelihood",
            "--no-save", "--format", "csv"]  # fmt: skip
    code, out, err = run_cli(args)
    assert code == 0, err
    expected = run_study("random-design", reps=4, random_seed=2, theta=[0.4], draws=100,
                         samples=["random"], estimators=["ppi", "likelihood"])  # fmt: skip
    assert out == expected.to_frame().to_csv(index=False)
