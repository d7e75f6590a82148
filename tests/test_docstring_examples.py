"""Every docstring example of the package runs: the doctests of each module of `catalog`.

One test per module that has examples, run by the standard library's doctest as
``pytest --doctest-modules`` would, but from here: CI's test command collects ``tests/`` only,
and a module whose optional library is not installed (Apache Beam is not in the test extra)
is reported as skipped, saying which, instead of failing collection. Examples marked
``# doctest: +SKIP`` need a prepared dataset or the network; they are counted apart.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import catalog

#: Libraries of extras that the test extra does not install; a module needing one is skipped.
OPTIONAL = {"apache_beam"}
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def module_names() -> list[str]:
    names = ["catalog"]
    for info in pkgutil.walk_packages(catalog.__path__, "catalog."):
        if not info.name.endswith("__main__"):  # importing it runs the command line
            names.append(info.name)
    return sorted(names)


def doctests(name: str) -> list[doctest.DocTest]:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in OPTIONAL:
            pytest.skip(f"{name} needs {exc.name} (an extra)")
        raise
    finder = doctest.DocTestFinder(exclude_empty=True)
    return [t for t in finder.find(module, name) if t.examples]


def runnable(test: doctest.DocTest) -> int:
    return sum(1 for e in test.examples if not e.options.get(doctest.SKIP))


@pytest.mark.parametrize("name", module_names())
def test_docstring_examples_run(name: str) -> None:
    tests = doctests(name)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in tests:
        runner.run(test, clear_globs=True)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed"


def test_the_examples_are_found() -> None:
    """The finder sees the package's examples (a broken walk would pass every test above)."""
    count = sum(runnable(t) for name in module_names() for t in doctests(name))
    assert count >= 50, count
