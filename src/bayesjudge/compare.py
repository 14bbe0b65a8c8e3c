"""``compare``: closed-form pairwise comparisons of systems (Δθ) per stratum, as xarray.

The xarray layer over :mod:`bayesjudge.core.paired`: it takes a
:class:`~bayesjudge.JudgeCounts`, compares every pair of systems in every stratum with the
paired bootstrap or the delta method, and returns a tidy :class:`xarray.Dataset` in the
package's interval vocabulary (dim ``pair`` labelled ``"a - b"`` with coords ``first`` and
``second``, as :meth:`bayesjudge.Fit.compare`; ``ci_bound = ["lower", "upper"]``).
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr

from bayesjudge._text import group_label, pair_label, terminal_safe
from bayesjudge._version import __version__
from bayesjudge.categorical_estimate import compare_categorical
from bayesjudge.core._validation import (
    check_alpha,
    check_design,
    check_resamples,
    check_seed,
    two_sided_z,
)
from bayesjudge.core.cluster import cluster_bootstrap_difference, cluster_difference_delta
from bayesjudge.core.kernels import low_j, rg_difference_delta, youden_is_zero
from bayesjudge.core.paired import pair_cells_many, paired_bootstrap, system_pairs
from bayesjudge.data import CategoricalCounts, JudgeCounts
from bayesjudge.diagnostics import (
    label_pairs,
    random_design_cells,
    random_design_theta,
    random_design_theta_variance,
)
from bayesjudge.warnings import LowJudgeQualityWarning, SmallSampleWarning

__all__ = ["CLUSTER_COMPARE_METHODS", "COMPARE_METHODS", "RANDOM_DESIGN_CI_KINDS", "compare"]

#: Methods understood by :func:`compare`, with the ``ci_kind`` each one reports.
COMPARE_METHODS = {
    "bootstrap": "percentile bootstrap",
    "delta": "Wald (delta method)",
}
#: Methods for counts with repeated verdicts of an item (``counts.has_clusters``); the first
#: is the default there.
CLUSTER_COMPARE_METHODS = {
    "cluster-delta": "Wald, cluster-robust delta method (items as units)",
    "cluster-bootstrap": "percentile cluster bootstrap (items resampled with their verdicts)",
}
#: ``ci_kind`` of the methods on random-design counts with each system's own labelled items.
RANDOM_DESIGN_CI_KINDS = {
    "bootstrap": "percentile bootstrap (random design: items resampled, Tenenbein MLE)",
    "delta": "Wald (delta method, random design: Tenenbein MLE)",
}
_CALIBRATIONS = ("separate", "shared")


def _calibration_tables(counts: JudgeCounts, calibration: str) -> dict[str, np.ndarray]:
    """Calibration counts as (stratum, system) arrays, or (stratum,) for one shared set."""
    shared_over = counts.calibration_shared_over
    if calibration == "separate":
        if "system" in shared_over:
            raise ValueError(
                "These counts carry one calibration set shared over systems (attached with "
                "with_calibration_from or pooled_calibration), so the systems have no separate "
                "calibration; use calibration='shared'."
            )
        return {f: counts.dataset[f].transpose("stratum", "system").values for f in _CAL}
    dims = {"system", *shared_over}
    pooled = counts.shared_calibration_counts(sorted(dims))
    template = counts.n.isel(system=0, drop=True)
    return {f: pooled[f].broadcast_like(template).transpose("stratum").values for f in _CAL}


_CAL = ("tn", "m0", "tp", "m1")


def _paired_bootstrap(*args, **kwargs):
    """:func:`paired_bootstrap` without its n_resamples warning (compare warns once itself)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", r"paired_bootstrap: n_resamples=", SmallSampleWarning)
        return paired_bootstrap(*args, **kwargs)


def _usable(counts, cal, calibration, strata) -> np.ndarray:
    """Usable (stratum, system): test items and an identified plug-in θ; warn where not.

    A pair of systems is compared in a stratum where both are usable, so one system without
    test items (or calibration) does not blank the other pairs of that stratum.
    """
    n = counts.n.transpose("stratum", "system").values
    no_test = n == 0
    m0, m1 = cal["m0"], cal["m1"]
    no_cal = (m0 == 0) | (m1 == 0)
    # J == 0 exactly on integers (the kernel youden_is_zero). J = 0 policy: NaN (the pairs of
    # that system are not compared there), with a LowJudgeQualityWarning.
    chance = youden_is_zero(cal["tn"], m0, cal["tp"], m1) & ~no_cal
    if calibration == "shared":  # one table per stratum, for every system
        no_cal = np.broadcast_to(no_cal[:, None], n.shape)
        chance = np.broadcast_to(chance[:, None], n.shape)

    def where(mask) -> str:
        return ", ".join(
            f"{strata[t]!r} ({', '.join(repr(counts.systems[s]) for s in np.flatnonzero(row))})"
            for t, row in enumerate(mask)
            if row.any()
        )

    if no_test.any():
        warnings.warn(
            f"Some system has no test items in strata {strata[no_test.any(axis=1)].tolist()} "
            f"(stratum (systems): {where(no_test)}): its comparisons there are NaN.",
            SmallSampleWarning,
            stacklevel=3,
        )
    missing = no_cal & ~no_test
    if missing.any():
        warnings.warn(
            f"No calibration items of one true label (m0 = 0 or m1 = 0) for some system in "
            f"strata {strata[missing.any(axis=1)].tolist()} (stratum (systems): "
            f"{where(missing)}): its comparisons there are NaN. Label calibration items of "
            f"both kinds, or use calibration='shared' (but pooling assumes that the judge's q0 "
            f"and q1 do not differ between the systems, and is biased where they do: check "
            f"that first, e.g. with bayesjudge.core.youden_difference).",
            SmallSampleWarning,
            stacklevel=3,
        )
    flat = chance & ~no_test & ~no_cal
    if flat.any():
        warnings.warn(
            f"The judge is no better than chance on the calibration set (q0 + q1 == 1) for some "
            f"system in strata {strata[flat.any(axis=1)].tolist()} (stratum (systems): "
            f"{where(flat)}): θ is not identified there and its comparisons are NaN.",
            LowJudgeQualityWarning,
            stacklevel=3,
        )
    return ~(no_test | no_cal | chance)


def _warn_low_j(counts, cal, calibration, usable, alpha, divides_by_j) -> None:
    """Warn where the judge is weak, worse than chance or not shown better than chance.

    The one low-J rule (:func:`~bayesjudge.core.kernels.low_j`: Ĵ below
    :data:`~bayesjudge.core.kernels.LOW_J_THRESHOLD`, or its Newcombe interval reaching 0),
    as ``estimate`` and ``check_comparison`` apply it; J = 0 exactly was warned by
    :func:`_usable`. ``divides_by_j``: the Rogan–Gladen Δθ amplifies errors by 1/|J|, the
    random design's likelihood does not.
    """
    shared = calibration == "shared"
    tables = {f: np.broadcast_to(cal[f][:, None], usable.shape) if shared else cal[f]
              for f in _CAL}  # fmt: skip
    if shared:  # one table per stratum: judge it once, at its first usable system
        usable = usable & (np.cumsum(usable, axis=1) == 1)
    if not usable.any():
        return
    rule = low_j(*(tables[f][usable] for f in ("tn", "m0", "tp", "m1")), alpha)
    found: dict[str, list[str]] = {"low": [], "worse": [], "uncertain": []}
    for (t, s), j, lo, hi, category in zip(
        zip(*np.nonzero(usable), strict=True), *(np.atleast_1d(a) for a in rule), strict=True
    ):
        if category not in found:
            continue
        where = (
            f"the shared calibration/stratum={terminal_safe(counts.strata[t])}"
            if shared
            else group_label(counts.systems[s], counts.strata[t])
        )
        amp = ""
        if divides_by_j and category != "uncertain":
            amp = f", errors amplified about {1 / abs(j):.0f}x"
        found[category].append(
            f"{where}: J = {j:.2f} ({100 * (1 - alpha):g}% interval {lo:.2f} to {hi:.2f}){amp}"
        )

    def listing(items):
        return "; ".join(items[:6]) + (f"; and {len(items) - 6} more" if len(items) > 6 else "")

    texts = {
        "low": "Low judge quality (Youden J = q0 + q1 - 1 near 0) in {}: "
        + (
            "the Rogan-Gladen Δθ divides by each system's J, so it is unstable and its "
            "interval wide. Use a better judge or prompt, label more calibration items, or "
            "weaken the claim."
            if divides_by_j
            else "the likelihood does not divide by J, but the judge's verdicts carry little "
            "information, so Δθ is about as wide as from the labelled items alone."
        ),
        "worse": "Judge worse than chance (Youden J clearly below 0) in {}: its verdicts are "
        "anti-correlated with the truth. Check for swapped labels (the positive= option of "
        "JudgeCounts.from_frames, --positive) before comparing.",
        "uncertain": "Judge quality is uncertain in {}: the interval of J includes 0, so the "
        "calibration set is too small to rule out a judge no better than chance, and Δθ may "
        "be very wide. Label more calibration items of both kinds.",
    }
    for category, items in found.items():
        if items:
            warnings.warn(
                texts[category].format(listing(items)), LowJudgeQualityWarning, stacklevel=3
            )


def compare(
    counts: JudgeCounts,
    method: str | None = None,
    calibration: str = "separate",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    random_seed=None,
    *,
    bootstrap_design: str | None = None,
    pairs=None,
    scores=None,
) -> xr.Dataset:
    """Compare every pair of systems within every stratum: Δθ = θ_a − θ_b with an interval.

    Parameters
    ----------
    counts : JudgeCounts
        Counts of at least two systems. With a joint verdict table (counts from
        ``JudgeCounts.from_frames(..., item=...)``), the comparison is paired over the
        shared items; otherwise the systems are treated as independent samples.
    method : {"bootstrap", "delta", "cluster-delta", "cluster-bootstrap", None}, default None
        None is ``"bootstrap"`` for either labelling design, and ``"cluster-delta"`` for
        counts with repeated verdicts of an item (``counts.has_clusters``), the only counts
        for which the two cluster methods are accepted (and the only methods accepted for
        them). ``"bootstrap"``: clipped
        Rogan–Gladen difference with the percentile interval of a bootstrap that resamples
        shared items jointly (:func:`~bayesjudge.core.paired.paired_bootstrap`).
        ``"delta"``: unclipped Rogan–Gladen difference ± z·SE with the delta-method SE,
        covariance of the paired verdicts included
        (:func:`~bayesjudge.core.paired.rg_difference_se`; Fiedler App. B), interval clipped
        to [−1, 1]. ``"cluster-delta"``: unclipped difference ± z·SE with each system's
        cluster-robust variance (items, not verdicts, as the units;
        :func:`~bayesjudge.core.cluster.cluster_difference_delta`), interval clipped to
        [−1, 1]. ``"cluster-bootstrap"``: clipped difference with the percentile interval of
        a bootstrap that resamples each system's items with all their verdicts and the
        calibration once per replicate
        (:func:`~bayesjudge.core.cluster.cluster_bootstrap_difference`). With repeated
        verdicts there is no joint verdict table: the systems are compared as independent
        samples. With the random labelling design (``counts.design == "random"``) and each
        system's own labelled items (``calibration="separate"``), ``"delta"`` and
        ``"bootstrap"`` take the random design's maximum-likelihood θ̂ of each system
        (Tenenbein, :func:`~bayesjudge.core.likelihood.double_sampling_mle`, ``estimate``'s
        default there) instead of Rogan–Gladen: the delta method adds the two plug-in
        variances (:func:`~bayesjudge.core.allocation.random_design_variance`), the bootstrap
        resamples each system's items, labelled and unlabelled, and takes θ̂ again; the
        systems are compared as independent samples.
    calibration : {"separate", "shared"}, default "separate"
        ``"separate"``: each system's own calibration counts. ``"shared"``: one calibration
        set for all systems — the set attached with ``with_calibration_from``, or the
        systems' sets pooled — with the same ``q̂0, q̂1`` (and the same bootstrap replicate)
        for every system. Shared calibration is biased when the judge's error rates differ
        between systems (Fiedler App. C; check ΔJ first).
    alpha : float, default 0.05
        One minus the nominal coverage.
    n_resamples : int, default 10_000
        Bootstrap replicates (``method="bootstrap"`` only): at least 100 and at least
        2 / alpha; below 1000 a ``SmallSampleWarning`` says that the interval's ends carry
        Monte Carlo error.
    random_seed : int, numpy.random.Generator or None
        Seed of the bootstrap: any non-negative integer (2**70 too), a Generator or None.
    bootstrap_design : {"stratified", "random", None}, default None
        How the calibration tables were collected (see
        :func:`~bayesjudge.core.bootstrap.bootstrap_rogan_gladen`); None takes the counts'
        labelling design, ``counts.design``.
    pairs : sequence of (label, label), optional
        Compare only these pairs of systems ``(a, b)`` (Δθ = θ_a − θ_b), in this order; every
        pair in coordinate order when None. Checked as :meth:`bayesjudge.Fit.compare` checks
        them (:func:`~bayesjudge.diagnostics.label_pairs`). The bootstrap replicates are the
        same either way (a report of hundreds of systems compares about 2K pairs, not
        K(K−1)/2).

    Returns
    -------
    xarray.Dataset
        Dims ``("pair", "stratum")``; ``pair`` labels ``"a - b"`` for every pair of systems
        in coordinate order (a before b) with coords ``first`` and ``second``. Variables
        ``estimate`` (Δθ̂), ``ci`` (``ci_bound = ["lower", "upper"]``) and, for
        ``"delta"`` and ``"cluster-delta"``, ``se``; ``degenerate`` (bool): the interval has
        no test-set width (a system of the pair has a single test item, or the interval is one
        point), so it supports no claim. Attrs ``method``, ``calibration``,
        ``alpha``, ``ci_prob``, ``ci_kind``, ``paired`` (bool: whether a joint verdict table
        was used), ``clusters`` (1 for counts with repeated verdicts of an item, else 0),
        ``shared_items`` (items in the joint table, 0 when unpaired), ``n_resamples``,
        ``random_seed`` (as text), ``bootstrap_design``, ``design`` (the counts' labelling
        design), ``bayesjudge_version``.

    Raises
    ------
    ValueError
        For an unknown method or calibration (``"likelihood"`` too: the profile-likelihood
        interval of ``estimate`` has no Δθ counterpart here), fewer than two systems,
        ``calibration="separate"`` with one calibration set shared over systems, a method
        that counts verdicts as items on counts with repeated verdicts of an item, or a
        cluster method on counts without them. For ``pairs`` naming an unknown system, a
        system with itself, a pair twice, two pairs with one ``"a - b"`` label, or none.

    Warns
    -----
    SmallSampleWarning
        Where some system has no test items or no calibration items of one label: that
        system's pairs are NaN in that stratum; the other pairs are still compared. Also
        when ``n_resamples`` is below 1000 (``method="bootstrap"``), and where an interval
        is ``degenerate`` (the message names the pairs and the systems with one test item).
    LowJudgeQualityWarning
        Where a plug-in ``q̂0 + q̂1 == 1`` (that system's pairs are NaN there), or some
        bootstrap replicates are not identified; and, by the one low-J rule of ``estimate``
        (:func:`~bayesjudge.core.kernels.low_j`), where a judge is near chance, worse than
        chance (check for swapped labels) or not shown better than chance.

    Notes
    -----
    Pairing matters: when the systems' verdicts on the same items are positively
    correlated, the variance of Δθ̂ loses the covariance term, and the paired interval is
    narrower than the unpaired one (Fiedler App. B). Items that are not shared by all
    systems stay in each system's ``p̂`` and are resampled independently. Without a joint
    table the systems are compared as independent samples, which is conservative when
    they answered the same items (``attrs["paired"]`` is False).

    References
    ----------
    .. [1] Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", Sec. 4.3 and
       App. E.4 (bootstrap), App. B (delta method and pairing), App. C (shared-calibration
       bias).
    .. [2] Lee et al., "How to Correctly Report LLM-as-a-Judge Evaluations", eqs. (5), (10).

    Examples
    --------
    >>> import bayesjudge as bj
    >>> from bayesjudge.compare import compare
    >>> tests = bj.JudgeCounts.from_counts(n=1000, k=[550, 500], system=["a", "b"],
    ...                                    joint=[450, 100, 50, 400])
    >>> calib = bj.JudgeCounts.from_counts(m0=100, tn=70, m1=100, tp=90)
    >>> counts = tests.with_calibration_from(calib)  # one set shared by both systems
    >>> out = compare(counts, method="delta", calibration="shared")
    >>> print(out.pair.values.tolist(), f"{out.estimate.item():.4f}", f"{out.se.item():.4f}")
    ['a - b'] 0.0833 0.0216
    """
    if isinstance(counts, CategoricalCounts):
        return _compare_categorical(
            counts, method, calibration, alpha, n_resamples, random_seed, pairs, scores
        )
    counts = JudgeCounts(counts)
    if counts.has_clusters:
        return _compare_clusters(
            counts, method, calibration, alpha, n_resamples, random_seed, bootstrap_design, pairs
        )
    method = "bootstrap" if method is None else method
    if method == "likelihood":
        raise ValueError(
            "compare has no method 'likelihood': the profile-likelihood interval of "
            "estimate(method='likelihood') is for one theta, not for a difference of two. "
            "Use method='bootstrap' (it resamples by the counts' labelling design), "
            "method='delta', or bj.fit(counts).compare() for the random design's full "
            "likelihood."
        )
    if method in CLUSTER_COMPARE_METHODS:
        raise ValueError(
            f"method={method!r} is for counts with repeated verdicts of an item "
            f"(counts.has_clusters, from JudgeCounts.from_frames(..., item=, repeats=)); these "
            f"counts have one verdict per item: use method='bootstrap' or 'delta'."
        )
    if method not in COMPARE_METHODS:
        raise ValueError(f"method must be one of {list(COMPARE_METHODS)}; got {method!r}.")
    if calibration not in _CALIBRATIONS:
        raise ValueError(f"calibration must be one of {list(_CALIBRATIONS)}; got {calibration!r}.")
    alpha = check_alpha(alpha)
    random_seed = check_seed(random_seed)
    if bootstrap_design is None:
        bootstrap_design = counts.design
    if method == "bootstrap":
        bootstrap_design = check_design(bootstrap_design, "bootstrap_design")
        n_resamples = check_resamples(n_resamples, "compare(method='bootstrap')", alpha)
    systems = counts.systems
    if len(systems) < 2:
        raise ValueError(f"compare needs at least two systems; got {systems!r}.")
    strata = np.asarray(counts.strata, dtype=object)
    cal = _calibration_tables(counts, calibration)
    data = {
        "cal": cal,
        "usable": _usable(counts, cal, calibration, strata),  # (stratum, system)
        "shared": calibration == "shared",
        "k": counts.k.transpose("stratum", "system").values,
        "n": counts.n.transpose("stratum", "system").values,
    }
    if counts.has_joint:
        data["joint"] = counts.joint.transpose("stratum", "pattern").values
        data["verdicts"] = counts.joint_verdicts.transpose("pattern", "system").values
    else:
        data["joint"] = np.zeros((len(strata), 0), dtype=np.int64)
        data["verdicts"] = np.zeros((0, len(systems)), dtype=np.int8)
    first, second = _pair_positions(systems, pairs)
    items = data["n"]
    # One question, one answer: where estimate takes the random design's likelihood (each
    # system's own labelled items drawn at random), so does Δθ.
    tenenbein = (
        counts.design == "random"
        and calibration == "separate"
        and not counts.calibration_shared_over
    )
    _warn_low_j(counts, cal, calibration, data["usable"], alpha, divides_by_j=not tenenbein)
    if tenenbein:
        rng = np.random.default_rng(random_seed) if method == "bootstrap" else None
        estimate, se, lower, upper = _random_design_differences(
            data, first, second, alpha, n_resamples if rng is not None else 0, rng
        )
        items = items + cal["m0"] + cal["m1"]  # every judged item, the labelled ones too
    elif method == "bootstrap":
        rng = np.random.default_rng(random_seed)
        options = {"alpha": alpha, "n_resamples": n_resamples,
                   "calibration_design": bootstrap_design, "random_seed": rng}  # fmt: skip
        estimate, lower, upper = _bootstrap_differences(data, first, second, options)
        se = None
    else:
        estimate, se, lower, upper = _delta_differences(data, first, second, two_sided_z(alpha))
    out = _dataset(counts, first, second, estimate, lower, upper, se)
    _flag_degenerate(out, counts, (items, items), method)
    paired = bool(counts.has_joint) and not tenenbein
    out.attrs.update(
        {
            "method": method,
            "calibration": calibration,
            "alpha": alpha,
            "ci_prob": 1 - alpha,
            "ci_kind": (RANDOM_DESIGN_CI_KINDS if tenenbein else COMPARE_METHODS)[method],
            "paired": paired,
            "clusters": 0,
            "shared_items": int(counts.joint.sum()) if paired else 0,
            "n_resamples": int(n_resamples) if method == "bootstrap" else 0,
            "random_seed": "None" if random_seed is None else str(random_seed),
            "bootstrap_design": bootstrap_design,
            "design": counts.design,
            "bayesjudge_version": __version__,
        }
    )
    out["estimate"].attrs["long_name"] = (
        "difference of the random design's maximum-likelihood estimates (Tenenbein) "
        "theta_first - theta_second"
        if tenenbein
        else "clipped Rogan-Gladen difference theta_first - theta_second"
        if method == "bootstrap"
        else "Rogan-Gladen difference theta_first - theta_second (unclipped)"
    )
    return out


def _random_design_differences(data, first, second, alpha, n_resamples, rng):
    """Δθ of the random design (estimate, se, lower, upper), each (pair, stratum).

    Each system's θ̂ is the MLE of its own items (the systems as independent samples); the
    delta method adds the two plug-in variances, the bootstrap resamples each system's N
    items (unlabelled and labelled, with their verdicts and labels) and takes the MLE again.
    """
    cal = data["cal"]
    cells = random_design_cells(
        data["k"], data["n"], cal["tn"], cal["m0"], cal["tp"], cal["m1"]
    )  # (stratum, system, 6)
    valid = data["usable"].T[first] & data["usable"].T[second]  # (pair, stratum)
    theta = random_design_theta(cells).T  # (system, stratum)
    estimate = np.where(valid, theta[first] - theta[second], np.nan)
    if rng is None:
        variance = random_design_theta_variance(cells).T
        se = np.where(valid, np.sqrt(variance[first] + variance[second]), np.nan)
        z = two_sided_z(alpha)
        lower = np.clip(estimate - z * se, -1.0, 1.0)
        upper = np.clip(estimate + z * se, -1.0, 1.0)
        return estimate, se, lower, upper
    totals = cells.sum(axis=-1)
    shares = np.divide(
        cells, totals[..., None], out=np.zeros(cells.shape), where=totals[..., None] > 0
    )
    draws = rng.multinomial(totals, shares, size=(n_resamples, *totals.shape))
    replicates = random_design_theta(draws)  # (replicate, stratum, system)
    diff = replicates[..., first] - replicates[..., second]  # (replicate, stratum, pair)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN where unusable
        lower, upper = np.nanquantile(diff, [alpha / 2, 1 - alpha / 2], axis=0)
    lower = np.where(valid, lower.T, np.nan)
    upper = np.where(valid, upper.T, np.nan)
    return estimate, None, lower, upper


def _cluster_method(counts: JudgeCounts, method) -> str:
    """Return the cluster method to use: ``"cluster-delta"`` for None; refuse the others."""
    if method is None:
        return next(iter(CLUSTER_COMPARE_METHODS))
    if method not in CLUSTER_COMPARE_METHODS:
        raise ValueError(
            f"These counts hold repeated verdicts of an item (counts.clusters: items judged "
            f"several times), whose verdicts are correlated; compare(method={method!r}) would "
            f"count every verdict as an independent item and understate the uncertainty of a "
            f"difference. Use method='cluster-delta' (the default here) or "
            f"'cluster-bootstrap', which treat the items as the units; pass "
            f"counts.without_clusters() to count the verdicts as independent items on purpose."
        )
    return method


def _cluster_calibration(counts: JudgeCounts, calibration: str):
    """Calibration counts (and labelled items' cluster tables, or None) per stratum/system.

    Separate: arrays (stratum, system) and tables (stratum, system, truth, R, R + 1). Shared:
    one set per stratum, the systems' sets added up as :meth:`JudgeCounts.pool` adds them
    (labelled items of different systems stay different items; copies of one set count once).
    """
    cal = _calibration_tables(counts, calibration)
    tables = counts.calibration_clusters
    if tables is None:
        return cal, None
    if calibration == "separate":
        dims = ("stratum", "system", "truth", "repeats", "positives")
        return cal, tables.transpose(*dims).values
    pooled = counts.pool("system")
    dims = ("stratum", "truth", "repeats", "positives")
    return cal, pooled.calibration_clusters.isel(system=0, drop=True).transpose(*dims).values


def _compare_clusters(
    counts, method, calibration, alpha, n_resamples, random_seed, bootstrap_design, pairs
) -> xr.Dataset:
    """``compare`` of counts with repeated verdicts of an item: the cluster-aware Δθ."""
    method = _cluster_method(counts, method)
    if calibration not in _CALIBRATIONS:
        raise ValueError(f"calibration must be one of {list(_CALIBRATIONS)}; got {calibration!r}.")
    alpha = check_alpha(alpha)
    random_seed = check_seed(random_seed)
    if bootstrap_design is None:
        bootstrap_design = counts.design
    bootstrap = method == "cluster-bootstrap"
    if bootstrap:
        bootstrap_design = check_design(bootstrap_design, "bootstrap_design")
        n_resamples = check_resamples(n_resamples, "compare(method='cluster-bootstrap')", alpha)
    systems = counts.systems
    if len(systems) < 2:
        raise ValueError(f"compare needs at least two systems; got {systems!r}.")
    strata = np.asarray(counts.strata, dtype=object)
    cal, cal_tables = _cluster_calibration(counts, calibration)
    data = {
        "cal": cal,
        "cal_tables": cal_tables,
        "usable": _usable(counts, cal, calibration, strata),
        "shared": calibration == "shared",
        "tables": _test_tables(counts),
    }
    _warn_low_j(counts, cal, calibration, data["usable"], alpha, divides_by_j=True)
    first, second = _pair_positions(systems, pairs)
    options = {"alpha": alpha}
    if bootstrap:
        options.update(n_resamples=n_resamples, calibration_design=bootstrap_design,
                       random_seed=np.random.default_rng(random_seed))  # fmt: skip
    estimate, se, lower, upper = _cluster_differences(data, first, second, bootstrap, options)
    out = _dataset(counts, first, second, estimate, lower, upper, None if bootstrap else se)
    _flag_degenerate(out, counts, _cluster_moments(data["tables"]), method)
    out.attrs.update(
        {
            "method": method,
            "calibration": calibration,
            "alpha": alpha,
            "ci_prob": 1 - alpha,
            "ci_kind": CLUSTER_COMPARE_METHODS[method],
            "paired": False,
            "clusters": 1,
            "shared_items": 0,
            "n_resamples": int(n_resamples) if bootstrap else 0,
            "random_seed": "None" if random_seed is None else str(random_seed),
            "bootstrap_design": bootstrap_design,
            "design": counts.design,
            "bayesjudge_version": __version__,
        }
    )
    out["estimate"].attrs["long_name"] = (
        "clipped Rogan-Gladen difference theta_first - theta_second"
        if bootstrap
        else "Rogan-Gladen difference theta_first - theta_second (unclipped)"
    )
    return out


def _test_tables(counts: JudgeCounts) -> np.ndarray:
    """Test items' cluster tables (stratum, system, R, R + 1); one verdict each if none stored."""
    if counts.clusters is not None:
        return counts.clusters.transpose("stratum", "system", "repeats", "positives").values
    n, k = (counts.dataset[v].transpose("stratum", "system").values for v in ("n", "k"))
    return np.stack([n - k, k], axis=-1)[..., None, :]


def _cluster_differences(data, first, second, bootstrap, options):
    """Cluster Δθ (estimate, se, lower, upper), each (pair, stratum), NaN where unusable.

    As :func:`_bootstrap_differences`: the strata where every system is usable in one call
    (one random stream), then each other stratum on its usable systems.
    """
    usable, cal, shared = data["usable"], data["cal"], data["shared"]
    cal_tables = data["cal_tables"]
    shape = (len(first), usable.shape[0])
    estimate, se, lower, upper = (np.full(shape, np.nan) for _ in range(4))
    groups = [(np.flatnonzero(usable.all(axis=1)), np.arange(usable.shape[1]))]
    groups += [
        (np.array([t]), np.flatnonzero(row))
        for t, row in enumerate(usable)
        if not row.all() and row.sum() >= 2
    ]
    index = {(a, b): p for p, (a, b) in enumerate(zip(first, second, strict=True))}
    function = cluster_bootstrap_difference if bootstrap else cluster_difference_delta
    for idx, kept in groups:
        if not idx.size:
            continue
        at = {int(s): i for i, s in enumerate(kept)}
        wanted = [(a, b) for a, b in zip(first, second, strict=True) if a in at and b in at]
        if not wanted:
            continue
        tables = None
        if cal_tables is not None:
            tables = cal_tables[idx] if shared else cal_tables[idx][:, kept]
        with warnings.catch_warnings():
            # compare checked (and warned about) n_resamples itself.
            warnings.filterwarnings(
                "ignore", r"cluster_bootstrap_difference: n_resamples=", SmallSampleWarning
            )
            res = function(
                data["tables"][idx][:, kept],
                *(cal[f][idx] if shared else cal[f][idx][:, kept] for f in _CAL),
                shared_calibration=shared,
                calibration_tables=tables,
                pairs=[(at[a], at[b]) for a, b in wanted],
                **options,
            )
        rows = [index[pair] for pair in wanted]
        for field, target in (("estimate", estimate), ("se", se), ("lower", lower),
                              ("upper", upper)):  # fmt: skip
            target[np.ix_(rows, idx)] = getattr(res, field).T
    return estimate, se, lower, upper


def _cluster_moments(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Test verdicts and items (stratum, system) of cluster tables (..., R, R + 1)."""
    repeats = np.arange(1, tables.shape[-2] + 1)[:, None]
    return (tables * repeats).sum(axis=(-2, -1)), tables.sum(axis=(-2, -1))


def _flag_degenerate(out: xr.Dataset, counts, moments: tuple, method: str) -> None:
    """Add ``degenerate`` (pair, stratum) to ``out``; warn where it is True.

    ``moments`` are the test verdicts and items, each (stratum, system). An interval is
    degenerate where a system of the pair has a single test item (or cluster: no spread
    between items, so its test variance is 0 whatever its verdicts; the cluster-robust
    variance is defined as 0 there) or where the interval is one point. Such an interval
    holds the calibration's uncertainty at most: it is not certainty, and a gate must not
    support a claim on it (``bayesjudge compare`` does not). A p̂ of 0 or 1 on several items
    also has a Wald test variance of 0 but is not flagged: ``estimate`` reports that interval
    as it is, and the calibration term keeps its width.
    """
    systems, strata = counts.systems, counts.strata
    verdicts, items = moments
    single = (verdicts > 0) & (items == 1)  # (stratum, system)
    position = {s: i for i, s in enumerate(systems)}
    first = np.array([position[s] for s in out["first"].values.tolist()], dtype=np.intp)
    second = np.array([position[s] for s in out["second"].values.tolist()], dtype=np.intp)
    estimate = out["estimate"].transpose("pair", "stratum").values
    ci = out["ci"].transpose("pair", "stratum", "ci_bound").values
    point = ci[..., 0] == ci[..., 1]
    flagged = (single.T[first] | single.T[second] | point) & np.isfinite(estimate)
    out["degenerate"] = (("pair", "stratum"), flagged)
    out["degenerate"].attrs["long_name"] = (
        "the interval is one point, or a system of the pair has a single test item: it cannot "
        "support a claim"
    )
    if not flagged.any():
        return
    cases = []
    for p, t in zip(*np.nonzero(flagged), strict=True):
        why = [
            f"{terminal_safe(systems[s])} has one test item"
            + ("" if verdicts[t, s] == 1 else f" ({verdicts[t, s]} verdicts)")
            for s in (first[p], second[p])
            if single[t, s]
        ] or [f"the interval is the single point [{ci[p, t, 0]:.3g}, {ci[p, t, 1]:.3g}]"]
        cases.append(
            f"{terminal_safe(out['pair'].values[p])} in stratum {terminal_safe(strata[t])} "
            f"({', '.join(why)})"
        )
    more = f"; and {len(cases) - 6} more" if len(cases) > 6 else ""
    warnings.warn(
        f"The {method} interval of Δθ has no test-set width in {'; '.join(cases[:6])}{more}: "
        "one test item has no spread, so the interval holds the calibration's uncertainty "
        "at most, or none once clipped. That is not certainty: another test item could "
        "change the order. Do not report these intervals or gate on them (bayesjudge compare "
        f"does not support a claim on them); collect more test items, or use "
        f"{_bayesian_hint(method)}, whose interval has the test set's width.",
        SmallSampleWarning,
        stacklevel=3,
    )


def _bayesian_hint(method: str) -> str:
    """Return the Bayesian model that answers the same question with the test set's width."""
    if method in CLUSTER_COMPARE_METHODS:  # the exact engine has no item effect
        return "the Bayesian item-effect model (bj.fit(counts), bayesjudge compare --model mcmc)"
    return (
        "the exact Bayesian model (bj.fit(counts, method='exact').compare(), bayesjudge "
        "compare --model exact)"
    )


def _pair_positions(systems, pairs) -> tuple[np.ndarray, np.ndarray]:
    """Positions ``(first, second)`` of the pairs compared: every pair when ``pairs`` is None.

    Checked as :meth:`bayesjudge.Fit.compare` checks them
    (:func:`~bayesjudge.diagnostics.label_pairs`): an unknown name (named), a system with
    itself, a pair listed twice or two listed pairs with one ``"a - b"`` label are a
    ValueError, and so is an empty list.
    """
    if pairs is None:
        return system_pairs(len(systems))
    index = label_pairs(systems, pairs)
    if not index:
        raise ValueError("pairs is empty: name at least one (a, b) pair, or None for all.")
    first = np.array([i for i, _ in index], dtype=np.intp)
    second = np.array([j for _, j in index], dtype=np.intp)
    return first, second


def _bootstrap_differences(data, first, second, options):
    """Paired-bootstrap Δθ (estimate, lower, upper), each (pair, stratum), NaN where unusable.

    Strata where every system is usable go in one call (one random stream, as before); then
    each stratum with some unusable system, on its usable systems only.
    """
    usable, cal, shared = data["usable"], data["cal"], data["shared"]
    shape = (len(first), usable.shape[0])
    estimate, lower, upper = (np.full(shape, np.nan) for _ in range(3))
    groups = [(np.flatnonzero(usable.all(axis=1)), np.arange(usable.shape[1]))]
    groups += [
        (np.array([t]), np.flatnonzero(row))
        for t, row in enumerate(usable)
        if not row.all() and row.sum() >= 2
    ]
    index = {(a, b): p for p, (a, b) in enumerate(zip(first, second, strict=True))}
    for idx, kept in groups:
        if not idx.size:
            continue
        at = {int(s): i for i, s in enumerate(kept)}
        wanted = [(at[a], at[b]) for a, b in zip(first, second, strict=True)
                  if a in at and b in at]  # fmt: skip
        res = _paired_bootstrap(
            data["joint"][idx],
            data["verdicts"][:, kept],
            *(cal[f][idx] if shared else cal[f][idx][:, kept] for f in _CAL),
            k=data["k"][idx][:, kept],
            n=data["n"][idx][:, kept],
            shared_calibration=shared,
            pairs=wanted,
            **options,
        )
        rows = [index[(kept[a], kept[b])] for a, b in zip(res.first, res.second, strict=True)]
        for field, target in (("estimate", estimate), ("lower", lower), ("upper", upper)):
            target[np.ix_(rows, idx)] = getattr(res, field).T
    return estimate, lower, upper


def _delta_differences(data, first, second, z):
    """Delta-method Δθ (estimate, se, lower, upper), each (pair, stratum).

    The kernel :func:`~bayesjudge.core.kernels.rg_difference_delta` over every pair and
    stratum at once. J = 0 policy: NaN (the pair is not usable there; ``_usable`` warned).
    """
    usable, cal, shared = data["usable"], data["cal"], data["shared"]
    valid = usable.T[first] & usable.T[second]  # (pair, stratum)
    cells = pair_cells_many(data["joint"], data["verdicts"], first, second)
    k, n = data["k"].T.astype(float), data["n"].T.astype(float)
    totals = (k[first], n[first], k[second], n[second])
    if shared:
        cal_a, cal_b = tuple(cal[f].astype(float)[None, :] for f in _CAL), None
    else:
        cal_a = tuple(cal[f].T.astype(float)[first] for f in _CAL)
        cal_b = tuple(cal[f].T.astype(float)[second] for f in _CAL)
    cells = tuple(np.asarray(c, dtype=float) for c in cells)
    res = rg_difference_delta(cells, totals, cal_a, cal_b)
    estimate = np.where(valid, res.estimate, np.nan)
    se = np.where(valid, res.se, np.nan)
    lower = np.clip(estimate - z * se, -1.0, 1.0)
    upper = np.clip(estimate + z * se, -1.0, 1.0)
    return estimate, se, lower, upper


def _dataset(counts, first, second, estimate, lower, upper, se) -> xr.Dataset:
    """Return the comparison Dataset: dims ``(pair, stratum)``, pair labels ``"a - b"``."""
    systems = counts.systems
    data = {
        "estimate": (("pair", "stratum"), estimate),
        "ci": (("pair", "stratum", "ci_bound"), np.stack([lower, upper], axis=-1)),
    }
    if se is not None:
        data["se"] = (("pair", "stratum"), se)
    return xr.Dataset(
        data,
        coords={
            "pair": [
                pair_label(systems[i], systems[j]) for i, j in zip(first, second, strict=True)
            ],
            "first": ("pair", [systems[i] for i in first]),
            "second": ("pair", [systems[j] for j in second]),
            "stratum": counts.strata,
            "ci_bound": ["lower", "upper"],
        },
    )


def _compare_categorical(
    counts, method, calibration, alpha, n_resamples, random_seed, pairs, scores
):
    """``compare`` of K-category counts on a score: :func:`compare_categorical`."""
    if scores is None:
        raise ValueError(
            "comparing K-category counts needs scores={category: value} (e.g. a rubric's "
            "grades, or {'A': 1, 'tie': 0.5, 'B': 0} for a win rate with ties counted half)."
        )
    return compare_categorical(
        counts,
        scores=scores,
        method="delta" if method is None else method,
        alpha=alpha,
        calibration=calibration,
        n_resamples=n_resamples,
        random_seed=random_seed,
        pairs=pairs,
    )
