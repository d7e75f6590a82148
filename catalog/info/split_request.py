"""A ``split=`` argument parsed once, on its way in.

`catalog.data_source`, `DatasetBuilder.as_data_source` and the data sources of a dataset
directory take ``split=`` as None (every split: a dict of data sources), one spec (one data
source) or a list of specs (a list of them). `SplitRequest.parse` parses it at that boundary;
the builder checks its split names against the spec (`SplitRequest.check`) and the read side
makes one data source per spec from the parsed `Split` (`SplitRequest.sources`): nothing
below parses the text again or asks which of the three shapes it was given.

Each spec keeps the text users see as `DataSource.split`: a string as given
(``"train[:10%]"``), a `Split` as it prints (``"even_splits('train', 2)[0]"``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from catalog.errors import SplitError
from catalog.info.splits import Split, SplitsArg, check_split_names

__all__ = ["SplitRequest"]

_T = TypeVar("_T")


@dataclass(frozen=True)
class SplitRequest:
    """A parsed ``split=``: `specs` are (text shown, parsed `Split`) pairs; `many` says a list
    was given (a list of data sources); no specs and not `many`: every split (a dict)."""

    specs: tuple[tuple[str, Split], ...] = ()
    many: bool = False

    @classmethod
    def parse(cls, split: SplitsArg | SplitRequest | None) -> SplitRequest:
        """`split` parsed (a `SplitRequest` is returned as it is); SplitError when a spec is
        malformed or not a string or `Split`."""
        if isinstance(split, SplitRequest):
            return split
        if split is None:
            return cls()
        many = isinstance(split, (list, tuple))
        given = list(split) if isinstance(split, (list, tuple)) else [split]
        specs = []
        for one in given:
            parsed = Split.from_spec(one)
            specs.append((one if isinstance(one, str) else str(parsed), parsed))
        return cls(tuple(specs), many)

    def check(self, names: Sequence[str], where: str) -> None:
        """Every split a spec reads must be one of `names` (SplitError naming `where` and the
        closest split otherwise), before anything is prepared or opened."""
        for _, parsed in self.specs:
            try:
                check_split_names(parsed, names)
            except SplitError as error:
                raise SplitError(f"{where}: {error}") from None

    def sources(
        self, make: Callable[[str, Split], _T], every: Iterable[str]
    ) -> _T | list[_T] | dict[str, _T]:
        """``make(text, split)`` for the one spec, a list of them for a list, or a dict of
        every split in `every` (the dataset's split names) when none was asked for."""
        if self.many:
            return [make(text, parsed) for text, parsed in self.specs]
        if self.specs:
            return make(*self.specs[0])
        return {name: make(name, Split.from_spec(name)) for name in every}
