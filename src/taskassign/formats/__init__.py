"""taskassign's files, read and written: scenarios (``scenario``), assignments (``assignment``), groups
at a rebalance (``group``), wire messages as JSON (``wire_documents``), event scripts (``events``), and
the JSON helpers they share (``json_io``: errors that name the JSON path, deterministic atomic writes).

Every reader checks the file's ``format`` tag first and names the JSON path of anything wrong; every
writer's output reads back through the matching reader (docs/formats.md).
"""
