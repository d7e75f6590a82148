"""Feature names in builder.yaml: the rule, and one clear error with a valid name to use.

The rule is TFDS's: words of letters (either case), digits and _, starting with a letter or
digit and holding a letter, joined by one '.', ' ', '-' or '/' (``FEATURE_NAME_RULE``), so
titanic's ``home.dest``, wine_quality's ``fixed acidity`` and ``pH``, celeb_a's
``5_o_Clock_Shadow`` and cats_vs_dogs's ``image/filename`` stay valid.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from catalog.errors import SpecError
from catalog.spec.load import FEATURE_NAME_RULE, load_spec
from catalog.spec.registry import builder_dir, list_datasets

RULE = re.compile(FEATURE_NAME_RULE)
LABEL = "  label: {type: ClassLabel, num_classes: 2}\n"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "catalog", *args],
        capture_output=True, text=True, timeout=120, env=os.environ,
    )  # fmt: skip


def builder(folder: Path, features: str, columns: str = "label: label") -> Path:
    """A builder folder `mine` with these features (YAML lines under ``features:``), read
    from a CSV file's `columns` (``feature: column`` pairs)."""
    folder.mkdir(parents=True)
    (folder / "builder.yaml").write_text(
        "name: mine\nversion: 1.0.0\nfeatures:\n" + features + "downloads:\n"
        "  file: {url: https://example.com/data.csv}\n"
        "splits:\n  train: {format: delimited, files: {file: file}, "
        f"options: {{columns: {{{columns}}}}}, num_examples: 1}}\n"
    )
    (folder / "checksums.tsv").write_text(
        "https://example.com/data.csv\t1\t" + "0" * 64 + "\tdata.csv\n"
    )
    return folder


def feature_names(features: object, prefix: str = "") -> list[str]:
    """Every feature name of a builder.yaml's features (nested too), as paths."""
    names: list[str] = []
    if not isinstance(features, dict):
        return names
    for name, value in features.items():
        names.append(f"{prefix}{name}")
        if isinstance(value, dict):
            inner = value if "type" not in value else value.get("features")
            if value.get("type") == "Sequence" and isinstance(value.get("feature"), dict):
                inner = value["feature"].get("features", value["feature"])
            names += feature_names(inner, f"{prefix}{name}/")
    return names


def test_every_registered_builder_keeps_to_the_rule() -> None:
    outside_lower_snake_case = set()
    for dataset in list_datasets():
        data = yaml.safe_load((builder_dir(dataset) / "builder.yaml").read_text())
        specs = [data, *(data.get("configs") or {}).values()]
        for spec in specs:
            for path in feature_names(spec.get("features")):
                assert RULE.fullmatch(path), (dataset, path)
                name = path.rsplit("/", 1)[-1]
                if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
                    outside_lower_snake_case.add(f"{dataset}:{path}")
    # Why the rule is wider than [a-z][a-z0-9_]*: TFDS-compatible names.
    assert {"titanic:home.dest", "wine_quality:features/pH"} <= outside_lower_snake_case


@pytest.mark.parametrize(
    "name",
    ["MyComment", "home.dest", "'fixed acidity'", "pH", "X", "x2", "sepal-length",
     "image/filename"],
)  # fmt: skip
def test_names_in_the_rule_load(tmp_path: Path, name: str) -> None:
    columns = f"{name}: text, label: label"
    folder = builder(tmp_path / "mine", f"  {name}: {{type: Text}}\n" + LABEL, columns)
    assert name.strip("'") in load_spec(folder).features


@pytest.mark.parametrize(
    ("yaml_name", "shown", "valid"),
    [
        ("'my//comment'", "'my//comment'", "my_comment"),
        ("'/comment'", "'/comment'", "comment"),
        ("_id", "'_id'", "id"),
        ("'1 2'", "'1 2'", "feature_1_2"),
        ("'_1st place'", "'_1st place'", "1st_place"),
        ("home..dest", "'home..dest'", "home_dest"),
        ("'trailing.'", "'trailing.'", "trailing"),
        ("'naïve'", "'naïve'", "na_ve"),
        ('"label\\n"', "'label\\n'", "label"),
        ("2017", "2017", "feature_2017"),
        ("'???'", "'???'", "feature"),
    ],
)
def test_a_name_outside_the_rule_is_one_error_with_a_valid_name(
    tmp_path: Path, yaml_name: str, shown: str, valid: str
) -> None:
    folder = builder(tmp_path / "mine", f"  {yaml_name}: {{type: Text}}\n" + LABEL)
    with pytest.raises(SpecError) as info:
        load_spec(folder)
    quote = "YAML reads it as int: quote it; " if shown == "2017" else ""
    assert str(info.value) == (
        f"{folder / 'builder.yaml'}: field 'features': feature name {shown} must be words of "
        "letters, digits and _, starting with a letter or digit and holding a letter, joined by "
        "one '.', ' ', '-' or '/' "
        f"({FEATURE_NAME_RULE}); {quote}rename it, e.g. to "
        f"{valid!r}"
    )
    assert RULE.fullmatch(valid)


def test_a_nested_name_is_shown_with_its_path(tmp_path: Path) -> None:
    folder = builder(tmp_path / "mine", "  meta: {'Bad  Name': {type: Text}}\n" + LABEL)
    with pytest.raises(SpecError, match=r"feature name 'meta/Bad  Name' must be .* 'Bad_Name'"):
        load_spec(folder)


def test_the_cli_shows_the_error_as_one_line(tmp_path: Path) -> None:
    folder = builder(tmp_path / "mine", "  on: {type: Text}\n" + LABEL)
    result = run("info", str(folder))
    assert result.returncode != 0
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert (
        f"{folder / 'builder.yaml'}: field 'features': feature name True must be words"
        in result.stderr
    )
    assert "YAML reads it as bool: quote it; rename it, e.g. to 'True'" in result.stderr
