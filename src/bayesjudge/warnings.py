"""Warning classes raised by bayesjudge.

Every warning says what happened, with numbers, and what to do about it. They share the
base class :class:`BayesJudgeWarning` so that users can filter all of them at once::

    import warnings
    import bayesjudge

    warnings.simplefilter("ignore", bayesjudge.BayesJudgeWarning)
"""

from __future__ import annotations

__all__ = [
    "BayesJudgeWarning",
    "ConvergenceWarning",
    "LowJudgeQualityWarning",
    "MissingLabelWarning",
    "SmallSampleWarning",
]


class BayesJudgeWarning(UserWarning):
    """Base class of every warning that bayesjudge emits."""


class LowJudgeQualityWarning(BayesJudgeWarning):
    """The judge's Youden index J = q0 + q1 - 1 is at or near zero.

    The corrected estimate divides by J, so its error is amplified by 1/J; when J <= 0 the
    judge is no better than chance and the correction is unstable or meaningless.
    """


class SmallSampleWarning(BayesJudgeWarning):
    """A group has too few test or calibration items for the requested quantity."""


class MissingLabelWarning(BayesJudgeWarning):
    """Rows with a missing judge or human label were dropped while counting."""


class ConvergenceWarning(BayesJudgeWarning):
    """The sampler's diagnostics (divergences, r_hat, effective sample size) flag a problem.

    The message gives the numbers and what to try: more tuning or draws, a higher
    ``target_accept``, or another calibration model.
    """
