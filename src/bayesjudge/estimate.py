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
from bayesjudge.core._validation import (
    check_alpha,
    check_design,
    check_lr_alpha,
    check_resamples,
    check_seed,
)
from bayesjudge.core.bootstrap import bootstrap_rogan_gladen
from bayesjudge.core.correction import lang_reiczigel_interval
from bayesjudge.core.kernels import LOW_J_THRESHOLD, low_j, rogan_gladen_counts
from bayesjudge.core.naive import naive
from bayesjudge.core.ppi import ppi_mean
from bayesjudge.data import JudgeCounts
from bayesjudge.warnings import LowJudgeQualityWarning, SmallSampleWarning

__all__ = ["LOW_J_THRESHOLD", "METHODS", "estimate"]

#: Methods understood by :func:`estimate`, with the ``ci_kind`` each one reports.
METHODS = {
    "lang-reiczigel": "adjusted Wald (Lang-Reiczigel)",
    "naive": "Wilson score (for p, not theta)",
    "bootstrap": "percentile bootstrap",
    "ppi++": "Wald (PPI++)",
}

_CALIBRATION_DESIGNS = ("own", "shared")


def estimate(
    counts: JudgeCounts,
    method: str = "lang-reiczigel",
    alpha: float = 0.05,
    random_seed=None,
    *,
    calibration: str = "own",
    n_resamples: int = 10_000,
    bootstrap_design: str = "stratified",
) -> xr.Dataset:
    """Estimate the true accuracy of every (system, stratum) group with a closed-form method.

    Parameters
    ----------
    counts : JudgeCounts
        Sufficient statistics per group (``n, k, m0, tn, m1, tp``).
    method : {"lang-reiczigel", "naive", "bootstrap", "ppi++"}, default "lang-reiczigel"
        ``"lang-reiczigel"``: Rogan-Gladen point estimate with the Lang-Reiczigel adjusted
        Wald interval (Lee et al. eqs. 5-8). ``"naive"``: the share judged correct, ``k / n``,
        with a Wilson interval; it estimates p, not theta, and is biased unless the judge is
        perfect. ``"bootstrap"``: Rogan-Gladen with a percentile bootstrap that resamples the
        test and calibration sets separately. ``"ppi++"``: prediction-powered inference with
        power-tuned lambda; needs a calibration set drawn at random from the test distribution.
    alpha : float, default 0.05
        One minus the interval's coverage probability (``ci_prob = 1 - alpha``); at least
        1e-300, and at least 1e-6 for ``"lang-reiczigel"`` (see
        :func:`~bayesjudge.core.correction.lang_reiczigel_interval`).
    random_seed : int, numpy.random.Generator or None
        Seed for ``method="bootstrap"`` (any non-negative integer, 2**70 too); checked, but
        not used, by the other methods.
    calibration : {"own", "shared"}, default "own"
        ``"own"`` corrects each group with its own calibration counts. ``"shared"`` pools the
        calibration counts over all systems within each stratum (Fiedler's shared calibration):
        it lets a system without calibration data of its own be corrected, but assumes the
        judge behaves identically on every system; check that with ``youden_difference``.
    n_resamples : int, default 10000
        Number of bootstrap resamples (``method="bootstrap"``): at least 100 and at least
        2 / alpha; below 1000 a ``SmallSampleWarning`` says that the interval's ends carry
        Monte Carlo error.
    bootstrap_design : {"stratified", "random"}, default "stratified"
        How the calibration set was collected (``method="bootstrap"``): ``"stratified"`` fixes
        m0 and m1 by design (as in Lee et al.); ``"random"`` draws calibration items at random.

    Returns
    -------
    xarray.Dataset
        Dims ``(system, stratum, ci_bound)``. Variables ``estimate`` and ``ci`` (with
        ``ci_bound = ["lower", "upper"]``), and the plug-in diagnostics ``p_hat``, ``q0_hat``,
        ``q1_hat`` and ``youden`` (NaN where the group has no items to estimate them from).
        Attrs: ``method``, ``ci_kind``, ``ci_prob``, ``alpha``, ``calibration``,
        ``random_seed``, ``n_resamples``, ``bootstrap_design``, ``bayesjudge_version``.

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
        [0, 1] there, and the message says so. For ``"ppi++"`` the low-J message says
        instead that PPI++ falls back to about the human-only interval (it does not divide
        by J).
    SmallSampleWarning
        Where a group has no test items, or (for corrected methods) no calibration items of
        one true label; the estimate there is NaN and the message names the groups. Also
        when ``n_resamples`` is below 1000 (``method="bootstrap"``).

    Notes
    -----
    Every group is computed at once by the vectorised core functions
    (:func:`lang_reiczigel_interval`, :func:`naive`, :func:`bootstrap_rogan_gladen`,
    :func:`ppi_mean`). The Lang-Reiczigel interval keeps close to nominal coverage for
    n = 1000 and m0 = m1 = 100 across theta in [0.05, 0.95] (Lee et al. Sec. 7; tested in
    ``tests/core/test_correction_coverage.py``). Rogan-Gladen needs only that the judge behaves
    the same on calibration and test items given the truth, so a calibration set stratified
    by truth is fine; PPI++ instead needs calibration items drawn from the test distribution
    (Lee et al. Sec. 8).

    Edge cases, one answer per group rather than a wrong number. Where Ĵ = q̂0 + q̂1 − 1 is
    exactly 0 (tested on the integer counts) the Rogan-Gladen estimate divides by 0: the
    estimate is NaN and the interval all of [0, 1] for both ``"lang-reiczigel"`` and
    ``"bootstrap"``. (The Lang-Reiczigel formula itself would still return a finite interval,
    because its smoothed J̃ is not 0, but that interval rests on the smoothing alone: for a
    judge that calls every item correct, m0 = 2, m1 = 100, it is [0.94, 1].) With
    ``"ppi++"`` a group whose labelled items all have one human label (m0 = 0 or m1 = 0) is
    NaN with a warning that says why, as from :func:`~bayesjudge.core.ppi.ppi_mean`.

    References
    ----------
    .. [1] C. Lee, T. Zeng, J. Jeong, J. Sohn, K. Lee, "How to Correctly Report LLM-as-a-Judge
       Evaluations", arXiv:2511.21140 (eqs. 5-8, Sec. 7-8).
    .. [2] J. Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", arXiv:2605.06939
       (Sec. 3.3, 4.3-4.4: shared calibration, bootstrap design, Youden J diagnostics).

    Examples
    --------
    >>> import bayesjudge as bj
    >>> counts = bj.JudgeCounts.from_counts(n=1000, k=400, m0=100, tn=70, m1=100, tp=90)
    >>> result = bj.estimate(counts, method="lang-reiczigel")
    >>> round(float(result["estimate"].squeeze()), 4)
    0.1667
    >>> result["ci"].squeeze().round(4).values.tolist()
    [0.0139, 0.2898]
    """
    if not isinstance(counts, JudgeCounts):
        raise TypeError(
            f"counts must be a bayesjudge.JudgeCounts; got {type(counts).__name__}. "
            "Build one with JudgeCounts.from_counts(...) or JudgeCounts.from_frames(...)."
        )
    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}; got {method!r}.")
    if calibration not in _CALIBRATION_DESIGNS:
        raise ValueError(
            f"calibration must be one of {list(_CALIBRATION_DESIGNS)}; got {calibration!r}."
        )
    alpha = check_lr_alpha(alpha) if method == "lang-reiczigel" else check_alpha(alpha)
    random_seed = check_seed(random_seed)
    if method == "bootstrap":
        bootstrap_design = check_design(bootstrap_design)
        n_resamples = check_resamples(n_resamples, "estimate(method='bootstrap')", alpha)
    if calibration == "shared":
        counts = counts.pooled_calibration("system")
    ds = counts.dataset  # dims are always ("system", "stratum"), in that order
    n, k, m0, tn, m1, tp = (ds[v].values.astype(float) for v in ("n", "k", "m0", "tn", "m1", "tp"))

    has_test = counts.has_test().values
    has_calibration = counts.has_calibration().values
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
        )
    if method != "naive":
        _warn_low_j(ds, has_calibration & has_test, tn, m0, tp, m1, alpha, method)

    coords = {"system": ds["system"].values, "stratum": ds["stratum"].values}
    dims = ("system", "stratum")
    out = xr.Dataset(
        {
            "estimate": (dims, point),
            "ci": ((*dims, "ci_bound"), np.stack([lower, upper], axis=-1)),
            "p_hat": (dims, p_hat),
            "q0_hat": (dims, q0_hat),
            "q1_hat": (dims, q1_hat),
            "youden": (dims, j_hat),
        },
        coords={**coords, "ci_bound": ["lower", "upper"]},
        attrs={
            "method": method,
            "ci_kind": METHODS[method],
            "ci_prob": 1 - alpha,
            "alpha": alpha,
            "calibration": calibration,
            "random_seed": "None" if random_seed is None else str(random_seed),
            "n_resamples": n_resamples if method == "bootstrap" else 0,
            "bootstrap_design": bootstrap_design if method == "bootstrap" else "",
            "bayesjudge_version": __version__,
        },
    )
    out["estimate"].attrs["long_name"] = (
        "share judged correct (p_hat)" if method == "naive" else "corrected true accuracy (theta)"
    )
    return out


def _compute(
    method, c, p_hat, q0_hat, q1_hat, alpha, *, random_seed, n_resamples, bootstrap_design
):
    """Return (estimate, lower, upper) arrays for the usable groups in ``c``."""
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
            "pass calibration='shared' to borrow the calibration pooled over systems (assumes "
            "the judge behaves the same on every system), or "
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


def _warn_low_j(ds, mask, tn, m0, tp, m1, alpha, method) -> None:
    """Warn where J_hat is low, or where its interval cannot rule out a chance-level judge.

    The message speaks of ``method``: the Rogan-Gladen methods divide by J, PPI++ does not
    (a judge near chance only makes its λ small, so it falls back to the human labels).
    """
    if not mask.any():
        return
    # The one low-J rule (core.kernels.low_j: Newcombe interval of J, LOW_J_THRESHOLD), as
    # check_comparison. J = 0 exactly is "undefined" for the methods that divide by J.
    rule = low_j(tn[mask], m0[mask], tp[mask], m1[mask], alpha, undefined_at_zero=method != "ppi++")
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
        elif category in ("low", "worse") and method != "ppi++":
            found[category].append(f"{where}, errors amplified {amp}")
        else:
            found[category].append(where)
    low, worse, uncertain, undefined = (
        found[k] for k in ("low", "worse", "uncertain", "undefined")
    )

    def listing(items):
        return "; ".join(items[:6]) + (f"; and {len(items) - 6} more" if len(items) > 6 else "")

    if method == "ppi++":
        if low or worse:
            warnings.warn(
                f"Low judge quality (Youden J = q0 + q1 - 1 near or below 0) in "
                f"{listing(low + worse)}. PPI++ does not divide by J, so its estimate stays "
                "valid, but the judge's verdicts carry little information about the human "
                "labels: the tuned lambda is near 0 and the PPI++ interval is about as wide as "
                "the one from the labelled items alone. Use a better judge or prompt, or "
                "label more items at random from the test set.",
                LowJudgeQualityWarning,
                stacklevel=3,
            )
        return
    name = "Lang-Reiczigel" if method == "lang-reiczigel" else "bootstrap"
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
