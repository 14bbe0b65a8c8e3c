"""Hostile command lines of several judges (``--judges``): refusals and the tidy CSV.

Regressions of the CLI hunt of 2026-11-28 (findings 1, 5, 6, 10): options the jury paths
ignored silently, ``fit --judges --format csv`` printing the rounded display table, repeated
``--plan`` budgets, and messages that gave Python advice on the command line.
"""

from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
import pytest

from bayesjudge.cli import main
from bayesjudge.simulate import preference_confusion, simulate_categorical_jury_items

SAMPLING = ["--draws", "50", "--tune", "50", "--chains", "1", "--seed", "1", "--no-progress"]


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """3 judges, categories A/tie/B, 150 test + 45 labelled items (random design)."""
    conf = np.stack([preference_confusion(a, tie_rate=0.1) for a in (0.8, 0.75, 0.65)])
    frame = simulate_categorical_jury_items(
        [0.4, 0.2, 0.4], conf, n=150, m=[15, 15, 15], categories=["A", "tie", "B"],
        judges=["a", "b", "c"], random_seed=1,
    )  # fmt: skip
    folder = tmp_path_factory.mktemp("jury_s9")
    frame.drop(columns="truth").to_csv(folder / "k.csv", index=False)
    binary = frame.drop(columns="truth").copy()
    for column in ("verdict", "human"):
        binary[column] = binary[column].map({"A": "yes", "tie": "no", "B": "no"})
    binary.to_csv(folder / "bin.csv", index=False)
    # A calibration table whose items are also test items: the design is inferred (warning).
    labelled = frame[frame["human"].notna()].drop(columns="truth")
    frame.drop(columns=["truth", "human"]).to_csv(folder / "test_only.csv", index=False)
    labelled.to_csv(folder / "cal_overlap.csv", index=False)
    one = frame[frame["judge_name"] == "a"].drop(columns="truth")
    one.to_csv(folder / "one_judge.csv", index=False)
    return folder


def _cmd(command, path, *extra, categories=True):
    k = ["--categories", "A,tie,B"] if categories else []
    return [command, "--test", str(path), "--judges", "judge_name", "--item", "item",
            "--judge", "verdict", "--human", "human", *k, *extra]  # fmt: skip


def _error(capsys) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("bayesjudge: error:")]
    assert len(lines) == 1, err
    return lines[0]


# Finding 1: fit --judges ignored every prior option (output byte-identical); refused now
# before any sampling, as report --judges refuses them.
@pytest.mark.parametrize(
    ("extra", "categories", "named"),
    [
        (["--prior-theta", "50"], True, "--prior-theta"),
        (["--prior-confusion", "50,1"], True, "--prior-confusion"),
        (["--prior-q0", "0.5"], True, "--prior-q0"),
        (["--judge-better-than-chance"], True, "--judge-better-than-chance"),
        (["--prior-error-mean=-5,0.1"], True, "--prior-error-mean"),
        (["--prior-error-scale", "0.5"], True, "--prior-error-scale"),
        (["--prior-theta", "50,1"], False, "--prior-theta"),
        (["--prior-q0", "0.5"], False, "--prior-q0"),
        (["--prior-q1", "0.99"], False, "--prior-q1"),
        (["--prior-confusion", "50,1"], False, "--prior-confusion"),
        (["--judge-better-than-chance"], False, "--judge-better-than-chance"),
    ],
)
def test_fit_judges_refuses_prior_options(tables, capsys, extra, categories, named):
    path = tables / ("k.csv" if categories else "bin.csv")
    assert main(_cmd("fit", path, *SAMPLING, *extra, categories=categories)) == 2
    line = _error(capsys)
    assert f"{named} cannot be combined with --judges" in line and "default priors" in line


def test_fit_and_report_judges_refuse_priors_alike(tables, capsys, tmp_path):
    """One check: fit and report name the same options in the same words."""
    extra = ["--prior-theta", "2", "--prior-confusion", "4,1"]
    assert main(_cmd("fit", tables / "k.csv", *SAMPLING, *extra)) == 2
    fit_line = _error(capsys)
    out = str(tmp_path / "r")
    assert main(_cmd("report", tables / "k.csv", "--seed", "1", "--out", out, *extra)) == 2
    report_line = _error(capsys)
    assert "--prior-theta, --prior-confusion cannot be combined with --judges" in fit_line
    assert "--prior-theta, --prior-confusion cannot be combined with --judges" in report_line


# Finding 6: estimate --judges ignored --estimand test-set, --calibration-design shared and
# --positive with K categories (JSON identical to the run without).
@pytest.mark.parametrize(
    ("extra", "categories", "named"),
    [
        (["--estimand", "test-set"], True, "--estimand test-set"),
        (["--calibration-design", "shared"], True, "--calibration-design shared"),
        (["--positive", "A"], True, "--positive"),
        (["--estimand", "test-set"], False, "--estimand test-set"),
        (["--calibration-design", "shared"], False, "--calibration-design shared"),
        (["--estimand", "test-set", "--plan", "30"], True, "--estimand test-set"),
        (["--calibration-design", "shared", "--plan", "30"], False, "--calibration-design"),
    ],
)
def test_estimate_judges_refuses_single_judge_options(tables, capsys, extra, categories, named):
    path = tables / ("k.csv" if categories else "bin.csv")
    assert main(_cmd("estimate", path, *extra, categories=categories)) == 2
    line = _error(capsys)
    assert named in line and "--judges" in line


def test_positive_with_categories_refused_by_report_too(tables, capsys, tmp_path):
    out = str(tmp_path / "r")
    argv = _cmd("report", tables / "k.csv", "--positive", "A", "--method", "none", "--out", out)
    assert main(argv) == 2
    assert "--positive" in _error(capsys)


def test_estimate_binary_judges_positive_still_works(tables, capsys):
    assert main(_cmd("estimate", tables / "bin.csv", "--positive", "yes", categories=False)) == 0


# Finding 5: fit --judges --format csv printed "θ,θ 95% interval" text at 3 decimals.
def _tidy_csv(capsys) -> pd.DataFrame:
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out))
    for column in ("variable", "mean", "sd", "median", "eti_lower", "eti_upper", "ess_bulk",
                   "r_hat"):  # fmt: skip
        assert column in frame, list(frame.columns)
    assert not any("interval" in c or c == "θ" for c in frame.columns)
    return frame


@pytest.mark.filterwarnings("ignore::bayesjudge.warnings.ConvergenceWarning")  # 50 draws
def test_fit_judges_csv_is_the_tidy_summary_binary(tables, capsys):
    from bayesjudge.data.jury import JuryCounts
    from bayesjudge.models.jury import fit_jury

    argv = _cmd("fit", tables / "bin.csv", *SAMPLING, "--format", "csv", categories=False)
    assert main(argv) == 0
    frame = _tidy_csv(capsys)
    assert set(frame["variable"]) >= {"theta", "q0", "q1"}
    assert (frame["variable"] == "q0").sum() == 3  # one row per judge
    # The same fit in Python (same seed): the CSV holds the summary at full precision.
    counts = JuryCounts.from_frames(
        pd.read_csv(tables / "bin.csv"), judges="judge_name", item="item", judge="verdict",
        human="human",
    )  # fmt: skip
    fit = fit_jury(counts, draws=50, tune=50, chains=1, random_seed=1, progressbar=False)
    summary = fit.summary()
    theta = frame[frame["variable"] == "theta"].iloc[0]
    assert theta["mean"] == pytest.approx(float(summary["theta"].squeeze()), abs=1e-12)
    lower = float(summary["theta_ci"].sel(ci_bound="lower").squeeze())
    assert theta["eti_lower"] == pytest.approx(lower, abs=1e-12)


@pytest.mark.filterwarnings("ignore::bayesjudge.warnings.ConvergenceWarning")  # 50 draws
def test_fit_judges_csv_is_the_tidy_summary_categorical(tables, capsys):
    from bayesjudge.data.categorical_jury import CategoricalJuryCounts
    from bayesjudge.models.categorical_jury import fit_categorical_jury

    argv = _cmd("fit", tables / "k.csv", *SAMPLING, "--format", "csv")
    assert main(argv) == 0
    frame = _tidy_csv(capsys)
    theta = frame[frame["variable"] == "theta"]
    assert list(theta["category"]) == ["A", "tie", "B"]
    assert theta["mean"].sum() == pytest.approx(1.0, abs=1e-9)
    confusion = frame[frame["variable"] == "confusion"]
    assert len(confusion) == 3 * 3 * 3  # judge x truth x verdict
    assert {"judge", "truth", "verdict"} <= set(confusion.columns)
    # The same fit in Python (same seed): θ and the confusion at full precision.
    counts = CategoricalJuryCounts.from_frames(
        pd.read_csv(tables / "k.csv"), judges="judge_name", item="item", judge="verdict",
        human="human", categories=["A", "tie", "B"],
    )  # fmt: skip
    fit = fit_categorical_jury(counts, draws=50, tune=50, chains=1, random_seed=1,
                               progressbar=False)  # fmt: skip
    summary = fit.summary()
    expected = summary["theta"].sel(system="all", stratum="all", category=["A", "tie", "B"])
    assert theta["mean"].to_numpy() == pytest.approx(expected.values, abs=1e-12)
    one = confusion[(confusion["judge"] == "b") & (confusion["truth"] == "tie")
                    & (confusion["verdict"] == "A")].iloc[0]  # fmt: skip
    upper = summary["confusion_ci"].sel(judge="b", truth="tie", verdict="A", ci_bound="upper")
    assert one["eti_upper"] == pytest.approx(float(upper.squeeze()), abs=1e-12)


# Finding 10 (CLI parts).
@pytest.mark.parametrize("categories", [True, False])
def test_plan_refuses_repeated_budgets(tables, capsys, categories):
    path = tables / ("k.csv" if categories else "bin.csv")
    assert main(_cmd("estimate", path, "--plan", "30,10,30", categories=categories)) == 2
    line = _error(capsys)
    assert "--plan 30,10,30" in line and "30" in line and "more than once" in line


@pytest.mark.parametrize(
    ("plan", "categories", "message"),
    [
        ("99999999999999999999", True, "2**53"),
        ("99999999999999999999", False, "2**53"),
        ("2", True, "at least K = 3"),
    ],
)
def test_plan_errors_name_the_option(tables, capsys, plan, categories, message):
    path = tables / ("k.csv" if categories else "bin.csv")
    assert main(_cmd("estimate", path, "--plan", plan, categories=categories)) == 2
    line = _error(capsys)
    assert f"--plan {plan}" in line and message in line


@pytest.mark.parametrize("categories", [True, False])
def test_n_resamples_error_names_the_option(tables, capsys, categories):
    path = tables / ("k.csv" if categories else "bin.csv")
    argv = _cmd("estimate", path, "--method", "dawid-skene-bootstrap", "--n-resamples", "20",
                categories=categories)  # fmt: skip
    assert main(argv) == 2
    line = _error(capsys)
    assert "--n-resamples 20" in line and "n_resamples" not in line
    assert "categorical_jury_estimate(" not in line


def test_plurality_on_binary_verdicts_points_to_categories(tables, capsys):
    argv = _cmd("estimate", tables / "bin.csv", "--method", "plurality", categories=False)
    assert main(argv) == 2
    line = _error(capsys)
    assert "--method plurality" in line and "--categories" in line
    assert "method of one judge" not in line


def test_one_judge_fit_gives_cli_advice(tables, capsys):
    assert main(_cmd("fit", tables / "one_judge.csv", *SAMPLING)) == 2
    line = _error(capsys)
    assert "fit_categorical" not in line and "without --judges" in line


def test_inferred_design_warning_names_the_cli_option(tables, capsys):
    argv = ["estimate", "--test", str(tables / "test_only.csv"), "--calibration",
            str(tables / "cal_overlap.csv"), "--judges", "judge_name", "--item", "item",
            "--judge", "verdict", "--human", "human", "--categories", "A,tie,B"]  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        assert main(argv) == 0
    err = capsys.readouterr().err
    assert "--design random" in err and "design='random'" not in err
