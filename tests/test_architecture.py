"""The import graph is the architecture (docs/architecture.md): every module of catalog belongs
to one stage (a folder, or one of the few modules at the top), the stages are ranked along the
data path, and a module imports only from its own stage or from stages ranked below it. Every
import counts: at the top of a module, inside a function, under TYPE_CHECKING."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "catalog"

#: The stages, lowest first. A stage imports only from its own and from earlier rows; stages in
#: one row are independent of each other. `interop` is two stages: TensorFlow's file format is a
#: codec as low as the features, TFDS directories compose the read and prepare stages.
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
