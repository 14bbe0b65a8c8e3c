"""The Bayesian fit under hostile conditions: Ctrl-C, edited or broken files, odd seeds.

Issue 13: an interrupted fit returns no partial Fit; ``Fit.save`` writes atomically and
``bj.load`` refuses files changed after saving or unreadable; every non-negative integer seed
works everywhere; ``judge_better_than_chance`` on data that contradict it warns; the
progress bar follows the terminal. One small model structure is compiled for the MCMC tests.
"""

import json
import os
import signal
import sys
import threading
import warnings

import numpy as np
import pytest
import xarray as xr

import bayesjudge as bj
from bayesjudge import _progress
from bayesjudge.models import fit as fit_module
from bayesjudge.models import storage
from bayesjudge.warnings import ConvergenceWarning

HUGE = 2**70
SMALL = dict(draws=200, tune=200, chains=2)


@pytest.fixture(scope="module")
def counts():
    return bj.JudgeCounts.from_counts(n=200, k=90, m0=60, tn=48, m1=60, tp=54)


def _fit(counts, **kwargs):
    """A small fit; its low ESS (400 draws in all) is expected, not a finding."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return bj.fit(counts, **{**SMALL, **kwargs})


@pytest.fixture(scope="module")
def result(counts):
    return _fit(counts, random_seed=HUGE)


# ---------------------------------------------------------------------------- interrupts


# slow tier: kept out of `make test` (15-minute budget), run by `make test-slow` in CI
@pytest.mark.slow
def test_ctrl_c_during_nutpie_sampling_raises_and_nothing_is_saved(counts, tmp_path, monkeypatch):
    import nutpie

    real = nutpie.sample
    sent = threading.Event()

    def interrupt_once(progress):
        # nutpie's progress callback runs on a background thread while the chains sample.
        if not sent.is_set() and sum(p.finished_draws for p in progress) > 0:
            sent.set()
            os.kill(os.getpid(), signal.SIGINT)

    def sample(*args, **kwargs):
        return real(*args, **kwargs, progress_callback=interrupt_once)

    monkeypatch.setattr(nutpie, "sample", sample)
    path = tmp_path / "fit.nc"
    before = signal.getsignal(signal.SIGINT)  # Python's default, or a library's (Spark's)
    with pytest.raises(KeyboardInterrupt), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        # Far more draws than fit in the time to the first progress report (0.1 s).
        bj.fit(counts, draws=200_000, tune=200, chains=2, random_seed=1).save(path)
    assert sent.is_set()
    assert not path.exists() and list(tmp_path.iterdir()) == []
    assert signal.getsignal(signal.SIGINT) is before  # the handler before the fit, restored


@pytest.mark.parametrize("how", ["fewer draws", "nan padding"])
def test_a_partial_trace_is_never_turned_into_a_fit(counts, monkeypatch, how):
    import nutpie

    real = nutpie.sample

    def partial(*args, **kwargs):
        if how == "fewer draws":
            return real(*args, **{**kwargs, "draws": kwargs["draws"] // 2})
        tree = real(*args, **kwargs)
        post = tree["posterior"].dataset
        post = post.where(post["draw"] < kwargs["draws"] // 2)  # nutpie's unfinished draws
        tree["posterior"] = xr.DataTree(post)
        return tree

    monkeypatch.setattr(nutpie, "sample", partial)
    with pytest.raises(KeyboardInterrupt, match=r"stopped early .* of 2 × 200 asked"):
        _fit(counts, random_seed=3)


def test_ctrl_c_stops_every_chain_of_the_pymc_sampler(counts, monkeypatch):
    import pymc as pm

    real = pm.sample
    after = []  # (chain, draw) of every step after the Ctrl-C

    def sample(*args, callback=None, **kwargs):
        def watch(trace, draw):
            if after or draw.draw_idx == 10:
                if not after:
                    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C in the first chain
                after.append((draw.chain, draw.draw_idx))
            callback(trace=trace, draw=draw)

        return real(*args, callback=watch, **kwargs)

    monkeypatch.setattr(fit_module.pm, "sample", sample)
    with pytest.raises(KeyboardInterrupt):
        _fit(counts, sampler="pymc", random_seed=1, chains=3)
    # PyMC ends only the running chain on Ctrl-C and starts the next; the fit's callback
    # ends each later chain at its first step instead of letting it run 400 steps.
    assert len(after) <= 1 + 3 and {chain for chain, _ in after} <= {0, 1, 2}


# ---------------------------------------------------------------------------- save / load


def test_save_is_atomic(result, tmp_path, monkeypatch):
    path = result.save(tmp_path / "fit.nc")
    before = path.read_bytes()

    def broken(self, filepath, **kwargs):
        with open(filepath, "wb") as fh:
            fh.write(b"half a file")
        raise OSError("disk full")

    monkeypatch.setattr(xr.DataTree, "to_netcdf", broken)
    with pytest.raises(OSError, match="disk full"):
        result.save(path)
    with pytest.raises(OSError, match="disk full"):
        result.save(tmp_path / "new.nc")
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fit.nc"]


def test_save_names_a_bad_path(result, tmp_path):
    with pytest.raises(ValueError, match=r"fit file: the folder .*missing.* does not exist"):
        result.save(tmp_path / "missing" / "fit.nc")
    with pytest.raises(ValueError, match=r"fit file: .* is an existing folder"):
        result.save(tmp_path)


def test_roundtrip_keeps_a_huge_seed_and_the_digest(result, tmp_path):
    path = result.save(tmp_path / "fit.nc")
    loaded = bj.load(path)
    assert loaded.config["random_seed"] == HUGE
    assert loaded.tree.attrs["random_seed"] == str(HUGE)  # netCDF attrs hold int64 at most
    xr.testing.assert_equal(loaded.posterior, result.posterior)
    again = loaded.save(tmp_path / "again.nc")  # a loaded fit saves and loads again
    bj.load(again)


def _edit(path, target, group, change):
    tree = xr.open_datatree(path, engine="h5netcdf").load()
    ds = tree[group].dataset.copy(deep=True)
    tree[group] = xr.DataTree(change(ds))
    tree.to_netcdf(target, engine="h5netcdf")
    return target


@pytest.mark.parametrize(
    ("group", "change"),
    [
        ("posterior", lambda ds: ds.assign(theta=ds["theta"] + 1e-9)),
        ("counts", lambda ds: ds.assign(k=ds["k"] + 1)),
        ("observed_data", lambda ds: ds.assign(tn=ds["tn"] - 1)),
        ("posterior", lambda ds: ds.assign_coords(draw=ds["draw"] + 1)),
    ],
    ids=["posterior value", "counts", "observed data", "coords"],
)
def test_load_refuses_a_file_changed_after_it_was_saved(result, tmp_path, group, change):
    path = result.save(tmp_path / "fit.nc")
    edited = _edit(path, tmp_path / "edited.nc", group, change)
    with pytest.raises(ValueError, match=r"edited\.nc' was changed after it was saved"):
        bj.load(edited)


def test_load_refuses_a_consistent_file_with_fewer_draws_than_its_config(result, tmp_path):
    path = result.save(tmp_path / "fit.nc")
    tree = xr.open_datatree(path, engine="h5netcdf").load()
    for group in ("posterior", "sample_stats"):
        tree[group] = xr.DataTree(tree[group].dataset.isel(draw=slice(0, 50)))
    tree.attrs[storage.DIGEST_ATTR] = storage.content_digest(tree)  # a digest to match
    tree.to_netcdf(tmp_path / "short.nc", engine="h5netcdf")
    with pytest.raises(ValueError, match=r"holds 2 chains × 50 draws but .* says 2 × 200"):
        bj.load(tmp_path / "short.nc")


def test_unreadable_files_raise_value_errors_naming_the_path(result, tmp_path):
    path = result.save(tmp_path / "fit.nc")
    truncated = tmp_path / "truncated.nc"
    truncated.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(ValueError, match=r"truncated\.nc' cannot be loaded .* truncated"):
        bj.load(truncated)
    text = tmp_path / "notes.nc"
    text.write_text("not a netCDF file\n")
    with pytest.raises(ValueError, match=r"notes\.nc' cannot be loaded .* not a readable"):
        bj.load(text)
    empty = tmp_path / "empty.nc"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match=r"empty\.nc' cannot be loaded"):
        bj.load(empty)
    with pytest.raises(ValueError, match=r"cannot be loaded .* it is a folder"):
        bj.load(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"No fit file at .*missing\.nc"):
        bj.load(tmp_path / "missing.nc")


def test_a_file_without_a_digest_loads_with_a_warning(result, tmp_path):
    path = result.save(tmp_path / "fit.nc")
    tree = xr.open_datatree(path, engine="h5netcdf").load()
    del tree.attrs[storage.DIGEST_ATTR]
    tree.to_netcdf(tmp_path / "old.nc", engine="h5netcdf")
    with pytest.warns(bj.BayesJudgeWarning, match=r"has no content digest .* Save it again"):
        loaded = bj.load(tmp_path / "old.nc")
    xr.testing.assert_equal(loaded.posterior, result.posterior)


def test_a_broken_config_is_a_value_error(result, tmp_path):
    path = result.save(tmp_path / "fit.nc")
    tree = xr.open_datatree(path, engine="h5netcdf").load()
    tree.attrs["bayesjudge_config"] = "{not json"
    tree.to_netcdf(tmp_path / "bad.nc", engine="h5netcdf")
    with pytest.raises(ValueError, match=r"bad\.nc' cannot be loaded .* not valid JSON"):
        bj.load(tmp_path / "bad.nc")


# ---------------------------------------------------------------------------- seeds

BAD_SEEDS = [-1, 1.5, True, "3", np.float64(2.0)]


def test_huge_and_zero_seeds_fit_with_both_samplers(counts, result):
    assert result.config["random_seed"] == HUGE
    again = _fit(counts, random_seed=HUGE)  # the reduction is deterministic
    xr.testing.assert_equal(again.posterior, result.posterior)
    assert _fit(counts, random_seed=0).config["random_seed"] == 0
    assert fit_module._sampler_seed(2**64 - 1) == 2**64 - 1
    assert fit_module._sampler_seed(2**64) < 2**64
    pymc_fit = _fit(counts, sampler="pymc", random_seed=HUGE, draws=50, tune=50)
    assert pymc_fit.config["random_seed"] == HUGE
    exact = bj.fit(counts, method="exact", random_seed=HUGE)
    assert exact.config["random_seed"] == HUGE


@pytest.mark.parametrize("seed", BAD_SEEDS)
def test_bad_seeds_are_refused_before_any_compile(counts, seed, monkeypatch):
    def no_build(*args, **kwargs):
        raise AssertionError("the model was built before the seed was checked")

    monkeypatch.setattr(fit_module, "build_from_config", no_build)
    for call in (
        lambda: bj.fit(counts, random_seed=seed),
        lambda: bj.fit(counts, method="exact", random_seed=seed),
        lambda: bj.prior_predictive(counts, random_seed=seed),
    ):
        with pytest.raises(ValueError, match=r"random_seed must be a non-negative int"):
            call()


def test_compare_designs_accepts_every_non_negative_seed():
    two = bj.JudgeCounts.from_counts(
        n=[300, 300], k=[150, 200], m0=80, tn=64, m1=80, tp=72, system=["a", "b"]
    )
    for seed in (0, HUGE):
        table = fit_module.compare_designs(two, designs=["separate"], method="exact",
                                           random_seed=seed)  # fmt: skip
        assert table.attrs["random_seed"] == (str(seed) if seed else 0)
        assert all(s < 2**32 for s in json.loads(table.attrs["design_seeds"]))
    for seed in BAD_SEEDS:
        with pytest.raises(ValueError, match=r"random_seed must be a non-negative int"):
            fit_module.compare_designs(two, random_seed=seed)


def test_fit_pairwise_derives_small_pair_seeds_from_a_huge_one(monkeypatch):
    frame = bj.simulate.simulate_paired_items([0.7, 0.6], 0.9, 0.9, n=50, system=["a", "b"],
                                              random_seed=HUGE)  # fmt: skip
    _, cal = bj.simulate_items([0.7, 0.6], 0.9, 0.9, n=1, m0=20, m1=20, system=["a", "b"],
                               random_seed=0)  # fmt: skip
    paired = bj.JudgeCounts.from_frames(frame, cal, system="system", item="item")
    seen = []

    class Stop(Exception):
        pass

    def fake_fit(sub, paired, random_seed, **kwargs):
        seen.append(random_seed)
        raise Stop

    monkeypatch.setattr(fit_module, "fit", fake_fit)
    with pytest.raises(Stop):
        fit_module.fit_pairwise(paired, random_seed=HUGE)
    assert seen and 0 <= seen[0] < 2**32
    for seed in BAD_SEEDS:
        with pytest.raises(ValueError, match=r"random_seed must be a non-negative int"):
            fit_module.fit_pairwise(paired, random_seed=seed)


def test_prior_predictive_and_ppc_accept_huge_seeds(counts, result):
    prior = bj.prior_predictive(counts, draws=20, random_seed=HUGE)
    assert prior.attrs["random_seed"] == str(HUGE)
    again = bj.prior_predictive(counts, draws=20, random_seed=HUGE)
    xr.testing.assert_equal(prior["prior"].dataset, again["prior"].dataset)
    assert bj.prior_predictive(counts, draws=20, random_seed=0).attrs["random_seed"] == 0
    check = result.ppc(random_seed=HUGE)
    assert check.p_value.attrs["random_seed"] == str(HUGE)
    result.ppc(random_seed=0)
    for seed in BAD_SEEDS:
        with pytest.raises(ValueError, match=r"random_seed must be a non-negative int"):
            result.ppc(random_seed=seed)


def test_simulators_accept_every_non_negative_seed():
    for seed in (0, HUGE):
        bj.simulate_counts(0.5, 0.8, 0.8, n=10, m0=5, m1=5, random_seed=seed)
        bj.simulate_items(0.5, 0.8, 0.8, n=10, m0=5, m1=5, random_seed=seed)
        bj.simulate.simulate_paired_items([0.5, 0.6], 0.8, 0.8, n=10, random_seed=seed)
    for seed in BAD_SEEDS:
        with pytest.raises(ValueError, match=r"random_seed must be"):
            bj.simulate_counts(0.5, 0.8, 0.8, n=10, m0=5, m1=5, random_seed=seed)


# ------------------------------------------------------------- contradicted constraint

SWAPPED = dict(n=100, k=50, m0=50, tn=0, m1=50, tp=0)  # J = -1: the judge is always wrong


def test_data_that_contradict_judge_better_than_chance_warn_before_sampling(monkeypatch):
    c = bj.JudgeCounts.from_counts(**SWAPPED)

    class Sampled(Exception):
        pass

    def no_sampling(*args, **kwargs):
        raise Sampled

    monkeypatch.setattr(fit_module, "_sample_nutpie", no_sampling)
    pattern = (
        r"judge_better_than_chance=True assumes .* contradict it .*tn = 0 of m0 = 50, "
        r"tp = 0 of m1 = 50; observed q0 = 0\.00, q1 = 0\.00, J = -1\.00.* swapped.* drop "
        r"judge_better_than_chance"
    )
    with pytest.warns(bj.LowJudgeQualityWarning, match=pattern), pytest.raises(Sampled):
        bj.fit(c, judge_better_than_chance=True, random_seed=1)
    two = bj.JudgeCounts.from_counts(
        n=[100, 100], k=[50, 50], m0=50, tn=[0, 40], m1=50, tp=[0, 45], system=["a", "b"]
    )
    with pytest.warns(bj.LowJudgeQualityWarning, match=r"1 group\(s\) .*first: system='a'"):
        bj.build_model(two, judge_better_than_chance=True)
    with pytest.warns(bj.LowJudgeQualityWarning, match=r"q1 known = 0\.30"):
        bj.build_model(
            bj.JudgeCounts.from_counts(**SWAPPED), priors=bj.Priors(q1=0.3),
            judge_better_than_chance=True,
        )  # fmt: skip


def test_weak_or_uncertain_calibration_does_not_warn():
    # J = -0.1 from 10 + 10 items: chance, not a contradiction; shared calibration sums sets.
    for kwargs in (dict(m0=10, tn=4, m1=10, tp=5), dict(m0=0, tn=0, m1=10, tp=2)):
        c = bj.JudgeCounts.from_counts(n=100, k=50, **kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bj.SmallSampleWarning)
            bj.build_model(c, judge_better_than_chance=True)
    bj.build_model(bj.JudgeCounts.from_counts(**SWAPPED))  # no constraint: nothing to say


# ---------------------------------------------------------------------------- progress


class _Stream:
    def __init__(self, tty):
        self.tty = tty

    def isatty(self):
        return self.tty

    def write(self, text):
        return len(text)

    def flush(self):
        pass


def test_show_progress_follows_the_terminal_and_stays_quiet_in_ci_and_tests(monkeypatch):
    assert _progress.show_progress(True) and not _progress.show_progress(False)
    assert not _progress.show_progress(None)  # under pytest
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(sys, "stderr", _Stream(True))
    assert _progress.show_progress(None)
    for ci in ("true", "1"):
        monkeypatch.setenv("CI", ci)
        assert not _progress.show_progress(None) and _progress.show_progress(True)
    monkeypatch.setenv("CI", "false")
    assert _progress.show_progress(None)
    monkeypatch.setattr(sys, "stderr", _Stream(False))
    assert not _progress.show_progress(None)
    monkeypatch.setattr(_progress, "_in_jupyter_kernel", lambda: True)
    assert _progress.show_progress(None)
    with pytest.raises(ValueError, match=r"progress must be True, False or None .*got 'yes'"):
        _progress.show_progress("yes")


def test_fit_progressbar_default_asks_the_environment(counts, monkeypatch):
    seen = {}

    class Stop(Exception):
        pass

    def capture(*args, progress, **kwargs):
        seen["progress"] = progress
        raise Stop

    monkeypatch.setattr(fit_module, "_sample_nutpie", capture)
    with pytest.raises(ValueError, match=r"progressbar must be True, False or None"):
        bj.fit(counts, progressbar="yes")
    with pytest.raises(Stop):
        bj.fit(counts, random_seed=1)
    assert seen["progress"] is False  # under pytest
    monkeypatch.setattr(_progress, "interactive", lambda: True)
    with pytest.raises(Stop):
        bj.fit(counts, random_seed=1)
    assert seen["progress"] is True
    with pytest.raises(Stop):
        bj.fit(counts, random_seed=1, progressbar=False)
    assert seen["progress"] is False


def test_the_digest_survives_a_round_trip_of_joint_counts_and_text_labels(tmp_path):
    # Labels as text and integers, the joint verdict table, bools: all as they come back.
    frame = bj.simulate.simulate_paired_items([0.7, 0.6, 0.5], 0.9, 0.9, n=40,
                                              system=["a", "b", "c"], random_seed=1)  # fmt: skip
    _, cal = bj.simulate_items([0.7, 0.6, 0.5], 0.9, 0.9, n=1, m0=10, m1=10,
                               system=["a", "b", "c"], random_seed=2)  # fmt: skip
    counts = bj.JudgeCounts.from_frames(frame, cal, system="system", item="item")
    tree = xr.DataTree.from_dict(
        {
            "counts": counts.dataset,
            "flags": xr.Dataset({"ok": ("i", np.array([True, False]))}, coords={"i": [3, 4]}),
        }
    )
    tree.attrs["bayesjudge_config"] = json.dumps({"calibration": "separate"})
    tree.to_netcdf(tmp_path / "t.nc", engine="h5netcdf")
    again = xr.open_datatree(tmp_path / "t.nc", engine="h5netcdf").load()
    assert storage.content_digest(again) == storage.content_digest(tree)
    changed = again.copy()
    changed.attrs["bayesjudge_config"] = json.dumps({"calibration": "shared"})
    assert storage.content_digest(changed) != storage.content_digest(tree)
