"""Publishing a prepared dataset: a finished work dir becomes the dataset's new generation.

Readers see the old copy or the new one, never half of one: the work dir is complete (every
shard verified, dataset_info.json written last) before it is renamed to a generation, and the
``<version>`` pointer is moved to it by one atomic rename. The protocol (generations, the
pointer, readers' pins, when old generations are removed) is `catalog.storage.generations`.
"""

from __future__ import annotations

from catalog.storage.generations import collect, publish

__all__ = ["collect", "publish"]
