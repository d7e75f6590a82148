"""Process workers and the main script's ``if __name__ == "__main__":`` guard.

spawn and forkserver run the main script again in each new process (as ``__mp_main__``). A
script that starts process workers at its top level, outside the guard, would start them again
in each worker, and each worker would also redo whatever else the script does first.
`refuse_unguarded_start` is called before workers start:

- in the consumer, the line of the main script that is running the pipeline is looked up on
  the caller's stack and in the script's source (`unguarded_main_line`): outside the guard,
  one `PipelineError` names that line before any worker starts;
- in a process multiprocessing is still bootstrapping (where the source could not tell: no
  file, or the pipeline run from a thread of one's own), one of our workers exits at once with
  `NO_MAIN_GUARD`, which its consumer reports with the same message; any other process gets
  the error itself.
"""

from __future__ import annotations

import ast
import multiprocessing as mp
import os
import sys
import tokenize
from types import FrameType

from catalog.errors import PipelineError

__all__ = ["NO_MAIN_GUARD", "message", "refuse_unguarded_start", "unguarded_main_line"]

NO_MAIN_GUARD = 87  # a worker's exit code: it re-ran a script that starts process workers


def refuse_unguarded_start(worker_prefix: str) -> None:
    """Raise (or, in one of our bootstrapping workers named `worker_prefix`..., exit) when
    starting process workers here would start them again in each of them."""
    me = mp.current_process()
    if getattr(me, "_inheriting", False):
        if me.name.startswith(worker_prefix):
            os._exit(NO_MAIN_GUARD)  # silently: the consumer raises the one error
        raise PipelineError(message())
    where = unguarded_main_line()
    if where is not None:
        raise PipelineError(message(f"{where[0]}, line {where[1]}"))


def unguarded_main_line() -> tuple[str, int] | None:
    """(file, line) of the main script's top-level statement that is running the caller,
    when that statement is outside ``if __name__ == "__main__":``; None when it is inside
    one, or when the caller's stack and the script's source cannot tell (no main script, as
    in ``python -c`` or a notebook; the pipeline run from a thread of one's own; no source)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and not (
        frame.f_code.co_name == "<module>" and frame.f_globals.get("__name__") == "__main__"
    ):
        frame = frame.f_back
    if frame is None:
        return None
    path, line = frame.f_code.co_filename, frame.f_lineno
    try:
        with tokenize.open(path) as file:  # the encoding the script declares
            tree = ast.parse(file.read(), path)
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _tests_main(node.test):
            for statement in node.body:
                end = statement.end_lineno or statement.lineno
                if statement.lineno <= line <= end:
                    return None
    return path, line


def _tests_main(test: ast.expr) -> bool:
    """True for ``__name__ == "__main__"`` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    sides = [test.left, test.comparators[0]]
    return (
        isinstance(test.ops[0], ast.Eq)
        and any(isinstance(a, ast.Name) and a.id == "__name__" for a in sides)
        and any(isinstance(a, ast.Constant) and a.value == "__main__" for a in sides)
    )


def message(where: str | None = None) -> str:
    """What went wrong and the fix; `where` names the script's line when known."""
    main = getattr(sys.modules.get("__main__"), "__file__", None) or "the main script"
    return (
        f"process workers run {main} again as they start (spawn and forkserver import the main "
        "module in every worker), and it starts process workers at its top level"
        f"{f' ({where})' if where else ''}, so each worker would run it and start its own. Put "
        'the code that runs the pipeline under `if __name__ == "__main__":` (keep the '
        "functions given to map and filter at module level), or use prefetch(kind='thread')"
    )
