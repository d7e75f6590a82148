"""PyTorch adapter: pipeline batches (NumPy) as tensors, without copies that are not needed.

>>> from catalog.torch import to_torch                      # doctest: +SKIP
>>> for batch in to_torch_iter(pipe, device="cuda"):         # doctest: +SKIP
...     loss = model(batch["image"]).sum()

`torch.from_numpy` shares the arrays' memory (a batch from process workers lives in shared
memory already). Read-only or negatively strided arrays are copied once; strings and lists
(ragged values) stay as they are. With ``pin_memory=True`` tensors are pinned (page-locked)
so the copy to a CUDA device can run asynchronously (``non_blocking``).

`collate` is a ``collate_fn`` for ``torch.utils.data.DataLoader`` over a `DataSource`: torch's
default collate, once every array feature has one shape across the batch; otherwise (images
of different sizes) one clear error naming the feature, the shapes and the fix, instead of
torch's ("Trying to resize storage that is not resizable" in a worker)::

    from catalog.torch import collate
    loader = DataLoader(ds, batch_size=8, num_workers=2, collate_fn=collate)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from catalog._util.nested import map_leaves
from catalog.errors import FeatureError, MissingDependencyError

__all__ = ["collate", "to_torch", "to_torch_iter"]

#: How many different shapes a shape error lists (each with the first example holding it).
_SHOWN_SHAPES = 4


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


def collate(batch: Sequence[Any]) -> Any:
    """Examples (dicts of NumPy arrays, numbers and strings) as one batch, for DataLoader's
    ``collate_fn``: ``torch.utils.data.default_collate(batch)`` (arrays stacked into tensors,
    strings into lists), after checking that each array feature has one shape in the batch.

    Raises FeatureError naming the feature and its shapes when they differ (images of
    different sizes): resize them first (``catalog.transforms.resize`` in
    ``catalog.pipeline(ds).map(...)``), or pad them in a collate_fn of your own.
    """
    torch = _torch()
    batch = list(batch)
    _check_shapes(batch, "")
    return torch.utils.data.default_collate(batch)


def _check_shapes(values: list[Any], path: str) -> None:
    """Raise FeatureError for the first array (at `path` in every example) whose shape
    varies across `values`, depth first; lists of different lengths, likewise. `path` is a
    feature path (``image``, ``objects/bbox``), ``[i]`` marking a tuple's or list's item."""
    first = values[0] if values else None
    if isinstance(first, Mapping):
        for key in first:
            if all(isinstance(v, Mapping) and key in v for v in values):
                _check_shapes([v[key] for v in values], f"{path}/{key}" if path else str(key))
    elif isinstance(first, (tuple, list)):
        lengths = [
            f"length {len(v)}" if isinstance(v, (tuple, list)) else f"a {type(v).__name__}"
            for v in values
        ]
        if len(set(lengths)) > 1:
            _shape_error(path, lengths, "lists of different lengths")
        for i in range(len(first)):
            _check_shapes([v[i] for v in values], f"{path}[{i}]")
    elif hasattr(first, "shape") and hasattr(first, "dtype"):  # a NumPy array or a tensor
        shapes = [str(tuple(getattr(v, "shape", ()))) for v in values]
        if len(set(shapes)) > 1:
            _shape_error(path, shapes, "arrays of different shapes")


def _shape_error(path: str, shapes: list[str], what: str) -> None:
    seen: dict[str, int] = {}
    for index, shape in enumerate(shapes):
        seen.setdefault(shape, index)
    listed = [f"{shape} in example {index}" for shape, index in seen.items()]
    if len(listed) > _SHOWN_SHAPES:
        listed[_SHOWN_SHAPES:] = [f"and {len(listed) - _SHOWN_SHAPES} more"]
    reason = (
        f"{what} in one batch of {len(shapes)} cannot be stacked into a tensor: "
        f"{', '.join(listed)}; give them one shape before batching: resize them with "
        "catalog.transforms.resize in catalog.pipeline(ds).map(...).batch(n) (then "
        "catalog.torch.to_torch_iter), or pad them to one shape in a collate_fn of your own"
    )
    if path.startswith("["):  # an item of tuple examples (image, label): no feature name
        raise FeatureError(f"item {path} of the examples: {reason}")
    raise FeatureError(reason, feature_path=path)
