"""The traceability tables of docs/regulations/ cite tests of tests/test_rules_*.py as
``tests/test_rules_<name>.py::<Class or function>``: each must exist, and its docstring must cite
the article of the row it is cited in, so that no row points at a test of another article."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TABLES = {"q-poker.md": "89/2004", "fortune-3-card-poker.md": "78/2008",
          "texas-holdem.md": "11/2008", "super-pan-9.md": "261/96/M"}
CITED = re.compile(r"tests/(test_rules_\w+)\.py::(\w+)")


def _nodes(module: str) -> dict[str, str]:
    """The test classes and functions of ``tests/<module>.py``, with their docstrings."""
    tree = ast.parse((ROOT / "tests" / f"{module}.py").read_text())
    return {n.name: ast.get_docstring(n) or "" for n in tree.body
            if isinstance(n, (ast.ClassDef, ast.FunctionDef))
            and n.name.startswith(("test_", "Test"))}


def _citations():
    for table, regulation in TABLES.items():
        for line in (ROOT / "docs" / "regulations" / table).read_text().splitlines():
            cells = line.split("|")
            if not line.startswith("| ") or len(cells) < 4:
                continue
            article = cells[1].strip().split("-")[0]     # "10(1)-(5)" is cited as 10(1)
            for module, name in CITED.findall(cells[-2]):
                yield table, regulation, article, module, name


def test_some_row_cites_a_rules_test():
    assert list(_citations())


@pytest.mark.parametrize("table,regulation,article,module,name", list(_citations()))
def test_a_cited_rules_test_exists_and_cites_the_rows_article(table, regulation, article,
                                                                module, name):
    nodes = _nodes(module)
    assert name in nodes, f"{table} row {article}: {module}.py has no {name}"
    doc = " ".join(nodes[name].split())
    # "89/2004 art. 6(1), 9(2)" cites 9(2) too; 11(1) is no citation of 1(1)
    cited = doc.partition(f"{regulation} art. ")[2]
    assert re.search(rf"(?<![\w)]){re.escape(article)}(?![\w(])", cited), (
        f"{table} row {article}: the docstring of {module}.py::{name} does not cite "
        f"{regulation} art. {article}")
