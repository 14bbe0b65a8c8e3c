"""Counting repeated verdicts of an item: ``JudgeCounts.from_frames(..., repeats=...)``.

The reference cluster table is tallied here with a pandas ``groupby`` over (system, stratum,
item) of the same rows, independently of the engine-side counting query.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
import xarray as xr

import bayesjudge as bj
from bayesjudge.simulate import simulate_repeated_items
from bayesjudge.warnings import LowJudgeQualityWarning, MissingLabelWarning


def reference_table(frame: pd.DataFrame, systems, strata, judge="judge") -> np.ndarray:
    groups = [c for c in ("system", "stratum") if c in frame.columns]
    per_item = frame.groupby([*groups, "item"])[judge].agg(["size", "sum"]).reset_index()
    size = int(per_item["size"].max())
    out = np.zeros((len(systems), len(strata), size, size + 1), dtype=np.int64)
    for row in per_item.itertuples():
        i = systems.index(row.system) if "system" in groups else 0
        j = strata.index(row.stratum) if "stratum" in groups else 0
        out[i, j, row.size - 1, row.sum] += 1
    return out


@pytest.fixture(scope="module")
def grouped():
    rng = np.random.default_rng(4)
    frames = []
    for s in ("a", "b"):
        for t in ("x", "y"):
            epochs = rng.integers(1, 5, size=30)  # a varying number of verdicts per item
            item = np.repeat([f"{t}-{i}" for i in range(30)], epochs)
            epoch = np.concatenate([np.arange(1, e + 1) for e in epochs])
            frames.append(
                pd.DataFrame(
                    {
                        "system": s,
                        "stratum": t,
                        "item": item,
                        "epoch": epoch,
                        "judge": rng.integers(0, 2, size=item.size),
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


def test_counts_match_a_direct_tally(grouped):
    c = bj.JudgeCounts.from_frames(
        grouped, item="item", repeats="epoch", system="system", stratum="stratum", human=None
    )
    expected = reference_table(grouped, ["a", "b"], ["x", "y"])
    assert c.clusters.transpose("system", "stratum", "repeats", "positives").shape == (
        expected.shape
    )
    np.testing.assert_array_equal(c.clusters.values, expected)
    totals = grouped.groupby(["system", "stratum"])["judge"].agg(["size", "sum"])
    assert c.n.values.ravel().tolist() == totals["size"].tolist()
    assert c.k.values.ravel().tolist() == totals["sum"].tolist()
    assert c.has_clusters and "clusters" in c.keys()


@pytest.mark.parametrize("engine", ["polars", "pyarrow", "duckdb", "csv"])
def test_engines_agree_with_pandas(grouped, engine, tmp_path):
    options = {"item": "item", "repeats": "epoch", "system": "system", "human": None}
    base = bj.JudgeCounts.from_frames(grouped, **options)
    if engine == "polars":
        table = pl.from_pandas(grouped).lazy()
    elif engine == "pyarrow":
        table = pa.Table.from_pandas(grouped)
    elif engine == "duckdb":
        con = duckdb.connect()
        table = con.from_df(grouped)
    else:
        table = tmp_path / "verdicts.csv"
        grouped.to_csv(table, index=False)
    other = bj.JudgeCounts.from_frames(table, **options)
    xr.testing.assert_equal(other.dataset, base.dataset)


def test_simulated_items_with_calibration_round_trip():
    test, calib = simulate_repeated_items(
        0.5, 0.8, 0.9, n=50, m0=20, m1=25, epochs=3, icc=0.5, random_seed=3
    )
    c = bj.JudgeCounts.from_frames(test, calib, item="item", repeats="epoch")
    assert (c.n.item(), c.k.item()) == (150, int(test["judge"].sum()))
    assert (c.m0.item(), c.m1.item()) == (20, 25)
    np.testing.assert_array_equal(c.clusters.values, reference_table(test, ["all"], ["all"]))


def test_one_table_random_design_with_repeated_unlabelled_items():
    table = pd.DataFrame({
        "item": [1, 1, 1, 2, 2, 3, 4, 5],
        "epoch": [1, 2, 3, 1, 2, 1, 1, 1],
        "judge": [1, 1, 0, 0, 0, 1, 1, 0],
        "human": [None, None, None, None, None, 1, 0, 0],
    })  # fmt: skip
    c = bj.JudgeCounts.from_frames(table, item="item", repeats="epoch")
    assert c.design == "random"
    assert (c.n.item(), c.k.item()) == (5, 2)  # the unlabelled verdicts
    assert (c.m0.item(), c.tn.item(), c.m1.item(), c.tp.item()) == (2, 1, 1, 1)
    assert c.clusters.sel(repeats=3, positives=2).item() == 1
    assert c.clusters.sel(repeats=2, positives=0).item() == 1


def test_one_verdict_per_item_gives_a_table_without_clusters():
    table = pd.DataFrame({"item": [1, 2, 3], "epoch": [1, 1, 1], "judge": [1, 0, 1]})
    calib = pd.DataFrame({"judge": [1] * 30 + [0] * 30, "human": [1] * 27 + [0] * 30 + [1] * 3})
    c = bj.JudgeCounts.from_frames(table, calib, item="item", repeats="epoch")
    assert not c.has_clusters and c.clusters is not None
    plain = bj.JudgeCounts.from_frames(table, calib)
    assert bj.estimate(c).attrs["method"] == bj.estimate(plain).attrs["method"]
    xr.testing.assert_equal(bj.estimate(c)["ci"], bj.estimate(plain)["ci"])


def test_repeated_ids_without_repeats_name_the_option(grouped):
    with pytest.raises(ValueError, match=r"repeats='epoch'"):
        bj.JudgeCounts.from_frames(grouped, item="item", system="system", human=None)


def test_a_repeated_item_and_epoch_pair_is_an_error():
    table = pd.DataFrame({"item": [1, 1, 2], "epoch": [1, 1, 1], "judge": [1, 0, 1]})
    with pytest.raises(ValueError, match=r"item 1 epoch=1 \(2 rows\)"):
        bj.JudgeCounts.from_frames(table, item="item", repeats="epoch", human=None)


def test_missing_epoch_and_missing_item_are_errors():
    table = pd.DataFrame({"item": [1, 1, 2], "epoch": [1, None, 1], "judge": [1, 0, 1]})
    with pytest.raises(ValueError, match="1 row without a value"):
        bj.JudgeCounts.from_frames(table, item="item", repeats="epoch", human=None)
    table = pd.DataFrame({"item": ["a", None, "b"], "epoch": [1, 1, 1], "judge": [1, 0, 1]})
    with pytest.raises(ValueError, match="missing item id"):
        bj.JudgeCounts.from_frames(table, item="item", repeats="epoch", human=None)


def test_an_item_in_two_strata_is_an_error():
    table = pd.DataFrame({"item": [1, 1], "epoch": [1, 2], "t": ["x", "y"], "judge": [1, 0]})
    with pytest.raises(ValueError, match="two strata"):
        bj.JudgeCounts.from_frames(table, item="item", repeats="epoch", stratum="t", human=None)


def test_repeats_needs_item_and_an_existing_column():
    table = pd.DataFrame({"item": [1, 1], "epoch": [1, 2], "judge": [1, 0]})
    with pytest.raises(ValueError, match="item=<its item-id column>"):
        bj.JudgeCounts.from_frames(table, repeats="epoch", human=None)
    with pytest.raises(ValueError, match="sample"):
        bj.JudgeCounts.from_frames(table, item="item", repeats="sample", human=None)


def test_rows_without_a_verdict_are_dropped_from_items_and_totals_alike():
    table = pd.DataFrame(
        {"item": [1, 1, 2, 2], "epoch": [1, 2, 1, 2], "judge": [1, None, None, None]}
    )
    with pytest.warns(MissingLabelWarning):
        c = bj.JudgeCounts.from_frames(table, item="item", repeats="epoch", human=None)
    assert (c.n.item(), c.k.item(), int(c.clusters.sum())) == (1, 1, 1)


def test_sel_pool_and_calibration_keep_the_cluster_table(grouped):
    c = bj.JudgeCounts.from_frames(
        grouped, item="item", repeats="epoch", system="system", stratum="stratum", human=None
    )
    one = c.sel(system="b", stratum="y")
    np.testing.assert_array_equal(
        one.clusters.values[0, 0], c.clusters.sel(system="b", stratum="y").values
    )
    pooled = c.pool("stratum")
    np.testing.assert_array_equal(pooled.clusters.values[:, 0], c.clusters.sum("stratum").values)
    calib = bj.JudgeCounts.from_counts(m0=40, tn=30, m1=60, tp=54)
    assert c.with_calibration_from(calib).clusters.equals(c.clusters)
    assert not c.without_clusters().has_clusters


def test_a_dataset_whose_table_does_not_add_up_is_refused(grouped):
    c = bj.JudgeCounts.from_frames(
        grouped, item="item", repeats="epoch", system="system", stratum="stratum", human=None
    )
    ds = c.dataset.copy()
    ds["n"] = ds["n"] + 1
    with pytest.raises(ValueError, match="does not add up to n"):
        bj.JudgeCounts(ds)
    ds = c.dataset.copy()
    ds["clusters"] = ds["clusters"].copy()
    ds["clusters"][0, 0, 0, 0] = -1
    with pytest.raises(ValueError, match="whole numbers >= 0"):
        bj.JudgeCounts(ds)
    bad = c.dataset.assign_coords(repeats=c.dataset["repeats"].values + 1)
    with pytest.raises(ValueError, match="repeats 1"):
        bj.JudgeCounts(bad)


def reference_calibration_table(frame: pd.DataFrame, size: int) -> np.ndarray:
    """(truth, R, R + 1) of the labelled rows, tallied with a pandas groupby by item."""
    labelled = frame[frame["human"].notna()]
    per_item = labelled.groupby("item").agg(
        r=("judge", "size"), k=("judge", "sum"), truth=("human", "first")
    )
    out = np.zeros((2, size, size + 1), dtype=np.int64)
    for row in per_item.itertuples():
        out[int(row.truth), row.r - 1, row.k] += 1
    return out


@pytest.fixture(scope="module")
def labelled_epochs():
    # 40 unlabelled and 20 labelled items, 1-4 verdicts each; labelled rows carry the label.
    rng = np.random.default_rng(12)
    epochs = rng.integers(1, 5, size=60)
    item = np.repeat(np.arange(60), epochs)
    truth = rng.integers(0, 2, size=60)
    human = np.where(item < 20, truth[item].astype(float), np.nan)
    judge = np.where(rng.random(item.size) < 0.85, truth[item], 1 - truth[item])
    return pd.DataFrame({
        "item": item, "epoch": np.concatenate([np.arange(1, e + 1) for e in epochs]),
        "judge": judge, "human": human,
    })  # fmt: skip


@pytest.mark.parametrize("engine", ["pandas", "polars"])
def test_repeated_labelled_items_are_counted_as_calibration_clusters(labelled_epochs, engine):
    frame = labelled_epochs if engine == "pandas" else pl.from_pandas(labelled_epochs)
    c = bj.JudgeCounts.from_frames(frame, item="item", repeats="epoch")
    size = c.clusters.sizes["repeats"]
    ref = reference_calibration_table(labelled_epochs, size)
    np.testing.assert_array_equal(c.calibration_clusters.squeeze(("system", "stratum")), ref)
    lab = labelled_epochs[labelled_epochs["human"].notna()]
    unl = labelled_epochs[labelled_epochs["human"].isna()]
    # m0, tn, m1, tp count verdicts: a direct tally of the labelled rows.
    assert c.m0.item() == (lab["human"] == 0).sum()
    assert c.tn.item() == ((lab["human"] == 0) & (lab["judge"] == 0)).sum()
    assert c.m1.item() == (lab["human"] == 1).sum()
    assert c.tp.item() == ((lab["human"] == 1) & (lab["judge"] == 1)).sum()
    assert (c.n.item(), c.k.item()) == (len(unl), unl["judge"].sum())
    np.testing.assert_array_equal(
        c.clusters.squeeze(("system", "stratum")), reference_table(unl, ["all"], ["all"])[0, 0]
    )
    assert c.design == "random" and c.has_clusters
    # The human-only baseline counts labelled items, not verdicts.
    res = bj.estimate(c)
    truths = lab.groupby("item")["human"].first()
    assert float(res["human_estimate"].squeeze()) == pytest.approx(truths.mean(), rel=1e-14)


def test_estimate_passes_the_calibration_tables_to_the_core(labelled_epochs):
    from bayesjudge.core.cluster import cluster_bootstrap, cluster_delta

    c = bj.JudgeCounts.from_frames(labelled_epochs, item="item", repeats="epoch")
    table = c.clusters.squeeze(("system", "stratum")).values
    cal = c.calibration_clusters.squeeze(("system", "stratum")).values
    totals = [int(c[v].item()) for v in ("tn", "m0", "tp", "m1")]
    res = bj.estimate(c, "cluster-delta")
    core = cluster_delta(table, *totals, calibration_tables=cal)
    assert res["ci"].squeeze().values.tolist() == [core.lower, core.upper]
    res = bj.estimate(c, "cluster-bootstrap", random_seed=2, n_resamples=1000)
    core = cluster_bootstrap(
        table, *totals, calibration_tables=cal, n_resamples=1000, random_seed=2,
        calibration_design="random",
    )  # fmt: skip
    assert res["ci"].squeeze().values.tolist() == [core.lower, core.upper]
    for method in ("likelihood", "lang-reiczigel"):
        with pytest.raises(ValueError, match="would count verdicts as items"):
            bj.estimate(c, method)


def test_one_verdict_per_labelled_item_changes_nothing():
    # Two unlabelled items judged 3 and 2 times; 30 labelled items judged once (J-hat 0.8).
    human = [i % 2 for i in range(30)]
    judge = [h if i % 10 else 1 - h for i, h in enumerate(human)]
    table = pd.DataFrame({
        "item": [1, 1, 1, 2, 2, *range(3, 33)],
        "epoch": [1, 2, 3, 1, 2, *[1] * 30],
        "judge": [1, 1, 0, 0, 0, *judge],
        "human": [None] * 5 + human,
    })  # fmt: skip
    c = bj.JudgeCounts.from_frames(table, item="item", repeats="epoch")
    assert c.calibration_clusters.sel(repeats=slice(2, None)).sum() == 0
    plain = bj.JudgeCounts(c.dataset.drop_vars(["calibration_clusters", "truth"]))
    for method in ("cluster-delta", "cluster-bootstrap"):
        a = bj.estimate(c, method, random_seed=1, n_resamples=1000)
        b = bj.estimate(plain, method, random_seed=1, n_resamples=1000)
        assert a["ci"].equals(b["ci"]) and a["human_ci"].equals(b["human_ci"])


def test_bad_repeated_labelled_rows_are_errors():
    table = pd.DataFrame({
        "item": [1, 1, 2, 2, 3, 3], "epoch": [1, 2] * 3, "judge": [1, 1, 0, 1, 1, 0],
        "human": [1, 0, None, None, 0, 0],
    })  # fmt: skip
    with pytest.raises(ValueError, match=r"different human labels.*\(system"):
        bj.JudgeCounts.from_frames(table, item="item", repeats="epoch")
    table.loc[1, ["human", "epoch"]] = [1, 1]
    with pytest.raises(ValueError, match=r"labelled rows.*item 1 epoch=1 \(system 'all', 2 rows"):
        bj.JudgeCounts.from_frames(table, item="item", repeats="epoch")


def test_a_matched_calibration_table_still_needs_one_verdict_per_labelled_item():
    table = pd.DataFrame({
        "item": [1, 1, 2, 2, 3, 3], "epoch": [1, 2] * 3, "judge": [1, 1, 0, 1, 1, 0],
    })  # fmt: skip
    gold = pd.DataFrame({"item": [1, 3], "judge": [1, 0], "human": [1, 0]})
    with pytest.raises(ValueError, match="needs one verdict per labelled item"):
        bj.JudgeCounts.from_frames(table, gold, item="item", repeats="epoch", design="random")


def test_a_separate_calibration_table_with_repeats_is_counted_as_clusters(labelled_epochs):
    # Stratified design: the labelled items are their own items ("cal-…"), judged 1-4 times.
    lab = labelled_epochs[labelled_epochs["human"].notna()].copy()
    lab["item"] = "cal-" + lab["item"].astype(str)
    test = labelled_epochs[labelled_epochs["human"].isna()].drop(columns="human")
    for frame in (lab, pl.from_pandas(lab)):
        c = bj.JudgeCounts.from_frames(test, frame, item="item", repeats="epoch")
        assert c.design == "stratified"
        size = c.clusters.sizes["repeats"]
        ref = reference_calibration_table(lab, size)
        np.testing.assert_array_equal(c.calibration_clusters.squeeze(("system", "stratum")), ref)
        assert (c.m0.item(), c.m1.item()) == ((lab["human"] == 0).sum(), (lab["human"] == 1).sum())
    res = bj.estimate(c, "cluster-bootstrap", random_seed=3, n_resamples=1000)
    assert res.attrs["bootstrap_design"] == "stratified"
    assert np.isnan(res["human_estimate"]).all()  # no θ from stratified labels
    # The same rows matched by id to judged items (random design): one table instead.
    with pytest.raises(ValueError, match="not matched by id"):
        bj.JudgeCounts.from_frames(
            labelled_epochs.drop(columns="human"),
            labelled_epochs[labelled_epochs["human"].notna()],
            item="item",
            repeats="epoch",
            design="random",
        )


def test_pool_and_dataset_checks_of_calibration_clusters(labelled_epochs):
    two = pd.concat([labelled_epochs.assign(system="a"), labelled_epochs.assign(system="b")])
    c = bj.JudgeCounts.from_frames(two, item="item", repeats="epoch", system="system")
    pooled = c.pool("system")
    np.testing.assert_array_equal(
        pooled.calibration_clusters.squeeze(("system", "stratum")),
        c.calibration_clusters.sum(("system", "stratum")),
    )
    assert pooled.m0.item() == c.m0.sum()
    with pytest.raises(ValueError, match="calibration_clusters"):
        c.pooled_calibration("system")
    assert not c.without_clusters().has_clusters
    bad = c.dataset.copy()
    bad["m0"] = bad["m0"] + 1
    with pytest.raises(ValueError, match="does not add up to m0"):
        bj.JudgeCounts(bad)


@pytest.mark.slow  # an Inspect run (about 20 s)
def test_estimate_from_an_inspect_log_with_epochs_and_a_gold_file(tmp_path, run_cli):
    import json
    import warnings

    from harness_logs import INSPECT_IDS, write_inspect_log

    from bayesjudge.data.harness import join_gold, read_table

    log = write_inspect_log(tmp_path)
    table = read_table(log, scorer="model_graded_qa")
    # Six labelled items of the log (random design), each judged in every epoch; the human
    # says "yes" where every verdict of the item is C (the mock grader says I about once in
    # four attempts), so both labels occur.
    ids = [str(i) for i in INSPECT_IDS[:6]]
    majority = (
        table[table["item"].isin(ids)]
        .groupby("item")["judge"]
        .agg(lambda v: "yes" if (v == "C").all() else "no")
    )
    assert set(majority) == {"yes", "no"}
    gold = tmp_path / "gold.csv"
    pd.DataFrame({"item": majority.index, "human": majority.values}).to_csv(gold, index=False)
    code, out, err = run_cli(
        ["estimate", "--test", str(log), "--scorer", "model_graded_qa", "--gold", str(gold),
         "--json"]
    )  # fmt: skip
    assert code == 0, err
    joined = join_gold(table, gold)
    assert joined.design == "random"
    counts = bj.JudgeCounts.from_frames(
        joined.test, system="system", item="item", repeats="epoch", positive={"judge": "C"}
    )
    assert counts.calibration_clusters is not None
    assert int(counts.calibration_clusters.sum()) == 6
    assert counts.m0.item() + counts.m1.item() == int(table["item"].isin(ids).sum())
    with warnings.catch_warnings():  # a weak judge on six items: the CLI printed the warning
        warnings.simplefilter("ignore", LowJudgeQualityWarning)
        expected = bj.estimate(counts)
    assert expected.attrs["method"] == "cluster-delta"
    row = json.loads(out)["results"][0]
    assert row["estimate"] == pytest.approx(float(expected["estimate"].squeeze()), nan_ok=True)
    assert {k: row[k] for k in bj.data.FIELDS} == {k: counts[k].item() for k in bj.data.FIELDS}


def test_docs_page_example_runs():
    # docs/repeated-verdicts.md: its ```python block runs as written (with warnings as errors).
    page = Path(__file__).resolve().parents[2] / "docs" / "repeated-verdicts.md"
    (block,) = re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)
    namespace: dict = {}
    exec(compile(block, str(page), "exec"), namespace)
    counts = namespace["counts"]
    assert counts.has_clusters and int(counts.clusters.sum()) == 300
    assert bj.estimate(counts).attrs["method"] == "cluster-delta"
