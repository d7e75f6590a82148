"""Taking the names off multiprocessing's semaphores once every process has them open.

With spawn and forkserver, each `multiprocessing` lock, semaphore, event, condition and queue
is built on POSIX named semaphores (``/dev/shm/sem.mp-*``): a starting worker opens them by
name. The name is removed by the process that made them, when it closes them or exits, or by
its resource tracker; if all of them are killed at once (SIGKILL to a whole process group, an
OOM killer), the names stay in /dev/shm until reboot, and nothing can tell whose they were.

A semaphore needs its name only to be opened: once every process that will use it has it
open, `forget_names` unlinks the name (POSIX keeps an unlinked semaphore working for the
processes that have it open; it goes with the last of them) and withdraws multiprocessing's
own removal of it (the finalizer that would unlink it again at exit, the resource tracker's
entry). Nothing can open these objects afterwards: they must not be passed to a process
started later.

This reaches into `multiprocessing.synchronize.SemLock`, whose layout is the same in every
supported Python: anything unexpected leaves a semaphore as it was, named and removed by
multiprocessing as usual.
"""

from __future__ import annotations

import contextlib
from multiprocessing import resource_tracker, synchronize, util
from typing import Any

__all__ = ["forget_names"]

# what multiprocessing itself unlinks with (None where there are no named semaphores)
sem_unlink: Any = getattr(synchronize, "sem_unlink", None)


def _semlocks(obj: Any, found: dict[int, synchronize.SemLock], depth: int = 0) -> None:
    """The SemLocks in `obj` and its attributes (a Queue's locks, an Event's condition...)."""
    if isinstance(obj, synchronize.SemLock):
        found[id(obj)] = obj
    if depth >= 3:
        return
    for value in getattr(obj, "__dict__", {}).values():
        if isinstance(value, synchronize.SemLock | synchronize.Condition | synchronize.Event):
            _semlocks(value, found, depth + 1)


def _finalizers() -> dict[str, Any]:
    """multiprocessing's pending ``SemLock._cleanup`` finalizers, by semaphore name."""
    cleanup = getattr(synchronize.SemLock, "_cleanup", None)
    registry = getattr(util, "_finalizer_registry", {})
    found = {}
    for finalizer in list(registry.values()):
        args = getattr(finalizer, "_args", None)
        if (
            getattr(finalizer, "_callback", None) is cleanup
            and isinstance(args, tuple)
            and len(args) == 1
        ):
            found[args[0]] = finalizer
    return found


def forget_names(*objects: Any) -> int:
    """Unlink the names of the semaphores behind `objects` (multiprocessing locks, queues,
    events...), which this process made and every process using them has open; the number
    unlinked."""
    if sem_unlink is None:
        return 0
    found: dict[int, synchronize.SemLock] = {}
    for obj in objects:
        _semlocks(obj, found)
    finalizers = _finalizers()
    unlinked = 0
    for lock in found.values():
        name = getattr(getattr(lock, "_semlock", None), "name", None)
        if not isinstance(name, str) or (finalizer := finalizers.get(name)) is None:
            continue  # not made here with a name, or already removed
        finalizer.cancel()
        with contextlib.suppress(FileNotFoundError):
            sem_unlink(name)
        resource_tracker.unregister(name, "semaphore")
        unlinked += 1
    return unlinked
