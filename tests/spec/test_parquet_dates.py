"""Parquet columns of dates, times and timestamps (what pandas writes for a ``datetime64``
column, pyarrow for ``date32``/``time64``): prepared as text, each value as Python shows it
and pandas shows a timestamp, read in bulk and example by example alike; a null needs a
fill as any text's does; nanoseconds a microsecond cannot hold are an error naming file and
row. Compared with what pandas and pyarrow themselves read, on files they wrote and on one
that comes with pyarrow (written by pyarrow 0.7.1)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import catalog
from catalog.errors import SourceFormatError, SpecError
from catalog.features import Text

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pd = pytest.importorskip("pandas")


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _shown(value: Any) -> Any:
    """A value as catalog stores it: dates, times and timestamps as their text."""
    return str(value) if isinstance(value, (dt.date, dt.time, pd.Timestamp)) else value


def test_dates_times_and_timestamps_are_text_as_pandas_shows_them(tmp_path: Path) -> None:
    n = 3000  # several of pyarrow's batches: read in bulk
    stamps = pd.date_range("2016-12-31 23:00", periods=n, freq="37min")  # datetime64[ns]
    frame = pd.DataFrame(
        {
            "n": np.arange(n),
            "naive": stamps,
            "utc": stamps.tz_localize("UTC"),
            "paris": stamps.tz_localize("UTC").tz_convert("Europe/Paris"),
            "micro": stamps + pd.to_timedelta(np.arange(n) * 7, unit="us"),
        }
    )
    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = table.append_column("day", pa.array([s.date() for s in stamps], pa.date32()))
    clock = [dt.time(i % 24, i % 60, i % 60, i * 11 % 1_000_000) for i in range(n)]
    table = table.append_column("clock", pa.array(clock, pa.time64("us")))
    path = tmp_path / "events.parquet"
    pq.write_table(table, path, row_group_size=1000)
    b = catalog.prepare_files(path, "events", data_dir=tmp_path / "d")
    features = b.info.features
    assert all(isinstance(features[c], Text) for c in ("naive", "utc", "paris", "day", "clock"))
    ds = b.as_data_source("train")
    want = pd.read_parquet(path).to_dict("records")
    assert len(ds) == n
    for i in (0, 1, 999, 1000, 2047, n - 1):
        got = {k: _plain(v) for k, v in ds[i].items()}
        assert got == {k: _shown(v) for k, v in want[i].items()}, i
    assert ds[0]["utc"] == "2016-12-31 23:00:00+00:00"
    assert ds[0]["paris"] == "2017-01-01 00:00:00+01:00"
    assert ds[1]["micro"] == "2016-12-31 23:37:00.000007"
    assert ds[0]["day"] == "2016-12-31" and ds[1]["clock"] == "01:01:01.000011"
    every = ds.__getitems__(list(range(n)))  # the bulk-written shards hold every row alike
    assert [e["naive"] for e in every] == [str(s) for s in stamps]


def test_a_null_timestamp_needs_a_fill_and_nanoseconds_are_refused(tmp_path: Path) -> None:
    stamps = pa.array([dt.datetime(2020, 1, 1), None, dt.datetime(2020, 1, 3)], pa.timestamp("us"))
    path = tmp_path / "gaps.parquet"
    pq.write_table(pa.table({"t": stamps}), path)
    with pytest.raises((SpecError, SourceFormatError), match="fill"):
        catalog.prepare_files(path, "gaps", data_dir=tmp_path / "d")
    b = catalog.prepare_files(path, "gaps", data_dir=tmp_path / "d", fill={"t": ""})
    assert [e["t"] for e in b.as_data_source("train")] == [
        "2020-01-01 00:00:00", "", "2020-01-03 00:00:00",
    ]  # fmt: skip
    fine = pa.array([1_577_836_800_000_000_001], pa.timestamp("ns"))  # 1 ns past the second
    path = tmp_path / "nanos.parquet"
    pq.write_table(pa.table({"t": fine}), path)
    with pytest.raises(SourceFormatError, match=r"nanos.parquet.*row 0.*column 't'.*nanoseconds"):
        catalog.prepare_files(path, "nanos", data_dir=tmp_path / "d")
    assert not (tmp_path / "d" / "nanos").exists() or not any(
        (tmp_path / "d" / "nanos").rglob("*.array_record*")
    )


def test_a_parquet_file_pyarrow_0_7_wrote_reads_as_pyarrow_reads_it(tmp_path: Path) -> None:
    """pyarrow's own test file: a UTC timestamp column and a pandas index of timestamps."""
    path = Path(pa.__file__).parent / "tests/data/parquet/v0.7.1.column-metadata-handling.parquet"
    if not path.exists():
        pytest.skip("pyarrow's test data is not installed")
    b = catalog.prepare_files(path, "old", data_dir=tmp_path / "d")
    ds = b.as_data_source("train")
    rows = pq.read_table(path).to_pylist()
    assert len(ds) == len(rows)
    for i, row in enumerate(rows):
        assert {k: _plain(v) for k, v in ds[i].items()} == {k: _shown(v) for k, v in row.items()}
