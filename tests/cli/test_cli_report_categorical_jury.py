"""``bayesjudge report --judges COL --categories ...``: the report of several judges' K-category
verdicts on the command line, its numbers against the Python API, and its refusals."""

from __future__ import annotations

import numpy as np
import pytest

from bayesjudge._text import fmt_interval
from bayesjudge.data import CategoricalJuryCounts
from bayesjudge.report import build_report
from bayesjudge.simulate import simulate_categorical_jury_items

SCORES = {"A": 1, "tie": 0.5, "B": 0}


@pytest.fixture(scope="module")
def k_csv(tmp_path_factory):
    conf = np.array([[[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]]] * 3)
    frame = simulate_categorical_jury_items(
        [0.4, 0.2, 0.4], conf, 300, 60, design="random", categories=["A", "tie", "B"],
        judges=["gpt", "claude", "llama"], random_seed=3,
    )  # fmt: skip
    path = tmp_path_factory.mktemp("k_report") / "k.csv"
    frame.drop(columns="truth").to_csv(path, index=False)
    return path


def _args(path, *extra):
    return ["report", "--test", str(path), "--judges", "judge_name", "--item", "item",
            "--judge", "verdict", "--categories", "A,tie,B", *extra]  # fmt: skip


def test_closed_form_report_equals_the_python_api(k_csv, tmp_path, run_cli):
    out = tmp_path / "rep"
    code, stdout, err = run_cli(
        _args(
            k_csv,
            "--method",
            "none",
            "--scores",
            "A=1,tie=0.5,B=0",
            "--seed",
            "3",
            "--out",
            str(out),
        )
    )
    assert code == 0, err
    assert "report: 3 judges, categories (K = 3" in stdout and "no Bayesian fit" in stdout
    assert "seed 3 (repeat with --seed 3)" in stdout
    counts = CategoricalJuryCounts.from_frames(
        k_csv, judges="judge_name", item="item", judge="verdict", categories=["A", "tie", "B"],
    )  # fmt: skip
    expected = build_report(counts, scores=SCORES, alpha=1 - 0.95, random_seed=3, warn=False)
    text = (out / "report.md").read_text(encoding="utf-8")
    assert text == expected.to_markdown()
    row = expected.tables["theta"].iloc[0]
    assert fmt_interval(row["jury_lower"], row["jury_upper"]) in text
    assert "jury score: Dawid–Skene [Wald]" in text
    assert sorted(p.name for p in out.iterdir()) == [
        "confusion.png", "report.html", "report.md", "theta_forest.png",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--covariates", "x"], "Drop --covariates for the jury report"),
        (["--method", "none", "--dependence", "item"], "--method none does not fit"),
        (["--method", "none", "--pool-judges"], "--method none does not fit"),
        (["--target-width", "0.1"], "--target-width cannot be combined with --judges"),
        (["--prior-theta", "2"], "--prior-theta cannot be combined with --judges"),
        (["--confusion", "ordinal"], "--confusion cannot be combined with --judges"),
        (["--method", "exact"], "no jury model"),
        (["--claim", "a", "--over", "b"], "drop them with --judges"),
        (["--scores", "A=1,B=0"], "no score for"),
    ],
)
def test_refusals_are_clear_and_write_nothing(k_csv, tmp_path, run_cli, extra, message):
    out = tmp_path / "r"
    method = [] if "--method" in extra else ["--method", "none"]  # no fit: the refusal is at once
    code, _, err = run_cli(_args(k_csv, *method, *extra, "--out", str(out)))
    assert code == 2 and message in err and "Traceback" not in err, err
    assert not out.exists()


@pytest.mark.slow
def test_report_with_the_joint_model(k_csv, tmp_path, run_cli):
    out = tmp_path / "fit"
    code, stdout, err = run_cli(
        _args(
            k_csv,
            "--scores",
            "A=1,tie=0.5,B=0",
            "--seed",
            "2",
            "--draws",
            "200",
            "--tune",
            "200",
            "--chains",
            "2",
            "--no-progress",
            "--out",
            str(out),
        )
    )
    assert code == 0, err
    assert "joint model of the judges" in stdout
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "jury θ: Bayesian mean [ETI]" in text and "jury score: Bayesian mean [ETI]" in text
    assert "Pairwise agreement: observed against the model's replicates." in text
    assert err.count("Sampler diagnostics") <= 1  # printed once, by the report
