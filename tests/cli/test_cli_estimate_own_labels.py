"""``estimate --method ppi++ | likelihood`` with one random labelled set serving every stratum.

Regression (hunt of 2026-11-28 d, finding C-F12): PPI++ anchored every stratum on the pooled
labelled set's human share and returned 0.661 [0.590, 0.731] and 0.361 [0.289, 0.433] for
strata whose θ are 0.8 and 0.2, without a word (``likelihood`` was refused there). Both are
refused now, in command-line words; the default method still runs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayesjudge.cli import main


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """Strata easy (θ = 0.8) and hard (0.2); a random 20 % labelled, without a stratum column."""
    rng = np.random.default_rng(9)
    rows = []
    for name, theta in (("easy", 0.8), ("hard", 0.2)):
        truth = rng.random(300) < theta
        judge = np.where(truth, rng.random(300) < 0.9, rng.random(300) >= 0.8)
        rows += [{"stratum": name, "item": f"{name}{j}", "judge": int(judge[j]),
                  "human": int(truth[j])} for j in range(300)]  # fmt: skip
    frame = pd.DataFrame(rows)
    labelled = rng.random(len(frame)) < 0.2
    folder = tmp_path_factory.mktemp("own_labels")
    frame[~labelled][["stratum", "item", "judge"]].to_csv(folder / "test.csv", index=False)
    frame[labelled][["item", "judge", "human"]].to_csv(folder / "cal.csv", index=False)
    return folder


def _argv(folder, *extra):
    files = ["--test", str(folder / "test.csv"), "--calibration", str(folder / "cal.csv")]
    return ["estimate", *files, "--stratum", "stratum", "--design", "random", *extra]


@pytest.mark.parametrize("method", ["ppi++", "likelihood"])
def test_methods_of_own_labels_are_refused_in_cli_words(tables, method, capsys):
    assert main(_argv(tables, "--method", method)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err
    assert err.startswith(f"bayesjudge: error: --method {method} needs each group's own")
    assert "'stratum' column (--stratum)" in err and "serves every stratum" in err
    assert "calibration='shared'" not in err and "bj.fit" not in err  # no Python words


def test_the_default_method_still_estimates_both_strata(tables, capsys):
    assert main(_argv(tables, "--json")) == 0
    assert '"easy"' in capsys.readouterr().out
