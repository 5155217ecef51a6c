"""The Java the streams-group assignors lean on, against Java itself (a JDK is needed; skipped without one):
``Integer.parseInt`` (sticky's ``num.standby.replicas``), a ``PriorityQueue`` ordered by a key with ties
(sticky's process and member queues), ``HashMap<String, ...>`` iteration with and without pre-sizing (the
member and process maps) and ``String.compareTo`` (subtopology, process and member order)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskassign.errors import JavaNumberFormatException
from taskassign.internals.java_order import (
    KeyedJavaPriorityQueue,
    compute_if_absent_order,
    hash_iteration_order,
    java_string_key,
)
from taskassign.streams_protocol.configs import java_parse_int
from tests.java_oracle import JavaOracle

ORACLE_SOURCE = Path(__file__).parent / "java" / "StreamsJavaOracle.java"

PARSE_INT_CASES = [
    None, "", "0", "1", "-1", "+7", "007", "-0", "+", "-", "++1", "+-1", "2147483647", "2147483648", "-2147483648",
    "-2147483649", "99999999999", " 1", "1 ", "1_000", "0x10", "1e3", "1.0", "abc", "\uff11\uff12", "\u0663", "\u0967",
    "\U0001d7cf", "\ud800", "\u00b2", "\u2160", "\u0660\u0661", "١٢٣", "-\uff19",
]


def hex_of(text: str | None) -> str:
    if text is None:
        return "null"
    if text == "":
        return "-"
    return text.encode("utf-16-be", "surrogatepass").hex()


@pytest.fixture(scope="module")
def java(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaOracle]:
    oracle = JavaOracle(ORACLE_SOURCE, tmp_path_factory.mktemp("streams-oracle"))
    try:
        yield oracle
    finally:
        oracle.close()


def python_parse_int(text: str | None) -> dict[str, object]:
    try:
        return {"value": java_parse_int(text)}
    except JavaNumberFormatException as exc:
        return {"error": exc.message}


@pytest.mark.parametrize("text", PARSE_INT_CASES)
def test_parse_int_is_javas(java: JavaOracle, text: str | None) -> None:
    assert python_parse_int(text) == java.ask(f"parseInt {hex_of(text)}")


def test_parse_int_on_random_strings(java: JavaOracle) -> None:
    rng = random.Random(11)
    alphabet = "0123456789+- x\u0663\uff15"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        assert python_parse_int(text) == java.ask(f"parseInt {hex_of(text)}"), text


@pytest.mark.parametrize("seed", range(40))
def test_keyed_priority_queue_is_javas_with_ties(java: JavaOracle, seed: int) -> None:
    rng = random.Random(seed)
    ops: list[str] = []
    queue: KeyedJavaPriorityQueue[int] = KeyedJavaPriorityQueue()
    polled: list[int] = []
    offered = 0
    for _ in range(rng.randint(1, 120)):
        if queue and rng.random() < 0.4:
            ops.append("p")
            polled.append(queue.poll()[1])
        else:
            key = rng.randint(0, 4)  # few distinct keys: ties everywhere
            ops.append(f"o{key}")
            queue.offer(key, offered)
            offered += 1
    answer = java.ask(f"queue {','.join(ops)}")
    assert polled == answer["polled"]
    assert [item for _, item in queue.array()] == answer["array"]


@pytest.mark.parametrize(("capacity", "count"), [(-1, 5), (-1, 13), (-1, 100), (1, 3), (3, 3), (7, 40), (250, 250),
                                                 (1000, 250)])
def test_string_hash_map_order_is_javas(java: JavaOracle, capacity: int, count: int) -> None:
    rng = random.Random(capacity * 1000 + count)
    keys = list(dict.fromkeys(
        rng.choice(["m", "member-", "p", "x3-", "\u00e9t\u00e9-"]) + str(rng.randint(0, 10_000)) for _ in range(count)
    ))
    order = hash_iteration_order(keys, initial_capacity=capacity if capacity > 0 else None)
    answer = java.ask(f"hashmap {capacity} {' '.join(hex_of(k) for k in keys)}")
    assert [keys.index(k) for k in order] == answer["order"]


@pytest.mark.parametrize(("capacity", "count"), [(-1, 5), (-1, 13), (0, 1), (1, 3), (3, 7), (8, 8), (13, 13),
                                                 (40, 40), (100, 400), (1000, 300)])
def test_compute_if_absent_order_is_javas(java: JavaOracle, capacity: int, count: int) -> None:
    """Keys repeat (members of one process) and collide ("Aa"/"BB" and their concatenations hash alike):
    computeIfAbsent links new keys at the bucket's head and grows the table a call late. (No chain reaches 8 in a
    table of 64+, where Java makes a tree bin: not emulated.)"""
    rng = random.Random(capacity * 7 + count)
    pool = ["Aa", "BB", "AaAa", "BBBB", "AaBB", "BBAa", "p", "q"] + [f"p{rng.randint(0, 5_000)}" for _ in range(count)]
    calls = [rng.choice(pool[: max(2, count)]) for _ in range(count)]
    order = compute_if_absent_order(calls, initial_capacity=capacity if capacity >= 0 else None)
    answer = java.ask(f"computeIfAbsent {capacity} {' '.join(hex_of(k) for k in calls)}")
    assert [calls.index(k) for k in order] == answer["order"]


def test_compute_if_absent_grows_a_small_table_for_a_long_chain(java: JavaOracle) -> None:
    colliding = ["AaAaAa", "AaAaBB", "AaBBAa", "AaBBBB", "BBAaAa", "BBAaBB", "BBBBAa", "BBBBBB", "AaAa", "x"]
    for capacity in (-1, 4, 16):  # 64+ buckets turn the chain into a tree bin: not emulated
        order = compute_if_absent_order(colliding, initial_capacity=capacity if capacity >= 0 else None)
        answer = java.ask(f"computeIfAbsent {capacity} {' '.join(hex_of(k) for k in colliding)}")
        assert [colliding.index(k) for k in order] == answer["order"], capacity


@pytest.mark.parametrize(("a", "b"), [("10", "9"), ("sub-a", "sub-b"), ("a", "ab"), ("\uffff", "\U00010000"),
                                      ("\ud7ff", "\ue000"), ("Z", "a"), ("", "0")])
def test_string_order_is_javas(java: JavaOracle, a: str, b: str) -> None:
    ka, kb = java_string_key(a), java_string_key(b)
    sign = (ka > kb) - (ka < kb)
    assert sign == java.ask(f"compare {hex_of(a)} {hex_of(b)}")["sign"]


def test_string_order_differs_from_code_points_outside_the_bmp() -> None:
    assert "\uffff" < "\U00010000"  # code points
    assert java_string_key("\uffff") > java_string_key("\U00010000")  # UTF-16 units: a surrogate 0xd800 < 0xffff
