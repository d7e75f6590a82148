"""MkDocs hooks: the pages generated from the code when the site is built (see mkdocs.yml).

- ``reference/cli.md``: every `catalog` command's ``--help``, from the argparse parsers
  themselves (`catalog.cli.commands.COMMANDS`), so the reference is what the command says.
- ``reference/api.md``: an entry per public name of `catalog` (its ``__all__``), grouped by the
  module that defines it, each rendered by mkdocstrings from the docstrings.
- ``catalog/``: the dataset catalog, written by `catalog.present.site.build_site` (what
  ``catalog site`` writes) at build time, linked from the navigation, and every dataset page
  added to the site's search index.

The catalog pages show example grids of the datasets prepared in ``$CATALOG_DOCS_DATA_DIR``
when it is set; otherwise they are built from an empty data dir (no grids), so the site does
not depend on what the building machine has prepared.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import catalog
from catalog.cli import _parser
from catalog.cli.commands import COMMANDS

#: Where the dataset catalog goes inside the site.
CATALOG_DIR = "catalog"
#: The width `--help` is formatted to on the page.
HELP_WIDTH = "100"

#: The API page's sections: the module that defines a name -> its section's title.
API_SECTIONS = {
    "catalog.api.one_call": "Open a dataset",
    "catalog.api.builder": "Open a dataset",
    "catalog.api.files": "Open a dataset",
    "catalog.api.resolve": "Open a dataset",
    "catalog.api.manage": "Manage prepared datasets",
    "catalog.api.exchange": "Manage prepared datasets",
    "catalog.present.show_dataset": "Look at a dataset",
    "catalog.present.site.build": "Look at a dataset",
    "catalog.spec.registry": "Open a dataset",
    "catalog.interop.tfds.directory": "Open a dataset",
    "catalog.read.data_source": "Read a split",
    "catalog.info.splits": "Read a split",
    "catalog.loader": "Pipelines",
    "catalog.info.dataset_info": "Dataset information",
    "catalog.features": "Features",
    "catalog.errors": "Errors",
    "catalog._version": "Version",
}

#: Public functions whose name is also a module of their package (`catalog.loader.mix` is both):
#: static analysis takes the module, so the entry names the function by its full path.
SHADOWED = {
    "mix": "catalog.loader.mix.mix",
    "pipeline": "catalog.loader.pipeline.pipeline",
}

_work: list[Path] = []


def cli_reference() -> str:
    """The CLI reference page: ``catalog --help``, then each command's ``--help``."""
    os.environ["COLUMNS"] = HELP_WIDTH  # argparse wraps to $COLUMNS
    parts = [
        "# CLI reference\n",
        "Generated from the argparse parsers of `catalog` when this site was built: each "
        "section is what `catalog COMMAND --help` prints. The [command line guide](../cli.md) "
        "explains the commands with examples.\n",
        "## catalog\n",
        "```text\n" + _parser([]).format_help().rstrip() + "\n```\n",
    ]
    for command in COMMANDS:
        parser = _parser([command.name])
        sub = next(
            a for a in parser._actions if isinstance(a, argparse._SubParsersAction)
        )._name_parser_map[command.name]
        aliases = f" (alias: {', '.join(command.aliases)})" if command.aliases else ""
        parts.append(f"## catalog {command.name}\n")
        parts.append(f"{command.help[0].upper()}{command.help[1:]}{aliases}.\n")
        parts.append("```text\n" + sub.format_help().rstrip() + "\n```\n")
    return "\n".join(parts)


def api_reference() -> str:
    """The API reference page: an entry per name of ``catalog.__all__``, by section."""
    sections: dict[str, list[str]] = defaultdict(list)
    for name in catalog.__all__:
        if name == "__version__":
            module = "catalog._version"
        else:
            module = catalog._LAZY.get(name) or getattr(catalog, name).__module__
        sections[API_SECTIONS[module]].append(name)
    parts = [
        "# API reference\n",
        "Every name `import catalog` gives, generated from its docstring when this site was "
        "built. The [guides](../guides/reading.md) show them at work.\n",
    ]
    for title in dict.fromkeys(API_SECTIONS.values()):
        parts.append(f"## {title}\n")
        for name in sections[title]:
            if name == "__version__":
                parts.append(
                    '<a id="catalog.__version__"></a>\n\n### `catalog.__version__`\n\n'
                    f"The version of catalog, a string: `{catalog.__version__}` in this build "
                    "(`catalog --version` prints it).\n"
                )
                continue
            if name in SHADOWED:  # a submodule of the same name: point at the function
                parts.append(
                    f"[](){{ #catalog.{name} }}\n\n::: {SHADOWED[name]}\n"
                    f"    options:\n      heading: catalog.{name}\n"
                )
                continue
            parts.append(f"::: catalog.{name}\n")
    return "\n".join(parts)


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    from catalog.present.site import build_site

    files.append(File.generated(config, "reference/cli.md", content=cli_reference()))
    files.append(File.generated(config, "reference/api.md", content=api_reference()))
    work = Path(tempfile.mkdtemp(prefix="catalog-docs-"))
    _work.append(work)
    data_dir = os.environ.get("CATALOG_DOCS_DATA_DIR") or str(work / "empty-data-dir")
    build_site(work / CATALOG_DIR, data_dir=data_dir, docs="../index.html")  # back to the docs
    for path in sorted((work / CATALOG_DIR).rglob("*")):
        if path.is_file():
            uri = path.relative_to(work).as_posix()
            files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


def _search_entries() -> list[dict[str, str]]:
    """A search entry per dataset page of the catalog: its name, tags and description."""
    from catalog.present.site.entries import entries

    docs = []
    for entry in entries((), data_dir=str(_work[-1] / "empty-data-dir")):
        info = entry.info
        docs.append(
            {
                "location": f"{CATALOG_DIR}/{entry.page}",
                "title": f"{entry.full_name} (dataset)",
                "text": f"{' '.join(info.tags)} {info.description}".strip(),
            }
        )
    return docs


def on_post_build(config: Any) -> None:
    index = Path(config["site_dir"]) / "search" / "search_index.json"
    data = json.loads(index.read_text("utf-8"))
    data["docs"].extend(_search_entries())
    index.write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    for work in _work:
        shutil.rmtree(work, ignore_errors=True)
    _work.clear()


def on_startup(command: str, dirty: bool) -> None:
    importlib.import_module("catalog.present.site")  # fail early without the package
