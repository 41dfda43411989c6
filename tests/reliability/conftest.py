"""The reliability suite's shared pieces: the fault matrix's results, printed as a table at the
end of the run and written to artifacts/fault-matrix.md."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_RESULTS: list = []


@pytest.fixture
def matrix_results():
    return _RESULTS


def pytest_terminal_summary(terminalreporter):
    if not _RESULTS:
        return
    from controller.bench.matrix import render

    text = render(_RESULTS)
    art = ROOT / "artifacts"
    art.mkdir(exist_ok=True)
    (art / "fault-matrix.md").write_text(text)
    terminalreporter.write_sep("=", "fault matrix (artifacts/fault-matrix.md)")
    terminalreporter.write_line(text)
