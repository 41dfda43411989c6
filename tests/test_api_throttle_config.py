"""The console's limit on refused commands in table.toml: ``[api] refused_limit`` and
``refused_window_s`` (docs/configuration.md), each checked with its line and its range, in the
``config`` record, and named for a restart by a reload (they are read at start)."""
import pytest

from controller.config import parse_text

from config_helpers import line_of, only

BASE = """[table]
id = "t1"
game = "q-poker"
mode = "shoe"
boxes = 7

[api]
port = 8740
"""


def test_the_limits_default_to_20_refusals_in_10_s():
    api = parse_text(BASE).api
    assert (api.refused_limit, api.refused_window_s) == (20, 10)
    api = parse_text(BASE + "refused_limit = 0\nrefused_window_s = 60\n").api
    assert (api.refused_limit, api.refused_window_s) == (0, 60)


@pytest.mark.parametrize("line,key,words", [
    ("refused_limit = -1", "api.refused_limit", "must be 0 (no limit) or 1 to 10000"),
    ("refused_limit = 10001", "api.refused_limit", "must be 0 (no limit) or 1 to 10000"),
    ("refused_limit = 2.5", "api.refused_limit", "not a whole number"),
    ("refused_window_s = 0", "api.refused_window_s", "must be 1 to 3600 seconds"),
    ("refused_window_s = 3601", "api.refused_window_s", "must be 1 to 3600 seconds"),
    ("refused_window_s = \"10\"", "api.refused_window_s", "not a whole number"),
])
def test_a_limit_out_of_range_is_named_with_its_line_and_the_range(line, key, words):
    text = BASE + line + "\n"
    p = only(text)
    assert p.key == key and p.line == line_of(text, line.split(" =")[0])
    assert words in p.format()


def test_the_config_record_holds_the_limits_in_force():
    doc = parse_text(BASE + "refused_limit = 5\n").to_json()
    assert doc["api"]["refused_limit"] == 5 and doc["api"]["refused_window_s"] == 10


def test_a_reload_names_a_changed_limit_for_the_next_start():
    """A reload puts only the tokens in force: the limits are read at start, so a change of
    them is named among the keys for a restart (controller/api/reload.py)."""
    from controller.api.reload import restart_keys
    before = parse_text(BASE)
    after = parse_text(BASE + "refused_limit = 50\nrefused_window_s = 30\n")
    assert restart_keys(before, after) == ["api.refused_limit", "api.refused_window_s"]
