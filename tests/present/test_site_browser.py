"""The site in a real browser: headless Chromium (Debian's package) opens the pages from disk.

Typing goes through real key events (the DevTools protocol's Input domain), the DOM is read
back, console errors and failed loads are collected, and a screenshot is checked pixel by
pixel against the example grid. Every page runs under its Content-Security-Policy: a
violation is a console error, so the checks that no page logs one show that the search box,
the copy button and the images work under it. Skipped, saying why, when Chromium is not installed
(.ci/run installs it when apt can).
"""

from __future__ import annotations

import html
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage

from catalog.cli.listing import matches
from catalog.errors import CatalogError
from catalog.present.site.html import POLICY
from catalog.spec.index import FULL_NAME, summaries
from catalog.spec.registry import list_datasets

from chromium import Chromium, find_chromium

pytestmark = pytest.mark.skipif(
    find_chromium() is None,
    reason="chromium is not installed: apt-get install chromium (.ci/run does when apt works)",
)

#: The policy the page in the browser is under, as its <meta http-equiv> gives it.
PAGE_POLICY = (
    "document.querySelector('meta[http-equiv=\"Content-Security-Policy\"]')?.content ?? null"
)

VISIBLE_ROWS = (
    "Array.from(document.querySelectorAll('#datasets tbody tr'))"
    ".filter(r => !r.hidden && r.offsetParent !== null).map(r => r.querySelector('a').textContent)"
)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catalog", *args],
        capture_output=True, text=True, timeout=300, env=os.environ,
    )  # fmt: skip


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole catalog's site, with first50 (50 real Fashion-MNIST images) prepared."""
    from catalog.testing.http_server import LoopbackServer

    from conftest import FIRST50, write_builder

    root = tmp_path_factory.mktemp("site")
    files = {p.name: p.read_bytes() for p in sorted(FIRST50.glob("*.gz"))}
    with LoopbackServer() as server:
        folder = write_builder(
            root / "first50",
            server,
            files,
            name="first50",
            splits={"test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz", 50)},
        )
        data = root / "data"
        result = run("prepare", str(folder), "--data-dir", str(data), "-q")
        assert result.returncode == 0, result.stderr
    out = root / "out"
    result = run("site", "-o", str(out), *list_datasets(), str(folder), "--data-dir", str(data))
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    with Chromium.start(tmp_path_factory.mktemp("profile"), width=1200, height=900) as b:
        yield b


def expected(words: str, tag: str | None = None) -> list[str]:
    """The registered datasets (and configs) `catalog list [--tag T] WORD` keeps."""
    names = []
    tags = [tag] if tag else []
    for name, summary in summaries():
        assert not isinstance(summary, CatalogError), (name, summary)
        names += [row[FULL_NAME] for row in summary["rows"] if matches(summary, row, tags, words)]
    return sorted(names)


def test_typing_in_the_search_box_filters_the_index(site: Path, browser: Chromium) -> None:
    browser.errors.clear()
    browser.navigate((site / "index.html").as_uri())
    assert browser.evaluate(PAGE_POLICY) == POLICY
    everything = browser.evaluate(VISIBLE_ROWS)
    assert len(everything) == len(expected("")) + 1  # and first50
    assert browser.evaluate("document.getElementById('count').textContent") == (
        f"{len(everything)} datasets"
    )
    browser.click("#search")
    browser.type_text("fashion")
    assert browser.evaluate("document.getElementById('search').value") == "fashion"
    assert browser.evaluate(VISIBLE_ROWS) == expected("fashion") == ["fashion_mnist"]
    assert browser.evaluate("document.getElementById('count').textContent") == (
        f"1 of {len(everything)} datasets"
    )
    for _ in "fashion":
        browser.key("Backspace")
    browser.type_text("mnist")
    shown = browser.evaluate(VISIBLE_ROWS)
    assert shown == expected("mnist") and len(shown) >= 4
    # Enter sends the form nowhere (site.js stops it: no inline onsubmit under the policy,
    # and the policy's form-action 'none' would log a violation).
    browser.key("Enter")
    assert browser.evaluate("location.href") == (site / "index.html").as_uri()
    assert browser.evaluate(VISIBLE_ROWS) == shown and browser.errors == []
    # A tag link in a row filters by its tag (index.html#tag=...), on top of the words.
    browser.click('#datasets tr:not([hidden]) a.tag[href="index.html#tag=image-classification"]')
    # The link changes the fragment; the filter follows on the hashchange event it queues.
    browser.wait_until("document.getElementById('tag').value === 'image-classification'")
    assert browser.evaluate(VISIBLE_ROWS) == expected("mnist", "image-classification")
    browser.click("#search")  # the caret lands after the text: the box is wider than it
    browser.type_text(" zzz-no-such-word")
    assert browser.evaluate("document.getElementById('search').value") == "mnist zzz-no-such-word"
    assert browser.evaluate(VISIBLE_ROWS) == []
    assert browser.evaluate("document.getElementById('empty').hidden") is False
    assert browser.errors == []


def test_a_tag_link_on_a_dataset_page_opens_the_index_filtered(
    site: Path, browser: Chromium
) -> None:
    browser.errors.clear()
    browser.navigate((site / "datasets" / "cmaterdb-telugu.html").as_uri())
    browser.click('a.tag[href="../index.html#tag=image-classification"]')
    browser.wait_for("Page.loadEventFired")
    assert browser.evaluate("location.hash") == "#tag=image-classification"
    assert browser.evaluate(VISIBLE_ROWS) == expected("", "image-classification")
    browser.navigate((site / "index.html").as_uri() + "#q=mnist%20fashion")
    # A new fragment on the same page: the filter follows on its hashchange event.
    browser.wait_until("document.getElementById('search').value === 'mnist fashion'")
    assert browser.evaluate(VISIBLE_ROWS) == ["fashion_mnist"]
    assert browser.errors == []


def test_every_page_loads_without_errors(site: Path, browser: Chromium) -> None:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) == len(expected("")) + 2
    for page in pages:
        browser.errors.clear()
        browser.navigate(page.as_uri())
        assert browser.evaluate(PAGE_POLICY) == POLICY, page
        # The stylesheet applied, and every image decoded: the policy lets our files in.
        style = browser.evaluate(
            "getComputedStyle(document.querySelector('header.top')).borderBottomStyle"
        )
        assert style == "solid", page
        broken = browser.evaluate(
            "Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).length"
        )
        assert broken == 0, page
        assert browser.errors == [], page


def test_the_citation_copy_button(site: Path, browser: Chromium) -> None:
    browser.errors.clear()
    browser.navigate((site / "datasets" / "mnist.html").as_uri())
    assert browser.evaluate(PAGE_POLICY) == POLICY
    assert browser.evaluate("document.querySelector('button.copy').textContent") == "Copy"
    browser.click("button.copy")
    label = browser.wait_until("document.querySelector('button.copy').textContent !== 'Copy'")
    assert label
    text = browser.evaluate("document.querySelector('button.copy').textContent")
    assert text in ("Copied", "Selected: press Ctrl+C")
    if text.startswith("Selected"):  # no clipboard here: the citation is selected instead
        assert browser.evaluate("String(window.getSelection())").startswith("@article")
    assert browser.errors == []


def test_a_screenshot_of_a_prepared_dataset_shows_the_example_grid(
    site: Path, browser: Chromium
) -> None:
    browser.errors.clear()
    browser.navigate((site / "datasets" / "first50.html").as_uri())
    shot = np.asarray(PILImage.open(io.BytesIO(browser.screenshot())).convert("RGB")).astype(int)
    # The image's content box (inside its 1 px border), in page coordinates.
    left, top, width, height = browser.evaluate(
        "(() => { const i = document.querySelector('figure.examples img');"
        " const r = i.getBoundingClientRect();"
        " return [r.left + i.clientLeft + scrollX, r.top + i.clientTop + scrollY,"
        " i.clientWidth, i.clientHeight]; })()"
    )
    with PILImage.open(site / "images" / "first50.png") as grid_file:
        grid = np.asarray(grid_file.convert("RGB")).astype(int)
    assert (width, height) == (grid.shape[1], grid.shape[0])  # drawn at its own size
    x, y = round(left), round(top)
    region = shot[y : y + grid.shape[0], x : x + grid.shape[1]]
    assert region.shape == grid.shape
    # The screen shows the grid's pixels (colour management may move a level or two).
    assert np.abs(region - grid).max() <= 3
    assert grid.std() > 20  # and the grid is real images, not a blank
    # Outside the grid, the same place on a page without one is plain background.
    assert np.abs(shot[y + 10 : y + 60, x + grid.shape[1] + 20 :] - 255).max() == 0
    assert browser.errors == []


def test_the_policy_refuses_what_an_escaping_bug_could_inject(
    site: Path, browser: Chromium
) -> None:
    """A page as an escaping bug would leave it: an inline script, an event handler and a
    style attribute. None of them runs; each is a console error; the site's own script and
    stylesheet still work."""
    page = (site / "datasets" / "mnist.html").read_text("utf-8")  # with a copy button
    title = html.unescape(page.split("<title>")[1].split("</title>")[0])
    injected = (
        '<script>document.title = "inline script ran"</script>'
        '<img id="injected" src="../images/first50.png" '
        "onload=\"document.title = 'event handler ran'\">"
        '<p id="styled" style="color: rgb(255, 0, 0)">styled</p>'
    )
    assert page.count("<h2>Examples</h2>") == 1
    copy = site / "datasets" / "injected.html"
    copy.write_text(page.replace("<h2>Examples</h2>", injected + "<h2>Examples</h2>"), "utf-8")
    try:
        browser.errors.clear()
        browser.navigate(copy.as_uri())
        browser.wait_until("document.getElementById('injected').complete")
        assert browser.evaluate("document.title") == title
        colour = browser.evaluate("getComputedStyle(document.getElementById('styled')).color")
        assert colour != "rgb(255, 0, 0)"
        assert browser.evaluate("document.getElementById('injected').naturalWidth") > 0
        refused = [e for e in browser.errors if "Content Security Policy" in e]
        assert len(refused) == 3 and refused == browser.errors, browser.errors
        kinds = ("inline script", "inline event handler", "inline style")
        assert all(any(k in e for e in refused) for k in kinds), refused
        # The site's own script still runs on the page: the copy button answers a click.
        browser.errors.clear()
        browser.click("button.copy")
        assert browser.wait_until("document.querySelector('button.copy').textContent !== 'Copy'")
        assert browser.errors == []
    finally:
        copy.unlink()
