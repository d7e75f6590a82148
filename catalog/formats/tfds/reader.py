"""The ``tfds`` source format: a split's examples from TFDS's own builder code.

A split of a ``tfds:NAME`` spec (made by `catalog.interop.tfds.builder_spec`) reads with this
format. Its options name the builder (``builder``, ``config``, ``version``) and the TFDS split
(``split``); ``files`` and ``extracted`` map each download the builder asked for (by
`catalog.formats.tfds.downloads.download_name`) to the file the prepare driver verified and
to the folder it extracted to. The reader makes the builder, runs its ``_split_generators``
with a download manager answering from those files (nothing is fetched here), then its
``_generate_examples`` for the split, each raw example turned into what catalog's features
encode (`catalog.formats.tfds.values`). Keys are TFDS's keys; the order is the generator's.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from catalog.download.extract import extract
from catalog.errors import CatalogError, SourceFormatError
from catalog.features import FeaturesDict
from catalog.formats.base import Examples, Option, Source, SourceFormat
from catalog.formats.tfds.downloads import TFDSDownloads, download_name
from catalog.formats.tfds.runtime import TFDSName, import_tfds, load_builder, split_generators
from catalog.formats.tfds.values import to_values

__all__ = ["FORMAT", "source_name"]


def source_name(options: Mapping[str, Any]) -> TFDSName:
    """The ``tfds:NAME[/CONFIG][:VERSION]`` a split's options name."""
    return TFDSName(options["builder"], options["config"] or None, options["version"] or None)


def _examples(source: Source) -> Examples:
    name = source_name(source.options)
    files: Mapping[str, Path] = source.options["files"]
    extracted: Mapping[str, Path] = source.options["extracted"]
    by_path = {Path(path): key for key, path in files.items()}

    def fetch(url: str) -> Path:
        key = download_name(url)
        if key not in files:
            raise SourceFormatError(
                f"{name}: its builder asked for {url}, which its spec does not list; prepare "
                "it again with --overwrite"
            )
        return Path(files[key])

    def unpack(path: Path) -> Path:
        key = by_path.get(path)
        if key is not None and key in extracted:
            return Path(extracted[key])
        if source.scratch is None:
            raise SourceFormatError(f"{name}: nowhere to extract {path} (no scratch folder)")
        return extract(path, source.scratch / "extracted")

    manual = source.options.get("manual_dir") or None
    dl = TFDSDownloads(str(name), fetch, unpack, Path(manual) if manual else None)
    generators = split_generators(load_builder(name), dl, str(name))
    split = source.options["split"]
    if split not in generators:
        raise SourceFormatError(
            f"{name}: its builder gives no split {split!r} now (it gives "
            f"{', '.join(generators)}); prepare it again with --overwrite"
        )
    features = source.features
    audio = frozenset(source.options.get("audio_features", ()))
    translations = frozenset(source.options.get("translation_features", ()))
    count = 0
    examples = generators[split]()
    while True:
        try:
            key, example = next(examples)
        except StopIteration:
            return
        except CatalogError:
            raise
        except Exception as error:  # TFDS's code: whatever it raises is this split's failure
            raise SourceFormatError(
                f"{name}: split {split!r}, after example {count}: TFDS's generator failed: "
                f"{type(error).__name__}: {error}"
            ) from error
        yield str(key), to_values(example, features, audio, translations=translations)
        count += 1


def _features(options: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    return frozenset(), frozenset(options.get("feature_names", ()))


def _check() -> None:
    """MissingDependencyError before any download when tensorflow-datasets is missing."""
    import_tfds()


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    return None if options.get("builder") else "option 'builder' names no TFDS builder"


FORMAT = SourceFormat(
    name="tfds",
    description="a TFDS builder's own split and example generators (tfds:NAME), run "
    "without TensorFlow",
    roles=(),
    features=_features,
    examples=_examples,
    options={
        "builder": Option("str", "", "the TFDS builder's registered name"),
        "config": Option("str", "", "its config ('' for the default)"),
        "version": Option("str", "", "its version"),
        "split": Option("str", "", "the TFDS split this split reads"),
        "files": Option("file_map", {}, "download name -> the file fetched for it"),
        "extracted": Option("file_map", {}, "download name -> the folder it extracted to"),
        "feature_names": Option("strs", [], "the features the builder's examples hold"),
        "audio_features": Option(
            "strs",
            [],
            "TFDS Audio features, whose audio files are decoded (WAV)",
            counted_at_default=False,
        ),
        "translation_features": Option(
            "strs",
            [],
            "TFDS TranslationVariableLanguages features, whose dicts of language -> text(s) "
            "become sorted (language, translation) lists",
            counted_at_default=False,
        ),
        "manual_dir": Option(
            "str", "", "the folder of files placed by hand", counted_at_default=False
        ),
    },
    validate=_validate,
    check=_check,
)
