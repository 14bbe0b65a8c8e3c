"""``fit --judges --covariates --format csv`` prints the tidy summary, as ``fit --judges`` does.

Regression (left open by the 2026-11-28 hunt): the covariate model's CSV was the rounded display
table of θ alone ("θ", "θ 95% interval" at 3 decimals), without q0, q1 or the θ slopes.
"""

from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
import pytest

from bayesjudge.cli import main

SAMPLING = ["--draws", "50", "--tune", "50", "--chains", "1", "--seed", "3", "--no-progress"]


@pytest.fixture(scope="module")
def rows_csv(tmp_path_factory):
    """3 judges, 120 items (40 labelled), one judge biased when the response is shown first."""
    rng = np.random.default_rng(12)
    rows = []
    for i in range(120):
        truth = int(rng.random() < 0.6)
        length = rng.normal()
        for judge, bias in (("gpt", 0.25), ("claude", 0.0), ("llama", 0.1)):
            for first in (0, 1):
                said = rng.random() < (0.85 if truth else 0.15 + bias * first)
                rows.append({"item": i, "grader": judge, "verdict": int(said), "first": first,
                             "length": length, "human": truth if i < 40 else None})  # fmt: skip
    path = tmp_path_factory.mktemp("jury_cov_csv") / "rows.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_fit_judges_covariates_csv_is_the_tidy_summary(rows_csv, tmp_path, capsys):
    import bayesjudge as bj

    saved = tmp_path / "fit.nc"
    argv = ["fit", "--test", str(rows_csv), "--judges", "grader", "--item", "item", "--judge",
            "verdict", "--covariates", "first", "--theta-covariates", "length", *SAMPLING,
            "--format", "csv", "--save", str(saved)]  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 50 draws: r_hat and ESS warnings
        assert main(argv) == 0
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out))
    for column in ("variable", "mean", "sd", "median", "eti_lower", "eti_upper", "ess_bulk",
                   "r_hat"):  # fmt: skip
        assert column in frame, list(frame.columns)
    assert not any("interval" in c or c == "θ" for c in frame.columns)
    assert {"theta", "q0", "q1", "theta_slope"} <= set(frame["variable"])
    q1 = frame[frame["variable"] == "q1"]
    assert len(q1) == 3 * 1 * 2  # judge x covariate x level (low, high)
    assert set(q1["judge"]) == {"gpt", "claude", "llama"}
    # The saved fit's own summary: the CSV holds it at full precision.
    fit = bj.load(saved)
    summary = fit.summary()
    theta = frame[frame["variable"] == "theta"].iloc[0]
    assert theta["mean"] == pytest.approx(float(summary["theta"].squeeze()), abs=1e-12)
    slope = frame[frame["variable"] == "theta_slope"].iloc[0]
    assert slope["mean"] == pytest.approx(float(summary["theta_slope"].squeeze()), abs=1e-12)
