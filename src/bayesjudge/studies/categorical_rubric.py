"""K-category coverage on the K = 5 rubric grid (grades 1-5): delta, Wald, bootstrap, posterior.

``bayesjudge study categorical-rubric``: :func:`bayesjudge.studies.categorical.run` with
``grid="rubric"`` (the module holds the study; this one names the grid for the registry).
"""

from __future__ import annotations

from bayesjudge.studies import categorical
from bayesjudge.studies._framework import StudyResult

__all__ = ["DEFAULT_SEED", "QUICK_OPTIONS", "QUICK_REPS", "goals", "plot", "run"]

DEFAULT_SEED = categorical.DEFAULT_SEED
QUICK_REPS = categorical.QUICK_REPS
QUICK_OPTIONS = dict(categorical.QUICK_OPTIONS)
goals = categorical.goals
plot = categorical.plot


def run(
    *,
    reps: int = 1000,
    random_seed: int = DEFAULT_SEED,
    progress: bool = False,
    **options,
) -> StudyResult:
    """Run :func:`bayesjudge.studies.categorical.run` on the rubric grid.

    Examples
    --------
    >>> from bayesjudge.studies import categorical_rubric
    >>> categorical_rubric.run(reps=20, methods=["delta"], accuracy=[0.8]).name
    'categorical-rubric'
    """
    return categorical.run(
        grid="rubric", reps=reps, random_seed=random_seed, progress=progress, **options
    )
