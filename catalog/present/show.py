"""Pictures of a dataset: a grid of example images (or audio waveforms), each captioned
"index: class name".

::

    grid = show_examples(catalog.data_source("fashion_mnist", split="test"), num_examples=16)
    grid.save("grid.png")

Which examples: the first ``num_examples`` of the data source, or with a ``seed`` that many
drawn without replacement by ``numpy.random.default_rng(seed)``, shown in index order (so
the same seed always gives the same picture). Which features: the image is ``image_key``, else
the supervised input when it is an Image, else the first Image feature; the caption's class
name comes from the supervised target when it is a ClassLabel, else the first ClassLabel
(without one the caption is the index alone).

Layout (:class:`GridLayout`): cells in rows of ``columns`` (default: a square-ish grid), each
a square box of one side for the whole grid, with the caption below it. An image no larger than
``MAX_SIDE`` is scaled up by the largest integer factor that fits (nearest neighbour, so a
28x28 digit stays crisp at 84x84); a larger one is scaled down to fit (aspect kept). The box
side is the largest scaled image's, so images of varying size are centred on a neutral gray
(letterboxed). Grayscale, RGB and RGBA (composited over the gray) images work; an all-grayscale
grid is a grayscale picture. A caption wider than its cell is cut with "..." (on one line: a
line break in a class name is a space); a class name of any length is measured a few dozen
characters at a time (``catalog.present.strings.fit_width``), and one Pillow cannot draw at all
is a ValueError naming it.

What fits a dataset (:func:`show_kind`): its images when it has an Image feature, else
waveform thumbnails of its Audio feature (:func:`waveform`: the per-column min..max envelope
of the clip, scaled to its loudest sample, on a mid line), else text: the first lines of
its Text features, or a table of its rows for a tabular dataset (``catalog.present.show_text``).

Detection datasets: when the features hold a Sequence of objects with a BBox and a ClassLabel
(VOC's ``objects/bbox`` and ``objects/label``), each image is drawn larger (up to
``BOXES_MAX_SIDE``) with its boxes outlined, each in its class's colour, and the class name
written at the box's top-left corner; the caption then reads "index: N objects". A BBox
feature of its own (one box per image, Oxford-IIIT Pet's ``head_bbox``) is drawn the same
way with the caption's class name; a box of all zeros is none.

Pillow is imported only when a grid is drawn: ``import catalog`` never loads it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from catalog.features import Audio, BBox, ClassLabel, FeaturesDict, Image, SupervisedKeys, Text
from catalog.features import Sequence as SequenceFeature
from catalog.present.strings import describe, fit_width, one_line

if TYPE_CHECKING:
    from PIL import Image as PILImage
    from PIL import ImageFont

    from catalog.read.data_source import DataSource

__all__ = [
    "BOXES_MAX_SIDE",
    "MAX_EXAMPLES",
    "MAX_SIDE",
    "GridLayout",
    "fit",
    "pick_boxes",
    "pick_features",
    "render_grid",
    "sample",
    "show_examples",
    "show_kind",
    "waveform",
]

MAX_SIDE = 96  #: the largest side, in pixels, an image is drawn at
PAD = 4  #: space around each cell
MAX_EXAMPLES = 1024  #: the most examples one grid shows
BACKGROUND = 255  #: gray levels: the page,
LETTERBOX = 200  #: the box around an image that does not fill it,
TEXT = 40  #: and the captions
BOXES_MAX_SIDE = 192  #: the largest side an image with boxes is drawn at
#: Box outline colours, by class index (cycled).
BOX_COLOURS = [
    (230, 25, 75), (60, 180, 75), (0, 130, 200), (245, 130, 48), (145, 30, 180),
    (70, 240, 240), (240, 50, 230), (210, 245, 60), (250, 190, 212), (0, 128, 128),
]  # fmt: skip

#: The boxes of one image: ((ymin, xmin, ymax, xmax) normalised, class index, class name).
Boxes = list[tuple[tuple[float, float, float, float], int, str]]


def sample(length: int, num_examples: int, seed: int | None = None) -> list[int]:
    """The indices to show: the first `num_examples` (all when fewer), or with `seed` as many
    drawn without replacement by ``numpy.random.default_rng(seed)``, in ascending order.

    >>> sample(10, 3), sample(2, 5), sample(10, 3, seed=0) == sample(10, 3, seed=0)
    ([0, 1, 2], [0, 1], True)
    """
    count = min(num_examples, length)
    if seed is None:
        return list(range(count))
    rows = np.random.default_rng(seed).choice(length, size=count, replace=False)
    return sorted(int(i) for i in rows)


def fit(height: int, width: int, max_side: int = MAX_SIDE) -> tuple[int, int]:
    """The (height, width) an image is drawn at: scaled up by the largest integer factor that
    keeps it within `max_side`, or down to fit (aspect kept).

    >>> fit(28, 28), fit(32, 32), fit(200, 100), fit(97, 10)
    ((84, 84), (96, 96), (96, 48), (96, 10))
    """
    side = max(height, width)
    if side <= max_side:
        factor = max_side // side
        return height * factor, width * factor
    scale = max_side / side
    return max(1, round(height * scale)), max(1, round(width * scale))


@dataclass(frozen=True)
class GridLayout:
    """Where everything goes in a grid of `count` cells.

    Cell ``i`` is at row ``i // columns``, column ``i % columns``; its image box (a square of
    side `box`) starts `PAD` pixels into the cell, and the caption (`caption_height` pixels)
    sits below the box.
    """

    count: int
    columns: int
    box: int
    caption_height: int

    @property
    def rows(self) -> int:
        return -(-self.count // self.columns)

    @property
    def cell_size(self) -> tuple[int, int]:
        """(width, height) of one cell."""
        return self.box + 2 * PAD, PAD + self.box + self.caption_height + PAD

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of the whole picture."""
        width, height = self.cell_size
        return self.columns * width, self.rows * height

    def box_origin(self, i: int) -> tuple[int, int]:
        """(left, top) of cell `i`'s image box."""
        width, height = self.cell_size
        return (i % self.columns) * width + PAD, (i // self.columns) * height + PAD

    def image_origin(self, i: int, height: int, width: int) -> tuple[int, int]:
        """(left, top) of an image of the given drawn size, centred in cell `i`'s box."""
        left, top = self.box_origin(i)
        return left + (self.box - width) // 2, top + (self.box - height) // 2


def _columns(count: int, columns: int | None) -> int:
    if columns is not None:
        if columns < 1:
            raise ValueError(f"columns must be >= 1, got {columns}")
        return min(columns, max(count, 1))
    return max(1, math.ceil(math.sqrt(count)))


def _font() -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    from PIL import ImageFont

    return ImageFont.load_default()  # Pillow's own font: no font file needed


def _to_pil(pixels: np.ndarray[Any, Any]) -> PILImage.Image:
    """A Pillow image of an (h, w), (h, w, 1), (h, w, 3) or (h, w, 4) uint8 array; RGBA is
    composited over the letterbox gray."""
    from PIL import Image as PILImage

    array = np.asarray(pixels)
    if array.dtype != np.uint8:
        raise ValueError(f"images must be uint8 arrays, got {array.dtype}")
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    if array.ndim == 2:
        return PILImage.fromarray(array, "L")
    if array.ndim == 3 and array.shape[2] == 3:
        return PILImage.fromarray(array, "RGB")
    if array.ndim == 3 and array.shape[2] == 4:
        rgba = PILImage.fromarray(array, "RGBA")
        under = PILImage.new("RGBA", rgba.size, (LETTERBOX, LETTERBOX, LETTERBOX, 255))
        return PILImage.alpha_composite(under, rgba).convert("RGB")
    raise ValueError(f"images must be (height, width[, 1|3|4]) arrays, got shape {array.shape}")


def _fit_caption(text: str, font: Any, width: int) -> str:
    """`text` on one line, cut with "..." to at most `width` pixels (``strings.fit_width``:
    O(log n) measurements of short prefixes, so a class name of any length is quick)."""
    return fit_width(one_line(text), font.getlength, width)


def _cannot_draw(what: str, text: str, exc: Exception) -> ValueError:
    """The error for a caption or box label Pillow refused, naming it in a few characters."""
    return ValueError(f"cannot draw the {what} {describe(text)}: {exc}")


def render_grid(
    images: Sequence[np.ndarray[Any, Any]],
    captions: Sequence[str],
    *,
    columns: int | None = None,
    boxes: Sequence[Boxes] | None = None,
) -> PILImage.Image:
    """A grid of `images` (uint8 arrays), each with its caption below (see the module
    docstring for the layout); mode "L" when every image is grayscale and there are no
    `boxes` (per image: its boxes to outline, with class names), else "RGB"."""
    from PIL import Image as PILImage
    from PIL import ImageDraw

    if len(images) != len(captions):
        raise ValueError(f"got {len(images)} images but {len(captions)} captions")
    if not images:
        raise ValueError("no images to draw")
    if boxes is not None and len(boxes) != len(images):
        raise ValueError(f"got {len(images)} images but boxes for {len(boxes)}")
    pictures = [_to_pil(image) for image in images]
    max_side = MAX_SIDE if boxes is None else BOXES_MAX_SIDE
    sizes = [fit(p.height, p.width, max_side) for p in pictures]
    font = _font()
    caption_height = int(font.getbbox("0: Ag/|")[3]) + 4
    layout = GridLayout(
        len(pictures), _columns(len(pictures), columns), max(max(s) for s in sizes), caption_height
    )
    mode = "L" if boxes is None and all(p.mode == "L" for p in pictures) else "RGB"

    def gray(level: int) -> int | tuple[int, int, int]:
        return level if mode == "L" else (level, level, level)

    canvas = PILImage.new(mode, layout.size, gray(BACKGROUND))
    draw = ImageDraw.Draw(canvas)
    cell_width = layout.cell_size[0]
    for i, (picture, (height, width), caption) in enumerate(
        zip(pictures, sizes, captions, strict=True)
    ):
        x, y = layout.box_origin(i)
        if (height, width) != (layout.box, layout.box):
            draw.rectangle((x, y, x + layout.box - 1, y + layout.box - 1), fill=gray(LETTERBOX))
        upscale = height >= picture.height
        method = PILImage.Resampling.NEAREST if upscale else PILImage.Resampling.LANCZOS
        scaled = picture.convert(mode).resize((width, height), method)
        canvas.paste(scaled, layout.image_origin(i, height, width))
        if boxes is not None:
            origin = layout.image_origin(i, height, width)
            _draw_boxes(draw, font, origin, (height, width), boxes[i], canvas.width)
        try:
            text = _fit_caption(caption, font, cell_width - 2)
            text_x = x - PAD + (cell_width - font.getlength(text)) / 2
            draw.text((text_x, y + layout.box + 2), text, fill=gray(TEXT), font=font)
        except (ValueError, OSError) as exc:  # Pillow's limits (e.g. too many characters)
            raise _cannot_draw("caption", caption, exc) from None
    return canvas


Kind = Literal["image", "audio", "text", "table"]
WAVE_SIZE = (48, 96)  #: (height, width) of a waveform thumbnail, in pixels


def show_kind(
    features: FeaturesDict, tags: Sequence[str] = (), image_key: str | None = None
) -> Kind:
    """What `catalog show` draws: ``image`` (an Image feature, or `image_key` given),
    ``audio`` (an Audio feature), ``table`` (a dataset tagged ``tabular``, or one without Text
    features) or ``text``."""
    kinds = [type(f) for f in features.values()]
    if image_key is not None or Image in kinds:
        return "image"
    if Audio in kinds:
        return "audio"
    if "tabular" in tags or Text not in kinds:
        return "table"
    return "text"


def label_key(features: FeaturesDict, supervised_keys: SupervisedKeys | None) -> str | None:
    """The ClassLabel feature captions name: the supervised target, else the first one."""
    labels = [k for k, f in features.items() if isinstance(f, ClassLabel)]
    if supervised_keys is not None and supervised_keys[1] in labels:
        return supervised_keys[1]
    return labels[0] if labels else None


def caption(features: FeaturesDict, label: str | None, row: int, example: Any) -> str:
    """``"index: class name"`` (``"index"`` without a label; ``-1`` for no label)."""
    if label is None:
        return str(row)
    feature = features[label]
    assert isinstance(feature, ClassLabel)
    return f"{row}: {feature.int2str(int(example[label]))}"


def waveform(
    samples: np.ndarray[Any, Any], size: tuple[int, int] = WAVE_SIZE
) -> np.ndarray[Any, Any]:
    """A grayscale (height, width) uint8 picture of a clip: for each pixel column, a dark bar
    from the lowest to the highest sample of its stretch of the clip, scaled so the loudest
    sample reaches the edge; a light mid line where the clip is silent. Channels are mixed."""
    height, width = size
    picture = np.full((height, width), BACKGROUND, np.uint8)
    mid = height // 2
    picture[mid] = LETTERBOX
    clip = np.asarray(samples, dtype=np.float64)
    if clip.ndim == 2:
        clip = clip.mean(axis=1)
    peak = float(np.abs(clip).max()) if clip.size else 0.0
    if peak == 0:
        return picture
    n = len(clip)
    for x in range(width):  # each column spans its stretch and the next column's first sample
        start = x * n // width
        end = min(max((x + 1) * n // width, start + 1) + 1, n)
        part = clip[start:end] / peak  # -1..1
        top = round(mid - part.max() * (mid - 1))
        bottom = round(mid - part.min() * (mid - 1))
        picture[top : bottom + 1, x] = TEXT
    return picture


def _draw_boxes(
    draw: Any,
    font: Any,
    origin: tuple[int, int],
    size: tuple[int, int],
    boxes: Boxes,
    right: int,
) -> None:
    """Outline each box on the image drawn at `origin` with `size` (height, width), in its
    class's colour, its class name at its top-left corner on that colour (cut with "..." at
    `right`, the picture's right edge)."""
    left, top = origin
    height, width = size
    for (ymin, xmin, ymax, xmax), index, name in boxes:
        colour = BOX_COLOURS[index % len(BOX_COLOURS)]
        x0, y0 = left + round(xmin * (width - 1)), top + round(ymin * (height - 1))
        x1, y1 = left + round(xmax * (width - 1)), top + round(ymax * (height - 1))
        draw.rectangle((x0, y0, x1, y1), outline=colour, width=2)
        try:
            label = _fit_caption(name, font, right - (x0 + 2))
            text_box = draw.textbbox((x0 + 2, y0 + 1), label, font=font)
            draw.rectangle(text_box, fill=colour)
            draw.text((x0 + 2, y0 + 1), label, fill=(255, 255, 255), font=font)
        except (ValueError, OSError) as exc:
            raise _cannot_draw("class name", name, exc) from None


def pick_boxes(features: FeaturesDict) -> tuple[str, str, str] | None:
    """(sequence feature, its BBox column, its ClassLabel column) of a detection dataset's
    objects, e.g. ``("objects", "bbox", "label")``; None without such a Sequence."""
    for key, feature in features.items():
        columns = feature.feature if isinstance(feature, SequenceFeature) else None
        if not isinstance(columns, FeaturesDict):
            continue
        bbox = [k for k, f in columns.items() if isinstance(f, BBox)]
        labels = [k for k, f in columns.items() if isinstance(f, ClassLabel)]
        if bbox and labels:
            return key, bbox[0], "label" if "label" in labels else labels[0]
    return None


def pick_features(
    features: FeaturesDict,
    supervised_keys: SupervisedKeys | None = None,
    image_key: str | None = None,
) -> tuple[str, str | None]:
    """(image feature, class label feature or None) to show, as the module docstring says.

    Raises ValueError naming the features when there is no (such) Image feature.
    """
    images = [k for k, f in features.items() if isinstance(f, Image)]
    labels = [k for k, f in features.items() if isinstance(f, ClassLabel)]
    described = ", ".join(f"{k} ({f.type_name})" for k, f in features.items())
    if image_key is not None:
        if image_key not in images:
            raise ValueError(
                f"{image_key!r} is not an Image feature; the features are: {described}"
            )
    elif (
        supervised_keys is not None
        and isinstance(supervised_keys[0], str)
        and supervised_keys[0] in images
    ):
        image_key = supervised_keys[0]
    elif images:
        image_key = images[0]
    else:
        raise ValueError(f"no Image feature to show; the features are: {described}")
    del labels
    return image_key, label_key(features, supervised_keys)


def show_examples(
    ds: DataSource,
    *,
    num_examples: int = 16,
    seed: int | None = None,
    image_key: str | None = None,
    columns: int | None = None,
) -> PILImage.Image:
    """A grid of examples of `ds` captioned "index: class name" (index within `ds`).

    See the module docstring for which examples, which features and the layout.
    """
    if not 1 <= num_examples <= MAX_EXAMPLES:
        raise ValueError(f"num_examples must be 1..{MAX_EXAMPLES}, got {num_examples}")
    kind = show_kind(ds.features, ds.info.tags, image_key)
    if kind == "audio":
        key = next(k for k, f in ds.features.items() if isinstance(f, Audio))
        label = label_key(ds.features, ds.info.supervised_keys)
    else:
        key, label = pick_features(ds.features, ds.info.supervised_keys, image_key)
    if len(ds) == 0:
        raise ValueError(f"{ds.info.name} split {ds.split!r} has no examples")
    rows = sample(len(ds), num_examples, seed)
    examples = ds[rows]
    if kind == "audio":
        captions = [caption(ds.features, label, r, e) for r, e in zip(rows, examples, strict=True)]
        return render_grid([waveform(e[key]) for e in examples], captions, columns=columns)
    image = key
    detection = pick_boxes(ds.features)
    if detection is not None:
        return _show_boxes(ds, rows, examples, image, detection, columns)
    # One box per image (Oxford-IIIT Pet's head_bbox): drawn with the caption's class name.
    box_key = next((k for k, f in ds.features.items() if isinstance(f, BBox)), None)
    captions, boxes = [], []
    for row, example in zip(rows, examples, strict=True):
        name, index = "", 0
        if label is None:
            captions.append(str(row))
        else:
            feature = ds.features[label]
            assert isinstance(feature, ClassLabel)
            index = int(example[label])
            name = feature.int2str(index)
            captions.append(f"{row}: {name}")
        if box_key is not None:
            box = tuple(float(v) for v in example[box_key])
            boxes.append([(box, index, name)] if any(box) else [])  # (0, 0, 0, 0): no box
    drawn = boxes if box_key is not None else None
    return render_grid([e[image] for e in examples], captions, columns=columns, boxes=drawn)  # type: ignore[arg-type]


def _show_boxes(
    ds: DataSource,
    rows: list[int],
    examples: list[dict[str, Any]],
    image: str,
    detection: tuple[str, str, str],
    columns: int | None,
) -> PILImage.Image:
    """The grid of a detection dataset: each image with its objects' boxes and class names."""
    key, bbox, label = detection
    sequence = ds.features[key]
    assert isinstance(sequence, SequenceFeature) and isinstance(sequence.feature, FeaturesDict)
    names = sequence.feature[label]
    assert isinstance(names, ClassLabel)
    all_boxes: list[Boxes] = []
    captions = []
    for row, example in zip(rows, examples, strict=True):
        objects = example[key]
        found = [
            (tuple(float(v) for v in box), int(index), names.int2str(int(index)))
            for box, index in zip(objects[bbox], objects[label], strict=True)
        ]
        all_boxes.append(found)  # type: ignore[arg-type]
        captions.append(f"{row}: {len(found)} object{'' if len(found) == 1 else 's'}")
    return render_grid([e[image] for e in examples], captions, columns=columns, boxes=all_boxes)
