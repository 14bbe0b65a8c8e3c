"""Session-10 hostile findings on estimate() and the simulators (huntC F12, F13)."""

from __future__ import annotations

import re
import time

import numpy as np
import pandas as pd
import pytest

from bayesjudge import simulate
from bayesjudge.core.ppi import ppi_mean
from bayesjudge.data import JudgeCounts
from bayesjudge.estimate import OWN_LABELS_METHODS, estimate


def _stratum_tables(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Strata easy (θ 0.8) and hard (θ 0.2), q0 0.8, q1 0.9; 20 % labelled at random, in one
    calibration table without a stratum column (one set serving both strata; huntC mk5.py)."""
    rng = np.random.default_rng(seed)
    frames = []
    for name, theta in (("easy", 0.8), ("hard", 0.2)):
        truth = rng.random(300) < theta
        judge = np.where(truth, rng.random(300) < 0.9, rng.random(300) >= 0.8)
        frames.append(
            pd.DataFrame({"stratum": name, "judge": judge.astype(int), "human": truth.astype(int)})
        )
    table = pd.concat(frames, ignore_index=True)
    labelled = rng.random(len(table)) < 0.2
    test = table.loc[~labelled, ["stratum", "judge"]]
    calibration = table.loc[labelled, ["judge", "human"]]
    return test, calibration


def test_ppi_refuses_one_labelled_set_shared_over_strata():
    test, calibration = _stratum_tables(9)
    tests = JudgeCounts.from_frames(test, stratum="stratum", human=None)
    labels = JudgeCounts.from_frames(calibration=calibration, design="random")
    counts = tests.with_calibration_from(labels)
    assert counts.calibration_shared_over == ("stratum",)
    assert OWN_LABELS_METHODS == ("likelihood", "ppi++")
    for method in OWN_LABELS_METHODS:
        with pytest.raises(
            ValueError, match=re.escape(f"method='{method}' needs each group's own")
        ) as err:
            estimate(counts, method=method)
        assert "calibration_shared_over = ('stratum',)" in str(err.value)
        assert "method='lang-reiczigel'" in str(err.value)
    # The default still falls back to Lang-Reiczigel there.
    assert estimate(counts).attrs["method"] == "lang-reiczigel"


def test_ppi_refuses_a_calibration_pooled_over_systems():
    counts = JudgeCounts.from_counts(
        n=[1800, 1800], k=[738, 1100], m0=[140, 80], tn=[112, 64], m1=[60, 120], tp=[54, 108],
        system=["a", "b"], design="random",
    )  # fmt: skip
    with pytest.raises(ValueError, match="method='ppi\\+\\+' needs each group's own"):
        estimate(counts, method="ppi++", calibration="shared")
    tests = JudgeCounts.from_counts(n=[100, 80], k=[70, 50], system=["a", "b"])
    calib = JudgeCounts.from_counts(m0=40, tn=30, m1=60, tp=54, design="random")
    with pytest.raises(ValueError, match="calibration_shared_over"):
        estimate(tests.with_calibration_from(calib), method="ppi++")
    # Each group's own random labels: still accepted, equal to the core function.
    out = estimate(counts, method="ppi++")
    ref = ppi_mean(738, 1800, 112, 140, 54, 60)
    assert out["estimate"].sel(system="a").item() == pytest.approx(ref.estimate, abs=1e-12)


def test_why_shared_ppi_is_refused_it_misses_both_strata():
    # What the refused call computed (PPI++ on one shared set, per stratum), by simulation:
    # 200 replications of the mk5 design, seeds 0..199. The shared set's human share (~0.5)
    # anchors both strata, so the 95 % intervals miss θ = 0.8 and θ = 0.2 nearly always
    # (a valid interval would miss 5 %, MC SE 1.5 %: anything above 20 % cannot be chance).
    misses = np.zeros(2)
    for seed in range(200):
        test, cal = _stratum_tables(seed)
        m0, m1 = int((cal["human"] == 0).sum()), int((cal["human"] == 1).sum())
        tn = int(((cal["human"] == 0) & (cal["judge"] == 0)).sum())
        tp = int(((cal["human"] == 1) & (cal["judge"] == 1)).sum())
        for i, (name, theta) in enumerate((("easy", 0.8), ("hard", 0.2))):
            judged = test.loc[test["stratum"] == name, "judge"]
            res = ppi_mean(int(judged.sum()), len(judged), tn, m0, tp, m1)
            misses[i] += not (res.lower <= theta <= res.upper)
    assert (misses / 200 > 0.2).all(), misses


# --- F13: item-table simulators refuse a table too large for memory, before drawing --------


@pytest.mark.parametrize(
    ("call", "names"),
    [
        (lambda n: simulate.simulate_labelled_table(0.3, 0.8, 0.9, n, 5, random_seed=1),
         "n and m"),
        (lambda n: simulate.simulate_items(0.3, 0.8, 0.9, [n, 5], 5, 5, system=["a", "b"],
                                           random_seed=1), "n, m0 and m1"),
        (lambda n: simulate.simulate_items(0.3, 0.8, 0.9, 5, calibration="random", m=n,
                                           random_seed=1), "n and m"),
        (lambda n: simulate.simulate_paired_items([0.3, 0.4], 0.8, 0.9, n=n, random_seed=1),
         "n and systems"),
        (lambda n: simulate.simulate_repeated_items(0.3, 0.8, 0.9, n // 100 + 1, 5, 5,
                                                    epochs=100, random_seed=1),
         "n, epochs, m0 and m1"),
        (lambda n: simulate.simulate_repeated_labelled_items(0.3, 0.8, 0.9, n, 5, epochs=1,
                                                             random_seed=1), "n, m and epochs"),
        (lambda n: simulate.simulate_categorical_items([0.3, 0.7], np.eye(2) * 0.8 + 0.1, n,
                                                       [5, 5], random_seed=1), "n and m"),
        (lambda n: simulate.simulate_jury(0.6, [0.8] * 3, [0.9] * 3, n=n // 3, m0=5, m1=5,
                                          random_seed=1), "n, m0, m1 and judges"),
        (lambda n: simulate.simulate_categorical_jury_items(
            [0.5, 0.5], np.stack([np.eye(2) * 0.8 + 0.1] * 3), n=n // 3, m=[5, 5],
            random_seed=1), "n, m and judges"),
    ],
)  # fmt: skip
def test_item_table_simulators_refuse_huge_tables_up_front(call, names):
    # huntC F13: simulate_labelled_table(0.3, 0.8, 0.9, 10**9, 5) ran out of memory instead.
    for n in (10**9, simulate.MAX_TABLE_ROWS):  # far above, and just above with the extras
        start = time.perf_counter()
        with pytest.raises(ValueError, match=f"^{re.escape(names)} would give an item table"):
            call(n)
        assert time.perf_counter() - start < 2.0  # refused before anything is drawn
    with pytest.raises(ValueError, match=r"at most 50,000,000 \(MAX_TABLE_ROWS\)"):
        call(10**9)


def test_item_table_limit_leaves_ordinary_tables_alone():
    table = simulate.simulate_labelled_table(0.6, 0.8, 0.9, n=8, m=2, system=["a", "b"],
                                             random_seed=1)  # fmt: skip
    assert len(table) == 20
    assert simulate.MAX_TABLE_ROWS == 50_000_000
