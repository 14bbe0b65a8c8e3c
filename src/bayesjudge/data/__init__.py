"""Sufficient statistics of a judge evaluation: the :class:`JudgeCounts` container.

Every estimator in bayesjudge needs only six counts per group (system × stratum): the test
counts ``n`` and ``k`` and the calibration counts ``m0``, ``tn``, ``m1`` and ``tp``.
:class:`JudgeCounts` holds them in an :class:`xarray.Dataset` and builds them either from
numbers (:meth:`JudgeCounts.from_counts`) or from item-level tables
(:meth:`JudgeCounts.from_frames`), counting on the user's dataframe engine through narwhals.

The package's modules, bottom up:

- :mod:`bayesjudge.data._common`: the count fields, dims and attribute names, and the checks
  of counts and group labels;
- :mod:`bayesjudge.data.reading`: reading an item table, dataframe or file
  (:func:`as_frame`);
- :mod:`bayesjudge.data.labels`: which label values mean correct and incorrect;
- :mod:`bayesjudge.data.patterns`: the joint verdict patterns of several systems on shared
  items (:func:`verdict_patterns`, :func:`all_patterns`) and the joint table;
- :mod:`bayesjudge.data.design`: the labelling design read from the tables (one table with
  a human column; labelled items that are also judged items, each counted once);
- :mod:`bayesjudge.data.counting`: counting item tables on their own engine;
- :mod:`bayesjudge.data.counts`: the :class:`JudgeCounts` container;
- :mod:`bayesjudge.data.category_labels`: K-category labels — checked, ordered, matched by
  value and type;
- :mod:`bayesjudge.data.categorical_counting`: counting item tables of K-category verdicts;
- :mod:`bayesjudge.data.categorical`: the :class:`CategoricalCounts` container of K-category
  verdicts (preferences with ties, graded scores);
- :mod:`bayesjudge.data.jury_counting`, :mod:`bayesjudge.data.jury` and
  :mod:`bayesjudge.data.jury_items`: several judges on the same items — long tables read into
  verdict patterns (:class:`~bayesjudge.data.jury.JuryCounts`) or verdict rows with covariates
  (:class:`~bayesjudge.data.jury_items.JuryItems`);
- :mod:`bayesjudge.data.categorical_jury`: several judges' K-category verdicts as verdict
  patterns (:class:`~bayesjudge.data.CategoricalJuryCounts`).
"""

# The names other modules import from bayesjudge.data (``X as X``: re-exported).
from bayesjudge.data._common import (
    CALIBRATION_FIELDS as CALIBRATION_FIELDS,
)
from bayesjudge.data._common import (
    DEFAULT_DESIGN as DEFAULT_DESIGN,
)
from bayesjudge.data._common import (
    DEFAULT_LABEL as DEFAULT_LABEL,
)
from bayesjudge.data._common import (
    DESIGN_ATTR as DESIGN_ATTR,
)
from bayesjudge.data._common import (
    DIMS as DIMS,
)
from bayesjudge.data._common import (
    FIELDS as FIELDS,
)
from bayesjudge.data._common import (
    JOINT as JOINT,
)
from bayesjudge.data._common import (
    JOINT_DIMS as JOINT_DIMS,
)
from bayesjudge.data._common import (
    MAX_FULL_SYSTEMS as MAX_FULL_SYSTEMS,
)
from bayesjudge.data._common import (
    MAX_PAIRED_SYSTEMS as MAX_PAIRED_SYSTEMS,
)
from bayesjudge.data._common import (
    PATTERN as PATTERN,
)
from bayesjudge.data._common import (
    POOLED_LABEL as POOLED_LABEL,
)
from bayesjudge.data._common import (
    SHARED_ATTR as SHARED_ATTR,
)
from bayesjudge.data._common import (
    TEST_FIELDS as TEST_FIELDS,
)
from bayesjudge.data._common import (
    VERDICT as VERDICT,
)
from bayesjudge.data.categorical import (
    CategoricalCounts as CategoricalCounts,
)
from bayesjudge.data.categorical_jury import (
    CategoricalJuryCounts as CategoricalJuryCounts,
)
from bayesjudge.data.counts import (
    JudgeCounts as JudgeCounts,
)
from bayesjudge.data.patterns import (
    all_patterns as all_patterns,
)
from bayesjudge.data.patterns import (
    pattern_matrix as pattern_matrix,
)
from bayesjudge.data.patterns import (
    verdict_patterns as verdict_patterns,
)
from bayesjudge.data.reading import (
    as_frame as as_frame,
)

__all__ = ["CategoricalCounts", "CategoricalJuryCounts", "JudgeCounts"]
