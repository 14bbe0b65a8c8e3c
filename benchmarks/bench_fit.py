"""Benchmark: Bayesian fits with nutpie vs PyMC's own NUTS, and an 8 × 4 hierarchical fit.

Run from the repository root::

    python benchmarks/bench_fit.py [--skip-pymc]

(a) One group (n = 1000, m0 = m1 = 100; θ = 0.4, q0 = 0.7, q1 = 0.9), ``calibration="separate"``,
    4 chains × (1000 tune + 1000 draws). Timed in one process, each with time.perf_counter:

    * nutpie, first fit in the process: numba compile of the model + sampling (goal ≤ 10 s);
    * nutpie again after ``bayesjudge.models.fit._COMPILED.clear()``: compile + sampling in a
      warm process (numba's own start-up already paid);
    * nutpie refit of the same model structure with new data: sampling only (cached compile);
    * PyMC's NUTS (``sampler="pymc"``: PyTensor's default numba backend, with its on-disk cache;
      chains run one after another, as ``bayesjudge.fit`` runs them), first and second call.

    The speed-up is PyMC's time over nutpie's, both including compilation.

(b) 8 systems × 4 strata, n = 250 test items and m0 = m1 = 30 calibration items per group,
    ``calibration="hierarchical"`` pooled over both dims (goal: ≤ 60 s compile + sampling, no
    divergences). Fitted at bayesjudge.fit's defaults (target_accept 0.99 for this model) after
    clearing the compile cache, then refitted (cached compile). Since divergences depend on the
    sampler's seed, six seeds are run at the default and at PyMC's 0.8 (cached compile) and
    their divergence counts reported.

Efficiency is reported as ESS per second: the smallest bulk ESS over the θ cells divided by the
wall time of the fit call. Each run also records the CPU time it used (this process's threads
plus PyMC's worker processes) and the machine's load average is recorded: where other processes
share the cores, wall time exceeds CPU time. Results go to ``benchmarks/results/fit.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import time
import warnings
from pathlib import Path

import arviz as az
import numpy as np
import scipy.special as sc

import bayesjudge as bj
from bayesjudge.models import fit as fit_module

ROOT = Path(__file__).resolve().parents[1]
DRAWS = TUNE = 1000
CHAINS = 4
GOAL_SINGLE_SECONDS = 10.0
GOAL_HIERARCHICAL_SECONDS = 60.0
EXTRA_SEEDS = (5, 6, 7, 8, 9)


def single_group_counts(seed: int) -> bj.JudgeCounts:
    return bj.simulate_counts(0.4, 0.7, 0.9, n=1000, m0=100, m1=100, random_seed=seed)


def hierarchical_counts(seed: int = 2025) -> bj.JudgeCounts:
    """8 × 4 groups; θ uniform, logit q0/q1 normal around logit 0.75 / logit 0.9 (sd 0.4)."""
    rng = np.random.default_rng(seed)
    shape = (8, 4)
    theta = rng.uniform(0.3, 0.9, shape)
    q0 = sc.expit(sc.logit(0.75) + 0.4 * rng.standard_normal(shape))
    q1 = sc.expit(sc.logit(0.90) + 0.4 * rng.standard_normal(shape))
    return bj.simulate_counts(
        theta,
        q0,
        q1,
        n=250,
        m0=30,
        m1=30,
        system=[f"system{i}" for i in range(shape[0])],
        stratum=[f"stratum{j}" for j in range(shape[1])],
        random_seed=rng,
    )


def cpu_seconds() -> float:
    """User + system CPU time of this process (all threads) and of its reaped children."""
    own, children = (
        resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed_fit(counts, *, clear_cache: bool, **options) -> dict:
    """Fit once, timing the call; record diagnostics and any warnings instead of raising."""
    if clear_cache:
        fit_module._COMPILED.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", bj.BayesJudgeWarning)
        cpu_start, start = cpu_seconds(), time.perf_counter()
        result = bj.fit(counts, draws=DRAWS, tune=TUNE, chains=CHAINS, **options)
        seconds = time.perf_counter() - start
        cpu = cpu_seconds() - cpu_start
    diag = result.diagnostics()
    ess_theta = float(az.ess(result.posterior[["theta"]], method="bulk")["theta"].min())
    return {
        "sampler": options.get("sampler", "nutpie"),
        "target_accept": result.config["target_accept"],
        "random_seed": options["random_seed"],
        "compile_cache_cleared": clear_cache,
        "seconds": seconds,
        "cpu_seconds": cpu,
        "divergences": diag["divergences"],
        "draws_total": diag["draws"],
        "r_hat_max": diag["r_hat_max"],
        "ess_bulk_min": diag["ess_bulk_min"],
        "ess_tail_min": diag["ess_tail_min"],
        "ess_bulk_min_theta": ess_theta,
        "ess_bulk_theta_per_second": ess_theta / seconds,
        "theta_mean": np.round(result.posterior["theta"].mean(("chain", "draw")).values, 4)
        .ravel()
        .tolist(),
        "warnings": [str(w.message) for w in caught],
    }


def show(label: str, run: dict) -> None:
    print(
        f"  {label:<46} {run['seconds']:>6.2f} s (CPU {run['cpu_seconds']:>5.1f} s)  "
        f"divergences {run['divergences']:>3}  "
        f"min bulk ESS(θ) {run['ess_bulk_min_theta']:>6.0f}  "
        f"ESS/s {run['ess_bulk_theta_per_second']:>7.1f}  r_hat max {run['r_hat_max']:.3f}"
    )


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-pymc", action="store_true", help="skip PyMC's NUTS in (a)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "fit.json")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()

    # (a) one group: nutpie cold, nutpie recompiled, nutpie cached, PyMC.
    print(f"(a) one group, {CHAINS} chains × ({TUNE} tune + {DRAWS} draws)")
    single = {}
    single["nutpie_first_in_process"] = timed_fit(
        single_group_counts(1), clear_cache=True, random_seed=1
    )
    single["nutpie_compile_cleared"] = timed_fit(
        single_group_counts(1), clear_cache=True, random_seed=1
    )
    single["nutpie_cached_refit"] = timed_fit(
        single_group_counts(2), clear_cache=False, random_seed=2
    )
    if not args.skip_pymc:
        for i, label in enumerate(("pymc_first", "pymc_second")):
            single[label] = timed_fit(
                single_group_counts(1), clear_cache=False, random_seed=1 + i, sampler="pymc"
            )
    for label, run in single.items():
        show(label, run)
    nutpie_cold = single["nutpie_first_in_process"]["seconds"]
    single_summary = {
        "goal_seconds": GOAL_SINGLE_SECONDS,
        "nutpie_compile_and_sample_seconds": nutpie_cold,
        "meets_goal": nutpie_cold <= GOAL_SINGLE_SECONDS,
    }
    if not args.skip_pymc:
        pymc = min(single["pymc_first"]["seconds"], single["pymc_second"]["seconds"])
        single_summary.update(
            {
                "pymc_seconds_best": pymc,
                "speedup_pymc_over_nutpie_compile_and_sample": pymc / nutpie_cold,
                "speedup_pymc_over_nutpie_cached_refit": pymc
                / single["nutpie_cached_refit"]["seconds"],
                "ess_per_second_ratio_nutpie_over_pymc": single["nutpie_first_in_process"][
                    "ess_bulk_theta_per_second"
                ]
                / max(
                    single["pymc_first"]["ess_bulk_theta_per_second"],
                    single["pymc_second"]["ess_bulk_theta_per_second"],
                ),
            }
        )
        print(
            f"  PyMC / nutpie (compile + sample): "
            f"{single_summary['speedup_pymc_over_nutpie_compile_and_sample']:.1f}x; "
            f"PyMC / nutpie cached refit: "
            f"{single_summary['speedup_pymc_over_nutpie_cached_refit']:.1f}x"
        )
    print(f"  nutpie compile + sample {nutpie_cold:.2f} s (goal <= {GOAL_SINGLE_SECONDS:.0f} s)")

    # (b) 8 × 4 hierarchical at bayesjudge.fit's defaults (target_accept 0.99 for this model).
    counts = hierarchical_counts()
    print("(b) 8 systems × 4 strata, calibration='hierarchical'")
    first = timed_fit(counts, clear_cache=True, random_seed=3, calibration="hierarchical")
    show(f"target_accept={first['target_accept']} (compile + sample)", first)
    cached = timed_fit(counts, clear_cache=False, random_seed=4, calibration="hierarchical")
    show(f"target_accept={cached['target_accept']} (cached refit)", cached)
    # Divergences depend on the sampler's seed: more seeds at the default, and at PyMC's 0.8.
    by_seed = {}
    for target_accept in (None, 0.8):
        options = {} if target_accept is None else {"target_accept": target_accept}
        runs = [
            timed_fit(
                counts, clear_cache=False, random_seed=seed, calibration="hierarchical", **options
            )
            for seed in (3, *EXTRA_SEEDS)
        ]
        by_seed[str(runs[0]["target_accept"])] = {
            str(r["random_seed"]): r["divergences"] for r in runs
        }
    print(f"  divergences by target_accept and sampler seed: {by_seed}")
    hier_summary = {
        "goal_seconds": GOAL_HIERARCHICAL_SECONDS,
        "target_accept_default": first["target_accept"],
        "divergences_by_target_accept_and_seed": by_seed,
        "compile_and_sample_seconds": first["seconds"],
        "meets_goal": first["divergences"] == 0 and first["seconds"] <= GOAL_HIERARCHICAL_SECONDS,
    }
    print(
        f"  compile + sample {first['seconds']:.1f} s, divergences {first['divergences']}; "
        f"goal <= {GOAL_HIERARCHICAL_SECONDS:.0f} s without divergences met: "
        f"{hier_summary['meets_goal']}"
    )

    import nutpie
    import pymc

    result = {
        "benchmark": "bayesjudge.fit: nutpie vs PyMC NUTS (one group); hierarchical 8 x 4",
        "draws": DRAWS,
        "tune": TUNE,
        "chains": CHAINS,
        "ess_per_second": "min bulk ESS over theta cells / wall seconds of the fit call",
        "single_group": {"design": "n=1000, m0=m1=100, theta=0.4, q0=0.7, q1=0.9", **single},
        "single_group_summary": single_summary,
        "hierarchical": {
            "design": "8 systems x 4 strata, n=250, m0=m1=30 per group, pool_over both dims",
            "compile_and_sample": first,
            "cached_refit": cached,
        },
        "hierarchical_summary": hier_summary,
        "load_average_before": list(load_before),
        "load_average_after": list(os.getloadavg()),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pymc": pymc.__version__,
        "nutpie": nutpie.__version__,
        "bayesjudge": bj.__version__,
        "machine": platform.machine(),
        "platform": platform.platform(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return result


if __name__ == "__main__":
    main()
