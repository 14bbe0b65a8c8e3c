"""bayesjudge.core.jury.dawid_skene against crowd-kit 1.4.2's DawidSkene (vendored reference).

Both start from the soft majority vote (the share of a task's workers giving each label), run
the same EM updates and so reach the same fixed point. crowd-kit works on item-level rows
(task, worker, label), we on pattern counts; its ``true_labels`` replace a task's posterior
by its truth and keep the task in the mean that gives the prior, which is our
``design="random"``.

Differences, all below the tolerances: crowd-kit clips error-matrix counts and priors at
1e-10. Its stopping rule (the evidence lower bound per row rising by less than ``tol``) is not
used: it stopped one case here after a few steps (the bound it evaluates can dip), and with
``tol=0`` it never stops (a rise of exactly 0.0 is not below 0). Since both iterate the same
map from the same start, crowd-kit runs a fixed number of steps (``tol=-inf``): ours to
``tol=1e-11`` plus 10.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

# pandas is a dependency of bayesjudge and attrs one of hypothesis (the test extra), so the
# vendored crowd-kit code always imports: this check never skips.
from crowdkit_dawid_skene import DawidSkene  # tests/references, vendored

from bayesjudge.core.jury import dawid_skene

TOL = 1e-9  # measured gaps: below 1e-10 for θ, q0, q1 and posteriors


def simulate(seed, n=250, theta=0.6):
    """Item-level verdicts of 4 judges with 15% missing entries (every item judged once)."""
    rng = np.random.default_rng(seed)
    q0, q1 = np.array([0.8, 0.85, 0.9, 0.7]), np.array([0.7, 0.9, 0.85, 0.8])
    truth = rng.random(n) < theta
    says = np.where(truth[:, None], rng.random((n, 4)) < q1, rng.random((n, 4)) >= q0)
    missing = rng.random((n, 4)) < 0.15
    missing[missing.all(axis=1), 0] = False
    return np.where(missing, -1, says.astype(int)), truth


def long_format(verdicts):
    rows = [
        (f"t{i}", f"w{j}", int(verdicts[i, j]))
        for i in range(verdicts.shape[0])
        for j in range(verdicts.shape[1])
        if verdicts[i, j] >= 0
    ]
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


@pytest.mark.parametrize("n_gold", [0, 60])
def test_dawid_skene_matches_crowdkit(n_gold):
    verdicts, truth = simulate(seed=11 + n_gold)
    n = len(truth)
    gold = np.arange(n) < n_gold
    pats, inv = np.unique(verdicts, axis=0, return_inverse=True)
    test = np.bincount(inv[~gold], minlength=len(pats))
    lab = np.stack([np.bincount(inv[gold & (truth == t)], minlength=len(pats)) for t in (0, 1)])
    true_labels = (
        pd.Series(truth[gold].astype(int), index=[f"t{i}" for i in np.flatnonzero(gold)])
        if n_gold
        else None
    )
    ours = dawid_skene(pats, test, lab if n_gold else None, design="random", tol=1e-11)
    assert ours.converged
    with warnings.catch_warnings():  # pandas deprecations inside crowd-kit's code
        warnings.simplefilter("ignore")
        ck = DawidSkene(n_iter=ours.n_iter + 10, tol=-np.inf)
        ck.fit(long_format(verdicts), true_labels)

    assert ours.theta == pytest.approx(ck.priors_[1], abs=TOL)
    errors = ck.errors_  # errors_.loc[(worker, observed), true] = P(observed | true)
    np.testing.assert_allclose(ours.q0, [errors.loc[(f"w{j}", 0), 0] for j in range(4)], atol=TOL)
    np.testing.assert_allclose(ours.q1, [errors.loc[(f"w{j}", 1), 1] for j in range(4)], atol=TOL)
    ck_post = ck.probas_[1].reindex([f"t{i}" for i in range(n)]).to_numpy()
    np.testing.assert_allclose(ours.posterior[inv[~gold]], ck_post[~gold], atol=TOL)
    # Gold posteriors are the truth (crowd-kit's bound clips them in place at 1e-10).
    np.testing.assert_allclose(ck_post[gold], truth[gold], atol=1e-9)
