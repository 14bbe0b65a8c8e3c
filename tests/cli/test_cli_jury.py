"""``bayesjudge estimate --judges COLUMN``: several judges on the command line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import bayesjudge as bj
from bayesjudge.cli import main
from bayesjudge.data.jury import JuryCounts


@pytest.fixture(scope="module")
def jury_csv(tmp_path_factory):
    rng = np.random.default_rng(11)
    rows = []
    for system in ("s1", "s2"):
        for i in range(150):
            truth = int(rng.random() < 0.6)
            for judge, (q0, q1) in zip(
                ["gpt", "claude", "llama"], [(0.85, 0.9), (0.8, 0.85), (0.7, 0.8)], strict=True
            ):
                said = rng.random() < (q1 if truth else 1 - q0)
                rows.append(
                    {
                        "model": system,
                        "item": i,
                        "grader": judge,
                        "verdict": "yes" if said else "no",
                        "human": truth if i < 40 else None,
                    }
                )
    path = tmp_path_factory.mktemp("jury") / "jury.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _args(path, *extra):
    return ["estimate", "--test", str(path), "--judges", "grader", "--item", "item",
            "--judge", "verdict", "--system", "model", *extra]  # fmt: skip


def test_estimate_judges_json_equals_the_python_api(jury_csv, capsys):
    assert main(_args(jury_csv, "--json")) == 0
    payload = json.loads(capsys.readouterr().out)
    counts = JuryCounts.from_frames(
        jury_csv, judges="grader", item="item", judge="verdict", system="model"
    )
    expected = bj.estimate(counts)
    assert payload["settings"]["method"] == "dawid-skene"
    assert payload["judges"] == ["claude", "gpt", "llama"]
    for row in payload["results"]:
        one = expected.sel(system=row["system"], stratum=row["stratum"])
        assert row["estimate"] == pytest.approx(float(one["estimate"]))
        assert [row["lower"], row["upper"]] == pytest.approx(one["ci"].values.tolist())
        assert row["labelled_items"] == 40 and row["test_items"] == 110


def test_estimate_judges_table_and_per_judge(jury_csv, capsys):
    assert main(_args(jury_csv)) == 0
    out = capsys.readouterr().out
    assert "judges (3): claude, gpt, llama" in out and "dawid-skene" in out
    assert main(_args(jury_csv, "--method", "per-judge")) == 0
    out = capsys.readouterr().out
    assert out.count("llama") == 3  # the header and one row per system


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--method", "lang-reiczigel"], "is a method of one judge"),
        (["--repeats", "epoch"], "cannot be combined with --judges"),
    ],
)
def test_estimate_judges_refusals(jury_csv, capsys, argv, message):
    assert main(_args(jury_csv, *argv)) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_judges_needs_item_and_jury_methods_need_judges(jury_csv, capsys):
    argv = _args(jury_csv)
    argv.remove("--item")
    argv.remove("item")
    assert main(argv) == 2
    assert "give the item id column with --item" in capsys.readouterr().err
    assert main(["estimate", "--test", str(jury_csv), "--method", "majority"]) == 2
    assert "--judges" in capsys.readouterr().err


@pytest.fixture(scope="module")
def covariate_csv(tmp_path_factory):
    rng = np.random.default_rng(12)
    rows = []
    for i in range(200):
        truth = int(rng.random() < 0.6)
        for judge, bias in (("gpt", 0.25), ("claude", 0.0), ("llama", 0.1)):
            for first in (0, 1):
                said = rng.random() < (0.85 if truth else 0.15 + bias * first)
                rows.append({"item": i, "grader": judge, "verdict": int(said),
                             "shown_first": first, "human": truth if i < 50 else None})  # fmt: skip
    path = tmp_path_factory.mktemp("jury_cov") / "rows.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_estimate_covariates_json_equals_the_python_api(covariate_csv, capsys):
    from bayesjudge.data.jury_items import JuryItems
    from bayesjudge.jury_estimate import jury_covariate_estimate

    argv = ["estimate", "--test", str(covariate_csv), "--judges", "grader", "--item", "item",
            "--judge", "verdict", "--covariates", "shown_first", "--json"]  # fmt: skip
    assert main(argv) == 0
    payload = json.loads(capsys.readouterr().out)
    items = JuryItems.from_frames(
        covariate_csv, judges="grader", item="item", judge="verdict", covariates="shown_first"
    )
    expected = jury_covariate_estimate(items)
    assert payload["settings"]["method"] == "covariate-dawid-skene"
    assert payload["results"][0]["estimate"] == pytest.approx(float(expected["estimate"].squeeze()))
    gpt_high = [r for r in payload["judge_quality"] if r["judge"] == "gpt" and r["level"] == "high"]
    assert gpt_high[0]["q0"] == pytest.approx(
        float(expected["q0"].sel(judge="gpt", covariate="shown_first", level="high"))
    )


def test_covariates_refusals(covariate_csv, capsys):
    base = ["estimate", "--test", str(covariate_csv), "--item", "item", "--judge", "verdict"]
    assert main([*base, "--covariates", "shown_first"]) == 2
    assert "name the judge column with --judges" in capsys.readouterr().err
    assert main([*base, "--judges", "grader", "--covariates", "shown_first,"]) == 2
    assert "empty column name" in capsys.readouterr().err
    assert main([*base, "--judges", "grader", "--covariates", "size"]) == 2
    err = capsys.readouterr().err
    assert "'size'" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["fit", "--dependence", "item"], "name the judge column with --judges"),
        (
            ["fit", "--judges", "grader", "--item", "item", "--pool-over", "system"],
            "cannot be combined with --judges",
        ),
        (
            [
                "fit",
                "--judges",
                "grader",
                "--item",
                "item",
                "--covariates",
                "x",
                "--dependence",
                "item",
            ],
            "cannot be combined with --covariates",
        ),
        (["fit", "--covariates", "x", "--item", "item"], "name the judge column with --judges"),
        (
            ["report", "--judges", "grader", "--item", "item", "--method", "exact"],
            "no jury model",
        ),
        (
            ["report", "--judges", "grader", "--item", "item", "--covariates", "x"],
            "Drop --covariates for the jury report",
        ),
    ],
)
def test_fit_and_report_refusals(jury_csv, capsys, argv, message):
    code = main([*argv, "--test", str(jury_csv), "--judge", "verdict"])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


def test_report_judges_closed_form(jury_csv, tmp_path, capsys):
    out = tmp_path / "report"
    argv = ["report", "--test", str(jury_csv), "--judges", "grader", "--item", "item",
            "--judge", "verdict", "--system", "model", "--method", "none", "--out", str(out),
            "--seed", "3"]  # fmt: skip
    assert main(argv) == 0
    assert "3 judges, 2 systems" in capsys.readouterr().out
    text = (out / "report.md").read_text()
    assert "jury θ: Dawid–Skene [Wald]" in text and (out / "theta_forest.png").exists()


@pytest.mark.slow
def test_fit_and_report_judges_with_the_joint_model(jury_csv, tmp_path, capsys):
    base = ["--test", str(jury_csv), "--judges", "grader", "--item", "item", "--judge",
            "verdict", "--system", "model", "--seed", "5", "--draws", "300", "--tune", "300",
            "--chains", "2", "--no-progress"]  # fmt: skip
    saved = tmp_path / "fit.nc"
    assert main(["fit", *base, "--save", str(saved)]) == 0
    out = capsys.readouterr().out
    assert "joint model of 3 judges" in out and "posterior predictive check" in out
    back = bj.load(saved)
    assert back.counts.judges == ["claude", "gpt", "llama"]
    assert main(["report", *base, "--out", str(tmp_path / "rep")]) == 0
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "jury θ: Bayesian mean [ETI]" in text and "Pairwise agreement" in text


def test_estimate_judges_plan_json_equals_the_python_api(jury_csv, capsys):
    from bayesjudge.jury_estimate import jury_plan

    assert main(_args(jury_csv, "--plan", "20,80", "--json")) == 0
    payload = json.loads(capsys.readouterr().out)
    counts = JuryCounts.from_frames(
        jury_csv, judges="grader", item="item", judge="verdict", system="model"
    )
    expected = jury_plan(counts, [20, 80], allocation="proportional")
    assert payload["settings"]["allocation"] == "proportional"  # random design: labels as drawn
    assert len(payload["plan"]) == 4
    for row in payload["plan"]:
        one = expected.sel(system=row["system"], stratum=row["stratum"], budget=row["budget"])
        assert row["best_jury"] == str(one["best_jury"].values)
        assert row["width"] == pytest.approx(float(one["width"].sel(jury=row["best_jury"])))
        assert row["ratio"] == pytest.approx(float(one["ratio"]))
    assert set(payload["widths"]) == set(expected["jury"].values)
    assert main(_args(jury_csv, "--plan", "20,80")) == 0
    out = capsys.readouterr().out
    assert "narrowest jury" in out and "claude+gpt+llama" in out and "Asymptotic" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--plan", "20,x"], "comma-separated label budgets"),
        (["--plan", "1"], "at least 2"),
        (["--plan", "20", "--method", "majority"], "drop --method"),
        (["--plan-items", "100"], "give --plan BUDGETS too"),
    ],
)
def test_estimate_judges_plan_refusals(jury_csv, capsys, argv, message):
    assert main(_args(jury_csv, *argv)) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_plan_needs_judges(jury_csv, capsys):
    argv = ["estimate", "--test", str(jury_csv), "--judge", "verdict", "--plan", "20"]
    assert main(argv) == 2
    assert "--plan compares juries" in capsys.readouterr().err


@pytest.mark.slow
def test_fit_judges_covariates_equals_the_python_api(covariate_csv, capsys):
    import io

    from bayesjudge.data.jury_items import JuryItems

    argv = ["fit", "--test", str(covariate_csv), "--judges", "grader", "--item", "item",
            "--judge", "verdict", "--covariates", "shown_first", "--seed", "5"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "covariate model of 3 judges" in out and "shown_first" in out
    assert "q1 95% interval" in out and "high" in out
    assert main([*argv, "--format", "csv"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    items = JuryItems.from_frames(
        covariate_csv, judges="grader", item="item", judge="verdict", covariates=["shown_first"]
    )
    fit = bj.fit(items, random_seed=5)  # the CLI's defaults: 4 chains of 1000 + 1000
    # Same seed, same draws: the CSV's θ is the API's, at full precision.
    theta = table[table["variable"] == "theta"]["mean"].to_numpy()
    assert theta == pytest.approx(fit.summary()["theta"].values.ravel(), abs=1e-12)


def test_estimate_theta_covariates_json_equals_the_python_api(tmp_path, capsys):
    from bayesjudge.data.jury_items import JuryItems
    from bayesjudge.jury_estimate import jury_covariate_estimate

    rng = np.random.default_rng(13)
    rows = []
    for i in range(300):
        length = rng.normal()
        truth = int(rng.random() < 1 / (1 + np.exp(-(0.3 + length))))
        for judge in ("gpt", "claude", "llama"):
            for first in (0, 1):
                said = rng.random() < (0.85 if truth else 0.15 + 0.1 * first)
                rows.append({"item": i, "grader": judge, "verdict": int(said), "lld": length,
                             "first": first, "human": truth if i < 60 else None})  # fmt: skip
    path = tmp_path / "rows.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    base = ["estimate", "--test", str(path), "--judges", "grader", "--item", "item", "--judge",
            "verdict", "--covariates", "first,lld"]  # fmt: skip
    assert main([*base, "--theta-covariates", "lld", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    items = JuryItems.from_frames(
        path, judges="grader", item="item", judge="verdict", covariates=["first", "lld"],
        theta_covariates=["lld"],
    )  # fmt: skip
    expected = jury_covariate_estimate(items)
    slope = payload["theta_slopes"][0]
    assert slope["theta_covariate"] == "lld"
    assert slope["estimate"] == pytest.approx(float(expected["theta_coef"].squeeze()))
    assert main([*base, "--theta-covariates", "lld"]) == 0
    assert "θ logistic in lld" in capsys.readouterr().out
    assert main([*base, "--theta-covariates", "first"]) == 2  # varies within an item
    err = capsys.readouterr().err
    assert "first" in err and "Traceback" not in err
    argv = [a for a in base if a not in ("--covariates", "first,lld")]
    assert main([*argv, "--theta-covariates", "lld"]) == 2
    assert "give --covariates" in capsys.readouterr().err


@pytest.fixture(scope="module")
def k_jury_csv(tmp_path_factory):
    from bayesjudge.simulate import simulate_categorical_jury_items

    conf = np.array([[[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]]] * 3)
    frame = simulate_categorical_jury_items(
        [0.4, 0.2, 0.4], conf, 300, 60, design="random", categories=["A", "tie", "B"],
        judges=["gpt", "claude", "llama"], random_seed=3,
    )  # fmt: skip
    path = tmp_path_factory.mktemp("k_jury") / "k.csv"
    frame.drop(columns="truth").to_csv(path, index=False)
    return path


def _k_args(path, *extra):
    return ["estimate", "--test", str(path), "--judges", "judge_name", "--item", "item",
            "--judge", "verdict", "--categories", "A,tie,B", *extra]  # fmt: skip


def test_estimate_judges_k_categories_json_equals_the_python_api(k_jury_csv, capsys):
    from bayesjudge.data.categorical_jury import CategoricalJuryCounts

    assert main(_k_args(k_jury_csv, "--scores", "A=1,tie=0.5,B=0", "--json")) == 0
    payload = json.loads(capsys.readouterr().out)
    counts = CategoricalJuryCounts.from_frames(
        k_jury_csv, judges="judge_name", item="item", judge="verdict",
        categories=["A", "tie", "B"],
    )  # fmt: skip
    expected = bj.estimate(counts, scores={"A": 1, "tie": 0.5, "B": 0})
    assert payload["settings"]["categories"] == ["A", "tie", "B"]
    assert len(payload["results"]) == 3
    for row in payload["results"]:
        one = expected.sel(system=row["system"], stratum=row["stratum"], category=row["category"])
        assert row["estimate"] == pytest.approx(float(one["estimate"]))
        assert [row["lower"], row["upper"]] == pytest.approx(one["ci"].values.tolist())
    assert payload["scores"][0]["score"] == pytest.approx(float(expected["score"].squeeze()))
    assert main(_k_args(k_jury_csv, "--method", "per-judge")) == 0
    out = capsys.readouterr().out
    assert "each judge alone" in out and out.count("llama") == 4  # header, 3 categories
    assert main(_k_args(k_jury_csv, "--method", "plurality")) == 0
    assert "plurality" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "drop", "message"),
    [
        ([], True, "name the categories in order with --categories"),
        (["--method", "majority"], False, "not a method of several judges' K-category"),
        (["--scores", "A=1,B=0"], True, "--scores and --ordered belong to K-category"),
        (["--covariates", "x"], False, "covariate model of K-category verdicts"),
    ],
)
def test_estimate_judges_k_categories_refusals(k_jury_csv, capsys, argv, drop, message):
    args = _k_args(k_jury_csv, *argv)
    if drop:
        args = [a for a in args if a not in ("--categories", "A,tie,B")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_report_judges_k_categories_writes_the_report(k_jury_csv, capsys, tmp_path):
    argv = [a if a != "estimate" else "report" for a in _k_args(k_jury_csv)]
    assert main([*argv, "--method", "none", "--out", str(tmp_path / "r")]) == 0
    assert "report: 3 judges, categories (K = 3" in capsys.readouterr().out
    assert (tmp_path / "r" / "report.md").exists()


@pytest.mark.slow
def test_fit_judges_k_categories_equals_the_python_api(k_jury_csv, capsys):
    import io

    from bayesjudge.data.categorical_jury import CategoricalJuryCounts
    from bayesjudge.models.categorical_jury import fit_categorical_jury

    argv = [a if a != "estimate" else "fit" for a in _k_args(k_jury_csv)]
    argv += ["--scores", "A=1,tie=0.5,B=0", "--seed", "3"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "joint model of 3 judges' K-category verdicts" in out and "score" in out
    assert "posterior predictive check" in out
    assert main([*argv, "--format", "csv"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    counts = CategoricalJuryCounts.from_frames(
        k_jury_csv, judges="judge_name", item="item", judge="verdict",
        categories=["A", "tie", "B"],
    )  # fmt: skip
    fit = fit_categorical_jury(counts, scores={"A": 1, "tie": 0.5, "B": 0}, random_seed=3)
    # Same seed, same draws: the printed θ is the API's, to its printed digits.
    expected = fit.summary()["theta"].transpose("system", "stratum", "category").values.ravel()
    theta = table[table["variable"] == "theta"]
    assert theta["mean"].to_numpy() == pytest.approx(expected, abs=1e-12)  # full precision now
