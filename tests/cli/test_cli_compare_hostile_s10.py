"""Hostile gates (session 10, hunt B): ``bayesjudge compare`` on the command line.

- F1: a claim on one test item per system (zero test variance) is not supported (exit 3),
  with a warning, for the delta method, the bootstrap and the cluster methods.
- F4: ``--output`` naming an input file is refused before any work; the input is kept.
- F5: ``--min-probability`` at or below 0.5 is refused; F6: a ``--ci-prob`` whose 1 − value
  rounds to 1 is refused naming ``--ci-prob`` and the value given.
- F7: names are quoted once escaped (no doubled backslashes), and a name holding a newline and
  one holding a backslash and n print differently.
- F8: a claim given twice, or by --claim and by --rank, is one claim; a rank of R systems has
  R − 1 adjacent claims.
- F1b, F3b: a p̂ of 1 on many items still supports a clear claim; colliding pair labels do not
  block the gate. F0: a Bayesian claim about a system without test items is not supported.
  F13: a Bayesian gate summarises only the claimed pairs. F11: sizes without effect are named.
  F12: equal --scores are refused. huntC F8: the random design's Δθ is estimate's.
"""

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayesjudge as bj
from bayesjudge.cli._common import parse_ci_prob, parse_min_probability

ZERO = "no test-set width"


def _calibration(systems, seed=0) -> pd.DataFrame:
    """100 + 100 labels per system (q0 = .85, q1 = .9), seeded."""
    rng = np.random.default_rng(seed)
    human = np.repeat([0, 1], 100)
    frames = []
    for s in systems:
        judge = np.where(human == 1, rng.random(200) < 0.9, rng.random(200) > 0.85)
        frames.append(pd.DataFrame({"system": s, "judge": judge.astype(int), "human": human}))
    return pd.concat(frames)


def _files(folder: Path, test: pd.DataFrame, systems) -> tuple[str, str]:
    test.to_csv(folder / "t.csv", index=False)
    _calibration(systems).to_csv(folder / "c.csv", index=False)
    return str(folder / "t.csv"), str(folder / "c.csv")


def _simulated(folder: Path, systems, thetas, n=200, seed=1) -> tuple[str, str]:
    rng = np.random.default_rng(seed)
    rows = []
    for s, theta in zip(systems, thetas, strict=True):
        truth = rng.random(n) < theta
        judge = np.where(truth, rng.random(n) < 0.9, rng.random(n) > 0.85).astype(int)
        rows.append(pd.DataFrame({"system": s, "item": [f"i{j}" for j in range(n)],
                                  "judge": judge}))  # fmt: skip
    return _files(folder, pd.concat(rows), systems)


def _compare(test, calibration, *extra):
    return ["compare", "--test", test, "--calibration", calibration, "--system", "system",
            "--seed", "1", "--n-resamples", "1000", *extra]  # fmt: skip


# --- F1 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["delta", "bootstrap"])
def test_one_item_per_system_supports_no_claim(tmp_path, run_cli, method):
    test = pd.DataFrame({"system": ["A", "B"], "item": "i0", "judge": [1, 0]})
    files = _files(tmp_path, test, ["A", "B"])
    code, out, err = run_cli(_compare(*files, "--method", method, "--claim", "A", "--over", "B"))
    assert code == 3, err
    assert "NOT SUPPORTED 'A' over 'B' (stratum 'all')" in out and ZERO in out
    assert "bayesjudge: warning:" in err and ZERO in err and "one test item" in err
    code, out, _ = run_cli(
        _compare(*files, "--method", method, "--claim", "A", "--over", "B", "--json")
    )
    (claim,) = json.loads(out)["claims"]
    assert code == 3 and claim["supported"] is False and ZERO in claim["why"]


def test_one_item_judged_four_times_supports_no_claim(tmp_path, run_cli):
    test = pd.DataFrame({"system": ["A"] * 4 + ["B"] * 4, "item": "i0",
                         "epoch": [0, 1, 2, 3] * 2, "judge": [1, 1, 1, 1, 0, 0, 0, 1]})  # fmt: skip
    files = _files(tmp_path, test, ["A", "B"])
    for method in ("cluster-delta", "cluster-bootstrap"):
        claim = ("--method", method, "--claim", "A", "--over", "B")
        code, out, err = run_cli(_compare(*files, "--item", "item", "--repeats", "epoch", *claim))
        assert code == 3, err
        assert ZERO in out and "--model mcmc" in err


def test_a_clear_claim_on_enough_items_is_still_supported(tmp_path, run_cli):
    files = _simulated(tmp_path, ["A", "B"], [0.9, 0.4], n=300)
    code, out, err = run_cli(_compare(*files, "--method", "delta", "--claim", "A", "--over", "B"))
    assert code == 0, out + err
    assert ZERO not in out + err


def test_every_verdict_correct_on_many_items_still_supports(tmp_path, run_cli):
    # F1b: A judged correct on 200 of 200 items, B on 100 of 200. A's Wald test variance is 0,
    # but the interval keeps the calibration's width (as estimate reports A's own interval).
    test = pd.DataFrame({"system": ["A"] * 200 + ["B"] * 200, "item": [f"i{j}" for j in
                         range(200)] * 2, "judge": [1] * 200 + [1] * 100 + [0] * 100})  # fmt: skip
    files = _files(tmp_path, test, ["A", "B"])
    for method in ("delta", "bootstrap"):
        code, out, err = run_cli(
            _compare(*files, "--method", method, "--claim", "A", "--over", "B")
        )
        assert code == 0, out + err
        assert ZERO not in out + err


def test_colliding_pair_labels_do_not_block_the_gate(tmp_path, run_cli):
    # F3b: systems "a - b", "c", "a", "b - c" give two pairs labelled "a - b - c"; the gate
    # finds pairs by their systems, so a claim (colliding or not) is evaluated.
    systems = ["a - b", "c", "a", "b - c"]
    files = _simulated(tmp_path, systems, [0.9, 0.5, 0.5, 0.9])
    code, out, err = run_cli(_compare(*files, "--method", "delta", "--json",
                                      "--claim", "a - b", "--over", "c",
                                      "--claim", "b - c", "--over", "a"))  # fmt: skip
    assert code == 0, err
    claims = json.loads(out)["claims"]
    assert [(c["better"], c["worse"], c["supported"]) for c in claims] == [
        ("a - b", "c", True),
        ("b - c", "a", True),
    ]
    rows = {(r["first"], r["second"]): r["estimate"] for r in json.loads(out)["comparisons"]}
    assert claims[0]["estimate"] == rows[("a - b", "c")]
    assert claims[1]["estimate"] == -rows[("a", "b - c")]


# --- F4 -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["--test", "--calibration"])
def test_output_may_not_name_an_input(tmp_path, run_cli, one_error_line, which, monkeypatch):
    files = _simulated(tmp_path, ["A", "B"], [0.7, 0.6])
    target = files[0] if which == "--test" else files[1]
    before = Path(target).read_bytes()
    monkeypatch.chdir(tmp_path)
    spelled = f"./sub/../{Path(target).name}"  # another spelling of the same file
    (tmp_path / "sub").mkdir()
    code, out, err = run_cli(_compare(*files, "--method", "delta", "--output", spelled))
    assert code == 2 and out == ""
    line = one_error_line(err)
    assert f"--output {spelled} is the {which} file" in line and "another file name" in line
    assert Path(target).read_bytes() == before
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    code, _, err = run_cli(_compare(*files, "--method", "delta", "--output", str(link)))
    assert code == 2 and f"is the {which} file" in err
    assert Path(target).read_bytes() == before


def test_output_beside_the_inputs_is_written(tmp_path, run_cli):
    files = _simulated(tmp_path, ["A", "B"], [0.7, 0.6])
    out_file = tmp_path / "gate.txt"
    code, out, err = run_cli(_compare(*files, "--method", "delta", "--output", str(out_file)))
    assert code == 0, err
    assert out_file.read_text() == out


# --- F5, F6 ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["0.5", "0.3", "1e-300"])
def test_min_probability_at_or_below_one_half_is_refused(tmp_path, run_cli, one_error_line, value):
    files = _simulated(tmp_path, ["A", "B"], [0.7, 0.6])
    args = _compare(*files, "--model", "exact", "--min-probability", value,
                    "--claim", "A", "--over", "B", "--claim", "B", "--over", "A")  # fmt: skip
    code, out, err = run_cli(args)
    line = one_error_line(err)
    assert code == 2 and out == ""
    assert "--min-probability" in line and "must be above 0.5" in line and repr(value) in line
    assert "'B over A' together" in line


def test_min_probability_parser_keeps_values_above_one_half():
    assert parse_min_probability("0.51") == 0.51 and parse_min_probability("0.99") == 0.99
    for bad in ("0.5", "0", "1", "nan", "x"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_min_probability(bad)


def test_ci_prob_too_small_names_the_option(tmp_path, run_cli, one_error_line):
    files = _simulated(tmp_path, ["A", "B"], [0.7, 0.6])
    code, out, err = run_cli(_compare(*files, "--ci-prob", "1e-300"))
    line = one_error_line(err)
    assert code == 2 and out == ""
    assert "--ci-prob" in line and "'1e-300' is too small" in line and "alpha" not in line
    assert parse_ci_prob("0.95") == 0.95 and parse_ci_prob("1e-10") == 1e-10


# --- F7 -------------------------------------------------------------------------------------------


def test_names_are_escaped_once_and_tell_newline_from_backslash(tmp_path, run_cli):
    newline, backslash_n, red = "new\nline", "new\\nline", "\x1b[31mred"
    files = _simulated(tmp_path, [newline, backslash_n, red], [0.8, 0.6, 0.6])
    code, out, err = run_cli(_compare(*files, "--method", "delta", f"--claim={newline}",
                                      "--over", red))  # fmt: skip
    assert code in (0, 3), err
    assert "\x1b" not in out and "\x1b" not in err
    # The table shows the newline as \n and the literal backslash doubled: two names, two texts.
    assert "new\\nline" in out and "new\\\\nline" in out
    claim = next(line for line in out.splitlines() if " over " in line and "stratum" in line)
    assert "'new\\nline' over '\\x1b[31mred'" in claim  # one backslash each, not two
    code, _, err = run_cli(_compare(*files, "--claim", "nobody", "--over", red))
    assert code == 2
    assert "'\\x1b[31mred'" in err and "'new\\nline'" in err and "'new\\\\nline'" in err
    assert "'\\\\x1b" not in err


# --- F8 -------------------------------------------------------------------------------------------


def test_repeated_claims_count_once(tmp_path, run_cli):
    files = _simulated(tmp_path, ["A", "B", "C"], [0.8, 0.6, 0.6], n=100)
    claims = ["--claim", "A", "--over", "B", "--claim", "A", "--over", "B",
              "--rank", "A", "--rank", "B", "--rank", "C"]  # fmt: skip
    code, out, _ = run_cli(_compare(*files, "--method", "delta", "--json", *claims))
    payload = json.loads(out)
    pairs = [(c["better"], c["worse"]) for c in payload["claims"]]
    assert pairs == [("A", "B"), ("B", "C")]  # A over B once, then the rank's other pair
    (ranking,) = payload["ranking"]
    failed = sum(not c["supported"] for c in payload["claims"])
    assert failed >= 1  # B over C (equal θ) is not supported
    assert f"{failed} of 2 adjacent claims not supported" in ranking["why"]
    code_text, text, _ = run_cli(_compare(*files, "--method", "delta", *claims))
    assert code_text == code == 3
    assert f"verdict: {failed + 1} of 3 claims not supported" in text
    assert text.count("'A' over 'B' (stratum") == 1


# --- huntC F8: one table with a random labelled share -------------------------------------------


def test_random_design_gate_uses_the_designs_estimate(tmp_path, run_cli):
    # 300 items per system (θ 0.3 / 0.6, q0 0.8, q1 0.9), a random 30% labelled in the human
    # column of the one table (seed 2): the random design. Δθ must be estimate's θ_A − θ_B
    # (the likelihood, 0.39 − 0.54 on the hunter's data), not the Rogan-Gladen difference.
    rng = np.random.default_rng(2)
    rows = []
    for system, theta in (("A", 0.3), ("B", 0.6)):
        truth = rng.random(300) < theta
        judge = np.where(truth, rng.random(300) < 0.9, rng.random(300) > 0.8).astype(int)
        human = np.where(rng.random(300) < 0.3, truth.astype(float), np.nan)
        rows.append(pd.DataFrame({"system": system, "item": [f"i{j}" for j in range(300)],
                                  "judge": judge, "human": human}))  # fmt: skip
    path = tmp_path / "one.csv"
    pd.concat(rows).to_csv(path, index=False)
    counts = bj.JudgeCounts.from_frames(str(path), system="system", judge="judge", human="human")
    theta = bj.estimate(counts)["estimate"].sel(stratum="all")
    expected = float(theta.sel(system="B") - theta.sel(system="A"))
    args = ["compare", "--test", str(path), "--judge", "judge", "--human", "human",
            "--system", "system", "--seed", "1", "--n-resamples", "1000", "--json",
            "--claim", "B", "--over", "A"]  # fmt: skip
    for method in ("bootstrap", "delta"):
        code, out, err = run_cli([*args, "--method", method])
        payload = json.loads(out)
        (claim,) = payload["claims"]
        assert claim["estimate"] == pytest.approx(expected, abs=1e-12), err
        assert "Tenenbein" in payload["settings"]["ci_kind"]
        assert code == (0 if claim["supported"] else 3)


# --- F0, F13: the Bayesian gate -------------------------------------------------------------------


def test_bayesian_gate_supports_no_claim_about_a_system_without_test_items(tmp_path, run_cli):
    # F has calibration labels but no test rows: its θ posterior is the prior, so "E over F"
    # (E judged correct on 200 of 200 items) must not pass on the prior alone.
    test = pd.DataFrame({"system": ["A"] * 200 + ["E"] * 200, "item": [f"i{j}" for j in
                         range(200)] * 2, "judge": [1, 0] * 100 + [1] * 200})  # fmt: skip
    test.to_csv(tmp_path / "t.csv", index=False)
    _calibration(["A", "E", "F"]).to_csv(tmp_path / "c.csv", index=False)
    files = (str(tmp_path / "t.csv"), str(tmp_path / "c.csv"))
    extra = ("--model", "exact", "--draws", "400", "--chains", "2", "--json")
    code, out, err = run_cli(_compare(*files, *extra, "--claim", "E", "--over", "F"))
    (claim,) = json.loads(out)["claims"]
    assert code == 3 and claim["supported"] is False
    assert "'F' has no test items in this stratum" in claim["why"]
    assert "No test items in system=F/stratum=all" in err
    # A claim between systems with test items is judged on its posterior as before.
    code, out, _ = run_cli(_compare(*files, *extra, "--claim", "E", "--over", "A"))
    (claim,) = json.loads(out)["claims"]
    assert code == 0 and claim["supported"] is True


def test_bayesian_gate_summarises_only_the_claimed_pairs(tmp_path, run_cli):
    files = _simulated(tmp_path, ["A", "B", "C", "D"], [0.8, 0.6, 0.6, 0.5], n=100)
    extra = ("--model", "exact", "--draws", "200", "--chains", "2", "--json")
    code, out, err = run_cli(_compare(*files, *extra, "--claim", "A", "--over", "B",
                                      "--claim", "B", "--over", "A"))  # fmt: skip
    pairs = [(r["first"], r["second"]) for r in json.loads(out)["comparisons"]]
    assert pairs == [("A", "B")], err  # not the 6 pairs of 4 systems
    code, out, _ = run_cli(_compare(*files, *extra))  # no claim: every pair is shown
    assert len(json.loads(out)["comparisons"]) == 6 and code == 0


# --- F12: K-category scores that cannot separate anything ----------------------------------------


def test_equal_scores_are_refused(tmp_path, run_cli, one_error_line):
    rng = np.random.default_rng(4)
    cats = np.array(["A", "tie", "B"])
    test = pd.DataFrame({"system": np.repeat(["x", "y"], 150),
                         "judge": cats[rng.integers(0, 3, 300)]})  # fmt: skip
    human = cats[rng.integers(0, 3, 240)]
    calibration = pd.DataFrame({"system": np.repeat(["x", "y"], 120), "human": human,
                                "judge": np.where(rng.random(240) < 0.8, human,
                                                  cats[rng.integers(0, 3, 240)])})  # fmt: skip
    test.to_csv(tmp_path / "t.csv", index=False)
    calibration.to_csv(tmp_path / "c.csv", index=False)
    base = _compare(str(tmp_path / "t.csv"), str(tmp_path / "c.csv"), "--claim", "x", "--over", "y")
    code, out, err = run_cli([*base, "--scores", "A=1,tie=1,B=1"])
    line = one_error_line(err)
    assert code == 2 and out == "" and "--scores gives every category the same value (1)" in line
    code, _, err = run_cli([*base, "--scores", "A=1,tie=0.5,B=0"])
    assert code in (0, 3), err


# --- F11: sizes that do not apply are named ------------------------------------------------------


def test_sizes_without_effect_are_named(tmp_path, run_cli):
    files = _simulated(tmp_path, ["A", "B"], [0.7, 0.6], n=100)
    code, _, err = run_cli(_compare(*files, "--method", "delta", "--draws", "100", "--chains", "2"))
    assert code == 0
    assert "--draws has no effect here" in err and "--chains has no effect here" in err
    assert "--n-resamples has no effect here" in err  # _compare passes 1000; delta has none
    code, _, err = run_cli(_compare(*files, "--method", "bootstrap"))
    assert code == 0 and "no effect" not in err


def test_output_in_a_folder_that_takes_no_file_is_refused_first(tmp_path, run_cli, one_error_line):
    if not Path("/proc").is_dir():
        pytest.skip("needs /proc (a folder that permission bits call writable for root)")
    files = _simulated(tmp_path, ["A", "B"], [0.7, 0.6])
    code, out, err = run_cli(_compare(*files, "--method", "delta", "--output", "/proc/x.json"))
    line = one_error_line(err)
    assert code == 2 and out == ""  # before the work: nothing printed
    assert line.startswith("bayesjudge: error: --output /proc/x.json: cannot create a file in")
