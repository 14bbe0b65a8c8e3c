"""Slow coverage of the paired model (issue 5): Δθ intervals keep their coverage and are narrower.

R data sets of the design in tests/models/test_paired_model.py (two systems on the same 1000 items,
correlation of correctness 0.6, one judge with q0 = q1 = 0.9 and 1000 + 1000 calibration items
per system) are fitted with the paired and the unpaired model. One model structure each, so
nutpie compiles twice and every further fit only samples (about 2 s per model and data set
on 2 cores; R = 200 takes about 15 minutes).

Checks, with binomial Monte Carlo standard errors over the R replications:

* coverage of the true Δθ by the 95 % interval >= 0.95 − 3 MCSE (MCSE = sqrt(0.95 · 0.05 / R))
  for both models;
* the mean posterior sd of Δθ of each model agrees with its asymptotic (Fisher) sd,
  tests/references/paired_reference.py, within 3 standard errors of the mean over replications
  plus 5 %
  (a finite-sample posterior is not exactly the asymptotic normal one; in a smaller design,
  n = 1000 and m0 = m1 = 200, the unpaired posterior sd was 4 % above its Fisher sd);
* the paired sd is smaller than the unpaired one in at least 90 % of the data sets.

Measured (R = 200, seeds 5000-5199, 358 s on 2 shared cores): coverage paired 0.945, unpaired
0.980 (MCSE 0.015; the unpaired interval ignores the positive covariance and is too wide);
mean sd paired 0.0252 (Fisher 0.0249), unpaired 0.0303 (Fisher 0.0302); ratio
sd_paired / sd_unpaired mean 0.831, sd 0.027 (Fisher 0.824); paired narrower in all 200 data
sets; no ConvergenceWarning.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from paired_reference import design_counts, fisher_sd
from test_paired_model import DESIGN

import bayesjudge as bj

R = 200


@pytest.mark.slow
def test_paired_difference_keeps_coverage_and_is_narrower():
    d = DESIGN
    truth = d["theta"][0] - d["theta"][1]
    rows = []
    warned = 0
    for rep in range(R):
        counts, _ = design_counts(
            d["theta"], d["rho"], d["q0"], d["q1"], d["n"], d["m"], d["m"], seed=5000 + rep
        )
        out = {}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for paired in (True, False):
                diff = bj.fit(counts, paired=paired, random_seed=rep).compare(ci_prob=0.95)
                lo, hi = diff["ci"].values.ravel()
                out[paired] = (float(diff["sd"].values.ravel()[0]), lo <= truth <= hi)
        warned += any(issubclass(w.category, bj.ConvergenceWarning) for w in caught)
        rows.append((out[True][0], out[False][0], out[True][1], out[False][1]))
    rows = np.array(rows, dtype=float)
    sd_p, sd_u, cov_p, cov_u = rows.T
    mcse = np.sqrt(0.95 * 0.05 / R)
    expected_p = fisher_sd(d["theta"], d["rho"], d["q0"], d["q1"], d["n"], d["m"], d["m"],
                           paired=True)  # fmt: skip
    expected_u = fisher_sd(d["theta"], d["rho"], d["q0"], d["q1"], d["n"], d["m"], d["m"],
                           paired=False)  # fmt: skip
    report = (
        f"R={R}: coverage paired {cov_p.mean():.3f}, unpaired {cov_u.mean():.3f} "
        f"(MCSE {mcse:.3f}); mean sd paired {sd_p.mean():.4f} (Fisher {expected_p:.4f}), "
        f"unpaired {sd_u.mean():.4f} (Fisher {expected_u:.4f}); ratio mean "
        f"{(sd_p / sd_u).mean():.3f} sd {(sd_p / sd_u).std(ddof=1):.3f} (Fisher "
        f"{expected_p / expected_u:.3f}); paired narrower in {(sd_p < sd_u).mean():.3f}; "
        f"reps with ConvergenceWarning {warned}"
    )
    print(report)
    assert warned <= 0.02 * R, report
    assert cov_p.mean() >= 0.95 - 3 * mcse, report
    assert cov_u.mean() >= 0.95 - 3 * mcse, report
    for sds, expected in ((sd_p, expected_p), (sd_u, expected_u)):
        se = sds.std(ddof=1) / np.sqrt(R)
        assert abs(sds.mean() - expected) <= 3 * se + 0.05 * expected, report
    assert (sd_p < sd_u).mean() >= 0.9, report
