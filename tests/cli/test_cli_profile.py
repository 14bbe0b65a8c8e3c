"""``bayesjudge profile`` (issue 18): the profile as text and JSON, and its next command.

The central check: the command the profile suggests runs through ``bayesjudge.cli.main`` and
counts what a direct pandas tally of the written tables counts (each item once: n, k over the
unlabelled items; m0, tn, m1, tp over the labelled ones).
"""

import json
import shlex

import numpy as np
import pandas as pd
import pytest

import bayesjudge as bj
from bayesjudge.cli import main

FIELDS = ("n", "k", "m0", "tn", "m1", "tp")

#: The top-level keys of ``profile --json`` (documented in docs/cli.md).
JSON_KEYS = [
    "schema", "files", "columns", "roles", "guessed", "labels", "systems", "strata", "judges",
    "items", "overlap", "design", "counts", "problems", "next_command", "notes",
]  # fmt: skip


def _profile_json(capsys, *args) -> dict:
    assert main(["profile", *map(str, args), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _estimate_counts(capsys, argv: list[str]) -> dict:
    """Run the suggested command (with --json) and return its counts per (system, stratum)."""
    assert argv[0] == "bayesjudge"
    assert main([*argv[1:], "--json"]) == 0, capsys.readouterr().err
    rows = json.loads(capsys.readouterr().out)["results"]
    return {(r["system"], r["stratum"]): {f: r[f] for f in FIELDS} for r in rows}


def _tally(unlabelled: pd.DataFrame, labelled: pd.DataFrame, system: str | None) -> dict:
    out = {}
    u_groups = unlabelled.groupby(system) if system else [("all", unlabelled)]
    l_groups = dict(list(labelled.groupby(system)) if system else [("all", labelled)])
    for name, u in u_groups:
        lab = l_groups.get(name, labelled.iloc[:0])
        judge, human = lab["judge"].astype(int), lab["human"].astype(int)
        out[(str(name), "all")] = {
            "n": len(u),
            "k": int(u["judge"].astype(int).sum()),
            "m0": int((human == 0).sum()),
            "tn": int(((human == 0) & (judge == 0)).sum()),
            "m1": int((human == 1).sum()),
            "tp": int(((human == 1) & (judge == 1)).sum()),
        }
    return out


@pytest.fixture(scope="module")
def one_table(tmp_path_factory):
    """Random design, one table: 2 systems, 300 judged + 70 labelled items each (seed 21)."""
    table = bj.simulate.simulate_labelled_table(
        [0.55, 0.75], 0.8, 0.85, 300, 70, system=["m-1", "m-2"], random_seed=21
    ).drop(columns="truth")
    path = tmp_path_factory.mktemp("one") / "verdicts.csv"
    table.to_csv(path, index=False)
    return path, table


def test_one_table_next_command_runs_and_counts_like_a_tally(one_table, capsys):
    path, table = one_table
    out = _profile_json(capsys, path)
    assert out["design"]["name"] == "random"
    argv = out["next_command"]["argv"]
    assert shlex.split(out["next_command"]["line"]) == argv
    tally = _tally(table[table["human"].isna()], table[table["human"].notna()], "system")
    assert _estimate_counts(capsys, argv) == tally
    assert {(c["system"], c["stratum"]): {f: c[f] for f in FIELDS} for c in out["counts"]} == tally


def test_stratified_gold_next_command(tmp_path, capsys):
    test, calibration = bj.simulate.simulate_items(
        0.65, 0.8, 0.9, 250, 40, 45, system=["a", "b"], random_seed=22
    )
    test.drop(columns="truth").to_csv(tmp_path / "test.csv", index=False)
    calibration.to_csv(tmp_path / "gold.csv", index=False)
    out = _profile_json(capsys, tmp_path / "test.csv", "--gold", tmp_path / "gold.csv")
    assert out["design"]["name"] == "stratified"
    assert "--calibration" in out["next_command"]["argv"]
    assert _estimate_counts(capsys, out["next_command"]["argv"]) == _tally(
        test, calibration, "system"
    )


def test_random_gold_next_command_joins_by_item_id(tmp_path, capsys):
    table = bj.simulate.simulate_labelled_table(0.6, 0.85, 0.8, 400, 90, random_seed=23)
    table["item"] = [f"{i:04d}" for i in table["item"]]  # "0007": ids that look like numbers
    table[["item", "judge"]].to_csv(tmp_path / "verdicts.csv", index=False)
    gold = table[table["human"].notna()][["item", "human"]].astype({"human": int})
    gold.to_csv(tmp_path / "gold.csv", index=False)
    out = _profile_json(capsys, tmp_path / "verdicts.csv", "--gold", tmp_path / "gold.csv")
    assert out["design"]["name"] == "random"
    assert out["overlap"]["both"] == out["overlap"]["labelled"] == 90
    assert out["next_command"]["argv"][4:] == ["--gold", str(tmp_path / "gold.csv")]
    tally = _tally(table[table["human"].isna()], table[table["human"].notna()], None)
    assert _estimate_counts(capsys, out["next_command"]["argv"]) == tally


def test_an_id_column_with_another_name_is_passed_with_item(tmp_path, capsys):
    table = bj.simulate.simulate_labelled_table(0.6, 0.85, 0.8, 120, 40, random_seed=24)
    table = table.rename(columns={"item": "question_id"})
    table[["question_id", "judge"]].to_csv(tmp_path / "v.csv", index=False)
    gold = table[table["human"].notna()][["question_id", "human"]].astype({"human": int})
    gold.to_csv(tmp_path / "g.csv", index=False)
    out = _profile_json(capsys, tmp_path / "v.csv", "--gold", tmp_path / "g.csv")
    argv = out["next_command"]["argv"]
    assert argv[-2:] == ["--item", "question_id"]
    assert not [p for p in out["problems"] if p["severity"] == "error"]
    tally = _tally(table[table["human"].isna()], table[table["human"].notna()], None)
    assert _estimate_counts(capsys, argv) == tally


def test_test_format_is_read_and_passed_on(tmp_path, capsys):
    """A JSON Lines file without its suffix: --test-format jsonl reads it, and so does estimate."""
    table = bj.simulate.simulate_labelled_table(0.7, 0.8, 0.9, 90, 30, random_seed=27)
    table["item"] = table["item"].astype(str)
    with open(tmp_path / "verdicts.log", "w") as handle:
        for row in table[["item", "judge"]].to_dict(orient="records"):
            handle.write(json.dumps(row) + "\n")
    gold = table[table["human"].notna()][["item", "human"]].astype({"human": int})
    gold.to_csv(tmp_path / "gold.csv", index=False)
    log, gold_csv = tmp_path / "verdicts.log", tmp_path / "gold.csv"
    out = _profile_json(capsys, log, "--test-format", "jsonl", "--gold", gold_csv)
    assert out["files"]["test"]["format"] == "jsonl"
    argv = out["next_command"]["argv"]
    assert argv == [
        "bayesjudge", "estimate", "--test", str(log), "--test-format", "jsonl", "--gold",
        str(gold_csv),
    ]  # fmt: skip
    tally = _tally(table[table["human"].isna()], table[table["human"].notna()], None)
    assert _estimate_counts(capsys, argv) == tally
    assert main(["profile", str(log), "--format", "jsonl", "--json"]) == 0  # the older spelling
    capsys.readouterr()


def test_json_keys_are_stable(one_table, capsys):
    out = _profile_json(capsys, one_table[0])
    assert list(out) == JSON_KEYS
    assert out["schema"] == "bayesjudge.profile/1"
    assert list(out["columns"][0]) == [
        "table", "name", "dtype", "kind", "rows", "missing", "distinct", "top", "role", "how",
    ]  # fmt: skip
    assert list(out["problems"][0]) if out["problems"] else True
    assert list(out["next_command"]) == ["argv", "line"]


def test_text_output_and_output_file(one_table, tmp_path, capsys):
    target = tmp_path / "profile.txt"
    assert main(["profile", str(one_table[0]), "--output", str(target)]) == 0
    printed = capsys.readouterr().out
    assert target.read_text() == printed
    for heading in ("Columns:", "Label values:", "Labelling design: random", "Next command:"):
        assert heading in printed
    assert f"  bayesjudge estimate --test {shlex.quote(str(one_table[0]))}" in printed
    assert [p.name for p in tmp_path.iterdir()] == ["profile.txt"]  # no temporary file left


def test_hostile_names_are_escaped_in_text_and_exact_in_json(tmp_path, capsys):
    rng = np.random.default_rng(25)
    systems = ["<script>x</script>", "a\nb", "\x1b[31mred", "$HOME | *md*"]
    table = pd.DataFrame(
        {
            "sys\ntem": np.repeat(systems, 50),
            "<b>verdict</b>": rng.integers(0, 2, 200),
            "$gold": np.where(rng.random(200) < 0.5, rng.integers(0, 2, 200).astype(str), ""),
        }
    )
    path = tmp_path / "hostile $name.csv"
    table.to_csv(path, index=False)
    options = ["--system", "sys\ntem", "--judge", "<b>verdict</b>", "--human", "$gold"]
    assert main(["profile", str(path), *options]) == 0
    text = capsys.readouterr().out
    assert "\x1b" not in text and "a\\nb" in text and "sys\\ntem" in text
    out = _profile_json(capsys, path, *options)
    assert [s["name"] for s in out["systems"]] == sorted(systems)
    argv = out["next_command"]["argv"]
    assert argv[argv.index("--system") + 1] == "sys\ntem"
    assert shlex.split(out["next_command"]["line"]) == argv
    labelled = table[table["$gold"] != ""].rename(
        columns={"<b>verdict</b>": "judge", "$gold": "human"}
    )
    unlabelled = table[table["$gold"] == ""].rename(columns={"<b>verdict</b>": "judge"})
    tally = _tally(unlabelled, labelled, "sys\ntem")
    assert _estimate_counts(capsys, argv) == tally


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["nope.csv"], "FILE nope.csv: no such file"),
        (["{csv}", "--judge", "verdikt"], "Column 'verdikt' (given as the judge column)"),
        (["{csv}", "--gold", "missing.csv"], "--gold missing.csv: no such file"),
        (["{csv}", "--output", "{csv}/x.txt"], "--output"),
    ],
)
def test_errors_are_one_line(one_table, capsys, args, expected):
    csv = str(one_table[0])
    argv = ["profile", *(a.replace("{csv}", csv) for a in args)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("bayesjudge: error:") and expected in err
    assert "Traceback" not in err


def test_a_json_lines_file_is_read_as_estimate_reads_it(tmp_path, capsys):
    table = bj.simulate.simulate_labelled_table(0.7, 0.8, 0.9, 150, 50, random_seed=26)
    table["item"] = table["item"].astype(str)
    with open(tmp_path / "verdicts.jsonl", "w") as handle:
        for row in table[["item", "judge"]].to_dict(orient="records"):
            handle.write(json.dumps(row) + "\n")
    gold = table[table["human"].notna()][["item", "human"]].astype({"human": int})
    gold.to_csv(tmp_path / "gold.csv", index=False)
    out = _profile_json(capsys, tmp_path / "verdicts.jsonl", "--gold", tmp_path / "gold.csv")
    assert out["files"]["test"]["format"] == "jsonl"
    assert out["design"]["name"] == "random"
    tally = _tally(table[table["human"].isna()], table[table["human"].notna()], None)
    tally = {("all", "all"): tally[("all", "all")]}
    assert _estimate_counts(capsys, out["next_command"]["argv"]) == tally


@pytest.mark.slow
def test_an_inspect_log_written_by_inspect(tmp_path, capsys):
    """Inspect's own eval() (mock model, 3 epochs, one failed sample): the profile's counts."""
    from harness_logs import EPOCHS, INSPECT_IDS, write_inspect_log
    from inspect_ai.log import read_eval_log

    log = write_inspect_log(tmp_path, fail_one=True)
    out = _profile_json(capsys, log, "--scorer", "model_graded_qa")
    samples = read_eval_log(str(log)).samples
    verdicts = [s.scores["model_graded_qa"].value for s in samples if s.scores]
    assert out["files"]["test"]["rows"] == len(INSPECT_IDS) * EPOCHS
    assert out["items"]["verdicts_per_item"] == {str(EPOCHS): len(INSPECT_IDS)}
    assert out["counts"][0]["n"] == len(verdicts)
    assert out["counts"][0]["k"] == verdicts.count("C")
    codes = {p["code"] for p in out["problems"]}
    assert {"missing_verdicts", "repeated_items", "ids_differ_as_text"} <= codes
    assert out["next_command"] is None  # no labels and repeated verdicts: nothing to estimate
    # With a gold file labelling judged items: the profile's verdict agrees with estimate's.
    gold = pd.DataFrame({"item": ["007", "7", "x", "12"], "human": [1, 0, 1, 1]})
    gold.to_csv(tmp_path / "gold.csv", index=False)
    out = _profile_json(capsys, log, "--scorer", "model_graded_qa", "--gold", tmp_path / "gold.csv")
    assert out["design"]["name"] == "random" and out["overlap"]["both"] == 4
    errors = [p for p in out["problems"] if p["severity"] == "error"]
    argv = out["next_command"]["argv"]
    assert argv[-2:] == ["--gold", str(tmp_path / "gold.csv")]
    if errors:
        assert main([*argv[1:], "--json"]) == 2
        assert errors[-1]["message"].split(": ", 1)[1][:40] in capsys.readouterr().err
    else:
        assert main([*argv[1:], "--json"]) == 0


def test_a_mixed_design_is_an_error_that_estimate_gives_too(tmp_path, capsys):
    pd.DataFrame({"item": ["007", "8", "9", "10"], "judge": [1, 0, 1, 1]}).to_csv(
        tmp_path / "v.csv", index=False
    )
    pd.DataFrame({"item": ["7", "8"], "human": [1, 0]}).to_csv(tmp_path / "g.csv", index=False)
    out = _profile_json(capsys, tmp_path / "v.csv", "--gold", tmp_path / "g.csv")
    assert out["design"]["name"] == "mixed" and out["counts"] is None
    codes = {p["code"]: p["severity"] for p in out["problems"]}
    assert codes == {"design_mixed": "error", "ids_differ_as_text": "error"}
    argv = out["next_command"]["argv"]
    assert argv[4:6] == ["--gold", str(tmp_path / "g.csv")]
    assert main(argv[1:]) == 2
    assert "'7'" in capsys.readouterr().err  # estimate names the unmatched id too


def _k_table(labels, rows: int = 90, seed: int = 5) -> pd.DataFrame:
    """K-category verdicts of 2 systems, the judge right 80 % of the time, 1/3 labelled."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(labels, rows)
    judge = np.where(rng.random(rows) < 0.8, truth, rng.choice(labels, rows))
    human = np.where(np.arange(rows) % 3 == 0, truth, "")
    return pd.DataFrame({"system": np.repeat(["x", "y"], rows // 2), "verdict": judge,
                         "human": human})  # fmt: skip


def test_k_category_next_command_runs_and_counts_alike(tmp_path, capsys):
    path = tmp_path / "prefs.csv"
    _k_table(["A", "tie", "B"]).to_csv(path, index=False)
    assert main(["profile", str(path)]) == 0
    text = capsys.readouterr().out
    assert "NOT UNDERSTOOD" not in text and "→ a category" in text
    assert "Problems: none found" in text and "Next command:\n" in text
    assert "K = 3 categories" in text and "--scores 'A=…,B=…,tie=…'" in text
    out = _profile_json(capsys, path)
    assert list(out) == [*JSON_KEYS, "categories"] and out["categories"] == ["A", "B", "tie"]
    argv = out["next_command"]["argv"]
    assert argv[argv.index("--categories") + 1] == "A,B,tie"
    assert main([*argv[1:], "--json"]) == 0, capsys.readouterr().err
    result = json.loads(capsys.readouterr().out)
    assert result["settings"]["categories"] == out["categories"]
    groups = {(g["system"], g["stratum"]): (g["n"], g["m"]) for g in result["groups"]}
    assert groups == {(c["system"], c["stratum"]): (c["n"], c["m"]) for c in out["counts"]}
    assert groups == {("x", "all"): (30, 15), ("y", "all"): (30, 15)}  # rows % 3 labelled


def test_hostile_k_category_labels_and_ids(tmp_path, capsys):
    labels = ["A$x", "tie\n<b>x</b>", "B,1"]
    table = _k_table(labels, seed=8)
    table.insert(0, "id", [str(i) for i in range(len(table))])
    table.loc[10, "id"] = "01"  # the same number as id "1", written differently
    path = tmp_path / "hostile.csv"
    table.to_csv(path, index=False)
    assert main(["profile", str(path)]) == 0
    text = capsys.readouterr().out
    assert "tie\\n<b>x</b>" in text and "tie\n<b>" not in text
    assert "[ids_differ_as_text]" in text and "'01'" in text
    out = _profile_json(capsys, path)
    assert out["categories"] == ["A$x", "B,1", "tie\n<b>x</b>"]
    argv = out["next_command"]["argv"]
    # a label holding a comma: the JSON form, exact in the argv and through the shell
    assert json.loads(argv[argv.index("--categories") + 1]) == out["categories"]
    assert shlex.split(out["next_command"]["line"]) == argv
    assert '"A$x": "…"' in out["notes"][0]  # the --scores example in its JSON form
    assert main([*argv[1:], "--json"]) == 0, capsys.readouterr().err
    result = json.loads(capsys.readouterr().out)
    assert result["settings"]["categories"] == out["categories"]
    assert sorted({r["category"] for r in result["results"]}) == sorted(labels)
