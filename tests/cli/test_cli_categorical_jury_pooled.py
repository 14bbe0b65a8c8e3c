"""``bayesjudge fit --judges --categories`` with --pool-judges, --dependence item and
--calibration-model hierarchical (the K-category jury's pooled, hierarchical and item-effect
models, models/categorical-jury.md)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from bayesjudge.cli import main
from bayesjudge.models import categorical_jury


@pytest.fixture(scope="module")
def k_jury_csv(tmp_path_factory):
    from bayesjudge.simulate import simulate_categorical_jury_items

    conf = np.array([[[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]]] * 3)
    frame = simulate_categorical_jury_items(
        [0.4, 0.2, 0.4], conf, 300, 60, design="random", categories=["A", "tie", "B"],
        judges=["gpt", "claude", "llama"], random_seed=3,
    )  # fmt: skip
    path = tmp_path_factory.mktemp("k_jury_pooled") / "k.csv"
    frame.drop(columns="truth").to_csv(path, index=False)
    return path


def _fit_args(path, *extra):
    return ["fit", "--test", str(path), "--judges", "judge_name", "--item", "item",
            "--judge", "verdict", "--categories", "A,tie,B", "--seed", "3", *extra]  # fmt: skip


class _Stop(Exception):
    pass


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ([], {"calibration": "shared", "pool_judges": False, "dependence": None}),
        (["--pool-judges"], {"calibration": "shared", "pool_judges": True, "dependence": None}),
        (["--dependence", "item"], {"pool_judges": False, "dependence": "item"}),
        (["--calibration-model", "hierarchical", "--pool-judges"],
         {"calibration": "hierarchical", "pool_judges": True}),
    ],
)  # fmt: skip
def test_fit_passes_the_options_to_the_model(k_jury_csv, monkeypatch, capsys, extra, expected):
    # The options reach fit_categorical_jury unchanged (the fit itself is stubbed: a compile
    # of the PyMC model takes minutes; the real fit is the slow test below).
    seen = {}

    def stub(counts, **options):
        seen.update(options)
        raise _Stop

    monkeypatch.setattr(categorical_jury, "fit_categorical_jury", stub)
    assert main(_fit_args(k_jury_csv, *extra)) != 0  # the CLI reports the stub's exception
    assert "_Stop" in capsys.readouterr().err
    assert {k: seen[k] for k in expected} == expected
    assert seen["random_seed"] == 3


def test_item_dependence_without_labels_and_three_judges_is_refused(k_jury_csv, capsys):
    # The refusal comes from the model's configuration, before anything is compiled.
    frame = pd.read_csv(k_jury_csv)
    frame = frame[frame["human"].isna()] if "human" in frame else frame
    path = k_jury_csv.parent / "unlabelled.csv"
    frame.drop(columns=[c for c in ("human",) if c in frame]).to_csv(path, index=False)
    code = main(_fit_args(path, "--dependence", "item"))
    err = capsys.readouterr().err
    assert code == 2, err
    assert "a fourth judge" in err and "Traceback" not in err


@pytest.mark.slow
def test_fit_pool_judges_equals_the_python_api(k_jury_csv, capsys):
    from bayesjudge.data.categorical_jury import CategoricalJuryCounts
    from bayesjudge.models.categorical_jury import fit_categorical_jury

    argv = _fit_args(k_jury_csv, "--pool-judges", "--dependence", "item", "--draws", "300",
                     "--tune", "300")  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "dependence item, pool_judges True" in out
    assert "posterior predictive check" in out
    assert main([*argv, "--format", "csv"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    counts = CategoricalJuryCounts.from_frames(
        k_jury_csv, judges="judge_name", item="item", judge="verdict",
        categories=["A", "tie", "B"],
    )  # fmt: skip
    fit = fit_categorical_jury(counts, pool_judges=True, dependence="item", draws=300,
                               tune=300, chains=4, random_seed=3)  # fmt: skip
    expected = fit.summary()["theta"].transpose("system", "stratum", "category").values.ravel()
    theta = table[table["variable"] == "theta"]
    assert theta["mean"].to_numpy() == pytest.approx(expected, abs=1e-12)  # full precision now
