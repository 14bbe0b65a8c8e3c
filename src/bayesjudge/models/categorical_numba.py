"""Hand-written log density and gradient of the free-confusion K-category model (numba).

The PyMC model of :mod:`bayesjudge.models.categorical` is the definition of the model. For
``confusion="free"`` (every calibration model, both labelling designs) this module writes
the same log density, with PyMC's transforms and their Jacobians, and its gradient, as a few
small ``numba.njit(cache=True)`` kernels over groups and categories, wrapped in two
``numba.cfunc`` entry points with the C signatures nutpie calls for a compiled PyMC model
(:class:`nutpie.compile_pymc.CompiledPyMCModel`), so the chains run without Python or the
GIL exactly as on nutpie's own route.

Why: nutpie's own route compiles PyTensor's logp-and-gradient graph with numba, and LLVM
takes about two minutes on this model on a fresh installation; these kernels compile in
about 11 s of CPU and are kept on disk by numba (``cache=True``: in ``NUMBA_CACHE_DIR`` if
set, else in ``__pycache__`` beside this file, else, where that cannot be written, in
numba's per-user cache folder, ``~/.cache/numba``; with none writable they compile in
memory once per process). A later process loads them in under a second.
A Python callback (:func:`nutpie.compiled_pyfunc.from_pyfunc`) would cost about 50 µs per
gradient in nutpie's call overhead, four times the kernel itself.

The unconstrained point is PyMC's: the value variables of ``model.free_RVs`` in their order,
each flattened in C order. For ``"separate"``/``"shared"`` that is ``theta_simplex__``
(groups × (K − 1)) then ``confusion_simplex__`` (confusion groups × K × (K − 1)); for
``"hierarchical"`` it is ``theta_simplex__``, ``error_logit_mean`` (populations × E),
``error_logit_scale_log__`` (populations × K) and ``error_z`` (groups × E), E = K(K − 1)
off-diagonal cells row by row. PyMC's simplex transform maps y ∈ R^(K−1) to
x = softmax(y_1 … y_(K−1), −Σ y) with log |Jacobian| = log K + Σ_k log x_k.

Log density (constants included, so that it equals ``model.compile_logp()``)::

    Σ_g [Σ_k α_θk log θ_gk]                       Dirichlet(α_θ) of θ with its Jacobian
    + Σ_c Σ_t [Σ_v α_tv log C_ctv]                Dirichlet rows ("separate", "shared")
    | Σ N(μ; m, s) + Σ [HalfNormal(σ; τ) + log σ] + Σ N(z; 0, 1)     ("hierarchical")
    + Σ_g Σ_v y_gv log p_gv,  p_g = C_gᵀ θ_g        test verdicts
    + Σ_g Σ_t Σ_v c_gtv log C_gtv                   calibration verdicts
    + Σ_g Σ_t m_gt log θ_gt                         truth counts (random design only)
    + constants (normalisers, multinomial coefficients, log K per simplex)

Gradient through a softmax x = softmax(z): with h_j = x_j ∂L/∂x_j, ∂L/∂z_j = h_j − x_j Σ h;
for the simplex transform ∂L/∂y_i = ∂L/∂z_i − ∂L/∂z_K.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numba
import numpy as np
import pandas as pd
from scipy import special

__all__ = [
    "FreeCategoricalLayout",
    "compile_free_model",
    "expand",
    "free_layout",
    "initial_point",
    "logp_and_grad",
    "posterior_names",
    "posterior_shape",
]

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def _cached(decorator, func):
    """Apply a numba decorator with ``cache=True``, or without it where nothing is writable.

    numba keeps compiled code in ``NUMBA_CACHE_DIR``, else ``__pycache__`` beside this file,
    else its per-user cache folder (``~/.cache/numba``); with none writable it raises at
    decoration. Then the kernels compile in memory, once per process (seconds).
    """
    try:
        return decorator(cache=True)(func)
    except RuntimeError:
        return decorator(cache=False)(func)


def _jit(func):
    return _cached(lambda cache: numba.njit(cache=cache, nogil=True), func)


# ----------------------------------------------------------------------------- kernels


@_jit
def _simplex(y, log_x, x):
    """Fill log x and x = softmax(y_1 … y_(K−1), −Σ y) (PyMC's simplex backward)."""
    k = log_x.shape[0]
    last = 0.0
    for i in range(k - 1):
        last -= y[i]
    top = last
    for i in range(k - 1):
        top = max(top, y[i])
    total = 0.0
    for i in range(k):
        zi = y[i] if i < k - 1 else last
        total += math.exp(zi - top)
    lse = top + math.log(total)
    for i in range(k):
        zi = y[i] if i < k - 1 else last
        log_x[i] = zi - lse
        x[i] = math.exp(log_x[i])


@_jit
def _softmax_row(eta, log_x, x):
    """Fill log x and x = softmax(eta)."""
    k = eta.shape[0]
    top = eta[0]
    for i in range(1, k):
        top = max(top, eta[i])
    total = 0.0
    for i in range(k):
        total += math.exp(eta[i] - top)
    lse = top + math.log(total)
    for i in range(k):
        log_x[i] = eta[i] - lse
        x[i] = math.exp(log_x[i])


@_jit
def _confusions(x, offset, kind, n_conf, n_groups, pidx, k, log_c, c):
    """Fill log C and C of every confusion group (kind 0) or every group (kind 1)."""
    e_count = k * (k - 1)
    eta = np.empty(k)
    if kind == 0:
        for j in range(n_conf):
            for t in range(k):
                start = offset + (j * k + t) * (k - 1)
                _simplex(x[start : start + k - 1], log_c[j, t], c[j, t])
        return
    n_pop = n_conf
    off_sig = offset + n_pop * e_count
    off_z = off_sig + n_pop * k
    for g in range(n_groups):
        p = pidx[g]
        for t in range(k):
            sigma = math.exp(x[off_sig + p * k + t])
            for v in range(k):
                if v == t:
                    eta[v] = 0.0
                else:
                    e = t * (k - 1) + (v if v < t else v - 1)
                    eta[v] = x[offset + p * e_count + e] + sigma * x[off_z + g * e_count + e]
            _softmax_row(eta, log_c[g, t], c[g, t])


@_jit
def _likelihood(x, test, cal, truth, random, alpha_theta, cidx, log_c, c, grad, dconf):
    """Σ over groups of θ's prior and the three multinomials; θ's gradient into ``grad``.

    ``dconf[j, t, v]`` accumulates ∂L/∂η of confusion row t of confusion j (the softmax
    logits), over the groups that use confusion j.
    """
    n_groups, k = test.shape
    log_th = np.empty(k)
    th = np.empty(k)
    ratio = np.empty(k)
    h = np.empty(k)
    hc = np.empty(k)
    total = 0.0
    for g in range(n_groups):
        start = g * (k - 1)
        _simplex(x[start : start + k - 1], log_th, th)
        j = cidx[g]
        for v in range(k):
            acc = 0.0
            for t in range(k):
                acc += th[t] * c[j, t, v]  # p[v] = (Cᵀθ)[v]
            if test[g, v] > 0.0:
                total += test[g, v] * math.log(acc)
                ratio[v] = test[g, v] / acc
            else:
                ratio[v] = 0.0
        h_sum = 0.0
        for t in range(k):
            total += alpha_theta[t] * log_th[t]
            ht = alpha_theta[t]
            if random:
                ht += truth[g, t]
                if truth[g, t] > 0.0:
                    total += truth[g, t] * log_th[t]
            acc = 0.0
            for v in range(k):
                acc += ratio[v] * c[j, t, v]
            h[t] = ht + th[t] * acc
            h_sum += h[t]
            hc_sum = 0.0
            for v in range(k):
                hc[v] = ratio[v] * th[t] * c[j, t, v] + cal[g, t, v]
                if cal[g, t, v] > 0.0:
                    total += cal[g, t, v] * log_c[j, t, v]
                hc_sum += hc[v]
            for v in range(k):
                dconf[j, t, v] += hc[v] - c[j, t, v] * hc_sum
        dlast = h[k - 1] - th[k - 1] * h_sum
        for i in range(k - 1):
            grad[start + i] = h[i] - th[i] * h_sum - dlast
    return total


@_jit
def _dirichlet_rows(x, offset, alpha, log_c, c, dconf, grad):
    """Dirichlet(α_t) priors of the confusion rows with their Jacobians; their gradient."""
    n_conf, k = log_c.shape[0], log_c.shape[1]
    total = 0.0
    for j in range(n_conf):
        for t in range(k):
            a_sum = 0.0
            for v in range(k):
                total += alpha[t, v] * log_c[j, t, v]
                a_sum += alpha[t, v]
            dlast = dconf[j, t, k - 1] + alpha[t, k - 1] - a_sum * c[j, t, k - 1]
            start = offset + (j * k + t) * (k - 1)
            for i in range(k - 1):
                grad[start + i] = dconf[j, t, i] + alpha[t, i] - a_sum * c[j, t, i] - dlast
    return total


@_jit
def _hierarchy(x, offset, n_pop, pidx, k, prior, dconf, grad):
    """Normal/HalfNormal/Normal priors of μ, σ (log scale, Jacobian) and z; chain rule."""
    mean, sd, tau = prior[0], prior[1], prior[2]
    e_count = k * (k - 1)
    n_groups = pidx.shape[0]
    off_sig = offset + n_pop * e_count
    off_z = off_sig + n_pop * k
    total = 0.0
    for i in range(n_pop * e_count):
        r = (x[offset + i] - mean) / sd
        total -= 0.5 * r * r
        grad[offset + i] = -r / sd
    for i in range(n_pop * k):
        s = x[off_sig + i]
        sigma = math.exp(s)
        total += s - 0.5 * (sigma / tau) ** 2
        grad[off_sig + i] = 1.0 - (sigma / tau) ** 2
    for i in range(n_groups * e_count):
        z = x[off_z + i]
        total -= 0.5 * z * z
        grad[off_z + i] = -z
    for g in range(n_groups):
        p = pidx[g]
        for t in range(k):
            sigma = math.exp(x[off_sig + p * k + t])
            dsigma = 0.0
            for v in range(k):
                if v == t:
                    continue
                e = t * (k - 1) + (v if v < t else v - 1)
                d = dconf[g, t, v]
                grad[offset + p * e_count + e] += d
                grad[off_z + g * e_count + e] += d * sigma
                dsigma += d * x[off_z + g * e_count + e]
            grad[off_sig + p * k + t] += sigma * dsigma
    return total


@_jit
def _logp_grad(x, test, cal, truth, random, alpha_theta, kind, cidx, n_conf, alpha_conf,
               prior, constant, grad):  # fmt: skip
    """Return the log density at the unconstrained point x; write its gradient into grad."""
    n_groups, k = test.shape
    offset = n_groups * (k - 1)
    n_c = n_conf if kind == 0 else n_groups
    log_c = np.empty((n_c, k, k))
    c = np.empty((n_c, k, k))
    dconf = np.zeros((n_c, k, k))
    _confusions(x, offset, kind, n_conf, n_groups, cidx, k, log_c, c)
    group_conf = cidx if kind == 0 else np.arange(n_groups)
    total = _likelihood(x, test, cal, truth, random, alpha_theta, group_conf, log_c, c, grad,
                        dconf)  # fmt: skip
    if kind == 0:
        total += _dirichlet_rows(x, offset, alpha_conf, log_c, c, dconf, grad)
    else:
        total += _hierarchy(x, offset, n_conf, cidx, k, prior, dconf, grad)
    return total + constant


@_jit
def _expand_into(x, n_groups, k, kind, cidx, n_conf, scores, has_scores, out):
    """Write the posterior variables at x, flat, in :func:`posterior_names` order, into out.

    ``"hierarchical"``: μ, z, θ, σ, the confusion (per group), p[, score]; otherwise θ, the
    confusion (per confusion group), p[, score].
    """
    offset = n_groups * (k - 1)
    n_c = n_conf if kind == 0 else n_groups
    e_count = k * (k - 1)
    log_c = np.empty((n_c, k, k))
    c = np.empty((n_c, k, k))
    _confusions(x, offset, kind, n_conf, n_groups, cidx, k, log_c, c)
    pos = 0
    if kind == 1:
        for i in range(n_conf * e_count):  # μ
            out[pos + i] = x[offset + i]
        pos += n_conf * e_count
        off_z = offset + n_conf * e_count + n_conf * k
        for i in range(n_groups * e_count):  # z
            out[pos + i] = x[off_z + i]
        pos += n_groups * e_count
    log_th = np.empty(k)
    theta = np.empty((n_groups, k))
    for g in range(n_groups):
        start = g * (k - 1)
        _simplex(x[start : start + k - 1], log_th, theta[g])
        for t in range(k):
            out[pos + g * k + t] = theta[g, t]
    pos += n_groups * k
    if kind == 1:
        off_sig = offset + n_conf * e_count
        for i in range(n_conf * k):  # σ
            out[pos + i] = math.exp(x[off_sig + i])
        pos += n_conf * k
    for j in range(n_c):
        for t in range(k):
            for v in range(k):
                out[pos + (j * k + t) * k + v] = c[j, t, v]
    pos += n_c * k * k
    for g in range(n_groups):
        j = cidx[g] if kind == 0 else g
        for v in range(k):
            acc = 0.0
            for t in range(k):
                acc += theta[g, t] * c[j, t, v]
            out[pos + g * k + v] = acc
    pos += n_groups * k
    if has_scores:
        for g in range(n_groups):
            acc = 0.0
            for t in range(k):
                acc += theta[g, t] * scores[t]
            out[pos + g] = acc
        pos += n_groups
    return pos


# ----------------------------------------------------------------------------- layout


@dataclass(frozen=True)
class FreeCategoricalLayout:
    """The data, priors and parameter layout of one free-confusion model.

    Attributes
    ----------
    test : (G, K) float array, groups in C order of (system, stratum)
    calibration : (G, K, K) float array, rows = truth
    truth : (G, K) float array, the calibration row totals
    random : bool
        Random labelling design (the truth counts are data).
    alpha_theta : (K,) float array
    kind : int
        0: Dirichlet rows ("separate", "shared"); 1: the hierarchical log-ratios.
    index : (G,) int array
        Per group, its confusion (kind 0) or population (kind 1), C order of the kept dims.
    n_conf : int
        Number of confusion matrices (kind 0) or populations (kind 1).
    alpha_conf : (K, K) float array
        Dirichlet concentration of the confusion rows (kind 0).
    prior : (3,) float array
        (mean, sd) of the log-ratios' population mean and τ of their spread (kind 1).
    constant : float
        Every term of the log density that does not depend on the parameters.
    names, shapes : list
        PyMC's value-variable names and shapes, in the order of the unconstrained point.
    """

    test: np.ndarray
    calibration: np.ndarray
    truth: np.ndarray
    random: bool
    alpha_theta: np.ndarray
    kind: int
    index: np.ndarray
    n_conf: int
    alpha_conf: np.ndarray
    prior: np.ndarray
    constant: float
    names: list
    shapes: list

    @property
    def n_dim(self) -> int:
        """The length of the unconstrained point."""
        return int(sum(math.prod(s) for s in self.shapes))


def _group_index(group_shape: tuple[int, ...], kept: tuple[bool, ...]) -> tuple[np.ndarray, int]:
    """Per group (C order), the flat index of its kept-dims cell, and the number of cells."""
    kept_shape = tuple(n for n, keep in zip(group_shape, kept, strict=True) if keep)
    index = np.empty(math.prod(group_shape), dtype=np.int64)
    for flat, cell in enumerate(np.ndindex(group_shape)):
        sub = tuple(i for i, keep in zip(cell, kept, strict=True) if keep)
        index[flat] = np.ravel_multi_index(sub, kept_shape) if sub else 0
    return index, math.prod(kept_shape)


def _multinomial_constant(counts: np.ndarray) -> float:
    """Σ over rows of log n! − Σ log y! (the multinomial coefficients)."""
    counts = np.asarray(counts, dtype=float)
    return float(special.gammaln(counts.sum(-1) + 1.0).sum() - special.gammaln(counts + 1.0).sum())


def _dirichlet_constant(alpha: np.ndarray) -> float:
    """Σ over rows of log Γ(Σα) − Σ log Γ(α) + log K (the normaliser and the simplex Jacobian)."""
    alpha = np.asarray(alpha, dtype=float)
    k = alpha.shape[-1]
    rows = special.gammaln(alpha.sum(-1)) - special.gammaln(alpha).sum(-1) + math.log(k)
    return float(np.sum(rows))


def free_layout(
    test: np.ndarray,
    calibration: np.ndarray,
    *,
    design: str,
    calibration_model: str,
    pool_over,
    alpha_theta: np.ndarray,
    alpha_confusion: np.ndarray,
    error_logit_mean: tuple[float, float],
    error_logit_scale: float,
) -> FreeCategoricalLayout:
    """Return the layout of the free-confusion model of these counts and priors.

    Parameters
    ----------
    test : array (system, stratum, K) of int
    calibration : array (system, stratum, K, K) of int, rows = truth
    design : {"stratified", "random"}
    calibration_model : {"separate", "shared", "hierarchical"}
    pool_over : sequence of {"system", "stratum"}
        The pooled dims ("shared", "hierarchical"); empty for "separate".
    alpha_theta, alpha_confusion : arrays (K,), (K, K)
        Dirichlet concentrations of θ and of the confusion rows (the model's priors).
    error_logit_mean, error_logit_scale
        Normal (mean, sd) of μ and the HalfNormal scale τ of σ ("hierarchical").

    Examples
    --------
    >>> import numpy as np
    >>> lay = free_layout(np.ones((2, 1, 3)), np.ones((2, 1, 3, 3)), design="stratified",
    ...                   calibration_model="hierarchical", pool_over=("system", "stratum"),
    ...                   alpha_theta=np.ones(3), alpha_confusion=np.ones((3, 3)),
    ...                   error_logit_mean=(-1.5, 1.5), error_logit_scale=1.0)
    >>> lay.names, lay.shapes, lay.n_dim
    (['theta_simplex__', 'error_logit_mean', 'error_logit_scale_log__', 'error_z'], \
[(2, 1, 2), (6,), (3,), (2, 1, 6)], 25)
    """
    test = np.asarray(test, dtype=float)
    cal = np.asarray(calibration, dtype=float)
    group_shape = test.shape[:2]
    k = test.shape[-1]
    g = math.prod(group_shape)
    dims = ("system", "stratum")
    kept = tuple(d not in tuple(pool_over) for d in dims)
    kept_shape = tuple(n for n, keep in zip(group_shape, kept, strict=True) if keep)
    random = design == "random"
    truth = cal.sum(-1)
    constant = _multinomial_constant(test) + _multinomial_constant(cal)
    if random:
        constant += _multinomial_constant(truth)
    constant += g * _dirichlet_constant(alpha_theta)
    names, shapes = ["theta_simplex__"], [(*group_shape, k - 1)]
    mean, sd = error_logit_mean
    e = k * (k - 1)
    if calibration_model == "hierarchical":
        kind = 1
        index, n_conf = _group_index(group_shape, kept)
        names += ["error_logit_mean", "error_logit_scale_log__", "error_z"]
        shapes += [(*kept_shape, e), (*kept_shape, k), (*group_shape, e)]
        constant += n_conf * e * (-_HALF_LOG_2PI - math.log(sd))
        constant += n_conf * k * (0.5 * math.log(2.0 / math.pi) - math.log(error_logit_scale))
        constant += g * e * (-_HALF_LOG_2PI)
    else:
        kind = 0
        if calibration_model == "separate":
            kept, kept_shape = (True, True), group_shape
        index, n_conf = _group_index(group_shape, kept)
        names.append("confusion_simplex__")
        shapes.append((*kept_shape, k, k - 1))
        constant += n_conf * _dirichlet_constant(alpha_confusion)
    return FreeCategoricalLayout(
        test=test.reshape(g, k),
        calibration=cal.reshape(g, k, k),
        truth=truth.reshape(g, k),
        random=random,
        alpha_theta=np.asarray(alpha_theta, dtype=float),
        kind=kind,
        index=index,
        n_conf=n_conf,
        alpha_conf=np.asarray(alpha_confusion, dtype=float),
        prior=np.array([mean, sd, error_logit_scale], dtype=float),
        constant=float(constant),
        names=names,
        shapes=[tuple(int(n) for n in s) for s in shapes],
    )


def logp_and_grad(layout: FreeCategoricalLayout, x: np.ndarray) -> tuple[float, np.ndarray]:
    """Return the log density and its gradient at the unconstrained point ``x`` (flat).

    Equal to PyMC's ``model.compile_logp()`` and ``model.compile_dlogp()`` of the same model
    at the same point (transforms and Jacobians included).

    Examples
    --------
    One group, K = 2, separate calibration, flat priors. At x = 0 every simplex is
    (0.5, 0.5), so p = (0.5, 0.5); each of the three simplexes adds its Jacobian
    log 2 + 2 log 0.5 = −log 2 (the flat Dirichlet's density is Γ(2) = 1):

    >>> import numpy as np
    >>> from scipy import stats
    >>> lay = free_layout(np.array([[[5, 3]]]), np.array([[[[8, 2], [1, 9]]]]),
    ...                   design="stratified", calibration_model="separate", pool_over=(),
    ...                   alpha_theta=np.ones(2), alpha_confusion=np.ones((2, 2)),
    ...                   error_logit_mean=(-1.5, 1.5), error_logit_scale=1.0)
    >>> value, grad = logp_and_grad(lay, np.zeros(lay.n_dim))
    >>> half = [0.5, 0.5]
    >>> reference = (stats.multinomial.logpmf([5, 3], 8, half)
    ...              + stats.multinomial.logpmf([8, 2], 10, half)
    ...              + stats.multinomial.logpmf([1, 9], 10, half) - 3 * np.log(2))
    >>> bool(np.isclose(value, reference, rtol=1e-12)), grad.shape
    (True, (3,))
    """
    x = np.ascontiguousarray(x, dtype=float)
    if x.shape != (layout.n_dim,):
        raise ValueError(f"x must have shape ({layout.n_dim},); got {x.shape}.")
    grad = np.empty(layout.n_dim)
    value = _logp_grad(x, layout.test, layout.calibration, layout.truth, layout.random,
                       layout.alpha_theta, layout.kind, layout.index, layout.n_conf,
                       layout.alpha_conf, layout.prior, layout.constant, grad)  # fmt: skip
    return float(value), grad


def expand(layout: FreeCategoricalLayout, x: np.ndarray, scores: np.ndarray | None) -> dict:
    """Return the posterior variables at ``x`` (:func:`posterior_names`), shaped as PyMC's.

    θ and p (system, stratum, K); the confusion (its group dims, K, K) or, hierarchical,
    (system, stratum, K, K); μ (kept dims, E), σ (kept dims, K), z (system, stratum, E);
    the score (system, stratum) when ``scores`` is given.

    Examples
    --------
    >>> import numpy as np
    >>> lay = free_layout(np.ones((2, 1, 3)), np.ones((2, 1, 3, 3)), design="stratified",
    ...                   calibration_model="shared", pool_over=("system",),
    ...                   alpha_theta=np.ones(3), alpha_confusion=np.ones((3, 3)),
    ...                   error_logit_mean=(-1.5, 1.5), error_logit_scale=1.0)
    >>> out = expand(lay, np.zeros(lay.n_dim), scores=np.array([1.0, 0.5, 0.0]))
    >>> {name: value.shape for name, value in out.items()}
    {'theta': (2, 1, 3), 'confusion': (1, 3, 3), 'p': (2, 1, 3), 'score': (2, 1)}
    >>> out["score"].ravel().tolist()  # θ = (1/3, 1/3, 1/3) at x = 0
    [0.5, 0.5]
    """
    names = posterior_names(layout, scores is not None)
    shapes = [posterior_shape(layout, name) for name in names]
    out = np.empty(sum(math.prod(s) for s in shapes))
    k = layout.test.shape[1]
    values = np.zeros(k) if scores is None else np.asarray(scores, dtype=float)
    _expand_into(np.ascontiguousarray(x, dtype=float), layout.test.shape[0], k, layout.kind,
                 layout.index, layout.n_conf, values, scores is not None, out)  # fmt: skip
    result, pos = {}, 0
    for name, shape in zip(names, shapes, strict=True):
        size = math.prod(shape)
        result[name] = out[pos : pos + size].reshape(shape)
        pos += size
    return result


def posterior_names(layout: FreeCategoricalLayout, has_scores: bool) -> list[str]:
    """Return the posterior variables, in the order nutpie stores those of the PyMC model.

    Free variables without a transform first (``free_RVs`` order), then the constrained
    values of the transformed ones and the deterministics, in the model's order.

    Examples
    --------
    >>> import numpy as np
    >>> lay = free_layout(np.ones((1, 1, 2)), np.ones((1, 1, 2, 2)), design="random",
    ...                   calibration_model="hierarchical", pool_over=("system", "stratum"),
    ...                   alpha_theta=np.ones(2), alpha_confusion=np.ones((2, 2)),
    ...                   error_logit_mean=(-1.5, 1.5), error_logit_scale=1.0)
    >>> posterior_names(lay, has_scores=False)
    ['error_logit_mean', 'error_z', 'theta', 'error_logit_scale', 'confusion', 'p']
    >>> posterior_shape(lay, "error_z")
    (1, 1, 2)
    """
    if layout.kind == 1:
        names = ["error_logit_mean", "error_z", "theta", "error_logit_scale", "confusion", "p"]
    else:
        names = ["theta", "confusion", "p"]
    return [*names, "score"] if has_scores else names


def posterior_shape(layout: FreeCategoricalLayout, name: str) -> tuple[int, ...]:
    """Return the shape of one posterior variable (:func:`posterior_names` has an example)."""
    group_shape = layout.shapes[0][:-1]
    k = layout.test.shape[1]
    shapes = {
        "theta": (*group_shape, k),
        "p": (*group_shape, k),
        "score": tuple(group_shape),
    }
    if layout.kind == 1:
        shapes.update(
            confusion=(*group_shape, k, k),
            error_logit_mean=layout.shapes[1],
            error_logit_scale=layout.shapes[2],
            error_z=layout.shapes[3],
        )
    else:
        shapes["confusion"] = (*layout.shapes[1][:-2], k, k)
    return tuple(int(n) for n in shapes[name])


def initial_point(layout: FreeCategoricalLayout, seed: int) -> np.ndarray:
    """PyMC's default start: the support point in the unconstrained space + U(−1, 1) jitter.

    The support points: Dirichlet α/Σα (log-ratio coordinates), Normal its mean, HalfNormal
    its scale τ (log), z = 0. nutpie calls it with a seed per chain.

    Examples
    --------
    >>> import numpy as np
    >>> lay = free_layout(np.ones((1, 1, 3)), np.ones((1, 1, 3, 3)), design="stratified",
    ...                   calibration_model="separate", pool_over=(),
    ...                   alpha_theta=np.ones(3), alpha_confusion=np.ones((3, 3)),
    ...                   error_logit_mean=(-1.5, 1.5), error_logit_scale=1.0)
    >>> start = initial_point(lay, seed=1)
    >>> start.shape, bool(np.all(np.abs(start) <= 1))  # flat priors: support point 0
    ((8,), True)
    """
    parts = []
    alpha = layout.alpha_theta
    log_a = np.log(alpha / alpha.sum())
    parts.append(np.broadcast_to(log_a[:-1] - log_a.mean(), layout.shapes[0]).ravel())
    if layout.kind == 0:
        log_c = np.log(layout.alpha_conf / layout.alpha_conf.sum(-1, keepdims=True))
        rows = log_c[:, :-1] - log_c.mean(-1, keepdims=True)
        parts.append(np.broadcast_to(rows, layout.shapes[1]).ravel())
    else:
        parts.append(np.full(math.prod(layout.shapes[1]), layout.prior[0]))
        parts.append(np.full(math.prod(layout.shapes[2]), math.log(layout.prior[2])))
        parts.append(np.zeros(math.prod(layout.shapes[3])))
    start = np.concatenate(parts)
    rng = np.random.default_rng(seed)
    return start + rng.uniform(-1.0, 1.0, size=start.shape)


# ----------------------------------------------------------------------------- nutpie
#
# nutpie calls the log density through a C function pointer (no Python, no GIL: the chains
# run in parallel threads), with a user-data pointer; here that points at one float64
# buffer holding a header and every array the kernels read (:func:`_pack`).

_HEADER = 16  # n_dim, G, K, random, kind, n_conf, has_scores, constant, mean, sd, tau, n_out


def _pack(layout: FreeCategoricalLayout, scores: np.ndarray | None, n_out: int) -> np.ndarray:
    """One contiguous float64 buffer: the header, then the data arrays (ints exact as floats)."""
    g, k = layout.test.shape
    header = np.zeros(_HEADER)
    header[:12] = [layout.n_dim, g, k, float(layout.random), layout.kind, layout.n_conf,
                   float(scores is not None), layout.constant, *layout.prior, n_out]  # fmt: skip
    values = np.zeros(k) if scores is None else np.asarray(scores, dtype=float)
    parts = [header, layout.test, layout.calibration, layout.truth, layout.alpha_theta,
             layout.alpha_conf, layout.index.astype(float), values]  # fmt: skip
    buffer = np.concatenate([np.ravel(p) for p in parts]).astype(np.float64)
    buffer.flags.writeable = False
    return buffer


@_jit
def _unpack(buffer):
    """Return views of the arrays :func:`_pack` wrote (the inverse of its layout)."""
    g, k = int(buffer[1]), int(buffer[2])
    pos = _HEADER
    test = buffer[pos : pos + g * k].reshape((g, k))
    pos += g * k
    cal = buffer[pos : pos + g * k * k].reshape((g, k, k))
    pos += g * k * k
    truth = buffer[pos : pos + g * k].reshape((g, k))
    pos += g * k
    alpha_theta = buffer[pos : pos + k]
    pos += k
    alpha_conf = buffer[pos : pos + k * k].reshape((k, k))
    pos += k * k
    index = np.empty(g, dtype=np.int64)
    for i in range(g):
        index[i] = int(buffer[pos + i])
    pos += g
    scores = buffer[pos : pos + k]
    return test, cal, truth, alpha_theta, alpha_conf, index, scores


def _logp_c(dim, x_, out_, logp_, user_data_):
    """Return 0 and write the log density and gradient (nutpie's C signature); 3/4: not finite."""
    head = numba.carray(user_data_, (_HEADER,), np.float64)
    n_dim = int(head[0])
    if dim != n_dim:
        return -1
    g, k = int(head[1]), int(head[2])
    size = _HEADER + 2 * g * k + g * k * k + k + k * k + g + k
    buffer = numba.carray(user_data_, (size,), np.float64)
    test, cal, truth, alpha_theta, alpha_conf, index, _ = _unpack(buffer)
    x = numba.carray(x_, (n_dim,))
    out = numba.carray(out_, (n_dim,))
    logp = numba.carray(logp_, ())
    value = _logp_grad(x, test, cal, truth, head[3] > 0.5, alpha_theta, int(head[4]), index,
                       int(head[5]), alpha_conf, head[8:11], head[7], out)  # fmt: skip
    logp[()] = value
    for i in range(n_dim):
        if not math.isfinite(out[i]):
            return 3
    if not math.isfinite(value):
        return 4
    return 0


def _expand_c(dim, expanded, x_, out_, user_data_):
    """Return 0 and write the posterior variables at x, flat (nutpie's C expand signature)."""
    head = numba.carray(user_data_, (_HEADER,), np.float64)
    n_dim, n_out = int(head[0]), int(head[11])
    if dim != n_dim or expanded != n_out:
        return -1
    g, k = int(head[1]), int(head[2])
    size = _HEADER + 2 * g * k + g * k * k + k + k * k + g + k
    buffer = numba.carray(user_data_, (size,), np.float64)
    _, _, _, _, _, index, scores = _unpack(buffer)
    x = numba.carray(x_, (n_dim,))
    out = numba.carray(out_, (n_out,))
    _expand_into(x, g, k, int(head[4]), index, int(head[5]), scores, head[6] > 0.5, out)
    return 0


@functools.cache
def _cfuncs():
    """Compile (or load from numba's disk cache) the two C functions, once per process."""
    types = numba.types
    logp_sig = types.int64(types.uint64, types.CPointer(types.double),
                           types.CPointer(types.double), types.CPointer(types.double),
                           types.voidptr)  # fmt: skip
    expand_sig = types.int64(types.uint64, types.uint64, types.CPointer(types.double),
                             types.CPointer(types.double), types.voidptr)  # fmt: skip
    return (
        _cached(lambda cache: numba.cfunc(logp_sig, cache=cache), _logp_c),
        _cached(lambda cache: numba.cfunc(expand_sig, cache=cache), _expand_c),
    )


def compile_free_model(
    layout: FreeCategoricalLayout,
    *,
    coords: dict,
    dims: dict,
    scores: np.ndarray | None = None,
):
    """Return a nutpie model that samples the layout's density through the C kernels.

    Parameters
    ----------
    layout : FreeCategoricalLayout
    coords : dict
        Coordinates of every dim the posterior variables use.
    dims : dict
        The dims of each posterior variable (:func:`posterior_names`).
    scores : (K,) array, optional
        Adds the deterministic ``score`` = θ · scores.

    Returns
    -------
    nutpie.compile_pymc.CompiledPyMCModel
        nutpie's container of a C log density and expand function (the one
        ``nutpie.compile_pymc_model`` returns), holding these kernels and the data buffer;
        ``nutpie.sample`` takes it as it takes a compiled PyMC model.

    Examples
    --------
    :func:`bayesjudge.models.categorical.fit_categorical` calls it for ``confusion="free"``
    (``compile_categorical``): ``nutpie.sample(compile_free_model(layout, coords=...,
    dims=...), draws=1000, seed=1)`` returns the posterior of θ, the confusion, p (and μ,
    σ, z when hierarchical) with the PyMC model's names, dims and coords.
    """
    from nutpie.compile_pymc import CompiledPyMCModel

    logp_c, expand_c = _cfuncs()
    names = posterior_names(layout, scores is not None)
    shapes = [posterior_shape(layout, name) for name in names]
    slices, pos = [], 0
    for shape in shapes:
        slices.append(slice(pos, pos + math.prod(shape)))
        pos += math.prod(shape)
    buffer = _pack(layout, scores, pos)
    return CompiledPyMCModel(
        dims={name: tuple(dims[name]) for name in names},
        compiled_logp_func=logp_c,
        compiled_expand_func=expand_c,
        initial_point_func=functools.partial(initial_point, layout),
        shared_data={},
        shared_var_keys={},
        user_data=buffer,
        n_expanded=pos,
        shape_info=(names, slices, shapes),
        logp_func=None,
        expand_func=None,
        _n_dim=layout.n_dim,
        _shapes=dict(zip(names, shapes, strict=True)),
        # A pandas Index, as nutpie's own compile passes: a plain list must hold only text.
        _coords={name: pd.Index(list(values)) for name, values in coords.items()},
        reparameterized_names=[],
    )
