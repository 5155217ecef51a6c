"""A small, valid fleet snapshot as rows of Python values (table name -> rows), for tests to break."""

from __future__ import annotations

import copy
from typing import Any

APP = "orders-app"
PID_1 = "00000000-0000-0000-0000-000000000001"
PID_2 = "00000000-0000-0000-0000-000000000002"


def base_rows() -> dict[str, list[dict[str, Any]]]:
    """One small, valid application: a stateful subtopology (2 tasks) and a stateless one (1 task),
    two clients (the first with two threads), a previous assignment with a standby."""
    changelog = f"{APP}-counts-changelog"
    return copy.deepcopy({
        "applications": [{"app_id": APP, "assignor": None, "configs": {"num.standby.replicas": "1"},
                          "now_ms": 1_000, "leader_process_id": None}],
        "subtopologies": [
            {"app_id": APP, "subtopology": 0, "source_topics": ["orders"], "sink_topics": [], "stores": ["counts"],
             "changelog_topics": [changelog], "copartition_groups": []},
            {"app_id": APP, "subtopology": 1, "source_topics": ["clicks"], "sink_topics": [], "stores": [],
             "changelog_topics": [], "copartition_groups": []},
        ],
        "repartition_topics": [],
        "topic_partitions": [
            *[{"app_id": APP, "topic": "orders", "partition": p, "replica_racks": ["r1", "r2"], "end_offset": 10,
               "committed_offset": None, "size_bytes": None} for p in (0, 1)],
            {"app_id": APP, "topic": "clicks", "partition": 0, "replica_racks": None, "end_offset": 5,
             "committed_offset": None, "size_bytes": None},
            *[{"app_id": APP, "topic": changelog, "partition": p, "replica_racks": ["r2"], "end_offset": 100 * (p + 1),
               "committed_offset": None, "size_bytes": 1_000} for p in (0, 1)],
        ],
        "members": [
            {"app_id": APP, "consumer_id": "c1-1", "process_id": PID_1, "rack": "r1", "client_tags": {},
             "host": "a:1"},
            {"app_id": APP, "consumer_id": "c1-2", "process_id": PID_1, "rack": "r1", "client_tags": {},
             "host": "a:1"},
            {"app_id": APP, "consumer_id": "c2-1", "process_id": PID_2, "rack": "r2", "client_tags": {},
             "host": None},
        ],
        "member_tasks": [
            {"app_id": APP, "consumer_id": "c1-1", "task_id": "0_0", "ownership": "active", "offset_sum": -2},
            {"app_id": APP, "consumer_id": "c1-2", "task_id": "1_0", "ownership": "active", "offset_sum": None},
            {"app_id": APP, "consumer_id": "c2-1", "task_id": "0_1", "ownership": None, "offset_sum": -2},
            {"app_id": APP, "consumer_id": "c2-1", "task_id": "0_0", "ownership": "standby", "offset_sum": 70},
        ],
    })
