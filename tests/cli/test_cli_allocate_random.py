"""``bayesjudge allocate --design`` and ``--target-width`` (issue 15: the random design)."""

from __future__ import annotations

import json

import pytest

from bayesjudge.core.allocation import allocation_report, labels_for_width

BASE = ["allocate", "--budget", "200", "--p-hat", "0.4", "--q0", "0.7", "--q1", "0.9"]


def test_default_is_the_stratified_table_unchanged(run_cli):
    code, out, err = run_cli([*BASE, "--json"])
    assert code == 0, err
    payload = json.loads(out)
    assert payload["design"] == "stratified"
    assert [r["method"] for r in payload["allocations"]] == ["symmetric", "algorithm1", "exact"]
    assert "labels_for_width" not in payload


def test_both_designs_side_by_side(run_cli):
    code, out, err = run_cli([*BASE, "--n", "1000", "--design", "both", "--json"])
    assert code == 0, err
    rows = {r["method"]: r for r in json.loads(out)["allocations"]}
    assert list(rows) == ["symmetric", "algorithm1", "exact", "random"]
    # The library's numbers: allocation_report(200, 0.4, 0.7, 0.9, n=1000, design="both").
    ref = allocation_report(200, 0.4, 0.7, 0.9, n=1000, design="both")
    assert rows["random"]["interval_length"] == pytest.approx(float(ref.random.length))
    assert (rows["random"]["m0"], rows["random"]["m1"]) == (173, 27)
    assert rows["exact"]["interval_length"] == pytest.approx(float(ref.exact.length))
    code, out, err = run_cli([*BASE, "--n", "1000", "--design", "both"])
    assert code == 0 and "random" in out and "exact" in out and "maximum-likelihood" in out


def test_random_only_and_target_width(run_cli):
    args = [*BASE, "--n", "2000", "--design", "random", "--target-width", "0.06", "--json"]
    code, out, err = run_cli(args)
    assert code == 0, err
    payload = json.loads(out)
    assert [r["method"] for r in payload["allocations"]] == ["random"]
    (plan,) = payload["labels_for_width"]
    ref = allocation_report(200, 0.4, 0.7, 0.9, n=2000, design="random")
    expected = labels_for_width(
        0.06, ref.theta_tilde, ref.q0_tilde, ref.q1_tilde, judged=2000, design="random"
    )
    assert plan["design"] == "random" and plan["reachable"] is True
    assert plan["labels"] == int(expected.labels)
    assert plan["width"] == pytest.approx(float(expected.width)) and plan["width"] <= 0.06
    code, out, err = run_cli(args[:-1])
    assert code == 0 and f"label {int(expected.labels)} items at random" in out


def test_target_width_for_both_designs_and_out_of_reach(run_cli):
    args = [*BASE, "--n", "300", "--design", "both", "--target-width", "0.02", "--json"]
    code, out, err = run_cli(args)
    assert code == 0, err
    plans = {p["design"]: p for p in json.loads(out)["labels_for_width"]}
    assert plans["random"]["reachable"] is False and plans["random"]["labels"] == 300
    assert plans["stratified"]["reachable"] is False and plans["stratified"]["labels"] is None
    code, out, err = run_cli(args[:-1])
    assert code == 0 and "random: not reachable" in out and "stratified: not reachable" in out


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--n", "150", "--design", "random"], "--budget 200: m must not exceed n"),
        (["--design", "cluster"], "--design"),
        (["--target-width", "1.5"], "--target-width"),
    ],
)
def test_mistakes_are_one_line(extra, match, run_cli, one_error_line):
    code, _, err = run_cli([*BASE, *extra])
    assert code == 2
    assert match in one_error_line(err)
