"""Brute-force 3-D grid posterior of (θ, q0, q1) for one group — an independent oracle.

Shares no code or idea with ``bayesjudge.core.exact`` beyond the model itself: the
unnormalised log posterior

    log π(θ) + log π(q0) + log π(q1) + k log p + (n − k) log(1 − p)
        + tn log q0 + (m0 − tn) log(1 − q0) + tp log q1 + (m1 − tp) log(1 − q1),

p = θ q1 + (1 − θ)(1 − q0), is evaluated at the midpoints of a regular grid of cells in the
original coordinates (θ, q0, q1), in chunks. Each marginal is the sum over the other two axes;
its CDF at the cell edges is the cumulative sum, and a quantile interpolates linearly inside its
cell (piecewise-constant density). The box is located by passes over shrinking boxes (start
[0, 1]³; keep the cells within 40 nats of the maximum, plus two cells either side).

A known q (a float prior) is a single point on its axis. Cost: ``cells**3`` evaluations;
``cells=240`` takes a few seconds.
"""

from __future__ import annotations

import numpy as np
from scipy import special


def _log_beta(x, ab):
    a, b = ab
    return special.xlogy(a - 1, x) + special.xlog1py(b - 1, -x) - special.betaln(a, b)


def _axis(lo, hi, cells, known):
    if known is not None:
        return np.array([known]), np.array([known, known])
    edges = np.linspace(lo, hi, cells + 1)
    return (edges[:-1] + edges[1:]) / 2, edges


def _log_post(theta, q0, q1, data, priors):
    n, k, m0, tn, m1, tp = data
    th, a0, a1 = theta[:, None, None], q0[None, :, None], q1[None, None, :]
    p = th * a1 + (1 - th) * (1 - a0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = special.xlogy(k, p) + special.xlog1py(n - k, -p)
        out = out + _log_beta(th, priors["theta"])
        for q, prior, hits, total in ((a0, priors["q0"], tn, m0), (a1, priors["q1"], tp, m1)):
            out = out + special.xlogy(hits, q) + special.xlog1py(total - hits, -q)
            if not isinstance(prior, float):
                out = out + _log_beta(q, prior)
    return np.where(np.isfinite(out), out, -np.inf)


def _grid_logpost(box, cells, data, priors, chunk=16):
    known = {v: priors[v] if isinstance(priors.get(v), float) else None for v in ("q0", "q1")}
    theta, te = _axis(*box[0], cells, None)
    q0, e0 = _axis(*box[1], cells, known["q0"])
    q1, e1 = _axis(*box[2], cells, known["q1"])
    lp = np.empty((theta.size, q0.size, q1.size))
    for s in range(0, theta.size, chunk):
        lp[s : s + chunk] = _log_post(theta[s : s + chunk], q0, q1, data, priors)
    return lp, (te, e0, e1)


class BrutePosterior:
    """Marginals of θ, q0, q1 on a brute-force grid (``quantile(var, prob)``, ``mean(var)``)."""

    def __init__(self, n, k, m0, tn, m1, tp, *, theta_prior=(1.0, 1.0), q0_prior=(1.0, 1.0),
                 q1_prior=(1.0, 1.0), cells=240, passes=3):  # fmt: skip
        data = (n, k, m0, tn, m1, tp)
        priors = {"theta": theta_prior, "q0": q0_prior, "q1": q1_prior}
        box = [(0.0, 1.0)] * 3
        for _ in range(passes):
            lp, edges = _grid_logpost(box, 60, data, priors)
            keep = lp > lp.max() - 40.0
            new = []
            for axis, e in enumerate(edges):
                if e[0] == e[-1]:
                    new.append((e[0], e[0]))
                    continue
                other = tuple(a for a in range(3) if a != axis)
                idx = np.flatnonzero(keep.any(axis=other))
                lo, hi = e[max(idx[0] - 2, 0)], e[min(idx[-1] + 3, e.size - 1)]
                new.append((lo, hi))
            box = new
        lp, self.edges = _grid_logpost(box, cells, data, priors)
        w = np.exp(lp - lp.max())
        w /= w.sum()
        self.mass = {
            "theta": w.sum((1, 2)),
            "q0": w.sum((0, 2)),
            "q1": w.sum((0, 1)),
        }
        self._edges = dict(zip(("theta", "q0", "q1"), self.edges, strict=True))

    def quantile(self, var: str, prob) -> np.ndarray:
        mass, edges = self.mass[var], self._edges[var]
        if edges[0] == edges[-1]:
            return np.full(np.shape(prob), edges[0])
        cdf = np.concatenate([[0.0], np.cumsum(mass)])
        return np.interp(prob, cdf, edges)

    def mean(self, var: str) -> float:
        edges = self._edges[var]
        mids = (edges[:-1] + edges[1:]) / 2 if edges[0] != edges[-1] else edges[:1]
        return float(self.mass[var] @ mids)


class LatentMixture:
    """Exact posterior of one group as a finite mixture of independent Betas — a second oracle.

    Augment the test items with X, the number truly correct, and Y1, the number of those the
    judge calls correct (Y0 = k − Y1 of the n − X truly incorrect ones are called correct).
    Given (X, Y1) the model is conjugate:

        θ | X ~ Beta(a + X, b + n − X),
        q1 | X, Y1 ~ Beta(a1 + tp + Y1, b1 + m1 − tp + X − Y1),
        q0 | X, Y1 ~ Beta(a0 + tn + n − X − Y0, b0 + m0 − tn + Y0),

    and the posterior weight of (X, Y1) is C(n, X) C(X, Y1) C(n − X, Y0) times the three
    Beta-function ratios (a known q contributes q^… (1 − q)^… instead). So every marginal
    CDF is a weighted sum of regularised incomplete Beta functions, exact to rounding; cost
    O(n · k) states, meant for n up to a few thousand. Shares nothing with the engine's
    quadrature.
    """

    def __init__(self, n, k, m0, tn, m1, tp, *, theta_prior=(1.0, 1.0), q0_prior=(1.0, 1.0),
                 q1_prior=(1.0, 1.0)):  # fmt: skip
        x = np.arange(n + 1)[:, None]
        y1 = np.arange(k + 1)[None, :]
        y0 = k - y1
        ok = (y1 <= x) & (y0 <= n - x)
        x, y1 = np.broadcast_arrays(x, y1)
        x, y1 = x[ok].astype(float), y1[ok].astype(float)
        y0 = k - y1
        a, b = theta_prior
        logw = (
            special.gammaln(n + 1) - special.gammaln(x + 1) - special.gammaln(n - x + 1)
            + special.gammaln(x + 1) - special.gammaln(y1 + 1) - special.gammaln(x - y1 + 1)
            + special.gammaln(n - x + 1) - special.gammaln(y0 + 1)
            - special.gammaln(n - x - y0 + 1)
            + special.betaln(a + x, b + n - x)
        )  # fmt: skip
        self.params = {"theta": (a + x, b + n - x)}
        for name, prior, hits, misses, s, f in (
            ("q1", q1_prior, tp, m1 - tp, y1, x - y1),
            ("q0", q0_prior, tn, m0 - tn, n - x - y0, y0),
        ):
            if isinstance(prior, float):
                logw = logw + special.xlogy(s, prior) + special.xlog1py(f, -prior)
                self.params[name] = prior
            else:
                pa, pb = prior[0] + hits, prior[1] + misses
                logw = logw + special.betaln(pa + s, pb + f)
                self.params[name] = (pa + s, pb + f)
        # States below max − 50 nats (weight < 2e-22 each, < 1e-16 all together) are dropped.
        keep = logw > logw.max() - 50.0
        w = np.exp(logw[keep] - logw.max())
        self.weights = w / w.sum()
        self.params = {v: p if isinstance(p, float) else (p[0][keep], p[1][keep])
                       for v, p in self.params.items()}  # fmt: skip

    def cdf(self, var: str, value: float) -> float:
        params = self.params[var]
        if isinstance(params, float):
            return float(value >= params)
        return float(self.weights @ special.betainc(*params, value))

    def quantile(self, var: str, prob) -> np.ndarray:
        from scipy.optimize import brentq

        params = self.params[var]
        if isinstance(params, float):
            return np.full(np.shape(prob), params)
        return np.array([brentq(lambda t, p=p: self.cdf(var, t) - p, 0.0, 1.0, xtol=1e-13,
                                rtol=1e-13) for p in np.atleast_1d(prob)])  # fmt: skip

    def mean(self, var: str) -> float:
        params = self.params[var]
        if isinstance(params, float):
            return params
        return float(self.weights @ (params[0] / (params[0] + params[1])))
