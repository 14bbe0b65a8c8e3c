"""bayesjudge: honest estimates of true quality from LLM-as-a-judge scores.

The top level is a curated API of at most 40 names (``bayesjudge.__all__``): the containers
:class:`JudgeCounts`, :class:`CategoricalCounts` and :class:`JuryCounts` (several judges), the
entry points (:func:`estimate`, :func:`compare`, :func:`fit`, :func:`load`,
:func:`build_model`, :func:`build_report`), the priors, the diagnostics, the warning classes
and the most used closed forms. Everything else stays importable from its submodule and is
documented there.

Layers, bottom up: :mod:`bayesjudge.core` (numpy/scipy closed forms; the paired-difference
tools in :mod:`bayesjudge.core.paired`), :mod:`bayesjudge.data` (``JudgeCounts``),
:mod:`bayesjudge.estimate` and :mod:`bayesjudge.compare` (xarray results per system and
stratum), :mod:`bayesjudge.diagnostics`, :mod:`bayesjudge.simulate` (all the simulators,
``judge_quality``, ``youden_pair``), :mod:`bayesjudge.plots` and :mod:`bayesjudge.report`, the
Bayesian models :mod:`bayesjudge.models` (loaded on first use, through
:mod:`bayesjudge._lazy`), the Monte Carlo studies :mod:`bayesjudge.studies` and the command
line :mod:`bayesjudge.cli`. Real judge data: :mod:`bayesjudge.datasets`
(``bj.datasets.load_llmbar()``; the LLMBar tables ship with the package).

A name that left the top level says where it went:

>>> import bayesjudge as bj
>>> bj.paired_bootstrap  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
AttributeError: bayesjudge.paired_bootstrap moved: use bayesjudge.core.paired_bootstrap (...)
>>> bj.core.paired_bootstrap.__name__
'paired_bootstrap'
"""

from bayesjudge import (
    _interrupt,  # noqa: F401  (first: Ctrl-C while the CLI imports, see there)
    _lazy,
)
from bayesjudge import core as core  # bj.core.paired_bootstrap, bj.core.exact_marginals, …
from bayesjudge import datasets as datasets  # bj.datasets.load_llmbar()
from bayesjudge import simulate as simulate  # bj.simulate.simulate_shift, …
from bayesjudge._version import __version__
from bayesjudge.compare import compare
from bayesjudge.core import (
    allocate_calibration,
    bootstrap_rogan_gladen,
    lang_reiczigel_interval,
    naive,
    ppi_mean,
    rogan_gladen,
    youden,
)
from bayesjudge.data import CategoricalCounts, JudgeCounts
from bayesjudge.data.jury import JuryCounts
from bayesjudge.diagnostics import Diagnosis, check_comparison, judge_diagnostics
from bayesjudge.estimate import estimate
from bayesjudge.report import Report, build_report, write_report
from bayesjudge.simulate import simulate_counts, simulate_items
from bayesjudge.warnings import (
    BayesJudgeWarning,
    CalibrationDesignWarning,
    CalibrationSizeWarning,
    ConvergenceWarning,
    LowJudgeQualityWarning,
    MissingLabelWarning,
    NearTieWarning,
    PooledCalibrationWarning,
    SmallSampleWarning,
)

__all__ = [
    "MODELS",
    "BayesJudgeWarning",
    "CalibrationDesignWarning",
    "CalibrationSizeWarning",
    "CategoricalCounts",
    "ConvergenceWarning",
    "Diagnosis",
    "Fit",
    "JudgeCounts",
    "JuryCounts",
    "LowJudgeQualityWarning",
    "MissingLabelWarning",
    "NearTieWarning",
    "PooledCalibrationWarning",
    "Priors",
    "Report",
    "SmallSampleWarning",
    "__version__",
    "allocate_calibration",
    "bootstrap_rogan_gladen",
    "build_model",
    "build_report",
    "check_comparison",
    "compare",
    "compare_designs",
    "datasets",
    "estimate",
    "fit",
    "fit_pairwise",
    "judge_diagnostics",
    "lang_reiczigel_interval",
    "load",
    "naive",
    "ppi_mean",
    "prior_predictive",
    "rogan_gladen",
    "simulate_counts",
    "simulate_items",
    "write_report",
    "youden",
]

# The Bayesian names of the top level, served lazily: the layer imports PyMC, which takes
# seconds (bayesjudge._lazy.BAYESIAN_NAMES also holds internal constants, not exported here).
_BAYESIAN = {name for name in _lazy.BAYESIAN_NAMES if name in __all__}

# Names that left the top level, and the submodule that exports each now.
_MOVED = {
    **dict.fromkeys(
        (
            "HUMAN_ONLY_Q_THRESHOLD",
            "exact_posterior",
            "EstimateInterval",
            "ExactPosterior",
            "ExactSummary",
            "Interval",
            "PPIEstimate",
            "adjusted_estimates",
            "allocation_report",
            "bootstrap_difference",
            "delta_method_variance",
            "exact_draws",
            "exact_marginals",
            "exact_theta_interval",
            "human_only_regime",
            "judge_beats_human_only",
            "lang_reiczigel_length",
            "variance_vs_human_only",
            "youden_difference",
            # the paired-difference tools of bayesjudge.core.paired, re-exported by core
            "naive_difference_bias",
            "pair_cells",
            "paired_bootstrap",
            "rg_difference_se",
            "shared_calibration_bias",
            "shared_calibration_shift",
        ),
        "bayesjudge.core",
    ),
    **dict.fromkeys(
        (
            "judge_quality",
            "simulate_count_arrays",
            "simulate_instability",
            "simulate_paired_items",
            "simulate_shift",
            "youden_pair",
        ),
        "bayesjudge.simulate",
    ),
}


def __getattr__(name: str):
    if name in _BAYESIAN:
        value = getattr(_lazy.bayesian(_lazy.BAYESIAN_NAMES[name]), name)
        globals()[name] = value
        return value
    if name in _MOVED:
        home = _MOVED[name]
        raise AttributeError(
            f"bayesjudge.{name} moved: use {home}.{name} (from {home} import {name})"
        )
    raise AttributeError(f"module 'bayesjudge' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
