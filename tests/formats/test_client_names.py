"""Client names: what the operator knows a client by, unique and deterministic, one function for every command."""

from __future__ import annotations

from taskassign.formats.client_names import ClientFacts, client_names, facts_from_group, streams_client_id
from taskassign.ids import ProcessId

A = ProcessId("1b6f8a52-0c1e-4a43-9a34-3c2f1a0e9d11")
B = ProcessId("5c2d9e31-7a4b-4f0e-8d21-9b7e6a5f4c33")
C = ProcessId("5c2d9e31-0000-4f0e-8d21-9b7e6a5f4c33")


def test_the_client_id_is_read_from_a_consumer_or_member_id() -> None:
    assert streams_client_id("orders-i2-StreamThread-1-consumer") == "orders-i2"
    assert streams_client_id("orders-i2-StreamThread-3-consumer-6130fe9a-7f03-4cc1-a0cd-c0e48cac0c15") == "orders-i2"
    assert streams_client_id("c1-0") is None


def test_client_id_first_then_endpoint_then_host_then_short_process_id() -> None:
    names = client_names({
        A: ClientFacts("orders-i0", "10.0.0.5:7070", "10.0.0.5"),
        B: ClientFacts(None, "10.0.0.6:7070", "10.0.0.6"),
        C: ClientFacts(None, None, None),
    })
    assert names == {A: "orders-i0", B: "10.0.0.6:7070", C: "5c2d9e31-0"}


def test_a_value_every_client_shares_is_skipped_and_clashes_get_the_short_process_id() -> None:
    # one client.id on every instance: the endpoints name them; one host for all: suffixed, never the same name
    names = client_names({A: ClientFacts("orders", "a:1", "h"), B: ClientFacts("orders", "b:1", "h")})
    assert names == {A: "a:1", B: "b:1"}
    names = client_names({A: ClientFacts("orders", None, None), B: ClientFacts("orders", None, None)})
    assert names == {A: "orders~1b6f8a52", B: "orders~5c2d9e31"}
    assert len(set(names.values())) == 2


def test_kafka_s_default_client_id_holds_the_process_id_so_the_short_id_names_it() -> None:
    assert client_names({A: ClientFacts(f"orders-{A}")}) == {A: "1b6f8a52"}


def test_names_do_not_depend_on_the_order_of_the_input() -> None:
    facts = {A: ClientFacts("x"), B: ClientFacts("x"), C: ClientFacts("y")}
    assert client_names(facts) == client_names(dict(reversed(list(facts.items()))))


def test_a_captured_group_names_its_clients_by_their_client_id() -> None:
    from taskassign.formats.group import read_group
    from tests.helpers import EXAMPLES_DIR

    spec = read_group(EXAMPLES_DIR / "groups" / "orders-app.group.json")
    names = client_names(facts_from_group(spec))
    assert sorted(names.values()) == ["orders-app-1b6f", "orders-app-5c2d", "orders-app-9e4a"]


def test_a_streams_group_names_processes_from_its_captured_members() -> None:
    from taskassign.formats.client_names import facts_from_streams_group
    from taskassign.streams_protocol.model import GroupMember

    members = [GroupMember("m2", "p-1"), GroupMember("m1", "p-1"), GroupMember("m3", "p-2"), GroupMember("m4", "p-3")]
    capture = {"members": {
        "m1": {"clientId": "orders-i0-StreamThread-1", "clientHost": "/10.0.0.5", "userEndpoint": None},
        "m3": {"clientId": None, "clientHost": "/10.0.0.6", "userEndpoint": {"host": "orders-1", "port": 7070}},
    }}
    facts = facts_from_streams_group(members, capture)
    assert facts["p-1"] == ClientFacts("orders-i0", None, "10.0.0.5")
    assert client_names(facts) == {"p-1": "orders-i0", "p-2": "orders-1:7070", "p-3": "p-3"}


def _shortest_unshared_prefix_by_scan(keys: list[str]) -> dict[str, str]:
    """The rule spelt out: grow each text's prefix from SHORT_ID_LENGTH while another text starts with it."""
    from taskassign.formats.units import SHORT_ID_LENGTH

    out = {}
    for text in keys:
        n = SHORT_ID_LENGTH
        while n < len(text) and any(o != text and o.startswith(text[:n]) for o in keys):
            n += 1
        out[text] = text[:n]
    return out


def test_short_text_names_are_the_shortest_prefixes_no_other_text_starts_with() -> None:
    import random

    from taskassign.formats.client_names import _short

    rng = random.Random(7)
    for _ in range(500):
        keys = sorted({"".join(rng.choice("ab") for _ in range(rng.randint(0, 14))) for _ in range(rng.randint(1, 12))})
        assert _short(list(keys)) == _shortest_unshared_prefix_by_scan(keys)
