"""The documentation site as built (`mkdocs build --strict`, mkdocs.yml): its generated parts
are there, and in headless Chromium its pages open without an error and its search leads to
a dataset page and an API entry.

The site is the one .ci/run builds (``$CATALOG_DOCS_SITE``), else built here into a temporary
folder (skipped without the docs tools: ``pip install -e '.[docs]'``). The browser part is
skipped, saying why, without Chromium (.ci/run installs it when apt can). The site is served
from a loopback HTTP server, as a host serves it: the search's index is fetched by a worker.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import catalog
from catalog.cli.commands import COMMANDS
from catalog.spec.registry import list_datasets

from chromium import Chromium, find_chromium

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    built = os.environ.get("CATALOG_DOCS_SITE")
    if built and (Path(built) / "index.html").is_file():
        return Path(built)
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("the docs tools are not installed: pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("docs") / "site"
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": path}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return out


def test_every_public_name_has_an_api_entry(site: Path) -> None:
    page = (site / "reference" / "api.html").read_text("utf-8")
    ids = set(re.findall(r'id="([^"]+)"', page))
    missing = [name for name in catalog.__all__ if f"catalog.{name}" not in ids]
    assert not missing, f"no API entry for {missing}"


def test_every_command_has_a_cli_reference_section(site: Path) -> None:
    page = (site / "reference" / "cli.html").read_text("utf-8")
    for command in COMMANDS:
        assert f"usage: catalog {command.name}" in page, command.name


def test_the_dataset_catalog_is_in_the_site_and_its_search(site: Path) -> None:
    assert (site / "catalog" / "index.html").is_file()
    index = json.loads((site / "search" / "search_index.json").read_text("utf-8"))
    locations = {doc["location"] for doc in index["docs"]}
    for name in list_datasets():
        pages = [p for p in locations if re.fullmatch(rf"catalog/datasets/{name}(-.+)?\.html", p)]
        assert pages, f"no search entry for the dataset page of {name}"
        assert all((site / p).is_file() for p in pages)


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def search(browser: Chromium, words: str, href: str) -> str:
    """Type `words` into the site's search box; the URL of the first result linking to
    `href` (a path, with an optional #fragment)."""
    browser.evaluate("document.querySelector('input.md-search__input').value = ''")
    browser.click("label.md-search__icon, .md-search__input")
    browser.evaluate("document.querySelector('input.md-search__input').focus()")
    browser.type_text(words)
    link = browser.wait_until(
        "Array.from(document.querySelectorAll('.md-search-result__list a'))"
        f".map(a => a.href).find(h => new URL(h).pathname + new URL(h).hash === {href!r} "
        f"|| new URL(h).pathname === {href!r})"
    )
    assert isinstance(link, str)
    return link


@pytest.mark.skipif(
    find_chromium() is None,
    reason="chromium is not installed: apt-get install chromium (.ci/run does when apt works)",
)
def test_pages_open_and_the_search_finds_a_dataset_and_an_api_entry(
    served: str, tmp_path: Path
) -> None:
    with Chromium.start(tmp_path / "profile") as browser:
        # Three pages: the home page, a guide, the generated API reference.
        for path, heading in [
            ("/index.html", "catalog"),
            ("/guides/reading.html", "Reading data, PyTorch and JAX"),
            ("/reference/api.html", "API reference"),
        ]:
            browser.navigate(served + path)
            h1 = browser.evaluate("document.querySelector('article h1').textContent")
            assert h1.strip().rstrip("¶").strip() == heading, (path, h1)
            assert browser.evaluate("document.querySelectorAll('.md-nav__link').length") > 10
        # The search finds a dataset page of the catalog, and the page opens.
        browser.navigate(served + "/index.html")
        link = search(browser, "fashion_mnist", "/catalog/datasets/fashion_mnist.html")
        browser.navigate(link)
        assert "fashion_mnist" in browser.evaluate("document.querySelector('h1').textContent")
        # ... and an entry of the API reference, which opens at that entry.
        browser.navigate(served + "/guides/reading.html")
        link = search(browser, "DataSource", "/reference/api.html#catalog.DataSource")
        browser.navigate(link)
        shown = browser.evaluate(
            "(() => { const e = document.getElementById('catalog.DataSource'); "
            "return e && e.getBoundingClientRect().top < window.innerHeight; })()"
        )
        assert shown, "the API entry is not on screen"
        # The browser's own request for /favicon.ico (the catalog pages name no icon; the
        # MkDocs pages do) is not the pages' doing.
        errors = [e for e in browser.errors if not e.endswith("/favicon.ico")]
        assert errors == [], errors
