"""The recorded LLMBar jury case study: rerun (three subsets) and the claims of docs/llmbar.md."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayesjudge.studies import llmbar_jury as lj

pytestmark = pytest.mark.slow

RECORD = (
    Path(__file__).resolve().parents[2] / "benchmarks/studies/results/llmbar-jury/llmbar_jury.csv"
)
SUBSETS = ("LLMBar/Natural", "LLMBar/Adversarial/Neighbor", "LLMBar/Adversarial/GPTInst")


@pytest.fixture(scope="module")
def rerun():
    # the recorded settings (benchmarks/studies/results/llmbar-jury/llmbar_jury.json)
    return lj.run(reps=200, random_seed=20261127, subsets=SUBSETS).table


def test_rerun_equals_the_record(rerun):
    recorded = pd.read_csv(RECORD)
    recorded = recorded[recorded["stratum"].isin(SUBSETS)]
    frame = rerun.to_dataframe().reset_index()
    merged = recorded.merge(frame, on=["stratum", "labels", "approach"], suffixes=("", "_now"))
    assert len(merged) == len(SUBSETS) * 3 * len(lj.APPROACHES)
    for column in ("coverage", "width", "bias"):
        np.testing.assert_allclose(merged[f"{column}_now"], merged[column], rtol=1e-9)


def test_claims_of_the_docs(rerun):
    cov, width, se = rerun["coverage"], rerun["width"], rerun["coverage_mcse"]
    natural = {"stratum": "LLMBar/Natural", "labels": 10}
    jury, best = natural | {"approach": "jury"}, natural | {"approach": "best-judge"}
    # 1. On Natural the jury halves the interval and covers.
    assert float(width.sel(jury) / width.sel(best)) < 0.55
    assert float(cov.sel(jury)) >= 0.95 - 3 * float(se.sel(jury))
    # 2. On GPTInst with 10 labels the jury undercovers far beyond Monte Carlo error.
    gptinst = {"stratum": "LLMBar/Adversarial/GPTInst", "labels": 10, "approach": "jury"}
    assert float(cov.sel(gptinst)) + 3 * float(se.sel(gptinst)) < 0.95
    # 3. One judge in both orders is not two judges.
    neighbor = {"stratum": "LLMBar/Adversarial/Neighbor", "labels": 10}
    assert float(cov.sel(neighbor | {"approach": "jury-both-orders"})) < 0.3
    # The single judge chosen on the labels stays near nominal everywhere.
    best = cov.sel(approach="best-judge")
    assert float((best + 3 * se.sel(approach="best-judge")).min()) >= 0.95
