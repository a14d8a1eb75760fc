"""The shared JSON reader's bounds (common/web.py), without a server."""

from __future__ import annotations

import pytest

from common.web import MAX_JSON_DEPTH, BadJSON, parse_json_object


def nested(depth: int) -> str:
    # An object holding ``depth - 1`` nested arrays: ``depth`` containers in all.
    return '{"a": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


def test_nesting_up_to_the_bound_is_read_and_one_deeper_is_refused():
    assert parse_json_object(nested(MAX_JSON_DEPTH))["a"] is not None
    with pytest.raises(BadJSON, match="nested deeper than 64") as err:
        parse_json_object(nested(MAX_JSON_DEPTH + 1))
    assert err.value.field is None


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        ('{"a": {"b": ["ok", "x\\u0000"]}}', "a.b[1]", "must not contain NUL characters"),
        ('{"a": "\\udfff"}', "a", "must not contain unpaired surrogates"),
        ('{"a\\u0000": 1}', "a\ufffd", "the name must not contain NUL characters"),
        ('{"n": -Infinity}', "n", "must be a finite number"),
    ],
)
def test_unstorable_values_are_refused_naming_the_field(text, field, message):
    with pytest.raises(BadJSON) as err:
        parse_json_object(text)
    assert err.value.field == field
    assert str(err.value) == f"{field}: {message}"


def test_a_surrogate_pair_is_one_character_and_is_kept():
    assert parse_json_object('{"a": "\\ud83d\\ude00"}') == {"a": "\U0001f600"}
