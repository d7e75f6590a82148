"""The registry: which datasets catalog knows, and where each one's builder folder is.

``registry.yaml`` maps dataset names to builder folders (relative to the registry file). In a
source checkout both sit at the top of the repository; an installed wheel carries them inside
the package (``catalog/registry.yaml``, ``catalog/builders/``).
"""

from __future__ import annotations

import difflib
from pathlib import Path

from catalog.errors import DatasetNotFoundError, SpecError
from catalog.spec import SPEC_FILE, read_yaml

__all__ = ["builder_dir", "list_datasets", "registry_file"]

_PACKAGE = Path(__file__).resolve().parent


def registry_file() -> Path:
    """registry.yaml of the installed wheel, or of the source checkout."""
    for root in (_PACKAGE, _PACKAGE.parent):
        if (root / "registry.yaml").is_file():
            return root / "registry.yaml"
    raise SpecError(
        f"registry.yaml is missing from {_PACKAGE} and {_PACKAGE.parent}; reinstall catalog"
    )


def _load() -> dict[str, Path]:
    path = registry_file()
    data = read_yaml(path)
    datasets = data.get("datasets") if isinstance(data, dict) else None
    if not isinstance(datasets, dict):
        raise SpecError(f"{path}: field 'datasets': expected a mapping of name -> builder folder")
    return {str(name): path.parent / str(folder) for name, folder in datasets.items()}


def list_datasets() -> list[str]:
    """The names of every registered dataset, sorted."""
    return sorted(_load())


def builder_dir(name_or_path: str | Path) -> Path:
    """The builder folder of a registered dataset name, or of a path to a builder folder."""
    text = str(name_or_path)
    looks_like_path = isinstance(name_or_path, Path) or "/" in text or text.startswith(".")
    if looks_like_path:
        folder = Path(text).expanduser()
        if (folder / SPEC_FILE).is_file():
            return folder
        if folder.exists():
            raise DatasetNotFoundError(
                f"{folder} has no {SPEC_FILE}; a builder folder needs one (see builders/mnist)"
            )
    registered = _load()
    if text in registered:
        return registered[text]
    close = difflib.get_close_matches(text, list(registered), n=3)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise DatasetNotFoundError(
        f"no dataset named {text!r}; {hint}run 'catalog list' to see all, or pass the path "
        "of a builder folder"
    )
