"""Tensor quadrature of the full random-design likelihood of one group — an independent oracle.

The random labelling design (issue 15): the judge grades N items, humans label a random subset;
n, k count the unlabelled items (k judged correct), m0, m1 the labelled items humans called
incorrect / correct and tn, tp those of them the judge agreed with. The full likelihood

    Bin(k; n, p) · Bin(tn; m0, q0) · Bin(tp; m1, q1) · Bin(m1; m0 + m1, θ),
    p = θ q1 + (1 − θ)(1 − q0),

is written here term by term with ``scipy.stats.binom.logpmf`` (the last factor is what the
random design adds; ``design="stratified"`` drops it) and ``scipy.stats.beta.logpdf`` priors,
and integrated over (θ, q0, q1) by brute force. Nothing is shared with
``bayesjudge.core.exact``: no prior update, no convolution identity, no latent counts.

Method. A box holding the mass is located by three passes of a 48³ midpoint grid over
shrinking boxes (start [0, 1]³; keep the cells within 40 nats of the maximum, plus two cells
either side). The marginal density of each variable is then evaluated at ``points`` evenly
spaced values over its side of the box, each value integrating the other two variables by a
``nodes`` × ``nodes`` Gauss-Legendre tensor rule on their sides of the box. Mean and sd by
Simpson's rule, the CDF by the cumulative Simpson rule at the points, interpolated by scipy's
cubic Hermite spline with the density as slope; quantiles solve that spline. A known q (a
float prior) is a single node of weight 1.

Own error (defaults ``points=401, nodes=48``, against ``points=1601, nodes=128`` on the cases
of ``tests/core/test_exact_random_design.py``): ≤ 2e-8 in the means and sds, ≤ 2e-7 in the
2.5/50/97.5 % quantiles. A large n makes the test likelihood a narrow ridge in (q0, q1): at
n = 20,000 (case "n>>m") 48 nodes left 1.3e-4 in a quantile and 128 are used (1.4e-8 against
192 nodes and 1601 points). Cost: about 1 s per case at the defaults (2-core machine).
"""

from __future__ import annotations

import numpy as np
from scipy import integrate, interpolate, special, stats

VARIABLES = ("theta", "q0", "q1")


def log_likelihood(theta, q0, q1, counts, design="random"):
    """Log of the full likelihood at (θ, q0, q1) (broadcast), scipy.stats binomial terms.

    ``counts`` = (k, n, tn, m0, tp, m1).
    """
    k, n, tn, m0, tp, m1 = counts
    p = theta * q1 + (1 - theta) * (1 - q0)
    out = (
        stats.binom.logpmf(k, n, p)
        + stats.binom.logpmf(tn, m0, q0)
        + stats.binom.logpmf(tp, m1, q1)
    )
    if design == "random":
        out = out + stats.binom.logpmf(m1, m0 + m1, theta)
    return out


def _log_prior(x, prior):
    if isinstance(prior, float):
        return np.zeros_like(x)
    return stats.beta.logpdf(x, *prior)


def _log_factors(counts, priors, design):
    """The log posterior as test(θ, q0, q1) + one 1-D term per variable (scipy densities).

    The 3-D test term k log p + (n − k) log(1 − p) is ``binom.logpmf(k, n, p)`` less the
    constant log C(n, k) (written out: scipy's logpmf costs 8 times as much on 10⁷ points;
    :func:`log_likelihood` keeps the scipy form, and the two are compared at construction).
    """
    k, n, tn, m0, tp, m1 = counts

    def test(theta, q0, q1):
        p = theta * q1 + (1 - theta) * (1 - q0)
        with np.errstate(divide="ignore", invalid="ignore"):
            return special.xlogy(k, p) + special.xlog1py(n - k, -p)

    def one(var, x):
        with np.errstate(divide="ignore", invalid="ignore"):
            if var == "theta":
                out = _log_prior(x, priors["theta"])
                if design == "random":
                    out = out + stats.binom.logpmf(m1, m0 + m1, x)
            elif var == "q0":
                out = _log_prior(x, priors["q0"]) + stats.binom.logpmf(tn, m0, x)
            else:
                out = _log_prior(x, priors["q1"]) + stats.binom.logpmf(tp, m1, x)
        return np.where(np.isfinite(out), out, -np.inf)

    return test, one


def _log_post(theta, q0, q1, counts, priors, design):
    """Log posterior on the tensor grid θ (T, 1, 1), q0 (1, A, 1), q1 (1, 1, B)."""
    test, one = _log_factors(counts, priors, design)
    out = test(theta, q0, q1) + one("theta", theta) + one("q0", q0) + one("q1", q1)
    return np.where(np.isfinite(out), out, -np.inf)


class RandomDesignPosterior:
    """Marginal posteriors of θ, q0, q1 of one group by tensor quadrature.

    ``quantile(var, prob)``, ``mean(var)``, ``sd(var)``, ``cdf(var, x)``.
    """

    def __init__(self, k, n, tn, m0, tp, m1, *, theta_prior=(1.0, 1.0), q0_prior=(1.0, 1.0),
                 q1_prior=(1.0, 1.0), design="random", points=401, nodes=48):  # fmt: skip
        counts = (k, n, tn, m0, tp, m1)
        priors = {"theta": theta_prior, "q0": q0_prior, "q1": q1_prior}
        pts = np.array([0.1, 0.5, 0.9])
        full = log_likelihood(pts, pts[::-1], pts[[1, 2, 0]], counts, design)
        test, one = _log_factors(counts, priors, design)
        split = test(pts, pts[::-1], pts[[1, 2, 0]]) + one("theta", pts) - _log_prior(
            pts, theta_prior) + one("q0", pts[::-1]) - _log_prior(pts[::-1], q0_prior) + one(
            "q1", pts[[1, 2, 0]]) - _log_prior(pts[[1, 2, 0]], q1_prior)  # fmt: skip
        assert np.allclose(split - full, split[0] - full[0], rtol=0, atol=1e-9)
        known = {v: priors[v] if isinstance(priors[v], float) else None for v in VARIABLES}
        box = {v: (0.0, 1.0) for v in VARIABLES}
        for _ in range(3):
            box = self._locate(box, known, counts, priors, design, cells=48)
        self.grid, self.density, self.cdf_values = {}, {}, {}
        gl_x, gl_w = np.polynomial.legendre.leggauss(nodes)
        rules = {}
        for v in VARIABLES:
            if known[v] is not None:
                rules[v] = (np.array([known[v]]), np.array([1.0]))
            else:
                lo, hi = box[v]
                rules[v] = ((lo + hi) / 2 + (hi - lo) / 2 * gl_x, (hi - lo) / 2 * gl_w)
        for v in VARIABLES:
            if known[v] is not None:
                self.grid[v] = np.array([known[v]])
                continue
            x = np.linspace(*box[v], points)
            a, b = (u for u in VARIABLES if u != v)
            (xa, wa), (xb, wb) = rules[a], rules[b]
            lp = np.empty((points, xa.size, xb.size))
            for s in range(0, points, 64):
                args = {v: x[s : s + 64, None, None], a: xa[None, :, None], b: xb[None, None, :]}
                lp[s : s + 64] = _log_post(args["theta"], args["q0"], args["q1"], counts,
                                           priors, design)  # fmt: skip
            top = lp.max()
            dens = np.einsum("tij,i,j->t", np.exp(lp - top), wa, wb)
            dens /= integrate.simpson(dens, x=x)
            self.grid[v], self.density[v] = x, dens
            self.cdf_values[v] = integrate.cumulative_simpson(dens, x=x, initial=0.0)

    @staticmethod
    def _locate(box, known, counts, priors, design, cells):
        axes = {}
        for v in VARIABLES:
            if known[v] is not None:
                axes[v] = (np.array([known[v]]), None)
            else:
                edges = np.linspace(*box[v], cells + 1)
                axes[v] = ((edges[:-1] + edges[1:]) / 2, edges)
        lp = _log_post(axes["theta"][0][:, None, None], axes["q0"][0][None, :, None],
                       axes["q1"][0][None, None, :], counts, priors, design)  # fmt: skip
        keep = lp > lp.max() - 40.0
        new = {}
        for i, v in enumerate(VARIABLES):
            edges = axes[v][1]
            if edges is None:
                new[v] = box[v]
                continue
            idx = np.flatnonzero(keep.any(axis=tuple(j for j in range(3) if j != i)))
            new[v] = (edges[max(idx[0] - 2, 0)], edges[min(idx[-1] + 3, edges.size - 1)])
        return new

    def _known(self, var):
        return self.grid[var].size == 1

    def mean(self, var: str) -> float:
        if self._known(var):
            return float(self.grid[var][0])
        return float(integrate.simpson(self.grid[var] * self.density[var], x=self.grid[var]))

    def sd(self, var: str) -> float:
        if self._known(var):
            return 0.0
        x, d = self.grid[var], self.density[var]
        mu = self.mean(var)
        return float(np.sqrt(integrate.simpson((x - mu) ** 2 * d, x=x)))

    def cdf(self, var: str, value) -> np.ndarray:
        if self._known(var):
            return (np.asarray(value) >= self.grid[var][0]).astype(float)
        x = np.clip(value, self.grid[var][0], self.grid[var][-1])
        return np.clip(self._spline(var)(x), 0.0, 1.0)

    def quantile(self, var: str, prob) -> np.ndarray:
        if self._known(var):
            return np.full(np.shape(prob), self.grid[var][0])
        spline, x = self._spline(var), self.grid[var]
        out = []
        for p in np.ravel(prob):
            roots = spline.solve(p, extrapolate=False)
            roots = roots[(roots >= x[0]) & (roots <= x[-1])]
            out.append(roots[0] if roots.size else (x[0] if p <= 0.5 else x[-1]))
        return np.array(out).reshape(np.shape(prob))

    def _spline(self, var):
        """The CDF as scipy's cubic Hermite spline with the density as slope."""
        return interpolate.CubicHermiteSpline(self.grid[var], self.cdf_values[var],
                                              self.density[var])  # fmt: skip
