"""What a newcomer met on second contact with the CLI, each kept fixed here: the top-level help's
example, a tag no dataset has, a misspelled split, counts in words, and what an interrupted
prepare left behind (`verify`, `rm`, `data_source`). Every check runs the CLI as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import catalog
from catalog.errors import NotPreparedError
from catalog.testing.http_server import LoopbackServer

from conftest import catalog_cli, idx_builder, kill_prepare_after

SHARD = 60_000  # bytes: 300 28x28 examples make 5 shards


def cli(*args: str, data_dir: Path | None = None) -> subprocess.CompletedProcess[str]:
    return catalog_cli(*args, env={"CATALOG_DATA_DIR": str(data_dir)} if data_dir else None)


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("catalog: error: "), result.stderr
    return lines[0]


def test_top_level_help_ends_with_examples() -> None:
    result = cli("--help")
    assert result.returncode == 0
    examples = result.stdout.split("examples:\n", 1)[1]
    assert "catalog prepare fashion_mnist" in examples and "catalog COMMAND --help" in examples
    assert result.stdout.index("examples:") < result.stdout.index("environment:")


def test_a_tag_no_dataset_has_is_an_error_listing_the_tags() -> None:
    line = one_error_line(cli("list", "--tag", "nonsense"))
    assert "no dataset has the tag 'nonsense'; the tags are " in line
    assert "image-classification" in line and "audio" in line
    found = cli("list", "--tag", "image", "no-such-word-anywhere")
    assert (found.returncode, found.stdout) == (0, "")
    assert found.stderr == "no dataset matches tag 'image' and 'no-such-word-anywhere'\n"


def test_a_misspelled_split_gets_a_suggestion(tmp_path: Path, server: LoopbackServer) -> None:
    folder = idx_builder(tmp_path, server, 20)
    line = one_error_line(cli("show", str(folder), "--split", "trian", "-o", "x.png"))
    assert "no split 'trian'" in line and "did you mean 'train'?" in line
    assert not (tmp_path / "data").exists()  # refused before anything was downloaded


def test_counts_read_as_words(tmp_path: Path, server: LoopbackServer) -> None:
    folder = idx_builder(tmp_path, server, 20)
    result = cli("prepare", str(folder), data_dir=tmp_path / "data")
    assert result.returncode == 0, result.stderr
    assert "plan: 1 shard in 1 split, about" in result.stderr


@pytest.fixture
def interrupted(tmp_path: Path, server: LoopbackServer) -> tuple[Path, Path]:
    """A builder folder whose first prepare was killed after 2 of its 5 shards."""
    folder = idx_builder(tmp_path, server, 300)
    data = tmp_path / "data"
    kill_prepare_after(folder, data, 2, SHARD)
    assert len(list(data.glob("tiny/1.0.0.incomplete-*/*.array_record-*"))) == 2
    return folder, data


def test_verify_and_data_source_name_what_an_interrupted_prepare_left(
    interrupted: tuple[Path, Path],
) -> None:
    folder, data = interrupted
    line = one_error_line(cli("verify", str(folder), data_dir=data))
    assert "is not prepared in" in line
    assert "an interrupted prepare left 2 finished shards" in line
    assert f"'catalog prepare {folder}' resumes it" in line
    assert f"'catalog rm {folder}' removes it" in line
    with pytest.raises(NotPreparedError, match="interrupted prepare left 2 finished shards"):
        catalog.data_source(folder, data_dir=data, download=False)


def test_rm_names_the_work_dir_it_removes(interrupted: tuple[Path, Path]) -> None:
    folder, data = interrupted
    dry = cli("rm", str(folder), "--dry-run", data_dir=data)
    assert dry.returncode == 0 and "would remove 1 work dir of an interrupted prepare" in dry.stdout
    assert list(data.glob("tiny/1.0.0.incomplete-*"))
    done = cli("rm", str(folder), data_dir=data)
    assert done.returncode == 0 and "removed 1 work dir of an interrupted prepare (" in done.stdout
    assert not list(data.glob("tiny/1.0.0.incomplete-*"))


#: Runs the CLI in this interpreter and prints which heavy modules it imported (shutil: what
#: argparse's own help formatter imports, with bz2 and lzma, to find the terminal's width).
IMPORTED = """
import sys
from catalog.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = ("numpy", "array_record", "requests", "PIL", "yaml", "catalog.api", "catalog.spec",
         "shutil")
print(" ".join(m for m in heavy if m in sys.modules), file=sys.stderr)
"""


@pytest.mark.parametrize(
    ("args", "allowed"),
    [
        (["--version"], ""),
        (["--help"], ""),
        (["no-such-command"], ""),  # the usage error needs only the table of commands
        # the registry's index, once written (catalog.spec.index): no spec is loaded
        (["list", "--tag", "audio"], "catalog.spec"),
    ],
)
def test_start_up_imports_only_what_the_command_needs(
    args: list[str], allowed: str, tmp_path: Path
) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    for _ in range(2):  # the first `list` writes the index
        result = subprocess.run(
            [sys.executable, "-c", IMPORTED, *args], capture_output=True, text=True, timeout=60,
            env=env,
        )  # fmt: skip
    assert result.stderr.splitlines()[-1] == allowed, result.stderr


def test_commands_not_built_up_front_still_parse_and_show_in_help() -> None:
    """`catalog --help` names every command without building its parser (catalog.cli): one
    parsed later is built then, aliases included; the help lists each with its line."""
    import importlib

    from catalog.cli import _parser
    from catalog.cli.commands import COMMANDS

    parser = _parser(["--help"])
    text = parser.format_help()
    for command in COMMANDS:
        assert command.help.split()[0] in text and f"\n    {command.name}" in text
    assert "rm (clean)" in text
    args = parser.parse_args(["list", "--json"])
    assert args.json is True and args.run is importlib.import_module("catalog.cli.listing").run
    args = _parser(["--help"]).parse_args(["clean", "mnist"])
    assert args.run is importlib.import_module("catalog.cli.rm").run
    with pytest.raises(SystemExit):
        _parser(["--help"]).parse_args(["frob"])
