"""What is known of a TFDS dataset offline, with nothing downloaded: `declared_spec`.

TFDS's features mapped to catalog's (through `catalog.interop.tfds.features`, the same mapping
as TFDS directories use: TFDS's ``features.json`` and labels files, written by TFDS into a
temporary folder), description, homepage, citation, supervised keys, configs, and no splits
yet (`catalog.interop.tfds.builder_spec` completes it by running the builder). What ``catalog
info tfds:NAME`` shows: it imports nothing of catalog's download layer.

A prepared ``tfds:NAME`` lives in the data dir as ``tfds.NAME`` (`data_dir_name`).
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

from catalog.errors import SourceFormatError, SpecError
from catalog.features import FeaturesDict, from_json, supervised_keys_problem
from catalog.features.image import RAW_MAX_BYTES
from catalog.formats.tfds.names import missing_library
from catalog.formats.tfds.runtime import TFDSName, load_builder
from catalog.formats.tfds.standin import running
from catalog.interop.tfds.declared_cache import cached_spec, keep_spec
from catalog.interop.tfds.features import from_tfds_json
from catalog.spec.model import BuilderSpec

__all__ = ["data_dir_name", "declared_of", "declared_spec"]


def data_dir_name(name: str) -> str:
    """The dataset name a prepared ``tfds:NAME`` has in the data dir.

    >>> data_dir_name("mnist")
    'tfds.mnist'
    """
    return f"tfds.{name}"


def _features(builder: Any, where: str) -> FeaturesDict:
    """TFDS's features as catalog's, through the features.json mapping."""
    with tempfile.TemporaryDirectory(prefix="catalog-tfds-features-") as folder, running(where):
        builder.info.features.save_config(folder)
        data = json.loads((Path(folder) / "features.json").read_text("utf-8"))
        try:
            features = from_tfds_json(data, Path(folder))
        except (SourceFormatError, SpecError) as error:  # named by the temporary file: by name
            text = str(error).replace(str(Path(folder) / "features.json"), "TFDS's features")
            raise type(error)(f"{where}: {text}") from None
    if not isinstance(features, FeaturesDict):
        raise SpecError(f"{where}: TFDS's top feature is not a FeaturesDict")
    return _stored_as_catalog(features)


def _stored_as_catalog(features: FeaturesDict) -> FeaturesDict:
    """`features` with each small image of fixed shape that TFDS stores as PNG stored as
    catalog's own builders store it, its pixels raw (read with no decoding: a prepared
    ``tfds:mnist`` reads as fast as catalog's mnist). PNG is lossless: the values are the
    same; a JPEG image keeps its encoding (its values are the encoder's)."""
    data = features.to_json()
    nodes = [data]
    while nodes:
        node = nodes.pop()
        shape = node.get("shape") or []
        if (
            node.get("type") == "Image"
            and node.get("encoding") == "png"
            and "max_side" not in node
            and shape
            and None not in shape
            and math.prod(shape) <= RAW_MAX_BYTES
        ):
            node["encoding"] = "raw"
        nodes.extend(v for v in (node.get("features") or {}).values() if isinstance(v, dict))
        if isinstance(node.get("feature"), dict):
            nodes.append(node["feature"])
    rebuilt = from_json(data)
    assert isinstance(rebuilt, FeaturesDict)
    return rebuilt


def declared_spec(name: TFDSName) -> BuilderSpec:
    """What is known of `name` offline (see the module docstring); no splits. Kept in the
    user's cache dir (`catalog.interop.tfds.declared_cache`): asked again, it is read from
    there without importing TFDS."""
    asked = str(name)
    spec = cached_spec(asked)
    if spec is None:
        spec = declared_of(load_builder(name), name)
        keep_spec(asked, spec)
    return spec


def declared_of(builder: Any, name: TFDSName) -> BuilderSpec:
    """`declared_spec` of a builder object (after its ``_split_generators`` ran, the class
    names some builders read from their files then, as CIFAR's, are in its features)."""
    where = str(name)
    try:
        info = builder.info
    except ModuleNotFoundError as error:  # its _info imports a library
        raise missing_library(where, error) from None
    config = builder.builder_config.name if builder.builder_config is not None else None
    configs = {c.name: c.description or "" for c in getattr(builder, "BUILDER_CONFIGS", ()) or ()}
    features = _features(builder, where)
    return BuilderSpec(
        name=data_dir_name(name.name),
        version=str(builder.version),
        features=features,
        downloads={},
        splits={},
        description=info.description or "",
        homepage=info.homepage or "",
        citation=info.citation or "",
        license=getattr(info, "license", "") or "",
        supervised_keys=_supervised(info.supervised_keys, features),
        tags=("tfds",),
        config=config,
        configs=configs,
        default_config=next(iter(configs), None),
        origin=("tfds", str(TFDSName(name.name, config, str(builder.version)))),
    )


def _supervised(keys: Any, features: FeaturesDict) -> Any:
    """TFDS's supervised keys as catalog's ``(input, target)``: two feature names, the input
    may be a dict of names -> feature names (criteo) or the target itself (lm1b); TFDS's
    other forms (a weight key, nested tuples) have no catalog equivalent: None."""
    if not isinstance(keys, tuple) or len(keys) != 2:
        return None
    inputs = dict(keys[0]) if isinstance(keys[0], dict) else keys[0]
    if supervised_keys_problem((inputs, keys[1]), features) is not None:
        return None
    return (inputs, keys[1])
