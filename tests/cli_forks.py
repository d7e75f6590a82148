"""`catalog` commands run as processes of their own, forked from one that imported catalog
and its heavy dependencies once (a "fork server", as multiprocessing's forkserver).

A `python -m catalog` subprocess spends most of its time importing: catalog, NumPy, Pillow
and, for a bucket, s3fs with aiobotocore and aiohttp (about 1.5 s of the 2-5 s a call to moto
costs on a loaded two-core machine). A test that runs a hundred commands pays that a hundred
times. Here each command is still a process of its own, started from a clean state: the
server forks, the child takes the request's working directory, environment, argv and files
for stdout and stderr, runs ``catalog/__main__.py`` as `python -m catalog` does (an uncaught
exception printed as a traceback, exit code 1; `SystemExit` as the interpreter handles it;
the exit handlers run) and exits with its code. Only the imports are shared, and nothing in
the server has touched a file system, a socket or a thread before it forks.

The server itself is a `python -c` subprocess reading one JSON request per line on its
stdin; it answers with the child's process id, then its exit code.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

# What a command imports on its way, imported once: every module of these catalog packages
# (none imports an optional framework), and the libraries they load lazily (a bucket's client).
PACKAGES = ("api", "cli", "prepare", "formats", "features", "storage", "read", "spec", "info",
            "interop", "download", "present")  # fmt: skip
LIBRARIES = ("numpy", "PIL.Image", "s3fs")

_SERVER = r"""
import atexit, importlib, json, os, pkgutil, runpy, sys, traceback

packages, libraries = json.loads(sys.argv[1])
for name in packages:
    package = importlib.import_module(f"catalog.{name}")
    for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        importlib.import_module(module.name)
for name in libraries:
    try:
        importlib.import_module(name)
    except ImportError:  # an extra not installed: the command imports it (and fails) itself
        pass
replies = os.fdopen(os.dup(1), "w", buffering=1)
for line in sys.stdin:
    request = json.loads(line)
    tasks = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1
    if tasks != 1:
        raise SystemExit(f"cli_forks: the server has {tasks} threads; forking it is unsafe")
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(target, fd)
            os.close(target)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        sys.argv = ["catalog", *request["argv"]]
        code = 0
        try:
            runpy.run_module("catalog", run_name="__main__", alter_sys=True)
        except SystemExit as stop:
            if stop.code is None:
                code = 0
            elif isinstance(stop.code, int):
                code = stop.code
            else:
                print(stop.code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
            code = 1
        try:
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
    replies.write(f"{pid}\n")
    _, status = os.waitpid(pid, 0)
    replies.write(f"{os.waitstatus_to_exitcode(status)}\n")
"""


class CatalogForks:
    """Runs `catalog` commands, each in a process forked from one server (a context manager).

    The server starts with this process's environment; each command gets the environment it
    has when `run` is called (plus `env`), as `conftest.catalog_cli` gives a subprocess."""

    def __init__(self) -> None:
        self._server: subprocess.Popen[str] | None = None
        self._out = Path(tempfile.mkdtemp(prefix="catalog-forks-"))

    def __enter__(self) -> CatalogForks:
        # NumPy's OpenBLAS starts a thread pool on import: one thread keeps the server
        # single-threaded, so forking it is safe (each command gets its own environment).
        environ = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        self._server = subprocess.Popen(
            [sys.executable, "-c", _SERVER, json.dumps([PACKAGES, LIBRARIES])],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1, env=environ,
        )  # fmt: skip
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        server = self._server
        if server is not None:
            assert server.stdin is not None
            server.stdin.close()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            finally:
                assert server.stdout is not None
                server.stdout.close()
        for path in self._out.iterdir():
            path.unlink()
        self._out.rmdir()

    def run(
        self,
        *args: str,
        cwd: Path | None = None,
        env: Mapping[str, str | None] | None = None,
        timeout: float = 300,
    ) -> subprocess.CompletedProcess[str]:
        """``catalog ARGS`` in a forked process: its exit code and output, as text."""
        server = self._server
        assert server is not None and server.stdin is not None and server.stdout is not None
        environ = dict(os.environ)
        for name, value in (env or {}).items():
            if value is None:
                environ.pop(name, None)
            else:
                environ[name] = value
        out, err = self._out / "stdout", self._out / "stderr"
        request = {
            "argv": list(args), "cwd": str(cwd or Path.cwd()), "env": environ,
            "stdout": str(out), "stderr": str(err),
        }  # fmt: skip
        server.stdin.write(json.dumps(request) + "\n")
        pid = int(server.stdout.readline())
        timer = _Timer(timeout, pid)
        with timer:
            line = server.stdout.readline()
        if not line:
            raise RuntimeError(f"the catalog fork server died running {args}")
        code = int(line)
        result = subprocess.CompletedProcess(
            ["catalog", *args], code, out.read_text(), err.read_text()
        )
        if timer.fired:
            raise subprocess.TimeoutExpired(result.args, timeout, result.stdout, result.stderr)
        return result


class _Timer:
    """Kills process group `pid` when the block takes longer than `seconds`."""

    def __init__(self, seconds: float, pid: int) -> None:
        self.seconds, self.pid, self.fired = seconds, pid, False

    def _fire(self, *_: object) -> None:
        self.fired = True
        with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
            os.killpg(self.pid, signal.SIGKILL)

    def __enter__(self) -> None:
        import threading

        self._timer = threading.Timer(self.seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
