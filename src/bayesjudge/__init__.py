"""bayesjudge: honest estimates of true quality from LLM-as-a-judge scores.

Layers, bottom up: :mod:`bayesjudge.core` (numpy/scipy closed forms), :mod:`bayesjudge.data`
(``JudgeCounts``), :mod:`bayesjudge.estimate` (xarray results per system and stratum),
:mod:`bayesjudge.simulate`, and the command line :mod:`bayesjudge.cli`.
"""

from bayesjudge._version import __version__
from bayesjudge.core import (
    HUMAN_ONLY_Q_THRESHOLD,
    EstimateInterval,
    Interval,
    PPIEstimate,
    adjusted_estimates,
    allocate_calibration,
    allocation_report,
    bootstrap_difference,
    bootstrap_rogan_gladen,
    delta_method_variance,
    human_only_regime,
    judge_beats_human_only,
    lang_reiczigel_interval,
    lang_reiczigel_length,
    naive,
    ppi_mean,
    rogan_gladen,
    variance_vs_human_only,
    youden,
    youden_difference,
)
from bayesjudge.data import JudgeCounts
from bayesjudge.estimate import estimate
from bayesjudge.simulate import simulate_counts
from bayesjudge.warnings import (
    BayesJudgeWarning,
    LowJudgeQualityWarning,
    MissingLabelWarning,
    SmallSampleWarning,
)

__all__ = [
    "HUMAN_ONLY_Q_THRESHOLD",
    "BayesJudgeWarning",
    "EstimateInterval",
    "Interval",
    "JudgeCounts",
    "LowJudgeQualityWarning",
    "MissingLabelWarning",
    "PPIEstimate",
    "SmallSampleWarning",
    "__version__",
    "adjusted_estimates",
    "allocate_calibration",
    "allocation_report",
    "bootstrap_difference",
    "bootstrap_rogan_gladen",
    "delta_method_variance",
    "estimate",
    "human_only_regime",
    "judge_beats_human_only",
    "lang_reiczigel_interval",
    "lang_reiczigel_length",
    "naive",
    "ppi_mean",
    "rogan_gladen",
    "simulate_counts",
    "variance_vs_human_only",
    "youden",
    "youden_difference",
]
