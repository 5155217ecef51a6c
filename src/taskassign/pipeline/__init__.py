"""The fleet pipeline on Spark, and the only code that imports pyspark: the session (``session``),
reading a snapshot (``read``), the one shuffle by application and the per-bucket engine call (``stages``,
``engine_udf``, ``ipc``), assembling and writing the outputs (``assemble``, ``output``, ``manifest``), a
whole run (``run``) and one application's scenario for ``taskassign assign`` (``export``)."""
