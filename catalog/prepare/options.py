"""PrepareOptions: every setting of one prepare, in one frozen dataclass that checks itself.

The driver, the runners, `DatasetBuilder.prepare` and ``catalog prepare`` all pass one of these
instead of threading each setting through their signatures; a bad value is refused when the
options are made, before anything is downloaded.

>>> PrepareOptions(num_proc=2, shard_bytes=256 << 20).num_proc
2
>>> PrepareOptions(num_proc=0)
Traceback (most recent call last):
...
ValueError: num_proc must be >= 1, got 0
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_SHARD_BYTES", "PrepareOptions"]

#: The size a shard is cut at by default: 1 GiB.
DEFAULT_SHARD_BYTES = 1 << 30


@dataclass(frozen=True)
class PrepareOptions:
    """How to prepare a dataset.

    - `overwrite`: prepare again even when a matching copy is there (a new copy replaces it).
    - `max_examples_per_split`: stop each split after that many examples (smoke tests, CI);
      dataset_info.json then holds the counts written, and such a copy is reused only by a
      prepare with the same limit.
    - `num_proc`: write the shards in that many spawned processes.
    - `beam_pipeline_options`: run the units as Apache Beam work items, e.g.
      ``"runner=DirectRunner,direct_num_workers=2"`` (then `num_proc` is not used).
    - `shard_bytes`: cut shards at about this many bytes. None (the default): at the size an
      interrupted prepare of the same dataset was cutting them, so its finished shards are
      kept, else at `DEFAULT_SHARD_BYTES` (1 GiB).

    - `image_max_side`: store every image at most this many pixels on its longer side
      (`catalog.features.Image` ``max_side``), a copy of its own beside the full-size one
      (``<version>-max<N>``, `BuilderSpec.version_dir`); None: as the builder declares.

    The bytes written are the same whichever runner writes them.
    """

    overwrite: bool = False
    max_examples_per_split: int | None = None
    num_proc: int = 1
    beam_pipeline_options: str | None = None
    shard_bytes: int | None = None
    image_max_side: int | None = None

    def __post_init__(self) -> None:
        limit = self.max_examples_per_split
        if limit is not None and (not _whole(limit) or limit < 1):
            raise ValueError(f"max_examples_per_split must be >= 1, got {limit!r}")
        if not _whole(self.num_proc) or self.num_proc < 1:
            raise ValueError(f"num_proc must be >= 1, got {self.num_proc!r}")
        if self.shard_bytes is not None and (not _whole(self.shard_bytes) or self.shard_bytes < 1):
            raise ValueError(f"shard_bytes must be >= 1, got {self.shard_bytes!r}")
        side = self.image_max_side
        if side is not None and (not _whole(side) or side < 1):
            raise ValueError(f"image_max_side must be >= 1 (pixels), got {side!r}")
        beam = self.beam_pipeline_options
        if beam is not None and not isinstance(beam, str):
            raise TypeError(
                "beam_pipeline_options must be a string such as 'runner=DirectRunner', "
                f"got {beam!r}"
            )


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
