"""A Croissant file, read into the parts of a `BuilderSpec`: its metadata, its distribution as
downloads (http(s) files, checked by their sha256; files beside a local Croissant file, inside
its folder), and each record set it prepares as a split of the `croissant` source format
(`catalog.formats.croissant.records`, which reads files, extracts, transforms and joins as
mlcroissant does; the recipe it follows is written by `catalog.interop.croissant.recipe`).

Which record sets: those that are no enumeration (``sc:Enumeration``, ``cr:Split``,
``isEnumeration``) and that no other record set reads or references; when they have different
fields, each is a config and the first is prepared, ``FILE.json#RECORD_SET`` naming another
(any record set, enumerations too). A field whose values name splits (``cr:Split``, a
reference to such a record set, or a field named ``split``) cuts its record set into catalog
splits, one per value. A field referencing an enumeration whose values the file holds inline
is a ClassLabel of them. Anything else catalog cannot read is one SpecError: ``not supported
yet: <what>, field <name>``, or naming the node.

Where catalog is stricter than mlcroissant: a value that does not fit its field's type (an
empty integer cell) is an error naming the field (mlcroissant gives NaN); a tar member whose
path leaves the archive's folder is refused (mlcroissant reads it; a zip is read in place, its
members named as ``zipfile`` extracts them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from catalog.errors import CatalogError, SpecError
from catalog.features import Feature
from catalog.formats.croissant.files import encoding_kind
from catalog.formats.croissant.records import inline_rows
from catalog.interop.croissant.checkout import checkout_folder
from catalog.interop.croissant.hub import RepoLister, is_hub_tree, is_repo
from catalog.interop.croissant.nodes import (
    SIZE_TEXT,
    as_list,
    as_mapping,
    as_text,
    dataset_name,
    field_reference,
    id_of,
    md5_hex,
    node_uid,
    short_type,
    version_text,
)
from catalog.interop.croissant.normalize import normalized_record_sets
from catalog.interop.croissant.recipe import (
    SPLIT_TYPES,
    FileEntry,
    check_fields,
    feature_name,
    field_feature,
    local_file,
    local_folder,
    read_ids,
    recipe_split,
)
from catalog.spec.load import url_problem
from catalog.spec.model import DownloadSpec, FileRef

__all__ = ["Download", "Draft", "SplitDraft", "parse"]


@dataclass(frozen=True)
class Download:
    """A FileObject to fetch: `size` None when the file does not state it exactly, `sha256`
    empty when it gives none (recorded when fetched)."""

    name: str
    url: str
    sha256: str
    size: int | None
    filename: str
    #: The md5 the Croissant file gives, checked once the file is fetched (no sha256 given).
    md5: str | None = None


@dataclass
class SplitDraft:
    """A record set as a split: its format, files and options, and its features (a label
    whose names are found in the files is None until they are)."""

    name: str
    format: str
    files: dict[str, FileRef]
    options: dict[str, Any]
    features: dict[str, Feature | None]
    #: The feature whose values name the catalog splits this record set is cut into.
    split_feature: str | None = None
    #: Text features referencing a field of an enumeration read from files: that field.
    enums: dict[str, str] = field(default_factory=dict)


@dataclass
class Draft:
    """Everything a Croissant file gives a spec, before its files are read."""

    name: str
    version: str
    description: str
    homepage: str
    license: str
    citation: str
    downloads: dict[str, Download] = field(default_factory=dict)
    #: Files beside a local Croissant file, measured: by distribution @id.
    local: dict[str, DownloadSpec] = field(default_factory=dict)
    splits: dict[str, SplitDraft] = field(default_factory=dict)
    #: A file of record sets with different fields: the one prepared, and all of them.
    config: str | None = None
    configs: dict[str, str] = field(default_factory=dict)
    #: A repository FileObject's files: (download name, path in the repository).
    repos: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    #: A git repository FileObject read from a checkout (its files beside the Croissant
    #: file): by @id, its URL.
    checkouts: dict[str, str] = field(default_factory=dict)


def _download(node: Mapping[str, Any], where: str) -> Download:
    uid = node_uid(node)
    url = node.get("contentUrl")
    if not isinstance(url, str) or url_problem(url):
        raise SpecError(
            f"{where}: FileObject {uid!r}: not supported yet: contentUrl {url!r} (catalog "
            "downloads http(s) URLs; local files: serve them, or use a --mirror directory)"
        )
    sha256 = node.get("sha256")
    md5 = node.get("md5")
    if isinstance(sha256, str) and not re.fullmatch(r"[0-9a-fA-F]{64}", sha256):
        sha256 = None  # the Hub writes a URL here
    if isinstance(md5, str):
        if md5_hex(md5) is None:
            raise SpecError(
                f"{where}: FileObject {uid!r}: md5 {md5[:80]!r} is neither 32 hex digits nor "
                "the base64 of 16 bytes"
            )
        md5 = md5_hex(md5)
    size_match = SIZE_TEXT.match(str(node.get("contentSize", "")))
    size = int(size_match[1]) if size_match else None
    filename = url.rstrip("/").rsplit("/", 1)[-1] or uid
    filename = re.sub(r"[^A-Za-z0-9._-]", "_", filename).lstrip(".") or "file"
    # no sha256: fetched first, its sha256 recorded (and its md5 checked when given)
    digest = sha256.lower() if isinstance(sha256, str) else ""
    return Download(dataset_name(uid), url, digest, size, filename, md5.lower() if md5 else None)


def _classes(record_sets: list[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Field @id -> class names, for every field of an enumeration record set with data."""
    names: dict[str, list[str]] = {}
    for rs in record_sets:
        types = [short_type(t) for t in as_list(rs.get("dataType"))]
        data = inline_rows(rs)
        if "sc:Enumeration" not in types and not rs.get("isEnumeration"):
            continue
        if not isinstance(data, list) or not all(isinstance(row, Mapping) for row in data):
            continue
        fields = [node_uid(f) for f in as_list(rs.get("field"))]
        for fid in fields:
            values = [row.get(fid, row.get(fid.rsplit("/", 1)[-1])) for row in data]
            text_field = next(
                (
                    f
                    for f in fields
                    if f != fid and all(isinstance(row.get(f), str) for row in data)
                ),
                None,
            )
            if all(isinstance(v, str) for v in values):
                names[fid] = [str(v) for v in values]
            elif text_field and sorted(values) == list(range(len(values))):  # index -> name
                by_index = {row[fid]: row[text_field] for row in data}
                names[fid] = [by_index[i] for i in range(len(values))]
    return names


def parse(
    doc: Any, where: str, record_set: str | None = None, lister: RepoLister | None = None
) -> Draft:
    """The `Draft` of the Croissant document `doc` (read from `where`, a path or URL) for
    `record_set` (None: every record set that is not an enumeration or read by another);
    SpecError (or FeatureError, ChecksumError) for anything it cannot use."""
    try:
        return _parse(doc, where, record_set, lister)
    except CatalogError as error:
        if str(error).startswith(f"{where}: "):
            raise
        raise type(error)(f"{where}: {error}") from None  # every message names the file
    except (AttributeError, TypeError, KeyError, IndexError, ValueError, RecursionError) as error:
        raise SpecError(
            f"{where}: a Croissant file catalog cannot read: a node is not what Croissant 1.0 "
            f"says ({type(error).__name__}: {error})"
        ) from None


def _is_enumeration(rs: Mapping[str, Any]) -> bool:
    types = [short_type(t) for t in as_list(rs.get("dataType"))]
    return bool(rs.get("isEnumeration")) or any(
        t == "sc:Enumeration" or t in SPLIT_TYPES for t in types
    )


def _used_by_others(record_sets: list[Mapping[str, Any]]) -> set[str]:
    """The record sets another one reads from (``source.field``) or references."""
    used = set()
    for rs in record_sets:
        for node in as_list(rs.get("field")):
            node = as_mapping(node)
            for target in (
                id_of(as_mapping(node.get("source")).get("field")),
                field_reference(node),
            ):
                if target and target.split("/", 1)[0] != node_uid(rs):
                    used.add(target.split("/", 1)[0])
    return used


def _file_download(
    uid: str, node: Mapping[str, Any], where: str, draft: Draft, lister: RepoLister | None
) -> None:
    """A FileObject outside an archive: an http(s) download, a local file beside the
    Croissant file (a relative contentUrl), or a repository of the Hub (its files listed)."""
    url = node.get("contentUrl")
    if is_repo(next(iter(as_list(node.get("encodingFormat"))), None)):
        if not is_hub_tree(url):  # GitHub's and others: the files of a checkout
            draft.checkouts[uid] = str(url)
            return
        if lister is None:
            raise SpecError(f"{where}: FileObject {uid!r}: a git repository catalog cannot list")
        members = []
        for i, (member, file_url) in enumerate(lister(str(url))):
            key = f"{uid}#{i}"
            name = f"{dataset_name(uid)}_{i:05d}"
            filename = member.rsplit("/", 1)[-1]
            draft.downloads[key] = Download(name, file_url, "", None, f"{name}-{filename}")
            members.append((name, member))
        draft.repos[uid] = members
        return
    remote = urlsplit(where).scheme in ("http", "https")
    if isinstance(url, str) and not urlsplit(url).scheme and remote and not url.startswith("/"):
        node = {**node, "contentUrl": urljoin(where, url)}  # relative to the Croissant URL
    elif isinstance(url, str) and not urlsplit(url).scheme and not remote:
        name = dataset_name(uid)
        if any(d.name == name for d in draft.local.values()):
            raise SpecError(f"{where}: two FileObjects become download {name!r} ({uid!r})")
        draft.local[uid] = local_file(name, node, Path(where).parent, where)
        return
    download = _download(node, where)
    same = [u for u, d in draft.downloads.items() if d.name == download.name]
    if same:
        raise SpecError(
            f"{where}: FileObjects {same[0]!r} and {uid!r} both become download "
            f"{download.name!r}; give them @ids that differ in letters or digits"
        )
    draft.downloads[uid] = download


def _download_name(uid: str, draft: Draft) -> str | None:
    if uid in draft.downloads:
        return draft.downloads[uid].name
    return draft.local[uid].name if uid in draft.local else None


def _needed(
    rs: Mapping[str, Any], by_id: Mapping[str, Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """`rs` and the record sets its fields read from, transitively."""
    found: dict[str, Mapping[str, Any]] = {}
    todo = [rs]
    while todo:
        node = todo.pop()
        if node_uid(node) in found:
            continue
        found[node_uid(node)] = node
        for field_node in as_list(node.get("field")):
            target = id_of(as_mapping(as_mapping(field_node).get("source")).get("field"))
            other = by_id.get(target.split("/", 1)[0]) if target else None
            if other is not None:
                todo.append(other)
    return list(found.values())


def _recipe_files(
    uids: set[str], nodes: Mapping[str, Mapping[str, Any]], where: str, draft: Draft
) -> tuple[dict[str, FileEntry], dict[str, FileRef]]:
    """The recipe's view of the distribution nodes `uids` and their file references."""
    files: dict[str, FileEntry] = {}
    refs: dict[str, FileRef] = {}
    for uid in sorted(uids):
        if uid not in nodes:
            raise SpecError(f"{where}: a field reads {uid!r}, which is not in the distribution")
        node = nodes[uid]
        kind = encoding_kind(str(next(iter(as_list(node.get("encodingFormat"))), "")))
        containers = [id_of(c) or "" for c in as_list(node.get("containedIn"))]
        if short_type(node.get("@type")) == "cr:FileSet":
            includes = [g for g in as_list(node.get("includes")) if isinstance(g, str)]
            if not includes:
                raise SpecError(f"{where}: FileSet {uid!r}: no includes glob")
            keys: list[str] = []
            prefix = ""
            if len(containers) == 1 and containers[0] in draft.checkouts:  # a git checkout
                name = dataset_name(uid)
                root = checkout_folder(uid, node, where, draft.checkouts)
                download, prefix = local_folder(name, includes, root, where)
                draft.local[uid] = download
                refs[name] = FileRef(name)
                files[uid] = (kind, [name], includes, prefix, None)
                continue
            if len(containers) == 1 and containers[0] in draft.repos:  # the Hub's Parquet files
                members = draft.repos[containers[0]]
                refs.update({key: FileRef(key) for key, _ in members})
                files[uid] = (kind, [], includes, "", [list(m) for m in members])
                continue
            for container in containers:
                archive = _download_name(container, draft)
                if archive is None:
                    raise SpecError(f"{where}: FileSet {uid!r}: no FileObject {container!r}")
                keys.append(f"{dataset_name(uid)}_{len(keys)}")
                # a zip is read in place (its members named as zipfile extracts them, so
                # '../x' is 'x' and never written); a tar is extracted, safely
                refs[keys[-1]] = (
                    FileRef(archive) if _is_zip(nodes.get(container)) else (FileRef(archive, "."))
                )
            if not containers:
                if urlsplit(where).scheme in ("http", "https"):
                    raise SpecError(
                        f"{where}: not supported yet: FileSet {uid!r} outside an archive in a "
                        "Croissant file read from a URL (a server lists no folders)"
                    )
                name = dataset_name(uid)
                download, prefix = local_folder(name, includes, Path(where).parent, where)
                draft.local[uid] = download
                keys.append(name)
                refs[name] = FileRef(name)
            files[uid] = (kind, keys, includes, prefix, None)
        elif containers and containers[0] in draft.checkouts:  # a file of a git checkout
            name = dataset_name(uid)
            if uid not in draft.local:
                root = checkout_folder(uid, node, where, draft.checkouts)
                draft.local[uid] = local_file(name, node, root, where)
            refs[name] = FileRef(name)
            files[uid] = (kind, [name], None, "", None)
        elif containers:
            archive = _download_name(containers[0], draft)
            member = str(node.get("contentUrl") or "")
            parts = member.split("/")
            if archive is None or not member or member.startswith("/") or ".." in parts:
                raise SpecError(
                    f"{where}: FileObject {uid!r}: contentUrl {member!r} must be a relative "
                    f"path inside {containers[0]!r} (no '..')"
                )
            refs[dataset_name(uid)] = FileRef(archive, member)
            files[uid] = (kind, [dataset_name(uid)], None, "", None)
        else:
            found = _download_name(uid, draft)
            if found is None:
                raise SpecError(
                    f"{where}: not supported yet: {short_type(node.get('@type'))} {uid!r} (catalog "
                    "reads cr:FileObject and cr:FileSet)"
                )
            refs[found] = FileRef(found)
            files[uid] = (kind, [found], None, "", None)
    return files, refs


def _is_zip(node: Mapping[str, Any] | None) -> bool:
    """Whether a FileObject is a zip file, by its encodingFormat or its name."""
    if node is None:
        return False
    formats = [str(f).lower() for f in as_list(node.get("encodingFormat"))]
    name = str(node.get("contentUrl") or "").lower().split("?")[0]
    return any("zip" in f and "gzip" not in f for f in formats) or name.endswith(".zip")


def _is_split_field(node: Mapping[str, Any], by_id: Mapping[str, Mapping[str, Any]]) -> bool:
    """A field whose values name splits: of type cr:Split, referencing a record set of that
    type, or named ``split``."""
    if any(short_type(t) in SPLIT_TYPES for t in as_list(node.get("dataType"))):
        return True
    target = field_reference(node)
    other = by_id.get(target.split("/", 1)[0]) if target else None
    if other is not None and any(
        short_type(t) in SPLIT_TYPES for t in as_list(other.get("dataType"))
    ):
        return True
    return str(node.get("name") or node_uid(node)).rsplit("/", 1)[-1].lower() == "split"


def _engine_split(
    rs: Mapping[str, Any], record_sets: list[Mapping[str, Any]],
    nodes: Mapping[str, Mapping[str, Any]], where: str, draft: Draft,
    classes: dict[str, list[str]],
) -> SplitDraft:  # fmt: skip
    split = dataset_name(node_uid(rs))
    by_id = {node_uid(r): r for r in record_sets}
    needed = _needed(rs, by_id)
    uids = set().union(*(read_ids(r) for r in needed))
    files, refs = _recipe_files(uids, nodes, where, draft)
    features: dict[str, Feature | None] = {}
    columns: dict[str, Any] = {}
    split_feature = None
    enums: dict[str, str] = {}
    for node in [as_mapping(f) for f in as_list(rs.get("field"))]:
        name = feature_name(node)
        if name in features:
            raise SpecError(
                f"{where}: record set {node_uid(rs)}: two fields are both named {name!r}"
            )
        features[name] = field_feature(node, classes)
        parts = [as_mapping(f) for f in as_list(node.get("subField"))]
        columns[name] = {feature_name(f): node_uid(f) for f in parts} if parts else node_uid(node)
        target = field_reference(node)
        other = by_id.get(target.split("/", 1)[0]) if target else None
        is_enum = other is not None and _is_enumeration(other) and target not in classes
        if is_enum and not _is_split_field(node, by_id):
            enums[name] = str(target)  # its values read from files: ClassLabel if all fit
            if other is not None and other not in needed:
                needed.append(other)
        if split_feature is None and _is_split_field(node, by_id):
            split_feature = name
    if not features:
        raise SpecError(f"{where}: record set {node_uid(rs)!r} has no fields")
    if enums:
        uids = set().union(*(read_ids(r) for r in needed))
        files, refs = _recipe_files(uids, nodes, where, draft)
    check_fields(needed, files, by_id)
    options = recipe_split(rs, needed, files, refs, columns)
    return SplitDraft(split, "croissant", {}, options, features, split_feature, enums)


def _parse(doc: Any, where: str, record_set: str | None, lister: RepoLister | None) -> Draft:
    if not isinstance(doc, Mapping) or "recordSet" not in doc:
        raise SpecError(
            f"{where}: not a Croissant file (a JSON-LD object with a recordSet), nor a table "
            "(catalog reads one from JSON Lines, an object per line, or a JSON array of objects, "
            "[{...}, ...]): write its records out so (records under a key 'data': jq -c "
            "'.data[]' FILE > FILE.jsonl)"
        )
    name = as_text(doc.get("name")) or "croissant"
    draft = Draft(
        name=dataset_name(name),
        version=version_text(doc.get("version")),
        description=as_text(doc.get("description")),
        homepage=as_text(doc.get("url")),
        license=as_text(doc.get("license")),
        citation=as_text(doc.get("citeAs") or doc.get("citation")),
    )
    nodes = {node_uid(n): n for n in as_list(doc.get("distribution")) if isinstance(n, Mapping)}
    kinds = {uid: short_type(n.get("@type")) for uid, n in nodes.items()}
    for uid, node in nodes.items():
        if kinds[uid] in ("cr:FileObject", "sc:FileObject") and not node.get("containedIn"):
            _file_download(uid, node, where, draft, lister)
    record_sets = [rs for rs in as_list(doc.get("recordSet")) if isinstance(rs, Mapping)]
    record_sets = normalized_record_sets(record_sets, nodes)
    by_id = {node_uid(rs): rs for rs in record_sets}
    classes = _classes([rs for rs in record_sets if _is_enumeration(rs)])
    used = _used_by_others(record_sets)
    main = [rs for rs in record_sets if not _is_enumeration(rs) and node_uid(rs) not in used]
    if record_set is not None:
        if record_set not in by_id:
            raise SpecError(
                f"{where}: no record set {record_set!r}; it has {', '.join(sorted(by_id))}"
            )
        chosen = [by_id[record_set]]
    else:
        chosen = main
    if not chosen:
        raise SpecError(f"{where}: no record set to prepare (only enumerations)")
    for rs in chosen:
        split = dataset_name(node_uid(rs))
        if split in draft.splits:
            raise SpecError(
                f"{where}: two record sets become split {split!r} (record set {node_uid(rs)!r}); "
                "give them @ids that differ in letters or digits"
            )
        draft.splits[split] = _engine_split(rs, record_sets, nodes, where, draft, classes)
    shapes = {tuple(sorted(s.features)) for s in draft.splits.values()}
    if len(shapes) > 1 or (record_set is not None and len(main) > 1):
        # record sets of different fields: one config each, the first one prepared unless
        # FILE.json#RECORD_SET names another
        first = next(iter(draft.splits.values()))
        draft.splits = {first.name: first}
        draft.config = first.name
        draft.configs = {dataset_name(node_uid(rs)): as_text(rs.get("description")) for rs in main}
        draft.configs.setdefault(first.name, as_text(chosen[0].get("description")))
    return draft
