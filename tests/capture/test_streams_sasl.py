"""SASL for the streams capture (issue 28, point 1): SaslHandshake v1 and SaslAuthenticate v2 in Kafka's bytes, and
the streams client's PLAIN and SCRAM-SHA-256/512 logins against a loopback SASL listener (``sasl_broker``); a
refused login is one line naming the mechanism and the broker's message, never the password."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from pathlib import Path

import pytest

from taskassign.capture import kafka_codec as codec
from taskassign.capture.streams_client import StreamsClient
from taskassign.capture.streams_sasl import SaslAuthenticationError, SaslLogin
from taskassign.errors import CaptureError, ClientConfigError, DecodeError
from tests.capture.sasl_broker import sasl_broker

PASSWORD = "pw-9c1e-SECRET"


def test_sasl_handshake_is_kafkas_bytes() -> None:
    # SaslHandshakeRequest v1: Mechanism as a STRING (int16 length); request header v1 has no tagged fields.
    assert codec.encode_sasl_handshake("PLAIN") == b"\x00\x05PLAIN"
    assert codec.request_header_v1(17, 1, 3, "c") == b"\x00\x11\x00\x01\x00\x00\x00\x03\x00\x01c"
    answer = b"\x00\x00" + b"\x00\x00\x00\x02" + b"\x00\x05PLAIN" + b"\x00\x0dSCRAM-SHA-512"
    assert codec.decode_sasl_handshake(answer) == (0, ("PLAIN", "SCRAM-SHA-512"))
    assert codec.decode_sasl_handshake(b"\x00\x21\x00\x00\x00\x00") == (33, ())


def test_sasl_authenticate_is_kafkas_bytes() -> None:
    # SaslAuthenticateRequest v2 (flexible): AuthBytes as COMPACT_BYTES, then an empty tagged-field section.
    assert codec.encode_sasl_authenticate(b"\x00u\x00p") == b"\x05\x00u\x00p\x00"
    ok = b"\x00\x00" + b"\x00" + b"\x03v=" + b"\x00\x00\x00\x00\x00\x00\x0e\x10" + b"\x00"
    assert codec.decode_sasl_authenticate(ok) == codec.SaslAuthenticated(0, None, b"v=", 3600)
    failed = b"\x00\x3a" + b"\x05oops" + b"\x01" + bytes(8) + b"\x00"
    answer = codec.decode_sasl_authenticate(failed)
    assert (answer.error_code, answer.error_message, answer.auth_bytes) == (58, "oops", b"")
    assert "v=" not in repr(codec.decode_sasl_authenticate(ok))


def test_a_broken_sasl_answer_names_the_field() -> None:
    with pytest.raises(DecodeError, match="field 'AuthBytes'"):
        codec.decode_sasl_authenticate(b"\x00\x00\x00\x00")
    with pytest.raises(DecodeError, match="field 'Mechanisms'"):
        codec.decode_sasl_handshake(b"\x00\x00\x00\x00\x10\x00")


def settings(mechanism: str, password: str = PASSWORD, user: str = "alice") -> dict[str, object]:
    return {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": mechanism, "sasl_plain_username": user,
            "sasl_plain_password": password}


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_each_mechanism_logs_in_before_any_other_request(mechanism: str) -> None:
    with sasl_broker({"alice": PASSWORD}) as broker, StreamsClient(
            f"127.0.0.1:{broker.port}", timeout=10, settings=settings(mechanism)) as client:
        assert client.api_versions.ranges[codec.STREAMS_GROUP_DESCRIBE] == (0, 1)
    rounds = 1 if mechanism == "PLAIN" else 2
    assert broker.requests == [codec.API_VERSIONS, codec.SASL_HANDSHAKE, *[codec.SASL_AUTHENTICATE] * rounds,
                               codec.API_VERSIONS]
    if mechanism == "PLAIN":
        assert broker.tokens == [b"\x00alice\x00" + PASSWORD.encode()]
    else:
        assert broker.tokens[0].startswith(b"n,,n=alice,r=") and b",p=" in broker.tokens[1]


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_a_wrong_password_is_one_clear_line(mechanism: str) -> None:
    with sasl_broker({"alice": "the-right-one"}) as broker, pytest.raises(SaslAuthenticationError) as raised:
        StreamsClient(f"127.0.0.1:{broker.port}", timeout=10, settings=settings(mechanism))
    message = str(raised.value)
    assert message.startswith(f"SASL {mechanism} authentication as user 'alice' failed at 127.0.0.1:")
    assert "SASL_AUTHENTICATION_FAILED" in message and "Authentication failed" in message
    assert "\n" not in message and PASSWORD not in message and PASSWORD not in repr(raised.value)


def test_a_mechanism_the_listener_does_not_enable() -> None:
    with sasl_broker({"alice": PASSWORD}, ("PLAIN",)) as broker, pytest.raises(SaslAuthenticationError,
                                                                               match="it enables PLAIN"):
        StreamsClient(f"127.0.0.1:{broker.port}", timeout=10, settings=settings("SCRAM-SHA-512"))


@pytest.mark.parametrize("mechanism", ["GSSAPI", "OAUTHBEARER"])
def test_gssapi_and_oauthbearer_are_refused_clearly(mechanism: str) -> None:
    with pytest.raises(ClientConfigError, match=f"{mechanism}.*not implemented for streams groups"):
        StreamsClient("127.0.0.1:1", timeout=1, settings={"security_protocol": "SASL_SSL",
                                                           "sasl_mechanism": mechanism})


def test_a_login_never_shows_its_password() -> None:
    assert PASSWORD not in repr(SaslLogin("PLAIN", "alice", PASSWORD))


def test_the_coordinators_connection_logs_in_too() -> None:
    with sasl_broker({"alice": PASSWORD}) as coordinator, sasl_broker({"alice": PASSWORD}) as bootstrap:
        bootstrap.coordinator_port = coordinator.port
        with StreamsClient(f"127.0.0.1:{bootstrap.port}", timeout=10, settings=settings("SCRAM-SHA-512")) as client:
            address = client.coordinator("g")
            assert address == ("127.0.0.1", coordinator.port)
            with pytest.raises(CaptureError):  # the stand-in closes on StreamsGroupDescribe: logged in first
                client.describe_streams_group("g", address)
    assert coordinator.requests == [codec.API_VERSIONS, codec.SASL_HANDSHAKE, codec.SASL_AUTHENTICATE,
                                    codec.SASL_AUTHENTICATE, codec.STREAMS_GROUP_DESCRIBE]


def test_sasl_ssl_logs_in_inside_tls(tmp_path: Path) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1", "-days", "2"],
                   check=True, capture_output=True)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    client_tls = ssl.create_default_context(cafile=str(cert))
    with sasl_broker({"alice": PASSWORD}, tls=server) as broker, StreamsClient(
            f"127.0.0.1:{broker.port}", timeout=10,
            settings={**settings("SCRAM-SHA-256"), "security_protocol": "SASL_SSL", "ssl_context": client_tls}):
        pass
    assert broker.requests == [codec.API_VERSIONS, codec.SASL_HANDSHAKE, codec.SASL_AUTHENTICATE,
                               codec.SASL_AUTHENTICATE, codec.API_VERSIONS]
