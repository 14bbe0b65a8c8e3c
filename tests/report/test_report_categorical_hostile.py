"""Hostile inputs to the K-category report: each test failed before the fix it guards."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayesjudge.categorical_estimate import estimate_categorical
from bayesjudge.data import CategoricalCounts
from bayesjudge.report.categorical import build_categorical_report
from bayesjudge.report.categorical_tables import bottom_line_table
from bayesjudge.warnings import SmallSampleWarning


def test_systems_without_an_estimate_get_no_rank():
    # Before: a system whose score is NaN (no calibration for a true category) was ranked
    # 2 (or 1, when every score was NaN) in the bottom line, as if it had a place.
    frame = pd.DataFrame({
        "system": ["x", "y", "z"], "stratum": ["all"] * 3,
        "corrected": [0.4, np.nan, 0.6], "corrected_lower": [0.3, -1.0, 0.5],
        "corrected_upper": [0.5, 1.0, 0.7],
    })  # fmt: skip
    table = bottom_line_table(frame, None, None, 0.95)
    assert table["system"].tolist() == ["z", "x", "y"]
    assert table["rank"].tolist() == [1, 2, "—"]


def test_no_pooling_hint_for_one_system():
    # With one system there is nothing to pool: the hint to pass calibration='shared' was
    # advice that could not help.
    counts = CategoricalCounts.from_counts(
        [30, 10, 60], [[18, 1, 1], [0, 0, 0], [1, 1, 18]], categories=["A", "tie", "B"]
    )
    with pytest.warns(SmallSampleWarning, match=r"\(truth \['tie'\]\)") as caught:
        estimate_categorical(counts)
    assert "calibration='shared'" not in str(caught[0].message)
    two = CategoricalCounts.from_counts(
        [[30, 10, 60], [20, 20, 60]], [[18, 1, 1], [0, 0, 0], [1, 1, 18]],
        categories=["A", "tie", "B"], system=["x", "y"],
    )  # fmt: skip
    with pytest.warns(SmallSampleWarning, match=r"calibration='shared' \(--calibration-design"):
        estimate_categorical(two)


def test_bottom_line_without_any_estimate_reads_cleanly():
    # Every system lacks an estimate (a true category nobody labelled): no ranks, and the
    # ranking line says so once, without a doubled space ("Ranking:  — nothing to rank").
    counts = CategoricalCounts.from_counts(
        [[30, 10, 60, 0], [20, 20, 60, 0]],
        [[18, 1, 1, 0], [2, 6, 2, 0], [1, 1, 18, 0], [0, 0, 0, 0]],
        categories=["A", "tie", "B", "Z"], system=["x", "y"],
    )  # fmt: skip
    with pytest.warns(SmallSampleWarning, match=r"\(truth \['Z'\]\)"):
        report = build_categorical_report(
            counts, scores={"A": 1, "tie": 0.5, "B": 0, "Z": -1}, random_seed=1
        )
    markdown = report.to_markdown()
    assert "| — | x | all |" in markdown and "| — | y | all |" in markdown
    assert "- Ranking: — nothing to rank; no estimate for “x”, “y”" in markdown
