"""Judging assignments: how good one is (``metrics``: balance, movement, state load, cross-rack traffic,
standby spread; defined in docs/metrics.md), whether Kafka's invariants hold (``invariants``), and what
moved between the previous assignment and a new one, in sentences (``moves``, behind ``--explain``)."""
