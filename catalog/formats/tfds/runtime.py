"""TFDS's builder classes, loaded without TensorFlow, and their split generators run.

``tfds:NAME[/CONFIG][:VERSION]`` names a builder TFDS registers (`parse_name`); `load_builder`
imports tensorflow-datasets (the optional extra ``catalog[tfds]``), puts the TF stand-in in
place (`catalog.formats.tfds.standin`) and makes the builder object, which touches no file:
its data dir is never written, catalog writes the shards. `split_generators` runs the
builder's ``_split_generators`` with the download manager given and returns, per TFDS split
name, a function that starts that split's ``_generate_examples`` afresh.

All of TFDS's code runs in the calling process (and in a prepare's worker processes, for
their units): a test may patch a builder module's constants, as TFDS's own tests do.
"""

from __future__ import annotations

import functools
import inspect
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog.errors import DatasetNotFoundError, MissingDependencyError, SourceFormatError
from catalog.formats.tfds.names import builder_modules, find_class, missing_library
from catalog.formats.tfds.standin import install, running

__all__ = [
    "PREFIX",
    "TFDSName",
    "builder_class",
    "import_tfds",
    "load_builder",
    "parse_name",
    "split_generators",
]

#: What starts a TFDS dataset's name where catalog takes a dataset name.
PREFIX = "tfds:"
_NAME = re.compile(r"^([a-z0-9_]+)(?:/([\w.+-]+))?(?::(\d+\.\d+\.\d+))?$")


@dataclass(frozen=True)
class TFDSName:
    """``tfds:NAME[/CONFIG][:VERSION]`` taken apart (`config`, `version`: None when not
    given)."""

    name: str
    config: str | None = None
    version: str | None = None

    def __str__(self) -> str:
        config = f"/{self.config}" if self.config else ""
        version = f":{self.version}" if self.version else ""
        return f"{PREFIX}{self.name}{config}{version}"


def parse_name(text: str) -> TFDSName | None:
    """The parts of ``tfds:NAME[/CONFIG][:VERSION]``, None when `text` does not start with
    ``tfds:``; DatasetNotFoundError when it does but is malformed.

    >>> parse_name("tfds:mnist"), parse_name("mnist") is None
    (TFDSName(name='mnist', config=None, version=None), True)
    >>> parse_name("tfds:cifar10_corrupted/fog_1:1.0.0")
    TFDSName(name='cifar10_corrupted', config='fog_1', version='1.0.0')
    """
    if not text.startswith(PREFIX):
        return None
    match = _NAME.match(text[len(PREFIX) :])
    if match is None:
        raise DatasetNotFoundError(
            f"{text!r} is not a TFDS dataset name: write tfds:NAME[/CONFIG][:VERSION] "
            "(tfds:mnist, tfds:imdb_reviews/plain_text:1.0.0); 'catalog list --tfds' lists them"
        )
    return TFDSName(*match.groups())


@functools.cache
def import_tfds() -> Any:
    """tensorflow_datasets, its TF stand-in in place; MissingDependencyError when it is not
    installed."""
    try:
        import tensorflow_datasets
        from tensorflow_datasets.core import registered
    except ImportError as error:
        raise MissingDependencyError(
            f"tfds: datasets need tensorflow-datasets ({error}); pip install 'catalog[tfds]' "
            "(TensorFlow is not needed)"
        ) from None
    install()
    del registered
    return tensorflow_datasets


def builder_class(name: str) -> Any:
    """TFDS's registered builder class of `name`, importing only the module of TFDS's that
    registers it (`catalog.formats.tfds.names`); DatasetNotFoundError naming close names."""
    import_tfds()
    from tensorflow_datasets.core import registered

    try:
        return find_class(registered, name)  # only the module that registers it
    except MissingDependencyError:
        raise
    except Exception:  # TFDS's DatasetNotFoundError, or a class that cannot be used
        import difflib

        names = list(builder_modules(registered))
        close = difflib.get_close_matches(name, names, n=3)
        hint = f"; did you mean {', '.join('tfds:' + c for c in close)}?" if close else ""
        raise DatasetNotFoundError(
            f"TFDS registers no dataset {name!r}{hint} ('catalog list --tfds' lists them)"
        ) from None


def served_prepared(cls: Any) -> bool:
    """Whether TFDS only serves `cls`'s dataset prepared: no generator code, or an importer
    whose ``_info`` already reads TFDS's prepared copy from gs:// (the RLDS/robotics sets),
    which must not be made offline."""
    from tensorflow_datasets.core import dataset_builder

    if not issubclass(cls, dataset_builder.GeneratorBasedBuilder):
        return True
    return any(base.__name__.endswith("DatasetImporterBuilder") for base in cls.__mro__)


def load_builder(name: TFDSName) -> Any:
    """The TFDS builder object of `name` (its default config when none is given)."""
    cls = builder_class(name.name)
    if served_prepared(cls):
        raise SourceFormatError(
            f"{name}: TFDS serves this dataset prepared only (its builder has no generator "
            "code of its own, or reads TFDS's prepared copy from gs://); catalog cannot make it "
            "from source files: import a TFDS directory of it instead ('catalog import PATH', "
            "or the URL TFDS serves it at, e.g. 'catalog import gs://tfds-data/datasets/"
            f"{name.name}/VERSION')"
        )
    configs = [c.name for c in getattr(cls, "BUILDER_CONFIGS", ()) or ()]
    if name.config is not None and name.config not in configs:
        held = ", ".join(configs[:10]) if configs else "none"
        raise DatasetNotFoundError(
            f"{name}: TFDS's {name.name} has no config {name.config!r} (its configs: {held})"
        )
    unused = Path(tempfile.gettempdir()) / "catalog-tfds-builders"  # never written
    with running(str(name)):
        try:
            return cls(config=name.config, version=name.version, data_dir=unused)
        except (AssertionError, ValueError) as error:  # TFDS's word on an unknown version
            raise DatasetNotFoundError(f"{name}: {error}".splitlines()[0]) from None
        except ModuleNotFoundError as error:  # its constructor imports a library
            raise missing_library(str(name), error) from None


def split_generators(
    builder: Any, dl_manager: Any, where: str
) -> dict[str, Callable[[], Iterator[tuple[Any, Any]]]]:
    """Per TFDS split name, a function starting that split's examples ``(key, example)``.

    The builder's ``_split_generators(dl_manager)`` runs once here; the first call of a
    split's function reads what it returned, a later call runs ``_split_generators`` again
    (what it returns may hold generators, as imdb_reviews' archive iterators, which run once).
    """
    if "pipeline" in inspect.signature(builder._split_generators).parameters or hasattr(
        builder, "_build_pcollection"
    ):  # TFDS's Beam builders (voxforge's BeamBasedBuilder): refused before any download
        raise MissingDependencyError(
            f"{where} generates its examples with Apache Beam inside TFDS; catalog cannot "
            "run such builders yet"
        )
    first = _splits(builder, dl_manager, where)
    unused = set(first)

    def start(split: str) -> Iterator[tuple[Any, Any]]:
        if split in unused:
            unused.discard(split)
            return _running(first[split], where)
        return _running(_splits(builder, dl_manager, where)[split], where)

    return {split: functools.partial(start, split) for split in first}


def _splits(builder: Any, dl_manager: Any, where: str) -> dict[str, Iterator[tuple[Any, Any]]]:
    """The builder's ``_split_generators`` run once: split name -> its examples (not started)."""
    with running(where):
        found = builder._split_generators(dl_manager)
    if isinstance(found, dict):
        if any(not _iterable(g) for g in found.values()):
            raise MissingDependencyError(
                f"{where}: its split generators are Apache Beam transforms; catalog cannot run "
                "them yet"
            )
        return {str(split): iter(examples) for split, examples in found.items()}
    # TFDS's legacy list of SplitGenerator(name, gen_kwargs)
    return {str(g.name): builder._generate_examples(**dict(g.gen_kwargs or {})) for g in found}


def _iterable(value: Any) -> bool:
    return inspect.isgenerator(value) or isinstance(value, (list, tuple))


def _running(examples: Any, where: str) -> Iterator[tuple[Any, Any]]:
    with running(where):
        yield from examples
