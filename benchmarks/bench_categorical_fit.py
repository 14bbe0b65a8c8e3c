"""Benchmark: a K = 3 hierarchical fit of 8 systems × 3 strata (issue 16's goal: < 60 s).

Run from the repository root::

    python benchmarks/bench_categorical_fit.py

Data: preference verdicts ["A", "tie", "B"], 8 systems × 3 strata, n = 200 test items and
m = 20 labelled items per truth category per group (stratified design); θ per group drawn
from Dirichlet(4, 2, 4), the judge's confusion per group on the log-ratio scale around a
judge right 80 % of the time (off-diagonal log-ratios −2 ± 0.3), seed 2026.

``calibration="hierarchical"`` (pooled over both dims) at fit_categorical's defaults
(4 chains × (1000 tune + 1000 draws), target_accept 0.99). Timed separately, wall
(time.perf_counter) and CPU (getrusage of this process, all threads: nutpie samples in
threads, numba compiles in this one): building the PyMC model, the compile, sampling, and a
refit of the same structure with new data. Reported: divergences, the largest r_hat and
smallest bulk/tail ESS over θ and the confusion, the load average (other processes sharing
the cores inflate wall time, not CPU time) and ``idle_estimate_s`` = compile CPU + sample
CPU / cores, the wall time to expect on an idle machine (the compile runs on one core, the
chains on all).

``--engine kernels`` (the default, what ``fit_categorical`` uses for ``confusion="free"``):
the hand-written numba kernels of :mod:`bayesjudge.models.categorical_numba`, whose compile
numba keeps on disk (``NUMBA_CACHE_DIR``, else ``__pycache__`` beside the module, else
``~/.cache/numba``). ``--engine graph``: nutpie's numba compile of PyMC's logp graph (the
route of the structured confusions), whose op kernels PyTensor keeps on disk
(``~/.pytensor/…/numba``); its in-memory cache is cleared first.

``--cold`` runs the benchmark in a child process with an empty PyTensor compile directory
and an empty ``NUMBA_CACHE_DIR`` (a first fit on a fresh installation); the default uses
the caches as they are (``"warm"``). Results go to
``benchmarks/results/categorical_fit.json`` (written atomically; ``--out`` elsewhere).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy import special

from bayesjudge._io import atomic_write

ROOT = Path(__file__).resolve().parents[1]
GOAL_SECONDS = 60.0
CATEGORIES = ["A", "tie", "B"]
# Set in the child process of --cold: the empty PyTensor compile directory it runs with.
COLD_ENV = "BAYESJUDGE_BENCH_COLD_DIR"


def counts(seed: int = 2026):
    """8 × 3 groups of K = 3 preference counts (see the module docstring)."""
    from bayesjudge.simulate import simulate_categorical_counts

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
    """CPU seconds of this process (every thread) and of its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


# The graph engine's compiled model, kept for the refit (new data into the same structure).
_GRAPH: dict = {}


def _compile(engine: str, model, arrays, config):
    """The nutpie model: the hand-written kernels, or nutpie's compile of PyMC's graph."""
    from bayesjudge.models import categorical as cm

    if engine == "kernels":
        assert cm.uses_kernels(config)
        return cm.compile_categorical(model, arrays, config)
    import nutpie

    if "model" not in _GRAPH:
        _GRAPH["model"] = nutpie.compile_pymc_model(model)
        return _GRAPH["model"]
    return _GRAPH["model"].with_data(**{v.name: v.get_value() for v in model.data_vars})


def run(data, *, clear: bool, seed: int, engine: str = "kernels") -> dict:
    """Build, compile (unless cached) and sample one fit, each step timed (wall and CPU)."""
    from bayesjudge.models import categorical as cm

    if clear:
        cm._COMPILED.clear()
        _GRAPH.clear()
    config = cm.categorical_model_config(data, "hierarchical")
    arrays = cm._arrays(data, "hierarchical", config["pool_over"])
    cpu0 = cpu_seconds()
    t0 = time.perf_counter()
    model = cm.build_categorical_from_config(data, config)
    t1 = time.perf_counter()
    cpu1 = cpu_seconds()
    compiled = _compile(engine, model, arrays, config)
    t2 = time.perf_counter()
    cpu2 = cpu_seconds()
    tree = cm._sample(
        compiled, draws=1000, tune=1000, chains=4, seed=seed, target_accept=0.99, progress=False
    )
    t3 = time.perf_counter()
    cpu3 = cpu_seconds()
    fit = cm.CategoricalFit(
        cm._with_counts(tree, arrays, data),
        {**config, "draws": 1000, "tune": 1000, "chains": 4, "random_seed": seed,
         "target_accept": 0.99},
        model,
    )  # fmt: skip
    d = fit.diagnostics()
    cores = os.cpu_count() or 1
    return {
        "build_s": round(t1 - t0, 2),
        "compile_s": round(t2 - t1, 2),
        "sample_s": round(t3 - t2, 2),
        "total_s": round(t3 - t0, 2),
        "cpu_s": round(cpu3 - cpu0, 2),
        "build_cpu_s": round(cpu1 - cpu0, 2),
        "compile_cpu_s": round(cpu2 - cpu1, 2),
        "sample_cpu_s": round(cpu3 - cpu2, 2),
        "idle_estimate_s": round((cpu2 - cpu0) + (cpu3 - cpu2) / min(4, cores), 2),
        "divergences": d["divergences"],
        "r_hat_max": round(d["r_hat_max"], 4),
        "ess_bulk_min": round(d["ess_bulk_min"], 1),
        "ess_tail_min": round(d["ess_tail_min"], 1),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def _run_cold(argv: list[str], out: Path) -> dict:
    """Rerun this script in a child with empty PyTensor and numba caches; its result."""
    with tempfile.TemporaryDirectory(prefix="bayesjudge-bench-") as cache:
        flags = os.environ.get("PYTENSOR_FLAGS", "")
        env = {
            **os.environ,
            COLD_ENV: cache,
            "PYTENSOR_FLAGS": ",".join(f for f in (flags, f"base_compiledir={cache}") if f),
            "NUMBA_CACHE_DIR": str(Path(cache) / "numba-cache"),
        }
        subprocess.run([sys.executable, __file__, *argv], env=env, check=True)
    return json.loads(out.read_text(encoding="utf-8"))


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "categorical_fit.json"
    )
    parser.add_argument(
        "--cold",
        action="store_true",
        help="compile with empty PyTensor and numba caches (a fresh installation)",
    )
    parser.add_argument(
        "--engine",
        choices=["kernels", "graph"],
        default="kernels",
        help="the hand-written kernels (fit_categorical's route) or nutpie's compile of the "
        "PyMC graph",
    )
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    if args.cold and COLD_ENV not in os.environ:
        return _run_cold(argv, args.out)
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    import bayesjudge.models.categorical  # noqa: F401  (PyMC, PyTensor, nutpie: timed apart)

    imported = {
        "import_s": round(time.perf_counter() - t0, 2),
        "import_cpu_s": round(cpu_seconds() - cpu0, 2),
    }
    first = run(counts(), clear=True, seed=1, engine=args.engine)
    print("first fit (compile + sample):", first, flush=True)
    refit = run(counts(seed=2027), clear=False, seed=2, engine=args.engine)
    print("refit (cached compile):", refit, flush=True)
    result = {
        "benchmark": "categorical_fit",
        "model": "K = 3, 8 systems x 3 strata, calibration='hierarchical', 4 x (1000 + 1000)",
        "goal_seconds": GOAL_SECONDS,
        "engine": args.engine,
        "numba_cache": "cold" if args.cold else "warm",
        "import": imported,
        "first": first,
        "refit": refit,
        "meets_goal": bool(first["total_s"] < GOAL_SECONDS and first["divergences"] == 0),
        "meets_goal_idle_estimate": bool(
            first["idle_estimate_s"] < GOAL_SECONDS and first["divergences"] == 0
        ),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
    }
    atomic_write(args.out, json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
