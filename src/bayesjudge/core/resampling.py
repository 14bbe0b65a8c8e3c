"""Bootstrap building blocks shared by the core's bootstraps (Rogan–Gladen, paired, Youden).

Because every quantity is binary, resampling items with replacement is drawing counts from a
binomial (or multinomial) distribution; these helpers draw them with a trailing resample axis,
turn replicates into percentile intervals that count not-identified replicates against the
interval, and warn about such replicates. Not validated: the public functions check first.
"""

from __future__ import annotations

import warnings

import numpy as np

from bayesjudge.warnings import LowJudgeQualityWarning

__all__ = [
    "draw_binomial",
    "percentile_interval",
    "resample_calibration",
    "warn_undefined_replicates",
]


def draw_binomial(rng, total, prob, shape):
    """Draw ``Binomial(total, prob)`` with a trailing resample axis of ``shape``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesjudge.core.resampling import draw_binomial
    >>> draw_binomial(np.random.default_rng(0), np.array([10.0]), np.array([1.0]), (1, 3))
    array([[10, 10, 10]])
    """
    return rng.binomial(total.astype(np.int64)[..., None], prob[..., None], size=shape)


def resample_calibration(rng, tn, m0, tp, m1, n_resamples, calibration_design):
    """Draw (tn*, m0*, tp*, m1*) with a trailing resample axis, in a fixed order.

    ``"stratified"``: tn* ~ Binomial(m0, tn/m0), then tp* ~ Binomial(m1, tp/m1), with m0, m1
    fixed. ``"random"``: the 2×2 table (human × judge) as one multinomial of m0 + m1 items.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesjudge.core.resampling import resample_calibration
    >>> tn, m0, tp, m1 = (np.array([v]) for v in (7.0, 10.0, 9.0, 10.0))
    >>> draws = resample_calibration(np.random.default_rng(0), tn, m0, tp, m1, 4, "stratified")
    >>> [d.shape for d in draws]
    [(1, 4), (1, 4), (1, 4), (1, 4)]
    """
    shape = (*tn.shape, n_resamples)
    if calibration_design == "stratified":
        tn_s = draw_binomial(rng, m0, tn / m0, shape)
        tp_s = draw_binomial(rng, m1, tp / m1, shape)
        return (
            tn_s,
            np.broadcast_to(m0[..., None], shape),
            tp_s,
            np.broadcast_to(m1[..., None], shape),
        )
    total = m0 + m1
    # Cells of the 2x2 calibration table: (human 0, judge 0), (0, 1), (1, 1), (1, 0).
    shares = np.stack([tn, m0 - tn, tp, m1 - tp], axis=-1) / total[..., None]
    cells = rng.multinomial(total.astype(np.int64)[..., None], shares[..., None, :], size=shape)
    tn_s, fp_s, tp_s, fn_s = np.moveaxis(cells, -1, 0)
    return tn_s, tn_s + fp_s, tp_s, tp_s + fn_s


def percentile_interval(replicates, undefined, alpha, low_fill, high_fill):
    """Percentile interval that counts not-identified replicates against the interval.

    Each undefined replicate is set to the smallest possible value (``low_fill``) for the
    lower quantile and to the largest (``high_fill``) for the upper one, so the result bounds
    the percentile interval obtained with *any* values for them: honest, and wide when they
    are common.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesjudge.core.resampling import percentile_interval
    >>> reps = np.linspace(0.4, 0.6, 101)
    >>> [round(float(x), 3) for x in percentile_interval(reps, reps > 1, 0.1, 0.0, 1.0)]
    [0.41, 0.59]
    """
    if not undefined.any():
        lower, upper = np.quantile(replicates, [alpha / 2.0, 1.0 - alpha / 2.0], axis=-1)
        return lower, upper
    lower = np.quantile(np.where(undefined, low_fill, replicates), alpha / 2.0, axis=-1)
    upper = np.quantile(np.where(undefined, high_fill, replicates), 1.0 - alpha / 2.0, axis=-1)
    return lower, upper


def warn_undefined_replicates(undefined, alpha, what, stacklevel: int = 3):
    """Warn (LowJudgeQualityWarning) where some replicates had no identified ``what``.

    ``stacklevel`` counts from this function (3: the caller of the function that calls it).
    """
    share = undefined.mean(axis=-1)
    if not (share > 0).any():
        return
    affected = int(np.count_nonzero(share > 0))
    warnings.warn(
        f"In {affected} group(s) some bootstrap resamples had q0* + q1* == 1 (or no truly "
        f"correct / truly incorrect calibration item), so {what} was not identified there "
        f"(largest share {share.max():.2%}). They were counted at the lower end for the lower "
        f"limit and at the upper end for the upper limit, so the interval is conservative; "
        f"where the share exceeds alpha/2 = {alpha / 2:g} it reaches the end of the range. "
        f"The judge is close to chance or the calibration set is small: label more items.",
        LowJudgeQualityWarning,
        stacklevel=stacklevel,
    )
