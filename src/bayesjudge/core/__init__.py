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
    LabelPlan,
    allocate_calibration,
    allocation_report,
    human_only_regime,
    judge_beats_human_only,
    labels_for_width,
    random_design_variance,
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
    data_conflict,
    exact_draws,
    exact_marginals,
    exact_posterior,
    exact_theta_interval,
    test_set_theta_draws,
)
from bayesjudge.core.likelihood import (
    HumanOnlyEstimate,
    LikelihoodEstimate,
    double_sampling_mle,
    human_only,
    likelihood_interval,
    random_design_loglik,
    test_set_interval,
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
from bayesjudge.core.pooling import (
    Homogeneity,
    PoolingBias,
    homogeneity_test,
    pooled_half_width,
    pooling_bias,
)
from bayesjudge.core.ppi import PPIEstimate, ppi_mean
from bayesjudge.core.youden import youden, youden_difference

__all__ = [
    "HUMAN_ONLY_Q_THRESHOLD",
    "DeltaDifference",
    "EstimateInterval",
    "ExactPosterior",
    "ExactSummary",
    "Homogeneity",
    "HumanOnlyEstimate",
    "Interval",
    "LabelPlan",
    "LikelihoodEstimate",
    "Marginal",
    "PPIEstimate",
    "PairedDifference",
    "PoolingBias",
    "adjusted_estimates",
    "allocate_calibration",
    "allocation_report",
    "bootstrap_difference",
    "bootstrap_rogan_gladen",
    "data_conflict",
    "delta_method_variance",
    "double_sampling_mle",
    "exact_draws",
    "exact_marginals",
    "exact_posterior",
    "exact_theta_interval",
    "homogeneity_test",
    "human_only",
    "human_only_regime",
    "judge_beats_human_only",
    "labels_for_width",
    "lang_reiczigel_interval",
    "lang_reiczigel_length",
    "likelihood_interval",
    "naive",
    "naive_difference_bias",
    "pair_cells",
    "paired_bootstrap",
    "pooled_half_width",
    "pooling_bias",
    "ppi_mean",
    "random_design_loglik",
    "random_design_variance",
    "rg_difference_se",
    "rogan_gladen",
    "shared_calibration_bias",
    "shared_calibration_shift",
    "system_pairs",
    "test_set_interval",
    "test_set_theta_draws",
    "variance_vs_human_only",
    "youden",
    "youden_difference",
]
