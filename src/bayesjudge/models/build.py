"""PyMC models of true accuracy θ and judge quality (q0, q1) over the dims (system, stratum).

Every model shares one likelihood per group g = (system, stratum)::

    p_g  = θ_g q1_g + (1 − θ_g)(1 − q0_g)
    k_g  ~ Binomial(n_g, p_g)       test items the judge calls correct
    tn   ~ Binomial(m0, q0)         calibration: truly incorrect items called incorrect
    tp   ~ Binomial(m1, q1)         calibration: truly correct items called correct
    m1   ~ Binomial(m0 + m1, θ)     random labelling design only: the truth counts

and differs in how q0, q1 are shared between groups (``calibration=``). When the systems
answered the same items (a joint verdict table, :attr:`JudgeCounts.joint`), the paired model
(``paired=True``) replaces the independent θ's by a Dirichlet over the systems' joint
correctness patterns and adds the joint verdict counts as a multinomial. The model cards in
``models/`` give the generative story, priors and assumptions of each.

The labelling design of the counts (:attr:`JudgeCounts.design`) decides whether the truth
counts are data. Under the stratified design (Lee et al.) m0 and m1 are fixed by design; under
the random design (humans labelled a random subset of the judged items) the number of labelled
items that are truly correct is Binomial(m0 + m1, θ), the observed ``truth`` of every model.
Where one calibration set is shared over a dim (:attr:`JudgeCounts.calibration_shared_over`),
its truth counts, taken once, are Binomial(m0 + m1, θ̄) with θ̄ the mean of θ over that dim
weighted by the groups' test items n.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from scipy.special import gammaln

from bayesjudge.core._validation import check_design
from bayesjudge.data import (
    DEFAULT_DESIGN,
    DIMS,
    MAX_PAIRED_SYSTEMS,
    CategoricalCounts,
    JudgeCounts,
    pattern_matrix,
    verdict_patterns,
)
from bayesjudge.models.categorical import build_categorical_model
from bayesjudge.models.priors import Priors
from bayesjudge.warnings import BayesJudgeWarning, LowJudgeQualityWarning, SmallSampleWarning

__all__ = [
    "CALIBRATIONS",
    "ITEM_ICC_PRIOR",
    "MAX_PAIRED_SYSTEMS",
    "MODELS",
    "ModelSpec",
    "aggregate_weights",
    "build_from_config",
    "build_item_effect_model",
    "build_model",
    "check_item_effect_counts",
    "cluster_tables",
    "model_config",
    "paired_cells",
]

CALIBRATIONS = ("separate", "shared", "hierarchical")
AGGREGATES = ("test", "dirichlet")


@dataclass(frozen=True)
class ModelSpec:
    """A registered statistical model and its model card (``models/<card>``)."""

    name: str
    card: str
    summary: str


MODELS: dict[str, ModelSpec] = {
    "separate": ModelSpec(
        "separate", "separate.md", "each group has its own q0, q1 from its own calibration set"
    ),
    "shared": ModelSpec(
        "shared", "shared.md", "one q0, q1 shared across the pooled dims (shared calibration)"
    ),
    "hierarchical": ModelSpec(
        "hierarchical",
        "hierarchical.md",
        "logit q0, logit q1 ~ Normal(mu, sigma) across the pooled dims, non-centered",
    ),
    "stratified": ModelSpec(
        "stratified",
        "stratified.md",
        "theta_total per system: strata weighted by test counts or Dirichlet weights",
    ),
    "paired": ModelSpec(
        "paired",
        "paired.md",
        "systems judged on the same items: Dirichlet over their joint correctness patterns",
    ),
}


def _normalise_pool_over(calibration: str, pool_over) -> tuple[str, ...]:
    if calibration == "separate":
        if pool_over is not None:
            raise ValueError(
                f"pool_over={pool_over!r} applies to calibration='shared' or 'hierarchical'; "
                f"calibration='separate' gives every group its own q0, q1. Drop pool_over or "
                f"choose another calibration model."
            )
        return ()
    if pool_over is None:
        return DIMS
    items = [pool_over] if isinstance(pool_over, str) else list(pool_over)
    bad = [d for d in items if d not in DIMS]
    if bad or not items:
        raise ValueError(
            f"pool_over must name one or both of {list(DIMS)}; got {pool_over!r}. For example "
            f"pool_over='system' shares the judge's quality across systems within each stratum."
        )
    return tuple(d for d in DIMS if d in items)


def aggregate_weights(counts: JudgeCounts, aggregate) -> tuple[str | None, np.ndarray | None]:
    """Return how strata are weighed into ``theta_total``: the kind and the fixed weights.

    Parameters
    ----------
    counts : JudgeCounts
        The counts the model is built on.
    aggregate : {"auto", "test", "dirichlet"}, None, mapping or array_like
        As in :func:`build_model`.

    Returns
    -------
    kind : {"test", "dirichlet", "weights"} or None
        None when there is no ``theta_total`` (``aggregate=None``, or ``"auto"`` with one
        stratum).
    weights : numpy.ndarray or None
        Fixed weights of shape (system, stratum), each row summing to 1; None for
        ``"dirichlet"`` (weights are a model variable) or no aggregate.

    Raises
    ------
    ValueError
        For an unknown kind, ``"dirichlet"`` with one stratum, ``"test"`` with a system
        without test items, or weights of the wrong shape, negative or summing to 0.

    Examples
    --------
    >>> import bayesjudge as bj
    >>> counts = bj.JudgeCounts.from_counts(n=[30, 10], k=[20, 5], stratum=["x", "y"])
    >>> kind, weights = aggregate_weights(counts, "auto")
    >>> kind, weights.tolist()
    ('test', [[0.75, 0.25]])
    """
    n_strata = counts.sizes["stratum"]
    if isinstance(aggregate, str):
        if aggregate == "auto":
            if n_strata < 2:
                return None, None
            aggregate = "test"
        if aggregate not in AGGREGATES:
            raise ValueError(
                f"aggregate must be 'auto', 'test', 'dirichlet', None or stratum weights; got "
                f"{aggregate!r}."
            )
        if aggregate == "dirichlet" and n_strata < 2:
            raise ValueError(
                "aggregate='dirichlet' weighs strata by Dirichlet-distributed shares, which "
                f"needs at least 2 strata; these counts have {n_strata}. Use aggregate=None."
            )
        if aggregate == "test":
            totals = counts.n.sum("stratum").values
            if (totals == 0).any():
                empty = [s for s, t in zip(counts.systems, totals, strict=True) if t == 0]
                raise ValueError(
                    f"aggregate='test' weighs strata by each system's test counts, but systems "
                    f"{empty} have no test items. Pass stratum weights (aggregate={{stratum: "
                    f"weight}}) or aggregate=None."
                )
            n = counts.n.values.astype(float)
            return "test", n / n.sum(1, keepdims=True)
        return aggregate, None
    if aggregate is None:
        return None, None
    if isinstance(aggregate, Mapping):
        # Keys are matched as text: the stored configuration (JSON) holds them as strings.
        lookup = {str(k): v for k, v in aggregate.items()}
        labels = [str(s) for s in counts.strata]
        missing = [s for s in labels if s not in lookup]
        extra = [s for s in lookup if s not in labels]
        if missing or extra:
            raise ValueError(
                f"aggregate weights must name every stratum {counts.strata}; missing "
                f"{missing}, unknown {extra}."
            )
        aggregate = [lookup[s] for s in labels]
    w = _weights_array(aggregate)
    shape = (counts.sizes["system"], n_strata)
    if w.shape == (n_strata,):
        w = np.broadcast_to(w, shape)
    if w.shape != shape or not np.isfinite(w).all() or (w < 0).any() or (w.sum(1) <= 0).any():
        raise ValueError(
            f"aggregate weights must be non-negative numbers of shape (stratum,) = "
            f"({n_strata},) or (system, stratum) = {shape}, with a positive total per system; "
            f"got {np.asarray(aggregate).tolist()!r}."
        )
    return "weights", w / w.sum(1, keepdims=True)


def model_config(
    calibration: str = "separate",
    pool_over=None,
    priors: Priors | Mapping | None = None,
    aggregate="auto",
    judge_better_than_chance: bool = False,
    paired: bool = False,
    design: str = DEFAULT_DESIGN,
) -> dict:
    """Validate model options and return them as a JSON-friendly configuration dict.

    ``paired`` must already be resolved to a bool (see :func:`resolve_paired`). ``design``
    is the labelling design of the counts (:attr:`JudgeCounts.design`): under ``"random"``
    the truth counts m1 ~ Binomial(m0 + m1, θ) are part of the likelihood, so the design is
    part of the model (of its cached compiled form and of a fit's configuration hash).

    Examples
    --------
    >>> model_config("shared", pool_over="system")["pool_over"]
    ['system']
    >>> model_config(design="random")["design"]
    'random'
    """
    if not isinstance(paired, bool | np.bool_):
        raise TypeError(f"paired must be True or False here; got {paired!r}.")
    if calibration not in CALIBRATIONS:
        raise ValueError(f"calibration must be one of {list(CALIBRATIONS)}; got {calibration!r}.")
    if priors is None:
        priors = Priors()
    elif isinstance(priors, Mapping):
        priors = Priors.from_dict(dict(priors))
    elif not isinstance(priors, Priors):
        raise TypeError(f"priors must be a bayesjudge.Priors; got {type(priors).__name__}.")
    if calibration == "hierarchical" and (priors.known("q0") or priors.known("q1")):
        raise ValueError(
            "Priors fix q0 or q1 to a known value, which contradicts calibration="
            "'hierarchical' (a population of judge qualities). Use calibration='separate' or "
            "'shared' with a known q."
        )
    if calibration == "hierarchical" and judge_better_than_chance:
        raise ValueError(
            "judge_better_than_chance=True is available for calibration='separate' and "
            "'shared'. In the hierarchical model the population of calibrated groups already "
            "breaks the (θ, q0, q1) ↔ (1 − θ, 1 − q1, 1 − q0) tie; to lean further on a good "
            "judge, raise the logit-mean priors (e.g. Priors(q0_logit_mean=(2, 1)))."
        )
    for name, other in (("q0", "q1"), ("q1", "q0")):
        if judge_better_than_chance and priors.known(name) and getattr(priors, name) == 0:
            raise ValueError(
                f"judge_better_than_chance=True needs {other} > 1 − {name}, but {name} is "
                f"known to be 0, which leaves no room for {other} < 1. Drop one of the two."
            )
    if priors.known("q0") and priors.known("q1") and judge_better_than_chance:
        if priors.q0 + priors.q1 <= 1:
            raise ValueError(
                f"judge_better_than_chance=True, but the known q0={priors.q0} and "
                f"q1={priors.q1} give J = {priors.q0 + priors.q1 - 1:.3g} <= 0."
            )
    if not isinstance(aggregate, str | type(None)):
        if isinstance(aggregate, Mapping):
            aggregate = dict(zip(map(str, aggregate), _weights_array(list(aggregate.values())),
                                 strict=True))  # fmt: skip
            aggregate = {k: float(v) for k, v in aggregate.items()}
        else:
            aggregate = _weights_array(aggregate).tolist()
    return {
        "calibration": calibration,
        "pool_over": list(_normalise_pool_over(calibration, pool_over)),
        "priors": priors.to_dict(),
        "aggregate": aggregate,
        "judge_better_than_chance": bool(judge_better_than_chance),
        "paired": bool(paired),
        "design": check_design(design, "design"),
    }


def _expand(var, kept: Sequence[str], target: Sequence[str] = DIMS):
    """Broadcast a tensor over ``kept`` dims to the ``target`` dims (default all)."""
    return var.dimshuffle([kept.index(d) if d in kept else "x" for d in target])


def _weights_array(values) -> np.ndarray:
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"aggregate weights must be numbers (one per stratum); got {values!r}."
        ) from None


def _f64(values) -> list[np.float64]:
    """Prior parameters as float64: pytensor would make exact floats (2.0, 1.5) float32."""
    return [np.float64(v) for v in values]


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _warn_uncalibrated(cal, calibration: str, priors: Priors) -> None:
    if priors.known("q0") and priors.known("q1"):
        return
    lacking = ((cal["m0"] == 0) & (not priors.known("q0"))) | (
        (cal["m1"] == 0) & (not priors.known("q1"))
    )
    if not bool(lacking.any()):
        return
    first = np.argwhere(np.atleast_1d(lacking.values))[0]
    label = ", ".join(
        f"{d}={_plain(lacking[d].values[i])!r}" for d, i in zip(lacking.dims, first, strict=False)
    )
    hint = {
        "separate": "its q0, q1 come from the prior alone, so θ is barely identified. Use "
        "calibration='hierarchical' (or 'shared', which assumes the judge's q0, q1 do not "
        "differ between the groups: fit tests that and warns PooledCalibrationWarning) to "
        "borrow calibration from other groups, judge_better_than_chance=True, or informative "
        "priors on q0, q1.",
        "shared": "its q0, q1 come from the prior alone. Attach calibration data with "
        "JudgeCounts.with_calibration_from(...) or pool over more dims.",
        "hierarchical": "its q0, q1 are drawn from the population of the other groups, so its "
        "θ interval is wider; it is right only if this group's judge behaves like theirs.",
    }[calibration]
    warnings.warn(
        f"{int(lacking.sum())} calibration group(s) lack truly-incorrect (m0 = 0) or "
        f"truly-correct (m1 = 0) items (first: {label or 'the only group'}); {hint}",
        SmallSampleWarning,
        stacklevel=3,
    )


def _warn_contradicted_constraint(cal, priors: Priors) -> None:
    """Warn when ``judge_better_than_chance=True`` meets calibration counts with J clearly < 0.

    A group contradicts J = q0 + q1 − 1 > 0 when even the one-sided 97.5 % Clopper-Pearson
    upper bounds of its q0 and q1 (or their known values) sum to less than 1. The constraint
    would then pull the posterior far from the data (at tn = tp = 0 of 50 each, measured:
    q0 ≈ q1 ≈ 0.50 and J ≈ 0.01 instead of 0, 0 and −1).
    """
    from scipy import stats

    def observed(name, hits, total):
        if priors.known(name):
            value = float(getattr(priors, name))
            return np.full(cal[total].shape, value), np.full(cal[total].shape, value)
        x = np.asarray(cal[hits].values, dtype=float)
        m = np.asarray(cal[total].values, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            point = np.where(m > 0, x / np.where(m > 0, m, 1), np.nan)
            upper = np.where(x >= m, 1.0, stats.beta.ppf(0.975, x + 1, np.maximum(m - x, 1.0)))
        return point, upper

    q0, q0_upper = observed("q0", "tn", "m0")
    q1, q1_upper = observed("q1", "tp", "m1")
    contradicted = np.atleast_1d(q0_upper + q1_upper < 1)
    if not contradicted.any():
        return
    first = tuple(np.argwhere(contradicted)[0])
    dims = cal["m0"].dims
    label = ", ".join(
        f"{d}={_plain(cal[d].values[i])!r}" for d, i in zip(dims, first, strict=False)
    )

    def at(values):
        return float(np.atleast_1d(values)[first])

    def counts(hits, total, name):
        if priors.known(name):
            return f"{name} known = {at(q0 if name == 'q0' else q1):.2f}"
        return f"{hits} = {int(at(cal[hits].values))} of {total} = {int(at(cal[total].values))}"

    j = at(q0) + at(q1) - 1
    warnings.warn(
        f"judge_better_than_chance=True assumes the judge beats chance (J = q0 + q1 − 1 > 0), "
        f"but the calibration counts of {int(contradicted.sum())} group(s) contradict it "
        f"(first: {label or 'the only group'}: {counts('tn', 'm0', 'q0')}, "
        f"{counts('tp', 'm1', 'q1')}; observed q0 = {at(q0):.2f}, q1 = {at(q1):.2f}, "
        f"J = {j:.2f}; even the 97.5 % upper bounds give J = "
        f"{at(q0_upper) + at(q1_upper) - 1:.2f} < 0). The constraint forces the posterior away "
        f"from these data, so its θ, q0, q1 are not to be trusted. Check whether the judge's "
        f"or the human labels are swapped (J < 0: the judge calls correct what is incorrect); "
        f"otherwise drop judge_better_than_chance.",
        LowJudgeQualityWarning,
        stacklevel=3,
    )


def paired_cells(n_systems: int) -> tuple[list[str], np.ndarray]:
    """Labels and 0/1 matrix of the 2^K joint patterns of K systems, in binary order.

    A pattern is a string of "1"/"0" in the systems' order ("10": the first system correct,
    the second incorrect). The same labels serve the latent correctness cells (``cell``) and
    the judge's verdict patterns (``pattern``) of the paired model. They are
    :func:`bayesjudge.data.verdict_patterns` in ascending order (``"0…0"`` first, the
    reverse of :attr:`JudgeCounts.joint`'s ``"1…1"`` first), the order of saved fits.

    Parameters
    ----------
    n_systems : int
        K, the number of systems.

    Returns
    -------
    labels : list of str
        The 2^K patterns, ``"0…0"`` first and ``"1…1"`` last.
    matrix : numpy.ndarray of int, shape (2^K, K)
        ``matrix[c, s]`` = 1 when pattern c has system s correct.

    Examples
    --------
    >>> labels, matrix = paired_cells(2)
    >>> labels
    ['00', '01', '10', '11']
    >>> matrix.tolist()
    [[0, 0], [0, 1], [1, 0], [1, 1]]
    """
    labels = verdict_patterns(n_systems, ascending=True)
    return labels, pattern_matrix(labels, n_systems).astype(np.int64)


def joint_counts(counts: JudgeCounts) -> np.ndarray | None:
    """Return the joint verdict table of ``counts`` as an array (stratum, 2^K), or None.

    Patterns are in the order of :func:`paired_cells`; patterns the table does not hold are 0.

    Examples
    --------
    >>> import bayesjudge as bj
    >>> joint_counts(bj.JudgeCounts.from_counts(n=10, k=4)) is None
    True
    """
    joint = getattr(counts, "joint", None)
    if joint is None:
        return None
    n_systems = counts.sizes["system"]
    labels, _ = paired_cells(n_systems)
    index = {label: i for i, label in enumerate(labels)}
    joint = joint.transpose("stratum", "pattern").sel(stratum=counts.strata)
    out = np.zeros((counts.sizes["stratum"], len(labels)), dtype=np.int64)
    for j, pattern in enumerate(joint["pattern"].values.tolist()):
        out[:, index[str(pattern)]] += np.asarray(joint.values[:, j], dtype=np.int64)
    return out


def resolve_paired(counts: JudgeCounts, paired) -> bool:
    """Decide whether the paired model applies: ``paired`` None, True or False.

    None: paired when ``counts`` carry a joint verdict table of at least 2 systems (and at most
    :data:`MAX_PAIRED_SYSTEMS`; with more, a warning and the unpaired model). True: requires
    the table. False: the unpaired model.

    Examples
    --------
    >>> import bayesjudge as bj
    >>> resolve_paired(bj.JudgeCounts.from_counts(n=10, k=4), None)
    False
    """
    if paired is not None and not isinstance(paired, bool | np.bool_):
        raise ValueError(f"paired must be None, True or False; got {paired!r}.")
    has_joint = getattr(counts, "joint", None) is not None
    n_systems = counts.sizes["system"]
    if paired is None:
        if not has_joint or n_systems < 2:
            return False
        if n_systems > MAX_PAIRED_SYSTEMS:
            warnings.warn(
                f"These counts pair {n_systems} systems on shared items, but the joint model "
                f"is limited to K <= {MAX_PAIRED_SYSTEMS} (2^K cells); fitting the unpaired "
                f"model, whose intervals of differences ignore the pairing. Use "
                f"bayesjudge.fit_pairwise(counts) for paired differences two systems at a "
                f"time, or pass paired=False to silence this.",
                BayesJudgeWarning,
                stacklevel=3,
            )
            return False
        return True
    if paired:
        if not has_joint:
            raise ValueError(
                "paired=True needs the joint verdict table of the systems on shared items, "
                "but these counts have none. Count item-level tables with "
                "JudgeCounts.from_frames(test, calibration, system='system', item='item'), or "
                "pass JudgeCounts.from_counts(..., joint=...); or use paired=False."
            )
        if n_systems > MAX_PAIRED_SYSTEMS:
            raise ValueError(
                f"paired=True models the joint correctness of all {n_systems} systems, "
                f"2^{n_systems} cells per stratum; it is limited to K <= "
                f"{MAX_PAIRED_SYSTEMS}. Use bayesjudge.fit_pairwise(counts) for the paired "
                f"difference of every pair of systems, or select at most "
                f"{MAX_PAIRED_SYSTEMS} systems with counts.sel(system=[...])."
            )
    return bool(paired)


def paired_prior_concentration(priors: Priors, n_systems: int) -> np.ndarray:
    """Return the Dirichlet parameters over the 2^K cells whose marginals are ``Priors.theta``.

    With ``Priors.theta = (a, b)`` and r = a / (a + b), cell t gets
    ``alpha_t = (a + b) · Π_s r^{t_s} (1 − r)^{1 − t_s}``; then every system's
    θ_s = Σ_{t: t_s = 1} π_t is Beta(a, b) a priori, as in the unpaired model, and the total
    concentration is a + b whatever K (default 2: a flat Dirichlet over 64 cells would make
    each θ_s Beta(32, 32)).

    Examples
    --------
    >>> paired_prior_concentration(Priors(), 2).tolist()
    [0.5, 0.5, 0.5, 0.5]
    """
    a, b = priors.theta
    r = a / (a + b)
    _, matrix = paired_cells(n_systems)
    return (a + b) * np.prod(np.where(matrix == 1, r, 1 - r), axis=1)


def build_model(
    counts: JudgeCounts,
    calibration: str = "separate",
    pool_over=None,
    priors: Priors | None = None,
    aggregate="auto",
    judge_better_than_chance: bool = False,
    paired: bool | None = None,
) -> pm.Model:
    """Build the PyMC model of θ, q0 and q1 for judge counts per system and stratum.

    Parameters
    ----------
    counts : JudgeCounts
        Test and calibration counts per (system, stratum) group.
    calibration : {"separate", "shared", "hierarchical"}, default "separate"
        How the judge's quality is shared between groups. ``"separate"``: every group has its
        own q0, q1, informed by its own calibration counts. ``"shared"``: one q0, q1 for all
        groups along ``pool_over`` (Fiedler's shared calibration). ``"hierarchical"``:
        ``logit q ~ Normal(mu, sigma)`` across the groups along ``pool_over``
        (non-centered), so groups borrow strength; a group without calibration gets q's drawn
        from the population.
    pool_over : str or sequence of {"system", "stratum"}, optional
        Dims across which q's are shared or pooled; default both. Not used by ``"separate"``.
    priors : Priors, optional
        Priors of θ, q0, q1 (default flat Beta(1, 1)) and of the hierarchical population.
    aggregate : {"auto", "test", "dirichlet"}, None, or weights, default "auto"
        Adds ``theta_total`` per system, the accuracy over strata, ``Σ_s w_s θ_s``.
        ``"test"``: w from the system's test-set stratum counts (inference about the test
        set's mix). ``"dirichlet"``: w ~ Dirichlet(1) with the stratum counts as Multinomial
        data (inference about the population the test set was drawn from). A mapping
        ``{stratum: weight}`` or an array of shape (stratum,) or (system, stratum): known
        weights. ``"auto"`` is ``"test"`` when there are several strata, else None.
    judge_better_than_chance : bool, default False
        Restrict the prior to J = q0 + q1 − 1 > 0 (truncated Beta priors). Use it for groups
        with little or no calibration, where the data cannot tell (θ, q0, q1) from
        (1 − θ, 1 − q1, 1 − q0). Off by default: real judges can be worse than chance.
    paired : bool, optional
        Use the pairing of systems judged on the same items (model card ``models/paired.md``).
        None (default): paired when ``counts`` carry a joint verdict table
        (:attr:`JudgeCounts.joint`) of 2 to :data:`MAX_PAIRED_SYSTEMS` systems. True: the
        paired model (needs the table). False: the unpaired model. The paired model draws the
        joint correctness of the K systems on an item from π ~ Dirichlet over the 2^K cells
        per stratum (``joint_theta``), with θ_s = Σ_t π_t t_s; the shared items' verdict
        patterns are Multinomial with P(v) = Σ_t π_t Π_s P(v_s | t_s), the items not shared
        by all systems Binomial(n − shared, p) per system (``k_unshared``).

    Returns
    -------
    pymc.Model
        With coords ``system`` and ``stratum``; variables ``theta``, ``q0``, ``q1``,
        ``youden`` (J), ``p`` and, with strata aggregated, ``theta_total``; observed ``k``,
        ``tn``, ``tp``. Under ``"shared"`` the q's and J have the dims not in ``pool_over``.
        ``tn`` and ``tp`` have the dims along which the calibration sets are distinct (all,
        unless one set was attached to every group, see
        :attr:`JudgeCounts.calibration_shared_over`). Hierarchical models add
        ``q0_logit_mean``, ``q0_logit_scale``, ``q0_z`` (and the same for q1). The paired
        model adds coords ``cell`` and ``pattern`` (:func:`paired_cells`), the free
        ``joint_theta`` (stratum, cell), the data ``joint_observed`` (stratum, pattern) and
        observed ``joint`` (stratum, pattern); ``theta`` is deterministic and the observed
        ``k`` is replaced by ``k_unshared``. Under the random labelling design
        (``counts.design == "random"``) the observed ``truth`` (the truth counts m1 of the
        labelled items, Binomial(m0 + m1, θ)) has the dims of ``tn`` and ``tp``; where the
        calibration set is shared over a dim its θ is the mean of θ over that dim weighted
        by the groups' test items n (equal weights where they have none).

    Raises
    ------
    ValueError
        For an unknown calibration model, bad ``pool_over`` or ``aggregate``, priors that
        contradict the model, or counts whose calibration set is shared (see
        :attr:`JudgeCounts.calibration_shared_over`) with a model that keeps it separate;
        ``paired=True`` without a joint verdict table or with more than
        :data:`MAX_PAIRED_SYSTEMS` systems (use ``bayesjudge.fit_pairwise``).

    Warns
    -----
    SmallSampleWarning
        If a calibration group has no truly-incorrect or no truly-correct items.

    Notes
    -----
    Identifiability: the test counts alone cannot distinguish (θ, q0, q1) from
    (1 − θ, 1 − q1, 1 − q0); calibration data breaks the tie. Groups with no calibration in a
    ``"separate"`` model have a bimodal posterior unless ``judge_better_than_chance=True``.
    The judge's error rates are assumed the same on the calibration and test items of a
    group (given the truth) — the invariance assumption of Lee et al.

    References
    ----------
    .. [1] A. Gelman and B. Carpenter, "Bayesian analysis of tests with unknown specificity
       and sensitivity", J. R. Stat. Soc. C 69(5), 2020.
    .. [2] C. Lee et al., "How to Correctly Report LLM-as-a-Judge Evaluations", Sec. 3.
    .. [3] Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", Sec. 4-5.

    Examples
    --------
    >>> import bayesjudge as bj
    >>> counts = bj.JudgeCounts.from_counts(n=1000, k=400, m0=100, tn=70, m1=100, tp=90)
    >>> model = bj.build_model(counts)
    >>> sorted(v.name for v in model.free_RVs)
    ['q0', 'q1', 'theta']
    >>> model.named_vars_to_dims["theta"]
    ('system', 'stratum')
    >>> random = bj.JudgeCounts.from_counts(n=1800, k=1000, m0=80, tn=64, m1=120, tp=108,
    ...                                     design="random")
    >>> sorted(v.name for v in bj.build_model(random).observed_RVs)
    ['k', 'tn', 'tp', 'truth']
    """
    if isinstance(counts, CategoricalCounts):
        if aggregate != "auto" or judge_better_than_chance or paired is not None:
            raise ValueError(
                "aggregate=, judge_better_than_chance= and paired= are options of binary "
                "counts; K-category counts (CategoricalCounts) take calibration=, pool_over= "
                "and priors= here (confusion= and scores=: build_categorical_model)."
            )
        return build_categorical_model(
            counts, calibration=calibration, pool_over=pool_over, priors=priors
        )
    counts = JudgeCounts(counts)
    paired = resolve_paired(counts, paired)
    config = model_config(
        calibration, pool_over, priors, aggregate, judge_better_than_chance, paired,
        counts.design,
    )  # fmt: skip
    return build_from_config(counts, config)


def build_from_config(counts: JudgeCounts, config: dict) -> pm.Model:
    """Build the PyMC model of ``counts`` from a checked model configuration.

    Parameters
    ----------
    counts : JudgeCounts
        The counts.
    config : dict
        The model configuration of :func:`model_config` (as stored in a fit:
        ``calibration``, ``pool_over``, ``priors`` as a dict, ``aggregate``,
        ``judge_better_than_chance``, ``paired``, ``design``). A configuration without
        ``design`` (saved before the labelling design existed) is the stratified design.

    Returns
    -------
    pymc.Model
        As :func:`build_model`, which checks its options and calls this.

    Raises
    ------
    ValueError
        If the configuration's ``design`` is not ``counts.design``, and as
        :func:`build_model`.

    Examples
    --------
    >>> import bayesjudge as bj
    >>> counts = bj.JudgeCounts.from_counts(n=100, k=60, m0=40, tn=30, m1=60, tp=54)
    >>> model = build_from_config(counts, model_config())
    >>> sorted(model.named_vars)[:3]
    ['k', 'k_observed', 'm0']
    """
    design = config.get("design", DEFAULT_DESIGN)
    if design != counts.design:
        raise ValueError(
            f"The model configuration has design={design!r} but the counts were declared "
            f"design={counts.design!r}; the labelling design is a property of the counts. "
            f"Build from JudgeCounts.from_counts(..., design={design!r}) or use "
            f"model_config(..., design=counts.design)."
        )
    if counts.has_clusters:
        return _item_effect_from_config(counts, config)
    calibration = config["calibration"]
    pooled = tuple(config["pool_over"])
    priors = Priors.from_dict(config["priors"])
    agg_kind, agg_weights = aggregate_weights(counts, config["aggregate"])
    ds = counts.dataset

    shared = counts.calibration_shared_over
    kept = _q_dims(calibration, pooled, shared)
    # The calibration data keep every dim along which they are distinct sets, so that the
    # posterior predictive check can see a group whose judge differs from a shared q.
    cal_dims = tuple(d for d in DIMS if d not in shared)
    cal = ds[["m0", "tn", "m1", "tp"]].isel({d: 0 for d in shared}, drop=True)
    # What each q sees; for "shared" this also raises if one shared set would be split.
    seen_by_q = counts.shared_calibration_counts(pooled) if calibration == "shared" else cal
    _check_fixed_q(cal, priors)
    _warn_uncalibrated(seen_by_q, calibration, priors)
    if config["judge_better_than_chance"]:
        _warn_contradicted_constraint(seen_by_q, priors)

    paired = bool(config.get("paired", False))
    coords = {"system": counts.systems, "stratum": counts.strata}
    if paired:
        joint = joint_counts(counts)
        if joint is None:
            raise ValueError(
                "The paired model needs the joint verdict table of the systems on shared "
                "items (JudgeCounts.from_frames(..., item='item')); these counts have none."
            )
        cells, truth_matrix = paired_cells(counts.sizes["system"])
        coords |= {"cell": cells, "pattern": cells}
    with pm.Model(coords=coords) as model:
        n = pm.Data("n", ds["n"].values, dims=DIMS)
        k_obs = pm.Data("k_observed", ds["k"].values, dims=DIMS)
        m0 = pm.Data("m0", cal["m0"].values, dims=cal_dims)
        tn_obs = pm.Data("tn_observed", cal["tn"].values, dims=cal_dims)
        m1 = pm.Data("m1", cal["m1"].values, dims=cal_dims)
        tp_obs = pm.Data("tp_observed", cal["tp"].values, dims=cal_dims)

        if paired:
            joint_obs = pm.Data("joint_observed", joint, dims=("stratum", "pattern"))
            alpha = paired_prior_concentration(priors, counts.sizes["system"])
            pi = pm.Dirichlet(
                "joint_theta",
                a=np.broadcast_to(alpha, joint.shape).copy(),
                dims=("stratum", "cell"),
            )
            theta = pm.Deterministic("theta", pt.dot(pi, truth_matrix.astype(float)).T, dims=DIMS)
        else:
            theta = pm.Beta("theta", *_f64(priors.theta), dims=DIMS)
        if calibration == "hierarchical":
            q0, q1 = (
                _hierarchical_q(name, priors, kept=tuple(d for d in DIMS if d not in pooled))
                for name in ("q0", "q1")
            )
        else:
            q0, q1 = _beta_qs(
                priors, kept, judge_better_than_chance=config["judge_better_than_chance"]
            )
        pm.Deterministic("youden", q0 + q1 - 1, dims=kept)
        q0_full, q1_full = _expand(q0, kept), _expand(q1, kept)
        p = pm.Deterministic("p", theta * q1_full + (1 - theta) * (1 - q0_full), dims=DIMS)

        if paired:
            _paired_likelihood(n, k_obs, joint_obs, pi, p, q0_full, q1_full, truth_matrix)
        else:
            pm.Binomial("k", n=n, p=p, observed=k_obs, dims=DIMS)
        q0_cal, q1_cal = _expand(q0, kept, cal_dims), _expand(q1, kept, cal_dims)
        pm.Binomial("tn", n=m0, p=q0_cal, observed=tn_obs, dims=cal_dims)
        pm.Binomial("tp", n=m1, p=q1_cal, observed=tp_obs, dims=cal_dims)
        if design == "random":
            _truth_likelihood(theta, n, m0, m1, shared, cal_dims)

        if agg_kind == "dirichlet":
            weights = pm.Dirichlet("stratum_weight", a=np.ones(ds["n"].shape), dims=DIMS)
            pm.Multinomial("stratum_n", n=n.sum(axis=1), p=weights, observed=n, dims=DIMS)
        elif agg_kind is not None:
            weights = pm.Data("stratum_weight", agg_weights, dims=DIMS)
        if agg_kind is not None:
            pm.Deterministic("theta_total", (theta * weights).sum(axis=1), dims="system")
    return model


def _item_effect_from_config(counts: JudgeCounts, config: dict) -> pm.Model:
    """Build the item-effect model of counts with repeated verdicts if the configuration allows.

    Counts with repeated verdicts of an item have one model (``bj.fit`` fits it and
    :attr:`bayesjudge.Fit.model` rebuilds it from a fit's configuration); a configuration
    that asks for something else is refused rather than silently ignored.
    """
    asked = {
        "calibration": config["calibration"] != "separate",
        "aggregate": config["aggregate"] not in (None, "auto"),
        "judge_better_than_chance": bool(config["judge_better_than_chance"]),
        "paired": bool(config.get("paired", False)),
    }
    if any(asked.values()):
        shown = ", ".join(f"{k}={config[k]!r}" for k, bad in asked.items() if bad)
        raise ValueError(
            f"These counts hold repeated verdicts of an item (counts.has_clusters), whose "
            f"model is the item-effect model (models/item-effect.md: separate calibration, no "
            f"theta_total, no pairing); {shown} is not available for it. Drop the option, or "
            f"pass counts.without_clusters() to model every verdict as an independent item."
        )
    return build_item_effect_model(counts, Priors.from_dict(config["priors"]))


def _truth_likelihood(theta, n, m0, m1, shared: tuple[str, ...], cal_dims: tuple) -> None:
    """Add the random design's truth counts: m1 ~ Binomial(m0 + m1, θ) per calibration set.

    A set of labelled items drawn at random from a group's items has m1 ~ Bin(m0 + m1, θ_g).
    A set shared over dims (copies of one set, :attr:`JudgeCounts.calibration_shared_over`)
    is taken once, and informs the mean of θ over those dims weighted by the groups' test
    items: θ̄ = Σ_g w_g θ_g, w_g = n_g / Σ n (equal weights where Σ n = 0). A set with
    m0 + m1 = 0 adds log Bin(0 | 0, θ) = 0: nothing.
    """
    if shared:
        axes = [DIMS.index(d) for d in shared]
        coords = pm.modelcontext(None).coords
        size = int(np.prod([len(coords[d]) for d in shared]))
        total = n.sum(axis=axes, keepdims=True)
        weights = pt.switch(total > 0, n / pt.maximum(total, 1), np.float64(1.0 / size))
        theta = (theta * weights).sum(axis=axes)
    pm.Binomial("truth", n=m0 + m1, p=theta, observed=m1, dims=cal_dims)


def _q_dims(calibration: str, pooled: tuple[str, ...], shared: tuple[str, ...]) -> tuple:
    """Return the dims of q0, q1; refuse a shared calibration set counted once per group."""
    if calibration == "shared":
        return tuple(d for d in DIMS if d not in pooled)
    if shared:
        raise ValueError(
            f"These counts carry one calibration set shared over {list(shared)} (attached "
            f"with with_calibration_from or pooled_calibration), but calibration="
            f"{calibration!r} treats each group's calibration counts as its own data and "
            f"would count that set once per group. Use calibration='shared' with "
            f"pool_over={list(shared)}, or give each group its own calibration counts."
        )
    return DIMS


def _check_fixed_q(cal, priors: Priors) -> None:
    """Refuse a q fixed at 0 or 1 that the calibration counts contradict."""
    for name, hits, total, label in (
        ("q0", "tn", "m0", "incorrect"),
        ("q1", "tp", "m1", "correct"),
    ):
        value = getattr(priors, name) if priors.known(name) else None
        if value in (0.0, 1.0):
            impossible = cal[hits] != (cal[total] if value == 1.0 else 0)
            if bool(impossible.any()):
                raise ValueError(
                    f"Priors fix {name} = {value:g}, so the judge would call every truly "
                    f"{label} calibration item {label if value == 1.0 else 'the opposite'}; "
                    f"but {hits} = {cal[hits].values[impossible.values].tolist()} of "
                    f"{total} = {cal[total].values[impossible.values].tolist()} contradict it. "
                    f"Use a Beta prior for {name}, or a known value inside (0, 1)."
                )


def _paired_likelihood(n, k_obs, joint_obs, pi, p, q0_full, q1_full, matrix) -> None:
    """Multinomial of the shared items' verdict patterns, Binomial of the unshared items.

    P(v | t) = Π_s P(v_s | t_s) is a (pattern × cell) matrix per stratum built from the q's of
    each (system, stratum); P(v) = Σ_t P(v | t) π_t.
    """
    truth = matrix.astype(float)
    v = truth[None, :, None, :]  # (1, pattern, 1, system)
    t = truth[None, None, :, :]  # (1, 1, cell, system)
    q0 = q0_full.T[:, None, None, :]  # (stratum, 1, 1, system)
    q1 = q1_full.T[:, None, None, :]
    says = t * (v * q1 + (1 - v) * (1 - q1)) + (1 - t) * (v * (1 - q0) + (1 - v) * q0)
    given_truth = pt.exp(pt.log(says).sum(-1))  # (stratum, pattern, cell)
    pattern_p = (given_truth * pi[:, None, :]).sum(-1)
    pattern_p = pattern_p / pattern_p.sum(-1, keepdims=True)
    pm.Multinomial(
        "joint", n=joint_obs.sum(-1), p=pattern_p, observed=joint_obs, dims=("stratum", "pattern")
    )
    # Items not shared by every system: the rest of each system's test counts.
    n_unshared = n - joint_obs.sum(-1)[None, :]
    k_unshared = k_obs - pt.dot(joint_obs, truth).T
    pm.Binomial("k_unshared", n=n_unshared, p=p, observed=k_unshared, dims=DIMS)


def _beta_qs(priors: Priors, kept: tuple[str, ...], *, judge_better_than_chance: bool):
    """Beta (or known) q0, q1 over the ``kept`` dims, optionally truncated to q0 + q1 > 1."""
    shape = tuple(len(pm.modelcontext(None).coords[d]) for d in kept)

    def known(name):
        return pm.Deterministic(name, pt.fill(pt.zeros(shape), getattr(priors, name)), dims=kept)

    if not judge_better_than_chance:
        q = {
            name: known(name)
            if priors.known(name)
            else pm.Beta(name, *_f64(getattr(priors, name)), dims=kept)
            for name in ("q0", "q1")
        }
        return q["q0"], q["q1"]
    # J > 0 ⇔ q0 > 1 − q1. Draw the free one of the pair after the other (q1 first when both
    # are free), truncated below at 1 − other; when both are free, the Potential restores the
    # joint prior ∝ Beta(q0) Beta(q1) 1{q0 + q1 > 1} (Truncated divides by P(q0 > 1 − q1)).
    if priors.known("q0") and priors.known("q1"):
        return known("q0"), known("q1")
    first, second = ("q1", "q0") if not priors.known("q0") else ("q0", "q1")
    other = (
        known(first)
        if priors.known(first)
        else pm.Beta(first, *_f64(getattr(priors, first)), dims=kept)
    )
    dist = pm.Beta.dist(*_f64(getattr(priors, second)))
    # upper=1 keeps the sampler inside the support; without it the transform maps to
    # (1 − other, ∞), where the density is zero and nearly every draw diverges.
    this = pm.Truncated(second, dist, lower=1 - other, upper=1.0, dims=kept)
    if not priors.known(first):
        pm.Potential("judge_better_than_chance", pt.log1mexp(pm.logcdf(dist, 1 - other)).sum())
    q = {first: other, second: this}
    return q["q0"], q["q1"]


def initial_points(model: pm.Model, config: dict) -> dict[str, np.ndarray]:
    """Return starting values the samplers need beyond PyMC's defaults (often none).

    With ``judge_better_than_chance`` PyMC would start the truncated q at its Beta's mean,
    which can lie below the truncation 1 − other (then the start is NaN or −inf). The values
    are passed to the samplers rather than stored as ``initval`` in the model, which would
    block PyMC's model transforms (``pm.do``, ``remove_value_transforms``).
    """
    if not config["judge_better_than_chance"]:
        return {}
    priors = Priors.from_dict(config["priors"])
    if priors.known("q0") and priors.known("q1"):
        return {}
    first, second = ("q1", "q0") if not priors.known("q0") else ("q0", "q1")
    shape = model[second].shape.eval()
    other = getattr(priors, first) if priors.known(first) else 0.75
    start = {second: np.full(shape, 1 - other / 2)}  # inside (1 − other, 1)
    if not priors.known(first):
        start[first] = np.full(shape, other)
    return start


def _hierarchical_q(name: str, priors: Priors, kept: tuple[str, ...]):
    """Non-centered logit q ~ Normal(mu, sigma) with mu, sigma over the ``kept`` dims."""
    mu = pm.Normal(f"{name}_logit_mean", *_f64(getattr(priors, f"{name}_logit_mean")), dims=kept)
    sigma = pm.HalfNormal(
        f"{name}_logit_scale", *_f64([getattr(priors, f"{name}_logit_scale")]), dims=kept
    )
    z = pm.Normal(f"{name}_z", *_f64([0.0, 1.0]), dims=DIMS)
    logit = _expand(mu, kept) + _expand(sigma, kept) * z
    return pm.Deterministic(name, pm.math.invlogit(logit), dims=DIMS)


# ------------------------------------------------------------ repeated verdicts of an item

#: Prior of the intra-item correlation ρ = 1 / (κ + 1) of the item-effect model: Beta(1, 2),
#: weakly informative (mean 1/3, density falling to 0 at ρ = 1, flat enough near 0 that a
#: judge without item effect is not pulled away from ρ ≈ 0).
ITEM_ICC_PRIOR = (1.0, 2.0)


def cluster_tables(counts: JudgeCounts) -> dict[str, np.ndarray | None]:
    """Return the cluster tables of the item-effect model as dense int64 arrays.

    ``"test"``: the test items by (system, stratum, repeats, positives) — from
    :attr:`JudgeCounts.clusters`, or, without one, ``n − k`` items with no and ``k`` with one
    'correct' verdict (one verdict per item). ``"labelled"``: the labelled items by (system,
    stratum, truth, repeats, positives) from :attr:`JudgeCounts.calibration_clusters`, or
    None (one verdict per labelled item: the calibration counts are Binomial). Both have the
    same ``repeats`` axis 1 … R and ``positives`` axis 0 … R (zeros added).
    """
    if counts.clusters is not None:
        test = counts.clusters.transpose(*DIMS, "repeats", "positives").values
    else:
        n, k = (counts.dataset[v].transpose(*DIMS).values for v in ("n", "k"))
        test = np.stack([n - k, k], axis=-1)[..., None, :]
    cal = counts.calibration_clusters
    labelled = None if cal is None else cal.transpose(*DIMS, "truth", "repeats", "positives").values
    size = max(test.shape[-2], 0 if labelled is None else labelled.shape[-2])

    def padded(table):
        pad = [(0, 0)] * (table.ndim - 2) + [(0, size - table.shape[-2])] * 2
        return np.pad(table.astype(np.int64), pad)

    return {"test": padded(test), "labelled": None if labelled is None else padded(labelled)}


# Log-probability given to the impossible cells (more 'correct' verdicts than verdicts): finite,
# so that 0 × it = 0 for their (always empty) counts, and exp of it is 0 for the random draws.
_IMPOSSIBLE = -1e30


def _log_beta_binomial_table(a, b, size: int):
    """Return log BetaBinomial(k; r, a, b) over r = 1 … size (axis −2), k = 0 … size (axis −1).

    ``a``, ``b`` are tensors of any batch shape; cells with k > r get :data:`_IMPOSSIBLE`.
    """
    r = np.arange(1, size + 1, dtype=np.float64)[:, None]
    k = np.arange(size + 1, dtype=np.float64)[None, :]
    possible = k <= r
    k_safe = np.minimum(k, r)  # keeps the gamma functions finite in the impossible cells
    log_choose = gammaln(r + 1) - gammaln(k_safe + 1) - gammaln(r - k_safe + 1)
    a, b = a[..., None, None], b[..., None, None]

    def betaln(x, y):
        return pt.gammaln(x) + pt.gammaln(y) - pt.gammaln(x + y)

    value = log_choose + betaln(k_safe + a, r - k_safe + b) - betaln(a, b)
    return pt.switch(possible, value, _IMPOSSIBLE)


def _multinomial_logp(value, items, log_p):
    """Multinomial log p of the rows of a cluster table (``items`` per row, cell log p's)."""
    return pt.gammaln(items + 1) + pt.sum(-pt.gammaln(value + 1) + value * log_p, axis=-1)


def _multinomial_rows(items, log_p, size):
    """Rows of a cluster table drawn as Multinomial(items, exp(log p)) (for the checks)."""
    p = pt.exp(log_p)
    return pm.Multinomial.dist(n=items, p=p / p.sum(axis=-1, keepdims=True), size=size)


def _cluster_rows(name: str, items, log_p, observed, dims):
    """Add the observed cluster table ``name``: each row (items with r verdicts) multinomial."""
    return pm.CustomDist(
        name, items, log_p, logp=_multinomial_logp, dist=_multinomial_rows,
        signature="(),(k)->(k)", dtype="int64", observed=observed, dims=dims,
    )  # fmt: skip


def _verdict_total(table, verdicts, r, weight):
    """Return Σ weight·table over (repeats, positives): a count of verdicts of a cluster table.

    −1 (impossible) where the table's verdicts Σ r·table differ from ``verdicts``: the
    observed tables always match (JudgeCounts checks it) and replicated ones keep their row
    totals, so this only ties ``verdicts`` (n, m0, m1) into the model's graph (nutpie's
    compiled model swaps every data container of the model for new data).
    """
    total = (table * weight).sum((-2, -1))
    return pt.switch(pt.eq((table * r).sum((-2, -1)), verdicts), total, -1)


def check_item_effect_counts(counts: JudgeCounts, priors: Priors) -> None:
    """Refuse what the item-effect model does not describe, saying what to do instead.

    Raises
    ------
    ValueError
        For a calibration set shared over a dim, a joint verdict table, and known q's.

    Examples
    --------
    >>> import bayesjudge as bj
    >>> counts = bj.JudgeCounts.from_counts(n=10, k=6, m0=4, tn=3, m1=6, tp=5)
    >>> check_item_effect_counts(counts, bj.Priors(q0=0.9))
    Traceback (most recent call last):
    ...
    ValueError: The item-effect model needs Beta priors of q0 and q1, not known q's.
    """
    if counts.calibration_shared_over or counts.has_joint:
        raise ValueError(
            "The item-effect model keeps each group's own calibration set and no pairing of "
            "systems; these counts carry a shared calibration set or a joint verdict table. "
            "Give each group its own calibration counts (and drop the joint table), or use "
            "bj.estimate(counts) (cluster-delta / cluster-bootstrap)."
        )
    if priors.known("q0") or priors.known("q1"):
        raise ValueError("The item-effect model needs Beta priors of q0 and q1, not known q's.")


def build_item_effect_model(counts: JudgeCounts, priors: Priors | None = None) -> pm.Model:
    """Build the separate-calibration model with an item effect on the judge's verdicts.

    For counts with repeated verdicts of an item (:attr:`JudgeCounts.clusters`): each test
    item is truly correct with probability θ and has its own propensity to be called correct,
    ``π ~ Beta(μκ, (1 − μ)κ)`` with ``μ = q1`` if it is truly correct and ``1 − q0`` if not;
    its ``r`` verdicts are Bernoulli(π). Integrating π and the item's truth, the probability
    that an item with ``r`` verdicts has ``k`` 'correct' ones is::

        θ · BetaBinomial(k; r, q1 κ, (1 − q1) κ) + (1 − θ) · BetaBinomial(k; r, (1 − q0) κ, q0 κ)

    and the row of the cluster table for ``r`` (its items by ``k``) is Multinomial with these
    probabilities (the observed ``clusters``). ``κ = (1 − ρ)/ρ`` with the intra-item
    correlation ``item_icc`` ρ ~ :data:`ITEM_ICC_PRIOR` per group. q0, q1 are the per-verdict
    error rates (an item's single verdict is Bernoulli(μ)). Labelled items judged several
    times (:attr:`JudgeCounts.calibration_clusters`) have the same item effect given their
    known truth: a row of their table is Multinomial with BetaBinomial(k; r, (1 − q0)κ, q0κ)
    (truth 0) or BetaBinomial(k; r, q1κ, (1 − q1)κ) (truth 1) probabilities; with one verdict
    per labelled item these are the separate model's Binomials of ``tn``, ``tp``. Under the
    random labelling design the labelled *items* that are truly correct are Binomial(labelled
    items, θ) (``truth``).

    Parameters
    ----------
    counts : JudgeCounts
        Counts, usually with a cluster table (``from_frames(..., repeats="epoch")``); without
        one every item has one verdict and the likelihood of the test counts is the separate
        model's Binomial up to a constant (checked in the tests).
    priors : Priors, optional
        Priors of θ, q0, q1 (Beta); known q's are not supported here.

    Returns
    -------
    pymc.Model
        Coords ``system``, ``stratum``, ``repeats``, ``positives`` (and ``truth`` with labelled
        repeats); free ``theta``, ``q0``, ``q1``, ``item_icc`` (dims ``(system, stratum)``),
        deterministic ``p``, ``youden``, ``concentration`` (κ); observed ``clusters`` (and
        ``calibration_clusters``), ``k``, ``tn``, ``tp`` (and ``truth`` under the random
        design). ``k`` (and, with labelled repeats, ``tn``, ``tp``) are the verdict totals of
        the tables, point masses that add nothing to the likelihood: they let the posterior
        predictive check of :meth:`bayesjudge.Fit.ppc` replicate the usual counts.

    Raises
    ------
    ValueError
        For counts with a shared calibration set or a joint verdict table, and known q's.

    Examples
    --------
    >>> import pandas as pd
    >>> import bayesjudge as bj
    >>> from bayesjudge.models.build import build_item_effect_model
    >>> test = pd.DataFrame({"item": [1, 1, 2, 2], "epoch": [1, 2, 1, 2], "judge": [1, 1, 0, 1]})
    >>> calib = pd.DataFrame({"judge": [1, 0, 1, 0], "human": [1, 0, 1, 1]})
    >>> counts = bj.JudgeCounts.from_frames(test, calib, item="item", repeats="epoch")
    >>> model = build_item_effect_model(counts)
    >>> sorted(v.name for v in model.free_RVs)
    ['item_icc', 'q0', 'q1', 'theta']
    """
    counts = JudgeCounts(counts)
    priors = Priors() if priors is None else priors
    check_item_effect_counts(counts, priors)
    ds = counts.dataset
    tables = cluster_tables(counts)
    test, labelled = tables["test"], tables["labelled"]
    size = test.shape[-2]
    coords = {"system": counts.systems, "stratum": counts.strata,
              "repeats": np.arange(1, size + 1), "positives": np.arange(size + 1)}  # fmt: skip
    table_dims = (*DIMS, "repeats", "positives")
    r = np.arange(1, size + 1)[:, None]
    pos = np.arange(size + 1)[None, :]
    if labelled is not None:
        coords["label"] = np.array([0, 1])  # "truth" names the observed truth counts
    with pm.Model(coords=coords) as model:
        n = pm.Data("n", ds["n"].values, dims=DIMS)
        k_obs = pm.Data("k_observed", ds["k"].values, dims=DIMS)
        m0 = pm.Data("m0", ds["m0"].values, dims=DIMS)
        m1 = pm.Data("m1", ds["m1"].values, dims=DIMS)
        tn_obs = pm.Data("tn_observed", ds["tn"].values, dims=DIMS)
        tp_obs = pm.Data("tp_observed", ds["tp"].values, dims=DIMS)
        test_obs = pm.Data("clusters_observed", test, dims=table_dims)
        theta = pm.Beta("theta", *_f64(priors.theta), dims=DIMS)
        q0, q1 = _beta_qs(priors, DIMS, judge_better_than_chance=False)
        icc = pm.Beta("item_icc", *_f64(ITEM_ICC_PRIOR), dims=DIMS)
        kappa = pm.Deterministic("concentration", (1 - icc) / icc, dims=DIMS)
        pm.Deterministic("youden", q0 + q1 - 1, dims=DIMS)
        pm.Deterministic("p", theta * q1 + (1 - theta) * (1 - q0), dims=DIMS)
        says_wrong = _log_beta_binomial_table((1 - q0) * kappa, q0 * kappa, size)  # truth 0
        says_right = _log_beta_binomial_table(q1 * kappa, (1 - q1) * kappa, size)  # truth 1
        mixture = pt.logaddexp(
            pt.log(theta)[..., None, None] + says_right,
            pt.log1p(-theta)[..., None, None] + says_wrong,
        )
        items = pm.Data("cluster_items", test.sum(-1), dims=(*DIMS, "repeats"))
        clusters = _cluster_rows("clusters", items, mixture, test_obs, table_dims)
        pm.DiracDelta("k", _verdict_total(clusters, n, r, pos), observed=k_obs, dims=DIMS)
        if labelled is None:
            pm.Binomial("tn", n=m0, p=q0, observed=tn_obs, dims=DIMS)
            pm.Binomial("tp", n=m1, p=q1, observed=tp_obs, dims=DIMS)
            truth_items = (m0, m1)
        else:
            cal_dims = (*DIMS, "label", "repeats", "positives")
            cal_obs = pm.Data("calibration_clusters_observed", labelled, dims=cal_dims)
            cal_items = pm.Data(
                "calibration_cluster_items", labelled.sum(-1), dims=(*DIMS, "label", "repeats")
            )
            by_truth = pt.stack([says_wrong, says_right], axis=2)
            cal = _cluster_rows("calibration_clusters", cal_items, by_truth, cal_obs, cal_dims)
            tn = _verdict_total(cal[:, :, 0], m0, r, r - pos)
            pm.DiracDelta("tn", tn, observed=tn_obs, dims=DIMS)
            pm.DiracDelta(
                "tp", _verdict_total(cal[:, :, 1], m1, r, pos), observed=tp_obs, dims=DIMS
            )
            if counts.design == "random":
                # Data, not constants: nutpie's compiled model is reused for new data.
                per_label = pm.Data("labelled_items", labelled.sum((-2, -1)), dims=(*DIMS, "label"))
                truth_items = (per_label[..., 0], per_label[..., 1])
        if counts.design == "random":
            # The labelled *items* (not verdicts) are a random sample: m1 of them truly correct.
            pm.Binomial("truth", n=truth_items[0] + truth_items[1], p=theta,
                        observed=truth_items[1], dims=DIMS)  # fmt: skip
    return model
