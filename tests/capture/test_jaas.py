"""``sasl.jaas.config`` parsing against Kafka's own parser (``JaasContext.loadClientContext``).

The fixed cases say what Kafka's client accepts (each is also checked against Kafka's jar where a JDK and a Kafka
distribution are at hand); a hypothesis test compares both parsers on random texts built from the characters
and words that steer Java's ``StreamTokenizer``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskassign.capture.jaas import JaasEntry, parse_client_jaas_config, parse_jaas_config
from taskassign.errors import JaasError, UserInputError
from tests.capture.lab_env import kafka_home
from tests.java_oracle import JavaOracle

ORACLE_SOURCE = Path(__file__).parent / "java" / "JaasOracle.java"
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"

# (sasl.jaas.config value, (module, flag, options)) as Kafka's client reads it.
CASES: list[tuple[str, tuple[str, str, dict[str, str]]]] = [
    (
        f'{PLAIN} required username="alice" password="alice-secret";',
        (PLAIN, "REQUIRED", {"username": "alice", "password": "alice-secret"}),
    ),
    (
        f"{PLAIN} required username='alice' password='p w';",
        (PLAIN, "REQUIRED", {"username": "alice", "password": "p w"}),
    ),
    (
        f"{PLAIN} REQUIRED username=alice password=secret_$-1;",
        (PLAIN, "REQUIRED", {"username": "alice", "password": "secret_$-1"}),
    ),
    (
        f'  {PLAIN}\n  required\n  username="a"\n  password="b"  ;  ',
        (PLAIN, "REQUIRED", {"username": "a", "password": "b"}),
    ),
    ('M optional password="a\\"b\\\\c\\n\\t";', ("M", "OPTIONAL", {"password": 'a"b\\c\n\t'})),
    ('M sufficient p="\\101\\60\\477\\q";', ("M", "SUFFICIENT", {"p": "A0'7q"})),  # octal; \477 is \47 then 7
    ('M requisite p="unterminated\n;', ("M", "REQUISITE", {"p": "unterminated"})),  # a quote ends at the line end
    ('M required /* comment */ a="1" // to the end of the line\n b="2";', ("M", "REQUIRED", {"a": "1", "b": "2"})),
    ('M required a="1" a="2";', ("M", "REQUIRED", {"a": "2"})),
    ("M required;", ("M", "REQUIRED", {})),
    ('"quoted.Module" required "key"="value";', ("quoted.Module", "REQUIRED", {"key": "value"})),
    ("M required key=ключ;", ("M", "REQUIRED", {"key": "ключ"})),
]

ERRORS: list[tuple[str, str]] = [
    ("", "Login module not specified in JAAS config"),
    ("// only a comment", "Login module not specified in JAAS config"),
    ("M", "Login module control flag not specified in JAAS config"),
    ("M bogus;", "Invalid login module control flag 'bogus' in JAAS config"),
    ("M required", "JAAS config entry not terminated by semi-colon"),
    ('M required a="1"', "JAAS config entry not terminated by semi-colon"),
    ("M required iterations=4096;", "Value not specified for key 'iterations' in JAAS config"),  # a number
    ("M required keyTab=/etc/k.keytab;", "Value not specified for key 'keyTab' in JAAS config"),  # / is a comment
    ("M required a;", "Value not specified for key 'a' in JAAS config"),
    ("M required; N optional;", "JAAS config property contains 2 login modules, should be 1 module"),
    ("M ;", "Login module control flag is not available in the JAAS config"),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_parses_like_kafka(text: str, expected: tuple[str, str, dict[str, str]]) -> None:
    entry = parse_client_jaas_config(text)
    assert (entry.login_module, entry.control_flag, dict(entry.options)) == expected


@pytest.mark.parametrize(("text", "message"), ERRORS)
def test_refuses_like_kafka(text: str, message: str) -> None:
    with pytest.raises(JaasError) as caught:
        parse_client_jaas_config(text)
    assert caught.value.kafka_message == message  # Kafka's words; the message shown may hold back a token


def test_a_jaas_file_may_hold_several_entries() -> None:
    entries = parse_jaas_config('A required;\nB optional x="1";')
    assert [entry.login_module for entry in entries] == ["A", "B"]


def test_repr_shows_option_names_only() -> None:
    entry = parse_client_jaas_config(f'{PLAIN} required username="alice" password="hunter2";')
    assert "hunter2" not in repr(entry) and "password" in repr(entry)
    assert isinstance(entry, JaasEntry)


# --- against Kafka's own parser ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaOracle]:
    home = kafka_home()
    if home is None:
        pytest.skip("needs Kafka's client jar: set KAFKA_HOME=/path/to/kafka")
    libs = home / "libs"
    if not any(libs.glob("kafka-clients-*.jar")):
        pytest.skip(f"needs Kafka's client jar in {libs} (set KAFKA_HOME=/path/to/kafka)")
    java = JavaOracle(ORACLE_SOURCE, tmp_path_factory.mktemp("jaas-oracle"), (f"{libs}/*",))
    try:
        yield java
    finally:
        java.close()


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("jaas-texts")


def kafka_parse(oracle: JavaOracle, scratch: Path, text: str) -> dict[str, Any]:
    path = scratch / "jaas.txt"
    path.write_text(text, encoding="utf-8")
    return oracle.ask(str(path))


def our_parse(text: str) -> dict[str, Any]:
    """Our answer in the oracle's shape; errors are compared by kind (Java's messages carry its class)."""
    try:
        entry = parse_client_jaas_config(text)
    except UserInputError:
        return {"error": True}
    options = sorted([key, value] for key, value in entry.options.items())
    return {"module": entry.login_module, "flag": entry.control_flag, "options": options}


def comparable(answer: dict[str, Any]) -> dict[str, Any]:
    return {"error": True} if "error" in answer else answer


@pytest.mark.parametrize("text", [text for text, _ in CASES] + [text for text, _ in ERRORS])
def test_cases_match_kafka(oracle: JavaOracle, scratch: Path, text: str) -> None:
    assert our_parse(text) == comparable(kafka_parse(oracle, scratch, text))


@pytest.mark.parametrize(("text", "message"), ERRORS)
def test_error_messages_are_kafkas(oracle: JavaOracle, scratch: Path, text: str, message: str) -> None:
    assert kafka_parse(oracle, scratch, text)["error"] == f"java.lang.IllegalArgumentException: {message}"


JAAS_PIECES = [
    "M", "org.x.Mod", "required", "optional", "Requisite", "bogus", " ", "\n", "\r", "\t", "=", ";", '"', "'",
    "\\", "\\n", "\\101", "\\477", "/", "//", "/*", "*/", "*", "-", "-1", ".", "5", "a", "$", "_", "é", "\u0100",
    "username", "password", '"x y"', "'q'", "\x7f", "\x85",
]  # fmt: skip
JAAS_TEXTS = st.lists(st.sampled_from(JAAS_PIECES), max_size=25).map("".join)


@settings(max_examples=400)
@given(text=JAAS_TEXTS)
def test_random_texts_parse_as_in_kafka(oracle: JavaOracle, scratch: Path, text: str) -> None:
    assert our_parse(text) == comparable(kafka_parse(oracle, scratch, text))


@settings(max_examples=200)
@given(
    text=st.lists(st.sampled_from(JAAS_PIECES), max_size=8).map(
        lambda middle: "M required " + "".join(middle) + ' k="v";'
    )
)
def test_random_option_texts_parse_as_in_kafka(oracle: JavaOracle, scratch: Path, text: str) -> None:
    """Most random texts fail early; these start with a valid module and flag, to reach the options."""
    assert our_parse(text) == comparable(kafka_parse(oracle, scratch, text))
