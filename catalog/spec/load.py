"""Builder specs: a dataset described as data, in ``builders/<name>/``.

A builder folder holds ``builder.yaml`` and ``checksums.tsv`` (one line per download:
``url<TAB>size<TAB>sha256<TAB>filename``, the same form as the public checksum registries).
Loading validates every field and names the file and the field when one is wrong. Features
are their JSON form (`catalog.features`) in YAML; a ClassLabel's ``names_file`` is relative to
the builder folder. ``builder.yaml``::

    name: cifar100                    # [a-z][a-z0-9_]*
    version: 3.0.2                    # X.Y.Z
    description: ...                  # also homepage, license, citation (all optional)
    tags: [image, image-classification]   # modality and task, for `catalog list --tag`
    features: {image: {type: Image, shape: [32, 32, 3]}, label: {...}, ...}
    supervised_keys: [image, label]   # optional
    downloads:
      archive: {url: https://..., mirrors: [https://...]}   # size, sha256: checksums.tsv
      own: {path: data}   # a file or folder inside the builder folder (`catalog.spec.local_files`)
      shared: {builder: imagenet2012, path: validation_labels.txt}   # a registered builder's
      by_hand: {manual: NWPU-RESISC45}   # placed in the manual dir, no published checksum
      # optional, per download: max_extracted_size: 200GiB (past 100x its size + 64 MiB),
      # manual: true (the user downloads it into the manual dir: a login, an agreement);
      # beside manual: NAME, optional: true (when absent, the splits reading it are left out)
    splits:
      train:
        format: cifar_bin             # a reader in catalog.formats
        files:                        # role -> file reference, the roles the format reads
          records: {download: archive, member: "cifar-100-binary/train.bin"}
        options:                      # the format's options, if any
          label_bytes: [coarse_label, label]
          names_files: {label: {download: archive, member: cifar-100-binary/fine_label_names.txt}}
        num_examples: 50000

A file reference is a download's name (the downloaded file itself), or ``{download: NAME,
member: PATH}``: a path inside the download's archive, extracted once (zip, tar, tar.gz, ...;
a lone .gz/.bz2/.xz file holds one member, its name without the suffix); ``member: "."`` is
the folder the whole archive is extracted into. ``member`` may be a glob
(``cifar-10-batches-bin/data_batch_*.bin``); its matches are read in natural order (``_2``
before ``_10``), and must be exactly one unless the format's role takes many.

A spec stays contained: dataset and split names match ``[a-z][a-z0-9_]*``, config names
``[A-Za-z0-9][A-Za-z0-9_]*([.-][A-Za-z0-9_]+)*`` (TFDS's ``1M``, ``btgraham-300``), feature
names `FEATURE_NAME_RULE` (TFDS's, such as
``home.dest`` and ``pH``); URLs are http(s) with no path segment decoding to ``.``/``..``; a
``names_file`` is a small regular file inside the builder folder; builder.yaml holds at most
1 MiB and expands to at most 100,000 YAML nodes.

Configs are variants of a dataset, each prepared on its own (``cmaterdb/telugu``)::

    configs:
      bangla: {description: ..., downloads: {...}, splits: {...}}
      telugu: {description: ..., downloads: {...}, splits: {...}}
    default_config: bangla            # optional: the first config by default

A config gives its ``description`` and may give ``version``, ``features``,
``supervised_keys``, ``downloads`` and ``splits``; each replaces the top-level field of the
same name, which the configs share when they leave it out.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from catalog._util.units import parse_size
from catalog.download.checksums import read_checksums, url_filename
from catalog.download.url_paths import path_segments
from catalog.errors import DatasetNotFoundError, FeatureError, SpecError
from catalog.features import FeaturesDict, from_json, supervised_keys_problem
from catalog.spec.local_files import local_download, resolve_names_files
from catalog.spec.model import (
    CHECKSUMS_FILE,
    SPEC_FILE,
    BuilderSpec,
    DownloadSpec,
    FileRef,
    SplitSpec,
)
from catalog.spec.registry import registered
from catalog.spec.yaml_file import read_yaml

if TYPE_CHECKING:  # the readers are imported when a spec is loaded, not by `import catalog`
    from catalog.formats import Option, SourceFormat

__all__ = ["FEATURE_NAME_RULE", "load_spec", "url_problem"]

#: Dataset and split names: lower-case letters, digits and _, from a letter (``\Z``: no "\n").
_NAME = re.compile(r"^[a-z][a-z0-9_]*\Z")
#: Config names: words of [a-z0-9_] joined by '.' or '-' (``v1.1``, ``320px``, ``full-size``).
_CONFIG_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_]*([.-][A-Za-z0-9_]+)*\Z")
#: Feature names keep TFDS's: words of letters (either case), digits and _, from a letter or
#: a digit and holding a letter, joined by one '.', ' ', '-' or '/' (titanic's ``home.dest``,
#: wine_quality's ``fixed acidity``, ``pH``, celeb_a's ``5_o_Clock_Shadow``, cats_vs_dogs's
#: ``image/filename``). '/' also joins a feature path's parts; a name holding one is the
#: longer match (`FeaturesDict.split_path`).
FEATURE_NAME_RULE = r"(?=[\w. /-]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9_]*([. /-][A-Za-z0-9_]+)*"
_FEATURE_NAME = re.compile(f"^{FEATURE_NAME_RULE}\\Z")
_VERSION = re.compile(r"^\d+\.\d+\.\d+$")
#: A tag names a modality or task: lower case words joined by hyphens (``image-classification``).
_TAG = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
_TOP_FIELDS = (
    "name", "version", "description", "homepage", "license", "citation", "features",
    "supervised_keys", "downloads", "splits", "configs", "default_config", "tags",
)  # fmt: skip
#: What a config may give: its description, and top-level fields it replaces.
_CONFIG_FIELDS = ("description", "version", "features", "supervised_keys", "downloads", "splits")


class _Fields:
    """Reads typed fields out of a YAML mapping, naming file and field in every error."""

    def __init__(self, source: Path, data: Any, prefix: str = "") -> None:
        self.source, self.prefix = source, prefix
        if not isinstance(data, Mapping):
            raise self.error(prefix.rstrip(".") or "(top level)", "expected a mapping")
        self.data: Mapping[str, Any] = data

    def error(self, name: str, problem: str) -> SpecError:
        return SpecError(f"{self.source}: field '{self.prefix}{name}': {problem}")

    def get(self, name: str, kind: type, default: Any = ..., *, check: Any = None) -> Any:
        if name not in self.data:
            if default is ...:
                raise self.error(name, "missing")
            return default
        value = self.data[name]
        if (kind is int and isinstance(value, bool)) or not isinstance(value, kind):
            raise self.error(name, f"expected {kind.__name__}, got {value!r}")
        if check is not None and not check(value):
            raise self.error(name, f"invalid value {value!r}")
        return value

    def sub(self, name: str) -> _Fields:
        return _Fields(self.source, self.get(name, dict), f"{self.prefix}{name}.")

    def only(self, known: tuple[str, ...]) -> None:
        """Refuse fields other than `known` (a misspelt field must not be ignored)."""
        for name in self.data:
            if name not in known:
                raise self.error(str(name), f"unknown field; expected one of {', '.join(known)}")


def _feature_names_problem(features: Any, prefix: str = "") -> str | None:
    """The first feature name (nested ones too) not matching the rule, as a problem, or None;
    `features` is the YAML of a dict of features."""
    if not isinstance(features, Mapping):
        return None
    for name, value in features.items():
        if not isinstance(name, str) or not _FEATURE_NAME.match(name):
            return _feature_name_problem(name, prefix)
        if not isinstance(value, Mapping):
            continue
        kind = value.get("type")
        if kind is None:  # a plain dict: nested features
            inner: Any = value
        elif kind == "FeaturesDict":
            inner = value.get("features")
        elif kind == "Sequence" and isinstance(value.get("feature"), Mapping):
            inner = value["feature"]
            inner = inner.get("features") if inner.get("type") == "FeaturesDict" else inner
            inner = inner if "type" not in inner else None
        else:
            inner = None
        problem = _feature_names_problem(inner, f"{prefix}{name}/")
        if problem:
            return problem
    return None


def _feature_name_problem(name: object, prefix: str) -> str:
    """Why `name` (at `prefix`) is no feature name, and a valid one: its words joined by _."""
    words = "_".join(re.findall(r"[A-Za-z0-9_]+", str(name))).strip("_")
    valid = words if words[:1].isalnum() and _FEATURE_NAME.match(words) else f"feature_{words}"
    valid = valid.rstrip("_")
    shown = repr(prefix + name) if isinstance(name, str) else f"{prefix}{name!r}"
    quote = "" if isinstance(name, str) else f"YAML reads it as {type(name).__name__}: quote it; "
    return (
        f"feature name {shown} must be words of letters, digits and _, starting with a letter "
        f"or digit and holding a letter, joined by one '.', ' ', '-' or '/' ({FEATURE_NAME_RULE}); "
        f"{quote}rename it, e.g. to {valid!r}"
    )


def _member_problem(member: str) -> str | None:
    """What is wrong with a path inside an archive, or None."""
    parts = member.split("/")
    if not member or member.startswith("/") or "\\" in member or ".." in parts:
        return f"expected a relative path inside the archive (no '..' or '\\'), got {member!r}"
    return None


def _file_ref(fields: _Fields, name: str, downloads: Mapping[str, DownloadSpec]) -> FileRef:
    """Field `name` as a file reference: a download's name, or {download, member}."""
    value = fields.data[name]
    if isinstance(value, str):
        ref = FileRef(value)
    elif isinstance(value, Mapping):
        item = fields.sub(name)
        item.only(("download", "member"))
        ref = FileRef(item.get("download", str), item.get("member", str))
        problem = _member_problem(str(ref.member))
        if problem:
            raise item.error("member", problem)
    else:
        raise fields.error(
            name, f"expected a download's name or {{download: NAME, member: PATH}}, got {value!r}"
        )
    if ref.download not in downloads:
        raise fields.error(
            name, f"no download named {ref.download!r}; downloads: {', '.join(downloads)}"
        )
    return ref


def _option(
    fields: _Fields, name: str, option: Option, downloads: Mapping[str, DownloadSpec]
) -> Any:
    """Option `name`, given in `fields`, checked against its kind."""
    if fields.data[name] is None and option.default is None:
        return None  # an option without a default may be given as null
    if option.kind == "str":
        return fields.get(name, str)
    if option.kind == "int":
        return fields.get(name, int)
    if option.kind == "bool":
        return fields.get(name, bool)
    if option.kind == "strs":
        return _strs(fields, name)
    if option.kind == "floats":
        value = fields.get(name, list)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            raise fields.error(name, f"expected a list of numbers, got {value!r}")
        return [float(v) for v in value]
    if option.kind == "str_map":
        return _str_map(fields, name)
    table = fields.sub(name)
    if option.kind == "strs_map":
        return {str(key): _strs(table, key) for key in table.data}
    if option.kind == "str_maps":
        return {str(key): _str_map(table, key) for key in table.data}
    return {str(key): _file_ref(table, key, downloads) for key in table.data}  # file_map


def _str_map(fields: _Fields, name: str) -> dict[str, str]:
    table = fields.sub(name)
    for key, value in table.data.items():
        if not isinstance(value, str):
            raise table.error(str(key), f"expected a string, got {value!r}")
    return {str(key): value for key, value in table.data.items()}


def _strs(fields: _Fields, name: str) -> list[str]:
    value = fields.get(name, list)
    if not all(isinstance(v, str) for v in value):
        raise fields.error(name, f"expected a list of strings, got {value!r}")
    return list(value)


def _options(
    item: _Fields, fmt: SourceFormat, downloads: Mapping[str, DownloadSpec]
) -> dict[str, Any]:
    """A split's ``options``: every option of its format, given or defaulted."""
    given = item.sub("options") if "options" in item.data else _Fields(item.source, {})
    for name in given.data:
        if name not in fmt.options:
            known = ", ".join(fmt.options) or "none"
            raise given.error(
                str(name), f"format {fmt.name!r} has no such option; options: {known}"
            )
    return {
        name: _option(given, name, option, downloads)
        if name in given.data
        else copy.deepcopy(option.default)
        for name, option in fmt.options.items()
    }


def _split(
    table: _Fields, name: str, downloads: Mapping[str, DownloadSpec], features: FeaturesDict
) -> SplitSpec:
    # Imported here, like yaml: the readers would add about 7 ms to `import catalog`.
    from catalog.formats import FORMATS

    if not isinstance(name, str) or not _NAME.match(name):
        raise table.error(
            str(name),
            f"split name {name!r} must match [a-z][a-z0-9_]* (lower-case letters, digits and "
            "_, starting with a letter; quote names YAML reads as numbers or booleans)",
        )
    item = table.sub(name)
    item.only(("format", "files", "options", "num_examples"))
    fmt = FORMATS.get(item.get("format", str))
    if fmt is None:
        known = ", ".join(sorted(FORMATS))
        raise item.error("format", f"unknown format {item.data['format']!r}; known: {known}")
    files = item.sub("files")
    roles = [role.name for role in fmt.roles]
    refs = {}
    for role in roles:
        if role not in files.data:
            raise files.error(role, f"missing; format {fmt.name!r} reads {', '.join(roles)}")
        refs[role] = _file_ref(files, role, downloads)
    extra = sorted(set(files.data) - set(roles))
    if extra:
        raise files.error(extra[0], f"format {fmt.name!r} reads only {', '.join(roles)}")
    options = _options(item, fmt, downloads)
    problem = fmt.problem(options, features)
    if problem:
        raise table.error(name, problem)
    count = item.get("num_examples", int, check=lambda n: n > 0)
    return SplitSpec(name, fmt.name, refs, count, options)


def _downloads(
    fields: _Fields, checksums: Mapping[str, tuple[int, str, str]]
) -> dict[str, DownloadSpec]:
    table = fields.sub("downloads")
    downloads: dict[str, DownloadSpec] = {}
    for key in table.data:
        item = table.sub(key)
        if "path" in item.data:  # a file or folder inside the builder folder, or another's
            item.only(("path", "builder"))
            root, sums = fields.source.parent, checksums
            if "builder" in item.data:  # a registered builder's file: its own checksums.tsv
                other = str(item.get("builder", str))
                found = registered().get(other)
                if found is None:
                    raise item.error("builder", f"no registered builder {other!r}")
                root, sums = found, read_checksums(found / CHECKSUMS_FILE)
            try:
                downloads[key] = local_download(key, item.get("path", str), root, sums)
            except ValueError as error:
                raise item.error("path", str(error)) from None
            continue
        if "manual" in item.data and "url" not in item.data:
            # placed by hand, no checksum published: catalog.download.manual
            item.only(("manual", "optional"))
            filename = str(item.get("manual", str))
            if filename in ("", ".", "..") or any(c in filename for c in "/\\\0"):
                why = f"expected a plain file or folder name, got {filename!r}"
                raise item.error("manual", why)
            optional = bool(item.get("optional", bool, False))
            downloads[key] = DownloadSpec(
                key, f"manual:{filename}", filename=filename, manual=True, optional=optional
            )
            continue
        item.only(("url", "mirrors", "max_extracted_size", "manual"))
        url = item.get("url", str)
        mirrors = item.get("mirrors", list, [])
        if not all(isinstance(m, str) for m in mirrors):
            raise item.error("mirrors", "expected a list of URLs")
        for name, value in [("url", url), *(("mirrors", m) for m in mirrors)]:
            problem = url_problem(value)
            if problem:
                raise item.error(name, problem)
        limit = _size_field(item, "max_extracted_size")
        size, sha256, filename = checksums.get(url, (None, None, url_filename(url)))
        by_hand = item.get("manual", bool, False)
        downloads[key] = DownloadSpec(
            key, url, tuple(mirrors), size, sha256, filename, limit, by_hand=by_hand
        )
    return downloads


def url_problem(url: str) -> str | None:
    """What makes `url` unfit for a builder spec, or None: only http(s) URLs with a host,
    none of whose path segments decodes to ``.`` or ``..`` (``%2e%2e``, ``%2F..%2F``) or
    holds a backslash or NUL. (Local files come from mirror dirs and the manual dir, never
    from a spec: a spec must not make catalog read a file of the machine it runs on.)"""
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return f"expected an http:// or https:// URL, got {url!r} (local files: use --mirror)"
    if path_segments(url) is None:
        return f"the path of {url!r} has a '.' or '..' segment or a NUL (once decoded)"
    return None


def _size_field(item: _Fields, name: str) -> int | None:
    """An optional byte count, given as an int or a size such as ``2GiB``."""
    value = item.data.get(name)
    if value is None:
        return None
    try:
        size = parse_size(value) if isinstance(value, str) else value
    except ValueError as error:
        raise item.error(name, str(error)) from None
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise item.error(name, f"expected a positive size in bytes (or like 2GiB), got {value!r}")
    return size


def _configs(top: _Fields) -> tuple[dict[str, _Fields], str | None]:
    """The ``configs`` (name -> fields) and the default config; ({}, None) without configs."""
    if "configs" not in top.data:
        if "default_config" in top.data:
            raise top.error("default_config", "given, but there are no configs")
        return {}, None
    table = top.sub("configs")
    if not table.data:
        raise top.error("configs", "expected at least one config")
    configs = {}
    for key in table.data:
        if not isinstance(key, str) or not _CONFIG_NAME.match(key):
            raise table.error(
                str(key),
                "a config name must be words of [A-Za-z0-9_] joined by '.' or '-' (e.g. v1.1, "
                "320px, full-size, 1M)",
            )
        configs[key] = table.sub(key)
        configs[key].only(_CONFIG_FIELDS)
    default = top.get("default_config", str, next(iter(configs)))
    if default not in configs:
        raise top.error("default_config", f"no config {default!r}; configs: {', '.join(configs)}")
    return configs, default


def load_spec(folder: str | Path, config: str | None = None) -> BuilderSpec:
    """Load and validate the builder in `folder` (``builder.yaml`` + ``checksums.tsv``).

    For a dataset with configs, `config` picks one (default: its default config); an unknown
    config raises DatasetNotFoundError listing the configs.
    """
    folder = Path(folder)
    source = folder / SPEC_FILE
    if not source.is_file():
        raise SpecError(f"{folder}: no {SPEC_FILE} in this folder; a builder folder needs one")
    top = _Fields(source, read_yaml(source))
    top.only(_TOP_FIELDS)
    name = top.get("name", str, check=_NAME.match)
    configs, default = _configs(top)
    if config is not None and config not in configs:
        if not configs:
            raise DatasetNotFoundError(f"{name} has no configs; ask for {name!r} without one")
        raise DatasetNotFoundError(
            f"{name} has no config {config!r}; its configs: {', '.join(configs)} "
            f"(default {default})"
        )
    chosen = config or default
    own = configs[chosen] if chosen is not None else None

    def holder(field_name: str) -> _Fields:
        """The fields giving `field_name`: the chosen config's, else the top level's."""
        return own if own is not None and field_name in own.data else top

    fields = holder("features")
    problem = _feature_names_problem(fields.get("features", dict))
    if problem:
        raise fields.error("features", problem)
    try:
        raw = resolve_names_files(fields.get("features", dict), folder)
        features = from_json({"type": "FeaturesDict", "features": raw})
    except FeatureError as error:
        raise fields.error("features", str(error)) from None
    assert isinstance(features, FeaturesDict)

    downloads = _downloads(holder("downloads"), read_checksums(folder / CHECKSUMS_FILE))
    fields = holder("splits")
    table = fields.sub("splits")
    splits = {split: _split(table, split, downloads, features) for split in table.data}
    if not splits:
        raise fields.error("splits", "at least one split is needed")

    fields = holder("supervised_keys")
    keys = fields.get("supervised_keys", list, None)
    if keys is not None:
        problem = supervised_keys_problem(keys, features)
        if problem:
            raise fields.error("supervised_keys", problem)

    tags = top.get("tags", list, [])
    for tag in tags:
        if not isinstance(tag, str) or not _TAG.match(tag):
            raise top.error("tags", f"{tag!r} is not a tag: lower-case words joined by '-'")

    return BuilderSpec(
        name=name,
        version=str(holder("version").get("version", str, check=_VERSION.match)),
        features=features,
        downloads=downloads,
        splits=splits,
        description=top.get("description", str, "").strip(),
        homepage=top.get("homepage", str, ""),
        citation=top.get("citation", str, "").strip(),
        license=top.get("license", str, ""),
        supervised_keys=(keys[0], keys[1]) if keys else None,
        tags=tuple(tags),
        path=folder,
        config=chosen,
        config_description=own.get("description", str, "").strip() if own else "",
        configs={n: c.get("description", str, "").strip() for n, c in configs.items()},
        default_config=default,
    )
