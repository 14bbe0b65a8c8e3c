"""The report of several judges' K-category verdicts (CategoricalJuryCounts): numbers, files,
the fit's parts, hostile names.

References: the report's θ and score columns against ``bj.estimate`` of the same counts (the
estimators the report names), the narrowest single judge recomputed from every judge's own
``bj.estimate``, each judge's accuracy and Cohen's κ with the humans recomputed by hand from
the pattern counts (the diagonal of the judge × human table; κ = (p_o − p_e)/(1 − p_e)), and
the Bayesian score from the posterior draws of θ.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import bayesjudge as bj
from bayesjudge.data import CategoricalJuryCounts
from bayesjudge.report import build_categorical_jury_report, build_report, write_report
from bayesjudge.report.categorical_jury import CATEGORICAL_JURY_SECTIONS
from bayesjudge.simulate import preference_confusion, simulate_categorical_jury

SCORES = {"A": 1, "tie": 0.5, "B": 0}
SCRIPT = "<script>alert(1)</script>"
MATH = "$\\frac{a}{$"
CONTROL = "line\nbreak"


def _counts(judges=("gpt", "claude", "llama"), categories=("A", "tie", "B"), system=None,
            seed=1, m=(20, 10, 20)):  # fmt: skip
    conf = np.stack([preference_confusion(a, tie_rate=0.1) for a in (0.8, 0.7, 0.75)])
    return simulate_categorical_jury(
        [0.4, 0.2, 0.4], conf, n=[400, 300] if system else 400, m=list(m),
        categories=list(categories), judges=list(judges), system=system, random_seed=seed,
    )  # fmt: skip


@pytest.fixture(scope="module")
def counts():
    return _counts(system=["s1", "s2"])


@pytest.fixture(scope="module")
def report(counts):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build_report(counts, scores=SCORES, random_seed=1)


def test_sections_and_closed_forms_equal_the_estimators(counts, report):
    assert [s.key for s in report.sections] == list(CATEGORICAL_JURY_SECTIONS)
    theta = report.tables["theta"]
    assert len(theta) == 2 * 3  # two systems × three categories
    for column, method in (("jury", "dawid-skene"), ("plurality", "plurality")):
        expected = bj.estimate(counts, method=method, scores=SCORES)
        for _, row in theta.iterrows():
            one = expected.sel(system=row["system"], stratum=row["stratum"],
                               category=row["category"])  # fmt: skip
            assert row[column] == pytest.approx(float(one["estimate"]), abs=1e-12)
            lo, hi = one["ci"].values
            assert (row[f"{column}_lower"], row[f"{column}_upper"]) == pytest.approx((lo, hi))
        for _, row in report.tables["scores"].iterrows():
            one = expected.sel(system=row["system"], stratum=row["stratum"])
            assert row[column] == pytest.approx(float(one["score"]), abs=1e-12)
    assert "Not run" in report.to_markdown()  # no fit: the independence check is not run
    assert "bayes" not in theta


def test_narrowest_single_judge_is_recomputed_from_each_judge(counts, report):
    theta = report.tables["theta"]
    for system in counts.systems:
        widths, own = {}, {}
        for judge in counts.judges:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = bj.estimate(counts.for_judge(judge)).sel(system=system).squeeze()
            ci = est["ci"].values
            widths[judge] = float((ci[:, 1] - ci[:, 0]).mean())
            own[judge] = est["estimate"].values
        best = min(widths, key=widths.get)
        rows = theta[theta["system"] == system]
        assert set(rows["best_judge"]) == {best}
        np.testing.assert_allclose(rows["single"].to_numpy(float), own[best], atol=1e-12)


def test_judge_accuracy_and_kappa_recomputed_by_hand(counts, report):
    judges = report.tables["judges"]
    lab = counts.labelled.sel(system="s1").squeeze().transpose("truth", "pattern").values
    for j, judge in enumerate(counts.judges):
        said = counts.verdicts[:, j]
        table = np.array([[lab[t, said == v].sum() for v in range(3)] for t in range(3)])
        n = table.sum()
        p_o = np.trace(table) / n
        p_e = (table.sum(1) / n) @ (table.sum(0) / n)
        row = judges[(judges["system"] == "s1") & (judges["judge"] == judge)].iloc[0]
        assert row["labelled_graded"] == 50
        assert row["accuracy"] == pytest.approx(p_o, abs=1e-12)
        assert row["kappa"] == pytest.approx((p_o - p_e) / (1 - p_e), abs=1e-12)
    conf = report.tables["confusion"]
    labelled = conf[(conf["method"] == "labelled items") & (conf["system"] == "s1")]
    assert len(labelled) == 3 * 3  # judges × truths
    rows = labelled[["c0", "c1", "c2"]].to_numpy(float)
    np.testing.assert_allclose(rows.sum(axis=1), 1.0)
    assert len(report.tables["agreement"]) == 2 * 3  # two systems × three pairs


def test_written_files_and_dispatch(counts, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = write_report(counts, tmp_path / "out", random_seed=2)
    assert sorted(p.name for p in report.paths.values()) == [
        "confusion.png", "report.html", "report.md", "theta_forest.png",
    ]  # fmt: skip
    assert "scores" not in report.tables  # no scores given, none reported
    for name in ("confusion", "theta_forest"):
        assert (tmp_path / "out" / f"{name}.png").stat().st_size > 0
    with pytest.raises(ValueError, match="target_width"):
        build_report(counts, target_width=0.05)
    with pytest.raises(TypeError, match="CategoricalJuryCounts"):
        build_categorical_jury_report(counts.for_judge("gpt"))
    with pytest.raises(ValueError, match="scores must"):
        build_report(counts, scores={"A": 1})


def test_without_labelled_items_no_judge_alone_is_corrected():
    unlabelled = CategoricalJuryCounts.from_counts(
        ["000", "111", "222", "001", "121", "220", "010"], test=[120, 60, 150, 30, 20, 25, 15],
        judges=["a", "b", "c"], categories=["A", "tie", "B"],
    )  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = build_report(unlabelled, random_seed=1)
    theta = report.tables["theta"]
    assert theta["best_judge"].isna().all() and theta["single"].isna().all()
    assert np.isfinite(theta["jury"]).all()
    assert "No labelled items" in report.to_markdown()
    assert any("No labelled items" in str(w.message) for w in caught)
    assert report.diagnoses  # the warnings are the report's diagnoses too


def _render(markdown: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(markdown)


def test_hostile_names_come_out_literally(tmp_path):
    hostile = _counts(judges=("gpt", SCRIPT, MATH), categories=("A", f"{CONTROL}|tie", "B$x$"),
                      system=[SCRIPT, "s|2"])  # fmt: skip
    scores = {"A": 1, f"{CONTROL}|tie": 0.5, "B$x$": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = write_report(hostile, tmp_path / "h", scores=scores, random_seed=1,
                              title=f"Eval of {SCRIPT}")  # fmt: skip
    md = (tmp_path / "h" / "report.md").read_text(encoding="utf-8")
    html = _render(md)
    assert "<script" not in html and html.count("<img") == len(report.figures) == 2
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "line\\nbreak|tie" in html  # control characters shown escaped, the bar as text
    for line in md.splitlines():
        if line.startswith("| ") and "|---" not in line:
            assert not line.rstrip().endswith("\\|"), line
    page = (tmp_path / "h" / "report.html").read_text(encoding="utf-8")
    assert "<script>alert" not in page
    # Unsafe category names: the headers show positions, and the text names them.
    assert "verdict 2" in md and "Columns “verdict 1” … “verdict 3”" in md


# --------------------------------------------------------------------------- with a fit


@pytest.fixture(scope="module")
def fitted():
    counts = _counts(seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = bj.fit(counts, scores=SCORES, draws=100, tune=100, chains=2, random_seed=4)
    return fit


def test_report_of_a_fit_shows_its_posterior_and_check(fitted, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = write_report(fitted, tmp_path / "fit", random_seed=5)
    theta = report.tables["theta"]
    summary = fitted.summary()
    np.testing.assert_allclose(
        theta["bayes"].to_numpy(float), summary["theta"].values.ravel(), atol=1e-12
    )
    # The score (the fit's own scores by default) from the posterior draws of θ.
    draws = (fitted.posterior["theta"].values * np.array([1, 0.5, 0])).sum(-1).ravel()
    row = report.tables["scores"].iloc[0]
    assert row["bayes"] == pytest.approx(draws.mean(), abs=1e-12)
    assert row["bayes_lower"] == pytest.approx(np.quantile(draws, 0.025), abs=1e-12)
    assert {"ppc", "ppc_pooled"} <= set(report.tables)
    assert len(report.tables["ppc_pooled"]) == 3  # three statistics, one group
    md = report.to_markdown()
    verdict = "**Flagged**" if bool(fitted.ppc(random_seed=5).flagged.any()) else "Not flagged"
    assert verdict in md and "Bayesian fit" in md
    assert (report.tables["confusion"]["method"] == "Bayesian").sum() == 3 * 3
    assert report.settings["model"].startswith("K-category jury")
    with pytest.raises(ValueError, match="counts differ"):
        build_report(_counts(seed=9), fit=fitted)
