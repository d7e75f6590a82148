"""`build_site`: write the whole site into a folder, atomically.

The site is built in a new folder beside the output and then put in its place, so an
interrupted build never leaves half a site, and pages of datasets no longer asked for do not
linger. The output must be new, empty, or a site `catalog site` wrote before (its index
carries the generator tag): any other folder is refused, never overwritten.

Same inputs, same bytes: nothing depends on the time, the order of a directory listing or the
data dir's path, and the example grids are PNGs of the same pixels written the same way.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from catalog.errors import StorageError
from catalog.present.site.entries import Entry, entries
from catalog.present.site.html import GENERATOR
from catalog.present.site.pages import Picture, dataset_page, index_page, shell_name
from catalog.present.strings import no_surrogates

__all__ = [
    "GRID_COLUMNS",
    "GRID_EXAMPLES",
    "STATIC_FILES",
    "SiteOutputError",
    "SiteReport",
    "build_site",
    "draw_examples",
]

#: The example grid: the first GRID_EXAMPLES examples of a split, GRID_COLUMNS to a row.
GRID_EXAMPLES = 16
GRID_COLUMNS = 8
#: The files every site has at its root besides index.html (package data of catalog.present.site).
STATIC_FILES = ("site.js", "style.css")


class SiteOutputError(StorageError, ValueError):
    """The output folder cannot take the site (a file, or a folder of something else): an
    unusable folder, like a data dir that is a file (a usage error on the command line)."""


@dataclass
class SiteReport:
    """What `build_site` wrote: the entries, the pages and grids, and per-dataset problems
    (a grid that could not be drawn: the page then says why)."""

    entries: list[Entry] = field(default_factory=list)
    pictures: dict[str, Picture] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)

    @property
    def grids(self) -> int:
        return sum(1 for p in self.pictures.values() if p.file)


def _not_prepared_note(entry: Entry) -> str:
    name, arg = entry.full_name, shell_name(entry)
    return (
        f"No examples to show: {name} is not prepared in the data dir this site was built "
        f'from. Run "catalog prepare {arg}", then "catalog show {arg}" draws examples, and '
        '"catalog site" run again shows them here.'
    )


def draw_examples(entry: Entry, root: Path) -> tuple[Picture, str]:
    """Draw the example grid of `entry` into ``root/images/<slug>.png``, as ``catalog show``
    draws the first GRID_EXAMPLES examples of its train split (else its first split).

    Returns (the picture, or a note saying why there is none; a problem to report, or "").
    """
    from catalog.present.show import pick_features, show_examples  # Pillow: only when drawing

    if entry.problem:
        return Picture(note=f"No examples to show: {entry.problem}"), ""
    if not entry.prepared:
        return Picture(note=_not_prepared_note(entry)), ""
    info = entry.info
    try:
        pick_features(info.features, info.supervised_keys)
    except ValueError:
        kinds = ", ".join(f"{k} ({f.type_name})" for k, f in info.features.items())
        note = (
            f"No example picture: 'catalog show' draws Image features, and {entry.full_name} "
            f"has none (its features: {kinds})."
        )
        return Picture(note=note), ""
    split = "train" if "train" in info.splits else next(iter(info.splits), "")
    if not split or info.splits[split].num_examples == 0:
        return Picture(note=f"No examples to show: {entry.full_name} has no examples."), ""
    try:
        with entry.builder.as_data_source(split) as ds:
            grid = show_examples(ds, num_examples=GRID_EXAMPLES, columns=GRID_COLUMNS)
            count = min(GRID_EXAMPLES, len(ds))
    # Broad on purpose: array_record raises RuntimeError for a damaged shard, and one
    # dataset's picture must not cost the others their pages.
    except Exception as exc:
        problem = f"cannot draw examples of {entry.full_name} {split}: {exc}"
        return Picture(note=f"No examples to show: {problem}."), problem
    file = f"images/{entry.slug}.png"
    (root / "images").mkdir(exist_ok=True)
    # PNG carries no time unless asked to; optimize=True makes the zlib settings fixed.
    grid.save(root / file, format="PNG", optimize=True)
    return Picture(file, grid.width, grid.height, split, count), ""


def _is_site(folder: Path) -> bool:
    index = folder / "index.html"
    try:
        head = index.read_text("utf-8", errors="replace")[:2000]
    except OSError:
        return False
    return f'<meta name="generator" content="{GENERATOR}">' in head


def _check_output(output: Path) -> None:
    if output.exists() and not output.is_dir():
        raise SiteOutputError(f"{output} is a file; give a folder for the site")
    if output.is_dir() and any(output.iterdir()) and not _is_site(output):
        raise SiteOutputError(
            f"{output} is not empty and holds no site made by 'catalog site'; give a new or "
            "empty folder (catalog site replaces the whole folder's contents)"
        )


def _write(path: Path, text: str) -> None:
    """Write a page as UTF-8. Values reach pages through `html.esc`, which replaces lone
    surrogates; any other text still cannot make the page unwritable."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(no_surrogates(text))


def build_site(
    output: str | os.PathLike[str],
    names: list[str] | None = None,
    *,
    data_dir: str | os.PathLike[str] | None = None,
    docs: str | None = None,
) -> SiteReport:
    """Write a static web site of `names` to `output`, what ``catalog site`` writes: an index
    of every dataset and config (tags, version, splits, sizes, prepared here or not) with a
    search box and a tag filter, and a page per dataset and config (description, features,
    class names, splits, citation, how to use it, and a grid of examples of a prepared
    dataset with images). Plain HTML and CSS, relative links only; the same datasets and data
    dir give the same bytes. `output` is replaced as a whole.

    Args:
        output: the folder to write: new, empty, or a site written before.
        names: datasets to include (``name``, ``name/config``, ``name:version``, a builder
            folder); None or empty: every registered dataset.
        data_dir: where prepared data is, for the example grids (a path or a bucket URL);
            default as for `catalog.builder`.
        docs: link the index back to catalog's documentation there (a URL, or a path
            relative to `output`; the documentation site's build passes ``../index.html``).

    Returns:
        A `SiteReport`: the entries written, their example pictures, and per dataset any
        problem drawing its examples.

    Raises:
        SiteOutputError: `output` is a folder of something else; nothing is written.
        DatasetNotFoundError: an unknown dataset; nothing is written.
    """
    output = Path(output)
    _check_output(output)
    report = SiteReport(entries(names or (), data_dir=data_dir))
    output.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{output.name}.", dir=output.parent))
    try:
        for name in STATIC_FILES:
            data = resources.files("catalog.present.site").joinpath("static", name).read_bytes()
            (work / name).write_bytes(data)
        _write(work / "index.html", index_page(report.entries, docs))
        for entry in report.entries:
            picture, problem = draw_examples(entry, work)
            report.pictures[entry.full_name] = picture
            if problem:
                report.problems[entry.full_name] = problem
            _write(work / entry.page, dataset_page(entry, picture))
        for folder in (work, *(p for p in work.rglob("*") if p.is_dir())):
            folder.chmod(0o755)  # mkdtemp's 0o700 would hide the site from a web server
        _replace(work, output)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return report


def _replace(work: Path, output: Path) -> None:
    """Put `work` where `output` is, the old output (if any) removed."""
    if not output.exists():
        os.rename(work, output)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{output.name}.old.", dir=output.parent))
    os.rename(output, old / "site")
    try:
        os.rename(work, output)
    except OSError:
        os.rename(old / "site", output)
        raise
    finally:
        shutil.rmtree(old, ignore_errors=True)
