"""The LLMBar loader: parsing, validation and missing verdicts on small tables written here,
and the documented numbers of the real data shipped with the package (never ``../shared``).
"""

from __future__ import annotations

import gzip
import hashlib
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayesjudge import datasets
from bayesjudge.datasets import (
    DATA_ENV,
    LLMBAR_FILES,
    llmbar_counts,
    load_llmbar,
    missing_verdicts,
    split_calibration,
)
from bayesjudge.warnings import MissingLabelWarning

REPO = Path(__file__).resolve().parents[2]
# The package-data folder, found the way the loader finds it (not by a path into the checkout).
SHIPPED = Path(str(resources.files("bayesjudge").joinpath(datasets.PACKAGED_DATA)))

VERDICT_HEADER = "subset,item,human,evaluator,strategy,swap,judge"
ITEM_HEADER = "subset,item,human,input_chars,output_1_chars,output_2_chars"
# Two subsets, three items; judge "A" answers everything, judge "B" has one unparsed verdict.
VERDICTS = [
    "S1,0,1,A,V,False,1",
    "S1,0,1,A,V,True,2",
    "S1,1,2,A,V,False,2",
    "S1,1,2,A,V,True,2",
    "S2,0,2,A,V,False,1",
    "S2,0,2,A,V,True,1",
    "S1,0,1,B,V,False,",
    "S1,1,2,B,V,False,1",
    "S2,0,2,B,V,False,2",
]
ITEMS = ["S1,0,1,10,300,200", "S1,1,2,10,100,250", "S2,0,2,5,40,40"]


def write_tables(folder: Path, verdicts=VERDICTS, items=ITEMS, *, v_header=VERDICT_HEADER,
                 i_header=ITEM_HEADER) -> Path:  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    for name, header, rows in (
        ("llmbar_verdicts.csv.gz", v_header, verdicts),
        ("llmbar_items.csv.gz", i_header, items),
    ):
        with gzip.open(folder / name, "wt", encoding="utf-8") as fh:
            fh.write("\n".join([header, *rows]) + "\n")
    return folder


@pytest.fixture
def small(tmp_path):
    return write_tables(tmp_path / "data")


# --------------------------------------------------------------------------- parsing


def test_parses_vocabulary_lengths_and_keeps_missing(small):
    with pytest.warns(MissingLabelWarning, match=r"1 of 9 LLMBar verdicts .* B V: 1"):
        frame = load_llmbar(small)
    assert len(frame) == 9
    assert list(frame.columns) == [
        "subset", "item", "evaluator", "strategy", "swap", "human", "judge",
        "input_chars", "output_1_chars", "output_2_chars", "longer",
    ]  # fmt: skip
    assert frame["judge"].dtype == "boolean" and frame["human"].dtype == bool
    row = frame[(frame.subset == "S1") & (frame.item == 0) & (frame.evaluator == "A")]
    # human == 1 -> True (Z = 1); judge "1" -> True, "2" -> False; swap parsed as bool.
    assert row["human"].tolist() == [True, True]
    assert row["judge"].tolist() == [True, False]
    assert row["swap"].tolist() == [False, True]
    missing = frame[(frame.evaluator == "B") & (frame.subset == "S1") & (frame.item == 0)]
    assert missing["judge"].isna().all()  # kept, not dropped
    assert frame.attrs["missing_verdicts"] == {"B/V": 1}
    assert frame.attrs["rows_read"] == 9
    longer = frame.drop_duplicates(["subset", "item"]).set_index(["subset", "item"])["longer"]
    assert longer.to_dict() == {("S1", 0): "output_1", ("S1", 1): "output_2", ("S2", 0): "tie"}
    assert missing_verdicts(frame).to_dict() == {("B", "V"): 1}


def test_selection_and_warn_off(small):
    frame = load_llmbar(small, evaluator="A", swap=False, warn=False)  # no missing: no warning
    assert set(frame["evaluator"]) == {"A"} and not frame["swap"].any() and len(frame) == 3
    assert frame.attrs["missing_verdicts"] == {}
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = load_llmbar(small, evaluator="B", warn=False)
    assert quiet.attrs["missing_verdicts"] == {"B/V": 1} and quiet["judge"].isna().sum() == 1
    with pytest.raises(ValueError, match=r"evaluator: unknown value\(s\) \['C'\].*\['A', 'B'\]"):
        load_llmbar(small, evaluator="C")
    with pytest.raises(ValueError, match="no verdicts for"):
        load_llmbar(small, evaluator="B", swap=True)


@pytest.mark.parametrize(
    ("row", "pattern"),
    [
        ("S1,0,3,A,V,False,1", r"column 'human' must hold '1' or '2'; found '3' \(1 rows\)"),
        ("S1,0,1,A,V,False,x", r"column 'judge' must hold '1' or '2' or empty; found 'x'"),
        ("S1,0,1,A,V,maybe,1", r"column 'swap' must hold .*found 'maybe'"),
        ("S1,-1,1,A,V,False,1", r"column 'item' must hold non-negative whole numbers; found '-1'"),
        (",0,1,A,V,False,1", r"column 'subset' is empty in 1 row"),
    ],
)
def test_bad_values_name_column_and_values(tmp_path, row, pattern):
    folder = write_tables(tmp_path, [*VERDICTS[:-1], row])
    with pytest.raises(ValueError, match=pattern):
        load_llmbar(folder)


def test_structural_errors(tmp_path):
    folder = write_tables(tmp_path / "a", v_header="subset,item,human,evaluator,strategy,judge")
    with pytest.raises(ValueError, match=r"missing column\(s\) \['swap'\]"):
        load_llmbar(folder)
    folder = write_tables(tmp_path / "b", [*VERDICTS, VERDICTS[0]])
    with pytest.raises(ValueError, match="rows repeat a key"):
        load_llmbar(folder)
    folder = write_tables(tmp_path / "c", [*VERDICTS, "S3,0,1,A,V,False,1"])
    with pytest.raises(ValueError, match=r"1 item\(s\) are not in llmbar_items"):
        load_llmbar(folder)
    folder = write_tables(tmp_path / "d", items=["S1,0,2,10,300,200", *ITEMS[1:]])
    with pytest.raises(ValueError, match="disagree on the gold label"):
        load_llmbar(folder)
    folder = write_tables(tmp_path / "e", items=["S1,0,1,10,3x0,200", *ITEMS[1:]])
    with pytest.raises(ValueError, match=r"column 'output_1_chars'.*'3x0'"):
        load_llmbar(folder)


def test_default_is_the_shipped_copy_and_env_var_or_path_override_it(tmp_path, monkeypatch, small):
    # Regression: with no path and no BAYESJUDGE_DATA the loader raised FileNotFoundError; the
    # tables now ship with the package and are the default.
    monkeypatch.delenv(DATA_ENV, raising=False)
    frame = load_llmbar(evaluator="GPT-4", strategy="Vanilla_NoRules", swap=False, warn=False)
    assert Path(frame.attrs["source"]) == SHIPPED
    assert frame.attrs["rows_read"] == 80_826
    monkeypatch.setenv(DATA_ENV, "  ")  # blank: as if unset
    assert Path(load_llmbar(evaluator="GPT-4", warn=False).attrs["source"]) == SHIPPED
    # BAYESJUDGE_DATA overrides the shipped copy ...
    monkeypatch.setenv(DATA_ENV, str(small))
    frame = load_llmbar(evaluator="A")
    assert len(frame) == 6 and frame.attrs["source"] == str(small)
    # ... and path overrides both; a path to one of the files means its folder.
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "nowhere"))
    assert len(load_llmbar(small, evaluator="A")) == 6
    assert len(load_llmbar(small / "llmbar_items.csv.gz", evaluator="A")) == 6


def test_missing_files_and_env_var(tmp_path, monkeypatch, small):
    monkeypatch.delenv(DATA_ENV, raising=False)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_llmbar(tmp_path / "nowhere")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "llmbar_verdicts.csv.gz").write_bytes(
        (small / "llmbar_verdicts.csv.gz").read_bytes()
    )
    with pytest.raises(FileNotFoundError, match=r"lacks llmbar_items\.csv\.gz"):
        load_llmbar(tmp_path / "half")
    # A variable naming a missing folder is an error, not a silent fall-back to the shipped copy.
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError, match=f"from {DATA_ENV}=.*does not exist"):
        load_llmbar()


def test_missing_shipped_copy_says_so(monkeypatch):
    monkeypatch.delenv(DATA_ENV, raising=False)
    monkeypatch.setattr(datasets, "PACKAGED_DATA", "_no_such_folder")
    with pytest.raises(
        FileNotFoundError, match=f"from the copy shipped with bayesjudge.*set {DATA_ENV}"
    ):
        load_llmbar()


def test_path_to_a_file_that_is_not_a_data_file(tmp_path, monkeypatch, small):
    # Regression: an existing file (not one of the two tables) was reported as a folder that
    # "does not exist".
    readme = small / "README.md"
    readme.write_text("not data")
    with pytest.raises(FileNotFoundError, match="is a file, not a folder"):
        load_llmbar(readme)
    monkeypatch.setenv(DATA_ENV, str(readme))
    with pytest.raises(FileNotFoundError, match=f"from {DATA_ENV}=.*is a file, not a folder"):
        load_llmbar()


def test_known_name_absent_for_the_selection_is_not_called_unknown(tmp_path):
    # Regression: subset "S3" exists (judge A has it) but judge B has no verdict on it; the
    # loader said "subset: unknown value(s) ['S3']" and listed only B's subsets.
    folder = write_tables(tmp_path, [*VERDICTS, "S3,0,1,A,V,False,1"], [*ITEMS, "S3,0,1,1,2,3"])
    with pytest.raises(ValueError, match=r"no verdicts for evaluator='B'.*subset='S3'"):
        load_llmbar(folder, evaluator="B", subset="S3")
    with pytest.raises(ValueError, match=r"subset: unknown value\(s\) \['S4'\].*'S3'"):
        load_llmbar(folder, evaluator="B", subset="S4")
    assert len(load_llmbar(folder, evaluator="A", subset="S3")) == 1


def test_not_a_gzip_table(tmp_path):
    folder = write_tables(tmp_path)
    (folder / "llmbar_items.csv.gz").write_bytes(b"\x1f\x8b not really gzip")
    with pytest.raises(ValueError, match="cannot be read as a gzip'd CSV"):
        load_llmbar(folder)


def _damaged(good: bytes) -> dict[str, bytes]:
    return {
        "empty file": b"",
        "empty table": gzip.compress(b""),
        "blank lines only": gzip.compress(b"\n\n"),
        "truncated": good[: len(good) // 2],
        "corrupt stream": good[:10] + b"\xff" * 40,  # a gzip header, then no valid deflate data
        "plain CSV": gzip.decompress(good),
    }


@pytest.mark.parametrize("which", ["verdicts", "items"])
@pytest.mark.parametrize(
    "case",
    ["empty file", "empty table", "blank lines only", "truncated", "corrupt stream", "plain CSV"],
)
def test_empty_or_damaged_gzip_names_the_file(tmp_path, which, case):
    # Regression: an empty .gz raised pandas' "No columns to parse from file" and a corrupt
    # stream zlib.error, neither naming the file.
    folder = write_tables(tmp_path)
    file = folder / LLMBAR_FILES[which]
    good = file.read_bytes()
    if case == "truncated":  # the small table fits in a few bytes: use a bigger one
        lines = gzip.decompress(good).decode().splitlines()
        good = gzip.compress(("\n".join(lines + lines[1:2] * 2000) + "\n").encode())
    file.write_bytes(_damaged(good)[case])
    with pytest.raises(ValueError, match=re.escape(str(file))) as err:
        load_llmbar(folder)
    assert re.search(r"empty|cannot be read as a gzip'd CSV", str(err.value))
    assert "Replace" in str(err.value)


def test_header_without_rows_names_the_file(tmp_path):
    folder = write_tables(tmp_path, verdicts=[])
    with pytest.raises(ValueError, match=r"llmbar_verdicts\.csv\.gz: the table has a header but"):
        load_llmbar(folder)


# --------------------------------------------------------------------------- splitting


def _toy(n_items=40, judges=("A", "B"), seed=0):
    rng = np.random.default_rng(seed)
    human = rng.random(n_items) < 0.5
    rows = []
    for j in judges:
        verdict = np.where(rng.random(n_items) < 0.8, human, ~human)
        for i in range(n_items):
            rows.append(("S1" if i < n_items // 2 else "S2", i, j, "V", False, human[i],
                         bool(verdict[i])))  # fmt: skip
    frame = pd.DataFrame(rows, columns=["subset", "item", "evaluator", "strategy", "swap",
                                        "human", "judge"])  # fmt: skip
    frame["judge"] = frame["judge"].astype("boolean")
    frame.loc[3, "judge"] = pd.NA  # one unparsed verdict of judge A
    frame["longer"] = np.where(frame["item"] % 3 == 0, "output_1", "output_2")
    return frame


def test_split_calibration_items_sizes_and_seed():
    frame = _toy()
    test, calib = split_calibration(frame, share=0.3, random_seed=5)
    assert len(test) + len(calib) == len(frame)
    t_items = set(zip(test.subset, test["item"], strict=True))
    c_items = set(zip(calib.subset, calib["item"], strict=True))
    assert not t_items & c_items  # an item's verdicts stay together
    # round(0.3 * 20) = 6 items per subset for calibration.
    assert calib.drop_duplicates(["subset", "item"]).groupby("subset").size().tolist() == [6, 6]
    again = split_calibration(frame, share=0.3, random_seed=5)[1]
    assert again.equals(calib)
    other = split_calibration(frame, share=0.3, random_seed=6)[1]
    assert not other["item"].reset_index(drop=True).equals(calib["item"].reset_index(drop=True))
    by_length = split_calibration(frame, share=0.5, by="longer", random_seed=1)[1]
    sizes = by_length.drop_duplicates(["subset", "item"]).groupby("longer").size().to_dict()
    n_long = frame.drop_duplicates("item").groupby("longer").size()
    assert sizes == {k: round(0.5 * v) for k, v in n_long.items()}
    with pytest.raises(ValueError, match="share must lie in"):
        split_calibration(frame, share=1.0)
    with pytest.raises(ValueError, match="frame lacks column 'nope'"):
        split_calibration(frame, by="nope")


def test_llmbar_counts_match_a_manual_count():
    frame = _toy()
    seed = 11
    test, calib = split_calibration(frame, share=0.5, random_seed=seed)
    with pytest.warns(MissingLabelWarning):
        counts = llmbar_counts(frame, share=0.5, random_seed=seed)
    for part, fields in ((test, ("n", "k")), (calib, ("m0", "tn", "m1", "tp"))):
        part = part.dropna(subset=["judge"])
        for (judge, subset), g in part.groupby(["evaluator", "subset"]):
            z, v = g["human"].to_numpy(bool), g["judge"].to_numpy(bool)
            manual = {"n": len(g), "k": v.sum(), "m1": z.sum(), "tp": (z & v).sum(),
                      "m0": (~z).sum(), "tn": (~z & ~v).sum()}  # fmt: skip
            for f in fields:
                got = int(counts.dataset[f].sel(system=judge, stratum=subset))
                assert got == manual[f], (judge, subset, f)
    with pytest.raises(ValueError, match="mixes several strategy"):
        llmbar_counts(frame.assign(strategy=np.where(frame.index % 2, "V", "W")))


# --------------------------------------------------------------------------- the real data


@pytest.fixture(scope="module")
def real():
    # The copy shipped with the package, whatever BAYESJUDGE_DATA says.
    with (
        pytest.MonkeyPatch.context() as mp,
        pytest.warns(MissingLabelWarning, match="348 of 80826"),
    ):
        mp.delenv(DATA_ENV, raising=False)
        frame = load_llmbar()
    assert Path(frame.attrs["source"]) == SHIPPED
    return frame


def test_shipped_files_licence_and_readme():
    names = sorted(p.name for p in SHIPPED.iterdir() if p.name != "__pycache__")
    assert names == ["LICENSE", "README.md", "llmbar_items.csv.gz", "llmbar_verdicts.csv.gz"]
    licence = (SHIPPED / "LICENSE").read_text(encoding="utf-8")
    assert "MIT License" in licence and "Princeton Natural Language Processing" in licence
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in licence
    readme = (SHIPPED / "README.md").read_text(encoding="utf-8")
    assert "900616bff90b6c6c8e1681f7d079250637c55992" in readme
    # The README's SHA-256 sums are those of the shipped files (byte-for-byte copies).
    for name in LLMBAR_FILES.values():
        digest = hashlib.sha256((SHIPPED / name).read_bytes()).hexdigest()
        assert f"{digest}  {name}" in readme, name


def test_datasets_is_an_attribute_of_the_package():
    # Regression: `import bayesjudge as bj; bj.datasets` raised AttributeError unless the
    # submodule had been imported by hand. A fresh interpreter, so no other import helps.
    code = (
        "import sys, bayesjudge as bj; "
        "print(bj.datasets.load_llmbar.__module__, 'pymc' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["bayesjudge.datasets", "False"]


def test_nothing_reads_the_data_beside_the_checkout():
    # Regression: tests, doctests, notebook 04, the docs example and run_all.py defaulted to
    # ../shared/data, so a fresh clone with nothing beside it failed. Only the package's copy
    # (or an explicit path / BAYESJUDGE_DATA) may be read; .ci/run proves it on a fresh clone.
    pattern = re.compile(r'"shared"\s*/\s*"data"|shared/data\\?["\']|BAYESJUDGE_DATA=\S*shared')
    roots = ["src", "tests", "notebooks", "benchmarks", "docs", ".ci", "README.md", "Makefile"]
    files = [
        f
        for root in roots
        for f in ([REPO / root] if (REPO / root).is_file() else (REPO / root).rglob("*"))
        if f.is_file()
        and f.suffix in {"", ".py", ".ipynb", ".md", ".toml", ".cfg"}
        and f.resolve() != Path(__file__).resolve()
        and "_build" not in f.parts
    ]
    assert len(files) > 50
    hits = [
        f"{f.relative_to(REPO)}: {m.group(0)}"
        for f in files
        for m in pattern.finditer(f.read_text(encoding="utf-8", errors="replace"))
    ]
    assert not hits, hits


def test_real_data_documented_numbers(real):
    # The data README (bayesjudge/_datasets/README.md): 80,826 rows, 348 empty verdicts,
    # 1,200 items.
    assert len(real) == 80_826
    assert int(real["judge"].isna().sum()) == 348
    assert sum(real.attrs["missing_verdicts"].values()) == 348
    assert len(real.drop_duplicates(["subset", "item"])) == 1_200
    assert real["longer"].isin(["output_1", "output_2", "tie"]).all()


def test_real_swapped_verdicts_are_already_mapped_back(real):
    # README: with swap=True "the verdict is already mapped back to the original numbering", so
    # the loader must not flip it: GPT-4's agreement with the gold label is the same in both
    # orders (0.805 and 0.807 over all strategies; a flip would give 0.19 for swap=True), and
    # its verdicts on the same (item, strategy) agree across the two orders far more often
    # than the 1 - 0.8 they would if one order were flipped.
    gpt4 = real[real.evaluator == "GPT-4"].dropna(subset=["judge"])
    agree = (gpt4["judge"].astype(bool) == gpt4["human"]).groupby(gpt4["swap"]).mean()
    assert agree[False] > 0.75 and agree[True] > 0.75
    wide = gpt4.pivot_table(index=["subset", "item", "strategy"], columns="swap", values="judge",
                            aggfunc="first").dropna()  # fmt: skip
    assert (wide[False].astype(bool) == wide[True].astype(bool)).mean() > 0.75


def test_real_missing_verdicts_of_the_case_study(real):
    # docs/llmbar.md "Design": with Vanilla_NoRules, swap=False on the five LLMBar subsets,
    # 8 of PaLM2's verdicts (3, 1, 3, 0, 1 by subset) and 1 of LLaMA2's (GPTInst) are unparsed;
    # 35 of PaLM2's over all subsets.
    subsets = ["LLMBar/Natural", "LLMBar/Adversarial/Neighbor", "LLMBar/Adversarial/GPTInst",
               "LLMBar/Adversarial/GPTOut", "LLMBar/Adversarial/Manual"]  # fmt: skip
    part = real[(real.strategy == "Vanilla_NoRules") & ~real.swap]
    assert missing_verdicts(part, by=["evaluator"]).to_dict()["PaLM2"] == 35
    study = part[part.subset.isin(subsets)]
    assert missing_verdicts(study, by=["evaluator"]).to_dict() == {"LLaMA2": 1, "PaLM2": 8}
    palm = missing_verdicts(study[study.evaluator == "PaLM2"], by=["subset"])
    assert [int(palm.get(s, 0)) for s in subsets] == [3, 1, 3, 0, 1]


@pytest.mark.parametrize(
    ("judge", "subset", "documented"),
    [
        # README: "GPT-4 with Vanilla_NoRules: J ≈ 0.84 on LLMBar/Natural but ≈ 0.30 on
        # Adversarial/Neighbor; ChatGPT: J ≈ 0.61 on Natural and ≈ −0.66 on
        # Adversarial/Neighbor" — with the outputs in their original order (swap=False).
        ("GPT-4", "LLMBar/Natural", 0.84),
        ("GPT-4", "LLMBar/Adversarial/Neighbor", 0.30),
        ("ChatGPT", "LLMBar/Natural", 0.61),
        ("ChatGPT", "LLMBar/Adversarial/Neighbor", -0.66),
    ],
)
def test_real_data_youden_as_documented(real, judge, subset, documented):
    part = real[
        (real.evaluator == judge) & (real.subset == subset)
        & (real.strategy == "Vanilla_NoRules") & ~real.swap
    ].dropna(subset=["judge"])  # fmt: skip
    z, v = part["human"].to_numpy(bool), part["judge"].to_numpy(bool)
    youden = (~v[~z]).mean() + v[z].mean() - 1
    assert round(float(youden), 2) == documented
