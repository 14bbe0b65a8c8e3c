"""The report of K-category verdicts (issue 16): numbers, sections, escaping, K = 2, fits.

Every number the report shows is compared with the function that computes it
(``bj.estimate``/``bj.compare`` of CategoricalCounts, ``fit.summary``/``compare``/``ppc``);
the K = 2 report is compared with the binary report of the same counts.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import bayesjudge as bj
from bayesjudge._text import plain_label
from bayesjudge.core.naive import naive
from bayesjudge.data import CategoricalCounts
from bayesjudge.report import build_report
from bayesjudge.report.categorical import build_categorical_report
from bayesjudge.report.categorical_sections import CATEGORICAL_SECTIONS
from bayesjudge.report.figures import draw_categorical_figures
from bayesjudge.warnings import IllConditionedJudgeWarning

SCORES = {"A": 1.0, "tie": 0.5, "B": 0.0}


@pytest.fixture(scope="module")
def counts():
    # Three systems in two strata, one calibration table per group (rows = truth).
    test = [
        [[400, 200, 400], [350, 150, 500]],
        [[300, 200, 500], [310, 190, 500]],
        [[450, 150, 400], [300, 100, 600]],
    ]
    cal = [[80, 15, 5], [10, 80, 10], [5, 15, 80]]
    return CategoricalCounts.from_counts(
        test=test,
        calibration=cal,
        categories=["A", "tie", "B"],
        system=["x", "y", "z"],
        stratum=["s1", "s2"],
    )


@pytest.fixture(scope="module")
def report(counts):
    return build_categorical_report(counts, scores=SCORES, random_seed=3, warn=False)


def _pick(frame, **where):
    rows = frame
    for col, value in where.items():
        rows = rows[rows[col] == value]
    assert len(rows) == 1, where
    return rows.iloc[0]


# ----------------------------------------------------------------------------- closed forms


def test_category_and_score_numbers_equal_estimate(counts, report):
    est = bj.estimate(counts, scores=SCORES)
    cats, scores = report.tables["categories"], report.tables["scores"]
    for system in counts.systems:
        for stratum in counts.strata:
            at = est.sel(system=system, stratum=stratum)
            for category in counts.categories:
                row = _pick(cats, system=system, stratum=stratum, category=category)
                cell = at.sel(category=category)
                assert row["corrected"] == float(cell["estimate"])
                assert row["corrected_lower"] == float(cell["ci"].sel(ci_bound="lower"))
                assert row["corrected_upper"] == float(cell["ci"].sel(ci_bound="upper"))
                assert row["raw"] == float(cell["estimate_raw"])
                assert row["naive"] == float(cell["p_hat"])
            row = _pick(scores, system=system, stratum=stratum)
            assert row["corrected"] == float(at["score"])
            assert [row["corrected_lower"], row["corrected_upper"]] == at[
                "score_ci"
            ].values.tolist()
            # naive score = Σ v p̂
            assert row["naive"] == pytest.approx(float((at["p_hat"] * [1, 0.5, 0]).sum()), 1e-12)


def test_naive_and_confusion_intervals_are_wilson(counts, report):
    row = _pick(report.tables["categories"], system="y", stratum="s2", category="tie")
    ref = naive(190, 1000, alpha=0.05, method="wilson")
    assert [row["naive"], row["naive_lower"], row["naive_upper"]] == pytest.approx(list(ref), 1e-12)
    conf = report.tables["confusion"]
    row = _pick(conf, system="z", stratum="s1", truth="tie", method="closed form")
    ref = naive(80, 100, alpha=0.05, method="wilson")
    assert [row["c1"], row["c1_lower"], row["c1_upper"]] == pytest.approx(list(ref), 1e-12)
    assert row["m"] == 100
    hat = counts.confusion_hat().sel(system="z", stratum="s1").values
    closed = conf[(conf["system"] == "z") & (conf["stratum"] == "s1")]
    np.testing.assert_allclose(closed[["c0", "c1", "c2"]].to_numpy(float), hat, rtol=1e-12)


def test_conditioning_and_differences_equal_their_functions(counts, report):
    est = bj.estimate(counts, scores=SCORES)
    cond = report.tables["conditioning"]
    for name in ("determinant", "sigma_min", "amplification"):
        got = cond.set_index(["system", "stratum"])[name]
        ref = est[name].to_series().reindex(got.index)
        np.testing.assert_array_equal(got.to_numpy(), ref.to_numpy())
    assert set(cond["condition"]) == {"fine"}
    diff = report.tables["score_difference"]
    ref = bj.compare(counts, scores=SCORES)
    assert len(diff) == 3 * 2  # three pairs, two strata
    for pair in ref["pair"].values:
        for stratum in counts.strata:
            row = _pick(diff, pair=pair, stratum=stratum)
            at = ref.sel(pair=pair, stratum=stratum)
            assert row["frequentist"] == float(at["estimate"])
            assert [row["frequentist_lower"], row["frequentist_upper"]] == at["ci"].values.tolist()


def test_bottom_line_ranks_by_corrected_score(counts, report):
    line = report.tables["bottom_line"]
    est = bj.estimate(counts, scores=SCORES)
    ref = bj.compare(counts, scores=SCORES)
    for stratum in counts.strata:
        rows = line[line["stratum"] == stratum]
        score = est["score"].sel(stratum=stratum).to_series()
        assert rows["system"].tolist() == score.sort_values(ascending=False).index.tolist()
        np.testing.assert_array_equal(rows["score"], score.sort_values(ascending=False))
        first, second = rows.iloc[0], rows.iloc[1]
        # Δ to the next, with the sign of "this − next" whatever the pair's order in compare.
        labels = list(zip(ref["first"].values, ref["second"].values, strict=True))
        i = (
            labels.index((first["system"], second["system"]))
            if (first["system"], second["system"]) in labels
            else labels.index((second["system"], first["system"]))
        )
        sign = 1.0 if labels[i][0] == first["system"] else -1.0
        assert first["next_difference"] == pytest.approx(
            sign * float(ref["estimate"].isel(pair=i).sel(stratum=stratum)), abs=1e-15
        )
        lo, hi = first["next_difference_lower"], first["next_difference_upper"]
        assert first["settled"] == ("yes" if lo > 0 or hi < 0 else "no")
        assert rows.iloc[-1]["settled"] == "—"


def test_sections_tables_figures_and_rendering(report, tmp_path):
    assert [s.key for s in report.sections] == list(CATEGORICAL_SECTIONS)
    assert {
        "bottom_line",
        "test_counts",
        "calibration_counts",
        "confusion",
        "conditioning",
        "categories",
        "scores",
        "score_difference",
        "diagnoses",
        "settings",
    } <= set(report.tables)
    assert set(report.figures) == {"confusion", "categories", "scores"}
    for png in report.figures.values():
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
    md = report.to_markdown()
    for title in CATEGORICAL_SECTIONS.values():
        assert f"## {title}" in md
    assert md.index("## The bottom line") < md.index("## 1. Data")
    assert "0 divergences" not in md and "The Bayesian parts were not run" in md
    assert "Rogan" in md and "Wang and M. Á. Carreira-Perpiñán" in md
    # Every table's numbers appear as rendered cells, e.g. a corrected score with its interval.
    row = _pick(report.tables["scores"], system="x", stratum="s1")
    cell = f"{row['corrected']:.3f} [{row['corrected_lower']:.3f}, {row['corrected_upper']:.3f}]"
    assert cell in md
    paths = report.save(tmp_path)
    assert {"markdown", "html", "confusion", "categories", "scores"} <= set(paths)
    page = paths["html"].read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") == 3 and cell in page


def test_without_scores_shares_and_no_ranking(counts):
    report = build_categorical_report(counts, random_seed=1, warn=False)
    assert "scores" not in report.tables and "score_difference" not in report.tables
    line = report.tables["bottom_line"]
    cats = report.tables["categories"]
    row = _pick(cats, system="y", stratum="s1", category="B")
    got = _pick(line, system="y", stratum="s1")
    assert [got["c2"], got["c2_lower"], got["c2_upper"]] == [
        row["corrected"],
        row["corrected_lower"],
        row["corrected_upper"],
    ]
    md = report.to_markdown()
    assert "the systems are not ranked" in md and "Ranking" not in md
    assert set(report.figures) == {"confusion", "categories"}


def test_scores_keyed_by_text_for_numeric_grades():
    counts = CategoricalCounts.from_counts(
        test=[10, 30, 60],
        calibration=[[18, 2, 0], [2, 16, 2], [0, 2, 18]],
        categories=[1, 2, 3],
        ordered=True,
    )
    # A fit stores scores keyed by the categories' text: the report maps them back.
    by_text = build_categorical_report(
        counts, scores={"1": 1, "2": 2, "3": 3}, random_seed=1, warn=False
    )
    est = bj.estimate(counts, scores={1: 1, 2: 2, 3: 3})
    assert by_text.tables["scores"]["corrected"].iloc[0] == float(est["score"].squeeze())
    assert by_text.tables["scores"]["corrected_upper"].iloc[0] == float(
        est["score_ci"].squeeze().sel(ci_bound="upper")
    )
    assert "an ordered scale" in by_text.to_markdown()


def test_bootstrap_method_is_seeded(counts):
    a = build_categorical_report(
        counts.sel(system=["x", "y"]),
        scores=SCORES,
        method="bootstrap",
        n_resamples=1000,
        random_seed=5,
        warn=False,
    )
    est = bj.estimate(
        counts.sel(system=["x", "y"]),
        scores=SCORES,
        method="bootstrap",
        n_resamples=1000,
        random_seed=5,
    )
    # Seeded: the same resamples as bj.estimate with that seed, hence the same interval.
    row = _pick(a.tables["scores"], system="y", stratum="s2")
    assert [row["corrected_lower"], row["corrected_upper"]] == est["score_ci"].sel(
        system="y", stratum="s2"
    ).values.tolist()
    row = _pick(a.tables["categories"], system="x", stratum="s1", category="tie")
    assert row["corrected_upper"] == float(
        est["ci"].sel(system="x", stratum="s1", category="tie", ci_bound="upper")
    )
    assert "bootstrap" in a.tables["score_difference"].attrs["headers"]["frequentist"]


def test_many_systems_compare_neighbours_in_rank():
    rng = np.random.default_rng(0)
    systems = [f"m{i:02d}" for i in range(11)]
    test = rng.multinomial(500, [0.4, 0.2, 0.4], size=11)
    counts = CategoricalCounts.from_counts(
        test=test,
        calibration=[[40, 8, 2], [5, 40, 5], [2, 8, 40]],
        categories=["A", "tie", "B"],
        system=systems,
    )
    report = build_categorical_report(counts, scores=SCORES, random_seed=1, warn=False)
    line = report.tables["bottom_line"]
    assert len(line) == 10 and line.attrs["hidden"] == 1
    assert len(report.tables["score_difference"]) == 10  # neighbours in rank only
    assert "neighbours in rank" in report.to_markdown()


# ----------------------------------------------------------------------------- K = 2


def test_k2_equals_the_binary_report():
    binary = bj.JudgeCounts.from_counts(
        n=[1000, 800],
        k=[620, 430],
        m0=[150, 120],
        tn=[128, 99],
        m1=[140, 160],
        tp=[121, 141],
        system=["a", "b"],
    )
    cat = CategoricalCounts.from_judge_counts(binary)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bj.BayesJudgeWarning)
        ref = build_report(binary, random_seed=1, n_resamples=1000, warn=False)
    got = build_categorical_report(
        cat, scores={"incorrect": 0, "correct": 1}, random_seed=1, warn=False
    )
    theta = ref.tables["theta"].set_index("system")
    cats = got.tables["categories"]
    correct = cats[cats["category"] == "correct"].set_index("system")
    scores = got.tables["scores"].set_index("system")
    for system in ("a", "b"):
        # Rogan–Gladen θ̂ and the naive p̂ with its Wilson interval, to 1e-12.
        assert correct.loc[system, "corrected"] == pytest.approx(
            theta.loc[system, "corrected"], abs=1e-12
        )
        assert scores.loc[system, "corrected"] == pytest.approx(
            theta.loc[system, "corrected"], abs=1e-12
        )
        for col in ("naive", "naive_lower", "naive_upper"):
            assert correct.loc[system, col] == pytest.approx(theta.loc[system, col], abs=1e-12)
    # The confusion matrix's diagonal is q0, q1 with the same Wilson intervals.
    judge = ref.tables["judge"].set_index("system")
    conf = got.tables["confusion"]
    for system in ("a", "b"):
        rows = conf[(conf["system"] == system) & (conf["method"] == "closed form")]
        q0 = rows[rows["truth"] == "incorrect"].iloc[0]
        q1 = rows[rows["truth"] == "correct"].iloc[0]
        for suffix in ("", "_lower", "_upper"):
            assert q0[f"c0{suffix}"] == pytest.approx(judge.loc[system, f"q0{suffix}"], abs=1e-12)
            assert q1[f"c1{suffix}"] == pytest.approx(judge.loc[system, f"q1{suffix}"], abs=1e-12)
    # At K = 2 σ_min is |J| (Newcombe's point estimate is Ĵ = q0 + q1 − 1).
    cond = got.tables["conditioning"].set_index("system")
    for system in ("a", "b"):
        assert cond.loc[system, "sigma_min"] == pytest.approx(
            abs(judge.loc[system, "J"]), abs=1e-12
        )


# ----------------------------------------------------------------------------- warnings, errors


def test_ill_conditioned_judge_is_the_warning_that_matters():
    counts = CategoricalCounts.from_counts(
        test=[300, 300, 400],
        calibration=[[40, 30, 30], [33, 34, 33], [30, 30, 40]],
        categories=["A", "tie", "B"],
    )
    with pytest.warns(IllConditionedJudgeWarning, match="Ill-conditioned judge"):
        report = build_categorical_report(counts, scores=SCORES, random_seed=1)
    assert report.diagnoses[0].code == "IllConditionedJudgeWarning"
    assert set(report.tables["conditioning"]["condition"]) == {"ill-conditioned"}
    line = report.section("bottom_line").blocks[-1][1]
    assert "Warning that matters most" in line[0] and "IllConditionedJudgeWarning" in line[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = build_categorical_report(counts, scores=SCORES, random_seed=1, warn=False)
    assert [r.code for r in quiet.diagnoses] == ["IllConditionedJudgeWarning"]


def test_bad_input_is_refused(counts):
    with pytest.raises(ValueError, match="Pass counts, a fit, or both"):
        build_categorical_report()
    binary = bj.JudgeCounts.from_counts(n=100, k=60, m0=50, tn=40, m1=50, tp=45)
    with pytest.raises(TypeError, match="CategoricalCounts"):
        build_categorical_report(binary)
    empty = CategoricalCounts.from_counts(test=[5, 3, 2], categories=["A", "tie", "B"])
    with pytest.raises(ValueError, match="no calibration items"):
        build_categorical_report(empty)
    with pytest.raises(ValueError, match="missing"):
        build_categorical_report(counts, scores={"A": 1, "B": 0}, warn=False)
    with pytest.raises(ValueError, match="method must be one of"):
        build_categorical_report(counts, method="exact", warn=False)


# ----------------------------------------------------------------------------- hostile names

SCRIPT = "<script>alert(1)</script>"
PIPE = "a|b\nc"
MATH = "$\\frac{a}{$"


@pytest.fixture(scope="module")
def hostile():
    counts = CategoricalCounts.from_counts(
        test=[[[300, 200, 500]], [[400, 100, 500]]],
        calibration=[[80, 15, 5], [10, 80, 10], [5, 15, 80]],
        categories=[SCRIPT, PIPE, "$x$"],
        system=[f"<script>{MATH}", "x|y\nz"],
        stratum=[PIPE],
    )
    scores = {SCRIPT: 1, PIPE: 0.5, "$x$": 0}
    return build_categorical_report(
        counts, scores=scores, random_seed=1, warn=False, title=f"Eval {SCRIPT}"
    )


def _render(markdown: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(markdown)


def test_hostile_names_are_text_in_markdown_and_html(hostile):
    md = hostile.to_markdown()
    html = _render(md)
    assert "<script" not in html and "<script" not in hostile.to_html()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # shown literally, as text
    assert "a|b\\nc" in html  # the pipe stays in its cell, the newline is shown escaped
    for line in md.splitlines():
        if line.startswith("| ") and "|---" not in line:
            header = md.splitlines()[md.splitlines().index(line)]
            assert line.count(" | ") >= 1 and "\n" not in header
    # Rows keep the header's number of cells (no | or newline splits a row).
    for block in md.split("\n\n"):
        rows = [r for r in block.splitlines() if r.startswith("|")]
        if rows:
            cells = {len(r.replace("\\|", "").split("|")) for r in rows}
            assert len(cells) == 1, rows
    # The categories need escaping: the columns are named by position, with a legend.
    assert "verdict 1" in md and "1 = “\\<script\\>alert(1)\\</script\\>”" in md
    assert "# Eval \\<script\\>" in md


def test_hostile_names_draw_every_figure(hostile):
    assert set(hostile.figures) == {"confusion", "categories", "scores"}
    tables = {k: hostile.tables[k] for k in ("confusion", "categories", "scores")}
    # Redraw: a $ in a name would raise in mathtext while the figure is saved.
    out = draw_categorical_figures(tables, [SCRIPT, PIPE, "$x$"], (0.0, 1.0))
    assert all(len(png) > 1000 for png in out.values())
    assert plain_label(MATH) == "\\$\\frac{a}{\\$"


# ----------------------------------------------------------------------------- with a fit


def _synthetic_fit(counts, scores, calibration="separate", chains=4, draws=250, seed=0):
    """A CategoricalFit whose posterior draws are made with numpy, not sampled.

    The report only reads a fit through its methods; these draws (θ from Dirichlet(test + 1),
    confusion rows from Dirichlet(calibration + 1), p = Cᵀθ) are independent, so the sampler
    diagnostics pass, and every number of the report can be checked against the fit's own
    summary, compare and ppc without compiling a model.
    """
    from bayesjudge.models.categorical import CategoricalFit, categorical_model_config

    config = categorical_model_config(counts, calibration, None, "free", None, scores)
    rng = np.random.default_rng(seed)
    test = counts.ds["test"].transpose("system", "stratum", "category").values
    cal = counts.ds["calibration"].transpose("system", "stratum", "truth", "verdict").values
    if calibration != "separate":
        cal = cal.sum((0, 1))

    def dirichlet(alpha):
        g = rng.gamma(alpha, size=(chains, draws, *alpha.shape))
        return g / g.sum(-1, keepdims=True)

    theta = dirichlet(test + 1.0)
    confusion = dirichlet(cal + 1.0)
    groups = ("system", "stratum") if calibration == "separate" else ()
    full = (
        confusion
        if groups
        else np.broadcast_to(confusion[:, :, None, None], (*theta.shape[:4], *confusion.shape[-2:]))
    )
    p = np.einsum("cdgstv,cdgst->cdgsv", full, theta)
    coords = {
        "system": counts.systems,
        "stratum": counts.strata,
        "category": counts.categories,
        "truth": counts.categories,
        "verdict": counts.categories,
    }
    cd = ("chain", "draw")
    posterior = xr.Dataset(
        {
            "theta": ((*cd, "system", "stratum", "category"), theta),
            "confusion": ((*cd, *groups, "truth", "verdict"), confusion),
            "p": ((*cd, "system", "stratum", "category"), p),
        },
        coords=coords,
    )
    observed = xr.Dataset(
        {
            "test": (("system", "stratum", "category"), test),
            "calibration": (
                ("system", "stratum", "truth", "verdict"),
                counts.ds["calibration"].transpose("system", "stratum", "truth", "verdict").values,
            ),
        },
        coords=coords,
    )
    tree = xr.DataTree.from_dict(
        {
            "posterior": posterior,
            "sample_stats": xr.Dataset({"diverging": (cd, np.zeros((chains, draws), bool))}),
            "observed_data": observed,
            "counts": counts.ds,
        }
    )
    settings = {
        "draws": draws,
        "tune": 0,
        "chains": chains,
        "random_seed": seed,
        "target_accept": 0.9,
    }
    return CategoricalFit(tree, {**config, **settings})


@pytest.fixture(scope="module")
def fitted(counts):
    fit = _synthetic_fit(counts.sel(system=["x", "z"]), SCORES)
    return fit, build_categorical_report(fit=fit, random_seed=2, warn=False)


def test_fit_numbers_equal_summary_compare_and_ppc(counts, fitted):
    fit, report = fitted
    summary = fit.summary(ci_prob=0.95)
    cats = report.tables["categories"]
    row = _pick(cats, system="z", stratum="s2", category="tie")
    at = summary.sel(system="z", stratum="s2", category="tie")
    assert row["bayes"] == float(at["theta"])
    assert [row["bayes_lower"], row["bayes_upper"]] == at["theta_ci"].values.tolist()
    row = _pick(report.tables["scores"], system="x", stratum="s1")
    at = summary.sel(system="x", stratum="s1")
    assert row["bayes"] == float(at["score"])
    assert [row["bayes_lower"], row["bayes_upper"]] == at["score_ci"].values.tolist()
    conf = report.tables["confusion"]
    row = _pick(conf, system="x", stratum="s2", truth="B", method="Bayesian")
    at = summary["confusion"].sel(system="x", stratum="s2", truth="B")
    assert [row["c0"], row["c1"], row["c2"]] == at.values.tolist()
    cmp = fit.compare(ci_prob=0.95)
    diff = report.tables["score_difference"]
    for pair in cmp["pair"].values:
        row = _pick(diff, pair=pair, stratum="s1")
        at = cmp.sel(pair=pair, stratum="s1")
        assert row["bayes_difference"] == float(at["mean"])
        assert row["prob_greater"] == float(at["prob_greater"])
    ppc = fit.ppc(random_seed=2)
    table = report.tables["ppc"]
    row = _pick(table, variable="calibration", system="z", stratum="s1", truth="tie")
    assert row["discrepancy_p"] == float(
        ppc.discrepancy_p["calibration"].sel(system="z", stratum="s1", truth="tie")
    )
    row = _pick(table, variable="test", system="x", stratum="s2")
    assert row["discrepancy_p"] == float(ppc.discrepancy_p["test"].sel(system="x", stratum="s2"))
    assert row["observed"] == 1000


def test_fit_bottom_line_uses_posterior_draws(counts, fitted):
    fit, report = fitted
    line = report.tables["bottom_line"]
    draws = fit.score_draws()
    assert len(line) == 4  # two systems in each of two strata
    for stratum in counts.strata:
        rows = line[line["stratum"] == stratum]
        mean = draws.sel(stratum=stratum).mean(("chain", "draw")).to_series()
        assert rows["system"].tolist() == mean.sort_values(ascending=False).index.tolist()
        first, second = rows.iloc[0]["system"], rows.iloc[1]["system"]
        diff = (
            draws.sel(system=first, stratum=stratum) - draws.sel(system=second, stratum=stratum)
        ).values.ravel()
        assert rows.iloc[0]["prob_greater"] == np.mean(diff > 0)
        assert rows.iloc[0]["next_difference"] == pytest.approx(diff.mean(), rel=1e-12)
        settled = "yes" if np.mean(diff > 0) >= 0.95 else "no"
        assert rows.iloc[0]["settled"] == settled
    md = report.to_markdown()
    assert "0 divergences in 1000 draws" in md and "P(above the next)" in md
    assert "Posterior predictive check" in md


def test_fit_with_pooled_confusion_and_counts_check(counts):
    small = counts.sel(system=["x", "y"], stratum="s1")
    fit = _synthetic_fit(small, SCORES, calibration="shared")
    report = build_categorical_report(small, fit=fit, random_seed=1, warn=False, ppc=False)
    conf = report.tables["confusion"]
    bayes = conf[conf["method"] == "Bayesian"]
    assert len(bayes) == 3 and set(bayes["system"]) == {"(shared)"}
    assert "ppc" not in report.tables and "ppc=False" in report.to_markdown()
    other = CategoricalCounts.from_counts(
        test=[1, 2, 3], calibration=[[5, 0, 0], [0, 5, 0], [0, 0, 5]], categories=["A", "tie", "B"]
    )
    with pytest.raises(ValueError, match="counts differ"):
        build_categorical_report(other, fit=fit)


@pytest.mark.slow
def test_report_of_a_sampled_fit(counts):
    small = counts.sel(system=["x", "y"], stratum="s1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bj.BayesJudgeWarning)  # tiny draws: ESS warnings
        fit = bj.fit(small, scores=SCORES, draws=100, tune=100, chains=2, random_seed=1)
        report = build_categorical_report(fit=fit, random_seed=1)
    summary = fit.summary(ci_prob=0.95)
    row = _pick(report.tables["scores"], system="x", stratum="s1")
    assert row["bayes"] == float(summary["score"].sel(system="x", stratum="s1"))
    assert "ppc" in report.tables and len(report.tables["ppc"]) == 2 + 2 * 3
    assert {r.code for r in report.diagnoses} <= {"ConvergenceWarning", "ppc_misfit"}
    assert "Sampler:" in report.to_markdown()


def test_build_report_dispatches_categorical_counts(counts):
    got = build_report(counts, scores=SCORES, random_seed=3, warn=False)
    ref = build_categorical_report(counts, scores=SCORES, random_seed=3, warn=False)
    assert [s.key for s in got.sections] == list(CATEGORICAL_SECTIONS)
    pd.testing.assert_frame_equal(got.tables["categories"], ref.tables["categories"])
    with pytest.raises(ValueError, match="target_width applies to binary counts"):
        build_report(counts, scores=SCORES, target_width=0.1)
    binary = bj.simulate_counts(0.6, 0.85, 0.9, n=100, m0=50, m1=50, random_seed=1)
    with pytest.raises(ValueError, match="scores= is for K-category counts"):
        build_report(binary, scores=SCORES)


def test_categorical_fit_saves_loads_through_bj_load_and_refuses_edits(counts, tmp_path):
    fit = _synthetic_fit(counts, SCORES)
    path = fit.save(tmp_path / "fit.nc")
    loaded = bj.load(path)  # dispatches on the file's format to load_categorical
    assert type(loaded).__name__ == "CategoricalFit"
    xr.testing.assert_identical(loaded.posterior, fit.posterior)
    assert loaded.counts.ds.equals(fit.counts.ds)
    report = loaded.report(tmp_path / "report", ppc=False, warn=False, random_seed=1)
    assert (tmp_path / "report" / "report.html").exists() and report.paths
    # An edited posterior is refused (content digest), as for binary fits.
    with xr.open_datatree(path, engine="h5netcdf") as opened:
        tree = opened.load()
    tree["posterior"]["theta"] = tree["posterior"]["theta"] * 0 + 0.5
    edited = tmp_path / "edited.nc"
    tree.to_netcdf(edited, engine="h5netcdf")
    with pytest.raises(ValueError, match="was changed after it was saved"):
        bj.load(edited)
    truncated = tmp_path / "truncated.nc"
    truncated.write_bytes(path.read_bytes()[:2000])
    with pytest.raises(ValueError, match="not a readable netCDF file"):
        bj.load(truncated)
