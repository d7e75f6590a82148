"""Patterns from files nobody checked (a Croissant file's regexes, globs and JSON paths), run
with a bound: regular expressions and globs through RE2 (``pip install google-re2``, in the
``croissant`` extra), whose matching time is linear in the text whatever the pattern, so
``^(a+)+b$`` cannot take exponential time as it does in Python's `re`. A pattern RE2 cannot
run (backreferences, lookaround) or one longer than `MAX_PATTERN` characters is one SpecError
naming the field it came from.

>>> regex(r"^(train|test)\\.parquet$", "field data/split").first_group("train.parquet")
'train'
>>> glob_regex("data/*.parquet", "FileSet files").fullmatch("data/a/b.parquet")
True
"""

from __future__ import annotations

from typing import Any

from catalog.errors import MissingDependencyError, SpecError

__all__ = ["MAX_PATTERN", "BoundedRegex", "glob_regex", "regex"]

#: The longest pattern accepted, in characters.
MAX_PATTERN = 4096
#: The most memory RE2 may use for one compiled pattern (its own bound on the automaton).
_MAX_MEM = 8 << 20


def _re2() -> Any:
    try:
        import re2  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        raise MissingDependencyError(
            "patterns from a Croissant file run through RE2 (linear time): "
            "pip install 'catalog[croissant]' (google-re2)"
        ) from None
    return re2


class BoundedRegex:
    """A compiled RE2 pattern, `where` it came from kept for errors."""

    def __init__(self, compiled: Any, pattern: str, where: str) -> None:
        self._compiled = compiled
        self.pattern = pattern
        self.where = where

    def first_group(self, text: str) -> str | None:
        """As a Croissant ``regex`` transform reads it (what mlcroissant does): the first
        group that matched at the start of `text`; the text itself when the pattern has no
        group that matched; None when it does not match."""
        found = self._compiled.match(text)
        if found is None:
            return None
        return next((g for g in found.groups() if g is not None), text)

    def fullmatch(self, text: str) -> bool:
        return self._compiled.fullmatch(text) is not None


def regex(pattern: str, where: str) -> BoundedRegex:
    """`pattern` compiled by RE2; SpecError naming `where` when it is too long or RE2 cannot
    run it."""
    re2 = _re2()
    if not isinstance(pattern, str) or len(pattern) > MAX_PATTERN:
        shown = f"{len(pattern)} characters" if isinstance(pattern, str) else repr(pattern)
        raise SpecError(f"{where}: a regex of at most {MAX_PATTERN} characters, got {shown}")
    options = re2.Options()
    options.max_mem = _MAX_MEM
    options.log_errors = False
    try:
        compiled = re2.compile(pattern, options)
    except (re2.error, ValueError, TypeError) as error:
        reason = error.args[0] if error.args else error
        reason = reason.decode("utf-8", "replace") if isinstance(reason, bytes) else reason
        raise SpecError(
            f"{where}: regex {pattern[:200]!r} is not one RE2 runs (RE2: {reason}); catalog "
            "runs a Croissant file's patterns in linear time: no backreferences or lookaround"
        ) from None
    return BoundedRegex(compiled, pattern, where)


def glob_regex(glob: str, where: str) -> BoundedRegex:
    """A glob as `fnmatch` reads it (what mlcroissant matches a FileSet's ``includes`` with:
    ``*`` any characters, ``/`` included; ``?`` one; ``[...]`` a class) as an RE2 pattern
    matching whole relative paths."""
    if not isinstance(glob, str) or not glob or len(glob) > MAX_PATTERN:
        raise SpecError(f"{where}: expected a glob of 1 to {MAX_PATTERN} characters")
    re2 = _re2()
    out, i = [], 0
    while i < len(glob):
        char = glob[i]
        if char == "*":
            out.append(".*")
        elif char == "?":
            out.append(".")
        elif char == "[" and "]" in glob[i + 2 :]:
            end = glob.index("]", i + 2)
            body = glob[i + 1 : end]
            negate = body.startswith("!")
            body = body[1:] if negate else body
            escaped = "".join("\\" + c if c in "\\^[]" else c for c in body)
            out.append(f"[{'^' if negate else ''}{escaped}]")
            i = end
        else:
            out.append(re2.escape(char))
        i += 1
    return regex("(?s)" + "".join(out), where)
