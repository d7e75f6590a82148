"""`catalog list` and `catalog info`, run as subprocesses with every socket refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import catalog
from catalog.info.dataset_info import DatasetInfo, ShardInfo, SplitInfo

from dummy_images import MNIST_C_CONFIGS

#: Run the CLI with socket connections failing: `list` and `info` must never need the network.
#: Also prints which heavy modules got imported (neither command needs requests or Pillow).
OFFLINE = textwrap.dedent("""\
    import socket, sys
    def refuse(*args, **kwargs):
        raise OSError("network access in an offline command")
    socket.socket.connect = socket.socket.connect_ex = refuse
    socket.create_connection = refuse
    from catalog.cli import main
    code = main(sys.argv[1:])
    print("imported:", sorted({"requests", "PIL"} & set(sys.modules)), file=sys.stderr)
    raise SystemExit(code)
""")


def run(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CATALOG_DATA_DIR": str(data_dir)}
    return subprocess.run(
        [sys.executable, "-c", OFFLINE, *args],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    assert result.stderr == "imported: []\n", result.stderr
    return result.stdout


FASHION_MNIST = """\
fashion_mnist 3.0.1

  Fashion-MNIST is a dataset of Zalando's article images consisting of a training set of 60,000
  examples and a test set of 10,000 examples. Each example is a 28x28 grayscale image,
  associated with a label from 10 classes.

homepage:        https://github.com/zalandoresearch/fashion-mnist
license:         MIT
tags:            image, image-classification
supervised keys: (image, label)
download size:   29.4 MiB (4 files)
prepared:        no (would be at {data}/fashion_mnist/3.0.1)

features:
  image  Image       (28, 28, 1)  uint8  raw
  label  ClassLabel  ()           int64  10 classes: T-shirt/top, Trouser, Pullover, ..., Ankle boot

splits:
  train  60,000 examples
  test   10,000 examples

citation:
  @article{DBLP:journals/corr/abs-1708-07747,
    author  = {Han Xiao and Kashif Rasul and Roland Vollgraf},
    title   = {Fashion-MNIST: a Novel Image Dataset for Benchmarking Machine Learning Algorithms},
    journal = {CoRR},
    volume  = {abs/1708.07747},
    year    = {2017},
    url     = {http://arxiv.org/abs/1708.07747},
  }
"""


def test_info_fashion_mnist_full_output(tmp_path: Path) -> None:
    expected = FASHION_MNIST.replace("{data}", str(tmp_path))
    assert ok(run("info", "fashion_mnist", data_dir=tmp_path)) == expected


def test_info_json_is_one_document(tmp_path: Path) -> None:
    data = json.loads(ok(run("info", "fashion_mnist", "--json", data_dir=tmp_path)))
    assert list(data) == [
        "name", "config", "version", "description", "config_description", "homepage",
        "citation", "license", "features", "supervised_keys", "tags", "splits", "downloads",
        "record_format", "shard_options", "builder", "configs", "default_config",
        "download_size", "prepared", "data_path", "prepared_size",
    ]  # fmt: skip
    assert data["features"] == catalog.builder("fashion_mnist").info.features.to_json()
    assert data["features"]["features"]["label"]["names"][-1] == "Ankle boot"
    assert data["splits"]["train"]["num_examples"] == 60000
    assert data["supervised_keys"] == ["image", "label"] and data["configs"] == []
    assert data["config"] is None and data["default_config"] is None
    assert data["download_size"] == 30878645
    assert data["prepared"] is False and data["prepared_size"] is None
    assert data["data_path"] == str(tmp_path / "fashion_mnist" / "3.0.1")


def test_info_of_a_prepared_dataset(tmp_path: Path) -> None:
    # A prepared dataset as `catalog info` sees it: dataset_info.json and the shards.
    folder = tmp_path / "mnist" / "3.0.1"
    folder.mkdir(parents=True)
    spec_info = catalog.builder("mnist").info
    shards = {}
    for name, size in (("train", 3000), ("test", 1000)):
        file = f"mnist-{name}.array_record-00000-of-00001"
        (folder / file).write_bytes(b"\0" * size)
        count = spec_info.splits[name].num_examples
        shards[name] = SplitInfo(name, count, (ShardInfo(file, count, size, "0" * 64),))
    DatasetInfo(**{**vars(spec_info), "splits": shards}).write(folder)
    total = sum(p.stat().st_size for p in folder.iterdir())

    text = ok(run("info", "mnist", data_dir=tmp_path))
    assert f"\nprepared:        yes, {total / 1024:.1f} KiB in {folder}\n" in text
    assert "\n  train  60,000 examples  2.9 KiB\n  test   10,000 examples  1000 B\n" in text
    data = json.loads(ok(run("info", "mnist", "--json", data_dir=tmp_path)))
    assert data["prepared"] is True and data["prepared_size"] == total
    assert data["splits"]["train"]["shards"][0]["num_bytes"] == 3000


def test_info_of_a_builder_folder_by_path(tmp_path: Path) -> None:
    folder = Path(__file__).resolve().parents[2] / "builders" / "kmnist"
    text = ok(run("info", str(folder), data_dir=tmp_path))
    assert text.startswith("kmnist 3.0.1\n")
    assert "10 classes: o, ki, su, tsu, na, ha, ma, ya, re, wo\n" in text


def test_info_of_an_unknown_dataset_is_a_usage_error(tmp_path: Path) -> None:
    result = run("info", "fashion_mnst", data_dir=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith(
        "catalog: error: no dataset named 'fashion_mnst'; did you mean fashion_mnist?"
    )


LIST = """\
ag_news_subset                               1.0.0  train 120000, test 7600                               11.2 MiB to download
beans                                        0.1.0  train 1034, validation 133, test 128                  171.7 MiB to download
binarized_mnist                              1.0.0  train 50000, validation 10000, test 10000             104.7 MiB to download
caltech101                                   3.0.2  train 3060, test 6084                                 131.0 MiB to download
caltech_birds2011                            0.2.0  train 5994, test 5794                                 1.1 GiB to download
cars196                                      2.1.0  train 8144, test 8041                                 1.8 GiB to download
cats_vs_dogs                                 4.0.1  train 23262                                           786.7 MiB to download
celeb_a                                      2.1.0  train 162770, validation 19867, test 19962            1.4 GiB to download
cifar10                                      3.0.2  train 50000, test 10000                               162.2 MiB to download
cifar100                                     3.0.2  train 50000, test 10000                               160.7 MiB to download
cifar10_1/v4                                 1.1.0  test 2021                                             5.9 MiB to download                     (default config)
cifar10_1/v6                                 1.1.0  test 2000                                             5.9 MiB to download
clevr                                        3.1.0  train 70000, validation 15000, test 15000             17.7 GiB to download
cmaterdb/bangla                              1.0.0  train 5000, test 1000                                 573.8 KiB to download                   (default config)
cmaterdb/devanagari                          1.0.0  train 2500, test 500                                  275.3 KiB to download
cmaterdb/telugu                              1.0.0  train 2500, test 500                                  283.9 KiB to download
coco/2017                                    1.1.0  train 118287, validation 5000, test 40670             25.2 GiB to download                    (default config)
colorectal_histology                         2.0.0  train 5000                                            246.1 MiB to download
deep_weeds                                   3.0.0  train 17509                                           469.3 MiB to download
diabetic_retinopathy_detection/original      3.0.0  sample 10, train 35126, validation 10906, test 42670  1.1 MiB to download + 4 by hand         (default config)
diabetic_retinopathy_detection/1M            3.0.0  sample 10, train 35126, validation 10906, test 42670  1.1 MiB to download + 4 by hand
diabetic_retinopathy_detection/250K          3.0.0  sample 10, train 35126, validation 10906, test 42670  1.1 MiB to download + 4 by hand
diabetic_retinopathy_detection/btgraham-300  3.0.0  sample 10, train 35126, validation 10906, test 42670  1.1 MiB to download + 4 by hand
dmlab                                        2.0.1  train 65550, validation 22628, test 22735             2.8 GiB to download
dsprites                                     2.0.0  train 737280                                          26.7 MiB to download
dtd                                          3.0.1  train 1880, validation 1880, test 1880                596.3 MiB to download
emnist/byclass                               3.1.0  train 697932, test 116323                             535.7 MiB to download                   (default config)
emnist/bymerge                               3.1.0  train 697932, test 116323                             535.7 MiB to download
emnist/balanced                              3.1.0  train 112800, test 18800                              535.7 MiB to download
emnist/letters                               3.1.0  train 88800, test 14800                               535.7 MiB to download
emnist/digits                                3.1.0  train 240000, test 40000                              535.7 MiB to download
emnist/mnist                                 3.1.0  train 60000, test 10000                               535.7 MiB to download
eurosat/rgb                                  2.0.0  train 27000                                           89.9 MiB to download                    (default config)
fashion_mnist                                3.0.1  train 60000, test 10000                               29.4 MiB to download
food101                                      2.0.0  train 75750, validation 25250                         4.7 GiB to download
glue/cola                                    2.0.0  train 8551, validation 1043, test 1063                368.1 KiB to download                   (default config)
glue/sst2                                    2.0.0  train 67349, validation 872, test 1821                7.1 MiB to download
horses_or_humans                             3.0.0  train 1027, test 256                                  153.6 MiB to download
imagenet2012                                 5.1.0  train 1281167, validation 50000, test 100000          144.0 GiB, manual download + 1 by hand
imagenet2012_real                            1.0.0  validation 50000                                      6.3 GiB, manual download
imagenet2012_subset/1pct                     5.0.0  train 12811, validation 50000                         144.0 GiB, manual download              (default config)
imagenet2012_subset/10pct                    5.0.0  train 128116, validation 50000                        144.0 GiB, manual download
imagenet_a                                   0.1.0  test 7500                                             655.7 MiB to download
imagenet_r                                   0.2.0  test 30000                                            2.0 GiB to download
imagenet_sketch                              1.0.0  test 50889                                            7.1 GiB to download
imagenet_v2/matched-frequency                3.0.0  test 10000                                            1.2 GiB to download                     (default config)
imagenet_v2/threshold-0.7                    3.0.0  test 10000                                            1.2 GiB to download
imagenet_v2/topimages                        3.0.0  test 10000                                            1.2 GiB to download
imagenette/full-size-v2                      1.0.0  train 9469, validation 3925                           1.5 GiB to download                     (default config)
imagenette/320px-v2                          1.0.0  train 9469, validation 3925                           325.8 MiB to download
imagenette/160px-v2                          1.0.0  train 9469, validation 3925                           94.4 MiB to download
imagenette/full-size                         1.0.0  train 12894, validation 500                           1.4 GiB to download
imagenette/320px                             1.0.0  train 12894, validation 500                           325.5 MiB to download
imagenette/160px                             1.0.0  train 12894, validation 500                           94.2 MiB to download
imdb_reviews/plain_text                      1.0.0  train 25000, test 25000, unsupervised 50000           80.2 MiB to download                    (default config)
iris                                         2.1.0  train 150                                             3.7 KiB to download
kitti                                        3.3.0  train 6347, validation 423, test 711                  11.7 GiB to download
kmnist                                       3.0.1  train 60000, test 10000                               20.3 MiB to download
mnist                                        3.0.1  train 60000, test 10000                               11.1 MiB to download
mnist_corrupted/identity                     1.0.0  train 60000, test 10000                               235.2 MiB to download                   (default config)
mnist_corrupted/shot_noise                   1.0.0  train 60000, test 10000                               235.2 MiB to download
mnist_corrupted/impulse_noise                1.0.0  train 60000, test 10000                               235.2 MiB to download
mnist_corrupted/glass_blur                   1.0.0  train 60000, test 10000                               235.2 MiB to download
mnist_corrupted/motion_blur                  1.0.0  train 60000, test 10000                               235.2 MiB to download
mnist_corrupted/shear                        1.0.0  train 60000, test 10000                               235.2 MiB to download
mnist_corrupted/scale                        1.0.0  train 60000, test 10000                               235.2 MiB to download
mnist_corrupted/rotate                       1.0.0  train 60000, test 10000                               235.2 MiB to download
mnist_corrupted/brightness                   1.0.0  train 60000, test 10000                               235.2 MiB to download
mnist_corrupted/translate                    1.0.0  train 60000, test 10000                               235.2 MiB to download
mnist_corrupted/stripe                       1.0.0  train 60000, test 10000                               235.2 MiB to download
mnist_corrupted/fog                          1.0.0  train 60000, test 10000                               235.2 MiB to download
mnist_corrupted/spatter                      1.0.0  train 60000, test 10000                               235.2 MiB to download
mnist_corrupted/dotted_line                  1.0.0  train 60000, test 10000                               235.2 MiB to download
mnist_corrupted/zigzag                       1.0.0  train 60000, test 10000                               235.2 MiB to download
mnist_corrupted/canny_edges                  1.0.0  train 60000, test 10000                               235.2 MiB to download
oxford_flowers102                            2.1.1  train 1020, validation 1020, test 6149                328.9 MiB to download
oxford_iiit_pet                              4.0.0  train 3680, test 3669                                 773.5 MiB to download
patch_camelyon                               2.0.0  test 32768, train 262144, validation 32768            7.5 GiB to download
resisc45                                     3.0.0  train 31500                                           1 file placed by hand
rock_paper_scissors                          3.0.0  train 2520, test 372                                  219.5 MiB to download
smallnorb                                    2.0.0  train 24300, test 24300                               250.6 MiB to download
speech_commands                              0.0.3  train 85511, validation 10102, test 4890              2.4 GiB to download
spoken_digit                                 1.0.9  train 2500                                            11.4 MiB to download
squad/v1.1                                   3.0.0  train 87599, validation 10570                         33.5 MiB to download                    (default config)
stl10                                        1.0.0  train 5000, test 8000, unlabelled 100000              2.5 GiB to download
sun397/tfds                                  4.0.0  train 76127, validation 10875, test 21750             36.4 GiB to download                    (default config)
sun397/standard-part1-120k                   4.0.0  train 19850, test 19850                               36.4 GiB to download
sun397/standard-part2-120k                   4.0.0  train 19850, test 19850                               36.4 GiB to download
sun397/standard-part3-120k                   4.0.0  train 19850, test 19850                               36.4 GiB to download
sun397/standard-part4-120k                   4.0.0  train 19850, test 19850                               36.4 GiB to download
sun397/standard-part5-120k                   4.0.0  train 19850, test 19850                               36.4 GiB to download
sun397/standard-part6-120k                   4.0.0  train 19850, test 19850                               36.4 GiB to download
sun397/standard-part7-120k                   4.0.0  train 19850, test 19850                               36.4 GiB to download
sun397/standard-part8-120k                   4.0.0  train 19850, test 19850                               36.4 GiB to download
sun397/standard-part9-120k                   4.0.0  train 19850, test 19850                               36.4 GiB to download
sun397/standard-part10-120k                  4.0.0  train 19850, test 19850                               36.4 GiB to download
svhn_cropped                                 3.1.0  train 73257, test 26032, extra 531131                 1.5 GiB to download
tf_flowers                                   3.0.1  train 3670                                            218.2 MiB to download
tiny_shakespeare                             1.0.0  train 1, validation 1, test 1                         1.1 MiB to download
titanic                                      4.0.0  train 1309                                            115.0 KiB to download
voc/2007                                     5.0.0  train 2501, validation 2510, test 4952                868.8 MiB to download                   (default config)
wine_quality/white                           1.0.0  train 4898                                            258.2 KiB to download                   (default config)
wine_quality/red                             1.0.0  train 1599                                            82.2 KiB to download
yelp_polarity_reviews                        0.2.0  train 560000, test 38000                              158.7 MiB to download
"""  # noqa: E501


def test_list_shows_every_dataset_from_the_specs(tmp_path: Path) -> None:
    assert ok(run("list", data_dir=tmp_path)) == LIST
    assert not list(tmp_path.iterdir())  # nothing written, nothing prepared


def test_list_and_info_say_which_files_are_a_manual_download(tmp_path: Path) -> None:
    listed = ok(run("list", "imagenet2012", data_dir=tmp_path)).splitlines()
    assert "144.0 GiB, manual download" in listed[0] and "to download" not in listed[0]
    info = ok(run("info", "imagenet2012_real", data_dir=tmp_path))
    assert "(3 files; 6.3 GiB in 1 to download by hand into the manual dir)" in info


def test_list_is_the_same_read_from_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first listing loads every spec and writes the index; the next ones read it
    (catalog.spec.index): the same lines, the same JSON, and no YAML or NumPy imported."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    data = tmp_path / "data"
    first = [ok(run("list", data_dir=data)), ok(run("list", "--json", data_dir=data))]
    assert list((tmp_path / "cache" / "catalog").glob("list-index-*.json"))
    assert [ok(run("list", data_dir=data)), ok(run("list", "--json", data_dir=data))] == first
    assert first[0] == LIST
    probe = textwrap.dedent("""\
        import runpy, sys
        sys.argv = ["catalog", "list"]
        try:
            runpy.run_module("catalog", run_name="__main__")
        except SystemExit:
            pass
        print(sorted({"yaml", "numpy"} & set(sys.modules)), file=sys.stderr)
    """)
    env = {**os.environ, "CATALOG_DATA_DIR": str(data)}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.stdout == LIST and done.stderr == "[]\n", done.stderr


def test_list_json(tmp_path: Path) -> None:
    data = json.loads(ok(run("list", "--json", data_dir=tmp_path)))
    assert [d["name"] for d in data] == catalog.list_datasets()
    by_name = {d["name"]: d for d in data}
    assert by_name["fashion_mnist"] == {
        "name": "fashion_mnist",
        "version": "3.0.1",
        "tags": ["image", "image-classification"],
        "configs": [],
        "default_config": None,
        "splits": {"train": 60000, "test": 10000},
        "download_size": 30878645,
        "num_downloads": 4,
    }
    # A dataset with configs: their names, and the default config's splits and downloads.
    assert by_name["cmaterdb"] == {
        "name": "cmaterdb",
        "version": "1.0.0",
        "tags": ["image", "image-classification"],
        "configs": ["bangla", "devanagari", "telugu"],
        "default_config": "bangla",
        "splits": {"train": 5000, "test": 1000},
        "download_size": 489289 + 98295,
        "num_downloads": 2,
    }


def test_list_filters_by_tag_and_search_word(tmp_path: Path) -> None:
    names = [line.split()[0] for line in ok(run("list", "mnist", data_dir=tmp_path)).splitlines()]
    emnist = ["byclass", "bymerge", "balanced", "letters", "digits", "mnist"]
    assert names == [
        "binarized_mnist", *(f"emnist/{c}" for c in emnist), "fashion_mnist", "kmnist", "mnist",
        *(f"mnist_corrupted/{c}" for c in MNIST_C_CONFIGS),
    ]  # fmt: skip
    # The search word also matches descriptions, case-insensitively.
    found = ok(run("list", "TELUGU", data_dir=tmp_path))
    assert [line.split()[0] for line in found.splitlines()] == [
        "cmaterdb/bangla", "cmaterdb/devanagari", "cmaterdb/telugu"
    ]  # fmt: skip
    tagged = json.loads(
        ok(run("list", "--tag", "image-classification", "--json", data_dir=tmp_path))
    )
    image_classification = [d["name"] for d in tagged]
    assert "voc" not in image_classification and "speech_commands" not in image_classification
    assert {"mnist", "cifar10", "beans", "emnist", "stl10"} <= set(image_classification)
    audio = ok(run("list", "--tag", "audio", data_dir=tmp_path))
    assert [line.split()[0] for line in audio.splitlines()] == ["speech_commands", "spoken_digit"]
    detection = ok(run("list", "--tag", "object-detection", data_dir=tmp_path))
    assert [line.split()[0] for line in detection.splitlines()] == [
        "coco/2017",
        "kitti",
        "voc/2007",
    ]
    unknown = run("list", "--tag", "image", "--tag", "no-such-tag", data_dir=tmp_path)
    assert unknown.returncode == 2 and unknown.stdout == ""  # a typo, said so (not an empty list)
    assert "no dataset has the tag 'no-such-tag'; the tags are " in unknown.stderr


def test_info_of_a_dataset_with_configs(tmp_path: Path) -> None:
    text = ok(run("info", "cmaterdb", data_dir=tmp_path))
    assert text.startswith("cmaterdb/bangla 1.0.0\n")
    assert "\n  Config bangla: Handwritten Bangla numerals (5,000 train, 1,000 test).\n" in text
    assert f"prepared:        no (would be at {tmp_path}/cmaterdb/bangla/1.0.0)\n" in text
    assert text.endswith(
        "configs:\n"
        "  bangla      (default)  Handwritten Bangla numerals (5,000 train, 1,000 test).\n"
        "  devanagari             Handwritten Devanagari numerals (2,500 train, 500 test).\n"
        "  telugu                 Handwritten Telugu numerals (2,500 train, 500 test).\n"
    )
    telugu = ok(run("info", "cmaterdb/telugu:1.*", data_dir=tmp_path))
    assert telugu.startswith("cmaterdb/telugu 1.0.0\n")
    assert "\n  train  2,500 examples\n  test   500 examples\n" in telugu
    data = json.loads(ok(run("info", "cmaterdb/telugu", "--json", data_dir=tmp_path)))
    assert (data["name"], data["config"], data["default_config"]) == (
        "cmaterdb",
        "telugu",
        "bangla",
    )
    assert data["configs"] == ["bangla", "devanagari", "telugu"]
    assert data["data_path"] == str(tmp_path / "cmaterdb" / "telugu" / "1.0.0")
    assert data["download_size"] == 241764 + 48946


def test_info_of_an_unknown_config_or_version_is_a_usage_error(tmp_path: Path) -> None:
    result = run("info", "cmaterdb/tamil", data_dir=tmp_path)
    assert result.returncode == 2 and result.stderr.startswith(
        "catalog: error: cmaterdb has no config 'tamil'; its configs: bangla, devanagari, "
        "telugu (default bangla)\n"
    )
    result = run("info", "mnist:2.0.0", data_dir=tmp_path)
    assert result.returncode == 2 and "mnist has no version 2.0.0" in result.stderr
    assert "3.0.1" in result.stderr


def test_help_lists_info() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "catalog", "--help"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0 and "info" in result.stdout
    result = subprocess.run(
        [sys.executable, "-m", "catalog", "info", "--help"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert "--json" in result.stdout and "CATALOG_DATA_DIR" in result.stdout


def test_info_shows_audio_and_unlabelled_class_label_features(tmp_path: Path) -> None:
    digits = ok(run("info", "spoken_digit", data_dir=tmp_path))
    assert "  audio           Audio       (None,)  int64  wav, 8000 Hz\n" in digits
    assert "  audio/filename  Text        ()       str\n" in digits  # TFDS's name
    imdb = ok(run("info", "imdb_reviews", data_dir=tmp_path))
    assert "  label  ClassLabel  ()  int64  2 classes (-1: no label): neg, pos\n" in imdb
    wine = ok(run("info", "wine_quality/red", data_dir=tmp_path))
    assert "    sulphates             Scalar        ()  float64\n" in wine


def test_info_of_a_name_found_nowhere_says_where_it_looked(tmp_path: Path) -> None:
    """Without --data-dir: the data dir it looked in ($CATALOG_DATA_DIR here) and how to
    point it elsewhere, for a dataset prepared from files somewhere else."""
    result = run("info", "people_from_files", data_dir=tmp_path / "mine")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    line = result.stderr.splitlines()[0]
    assert "no dataset named 'people_from_files'" in line, line
    assert f"prepared in the data dir {tmp_path / 'mine'};" in line, line
    assert "--data-dir DIR or $CATALOG_DATA_DIR" in line, line
