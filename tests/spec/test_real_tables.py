"""Real tables people publish (tests/data/real_tables/, PROVENANCE.md says where each comes
from) prepared as a user would, and compared cell for cell and name for name with
``pandas.read_csv`` given the same options a pandas user needs (skip the count line, no
header row, the delimiter, ``NA`` as missing), so what catalog stores is what pandas reads.

A missing value is NaN on both sides, or, in a column catalog keeps without nulls (text),
the ``fill`` given for it where pandas has NaN.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

import catalog

pd = pytest.importorskip("pandas")

DATA = Path(__file__).parent.parent / "data" / "real_tables"
_NA_TEXT = {"fill": {}, "missing": ["NA"]}

#: file -> the options both readers get (catalog's names; `_pandas` maps them).
CASES: dict[str, dict[str, Any]] = {
    # scikit-learn: a count line, then rows without a header; gz, space-separated
    "sklearn_breast_cancer.csv": {"skip_rows": 1, "no_header": True},
    "sklearn_wine_data.csv": {"skip_rows": 1, "no_header": True},
    "sklearn_iris.csv": {"skip_rows": 1, "no_header": True},
    "sklearn_diabetes_data_raw.csv.gz": {"no_header": True, "delimiter": " "},
    "sklearn_diabetes_target.csv.gz": {"no_header": True},
    "sklearn_digits.csv.gz": {"no_header": True},
    "sklearn_linnerud_exercise.csv": {"delimiter": " "},
    "sklearn_linnerud_physiological.csv": {"delimiter": " "},
    # palmerpenguins: R's NA in number and text columns
    "palmerpenguins_penguins.csv": {"missing": ["NA"], "fill": {"sex": ""}},
    "palmerpenguins_penguins-raw.csv": {
        "missing": ["NA"],
        "fill": {"Sex": "", "Comments": ""},
    },
    # statsmodels: quoted names and tabs in a .csv, ';', years as names, dates, floats
    "statsmodels_anes96.csv": {"delimiter": "\t"},
    "statsmodels_modechoice.csv": {"delimiter": ";"},
    "statsmodels_fertility.csv": {},
    "statsmodels_co2.csv": {},
    "statsmodels_danish_data.csv": {},
    "statsmodels_elec_equip.csv": {},
    "statsmodels_elnino.csv": {},
    "statsmodels_engel.csv": {},
    "statsmodels_grunfeld.csv": {},
    "statsmodels_longley.csv": {},
    "statsmodels_macrodata.csv": {},
    "statsmodels_nile.csv": {},
    "statsmodels_stackloss.csv": {},
    "statsmodels_statecrime.csv": {},
    "statsmodels_strikes.csv": {},
    "statsmodels_sunspots.csv": {},
    # vega_datasets: dates, text labels, long files
    "vega_seattle-weather.csv": {},
    "vega_seattle-temps.csv": {},
    "vega_stocks.csv": {},
    "vega_iowa-electricity.csv": {},
    "vega_us-employment.csv": {},
}


def _pandas(options: dict[str, Any]) -> dict[str, Any]:
    """``pandas.read_csv`` keyword arguments saying what `options` say to catalog."""
    kwargs: dict[str, Any] = {}
    if options.get("skip_rows"):
        kwargs["skiprows"] = options["skip_rows"]
    if options.get("no_header"):
        kwargs["header"] = None
    if "delimiter" in options:
        kwargs["sep"] = options["delimiter"]
    if "missing" in options:
        kwargs["na_values"] = options["missing"]
    return kwargs


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _same(want: Any, got: Any) -> bool:
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    if isinstance(want, bool) or isinstance(got, bool):
        return type(want) is type(got) and want == got
    if isinstance(want, (int, float)):
        return isinstance(got, (int, float)) and want == got
    return type(want) is type(got) and want == got


def test_the_suite_is_what_its_provenance_lists() -> None:
    files = sorted(p.name for p in DATA.iterdir() if p.name != "PROVENANCE.md")
    assert files == sorted(CASES)
    listed = (DATA / "PROVENANCE.md").read_text()
    assert all(f"`{name}`" in listed for name in files)
    assert all(p.stat().st_size < 200_000 for p in DATA.iterdir())


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_real_table_prepares_as_pandas_reads_it(tmp_path: Path, name: str) -> None:
    options = CASES[name]
    path = DATA / name
    b = catalog.prepare_files(path, "real", data_dir=tmp_path, **options)
    frame = pd.read_csv(path, **_pandas(options))
    source = b.as_data_source("train")
    names = [str(c) for c in frame.columns]
    assert list(source.features) == names
    assert len(source) == len(frame)
    fill = options.get("fill", {})
    for i, row in enumerate(frame.itertuples(index=False, name=None)):
        example = source[i]
        assert list(example) == names
        for column, value in zip(names, row, strict=True):
            want, got = _plain(value), _plain(example[column])
            if isinstance(want, float) and math.isnan(want) and column in fill:
                want = fill[column]
            assert _same(want, got), f"{name} row {i} column {column!r}: {want!r} != {got!r}"
