"""Hostile inputs to the report's bottom line, figures and number cells.

Each test failed before the fix it guards: a binary system without an estimate was ranked,
the confusion heat map of K > 7 categories had no scale and drew unlabelled truth rows like
zeros, scores near ±1e308 overflowed the score figure's axis, and numbers of 1e300 were
printed with 301 digits.
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure

import bayesjudge as bj
from bayesjudge._text import fmt_interval, fmt_number
from bayesjudge.data import CategoricalCounts
from bayesjudge.report import build_report
from bayesjudge.report.categorical import build_categorical_report
from bayesjudge.warnings import SmallSampleWarning

# ----------------------------------------------------------------------------- binary ranks


def _counts_with_a_blank_system(blank: str) -> bj.JudgeCounts:
    """Three systems; "b" has no test items (``"test"``) or no truly incorrect ones labelled."""
    n, k, m0, tn = [100, 100, 100], [80, 50, 40], [50, 50, 50], [45, 45, 45]
    if blank == "test":
        n[1] = k[1] = 0
    else:
        m0[1] = tn[1] = 0
    return bj.JudgeCounts.from_counts(
        n=n, k=k, m0=m0, tn=tn, m1=[50] * 3, tp=[45] * 3, system=["a", "b", "c"]
    )


@pytest.mark.parametrize("blank", ["test", "calibration"])
def test_binary_system_without_an_estimate_gets_no_rank(blank):
    # Before: "b" (θ̂ NaN: no test items, or q0 unknown) was ranked 3 in the bottom line.
    counts = _counts_with_a_blank_system(blank)
    with pytest.warns(SmallSampleWarning):
        report = build_report(counts, random_seed=1, n_resamples=200)
    table = report.tables["bottom_line"]
    assert table["system"].tolist() == ["a", "c", "b"]  # best first (0.875, 0.375), NaN last
    assert table["rank"].tolist() == [1, 2, "—"]
    assert math.isnan(table["theta"].iloc[2])
    markdown = report.to_markdown()
    assert "| — | b | — |" in markdown and "| 3 | b |" not in markdown
    html = report.to_html()
    assert re.findall(r"<tr><td[^>]*>([^<]*)</td><td[^>]*>([abc])</td>", html)[:3] == [
        ("1", "a"),
        ("2", "c"),
        ("—", "b"),
    ]


def test_binary_nan_system_listed_last_whatever_its_position(tmp_path, run_cli):
    # The CLI report (`bayesjudge report`) of item tables where system "a" (first in the
    # table) has no truly incorrect calibration item: unranked and listed last.
    test, cal = bj.simulate_items(
        [0.6, 0.8], 0.85, 0.9, n=60, m0=30, m1=30, system=["a", "b"], random_seed=4
    )
    cal = cal[~((cal["system"] == "a") & (cal["human"] == 0))]
    test.drop(columns="truth").to_csv(tmp_path / "test.csv", index=False)
    cal.to_csv(tmp_path / "cal.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallSampleWarning)  # the empty-calibration warning
        code, _, err = run_cli(
            ["report", "--test", str(tmp_path / "test.csv"), "--calibration",
             str(tmp_path / "cal.csv"), "--system", "system", "--method", "none",
             "--n-resamples", "200", "--seed", "1", "--out", str(tmp_path / "out")]
        )  # fmt: skip
    assert code == 0, err
    markdown = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    bottom = markdown[markdown.index("## The bottom line") :]
    assert re.search(r"^\| 1 \| b \|", bottom, flags=re.M)
    assert re.search(r"^\| — \| a \| — \|", bottom, flags=re.M)


# ----------------------------------------------------------------------------- figures


@pytest.fixture
def drawn(monkeypatch):
    """Every matplotlib Figure saved while the test runs, in order."""
    figures = []
    save = Figure.savefig

    def record(self, *args, **kwargs):
        figures.append(self)
        return save(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", record)
    return figures


def _confusion(figures):
    """The confusion heat map: the figure whose axes are labelled "judge verdict"."""
    (figure,) = [f for f in figures if any(a.get_xlabel() == "judge verdict" for a in f.axes)]
    return figure


def _unlabelled_truth(k: int) -> CategoricalCounts:
    """K categories, two systems, shared calibration in which truth "g2" has no items."""
    calibration = np.eye(k, dtype=int) * 10 + 1
    calibration[2] = 0
    return CategoricalCounts.from_counts(
        [[20] * k, [10] * k], calibration.tolist(), categories=[f"g{i}" for i in range(k)],
        system=["x", "y"],
    )  # fmt: skip


@pytest.mark.parametrize("k", [12, 4])
def test_confusion_figure_has_a_scale_and_marks_unlabelled_rows(k, drawn):
    # Before: for K > 7 no cell had a number and there was no colour bar; the NaN row of an
    # unlabelled truth was drawn white, like P = 0.
    with pytest.warns(SmallSampleWarning, match=r"\(truth \['g2'\]\)"):
        build_categorical_report(_unlabelled_truth(k), random_seed=1)
    figure = _confusion(drawn)
    colourbars = [a for a in figure.axes if a.get_ylabel() == "P(verdict | truth)"]
    annotated = any(t.get_text() == "—" for a in figure.axes for t in a.texts)
    # Numbers in the cells (K ≤ 7), else a colour bar: exactly one of the two.
    assert (len(colourbars) == 1) == (k > 7)
    assert annotated == (k <= 7)
    heat = [a for a in figure.axes if a.get_xlabel() == "judge verdict"]
    assert len(heat) == 2
    for axis in heat:
        (image,) = axis.get_images()
        assert np.isnan(image.get_array().filled(np.nan)[2]).all()  # the unlabelled row
        assert image.cmap.get_bad() == pytest.approx(to_rgba("lightgrey"))
        assert image.cmap(0.0) != pytest.approx(to_rgba("lightgrey"))  # not a shade of P
    (legend,) = figure.legends
    assert [t.get_text() for t in legend.get_texts()] == ["no labelled items"]


def test_confusion_figure_without_missing_rows_has_no_legend(drawn):
    counts = CategoricalCounts.from_counts(
        [20] * 9, (np.eye(9, dtype=int) * 10 + 1).tolist(), categories=list("abcdefghi")
    )
    build_categorical_report(counts, random_seed=1)
    figure = _confusion(drawn)
    assert figure.legends == []
    assert [a.get_ylabel() for a in figure.axes].count("P(verdict | truth)") == 1


SCORE_COUNTS = CategoricalCounts.from_counts(
    [[30, 10, 60], [20, 20, 60]], [[18, 1, 1], [2, 6, 2], [1, 1, 18]],
    categories=["A", "tie", "B"], system=["x", "y"],
)  # fmt: skip


@pytest.mark.parametrize("big", [1e308, np.finfo(float).max])
def test_score_figure_of_scores_near_the_largest_float(big, drawn):
    # Before: the axis padding 0.02 * (high - low) overflowed to inf and matplotlib raised
    # "Axis limits cannot be NaN or Inf".
    report = build_categorical_report(
        SCORE_COUNTS, scores={"A": big, "tie": 0.0, "B": -big}, random_seed=1
    )
    assert report.figures["scores"].startswith(b"\x89PNG")
    (figure,) = [f for f in drawn if any("mean score" in a.get_xlabel() for a in f.axes)]
    (axis,) = [a for a in figure.axes if a.get_xlabel()]
    assert axis.get_xlabel() == "mean score (× 1e+308)"
    left, right = axis.get_xlim()
    limit = big / 1e308  # [-limit, limit] widened by 2 % of its width on each side
    assert (left, right) == pytest.approx((-limit * 1.04, limit * 1.04), rel=1e-12)
    # The corrected scores drawn are the table's, in units of 1e308.
    scores = report.tables["scores"].set_index("system")["corrected"]
    drawn_x = sorted(float(x) for line in axis.get_lines() for x in np.atleast_1d(line.get_xdata()))
    for system in ("x", "y"):
        assert any(x == pytest.approx(scores[system] / 1e308, rel=1e-12) for x in drawn_x)


def test_score_figure_of_ordinary_scores_keeps_its_axis(drawn):
    build_categorical_report(SCORE_COUNTS, scores={"A": 1, "tie": 0.5, "B": 0}, random_seed=1)
    (figure,) = [f for f in drawn if any("mean score" in a.get_xlabel() for a in f.axes)]
    (axis,) = [a for a in figure.axes if a.get_xlabel()]
    assert axis.get_xlabel() == "mean score"
    assert axis.get_xlim() == pytest.approx((-0.02, 1.02), rel=0, abs=1e-15)


# ----------------------------------------------------------------------------- numbers


def test_huge_numbers_in_scientific_notation():
    # Before: f"{1e300:.3f}" wrote 301 digits.
    assert fmt_number(1e300) == "1.000e+300"
    assert fmt_number(-1e300) == "-1.000e+300"
    assert fmt_number(1e6) == "1.000e+06"
    assert fmt_number(np.float64(1_234_567), digits=0) == "1.235e+06"  # not "1e+06"
    assert fmt_number(1.23456789e7, digits=5) == "1.23457e+07"
    assert fmt_interval(-1e308, 1e308) == "[-1.000e+308, 1.000e+308]"
    assert fmt_interval(0.0, 1e300) == "[0.000, 1.000e+300]"
    # NaN and None read "—", infinities as before.
    assert fmt_number(float("nan")) == fmt_number(None) == "—"
    assert (fmt_number(math.inf), fmt_number(-math.inf)) == ("inf", "-inf")
    assert fmt_interval(-math.inf, math.inf) == "[-inf, inf]"
    assert fmt_interval(math.nan, 1e300) == "—"


def test_ordinary_numbers_print_as_before():
    # Below 10⁶ the cells are the fixed-point text they always were (the old formula).
    rng = np.random.default_rng(0)
    values = np.concatenate([
        rng.uniform(-1, 1, 500), rng.uniform(-1e6, 1e6, 500), 10.0 ** rng.uniform(-12, 6, 500),
        [0.0, -0.0, 0.0005, 999_999.999, -999_999.9996, 1e-300, 5e-324],
    ])  # fmt: skip
    values = values[np.abs(values) < 1e6]
    for digits in (0, 2, 3):
        assert [fmt_number(v, digits) for v in values] == [f"{v:.{digits}f}" for v in values]
    pairs = values.reshape(-1, 2) if len(values) % 2 == 0 else values[1:].reshape(-1, 2)
    assert [fmt_interval(a, b) for a, b in pairs] == [f"[{a:.3f}, {b:.3f}]" for a, b in pairs]


def test_cli_estimate_prints_a_huge_score_compactly(tmp_path, run_cli):
    # `bayesjudge estimate --scores A=1e300,tie=0,B=0` printed the score with 301 digits.
    labels = ["A", "tie", "B"]
    test = pd.DataFrame({"judge": np.repeat(labels, [60, 20, 20])})
    cal = pd.DataFrame({
        "judge": np.repeat(labels * 3, [18, 1, 1, 2, 6, 2, 1, 1, 18]),
        "human": np.repeat(labels, [20, 10, 20]),
    })  # fmt: skip
    test.to_csv(tmp_path / "test.csv", index=False)
    cal.to_csv(tmp_path / "cal.csv", index=False)
    code, out, err = run_cli(
        ["estimate", "--test", str(tmp_path / "test.csv"), "--calibration",
         str(tmp_path / "cal.csv"), "--categories", "A,tie,B", "--scores", "A=1e300,tie=0,B=0"]
    )  # fmt: skip
    assert code == 0, err
    counts = CategoricalCounts.from_frames(
        str(tmp_path / "test.csv"), str(tmp_path / "cal.csv"), categories=labels
    )
    score = float(bj.estimate(counts, scores={"A": 1e300, "tie": 0, "B": 0})["score"].squeeze())
    assert 1e299 < score < 1e300
    assert f"{score:.3e}" in out
    assert re.search(r"\d{20}", out) is None  # no number spelt with hundreds of digits


def test_bayesian_test_set_theta_of_no_items_gets_no_rank():
    # The test-set θ of a system without test items is NaN in the fit too: unranked, last.
    counts = _counts_with_a_blank_system("test")
    fit = bj.fit(counts, method="exact", estimand="test-set", random_seed=1)
    # Fit.compare gave P(θ_a > θ_b) = 0 for a pair with b (NaN > 0 is False) and numpy's
    # "All-NaN slice" warning: now NaN, quietly, and defined for the other pair.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        diff = fit.compare()  # theta_test, the estimand's variable
    prob = diff["prob_greater"].squeeze()
    has_b = (diff["first"] == "b") | (diff["second"] == "b")
    assert bool(prob.where(has_b).isnull().all()) and bool(prob.where(~has_b, 0).notnull().all())
    assert int(has_b.sum()) == 2 and int((~has_b).sum()) == 1
    report = build_report(fit=fit, random_seed=1, n_resamples=200, ppc=False, warn=False)
    table = report.tables["bottom_line"]
    assert table["system"].tolist() == ["a", "c", "b"]
    assert table["rank"].tolist() == [1, 2, "—"]
    assert "| — | b | — |" in report.to_markdown()


@pytest.mark.parametrize("blank", ["test", "calibration"])
def test_binary_ranking_line_leaves_out_systems_without_an_estimate(blank):
    # Before: "Ranking: “a” > “c” > “b” — **not settled** (1 of 2 steps): “c” over “b”".
    with pytest.warns(SmallSampleWarning):
        report = build_report(_counts_with_a_blank_system(blank), random_seed=1, n_resamples=200)
    markdown = report.to_markdown()
    assert "- Ranking: “a” > “c” — **settled** (every step); no estimate for “b”\n" in markdown
