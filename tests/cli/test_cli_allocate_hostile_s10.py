"""Session-10 hostile findings on ``bayesjudge allocate`` (huntC F1, F11)."""

from __future__ import annotations

import json

import pytest

from bayesjudge.core.allocation import allocation_report, labels_for_width
from bayesjudge.warnings import SmallSampleWarning

PILOT = ["--q0", "0.7", "--q1", "0.9"]


def test_random_plan_never_promises_zero_width(run_cli):
    # huntC F1: p̂ = 0.25 is below 1 - q̃0 = 1/3, θ̃ clipped to 0; before the fix the random
    # row said length 0.000 and "label 1 items ... predicted width 0.000", with no warning.
    args = ["allocate", "--budget", "200", "--p-hat", "0.25", *PILOT, "--n", "2000"]
    args += ["--design", "both", "--target-width", "0.05"]
    code, out, err = run_cli([*args, "--json"])
    assert code == 0, err
    assert "on the boundary 0 or 1" in err and "1/(m + 2)" in err
    payload = json.loads(out)
    rows = {r["method"]: r for r in payload["allocations"]}
    with pytest.warns(SmallSampleWarning):
        ref = allocation_report(200, 0.25, 0.7, 0.9, n=2000, design="both")
    assert rows["random"]["interval_length"] == pytest.approx(float(ref.random.length))
    assert rows["random"]["interval_length"] > 0.01
    plans = {p["design"]: p for p in payload["labels_for_width"]}
    expected = labels_for_width(0.05, 0.0, 8 / 12, 10 / 12, judged=2000)
    assert plans["random"]["labels"] == int(expected.labels) > 1
    assert plans["random"]["width"] == pytest.approx(float(expected.width)) and expected.width > 0
    code, out, _ = run_cli(args)
    assert code == 0 and "predicted width 0.000" not in out


def test_random_plan_with_a_chance_level_pilot_is_the_worst_case(run_cli):
    args = ["allocate", "--budget", "200", "--p-hat", "0.4", "--q0", "0.3", "--q1", "0.4"]
    code, out, err = run_cli([*args, "--design", "random", "--json", "--target-width", "0.1"])
    assert code == 0, err
    assert "worst case θ = 1/2" in err
    (row,) = json.loads(out)["allocations"]
    assert (row["m0"], row["m1"]) == (100, 100) and row["interval_length"] > 0.1
    (plan,) = json.loads(out)["labels_for_width"]
    assert plan["labels"] == int(labels_for_width(0.1, 0.5, 4 / 12, 5 / 12).labels)


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        # huntC F11: named m_pilot= and m= (Python) before.
        (["--budget", "1"], "--budget 1: the pilot's --m-pilot 10 items"),
        (["--budget", "30", "--m-pilot", "20"], "at least 2 × --m-pilot = 40"),
        # "--budget -5" said ">= 0", then "--budget 0" was refused.
        (["--budget", "0"], "whole number >= 1"),
        (["--budget", "-5"], "whole number >= 1"),
        (["--budget", "200", "--m-pilot", "0"], "--m-pilot: must be a whole number >= 1"),
    ],
)
def test_allocate_messages_in_cli_words(extra, match, run_cli, one_error_line):
    code, _, err = run_cli(["allocate", *extra, "--p-hat", "0.4", *PILOT])
    assert code == 2
    line = one_error_line(err)
    assert match in line and "m_pilot" not in line and "m=" not in line, line


def test_stratified_plan_line_has_no_doubled_word(run_cli):
    args = ["allocate", "--budget", "200", "--p-hat", "0.4", *PILOT, "--target-width", "0.1"]
    code, out, err = run_cli(args)
    assert code == 0, err
    assert "items calibration items" not in out
    assert "stratified: label 1291 calibration items (m0 = 1151, m1 = 140)" in out
