"""Text a dataset carries (a Croissant file's description and citation, a table's values and
column names, a source line quoted in an error) reaches the terminal with its control
characters only as visible escapes, in every command (`catalog._util.terminal`): nothing a
terminal would obey (a window title, a cleared screen, a carriage return, a C1 CSI, a bidi
override) is printed raw, on stdout or stderr."""

from __future__ import annotations

import hashlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from catalog._util.terminal import escape

from conftest import catalog_cli

#: Sets the window title, clears the screen, returns the carriage, a C1 CSI, a bidi override.
HOSTILE = "\x1b]0;title\x07\x1b[2J\rX\x9b31m\u202eY\x00"
#: Anything a terminal obeys: C0 but newline and tab, DEL, C1, bidi controls, separators.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _csv_field(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _croissant(folder: Path) -> Path:
    """A Croissant file whose description, citation and data carry `HOSTILE`."""
    folder.mkdir(parents=True)
    rows = ["name,age", f"{_csv_field('ada' + HOSTILE)},36", "alan,41"]
    data = ("\n".join(rows) + "\n").encode()
    (folder / "people.csv").write_bytes(data)

    def field(name: str, kind: str) -> dict[str, Any]:
        source = {"fileObject": {"@id": "table"}, "extract": {"column": name}}
        return {"@type": "cr:Field", "@id": f"people/{name}", "name": name, "dataType": kind,
                "description": f"the {name}{HOSTILE}", "source": source}  # fmt: skip

    doc = {
        "@type": "sc:Dataset", "name": "people", "conformsTo": "http://mlcommons.org/croissant/1.0",
        "description": f"People{HOSTILE} and their ages.",
        "citeAs": f"@misc{{p, title={{{HOSTILE}}}}}",
        "license": f"https://example.com/{HOSTILE}",
        "distribution": [{"@type": "cr:FileObject", "@id": "table", "name": "table",
                          "contentUrl": "people.csv", "encodingFormat": "text/csv",
                          "sha256": hashlib.sha256(data).hexdigest()}],
        "recordSet": [{"@type": "cr:RecordSet", "@id": "people", "name": "people",
                       "description": HOSTILE,
                       "field": [field("name", "sc:Text"), field("age", "sc:Integer")]}],
    }  # fmt: skip
    path = folder / "metadata.json"
    path.write_text(json.dumps(doc))
    return path


def _no_raw_controls(run: subprocess.CompletedProcess[str], code: int = 0) -> str:
    assert run.returncode == code, run.stderr
    for name, text in (("stdout", run.stdout), ("stderr", run.stderr)):
        found = RAW.search(text)
        assert found is None, (name, found, text)
    return run.stdout + run.stderr


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("hostile")
    path = _croissant(root / "people")
    data = root / "data"
    _no_raw_controls(catalog_cli("prepare", str(path), "--data-dir", str(data)))
    return path, data


def test_info_shows_a_croissant_description_escaped(
    prepared: tuple[Path, Path],
) -> None:
    _, data = prepared
    out = _no_raw_controls(catalog_cli("info", "people", "--data-dir", str(data)))
    # (the description is wrapped as text: its carriage return is whitespace there)
    assert "People\\u001b]0;title\\u0007\\u001b[2J X\\u009b31m\\u202eY\\u0000 and" in out, out
    assert "license:       https://example.com/" + escape(HOSTILE) + "\n" in out, out
    assert "\\u001b]0;title\\u0007" in out and "\\u009b31m\\u202eY" in out, out


@pytest.mark.parametrize(
    "args",
    [
        ("list", "--prepared"),
        ("show", "people"),
        ("verify", "people"),
        ("export", "people", "--format", "parquet", "-o", "{root}/parquet"),
        ("site", "people", "-o", "{root}/site"),
        ("info", "people", "--json"),
        ("verify", "people", "--json"),
    ],
    ids=lambda a: "-".join(a[:3]),
)
def test_every_command_escapes_what_the_dataset_carries(
    prepared: tuple[Path, Path], args: tuple[str, ...]
) -> None:
    _, data = prepared
    run = catalog_cli(*(a.format(root=data.parent) for a in args), "--data-dir", str(data))
    out = _no_raw_controls(run)
    if args[0] == "show":  # the table of values: the value's controls escaped or blanked
        assert "ada" in out and "\\u202eY" in out, out
    if "--json" in args:
        json.loads(run.stdout)  # one document


def test_the_croissant_command_prints_the_same_json_escaped(prepared: tuple[Path, Path]) -> None:
    """JSON's own escapes: the document printed is the same document, without raw controls."""
    _, data = prepared
    run = catalog_cli("croissant", "people", "--data-dir", str(data))
    _no_raw_controls(run)
    doc = json.loads(run.stdout)
    assert doc["description"] == f"People{HOSTILE} and their ages.", doc["description"]


def test_an_error_quoting_a_file_line_escapes_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(f"name,age\n{_csv_field('x' + HOSTILE)},1\n{_csv_field(HOSTILE)}z,2,3\n")
    run = catalog_cli("prepare", str(bad), "--data-dir", str(tmp_path / "d"))
    _no_raw_controls(run, 3)
    assert run.stderr.startswith("catalog: error: ") and "Traceback" not in run.stderr


def test_rm_escapes_what_it_names(tmp_path: Path) -> None:
    path = _croissant(tmp_path / "people")
    data = tmp_path / "data"
    _no_raw_controls(catalog_cli("prepare", str(path), "--data-dir", str(data)))
    _no_raw_controls(catalog_cli("rm", "people", "--data-dir", str(data)))


def test_escape_keeps_newlines_and_tabs_and_json_meaning() -> None:
    text = "a\tb\nc" + HOSTILE + "\ud800"
    escaped = escape(text)
    assert RAW.search(escaped) is None and "\ud800" not in escaped
    assert escaped.startswith("a\tb\nc")
    assert json.loads(escape(json.dumps(text, ensure_ascii=False))) == text


def test_progress_bars_draw_raw_with_their_text_escaped(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bar draws with its own carriage returns on the stream under the escaping one; the
    file name it shows, and a note above it, are escaped."""
    from catalog._util.terminal import EscapingStream
    from catalog.download.progress import Progress

    terminal = io.StringIO()
    monkeypatch.setattr(sys, "stderr", EscapingStream(terminal))
    progress = Progress("bars")
    bar = progress.transfer(f"f{HOSTILE}.tar", 100, "https://example.org")
    bar.update(50)
    progress.note(f"retrying f{HOSTILE}.tar")
    bar.update(50)
    bar.close()
    drawn = terminal.getvalue()
    assert "\r" in drawn  # tqdm's own control, passed as it is
    assert RAW.search(drawn.replace("\r", "").replace("\x1b[A", "")) is None, repr(drawn)
    assert escape(f"f{HOSTILE}.tar") in drawn and f"retrying {escape('f' + HOSTILE)}" in drawn
