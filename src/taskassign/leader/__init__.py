"""One rebalance on the group leader, as Kafka Streams' ``StreamsPartitionAssignor`` runs it.

``run``: the contract around an assignor (assign -> validate -> follow-ups -> threads -> callback);
``assign``: that run for a scenario file (the one code path of ``taskassign assign``, the simulator and
the pipeline) and the assignment document of its result; ``threads``: each client's tasks over its
consumers; ``followups``: follow-up and probing rebalances; ``ownership``: who owns which partition
before the rebalance; ``host_maps``: the interactive-query host maps; ``partition_grouper``: topology and
partition counts to tasks (repartition sizing, co-partitioning); ``group``: the whole leader from a
GROUP.json's raw bytes to every member's assignment bytes; ``streams``: the streams protocol's counterpart
(KIP-1071: the broker's target assignment for a scenario, in the shape of a leader's result).
"""
