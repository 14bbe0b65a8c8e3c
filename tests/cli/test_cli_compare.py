"""Tests of ``bayesjudge compare`` and of the CI gate options (``compare`` and ``report``).

Every command runs in-process through ``bayesjudge.cli.main``. The data are simulated with a
known truth (``bj.simulate_items``): system ``"x>y"`` is truly better than ``"a b"`` by 0.2
(a claim the data support), ``"-dash"`` and ``"x>y"`` differ by 0.01 (a claim they cannot
support). The numbers printed are checked against ``bj.compare`` and ``Fit.compare`` called
with the same counts and seed (the command must copy them, not recompute differently). The
Bayesian runs use the exact posterior with few draws (no MCMC compile).
"""

import json
import re

import numpy as np
import pytest

import bayesjudge as bj
from bayesjudge.cli.compare import (
    EXIT_UNSUPPORTED,
    closed_form_source,
    evaluate_gate,
)
from bayesjudge.data import JudgeCounts

SEED = 5
# Hostile names: a space, the '>' of a naive "A>B" claim syntax, a leading '-' (an option to
# argparse unless written --claim=-dash), Markdown and a control character.
GOOD, BAD, CLOSE = "x>y", "a b", "-dash"
THETA = {GOOD: 0.80, BAD: 0.60, CLOSE: 0.79}
KEYS_CLAIM = {
    "better",
    "worse",
    "stratum",
    "estimate",
    "lower",
    "upper",
    "probability",
    "supported",
    "why",
}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("compare")
    systems = list(THETA)
    test, cal = bj.simulate_items(
        [THETA[s] for s in systems],
        0.85,
        0.9,
        n=1500,
        m0=250,
        m1=250,
        system=systems,
        random_seed=2026,
    )
    test.drop(columns="truth").to_csv(folder / "test.csv", index=False)
    cal.to_csv(folder / "cal.csv", index=False)
    return str(folder / "test.csv"), str(folder / "cal.csv")


@pytest.fixture(scope="module")
def counts(files):
    return JudgeCounts.from_frames(files[0], files[1], system="system")


def _args(files, *extra):
    return [
        "compare",
        "--test",
        files[0],
        "--calibration",
        files[1],
        "--system",
        "system",
        "--n-resamples",
        "1000",
        "--seed",
        str(SEED),
        *extra,
    ]


def test_supported_claim_exits_0_and_copies_compare(files, counts, run_cli):
    code, out, err = run_cli(_args(files, "--claim", GOOD, "--over", BAD))
    assert code == 0, err
    ref = bj.compare(counts, method="bootstrap", n_resamples=1000, random_seed=SEED)
    firsts, seconds = ref["first"].values, ref["second"].values
    pair = {(a, b): i for i, (a, b) in enumerate(zip(firsts, seconds, strict=True))}
    r = ref.isel(pair=pair[(BAD, GOOD)], stratum=0)  # coordinate order: "a b" before "x>y"
    est, (lo, hi) = -float(r["estimate"]), (-float(v) for v in r["ci"].values[::-1])
    assert lo > 0  # the truth (+0.2) is supported at this size
    assert (
        f"supported     'x>y' over 'a b' (stratum 'all'): Δθ {est:.3f} [{lo:.3f}, {hi:.3f}]" in out
    )
    assert "lies above 0" in out
    assert "verdict: every claim supported (exit status 0)" in out
    # Every pair is listed with its interval, names as they are.
    for a, b in pair:
        rr = ref.isel(pair=pair[(a, b)], stratum=0)
        lo_, hi_ = rr["ci"].values
        assert re.search(
            rf"{re.escape(a)}\s+{re.escape(b)}\s+all\s+{float(rr['estimate']):.3f}\s+"
            rf"\[{lo_:.3f}, {hi_:.3f}\]",
            out,
        ), out


def test_unsupported_claim_exits_3(files, run_cli):
    code, out, err = run_cli(_args(files, "--claim=-dash", "--over", GOOD, "--method", "delta"))
    assert code == EXIT_UNSUPPORTED == 3, err
    assert "NOT SUPPORTED '-dash' over 'x>y'" in out and "includes 0" in out
    assert "verdict: 1 of 1 claims not supported (exit status 3)" in out


def test_wrong_order_says_the_data_favour_the_other(files, run_cli):
    code, out, _ = run_cli(_args(files, "--claim", BAD, "--over", GOOD))
    assert code == 3
    assert "lies below 0: the data favour the opposite order" in out


def test_json_schema_and_output_file(files, run_cli, tmp_path):
    target = tmp_path / "gate.json"
    code, out, err = run_cli(
        _args(
            files,
            "--claim",
            GOOD,
            "--over",
            BAD,
            "--rank",
            GOOD,
            "--rank=-dash",
            "--json",
            "--output",
            str(target),
        )
    )
    assert code == 3, err
    payload = json.loads(out)
    assert json.loads(target.read_text(encoding="utf-8")) == payload
    assert [p.name for p in tmp_path.iterdir()] == ["gate.json"]  # no temporary file left
    assert set(payload) == {
        "settings",
        "comparisons",
        "claims",
        "ranking",
        "supported",
        "exit_status",
    }
    assert payload["exit_status"] == 3 and payload["supported"] is False
    settings = payload["settings"]
    assert (settings["method"], settings["random_seed"], settings["ci_prob"]) == (
        "bootstrap",
        SEED,
        0.95,
    )
    assert len(payload["comparisons"]) == 3
    assert {"first", "second", "stratum", "estimate", "lower", "upper", "probability"} == set(
        payload["comparisons"][0]
    )
    claims = payload["claims"]
    assert [(c["better"], c["worse"]) for c in claims] == [(GOOD, BAD), (GOOD, CLOSE)]
    for c in claims:
        assert set(c) == KEYS_CLAIM
        assert c["probability"] is None  # a closed form gives no probability
        assert c["lower"] <= c["estimate"] <= c["upper"]
        assert c["supported"] is (c["lower"] > 0)
    assert [c["supported"] for c in claims] == [True, False]
    (ranking,) = payload["ranking"]
    assert ranking["order"] == [GOOD, CLOSE] and ranking["supported"] is False
    assert "adjacent claims not supported" in ranking["why"]


def test_bayesian_gate_uses_posterior_probability(files, counts, run_cli):
    extra = ("--model", "exact", "--draws", "400", "--chains", "2", "--json")
    code, out, err = run_cli(
        _args(files, "--claim", GOOD, "--over", BAD, "--claim", GOOD, "--over=-dash", *extra)
    )
    assert code == 3, err
    payload = json.loads(out)
    fit = bj.fit(counts, method="exact", draws=400, chains=2, random_seed=SEED)
    ref = fit.compare(ci_prob=0.95)
    for claim in payload["claims"]:
        better, worse = claim["better"], claim["worse"]
        pairs = zip(ref["first"].values, ref["second"].values, strict=True)
        at = [i for i, (a, b) in enumerate(pairs) if {a, b} == {better, worse}]
        r = ref.isel(pair=at[0], stratum=0)
        sign = 1 if str(r["first"].item()) == better else -1
        draws = sign * r["difference"].values.ravel()
        assert claim["probability"] == pytest.approx(np.mean(draws > 0), abs=0)
        assert claim["estimate"] == pytest.approx(sign * float(r["mean"]), rel=1e-12)
        assert claim["supported"] is (claim["probability"] >= 0.95)
    assert [c["supported"] for c in payload["claims"]] == [True, False]
    assert payload["settings"]["min_probability"] == 0.95


def test_bayesian_ranking_needs_the_joint_probability(files, counts, run_cli):
    # The joint P(θ_x>y > θ_-dash > θ_a b) is checked against the posterior draws, and the
    # ranking is supported exactly when every adjacent claim is and the joint P reaches 0.51.
    extra = ("--model", "exact", "--draws", "400", "--chains", "2", "--json")
    ranks = ("--rank", GOOD, "--rank=-dash", "--rank", BAD, "--min-probability", "0.51")
    code, out, err = run_cli(_args(files, *ranks, *extra))
    payload = json.loads(out)
    fit = bj.fit(counts, method="exact", draws=400, chains=2, random_seed=SEED)
    theta = fit.posterior["theta"].sel(stratum="all")
    joint = np.mean(
        (theta.sel(system=GOOD) > theta.sel(system=CLOSE)).values
        & (theta.sel(system=CLOSE) > theta.sel(system=BAD)).values
    )
    (ranking,) = payload["ranking"]
    assert ranking["probability"] == pytest.approx(joint, abs=0)
    adjacent = all(c["supported"] for c in payload["claims"])
    assert ranking["supported"] is bool(joint >= 0.51 and adjacent)
    if adjacent:
        assert "P(the whole order)" in ranking["why"]
    assert code == (0 if ranking["supported"] else 3), err


def test_require_excludes_zero_with_model(files, run_cli):
    extra = ("--model", "exact", "--draws", "400", "--chains", "2", "--min-probability", "0.51")
    code, out, _ = run_cli(
        _args(files, "--claim", GOOD, "--over=-dash", "--require-excludes-zero", *extra)
    )
    assert code == 3
    assert "does not lie above 0" in out or "is below the threshold 0.51" in out


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (("--claim", "nobody", "--over", BAD), "no system 'nobody' in the data"),
        (("--claim", GOOD), "has no --over"),
        (("--over", GOOD), "follows no --claim"),
        (("--claim", GOOD, "--over", GOOD), "cannot be claimed better than itself"),
        (("--rank", GOOD), "--rank needs at least two systems"),
        (("--rank", GOOD, "--rank", GOOD), "more than once"),
        (("--min-probability", "0.9", "--claim", GOOD, "--over", BAD), "needs a posterior"),
        (("--calibration-design", "hierarchical"), "is a Bayesian model"),
    ],
)
def test_usage_errors_exit_2_with_one_line(files, run_cli, one_error_line, extra, needle):
    code, _, err = run_cli(_args(files, *extra))
    assert code == 2
    line = one_error_line(err)
    assert needle in line, line
    if "no system" in needle:  # the known systems are named
        assert all(repr(s) in line for s in THETA), line


def test_hostile_names_are_shown_escaped(tmp_path, run_cli):
    evil = "evil\n\x1b[31m|<b>"
    test, cal = bj.simulate_items(
        [0.85, 0.5], 0.9, 0.9, n=800, m0=150, m1=150, system=[evil, "plain"], random_seed=1
    )
    test.to_csv(tmp_path / "t.csv", index=False)
    cal.to_csv(tmp_path / "c.csv", index=False)
    args = [
        "compare",
        "--test",
        str(tmp_path / "t.csv"),
        "--calibration",
        str(tmp_path / "c.csv"),
        "--system",
        "system",
        "--n-resamples",
        "500",
        "--seed",
        "1",
        f"--claim={evil}",
        "--over",
        "plain",
    ]
    code, out, err = run_cli(args)
    assert code == 0, err
    assert "\x1b" not in out and "evil\\n\\x1b[31m|<b>" in out
    code, out, _ = run_cli([*args, "--json"])
    assert json.loads(out)["claims"][0]["better"] == evil  # JSON keeps the name itself


def test_several_strata_need_every_stratum(tmp_path, run_cli):
    # Truly better in "easy" (+0.3), equal in "hard": the claim fails in "hard" only.
    test, cal = bj.simulate_items(
        [[0.9, 0.7], [0.6, 0.7]],
        0.9,
        0.9,
        n=1000,
        m0=200,
        m1=200,
        system=["A", "B"],
        stratum=["easy", "hard"],
        random_seed=4,
    )
    test.to_csv(tmp_path / "t.csv", index=False)
    cal.to_csv(tmp_path / "c.csv", index=False)
    code, out, _err = run_cli(
        [
            "compare",
            "--test",
            str(tmp_path / "t.csv"),
            "--calibration",
            str(tmp_path / "c.csv"),
            "--system",
            "system",
            "--stratum",
            "stratum",
            "--method",
            "delta",
            "--json",
            "--claim",
            "A",
            "--over",
            "B",
        ]
    )
    payload = json.loads(out)
    by_stratum = {c["stratum"]: c["supported"] for c in payload["claims"]}
    assert by_stratum == {"easy": True, "hard": False}
    assert code == 3


def test_report_gate_writes_the_report_then_exits_3(files, run_cli, tmp_path):
    out_dir = tmp_path / "rep"
    code, out, err = run_cli(
        ["report", "--test", files[0], "--calibration", files[1], "--system", "system",
         "--method", "none", "--n-resamples", "1000", "--seed", str(SEED), "--out", str(out_dir),
         "--claim=-dash", "--over", GOOD, "--claim", GOOD, "--over", BAD]
    )  # fmt: skip
    assert code == 3, err
    assert (out_dir / "report.md").is_file() and (out_dir / "report.html").is_file()
    assert "NOT SUPPORTED '-dash' over 'x>y'" in out
    assert "verdict: 1 of 2 claims not supported (exit status 3)" in out
    # The same numbers as 'compare' with the same seed and resamples.
    _, cmp_out, _ = run_cli(_args(files, "--claim", GOOD, "--over", BAD))
    line = [x for x in out.splitlines() if "over 'a b'" in x]
    assert line and line[0].startswith("  supported ") and line[0] in cmp_out


@pytest.mark.slow
def test_report_gate_with_fit_uses_probability(files, run_cli, tmp_path):
    code, out, err = run_cli(
        [
            "report",
            "--test",
            files[0],
            "--calibration",
            files[1],
            "--system",
            "system",
            "--method",
            "exact",
            "--draws",
            "300",
            "--chains",
            "2",
            "--n-resamples",
            "500",
            "--seed",
            "1",
            "--out",
            str(tmp_path / "r"),
            "--claim",
            GOOD,
            "--over",
            BAD,
        ]
    )
    assert code == 0, err
    assert "P(θ_better > θ_worse) ≥ 0.95" in out


def test_closed_form_gate_false_support_rate_at_no_difference():
    """Under equal θ the one-sided claim "A over B" is supported at most at rate α/2.

    The delta-method 95 % interval lies above 0 with probability ≈ 0.025 when θ_A = θ_B
    (Wald, n = 1000, m = 200 per label; Fiedler App. B). 1000 replications, one per stratum
    of one simulation (the strata are independent): the Monte Carlo SE of the rate at 0.025
    is 0.0049; the bound is 0.025 + 3 SE = 0.040. With a true gap of 0.15 (θ 0.75 vs 0.6) the
    power is Φ(0.15 / SE − 1.96) = 0.944 by the delta method's own SE: Var θ̂ = p(1 − p)/(n J²)
    + ((1 − θ)/J)² q0(1 − q0)/m0 + (θ/J)² q1(1 − q1)/m1 = 0.000884 and 0.000896, so
    SE(Δθ̂) = 0.0422 (J = 0.75, separate calibration per system); the observed rate must lie
    within 3 MC SEs (3 × 0.0073) of it.
    """
    reps = 1000
    strata = [f"rep{i}" for i in range(reps)]
    rates = {}
    for gap in (0.0, 0.15):
        counts = bj.simulate_counts(
            [[0.6 + gap] * reps, [0.6] * reps], 0.85, 0.9, n=1000, m0=200, m1=200,
            system=["A", "B"], stratum=strata, random_seed=20261127,
        )  # fmt: skip
        result = bj.compare(counts, method="delta")
        gate = evaluate_gate([("A", "B")], closed_form_source(result, 0.95))
        assert len(gate["claims"]) == reps
        rates[gap] = np.mean([c["supported"] for c in gate["claims"]])
    assert rates[0.0] <= 0.025 + 3 * np.sqrt(0.025 * 0.975 / reps), rates
    assert abs(rates[0.15] - 0.944) <= 3 * np.sqrt(0.944 * 0.056 / reps), rates
    print(f"support rate of 'A over B' by gap: {rates}")


def test_help_documents_exit_statuses(run_cli):
    code, out, _ = run_cli(["compare", "--help"])
    assert code == 0
    text = " ".join(out.split())
    assert "exit status 0 when every claim is supported, 3 when some claim is not" in text
