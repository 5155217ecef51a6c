"""Kafka's ``ssl.*`` client properties turned into one ``ssl.SSLContext`` for kafka-python.

kafka-python takes either file names (``ssl_cafile``, ``ssl_certfile``, ...) or a ready ``ssl_context``,
and then ignores every other ``ssl_*`` option. taskassign always builds the context itself:

- one code path for PEM files and inline PEM (``ssl.truststore.certificates``, ``ssl.keystore.key``,
  ``ssl.keystore.certificate.chain``), which file names cannot express;
- everything is loaded and checked here, before a connection exists, so a missing file, a wrong key
  password or a non-PEM file is an error naming the property, not an ``SSLError`` from deep in a poll;
- Java's semantics: ``PROTOCOL_TLS_CLIENT`` (certificate and host name verified, as Java's client does
  by default), ``ssl.enabled.protocols`` and ``ssl.protocol`` as the TLS version range, and an empty
  ``ssl.endpoint.identification.algorithm`` turning host name verification (only) off. kafka-python's
  own context would start from the legacy ``PROTOCOL_SSLv23``.

Python's ``ssl`` module reads PEM only. JKS and PKCS12 stores (Java's default type is JKS) are refused
with the ``keytool``/``openssl`` commands that convert them. Where Java would refuse a file because its
type is left at the JKS default although the file is PEM, it is read as PEM (with a note).

A PEM private key can only be loaded from a file; an inline one (``ssl.keystore.key``) is written to a
private temporary file (mode 0600 in a 0700 directory) for the moment of loading, then deleted. An
encrypted key without ``ssl.key.password`` is an error, never an interactive prompt (OpenSSL's default).
"""

from __future__ import annotations

import os
import ssl
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from taskassign.errors import ClientConfigError, InputFileError
from taskassign.formats.json_io import read_input_bytes

__all__ = ("PEM_FILE_MAX_BYTES", "TLS_VERSIONS", "TlsSetup", "tls_setup")

#: Largest trust store or key store file read. PEM bundles of public CAs are about 200 KiB.
PEM_FILE_MAX_BYTES = 4 << 20

TLS_VERSIONS: Mapping[str, ssl.TLSVersion] = {
    "TLSv1": ssl.TLSVersion.TLSv1,
    "TLSv1.1": ssl.TLSVersion.TLSv1_1,
    "TLSv1.2": ssl.TLSVersion.TLSv1_2,
    "TLSv1.3": ssl.TLSVersion.TLSv1_3,
}
# ssl.protocol names an SSLContext algorithm in Java; a versioned one is the highest version it speaks.
_PROTOCOL_CAPS: Mapping[str, ssl.TLSVersion | None] = {
    "TLS": None,
    "SSL": None,
    "TLSv1.3": None,
    "TLSv1.2": ssl.TLSVersion.TLSv1_2,
    "TLSv1.1": ssl.TLSVersion.TLSv1_1,
    "TLSv1": ssl.TLSVersion.TLSv1,
}
_DEFAULT_ENABLED_PROTOCOLS = "TLSv1.2,TLSv1.3"
_PEM_MARKER = "-----BEGIN "
_PEM = "PEM"
_DEFAULT_STORE_TYPE = "JKS"


@dataclass(frozen=True)
class TlsSetup:
    """The context to hand kafka-python (``ssl_context``) and what went into it, in words (no secrets)."""

    context: ssl.SSLContext
    applied: tuple[str, ...]
    notes: tuple[tuple[str, str], ...]  # (key, why it is not used)


@dataclass(frozen=True)
class _Pem:
    """PEM text and where it came from (a property key, and the file if any), for messages."""

    text: str
    key: str
    path: str | None = None
    type_defaulted: bool = False  # a PEM file whose store type was left at Java's default, JKS

    def described(self) -> str:
        if self.path is None:
            return f"inline PEM ({self.key})"
        if self.type_defaulted:
            store = self.key.rsplit(".", 1)[0]
            return f"PEM file {self.path} ({self.key}; {store}.type is not set, so Java would read it as JKS)"
        return f"PEM file {self.path} ({self.key})"


def tls_setup(props: Mapping[str, str], source: str) -> TlsSetup:
    """The SSLContext for these (trimmed) ``ssl.*`` properties of ``source``; a ClientConfigError names
    the first key that cannot be used, and why."""
    try:
        return _tls_setup(props)
    except _Problem as problem:
        raise ClientConfigError(source, ((problem.key, problem.reason),)) from None


class _Problem(Exception):
    """The first property the TLS setup cannot use (tls_setup reports it as a ClientConfigError)."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(key, reason)
        self.key = key
        self.reason = reason


def _tls_setup(props: Mapping[str, str]) -> TlsSetup:
    notes: list[tuple[str, str]] = []
    applied: list[str] = []
    trust = _trust_store(props, notes)
    chain, key_pem = _key_store(props, notes)
    check_hostname = _check_hostname(props)
    low, high = _version_range(props)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version, context.maximum_version = low, high
    context.check_hostname = check_hostname
    if trust is None:
        context.load_default_certs(ssl.Purpose.SERVER_AUTH)
        applied.append("TLS trust: the system's CA certificates (Java would use the JVM's cacerts)")
    else:
        _load_trust(context, trust)
        applied.append(f"TLS trust: {trust.described()}")
    if chain is not None:
        _load_key_store(context, chain, key_pem, props.get("ssl.key.password"))
        applied.append(f"TLS client certificate: {chain.described()}")
    applied.append(f"TLS versions {_version_name(low)} to {_version_name(high)}")
    if not check_hostname:
        applied.append("TLS host name verification OFF (ssl.endpoint.identification.algorithm is empty)")
    return TlsSetup(context, tuple(applied), tuple(notes))


def _trust_store(props: Mapping[str, str], notes: list[tuple[str, str]]) -> _Pem | None:
    """The trusted certificates as Kafka's DefaultSslEngineFactory.createTruststore chooses them."""
    store_type, explicit = _store_type(props, "ssl.truststore.type")
    location = props.get("ssl.truststore.location")
    certificates = props.get("ssl.truststore.certificates")
    password_key = "ssl.truststore.password"
    if certificates is not None:
        if explicit and store_type != _PEM:
            raise _Problem(
                "ssl.truststore.certificates", f"can be given only with ssl.truststore.type=PEM, not {store_type}"
            )
        if location is not None:
            raise _Problem("ssl.truststore.location", "both it and ssl.truststore.certificates are set: keep one")
        _refuse_pem_password(props, password_key, "trust store")
        return _inline_pem("ssl.truststore.certificates", certificates)
    if location is None:
        if password_key in props:
            raise _Problem(password_key, "is set, but no trust store is (ssl.truststore.location)")
        return None
    if explicit and store_type != _PEM:
        raise _Problem("ssl.truststore.location", _convert_trust_store_advice(store_type, location))
    pem = _read_pem_file("ssl.truststore.location", location, store_type if explicit else None)
    if explicit:
        _refuse_pem_password(props, password_key, "trust store")
        return pem
    if password_key in props:
        notes.append((password_key, "not needed for a PEM trust store: ignored"))
    return replace(pem, type_defaulted=True)


def _key_store(props: Mapping[str, str], notes: list[tuple[str, str]]) -> tuple[_Pem | None, _Pem | None]:
    """(certificate chain, private key) as Kafka's createKeystore chooses them; a PEM key store file holds
    both (the key is None then), no key store means no client certificate."""
    store_type, explicit = _store_type(props, "ssl.keystore.type")
    location = props.get("ssl.keystore.location")
    private_key = props.get("ssl.keystore.key")
    chain = props.get("ssl.keystore.certificate.chain")
    password_key = "ssl.keystore.password"
    if private_key is not None:
        if explicit and store_type != _PEM:
            raise _Problem("ssl.keystore.key", f"can be given only with ssl.keystore.type=PEM, not {store_type}")
        if chain is None:
            raise _Problem("ssl.keystore.key", "is set, but ssl.keystore.certificate.chain is not")
        if location is not None:
            raise _Problem("ssl.keystore.location", "both it and ssl.keystore.key are set: keep one")
        _refuse_pem_password(props, password_key, "key store")
        return _inline_pem("ssl.keystore.certificate.chain", chain), _inline_pem("ssl.keystore.key", private_key)
    if chain is not None:
        raise _Problem("ssl.keystore.certificate.chain", "is set, but ssl.keystore.key (the private key) is not")
    if location is None:
        if password_key in props:
            raise _Problem(password_key, "is set, but no key store is (ssl.keystore.location)")
        if "ssl.key.password" in props:
            notes.append(("ssl.key.password", "no key store is set: ignored"))
        return None, None
    if explicit and store_type != _PEM:
        raise _Problem("ssl.keystore.location", _convert_key_store_advice(store_type, location))
    pem = _read_pem_file("ssl.keystore.location", location, store_type if explicit else None)
    _refuse_pem_password(props, password_key, "key store")
    return (pem if explicit else replace(pem, type_defaulted=True)), None


def _store_type(props: Mapping[str, str], key: str) -> tuple[str, bool]:
    """(the store type in upper case, whether it was set); Java's default is JKS."""
    value = props.get(key)
    return (value.upper(), True) if value else (_DEFAULT_STORE_TYPE, False)


def _refuse_pem_password(props: Mapping[str, str], key: str, store: str) -> None:
    if key in props:
        only_key_password = ": only ssl.key.password may be" if store == "key store" else ""
        raise _Problem(key, f"cannot be given for a PEM {store}{only_key_password} (Kafka refuses it too)")


def _inline_pem(key: str, text: str) -> _Pem:
    if _PEM_MARKER not in text:
        raise _Problem(key, "does not hold PEM text (-----BEGIN ...-----)")
    return _Pem(text, key)


def _read_pem_file(key: str, location: str, declared_type: str | None) -> _Pem:
    """A PEM store file's text, through the shared safe reader (formats.json_io.read_input_bytes): a regular
    file of bounded size (a FIFO would block, a device never end)."""
    path = Path(location).expanduser()
    try:  # a location is a file, never standard input: "-" is a file of that name
        data = read_input_bytes(path if str(path) != "-" else "./-", what="PEM store", limit=PEM_FILE_MAX_BYTES)
    except InputFileError as error:
        raise _Problem(key, f"{location} {error.reason}") from None
    text = data.decode("ascii", errors="replace")
    if _PEM_MARKER not in text:
        if declared_type == _PEM:
            raise _Problem(key, f"{location} holds no PEM text (-----BEGIN ...-----)")
        advice = _convert_trust_store_advice if "truststore" in key else _convert_key_store_advice
        raise _Problem(key, advice(_DEFAULT_STORE_TYPE, location))
    return _Pem(text, key, str(path))


def _convert_trust_store_advice(store_type: str, location: str) -> str:
    if store_type == "PKCS12":
        how = f"`openssl pkcs12 -in {location} -nokeys -out ca.pem`"
    else:
        how = (
            f"`keytool -exportcert -rfc -keystore {location} -alias ALIAS -file ca.pem` (`keytool -list "
            f"-keystore {location}` names the aliases; append one PEM per CA to ca.pem)"
        )
    return (
        f"a {store_type} trust store cannot be read by Python's ssl module, which reads PEM only. Convert it "
        f"with {how}, then set ssl.truststore.type=PEM and ssl.truststore.location=ca.pem (no "
        "ssl.truststore.password)"
    )


def _convert_key_store_advice(store_type: str, location: str) -> str:
    to_pkcs12 = (
        ""
        if store_type == "PKCS12"
        else f"`keytool -importkeystore -srckeystore {location} -destkeystore client.p12 -deststoretype PKCS12`, then "
    )
    source = location if store_type == "PKCS12" else "client.p12"
    return (
        f"a {store_type} key store cannot be read by Python's ssl module, which reads PEM only. Convert it with "
        f"{to_pkcs12}`openssl pkcs12 -in {source} -out client.pem` (the key stays encrypted with the passphrase "
        "you choose), then set ssl.keystore.type=PEM, ssl.keystore.location=client.pem, ssl.key.password=that "
        "passphrase, and no ssl.keystore.password"
    )


def _check_hostname(props: Mapping[str, str]) -> bool:
    """Java verifies the broker's host name unless ssl.endpoint.identification.algorithm is empty."""
    algorithm = props.get("ssl.endpoint.identification.algorithm", "https")
    if algorithm == "":
        return False
    if algorithm.lower() != "https":
        raise _Problem("ssl.endpoint.identification.algorithm", "must be https or empty (no host name check)")
    return True


def _version_range(props: Mapping[str, str]) -> tuple[ssl.TLSVersion, ssl.TLSVersion]:
    """The TLS versions Java's client would offer: ssl.enabled.protocols, capped by a versioned ssl.protocol."""
    names = [name for name in _java_list(props.get("ssl.enabled.protocols", _DEFAULT_ENABLED_PROTOCOLS)) if name]
    unknown = [name for name in names if name not in TLS_VERSIONS]
    if unknown or not names:
        raise _Problem("ssl.enabled.protocols", f"must list TLS versions among {', '.join(TLS_VERSIONS)}")
    versions = [TLS_VERSIONS[name] for name in names]
    protocol = props.get("ssl.protocol", "TLSv1.3")
    if protocol not in _PROTOCOL_CAPS:
        raise _Problem("ssl.protocol", f"must be one of {', '.join(_PROTOCOL_CAPS)}")
    cap = _PROTOCOL_CAPS[protocol]
    low, high = min(versions), max(versions)
    if cap is not None:
        high = min(high, cap)
    if low > high:
        raise _Problem("ssl.protocol", f"{protocol} excludes every version of ssl.enabled.protocols")
    return low, high


def _java_list(value: str) -> list[str]:
    """A Kafka LIST value: comma-separated, each item trimmed (ConfigDef splits on ``\\s*,\\s*``)."""
    return [item.strip() for item in value.split(",")] if value.strip() else []


def _version_name(version: ssl.TLSVersion) -> str:
    return next(name for name, known in TLS_VERSIONS.items() if known == version)


def _load_trust(context: ssl.SSLContext, trust: _Pem) -> None:
    try:
        context.load_verify_locations(cadata=trust.text)
    except ssl.SSLError as error:
        reason = error.reason or str(error)
        raise _Problem(trust.key, f"no CA certificate could be read from {trust.described()}: {reason}") from None


class _NoKeyPassword(Exception):
    """OpenSSL asked for a key password that the properties do not have."""


def _load_key_store(context: ssl.SSLContext, chain: _Pem, private_key: _Pem | None, password: str | None) -> None:
    """Load the client certificate chain and key. A password callback is always given, so that OpenSSL
    never prompts on the terminal for an encrypted key."""
    ask_password = _password_callback(password)
    try:
        if chain.path is not None and private_key is None:
            context.load_cert_chain(chain.path, password=ask_password)
        else:
            assert private_key is not None
            _load_inline_key_store(context, chain, private_key, ask_password)
    except _NoKeyPassword:
        raise _Problem(chain.key, "the private key is encrypted: set ssl.key.password") from None
    except (ssl.SSLError, OSError) as error:
        reason = getattr(error, "reason", None) or error.strerror or type(error).__name__
        raise _Problem(
            chain.key,
            f"cannot load the client certificate and private key from {chain.described()} ({reason}): a wrong "
            "ssl.key.password, a key that does not belong to the certificate, or no PEM key and certificate",
        ) from None


def _password_callback(password: str | None) -> Callable[[], str]:
    def ask() -> str:
        if password is None:
            raise _NoKeyPassword
        return password

    return ask


def _load_inline_key_store(
    context: ssl.SSLContext, chain: _Pem, private_key: _Pem, ask_password: Callable[[], str]
) -> None:
    """``load_cert_chain`` reads files only: the inline key and chain go to a private temporary file that
    lives only while it is loaded."""
    with tempfile.TemporaryDirectory(prefix="taskassign-tls-") as directory:
        path = os.path.join(directory, "client.pem")
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="ascii", errors="replace") as file:
            file.write(private_key.text.strip() + "\n" + chain.text.strip() + "\n")
        context.load_cert_chain(path, password=ask_password)
