"""``bayesjudge.data.profile.profile_table``: what a verdict file holds (issue 18).

Tables come from ``bj.simulate`` (seeded) and the shipped LLMBar data; every count the profile
reports is compared with a tally made here with pandas, never with the package's counting.
"""

import json
import shlex

import numpy as np
import pandas as pd
import pytest

import bayesjudge as bj
from bayesjudge.data.profile import MIN_LABELS, Profile, profile_table

FIELDS = ("n", "k", "m0", "tn", "m1", "tp")


def _tally(unlabelled: pd.DataFrame, labelled: pd.DataFrame, by: list[str]) -> dict:
    """{group: {n, k, m0, tn, m1, tp}} counted with pandas (verdict and label as 0/1 ints)."""
    out = {}
    keys = sorted(
        set(map(tuple, unlabelled[by].to_numpy())) | set(map(tuple, labelled[by].to_numpy()))
    )
    u_keys = list(map(tuple, unlabelled[by].to_numpy()))
    l_keys = list(map(tuple, labelled[by].to_numpy()))
    for key in keys:
        u = unlabelled.loc[np.array([k == key for k in u_keys], dtype=bool)]
        lab = labelled.loc[np.array([k == key for k in l_keys], dtype=bool)]
        judge, human = lab["judge"].astype(int), lab["human"].astype(int)
        out[tuple(map(str, key))] = {
            "n": len(u),
            "k": int(u["judge"].astype(int).sum()),
            "m0": int((human == 0).sum()),
            "tn": int(((human == 0) & (judge == 0)).sum()),
            "m1": int((human == 1).sum()),
            "tp": int(((human == 1) & (judge == 1)).sum()),
        }
    return out


def _counts(profile: Profile, by=("system", "stratum")) -> dict:
    return {tuple(str(r[d]) for d in by): {f: r[f] for f in FIELDS} for r in profile.counts}


@pytest.fixture(scope="module")
def one_table(tmp_path_factory):
    """One table of the random design: 2 systems x 480 judged items, 80 labelled each (seed 3)."""
    table = bj.simulate.simulate_labelled_table(
        [0.6, 0.7], 0.8, 0.9, 400, 80, system=["alpha", "beta"], random_seed=3
    )
    path = tmp_path_factory.mktemp("one") / "verdicts.csv"
    table.drop(columns="truth").to_csv(path, index=False)
    return path, table


def test_one_table_random_design_counts_match_a_direct_tally(one_table):
    path, table = one_table
    profile = profile_table(path)
    assert profile.roles["test"] == {
        "judge": "judge", "human": "human", "item": "item", "system": "system",
    }  # fmt: skip
    assert set(profile.guessed) == {"test.judge", "test.human", "test.item", "test.system"}
    assert profile.design == "random"
    labelled = table[table["human"].notna()]
    unlabelled = table[table["human"].isna()].assign(stratum="all")
    tally = _tally(unlabelled, labelled.assign(stratum="all"), ["system", "stratum"])
    assert _counts(profile) == tally
    assert profile.overlap["labelled"] == len(labelled) == 160
    assert profile.systems == (("alpha", 480), ("beta", 480))
    assert profile.command == ("bayesjudge", "estimate", "--test", str(path), "--system", "system")
    assert [p.code for p in profile.problems] == []
    human = next(lab for lab in profile.labels if lab.role == "human")
    assert human.missing == table["human"].isna().sum()
    assert {v: (c, m) for v, c, m in human.values} == {
        "1.0": (int((labelled["human"] == 1).sum()), 1),
        "0.0": (int((labelled["human"] == 0).sum()), 0),
    }


def test_parquet_and_dataframe_give_the_csv_counts(one_table, tmp_path):
    path, table = one_table
    parquet = tmp_path / "verdicts.parquet"
    table.drop(columns="truth").to_parquet(parquet)
    from_csv = profile_table(path)
    from_parquet = profile_table(parquet)
    frame = profile_table(table.drop(columns="truth"))
    assert from_parquet.counts == from_csv.counts == frame.counts
    assert from_parquet.files["test"]["format"] == "parquet"
    assert frame.command is None and any("dataframe" in n for n in frame.notes)


@pytest.fixture(scope="module")
def stratified(tmp_path_factory):
    """Separate test and calibration tables: 2 systems x 2 strata, m0 = 30, m1 = 40 (seed 5)."""
    test, calibration = bj.simulate.simulate_items(
        [[0.6, 0.7], [0.8, 0.5]], 0.8, 0.9, 200, 30, 40, system=["a", "b"],
        stratum=["s1", "s2"], random_seed=5,
    )  # fmt: skip
    folder = tmp_path_factory.mktemp("stratified")
    test.drop(columns="truth").to_csv(folder / "test.csv", index=False)
    calibration.to_csv(folder / "gold.csv", index=False)
    return folder, test, calibration


def test_stratified_gold_file(stratified):
    folder, test, calibration = stratified
    profile = profile_table(folder / "test.csv", folder / "gold.csv")
    assert profile.design == "stratified"
    assert profile.roles["gold"]["human"] == "human"
    # ids are matched per system ("cal-0" names an item of each stratum: counted once here)
    distinct = len(calibration.drop_duplicates(["system", "item"]))
    assert profile.overlap["both"] == 0 and profile.overlap["labelled"] == distinct
    assert _counts(profile) == _tally(test, calibration, ["system", "stratum"])
    assert profile.command[4:6] == ("--calibration", str(folder / "gold.csv"))
    assert not profile.problems


def _random_split(seed: int, n: int = 300, labelled: int = 50):
    """(judged table without labels, gold table of ids and labels): ids 'q0'..'q{n-1}'."""
    table = bj.simulate.simulate_labelled_table(0.7, 0.8, 0.9, n, labelled, random_seed=seed)
    table["item"] = [f"q{i}" for i in table["item"]]
    gold = table[table["human"].notna()][["item", "human"]].astype({"human": int})
    return table[["item", "judge"]], gold, table


def test_random_gold_file_matched_by_item_id(tmp_path):
    judged, gold, _ = _random_split(7)
    judged.to_csv(tmp_path / "v.csv", index=False)
    gold.to_csv(tmp_path / "g.csv", index=False)
    profile = profile_table(tmp_path / "v.csv", tmp_path / "g.csv")
    assert profile.design == "random"
    assert profile.overlap == {
        "key": ["item"], "judged": 350, "labelled": 50, "both": 50, "labelled_only": 0,
        "judged_only": 300,
    }  # fmt: skip
    assert profile.command[4:] == ("--gold", str(tmp_path / "g.csv"))
    _, _, table = _random_split(7)
    table = table.assign(system="all", stratum="all")
    tally = _tally(
        table[table["human"].isna()], table[table["human"].notna()], ["system", "stratum"]
    )
    assert _counts(profile) == tally


def test_gold_with_unknown_ids_is_a_mixed_design(tmp_path):
    judged, gold, _ = _random_split(8)
    extra = pd.DataFrame({"item": ["x1", "x2", "x3"], "human": [1, 0, 1]})
    judged.to_csv(tmp_path / "v.csv", index=False)
    pd.concat([gold, extra]).to_csv(tmp_path / "g.csv", index=False)
    profile = profile_table(tmp_path / "v.csv", tmp_path / "g.csv")
    assert profile.design == "mixed"
    assert profile.overlap["labelled_only"] == 3 and profile.overlap["both"] == 50
    problem = next(p for p in profile.problems if p.code == "design_mixed")
    assert problem.severity == "error" and "'x1', 'x2', 'x3'" in problem.message
    assert profile.counts is None  # nothing counted while an error stands


def test_gold_of_only_unknown_ids_without_verdicts(tmp_path):
    judged, _, _ = _random_split(9)
    judged.to_csv(tmp_path / "v.csv", index=False)
    pd.DataFrame({"item": ["z1", "z2"], "human": [1, 0]}).to_csv(tmp_path / "g.csv", index=False)
    profile = profile_table(tmp_path / "v.csv", tmp_path / "g.csv")
    assert profile.design == "unknown"
    codes = {p.code: p.severity for p in profile.problems}
    assert codes["gold_unknown_ids"] == "error" and codes["no_labels"] == "error"


def test_ids_that_differ_only_as_text(tmp_path):
    judged = pd.DataFrame({"item": ["007", "8", "9", "10"], "judge": [1, 0, 1, 1]})
    gold = pd.DataFrame({"item": ["7", "8"], "human": [1, 0]})
    judged.to_csv(tmp_path / "v.csv", index=False)
    gold.to_csv(tmp_path / "g.csv", index=False)
    profile = profile_table(tmp_path / "v.csv", tmp_path / "g.csv", item="item")
    assert profile.design == "mixed"
    alike = next(p for p in profile.problems if p.code == "ids_differ_as_text")
    assert "'7' (gold) and '007' (verdicts)" in alike.message
    inside = profile_table(pd.DataFrame({"item": ["7", "07", "8"], "judge": [1, 0, 1]}))
    assert "'07' and '7'" in next(
        p.message for p in inside.problems if p.code == "ids_differ_as_text"
    )


def test_repeated_items_are_counted_and_named(tmp_path):
    rng = np.random.default_rng(4)
    table = pd.DataFrame(
        {
            "sample_id": np.repeat([f"s{i}" for i in range(40)], 3),
            "epoch": np.tile([1, 2, 3], 40),
            "verdict": rng.choice(["C", "I"], 120),
        }
    )
    profile = profile_table(table, positive="C")
    assert profile.roles["test"] == {"judge": "verdict", "item": "sample_id", "repeats": "epoch"}
    assert profile.items["verdicts_per_item"] == {"3": 40}
    assert profile.items["repeated"] == 40 and profile.items["max_verdicts"] == 3
    problem = next(p for p in profile.problems if p.code == "repeated_items")
    assert problem.severity == "note"
    assert "--item sample_id --repeats epoch" in problem.message
    assert "differ in no other column" in problem.message
    verdicts = next(lab for lab in profile.labels if lab.role == "judge")
    assert {v: m for v, _, m in verdicts.values} == {"C": 1, "I": 0}
    # Counted as clusters: every verdict (n = Σr, k = Σk) and the items by r and j.
    assert (profile.counts[0]["n"], profile.counts[0]["k"]) == (
        120,
        int((table.verdict == "C").sum()),
    )
    table.to_csv(tmp_path / "epochs.csv", index=False)
    profile = profile_table(tmp_path / "epochs.csv", positive="C")
    assert profile.command is None  # no labels: repeated verdicts have no naive estimate
    assert any("no uncorrected (naive) estimate" in note for note in profile.notes)
    # Without a column numbering the repeats: a warning that says how to add one.
    path = tmp_path / "verdicts.csv"
    table.drop(columns="epoch").to_csv(path, index=False)
    profile = profile_table(path, positive="C")
    problem = next(p for p in profile.problems if p.code == "repeated_items")
    assert problem.severity == "warning" and "--repeats COLUMN" in problem.message
    assert "--repeats" not in profile.command


def test_unparsed_verdicts_and_unmapped_labels():
    table = pd.DataFrame(
        {
            "judge": ["yes", "no", "maybe", "yes", "no", "yes"],
            "human": ["good", None, "bad", None, "good", None],
        }
    )
    profile = profile_table(table)
    problems = {p.code: p for p in profile.problems}
    assert "'maybe' (1 row)" in problems["unparsed_verdicts"].message
    assert "--positive good" in problems["unmapped_labels"].message
    assert problems["unparsed_verdicts"].severity == "error"
    assert profile.counts is None
    # --positive applies to every label column: right for good/bad verdicts and labels ...
    both = profile_table(table.assign(judge=["good", "bad"] * 3), positive="good")
    assert not [p for p in both.problems if p.severity == "error"] and both.counts
    assert {(lab.role, v): m for lab in both.labels for v, _, m in lab.values} == {
        ("judge", "good"): 1, ("judge", "bad"): 0, ("human", "good"): 1, ("human", "bad"): 0,
    }  # fmt: skip
    # ... while the yes/no/maybe verdicts then hold neither it nor one other value
    stray = profile_table(table, positive="good")
    verdicts = next(lab for lab in stray.labels if lab.role == "judge")
    assert {m for _, _, m in verdicts.values} == {None}
    assert "applies to every label column" in stray.problems[0].message


def test_groups_with_one_class_or_few_labels():
    rows = [("a", 1, 1)] * 12 + [("a", 0, 0)] * (MIN_LABELS - 1) + [("b", 1, 1)] * 5
    table = pd.DataFrame(rows, columns=["model", "judge", "human"])
    table = pd.concat([table, pd.DataFrame({"model": ["a", "b"], "judge": [1, 0]})])
    profile = profile_table(table)
    problems = {p.code: p for p in profile.problems}
    assert "system=b, stratum=all: m0=0, m1=5" in problems["one_class"].message
    assert f"system=a, stratum=all: m0={MIN_LABELS - 1}, m1=12" in problems["few_labels"].message


HOSTILE = {
    "judge": "<b>verdict</b>\n$x$",
    "human": "| gold *label*",
    "system": "model $HOME `rm`",
}


def test_hostile_names_are_kept_exactly_in_roles_and_command(tmp_path):
    table = bj.simulate.simulate_labelled_table(
        0.7, 0.8, 0.9, 60, 20, system=["<i>a</i>", "b\nc"], random_seed=2
    )
    table = table.drop(columns=["truth", "item"]).rename(
        columns={"judge": HOSTILE["judge"], "human": HOSTILE["human"], "system": HOSTILE["system"]}
    )
    path = tmp_path / "we ird's $file.csv"
    table.to_csv(path, index=False)
    profile = profile_table(path, **HOSTILE)
    assert profile.roles["test"] == HOSTILE
    assert [n for n, _ in profile.systems] == ["<i>a</i>", "b\nc"]
    assert shlex.split(profile.command_line) == list(profile.command)
    assert profile.command[3] == str(path)
    assert json.loads(json.dumps(profile.to_dict()))["roles"]["test"] == HOSTILE


def test_a_given_column_that_is_absent():
    with pytest.raises(
        ValueError, match=r"Column 'verdikt' \(given as the judge column\).*'judge'"
    ):
        profile_table(pd.DataFrame({"judge": [1, 0]}), judge="verdikt")


def test_no_labels_suggests_the_naive_estimate(tmp_path):
    pd.DataFrame({"judge": [1, 0, 1]}).to_csv(tmp_path / "v.csv", index=False)
    profile = profile_table(tmp_path / "v.csv")
    assert profile.design == "none"
    assert profile.command[-2:] == ("--method", "naive")
    assert {p.code: p.severity for p in profile.problems} == {"no_labels": "warning"}


def test_llmbar_judges_become_systems():
    frame = bj.datasets.load_llmbar(
        evaluator=["GPT-4", "LLaMA2"], strategy="Vanilla_NoRules", swap=False, warn=False
    )
    profile = profile_table(frame)
    roles = profile.roles["test"]
    assert (roles["evaluator"], roles["stratum"], roles["judge"], roles["human"]) == (
        "evaluator", "subset", "judge", "human",
    )  # fmt: skip
    assert dict(profile.judges) == frame["evaluator"].value_counts().to_dict()
    assert any("each judge is counted as a system" in n for n in profile.notes)
    kept = frame[frame["judge"].notna()].assign(system=frame["evaluator"], stratum=frame["subset"])
    tally = _tally(kept.iloc[:0], kept, ["system", "stratum"])
    assert _counts(profile) == tally
    missing = next(p for p in profile.problems if p.code == "missing_verdicts")
    assert f"{int(frame['judge'].isna().sum())} rows" in missing.message
    assert "all_labelled" in {p.code for p in profile.problems}


def test_profile_does_not_print(one_table, capsys):
    profile_table(one_table[0])
    assert capsys.readouterr() == ("", "")


def test_a_judge_whose_labelled_items_lack_a_class():
    rng = np.random.default_rng(6)
    rows = []
    for judge_model in ("judge-A", "judge-B"):
        for system in ("s1", "s2"):
            human = rng.integers(0, 2, 40).astype(str).astype(object)
            human[20:] = None
            if judge_model == "judge-A":
                human[:20] = "1"  # judge-A's labelled items are all correct
            rows.append(
                pd.DataFrame(
                    {
                        "judge_model": judge_model,
                        "system": system,
                        "judge": rng.integers(0, 2, 40),
                        "human": human,
                    }
                )
            )
    profile = profile_table(pd.concat(rows, ignore_index=True))
    assert profile.roles["test"]["evaluator"] == "judge_model"
    assert profile.judges == (("judge-A", 80), ("judge-B", 80))
    problems = {p.code: p for p in profile.problems}
    assert "'judge-A'" in problems["judge_one_class"].message
    assert "judge-B" not in problems["judge_one_class"].message
    assert problems["several_judges"].severity == "warning"


# --- K-category labels ---------------------------------------------------------------------------


def _k_table(seed: int = 7, rows: int = 120) -> pd.DataFrame:
    """Pairwise preferences A / tie / B of 2 systems, a third of the rows labelled (seeded)."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(["A", "tie", "B"], rows, p=[0.5, 0.2, 0.3])
    # the judge keeps the truth 80 % of the time, else says one of the three at random
    judge = np.where(rng.random(rows) < 0.8, truth, rng.choice(["A", "tie", "B"], rows))
    human = np.where(rng.random(rows) < 1 / 3, truth, "")
    return pd.DataFrame({"system": np.repeat(["x", "y"], rows // 2), "verdict": judge,
                         "human": human})  # fmt: skip


def test_k_category_labels_are_read_as_the_commands_read_them(tmp_path):
    from bayesjudge.cli import _categorical
    from bayesjudge.data import CategoricalCounts, labels
    from bayesjudge.data import profile as profile_module

    # one rule, not a copy: the commands decide binary or K categories with this function
    assert _categorical.binary_classes is profile_module.binary_classes is labels.binary_classes
    table = _k_table()
    path = tmp_path / "prefs.csv"
    table.to_csv(path, index=False)
    profile = profile_table(path)
    assert profile.categories == ("A", "B", "tie")  # infer_categories' alphabetical order
    assert all(lab.categorical for lab in profile.labels)
    assert {v["means"] for lab in profile.to_dict()["labels"] for v in lab["values"]} == {
        "category"
    }
    assert not [p for p in profile.problems if p.severity != "note"], profile.problems
    assert "K = 3 categories" in profile.notes[0] and "--scores 'A=…,B=…,tie=…'" in profile.notes[0]
    assert profile.command[-2:] == ("--categories", "A,B,tie")
    assert profile.to_dict()["categories"] == ["A", "B", "tie"]
    # the counts: n unlabelled and m labelled rows per system, tallied with pandas, which
    # also equal CategoricalCounts.from_frames' own sums
    labelled = table["human"] != ""
    tally = {
        (s, "all"): {"n": int((~labelled & (table.system == s)).sum()),
                     "m": int((labelled & (table.system == s)).sum())}
        for s in ("x", "y")
    }  # fmt: skip
    assert {(r["system"], r["stratum"]): {"n": r["n"], "m": r["m"]} for r in profile.counts} == (
        tally
    )
    direct = CategoricalCounts.from_frames(path, judge="verdict", system="system")
    assert int(direct.dataset["calibration"].sum()) == int(labelled.sum())


def test_verdicts_or_labels_of_one_role_only_are_warned_as_estimate_does():
    from bayesjudge.data import CategoricalCounts
    from bayesjudge.warnings import IllConditionedJudgeWarning, SmallSampleWarning

    base = _k_table(seed=11)
    judged = base.copy()
    judged.loc[[1, 2], "verdict"] = "C"  # 'C' only among the verdicts
    labelled = base.copy()
    labelled.loc[labelled.index[labelled.human != ""][:2], "human"] = "X"  # only among labels
    both = judged.assign(human=labelled.human)
    profile = profile_table(both, judge="verdict")
    problems = {p.code: p for p in profile.problems}
    assert "'C'" in problems["categories_unlabelled"].message
    assert "'X'" in problems["categories_never_judged"].message
    assert "'A'" not in problems["categories_unlabelled"].message + (
        problems["categories_never_judged"].message
    )
    assert profile.categories == ("A", "B", "C", "X", "tie")
    # what the warnings say estimate does: a NaN estimate, with estimate's warning
    for table, warning, match, code in (
        (judged, SmallSampleWarning, "true category has no calibration items",
         "categories_unlabelled"),
        (labelled, IllConditionedJudgeWarning, "singular", "categories_never_judged"),
    ):  # fmt: skip
        codes = [p.code for p in profile_table(table, judge="verdict").problems]
        assert codes == [code]
        counts = CategoricalCounts.from_frames(table.replace("", None), judge="verdict")
        with pytest.warns(warning, match=match):
            result = bj.estimate(counts)
        assert np.isnan(result["estimate"].values).all()
    assert [p.code for p in profile_table(base, judge="verdict").problems] == []


def test_a_stray_text_value_stays_binary_and_a_third_number_is_a_scale(tmp_path):
    table = pd.DataFrame({"judge": ["1", "0", "unsure", "1", "0", "1"] * 4,
                          "human": ["1", "", "0", "", "1", "0"] * 4})  # fmt: skip
    stray = profile_table(table)
    assert stray.categories is None and "categories" not in stray.to_dict()
    assert "'unsure' (4 rows)" in {p.code: p for p in stray.problems}["unparsed_verdicts"].message
    # 0/1/2 is a rubric: K categories ordered by value, no --categories needed
    path = tmp_path / "rubric.csv"
    table.replace("unsure", "2").to_csv(path, index=False)
    rubric = profile_table(path)
    assert rubric.categories == ("0", "1", "2")
    assert not [p for p in rubric.problems if p.severity == "error"], rubric.problems
    assert rubric.command == ("bayesjudge", "estimate", "--test", str(path))
    assert "--scores 0=0,1=1,2=2" in rubric.notes[0]


def test_look_alike_k_labels_are_an_error_naming_them():
    table = pd.DataFrame({"judge": ["1", "01", "2", "3"] * 3, "human": ["1", "2", "3", ""] * 3})
    profile = profile_table(table)
    assert profile.categories == ("01", "1", "2", "3")  # by value, then as text
    error = {p.code: p for p in profile.problems}["command_fails"]
    assert "'1'" in error.message and "'01'" in error.message and profile.counts is None


def test_repeated_k_category_verdicts_are_an_error_as_in_the_commands():
    table = pd.DataFrame({"item": list("aabbcc"), "epoch": [1, 2] * 3,
                          "verdict": ["A", "B", "tie", "tie", "A", "A"],
                          "human": ["A", "B", "tie", "tie", "", ""]})  # fmt: skip
    profile = profile_table(table)
    codes = {p.code: p for p in profile.problems}
    assert profile.categories == ("A", "B", "tie") and codes["repeated_items"].severity == "note"
    assert "not supported for K-category verdicts" in codes["command_fails"].message


def test_k_category_verdicts_without_labels_have_no_naive_command(tmp_path):
    path = tmp_path / "unlabelled.csv"
    pd.DataFrame({"verdict": ["A", "tie", "B", "A"]}).to_csv(path, index=False)
    profile = profile_table(path)
    assert profile.categories == ("A", "B", "tie") and profile.command is None
    assert "no uncorrected (naive) estimate of K-category" in profile.notes[-1]
    assert [p.code for p in profile.problems] == ["no_labels"]
