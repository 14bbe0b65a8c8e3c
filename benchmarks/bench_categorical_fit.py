"""Benchmark: a K = 3 hierarchical fit of 8 systems × 3 strata (issue 16's goal: < 60 s).

Run from the repository root::

    python benchmarks/bench_categorical_fit.py

Data: preference verdicts ["A", "tie", "B"], 8 systems × 3 strata, n = 200 test items and
m = 20 labelled items per truth category per group (stratified design); θ per group drawn
from Dirichlet(4, 2, 4), the judge's confusion per group on the log-ratio scale around a
judge right 80 % of the time (off-diagonal log-ratios −2 ± 0.3), seed 2026.

``calibration="hierarchical"`` (pooled over both dims) at fit_categorical's defaults
(4 chains × (1000 tune + 1000 draws), target_accept 0.99). Timed separately, each with
time.perf_counter: building the PyMC model, nutpie's numba compile (cache cleared first),
sampling, and a refit of the same structure with new data (compile cached). Reported:
divergences, the largest r_hat and smallest bulk ESS over θ and the confusion, the CPU time
of this process and the load average (other processes sharing the cores inflate wall time).
Results go to ``benchmarks/results/categorical_fit.json`` (written atomically).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import time
from pathlib import Path

import numpy as np
from scipy import special

from bayesjudge._io import atomic_write
from bayesjudge.models import categorical as cm
from bayesjudge.simulate import simulate_categorical_counts

ROOT = Path(__file__).resolve().parents[1]
GOAL_SECONDS = 60.0
CATEGORIES = ["A", "tie", "B"]


def counts(seed: int = 2026):
    """8 × 3 groups of K = 3 preference counts (see the module docstring)."""
    rng = np.random.default_rng(seed)
    shape = (8, 3)
    theta = rng.dirichlet([4.0, 2.0, 4.0], size=shape)
    eta = np.zeros((*shape, 3, 3))
    off = ~np.eye(3, dtype=bool)
    eta[..., off] = -2.0 + 0.3 * rng.standard_normal((*shape, 6))
    confusion = special.softmax(eta, axis=-1)
    return simulate_categorical_counts(
        theta,
        confusion,
        n=200,
        m=np.full((*shape, 3), 20),
        system=[f"system{i}" for i in range(shape[0])],
        stratum=[f"stratum{j}" for j in range(shape[1])],
        categories=CATEGORIES,
        random_seed=rng,
    )


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run(data, *, clear: bool, seed: int) -> dict:
    """Build, compile (unless cached) and sample one fit, each step timed."""
    if clear:
        cm._COMPILED.clear()
    config = cm.categorical_model_config(data, "hierarchical")
    arrays = cm._arrays(data, "hierarchical", config["pool_over"])
    cpu0 = cpu_seconds()
    t0 = time.perf_counter()
    model = cm.build_categorical_from_config(data, config)
    t1 = time.perf_counter()
    cpu1 = cpu_seconds()
    compiled = cm.compile_categorical(model, arrays, config)
    t2 = time.perf_counter()
    cpu2 = cpu_seconds()
    tree = cm._sample(
        compiled, draws=1000, tune=1000, chains=4, seed=seed, target_accept=0.99, progress=False
    )
    t3 = time.perf_counter()
    fit = cm.CategoricalFit(
        cm._with_counts(tree, arrays, data),
        {**config, "draws": 1000, "tune": 1000, "chains": 4, "random_seed": seed,
         "target_accept": 0.99},
        model,
    )  # fmt: skip
    d = fit.diagnostics()
    return {
        "build_s": round(t1 - t0, 2),
        "compile_s": round(t2 - t1, 2),
        "sample_s": round(t3 - t2, 2),
        "total_s": round(t3 - t0, 2),
        "cpu_s": round(cpu_seconds() - cpu0, 2),
        "compile_cpu_s": round(cpu2 - cpu1, 2),
        "sample_cpu_s": round(cpu_seconds() - cpu2, 2),
        "divergences": d["divergences"],
        "r_hat_max": round(d["r_hat_max"], 4),
        "ess_bulk_min": round(d["ess_bulk_min"], 1),
        "ess_tail_min": round(d["ess_tail_min"], 1),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "categorical_fit.json"
    )
    args = parser.parse_args(argv)
    first = run(counts(), clear=True, seed=1)
    print("first fit (compile + sample):", first, flush=True)
    refit = run(counts(seed=2027), clear=False, seed=2)
    print("refit (cached compile):", refit, flush=True)
    result = {
        "benchmark": "categorical_fit",
        "model": "K = 3, 8 systems x 3 strata, calibration='hierarchical', 4 x (1000 + 1000)",
        "goal_seconds": GOAL_SECONDS,
        "first": first,
        "refit": refit,
        "meets_goal": bool(first["total_s"] < GOAL_SECONDS and first["divergences"] == 0),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
    }
    atomic_write(args.out, json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
