"""Benchmark: the exact posterior engine vs NUTS, per posterior, and 10⁴ posteriors at once.

Run from the repository root::

    python benchmarks/bench_exact.py [--skip-pymc]

(a) One group (n = 1000, m0 = m1 = 100; θ = 0.4, q0 = 0.7, q1 = 0.9; seeds 1-5), flat priors.
    Timed in one process with time.perf_counter, per posterior:

    * ``exact_posterior`` (θ, q0, q1: mean, sd, median, 95 % ETI), one group per call;
    * ``exact_theta_interval`` (θ only, the fast path), one group per call, and per group
      within a call of 10⁴ groups;
    * ``bj.fit(method="exact")`` (engine + 4000 i.i.d. draws + the Fit/DataTree wrapping);
    * PyMC's NUTS (``sampler="pymc"``, 4 chains × (1000 tune + 1000 draws), chains one after
      another), compile excluded: the first call compiles (and is reported separately); the
      median of the next calls is the per-posterior time, and the median of PyMC's own
      ``posterior.attrs["sampling_time"]`` (sampling only) the strictest comparison;
    * nutpie, cached refit (compile excluded the same way).

    Ratios: NUTS time / exact time (goal ≥ 1000× vs PyMC NUTS).

(b) 10⁴ single-group posteriors (n = 1000, m0 = m1 = 100, θ ~ U(0.05, 0.95), q0 = 0.7,
    q1 = 0.9): ``exact_posterior`` on all of them in one call (goal ≤ 10 s), single-threaded
    and on a 2-thread pool over 2 chunks (numpy releases the GIL), and the fast path.

(c) ``bj.fit(method="exact")`` at scale (issue 13): 2,000 groups (n = 1000, m0 = m1 = 100,
    θ ~ U(0.05, 0.95), q0 = 0.7, q1 = 0.9) at the default 4 × 1000 draws, fit plus
    ``summary()``, per posterior, against a cached nutpie refit of one such group (``bj.fit``
    with the compile cached: median of 4 refits with new data and seeds; its summary not
    counted, which favours nutpie); goal ratio ≥ 1000. The exact fit makes its i.i.d. draws
    only when the posterior is first used (summary() of θ, q0, q1 and youden comes from the
    exact marginals), so fit plus summary makes none; the draws' cost on first access to
    ``fit.posterior`` is reported beside it (not per posterior). With the breakdown: quadrature
    of θ, q0, q1 (``exact_marginals``, on the thread pool over blocks of groups that
    ``bj.fit`` uses — the CPUs available, at most 4 — and on one thread), the youden marginal
    (pooled), the draws
    (``exact_draws``), the rest of ``fit`` and ``summary``. And a
    single exact fit plus summary of one group (median of 5), against the 0.21 s that issue
    13 quotes for R's ``prevalence::truePrev`` (JAGS) — a figure from the issue, not measured
    here (R is not installed). Every figure is taken twice in the same call: wall seconds
    (``time.perf_counter``) and CPU seconds of this process (``time.process_time``; nutpie
    samples its chains on threads, so its CPU time can exceed its wall time), and the ratio
    is reported on both. Run alone with ``--fit-speed`` (``--groups`` to change the 2,000);
    results in ``benchmarks/results/exact_fit.json``.

Results go to ``benchmarks/results/exact.json`` with the load average (the machine is shared;
wall time is inflated when other processes run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

import bayesjudge as bj
from bayesjudge.core.exact import (
    exact_draws,
    exact_marginals,
    exact_posterior,
    exact_theta_interval,
)

ROOT = Path(__file__).resolve().parents[1]
GOAL_SPEEDUP = 1000.0
GOAL_BATCH_SECONDS = 10.0
BATCH = 10_000
FIT_GROUPS = 2_000
TRUEPREV_SECONDS = 0.21  # R prevalence::truePrev (JAGS), one posterior: quoted by issue 13


def single_group_counts(seed: int) -> bj.JudgeCounts:
    return bj.simulate_counts(0.4, 0.7, 0.9, n=1000, m0=100, m1=100, random_seed=seed)


def args_of(counts: bj.JudgeCounts):
    ds = counts.dataset
    return [ds[v].values.ravel() for v in ("k", "n", "tn", "m0", "tp", "m1")]


def per_call(func, inputs, repeat: int = 3) -> float:
    """Median over inputs of the best-of-``repeat`` wall time of ``func(*input)``."""
    times = []
    for data in inputs:
        best = np.inf
        for _ in range(repeat):
            start = time.perf_counter()
            func(*data)
            best = min(best, time.perf_counter() - start)
        times.append(best)
    return statistics.median(times)


def timed(func) -> float:
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def clocked(func):
    """(wall seconds, CPU seconds of this process, result) of ``func()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = func()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def nuts_seconds(sampler: str, seeds) -> dict:
    """First call (with compile) and the median of the later calls (whole ``bj.fit``).

    Wall and CPU seconds (``cpu_seconds``: the median of the later calls). For PyMC also
    ``sampling_seconds``: the median of the sampling time PyMC itself records in
    ``posterior.attrs["sampling_time"]`` (tuning and draws of the 4 chains, without
    compiling, model building or the Fit wrapping) — the strictest "compile excluded" time.
    """
    runs, cpu, sampling = [], [], []
    for seed in seeds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bj.BayesJudgeWarning)
            wall, used, result = clocked(
                lambda s=seed: bj.fit(single_group_counts(s), random_seed=s, sampler=sampler)
            )
        runs.append(wall)
        cpu.append(used)
        recorded = result.tree["posterior"].attrs.get("sampling_time")
        if recorded is not None:
            sampling.append(float(recorded))
    out = {"first_call_seconds": runs[0], "seconds": statistics.median(runs[1:]), "runs": runs,
           "cpu_seconds": statistics.median(cpu[1:]), "cpu_runs": cpu}  # fmt: skip
    if sampling:
        out["sampling_seconds"] = statistics.median(sampling[1:])
        out["sampling_runs"] = sampling
    return out


def exact_threads() -> int:
    """Threads ``bj.fit(method="exact")`` runs the engine's blocks of groups on, here."""
    from bayesjudge.models import fit

    return fit._exact_threads()


def pooled(func, *args, **kwargs):
    """``func`` with its blocks of groups on the thread pool that ``bj.fit`` uses."""
    with ThreadPoolExecutor(max_workers=exact_threads()) as pool:
        return func(*args, mapper=pool.map, **kwargs)


def machine(load_before) -> dict:
    return {
        "python": platform.python_version(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
    }


def fit_speed(out_path: Path, repeat: int = 2, groups: int = FIT_GROUPS) -> dict:
    """(c): the exact Fit at scale and alone, against a cached nutpie refit (one process)."""
    load_before = os.getloadavg()
    rng = np.random.default_rng(2026)
    counts = bj.simulate_counts(
        rng.uniform(0.05, 0.95, groups), 0.7, 0.9, n=1000, m0=100, m1=100,
        system=[f"s{i}" for i in range(groups)], random_seed=rng,
    )  # fmt: skip
    data = [counts.dataset[v].values for v in ("k", "n", "tn", "m0", "tp", "m1")]
    singles = [single_group_counts(s) for s in range(1, 6)]
    bj.fit(singles[0], method="exact", random_seed=0).summary()  # warm-up (imports, caches)

    many = {"groups": groups, "draws_per_group": 4000, "runs": [],
            "threads": exact_threads()}  # fmt: skip
    parts = ("marginals", "marginals_one_thread", "youden_marginal", "draws", "fit", "summary",
             "fit_and_summary", "posterior_first_access")  # fmt: skip
    for seed in range(1, repeat + 1):  # each run: the parts, then the whole
        run = {}
        for key, func in (
            ("marginals", lambda: pooled(exact_marginals, *data)),
            ("marginals_one_thread", lambda: exact_marginals(*data)),
            ("youden_marginal", lambda: pooled(exact_marginals, *data, variables=("youden",))),
            ("draws", lambda s=seed: exact_draws(*data, size=4000, rng=s)),
            ("fit", lambda s=seed: bj.fit(counts, method="exact", random_seed=s)),
        ):
            run[f"{key}_seconds"], run[f"{key}_cpu_seconds"], result = clocked(func)
        run["summary_seconds"], run["summary_cpu_seconds"], _ = clocked(result.summary)
        run["draws_made_by_fit_and_summary"] = result._lazy is None
        for kind in ("seconds", "cpu_seconds"):
            run[f"fit_and_summary_{kind}"] = run[f"fit_{kind}"] + run[f"summary_{kind}"]
        wall, cpu, _ = clocked(lambda r=result: r.posterior)
        run["posterior_first_access_seconds"], run["posterior_first_access_cpu_seconds"] = wall, cpu
        many["runs"].append(run)
    best = min(many["runs"], key=lambda r: r["fit_and_summary_cpu_seconds"])
    many.update(best)
    many["per_posterior_seconds"] = best["fit_and_summary_seconds"] / groups
    many["per_posterior_cpu_seconds"] = best["fit_and_summary_cpu_seconds"] / groups

    single = [
        clocked(lambda c=c, s=s: bj.fit(c, method="exact", random_seed=s).summary())[:2]
        for s, c in enumerate(singles, start=1)
    ]
    one = {"fit_and_summary_seconds": statistics.median(w for w, _ in single),
           "fit_and_summary_cpu_seconds": statistics.median(c for _, c in single),
           "runs": [w for w, _ in single], "cpu_runs": [c for _, c in single],
           "truePrev_seconds_quoted": TRUEPREV_SECONDS}  # fmt: skip
    one["meets_goal"] = one["fit_and_summary_seconds"] < TRUEPREV_SECONDS

    nutpie = nuts_seconds("nutpie", range(1, 6))
    ratio = nutpie["seconds"] / many["per_posterior_seconds"]
    ratio_cpu = nutpie["cpu_seconds"] / many["per_posterior_cpu_seconds"]
    out = {
        "machine": machine(load_before),
        "exact_fit_many_groups": many,
        "exact_fit_one_group": one,
        "nutpie_cached_refit": nutpie,
        "ratio_nutpie_refit_over_exact_per_posterior": ratio,
        "ratio_nutpie_refit_over_exact_per_posterior_cpu": ratio_cpu,
        "goal_ratio": GOAL_SPEEDUP,
        "meets_goal": ratio >= GOAL_SPEEDUP,
        "bayesjudge_version": bj.__version__,
    }
    print(f"(c) bj.fit(method='exact') + summary, {groups} groups x 4000 draws"
          f"{'':>6}wall s     CPU s")  # fmt: skip
    for key in parts:
        print(f"  {key:<34} {many[key + '_seconds']:9.3f} {many[key + '_cpu_seconds']:9.3f}")
    print(f"  per posterior (ms)                 {many['per_posterior_seconds'] * 1e3:9.3f} "
          f"{many['per_posterior_cpu_seconds'] * 1e3:9.3f}")  # fmt: skip
    print(f"  nutpie cached refit, one group (ms) {nutpie['seconds'] * 1e3:8.1f} "
          f"{nutpie['cpu_seconds'] * 1e3:9.1f}")  # fmt: skip
    print(f"  ratio (goal >= {GOAL_SPEEDUP:.0f})               {ratio:9.1f} {ratio_cpu:9.1f}")
    print(f"  one group, fit + summary (ms)      {one['fit_and_summary_seconds'] * 1e3:9.1f} "
          f"{one['fit_and_summary_cpu_seconds'] * 1e3:9.1f} "
          f"(truePrev, quoted: {TRUEPREV_SECONDS * 1e3:.0f} ms)")  # fmt: skip
    print(f"  load average before/after: {load_before} / {out['machine']['load_average_after']}")
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(out, indent=2, default=float) + "\n")
    print(f"wrote {out_path}")
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-pymc", action="store_true", help="skip PyMC's NUTS in (a)")
    parser.add_argument("--fit-speed", action="store_true", help="run (c) only")
    parser.add_argument("--groups", type=int, default=FIT_GROUPS, help="groups of (c)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    results = ROOT / "benchmarks" / "results"
    if args.fit_speed:
        return fit_speed(args.out or results / "exact_fit.json", groups=args.groups)
    args.out = args.out or results / "exact.json"
    load_before = os.getloadavg()
    seeds = range(1, 6)
    singles = [args_of(single_group_counts(s)) for s in seeds]

    # (a) per posterior
    exact_posterior(*singles[0])  # warm-up (imports, caches)
    single = {
        "exact_posterior_seconds": per_call(exact_posterior, singles),
        "exact_theta_interval_seconds": per_call(exact_theta_interval, singles),
    }
    counts = [single_group_counts(s) for s in seeds]
    bj.fit(counts[0], method="exact", random_seed=0)
    single["fit_method_exact_seconds"] = statistics.median(
        [timed(lambda c=c: bj.fit(c, method="exact", random_seed=1)) for c in counts]
    )
    single["nutpie_cached_refit"] = nuts_seconds("nutpie", seeds)
    if not args.skip_pymc:
        single["pymc_nuts"] = nuts_seconds("pymc", seeds)
    exact_s = single["exact_posterior_seconds"]
    ratios = {
        "nutpie_refit_over_exact_posterior": single["nutpie_cached_refit"]["seconds"] / exact_s,
        "nutpie_refit_over_fit_exact": single["nutpie_cached_refit"]["seconds"]
        / single["fit_method_exact_seconds"],
    }
    if not args.skip_pymc:
        pymc = single["pymc_nuts"]["seconds"]
        ratios["pymc_over_exact_posterior"] = pymc / exact_s
        ratios["pymc_over_exact_theta_interval"] = pymc / single["exact_theta_interval_seconds"]
        ratios["pymc_over_fit_exact"] = pymc / single["fit_method_exact_seconds"]
        if "sampling_seconds" in single["pymc_nuts"]:
            recorded = single["pymc_nuts"]["sampling_seconds"]
            ratios["pymc_sampling_time_over_exact_posterior"] = recorded / exact_s
            ratios["pymc_sampling_time_over_exact_theta_interval"] = (
                recorded / single["exact_theta_interval_seconds"]
            )
        ratios["meets_goal"] = ratios["pymc_over_exact_posterior"] >= GOAL_SPEEDUP
        ratios["meets_goal_against_sampling_time"] = (
            ratios.get("pymc_sampling_time_over_exact_posterior", 0.0) >= GOAL_SPEEDUP
        )
    print("(a) one group (n = 1000, m0 = m1 = 100), per posterior")
    for key in ("exact_posterior_seconds", "exact_theta_interval_seconds",
                "fit_method_exact_seconds"):  # fmt: skip
        print(f"  {key:<34} {single[key] * 1e3:9.2f} ms")
    for key in ("nutpie_cached_refit", "pymc_nuts"):
        if key in single:
            print(f"  {key:<34} {single[key]['seconds'] * 1e3:9.2f} ms "
                  f"(first call {single[key]['first_call_seconds']:.2f} s)")  # fmt: skip
            if "sampling_seconds" in single[key]:
                print(f"  {key + ' (recorded sampling)':<34} "
                      f"{single[key]['sampling_seconds'] * 1e3:9.2f} ms")  # fmt: skip
    for key, value in ratios.items():
        print(f"  {key:<34} {value:9.0f}" if not key.startswith("meets") else f"  {key}: {value}")

    # (b) 10⁴ posteriors
    rng = np.random.default_rng(2026)
    batch = bj.simulate_counts(
        rng.uniform(0.05, 0.95, BATCH), 0.7, 0.9, n=1000, m0=100, m1=100,
        system=list(range(BATCH)), random_seed=rng,
    )  # fmt: skip
    data = args_of(batch)
    half = [[d[: BATCH // 2] for d in data], [d[BATCH // 2 :] for d in data]]

    def threaded(func):
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(lambda part: func(*part), half))

    many = {
        "groups": BATCH,
        "exact_posterior_seconds": timed(lambda: exact_posterior(*data)),
        "exact_posterior_2_threads_seconds": timed(lambda: threaded(exact_posterior)),
        "exact_theta_interval_seconds": timed(lambda: exact_theta_interval(*data)),
        "exact_theta_interval_2_threads_seconds": timed(lambda: threaded(exact_theta_interval)),
        "goal_seconds": GOAL_BATCH_SECONDS,
    }
    many["meets_goal"] = (
        min(many["exact_posterior_seconds"], many["exact_posterior_2_threads_seconds"])
        <= GOAL_BATCH_SECONDS
    )
    many["theta_interval_microseconds_per_posterior"] = (
        many["exact_theta_interval_seconds"] / BATCH * 1e6
    )
    if not args.skip_pymc:
        per_posterior = many["exact_posterior_seconds"] / BATCH
        ratios["pymc_over_exact_posterior_in_batch"] = single["pymc_nuts"]["seconds"] / (
            per_posterior
        )
        ratios["meets_goal_in_batch"] = ratios["pymc_over_exact_posterior_in_batch"] >= GOAL_SPEEDUP
        print(f"  PyMC NUTS / exact_posterior per posterior in the batch: "
              f"{ratios['pymc_over_exact_posterior_in_batch']:.0f}")  # fmt: skip
    print(f"(b) {BATCH} single-group posteriors")
    for key, value in many.items():
        print(f"  {key:<44} {value}")

    out = {
        "machine": machine(load_before),
        "single_group": single,
        "ratios": ratios,
        "many_groups": many,
        "bayesjudge_version": bj.__version__,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2, default=float) + "\n")
    print(f"wrote {args.out}")
    return out


if __name__ == "__main__":
    main()
