"""Tests of ``bayesjudge fit`` and of the Bayesian column of ``bayesjudge demo``.

Every command runs in-process through ``bayesjudge.cli.main``. The numbers the command prints
are checked against ``bayesjudge.fit`` called with the same counts and seed: nutpie's draws are
a deterministic function of the seed, so the two must agree exactly (to the printed digits in
the table, to float precision in the CSV). Only two model structures are compiled (the
two-system tables and the demo design), so the numba compile is paid twice per process.
"""

import json
import re
import warnings
from io import StringIO

import numpy as np
import pandas as pd
import pytest

import bayesjudge as bj
from bayesjudge.data import JudgeCounts
from bayesjudge.simulate import demo_design

SEED = 11
TABLE_OPTIONS = ["--judge", "verdict", "--human", "gold", "--system", "model"]


@pytest.fixture(scope="module")
def reference(tables):
    """The Python API's fit of the same tables with the CLI's defaults and SEED."""
    test_csv, cal_csv = tables
    counts = JudgeCounts.from_frames(
        str(test_csv), str(cal_csv), judge="verdict", human="gold", system="model"
    )
    return bj.fit(counts, random_seed=SEED)


def _fit_args(tables, *extra):
    test_csv, cal_csv = tables
    return ["fit", "--test", str(test_csv), "--calibration", str(cal_csv), *TABLE_OPTIONS, *extra]


def _prob(p: float) -> list[str]:
    # The whitespace-split tokens of bayesjudge._text.format_probability(p).
    return ["<", "0.001"] if p < 0.0005 else [">", "0.999"] if p >= 0.9995 else [f"{p:.3f}"]


def test_fit_table_matches_python_api(tables, reference, run_cli):
    code, out, err = run_cli(_fit_args(tables, "--seed", str(SEED)))
    assert code == 0, err
    assert err == ""
    assert f"seed {SEED}" in out and "95% equal-tailed credible intervals" in out
    assert f"target_accept {reference.config['target_accept']:g}," in out  # the default used
    assert "calibration separate" in out and "aggregate: none" in out  # one stratum
    lines = [line.split() for line in out.splitlines()]

    summary = reference.summary(ci_prob=0.95)
    # θ, q0, q1, J for both systems; one stratum, so no θ_total.
    assert summary["variable"].tolist() == [
        v for v in ("theta", "q0", "q1", "youden") for _ in range(2)
    ]
    label = {"theta": "θ", "youden": "J"}
    for row in summary.itertuples():
        expected = [
            label.get(row.variable, row.variable),
            row.system,
            row.stratum,
            f"{row.mean:.3f}",
            f"{row.sd:.3f}",
            f"[{row.eti_lower:.3f},",
            f"{row.eti_upper:.3f}]",
            f"{row.ess_bulk:.0f}",
            f"{row.ess_tail:.0f}",
            f"{row.r_hat:.3f}",
        ]
        assert expected in lines, (expected, out)

    comp = reference.compare(dim="system", var="theta", ci_prob=0.95).sel(
        pair="alpha - beta", stratum="all"
    )
    expected = [
        "Δθ",
        "alpha",
        "-",
        "beta",
        "all",
        f"{float(comp['mean']):.3f}",
        f"[{float(comp['ci'].sel(ci_bound='lower')):.3f},",
        f"{float(comp['ci'].sel(ci_bound='upper')):.3f}]",
        *_prob(float(comp["prob_greater"])),
    ]
    assert expected in lines, (expected, out)
    assert "P(a > b)" in out


def test_fit_csv_and_save_match_python_api(tables, reference, tmp_path, run_cli):
    path = tmp_path / "fit.nc"
    args = _fit_args(tables, "--seed", str(SEED), "--ci-prob", "0.9", "--format", "csv")
    code, out, err = run_cli([*args, "--save", str(path)])
    assert code == 0, err
    frame = pd.read_csv(StringIO(out))

    summary = reference.summary(ci_prob=0.9)
    rows = frame[frame["variable"].isin(summary["variable"])].reset_index(drop=True)
    assert rows[["variable", "system", "stratum"]].values.tolist() == (
        summary[["variable", "system", "stratum"]].values.tolist()
    )
    numbers = ["mean", "sd", "median", "eti_lower", "eti_upper", "hdi_lower", "hdi_upper"]
    numbers += ["ess_bulk", "ess_tail", "r_hat"]
    np.testing.assert_allclose(rows[numbers], summary[numbers].astype(float), rtol=1e-12)

    comp = reference.compare(dim="system", var="theta", ci_prob=0.9)
    diff = frame[frame["variable"] == "theta_difference"]
    assert diff["system"].tolist() == ["alpha - beta"]
    c = comp.sel(pair="alpha - beta", stratum="all")
    got = diff.iloc[0]
    np.testing.assert_allclose(
        [got["mean"], got["eti_lower"], got["eti_upper"], got["prob_greater"]],
        [
            float(c["mean"]),
            float(c["ci"].sel(ci_bound="lower")),
            float(c["ci"].sel(ci_bound="upper")),
            float(c["prob_greater"]),
        ],
        rtol=1e-12,
    )

    # --save wrote the same posterior, and bj.load can read it.
    loaded = bj.load(path)
    assert loaded.config["random_seed"] == SEED
    np.testing.assert_array_equal(
        loaded.posterior["theta"].values, reference.posterior["theta"].values
    )


def test_fit_without_seed_prints_a_seed_that_repeats_it(tables, run_cli):
    code, out, err = run_cli(_fit_args(tables))
    assert code == 0, err
    seed = re.search(r"repeat with --seed (\d+)", out).group(1)
    code, again, err = run_cli(_fit_args(tables, "--seed", seed))
    assert code == 0, err
    assert again == out


def test_fit_sampler_warnings_are_warning_lines(tables, run_cli):
    # 2 chains x 50 draws: the bulk ESS cannot reach 400, so ConvergenceWarning is printed.
    code, out, err = run_cli(
        _fit_args(tables, "--seed", "1", "--draws", "50", "--tune", "50", "--chains", "2")
    )
    assert code == 0
    lines = err.splitlines()
    assert lines and all(line.startswith("bayesjudge: warning: ") for line in lines), err
    assert any("Sampler diagnostics" in line and "ESS" in line for line in lines), err
    assert "Posterior summary" in out


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--prior-q0", "2,-1"], "--prior-q0"),
        (["--prior-q1", "a,b"], "--prior-q1"),
        (["--prior-theta", "0.5"], "--prior-theta"),
        (["--draws", "0"], "--draws"),
        (["--tune", "-1"], "--tune"),
        (["--chains", "two"], "--chains"),
        (["--pool-over", "foo"], "--pool-over"),
        (["--pool-over", "system"], "--pool-over"),  # the separate model pools nothing
        (["--ci-prob", "1.5"], "--ci-prob"),
        (["--target-accept", "1"], "--target-accept"),
        (["--format", "json"], "--format"),
        (["--calibration-model", "magic"], "--calibration-model"),
        (["--sampler", "gibbs"], "--sampler"),
        (["--calibration-model", "hierarchical", "--judge-better-than-chance"], "--judge-better"),
        (["--calibration-model", "hierarchical", "--prior-q0", "0.9"], "hierarchical"),
        (["--aggregate", "dirichlet"], "dirichlet"),  # needs 2 strata
        (["--save", "/nonexistent-folder/fit.nc"], "--save"),
        (["--judge", "nope"], "nope"),
    ],
)
def test_fit_mistakes_print_one_line_and_exit_2(tables, extra, match, run_cli):
    code, out, err = run_cli(_fit_args(tables, *extra))
    assert code == 2
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("bayesjudge: error:")
    assert match in lines[0]
    assert "Posterior summary" not in out  # nothing was sampled


def test_fit_needs_calibration_unless_q_known(tables, run_cli):
    test_csv, _ = tables
    code, _, err = run_cli(["fit", "--test", str(test_csv), *TABLE_OPTIONS])
    assert code == 2 and err.count("\n") == 1 and "--calibration is required" in err
    code, _, err = run_cli(["fit", "--test", "nowhere.csv", "--calibration", "nowhere.csv"])
    assert code == 2 and err.count("\n") == 1 and "nowhere.csv" in err


# slow tier: kept out of `make test` (15-minute budget), run by `make test-slow` in CI
@pytest.mark.slow
def test_demo_shows_bayesian_intervals_from_fit(run_cli):
    code, out, err = run_cli(["demo"])  # default seed 2026
    assert code == 0, err
    assert err == ""  # the demo's fit samples cleanly
    assert "Bayesian 95% interval" in out

    design = demo_design()
    counts = bj.simulate_counts(
        **{v: design[v].values for v in ("theta", "q0", "q1", "n", "m0", "m1")},
        system=design["system"].values.tolist(),
        stratum=design["stratum"].values.tolist(),
        random_seed=2026,
    )
    result = bj.fit(counts, draws=1000, tune=1000, chains=4, random_seed=2026)
    summary = result.summary(ci_prob=0.95, var_names=["theta"])
    lines = {tuple(line.split()[:2]): line for line in out.splitlines() if line.strip()}
    covered = 0
    for row in summary.itertuples():
        line = lines[(row.system, row.stratum)]
        # The Bayesian interval is the last column.
        assert line.endswith(f"[{row.eti_lower:.3f}, {row.eti_upper:.3f}]"), line
        truth = float(design["theta"].sel(system=row.system, stratum=row.stratum))
        covered += row.eti_lower <= truth <= row.eti_upper
    assert f"inside {covered} of 6 Bayesian intervals" in out


def test_calibration_table_without_system_column_is_one_shared_set(tables, tmp_path, run_cli):
    """A calibration table lacking --system serves every system and is counted once."""
    test_csv, cal_csv = tables
    shared_csv = tmp_path / "shared.csv"
    pd.read_csv(cal_csv).drop(columns="model").to_csv(shared_csv, index=False)
    code, out, err = run_cli(
        ["estimate", "--test", str(test_csv), "--calibration", str(shared_csv), *TABLE_OPTIONS,
         "--json"]
    )  # fmt: skip
    assert code == 0, err
    tests = JudgeCounts.from_frames(str(test_csv), judge="verdict", system="model")
    calib = JudgeCounts.from_frames(calibration=str(shared_csv), judge="verdict", human="gold")
    counts = tests.with_calibration_from(calib)
    expected = bj.estimate(counts)["estimate"].values.ravel()
    rows = json.loads(out)["results"]
    np.testing.assert_allclose([r["estimate"] for r in rows], expected, rtol=1e-12)
    # The table holds 2 × 80 truly incorrect rows: every system gets that one set of 160.
    assert [r["m0"] for r in rows] == [160, 160]
    # fit's default for such a table is the shared model, pooled over the systems (a separate
    # model would count the one set once per system), and the settings say why.
    small = ["--draws", "100", "--tune", "100", "--chains", "2", "--seed", "1", "--no-progress"]
    base = ["fit", "--test", str(test_csv), "--calibration", str(shared_csv), *TABLE_OPTIONS]
    code, out, err = run_cli([*base, *small, "--format", "csv"])
    assert code == 0, err
    with warnings.catch_warnings():  # 2 x 100 draws: the CLI printed the diagnostics
        warnings.simplefilter("ignore", bj.ConvergenceWarning)
        api = bj.fit(counts, calibration="shared", pool_over="system", draws=100, tune=100,
                     chains=2, random_seed=1, progressbar=False)  # fmt: skip
    frame = pd.read_csv(StringIO(out))
    theta = frame[frame["variable"] == "theta"]["mean"].to_numpy()
    np.testing.assert_allclose(theta, api.posterior["theta"].mean(("chain", "draw")).values.ravel(),
                               rtol=1e-12)  # fmt: skip
    code, out, err = run_cli([*base, *small])
    assert code == 0, err
    assert (
        "calibration shared pooled over system (the default here: the calibration table "
        "has no --system column, so one set serves every system)" in out
    )
    # Asked for by name, the separate model is refused in the command line's words.
    code, out, err = run_cli([*base, "--calibration-model", "separate"])
    assert code == 2 and err.count("\n") == 1, err
    assert "--calibration-model shared" in err and "calibration='shared'" not in err
    # The exact engine needs each system's own set: said with the way out.
    code, out, err = run_cli([*base, "--method", "exact"])
    assert code == 2 and err.count("\n") == 1 and "--method mcmc" in err, err


def test_fit_takes_a_huge_seed_and_names_the_option_on_a_negative_one(tables, run_cli):
    # Issue 13: --seed 2**70 failed inside the sampler; --seed -1 did not name the option.
    huge = str(2**70)
    args = _fit_args(tables, "--draws", "100", "--tune", "100", "--chains", "2", "--seed", huge)
    code, out, err = run_cli(args)
    assert code == 0, err
    assert "Traceback" not in err
    assert f"seed {huge} (repeat with --seed {huge})" in out
    code, _, err = run_cli(_fit_args(tables, "--seed", "-1"))
    assert code == 2 and err.startswith("bayesjudge: error: argument --seed: must be a non-neg")
