"""Benchmark: prepare yelp_polarity_reviews- and speech_commands-shaped data, then read it.

Generates a yelp-shaped .tgz (``--rows`` CSV rows of ~600-character reviews) and a
speech_commands-shaped .tar.gz (``--clips`` one-second 16 kHz clips plus one minute of
background noise), serves them from 127.0.0.1 through the builder test harness, and runs the
real builders' specs: download -> extract -> read -> encode -> ArrayRecord. Reports prepare
time and rate, the peak resident memory of the preparing process (files are generated in
another process first; the readers stream, so it should stay flat as the data grows), and
random-access and iteration rates of the data sources.

    python benchmarks/bench_text_audio.py [--rows 200000] [--clips 3000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from catalog.api.builder import DatasetBuilder
from catalog.features.wav import write_wav
from catalog.spec.load import load_spec
from catalog.testing.harness import dummy_spec
from catalog.testing.http_server import LoopbackServer

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from make_dummy_data import write_tar_gz  # noqa: E402


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def yelp_files(folder: Path, rows: int) -> dict[str, int]:
    rng = np.random.default_rng(0)
    words = np.array(
        ["good", "bad", "food", "service", "staff", "great", "never", "again", '""quoted""', "meh"]
    )
    lines = []
    for i in range(rows):
        text = " ".join(rng.choice(words, 100))
        lines.append(f'"{1 + i % 2}","{text}"\n')
    data = "".join(lines).encode()
    write_tar_gz(folder / "yelp_review_polarity_csv.tgz", {
        "yelp_review_polarity_csv/train.csv": data,
        "yelp_review_polarity_csv/test.csv": data[: data.index(b"\n") + 1],
    })  # fmt: skip
    return {"train": rows, "test": 1}


def speech_files(folder: Path, clips: int) -> dict[str, int]:
    rng = np.random.default_rng(0)
    words = ["yes", "no", "cat", "up"]
    members = {
        f"{words[i % 4]}/{i:05d}_nohash_0.wav": write_wav(
            rng.integers(-3000, 3000, 16000, dtype=np.int16), 16000
        )
        for i in range(clips)
    }
    noise = rng.integers(-3000, 3000, 60 * 16000, dtype=np.int16)
    members["_background_noise_/white_noise.wav"] = write_wav(noise, 16000)
    members["_background_noise_/running_tap.wav"] = write_wav(noise[:32000], 16000)
    members["validation_list.txt"] = b"yes/00000_nohash_0.wav\n"
    members["testing_list.txt"] = b"no/00001_nohash_0.wav\n"
    write_tar_gz(folder / "speech_commands_v0.02.tar.gz", members)
    write_tar_gz(
        folder / "speech_commands_test_set_v0.02.tar.gz",
        {"up/a.wav": members["yes/00000_nohash_0.wav"]},
    )
    windows = len(range(0, len(noise) - 16000, 8000))
    return {"train": clips - 2 + windows, "validation": 1 + 2, "test": 1}


MAKERS = {"yelp_polarity_reviews": yelp_files, "speech_commands": speech_files}


def prepare(name: str, tmp: Path, counts: dict[str, int]) -> None:
    spec = load_spec(ROOT / "builders" / name)
    with LoopbackServer() as server:
        test_spec = dummy_spec(spec, server, tmp / f"{name}-files", counts)
        builder = DatasetBuilder(test_spec, data_dir=tmp / "data")
        start = time.perf_counter()
        builder.download_and_prepare(download_dir=tmp / "downloads")
        took = time.perf_counter() - start
    total = sum(counts.values())
    print(f"{name}: prepared {total} examples in {took:.2f} s ({total / took:,.0f} examples/s); "
          f"peak RSS of the preparing process {peak_mb():.0f} MB")  # fmt: skip
    ds = builder.as_data_source("train")
    rows = np.random.default_rng(1).integers(0, len(ds), 2000)
    start = time.perf_counter()
    for i in rows:
        ds[int(i)]
    access = len(rows) / (time.perf_counter() - start)
    start = time.perf_counter()
    seen = sum(1 for _ in ds)
    iteration = seen / (time.perf_counter() - start)
    print(f"{name}: random ds[i] {access:,.0f} examples/s; iteration {iteration:,.0f} examples/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--clips", type=int, default=3000)
    parser.add_argument("--phase", choices=["make", "prepare"], help=argparse.SUPPRESS)
    parser.add_argument("--name", help=argparse.SUPPRESS)
    parser.add_argument("--tmp", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase == "make":
        folder = args.tmp / f"{args.name}-files"
        folder.mkdir()
        size = args.rows if args.name == "yelp_polarity_reviews" else args.clips
        print(json.dumps(MAKERS[args.name](folder, size)))
        return
    if args.phase == "prepare":
        prepare(args.name, args.tmp, json.loads(sys.stdin.read()))
        return
    with tempfile.TemporaryDirectory() as tmp:
        for name in MAKERS:
            common = [sys.executable, __file__, "--name", name, "--tmp", tmp,
                      "--rows", str(args.rows), "--clips", str(args.clips)]  # fmt: skip
            made = subprocess.run([*common, "--phase", "make"], capture_output=True, text=True,
                                  check=True)  # fmt: skip
            subprocess.run([*common, "--phase", "prepare"], input=made.stdout, text=True,
                           check=True)  # fmt: skip


if __name__ == "__main__":
    main()
