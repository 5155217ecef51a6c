"""TLS settings from Kafka's ``ssl.*`` properties: which stores are read, which refused, and a real handshake.

Certificates are made for the run with ``openssl`` (a CA, a server certificate for localhost and 127.0.0.1, a
client certificate with plain and encrypted keys, and the JKS and PKCS12 stores Java users have, via ``keytool``
and ``openssl pkcs12``). The handshake tests run a Python TLS server that demands a client certificate: the
context that ``client_settings`` builds must verify the server, present the client's certificate, and check the
host name unless ``ssl.endpoint.identification.algorithm`` is empty.
"""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from taskassign.capture.security import ClientSettings, client_settings
from taskassign.errors import ClientConfigError

KEY_PASSWORD = "key-pass-123"
STORE_PASSWORD = "store-pass-456"


@dataclass(frozen=True)
class Material:
    """Files made by openssl/keytool for one test run."""

    directory: Path
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    client_key_encrypted: Path
    client_bundle: Path  # key + certificate in one PEM file (Kafka's PEM key store file)
    client_bundle_encrypted: Path
    other_key: Path  # a key that belongs to no certificate here
    truststore_jks: Path
    truststore_p12: Path
    keystore_p12: Path


def _run(*args: str, cwd: Path) -> None:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed:\n{done.stderr}")


def _key(name: str, cwd: Path) -> None:
    _run("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", name, cwd=cwd)


def _signed_cert(name: str, subject: str, extensions: str, cwd: Path) -> None:
    (cwd / f"{name}.ext").write_text(extensions)
    _key(f"{name}.key", cwd)
    _run("openssl", "req", "-new", "-key", f"{name}.key", "-subj", subject, "-out", f"{name}.csr", cwd=cwd)
    _run(
        "openssl", "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-days", "2", "-extfile", f"{name}.ext", "-out", f"{name}.pem", cwd=cwd,
    )  # fmt: skip


@pytest.fixture(scope="module")
def material(tmp_path_factory: pytest.TempPathFactory) -> Material:
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make test certificates")
    cwd = tmp_path_factory.mktemp("tls")
    _key("ca.key", cwd)
    _run("openssl", "req", "-x509", "-key", "ca.key", "-subj", "/CN=lab-ca", "-days", "2", "-out", "ca.pem", cwd=cwd)
    _signed_cert("server", "/CN=localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1\n", cwd)
    _signed_cert("client", "/CN=alice", "extendedKeyUsage=clientAuth\n", cwd)
    _run("openssl", "pkcs8", "-topk8", "-in", "client.key", "-out", "client-enc.key", "-v2", "aes-256-cbc",
         "-passout", f"pass:{KEY_PASSWORD}", cwd=cwd)  # fmt: skip
    (cwd / "client-bundle.pem").write_text((cwd / "client.key").read_text() + (cwd / "client.pem").read_text())
    (cwd / "client-bundle-enc.pem").write_text(
        (cwd / "client-enc.key").read_text() + (cwd / "client.pem").read_text()
    )
    _key("other.key", cwd)
    _run("openssl", "pkcs12", "-export", "-in", "ca.pem", "-nokeys", "-out", "trust.p12",
         "-passout", f"pass:{STORE_PASSWORD}", cwd=cwd)  # fmt: skip
    _run("openssl", "pkcs12", "-export", "-in", "client.pem", "-inkey", "client.key", "-out", "client.p12",
         "-passout", f"pass:{STORE_PASSWORD}", cwd=cwd)  # fmt: skip
    if shutil.which("keytool") is not None:
        _run("keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", "ca.pem", "-keystore", "trust.jks",
             "-storetype", "JKS", "-storepass", STORE_PASSWORD, cwd=cwd)  # fmt: skip
    else:  # any non-PEM bytes stand in for a JKS file
        (cwd / "trust.jks").write_bytes(b"\xfe\xed\xfe\xed\x00\x00\x00\x02")
    return Material(
        cwd, cwd / "ca.pem", cwd / "server.pem", cwd / "server.key", cwd / "client.pem", cwd / "client.key",
        cwd / "client-enc.key", cwd / "client-bundle.pem", cwd / "client-bundle-enc.pem", cwd / "other.key",
        cwd / "trust.jks", cwd / "trust.p12", cwd / "client.p12",
    )  # fmt: skip


def settings(props: Mapping[str, str]) -> ClientSettings:
    return client_settings({"security.protocol": "SSL", **props}, source="client.properties")


def context_of(props: Mapping[str, str]) -> ssl.SSLContext:
    found = settings(props).kwargs["ssl_context"]
    assert isinstance(found, ssl.SSLContext)
    return found


def rejected(props: Mapping[str, str]) -> dict[str, str]:
    result = settings(props)
    with pytest.raises(ClientConfigError):
        _ = result.kwargs
    return {note.key: note.reason for note in result.rejected}


def pem_file(material: Material) -> dict[str, str]:
    return {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(material.ca)}


# --- trust store ---------------------------------------------------------------------------------------------


def test_pem_trust_store_file(material: Material) -> None:
    context = context_of(pem_file(material))
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert [dict(entry[0] for entry in cert["subject"])["commonName"] for cert in context.get_ca_certs()] == ["lab-ca"]
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2 and context.maximum_version == ssl.TLSVersion.TLSv1_3
    assert f"TLS trust: PEM file {material.ca} (ssl.truststore.location)" in settings(pem_file(material)).applied


def test_pem_file_with_the_type_left_at_jks_is_read_as_pem(material: Material) -> None:
    result = settings({"ssl.truststore.location": str(material.ca), "ssl.truststore.password": "unused"})
    assert len(result.kwargs["ssl_context"].get_ca_certs()) == 1  # type: ignore[attr-defined]
    assert "ssl.truststore.type is not set, so Java would read it as JKS" in " ".join(result.applied)
    assert [note.key for note in result.ignored] == ["ssl.truststore.password"]


def test_inline_trusted_certificates(material: Material) -> None:
    context = context_of({"ssl.truststore.type": "PEM", "ssl.truststore.certificates": material.ca.read_text()})
    assert len(context.get_ca_certs()) == 1


def test_no_trust_store_uses_the_systems_cas() -> None:
    result = settings({})
    assert any("system's CA certificates" in line for line in result.applied)


def test_jks_trust_store_is_refused_with_how_to_convert(material: Material) -> None:
    reasons = rejected({"ssl.truststore.location": str(material.truststore_jks), "ssl.truststore.password": "x"})
    assert "keytool -exportcert -rfc" in reasons["ssl.truststore.location"]
    assert "ssl.truststore.type=PEM" in reasons["ssl.truststore.location"]
    explicit = rejected({"ssl.truststore.type": "JKS", "ssl.truststore.location": str(material.truststore_jks)})
    assert "a JKS trust store cannot be read" in explicit["ssl.truststore.location"]


def test_pkcs12_trust_store_is_refused_with_how_to_convert(material: Material) -> None:
    reasons = rejected({"ssl.truststore.type": "PKCS12", "ssl.truststore.location": str(material.truststore_p12)})
    assert f"openssl pkcs12 -in {material.truststore_p12} -nokeys -out ca.pem" in reasons["ssl.truststore.location"]


@pytest.mark.parametrize(
    ("props", "key", "words"),
    [
        ({"ssl.truststore.password": STORE_PASSWORD}, "ssl.truststore.password", "no trust store is"),
        ({"ssl.truststore.certificates": "-----BEGIN CERTIFICATE-----", "ssl.truststore.type": "JKS"},
         "ssl.truststore.certificates", "only with ssl.truststore.type=PEM"),
        ({"ssl.truststore.certificates": "not pem"}, "ssl.truststore.certificates", "does not hold PEM"),
        ({"ssl.truststore.certificates": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----"},
         "ssl.truststore.certificates", "no CA certificate could be read"),
    ],
)  # fmt: skip
def test_trust_store_mistakes(props: dict[str, str], key: str, words: str) -> None:
    assert words in rejected(props)[key]


def test_pem_trust_store_takes_no_password(material: Material) -> None:
    reasons = rejected({**pem_file(material), "ssl.truststore.password": STORE_PASSWORD})
    assert "cannot be given for a PEM trust store" in reasons["ssl.truststore.password"]
    assert STORE_PASSWORD not in str(reasons)


def test_location_and_certificates_together(material: Material) -> None:
    reasons = rejected({**pem_file(material), "ssl.truststore.certificates": material.ca.read_text()})
    assert "keep one" in reasons["ssl.truststore.location"]


def test_missing_trust_store_file(tmp_path: Path) -> None:
    reasons = rejected({"ssl.truststore.type": "PEM", "ssl.truststore.location": str(tmp_path / "nope.pem")})
    assert "cannot read" in reasons["ssl.truststore.location"] and "No such file" in reasons["ssl.truststore.location"]


def test_fifo_trust_store_is_refused_without_blocking(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    fifo = tmp_path / "ca.pem"
    os.mkfifo(fifo)
    reasons = rejected({"ssl.truststore.type": "PEM", "ssl.truststore.location": str(fifo)})
    assert "not a regular file" in reasons["ssl.truststore.location"]


# --- key store ----------------------------------------------------------------------------------------------


def test_pem_key_store_file(material: Material) -> None:
    result = settings(
        {**pem_file(material), "ssl.keystore.type": "PEM", "ssl.keystore.location": str(material.client_bundle)}
    )
    assert f"TLS client certificate: PEM file {material.client_bundle} (ssl.keystore.location)" in result.applied


def test_encrypted_key_needs_the_key_password(material: Material) -> None:
    props = {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(material.client_bundle_encrypted)}
    assert "encrypted: set ssl.key.password" in rejected(props)["ssl.keystore.location"]
    context_of({**props, "ssl.key.password": KEY_PASSWORD})
    wrong = rejected({**props, "ssl.key.password": "not-it"})["ssl.keystore.location"]
    assert "a wrong ssl.key.password" in wrong and "not-it" not in wrong


def test_inline_key_and_chain(material: Material) -> None:
    before = set(Path(tempfile.gettempdir()).glob("taskassign-tls-*"))
    props = {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.key": material.client_key_encrypted.read_text(),
        "ssl.keystore.certificate.chain": material.client_cert.read_text(),
        "ssl.key.password": KEY_PASSWORD,
    }
    assert "inline PEM (ssl.keystore.certificate.chain)" in " ".join(settings(props).applied)
    assert set(Path(tempfile.gettempdir()).glob("taskassign-tls-*")) == before  # the key's file is gone


def test_key_that_does_not_belong_to_the_certificate(material: Material) -> None:
    props = {
        "ssl.keystore.key": material.other_key.read_text(),
        "ssl.keystore.certificate.chain": material.client_cert.read_text(),
    }
    assert "does not belong to the certificate" in rejected(props)["ssl.keystore.certificate.chain"]


@pytest.mark.parametrize(
    ("props", "key", "words"),
    [
        ({"ssl.keystore.key": "-----BEGIN PRIVATE KEY-----"}, "ssl.keystore.key", "certificate.chain is not"),
        ({"ssl.keystore.certificate.chain": "-----BEGIN CERTIFICATE-----"}, "ssl.keystore.certificate.chain",
         "ssl.keystore.key (the private key) is not"),
        ({"ssl.keystore.password": STORE_PASSWORD}, "ssl.keystore.password", "no key store is"),
        ({"ssl.keystore.key": "-----BEGIN PRIVATE KEY-----", "ssl.keystore.certificate.chain": "-----BEGIN X",
          "ssl.keystore.type": "PKCS12"}, "ssl.keystore.key", "only with ssl.keystore.type=PEM"),
    ],
)  # fmt: skip
def test_key_store_mistakes(props: dict[str, str], key: str, words: str) -> None:
    assert words in rejected(props)[key]


def test_pem_key_store_takes_the_key_password_only(material: Material) -> None:
    props = {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(material.client_bundle),
             "ssl.keystore.password": STORE_PASSWORD}  # fmt: skip
    assert "only ssl.key.password may be" in rejected(props)["ssl.keystore.password"]


def test_pkcs12_and_jks_key_stores_are_refused_with_how_to_convert(material: Material) -> None:
    pkcs12 = rejected({"ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(material.keystore_p12),
                       "ssl.keystore.password": STORE_PASSWORD})["ssl.keystore.location"]  # fmt: skip
    assert f"openssl pkcs12 -in {material.keystore_p12} -out client.pem" in pkcs12
    jks = rejected({"ssl.keystore.location": str(material.truststore_jks), "ssl.keystore.password": "x"})
    assert "keytool -importkeystore" in jks["ssl.keystore.location"]
    assert STORE_PASSWORD not in pkcs12


def test_key_password_without_key_store_is_ignored(material: Material) -> None:
    result = settings({**pem_file(material), "ssl.key.password": KEY_PASSWORD})
    assert [note.key for note in result.ignored] == ["ssl.key.password"]


# --- versions, host names, JVM-only settings ------------------------------------------------------------------


def test_tls_versions_follow_enabled_protocols_and_protocol() -> None:
    only13 = context_of({"ssl.enabled.protocols": "TLSv1.3"})
    assert (only13.minimum_version, only13.maximum_version) == (ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_3)
    capped = context_of({"ssl.protocol": "TLSv1.2"})
    assert (capped.minimum_version, capped.maximum_version) == (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_2)
    assert "ssl.enabled.protocols" in rejected({"ssl.enabled.protocols": "SSLv3"})
    assert "ssl.protocol" in rejected({"ssl.protocol": "TLSv1.2", "ssl.enabled.protocols": "TLSv1.3"})


def test_empty_endpoint_identification_turns_host_name_checks_off() -> None:
    assert not context_of({"ssl.endpoint.identification.algorithm": ""}).check_hostname
    assert context_of({"ssl.endpoint.identification.algorithm": "HTTPS"}).check_hostname
    assert "must be https or empty" in rejected({"ssl.endpoint.identification.algorithm": "ldaps"})[
        "ssl.endpoint.identification.algorithm"
    ]


def test_jvm_only_and_unsupported_tls_settings() -> None:
    result = settings({"ssl.provider": "SunJSSE", "ssl.cipher.suites": "TLS_AES_128_GCM_SHA256",
                       "ssl.engine.factory.class": "com.example.Factory"})  # fmt: skip
    assert [note.key for note in result.ignored] == ["ssl.provider"]
    assert sorted(note.key for note in result.rejected) == ["ssl.cipher.suites", "ssl.engine.factory.class"]


# --- a real handshake -------------------------------------------------------------------------------------------


@pytest.fixture
def tls_server(material: Material) -> Iterator[tuple[int, list[str]]]:
    """A TLS server on a free loopback port that demands a client certificate from the lab CA; it records the
    common name of each client certificate it sees."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(material.server_cert, material.server_key)
    context.load_verify_locations(material.ca)
    context.verify_mode = ssl.CERT_REQUIRED
    seen: list[str] = []
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            connection.settimeout(10)
            try:
                with context.wrap_socket(connection, server_side=True) as tls:
                    peer = tls.getpeercert() or {}
                    seen.append(dict(entry[0] for entry in peer.get("subject", ()))["commonName"])
                    tls.sendall(b"ok")
            except (OSError, ssl.SSLError):
                connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], seen
    finally:
        stop.set()
        thread.join(10)
        listener.close()


def handshake(context: ssl.SSLContext, port: int, host_name: str) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, context.wrap_socket(
        raw, server_hostname=host_name
    ) as tls:
        return tls.recv(2)


def mutual_tls(material: Material, **extra: str) -> ssl.SSLContext:
    return context_of({**pem_file(material), "ssl.keystore.type": "PEM",
                       "ssl.keystore.location": str(material.client_bundle_encrypted),
                       "ssl.key.password": KEY_PASSWORD, **extra})  # fmt: skip


def test_handshake_verifies_the_server_and_presents_the_client_certificate(
    material: Material, tls_server: tuple[int, list[str]]
) -> None:
    port, seen = tls_server
    assert handshake(mutual_tls(material), port, "localhost") == b"ok"
    assert handshake(mutual_tls(material), port, "127.0.0.1") == b"ok"
    assert seen == ["alice", "alice"]


def test_handshake_checks_the_host_name_unless_told_not_to(
    material: Material, tls_server: tuple[int, list[str]]
) -> None:
    port, _ = tls_server
    with pytest.raises(ssl.SSLCertVerificationError, match=r"Hostname mismatch|doesn't match"):
        handshake(mutual_tls(material), port, "kafka.example.com")
    relaxed = mutual_tls(material, **{"ssl.endpoint.identification.algorithm": ""})
    assert handshake(relaxed, port, "kafka.example.com") == b"ok"


def test_handshake_refuses_a_server_of_another_ca(material: Material, tls_server: tuple[int, list[str]]) -> None:
    port, _ = tls_server
    not_the_ca = material.client_cert.read_text()
    other_ca = context_of({"ssl.truststore.type": "PEM", "ssl.truststore.certificates": not_the_ca})
    with pytest.raises(ssl.SSLCertVerificationError, match="certificate verify failed"):
        handshake(other_ca, port, "localhost")
