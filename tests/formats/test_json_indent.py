"""formats.json_indent writes exactly what ``json.dumps(doc, indent=n, ensure_ascii=False)`` writes."""

from __future__ import annotations

import enum
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskassign.formats.json_indent import indented_json
from taskassign.formats.json_io import to_json_text

_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8)
_keys = st.text(max_size=6) | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=5) | st.lists(inner, max_size=3).map(tuple)
    | st.dictionaries(_keys, inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(_values, st.sampled_from([1, 2, 4]))
def test_same_text_as_the_standard_encoder(doc: Any, indent: int) -> None:
    assert indented_json(doc, indent) == json.dumps(doc, indent=indent, ensure_ascii=False)


class _Level(enum.IntEnum):
    LOW = 1


@pytest.mark.parametrize("doc", [
    {}, [], (), {"a": []}, {"a": {}}, [[], {}], {"x": [1, 2.5, None, True, "é\n\u2028\x00"]},
    {7: "a", None: [1], True: {"k": (1, 2)}, 2.5: {}}, {"a": {"b": [{"c": []}]}}, "s", 3, None,
    [float("nan"), float("inf"), -0.0], {"level": _Level.LOW, "levels": [_Level.LOW, 1]},
    {"clients": {"p": {"active": ["0_1", "0_2"], "consumers": {"c-1": {"active": ["0_1"], "deadline": None}}}}},
])
def test_same_text_on_edge_cases(doc: Any) -> None:
    for indent in (1, 2, 4):
        assert indented_json(doc, indent) == json.dumps(doc, indent=indent, ensure_ascii=False)
    assert to_json_text(doc) == json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("doc", [{"a": {1, 2}}, {(1, 2): 1}, [object()], {"a": [1, {"b": object()}]}])
def test_the_same_error_for_what_json_cannot_hold(doc: Any) -> None:
    with pytest.raises(TypeError) as standard:
        json.dumps(doc, indent=2, ensure_ascii=False)
    with pytest.raises(TypeError) as ours:
        indented_json(doc, 2)
    assert str(ours.value) == str(standard.value)
