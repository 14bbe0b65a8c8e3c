"""Session-10 hostile findings on the studies (huntC F5, F6, F7)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from bayesjudge.core.exact import exact_theta_interval
from bayesjudge.studies import _framework, random_design

# --- F5: a replication with m0 = 0 or m1 = 0 is undefined, not the end of the study -----------


def test_random_design_counts_one_label_replications_as_undefined():
    # Before the fix: ValueError "m1 = 0 in group(s) [0] (flat index) ..." from the exact
    # engine aborted the run. 20 labelled items at θ = 0.05: P(m1 = 0) = 0.95**20 = 0.358.
    grid = {"n": [180], "m": [20], "q0": [0.8], "q1": [0.9]}
    reps = 60
    res = random_design.run(reps=reps, grid=grid, theta=[0.05], samples=["random"], draws=100,
                            estimators=["bayes-random", "bayes-stratified", "ppi"])  # fmt: skip
    data = random_design._simulate(
        _framework.point_rngs(random_design.DEFAULT_SEED, 180, 20, 0.8, 0.9, 0.05, count=3)[0],
        "random", 0.05, 0.8, 0.9, 180, 20, reps,
    )  # fmt: skip
    one = (data["m0"] == 0) | (data["m1"] == 0)
    assert 0 < one.mean() < 1  # both kinds of replication occur on this seed
    table = res.table.squeeze(("n", "m", "q0", "q1", "sample", "theta"))
    for name in ("bayes-random", "bayes-stratified", "ppi"):
        share = table["undefined_share"].sel(estimator=name, estimand="population")
        assert float(share) == pytest.approx(one.mean(), abs=1e-12), name
    # The defined replications are the exact engine's numbers; the others ½ with [0, 1].
    keep = ~one
    counts = [data[key][keep] for key in ("k", "n", "tn", "m0", "tp", "m1")]
    exact = exact_theta_interval(*counts, design="random")
    lower = np.full(reps, 0.0)
    upper = np.full(reps, 1.0)
    lower[keep], upper[keep] = exact.lower, exact.upper
    cell = table.sel(estimator="bayes-random", estimand="population")
    assert float(cell["length"]) == pytest.approx(np.mean(upper - lower), abs=1e-12)
    covered = (lower <= 0.05) & (0.05 <= upper)
    assert float(cell["coverage"]) == pytest.approx(covered.mean(), abs=1e-12)


@pytest.mark.parametrize("theta", [0.0, 1.0])
def test_random_design_at_theta_zero_or_one_runs(theta):
    res = random_design.run(reps=20, theta=[theta], samples=["random"], draws=100,
                            estimators=["bayes-random", "likelihood"])  # fmt: skip
    share = res.table["undefined_share"].sel(estimator="bayes-random").values
    assert np.all(share == 1.0)  # every replication has labels of one kind only


# --- F6: an existing folder gets all the new files or keeps all the old ones ------------------


def _save_old(out):
    with _framework.staged_folder(out) as staging:
        for name in ("a.csv", "a.json", "a.nc"):
            (staging / name).write_text("old")
    (out / "other.txt").write_text("keep")
    (out / "sub").mkdir()
    (out / "sub" / "x").write_text("keep")


@pytest.mark.parametrize("fail_at", [1, 2, 3, 4])
def test_interrupt_between_moves_leaves_the_old_set(tmp_path, monkeypatch, fail_at):
    # huntC F6: a Ctrl-C between two of the moves left new and old files mixed.
    out = tmp_path / "mix"
    _save_old(out)
    real, calls = os.replace, []

    def flaky(a, b):
        calls.append((a, b))
        if len(calls) == fail_at:  # a.csv aside, new a.csv in, a.json aside, new a.json in
            raise KeyboardInterrupt
        return real(a, b)

    monkeypatch.setattr(_framework.os, "replace", flaky)
    with pytest.raises(KeyboardInterrupt), _framework.staged_folder(out) as staging:
        for name in ("a.csv", "a.json", "a.nc"):
            (staging / name).write_text("new")
    monkeypatch.setattr(_framework.os, "replace", real)
    assert {p.name: p.read_text() for p in out.iterdir() if p.is_file()} == {
        "a.csv": "old", "a.json": "old", "a.nc": "old", "other.txt": "keep",
    }  # fmt: skip
    assert (out / "sub" / "x").read_text() == "keep"
    assert sorted(p.name for p in out.iterdir()) == ["a.csv", "a.json", "a.nc", "other.txt", "sub"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mix"]  # no staging left behind


def test_a_folder_in_the_way_is_refused_before_anything_moves(tmp_path):
    out = tmp_path / "mix"
    _save_old(out)
    (out / "a.json").unlink()
    (out / "a.json").mkdir()  # a user's folder where a new file would go
    (out / "a.json" / "mine").write_text("keep")
    with pytest.raises(IsADirectoryError) as err, _framework.staged_folder(out) as staging:
        for name in ("a.csv", "a.json"):
            (staging / name).write_text("new")
    assert err.value.filename == str(out / "a.json")
    assert (out / "a.csv").read_text() == "old" and (out / "a.json" / "mine").read_text() == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mix"]


def test_success_replaces_the_set_and_keeps_other_files(tmp_path):
    out = tmp_path / "mix"
    _save_old(out)
    mode = out.stat().st_mode
    with _framework.staged_folder(out) as staging:
        for name in ("a.csv", "a.json"):
            (staging / name).write_text("new")
    files = {p.name: p.read_text() for p in out.iterdir() if p.is_file()}
    assert files == {"a.csv": "new", "a.json": "new", "a.nc": "old", "other.txt": "keep"}
    assert (out / "sub" / "x").read_text() == "keep" and out.stat().st_mode == mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mix"]


def test_in_place_fallback_rolls_back_too(tmp_path, monkeypatch):
    # The current folder cannot be renamed aside: files are moved in, and put back on failure.
    out = tmp_path / "here"
    _save_old(out)
    monkeypatch.chdir(out)
    real, calls = os.replace, []

    def flaky(a, b):
        calls.append((a, b))
        if len(calls) == 4:  # a.csv aside, new a.csv in, a.json aside, then Ctrl-C
            raise KeyboardInterrupt
        return real(a, b)

    monkeypatch.setattr(_framework.os, "replace", flaky)
    with pytest.raises(KeyboardInterrupt), _framework.staged_folder(".") as staging:
        for name in ("a.csv", "a.json", "new.txt"):
            (staging / name).write_text("new")
    monkeypatch.setattr(_framework.os, "replace", real)
    files = {p.name: p.read_text() for p in out.iterdir() if p.is_file()}
    assert files == {"a.csv": "old", "a.json": "old", "a.nc": "old", "other.txt": "keep"}
    assert sorted(p.name for p in out.iterdir()) == ["a.csv", "a.json", "a.nc", "other.txt", "sub"]
    with _framework.staged_folder(".") as staging:
        (staging / "a.csv").write_text("new")
    assert (out / "a.csv").read_text() == "new" and (out / "a.nc").read_text() == "old"


def test_study_save_is_all_or_nothing(tmp_path, monkeypatch):
    from bayesjudge.studies import run_study

    out = tmp_path / "mix"
    run_study("human-vs-judge", reps=2, random_seed=1, q0=[0.8], q1=[0.9], theta=[0.5]).save(out)
    old = (out / "human_vs_judge.csv").read_text()
    new = run_study("human-vs-judge", reps=3, random_seed=2, q0=[0.8], q1=[0.9], theta=[0.5])
    real, seen = os.replace, []

    def flaky(a, b):
        seen.append(a)
        if len(seen) == 4:  # two files moved in (each: old one aside, new one in); Ctrl-C
            raise KeyboardInterrupt
        return real(a, b)

    monkeypatch.setattr(_framework.os, "replace", flaky)
    with pytest.raises(KeyboardInterrupt):
        new.save(out)
    monkeypatch.setattr(_framework.os, "replace", real)
    assert json.loads((out / "human_vs_judge.json").read_text())["random_seed"] == 1
    assert (out / "human_vs_judge.csv").read_text() == old
    new.save(out)
    assert json.loads((out / "human_vs_judge.json").read_text())["random_seed"] == 2


# --- F7: the folder is probed before the run ----------------------------------------------------


def test_probe_folder_makes_and_removes_what_saving_needs(tmp_path):
    _framework.probe_folder(tmp_path / "a" / "b" / "c")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "x").mkdir()
    _framework.probe_folder(tmp_path / "x")
    assert list((tmp_path / "x").iterdir()) == [] and sorted(tmp_path.iterdir()) == [tmp_path / "x"]
    with pytest.raises(OSError):
        _framework.probe_folder(tmp_path / ("a" * 300))
    # A name near the limit still fits (the staging name is cut short).
    long = tmp_path / ("b" * 250)
    _framework.probe_folder(long)
    with _framework.staged_folder(long) as staging:
        (staging / "t.csv").write_text("1")
    assert (long / "t.csv").read_text() == "1"
