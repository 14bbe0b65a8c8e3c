"""Exact (non-MCMC) posterior of the ``"separate"`` model, vectorised over many groups.

One group has θ ~ Beta(a, b), q0 ~ Beta(a0, b0) (or a known value), q1 ~ Beta(a1, b1) (or
known), and k ~ Bin(n, p), p = θ q1 + (1 − θ)(1 − q0), tn ~ Bin(m0, q0), tp ~ Bin(m1, q1).
Every array argument broadcasts over groups; the priors are the same for all groups.

Labelling designs (``design=``). ``"stratified"`` (default; Lee et al.): m0, m1 fixed by
design. ``"random"``: humans labelled a random subset of the judged items (n, k count the
unlabelled ones), so the truth counts are data too, m1 ~ Bin(m0 + m1, θ); their factor
θ^m1 (1 − θ)^m0 turns θ's Beta(a, b) prior into Beta(a + m1, b + m0), per group, and
everything below runs with that prior (``_Problem.theta_prior`` holds per-group arrays).
Under the random design m0 = 0 or m1 = 0 is a valid outcome: such a group's q keeps its
prior and the group takes the exact mixture. :func:`test_set_theta_draws` turns posterior
draws into draws of the test-set θ (the share truly correct among the evaluation's items).

Public functions
----------------
:func:`exact_theta_interval`
    θ only: mean, sd, median and equal-tailed interval (the exact mixture, or quadrature).
:func:`exact_posterior`
    Mean, sd, median and equal-tailed interval of θ, q0 and q1.
:func:`exact_marginals`
    The marginal posteriors as :class:`Marginal` objects (CDF and quantiles at any point),
    and that of J = q0 + q1 − 1 under the flat θ prior (:func:`_youden_marginal`).
:func:`exact_draws`
    I.i.d. joint draws of (θ, q0, q1) from the posterior.
:func:`test_set_theta_draws`
    Draws of the test-set θ from draws of (θ, q0, q1) (random or stratified design).

Algorithm
---------
Write P ~ Beta(k + 1, n − k + 1) (the binomial likelihood of p, normalised) and Q0, Q1 for
the calibration-only Beta posteriors Beta(a0 + tn, b0 + m0 − tn), Beta(a1 + tp, b1 + m1 − tp).
With θ fixed, p = (1 − θ)(1 − q0) + θ q1, so the posterior density of θ is

    π(θ | data) ∝ π(θ) · g_θ(0),   g_θ = density of D_θ = (1 − θ)(1 − Q0) + θ Q1 − P,

a convolution of three independent, scaled Betas evaluated at one point. ``g_θ(0)`` is
computed by tensor Gauss-Hermite quadrature over two of the three variables — nodes in
normal-score space, ``x = F⁻¹(Φ(z))``, which makes the integrand smooth and gives spectral
convergence — with the density of the third evaluated where the constraint puts it. The
evaluated one is the *widest* of the three (scaled by 1, 1 − θ, θ) at that θ, so the
integrand is smooth at the node spacing even when n ≫ m or m ≫ n. θ lives on a grid that
is first located (a coarse pass over a box bounding θ = (p + q0 − 1) / J, then the region
within 25 nats of the maximum) and then refined; the CDF is Simpson's cumulative integral,
interpolated by cubic Hermite polynomials with the density as slope (4th order).

The marginal of q0 is f0(x) ∫ f1(q1) ∫₀¹ π(θ) f_P(θ q1 + (1 − θ)(1 − x)) dθ dq1: the θ
integral by Gauss-Legendre on the part of [0, 1] where f_P is not negligible (which handles
the θ ∈ [0, 1] bounds exactly), the q1 integral by Gauss-Hermite, and x on a located grid as
for θ. Likewise q1.

Exact mixture: augmenting the test items with X (truly correct) and Y1 (of those, judged
correct) makes the model conjugate, so the posterior is a finite mixture of independent Betas
over (X, Y1) (:func:`_latent`). Groups with at most 20,000 latent states ((n + 1)(min(k,
n − k) + 1): k or n − k small, small n) use it — exact to rounding — and so do groups whose
test counts contradict their calibration (:func:`_conflict` > 3 sd: no θ in [0, 1] fits
both, where the quadrature's nodes miss the mass) up to 2·10⁶ states; beyond that such a
group (> 6 sd) is refused with a ValueError rather than mis-computed.

Draws (:func:`exact_draws`): exact rejection sampling, vectorised over all groups and draws.
Inside a box of the calibration Betas where J ≥ J_c > 0: p, q0, q1 from their Betas, θ =
(p − 1 + q0) / J, kept with probability 1[0 ≤ θ ≤ 1] J_c / J · π(θ) / max π (about 3 in 5 on
typical data); outside it (a tail, where J may reach 0): q from the restricted Betas, θ | q
from the flat-prior conditional, kept with probability M(q) / max f_P · π(θ) / max π. With an
informative θ prior (the random design's) a pilot per group may pick a second sampler instead:
θ from its prior, q0, q1 from their Betas, kept with probability f_P(p) / max f_P (where the
prior is narrower than the test likelihood's say on θ: many labelled items, few unlabelled).
Groups where rejection keeps under 1 in 1000 proposals (conflicting data, a θ prior far from
the likelihood) take i.i.d. draws from the exact mixture instead.

Accuracy (tests/core/test_exact.py): quantiles within 1e-4 of the quadrature of
``tests/references/reference_posterior.py``, of the exact mixture
(``tests/references/brute_grid.LatentMixture``) and of a brute-force 3-D grid on the cases
tested (n ≫ m, rare positives, tiny samples, θ near 0 and 1, J near 0, k = 0, k = n, tn = 0,
known q, informative priors).
Weak calibration (a calibration Beta with min(a, b) ≤ 3, or < 10 and wider than P,
:func:`_weak_mixture_groups`): :func:`exact_marginals` takes θ from its exact mixture
(:func:`_mixture_theta_marginal`), as :func:`exact_theta_interval` does, up to 2·10⁸ latent
states; the quadrature straddled the step of a Beta piled at 0 or 1 (tp = m1 at n = 20,000:
1.8e-3; tests/core/test_exact_edge.py). The q marginals of such groups stay on quadrature.
Known limitation: a θ prior with 1 < a < 2 (or 1 < b < 2) has an infinite slope at 0 (or 1)
that the θ grid does not resolve when the posterior has mass there (quantile error 1.0e-3 at
Beta(1.1, 1.1), 1.1e-4 at Beta(1.5, 1.5), for k/n = 0.4, m = 100; the mixture path is exact).
Requires θ-prior parameters ≥ 1, calibration-posterior Beta parameters ≥ 1 (bounded
densities) and calibration items of both kinds in every group (m0, m1 > 0) unless the
q is known; ``judge_better_than_chance`` is not supported.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from numbers import Real
from typing import NamedTuple

import numpy as np
from scipy import integrate, special

from bayesjudge.core._validation import check_design

__all__ = [
    "ExactPosterior",
    "ExactSummary",
    "Marginal",
    "data_conflict",
    "exact_draws",
    "exact_marginals",
    "exact_posterior",
    "exact_theta_interval",
    "hdi",
    "test_set_theta_draws",
]

_Z_RANGE = 8.5  # normal scores bounding the box that locates the mass (tails ~1e-17)
_DROP = 25.0  # nats below the maximum where the grid is cut (mass outside < 1e-10)
_COARSE = 25  # points of a locating pass
_CHUNK = 512  # groups per block (bounds the memory of the (G, T, N, N) arrays)


class ExactSummary(NamedTuple):
    """Posterior summary of one variable, arrays over the groups."""

    mean: np.ndarray
    sd: np.ndarray
    median: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


class ExactPosterior(NamedTuple):
    """Summaries of θ, q0 and q1 (each an :class:`ExactSummary`) and the interval probability."""

    theta: ExactSummary
    q0: ExactSummary
    q1: ExactSummary
    ci_prob: float


# ----------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class _Beta:
    """Beta(a, b) per group (arrays), or a known value (``known`` not None, sd 0)."""

    a: np.ndarray
    b: np.ndarray
    known: float | None = None

    @property
    def sd(self) -> np.ndarray:
        if self.known is not None:
            return np.zeros_like(self.a)
        s = self.a + self.b
        return np.sqrt(self.a * self.b / (s * s * (s + 1)))

    @property
    def mean(self) -> np.ndarray:
        if self.known is not None:
            return np.full_like(self.a, self.known)
        return self.a / (self.a + self.b)

    def nodes(self, z: np.ndarray) -> np.ndarray:
        """Quantiles at normal scores z: shape (G, len(z)), or z of shape (G, N)."""
        if self.known is not None:
            return np.full((self.a.size, z.shape[-1]), self.known)
        z = np.broadcast_to(z, (self.a.size, z.shape[-1]))
        a = np.broadcast_to(self.a[:, None], z.shape)
        b = np.broadcast_to(self.b[:, None], z.shape)
        out = np.empty(z.shape)
        # Upper tail by symmetry, betaincinv(a, b, Φ(z)) = 1 − betaincinv(b, a, Φ(−z)),
        # so that far-tail nodes keep their precision.
        low = z <= 0
        out[low] = special.betaincinv(a[low], b[low], special.ndtr(z[low]))
        out[~low] = 1 - special.betaincinv(b[~low], a[~low], special.ndtr(-z[~low]))
        return out

    def logpdf(self, x: np.ndarray, idx=slice(None)) -> np.ndarray:
        """Log density at x; ``idx`` picks the groups of x's leading axis."""
        shape = (-1,) + (1,) * (x.ndim - 1)
        a1, b1 = (self.a[idx] - 1).reshape(shape), (self.b[idx] - 1).reshape(shape)
        norm = special.betaln(self.a[idx], self.b[idx]).reshape(shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = a1 * np.log(x) + b1 * np.log1p(-x) - norm
        # Inside [0, 1] a nan is 0 · log 0 at an end whose exponent is 0: the density's
        # limit there is finite, exp(−norm) times the other factor, which is 1 at that end
        # (a Beta(1, b) has density b at 0). At an end with exponent > 0 the log is −inf
        # (density 0). Outside [0, 1] the logs give nan: density 0.
        # (Every x outside [0, 1] gives a nan, so without one there is nothing to mend.)
        bad = np.isnan(out)
        if bad.any():
            inside = (x >= 0) & (x <= 1)
            out = np.where(bad & inside, np.broadcast_to(-norm, out.shape), out)
            out[~inside] = -np.inf
        return out

    def logmax(self) -> np.ndarray:
        """Log of the density at its mode (a, b ≥ 1)."""
        s = self.a + self.b
        mode = np.where(s > 2, (self.a - 1) / np.maximum(s - 2, 1e-300), 0.5)
        return self.logpdf(mode[:, None])[:, 0]

    def take(self, idx) -> _Beta:
        return _Beta(self.a[idx], self.b[idx], self.known)


def _prior_pair(name: str, value, *, allow_known: bool):
    if allow_known and isinstance(value, Real) and not isinstance(value, bool):
        v = float(value)
        if not 0.0 <= v <= 1.0:
            raise ValueError(f"{name} = {value!r}: a known value must lie in [0, 1].")
        return v
    try:
        a, b = (float(x) for x in value)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a pair (a, b) of Beta parameters"
            f"{' or a known value in [0, 1]' if allow_known else ''}; got {value!r}."
        ) from None
    if not (np.isfinite(a) and np.isfinite(b) and a > 0 and b > 0):
        raise ValueError(f"{name} = ({a!r}, {b!r}): Beta parameters must be finite and > 0.")
    return a, b


def _counts(k, n, tn, m0, tp, m1):
    arrays = np.broadcast_arrays(*(np.asarray(v) for v in (k, n, tn, m0, tp, m1)))
    names = ("k", "n", "tn", "m0", "tp", "m1")
    out = []
    for name, arr in zip(names, arrays, strict=True):
        if arr.dtype.kind not in "iuf" or not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must hold finite whole numbers; got {arr!r}.")
        if np.any(arr < 0) or np.any(arr != np.round(arr)):
            raise ValueError(f"{name} must hold whole numbers >= 0; got {arr!r}.")
        out.append(arr.astype(float))
    k, n, tn, m0, tp, m1 = out
    for hits, total, hn, tname in ((k, n, "k", "n"), (tn, m0, "tn", "m0"), (tp, m1, "tp", "m1")):
        if np.any(hits > total):
            raise ValueError(f"{hn} must not exceed {tname}.")
    return arrays[0].shape, [v.reshape(-1) for v in (k, n, tn, m0, tp, m1)]


@dataclass(frozen=True)
class _Problem:
    """The groups of one call: flattened, with their three Beta factors and the θ prior.

    ``theta_prior`` holds the Beta parameters (a, b) of θ per group (arrays): the prior the
    caller gave, updated by the labelled items' truth counts to Beta(a + m1, b + m0) under
    the random labelling design. ``mixture_only`` flags groups whose q has no calibration
    item of its kind (m0 = 0 or m1 = 0 under the random design): only the exact mixture
    integrates them.
    """

    shape: tuple
    P: _Beta
    Q0: _Beta
    Q1: _Beta
    theta_prior: tuple[np.ndarray, np.ndarray]
    mixture_only: np.ndarray

    @property
    def size(self) -> int:
        return self.P.a.size

    @property
    def flat_prior(self) -> bool:
        """True when θ's prior is Beta(1, 1) in every group."""
        a, b = self.theta_prior
        return bool(np.all(a == 1.0) and np.all(b == 1.0))

    def theta_ab(self, g: int) -> tuple[float, float]:
        """θ's Beta prior parameters of group g, as floats."""
        return float(self.theta_prior[0][g]), float(self.theta_prior[1][g])

    def take(self, idx) -> _Problem:
        a, b = self.theta_prior
        return _Problem((), self.P.take(idx), self.Q0.take(idx), self.Q1.take(idx),
                        (a[idx], b[idx]), self.mixture_only[idx])  # fmt: skip


def _problem(
    k, n, tn, m0, tp, m1, theta_prior, q0_prior, q1_prior, design: str = "stratified"
) -> _Problem:
    """Validate the counts and priors of one call and build its :class:`_Problem`.

    ``design="random"``: the labelled items' truth counts are data, m1 ~ Bin(m0 + m1, θ), so
    θ's prior becomes Beta(a + m1, b + m0) per group; a group without labelled items of one
    kind (m0 = 0 or m1 = 0) is allowed and routed to the exact mixture.
    """
    design = check_design(design, "design")
    shape, (k, n, tn, m0, tp, m1) = _counts(k, n, tn, m0, tp, m1)
    if k.size == 0:
        raise ValueError("the counts hold no group (empty arrays).")
    a, b = _prior_pair("theta_prior", theta_prior, allow_known=False)
    if a < 1 or b < 1:
        raise ValueError(
            f"theta_prior = ({a}, {b}): the exact engine needs Beta parameters >= 1 (a bounded "
            f"density); use MCMC for a U-shaped prior."
        )
    qs = []
    mixture_only = np.zeros(k.size, bool)
    for name, prior, hits, total in (
        ("q0_prior", q0_prior, tn, m0),
        ("q1_prior", q1_prior, tp, m1),
    ):
        pr = _prior_pair(name, prior, allow_known=True)
        if isinstance(pr, float):
            bad = (hits != total) if pr == 1.0 else (hits != 0) if pr == 0.0 else None
            if bad is not None and np.any(bad):
                raise ValueError(f"{name} = {pr:g} is contradicted by the calibration counts.")
            qs.append(_Beta(np.ones_like(k), np.ones_like(k), pr))
        else:
            if design == "random":
                # No labelled item of this kind: q keeps its prior, which only the exact
                # mixture integrates accurately (routed there, refused beyond its size).
                mixture_only |= total == 0
            elif np.any(total == 0):
                size, kind = ("m0", "incorrect") if name == "q0_prior" else ("m1", "correct")
                raise ValueError(
                    f"{size} = 0 in group(s) {np.flatnonzero(total == 0)[:5].tolist()} (flat "
                    f"index): without truly {kind} calibration items {name[:2]} is left to its "
                    f"prior, which the exact engine does not integrate accurately; give every "
                    f"group calibration items of both kinds, fix {name[:2]} to a known value, "
                    f"or use MCMC."
                )
            qa, qb = pr[0] + hits, pr[1] + total - hits
            if np.any(qa < 1) or np.any(qb < 1):
                raise ValueError(
                    f"{name} = {pr} with these calibration counts gives a Beta posterior with a "
                    f"parameter < 1 (an unbounded density), which the exact engine does not "
                    f"support; use a prior with parameters >= 1 or MCMC."
                )
            qs.append(_Beta(qa, qb))
    P = _Beta(k + 1.0, n - k + 1.0)
    if design == "random":  # the factor θ^m1 (1 − θ)^m0 of the labelled items' truth counts
        prior = (a + m1, b + m0)
    else:
        prior = (np.full(k.size, a), np.full(k.size, b))
    return _Problem(shape, P, qs[0], qs[1], prior, mixture_only)


# ----------------------------------------------------------------------------- θ density


@functools.lru_cache(maxsize=32)
def _hermite(nodes: int):
    z, w = np.polynomial.hermite_e.hermegauss(nodes)
    return z, w / w.sum()


@functools.lru_cache(maxsize=32)
def _legendre(nodes: int):
    return np.polynomial.legendre.leggauss(nodes)


def _log_theta_prior(theta: np.ndarray, prior) -> np.ndarray:
    """Log Beta(a, b) density at θ; a, b arrays over θ's leading axis (groups) or scalars."""
    a, b = (np.asarray(v, dtype=float) for v in prior)
    if np.all(a == 1) and np.all(b == 1):
        return np.zeros_like(theta)
    shape = (-1,) + (1,) * (np.ndim(theta) - 1)
    a, b = (v.reshape(shape) if v.ndim else v for v in (a, b))
    with np.errstate(divide="ignore"):
        return special.xlogy(a - 1, theta) + special.xlog1py(b - 1, -theta) - special.betaln(a, b)


def _logsumexp_w(terms: np.ndarray, logw: np.ndarray, axes) -> np.ndarray:
    t = terms + logw
    top = np.max(t, axis=axes, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(t - top), axis=axes, keepdims=True)) + top
    return np.squeeze(out, axis=axes)


def _conflict(prob: _Problem) -> np.ndarray:
    """How far the test share contradicts the calibration, in standard deviations, per group.

    The residual of the constraint (1 − θ)(1 − q0) + θ q1 = p at the factors' means and the
    rough θ̂ = (p + q0 − 1)/J clipped to [0, 1], over its sd: 0 where θ̂ lies inside [0, 1],
    large where no θ reconciles the test share with the calibration (k = 0 while the
    calibration says p ≥ 1 − q0 ≈ 0.3, say). Measured: ≤ 0.8 on the validated cases, ≥ 4.6
    where the quadrature failed.
    """
    facs = {"P": prob.P, "Q0": prob.Q0, "Q1": prob.Q1}
    mu = {k: f.mean for k, f in facs.items()}
    sd = {k: f.sd for k, f in facs.items()}
    jhat = mu["Q0"] + mu["Q1"] - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        th = np.where(jhat > 0, (mu["P"] + mu["Q0"] - 1) / jhat, 0.5)
    th = np.clip(np.nan_to_num(th, nan=0.5), 0.0, 1.0)
    resid = (1 - th) * (1 - mu["Q0"]) + th * mu["Q1"] - mu["P"]
    var = sd["P"] ** 2 + ((1 - th) * sd["Q0"]) ** 2 + (th * sd["Q1"]) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.nan_to_num(np.abs(resid) / np.sqrt(var), nan=0.0, posinf=np.inf)


def data_conflict(k, n, tn, m0, tp, m1) -> np.ndarray:
    """How far each group's test counts contradict its calibration counts, in sds.

    The residual of (1 − θ)(1 − q0) + θ q1 = p at the calibration's and the test share's
    posterior means (flat priors) and the rough θ̂ = (p + q0 − 1)/J clipped to [0, 1], over
    its sd: 0 where θ̂ lies in [0, 1]; above ~3 no θ reconciles the counts, the posterior has
    separated modes (θ near 0 with q0 near 1, θ near 1 with q1 near 1) and MCMC chains may
    all sit in a negligible one. The exact engine takes such groups from their exact mixture.

    Examples
    --------
    >>> from bayesjudge.core.exact import data_conflict
    >>> data_conflict([400, 0], 786, 36, 48, 11, 11).round(1)  # k = 0: θ cannot be ≥ 0
    array([0. , 4.2])
    """
    prob = _problem(k, n, tn, m0, tp, m1, (1.0, 1.0), (1.0, 1.0), (1.0, 1.0), "stratified")
    return _conflict(prob).reshape(prob.shape)


def _shifted_nodes(prob: _Problem, nodes, only=None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Gauss-Hermite nodes (values, log-weights), each (G, N), for P, Q0 and Q1.

    ``only`` names the one factor whose nodes are wanted (default all three).
    The normal scores are shifted to where each factor has its mass *given* the constraint
    (1 − θ)(1 − q0) + θ q1 = p at a rough θ̂ (Gaussian conditioning): where the factors
    conflict — e.g. k = 0 while the calibration says p ≥ 1 − q0 ≈ 0.1 — the mass of the
    integrand lies in a factor's tail, which unshifted nodes would miss. The weights carry
    the importance ratio φ(z + δ) / φ(z), so the rule stays exact for the unshifted factor.
    """
    z, w = nodes
    facs = {"P": prob.P, "Q0": prob.Q0, "Q1": prob.Q1}
    mu = {k: f.mean for k, f in facs.items()}
    sd = {k: f.sd for k, f in facs.items()}
    jhat = mu["Q0"] + mu["Q1"] - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        th = np.where(jhat > 0, (mu["P"] + mu["Q0"] - 1) / jhat, 0.5)
    th = np.clip(np.nan_to_num(th, nan=0.5), 0.0, 1.0)
    alpha = {"P": -np.ones_like(th), "Q0": -(1 - th), "Q1": th}
    resid = -((1 - th) * (1 - mu["Q0"]) + th * mu["Q1"] - mu["P"])
    var = sum(alpha[k] ** 2 * sd[k] ** 2 for k in facs)
    out = {}
    for k, f in facs.items():
        if only is not None and k != only:
            continue
        delta = np.clip(alpha[k] * sd[k] * resid / var, -6.0, 6.0)[:, None]
        zz = z[None, :] + delta
        out[k] = (f.nodes(zz), np.log(w)[None, :] - delta * z[None, :] - delta**2 / 2)
    return out


def _take_nodes(shifted: dict, idx) -> dict:
    return {k: (v[0][idx], v[1][idx]) for k, v in shifted.items()}


_PAIRS = 512  # (group, θ) pairs per pass of the θ density: (pairs, N, N) arrays fit in cache


def _log_theta_density(prob: _Problem, shifted: dict, theta: np.ndarray) -> np.ndarray:
    """Log π(θ | data) up to a constant per group, at θ of shape (G, T).

    ``shifted`` holds the node values and log-weights of P, Q0, Q1 (:func:`_shifted_nodes`).
    At each θ the widest of P, (1 − θ) Q0 and θ Q1 is evaluated where the constraint puts
    it and the other two are integrated: a sum over their (N, N) nodes, taken in passes of
    ``_PAIRS`` (group, θ) pairs so that the (pairs, N, N) arrays stay in cache.
    """
    x = {k: v[0] for k, v in shifted.items()}
    lw = {k: v[1] for k, v in shifted.items()}
    scale = np.stack(
        [
            np.broadcast_to(prob.P.sd[:, None], theta.shape),
            (1 - theta) * prob.Q0.sd[:, None],
            theta * prob.Q1.sd[:, None],
        ]
    )
    choice = np.argmax(scale, axis=0)  # the widest factor is evaluated, the others integrated
    out = np.empty(theta.shape)
    # Which factor is evaluated, and which two are integrated (rows i, columns j).
    plan = ((prob.P, "Q0", "Q1"), (prob.Q0, "P", "Q1"), (prob.Q1, "P", "Q0"))
    for c, (beta, ni, nj) in enumerate(plan):
        g_all, t_all = np.nonzero(choice == c)
        for s in range(0, g_all.size, _PAIRS):
            g, t = g_all[s : s + _PAIRS], t_all[s : s + _PAIRS]
            th = theta[g, t][:, None]
            xi, xj = x[ni][g], x[nj][g]  # (K, N)
            # The evaluated factor's value is row[i] + col[j], and 1 − value is
            # row1[i] − col[j] (formed directly: its log stays accurate near 1).
            if c == 0:  # p = (1 − θ)(1 − q0) + θ q1
                row, col = (1 - th) * (1 - xi), th * xj
                row1, shift = 1 - row, 0.0
            elif c == 1:  # q0 = 1 − (p − θ q1) / (1 − θ)
                row1, col = xi / (1 - th), th * xj / (1 - th)
                row, shift = 1 - row1, -np.log1p(-th[:, 0])
            else:  # q1 = (p − (1 − θ)(1 − q0)) / θ
                row, col = xi / th, -(1 - th) * (1 - xj) / th
                row1, shift = 1 - row, -np.log(th[:, 0])
            out[g, t] = _log_node_sum(beta, g, row, row1, col, lw[ni][g], lw[nj][g]) + shift
    return out + _log_theta_prior(theta, prob.theta_prior)


def _log_node_sum(beta: _Beta, g, row, row1, col, lwi, lwj) -> np.ndarray:
    """Return log Σ_ij e^(lwi_i + lwj_j) f(row_i + col_j), f the density of ``beta``.

    ``g`` gives the group of each of the K pairs.

    ``row1`` is 1 − row (so that 1 − value = row1_i − col_j). Shapes (K, N); returns (K,).
    The value v enters as v / v_b and 1 − v as (1 − v) / (1 − v_b), v_b the point of the
    values' range [min row + min col, max row + max col] nearest the density's mode: as
    (a − 1) log v + (b − 1) log(1 − v) is concave, its largest value over the nodes is at
    most that at v_b, so the scaled terms are ≤ 0 (no overflow), the largest of them near 0
    (no underflow), and no pass over the (K, N, N) nodes looks for the largest term. The
    weights enter relative to their largest. A pair whose sum underflows or holds a nan (a
    value outside [0, 1], or 0 · log 0 at an end) is summed again in log space.
    """
    a1, b1 = beta.a[g] - 1, beta.b[g] - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        mode = np.where(a1 + b1 > 0, a1 / (a1 + b1), 0.5)
    vmin, vmax = row.min(1) + col.min(1), row.max(1) + col.max(1)
    rmin = row1.min(1) - col.max(1)  # the least 1 − v
    vb = np.clip(mode, np.maximum(vmin, 0.0), np.minimum(vmax, 1.0))
    # A zero exponent takes scale 1: its term is 0 · log(·) whatever the scale.
    sv, sr = np.where(a1 > 0, vb, 1.0)[:, None], np.where(b1 > 0, 1 - vb, 1.0)[:, None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        val = (row / sv)[:, :, None] + (col / sv)[:, None, :]
        rest = (row1 / sr)[:, :, None] - (col / sr)[:, None, :]
        if not np.all((vmin > 0) & (rmin > 0)):  # values outside [0, 1]: density 0 there
            np.maximum(val, 0.0, out=val)
            np.maximum(rest, 0.0, out=rest)
        np.log(val, out=val)
        np.log(rest, out=rest)
        val *= a1[:, None, None]
        rest *= b1[:, None, None]
        val += rest
        np.exp(val, out=val)
    mi, mj = np.max(lwi, 1, keepdims=True), np.max(lwj, 1, keepdims=True)
    wi, wj = np.exp(lwi - mi), np.exp(lwj - mj)
    total = np.einsum("kij,ki,kj->k", val, wi, wj)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(total) + mi[:, 0] + mj[:, 0]
        out += special.xlogy(a1, sv[:, 0]) + special.xlogy(b1, sr[:, 0])
    # Not (total > 1e-300): underflow (every node far in the tail, or outside [0, 1]) or nan
    # (0 · log 0 of a zero exponent at or beyond an end); a non-finite out: a zero scale.
    slow = ~(total > 1e-300) | ~np.isfinite(out)
    if slow.any():
        out[slow] = _log_node_sum_slow(beta, g[slow], row[slow], row1[slow], col[slow],
                                       lwi[slow], lwj[slow])  # fmt: skip
        return out - np.where(slow, 0.0, special.betaln(beta.a[g], beta.b[g]))
    return out - special.betaln(beta.a[g], beta.b[g])


def _log_node_sum_slow(beta: _Beta, g, row, row1, col, lwi, lwj) -> np.ndarray:
    """:func:`_log_node_sum` in log space, with the density's limits at the ends of [0, 1]."""
    val = row[:, :, None] + col[:, None, :]
    rest = row1[:, :, None] - col[:, None, :]
    a1, b1 = (beta.a[g] - 1)[:, None, None], (beta.b[g] - 1)[:, None, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        lf = a1 * np.log(val) + b1 * np.log(rest)
    # Outside [0, 1] the density is 0; at an end whose exponent is 0 the limit is finite
    # (0 · log 0 is nan): that factor contributes 1 there (see _Beta.logpdf).
    lf = np.where((val < 0) | (rest < 0), -np.inf, np.where(np.isnan(lf), 0.0, lf))
    terms = lf + lwi[:, :, None] + lwj[:, None, :]
    return _logsumexp_w(terms, 0.0, (1, 2)) - special.betaln(beta.a[g], beta.b[g])


def _theta_box(prob: _Problem) -> tuple[np.ndarray, np.ndarray]:
    """θ range bounding the mass: θ = (p + q0 − 1)/J at the corners of a quantile box."""
    zz = np.array([-_Z_RANGE, _Z_RANGE])
    p, q0, q1 = prob.P.nodes(zz), prob.Q0.nodes(zz), prob.Q1.nodes(zz)
    j_min = q0[:, 0] + q1[:, 0] - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = (p[:, 0] + q0[:, 0] - 1) / (q0[:, 0] + q1[:, 1] - 1)
        hi = (p[:, 1] + q0[:, 1] - 1) / (q0[:, 1] + q1[:, 0] - 1)
    ok = j_min > 0
    lo = np.where(ok, np.clip(lo, 0.0, 1.0), 0.0)
    hi = np.where(ok, np.clip(hi, 0.0, 1.0), 1.0)
    lo, hi = _within_prior(prob, lo, hi)
    hi = np.maximum(hi, np.minimum(lo + 1e-9, 1.0))
    return lo, hi


def _prior_box(prob: _Problem) -> np.ndarray:
    """(G, 2): θ's prior quantiles at the normal scores ∓_Z_RANGE ([0, 1] for a flat prior).

    An end within 5 % of the box's width of 0 (or 1) is moved there: a grid starting at
    θ = 2e-9 instead of 0 (a Beta(2, 2) prior) put the log density's singularity inside its
    first cell, and the 0.5 % quantile 4e-3 off.
    """
    a, b = prob.theta_prior
    box = _Beta(a, b).nodes(np.array([-_Z_RANGE, _Z_RANGE]))
    width = box[:, 1] - box[:, 0]
    box[:, 0] = np.where(box[:, 0] < 0.05 * width, 0.0, box[:, 0])
    box[:, 1] = np.where(1 - box[:, 1] < 0.05 * width, 1.0, box[:, 1])
    return box


def _within_prior(prob: _Problem, lo: np.ndarray, hi: np.ndarray):
    """Cut [lo, hi] to θ's prior box (informative: the random design's Beta(a + m1, b + m0)).

    Where the two do not overlap (data and prior in conflict by more than 17 sd), the range
    between them, where the posterior then lies.
    """
    if prob.flat_prior:
        return lo, hi
    box = _prior_box(prob)
    new_lo, new_hi = np.maximum(lo, box[:, 0]), np.minimum(hi, box[:, 1])
    apart = new_lo >= new_hi
    return np.where(apart, new_hi, new_lo), np.where(apart, new_lo, new_hi)


# ----------------------------------------------------------------------------- 1-D grids


@dataclass(frozen=True)
class Marginal:
    """A marginal posterior on a grid, per group: CDF, quantiles, mean and sd.

    Attributes
    ----------
    grid : numpy.ndarray
        Shape (*groups, T): increasing grid points per group (a single repeated value for a
        known q).
    density, cdf_values : numpy.ndarray
        Normalised density and CDF at the grid points.
    """

    grid: np.ndarray
    density: np.ndarray
    cdf_values: np.ndarray

    @property
    def known(self) -> np.ndarray:
        """True for groups whose variable is known (a point mass)."""
        return self.grid[..., -1] == self.grid[..., 0]

    def _moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance from the cubic Hermite CDF, integrated exactly per cell.

        E X = b − ∫ F and E (X − c)² = (b − c)² − ∫ 2 (x − c) F with c the grid's first point,
        b its last. On a cell [x0, x0 + h] with CDF values c0, c1 and densities d0, d1 the
        cubic gives ∫ F = h ((c0 + c1) / 2 + h (d0 − d1) / 12) and, in s = (x − x0) / h,
        ∫₀¹ s F ds = 3 c0 / 20 + 7 c1 / 20 + h (d0 / 30 − d1 / 20). This uses the density as
        the CDF's slope (4th order) where Simpson on the density alone under-resolves a
        density piled against 0 or 1.
        """
        g, c, d = self.grid, self.cdf_values, self.density
        h = np.diff(g, axis=-1)
        c0, c1, d0, d1 = c[..., :-1], c[..., 1:], d[..., :-1], d[..., 1:]
        first = (c0 + c1) / 2 + h * (d0 - d1) / 12  # ∫₀¹ F ds per cell
        moment = 0.15 * c0 + 0.35 * c1 + h * (d0 / 30 - d1 / 20)  # ∫₀¹ s F ds per cell
        x0 = g[..., :-1] - g[..., :1]
        span = g[..., -1] - g[..., 0]
        mean0 = span - np.sum(h * first, axis=-1)
        second = span**2 - 2 * np.sum(h * (x0 * first + h * moment), axis=-1)
        return mean0 + g[..., 0], np.maximum(second - mean0**2, 0.0)

    def mean(self) -> np.ndarray:
        """Posterior mean per group."""
        return np.where(self.known, self.grid[..., 0], self._moments()[0])

    def sd(self) -> np.ndarray:
        """Posterior standard deviation per group."""
        return np.where(self.known, 0.0, np.sqrt(self._moments()[1]))

    def cdf(self, x) -> np.ndarray:
        """P(X ≤ x), x broadcast against the groups (leading axes) — e.g. shape (*groups,)."""
        x = np.asarray(x, dtype=float)
        shape = np.broadcast_shapes(x.shape, self.grid.shape[:-1])
        x = np.broadcast_to(x, shape)
        grid = np.broadcast_to(self.grid, (*shape, self.grid.shape[-1]))
        cdf = np.broadcast_to(self.cdf_values, grid.shape)
        dens = np.broadcast_to(self.density, grid.shape)
        j = np.clip((grid <= x[..., None]).sum(-1) - 1, 0, grid.shape[-1] - 2)
        out = _hermite_eval(grid, cdf, dens, j, x)
        out = np.where(x < grid[..., 0], 0.0, np.where(x >= grid[..., -1], 1.0, out))
        return np.clip(out, 0.0, 1.0)

    def quantile(self, prob) -> np.ndarray:
        """X with P(X ≤ x) = prob, for prob of shape (..., *groups) or broadcastable."""
        prob = np.asarray(prob, dtype=float)
        if np.any((prob < 0) | (prob > 1)):
            raise ValueError("probabilities must lie in [0, 1].")
        return _invert(self, prob)[0]


def _invert(m: Marginal, prob: np.ndarray):
    """Quantiles of ``m`` at ``prob`` (checked), with the density and its slope there.

    Returns (x, f(x), f'(x)) of the cubic Hermite CDF on the bracketing cell (f and f' are
    its first and second derivatives; ``nan`` where the cell has zero width, a known value).
    """
    gshape = m.grid.shape[:-1]
    shape = np.broadcast_shapes(prob.shape, gshape)
    prob = np.broadcast_to(prob, shape)
    t = m.grid.shape[-1]
    cdf = np.broadcast_to(m.cdf_values, (*shape, t))
    j = np.clip((cdf < prob[..., None]).sum(-1) - 1, 0, t - 2)
    # The bracketing cell's values by flat index into the (groups, t) tables: gathers of
    # the entries needed, not take_along_axis over the broadcast tables.
    at = np.broadcast_to(np.arange(0, int(np.prod(gshape)) * t, t).reshape(gshape), shape) + j
    grid, cdfv, dens = (np.ravel(v) for v in (m.grid, m.cdf_values, m.density))
    x0, x1 = grid[at], grid[at + 1]
    c0, c1 = cdfv[at], cdfv[at + 1]
    d0, d1 = dens[at], dens[at + 1]
    h = x1 - x0
    # The cubic Hermite CDF on the bracketing cell, in s = (x − x0) / h ∈ [0, 1]:
    # F(s) = c0 + a1 s + a2 s² + a3 s³; solved by safeguarded Newton.
    a1 = h * d0
    a2 = 3 * (c1 - c0) - h * (2 * d0 + d1)
    a3 = 2 * (c0 - c1) + h * (d0 + d1)
    with np.errstate(divide="ignore", invalid="ignore"):
        sv = np.clip(np.where(c1 > c0, (prob - c0) / (c1 - c0), 0.5), 0.0, 1.0)
    lo, hi = np.zeros_like(sv), np.ones_like(sv)
    for _ in range(60):
        f = c0 + sv * (a1 + sv * (a2 + sv * a3)) - prob
        lo = np.where(f < 0, sv, lo)
        hi = np.where(f >= 0, sv, hi)
        d = a1 + sv * (2 * a2 + 3 * sv * a3)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = sv - f / d
        # Non-strict bracket: once Newton reaches the root, sv is lo or hi itself, and a
        # strict test sent every later step to bisection (~40 iterations instead of ~5).
        new = np.where((step >= lo) & (step <= hi) & np.isfinite(step), step, (lo + hi) / 2)
        done = bool(np.all(np.abs(new - sv) <= 1e-12))  # then |error| ~1e-24 (quadratic)
        sv = new
        if done:
            break
    with np.errstate(divide="ignore", invalid="ignore"):
        density = (a1 + sv * (2 * a2 + 3 * sv * a3)) / h
        slope = (2 * a2 + 6 * a3 * sv) / (h * h)
    return x0 + sv * h, density, slope


def _hermite_eval(grid, cdf, dens, j, x, derivative=False):
    take = np.take_along_axis
    x0 = take(grid, j[..., None], -1)[..., 0]
    x1 = take(grid, j[..., None] + 1, -1)[..., 0]
    f0, f1 = take(cdf, j[..., None], -1)[..., 0], take(cdf, j[..., None] + 1, -1)[..., 0]
    d0, d1 = take(dens, j[..., None], -1)[..., 0], take(dens, j[..., None] + 1, -1)[..., 0]
    h = x1 - x0
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(h > 0, (x - x0) / h, 0.0)
    s2, s3 = s * s, s * s * s
    if derivative:
        with np.errstate(divide="ignore", invalid="ignore"):
            return (
                (6 * s2 - 6 * s) * f0 / h
                + (3 * s2 - 4 * s + 1) * d0
                + (6 * s - 6 * s2) * f1 / h
                + (3 * s2 - 2 * s) * d1
            )
    return (
        (2 * s3 - 3 * s2 + 1) * f0
        + (s3 - 2 * s2 + s) * h * d0
        + (3 * s2 - 2 * s3) * f1
        + (s3 - s2) * h * d1
    )


def _clustered(lo, hi, points, cluster):
    """``points`` increasing per group on [lo, hi], a third of them in ``cluster`` ∩ [lo, hi]."""
    t = np.linspace(0.0, 1.0, points)
    if cluster is None:
        return lo[:, None] + (hi - lo)[:, None] * t
    a = np.clip(cluster[0], lo, hi)
    b = np.clip(cluster[1], lo, hi)
    span = hi - lo
    extra = np.where(b - a > 1e-9 * span, 0.5, 0.0)  # cluster mass (uniform part has 1)
    knots_x = np.stack([lo, a, b, hi], 1)
    knots_r = np.stack([np.zeros_like(lo), (a - lo) / span, (b - lo) / span + extra,
                        1 + extra], 1) / (1 + extra)[:, None]  # fmt: skip
    j = np.clip((knots_r[:, None, :] <= t[None, :, None]).sum(-1) - 1, 0, 2)  # (G, T)
    r0 = np.take_along_axis(knots_r, j, 1)
    r1 = np.take_along_axis(knots_r, j + 1, 1)
    x0 = np.take_along_axis(knots_x, j, 1)
    x1 = np.take_along_axis(knots_x, j + 1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(r1 > r0, (t - r0) / (r1 - r0), 0.0)
    out = x0 + np.clip(frac, 0, 1) * (x1 - x0)
    out[:, 0], out[:, -1] = lo, hi
    return out


def _locate(
    logdens,
    lo,
    hi,
    points: int,
    coarse: int = _COARSE,
    rounds: int = 3,
    cluster=None,
    adapt: bool = False,
):
    """Grid of ``points`` per group over the region where logdens > max − _DROP.

    ``logdens(grid)`` takes a (G, T) grid. Coarse passes over [lo, hi] narrow the range until
    the region spans at least 8 coarse cells; the fine pass returns (grid, log density).
    With ``adapt`` the fine points follow the last coarse pass's density (:func:`_adapted`)
    instead of lying evenly over the region.
    """
    lo, hi = lo.astype(float).copy(), hi.astype(float).copy()
    steps = np.linspace(0.0, 1.0, coarse)
    todo = np.arange(lo.size)
    last_grid, last_ld = np.empty((lo.size, coarse)), np.empty((lo.size, coarse))
    for _ in range(rounds):
        if todo.size == 0:
            break
        grid = lo[todo, None] + (hi - lo)[todo, None] * steps
        ld = logdens(grid, todo, False)
        last_grid[todo], last_ld[todo] = grid, ld
        top = np.max(ld, axis=1, keepdims=True)
        inside = ld > top - _DROP
        first = np.argmax(inside, axis=1)
        last = coarse - 1 - np.argmax(inside[:, ::-1], axis=1)
        new_lo = grid[np.arange(todo.size), np.maximum(first - 1, 0)]
        new_hi = grid[np.arange(todo.size), np.minimum(last + 1, coarse - 1)]
        lo[todo], hi[todo] = new_lo, new_hi
        todo = todo[(last - first) < 8]
    if adapt and rounds > 0:
        grid = _adapted(lo, hi, last_grid, last_ld, points)
    else:
        grid = _clustered(lo, hi, points, cluster)
    return grid, logdens(grid, None, True)


_ADAPT_POWER = 0.2  # fine θ points spread as (density)^power of the coarse pass …
_ADAPT_EVEN = 0.2  # … with this share of them evenly over the region


def _adapted(lo, hi, coarse_grid, coarse_ld, points: int) -> np.ndarray:
    """``points`` per group on [lo, hi], spaced by the measure (1 − e) u / mean u + e.

    u = (density / max)^_ADAPT_POWER, the density interpolated (linearly in log) from the
    coarse pass (``coarse_grid``, ``coarse_ld``: evenly spaced, covering [lo, hi]) and e =
    _ADAPT_EVEN. A long tail within the 25-nat window (a skewed calibration Beta, e.g.
    specificity 18/20) no longer takes most of the points: on [0, 1] with the mass near 0.76,
    sd 0.04, 33 even points put the 97.5 % limit 1.5e-3 off.
    """
    aux = lo[:, None] + (hi - lo)[:, None] * np.linspace(0.0, 1.0, 8 * points)
    c0, step = coarse_grid[:, :1], coarse_grid[:, 1:2] - coarse_grid[:, :1]
    with np.errstate(divide="ignore", invalid="ignore"):
        pos = np.clip(np.nan_to_num((aux - c0) / step), 0, coarse_grid.shape[1] - 1)
    j = np.minimum(pos.astype(int), coarse_grid.shape[1] - 2)
    frac = pos - j
    take = np.take_along_axis
    # A zero density at an end (a θ prior with a > 1 at θ = 0) takes its neighbour's value:
    # the mass next to it can be large (a wide posterior near 0), not a tail.
    c_ld = coarse_ld.copy()
    for end, nxt in ((0, 1), (-1, -2)):
        c_ld[:, end] = np.where(np.isfinite(c_ld[:, end]), c_ld[:, end], c_ld[:, nxt])
    c_ld = np.where(np.isfinite(c_ld), c_ld, -1e300)
    ld = (1 - frac) * take(c_ld, j, 1) + frac * take(c_ld, j + 1, 1)
    top = np.max(ld, axis=1, keepdims=True)
    u = np.exp(_ADAPT_POWER * (ld - np.where(np.isfinite(top), top, 0.0)))
    u = (1 - _ADAPT_EVEN) * u / np.maximum(u.mean(1, keepdims=True), 1e-300) + _ADAPT_EVEN
    cum = np.concatenate([np.zeros((lo.size, 1)), np.cumsum((u[:, 1:] + u[:, :-1]) / 2, 1)], 1)
    cum /= cum[:, -1:]
    levels = np.linspace(0.0, 1.0, points)
    # The last aux point whose cum ≤ level, per group: a binary search per row (counting the
    # comparisons of all (G, 8 · points, points) pairs cost more than the θ density itself).
    k = np.stack([np.searchsorted(row, levels, side="right") for row in cum]) - 1
    k = np.clip(k, 0, aux.shape[1] - 2)  # (G, points)
    c_lo, c_hi = take(cum, k, 1), take(cum, k + 1, 1)
    x_lo, x_hi = take(aux, k, 1), take(aux, k + 1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(c_hi > c_lo, (levels - c_lo) / (c_hi - c_lo), 0.0)
    out = x_lo + np.clip(t, 0.0, 1.0) * (x_hi - x_lo)
    out[:, 0], out[:, -1] = lo, hi
    return out


def _normalised(grid: np.ndarray, logd: np.ndarray, log_cubic: bool = False) -> Marginal:
    """Normalise the density on the grid and integrate its CDF.

    Simpson's cumulative integral, or with ``log_cubic`` the cell integrals of a cubic in the
    log density (:func:`_log_cubic_cells`; Simpson where those are undefined).
    """
    top = np.max(logd, axis=-1, keepdims=True)
    d = np.exp(logd - top)
    cdf = integrate.cumulative_simpson(d, x=grid, axis=-1, initial=0.0)
    if log_cubic:
        cells = _log_cubic_cells(grid, logd - top)
        bad = ~np.isfinite(cells)
        cells[bad] = np.diff(cdf, axis=-1)[bad]
        cdf = np.concatenate([np.zeros_like(cdf[..., :1]), np.cumsum(cells, axis=-1)], axis=-1)
    total = cdf[..., -1:]
    return Marginal(grid=grid, density=d / total, cdf_values=cdf / total)


def _log_cubic_cells(grid: np.ndarray, ld: np.ndarray) -> np.ndarray:
    """∫ of exp(H) over each grid cell, H the cubic Hermite interpolant of the log density.

    Slopes are those of the quadratic through each point and its neighbours, so H is exact
    for a Gaussian (log-quadratic) or exponential density; 6-point Gauss-Legendre per cell.
    Unlike Simpson on the density itself, this stays accurate on wide cells in a tail where
    the density falls by several nats per cell. Cells whose slopes involve a log density of
    −inf come back as NaN (the caller uses Simpson there).
    """
    h = np.diff(grid, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.diff(ld, axis=-1) / h
        slope = np.empty_like(ld)
        slope[..., 1:-1] = (h[..., 1:] * d[..., :-1] + h[..., :-1] * d[..., 1:]) / (
            h[..., 1:] + h[..., :-1]
        )
        slope[..., 0] = ((2 * h[..., 0] + h[..., 1]) * d[..., 0] - h[..., 0] * d[..., 1]) / (
            h[..., 0] + h[..., 1]
        )
        slope[..., -1] = ((2 * h[..., -1] + h[..., -2]) * d[..., -1] - h[..., -1] * d[..., -2]) / (
            h[..., -1] + h[..., -2]
        )
        x, w = _legendre(6)
        s = ((x + 1) / 2)[:, None]  # (6, 1) against cells on the last axis
        l0, l1 = ld[..., :-1], ld[..., 1:]
        m0, m1 = h * slope[..., :-1], h * slope[..., 1:]
        l0_, l1_, m0_, m1_ = (v[..., None, :] for v in (l0, l1, m0, m1))
        H = ((2 * s**3 - 3 * s**2 + 1) * l0_ + (s**3 - 2 * s**2 + s) * m0_
             + (3 * s**2 - 2 * s**3) * l1_ + (s**3 - s**2) * m1_)  # fmt: skip
        H = np.minimum(H, np.maximum(l0, l1)[..., None, :] + 2.0)
        cells = h * np.sum((w / 2)[:, None] * np.exp(H), axis=-2)
    ok = np.isfinite(slope[..., :-1]) & np.isfinite(slope[..., 1:])
    ok &= np.isfinite(l0) & np.isfinite(l1)
    # Near a zero density at an end (θ^(a − 1) of the prior) the log density is singular,
    # log-cubic pieces fit it poorly and the density itself is smooth: Simpson there.
    for end, cells_near in ((0, slice(0, 5)), (-1, slice(-5, None))):
        ok[..., cells_near] &= np.isfinite(ld[..., end : end + 1] if end == 0 else ld[..., -1:])
    return np.where(ok, cells, np.nan)


def _point_mass(value: float, groups: int, points: int = 3) -> Marginal:
    grid = np.full((groups, points), value)
    cdf = np.ones_like(grid)
    cdf[:, 0] = 0.0
    return Marginal(grid=grid, density=np.zeros_like(grid), cdf_values=cdf)


# ----------------------------------------------------------------------------- latent counts

_LATENT_STATES = 20_000  # groups with at most this many latent states get the exact mixture
_LATENT_STATES_MAX = 2_000_000  # conflicting groups, and exact_draws' fallback (≤ ~0.5 s)
_LATENT_DROP = 45.0  # nats: mixture components below max − 45 (weight < 3e-20) are dropped
_MAX_PROPOSALS = 1e7  # expected proposals per group beyond which exact_draws gives up (~20 s)
_THETA_MIXTURE_STATES = 400_000  # exact_theta_interval: groups this small take the mixture
_WEAK_STATES_MAX = 200_000_000  # … and groups with a weak calibration Beta up to this size


@dataclass(frozen=True)
class _Mixture:
    """The posterior of one group as a mixture of independent Betas over latent counts.

    ``params[v]`` is (A, B) arrays over the mixture's components, or a known value.
    """

    weights: np.ndarray
    params: dict


def _latent_size(prob: _Problem) -> np.ndarray:
    """Upper bound of the number of latent states (X, Y1) per group: (n + 1)(min(k, n − k) + 1)."""
    k = prob.P.a - 1
    n = prob.P.a + prob.P.b - 2
    return (n + 1) * (np.minimum(k, n - k) + 1)


def _latent(prob: _Problem, g: int) -> _Mixture:
    """Exact posterior of group g as a finite mixture of independent Betas.

    Augment the n test items with X, the number truly correct, and Y1, those of them judged
    correct (so Y0 = k − Y1 of the n − X truly incorrect items are judged correct). Given
    (X, Y1) the model is conjugate: θ ~ Beta(a + X, b + n − X), q1 ~ Beta(a1' + Y1,
    b1' + X − Y1), q0 ~ Beta(a0' + n − X − Y0, b0' + Y0) with the calibration posteriors'
    parameters a', b'; the weight of (X, Y1) is the multinomial coefficient
    n! / (Y1! (X − Y1)! Y0! (n − X − Y0)!) times the three Beta-function values (a known q
    contributes q^s (1 − q)^f instead). Exact to rounding; the cost is the number of states.
    """
    k = round(float(prob.P.a[g]) - 1)
    n = round(float(prob.P.a[g] + prob.P.b[g]) - 2)
    x = np.arange(n + 1)
    lo, hi = np.maximum(0, k - n + x), np.minimum(x, k)
    cnt = hi - lo + 1
    X = np.repeat(x, cnt).astype(float)
    Y1 = (np.repeat(lo - (np.cumsum(cnt) - cnt), cnt) + np.arange(X.size)).astype(float)
    Y0 = k - Y1
    a, b = prob.theta_ab(g)
    gl = special.gammaln
    logw = special.betaln(a + X, b + n - X) - gl(Y1 + 1) - gl(X - Y1 + 1) - gl(Y0 + 1)
    logw -= gl(n - X - Y0 + 1)
    params = {"theta": (a + X, b + n - X)}
    for name, beta, succ, fail in (("q1", prob.Q1, Y1, X - Y1), ("q0", prob.Q0, n - X - Y0, Y0)):
        if beta.known is not None:
            logw += special.xlogy(succ, beta.known) + special.xlog1py(fail, -beta.known)
            params[name] = beta.known
        else:
            qa, qb = beta.a[g] + succ, beta.b[g] + fail
            logw += special.betaln(qa, qb)
            params[name] = (qa, qb)
    keep = logw > logw.max() - _LATENT_DROP
    w = np.exp(logw[keep] - logw.max())
    params = {v: p if isinstance(p, float) else (p[0][keep], p[1][keep]) for v, p in params.items()}
    return _Mixture(w / w.sum(), params)


_CLUSTER_SD = 9.0  # a component's mass lies within this many sds of its mean (Beta tails)
_CLUSTER_MASS = 1e-12  # clusters of components with less mass get no grid points
_CLUSTER_POINTS = 9  # grid points of a cluster at least


def _latent_marginal(mix: _Mixture, var: str, points: int) -> Marginal:
    """Marginal of ``var`` from the mixture: located grid, exact density and CDF (1 group).

    The grid is located on the clusters of components (:func:`_clusters`), each with the
    density-adapted placement of :func:`_adapted`: a search over an even grid of the whole
    range missed a mode narrower than its spacing (k = n = 5000 against a specificity of
    36/48: q0's mass at 0.009, sd 0.002, and the grid on [0.25, 1]), and one even grid over
    two modes far apart (θ at 0 and a bump of ~1e-10 mass at 1) left the main one to a single
    cell (a negative mean). Density and CDF are exact at the grid points.
    """
    params = mix.params[var]
    if isinstance(params, float):
        return _point_mass(params, 1)
    pairs, inverse = np.unique(np.stack(params, 1), axis=0, return_inverse=True)
    weights = np.bincount(inverse.ravel(), weights=mix.weights)  # θ: one component per X
    A, B = pairs[:, :1], pairs[:, 1:]
    logw = np.log(weights)[:, None] - special.betaln(A, B)

    def logdens(x, idx, final):  # x: (1, T)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = logw + special.xlogy(A - 1, x) + special.xlog1py(B - 1, -x)
        return _logsumexp_w(terms, 0.0, (0,))[None, :]

    parts = []
    for lo, hi, size in _clusters(weights, A[:, 0], B[:, 0], points):
        parts.append(_locate(logdens, np.array([lo]), np.array([hi]), size, adapt=True))
    grid = np.concatenate([g for g, _ in parts], axis=1)
    out = _mixture_on_grid(weights, A, B, grid, logdens(grid, None, True))
    # The mixture's mean and sd are exact; a grid that missed where the mass lies (a mode
    # narrower than the located grid's cells) shows in them: then the grid is the mixture's
    # own quantiles (costlier: a few incomplete-Beta sweeps over all components).
    s_ = A + B
    mean = float(weights @ (A / s_)[:, 0])
    sd = np.sqrt(max(float(weights @ (A * (A + 1) / (s_ * (s_ + 1)))[:, 0]) - mean**2, 0.0))
    got_mean, got_var = out._moments()
    if not (abs(got_mean[0] - mean) <= 1e-4 * sd and abs(np.sqrt(got_var[0]) - sd) <= 1e-3 * sd):
        grid = _mixed_grid(weights, A, B, points)[None, :]
        out = _mixture_on_grid(weights, A, B, grid, logdens(grid, None, True))
    return out


_EVEN_SHARE = 0.3  # _mixed_grid: share of the grid spread evenly in x (the rest in probability)


def _mixed_grid(weights, A, B, points: int) -> np.ndarray:
    """``points`` grid points for a mixture whose mass the located grid missed.

    Spaced evenly in λ u + (1 − λ) v, u the position in x between the mixture's Φ(∓8)
    quantiles and v the normal score Φ⁻¹(F(x)) scaled to [0, 1] (λ = _EVEN_SHARE): no cell
    holds more than a 1 / ((1 − λ)(points − 1)) share of the normal-score range (a narrow mode
    gets its points) nor spans more than 1 / (λ (points − 1)) of the range (a low plateau
    between two modes is resolved too, where quantiles alone left it to one cell).
    """
    z = np.linspace(-8.0, 8.0, points)
    q = _mixture_quantiles(weights, A, B, special.ndtr(z))
    even = np.linspace(q[0], q[-1], points)
    f_even = weights @ special.betainc(A, B, even[None, :])
    with np.errstate(divide="ignore"):
        z_even = np.clip(special.ndtri(np.clip(f_even, 0.0, 1.0)), -8.0, 8.0)
    x = np.concatenate([q, even])
    zx = np.concatenate([z, z_even])
    order = np.argsort(x, kind="stable")
    x, zx = x[order], np.maximum.accumulate(zx[order])
    span = max(q[-1] - q[0], 1e-300)
    phi = _EVEN_SHARE * (x - q[0]) / span + (1 - _EVEN_SHARE) * (zx + 8.0) / 16.0
    grid = np.interp(np.linspace(phi[0], phi[-1], points), phi, x)
    return np.maximum.accumulate(grid)


def _mixture_on_grid(weights, A, B, grid, ld) -> Marginal:
    """Return the mixture Σ w Beta(A, B) on ``grid`` (1, T) with log density ``ld``."""
    cdf = weights @ special.betainc(A, B, grid)
    cdf = np.maximum.accumulate(np.clip(cdf, 0.0, 1.0))
    cdf[0], cdf[-1] = 0.0 if grid[0, 0] == 0 else cdf[0], 1.0 if grid[0, -1] == 1 else cdf[-1]
    return Marginal(grid=grid, density=np.exp(ld), cdf_values=cdf[None, :])


def _mixture_quantiles(weights, A, B, probs: np.ndarray) -> np.ndarray:
    """Quantiles at ``probs`` of the mixture Σ w Beta(A, B) (A, B (L, 1)), strictly increasing.

    Newton's method on the exact CDF with its exact density, kept in a bisection bracket.
    """
    lo, hi = np.zeros(probs.shape), np.ones(probs.shape)
    x = np.full(probs.shape, 0.5)
    log_norm = np.log(weights)[:, None] - special.betaln(A, B)
    for _ in range(200):
        cdf = weights @ special.betainc(A, B, x[None, :])
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = log_norm + special.xlogy(A - 1, x) + special.xlog1py(B - 1, -x)
        pdf = np.exp(terms).sum(0)
        lo, hi = np.where(cdf < probs, x, lo), np.where(cdf < probs, hi, x)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = x - (cdf - probs) / pdf
        ok = (step > lo) & (step < hi) & np.isfinite(step)
        new = np.where(ok, step, (lo + hi) / 2)
        if np.all(np.abs(new - x) <= 1e-15 * np.maximum(x, 1e-300)):
            x = new
            break
        x = new
    return np.maximum.accumulate(x)


def _clusters(weights, A, B, points: int) -> list[tuple[float, float, int]]:
    """Return (lo, hi, grid points) of each cluster of a Beta mixture's components.

    A component's range is its mean ± _CLUSTER_SD sds (within [0, 1]); overlapping ranges
    form a cluster. Clusters of mass below _CLUSTER_MASS get no points; the others share
    ``points`` in proportion to mass^0.2 (at least _CLUSTER_POINTS each, the heaviest ones
    first when there are more clusters than that allows), the heaviest taking the rest.
    """
    s = A + B
    mean, sd = A / s, np.sqrt(A * B / (s * s * (s + 1)))
    lo = np.clip(mean - _CLUSTER_SD * sd, 0.0, 1.0)
    hi = np.clip(mean + _CLUSTER_SD * sd, 0.0, 1.0)
    order = np.argsort(lo, kind="stable")
    lo, hi, w = lo[order], hi[order], weights[order]
    reach = np.maximum.accumulate(hi)
    start = np.flatnonzero(np.concatenate([[True], lo[1:] > reach[:-1]]))
    stop = np.append(start[1:], lo.size)
    found = [(lo[a], reach[b - 1], float(w[a:b].sum())) for a, b in zip(start, stop, strict=True)]
    total = sum(m for *_, m in found)
    kept = sorted((c for c in found if c[2] >= _CLUSTER_MASS * total), key=lambda c: -c[2])
    kept = kept[: max(points // _CLUSTER_POINTS, 1)]
    if len(kept) == 1:
        return [(kept[0][0], kept[0][1], points)]
    share = np.array([m for *_, m in kept]) ** 0.2
    size = np.maximum(np.floor(points * share / share.sum()), _CLUSTER_POINTS).astype(int)
    size[0] = points - size[1:].sum()
    return sorted((a, b, int(n)) for (a, b, _), n in zip(kept, size, strict=True))


def _latent_theta_weights(prob: _Problem, g: int) -> tuple[int, np.ndarray]:
    """Weights of θ's exact mixture for group g: θ ~ Σ_X W_X Beta(a + X, b + n − X).

    The weight of X sums those of the states (X, Y1) of :func:`_latent`. Its log splits as
    c(X) + A(Y1) + C(X − Y1): with Y0 = k − Y1 and Z = X − Y1, the multinomial coefficient is
    n! / (Y1! Y0! Z! (n − k − Z)!) and the calibration Beta functions are
    Γ(a1' + Y1) Γ(b1' + Z) / Γ(a1' + b1' + X) and Γ(a0' + n − k − Z) Γ(b0' + Y0) /
    Γ(a0' + b0' + n − X) (a known q gives powers of q instead). So the sum over Y1 is the
    convolution of exp A (length k + 1) with exp C (length n − k + 1): one ``np.convolve`` of
    positive terms (no cancellation), cost (k + 1)(n − k + 1) multiply-adds in C. Returns the
    first X kept and the normalised weights of X, X + 1, … (the X whose weight exceeds
    max · e^−45 lie in one run from the first to the last kept).
    """
    k = round(float(prob.P.a[g]) - 1)
    n = round(float(prob.P.a[g] + prob.P.b[g]) - 2)
    a, b = prob.theta_ab(g)
    x = np.arange(n + 1.0)
    y1, z = x[: k + 1], x[: n - k + 1]
    lf = special.gammaln(x + 1)  # log i!
    log_alpha = -lf[: k + 1] - lf[k::-1]  # −log Y1! − log Y0!
    log_gamma = -lf[: n - k + 1] - lf[n - k :: -1]  # −log Z! − log (n − k − Z)!
    c = special.betaln(a + x, b + n - x)
    q1, q0 = prob.Q1, prob.Q0
    if q1.known is not None:  # q1^Y1 (1 − q1)^Z
        log_alpha += special.xlogy(y1, q1.known)
        log_gamma += special.xlog1py(z, -q1.known)
    else:
        a1, b1 = float(q1.a[g]), float(q1.b[g])
        log_alpha += special.gammaln(a1 + y1)
        log_gamma += special.gammaln(b1 + z)
        c -= special.gammaln(a1 + b1 + x)
    if q0.known is not None:  # q0^(n − k − Z) (1 − q0)^Y0
        log_alpha += special.xlog1py(k - y1, -q0.known)
        log_gamma += special.xlogy(n - k - z, q0.known)
    else:
        a0, b0 = float(q0.a[g]), float(q0.b[g])
        log_alpha += special.gammaln(b0 + k - y1)
        log_gamma += special.gammaln(a0 + n - k - z)
        c -= special.gammaln(a0 + b0 + n - x)
    logw = c + _log_convolve(log_alpha, log_gamma, c)
    keep = np.flatnonzero(logw > logw.max() - _LATENT_DROP)
    w = np.exp(logw[keep[0] : keep[-1] + 1] - logw.max())
    return int(keep[0]), w / w.sum()


def _log_convolve(la: np.ndarray, lg: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Log-convolution: log Σ_y exp(la[y] + lg[X − y]) for X = 0 … len(la) + len(lg) − 2.

    Accurate wherever c[X] + result is within reach of its maximum.

    ``np.convolve`` of exp(la − max) and exp(lg − max) underflows (terms below e^−745) at X
    far from the convolution's own peak, where c[X] can make the weight large again (n in
    the thousands with a flat θ posterior: a 97.5 % limit was 7e-3 off). Exponential tilting
    fixes that: with la + λy and lg + λz the result shifts by λX exactly, and λ = c'(X0)
    puts the tilted peak near X0. A value counts where the scaled sum exceeds e^−700 (the
    underflowed terms are then < e^−36 of it); X not yet covered get the next tilt.
    """
    y, z = np.arange(la.size), np.arange(lg.size)
    out = np.full(la.size + lg.size - 1, np.nan)
    lam = 0.0
    for _ in range(64):
        at, gt = la + lam * y, lg + lam * z
        ma, mg = at.max(), gt.max()
        conv = np.convolve(np.exp(at - ma), np.exp(gt - mg))
        with np.errstate(divide="ignore"):
            lc = np.log(conv)
        good = np.isnan(out) & (lc > -700.0)
        out[good] = (lc + ma + mg - lam * np.arange(out.size))[good]
        todo = np.flatnonzero(np.isnan(out))
        if todo.size == 0:
            break
        if lam != 0.0 and not good.any():  # no progress at todo[0]: a state of no weight
            out[todo[0]] = -np.inf
            todo = todo[1:]
            if todo.size == 0:
                break
        x0 = int(todo[0])
        lo_, hi_ = max(x0 - 1, 0), min(x0 + 1, c.size - 1)
        lam = float(c[hi_] - c[lo_]) / max(hi_ - lo_, 1)
    return np.where(np.isnan(out), -np.inf, out)


def _mixture_theta_summary(prob: _Problem, groups: np.ndarray, probs: np.ndarray):
    """Mean, sd and quantiles at ``probs`` of θ for the given groups, from the exact mixture.

    θ ~ Σ_X W_X Beta(a + X, b + n − X) (:func:`_latent_theta_weights`). The CDF is summed
    with the recurrence I_x(u, v) = I_x(u + 1, v − 1) + t(u, v), t = x^u (1 − x)^(v − 1) /
    (u B(u, v)), which gives, for weights on X = lo … hi with cumulative sums C,

        F(x) = I_x(a + hi, b + n − hi) + Σ_{j = lo}^{hi − 1} C_j t(a + j, b + n − j):

    positive terms (no cancellation) and one incomplete Beta call per evaluation. Quantiles
    by Newton's method on F with its exact density, safeguarded by bisection, to 1e-13.
    Mean and sd are closed-form. Returns (mean, sd, quantiles (len(probs), groups)).
    """
    parts = [(g, *_latent_theta_weights(prob, g)) for g in groups]
    # Each group's window is padded to a width that depends on that group alone (the next
    # power of two), and a chunk holds groups of one width: a group's sums, and so its result,
    # are the same bit for bit whichever other groups share the call.
    padded = np.array([max(8, 1 << (w.size - 1).bit_length()) for _, _, w in parts], dtype=int)
    order = np.argsort(padded, kind="stable")
    mean, sd = np.empty(len(parts)), np.empty(len(parts))
    quant = np.empty((probs.size, len(parts)))
    start = 0
    while start < len(parts):  # chunks of one padded width (bounded memory)
        width = int(padded[order[start]])
        stop = start + 1
        while (
            stop < len(parts)
            and padded[order[stop]] == width
            and (stop - start + 1) * width <= 1_000_000
        ):
            stop += 1
        sel = order[start:stop]
        G = sel.size
        n = np.array([prob.P.a[parts[i][0]] + prob.P.b[parts[i][0]] - 2 for i in sel])[:, None]
        a, b = (v[[parts[i][0] for i in sel]][:, None] for v in prob.theta_prior)
        lo = np.array([parts[i][1] for i in sel])[:, None]
        w = np.zeros((G, width))
        for r, i in enumerate(sel):
            w[r, : parts[i][2].size] = parts[i][2]
        size = np.array([parts[i][2].size for i in sel])[:, None]
        j = lo + np.arange(width)  # X of each column (padding: weight 0)
        alpha, beta = a + j, b + n - np.minimum(j, n)
        total = a + b + n
        mean[sel] = np.sum(w * alpha, 1) / total[:, 0]
        second = np.sum(w * alpha * (alpha + 1), 1) / (total * (total + 1))[:, 0]
        sd[sel] = np.sqrt(np.maximum(second - mean[sel] ** 2, 0.0))
        log_norm = -special.betaln(alpha, beta)
        hi = lo + size - 1
        # t(a + j, b + n − j) = x f_j(x) / (a + j), f_j the density of component j: one exp.
        cum_t = np.where(np.arange(width)[None, :] < size - 1, np.cumsum(w, 1) / alpha, 0.0)
        top_a, top_b = (a + hi)[:, 0].astype(float), (b + n - hi)[:, 0].astype(float)

        def cdf_pdf(x, _ln=log_norm, _al=alpha - 1, _be=beta - 1, _ct=cum_t, _w=w, _ta=top_a,
                    _tb=top_b):  # fmt: skip
            # x: (P, G) inside (0, 1), so the logs and the exponents' products are finite.
            f = np.exp(_ln + _al * np.log(x)[..., None] + _be * np.log1p(-x)[..., None])
            cdf = special.betainc(_ta, _tb, x) + x * np.einsum("pgl,gl->pg", f, _ct)
            return cdf, np.einsum("pgl,gl->pg", f, _w)

        target = np.broadcast_to(probs[:, None], (probs.size, G))
        guess = mean[sel] + sd[sel] * special.ndtri(target)
        x = np.clip(guess, 1e-300, 1 - 1e-16)
        low, high = np.zeros_like(x), np.ones_like(x)
        # Each quantile stops at its own convergence, so a group's result does not depend on
        # which other groups share the call (a subset of a study reproduces it bit for bit).
        active = np.ones(x.shape, dtype=bool)
        for _ in range(100):
            cdf, pdf = cdf_pdf(x)
            under = cdf < target
            low, high = np.where(under, x, low), np.where(under, high, x)
            with np.errstate(divide="ignore", invalid="ignore"):
                step = x - (cdf - target) / pdf
            # Non-strict bracket: at the root x is ``low`` or ``high`` itself.
            ok = (step >= low) & (step <= high) & np.isfinite(step)
            new = np.clip(np.where(ok, step, (low + high) / 2), 1e-300, 1 - 2**-53)
            moved = np.abs(new - x) > 1e-13
            x = np.where(active, new, x)
            active &= moved
            if not active.any():
                break
        quant[:, sel] = x
        start = stop
    return mean, sd, quant


# ----------------------------------------------------------------------------- q marginals


def _log_q_density(sub: _Problem, which: str, x: np.ndarray, other_nodes, prange, theta_nodes):
    """Log posterior density of q0 (which="q0") or q1 at x (G, T), up to a constant.

    ``other_nodes``: (values, log-weights) of the other q; ``prange``: (G, 2) box of P.
    """
    own = sub.Q0 if which == "q0" else sub.Q1
    P = sub.P
    y, logw = other_nodes  # (G, N)
    if sub.flat_prior:
        outer = _log_m_flat_sum(P, x, y, logw, which)
        if np.all(np.isfinite(np.max(outer, axis=1))):
            return outer + own.logpdf(x)
        # Underflow of the CDF difference (data in extreme conflict): quadrature below.
    xq, yq = x[:, :, None], y[:, None, :]  # (G, T, N)
    q0, q1 = (xq, yq) if which == "q0" else (yq, xq)
    c = 1 - q0  # p at θ = 0
    jj = q0 + q1 - 1  # p = c + J θ
    # θ range where f_P(c + J θ) is not negligible: p within the box of P.
    plo, phi = prange[:, 0][:, None, None], prange[:, 1][:, None, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        t1, t2 = (plo - c) / jj, (phi - c) / jj
    tlo = np.clip(np.where(jj != 0, np.minimum(t1, t2), 0.0), 0.0, 1.0)
    thi = np.clip(np.where(jj != 0, np.maximum(t1, t2), 1.0), 0.0, 1.0)
    # … and where θ's prior is not negligible (a narrow prior: the random design's
    # Beta(a + m1, b + m0), where P's range alone can be all of [0, 1]).
    box = _prior_box(sub)
    plo_t, phi_t = box[:, 0][:, None, None], box[:, 1][:, None, None]
    cut_lo, cut_hi = np.maximum(tlo, plo_t), np.minimum(thi, phi_t)
    apart = cut_lo >= cut_hi  # no overlap: the prior's density there is negligible anyway
    tlo, thi = np.where(apart, tlo, cut_lo), np.where(apart, thi, cut_hi)
    tx, tw = theta_nodes
    half = (thi - tlo) / 2
    th = (tlo + thi)[..., None] / 2 + half[..., None] * tx  # (G, T, N, M)
    p = c[..., None] + jj[..., None] * th
    lf = P.logpdf(p.reshape(p.shape[0], -1), slice(None)).reshape(p.shape)
    lf = lf + _log_theta_prior(th, sub.theta_prior)
    with np.errstate(divide="ignore"):
        lf = lf + np.log(half)[..., None]
    inner = _logsumexp_w(lf, np.log(tw), (3,))  # log M(x, y): (G, T, N)
    outer = _logsumexp_w(inner, logw[:, None, :], (2,))
    return outer + own.logpdf(x)


def _cdf_sf(a, b, x, median):
    """Beta CDF and survival function at x (a, b, median (G, 1); x (G, M)).

    One incomplete Beta call per point: the CDF below the median, the survival function
    above, the other as 1 − value (exact to rounding where it is used, see
    :func:`_log_m_flat`).

    The survival function is I_{1−x}(b, a): scipy's ``betaincc`` costs 4-7 times as much
    (1.3 µs against 0.2-0.3 µs at a, b in the hundreds). Where x < 1/2 the rounding of
    1 − x (≤ 2⁻⁵³ relative) changes the tail value by ≤ 1.3e-13 relative (measured on
    Beta(401, 601), (51, 951), (19701, 301) to 8.5 sd), what the rounding of x itself does.
    """
    a, b = np.broadcast_to(a, x.shape), np.broadcast_to(b, x.shape)
    low = x <= median
    val = np.empty(x.shape)
    val[low] = special.betainc(a[low], b[low], x[low])
    high = ~low
    val[high] = special.betainc(b[high], a[high], 1 - x[high])
    return np.where(low, val, 1 - val), np.where(low, 1 - val, val)


_M_GROUPS = 64  # groups per pass of _log_m_flat_sum: its (groups, T, N) arrays fit in cache


def _log_m_flat_sum(P: _Beta, x: np.ndarray, y: np.ndarray, logw: np.ndarray, which: str):
    """Return log Σ_j e^(logw_j) M(x_t, y_j), (G, T): the other q's nodes y (G, N) integrated.

    M = (F_P(q1) − F_P(1 − q0)) / J as in :func:`_log_m_flat`, summed in linear space (a
    weighted sum of positive terms: no exponential or logarithm per node). With G(z) = F_P(z)
    below P's median and −S_P(z) above it, and I(z) = [z above the median], each CDF
    difference is (G(u) − G(v)) + (I(u) − I(v)): two points on one side differ by their CDF
    (or survival) values alone, which keeps the tails' precision as :func:`_log_m_flat` does.
    Groups with a node-pair spacing below 1e-12 or a sum below 1e-280 (near underflow: data
    in extreme conflict) are summed by :func:`_log_m_flat` in log space instead.
    """
    a, b = P.a[:, None], P.b[:, None]
    median = (P.a / (P.a + P.b))[:, None]
    # The grid side t and the node side j: J = pt_t − pj_j, difference H(pt_t) − H(pj_j).
    pt, pj = (1 - x, y) if which == "q0" else (x, 1 - y)
    side = []
    for pts in (pt, pj):
        cdf, sf = _cdf_sf(a, b, pts, median)
        above = pts > median
        side.append((np.where(above, -sf, cdf), above.astype(float)))
    (gt, it), (gj, ij) = side
    w = np.exp(logw - np.max(logw, axis=1, keepdims=True))
    out = np.empty(x.shape)
    redo = np.zeros(x.shape[0], bool)
    for s in range(0, x.shape[0], _M_GROUPS):
        sl = slice(s, s + _M_GROUPS)
        den = pt[sl, :, None] - pj[sl, None, :]
        redo[sl] = np.min(np.abs(den), axis=(1, 2)) < 1e-12
        num = gt[sl, :, None] - gj[sl, None, :]
        num += it[sl, :, None] - ij[sl, None, :]
        with np.errstate(divide="ignore", invalid="ignore"):  # J = 0: redone below
            num /= den
        out[sl] = np.einsum("gtj,gj->gt", num, w[sl])
    redo |= ~(np.min(out, axis=1) >= 1e-280)  # underflow, or a nan
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(np.maximum(out, 0.0)) + np.max(logw, axis=1, keepdims=True)
    if redo.any():
        sub = P.take(redo)
        inner = _log_m_flat(sub, x[redo], y[redo], which)
        out[redo] = _logsumexp_w(inner, logw[redo][:, None, :], (2,))
    return out


def _log_m_flat(P: _Beta, x: np.ndarray, y: np.ndarray, which: str) -> np.ndarray:
    """Log ∫₀¹ f_P(θ q1 + (1 − θ)(1 − q0)) dθ = log [(F_P(q1) − F_P(1 − q0)) / J], (G, T, N).

    x (G, T) is the marginal's variable and y (G, N) the other q's nodes. CDF differences
    are taken on the lower or the upper tail, whichever keeps their precision.
    """
    a, b = P.a[:, None], P.b[:, None]
    upper_pts, lower_pts = (y, 1 - x) if which == "q0" else (x, 1 - y)  # q1 and c = 1 − q0
    median = (P.a / (P.a + P.b))[:, None]
    fu, su = _cdf_sf(a, b, upper_pts, median)
    fl, sl = _cdf_sf(a, b, lower_pts, median)
    if which == "q0":  # upper (G, N) on the last axis, lower (G, T) on the middle one
        fu, su, u = fu[:, None, :], su[:, None, :], upper_pts[:, None, :]
        fl, sl, v = fl[:, :, None], sl[:, :, None], lower_pts[:, :, None]
    else:
        fu, su, u = fu[:, :, None], su[:, :, None], upper_pts[:, :, None]
        fl, sl, v = fl[:, None, :], sl[:, None, :], lower_pts[:, None, :]
    median = (P.a / (P.a + P.b))[:, None, None]
    diff = np.where(np.minimum(u, v) > median, sl - su, fu - fl)
    jj = u - v
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = diff / jj
        tiny = np.abs(jj) < 1e-12
        if np.any(tiny):
            mid = np.broadcast_to((u + v) / 2, ratio.shape)
            dens = np.exp(P.logpdf(mid.reshape(mid.shape[0], -1)).reshape(mid.shape))
            ratio = np.where(tiny, dens, ratio)
        return np.log(np.maximum(ratio, 0.0))


# ----------------------------------------------------------------------------- public API


def _check_prob(ci_prob) -> float:
    if isinstance(ci_prob, bool) or not isinstance(ci_prob, Real) or not 0 < ci_prob < 1:
        raise ValueError(f"ci_prob must be a number in (0, 1); got {ci_prob!r}.")
    return float(ci_prob)


def _check_nodes(nodes, grid):
    for name, v, low in (("nodes", nodes, 2), ("grid", grid, 9)):
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < low:
            raise ValueError(f"{name} must be an integer >= {low}; got {v!r}.")
    if grid % 2 == 0:
        raise ValueError(f"grid must be odd (Simpson's rule); got {grid}.")


_COARSE_NODES = 5  # Gauss-Hermite nodes of the locating passes


def _theta_marginal(prob: _Problem, nodes: int, grid: int) -> Marginal:
    fine = _shifted_nodes(prob, _hermite(nodes))
    coarse = _shifted_nodes(prob, _hermite(min(nodes, _COARSE_NODES)))
    lo, hi = _theta_box(prob)

    def logdens(th, idx, final):
        sub = prob if final else prob.take(idx)
        shifted = fine if final else _take_nodes(coarse, idx)
        return _log_theta_density(sub, shifted, np.clip(th, 0.0, 1.0))

    g, ld = _locate(logdens, lo, hi, grid, adapt=True)
    return _normalised(g, ld, log_cubic=True)


def _q_marginal(prob: _Problem, which: str, nodes: int, grid: int, theta_nodes: int):
    beta = prob.Q0 if which == "q0" else prob.Q1
    if beta.known is not None:
        return _point_mass(beta.known, prob.size)
    other = "Q1" if which == "q0" else "Q0"
    fine = _split_nodes(prob, other, nodes)
    coarse = _shifted_nodes(prob, _hermite(min(nodes, _COARSE_NODES)), only=other)[other]
    gl_fine = _legendre(theta_nodes)
    gl_coarse = _legendre(min(theta_nodes, 12))
    zz = np.array([-_Z_RANGE, _Z_RANGE])
    prange = prob.P.nodes(zz)
    # The posterior of q lies between its calibration Beta and where θ = 0 (q0 = 1 − p) or
    # θ = 1 (q1 = p) puts it: when the test data conflict with the calibration (k = 0 with
    # specificity 0.7, or tn = 0 with k/n far below q1) its mass leaves the calibration box.
    implied = 1 - prange[:, ::-1] if which == "q0" else prange
    box = beta.nodes(zz)
    box = np.stack([np.minimum(box[:, 0], implied[:, 0]), np.maximum(box[:, 1], implied[:, 1])], 1)

    def logdens(x, idx, final):
        if final:
            return _log_q_density(prob, which, x, fine, prange, gl_fine)
        return _log_q_density(
            prob.take(idx), which, x, (coarse[0][idx], coarse[1][idx]), prange[idx], gl_coarse
        )

    # The marginal has an edge of P's width where θ reaches 0 (q0 = 1 − p) or 1 (q1 = p):
    # a third of the grid points go there when it lies inside the located range.
    plo, phi = prob.P.nodes(np.array([-6.0, 6.0])).T
    edge = (1 - phi, 1 - plo) if which == "q0" else (plo, phi)
    g, ld = _locate(logdens, box[:, 0], box[:, 1], grid, cluster=edge)
    return _normalised(g, ld)


def _split_nodes(prob: _Problem, name: str, nodes: int):
    """Nodes (values, log-weights), each (G, 3 · nodes), of the other q in a q marginal.

    Its integrand has a step of the width of P where θ reaches 0 or 1 (q1 = p, or
    1 − q0 = p): at q1 = p for the q0 marginal, at q0 = 1 − p for the q1 marginal. The
    normal-score axis [−8.5, 8.5] is split at that step (P's ±6 sd) and each piece gets
    Gauss-Legendre nodes with the normal density in the weights, so that the step is resolved
    however narrow P is.
    """
    beta = prob.Q1 if name == "Q1" else prob.Q0
    if beta.known is not None:
        return np.full((prob.size, 1), beta.known), np.zeros((prob.size, 1))
    plo, phi = prob.P.nodes(np.array([-6.0, 6.0])).T
    lo, hi = (plo, phi) if name == "Q1" else (1 - phi, 1 - plo)
    with np.errstate(divide="ignore"):
        zs = special.ndtri(special.betainc(beta.a[:, None], beta.b[:, None], np.stack([lo, hi], 1)))
    zs = np.clip(np.nan_to_num(zs, nan=0.0), -_Z_RANGE, _Z_RANGE)
    edges = np.concatenate([np.full((prob.size, 1), -_Z_RANGE), zs,
                            np.full((prob.size, 1), _Z_RANGE)], axis=1)  # fmt: skip
    x, w = _legendre(nodes)
    half = (edges[:, 1:] - edges[:, :-1]) / 2  # (G, 3)
    z = ((edges[:, 1:] + edges[:, :-1]) / 2)[:, :, None] + half[:, :, None] * x  # (G, 3, N)
    with np.errstate(divide="ignore"):
        logw = np.log(half)[:, :, None] + np.log(w) - z**2 / 2 - 0.5 * np.log(2 * np.pi)
    z, logw = z.reshape(prob.size, -1), logw.reshape(prob.size, -1)
    return beta.nodes(z), logw


def _blocks(prob: _Problem, func, skip=None, mapper=None) -> Marginal:
    """Run ``func(sub_problem)`` over blocks of groups and concatenate the Marginals (flat).

    Groups flagged in ``skip`` (a boolean mask) are left out of the blocks and come back as
    NaN rows, to be filled by the caller. ``mapper`` runs the blocks (see :func:`_run`).
    """
    idx = np.arange(prob.size) if skip is None else np.flatnonzero(~skip)
    chunks = [idx[s : s + _CHUNK] for s in range(0, idx.size, _CHUNK)]
    parts = _run([functools.partial(func, prob.take(c)) for c in chunks], mapper)
    return _assemble(prob.size, idx, parts)


def _assemble(size: int, idx: np.ndarray, parts: list) -> Marginal | None:
    """Concatenate the blocks' Marginals into rows ``idx`` of ``size`` rows (others NaN)."""
    if len(parts) == 1 and idx.size == size:
        return parts[0]
    if not parts:
        return None
    fields = {}
    for f in ("grid", "density", "cdf_values"):
        values = np.concatenate([getattr(m, f) for m in parts])
        full = np.full((size, values.shape[-1]), np.nan)
        full[idx] = values
        fields[f] = full
    return Marginal(**fields)


def _check_mapper(mapper):
    if mapper is not None and not callable(mapper):
        raise ValueError(
            f"mapper must be a map-like callable, mapper(function, blocks), such as "
            f"concurrent.futures.ThreadPoolExecutor(2).map, or None; got {mapper!r}."
        )
    return mapper


def _call(indexed):
    i, function = indexed
    return i, function()


def _run(calls: list, mapper=None) -> list:
    """Call each of ``calls`` (no arguments) through ``mapper`` (default: the builtin map).

    With a thread pool's map the blocks run in parallel (numpy's and scipy.special's array
    operations release the GIL); each block is computed exactly as it would be alone (the
    same groups in the same block), so the results do not depend on the mapper. Each result
    comes back with its block's index, so that a mapper that returns them out of order
    (``imap_unordered``) still gives each group its own; one that drops or repeats a block
    is an error.
    """
    if mapper is None or len(calls) <= 1:
        return [call() for call in calls]
    try:
        back = list(mapper(_call, list(enumerate(calls))))
        index = [i for i, _ in back]
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"mapper must call the function on every block and return its results, like the "
            f"builtin map (e.g. concurrent.futures.ThreadPoolExecutor(2).map); it failed: {err}"
        ) from None
    if sorted(index) != list(range(len(calls))):
        raise ValueError(
            f"mapper must return one result per block, like the builtin map; it returned "
            f"{len(back)} results for {len(calls)} blocks (blocks {sorted(set(index))[:10]})."
        )
    out = [None] * len(calls)
    for i, result in back:
        out[i] = result
    return out


def _weak_calibration(prob: _Problem) -> np.ndarray:
    """Flag groups with a calibration posterior Beta(a, b) of min(a, b) < 10.

    Few errors of one kind (tp = m1, tn = 0, m0 = 5, …): a Beta skewed or cut off at 0 or 1
    within reach of the θ density's quadrature. Measured θ quantile errors of the quadrature
    (12 nodes, 65 points) on random data, n = 1000-20,000: up to 1.7e-2 for these groups
    (4.2e-4 without tp = m1 or tn = 0), ≤ 4e-6 for the others.
    """
    out = np.zeros(prob.size, bool)
    for q in (prob.Q0, prob.Q1):
        if q.known is None:
            out |= np.minimum(q.a, q.b) < 10
    return out


def _theta_mixture_groups(prob: _Problem) -> np.ndarray:
    """Flag the groups whose θ summary :func:`exact_theta_interval` takes from the mixture.

    Up to ``_THETA_MIXTURE_STATES`` latent states (where the mixture costs about what the
    quadrature does), weak calibration (:func:`_weak_calibration`) up to
    ``_WEAK_STATES_MAX``, and conflicting groups as in :func:`_route`.
    """
    latent = _route(prob, _THETA_MIXTURE_STATES)
    return latent | (_weak_calibration(prob) & (_latent_size(prob) <= _WEAK_STATES_MAX))


_WEAK_MIN = 3.0  # calibration Betas with min(a, b) ≤ this: exact_marginals takes θ's mixture …
_WEAK_RATIO = 1.5  # … and weak ones (min(a, b) < 10), scaled, this many times wider than P


def _weak_mixture_groups(prob: _Problem) -> np.ndarray:
    """Flag the groups whose θ marginal :func:`exact_marginals` takes from θ's mixture.

    The θ density's quadrature evaluates the widest of P, (1 − θ) Q0, θ Q1 where the
    constraint puts it; a Beta piled at 0 or 1 (tp = m1: Beta(m1 + 1, 1)) is cut off there,
    a step that the nodes straddle. (14996, 20000, 95, 100, 100, 100): θ's density oscillated
    by ~30 % near its mode, the 2.5 % quantile 1.5e-3 off. Measured θ quantile errors of the
    quadrature against the mixture on 1259 random weak groups (n = 1000-20,000, m = 20-200,
    3 seeds): up to 2.5e-3 with min(a, b) ≤ 3 (any n); with 4 ≤ min(a, b) < 10, ≤ 5.1e-5
    where the weak Beta, scaled at the θ of the Betas' means, is at most ``_WEAK_RATIO``
    times as wide as P (1.1e-4 at 2, 1.6e-4 at 3). Flagged: min(a, b) ≤ 3, or weak and
    wider than that, up to ``_WEAK_STATES_MAX`` latent states (beyond, the quadrature).
    """

    def mean_sd(beta):
        s = beta.a + beta.b
        return beta.a / s, np.sqrt(beta.a * beta.b / (s * s * (s + 1)))

    p, sd_p = mean_sd(prob.P)
    q = {}
    for name, beta in (("q0", prob.Q0), ("q1", prob.Q1)):
        q[name] = (beta.known, 0.0) if beta.known is not None else mean_sd(beta)
    j = q["q0"][0] + q["q1"][0] - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = np.clip(np.nan_to_num((p + q["q0"][0] - 1) / j, nan=0.5), 0.0, 1.0)
    width = {"q0": (1 - theta) * q["q0"][1], "q1": theta * q["q1"][1]}
    out = np.zeros(prob.size, bool)
    for name, beta in (("q0", prob.Q0), ("q1", prob.Q1)):
        if beta.known is None:
            low = np.minimum(beta.a, beta.b)
            out |= (low <= _WEAK_MIN) | ((low < 10) & (width[name] > _WEAK_RATIO * sd_p))
    return out & (_latent_size(prob) <= _WEAK_STATES_MAX)


def _mixture_theta_marginal(prob: _Problem, g: int, points: int) -> Marginal:
    """θ's marginal of group g from its exact mixture Σ_X W_X Beta(a + X, b + n − X).

    The weights come from :func:`_latent_theta_weights` (a convolution, no (X, Y1) states);
    components of the outer 1e-16 of the weight are dropped (cost: the (components, points)
    exponentials). Density exact on a located grid; the CDF by the recurrence of
    :func:`_mixture_theta_summary`, F(x) = I_x(a + hi, b + n − hi) + x Σ_{j < hi} C_j f_j(x)
    / (a + j) (C the cumulative weights, f_j the components' densities): positive terms and
    one incomplete Beta per grid point.
    """
    lo, w = _latent_theta_weights(prob, g)
    c = np.cumsum(w)
    first = int(np.searchsorted(c, 1e-16))
    last = max(int(np.searchsorted(c, 1 - 1e-16)), first)
    lo, w = lo + first, w[first : last + 1]
    a, b = prob.theta_ab(g)
    n = float(prob.P.a[g] + prob.P.b[g] - 2)
    x = lo + np.arange(w.size, dtype=float)
    alpha, beta = (a + x)[:, None], (b + n - x)[:, None]
    with np.errstate(divide="ignore"):
        log_norm = np.log(w)[:, None] - special.betaln(alpha, beta)

    def log_components(t):  # (L, T): log W_j f_j(t); t^0 = 1 at t = 0 (a = 1, X = 0)
        with np.errstate(divide="ignore"):
            lt, l1t = np.log(np.maximum(t, 1e-300)), np.log1p(-np.minimum(t, 1 - 2**-53))
        return log_norm + (alpha - 1) * lt + (beta - 1) * l1t

    final_terms = []

    def logdens(t, idx, final):  # t: (1, T)
        terms = log_components(t[0])
        if final:
            final_terms.append(terms)
        return _logsumexp_w(terms, 0.0, (0,))[None, :]

    grid, _ = _locate(logdens, np.zeros(1), np.ones(1), points, adapt=True)
    f = np.exp(final_terms[-1])  # W_j f_j at the grid
    with np.errstate(divide="ignore", invalid="ignore"):  # a W_j that underflowed to 0
        cum = np.cumsum(w)[:-1, None] / (w[:-1, None] * alpha[:-1])  # C_j / (W_j (a + j))
        tail = np.nansum(cum * f[:-1], axis=0)
    cdf = special.betainc(alpha[-1], beta[-1], grid[0]) + grid[0] * tail
    cdf = np.maximum.accumulate(np.clip(cdf, 0.0, 1.0))
    cdf[0], cdf[-1] = 0.0 if grid[0, 0] == 0 else cdf[0], 1.0 if grid[0, -1] == 1 else cdf[-1]
    return Marginal(grid=grid, density=f.sum(0)[None, :], cdf_values=cdf[None, :])


_WEAK_CHUNK = 16  # weak-calibration groups per call of _mixture_theta_marginals (thread pool)


def _mixture_theta_marginals(prob: _Problem, groups, points: int) -> list[Marginal]:
    """:func:`_mixture_theta_marginal` of each of ``groups`` (a block for the thread pool).

    One group at a time: padding groups to a common number of components costs more (the
    (components, points) exponentials) than the calls save.
    """
    return [_mixture_theta_marginal(prob, g, points) for g in groups]


def _route(prob: _Problem, states_limit: int = _LATENT_STATES) -> np.ndarray:
    """Flag the groups that take the exact mixture.

    At most ``states_limit`` latent states, or test counts contradicting the calibration
    (:func:`_conflict` > 3 sd) with at most ``_LATENT_STATES_MAX``. A conflicting group
    (> 6 sd) beyond that raises a ValueError.
    """
    states, conflict = _latent_size(prob), _conflict(prob)
    latent = (states <= states_limit) | ((conflict > 3) & (states <= _LATENT_STATES_MAX))
    latent |= prob.mixture_only & (states <= _LATENT_STATES_MAX)
    alone = np.flatnonzero(prob.mixture_only & ~latent)
    if alone.size:
        raise ValueError(
            f"group(s) {alone[:5].tolist()} (flat index): no labelled item of one human "
            f"label (m0 = 0 or m1 = 0), so that q is left to its prior, which the exact "
            f"engine integrates only by its exact mixture, and these groups have too many "
            f"latent states ({states[alone[0]]:.3g} > {_LATENT_STATES_MAX:.0e}) for it; "
            f"label items of both kinds, fix that q to a known value, or use MCMC."
        )
    refused = np.flatnonzero((conflict > 6) & ~latent)
    if refused.size:
        raise ValueError(
            f"group(s) {refused[:5].tolist()} (flat index): the test counts contradict the "
            f"calibration counts by {conflict[refused[0]]:.0f} sd (no θ in [0, 1] fits both), "
            f"which the exact engine cannot integrate reliably at this size; check the data "
            f"(a judge that behaves differently on the test set?) or use MCMC."
        )
    return latent


def exact_marginals(
    k,
    n,
    tn,
    m0,
    tp,
    m1,
    *,
    theta_prior=(1.0, 1.0),
    q0_prior=(1.0, 1.0),
    q1_prior=(1.0, 1.0),
    variables=("theta", "q0", "q1"),
    design: str = "stratified",
    nodes: int = 12,
    grid: int = 65,
    theta_nodes: int = 24,
    q_nodes: int | None = None,
    q_grid: int = 81,
    youden_grid: int = 129,
    mapper=None,
) -> dict[str, Marginal]:
    """Marginal posteriors of θ, q0, q1 for many groups at once, without sampling.

    Parameters
    ----------
    k, n, tn, m0, tp, m1 : array_like of int
        Counts per group (broadcast together): k of n test items judged correct; tn of m0
        truly incorrect and tp of m1 truly correct calibration items judged right.
    theta_prior : (float, float), default (1, 1)
        Beta prior of θ (parameters ≥ 1).
    q0_prior, q1_prior : (float, float) or float, default (1, 1)
        Beta priors of q0 and q1, or known values.
    variables : sequence of {"theta", "q0", "q1"}
        Which marginals to compute.
    design : {"stratified", "random"}, default "stratified"
        How the labelled (calibration) items were chosen. ``"stratified"``: m0 and m1 fixed
        by design (Lee et al.), the truth counts carry no information on θ. ``"random"``: a
        random subset of the judged items was labelled (n, k then count the unlabelled items
        only), so m1 ~ Bin(m0 + m1, θ) is data and θ's prior becomes Beta(a + m1, b + m0);
        a group without labelled items of one kind (m0 = 0 or m1 = 0) is allowed there (its
        q keeps its prior) and integrated by the exact mixture.
    nodes : int, default 12
        Gauss-Hermite nodes per integrated variable.
    grid : int, default 65
        Odd number of grid points of each marginal (after locating its mass).
    theta_nodes : int, default 24
        Gauss-Legendre nodes of the θ integral inside the q marginals with a non-flat θ prior
        (with the flat prior that integral is a difference of Beta CDFs).
    q_nodes : int, optional
        Gauss-Legendre nodes per piece (3 pieces) of the other q inside a q marginal; default
        12 with the flat θ prior, 24 otherwise (with a Beta(20, 20) θ prior and the
        docstring's data, 12 nodes left a q0 quantile error of 1.2e-4, 24 nodes 5e-6).
    q_grid : int, default 81
        Odd number of grid points of the q marginals.
    youden_grid : int, default 129
        Odd number of grid points of the youden marginal (J = q0 + q1 − 1; ``variables``
        may name ``"youden"`` with the flat θ prior under the stratified design only, see
        :func:`_youden_marginal`).
    mapper : callable, optional
        Runs the blocks of groups (512 groups a block), called like the builtin ``map``:
        ``mapper(function, blocks)``; e.g. ``concurrent.futures.ThreadPoolExecutor(2).map``
        runs them on two threads (numpy and scipy release the GIL; ``bj.fit`` does so).
        Default: one after another. The results do not depend on it (each block is
        computed as it would be alone).

    Returns
    -------
    dict of str to Marginal
        With ``.cdf(x)``, ``.quantile(prob)``, ``.mean()``, ``.sd()``; arrays over the groups.

    Examples
    --------
    >>> from bayesjudge.core.exact import exact_marginals
    >>> m = exact_marginals(400, 1000, 70, 100, 90, 100, variables=("theta",))
    >>> round(float(m["theta"].quantile(0.5)), 3)
    0.163

    A random labelling design: of 2000 judged items a random 200 were labelled (60 truly
    correct); k = 738 of the n = 1800 unlabelled ones were judged correct. The truth counts
    also inform θ: the 95 % interval narrows from 0.17 to 0.10 wide.

    >>> counts = (738, 1800, 112, 140, 54, 60)
    >>> for design in ("stratified", "random"):
    ...     m = exact_marginals(*counts, variables=("theta",), design=design)["theta"]
    ...     print(design, m.quantile([0.025, 0.975]).round(3))
    stratified [0.21  0.383]
    random [0.252 0.352]

    The judge's Youden index J = q0 + q1 − 1 (flat θ prior), with its 95 % interval:

    >>> j = exact_marginals(400, 1000, 70, 100, 90, 100, variables=("youden",))["youden"]
    >>> round(float(j.mean()), 3), j.quantile([0.025, 0.975]).round(3)
    (0.586, array([0.482, 0.687]))
    """
    _check_nodes(nodes, grid)
    mapper = _check_mapper(mapper)
    prob = _problem(k, n, tn, m0, tp, m1, theta_prior, q0_prior, q1_prior, design)
    if q_nodes is None:
        q_nodes = 12 if prob.flat_prior else 24
    _check_nodes(q_nodes, q_grid)
    bad = [v for v in variables if v not in ("theta", "q0", "q1", "youden")]
    if bad:
        raise ValueError(f"variables must be among 'theta', 'q0', 'q1', 'youden'; got {bad}.")
    _check_nodes(nodes, youden_grid)
    if "youden" in variables and not prob.flat_prior:
        raise ValueError(
            "variables: the 'youden' marginal needs the flat θ prior Beta(1, 1) under the "
            "stratified design; with another θ prior take J = q0 + q1 − 1 from exact_draws."
        )
    # Groups with few latent states (k or n − k small, small n) get the exact mixture, and so
    # do groups whose test data contradict their calibration (the quadrature's nodes miss
    # where the mass lies: k = 0 of 30,000 with specificity 70/100 put q1's median at 0.003
    # instead of 0.894); beyond the mixture's size such groups are refused, not mis-computed.
    latent = _route(prob)
    mixtures = {g: _latent(prob, g) for g in np.flatnonzero(latent)}
    out = {}
    wanted = [
        v for v in ("theta", "q0", "q1") if v in variables or _youden_needs(prob, v, variables)
    ]
    # θ of a weak-calibration group from its θ mixture, as exact_theta_interval takes it: the
    # quadrature's nodes straddle the step of a Beta cut off at 0 or 1 (_weak_mixture_groups).
    weak = np.flatnonzero(~latent & _weak_mixture_groups(prob)) if "theta" in wanted else ()
    funcs = {"theta": functools.partial(_theta_marginal, nodes=nodes, grid=grid)}
    for v in ("q0", "q1"):
        funcs[v] = functools.partial(_q_marginal, which=v, nodes=q_nodes, grid=q_grid,
                                     theta_nodes=theta_nodes)  # fmt: skip
    lattice = "youden" in variables and prob.Q0.known is None and prob.Q1.known is None
    skip = {"theta": np.isin(np.arange(prob.size), weak)}
    quad, weak_rows = _marginal_blocks(
        prob, latent, [(funcs[v], skip.get(v)) for v in wanted],
        youden_grid if lattice else None, mapper,
        [functools.partial(_mixture_theta_marginals, prob, weak[s : s + _WEAK_CHUNK], grid)
         for s in range(0, len(weak), _WEAK_CHUNK)],
    )  # fmt: skip
    for v, m in zip(wanted, quad, strict=False):
        size = grid if v == "theta" else q_grid
        rows = [_latent_marginal(mixtures[g], v, size) for g in mixtures]
        if v == "theta":
            if m is None and len(weak):  # every group on a mixture
                m = Marginal(*(np.full((prob.size, grid), np.nan) for _ in range(3)))
            for g, r in zip(weak, weak_rows, strict=True):
                m.grid[g], m.density[g], m.cdf_values[g] = r.grid[0], r.density[0], r.cdf_values[0]
        if m is None:
            m = Marginal(*(np.concatenate([getattr(r, f) for r in rows])
                           for f in ("grid", "density", "cdf_values")))  # fmt: skip
        else:
            for g, r in zip(mixtures, rows, strict=True):
                if r.grid.shape[-1] != m.grid.shape[-1]:  # a point mass (known q): 3 points
                    r = _point_mass(float(r.grid[0, 0]), 1, m.grid.shape[-1])
                m.grid[g], m.density[g], m.cdf_values[g] = r.grid[0], r.density[0], r.cdf_values[0]
        out[v] = m
    _check_resolved(prob, out, latent, {"theta": grid, "q0": q_grid, "q1": q_grid})
    for v in wanted:
        out[v] = Marginal(*(getattr(out[v], f).reshape(*prob.shape, -1)
                            for f in ("grid", "density", "cdf_values")))  # fmt: skip
    if "youden" in variables:
        out["youden"] = _youden(prob, out, youden_grid, quad[-1] if lattice else None)
    return {v: out[v] for v in variables}


_MAX_CELL_MASS = 0.3  # a resolved marginal holds at most this share in one grid cell (≤ 0.15)


def _unresolved(m: Marginal) -> np.ndarray:
    """Flag the rows (G, T) whose grid does not resolve the marginal (not a known value).

    On resolved marginals a grid cell holds at most ~0.15 of the mass (measured on 2,000
    benchmark groups: θ 0.05, q0 0.10, q1 0.15); where the quadrature's nodes miss the mass
    (k = n = 10⁷ against a sensitivity of 90/100: q1 must lie within ~1e-6 of 1) the CDF
    jumps by more than 1 at once, or holds NaN.
    """
    with np.errstate(invalid="ignore"):
        jump = np.max(np.diff(m.cdf_values, axis=-1), axis=-1)
        _, var = m._moments()
    finite = np.all(np.isfinite(m.cdf_values), axis=-1) & np.all(np.isfinite(m.density), -1)
    return ~m.known & ~(finite & (jump <= _MAX_CELL_MASS) & (var > 0))


def _check_resolved(prob: _Problem, out: dict, latent: np.ndarray, points: dict) -> None:
    """Give unresolved quadrature groups the exact mixture, or refuse them (in place, flat).

    A group whose θ, q0 or q1 marginal the quadrature does not resolve (:func:`_unresolved`)
    takes all three from its exact mixture when it has at most ``_LATENT_STATES_MAX`` latent
    states; beyond that it is a ValueError, never a summary of a grid that missed the mass.
    """
    bad = np.zeros(prob.size, bool)
    for m in out.values():
        bad |= _unresolved(m)
    bad &= ~latent
    _refuse_beyond_mixture(prob, bad)
    for g in np.flatnonzero(bad):
        mix = _latent(prob, g)
        for v, m in out.items():
            r = _latent_marginal(mix, v, points[v])
            if r.grid.shape[-1] != m.grid.shape[-1]:  # a point mass (known q): 3 points
                r = _point_mass(float(r.grid[0, 0]), 1, m.grid.shape[-1])
            m.grid[g], m.density[g], m.cdf_values[g] = r.grid[0], r.density[0], r.cdf_values[0]


def _refuse_beyond_mixture(prob: _Problem, bad: np.ndarray) -> None:
    """Raise for groups flagged in ``bad`` (unresolved) that the exact mixture cannot take."""
    states = _latent_size(prob)
    refused = np.flatnonzero(bad & (states > _LATENT_STATES_MAX))
    if refused.size:
        g = refused[0]
        k, n = int(prob.P.a[g] - 1), int(prob.P.a[g] + prob.P.b[g] - 2)
        raise ValueError(
            f"group(s) {refused[:5].tolist()} (flat index; k = {k} of n = {n}): the exact "
            f"engine's quadrature does not resolve this posterior (the test counts pull a q "
            f"to the edge of what its calibration counts allow, so the mass lies between its "
            f"nodes), and the group has too many latent states ({states[g]:.3g} > "
            f"{_LATENT_STATES_MAX:.0e}) for the exact mixture; check the data (a judge that "
            f"behaves differently on the test set?) or use MCMC."
        )


def _youden_needs(prob: _Problem, v: str, variables) -> bool:
    """Whether the youden marginal needs the marginal ``v`` (J is the other q, shifted)."""
    if "youden" not in variables:
        return False
    return (v == "q1" and prob.Q0.known is not None) or (v == "q0" and prob.Q1.known is not None)


def _youden(prob: _Problem, flat: dict, points: int, lattice: Marginal | None) -> Marginal:
    """Return the youden marginal of all groups (shaped as the counts; :func:`_youden_marginal`).

    A known q0 makes J the q1 marginal shifted by q0 − 1 (likewise a known q1); both known,
    a point mass; else ``lattice``, the lattice marginals of all groups (flat).
    """
    q0, q1 = prob.Q0.known, prob.Q1.known
    if q0 is not None and q1 is not None:
        m = _point_mass(q0 + q1 - 1, prob.size, points)
    elif q0 is not None or q1 is not None:
        other = flat["q1" if q0 is not None else "q0"]
        shift = (q0 if q0 is not None else q1) - 1
        m = Marginal(other.grid + shift, other.density, other.cdf_values)
    else:
        m = lattice
    return Marginal(*(getattr(m, f).reshape(*prob.shape, -1)
                      for f in ("grid", "density", "cdf_values")))  # fmt: skip


def _marginal_blocks(prob: _Problem, latent, funcs, youden_points, mapper, extra=()):
    """Return the quadrature marginals of ``funcs`` and the results of ``extra``, one pool.

    ``funcs``: (func, skip) pairs; ``func(sub_problem)`` over blocks of the groups flagged
    neither in ``latent`` nor in ``skip`` (a boolean mask or None; NaN rows there, to be
    filled by the caller); with ``youden_points`` the youden lattice marginal of every group
    (last in the list). ``extra``: calls without arguments returning lists (concatenated in
    the second value). All blocks of all of them run through ``mapper`` (one thread pool).
    """
    ids, calls = [], []
    for func, skip in funcs:
        mask = latent if skip is None else latent | skip
        idx = np.flatnonzero(~mask)
        subs = [prob.take(idx[s : s + _CHUNK]) for s in range(0, idx.size, _CHUNK)]
        ids.append((idx, len(calls), len(subs)))
        calls += [functools.partial(func, sub) for sub in subs]
    first_youden = len(calls)
    if youden_points is not None:
        calls += [functools.partial(_youden_marginal, prob.take(slice(s, s + _YOUDEN_CHUNK)),
                                    youden_points)
                  for s in range(0, prob.size, _YOUDEN_CHUNK)]  # fmt: skip
    first_extra = len(calls)
    calls += list(extra)
    parts = _run(calls, mapper)
    out = [_assemble(prob.size, idx, parts[at : at + count]) for idx, at, count in ids]
    if youden_points is not None:
        rest = parts[first_youden:first_extra]
        out.append(Marginal(*(np.concatenate([getattr(r, f) for r in rest])
                              for f in ("grid", "density", "cdf_values"))))  # fmt: skip
    return out, [r for part in parts[first_extra:] for r in part]


_YOUDEN_STEPS = 6  # lattice steps per sd of the narrowest of P, Q0, Q1 (youden marginal)
_YOUDEN_MAX_STEPS = 16_384  # lattice steps per unit at most (P's sd below ~5e-4: coarser)
_EDGE_SD = 8.0  # … within this many sds of θ = 0 or 1 (see _youden_marginal)
_YOUDEN_CHUNK = 128  # groups per block of the youden marginal (its lattices are long)
# End weights of the 4th-order Gregory (extended trapezoid) rule: a factor whose support ends
# at 0 or 1 inside its mass (a Beta(m + 1, 1) of tp = m1) is integrated up to that end.
_GREGORY = np.array([3 / 8, 7 / 6, 23 / 24])


def _lattice(lo, hi, nh, steps):
    """Lattice indices i (x = i / nh) covering [lo, hi] per group: start (G,), valid (G, L)."""
    start = np.clip(np.floor(lo * nh), 0, nh).astype(np.int64)
    stop = np.clip(np.ceil(hi * nh), 0, nh).astype(np.int64)
    size = stop - start + 1
    idx = start[:, None] + np.arange(steps)
    return start, idx, np.arange(steps) < size[:, None]


def _factor_on_lattice(beta: _Beta, x, valid, idx, nh, flip: bool):
    """exp(log density − max) of ``beta`` at x (or 1 − x with ``flip``), Gregory-weighted."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ld = beta.logpdf(1 - x if flip else x)
    ld = np.where(valid, ld, -np.inf)
    top = np.max(ld, axis=1, keepdims=True)
    f = np.exp(ld - np.where(np.isfinite(top), top, 0.0))
    w = np.ones(x.shape)
    for k, gw in enumerate(_GREGORY):  # the ends 0 and 1 of the support, where on the lattice
        w = np.where(idx == k, gw, w)
        w = np.where(idx == nh[:, None] - k, gw, w)
    return f * w


def _youden_marginal(prob: _Problem, points: int) -> Marginal:
    """Marginal of J = q0 + q1 − 1 under the flat θ prior (both q unknown), per group.

    With u = 1 − q0 and the flat prior integrated out, the posterior density of (u, q1) is
    f0(1 − u) f1(q1) (F_P(q1) − F_P(u)) / (q1 − u) (the M(q) of :func:`_log_m_flat`), so

        f_J(j) ∝ (1 / j) Σ_u f0(1 − u) f1(u + j) (F_P(u + j) − F_P(u)) h,

    on a lattice of step h = 1 / N in u and q1 (N chosen so that h is at most 1/8 of the
    smallest sd of P, Q0, Q1): two cross-correlations of lattice functions (by FFT) give every
    j = (i − l) h at once, and j = 0 takes the limit Σ f0 f1 f_P. The trapezoid sums are
    spectrally accurate in the interior (smooth integrands that vanish at the lattice's ends);
    a support that ends at 0 or 1 inside the mass (tp = m1: Q1 = Beta(m1 + 1, 1)) gets the
    4th-order Gregory end weights, those ends being lattice points. The CDF is the cumulative
    Simpson integral on the j lattice, kept at ``points`` lattice points spread over the
    region within _DROP nats of the maximum.
    """
    P, Q0, Q1 = prob.P, prob.Q0, prob.Q1
    zz = np.array([-_Z_RANGE, _Z_RANGE])
    pbox = P.nodes(zz)
    ubox = 1 - Q0.nodes(zz)[:, ::-1]
    qbox = Q1.nodes(zz)
    # As for the q marginals: where test data pull a q out of its calibration Beta, the mass
    # lies between that Beta and where θ = 0 (u = p) or θ = 1 (q1 = p) puts it.
    ubox = np.stack([np.minimum(ubox[:, 0], pbox[:, 0]), np.maximum(ubox[:, 1], pbox[:, 1])], 1)
    qbox = np.stack([np.minimum(qbox[:, 0], pbox[:, 0]), np.maximum(qbox[:, 1], pbox[:, 1])], 1)
    # P's width matters where θ = 0 (u = p) or θ = 1 (q1 = p) lies within the q's mass: the
    # integrand then steps there (measured: 6e-4 quantile error at n = 20,000, tp = m1 = 20,
    # k/n = 0.98 without it; elsewhere the q's sds set the step, at a quarter of the cost).
    near = (np.abs(P.mean - Q1.mean) < _EDGE_SD * (Q1.sd + P.sd)) | (
        np.abs(P.mean - (1 - Q0.mean)) < _EDGE_SD * (Q0.sd + P.sd)
    )
    sd = np.minimum(np.minimum(Q0.sd, Q1.sd), np.where(near, P.sd, 1.0))
    widths = np.minimum(ubox[:, 1] - ubox[:, 0], qbox[:, 1] - qbox[:, 0])
    nh = np.maximum(np.ceil(_YOUDEN_STEPS / sd), np.ceil(points / np.maximum(widths, 1e-300)))
    nh = np.minimum(nh, _YOUDEN_MAX_STEPS).astype(np.int64)
    lu = int(np.max(np.ceil(ubox[:, 1] * nh) - np.floor(ubox[:, 0] * nh))) + 1
    lq = int(np.max(np.ceil(qbox[:, 1] * nh) - np.floor(qbox[:, 0] * nh))) + 1
    u0, iu, vu = _lattice(ubox[:, 0], ubox[:, 1], nh, lu)
    q0_, iq, vq = _lattice(qbox[:, 0], qbox[:, 1], nh, lq)
    h = 1.0 / nh
    u, q1 = np.minimum(iu * h[:, None], 1.0), np.minimum(iq * h[:, None], 1.0)
    A = _factor_on_lattice(Q0, u, vu, iu, nh, flip=True)
    B = _factor_on_lattice(Q1, q1, vq, iq, nh, flip=False)
    # F_P(q1) − F_P(u) = S_P(u) − S_P(q1): the survival form where the test share lies below
    # the calibration's u (k = 0 with specificity 0.7: both CDFs are 1 − tiny at the
    # calibration mass, and the posterior's mass sits where the difference is tiny).
    low = P.mean < 1 - Q0.mean
    fu, fq = _p_cdf_lattice(P, iu, iq, h, low, pbox)
    size = lu + lq - 1
    nfft = _fft_size(size)
    fa = np.fft.rfft(A[:, ::-1], nfft)
    fau = np.fft.rfft((A * fu)[:, ::-1], nfft)
    s = np.fft.irfft(fa * np.fft.rfft(B * fq, nfft) - fau * np.fft.rfft(B, nfft), nfft)[:, :size]
    d = np.arange(size) - (lu - 1)
    steps = (q0_ - u0)[:, None] + d  # j = steps · h
    j = steps * h[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        dens = np.where(steps != 0, s / j, 0.0)
    # j = 0: the limit of (F_P(u + j) − F_P(u)) / j is f_P(u).
    zero = u0 - q0_ + (lu - 1)  # index of d = u0 − q0_ (j = 0) in dens
    at = np.clip(np.arange(lu)[None, :] + (u0 - q0_)[:, None], 0, lq - 1)  # B's index at u
    ok = (np.arange(lu)[None, :] + (u0 - q0_)[:, None] >= 0) & (
        np.arange(lu)[None, :] + (u0 - q0_)[:, None] < lq
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        fp = np.exp(P.logpdf(u))
    limit = np.sum(np.where(ok, A * np.take_along_axis(B, at, 1) * fp, 0.0), axis=1)
    rows = np.flatnonzero((zero >= 0) & (zero < size))
    dens[rows, zero[rows]] = limit[rows]
    dens = np.maximum(np.nan_to_num(dens, nan=0.0, posinf=0.0), 0.0)
    # The lattice is uniform per group: unit steps, scaled by h (the equal-interval rule).
    cum = integrate.cumulative_simpson(dens, dx=1.0, axis=-1, initial=0.0) * h[:, None]
    return _lattice_marginal(j, dens, cum, points)


def _p_cdf(P: _Beta, x, low, pbox):
    """G = F_P at x (G, L), or −S_P where ``low`` (G,): the same differences G(q1) − G(u).

    Beyond P's box on the far side (x > P's Φ(8.5) quantile for F_P, below Φ(−8.5) for
    −S_P) G is set to ±1 without an incomplete Beta call (absolute error < 1e-17; the
    calls are most of the lattice's cost).
    """
    low = np.broadcast_to(low[:, None], x.shape)
    far = np.where(low, x < pbox[:, :1], x > pbox[:, 1:])
    out = np.where(low, -1.0, 1.0)
    need = ~far
    a, b = (
        np.broadcast_to(P.a[:, None], x.shape)[need],
        np.broadcast_to(P.b[:, None], x.shape)[need],
    )
    median = a / (a + b)
    cdf, sf = _cdf_sf(a, b, x[need], median)
    out[need] = np.where(low[need], -sf, cdf)
    return out


def _p_cdf_lattice(P: _Beta, iu, iq, h, low, pbox):
    """:func:`_p_cdf` at the lattice points u = iu · h and q1 = iq · h (each capped at 1).

    Both lattices hold P's box, so they overlap: each lattice index is computed once, over
    their union (the same values, bit for bit: the same products i · h).
    """
    start = np.minimum(iu[:, 0], iq[:, 0])
    width = int(np.max(np.maximum(iu[:, -1], iq[:, -1]) - start)) + 1
    values = _p_cdf(P, np.minimum((start[:, None] + np.arange(width)) * h[:, None], 1.0),
                    low, pbox)  # fmt: skip
    take = np.take_along_axis
    return take(values, iu - start[:, None], 1), take(values, iq - start[:, None], 1)


def _fft_size(size: int) -> int:
    """Return the next 2^a 3^b ≥ size (a fast length for numpy's FFT)."""
    best = 1 << (size - 1).bit_length()
    p3 = 1
    while p3 < best:
        p2 = p3
        while p2 < size:
            p2 *= 2
        best = min(best, p2)
        p3 *= 3
    return best


def _lattice_marginal(x, dens, cum, points: int) -> Marginal:
    """Return a Marginal of ``points`` lattice points over the region within _DROP nats."""
    top = np.max(dens, axis=1, keepdims=True)
    inside = dens > top * np.exp(-_DROP)
    size = x.shape[1]
    first = np.maximum(np.argmax(inside, axis=1) - 1, 0)
    last = np.minimum(size - 1 - np.argmax(inside[:, ::-1], axis=1) + 1, size - 1)
    short = last - first < points - 1  # fewer lattice points than wanted: widen the range
    mid = (first + last) // 2
    first = np.where(short, np.clip(mid - points // 2, 0, size - points), first)
    last = np.where(short, first + points - 1, last)
    idx = np.round(first[:, None] + (last - first)[:, None] * np.linspace(0, 1, points))
    idx = idx.astype(np.int64)
    take = np.take_along_axis
    grid, d, c = take(x, idx, 1), take(dens, idx, 1), take(cum, idx, 1)
    c0, c1 = c[:, :1], c[:, -1:]
    total = c1 - c0
    return Marginal(grid=grid, density=d / total, cdf_values=(c - c0) / total)


def _summary(m: Marginal, ci_prob: float) -> ExactSummary:
    q = m.quantile(np.array([(1 - ci_prob) / 2, 0.5, (1 + ci_prob) / 2]).reshape(
        (3,) + (1,) * (m.grid.ndim - 1)))  # fmt: skip
    known = m.known
    first, var = m._moments()  # once for both (mean() and sd() would each integrate)
    mean = np.where(known, m.grid[..., 0], first)
    sd = np.where(known, 0.0, np.sqrt(var))
    q = np.where(known, m.grid[..., 0], q)
    return ExactSummary(mean=mean, sd=sd, median=q[1], lower=q[0], upper=q[2])


def exact_theta_interval(
    k,
    n,
    tn,
    m0,
    tp,
    m1,
    *,
    theta_prior=(1.0, 1.0),
    q0_prior=(1.0, 1.0),
    q1_prior=(1.0, 1.0),
    ci_prob: float = 0.95,
    design: str = "stratified",
    nodes: int = 10,
    grid: int = 65,
) -> ExactSummary:
    """Posterior mean, sd, median and equal-tailed interval of θ only (the fast path).

    Same model and arguments as :func:`exact_posterior`. Each group takes one of two paths:

    * the exact mixture over latent counts, θ ~ Σ_X W_X Beta(a + X, b + n − X), for groups
      with at most 4·10⁵ latent states ((n + 1)(min(k, n − k) + 1)), groups with a weak
      calibration Beta (a parameter < 10: tp = m1, tn = 0, m0 = 5, …) up to 2·10⁸ states,
      and conflicting groups (as in :func:`exact_marginals`). The weights of X are one
      convolution; quantiles solve the exact CDF by Newton's method. Error ≤ 1e-12 (measured
      against ``tests/references/brute_grid.LatentMixture``; tested to 1e-9). Cost: 0.17 ms a group
      for n = 300 in a batch, 0.8 ms for one group per call; ~0.1 s for n = 20,000.
    * quadrature (``nodes`` Gauss-Hermite nodes, ``grid`` θ points placed by the density,
      log-cubic CDF cells) for the others: large n with calibration Betas of parameters
      ≥ 10. Measured ≤ 4.4e-6 on every 0.5-99.5 % quantile of random such groups
      (n = 1000-20,000; tested to 2e-5); 0.8 ms a group in a batch, ~2.5 ms for one group
      per call. Weak calibration beyond 2·10⁸ states (n ≳ 28,000) gets twice the nodes but
      is not accurate: errors up to ~1e-3 (use :func:`exact_draws` or MCMC to check).

    Timings: one idle 16-core machine (``tests/core/test_exact_interval.py`` documents the
    accuracy runs).

    Parameters
    ----------
    k, n, tn, m0, tp, m1 : array_like of int
        Counts per group, broadcast together.
    theta_prior, q0_prior, q1_prior
        As in :func:`exact_marginals`.
    ci_prob : float, default 0.95
        Probability of the equal-tailed interval.
    design : {"stratified", "random"}, default "stratified"
        As in :func:`exact_marginals`.
    nodes, grid : int, default 10 and 65
        Quadrature nodes per integrated variable and θ grid points (odd) of the quadrature
        path.

    Returns
    -------
    ExactSummary
        ``mean``, ``sd``, ``median``, ``lower``, ``upper`` arrays over the groups.

    Examples
    --------
    >>> from bayesjudge.core.exact import exact_theta_interval
    >>> s = exact_theta_interval([400, 500], 1000, 70, 100, 90, 100)
    >>> s.median.round(3)
    array([0.163, 0.331])
    """
    ci_prob = _check_prob(ci_prob)
    _check_nodes(nodes, grid)
    prob = _problem(k, n, tn, m0, tp, m1, theta_prior, q0_prior, q1_prior, design)
    latent = _theta_mixture_groups(prob)
    probs = np.array([(1 - ci_prob) / 2, 0.5, (1 + ci_prob) / 2])
    out = np.empty((5, prob.size))  # mean, sd, median, lower, upper
    weak = _weak_calibration(prob)
    # Weak calibration beyond the mixture's reach (n ≳ 28,000): twice the nodes (measured
    # error 1.5e-3 instead of 5.8e-3 at n = 5000-20,000 with tp = m1 or m0 = 5).
    for quad, size in ((~latent & ~weak, nodes), (~latent & weak, 2 * nodes)):
        quad = np.flatnonzero(quad)
        if quad.size:
            sub = prob.take(quad)
            m = _blocks(sub, lambda p, size=size: _theta_marginal(p, size, grid))
            bad = _unresolved(m)
            if bad.any():  # the θ mixture below, or a ValueError beyond its reach
                _refuse_beyond_mixture(sub, bad)
                latent[quad[bad]] = True
            s = _summary(m, ci_prob)
            out[:, quad] = s.mean, s.sd, s.median, s.lower, s.upper
    mix = np.flatnonzero(latent)
    if mix.size:
        mean, sd, q = _mixture_theta_summary(prob, mix, probs)
        out[:, mix] = mean, sd, q[1], q[0], q[2]
    return ExactSummary(*(v.reshape(prob.shape) for v in out))


def exact_posterior(
    k,
    n,
    tn,
    m0,
    tp,
    m1,
    *,
    theta_prior=(1.0, 1.0),
    q0_prior=(1.0, 1.0),
    q1_prior=(1.0, 1.0),
    ci_prob: float = 0.95,
    design: str = "stratified",
    **settings,
) -> ExactPosterior:
    """Exact posterior summaries of θ, q0 and q1 of the ``"separate"`` model, many groups at once.

    Parameters
    ----------
    k, n, tn, m0, tp, m1 : array_like of int
        Counts per group, broadcast together.
    theta_prior : (float, float), default (1, 1)
        Beta prior of θ (parameters ≥ 1).
    q0_prior, q1_prior : (float, float) or float, default (1, 1)
        Beta priors of q0, q1 or known values (as in :class:`bayesjudge.Priors`).
    ci_prob : float, default 0.95
        Probability of the equal-tailed interval.
    design : {"stratified", "random"}, default "stratified"
        As in :func:`exact_marginals`.
    **settings
        Quadrature settings, see :func:`exact_marginals`.

    Returns
    -------
    ExactPosterior
        ``theta``, ``q0``, ``q1`` (:class:`ExactSummary` of arrays shaped like the counts)
        and ``ci_prob``.

    Examples
    --------
    >>> from bayesjudge.core.exact import exact_posterior
    >>> post = exact_posterior(400, 1000, 70, 100, 90, 100)
    >>> float(post.theta.lower) < 1 / 6 < float(post.theta.upper)
    True
    >>> round(float(post.q1.mean), 2)
    0.89
    """
    ci_prob = _check_prob(ci_prob)
    m = exact_marginals(
        k, n, tn, m0, tp, m1, theta_prior=theta_prior, q0_prior=q0_prior,
        q1_prior=q1_prior, design=design, **settings,
    )  # fmt: skip
    return ExactPosterior(
        theta=_summary(m["theta"], ci_prob),
        q0=_summary(m["q0"], ci_prob),
        q1=_summary(m["q1"], ci_prob),
        ci_prob=ci_prob,
    )


def exact_draws(
    k,
    n,
    tn,
    m0,
    tp,
    m1,
    *,
    size: int,
    rng=None,
    theta_prior=(1.0, 1.0),
    q0_prior=(1.0, 1.0),
    q1_prior=(1.0, 1.0),
    design: str = "stratified",
) -> dict[str, np.ndarray]:
    """I.i.d. draws of (θ, q0, q1) from the exact joint posterior (rejection sampling).

    Exact in distribution: no quadrature is involved, every draw is a proposal accepted
    with probability target / envelope. The envelope is a mixture of two parts per group,
    split at a box q0 ≥ x0, q1 ≥ x1 of the calibration Betas (x at the same normal score
    −z, z chosen per group to minimise the envelope's mass, so that J = q0 + q1 − 1 ≥
    J_c = x0 + x1 − 1 > 0 inside):

    * inside the box: p ~ P = Beta(k + 1, n − k + 1), q0, q1 from their calibration Betas,
      θ = (p − 1 + q0) / J, kept with probability 1[0 ≤ θ ≤ 1] · J_c / J · π(θ) / max π.
      In (p, q0, q1) the posterior is f_P f0 f1 π(θ) / J, so three plain Beta variates and
      a comparison make a proposal (about 3 in 5 kept on typical data);
    * outside (a tail of the Betas, where J may reach 0): q from the Betas restricted to
      the complement of the box (inverse CDF), θ | q from the flat-prior conditional (p
      from P restricted to the segment between 1 − q0 and q1), kept with probability
      M(q) / max f_P · π(θ) / max π, where M(q) = abs(F_P(q1) − F_P(1 − q0)) / abs(J) ≤ max f_P
      is the flat-prior likelihood of q.

    Each proposal picks the part with probability proportional to its envelope mass (1 / J_c
    for the box part, whose q come from the unrestricted Betas and are rejected outside the
    box, and tail probability · max f_P). With an informative θ prior (the
    random design's Beta(a + m1, b + m0)) a pilot of 256 proposals per group may choose a
    second, cheaper sampler for that group: θ from its prior, q0, q1 from their Betas, kept
    with probability f_P(p) / max f_P (on the small SBC design of the tests, 200 groups of
    N = 120, L = 40: 9 s → 1.7 s). Groups where rejection keeps under
    1 proposal in 1000 (test counts contradicting the calibration, a θ prior far from the
    likelihood) are drawn from the exact mixture over latent counts (a state by weight,
    then three Betas); a group out of reach of both (over 2·10⁶ latent states and ~10⁷
    expected proposals) raises a ValueError.

    Parameters
    ----------
    k, n, tn, m0, tp, m1 : array_like of int
        Counts per group, broadcast together.
    size : int
        Number of draws per group.
    rng : numpy.random.Generator or int, optional
        Random generator or seed: the same seed and counts give the same draws; every draw
        uses its own variates (independent across draws and groups).
    theta_prior, q0_prior, q1_prior
        As in :func:`exact_marginals`.
    design : {"stratified", "random"}, default "stratified"
        As in :func:`exact_marginals` (the random design's θ prior Beta(a + m1, b + m0) enters
        the acceptance step; a group without labelled items of one kind is drawn by
        rejection like the others).

    Returns
    -------
    dict of str to numpy.ndarray
        ``theta``, ``q0``, ``q1`` of shape ``(size, *groups)``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesjudge.core.exact import exact_draws
    >>> d = exact_draws(400, 1000, 70, 100, 90, 100, size=2000, rng=1)
    >>> d["theta"].shape, bool(0.1 < np.median(d["theta"]) < 0.25)
    ((2000,), True)
    """
    if isinstance(size, bool) or not isinstance(size, int | np.integer) or size < 1:
        raise ValueError(f"size must be an integer >= 1; got {size!r}.")
    size = int(size)
    rng = np.random.default_rng(rng)
    prob = _problem(k, n, tn, m0, tp, m1, theta_prior, q0_prior, q1_prior, design)
    out, slow = _rejection(prob, size, rng)
    for g in slow:  # rejection too slow: the exact mixture over latent counts
        mix = _latent(prob, int(g))
        pick = rng.choice(mix.weights.size, size=size, p=mix.weights)
        for v in ("theta", "q0", "q1"):
            par = mix.params[v]
            out[v][g] = par if isinstance(par, float) else rng.beta(par[0][pick], par[1][pick])
    # Drawn as (groups, size), a group's draws contiguous; returned as a (size, *groups) view.
    return {v: np.moveaxis(out[v].reshape(*prob.shape, size), -1, 0) for v in ("theta", "q0", "q1")}


_BOX_Z = np.array([1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 8.5])  # candidate box normal scores
_MIN_ACCEPT = 1e-3  # rejection keeping fewer proposals than this: the exact mixture instead
_PILOT = 2000  # proposals of a group before its acceptance rate is judged
_ROUND = 2_000_000  # proposals per round of the rejection sampler (bounds the memory)
_OUTSIDE_COST = 5.0  # cost of a proposal outside the box (inverse CDFs) over one inside


class _Envelope(NamedTuple):
    """The envelope of :func:`exact_draws`, arrays over the groups.

    The box corner (x0, x1), J_c = x0 + x1 − 1, the Betas' tail probabilities below the
    corner (t0, t1), the probability of proposing inside the box (w_box) and the log bounds
    of the likelihood (log max f_P) and of the θ prior (log max π).
    """

    x0: np.ndarray
    x1: np.ndarray
    jc: np.ndarray
    t0: np.ndarray
    t1: np.ndarray
    w_box: np.ndarray
    log_max_p: np.ndarray
    log_max_prior: np.ndarray


def _envelope(prob: _Problem) -> _Envelope:
    """Return the envelope of :func:`exact_draws`: per group, the box of least envelope mass.

    Mass of the box part: 1 / J_c (its q come from the unrestricted Betas, those outside
    the box rejected; the bound of 1 / J in the box); outside: P(outside) · max f_P. A
    known q is its own box side (tail probability 0). A candidate with J_c ≤ 0 is out;
    with none left the whole envelope is the outside part (the bound max f_P).
    """
    G = prob.size
    z = -_BOX_Z
    corners, tails = [], []
    for beta in (prob.Q0, prob.Q1):
        corners.append(beta.nodes(z))  # (G, C): the known value for a known q
        tail = 0.0 if beta.known is not None else special.ndtr(z)
        tails.append(np.broadcast_to(tail, (G, z.size)))
    jc = corners[0] + corners[1] - 1
    inside = (1 - tails[0]) * (1 - tails[1])
    log_max_p = prob.P.logmax()
    # The box part draws q from the unrestricted Betas and rejects what falls outside the
    # box, so its envelope is f0 f1 / J_c over the whole square: mass 1 / J_c, not
    # P(box) / J_c (weighting it by P(box) under-sampled the box by that factor: q1's mean
    # 15 sd off at 2·10⁵ draws for (n, k, m0, tn, m1, tp) = (150, 70, 10, 7, 12, 10)).
    with np.errstate(divide="ignore"):
        mass = np.where(jc > 0, 1 / np.where(jc > 0, jc, 1.0), np.inf)
    mass = mass + _OUTSIDE_COST * (1 - inside) * np.exp(log_max_p)[:, None]
    best = np.argmin(mass, axis=1)
    rows = np.arange(G)
    ok = np.isfinite(mass[rows, best])
    pick = [c[rows, best] for c in (*corners, jc, *tails)]
    x0, x1, jc, t0, t1 = (np.where(ok, v, 0.0) for v in pick)
    m_box = np.where(ok, 1 / np.where(ok, jc, 1.0), 0.0)
    m_out = np.where(ok, 1 - inside[rows, best], 1.0) * np.exp(log_max_p)
    a, b = prob.theta_prior
    mode = np.where(a + b > 2, (a - 1) / np.maximum(a + b - 2, 1e-300), 0.5)
    return _Envelope(x0, x1, jc, np.where(ok, t0, 1.0), np.where(ok, t1, 1.0),
                     m_box / (m_box + m_out), log_max_p,
                     _log_theta_prior(mode, (a, b)))  # fmt: skip


def _draw(beta: _Beta, g: np.ndarray, rng) -> np.ndarray:
    if beta.known is not None:
        return np.full(g.size, beta.known)
    return _beta_variates(beta.a, beta.b, g, rng)


_RUN = 32  # mean run of equal groups from which Beta variates come per run


def _beta_variates(a: np.ndarray, b: np.ndarray, g: np.ndarray, rng) -> np.ndarray:
    """Beta(a[g], b[g]) variates, one per entry of g (group indices, usually sorted).

    The proposals of a group are contiguous, and numpy draws Betas of scalar parameters
    about twice as fast as with a parameter per variate (57 against 100 ns), so long runs
    of one group take one call each.
    """
    cut = np.flatnonzero(g[1:] != g[:-1]) + 1
    if g.size < _RUN * (cut.size + 1):
        return rng.beta(a[g], b[g])
    starts = np.concatenate(([0], cut))
    ends = np.concatenate((cut, [g.size]))
    out = np.empty(g.size)
    first = g[starts]
    for s, e, ai, bi in zip(starts.tolist(), ends.tolist(), a[first].tolist(),
                            b[first].tolist(), strict=True):  # fmt: skip
        out[s:e] = rng.beta(ai, bi, e - s)
    return out


def _draw_outside(prob: _Problem, env: _Envelope, g: np.ndarray, rng):
    """(q0, q1) from the calibration Betas restricted to outside the box (inverse CDF).

    Outside = {q0 < x0} ∪ {q0 ≥ x0, q1 < x1}, probabilities t0 and (1 − t0) t1.
    """
    t0, t1 = env.t0[g], env.t1[g]
    first = rng.uniform(size=g.size) * (t0 + (1 - t0) * t1) < t0
    q0, q1 = np.empty(g.size), np.empty(g.size)
    for out, beta, own, other in ((q0, prob.Q0, first, ~first), (q1, prob.Q1, ~first, first)):
        if beta.known is not None:
            out[:] = beta.known
            continue
        u = rng.uniform(size=g.size)  # its own variates: q0 and q1 are independent
        i, j = np.flatnonzero(own), np.flatnonzero(other)
        a, b = beta.a[g], beta.b[g]
        tail = t0 if beta is prob.Q0 else t1
        # The restricted side by inverse CDF below the corner; the other side: q0 above its
        # corner (second piece), q1 unrestricted (first piece).
        out[i] = special.betaincinv(a[i], b[i], u[i] * tail[i])
        if beta is prob.Q0:
            out[j] = special.betainccinv(a[j], b[j], u[j] * (1 - tail[j]))
        else:
            out[j] = _beta_variates(beta.a, beta.b, g[j], rng)
    return q0, q1


def _proposals(prob: _Problem, env: _Envelope, g: np.ndarray, rng, from_prior=None):
    """One proposal per entry of g (group indices); returns the kept ones: (at, θ, q0, q1).

    ``at`` (ascending) indexes g. Groups flagged in ``from_prior`` (a boolean mask over the
    groups) propose from the prior instead (:func:`_prior_proposals`). Only the kept
    proposals are gathered: full-size result arrays cost more (fresh pages) than the
    arithmetic at millions of proposals.
    """
    if from_prior is not None and from_prior.any():
        pr = from_prior[g]
        parts = []
        for sel, func in ((pr, _prior_proposals), (~pr, _proposals)):
            i = np.flatnonzero(sel)
            if i.size:
                at, *values = func(prob, env, g[i], rng)
                parts.append((i[at], *values))
        return _merge(parts)
    # One uniform per proposal picks the part and then decides acceptance: given the part,
    # u / w (box) or (u − w) / (1 − w) (outside) is again uniform on [0, 1).
    u = rng.random(g.size)
    w = env.w_box[g]
    box = u < w
    parts = [_box_proposals(prob, env, g, u, w, box, rng)]
    j = np.flatnonzero(~box)
    if j.size:
        gj = g[j]
        a0, a1 = _draw_outside(prob, env, gj, rng)
        cdfs, log_m = _log_m_draw(prob.P, gj, a0, a1)
        with np.errstate(divide="ignore"):
            log_u = np.log((u[j] - w[j]) / (1 - w[j]))
        sel = np.flatnonzero(log_u < log_m - env.log_max_p[gj])
        # θ | q only where q is kept (its inverse CDF is dear)
        th = _theta_given_q(prob.P, gj[sel], a0[sel], a1[sel], [c[sel] for c in cdfs], rng)
        parts.append((j[sel], th, a0[sel], a1[sel]))
    at, theta, q0, q1 = _merge(parts)
    if not prob.flat_prior:
        gs = g[at]
        a, b = prob.theta_prior
        lp = _log_theta_prior(theta, (a[gs], b[gs])) - env.log_max_prior[gs]
        keep = np.flatnonzero(np.log(rng.uniform(size=at.size)) < lp)
        at, theta, q0, q1 = at[keep], theta[keep], q0[keep], q1[keep]
    return at, theta, q0, q1


def _merge(parts):
    """Concatenate kept proposals (at, θ, q0, q1) of disjoint parts, in ascending ``at``."""
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return np.empty(0, np.intp), np.empty(0), np.empty(0), np.empty(0)
    at, *values = (np.concatenate(v) for v in zip(*parts, strict=True))
    order = np.argsort(at, kind="stable")  # sorted runs: a merge
    return at[order], *(v[order] for v in values)


def _box_proposals(prob: _Problem, env: _Envelope, g, u, w, box, rng):
    """Return the kept proposals inside the box: (their indices into g, θ, q0, q1).

    For the entries of g flagged in ``box``: q0, q1 from their calibration Betas, kept if in
    the box and u / w < J_c / J, then p from P and θ = (p − 1 + q0) / J, kept if in [0, 1].
    A group's proposals are contiguous in g; long runs go group by group with scalar
    parameters (numpy's Betas are twice as fast so, and no per-proposal gathers), short ones
    in one vectorised pass.
    """
    cut = np.flatnonzero(g[1:] != g[:-1]) + 1
    if g.size < _RUN * (cut.size + 1):
        runs = [(0, g.size, None)]
    else:
        starts = np.concatenate(([0], cut))
        runs = zip(starts.tolist(), np.append(cut, g.size).tolist(), g[starts].tolist(),
                   strict=True)  # fmt: skip
    pars = [(beta.known, beta.a, beta.b) for beta in (prob.Q0, prob.Q1, prob.P)]
    out = []
    for s, e, gi in runs:
        idx = np.flatnonzero(box[s:e])
        if gi is None:  # one pass over all groups: per-proposal parameters
            grp = g[idx]
            x0, x1, jc, wi = env.x0[grp], env.x1[grp], env.jc[grp], w[idx]
        else:
            grp = gi
            x0, x1, jc, wi = env.x0[gi], env.x1[gi], env.jc[gi], w[s]
        size = None if gi is None else idx.size
        a0, a1 = (np.full(idx.size, known) if known is not None else rng.beta(a[grp], b[grp], size)
                  for known, a, b in pars[:2])  # fmt: skip
        jj = a0 + a1 - 1
        # In the box J ≥ J_c > 0, so u / w < J_c / J is u · J < w · J_c.
        ok = (a0 >= x0) & (a1 >= x1) & (u[s:e][idx] * jj < wi * jc)
        sel = np.flatnonzero(ok)  # p only where q passed (the test does not involve p)
        _, a, b = pars[2]  # P is never known
        gs = grp[sel] if gi is None else grp
        p = rng.beta(a[gs], b[gs], None if gi is None else sel.size)
        a0, a1 = a0[sel], a1[sel]
        th = (p - 1 + a0) / jj[sel]
        inside = (th >= 0) & (th <= 1)
        out.append((s + idx[sel[inside]], th[inside], a0[inside], a1[inside]))
    if len(out) == 1:
        return out[0]
    return tuple(np.concatenate(parts) for parts in zip(*out, strict=True))


def _prior_proposals(prob: _Problem, env: _Envelope, g: np.ndarray, rng):
    """Proposals from the prior, kept with probability f_P(p) / max f_P.

    θ from its Beta prior, q0, q1 from their calibration Betas; f_P is the test likelihood.

    Exact for any group; cheap (three Beta variates), and efficient where θ's prior is
    narrower than what the test counts say of it — the random design's Beta(a + m1, b + m0)
    with many labelled items and few unlabelled ones, where the envelope's θ prior test
    would reject most proposals.
    """
    a, b = prob.theta_prior
    theta = _beta_variates(a, b, g, rng)
    q0, q1 = _draw(prob.Q0, g, rng), _draw(prob.Q1, g, rng)
    p = theta * q1 + (1 - theta) * (1 - q0)
    at = np.flatnonzero(np.log(rng.uniform(size=g.size)) < prob.P.logpdf(p, g) - env.log_max_p[g])
    return at, theta[at], q0[at], q1[at]


_SCHEME_PILOT = 256  # proposals per group and scheme that choose between the two samplers


def _choose_scheme(prob: _Problem, env: _Envelope, rng) -> np.ndarray:
    """Flag the groups whose draws come from :func:`_prior_proposals` (an informative θ prior).

    A pilot of each sampler per group; the prior's proposals win where their acceptance rate
    beats the envelope's divided by its cost per proposal (an outside proposal costs
    ``_OUTSIDE_COST``). The pilot's proposals are discarded, so the draws stay exact.
    """
    G = prob.size
    if prob.flat_prior:
        return np.zeros(G, bool)
    reps = int(max(32, min(_SCHEME_PILOT, _ROUND // (2 * G))))
    rates = []
    for func in (_proposals, _prior_proposals):
        g = np.repeat(np.arange(G), reps)
        kept = g[func(prob, env, g, rng)[0]]
        rates.append((np.bincount(kept, minlength=G) + 0.5) / (reps + 1))
    cost = env.w_box + (1 - env.w_box) * _OUTSIDE_COST
    return rates[1] > rates[0] / cost


def _rejection(prob: _Problem, size: int, rng):
    """Draws (G, size) of θ, q0, q1 by the rejection sampler of :func:`exact_draws`.

    Each round proposes, per group, about as many times as its still missing draws divided
    by its acceptance rate so far; the kept proposals fill the group's next draws in order.
    Returns the draws and the groups left to the exact mixture: those that keep under
    ``_MIN_ACCEPT`` of their proposals after ``_PILOT`` of them and have at most
    ``_LATENT_STATES_MAX`` latent states (their entries are NaN). A slow group with more
    states goes on by rejection while its expected cost stays below ``_MAX_PROPOSALS``, and
    raises a ValueError beyond that.
    """
    G = prob.size
    env = _envelope(prob)
    from_prior = _choose_scheme(prob, env, rng)
    out = {v: np.full((G, size), np.nan) for v in ("theta", "q0", "q1")}
    states = _latent_size(prob)
    filled = np.zeros(G, np.intp)  # draws 0 … filled − 1 of each group are done
    hits, tries = np.zeros(G), np.zeros(G)
    slow = np.zeros(G, bool)
    while True:
        active = np.flatnonzero((filled < size) & ~slow)
        if active.size == 0:
            break
        need = size - filled[active]
        rate = (hits[active] + 1) / (tries[active] + 2)
        reps = np.minimum(np.ceil(1.1 * need / rate) + 16, _ROUND).astype(np.intp)
        total = np.cumsum(reps)
        if total[-1] > _ROUND:  # a round of bounded size: the first groups only
            now = max(1, int(np.searchsorted(total, _ROUND)))
            active, need, reps = active[:now], need[:now], reps[:now]
        g = np.repeat(active, reps)  # sorted by group
        where, theta, q0, q1 = _proposals(prob, env, g, rng, from_prior)  # kept ones
        tries[active] += reps
        gw = g[where]
        hits += np.bincount(gw, minlength=G)
        rank = np.arange(where.size) - np.searchsorted(gw, gw)  # kept proposal's rank in group
        use = np.flatnonzero(rank < (size - filled)[gw])
        gw, rank = gw[use], rank[use]
        draw = filled[gw] + rank
        for name, values in (("theta", theta), ("q0", q0), ("q1", q1)):
            out[name][gw, draw] = values[use]  # a group's draws are contiguous
        filled += np.bincount(gw, minlength=G)
        rate = (hits + 1) / (tries + 2)
        low = (tries >= _PILOT) & (rate < _MIN_ACCEPT) & ~slow & (filled < size)
        hopeless = low & (states > _LATENT_STATES_MAX) & (size / rate > _MAX_PROPOSALS)
        if hopeless.any():
            bad = np.flatnonzero(hopeless)
            raise ValueError(
                f"exact_draws: the rejection sampler accepts about 1 in {1 / rate[bad[0]]:.0f} "
                f"proposals for group(s) {bad[:5].tolist()} (flat index), which have too many "
                f"latent states for the exact mixture; their test counts contradict the "
                f"calibration counts or the θ prior. Use MCMC for these groups."
            )
        slow |= low & (states <= _LATENT_STATES_MAX)
    return out, np.flatnonzero(slow)


def _log_m_draw(P: _Beta, g, q0, q1):
    """CDF values at 1 − q0 and q1, and log M(q) = log |F_P(q1) − F_P(1 − q0)| / |J|."""
    a, b = P.a[g], P.b[g]
    c, jj = 1 - q0, q0 + q1 - 1
    upper = np.minimum(c, q1) > a / (a + b)  # both in the upper tail: work with 1 − F
    fc, fq = np.empty(g.size), np.empty(g.size)
    lo = ~upper
    fc[upper], fq[upper] = special.betaincc(a[upper], b[upper], np.stack([c[upper], q1[upper]]))
    fc[lo], fq[lo] = special.betainc(a[lo], b[lo], np.stack([c[lo], q1[lo]]))
    with np.errstate(divide="ignore", invalid="ignore"):
        tiny = np.abs(jj) < 1e-12
        diff = np.where(upper, fc - fq, fq - fc)
        m = np.where(tiny, np.exp(P.logpdf(c[:, None], g)[:, 0]), diff / jj)
        log_m = np.log(np.maximum(m, 0.0))
    return (fc, fq, upper), log_m


def _theta_given_q(P: _Beta, g, q0, q1, cdfs, rng):
    """θ from the flat-prior conditional given (q0, q1): p by inverting the truncated CDF."""
    a, b = P.a[g], P.b[g]
    fc, fq, upper = cdfs
    c, jj = 1 - q0, q0 + q1 - 1
    u = rng.uniform(size=g.size)
    target = fc + u * (fq - fc)
    p = np.empty(g.size)
    p[upper] = special.betainccinv(a[upper], b[upper], target[upper])
    p[~upper] = special.betaincinv(a[~upper], b[~upper], target[~upper])
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = np.where(np.abs(jj) < 1e-12, u, (p - c) / jj)
    return np.clip(np.nan_to_num(theta, nan=0.5), 0.0, 1.0)


def _pdf(m: Marginal, x: np.ndarray) -> np.ndarray:
    """Density of the marginal at x (shape of the groups): the cubic Hermite CDF's slope."""
    t = m.grid.shape[-1]
    j = np.clip((m.grid <= x[..., None]).sum(-1) - 1, 0, t - 2)
    return _hermite_eval(m.grid, m.cdf_values, m.density, j, x, derivative=True)


def hdi(m: Marginal, prob: float, points: int = 17, rounds: int = 8) -> tuple[np.ndarray, ...]:
    """Highest-density interval (lower, upper) of probability ``prob``, arrays over the groups.

    The narrowest interval [Q(α), Q(α + prob)] over α ∈ [0, 1 − prob]. Its width has the
    slope 1 / f(Q(α + prob)) − 1 / f(Q(α)) in α, so where the density on the grid rises to
    one peak and falls (unimodal: every marginal of the engine in practice) the narrowest
    interval has ends of equal density: α solves f(Q(α + prob)) = f(Q(α)), by Newton's method
    (the density's slope is the cubic Hermite CDF's second derivative) kept in a bisection
    bracket, to |Δα| ≤ 1e-14, each group on its own. Where the density is monotone over the
    whole range the interval ends at that end of the grid (α = 0 or 1 − prob). Other
    densities (several peaks) take a scan: the width at ``points`` values of α (twice as many
    in the first round), then again within the two cells around the narrowest, ``rounds``
    times (each round narrows the bracket 8-fold: α to ~1e-9 of 1 − prob). A known value
    gives (value, value).
    """
    gshape = m.grid.shape[:-1]
    t = m.grid.shape[-1]
    flat = Marginal(*(np.reshape(v, (-1, t)) for v in (m.grid, m.density, m.cdf_values)))
    known = flat.known
    alpha = np.zeros(known.shape)
    one = _unimodal(flat) & ~known
    for rows, solve in ((one, _hdi_newton), (~one & ~known, _hdi_scan)):
        idx = np.flatnonzero(rows)
        if idx.size:
            sub = Marginal(flat.grid[idx], flat.density[idx], flat.cdf_values[idx])
            alpha[idx] = solve(sub, prob, points, rounds)
    lower, upper = _invert(flat, alpha)[0], _invert(flat, np.minimum(alpha + prob, 1.0))[0]
    value = flat.grid[:, 0]
    return (np.where(known, value, lower).reshape(gshape),
            np.where(known, value, upper).reshape(gshape))  # fmt: skip


def _unimodal(m: Marginal) -> np.ndarray:
    """Flag the rows (G, T) whose grid density rises to one peak and then falls.

    Changes below 1e-9 of the peak count as flat (rounding in the far tails).
    """
    d = m.density
    with np.errstate(invalid="ignore"):
        tol = 1e-9 * np.max(d, axis=-1, keepdims=True)
        step = np.diff(d, axis=-1)
    fell = np.cumsum(step < -tol, axis=-1) > 0
    return ~np.any(fell & (step > tol), axis=-1) & np.all(np.isfinite(d), axis=-1)


def _hdi_newton(m: Marginal, prob: float, points: int, rounds: int) -> np.ndarray:
    """α of the narrowest interval of unimodal rows: f(Q(α + prob)) = f(Q(α)) (see hdi)."""
    top = 1.0 - prob
    ends = np.array([0.0, top])[:, None]
    _, f_lo, _ = _invert(m, ends)  # the lower end at α = 0 and at α = 1 − prob
    _, f_hi, _ = _invert(m, np.minimum(ends + prob, 1.0))
    # r(α) = f(upper) − f(lower) > 0: the interval narrows as α grows.
    at_lo, at_hi = f_hi[0] - f_lo[0] <= 0, f_hi[1] - f_lo[1] >= 0
    lo, hi = np.zeros(at_lo.shape), np.full(at_lo.shape, top)
    alpha = np.where(at_lo, 0.0, np.where(at_hi, top, top / 2))
    active = ~(at_lo | at_hi)
    for _ in range(100):
        if not active.any():
            break
        _, fl, sl = _invert(m, alpha)
        _, fu, su = _invert(m, np.minimum(alpha + prob, 1.0))
        r = fu - fl
        lo, hi = np.where(r > 0, alpha, lo), np.where(r > 0, hi, alpha)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = alpha - r / (su / fu - sl / fl)  # dQ(α)/dα = 1 / f: r' = f'/f (upper − lower)
        ok = (step >= lo) & (step <= hi) & np.isfinite(step)
        new = np.where(ok, step, (lo + hi) / 2)
        moved = np.abs(new - alpha) > 1e-14
        alpha = np.where(active, new, alpha)
        active &= moved & (hi - lo > 1e-15)
    return alpha


def _hdi_scan(m: Marginal, prob: float, points: int, rounds: int) -> np.ndarray:
    """α of the narrowest interval by scanning the width over α (rows of any shape)."""
    lo, hi = np.zeros(m.grid.shape[0]), np.full(m.grid.shape[0], 1.0 - prob)
    for r in range(rounds):
        count = 2 * points - 1 if r == 0 else points
        alpha = lo + (hi - lo) * np.linspace(0.0, 1.0, count)[:, None]
        width = m.quantile(np.minimum(alpha + prob, 1.0)) - m.quantile(alpha)
        best = np.argmin(width, axis=0)
        step = (hi - lo) / (count - 1)
        lo, hi = (lo + np.maximum(best - 1, 0) * step,
                  lo + np.minimum(best + 1, count - 1) * step)  # fmt: skip
    return (lo + hi) / 2


# ----------------------------------------------------------------------------- test-set θ


def _whole_counts(name: str, value) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf" or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must hold finite whole numbers; got {arr!r}.")
    if np.any(arr < 0) or np.any(arr != np.round(arr)):
        bad = np.unique(arr[(arr < 0) | (arr != np.round(arr))])[:5].tolist()
        raise ValueError(f"{name} must hold whole numbers >= 0; got {bad}. Pass the counts.")
    return arr.astype(np.int64)


def test_set_theta_draws(theta, q0, q1, k, n, m0, m1, *, design: str = "random", rng=None):
    """Draws of the test-set θ (the share truly correct among this evaluation's items).

    Given posterior draws of (θ, q0, q1), the number T_u of truly correct items among the n
    unlabelled (test) items, k of them judged correct, is drawn from its posterior
    predictive: with p = θ q1 + (1 − θ)(1 − q0),

        T_u = Bin(k, θ q1 / p) + Bin(n − k, θ (1 − q1) / (1 − p))   (independent),

    the truly correct among the judged-correct and the judged-incorrect items. Then

    * ``design="random"`` (the labelled items are a random subset of this evaluation's
      items, whose truth is known): θ_test = (m1 + T_u) / (n + m0 + m1);
    * ``design="stratified"`` (the labelled items are a separate calibration set):
      θ_test = T_u / n, the share among the n test items.

    Parameters
    ----------
    theta, q0, q1 : array_like of float
        Posterior draws, shape ``(draws, *groups)`` or anything broadcasting with the counts.
    k, n : array_like of int
        Judged-correct and total unlabelled (test) items per group (k ≤ n).
    m0, m1 : array_like of int
        Labelled items humans called incorrect / correct per group (only their sum and m1
        enter, and only under the random design).
    design : {"random", "stratified"}, default "random"
        The labelling design (see above).
    rng : numpy.random.Generator or int, optional
        Random generator or seed.

    Returns
    -------
    numpy.ndarray
        θ_test, of the broadcast shape of all arguments. NaN where the denominator is 0
        (no item at all; under the stratified design, n = 0). Where p = 0 (or 1) k must be 0
        (or n) and that binomial term is 0.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesjudge.core.exact import test_set_theta_draws
    >>> rng = np.random.default_rng(0)
    >>> theta = rng.beta(30, 70, size=(1000, 1))
    >>> t = test_set_theta_draws(theta, 0.8, 0.9, k=738, n=1800, m0=140, m1=60, rng=1)
    >>> t.shape, bool(0.25 < t.mean() < 0.35)
    ((1000, 1), True)

    Every labelled item is part of the evaluation: with no unlabelled items the test-set θ
    is the labelled share exactly.

    >>> test_set_theta_draws(theta[:2], 0.8, 0.9, k=0, n=0, m0=140, m1=60, rng=1).ravel()
    array([0.3, 0.3])
    """
    design = check_design(design, "design")
    rng = np.random.default_rng(rng)
    params = {}
    for name, v in (("theta", theta), ("q0", q0), ("q1", q1)):
        arr = np.asarray(v, dtype=float)
        if np.any(~np.isfinite(arr)) or np.any((arr < 0) | (arr > 1)):
            raise ValueError(f"{name} must hold probabilities in [0, 1] (posterior draws).")
        params[name] = arr
    k, n, m0, m1 = (_whole_counts(name, v) for name, v in
                    (("k", k), ("n", n), ("m0", m0), ("m1", m1)))  # fmt: skip
    if np.any(k > n):
        raise ValueError("k must not exceed n (k of the n unlabelled items judged correct).")
    th, a0, a1 = params["theta"], params["q0"], params["q1"]
    th, a0, a1, k, n, m0, m1 = np.broadcast_arrays(th, a0, a1, k, n, m0, m1)
    p = th * a1 + (1 - th) * (1 - a0)
    with np.errstate(divide="ignore", invalid="ignore"):
        r1 = np.where(p > 0, th * a1 / p, 0.0)  # P(truly correct | judged correct)
        r0 = np.where(p < 1, th * (1 - a1) / (1 - p), 0.0)  # … | judged incorrect
    # p = 0 with k > 0 (or p = 1 with k < n) has likelihood 0: no posterior draw lands there.
    t_u = rng.binomial(k, np.clip(r1, 0.0, 1.0)) + rng.binomial(n - k, np.clip(r0, 0.0, 1.0))
    if design == "random":
        num, den = m1 + t_u, n + m0 + m1
    else:
        num, den = t_u, n
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


# Its name starts with "test": not a test function for pytest (where a test module imports it).
test_set_theta_draws.__test__ = False
