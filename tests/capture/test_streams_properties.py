"""A Streams properties file's task.assignor.class: Kafka's classes and taskassign's names, anything else noted."""

from __future__ import annotations

import pytest

from taskassign.capture.streams_config import streams_config


@pytest.mark.parametrize(("value", "assignor"), [
    ("org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor", "sticky"),
    ("state_aware", "state_aware"),
    ("legacy-sticky", "legacy_sticky"),
])
def test_task_assignor_class_names_the_assignor(value: str, assignor: str) -> None:
    result = streams_config({"task.assignor.class": value, "num.standby.replicas": "1"}, application_id="app",
                            source="app.properties")
    assert result.assignor == assignor and result.configs == {"num.standby.replicas": 1}


def test_an_unknown_class_is_noted_not_run() -> None:
    result = streams_config({"task.assignor.class": "com.example.MyAssignor"}, application_id="app",
                            source="app.properties")
    assert result.assignor == "high_availability"
    assert any("com.example.MyAssignor is a custom assignor" in note for note in result.notes)
