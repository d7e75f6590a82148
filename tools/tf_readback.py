"""Check that TensorFlow reads what `catalog export` writes, with equal values.

Two steps, two virtual environments (catalog never depends on TensorFlow):

    # 1. with catalog: import the TFDS fixture, export it both ways, dump catalog's values
    python tools/tf_readback.py write /tmp/readback
    # 2. with tensorflow-cpu + tensorflow-datasets: read the exports, compare
    /work/venvs/tf/bin/python tools/tf_readback.py check /tmp/readback

Step 2 reads the TFRecord export with tf.data.TFRecordDataset + tf.io.parse_single_example
(a parse spec built from the exported features.json) and the TFDS export with
tfds.builder_from_directory(...).as_dataset, and compares every value with catalog's.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "tf" / "tfds_tfrecord" / "tiny_features" / "1.2.0"
MNIST = ROOT / "tests" / "fixtures" / "tf" / "fashion_mnist_style.tfrecord"


def plain(value: Any) -> Any:
    """Nested lists / numbers / strings (JPEG pixels excepted: decoders differ)."""
    if hasattr(value, "to_list"):
        return value.to_list()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "SO":
            return [v.decode() if isinstance(v, bytes) else v for v in value.tolist()]
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.generic):
        return value.item()
    return value


def write(out: Path) -> None:
    import catalog
    from catalog.testing.harness import run_builder

    env = {"CATALOG_DATA_DIR": str(out / "data")}
    cli = [sys.executable, "-m", "catalog"]
    run = lambda *a: subprocess.run([*cli, *a], check=True, env={**env, "PATH": ""})  # noqa: E731
    run("import", str(FIXTURE), "--overwrite")
    imported = out / "data" / "tiny_features" / "1.2.0"
    # a raw-image dataset from TFRecords through the tfrecord source format
    folder = out / "mnist_style"
    (folder / "dummy_data").mkdir(parents=True, exist_ok=True)
    (folder / "dummy_data" / MNIST.name).write_bytes(MNIST.read_bytes())
    (folder / "builder.yaml").write_text(
        "name: mnist_style\nversion: 1.0.0\nfeatures:\n"
        "  image: {type: Image, shape: [28, 28, 1]}\n"
        "  label: {type: ClassLabel, num_classes: 10}\n"
        f"downloads:\n  train: {{url: 'https://example.org/{MNIST.name}'}}\n"
        "splits:\n  train:\n    format: tfrecord\n    files: {records: train}\n"
        "    options: {keys: {image: image_raw, label: label}, "
        "shapes: {image: 'height,width,depth'}}\n    num_examples: 20\n"
    )
    ds = run_builder(folder, out / "mnist_run", num_examples={"train": 20})
    prepared = ds["train"]._folder
    values = {}
    for name, path in (("tiny_features", imported), ("mnist_style", prepared)):
        for fmt in ("tfrecord", "tfds"):
            run(
                "export",
                str(path),
                "--format",
                fmt,
                "-o",
                str(out / f"{name}-{fmt}"),
                "--overwrite",
            )
        sources = catalog.data_source(str(path))
        values[name] = {
            split: [plain({k: v for k, v in ex.items() if k != "photo"}) for ex in src]
            for split, src in sources.items()
        }
    (out / "catalog_values.json").write_text(json.dumps(values))
    print(f"wrote exports and catalog's values into {out}")


def _parse_spec(features: dict[str, Any], tf: Any, prefix: str = "") -> dict[str, Any]:
    """A parse_single_example spec from TFDS's features.json (what a tf.data user writes)."""
    spec = {}
    for name, f in features["featuresDict"]["features"].items():
        key = f"{prefix}{name}"
        cls = f["pythonClassName"].rsplit(".", 1)[1]
        if cls == "FeaturesDict":
            spec.update(_parse_spec(f, tf, f"{key}/"))
        elif cls in ("Image", "Text"):
            spec[key] = tf.io.FixedLenFeature([], tf.string)
        elif cls == "ClassLabel":
            spec[key] = tf.io.FixedLenFeature([], tf.int64)
        elif cls in ("Tensor", "Scalar", "BBoxFeature"):
            t = f.get("tensor") or f.get("boundingBox")
            dims = [int(d) for d in t.get("shape", {}).get("dimensions", [])]
            dtype = tf.float32 if t["dtype"].startswith("float") else tf.int64
            if -1 in dims:
                spec[key] = tf.io.VarLenFeature(dtype)
            else:
                spec[key] = tf.io.FixedLenFeature(dims, dtype)
        else:  # Sequence: variable-length lists (ragged parts included)
            spec[key] = None
    return spec


def check(out: Path) -> None:
    import tensorflow as tf
    import tensorflow_datasets as tfds

    values = json.loads((out / "catalog_values.json").read_text())
    problems = 0
    for name, splits in values.items():
        root = out / f"{name}-tfds" / name
        version_dir = next(root.iterdir())
        builder = tfds.builder_from_directory(str(version_dir))
        features = json.loads((version_dir / "features.json").read_text())
        spec = {
            k: v for k, v in _parse_spec(features, tf).items() if v is not None and k != "photo"
        }
        for split, want in splits.items():
            got = [
                plain({k: v for k, v in ex.items() if k != "photo"})
                for ex in tfds.as_numpy(builder.as_dataset(split=split, shuffle_files=False))
            ]
            same = sum(_close(g, w) for g, w in zip(got, want, strict=True))
            print(f"{name} {split}: tfds.builder_from_directory: {same}/{len(want)} examples equal")
            problems += len(want) - same
            file = out / f"{name}-tfrecord" / f"{name}-{split}.tfrecord-00000-of-00001"
            same = 0
            for raw, w in zip(tf.data.TFRecordDataset(str(file)), want, strict=True):
                ex = tf.io.parse_single_example(raw, spec)
                ok = True
                for key, value in ex.items():
                    if isinstance(value, tf.SparseTensor):
                        value = tf.sparse.to_dense(value)
                    target = w
                    for part in key.split("/"):
                        target = target[part]
                    if (
                        features["featuresDict"]["features"]
                        .get(key, {})
                        .get("pythonClassName", "")
                        .endswith("Image")
                    ):
                        decoded = tf.io.decode_image(value).numpy()
                        ok &= decoded.tolist() == target
                    elif isinstance(target, str):
                        ok &= value.numpy().decode() == target
                    else:
                        ok &= _close(np.asarray(value.numpy()).tolist(), target)
                same += ok
            reader = "TFRecordDataset + parse_single_example"
            print(f"{name} {split}: {reader}: {same}/{len(want)} examples equal")
            problems += len(want) - same
    print(
        "OK: TensorFlow reads catalog's exports with equal values"
        if not problems
        else f"{problems} differences"
    )
    sys.exit(1 if problems else 0)


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) or isinstance(b, float):
        return bool(np.isclose(a, b, rtol=1e-6, atol=0))
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a) == bool(b)
    return a == b


if __name__ == "__main__":
    {"write": write, "check": check}[sys.argv[1]](Path(sys.argv[2]))
