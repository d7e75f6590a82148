"""The registry: which datasets catalog knows, and where each one's builder folder is.

``registry.yaml`` maps dataset names to builder folders (relative to the registry file). In a
source checkout both sit at the top of the repository; an installed wheel carries them inside
the package (``catalog/registry.yaml``, ``catalog/builders/``).

A dataset is asked for as ``name[/config][:version]`` (``cmaterdb/telugu``, ``mnist:3.0.1``,
``cmaterdb/telugu:1.*``), or by the path of a builder folder (optionally followed by
``/config`` and ``:version`` too). A version is exact (``3.0.1``) or a pattern whose trailing
parts are ``*`` (``3.*``, ``3.0.*``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from catalog.errors import DatasetNotFoundError, SpecError
from catalog.spec.files import SPEC_FILE

__all__ = [
    "Request",
    "builder_dir",
    "list_datasets",
    "registered",
    "registry_file",
    "resolve",
    "version_matches",
]

_VERSION_REQUEST = re.compile(r"^(\d+\.\d+\.\d+|(\d+\.){0,2}\*(\.\*){0,2})$")


class Request(NamedTuple):
    """A resolved request for a dataset: its builder folder, and the config and version (an
    exact version or a pattern) asked for, if any. (A NamedTuple: no dataclasses import for
    `catalog list`, which imports this module.)"""

    folder: Path
    config: str | None = None
    version: str | None = None


def version_matches(pattern: str, version: str) -> bool:
    """Whether `version` (X.Y.Z) is `pattern`: exact, or equal up to its first ``*``.

    >>> version_matches("3.0.1", "3.0.1"), version_matches("3.*", "3.0.1")
    (True, True)
    >>> version_matches("1.*", "3.0.1"), version_matches("3.1.*", "3.0.1")
    (False, False)
    """
    for want, got in zip(pattern.split("."), version.split("."), strict=False):
        if want == "*":
            return True
        if want != got:
            return False
    return pattern.count(".") == version.count(".")


_PACKAGE = Path(__file__).resolve().parent.parent  # catalog/


def registry_file() -> Path:
    """registry.yaml of the installed wheel, or of the source checkout."""
    for root in (_PACKAGE, _PACKAGE.parent):
        if (root / "registry.yaml").is_file():
            return root / "registry.yaml"
    raise SpecError(
        f"registry.yaml is missing from {_PACKAGE} and {_PACKAGE.parent}; reinstall catalog"
    )


def registered() -> dict[str, Path]:
    """Every registered dataset's name -> builder folder, as registry.yaml gives them."""
    from catalog.spec.yaml_file import read_yaml  # `catalog list` reads the index instead

    path = registry_file()
    data = read_yaml(path)
    datasets = data.get("datasets") if isinstance(data, dict) else None
    if not isinstance(datasets, dict):
        raise SpecError(f"{path}: field 'datasets': expected a mapping of name -> builder folder")
    return {str(name): path.parent / str(folder) for name, folder in datasets.items()}


def list_datasets() -> list[str]:
    """The names of every registered dataset, sorted.

    Takes no arguments.

    Returns:
        The registered names (``registry.yaml``), sorted; configs are not listed (see
        ``catalog list`` for them).

    Raises:
        SpecError: registry.yaml is malformed.

    Examples:
        >>> import catalog
        >>> "fashion_mnist" in catalog.list_datasets()
        True
    """
    return sorted(registered())


def _folder(text: str) -> Path | None:
    folder = Path(text).expanduser()
    return folder if (folder / SPEC_FILE).is_file() else None


def resolve(name_or_path: str | Path) -> Request:
    """Resolve ``name[/config][:version]`` or a builder folder path (see the module docstring).

    A path to a folder holding builder.yaml always wins; otherwise ``:version`` is split off
    the end, then ``/config``. Raises DatasetNotFoundError (with the closest names) when
    neither a folder nor a registered name matches.
    """
    text = str(name_or_path)
    folder = _folder(text)
    if folder is not None:
        return Request(folder)
    base, version = text, None
    if ":" in text:
        base, _, version = text.rpartition(":")
        if not _VERSION_REQUEST.match(version) or version.count(".") > 2:
            raise DatasetNotFoundError(
                f"{text!r}: {version!r} is not a version; ask for an exact one (3.0.1) or a "
                "pattern (3.* or 3.0.*)"
            )
    head, _, config = base.rpartition("/")
    known = registered()
    for name, cfg in ((base, None), (head, config)):
        if not name:
            continue
        folder = _folder(name) or (known.get(name) if "/" not in name else None)
        if folder is not None:
            return Request(folder, cfg or None, version)
    raise _not_found(base, known)


def builder_dir(name_or_path: str | Path) -> Path:
    """The builder folder of a dataset name (``name[/config][:version]``) or a folder path."""
    return resolve(name_or_path).folder


def _not_found(text: str, known: dict[str, Path] | None = None) -> DatasetNotFoundError:
    import difflib  # only to say which names come close

    folder = Path(text).expanduser()
    if ("/" in text or text.startswith(".")) and folder.is_dir():
        return DatasetNotFoundError(
            f"{folder} has no {SPEC_FILE}; a builder folder needs one (see builders/mnist)"
        )
    known = registered() if known is None else known
    close = difflib.get_close_matches(text.partition("/")[0], list(known), n=3)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    return DatasetNotFoundError(
        f"no dataset named {text!r}; {hint}run 'catalog list' to see all, or pass the path "
        "of a builder folder"
    )
