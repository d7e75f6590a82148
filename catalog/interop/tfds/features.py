"""TFDS's ``features.json`` <-> catalog features.

TFDS describes features as protobuf JSON: ``{"pythonClassName": "tensorflow_datasets.core.
features.image_feature.Image", "image": {"shape": {"dimensions": ["28", "28", "1"]}, "dtype":
"uint8", "encodingFormat": "png"}}``, nested through ``featuresDict`` and ``sequence``. This
module maps each class to the catalog feature that decodes to the same values:

=========================  ===========================================================
TFDS class                 catalog feature
=========================  ===========================================================
Image                      Image(shape, encoding png/jpeg) (uint8, 1/3/4 channels)
ClassLabel                 ClassLabel(names from ``<feature>.labels.txt``, else num_classes)
Tensor                     Tensor(shape, dtype), or Scalar(dtype) when its shape is ();
                           a string Tensor: Text, or Sequence(Text) of one dimension;
                           stored as bytes (``encoding`` "bytes"/"zlib") too, recorded
                           in ``encodings`` for the codec
Scalar                     Scalar(dtype)
Text                       Text()
BBoxFeature                BBox() (normalised ymin, xmin, ymax, xmax); other box formats
                           than REL_YXYX: Tensor((4,), float32)
Sequence                   Sequence(feature, length)
FeaturesDict               FeaturesDict
Audio                      Tensor(shape, dtype) (TFDS stores the samples as a tensor;
                           the sample rate stays in features.json)
Video                      Sequence(Image(frame shape), length): TFDS stores a video as
                           a Sequence of encoded frames, and decodes it to (T, H, W, C)
Translation                FeaturesDict({language: Text(), ...}) (TFDS's is a
                           FeaturesDict of Text, one per language)
TranslationVariable-       FeaturesDict({"language": Sequence(Text()), "translation":
Languages                  Sequence(Text())}): the pairs sorted by language, as TFDS
                           stores them
=========================  ===========================================================

Anything else is refused by name, listing these (SpecError: catalog does not read it); a
features.json whose content does not describe a feature is a SourceFormatError naming the
file and the feature. `to_tfds_json` is the reverse, for export.

Tensors stored as bytes are named (by feature path) in the ``encodings`` dict the caller
passes; the directory's DatasetInfo carries them in ``record_format["tensor_encodings"]``
for its codec.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from catalog.errors import FeatureError, SourceFormatError, SpecError
from catalog.features import (
    BBox,
    ClassLabel,
    Feature,
    FeaturesDict,
    Image,
    Scalar,
    Sequence,
    Tensor,
    Text,
)
from catalog.features.class_label import read_names_file
from catalog.interop.tfds.encoded import ENCODINGS, is_dynamic

__all__ = ["SUPPORTED", "from_tfds_json", "labels_file_name", "to_tfds_json"]

_PREFIX = "tensorflow_datasets.core.features."
_CLASSES = {
    "image_feature.Image": "Image",
    "class_label_feature.ClassLabel": "ClassLabel",
    "tensor_feature.Tensor": "Tensor",
    "scalar.Scalar": "Scalar",
    "text_feature.Text": "Text",
    "bounding_boxes.BBoxFeature": "BBoxFeature",
    "sequence_feature.Sequence": "Sequence",
    "features_dict.FeaturesDict": "FeaturesDict",
    "audio_feature.Audio": "Audio",
    "video_feature.Video": "Video",
    "translation_feature.Translation": "Translation",
    "translation_feature.TranslationVariableLanguages": "TranslationVariableLanguages",
}
#: The TFDS feature classes catalog reads, by their short names.
SUPPORTED = tuple(sorted(_CLASSES.values()))


def labels_file_name(path: str) -> str:
    """The file TFDS keeps a ClassLabel's names in: ``objects/kind`` -> objects-kind.labels.txt."""
    return f"{path.replace('/', '-')}.labels.txt"


def _shape(data: Mapping[str, Any]) -> tuple[int | None, ...]:
    dims = data.get("shape", {}).get("dimensions", [])
    return tuple(None if int(d) < 0 else int(d) for d in dims)


def from_tfds_json(
    data: Mapping[str, Any],
    folder: Path,
    path: str = "",
    *,
    encodings: dict[str, str] | None = None,
    sequences: int = 0,
) -> Feature:
    """The catalog feature of one TFDS feature (recursively); `folder` holds labels files.
    Tensors stored as bytes go into `encodings` (by path); `sequences`: how many Sequences
    hold this feature."""
    where = f"{folder / 'features.json'}: feature {path or '(top)'!r}"
    if not isinstance(data, Mapping):
        raise SourceFormatError(f"{where}: expected a JSON object, got {type(data).__name__}")
    name = str(data.get("pythonClassName", ""))
    short = _CLASSES.get(name.removeprefix(_PREFIX))
    if short is None:
        raise SpecError(
            f"{where}: TFDS feature class {name or '(none given)'!r} is not supported; catalog "
            f"reads {', '.join(SUPPORTED)}"
        )
    context = _Context(folder, {} if encodings is None else encodings, sequences)
    try:
        return _BUILDERS[short](data, context, path)
    except (SourceFormatError, SpecError):
        raise  # a feature inside this one, named already
    except (FeatureError, KeyError, ValueError, TypeError, AttributeError) as error:
        raise SourceFormatError(
            f"{where}: cannot map {short} to a catalog feature: {error}"
        ) from None


class _Context:
    """What mapping one feature needs beyond its JSON: the folder of labels files, the
    encodings found so far, how many Sequences hold it."""

    def __init__(self, folder: Path, encodings: dict[str, str], sequences: int) -> None:
        self.folder, self.encodings, self.sequences = folder, encodings, sequences


def _image(data: Mapping[str, Any], context: _Context, path: str) -> Feature:
    spec = data["image"]
    if spec.get("dtype", "uint8") != "uint8":
        raise ValueError(f"catalog images are uint8, this one is {spec['dtype']}")
    encoding = spec.get("encodingFormat") or "png"
    return Image(_shape(spec), encoding=encoding)


def _class_label(data: Mapping[str, Any], context: _Context, path: str) -> Feature:
    names_file = context.folder / labels_file_name(path)
    if names_file.is_file():
        return ClassLabel(names=read_names_file(names_file))
    return ClassLabel(num_classes=int(data["classLabel"]["numClasses"]))


def _tensor(data: Mapping[str, Any], context: _Context, path: str) -> Feature:
    spec = data["tensor"]
    encoding = str(spec.get("encoding") or "none").lower()  # TFDS takes any case
    if encoding not in ENCODINGS:
        raise ValueError(f"tensor encoding {encoding!r} is not one of {', '.join(ENCODINGS)}")
    shape = _shape(spec)
    if spec["dtype"] == "string":  # bytes TFDS keeps as tf.string: text, as TFDS's Text
        if encoding != "none" or len(shape) > 1:
            raise ValueError(f"a string Tensor{shape} stored as {encoding!r} is not supported")
        return Text() if shape == () else Sequence(Text(), length=shape[0])
    dtype = np.dtype(spec["dtype"])
    feature = Scalar(dtype) if shape == () else Tensor(shape, dtype)
    if encoding != "none":
        where = f"{context.folder / 'features.json'}: feature {path!r}"
        if context.sequences > 1 or (context.sequences and is_dynamic(shape)):
            raise SpecError(
                f"{where}: a Tensor{shape} stored as {encoding!r} inside "
                f"{'nested Sequences' if context.sequences > 1 else 'a Sequence'} is not "
                "supported; catalog reads such tensors alone, or in one Sequence with at "
                "most one unknown dimension"
            )
        context.encodings[path] = encoding
    return feature


def _audio(data: Mapping[str, Any], context: _Context, path: str) -> Feature:
    # TFDS's Audio is a Tensor of samples (its own encoding, "none" unless set) with a rate
    return _tensor({"tensor": data["audio"]}, context, path)


def _video(data: Mapping[str, Any], context: _Context, path: str) -> Feature:
    spec = data["video"]
    frames, *frame = _shape(spec)
    image = {
        "image": {**spec, "shape": {"dimensions": [str(-1 if d is None else d) for d in frame]}}
    }
    return Sequence(_image(image, context, path), frames)


def _bbox(data: Mapping[str, Any], context: _Context, path: str) -> Feature:
    # TFDS writes boxes as normalised (ymin, xmin, ymax, xmax) unless told otherwise; boxes
    # in another format (absolute pixels, x first) keep their values as a plain tensor
    box_format = data.get("boundingBox", {}).get("bboxFormat", "REL_YXYX")
    return BBox() if box_format == "REL_YXYX" else Tensor((4,), "float32")


def _sequence(data: Mapping[str, Any], context: _Context, path: str) -> Feature:
    spec = data["sequence"]
    length = int(spec.get("length", -1))
    inner = from_tfds_json(spec["feature"], context.folder, path, encodings=context.encodings,
                           sequences=context.sequences + 1)  # fmt: skip
    return Sequence(inner, None if length < 0 else length)


def _translation(data: Mapping[str, Any], context: _Context, path: str) -> Feature:
    languages = data["translation"]["languages"]
    if not languages or not all(isinstance(lang, str) for lang in languages):
        raise ValueError(f"expected a list of languages, got {languages!r}")
    return FeaturesDict({lang: Text() for lang in sorted(languages)})


def _translation_variable(data: Mapping[str, Any], context: _Context, path: str) -> Feature:
    return FeaturesDict({"language": Sequence(Text()), "translation": Sequence(Text())})


def _features_dict(data: Mapping[str, Any], context: _Context, path: str) -> Feature:
    children = data["featuresDict"]["features"]
    return FeaturesDict(
        {
            name: from_tfds_json(child, context.folder, f"{path}/{name}" if path else name,
                                 encodings=context.encodings, sequences=context.sequences)
            for name, child in children.items()
        }
    )  # fmt: skip


_BUILDERS: dict[str, Callable[[Mapping[str, Any], _Context, str], Feature]] = {
    "Image": _image,
    "ClassLabel": _class_label,
    "Tensor": _tensor,
    "Scalar": _tensor,
    "Text": lambda data, context, path: Text(),
    "BBoxFeature": _bbox,
    "Sequence": _sequence,
    "FeaturesDict": _features_dict,
    "Audio": _audio,
    "Video": _video,
    "Translation": _translation,
    "TranslationVariableLanguages": _translation_variable,
}


# -- export: catalog -> TFDS ------------------------------------------------------------------
def _dims(shape: tuple[int | None, ...]) -> dict[str, Any]:
    return {"dimensions": [str(-1 if d is None else d) for d in shape]} if shape else {}


def to_tfds_json(feature: Feature, labels: dict[str, list[str]], path: str = "") -> dict[str, Any]:
    """TFDS's features.json form of a catalog feature; ClassLabel names go into `labels`
    (labels file name -> names), which the caller writes beside it."""
    if isinstance(feature, FeaturesDict):
        return {
            "pythonClassName": _PREFIX + "features_dict.FeaturesDict",
            "featuresDict": {
                "features": {
                    name: to_tfds_json(child, labels, f"{path}/{name}" if path else name)
                    for name, child in feature.items()
                }
            },
        }
    if isinstance(feature, Sequence):
        return {
            "pythonClassName": _PREFIX + "sequence_feature.Sequence",
            "sequence": {
                "feature": to_tfds_json(feature.feature, labels, path),
                "length": str(-1 if feature.length is None else feature.length),
            },
        }
    if isinstance(feature, Image):
        spec: dict[str, Any] = {"shape": _dims(feature.shape), "dtype": "uint8"}
        if feature.encoding == "jpeg":
            spec["encodingFormat"] = "jpeg"
        return {"pythonClassName": _PREFIX + "image_feature.Image", "image": spec}
    if isinstance(feature, ClassLabel):
        labels[labels_file_name(path)] = feature.names
        return {
            "pythonClassName": _PREFIX + "class_label_feature.ClassLabel",
            "classLabel": {"numClasses": str(feature.num_classes)},
        }
    if isinstance(feature, Text):
        return {"pythonClassName": _PREFIX + "text_feature.Text", "text": {}}
    if isinstance(feature, BBox):
        return {
            "pythonClassName": _PREFIX + "bounding_boxes.BBoxFeature",
            "boundingBox": {"bboxFormat": "REL_YXYX", "dtype": "float32", "shape": _dims((4,))},
        }
    if isinstance(feature, (Scalar, Tensor)):
        shape = feature.shape or ()
        if sum(d is None for d in shape) > 1:
            raise FeatureError(
                f"feature {path!r}: {feature!r} has more than one unknown dimension, which a "
                "TFDS Tensor stored in a tf.train.Example cannot express"
            )
        return {
            "pythonClassName": _PREFIX + "tensor_feature.Tensor",
            "tensor": {"shape": _dims(shape), "dtype": feature.dtype_name, "encoding": "none"},
        }
    raise FeatureError(f"feature {path!r}: {feature!r} has no TFDS equivalent")
