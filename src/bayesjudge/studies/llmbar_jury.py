"""LLMBar case study of juries: several judges against the best single judge, per label budget.

Real data (Zeng et al., ICLR 2024; :func:`bayesjudge.datasets.load_llmbar`): six LLM judges
(GPT-4, PaLM2, ChatGPT, LLaMA2, ChatGPT-0301, Falcon; strategy ``Vanilla_NoRules``) graded the
same items with the two outputs in their original order and swapped, and every item has a gold
label, so the true θ of a subset is known. Vocabulary as in :mod:`bayesjudge.studies.llmbar`:
Z = 1 when output 1 is the better one, a verdict 1 when the judge picks output 1.

**Splits (random labelling design).** In each replication humans "label" ``m`` items of a
subset drawn at random without replacement; every judge grades every item (an unparsed verdict
is a missing entry of the item's pattern). The target is the subset's share θ_S of Z = 1 over
all its items (the test-set θ; the intervals target a population θ and are conservative for it,
as in the single-judge study).

**Approaches** (dim ``approach``):

``best-judge``
    The judge with the highest Ĵ on the split's labelled items (among the six, original order),
    with the random design's profile-likelihood interval
    (:func:`bayesjudge.core.likelihood.likelihood_interval`) on its own counts — what a user who
    picks one judge from the labels gets.
``oracle-judge``
    The judge with the highest J on the whole subset (known only with every gold label), same
    interval: the best a single judge can do.
``jury``
    Dawid–Skene (:func:`bayesjudge.core.jury.dawid_skene_interval`, Wald, ``design="random"``)
    on the six judges' verdict patterns.
``jury-both-orders``
    Dawid–Skene on twelve "judges": each judge in both answer orders. The two verdicts of one
    judge on one item share its position and length preferences, so they are not conditionally
    independent: its interval is expected to be too narrow.
``majority``
    The share the majority of the six calls correct (ties ½), Wilson interval: naive.

**Judge effects** (``effects``): every judge's q0 and q1 from all gold labels of the five
subsets, split by the answer order (``swap``) and by which output is longer (``longer``,
ties left out), with Wilson intervals — how much position and length move a judge's errors.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import xarray as xr

from bayesjudge.core.jury import dawid_skene_interval, majority_vote
from bayesjudge.core.likelihood import likelihood_interval
from bayesjudge.core.naive import naive
from bayesjudge.datasets import load_llmbar
from bayesjudge.studies._framework import (
    StudyResult,
    check_names,
    check_reps,
    check_seed,
    mcse_mean,
    mcse_proportion,
    point_rngs,
    study_attrs,
)

__all__ = [
    "APPROACHES",
    "JUDGES",
    "QUICK_OPTIONS",
    "QUICK_REPS",
    "SUBSETS",
    "effects",
    "plot",
    "run",
    "subset_data",
]

NAME = "llmbar-jury"
JUDGES = ("GPT-4", "PaLM2", "ChatGPT", "LLaMA2", "ChatGPT-0301", "Falcon")
SUBSETS = (
    "LLMBar/Natural",
    "LLMBar/Adversarial/Neighbor",
    "LLMBar/Adversarial/GPTInst",
    "LLMBar/Adversarial/GPTOut",
    "LLMBar/Adversarial/Manual",
)
#: ``bayesjudge study llmbar-jury --quick``: one label budget, few splits.
QUICK_REPS = 20
QUICK_OPTIONS = {"labels": [20]}
APPROACHES = ("best-judge", "oracle-judge", "jury", "jury-both-orders", "majority")
STRATEGY = "Vanilla_NoRules"


def subset_data(frame, subset: str, judges: Sequence[str] = JUDGES) -> dict:
    """Verdict matrix (items × judges, then the same judges swapped) and truths of a subset.

    Entries are 1, 0 or -1 (an unparsed verdict). Columns ``0 … J-1``: original order;
    ``J … 2J-1``: swapped.
    """
    rows = frame[frame["subset"] == subset]
    items = np.sort(rows["item"].unique())
    index = {item: i for i, item in enumerate(items)}
    verdicts = np.full((len(items), 2 * len(judges)), -1, dtype=np.int64)
    column = {(j, s): c for c, (s, j) in enumerate(itertools.product((False, True), judges))}
    graded = rows["judge"].notna().to_numpy()
    said = rows["judge"].fillna(False).astype(bool).to_numpy()
    for item, judge, swap, ok, verdict in zip(
        rows["item"], rows["evaluator"], rows["swap"], graded, said, strict=True
    ):
        if judge in judges and ok:  # an unparsed verdict stays -1 (missing)
            verdicts[index[item], column[(judge, bool(swap))]] = int(verdict)
    truth = rows.drop_duplicates("item").set_index("item").loc[items, "human"].astype(int)
    return {"verdicts": verdicts, "truth": truth.to_numpy(), "judges": list(judges)}


def _patterns(verdicts: np.ndarray, truth: np.ndarray, labelled: np.ndarray):
    """Distinct patterns with unlabelled counts and labelled counts by truth."""
    keep = (verdicts >= 0).any(axis=1)
    verdicts, truth, labelled = verdicts[keep], truth[keep], labelled[keep]
    patterns, inverse = np.unique(verdicts, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    test = np.bincount(inverse[~labelled], minlength=len(patterns))
    lab = np.stack(
        [np.bincount(inverse[labelled & (truth == t)], minlength=len(patterns)) for t in (0, 1)]
    )
    return patterns, test, lab


def _single_counts(v: np.ndarray, truth: np.ndarray, labelled: np.ndarray):
    """One judge's random-design counts (k, n, tn, m0, tp, m1) over its graded items."""
    said = v >= 0
    unl, lab = said & ~labelled, said & labelled
    return (
        int((v[unl] == 1).sum()),
        int(unl.sum()),
        int(((v == 0) & lab & (truth == 0)).sum()),
        int((lab & (truth == 0)).sum()),
        int(((v == 1) & lab & (truth == 1)).sum()),
        int((lab & (truth == 1)).sum()),
    )


def _youden(counts) -> float:
    _, _, tn, m0, tp, m1 = counts
    if m0 == 0 or m1 == 0:
        return -np.inf
    return tn / m0 + tp / m1 - 1


def _oracle_judge(data: dict) -> int:
    every = np.ones(len(data["truth"]), dtype=bool)
    j_true = [
        _youden(_single_counts(data["verdicts"][:, j], data["truth"], every))
        for j in range(len(data["judges"]))
    ]
    return int(np.argmax(j_true))


def _one_split(data: dict, labelled: np.ndarray, oracle: int, alpha: float) -> np.ndarray:
    """(approach, [estimate, lower, upper]) for one labelled mask."""
    v, truth = data["verdicts"], data["truth"]
    n_j = len(data["judges"])
    out = np.full((len(APPROACHES), 3), np.nan)
    singles = [_single_counts(v[:, j], truth, labelled) for j in range(n_j)]
    best = int(np.argmax([_youden(c) for c in singles]))
    for a, j in ((0, best), (1, oracle)):
        res = likelihood_interval(*singles[j], alpha=alpha)
        out[a] = (float(res.estimate), float(res.lower), float(res.upper))
    for a, cols in ((2, slice(0, n_j)), (3, slice(0, 2 * n_j))):
        patterns, test, lab = _patterns(v[:, cols], truth, labelled)
        res = dawid_skene_interval(patterns, test, lab, design="random", alpha=alpha)
        out[a] = (res.estimate, res.lower, res.upper)
    patterns, test, _ = _patterns(v[:, :n_j], truth, labelled)
    res = majority_vote(patterns, test, alpha=alpha)
    out[4] = (res.estimate, res.lower, res.upper)
    return out


def _draw_mask(rng: np.random.Generator, size: int, m: int, truth: np.ndarray) -> np.ndarray:
    """Draw a random labelled set of m items holding both truths (else J is not estimable)."""
    for _ in range(1000):
        mask = np.zeros(size, dtype=bool)
        mask[rng.choice(size, size=m, replace=False)] = True
        if 0 < truth[mask].sum() < m:
            return mask
    raise ValueError(f"Could not draw {m} labelled items with both truths; raise m.")


def run(
    *,
    reps: int = 200,
    random_seed: int = 20261127,
    labels: Sequence[int] = (10, 20, 40),
    subsets: Sequence[str] = SUBSETS,
    alpha: float = 0.05,
    path=None,
    progress: bool = False,
) -> StudyResult:
    """Run the LLMBar jury case study.

    Parameters
    ----------
    reps : int, default 200
        Random labelling splits per (subset, label budget).
    random_seed : int, default 20261127
    labels : sequence of int, default (10, 20, 40)
        Labelled items per subset (at most the subset's size minus one).
    subsets : sequence of str
        LLMBar subsets (strata).
    alpha : float, default 0.05
    path : optional
        Another copy of the LLMBar tables (see :func:`~bayesjudge.datasets.load_llmbar`).
    progress : bool, default False
        Unused (the study takes about a minute); kept for the study runner's interface.

    Returns
    -------
    StudyResult
        ``table`` with dims (``stratum`` (the subset), ``labels``, ``approach``): ``coverage``,
        ``coverage_mcse``, ``width``, ``width_mcse``, ``bias``, ``defined`` (share of splits
        with a finite interval), and ``theta`` (the subset's θ_S) per subset, with the
        coordinate ``oracle`` (the oracle judge); the judge effects are :func:`effects`.

    Examples
    --------
    >>> result = run(reps=3, labels=(20,), subsets=("LLMBar/Natural",))
    >>> result.table["coverage"].sizes["approach"]
    5
    """
    reps = check_reps(reps)
    random_seed = check_seed(random_seed)
    subsets = check_names("subsets", subsets, SUBSETS)
    labels = [int(m) for m in labels]
    if any(m < 2 for m in labels):
        raise ValueError(f"labels must be whole numbers of at least 2; got {labels}.")
    frame = load_llmbar(path, strategy=STRATEGY, subset=list(subsets), warn=False)
    shape = (len(subsets), len(labels), len(APPROACHES))
    stats = {k: np.full(shape, np.nan) for k in ("coverage", "coverage_mcse", "width",
                                                  "width_mcse", "bias", "defined")}  # fmt: skip
    thetas, oracles = [], []
    for s, subset in enumerate(subsets):
        data = subset_data(frame, subset)
        theta = float(data["truth"].mean())
        oracle = _oracle_judge(data)
        thetas.append(theta)
        oracles.append(data["judges"][oracle])
        for b, m in enumerate(labels):
            # keyed by the design point, so a subset of the grid reproduces the full run
            rng = point_rngs(random_seed, SUBSETS.index(subset), m)[0]
            results = np.stack(
                [
                    _one_split(
                        data, _draw_mask(rng, len(data["truth"]), m, data["truth"]), oracle, alpha
                    )
                    for _ in range(reps)
                ]
            )
            est, low, high = results[..., 0], results[..., 1], results[..., 2]
            ok = np.isfinite(low) & np.isfinite(high)
            covered = np.where(ok, (low <= theta) & (theta <= high), False)
            stats["coverage"][s, b] = covered.mean(axis=0)
            stats["coverage_mcse"][s, b] = mcse_proportion(covered.mean(axis=0), reps)
            width = np.where(ok, high - low, np.nan)
            stats["width"][s, b] = np.nanmean(width, axis=0)
            stats["width_mcse"][s, b] = mcse_mean(np.nan_to_num(width.T, nan=1.0))
            stats["bias"][s, b] = np.nanmean(est, axis=0) - theta
            stats["defined"][s, b] = ok.mean(axis=0)
    dims = ("stratum", "labels", "approach")
    table = xr.Dataset(
        {name: (dims, values) for name, values in stats.items()} | {"theta": ("stratum", thetas)},
        coords={
            "stratum": list(subsets),
            "oracle": ("stratum", oracles),
            "labels": list(labels),
            "approach": list(APPROACHES),
        },
        attrs=study_attrs(
            NAME,
            reps=reps,
            random_seed=random_seed,
            labels=list(labels),
            subsets=list(subsets),
            alpha=alpha,
            strategy=STRATEGY,
            judges=list(JUDGES),
            ci_prob=1 - alpha,
        ),
    )
    return StudyResult(NAME, table, plot)


def effects(path=None, alpha: float = 0.05, subsets: Sequence[str] = SUBSETS) -> xr.Dataset:
    """Each judge's q0 and q1 by answer order and by the longer output, from every gold label.

    Returns
    -------
    xarray.Dataset
        ``q0``, ``q1`` and their Wilson intervals (``q0_ci``, ``q1_ci``, ``ci_bound``) and the
        item counts ``m0``, ``m1``, dims (``judge``, ``swap``, ``longer``).

    Examples
    --------
    >>> ds = effects(subsets=("LLMBar/Natural",))
    >>> ds["q1"].sizes
    Frozen({'judge': 6, 'swap': 2, 'longer': 2})
    """
    frame = load_llmbar(path, strategy=STRATEGY, subset=list(subsets), warn=False)
    frame = frame[frame["judge"].notna() & (frame["longer"] != "tie")]
    swaps, longer = [False, True], ["output_1", "output_2"]
    shape = (len(JUDGES), 2, 2)
    out = {k: np.full(shape, np.nan) for k in ("q0", "q1", "m0", "m1")}
    ci = {k: np.full((*shape, 2), np.nan) for k in ("q0", "q1")}
    for (j, judge), (a, swap), (b, side) in itertools.product(
        enumerate(JUDGES), enumerate(swaps), enumerate(longer)
    ):
        rows = frame[(frame["evaluator"] == judge) & (frame["swap"] == swap)]
        rows = rows[rows["longer"] == side]
        said = rows["judge"].astype(bool).to_numpy()
        human = rows["human"].astype(bool).to_numpy()
        for name, mask, right in (("q0", ~human, ~said), ("q1", human, said)):
            size = int(mask.sum())
            out["m0" if name == "q0" else "m1"][j, a, b] = size
            if size:
                res = naive(int(right[mask].sum()), size, alpha=alpha)
                out[name][j, a, b] = float(res.estimate)
                ci[name][j, a, b] = (float(res.lower), float(res.upper))
    dims = ("judge", "swap", "longer")
    data = {k: (dims, v) for k, v in out.items()}
    data |= {f"{k}_ci": ((*dims, "ci_bound"), v) for k, v in ci.items()}
    return xr.Dataset(
        data,
        coords={
            "judge": list(JUDGES),
            "swap": swaps,
            "longer": longer,
            "ci_bound": ["lower", "upper"],
        },
        attrs={"ci_kind": "wilson", "ci_prob": 1 - alpha, "strategy": STRATEGY},
    )


def plot(table: xr.Dataset):
    """Interval width against labelled items: the jury and the best single judge, per subset."""
    import matplotlib.pyplot as plt

    subsets = table["stratum"].values.tolist()
    fig, axes = plt.subplots(1, len(subsets), figsize=(3.2 * len(subsets), 3.2), sharey=True)
    axes = np.atleast_1d(axes)
    styles = {
        "best-judge": ("C0", "o", "best single judge (chosen on the labels)"),
        "oracle-judge": ("C0", "s", "best single judge (oracle)"),
        "jury": ("C3", "o", "jury of six (Dawid–Skene)"),
        "jury-both-orders": ("C3", "^", "six judges × both orders"),
    }
    for ax, subset in zip(axes, subsets, strict=True):
        one = table.sel(stratum=subset)
        for approach, (colour, marker, name) in styles.items():
            row = one.sel(approach=approach)
            dashed = "--" if approach in ("oracle-judge", "jury-both-orders") else "-"
            ax.plot(row["labels"], row["width"], dashed, color=colour, marker=marker, label=name)
            for x, w, c in zip(row["labels"].values, row["width"].values,
                               row["coverage"].values, strict=True):  # fmt: skip
                ax.annotate(f"{c:.2f}", (x, w), fontsize=6, textcoords="offset points",
                            xytext=(2, 3), color=colour)  # fmt: skip
        ax.set_title(subset.replace("LLMBar/", ""), fontsize=9)
        ax.set_xlabel("labelled items")
    axes[0].set_ylabel(f"mean width of the {table.attrs['ci_prob']:.0%} interval")
    axes[0].legend(fontsize=7, loc="upper right")
    fig.suptitle("LLMBar: a jury of judges against the best single judge (numbers: coverage)")
    fig.tight_layout()
    return fig
