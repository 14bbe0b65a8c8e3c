"""The LLMBar jury case study: its data handling, one split against the core, the effects table."""

from __future__ import annotations

import numpy as np
import pytest

from bayesjudge.core.jury import dawid_skene_interval
from bayesjudge.core.likelihood import likelihood_interval
from bayesjudge.datasets import load_llmbar
from bayesjudge.studies import llmbar_jury as lj


@pytest.fixture(scope="module")
def frame():
    return load_llmbar(strategy=lj.STRATEGY, subset=list(lj.SUBSETS), warn=False)


def test_subset_data_holds_every_verdict(frame):
    data = lj.subset_data(frame, "LLMBar/Natural")
    rows = frame[frame["subset"] == "LLMBar/Natural"]
    assert data["verdicts"].shape == (100, 12)
    for c, (swap, judge) in enumerate([(s, j) for s in (False, True) for j in lj.JUDGES]):
        mine = rows[(rows["evaluator"] == judge) & (rows["swap"] == swap)]
        column = data["verdicts"][:, c]
        assert (column >= 0).sum() == mine["judge"].notna().sum()
        assert (column == 1).sum() == (mine["judge"] == True).sum()  # noqa: E712
    assert data["truth"].mean() == pytest.approx(0.42)  # LLMBar/Natural: 42 of 100


def test_one_split_equals_the_core(frame):
    data = lj.subset_data(frame, "LLMBar/Adversarial/Manual")
    rng = np.random.default_rng(3)
    mask = lj._draw_mask(rng, len(data["truth"]), 20, data["truth"])
    out = lj._one_split(data, mask, oracle=0, alpha=0.05)
    patterns, test, lab = lj._patterns(data["verdicts"][:, :6], data["truth"], mask)
    assert test.sum() + lab.sum() == 46 and lab.sum() == 20
    jury = dawid_skene_interval(patterns, test, lab, design="random", alpha=0.05)
    assert out[2].tolist() == pytest.approx([jury.estimate, jury.lower, jury.upper])
    gpt4 = likelihood_interval(*lj._single_counts(data["verdicts"][:, 0], data["truth"], mask))
    assert out[1].tolist() == pytest.approx(
        [float(gpt4.estimate), float(gpt4.lower), float(gpt4.upper)]
    )


def test_run_small_and_reproducible():
    a = lj.run(reps=4, labels=(20,), subsets=("LLMBar/Adversarial/GPTOut",))
    b = lj.run(reps=4, labels=(20,), subsets=("LLMBar/Adversarial/GPTOut",))
    assert a.table["coverage"].sizes == {"stratum": 1, "labels": 1, "approach": 5}
    np.testing.assert_array_equal(a.table["width"].values, b.table["width"].values)
    assert a.table.attrs["reps"] == 4
    assert a.table["oracle"].item() == "GPT-4"


def test_effects_against_a_direct_count(frame):
    ds = lj.effects(subsets=("LLMBar/Natural",))
    rows = frame[
        (frame["subset"] == "LLMBar/Natural")
        & (frame["evaluator"] == "ChatGPT")
        & ~frame["swap"]
        & (frame["longer"] == "output_2")
        & frame["judge"].notna()
    ]
    truly_correct = rows[rows["human"]]
    expected = (truly_correct["judge"] == True).mean()  # noqa: E712
    got = ds["q1"].sel(judge="ChatGPT", swap=False, longer="output_2").item()
    assert got == pytest.approx(expected)
    assert ds["m1"].sel(judge="ChatGPT", swap=False, longer="output_2").item() == len(truly_correct)
