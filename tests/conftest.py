"""Test-suite options: the long runs (soak, full fault matrix, large fuzz) stay behind --long;
no property test has a time limit per example (speed is measured by the bench, not asserted:
a loaded machine must not fail a test whose logic holds)."""
import pytest
from hypothesis import settings

settings.register_profile("tablectl", deadline=None)
settings.load_profile("tablectl")


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
