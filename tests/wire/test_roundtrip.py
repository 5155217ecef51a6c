"""Encode -> decode -> encode is byte-identical, for every version of every message."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from taskassign.formats.wire_documents import message_from_json, message_to_json
from taskassign.wire import Assignment, AssignmentInfo, Subscription, SubscriptionInfo
from tests.wire.strategies import assignment_infos, assignments, subscription_infos, subscriptions

CODECS = {
    "subscription_info": (subscription_infos, SubscriptionInfo, range(1, 14)),
    "assignment_info": (assignment_infos, AssignmentInfo, range(1, 12)),
    "subscription": (subscriptions, Subscription, range(5)),
    "assignment": (assignments, Assignment, range(5)),
}
CASES = [(kind, v) for kind, (_, _, versions) in CODECS.items() for v in versions]


@pytest.mark.parametrize(("kind", "version"), CASES, ids=[f"{k}-v{v}" for k, v in CASES])
def test_every_version_round_trips(kind: str, version: int) -> None:
    strategy, cls, _ = CODECS[kind]

    @settings(max_examples=30)
    @given(strategy(version))  # type: ignore[operator]
    def check(message: object) -> None:
        data = message.encode()  # type: ignore[attr-defined]
        decoded = cls.decode(data)  # type: ignore[attr-defined]
        assert decoded == message
        assert decoded.encode() == data
        as_json = message_from_json(message_to_json(decoded, raw_user_data=True))
        assert as_json.encode() == data

    check()


@given(subscription_infos(11))
def test_nested_user_data_round_trips_through_json(info: SubscriptionInfo) -> None:
    envelope = Subscription.of(["t"], info.encode(), [("t", 0)], rack_id="r")
    data = envelope.encode()
    assert message_from_json(message_to_json(Subscription.decode(data))).encode() == data
