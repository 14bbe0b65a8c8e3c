"""What a saved fit carries to be checked at load: the content digest of its tree.

:meth:`bayesjudge.Fit.save` and :meth:`bayesjudge.models.categorical.CategoricalFit.save` store
:func:`content_digest` in the root attr :data:`DIGEST_ATTR`; :func:`bayesjudge.load` and
:func:`~bayesjudge.models.categorical.load_categorical` recompute it and refuse a file whose
content changed after it was saved.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import xarray as xr

__all__ = ["DIGEST_ATTR", "content_digest"]

#: Root attr of a saved fit: SHA-256 of its content (see :func:`content_digest`).
DIGEST_ATTR = "bayesjudge_digest"


def _canonical_values(values: np.ndarray) -> bytes:
    """Bytes of an array that survive a netCDF round trip (dtype width and string kind aside)."""
    values = np.asarray(values)
    kind = values.dtype.kind
    if kind in "USO":
        text = [v.decode() if isinstance(v, bytes) else str(v) for v in values.ravel().tolist()]
        return json.dumps(text).encode()
    if kind == "b":
        values = values.astype(np.uint8)
    elif kind == "i" or (kind == "u" and values.dtype.itemsize < 8):
        values = values.astype(np.int64)
    elif kind == "f":
        values = values.astype(np.float64)
    elif kind in "mM":
        values = values.view(np.int64)
    return np.ascontiguousarray(values).tobytes()


def content_digest(tree: xr.DataTree) -> str:
    """SHA-256 of a fit's content: every group's variables and coords, and the configuration.

    Covers each variable's name, dims, shape and values (numbers as int64/float64 bytes,
    labels as text) in every group, and the root attr ``bayesjudge_config``. Other attrs
    (version, sampler metadata) are not covered. Stored by :meth:`Fit.save`, checked by
    :func:`load`.

    Examples
    --------
    >>> import xarray as xr
    >>> tree = xr.DataTree(xr.Dataset({"theta": ("draw", [0.1, 0.2])}))
    >>> a = content_digest(tree)
    >>> tree["theta"] = ("draw", [0.1, 0.3])
    >>> content_digest(tree) == a, len(a)
    (False, 64)
    """
    digest = hashlib.sha256()
    digest.update(str(tree.attrs.get("bayesjudge_config", "")).encode())
    for node in sorted(tree.subtree, key=lambda n: n.path):
        ds = node.to_dataset(inherit=False)
        for name in sorted(map(str, ds.variables)):
            var = ds.variables[name]
            header = json.dumps([node.path, name, list(var.dims), list(var.shape)])
            digest.update(header.encode())
            digest.update(_canonical_values(var.values))
    return digest.hexdigest()
