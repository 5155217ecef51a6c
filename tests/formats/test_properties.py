"""Java ``.properties`` files: the reader against ``java.util.Properties.load`` itself.

The expected values below are what Java 17 answers (the comparison tests check each of them against a real
JVM where a JDK is installed, and a hypothesis test compares both on random texts built from the characters
that matter to the grammar).
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskassign.errors import PropertiesError, UserInputError
from taskassign.formats.properties import MAX_PROPERTIES_BYTES, parse_properties, read_properties
from tests.java_oracle import JavaOracle

ORACLE_SOURCE = Path(__file__).parent / "java" / "PropertiesOracle.java"

# (file text, entries Java loads from it). Texts are written to files as ISO-8859-1.
CASES: list[tuple[str, dict[str, str]]] = [
    ("a=b", {"a": "b"}),
    ("a:b", {"a": "b"}),
    ("a b", {"a": "b"}),
    ("a\tb", {"a": "b"}),
    ("a\fb", {"a": "b"}),
    ("  \t a = b  ", {"a": "b  "}),  # leading whitespace dropped, trailing kept
    ("a = = b", {"a": "= b"}),  # one separator only
    ("a:=b", {"a": "=b"}),
    ("a =:b", {"a": ":b"}),
    ("a", {"a": ""}),
    ("a=", {"a": ""}),
    ("=b", {"": "b"}),
    (":", {"": ""}),
    ("# comment\n! other\n  # indented comment\na=1", {"a": "1"}),
    ("a=1 # not a comment", {"a": "1 # not a comment"}),
    ("#a=1\\\nb=2", {"b": "2"}),  # a comment does not continue
    ("a=1\na=2", {"a": "2"}),  # later duplicates win
    ("\n\n  \n\t\na=1\n\n", {"a": "1"}),
    ("a=1\r\nb=2\rc=3\n", {"a": "1", "b": "2", "c": "3"}),
    ("a=x\\\n   y", {"a": "xy"}),  # continuation drops the next line's leading whitespace
    ("a=x\\\r\n   y", {"a": "xy"}),
    ("a=x\\\r   y", {"a": "xy"}),
    ("a=x\\\\\nb=y", {"a": "x\\", "b": "y"}),  # an even run of backslashes does not continue
    ("a=x\\\\\\\ny", {"a": "x\\y"}),
    ("a=x\\\n\nb=y", {"a": "x", "b": "y"}),  # a continuation into a blank line ends the line
    ("a=x\\\n#y", {"a": "x#y"}),  # a continued line starting with # is no comment
    ("a=x\\", {"a": "x"}),  # a backslash at the end of the file is dropped
    ("a\\\n=b", {"a": "b"}),
    ("\\\n#x=y", {}),  # the logical line is still empty: a comment after all
    ("\\", {"": ""}),
    ("\\\n", {"": ""}),
    ("\\\n ", {}),
    ("k\\=x=1", {"k=x": "1"}),
    ("k\\:x:1", {"k:x": "1"}),
    ("k\\ x 1", {"k x": "1"}),
    ("\\#k=1", {"#k": "1"}),
    ("a=\\t\\n\\r\\f", {"a": "\t\n\r\f"}),
    ("a=\\b\\q\\\\\\=", {"a": "bq\\="}),  # any other escaped character stands for itself
    ("a=\\u0041\\u00e9\\u20AC", {"a": "Aé€"}),
    ("\\u0041=1", {"A": "1"}),
    ("a=\\uD83D\\uDE00", {"a": "😀"}),  # a surrogate pair is one character
    ("a=\\uD83D", {"a": "\ud83d"}),  # a lone surrogate stays
    ("a=caf\u00e9", {"a": "café"}),  # ISO-8859-1 byte 0xE9
    ("password=s3cr3t=x:y", {"password": "s3cr3t=x:y"}),
    (
        'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n'
        '    username="alice" \\\n    password="a\\\\"b";',
        {
            "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required '
            'username="alice" password="a\\"b";'
        },
    ),
]

MALFORMED: list[tuple[str, int]] = [  # (text, line Java's IllegalArgumentException is about)
    ("a=\\u12", 1),
    ("a=\\u12g4", 1),
    ("a=\\u", 1),
    ("\\u004=1", 1),  # the escape cannot borrow the separator
    ("a=1\nb=ok\\\n  \\uZZZZ", 3),
    ("x=1\r\ny=2\r\nz=\\u00", 3),
]


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaOracle]:
    java = JavaOracle(ORACLE_SOURCE, tmp_path_factory.mktemp("properties-oracle"))
    try:
        yield java
    finally:
        java.close()


def java_load(oracle: JavaOracle, path: Path) -> dict[str, str] | str:
    """Java's entries for a file, or its exception as text."""
    answer = oracle.ask(str(path))
    if "error" in answer:
        return str(answer["error"])
    return dict(answer["entries"])


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("iso-8859-1"))
    return path


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_reads_like_java(tmp_path: Path, text: str, expected: dict[str, str]) -> None:
    assert read_properties(write(tmp_path / "c.properties", text)) == expected
    assert parse_properties(text) == expected


@pytest.mark.parametrize(("text", "line"), MALFORMED)
def test_malformed_unicode_escape_names_file_and_line(tmp_path: Path, text: str, line: int) -> None:
    path = write(tmp_path / "bad.properties", text)
    with pytest.raises(PropertiesError) as caught:
        read_properties(path)
    assert caught.value.line == line
    assert str(caught.value).startswith(f"{path}:{line}: malformed \\uxxxx escape")
    assert isinstance(caught.value, UserInputError)


def test_malformed_escape_message_shows_the_key_not_the_value() -> None:
    with pytest.raises(PropertiesError) as caught:
        parse_properties("ssl.key.password=hunter2\\uXYZW", "client.properties")
    assert "'ssl.key.password'" in str(caught.value)
    assert "hunter2" not in str(caught.value)


def test_file_bytes_are_iso_8859_1_as_in_kafkas_tools(tmp_path: Path) -> None:
    """UTF-8 é (C3 A9) reads as two characters, exactly as Utils.loadProps reads it."""
    path = tmp_path / "utf8.properties"
    path.write_bytes("password=café".encode())
    assert read_properties(path) == {"password": "cafÃ©"}


def test_keeps_first_appearance_order() -> None:
    assert list(parse_properties("b=1\na=2\nb=3")) == ["b", "a"]


def test_text_beyond_latin_1_is_kept() -> None:
    """parse_properties reads text (Properties.load(Reader)), so any character passes through."""
    assert parse_properties("ключ=значение € 😀") == {"ключ": "значение € 😀"}


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PropertiesError, match=r"missing\.properties: cannot read the file: No such file"):
        read_properties(tmp_path / "missing.properties")


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PropertiesError, match="is a directory"):
        read_properties(tmp_path)


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    fifo = tmp_path / "pipe.properties"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            read_properties(fifo)
        except BaseException as error:
            outcome.append(error)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(5)
    if reader.is_alive():  # unblock the reader before failing
        with open(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK), "wb"):
            pass
        pytest.fail("read_properties blocked on a FIFO")
    assert len(outcome) == 1 and isinstance(outcome[0], PropertiesError), outcome
    assert "not a regular file" in str(outcome[0])


def test_device_is_refused() -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    with pytest.raises(PropertiesError, match="not a regular file"):
        read_properties("/dev/zero")


def test_symlink_to_a_regular_file_is_read(tmp_path: Path) -> None:
    target = write(tmp_path / "real.properties", "a=1")
    link = tmp_path / "link.properties"
    link.symlink_to(target)
    assert read_properties(link) == {"a": "1"}


def test_unreadable_file(tmp_path: Path) -> None:
    path = write(tmp_path / "secret.properties", "a=1")
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):
            pytest.skip("running with privileges that read any file")
        with pytest.raises(PropertiesError, match="cannot read the file: Permission denied"):
            read_properties(path)
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)


def test_size_is_capped(tmp_path: Path) -> None:
    path = tmp_path / "huge.properties"
    path.write_bytes(b"#" * (MAX_PROPERTIES_BYTES + 1))
    with pytest.raises(PropertiesError, match=f"larger than {MAX_PROPERTIES_BYTES} bytes"):
        read_properties(path)
    path.write_bytes(b"a=" + b"x" * (MAX_PROPERTIES_BYTES - 2))
    assert len(read_properties(path)["a"]) == MAX_PROPERTIES_BYTES - 2


# --- the same cases, and random ones, against Java itself ----------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_cases_match_java(oracle: JavaOracle, tmp_path: Path, text: str, expected: dict[str, str]) -> None:
    assert java_load(oracle, write(tmp_path / "c.properties", text)) == expected


@pytest.mark.parametrize(("text", "line"), MALFORMED)
def test_malformed_cases_fail_in_java(oracle: JavaOracle, tmp_path: Path, text: str, line: int) -> None:
    answer = java_load(oracle, write(tmp_path / "bad.properties", text))
    assert answer == "java.lang.IllegalArgumentException: Malformed \\uxxxx encoding."


# The characters that steer the grammar, a few ordinary ones, and fragments that random draws rarely form.
GRAMMAR_CHARS = list(" \t\f\n\r\\=:#!u") + list("ab0Fn") + ["\u00e9", "\u0085", "\u00ff"]
FRAGMENTS = ["\\u0041", "\\u00e9", "\\uD83D", "\\uDE00", "\\\n", "\\\r\n", "\r\n", "\\\\", "\\u12", "key=value\n"]
PROPERTIES_TEXTS = st.lists(st.one_of(st.sampled_from(GRAMMAR_CHARS), st.sampled_from(FRAGMENTS)), max_size=40).map(
    "".join
)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One directory for every example of the hypothesis test (its file is overwritten in turn)."""
    return tmp_path_factory.mktemp("random-properties")


@settings(max_examples=400)
@given(text=PROPERTIES_TEXTS)
def test_random_texts_load_as_in_java(oracle: JavaOracle, scratch: Path, text: str) -> None:
    path = write(scratch / "random.properties", text)
    expected = java_load(oracle, path)
    try:
        actual: dict[str, str] | str = read_properties(path)
    except PropertiesError as error:
        assert "malformed \\uxxxx escape" in str(error)
        actual = "java.lang.IllegalArgumentException: Malformed \\uxxxx encoding."
    assert actual == expected
