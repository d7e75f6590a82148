"""SQuAD-style JSON: articles -> paragraphs -> questions, flattened to one example per question.

The file is one JSON document::

    {"data": [{"title": ..., "paragraphs": [{"context": ..., "qas": [
        {"id": ..., "question": ..., "answers": [{"text": ..., "answer_start": 0}]}]}]}]}

Each question becomes ``{"id", "title", "context", "question", "answers": {"text": [...],
"answer_start": [...]}}`` (a Sequence of dicts decodes to a dict of lists), keyed by its id.
As TFDS does: a missing title is ``""``; a question whose id was seen before adds its answers
to the first one's example; examples come in order of first appearance of their ids. Strings
are kept as they are (context whitespace included, so answer offsets stay aligned).

The standard library's `json` reads the document whole (it has no streaming parser): memory
is a few times the file's size, tens of MB for SQuAD. Malformed JSON is reported with its
file:line:column; a record without a field the layout needs names its place
(``data[3].paragraphs[0].qas[2]``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from catalog.errors import SourceFormatError
from catalog.features import FeaturesDict
from catalog.formats.base import Examples, Role, Source, SourceFormat

__all__ = ["FORMAT", "examples"]

_FEATURES = frozenset({"id", "title", "context", "question", "answers"})


def _get(record: Any, key: str, kind: type, where: str, path: Path) -> Any:
    if not isinstance(record, Mapping):
        raise SourceFormatError(f"{path}: {where}: expected an object, got {type(record).__name__}")
    value = record.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        got = "nothing" if value is None else f"{type(value).__name__} {value!r:.40}"
        raise SourceFormatError(f"{path}: {where}.{key}: expected a {kind.__name__}, got {got}")
    return value


def examples(source: Source) -> Examples:
    """Yield ``(id, example)`` for every question, as the module docstring says."""
    path = source.file("file")
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except json.JSONDecodeError as error:
        raise SourceFormatError(
            f"{path}:{error.lineno}:{error.colno}: not valid JSON: {error.msg}"
        ) from None
    except UnicodeDecodeError as error:
        raise SourceFormatError(f"{path}: not UTF-8 at byte {error.start}") from None
    found: dict[str, dict[str, Any]] = {}
    for a, article in enumerate(_get(document, "data", list, "(top)", path)):
        where = f"data[{a}]"
        title = article.get("title", "") if isinstance(article, Mapping) else ""
        for p, paragraph in enumerate(_get(article, "paragraphs", list, where, path)):
            here = f"{where}.paragraphs[{p}]"
            context = _get(paragraph, "context", str, here, path)
            for q, qa in enumerate(_get(paragraph, "qas", list, here, path)):
                at = f"{here}.qas[{q}]"
                qid = _get(qa, "id", str, at, path)
                texts, starts = [], []
                for n, answer in enumerate(_get(qa, "answers", list, at, path)):
                    texts.append(_get(answer, "text", str, f"{at}.answers[{n}]", path))
                    starts.append(_get(answer, "answer_start", int, f"{at}.answers[{n}]", path))
                if qid in found:
                    found[qid]["answers"]["text"].extend(texts)
                    found[qid]["answers"]["answer_start"].extend(starts)
                    continue
                found[qid] = {
                    "id": qid,
                    "title": title,
                    "context": context,
                    "question": _get(qa, "question", str, at, path),
                    "answers": {"text": texts, "answer_start": starts},
                }
    del document
    for qid in list(found):
        yield qid, found.pop(qid)


def _validate(options: Mapping[str, Any], features: FeaturesDict) -> str | None:
    answers = features["answers"].children()
    if set(answers) != {"text", "answer_start"}:
        return "feature 'answers' must be a Sequence of {text, answer_start}"
    return None


FORMAT = SourceFormat(
    name="squad_json",
    description="SQuAD-style JSON (data/paragraphs/qas/answers): one example per question",
    roles=(Role("file"),),
    features=lambda options: (_FEATURES, frozenset()),
    examples=examples,
    validate=_validate,
)
