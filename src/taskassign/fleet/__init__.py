"""Fleet snapshots without Spark: the snapshot's tables and their files (``tables``, ``snapshot_files``),
the row checks and the reason codes of the errors table (``checks``, ``reasons``, ``marks``), the
derivation of each application's tasks, lags and clients (``derive``, ``build``), one bucket of
applications through the engine (``bucket``, ``application``), the output rows (``outputs``), and a
realistic synthetic fleet (``generate``). ``pipeline/`` runs these per bucket on Spark."""
