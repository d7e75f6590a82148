"""mix: interleave several pipelines deterministically, by weight.

Output ``t`` comes from pipeline ``i`` with probability ``weights[i] / sum(weights)``; the
choice is a pure function of (seed, t), so a mix resumes exactly: its state is the step and
each pipeline's own state. The mix ends when the pipeline it picks is exhausted (repeat the
pipelines to mix forever). Mix whole batches (each batch from one pipeline), or examples and
stack them yourself.

>>> import numpy as np
>>> from catalog.loader import mix, pipeline
>>> m = mix([pipeline(np.zeros(3)), pipeline(np.ones(3))], weights=[1, 1], seed=0)
>>> sorted(float(x) for x in m)[:1]
[0.0]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from catalog.loader.iterator import PipelineIterator
from catalog.loader.pipeline import Pipeline

__all__ = ["Mix", "MixIterator", "mix"]

_BLOCK = 1024  # choices drawn at once


class Mix:
    """Several pipelines interleaved by weight (see the module docstring)."""

    def __init__(self, pipelines: Sequence[Pipeline], weights: Sequence[float], seed: int) -> None:
        if not pipelines or len(pipelines) != len(weights):
            raise ValueError(
                f"mix needs one weight per pipeline, got {len(pipelines)} pipelines and "
                f"{len(weights)} weights"
            )
        w = np.asarray(weights, dtype=np.float64)
        if not np.all(np.isfinite(w)) or (w < 0).any() or w.sum() <= 0:
            raise ValueError(f"mix weights must be >= 0 with a positive sum, got {list(weights)}")
        if type(seed) is not int or seed < 0:
            raise ValueError(f"mix seed must be an int >= 0, got {seed!r}")
        self.pipelines = list(pipelines)
        self.cumulative = np.cumsum(w / w.sum())
        self.seed = seed

    def choices(self, block: int) -> np.ndarray[Any, Any]:
        """Which pipeline each of the steps ``block * _BLOCK ...`` reads."""
        draws = np.random.default_rng([self.seed, block]).random(_BLOCK)
        picked: np.ndarray[Any, Any] = np.searchsorted(self.cumulative, draws, side="right")
        result: np.ndarray[Any, Any] = np.minimum(picked, len(self.pipelines) - 1)
        return result

    def iterator(self, state: dict[str, Any] | None = None) -> MixIterator:
        """From the start, or from a `state_dict()` of an iterator of an equal mix."""
        return MixIterator(self, state)

    def __iter__(self) -> Iterator[Any]:
        return self.iterator()


class MixIterator(Iterator[Any]):
    """Iterates a `Mix`; `state_dict()` is ``{"step": t, "pipelines": [states...]}``."""

    def __init__(self, mix: Mix, state: dict[str, Any] | None) -> None:
        self._mix = mix
        if state is None:
            self._step, states = 0, [None] * len(mix.pipelines)
        else:
            if (
                not isinstance(state, dict)
                or type(state.get("step")) is not int
                or len(state.get("pipelines", ())) != len(mix.pipelines)
            ):
                raise ValueError(f"not a state of this mix: {state!r}")
            self._step, states = state["step"], state["pipelines"]
        self._iters: list[PipelineIterator] = [
            p.iterator(s) for p, s in zip(mix.pipelines, states, strict=True)
        ]
        self._block = -1
        self._choices = np.empty(0, np.int64)

    def state_dict(self) -> dict[str, Any]:
        return {"step": self._step, "pipelines": [it.state_dict() for it in self._iters]}

    def __next__(self) -> Any:
        block, offset = divmod(self._step, _BLOCK)
        if block != self._block:
            self._choices, self._block = self._mix.choices(block), block
        source = self._iters[int(self._choices[offset])]
        try:
            value = next(source)
        except BaseException:  # the end, an error or Ctrl-C: stop every pipeline's workers
            self.close()
            raise
        self._step += 1
        return value

    def close(self) -> None:
        for it in self._iters:
            it.close()


def mix(pipelines: Sequence[Pipeline], weights: Sequence[float], *, seed: int = 0) -> Mix:
    """Interleave `pipelines`: each output comes from pipeline i with probability
    proportional to ``weights[i]``, decided by (seed, output number).

    Args:
        pipelines: the pipelines to interleave (each may repeat).
        weights: one weight per pipeline, >= 0 with a positive sum.
        seed: an int >= 0; the same seed gives the same order.

    Returns:
        A `catalog.loader.mix.Mix`: iterate it; its iterators have ``state_dict()``, and
        ``.iterator(state)`` resumes exactly. It ends when the pipeline it picks ends.

    Raises:
        ValueError: not one weight per pipeline, weights not >= 0 with a positive sum, or a
            bad seed.

    Examples:
        >>> import numpy as np
        >>> from catalog.loader import mix, pipeline
        >>> mixed = mix([pipeline(np.zeros(4)), pipeline(np.ones(4))], weights=[1, 1], seed=0)
        >>> len(list(mixed)) <= 8
        True
    """
    return Mix(pipelines, weights, seed)
