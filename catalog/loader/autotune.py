"""The pipeline's automatic default: who computes when the user does not say (no `prefetch`).

tf.data's ``AUTOTUNE`` lets a user write the obvious pipeline and get near the best speed;
this is ours. A pipeline on which `Pipeline.prefetch` was never called computes in
`auto_workers` *threads*, with the caller-runs scheduler and its tuner
(`catalog.loader.scheduler`), as ``prefetch(auto_workers(), "thread")`` would:

- **threads, not processes**, because the default must work for every obvious pipeline: a
  lambda or a closure in ``map`` (processes need picklable functions), a script without an
  ``if __name__ == "__main__"`` guard (spawned processes re-import it), a source that cannot
  be pickled. And the work of a photo pipeline, decoding and resizing (Pillow, OpenCV,
  libjpeg-turbo) runs outside the GIL, so threads use the cores: on the flowers benchmark
  two threads are as fast as two processes (1,148 vs 1,116 img/s, issue 29).
- **one per usable core** (the CPUs this process may run on, not the machine's), at most
  `MAX_AUTO_WORKERS`: more threads than cores only fight over them, and past a handful the
  Python between the native calls (the GIL) caps what more threads give.
- **tuned, never slower than none**: the scheduler's tuner starts from none (a thread starts
  with its first order), measures the rate the consumer gets batches at and settles on the
  fewest workers (0 to N) within 10% of the fastest; the consumer computes a unit itself
  when no worker has it. A GIL-bound map (pure Python per example) is thus left at 0
  workers, where threads would only slow it, and a new pipeline's epoch of quick batches
  (a few milliseconds: CMATERdb's 40) is over before threads would cost anything.

- **only for a source known to be safe in threads** (`reads_safely_in_threads`): a
  `catalog.DataSource` (its contract), a NumPy array, a list, tuple or range, or any source
  with a true ``thread_safe`` attribute. Another source (a class of one's own reading a file
  with seek and read, say) may give wrong records when two threads read it at once, so it is
  read by the caller alone unless ``prefetch`` asks for workers.

``prefetch(0)`` computes in the caller only, as before; ``prefetch(N, kind)`` is the hand-
tuned setting, kept as given. The output never depends on any of this.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

__all__ = ["MAX_AUTO_WORKERS", "auto_workers", "reads_safely_in_threads", "usable_cores"]

#: The most worker threads the default starts (`prefetch(N)` asks for more).
MAX_AUTO_WORKERS = 8


def usable_cores() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # macOS and Windows have no affinity call
        return max(1, os.cpu_count() or 1)


def auto_workers(cores: int | None = None) -> int:
    """How many worker threads a pipeline without `prefetch` gets: one per usable core
    (`cores`, else `usable_cores`), at least 1, at most `MAX_AUTO_WORKERS`.

    >>> auto_workers(2), auto_workers(1), auto_workers(64)
    (2, 1, 8)
    """
    return max(1, min(usable_cores() if cores is None else cores, MAX_AUTO_WORKERS))


def reads_safely_in_threads(source: Any) -> bool:
    """Whether `source` may be indexed from several threads at once: its ``thread_safe``
    attribute when it has one, else True for a `catalog.DataSource`, a NumPy array, a list,
    a tuple or a range.

    >>> reads_safely_in_threads([1, 2]), reads_safely_in_threads(open)
    (True, False)
    """
    said = getattr(source, "thread_safe", None)
    if said is not None:
        return bool(said)
    if isinstance(source, (np.ndarray, list, tuple, range)):
        return True
    # A DataSource exists only once its module is loaded: looked up, not imported (reading
    # it would cost every pipeline over a list the import of the record readers).
    module = sys.modules.get("catalog.read.data_source")
    return module is not None and isinstance(source, module.DataSource)
