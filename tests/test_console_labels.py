"""Every condition the pit display's device table can show has a label in both languages
(controller/web/i18n.js): a condition without one is shown as its raw key."""
import re
from pathlib import Path

from controller.clock_watch import CLOCK_BEHIND

ROOT = Path(__file__).resolve().parents[1]


def _labels(section: str) -> dict[str, list[str]]:
    text = (ROOT / "controller" / "web" / "i18n.js").read_text(encoding="utf-8")
    body = re.search(section + r": \{(.*?)\n  \}", text, re.S).group(1)
    return {k: [a, b] for k, a, b in re.findall(r'(\w+): \["([^"]+)", "([^"]+)"\]', body)}


def _conditions() -> set[str]:
    # The conditions the table sets on a device (controller/table/machine.py), and the one the
    # clock watch shows beside the devices (controller/clock_watch.py).
    src = (ROOT / "controller" / "table" / "machine.py").read_text(encoding="utf-8")
    found = set(re.findall(r'_cond\([^)]*\)\.add\("(\w+)"\)', src))
    assert {"jam", "malfunction", "door_open", "link_lost"} <= found, found
    return found | {CLOCK_BEHIND}


def test_every_condition_the_device_table_shows_has_a_label_in_both_languages():
    labels = _labels("conditions")
    missing = sorted(_conditions() - labels.keys())
    assert not missing, f"conditions without a label in i18n.js: {missing}"
    assert all(zh and en for zh, en in labels.values())
