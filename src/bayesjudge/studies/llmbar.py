"""LLMBar case study: coverage and bias on real judge verdicts over random labelling splits.

Real data (Zeng et al., *Evaluating Large Language Models at Evaluating Instruction
Following*, ICLR 2024; loaded by :func:`bayesjudge.datasets.load_llmbar`): every item has a
known gold label, so the true θ of any set of items is known and the estimators can be scored
against it on the judges' actual verdicts, not on simulated ones.

**Vocabulary.** Z = 1 when output 1 is the better one, Ẑ = 1 when the judge picks output 1;
θ is the share of items whose first output is better. Verdicts: strategy ``Vanilla_NoRules``
with the outputs in their original order (``swap=False``), the setting of the numbers quoted in
the data README (GPT-4: J ≈ 0.84 on Natural, 0.30 on Adversarial/Neighbor; ChatGPT: J ≈ 0.61
and −0.66). Judges (systems): GPT-4, PaLM2, ChatGPT, LLaMA2, ChatGPT-0301, Falcon.

**Strata (two ξ).** ``xi="subset"``: the five LLMBar subsets (Natural and the four
Adversarial ones, 46-134 items each). ``xi="longer"``: the same items grouped by which output
has more characters (``output_1``: 192 items, ``output_2``: 225; the 2 ties are left out and
counted in ``attrs["ties_dropped"]``); judges are known to favour the longer output.

**Splits: the random labelling design.** The judge grades every item of a stratum; in each
replication humans "label" a random subset of them: ``round(share × N)`` items drawn without
replacement (default share ½, so 23-67 per subset); the rest stay unlabelled. This is the
*random* labelling design (``design="random"``, see ``docs/labelling-design.md``), not Lee et
al.'s stratified one: the labelled items were not chosen by their human label, so the number
of them that are truly correct, m1 ~ Binomial(m0 + m1, θ), is evidence about θ. Each item is
counted once: n, k count the unlabelled items, m0, tn, m1, tp the labelled ones with their
verdicts. The split is per item, shared by all judges (one human labelling of one random item
set, every judge calibrated on it). An unparsed verdict (8 of PaLM2's, 1 of LLaMA2's on these
subsets) drops that item from that judge's counts only.

**Estimands** (dim ``estimand``). ``"test-set"``: the **test-set θ** of the random design, the
share of Z = 1 among all N = n + m0 + m1 items of the split that the judge has a verdict for
(labelled and unlabelled) — what a practitioner who evaluated these items wants to know. The
splits partition the whole stratum, so it is the stratum share θ_S of the judge's items, the
same in every split. ``"unlabelled"``: the share of Z = 1 among the n unlabelled items only
(θ_u, which varies over the splits; E[θ_u] = θ_S, so the biases agree in expectation). The
intervals target a population θ and are conservative for both, for different reasons: for θ_u
because they carry the binomial variance θ(1 − θ)/n of the unlabelled items' truth, which θ_u
(known given the items) lacks (i.i.d. splits from an infinite population give the same
coverage of θ_u); for the test-set θ because the labelled and unlabelled sets are each part of
a finite stratum (finite-population correction).

**Approaches** (dim ``approach``, chosen with ``methods=``; coords ``estimator``,
``calibration`` and ``design`` (the labelling design the approach declares: ``"stratified"``,
``"random"`` or ``"none"``) on it; not called ``method`` because ``xarray``'s ``sel`` has an
argument of that name):

``naive``
    k / n with its Wilson interval (no calibration).
``lr-stratum``, ``lr-pooled``
    Rogan–Gladen, clipped to [0, 1], with the Lang–Reiczigel interval; calibration from the
    judge's calibration items of the same stratum (``stratum``) or of all strata pooled
    (``pooled``: one q0, q1 per judge, applied to every stratum's test counts).
``bayes-stratum``, ``bayes-pooled``
    Exact posterior (:func:`bayesjudge.core.exact.exact_theta_interval`, flat Beta(1, 1)
    priors on θ, q0, q1), median and equal-tailed interval, with the same two calibration
    sets, **declaring the split stratified** (m0, m1 treated as fixed by design: the answer a
    user gets who does not declare the random design). The pooled one is the posterior of θ
    given that stratum's unlabelled counts and the pooled calibration counts (the shared-q
    model without the other strata's counts, which carry almost no information on q).
``bayes-random``
    The same exact posterior with ``design="random"`` (the truth counts of the labelled items
    enter the likelihood, m1 ~ Binomial(m0 + m1, θ)); per-stratum calibration.
``likelihood``
    Maximum likelihood under the random design (Tenenbein's double-sampling estimator) with
    its profile-likelihood interval (:func:`bayesjudge.core.likelihood.likelihood_interval`);
    per-stratum calibration.
``ppi++``
    PPI++ (:func:`bayesjudge.core.ppi.ppi_mean`, tuned λ, Wald interval), which assumes the
    random design; per-stratum calibration. NaN (undefined) where the labelled items of a
    split have one human label only.
``likelihood-test-set``
    The interval of the **test-set θ** itself
    (:func:`bayesjudge.core.likelihood.test_set_interval`: the labelled items' known truth
    plus a prediction of the unlabelled ones; the point estimate is the ``likelihood`` one).
    The only approach whose interval targets the test-set θ rather than a population θ.
``human-only``
    The labelled items alone: m1 / (m0 + m1) with its Wilson interval
    (:func:`bayesjudge.core.likelihood.human_only`), the baseline a judge has to beat (Lee
    et al. Sec. 6).
``bayes-hierarchical``
    :func:`bayesjudge.fit` with ``calibration="hierarchical", pool_over="stratum"``: per
    judge, the strata's q0, q1 are partially pooled (logit-normal around a judge-level mean
    with a fitted scale). One NUTS fit per replication over all judges × strata (one compiled
    structure, reused), on the first ``bayes_reps`` replications only. Posterior median and
    equal-tailed interval of θ. ConvergenceWarnings are caught and counted
    (``warning_share``), as are fits with a divergence (``divergence_share``).

**Table** (dims ``judge`` × ``stratum`` × ``approach`` × ``estimand``; coord ``xi`` on
stratum):
``coverage``, ``bias`` (mean of estimate − θ over the replications where the estimate is
defined), ``length`` (mean interval length), ``rmse``, each with ``<name>_mcse``;
``undefined_share`` (Rogan–Gladen undefined: q̂0 + q̂1 = 1, or a calibration set without one of
the labels; for PPI++ and the likelihood interval: no estimate; those replications keep their
interval, [0, 1] where the estimator gives none, and are left out of the bias); ``reps_used``;
``width_ratio`` (judge × stratum × approach, with ``width_ratio_mcse``): the mean over the
splits of the interval's length divided by the length of the ``bayes-stratum`` interval of
the same split (the stratified-declared answer; NaN unless ``bayes-stratum`` runs): below 1 is
width gained; ``bias_asymptotic`` (the bias with the whole stratum's
p, q0, q1 plugged in: p − θ_S for naive, 0 for per-stratum calibration, the clipped
Rogan–Gladen value with the judge's pooled q0, q1 minus θ_S for pooled calibration, NaN for
the hierarchical model); per (judge, stratum) the stratum's ``theta``, ``q0``, ``q1``,
``youden``, ``p`` (share of verdicts "1"), ``items`` (with a verdict), ``missing`` (unparsed
verdicts), ``calibration_items`` (calibration items per split); and ``warning_share``,
``divergence_share`` of the hierarchical fits (one fit per split over all strata of a ξ, so the
same value on every stratum of that ξ).

**Seeding.** A stratum's splits come from a stream keyed by the seed, ξ, the stratum's name
and ``share`` (not by its position), so they are the same whichever judges or other strata
run; the hierarchical fits' seeds come from a stream keyed by ξ.
"""

from __future__ import annotations

import json
import time
import warnings
import zlib
from collections.abc import Sequence

import numpy as np
import xarray as xr

from bayesjudge._lazy import bayesian
from bayesjudge.core.correction import lang_reiczigel_interval
from bayesjudge.core.exact import exact_theta_interval
from bayesjudge.core.kernels import rogan_gladen_counts
from bayesjudge.core.likelihood import human_only, likelihood_interval, test_set_interval
from bayesjudge.core.naive import naive
from bayesjudge.core.ppi import ppi_mean
from bayesjudge.data import JudgeCounts
from bayesjudge.datasets import load_llmbar
from bayesjudge.studies._framework import (
    StudyResult,
    check_number,
    check_reps,
    check_seed,
    mcse_mean,
    mcse_proportion,
    point_rngs,
    progress_bar,
    study_attrs,
)
from bayesjudge.warnings import ConvergenceWarning, SmallSampleWarning

__all__ = [
    "DEFAULT_SEED",
    "JUDGES",
    "METHODS",
    "QUICK_OPTIONS",
    "QUICK_REPS",
    "RANDOM_METHODS",
    "SUBSETS",
    "WIDTH_REFERENCE",
    "XIS",
    "plot",
    "run",
    "split_masks",
    "stratum_data",
]

NAME = "llmbar"
DEFAULT_SEED = 20_240_116
JUDGES = ("GPT-4", "PaLM2", "ChatGPT", "LLaMA2", "ChatGPT-0301", "Falcon")
SUBSETS = (
    "LLMBar/Natural",
    "LLMBar/Adversarial/Neighbor",
    "LLMBar/Adversarial/GPTInst",
    "LLMBar/Adversarial/GPTOut",
    "LLMBar/Adversarial/Manual",
)
XIS = ("subset", "longer")
LENGTH_STRATA = ("output_1", "output_2")
METHODS = (
    "naive",
    "lr-stratum",
    "lr-pooled",
    "bayes-stratum",
    "bayes-pooled",
    "bayes-hierarchical",
    "bayes-random",
    "likelihood",
    "ppi++",
    "likelihood-test-set",
    "human-only",
)
#: The random-design estimators (per-stratum calibration, labelled items' truth counts used).
RANDOM_METHODS = ("bayes-random", "likelihood", "ppi++", "likelihood-test-set", "human-only")
#: The approach every interval's length is compared with (``width_ratio``).
WIDTH_REFERENCE = "bayes-stratum"
ESTIMANDS = ("test-set", "unlabelled")
_ESTIMATOR = {
    "naive": "naive",
    "lr-stratum": "lang-reiczigel",
    "lr-pooled": "lang-reiczigel",
    "bayes-stratum": "bayes",
    "bayes-pooled": "bayes",
    "bayes-hierarchical": "bayes",
    "bayes-random": "bayes",
    "likelihood": "likelihood",
    "ppi++": "ppi++",
    "likelihood-test-set": "likelihood",
    "human-only": "human-only",
}
_CALIBRATION = {
    "naive": "none",
    "lr-stratum": "stratum",
    "lr-pooled": "pooled",
    "bayes-stratum": "stratum",
    "bayes-pooled": "pooled",
    "bayes-hierarchical": "hierarchical",
    "bayes-random": "stratum",
    "likelihood": "stratum",
    "ppi++": "stratum",
    "likelihood-test-set": "stratum",
    "human-only": "stratum",
}
_DESIGN = {m: "random" if m in RANDOM_METHODS else "stratified" for m in METHODS}
_DESIGN["naive"] = "none"
LABELS = {
    "naive": "naive k/n (Wilson)",
    "lr-stratum": "RG + Lang–Reiczigel, per-stratum calibration",
    "lr-pooled": "RG + Lang–Reiczigel, pooled calibration",
    "bayes-stratum": "exact Bayes, per-stratum calibration",
    "bayes-pooled": "exact Bayes, pooled calibration",
    "bayes-hierarchical": "Bayes (MCMC), hierarchical calibration",
    "bayes-random": "exact Bayes, random design",
    "likelihood": "profile likelihood, random design",
    "ppi++": "PPI++, random design",
    "likelihood-test-set": "test-set θ interval, random design",
    "human-only": "labelled items alone (Wilson)",
}
#: ``bayesjudge study llmbar --quick``: 200 splits for the closed forms and the exact
#: posteriors (seconds) and 4 short hierarchical fits per ξ.
QUICK_REPS = 200
QUICK_OPTIONS = {"bayes_reps": 4, "draws": 300, "tune": 300, "chains": 2}


# --------------------------------------------------------------------------- data


def _key(text: str) -> int:
    """Return a stable number for a name (value-keyed seeds need numbers)."""
    return zlib.crc32(text.encode("utf-8"))


def stratum_data(frame, judges: Sequence[str], xi: str, strata: Sequence[str]) -> dict:
    """Item-level arrays of each stratum: truth, verdicts and which verdicts are present.

    Parameters
    ----------
    frame : pandas.DataFrame
        From :func:`bayesjudge.datasets.load_llmbar` with one strategy and one swap value.
    judges : sequence of str
        Evaluators, in the order of the result's rows.
    xi : {"subset", "longer"}
        The column defining the strata.
    strata : sequence of str
        The strata to return.

    Returns
    -------
    dict
        ``{stratum: {"z": (N,) bool, "v": (J, N) bool, "valid": (J, N) bool, "items": list of
        (subset, item)}}`` with items sorted by (subset, item).

    Examples
    --------
    >>> import pandas as pd
    >>> from bayesjudge.studies.llmbar import stratum_data
    >>> frame = pd.DataFrame({"subset": "s", "item": [0, 0, 1, 1], "evaluator": ["a", "b"] * 2,
    ...                       "human": [True, True, False, False],
    ...                       "judge": pd.array([True, None, True, False], dtype="boolean")})
    >>> d = stratum_data(frame, ["a", "b"], "subset", ["s"])["s"]
    >>> d["z"].tolist(), d["valid"].tolist()
    ([True, False], [[True, True], [False, True]])
    """
    import pandas as pd

    out = {}
    for stratum in strata:
        part = frame[frame[xi] == stratum]
        items = sorted(set(zip(part["subset"], part["item"], strict=True)))
        index = {item: i for i, item in enumerate(items)}
        z = np.zeros(len(items), dtype=bool)
        v = np.zeros((len(judges), len(items)), dtype=bool)
        valid = np.zeros((len(judges), len(items)), dtype=bool)
        cols = zip(part["subset"], part["item"], part["evaluator"], part["human"], part["judge"],
                   strict=True)  # fmt: skip
        judge_index = {j: a for a, j in enumerate(judges)}
        for subset, item, judge, human, verdict in cols:
            i = index[(subset, item)]
            z[i] = bool(human)
            if judge in judge_index and not pd.isna(verdict):
                v[judge_index[judge], i] = bool(verdict)
                valid[judge_index[judge], i] = True
        out[stratum] = {"z": z, "v": v, "valid": valid, "items": items}
    return out


def split_masks(size: int, share: float, reps: int, rng) -> np.ndarray:
    """Calibration masks of ``reps`` random splits of ``size`` items, ``round(share × size)`` each.

    Parameters
    ----------
    size : int
        Items in the stratum.
    share : float
        Share of them drawn for calibration (at least one item, and one left for test).
    reps : int
        Number of splits.
    rng : numpy.random.Generator
        Source of the splits.

    Returns
    -------
    numpy.ndarray
        Bool array (reps, size): True for a calibration item. Each row is a uniformly random
        subset of the given size (the ranks of i.i.d. uniforms).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesjudge.studies.llmbar import split_masks
    >>> masks = split_masks(10, 0.5, 3, np.random.default_rng(0))
    >>> masks.sum(axis=1).tolist()
    [5, 5, 5]
    """
    m = min(max(round(share * size), 1), max(size - 1, 1))
    ranks = np.argsort(rng.random((reps, size)), axis=1)
    masks = np.zeros((reps, size), dtype=bool)
    np.put_along_axis(masks, ranks[:, :m], True, axis=1)
    return masks


def _counts(data: dict, masks: np.ndarray) -> dict[str, np.ndarray]:
    """Per (rep, judge) counts of one stratum under the given calibration masks."""
    z, v, valid = data["z"], data["v"], data["valid"]
    calib = masks.astype(np.int64)
    test = 1 - calib
    pos = (valid & z).astype(np.int64)
    neg = (valid & ~z).astype(np.int64)
    return {
        "n": test @ valid.T.astype(np.int64),
        "k": test @ (valid & v).T.astype(np.int64),
        "z_test": test @ pos.T,
        "m1": calib @ pos.T,
        "tp": calib @ (pos.astype(bool) & v).T.astype(np.int64),
        "m0": calib @ neg.T,
        "tn": calib @ (neg.astype(bool) & ~v).T.astype(np.int64),
    }


# --------------------------------------------------------------------------- estimators


def _rogan_gladen(k, n, tn, m0, tp, m1):
    """Clipped RG estimate, NaN where it is undefined (Ĵ = 0 or an empty calibration class)."""
    theta, identified = rogan_gladen_counts(k, n, tn, m0, tp, m1, clip=True)
    return np.where(identified, theta, np.nan), ~identified  # J = 0 policy: NaN, flagged


def _lang_reiczigel(k, n, tn, m0, tp, m1, alpha):
    estimate, undefined = _rogan_gladen(k, n, tn, m0, tp, m1)
    with np.errstate(divide="ignore", invalid="ignore"):
        q0 = np.where(m0 > 0, tn / np.maximum(m0, 1), 0.5)
        q1 = np.where(m1 > 0, tp / np.maximum(m1, 1), 0.5)
    lower, upper = lang_reiczigel_interval(k / n, q0, q1, n, m0, m1, alpha=alpha)
    return estimate, np.asarray(lower), np.asarray(upper), undefined


def _exact(k, n, tn, m0, tp, m1, alpha, design="stratified"):
    """Exact posterior median and ETI, each distinct count tuple computed once."""
    shape = np.shape(k)
    arrays = [np.broadcast_to(a, shape).ravel() for a in (k, n, tn, m0, tp, m1)]
    tuples = np.stack(arrays, axis=1)
    empty = (tuples[:, 3] == 0) | (tuples[:, 5] == 0)
    median, lower, upper = (np.full(tuples.shape[0], np.nan) for _ in range(3))
    unique, inverse = np.unique(tuples[~empty], axis=0, return_inverse=True)
    if len(unique):
        res = exact_theta_interval(*unique.T, ci_prob=1.0 - alpha, design=design)
        inverse = inverse.ravel()
        median[~empty] = res.median[inverse]
        lower[~empty] = res.lower[inverse]
        upper[~empty] = res.upper[inverse]
    lower[empty], upper[empty] = 0.0, 1.0
    return (median.reshape(shape), lower.reshape(shape), upper.reshape(shape),
            empty.reshape(shape))  # fmt: skip


def _likelihood(k, n, tn, m0, tp, m1, alpha, estimand="population"):
    """Random-design MLE with its profile-likelihood interval; [0, 1] where it has none."""
    interval = likelihood_interval if estimand == "population" else test_set_interval
    res = interval(k, n, tn, m0, tp, m1, alpha=alpha)
    estimate, lower, upper = (np.asarray(v, dtype=float) for v in res)
    undefined = ~np.isfinite(estimate)
    lower = np.where(np.isfinite(lower), lower, 0.0)  # no interval: the whole range
    upper = np.where(np.isfinite(upper), upper, 1.0)
    return estimate, lower, upper, undefined


def _human_only(tn, m0, tp, m1, alpha):
    """Estimate θ by the labelled share m1 / (m0 + m1), Wilson interval."""
    res = human_only(tn, m0, tp, m1, alpha=alpha)
    estimate, lower, upper = (np.asarray(v, dtype=float) for v in res)
    return estimate, lower, upper, ~np.isfinite(estimate)


def _ppi(k, n, tn, m0, tp, m1, alpha):
    """PPI++ (tuned λ); NaN where the labelled items have one label, kept as [0, 1]."""
    with warnings.catch_warnings():
        # One-label splits and zero-width intervals: counted in undefined_share / the table.
        warnings.simplefilter("ignore", SmallSampleWarning)
        res = ppi_mean(k, n, tn, m0, tp, m1, alpha=alpha)
    estimate, lower, upper = (np.asarray(v, dtype=float) for v in res[:3])
    undefined = ~np.isfinite(estimate)
    return (estimate, np.where(undefined, 0.0, lower), np.where(undefined, 1.0, upper),
            undefined)  # fmt: skip


def _hierarchical(counts, judges, strata, reps, alpha, draws, tune, chains, seeds, bar):
    """Hierarchical fits of the first ``reps`` replications: median, ETI, warned, diverged."""
    fit = bayesian("fit").fit  # imports PyMC, only when the study fits (bayesjudge._lazy)
    shape = (reps, len(judges), len(strata))
    median, lower, upper = (np.full(shape, np.nan) for _ in range(3))
    warned = np.zeros(reps, dtype=bool)
    diverged = np.zeros(reps, dtype=bool)
    probs = [alpha / 2, 0.5, 1 - alpha / 2]
    for r in range(reps):
        c = JudgeCounts.from_counts(
            **{f: counts[f][r] for f in ("n", "k", "m0", "tn", "m1", "tp")},
            system=list(judges),
            stratum=list(strata),
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = fit(
                c,
                calibration="hierarchical",
                pool_over="stratum",
                aggregate=None,
                draws=draws,
                tune=tune,
                chains=chains,
                random_seed=int(seeds[r]),
            )
        for w in caught:
            if issubclass(w.category, ConvergenceWarning):
                warned[r] = True
            else:  # not ours to hide
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        diverged[r] = bool(result.tree["sample_stats"].dataset["diverging"].any())
        theta = result.posterior["theta"].transpose("chain", "draw", "system", "stratum")
        values = theta.to_numpy().reshape(-1, len(judges), len(strata))
        lower[r], median[r], upper[r] = np.quantile(values, probs, axis=0)
        bar.update()
    return median, lower, upper, warned, diverged


# --------------------------------------------------------------------------- the study


def _check_names(name, values, allowed, *, allow_other=False):
    values = (values,) if isinstance(values, str) else tuple(values)
    if not values or len(set(values)) != len(values):
        raise ValueError(f"{name} must be distinct names; got {list(values)}.")
    unknown = [v for v in values if v not in allowed]
    if unknown and not allow_other:
        raise ValueError(f"{name}: unknown {unknown}; choose from {list(allowed)}.")
    return values


def _summaries(estimate, lower, upper, undefined, truth):
    """Coverage, bias, rmse (over defined estimates) and length, with MC-SEs; truth (R, ...)."""
    covered = (lower <= truth) & (truth <= upper)
    reps = covered.shape[0]
    error = np.where(undefined, np.nan, estimate - truth)
    defined = (~undefined).sum(axis=0)
    # All-undefined cells give NaN (numpy warns "mean of empty slice"; that NaN is the answer).
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        bias = np.nanmean(error, axis=0)
        sd = np.nanstd(error, axis=0, ddof=1)
        bias_mcse = sd / np.sqrt(defined)
        sq = error**2
        mse = np.nanmean(sq, axis=0)
        mse_mcse = np.nanstd(sq, axis=0, ddof=1) / np.sqrt(defined)
        rmse = np.sqrt(mse)
        rmse_mcse = mse_mcse / (2 * rmse)
    length = upper - lower
    share = covered.mean(axis=0)
    return {
        "coverage": (share, mcse_proportion(share, reps)),
        "bias": (bias, bias_mcse),
        "rmse": (rmse, rmse_mcse),
        "length": (length.mean(axis=0), mcse_mean(length, axis=0)),
    }


def run(
    *,
    reps: int = 200,
    random_seed: int = DEFAULT_SEED,
    progress: bool = False,
    path=None,
    judges: Sequence[str] = JUDGES,
    subsets: Sequence[str] = SUBSETS,
    xi: Sequence[str] = XIS,
    methods: Sequence[str] = METHODS,
    share: float = 0.5,
    strategy: str = "Vanilla_NoRules",
    swap: bool = False,
    alpha: float = 0.05,
    bayes_reps: int = 100,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
) -> StudyResult:
    """Run the LLMBar case study (real verdicts, random calibration/test splits).

    Parameters
    ----------
    reps : int, default 200
        Random calibration/test splits per stratum.
    random_seed : int, default DEFAULT_SEED
        Seed; each stratum's splits come from a stream keyed by its name (see module notes).
    progress : bool, default False
        Progress bar on stderr.
    path : str or pathlib.Path, optional
        A folder holding another copy of the LLMBar tables; default ``$BAYESJUDGE_DATA`` if
        set, else the tables shipped with bayesjudge (see
        :func:`bayesjudge.datasets.load_llmbar`).
    judges : sequence of str, default JUDGES
        Evaluators (systems).
    subsets : sequence of str, default SUBSETS
        LLMBar subsets: the strata under ``xi="subset"`` and the items of ``xi="longer"``.
    xi : sequence of {"subset", "longer"}, default both
        The stratifications to run.
    methods : sequence of str, default METHODS
        Any of ``METHODS``; leaving ``"bayes-hierarchical"`` out skips MCMC.
    share : float, default 0.5
        Share of each stratum's items used for calibration in a split.
    strategy : str, default "Vanilla_NoRules"
        Prompting strategy whose verdicts are scored.
    swap : bool, default False
        Use the verdicts with the outputs shown in the original order (False) or swapped.
    alpha : float, default 0.05
        Intervals have nominal coverage 1 - alpha.
    bayes_reps : int, default 100
        Replications (the first ones) fitted by the hierarchical model, at most ``reps``.
    draws, tune, chains : int, default 1000, 1000, 4
        NUTS settings of the hierarchical fits.

    Returns
    -------
    StudyResult
        Table described in the module docstring; ``attrs`` hold the settings and ``seconds``.

    Examples
    --------
    >>> from bayesjudge.studies import llmbar
    >>> res = llmbar.run(reps=20, judges=["GPT-4"], subsets=["LLMBar/Natural"], xi=["subset"],
    ...                  methods=["naive", "lr-stratum"])  # the tables shipped with bayesjudge
    >>> dict(res.table.sizes)["judge"], res.table.attrs["reps"]
    (1, 20)
    """
    reps = check_reps(reps)
    random_seed = check_seed(random_seed)
    judges = _check_names("judges", judges, JUDGES, allow_other=True)
    subsets = _check_names("subsets", subsets, SUBSETS, allow_other=True)
    xis = _check_names("xi", xi, XIS)
    methods = _check_names("methods", methods, METHODS)
    share = check_number("share", share, low=0, high=1, low_open=True, high_open=True)
    alpha = check_number("alpha", alpha, low=0, high=1, low_open=True, high_open=True)
    if not isinstance(swap, bool | np.bool_):
        raise ValueError(f"swap must be True or False; got {swap!r}.")
    hier = "bayes-hierarchical" in methods
    if hier:
        bayes_reps = check_number("bayes_reps", bayes_reps, low=2, integer=True)
        if bayes_reps > reps:
            raise ValueError(f"bayes_reps ({bayes_reps}) must not exceed reps ({reps}).")
        draws = check_number("draws", draws, low=10, integer=True)
        tune = check_number("tune", tune, low=10, integer=True)
        chains = check_number("chains", chains, low=1, integer=True)

    frame = load_llmbar(
        path, evaluator=list(judges), strategy=strategy, subset=list(subsets), swap=bool(swap),
        warn=False,
    )  # fmt: skip
    absent = [
        (j, s) for j in judges for s in subsets
        if not ((frame["evaluator"] == j) & (frame["subset"] == s)).any()
    ]  # fmt: skip
    if absent:
        raise ValueError(
            f"no {strategy} verdicts for (judge, subset) {absent}; choose judges and subsets "
            "that have them (ChatGPT-0301 and Falcon lack the Processed subsets)."
        )
    ties = int(frame.loc[frame["longer"] == "tie", ["subset", "item"]].drop_duplicates().shape[0])

    strata_of = {"subset": list(subsets), "longer": list(LENGTH_STRATA)}
    all_strata = [s for x in xis for s in strata_of[x]]
    dims4 = ("judge", "stratum", "approach", "estimand")
    shape4 = (len(judges), len(all_strata), len(methods), len(ESTIMANDS))
    names = ("coverage", "bias", "rmse", "length")
    values = {v: np.full(shape4, np.nan) for v in names}
    mcse = {v: np.full(shape4, np.nan) for v in names}
    shape3 = shape4[:3]
    undefined_share, reps_used, bias_asym = (np.full(shape3, np.nan) for _ in range(3))
    width_ratio, width_ratio_mcse = np.full(shape3, np.nan), np.full(shape3, np.nan)
    desc = {
        v: np.full(shape4[:2], np.nan)
        for v in ("theta", "q0", "q1", "youden", "p", "items", "missing", "calibration_items")
    }
    warning_share = np.full(len(xis), np.nan)
    divergence_share = np.full(len(xis), np.nan)
    seconds = {"data": 0.0, "closed": 0.0, "exact": 0.0, "hierarchical": 0.0}
    bar = progress_bar(len(xis) * (1 + (bayes_reps if hier else 0)), f"study {NAME}", progress)

    for x_index, x in enumerate(xis):
        start = time.perf_counter()
        strata = strata_of[x]
        offset = all_strata.index(strata[0])
        data = stratum_data(frame, judges, x, strata)
        per = {f: [] for f in ("n", "k", "z_test", "m0", "tn", "m1", "tp")}
        for s in strata:
            rng = point_rngs(random_seed, XIS.index(x), _key(s), share)[0]
            masks = split_masks(len(data[s]["z"]), share, reps, rng)
            for f, arr in _counts(data[s], masks).items():
                per[f].append(arr)
        counts = {f: np.stack(a, axis=-1) for f, a in per.items()}  # (R, J, S)
        if (counts["n"] == 0).any():
            raise ValueError("a judge has no test verdicts in some stratum; raise 1 - share.")
        pooled = {f: counts[f].sum(axis=-1, keepdims=True) for f in ("m0", "tn", "m1", "tp")}
        theta_u = counts["z_test"] / counts["n"]  # the unlabelled items' share
        # The random design's test-set θ: all n + m0 + m1 items of the split (= θ_S here).
        theta_set = (counts["z_test"] + counts["m1"]) / (counts["n"] + counts["m0"] + counts["m1"])
        # Whole-stratum quantities per (judge, stratum).
        whole = {}
        for f in ("z", "v", "pos", "neg", "valid", "tp", "tn"):
            whole[f] = np.zeros((len(judges), len(strata)))
        for b, s in enumerate(strata):
            d = data[s]
            whole["valid"][:, b] = d["valid"].sum(axis=1)
            whole["pos"][:, b] = (d["valid"] & d["z"]).sum(axis=1)
            whole["neg"][:, b] = (d["valid"] & ~d["z"]).sum(axis=1)
            whole["v"][:, b] = (d["valid"] & d["v"]).sum(axis=1)
            whole["tp"][:, b] = (d["valid"] & d["z"] & d["v"]).sum(axis=1)
            whole["tn"][:, b] = (d["valid"] & ~d["z"] & ~d["v"]).sum(axis=1)
            desc["missing"][:, offset + b] = (~d["valid"]).sum(axis=1)
            desc["calibration_items"][:, offset + b] = min(
                max(round(share * len(d["z"])), 1), max(len(d["z"]) - 1, 1)
            )
        theta_s = whole["pos"] / whole["valid"]
        q0_s, q1_s = whole["tn"] / whole["neg"], whole["tp"] / whole["pos"]
        p_s = whole["v"] / whole["valid"]
        q0_pool = whole["tn"].sum(axis=1, keepdims=True) / whole["neg"].sum(axis=1, keepdims=True)
        q1_pool = whole["tp"].sum(axis=1, keepdims=True) / whole["pos"].sum(axis=1, keepdims=True)
        cols = slice(offset, offset + len(strata))
        desc["theta"][:, cols], desc["q0"][:, cols], desc["q1"][:, cols] = theta_s, q0_s, q1_s
        desc["youden"][:, cols], desc["p"][:, cols] = q0_s + q1_s - 1, p_s
        desc["items"][:, cols] = whole["valid"]
        seconds["data"] += time.perf_counter() - start

        truths = {"test-set": theta_set, "unlabelled": theta_u}
        c = counts
        results = {}
        start = time.perf_counter()
        if "naive" in methods:
            est, lo, hi = naive(c["k"], c["n"], alpha=alpha)
            results["naive"] = (np.asarray(est), np.asarray(lo), np.asarray(hi),
                                np.zeros(est.shape, dtype=bool))  # fmt: skip
        if "lr-stratum" in methods:
            results["lr-stratum"] = _lang_reiczigel(
                c["k"], c["n"], c["tn"], c["m0"], c["tp"], c["m1"], alpha
            )
        if "lr-pooled" in methods:
            cp = {f: np.broadcast_to(pooled[f], c["k"].shape) for f in pooled}
            results["lr-pooled"] = _lang_reiczigel(
                c["k"], c["n"], cp["tn"], cp["m0"], cp["tp"], cp["m1"], alpha
            )
        seconds["closed"] += time.perf_counter() - start
        start = time.perf_counter()
        if "bayes-stratum" in methods:
            results["bayes-stratum"] = _exact(
                c["k"], c["n"], c["tn"], c["m0"], c["tp"], c["m1"], alpha
            )
        if "bayes-pooled" in methods:
            results["bayes-pooled"] = _exact(
                c["k"], c["n"], pooled["tn"], pooled["m0"], pooled["tp"], pooled["m1"], alpha
            )
        if "bayes-random" in methods:
            results["bayes-random"] = _exact(
                c["k"], c["n"], c["tn"], c["m0"], c["tp"], c["m1"], alpha, design="random"
            )
        seconds["exact"] += time.perf_counter() - start
        start = time.perf_counter()
        if "likelihood" in methods:
            results["likelihood"] = _likelihood(
                c["k"], c["n"], c["tn"], c["m0"], c["tp"], c["m1"], alpha
            )
        if "ppi++" in methods:
            results["ppi++"] = _ppi(c["k"], c["n"], c["tn"], c["m0"], c["tp"], c["m1"], alpha)
        if "likelihood-test-set" in methods:
            results["likelihood-test-set"] = _likelihood(
                c["k"], c["n"], c["tn"], c["m0"], c["tp"], c["m1"], alpha, estimand="test-set"
            )
        if "human-only" in methods:
            results["human-only"] = _human_only(c["tn"], c["m0"], c["tp"], c["m1"], alpha)
        seconds["closed"] += time.perf_counter() - start
        bar.update()
        if hier:
            start = time.perf_counter()
            seeds = point_rngs(random_seed, XIS.index(x), 1)[0].integers(
                0, 2**31 - 1, size=bayes_reps
            )
            med, lo, hi, warned, diverged = _hierarchical(
                counts, judges, strata, bayes_reps, alpha, draws, tune, chains, seeds, bar
            )
            results["bayes-hierarchical"] = (med, lo, hi, np.zeros(med.shape, dtype=bool))
            warning_share[x_index] = warned.mean()
            divergence_share[x_index] = diverged.mean()
            seconds["hierarchical"] += time.perf_counter() - start

        with np.errstate(divide="ignore", invalid="ignore"):
            rg_pool = np.clip((p_s + q0_pool - 1) / (q0_pool + q1_pool - 1), 0, 1)
        asymptotic = {
            "naive": p_s - theta_s,
            "lr-stratum": np.zeros_like(theta_s),
            "bayes-stratum": np.zeros_like(theta_s),
            "lr-pooled": rg_pool - theta_s,
            "bayes-pooled": rg_pool - theta_s,
            "bayes-hierarchical": np.full_like(theta_s, np.nan),
            **{m: np.zeros_like(theta_s) for m in RANDOM_METHODS},
        }
        reference = results.get(WIDTH_REFERENCE)
        for i_m, method in enumerate(methods):
            estimate, lower, upper, undefined = results[method]
            used = estimate.shape[0]
            undefined_share[:, cols, i_m] = undefined.mean(axis=0)
            reps_used[:, cols, i_m] = used
            bias_asym[:, cols, i_m] = asymptotic[method]
            if reference is not None:
                with np.errstate(divide="ignore", invalid="ignore"):
                    ratio = (upper - lower) / (reference[2][:used] - reference[1][:used])
                width_ratio[:, cols, i_m] = ratio.mean(axis=0)
                width_ratio_mcse[:, cols, i_m] = mcse_mean(ratio, axis=0)
            for i_e, estimand in enumerate(ESTIMANDS):
                truth = truths[estimand][:used]
                for var, (val, err) in _summaries(estimate, lower, upper, undefined,
                                                  truth).items():  # fmt: skip
                    values[var][:, cols, i_m, i_e] = val
                    mcse[var][:, cols, i_m, i_e] = err

    data_vars = {}
    for var in names:
        data_vars[var] = (dims4, values[var])
        data_vars[f"{var}_mcse"] = (dims4, mcse[var])
    for var, arr in (("undefined_share", undefined_share), ("reps_used", reps_used),
                     ("bias_asymptotic", bias_asym), ("width_ratio", width_ratio),
                     ("width_ratio_mcse", width_ratio_mcse)):  # fmt: skip
        data_vars[var] = (dims4[:3], arr)
    for var, arr in desc.items():
        data_vars[var] = (dims4[:2], arr)
    # The hierarchical fits' shares belong to a ξ; stored on each stratum of that ξ.
    of_stratum = [xis.index(x) for x in xis for _ in strata_of[x]]
    data_vars["warning_share"] = (("stratum",), warning_share[of_stratum])
    data_vars["divergence_share"] = (("stratum",), divergence_share[of_stratum])
    coords = {
        "judge": list(judges),
        "stratum": all_strata,
        "approach": list(methods),
        "estimand": list(ESTIMANDS),
        "xi": ("stratum", [x for x in xis for _ in strata_of[x]]),
        "estimator": ("approach", [_ESTIMATOR[m] for m in methods]),
        "calibration": ("approach", [_CALIBRATION[m] for m in methods]),
        "design": ("approach", [_DESIGN[m] for m in methods]),
    }
    table = xr.Dataset(data_vars, coords=coords)
    table.attrs = study_attrs(
        NAME,
        reps=reps,
        random_seed=random_seed,
        judges=list(judges),
        subsets=list(subsets),
        xi=list(xis),
        methods=list(methods),
        share=float(share),
        strategy=strategy,
        swap=bool(swap),
        alpha=float(alpha),
        ci_prob=1.0 - float(alpha),
        bayes_reps=int(bayes_reps) if hier else 0,
        draws=int(draws) if hier else 0,
        tune=int(tune) if hier else 0,
        chains=int(chains) if hier else 0,
        ties_dropped=ties,
        estimand="test-set θ (all items of the split; primary) and the unlabelled items' share",
        design="random",
        width_reference=WIDTH_REFERENCE if WIDTH_REFERENCE in methods else "",
        bayes_point="posterior median",
        bayes_priors="theta, q0, q1 ~ Beta(1, 1); hierarchical: bayesjudge.Priors() defaults",
    )
    table.attrs["seconds"] = json.dumps({k: round(v, 3) for k, v in seconds.items()})
    return StudyResult(NAME, table, plot)


# --------------------------------------------------------------------------- the figure


def plot(table: xr.Dataset):
    """Coverage and bias by stratum × calibration design, one row per judge.

    Columns: coverage of the test-set θ and bias, for each ξ run. Markers with ±1 MC-SE
    error bars; the coverage panels show the nominal level, the bias panels zero.

    Parameters
    ----------
    table : xarray.Dataset
        The table of :func:`run`.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (close it with ``matplotlib.pyplot.close``).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from bayesjudge.studies import llmbar
    >>> res = llmbar.run(reps=10, judges=["GPT-4"], xi=["subset"], methods=["naive", "lr-stratum"])
    >>> fig = llmbar.plot(res.table)
    >>> len(fig.axes) > 0
    True
    >>> plt.close(fig)
    """
    import matplotlib.pyplot as plt

    xis = list(dict.fromkeys(table["xi"].to_numpy().tolist()))
    judges = table["judge"].to_numpy().tolist()
    methods = table["approach"].to_numpy().tolist()
    nominal = float(table.attrs.get("ci_prob", 0.95))
    ncols = 2 * len(xis)
    fig, axes = plt.subplots(
        len(judges), ncols, figsize=(4.2 * ncols, 2.6 * len(judges) + 0.8), squeeze=False,
        constrained_layout=True,
    )  # fmt: skip
    width = 0.8 / max(len(methods), 1)
    for row, judge in enumerate(judges):
        for c, x in enumerate(xis):
            strata = [
                s for s, of in zip(table["stratum"].to_numpy(), table["xi"].to_numpy(),
                                   strict=True) if of == x
            ]  # fmt: skip
            part = table.sel(judge=judge, estimand="test-set", stratum=strata)
            pos = np.arange(len(strata))
            short = [
                s.replace("LLMBar/Adversarial/", "Adv/").replace("LLMBar/", "")
                + f"\nJ = {float(part['youden'].sel(stratum=s)):.2f}"
                for s in strata
            ]
            for var, ax in (("coverage", axes[row, 2 * c]), ("bias", axes[row, 2 * c + 1])):
                for i, method in enumerate(methods):
                    cell = part.sel(approach=method)
                    shift = (i - (len(methods) - 1) / 2) * width
                    ax.errorbar(
                        pos + shift, cell[var].to_numpy(), yerr=cell[f"{var}_mcse"].to_numpy(),
                        fmt="o", ms=3, capsize=2, lw=1, label=LABELS.get(method, method),
                    )  # fmt: skip
                ax.axhline(nominal if var == "coverage" else 0.0, color="k", lw=0.8, ls="--")
                if var == "coverage":
                    ax.set_ylim(-0.02, 1.02)
                ax.set_xticks(pos, short, fontsize=7)
                ax.set_xlabel("stratum" if x == "subset" else "longer output", fontsize=8)
                ax.set_ylabel("coverage of the test-set θ" if var == "coverage" else
                              "bias (estimate − test-set θ)", fontsize=8)  # fmt: skip
                ax.set_title(f"{judge}: {var} ({'subsets' if x == 'subset' else 'longer output'})",
                             fontsize=9)  # fmt: skip
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8,
               bbox_to_anchor=(0.5, -0.03))  # fmt: skip
    return fig
