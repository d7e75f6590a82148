"""`catalog site`: the static site of the catalog, rendered and checked file by file.

The browser's view of the same pages is in tests/present/test_site_browser.py.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import pytest
from PIL import Image as PILImage

import catalog
from catalog.api.builder import DatasetBuilder
from catalog.features import ClassLabel, FeaturesDict, Image, Sequence, Tensor, Text
from catalog.info.dataset_info import DatasetInfo, SplitInfo
from catalog.present.show import show_examples
from catalog.present.site.build import GRID_COLUMNS, GRID_EXAMPLES
from catalog.present.site.entries import Entry
from catalog.present.site.pages import MANY_CLASSES, Picture, dataset_page
from catalog.spec.load import load_spec
from catalog.spec.registry import list_datasets
from catalog.testing.http_server import LoopbackServer

from conftest import ROOT, tabular_builder


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catalog", *args],
        capture_output=True, text=True, timeout=300, env=os.environ,
    )  # fmt: skip


def every_full_name() -> list[str]:
    """Every dataset and config of the registry, as `catalog list` shows them."""
    names = []
    for name in list_datasets():
        spec = catalog.builder(name).spec
        names += [f"{name}/{c}" for c in spec.configs] or [name]
    return sorted(names)


class Links(HTMLParser):
    """Every link of a page: (tag, attribute, value) for href and src attributes; and ids."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str, str]] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src") and value is not None:
                self.links.append((tag, name, value))
            if name == "id" and value:
                self.ids.add(value)


def parse(page: Path) -> Links:
    links = Links()
    links.feed(page.read_text("utf-8"))
    return links


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def prepared_data(first50_builder: Path, tmp_path: Path) -> Path:
    """A data dir holding first50 (the 50 real Fashion-MNIST test images), prepared."""
    data = tmp_path / "data"
    result = run("prepare", str(first50_builder), "--data-dir", str(data), "-q")
    assert result.returncode == 0, result.stderr
    return data


def site_args(first50_builder: Path, data: Path) -> list[str]:
    """The whole catalog and first50, with `data` as the data dir."""
    return [*list_datasets(), str(first50_builder), "--data-dir", str(data)]


def test_the_site_has_a_page_per_dataset_and_config(tmp_path: Path) -> None:
    out = tmp_path / "site"
    result = run("site", "-o", str(out), "--data-dir", str(tmp_path / "empty"))
    assert result.returncode == 0, result.stderr
    names = every_full_name()
    assert result.stdout == (
        f"wrote {out}: {len(names)} dataset pages, 0 example grids; open {out}/index.html\n"
    )
    pages = sorted(p.name for p in (out / "datasets").iterdir())
    assert pages == sorted(f"{n.replace('/', '-')}.html" for n in names)
    assert sorted(p.name for p in out.iterdir()) == [
        "datasets",
        "index.html",
        "site.js",
        "style.css",
    ]
    index = (out / "index.html").read_text()
    rows = re.findall(
        r'<tr data-search="([^"]*)" data-tags="([^"]*)"><td><a href="([^"]+)">', index
    )
    assert [href for _, _, href in rows] == [f"datasets/{n.replace('/', '-')}.html" for n in names]
    for (search, tags, _), name in zip(rows, names, strict=True):
        spec = catalog.builder(name).spec
        assert tags.split() == list(spec.tags) and spec.tags
        assert name.split("/")[0] in search and all(t in search for t in spec.tags)
    # Every tag of the catalog is a choice of the tag filter, with its count.
    tags = sorted({t for n in names for t in catalog.builder(n).spec.tags})
    options = re.findall(r'<option value="([^"]+)">[^<]*\((\d+)\)</option>', index)
    assert [t for t, _ in options] == tags
    for tag, count in options:
        assert int(count) == sum(tag in catalog.builder(n).spec.tags for n in names)


def test_a_dataset_page_shows_what_catalog_info_knows(tmp_path: Path) -> None:
    out = tmp_path / "site"
    assert (
        run("site", "-o", str(out), "cifar100", "cmaterdb", "--data-dir", str(tmp_path)).returncode
        == 0
    )
    page = (out / "datasets" / "cifar100.html").read_text()
    info = catalog.builder("cifar100").info
    assert f'<h1>cifar100 <span class="version">{info.version}</span></h1>' in page
    assert f'<a href="{info.homepage}">' in page
    assert '<td>train</td><td class="num">50,000</td>' in page
    assert "<dt>prepared here</dt><dd>no: not in the data dir this site was built from</dd>" in page
    assert "catalog prepare cifar100" in page and 'catalog.data_source("cifar100"' in page
    assert "No examples to show: cifar100 is not prepared" in page
    assert '<button type="button" class="copy" data-copy="citation">' in page
    assert '<pre id="citation">' in page
    # Class names: the 100 fine labels collapsed, the 20 coarse ones open, every name listed.
    fine = info.features["label"]
    coarse = info.features["coarse_label"]
    assert isinstance(fine, ClassLabel) and isinstance(coarse, ClassLabel)
    assert coarse.num_classes <= MANY_CLASSES < fine.num_classes
    assert "<details><summary><code>label</code>: 100 classes</summary>" in page
    assert "<details open><summary><code>coarse_label</code>: 20 classes</summary>" in page
    for name in fine.names + coarse.names:
        assert f"<li>{name}</li>" in page
    # A config's page names the config and links its siblings.
    telugu = (out / "datasets" / "cmaterdb-telugu.html").read_text()
    assert "<strong>cmaterdb/telugu</strong>" in telugu
    assert '<a href="cmaterdb-bangla.html">cmaterdb/bangla</a>' in telugu
    assert "catalog prepare cmaterdb/telugu" in telugu


def test_same_inputs_same_bytes(first50_builder: Path, prepared_data: Path, tmp_path: Path) -> None:
    args = site_args(first50_builder, prepared_data)
    one, two = tmp_path / "one", tmp_path / "two"
    assert run("site", "-o", str(one), *args).returncode == 0
    assert run("site", "-o", str(two), *args).returncode == 0
    first = files(one)
    assert "images/first50.png" in first
    assert first == files(two)
    # Building over the previous site gives the same bytes again.
    assert run("site", "-o", str(one), *args).returncode == 0
    assert files(one) == first
    # The data dir's path is not part of the site: a copy elsewhere gives the same bytes.
    moved = tmp_path / "elsewhere" / "data"
    shutil.copytree(prepared_data, moved)
    assert run("site", "-o", str(two), *site_args(first50_builder, moved)).returncode == 0
    assert files(two) == first


def test_links_are_relative_and_resolve(
    first50_builder: Path, prepared_data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    assert run("site", "-o", str(out), *site_args(first50_builder, prepared_data)).returncode == 0
    homepages = {catalog.builder(n).info.homepage for n in every_full_name()}
    pages = sorted(out.rglob("*.html"))
    assert len(pages) == len(every_full_name()) + 2  # and first50's, and the index
    checked = 0
    for page in pages:
        links = parse(page)
        assert links.links, page
        for tag, _attribute, value in links.links:
            parts = urlsplit(value)
            if tag == "a" and parts.scheme in ("http", "https"):
                assert value in homepages, (page, value)  # a dataset's homepage, to visit
                continue
            # Everything the page loads or links within the site: relative, and there.
            assert not parts.scheme and not parts.netloc and not value.startswith("/"), value
            target = (page.parent / parts.path).resolve() if parts.path else page
            assert target.is_file() and target.is_relative_to(out.resolve()), (page, value)
            if parts.fragment and not parts.fragment.startswith(("tag=", "q=")):
                assert parts.fragment in parse(target).ids, (page, value)
            checked += 1
    assert checked > 100


def test_a_prepared_dataset_shows_the_grid_catalog_show_draws(
    first50_builder: Path, prepared_data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    result = run(
        "site", "-o", str(out), str(first50_builder), "mnist", "--data-dir", str(prepared_data)
    )
    assert result.returncode == 0, result.stderr
    assert "2 dataset pages, 1 example grid;" in result.stdout
    with PILImage.open(out / "images" / "first50.png") as image:
        site_grid = np.asarray(image)
    b = catalog.builder(first50_builder, data_dir=prepared_data)
    with b.as_data_source("test") as ds:
        expected = np.asarray(show_examples(ds, num_examples=GRID_EXAMPLES, columns=GRID_COLUMNS))
    np.testing.assert_array_equal(site_grid, expected)
    assert site_grid.std() > 20  # real images, not a blank picture
    page = (out / "datasets" / "first50.html").read_text()
    height, width = site_grid.shape[:2]
    img = '<img src="../images/first50.png" alt="16 examples of first50 test"'
    assert f'{img} width="{width}" height="{height}">' in page
    assert "<dt>prepared here</dt><dd>yes, " in page
    assert not (out / "images" / "mnist.png").exists()


def test_a_partial_copy_says_so(first50_builder: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    args = (str(first50_builder), "--data-dir", str(data))
    assert run("prepare", *args, "--max-examples-per-split", "10", "-q").returncode == 0
    assert run("site", "-o", str(tmp_path / "site"), *args).returncode == 0
    page = (tmp_path / "site" / "datasets" / "first50.html").read_text()
    assert '<td class="num">10 of 50</td>' in page
    assert "(a partial copy, prepared with --max-examples-per-split)" in page
    index = (tmp_path / "site" / "index.html").read_text()
    assert "<td>partly, " in index
    assert "<td>test 50</td>" in index  # the index shows the dataset's splits, not the copy's


def test_a_dataset_without_images_has_a_note_instead_of_a_grid(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder = tabular_builder(
        tmp_path,
        server,
        "vectors",
        np.arange(12).reshape(3, 4),
        [0, 29, 5],
        [f"c{i}" for i in range(30)],
    )
    data = str(tmp_path / "data")
    assert run("prepare", str(folder), "--data-dir", data, "-q").returncode == 0
    result = run("site", "-o", str(tmp_path / "site"), str(folder), "--data-dir", data)
    assert result.returncode == 0, result.stderr
    assert "0 example grids" in result.stdout
    page = (tmp_path / "site" / "datasets" / "vectors.html").read_text()
    assert (
        "No example picture: &#x27;catalog show&#x27; draws Image features, and vectors has none "
        "(its features: values (Tensor), label (ClassLabel))." in page
    )
    assert "<td>Tensor</td><td><code>(4,)</code></td><td>float32</td>" in page
    assert "<details><summary><code>label</code>: 30 classes</summary>" in page
    assert not (tmp_path / "site" / "images").exists()


def test_only_web_homepages_become_links(first50_builder: Path, tmp_path: Path) -> None:
    b = DatasetBuilder(load_spec(first50_builder), data_dir=tmp_path)
    features = FeaturesDict({"label": ClassLabel(num_classes=2)})
    splits = {"train": SplitInfo("train", 1)}
    for homepage, link in (("https://example.org/x", True), ("javascript:alert(1)", False)):
        info = DatasetInfo("x", "1.0.0", features, splits, homepage=homepage)
        page = dataset_page(Entry(b, info, False, 0, True), Picture(note="n"))
        assert (f'<a href="{homepage}">' in page) is link
        assert f"<dd>{homepage}</dd>" in page or link


def test_feature_trees_of_any_type_render_from_the_features_themselves(
    first50_builder: Path, tmp_path: Path
) -> None:
    """Nested dicts, sequences and text show with their own type names, shapes and details,
    and class labels deep in the tree are listed by their path."""
    features = FeaturesDict(
        {
            "image": Image(shape=(None, None, 3), encoding="jpeg"),
            "caption": Text(),
            "objects": Sequence(
                {
                    "bbox": Tensor((4,), "float32"),
                    "label": ClassLabel(names=["cat", "dog <&>"]),
                }
            ),
        }
    )
    b = DatasetBuilder(load_spec(first50_builder), data_dir=tmp_path)
    info = DatasetInfo(
        "detect", "1.0.0", features, {"train": SplitInfo("train", 5)}, tags=("image",)
    )
    page = dataset_page(Entry(b, info, False, 0, True), Picture(note="a note"))
    assert "<td>Sequence</td><td></td><td></td><td></td>" in page
    bbox = '<span class="depth1"><code>bbox</code></span></td><td>Tensor</td>'
    assert f"{bbox}<td><code>(None, 4)</code></td><td>float32</td>" in page
    caption = '<span class="depth0"><code>caption</code></span></td><td>Text</td>'
    assert f"{caption}<td><code>()</code></td><td>str</td>" in page
    assert "<td>jpeg</td>" in page
    assert "<details open><summary><code>objects/label</code>: 2 classes</summary>" in page
    assert "<li>dog &lt;&amp;&gt;</li>" in page  # escaped
    assert '<p class="note">a note</p>' in page


def test_the_output_must_be_new_empty_or_a_site(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    result = run("site", "-o", str(other), "mnist")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr == (
        f"catalog: error: {other} is not empty and holds no site made by 'catalog site'; give "
        "a new or empty folder (catalog site replaces the whole folder's contents)\n"
    )
    assert sorted(p.name for p in other.iterdir()) == ["notes.txt"]
    a_file = tmp_path / "file"
    a_file.write_text("x")
    result = run("site", "-o", str(a_file), "mnist")
    assert result.returncode == 2 and "is a file; give a folder for the site" in result.stderr
    # An unknown dataset: one line, nothing written.
    result = run("site", "-o", str(tmp_path / "new"), "nosuchdataset")
    assert result.returncode == 2 and "nosuchdataset" in result.stderr
    assert not (tmp_path / "new").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "other"]  # no leftovers


def test_a_new_site_replaces_the_old_one_whole(tmp_path: Path) -> None:
    out = tmp_path / "site"
    (out).mkdir()  # an empty folder is fine too
    assert run("site", "-o", str(out), "mnist", "kmnist").returncode == 0
    assert (out / "datasets" / "kmnist.html").is_file()
    assert run("site", "-o", str(out), "mnist").returncode == 0
    assert sorted(p.name for p in (out / "datasets").iterdir()) == ["mnist.html"]
    assert "kmnist" not in (out / "index.html").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_an_unreadable_prepared_copy_is_shown_as_such(
    first50_builder: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    version = catalog.builder(first50_builder).version
    broken = data / "first50" / version
    broken.mkdir(parents=True)
    (broken / "dataset_info.json").write_text("{not json")
    result = run(
        "site", "-o", str(tmp_path / "site"), str(first50_builder), "--data-dir", str(data)
    )
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "site" / "datasets" / "first50.html").read_text()
    assert (
        "<dt>prepared here</dt><dd>unreadable: " in page
        and "dataset_info.json is unreadable" in page
    )


def test_a_grid_that_cannot_be_drawn_fails_that_dataset_only(
    first50_builder: Path, prepared_data: Path, tmp_path: Path
) -> None:
    b = catalog.builder(first50_builder, data_dir=prepared_data)
    for shard in b.data_path.glob("*.array_record-*"):
        shard.write_bytes(b"not an array record file")
    result = run(
        "site",
        "-o",
        str(tmp_path / "site"),
        str(first50_builder),
        "mnist",
        "--data-dir",
        str(prepared_data),
    )
    assert result.returncode == 1
    assert result.stderr.startswith(
        "catalog: error: first50: cannot draw examples of first50 test: "
    )
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1
    page = (tmp_path / "site" / "datasets" / "first50.html").read_text()
    assert "No examples to show: cannot draw examples of first50 test" in page
    assert (tmp_path / "site" / "datasets" / "mnist.html").is_file()


def find(picture: np.ndarray, part: np.ndarray) -> tuple[int, int] | None:
    """Where `part` (h, w, 3) sits in `picture` exactly, as (top, left), or None."""
    probe = part.shape[0] // 4  # a row through the first row of images, not a white one
    needle = part[probe].tobytes()
    for y in range(picture.shape[0] - part.shape[0] + 1):
        row = picture[y + probe].tobytes()
        at = row.find(needle)
        while at >= 0:
            x = at // 3
            if at % 3 == 0 and np.array_equal(
                picture[y : y + part.shape[0], x : x + part.shape[1]], part
            ):
                return y, x
            at = row.find(needle, at + 1)
    return None


def test_the_readme_picture_shows_the_example_grid(
    first50_builder: Path, prepared_data: Path
) -> None:
    """docs/site_fashion_mnist.png, made by tests/make_site_picture.py, holds the example grid
    of the 50-image sample pixel for pixel (the page around it depends on the fonts)."""
    with PILImage.open(ROOT / "docs" / "site_fashion_mnist.png") as image:
        picture = np.asarray(image.convert("RGB"))
    b = catalog.builder(first50_builder, data_dir=prepared_data)
    with b.as_data_source("test") as ds:
        grid = show_examples(ds, num_examples=GRID_EXAMPLES, columns=GRID_COLUMNS)
    assert find(picture, np.asarray(grid.convert("RGB"))) is not None


def test_no_machine_paths_and_the_index_links_back_to_the_docs(tmp_path: Path) -> None:
    """A dataset prepared from a local file records its ``file:///<absolute path>``: its page
    names the file only (in the downloads table and its Croissant data block), and
    ``--docs`` links the index back to the documentation (the docs build passes
    ``../index.html``)."""
    folder = tmp_path / "my files"
    folder.mkdir()
    (folder / "people.csv").write_text("name,age\nada,36\nalan,41\n")
    data = tmp_path / "data"
    prepared = subprocess.run(  # a relative path: the description says "from people.csv"
        [sys.executable, "-m", "catalog", "prepare", "people.csv", "--data-dir", str(data)],
        capture_output=True, text=True, timeout=300, env=os.environ, cwd=folder,
    )  # fmt: skip
    assert prepared.returncode == 0, prepared.stderr
    recorded = (data / "people" / "1.0.0" / "dataset_info.json").read_text("utf-8")
    assert f"file://{folder}" in recorded.replace("%20", " ")  # what the page must not show
    out = tmp_path / "site"
    built = run(
        "site", "people", "--data-dir", str(data), "-o", str(out), "--docs", "../index.html"
    )
    assert built.returncode == 0, built.stderr
    for page in (out / "index.html", out / "datasets" / "people.html"):
        text = page.read_text("utf-8")
        assert str(tmp_path) not in text and "file://" not in text, page
    assert "a local file: people.csv" in (out / "datasets" / "people.html").read_text("utf-8")
    assert '<a href="../index.html">Back to the documentation</a>' in (
        out / "index.html"
    ).read_text("utf-8")
