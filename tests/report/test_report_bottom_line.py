"""Tests of the report's bottom line: the answer first (θ best first, the ranking, one warning).

Every number in the bottom line is checked against the function computing it, called here
with the same counts and options: the θ table (``bj.estimate`` / the fit's summary),
``bj.compare`` (closed-form Δθ to the next system, same seed and resamples) and the fit's own
draws (P(θ_a > θ_b), as ``Fit.compare``). The fits are exact (no MCMC).
"""

import re
from dataclasses import dataclass

import numpy as np
import pytest

import bayesjudge as bj
from bayesjudge.report import SECTIONS, build_report
from bayesjudge.report.sections import WARNING_PRIORITY, most_important_warning
from bayesjudge.report.tables import BOTTOM_LINE_MAX_SYSTEMS, SETTLED_PROBABILITY, TOTAL_LABEL

SEED = 11


@pytest.fixture(scope="module")
def counts():
    # c and a are 0.02 apart (an unsettled step), b is far below them.
    return bj.simulate_counts(
        [0.80, 0.55, 0.78], 0.85, 0.9, n=1000, m0=200, m1=200, system=["a", "b", "c"],
        random_seed=5,
    )  # fmt: skip


@pytest.fixture(scope="module")
def closed(counts):
    return build_report(counts, random_seed=SEED, n_resamples=2000, warn=False)


@pytest.fixture(scope="module")
def fitted(counts):
    return bj.fit(counts, method="exact", random_seed=SEED)


@pytest.fixture(scope="module")
def bayes(fitted):
    return build_report(fit=fitted, random_seed=SEED, n_resamples=1000, warn=False, ppc=False)


def test_bottom_line_comes_first(closed):
    assert next(iter(SECTIONS)) == "bottom_line"
    md = closed.to_markdown()
    headings = re.findall(r"^## (.+)$", md, flags=re.M)
    assert headings[:2] == ["The bottom line", "1. Estimand"]
    page = closed.to_html()
    assert page.index('<section id="bottom_line">') < page.index('<section id="estimand">')


def test_counts_only_copies_theta_and_compare(closed, counts):
    table = closed.tables["bottom_line"]
    theta = closed.tables["theta"].set_index("system")
    # Best first by the corrected θ̂.
    expected = theta["corrected"].sort_values(ascending=False).index.tolist()
    assert table["system"].tolist() == expected
    assert table["rank"].tolist() == [1, 2, 3]
    for _, row in table.iterrows():
        t = theta.loc[row["system"]]
        assert (row["theta"], row["theta_lower"], row["theta_upper"]) == (
            t["corrected"], t["corrected_lower"], t["corrected_upper"],
        )  # fmt: skip
    ref = bj.compare(counts, method="bootstrap", n_resamples=2000, random_seed=SEED)
    pairs = list(zip(ref["first"].values, ref["second"].values, strict=True))
    for i in range(2):
        this, nxt = table["system"].iloc[i], table["system"].iloc[i + 1]
        p, sign = (pairs.index((this, nxt)), 1) if (this, nxt) in pairs else (
            pairs.index((nxt, this)), -1)  # fmt: skip
        r = ref.isel(pair=p, stratum=0)
        lo, hi = sorted(sign * r["ci"].values)
        row = table.iloc[i]
        assert row["next_difference"] == sign * float(r["estimate"])
        assert (row["next_difference_lower"], row["next_difference_upper"]) == (lo, hi)
        assert row["settled"] == ("yes" if lo > 0 else "no")
    assert table["settled"].iloc[-1] == "—" and np.isnan(table["next_difference"].iloc[-1])
    assert "prob_greater" not in table and "stratum" not in table  # closed form, one stratum
    # a and c (0.02 apart) are not settled, c over b is.
    assert table["settled"].tolist() == ["no", "yes", "—"]
    md = closed.to_markdown()
    assert "interval of Δθ to the next excludes 0" in md
    assert "**not settled** (1 of 2 steps)" in md


def test_with_fit_uses_the_posterior(bayes, fitted):
    table = bayes.tables["bottom_line"]
    theta = bayes.tables["theta"].set_index("system")
    assert table["system"].tolist() == theta["bayes"].sort_values(ascending=False).index.tolist()
    comp = fitted.compare(ci_prob=0.95)
    pairs = list(zip(comp["first"].values, comp["second"].values, strict=True))
    for i in range(2):
        this, nxt = table["system"].iloc[i], table["system"].iloc[i + 1]
        flip = (this, nxt) not in pairs
        r = comp.isel(pair=pairs.index((nxt, this) if flip else (this, nxt)), stratum=0)
        draws = (-1 if flip else 1) * r["difference"].values.ravel()
        row = table.iloc[i]
        assert row["prob_greater"] == np.mean(draws > 0)
        assert row["next_difference"] == pytest.approx(draws.mean(), rel=1e-12)
        lo, hi = np.quantile(draws, [0.025, 0.975])
        assert (row["next_difference_lower"], row["next_difference_upper"]) == pytest.approx(
            (lo, hi), rel=1e-12
        )
        assert row["settled"] == ("yes" if row["prob_greater"] >= SETTLED_PROBABILITY else "no")
        assert theta.loc[this, "bayes"] == row["theta"]
    md = bayes.to_markdown()
    assert "Bayesian posterior mean (exact posterior)" in md and "P(above the next)" in md


def test_one_system_has_no_ranking():
    counts = bj.JudgeCounts.from_counts(n=1000, k=400, m0=100, tn=70, m1=100, tp=90)
    report = build_report(counts, random_seed=1, warn=False)
    section = report.section("bottom_line")
    md = report.to_markdown()
    assert "One system: nothing to rank." in md
    assert "Ranking" not in md.split("## 1. Estimand")[0]
    assert [b[0] for b in section.blocks] == ["p", "table", "p"]
    table = report.tables["bottom_line"]
    assert len(table) == 1 and table["settled"].tolist() == ["—"]


@pytest.mark.slow
def test_many_systems_show_the_top_ones():
    k = BOTTOM_LINE_MAX_SYSTEMS + 3
    theta = np.linspace(0.5, 0.9, k)
    names = [f"s{i:02d}" for i in range(k)]
    counts = bj.simulate_counts(
        theta, 0.85, 0.9, n=400, m0=100, m1=100, system=names, random_seed=2
    )
    report = build_report(counts, random_seed=1, n_resamples=200, warn=False)
    table = report.tables["bottom_line"]
    assert len(table) == BOTTOM_LINE_MAX_SYSTEMS and table.attrs["hidden"] == 3
    corrected = report.tables["theta"].set_index("system")["corrected"]
    assert table["system"].tolist() == corrected.sort_values(ascending=False).index[:10].tolist()
    md = report.to_markdown()
    assert f"the top {BOTTOM_LINE_MAX_SYSTEMS}; 3 more rows in section 4" in md
    assert "> …" in md


@pytest.mark.slow
def test_several_strata_rank_each_stratum():
    counts = bj.simulate_counts(
        [[0.9, 0.6], [0.6, 0.9]], 0.85, 0.9, n=800, m0=150, m1=150, system=["A", "B"],
        stratum=["easy", "hard"], random_seed=8,
    )  # fmt: skip
    report = build_report(counts, random_seed=1, n_resamples=500, warn=False)
    table = report.tables["bottom_line"]
    assert table[["stratum", "system"]].values.tolist() == [
        ["easy", "A"], ["easy", "B"], ["hard", "B"], ["hard", "A"],
    ]  # fmt: skip
    md = report.to_markdown()
    assert "Ranking in stratum “easy”: “A” > “B”" in md
    assert "Ranking in stratum “hard”: “B” > “A”" in md


def test_hostile_names_are_escaped():
    evil = ["<script>alert(1)</script>", "a|b\n# x", "$\\frac{1}{2}$"]
    counts = bj.simulate_counts(
        [0.9, 0.6, 0.75], 0.85, 0.9, n=600, m0=150, m1=150, system=evil, random_seed=3
    )
    report = build_report(counts, random_seed=1, n_resamples=500, warn=False)
    md = report.to_markdown().split("## 1. Estimand")[0]
    assert "<script>" not in md and "\\<script\\>" in md
    assert "a\\|b\\\\n\\# x" in md  # the newline shown as "\\n", each character escaped
    assert "\\$\\\\frac\\{1\\}\\{2\\}\\$" in md
    page = report.to_html()
    top = page[page.index('<section id="bottom_line">') : page.index('<section id="estimand">')]
    assert "<script>" not in top and "&lt;script&gt;" in top


@dataclass
class _R:
    code: str
    level: str = "warning"
    message: str = ""


def test_warning_priority():
    assert most_important_warning([]) is None
    records = [_R("near_tie", "caution"), _R("calibration_size"), _R("low_j"),
               _R("ConvergenceWarning")]  # fmt: skip
    assert most_important_warning(records).code == "ConvergenceWarning"
    assert most_important_warning(records[:3]).code == "low_j"
    # An unlisted code ranks after the listed ones, before near ties.
    assert most_important_warning([_R("near_tie"), _R("SomethingNew")]).code == "SomethingNew"
    assert most_important_warning([_R("DesignWarning"), _R("SomethingNew")]).code == (
        "DesignWarning"
    )
    # Within a rank: error, then warning, then caution; then the report's order.
    same = [_R("low_j", "caution", "1"), _R("low_j", "warning", "2"), _R("low_j", "warning", "3")]
    assert most_important_warning(same).message == "2"
    assert WARNING_PRIORITY[-1] == ("near_tie", "NearTieWarning")


@pytest.mark.slow
def test_report_names_its_most_important_warning():
    # A judge barely better than chance for b (J = 0.1): low J is the warning that matters most,
    # above the calibration-design warning (the judge differs between a and b) and the near tie.
    counts = bj.simulate_counts(
        [0.7, 0.6], [0.85, 0.55], [0.9, 0.55], n=800, m0=150, m1=150, system=["a", "b"],
        random_seed=4,
    )  # fmt: skip
    with pytest.warns(bj.warnings.BayesJudgeWarning):
        report = build_report(counts, random_seed=1, n_resamples=500)
    codes = {r.code for r in report.diagnoses}
    assert "low_j" in codes
    md = report.to_markdown().split("## 1. Estimand")[0]
    assert "**Warning that matters most** (warning `low_j`" in md


def test_fit_over_strata_ranks_theta_total_first():
    counts = bj.simulate_counts(
        [[0.9, 0.6], [0.6, 0.8]], 0.85, 0.9, n=[[900, 100], [900, 100]], m0=150, m1=150,
        system=["A", "B"], stratum=["easy", "hard"], random_seed=8,
    )  # fmt: skip
    fit = bj.fit(counts, method="exact", random_seed=2, draws=500, chains=2)
    report = build_report(fit=fit, random_seed=1, n_resamples=1000, warn=False, ppc=False)
    table = report.tables["bottom_line"]
    assert table.attrs["total"] is True
    total = table[table["stratum"] == TOTAL_LABEL]
    assert total.index.tolist() == [0, 1]  # first
    draws = fit.posterior["theta_total"]
    means = draws.mean(("chain", "draw")).to_series()
    assert total["system"].tolist() == means.sort_values(ascending=False).index.tolist()
    best, other = total["system"].tolist()
    diff = (draws.sel(system=best) - draws.sel(system=other)).values.ravel()
    assert total["prob_greater"].iloc[0] == np.mean(diff > 0)
    assert total["theta"].iloc[0] == pytest.approx(float(means[best]), rel=1e-12)
    md = report.to_markdown()
    assert f"Ranking over {TOTAL_LABEL}: “{best}” > “{other}”" in md
