"""Kafka client properties (what Kafka's tools take as ``--command-config``) as kafka-python settings.

A user who reads their cluster with Kafka's tools already has a properties file that authenticates them;
taskassign takes the same file, so that nobody has to learn kafka-python's option names or re-type a
password. ``client_settings`` maps each property the way Kafka's Java client would use it and sorts every
key into one of three bins:

- **mapped** into ``KafkaClient`` keyword arguments (``kwargs``): ``security.protocol``, the SASL mechanism
  and the credentials inside ``sasl.jaas.config``, everything TLS as one ``ssl.SSLContext``
  (``capture.tls``), ``client.id``, ``request.timeout.ms`` and a few other timings;
- **ignored**, with the reason: settings that do not matter to a short read-only session (login refresh,
  Kerberos ticket renewal), JVM-only knobs, settings of a security protocol not in use, and unknown keys
  (Kafka's tools warn about those and go on; so does taskassign). ``bootstrap.servers`` is ignored too:
  the command line's ``--bootstrap-server`` decides, as in Kafka's tools;
- **rejected**: security-relevant settings that cannot be honoured (a JKS trust store, custom Java
  callback classes, OAUTHBEARER without a token provider, Java cipher suite names) or values Java would
  refuse. ``kwargs`` refuses to hand out settings while anything is rejected: connecting with part of the
  user's security configuration would be connecting as someone else, or less safely.

Values are trimmed as Kafka's ``ConfigDef`` trims them. No message, note or ``repr`` shows a password, a
JAAS value or a private key; keys that do not look like setting names are not shown either (a line holding
only a pasted password reads as a key).

Connections are read-only: ``allow_auto_create_topics`` is always False, so a Metadata request for a topic
that does not exist never creates it (it would need CREATE on the cluster or topic, and it would write).
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from taskassign.capture.jaas import JaasEntry, parse_client_jaas_config
from taskassign.capture.tls import tls_setup
from taskassign.errors import ClientConfigError, UserInputError
from taskassign.formats.properties import read_properties

__all__ = (
    "SASL_MECHANISMS",
    "SECURITY_PROTOCOLS",
    "ClientSettings",
    "SettingNote",
    "client_settings",
    "read_client_settings",
    "shown_key",
)

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "GSSAPI")
PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
KERBEROS_LOGIN_MODULES = (
    "com.sun.security.auth.module.Krb5LoginModule",
    "com.ibm.security.auth.module.Krb5LoginModule",
)

#: kafka-python keyword arguments that hold secrets: masked wherever settings are shown.
SECRET_KWARGS = frozenset({"sasl_plain_password", "ssl_password", "sasl_oauth_token_provider"})

# Integer settings passed through: property -> kafka-python keyword.
_INTEGER_SETTINGS: Mapping[str, str] = {
    "request.timeout.ms": "request_timeout_ms",
    "retry.backoff.ms": "retry_backoff_ms",
    "reconnect.backoff.ms": "reconnect_backoff_ms",
    "reconnect.backoff.max.ms": "reconnect_backoff_max_ms",
    "connections.max.idle.ms": "connections_max_idle_ms",
    "metadata.max.age.ms": "metadata_max_age_ms",
}
# The ssl.* keys capture.tls reads.
_TLS_KEYS = frozenset({
    "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.certificates",
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.keystore.key",
    "ssl.keystore.certificate.chain", "ssl.key.password", "ssl.endpoint.identification.algorithm",
    "ssl.enabled.protocols", "ssl.protocol",
})  # fmt: skip
_TLS_IGNORED: Mapping[str, str] = {
    "ssl.provider": "a JVM security provider; Python uses OpenSSL",
    "ssl.keymanager.algorithm": "a JVM key manager algorithm; Python uses OpenSSL",
    "ssl.trustmanager.algorithm": "a JVM trust manager algorithm; Python uses OpenSSL (certificates are verified)",
    "ssl.secure.random.implementation": "a JVM random number generator; Python uses OpenSSL's",
}
_TLS_REJECTED: Mapping[str, str] = {
    "ssl.cipher.suites": (
        "Java cipher suite names cannot be passed to OpenSSL; remove the line to use OpenSSL's default suites "
        "(the broker still decides which it accepts)"
    ),
    "ssl.engine.factory.class": "a custom Java SSL engine factory cannot run here",
}
_CUSTOM_SASL_CLASSES: Mapping[str, str] = {
    "sasl.client.callback.handler.class": "a custom Java SASL callback handler cannot run here",
    "sasl.login.callback.handler.class": "a custom Java login callback handler cannot run here",
    "sasl.login.class": "a custom Java login class cannot run here",
}
_SASL_IGNORED_PREFIXES: Mapping[str, str] = {
    "sasl.login.": "login refresh and retry timing of a long-running Java client",
    "sasl.kerberos.": "Kerberos ticket renewal of a long-running Java client",
    "sasl.oauthbearer.": "used only with sasl.mechanism=OAUTHBEARER",
}
_GENERAL_IGNORED: Mapping[str, str] = {
    "bootstrap.servers": "the --bootstrap-server option decides where to connect (as in Kafka's tools)",
}
# Every Kafka setting name is lower case with at least one dot; anything else may be a secret on a line of its own.
_SETTING_NAME = re.compile(r"[a-z0-9]+(?:[_-][a-z0-9]+)*(?:\.[a-z0-9]+(?:[_-][a-z0-9]+)*)+")
_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+")
# A SASL mechanism's name (RFC 4422: upper case, digits, - and _); anything else may be a misplaced secret.
_MECHANISM_NAME = re.compile(r"[A-Z0-9_-]{0,20}")


@dataclass(frozen=True)
class SettingNote:
    """A property key and what became of it (why it is ignored or rejected); never its value."""

    key: str
    reason: str


@dataclass(frozen=True, repr=False)
class ClientSettings:
    """kafka-python settings from Kafka client properties, and what was done with each key.

    ``mapped`` holds what could be mapped; it is incomplete while ``rejected`` is not empty, so connect
    with ``kwargs``, which raises the ClientConfigError listing every rejected key instead.
    ``applied`` says in words what the settings do (for the user to check; no secrets).
    """

    source: str
    mapped: Mapping[str, object]
    applied: tuple[str, ...] = ()
    ignored: tuple[SettingNote, ...] = ()
    rejected: tuple[SettingNote, ...] = ()

    @property
    def usable(self) -> bool:
        return not self.rejected

    def raise_if_rejected(self) -> None:
        """Raise a ClientConfigError naming every rejected key, if any."""
        if self.rejected:
            raise ClientConfigError(self.source, tuple((note.key, note.reason) for note in self.rejected))

    @property
    def kwargs(self) -> dict[str, object]:
        """Keyword arguments for ``kafka.KafkaClient`` (and its admin and consumer relatives)."""
        self.raise_if_rejected()
        return dict(self.mapped)

    def __repr__(self) -> str:
        shown = {key: "***" if key in SECRET_KWARGS else value for key, value in self.mapped.items()}
        return (
            f"ClientSettings(source={self.source!r}, mapped={shown!r}, ignored={[n.key for n in self.ignored]!r}, "
            f"rejected={[n.key for n in self.rejected]!r})"
        )


def read_client_settings(path: str | os.PathLike[str], *, oauth_token_provider: object | None = None) -> ClientSettings:
    """The settings of a client properties file; raises (PropertiesError, ClientConfigError) unless usable."""
    settings = client_settings(read_properties(path), source=os.fspath(path), oauth_token_provider=oauth_token_provider)
    settings.raise_if_rejected()
    return settings


def client_settings(
    properties: Mapping[str, str], *, source: str, oauth_token_provider: object | None = None
) -> ClientSettings:
    """Map Kafka client properties to kafka-python settings (see the module docstring).

    ``oauth_token_provider`` is what kafka-python needs for OAUTHBEARER: an instance of
    ``kafka.sasl.oauth.AbstractTokenProvider`` (kafka-python cannot run Kafka's Java token login). Without
    it, OAUTHBEARER is rejected.
    """
    builder = _Builder(source, {key: _java_trim(value) for key, value in properties.items()})
    protocol = builder.security_protocol()
    builder.general_settings()
    builder.tls(protocol)
    builder.sasl(protocol, oauth_token_provider)
    builder.security_providers(protocol)
    builder.unknown_keys()
    return builder.build()


def _java_trim(value: str) -> str:
    """Java's ``String.trim``: every character up to U+0020 off both ends (ConfigDef trims values so)."""
    return value.strip("".join(map(chr, range(0x21))))


def _gssapi_installed() -> bool:
    """kafka-python's GSSAPI mechanism needs the ``gssapi`` package (which needs the Kerberos libraries)."""
    return importlib.util.find_spec("gssapi") is not None


def shown_key(key: str) -> str:
    """``key`` if it looks like a setting name; otherwise a stand-in (it may be a pasted secret)."""
    return key if _SETTING_NAME.fullmatch(key) else "<a key that is no setting name, not shown>"


class _Builder:
    """Sorts each property into mapped, ignored or rejected exactly once, collecting every problem."""

    def __init__(self, source: str, props: dict[str, str]) -> None:
        self.source = source
        self.props = props
        self.kwargs: dict[str, object] = {"allow_auto_create_topics": False}
        self.applied: list[str] = []
        self.ignored: list[SettingNote] = []
        self.rejected: list[SettingNote] = []
        self.done: set[str] = set()

    def build(self) -> ClientSettings:
        return ClientSettings(
            self.source,
            MappingProxyType(dict(self.kwargs)),
            tuple(self.applied),
            tuple(self.ignored),
            tuple(self.rejected),
        )

    def take(self, key: str) -> str | None:
        """The value of ``key`` (None if absent), which counts as used."""
        self.done.add(key)
        return self.props.get(key)

    def ignore(self, key: str, reason: str) -> None:
        if key in self.props and key not in self.done:
            self.done.add(key)
            self.ignored.append(SettingNote(shown_key(key), reason))

    def reject(self, key: str, reason: str) -> None:
        self.done.add(key)
        self.rejected.append(SettingNote(shown_key(key), reason))

    def keys_with_prefix(self, prefix: str) -> list[str]:
        return sorted(key for key in self.props if key.startswith(prefix) and key not in self.done)

    # --- security.protocol and plain settings -------------------------------------------------------------

    def security_protocol(self) -> str | None:
        """The protocol (Java accepts any case), or None when it is invalid (then rejected)."""
        given = self.take("security.protocol")
        value = "PLAINTEXT" if given is None else given.upper()
        if value not in SECURITY_PROTOCOLS:
            self.reject("security.protocol", f"must be one of {', '.join(SECURITY_PROTOCOLS)}")
            return None
        self.kwargs["security_protocol"] = value
        self.applied.append(f"security.protocol={value}")
        return value

    def general_settings(self) -> None:
        client_id = self.take("client.id")
        if client_id is not None:
            self.kwargs["client_id"] = client_id
        for key, kwarg in _INTEGER_SETTINGS.items():
            value = self.take(key)
            if value is None:
                continue
            if not _JAVA_INTEGER.fullmatch(value) or int(value) < 0:
                self.reject(key, "must be a whole number of milliseconds, 0 or more")
            else:
                self.kwargs[kwarg] = int(value)
        for key, reason in _GENERAL_IGNORED.items():
            self.ignore(key, reason)

    def security_providers(self, protocol: str | None) -> None:
        if protocol in ("PLAINTEXT", None):
            self.ignore("security.providers", "no TLS or SASL in use")
        elif "security.providers" in self.props:
            self.reject("security.providers", "custom Java security providers cannot run here")

    def unknown_keys(self) -> None:
        for key in sorted(set(self.props) - self.done):
            security = key.startswith(("ssl.", "sasl.", "security."))
            self.ignore(key, "unknown security setting: ignored (check its spelling)" if security else "not used")

    # --- TLS --------------------------------------------------------------------------------------------

    def tls(self, protocol: str | None) -> None:
        if protocol not in ("SSL", "SASL_SSL"):
            why = "security.protocol is invalid" if protocol is None else f"no TLS with security.protocol={protocol}"
            for key in self.keys_with_prefix("ssl."):
                self.ignore(key, why)
            return
        for key, reason in _TLS_REJECTED.items():
            if key in self.props:
                self.reject(key, reason)
        for key, reason in _TLS_IGNORED.items():
            self.ignore(key, reason)
        tls_props = {key: value for key, value in self.props.items() if key in _TLS_KEYS}
        self.done.update(tls_props)
        try:
            setup = tls_setup(tls_props, self.source)
        except ClientConfigError as error:
            self.rejected.extend(SettingNote(key, reason) for key, reason in error.problems)
            return
        self.kwargs["ssl_context"] = setup.context
        self.applied.extend(setup.applied)
        self.ignored.extend(SettingNote(key, reason) for key, reason in setup.notes)

    # --- SASL -------------------------------------------------------------------------------------------

    def sasl(self, protocol: str | None, oauth_token_provider: object | None) -> None:
        if protocol not in ("SASL_PLAINTEXT", "SASL_SSL"):
            why = "security.protocol is invalid" if protocol is None else f"no SASL with security.protocol={protocol}"
            for key in self.keys_with_prefix("sasl."):
                self.ignore(key, why)
            return
        given = self.take("sasl.mechanism")
        mechanism = "GSSAPI" if given is None else given  # Java's default
        if mechanism in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
            self.password_login(mechanism)
        elif mechanism == "OAUTHBEARER":
            self.oauth(oauth_token_provider)
        elif mechanism == "GSSAPI":
            self.kerberos()
        else:
            shown = repr(mechanism) if _MECHANISM_NAME.fullmatch(mechanism) else "the value given (not shown)"
            self.reject("sasl.mechanism", f"{shown} is not supported: use one of {', '.join(SASL_MECHANISMS)}")
        for key, reason in _CUSTOM_SASL_CLASSES.items():
            if key in self.props and key not in self.done:
                self.reject(key, reason)
        for prefix, reason in _SASL_IGNORED_PREFIXES.items():
            for key in self.keys_with_prefix(prefix):
                self.ignore(key, reason)

    def jaas_entry(self, *, required: bool, mechanism: str) -> JaasEntry | None:
        """The single login module of sasl.jaas.config (None when absent and not required, or rejected)."""
        text = self.take("sasl.jaas.config")
        if text is None:
            if required:
                self.reject(
                    "sasl.jaas.config",
                    f"required for {mechanism} (taskassign does not read JAAS files named by "
                    "-Djava.security.auth.login.config)",
                )
            return None
        try:
            return parse_client_jaas_config(text)
        except UserInputError as error:
            self.reject("sasl.jaas.config", str(error))
            return None

    def password_login(self, mechanism: str) -> None:
        """PLAIN and SCRAM: username and password from PlainLoginModule or ScramLoginModule options (Java
        takes either module for either mechanism: both put the same credentials in the login subject)."""
        entry = self.jaas_entry(required=True, mechanism=mechanism)
        if entry is None:
            return
        if entry.login_module not in (PLAIN_LOGIN_MODULE, SCRAM_LOGIN_MODULE):
            self.reject("sasl.jaas.config", f"{mechanism} needs {PLAIN_LOGIN_MODULE} or {SCRAM_LOGIN_MODULE}")
            return
        missing = [option for option in ("username", "password") if option not in entry.options]
        if missing:
            self.reject("sasl.jaas.config", f"the login module has no {' or '.join(missing)} option")
            return
        if entry.options.get("tokenauth", "false").lower() == "true":
            self.reject("sasl.jaas.config", "delegation tokens (tokenauth=true) are not supported by kafka-python")
            return
        username = entry.options["username"]
        # kafka-python writes the SCRAM user name as given; Java escapes it as RFC 5802 asks.
        scram_name = username.replace("=", "=3D").replace(",", "=2C")
        self.kwargs.update(
            sasl_mechanism=mechanism,
            sasl_plain_username=scram_name if mechanism.startswith("SCRAM") else username,
            sasl_plain_password=entry.options["password"],
        )
        self.applied.append(f"SASL {mechanism} as user {username!r} (sasl.jaas.config)")

    def oauth(self, token_provider: object | None) -> None:
        if token_provider is None:
            self.reject(
                "sasl.mechanism",
                "OAUTHBEARER needs a token provider object in kafka-python (sasl_oauth_token_provider); taskassign "
                "cannot run Kafka's Java token login (sasl.login.callback.handler.class, "
                "sasl.oauthbearer.token.endpoint.url)",
            )
            return
        token_keys = ["sasl.jaas.config", "sasl.login.callback.handler.class"]
        token_keys += self.keys_with_prefix("sasl.oauthbearer.")
        for key in token_keys:
            self.ignore(key, "the token provider given to taskassign supplies the tokens")
        self.kwargs.update(sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=token_provider)
        self.applied.append("SASL OAUTHBEARER with the token provider given to taskassign")

    def kerberos(self) -> None:
        """GSSAPI through the Python package ``gssapi``, with the credentials of the Kerberos ticket cache."""
        entry = self.jaas_entry(required=False, mechanism="GSSAPI")
        service = self.take("sasl.kerberos.service.name") or (entry.options.get("serviceName") if entry else None)
        problems = []
        if not _gssapi_installed():
            problems.append(("sasl.mechanism", "GSSAPI needs the Python package gssapi (pip install gssapi)"))
        if not service:
            problems.append(("sasl.kerberos.service.name", "required for GSSAPI (the brokers' Kerberos service name)"))
        if entry is not None and entry.login_module not in KERBEROS_LOGIN_MODULES:
            problems.append(("sasl.jaas.config", f"GSSAPI needs {KERBEROS_LOGIN_MODULES[0]}"))
        elif entry is not None and entry.options.get("useKeyTab", "false").lower() == "true":
            problems.append((
                "sasl.jaas.config",
                "a key tab cannot be used directly: run `kinit -kt KEYTAB PRINCIPAL` first and set useTicketCache=true",
            ))
        for key, reason in problems:
            self.reject(key, reason)
        if problems:
            return
        self.kwargs.update(sasl_mechanism="GSSAPI", sasl_kerberos_service_name=service)
        self.applied.append(f"SASL GSSAPI (Kerberos) with the ticket cache's credentials, service name {service!r}")
