"""Builder specs: malformed ones name the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

import catalog
from catalog.errors import DatasetNotFoundError, SpecError
from catalog.spec.load import load_spec

ROOT = Path(__file__).resolve().parents[2]
GOOD = (ROOT / "builders" / "mnist" / "builder.yaml").read_text()


def spec_with(tmp_path: Path, old: str, new: str) -> Path:
    assert old in GOOD
    (tmp_path / "builder.yaml").write_text(GOOD.replace(old, new, 1))
    return tmp_path


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("name: mnist", "name: Bad Name", "field 'name': invalid value 'Bad Name'"),
        ("version: 3.0.1", "version: 3", "field 'version': expected str, got 3"),
        (
            "    num_examples: 60000",
            "    num_examples: lots",
            "field 'splits.train.num_examples': expected int",
        ),
        (
            "    format: idx",
            "    format: feather",
            "field 'splits.train.format': unknown format 'feather'",
        ),
        (
            "{images: train_images,",
            "{images: nope,",
            "field 'splits.train.files.images': no download named 'nope'",
        ),
        (
            "label: {type: ClassLabel, num_classes: 10}",
            "label: {type: Label}",
            "field 'features': unknown feature type 'Label'",
        ),
        (
            "supervised_keys: [image, label]",
            "supervised_keys: [image, target]",
            "field 'supervised_keys'",
        ),
        ("name: mnist", "name: [oops", "not valid YAML"),
        ("  train:\n", "  train[0]:\n", "field 'splits.train[0]': split name 'train[0]' must"),
        ("  train:\n", "  2017:\n", "field 'splits.2017': split name 2017 must match"),
        ("  train:\n", "  on:\n", "field 'splits.True': split name True must match"),
        ("  train:\n", "  a/b:\n", "field 'splits.a/b': split name 'a/b' must match"),
        ("tags: [image,", "tags: [Image Classification,", "field 'tags': 'Image Classification'"),
        ("tags: [image, image-classification]", "tags: image", "field 'tags': expected list"),
    ],
)
def test_malformed_spec_names_file_and_field(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    folder = spec_with(tmp_path, old, new)
    with pytest.raises(SpecError, match=message.replace("[", r"\[").replace("{", r"\{")) as info:
        load_spec(folder)
    assert str(folder / "builder.yaml") in str(info.value)


def test_bad_checksum_line_names_file_and_line(tmp_path: Path) -> None:
    folder = spec_with(tmp_path, "name: mnist", "name: mnist")
    (folder / "checksums.tsv").write_text("# comment\nhttp://x/a.gz\t12\tnot-a-sha\n")
    with pytest.raises(SpecError, match=r"checksums.tsv:2: expected 'url<TAB>size<TAB>sha256"):
        load_spec(folder)


def test_builder_folder_by_path(tmp_path: Path) -> None:
    spec = load_spec(ROOT / "builders" / "kmnist")
    assert spec.downloads["train_images"].filename == "train-images-idx3-ubyte.gz"
    assert catalog.builder(ROOT / "builders" / "kmnist").name == "kmnist"
    with pytest.raises(DatasetNotFoundError, match="has no builder.yaml"):
        catalog.builder(tmp_path)


def test_list_datasets() -> None:
    assert catalog.list_datasets() == [
        "ag_news_subset", "beans", "binarized_mnist", "caltech101", "caltech_birds2011",
        "cars196", "cats_vs_dogs", "celeb_a", "cifar10", "cifar100", "cifar10_1", "clevr",
        "cmaterdb", "coco", "colorectal_histology", "deep_weeds", "diabetic_retinopathy_detection",
        "dmlab", "dsprites", "dtd",
        "emnist", "eurosat", "fashion_mnist", "food101", "glue", "horses_or_humans",
        "imagenet2012", "imagenet2012_real", "imagenet2012_subset", "imagenet_a", "imagenet_r",
        "imagenet_sketch", "imagenet_v2", "imagenette", "imdb_reviews", "iris", "kitti",
        "kmnist", "mnist", "mnist_corrupted", "oxford_flowers102", "oxford_iiit_pet",
        "patch_camelyon", "resisc45", "rock_paper_scissors", "smallnorb", "speech_commands",
        "spoken_digit",
        "squad", "stl10", "sun397", "svhn_cropped", "tf_flowers", "tiny_shakespeare", "titanic",
        "voc", "wine_quality", "yelp_polarity_reviews"
    ]  # fmt: skip


CIFAR = (ROOT / "builders" / "cifar100" / "builder.yaml").read_text()


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "member: cifar-100-binary/train.bin}",
            "member: ../train.bin}",
            "field 'splits.train.files.records.member': expected a relative path inside the "
            "archive",
        ),
        (
            "{download: archive, member: cifar-100-binary/train.bin}",
            "{download: archive, path: train.bin}",
            "field 'splits.train.files.records.path': unknown field; expected one of download, "
            "member",
        ),
        (
            "{records: {download: archive, member: cifar-100-binary/train.bin}}",
            "{records: [archive]}",
            "field 'splits.train.files.records': expected a download's name or {download: NAME, "
            "member: PATH}",
        ),
        (
            "{records: {download: archive, member: cifar-100-binary/train.bin}}",
            "{batches: archive}",
            "field 'splits.train.files.records': missing; format 'cifar_bin' reads records",
        ),
        (
            "      label_bytes: [coarse_label, label]",
            "      label_bytes: [coarse_label, label]\n      shape: [32, 32]",
            "field 'splits.train.options.shape': format 'cifar_bin' has no such option; "
            "options: label_bytes, names_files",
        ),
        (
            "label_bytes: [coarse_label, label]",
            "label_bytes: coarse_label",
            "field 'splits.train.options.label_bytes': expected list",
        ),
        (
            "label_bytes: [coarse_label, label]",
            "label_bytes: [label]",
            "field 'splits.train': format 'cifar_bin' gives examples of image, label (and "
            "optionally id); the spec's feature 'coarse_label' is not one of them",
        ),
        (
            "        coarse_label: {download: archive,",
            "        coarse: {download: archive,",
            "field 'splits.train': names_files: 'coarse' is not one of the label_bytes",
        ),
        (
            "        label: {download: archive, member: cifar-100-binary/fine_label_names.txt}",
            "        label: {download: photos, member: fine_label_names.txt}",
            "field 'splits.train.options.names_files.label': no download named 'photos'; "
            "downloads: archive",
        ),
        ("homepage: https", "hompage: https", "field 'hompage': unknown field; expected one of"),
        (
            "supervised_keys:",
            "default_config: big\nsupervised_keys:",
            "field 'default_config': given, but there are no configs",
        ),
    ],
)
def test_file_references_and_options_are_checked(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    assert old in CIFAR, old
    (tmp_path / "builder.yaml").write_text(CIFAR.replace(old, new, 1))
    with pytest.raises(SpecError) as info:
        load_spec(tmp_path)
    assert str(info.value).startswith(f"{tmp_path / 'builder.yaml'}: {message}"), str(info.value)


def test_configs_share_top_level_fields_and_replace_them() -> None:
    folder = ROOT / "builders" / "cmaterdb"
    bangla, telugu = load_spec(folder), load_spec(folder, "telugu")
    assert (bangla.config, telugu.config) == ("bangla", "telugu")
    assert bangla.full_name == "cmaterdb/bangla" and bangla.default_config == "bangla"
    assert list(bangla.configs) == ["bangla", "devanagari", "telugu"] == list(telugu.configs)
    assert bangla.features == telugu.features and bangla.version == "1.0.0"  # shared
    assert {s: x.num_examples for s, x in telugu.splits.items()} == {"train": 2500, "test": 500}
    assert "telugu-numerals/training-images.npz" in telugu.downloads["train"].url
    assert telugu.downloads["train"].size == 241764  # its checksums.tsv line
    with pytest.raises(DatasetNotFoundError, match="cmaterdb has no config 'tamil'; its configs"):
        load_spec(folder, "tamil")
    with pytest.raises(DatasetNotFoundError, match="mnist has no configs"):
        load_spec(ROOT / "builders" / "mnist", "x")


def test_a_config_error_names_the_config(tmp_path: Path) -> None:
    text = (ROOT / "builders" / "cmaterdb" / "builder.yaml").read_text()
    old = "test: {format: npz, files: {arrays: test}, num_examples: 500}"
    assert text.count(old) == 2
    (tmp_path / "builder.yaml").write_text(text.replace(old, old.replace("500", "-5")))
    load_spec(tmp_path)  # the default config is fine
    with pytest.raises(SpecError, match=r"field 'configs.devanagari.splits.test.num_examples'"):
        load_spec(tmp_path, "devanagari")


@pytest.mark.parametrize(
    ("request_", "name", "config", "version"),
    [
        ("cmaterdb", "cmaterdb", "bangla", "1.0.0"),
        ("cmaterdb/telugu", "cmaterdb", "telugu", "1.0.0"),
        ("cmaterdb/telugu:1.*", "cmaterdb", "telugu", "1.0.0"),
        ("cmaterdb:1.0.0", "cmaterdb", "bangla", "1.0.0"),
        ("mnist:3.0.1", "mnist", None, "3.0.1"),
        ("mnist:3.*", "mnist", None, "3.0.1"),
        ("mnist:3.0.*", "mnist", None, "3.0.1"),
        ("mnist:*", "mnist", None, "3.0.1"),
        (str(ROOT / "builders" / "cmaterdb"), "cmaterdb", "bangla", "1.0.0"),
        (str(ROOT / "builders" / "cmaterdb" / "devanagari"), "cmaterdb", "devanagari", "1.0.0"),
        (str(ROOT / "builders" / "mnist") + ":3.*", "mnist", None, "3.0.1"),
    ],
)
def test_name_config_version_requests(
    request_: str, name: str, config: str | None, version: str, tmp_path: Path
) -> None:
    b = catalog.builder(request_, data_dir=tmp_path)
    assert (b.name, b.config, b.version) == (name, config, version)
    expected = tmp_path / name / config / version if config else tmp_path / name / version
    assert b.data_path == expected


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        ("mnist:2.0.0", "mnist has no version 2.0.0: the version catalog has is 3.0.1 (ask for "
         "mnist:3.0.1, or give no version)"),
        ("cmaterdb/telugu:2.*", "cmaterdb/telugu has no version 2.*: the version catalog has "
         "is 1.0.0"),
        ("mnist:3.0", "'mnist:3.0': '3.0' is not a version; ask for an exact one (3.0.1) or a "
         "pattern (3.* or 3.0.*)"),
        ("mnist:3.*.1", "'mnist:3.*.1': '3.*.1' is not a version"),
        ("mnist/x", "mnist has no configs"),
        ("cmaterdb/tamil", "cmaterdb has no config 'tamil'; its configs: bangla, devanagari, "
         "telugu (default bangla)"),
        ("cmaterdbb/telugu", "no dataset named 'cmaterdbb/telugu'; did you mean cmaterdb?"),
    ],
)  # fmt: skip
def test_bad_requests_say_what_is_available(request_: str, message: str) -> None:
    with pytest.raises(DatasetNotFoundError) as info:
        catalog.builder(request_)
    assert str(info.value).startswith(message), str(info.value)


def test_a_builder_folder_path_wins_over_the_registry(tmp_path: Path) -> None:
    # A folder named like a registered dataset with a config, holding a builder.yaml.
    folder = tmp_path / "cmaterdb" / "telugu"
    folder.mkdir(parents=True)
    (folder / "builder.yaml").write_text(GOOD.replace("name: mnist", "name: other"))
    assert catalog.builder(str(folder)).name == "other"
    assert catalog.builder(folder).name == "other"


TITANIC = (ROOT / "builders" / "titanic" / "builder.yaml").read_text()
WINE = (ROOT / "builders" / "wine_quality" / "builder.yaml").read_text()


@pytest.mark.parametrize(
    ("text", "old", "new", "message"),
    [
        (TITANIC, 'missing: ["?"]', 'missing: "?"',
         "field 'splits.train.options.missing': expected list"),
        (TITANIC, 'survived: {"0": died', "survived: {0: [died]",
         "field 'splits.train.options.values.survived.0': expected a string"),
        (TITANIC, "        pclass: pclass\n", "        pclass: [pclass]\n",
         "field 'splits.train.options.columns.pclass': expected a string"),
        (WINE, "  white:\n", "  _white:\n",
         "a config name must be words of [A-Za-z0-9_] joined by '.'"),
        (WINE, 'delimiter: ";"', 'delimiter: ";;"', "options.delimiter must be one character"),
        (TITANIC, "        body: body\n", "",
         "field 'splits.train': format 'delimited' gives examples of"),
    ],
)  # fmt: skip
def test_new_option_kinds_and_config_names_are_checked(
    tmp_path: Path, text: str, old: str, new: str, message: str
) -> None:
    assert old in text
    (tmp_path / "builder.yaml").write_text(text.replace(old, new, 1))
    with pytest.raises(SpecError) as error:
        load_spec(tmp_path)
    assert message in str(error.value)


def test_floats_option_and_dotted_config_names() -> None:
    spec = load_spec(ROOT / "builders" / "tiny_shakespeare")
    assert spec.splits["validation"].options == {"cuts": [0.9, 0.5], "part": 1, "encoding": "utf-8"}
    assert catalog.builder("squad/v1.1").spec.config == "v1.1"
    assert catalog.builder("squad:3.*").spec.full_name == "squad/v1.1"
