"""The commands a site page shows for a builder folder work, run as shown, from elsewhere.

`catalog site -o DIR path/to/mypets` writes a page telling the reader how to prepare, inspect
and read the dataset. A folder's name is no dataset name (``catalog prepare mypets`` fails
outside the folder's parent), so the page gives the folder's absolute path, quoted for the
shell when it needs to be; registered datasets keep their names.
"""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

from catalog.storage.paths import DATA_DIR_ENV
from catalog.testing.http_server import LoopbackServer

from conftest import idx_builder


def run(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catalog", *args],
        capture_output=True, text=True, timeout=300, cwd=cwd, env=env,
    )  # fmt: skip


def shell(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`command` as a page shows it, run by a POSIX shell; `catalog` is this Python's."""
    assert command.startswith("catalog "), command
    line = f"{sys.executable} -m {command}"
    return subprocess.run(
        ["/bin/sh", "-c", line], capture_output=True, text=True, timeout=300, cwd=cwd, env=env
    )


def usage(page: Path) -> tuple[list[str], str]:
    """The shell commands and the Python snippet of a page's "Use it" section (as text)."""
    blocks = re.findall(r'<pre class="usage"><code>(.*?)</code></pre>', page.read_text(), re.S)
    assert len(blocks) == 2, blocks
    return html.unescape(blocks[0]).splitlines(), html.unescape(blocks[1])


def environment(data: Path) -> dict[str, str]:
    return {**os.environ, DATA_DIR_ENV: str(data)}


def test_a_folder_page_shows_commands_that_work_from_anywhere(
    tmp_path: Path, server: LoopbackServer
) -> None:
    root = tmp_path / "my datasets"  # a space: the path must be quoted for the shell
    root.mkdir()
    folder = idx_builder(root, server, 3, name="mypets")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = environment(tmp_path / "data")
    site = tmp_path / "site"
    # Given as a path relative to the current directory, as a user types it.
    result = run("site", "-o", str(site), "my datasets/mypets", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    page = site / "datasets" / "mypets.html"
    commands, snippet = usage(page)
    quoted = f"'{folder}'"
    assert commands == [f"catalog prepare {quoted}", f"catalog info {quoted}"]
    assert f'catalog.data_source("{folder}", split="train")' in snippet
    text = html.unescape(page.read_text())
    assert f'Run "catalog prepare {quoted}", then "catalog show {quoted}" draws' in text

    # What the page says works, as it says it, from another directory.
    for command in commands:
        result = shell(command, elsewhere, env)
        assert result.returncode == 0, (command, result.stderr)
    code = snippet.split("\nds[0]")[0] + "\nprint(len(ds))\n"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=elsewhere, env=env
    )
    assert result.returncode == 0 and result.stdout == "3\n", result.stderr

    # Prepared now: the grid's caption gives the catalog show command, which works too.
    result = run("site", "-o", str(site), str(folder), cwd=elsewhere, env=env)
    assert result.returncode == 0, result.stderr
    caption = re.search(r"<figcaption>.*?<code>(.*?)</code>", page.read_text(), re.S)
    assert caption is not None
    command = html.unescape(caption.group(1))
    assert command == f"catalog show {quoted} --split train -n 3"
    result = shell(f"{command} -o grid.png", elsewhere, env)
    assert result.returncode == 0, result.stderr
    assert (elsewhere / "grid.png").is_file()


def test_a_config_of_a_folder_is_named_by_the_folder_path_and_the_config(
    tmp_path: Path, server: LoopbackServer
) -> None:
    folder = idx_builder(tmp_path, server, 3, name="mypets")
    spec = folder / "builder.yaml"
    spec.write_text(
        spec.read_text() + "configs:\n  small: {description: S.}\n  large: {description: L.}\n"
    )
    env = environment(tmp_path / "data")
    site = tmp_path / "site"
    result = run("site", "-o", str(site), str(folder), cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    commands, snippet = usage(site / "datasets" / "mypets-large.html")
    # No character of this path needs quoting: it is shown as it is.
    assert commands == [f"catalog prepare {folder}/large", f"catalog info {folder}/large"]
    assert f'catalog.data_source("{folder}/large", split="train")' in snippet
    result = shell(commands[0], Path("/"), env)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "data" / "mypets" / "large").is_dir()


def test_a_registered_dataset_keeps_its_name(tmp_path: Path) -> None:
    env = environment(tmp_path / "data")
    site = tmp_path / "site"
    result = run("site", "-o", str(site), "cmaterdb/telugu", "mnist", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert usage(site / "datasets" / "mnist.html")[0] == [
        "catalog prepare mnist", "catalog info mnist",
    ]  # fmt: skip
    commands, snippet = usage(site / "datasets" / "cmaterdb-telugu.html")
    assert commands == ["catalog prepare cmaterdb/telugu", "catalog info cmaterdb/telugu"]
    assert 'catalog.data_source("cmaterdb/telugu", split="train")' in snippet
