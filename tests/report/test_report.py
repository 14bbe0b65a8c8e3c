"""Tests of the evaluation report (``bayesjudge.report``) and ``bayesjudge report``.

Every number in the report is checked against the function that computes it, called here with
the same counts and options (``bj.estimate``, ``bj.youden``, ``Fit.summary``, ``Fit.compare``,
``bayesjudge.compare.compare``, ``bayesjudge.diagnostics``): the report must copy, not recompute
differently. The Bayesian fits use ``method="exact"`` (no MCMC, no numba compile), so the file
runs in seconds. The HTML page is parsed with :mod:`html.parser`; it is opened in a real
browser by ``tests/report/test_report_browser.py``.
"""

import base64
import itertools
import re
import warnings
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import bayesjudge as bj
import bayesjudge.report.document as report_document
import bayesjudge.report.tables as report_tables
from bayesjudge._text import markdown_escape
from bayesjudge.cli import main
from bayesjudge.report import SECTIONS, Report, build_report, write_report

PNG = b"\x89PNG\r\n\x1a\n"
SEED = 7


@pytest.fixture(scope="module")
def counts():
    """Two systems with clearly different accuracy; a good judge; own calibration each."""
    return bj.simulate_counts(
        [0.55, 0.8], 0.85, 0.9, n=1000, m0=200, m1=200, system=["a", "b"], random_seed=3
    )


@pytest.fixture(scope="module")
def fitted(counts):
    return bj.fit(counts, method="exact", random_seed=SEED)


@pytest.fixture(scope="module")
def report(fitted):
    return build_report(fit=fitted, random_seed=SEED, n_resamples=2000)


@pytest.fixture(scope="module")
def closed_only(counts):
    return build_report(counts, random_seed=SEED, n_resamples=2000)


def _interval(est, lo, hi) -> str:
    return f"{est:.3f} [{lo:.3f}, {hi:.3f}]"


# ----------------------------------------------------------------------------- content


def test_markdown_has_every_checklist_section_in_order(report):
    md = report.to_markdown()
    headings = re.findall(r"^## (.+)$", md, flags=re.M)
    assert headings == list(SECTIONS.values())
    # Fiedler Sec. 7 items 1-7 and Lee et al.: each stated in words.
    for phrase in (
        "θ, the true accuracy",  # 1. estimand
        "All θ estimates below are corrected",  # 1. corrected
        "compares them",  # 2. single-system estimation vs comparison
        "System-specific calibration",  # 3. calibration design
        "human-labelled calibration items in all",  # 3. calibration size
        "test-set sampling (n) and calibration sampling (m0, m1)",  # 4. randomness
        "calibration sampling only",  # 4. randomness of q0, q1, J
        "equal-tailed credible intervals",  # 4. Bayesian
        "J = q0 + q1 − 1",  # 5. judge quality
        "ΔJ = J_a − J_b",  # 6. ΔJ for comparisons
        "bayesjudge version",  # reproducibility
    ):
        assert phrase in md, phrase
    for name in ("counts", "theta", "judge", "theta_difference", "youden_difference", "ppc"):
        assert name in report.tables
    assert set(report.figures) == {"theta_forest", "judge", "theta_difference", "ppc"}


def test_theta_numbers_match_estimate(report, counts):
    for method, col in (("lang-reiczigel", "corrected"), ("naive", "naive")):
        ref = bj.estimate(counts, method=method, alpha=0.05)
        table = report.tables["theta"].set_index("system")
        for system in counts.systems:
            r = ref.sel(system=system, stratum="all")
            lo, hi = r["ci"].values
            assert table.loc[system, col] == float(r["estimate"])
            assert table.loc[system, f"{col}_lower"] == lo
            assert table.loc[system, f"{col}_upper"] == hi
            assert _interval(float(r["estimate"]), lo, hi) in report.to_markdown()


def test_bayesian_numbers_match_fit(report, fitted):
    summary = fitted.summary(ci_prob=0.95).set_index(["variable", "system"])
    theta = report.tables["theta"].set_index("system")
    judge = report.tables["judge"]
    judge = judge[judge["method"] == "Bayesian"].set_index("system")
    md = report.to_markdown()
    for system in fitted.counts.systems:
        s = summary.loc[("theta", system)]
        assert theta.loc[system, "bayes"] == s["mean"]
        assert theta.loc[system, "bayes_lower"] == s["eti_lower"]
        assert theta.loc[system, "bayes_upper"] == s["eti_upper"]
        assert _interval(s["mean"], s["eti_lower"], s["eti_upper"]) in md
        for col, var in (("q0", "q0"), ("q1", "q1"), ("J", "youden")):
            s = summary.loc[(var, system)]
            assert judge.loc[system, col] == s["mean"]
            assert (judge.loc[system, f"{col}_lower"], judge.loc[system, f"{col}_upper"]) == (
                s["eti_lower"],
                s["eti_upper"],
            )
    comp = fitted.compare(var="theta", ci_prob=0.95).sel(pair="a - b", stratum="all")
    row = report.tables["theta_difference"].iloc[0]
    assert row["bayes_difference"] == float(comp["mean"])
    assert row["bayes_difference_lower"] == float(comp["ci"].sel(ci_bound="lower"))
    assert row["prob_greater"] == float(comp["prob_greater"])
    dj = fitted.compare(var="youden", ci_prob=0.95).sel(pair="a - b", stratum="all")
    assert report.tables["youden_difference"].iloc[0]["bayes_youden"] == float(dj["mean"])


def test_closed_form_judge_numbers(report, counts, fitted):
    ds = counts.dataset
    judge = report.tables["judge"]
    judge = judge[judge["method"] == "closed form"].set_index("system")
    c = {f: ds[f].values[:, 0] for f in ("tn", "m0", "tp", "m1")}
    for i, system in enumerate(counts.systems):
        q0 = bj.naive(c["tn"][i], c["m0"][i], alpha=0.05, method="wilson")
        q1 = bj.naive(c["tp"][i], c["m1"][i], alpha=0.05, method="wilson")
        j = bj.youden(c["tn"][i], c["m0"][i], c["tp"][i], c["m1"][i], method="newcombe")
        for col, ref in (("q0", q0), ("q1", q1), ("J", j)):
            got = judge.loc[system, [col, f"{col}_lower", f"{col}_upper"]].to_numpy(float)
            np.testing.assert_array_equal(got, np.asarray(ref, dtype=float))
    d = bj.core.youden_difference(
        *(c[f][0] for f in ("tn", "m0", "tp", "m1")),
        *(c[f][1] for f in ("tn", "m0", "tp", "m1")),
        method="newcombe",
    )
    row = report.tables["youden_difference"].iloc[0]
    got = row[["closed_form", "closed_form_lower", "closed_form_upper"]].to_numpy(float)
    np.testing.assert_array_equal(got, np.asarray(d, dtype=float))
    # The bootstrap ΔJ and the App. C bias come from judge_diagnostics with the report's seed.
    from bayesjudge.diagnostics import judge_diagnostics

    ref = judge_diagnostics(counts, fitted, alpha=0.05, random_seed=SEED)
    ref = ref.sel(pair="a - b", stratum="all")
    assert row["bootstrap_lower"] == float(ref["delta_youden_bootstrap_ci"].sel(ci_bound="lower"))
    assert row["shared_bias"] == float(ref["shared_bias"])


def test_frequentist_comparison_is_bayesjudge_compare(report, counts):
    from bayesjudge.compare import compare

    ref = compare(counts, method="bootstrap", calibration="separate", alpha=0.05,
                  n_resamples=2000, random_seed=SEED).sel(pair="a - b", stratum="all")  # fmt: skip
    row = report.tables["theta_difference"].iloc[0]
    assert row["frequentist"] == float(ref["estimate"])
    assert row["frequentist_lower"] == float(ref["ci"].sel(ci_bound="lower"))
    assert row["frequentist_upper"] == float(ref["ci"].sel(ci_bound="upper"))


def test_report_passes_its_options_to_compare(counts, monkeypatch):
    """Plumbing: the report calls compare with its design, seed and resamples, and copies it."""
    calls = []

    def fake_compare(counts, **options):
        calls.append(options)
        return xr.Dataset(
            {
                "estimate": (("pair", "stratum"), [[0.125]]),
                "ci": (("pair", "stratum", "ci_bound"), [[[0.0625, 0.1875]]]),
            },
            coords={
                "pair": ["a - b"],
                "first": ("pair", ["a"]),
                "second": ("pair", ["b"]),
                "stratum": ["all"],
                "ci_bound": ["lower", "upper"],
            },
            attrs={"paired": False},
        )

    monkeypatch.setattr(report_tables, "compare", fake_compare)
    shared = counts.with_calibration_from(counts.sel(system="a").pool("system"))
    r = build_report(shared, random_seed=123, n_resamples=500, comparison_method="delta")
    assert calls == [
        {
            "method": "delta",
            "calibration": "shared",
            "alpha": 0.05,
            "n_resamples": 500,
            "random_seed": 123,
        }
    ]
    row = r.tables["theta_difference"].iloc[0]
    assert (row["frequentist"], row["frequentist_lower"], row["frequentist_upper"]) == (
        0.125,
        0.0625,
        0.1875,
    )
    assert "0.125 [0.062, 0.188]" in r.to_markdown()


def test_without_fit_says_bayesian_parts_not_run(closed_only, report):
    md = closed_only.to_markdown()
    assert "Bayesian parts were not run" in md
    assert "bayes" not in closed_only.tables["theta"]
    assert set(closed_only.figures) == {"theta_forest", "judge", "theta_difference"}
    assert closed_only.settings["Bayesian fit"] == "not run"
    # The closed-form numbers do not depend on the fit.
    cols = ["corrected", "corrected_lower", "corrected_upper"]
    np.testing.assert_array_equal(
        closed_only.tables["theta"][cols].to_numpy(), report.tables["theta"][cols].to_numpy()
    )


def test_reproducibility_block(report, fitted):
    s = report.settings
    assert s["bayesjudge version"] == bj.__version__
    assert s["report random_seed"] == SEED
    assert s["fit random_seed"] == SEED
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", s["date (UTC)"])
    assert "method='exact'" in s["Bayesian fit"]
    md = report.to_markdown()
    assert f"| report random_seed | {SEED} |" in md


def test_seed_is_drawn_and_reported_when_none(counts):
    r = build_report(counts, n_resamples=1000)
    seed = r.settings["report random_seed"]
    assert isinstance(seed, int)
    again = build_report(counts, n_resamples=1000, random_seed=seed)
    assert again.tables["youden_difference"].equals(r.tables["youden_difference"])


# ----------------------------------------------------------------------------- designs


def test_shared_calibration_design_is_stated_and_dj_not_estimated(counts):
    shared = counts.with_calibration_from(counts.sel(system="a").pool("system"))
    r = build_report(shared, random_seed=SEED, n_resamples=1000)
    md = r.to_markdown()
    assert "**Shared calibration**" in md
    assert "ΔJ cannot be estimated" in md
    assert "youden_difference" not in r.tables
    assert "calibration='shared'" in r.settings["frequentist comparison"]


def test_several_strata_and_theta_total():
    counts = bj.simulate_counts(
        [[0.5, 0.7], [0.75, 0.9]], 0.85, 0.9, n=600, m0=150, m1=150,
        system=["a", "b"], stratum=["x", "y"], random_seed=5,
    )  # fmt: skip
    result = bj.fit(counts, method="exact", random_seed=1)
    r = build_report(fit=result, random_seed=2, n_resamples=1000)
    assert list(r.tables["theta"]["stratum"]) == ["x", "y", "x", "y"]
    total = result.summary(ci_prob=0.95, var_names=["theta_total"]).set_index("system")
    np.testing.assert_array_equal(r.tables["theta_total"]["bayes"], total["mean"])
    diff = r.tables["theta_difference"]
    assert list(diff["stratum"]) == ["x", "y", "all strata (θ_total)"]
    assert diff["frequentist"].iloc[:2].notna().all() and np.isnan(diff["frequentist"].iloc[2])


def test_low_judge_quality_is_reported_and_warned():
    counts = bj.JudgeCounts.from_counts(n=1000, k=520, m0=100, tn=58, m1=100, tp=60)
    with pytest.warns(bj.LowJudgeQualityWarning) as caught:
        r = build_report(counts, random_seed=SEED)
    codes = list(r.tables["diagnoses"]["code"])
    assert "low_j" in codes
    # One low-J record (check_comparison's); estimate's own low-J warning is not repeated.
    assert codes.count("low_j") + codes.count("LowJudgeQualityWarning") == 1
    message = r.diagnoses[codes.index("low_j")].message
    assert markdown_escape(message) in r.to_markdown()  # names in it are data, escaped
    assert any(str(w.message) == message for w in caught)


def test_warn_false_emits_nothing_but_records():
    counts = bj.JudgeCounts.from_counts(n=1000, k=520, m0=100, tn=58, m1=100, tp=60)
    r = build_report(counts, random_seed=SEED, warn=False)  # would error if it warned
    assert "low_j" in list(r.tables["diagnoses"]["code"])


def test_bad_arguments():
    with pytest.raises(ValueError, match="needs data"):
        build_report()
    no_cal = bj.JudgeCounts.from_counts(n=100, k=50)
    with pytest.raises(ValueError, match="no calibration items"):
        build_report(no_cal)


def test_counts_must_match_fit(fitted):
    other = bj.JudgeCounts.from_counts(
        n=[10, 10], k=[5, 5], m0=[5, 5], tn=[4, 4], m1=[5, 5], tp=[4, 4], system=["a", "b"]
    )
    with pytest.raises(ValueError, match=r"differ from fit\.counts"):
        build_report(other, fit=fitted)


# ----------------------------------------------------------------------------- HTML and files


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_html_is_self_contained(report):
    page = report.to_html()
    parser = _Collector()
    parser.feed(page)
    parser.close()
    tags = parser.tags
    assert not [a for _, a in tags if "href" in a]
    images = [a for t, a in tags if t == "img"]
    assert len(images) == len(report.figures)
    for attrs in images:
        src = attrs["src"]
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1], validate=True).startswith(PNG)
    assert not [a for t, a in tags if t != "img" and "src" in a]
    assert not [t for t, _ in tags if t in ("script", "link", "iframe")]
    n_tables = sum(b[0] == "table" for s in report.sections for b in s.blocks)
    assert sum(t == "table" for t, _ in tags) == n_tables
    assert [a["id"] for t, a in tags if t == "section"] == list(SECTIONS)


def test_save_and_write_report(tmp_path, fitted, report):
    paths = report.save(tmp_path / "out")
    md = paths["markdown"].read_text(encoding="utf-8")
    for link in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md):
        assert (paths["markdown"].parent / link).read_bytes().startswith(PNG)
    assert paths["html"].read_text(encoding="utf-8") == report.to_html()
    written = write_report(fitted, tmp_path / "w", random_seed=SEED, n_resamples=2000, ppc=False)
    assert isinstance(written, Report)
    assert sorted(p.name for p in written.paths.values()) == sorted(
        ["report.md", "report.html", "theta_forest.png", "judge.png", "theta_difference.png"]
    )
    assert write_report(fitted.counts, None, random_seed=SEED, n_resamples=1000).paths == {}
    with pytest.raises(TypeError, match="Fit or JudgeCounts"):
        write_report("counts.csv")


# ----------------------------------------------------------------------------- CLI


@pytest.fixture(scope="module")
def sheets(tmp_path_factory):
    """Paired test items of three systems (one item column) and per-system calibration."""
    systems = ["s1", "s2", "s3"]
    theta = [0.5, 0.7, 0.85]
    test = bj.simulate.simulate_paired_items(
        theta, 0.85, 0.9, n=500, correlation=0.3, system=systems, random_seed=11
    )
    _, calibration = bj.simulate_items(
        theta, 0.85, 0.9, n=1, m0=150, m1=150, system=systems, random_seed=12
    )
    folder = tmp_path_factory.mktemp("report_cli")
    test.drop(columns="truth").to_csv(folder / "test.csv", index=False)
    calibration.to_csv(folder / "cal.csv", index=False)
    return folder


def test_cli_report_end_to_end(sheets, capsys, run_cli):
    out_dir = sheets / "out"
    code, out, err = run_cli(
        ["report", "--test", str(sheets / "test.csv"), "--calibration", str(sheets / "cal.csv"),
         "--system", "system", "--item", "item", "--out", str(out_dir), "--seed", "5",
         "--n-resamples", "1000", "--method", "exact"])  # fmt: skip
    assert code == 0, err
    assert f"wrote {out_dir / 'report.md'}" in out
    assert f"wrote {out_dir / 'report.html'}" in out
    md = (out_dir / "report.md").read_text(encoding="utf-8")
    assert "**Paired design**" in md and "500 items answered by every system" in md
    assert "The Bayesian model is **unpaired**" in md  # --method exact fits the unpaired model
    assert "| frequentist comparison paired | True |" in md
    assert "3 systems × 1 stratum" in out
    counts = bj.JudgeCounts.from_frames(
        str(sheets / "test.csv"),
        str(sheets / "cal.csv"),
        system="system",
        item="item",
    )
    ref = bj.estimate(counts)
    for system in counts.systems:
        r = ref.sel(system=system, stratum="all")
        assert _interval(float(r["estimate"]), *r["ci"].values) in md
    result = bj.fit(counts, method="exact", random_seed=5, paired=False)
    theta = result.summary(ci_prob=0.95, var_names=["theta"])
    for _, s in theta.iterrows():
        assert _interval(s["mean"], s["eti_lower"], s["eti_upper"]) in md
    assert (out_dir / "ppc.png").read_bytes().startswith(PNG)


def test_cli_report_without_bayes(sheets, capsys, run_cli):
    out_dir = sheets / "none"
    code, _, err = run_cli(
        ["report", "--test", str(sheets / "test.csv"), "--calibration", str(sheets / "cal.csv"),
         "--system", "system", "--out", str(out_dir), "--method", "none", "--seed", "1",
         "--n-resamples", "200", "--ci-prob", "0.9"])  # fmt: skip
    assert code == 0, err
    md = (out_dir / "report.md").read_text(encoding="utf-8")
    assert "Bayesian parts were not run" in md
    assert "**Unpaired design**" in md
    assert "Every interval has probability 90%." in md
    assert not (out_dir / "ppc.png").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--system", "model"], "model"),
        (
            ["--system", "system", "--calibration-design", "shared", "--method", "exact"],
            "--method exact",
        ),
        (["--system", "system", "--no-such-option"], "unrecognized arguments"),
    ],
)
def test_cli_report_bad_input(sheets, capsys, extra, message):
    args = ["report", "--test", str(sheets / "test.csv"), "--calibration",
            str(sheets / "cal.csv"), "--out", str(sheets / "bad"), *extra]  # fmt: skip
    try:
        code = main(args)
    except SystemExit as exit_:
        code = exit_.code
    _, err = capsys.readouterr()
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bayesjudge: error:"), err
    assert message in lines[0]
    assert "Traceback" not in err


def test_cli_report_needs_calibration(sheets, capsys, run_cli):
    code, _, err = run_cli(["report", "--test", str(sheets / "test.csv")])
    assert code == 2
    assert err.startswith("bayesjudge: error: --calibration is required")


# ----------------------------------------------------------------------------- review (R2)


def test_estimand_is_the_population_accuracy_and_j_below_0_is_worse_than_chance(report):
    md = report.to_markdown()
    # The intervals carry test-set sampling, so θ is the accuracy on the population the test
    # items were drawn from, not the share in this test set.
    assert "population the test items were sampled from" in md
    assert "J < 0 one that is worse" in md
    assert "J ≤ 0 is a judge no better than chance" not in md


def test_probabilities_that_round_to_1_are_shown_as_bounds():
    """P = 0.9996 was printed as 1.000 in the table and the figure; it is > 0.999."""
    import pandas as pd

    from bayesjudge.plots import plot_differences
    from bayesjudge.report.document import _display

    frame = pd.DataFrame({"pair": ["a - b"] * 4, "prob_greater": [0.9996, 0.0004, 0.5, np.nan]})
    assert _display(frame)["P(a > b)"].tolist() == ["> 0.999", "< 0.001", "0.500", "—"]
    rows = pd.DataFrame({"pair": ["a - b", "a - c"], "stratum": "all", "method": "Bayesian",
                         "estimate": [0.1, -0.1], "lower": [0.05, -0.2], "upper": [0.2, 0.0],
                         "prob_greater": [0.9996, 0.0004]})  # fmt: skip
    axes = plot_differences(rows)
    assert [t.get_text() for t in axes[0].texts] == ["P > 0.999", "P < 0.001"]


def test_each_method_s_probability_is_written_with_its_name():
    """With several designs in one plot, every pair showed the first design's P only."""
    import pandas as pd

    from bayesjudge.plots import plot_differences

    rows = pd.DataFrame({"pair": ["a - b"] * 3, "stratum": "all",
                         "method": ["separate", "shared", "naive"],
                         "estimate": [0.1, -0.05, 0.0], "lower": [0.05, -0.1, -0.1],
                         "upper": [0.2, 0.0, 0.1],
                         "prob_greater": [0.9996, 0.02, np.nan]})  # fmt: skip
    axes = plot_differences(rows)
    assert [t.get_text() for t in axes[0].texts] == ["P > 0.999 (separate); P = 0.020 (shared)"]


def test_methods_without_a_fixed_style_differ_in_marker_and_colour():
    import pandas as pd

    from bayesjudge.plots import plot_differences

    designs = ["separate", "shared", "hierarchical"]
    rows = pd.DataFrame({"pair": "a - b", "stratum": "all", "method": designs,
                         "estimate": [0.1, 0.0, 0.05], "lower": [0.0, -0.1, -0.05],
                         "upper": [0.2, 0.1, 0.15]})  # fmt: skip
    axes = plot_differences(rows)
    points = [line for line in axes[0].lines if line.get_label() in designs]
    assert [line.get_label() for line in points] == designs
    assert len({line.get_marker() for line in points}) == 3
    assert len({line.get_color() for line in points}) == 3


def test_without_fit_the_comparison_captions_claim_no_posterior(closed_only):
    s = closed_only.section("comparisons")
    captions = " ".join(b[2] for b in s.blocks if b[0] in ("table", "figure"))
    assert "posterior" not in captions
    assert "no Bayesian fit, so no P(θ_a > θ_b)" in captions


def test_exact_fit_settings_and_ppc_text(report):
    assert report.settings["sampler"] == "exact posterior, 4 × 1000 independent draws"
    checks = report.to_markdown().split("## 8.")[1]
    assert "cannot detect misfit" in checks  # separate calibration: every group saturated


def _eight_systems_with_near_ties():
    # θ 0.02 apart: most of the 28 closed-form Δθ intervals end near 0.
    theta = 0.55 + 0.02 * np.arange(8)
    return bj.simulate_counts(theta, 0.85, 0.9, n=800, m0=150, m1=150,
                              system=[f"model-{i}" for i in range(8)], random_seed=4)  # fmt: skip


def test_many_warnings_of_one_kind_are_one_bullet_and_a_table():
    counts = _eight_systems_with_near_ties()
    r = build_report(counts, random_seed=SEED, n_resamples=1000, warn=False)
    near = [d for d in r.diagnoses if d.code == "near_tie"]
    assert len(near) > 3  # 28 pairs: the point of the test
    s = r.section("warnings")
    # An item is the report's markup and the message (user data, escaped when rendered).
    bullets = ["".join(item) for b in s.blocks if b[0] == "list" for item in b[1]]
    assert sum("`near_tie`" in item for item in bullets) == 1
    assert f"({len(near)} cases" in " ".join(bullets)
    table = r.tables["warnings_near_tie"]
    assert len(table) == len(near)
    for d, (_, row) in zip(near, table.iterrows(), strict=True):
        assert (row["system or pair"], row["stratum"]) == (d.system, d.stratum)
        assert (row["delta_theta"], row["delta_theta_lower"], row["delta_theta_upper"]) == (
            d.values["delta_theta"], d.values["lower"], d.values["upper"])  # fmt: skip
    md = r.to_markdown()
    d = near[-1]
    cell = _interval(d.values["delta_theta"], d.values["lower"], d.values["upper"])
    assert f"| {d.system} | {d.stratum} | {cell} |" in md
    assert ("table", "warnings_near_tie") == s.blocks[-1][:2]


def _png_size(png: bytes) -> tuple[int, int]:
    import struct

    return struct.unpack(">II", png[16:24])


def test_difference_figure_stacks_panels_when_there_are_many_pairs():
    """28 pairs in 3 strata side by side overlapped the pair labels of the next panel."""
    theta = np.linspace(0.5, 0.85, 8)[:, None] + np.array([[0.0, 0.02, -0.02]])
    counts = bj.simulate_counts(theta, 0.85, 0.9, n=300, m0=60, m1=60,
                                system=[f"s{i}" for i in range(8)], stratum=["x", "y", "z"],
                                random_seed=6)  # fmt: skip
    r = build_report(counts, random_seed=SEED, n_resamples=1000, warn=False)
    width, height = _png_size(r.figures["theta_difference"])
    assert width == 1000  # 10 inches at 100 dpi, one panel per row
    assert height > 3 * 28 * 30  # 3 panels of 28 rows at >= 0.3 inch per row


class _FitCalled(BaseException):
    """Raised by a stand-in fit; a BaseException so that the command line's handler of
    internal errors (``except Exception``) lets it through to the test."""


@pytest.mark.parametrize(
    ("extra", "method", "paired"),
    [
        # --item: the systems' verdicts are paired; auto fits the paired MCMC model.
        (["--item", "item"], "mcmc", None),
        ([], "exact", None),  # no item ids: the exact posterior
        (["--calibration-design", "hierarchical"], "mcmc", None),
        # explicit exact with --item: the unpaired model (the report says so in bold)
        (["--item", "item", "--method", "exact"], "exact", False),
    ],
)
def test_cli_report_auto_method(sheets, capsys, monkeypatch, extra, method, paired):
    import bayesjudge.models.fit as fit_module

    calls = []

    def fake_fit(counts, **options):
        calls.append(options)
        raise _FitCalled

    monkeypatch.setattr(fit_module, "fit", fake_fit)
    with pytest.raises(_FitCalled):
        main(["report", "--test", str(sheets / "test.csv"), "--calibration",
              str(sheets / "cal.csv"), "--system", "system", "--out", str(sheets / "auto"),
              "--seed", "3", *extra])  # fmt: skip
    assert calls[0]["method"] == method
    assert calls[0].get("paired") is paired
    assert calls[0]["random_seed"] == 3


def test_cli_report_out_errors_are_one_line_and_come_before_the_fit(
    sheets, capsys, monkeypatch, tmp_path, run_cli
):
    import bayesjudge.models.fit as fit_module

    monkeypatch.setattr(fit_module, "fit", lambda *a, **k: pytest.fail("fit ran"))
    (tmp_path / "file.txt").write_text("x")
    base = ["report", "--test", str(sheets / "test.csv"), "--calibration",
            str(sheets / "cal.csv"), "--system", "system", "--seed", "1"]  # fmt: skip
    for out, message in (
        (tmp_path / "file.txt", "exists and is not a folder"),
        (tmp_path / "file.txt" / "sub", "cannot create the folder"),
    ):
        code, _, err = run_cli([*base, "--out", str(out)])
        assert code == 2
        assert err.count("\n") == 1 and err.startswith("bayesjudge: error: --out"), err
        assert message in err
    # A file of the report that cannot be written (here: report.md is a folder).
    blocked = tmp_path / "blocked"
    (blocked / "report.md").mkdir(parents=True)
    code, _, err = run_cli([*base, "--out", str(blocked), "--method", "none",
                         "--n-resamples", "100"])  # fmt: skip
    assert code == 2
    errors = [ln for ln in err.splitlines() if ln.startswith("bayesjudge: error:")]
    assert len(errors) == 1 and "cannot write" in errors[0] and "report.md" in errors[0], err
    assert all(ln.startswith("bayesjudge: ") for ln in err.splitlines()), err


@pytest.mark.slow
def test_cli_report_with_item_fits_the_paired_model(sheets, capsys, run_cli):
    """The default --method auto with --item: paired MCMC; Δθ, PPC and text say so."""
    out_dir = sheets / "paired"
    code, out, err = run_cli(
        ["report", "--test", str(sheets / "test.csv"), "--calibration", str(sheets / "cal.csv"),
         "--system", "system", "--item", "item", "--out", str(out_dir), "--seed", "5",
         "--n-resamples", "500", "--draws", "500", "--tune", "500", "--chains", "2"])  # fmt: skip
    assert code == 0, err
    assert "Bayesian fit: mcmc (paired, separate calibration)" in out
    md = (out_dir / "report.md").read_text(encoding="utf-8")
    assert "The Bayesian model is the paired one" in md
    assert "The Bayesian Δθ is from the paired model." in md
    assert "paired=True" in md
    # Each sampler warning is printed once (the fit's is not repeated by the report).
    lines = [ln for ln in err.splitlines() if "Sampler diagnostics" in ln]
    assert len(lines) <= 1
    counts = bj.JudgeCounts.from_frames(
        str(sheets / "test.csv"),
        str(sheets / "cal.csv"),
        system="system",
        item="item",
    )
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bj.BayesJudgeWarning)
        ref = bj.fit(counts, draws=500, tune=500, chains=2, random_seed=5)
    comp = ref.compare(var="theta", ci_prob=0.95)
    for pair in comp["pair"].values:
        c = comp.sel(pair=pair, stratum="all")
        cell = _interval(float(c["mean"]), *c["ci"].values)
        assert f"| {pair} | all |" in md and cell in md
    # The PPC table names the joint verdict patterns and drops the empty k_unshared rows.
    ppc = md.split("Posterior predictive p-values per observed count.")[1]
    assert "| joint | pattern 101 | all |" in ppc
    assert "k_unshared" not in ppc


@pytest.mark.slow
def test_shared_mcmc_fit_is_not_called_valid_and_its_ppc_has_power(counts):
    """With calibration='shared' the Bayesian Δθ relies on ΔJ ≈ 0; the text must not call the
    fit 'system-specific ... valid', and the PPC text must not say it cannot detect misfit."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bj.ConvergenceWarning)  # the text is checked, not mixing
        result = bj.fit(counts, calibration="shared", draws=300, tune=300, chains=2,
                        random_seed=SEED)  # fmt: skip
    r = build_report(fit=result, random_seed=SEED, n_resamples=1000, warn=False)
    md = r.to_markdown()
    assert "the Bayesian fit pools the calibration into one q0, q1 (shared)" in md
    assert "its Δθ relies on ΔJ ≈ 0 and is biased otherwise" in md
    checks = md.split("## 8.")[1]
    assert "Groups share parameters in this fit (shared calibration)" in checks
    assert "cannot detect misfit" not in checks


def test_near_tie_quotes_the_interval_of_the_frequentist_table():
    """Without a fit, the near-tie record and the Δθ table show the same (bootstrap) interval."""
    tied = bj.simulate_counts(
        [0.70, 0.72], 0.85, 0.9, n=1000, m0=200, m1=200, system=["a", "b"], random_seed=4
    )
    r = build_report(tied, random_seed=SEED, n_resamples=2000, warn=False)
    near = [d for d in r.diagnoses if d.code == "near_tie"]
    assert len(near) == 1
    row = r.tables["theta_difference"].iloc[0]
    lower, upper = row["frequentist_lower"], row["frequentist_upper"]
    assert lower < 0 < upper  # a real tie: the table's interval includes 0
    assert f"[{lower:+.3f}, {upper:+.3f}]" in near[0].message, (near[0].message, lower, upper)


# ----------------------------------------------------------------------------- many systems


@pytest.fixture(scope="module")
def many_written(tmp_path_factory):
    """120 systems, every tenth judged poorly: all four kinds of warning fire, many times."""
    n_systems = 120
    q0 = np.where(np.arange(n_systems) % 10 == 0, 0.25, 0.85)
    counts = bj.simulate_counts(np.linspace(0.5, 0.8, n_systems), q0, 0.9, n=300, m0=60, m1=60,
                                system=[f"system-{i:03d}" for i in range(n_systems)],
                                random_seed=1)  # fmt: skip
    out = tmp_path_factory.mktemp("many")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = write_report(counts, out, random_seed=SEED, n_resamples=1000, target_width=0.2)
    return counts, report, out, caught


def test_many_systems_print_a_screenful_of_grouped_warnings(many_written):
    """Issue 13: 40 systems printed 679 warning lines; now one warning per kind."""
    _, report, _, caught = many_written
    printed = "".join(
        warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line) for w in caught
    )
    assert len(printed.splitlines()) <= 25, printed
    categories = [w.category for w in caught]
    assert len(categories) == len(set(categories))  # one warning per kind
    codes = {d.code for d in report.diagnoses}
    assert {"low_j", "near_tie", "calibration_size"} <= codes
    near = [d for d in report.diagnoses if d.code == "near_tie"]
    (tie_warning,) = [w for w in caught if w.category is bj.NearTieWarning]
    assert f"and {len(near) - 3} more" in str(tie_warning.message)


def test_many_systems_compare_with_the_best_and_neighbours(many_written):
    counts, report, out, _ = many_written
    n = len(counts.systems)
    diff = report.tables["theta_difference"]
    assert len(diff) == 2 * n - 3  # not n(n - 1)/2 = 7140
    assert diff["comparison"].value_counts().to_dict() == {
        "with the best system": n - 1, "between neighbours in rank": n - 2}  # fmt: skip
    theta = report.tables["theta"].set_index("system")["corrected"]
    best = theta.idxmax()
    with_best = diff[diff["comparison"] == "with the best system"]
    assert all(p.startswith(f"{best} - ") for p in with_best["pair"])
    neighbours = diff[diff["comparison"] == "between neighbours in rank"]["pair"]
    ranked = sorted(theta.index, key=lambda system: -theta[system])  # stable: ties in order
    assert neighbours.tolist() == [f"{a} - {b}" for a, b in itertools.pairwise(ranked[1:])]
    assert f"**{n} systems** make {n * (n - 1) // 2} pairs" in report.to_markdown()
    # Every pair is in the CSV file beside the report, with its closed-form Δθ and ΔJ.
    csv = pd.read_csv(out / "comparisons_all_pairs.csv")
    assert len(csv) == n * (n - 1) // 2
    from bayesjudge.diagnostics import judge_diagnostics

    pair = "system-003 - system-007"
    ref = judge_diagnostics(counts.sel(system=["system-003", "system-007"]), random_seed=0)
    row = report.tables["all_pairs"].set_index("pair").loc[pair]
    assert row["delta_theta"] == pytest.approx(ref["delta_theta"].item(), rel=1e-12)
    assert row["delta_J_lower"] == pytest.approx(
        ref["delta_youden_ci"].sel(ci_bound="lower").item(), rel=1e-12)  # fmt: skip
    # The file holds the table's numbers to 6 significant digits.
    written = csv.set_index("pair").loc[pair]
    for column in ("delta_theta", "delta_theta_lower", "prob_greater", "delta_J"):
        assert written[column] == pytest.approx(row[column], rel=5e-6)


def test_many_systems_page_stays_readable(many_written):
    """The HTML page grows linearly and its figures summarise: no metres-tall forest plots.

    40 systems used to give a 4.3 MB page. The bound: the tables hold about 2 rows per
    system per table of systems and pairs (~300 bytes a row) and the figures are fixed-size
    summaries (< 200 kB each as PNG); 120 systems must stay under 2 MB, 15 kB per system.
    """
    _, report, out, _ = many_written
    size = (out / "report.html").stat().st_size
    assert size < 2_000_000, size
    for name, png in report.figures.items():
        width, height = _png_size(png)
        assert height <= 1600 and width <= 1600, (name, width, height)


# ----------------------------------------------------------------------------- atomic writes


def test_a_failing_render_writes_nothing(closed_only, tmp_path, monkeypatch):
    """Both pages are rendered before any file is written."""

    def broken(self):
        raise RuntimeError("render failed")

    monkeypatch.setattr(Report, "to_html", broken)
    with pytest.raises(RuntimeError, match="render failed"):
        closed_only.save(tmp_path / "out")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_an_interrupted_save_leaves_no_partial_file_and_no_page(closed_only, tmp_path,
                                                                monkeypatch):  # fmt: skip
    """Each file is written atomically and the pages last: a Ctrl-C while writing the figures
    leaves neither a half-written file nor a report.md that links missing figures."""
    real = report_document.atomic_write
    calls = []

    def interrupted(path, data, **kwargs):
        calls.append(path)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(path, data, **kwargs)

    monkeypatch.setattr(report_document, "atomic_write", interrupted)
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        closed_only.save(out)
    names = sorted(p.name for p in out.iterdir())
    assert names == [calls[0].name]  # one complete figure, no page, no temporary file
    monkeypatch.setattr(report_document, "atomic_write", real)
    paths = closed_only.save(out)
    assert {p.name for p in paths.values()} == {p.name for p in out.iterdir()}


def test_compare_of_some_pairs_is_the_all_pairs_result():
    """The report of many systems bootstraps only the pairs it shows (compare(pairs=...)):
    the same replicates, so the same intervals as comparing every pair."""
    from bayesjudge.compare import compare

    four = bj.simulate_counts([0.5, 0.6, 0.7, 0.8], 0.85, 0.9, n=300, m0=80, m1=80,
                              system=list("abcd"), random_seed=1)  # fmt: skip
    every = compare(four, n_resamples=1000, random_seed=3)
    some = compare(four, n_resamples=1000, random_seed=3, pairs=[("d", "a"), ("b", "c")])
    assert some["pair"].values.tolist() == ["d - a", "b - c"]
    np.testing.assert_array_equal(
        some["ci"].sel(pair="b - c").values, every["ci"].sel(pair="b - c").values
    )
    # Reversed: the same replicates negated (percentile interpolation may differ by an ulp).
    np.testing.assert_allclose(
        some["ci"].sel(pair="d - a").values,
        -every["ci"].sel(pair="a - d").values[..., ::-1],
        rtol=1e-14,
    )
