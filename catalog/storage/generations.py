"""Generations: one publish protocol for every data dir (publishing, pinning, collecting).

A prepared dataset is an immutable *generation*; its ``<version>`` path is a small pointer to
it, written last. In ``<data dir>/<name>[/<config>]/``::

    <version>                      -> <version>.gen-<id>  (a relative symlink: the pointer)
    <version>.gen-<id>/            shards + dataset_info.json, never changed once published
    .<version>.gen-<id>.readers    an empty file its readers hold a shared flock on
    .<version>.lock                the dataset lock (prepare, rm, import)

- `publish` (under the dataset lock): the finished work dir is renamed to a new generation
  (a name never used before), its readers file is created, and a new symlink is renamed over
  ``<version>``: one atomic rename, on POSIX and NFS. A ``<version>`` that is a plain
  directory (an older catalog's layout) is exchanged with the new symlink in one step where
  the kernel can (Linux ``renameat2(RENAME_EXCHANGE)``), else moved aside just before.
- `pin` (readers): resolve the pointer once, take a shared, non-blocking flock on the
  generation's readers file, and read only that directory for as long as the pin lives.
- `collect` (under the dataset lock, after each publish, prepare and rm): a generation the
  pointer no longer names is removed when an exclusive non-blocking flock on its readers file
  succeeds (no reader holds it): the readers file is unlinked first, then the directory. A
  generation a reader holds is left for a later prepare or rm.

Why a reader can never see half of one: a pinned generation is not removed, and a generation
is never written after it is published. A reader racing a collection finds the readers file
gone (or locked, or unlinked under it) and resolves the pointer again.

What is assumed of the file system: rename atomic (POSIX, NFS); symlinks; flock shared between
the hosts that read and prepare (local disks; NFS on Linux maps flock to POSIX locks). Where
locks are not shared (NFS mounted ``nolock``/``local_lock=all``), a reader on another host can
lose its generation to a collection: it then gets a clear error (`catalog.read.records`: the
generation's dataset_info.json is gone), never another generation's records.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import secrets
import shutil
import sys
import threading
import time
import weakref
from pathlib import Path

__all__ = [
    "GENERATION",
    "Pin",
    "collect",
    "current",
    "generations",
    "pin",
    "publish",
    "readers_file",
    "remove_pointer",
]

#: Generation directories are named ``<version>.gen-<id>``.
GENERATION = ".gen-"
_LINK = ".link-"  # ``.<version>.link-<id>``: a new pointer, before it is renamed into place
_RETRIES = 50  # pointer resolutions a reader tries while generations are being collected


def readers_file(generation: Path) -> Path:
    """The file the readers of `generation` hold a shared flock on: beside it, so that the
    generation holds exactly the dataset's files."""
    return generation.with_name(f".{generation.name}.readers")


def current(target: Path) -> Path | None:
    """The generation the pointer `target` names; None when `target` is not a symlink."""
    try:
        name = target.readlink()
    except OSError:
        return None
    return target.parent / name  # relative links resolve beside the pointer; absolute win


def generations(target: Path) -> list[Path]:
    """Every generation directory of `target` on disk (current or not)."""
    prefix = f"{target.name}{GENERATION}"
    try:
        return sorted(p for p in target.parent.iterdir() if p.name.startswith(prefix))
    except OSError:
        return []


# -- readers --------------------------------------------------------------------------------
class Pin:
    """A generation held open by this process: `path` is the directory to read; `held` says
    whether a shared lock keeps it from being collected (False for a plain directory: an older
    catalog's layout, TensorFlow Datasets', or a missing one). The lock is released when the
    last reference goes; pickled, it is taken again in the process that unpickles it."""

    __slots__ = ("__weakref__", "_close", "_fd", "path")

    def __init__(self, path: Path, fd: int | None) -> None:
        self.path = path
        self._fd = fd
        self._close = weakref.finalize(self, os.close, fd) if fd is not None else None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Drop the shared lock now (not when the last reference goes): this process no longer
        keeps the generation from being collected."""
        with _pins_lock:
            if _pins.get(str(self.path)) is self:
                del _pins[str(self.path)]
        if self._close is not None:
            self._close()  # closes the descriptor once, whoever calls it first
        self._fd = None

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return _pin_directory, (str(self.path),)

    def __repr__(self) -> str:
        return f"Pin({str(self.path)!r}, held={self.held})"


_pins: weakref.WeakValueDictionary[str, Pin] = weakref.WeakValueDictionary()
_pins_lock = threading.Lock()


def _after_fork() -> None:  # a thread of the parent may have held the lock at the fork
    global _pins_lock
    _pins_lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork)


def pin(path: Path) -> Pin:
    """Resolve the pointer `path` once and hold the generation it names (see the module
    docstring); a plain directory (or nothing) at `path` is returned as it is, not held."""
    path = Path(path)
    for attempt in range(_RETRIES):
        generation = current(path)
        if generation is None:  # not a pointer: read the directory as it is
            return _pin_directory(str(path))
        held = _try_pin(generation)
        if held is not None:
            return held
        if current(path) == generation:  # still named, yet no readers file: a hand-made link
            return Pin(generation, None)
        time.sleep(min(0.001 * attempt, 0.05))  # NFS: let cached attributes expire
    return Pin(current(path) or path, None)  # collected under us every time: reads say so


def _pin_directory(path: str) -> Pin:
    """Hold the generation directory `path` (a plain directory: not held)."""
    folder = Path(path)
    return _try_pin(folder) or Pin(folder, None)


def _try_pin(generation: Path) -> Pin | None:
    """A held pin of `generation`, or None when it is gone or being collected."""
    key = str(generation)
    with _pins_lock:
        known = _pins.get(key)
        if known is not None:
            return known
        lock = readers_file(generation)
        try:
            fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # locked: being collected
            if lock.stat().st_ino != os.fstat(fd).st_ino:  # collected after we opened it
                raise FileNotFoundError(lock)
        except OSError:
            os.close(fd)
            return None
        held = Pin(generation, fd)
        _pins[key] = held
        return held


# -- the publisher (under the dataset lock) --------------------------------------------------
def publish(work: Path, target: Path) -> Path:
    """Publish the finished work dir `work` as `target`'s new generation; return it. Old
    generations no reader holds are removed (`collect`)."""
    parent = target.parent
    while True:
        generation = parent / f"{target.name}{GENERATION}{secrets.token_hex(6)}"
        if not os.path.lexists(generation) and not os.path.lexists(readers_file(generation)):
            break
    readers_file(generation).touch()
    os.rename(work, generation)
    link = parent / f".{target.name}{_LINK}{secrets.token_hex(6)}"
    link.symlink_to(generation.name)
    if target.is_dir() and not target.is_symlink():  # an older catalog's plain directory
        if _exchange(link, target):
            shutil.rmtree(link, ignore_errors=True)  # the old directory, now at `link`
        else:
            aside = parent / f".{target.name}{_LINK}{secrets.token_hex(6)}"
            os.rename(target, aside)
            os.rename(link, target)
            shutil.rmtree(aside, ignore_errors=True)
    else:
        link.replace(target)
    _sync(parent)
    collect(target)
    return generation


def remove_pointer(target: Path) -> None:
    """Remove `target` (the pointer, or an older catalog's plain directory), so the dataset is
    no longer prepared; its generations go with the next `collect`."""
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    else:
        target.unlink(missing_ok=True)


def collect(target: Path, *, ours: bool = False) -> list[Path]:
    """Remove `target`'s generations the pointer does not name and no reader holds, and what a
    killed publish left (a new pointer not renamed yet, a readers file without its generation);
    return the generations left because a reader holds them.

    With `ours` (a removal: ``rm``), this process's own pins on those generations are released
    first: a flock conflicts with another descriptor of the same process as with another
    process, so the pin taken to find the dataset (resolving a name opens its generation)
    would otherwise count as a reader and keep what is being removed. Readers in other
    processes keep theirs."""
    named = current(target)
    unnamed = [g for g in generations(target) if g != named]
    if ours:
        for generation in unnamed:
            with _pins_lock:
                own = _pins.get(str(generation))
            if own is not None:
                own.release()
    left = [g for g in unnamed if not _remove_unheld(g)]
    try:
        beside = list(target.parent.iterdir())
    except OSError:
        return left
    for path in beside:
        name = path.name
        with contextlib.suppress(OSError):
            if name.startswith(f".{target.name}{_LINK}"):
                if path.is_symlink():
                    path.unlink()
                else:
                    shutil.rmtree(path)
            elif (
                name.startswith(f".{target.name}{GENERATION}")
                and name.endswith(".readers")
                and not os.path.lexists(path.with_name(name[1 : -len(".readers")]))
            ):
                path.unlink()
    return left


def _remove_unheld(generation: Path) -> bool:
    """Remove `generation` unless a reader holds it; whether it was removed."""
    lock = readers_file(generation)
    fd = None
    for flags in (os.O_RDWR, os.O_RDONLY):  # NFS's exclusive locks need a writable file
        try:
            fd = os.open(lock, flags | os.O_CLOEXEC)
            break
        except FileNotFoundError:
            break  # none: a collection that was killed midway, or a generation never pinned
        except OSError:
            continue
    else:
        return False
    try:
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return False  # a reader holds it
            lock.unlink()  # first: a reader who opens it now finds it gone
        shutil.rmtree(generation, ignore_errors=True)
        return not os.path.lexists(generation)
    finally:
        if fd is not None:
            os.close(fd)


def _exchange(a: Path, b: Path) -> bool:
    """Swap the names `a` and `b` in one step (Linux renameat2 RENAME_EXCHANGE); False where
    the kernel, libc or file system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
    renameat2.argtypes += [ctypes.c_uint]
    result = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EPERM):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _sync(folder: Path) -> None:
    """Make the renames in `folder` durable (best effort: not every file system can)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
