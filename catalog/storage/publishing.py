"""One prepare's publication, the same steps for every data dir and every writer (the prepare
driver, the TFDS importer): TFDS's ``incomplete_dir`` shape.

``with publishing(dest, key, work) as publication:`` begins a generation (`Publisher.begin`),
hands out its `ShardSink` (``publication.sink``, through which shards are written) and
``publication.publish(info)`` makes it the dataset's generation. An error inside removes the
work dir and discards the generation begun, except the `resumable` errors (an interrupt, a
lost worker), which keep the finished shards for the next run with the same plan `key`.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from catalog.errors import CatalogError
from catalog.info.dataset_info import DatasetInfo
from catalog.storage.data_dir import Publisher, ShardSink

__all__ = ["Publication", "publishing"]


@dataclass
class Publication:
    """A generation being written: `sink` takes its shards, `publish` ends it."""

    dest: Publisher
    key: str
    work: Path
    sink: ShardSink

    def publish(self, info: DatasetInfo) -> None:
        self.dest.publish(self.work, self.key, self.sink, info)


@contextlib.contextmanager
def publishing(
    dest: Publisher,
    key: str,
    work: Path,
    *,
    shard_bytes: int = 0,
    fresh: bool = True,
    resumable: tuple[type[BaseException], ...] = (),
) -> Iterator[Publication]:
    """Begin a generation of plan `key` written in `work` (see the module docstring);
    `fresh`: not resumed from an earlier run's shards; `shard_bytes`: the plan's shard size
    (recorded where a bucket's prepare under way is marked)."""
    sink: ShardSink | None = None
    try:
        sink = dest.begin(key, shard_bytes, fresh, work)
        yield Publication(dest, key, work, sink)
    except resumable:
        raise  # the finished shards stay for the next run to resume
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        with contextlib.suppress(CatalogError):  # the error that stopped it is the news
            dest.discard(key, sink)
        raise
