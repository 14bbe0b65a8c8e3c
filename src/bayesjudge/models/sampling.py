"""What every NUTS fit of the models shares: seeds, quiet PyMC, intervals of draws, diagnostics.

The K-category fit (:mod:`.categorical`), the jury fits (:mod:`.jury`,
:mod:`.jury_covariates`) use these; one rule for r_hat and ESS, one seed policy.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import warnings
from pathlib import Path

import arviz as az
import numpy as np
import xarray as xr

from bayesjudge._version import __version__
from bayesjudge.core._validation import is_seed
from bayesjudge.models.storage import DIGEST_ATTR, content_digest
from bayesjudge.warnings import BayesJudgeWarning, ConvergenceWarning

__all__ = [
    "ESS_MIN",
    "RHAT_MAX",
    "SEED_LIMIT",
    "check_int",
    "check_seed",
    "config_hash",
    "eti",
    "quiet_pymc",
    "sampler_seed",
    "sampling_diagnostics",
    "varies",
    "warn_sampling",
]

#: Largest acceptable split r_hat, smallest acceptable bulk/tail ESS (as the binary fits).
RHAT_MAX = 1.01
ESS_MIN = 400
#: nutpie takes seeds below 2**64.
SEED_LIMIT = 2**64


@contextlib.contextmanager
def quiet_pymc():
    """Silence PyMC's INFO lines ("Sampling: [...]")."""
    logger = logging.getLogger("pymc")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def check_seed(random_seed) -> int:
    """Return the seed as an int (drawn when None, so that it can be stored)."""
    if random_seed is None:
        return int(np.random.SeedSequence().generate_state(1)[0])
    if not is_seed(random_seed):
        raise ValueError(
            f"random_seed must be a non-negative int or None; got {random_seed!r} "
            f"({type(random_seed).__name__})."
        )
    return int(random_seed)


def sampler_seed(seed: int) -> int:
    """Return a seed below 2**64 (what nutpie and PyMC accept), deterministically."""
    if seed < SEED_LIMIT:
        return int(seed)
    return int(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0])


def check_int(name: str, value, low: int) -> int:
    """Return ``value`` as an int after checking it is a whole number >= ``low``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}; got {value!r}.")
    return int(value)


def config_hash(config: dict) -> str:
    """Short SHA-256 of a JSON-serialisable config (stored with a saved fit)."""
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]


def sample_nutpie(compiled, settings: dict, progress: bool) -> xr.DataTree:
    """Sample a compiled nutpie model; return its posterior and sample_stats as a DataTree.

    ``settings`` holds ``draws``, ``tune``, ``chains``, ``random_seed`` and ``target_accept``.
    A run that stopped early (Ctrl-C: fewer draws, or a last draw left NaN) raises
    KeyboardInterrupt, so that no partial result is kept.
    """
    import nutpie

    draws, chains = settings["draws"], settings["chains"]
    tree = nutpie.sample(
        compiled,
        draws=draws,
        tune=settings["tune"],
        chains=chains,
        cores=min(chains, os.cpu_count() or 1),
        seed=sampler_seed(settings["random_seed"]),
        target_accept=settings["target_accept"],
        progress_bar=progress,
        save_warmup=False,
    )
    post = tree["posterior"].dataset
    if (post.sizes.get("chain"), post.sizes.get("draw")) != (chains, draws) or any(
        bool(np.isnan(post[v].isel(draw=-1)).any()) for v in post.data_vars
    ):
        raise KeyboardInterrupt("sampling stopped early; no result was kept")
    return xr.DataTree.from_dict({g: tree[g].dataset for g in ("posterior", "sample_stats")})


def read_fit_tree(path, *, fmt: str, what: str, saver: str) -> tuple[xr.DataTree, dict]:
    """Open a saved fit; check its format, configuration hash and content digest.

    Parameters
    ----------
    path : str or path-like
    fmt : str
        The ``format`` attribute the file must carry.
    what : str
        The kind of fit, for the messages (``"jury fit"``).
    saver : str
        The method that writes such a file, for the messages (``"JuryFit.save"``).

    Returns
    -------
    (xarray.DataTree, dict)
        The loaded tree and its configuration.

    Raises
    ------
    FileNotFoundError
        If there is no file at ``path``.
    ValueError
        Naming the path and what is wrong: unreadable, another format, a configuration that
        does not match its hash, or content that does not match the digest stored at save.

    Examples
    --------
    >>> read_fit_tree("no-such-fit.nc", fmt="x", what="jury fit", saver="JuryFit.save")
    Traceback (most recent call last):
    ...
    FileNotFoundError: No jury fit file at 'no-such-fit.nc'.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No {what} file at {str(path)!r}.")
    try:
        with xr.open_datatree(path, engine="h5netcdf") as opened:
            tree = opened.load()
    except Exception as err:  # h5py OSError, xarray ValueError, ...: all mean "unreadable"
        raise ValueError(
            f"{str(path)!r} cannot be loaded as a bayesjudge {what}: it is not a readable "
            f"netCDF file, or it is truncated ({type(err).__name__}: {err}). Refit and save "
            f"again with {saver}(path)."
        ) from err
    if tree.attrs.get("format") != fmt or "bayesjudge_config" not in tree.attrs:
        raise ValueError(
            f"{str(path)!r} is not a bayesjudge {what} (format {tree.attrs.get('format')!r}); "
            f"write one with {saver}(path)."
        )
    try:
        config = json.loads(tree.attrs["bayesjudge_config"])
    except (TypeError, ValueError):
        config = None
    if not isinstance(config, dict) or config_hash(config) != tree.attrs.get(
        "bayesjudge_config_hash"
    ):
        raise ValueError(
            f"The configuration stored in {str(path)!r} does not match its hash; the file was "
            f"modified or damaged. Refit and save again."
        )
    stored = tree.attrs.get(DIGEST_ATTR)
    check = tree.copy()
    check.attrs.pop(DIGEST_ATTR, None)
    if stored is None or content_digest(check) != stored:
        raise ValueError(
            f"{str(path)!r} was changed after it was saved (or saved without a content "
            f"digest): its content (posterior draws, counts or other data) does not match the "
            f"digest stored by {saver}. Do not edit saved fits; refit and save again, or load "
            f"the original file."
        )
    if tree.attrs.get("bayesjudge_version") != __version__:
        warnings.warn(
            f"{str(path)!r} was written by bayesjudge {tree.attrs.get('bayesjudge_version')} "
            f"and is read by {__version__}; check results against a refit.",
            BayesJudgeWarning,
            stacklevel=3,
        )
    return tree, config


def summary_names(var_names, present: list, reported: list) -> list:
    """Return the variables a fit's ``summary(var_names=...)`` reports, checked.

    None gives ``reported``; a string is one name; an empty list, a name that is not text or
    one the posterior lacks is a ValueError listing the posterior's variables.
    """
    if var_names is None:
        return list(reported)
    names = [var_names] if isinstance(var_names, str) else list(var_names)
    unknown = [v for v in names if not isinstance(v, str) or v not in present]
    if unknown:
        raise ValueError(f"var_names {unknown} are not in the posterior; it has {present}.")
    if not names:
        raise ValueError(f"var_names is empty; name some of the posterior's variables {present}.")
    return names


def eti(draws: xr.DataArray, ci_prob: float) -> xr.DataArray:
    """Equal-tailed interval over (chain, draw), dim ``ci_bound`` = ["lower", "upper"]."""
    q = draws.quantile([(1 - ci_prob) / 2, (1 + ci_prob) / 2], dim=("chain", "draw"))
    return q.rename(quantile="ci_bound").assign_coords(ci_bound=["lower", "upper"])


def varies(draws: xr.DataArray) -> bool:
    """Whether any element of the draws moves (r_hat and ESS of a constant are undefined)."""
    return bool((draws.max(("chain", "draw")) > draws.min(("chain", "draw"))).any())


def sampling_diagnostics(posterior: xr.Dataset, sample_stats: xr.Dataset) -> dict:
    """Divergences, the largest r_hat and the smallest bulk/tail ESS of ``posterior``'s vars.

    ``worst`` names the variable of each extreme.
    """
    moving = [v for v in posterior.data_vars if varies(posterior[v])]
    diverging = sample_stats["diverging"]
    out = {"divergences": int(diverging.sum()), "draws": int(diverging.size), "worst": {}}
    for key, stat in (
        ("r_hat_max", az.rhat(posterior[moving])),
        ("ess_bulk_min", az.ess(posterior[moving], method="bulk")),
        ("ess_tail_min", az.ess(posterior[moving], method="tail")),
    ):
        values = {v: float(stat[v].max() if key == "r_hat_max" else stat[v].min()) for v in moving}
        name = (max if key == "r_hat_max" else min)(values, key=values.get)
        out[key], out["worst"][key] = values[name], name
    return out


def warn_sampling(d: dict, config: dict, r_hat_advice: str, stacklevel: int) -> dict:
    """Warn (:class:`ConvergenceWarning`) with numbers and advice where ``d`` is bad; return it.

    ``d`` is :func:`sampling_diagnostics`' dict, ``config`` holds ``target_accept``, ``draws``
    and ``chains``; ``r_hat_advice`` ends the r_hat message (what to do beyond more draws).
    """
    problems = []
    if d["divergences"]:
        higher = 0.995 if config["target_accept"] >= 0.99 else 0.99
        problems.append(
            f"{d['divergences']} of {d['draws']} draws diverged (the draws may be biased); "
            f"refit with target_accept={higher}"
        )
    if d["r_hat_max"] > RHAT_MAX:
        problems.append(
            f"r_hat = {d['r_hat_max']:.3f} > {RHAT_MAX} for {d['worst']['r_hat_max']!r} "
            f"(the chains disagree): run more tune and draws; {r_hat_advice}"
        )
    for key, label in (("ess_bulk_min", "bulk"), ("ess_tail_min", "tail")):
        if d[key] < ESS_MIN:
            problems.append(
                f"{label} ESS = {d[key]:.0f} < {ESS_MIN} for {d['worst'][key]!r}; raise "
                f"draws (now {config['draws']} per chain × {config['chains']} chains)"
            )
    if problems:
        warnings.warn(
            "Sampler diagnostics: " + "; ".join(problems) + ".",
            ConvergenceWarning,
            stacklevel=stacklevel + 1,
        )
    return d
