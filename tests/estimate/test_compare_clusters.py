"""``compare`` of counts with repeated verdicts of an item (``counts.has_clusters``).

The xarray layer over ``core.cluster.cluster_difference_delta`` and
``cluster_bootstrap_difference`` (validated in ``tests/core/test_cluster_difference.py``):
here, that compare passes each system's tables, the right calibration (own, shared, labelled
items' tables) and the seed, and refuses what would count verdicts as items.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bayesjudge as bj
from bayesjudge.compare import compare
from bayesjudge.core.cluster import cluster_bootstrap_difference, cluster_difference_delta
from bayesjudge.simulate import simulate_repeated_items
from bayesjudge.warnings import SmallSampleWarning


def _frames(thetas, seed, labelled_share=None):
    """Item tables of several systems (epochs 3); labelled items in the test table if asked."""
    tests, cals = [], []
    for s, theta in enumerate(thetas):
        test, cal = simulate_repeated_items(
            theta, 0.8, 0.9, n=120, m0=50, m1=50, epochs=3, icc=0.4, random_seed=seed + s
        )
        test["system"] = cal["system"] = f"s{s}"
        test["stratum"] = np.where(test["item"] % 2 == 0, "even", "odd")
        cal["stratum"] = np.where(np.arange(len(cal)) % 2 == 0, "even", "odd")
        if labelled_share is not None:  # random design: humans label a share of the items
            rng = np.random.default_rng(seed + 100 + s)
            chosen = set(rng.choice(120, int(labelled_share * 120), replace=False).tolist())
            test["human"] = np.where(test["item"].isin(chosen), test["truth"], np.nan)
        tests.append(test.drop(columns="truth"))
        cals.append(cal)
    return pd.concat(tests, ignore_index=True), pd.concat(cals, ignore_index=True)


@pytest.fixture(scope="module")
def clustered():
    test, cal = _frames([0.7, 0.55, 0.6], seed=11)
    return bj.JudgeCounts.from_frames(
        test, cal, item="item", repeats="epoch", system="system", stratum="stratum"
    )


@pytest.fixture(scope="module")
def labelled_repeats():
    test, _ = _frames([0.7, 0.5], seed=21, labelled_share=0.8)
    return bj.JudgeCounts.from_frames(
        test, item="item", repeats="epoch", system="system", stratum="stratum"
    )


def _core_inputs(counts, shared):
    tables = counts.clusters.transpose("stratum", "system", "repeats", "positives").values
    ds = counts.dataset
    if shared:
        cal = [ds[f].sum("system").transpose("stratum").values for f in ("tn", "m0", "tp", "m1")]
    else:
        cal = [ds[f].transpose("stratum", "system").values for f in ("tn", "m0", "tp", "m1")]
    cal_tables = None
    if counts.calibration_clusters is not None:
        dims = ("stratum", "system", "truth", "repeats", "positives")
        cal_tables = counts.calibration_clusters.transpose(*dims).values
        if shared:  # labelled items of different systems are different items: add the tables
            cal_tables = cal_tables.sum(axis=1)
    return tables, cal, cal_tables


@pytest.mark.parametrize("shared", [False, True])
def test_default_is_cluster_delta_and_matches_the_core(clustered, shared):
    calibration = "shared" if shared else "separate"
    out = compare(clustered, calibration=calibration)
    assert out.attrs["method"] == "cluster-delta" and out.attrs["clusters"] == 1
    assert out.attrs["paired"] is False and out.attrs["calibration"] == calibration
    tables, cal, _ = _core_inputs(clustered, shared)
    core = cluster_difference_delta(tables, *cal, shared_calibration=shared)
    assert out.pair.values.tolist() == ["s0 - s1", "s0 - s2", "s1 - s2"]
    np.testing.assert_array_equal(out["estimate"].values, core.estimate.T)
    np.testing.assert_array_equal(out["se"].values, core.se.T)
    np.testing.assert_array_equal(out["ci"].sel(ci_bound="lower").values, core.lower.T)
    np.testing.assert_array_equal(out["ci"].sel(ci_bound="upper").values, core.upper.T)


def test_cluster_interval_is_wider_than_verdicts_as_items(clustered):
    cl = compare(clustered, method="cluster-delta")
    naive = compare(clustered.without_clusters(), method="delta")
    np.testing.assert_allclose(cl["estimate"].values, naive["estimate"].values, rtol=1e-12)
    assert (cl["se"].values > naive["se"].values).all()


def test_cluster_bootstrap_is_seeded_and_matches_the_core(clustered):
    a = compare(clustered, "cluster-bootstrap", n_resamples=1000, random_seed=5)
    b = compare(clustered, "cluster-bootstrap", n_resamples=1000, random_seed=5)
    assert a["ci"].equals(b["ci"]) and "se" not in a
    assert a.attrs["n_resamples"] == 1000 and a.attrs["random_seed"] == "5"
    tables, cal, _ = _core_inputs(clustered, False)
    core = cluster_bootstrap_difference(
        tables, *cal, n_resamples=1000, random_seed=np.random.default_rng(5)
    )
    np.testing.assert_array_equal(a["ci"].sel(ci_bound="lower").values, core.lower.T)
    np.testing.assert_array_equal(a["estimate"].values, core.estimate.T)


@pytest.mark.parametrize("shared", [False, True])
def test_labelled_repeats_use_the_labelled_items_tables(labelled_repeats, shared):
    c = labelled_repeats
    assert c.calibration_clusters is not None and c.design == "random"
    out = compare(c, calibration="shared" if shared else "separate")
    tables, cal, cal_tables = _core_inputs(c, shared)
    core = cluster_difference_delta(
        tables, *cal, shared_calibration=shared, calibration_tables=cal_tables
    )
    np.testing.assert_array_equal(out["se"].values, core.se.T)
    boot = compare(c, "cluster-bootstrap", n_resamples=1000, random_seed=2,
                   calibration="shared" if shared else "separate")  # fmt: skip
    assert boot.attrs["bootstrap_design"] == "random"
    core_b = cluster_bootstrap_difference(
        tables, *cal, shared_calibration=shared, calibration_tables=cal_tables,
        n_resamples=1000, calibration_design="random", random_seed=np.random.default_rng(2),
    )  # fmt: skip
    np.testing.assert_array_equal(boot["ci"].sel(ci_bound="upper").values, core_b.upper.T)


def test_pairs_select_rows_of_the_same_numbers(clustered):
    full = compare(clustered)
    some = compare(clustered, pairs=[("s2", "s0")])
    assert some.pair.values.tolist() == ["s2 - s0"]
    np.testing.assert_allclose(
        some["estimate"].values[0], -full["estimate"].sel(pair="s0 - s2").values, rtol=1e-12
    )
    np.testing.assert_allclose(
        some["se"].values[0], full["se"].sel(pair="s0 - s2").values, rtol=1e-12
    )


def test_methods_that_count_verdicts_as_items_are_refused(clustered):
    for method in ("bootstrap", "delta"):
        with pytest.raises(ValueError, match=r"cluster-delta.*without_clusters"):
            compare(clustered, method=method)
    plain = bj.JudgeCounts.from_counts(n=[100, 90], k=[60, 50], m0=40, tn=30, m1=40, tp=35,
                                       system=["a", "b"])  # fmt: skip
    with pytest.raises(ValueError, match="one verdict per item"):
        compare(plain, method="cluster-delta")
    assert compare(plain).attrs["method"] == "bootstrap"  # None is still the bootstrap here
    with pytest.raises(ValueError, match="calibration must be one of"):
        compare(clustered, calibration="own")


def test_a_system_without_test_items_in_a_stratum_is_nan_with_a_warning():
    test, cal = _frames([0.7, 0.5, 0.6], seed=31)
    test = test[~((test["system"] == "s1") & (test["stratum"] == "odd"))]
    c = bj.JudgeCounts.from_frames(
        test, cal, item="item", repeats="epoch", system="system", stratum="stratum"
    )
    with pytest.warns(SmallSampleWarning, match="no test items"):
        out = compare(c)
    odd = out["estimate"].sel(stratum="odd")
    assert np.isnan(odd.sel(pair="s0 - s1")) and np.isnan(odd.sel(pair="s1 - s2"))
    assert np.isfinite(odd.sel(pair="s0 - s2"))
    alone = compare(c.sel(system=["s0", "s2"], stratum="odd"))
    assert float(alone["estimate"].item()) == float(odd.sel(pair="s0 - s2"))
