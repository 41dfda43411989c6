"""A console token pasted as a value of table.toml (``table.id = "<the token>"``, a journal path
holding it) is never repeated by a problem.

The file holds each token as its hash only, so the check knows a value for a token by hashing
it, and each part of it a token may be, against the hashes [api.tokens] configures. Such a
value is refused (a table id is published with every event, a path logged), named by its key
and line, shown as "(not shown)", with the role whose token it is and the way out; no other
problem quotes it. `config check`, the daemon's start and a reload say the same (a token pasted
as a section's or key's name: tests/test_config_token_section.py)."""
import pytest

from controller.config import hash_token
from controller.config_tokens import Tokens, masked
from config_helpers import line_of, only, problems
from test_config_token_section import BASE, T, refused_unshown, reload_refused_unshown
from test_token_reload import write

TOKENS = f'\n[api.tokens]\ndealer = "{hash_token(T)}"\n'


@pytest.mark.parametrize("text, key, verb", [
    (BASE.replace('id = "t1"', f'id = "{T}"'), "table.id", "is"),
    (BASE + f'\n[journal]\npath = "/var/lib/tablectl/{T}/journal.db"\n', "journal.path",
     "holds"),
    (BASE + f'\n[chips]\ncurrency = "MOP {T}"\n', "chips.currency", "holds"),
    # a list's item, which its key's own check would quote as no pin
    (BASE + f'\n[gpio]\nbox_sensors = [5, "{T}"]\n', "gpio.box_sensors", "is"),
    # a value its own check refuses (not a game): said once, as a token
    (BASE.replace('game = "q-poker"', f'game = "{T}"'), "table.game", "is"),
])
def test_a_token_as_a_value_is_named_by_its_key_and_line_never_its_text(text, key, verb):
    text += TOKENS
    p = only(text)
    assert (p.key, p.line) == (key, line_of(text, T))
    assert p.reason == (f"is (not shown): it {verb} the console token of role dealer, and a "
                        "token is never shown"), p.reason
    assert "hash-token --new --role dealer" in p.fix
    assert T not in p.format("table.toml")


def test_a_token_written_in_clear_for_its_role_is_not_shown_where_it_is_pasted_again():
    """The role's token in clear where its hash goes (a problem of its own) and pasted as the
    table id too: neither problem shows it."""
    text = BASE.replace('id = "t1"', f'id = "{T}"') + f'\n[api.tokens]\ndealer = "{T}"\n'
    found = problems(text)
    assert {p.key for p in found} == {"table.id", "api.tokens.dealer"}
    assert all(T not in p.format() for p in found), [p.format() for p in found]
    assert "console token of role dealer" in next(p for p in found if p.key == "table.id").reason


def test_a_value_that_holds_no_configured_token_is_checked_and_shown_as_before():
    """Another token, or none configured: the check cannot tell it for one, and says what it
    said (a table id of other characters, quoted)."""
    text = BASE.replace('id = "t1"', 'id = "Zq8vN3kLw5RtY7pX c2Hm9Jb4"')
    assert "'Zq8vN3kLw5RtY7pX c2Hm9Jb4'" in only(text).reason
    p = only(text + f'\n[api.tokens]\ndealer = "{hash_token("x" * 32)}"\n')
    assert p.key == "table.id" and "'Zq8vN3kLw5RtY7pX c2Hm9Jb4'" in p.reason


def test_the_search_finds_a_token_inside_a_value_and_masks_every_quoting():
    tokens = Tokens({hash_token(T): "supervisor"}, {}, 16)
    hit = tokens.find(f"x/{T}.db")
    assert (hit.role, hit.token, hit.whole) == ("supervisor", T, False)
    assert tokens.find(T[:-1]) is None and tokens.find("y" * 40) is None
    value = f"x/{T}.db"
    said = f"is {value!r}; {value} and {T} again"
    assert masked(said, value, hit, "(not shown)") == \
        "is (not shown); (not shown) and (not shown) again"


def test_config_check_and_the_start_refusal_never_repeat_it(tmp_path, capsys):
    path = write(tmp_path, {"dealer": T})
    text = path.read_text().replace('id = "rot-1"', f'id = "{T}"')
    path.write_text(text)
    line = line_of(text, f'id = "{T}"')
    refused_unshown(path, capsys, line,
                    "table.id: is (not shown): it is the console token of role dealer")


def test_the_reload_refusal_never_repeats_it(tmp_path, capsys):
    path = write(tmp_path, {"dealer": T})
    rec = reload_refused_unshown(
        tmp_path, path, lambda text: text.replace('path = "', f'path = "{T}/', 1), capsys)
    line = line_of(path.read_text(), T)
    assert [(q["key"], q["line"]) for q in rec.payload["problems"]] == [("journal.path", line)]
    assert "holds the console token of role dealer" in rec.payload["problems"][0]["reason"]


def test_a_value_meant_as_written_that_holds_a_weak_token_is_told_to_replace_the_token():
    """A token that happens to be part of a legitimate value (``tablectl/journal`` in the
    journal's path): the value is right, and the way out is a new token, which the refusal
    says, not only to write another value."""
    weak = "tablectl/journal"
    text = (BASE + '\n[journal]\npath = "/var/lib/tablectl/journal.db"\n'
            + f'\n[api.tokens]\ndealer = "{hash_token(weak)}"\n')
    p = only(text)
    assert p.key == "journal.path" and "holds the console token of role dealer" in p.reason
    assert "meant as written" in p.fix and "guessed from this file" in p.fix, p.fix
    assert "hash-token --new --role dealer" in p.fix and weak not in p.format("table.toml")


def test_the_search_hashes_a_few_parts_of_a_long_value_and_still_finds_a_made_token():
    """The search runs on the daemon's main loop during a reload: a value of the longest
    length searched has a few parts hashed for each of its characters, not every part of it
    (over 400,000 for 4096 characters), and a token `hash-token --new` makes is found even
    run into other letters; one typed by hand, where it stands between other characters."""
    import secrets

    from controller.config_tokens import VALUE_SEARCHED_MAX

    made = secrets.token_urlsafe(32)
    tokens = Tokens({hash_token(made): "dealer", hash_token("my table secret!"): "pit"}, {}, 16)
    for value in (secrets.token_urlsafe(VALUE_SEARCHED_MAX)[:VALUE_SEARCHED_MAX],
                  "a." * (VALUE_SEARCHED_MAX // 2)):
        assert len(list(tokens._parts(value))) <= 20 * len(value)
    hit = tokens.find(f"abc{made}xyz" * 3)
    assert (hit.role, hit.token, hit.whole) == ("dealer", made, False)
    hit = tokens.find("/var/lib/my table secret!/journal.db")
    assert (hit.role, hit.token) == ("pit", "my table secret!")
