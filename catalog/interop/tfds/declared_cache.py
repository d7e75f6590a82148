"""The declared specs of TFDS datasets (`catalog.interop.tfds.declared.declared_spec`: features,
description, citation, configs; no splits) kept in the user's cache dir, one file per
``tfds:NAME[/CONFIG][:VERSION]`` as asked, so that ``catalog info tfds:NAME`` after the first
time (or after ``catalog list --tfds``, which declares every dataset) imports no TFDS module at
all. A file is used only while its key holds: the tensorflow-datasets and catalog versions and
the code that maps TFDS's features (a fingerprint of those modules); anything else (missing,
stale, damaged) is declared again from TFDS's builder and written anew. Only a cache: a file
that cannot be written is no error."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
from pathlib import Path
from typing import Any

from catalog._util.cache_dir import cache_dir
from catalog._version import __version__
from catalog.spec.model import BuilderSpec
from catalog.spec.stored import source_json, stored_spec

__all__ = ["cached_spec", "keep_spec"]

#: The layout of a file; another one is declared again.
_FORMAT = 1
#: The modules whose code decides a declared spec (their bytes are part of the key).
_MAPPING = ("declared.py", "features.py", "declared_cache.py")


def _key() -> dict[str, Any]:
    here = Path(__file__).parent
    code = hashlib.sha256()
    for name in _MAPPING:
        with contextlib.suppress(OSError):
            code.update((here / name).read_bytes())
    return {
        "format": _FORMAT,
        "tensorflow_datasets": importlib.metadata.version("tensorflow-datasets"),
        "catalog": __version__,
        "code": code.hexdigest()[:16],
    }


def _file(asked: str) -> Path | None:
    try:
        folder = cache_dir() / "tfds-declared"
    except RuntimeError:  # no home directory: nothing is kept
        return None
    return folder / f"{hashlib.sha256(asked.encode()).hexdigest()[:32]}.json"


def cached_spec(asked: str) -> BuilderSpec | None:
    """The declared spec kept for `asked` (``tfds:NAME[/CONFIG][:VERSION]``), or None."""
    path = _file(asked)
    if path is None:
        return None
    try:
        data = json.loads(path.read_text("utf-8"))
        if data["key"] != _key() or data["asked"] != asked:
            return None
        spec = stored_spec(data["source"], str(path))
        return spec.replace(
            configs=dict(data["configs"]),
            default_config=data["default_config"],
            config_description=str(data["config_description"]),
        )
    except Exception:
        return None


def keep_spec(asked: str, spec: BuilderSpec) -> None:
    """Keep `spec`, the declared spec of `asked`, for `cached_spec`."""
    path = _file(asked)
    if path is None:
        return
    assert spec.origin is not None
    data = {
        "key": _key(),
        "asked": asked,
        "source": source_json(spec, "tfds", spec.origin[1]),
        "configs": spec.configs,
        "default_config": spec.default_config,
        "config_description": spec.config_description,
    }
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(data), "utf-8")
        tmp.replace(path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
