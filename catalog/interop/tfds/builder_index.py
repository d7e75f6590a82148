"""Every dataset TFDS registers, with whether catalog prepares it without TensorFlow
(``catalog list --tfds``, the docs' table of TFDS datasets).

Each name gets a `status`:

- ``prepares``: tested here (``tests/interop/tfds_builders``) from files in its upstream layout
  (`TESTED`: most against TFDS + TensorFlow's own examples from the same files,
  ``tests/tfds_gold``), or compared with TFDS + TensorFlow's examples from small files made in
  its layout (`COMPARED`, ``tests/tfds_gold/repo``);
- ``untested``: its builder loads and its features map to catalog's with no TensorFlow, but no
  test has run its generators yet (most will prepare; a TF call in them is one clear error);
  ``untested: files placed by hand (--manual-dir)`` for a builder reading its manual dir;
- ``needs pip install X``: its builder needs a library that is not installed;
- ``not yet: WHY``: what stops it (TFDS serves it prepared only, Apache Beam inside TFDS,
  a feature catalog does not map, a TensorFlow call with no stand-in, ...).

Finding out imports tensorflow-datasets and makes every builder object (no file is read, none
downloaded): some tens of seconds for TFDS's ~450 names. The answer is kept in the user's cache
dir (`catalog.spec.index.cache_dir`), keyed by the versions of tensorflow-datasets and catalog
and by which optional libraries are installed, so a listing after the first takes well under a
second and never imports TFDS.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import inspect
import json
import logging
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from catalog._version import __version__
from catalog.errors import CatalogError, MissingDependencyError, SpecError
from catalog.spec.index import cache_dir

__all__ = ["COMPARED", "TESTED", "TFDSEntry", "tfds_index"]

#: The TFDS datasets a test prepares from files in their upstream layout.
TESTED = frozenset({
    "ag_news_subset", "beans", "binarized_mnist", "caltech101", "cifar10", "cifar100",
    "cifar10_1", "cmaterdb", "colorectal_histology", "deep_weeds", "dtd", "emnist", "eurosat",
    "fashion_mnist", "glue", "imagenette", "imdb_reviews", "iris", "kmnist", "mnist",
    "mnist_corrupted", "oxford_flowers102", "rock_paper_scissors", "samsum", "squad", "stl10",
    "spoken_digit", "svhn_cropped", "tf_flowers", "tiny_shakespeare", "titanic", "voc",
    "wine_quality",
    "yelp_polarity_reviews",
})  # fmt: skip
#: The TFDS datasets catalog has no builder of whose ``tfds:NAME`` gives TFDS + TensorFlow's own
#: examples from the same files (tests/tfds_gold/repo/STATUS.json, ``equal``; kept in step by
#: tests/interop/tfds_builders/test_tfds_dummy_gold.py).
COMPARED = frozenset({
    "accentdb", "aeslc", "aflw2k3d", "ai2_arc", "amazon_us_reviews", "anli", "answer_equivalence",
    "arc", "asset", "assin2", "bccd", "billsum", "binary_alpha_digits", "blimp", "bool_q",
    "cassava", "cherry_blossoms", "cifar10_corrupted", "citrus_leaves", "clinc_oos", "coil100",
    "conll2002", "conll2003", "coqa", "corr2cause", "cosmos_qa", "crema_d", "criteo", "cycle_gan",
    "databricks_dolly", "davis", "definite_pronoun_resolution", "diamonds", "div2k", "doc_nli",
    "domainnet", "drop", "e2e_cleaned", "efron_morris75", "eraser_multi_rc", "esnli",
    "forest_fires", "gap", "genomics_ood", "german_credit_numeric", "gigaword", "goemotions",
    "gpt3", "gsm8k", "gtzan", "gtzan_music_speech", "hellaswag", "higgs", "hillstrom", "howell",
    "imagewang", "kddcup99", "lambada", "lfw", "ljspeech", "lm1b", "malaria", "math_qa", "mctaco",
    "mlqa", "movie_rationales", "moving_mnist", "mtnt", "multi_news", "multi_nli",
    "multi_nli_mismatch", "natural_questions_open", "openbookqa", "opinion_abstracts", "opinosis",
    "para_crawl", "paws_x_wiki", "piqa", "plant_leaves", "plant_village", "pneumonia_mnist",
    "qasc", "quac", "quality", "quickdraw_bitmap", "real_toxicity_prompts", "reddit",
    "reddit_tifu", "rock_you", "savee", "scan", "schema_guided_dialogue", "sci_tail", "scicite",
    "scientific_papers", "sentiment140", "shapes3d", "smartwatch_gestures", "snli", "so2sat",
    "stanford_online_products", "tatoeba", "trec", "uc_merced", "unified_qa",
    "unnatural_instructions", "voxceleb", "web_questions", "wiki_table_questions",
    "wiki_table_text", "wikipedia_toxicity_subtypes", "winogrande", "xnli", "xquad",
    "xtreme_pawsx", "yes_no"
})  # fmt: skip
#: Optional libraries whose presence changes a status.
_OPTIONAL = (
    "h5py", "pandas", "scipy", "librosa", "pydub", "cv2", "skimage", "bs4", "lxml", "nltk",
    "matplotlib", "tifffile", "zarr", "gcsfs", "apache_beam", "datasets",
)  # fmt: skip


@dataclass(frozen=True)
class TFDSEntry:
    """One TFDS dataset: its name, version, configs and `status` (module docstring)."""

    name: str
    version: str
    configs: int
    status: str


def _key() -> dict[str, Any]:
    try:
        tfds = importlib.metadata.version("tensorflow-datasets")
    except importlib.metadata.PackageNotFoundError:
        raise MissingDependencyError(
            "listing TFDS's datasets needs tensorflow-datasets; pip install 'catalog[tfds]' "
            "(TensorFlow is not needed)"
        ) from None
    found = [m for m in _OPTIONAL if importlib.util.find_spec(m) is not None]
    tested = hashlib.sha256(" ".join(sorted(TESTED | COMPARED)).encode()).hexdigest()[:16]
    return {"tensorflow_datasets": tfds, "catalog": __version__, "optional": found,
            "tested": tested}  # fmt: skip


def _cache_file() -> Path | None:
    try:
        return cache_dir() / "tfds-index.json"
    except RuntimeError:
        return None


def tfds_index(*, refresh: bool = False) -> list[TFDSEntry]:
    """Every TFDS dataset name with its status, from the cache when it is current."""
    key = _key()
    path = _cache_file()
    if path is not None and not refresh:
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
            data = json.loads(path.read_text("utf-8"))
            if data["key"] == key:
                return [TFDSEntry(**entry) for entry in data["entries"]]
    entries = _compute()
    if path is not None:
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps({"key": key, "entries": [asdict(e) for e in entries]}))
            tmp.replace(path)
    return entries


def _compute() -> list[TFDSEntry]:
    from catalog.formats.tfds.runtime import import_tfds

    import_tfds()
    from tensorflow_datasets.core import registered

    entries = []
    absl = logging.getLogger("absl")  # TFDS's deprecation warnings, 100s of them: not news here
    level = absl.level
    absl.setLevel(logging.ERROR)
    try:
        # a set: once the builders of its datasets/ folder are imported, TFDS lists them twice
        for name in sorted(set(registered.list_imported_builders())):
            entries.append(_entry(registered, name))
    finally:
        absl.setLevel(level)
    return entries


def _entry(registered: Any, name: str) -> TFDSEntry:
    from catalog.formats.tfds.runtime import TFDSName

    try:
        cls = registered.imported_builder_cls(name)
    except Exception as error:
        return TFDSEntry(name, "", 0, _why(error))
    configs = len(getattr(cls, "BUILDER_CONFIGS", ()) or ())
    version = str(getattr(cls, "VERSION", "") or "")
    return TFDSEntry(name, version, configs, _status(cls, TFDSName(name)))


def _status(cls: Any, name: Any) -> str:
    from tensorflow_datasets.core import dataset_builder

    from catalog.formats.tfds.runtime import served_prepared

    if served_prepared(cls):
        return "not yet: TFDS serves it prepared only (no generator code of its own)"
    if "pipeline" in inspect.signature(cls._split_generators).parameters:
        return "not yet: it generates with Apache Beam inside TFDS"
    if issubclass(cls, getattr(dataset_builder, "BeamBasedBuilder", ())):
        return "not yet: it generates with Apache Beam inside TFDS"
    from catalog.interop.tfds.declared import declared_spec

    try:
        declared_spec(name)
    except Exception as error:
        return _why(error)
    if name.name in TESTED or name.name in COMPARED:
        return "prepares"
    if getattr(cls, "MANUAL_DOWNLOAD_INSTRUCTIONS", None):
        return "untested: files placed by hand (--manual-dir)"
    return "untested"


def _why(error: BaseException) -> str:
    """A status line for what stopped a builder (no path of this machine in it: the docs
    page of every status is made from these)."""
    text = _no_paths(_reason(error))
    return text if len(text) <= 160 else text[:157] + "..."


def _no_paths(text: str) -> str:
    import tensorflow_datasets

    installed = str(Path(tensorflow_datasets.__file__).parent)
    text = text.replace(installed, "tensorflow_datasets")
    text = re.sub(r"'/tmp/catalog-tfds-features-[^']*'", "features.json", text)
    unmapped = _UNMAPPED.search(text)
    if unmapped:  # the feature's class, not the sentence naming every supported one
        return f"not yet: TFDS's {unmapped.group(1)} feature has no catalog mapping"
    return text


#: The error of a TFDS feature catalog does not map (`catalog.interop.tfds.features`).
_UNMAPPED = re.compile(r"TFDS feature class '[\w.]*\.(\w+)' is not supported")


def _reason(error: BaseException) -> str:
    if isinstance(error, ModuleNotFoundError) and error.name:
        top = error.name.split(".")[0]
        if top == "tensorflow":
            return "not yet: needs TensorFlow itself"
        return f"needs pip install {top}"
    first = str(error).splitlines()[0] if str(error) else ""
    if isinstance(error, MissingDependencyError):
        library = re.search(r"which is not installed: pip install (\S+)$", first)
        return f"needs pip install {library.group(1)}" if library else f"not yet: {first}"
    if isinstance(error, (SpecError, CatalogError)):
        return f"not yet: {first.split(': ', 2)[-1]}"
    return f"not yet: {type(error).__name__}: {first}"
