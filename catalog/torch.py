"""PyTorch adapter: pipeline batches (NumPy) as tensors, without copies that are not needed.

>>> from catalog.torch import to_torch                      # doctest: +SKIP
>>> for batch in to_torch_iter(pipe, device="cuda"):         # doctest: +SKIP
...     loss = model(batch["image"]).sum()

`torch.from_numpy` shares the arrays' memory (a batch from process workers lives in shared
memory already). Read-only or negatively strided arrays are copied once; strings and lists
(ragged values) stay as they are. With ``pin_memory=True`` tensors are pinned (page-locked)
so the copy to a CUDA device can run asynchronously (``non_blocking``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from catalog._util.nested import map_leaves
from catalog.errors import MissingDependencyError

__all__ = ["to_torch", "to_torch_iter"]


def _torch() -> Any:
    try:
        import torch
    except ImportError as error:
        raise MissingDependencyError(
            "catalog.torch needs PyTorch, which is not installed: pip install 'catalog[torch]'"
        ) from error
    return torch


def to_torch(batch: Any, *, device: Any = None, pin_memory: bool = False) -> Any:
    """`batch` (dicts, tuples and lists of arrays) with every NumPy array a torch.Tensor."""
    torch = _torch()
    pin = pin_memory and torch.cuda.is_available()

    def convert(value: Any) -> Any:
        if isinstance(value, np.ndarray) and value.dtype != object:
            if not value.flags.writeable or any(s < 0 for s in value.strides):
                value = np.array(value)
            tensor = torch.from_numpy(value)
            if pin:
                tensor = tensor.pin_memory()
            if device is not None:
                tensor = tensor.to(device, non_blocking=pin)
            return tensor
        return value

    return map_leaves(convert, batch)


def to_torch_iter(
    batches: Iterable[Any], *, device: Any = None, pin_memory: bool = False
) -> Iterator[Any]:
    """`to_torch` on each batch of `batches` (a pipeline)."""
    for batch in batches:
        yield to_torch(batch, device=device, pin_memory=pin_memory)
