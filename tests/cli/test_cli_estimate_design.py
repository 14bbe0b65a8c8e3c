"""``bayesjudge estimate`` and ``fit`` with the labelling design and the estimand (issue 15).

The random-design tables are written here: every item judged, a random subset labelled by
humans (one table with a ``human`` column empty for the unlabelled rows, or the unlabelled
and the labelled items in two tables with ``--design random``). The expected numbers come
from ``bj.estimate`` on counts tallied here with pandas (each item counted once: n, k over the
unlabelled items; m0, tn, m1, tp over the labelled ones), not from the package's counting.
"""

import json

import numpy as np
import pandas as pd
import pytest

import bayesjudge as bj

SYSTEMS = ("alpha", "beta")


@pytest.fixture(scope="module")
def random_tables(tmp_path_factory):
    """(one table, unlabelled table, labelled table) CSV paths and the tallied counts.

    Per system 1000 judged items, 150 of them labelled at random; θ = 0.35 and 0.7, judge
    q0 = 0.8, q1 = 0.9; seed 11.
    """
    rng = np.random.default_rng(11)
    rows = []
    for system, theta in zip(SYSTEMS, (0.35, 0.7), strict=True):
        truth = rng.random(1000) < theta
        judge = np.where(truth, rng.random(1000) < 0.9, rng.random(1000) >= 0.8)
        labelled = np.zeros(1000, dtype=bool)
        labelled[rng.choice(1000, 150, replace=False)] = True
        rows.append(
            pd.DataFrame(
                {
                    "model": system,
                    "judge": judge.astype(int),
                    "human": np.where(labelled, truth.astype(int).astype(str), ""),
                }
            )
        )
    table = pd.concat(rows, ignore_index=True)
    folder = tmp_path_factory.mktemp("random_tables")
    one = folder / "one.csv"
    table.to_csv(one, index=False)
    unlabelled, labelled = folder / "unlabelled.csv", folder / "labelled.csv"
    table[table["human"] == ""].drop(columns="human").to_csv(unlabelled, index=False)
    table[table["human"] != ""].to_csv(labelled, index=False)
    tally = {f: [] for f in ("n", "k", "m0", "tn", "m1", "tp")}
    for system in SYSTEMS:
        t = table[table["model"] == system]
        u, lab = t[t["human"] == ""], t[t["human"] != ""]
        human = lab["human"].astype(int)
        tally["n"].append(len(u))
        tally["k"].append(int(u["judge"].sum()))
        tally["m0"].append(int((human == 0).sum()))
        tally["tn"].append(int(((human == 0) & (lab["judge"] == 0)).sum()))
        tally["m1"].append(int((human == 1).sum()))
        tally["tp"].append(int(((human == 1) & (lab["judge"] == 1)).sum()))
    counts = bj.JudgeCounts.from_counts(**tally, system=list(SYSTEMS), design="random")
    return str(one), str(unlabelled), str(labelled), counts


def _payload(run_cli, args):
    code, out, err = run_cli(["estimate", *args, "--system", "model", "--json"])
    assert code == 0, err
    return json.loads(out)


def _check_rows(payload, expected):
    rows = {r["system"]: r for r in payload["results"]}
    for system in SYSTEMS:
        exp = expected.sel(system=system).squeeze()
        row = rows[system]
        assert row["estimate"] == pytest.approx(float(exp["estimate"]), abs=1e-12)
        assert row["lower"] == pytest.approx(float(exp["ci"][0]), abs=1e-12)
        assert row["upper"] == pytest.approx(float(exp["ci"][1]), abs=1e-12)
        assert row["human_estimate"] == pytest.approx(float(exp["human_estimate"]), abs=1e-12)
        assert row["human_lower"] == pytest.approx(float(exp["human_ci"][0]), abs=1e-12)
        assert row["human_upper"] == pytest.approx(float(exp["human_ci"][1]), abs=1e-12)


def test_one_table_is_the_random_design_with_the_likelihood_by_default(random_tables, run_cli):
    one, _, _, counts = random_tables
    payload = _payload(run_cli, ["--test", one])
    expected = bj.estimate(counts)
    assert expected.attrs["method"] == "likelihood"
    assert payload["settings"]["design"] == "random"
    assert payload["settings"]["method"] == "likelihood"
    assert payload["settings"]["estimand"] == "population"
    _check_rows(payload, expected)
    rows = {r["system"]: r for r in payload["results"]}
    for i, system in enumerate(SYSTEMS):  # each item counted once
        assert rows[system]["n"] == counts.dataset["n"].values[i, 0]
        assert rows[system]["m0"] + rows[system]["m1"] == 150


def test_two_tables_with_design_random_give_the_same_numbers(random_tables, run_cli):
    _, unlabelled, labelled, counts = random_tables
    payload = _payload(
        run_cli, ["--test", unlabelled, "--calibration", labelled, "--design", "random"]
    )
    assert payload["settings"]["design"] == "random"
    _check_rows(payload, bj.estimate(counts))


def test_table_states_design_method_and_human_only_baseline(random_tables, run_cli):
    one, _, _, counts = random_tables
    code, out, err = run_cli(["estimate", "--test", one, "--system", "model"])
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("labelling design: random")
    assert lines[1].startswith("method: likelihood (") and "the random design's default" in lines[1]
    assert "estimand: population" in lines[1]
    header = lines[2]
    assert "human-only" in header and "human-only 95% interval" in header
    expected = bj.estimate(counts)
    for system in SYSTEMS:
        row = next(line for line in lines if line.strip().startswith(system))
        exp = expected.sel(system=system).squeeze()
        ci, human = exp["ci"].values, exp["human_ci"].values
        assert f"[{ci[0]:.3f}, {ci[1]:.3f}]" in row
        assert f"{float(exp['human_estimate']):.3f}" in row
        assert f"[{human[0]:.3f}, {human[1]:.3f}]" in row
    width = expected["ci"].diff("ci_bound").values.ravel()
    human_width = expected["human_ci"].diff("ci_bound").values.ravel()
    narrower = int((width < human_width).sum())
    assert f"narrower than the human-only one (labelled items alone) in {narrower} of 2" in out
    assert "Lee et al. Sec. 6" in out


def test_test_set_estimand(random_tables, run_cli):
    one, _, _, counts = random_tables
    payload = _payload(run_cli, ["--test", one, "--estimand", "test-set"])
    assert payload["settings"]["estimand"] == "test-set"
    expected = bj.estimate(counts, estimand="test-set")
    _check_rows(payload, expected)
    population = bj.estimate(counts)
    assert not np.allclose(expected["ci"].values, population["ci"].values)
    code, out, err = run_cli(["estimate", "--test", one, "--estimand", "test-set"])
    assert code == 0, err
    assert "estimand: test-set" in out and "human-only" in out
    assert "narrower than the human-only one" not in out  # widths of different estimands


def test_stratified_tables_keep_lang_reiczigel_and_show_no_baseline(tables, run_cli):
    test_csv, cal_csv = tables
    args = ["--test", str(test_csv), "--calibration", str(cal_csv), "--judge", "verdict"]
    args += ["--human", "gold", "--system", "model"]
    code, out, err = run_cli(["estimate", *args])
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("labelling design: stratified")
    assert lines[1].startswith("method: lang-reiczigel (")
    assert "human-only" not in out
    code, out, err = run_cli(["estimate", *args, "--method", "ppi++"])
    assert code == 0, err
    assert "method: ppi++ (" in out and "chosen with --method" in out


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--method", "likelihood"], "method='likelihood' needs the random labelling design"),
        (["--estimand", "test-set"], "estimand='test-set'"),
        (["--estimand", "sample"], "--estimand"),
        (["--method", "profile"], "--method"),
    ],
)
def test_mistakes_are_one_line(tables, run_cli, one_error_line, extra, match):
    test_csv, cal_csv = tables
    args = ["--test", str(test_csv), "--calibration", str(cal_csv), "--judge", "verdict"]
    code, _, err = run_cli(["estimate", *args, "--human", "gold", *extra])
    assert code == 2
    assert match in one_error_line(err)


def test_no_labels_at_all_is_one_line(tmp_path, run_cli, one_error_line):
    test_csv = tmp_path / "t.csv"
    test_csv.write_text("judge\n1\n0\n1\n")
    code, _, err = run_cli(["estimate", "--test", str(test_csv)])
    assert code == 2
    line = one_error_line(err)
    assert "--calibration is required" in line and "--human column" in line


def test_fit_takes_the_estimand(random_tables, run_cli):
    one, _, _, counts = random_tables
    args = ["fit", "--test", one, "--system", "model", "--method", "exact", "--seed", "3"]
    args += ["--draws", "300", "--chains", "2"]
    code, out, err = run_cli([*args, "--estimand", "test-set"])
    assert code == 0, err
    assert "data: random labelling design" in out
    assert "estimand: test-set θ" in out
    assert "θ (test set)" in out
    code, out, err = run_cli([*args, "--estimand", "test-set", "--format", "csv"])
    assert code == 0, err
    frame = pd.read_csv(pd.io.common.StringIO(out))
    expected = bj.fit(
        counts, method="exact", random_seed=3, draws=300, chains=2, estimand="test-set"
    ).summary(var_names=["theta_test"])
    got = frame[frame["variable"] == "theta_test"].set_index("system")["mean"]
    np.testing.assert_allclose(
        got.loc[list(SYSTEMS)], expected.set_index("system").loc[list(SYSTEMS), "mean"]
    )
    assert set(frame["variable"]) >= {"theta_test_difference"}


def test_report_states_the_design(random_tables, tmp_path, run_cli):
    one, _, _, _ = random_tables
    out_dir = tmp_path / "rep"
    code, out, err = run_cli(
        ["report", "--test", one, "--system", "model", "--method", "none", "--seed", "1",
         "--n-resamples", "1000", "--out", str(out_dir)]
    )  # fmt: skip
    assert code == 0, err
    assert "2 systems × 1 stratum, random labelling design, no Bayesian fit" in out
    md = (out_dir / "report.md").read_text(encoding="utf-8")
    assert "**Labelling design: random.**" in md
    assert "maximum-likelihood θ̂ [profile likelihood]" in md


def test_report_without_any_labels_is_one_line(tmp_path, run_cli, one_error_line):
    test_csv = tmp_path / "t.csv"
    test_csv.write_text("judge\n1\n0\n1\n")
    code, _, err = run_cli(["report", "--test", str(test_csv), "--out", str(tmp_path / "r")])
    assert code == 2
    assert "--calibration is required" in one_error_line(err)
    assert not (tmp_path / "r").exists()
