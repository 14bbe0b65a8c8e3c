"""JuryItems: verdict rows of several judges with covariates, and the covariate estimate."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import special

from bayesjudge.core.jury_covariates import covariate_dawid_skene
from bayesjudge.data.jury import JuryCounts
from bayesjudge.data.jury_items import JuryItems
from bayesjudge.jury_estimate import jury_covariate_estimate
from bayesjudge.warnings import MissingLabelWarning


def _rows(seed=0, n_items=150, both_orders=True):
    rng = np.random.default_rng(seed)
    truth = rng.random(n_items) < 0.5
    rows = []
    for i in range(n_items):
        for g, bias in (("a", 0.3), ("b", 0.0), ("c", 0.1)):
            for first in (0, 1) if both_orders else (0,):
                p = 0.85 if truth[i] else 0.15 + bias * first
                rows.append(
                    {
                        "model": "m1" if i % 2 else "m2",
                        "item": f"q{i}",
                        "grader": g,
                        "verdict": int(rng.random() < p),
                        "first": first,
                        "length": float(rng.normal(500, 100)),
                        "human": int(truth[i]) if i < 30 else None,
                    }
                )
    return pd.DataFrame(rows)


def test_reads_rows_and_matches_the_core():
    frame = _rows()
    items = JuryItems.from_frames(
        frame, judges="grader", item="item", judge="verdict", covariates=["first"], system="model"
    )
    assert items.sizes == {"row": len(frame), "item": 150, "judge": 3, "covariate": 1}
    assert items.design == "random" and items.systems == ["m1", "m2"]
    assert int((items.dataset["truth"].values >= 0).sum()) == 30
    ds = jury_covariate_estimate(items)
    x = frame["first"].to_numpy(float)
    z = (x - x.mean()) / x.std()
    core = covariate_dawid_skene(
        items.dataset["row_item"].values,
        items.dataset["row_judge"].values,
        items.dataset["verdict"].values.astype(int),
        z,
        items.dataset["truth"].values.astype(int),
        group=items.group_index(),
        design="random",
    )
    np.testing.assert_allclose(ds["estimate"].values.ravel(), core.theta)
    # q0 of judge "a" at first=1 from the standardised coefficients
    eta = core.coef[0, 0, 0] + core.coef[0, 0, 1] * (1 - x.mean()) / x.std()
    assert float(ds["q0"].sel(judge="a", covariate="first", level="high")) == pytest.approx(
        1 - special.expit(eta)
    )
    # judge a favours the answer shown first: its q0 drops by about 0.3 (0.85 -> 0.55)
    drop = ds["q0"].sel(judge="a", level="low") - ds["q0"].sel(judge="a", level="high")
    assert 0.1 < float(drop.squeeze()) < 0.5


def test_counts_of_single_rows_equal_the_pattern_reader():
    frame = _rows(seed=1, both_orders=False)
    items = JuryItems.from_frames(
        frame, judges="grader", item="item", judge="verdict", covariates="length"
    )
    direct = JuryCounts.from_frames(frame, judges="grader", item="item", judge="verdict")
    counts = items.counts()
    assert counts.patterns == direct.patterns
    np.testing.assert_array_equal(counts.test.values, direct.test.values)
    np.testing.assert_array_equal(counts.labelled.values, direct.labelled.values)
    both = JuryItems.from_frames(
        _rows(seed=1), judges="grader", item="item", judge="verdict", covariates="first"
    )
    with pytest.raises(ValueError, match="more than once"):
        both.counts()


def test_bad_covariates_and_missing_verdicts():
    frame = _rows(seed=2, n_items=10)
    bad = frame.astype({"length": object})
    bad.loc[3, "length"] = "long"
    with pytest.raises(ValueError, match=r"Covariate column 'length'.*not numbers"):
        JuryItems.from_frames(bad, judges="grader", item="item", judge="verdict",
                              covariates="length")  # fmt: skip
    with pytest.raises(ValueError, match="'size'"):
        JuryItems.from_frames(frame, judges="grader", item="item", judge="verdict",
                              covariates="size")  # fmt: skip
    gap = frame.astype({"verdict": object})
    gap.loc[0, "verdict"] = None
    with pytest.warns(MissingLabelWarning, match="1 row"):
        items = JuryItems.from_frames(
            gap, judges="grader", item="item", judge="verdict", covariates="first"
        )
    assert items.sizes["row"] == len(frame) - 1
    calib = frame[frame.human.notna()]
    with pytest.raises(ValueError, match="also test items"):
        JuryItems.from_frames(frame, calib, judges="grader", item="item", judge="verdict",
                              covariates="first")  # fmt: skip


def _with_item_length(frame: pd.DataFrame, seed=3) -> pd.DataFrame:
    """Add an item-level covariate (the length difference: one value per item)."""
    rng = np.random.default_rng(seed)
    ids = frame["item"].unique()
    diff = dict(zip(ids, rng.normal(0, 200, size=len(ids)), strict=True))
    return frame.assign(diff=frame["item"].map(diff))


def test_theta_covariates_are_read_per_item_and_reach_the_core():
    frame = _with_item_length(_rows(seed=4))
    items = JuryItems.from_frames(frame, judges="grader", item="item", judge="verdict",
                                  covariates=["first", "diff"], system="model",
                                  theta_covariates="diff")  # fmt: skip
    assert items.covariate_names == ["first", "diff"]
    assert items.theta_covariate_names == ["diff"]
    ids = items.dataset["item_id"].values
    want = frame.groupby("item")["diff"].first()
    np.testing.assert_array_equal(items.theta_covariates()[:, 0], want.loc[list(ids)].to_numpy())
    assert "theta covariates ['diff']" in repr(items)
    ds = jury_covariate_estimate(items, alpha=0.1)
    x = items.dataset["covariates"].values
    w = items.theta_covariates()
    core = covariate_dawid_skene(
        items.dataset["row_item"].values,
        items.dataset["row_judge"].values,
        items.dataset["verdict"].values.astype(int),
        (x - x.mean(0)) / x.std(0),
        items.dataset["truth"].values.astype(int),
        group=items.group_index(),
        design="random",
        alpha=0.1,
        theta_covariates=(w - w.mean(0)) / w.std(0),
    )
    np.testing.assert_allclose(ds["estimate"].values.ravel(), core.theta, rtol=1e-12)
    np.testing.assert_allclose(ds["ci"].values.reshape(-1, 2),
                               np.column_stack([core.theta_lower, core.theta_upper]))  # fmt: skip
    se = np.sqrt(core.theta_coef_cov[2, 2])  # two groups (m1, m2), then δ
    assert float(ds["theta_coef"].sel(theta_covariate="diff")) == pytest.approx(core.theta_coef[2])
    assert float(ds["theta_coef_se"].squeeze()) == pytest.approx(se)
    half = 1.6448536269514722 * se  # scipy.stats.norm.ppf(0.95) * se
    np.testing.assert_allclose(ds["theta_coef_ci"].values[0], core.theta_coef[2] + [-half, half])
    assert ds.attrs["theta_model"] == "logistic" and ds.attrs["theta_over"] == "all items"
    plain = jury_covariate_estimate(JuryItems.from_frames(
        frame, judges="grader", item="item", judge="verdict", covariates="first"))  # fmt: skip
    assert "theta_coef" not in plain and plain.attrs["theta_model"] == "constant"


def test_a_theta_covariate_must_be_constant_within_an_item():
    frame = _with_item_length(_rows(seed=5, n_items=20))
    with pytest.raises(
        ValueError, match=r"constant within each item.*'first' on items \['q0', 'q1',.* \.\.\. take"
    ):
        JuryItems.from_frames(frame, judges="grader", item="item", judge="verdict",
                              covariates="first", theta_covariates=["diff", "first"])  # fmt: skip
    with pytest.raises(ValueError, match="theta_covariates must name columns"):
        JuryItems.from_frames(frame, judges="grader", item="item", judge="verdict",
                              covariates="first", theta_covariates=[3])  # fmt: skip
