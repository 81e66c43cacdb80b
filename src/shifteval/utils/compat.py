"""Compatibility shim for a torchvision whose C++ extension cannot load.

Some machines carry a CUDA build of torchvision next to a CPU build of torch. torchvision then
fails to load its extension ``_C`` and, at import, registers fake (meta) kernels for
``torchvision::nms`` and ``torchvision::qnms`` against operators that were never defined, so
``import torchvision`` -- and therefore ``import timm`` -- raises
``RuntimeError: operator torchvision::nms does not exist``.

:func:`ensure_torchvision` runs before torchvision is imported. It tries to load the extension
exactly as torchvision would; only when that fails does it declare the two operator schemas
(no kernels), which is all the import needs. Classification models work; torchvision's detection
ops (``torchvision.ops.nms`` and friends) stay unavailable and raise if called, as they would
without the shim.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

# Schemas as torchvision's C++ sources declare them (csrc/ops/nms.cpp, csrc/ops/quantized/...).
_SCHEMAS = {
    "nms": "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms": "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
}
_LIBRARY = None  # keeps the schema registrations alive for the life of the process
applied = False  # True once the shim had to declare the schemas


def _extension_loads() -> bool:
    import torch

    spec = importlib.util.find_spec("torchvision")
    if spec is None or spec.origin is None:
        return True  # torchvision absent: nothing to repair
    candidates = sorted(Path(spec.origin).parent.glob("_C*.so")) + sorted(
        Path(spec.origin).parent.glob("_C*.pyd")
    )
    if not candidates:
        return False
    try:
        torch.ops.load_library(str(candidates[0]))
    except (OSError, ImportError, RuntimeError):
        return False
    return True


def ensure_torchvision() -> bool:
    """Make ``import torchvision`` (and ``import timm``) work on this machine.

    Returns
    -------
    bool
        True when the shim declared the missing operator schemas, False when nothing was
        needed (the extension loads, torchvision is absent or already imported).

    Examples
    --------
    Idempotent: once torchvision is importable, a second call changes nothing.

    >>> import shifteval.utils.compat as compat
    >>> first = compat.ensure_torchvision()
    >>> import torchvision
    >>> compat.ensure_torchvision() == compat.applied == first
    True
    """
    global _LIBRARY, applied
    if applied:
        return True
    if "torchvision" in sys.modules or _extension_loads():
        return False
    import torch

    _LIBRARY = torch.library.Library("torchvision", "FRAGMENT")
    for name, schema in _SCHEMAS.items():
        if not hasattr(torch.ops.torchvision, name):
            _LIBRARY.define(schema)
    applied = True
    return True


def import_timm() -> ModuleType:
    """Import and return :mod:`timm`, applying :func:`ensure_torchvision` first.

    Returns
    -------
    module
        The :mod:`timm` module.

    Examples
    --------
    >>> timm = import_timm()
    >>> timm.__name__, callable(timm.create_model)
    ('timm', True)
    """
    ensure_torchvision()
    import timm

    return timm
