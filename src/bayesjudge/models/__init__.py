"""PyMC models of θ, q0 and q1 over (system, stratum), fitting, and fit results.

Importing this subpackage imports PyMC; ``import bayesjudge`` alone does not (its Bayesian
names load this subpackage on first use).
"""

from bayesjudge.models.build import CALIBRATIONS, MODELS, ModelSpec, build_model
from bayesjudge.models.priors import Priors

__all__ = ["CALIBRATIONS", "MODELS", "ModelSpec", "Priors", "build_model"]
