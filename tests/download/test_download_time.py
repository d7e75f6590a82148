"""Bounded time per file, against the real loopback server: a server dripping bytes fails at
the file's deadline (which scales with its size) and keeps what it sent; one that sends the
body and then hangs is not waited for; one that never answers costs two timeouts, not one per
retry round. Time is a fake clock advanced by the client's own reads, so nothing sleeps."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from catalog.download import DownloadConfig, DownloadManager, Resource, resolve_config
from catalog.download.deadline import BASE_SECONDS, Deadline, DeadlineExceeded, Stalled, min_rate
from catalog.errors import DownloadError
from catalog.testing.http_server import Fault, LoopbackServer
from catalog.testing.idx_files import pattern_images, pattern_labels, write_idx

from conftest import write_builder

BODY = bytes(range(256)) * 40 + b"tail"  # 10244 bytes


class Clock:
    """A monotonic clock that moves `step` seconds each time it is read."""

    def __init__(self, step: float = 1.0) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def resource(*urls: str) -> Resource:
    return Resource(urls, len(BODY), hashlib.sha256(BODY).hexdigest(), "data.bin")


def manager(tmp_path: Path, **options: Any) -> DownloadManager:
    clock, sleep = options.pop("clock", None), options.pop("sleep", Sleeps())
    fields: dict[str, Any] = {
        "download_dir": tmp_path / "dl", "manual_dir": tmp_path / "manual", "mirrors": (),
        "offline": False, "backoff": 0.0, "progress": "none", **options,
    }  # fmt: skip
    return DownloadManager(DownloadConfig(**fields), sleep=sleep, clock=clock)


def part_bytes(tmp_path: Path) -> bytes:
    (part,) = (tmp_path / "dl" / ".meta").glob("*.part")
    return part.read_bytes()


def test_a_dripping_server_fails_at_the_deadline_and_keeps_its_bytes(
    server: LoopbackServer, tmp_path: Path
) -> None:
    url = server.add("/drip.bin", BODY, fault=Fault(kind="drip", interval=0.002, times=1))
    clock = Clock()  # one "second" per read: the drip is one byte a second
    # A read timeout longer than the deadline: the overall deadline, not the stall, ends it.
    options = {"min_rate": 1000.0, "read_timeout": 1000.0, "clock": clock}
    with pytest.raises(DownloadError) as info:
        manager(tmp_path, **options).download(resource(url))
    message = str(info.value)
    # The deadline was 60 s + 10244 B / 1000 B/s; the clock says how far past it we are.
    assert BASE_SECONDS + 10.244 <= clock.now <= BASE_SECONDS + 10.244 + 3
    kept = part_bytes(tmp_path)
    assert 0 < len(kept) < 100 and BODY.startswith(kept)
    assert f"{url}: too slow: {len(kept)} bytes received in" in message
    assert f"{len(kept)} of {len(BODY)} bytes on disk" in message
    assert "B/s" in message and "CATALOG_MIN_DOWNLOAD_RATE" in message
    assert "the next run resumes" in message
    assert len(server.requests) == 1  # past the deadline, no other round is tried
    # The next run resumes from the kept bytes.
    file = manager(tmp_path).download(resource(url))
    assert file.path.read_bytes() == BODY
    assert server.requests[-1].headers["Range"] == f"bytes={len(kept)}-"


def test_the_deadline_counts_over_every_url_and_round(
    server: LoopbackServer, tmp_path: Path
) -> None:
    busy = server.add("/busy.bin", b"busy", status=503)
    sleeps = Sleeps()
    clock = Clock(step=20.0)
    with pytest.raises(DownloadError, match="too slow: 0 bytes received"):
        manager(tmp_path, retries=50, clock=clock, sleep=sleeps).download(resource(busy))
    assert len(server.requests) < 10  # not 51 rounds: the file's deadline ended them


def test_a_server_that_hangs_after_the_body_is_not_waited_for(
    server: LoopbackServer, tmp_path: Path
) -> None:
    url = server.add("/hang.bin", BODY, fault=Fault(kind="hang"))
    # Without a Content-Length only the registered size says the body is complete; waiting
    # for the server to close would take the read timeout, then fail (no retries here).
    file = manager(tmp_path, retries=0, read_timeout=30.0).download(resource(url))
    assert file.path.read_bytes() == BODY


def test_a_server_that_never_answers_is_tried_twice_not_every_round(
    server: LoopbackServer, tmp_path: Path
) -> None:
    silent = server.add("/silent.bin", BODY, fault=Fault(kind="hold"))
    sleeps = Sleeps()
    with pytest.raises(DownloadError, match=r"timed out.*\(2 attempts\)"):
        manager(tmp_path, read_timeout=0.2, retries=3, sleep=sleeps).download(resource(silent))
    assert len(server.requests) == 2 and len(sleeps) == 1


def test_default_timeouts_are_proportionate() -> None:
    config = DownloadConfig()
    # Never answering: two attempts of connect + read timeout, well under a minute.
    assert 2 * (config.connect_timeout + config.read_timeout) <= 60
    assert config.read_timeout <= 15


def test_min_rate_comes_from_argument_environment_or_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert min_rate() == 32 * 1024
    monkeypatch.setenv("CATALOG_MIN_DOWNLOAD_RATE", "8KiB")
    assert min_rate() == 8192
    assert resolve_config(DownloadConfig(download_dir=tmp_path)).min_rate == 8192
    assert resolve_config(DownloadConfig(download_dir=tmp_path, min_rate=5.0)).min_rate == 5.0
    monkeypatch.setenv("CATALOG_MIN_DOWNLOAD_RATE", "fast")
    with pytest.raises(ValueError, match="CATALOG_MIN_DOWNLOAD_RATE='fast'"):
        min_rate()
    with pytest.raises(ValueError, match="min_rate must be > 0"):
        DownloadConfig(min_rate=0)


def test_deadline_scales_with_size_and_caps_unknown_sizes() -> None:
    small = Deadline(size=1 << 20, start=0, min_rate=32 * 1024, clock=lambda: 0.0)
    large = Deadline(size=100 << 20, start=0, min_rate=32 * 1024, clock=lambda: 0.0)
    resumed = Deadline(size=100 << 20, start=99 << 20, min_rate=32 * 1024, clock=lambda: 0.0)
    unknown = Deadline(size=None, start=0, min_rate=32 * 1024, clock=lambda: 0.0)
    assert small.seconds == 60 + 32 and large.seconds == 60 + 3200
    assert resumed.seconds == small.seconds and unknown.seconds == 3600
    with pytest.raises(DeadlineExceeded, match="unregistered size gets 1 h 0 min"):
        Deadline(size=None, start=0, min_rate=1, clock=iter([0.0, 4000.0, 4000.0]).__next__).check(
            "http://x/y", 0
        )


def test_progress_line_shows_the_deadline(
    server: LoopbackServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = server.add("/data.bin", BODY)
    manager(tmp_path, progress="lines", min_rate=100.0).download(resource(url))
    assert "; deadline 2 min 42 s (at least 100 B/s)" in capsys.readouterr().err


def test_a_dripping_server_is_stalled_after_the_read_timeout(
    server: LoopbackServer, tmp_path: Path
) -> None:
    url = server.add("/drip.bin", BODY, fault=Fault(kind="drip", interval=0.002))
    clock = Clock()  # one "second" per read: one byte a second, far under min_rate / 8
    with pytest.raises(DownloadError) as info:
        manager(tmp_path, min_rate=1000.0, read_timeout=5.0, clock=clock).download(resource(url))
    message = str(info.value)
    assert f"{url}: stalled: " in message and "(2 attempts)" in message
    assert "under 125 B/s (1/8 of the minimum rate) for longer than read_timeout (5.0 s)" in message
    assert "DownloadConfig(read_timeout=...)" in message and "CATALOG_MIN_DOWNLOAD_RATE" in message
    assert len(server.requests) == 2  # a stalling URL is tried twice, like a silent one
    assert clock.now < 40  # two windows of 5 "seconds" and their reads, not the 70 s deadline
    # What arrived is kept, and the second attempt resumed from it.
    assert server.requests[1].headers["Range"].startswith("bytes=")
    assert BODY.startswith(part_bytes(tmp_path))


def test_a_slow_spell_shorter_than_the_read_timeout_is_not_a_stall() -> None:
    times = iter([0.0, 0.0, *[float(t) for t in range(1, 40)]])
    deadline = Deadline(
        size=10**6, start=0, min_rate=8000.0, clock=times.__next__, stall_seconds=10.0
    )
    deadline.begin()
    for second in range(1, 40):
        # 4 s of 10 B/s every 10 s, 5000 B/s otherwise: slow spells, never a stalled window
        deadline.add(10 if second % 10 < 4 else 5000, "http://x/y", 0)


def test_a_stall_is_measured_over_the_last_read_timeout_seconds() -> None:
    times = iter([0.0, 0.0, *[float(t) for t in range(1, 40)]])
    deadline = Deadline(
        size=10**6, start=0, min_rate=8000.0, clock=times.__next__, stall_seconds=10.0
    )
    deadline.begin()
    for _ in range(1, 20):  # 19 s at full speed
        deadline.add(8000, "http://x/y", 0)
    for _ in range(20, 28):  # then 9 B/s: stalled once the last 10 s average under 1000 B/s
        deadline.add(9, "http://x/y", 0)
    with pytest.raises(Stalled, match=r"stalled: 8081 bytes in the last 10 s \(808 B/s\)"):
        deadline.add(9, "http://x/y", 0)


@pytest.mark.parametrize("entry", ["data_source", "download_and_prepare"])
def test_the_python_api_gives_up_on_a_dripping_server_at_its_read_timeout(
    server: LoopbackServer, tmp_path: Path, entry: str
) -> None:
    import time

    import catalog

    files = {
        "i.gz": write_idx(tmp_path / "i.gz", pattern_images(300)).read_bytes(),
        "l.gz": write_idx(tmp_path / "l.gz", pattern_labels(300)).read_bytes(),
    }
    folder = write_builder(
        tmp_path / "tiny", server, files, splits={"train": ("i.gz", "l.gz", 300)}
    )
    for filename, data in files.items():  # the same URLs, now dripping 20 bytes a second
        server.add(f"/files/tiny/{filename}", data, fault=Fault(kind="drip", interval=0.05))
    config = DownloadConfig(read_timeout=1, retries=0)
    started = time.monotonic()
    data = tmp_path / "data"
    with pytest.raises(DownloadError, match=r"stalled: .*read_timeout \(1\.0 s\)"):  # noqa: PT012
        if entry == "data_source":
            catalog.data_source(folder, data_dir=data, download_config=config)
        else:
            catalog.builder(folder, data_dir=data).download_and_prepare(download_config=config)
    assert time.monotonic() - started < 20  # two files at once, each about 1 s, not minutes
    server.release()
