"""``bayesjudge estimate --judges COL --categories ... --plan BUDGETS``: K-category jury plans."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bayesjudge.cli import main
from bayesjudge.data import CategoricalJuryCounts
from bayesjudge.jury_estimate import jury_plan
from bayesjudge.simulate import simulate_categorical_jury_items

CONF = np.array([[[0.8, 0.1, 0.1], [0.2, 0.6, 0.2], [0.1, 0.1, 0.8]]] * 2
                + [[[0.6, 0.2, 0.2], [0.3, 0.4, 0.3], [0.2, 0.2, 0.6]]])  # fmt: skip


@pytest.fixture(scope="module")
def k_plan_csv(tmp_path_factory):
    frame = simulate_categorical_jury_items(
        [0.4, 0.2, 0.4], CONF, 300, [20, 20, 20], categories=["A", "tie", "B"],
        judges=["gpt", "claude", "llama"], random_seed=4,
    )  # fmt: skip
    test = frame[frame["human"].isna()].drop(columns=["truth", "human"])
    calibration = frame[frame["human"].notna()].drop(columns="truth")
    folder = tmp_path_factory.mktemp("k_plan")
    test.to_csv(folder / "test.csv", index=False)
    calibration.to_csv(folder / "cal.csv", index=False)
    return folder


def _args(folder, *extra):
    return ["estimate", "--test", str(folder / "test.csv"), "--calibration",
            str(folder / "cal.csv"), "--judges", "judge_name", "--item", "item", "--judge",
            "verdict", "--categories", "A,tie,B", *extra]  # fmt: skip


def test_plan_json_equals_the_python_api(k_plan_csv, capsys):
    assert main(_args(k_plan_csv, "--plan", "30,90", "--scores", "A=1,tie=0.5,B=0",
                      "--json")) == 0  # fmt: skip
    payload = json.loads(capsys.readouterr().out)
    counts = CategoricalJuryCounts.from_frames(
        k_plan_csv / "test.csv", k_plan_csv / "cal.csv", judges="judge_name", item="item",
        judge="verdict", categories=["A", "tie", "B"],
    )  # fmt: skip
    expected = jury_plan(counts, [30, 90], scores={"A": 1, "tie": 0.5, "B": 0})
    settings = payload["settings"]
    assert settings["allocation"] == "optimal" and settings["target"] == "score"
    assert settings["categories"] == ["A", "tie", "B"]
    assert len(payload["plan"]) == 2
    for row in payload["plan"]:
        one = expected.sel(system=row["system"], stratum=row["stratum"], budget=row["budget"])
        assert row["best_jury"] == str(one["best_jury"].values)
        best = one.sel(jury=row["best_jury"])
        assert row["width"] == pytest.approx(float(best["score_width"]))
        assert row["split"] == best["m"].values.tolist() and sum(row["split"]) == row["budget"]
        assert row["ratio"] == pytest.approx(float(one["ratio"]))
    assert set(payload["widths"]) == set(expected["jury"].values)
    assert np.shape(payload["widths"]["gpt"]) == (1, 1, 2, 3)  # system, stratum, budget, K


def test_plan_table(k_plan_csv, capsys):
    assert main(_args(k_plan_csv, "--plan", "30,90", "--plan-items", "1000")) == 0
    out = capsys.readouterr().out
    assert "widest of the categories' 95% intervals" in out and "Asymptotic" in out
    assert "labels per true category" in out and "claude+gpt+llama" in out
    assert "A " in out and "tie " in out
    assert main(_args(k_plan_csv, "--plan", "30", "--scores", "A=1,tie=0.5,B=0")) == 0
    assert "mean score (A = 1, tie = 0.5, B = 0)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--plan", "20,x"], "comma-separated label budgets"),
        (["--plan", "2"], "at least K = 3 labelled items"),
        (["--plan", "20", "--method", "plurality"], "drop --method"),
        (["--plan", "20", "--scores", "A=1,B=0"], "tie"),
    ],
)
def test_plan_refusals(k_plan_csv, capsys, argv, message):
    assert main(_args(k_plan_csv, *argv)) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
