"""Test-suite options: the long runs (soak, full fault matrix, large fuzz) stay behind --long."""
import pytest


def pytest_addoption(parser):
    parser.addoption("--long", action="store_true", default=False,
                     help="also run the long tests (soak, full fault matrix, large fuzzing)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--long"):
        return
    skip = pytest.mark.skip(reason="long run: use --long")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)
