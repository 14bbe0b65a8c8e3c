"""Several judges' verdicts item by item, with covariates: the :class:`JuryItems` container.

Verdict patterns (:class:`~bayesjudge.data.jury.JuryCounts`) are the sufficient statistics only
while a judge's errors do not depend on the item. When they do — the longer answer is favoured,
the answer shown first is favoured — the covariates of every verdict are needed, so
:class:`JuryItems` keeps one row per verdict: its item, judge, verdict and covariates, and per
item its truth (or -1 when unlabelled) and group.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from bayesjudge.data._common import DESIGN_ATTR, DIMS
from bayesjudge.data.jury import JUDGE, JuryCounts
from bayesjudge.data.jury_counting import count_jury_items

__all__ = ["COVARIATE", "ITEM", "ROW", "THETA_COVARIATE", "JuryItems"]

ROW = "row"
ITEM = "item"
COVARIATE = "covariate"
THETA_COVARIATE = "theta_covariate"


class JuryItems:
    """Verdict rows of several judges with covariates, per item (the covariate model's data).

    A thin wrapper around an :class:`xarray.Dataset` with dims ``row`` (one verdict),
    ``item``, ``covariate``, ``judge``, ``system`` and ``stratum``:

    - ``row_item``, ``row_judge`` (row): indexes of the row's item and judge;
    - ``verdict`` (row): 1 judged correct, 0 judged incorrect;
    - ``covariates`` (row, covariate): the row's covariate values, as given;
    - ``truth`` (item): the human label, -1 where unlabelled;
    - ``item_system``, ``item_stratum`` (item): indexes of the item's group; the coordinate
      ``item_id`` holds the ids as read;
    - optionally ``theta_covariates`` (item, theta_covariate): covariates of the truth itself
      (P(Z_i = 1) depends on them), one value per item.

    ``attrs["design"]`` is the labelling design. Build it with :meth:`from_frames`.
    """

    __slots__ = ("_ds",)

    def __init__(self, dataset: xr.Dataset) -> None:
        if not isinstance(dataset, xr.Dataset):
            raise TypeError(f"JuryItems wraps an xarray.Dataset; got {type(dataset).__name__}.")
        needed = ("row_item", "row_judge", "verdict", "covariates", "truth", "item_system",
                  "item_stratum")  # fmt: skip
        missing = [v for v in needed if v not in dataset.data_vars]
        if missing:
            raise ValueError(f"The dataset lacks the variables {missing}.")
        self._ds = dataset

    @classmethod
    def from_frames(
        cls,
        test,
        calibration=None,
        *,
        judges: str,
        item: str,
        covariates: str | Sequence[str],
        judge: str = "judge",
        human: str | None = "human",
        system: str | None = None,
        stratum: str | None = None,
        positive=None,
        design: str | None = None,
        theta_covariates: str | Sequence[str] | None = None,
    ) -> JuryItems:
        """Read long tables of verdict rows with covariate columns.

        Parameters
        ----------
        test : dataframe or path
            One row per verdict: the judge (column ``judges``), the item id (``item``), the
            verdict (``judge``), the covariate columns and the optional ``system``/``stratum``
            columns. A judge may grade an item more than once (e.g. with the answers in both
            orders, a ``position`` covariate). With a ``human`` column filled for some items
            (on all their rows), it is the one table of the random labelling design.
        calibration : dataframe or path, optional
            A separate set of labelled items in the same layout (stratified design); its ids
            must differ from the test items'.
        judges, item, judge, human, system, stratum, positive, design
            As in :meth:`JuryCounts.from_frames`.
        covariates : str or sequence of str
            Numeric columns (booleans count 0/1); a missing or non-numeric value is an error.
        theta_covariates : str or sequence of str, optional
            Numeric columns on which the truth itself depends (P(Z_i = 1 | w_i) =
            expit(α_g + δᵀ w_i) in :func:`~bayesjudge.jury_estimate.jury_covariate_estimate`):
            item-level values such as the length difference of a pair, constant over an item's
            rows (else an error naming the items). A column may also be in ``covariates``; a
            per-verdict one (the position shown) may not be a theta covariate.

        Returns
        -------
        JuryItems

        Examples
        --------
        >>> import pandas as pd
        >>> rows = pd.DataFrame({"item": [1, 1, 2, 2], "grader": ["a", "a", "a", "b"],
        ...                      "judge": [1, 0, 1, 1], "first": [1, 0, 1, 1],
        ...                      "human": [1, 1, None, None]})
        >>> items = JuryItems.from_frames(rows, judges="grader", item="item",
        ...                               covariates="first")
        >>> items.sizes, items.design
        ({'row': 4, 'item': 2, 'judge': 2, 'covariate': 1}, 'random')
        >>> rows["diff"] = [0.5, 0.5, -1.0, -1.0]  # one value per item
        >>> JuryItems.from_frames(rows, judges="grader", item="item", covariates="first",
        ...                       theta_covariates="diff").theta_covariate_names
        ['diff']
        """
        names = [covariates] if isinstance(covariates, str) else list(covariates)
        t_names = _names(theta_covariates)
        read = count_jury_items(
            test,
            calibration,
            judges=judges,
            item=item,
            covariates=list(dict.fromkeys([*names, *t_names])),
            judge=judge,
            human=human,
            system=system,
            stratum=stratum,
            positive=positive,
            design=design,
        )
        read_names = list(dict.fromkeys([*names, *t_names]))
        columns = np.asarray(read.covariates, dtype=float).reshape(len(read.verdict), -1)
        row_x = columns[:, [read_names.index(c) for c in names]]
        ds = xr.Dataset(
            {
                "row_item": (ROW, read.row_item),
                "row_judge": (ROW, read.row_judge),
                "verdict": (ROW, read.verdict),
                "covariates": ((ROW, COVARIATE), row_x),
                "truth": (ITEM, read.truth),
                "item_system": (ITEM, read.item_system),
                "item_stratum": (ITEM, read.item_stratum),
            },
            coords={
                JUDGE: read.judges,
                COVARIATE: names,
                "system": read.systems,
                "stratum": read.strata,
                "item_id": (ITEM, np.array(read.item_ids, dtype=object)),
            },
            attrs={DESIGN_ATTR: read.design},
        )
        if t_names:
            w = _per_item(columns[:, [read_names.index(c) for c in t_names]], read.row_item,
                          len(read.truth), t_names, ds["item_id"].values)  # fmt: skip
            ds["theta_covariates"] = ((ITEM, THETA_COVARIATE), w)
            ds = ds.assign_coords({THETA_COVARIATE: t_names})
        return cls(ds)

    @property
    def dataset(self) -> xr.Dataset:
        """The underlying dataset."""
        return self._ds

    @property
    def judges(self) -> list:
        """The judges' labels."""
        return self._ds.indexes[JUDGE].tolist()

    @property
    def covariate_names(self) -> list[str]:
        """The covariates' names."""
        return [str(c) for c in self._ds.indexes[COVARIATE]]

    @property
    def theta_covariate_names(self) -> list[str]:
        """The names of the truth's covariates (empty without them)."""
        if THETA_COVARIATE not in self._ds.indexes:
            return []
        return [str(c) for c in self._ds.indexes[THETA_COVARIATE]]

    def theta_covariates(self) -> np.ndarray:
        """Return the truth's covariates, one row per item: shape (item, theta_covariate)."""
        if "theta_covariates" not in self._ds.data_vars:
            return np.zeros((self._ds.sizes[ITEM], 0))
        return np.asarray(self._ds["theta_covariates"].values, dtype=float)

    @property
    def systems(self) -> list:
        """The systems' labels."""
        return self._ds.indexes["system"].tolist()

    @property
    def strata(self) -> list:
        """The strata's labels."""
        return self._ds.indexes["stratum"].tolist()

    @property
    def design(self) -> str:
        """The labelling design."""
        return self._ds.attrs[DESIGN_ATTR]

    @property
    def sizes(self) -> dict[str, int]:
        """Numbers of rows, items, judges and covariates."""
        return {d: self._ds.sizes[d] for d in (ROW, ITEM, JUDGE, COVARIATE)}

    def group_index(self) -> np.ndarray:
        """Each item's flat group index, ``system_index * n_strata + stratum_index``."""
        return self._ds["item_system"].values * len(self.strata) + self._ds["item_stratum"].values

    def counts(self) -> JuryCounts:
        """Return the verdict patterns (covariates dropped), when each judge graded an item once.

        Raises
        ------
        ValueError
            If a judge graded an item more than once (a pattern has one entry per judge).
        """
        ds = self._ds
        n_items, n_judges = ds.sizes[ITEM], ds.sizes[JUDGE]
        matrix = np.full((n_items, n_judges), -1, dtype=np.int64)
        rows_item, rows_judge = ds["row_item"].values, ds["row_judge"].values
        pairs = rows_item * n_judges + rows_judge
        if np.unique(pairs).size != pairs.size:
            raise ValueError(
                "A judge graded some items more than once (e.g. in both answer orders), so the "
                "items have no single verdict pattern. Keep one row per (item, judge), or treat "
                "each order as a judge of its own (a judge column such as 'GPT-4 swapped')."
            )
        matrix[rows_item, rows_judge] = ds["verdict"].values
        truth = ds["truth"].values
        group = self.group_index()
        n_s, n_r = len(self.systems), len(self.strata)
        patterns, inverse = np.unique(matrix, axis=0, return_inverse=True)
        inverse = inverse.ravel()
        test = np.zeros((n_s * n_r, len(patterns)), dtype=np.int64)
        lab = np.zeros((n_s * n_r, 2, len(patterns)), dtype=np.int64)
        np.add.at(test, (group[truth < 0], inverse[truth < 0]), 1)
        for t in (0, 1):
            np.add.at(lab[:, t], (group[truth == t], inverse[truth == t]), 1)
        return JuryCounts(
            xr.Dataset(
                {
                    "test": ((*DIMS, "pattern"), test.reshape(n_s, n_r, -1)),
                    "labelled": ((*DIMS, "truth", "pattern"), lab.reshape(n_s, n_r, 2, -1)),
                },
                coords={
                    "system": ds.indexes["system"],
                    "stratum": ds.indexes["stratum"],
                    JUDGE: ds.indexes[JUDGE],
                    "truth": [0, 1],
                    "verdict": (("pattern", JUDGE), patterns),
                },
                attrs={DESIGN_ATTR: self.design},
            )
        )

    def __repr__(self) -> str:
        s = self.sizes
        labelled = int((self._ds["truth"].values >= 0).sum())
        return (
            f"<bayesjudge.JuryItems: {s['row']} verdicts of {s['judge']} judges on {s['item']} "
            f"items ({labelled} labelled), covariates {self.covariate_names}"
            + (f", theta covariates {self.theta_covariate_names}" if self.theta_covariate_names
               else "")
            + f", design {self.design!r}>"
        )  # fmt: skip


def _names(columns) -> list[str]:
    if columns is None:
        return []
    names = [columns] if isinstance(columns, str) else list(columns)
    if not all(isinstance(c, str) for c in names):
        raise ValueError(f"theta_covariates must name columns (str); got {columns!r}.")
    return names


def _per_item(x: np.ndarray, row_item: np.ndarray, n_items: int, names, ids) -> np.ndarray:
    """Collapse row values (R, p_t) to one per item; refuse values that vary within an item."""
    low = np.full((n_items, x.shape[1]), np.inf)
    high = np.full((n_items, x.shape[1]), -np.inf)
    np.minimum.at(low, row_item, x)
    np.maximum.at(high, row_item, x)
    varies = low != high
    if varies.any():
        bad = {c: [ids[i] for i in np.flatnonzero(varies[:, k])] for k, c in enumerate(names)
               if varies[:, k].any()}  # fmt: skip
        detail = "; ".join(f"{c!r} on items {v[:10]}{' ...' if len(v) > 10 else ''}"
                           for c, v in bad.items())  # fmt: skip
        raise ValueError(
            f"theta_covariates must be constant within each item (the truth is one per item), "
            f"but {detail} take several values. Use an item-level column (e.g. the length "
            f"difference of the pair), or keep a per-verdict one (the position shown) in "
            f"covariates= only."
        )
    return low
