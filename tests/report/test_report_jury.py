"""The report of several judges (JuryCounts): closed forms, sections, files, hostile names."""

from __future__ import annotations

import numpy as np
import pytest

import bayesjudge as bj
from bayesjudge.jury_estimate import jury_estimate
from bayesjudge.report import build_report, write_report
from bayesjudge.report.jury import JURY_SECTIONS


@pytest.fixture(scope="module")
def counts():
    return bj.JuryCounts.from_counts(
        ["111", "110", "101", "011", "100", "010", "001", "000", "1-1"],
        test=[[[300, 40, 35, 30, 20, 25, 30, 200, 12]], [[200, 30, 35, 20, 20, 25, 40, 300, 3]]],
        labelled=[[1, 1, 2, 1, 3, 4, 3, 25, 0], [24, 3, 4, 2, 1, 2, 1, 3, 1]],
        judges=["gpt", "<b>claude</b>", "llama $x$\nnew"],
        systems=["sys|a", "7"],
    )


def test_closed_form_report_has_every_section_and_the_jury_numbers(counts):
    report = build_report(counts, random_seed=1)
    assert [s.key for s in report.sections] == list(JURY_SECTIONS)
    expected = jury_estimate(counts)
    theta = report.tables["theta"]
    for _, row in theta.iterrows():
        one = expected.sel(system=row["system"], stratum=row["stratum"])
        assert row["jury"] == pytest.approx(float(one["estimate"]))
        assert row["jury_lower"] == pytest.approx(float(one["ci"].sel(ci_bound="lower")))
    assert len(report.tables["agreement"]) == 2 * 3  # two systems × three pairs
    assert "Not run" in report.to_markdown()  # no fit: the independence check is not run
    assert set(report.tables["judges"]["judge"]) == set(counts.judges)


def test_written_files_escape_hostile_names(counts, tmp_path):
    report = write_report(counts, tmp_path / "out", random_seed=2)
    assert sorted(p.name for p in report.paths.values()) == [
        "report.html",
        "report.md",
        "theta_forest.png",
    ]
    html = report.paths["html"].read_text()
    assert "<b>claude</b>" not in html and "&lt;b&gt;claude&lt;/b&gt;" in html
    assert np.isfinite(report.tables["theta"]["single"]).all()


def test_refuses_options_of_one_judge(counts):
    with pytest.raises(ValueError, match="several judges"):
        build_report(counts, target_width=0.05)
