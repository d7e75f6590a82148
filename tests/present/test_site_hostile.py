"""Hostile strings in a prepared dataset's info, through `catalog show` and `catalog site`, and
the pages' Content-Security-Policy.

A ``dataset_info.json`` is anyone's file: a class name may be a million characters long, and
any string may hold a lone surrogate (``"\\ud800"``: valid JSON, no character, not encodable
as UTF-8). Both must come out as a picture, a page or a line of text, quickly, or be refused
in one line naming what could not be drawn. The pages' policy makes a value that ever slips
past the escaping inert: no inline script, style or event handler runs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image as PILImage
from PIL import ImageFont

from catalog.present.show import PAD, _fit_caption, render_grid
from catalog.present.site.html import POLICY
from catalog.present.strings import ELLIPSIS, describe, fit_width
from catalog.spec.registry import list_datasets
from catalog.testing.http_server import LoopbackServer

from conftest import idx_builder, tabular_builder

#: Generous: the cut was quadratic (28 s for 4,000 characters, past 120 s for a million).
SECONDS = 20.0


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catalog", *args],
        capture_output=True, encoding="utf-8", timeout=300, cwd=cwd, env=os.environ,
    )  # fmt: skip


def timed(*args: str, cwd: Path | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    result = run(*args, cwd=cwd)
    return result, time.monotonic() - start


@pytest.fixture
def tiny(tmp_path: Path, server: LoopbackServer) -> tuple[Path, Path]:
    """(builder folder, data dir) of 3 pattern images labelled 0, 3 and 6, prepared."""
    folder = idx_builder(tmp_path, server, 3)
    data = tmp_path / "data"
    result = run("prepare", str(folder), "--data-dir", str(data), "-q")
    assert result.returncode == 0, result.stderr
    return folder, data


def rewrite_info(data: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Change the prepared copy's dataset_info.json in place (written back as JSON, where a
    lone surrogate is the escape ``\\ud800``)."""
    (path,) = data.rglob("dataset_info.json")
    info = json.loads(path.read_text("utf-8"))
    change(info)
    path.write_text(json.dumps(info, indent=1), "utf-8")


def set_names(info: dict[str, Any], names: dict[int, str]) -> None:
    label = [f"class{i}" for i in range(10)]
    for index, name in names.items():
        label[index] = name
    info["features"]["features"]["label"] = {"type": "ClassLabel", "names": label}


# -- long class names ------------------------------------------------------------------------


def old_fit(text: str, font: Any, width: int) -> str:
    """The cut as it was (one character at a time, the rest re-measured): the reference."""
    if font.getlength(text) <= width:
        return text
    while text and font.getlength(text + ELLIPSIS) > width:
        text = text[:-1]
    return text + ELLIPSIS


class CountingFont:
    """Pillow's default font, counting what it is asked to measure."""

    def __init__(self) -> None:
        self.font = ImageFont.load_default()
        self.calls = 0
        self.characters = 0

    def getlength(self, text: str) -> float:
        self.calls += 1
        self.characters += len(text)
        return float(self.font.getlength(text))


def test_a_caption_is_cut_as_before_with_few_short_measurements() -> None:
    font = ImageFont.load_default()
    for text in ("", "7", "12: cat", "3: Ankle boot", "12: " + "Wil" * 20, "0: " + "i" * 40):
        for width in (0, 5, 20, 46, 90, 200):
            assert _fit_caption(text, font, width) == old_fit(text, font, width), (text, width)
    counting = CountingFont()
    name = "0: " + "x" * 999_990
    cut = _fit_caption(name, counting, 90)
    assert cut == old_fit(name[:100], counting.font, 90) and cut.endswith(ELLIPSIS)
    # About 2 log2(kept) measurements of a few dozen characters, never the whole name.
    assert counting.calls <= 20 and counting.characters <= 500, vars(counting)


def test_fit_width_keeps_what_fits_whatever_the_length() -> None:
    def measure(text: str) -> float:
        return 2.0 * len(text)

    assert fit_width("abc", measure, 6) == "abc"
    assert fit_width("abcd", measure, 6) == ELLIPSIS  # 2 px per character: "..." alone fits
    assert fit_width("abcdefgh", measure, 10) == "ab" + ELLIPSIS
    assert fit_width("", measure, 0) == ""
    assert fit_width("a" * 10**6, measure, 100) == "a" * 47 + ELLIPSIS
    assert describe("x" * 10**6, limit=3) == "'xxx'... (1,000,000 characters)"


def test_a_million_character_class_name_draws_in_seconds(
    tiny: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, data = tiny
    # Label 0: 999,990 characters; label 3: more than Pillow measures in one string.
    rewrite_info(data, lambda info: set_names(info, {0: "x" * 999_990, 3: "y\n" * 600_000}))
    grid = tmp_path / "grid.png"
    result, seconds = timed("show", str(folder), "--data-dir", str(data), "-o", str(grid))
    assert result.returncode == 0 and result.stderr == "", result.stderr[-2000:]
    assert seconds < SECONDS
    with PILImage.open(grid) as picture:
        pixels = np.asarray(picture)
    # The first caption is cut to its cell: ink from near its left edge to near its right.
    cell_width = pixels.shape[1] // 2  # 3 cells: 2 columns
    box = cell_width - 2 * PAD
    caption = pixels[PAD + box : pixels.shape[0] // 2, :cell_width]
    columns = np.nonzero((caption < 128).any(axis=0))[0]
    assert columns.min() <= 4 and columns.max() >= cell_width - 5

    site = tmp_path / "site"
    result, seconds = timed("site", "-o", str(site), str(folder), "--data-dir", str(data))
    assert result.returncode == 0 and result.stderr == "", result.stderr[-2000:]
    assert seconds < SECONDS
    assert "1 example grid" in result.stdout
    page = (site / "datasets" / "tiny.html").read_text("utf-8")
    assert f"<li>{'x' * 999_990}</li>" in page  # the page lists the whole name


def test_a_caption_pillow_cannot_draw_is_refused_in_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ImageFont, "MAX_STRING_LENGTH", 8)  # Pillow's limit, made small
    image = np.zeros((28, 28), np.uint8)
    caption = "0: " + "z" * 100
    with pytest.raises(ValueError, match="^cannot draw the caption") as raised:
        render_grid([image], [caption])
    message = str(raised.value)
    assert message == (
        f"cannot draw the caption {describe(caption)}: too many characters in string"
    )
    assert "'0: zzz" in message and "(103 characters)" in message and "\n" not in message


# -- lone surrogates --------------------------------------------------------------------------


def hostile(info: dict[str, Any]) -> None:
    """A lone surrogate in every string the site and `catalog show` write out."""
    info["description"] = "A dataset \ud800 described.\n\nA second \udfff paragraph."
    info["citation"] = "@misc{x, title={\ud800}}"
    info["license"] = "CC \udc80"
    info["homepage"] = "https://example.org/\ud800"
    info["tags"] = ["image", "odd\ud800tag"]
    set_names(info, {0: "bad\ud800name", 3: "<b>\udfff</b>"})


def decoded(root: Path) -> dict[str, str]:
    """Every text file of a site, decoded as strict UTF-8 (which fails on a surrogate)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes().decode("utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.suffix in (".html", ".js", ".css")
    }


def test_lone_surrogates_in_the_info_are_replaced_on_every_page(
    tiny: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, data = tiny
    rewrite_info(data, hostile)
    site = tmp_path / "site"
    result = run("site", "-o", str(site), str(folder), "--data-dir", str(data))
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert "1 dataset page, 1 example grid" in result.stdout
    texts = decoded(site)
    page, index = texts["datasets/tiny.html"], texts["index.html"]
    assert "A dataset \ufffd described." in page and "A second \ufffd paragraph." in page
    assert "<li>bad\ufffdname</li>" in page and "<li>&lt;b&gt;\ufffd&lt;/b&gt;</li>" in page
    assert "title={\ufffd}" in page and "CC \ufffd" in page
    assert "odd\ufffdtag" in page and "odd\ufffdtag" in index
    assert "a dataset \ufffd described." in index  # the search text
    assert all(p.name.isascii() for p in site.rglob("*"))  # file names: the spec's name
    assert (site / "images" / "tiny.png").is_file()

    result = run("show", str(folder), "--data-dir", str(data), "-o", str(tmp_path / "g.png"))
    assert result.returncode == 0 and result.stderr == "", result.stderr
    result = run("show", str(folder), "--data-dir", str(data), "-o", str(tmp_path / "g.jpg"))
    assert result.returncode == 0 and result.stderr == "", result.stderr
    for extra in ([], ["--json"]):  # catalog info prints the same strings
        result = run("info", str(folder), "--data-dir", str(data), *extra)
        assert result.returncode == 0 and result.stderr == "", result.stderr
        assert "A dataset \ufffd described." in result.stdout


def test_a_table_of_hostile_class_names_prints_one_row_per_example(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder = tabular_builder(
        tmp_path, server, "rows", np.arange(6).reshape(3, 2), [0, 1, 2], ["a", "b", "c"]
    )
    data = tmp_path / "data"
    assert run("prepare", str(folder), "--data-dir", str(data), "-q").returncode == 0
    names = ["lone\ud800", "two\nlines", "z" * 1_000_000]
    rewrite_info(
        data,
        lambda info: info["features"]["features"].update(
            label={"type": "ClassLabel", "names": names}
        ),
    )
    result, seconds = timed("show", str(folder), "--data-dir", str(data))
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert seconds < SECONDS
    lines = result.stdout.splitlines()
    assert len(lines) == 4  # the header and a row per example: no line break from a name
    assert "lone\ufffd" in lines[1] and "two lines" in lines[2]
    assert re.search(r"\bz{21}\.\.\.", lines[3]) and max(map(len, lines)) < 100
    out = tmp_path / "rows.txt"
    result = run("show", str(folder), "--data-dir", str(data), "-o", str(out))
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert out.read_bytes().decode("utf-8").splitlines() == lines


# -- the Content-Security-Policy --------------------------------------------------------------


class Audit(HTMLParser):
    """What a page holds that a policy without 'unsafe-inline' would block or must allow."""

    def __init__(self) -> None:
        super().__init__()
        self.policies: list[str] = []
        self.first_load = -1  # the index of the first <link>/<script>, in tags seen
        self.tags = 0
        self.policy_at = -1
        self.problems: list[str] = []
        self._in_script = False
        self._in_data = False  # a JSON-LD data block: never run, so no policy applies
        self._data: list[str] = []
        self.data_blocks = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "meta" and (values.get("http-equiv") or "").lower() == (
            "content-security-policy"
        ):
            self.policies.append(values.get("content") or "")
            self.policy_at = self.tags
        if tag in ("link", "script", "style", "img") and self.first_load < 0:
            self.first_load = self.tags
        self.tags += 1
        if tag == "style":
            self.problems.append("a <style> element")
        if tag == "script" and values.get("type") == "application/ld+json":
            self._in_data, self._data = True, []
            self.data_blocks += 1
            if values.get("src"):
                self.problems.append("a data block loaded from elsewhere")
        elif tag == "script":
            self._in_script = True
            if not values.get("src"):
                self.problems.append("an inline <script>")
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"an event handler {name}={value!r}")
            if name == "style":
                self.problems.append(f"a style attribute {value!r}")
            if name in ("href", "src") and (value or "").strip().lower().startswith(
                ("javascript:", "data:")
            ):
                self.problems.append(f"a {name} of {value!r}")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._in_data:  # the whole block is one JSON document
            try:
                json.loads("".join(self._data))
            except ValueError:
                self.problems.append(f"a data block that is not JSON: {self._data[:1]!r}")
        if tag == "script":
            self._in_script = self._in_data = False

    def handle_data(self, data: str) -> None:
        if self._in_data:
            self._data.append(data)
        if self._in_script and data.strip():
            self.problems.append(f"script text {data[:40]!r}")


def test_the_policy_allows_only_the_sites_own_files() -> None:
    directives = dict(d.strip().split(" ", 1) for d in POLICY.split(";"))
    assert directives == {
        "default-src": "'none'",
        "script-src": "'self'",
        "style-src": "'self'",
        "img-src": "'self'",
        "base-uri": "'none'",
        "form-action": "'none'",
    }
    assert "unsafe" not in POLICY and '"' not in POLICY and "&" not in POLICY


def test_every_page_carries_the_policy_and_no_inline_script(
    tiny: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, data = tiny  # prepared: its page shows an example grid
    site = tmp_path / "site"
    result = run("site", "-o", str(site), *list_datasets(), str(folder), "--data-dir", str(data))
    assert result.returncode == 0, result.stderr
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 50
    for page in pages:
        audit = Audit()
        audit.feed(page.read_text("utf-8"))
        assert audit.policies == [POLICY], page
        assert 0 <= audit.policy_at < audit.first_load, page  # before anything it governs
        assert audit.problems == [], page
        assert audit.data_blocks == (page.parent.name == "datasets"), page  # Croissant JSON-LD


def test_an_output_path_in_any_bytes_is_one_line(tmp_path: Path) -> None:
    """A folder name that is no UTF-8 (a surrogate in Python's view of it) is written and
    named with U+FFFD; a folder that cannot be made is one line, no traceback."""
    out = tmp_path / os.fsdecode(b"site-\xff")
    result = run("site", "-o", str(out), "mnist")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert result.stdout.startswith(f"wrote {tmp_path}/site-\ufffd: 1 dataset page")
    assert (out / "datasets" / "mnist.html").is_file()
    (tmp_path / "file").write_text("x")
    result = run("site", "-o", str(tmp_path / "file" / "site"), "mnist")
    assert result.returncode == 1 and result.stderr.startswith("catalog: error: cannot write ")
    assert len(result.stderr.splitlines()) == 1, result.stderr
