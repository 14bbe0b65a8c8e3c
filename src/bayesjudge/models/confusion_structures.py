"""Structured judge confusion matrices for small calibration sets (issue 16).

A free K-category confusion matrix C (rows = truth t, columns = verdict v, C[t, v] =
P(judge says v | truth t)) has K(K − 1) free numbers per group; with 10–40 labelled items per
truth row most of them are poorly known, and the corrected θ inherits that uncertainty. The
two structures here tie the matrix down where the judge's task makes a structure plausible:

:func:`symmetric_preference_confusion`
    Pairwise preferences (e.g. ``["A", "tie", "B"]`` or ``["A>>B", "A>B", "tie", "B>A",
    "B>>A"]``, listed so that category i and category K − 1 − i are mirror images). The judge
    is unbiased between the two positions: swapping A and B in the truth swaps them in the
    verdict, C[t, v] = C[K−1−t, K−1−v] (a centrosymmetric matrix), so it mistakes "A better"
    for "B better" as often as the reverse, and a true tie is called "A" as often as "B".
    K(K − 1)/2 free numbers per group (half the free count): 3 at K = 3, 10 at K = 5.
:func:`ordinal_confusion`
    Graded scores (a 1–5 rubric, listed low to high). A cumulative-logit judge: given truth
    c the verdict is OrderedLogistic(η_c, κ), i.e. P(v ≤ j | c) = logistic(κ_j − η_c), with
    increasing cutpoints κ and locations η_0 = 0 < η_1 < … < η_{K−1}. Errors are mostly to
    neighbouring grades and rows are stochastically ordered; 2K − 2 free numbers per group
    (4 at K = 3, 8 at K = 5, against 6 and 20 free).

Both functions are called inside the caller's :class:`pymc.Model` context (by
:func:`bayesjudge.models.categorical.build_categorical_model` for ``confusion="symmetric"``
and ``"ordinal"``), create their own named variables with ``dims=`` and return the confusion
tensor of shape (…group dims, truth, verdict), every row on the simplex, without naming it
(the caller registers it, e.g. as the deterministic ``confusion``). The model cards
``models/categorical-symmetric.md`` and ``models/categorical-ordinal.md`` give the generative
stories, priors, dims and what each structure buys and costs (measured by
:mod:`bayesjudge.studies.categorical_structure`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from bayesjudge.core.categorical_posterior import default_confusion_prior

__all__ = [
    "ORDINAL_PRIOR",
    "ordinal_confusion",
    "ordinal_parameter_labels",
    "ordinal_rows",
    "structure_parameter_count",
    "symmetric_parameter_labels",
    "symmetric_preference_confusion",
]

#: Default Normal(mean, sd) priors of the ordinal judge's unconstrained parameters:
#: the lowest cutpoint κ_0 (with η_0 = 0 it is logit P(v = lowest | truth = lowest)), the log
#: gaps log(κ_j − κ_{j−1}) and the log steps log(η_c − η_{c−1}). Their medians (κ_0 = 1.5,
#: gaps and steps of 3) describe a judge right about 64 % of the time on a middle grade,
#: 17 % one grade off either way, 1 % two grades off; see models/categorical-ordinal.md.
ORDINAL_PRIOR = {"cutpoint": (1.5, 1.5), "log_gap": (float(np.log(3.0)), 0.75),
                 "log_step": (float(np.log(3.0)), 0.75)}  # fmt: skip
TIE_ROWS = ("symmetric", "free")


# ----------------------------------------------------------------------------- helpers


def _categories(categories) -> list:
    if isinstance(categories, str | bytes) or not isinstance(categories, Sequence | np.ndarray):
        raise TypeError(
            f"categories must be a list of category labels (e.g. ['A', 'tie', 'B']); got "
            f"{categories!r}."
        )
    labels = list(np.asarray(categories).tolist())
    if len(labels) < 2 or len(set(map(str, labels))) != len(labels):
        raise ValueError(f"categories must hold at least 2 distinct labels; got {labels!r}.")
    return labels


def _f64(values) -> np.ndarray:
    """Prior parameters as float64 arrays (pytensor would make Python floats float32)."""
    return np.asarray(values, dtype=np.float64)


def _coord(model: pm.Model, name: str, values: list) -> None:
    """Add coord ``name`` to the model, or check that an existing one has these values."""
    if name in model.coords:
        have = list(model.coords[name])
        if [str(v) for v in have] != [str(v) for v in values]:
            raise ValueError(
                f"The model's coord {name!r} is {have!r}, but the confusion structure needs "
                f"{values!r} (the categories in their order). Pass the same categories."
            )
        return
    model.add_coord(name, values)


def _group_dims(model: pm.Model, group_dims, pool_over) -> tuple[tuple, tuple, tuple]:
    """Return (group dims, their sizes, the population dims kept by the hierarchy)."""
    if isinstance(group_dims, str):
        group_dims = (group_dims,)
    dims = tuple(group_dims)
    missing = [d for d in dims if d not in model.coords]
    if missing:
        raise ValueError(
            f"group_dims {list(dims)} name dims {missing} that the model has no coords for; "
            f"create the model with pm.Model(coords={{...}}) naming them."
        )
    if pool_over is None:
        pooled = dims
    else:
        pooled = (pool_over,) if isinstance(pool_over, str) else tuple(pool_over)
        bad = [d for d in pooled if d not in dims]
        if bad:
            raise ValueError(f"pool_over {list(pooled)} must name dims among {list(dims)}.")
    kept = tuple(d for d in dims if d not in pooled)
    return dims, tuple(len(model.coords[d]) for d in dims), kept


def _expand(var, kept: Sequence[str], target: Sequence[str], trailing: int):
    """Broadcast a tensor over (``kept``, trailing axes) to (``target``, trailing axes)."""
    pattern = [kept.index(d) if d in kept else "x" for d in target]
    return var.dimshuffle([*pattern, *range(len(kept), len(kept) + trailing)])


def _unconstrained(name, *, mean, sd, dims, param_dim, hierarchical, kept, scale_index=None,
                   scale_dim=None, scale_prior=1.0):  # fmt: skip
    """Return Normal parameters per group, or non-centred μ + σ z across the pooled groups.

    ``mean``/``sd`` are per-parameter prior arrays. Hierarchical: μ ~ Normal(mean, sd) and
    σ ~ HalfNormal(scale_prior) over the kept dims (σ per ``scale_dim`` entry, mapped to the
    parameters by ``scale_index``), z ~ Normal(0, 1) per group, value = μ + σ z.
    """
    shape = tuple(len(pm.modelcontext(None).coords[d]) for d in dims)
    n_param = len(mean)
    if not hierarchical:
        return pm.Normal(
            name,
            mu=np.broadcast_to(_f64(mean), (*shape, n_param)).copy(),
            sigma=np.broadcast_to(_f64(sd), (*shape, n_param)).copy(),
            dims=(*dims, param_dim),
        )
    kept_shape = tuple(len(pm.modelcontext(None).coords[d]) for d in kept)
    mu = pm.Normal(
        f"{name}_mean",
        mu=np.broadcast_to(_f64(mean), (*kept_shape, n_param)).copy(),
        sigma=np.broadcast_to(_f64(sd), (*kept_shape, n_param)).copy(),
        dims=(*kept, param_dim),
    )
    n_scale = len(pm.modelcontext(None).coords[scale_dim])
    sigma = pm.HalfNormal(
        f"{name}_scale",
        sigma=np.full((*kept_shape, n_scale), np.float64(scale_prior)),
        dims=(*kept, scale_dim),
    )
    z = pm.Normal(f"{name}_z", mu=np.float64(0.0), sigma=np.float64(1.0), dims=(*dims, param_dim))
    value = _expand(mu, kept, dims, 1) + _expand(sigma[..., scale_index], kept, dims, 1) * z
    return pm.Deterministic(name, value, dims=(*dims, param_dim))


# ----------------------------------------------------------------------------- symmetric


def _symmetric_layout(labels: list, tie_row: str):
    """Return the free log-ratios of the symmetric confusion and the cells each one sets.

    Rows 0 … h−1 (h = K // 2, the "A side") are free; rows K−1 … K−h mirror them. With odd
    K the middle (tie) row is either mirror-symmetric (``tie_row="symmetric"``: C[h, j] =
    C[h, K−1−j]) or free. Each parameter is log C[t, v] − log C[t, t] of its row's reference
    (diagonal) cell. Returns (parameter labels, rows of each parameter, scatter matrix of
    shape (parameter, free row × K) setting every tied cell, free row labels).
    """
    k = len(labels)
    half, odd = k // 2, k % 2 == 1
    rows = list(range(half)) + ([half] if odd else [])
    names, row_of, cells = [], [], []
    for r, t in enumerate(rows):
        for v in range(k):
            if v == t:
                continue
            if odd and t == half and tie_row == "symmetric":
                if v > half:
                    continue  # tied to its mirror cell K − 1 − v
                names.append(f"{labels[t]}→{labels[v]}|{labels[k - 1 - v]}")
                cells.append([(r, v), (r, k - 1 - v)])
            else:
                names.append(f"{labels[t]}→{labels[v]}")
                cells.append([(r, v)])
            row_of.append(r)
    scatter = np.zeros((len(names), len(rows) * k))
    for p, group in enumerate(cells):
        for r, v in group:
            scatter[p, r * k + v] = 1.0
    return names, np.asarray(row_of), scatter, [labels[t] for t in rows]


def symmetric_parameter_labels(categories, *, tie_row: str = "symmetric") -> list[str]:
    """Labels of the free log-ratios of the symmetric confusion (hierarchical form).

    ``"t→v"`` is log C[t, v] − log C[t, t]; ``"tie→A|B"`` is the log-ratio shared by the two
    mirror cells of the symmetric tie row. Their number is the structure's free count
    (:func:`structure_parameter_count`).

    Examples
    --------
    >>> symmetric_parameter_labels(["A", "tie", "B"])
    ['A→tie', 'A→B', 'tie→A|B']
    """
    return _symmetric_layout(_categories(categories), _tie_row(tie_row))[0]


def _tie_row(tie_row) -> str:
    if tie_row not in TIE_ROWS:
        raise ValueError(f"tie_row must be one of {list(TIE_ROWS)}; got {tie_row!r}.")
    return tie_row


def _dirichlet_alpha(alpha, k: int) -> np.ndarray:
    a = np.asarray(alpha, dtype=float)
    if a.ndim == 0:
        a = np.full((k, k), float(a))
    if a.shape != (k, k) or not (np.isfinite(a).all() and (a > 0).all()):
        raise ValueError(
            f"alpha must be a positive number or a ({k}, {k}) matrix of positive Dirichlet "
            f"concentrations (rows = truth); got {np.asarray(alpha).tolist()!r}."
        )
    return a


def symmetric_preference_confusion(
    *,
    categories,
    group_dims=(),
    hierarchical: bool = False,
    pool_over=None,
    tie_row: str = "symmetric",
    alpha=None,
    error_logit_mean: tuple[float, float] = (-1.5, 1.5),
    error_logit_scale: float = 1.0,
):
    """Mirror-symmetric confusion of a pairwise-preference judge without position bias.

    The categories are listed so that category i and category K − 1 − i are mirror images
    (``["A", "tie", "B"]``, ``["A>>B", "A>B", "tie", "B>A", "B>>A"]``; a middle category,
    odd K, is the tie). The judge treats the two positions alike: C[t, v] = C[K−1−t, K−1−v]
    for every truth t and verdict v. So C["A", "B"] = C["B", "A"] (it mistakes "A better" for
    "B better" as often as the reverse), C["A", "tie"] = C["B", "tie"] and, with
    ``tie_row="symmetric"``, C["tie", "A"] = C["tie", "B"].

    Parameters
    ----------
    categories : sequence
        The K ≥ 2 category labels in mirror order.
    group_dims : sequence of str, default ()
        Dims of the model (with coords) that the confusion varies over, e.g.
        ``("system", "stratum")``.
    hierarchical : bool, default False
        False: each group's free rows ~ Dirichlet (``alpha``). True: the free log-ratios
        log C[t, v] − log C[t, t] ~ Normal(μ, σ_t) across the pooled groups, non-centred.
    pool_over : sequence of str, optional
        Hierarchical only: the group dims the population spans (default all); μ, σ keep the
        other dims.
    tie_row : {"symmetric", "free"}, default "symmetric"
        Whether the tie row (odd K) is mirror-symmetric or free. "symmetric" is the judge
        without position bias; "free" lets a judge break true ties towards one position.
    alpha : float or (K, K) array, optional
        Dirichlet concentrations of the rows (non-hierarchical); default 1/K in every cell,
        Perks's prior, the K-category model's default for free rows
        (:func:`~bayesjudge.core.categorical_posterior.default_confusion_prior`). Rows
        0 … K//2 − 1 are used for the free "A side" rows; a symmetric tie row's half-cells
        get the sums of the two mirror cells' concentrations (so each pair total has the
        prior it has in the free model).
    error_logit_mean : (float, float), default (-1.5, 1.5)
        Normal prior of μ (hierarchical), as ``CategoricalPriors.error_logit_mean``.
    error_logit_scale : float, default 1
        HalfNormal prior scale of σ_t (hierarchical).

    Returns
    -------
    pytensor.tensor.TensorVariable
        Shape (…group dims, K, K); rows = truth, columns = verdict, each row on the simplex.
        Not registered in the model: the caller names it.

    Notes
    -----
    Variables created (coords ``truth``, ``verdict`` = the categories are added if absent):
    non-hierarchical ``symmetric_side`` (…group, ``truth_side``, ``verdict``) ~ Dirichlet and,
    for odd K, ``symmetric_tie`` (…group, ``verdict_half``) ~ Dirichlet over the tie row's
    half-cells (pairs {v, K−1−v} and the tie) or (…group, ``verdict``) when free.
    Hierarchical: ``symmetric_logratio_mean`` (…kept, ``symmetric_parameter``),
    ``symmetric_logratio_scale`` (…kept, ``symmetric_row``), ``symmetric_logratio_z`` and the
    deterministic ``symmetric_logratio`` (…group, ``symmetric_parameter``). Free numbers per
    group: K(K − 1)/2 (``tie_row="symmetric"``), against K(K − 1) for free rows.

    Examples
    --------
    >>> import pymc as pm
    >>> with pm.Model(coords={"system": ["a", "b"]}) as model:
    ...     conf = symmetric_preference_confusion(categories=["A", "tie", "B"],
    ...                                           group_dims=("system",))
    >>> draw = pm.draw(conf, random_seed=1, mode="FAST_COMPILE")  # tiny graph: skip compiling
    >>> draw.shape
    (2, 3, 3)
    >>> bool((draw == draw[:, ::-1, ::-1]).all())
    True
    """
    labels = _categories(categories)
    tie_row = _tie_row(tie_row)
    model = pm.modelcontext(None)
    k = len(labels)
    half, odd = k // 2, k % 2 == 1
    dims, shape, kept = _group_dims(model, group_dims, pool_over)
    _coord(model, "truth", labels)
    _coord(model, "verdict", labels)
    if hierarchical:
        names, row_of, scatter, row_labels = _symmetric_layout(labels, tie_row)
        _coord(model, "symmetric_parameter", names)
        _coord(model, "symmetric_row", row_labels)
        mean, sd = error_logit_mean
        u = _unconstrained(
            "symmetric_logratio", mean=np.full(len(names), mean), sd=np.full(len(names), sd),
            dims=dims, param_dim="symmetric_parameter", hierarchical=True, kept=kept,
            scale_index=row_of, scale_dim="symmetric_row", scale_prior=error_logit_scale,
        )  # fmt: skip
        logits = pt.dot(u, scatter).reshape((*shape, len(row_labels), k))
        rows = pt.special.softmax(logits, axis=-1)
        side = rows[..., :half, :]
        tie = rows[..., half:, :] if odd else None
    else:
        a = _dirichlet_alpha(default_confusion_prior(k) if alpha is None else alpha, k)
        _coord(model, "truth_side", labels[:half])
        side = pm.Dirichlet(
            "symmetric_side",
            a=np.broadcast_to(a[:half], (*shape, half, k)).copy(),
            dims=(*dims, "truth_side", "verdict"),
        )
        tie = _tie_dirichlet(a, labels, dims, shape, tie_row) if odd else None
    parts = [side] + ([tie] if odd else []) + [side[..., ::-1, ::-1]]
    return pt.concatenate(parts, axis=-2)


def _tie_dirichlet(a: np.ndarray, labels: list, dims, shape, tie_row: str):
    """Return the tie row (K odd): free Dirichlet, or Dirichlet over half-cells mirrored out."""
    k = len(labels)
    h = k // 2
    if tie_row == "free":
        row = pm.Dirichlet(
            "symmetric_tie", a=np.broadcast_to(a[h], (*shape, k)).copy(), dims=(*dims, "verdict")
        )
        return row[..., None, :]
    halves = [f"{labels[v]}|{labels[k - 1 - v]}" for v in range(h)] + [str(labels[h])]
    _coord(pm.modelcontext(None), "verdict_half", halves)
    # The pair total C[h, v] + C[h, K−1−v] gets the summed concentration: the law it has
    # under a free Dirichlet(a[h]) row (the aggregation property).
    half_alpha = np.append(a[h, :h] + a[h, ::-1][:h], a[h, h])
    w = pm.Dirichlet(
        "symmetric_tie",
        a=np.broadcast_to(half_alpha, (*shape, h + 1)).copy(),
        dims=(*dims, "verdict_half"),
    )
    pairs = w[..., :h] / 2
    row = pt.concatenate([pairs, w[..., h:], pairs[..., ::-1]], axis=-1)
    return row[..., None, :]


# ----------------------------------------------------------------------------- ordinal


def ordinal_parameter_labels(categories) -> list[str]:
    """Labels of the ordinal judge's 2K − 2 unconstrained parameters, in order.

    ``cut[a|b]``: the lowest cutpoint κ_0; ``log_gap[b|c]``: log(κ_j − κ_{j−1}) for the
    cutpoint between b and c; ``log_step[c]``: log(η_c − η_{c−1}) for truth c.

    Examples
    --------
    >>> ordinal_parameter_labels([1, 2, 3])
    ['cut[1|2]', 'log_gap[2|3]', 'log_step[2]', 'log_step[3]']
    """
    labels = _categories(categories)
    cuts = [f"{a}|{b}" for a, b in pairwise(labels)]
    return (
        [f"cut[{cuts[0]}]"]
        + [f"log_gap[{c}]" for c in cuts[1:]]
        + [f"log_step[{c}]" for c in labels[1:]]
    )


def _log_sigmoid(x):
    return -pt.log1pexp(-x)


def ordinal_rows(cutpoints, location):
    """P(v = j | truth c) of a cumulative-logit judge, shape (…, K, K), rows = truth.

    P(v ≤ j | c) = logistic(κ_j − η_c). A middle cell σ(b) − σ(a) (a < b) is computed as
    exp(log σ(b) + log σ(−a) + log(1 − e^(a − b))), which stays accurate and positive where
    both logistics are near 0 or 1; the rows are renormalised against rounding.

    Examples
    --------
    >>> import numpy as np
    >>> rows = ordinal_rows(np.array([-1.5, 1.5]), np.array([-3.0, 0.0, 3.0]))
    >>> rows = rows.eval(mode="FAST_COMPILE")  # a tiny graph: evaluate without compiling
    >>> np.round(rows[1], 3).tolist()
    [0.182, 0.635, 0.182]
    """
    kappa = cutpoints[..., None, :]  # (…, 1, K−1)
    eta = location[..., :, None]  # (…, K, 1)
    upper = kappa - eta  # (…, K, K−1): cumulative logits
    first = pt.sigmoid(upper[..., :1])
    last = pt.sigmoid(-upper[..., -1:])
    a, b = upper[..., :-1], upper[..., 1:]
    middle = pt.exp(_log_sigmoid(b) + _log_sigmoid(-a) + pt.log1mexp(a - b))
    rows = pt.concatenate([first, middle, last], axis=-1)
    return rows / rows.sum(axis=-1, keepdims=True)


def ordinal_confusion(
    *,
    categories,
    group_dims=(),
    hierarchical: bool = False,
    pool_over=None,
    prior: dict | None = None,
    scale_prior: float = 1.0,
):
    """Confusion of a cumulative-logit judge of ordered grades (errors mostly to neighbours).

    Given truth c the verdict is OrderedLogistic(η_c, κ): P(v ≤ j | c) = logistic(κ_j − η_c)
    for j = 0 … K−2, with cutpoints κ_0 < κ_1 < … < κ_{K−2} and locations η_0 = 0 < η_1 <
    … < η_{K−1}. Fixing η_0 = 0 removes the one non-identified direction (κ + a, η + a give
    the same matrix); the logistic's unit scale fixes the scale. The rest, 2K − 2 numbers,
    is identified by the calibration counts (the K(K − 1) cumulative logits κ_j − η_c pin
    every difference).

    Parameters
    ----------
    categories : sequence
        The K ≥ 2 grades, lowest first.
    group_dims : sequence of str, default ()
        Dims of the model (with coords) that the confusion varies over.
    hierarchical : bool, default False
        False: every group's parameters ~ Normal(``prior``). True: each parameter is
        μ + σ z across the pooled groups (non-centred), μ ~ Normal(``prior``),
        σ ~ HalfNormal(``scale_prior``), one σ per parameter.
    pool_over : sequence of str, optional
        Hierarchical only: the group dims the population spans (default all).
    prior : dict, optional
        Normal (mean, sd) of ``"cutpoint"`` (κ_0), ``"log_gap"`` (log(κ_j − κ_{j−1})) and
        ``"log_step"`` (log(η_c − η_{c−1})); default :data:`ORDINAL_PRIOR`.
    scale_prior : float, default 1
        HalfNormal scale of the hierarchical σ's.

    Returns
    -------
    pytensor.tensor.TensorVariable
        Shape (…group dims, K, K), rows = truth, columns = verdict, rows on the simplex.
        Not registered in the model: the caller names it.

    Notes
    -----
    Variables created: ``ordinal_raw`` (…group, ``ordinal_parameter``) — free Normal, or with
    ``hierarchical`` a deterministic built from ``ordinal_raw_mean``, ``ordinal_raw_scale``
    (…kept, ``ordinal_parameter``) and ``ordinal_raw_z`` (…group, ``ordinal_parameter``) —
    and the deterministics ``ordinal_cutpoints`` (…group, ``cutpoint``) and
    ``ordinal_location`` (…group, ``truth``). Rows are stochastically increasing in the truth,
    and the cumulative log-odds of two truth rows differ by η_c' − η_c whatever the cutpoint
    (proportional odds): the structure the tests check in every prior draw.

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> with pm.Model() as model:
    ...     conf = ordinal_confusion(categories=[1, 2, 3, 4, 5])
    >>> draw = pm.draw(conf, random_seed=1, mode="FAST_COMPILE")  # tiny graph: skip compiling
    >>> draw.shape, bool(np.allclose(draw.sum(-1), 1))
    ((5, 5), True)
    """
    labels = _categories(categories)
    model = pm.modelcontext(None)
    k = len(labels)
    dims, _shape, kept = _group_dims(model, group_dims, pool_over)
    prior = {**ORDINAL_PRIOR, **(prior or {})}
    unknown = set(prior) - set(ORDINAL_PRIOR)
    if unknown:
        raise ValueError(f"prior names {sorted(unknown)} are unknown; use {list(ORDINAL_PRIOR)}.")
    names = ordinal_parameter_labels(labels)
    _coord(model, "truth", labels)
    _coord(model, "verdict", labels)
    _coord(model, "ordinal_parameter", names)
    _coord(model, "cutpoint", [f"{a}|{b}" for a, b in pairwise(labels)])
    kinds = ["cutpoint"] + ["log_gap"] * (k - 2) + ["log_step"] * (k - 1)
    mean = np.array([prior[kind][0] for kind in kinds])
    sd = np.array([prior[kind][1] for kind in kinds])
    raw = _unconstrained(
        "ordinal_raw", mean=mean, sd=sd, dims=dims, param_dim="ordinal_parameter",
        hierarchical=hierarchical, kept=kept, scale_index=np.arange(len(names)),
        scale_dim="ordinal_parameter", scale_prior=scale_prior,
    )  # fmt: skip
    lowest = raw[..., 0][..., None]  # indexed, so it broadcasts against the gaps
    kappa = pt.concatenate(
        [lowest, lowest + pt.cumsum(pt.exp(raw[..., 1 : k - 1]), axis=-1)], axis=-1
    )
    eta = pt.concatenate(
        [pt.zeros_like(raw[..., :1]), pt.cumsum(pt.exp(raw[..., k - 1 :]), axis=-1)], axis=-1
    )
    kappa = pm.Deterministic("ordinal_cutpoints", kappa, dims=(*dims, "cutpoint"))
    eta = pm.Deterministic("ordinal_location", eta, dims=(*dims, "truth"))
    return ordinal_rows(kappa, eta)


def structure_parameter_count(k: int, confusion: str, *, tie_row: str = "symmetric") -> int:
    """Free numbers per group of a K-category confusion: ``"free"``, ``"symmetric"``, ``"ordinal"``.

    Examples
    --------
    >>> [structure_parameter_count(k, c) for c in ("free", "symmetric", "ordinal") for k in (3, 5)]
    [6, 20, 3, 10, 4, 8]
    >>> structure_parameter_count(3, "symmetric", tie_row="free")
    4
    """
    if confusion == "free":
        return k * (k - 1)
    if confusion == "ordinal":
        return 2 * k - 2
    if confusion == "symmetric":
        extra = (k - 1) // 2 if (k % 2 and _tie_row(tie_row) == "free") else 0
        return k * (k - 1) // 2 + extra
    raise ValueError(f"confusion must be 'free', 'symmetric' or 'ordinal'; got {confusion!r}.")
