"""Run every study at its full (default) size and record the results with their timing.

Run as ``python benchmarks/studies/run_all.py [--only NAME ...] [--set NAME.KEY=VALUE ...]``
(``make studies``). For each study this writes ``results/<name>/`` (tidy CSV, netCDF, settings
JSON, figure PNG and ``timing.json``) and then rebuilds ``results/README.md``, the index of all
recorded runs with their sizes, wall and CPU time and the machine's load. CI runs the same
studies at reduced size in ``make test`` and at full size in the ``slow`` tests; this script is
what produced the committed figures quoted in ``docs/studies.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from bayesjudge.studies import STUDIES, run_study

RESULTS = Path(__file__).parent / "results"
# The llmbar study reads the LLMBar tables shipped with the package (bayesjudge/_datasets), or
# another copy from $BAYESJUDGE_DATA or --set llmbar.path=DIR when given.


def _value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _overrides(pairs: list[str]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        name, dot, option = key.partition(".")
        if not sep or not dot or name not in STUDIES:
            raise SystemExit(f"--set takes NAME.KEY=VALUE with NAME in {sorted(STUDIES)}: {pair!r}")
        out.setdefault(name, {})[option] = _value(value)
    return out


def run_one(name: str, options: dict) -> dict:
    load_before = os.getloadavg()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    result = run_study(name, progress=True, **options)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    out = RESULTS / name
    result.save(out)
    record = {
        "study": name,
        "options": options,
        "reps": result.settings["reps"],
        "random_seed": result.settings["random_seed"],
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "date": time.strftime("%Y-%m-%d"),
    }
    (out / "timing.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def write_index() -> None:
    lines = [
        "# Recorded full-size study runs",
        "",
        "Written by `python benchmarks/studies/run_all.py` (`make studies`). Each folder holds",
        "the tidy table (`.csv`, `.nc`), the settings (`.json`), the figure (`.png`) and",
        "`timing.json`.",
        "",
        "| study | reps | seed | options | wall [s] | CPU [s] | load before | date |",
        "|---|---:|---:|---|---:|---:|---:|---|",
    ]
    for name in STUDIES:
        path = RESULTS / name / "timing.json"
        if not path.exists():
            continue
        r = json.loads(path.read_text())
        options = ", ".join(f"{k}={v}" for k, v in r["options"].items()) or "defaults"
        lines.append(
            f"| [{name}]({name}/{name.replace('-', '_')}.png) | {r['reps']:,} | "
            f"{r['random_seed']} | {options} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | "
            f"{r['load_average_before'][0]:.2f} | {r['date']} |"
        )
    (RESULTS / "README.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=sorted(STUDIES), default=list(STUDIES))
    parser.add_argument("--set", nargs="*", default=[], metavar="NAME.KEY=VALUE")
    args = parser.parse_args()
    overrides = _overrides(args.set)
    for name in args.only:
        record = run_one(name, overrides.get(name, {}))
        print(f"{name}: {record['wall_s']:.1f} s wall, {record['cpu_s']:.1f} s CPU")
    write_index()


if __name__ == "__main__":
    main()
