"""controller.strict_json: the one reader of the JSON people send (the console API's bodies,
the control socket's lines, the round documents of `tablectl rules settle`)."""
from __future__ import annotations

import json
import sys

import pytest

from controller.rules.base import MAX_AMOUNT
from controller.strict_json import (Pairs, TooLarge, TooLong, Twice, first_twice, nesting,
                                    once, pairs, plain, whole_number)


def read(text: str):
    return json.loads(text, object_pairs_hook=pairs)


def test_pairs_records_each_key_given_again_and_json_keeps_the_last():
    obj = read('{"amount": 10, "box": 1, "amount": 1000, "amount": 5}')
    assert isinstance(obj, Pairs) and obj.twice == ["amount", "amount"]
    assert obj == {"amount": 5, "box": 1}
    assert read('{"amount": 10, "box": 1}').twice == []


def test_once_refuses_the_first_key_given_twice_while_reading():
    with pytest.raises(Twice) as exc:
        json.loads('{"b": 1, "a": 1, "b": 2, "a": 2}', object_pairs_hook=once)
    assert str(exc.value) == "b"
    doc = json.loads('{"a": {"b": 1}}', object_pairs_hook=once)
    assert doc == {"a": {"b": 1}} and type(doc) is dict and type(doc["a"]) is dict


def test_first_twice_names_the_key_and_the_top_level_key_it_is_under():
    assert first_twice(read('{"box": 1, "box": 2}')) == '"box" twice'
    assert first_twice(read('{"stacks": {"1": 500, "1": 5000}}')) == '"1" twice in stacks'
    assert first_twice(read('{"args": {"x": [{"k": 1, "k": 2}]}}')) == '"k" twice in args'
    assert first_twice(read('[{"a": 1}, {"b": 1, "b": 2}]')) == '"b" twice'
    # the object itself is looked at before what it holds
    assert first_twice(read('{"s": {"i": 1, "i": 2}, "o": 1, "o": 2}')) == '"o" twice'
    assert first_twice(read('{"stacks": {"1": 500}, "seats": [1]}')) is None
    assert first_twice({"a": {"b": 1}}) is None                    # plain dicts record nothing


def test_first_twice_shows_the_key_cut_to_40_characters_through_shown():
    key = "K" * 50
    found = first_twice(read(f'{{"{key}": 1, "{key}": 2}}'), shown=str.lower)
    assert found == f'"{"k" * 40}" twice'


def test_plain_gives_plain_dicts_all_the_way_down():
    doc = plain(read('{"a": [{"b": {"c": 1}}], "d": 2}'))
    assert doc == {"a": [{"b": {"c": 1}}], "d": 2}
    assert type(doc) is dict and type(doc["a"][0]) is dict and type(doc["a"][0]["b"]) is dict


@pytest.mark.parametrize("value,depth", [
    (7, 0), ({}, 1), ({"box": 1}, 1), ({"seats": [1]}, 2), ([[]], 2),
    ({"args": {"stacks": {"1": 500}}}, 3), ({"a": 1, "b": [{"c": [1]}]}, 4)])
def test_nesting_counts_the_deepest_list_or_object(value, depth):
    assert nesting(value) == depth


@pytest.mark.parametrize("text", [str(MAX_AMOUNT), str(-MAX_AMOUNT), "0", "-0", "10"])
def test_a_whole_number_up_to_max_amount_is_taken(text):
    assert whole_number(text) == int(text)


@pytest.mark.parametrize("text", [str(MAX_AMOUNT + 1), str(-MAX_AMOUNT - 1), "1" + "0" * 30,
                                  "9" * 4300, "-" + "9" * 4300])
def test_a_whole_number_beyond_max_amount_is_too_large(text):
    with pytest.raises(TooLarge) as exc:
        whole_number(text)
    assert str(exc.value) == text


@pytest.mark.parametrize("text", ["9" * 4301, "-" + "9" * 5000])
def test_a_whole_number_longer_than_int_reads_is_too_long(text):
    """Not TooLarge: the console API answers it as a number too long to read, as before."""
    assert sys.get_int_max_str_digits() == 4300
    with pytest.raises(TooLong) as exc:
        whole_number(text)
    assert not isinstance(exc.value, TooLarge) and str(exc.value) == text


def test_whole_number_reads_json_as_parse_int():
    assert json.loads(f'{{"amount": {MAX_AMOUNT}}}', parse_int=whole_number) == \
        {"amount": MAX_AMOUNT}
    with pytest.raises(TooLarge):
        json.loads(f'{{"amount": {MAX_AMOUNT + 1}}}', parse_int=whole_number)


def test_first_twice_shows_the_key_it_is_under_cut_and_through_shown_too():
    """Both names are the sender's own text: a card spelled in the outer key is masked as the
    repeated key is (the API's answer never carries a card's name)."""
    outer = "As Kd" + "x" * 50
    found = first_twice(read(f'{{"{outer}": {{"x": 1, "x": 2}}}}'), shown=str.upper)
    assert found == f'"X" twice in {outer[:40].upper()}'
