"""docs/state-machine.md is generated from the machine and must match it."""
from pathlib import Path

from controller.table import STATES, TRANSITIONS
from controller.table.diagram import document, mermaid

DOC = Path(__file__).resolve().parents[1] / "docs" / "state-machine.md"


def test_doc_matches_machine():
    assert DOC.read_text() == document(), \
        "regenerate: python -m controller.table.diagram > docs/state-machine.md"


def test_every_state_is_reachable_in_the_drawing():
    drawn = mermaid()
    for s in STATES:
        assert f"--> {s}" in drawn, s
    assert all(t["dest"] in STATES for t in TRANSITIONS)
