"""A Croissant file (a path or an http(s) URL) -> a checked, in-memory `BuilderSpec`.

`croissant_spec` reads the file (`catalog.interop.croissant.read.parse`), fetches its
distribution through catalog's download layer (sha256 verified, mirrors and the offline mode
honoured, cached like any builder's files), then reads each split once with its source-format
reader to count its examples and find the class names an image folder's labels use. The spec
it returns is prepared like one a builder.yaml gives: ``DatasetBuilder(spec).prepare()``
(``catalog prepare metadata.json``) reads the same cached files again.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import itertools
import json
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from catalog._util.hashing import md5_file
from catalog._util.small_file import read_small
from catalog.download import DownloadConfig, DownloadManager, Resource
from catalog.download.checksums import content_name
from catalog.errors import ChecksumError, FeatureError, SourceFormatError, SpecError
from catalog.features import Audio, ClassLabel, Feature, FeaturesDict, Scalar, Sequence, Text
from catalog.formats import FORMATS
from catalog.formats.croissant.batches import split_counts
from catalog.formats.croissant.files import LongNumber, loads_json
from catalog.formats.croissant.records import Recipe, quick_count
from catalog.formats.croissant.values import audio_format, is_missing
from catalog.formats.tables.parquet import parquet_file
from catalog.interop.croissant.hub import hub_lister
from catalog.interop.croissant.nodes import dataset_name
from catalog.interop.croissant.read import Download, Draft, SplitDraft, parse
from catalog.interop.croissant.recipe import PLACEHOLDER_RATE
from catalog.prepare.driver import resources
from catalog.prepare.split_sources import split_sources
from catalog.spec.model import BuilderSpec, DownloadSpec, SplitSpec

__all__ = ["MAX_CROISSANT_SIZE", "croissant_spec", "split_location"]

#: The most bytes a Croissant file may hold (they describe data; they are not data).
MAX_CROISSANT_SIZE = 16 << 20
#: The most records read to find a field's first value (which says whether it holds lists).
LIST_PROBE = 1000


def _load(location: str, manager: DownloadManager) -> tuple[Any, str]:
    """The parsed JSON of the Croissant file at `location` (a path or URL), and a name for it."""
    if urlsplit(location).scheme in ("http", "https"):
        name = urlsplit(location).path.rsplit("/", 1)[-1] or "croissant.json"
        wanted = Resource((location,), None, None, name, max_size=MAX_CROISSANT_SIZE)
        path = manager.download(wanted).path
    else:
        path = Path(location).expanduser()
    data = read_small(
        path, MAX_CROISSANT_SIZE, SpecError, where=location,
        too_large=f"larger than {MAX_CROISSANT_SIZE >> 20} MiB; not a Croissant file",
    )  # fmt: skip
    try:
        return loads_json(data.decode("utf-8")), location
    except LongNumber as error:
        raise SpecError(f"{location}: {error}") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise SpecError(f"{location}: not JSON ({error})") from None


def _sized(downloads: dict[str, Download], manager: DownloadManager) -> dict[str, DownloadSpec]:
    """The downloads as a spec's, each with its size: a file whose Croissant entry gives no
    exact size is taken from the cache (by its sha256; the prepare then verifies it whole) or
    fetched first, and must then match its sha256."""
    specs = {}
    for d in downloads.values():
        size, sha256 = d.size, d.sha256
        cached = manager.download_dir / content_name(d.sha256, d.filename) if sha256 else None
        if size is None and cached is not None and cached.is_file():
            size = cached.stat().st_size
        if size is None or not sha256:  # no sha256 given (the Hub's files): recorded now
            got = manager.download(Resource((d.url,), None, None, d.filename))
            if d.md5 and (md5 := md5_file(got.path)) != d.md5:
                raise ChecksumError(
                    f"{d.url}: md5 mismatch: the Croissant file says {d.md5}, the server sent "
                    f"{md5} ({got.size} bytes)"
                )
            sha256 = sha256 or got.sha256
            if got.sha256 != sha256:
                raise ChecksumError(
                    f"{d.url}: sha256 mismatch: the Croissant file says {d.sha256}, the "
                    f"server sent {got.sha256} ({got.size} bytes)"
                )
            size = got.size
        specs[d.name] = DownloadSpec(d.name, d.url, (), size, sha256, d.filename)
    return specs


def _features(draft: Draft, found: dict[str, set[str]]) -> FeaturesDict:
    """The spec's features: every split's, which must agree; a label whose names the files
    give gets the sorted names found in every split."""
    features: dict[str, Feature] = {}
    first = next(iter(draft.splits.values()))
    for split in draft.splits.values():
        if sorted(split.features) != sorted(first.features):
            raise SpecError(
                f"not supported yet: record sets {first.name} and {split.name} have different "
                f"fields ({', '.join(first.features)} / {', '.join(split.features)}); the splits "
                "of one dataset have the same features"
            )
        for name, feature in split.features.items():
            if feature is None:
                feature = ClassLabel(names=sorted(found.get(name, set())) or ["none"])
            if name in features and features[name].to_json() != feature.to_json():
                raise SpecError(
                    f"record set {split.name}: field {name!r} is {feature!r} here but "
                    f"{features[name]!r} in another record set; one dataset has one type per field"
                )
            features[name] = feature
    return FeaturesDict(features)


def _options(split: SplitDraft, fill: Mapping[str, str]) -> dict[str, Any]:
    """The split's options, with its format's defaults for those the Croissant file does
    not decide (what a builder.yaml's loader fills in), and the fills of its fields."""
    fmt = FORMATS[split.format]
    defaults = {name: copy.deepcopy(option.default) for name, option in fmt.options.items()}
    fills = {name: text for name, text in fill.items() if name in split.features}
    return {**defaults, **split.options, **({"fill": fills} if fills else {})}


def _check_fill(fill: Mapping[str, str], draft: Draft) -> None:
    known = sorted({name for split in draft.splits.values() for name in split.features})
    for name in fill:
        if name not in known:
            raise SpecError(
                f"--fill {name}=...: the record set has no field {name!r}; its fields: "
                f"{', '.join(known)}"
            )


def _is_list(kind: Any) -> bool:
    import pyarrow as pa

    return bool(
        pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind)
    )


def _find_lists(split: SplitDraft, source: Any) -> bool:
    """Each text or number field holding lists (mlcroissant gives them as lists) made a
    `Sequence` of its feature: a Parquet list column (by the first file's schema), or a field
    whose first value (of the first `LIST_PROBE` records) is a list; whether there was one."""
    candidates = {n for n, f in split.features.items() if isinstance(f, (Scalar, Text))}
    recipe = Recipe(source.options["recipe"], source.options["files"])
    pending = {n: f for n in candidates if isinstance(f := recipe.features.get(n), str)}
    lists = []
    readers = recipe.fields[recipe.target]
    for name, field in list(pending.items()):  # a Parquet column: its first file's schema
        reader = readers.get(field)
        if reader is not None and (reader.property is not None or reader.no_values):
            del pending[name]  # a file's path, name or bytes, or no value: never a list
            continue
        file = None if reader is None else reader.file
        if reader is None or reader.plain_column is None or file is None:
            continue
        if recipe.files.get(str(file), {}).get("kind") != "parquet":
            continue
        first = next(iter(recipe.files_of(str(file))), None)
        if first is None or not isinstance(first[0], Path):
            continue
        schema = parquet_file(first[0]).schema_arrow
        if reader.plain_column in schema.names:
            if _is_list(schema.field(reader.plain_column).type):
                lists.append(name)
            del pending[name]
    records = recipe.records(recipe.target) if pending else iter(())
    for record in itertools.islice(records, LIST_PROBE):
        for name, field in list(pending.items()):
            value = record.get(field)
            if isinstance(value, (list, tuple, np.ndarray)):
                lists.append(name)
            if not is_missing(value):
                del pending[name]
        if not pending:
            break
    for name in lists:
        element = split.features[name]
        if element is not None:
            split.features[name] = Sequence(element)
    return bool(lists)


def _split_features(split: SplitDraft, features: FeaturesDict) -> FeaturesDict:
    return FeaturesDict({name: features[name] for name in split.features})


def _placeholders(split: SplitDraft) -> FeaturesDict:
    """The split's features, a label whose names are not known yet standing as one class."""
    return FeaturesDict({n: f or ClassLabel(names=["?"]) for n, f in split.features.items()})


def split_location(location: str) -> tuple[str, str | None]:
    """``FILE.json#RECORD_SET`` -> (``FILE.json``, ``RECORD_SET``); no fragment: None.

    >>> split_location("data/metadata.json#captions")
    ('data/metadata.json', 'captions')
    """
    path, sep, record_set = location.rpartition("#")
    return (path, record_set or None) if sep and path else (location, None)


def croissant_spec(
    location: str,
    config: DownloadConfig,
    *,
    record_set: str | None = None,
    name: str | None = None,
    fill: Mapping[str, str] | None = None,
) -> BuilderSpec:
    """The spec of the dataset the Croissant file at `location` describes; `config` is a
    resolved download config (`catalog.download.resolve_config`). `record_set` (or
    ``location#RECORD_SET``) chooses the record set of a file holding several of different
    fields (each a config), `name` names the dataset (default: from the file's name), `fill`
    gives the value standing in for a field's missing values (``{field: text}``; a list
    field's is JSON)."""
    location, fragment = split_location(location)
    record_set = record_set or fragment
    if name is not None and dataset_name(name) != name:
        raise SpecError(
            f"--name {name!r}: a dataset name is [a-z][a-z0-9_]*, e.g. {dataset_name(name)!r}"
        )
    fetch = dataclasses.replace(config, register_checksums=True)  # files without a size
    with DownloadManager(fetch) as manager:
        doc, where = _load(location, manager)
        draft = parse(doc, where, record_set, hub_lister(manager))
        if name is not None:
            draft.name = name
        _check_fill(fill or {}, draft)
        splits = {
            s.name: SplitSpec(s.name, s.format, s.files, 1, _options(s, fill or {}))
            for s in draft.splits.values()
        }
        for name, split in splits.items():  # a bad option fails before any data is fetched
            problem = FORMATS[split.format].problem(
                split.options, _placeholders(draft.splits[name])
            )
            if problem:
                raise SpecError(f"{where}: record set {name}: {problem}")
        downloads = _sized(draft.downloads, manager)
        downloads.update({d.name: d for d in draft.local.values()})
    spec = BuilderSpec(
        name=draft.name,
        version=draft.version,
        features=_features(draft, {}),
        downloads=downloads,
        splits=splits,
        description=draft.description or f"The dataset {where} describes (Croissant).",
        homepage=draft.homepage if urlsplit(draft.homepage).scheme in ("http", "https") else "",
        citation=draft.citation,
        license=draft.license,
        tags=("croissant",),
        config=draft.config,
        configs=draft.configs,
        default_config=next(iter(draft.configs), None),
    )
    counts, found, names = _read_once(spec, draft, config)
    for split_draft in draft.splits.values():
        for feature in split_draft.enums:
            # values no ClassLabel takes (empty, too many) stay text, as they are
            with contextlib.suppress(FeatureError):
                if names.get(feature):
                    split_draft.features[feature] = ClassLabel(names=names[feature])
    features = _features(draft, found)
    for split_name, split in list(spec.splits.items()):
        fmt = FORMATS[split.format]
        problem = fmt.problem(split.options, _split_features(draft.splits[split_name], features))
        if problem:
            raise SpecError(f"{where}: record set {split_name}: {problem}")
        del splits[split_name]
        for value, count in counts[split_name].items():
            splits.update(_cut(split, draft.splits[split_name], value, count, where))
    return spec.replace(features=features, splits=splits)


def _cut(
    split: SplitSpec, draft: SplitDraft, value: str | None, count: int, where: str
) -> dict[str, SplitSpec]:
    """The catalog split of a record set's records whose split field holds `value` (None:
    the whole record set, as one split named after it)."""
    if value is None:
        return {split.name: dataclasses.replace(split, num_examples=count)}
    name = dataset_name(value)
    recipe = json.loads(split.options["recipe"])
    recipe["where"] = {str(draft.split_feature): value}
    options = {**split.options, "recipe": json.dumps(recipe, sort_keys=True)}
    return {name: dataclasses.replace(split, name=name, num_examples=count, options=options)}


def _find_audio(split: SplitDraft, source: Any) -> bool:
    """Each audio feature (`PLACEHOLDER_RATE`) given the sample rate and channels of its
    field's first file; whether there was one. A later file of another rate is an error
    naming it, when the split is read."""
    audio = {
        n: f
        for n, f in split.features.items()
        if isinstance(f, Audio) and f.sample_rate == PLACEHOLDER_RATE
    }
    if not audio:
        return False
    recipe = Recipe(source.options["recipe"], source.options["files"])
    first = next(iter(recipe.records(recipe.target)), {})
    for name in audio:
        data = first.get(recipe.features[name])
        if isinstance(data, np.ndarray):  # resampled by a samplingRate transform
            reader = recipe.fields[recipe.target][recipe.features[name]]
            rate, channels = int(reader.sampling_rate or 0), data.shape[1]
        elif isinstance(data, bytes):
            rate, channels = audio_format(data, f"record set {split.name}, field {name}")
        else:
            raise SourceFormatError(f"record set {split.name}: field {name} holds no audio file")
        shape = (None,) if channels == 1 else (None, channels)
        split.features[name] = Audio(sample_rate=rate, dtype="float32", shape=shape)
    return True


def _read_once(
    spec: BuilderSpec, draft: Draft, config: DownloadConfig
) -> tuple[dict[str, dict[str | None, int]], dict[str, set[str]], dict[str, list[str]]]:
    """Each split's example count (by the value of its split field, when it has one), per
    label feature without names the labels found, and per field referencing an enumeration
    read from files the enumeration's values when every value of the field is one: the
    split's files read once by its reader (verified downloads, from the cache)."""
    counts: dict[str, dict[str | None, int]] = {}
    found: dict[str, set[str]] = {}
    names: dict[str, list[str]] = {}
    refused: set[str] = set()
    with DownloadManager(config) as manager, tempfile.TemporaryDirectory() as scratch:
        files = manager.download_all(resources(spec))
        for name, split in spec.splits.items():
            one = spec.replace(features=_placeholders(draft.splits[name]), splits={name: split})
            source = split_sources(one, files, manager, Path(scratch))[name]
            found_audio = _find_audio(draft.splits[name], source)  # the rates the files hold
            if _find_lists(draft.splits[name], source) or found_audio:
                source = dataclasses.replace(source, features=_placeholders(draft.splits[name]))
            if "reencode_invalid" in source.options:  # counting needs no pixels
                source = dataclasses.replace(
                    source, options={**source.options, "reencode_invalid": False}
                )
            by_value: dict[str | None, int] = {}
            cut = draft.splits[name].split_feature
            enums = draft.splits[name].enums
            quick = not enums and split.format == "croissant"
            known = quick_count(source) if quick and cut is None else None
            if quick and cut is not None:  # Parquet files or a column give the split
                by_split = split_counts(source, cut)
                if by_split:
                    counts[name] = {value: n for value, n in by_split.items()}  # noqa: C416 (typed)
                    continue
            for feature, target in enums.items():  # the enumeration's values, in its order
                if feature in names or feature in refused:
                    continue
                records = Recipe(source.options["recipe"], source.options["files"])
                values = (str(r.get(target)) for r in records.records(target.split("/")[0]))
                names[feature] = list(dict.fromkeys(values))
            if known:  # Parquet rows, counted from the files' footers
                counts[name] = {None: known}
                continue
            for _, example in FORMATS[split.format].examples(source):
                for feature in enums:
                    if feature in names and example[feature] not in names[feature]:
                        del names[feature]  # a value no enumeration holds: text, as it is
                        refused.add(feature)
                value = None if cut is None else str(example[cut])
                by_value[value] = by_value.get(value, 0) + 1
                if draft.splits[name].features.get("label", 0) is None:
                    found.setdefault("label", set()).add(str(example["label"]))
            if not by_value:
                raise SourceFormatError(f"{spec.name}: record set {name} has no records")
            counts[name] = by_value
    return counts, found, names
