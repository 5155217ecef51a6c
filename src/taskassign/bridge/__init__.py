"""The bridge: taskassign's assignors at work in real applications (docs/bridge.md).

A Kafka Streams application (classic protocol, Kafka 3.8+) runs the Java ``TaskassignTaskAssignor``
(``java/``, built by ``taskassign bridge build``) as its KIP-924 ``task.assignor.class``; at every rebalance it
posts KIP-924's ApplicationState to ``taskassign serve`` (``service``), which turns it into a scenario
(``request``), runs the application's assignor or answers an approved plan (``plans``), keeps the decision in
its audit log (``audit``) and answers the assignment. A Kafka 4.4 broker runs ``TaskassignStreamsAssignor`` for
the streams groups that choose it (KIP-1357) and posts their streams-group document instead.
"""
