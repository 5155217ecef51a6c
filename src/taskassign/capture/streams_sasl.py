"""SASL logins of the streams-group client: PLAIN (RFC 4616) and SCRAM-SHA-256/512 (RFC 5802, by kafka-python's
``ScramClient``), the mechanisms the classic capture speaks with the credentials of ``sasl.jaas.config``.

The raw client sends the tokens (SaslHandshake v1, SaslAuthenticate v2); this module makes them and turns the
broker's answers into one clear line naming the mechanism, the user and the broker's message. The password is
held here and in kafka-python's ``ScramClient`` only: no message and no ``repr`` shows it.
"""

from __future__ import annotations

import binascii
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any

from taskassign.capture import kafka_codec as codec
from taskassign.errors import CaptureError, ClientConfigError

__all__ = ("STREAMS_SASL_MECHANISMS", "SaslAuthenticationError", "SaslLogin", "sasl_login")

STREAMS_SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
# Kafka error codes (org.apache.kafka.common.protocol.Errors) of the SASL exchange.
UNSUPPORTED_SASL_MECHANISM, ILLEGAL_SASL_STATE, SASL_AUTHENTICATION_FAILED = 33, 34, 58
_NAMES = {UNSUPPORTED_SASL_MECHANISM: "UNSUPPORTED_SASL_MECHANISM", ILLEGAL_SASL_STATE: "ILLEGAL_SASL_STATE",
          SASL_AUTHENTICATION_FAILED: "SASL_AUTHENTICATION_FAILED"}
_REFUSED = {
    "GSSAPI": "GSSAPI (Kerberos) is not implemented for streams groups: capture classic groups with it, or use a "
              "PLAIN or SCRAM listener",
    "OAUTHBEARER": "OAUTHBEARER is not implemented for streams groups: capture classic groups with it, or use a "
                   "PLAIN or SCRAM listener",
}


class SaslAuthenticationError(CaptureError):
    """The broker refused the login (exit code 2); the message never holds the password."""


@dataclass(frozen=True, repr=False)
class SaslLogin:
    """One user's credentials for one mechanism (``username`` as kafka-python has it: SCRAM-escaped)."""

    mechanism: str
    username: str
    password: str

    def __repr__(self) -> str:
        return f"SaslLogin(mechanism={self.mechanism!r}, username={self.username!r}, password=***)"

    def check_handshake(self, error: int, enabled: tuple[str, ...], where: str) -> None:
        if error == UNSUPPORTED_SASL_MECHANISM:
            raise SaslAuthenticationError(
                f"SASL {self.mechanism} is not enabled on the listener at {where} (it enables "
                f"{', '.join(enabled) or 'none'}): set sasl.mechanism in --command-config to one of them")
        if error == ILLEGAL_SASL_STATE:
            raise SaslAuthenticationError(
                f"SASL {self.mechanism}: the listener at {where} does not expect a SASL handshake "
                "(ILLEGAL_SASL_STATE): is it a PLAINTEXT or SSL listener? Check security.protocol in --command-config")
        if error:
            raise SaslAuthenticationError(f"SASL {self.mechanism} handshake with {where} failed: Kafka error code "
                                          f"{error}")

    def check_answer(self, answer: codec.SaslAuthenticated, where: str) -> None:
        if not answer.error_code:
            return
        name = _NAMES.get(answer.error_code, f"error code {answer.error_code}")
        said = answer.error_message or "no message"
        raise SaslAuthenticationError(
            f"SASL {self.mechanism} authentication as user {self.username!r} failed at {where}: {said} ({name}); "
            "check the user and password of sasl.jaas.config in --command-config")

    def exchange(self, where: str) -> Generator[bytes, bytes, None]:
        """The client's tokens: each ``send`` takes the server's answer to the previous token."""
        if self.mechanism == "PLAIN":
            yield b"\x00" + self.username.encode("utf-8") + b"\x00" + self.password.encode("utf-8")
            return
        from kafka.sasl.scram import ScramClient  # kafka-python only when SCRAM is used

        scram = ScramClient(self.username, self.password, self.mechanism)
        server_first = yield scram.first_message()
        try:
            scram.process_server_first_message(server_first)
        except (ValueError, KeyError, binascii.Error, UnicodeDecodeError) as exc:
            raise SaslAuthenticationError(f"SASL {self.mechanism} with {where}: the broker's first SCRAM message is "
                                          f"not usable ({type(exc).__name__}: {_safe(exc)})") from None
        server_final = yield scram.final_message()
        try:
            scram.process_server_final_message(server_final)
        except (ValueError, KeyError, binascii.Error, UnicodeDecodeError) as exc:
            raise SaslAuthenticationError(f"SASL {self.mechanism} with {where}: the broker's final SCRAM message does "
                                          f"not prove it knows the credentials ({type(exc).__name__}: "
                                          f"{_safe(exc)})") from None


def _safe(exc: BaseException) -> str:
    """An exception's text, short (kafka-python's SCRAM errors name fields, never the password)."""
    return str(exc)[:120]


def sasl_login(settings: Mapping[str, Any]) -> SaslLogin:
    """The login of kafka-python ``settings`` (from ``capture.security``); ClientConfigError for a mechanism the
    streams client does not speak."""
    mechanism = str(settings.get("sasl_mechanism") or "")
    if mechanism in _REFUSED:
        raise ClientConfigError("--command-config", (("sasl.mechanism", _REFUSED[mechanism]),))
    if mechanism not in STREAMS_SASL_MECHANISMS:
        raise ClientConfigError("--command-config", (
            ("sasl.mechanism", f"capturing a streams group speaks {', '.join(STREAMS_SASL_MECHANISMS)}"),))
    username, password = settings.get("sasl_plain_username"), settings.get("sasl_plain_password")
    if not isinstance(username, str) or not isinstance(password, str):
        raise ClientConfigError("--command-config", (
            ("sasl.jaas.config", f"{mechanism} needs a username and a password option"),))
    return SaslLogin(mechanism, username, password)
