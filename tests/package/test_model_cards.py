"""The model cards in models/ agree with the model registry, build_model and Priors().

Every card has machine-readable tables with fixed headers (Markdown, backticks ignored):

* ``| variable | dims | kind | meaning |`` — every variable of the PyMC model for the card's
  configuration, with its dims and its kind (free, deterministic, observed, data, potential).
  ``(dims not in pool_over)`` stands for the dims that ``pool_over`` leaves.
* ``| option | variable | dims | kind | meaning |`` (optional) — rows that replace or add to
  the variables table when an option is set (``judge_better_than_chance=True``, a known q,
  another ``aggregate``).
* ``| prior field | default | in the model |`` — the prior of every free variable, e.g.
  ``Priors.theta | (1, 1) | theta ~ Beta(1, 1)``: the default must equal ``Priors()``, the
  distribution and its parameters must be what ``build_model`` builds, and the field must be
  the one that controls that variable.

Only models are built (no sampling), so the whole file runs in a few seconds.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import bayesjudge as bj
from bayesjudge.models.build import MODELS

ROOT = Path(__file__).resolve().parents[2]
CARDS = ROOT / "models"
GUIDE = ROOT / "docs" / "bayesian.md"
DIMS = ("system", "stratum")

VARIABLES_HEADER = ("variable", "dims", "kind", "meaning")
OPTIONS_HEADER = ("option", "variable", "dims", "kind", "meaning")
DEFAULTS_HEADER = ("prior field", "default", "in the model")
KINDS = ("free", "deterministic", "observed", "data", "potential")
POOL_PLACEHOLDER = "(dims not in pool_over)"

# Options a card may name in its options table, and the build_model arguments they stand for.
OPTIONS = {
    "judge_better_than_chance=True": {"judge_better_than_chance": True},
    "priors=Priors(q0=0.9)": {"priors": bj.Priors(q0=0.9)},
    "priors=Priors(q1=0.9)": {"priors": bj.Priors(q1=0.9)},
    'aggregate="dirichlet"': {"aggregate": "dirichlet"},
    "aggregate={stratum: weight}": {"aggregate": {"easy": 1.0, "hard": 3.0}},
}

# The configurations each card describes: (build_model arguments, pool_over as a tuple of
# dims, arguments of the base model whose variables the card does not describe or None).
POOLS = [("system", "stratum"), ("system",), ("stratum",)]
CONFIGS = {
    "separate": [({"calibration": "separate", "aggregate": None}, (), None)],
    "shared": [
        ({"calibration": "shared", "pool_over": pool, "aggregate": None}, pool, None)
        for pool in POOLS
    ],
    "hierarchical": [
        ({"calibration": "hierarchical", "pool_over": pool, "aggregate": None}, pool, None)
        for pool in POOLS
    ],
    # The stratified card describes what aggregation adds to any calibration model.
    "stratified": [
        ({"calibration": cal, "aggregate": "test"}, (), {"calibration": cal, "aggregate": None})
        for cal in ("separate", "shared", "hierarchical")
    ],
}
# The configuration whose free variables the card's defaults table must cover.
DEFAULTS_CONFIG = {
    "separate": CONFIGS["separate"][0],
    "shared": CONFIGS["shared"][0],
    "hierarchical": CONFIGS["hierarchical"][0],
    "stratified": (
        {"calibration": "separate", "aggregate": "dirichlet"},
        (),
        {"calibration": "separate", "aggregate": None},
    ),
}

# Distribution names a card may use, the PyMC op class, and the op's parameters that the
# card's arguments stand for (HalfNormal(s) is PyMC's HalfNormal(loc=0, sigma=s)).
DISTRIBUTIONS = {
    "Beta": ("BetaRV", lambda params: params),
    "Normal": ("NormalRV", lambda params: params),
    "HalfNormal": ("HalfNormalRV", lambda params: params[1:]),
    "Dirichlet": ("DirichletRV", lambda params: params),
}


# ----------------------------------------------------------------------------- parsing


def _cells(line: str) -> tuple[str, ...]:
    return tuple(c.strip().replace("`", "") for c in line.strip().strip("|").split("|"))


def _tables(text: str) -> list[tuple[tuple[str, ...], list[tuple[str, ...]]]]:
    """Every Markdown table in ``text`` as (header, rows)."""
    tables, block = [], []
    for line in [*text.splitlines(), ""]:
        if line.lstrip().startswith("|"):
            block.append(line)
            continue
        if len(block) >= 2:
            header = _cells(block[0])
            assert set(block[1].replace("|", "").strip()) <= set("-: "), block[1]
            rows = [_cells(row) for row in block[2:]]
            for row in rows:
                assert len(row) == len(header), f"row {row} does not fit header {header}"
            tables.append((header, rows))
        block = []
    return tables


def _table(text: str, header: tuple[str, ...], *, required: bool = True):
    found = [rows for head, rows in _tables(text) if head == header]
    assert len(found) <= 1, f"more than one table with header {header}"
    if not found:
        assert not required, f"no table with header | {' | '.join(header)} |"
        return []
    assert found[0], f"table {header} is empty"
    return found[0]


def _dims(cell: str, pool: tuple[str, ...]) -> tuple[str, ...]:
    if cell == POOL_PLACEHOLDER:
        return tuple(d for d in DIMS if d not in pool)
    match = re.fullmatch(r"\(([a-z_, ]*)\)", cell)
    assert match, f"dims {cell!r} must look like (system, stratum), (stratum), () or "
    names = tuple(d.strip() for d in match.group(1).split(",") if d.strip())
    assert set(names) <= set(DIMS), f"unknown dims in {cell!r}"
    return names


def _card(name: str) -> str:
    return (CARDS / MODELS[name].card).read_text(encoding="utf-8")


# ----------------------------------------------------------------------------- models


@pytest.fixture(scope="module")
def counts():
    # 2 systems × 2 strata; any counts with calibration in every group will do.
    return bj.JudgeCounts.from_counts(
        n=[[120, 80], [100, 100]],
        k=[[70, 30], [60, 50]],
        m0=[[30, 20], [25, 25]],
        tn=[[24, 15], [20, 19]],
        m1=[[30, 20], [25, 25]],
        tp=[[27, 17], [22, 23]],
        system=["model-a", "model-b"],
        stratum=["easy", "hard"],
    )


def _model_variables(model) -> dict[str, tuple[tuple[str, ...], str]]:
    """name -> (dims, kind) for every named variable of a PyMC model."""
    groups = {
        "free": model.free_RVs,
        "observed": model.observed_RVs,
        "deterministic": model.deterministics,
        "potential": model.potentials,
        "data": model.data_vars,
    }
    out = {}
    for name, var in model.named_vars.items():
        kinds = [k for k, members in groups.items() if any(var is m for m in members)]
        assert len(kinds) == 1, f"{name}: kinds {kinds}"
        out[name] = (tuple(model.named_vars_to_dims.get(name) or ()), kinds[0])
    return out


def _build(counts, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every group has calibration: nothing to warn about
        return bj.build_model(counts, **kwargs)


def _documented(rows, pool) -> dict[str, tuple[tuple[str, ...], str]]:
    out = {}
    for variable, dims, kind, _meaning in rows:
        assert kind in KINDS, f"{variable}: kind {kind!r} is not one of {KINDS}"
        assert variable not in out, f"{variable} listed twice"
        out[variable] = (_dims(dims, pool), kind)
    return out


def _expected_and_actual(counts, card_name, config, pool, base, option_rows=()):
    """Documented and built variables of one configuration, less those of its base model."""
    rows = _table(_card(card_name), VARIABLES_HEADER)
    documented = _documented(rows, pool)
    documented.update(_documented(option_rows, pool))
    actual = _model_variables(_build(counts, **config))
    if base is not None:
        base_vars = _model_variables(_build(counts, **base))
        changed = {v: (base_vars[v], actual[v]) for v in base_vars if actual[v] != base_vars[v]}
        assert not changed, f"{card_name}: the option changes variables of the base model"
        actual = {v: d for v, d in actual.items() if v not in base_vars}
    return documented, actual


# ----------------------------------------------------------------------------- registry


def test_registry_names_a_card_file_for_every_model():
    assert set(MODELS) == {"separate", "shared", "hierarchical", "stratified", "paired"}
    for name, spec in MODELS.items():
        assert spec.name == name
        assert (CARDS / spec.card).is_file(), f"MODELS[{name!r}] names missing {spec.card}"


def test_index_links_every_card_with_its_registry_summary():
    index = (CARDS / "README.md").read_text(encoding="utf-8")
    lines = index.splitlines()
    for spec in [*MODELS.values(), None]:
        card = "misclassification.md" if spec is None else spec.card
        rows = [line for line in lines if f"]({card})" in line and line.startswith("|")]
        assert len(rows) == 1, f"models/README.md must link {card} in one table row"
        if spec is not None:
            assert spec.summary in rows[0], f"row of {card} must quote MODELS summary"
    linked = set(re.findall(r"\]\(([\w-]+\.md)\)", index))
    # misclassification.md is the shared generative story; exact.md is an engine, not a model.
    # Cards of models built outside build_model: the item-effect model (repeated verdicts) and
    # the K-category models with their structured confusions.
    others = {"item-effect.md", "categorical.md", "categorical-symmetric.md"}
    others |= {
        "categorical-ordinal.md",
        "misclassification.md",
        "exact.md",
        "jury.md",
        "jury-covariates.md",
        "categorical-jury.md",
    }
    assert linked == {s.card for s in MODELS.values()} | others


def test_docs_link_the_bayesian_guide_and_every_card():
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert "](bayesian.md)" in index
    guide = (ROOT / "docs" / "bayesian.md").read_text(encoding="utf-8")
    for spec in MODELS.values():
        assert f"](../models/{spec.card})" in guide, f"docs/bayesian.md must link {spec.card}"


def test_named_test_files_exist():
    # The validation sections name the test files that check each model; keep them real.
    for path in [*sorted(CARDS.glob("*.md")), GUIDE]:
        for named in re.findall(r"tests/[\w/]+\.py", path.read_text(encoding="utf-8")):
            assert (ROOT / named).is_file(), f"{path.name} names {named}, which does not exist"


# ----------------------------------------------------------------------------- variables


@pytest.mark.parametrize(
    ("card_name", "config", "pool", "base"),
    [(name, *c) for name, configs in CONFIGS.items() for c in configs],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_variables_table_matches_the_built_model(counts, card_name, config, pool, base):
    documented, actual = _expected_and_actual(counts, card_name, config, pool, base)
    assert documented == actual


def _option_cases():
    for name, configs in CONFIGS.items():
        rows = _table(_card(name), OPTIONS_HEADER, required=False)
        for option in dict.fromkeys(row[0] for row in rows):
            for config, pool, base in configs:
                yield name, option, [r[1:] for r in rows if r[0] == option], config, pool, base


@pytest.mark.parametrize(
    ("card_name", "option", "rows", "config", "pool", "base"), list(_option_cases())
)
def test_options_table_matches_the_built_model(counts, card_name, option, rows, config, pool, base):
    assert option in OPTIONS, f"{card_name}: unknown option {option!r}; known: {list(OPTIONS)}"
    config = {**config, **OPTIONS[option]}
    documented, actual = _expected_and_actual(counts, card_name, config, pool, base, rows)
    assert documented == actual


def test_cards_with_options_tables():
    # A card that loses its options table would silently drop those checks.
    with_options = {n for n in MODELS if _table(_card(n), OPTIONS_HEADER, required=False)}
    assert with_options == {"separate", "shared", "stratified"}


# ----------------------------------------------------------------------------- priors


def _distribution(cell: str):
    match = re.fullmatch(r"(\w+) ~ (\w+)\((.*)\)", cell)
    assert match, f"{cell!r} must read like 'theta ~ Beta(1, 1)'"
    variable, dist, args = match.groups()
    assert dist in DISTRIBUTIONS, f"{cell!r}: unknown distribution {dist}"
    values = ast.literal_eval(f"({args},)")
    return variable, dist, tuple(float(v) for v in values)


def _check_distribution(model, variable, dist, args):
    var = model[variable]
    op_name, select = DISTRIBUTIONS[dist]
    assert type(var.owner.op).__name__ == op_name, f"{variable} is {var.owner.op}, not {dist}"
    params = [np.asarray(p.eval()) for p in var.owner.op.dist_params(var.owner)]
    if dist == "HalfNormal":
        assert np.all(params[0] == 0), f"{variable}: HalfNormal with loc {params[0]}"
    chosen = select(params)
    assert len(chosen) == len(args), f"{variable}: {len(chosen)} parameters, card gives {args}"
    for param, arg in zip(chosen, args, strict=True):
        np.testing.assert_allclose(param, arg, rtol=1e-6, err_msg=f"{variable} ~ {dist}{args}")


def _perturbed(value):
    """Another valid value of a Priors field, to check which variable the field controls."""
    if isinstance(value, tuple):
        return (value[0] + 1.5, value[1] + 0.5)
    return value * 2.5


# The paired card's tables need counts with a joint verdict table and the dims cell/pattern;
# tests/models/test_paired_model.py::test_model_card_tables_match_the_built_model checks them.
@pytest.mark.parametrize("card_name", [name for name in MODELS if name != "paired"])
def test_defaults_table_matches_priors_and_model(counts, card_name):
    config, _pool, base = DEFAULTS_CONFIG[card_name]
    rows = _table(_card(card_name), DEFAULTS_HEADER)
    model = _build(counts, **config)
    defaults = bj.Priors()
    field_names = {f.name for f in dataclasses.fields(bj.Priors)}
    seen = []
    for field, default, prior in rows:
        variable, dist, args = _distribution(prior)
        seen.append(variable)
        _check_distribution(model, variable, dist, args)
        if field == "—":
            assert default == "—", f"{variable}: no Priors field, so no default"
            continue
        name = field.removeprefix("Priors.")
        assert field.startswith("Priors.") and name in field_names, f"unknown field {field}"
        value = getattr(defaults, name)
        assert ast.literal_eval(default) == value, f"{field}: card {default}, code {value!r}"
        # The field controls this variable: change it and the distribution follows.
        changed = _perturbed(value)
        other = _build(counts, **config, priors=bj.Priors(**{name: changed}))
        _check_distribution(other, variable, dist, np.ravel(changed).tolist())
    free = {v for v, (_d, kind) in _model_variables(model).items() if kind == "free"}
    if base is not None:
        free -= {v for v, (_d, k) in _model_variables(_build(counts, **base)).items()}
    assert sorted(seen) == sorted(free), "the defaults table must give every free variable"


def test_every_prior_field_is_documented():
    documented = set()
    for name in MODELS:
        for field, _default, _prior in _table(_card(name), DEFAULTS_HEADER):
            documented.add(field.removeprefix("Priors."))
    fields = {f.name for f in dataclasses.fields(bj.Priors)}
    assert fields <= documented, f"Priors fields without a card: {sorted(fields - documented)}"


# ----------------------------------------------------------------------------- self-checks


def test_table_parser_reads_what_it_should():
    text = "\n".join(
        [
            "| variable | dims | kind | meaning |",
            "|---|---|---|---|",
            "| `theta` | `(system, stratum)` | free | θ |",
            "| `q0` | `(dims not in pool_over)` | free | q0 |",
            "",
            "| prior field | default | in the model |",
            "|---|---|---|",
            "| `Priors.theta` | `(1, 1)` | `theta ~ Beta(1, 1)` |",
        ]
    )
    rows = _table(text, VARIABLES_HEADER)
    assert _documented(rows, ("system",)) == {
        "theta": (("system", "stratum"), "free"),
        "q0": (("stratum",), "free"),
    }
    assert _table(text, DEFAULTS_HEADER) == [("Priors.theta", "(1, 1)", "theta ~ Beta(1, 1)")]
    assert _distribution("theta ~ Beta(1, 1)") == ("theta", "Beta", (1.0, 1.0))
    assert _distribution("s ~ HalfNormal(1)") == ("s", "HalfNormal", (1.0,))
    with pytest.raises(AssertionError):
        _dims("(system, judge)", ())


def test_a_drifted_card_fails(counts):
    # The comparison has teeth: a wrong dim, kind or prior parameter is caught.
    model = _build(counts, calibration="separate", aggregate=None)
    built = _model_variables(model)
    wrong = _documented(
        [
            (v, "(system)" if v == "theta" else f"({', '.join(d)})", k, "")
            for v, (d, k) in built.items()
        ],
        (),
    )
    assert wrong != built
    with pytest.raises(AssertionError):
        _check_distribution(model, "theta", "Beta", (1.0, 2.0))
    with pytest.raises(AssertionError):
        _check_distribution(model, "theta", "Normal", (1.0, 1.0))


# ----------------------------------------------------------------------------- user guide

# Reruns on one machine reproduce the guide's numbers exactly (seeded nutpie). Elsewhere they
# may differ by Monte Carlo error between two runs, at most about 4·√2·MCSE: for P(a > b) with
# ESS ≈ 1000, MCSE ≤ √(0.25 / 1000) = 0.016, so 0.09; quantiles of θ have MCSE ≤ 0.01.
GUIDE_TOLERANCE = 0.09
_NUMBER = re.compile(r"-?\d+\.\d+")


def _guide_blocks() -> list[tuple[str, str | None]]:
    """(python code, expected output or None) in the order of the guide."""
    blocks = re.findall(r"```(python|text)\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.S)
    out = []
    for i, (lang, body) in enumerate(blocks):
        if lang == "python":
            following = blocks[i + 1] if i + 1 < len(blocks) else None
            out.append((body, following[1] if following and following[0] == "text" else None))
    return out


def _same_output(shown: str, printed: str) -> bool:
    shown_lines, printed_lines = shown.strip("\n").splitlines(), printed.strip("\n").splitlines()
    if len(shown_lines) != len(printed_lines):
        return False
    for a, b in zip(shown_lines, printed_lines, strict=True):
        if _NUMBER.sub("#", a).rstrip() != _NUMBER.sub("#", b).rstrip():
            return False
        for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b), strict=True):
            if abs(float(x) - float(y)) > GUIDE_TOLERANCE:
                return False
    return True


def test_guide_output_comparison_has_teeth():
    assert _same_output("theta a 0.65 [0.54, 0.79]", "theta a 0.66 [0.54, 0.80]\n")
    assert not _same_output("theta a 0.65 [0.54, 0.79]", "theta b 0.65 [0.54, 0.79]")
    assert not _same_output("theta a 0.65 [0.54, 0.79]", "theta a 0.35 [0.54, 0.79]")
    assert not _same_output("4×1000 seed=1", "4×500 seed=1")
    assert len(_guide_blocks()) >= 6


@pytest.mark.slow
def test_bayesian_guide_runs_and_prints_what_it_shows(capsys):
    namespace: dict = {}
    for code, shown in _guide_blocks():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", bj.BayesJudgeWarning)
            exec(compile(code, str(GUIDE), "exec"), namespace)
        printed = capsys.readouterr().out
        raised = [
            f"{type(w.message).__name__}: {w.message}"
            for w in caught
            if isinstance(w.message, bj.BayesJudgeWarning)
        ]
        lines = (shown or "").splitlines()
        expected = [line for line in lines if re.match(r"\w+Warning: ", line)]
        assert len(raised) == len(expected), f"warnings {raised}, guide shows {expected}"
        for got, want in zip(raised, expected, strict=True):
            assert got.startswith(want), f"{got!r} does not start with {want!r}"
        output = "\n".join(line for line in lines if line not in expected)
        assert _same_output(output, printed), (
            f"guide shows\n{output}\nbut the code prints\n{printed}"
        )
