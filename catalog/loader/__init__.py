"""The loader behind `catalog.pipeline`: sampler, transformations, batches, workers, resume.

The source/sampler/loader paradigm: a random-access source (`catalog.DataSource`, or any
sequence), an index sampler that fixes the order before anything is read (`shuffle`,
`repeat`, `shard`), and a loader that reads, transforms, batches and prefetches in threads or
processes::

    ds = catalog.data_source("fashion_mnist", split="train")
    train = catalog.pipeline(ds).shuffle(seed=0).repeat(3).batch(128).prefetch(2)
    for batch in train:  # {"image": (128, 28, 28, 1) uint8, "label": (128,) int64}
        ...

One module per concept: `permutation` (the keyed bijection), `sampler`, `plan` (map, filter,
cache, batch of one unit of work), `stacking` (batches of columns, ragged values), `threads`
and `processes` (executors), `scheduler` (who computes, tuned), `autotune` (the default
without `prefetch`: tuned threads, one per core), `shm` (shared-memory transport),
`iterator` (order and resume), `pipeline` (the immutable chain) and `mix`. Image functions
for `map` are in `catalog.transforms`; `catalog.torch` / `catalog.jax` turn batches into
tensors / arrays.
"""

from catalog.loader.iterator import PipelineIterator
from catalog.loader.mix import Mix, mix
from catalog.loader.pipeline import Pipeline, pipeline

__all__ = ["Mix", "Pipeline", "PipelineIterator", "mix", "pipeline"]
