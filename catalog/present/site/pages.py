"""The pages: the index of every dataset and config, and one page per dataset (or config).

Both render from what ``catalog info`` shows (`DatasetInfo`,
`catalog.info.dataset_info.feature_rows`, the features' own ``describe()``), so a feature type
added later shows up here without a change.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from catalog._util.units import format_size
from catalog.features import supervised_text
from catalog.info.text import feature_rows
from catalog.interop.croissant.write import to_croissant
from catalog.present.site.entries import Entry, class_labels, slug
from catalog.present.site.html import esc, page, table, tag_links

__all__ = ["MANY_CLASSES", "Picture", "dataset_page", "index_page", "shell_name"]

#: Class name lists longer than this start collapsed.
MANY_CLASSES = 20


@dataclass(frozen=True)
class Picture:
    """The example grid of a page: the PNG (relative to the site's root) and what it shows, or
    (file "") a note saying why there is none."""

    file: str = ""
    width: int = 0
    height: int = 0
    split: str = ""
    count: int = 0
    note: str = ""


def _splits_text(entry: Entry) -> str:
    """The dataset's splits and example counts as its spec declares them (a partial copy
    prepared here is marked in the prepared column, not here)."""
    return ", ".join(f"{name} {count:,}" for name, count in entry.expected.items())


def _download_size(entry: Entry) -> int:
    """Bytes to download for the whole dataset, as its spec registers them."""
    return sum(d.size or 0 for d in entry.builder.spec.downloads.values())


def _prepared_text(entry: Entry) -> str:
    if not entry.prepared:
        return "no"
    if not entry.complete:
        return f"partly, {format_size(entry.prepared_bytes)}"
    return f"yes, {format_size(entry.prepared_bytes)}"


def _search_text(entry: Entry) -> str:
    """What the index's search box looks in, lower case: names, tags, descriptions."""
    info = entry.info
    words = [entry.full_name, entry.full_name.replace("/", " "), info.description]
    words += [info.config_description, *info.tags]
    return " ".join(" ".join(words).lower().split())


def _summary(text: str, limit: int = 160) -> str:
    """The first sentence of `text` (at most `limit` characters)."""
    flat = " ".join(text.split())
    end = flat.find(". ")
    first = flat if end < 0 else flat[: end + 1]
    return first if len(first) <= limit else first[: limit - 3].rstrip() + "..."


def index_page(entries: Sequence[Entry], docs: str | None = None) -> str:
    """The index: a searchable, tag-filterable table of every entry; with `docs` (a URL or a
    relative path), a link back to catalog's documentation."""
    tags = sorted({t for e in entries for t in e.info.tags})
    counts = {t: sum(t in e.info.tags for e in entries) for t in tags}
    options = "".join(f'<option value="{esc(t)}">{esc(t)} ({counts[t]})</option>' for t in tags)
    rows = []
    for e in entries:
        info = e.info
        description = info.config_description or info.description
        configs = e.builder.spec.configs
        default = (
            " (default config)"
            if configs and e.builder.config == e.builder.spec.default_config
            else ""
        )
        rows.append(
            f'<tr data-search="{esc(_search_text(e))}" data-tags="{esc(" ".join(info.tags))}">'
            f'<td><a href="{esc(e.page)}">{esc(e.full_name)}</a>{esc(default)}'
            f'<div class="summary">{esc(_summary(description))}</div></td>'
            f"<td>{tag_links(info.tags, root='')}</td>"
            f"<td>{esc(info.version)}</td>"
            f"<td>{esc(_splits_text(e))}</td>"
            f'<td class="num">{esc(format_size(_download_size(e)))}</td>'
            f"<td>{esc(_prepared_text(e))}</td></tr>"
        )
    head = "".join(
        f"<th{cls}>{name}</th>"
        for name, cls in (
            ("dataset", ""),
            ("tags", ""),
            ("version", ""),
            ("splits (examples)", ""),
            ("download", ' class="num"'),
            ("prepared here", ""),
        )
    )
    noun = "dataset" if len(entries) == 1 else "datasets"
    back = f'\n<a href="{esc(docs)}">Back to the documentation</a>.' if docs else ""
    body = f"""\
<h1>Datasets</h1>
<p>Every dataset and config of the catalog. Prepare one with <code>catalog prepare NAME</code>;
read it with <code>catalog.data_source("NAME")</code>.{back}</p>
<form class="filter" role="search">
<label>Search <input type="search" id="search" placeholder="name, word or tag"
 autocomplete="off"></label>
<label>Tag <select id="tag"><option value="">all tags</option>{options}</select></label>
<output id="count" for="search tag">{len(entries)} {noun}</output>
</form>
<table id="datasets">
<thead><tr>{head}</tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody>
</table>
<p id="empty" hidden>No dataset matches.</p>
"""
    return page("catalog: datasets", body, root="")


def _facts(entry: Entry) -> str:
    info = entry.info
    facts: list[tuple[str, str]] = []
    if info.homepage:
        link = urlsplit(info.homepage).scheme in ("http", "https")  # never javascript: etc.
        text = esc(info.homepage)
        facts.append(("homepage", f'<a href="{text}">{text}</a>' if link else text))
    if info.license:
        facts.append(("license", esc(info.license)))
    if info.supervised_keys:
        facts.append(
            ("supervised keys", f"<code>{esc(supervised_text(info.supervised_keys))}</code>")
        )
    if info.downloads:
        files = len(info.downloads)
        facts.append(
            (
                "download size",
                esc(f"{format_size(info.download_size)} ({files} file{'s' * (files != 1)})"),
            )
        )
    prepared = "no: not in the data dir this site was built from"
    if entry.prepared:
        prepared = f"yes, {format_size(entry.prepared_bytes)} on disk"
        if not entry.complete:
            prepared += " (a partial copy, prepared with --max-examples-per-split)"
    if entry.problem:
        prepared = f"unreadable: {entry.problem}"
    facts.append(("prepared here", esc(prepared)))
    items = "\n".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in facts)
    return f'<dl class="facts">\n{items}\n</dl>'


def shell_name(entry: Entry) -> str:
    """The dataset as a command-line argument: its name, or its builder folder's path,
    quoted for a POSIX shell when it needs to be."""
    return shlex.quote(entry.request)


def _usage(entry: Entry) -> str:
    name = shell_name(entry)
    first = next(iter(entry.info.splits), "train")
    # Inside "...": JSON's escapes are Python's too.
    literal = json.dumps(entry.request, ensure_ascii=False)[1:-1]
    return f"""\
<pre class="usage"><code>catalog prepare {esc(name)}
catalog info {esc(name)}</code></pre>
<pre class="usage"><code>import catalog
ds = catalog.data_source("{esc(literal)}", split="{esc(first)}")
ds[0]   # {{{esc(", ".join(f"{k!r}: ..." for k in entry.info.features))}}}</code></pre>"""


def _features(entry: Entry) -> str:
    rows = [
        (
            f'<span class="depth{min(r.depth, 4)}"><code>{esc(r.name)}</code></span>',
            esc(r.type),
            f"<code>{esc(r.shape)}</code>" if r.shape else "",
            esc(r.dtype),
            esc(r.details),
        )
        for r in feature_rows(entry.info.features)
    ]
    return table(("feature", "type", "shape", "dtype", "details"), rows, cls="features")


def _class_names(entry: Entry) -> str:
    parts = []
    for path, label in class_labels(entry.info.features.items()):
        names = label.names
        items = "".join(f"<li>{esc(n)}</li>" for n in names)
        open_ = "" if len(names) > MANY_CLASSES else " open"
        parts.append(
            f"<details{open_}><summary><code>{esc(path)}</code>: {len(names)} classes"
            f'</summary>\n<ol start="0" class="classes">{items}</ol>\n</details>'
        )
    if not parts:
        return ""
    return "<h2>Class names</h2>\n" + "\n".join(parts)


def _splits(entry: Entry) -> str:
    expected = entry.expected
    rows = []
    for name, split in entry.info.splits.items():
        count = f"{split.num_examples:,}"
        want = expected.get(name)
        if entry.prepared and want is not None and want != split.num_examples:
            count += f" of {want:,}"
        size = format_size(split.num_bytes) if split.shards else ""
        shards = str(len(split.shards)) if split.shards else ""
        rows.append((esc(name), esc(count), esc(size), esc(shards)))
    return table(("split", "examples", "size", "shards"), rows, cls="splits", numeric=(1, 2, 3))


def _files(download: dict[str, Any]) -> str:
    """`` in 17 files`` for a local folder's download (its ``files``), else nothing."""
    files = download.get("files")
    return f" in {files:,} files" if isinstance(files, int) and files > 1 else ""


def _downloads(entry: Entry) -> str:
    downloads = entry.info.downloads
    if not downloads:
        return ""
    rows = [
        (
            f"<code>{esc(key)}</code>",
            f"<code>{esc(_public_url(d.get('url')) or _manual(d))}</code>",
            esc(format_size(d.get("size")) + _files(d)),
            f"<code>{esc((d.get('sha256') or '')[:16])}</code>",
        )
        for key, d in sorted(downloads.items())
    ]
    listing = table(
        ("file", "URL", "size", "sha256 (first 16)"), rows, cls="downloads", numeric=(2,)
    )
    summary = f"{len(rows)} download{'s' * (len(rows) != 1)}"
    return f"<details><summary>{summary}</summary>\n{listing}\n</details>"


def _public_url(url: object) -> str:
    """A download's URL as a page shows it: a local file (``file:``, what a dataset prepared
    from files or a local Croissant file records) by its name only, never this machine's
    path."""
    if not isinstance(url, str) or not url:
        return ""
    if not _machine_path(url):
        return url
    return f"a local file: {url.rstrip('/').rsplit('/', 1)[-1]}"


def _machine_path(url: str) -> bool:
    """Whether `url` names a file on this machine by its absolute path (``file:///...``)."""
    return urlsplit(url).scheme == "file" or url.startswith(("/", "~"))


def _without_local_files(doc: dict[str, Any]) -> dict[str, Any]:
    """The Croissant document of a page without the FileObjects of local files (``file:``
    URLs: this machine's paths, nobody else's to fetch)."""
    kept = [
        d for d in doc.get("distribution", []) if not _machine_path(str(d.get("contentUrl", "")))
    ]
    return {**doc, "distribution": kept} if "distribution" in doc else doc


def _manual(download: dict[str, Any]) -> str:
    """How the site names an unverified manual file (`catalog.download.manual`)."""
    name = download.get("manual")
    return f"placed by hand: {name} (no published checksum)" if name else ""


def _configs(entry: Entry) -> str:
    spec = entry.builder.spec
    if not spec.configs:
        return ""
    rows = []
    for config, description in spec.configs.items():
        name = f"{spec.name}/{config}"
        link = f'<a href="{esc(slug(name))}.html">{esc(name)}</a>'
        if config == spec.config:
            link = f"<strong>{esc(name)}</strong>"
        rows.append((link, "default" if config == spec.default_config else "", esc(description)))
    return "<h2>Configs</h2>\n" + table(("config", "", "description"), rows, cls="configs")


def _picture(entry: Entry, picture: Picture) -> str:
    if picture.file:
        alt = f"{picture.count} examples of {entry.full_name} {picture.split}"
        caption = (
            f"The first {picture.count} examples of the {esc(picture.split)} split, as "
            f"<code>catalog show {esc(shell_name(entry))} --split {esc(picture.split)} "
            f"-n {picture.count}</code> draws them."
        )
        return (
            f'<figure class="examples"><img src="../{esc(picture.file)}" alt="{esc(alt)}" '
            f'width="{picture.width}" height="{picture.height}">\n'
            f"<figcaption>{caption}</figcaption></figure>"
        )
    return f'<p class="note">{esc(picture.note)}</p>'


def _paragraphs(text: str) -> Iterable[str]:
    for paragraph in text.split("\n\n"):
        if paragraph.strip():
            yield f"<p>{esc(' '.join(paragraph.split()))}</p>"


def dataset_page(entry: Entry, picture: Picture) -> str:
    """The page of one dataset (or config)."""
    info = entry.info
    description = list(_paragraphs(info.description))
    if info.config_description:
        description.append(
            f'<p class="config">Config <code>{esc(info.config)}</code>: '
            f"{esc(info.config_description)}</p>"
        )
    citation = ""
    if info.citation:
        citation = (
            '<h2>Citation <button type="button" class="copy" data-copy="citation">Copy'
            f'</button></h2>\n<pre id="citation">{esc(info.citation.strip())}</pre>'
        )
    sections = [
        f'<h1>{esc(entry.full_name)} <span class="version">{esc(info.version)}</span></h1>',
        f'<p class="tags">{tag_links(info.tags, root="../")}</p>' if info.tags else "",
        *description,
        _facts(entry),
        "<h2>Use it</h2>",
        _usage(entry),
        "<h2>Examples</h2>",
        _picture(entry, picture),
        "<h2>Features</h2>",
        _features(entry),
        _class_names(entry),
        "<h2>Splits</h2>",
        _splits(entry),
        _downloads(entry),
        _configs(entry),
        citation,
    ]
    body = "\n".join(s for s in sections if s) + "\n"
    return page(
        f"{entry.full_name} {info.version}: catalog",
        body,
        root="../",
        crumb=entry.full_name,
        # for dataset search engines, as `catalog croissant` prints it (no machine paths)
        data=_without_local_files(to_croissant(info)),
    )
