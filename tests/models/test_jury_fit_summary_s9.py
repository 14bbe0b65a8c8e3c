"""Regression of session 9's API hunt, finding F7.4: the jury fits' summary takes var_names.

``bj.fit(...).summary(var_names=[...])`` worked for one judge (``Fit``) and raised TypeError
for a jury (``JuryFit``) and a K-category jury (``CategoricalJuryFit``). The fits here are
short (the check is of the summary's bookkeeping, not of the sampler).
"""

import warnings

import numpy as np
import pytest
import xarray as xr

import bayesjudge as bj
from bayesjudge.data.categorical_jury import CategoricalJuryCounts
from bayesjudge.models.jury import JuryFit
from bayesjudge.warnings import ConvergenceWarning


@pytest.fixture(scope="module")
def jury_fit():
    """A JuryFit around made-up draws: compiling the binary jury model takes 30-60 s here.

    Its summary reads only the posterior and the settings, so draws of the right shapes test
    the same code as a sampled fit (tests/models/test_jury_model.py samples one).
    """
    rng = np.random.default_rng(3)
    coords = {"chain": [0, 1], "draw": np.arange(100), "system": ["all"], "stratum": ["all"]}
    coords["judge"] = ["a", "b", "c"]
    posterior = xr.Dataset(
        {
            "theta": (("chain", "draw", "system", "stratum"), rng.beta(30, 20, (2, 100, 1, 1))),
            "q0": (("chain", "draw", "judge"), rng.beta(40, 8, (2, 100, 3))),
            "q1": (("chain", "draw", "judge"), rng.beta(35, 6, (2, 100, 3))),
            "logit_theta": (
                ("chain", "draw", "system", "stratum"),
                rng.normal(size=(2, 100, 1, 1)),
            ),
        },
        coords=coords,
    )
    posterior["youden"] = posterior["q0"] + posterior["q1"] - 1
    config = {"kind": "jury", "calibration": "shared", "dependence": None, "pool_judges": False}
    config |= {"design": "stratified", "draws": 100, "tune": 100, "chains": 2, "random_seed": 3}
    return JuryFit(xr.DataTree.from_dict({"posterior": posterior}), config)


@pytest.fixture(scope="module")
def catjury_fit():
    counts = CategoricalJuryCounts.from_counts(
        ["000", "111", "222", "001", "121", "220", "010", "012"],
        test=[120, 60, 150, 30, 20, 25, 15, 10],
        labelled=[[10, 0, 0, 2, 0, 1, 1, 0], [1, 8, 0, 1, 3, 0, 1, 1], [0, 0, 12, 0, 1, 2, 0, 0]],
        judges=["a", "b", "c"], categories=["A", "tie", "B"],
    )  # fmt: skip
    with warnings.catch_warnings():  # 100 draws: r_hat and ESS warnings are expected
        warnings.simplefilter("ignore", ConvergenceWarning)
        return bj.fit(
                counts, scores={"A": 1, "tie": 0.5, "B": 0}, draws=100, tune=100, chains=2,
            random_seed=3, progressbar=False,
        )  # fmt: skip


def _fits(request):
    return request.getfixturevalue(request.param)


@pytest.fixture(params=["jury_fit", "catjury_fit"])
def fit(request):
    return _fits(request)


def test_var_names_selects_those_variables_with_the_same_numbers(fit):
    full = fit.summary()
    some = fit.summary(var_names=["theta"])
    assert isinstance(some, xr.Dataset)
    assert sorted(some.data_vars) == sorted(v for v in full.data_vars if v.startswith("theta"))
    xr.testing.assert_identical(some, full[list(some.data_vars)])
    assert some.attrs == full.attrs
    # Independent reference: the posterior mean and the 2.5 % quantile from the raw draws.
    draws = fit.posterior["theta"].values  # (chain, draw, ...)
    flat = draws.reshape(-1, *draws.shape[2:])
    np.testing.assert_allclose(some["theta"].values, flat.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(
        some["theta_ci"].sel(ci_bound="lower").values, np.quantile(flat, 0.025, axis=0),
        rtol=1e-12,
    )  # fmt: skip
    xr.testing.assert_identical(fit.summary(var_names="theta"), some)


@pytest.mark.parametrize(
    ("which", "names"),
    [("jury_fit", ["logit_theta", "q1"]), ("catjury_fit", ["score", "confusion"])],
)
def test_var_names_may_name_any_posterior_variable(request, which, names):
    """A variable the default leaves out (logit_theta), or several in the order given."""
    fit = request.getfixturevalue(which)
    out = fit.summary(var_names=names)
    assert list(out.data_vars)[:: len(out.data_vars) // 2] == names
    for name in names:
        mean = fit.posterior[name].mean(("chain", "draw"))
        xr.testing.assert_allclose(out[name], mean, rtol=1e-12)


@pytest.mark.parametrize("bad", [["theta", "nope"], [], [1]])
def test_unknown_var_names_are_refused_listing_the_available_ones(fit, bad):
    with pytest.raises(ValueError, match="var_names") as err:
        fit.summary(var_names=bad)
    assert "'theta'" in str(err.value)
    assert ("nope" in str(err.value)) if "nope" in bad else True
