"""What a member's raw SubscriptionInfo bytes tell the pipeline: process id, host, tags, offset sums."""

from __future__ import annotations

from typing import Any

from taskassign.errors import DecodeError
from taskassign.wire.subscription_info import SubscriptionInfo
from taskassign.wire.versions import LATEST_SUPPORTED_VERSION, MIN_CLIENT_TAGS_VERSION

__all__ = ("decode_subscription",)


def decode_subscription(data: bytes | None) -> dict[str, Any]:
    """``_sub_process_id``, ``_sub_host``, ``_sub_tags`` (pairs, v11+), ``_sub_offsets`` (task_id and
    offset_sum per task), or ``_sub_error`` saying why the bytes cannot be used; all None without bytes."""
    empty: dict[str, Any] = {"_sub_error": None, "_sub_process_id": None, "_sub_host": None, "_sub_tags": None,
                             "_sub_offsets": None}
    if data is None:
        return empty
    try:
        info = SubscriptionInfo.decode(data)
    except DecodeError as exc:
        return {**empty, "_sub_error": f"subscription_info: {exc}"}
    if info.is_future or info.process_id is None:
        return {**empty, "_sub_error": f"subscription_info: version {info.version} is newer than this leader "
                                       f"reads ({LATEST_SUPPORTED_VERSION}); Kafka would answer with version "
                                       "probing"}
    return {
        "_sub_error": None,
        "_sub_process_id": str(info.process_id),
        "_sub_host": info.user_endpoint,
        "_sub_tags": list(info.tags().items()) if info.version >= MIN_CLIENT_TAGS_VERSION else None,
        "_sub_offsets": [{"task_id": str(t), "offset_sum": o} for t, o in sorted(info.offset_sums().items())],
    }
