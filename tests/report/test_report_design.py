"""The report states the labelling design and uses its estimators (issue 15).

A random-design report shows the design, the design's estimator (``bj.estimate`` without a
method: the profile-likelihood interval) and the human-only baseline (the labelled items
alone, Wilson) beside it, with Lee et al. Sec. 6's point; a stratified report is unchanged
but for its design line. Every number is checked against the function that computes it,
called here with the same counts. Where a fit pools calibration, the report states the
pooled-calibration check. The fits are exact (``method="exact"``, no MCMC).
"""

import re
import types
import warnings

import numpy as np
import pytest

import bayesjudge as bj
import bayesjudge.report.tables as report_tables
from bayesjudge._text import markdown_escape
from bayesjudge.diagnostics import check_pooled_calibration
from bayesjudge.report import build_report
from bayesjudge.warnings import PooledCalibrationWarning

SEED = 7
#: Names that are Markdown, HTML and mathtext: they must be shown escaped, never as markup.
HOSTILE = ["<b>bold</b>", "$x$ | y"]


@pytest.fixture(scope="module")
def random_counts():
    """Two systems, 2000 items each, a judge with q0 = 0.8, q1 = 0.9 (hostile names).

    The first has 200 randomly labelled items, the second only 20.
    """
    return bj.JudgeCounts.from_counts(
        n=[1800, 1980],
        k=[700, 1250],
        m0=[140, 6],
        tn=[112, 5],
        m1=[60, 14],
        tp=[54, 13],
        system=HOSTILE,
        design="random",
    )


@pytest.fixture(scope="module")
def stratified_counts():
    return bj.simulate_counts(
        [0.55, 0.8], 0.85, 0.9, n=1000, m0=200, m1=200, system=["a", "b"], random_seed=3
    )


@pytest.fixture(scope="module")
def random_report(random_counts):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bj.BayesJudgeWarning)
        return build_report(random_counts, random_seed=SEED, n_resamples=2000)


@pytest.fixture(scope="module")
def stratified_report(stratified_counts):
    return build_report(stratified_counts, random_seed=SEED, n_resamples=2000)


def _design_paragraph(report) -> str:
    return next(
        b[1] for b in report.section("design").blocks if b[0] == "p" and "Labelling" in b[1]
    )


# ----------------------------------------------------------------------------- random design


def test_random_report_states_the_design_first_in_its_section(random_report):
    first = random_report.section("design").blocks[0]
    assert first[0] == "p" and first[1].startswith("**Labelling design: random.**")
    # What it means and what goes wrong if declared wrongly.
    assert "random subset of those same items" in first[1]
    assert "too narrow" in first[1] and 'design="stratified"' in first[1]
    settings = random_report.tables["settings"].set_index("setting")["value"]
    assert settings["labelling design"] == "random"
    assert settings["estimand"] == "population"
    md, page = random_report.to_markdown(), random_report.to_html()
    assert "**Labelling design: random.**" in md
    assert "<strong>Labelling design: random.</strong>" in page


def test_random_report_uses_the_designs_estimator_and_the_human_only_baseline(
    random_report, random_counts
):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bj.BayesJudgeWarning)
        expected = bj.estimate(random_counts)  # no method: the design's
    assert expected.attrs["method"] == "likelihood"
    theta = random_report.tables["theta"]
    assert theta.attrs["method"] == "likelihood"
    ci = expected["ci"].transpose("system", "stratum", "ci_bound").values.reshape(-1, 2)
    np.testing.assert_allclose(theta["corrected"], expected["estimate"].values.ravel(), rtol=0)
    np.testing.assert_allclose(theta[["corrected_lower", "corrected_upper"]], ci, rtol=0)
    human_ci = expected["human_ci"].transpose("system", "stratum", "ci_bound").values
    np.testing.assert_allclose(theta["human"], expected["human_estimate"].values.ravel(), rtol=0)
    np.testing.assert_allclose(
        theta[["human_lower", "human_upper"]], human_ci.reshape(-1, 2), rtol=0
    )
    # The human-only estimate is the share of labelled items humans called correct.
    m0, m1 = (random_counts.dataset[v].values.ravel() for v in ("m0", "m1"))
    np.testing.assert_allclose(theta["human"], m1 / (m0 + m1), rtol=1e-12)
    ratio = (ci[:, 1] - ci[:, 0]) / (human_ci[..., 1] - human_ci[..., 0]).ravel()
    np.testing.assert_allclose(theta["width_ratio"], ratio, rtol=1e-12)


def test_random_report_names_the_method_and_the_baseline_in_every_medium(random_report):
    md, page = random_report.to_markdown(), random_report.to_html()
    for text in (md, page):
        assert "maximum-likelihood θ̂ [profile likelihood]" in text  # the θ table's header
        assert "human labels only: m1/(m0 + m1) [Wilson]" in text
        assert "Maximum-likelihood θ̂ with the profile-likelihood interval" in text.replace(
            "<strong>", "**"
        ).replace("</strong>", "**").replace("**", "")
        assert "Lang–Reiczigel]" not in text  # the stratified estimator's header is gone
    bullets = next(b for b in random_report.section("intervals").blocks if b[0] == "list")[1]
    assert any("method='likelihood'" in item for item in bullets)
    assert any(item.startswith("**Human-only baseline") for item in bullets)


def test_random_report_says_where_the_judge_helps(random_report):
    theta = random_report.tables["theta"]
    narrower = int((theta["width_ratio"] < 1).sum())
    helps = [
        b[1]
        for b in random_report.section("accuracy").blocks
        if b[0] == "p" and "Does the judge help?" in "".join(b[1])
    ]
    assert len(helps) == 1
    text = "".join(helps[0])
    assert "Lee et al. Sec. 6" in text
    assert f"narrower in {narrower} of {len(theta)} groups" in text
    # The group where it is not narrower is named (as data: escaped in Markdown).
    worse = theta.loc[theta["width_ratio"] >= 1, "system"].tolist()
    md = random_report.to_markdown()
    assert all(markdown_escape(name) in md.split("Does the judge help?")[1] for name in worse)


def test_random_report_keeps_hostile_names_escaped(random_report):
    md, page = random_report.to_markdown(), random_report.to_html()
    assert "<b>bold</b>" not in md and "<b>bold</b>" not in page
    assert markdown_escape("<b>bold</b>") in md and "&lt;b&gt;bold&lt;/b&gt;" in page
    assert re.search(r"(?<!\\)\$x(?<!\\)\$", md) is None  # no unescaped mathtext


# ----------------------------------------------------------------------------- stratified


def test_stratified_report_is_unchanged_but_for_its_design_line(
    stratified_report, stratified_counts
):
    paragraph = _design_paragraph(stratified_report)
    assert paragraph.startswith("**Labelling design: stratified** (Lee et al.).")
    assert "sampled per human label" in paragraph and 'design="random"' in paragraph
    theta = stratified_report.tables["theta"]
    assert list(theta.columns) == [
        "system", "stratum", "naive", "naive_lower", "naive_upper",
        "corrected", "corrected_lower", "corrected_upper",
    ]  # fmt: skip
    expected = bj.estimate(stratified_counts, method="lang-reiczigel")
    np.testing.assert_allclose(theta["corrected"], expected["estimate"].values.ravel(), rtol=0)
    md = stratified_report.to_markdown()
    assert "Rogan–Gladen θ̂ [Lang–Reiczigel]" in md
    assert "Lang–Reiczigel (blue)" in md  # the forest plot's caption as before
    for absent in ("human-only", "human labels only", "profile likelihood", "judge help"):
        assert absent not in md
    settings = stratified_report.tables["settings"].set_index("setting")["value"]
    assert settings["labelling design"] == "stratified"
    assert settings["closed forms"] == (
        "naive p̂ with Wilson interval; Rogan–Gladen θ̂ with Lang–Reiczigel interval; "
        "q0, q1 Wilson; J, ΔJ Newcombe"
    )


# ----------------------------------------------------------------------------- pooling


def test_pooled_dims_only_where_a_shared_fit_pools_groups_with_their_own_labels(
    stratified_counts,
):
    def fake(calibration, pool_over=None):
        return types.SimpleNamespace(config={"calibration": calibration, "pool_over": pool_over})

    assert report_tables.pooled_dims(stratified_counts, None) == ()
    assert report_tables.pooled_dims(stratified_counts, fake("separate")) == ()
    assert report_tables.pooled_dims(stratified_counts, fake("hierarchical")) == ()
    # One stratum: only the systems are pooled groups.
    assert report_tables.pooled_dims(stratified_counts, fake("shared")) == ("system",)
    assert report_tables.pooled_dims(stratified_counts, fake("shared", ["stratum"])) == ()
    shared = stratified_counts.pooled_calibration("system")
    if "system" in shared.calibration_shared_over:  # copies of one set: labels unknown
        assert report_tables.pooled_dims(shared, fake("shared")) == ()


@pytest.fixture(scope="module")
def unlike_judge():
    """The judge's specificity differs between the systems: 0.9 on a, 0.5 on b."""
    return bj.JudgeCounts.from_counts(
        n=[1000, 1000], k=[500, 600], m0=[100, 100], tn=[90, 50], m1=[100, 100],
        tp=[90, 90], system=["a", "b"],
    )  # fmt: skip


def test_report_of_a_shared_fit_states_the_pooled_calibration_warning(unlike_judge):
    fitted = bj.fit(unlike_judge, method="exact", random_seed=SEED, draws=200, chains=2)
    # The exact engine fits separate calibration only; a shared fit's report differs in
    # what it says of the fit's pooling, which is what is checked here (an MCMC fit with
    # calibration="shared" takes minutes to compile on a test machine).
    fitted.config = {**fitted.config, "calibration": "shared", "pool_over": ["system"]}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = build_report(fit=fitted, random_seed=SEED, n_resamples=2000, ppc=False)
    caught = [w for w in caught if w.category is PooledCalibrationWarning]
    with pytest.warns(PooledCalibrationWarning) as direct:
        check_pooled_calibration(unlike_judge, dims=("system",))
    message = str(direct[0].message)
    assert [str(w.message) for w in caught] == [message]  # emitted once, as the check words it
    assert any(getattr(r, "code", "") == "PooledCalibrationWarning" for r in report.diagnoses)
    design = [b[1] for b in report.section("design").blocks if b[0] == "p"]
    pooling = ["".join(t) for t in design if "Pooling check" in "".join(t)]
    assert len(pooling) == 1 and message in pooling[0]
    md = report.to_markdown()
    assert markdown_escape(message) in md.split("## 3.")[0]  # section 2
    assert "`PooledCalibrationWarning`" in md.split("## 7.")[1]  # and section 7


def test_report_of_a_separate_fit_runs_no_pooling_check(unlike_judge):
    fitted = bj.fit(unlike_judge, method="exact", random_seed=SEED, draws=200, chains=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bj.BayesJudgeWarning)
        report = build_report(fit=fitted, random_seed=SEED, n_resamples=2000, ppc=False)
    assert "Pooling check" not in report.to_markdown()
    assert not any(getattr(r, "code", "") == "PooledCalibrationWarning" for r in report.diagnoses)


# ----------------------------------------------------------------------------- estimand


def test_test_set_fit_reports_the_test_set_theta(random_counts):
    fitted = bj.fit(
        random_counts, method="exact", random_seed=SEED, draws=500, chains=2, estimand="test-set"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bj.BayesJudgeWarning)
        report = build_report(fit=fitted, random_seed=SEED, n_resamples=2000, ppc=False)
        expected = bj.estimate(random_counts, estimand="test-set")
    theta = report.tables["theta"]
    assert theta.attrs["estimand"] == "test-set"
    summary = fitted.summary(ci_prob=0.95, var_names=["theta_test"])
    np.testing.assert_allclose(theta["bayes"], summary["mean"].to_numpy(float), rtol=1e-12)
    np.testing.assert_allclose(theta["corrected"], expected["estimate"].values.ravel(), rtol=0)
    md = report.to_markdown()
    assert "The estimand is **the test-set θ**" in md
    # The human-only baseline is of the population θ: no width ratio against a test-set θ.
    np.testing.assert_allclose(theta["human"], expected["human_estimate"].values.ravel(), rtol=0)
    assert "width_ratio" not in theta and "Does the judge help?" not in md
    settings = report.tables["settings"].set_index("setting")["value"]
    assert settings["estimand"] == "test-set"
