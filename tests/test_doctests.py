"""The examples in public docstrings run and say what they show."""

import doctest
import importlib
import pkgutil

import pytest

import strata

MODULES = sorted(m.name for m in pkgutil.walk_packages(strata.__path__, "strata.") if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    if module.__name__ != name:  # strata.nn.X is strata.framework.nn.X at run time: its examples run once
        pytest.skip(f"{name} is {module.__name__}, whose examples run under that name")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
