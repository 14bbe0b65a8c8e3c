"""Seeded simulation of judge evaluations under the misclassification model.

The generating process (``models/misclassification.md``) for each (system, stratum) group::

    p  = theta * q1 + (1 - theta) * (1 - q0)
    k  ~ Binomial(n, p)        # test items the judge calls correct
    tn ~ Binomial(m0, q0)      # truly incorrect calibration items the judge calls incorrect
    tp ~ Binomial(m1, q1)      # truly correct calibration items the judge calls correct

Two draws of the labelled (calibration) items are simulated (``calibration=``):

``"stratified"``
    ``m0`` truly incorrect and ``m1`` truly correct items, fixed by design (Lee et al. Sec. 7).
``"random"``
    ``m`` items drawn from the calibration distribution Q, whose true accuracy is
    ``theta_calibration`` (default: the test accuracy), so ``m1 ~ Binomial(m, theta_Q)`` and
    ``m0 = m - m1`` are random. With ``theta_calibration != theta`` this is the distribution
    shift of Lee et al. Sec. 8: Pr(Z) differs between test set P and calibration set Q while the
    judge's behaviour Pr(Ẑ | Z), i.e. (q0, q1), is the same on both.

and two labelling designs are declared on the counts (``design=``, as on
:meth:`JudgeCounts.from_counts`):

``design="random"`` (the random labelling design of ``docs/labelling-design.md``)
    The judge grades ``n + m`` items per group and humans label a random subset of ``m`` of
    them; each item is counted once, so ``n, k`` count the ``n`` unlabelled items and
    ``m0, m1, tn, tp`` the labelled ones, ``m1 ~ Binomial(m, theta)``. The counts then have
    the full likelihood ``Bin(k; n, p) Bin(tn; m0, q0) Bin(tp; m1, q1) Bin(m1; m, theta)``
    and carry ``design="random"``. ``test_set=True`` also returns the *test-set* accuracy, the
    share of truly correct items among the ``n + m`` judged ones, ``(m1 + T_u) / (n + m)``
    with ``T_u = Bin(k, theta q1 / p) + Bin(n - k, theta (1 - q1) / (1 - p))`` truly correct
    unlabelled items.
``design=None`` or ``"stratified"``
    The counts declare the stratified design, as before (whatever ``calibration`` drew); the
    test set is separate, so ``test_set=True`` returns the share truly correct among its
    ``n`` items, ``T / n``, with ``T`` drawn by the same rule.

Count-level draws (:func:`simulate_counts`, :func:`simulate_count_arrays`) and item-level
tables (:func:`simulate_items`) follow the same law, so item tables counted with
:meth:`JudgeCounts.from_frames` have the distribution of :func:`simulate_counts`. The
cross-system calibration instability of Fiedler Sec. 5 is parameterised by
:func:`judge_quality` and :func:`youden_pair` and simulated by :func:`simulate_instability`;
systems that answer the same items with correlated correctness are simulated item by item by
:func:`simulate_paired_items`.

K-category verdicts (preferences with ties, graded scores) follow the same process with a
confusion matrix ``C[truth, verdict]`` in place of (q0, q1): :func:`simulate_categorical_counts`
(a :class:`~bayesjudge.data.CategoricalCounts`), :func:`simulate_categorical_count_arrays`
(plain arrays) and :func:`simulate_categorical_items` (item tables); :func:`preference_confusion`
and :func:`rubric_confusion` build the confusion of a preference judge with ties and of a
graded (cumulative-logit) judge.

Several judges grading the same items (issue 17) are drawn item by item by
:func:`simulate_jury` (a :class:`~bayesjudge.data.jury.JuryCounts`, optionally the long item
table) and as multinomial pattern counts by :func:`simulate_jury_arrays` (many replications of
one group, for studies), both from the law whose pattern probabilities
:func:`jury_pattern_probabilities` gives: conditionally independent judges, or a shared item
effect of sd ``dependence`` on the judges' logit scale with their marginal q0, q1 kept.
Their K-category verdicts (conditionally independent judges, one confusion matrix each) are
drawn by :func:`simulate_categorical_jury` (a
:class:`~bayesjudge.data.CategoricalJuryCounts`), :func:`simulate_categorical_jury_items` (the
same draws as a long item table) and :func:`simulate_categorical_jury_arrays` (multinomial
pattern counts from :func:`categorical_jury_pattern_probabilities`).
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import xarray as xr
from numpy.polynomial import hermite_e
from scipy import integrate, optimize, special

from bayesjudge.core._validation import (
    CALIBRATION_DESIGNS,
    as_count,
    as_probability,
    check_design,
    format_values,
    is_seed,
)
from bayesjudge.core.exact import test_set_theta_draws
from bayesjudge.data import DEFAULT_LABEL, JudgeCounts
from bayesjudge.data.categorical import CategoricalCounts, category_array
from bayesjudge.data.categorical_jury import MAX_CATEGORIES, CategoricalJuryCounts
from bayesjudge.data.jury import MAX_JUDGES, JuryCounts

__all__ = [
    "MAX_TABLE_ROWS",
    "categorical_jury_pattern_probabilities",
    "demo_design",
    "judge_quality",
    "jury_pattern_probabilities",
    "latent_correlation",
    "preference_confusion",
    "rubric_confusion",
    "simulate_categorical_count_arrays",
    "simulate_categorical_counts",
    "simulate_categorical_items",
    "simulate_categorical_jury",
    "simulate_categorical_jury_arrays",
    "simulate_categorical_jury_items",
    "simulate_cluster_tables",
    "simulate_count_arrays",
    "simulate_counts",
    "simulate_instability",
    "simulate_items",
    "simulate_jury",
    "simulate_jury_arrays",
    "simulate_labelled_cluster_tables",
    "simulate_labelled_table",
    "simulate_paired_items",
    "simulate_repeated_items",
    "simulate_repeated_labelled_items",
    "simulate_shift",
    "youden_pair",
]


#: The most rows an item table simulated here may have (50 million): a table takes some
#: 90 bytes a row at its peak while it is built, so this bound keeps it to a few GiB. Counts
#: alone (:func:`simulate_counts`) go up to ``MAX_COUNT`` (2**53).
MAX_TABLE_ROWS = 50_000_000

# --------------------------------------------------------------------------- helpers


def _and_list(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _check_table_rows(rows, counts="simulate_counts", **sizes) -> None:
    """Refuse, before anything is drawn, an item table of more than MAX_TABLE_ROWS rows.

    ``rows``: the table's row count (a Python int: no overflow); ``sizes``: the arguments
    that set it, named in the message; ``counts``: the simulator of counts to suggest.
    """
    rows = int(rows)
    if rows <= MAX_TABLE_ROWS:
        return
    given = ", ".join(f"{name}={format_values(np.asarray(v))}" for name, v in sizes.items())
    raise ValueError(
        f"{_and_list(list(sizes))} would give an item table of {rows:,} rows; it must have at "
        f"most {MAX_TABLE_ROWS:,} (MAX_TABLE_ROWS), the most rows that fit in a few GiB of "
        f"memory while the table is built; got {given}. Simulate fewer items, or use "
        f"{counts} (counts up to 2**53 = MAX_COUNT) where counts are enough."
    )


def _check_design(calibration, m0, m1, m, theta_calibration) -> None:
    """Check that the calibration arguments fit the chosen design; name what is wrong."""
    if calibration not in CALIBRATION_DESIGNS:
        raise ValueError(
            f"calibration must be 'stratified' (m0 truly incorrect + m1 truly correct items) "
            f"or 'random' (m items drawn from the calibration distribution); got {calibration!r}."
        )
    if calibration == "stratified":
        if m0 is None or m1 is None:
            missing = [name for name, v in (("m0", m0), ("m1", m1)) if v is None]
            raise ValueError(
                f"calibration='stratified' needs m0 and m1 (calibration items that are truly "
                f"incorrect / correct); {' and '.join(missing)} missing. For m items drawn at "
                f"random pass calibration='random', m=..."
            )
        if m is not None:
            raise ValueError(
                "m (random calibration size) applies only to calibration='random'; with "
                "calibration='stratified' pass m0 and m1."
            )
        if theta_calibration is not None:
            raise ValueError(
                "theta_calibration applies only to calibration='random': a stratified "
                "calibration set fixes m0 and m1 by design, so its accuracy plays no role."
            )
    else:
        if m is None:
            raise ValueError("calibration='random' needs m (calibration items drawn at random).")
        if m0 is not None or m1 is not None:
            raise ValueError(
                "m0 and m1 are random under calibration='random' (m1 ~ Binomial(m, "
                "theta_calibration)); pass m only, or use calibration='stratified'."
            )


def _resolve_design(calibration, design, m0, m1, m, theta_calibration) -> tuple[str, str | None]:
    """Return ``(calibration, design)``: the draw of the labelled items and the declared design.

    ``design=None`` keeps the behaviour from before the labelling design existed (the counts
    declare the stratified design); ``design="random"`` draws the labelled items as a random
    subset of the judged ones (``calibration="random"`` without a shift).
    """
    if design is not None and design not in CALIBRATION_DESIGNS:
        raise ValueError(
            f"design must be None, 'stratified' or 'random' (the labelling design the counts "
            f"declare); got {design!r}."
        )
    if design != "random":
        return ("stratified" if calibration is None else calibration), design
    if calibration == "stratified":
        raise ValueError(
            "design='random' draws the labelled items as a random subset of the judged items, "
            "but calibration='stratified' fixes m0 and m1 by human label. Drop calibration= "
            "(or pass calibration='random'); to simulate a truth-stratified sample declared "
            "random, draw it with calibration='stratified' and pass the counts to "
            "JudgeCounts.from_counts(..., design='random')."
        )
    if m0 is not None or m1 is not None or m is None:
        raise ValueError(
            "design='random' needs m, the labelled items per group (a random subset of the "
            "n + m judged items), and not m0 or m1: those are random (m1 ~ Binomial(m, theta))"
            f"; got m={m!r}, m0={m0!r}, m1={m1!r}."
        )
    if theta_calibration is not None:
        raise ValueError(
            "theta_calibration does not apply to design='random': the labelled items are a "
            "random subset of the judged items, so their true accuracy is theta. For a "
            "calibration set drawn from a shifted distribution use calibration='random' "
            "without design='random'."
        )
    return "random", design


def _broadcast_shape(named: dict, extra=(), extra_name="output size") -> tuple[int, ...]:
    """Broadcast shape of the named parameters and ``extra``; a ValueError names the culprits."""
    shapes = {name: np.shape(v) for name, v in named.items() if v is not None}
    try:
        return np.broadcast_shapes(*shapes.values(), tuple(extra))
    except ValueError:
        listed = ", ".join(f"{name} {shape}" for name, shape in shapes.items() if shape)
        raise ValueError(
            f"The parameters do not broadcast to one group shape: {listed}"
            f"{f', {extra_name} {tuple(extra)}' if extra else ''}. Pass scalars or arrays of "
            f"one shape (one entry per label)."
        ) from None


def _rng(random_seed) -> np.random.Generator:
    """Return a Generator from ``random_seed`` (None, a non-negative int or a Generator)."""
    if random_seed is None or isinstance(random_seed, np.random.Generator):
        return np.random.default_rng(random_seed)
    if is_seed(random_seed):
        return np.random.default_rng(int(random_seed))
    raise ValueError(
        f"random_seed must be None, a non-negative integer or a numpy.random.Generator; got "
        f"{random_seed!r}."
    )


def _parameters(
    theta, q0, q1, n, m0, m1, m, theta_calibration, calibration, shape=(), shape_name="output size"
):
    """Validate and broadcast the generator's parameters; return a dict of arrays."""
    _check_design(calibration, m0, m1, m, theta_calibration)
    probs = {"theta": theta, "q0": q0, "q1": q1}
    if theta_calibration is not None:
        probs["theta_calibration"] = theta_calibration
    counts = {"n": n, "m0": m0, "m1": m1} if calibration == "stratified" else {"n": n, "m": m}
    values = {name: as_probability(name, v) for name, v in probs.items()}
    values |= {name: as_count(name, v).astype(np.int64) for name, v in counts.items()}
    full = _broadcast_shape(values, shape, shape_name)
    out = {name: np.broadcast_to(a, full) for name, a in values.items()}
    if calibration == "random" and theta_calibration is None:
        out["theta_calibration"] = out["theta"]
    return out


def _label_shape(system, stratum) -> tuple[int, ...]:
    return tuple(len(labels) for labels in (system, stratum) if labels is not None)


def _as_labels(labels):
    if labels is None:
        return None
    if isinstance(labels, str):
        return [labels]
    return list(labels)


def _judge(rng: np.random.Generator, truth: np.ndarray, q0, q1) -> np.ndarray:
    """Verdicts (1 = says correct) given truth: P(1 | 1) = q1, P(1 | 0) = 1 - q0."""
    return (rng.random(truth.shape) < np.where(truth == 1, q1, 1 - q0)).astype(np.int64)


# ----------------------------------------------------------------------- count draws


def simulate_count_arrays(
    theta,
    q0,
    q1,
    n,
    m0=None,
    m1=None,
    *,
    calibration=None,
    m=None,
    theta_calibration=None,
    design=None,
    test_set=False,
    size=None,
    random_seed=None,
) -> dict[str, np.ndarray]:
    """Draw the six counts as plain numpy arrays, for fast Monte Carlo studies.

    Parameters
    ----------
    theta, q0, q1 : array_like
        True test accuracy, judge specificity and sensitivity (in [0, 1]).
    n : array_like of int
        Test items per group.
    m0, m1 : array_like of int, optional
        Calibration items that are truly incorrect / correct (``calibration="stratified"``).
    calibration : {"stratified", "random"}, optional
        How the labelled items are drawn (see the module notes); default ``"stratified"``,
        or ``"random"`` under ``design="random"``.
    m : array_like of int, optional
        Calibration items drawn at random (``calibration="random"``), the labelled items under
        ``design="random"``.
    theta_calibration : array_like, optional
        True accuracy θ_Q of the calibration distribution (``calibration="random"`` only);
        defaults to ``theta`` (no distribution shift).
    design : {None, "stratified", "random"}, default None
        ``"random"``: the random labelling design (``m`` of the ``n + m`` judged items
        labelled at random, ``n`` unlabelled); see the module notes. ``None`` and
        ``"stratified"`` draw as ``calibration`` says. Only :func:`simulate_counts` records
        the design on the counts.
    test_set : bool, default False
        Also return ``theta_test``, the share truly correct among this evaluation's items:
        the ``n + m`` judged items under ``design="random"``, the ``n`` test items otherwise
        (drawn after the counts, so the counts do not change with it).
    size : tuple of int, optional
        Output shape (e.g. ``(reps,)`` or ``(reps, groups)``); the parameters must broadcast
        to it. Default: the parameters' broadcast shape.
    random_seed : int, numpy.random.Generator or None
        Seed of the draws.

    Returns
    -------
    dict of str to numpy.ndarray
        int64 arrays ``n, k, m0, tn, m1, tp`` of the output shape, plus the float array
        ``theta_test`` with ``test_set=True`` (NaN where there are no items).

    Raises
    ------
    ValueError
        If a probability is outside [0, 1], a count is not a non-negative whole number, or the
        calibration arguments do not fit the design; the message names the argument.

    Examples
    --------
    >>> from bayesjudge.simulate import simulate_count_arrays
    >>> draws = simulate_count_arrays(0.5, 0.7, 0.9, 1000, calibration="random", m=200,
    ...                               theta_calibration=0.25, size=(4,), random_seed=1)
    >>> sorted(draws), draws["k"].shape
    (['k', 'm0', 'm1', 'n', 'tn', 'tp'], (4,))
    >>> bool(((draws["m0"] + draws["m1"]) == 200).all())
    True
    >>> labelled = simulate_count_arrays(0.3, 0.8, 0.9, 1800, m=200, design="random",
    ...                                  test_set=True, size=(2,), random_seed=1)
    >>> labelled["n"].tolist(), (labelled["m0"] + labelled["m1"]).tolist()
    ([1800, 1800], [200, 200])
    >>> labelled["theta_test"].tolist()  # shares of the 2,000 judged items
    [0.2995, 0.291]
    """
    if not isinstance(test_set, bool | np.bool_):
        raise ValueError(f"test_set must be True or False; got {test_set!r}.")
    calibration, design = _resolve_design(calibration, design, m0, m1, m, theta_calibration)
    shape = () if size is None else tuple(np.atleast_1d(size).astype(int).tolist())
    par = _parameters(theta, q0, q1, n, m0, m1, m, theta_calibration, calibration, shape)
    rng = _rng(random_seed)
    p = par["theta"] * par["q1"] + (1 - par["theta"]) * (1 - par["q0"])
    # Draw order k, tn, tp (stratified) is kept so that seeded results stay the same.
    k = np.asarray(rng.binomial(par["n"], p))
    if calibration == "stratified":
        m0_draw, m1_draw = par["m0"], par["m1"]
    else:
        m1_draw = rng.binomial(par["m"], par["theta_calibration"])
        m0_draw = par["m"] - m1_draw
    tn = np.asarray(rng.binomial(m0_draw, par["q0"]))
    tp = np.asarray(rng.binomial(m1_draw, par["q1"]))
    full = k.shape
    out = {
        "n": np.broadcast_to(par["n"], full).astype(np.int64),
        "k": k.astype(np.int64),
        "m0": np.broadcast_to(m0_draw, full).astype(np.int64),
        "tn": tn.astype(np.int64),
        "m1": np.broadcast_to(m1_draw, full).astype(np.int64),
        "tp": tp.astype(np.int64),
    }
    if test_set:
        # The unlabelled items' truth given the verdicts (the posterior predictive's kernel,
        # here at the true parameters); the labelled items' truth counts as it is.
        out["theta_test"] = np.asarray(
            test_set_theta_draws(
                par["theta"], par["q0"], par["q1"], out["k"], out["n"], out["m0"], out["m1"],
                design="random" if design == "random" else "stratified", rng=rng,
            ),
            dtype=float,
        )  # fmt: skip
    return out


def simulate_counts(
    theta,
    q0,
    q1,
    n,
    m0=None,
    m1=None,
    *,
    calibration=None,
    m=None,
    theta_calibration=None,
    design=None,
    test_set=False,
    system=None,
    stratum=None,
    random_seed=None,
) -> JudgeCounts | tuple[JudgeCounts, xr.DataArray]:
    """Draw judge verdict counts for groups with known true accuracy and judge quality.

    Parameters
    ----------
    theta, q0, q1 : array_like
        True accuracy, judge specificity and judge sensitivity per group (in [0, 1]).
    n, m0, m1 : array_like of int
        Test-set size and the calibration sizes for truly incorrect / truly correct items
        (``m0``, ``m1`` only with ``calibration="stratified"``).
    calibration : {"stratified", "random"}, optional
        ``"stratified"`` (the default): ``m0`` and ``m1`` fixed by design. ``"random"``: ``m``
        items drawn from the calibration distribution, ``m1 ~ Binomial(m, theta_calibration)``.
    m : array_like of int, optional
        Calibration items per group under ``calibration="random"``; labelled items per group
        under ``design="random"``.
    theta_calibration : array_like, optional
        True accuracy of the calibration distribution (``"random"`` only; default ``theta``).
        A value different from ``theta`` simulates the distribution shift of Lee et al.
        Sec. 8.
    design : {None, "stratified", "random"}, default None
        The labelling design. ``"random"``: the judge grades ``n + m`` items per group and a
        random subset of ``m`` is labelled; ``n``, ``k`` count the unlabelled items and the
        counts carry ``design="random"``. ``None`` or ``"stratified"``: the counts declare
        the stratified design (as before this option existed). To simulate a design declared
        wrongly, draw with one and pass the counts to :meth:`JudgeCounts.from_counts` with
        the other.
    test_set : bool, default False
        Also return the true test-set accuracy per group (see :func:`simulate_count_arrays`).
    system, stratum : sequence of str, optional
        Labels of the groups, as in :meth:`JudgeCounts.from_counts`: a 1-D shape needs one of
        them, a 2-D shape ``(system, stratum)`` needs both. Scalar parameters are broadcast to
        the shape the labels define.
    random_seed : int, numpy.random.Generator or None
        Seed of the draws.

    Returns
    -------
    JudgeCounts or tuple of (JudgeCounts, xarray.DataArray)
        The simulated counts; all arguments broadcast to one group shape. With
        ``test_set=True`` also ``theta_test``, the true share of correct items among this
        evaluation's items, over the counts' dims.

    Raises
    ------
    ValueError
        If a parameter is out of range or the calibration arguments do not fit the design
        (the message names the argument).

    References
    ----------
    .. [1] C. Lee et al., "How to Correctly Report LLM-as-a-Judge Evaluations", Sec. 7 (the
       Monte Carlo design this generator follows) and Sec. 8 / App. E (distribution shift).

    Examples
    --------
    >>> from bayesjudge.simulate import simulate_counts
    >>> counts = simulate_counts(0.4, 0.7, 0.9, n=1000, m0=100, m1=100, random_seed=1)
    >>> int(counts.n.sum()), int(counts.m0.sum())
    (1000, 100)
    >>> many = simulate_counts(0.4, 0.7, 0.9, 1000, 100, 100, system=["a", "b", "c"], random_seed=1)
    >>> many.systems
    ['a', 'b', 'c']
    >>> shifted = simulate_counts(0.5, 0.7, 0.9, 1000, calibration="random", m=200,
    ...                           theta_calibration=0.25, random_seed=1)
    >>> int(shifted.m0.item() + shifted.m1.item())
    200
    >>> counts, theta_test = simulate_counts(0.3, 0.8, 0.9, n=1800, m=200, design="random",
    ...                                      test_set=True, random_seed=1)
    >>> counts.design, int(counts.n.item()), int(counts.m0.item() + counts.m1.item())
    ('random', 1800, 200)
    >>> bool(0.2 < theta_test.item() < 0.4)
    True
    """
    system, stratum = _as_labels(system), _as_labels(stratum)
    draws = simulate_count_arrays(
        theta,
        q0,
        q1,
        n,
        m0,
        m1,
        calibration=calibration,
        m=m,
        theta_calibration=theta_calibration,
        design=design,
        test_set=test_set,
        size=_broadcast_shape(
            {
                "theta": theta,
                "q0": q0,
                "q1": q1,
                "n": n,
                "m0": m0,
                "m1": m1,
                "m": m,
                "theta_calibration": theta_calibration,
            },
            _label_shape(system, stratum),
            "labels",
        ),
        random_seed=random_seed,
    )
    theta_test = draws.pop("theta_test", None)
    declared = {} if design is None else {"design": design}
    counts = JudgeCounts.from_counts(**draws, system=system, stratum=stratum, **declared)
    if not test_set:
        return counts
    truth = xr.DataArray(
        np.asarray(theta_test, dtype=float).reshape(counts.n.shape),
        dims=counts.n.dims,
        coords=counts.n.coords,
        name="theta_test",
        attrs={"description": "true share of correct items among this evaluation's items"},
    )
    return counts, truth


def simulate_shift(
    theta_test,
    theta_calibration,
    q0,
    q1,
    n,
    m,
    *,
    items=False,
    system=None,
    stratum=None,
    random_seed=None,
):
    """Simulate a test set from P and a random calibration set from Q with θ_Q ≠ θ_P.

    The judge's behaviour Pr(Ẑ | Z) — specificity ``q0`` and sensitivity ``q1`` — is the same
    on both sets; only the share of truly correct items differs (Lee et al. Sec. 8, eq. 12).

    Parameters
    ----------
    theta_test, theta_calibration : array_like
        True accuracy θ_P of the test distribution and θ_Q of the calibration distribution.
    q0, q1 : array_like
        Judge specificity and sensitivity, shared by P and Q.
    n, m : array_like of int
        Test items and calibration items per group.
    items : bool, default False
        Return item-level tables ``(test_frame, calibration_frame)`` (as
        :func:`simulate_items`) instead of counts.
    system, stratum : sequence of str, optional
        Group labels (as in :func:`simulate_counts`).
    random_seed : int, numpy.random.Generator or None
        Seed of the draws.

    Returns
    -------
    JudgeCounts or tuple of pandas.DataFrame
        Counts, or the item tables when ``items=True``.

    References
    ----------
    .. [1] C. Lee et al., "How to Correctly Report LLM-as-a-Judge Evaluations", Sec. 8,
       Table 2 and App. E (θ_P = 0.5, θ_Q ∈ [0.25, 0.75], q0 = 0.7, q1 = 0.9, n = 1000,
       m = 200).

    Examples
    --------
    >>> from bayesjudge.simulate import simulate_shift
    >>> counts = simulate_shift(0.5, 0.25, 0.7, 0.9, n=1000, m=200, random_seed=3)
    >>> int(counts.n.item()), int(counts.m0.item() + counts.m1.item())
    (1000, 200)
    >>> test, calib = simulate_shift(0.5, 0.75, 0.7, 0.9, n=10, m=5, items=True, random_seed=3)
    >>> len(test), len(calib)
    (10, 5)
    """
    options = {
        "calibration": "random",
        "m": m,
        "theta_calibration": theta_calibration,
        "system": system,
        "stratum": stratum,
        "random_seed": random_seed,
    }
    if items:
        return simulate_items(theta_test, q0, q1, n, **options)
    return simulate_counts(theta_test, q0, q1, n, **options)


# ----------------------------------------------------------------------- item tables


def simulate_items(
    theta,
    q0,
    q1,
    n,
    m0=None,
    m1=None,
    *,
    calibration="stratified",
    m=None,
    theta_calibration=None,
    system=None,
    stratum=None,
    random_seed=None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Draw item-level test and calibration tables for systems × strata.

    Each test item is truly correct with probability ``theta``; the judge calls it correct
    with probability ``q1`` if it is and ``1 - q0`` if it is not. Calibration items get a
    human label (the truth) and a judge verdict by the same rule.

    Parameters
    ----------
    theta, q0, q1, n, m0, m1, calibration, m, theta_calibration, system, stratum
        As in :func:`simulate_counts`.
    random_seed : int, numpy.random.Generator or None
        Seed of the draws.

    Returns
    -------
    test : pandas.DataFrame
        One row per test item: ``system`` / ``stratum`` (only for the dims given labels),
        ``item`` (0, 1, …, n - 1 within each group), ``truth`` (the hidden true label, 1 = correct;
        for studies — an evaluation would not know it) and ``judge`` (the verdict, 1 =
        correct).
    calibration : pandas.DataFrame
        One row per calibration item: the group columns, ``item`` (``"cal-0"``, ``"cal-1"``, …
        within each group: other items than any test item), ``judge`` and
        ``human`` (the human label, equal to the truth).

    Notes
    -----
    ``JudgeCounts.from_frames(test, calibration, system="system", stratum="stratum")`` (name
    only the group columns present) counts the tables; the ``truth`` column is ignored, and
    the ``item`` column too unless ``item="item"`` is passed (the ids then show that no
    calibration item is a test item: the stratified design). The counts then have the
    distribution of :func:`simulate_counts` with the same arguments, though not the same
    draws. ``from_frames`` sorts the labels.

    Examples
    --------
    >>> from bayesjudge.data import JudgeCounts
    >>> from bayesjudge.simulate import simulate_items
    >>> test, calib = simulate_items(0.6, 0.7, 0.9, n=50, m0=10, m1=20,
    ...                              system=["a", "b"], random_seed=2)
    >>> list(test.columns), list(calib.columns)
    (['system', 'item', 'truth', 'judge'], ['system', 'item', 'judge', 'human'])
    >>> counts = JudgeCounts.from_frames(test, calib, system="system")
    >>> counts.n.values.ravel().tolist(), counts.m1.values.ravel().tolist()
    ([50, 50], [20, 20])
    """
    system, stratum = _as_labels(system), _as_labels(stratum)
    labels_shape = _label_shape(system, stratum)
    par = _parameters(
        theta, q0, q1, n, m0, m1, m, theta_calibration, calibration, labels_shape, "labels"
    )
    shape = par["theta"].shape
    if len(shape) > 2 or (shape and shape != labels_shape):
        raise ValueError(
            f"The parameters have group shape {shape} but the labels give {labels_shape}: pass "
            f"system= (and stratum= for 2-D parameters) with one label per group."
        )
    labelled = ("m0", "m1") if calibration == "stratified" else ("m",)
    _check_table_rows(
        sum(np.sum(par[v], dtype=np.float64) for v in ("n", *labelled)),
        **{v: (n, m0, m1, m)[("n", "m0", "m1", "m").index(v)] for v in ("n", *labelled)},
    )
    rng = _rng(random_seed)
    flat = {name: a.reshape(-1) for name, a in par.items()}
    groups = flat["theta"].size
    # Group columns: the label of each flat group index along each labelled dim.
    index = np.unravel_index(np.arange(groups), shape) if shape else ()
    columns = {}
    for axis, (dim, labels) in enumerate(
        (d, v) for d, v in (("system", system), ("stratum", stratum)) if v is not None
    ):
        columns[dim] = np.asarray(labels, dtype=object)[index[axis]]

    def frame(sizes, truth_prob=None, truth=None, human=False):
        group = np.repeat(np.arange(groups), sizes)
        item = np.arange(group.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        if human:  # calibration items are other items than any test item: ids "cal-0", …
            item = np.char.add("cal-", item.astype(str)).astype(object)
        if truth is None:
            truth = (rng.random(group.size) < truth_prob[group]).astype(np.int64)
        verdict = _judge(rng, truth, flat["q0"][group], flat["q1"][group])
        data = {dim: col[group] for dim, col in columns.items()}
        data["item"] = item
        if human:
            data |= {"judge": verdict, "human": truth}
        else:
            data |= {"truth": truth, "judge": verdict}
        return pd.DataFrame(data)

    test = frame(flat["n"], truth_prob=flat["theta"])
    if calibration == "stratified":
        sizes = flat["m0"] + flat["m1"]
        # Within each group: m0 truly incorrect items, then m1 truly correct items.
        position = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        truth = (position >= np.repeat(flat["m0"], sizes)).astype(np.int64)
        calib = frame(sizes, truth=truth, human=True)
    else:
        calib = frame(flat["m"], truth_prob=flat["theta_calibration"], human=True)
    return test, calib


def simulate_labelled_table(
    theta, q0, q1, n, m, *, system=None, stratum=None, random_seed=None
) -> pd.DataFrame:
    """Draw one item table of the random labelling design: every item judged, m labelled.

    Per group the judge grades ``n + m`` items, each truly correct with probability
    ``theta``; humans label a random subset of ``m`` of them (drawn without looking at their
    truth). The table is the *one table* of ``docs/labelling-design.md``: its ``human``
    column holds the label for the labelled rows and is empty (NaN) for the others.

    Parameters
    ----------
    theta, q0, q1 : array_like
        True accuracy, judge specificity and sensitivity per group.
    n, m : array_like of int
        Unlabelled and labelled items per group (``n + m`` judged items).
    system, stratum : sequence of str, optional
        Group labels (as in :func:`simulate_counts`).
    random_seed : int, numpy.random.Generator or None
        Seed of the draws.

    Returns
    -------
    pandas.DataFrame
        One row per judged item: the group columns, ``item`` (0, 1, … within each group),
        ``truth`` (hidden true label, for studies), ``judge`` (the verdict) and ``human``
        (float: the human label, equal to the truth, on the ``m`` labelled rows; NaN on the
        others).

    Notes
    -----
    ``JudgeCounts.from_frames(table, system="system")`` (naming the group columns present)
    counts it as the random design; the counts then have the distribution of
    ``simulate_counts(theta, q0, q1, n, m=m, design="random")``, though not the same draws.

    Examples
    --------
    >>> from bayesjudge.simulate import simulate_labelled_table
    >>> table = simulate_labelled_table(0.6, 0.8, 0.9, n=8, m=2, system=["a", "b"],
    ...                                 random_seed=1)
    >>> list(table.columns), len(table)
    (['system', 'item', 'truth', 'judge', 'human'], 20)
    >>> table.groupby("system")["human"].count().tolist()  # labelled rows per system
    [2, 2]
    """
    system, stratum = _as_labels(system), _as_labels(stratum)
    rng = _rng(random_seed)  # one stream: the items first, then the labelled subset
    sizes = {"n": as_count("n", n), "m": as_count("m", m)}
    shape = _broadcast_shape(
        {"theta": theta, "q0": q0, "q1": q1, **sizes}, _label_shape(system, stratum), "labels"
    )
    _check_table_rows(
        np.sum(np.broadcast_to(sizes["n"] + sizes["m"], shape), dtype=np.float64), n=n, m=m
    )
    test, _ = simulate_items(
        theta, q0, q1, sizes["n"] + sizes["m"], 0, 0, system=system, stratum=stratum,
        random_seed=rng,
    )  # fmt: skip
    judged = np.broadcast_to(sizes["n"] + sizes["m"], shape).reshape(-1).astype(np.int64)
    labelled = np.broadcast_to(sizes["m"], shape).reshape(-1).astype(np.int64)
    # simulate_items lists the groups' items one group after another, in flat group order.
    group = np.repeat(np.arange(judged.size), judged)
    # A uniformly random subset of m items per group: the m smallest of random keys.
    order = np.lexsort((rng.random(group.size), group))
    rank = np.empty(group.size, dtype=np.int64)
    rank[order] = np.arange(group.size) - np.repeat(np.cumsum(judged) - judged, judged)
    table = test.copy()
    table["human"] = np.where(rank < labelled[group], table["truth"], np.nan)
    return table


# ----------------------------------------------------- cross-system calibration (Fiedler)


def judge_quality(youden, q0=None) -> tuple[np.ndarray, np.ndarray]:
    """Return the judge's (q0, q1) for a Youden index J = q0 + q1 − 1.

    Parameters
    ----------
    youden : array_like
        Youden's J, in [-1, 1].
    q0 : array_like, optional
        Specificity to hold fixed; then ``q1 = 1 + J - q0``. Default: the symmetric judge of
        Fiedler Sec. 5, ``q0 = q1 = (1 + J) / 2``.

    Returns
    -------
    tuple of numpy.ndarray
        ``(q0, q1)``, broadcast over the inputs.

    Raises
    ------
    ValueError
        If J is outside [-1, 1] or the implied q1 is not a proportion.

    References
    ----------
    .. [1] Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", Sec. 5 ("equal
       specificity q0 and sensitivity q1 for analytical transparency").

    Examples
    --------
    >>> from bayesjudge.simulate import judge_quality
    >>> [float(v) for v in judge_quality(0.3)]
    [0.65, 0.65]
    >>> [round(float(v), 2) for v in judge_quality(0.6, q0=0.7)]
    [0.7, 0.9]
    """
    j = np.asarray(youden, dtype=float)
    bad = ~((j >= -1) & (j <= 1))
    if bad.any():
        raise ValueError(f"youden (J = q0 + q1 - 1) must lie in [-1, 1]; got {j[bad].tolist()}.")
    if q0 is None:
        q = (1 + j) / 2
        return q.copy(), q.copy()
    q0 = as_probability("q0", q0)
    q1 = 1 + j - q0
    bad = ~((q1 >= 0) & (q1 <= 1))
    if bad.any():
        raise ValueError(
            f"q1 = 1 + youden - q0 must be a proportion; youden and q0 give q1 = "
            f"{np.atleast_1d(q1)[np.atleast_1d(bad)].tolist()}. Choose q0 in "
            f"[max(0, youden), min(1, 1 + youden)]."
        )
    return np.broadcast_arrays(q0, q1)


def youden_pair(j_a, delta_j, q0=None) -> tuple[np.ndarray, np.ndarray]:
    """Return (q0, q1) for two systems A and B with J_B = J_A + ΔJ (Fiedler Sec. 5).

    Parameters
    ----------
    j_a : float
        Youden index J_A of the judge on system A's responses.
    delta_j : float
        Calibration gap ΔJ = J_B − J_A, as in Fiedler Sec. 5 (a positive ΔJ: B is easier for the
        judge). Note that Fiedler App. C writes the opposite sign, ΔJ = J_A − J_B.
    q0 : float, optional
        Passed to :func:`judge_quality` for both systems; default the symmetric judge.

    Returns
    -------
    tuple of numpy.ndarray
        ``(q0, q1)``, each of shape ``(2,)`` for systems ``(A, B)``.

    Raises
    ------
    ValueError
        If J_A or J_B is outside [-1, 1].

    References
    ----------
    .. [1] Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", Sec. 5 (sweeps of
       J_A with ΔJ = 0.05, and of ΔJ with J_A = 0.3; q0 = q1; true gap θ_B − θ_A = 0.05).

    Examples
    --------
    >>> from bayesjudge.simulate import youden_pair
    >>> q0, q1 = youden_pair(0.3, 0.05)
    >>> q0.tolist(), q1.tolist()
    ([0.65, 0.675], [0.65, 0.675])
    """
    youden = np.array([float(j_a), float(j_a) + float(delta_j)])
    bad = ~((youden >= -1) & (youden <= 1))
    if bad.any():
        raise ValueError(
            f"j_a and j_a + delta_j (J_A and J_B) must lie in [-1, 1]; got "
            f"J_A={float(youden[0]):g}, J_B={float(youden[1]):g}."
        )
    return judge_quality(youden, q0)


def simulate_instability(
    theta_a,
    delta,
    j_a,
    delta_j,
    n,
    m0,
    m1,
    *,
    shared=None,
    q0=None,
    system=("A", "B"),
    random_seed=None,
) -> JudgeCounts:
    """Draw counts for two systems whose judge quality differs (ΔJ), own or shared calibration.

    System A has accuracy ``theta_a`` and judge quality J_A; system B has ``theta_a + delta``
    and J_B = J_A + ΔJ (:func:`youden_pair`). Each system gets ``n`` test items and a
    stratified calibration set of ``m0`` + ``m1`` items judged with its own (q0, q1).

    Parameters
    ----------
    theta_a, delta : float
        True accuracy of A and the true gap δ = θ_B − θ_A.
    j_a, delta_j : float
        J_A and ΔJ = J_B − J_A.
    n, m0, m1 : int
        Test items per system and calibration items (truly incorrect / correct) per set.
    shared : {None, "pooled"} or system label, optional
        ``None``: each system keeps its own calibration (model-specific). A system label
        (e.g. ``"A"``): that system's calibration set is used for both (Fiedler App. C).
        ``"pooled"``: both sets are added up and used for both. Shared calibration is recorded
        in :attr:`JudgeCounts.calibration_shared_over`.
    q0 : float, optional
        Hold the specificity fixed (see :func:`judge_quality`); default ``q0 = q1``.
    system : pair of str, default ("A", "B")
        Labels of the two systems.
    random_seed : int, numpy.random.Generator or None
        Seed of the draws.

    Returns
    -------
    JudgeCounts
        Counts over ``system``; test counts are independent between systems (for systems
        that answer the same items see :func:`simulate_paired_items`).

    References
    ----------
    .. [1] Fiedler, "Bias and Uncertainty in LLM-as-a-Judge Estimation", Sec. 4–5 and
       App. C (bias of shared-calibration RG: (θ_A (J_A − J_B) − (q0,A − q0,B)) / J_B).

    Examples
    --------
    >>> from bayesjudge.simulate import simulate_instability
    >>> c = simulate_instability(0.5, 0.05, 0.3, 0.1, n=500, m0=100, m1=100, shared="A",
    ...                          random_seed=1)
    >>> c.systems, c.calibration_shared_over
    (['A', 'B'], ('system',))
    """
    system = list(system)
    if len(system) != 2:
        raise ValueError(f"system needs two labels (A, B); got {system!r}.")
    q0s, q1s = youden_pair(j_a, delta_j, q0)
    theta = np.array([float(theta_a), float(theta_a) + float(delta)])
    as_probability("theta_a + delta", theta)
    counts = simulate_counts(theta, q0s, q1s, n, m0, m1, system=system, random_seed=random_seed)
    if shared is None:
        return counts
    if shared == "pooled":
        return counts.pooled_calibration("system")
    if shared not in system:
        raise ValueError(
            f"shared must be None (own calibration), 'pooled' or one of the system labels "
            f"{system}; got {shared!r}."
        )
    source = counts.sel(system=shared).dataset.assign_coords(system=["shared"])
    return counts.with_calibration_from(JudgeCounts(source))


# --------------------------------------------------------------------- paired systems


def _bivariate_upper(h: float, k: float, rho: float) -> float:
    """P(X < h, Y < k) − Φ(h)Φ(k) for standard normals with correlation rho (Plackett)."""
    if rho == 0:
        return 0.0

    def density(r):
        s = 1 - r * r
        return np.exp(-(h * h - 2 * r * h * k + k * k) / (2 * s)) / (2 * np.pi * np.sqrt(s))

    value, _ = integrate.quad(density, 0.0, rho, epsabs=1e-13, epsrel=1e-11)
    return value


def latent_correlation(theta, correlation) -> np.ndarray:
    """Gaussian-copula correlation matrix that gives binary truths the requested correlation.

    System ``j`` is truly correct on an item when its latent normal score is below
    ``Φ⁻¹(theta_j)``; the latent correlation r_jk is solved so that the correctness
    indicators have Pearson (phi) correlation ``correlation[j, k]``:
    ``P(Z_j = 1, Z_k = 1) = θ_j θ_k + ρ_jk √(θ_j(1−θ_j) θ_k(1−θ_k))``.

    Parameters
    ----------
    theta : array_like, shape (K,)
        Marginal accuracies, strictly inside (0, 1).
    correlation : float or array_like, shape (K, K)
        Requested correlation of correctness: one value for every pair or a symmetric matrix.

    Returns
    -------
    numpy.ndarray
        The latent correlation matrix, shape ``(K, K)``.

    Raises
    ------
    ValueError
        If a requested correlation is outside what the marginals allow (the Fréchet bounds),
        or the solved latent matrix is not positive semi-definite.

    Examples
    --------
    >>> from bayesjudge.simulate import latent_correlation
    >>> r = latent_correlation([0.5, 0.5], 0.5)
    >>> round(float(r[0, 1]), 4)  # sin(pi * 0.5 / 2) for two symmetric coins
    0.7071
    """
    theta = as_probability("theta", theta).reshape(-1)
    if ((theta <= 0) | (theta >= 1)).any():
        raise ValueError(
            f"theta must be strictly inside (0, 1) for correlated correctness; got "
            f"{theta.tolist()}."
        )
    size = theta.size
    rho = np.asarray(correlation, dtype=float)
    if rho.ndim == 0:
        rho = np.full((size, size), float(rho))
        np.fill_diagonal(rho, 1.0)
    if rho.shape != (size, size):
        raise ValueError(
            f"correlation must be one number or a symmetric ({size}, {size}) matrix (one row "
            f"per system); got shape {rho.shape}."
        )
    if not np.isfinite(rho).all():
        raise ValueError(f"correlation must be finite; got {rho.tolist()}.")
    if not np.allclose(rho, rho.T):
        raise ValueError(f"correlation must be a symmetric matrix; got {rho.tolist()}.")
    if not np.allclose(np.diag(rho), 1.0):
        raise ValueError(
            f"the diagonal of the correlation matrix must be 1 (a system's correctness is "
            f"perfectly correlated with itself); got {np.diag(rho).tolist()}."
        )
    z = special.ndtri(theta)
    sd = np.sqrt(theta * (1 - theta))
    latent = np.eye(size)
    for j in range(size):
        for k in range(j + 1, size):
            target = rho[j, k] * sd[j] * sd[k]
            low = max(0.0, theta[j] + theta[k] - 1) - theta[j] * theta[k]
            high = min(theta[j], theta[k]) - theta[j] * theta[k]
            if not low - 1e-12 <= target <= high + 1e-12:
                raise ValueError(
                    f"correlation {float(rho[j, k])!r} between systems {j} and {k} is impossible "
                    f"for accuracies {float(theta[j])!r} and {float(theta[k])!r}: it must lie in "
                    f"[{low / (sd[j] * sd[k]):.4f}, {high / (sd[j] * sd[k]):.4f}]."
                )
            tol = 1e-12
            if target >= high - tol:  # upper Fréchet bound: identical latent scores
                r = 1.0
            elif target <= low + tol:  # lower bound: opposite latent scores
                r = -1.0
            else:
                edge = 1 - 1e-12
                r = optimize.brentq(
                    lambda r, a=z[j], b=z[k], t=target: _bivariate_upper(a, b, r) - t,
                    -edge,
                    edge,
                    xtol=1e-12,
                )
            latent[j, k] = latent[k, j] = r
    if np.linalg.eigvalsh(latent).min() < -1e-10:
        raise ValueError(
            f"The requested correlations {rho.tolist()} need a latent correlation matrix that "
            f"is not positive semi-definite; choose correlations that are more alike."
        )
    return latent


def simulate_paired_items(
    theta, q0, q1, n, *, correlation=0.0, system=None, random_seed=None
) -> pd.DataFrame:
    """K systems answer the same n items with correlated correctness; one judge grades all.

    Correctness follows a Gaussian copula (:func:`latent_correlation`): each item has a
    latent normal score per system with the solved correlation matrix, and system ``j`` is
    truly correct when its score is below ``Φ⁻¹(theta_j)``. So the truths have the given
    marginal accuracies and pairwise Pearson (phi) correlation ``correlation``. Verdicts are
    independent given the truth, with each system's own ``q0, q1``.

    Parameters
    ----------
    theta, q0, q1 : array_like, shape (K,) or scalar
        Accuracy, judge specificity and sensitivity per system (scalars apply to every
        system).
    n : int
        Items, answered by every system.
    correlation : float or array_like, shape (K, K), default 0.0
        Correlation of correctness between systems on the same item.
    system : sequence of str, optional
        System labels; default ``"s0", "s1", …`` (K from the parameters).
    random_seed : int, numpy.random.Generator or None
        Seed of the draws.

    Returns
    -------
    pandas.DataFrame
        Long table, one row per (item, system): ``item``, ``system``, ``truth`` (hidden true
        label) and ``judge`` (verdict), sorted by item then system. Count it with
        ``JudgeCounts.from_frames(frame, system="system")``.

    Raises
    ------
    ValueError
        If the parameters have different lengths, a value is out of range, or the correlation
        is impossible for the marginals.

    Examples
    --------
    >>> from bayesjudge.simulate import simulate_paired_items
    >>> frame = simulate_paired_items([0.5, 0.6], 0.8, 0.9, n=3, correlation=0.4,
    ...                               system=["a", "b"], random_seed=1)
    >>> frame[["item", "system"]].values.tolist()
    [[0, 'a'], [0, 'b'], [1, 'a'], [1, 'b'], [2, 'a'], [2, 'b']]
    """
    system = _as_labels(system)
    theta, q0, q1 = (
        as_probability(name, v).reshape(-1) if np.ndim(v) else as_probability(name, v)
        for name, v in (("theta", theta), ("q0", q0), ("q1", q1))
    )
    n = int(as_count("n", n, positive=True))
    sizes = {np.size(a) for a in (theta, q0, q1) if np.ndim(a)}
    if system is not None:
        sizes.add(len(system))
    if len(sizes) > 1:
        raise ValueError(
            f"theta, q0, q1 and system must have one entry per system; got lengths {sorted(sizes)}."
        )
    count = sizes.pop() if sizes else 1
    _check_table_rows(n * count, n=n, systems=count)
    theta, q0, q1 = (np.broadcast_to(a, (count,)) for a in (theta, q0, q1))
    system = system if system is not None else [f"s{j}" for j in range(count)]
    latent = latent_correlation(theta, correlation) if count > 1 else np.eye(1)
    rng = _rng(random_seed)
    scores = rng.multivariate_normal(np.zeros(count), latent, size=n, method="eigh")
    truth = (scores < special.ndtri(theta)).astype(np.int64)
    verdict = _judge(rng, truth, q0, q1)
    return pd.DataFrame(
        {
            "item": np.repeat(np.arange(n), count),
            "system": np.tile(np.asarray(system, dtype=object), n),
            "truth": truth.reshape(-1),
            "judge": verdict.reshape(-1),
        }
    )


# --------------------------------------------------------------------------- demo


def demo_design() -> xr.Dataset:
    """Return the documented truth behind ``bayesjudge demo``.

    Three systems answer two kinds of task; one judge with specificity 0.7 and sensitivity 0.9
    (the judge of Lee et al. Sec. 7) grades them all. Each (system, stratum) group has 1000
    judged test items and its own calibration set of 100 truly incorrect and 100 truly correct
    human-labelled items.

    Returns
    -------
    xarray.Dataset
        Variables ``theta, q0, q1, n, m0, m1`` over dims ``(system, stratum)``.

    Examples
    --------
    >>> from bayesjudge.simulate import demo_design
    >>> design = demo_design()
    >>> design["theta"].sel(system="model-a").values.tolist()
    [0.45, 0.75]
    """
    dims = ("system", "stratum")
    theta = np.array([[0.45, 0.75], [0.60, 0.80], [0.30, 0.55]])
    full = np.ones_like(theta)
    return xr.Dataset(
        {
            "theta": (dims, theta),
            "q0": (dims, 0.7 * full),
            "q1": (dims, 0.9 * full),
            "n": (dims, (1000 * full).astype(np.int64)),
            "m0": (dims, (100 * full).astype(np.int64)),
            "m1": (dims, (100 * full).astype(np.int64)),
        },
        coords={"system": ["model-a", "model-b", "model-c"], "stratum": ["reasoning", "knowledge"]},
        attrs={"description": "bayesjudge demo: 3 systems x 2 strata, judge q0=0.7, q1=0.9"},
    )


# ---------------------------------------------------------- repeated verdicts of an item


def _item_propensity(rng: np.random.Generator, mean: np.ndarray, icc: float) -> np.ndarray:
    """Per-item probability that a verdict says correct: Beta with ``mean`` and ``icc``.

    ``Beta(mean·κ, (1 − mean)·κ)`` with ``κ = (1 − icc) / icc``: two verdicts of one item are
    correlated by ``icc`` (the intra-item correlation of the beta-binomial); ``icc = 0`` is
    the item-free judge (every item's propensity is ``mean``).
    """
    if icc == 0:
        return np.asarray(mean, dtype=float).copy()
    kappa = (1.0 - icc) / icc
    # A mean of exactly 0 or 1 is a degenerate beta: the propensity is that mean.
    inner = (mean > 0) & (mean < 1)
    safe = np.where(inner, mean, 0.5)
    return np.where(inner, rng.beta(safe * kappa, (1.0 - safe) * kappa), mean)


def _check_repeats(epochs, icc, n) -> tuple[np.ndarray, float]:
    epochs = as_count("epochs", epochs).astype(np.int64)
    if (epochs < 1).any():
        raise ValueError(
            f"epochs (verdicts per item) must be at least 1; got {epochs[epochs < 1][:5].tolist()}."
        )
    if epochs.ndim > 1 or (epochs.ndim == 1 and epochs.size != n):
        raise ValueError(
            f"epochs is one number or one per test item (length n = {n}); got shape {epochs.shape}."
        )
    icc = float(icc)
    if not 0.0 <= icc < 1.0:
        raise ValueError(
            f"icc (the correlation of two verdicts of one item) must be in [0, 1); got {icc!r}."
        )
    return np.broadcast_to(epochs, (n,)), icc


def simulate_repeated_items(
    theta,
    q0,
    q1,
    n,
    m0,
    m1,
    *,
    epochs,
    icc=0.0,
    random_seed=None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Draw an item table whose test items are each judged several times (epochs).

    Each test item is truly correct with probability ``theta`` and has its own propensity
    ``π_i`` to be called correct: ``π_i ~ Beta(μκ, (1−μ)κ)`` with ``μ = q1`` for a truly
    correct item, ``μ = 1 − q0`` otherwise, and ``κ = (1 − icc)/icc``; its ``epochs``
    verdicts are independent Bernoulli(``π_i``) draws given ``π_i``. So the verdicts of one
    item are correlated (by ``icc``), each verdict on its own is right with probability
    ``q0``/``q1``, and the number of 'correct' verdicts of an item is beta-binomial given its
    truth. The ``m0 + m1`` calibration items (stratified design) get one verdict each, by
    the same law.

    Parameters
    ----------
    theta, q0, q1 : float
        True accuracy and the judge's per-verdict specificity and sensitivity.
    n, m0, m1 : int
        Test items, truly incorrect and truly correct calibration items.
    epochs : int or array_like of int
        Verdicts per test item: one number, or one per item (length ``n``), each ≥ 1.
    icc : float, default 0.0
        Correlation of two verdicts of one item, in [0, 1): 0 gives independent verdicts.
    random_seed : int, numpy.random.Generator or None
        Seed of the draws.

    Returns
    -------
    test : pandas.DataFrame
        One row per verdict: ``item`` (0 … n − 1), ``epoch`` (1-based), ``truth`` (hidden, for
        studies) and ``judge`` (1 = said correct).
    calibration : pandas.DataFrame
        One row per labelled item: ``item`` (``"cal-0"``, …), ``judge`` and ``human``.

    Examples
    --------
    >>> from bayesjudge.data import JudgeCounts
    >>> from bayesjudge.simulate import simulate_repeated_items
    >>> test, calib = simulate_repeated_items(0.6, 0.8, 0.9, n=40, m0=20, m1=20, epochs=3,
    ...                                       icc=0.5, random_seed=1)
    >>> list(test.columns), len(test)
    (['item', 'epoch', 'truth', 'judge'], 120)
    >>> counts = JudgeCounts.from_frames(test, calib, item="item", repeats="epoch")
    >>> counts.n.item(), int(counts.clusters.sum())
    (120, 40)
    """
    par = _parameters(theta, q0, q1, n, m0, m1, None, None, "stratified")
    if any(a.ndim for a in par.values()):
        raise ValueError("simulate_repeated_items draws one group: pass scalar parameters.")
    theta, q0, q1 = (float(par[v]) for v in ("theta", "q0", "q1"))
    n, m0, m1 = (int(par[v]) for v in ("n", "m0", "m1"))
    _check_table_rows(n + m0 + m1, n=n, m0=m0, m1=m1)  # before epochs is spread over n items
    epochs, icc = _check_repeats(epochs, icc, n)
    _check_table_rows(epochs.sum(dtype=np.float64) + m0 + m1, n=n, epochs=epochs[:1], m0=m0,
                      m1=m1)  # fmt: skip
    rng = _rng(random_seed)
    truth = (rng.random(n) < theta).astype(np.int64)
    propensity = _item_propensity(rng, np.where(truth == 1, q1, 1 - q0), icc)
    item = np.repeat(np.arange(n), epochs)
    epoch = np.arange(item.size) - np.repeat(np.cumsum(epochs) - epochs, epochs) + 1
    verdict = (rng.random(item.size) < propensity[item]).astype(np.int64)
    test = pd.DataFrame({"item": item, "epoch": epoch, "truth": truth[item], "judge": verdict})
    human = np.repeat([0, 1], [m0, m1])
    cal_verdict = _judge(rng, human, q0, q1)
    calib = pd.DataFrame(
        {
            "item": np.char.add("cal-", np.arange(m0 + m1).astype(str)).astype(object),
            "judge": cal_verdict,
            "human": human,
        }
    )
    return test, calib


def simulate_cluster_tables(
    theta, q0, q1, n, m0, m1, *, epochs, icc=0.0, size=1, random_seed=None
) -> dict[str, np.ndarray]:
    """Draw ``size`` replications of one group's cluster table and calibration counts.

    The law of :func:`simulate_repeated_items` (every test item judged ``epochs`` times,
    intra-item correlation ``icc``), drawn on counts for Monte Carlo studies: the number of
    'correct' verdicts of an item is ``BetaBinomial(epochs, μκ, (1−μ)κ)`` given its truth.

    Returns
    -------
    dict
        ``table`` (size, R, R + 1) with ``R = epochs``: items with ``r`` verdicts of which
        ``k`` said correct at ``[r-1, k]`` (only row ``R − 1`` is filled); ``tn``, ``tp``
        (size,) and the fixed ``m0``, ``m1``; ``truth`` (size,): truly correct test items.

    Examples
    --------
    >>> from bayesjudge.simulate import simulate_cluster_tables
    >>> draws = simulate_cluster_tables(0.6, 0.8, 0.9, 100, 50, 50, epochs=2, icc=0.3,
    ...                                 size=4, random_seed=0)
    >>> draws["table"].shape, draws["table"].sum(axis=(1, 2)).tolist()
    ((4, 2, 3), [100, 100, 100, 100])
    """
    par = _parameters(theta, q0, q1, n, m0, m1, None, None, "stratified")
    if any(a.ndim for a in par.values()):
        raise ValueError("simulate_cluster_tables draws one group: pass scalar parameters.")
    theta, q0, q1 = (float(par[v]) for v in ("theta", "q0", "q1"))
    n, m0, m1 = (int(par[v]) for v in ("n", "m0", "m1"))
    epochs = int(as_count("epochs", epochs))
    _, icc = _check_repeats(epochs, icc, n)
    size = int(as_count("size", size))
    rng = _rng(random_seed)
    truth = rng.binomial(n, theta, size=size)
    table = np.zeros((size, epochs, epochs + 1), dtype=np.int64)
    for count, mean in ((truth, q1), (n - truth, 1 - q0)):
        # Draw n items of this truth per replication and keep the first ``count``: fixed
        # shapes, all replications in one call.
        propensity = _item_propensity(rng, np.full((size, n), mean), icc)
        k = rng.binomial(epochs, propensity)
        used = np.arange(n)[None, :] < count[:, None]
        for j in range(epochs + 1):
            table[:, epochs - 1, j] += ((k == j) & used).sum(axis=1)
    return {
        "table": table,
        "tn": rng.binomial(m0, q0, size=size),
        "tp": rng.binomial(m1, q1, size=size),
        "m0": np.full(size, m0),
        "m1": np.full(size, m1),
        "truth": truth,
    }


# ------------------------------------------------------------------ K-category verdicts


def _simplex(name: str, value, axes: int) -> np.ndarray:
    """Check that ``value`` holds probabilities summing to 1 over its last axis."""
    arr = np.asarray(value, dtype=float)
    what = "(..., K)" if axes == 1 else "(..., K, K), rows = truth, columns = verdict"
    if arr.ndim < axes or arr.shape[-1] < 2 or (axes == 2 and arr.shape[-2] != arr.shape[-1]):
        raise ValueError(f"{name} must have shape {what} with K >= 2; got shape {arr.shape}.")
    bad = ~((arr >= 0) & (arr <= 1))
    if bad.any():
        raise ValueError(
            f"{name} must hold probabilities in [0, 1]; got {format_values(arr[bad])}."
        )
    sums = arr.sum(axis=-1)
    off = np.abs(sums - 1) > 1e-9
    if off.any():
        raise ValueError(
            f"{name} must sum to 1 over its last axis (the categories"
            f"{', per truth row' if axes == 2 else ''}); got sums {format_values(sums[off])}."
        )
    return arr / sums[..., None]


def _categorical_parameters(theta, confusion, n, m, design, labels_shape):
    """Validate and broadcast the K-category generator's parameters to one group shape."""
    design = check_design(design, "design")
    theta = _simplex("theta", theta, 1)
    confusion = _simplex("confusion", confusion, 2)
    k = theta.shape[-1]
    if confusion.shape[-1] != k:
        raise ValueError(
            f"theta has K = {k} categories (shape {theta.shape}) but confusion is "
            f"{confusion.shape[-2]} × {confusion.shape[-1]} (shape {confusion.shape})."
        )
    n = as_count("n", n).astype(np.int64)
    m = as_count("m", m).astype(np.int64)
    if design == "stratified" and (m.ndim == 0 or m.shape[-1] != k):
        raise ValueError(
            f"Under design='stratified' m gives the labelled items per truth category, shape "
            f"(..., K) with K = {k}; got shape {m.shape}. For m labelled items drawn at random "
            f"pass design='random'."
        )
    m_groups = m.shape[:-1] if design == "stratified" else m.shape
    shape = _broadcast_shape(
        {
            "theta": np.empty(theta.shape[:-1]),
            "confusion": np.empty(confusion.shape[:-2]),
            "n": n,
            "m": np.empty(m_groups),
        },
        labels_shape,
        "labels",
    )
    m_shape = (*shape, k) if design == "stratified" else shape
    return {
        "theta": np.broadcast_to(theta, (*shape, k)),
        "confusion": np.broadcast_to(confusion, (*shape, k, k)),
        "n": np.broadcast_to(n, shape),
        "m": np.broadcast_to(m, m_shape),
        "design": design,
        "shape": shape,
        "K": k,
    }


def _draw_categorical(par: dict, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Draw the test (..., K) and calibration (..., K, K) counts (one draw order for both APIs)."""
    p = np.einsum("...i,...ij->...j", par["theta"], par["confusion"])
    p = np.clip(p, 0, None)
    p /= p.sum(axis=-1, keepdims=True)
    test = rng.multinomial(par["n"], p)
    m_rows = par["m"] if par["design"] == "stratified" else rng.multinomial(par["m"], par["theta"])
    return test, rng.multinomial(m_rows, par["confusion"])


def _category_labels(categories, k: int):
    if categories is None:
        return list(range(k))
    labels = category_array(categories).tolist()
    if len(labels) != k:
        raise ValueError(f"categories has {len(labels)} labels but theta has K = {k}.")
    return labels


def simulate_categorical_counts(
    theta,
    confusion,
    n,
    m,
    *,
    design: str = "stratified",
    system=None,
    stratum=None,
    categories=None,
    ordered: bool = False,
    random_seed=None,
) -> CategoricalCounts:
    """Draw K-category verdict counts for groups with known category shares and confusion.

    The generating process per (system, stratum) group, with ``C[i, j] = P(verdict j |
    truth i)``::

        p = theta @ C                          # verdict shares of the test items
        test ~ Multinomial(n, p)
        calibration[i, :] ~ Multinomial(m_i, C[i, :])

    with ``m_i`` fixed by design (``design="stratified"``) or ``(m_1, …, m_K) ~
    Multinomial(m, theta)`` (``design="random"``: humans label a random subset of ``m`` of
    the ``n + m`` judged items; ``test`` counts the ``n`` unlabelled ones).

    Parameters
    ----------
    theta : array_like, shape (..., K)
        True category shares per group (rows on the simplex).
    confusion : array_like, shape (..., K, K)
        The judge's confusion matrix per group, rows = truth, columns = verdict, each row on
        the simplex (see :func:`preference_confusion` and :func:`rubric_confusion`).
    n : array_like of int
        Test (unlabelled) items per group.
    m : array_like of int
        ``design="stratified"``: labelled items per truth category, shape ``(..., K)``;
        ``design="random"``: labelled items per group, shape ``(...)``.
    design : {"stratified", "random"}, default "stratified"
        The labelling design, recorded on the counts.
    system, stratum : sequence of labels, optional
        Group labels, as in :func:`simulate_counts`: the group axes (the leading axes of
        ``theta``, ``confusion``, ``n``, ``m`` after broadcasting) must be ``(system,)``,
        ``(stratum,)`` or ``(system, stratum)``.
    categories : sequence of labels, optional
        The K category labels (default ``0, …, K-1``).
    ordered : bool, default False
        Whether the categories are ordinal (recorded on the counts).
    random_seed : int, numpy.random.Generator or None
        Seed of the draws.

    Returns
    -------
    CategoricalCounts
        The simulated counts; ``ds.attrs["simulation"]`` records the call's settings.

    Raises
    ------
    ValueError
        If a probability is outside [0, 1], a row does not sum to 1, the shapes do not fit K
        or the labels, or ``m`` does not fit the design.

    Examples
    --------
    >>> from bayesjudge.simulate import preference_confusion, simulate_categorical_counts
    >>> C = preference_confusion(0.8, tie_rate=0.1)
    >>> counts = simulate_categorical_counts([0.45, 0.1, 0.45], C, n=1000, m=[40, 20, 40],
    ...                                      categories=["A", "tie", "B"], random_seed=1)
    >>> counts.categories, int(counts.test.sum()), counts.m().values.ravel().tolist()
    (['A', 'tie', 'B'], 1000, [40, 20, 40])
    >>> many = simulate_categorical_counts([0.45, 0.1, 0.45], C, n=500, m=100,
    ...                                    design="random", system=["a", "b"], random_seed=2)
    >>> many.design, many.calibration.sum(["truth", "verdict"]).values.ravel().tolist()
    ('random', [100, 100])
    """
    system, stratum = _as_labels(system), _as_labels(stratum)
    labels_shape = _label_shape(system, stratum)
    par = _categorical_parameters(theta, confusion, n, m, design, labels_shape)
    if par["shape"] != labels_shape:
        raise ValueError(
            f"The parameters have group shape {par['shape']} but the labels give "
            f"{labels_shape}: pass system= (and stratum= for two group axes) with one label "
            f"per group."
        )
    labels = _category_labels(categories, par["K"])
    test, calibration = _draw_categorical(par, _rng(random_seed))
    counts = CategoricalCounts.from_counts(
        test, calibration, categories=labels, ordered=ordered, system=system, stratum=stratum,
        design=par["design"],
    )  # fmt: skip
    ds = counts.ds.copy()
    ds.attrs["simulation"] = (
        f"simulate_categorical_counts(design={par['design']!r}, random_seed="
        f"{random_seed if is_seed(random_seed) else type(random_seed).__name__})"
    )
    return CategoricalCounts(ds)


def preference_confusion(accuracy, tie_rate=0.0, *, tie_accuracy=None, bias=0.0) -> np.ndarray:
    """Confusion matrix of a pairwise-preference judge, categories ``[A, tie, B]``.

    Rows are the truth, columns the verdict (``[A better, tie, B better]``)::

        truth A:   [accuracy + bias,            tie_rate,        1 - accuracy - tie_rate - bias]
        truth tie: [(1 - tie_accuracy)/2 + bias, tie_accuracy,   (1 - tie_accuracy)/2 - bias]
        truth B:   [1 - accuracy - tie_rate + bias, tie_rate,    accuracy - bias]

    With ``bias = 0`` the judge is *symmetric*: it mistakes "A better" for "B better" as
    often as the reverse (the structure of the symmetric preference model). ``bias > 0``
    favours A (a position bias), moving that much probability from verdict B to verdict A in
    every row.

    Parameters
    ----------
    accuracy : array_like
        P(verdict = truth) for a true preference (before the bias).
    tie_rate : array_like, default 0.0
        P(verdict = tie) when one answer is truly better.
    tie_accuracy : array_like, optional
        P(verdict = tie) for a true tie; default ``accuracy``.
    bias : array_like, default 0.0
        Position bias toward A.

    Returns
    -------
    numpy.ndarray
        Shape ``(..., 3, 3)``, the parameters' broadcast shape then truth × verdict.

    Raises
    ------
    ValueError
        If an entry leaves [0, 1] (the message names the parameters).

    Examples
    --------
    >>> from bayesjudge.simulate import preference_confusion
    >>> preference_confusion(0.8, tie_rate=0.1).round(2).tolist()
    [[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]]
    >>> preference_confusion([0.7, 0.8], 0.1, bias=0.05).shape
    (2, 3, 3)
    """
    accuracy, tie_rate, bias = (np.asarray(v, dtype=float) for v in (accuracy, tie_rate, bias))
    tie_accuracy = accuracy if tie_accuracy is None else np.asarray(tie_accuracy, dtype=float)
    accuracy, tie_rate, tie_accuracy, bias = np.broadcast_arrays(
        accuracy, tie_rate, tie_accuracy, bias
    )
    flip = 1 - accuracy - tie_rate
    half = (1 - tie_accuracy) / 2
    rows = [
        [accuracy + bias, tie_rate, flip - bias],
        [half + bias, tie_accuracy, half - bias],
        [flip + bias, tie_rate, accuracy - bias],
    ]
    out = np.stack([np.stack(r, axis=-1) for r in rows], axis=-2)
    bad = ~((out >= -1e-12) & (out <= 1 + 1e-12))
    if bad.any():
        raise ValueError(
            "preference_confusion: accuracy, tie_rate, tie_accuracy and bias give "
            f"probabilities outside [0, 1] ({format_values(out[bad])}); need accuracy + "
            f"tie_rate <= 1, |bias| <= min(accuracy, 1 - accuracy - tie_rate) and "
            f"|bias| <= (1 - tie_accuracy) / 2."
        )
    return np.clip(out, 0, 1)


def rubric_confusion(K: int, spread, *, bias=0.0) -> np.ndarray:
    """Confusion matrix of a graded (ordinal) judge: a cumulative-logit judge on K grades.

    The judge's grade is the true grade ``i`` plus logistic noise of scale ``spread`` (and a
    shift ``bias``), cut at the midpoints between grades::

        P(verdict <= j | truth i) = expit((j + 0.5 - i - bias) / spread)

    so mistakes go mostly to neighbouring grades, the structure of the ordinal confusion
    model. ``spread -> 0`` is a perfect judge; ``bias > 0`` a lenient one.

    Parameters
    ----------
    K : int
        Number of grades (at least 2).
    spread : array_like
        Scale of the judge's noise, in grades (> 0).
    bias : array_like, default 0.0
        Shift of the judge's grades (positive: too generous).

    Returns
    -------
    numpy.ndarray
        Shape ``(..., K, K)``: the broadcast shape of ``spread`` and ``bias``, then truth ×
        verdict; rows sum to 1.

    Examples
    --------
    >>> from bayesjudge.simulate import rubric_confusion
    >>> C = rubric_confusion(5, 0.3)
    >>> C.shape, bool(abs(C.sum(axis=-1) - 1).max() < 1e-12)
    ((5, 5), True)
    >>> bool(C[2, 2] > C[2, 1] > C[2, 0])
    True
    """
    if not isinstance(K, int | np.integer) or isinstance(K, bool) or K < 2:
        raise ValueError(f"K must be an integer >= 2 (the number of grades); got {K!r}.")
    spread, bias = np.broadcast_arrays(np.asarray(spread, float), np.asarray(bias, float))
    if not (np.isfinite(spread) & (spread > 0)).all():
        raise ValueError(f"spread must be positive and finite; got {format_values(spread)}.")
    if not np.isfinite(bias).all():
        raise ValueError(f"bias must be finite; got {format_values(bias)}.")
    grades = np.arange(K, dtype=float)
    cuts = grades[:-1] + 0.5  # (K-1,)
    z = (cuts[None, :] - grades[:, None] - bias[..., None, None]) / spread[..., None, None]
    cdf = special.expit(z)  # (..., K, K-1)
    zeros = np.zeros((*cdf.shape[:-1], 1))
    cdf = np.concatenate([zeros, cdf, zeros + 1], axis=-1)
    return np.diff(cdf, axis=-1)


def _draw_categories(rng: np.random.Generator, probs: np.ndarray) -> np.ndarray:
    """One category index per row of ``probs`` (rows on the simplex), by inverse CDF."""
    cdf = np.cumsum(probs, axis=-1)
    u = rng.random(probs.shape[:-1]) * cdf[..., -1]
    return np.minimum((u[..., None] >= cdf).sum(axis=-1), probs.shape[-1] - 1)


def simulate_categorical_items(
    theta,
    confusion,
    n,
    m,
    *,
    design: str = "stratified",
    one_table: bool = False,
    system=None,
    stratum=None,
    categories=None,
    random_seed=None,
):
    """Draw item tables of K-category verdicts, for :meth:`CategoricalCounts.from_frames`.

    Same law as :func:`simulate_categorical_counts`: a test item's truth is category ``i``
    with probability ``theta[i]``, the judge's verdict is ``j`` with probability
    ``confusion[i, j]``; labelled items carry the human label (the truth).

    Parameters
    ----------
    theta, confusion, n, m, design, system, stratum, categories
        As in :func:`simulate_categorical_counts`.
    one_table : bool, default False
        ``design="random"`` only: return one table of every judged item whose ``human``
        column is empty (None) for the unlabelled rows.
    random_seed : int, numpy.random.Generator or None
        Seed of the draws.

    Returns
    -------
    (test, calibration) : tuple of pandas.DataFrame, or one pandas.DataFrame
        ``design="stratified"``: ``test`` has ``n`` rows per group (group columns for the
        labelled dims, ``item`` 0, 1, … unique in the table, ``truth`` (hidden, for
        studies), ``judge``); ``calibration`` has ``m[i]`` rows of truth ``i`` per group
        (``item`` ``"cal-0"``, …: other items than the test items), ``judge``, ``human``.
        ``design="random"``: ``test`` holds all ``n + m`` judged items and ``calibration``
        the random ``m`` of them that humans labelled, with the same ``item`` ids (count with
        ``item="item"``); or, with ``one_table``, the test table with a ``human`` column.

    Examples
    --------
    >>> from bayesjudge.data.categorical import CategoricalCounts
    >>> from bayesjudge.simulate import preference_confusion, simulate_categorical_items
    >>> test, cal = simulate_categorical_items([0.4, 0.2, 0.4], preference_confusion(0.8, 0.1),
    ...                                        n=20, m=[3, 2, 3],
    ...                                        categories=["A", "tie", "B"], random_seed=1)
    >>> list(test.columns), list(cal.columns), len(cal)
    (['item', 'truth', 'judge'], ['item', 'judge', 'human'], 8)
    >>> table = simulate_categorical_items([0.4, 0.2, 0.4], preference_confusion(0.8, 0.1),
    ...                                    n=20, m=5, design="random", one_table=True,
    ...                                    random_seed=1)
    >>> len(table), int(table["human"].notna().sum())
    (25, 5)
    """
    system, stratum = _as_labels(system), _as_labels(stratum)
    labels_shape = _label_shape(system, stratum)
    par = _categorical_parameters(theta, confusion, n, m, design, labels_shape)
    if par["shape"] != labels_shape:
        raise ValueError(
            f"The parameters have group shape {par['shape']} but the labels give "
            f"{labels_shape}: pass system= (and stratum= for two group axes) with one label "
            f"per group."
        )
    _check_table_rows(
        np.sum(par["n"], dtype=np.float64) + np.sum(par["m"], dtype=np.float64),
        "simulate_categorical_counts", n=n, m=m,
    )  # fmt: skip
    if not isinstance(one_table, bool | np.bool_):
        raise ValueError(f"one_table must be True or False; got {one_table!r}.")
    if one_table and par["design"] != "random":
        raise ValueError(
            "one_table=True is the random labelling design's one table: pass design='random'."
        )
    k = par["K"]
    labels = np.array([*_category_labels(categories, k), None], dtype=object)
    rng = _rng(random_seed)
    shape = par["shape"]
    theta_f = par["theta"].reshape(-1, k)
    conf_f = par["confusion"].reshape(-1, k, k)
    groups = theta_f.shape[0]
    index = np.unravel_index(np.arange(groups), shape) if shape else ()
    columns = {
        dim: np.asarray(lab, dtype=object)[index[axis]]
        for axis, (dim, lab) in enumerate(
            (d, v) for d, v in (("system", system), ("stratum", stratum)) if v is not None
        )
    }

    def frame(sizes, truth=None, ids_prefix=""):
        group = np.repeat(np.arange(groups), sizes)
        # Ids unique in the whole table (so within each system across strata, as item=
        # matching needs): 0, 1, … in group order.
        item = np.arange(group.size)
        if truth is None:
            truth = _draw_categories(rng, theta_f[group])
        verdict = _draw_categories(rng, conf_f[group, truth])
        data = {dim: col[group] for dim, col in columns.items()}
        if ids_prefix:  # labelled items that are not test items: ids "cal-0", ...
            item = np.char.add(ids_prefix, item.astype(str)).astype(object)
        data["item"] = item
        data["truth"] = labels[truth]
        data["judge"] = labels[verdict]
        return pd.DataFrame(data), group

    n_f = par["n"].reshape(-1)
    if par["design"] == "stratified":
        m_f = par["m"].reshape(-1, k)
        test, _ = frame(n_f)
        sizes = m_f.sum(axis=1)
        truth = np.concatenate([np.repeat(np.arange(k), row) for row in m_f]).astype(np.int64)
        cal, _ = frame(sizes, truth=truth, ids_prefix="cal-")
        cal = cal.rename(columns={"truth": "human"})[[*columns, "item", "judge", "human"]]
        return test, cal
    m_f = par["m"].reshape(-1)
    judged = n_f + m_f
    table, group = frame(judged)
    # A uniformly random subset of m items per group: the m smallest of random keys.
    order = np.lexsort((rng.random(group.size), group))
    rank = np.empty(group.size, dtype=np.int64)
    rank[order] = np.arange(group.size) - np.repeat(np.cumsum(judged) - judged, judged)
    chosen = rank < m_f[group]
    if one_table:
        table["human"] = np.where(chosen, table["truth"].to_numpy(), None)
        return table
    cal = table[chosen].rename(columns={"truth": "human"})[[*columns, "item", "judge", "human"]]
    return table, cal.reset_index(drop=True)


def simulate_categorical_count_arrays(
    theta, confusion, n, m, *, design: str = "stratified", size=None, random_seed=None
) -> dict[str, np.ndarray]:
    """Draw K-category counts as plain numpy arrays, for fast Monte Carlo studies.

    The law of :func:`simulate_categorical_counts` without the container: the same seed
    gives the same draws for the same group shape.

    Parameters
    ----------
    theta, confusion, n, m, design
        As in :func:`simulate_categorical_counts`.
    size : tuple of int, optional
        Group shape of the output (e.g. ``(reps,)``); the parameters' group axes must
        broadcast to it. Default: their broadcast shape.
    random_seed : int, numpy.random.Generator or None
        Seed of the draws.

    Returns
    -------
    dict of str to numpy.ndarray
        int64 ``test`` (size + (K,)) and ``calibration`` (size + (K, K), rows = truth).

    Examples
    --------
    >>> from bayesjudge.simulate import rubric_confusion, simulate_categorical_count_arrays
    >>> draws = simulate_categorical_count_arrays([0.2, 0.3, 0.5], rubric_confusion(3, 0.5),
    ...                                           n=100, m=[10, 10, 10], size=(1000,),
    ...                                           random_seed=1)
    >>> draws["test"].shape, draws["calibration"].shape
    ((1000, 3), (1000, 3, 3))
    >>> bool((draws["calibration"].sum(axis=-1) == 10).all())
    True
    """
    shape = () if size is None else tuple(np.atleast_1d(size).astype(int).tolist())
    par = _categorical_parameters(theta, confusion, n, m, design, shape)
    test, calibration = _draw_categorical(par, _rng(random_seed))
    return {"test": test.astype(np.int64), "calibration": calibration.astype(np.int64)}


# ------------------------------------------------ repeated verdicts of labelled items too


def simulate_repeated_labelled_items(
    theta, q0, q1, n, m, *, epochs, icc=0.0, random_seed=None
) -> pd.DataFrame:
    """Draw one table of the random labelling design whose items are each judged ``epochs`` times.

    ``n + m`` items are drawn as in :func:`simulate_repeated_items` (truth ~ Bernoulli(θ),
    an item's own propensity, ``epochs`` correlated verdicts); the first ``m`` of them are
    labelled (a random subset, since the items are exchangeable): every verdict row of a
    labelled item carries its human label, the rows of the other ``n`` items none.

    Parameters
    ----------
    theta, q0, q1 : float
        True accuracy and the judge's per-verdict specificity and sensitivity.
    n, m : int
        Unlabelled and labelled items.
    epochs : int
        Verdicts per item (every item, labelled or not), ≥ 1.
    icc : float, default 0.0
        Correlation of two verdicts of one item, in [0, 1).
    random_seed : int, numpy.random.Generator or None
        Seed of the draws.

    Returns
    -------
    pandas.DataFrame
        One row per verdict: ``item`` (0 … n + m − 1), ``epoch`` (1-based), ``truth``
        (hidden, for studies), ``judge`` (1 = said correct) and ``human`` (the truth for the
        labelled items' rows, NaN for the others).

    Examples
    --------
    >>> from bayesjudge.data import JudgeCounts
    >>> from bayesjudge.simulate import simulate_repeated_labelled_items
    >>> table = simulate_repeated_labelled_items(0.6, 0.8, 0.9, n=30, m=10, epochs=2,
    ...                                          icc=0.4, random_seed=1)
    >>> c = JudgeCounts.from_frames(table.drop(columns="truth"), item="item", repeats="epoch")
    >>> c.design, c.n.item(), int(c.m0.item() + c.m1.item())
    ('random', 60, 20)
    """
    par = _parameters(theta, q0, q1, n, m, 0, None, None, "stratified")
    if any(a.ndim for a in par.values()):
        raise ValueError("simulate_repeated_labelled_items draws one group: pass scalars.")
    theta, q0, q1 = (float(par[v]) for v in ("theta", "q0", "q1"))
    n, m = int(par["n"]), int(par["m0"])
    epochs = int(as_count("epochs", epochs))
    _check_table_rows((n + m) * epochs, n=n, m=m, epochs=epochs)
    _, icc = _check_repeats(epochs, icc, n + m)
    rng = _rng(random_seed)
    size = n + m
    truth = (rng.random(size) < theta).astype(np.int64)
    propensity = _item_propensity(rng, np.where(truth == 1, q1, 1 - q0), icc)
    item = np.repeat(np.arange(size), epochs)
    epoch = np.tile(np.arange(1, epochs + 1), size)
    verdict = (rng.random(item.size) < propensity[item]).astype(np.int64)
    human = np.where(item < m, truth[item].astype(float), np.nan)
    return pd.DataFrame(
        {"item": item, "epoch": epoch, "truth": truth[item], "judge": verdict, "human": human}
    )


def _beta_binomial_tables(rng, count: np.ndarray, most: int, mean: float, epochs: int, icc):
    """Tables (size, R, R + 1) of ``count`` items each (≤ ``most``) judged ``epochs`` times."""
    size = count.shape[0]
    table = np.zeros((size, epochs, epochs + 1), dtype=np.int64)
    propensity = _item_propensity(rng, np.full((size, max(most, 1)), mean), icc)
    k = rng.binomial(epochs, propensity)
    used = np.arange(max(most, 1))[None, :] < count[:, None]
    for j in range(epochs + 1):
        table[:, epochs - 1, j] = ((k == j) & used).sum(axis=1)
    return table


def simulate_labelled_cluster_tables(
    theta,
    q0,
    q1,
    n,
    m0,
    m1,
    *,
    epochs,
    icc=0.0,
    design="stratified",
    size=1,
    random_seed=None,
) -> dict[str, np.ndarray]:
    """Draw cluster tables of test *and labelled* items, every item judged ``epochs`` times.

    The law of :func:`simulate_cluster_tables` for the ``n`` test items, and the same law
    for the labelled items: ``m0`` truly incorrect and ``m1`` truly correct ones
    (``design="stratified"``), or ``m0 + m1`` items whose truth is Bernoulli(θ)
    (``"random"``: the number truly correct is Binomial(m0 + m1, θ)).

    Returns
    -------
    dict
        ``table`` (size, R, R + 1): the test items; ``calibration_tables`` (size, 2, R,
        R + 1): the labelled items by truth (0, 1), ``k`` counting 'correct' verdicts;
        ``tn, m0, tp, m1`` (size,): their *verdict* totals; ``items0``, ``items1``
        (size,): labelled items per truth; ``truth`` (size,): truly correct test items.

    Examples
    --------
    >>> from bayesjudge.simulate import simulate_labelled_cluster_tables
    >>> d = simulate_labelled_cluster_tables(0.6, 0.8, 0.9, 50, 20, 20, epochs=3, icc=0.3,
    ...                                      size=2, random_seed=0)
    >>> d["calibration_tables"].shape, d["m0"].tolist(), d["items1"].tolist()
    ((2, 2, 3, 4), [60, 60], [20, 20])
    """
    if design not in ("stratified", "random"):
        raise ValueError(f"design must be 'stratified' or 'random'; got {design!r}.")
    rng = _rng(random_seed)
    draws = simulate_cluster_tables(
        theta, q0, q1, n, 0, 0, epochs=epochs, icc=icc, size=size, random_seed=rng
    )
    epochs, size, total = int(epochs), int(size), int(m0) + int(m1)
    if design == "stratified":
        items1 = np.full(size, int(m1))
    else:
        items1 = rng.binomial(total, float(theta), size=size)
    items0 = total - items1 if design == "random" else np.full(size, int(m0))
    most0, most1 = (int(m0), int(m1)) if design == "stratified" else (total, total)
    cal = np.stack(
        [
            _beta_binomial_tables(rng, items0, most0, 1 - float(q0), epochs, icc),
            _beta_binomial_tables(rng, items1, most1, float(q1), epochs, icc),
        ],
        axis=1,
    )
    k = np.arange(epochs + 1)
    verdicts = cal.sum(axis=(-2, -1)) * epochs
    positives = (cal * k).sum(axis=(-2, -1))
    return {
        "table": draws["table"],
        "calibration_tables": cal,
        "tn": verdicts[:, 0] - positives[:, 0],
        "m0": verdicts[:, 0],
        "tp": positives[:, 1],
        "m1": verdicts[:, 1],
        "items0": items0,
        "items1": items1,
        "truth": draws["truth"],
    }


# --------------------------------------------------------------------------- several judges

#: Largest item effect ``dependence`` (sd on the logit scale) the jury simulators accept: the
#: 200-node Gauss–Hermite rule behind them is accurate to ~1e-8 there (1e-13 at σ = 3).
MAX_DEPENDENCE = 5.0
#: Most judges :func:`jury_pattern_probabilities` and :func:`simulate_jury_arrays` enumerate
#: (3^J − 1 patterns with missing verdicts); :func:`simulate_jury` draws items and takes up to
#: ``bayesjudge.data.jury.MAX_JUDGES``.
MAX_PATTERN_JUDGES = 10
_GH_NODES, _GH_WEIGHTS = hermite_e.hermegauss(200)
_GH_WEIGHTS = _GH_WEIGHTS / np.sqrt(2 * np.pi)  # E[f(U)], U ~ N(0, 1)
# Verdict 1, 0, missing as base-3 digits 0, 1, 2: sorting codes gives JuryCounts' order.
_DIGIT = {1: 0, 0: 1, -1: 2}


def _jury_intercepts(q: np.ndarray, sigma: float) -> np.ndarray:
    """Logit intercepts ``a`` with E[expit(a + σU)] = q, U ~ N(0, 1); ∓inf where q is 0 or 1."""
    q = np.asarray(q, dtype=float)
    with np.errstate(divide="ignore"):
        out = np.ascontiguousarray(special.logit(q))  # written through reshape(-1)
    if sigma == 0:
        return out
    flat = out.reshape(-1)
    for i, qi in enumerate(q.reshape(-1)):
        if not 0 < qi < 1:
            continue

        def gap(a, qi=qi):
            return float(_GH_WEIGHTS @ special.expit(a + sigma * _GH_NODES)) - qi

        # The marginal is increasing in a and about expit(a / sqrt(1 + 0.35 σ²)) (probit
        # approximation): start there and widen until the root is bracketed.
        centre, width = flat[i] * np.sqrt(1 + 0.35 * sigma**2), 1.0 + sigma
        while gap(centre - width) > 0 or gap(centre + width) < 0:
            width *= 2
        flat[i] = optimize.brentq(gap, centre - width, centre + width, xtol=1e-14)
    return out


def _jury_correct_probability(q0, q1, sigma: float):
    """P(verdict = truth | t, u) at the quadrature nodes: arrays (nodes, J) for t = 0, 1."""
    nodes = _GH_NODES if sigma > 0 else np.zeros(1)
    a0, a1 = _jury_intercepts(q0, sigma), _jury_intercepts(q1, sigma)
    return (
        special.expit(a0[None, :] + sigma * nodes[:, None]),
        special.expit(a1[None, :] + sigma * nodes[:, None]),
    )


def _check_jury_options(dependence, missing, design) -> tuple[float, float, str]:
    ok = np.ndim(dependence) == 0 and isinstance(dependence, int | float | np.number)
    if not ok or isinstance(dependence, bool) or not 0 <= dependence <= MAX_DEPENDENCE:
        raise ValueError(
            f"dependence must be a number in [0, {MAX_DEPENDENCE:g}] (the sd of the items' "
            f"shared effect on the judges' logit scale; 0 = conditionally independent judges); "
            f"got {dependence!r}."
        )
    ok = np.ndim(missing) == 0 and isinstance(missing, int | float | np.number)
    if not ok or isinstance(missing, bool) or not 0 <= missing < 1:
        raise ValueError(
            f"missing must be a number in [0, 1) (the probability that a judge gives no verdict "
            f"on an item); got {missing!r}."
        )
    if not isinstance(design, str) or design not in CALIBRATION_DESIGNS:
        raise ValueError(
            f"design must be 'stratified' (m0 truly incorrect + m1 truly correct labelled items "
            f"of their own) or 'random' (m of the n judged items labelled at random); got "
            f"{design!r}."
        )
    return float(dependence), float(missing), design


def _check_jury_sizes(design, n, m0, m1, m) -> dict[str, np.ndarray]:
    """Validate the item counts of the design; return int arrays n, m0, m1 (and m)."""
    if design == "stratified" and m is not None:
        raise ValueError(
            "m (labelled items drawn at random) applies to design='random'; with "
            "design='stratified' pass m0 and m1 (labelled items per truth)."
        )
    if design == "random":
        if m is None:
            raise ValueError("design='random' needs m, the number of the n items labelled.")
        if np.any(np.asarray(m0) != 0) or np.any(np.asarray(m1) != 0):
            raise ValueError(
                f"m0 and m1 are random under design='random' (m1 ~ Binomial(m, theta)); pass m "
                f"only; got m0={m0!r}, m1={m1!r}."
            )
    sizes = {"n": as_count("n", n, positive=True)}
    sizes |= {"m0": as_count("m0", m0), "m1": as_count("m1", m1)}
    sizes["m"] = as_count("m", 0 if m is None else m)
    if design == "random" and np.any(sizes["m"] > sizes["n"]):
        raise ValueError(
            f"m (labelled items) must not exceed n (all judged items) under design='random'; "
            f"got n={n!r}, m={m!r}."
        )
    return {name: a.astype(np.int64) for name, a in sizes.items()}


def _jury_qs(q0, q1, judges) -> tuple[np.ndarray, np.ndarray, list]:
    """q0, q1 as arrays with a last axis of J judges; the judges' labels (default j0, j1, …)."""
    q0, q1 = as_probability("q0", q0), as_probability("q1", q1)
    if judges is None:
        if q0.ndim == 0 and q1.ndim == 0:
            raise ValueError(
                "q0 and q1 need a last axis of one entry per judge (or pass judges=); got scalars."
            )
        count = max(np.shape(q0)[-1:] + np.shape(q1)[-1:])
        judges = [f"j{j}" for j in range(count)]
    judges = _as_labels(judges)
    if len(judges) < 1 or len(set(judges)) != len(judges):
        raise ValueError(f"judges must be distinct labels, at least one; got {judges!r}.")
    for name, q in (("q0", q0), ("q1", q1)):
        if q.ndim and q.shape[-1] not in (1, len(judges)):
            raise ValueError(
                f"{name} must have a last axis of {len(judges)} entries (one per judge); got "
                f"shape {q.shape}."
            )
    return q0, q1, judges


def _all_patterns(n_judges: int, missing: bool) -> np.ndarray:
    """Every verdict pattern (P, J) in JuryCounts' order; with ``missing``, "-" entries too."""
    values = (1, 0, -1) if missing else (1, 0)
    rows = np.array(list(itertools.product(values, repeat=n_judges)), dtype=np.int8)
    return rows[~(rows == -1).all(axis=1)]


def jury_pattern_probabilities(q0, q1, *, dependence=0.0, missing=0.0):
    """Probability of each verdict pattern given the truth, under :func:`simulate_jury`'s law.

    Parameters
    ----------
    q0, q1 : array_like, shape (J,)
        Each judge's marginal P(says incorrect | truly incorrect) and P(says correct | truly
        correct).
    dependence : float, default 0.0
        The sd σ of the items' shared effect on the judges' logit scale (see
        :func:`simulate_jury`); 0 = conditionally independent judges.
    missing : float, default 0.0
        Probability that a judge gives no verdict on an item (see :func:`simulate_jury`).

    Returns
    -------
    patterns : numpy.ndarray of int8, shape (P, J)
        Every pattern (1, 0 and, with ``missing > 0``, -1), in the order of
        :class:`~bayesjudge.data.jury.JuryCounts`: 2^J rows, or 3^J − 1.
    probabilities : numpy.ndarray, shape (2, P)
        Row t: P(pattern | truth t); each row sums to 1.

    Raises
    ------
    ValueError
        For q's that are not proportions of one shape (J,), J above
        :data:`MAX_PATTERN_JUDGES`, or ``dependence`` / ``missing`` out of range.

    Notes
    -----
    Given the item effect u, P(verdict = truth | t, u) = expit(a_jt + σu) with a_jt solved so
    that its mean over u ~ N(0, 1) is q_tj; the integral over u is a 200-node Gauss–Hermite
    rule. A pattern with missing set M has probability ``μ^|M| (1 − μ)^(J − |M|) P(v_obs | t)``,
    plus μ^J / J · P(v_j | t) for a single verdict of judge j (an item whose verdicts were all
    dropped keeps one judge's, chosen at random).

    Examples
    --------
    >>> from bayesjudge.simulate import jury_pattern_probabilities
    >>> patterns, prob = jury_pattern_probabilities([0.8, 0.9], [0.7, 0.6])
    >>> patterns.tolist()
    [[1, 1], [1, 0], [0, 1], [0, 0]]
    >>> prob.round(3).tolist()
    [[0.02, 0.18, 0.08, 0.72], [0.42, 0.28, 0.18, 0.12]]
    >>> _, dep = jury_pattern_probabilities([0.8, 0.9], [0.7, 0.6], dependence=1.5)
    >>> dep.round(3).tolist()  # same margins, more agreement
    [[0.045, 0.155, 0.055, 0.745], [0.482, 0.218, 0.118, 0.182]]
    """
    dependence, missing, _ = _check_jury_options(dependence, missing, "stratified")
    q0, q1 = as_probability("q0", q0), as_probability("q1", q1)
    if q0.ndim != 1 or q0.shape != q1.shape or not 1 <= q0.size <= MAX_PATTERN_JUDGES:
        raise ValueError(
            f"q0 and q1 must be 1-D arrays of one entry per judge (1 to {MAX_PATTERN_JUDGES} "
            f"judges), of equal length; got shapes {q0.shape} and {q1.shape}."
        )
    n_judges = q0.size
    patterns = _all_patterns(n_judges, missing > 0)
    says1, says0 = (patterns == 1).astype(float), (patterns == 0).astype(float)
    right0, right1 = _jury_correct_probability(q0, q1, dependence)
    weights = _GH_WEIGHTS if dependence > 0 else np.ones(1)
    tiny = np.finfo(float).tiny  # log(0) -> about -708: exp of the sum is then 0
    prob = np.empty((2, len(patterns)))
    for t, (p1, p0) in enumerate(((1 - right0, right0), (right1, 1 - right1))):
        log_p = np.log(np.maximum(p1, tiny)) @ says1.T + np.log(np.maximum(p0, tiny)) @ says0.T
        prob[t] = weights @ np.exp(log_p)
    if missing > 0:
        n_missing = (patterns == -1).sum(axis=1)
        prob *= missing**n_missing * (1 - missing) ** (n_judges - n_missing)
        # All verdicts dropped: one judge's verdict is kept (each judge with chance 1 / J).
        single = n_missing == n_judges - 1
        prob[:, single] *= 1 + missing / (1 - missing) / n_judges
    return patterns, prob


def simulate_jury_arrays(
    theta,
    q0,
    q1,
    *,
    n,
    m0=0,
    m1=0,
    m=None,
    dependence=0.0,
    missing=0.0,
    design="stratified",
    size=None,
    random_seed=None,
) -> dict[str, np.ndarray]:
    """Draw the verdict-pattern counts of one group many times, as plain arrays (for studies).

    The same law as :func:`simulate_jury` (one group), drawn from the pattern probabilities of
    :func:`jury_pattern_probabilities` as multinomial counts instead of item by item.

    Parameters
    ----------
    theta : float
        True share of correct items.
    q0, q1 : array_like, shape (J,)
        The judges' marginal specificities and sensitivities.
    n, m0, m1, m, dependence, missing, design
        As in :func:`simulate_jury` (scalars): under ``design="random"``, ``m`` of the ``n``
        items are labelled and ``test`` counts the other ``n - m``.
    size : int or tuple of int, optional
        Replications (output shape before the pattern axis); default one draw.
    random_seed : int, numpy.random.Generator or None
        Seed of the draws.

    Returns
    -------
    dict of str to numpy.ndarray
        ``patterns`` (P, J) every possible pattern (int8, as in
        :func:`jury_pattern_probabilities`), ``test`` ``(*size, P)`` and ``labelled``
        ``(*size, 2, P)`` item counts (int64; row 0 truly incorrect).

    Raises
    ------
    ValueError
        As :func:`simulate_jury`, naming the argument.

    Examples
    --------
    >>> from bayesjudge.simulate import simulate_jury_arrays
    >>> draws = simulate_jury_arrays(0.6, [0.8, 0.7, 0.9], [0.75, 0.85, 0.8], n=300, m0=20,
    ...                              m1=20, size=1000, random_seed=1)
    >>> draws["patterns"].shape, draws["test"].shape, draws["labelled"].shape
    ((8, 3), (1000, 8), (1000, 2, 8))
    >>> draws["test"].sum(axis=-1).max(), draws["labelled"].sum(axis=-1)[0].tolist()
    (np.int64(300), [20, 20])
    """
    dependence, missing, design = _check_jury_options(dependence, missing, design)
    theta = as_probability("theta", theta)
    if theta.ndim:
        raise ValueError(f"theta must be one number (one group); got shape {theta.shape}.")
    sizes = _check_jury_sizes(design, n, m0, m1, m)
    if any(a.ndim for a in sizes.values()):
        raise ValueError("n, m0, m1 and m must be single numbers (one group).")
    shape = () if size is None else tuple(np.atleast_1d(size).astype(int).tolist())
    patterns, prob = jury_pattern_probabilities(q0, q1, dependence=dependence, missing=missing)
    rng = _rng(random_seed)
    mixture = theta * prob[1] + (1 - theta) * prob[0]
    n_test = sizes["n"] - sizes["m"] if design == "random" else sizes["n"]
    test = rng.multinomial(np.full(shape, n_test), mixture)
    if design == "random":
        correct = rng.binomial(np.full(shape, sizes["m"]), theta)
        per_truth = (sizes["m"] - correct, correct)
    else:
        per_truth = (np.full(shape, sizes["m0"]), np.full(shape, sizes["m1"]))
    labelled = np.stack([rng.multinomial(k, prob[t]) for t, k in enumerate(per_truth)], axis=-2)
    return {"patterns": patterns, "test": test.astype(np.int64), "labelled": labelled}


def _jury_verdicts(rng, truth, a0, a1, sigma: float, missing: float) -> np.ndarray:
    """Verdicts (items, J) of 1, 0 and -1 (missing) given the truths, under the jury law."""
    u = rng.standard_normal(truth.size) if sigma > 0 else np.zeros(truth.size)
    intercept = np.where(truth[:, None] == 1, a1[None, :], a0[None, :])
    right = rng.random(intercept.shape) < special.expit(intercept + sigma * u[:, None])
    verdict = np.where(right, truth[:, None], 1 - truth[:, None]).astype(np.int8)
    if missing > 0:
        dropped = rng.random(verdict.shape) < missing
        # An item whose verdicts were all dropped keeps one judge's, chosen at random: a
        # judged item has at least one verdict.
        lost = np.flatnonzero(dropped.all(axis=1))
        dropped[lost, rng.integers(0, verdict.shape[1], lost.size)] = False
        verdict[dropped] = -1
    return verdict


def _pattern_codes(verdict: np.ndarray) -> np.ndarray:
    """Base-3 code of each row (1 -> 0, 0 -> 1, -1 -> 2): code order is JuryCounts' order."""
    digits = np.where(verdict == 1, 0, np.where(verdict == 0, 1, 2)).astype(np.int64)
    return digits @ (3 ** np.arange(verdict.shape[1] - 1, -1, -1, dtype=np.int64))


def _decode_patterns(codes: np.ndarray, n_judges: int) -> np.ndarray:
    powers = 3 ** np.arange(n_judges - 1, -1, -1, dtype=np.int64)
    digits = (codes[:, None] // powers[None, :]) % 3
    return np.array([1, 0, -1], dtype=np.int8)[digits]


def _jury_groups(theta, q0, q1, sizes, systems, strata, n_judges):
    """Broadcast the per-group parameters to (S, T) and the q's to (S, T, J)."""
    labels_shape = _label_shape(systems, strata)
    full = (*labels_shape, n_judges)
    try:
        group = {"theta": np.broadcast_to(theta, labels_shape)}
        group |= {k: np.broadcast_to(v, labels_shape) for k, v in sizes.items()}
        group |= {"q0": np.broadcast_to(q0, full), "q1": np.broadcast_to(q1, full)}
    except ValueError:
        shapes = {"theta": np.shape(theta), "q0": np.shape(q0), "q1": np.shape(q1)}
        shapes |= {k: v.shape for k, v in sizes.items()}
        raise ValueError(
            f"The parameters do not fit the groups {labels_shape} (systems × strata given): "
            f"{', '.join(f'{k} {s}' for k, s in shapes.items() if s)}. Give theta, n, m0, m1 "
            f"and m one entry per group (or one number), q0 and q1 a last axis of judges."
        ) from None
    shape = (len(systems or [0]), len(strata or [0]))
    return {k: v.reshape((*shape, *v.shape[len(labels_shape) :])) for k, v in group.items()}


def _jury_settings(random_seed, dependence, missing, design, group) -> dict:
    seed = int(random_seed) if is_seed(random_seed) else None
    settings = {"generator": "bayesjudge.simulate.simulate_jury", "random_seed": seed}
    settings |= {"dependence": dependence, "missing": missing, "design": design}
    settings |= {k: np.asarray(v).tolist() for k, v in group.items()}
    flat = {"simulated_dependence": dependence, "simulated_missing": missing}
    if seed is not None:
        flat["simulated_random_seed"] = seed
    return {"simulation": json.dumps(settings), **flat}


def _jury_item_frame(parts, judges, n_judges) -> pd.DataFrame:
    """Long item table: one row per (item, judge) with a verdict."""
    verdict = np.concatenate([p["verdict"] for p in parts])
    rows, cols = np.nonzero(verdict >= 0)
    column = {k: np.concatenate([p[k] for p in parts]) for k in ("item", "truth", "human")}
    count = np.concatenate([np.full(len(p["verdict"]), i) for i, p in enumerate(parts)])
    human = column["human"][rows]
    return pd.DataFrame(
        {
            "system": np.array([p["system"] for p in parts], dtype=object)[count[rows]],
            "stratum": np.array([p["stratum"] for p in parts], dtype=object)[count[rows]],
            "item": column["item"][rows],
            "judge_name": np.asarray(judges, dtype=object)[cols],
            "verdict": verdict[rows, cols].astype(np.int64),
            "human": pd.arrays.IntegerArray(np.where(human >= 0, human, 0), human < 0),
            "truth": column["truth"][rows],
        }
    )


def simulate_jury(
    theta,
    q0,
    q1,
    *,
    n,
    m0=0,
    m1=0,
    m=None,
    judges=None,
    systems=None,
    strata=None,
    dependence=0.0,
    missing=0.0,
    design="stratified",
    random_seed=None,
    return_items=False,
):
    """Draw several judges' verdicts on the same items, item by item, as a ``JuryCounts``.

    Each item is truly correct with probability θ (per group). Judge j calls it correct with
    probability q1_j if it is and 1 − q0_j if it is not, independently of the other judges given
    the truth (Dawid & Skene 1979) unless ``dependence`` > 0: then each item has an effect
    u ~ N(0, σ²), shared by all judges, on the logit of each judge being right,
    P(right | t, u) = expit(a_jt + u), with a_jt solved so that the *marginal* q0_j, q1_j are
    those asked for (:func:`jury_pattern_probabilities`' Notes). A hard item is then hard for
    every judge, so the judges agree more than their q's alone imply.

    Parameters
    ----------
    theta : array_like
        True share of correct items per group: a number, or one per system / (system,
        stratum).
    q0, q1 : array_like
        Each judge's marginal specificity P(says incorrect | truly incorrect) and sensitivity
        P(says correct | truly correct): a last axis of J judges, broadcast over the groups.
    n : array_like of int
        Judged items per group (at least 1): the unlabelled test items under
        ``design="stratified"``; all judged items, ``m`` of them labelled, under ``"random"``.
    m0, m1 : array_like of int, default 0
        Labelled items per group that are truly incorrect / correct, with their own verdicts
        (``design="stratified"``).
    m : array_like of int, optional
        Of the ``n`` items, how many are labelled, chosen at random (``design="random"``;
        required there); the test counts then hold the other ``n - m``.
    judges : sequence, optional
        The judges' labels (default ``"j0"``, ``"j1"``, …).
    systems, strata : sequence, optional
        Group labels (default one group ``"all"``); the parameters broadcast over them.
    dependence : float, default 0.0
        The sd σ of the items' shared effect on the logit scale, in [0, 5]; 0 gives
        conditionally independent judges.
    missing : float, default 0.0
        Probability, in [0, 1), that a judge gives no verdict on an item, independently of
        everything else. An item whose verdicts were all dropped keeps one judge's verdict,
        chosen at random, so the share missing is μ − μ^J / J rather than μ.
    design : {"stratified", "random"}, default "stratified"
        The labelling design, recorded on the counts.
    random_seed : int, numpy.random.Generator or None
        Seed of the draws.
    return_items : bool, default False
        Also return the long item table.

    Returns
    -------
    JuryCounts or tuple of (JuryCounts, pandas.DataFrame)
        The pattern counts; ``dataset.attrs`` holds the design, ``simulation`` (JSON of every
        setting, the seed included) and ``simulated_dependence``, ``simulated_missing``,
        ``simulated_random_seed`` (an int seed only). With ``return_items=True`` also one row
        per (item, judge) with a verdict: ``system``, ``stratum``, ``item`` (ids unique within
        a system: test items first, then labelled ones), ``judge_name``, ``verdict`` (1/0),
        ``human`` (the truth on labelled items, ``<NA>`` on the others) and ``truth`` (hidden
        truth, for studies).

    Raises
    ------
    ValueError
        If a probability or count is out of range, the parameters do not fit the groups or the
        judges, ``dependence``/``missing``/``design`` are out of range, or the item counts do
        not fit the design; the message names the argument.

    See Also
    --------
    simulate_jury_arrays : The same law as plain multinomial arrays, for many replications.

    Examples
    --------
    >>> from bayesjudge.simulate import simulate_jury
    >>> counts, items = simulate_jury(0.7, [0.8, 0.7, 0.9], [0.9, 0.8, 0.85], n=200, m0=20,
    ...                               m1=20, judges=["gpt", "claude", "llama"],
    ...                               dependence=1.0, missing=0.1, random_seed=3,
    ...                               return_items=True)
    >>> counts.sizes["judge"], int(counts.test.sum()), int(counts.labelled.sum())
    (3, 200, 40)
    >>> counts.dataset.attrs["simulated_dependence"], counts.design
    (1.0, 'stratified')
    >>> list(items.columns)
    ['system', 'stratum', 'item', 'judge_name', 'verdict', 'human', 'truth']
    >>> items.groupby("item").size().min()  # every item keeps a verdict
    np.int64(1)
    """
    dependence, missing, design = _check_jury_options(dependence, missing, design)
    if not isinstance(return_items, bool | np.bool_):
        raise ValueError(f"return_items must be True or False; got {return_items!r}.")
    theta = as_probability("theta", theta)
    q0, q1, judges = _jury_qs(q0, q1, judges)
    if len(judges) > MAX_JUDGES:
        raise ValueError(f"At most {MAX_JUDGES} judges are supported; got {len(judges)}.")
    systems, strata = _as_labels(systems), _as_labels(strata)
    sizes = _check_jury_sizes(design, n, m0, m1, m)
    group = _jury_groups(theta, q0, q1, sizes, systems, strata, len(judges))
    items = group["n"] + (group["m0"] + group["m1"] if design == "stratified" else 0)
    # One verdict per item and judge: that many rows once the items are listed.
    _check_table_rows(np.sum(items, dtype=np.float64) * len(judges), "simulate_jury_arrays",
                      n=n, m0=m0, m1=m1, judges=len(judges))  # fmt: skip
    rng = _rng(random_seed)
    parts = []
    for s, t in np.ndindex(group["theta"].shape):
        g = {k: v[s, t] for k, v in group.items()}
        n_g = int(g["n"])
        truth = (rng.random(n_g) < g["theta"]).astype(np.int64)
        if design == "stratified":
            truth = np.concatenate([truth, np.repeat([0, 1], [int(g["m0"]), int(g["m1"])])])
            labelled = np.arange(truth.size) >= n_g
        else:  # the items are exchangeable: the first m are a random subset
            labelled = np.arange(n_g) < int(g["m"])
        a0, a1 = _jury_intercepts(g["q0"], dependence), _jury_intercepts(g["q1"], dependence)
        parts.append({
            "system": DEFAULT_LABEL if systems is None else systems[s],
            "stratum": DEFAULT_LABEL if strata is None else strata[t],
            "verdict": _jury_verdicts(rng, truth, a0, a1, dependence, missing),
            "truth": truth, "human": np.where(labelled, truth, -1),
        })  # fmt: skip
    counts = _jury_count(parts, group["theta"].shape, len(judges))
    ds = JuryCounts.from_counts(
        *counts, judges=judges, systems=systems, strata=strata, design=design
    ).dataset
    ds.attrs.update(_jury_settings(random_seed, dependence, missing, design, group))
    result = JuryCounts(ds)
    if not return_items:
        return result
    offset: dict = {}
    for p in parts:  # item ids unique within a system, running over its strata
        start = offset.get(p["system"], 0)
        p["item"] = start + np.arange(len(p["truth"]))
        offset[p["system"]] = start + len(p["truth"])
    return result, _jury_item_frame(parts, judges, len(judges))


def _jury_count(parts, shape, n_judges):
    """Pattern matrix and test (S, T, P) / labelled (S, T, 2, P) counts of the groups' items."""
    codes = [_pattern_codes(p["verdict"]) for p in parts]
    unique = np.unique(np.concatenate(codes))
    test = np.zeros((len(parts), unique.size), dtype=np.int64)
    labelled = np.zeros((len(parts), 2, unique.size), dtype=np.int64)
    for i, (p, code) in enumerate(zip(parts, codes, strict=True)):
        where = np.searchsorted(unique, code)
        np.add.at(test[i], where[p["human"] < 0], 1)
        for t in (0, 1):
            np.add.at(labelled[i, t], where[p["human"] == t], 1)
    patterns = _decode_patterns(unique, n_judges)
    return patterns, test.reshape((*shape, -1)), labelled.reshape((*shape, 2, -1))


# ------------------------------------------------- several judges, K-category verdicts

#: The most verdict patterns :func:`categorical_jury_pattern_probabilities` enumerates:
#: K**J, or (K + 1)**J - 1 with missing verdicts.
MAX_CATEGORICAL_PATTERNS = 2**20


def _check_missing(missing) -> float:
    ok = np.ndim(missing) == 0 and isinstance(missing, int | float | np.number)
    if not ok or isinstance(missing, bool) or not 0 <= missing < 1:
        raise ValueError(
            f"missing must be a number in [0, 1) (the probability that a judge gives no verdict "
            f"on an item); got {missing!r}."
        )
    return float(missing)


def _jury_confusion(confusion) -> np.ndarray:
    """Check a (..., J, K, K) stack of confusion matrices (rows = truth, on the simplex)."""
    arr = _simplex("confusion", confusion, 2)
    if arr.ndim < 3:
        raise ValueError(
            f"confusion must have shape (..., J, K, K): one K × K matrix (rows = truth, columns "
            f"= verdict) per judge; got shape {arr.shape}. For one judge pass confusion[None]."
        )
    if arr.shape[-1] > MAX_CATEGORIES:
        raise ValueError(
            f"At most {MAX_CATEGORIES} categories are supported for several judges; got K = "
            f"{arr.shape[-1]}."
        )
    if not 1 <= arr.shape[-3] <= MAX_JUDGES:
        raise ValueError(f"1 to {MAX_JUDGES} judges are supported; got {arr.shape[-3]}.")
    return arr


def _categorical_jury_sizes(pi, confusion, n, m, design, labels_shape) -> dict:
    """Validate and broadcast π, the confusions and the item counts to one group shape."""
    design = check_design(design, "design")
    pi = _simplex("pi", pi, 1)
    confusion = _jury_confusion(confusion)
    k = pi.shape[-1]
    if confusion.shape[-1] != k:
        raise ValueError(
            f"pi has K = {k} categories (shape {pi.shape}) but confusion is "
            f"{confusion.shape[-2]} × {confusion.shape[-1]} per judge (shape {confusion.shape})."
        )
    n = as_count("n", n).astype(np.int64)
    m = as_count("m", m).astype(np.int64)
    if design == "stratified" and (m.ndim == 0 or m.shape[-1] != k):
        raise ValueError(
            f"Under design='stratified' m gives the labelled items per truth category, shape "
            f"(..., K) with K = {k}; got shape {m.shape}. For m labelled items drawn at random "
            f"pass design='random'."
        )
    m_groups = m.shape[:-1] if design == "stratified" else m.shape
    named = {"pi": np.empty(pi.shape[:-1]), "confusion": np.empty(confusion.shape[:-3])}
    named |= {"n": n, "m": np.empty(m_groups)}
    shape = _broadcast_shape(named, labels_shape, "labels")
    n_judges = confusion.shape[-3]
    return {
        "pi": np.broadcast_to(pi, (*shape, k)),
        "confusion": np.broadcast_to(confusion, (*shape, n_judges, k, k)),
        "n": np.broadcast_to(n, shape),
        "m": np.broadcast_to(m, (*shape, k) if design == "stratified" else shape),
        "design": design,
        "shape": shape,
        "K": k,
        "J": n_judges,
    }


def categorical_jury_pattern_probabilities(confusion, missing=0.0):
    """Probability of each K-category verdict pattern given the truth, judges independent.

    The law of :func:`simulate_categorical_jury`: given the truth t, judge j says category v
    with probability ``confusion[j, t, v]``, independently of the other judges (Dawid & Skene
    1979); each verdict is then lost with probability ``missing``, and an item that lost them
    all keeps one judge's verdict, chosen at random.

    Parameters
    ----------
    confusion : array_like, shape (J, K, K)
        Each judge's confusion matrix, rows = truth, columns = verdict, rows on the simplex.
    missing : float, default 0.0
        Probability, in [0, 1), that a judge gives no verdict on an item.

    Returns
    -------
    patterns : numpy.ndarray of int8, shape (P, J)
        Every pattern (category indices, -1 = no verdict with ``missing > 0``) in the order of
        :class:`~bayesjudge.data.CategoricalJuryCounts`: lexicographic, missing last; K^J
        rows, or (K + 1)^J − 1.
    probabilities : numpy.ndarray, shape (K, P)
        Row t: P(pattern | truth t); each row sums to 1.

    Raises
    ------
    ValueError
        If ``confusion`` is not a (J, K, K) stack of row-stochastic matrices, there would be
        more than :data:`MAX_CATEGORICAL_PATTERNS` patterns, or ``missing`` is out of range.

    Notes
    -----
    A pattern with missing set M has probability ``μ^|M| (1 − μ)^(J − |M|) ∏_{j ∉ M}
    C_j[t, v_j]``, plus ``μ^J / J · C_j[t, v_j]`` for a single verdict of judge j; with K = 2
    and categories (incorrect, correct) this is :func:`jury_pattern_probabilities` with
    ``dependence=0``.

    Examples
    --------
    >>> from bayesjudge.simulate import categorical_jury_pattern_probabilities
    >>> C = [[[0.8, 0.2], [0.3, 0.7]], [[0.9, 0.1], [0.4, 0.6]]]
    >>> patterns, prob = categorical_jury_pattern_probabilities(C)
    >>> patterns.tolist()
    [[0, 0], [0, 1], [1, 0], [1, 1]]
    >>> prob.round(3).tolist()
    [[0.72, 0.08, 0.18, 0.02], [0.12, 0.18, 0.28, 0.42]]
    """
    missing = _check_missing(missing)
    confusion = _jury_confusion(confusion)
    if confusion.ndim != 3:
        raise ValueError(
            f"confusion must have shape (J, K, K) (one group); got shape {confusion.shape}."
        )
    n_judges, k = confusion.shape[0], confusion.shape[-1]
    values = list(range(k)) + ([-1] if missing > 0 else [])
    if len(values) ** n_judges > MAX_CATEGORICAL_PATTERNS:
        raise ValueError(
            f"{len(values)}^{n_judges} verdict patterns are too many to list (at most "
            f"{MAX_CATEGORICAL_PATTERNS}); use fewer judges or categories, or draw items with "
            f"simulate_categorical_jury."
        )
    patterns = np.array(list(itertools.product(values, repeat=n_judges)), dtype=np.int8)
    patterns = patterns[~(patterns == -1).all(axis=1)]
    prob = np.ones((k, len(patterns)))
    for j in range(n_judges):
        said = patterns[:, j]
        prob *= np.where(said >= 0, confusion[j][:, np.maximum(said, 0)], 1.0)
    if missing > 0:
        n_missing = (patterns == -1).sum(axis=1)
        prob *= missing**n_missing * (1 - missing) ** (n_judges - n_missing)
        # All verdicts dropped: one judge's verdict is kept (each judge with chance 1 / J).
        single = n_missing == n_judges - 1
        prob[:, single] *= 1 + missing / (1 - missing) / n_judges
    return patterns, prob


def simulate_categorical_jury_arrays(
    pi, confusion, n, m, *, design="stratified", missing=0.0, size=None, random_seed=None
) -> dict[str, np.ndarray]:
    """Draw the pattern counts of one group many times, as plain arrays (for studies).

    The law of :func:`simulate_categorical_jury` (one group), drawn as multinomial counts
    over the patterns of :func:`categorical_jury_pattern_probabilities`.

    Parameters
    ----------
    pi : array_like, shape (K,)
        True category shares.
    confusion : array_like, shape (J, K, K)
        The judges' confusion matrices (rows = truth).
    n : int
        Unlabelled test items.
    m : int or array_like of int
        ``design="stratified"``: labelled items per truth category, shape (K,);
        ``design="random"``: labelled items in all, their truths drawn from ``pi``.
    design : {"stratified", "random"}, default "stratified"
    missing : float, default 0.0
        Probability that a judge gives no verdict on an item.
    size : int or tuple of int, optional
        Replications (the shape before the pattern axis); default one draw.
    random_seed : int, numpy.random.Generator or None
        Seed of the draws.

    Returns
    -------
    dict of str to numpy.ndarray
        ``patterns`` (P, J) every possible pattern, ``test`` ``(*size, P)`` and ``labelled``
        ``(*size, K, P)`` item counts (int64; row t = human category t).

    Examples
    --------
    >>> from bayesjudge.simulate import preference_confusion, simulate_categorical_jury_arrays
    >>> C = np.stack([preference_confusion(a, tie_rate=0.1) for a in (0.8, 0.7)])
    >>> draws = simulate_categorical_jury_arrays([0.4, 0.2, 0.4], C, n=300, m=[10, 5, 10],
    ...                                          size=1000, random_seed=1)
    >>> draws["patterns"].shape, draws["test"].shape, draws["labelled"].shape
    ((9, 2), (1000, 9), (1000, 3, 9))
    >>> draws["labelled"].sum(axis=-1)[0].tolist()
    [10, 5, 10]
    """
    par = _categorical_jury_sizes(pi, confusion, n, m, design, ())
    if par["shape"]:
        raise ValueError(
            f"pi, confusion, n and m must describe one group (pi (K,), confusion (J, K, K), n "
            f"a number); got group shape {par['shape']}."
        )
    shape = () if size is None else tuple(np.atleast_1d(size).astype(int).tolist())
    patterns, prob = categorical_jury_pattern_probabilities(par["confusion"], missing)
    rng = _rng(random_seed)
    pi = par["pi"]
    test = rng.multinomial(np.full(shape, par["n"]), pi @ prob)
    if par["design"] == "random":
        rows = rng.multinomial(np.full(shape, par["m"]), pi)
    else:
        rows = np.broadcast_to(par["m"], (*shape, par["K"]))
    labelled = np.stack([rng.multinomial(rows[..., t], prob[t]) for t in range(par["K"])], axis=-2)
    return {"patterns": patterns, "test": test.astype(np.int64), "labelled": labelled}


def _categorical_jury_verdicts(
    rng, truth, confusion, missing: float, dependence: float = 0.0
) -> np.ndarray:
    """Verdicts (items, J): category indices given the truths, -1 where missing.

    With ``dependence`` σ > 0 each item has u ~ N(0, 1): judge j is right with probability
    expit(a_jt + σ u) (a_jt keeps the marginal C_j[t, t], as :func:`simulate_jury`), and a
    wrong verdict falls in v ≠ t with probability ∝ C_j[t, v].
    """
    k = confusion.shape[-1]
    if dependence > 0:
        eye = np.eye(k, dtype=bool)
        # Contiguous: _jury_intercepts solves in place through a reshaped view.
        diag = np.ascontiguousarray(np.diagonal(confusion, axis1=-2, axis2=-1))  # (J, K)
        intercept = _jury_intercepts(diag, dependence)[:, truth].T  # (items, J)
        effect = dependence * rng.standard_normal(truth.size)[:, None]
        right = rng.random(intercept.shape) < special.expit(intercept + effect)
        off = np.where(eye, 0.0, confusion)
        total = off.sum(-1, keepdims=True)
        # A judge never wrong on truth t (C[t, t] = 1) is right for every u: any row will do.
        off = np.where(total > 0, off / np.where(total > 0, total, 1.0), ~eye / (k - 1))
        wrong = _categorical_jury_verdicts(rng, truth, off, 0.0)
        verdict = np.where(right, truth[:, None], wrong).astype(np.int8)
        return _drop_verdicts(rng, verdict, missing)
    cdf = np.cumsum(confusion, axis=-1)  # (J, K, K)
    u = rng.random((truth.size, confusion.shape[0]))
    rows = cdf[:, truth, :]  # (J, items, K)
    verdict = np.minimum((u.T[..., None] >= rows).sum(axis=-1), k - 1).T.astype(np.int8)
    return _drop_verdicts(rng, verdict, missing)


def _drop_verdicts(rng, verdict: np.ndarray, missing: float) -> np.ndarray:
    """Drop each verdict with probability ``missing`` (an item keeps at least one)."""
    if missing > 0:
        dropped = rng.random(verdict.shape) < missing
        # As simulate_jury: an item whose verdicts were all dropped keeps one judge's.
        lost = np.flatnonzero(dropped.all(axis=1))
        dropped[lost, rng.integers(0, verdict.shape[1], lost.size)] = False
        verdict[dropped] = -1
    return verdict


def _categorical_jury_draw(
    pi, confusion, n, m, design, missing, system, stratum, seed, dependence=0.0
):
    """Draw every group's items: truths, human labels (-1 unlabelled) and verdicts."""
    missing = _check_missing(missing)
    dependence, _, _ = _check_jury_options(dependence, 0.0, "stratified")
    system, stratum = _as_labels(system), _as_labels(stratum)
    labels_shape = _label_shape(system, stratum)
    par = _categorical_jury_sizes(pi, confusion, n, m, design, labels_shape)
    if par["shape"] != labels_shape:
        raise ValueError(
            f"The parameters have group shape {par['shape']} but the labels give "
            f"{labels_shape}: pass system= (and stratum= for two group axes) with one label "
            f"per group."
        )
    items = np.sum(par["n"], dtype=np.float64)
    if par["design"] == "stratified":
        items += np.sum(par["m"], dtype=np.float64)
    _check_table_rows(items * par["J"], "simulate_categorical_jury_arrays", n=n, m=m,
                      judges=par["J"])  # fmt: skip
    rng = _rng(seed)
    parts = []
    full = (len(system or [0]), len(stratum or [0]))
    for index in np.ndindex(labels_shape):
        g = {k: par[k][index] for k in ("pi", "confusion", "n", "m")}
        truth = _draw_categories(rng, np.broadcast_to(g["pi"], (int(g["n"]), par["K"])))
        if par["design"] == "stratified":
            lab = np.repeat(np.arange(par["K"]), g["m"])
        else:
            lab = _draw_categories(rng, np.broadcast_to(g["pi"], (int(g["m"]), par["K"])))
        truth = np.concatenate([truth, lab]).astype(np.int64)
        flat = np.ravel_multi_index(index, labels_shape) if labels_shape else 0
        s, t = np.unravel_index(flat, full)
        parts.append({
            "system": DEFAULT_LABEL if system is None else system[s],
            "stratum": DEFAULT_LABEL if stratum is None else stratum[t],
            "truth": truth,
            "human": np.where(np.arange(truth.size) >= int(g["n"]), truth, -1),
            "verdict": _categorical_jury_verdicts(
                rng, truth, g["confusion"], missing, dependence
            ),
        })  # fmt: skip
    return par, parts, system, stratum, full, missing


def _categorical_jury_names(par, categories, judges) -> tuple[list, list]:
    cats = _category_labels(categories, par["K"])
    if judges is None:
        judges = [f"j{j}" for j in range(par["J"])]
    judges = _as_labels(judges)
    if len(judges) != par["J"]:
        raise ValueError(
            f"judges has {len(judges)} labels but confusion has J = {par['J']} judges."
        )
    return cats, judges


def simulate_categorical_jury(
    pi,
    confusion,
    n,
    m,
    *,
    design="stratified",
    missing=0.0,
    system=None,
    stratum=None,
    categories=None,
    judges=None,
    random_seed=None,
    dependence=0.0,
) -> CategoricalJuryCounts:
    """Draw several judges' K-category verdicts on the same items, item by item.

    Per (system, stratum) group: ``n`` unlabelled test items with truths drawn from ``pi``,
    and labelled items — ``m[k]`` of each human category k (``design="stratified"``) or ``m``
    items with truths drawn from ``pi`` (``design="random"``; as in
    :func:`simulate_categorical_counts`, ``n`` counts the unlabelled items only). Judge j
    puts an item of truth t in category v with probability ``confusion[j, t, v]``,
    independently of the other judges given the truth (Dawid & Skene 1979); each verdict is
    lost with probability ``missing`` (an item that lost them all keeps one judge's, chosen
    at random, as :func:`simulate_jury` does).

    Parameters
    ----------
    pi : array_like, shape (..., K)
        True category shares per group.
    confusion : array_like, shape (..., J, K, K)
        Each judge's confusion matrix per group, rows = truth, columns = verdict (see
        :func:`preference_confusion` and :func:`rubric_confusion`).
    n : array_like of int
        Unlabelled test items per group.
    m : array_like of int
        ``design="stratified"``: labelled items per truth category, shape (..., K);
        ``design="random"``: labelled items per group, shape (...).
    design : {"stratified", "random"}, default "stratified"
        The labelling design, recorded on the counts.
    missing : float, default 0.0
        Probability, in [0, 1), that a judge gives no verdict on an item.
    system, stratum : sequence of labels, optional
        Group labels; the parameters' group axes must be ``(system,)``, ``(stratum,)`` or
        ``(system, stratum)`` after broadcasting (default one group ``"all"``).
    categories : sequence of labels, optional
        The K category labels (default ``0, …, K-1``).
    judges : sequence, optional
        The J judges' labels (default ``"j0"``, ``"j1"``, …).
    random_seed : int, numpy.random.Generator or None
        Seed of the draws.
    dependence : float, default 0.0
        Sd σ, in [0, :data:`MAX_DEPENDENCE`], of an item effect u shared by the judges: judge
        j is right on an item of truth t with probability expit(a_jt + σ u), u ~ N(0, 1),
        a_jt chosen so that its rate over the items stays C_j[t, t]; a wrong verdict falls
        in v ≠ t with probability ∝ C_j[t, v]. 0: conditionally independent judges. At
        K = 2 this is :func:`simulate_jury`'s ``dependence``.

    Returns
    -------
    CategoricalJuryCounts
        The pattern counts; ``dataset.attrs["simulation"]`` (JSON) records the settings.

    Raises
    ------
    ValueError
        If a probability is out of range or a row does not sum to 1, the shapes do not fit K,
        J or the labels, ``m`` does not fit the design, or ``missing`` is out of range.

    See Also
    --------
    simulate_categorical_jury_arrays : The same law as multinomial arrays of one group.
    simulate_categorical_jury_items : The same draws as a long item table.

    Examples
    --------
    >>> from bayesjudge.simulate import preference_confusion, simulate_categorical_jury
    >>> C = np.stack([preference_confusion(a, tie_rate=0.1) for a in (0.8, 0.7, 0.75)])
    >>> counts = simulate_categorical_jury([0.4, 0.2, 0.4], C, n=500, m=[20, 10, 20],
    ...                                    categories=["A", "tie", "B"],
    ...                                    judges=["gpt", "claude", "llama"], random_seed=1)
    >>> int(counts.test.sum()), counts.labelled.sum("pattern").values.ravel().tolist()
    (500, [20, 10, 20])
    >>> counts.categories, counts.judges
    (['A', 'tie', 'B'], ['gpt', 'claude', 'llama'])
    """
    par, parts, system, stratum, full, missing = _categorical_jury_draw(
        pi, confusion, n, m, design, missing, system, stratum, random_seed, dependence
    )
    cats, judges = _categorical_jury_names(par, categories, judges)
    digits = [np.where(p["verdict"] < 0, par["K"], p["verdict"]) for p in parts]
    unique, where = np.unique(np.concatenate(digits), axis=0, return_inverse=True)
    where = np.asarray(where).reshape(-1)
    test = np.zeros((len(parts), len(unique)), dtype=np.int64)
    labelled = np.zeros((len(parts), par["K"], len(unique)), dtype=np.int64)
    start = 0
    for i, p in enumerate(parts):
        w = where[start : start + len(p["truth"])]
        start += len(p["truth"])
        np.add.at(test[i], w[p["human"] < 0], 1)
        np.add.at(labelled[i], (p["human"][p["human"] >= 0], w[p["human"] >= 0]), 1)
    counts = CategoricalJuryCounts.from_counts(
        np.where(unique == par["K"], -1, unique),
        test.reshape((*full, -1)),
        labelled.reshape((*full, par["K"], -1)),
        judges=judges, categories=cats, systems=system, strata=stratum, design=par["design"],
    )  # fmt: skip
    ds = counts.dataset.copy()
    seed = int(random_seed) if is_seed(random_seed) else None
    settings = {"generator": "bayesjudge.simulate.simulate_categorical_jury", "random_seed": seed}
    settings |= {"design": par["design"], "missing": missing}
    if dependence:
        settings["dependence"] = float(dependence)
    settings |= {k: np.asarray(par[k]).tolist() for k in ("pi", "confusion", "n", "m")}
    ds.attrs["simulation"] = json.dumps(settings)
    return CategoricalJuryCounts(ds)


def simulate_categorical_jury_items(
    pi,
    confusion,
    n,
    m,
    *,
    design="stratified",
    missing=0.0,
    system=None,
    stratum=None,
    categories=None,
    judges=None,
    random_seed=None,
) -> pd.DataFrame:
    """Draw the items of :func:`simulate_categorical_jury` as one long item table.

    The same arguments and seed give the same items: counting the table with
    :meth:`~bayesjudge.data.CategoricalJuryCounts.from_frames` (one table, random design; or
    split by ``human`` into test and calibration tables, stratified) gives the counts of
    :func:`simulate_categorical_jury`.

    Parameters
    ----------
    pi, confusion, n, m, design, missing, system, stratum, categories, judges, random_seed
        As in :func:`simulate_categorical_jury`.

    Returns
    -------
    pandas.DataFrame
        One row per (item, judge) with a verdict: ``system``, ``stratum``, ``item`` (ids
        unique within a system: test items first, then labelled ones), ``judge_name``,
        ``verdict`` (the category label), ``human`` (the truth's label on labelled items,
        None on the others) and ``truth`` (the hidden truth's label, for studies).

    Examples
    --------
    >>> from bayesjudge.simulate import rubric_confusion, simulate_categorical_jury_items
    >>> C = np.stack([rubric_confusion(3, 0.6), rubric_confusion(3, 0.9)])
    >>> items = simulate_categorical_jury_items([0.3, 0.4, 0.3], C, n=20, m=[2, 2, 2],
    ...                                         categories=[1, 2, 3], random_seed=1)
    >>> list(items.columns), len(items)
    (['system', 'stratum', 'item', 'judge_name', 'verdict', 'human', 'truth'], 52)
    """
    par, parts, *_ = _categorical_jury_draw(
        pi, confusion, n, m, design, missing, system, stratum, random_seed
    )
    cats, judges = _categorical_jury_names(par, categories, judges)
    labels = np.empty(len(cats), dtype=object)
    labels[:] = cats
    frames, offset = [], {}
    for p in parts:
        first = offset.get(p["system"], 0)
        offset[p["system"]] = first + len(p["truth"])
        rows, cols = np.nonzero(p["verdict"] >= 0)
        human = p["human"][rows]
        frames.append(
            pd.DataFrame(
                {
                    "system": p["system"],
                    "stratum": p["stratum"],
                    "item": first + rows,
                    "judge_name": np.asarray(judges, dtype=object)[cols],
                    "verdict": labels[p["verdict"][rows, cols]],
                    "human": np.where(human >= 0, labels[np.maximum(human, 0)], None),
                    "truth": labels[p["truth"][rows]],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)
