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
    "CalibrationDesignWarning",
    "CalibrationSizeWarning",
    "ConvergenceWarning",
    "DesignWarning",
    "IllConditionedJudgeWarning",
    "LowJudgeQualityWarning",
    "MissingLabelWarning",
    "NearTieWarning",
    "PooledCalibrationWarning",
    "SmallSampleWarning",
]


class BayesJudgeWarning(UserWarning):
    """Base class of every warning that bayesjudge emits.

    Names from the user's data (systems, strata, judges) appear in messages with control
    characters shown escaped (:func:`bayesjudge._text.terminal_safe`), so that a name holding a
    newline or an ANSI escape code cannot rewrite the terminal.
    """


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


class CalibrationDesignWarning(BayesJudgeWarning):
    """The judge behaves differently on the systems' answers.

    Raised when a ΔJ interval between two systems excludes 0, or a simultaneous (Bonferroni)
    interval of Δq0 or Δq1 does: Fiedler's App. C bias of a shared calibration set depends on
    q0 and q1 separately, so swapped errors bias Δθ even at ΔJ = 0. One calibration set shared
    between the systems is then not defensible: the comparison is biased by an amount
    amplified by 1/J (Fiedler, Sec. 4.4 and App. C). The message gives the difference with its
    interval and the bias that sharing implies; use system-specific (or, with three or more
    systems, hierarchical) calibration.
    """


class PooledCalibrationWarning(CalibrationDesignWarning):
    """One calibration set pooled over several groups does not fit them all.

    Raised where calibration is pooled over systems (or strata) whose own labels are known
    (``estimate(calibration="shared")``, ``fit(calibration="shared")``, the report) and the
    judge's specificity q0 or sensitivity q1 differs between the pooled groups (a chi-square
    test of homogeneity), or the bias that pooling adds to a group's estimate is shown to
    exceed half the standard error of the pooled estimate. The pooled interval is then narrow
    around a wrong value: the bias is amplified by 1/J, and a group where the judge is near chance
    (J ≈ 0) is corrected as if it were as good as the others. The message names the groups,
    their own q̂0, q̂1 and the bias pooling implies for each; use each group's own calibration
    (``calibration="own"`` / ``"separate"``) or a hierarchical model, and label calibration
    items of each group. A subclass of :class:`CalibrationDesignWarning`: filtering that
    filters this too. :func:`bayesjudge.diagnostics.check_pooled_calibration` states the rule.
    """


class DesignWarning(BayesJudgeWarning):
    """The labelling design was inferred from the item tables, not declared.

    Emitted by :meth:`bayesjudge.JudgeCounts.from_frames` when every labelled item of the
    calibration table is also a judged item of the test table (matching ``item=`` ids): the
    design is then taken to be ``"random"`` and each item is counted once. Pass
    ``design="random"`` to declare it and silence the warning.
    """


class NearTieWarning(BayesJudgeWarning):
    """A difference Δθ between two systems is a tie or a near tie.

    The Δθ interval includes 0 (a tie: the data do not say which system is better), or misses
    it by less than 0.3 of its half-width (a near tie: ``|Δθ|`` < 2.55 standard errors for a
    95 % interval, P(θ_a > θ_b) between 0.005 and 0.995, about where a 99 % interval would
    include 0), so a small residual bias — from calibration mismatch, say — could change the
    conclusion (Fiedler, Sec. 4.4 and Sec. 7). Report the comparison as undecided, or collect
    more test or calibration items. ``check_comparison`` and the report emit one such warning
    for all the pairs it concerns, listing a few of them.
    """


class CalibrationSizeWarning(BayesJudgeWarning):
    """The calibration set is too small for the requested interval width.

    The message gives the calibration size and split predicted to reach the target
    (:func:`bayesjudge.core.allocation_report`), or says that the test set alone is too small.
    """


class IllConditionedJudgeWarning(LowJudgeQualityWarning):
    """The judge's K-category confusion matrix is singular or close to it.

    The K-category correction θ̂ = (Ĉᵀ)⁻¹ p̂ divides, in effect, by the smallest singular
    value of Ĉᵀ on the sum-zero subspace (``|J|`` at K = 2), so its errors are amplified by
    the inverse (:func:`bayesjudge.core.categorical.confusion_condition`). Raised where Ĉ is
    singular (θ not identified: NaN) or that value is below 0.2, the binary low-J threshold.
    The message names the groups and the amplification; merge the categories the judge
    confuses, use a better judge, or label more calibration items. A subclass of
    :class:`LowJudgeQualityWarning`: filtering that filters this too.
    """
