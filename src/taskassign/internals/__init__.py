"""The working state Kafka's assignors share, as Kafka keeps it in its internals package.

``java_order``: Java collection iteration orders that leak into Kafka's decisions (HashMap, HashSet,
PriorityQueue, String.hashCode), emulated exactly. ``client_state``: per-client mutable scratch state
(Kafka's ``ClientState``). ``constrained_priority_set`` and ``deferred_heap_set``: the priority sets the
assignors and standby placement draw clients from. ``lags``: every client's lag on every stateful task.
``gc_pause``: the cyclic garbage collector paused around reading a large file or running one rebalance.

Nothing here is public API; the contract (``model``, ``configs``) is below it, the assignors, standby
placement, rack optimisation and wire codecs above.
"""
