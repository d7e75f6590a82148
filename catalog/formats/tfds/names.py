"""Which module of tensorflow-datasets registers each TFDS dataset name.

TFDS finds a name by importing every one of its ~20 category packages (``image_classification``,
``text``, ``robotics``, ...) before it looks in its ``datasets/`` folder: a third of a second
and hundreds of modules that ``tfds:mnist`` does not need. `builder_modules` asks TFDS once
(`registered.list_imported_builders`, then each name's class) and keeps ``{name: module}`` in
the user's cache dir (`catalog._util.cache_dir`), keyed by the version of tensorflow-datasets;
`builder_class` then imports only the module that defines the class (and the package it sits
in), whose import registers it with TFDS as usual.

The file is only a cache, never a table of our own: a name it lacks (a builder that did not
import when it was made, say for a library installed since) or whose module no longer
registers it takes TFDS's own full lookup, which also gives TFDS's error; a missing, damaged
or stale file is made again; one that cannot be written is skipped.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import json
import logging
import os
from pathlib import Path
from typing import Any

from catalog._util.cache_dir import cache_dir
from catalog.errors import MissingDependencyError

__all__ = ["builder_modules", "find_class", "index_file", "missing_library"]

#: The layout of the file; another one is made again.
_FORMAT = 1


def index_file() -> Path | None:
    """Where the names -> modules file is kept (None: no home directory to keep it in)."""
    try:
        return cache_dir() / "tfds-modules.json"
    except RuntimeError:
        return None


def _key() -> dict[str, Any]:
    return {
        "format": _FORMAT,
        "tensorflow_datasets": importlib.metadata.version("tensorflow-datasets"),
    }


def builder_modules(registered: Any, *, refresh: bool = False) -> dict[str, str]:
    """``{name: module}`` of every name TFDS registers (`registered`: TFDS's
    ``core.registered``, imported), from the cache file when it is current."""
    key = _key()
    path = index_file()
    if path is not None and not refresh:
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
            data = json.loads(path.read_text("utf-8"))
            if data["key"] == key and isinstance(data["modules"], dict):
                return {str(n): str(m) for n, m in data["modules"].items()}
    modules = _ask(registered)
    if path is not None:
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps({"key": key, "modules": modules}), "utf-8")
            tmp.replace(path)
        except OSError:  # only a cache: the answer stands without it
            with contextlib.suppress(OSError):
                tmp.unlink()
    return modules


def _ask(registered: Any) -> dict[str, str]:
    """TFDS's own answer: every registered name and the module its class is defined in ("" for
    a name whose class does not import, for a library that is not installed: TFDS's full
    lookup then says what is missing)."""
    absl = logging.getLogger("absl")  # deprecation warnings by the hundred: not news here
    level = absl.level
    absl.setLevel(logging.ERROR)
    modules = {}
    try:
        for name in registered.list_imported_builders():
            try:
                modules[name] = registered.imported_builder_cls(name).__module__
            except Exception:  # its own error comes with TFDS's full lookup
                modules[name] = ""
    finally:
        absl.setLevel(level)
    return dict(sorted(modules.items()))


def find_class(registered: Any, name: str) -> Any:
    """TFDS's builder class of `name`, importing only the module that registers it when the
    cache knows it; TFDS's own lookup (all its packages) otherwise, raising what TFDS raises
    for a name it does not have. MissingDependencyError naming the library when the
    builder's module imports one that is not installed."""
    module = builder_modules(registered).get(name)
    try:
        if module:
            importlib.import_module(module)  # TFDS's registry now has it
        return registered.imported_builder_cls(name)  # else TFDS's full lookup
    except ModuleNotFoundError as error:
        raise missing_library(f"tfds:{name}", error) from None


#: Import names whose pip distribution is named otherwise.
_PIP_NAMES = {
    "PIL": "Pillow", "bs4": "beautifulsoup4", "cv2": "opencv-python", "skimage": "scikit-image",
    "sklearn": "scikit-learn", "yaml": "PyYAML",
}  # fmt: skip


def missing_library(where: str, error: ModuleNotFoundError) -> MissingDependencyError:
    """The one-line error of TFDS's code importing a library that is not installed."""
    top = (error.name or str(error)).split(".")[0]
    if top == "tensorflow":
        return MissingDependencyError(
            f"{where}: TFDS's builder imports TensorFlow itself; catalog runs TFDS's builders "
            "without TensorFlow, so it cannot describe or prepare this dataset yet"
        )
    return MissingDependencyError(
        f"{where}: TFDS's builder needs {top}, which is not installed: "
        f"pip install {_PIP_NAMES.get(top, top)}"
    )
