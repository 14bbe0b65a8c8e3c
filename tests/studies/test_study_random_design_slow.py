"""Full-size (``slow``) random-design study: issue 15's goals on the Fig. 5 θ grid.

The run is the one recorded in ``benchmarks/studies/results/random-design.md`` (same
defaults: grid ``issue15`` = 1,800 unlabelled + 200 labelled items, q0 = 0.8, q1 = 0.9,
θ = 0.05, …, 0.95, 1,000 replications, 500 posterior draws, seed ``DEFAULT_SEED``; 18
minutes on two cores shared with other jobs, load average 11). Tolerances are 3 nominal
Monte Carlo SE of a coverage, sqrt(0.95 · 0.05 / 1000) = 0.0069: the band 0.95 ± 0.0207.
"""

from __future__ import annotations

import numpy as np
import pytest

from bayesjudge.studies import random_design

pytestmark = pytest.mark.slow

REPS = 1000
NOMINAL = 0.95
BAND = 3 * np.sqrt(NOMINAL * (1 - NOMINAL) / REPS)


@pytest.fixture(scope="module")
def table():
    return random_design.run(reps=REPS).table.squeeze(("n", "m", "q0", "q1"))


@pytest.mark.parametrize("estimand", random_design.ESTIMANDS)
@pytest.mark.parametrize("name", ["bayes-random", "likelihood"])
def test_coverage_within_three_mcse_at_every_theta(table, name, estimand):
    cover = table["coverage"].sel(sample="random", estimator=name, estimand=estimand)
    off = np.abs(cover - NOMINAL)
    assert (off <= BAND).all(), cover.to_series().round(4).to_dict()


@pytest.mark.xfail(
    reason="PPI++'s Wald interval under-covers near the boundaries with 200 labelled items "
    "(recorded: 0.929 at theta = 0.10, 0.927 at 0.95; band 0.929-0.971): an asymptotic "
    "interval with m * theta of 10-20 labelled items of the rarer kind (ppi_mean's Notes)",
    strict=True,
)
def test_ppi_coverage_of_the_population_theta_within_three_mcse(table):
    cover = table["coverage"].sel(sample="random", estimator="ppi", estimand="population")
    assert (np.abs(cover - NOMINAL) <= BAND).all(), cover.to_series().round(4).to_dict()


def test_ppi_population_interval_is_conservative_for_the_test_set_theta(table):
    # PPI++ has no test-set interval; its population interval is scored against the test-set
    # theta, which it contains more often than nominal (recorded 0.946-0.978), never less.
    cover = table["coverage"].sel(sample="random", estimator="ppi", estimand="test-set")
    assert (cover >= NOMINAL - BAND).all(), cover.to_series().round(4).to_dict()


def test_posterior_width_goals(table):
    length = table["length"].sel(sample="random", estimand="population")
    bayes = length.sel(estimator="bayes-random")
    # Issue 15: at most 1.05 x PPI++'s and at most 0.7 x the stratified posterior's.
    assert (bayes <= 1.05 * length.sel(estimator="ppi")).all()
    assert (bayes <= 0.7 * length.sel(estimator="bayes-stratified")).all()
    goals = random_design.goals(table.expand_dims(n=[1800], m=[200], q0=[0.8], q1=[0.9]))
    widths = goals[goals["goal"].str.startswith("width")]
    assert widths["passed"].all(), widths


def test_random_sample_declared_stratified_is_valid_and_wider(table):
    cell = table.sel(sample="random", estimand="population")
    for name in ("bayes-stratified", "lang-reiczigel"):
        assert (cell["coverage"].sel(estimator=name) >= NOMINAL - BAND).all(), name
    assert (
        cell["length"].sel(estimator="bayes-stratified")
        > cell["length"].sel(estimator="bayes-random")
    ).all()


def test_stratified_sample_declared_random_is_biased_and_collapses(table):
    cell = table.sel(sample="stratified", estimand="population")
    theta = cell["theta"].values
    far = np.abs(theta - 0.5) >= 0.2
    for name in ("bayes-random", "likelihood", "ppi", "human-only"):
        bias = cell["bias"].sel(estimator=name).values
        # Pulled towards m1 / (m0 + m1) = 1/2: up below 1/2, down above it.
        assert (bias[theta < 0.45] > 0).all() and (bias[theta > 0.55] < 0).all(), name
        assert (cell["coverage"].sel(estimator=name).values[far] < 0.5).all(), name
    for name in ("bayes-stratified", "lang-reiczigel"):  # declared right
        assert (cell["coverage"].sel(estimator=name) >= NOMINAL - BAND).all(), name
