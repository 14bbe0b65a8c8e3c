"""The one place where the Bayesian layer is loaded lazily.

:mod:`bayesjudge.models` imports PyMC, PyTensor and ArviZ, which take seconds. ``import
bayesjudge`` and the command line must not pay that cost unless a Bayesian model is fitted
(``tests/package/test_layers.py`` checks it), so the modules that offer a Bayesian path without
depending on it — the package facade (``bj.fit``, ``bj.Priors``, …), the command line and the
studies — load it through :func:`bayesian` when it is first needed. No other module names
``bayesjudge.models`` to load it later, and no module hides an import inside a function.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["BAYESIAN_NAMES", "bayesian"]

#: Public names of the Bayesian layer, and the module of :mod:`bayesjudge.models` holding each.
BAYESIAN_NAMES = {
    "Fit": "fit",
    "PosteriorPredictiveCheck": "fit",
    "fit": "fit",
    "fit_pairwise": "fit",
    "compare_designs": "fit",
    "load": "fit",
    "prior_predictive": "fit",
    "ESS_MIN": "fit",
    "RHAT_MAX": "fit",
    "build_model": "build",
    "MODELS": "build",
    "Priors": "priors",
    "fit_categorical": "categorical",
    "build_categorical_model": "categorical",
    "prior_predictive_categorical": "categorical",
    "load_categorical": "categorical",
    "CategoricalFit": "categorical",
    "CategoricalPriors": "categorical",
}


def bayesian(module: str = "fit") -> ModuleType:
    """Return ``bayesjudge.models.<module>``, importing PyMC the first time.

    Examples
    --------
    >>> from bayesjudge._lazy import bayesian
    >>> bayesian("priors").Priors.__name__
    'Priors'
    """
    return importlib.import_module(f"bayesjudge.models.{module}")
