"""Reading a running Kafka Streams application: the only code that talks to a Kafka cluster, and it only
reads (it never joins a group, commits or changes anything).

- ``cluster``: the read-only requests (DescribeGroups with raw bytes, ListGroups, Metadata, ListOffsets,
  OffsetFetch), all within one deadline;
- ``security``, ``jaas``, ``tls``: Kafka client properties (``--command-config``) as connection settings;
- ``topology_text``: the ``Topology#describe()`` text, parsed; ``topology_inference``: the group file's
  topology derived from it;
- ``streams_config``: the application's properties as the leader's configs;
- ``group_capture``: one application into a GROUP.json with Kafka's recorded outcome;
- ``snapshot``: many applications into a fleet snapshot.
"""
