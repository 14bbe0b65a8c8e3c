# ruff: noqa
# fmt: off
"""Vendored reference: crowd-kit 1.4.2's DawidSkene and MajorityVote (two-class and K = 3 checks).

Source: crowd-kit 1.4.2 (https://github.com/Toloka/crowd-kit), files
``crowdkit/aggregation/base/__init__.py`` (BaseClassificationAggregator),
``crowdkit/aggregation/utils.py`` (get_most_probable_labels, normalize_rows, get_accuracy,
named_series_attrib, add_skills_to_data), ``crowdkit/aggregation/classification/majority_vote.py``
(MajorityVote) and ``crowdkit/aggregation/classification/dawid_skene.py`` (DawidSkene and the
``initial_error_apply`` it calls). The code below is copied unchanged except for the imports
(the relative imports between those modules are dropped: everything lives in this one file);
crowd-kit itself is not installed because it pulls in transformers. It needs pandas and attrs.

Licence: Apache License 2.0. Copyright 2020 Crowd-Kit team authors.

   Licensed under the Apache License, Version 2.0 (the "License");
   you may not use this file except in compliance with the License.
   You may obtain a copy of the License at

       http://www.apache.org/licenses/LICENSE-2.0

   Unless required by applicable law or agreed to in writing, software
   distributed under the License is distributed on an "AS IS" BASIS,
   WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
   See the License for the specific language governing permissions and
   limitations under the License.
"""

__all__ = ["DawidSkene", "MajorityVote"]

from typing import Any, List, Literal, Optional, Tuple, cast

import attr
import numpy as np
import pandas as pd

# ---- crowdkit/aggregation/utils.py (the functions used below) ----


def get_most_probable_labels(proba: pd.DataFrame) -> "pd.Series[Any]":
    """Returns most probable labels

    Args:
        proba (DataFrame): Tasks' label probability distributions.
            A pandas.DataFrame indexed by `task` such that `result.loc[task, label]`
            is the probability of `task`'s true label to be equal to `label`. Each
            probability is between 0 and 1, all task's probabilities should sum up to 1
    """
    # patch for pandas<=1.1.5
    if not proba.size:
        return pd.Series([], dtype="O")
    return proba.idxmax(axis="columns")


def normalize_rows(scores: pd.DataFrame) -> pd.DataFrame:
    """Scales values so that every raw sums to 1

    Args:
        scores (DataFrame): Tasks' label scores.
            A pandas.DataFrame indexed by `task` such that `result.loc[task, label]`
            is the score of `label` for `task`.

    Returns:
        DataFrame: Tasks' label probability distributions.
            A pandas.DataFrame indexed by `task` such that `result.loc[task, label]`
            is the probability of `task`'s true label to be equal to `label`. Each
            probability is between 0 and 1, all task's probabilities should sum up to 1
    """
    return scores.div(scores.sum(axis=1), axis=0)


def get_accuracy(
    data: pd.DataFrame, true_labels: "pd.Series[Any]", by: Optional[str] = None
) -> "pd.Series[Any]":
    """
    Args:
        data (DataFrame): Workers' labeling results.
            A pandas.DataFrame containing `task`, `worker` and `label` columns.
        true_labels (Series): Tasks' ground truth labels.
            A pandas.Series indexed by `task` such that `labels.loc[task]`
            is the tasks's ground truth label.

    Returns:
        Series: workers' skills.
            A pandas.Series index by workers and holding corresponding worker's skill
    """
    if "weight" in data.columns:
        data = data[["task", "worker", "label", "weight"]]
    else:
        data = data[["task", "worker", "label"]]

    if data.empty:
        data["true_label"] = []
    else:
        data = data.join(pd.Series(true_labels, name="true_label"), on="task")

    data = data[data.true_label.notna()]

    if "weight" not in data.columns:
        data["weight"] = 1
    data.eval("score = weight * (label == true_label)", inplace=True)

    data = data.sort_values("score").drop_duplicates(
        ["task", "worker", "label"], keep="last"
    )

    if by is not None:
        group = data.groupby(by)
        return group.score.sum() / group.weight.sum()
    else:
        return data.score.sum() / data.weight.sum()  # type: ignore


def named_series_attrib(name: str) -> "pd.Series[Any]":
    """Attrs attribute with converter and setter which preserves specified attribute name"""

    def converter(series: "pd.Series[Any]") -> "pd.Series[Any]":
        series.name = name
        return series

    return attr.ib(init=False, converter=converter, on_setattr=attr.setters.convert)


def add_skills_to_data(
    data: pd.DataFrame,
    skills: "pd.Series[Any]",
    on_missing_skill: str,
    default_skill: Optional[float],
) -> pd.DataFrame:
    """
    Args:
        skills (Series): workers' skills.
            A pandas.Series index by workers and holding corresponding worker's skill
        on_missing_skill (str): How to handle assignments done by workers with unknown skill.
            Possible values:
                    * "error" — raise an exception if there is at least one assignment done by user with unknown skill;
                    * "ignore" — drop assignments with unknown skill values during prediction. Raise an exception if there is no
                    assignments with known skill for any task;
                    * value — default value will be used if skill is missing.
    """
    data = data.join(skills.rename("skill"), on="worker")

    if on_missing_skill != "value" and default_skill is not None:
        raise ValueError('default_skill is used but on_missing_skill is not "value"')

    if on_missing_skill == "error":
        missing_skills_count = data["skill"].isna().sum()
        if missing_skills_count > 0:
            raise ValueError(
                f"Skill value is missing in {missing_skills_count} assignments. Specify skills for every"
                f"used worker or use different 'on_unknown_skill' value."
            )
    elif on_missing_skill == "ignore":
        data.set_index("task", inplace=True)
        index_before_drop = data.index
        data.dropna(inplace=True)
        dropped_tasks_count = len(index_before_drop.difference(data.index))
        if dropped_tasks_count > 0:
            raise ValueError(
                f"{dropped_tasks_count} tasks has no workers with known skills. Provide at least one worker with known"
                f"skill for every task or use different 'on_unknown_skill' value."
            )
        data.reset_index(inplace=True)
    elif on_missing_skill == "value":
        if default_skill is None:
            raise ValueError(
                'Default skill value must be specified when using on_missing_skill="value"'
            )
        data.loc[data["skill"].isna(), "skill"] = default_skill
    else:
        raise ValueError(
            f'Unknown option {on_missing_skill!r} of "on_missing_skill" argument.'
        )
    return data


# ---- crowdkit/aggregation/base/__init__.py (BaseClassificationAggregator) ----

@attr.s
class BaseClassificationAggregator:
    """This is a base class for all classification aggregators

    Attributes:
        labels_ (typing.Optional[pandas.core.series.Series]): Tasks' labels.
            A pandas.Series indexed by `task` such that `labels.loc[task]`
            is the task's most likely true label.
    """

    labels_: Optional["pd.Series[Any]"] = named_series_attrib(name="agg_label")

    def fit(self, data: pd.DataFrame) -> "BaseClassificationAggregator":
        """Args:
            data (DataFrame): Workers' labeling results.
                A pandas.DataFrame containing `task`, `worker` and `label` columns.

        Returns:
            BaseClassificationAggregator: self.
        """
        raise NotImplementedError()

    def fit_predict(self, data: pd.DataFrame) -> "pd.Series[Any]":
        """Args:
            data (DataFrame): Workers' labeling results.
                A pandas.DataFrame containing `task`, `worker` and `label` columns.
        Returns:
            Series: Tasks' labels.
                A pandas.Series indexed by `task` such that `labels.loc[task]`
                is the tasks's most likely true label.
        """
        raise NotImplementedError()


# ---- crowdkit/aggregation/classification/majority_vote.py ----

@attr.s
class MajorityVote(BaseClassificationAggregator):
    r"""The **Majority Vote** aggregation algorithm is a straightforward approach for categorical aggregation: for each task,
    it outputs a label with the largest number of responses. Additionaly, the Majority Vote
    can be used when different weights are assigned to workers' votes. In this case, the
    resulting label will have the largest sum of weights.


    Note:
        If two or more labels have the largest number of votes, the resulting
        label will be the same for all tasks that have the same set of labels with the same number of votes.

    Examples:
        Basic Majority Vote:
        >>> from crowdkit.aggregation import MajorityVote
        >>> from crowdkit.datasets import load_dataset
        >>> df, gt = load_dataset('relevance-2')
        >>> result = MajorityVote().fit_predict(df)

        Weighted Majority Vote:
        >>> import pandas as pd
        >>> from crowdkit.aggregation import MajorityVote
        >>> df = pd.DataFrame(
        >>>     [
        >>>         ['t1', 'p1', 0],
        >>>         ['t1', 'p2', 0],
        >>>         ['t1', 'p3', 1],
        >>>         ['t2', 'p1', 1],
        >>>         ['t2', 'p2', 0],
        >>>         ['t2', 'p3', 1],
        >>>     ],
        >>>     columns=['task', 'worker', 'label']
        >>> )
        >>> skills = pd.Series({'p1': 0.5, 'p2': 0.7, 'p3': 0.4})
        >>> result = MajorityVote().fit_predict(df, skills)
    """

    default_skill: Optional[float] = attr.ib(default=None)
    """Default worker weight value."""

    skills_: Optional["pd.Series[Any]"] = named_series_attrib(name="skill")
    """The workers' skills. The `pandas.Series` data is indexed by `worker` and has the corresponding worker skill."""

    probas_: Optional[pd.DataFrame] = attr.ib(init=False)
    """The probability distributions of task labels. The `pandas.DataFrame` data is indexed by `task`
    so that `result.loc[task, label]` is the probability that the `task` true label is equal to `label`.
    Each probability is in the range from 0 to 1, all task probabilities must sum up to 1."""

    on_missing_skill: str = attr.ib(default="error")
    """A value which specifies how to handle assignments performed by workers with an unknown skill.

    Possible values:
    * `error`: raises an exception if there is at least one assignment performed by a worker with an unknown skill;
    * `ignore`: drops assignments performed by workers with an unknown skill during prediction,
    raises an exception if there are no assignments with a known skill for any task;
    * `value`: the default value will be used if a skill is missing."""

    def fit(
        self, data: pd.DataFrame, skills: Optional["pd.Series[Any]"] = None
    ) -> "MajorityVote":
        """Fits the model to the training data.

        Args:
            data (DataFrame): The training dataset of workers' labeling results
                which is represented as the `pandas.DataFrame` data containing `task`, `worker`, and `label` columns.

            skills (Series): The workers' skills. The `pandas.Series` data is indexed by `worker`
                and has the corresponding worker skill.

        Returns:
            MajorityVote: self.
        """

        data = data[["task", "worker", "label"]]

        if skills is None:
            scores = data[["task", "label"]].value_counts()
        else:
            data = add_skills_to_data(
                data, skills, self.on_missing_skill, self.default_skill
            )
            scores = data.groupby(["task", "label"])["skill"].sum()

        self.probas_ = normalize_rows(scores.unstack("label", fill_value=0))
        self.labels_ = get_most_probable_labels(self.probas_)
        self.skills_ = get_accuracy(data, self.labels_, by="worker")

        return self

    def fit_predict_proba(
        self, data: pd.DataFrame, skills: Optional["pd.Series[Any]"] = None
    ) -> pd.DataFrame:
        """Fits the model to the training data and returns probability distributions of labels for each task.

        Args:
            data (DataFrame): The training dataset of workers' labeling results
                which is represented as the `pandas.DataFrame` data containing `task`, `worker`, and `label` columns.

            skills (Series): The workers' skills. The `pandas.Series` data is indexed by `worker`
                and has the corresponding worker skill.

        Returns:
            DataFrame: The probability distributions of task labels.
                The `pandas.DataFrame` data is indexed by `task` so that `result.loc[task, label]` is the probability that the `task` true label is equal to `label`.
                Each probability is in the range from 0 to 1, all task probabilities must sum up to 1.
        """
        self.fit(data, skills)
        assert self.probas_ is not None, "no probas_"
        return self.probas_

    def fit_predict(
        self, data: pd.DataFrame, skills: Optional["pd.Series[Any]"] = None
    ) -> "pd.Series[Any]":
        """Fits the model to the training data and returns the aggregated results.

        Args:
           data (DataFrame): The training dataset of workers' labeling results
               which is represented as the `pandas.DataFrame` data containing `task`, `worker`, and `label` columns.

           skills (Series): The workers' skills. The `pandas.Series` data is indexed by `worker`
               and has the corresponding worker skill.

        Returns:
           Series: The task labels. The `pandas.Series` data is indexed by `task`
               so that `labels.loc[task]` is the most likely true label of tasks.
        """

        self.fit(data, skills)
        assert self.labels_ is not None, "no labels_"
        return self.labels_

# ---- crowdkit/aggregation/classification/dawid_skene.py (DawidSkene) ----

_EPS = np.float_power(10, -10)


@attr.s
class DawidSkene(BaseClassificationAggregator):
    r"""The **Dawid-Skene** aggregation model is a probabilistic model that parametrizes the expertise level of workers with confusion matrices.

    Let $e^w$ be a worker confusion (error) matrix of size $K \times K$ in case of the $K$ class classification,
    $p$ be a vector of prior class probabilities, $z_j$ be a true task label, and $y^w_j$ be a worker
    response to the task $j$. The relationship between these parameters is represented by the following latent
    label model.

    ![Dawid-Skene latent label model](https://tlk.s3.yandex.net/crowd-kit/docs/ds_llm.png)

    Here the prior true label probability is $\operatorname{Pr}(z_j = c) = p[c]$, and the probability distribution
    of the worker responses with the true label $c$ is represented by the corresponding column of the error matrix:
    $\operatorname{Pr}(y_j^w = k | z_j = c) = e^w[k, c]$.

    Parameters $p$, $e^w$, and latent variables $z$ are optimized with the Expectation-Maximization algorithm:
    1. **E-step**. Estimates the true task label probabilities using the specified workers' responses,
        the prior label probabilities, and the workers' error probability matrix.
    2. **M-step**. Estimates the workers' error probability matrix using the specified workers' responses and the true task label probabilities.

    A. Philip Dawid and Allan M. Skene. Maximum Likelihood Estimation of Observer Error-Rates Using the EM Algorithm.
    *Journal of the Royal Statistical Society. Series C (Applied Statistics), Vol. 28*, 1 (1979), 20–28.

    <https://doi.org/10.2307/2346806>

    Examples:
        >>> from crowdkit.aggregation import DawidSkene
        >>> from crowdkit.datasets import load_dataset
        >>> df, gt = load_dataset('relevance-2')
        >>> ds = DawidSkene(100)
        >>> result = ds.fit_predict(df)

    We can use the golden labels to correct the probability distributions of task labels
    by the true labels during the iterative process:

    Examples:
        >>> from crowdkit.aggregation import DawidSkene
        >>> from crowdkit.datasets import load_dataset
        >>> df, gt = load_dataset('relevance-2')
        >>> true_labels = gt[:1000]  # use the first 100 true labels
        >>> ds = DawidSkene(100)
        >>> result = ds.fit_predict(df, true_labels)

    We can also provide the workers' initial error matrices, which come from historical performance data.
    There two strategies to initialize the workers' error matrices: `assign` and `addition`.
    Here we create simple error matrices with two workers:

    ```
                  0  1
    worker label
    w851   0      9  1
           1      1  9
    w6991  0      9  1
           1      1  9
    ```

    Note:
        1. Make sure the error matrix is indexed by `worker` and `label`
        with columns for every `label_id` appeared in `data`.
        You can use the `pandas.MultiIndex` to create such an index, see the example below.

        2. When using `addition` strategy, the error matrix should contain the history **count**(not probability) that `worker` produces `observed_label`,
        given that the task true label is `true_label`.

    When we use the `addition` strategy, partial error matrices are acceptable,
    which will be added to the workers' priori error matrices estimated from the given data.

    Examples:
        >>> import pandas as pd
        >>> from crowdkit.aggregation import DawidSkene
        >>> from crowdkit.datasets import load_dataset
        >>> df, gt = load_dataset('relevance-2')
        >>> error_matrix_index = pd.MultiIndex.from_arrays([['w851', 'w851', 'w6991', 'w6991'], [0, 1, 0, 1]], names=['worker', 'label'])
        >>> initial_error = pd.DataFrame(
        ...     data=[[9, 1], [1, 9], [9, 1], [1, 9]],
        ...     index=error_matrix_index,
        ...     columns=[0, 1],
        ... )
        >>> ds = DawidSkene(100, initial_error_strategy='addition')
        >>> result = ds.fit_predict(df, initial_error=initial_error)

    We can also use the `assign` strategy to initialize the workers' error matrices.
    But in this case, the `initial_error` **must** contain all the workers' error matrices in the data.
    """

    n_iter: int = attr.ib(default=100)
    """The maximum number of EM iterations."""

    tol: float = attr.ib(default=1e-5)
    """The tolerance stopping criterion for iterative methods with a variable number of steps.
    The algorithm converges when the loss change is less than the `tol` parameter."""

    initial_error_strategy: Optional[Literal["assign", "addition"]] = attr.ib(
        default=None
    )
    """The strategy for initializing the workers' error matrices.
    The `assign` strategy assigns the initial error matrix to the workers' error matrices;
    the `addition` strategy adds the initial error matrix with the workers' priori error matrices estimated
    from the given data. If `None`, the initial error matrix is not used.

    Note:
        - `addition` strategy
            - The initial error matrix can be partial, not all workers' error matrices need to be provided.
            - The initial error matrix values should be the history **count** that
              `worker` produces `observed_label`, given that the task true label is `true_label`.
              For example(count values error matrix):

                                  0  1
                    worker label
                    w851   0      9  1
                           1      1  9
                    w6991  0      9  1
                           1      1  9

        - `assign` strategy
            - The initial error matrix must contain all the workers' error matrices in the data.
            - The initial error matrix values could be the probability or count that
              `worker` produces `observed_label`, given that the task true label is `true_label`.
              When given probability error matrix, the values should sum up to 1 for each worker at each `true_label` column.
              For example(probability values error matrix):

                                  0    1
                    worker label
                    w851   0      0.9  0.1
                           1      0.1  0.9
                    w6991  0      0.9  0.1
                           1      0.1  0.9
                    ...
    """

    probas_: Optional[pd.DataFrame] = attr.ib(init=False)
    """The probability distributions of task labels.
    The `pandas.Series` data is indexed by `task` so that `labels.loc[task]` is the most likely true label of tasks."""

    priors_: Optional["pd.Series[Any]"] = named_series_attrib(name="prior")
    """The prior label distribution.
    The `pandas.DataFrame` data is indexed by `task` so that `result.loc[task, label]` is the probability that
    the `task` true label is equal to `label`. Each probability is in the range from 0 to 1, all task probabilities
    must sum up to 1."""

    errors_: Optional[pd.DataFrame] = attr.ib(init=False)
    """The workers' error matrices. The `pandas.DataFrame` data is indexed by `worker` and `label` with a column
    for every `label_id` found in `data` so that `result.loc[worker, observed_label, true_label]` is the probability
    that `worker` produces `observed_label`, given that the task true label is `true_label`."""

    loss_history_: List[float] = attr.ib(init=False)
    """ A list of loss values during training."""

    @staticmethod
    def _m_step(
        data: pd.DataFrame,
        probas: pd.DataFrame,
        initial_error: Optional[pd.DataFrame] = None,
        initial_error_strategy: Optional[Literal["assign", "addition"]] = None,
    ) -> pd.DataFrame:
        """Performs M-step of the Dawid-Skene algorithm.

        Estimates the workers' error probability matrix using the specified workers' responses and the true task label probabilities.
        """
        joined = data.join(probas, on="task")
        joined.drop(columns=["task"], inplace=True)
        errors = joined.groupby(["worker", "label"], sort=False).sum()
        # Apply the initial error matrix
        errors = initial_error_apply(errors, initial_error, initial_error_strategy)
        # Normalize the error matrix
        errors.clip(lower=_EPS, inplace=True)
        errors /= errors.groupby("worker", sort=False).sum()

        return errors

    @staticmethod
    def _e_step(
        data: pd.DataFrame, priors: "pd.Series[Any]", errors: pd.DataFrame
    ) -> pd.DataFrame:
        """
        Performs E-step of the Dawid-Skene algorithm.

        Estimates the true task label probabilities using the specified workers' responses,
        the prior label probabilities, and the workers' error probability matrix.
        """
        # We have to multiply lots of probabilities and such products are known to converge
        # to zero exponentially fast. To avoid floating-point precision problems we work with
        # logs of original values
        joined = data.join(np.log2(errors), on=["worker", "label"])  # type: ignore
        joined.drop(columns=["worker", "label"], inplace=True)

        priors.clip(lower=_EPS, inplace=True)
        log_likelihoods = np.log2(priors) + joined.groupby("task", sort=False).sum()
        log_likelihoods.rename_axis("label", axis=1, inplace=True)

        # Exponentiating log_likelihoods 'as is' may still get us beyond our precision.
        # So we shift every row of log_likelihoods by a constant (which is equivalent to
        # multiplying likelihoods rows by a constant) so that max log_likelihood in each
        # row is equal to 0. This trick ensures proper scaling after exponentiating and
        # does not affect the result of E-step
        scaled_likelihoods = np.exp2(
            log_likelihoods.sub(log_likelihoods.max(axis=1), axis=0)
        )
        scaled_likelihoods = scaled_likelihoods.div(
            scaled_likelihoods.sum(axis=1), axis=0
        )
        # Convert columns types to label type
        scaled_likelihoods.columns = pd.Index(
            scaled_likelihoods.columns, name="label", dtype=data.label.dtype
        )
        return cast(pd.DataFrame, scaled_likelihoods)

    def _evidence_lower_bound(
        self,
        data: pd.DataFrame,
        probas: pd.DataFrame,
        priors: "pd.Series[Any]",
        errors: pd.DataFrame,
    ) -> float:
        # calculate joint probability log-likelihood expectation over probas
        joined = data.join(np.log(errors), on=["worker", "label"])  # type: ignore

        # escape boolean index/column names to prevent confusion between indexing by boolean array and iterable of names
        joined = joined.rename(columns={True: "True", False: "False"}, copy=False)
        priors = priors.rename(index={True: "True", False: "False"}, copy=False)
        priors.clip(lower=_EPS, inplace=True)

        joined.loc[:, priors.index] = joined.loc[:, priors.index].add(np.log(priors))

        joined.set_index(["task", "worker"], inplace=True)
        joint_expectation = (
            (probas.rename(columns={True: "True", False: "False"}) * joined).sum().sum()
        )
        probas.clip(lower=_EPS, inplace=True)
        entropy = -(np.log(probas) * probas).sum().sum()
        return float(joint_expectation + entropy)

    def fit(
        self,
        data: pd.DataFrame,
        true_labels: Optional["pd.Series[Any]"] = None,
        initial_error: Optional[pd.DataFrame] = None,
    ) -> "DawidSkene":
        """Fits the model to the training data with the EM algorithm.

        Args:
            data (DataFrame): The training dataset of workers' labeling results
                which is represented as the `pandas.DataFrame` data containing `task`, `worker`, and `label` columns.
            true_labels (Series): The ground truth labels of tasks.
                The `pandas.Series` data is indexed by `task`  so that `labels.loc[task]` is the task ground truth label.
                When provided, the model will correct the probability distributions of task labels by the true labels
                during the iterative process.
            initial_error (DataFrame): The workers' initial error matrices, comes from historical performance data.
                The `pandas.DataFrame` data is indexed by `worker` and `label` with a column
                for every `label_id` found in `data` so that `result.loc[worker, observed_label, true_label]` is the
                history **count** that `worker` produces `observed_label`, given that the task true label is `true_label`.
                When the `initial_error_strategy` is `assign`, the values in the error matrix can be the probability too.
                Check the examples in the class docstring for more details.

        Returns:
            DawidSkene: self.
        """

        data = data[["task", "worker", "label"]]

        # Early exit
        if not data.size:
            self.probas_ = pd.DataFrame()
            self.priors_ = pd.Series(dtype=float)
            self.errors_ = pd.DataFrame()
            self.labels_ = pd.Series(dtype=float)
            return self

        # Initialization
        probas = MajorityVote().fit_predict_proba(data)
        # correct the probas by true_labels
        if true_labels is not None:
            probas = self._correct_probas_with_golden(probas, true_labels)
        priors = probas.mean()
        errors = self._m_step(data, probas, initial_error, self.initial_error_strategy)
        loss = -np.inf
        self.loss_history_ = []

        # Updating proba and errors n_iter times
        for _ in range(self.n_iter):
            probas = self._e_step(data, priors, errors)
            # correct the probas by true_labels
            if true_labels is not None:
                probas = self._correct_probas_with_golden(probas, true_labels)
            priors = probas.mean()
            errors = self._m_step(data, probas)
            new_loss = self._evidence_lower_bound(data, probas, priors, errors) / len(
                data
            )
            self.loss_history_.append(new_loss)

            if new_loss - loss < self.tol:
                break
            loss = new_loss

        probas.columns = pd.Index(
            probas.columns, name="label", dtype=probas.columns.dtype
        )
        # Saving results
        self.probas_ = probas
        self.priors_ = priors
        self.errors_ = errors
        self.labels_ = get_most_probable_labels(probas)

        return self

    def fit_predict_proba(
        self,
        data: pd.DataFrame,
        true_labels: Optional["pd.Series[Any]"] = None,
        initial_error: Optional[pd.DataFrame] = None,
    ) -> pd.DataFrame:
        """Fits the model to the training data and returns probability distributions of labels for each task.

        Args:
            data (DataFrame): The training dataset of workers' labeling results
                which is represented as the `pandas.DataFrame` data containing `task`, `worker`, and `label` columns.
            true_labels (Series): The ground truth labels of tasks.
                The `pandas.Series` data is indexed by `task`  so that `labels.loc[task]` is the task ground truth label.
                When provided, the model will correct the probability distributions of task labels by the true labels
                during the iterative process.
            initial_error (DataFrame): The workers' initial error matrices, comes from historical performance data.
                The `pandas.DataFrame` data is indexed by `worker` and `label` with a column
                for every `label_id` found in `data` so that `result.loc[worker, observed_label, true_label]` is the
                history **count** that `worker` produces `observed_label`, given that the task true label is `true_label`.
                When the `initial_error_strategy` is `assign`, the values in the error matrix can be the probability too.
                Check the examples in the class docstring for more details.

        Returns:
            DataFrame: Probability distributions of task labels.
                The `pandas.DataFrame` data is indexed by `task` so that `result.loc[task, label]` is the probability that the `task` true label is equal to `label`.
                Each probability is in the range from 0 to 1, all task probabilities must sum up to 1.
        """

        self.fit(data, true_labels, initial_error)
        assert self.probas_ is not None, "no probas_"
        return self.probas_

    def fit_predict(
        self,
        data: pd.DataFrame,
        true_labels: Optional["pd.Series[Any]"] = None,
        initial_error: Optional[pd.DataFrame] = None,
    ) -> "pd.Series[Any]":
        """Fits the model to the training data and returns the aggregated results.

        Args:
            data (DataFrame): The training dataset of workers' labeling results
                which is represented as the `pandas.DataFrame` data containing `task`, `worker`, and `label` columns.
            true_labels (Series): The ground truth labels of tasks.
                The `pandas.Series` data is indexed by `task`  so that `labels.loc[task]` is the task ground truth label.
                When provided, the model will correct the probability distributions of task labels by the true labels
                during the iterative process.
            initial_error (DataFrame): The workers' initial error matrices, comes from historical performance data.
                The `pandas.DataFrame` data is indexed by `worker` and `label` with a column
                for every `label_id` found in `data` so that `result.loc[worker, observed_label, true_label]` is the
                history **count** that `worker` produces `observed_label`, given that the task true label is `true_label`.
                When the `initial_error_strategy` is `assign`, the values in the error matrix can be the probability too.
                Check the examples in the class docstring for more details.

        Returns:
            Series: Task labels. The `pandas.Series` data is indexed by `task` so that `labels.loc[task]` is the most likely true label of tasks.
        """

        self.fit(data, true_labels, initial_error)
        assert self.labels_ is not None, "no labels_"
        return self.labels_

    @staticmethod
    def _correct_probas_with_golden(
        probas: pd.DataFrame, true_labels: "pd.Series[Any]"
    ) -> pd.DataFrame:
        """
        Correct the probas by `true_labels`
        """
        corrected_probas = probas

        # Iterate over the unique labels present in true_labels
        for label in true_labels.unique():
            # Find the indices in both probas and true_labels where the true label is the current label
            indices = true_labels[true_labels == label].index.intersection(probas.index)
            # Set the corresponding probabilities to 1 for the correct label and 0 for others
            corrected_probas.loc[indices] = (
                0  # Set all columns to 0 for the given indices
            )
            corrected_probas.loc[indices, label] = (
                1  # Set the correct label column to 1
            )

        return corrected_probas


def initial_error_apply(
    errors: pd.DataFrame,
    initial_error: Optional[pd.DataFrame],
    initial_error_strategy: Optional[Literal["assign", "addition"]],
) -> pd.DataFrame:
    if initial_error_strategy is None or initial_error is None:
        return errors
    # check the index names of initial_error
    if initial_error.index.names != errors.index.names:
        raise ValueError(
            f"The index of initial_error must be: {errors.index.names},"
            f"but got: {initial_error.index.names}"
        )
    if initial_error_strategy == "assign":
        # check the completeness of initial_error: all the workers in data should be in initial_error
        mask = errors.index.isin(initial_error.index)
        if not mask.all():
            not_found_workers = errors.index[~mask].get_level_values("worker").unique()
            raise ValueError(
                f"All the workers in data should be in initial_error: "
                f"Can not find {len(not_found_workers)} workers' error matrix in initial_error"
            )
        # if the values in initial_error are probability, check the sum of each worker's error matrix
        if (initial_error <= 1.0).all().all() and not np.allclose(
            initial_error.groupby("worker", sort=False).sum(), 1.0
        ):
            raise ValueError(
                "The sum of each worker's error matrix in initial_error should be 1.0"
            )
        errors = initial_error
    elif initial_error_strategy == "addition":
        errors = errors.add(initial_error, axis="index", fill_value=0.0)
    else:
        raise ValueError(
            f"Invalid initial_error_strategy: {initial_error_strategy},"
            f"should be 'assign' or 'addition'"
        )
    return errors



# ---- not crowd-kit: the only addition ----
# The class docstrings' examples load crowd-kit's datasets (not vendored) and would be run by
# pytest's --doctest-modules; drop them here, leaving the copied code above untouched.
MajorityVote.__doc__ = DawidSkene.__doc__ = None
