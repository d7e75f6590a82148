"""Fuzzing every decoder and parser that untrusted bytes reach, through its public entry
point: image files (JPEG and PNG headers and data: the photo path's decoder and a foreign
record's checked decode), CSV and JSON Lines files (`catalog prepare FILE`: the spec inferred,
then prepared), Croissant JSON-LD (the file read into a spec; its nodes mutated too), and
TFRecord files and tf.train.Example records, HDF5 and MATLAB files (their own readers),
and tars of tars (ImageNet's layout). Seeded random mutations of valid inputs
(tests/fuzz.py), a few seconds each: only catalog's own errors, bounded memory, bounded time.
"""

from __future__ import annotations

import copy
import json
import random
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from catalog.api.files import files_builder
from catalog.download import DownloadConfig, resolve_config
from catalog.errors import DownloadError, SourceFormatError
from catalog.features import Image, image_decode
from catalog.interop.croissant.read import parse
from catalog.interop.croissant.spec import croissant_spec
from catalog.interop.tfrecord import encode_example, parse_example, read_records, write_records
from tests.bombs import small
from tests.fuzz import fuzz

BUDGET = 1.5  # seconds per target


@pytest.fixture(autouse=True)
def _small_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A mutated header may claim up to the pixel budget: keep it small here (1 Mpixel)."""
    monkeypatch.setenv("CATALOG_MAX_IMAGE_PIXELS", str(1 << 20))


@pytest.mark.parametrize(
    ("valid", "channels"),
    [(small("JPEG", size=32), 3), (small("JPEG", size=32, progressive=True), 3),
     (small("PNG", size=32), 3), (small("PNG", "P", size=32), 3),
     (small("PNG", "RGBA", size=32), 4), (small("JPEG", "CMYK", size=32), 3)],
    ids=["jpeg", "progressive-jpeg", "png", "palette-png", "rgba-png", "cmyk-jpeg"],
)  # fmt: skip
def test_image_decoding(valid: bytes, channels: int) -> None:
    feature = Image(shape=(None, None, channels), encoding="png")

    def decode(data: bytes) -> None:
        image_decode.decode(data, channels)
        image_decode.decode(data, 1, at_least=(8, 8))
        feature.decode_file(data)

    assert fuzz(decode, valid, seed=41, budget=BUDGET / 2) >= 20


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    shutil.rmtree(tmp_path, ignore_errors=True)


def prepare_file(folder: Path, name: str) -> Any:
    """`catalog prepare FILE` for the bytes given: infer the spec, prepare, read it back."""
    counter = iter(range(1 << 30))

    def run(data: bytes) -> None:
        where = folder / f"try{next(counter)}"
        where.mkdir()
        try:
            (where / name).write_bytes(data)
            b = files_builder(where / name, "fuzzed", data_dir=where / "data")
            b.download_and_prepare()
            for split in b.info.splits:
                ds = b.as_data_source(split)
                list(ds)
        finally:
            shutil.rmtree(where, ignore_errors=True)

    return run


CSV = b'name,age,kind,score\nAda,36,x,1.5\n"Lee, B",41,y,-2\nMo,5,x,3e2\n"Q""uote",7,y,0\n'
JSONL = b'{"name": "Ada", "age": 36, "kind": "x", "ok": true}\n{"name": "Lee", "age": 41.5, "kind": "y", "ok": false}\n{"name": "M\\u00f6", "age": 7, "kind": "x", "ok": true}\n'  # noqa: E501


@pytest.mark.parametrize(("name", "valid"), [("t.csv", CSV), ("t.jsonl", JSONL)])
def test_text_tables_through_prepare(workdir: Path, name: str, valid: bytes) -> None:
    assert fuzz(prepare_file(workdir, name), valid, seed=41, budget=BUDGET, at_least=10) >= 10


def croissant_doc(url: str) -> dict[str, Any]:
    """A valid Croissant 1.0 file: one CSV file, one record set of three fields."""

    def field(name: str, kind: str) -> dict[str, Any]:
        return {
            "@type": "cr:Field", "@id": f"rows/{name}", "name": name, "dataType": kind,
            "source": {"fileObject": {"@id": "rows.csv"}, "extract": {"column": name}},
        }  # fmt: skip

    return {
        "@context": {"@vocab": "https://schema.org/", "cr": "http://mlcommons.org/croissant/",
                     "sc": "https://schema.org/"},
        "@type": "sc:Dataset", "name": "fuzzed", "version": "1.0.0",
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "distribution": [{
            "@type": "cr:FileObject", "@id": "rows.csv", "name": "rows.csv",
            "contentUrl": url, "encodingFormat": "text/csv", "sha256": "0" * 64,
        }],
        "recordSet": [{
            "@type": "cr:RecordSet", "@id": "rows", "name": "rows",
            "field": [field("name", "sc:Text"), field("age", "sc:Integer"),
                      field("score", "sc:Float")],
        }],
    }  # fmt: skip


def test_croissant_files(workdir: Path) -> None:
    config = resolve_config(DownloadConfig(offline=True))
    doc = croissant_doc("https://example.org/rows.csv")
    path = workdir / "c.json"

    def read(data: bytes) -> None:  # the file as `catalog prepare c.json` reads it
        path.write_bytes(data)
        try:
            croissant_spec(str(path), config)
        except DownloadError as error:  # offline: a file that parses ends here
            if "catalog is offline" not in str(error):
                raise AssertionError(str(error)) from None

    assert fuzz(read, json.dumps(doc, indent=1).encode(), seed=41, budget=BUDGET / 2) >= 20

    rng = random.Random(41)  # the nodes themselves: any JSON value anywhere
    mutated = (json.dumps(_mutate_node(doc, rng)).encode() for _ in iter(int, 1))
    valid = json.dumps(doc).encode()
    assert fuzz(lambda d: parse(json.loads(d), "c.json"), valid, seed=42, budget=BUDGET / 2,
                inputs=mutated) >= 20  # fmt: skip


_VALUES: list[Any] = [
    None, 0, -1, 2**70, 1.5, float("nan"), "", "x" * 300, [], {}, [[[]]], {"@id": "rows"},
    {"@id": "rows.csv"}, True, "sc:Text", "../../etc",
]  # fmt: skip


def _mutate_node(doc: Any, rng: random.Random) -> Any:
    """`doc` with 1-3 of its nodes replaced by another JSON value, deleted or nested deep."""
    doc = copy.deepcopy(doc)
    for _ in range(rng.randint(1, 3)):
        parents = _places(doc)
        if not parents:
            break
        node, key = rng.choice(parents)
        choice = rng.randrange(3)
        if choice == 0:
            node[key] = copy.deepcopy(rng.choice(_VALUES))
        elif choice == 1 and isinstance(node, dict):
            del node[key]
        else:
            value = node[key]
            for _ in range(rng.randint(1, 200)):
                value = [value]
            node[key] = value
    return doc


def _places(doc: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) in `doc`, depth first."""
    found: list[tuple[Any, Any]] = []
    todo = [doc]
    while todo:
        node = todo.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in list(items):
            found.append((node, key))
            if isinstance(value, (dict, list)):
                todo.append(value)
    return found


def test_tfrecord_files_and_examples(workdir: Path) -> None:
    examples = [
        encode_example({"image": [small("PNG")], "label": [3], "score": [0.5, 1.5],
                        "name": [b"ada"]}),
        encode_example({"ids": list(range(40)), "text": [b"x" * 100, b""]}),
    ]  # fmt: skip
    for data in examples:
        assert fuzz(parse_example, data, seed=41, budget=BUDGET / 4) >= 20
    path = workdir / "r.tfrecord"
    write_records(path, examples)

    def read(data: bytes) -> None:
        path.write_bytes(data)
        for record in read_records(path):
            parse_example(record)

    assert fuzz(read, path.read_bytes(), seed=41, budget=BUDGET / 2) >= 20


def test_found_by_fuzzing_a_png_chunk_running_past_the_end_is_refused_at_once() -> None:
    """OpenCV's reader spent 37 s on this 4 KB file (an IDAT claiming 4 GB) before saying it
    is damaged; the decoder now checks the chunks first."""
    data = bytearray(small("PNG", "RGBA", size=32))
    idat = data.index(b"IDAT") - 4
    data[idat : idat + 4] = (0xFFFF102B).to_bytes(4, "big")
    started = time.monotonic()
    with pytest.raises(SourceFormatError, match="a chunk at byte 33 runs past the end"):
        image_decode.decode(bytes(data), 4)
    assert time.monotonic() - started < 1


def _tar_of_tars() -> bytes:
    """ImageNet's train layout in small: a tar of two class tars of PNGs."""
    import io
    import tarfile

    def tar(members: dict[str, bytes]) -> bytes:
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as t:
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
        return out.getvalue()

    image = small("PNG", size=8)
    return tar({f"n0{c}.tar": tar({f"n0{c}_{i}.png": image for i in range(3)}) for c in (1, 2)})


def test_tar_of_tars(workdir: Path) -> None:
    """`image_tar` with ``nested``: the index made from the headers, then every image read."""
    from catalog.features import ClassLabel, FeaturesDict, Text
    from catalog.formats import FORMATS, Source

    fmt = FORMATS["image_tar"]
    features = FeaturesDict(
        {"image": Image(), "label": ClassLabel(names=["n01", "n02"]), "file_name": Text()}
    )
    options = {name: option.default for name, option in fmt.options.items()}
    options.update(nested=True, group_label="label", file_name="file_name")
    path = workdir / "train.tar"
    counter = iter(range(1 << 30))

    def read(data: bytes) -> None:
        path.write_bytes(data)
        scratch = workdir / f"scratch{next(counter)}"
        try:
            list(fmt.examples(Source("train", {"archive": (path,)}, options, features, scratch)))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    assert fuzz(read, _tar_of_tars(), seed=41, budget=BUDGET, at_least=20) >= 20


def _h5_bytes(path: Path) -> bytes:
    import h5py
    import numpy as np

    with h5py.File(path, "w") as f:
        f.create_dataset("imgs", data=(np.arange(6 * 16) % 251).astype("uint8").reshape(6, 4, 4),
                         chunks=(2, 4, 4), compression="gzip")  # fmt: skip
        f["labels"] = np.array([0, 1, 2, 0, 1, 2])
    return path.read_bytes()


def test_hdf5_files(workdir: Path) -> None:
    """The `hdf5` reader over a mutated file: catalog's errors only, bounded memory."""
    from catalog.features import ClassLabel, FeaturesDict
    from catalog.formats import FORMATS, Source

    fmt = FORMATS["hdf5"]
    features = FeaturesDict({"image": Image((4, 4, 1)), "label": ClassLabel(num_classes=3)})
    options = {name: option.default for name, option in fmt.options.items()}
    options["arrays"] = {"image": "imgs", "label": "labels"}
    path = workdir / "x.h5"
    valid = _h5_bytes(path)

    def read(data: bytes) -> None:
        path.write_bytes(data)
        list(fmt.examples(Source("train", {"file": (path,)}, options, features)))

    assert fuzz(read, valid, seed=41, budget=BUDGET, at_least=20) >= 20


@pytest.mark.parametrize("compressed", [True, False], ids=["compressed", "plain"])
def test_mat_files(workdir: Path, compressed: bool) -> None:
    """The `mat` reader (its own v5 slicer, scipy for the rest) over a mutated file."""
    import numpy as np
    import scipy.io

    from catalog.features import ClassLabel, FeaturesDict
    from catalog.formats import FORMATS, Source

    fmt = FORMATS["mat"]
    features = FeaturesDict({"image": Image((4, 4, 3)), "label": ClassLabel(num_classes=10)})
    options = {name: option.default for name, option in fmt.options.items()}
    path = workdir / "x.mat"
    images = (np.arange(4 * 4 * 3 * 5) % 251).astype(np.uint8).reshape(4, 4, 3, 5)
    labels = (np.arange(5) % 10).reshape(5, 1)
    scipy.io.savemat(path, {"X": images, "y": labels}, do_compression=compressed)
    # the same bytes every run: scipy writes the time into the header text
    valid = b"MATLAB 5.0 MAT-file, written for fuzzing".ljust(116) + path.read_bytes()[116:]
    counter = iter(range(1 << 30))

    def read(data: bytes) -> None:
        path.write_bytes(data)
        scratch = workdir / f"scratch{next(counter)}"
        try:
            list(fmt.examples(Source("train", {"mat": (path,)}, options, features, scratch)))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    assert fuzz(read, valid, seed=41, budget=BUDGET, at_least=20) >= 20


#: Files whose dialect the sniffer must find: each delimiter, quoted delimiters and line
#: breaks, a BOM, CRLF, a wide header.
DIALECTS = [
    b"a;b;c\n1;2,5;x\n3;4;y\n",
    b'a\tb\n"x\ty"\t2\n3\t4\n',
    b'a|b|c\n"1|2"|3|4\n5|6|7\n',
    b'\xef\xbb\xbfname,"note, long"\r\nAda,"two\r\nlines"\r\nLee,ok\r\n',
    b",".join(b"c%d" % i for i in range(120)) + b"\n" + b",".join(b"1" for _ in range(120)) + b"\n",
]


@pytest.mark.parametrize("valid", DIALECTS, ids=["semicolon", "tab", "pipe", "bom-crlf", "wide"])
def test_csv_dialect_sniffing(workdir: Path, valid: bytes) -> None:
    """The sniffer and the type scan over mutated files: a dialect or one catalog error."""
    from catalog.formats.tables.csv_dialect import sniff
    from catalog.spec.infer.table_scan import scan

    path = workdir / "t.csv"

    def target(data: bytes) -> None:
        path.write_bytes(data)
        dialect = sniff(path)
        found = scan("csv", [path])
        assert found.dialect == dialect and len(found.columns) >= 1

    assert fuzz(target, valid, seed=43, budget=BUDGET / 2, at_least=20) >= 20
