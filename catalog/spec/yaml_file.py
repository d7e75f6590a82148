"""YAML files read safely: no Python objects, bounded in size and in alias expansion, parsed
once per process for an unchanged file (libyaml's CSafeLoader where PyYAML has it)."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

from catalog._util.small_file import read_small
from catalog._util.units import format_size
from catalog.errors import SpecError

__all__ = ["MAX_SPEC_FILE_SIZE", "MAX_YAML_NODES", "read_yaml"]

MAX_SPEC_FILE_SIZE = 1 << 20
MAX_YAML_NODES = 100_000


def read_yaml(path: Path) -> Any:
    """Load a YAML file safely (no Python objects); SpecError naming the file if malformed,
    not a regular file, larger than :data:`MAX_SPEC_FILE_SIZE`, or expanding (through
    aliases) to more than :data:`MAX_YAML_NODES` nodes.

    Parsed with libyaml's CSafeLoader when PyYAML has it (about 10x faster than the pure-Python
    loader), and once per process for an unchanged file: `catalog list` loads a dataset's
    builder.yaml once per config. Callers get their own copy.
    """
    try:
        st = Path(path).stat()
    except OSError as error:
        raise SpecError(f"{path}: cannot read it ({error.strerror})") from None
    return copy.deepcopy(_parse_yaml(str(path), st.st_mtime_ns, st.st_size))


@functools.lru_cache(maxsize=512)
def _parse_yaml(path: str, mtime_ns: int, size: int) -> Any:
    """The parsed file; the key's mtime and size make a changed file parse again."""
    # Imported here: YAML is read only when a spec is loaded, and importing it costs a fifth
    # of numpy's import time, which `import catalog` must stay close to.
    import yaml

    data = read_small(
        path, MAX_SPEC_FILE_SIZE, SpecError, regular_only=True,
        too_large=f"larger than {format_size(MAX_SPEC_FILE_SIZE)}, the most a spec file may "
        "be (long lists of class names belong in a names_file)",
    )  # fmt: skip
    loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        loader = loader_class(data.decode("utf-8"))
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _check_expansion(Path(path), node)
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except UnicodeDecodeError:
        raise SpecError(f"{path}: not UTF-8 text") from None
    except yaml.YAMLError as error:
        raise SpecError(f"{path}: not valid YAML: {error}") from None


def _check_expansion(path: Path, root: Any) -> None:
    """Count the nodes of a composed YAML document as its data will hold them (an alias
    counts its anchor's whole value each time it is used), refusing more than
    :data:`MAX_YAML_NODES`: the "billion laughs" of nested aliases stops here, after at most
    that many steps, as does an alias inside its own anchor."""
    import yaml

    count, stack = 0, [root]
    while stack:
        node = stack.pop()
        count += 1
        if count > MAX_YAML_NODES:
            raise SpecError(
                f"{path}: expands to more than {MAX_YAML_NODES} YAML nodes (through aliases "
                "used many times, or an alias inside its own anchor); refusing to load it"
            )
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack += (key, value)
