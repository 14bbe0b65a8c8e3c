"""``estimate``: closed-form estimates of true accuracy per (system, stratum) as xarray.

This layer sits on top of the numpy/scipy core and the data layer: it takes a
:class:`~bayesjudge.JudgeCounts`, applies one closed-form method to every group at once and
returns a tidy :class:`xarray.Dataset` in the package's interval vocabulary
(``ci_bound = ["lower", "upper"]``, attrs ``ci_prob`` and ``ci_kind``). It also owns the
warnings that need group labels (low judge quality, missing calibration).
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr

from bayesjudge._text import terminal_safe
from bayesjudge._version import __version__
from bayesjudge.categorical_estimate import estimate_categorical
from bayesjudge.categorical_jury_estimate import CATEGORICAL_JURY_METHODS, categorical_jury_estimate
from bayesjudge.core._validation import (
    check_alpha,
    check_design,
    check_lr_alpha,
    check_resamples,
    check_seed,
)
from bayesjudge.core.bootstrap import bootstrap_rogan_gladen
from bayesjudge.core.cluster import cluster_bootstrap, cluster_delta
from bayesjudge.core.correction import lang_reiczigel_interval
from bayesjudge.core.kernels import LOW_J_THRESHOLD, low_j, rogan_gladen_counts
from bayesjudge.core.likelihood import human_only, likelihood_interval, test_set_interval
from bayesjudge.core.naive import naive
from bayesjudge.core.ppi import ppi_mean
from bayesjudge.data import CategoricalCounts, CategoricalJuryCounts, JudgeCounts
from bayesjudge.data.jury import JUDGE, JuryCounts
from bayesjudge.diagnostics import check_pooled_calibration
from bayesjudge.jury_estimate import jury_estimate
from bayesjudge.warnings import LowJudgeQualityWarning, SmallSampleWarning

__all__ = [
    "CLUSTER_METHODS",
    "DEFAULT_CLUSTER_METHOD",
    "DEFAULT_METHODS",
    "ESTIMANDS",
    "LOW_J_THRESHOLD",
    "METHODS",
    "OWN_LABELS_METHODS",
    "estimate",
]

#: Methods understood by :func:`estimate`, with the ``ci_kind`` each one reports.
METHODS = {
    "lang-reiczigel": "adjusted Wald (Lang-Reiczigel)",
    "naive": "Wilson score (for p, not theta)",
    "bootstrap": "percentile bootstrap",
    "ppi++": "Wald (PPI++)",
    "likelihood": "profile likelihood",
    "cluster-delta": "Wald, cluster-robust delta method (items as units)",
    "cluster-bootstrap": "percentile cluster bootstrap (items resampled with their verdicts)",
}

#: The methods that treat the items, not the verdicts, as the independent units: the only ones
#: for counts with repeated verdicts of an item (``counts.has_clusters``).
CLUSTER_METHODS = ("cluster-delta", "cluster-bootstrap")
#: The method ``estimate(method=None)`` uses for counts with repeated verdicts of an item.
DEFAULT_CLUSTER_METHOD = "cluster-delta"
_RESAMPLING = ("bootstrap", "cluster-bootstrap")

#: The methods that read the labelled items' human share m1 / (m0 + m1) as evidence about θ:
#: they need each group's own labelled items and refuse a pooled or shared calibration set.
OWN_LABELS_METHODS = ("likelihood", "ppi++")

#: The method ``estimate(method=None)`` uses for each labelling design (``counts.design``).
DEFAULT_METHODS = {"stratified": "lang-reiczigel", "random": "likelihood"}

#: What ``estimate`` estimates: θ of the population the items come from, or the share truly
#: correct among this evaluation's items (the test-set θ).
ESTIMANDS = ("population", "test-set")

_CALIBRATION_DESIGNS = ("own", "shared")

# The advice wherever pooling the calibration over systems is suggested.
POOLING_CAVEAT = (
    "pooling assumes that the judge's q0 and q1 do not differ between the systems pooled, and "
    "is biased (by the difference amplified by 1/J) where they do; calibration='shared' tests "
    "this on the systems' own calibration counts and warns PooledCalibrationWarning where it "
    "fails, but a silent test does not prove the judge errs alike"
)


def estimate(
    counts: JudgeCounts,
    method: str | None = None,
    alpha: float = 0.05,
    random_seed=None,
    *,
    calibration: str = "own",
    n_resamples: int = 10_000,
    bootstrap_design: str | None = None,
    estimand: str = "population",
    scores=None,
) -> xr.Dataset:
    """Estimate the true accuracy of every (system, stratum) group with a closed-form method.

    Parameters
    ----------
    counts : JudgeCounts
        Sufficient statistics per group (``n, k, m0, tn, m1, tp``) and the labelling design
        (``counts.design``). K-category counts (:class:`~bayesjudge.CategoricalCounts`) go to
        :func:`~bayesjudge.categorical_estimate.estimate_categorical`; several judges' verdict
        patterns (:class:`~bayesjudge.JuryCounts`) take the methods ``"dawid-skene"``
        (default), ``"dawid-skene-bootstrap"``, ``"majority"`` and ``"per-judge"`` (each
        judge's own estimate, with a ``judge`` dim) of
        :func:`~bayesjudge.jury_estimate.jury_estimate` (``docs/juries.md``). Several
        judges' K-category verdicts (:class:`~bayesjudge.data.CategoricalJuryCounts`) take
        ``"dawid-skene"`` (default), ``"dawid-skene-bootstrap"``, ``"plurality"`` and
        ``"per-judge"`` of
        :func:`~bayesjudge.categorical_jury_estimate.categorical_jury_estimate`, with
        ``scores=``.
    method : {None, "likelihood", "lang-reiczigel", "naive", "bootstrap", "ppi++", \
"cluster-delta", "cluster-bootstrap"}
        ``None`` (default): ``"cluster-delta"`` for counts with repeated verdicts of an item
        (``counts.has_clusters``), else the design's default (:data:`DEFAULT_METHODS`),
        ``"lang-reiczigel"`` for the stratified design and ``"likelihood"`` for the random
        one (``"lang-reiczigel"`` there too where the calibration is pooled or shared, which
        ``"likelihood"`` refuses); ``attrs["method"]`` says which was used.
        ``"likelihood"`` (random design only): the closed-form maximum-likelihood estimate
        with its profile-likelihood interval
        (:func:`~bayesjudge.core.likelihood.likelihood_interval`), which uses the human
        labels themselves as evidence about theta.
        ``"lang-reiczigel"``: Rogan-Gladen point estimate with the Lang-Reiczigel adjusted
        Wald interval (Lee et al. eqs. 5-8). ``"naive"``: the share judged correct, ``k / n``,
        with a Wilson interval; it estimates p, not theta, and is biased unless the judge is
        perfect. ``"bootstrap"``: Rogan-Gladen with a percentile bootstrap that resamples the
        test and calibration sets separately. ``"ppi++"``: prediction-powered inference with
        power-tuned lambda; needs each group's own labelled items drawn at random from its
        test distribution (the random design), so it refuses a pooled or shared calibration
        set, whose human share would anchor every group's theta. ``"cluster-delta"`` and
        ``"cluster-bootstrap"``: Rogan-Gladen on ``p̂ = Σk/Σr`` with the items, each with all
        its verdicts, as the independent units
        (:func:`~bayesjudge.core.cluster.cluster_delta`,
        :func:`~bayesjudge.core.cluster.cluster_bootstrap`); the only methods accepted for
        counts with repeated verdicts of an item, whose verdicts are correlated (the others
        would understate the uncertainty; ``counts.without_clusters()`` opts out
        explicitly). See ``docs/repeated-verdicts.md``.
    alpha : float, default 0.05
        One minus the interval's coverage probability (``ci_prob = 1 - alpha``); at least
        1e-300, and at least 1e-6 for ``"lang-reiczigel"`` (see
        :func:`~bayesjudge.core.correction.lang_reiczigel_interval`).
    random_seed : int, numpy.random.Generator or None
        Seed for ``method="bootstrap"`` and ``"cluster-bootstrap"`` (any non-negative
        integer, 2**70 too); checked, but not used, by the other methods.
    calibration : {"own", "shared"}, default "own"
        ``"own"`` corrects each group with its own calibration counts. ``"shared"`` pools the
        calibration counts over all systems within each stratum (Fiedler's shared calibration):
        it lets a system without calibration data of its own be corrected, but pooling
        assumes that the judge's q0 and q1 do not differ between the systems, and is biased
        where they do; check that first (``youden_difference`` on the systems' own counts).
    n_resamples : int, default 10000
        Number of bootstrap resamples (``method="bootstrap"``): at least 100 and at least
        2 / alpha; below 1000 a ``SmallSampleWarning`` says that the interval's ends carry
        Monte Carlo error.
    bootstrap_design : {None, "stratified", "random"}, default None
        How the calibration set was collected (``method="bootstrap"``): ``"stratified"`` fixes
        m0 and m1 by design (as in Lee et al.); ``"random"`` draws calibration items at random.
        None takes the counts' labelling design, ``counts.design``.
    estimand : {"population", "test-set"}, default "population"
        ``"population"``: θ of the population the items were drawn from. ``"test-set"``: the
        share truly correct among this evaluation's items (the labelled ones' known truth
        plus the unlabelled ones'), with
        :func:`~bayesjudge.core.likelihood.test_set_interval`; a closed form exists for
        ``method="likelihood"`` (the random design) only; for the stratified design use
        ``bj.fit(counts, estimand="test-set")``.

    Returns
    -------
    xarray.Dataset
        Dims ``(system, stratum, ci_bound)``. Variables ``estimate`` and ``ci`` (with
        ``ci_bound = ["lower", "upper"]``), the plug-in diagnostics ``p_hat``, ``q0_hat``,
        ``q1_hat`` and ``youden`` (NaN where the group has no items to estimate them from),
        and the human-only baseline ``human_estimate`` and ``human_ci``: each group's own
        labelled items alone, ``m1 / (m0 + m1)`` with a Wilson interval
        (:func:`~bayesjudge.core.likelihood.human_only`). The baseline is NaN under the
        stratified design (m0 and m1 are fixed by design there, so ``m1 / (m0 + m1)``
        estimates nothing), where a group has no labelled items, and where its labelled
        items are copies of a set shared with other groups (they are not its own sample).
        Attrs: ``method`` (the method used), ``method_chosen`` (``"requested"`` or
        ``"design default"``), ``design``, ``estimand``, ``ci_kind``, ``ci_prob``, ``alpha``,
        ``calibration``, ``random_seed``, ``n_resamples``, ``bootstrap_design``,
        ``bayesjudge_version``.

    Raises
    ------
    ValueError
        For an unknown method, calibration or estimand; for ``method="likelihood"`` on
        stratified counts (m1 is then fixed by design and carries no information about
        theta); for ``method="likelihood"`` or ``"ppi++"`` (:data:`OWN_LABELS_METHODS`) with a
        pooled or shared calibration (one set's truth counts would count as evidence for every
        group's theta); for ``estimand="test-set"`` with a method other
        than ``"likelihood"``.

    Warns
    -----
    LowJudgeQualityWarning
        Where the judge's Youden index has ``|J|`` below ``LOW_J_THRESHOLD`` (0.2), where its
        interval (Newcombe's, at level 1 - alpha) contains 0, or where J is clearly below 0
        (a judge worse than chance: check for swapped labels): the correction amplifies every
        error by about 1/``|J|``. This is the one low-J rule of the package
        (:func:`bayesjudge.core.kernels.low_j`), which ``check_comparison`` applies too.
    LowJudgeQualityWarning
        Where Ĵ = 0 exactly (Rogan-Gladen methods): the estimate is NaN and the interval
        [0, 1] there, and the message says so. For ``"ppi++"`` and ``"likelihood"`` the
        low-J message says instead that the method falls back to about the human-only
        interval (neither divides by J).
    SmallSampleWarning
        Where a group has no test items, or (for corrected methods) no calibration items of
        one true label (for ``"likelihood"``: no labelled items at all, or no labelled item
        of a verdict that some item received, where the estimate is NaN but the interval
        valid); the estimate there is NaN and the message names the groups. Also when
        ``n_resamples`` is below 1000 (``method="bootstrap"``), and where an interval is a
        single point at 0 or 1: the corrected estimate fell outside [0, 1] and was clipped,
        which signals a misfit (too few calibration items, or a judge that behaves
        differently on these test items than on the calibration items), not certainty.

    Notes
    -----
    Every group is computed at once by the vectorised core functions
    (:func:`lang_reiczigel_interval`, :func:`naive`, :func:`bootstrap_rogan_gladen`,
    :func:`ppi_mean`, :func:`likelihood_interval`). The Lang-Reiczigel interval keeps close
    to nominal coverage for n = 1000 and m0 = m1 = 100 across theta in [0.05, 0.95] (Lee et
    al. Sec. 7; tested in ``tests/core/test_correction_coverage.py``). Rogan-Gladen needs only
    that the judge behaves the same on calibration and test items given the truth, so a
    calibration set stratified by truth is fine, and it stays valid (but wasteful) under the
    random design; PPI++ instead needs calibration items drawn from the test distribution
    (Lee et al. Sec. 8). Under the random design the likelihood interval is about half as
    wide as Lang-Reiczigel's, like PPI++ (docs/estimators.md).

    Edge cases, one answer per group rather than a wrong number. Where Ĵ = q̂0 + q̂1 − 1 is
    exactly 0 (tested on the integer counts) the Rogan-Gladen estimate divides by 0: the
    estimate is NaN and the interval all of [0, 1] for both ``"lang-reiczigel"`` and
    ``"bootstrap"``. (The Lang-Reiczigel formula itself would still return a finite interval,
    because its smoothed J̃ is not 0, but that interval rests on the smoothing alone: for a
    judge that calls every item correct, m0 = 2, m1 = 100, it is [0.94, 1].) With
    ``"ppi++"`` a group whose labelled items all have one human label (m0 = 0 or m1 = 0) is
    NaN with a warning that says why, as from :func:`~bayesjudge.core.ppi.ppi_mean`.
    ``"likelihood"`` needs labelled items but neither unlabelled ones (n = 0 is fine) nor
    both human labels (its interval then reaches 0 or 1).

    References
    ----------
    .. [1] C. Lee, T. Zeng, J. Jeong, J. Sohn, K. Lee, "How to Correctly Report LLM-as-a-Judge
       Evaluations", arXiv:2511.21140 (eqs. 5-8, Sec. 6-8).
    .. [2] J. Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", arXiv:2605.06939
       (Sec. 3.3, 4.3-4.4: shared calibration, bootstrap design, Youden J diagnostics).
    .. [3] A. Tenenbein, "A double sampling scheme for estimating from binomial data with
       misclassifications", J. Am. Stat. Assoc. 65 (1970) 1350-1361.

    Examples
    --------
    >>> import bayesjudge as bj
    >>> counts = bj.JudgeCounts.from_counts(n=1000, k=400, m0=100, tn=70, m1=100, tp=90)
    >>> result = bj.estimate(counts)  # stratified design: Lang-Reiczigel
    >>> result.attrs["method"], round(float(result["estimate"].squeeze()), 4)
    ('lang-reiczigel', 0.1667)
    >>> result["ci"].squeeze().round(4).values.tolist()
    [0.0139, 0.2898]
    >>> random = bj.JudgeCounts.from_counts(n=1800, k=738, m0=140, tn=112, m1=60, tp=54,
    ...                                     design="random")
    >>> result = bj.estimate(random)  # random design: the profile-likelihood interval
    >>> result.attrs["method"], result["ci"].squeeze().round(4).values.tolist()
    ('likelihood', [0.2503, 0.3503])
    >>> result["human_ci"].squeeze().round(4).values.tolist()  # the labelled items alone
    [0.2407, 0.3668]
    """
    if isinstance(counts, CategoricalCounts | JuryCounts | CategoricalJuryCounts):
        return _other_counts(counts)(
            counts, method, alpha, random_seed, calibration, n_resamples, estimand, scores
        )
    if scores is not None:
        raise ValueError(
            "scores= is for K-category counts (CategoricalCounts); binary counts estimate "
            "the share truly correct. Drop scores=, or build a CategoricalCounts."
        )
    if not isinstance(counts, JudgeCounts):
        raise TypeError(
            f"counts must be a bayesjudge.JudgeCounts; got {type(counts).__name__}. "
            "Build one with JudgeCounts.from_counts(...) or JudgeCounts.from_frames(...)."
        )
    if calibration not in _CALIBRATION_DESIGNS:
        raise ValueError(
            f"calibration must be one of {list(_CALIBRATION_DESIGNS)}; got {calibration!r}."
        )
    requested = method
    method = _resolve_method(counts, method, calibration, estimand)
    alpha = check_lr_alpha(alpha) if method == "lang-reiczigel" else check_alpha(alpha)
    random_seed = check_seed(random_seed)
    if method in _RESAMPLING:
        bootstrap_design = check_design(
            counts.design if bootstrap_design is None else bootstrap_design, "bootstrap_design"
        )
        n_resamples = check_resamples(n_resamples, f"estimate(method={method!r})", alpha)
    human_point, human_lower, human_upper = _human_baseline(counts, alpha)
    if calibration == "shared":
        # Before any number: does one pooled set fit every system? (Fiedler; warns if not)
        check_pooled_calibration(counts, ("system",), alpha=alpha, stacklevel=3)
        counts = counts.pooled_calibration("system")
    ds = counts.dataset  # dims are always ("system", "stratum"), in that order
    n, k, m0, tn, m1, tp = (ds[v].values.astype(float) for v in ("n", "k", "m0", "tn", "m1", "tp"))

    has_test = counts.has_test().values
    has_calibration = counts.has_calibration().values
    if method == "likelihood":
        _warn_likelihood(ds, n, k, m0, tn, m1, tp)
        usable = (m0 + m1) > 0
    else:
        usable = has_test if method == "naive" else has_test & has_calibration
        _warn_unusable(ds, has_test, has_calibration, method, calibration)

    p_hat, q0_hat, q1_hat, j_hat = (
        f().values for f in (counts.p_hat, counts.q0_hat, counts.q1_hat, counts.youden_hat)
    )

    point = np.full(n.shape, np.nan)
    lower = np.full(n.shape, np.nan)
    upper = np.full(n.shape, np.nan)
    idx = np.nonzero(usable)
    if idx[0].size:
        sub = {
            name: arr[idx]
            for name, arr in zip("n k m0 tn m1 tp".split(), (n, k, m0, tn, m1, tp), strict=True)
        }
        if method in CLUSTER_METHODS:
            sub.update(_cluster_inputs(counts, idx))
        point[idx], lower[idx], upper[idx] = _compute(
            method,
            sub,
            p_hat[idx],
            q0_hat[idx],
            q1_hat[idx],
            alpha,
            random_seed=random_seed,
            n_resamples=n_resamples,
            bootstrap_design=bootstrap_design,
            estimand=estimand,
        )
    if method != "naive":
        _warn_low_j(ds, has_calibration & has_test, tn, m0, tp, m1, alpha, method)
    _warn_point_intervals(ds, lower, upper, method, calibration, estimand, n)

    coords = {"system": ds["system"].values, "stratum": ds["stratum"].values}
    dims = ("system", "stratum")
    ci_kind = METHODS[method]
    if estimand == "test-set":
        ci_kind += ", test-set estimand (prediction of the unlabelled items' truth)"
    out = xr.Dataset(
        {
            "estimate": (dims, point),
            "ci": ((*dims, "ci_bound"), np.stack([lower, upper], axis=-1)),
            "p_hat": (dims, p_hat),
            "q0_hat": (dims, q0_hat),
            "q1_hat": (dims, q1_hat),
            "youden": (dims, j_hat),
            "human_estimate": (dims, human_point),
            "human_ci": ((*dims, "ci_bound"), np.stack([human_lower, human_upper], axis=-1)),
        },
        coords={**coords, "ci_bound": ["lower", "upper"]},
        attrs={
            "method": method,
            "method_chosen": "design default" if requested is None else "requested",
            "design": counts.design,
            "estimand": estimand,
            "ci_kind": ci_kind,
            "ci_prob": 1 - alpha,
            "alpha": alpha,
            "calibration": calibration,
            "random_seed": "None" if random_seed is None else str(random_seed),
            "n_resamples": n_resamples if method in _RESAMPLING else 0,
            "bootstrap_design": bootstrap_design if method in _RESAMPLING else "",
            "clusters": int(counts.has_clusters),
            "bayesjudge_version": __version__,
        },
    )
    out["estimate"].attrs["long_name"] = _long_name(method, estimand)
    out["human_estimate"].attrs["long_name"] = (
        "human labels alone: share of the labelled items truly correct (Wilson interval)"
    )
    return out


def _long_name(method: str, estimand: str) -> str:
    if method == "naive":
        return "share judged correct (p_hat)"
    if estimand == "test-set":
        return "share truly correct among this evaluation's items (test-set theta)"
    return "corrected true accuracy (theta)"


def _resolve_method(counts: JudgeCounts, method, calibration: str, estimand: str) -> str:
    """Return the method to use: the design's default for None; refuse what cannot apply."""
    if estimand not in ESTIMANDS:
        raise ValueError(f"estimand must be one of {list(ESTIMANDS)}; got {estimand!r}.")
    shared = calibration == "shared" or bool(counts.calibration_shared_over)
    if method is None and counts.has_clusters:
        method = DEFAULT_CLUSTER_METHOD
    if method is None:
        method = DEFAULT_METHODS[counts.design]
        if method == "likelihood" and shared:
            method = "lang-reiczigel"  # the likelihood needs each group's own labelled items
    if method not in METHODS:
        raise ValueError(
            f"method must be one of {sorted(METHODS)}, or None for the labelling design's "
            f"default; got {method!r}."
        )
    if counts.has_clusters and method not in CLUSTER_METHODS:
        raise ValueError(
            f"These counts hold repeated verdicts of an item (counts.clusters: some items were "
            f"judged several times), whose verdicts are correlated; method={method!r} would "
            f"count every verdict as an independent item and understate the uncertainty. Use "
            f"method='cluster-delta' (the default here) or 'cluster-bootstrap', which resample "
            f"items with all their verdicts; to treat the verdicts as independent items on "
            f"purpose, pass counts.without_clusters()."
            + (
                " Labelled items are judged several times too (counts.calibration_clusters): "
                "m0, tn, m1, tp count verdicts, so a method that reads m1 as the number of "
                "labelled items truly correct (the random design's truth term) would count "
                "verdicts as items."
                if counts.calibration_clusters is not None
                else ""
            )
        )
    if method == "likelihood" and counts.design != "random":
        raise ValueError(
            "method='likelihood' needs the random labelling design (counts.design == "
            "'random'): it counts the labelled items that humans call correct, m1 ~ "
            "Binomial(m0 + m1, theta), as evidence about theta, which holds only when the "
            "labelled items are a random subset of the judged ones. These counts are "
            "'stratified' (m0 and m1 fixed by design), where m1 says nothing about theta. Use "
            "method='lang-reiczigel' (the default for this design) or 'bootstrap'; if the "
            "labelled items were in fact drawn at random, build the counts with "
            "design='random'."
        )
    if method in OWN_LABELS_METHODS and shared:
        # Both read the labelled items' human share m1 / (m0 + m1) as evidence about θ
        # (PPI++ anchors on it), so one set serving several groups pulls every group's θ
        # toward that set's share, with an interval too narrow to cover the truth.
        raise ValueError(
            f"method={method!r} needs each group's own labelled items: with a calibration "
            "pooled over systems (calibration='shared') or one set shared by several groups "
            f"(counts.calibration_shared_over = {counts.calibration_shared_over!r}), that set's "
            "truth counts would count as evidence for every group's theta. Use "
            "calibration='own' with each group's own labelled items, "
            "method='lang-reiczigel', or bj.fit(counts, calibration='shared'), which models "
            "one shared set correctly."
        )
    if estimand == "test-set" and method != "likelihood":
        raise ValueError(
            f"estimand='test-set' has a closed form only for method='likelihood' (the random "
            f"labelling design); got method={method!r} for {counts.design!r} counts. Use "
            f"method='likelihood' on random-design counts, or bj.fit(counts, "
            f"estimand='test-set') (the Bayesian models and the exact engine) otherwise."
        )
    return method


def _human_baseline(counts: JudgeCounts, alpha: float):
    """Return the human-only baseline per group (NaN unless own, randomly labelled items)."""
    ds = counts.dataset
    shape = ds["n"].shape
    nan = np.full(shape, np.nan)
    if counts.design != "random" or counts.calibration_shared_over:
        return nan, nan.copy(), nan.copy()
    tn, m0, tp, m1 = (ds[v].values.astype(float) for v in ("tn", "m0", "tp", "m1"))
    if counts.calibration_clusters is not None:
        # θ from the labels alone counts labelled *items*, not their verdicts.
        items = _calibration_tables(counts).sum(axis=(-2, -1)).astype(float)
        m0, m1 = items[..., 0], items[..., 1]
        tn, tp = m0, m1  # not used by the estimate; any value <= m0, m1
    res = human_only(tn, m0, tp, m1, alpha=alpha)
    return (np.broadcast_to(np.asarray(v, dtype=float), shape).copy() for v in res)


def _compute(
    method, c, p_hat, q0_hat, q1_hat, alpha, *, random_seed, n_resamples, bootstrap_design,
    estimand="population",
):  # fmt: skip
    """Return (estimate, lower, upper) arrays for the usable groups in ``c``."""
    if method == "likelihood":
        interval = test_set_interval if estimand == "test-set" else likelihood_interval
        res = interval(*(c[v] for v in ("k", "n", "tn", "m0", "tp", "m1")), alpha=alpha)
        return res.estimate, res.lower, res.upper
    if method == "naive":
        return naive(c["k"], c["n"], alpha=alpha, method="wilson")
    if method == "ppi++":
        res = ppi_mean(c["k"], c["n"], c["tn"], c["m0"], c["tp"], c["m1"], alpha=alpha)
        return res.estimate, res.lower, res.upper
    # Rogan-Gladen methods. J_hat = 0 is tested exactly on the counts by the kernel. J = 0
    # policy: NaN, with the interval all of [0, 1] (and a warning, _warn_low_j): a judge at
    # chance on the calibration set says nothing about theta. (Lang-Reiczigel's smoothed J~
    # is not 0 there, but its interval then rests on the +1 smoothing, not on the data: e.g.
    # [0.94, 1] for a judge that calls every item correct.)
    theta, ok = rogan_gladen_counts(*(c[v] for v in ("k", "n", "tn", "m0", "tp", "m1")), clip=True)
    point = np.where(ok, theta, np.nan)
    lower, upper = np.zeros(p_hat.shape), np.ones(p_hat.shape)
    if not ok.any():
        return point, lower, upper
    if method in CLUSTER_METHODS:
        point[ok], lower[ok], upper[ok] = _cluster_interval(
            method, c, ok, alpha, random_seed, n_resamples, bootstrap_design
        )
        return point, lower, upper
    if method == "bootstrap":
        with warnings.catch_warnings():
            # n_resamples was checked (and warned about) by estimate itself.
            warnings.filterwarnings(
                "ignore", r"bootstrap_rogan_gladen: n_resamples=", SmallSampleWarning
            )
            point[ok], lower[ok], upper[ok] = bootstrap_rogan_gladen(
                *(c[v][ok] for v in ("k", "n", "tn", "m0", "tp", "m1")),
                alpha=alpha,
                n_resamples=n_resamples,
                calibration_design=bootstrap_design,
                random_seed=random_seed,
            )
        return point, lower, upper
    lower[ok], upper[ok] = lang_reiczigel_interval(
        p_hat[ok], q0_hat[ok], q1_hat[ok], c["n"][ok], c["m0"][ok], c["m1"][ok], alpha=alpha
    )
    return point, lower, upper


def _cluster_tables(counts: JudgeCounts) -> np.ndarray:
    """Return each group's cluster table (system, stratum, R, R + 1); r = 1 if none is stored."""
    if counts.clusters is not None:
        return counts.clusters.transpose("system", "stratum", "repeats", "positives").values
    n, k = (counts.dataset[v].values for v in ("n", "k"))
    return np.stack([n - k, k], axis=-1)[..., None, :]


def _cluster_inputs(counts: JudgeCounts, idx) -> dict:
    """Return the cluster tables of groups ``idx``: test items, labelled items if repeated."""
    out = {"table": _cluster_tables(counts)[idx]}
    if counts.calibration_clusters is not None:
        out["calibration_tables"] = _calibration_tables(counts)[idx]
    return out


def _calibration_tables(counts: JudgeCounts) -> np.ndarray:
    """Return the labelled items' cluster tables (system, stratum, truth, R, R + 1)."""
    dims = ("system", "stratum", "truth", "repeats", "positives")
    return counts.calibration_clusters.transpose(*dims).values


def _cluster_interval(method, c, ok, alpha, random_seed, n_resamples, bootstrap_design):
    """Return (estimate, lower, upper) of the cluster methods for the identified groups."""
    args = (c["table"][ok], *(c[v][ok] for v in ("tn", "m0", "tp", "m1")))
    cal = c.get("calibration_tables")
    tables = {} if cal is None else {"calibration_tables": cal[ok]}
    if method == "cluster-delta":
        return cluster_delta(*args, alpha=alpha, **tables)
    with warnings.catch_warnings():
        # n_resamples was checked (and warned about) by estimate itself.
        warnings.filterwarnings("ignore", r"cluster_bootstrap: n_resamples=", SmallSampleWarning)
        return cluster_bootstrap(
            *args,
            alpha=alpha,
            n_resamples=n_resamples,
            calibration_design=bootstrap_design,
            random_seed=random_seed,
            **tables,
        )


def _shown(labels) -> list[str]:
    """Labels for a warning: names with control characters shown escaped (names are data)."""
    return [terminal_safe(v) for v in labels]


def _group_names(ds: xr.Dataset, mask: np.ndarray, limit: int = 6) -> str:
    """Name the (system, stratum) groups where ``mask`` is true, e.g. ``system=A/stratum=x``."""
    systems, strata = _shown(ds["system"].values), _shown(ds["stratum"].values)
    names = [
        f"system={systems[i]}/stratum={strata[j]}" for i, j in zip(*np.nonzero(mask), strict=True)
    ]
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _warn_unusable(ds, has_test, has_calibration, method, calibration) -> None:
    if (~has_test).any():
        warnings.warn(
            f"No test items in {_group_names(ds, ~has_test)}: their estimate is NaN. "
            "These groups hold calibration data only; drop them with counts.sel(...) or add "
            "their judged test items.",
            SmallSampleWarning,
            stacklevel=3,
        )
    missing = has_test & ~has_calibration
    if method == "ppi++" and missing.any():
        warnings.warn(
            f"No labelled items of one human label (m0 = 0 or m1 = 0) in "
            f"{_group_names(ds, missing)}: the PPI++ estimate is NaN there. PPI++ needs "
            "labelled items drawn at random from the test set, and with one human label only "
            "their variance is 0, so it would report that label's value (1 or 0) with a "
            "zero-width interval whatever the test set shows (ppi_mean returns NaN there too). "
            "Label more items drawn at random from these groups' test sets.",
            SmallSampleWarning,
            stacklevel=3,
        )
    elif method != "naive" and missing.any():
        hint = (
            "pass calibration='shared' to borrow the calibration pooled over systems (but "
            f"{POOLING_CAVEAT}), or "
            if calibration == "own"
            else ""
        )
        warnings.warn(
            f"No calibration items of one true label (m0 = 0 or m1 = 0) in "
            f"{_group_names(ds, missing)}: the judge's specificity or sensitivity is unknown "
            f"there, so the corrected estimate is NaN. To fix it, {hint}label calibration "
            "items of both kinds for these groups.",
            SmallSampleWarning,
            stacklevel=3,
        )


def _warn_likelihood(ds, n, k, m0, tn, m1, tp) -> None:
    """Warn where the likelihood has no labelled item, or a verdict without labelled items."""
    none = (m0 + m1) == 0
    if none.any():
        warnings.warn(
            f"No labelled items in {_group_names(ds, none)}: their estimate and interval are "
            "NaN. Under the random design the human labels of a random subset of the judged "
            "items say what the verdicts mean; label some items of these groups at random.",
            SmallSampleWarning,
            stacklevel=3,
        )
    judged1 = k + tp + (m0 - tn)  # items judged correct, labelled or not
    labelled1 = tp + (m0 - tn)
    labelled0 = tn + (m1 - tp)
    flat = ~none & (
        ((labelled1 == 0) & (judged1 > 0)) | ((labelled0 == 0) & (judged1 < n + m0 + m1))
    )
    if flat.any():
        warnings.warn(
            f"No labelled item among the items of one verdict in {_group_names(ds, flat)}: "
            "the share truly correct among the items with that verdict is not estimated, so "
            "the maximum-likelihood estimate is not unique and is reported as NaN; the "
            "likelihood interval is still valid (it holds every maximiser) but wide. Label "
            "more items at random.",
            SmallSampleWarning,
            stacklevel=3,
        )


def _warn_point_intervals(ds, lower, upper, method, calibration, estimand, n) -> None:
    """Warn where an interval is one point at 0 or 1: never certainty, always a misfit."""
    point = (lower == upper) & ((upper == 0) | (lower == 1))
    if estimand == "test-set":
        point &= n > 0  # every item labelled: the test-set theta is known exactly
    if not point.any():
        return
    pooled = (
        f" With calibration='shared' a likely cause is a judge whose q0, q1 differ between "
        f"the pooled systems: {POOLING_CAVEAT}."
        if calibration == "shared"
        else ""
    )
    warnings.warn(
        f"The {method} interval is a single point at 0 or 1 in {_group_names(ds, point)}: "
        "the corrected estimate fell outside [0, 1] and was clipped, so the interval has no "
        "width. That is not certainty: the verdicts on the test items are not what the "
        "calibration counts predict for any theta in [0, 1] (too few calibration items, or a "
        "judge that behaves differently on these test items than on the calibration items)."
        f"{pooled} Do not report these intervals; label more calibration items of these "
        "groups, or use a Bayesian model (bj.fit), whose interval stays inside [0, 1] with "
        "a width.",
        SmallSampleWarning,
        stacklevel=3,
    )


def _warn_low_j(ds, mask, tn, m0, tp, m1, alpha, method) -> None:
    """Warn where J_hat is low, or where its interval cannot rule out a chance-level judge.

    The message speaks of ``method``: the Rogan-Gladen methods divide by J, PPI++ does not
    (a judge near chance only makes its λ small, so it falls back to the human labels).
    """
    if not mask.any():
        return
    # The one low-J rule (core.kernels.low_j: Newcombe interval of J, LOW_J_THRESHOLD), as
    # check_comparison. J = 0 exactly is "undefined" for the methods that divide by J.
    rule = low_j(
        tn[mask],
        m0[mask],
        tp[mask],
        m1[mask],
        alpha,
        undefined_at_zero=method not in ("ppi++", "likelihood"),
    )
    systems, strata = _shown(ds["system"].values), _shown(ds["stratum"].values)
    found = {"low": [], "worse": [], "uncertain": [], "undefined": [], "fine": []}
    for (i, s), jj, ll, hh, category in zip(
        zip(*np.nonzero(mask), strict=True),
        *(np.atleast_1d(a) for a in rule),
        strict=True,
    ):
        group = f"system={systems[i]}/stratum={strata[s]}"
        where = f"{group}: J = {jj:.2f} ({100 * (1 - alpha):g}% interval {ll:.2f} to {hh:.2f})"
        # The amplification of the correction is 1/|J|: a clearly negative J is corrected
        # (inverted) as stably as a positive one of the same size.
        amp = f"about {1 / abs(jj):.0f}x" if abs(jj) > 0.02 else "without bound"
        if category == "undefined":
            found[category].append(group)
        elif category in ("low", "worse") and method not in ("ppi++", "likelihood"):
            found[category].append(f"{where}, errors amplified {amp}")
        else:
            found[category].append(where)
    low, worse, uncertain, undefined = (
        found[k] for k in ("low", "worse", "uncertain", "undefined")
    )

    def listing(items):
        return "; ".join(items[:6]) + (f"; and {len(items) - 6} more" if len(items) > 6 else "")

    if method in ("ppi++", "likelihood"):
        if low or worse:
            how = (
                "the tuned lambda is near 0 and the PPI++ interval"
                if method == "ppi++"
                else "the likelihood interval"
            )
            warnings.warn(
                f"Low judge quality (Youden J = q0 + q1 - 1 near or below 0) in "
                f"{listing(low + worse)}. {'PPI++' if method == 'ppi++' else 'The likelihood'} "
                "does not divide by J, so its estimate stays valid, but the judge's verdicts "
                f"carry little information about the human labels: {how} is about as wide "
                "as the one from the labelled items alone. Use a better judge or prompt, or "
                "label more items at random from the test set.",
                LowJudgeQualityWarning,
                stacklevel=3,
            )
        return
    name = {"lang-reiczigel": "Lang-Reiczigel", "cluster-delta": "cluster-robust Wald"}.get(
        method, "bootstrap"
    )
    if undefined:
        warnings.warn(
            f"The judge is exactly at chance on the calibration set (J = q0 + q1 - 1 = 0, "
            f"i.e. tn/m0 + tp/m1 = 1) in {listing(undefined)}: the Rogan-Gladen estimate "
            f"divides by J, so it is undefined there and reported as NaN, and the {name} "
            "interval is all of [0, 1] (the judge's verdicts say nothing about theta). Use a "
            "better judge or prompt, or label more calibration items.",
            LowJudgeQualityWarning,
            stacklevel=3,
        )
    if low:
        warnings.warn(
            f"Low judge quality (Youden J = q0 + q1 - 1 near 0) in {listing(low)}. "
            f"The Rogan-Gladen correction divides by J, so the corrected estimate is unstable "
            f"and its {name} interval wide (up to all of [0, 1]); a judge with J near 0 is no "
            "better than chance. Use a better judge or prompt, label more calibration items, "
            "or weaken the claim.",
            LowJudgeQualityWarning,
            stacklevel=3,
        )
    if worse:
        warnings.warn(
            f"Judge worse than chance (Youden J clearly below 0) in {listing(worse)}: its "
            "verdicts are anti-correlated with the truth. Check for swapped labels (the "
            "positive= option of JudgeCounts.from_frames). If the labels are right, the "
            "Rogan-Gladen correction inverts the judge, with its error amplified 1/|J|; use a "
            "better judge or prompt.",
            LowJudgeQualityWarning,
            stacklevel=3,
        )
    if uncertain:
        warnings.warn(
            f"Judge quality is uncertain in {listing(uncertain)}: the interval of J includes 0, "
            "so the calibration set is too small to rule out a judge no better than chance, "
            f"and the corrected {name} interval may be very wide. Label more calibration items "
            "of both kinds (see bayesjudge.allocate_calibration).",
            LowJudgeQualityWarning,
            stacklevel=3,
        )


def _other_counts(counts):
    """Return the ``estimate`` of K-category counts, of several judges, or of both."""
    if isinstance(counts, CategoricalJuryCounts):
        return _estimate_categorical_jury
    return _estimate_categorical if isinstance(counts, CategoricalCounts) else _estimate_jury


def _estimate_categorical(
    counts, method, alpha, random_seed, calibration, n_resamples, estimand, scores
):
    """``estimate`` of K-category counts: :func:`estimate_categorical` in estimate's vocabulary."""
    if estimand != "population":
        raise ValueError(
            f"estimand={estimand!r} is not available for K-category counts; only the "
            "population shares are. Drop estimand=."
        )
    if calibration not in ("own", "shared"):
        raise ValueError(f"calibration must be 'own' or 'shared'; got {calibration!r}.")
    return estimate_categorical(
        counts,
        method="delta" if method is None else method,
        alpha=alpha,
        scores=scores,
        calibration="separate" if calibration == "own" else "shared",
        n_resamples=n_resamples,
        random_seed=random_seed,
    )


#: Methods of ``estimate`` for several judges' verdict patterns (:class:`JuryCounts`).
JURY_ESTIMATE_METHODS = ("dawid-skene", "dawid-skene-bootstrap", "majority", "per-judge")


def _estimate_jury(
    counts: JuryCounts, method, alpha, random_seed, calibration, n_resamples, estimand, scores
) -> xr.Dataset:
    """``estimate`` of several judges: the jury closed forms, or every judge on its own."""
    refused = {
        "calibration": (calibration, "own"),
        "estimand": (estimand, "population"),
        "scores": (scores, None),
    }
    for name, (value, default) in refused.items():
        if value != default:
            raise ValueError(
                f"{name}={value!r} is not available for several judges' verdicts (JuryCounts); "
                f"drop it, or apply it to one judge's counts.for_judge(judge)."
            )
    method = "dawid-skene" if method is None else method
    if method not in JURY_ESTIMATE_METHODS:
        raise ValueError(
            f"method must be one of {list(JURY_ESTIMATE_METHODS)} for several judges' "
            f"verdicts (JuryCounts); got {method!r}. A single judge's methods apply to "
            f"counts.for_judge(judge)."
        )
    if method != "per-judge":
        bootstrap = method == "dawid-skene-bootstrap"
        out = jury_estimate(
            counts,
            "majority" if method == "majority" else "dawid-skene",
            alpha,
            random_seed,
            interval="bootstrap" if bootstrap else "wald",
            n_resamples=min(n_resamples, 2_000) if bootstrap else 2_000,
        )
        out.attrs["method"] = method
        return out
    parts = [
        estimate(counts.for_judge(j), alpha=alpha, random_seed=random_seed) for j in counts.judges
    ]
    out = xr.concat(
        [p[["estimate", "ci", "p_hat", "q0_hat", "q1_hat", "youden"]] for p in parts],
        dim=xr.DataArray(counts.dataset.indexes[JUDGE], dims=JUDGE),
    )
    out.attrs = {**parts[0].attrs, "judge_method": parts[0].attrs["method"], "method": method}
    return out


def _estimate_categorical_jury(
    counts: CategoricalJuryCounts,
    method,
    alpha,
    random_seed,
    calibration,
    n_resamples,
    estimand,
    scores,
) -> xr.Dataset:
    """``estimate`` of several judges' K-category verdicts: :func:`categorical_jury_estimate`."""
    refused = {"calibration": (calibration, "own"), "estimand": (estimand, "population")}
    for name, (value, default) in refused.items():
        if value != default:
            raise ValueError(
                f"{name}={value!r} is not available for several judges' K-category verdicts "
                f"(CategoricalJuryCounts); drop it, or apply it to one judge's "
                f"counts.for_judge(judge) (a CategoricalCounts)."
            )
    method = "dawid-skene" if method is None else method
    if method not in CATEGORICAL_JURY_METHODS:
        raise ValueError(
            f"method must be one of {list(CATEGORICAL_JURY_METHODS)} for several judges' "
            f"K-category verdicts (CategoricalJuryCounts); got {method!r}. A single judge's "
            f"methods apply to counts.for_judge(judge)."
        )
    # As for JuryCounts: every resample refits the EM, so the default 10,000 is capped.
    return categorical_jury_estimate(
        counts,
        method=method,
        alpha=alpha,
        scores=scores,
        n_resamples=min(n_resamples, 2_000),
        random_seed=random_seed,
    )
