"""The numpy/scipy core: closed-form estimators, vectorised and free of PyMC and xarray.

Every function takes numpy arrays or scalars, broadcasts its arguments and returns named
tuples of arrays (numpy scalars for scalar input). The formulas themselves (Rogan–Gladen from
counts, the exact J = 0 test, the interval of J and the low-J rule, the delta-method Δθ) are
written once, unvalidated, in :mod:`bayesjudge.core.kernels`; argument checks live in
``core._validation`` and the bootstrap building blocks in :mod:`bayesjudge.core.resampling`.
"""

from bayesjudge.core._results import EstimateInterval, Interval
from bayesjudge.core.allocation import (
    HUMAN_ONLY_Q_THRESHOLD,
    allocate_calibration,
    allocation_report,
    human_only_regime,
    judge_beats_human_only,
    variance_vs_human_only,
)
from bayesjudge.core.bootstrap import bootstrap_difference, bootstrap_rogan_gladen
from bayesjudge.core.correction import (
    adjusted_estimates,
    delta_method_variance,
    lang_reiczigel_interval,
    lang_reiczigel_length,
    rogan_gladen,
)
from bayesjudge.core.exact import (
    ExactPosterior,
    ExactSummary,
    Marginal,
    exact_draws,
    exact_marginals,
    exact_posterior,
    exact_theta_interval,
)
from bayesjudge.core.naive import naive
from bayesjudge.core.paired import (
    DeltaDifference,
    PairedDifference,
    naive_difference_bias,
    pair_cells,
    paired_bootstrap,
    rg_difference_se,
    shared_calibration_bias,
    shared_calibration_shift,
    system_pairs,
)
from bayesjudge.core.ppi import PPIEstimate, ppi_mean
from bayesjudge.core.youden import youden, youden_difference

__all__ = [
    "HUMAN_ONLY_Q_THRESHOLD",
    "DeltaDifference",
    "EstimateInterval",
    "ExactPosterior",
    "ExactSummary",
    "Interval",
    "Marginal",
    "PPIEstimate",
    "PairedDifference",
    "adjusted_estimates",
    "allocate_calibration",
    "allocation_report",
    "bootstrap_difference",
    "bootstrap_rogan_gladen",
    "delta_method_variance",
    "exact_draws",
    "exact_marginals",
    "exact_posterior",
    "exact_theta_interval",
    "human_only_regime",
    "judge_beats_human_only",
    "lang_reiczigel_interval",
    "lang_reiczigel_length",
    "naive",
    "naive_difference_bias",
    "pair_cells",
    "paired_bootstrap",
    "ppi_mean",
    "rg_difference_se",
    "rogan_gladen",
    "shared_calibration_bias",
    "shared_calibration_shift",
    "system_pairs",
    "variance_vs_human_only",
    "youden",
    "youden_difference",
]
