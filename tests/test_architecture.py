"""The import graph is the architecture (docs/architecture.md): every module of catalog belongs
to one stage (a folder, or one of the few modules at the top), the stages are ranked along the
data path, and a module imports only from its own stage or from stages ranked below it. Every
import counts: at the top of a module, inside a function, under TYPE_CHECKING."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "catalog"

#: The stages, lowest first. A stage imports only from its own and from earlier rows; stages in
#: one row are independent of each other. `interop` is four stages: TensorFlow's file format is a
#: codec as low as the features; TFDS directories compose the read and prepare stages; the
#: Parquet export reads prepared data; Croissant files describe that export and become specs.
LAYERS: list[set[str]] = [
    {"_version", "errors", "_util", "interop"},  # interop/__init__.py: only a docstring
    {"features"},
    {"info"},
    {"storage"},
    {"interop.tfrecord"},
    {"download"},
    {"formats"},
    {"spec"},
    {"prepare"},
    {"read"},
    {"loader", "transforms", "torch", "jax"},
    {"interop.tfds"},
    {"interop.parquet"},  # reuses TFDS's image-path helper
    {"interop.croissant"},  # describes the Parquet export
    {"api"},
    {"present", "testing"},
    {"cli"},
    {"__init__", "__main__"},
]
RANK = {stage: rank for rank, row in enumerate(LAYERS) for stage in row}

#: At most this many modules live directly under catalog/ (everything else is in a stage).
TOP_LEVEL = {"__init__", "__main__", "_version", "errors", "torch", "jax"}
MAX_LINES = 500


def stage_of(module: str) -> str:
    """`catalog.read.data_source` -> ``read``; ``catalog.interop.tfds.x`` -> ``interop.tfds``."""
    parts = module.split(".")[1:]
    if not parts:
        return "__init__"
    if parts[0] == "interop" and len(parts) > 1:
        return f"interop.{parts[1]}"
    return parts[0]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """(line, module) of every catalog module that `source` (module `module`) imports,
    wherever the import stands."""
    found = []
    package = module if is_package else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [
                (node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "catalog"
            ]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            if base.split(".")[0] != "catalog":
                continue
            for alias in node.names:  # `from catalog import paths` imports catalog.paths
                name = f"{base}.{alias.name}"
                found.append((node.lineno, name if _is_module(name) else base))
    return found


def _is_module(name: str) -> bool:
    path = PACKAGE.parent / Path(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports_of(path: Path) -> list[tuple[int, str]]:
    return imported(path.read_text("utf-8"), module_name(path), path.name == "__init__.py")


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_module_has_a_stage() -> None:
    stages = {stage_of(module_name(path)) for path in MODULES}
    assert stages <= set(RANK), f"modules outside every stage: {stages - set(RANK)}"
    top = {path.stem for path in PACKAGE.glob("*.py")}
    assert top <= TOP_LEVEL, f"new modules directly under catalog/: {top - TOP_LEVEL}"


def test_imports_run_down_the_data_path_never_up() -> None:
    wrong = []
    for path in MODULES:
        here = stage_of(module_name(path))
        for line, name in imports_of(path):
            there = stage_of(name)
            if there != here and RANK[there] >= RANK[here]:
                wrong.append(
                    f"{path.relative_to(PACKAGE.parent)}:{line}: {here} imports {name} ({there})"
                )
    assert not wrong, "imports against the data path:\n" + "\n".join(wrong)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_is_longer_than_the_limit(path: Path) -> None:
    lines = len(path.read_text("utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path} has {lines} lines; split it along its ideas"


def test_the_checker_sees_every_kind_of_import() -> None:
    """Not vacuous: function-local, TYPE_CHECKING and relative imports are all seen."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from catalog.info import dataset_info\n"
        "def f():\n    from catalog.api.builder import builder\n"
        "from . import array_record\n"
        "from catalog import errors\n"
    )
    names = [name for _, name in imported(source, "catalog.read.probe")]
    assert sorted(names) == [
        "catalog.api.builder",
        "catalog.errors",
        "catalog.info.dataset_info",
        "catalog.read.array_record",
    ]
    assert RANK[stage_of("catalog.api.builder")] > RANK[stage_of("catalog.read.probe")]


# ---- formats/ by family (docs/architecture.md, "formats/ by family") --------------------------

#: formats/'s families, lowest first: a family imports only from its own and from earlier rows
#: (`base` is the source-format protocol, `resume` the resumed stream tables and Croissant
#: share; the package itself, `catalog.formats`, is the registry of every format).
FORMAT_FAMILIES: list[set[str]] = [
    {"base", "resume"},
    {"tables", "arrays", "shards", "text", "tfds"},
    {"audio"},
    {"images"},
    {"annotations"},
    {"croissant"},
    {"registry"},
]
FAMILY_RANK = {family: rank for rank, row in enumerate(FORMAT_FAMILIES) for family in row}
FORMATS_DIR = PACKAGE / "formats"


def family_of(module: str) -> str | None:
    """``catalog.formats.tables.delimited`` -> ``tables``; None outside formats/."""
    parts = module.split(".")
    if parts[:2] != ["catalog", "formats"]:
        return None
    return parts[2] if len(parts) > 2 else "registry"


def test_formats_is_a_few_families() -> None:
    entries = {p.stem for p in FORMATS_DIR.iterdir() if p.name != "__pycache__"}
    assert len(entries) <= 12, f"formats/ has {len(entries)} top-level entries: {sorted(entries)}"
    families = {
        p.stem for p in FORMATS_DIR.iterdir() if p.name not in ("__pycache__", "__init__.py")
    }
    assert families <= set(FAMILY_RANK), (
        f"formats/ entries of no family: {families - set(FAMILY_RANK)}"
    )
    assert all(
        (FORMATS_DIR / f / "__init__.py").is_file() for f in families if (FORMATS_DIR / f).is_dir()
    )


def test_format_families_import_down_never_up_nor_in_circles() -> None:
    wrong = []
    for path in MODULES:
        here = family_of(module_name(path))
        if here is None:
            continue
        for line, name in imports_of(path):
            there = family_of(name)
            if there is not None and there != here and FAMILY_RANK[there] >= FAMILY_RANK[here]:
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {here} imports {there}")
    assert not wrong, "imports between formats/ families against their order:\n" + "\n".join(wrong)


def _import_graph() -> dict[str, set[str]]:
    return {module_name(p): {n for _, n in imports_of(p)} for p in MODULES}


def test_no_circles_between_modules() -> None:
    """A module never imports, through any chain, a module that imports it (function-local
    and TYPE_CHECKING imports count): two modules that need each other are one idea split
    wrongly, or share a piece that belongs lower down."""
    graph = _import_graph()
    state: dict[str, int] = {}
    circles: list[str] = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if state.get(nxt) == 1:
                circles.append(" -> ".join([*trail[trail.index(nxt) :], nxt]))
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert not circles, "import circles:\n" + "\n".join(circles)


def test_formats_import_catalog_at_the_top() -> None:
    """Function-local imports in formats/ are for heavy optional libraries only (pyarrow, h5py,
    scipy, Pillow...), never for catalog's own modules (once used to hide a circle)."""
    local = []
    for path in sorted(FORMATS_DIR.rglob("*.py")):
        for fn in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                local += [
                    f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
                    for node in ast.walk(fn)
                    if isinstance(node, ast.ImportFrom)
                    and (node.module or "").startswith("catalog")
                ]
    assert not local, "function-local imports of catalog in formats/:\n" + "\n".join(local)


# ---- "Where a new piece goes" (docs/architecture.md), checked where a test can ---------------


def test_every_source_format_is_registered() -> None:
    """A new source-file format: a module in a formats/ family, registered in FORMATS."""
    from catalog.formats import FORMATS
    from catalog.formats.base import SourceFormat

    declared = set()
    for path in sorted(FORMATS_DIR.rglob("*.py")):
        module = importlib.import_module(module_name(path))
        declared |= {id(v) for v in vars(module).values() if isinstance(v, SourceFormat)}
    assert declared == {id(f) for f in FORMATS.values()}, "a SourceFormat not in FORMATS"


def test_every_feature_type_is_registered() -> None:
    """A new feature type: a module in features/, registered in features/registry.py."""
    from catalog.features.base import Feature
    from catalog.features.registry import FEATURE_TYPES

    found = set()
    for path in sorted((PACKAGE / "features").glob("*.py")):
        module = importlib.import_module(module_name(path))
        found |= {
            v for v in vars(module).values()
            if isinstance(v, type) and issubclass(v, Feature) and v is not Feature
            and v.__module__ == module.__name__
        }  # fmt: skip
    assert found <= set(FEATURE_TYPES.values()), (
        f"not registered: {found - set(FEATURE_TYPES.values())}"
    )


def test_every_command_module_is_listed() -> None:
    """A new CLI command: cli/<command>.py declaring its parser (``ARGUMENTS``) beside its
    ``run``, and one Command line in commands.py; no command builds a parser by hand."""
    from catalog.cli.commands import COMMANDS
    from catalog.cli.common import Arguments

    listed = {c.module for c in COMMANDS}
    declared = {}
    for path in (PACKAGE / "cli").glob("*.py"):
        module = importlib.import_module(module_name(path))
        if isinstance(getattr(module, "ARGUMENTS", None), Arguments):
            declared[module.__name__] = module
        assert "add_parser(" not in path.read_text() or path.name == "common.py", path
    assert set(declared) == listed, f"command modules not listed: {set(declared) - listed}"
    assert all(callable(getattr(m, "run", None)) for m in declared.values())


def test_url_schemes_are_told_apart_in_one_table() -> None:
    """A new storage backend: one module in storage/ and one `Scheme` in storage/schemes.py;
    nothing else branches on a URL scheme."""
    pattern = re.compile(r"""protocol\s*(==|!=|in)\b|["'](s3|gs|gcs)["']""")
    found = [
        f"{p.relative_to(PACKAGE.parent)}:{n}"
        for p in MODULES
        if p.name != "schemes.py"
        for n, line in enumerate(p.read_text("utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert not found, "branches on a URL scheme outside storage/schemes.py:\n" + "\n".join(found)
