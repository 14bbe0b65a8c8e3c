"""jury_covariate_estimate: the EM starts of the covariate model are passed on and reported."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bayesjudge.core.jury_covariates import covariate_dawid_skene
from bayesjudge.data.jury_items import JuryItems
from bayesjudge.jury_estimate import jury_covariate_estimate


@pytest.fixture(scope="module")
def items():
    rng = np.random.default_rng(0)
    truth = rng.random(150) < 0.5
    rows = pd.DataFrame([
        {"item": i, "grader": g, "first": o,
         "judge": int(rng.random() < (0.8 if truth[i] else 0.25 + 0.2 * o)),
         "human": int(truth[i]) if i < 30 else None}
        for i in range(150) for g in "abc" for o in (0, 1)
    ])  # fmt: skip
    return JuryItems.from_frames(rows, judges="grader", item="item", covariates="first")


def test_starts_are_reported_and_match_the_core_fit(items):
    ds = items.dataset
    x = ds["covariates"].values
    core = covariate_dawid_skene(
        ds["row_item"].values, ds["row_judge"].values, ds["verdict"].values.astype(np.int64),
        (x - x.mean(axis=0)) / x.std(axis=0), ds["truth"].values.astype(np.int64),
        group=items.group_index(), design=items.design, n_starts=3, random_seed=4,
    )  # fmt: skip
    out = jury_covariate_estimate(items, n_starts=3, random_seed=4)
    assert out.attrs["n_starts"] == 3 == core.n_starts
    assert out.attrs["n_best_starts"] == core.n_best and 1 <= core.n_best <= 3
    np.testing.assert_allclose(out["estimate"].values.ravel(), core.theta, rtol=1e-12)
    np.testing.assert_allclose(out["coef"].values, core.coef, rtol=1e-12)
    default = jury_covariate_estimate(items)
    assert default.attrs["n_starts"] == 5
    one = jury_covariate_estimate(items, n_starts=1)
    assert (one.attrs["n_starts"], one.attrs["n_best_starts"]) == (1, 1)


def test_bad_starts(items):
    with pytest.raises(ValueError, match="n_starts must be a whole number"):
        jury_covariate_estimate(items, n_starts=0)
    with pytest.raises(ValueError, match="random_seed must be None"):
        jury_covariate_estimate(items, random_seed=-1)
