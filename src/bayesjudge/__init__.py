"""bayesjudge: honest estimates of true quality from LLM-as-a-judge scores.

Layers, bottom up: :mod:`bayesjudge.core` (numpy/scipy closed forms), :mod:`bayesjudge.data`
(``JudgeCounts``), :mod:`bayesjudge.estimate` (xarray results per system and stratum),
:mod:`bayesjudge.simulate`, the Bayesian models :mod:`bayesjudge.models` (loaded on first use),
the Monte Carlo studies :mod:`bayesjudge.studies` and the command line :mod:`bayesjudge.cli`.
Real judge data: :mod:`bayesjudge.datasets` (``bj.datasets.load_llmbar()``; the LLMBar tables
ship with the package).
"""

from bayesjudge import datasets as datasets  # bj.datasets.load_llmbar()
from bayesjudge._version import __version__
from bayesjudge.compare import compare
from bayesjudge.core import (
    HUMAN_ONLY_Q_THRESHOLD,
    EstimateInterval,
    ExactPosterior,
    ExactSummary,
    Interval,
    PPIEstimate,
    adjusted_estimates,
    allocate_calibration,
    allocation_report,
    bootstrap_difference,
    bootstrap_rogan_gladen,
    delta_method_variance,
    exact_draws,
    exact_marginals,
    exact_posterior,
    exact_theta_interval,
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
from bayesjudge.core.paired import (
    naive_difference_bias,
    pair_cells,
    paired_bootstrap,
    rg_difference_se,
    shared_calibration_bias,
    shared_calibration_shift,
)
from bayesjudge.data import JudgeCounts
from bayesjudge.diagnostics import Diagnosis, check_comparison, judge_diagnostics
from bayesjudge.estimate import estimate
from bayesjudge.report import Report, build_report, write_report
from bayesjudge.simulate import (
    judge_quality,
    simulate_count_arrays,
    simulate_counts,
    simulate_instability,
    simulate_items,
    simulate_paired_items,
    simulate_shift,
    youden_pair,
)
from bayesjudge.warnings import (
    BayesJudgeWarning,
    CalibrationDesignWarning,
    CalibrationSizeWarning,
    ConvergenceWarning,
    LowJudgeQualityWarning,
    MissingLabelWarning,
    NearTieWarning,
    SmallSampleWarning,
)

# The Bayesian layer imports PyMC, which takes seconds; load it on first use.
_LAZY = {
    "Fit": "bayesjudge.models.fit",
    "PosteriorPredictiveCheck": "bayesjudge.models.fit",
    "fit": "bayesjudge.models.fit",
    "fit_pairwise": "bayesjudge.models.fit",
    "compare_designs": "bayesjudge.models.fit",
    "load": "bayesjudge.models.fit",
    "prior_predictive": "bayesjudge.models.fit",
    "build_model": "bayesjudge.models.build",
    "MODELS": "bayesjudge.models.build",
    "Priors": "bayesjudge.models.priors",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'bayesjudge' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "HUMAN_ONLY_Q_THRESHOLD",
    "MODELS",
    "BayesJudgeWarning",
    "CalibrationDesignWarning",
    "CalibrationSizeWarning",
    "ConvergenceWarning",
    "Diagnosis",
    "EstimateInterval",
    "ExactPosterior",
    "ExactSummary",
    "Fit",
    "Interval",
    "JudgeCounts",
    "LowJudgeQualityWarning",
    "MissingLabelWarning",
    "NearTieWarning",
    "PPIEstimate",
    "PosteriorPredictiveCheck",
    "Priors",
    "Report",
    "SmallSampleWarning",
    "__version__",
    "adjusted_estimates",
    "allocate_calibration",
    "allocation_report",
    "bootstrap_difference",
    "bootstrap_rogan_gladen",
    "build_model",
    "build_report",
    "check_comparison",
    "compare",
    "compare_designs",
    "delta_method_variance",
    "estimate",
    "exact_draws",
    "exact_marginals",
    "exact_posterior",
    "exact_theta_interval",
    "fit",
    "fit_pairwise",
    "human_only_regime",
    "judge_beats_human_only",
    "judge_diagnostics",
    "judge_quality",
    "lang_reiczigel_interval",
    "lang_reiczigel_length",
    "load",
    "naive",
    "naive_difference_bias",
    "pair_cells",
    "paired_bootstrap",
    "ppi_mean",
    "prior_predictive",
    "rg_difference_se",
    "rogan_gladen",
    "shared_calibration_bias",
    "shared_calibration_shift",
    "simulate_count_arrays",
    "simulate_counts",
    "simulate_instability",
    "simulate_items",
    "simulate_paired_items",
    "simulate_shift",
    "variance_vs_human_only",
    "write_report",
    "youden",
    "youden_difference",
    "youden_pair",
]
