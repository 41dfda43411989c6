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


def _published_kinds() -> set[str]:
    # The kinds the table machine publishes (controller/table/*.py), the one the service
    # publishes itself (controller/service.py: a device refused at link-up) and the console
    # API's (controller/api/throttle.py: a role held back for the table's refusals).
    from controller.api.throttle import HELD, RELEASED

    found: set[str] = {HELD, RELEASED}
    for src in [*(ROOT / "controller" / "table").glob("*.py"), ROOT / "controller" / "service.py"]:
        text = src.read_text(encoding="utf-8")
        found |= set(re.findall(r'_publish\("(\w+)"', text))
        found |= set(re.findall(r'PublicEvent\("(\w+)"', text))
    assert {"card", "round_void", "device_replaced", "device_refused"} <= found, found
    return found - {"view"}     # the view is drawn, not listed among the events


def test_every_event_the_pit_lists_has_a_label_in_both_languages():
    labels = _labels("events")
    missing = sorted(_published_kinds() - labels.keys())
    assert not missing, f"events without a label in i18n.js: {missing}"
    assert all(zh and en for zh, en in labels.values())
