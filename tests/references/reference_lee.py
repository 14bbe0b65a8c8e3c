"""Reference implementation of Lee et al. (the oracle for ``bayesjudge.core.correction``).

Transcribed verbatim from Appendix C ("Code", Figure 8) of

    Lee, Zeng, Jeong, Sohn, Lee. *How to Correctly Report LLM-as-a-Judge Evaluations*
    (arXiv:2511.21140), /work/shared/papers/000_4a6ed470f8b92b45.txt, lines 499-519.

Do not edit the three functions below: they are the reference that our vectorised code must
reproduce. The block is excluded from ``ruff format`` so the spacing stays as published.
Known behaviour of the reference that ``bayesjudge`` deliberately does not copy:

* when the smoothed Youden index ``q0~ + q1~ - 1 < 0`` the standard error ``se`` is negative,
  so ``confidence_interval`` returns ``(upper, lower)`` in the wrong order;
* when ``q0~ + q1~ - 1 == 0`` it raises ``ZeroDivisionError``.
"""

# fmt: off
from math import sqrt  # noqa: I001 (verbatim transcription)
from scipy.stats import norm

def clip(x, low=0.0, high=1.0):
    return max(low, min(high, x))

def point_estimator(p, q0, q1):
    """Compute the adjusted point estimate."""
    th = (p+q0-1)/(q0+q1-1)
    return clip(th)

def confidence_interval(p, q0, q1, n, m0, m1, alpha=0.05):
    """Compute the adjusted (1 - alpha) confidence interval."""
    z = norm.ppf(1-alpha/2)
    p, q0, q1 = (n*p+z**2/2)/(n+z**2), (m0*q0+1)/(m0+2), (m1*q1+1)/(m1+2)
    n, m0, m1 = n+z**2, m0+2, m1+2
    th = (p+q0-1)/(q0+q1-1)
    dth = 2*z**2*(-(1-th)*q0*(1-q0)/m0+th*q1*(1-q1)/m1)
    se = sqrt(p*(1-p)/n+(1-th)**2*q0*(1-q0)/m0+th**2*q1*(1-q1)/m1)/(q0+q1-1)
    return clip(th+dth-z*se), clip(th+dth+z*se)
# fmt: on
