"""The report's sizes sentence and counts caption with repeated verdicts of an item.

Regression (hunt of 2026-11-28 d, finding A-F3): with repeated verdicts n and m count verdicts,
but the report said "5 unlabelled judged items and 24 labelled items" for 2 and 8 items.
The expected numbers are counted from the item-level frames, not from the counts.
"""

from __future__ import annotations

import numpy as np

import bayesjudge as bj
from bayesjudge.report import build_report
from bayesjudge.simulate import simulate_repeated_items


def _frames(seed: int = 5):
    test, cal = simulate_repeated_items(
        0.7, 0.8, 0.9, n=40, m0=10, m1=10, epochs=3, icc=0.4, random_seed=seed
    )
    return test, cal


def _sizes_line(report) -> str:
    lines = [line for line in report.to_markdown().splitlines() if line.startswith("Sizes:")]
    assert len(lines) == 1, lines
    return lines[0]


def test_random_design_counts_verdicts_of_items():
    test, _ = _frames()
    rng = np.random.default_rng(1)
    labelled = rng.choice(40, 12, replace=False)
    test["human"] = np.where(test["item"].isin(labelled), test["truth"], np.nan)
    counts = bj.JudgeCounts.from_frames(test.drop(columns="truth"), item="item", repeats="epoch")
    line = _sizes_line(build_report(counts, random_seed=1, warn=False))
    unlabelled = test[test["human"].isna()]
    lab = test[test["human"].notna()]
    expected = (
        f"Sizes: {len(unlabelled)} verdicts of {unlabelled['item'].nunique()} unlabelled judged "
        f"items and {len(lab)} verdicts of {lab['item'].nunique()} labelled items"
    )
    assert line.startswith(expected), line
    assert "labelled verdicts humans called incorrect" in line


def test_stratified_design_counts_verdicts_of_test_items():
    test, cal = _frames()
    counts = bj.JudgeCounts.from_frames(
        test.drop(columns="truth"), cal, item="item", repeats="epoch"
    )
    report = build_report(counts, random_seed=1, warn=False)
    line = _sizes_line(report)
    expected = (
        f"Sizes: {len(test)} verdicts of {test['item'].nunique()} judged test items and "
        f"{len(cal)} human-labelled calibration items"
    )
    assert line.startswith(expected), line
    assert "n test verdicts, k judged correct" in report.to_markdown()


def test_one_verdict_per_item_still_says_items():
    test, cal = _frames()
    first = test[test["epoch"] == 1].drop(columns=["truth", "epoch"])
    counts = bj.JudgeCounts.from_frames(first, cal)
    report = build_report(counts, random_seed=1, warn=False)
    line = _sizes_line(report)
    assert line.startswith(f"Sizes: {len(first)} judged test items and {len(cal)} "), line
    assert "verdicts" not in line
    assert "n test items, k judged correct" in report.to_markdown()
