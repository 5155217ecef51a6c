"""Kafka client properties as kafka-python settings: the mapping, and its proof against a real broker.

The live tests (marked ``kafka``) use the lab broker's SASL_PLAINTEXT listener, where ACLs are enforced: a
properties text as a user would write it goes through ``parse_properties`` and ``client_settings`` into a
kafka-python ``KafkaClient``, which must then get through authentication and run every request a capture
makes. ``LAB_READER`` holds DESCRIBE on every topic and group and nothing else; ``LAB_STRANGER`` holds no ACL.
They record how kafka-python reports each failure (exception class and where it is raised, or error code):

- wrong password (PLAIN or SCRAM): the broker answers SaslAuthenticate with error 58 SASL_AUTHENTICATION_FAILED
  and closes; ``KafkaClient.await_ready`` raises ``KafkaConnectionError("Connection to <node> failed.")``. The
  cause reaches the caller only as the ``kafka.conn`` ERROR log record "Closing connection. ...", whose
  ``args[1]`` is the ``SaslAuthenticationFailedError`` (errno 58);
- a mechanism the listener does not enable: the connection is closed during the handshake,
  ``KafkaConnectionError`` again;
- no ACL: error code 30 GROUP_AUTHORIZATION_FAILED in the response of FindCoordinator (top level, v0-v3),
  DescribeGroups (per group) and OffsetFetch (top level, v2+); 29 TOPIC_AUTHORIZATION_FAILED per topic in
  Metadata (named topics; a request for all topics silently leaves them out) and per partition in
  ListOffsets; ListGroups answers without error, listing only the groups the user may DESCRIBE.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import taskassign.capture.security as security
from taskassign.capture.security import SECRET_KWARGS, ClientSettings, client_settings, read_client_settings
from taskassign.errors import ClientConfigError, PropertiesError, UserInputError
from taskassign.formats.properties import parse_properties

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"


def settings_of(text: str, **extra: Any) -> ClientSettings:
    return client_settings(parse_properties(text, "client.properties"), source="client.properties", **extra)


def notes(notes_: tuple[Any, ...]) -> dict[str, str]:
    return {note.key: note.reason for note in notes_}


# --- the mapping -----------------------------------------------------------------------------------------------


def test_nothing_set_is_plaintext_and_read_only() -> None:
    assert settings_of("").kwargs == {"security_protocol": "PLAINTEXT", "allow_auto_create_topics": False}


def test_sasl_plain_from_a_properties_text() -> None:
    result = settings_of(
        "# as for kafka-consumer-groups.sh --command-config\n"
        "security.protocol = sasl_plaintext\n"
        "sasl.mechanism=PLAIN\n"
        f"sasl.jaas.config={PLAIN_MODULE} required \\\n"
        '    username="alice" \\\n'
        '    password="p\\\\"w\\\\\\\\d";\n'  # in the file: password="p\\"w\\\\d" -> JAAS: p"w\d
    )
    assert result.kwargs == {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": "alice",
        "sasl_plain_password": 'p"w\\d',
        "allow_auto_create_topics": False,
    }
    assert result.applied == ("security.protocol=SASL_PLAINTEXT", "SASL PLAIN as user 'alice' (sasl.jaas.config)")


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram(mechanism: str) -> None:
    result = settings_of(
        f"security.protocol=SASL_SSL\nsasl.mechanism={mechanism}\n"
        f'sasl.jaas.config={SCRAM_MODULE} required username="a=b,c" password="pw";'
    )
    assert result.kwargs["sasl_mechanism"] == mechanism
    # Java escapes the SCRAM user name (RFC 5802); kafka-python does not, so it gets the escaped name.
    assert result.kwargs["sasl_plain_username"] == "a=3Db=2Cc"


def test_either_login_module_serves_either_mechanism() -> None:
    """Java's PLAIN and SCRAM clients read the credentials from the login subject, which both modules fill."""
    result = settings_of(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
        f'sasl.jaas.config={PLAIN_MODULE} required username="alice" password="pw";'
    )
    assert result.kwargs["sasl_plain_username"] == "alice"


def test_values_are_trimmed_like_kafkas_configdef() -> None:
    result = client_settings(
        {"security.protocol": " SASL_PLAINTEXT\t", "sasl.mechanism": "PLAIN ",
         "sasl.jaas.config": f' {PLAIN_MODULE} required username="a" password=" pw ";  '},
        source="x",
    )  # fmt: skip
    assert result.kwargs["sasl_plain_password"] == " pw "  # inside the JAAS quotes: kept


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        ("sasl.mechanism=PLAIN", "sasl.jaas.config", "required for PLAIN"),
        ('sasl.mechanism=PLAIN\nsasl.jaas.config=x.Other required username="a" password="b";', "sasl.jaas.config",
         "PLAIN needs org.apache.kafka.common.security.plain.PlainLoginModule"),
        (f'sasl.mechanism=PLAIN\nsasl.jaas.config={PLAIN_MODULE} required username="a";', "sasl.jaas.config",
         "no password option"),
        (f"sasl.mechanism=PLAIN\nsasl.jaas.config={PLAIN_MODULE} required username=a password=4096;",
         "sasl.jaas.config", "Value not specified for key 'password' in JAAS config"),
        (f'sasl.mechanism=PLAIN\nsasl.jaas.config={PLAIN_MODULE} required username="a" password="b"; x required;',
         "sasl.jaas.config", "contains 2 login modules"),
        (f'sasl.mechanism=SCRAM-SHA-256\nsasl.jaas.config={SCRAM_MODULE} required username="a" password="b" '
         'tokenauth="true";', "sasl.jaas.config", "delegation tokens"),
        ("sasl.mechanism=AWS_MSK_IAM", "sasl.mechanism", "'AWS_MSK_IAM' is not supported"),
        ("sasl.mechanism=OAUTHBEARER", "sasl.mechanism", "needs a token provider object"),
        ("sasl.mechanism=PLAIN\nsasl.client.callback.handler.class=com.example.Handler",
         "sasl.client.callback.handler.class", "custom Java SASL callback handler"),
        ("security.protocol=TLS", "security.protocol", "must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"),
        ("security.protocol=", "security.protocol", "must be one of"),
        ("sasl.mechanism=", "sasl.mechanism", "'' is not supported"),
        ("request.timeout.ms=10s", "request.timeout.ms", "whole number"),
        ("request.timeout.ms=-1", "request.timeout.ms", "whole number"),
    ],
)  # fmt: skip
def test_rejected(text: str, key: str, words: str) -> None:
    protocol = "" if "security.protocol" in text else "security.protocol=SASL_PLAINTEXT\n"
    result = settings_of(protocol + text)
    assert words in notes(result.rejected)[key]
    with pytest.raises(ClientConfigError) as caught:
        _ = result.kwargs
    assert (key, notes(result.rejected)[key]) in caught.value.problems
    assert isinstance(caught.value, UserInputError)


def test_sasl_without_a_mechanism_is_gssapi_as_in_java(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(security, "_gssapi_installed", lambda: True)
    kerberos = settings_of("security.protocol=SASL_PLAINTEXT\nsasl.kerberos.service.name=kafka")
    assert kerberos.kwargs["sasl_mechanism"] == "GSSAPI"
    assert kerberos.kwargs["sasl_kerberos_service_name"] == "kafka"
    from_jaas = settings_of(
        "security.protocol=SASL_PLAINTEXT\nsasl.jaas.config="
        'com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true serviceName="kafka-svc";'
    )
    assert from_jaas.kwargs["sasl_kerberos_service_name"] == "kafka-svc"
    missing = settings_of("security.protocol=SASL_PLAINTEXT")
    assert "required for GSSAPI" in notes(missing.rejected)["sasl.kerberos.service.name"]
    keytab = settings_of(
        "security.protocol=SASL_PLAINTEXT\nsasl.kerberos.service.name=kafka\nsasl.jaas.config="
        'com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/k" principal="a@B";'
    )
    assert "kinit -kt" in notes(keytab.rejected)["sasl.jaas.config"]


def test_gssapi_without_the_gssapi_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(security, "_gssapi_installed", lambda: False)
    result = settings_of("security.protocol=SASL_SSL\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka")
    assert "pip install gssapi" in notes(result.rejected)["sasl.mechanism"]


def test_oauthbearer_with_a_token_provider() -> None:
    provider = object()
    result = settings_of(
        "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n"
        "sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler\n"
        "sasl.oauthbearer.token.endpoint.url=https://idp.example/token\n"
        "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
        'clientId="c" clientSecret="s";',
        oauth_token_provider=provider,
    )
    assert result.kwargs["sasl_oauth_token_provider"] is provider
    assert set(notes(result.ignored)) == {
        "sasl.jaas.config", "sasl.login.callback.handler.class", "sasl.oauthbearer.token.endpoint.url"}


def test_ignored_with_reasons() -> None:
    result = settings_of(
        "bootstrap.servers=broker:9092\nclient.id=capture-1\nrequest.timeout.ms=5000\ngroup.id=g\n"
        "ssl.truststore.location=/nonexistent.jks\nsasl.login.refresh.buffer.seconds=300\nssl.truststore.locaton=x\n"
    )
    assert result.kwargs == {
        "security_protocol": "PLAINTEXT", "client_id": "capture-1", "request_timeout_ms": 5000,
        "allow_auto_create_topics": False,
    }  # fmt: skip
    assert notes(result.ignored) == {
        "bootstrap.servers": "the --bootstrap-server option decides where to connect (as in Kafka's tools)",
        "group.id": "not used",
        "ssl.truststore.location": "no TLS with security.protocol=PLAINTEXT",
        "ssl.truststore.locaton": "no TLS with security.protocol=PLAINTEXT",
        "sasl.login.refresh.buffer.seconds": "no SASL with security.protocol=PLAINTEXT",
    }


def test_sasl_timing_keys_and_unknown_security_keys_are_ignored() -> None:
    result = settings_of(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        f'sasl.jaas.config={PLAIN_MODULE} required username="a" password="b";\n'
        "sasl.login.refresh.buffer.seconds=300\nsasl.kerberos.kinit.cmd=/usr/bin/kinit\nsasl.mechansim=PLAIN\n"
        "security.providers=com.example.Provider\n"
    )
    assert notes(result.ignored) == {
        "sasl.login.refresh.buffer.seconds": "login refresh and retry timing of a long-running Java client",
        "sasl.kerberos.kinit.cmd": "Kerberos ticket renewal of a long-running Java client",
        "sasl.mechansim": "unknown security setting: ignored (check its spelling)",
    }
    assert notes(result.rejected) == {"security.providers": "custom Java security providers cannot run here"}


def test_no_message_or_repr_shows_a_secret() -> None:
    secret = "Tr0ub4dor&3"
    result = settings_of(
        f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        f'sasl.jaas.config={PLAIN_MODULE} required username="alice" password="{secret}";\n'
        f"{secret}\nhunter2\n"  # a pasted password on a line of its own reads as a key
        "ssl.cipher.suites=x\nsasl.login.class=com.example.Login\n"
    )
    assert secret not in repr(result) and "'sasl_plain_password': '***'" in repr(result)
    assert {"sasl_plain_password", "ssl_password"} <= SECRET_KWARGS
    with pytest.raises(ClientConfigError) as caught:
        _ = result.kwargs
    shown = str(caught.value) + repr(result.ignored) + repr(result.rejected) + " ".join(result.applied)
    assert secret not in shown and "hunter2" not in shown
    assert "<a key that is no setting name, not shown>" in repr(result.ignored)


def test_read_client_settings_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "client.properties"
    path.write_text(f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config={PLAIN_MODULE} "
                    'required username="a" password="b";\n')  # fmt: skip
    assert read_client_settings(path).kwargs["sasl_plain_username"] == "a"
    path.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n")
    with pytest.raises(ClientConfigError, match=rf"{path}: cannot connect.*\n  sasl.jaas.config: required for PLAIN"):
        read_client_settings(path)
    with pytest.raises(PropertiesError):
        read_client_settings(tmp_path / "missing.properties")


def test_every_problem_is_reported_at_once() -> None:
    result = settings_of("security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nssl.truststore.type=JKS\n"
                         "ssl.truststore.location=/etc/trust.jks\nrequest.timeout.ms=soon\n")  # fmt: skip
    assert set(notes(result.rejected)) == {"sasl.jaas.config", "ssl.truststore.location", "request.timeout.ms"}


# --- against the lab broker -----------------------------------------------------------------------------------

REQUEST_TIMEOUT_S = 15.0
LAB_TOPIC = "sec-topic"
LAB_GROUP = "sec-group"
COMMITTED = 2


def lab_properties(mechanism: str, user: str, password: str) -> str:
    """A client properties file as a user writes it for Kafka's tools."""
    module = PLAIN_MODULE if mechanism == "PLAIN" else SCRAM_MODULE
    return (
        "security.protocol=SASL_PLAINTEXT\n"
        f"sasl.mechanism={mechanism}\n"
        f"sasl.jaas.config={module} required \\\n"
        f'    username="{user}" \\\n'
        f'    password="{password}";\n'
        "client.id=taskassign-security-test\n"
        "request.timeout.ms=10000\n"
    )


class Session:
    """A kafka-python KafkaClient made from client_settings, and one-request-at-a-time helpers."""

    def __init__(self, bootstrap: str, settings: ClientSettings) -> None:
        from kafka.client_async import KafkaClient

        self.client = KafkaClient(bootstrap_servers=bootstrap, **settings.kwargs)

    def close(self) -> None:
        self.client.close()

    def node(self) -> Any:
        deadline = time.monotonic() + REQUEST_TIMEOUT_S
        while (node := self.client.least_loaded_node()) is None:
            assert time.monotonic() < deadline, "no broker to talk to"
            self.client.poll(timeout_ms=100)
        return node

    def request(self, request: Any, node: Any = None) -> Any:
        node = self.node() if node is None else node
        if not self.client.await_ready(node, timeout_ms=int(REQUEST_TIMEOUT_S * 1000)):
            raise TimeoutError(f"node {node} not ready")
        future = self.client.send(node, request)
        deadline = time.monotonic() + REQUEST_TIMEOUT_S
        while not future.is_done and time.monotonic() < deadline:
            self.client.poll(timeout_ms=100, future=future)
        assert future.is_done, f"no answer to {type(request).__name__}"
        if future.failed():
            raise future.exception
        return future.value

    def metadata(self, topics: list[str] | None, *, auto_create: bool = False) -> Any:
        from kafka.protocol.metadata import MetadataRequest

        return self.request(MetadataRequest[8](topics, auto_create, False, False))

    def find_coordinator(self, group: str) -> Any:
        from kafka.protocol.find_coordinator import FindCoordinatorRequest

        return self.request(FindCoordinatorRequest[2](group, 0))

    def describe_group(self, group: str) -> Any:
        from kafka.protocol.admin import DescribeGroupsRequest

        (described,) = self.request(DescribeGroupsRequest[3]([group], False)).groups
        return described

    def list_groups(self) -> Any:
        from kafka.protocol.admin import ListGroupsRequest

        return self.request(ListGroupsRequest[2]())

    def end_offset(self, topic: str) -> Any:
        from kafka.protocol.list_offsets import ListOffsetsRequest

        ((_, ((partition, error_code, _, offset),)),) = self.request(
            ListOffsetsRequest[1](-1, [(topic, [(0, -1)])])
        ).topics
        assert partition == 0
        return error_code, offset

    def committed(self, group: str, topic: str) -> Any:
        from kafka.protocol.commit import OffsetFetchRequest

        return self.request(OffsetFetchRequest[5](group, [(topic, [0])]))


@pytest.fixture(scope="module")
def lab_group(kafka_cluster: Any) -> str:
    """A topic with records and a consumer group with a committed offset, made over PLAINTEXT (full access)."""
    from kafka import KafkaConsumer
    from kafka.structs import OffsetAndMetadata, TopicPartition

    from tests.capture.kafka_cluster import create_topics, produce

    create_topics(kafka_cluster.bootstrap, {LAB_TOPIC: 1})
    produce(kafka_cluster.bootstrap, LAB_TOPIC, [(None, f"r{i}") for i in range(5)], partition=0)
    consumer = KafkaConsumer(bootstrap_servers=kafka_cluster.bootstrap, group_id=LAB_GROUP, enable_auto_commit=False)
    try:
        partition = TopicPartition(LAB_TOPIC, 0)
        consumer.assign([partition])
        consumer.commit({partition: OffsetAndMetadata(COMMITTED, "", -1)})
    finally:
        consumer.close()
    return LAB_GROUP


@pytest.fixture
def session_for(kafka_cluster: Any) -> Iterator[Any]:
    """Open Sessions on the SASL listener from a properties text; all are closed after the test."""
    sessions: list[Session] = []

    def open_session(mechanism: str, user: str, password: str | None = None) -> Session:
        secret = kafka_cluster.sasl_users[user] if password is None else password
        session = Session(kafka_cluster.sasl_bootstrap, settings_of(lab_properties(mechanism, user, secret)))
        sessions.append(session)
        return session

    yield open_session
    for session in sessions:
        session.close()


@pytest.mark.kafka
@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256"])
def test_reader_runs_every_capture_request(session_for: Any, lab_group: str, mechanism: str) -> None:
    """DESCRIBE on topics and groups is all FindCoordinator, DescribeGroups, ListGroups, Metadata, ListOffsets
    and OffsetFetch need."""
    from tests.capture.kafka_cluster import LAB_READER

    session = session_for(mechanism, LAB_READER)
    (topic,) = session.metadata([LAB_TOPIC]).topics
    assert (topic[0], topic[1]) == (0, LAB_TOPIC)  # error code, name
    assert session.find_coordinator(lab_group).error_code == 0
    described = session.describe_group(lab_group)
    assert (described[0], described[1], described[2]) == (0, lab_group, "Empty")
    listing = session.list_groups()
    assert listing.error_code == 0 and lab_group in [group for group, _ in listing.groups]
    assert session.end_offset(LAB_TOPIC) == (0, 5)
    fetched = session.committed(lab_group, LAB_TOPIC)
    assert fetched.error_code == 0
    ((name, ((partition, offset, _, _, error_code),)),) = fetched.topics
    assert (name, partition, offset, error_code) == (LAB_TOPIC, 0, COMMITTED, 0)


@pytest.mark.kafka
def test_reader_cannot_create_topics_through_metadata(session_for: Any) -> None:
    """Why client_settings turns auto-creation off: asking for a missing topic with it on needs CREATE, and the
    reader gets TOPIC_AUTHORIZATION_FAILED for a topic it may describe; with it off, the truth (3, unknown)."""
    from tests.capture.kafka_cluster import LAB_READER

    session = session_for("PLAIN", LAB_READER)
    assert session.client.config["allow_auto_create_topics"] is False
    ((error_code, *_),) = session.metadata(["sec-missing"], auto_create=True).topics
    assert error_code == 29
    ((error_code, *_),) = session.metadata(["sec-missing"]).topics
    assert error_code == 3


@pytest.mark.kafka
def test_stranger_authenticates_but_may_read_nothing(session_for: Any, lab_group: str) -> None:
    from kafka.errors import GroupAuthorizationFailedError, TopicAuthorizationFailedError, for_code

    from tests.capture.kafka_cluster import LAB_STRANGER

    session = session_for("SCRAM-SHA-256", LAB_STRANGER)
    assert session.describe_group(lab_group)[0] == 30
    assert for_code(30) is GroupAuthorizationFailedError
    assert session.find_coordinator(lab_group).error_code == 30
    ((error_code, name, *_),) = session.metadata([LAB_TOPIC]).topics
    assert (error_code, name) == (29, LAB_TOPIC)
    assert for_code(29) is TopicAuthorizationFailedError
    assert LAB_TOPIC not in [topic[1] for topic in session.metadata(None).topics]  # silently left out
    listing = session.list_groups()
    assert listing.error_code == 0 and lab_group not in [group for group, _ in listing.groups]
    assert session.end_offset(LAB_TOPIC)[0] == 29
    assert session.committed(lab_group, LAB_TOPIC).error_code == 30


@pytest.mark.kafka
@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256"])
def test_wrong_password_is_an_authentication_failure(
    session_for: Any, caplog: pytest.LogCaptureFixture, mechanism: str
) -> None:
    from kafka.errors import KafkaConnectionError, SaslAuthenticationFailedError

    from tests.capture.kafka_cluster import LAB_READER

    wrong = "not-the-password"
    with caplog.at_level(logging.ERROR, logger="kafka.conn"):
        session = session_for(mechanism, LAB_READER, wrong)
        with pytest.raises(KafkaConnectionError, match=r"Connection to .* failed"):
            session.request(_list_groups_request())
    causes = [record.args[1] for record in caplog.records if isinstance(record.args, tuple) and len(record.args) > 1]
    failures = [cause for cause in causes if isinstance(cause, SaslAuthenticationFailedError)]
    assert failures and failures[0].errno == 58
    assert wrong not in caplog.text


@pytest.mark.kafka
def test_mechanism_the_listener_does_not_enable(session_for: Any) -> None:
    from kafka.errors import KafkaConnectionError

    from tests.capture.kafka_cluster import LAB_READER

    session = session_for("SCRAM-SHA-512", LAB_READER)
    with pytest.raises(KafkaConnectionError):
        session.request(_list_groups_request())


def _list_groups_request() -> Any:
    from kafka.protocol.admin import ListGroupsRequest

    return ListGroupsRequest[2]()
