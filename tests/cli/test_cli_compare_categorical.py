"""``bayesjudge compare`` with K-category label columns (--categories, --scores).

Every command runs in-process through ``bayesjudge.cli.main``. The tables are written from
fixed count arrays (no random draws); every number the command prints is checked against
``bayesjudge.compare`` of the same arrays (``CategoricalCounts.from_counts``): exactly in the
JSON, to the printed digits in the table.
"""

import json
import re

import numpy as np
import pandas as pd
import pytest

import bayesjudge as bj
from bayesjudge._text import fmt_interval, fmt_number
from bayesjudge.data import CategoricalCounts

PREFERENCE = ["A", "tie", "B"]
WIN_RATE = {"A": 1.0, "tie": 0.5, "B": 0.0}
SCORES = "A=1,tie=0.5,B=0"
#: Test verdict counts per (system, stratum) over PREFERENCE, and calibration counts (rows =
#: truth), three systems in two strata.
TEST = {
    ("x", "easy"): [132, 83, 85],
    ("x", "hard"): [150, 60, 90],
    ("y", "easy"): [81, 72, 147],
    ("y", "hard"): [70, 80, 150],
    ("z", "easy"): [100, 100, 100],
    ("z", "hard"): [60, 90, 150],
}
CAL = {
    "x": [[32, 6, 2], [4, 30, 6], [2, 6, 32]],
    "y": [[30, 8, 2], [5, 31, 4], [1, 7, 32]],
    "z": [[28, 9, 3], [6, 29, 5], [2, 8, 30]],
}
SYSTEMS, STRATA = ["x", "y", "z"], ["easy", "hard"]


def _write(folder, test_counts, cal_counts, labels=PREFERENCE, name="pref"):
    """Write item rows of the counts; every system's calibration in each stratum it has."""
    tests, cals = [], []
    for (system, stratum), counts in test_counts.items():
        tests += [
            {"system": system, "level": stratum, "judge": c}
            for c, n in zip(labels, counts, strict=True)
            for _ in range(n)
        ]
        cals += [
            {"system": system, "level": stratum, "judge": v, "human": t}
            for t, row in zip(labels, cal_counts[system], strict=True)
            for v, n in zip(labels, row, strict=True)
            for _ in range(n)
        ]
    test_csv, cal_csv = folder / f"{name}_test.csv", folder / f"{name}_cal.csv"
    pd.DataFrame(tests).to_csv(test_csv, index=False)
    pd.DataFrame(cals).to_csv(cal_csv, index=False)
    return str(test_csv), str(cal_csv)


@pytest.fixture
def tables(tmp_path):
    return _write(tmp_path, TEST, CAL)


def _api_counts() -> CategoricalCounts:
    """The same counts as the tables, built from the arrays (categories in PREFERENCE order)."""
    test = np.array([[TEST[(s, t)] for t in STRATA] for s in SYSTEMS])
    cal = np.array([[CAL[s] for _ in STRATA] for s in SYSTEMS])
    return CategoricalCounts.from_counts(
        test, cal, categories=PREFERENCE, system=SYSTEMS, stratum=STRATA
    )


def _compare(run_cli, tables, *extra):
    code, out, err = run_cli(
        ["compare", "--test", tables[0], "--calibration", tables[1], "--system", "system",
         "--stratum", "level", *extra]
    )  # fmt: skip
    return code, out, err


@pytest.mark.parametrize(
    ("method", "extra", "calibration"),
    [
        ("delta", [], "separate"),
        ("delta", ["--ci-prob", "0.9"], "shared"),
        ("bootstrap", ["--n-resamples", "1000"], "separate"),
    ],
)
def test_json_equals_the_api(run_cli, tables, method, extra, calibration):
    code, out, err = _compare(
        run_cli, tables, "--categories", "A,tie,B", "--scores", SCORES, "--method", method,
        "--calibration-design", calibration, "--seed", "7", "--json", *extra,
    )  # fmt: skip
    assert code == 0, err
    payload = json.loads(out)
    ci_prob = 0.9 if "--ci-prob" in extra else 0.95
    expected = bj.compare(
        _api_counts(),
        method=method,
        scores=WIN_RATE,
        calibration=calibration,
        alpha=0.1 if "--ci-prob" in extra else 0.05,  # as written, not 1 - ci_prob
        n_resamples=1000 if method == "bootstrap" else 10_000,
        random_seed=7,
    )
    rows = payload["comparisons"]
    assert len(rows) == 3 * 2  # 3 pairs x 2 strata
    for row in rows:
        at = expected.isel(
            pair=list(expected["pair"].values).index(f"{row['first']} - {row['second']}")
        )
        at = at.sel(stratum=row["stratum"])
        assert row["estimate"] == float(at["estimate"])
        assert [row["lower"], row["upper"]] == at["ci"].values.tolist()
        assert row["probability"] is None
    settings = payload["settings"]
    assert settings["method"] == method and settings["ci_kind"] == expected.attrs["ci_kind"]
    assert settings["n_resamples"] == expected.attrs["n_resamples"]
    assert settings["paired"] is False and settings["calibration"] == calibration
    assert settings["categories"] == PREFERENCE and settings["categories_source"] == "given"
    assert settings["scores"] == [{"category": c, "value": v} for c, v in WIN_RATE.items()]
    assert settings["random_seed"] == 7 and settings["ci_prob"] == ci_prob


def test_table_prints_the_api_numbers_and_the_categories(run_cli, tables):
    # Without --categories the order is the sorted one (A, B, tie) and it is printed; the
    # default method is delta, whose numbers do not depend on the order beyond rounding.
    code, out, err = _compare(run_cli, tables, "--scores", SCORES, "--seed", "3")
    assert code == 0, err
    assert "categories (K = 3; sorted" in out and "): A, B, tie" in out
    assert "Δ score = score_first − score_second" in out and "A = 1, tie = 0.5, B = 0" in out
    assert "closed form delta (Wald (delta method)), unpaired" in out
    expected = bj.compare(_api_counts(), method="delta", scores=WIN_RATE)
    body = out.splitlines()[3:]
    assert len(body) == 6
    for line in body:
        first, second, stratum, *_ = line.split()
        at = expected.sel(pair=f"{first} - {second}", stratum=stratum)
        lo, hi = at["ci"].values
        assert line.split(None, 3)[3].split() == [
            fmt_number(float(at["estimate"])),
            *fmt_interval(lo, hi).split(),
        ]


def test_gate_claims_and_ranking_on_the_score(run_cli, tables, tmp_path):
    expected = bj.compare(_api_counts(), method="delta", scores=WIN_RATE)
    lower = expected["ci"].sel(pair="x - y", ci_bound="lower").values
    assert (lower > 0).all()  # x over y is supported in both strata: the gate must say so
    code, out, err = _compare(run_cli, tables, "--scores", SCORES, "--claim", "x", "--over", "y")
    assert code == 0, err
    assert "interval of Δ score lies above 0" in out and "every claim supported" in out
    code, out, err = _compare(run_cli, tables, "--scores", SCORES, "--claim", "y", "--over", "x")
    assert code == 3, err
    assert "lies below 0: the data favour the opposite order" in out
    output = tmp_path / "gate.json"
    code, out, err = _compare(
        run_cli, tables, "--scores", SCORES, "--rank", "x", "--rank", "z", "--rank", "y",
        "--json", "--output", str(output),
    )  # fmt: skip
    payload = json.loads(out)
    assert output.read_text() == out
    assert code == payload["exit_status"]
    assert len(payload["ranking"]) == 2 and len(payload["claims"]) == 4


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ([], "needs --scores, a value for each category (categories 'A', 'B', 'tie')"),
        (["--scores", "A=1,tie=0.5,B=0,C=2"], "['C'] not a category"),
        (["--scores", "A=1,tie=0.5"], "no score for ['B']"),
        (["--scores", SCORES, "--model", "exact"], "--model is a Bayesian fit"),
        (["--scores", SCORES, "--min-probability", "0.9"], "Drop --min-probability"),
        (["--scores", SCORES, "--require-excludes-zero"], "Drop --require-excludes-zero"),
        (["--scores", SCORES, "--method", "cluster-delta"], "take --method delta or bootstrap"),
        (["--scores", SCORES, "--calibration-design", "hierarchical"], "separate (default) or"),
        (["--scores", SCORES, "--claim", "x", "--over", "w"], "no system 'w' in the data"),
        (["--scores", SCORES, "--item", "judge"], "--judge and --item name the same column"),
    ],
)
def test_bad_options_are_one_error_line(run_cli, one_error_line, tables, extra, words):
    code, out, err = _compare(run_cli, tables, *extra)
    assert code == 2 and out == ""
    assert words in one_error_line(err)


def test_the_scores_example_is_in_the_message(run_cli, one_error_line, tables):
    code, _, err = _compare(run_cli, tables)
    assert code == 2
    assert "e.g. --scores A=1,tie=0.5,B=0" in one_error_line(err)


def test_one_system_is_refused(run_cli, one_error_line, tmp_path):
    one = {k: v for k, v in TEST.items() if k[0] == "x"}
    tables = _write(tmp_path, one, CAL, name="one")
    code, out, err = _compare(run_cli, tables, "--scores", SCORES)
    assert code == 2 and out == ""
    assert "compare needs at least two systems; the data hold 1" in one_error_line(err)


def test_binary_labels_refuse_scores(run_cli, one_error_line, default_tables):
    code, _, err = run_cli(
        ["compare", "--test", default_tables[0], "--calibration", default_tables[1],
         "--system", "model", "--scores", "1=1,0=0"]
    )  # fmt: skip
    assert code == 2
    assert "--scores is for K-category labels" in one_error_line(err)


def test_hostile_system_names(run_cli, tmp_path):
    names = {"x": "<b>x</b>", "y": "$HOME", "z": "a\nb - c"}
    test = {(names[s], t): v for (s, t), v in TEST.items()}
    cal = {names[s]: v for s, v in CAL.items()}
    tables = _write(tmp_path, test, cal, name="hostile")
    code, out, err = _compare(
        run_cli, tables, "--scores", SCORES, "--claim", "$HOME", "--over", "a\nb - c"
    )
    assert code in (0, 3), err
    assert "<b>x</b>" in out and "$HOME" in out and "a\\nb - c" in out
    assert not re.search(r"a\nb", out)  # a name's newline is never printed raw
    code, out, err = _compare(
        run_cli, tables, "--scores", SCORES, "--categories", "A,tie,B", "--json"
    )
    payload = json.loads(out)
    pairs = {(r["first"], r["second"]) for r in payload["comparisons"]}
    assert pairs == {("$HOME", "<b>x</b>"), ("$HOME", "a\nb - c"), ("<b>x</b>", "a\nb - c")}
    expected = bj.compare(_api_counts(), method="delta", scores=WIN_RATE)
    row = next(r for r in payload["comparisons"] if r["second"] == "a\nb - c"
               and r["first"] == "<b>x</b>" and r["stratum"] == "easy")  # fmt: skip
    assert row["estimate"] == float(expected["estimate"].sel(pair="x - z", stratum="easy"))


def test_no_usable_stratum_is_null_in_json(run_cli, tmp_path):
    # System z has no calibration item of truth B: its pairs cannot be estimated. JSON has
    # no NaN token, and the gate says why a claim over z is not supported.
    cal = {**CAL, "z": [[28, 9, 3], [6, 29, 5], [0, 0, 0]]}
    tables = _write(tmp_path, TEST, cal, name="gap")
    code, out, err = _compare(
        run_cli, tables, "--scores", SCORES, "--claim", "x", "--over", "z", "--json"
    )
    assert code == 3
    assert "NaN" not in out and "Infinity" not in out
    payload = json.loads(out)
    with_z = [r for r in payload["comparisons"] if "z" in (r["first"], r["second"])]
    assert with_z and all(r["estimate"] is None and r["lower"] is None for r in with_z)
    assert all("cannot be estimated" in c["why"] for c in payload["claims"])
    assert "warning" in err


def test_ctrl_c_exits_130_and_writes_nothing(run_cli, monkeypatch, tables, tmp_path):
    import bayesjudge.cli.compare as command

    def interrupted(counts, **options):
        assert isinstance(counts, CategoricalCounts)
        raise KeyboardInterrupt

    monkeypatch.setattr(command, "compare_categorical", interrupted)
    output = tmp_path / "out.json"
    code, out, err = _compare(
        run_cli, tables, "--scores", SCORES, "--json", "--output", str(output)
    )
    assert code == 130
    assert err == "bayesjudge: interrupted; nothing was written\n" and out == ""
    assert not output.exists()


def test_random_design_parquet_grades_equal_the_api(run_cli, tmp_path):
    # One Parquet table of the random design with integer grades 1-5 (labels keep their type;
    # --scores names them by value). Built from fixed counts: each (system, truth, verdict)
    # cell repeated, the first `labelled` rows of each system carrying the human label.
    rows = []
    for s, shift in (("a", 0), ("b", 1)):
        for t in range(1, 6):
            for v in range(1, 6):
                n = 30 if v == t else (3 if abs(v - t) == 1 else 0)
                n += 3 * shift * (v == min(t + 1, 5))
                rows += [{"system": s, "judge": v, "truth": t}] * n
    frame = pd.DataFrame(rows)
    frame["human"] = frame["truth"].where(frame.index % 2 == 0).astype("Int64")
    path = tmp_path / "grades.parquet"
    frame.drop(columns="truth").to_parquet(path)
    scores = "1=1,2=2,3=3,4=4,5=5"
    code, out, err = run_cli(
        ["compare", "--test", str(path), "--system", "system", "--scores", scores,
         "--method", "bootstrap", "--n-resamples", "1000", "--seed", "11", "--json"]
    )  # fmt: skip
    assert code == 0, err
    payload = json.loads(out)
    assert payload["settings"]["design"] == "random"
    assert payload["settings"]["categories"] == [1, 2, 3, 4, 5]
    counts = CategoricalCounts.from_frames(path, system="system")
    assert counts.design == "random"
    expected = bj.compare(
        counts, method="bootstrap", scores={g: g for g in range(1, 6)}, n_resamples=1000,
        random_seed=11,
    )  # fmt: skip
    [row] = payload["comparisons"]
    assert row["estimate"] == float(expected["estimate"].squeeze())
    assert [row["lower"], row["upper"]] == expected["ci"].squeeze().values.tolist()


def test_one_calibration_set_for_every_system_needs_shared(run_cli, one_error_line, tmp_path):
    # A calibration table without the system column is one set serving every system: taking
    # it as each system's own would count its items once per system, as independent sets.
    test, cal = _write(tmp_path, TEST, CAL)
    frame = pd.read_csv(cal)
    frame[frame["system"] == "x"].drop(columns="system").to_csv(cal, index=False)
    # Asked for by name, the separate design is refused; by default such a table is shared.
    code, out, err = _compare(
        run_cli, (test, cal), "--scores", SCORES, "--calibration-design", "separate"
    )
    assert code == 2 and out == ""
    assert "Use --calibration-design shared (the default for such a table)" in one_error_line(err)
    code, by_default, err = _compare(
        run_cli, (test, cal), "--scores", SCORES, "--categories", "A,tie,B", "--json"
    )
    assert code == 0, err
    assert json.loads(by_default)["settings"]["calibration"] == "shared"
    code, out, err = _compare(
        run_cli, (test, cal), "--scores", SCORES, "--categories", "A,tie,B",
        "--calibration-design", "shared", "--json",
    )  # fmt: skip
    assert code == 0, err
    tests = CategoricalCounts.from_counts(
        np.array([[TEST[(s, t)] for t in STRATA] for s in SYSTEMS]),
        categories=PREFERENCE, system=SYSTEMS, stratum=STRATA,
    )  # fmt: skip
    labelled = CategoricalCounts.from_counts(
        calibration=[CAL["x"]] * len(STRATA), categories=PREFERENCE, stratum=STRATA
    )
    counts = tests.with_calibration_from(labelled)  # one set, counted once, for every system
    assert counts.calibration_shared_over == ("system",)
    expected = bj.compare(counts, method="delta", scores=WIN_RATE, calibration="shared")
    for row in json.loads(out)["comparisons"]:
        at = expected.sel(pair=f"{row['first']} - {row['second']}", stratum=row["stratum"])
        assert [row["estimate"], row["lower"], row["upper"]] == [
            float(at["estimate"]),
            *at["ci"].values.tolist(),
        ]
