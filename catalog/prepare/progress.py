"""What preparing shows: a tqdm bar per split on a terminal, one line per unit otherwise.

The one place preparation reports progress (downloads have theirs in
`catalog.download.progress`). On a terminal (``bars``, or ``auto`` with stderr a terminal)
each split gets a bar of examples with the rate and the time left; in CI and with ``--json``
(``lines``) the plan gives a line and each unit another when it is done::

    mnist: plan: 16 shards in 2 splits, about 55.0 MiB
    mnist train: unit 3 of 8 written: 7500 examples, 5.7 MiB (mnist-train.array_record-000...)
    mnist train: unit 4 of 8 kept from an earlier run (mnist-train.array_record-00003-of-...)

``none`` shows nothing.
"""

from __future__ import annotations

import sys
from typing import Any

from tqdm import tqdm

from catalog._util.terminal import escape, unescaped
from catalog._util.units import count, format_size
from catalog.download.config import ProgressMode
from catalog.prepare.shard_plan import Plan, Unit
from catalog.prepare.work_unit import Outcome

__all__ = ["PrepareProgress"]


class PrepareProgress:
    """Progress of one dataset's units; `examples` ticks a bar inside a unit (serial runs)."""

    def __init__(self, name: str, mode: ProgressMode = "auto") -> None:
        if mode == "auto":
            mode = "bars" if sys.stderr.isatty() else "lines"
        self.name = name
        self.mode = mode
        self._bars: dict[str, Any] = {}
        #: Units written and kept by this run (what `catalog prepare` reports).
        self.written = 0
        self.kept = 0

    def start(self, plan: Plan) -> None:
        if self.mode == "lines":
            splits = len({u.split for u in plan.units})
            print(
                f"{self.name}: plan: {count(len(plan.units), 'shard')} in "
                f"{count(splits, 'split')}, about {format_size(plan.estimated_bytes)}",
                file=sys.stderr,
                flush=True,
            )
        if self.mode != "bars":
            return
        for unit in plan.units:
            if unit.split not in self._bars:
                total = sum(u.num_examples for u in plan.split_units(unit.split))
                self._bars[unit.split] = tqdm(
                    total=total,
                    desc=escape(f"{self.name} {unit.split}"),
                    unit=" examples",
                    unit_scale=True,
                    dynamic_ncols=True,
                    leave=True,
                    file=unescaped(sys.stderr),  # draws with \r; its text escaped here
                )

    def examples(self, unit: Unit, count: int) -> None:
        """`count` more examples of `unit` are written (called from inside a serial unit)."""
        bar = self._bars.get(unit.split)
        if bar is not None:
            bar.update(count)

    def unit_done(self, outcome: Outcome, *, ticked: int = 0) -> None:
        """A unit is finished; `ticked`: examples already reported through `examples`."""
        unit = outcome.unit
        if outcome.shard is not None:
            if outcome.written:
                self.written += 1
            else:
                self.kept += 1
        bar = self._bars.get(unit.split)
        if bar is not None:
            bar.update(unit.num_examples - ticked)
        if self.mode != "lines" or outcome.shard is None:
            return
        where = f"{self.name} {unit.split}: unit {unit.index + 1} of {unit.count}"
        if outcome.written:
            size = format_size(outcome.shard.num_bytes)
            what = f"written: {outcome.shard.num_examples} examples, {size}"
        else:
            what = "kept from an earlier run"
        print(f"{where} {what} ({unit.file})", file=sys.stderr, flush=True)

    def close(self) -> None:
        for bar in self._bars.values():
            bar.close()
        self._bars.clear()
