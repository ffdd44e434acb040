"""The examples in the annotation package's docstrings run and hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["agreement", "argilla_queue", "decisions", "excerpt", "queue", "store"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"answerable.annotation.{name}")
    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert attempted > 0 and failed == 0
