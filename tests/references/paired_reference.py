"""Independent references for the paired model (tests/models/test_paired_model*.py).

* :func:`true_cells` — the joint correctness cells of two systems with accuracies θ_a, θ_b and
  phi correlation ρ: π11 = θ_a θ_b + ρ σ_a σ_b (σ² = θ(1 − θ)), as
  ``bj.simulate.simulate_paired_items`` draws them.
* :func:`fisher_sd` — the asymptotic sd of Δθ = θ_a − θ_b: sqrt(gᵀ I⁻¹ g) with the expected
  Fisher information I of the paired model (multinomial joint verdict table + calibration
  binomials) or of the unpaired one (two binomials + calibration binomials), from finite
  differences of the cell probabilities. For the unpaired model this is the delta-method
  variance of the Rogan–Gladen difference, [p(1 − p)/n + (1 − θ)² q0(1 − q0)/m0 +
  θ² q1(1 − q1)/m1] / J² per system; the paired one subtracts 2 ρ σ_a σ_b / n.
* :func:`grid_posterior` — posterior mean and sd of θ_a, θ_b and Δθ for K = 2 with known
  q0, q1 and a flat Dirichlet(1, 1, 1, 1) prior on the cells, by the midpoint rule on a
  regular grid over (π00, π01, π10), π11 = 1 − the rest. No code shared with bayesjudge.
* :func:`design_counts` — simulated item frames (known truth) counted with
  ``JudgeCounts.from_frames(..., item="item")``.
"""

from __future__ import annotations

import numpy as np
from scipy import special

import bayesjudge as bj

# Cells in the order 00, 01, 10, 11 ("10": first system correct, second incorrect).
CELLS = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])


def true_cells(theta, rho) -> np.ndarray:
    ta, tb = theta
    both = ta * tb + rho * np.sqrt(ta * (1 - ta) * tb * (1 - tb))
    return np.array([1 - ta - tb + both, tb - both, ta - both, both])


def _verdict_given_truth(q0, q1) -> np.ndarray:
    """P(v | t) for K = 2, shape (pattern, cell); q0, q1 per system."""
    out = np.ones((4, 4))
    for v in range(4):
        for t in range(4):
            for s in range(2):
                said, truth = CELLS[v, s], CELLS[t, s]
                if truth:
                    out[v, t] *= q1[s] if said else 1 - q1[s]
                else:
                    out[v, t] *= 1 - q0[s] if said else q0[s]
    return out


def fisher_sd(theta, rho, q0, q1, n, m0, m1, *, paired: bool) -> float:
    """Asymptotic posterior sd of θ_a − θ_b (same q0, q1 for both systems, own calibration)."""

    def probabilities(phi):
        if paired:
            cells = np.array([phi[0], phi[1], phi[2], 1 - phi[:3].sum()])
            qs0, qs1 = phi[3::2], phi[4::2]
            test = [_verdict_given_truth(qs0, qs1) @ cells]
        else:
            th, qs0, qs1 = phi[:2], phi[2::2], phi[3::2]
            p = th * qs1 + (1 - th) * (1 - qs0)
            test = [np.array([1 - p[0], p[0]]), np.array([1 - p[1], p[1]])]
        cal = [np.array([1 - q, q]) for q in (*qs0, *qs1)]
        return test, cal

    if paired:
        phi0 = np.array([*true_cells(theta, rho)[:3], q0, q1, q0, q1])
        grad = np.array([0, -1, 1, 0, 0, 0, 0], float)  # π10 − π01
    else:
        phi0 = np.array([*theta, q0, q1, q0, q1], float)
        grad = np.array([1, -1, 0, 0, 0, 0], float)
    sizes = [n] * (1 if paired else 2) + [m0, m0, m1, m1]
    h = 1e-6
    base = [*probabilities(phi0)[0], *probabilities(phi0)[1]]
    jac = []
    for i in range(phi0.size):
        step = np.zeros_like(phi0)
        step[i] = h
        up, down = probabilities(phi0 + step), probabilities(phi0 - step)
        jac.append(
            [(a - b) / (2 * h) for a, b in zip([*up[0], *up[1]], [*down[0], *down[1]], strict=True)]
        )
    info = np.zeros((phi0.size, phi0.size))
    for j, (prob, size) in enumerate(zip(base, sizes, strict=True)):
        g = np.array([jac[i][j] for i in range(phi0.size)])  # (param, outcome)
        info += size * (g / prob) @ g.T
    return float(np.sqrt(grad @ np.linalg.solve(info, grad)))


def grid_posterior(joint, n_unshared, k_unshared, q0, q1, cells: int = 160) -> dict:
    """Posterior mean/sd of θ_a, θ_b, Δθ: K = 2, known q's, flat Dirichlet over 4 cells.

    ``joint`` holds the shared items per verdict pattern in the order 00, 01, 10, 11;
    ``n_unshared``, ``k_unshared`` the other items per system (Binomial(n, p_s)).
    """
    q0, q1 = np.broadcast_to(q0, 2), np.broadcast_to(q1, 2)
    given = _verdict_given_truth(q0, q1)
    mid = (np.arange(cells) + 0.5) / cells
    acc = {k: 0.0 for k in ("w", "a", "aa", "b", "bb", "d", "dd")}
    # Normalise with the maximum over the grid, found on a first pass.
    logs = []
    for x in mid:  # π00, one slice at a time
        y, z = np.meshgrid(mid, mid, indexing="ij")  # π01, π10
        rest = 1 - x - y - z
        inside = rest > 0
        if not inside.any():
            continue
        pi = np.stack([np.full(y[inside].shape, x), y[inside], z[inside], rest[inside]])
        p_v = given @ pi
        lp = (np.asarray(joint)[:, None] * np.log(p_v)).sum(0)
        theta_a, theta_b = pi[2] + pi[3], pi[1] + pi[3]
        for s, th in enumerate((theta_a, theta_b)):
            p = th * q1[s] + (1 - th) * (1 - q0[s])
            lp = (
                lp
                + special.xlogy(k_unshared[s], p)
                + special.xlog1py(n_unshared[s] - k_unshared[s], -p)
            )
        logs.append((lp, theta_a, theta_b))
    top = max(lp.max() for lp, _, _ in logs)
    for lp, theta_a, theta_b in logs:
        w = np.exp(lp - top)
        d = theta_a - theta_b
        acc["w"] += w.sum()
        for key, v in (("a", theta_a), ("b", theta_b), ("d", d)):
            acc[key] += (w * v).sum()
            acc[key * 2] += (w * v * v).sum()
    out = {}
    for key, name in (("a", "theta_a"), ("b", "theta_b"), ("d", "difference")):
        mean = acc[key] / acc["w"]
        out[name] = (mean, np.sqrt(acc[key * 2] / acc["w"] - mean**2))
    return out


def design_counts(theta, rho, q0, q1, n, m0, m1, *, seed, systems=("first", "second"), shared=None):
    """Counts of a simulated paired design: n items per system, of which ``shared`` (default
    all) are answered by every system; each system has its own calibration set (m0, m1)."""
    systems = list(systems)
    frame = bj.simulate.simulate_paired_items(
        theta, q0, q1, n, correlation=rho, system=systems, random_seed=seed
    )
    if shared is not None and shared < n:
        # Items past ``shared`` get a distinct id per system: answered by that system only.
        alone = frame["item"] >= shared
        item = frame["item"].astype(str)
        frame["item"] = item.where(~alone, item + frame["system"])
    _, calibration = bj.simulate_items(
        theta, q0, q1, n=1, m0=m0, m1=m1, system=systems, random_seed=seed + 10**6
    )
    counts = bj.JudgeCounts.from_frames(frame, calibration, system="system", item="item")
    return counts, frame
