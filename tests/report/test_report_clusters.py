"""The report of repeated verdicts of an item (``counts.has_clusters``).

The report only arranges numbers computed elsewhere; these tests check that each of its
tables holds the cluster-aware number, each against a reference that does not go through the
report: the naive column against Wilson's score equation at the effective size computed item
by item; the corrected θ against ``bj.estimate`` (cluster-delta); the Δθ table and the bottom
line against ``bj.compare`` (cluster-delta, validated in tests/core/test_cluster_difference.py);
the judge table of labelled items judged several times against Wilson and Newcombe on the
effective counts written out by hand; the diagnostics' closed-form Δθ against compare.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayesjudge as bj
from bayesjudge.compare import compare
from bayesjudge.core.kernels import linear_combination_interval, wilson_limits
from bayesjudge.diagnostics import comparison_table
from bayesjudge.report import build_report
from bayesjudge.report import tables as report_tables
from bayesjudge.simulate import simulate_repeated_items
from bayesjudge.warnings import ConvergenceWarning


def _counts(thetas, seed, labelled_share=None, q0=0.8):
    tests, cals = [], []
    for s, theta in enumerate(thetas):
        test, cal = simulate_repeated_items(
            theta, q0, 0.9, n=150, m0=60, m1=60, epochs=3, icc=0.4, random_seed=seed + s
        )
        test["system"] = cal["system"] = f"s{s}"
        if labelled_share is not None:  # random design: humans label a share of the items
            rng = np.random.default_rng(seed + 50 + s)
            chosen = rng.choice(150, int(labelled_share * 150), replace=False)
            test["human"] = np.where(test["item"].isin(chosen), test["truth"], np.nan)
        tests.append(test.drop(columns="truth"))
        cals.append(cal)
    test, cal = pd.concat(tests, ignore_index=True), pd.concat(cals, ignore_index=True)
    if labelled_share is not None:
        return bj.JudgeCounts.from_frames(test, item="item", repeats="epoch", system="system")
    return bj.JudgeCounts.from_frames(test, cal, item="item", repeats="epoch", system="system")


@pytest.fixture(scope="module")
def clustered():
    return _counts([0.75, 0.5, 0.6], seed=3)


@pytest.fixture(scope="module")
def report(clustered):
    return build_report(clustered, random_seed=4, warn=False)


def _items(table):
    """(r, k) arrays of the items of one cluster table, written out one entry per item."""
    r, k = [], []
    for ri in range(table.shape[0]):
        for ki in range(table.shape[1]):
            r += [ri + 1] * int(table[ri, ki])
            k += [ki] * int(table[ri, ki])
    return np.array(r, dtype=float), np.array(k, dtype=float)


def test_naive_column_is_the_share_of_verdicts_with_the_cluster_robust_wilson(clustered, report):
    theta = report.tables["theta"]
    z = stats.norm.ppf(0.975)
    for s, system in enumerate(clustered.systems):
        table = clustered.clusters.isel(system=s, stratum=0).values
        r, k = _items(table)
        p = k.sum() / r.sum()
        var = len(r) / (len(r) - 1) * np.sum((k - p * r) ** 2) / r.sum() ** 2
        size = p * (1 - p) / var
        row = theta[theta["system"] == system].iloc[0]
        assert row["naive"] == pytest.approx(p, rel=1e-14)
        for limit in (row["naive_lower"], row["naive_upper"]):
            assert (p - limit) ** 2 == pytest.approx(z**2 * limit * (1 - limit) / size, rel=1e-9)
        assert size < len(r) * 3  # fewer effective draws than verdicts: the design effect
    assert theta.attrs["headers"]["naive"] == report_tables.CLUSTER_NAIVE_LABEL


def test_corrected_column_and_comparisons_are_cluster_aware(clustered, report):
    theta = report.tables["theta"]
    est = bj.estimate(clustered)
    assert est.attrs["method"] == "cluster-delta" == theta.attrs["method"]
    np.testing.assert_array_equal(theta["corrected"], est["estimate"].values.ravel())
    np.testing.assert_array_equal(
        theta["corrected_lower"], est["ci"].sel(ci_bound="lower").values.ravel()
    )
    diff = report.tables["theta_difference"]
    freq = compare(clustered)  # cluster-delta, no resampling: the report's comparison
    np.testing.assert_array_equal(diff["frequentist"], freq["estimate"].values.ravel())
    np.testing.assert_array_equal(
        diff["frequentist_upper"], freq["ci"].sel(ci_bound="upper").values.ravel()
    )
    assert report.settings["frequentist method"] == "cluster-delta"
    naive = compare(clustered.without_clusters(), method="delta")
    assert (freq["se"].values > naive["se"].values).all()


def test_bottom_line_ranks_by_the_cluster_delta_theta(clustered, report):
    bottom = report.tables["bottom_line"]
    est = bj.estimate(clustered)["estimate"].squeeze("stratum").to_series()
    assert bottom["system"].tolist() == est.sort_values(ascending=False).index.tolist()
    md = report.to_markdown()
    assert "## The bottom line" in md and "Repeated verdicts, unpaired comparisons" in md
    assert "cluster-robust Wilson" in md and "cluster_difference_delta" in md
    assert "one verdict per item" not in md  # the single-verdict caveat does not apply


def test_diagnostics_closed_form_difference_is_the_cluster_one(clustered):
    table = comparison_table(clustered, 0.05)
    freq = compare(clustered)
    np.testing.assert_allclose(table["delta_theta_se"].values, freq["se"].values, rtol=1e-12)


@pytest.fixture(scope="module")
def labelled_repeats():
    return _counts([0.7, 0.55], seed=13, labelled_share=0.8)


def test_judge_table_counts_labelled_items_not_verdicts(labelled_repeats):
    c = labelled_repeats
    assert c.calibration_clusters is not None and c.design == "random"
    report = build_report(c, random_seed=2, warn=False)
    judge = report.tables["judge"]
    z = stats.norm.ppf(0.975)
    for s, system in enumerate(c.systems):
        tables = c.calibration_clusters.isel(system=s, stratum=0).values  # (truth, R, R + 1)
        eff = []
        for truth in (0, 1):
            r, k = _items(tables[truth])
            agree = r - k if truth == 0 else k
            q = agree.sum() / r.sum()
            var = np.sum((agree - q * r) ** 2) / r.sum() ** 2  # no N/(N-1): cluster_delta's
            eff.append((q * q * (1 - q) / var, q * (1 - q) / var))
        row = judge[(judge["system"] == system) & (judge["method"] == "closed form")].iloc[0]
        for name, (x, m) in zip(("q0", "q1"), eff, strict=True):
            lo, hi = wilson_limits(x, m, z)
            assert row[name] == pytest.approx(x / m, rel=1e-12)
            assert row[f"{name}_lower"] == pytest.approx(lo, rel=1e-10)
            assert row[f"{name}_upper"] == pytest.approx(hi, rel=1e-10)
        j = linear_combination_interval(list(eff), (1, 1), -1.0, 0.05, "newcombe", 1.0)
        assert row["J_lower"] == pytest.approx(float(j.lower), rel=1e-10)
        verdict_j = bj.core.youden(*(int(c[f].isel(system=s).item()) for f in
                                    ("tn", "m0", "tp", "m1")), method="newcombe")  # fmt: skip
        assert row["J_upper"] - row["J_lower"] > float(verdict_j.upper - verdict_j.lower)
    diff = report.tables["theta_difference"]
    freq = compare(c)
    np.testing.assert_array_equal(diff["frequentist"], freq["estimate"].values.ravel())
    assert "effective counts" in report.to_markdown()


def test_explicit_comparison_methods(clustered):
    rep = build_report(clustered, random_seed=5, comparison_method="cluster-bootstrap",
                       n_resamples=1000, warn=False)  # fmt: skip
    freq = compare(clustered, "cluster-bootstrap", n_resamples=1000, random_seed=5)
    np.testing.assert_array_equal(
        rep.tables["theta_difference"]["frequentist_lower"],
        freq["ci"].sel(ci_bound="lower").values.ravel(),
    )
    with pytest.raises(ValueError, match="cluster-delta"):
        build_report(clustered, comparison_method="bootstrap", warn=False)


def test_docs_section_example_runs(clustered):
    # docs/repeated-verdicts.md, "Comparisons and the report": its code block on such counts.
    page = Path(__file__).resolve().parents[2] / "docs" / "repeated-verdicts.md"
    section = page.read_text(encoding="utf-8").split("## Comparisons and the report", 1)[1]
    block = re.search(r"```\n(.*?)```", section, flags=re.S).group(1)
    namespace = {"bj": bj, "counts": clustered}
    exec(compile(block, str(page), "exec"), namespace)
    assert namespace["report"].tables["theta"]["corrected"].notna().all()


@pytest.mark.slow
def test_report_with_the_item_effect_fit(clustered):
    """bj.fit of clustered counts (the item-effect model) renders every Bayesian section."""
    counts = clustered.sel(system=["s0", "s1"])
    with warnings.catch_warnings():
        # Few draws: a fast check of the report, not of the sampler (the report states it).
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = bj.fit(counts, draws=300, tune=300, chains=2, random_seed=1, progressbar=False)
    assert fit.config["model"] == "item-effect"
    report = build_report(fit=fit, random_seed=1, warn=False)
    theta = report.tables["theta"]
    posterior = fit.posterior["theta"].mean(("chain", "draw"))
    for _, row in theta.iterrows():
        expected = float(posterior.sel(system=row["system"], stratum=row["stratum"]))
        assert row["bayes"] == pytest.approx(expected, rel=1e-12)
    diff = report.tables["theta_difference"]
    assert diff["bayes_difference"].notna().all() and diff["prob_greater"].notna().all()
    assert "ppc" in report.tables and "bottom_line" in report.tables
    assert report.settings["Bayesian fit"].startswith("model='item-effect'")
    md = report.to_markdown()
    assert "Bayesian θ: mean [ETI]" in md and "P(above the next)" in md
    np.testing.assert_array_equal(diff["frequentist"], compare(counts)["estimate"].values.ravel())


def test_low_j_finding_counts_labelled_items_not_verdicts():
    """A weak judge (q0 = 0.2, J = 0.1) on labelled items judged 3 times: the low-J rule's Newcombe
    interval is the one of the effective counts (written out item by item), wider than the
    verdict counts' one."""
    c = _counts([0.6], seed=31, labelled_share=0.8, q0=0.2)
    found = [
        d
        for d in bj.diagnostics.check_comparison(c, warn=False, random_seed=1)
        if d.code == "low_j"
    ]
    assert len(found) == 1
    tables = c.calibration_clusters.isel(system=0, stratum=0).values
    eff = []
    for truth in (0, 1):
        r, k = _items(tables[truth])
        agree = r - k if truth == 0 else k
        q = agree.sum() / r.sum()
        var = np.sum((agree - q * r) ** 2) / r.sum() ** 2
        eff.append((q * q * (1 - q) / var, q * (1 - q) / var))
    j = linear_combination_interval(eff, (1, 1), -1.0, 0.05, "newcombe", 1.0)
    assert found[0].values["lower"] == pytest.approx(float(j.lower), rel=1e-10)
    assert found[0].values["upper"] == pytest.approx(float(j.upper), rel=1e-10)
    verdicts = bj.core.youden(*(int(c[f].item()) for f in ("tn", "m0", "tp", "m1")),
                              method="newcombe")  # fmt: skip
    assert float(j.upper - j.lower) > float(verdicts.upper - verdicts.lower)


def test_ppc_table_names_each_cell_of_the_cluster_tables():
    # Fit.ppc() of the item-effect model replicates the cluster tables; the report's PPC table
    # keeps which cell each row is (truth, r, j) and drops the r rows without items.
    from types import SimpleNamespace

    import xarray as xr

    counts = bj.JudgeCounts.from_counts(n=10, k=6, m0=5, tn=4, m1=5, tp=4)
    obs = xr.DataArray(
        [[[[3, 1, 0], [0, 0, 0], [2, 2, 2]]]],
        dims=("system", "stratum", "repeats", "positives"),
        coords={"system": ["all"], "stratum": ["all"], "repeats": [1, 2, 3],
                "positives": [0, 1, 2]},
    )  # fmt: skip
    cal = obs.expand_dims(label=[0, 1], axis=2)
    observed = xr.Dataset({"clusters": obs, "calibration_clusters": cal})
    p_value = xr.Dataset({"clusters": obs * 0 + 0.5, "calibration_clusters": cal * 0 + 0.01})
    check = SimpleNamespace(observed=observed, p_value=p_value)
    table = report_tables.ppc_table(check, 0.95, counts)
    test_rows = table[table["variable"].str.startswith("clusters")]
    assert len(test_rows) == 6  # r = 2 has no items
    assert "clusters [items judged 3× with 2 correct]" in set(test_rows["variable"])
    cal_rows = table[table["variable"].str.startswith("calibration_clusters")]
    assert "calibration_clusters [truth 1, items judged 1× with 0 correct]" in set(
        cal_rows["variable"]
    )
    assert cal_rows["outside"].all() and not test_rows["outside"].any()
