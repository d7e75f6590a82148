"""The preparers' lock in a bucket: ``<version>.lock``, created with a conditional PUT.

S3 (If-None-Match: ``*``) and GCS (if-generation-match: 0) create an object only if none is
there, atomically: the preparer whose PUT succeeds holds the lock; the others wait, saying
for whom. The holder rewrites the object every `REFRESH` seconds (a lease), so a lock whose
holder was killed is taken over: at once when it names a process of this host that is gone,
else once it has not been refreshed for `LEASE` seconds (this assumes clocks within a minute
of the server's). Taking over is a delete and a conditional create, so two preparers that find
the same stale lock cannot both win the create; the loser of a rarer race (a holder that stalls
for longer than the lease) is found out: the holder checks the lock still holds its token
before it publishes, and stops with an error if it does not (`Held.check`).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone

from catalog.errors import StorageError
from catalog.storage.bucket_io import create, delete, put_bytes, read_bytes, retrying
from catalog.storage.remote import RemoteDir

__all__ = ["LEASE", "REFRESH", "Held", "bucket_lock"]

LEASE = 120.0  # seconds without a refresh after which a lock is stale
REFRESH = 20.0  # seconds between refreshes of a held lock
_POLL = 1.0


class Held:
    """A lock this process holds."""

    def __init__(self, where: RemoteDir, token: str, waited: bool) -> None:
        self.where, self.token, self.waited = where, token, waited
        self.lost = False

    def body(self) -> bytes:
        holder = {"token": self.token, "host": socket.gethostname(), "pid": os.getpid()}
        return json.dumps({**holder, "refreshed": time.time()}).encode()

    def still_ours(self) -> bool:
        data = read_bytes(self.where)
        try:
            return bool(json.loads(data or b"")["token"] == self.token)
        except (ValueError, KeyError, TypeError):
            return False

    def check(self) -> None:
        """Raise StorageError when another preparer took the lock over meanwhile."""
        if self.lost or not self.still_ours():
            self.lost = True
            raise StorageError(
                f"{self.where}: another process took over the prepare lock (this one was "
                f"stalled for longer than the {LEASE:.0f} s lease); nothing was published by "
                "this one: let the other finish, or run the prepare again"
            )


def _stale(data: bytes | None, modified: float | None) -> bool:
    try:
        holder = json.loads(data or b"")
        host, pid = holder["host"], int(holder["pid"])
    except (ValueError, KeyError, TypeError):
        return True  # not a lock catalog wrote (or one being written): take it
    if host == socket.gethostname() and pid != os.getpid():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            pass
    return modified is not None and time.time() - modified > LEASE


def _modified(where: RemoteDir) -> float | None:
    fs = where.filesystem()
    with contextlib.suppress(OSError):
        fs.invalidate_cache(where.path)
        info = fs.info(where.path)
        stamp = info.get("LastModified") or info.get("updated")
        if isinstance(stamp, datetime):
            return stamp.astimezone(timezone.utc).timestamp()
    return None


@contextlib.contextmanager
def bucket_lock(dataset: RemoteDir, version: str) -> Iterator[Held]:
    """Hold ``<dataset>/<version>.lock`` (module docstring) while the block runs."""
    where = dataset / f"{version}.lock"
    held = Held(where, secrets.token_hex(8), waited=False)
    said = False
    while not create(held.body(), where):
        data = read_bytes(where)
        if data is None:
            continue  # released meanwhile
        if _stale(data, _modified(where)):
            delete([where])
            continue
        if not said:
            try:
                holder = json.loads(data)
                who = f"process {holder['pid']} on {holder['host']}"
            except (ValueError, KeyError, TypeError):
                who = "another process"
            print(f"waiting for {who} preparing into {dataset} ...", file=sys.stderr)
            said = held.waited = True
        time.sleep(_POLL)
    stop = threading.Event()

    def refresh() -> None:
        while not stop.wait(REFRESH):
            try:
                if not held.still_ours():
                    held.lost = True
                    return
                retrying(where, "refreshing the lock", lambda: put_bytes(held.body(), where))
            except StorageError:
                continue  # tried again at the next refresh; check() says if it was lost

    thread = threading.Thread(target=refresh, name="catalog-bucket-lock", daemon=True)
    thread.start()
    try:
        yield held
    finally:
        stop.set()
        thread.join()
        with contextlib.suppress(StorageError):
            if held.still_ours():
                delete([where])
