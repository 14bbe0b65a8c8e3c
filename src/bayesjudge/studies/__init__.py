"""Monte Carlo studies of the papers and of the random labelling design: ``bayesjudge study``.

They reproduce Lee et al. and Fiedler and validate the random labelling design (issue 15),
K-category verdicts (issue 16) and several judges on the same items (issue 17).

Each study module has ``run(*, reps=..., random_seed=..., progress=False, **options)``
returning a :class:`~bayesjudge.studies._framework.StudyResult` (tidy table, settings, figure).
"""

from __future__ import annotations

import importlib

from bayesjudge.studies._framework import StudyResult

__all__ = ["STUDIES", "StudyResult", "run_study"]

# Study name (as typed on the command line) -> module; modules load on first use because
# the comparison study needs PyMC.
STUDIES = {
    "allocation-length": "bayesjudge.studies.allocation_length",
    "coverage": "bayesjudge.studies.coverage",
    "distribution-shift": "bayesjudge.studies.distribution_shift",
    "human-vs-judge": "bayesjudge.studies.human_vs_judge",
    "comparison": "bayesjudge.studies.comparison",
    "llmbar": "bayesjudge.studies.llmbar",
    "random-design": "bayesjudge.studies.random_design",
    "clustered": "bayesjudge.studies.clustered",
    "categorical-preference": "bayesjudge.studies.categorical_preference",
    "categorical-rubric": "bayesjudge.studies.categorical_rubric",
    "categorical-structure": "bayesjudge.studies.categorical_structure",
    "jury": "bayesjudge.studies.jury",
    "categorical-jury": "bayesjudge.studies.categorical_jury",
    "llmbar-jury": "bayesjudge.studies.llmbar_jury",
}


def run_study(name: str, **options) -> StudyResult:
    """Run the study ``name`` with its options (``reps``, ``random_seed``, ``progress``, ...).

    Raises
    ------
    ValueError
        If ``name`` is not a known study; the message lists the known ones.
    """
    if name not in STUDIES:
        raise ValueError(f"unknown study {name!r}; choose one of {', '.join(STUDIES)}.")
    return importlib.import_module(STUDIES[name]).run(**options)
