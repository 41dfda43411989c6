"""The worked examples of docs/settle.md and the `tablectl rules settle` command that settles
them, for the games' tests of those examples."""
from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys


def documented_rounds(section: str) -> list[str]:
    """The JSON examples of one section of docs/settle.md, in order."""
    text = (pathlib.Path(__file__).parent.parent / "docs" / "settle.md").read_text()
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```json\n(.*?)```", body, re.S)


def settle_cli(doc: str) -> dict:
    """The settlement ``tablectl rules settle --json`` prints for the round document ``doc``."""
    run = subprocess.run([sys.executable, "-m", "controller.cli", "rules", "settle", "--json"],
                         input=doc, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)
