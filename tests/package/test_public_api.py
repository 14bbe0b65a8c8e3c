"""The curated top level: at most 40 names, and every name that left it says where it went."""

import importlib
import json
import re
from pathlib import Path

import pytest

import bayesjudge as bj

ROOT = Path(__file__).resolve().parents[2]

# The names that left the top level (earlier versions exported all of them), and their home.
CORE = (
    "HUMAN_ONLY_Q_THRESHOLD",
    "exact_posterior",
    "EstimateInterval",
    "ExactPosterior",
    "ExactSummary",
    "Interval",
    "PPIEstimate",
    "adjusted_estimates",
    "allocation_report",
    "bootstrap_difference",
    "delta_method_variance",
    "exact_draws",
    "exact_marginals",
    "exact_theta_interval",
    "human_only_regime",
    "judge_beats_human_only",
    "lang_reiczigel_length",
    "variance_vs_human_only",
    "youden_difference",
    "naive_difference_bias",
    "pair_cells",
    "paired_bootstrap",
    "rg_difference_se",
    "shared_calibration_bias",
    "shared_calibration_shift",
)
SIMULATE = (
    "judge_quality",
    "simulate_count_arrays",
    "simulate_instability",
    "simulate_paired_items",
    "simulate_shift",
    "youden_pair",
)
REMOVED = {
    **dict.fromkeys(CORE, "bayesjudge.core"),
    **dict.fromkeys(SIMULATE, "bayesjudge.simulate"),
}
PAIRED = {
    "naive_difference_bias",
    "pair_cells",
    "paired_bootstrap",
    "rg_difference_se",
    "shared_calibration_bias",
    "shared_calibration_shift",
}


def test_the_top_level_is_at_most_40_names():
    assert len(bj.__all__) <= 40
    assert len(set(bj.__all__)) == len(bj.__all__)
    assert dir(bj) == sorted(bj.__all__)
    assert not set(bj.__all__) & set(REMOVED)


@pytest.mark.parametrize("name", bj.__all__)
def test_every_public_name_resolves(name):
    assert getattr(bj, name) is not None


def test_the_submodules_stay_reachable():
    assert bj.core.paired_bootstrap is importlib.import_module("bayesjudge.core").paired_bootstrap
    assert bj.simulate.simulate_shift.__name__ == "simulate_shift"
    assert bj.datasets.load_llmbar.__name__ == "load_llmbar"


@pytest.mark.parametrize("name", sorted(REMOVED))
def test_a_removed_name_says_where_it_went(name):
    home = REMOVED[name]
    message = f"bayesjudge.{name} moved: use {home}.{name} (from {home} import {name})"
    with pytest.raises(AttributeError, match=re.escape(message)):
        getattr(bj, name)
    assert not hasattr(bj, name)
    module = importlib.import_module(home)
    assert name in module.__all__
    assert getattr(module, name) is not None
    if name in PAIRED:  # documented under bayesjudge.core.paired
        paired = importlib.import_module("bayesjudge.core.paired")
        assert getattr(paired, name) is getattr(module, name)


def test_internal_bayesian_constants_are_not_served():
    for name in ("ESS_MIN", "RHAT_MAX", "nonexistent"):
        with pytest.raises(AttributeError, match=f"no attribute '{name}'"):
            getattr(bj, name)


def _texts():
    """(file, text) of the user-facing text and code: README, docs, notebooks, cards, tests."""
    paths = [ROOT / "README.md", ROOT / "notebooks" / "README.md"]
    paths += sorted((ROOT / "docs").glob("*.md"))
    paths += sorted((ROOT / "models").glob("*.md"))
    paths += sorted((ROOT / "tests").rglob("*.py"))
    paths += sorted((ROOT / "benchmarks").rglob("*.py"))
    paths += sorted((ROOT / "src" / "bayesjudge").rglob("*.py"))
    # This file and the facade (its doctest shows the error) name removed names on purpose.
    skip = {Path(__file__).resolve(), ROOT / "src" / "bayesjudge" / "__init__.py"}
    for path in paths:
        if path.resolve() not in skip:
            yield path, path.read_text(encoding="utf-8")
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        yield path, "\n".join("".join(cell["source"]) for cell in cells)


def _uses(text: str) -> list[str]:
    names = "|".join(REMOVED)
    found = re.findall(rf"\bbj\.(?:{names})\b", text)
    for block in re.findall(r"from bayesjudge import (\([^)]*\)|[^\n]*)", text):
        found += [f"from bayesjudge import {n}" for n in re.findall(r"\w+", block) if n in REMOVED]
    return found


def _prose_uses(text: str) -> list[str]:
    names = "|".join(REMOVED)
    # (the message of the AttributeError, "bayesjudge.NAME moved: …", may be quoted)
    return re.findall(rf"(?<![\w.])bayesjudge\.(?:{names})\b(?! moved)", text)


def test_no_removed_name_is_used_at_the_top_level():
    uses = []
    for path, text in _texts():
        found = _uses(text)
        if path.suffix in (".md", ".ipynb"):
            found += _prose_uses(text)  # {func}`bayesjudge.paired_bootstrap` and the like
        uses += [f"{path.relative_to(ROOT)}: {use}" for use in found]
    assert not uses, "\n".join(uses)


def test_the_scan_finds_top_level_uses():
    assert _uses(
        "x = bj.paired_bootstrap(1)\nfrom bayesjudge import (\n    naive,\n    pair_cells,\n)"
    )
    assert _uses("from bayesjudge import exact_marginals") == [
        "from bayesjudge import exact_marginals"
    ]
    assert not _uses("bj.core.paired_bootstrap(1)\nfrom bayesjudge.core import pair_cells")
    assert _prose_uses("see {func}`bayesjudge.allocation_report`")
    assert not _prose_uses("see {func}`bayesjudge.core.allocation_report`")
    assert not _prose_uses("AttributeError: bayesjudge.pair_cells moved: use …")
