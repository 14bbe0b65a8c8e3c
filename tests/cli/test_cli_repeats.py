"""Repeated verdicts of an item on the command line (issue 18): ``--item`` and ``--repeats``.

A CSV table with several verdicts per item (``simulate_repeated_items``, seeded) and a separate
calibration set: ``estimate --item item --repeats epoch`` gives the interval of the Python API
(``estimate(JudgeCounts.from_frames(..., repeats="epoch"))``) on counts that equal a direct
pandas tally, and ``profile`` suggests that command.
"""

import io
import json

import numpy as np
import pandas as pd
import pytest

import bayesjudge as bj
from bayesjudge.cli import main
from bayesjudge.estimate import CLUSTER_METHODS, METHODS
from bayesjudge.report import sections, tables

FIELDS = ("n", "k", "m0", "tn", "m1", "tp")


@pytest.fixture(scope="module")
def repeated(tmp_path_factory):
    """150 items judged 1 to 4 times (icc 0.6) and 60 + 60 calibration items (seed 18)."""
    epochs = np.random.default_rng(18).integers(1, 5, 150)
    test, calibration = bj.simulate.simulate_repeated_items(
        0.6, 0.8, 0.85, n=150, m0=60, m1=60, epochs=epochs, icc=0.6, random_seed=18
    )
    folder = tmp_path_factory.mktemp("repeats")
    test.drop(columns="truth").to_csv(folder / "verdicts.csv", index=False)
    calibration.to_csv(folder / "gold.csv", index=False)
    return str(folder / "verdicts.csv"), str(folder / "gold.csv"), test, calibration


def _json(capsys, argv) -> dict:
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def _tally(test: pd.DataFrame, calibration: pd.DataFrame) -> dict:
    """Every verdict of the test table (n = Σr, k = Σk) and every calibration row, by pandas."""
    human, judge = calibration["human"], calibration["judge"]
    return {
        "n": len(test),
        "k": int(test["judge"].sum()),
        "m0": int((human == 0).sum()),
        "tn": int(((human == 0) & (judge == 0)).sum()),
        "m1": int((human == 1).sum()),
        "tp": int(((human == 1) & (judge == 1)).sum()),
    }


def _api(path, gold, method, **kwargs):
    counts = bj.JudgeCounts.from_frames(path, gold, item="item", repeats="epoch")
    return counts, bj.estimate(counts, method=method, **kwargs)


def test_estimate_repeats_gives_the_cluster_delta_interval_of_the_api(repeated, capsys):
    path, gold, test, calibration = repeated
    argv = ["estimate", "--test", path, "--calibration", gold]
    out = _json(capsys, [*argv, "--item", "item", "--repeats", "epoch"])
    row = out["results"][0]
    assert out["settings"]["method"] == "cluster-delta"  # the default for repeated verdicts
    assert {f: row[f] for f in FIELDS} == _tally(test, calibration)
    counts, expected = _api(path, gold, "cluster-delta")
    # the cluster table: items by number of verdicts r and of 'correct' ones j (pandas tally)
    per_item = test.groupby("item")["judge"].agg(["size", "sum"])
    for (r, j), items in per_item.value_counts().items():
        assert counts.clusters.sel(repeats=r, positives=j).item() == items
    assert row["estimate"] == pytest.approx(float(expected["estimate"].squeeze()), rel=1e-12)
    ci = expected["ci"].squeeze()
    assert row["lower"] == pytest.approx(float(ci.sel(ci_bound="lower")), rel=1e-12)
    assert row["upper"] == pytest.approx(float(ci.sel(ci_bound="upper")), rel=1e-12)
    # The same verdicts counted as independent items: a narrower interval here (icc 0.6, up
    # to 4 verdicts per item), which is what the clusters correct.
    naive = _json(capsys, [*argv, "--method", "lang-reiczigel"])["results"][0]
    assert naive["n"] == row["n"]
    assert naive["upper"] - naive["lower"] < row["upper"] - row["lower"]


def test_cluster_bootstrap_with_a_seed_equals_the_api(repeated, capsys):
    path, gold, _, _ = repeated
    out = _json(
        capsys,
        ["estimate", "--test", path, "--calibration", gold, "--item", "item", "--repeats",
         "epoch", "--method", "cluster-bootstrap", "--seed", "7", "--n-resamples", "1000"],
    )  # fmt: skip
    _, expected = _api(path, gold, "cluster-bootstrap", random_seed=7, n_resamples=1000)
    row = out["results"][0]
    assert out["settings"]["method"] == "cluster-bootstrap"
    ci = expected["ci"].squeeze()
    assert (row["lower"], row["upper"]) == pytest.approx(
        (float(ci.sel(ci_bound="lower")), float(ci.sel(ci_bound="upper"))), rel=1e-12
    )


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--repeats", "epoch"], "give the item id column with --item"),
        (["--item", "item", "--repeats", "epoch", "--method", "naive"], "--method naive counts"),
        (["--item", "item", "--repeats", "nope"], "nope"),
    ],
)
def test_repeat_errors_are_one_line(repeated, capsys, extra, expected):
    path, gold, _, _ = repeated
    assert main(["estimate", "--test", path, "--calibration", gold, *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("bayesjudge: error:") and expected in err


def test_profile_suggests_item_and_repeats_and_the_command_counts_like_a_tally(repeated, capsys):
    path, gold, test, calibration = repeated
    out = _json(capsys, ["profile", path, "--gold", gold])
    argv = out["next_command"]["argv"]
    assert argv == [
        "bayesjudge", "estimate", "--test", path, "--calibration", gold, "--item", "item",
        "--repeats", "epoch",
    ]  # fmt: skip
    problem = next(p for p in out["problems"] if p["code"] == "repeated_items")
    assert problem["severity"] == "note" and "--repeats epoch" in problem["message"]
    assert not [p for p in out["problems"] if p["severity"] in ("warning", "error")]
    tally = _tally(test, calibration)
    assert {f: out["counts"][0][f] for f in FIELDS} == tally
    row = _json(capsys, argv[1:])["results"][0]
    assert {f: row[f] for f in FIELDS} == tally
    _, expected = _api(path, gold, "cluster-delta")
    assert row["estimate"] == pytest.approx(float(expected["estimate"].squeeze()), rel=1e-12)


def test_every_method_of_estimate_is_offered_and_described_by_the_report(capsys):
    with pytest.raises(SystemExit):
        main(["estimate", "--help"])
    usage = capsys.readouterr().out
    for method in METHODS:
        assert method in usage
    for method in set(METHODS) - {"naive"}:  # naive is not a corrected estimator
        assert method in tables.CORRECTED_LABELS and method in tables._SETTINGS_TEXT
    for method in CLUSTER_METHODS:
        assert "Σk/Σr" in tables._SETTINGS_TEXT[method]
        assert "Σk/Σr" in sections._CORRECTED_TEXT[method]


def test_json_lines_take_their_repeat_key_from_repeats(repeated, tmp_path, capsys):
    """The same verdicts as JSON Lines (keys id, try) count and estimate as the CSV does."""
    path, gold, test, _ = repeated
    lines = tmp_path / "verdicts.jsonl"
    with open(lines, "w") as handle:
        for row in test.to_dict(orient="records"):
            handle.write(json.dumps({"id": f"q{row['item']}", "try": row["epoch"],
                                     "judge": row["judge"]}) + "\n")  # fmt: skip
    rows = [
        _json(capsys, ["estimate", "--test", str(lines), "--gold", gold, "--item", "id",
                       "--repeats", "try"])["results"][0],
        _json(capsys, ["estimate", "--test", path, "--calibration", gold, "--item", "item",
                       "--repeats", "epoch"])["results"][0],
    ]  # fmt: skip
    keys = (*FIELDS, "estimate", "lower", "upper")
    assert {k: rows[0][k] for k in keys} == {k: rows[1][k] for k in keys}
    assert rows[0]["n"] == len(test)


# --------------------------------------------------------- compare and report: the CI gate

GOOD, BAD, CLOSE = "good one", "bad", "close"


@pytest.fixture(scope="module")
def systems(tmp_path_factory):
    """Three systems' items judged 3 times (icc 0.5): good 0.85, bad 0.45, close 0.83."""
    tests, cals = [], []
    for s, (name, theta) in enumerate(((GOOD, 0.85), (BAD, 0.45), (CLOSE, 0.83))):
        test, cal = bj.simulate.simulate_repeated_items(
            theta, 0.85, 0.9, n=300, m0=120, m1=120, epochs=3, icc=0.5, random_seed=40 + s
        )
        test["system"] = cal["system"] = name
        tests.append(test.drop(columns="truth"))
        cals.append(cal)
    folder = tmp_path_factory.mktemp("repeats-systems")
    pd.concat(tests).to_csv(folder / "verdicts.csv", index=False)
    pd.concat(cals).to_csv(folder / "gold.csv", index=False)
    argv = ["--test", str(folder / "verdicts.csv"), "--calibration", str(folder / "gold.csv"),
            "--system", "system", "--item", "item", "--repeats", "epoch"]  # fmt: skip
    counts = bj.JudgeCounts.from_frames(
        folder / "verdicts.csv", folder / "gold.csv", item="item", repeats="epoch",
        system="system",
    )  # fmt: skip
    return argv, counts, folder


def _gate(capsys, argv) -> tuple[int, dict]:
    status = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert status in (0, 3), captured.err
    return status, json.loads(captured.out)


def test_compare_defaults_to_cluster_delta_and_prints_the_apis_numbers(systems, capsys):
    argv, counts, _ = systems
    status, out = _gate(capsys, ["compare", *argv])
    assert status == 0
    assert out["settings"]["method"] == "cluster-delta" and out["settings"]["clusters"] == 1
    assert out["settings"]["paired"] is False
    expected = bj.compare(counts)
    for row in out["comparisons"]:
        estimate, lower, _ = _oriented(expected, row["first"], row["second"])
        assert row["estimate"] == pytest.approx(estimate, rel=1e-12)
        assert row["lower"] == pytest.approx(lower, rel=1e-12)


def _oriented(result, better, worse):
    """Δθ = θ_better − θ_worse of a compare() result: (estimate, lower, upper)."""
    for i, (a, b) in enumerate(zip(result["first"].values, result["second"].values, strict=True)):
        row = result.isel(pair=i, stratum=0)
        est, lo, hi = float(row["estimate"]), *(float(v) for v in row["ci"].values)
        if (a, b) == (better, worse):
            return est, lo, hi
        if (a, b) == (worse, better):
            return -est, -hi, -lo
    raise KeyError((better, worse))


def test_gate_claims_and_rank_on_repeated_verdicts(systems, capsys):
    argv, counts, _ = systems
    status, out = _gate(capsys, ["compare", *argv, "--claim", GOOD, "--over", BAD])
    assert status == 0 and out["supported"] and out["claims"][0]["lower"] > 0
    status, out = _gate(capsys, ["compare", *argv, "--claim", GOOD, "--over", CLOSE])
    assert status == 3 and not out["claims"][0]["supported"]
    assert "includes 0" in out["claims"][0]["why"]
    status, out = _gate(capsys, ["compare", *argv, "--rank", GOOD, "--rank", CLOSE,
                                 "--rank", BAD])  # fmt: skip
    assert status == 3 and out["ranking"][0]["supported"] is False
    status, out = _gate(capsys, ["compare", *argv, "--rank", CLOSE, "--rank", BAD])
    assert status == 0 and out["ranking"][0]["supported"] is True
    # cluster-bootstrap with a seed: the API's interval
    options = ["--method", "cluster-bootstrap", "--seed", "3", "--n-resamples", "1000"]
    status, out = _gate(capsys, ["compare", *argv, *options, "--claim", GOOD, "--over", BAD])
    expected = bj.compare(counts, "cluster-bootstrap", n_resamples=1000, random_seed=3)
    _, lower, _ = _oriented(expected, GOOD, BAD)
    assert status == 0 and out["claims"][0]["lower"] == pytest.approx(lower, rel=1e-12)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--method", "bootstrap"], "cluster-delta"),
        (["--method", "delta"], "without_clusters"),
        (["--require-excludes-zero", "--claim", GOOD, "--over", BAD], "posterior probability"),
    ],
)
def test_compare_errors_on_repeated_verdicts_are_one_line(systems, capsys, extra, expected):
    argv, _, _ = systems
    assert main(["compare", *argv, *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("bayesjudge: error:") and expected in err


def test_report_of_repeated_verdicts_without_a_fit(systems, tmp_path, capsys):
    argv, counts, _ = systems
    out = tmp_path / "report"
    assert main(["report", *argv, "--method", "none", "--out", str(out), "--seed", "1"]) == 0
    capsys.readouterr()
    md = (out / "report.md").read_text()
    assert "naive p̂ = Σk/Σr [cluster-robust Wilson]" in md
    assert "bayesjudge.compare(method='cluster-delta'" in md
    theta = bj.estimate(counts)["estimate"].sel(system=GOOD).item()
    assert f"{theta:.3f}" in md


@pytest.mark.slow
def test_fit_of_repeated_verdicts_is_the_item_effect_model(repeated, capsys):
    # bayesjudge fit on --item/--repeats input fits the item-effect model (bj.fit dispatches
    # clustered counts to it) and shows the intra-item correlation; same seed, same numbers.
    path, gold, _, _ = repeated
    argv = ["fit", "--test", path, "--calibration", gold, "--item", "item", "--repeats", "epoch",
            "--draws", "1000", "--tune", "500", "--chains", "2", "--seed", "5"]  # fmt: skip
    assert main([*argv, "--format", "csv"]) == 0, capsys.readouterr().err
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out))
    counts = bj.JudgeCounts.from_frames(path, gold, item="item", repeats="epoch")
    fit = bj.fit(counts, draws=1000, tune=500, chains=2, random_seed=5)
    assert fit.config["model"] == "item-effect"
    assert set(frame["variable"]) >= {"theta", "q0", "q1", "item_icc"}
    theta = frame.loc[frame["variable"] == "theta", "mean"].item()
    assert theta == pytest.approx(float(fit.posterior["theta"].mean()), abs=1e-6)
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "model: item-effect" in text and "aggregate: none" in text


@pytest.mark.slow
def test_default_report_of_repeated_verdicts_fits_the_item_effect_model(systems, tmp_path):
    # --method auto picks MCMC for repeated verdicts (the exact engine integrates independent
    # verdicts only), so the default report of epochs has its Bayesian sections.
    argv, _, _ = systems
    out = tmp_path / "report"
    assert main(["report", *argv, "--out", str(out), "--seed", "1", "--draws", "300",
                 "--tune", "300", "--chains", "2"]) == 0  # fmt: skip
    md = (out / "report.md").read_text()
    assert "model='item-effect'" in md
