"""The info a spec declares before anything is prepared: what `catalog info` shows of a
dataset that is not prepared, and what preparing it starts from."""

from __future__ import annotations

from catalog.info.dataset_info import DatasetInfo, SplitInfo
from catalog.spec.model import BuilderSpec
from catalog.spec.stored import source_json

__all__ = ["declared_info"]


def declared_info(spec: BuilderSpec) -> DatasetInfo:
    """The info a spec declares (example counts as expected, no shards yet)."""
    return DatasetInfo(
        name=spec.name,
        version=spec.version,
        features=spec.features,
        splits={n: SplitInfo(n, s.num_examples) for n, s in spec.splits.items()},
        description=spec.description,
        homepage=spec.homepage,
        citation=spec.citation,
        license=spec.license,
        supervised_keys=spec.supervised_keys,
        tags=spec.tags,
        downloads={
            d.name: (
                {"manual": d.filename, "size": None, "sha256": None, "verified": False}
                if d.manual
                else {"url": d.url, "size": d.size, "sha256": d.sha256} | _manual(d.by_hand)
            )
            for d in spec.downloads.values()
        },
        config=spec.config,
        config_description=spec.config_description,
        builder_path=str(spec.path or ""),
        fingerprint=spec.fingerprint,
        source=None if spec.origin is None else source_json(spec, *spec.origin),
    )


def _manual(manual: bool) -> dict[str, bool]:
    """A manual download's mark in its `DatasetInfo.downloads` entry (none on the others, so
    their info files stay as they were)."""
    return {"manual": True} if manual else {}
