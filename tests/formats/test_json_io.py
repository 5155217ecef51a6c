"""formats.json_io's safe reader: regular files or stdin only, reads capped, errors naming the file."""

from __future__ import annotations

import io
import os
import threading
from pathlib import Path

import pytest

from taskassign.errors import InputFileError, ScenarioError, UserInputError
from taskassign.formats.json_io import (
    DEFAULT_MAX_INPUT_BYTES,
    MAX_INPUT_BYTES_ENV,
    dump_json,
    load_json_file,
    load_json_text,
    max_input_bytes,
    read_input_bytes,
    read_input_text,
)


def test_reads_a_regular_file(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text('{"a": 1}')
    assert load_json_file(path) == {"a": 1}
    assert read_input_bytes(path) == b'{"a": 1}'


def test_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match=r"missing\.json: cannot read the file: No such file"):
        load_json_file(tmp_path / "missing.json")


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="is a directory, not a JSON file"):
        load_json_file(tmp_path)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_devices_are_refused_without_reading(device: str) -> None:
    if not Path(device).exists():
        pytest.skip(f"no {device}")
    with pytest.raises(InputFileError, match="is not a regular file"):
        load_json_file(device)


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            load_json_file(fifo)
        except BaseException as error:
            outcome.append(error)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # unblock the reader before failing
        with open(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK), "wb"):
            pass
        pytest.fail("load_json_file blocked on a FIFO")
    assert len(outcome) == 1 and isinstance(outcome[0], InputFileError), outcome
    assert "not a regular file" in str(outcome[0])


def test_the_cap_is_configurable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.json"
    path.write_text('{"a": "' + "x" * 100 + '"}')
    assert max_input_bytes() == DEFAULT_MAX_INPUT_BYTES
    monkeypatch.setenv(MAX_INPUT_BYTES_ENV, "50")
    with pytest.raises(InputFileError, match=f"larger than 50 bytes.*{MAX_INPUT_BYTES_ENV}"):
        load_json_file(path)
    monkeypatch.setenv(MAX_INPUT_BYTES_ENV, "200")
    assert load_json_file(path)["a"] == "x" * 100


@pytest.mark.parametrize("value", ["0", "-5", "lots"])
def test_a_bad_cap_is_a_user_error(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_INPUT_BYTES_ENV, value)
    with pytest.raises(UserInputError, match=MAX_INPUT_BYTES_ENV):
        max_input_bytes()


def test_an_explicit_limit_wins(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_bytes(b"x" * 11)
    with pytest.raises(InputFileError, match="larger than 10 bytes"):
        read_input_bytes(path, limit=10)
    assert read_input_bytes(path, limit=11) == b"x" * 11


def test_stdin_is_dash_and_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    class Stdin:
        buffer = io.BytesIO(b'{"b": 2}')

    monkeypatch.setattr("sys.stdin", Stdin())
    assert load_json_file("-") == {"b": 2}
    Stdin.buffer = io.BytesIO(b"y" * 100)
    with pytest.raises(InputFileError, match="stdin: larger than 10 bytes"):
        read_input_bytes("-", limit=10)


def test_invalid_utf8_names_the_byte_offset(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(InputFileError, match="not UTF-8 text \\(byte offset 7\\)"):
        read_input_text(path)


def test_syntax_errors_are_scenario_errors(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("{")
    with pytest.raises(ScenarioError, match="invalid JSON"):
        load_json_file(path)


@pytest.mark.parametrize("opening, closing", [("[", "]"), ('{"a":', "}")])
def test_deep_nesting_is_a_scenario_error(opening: str, closing: str) -> None:
    text = opening * 100_000 + "1" + closing * 100_000
    with pytest.raises(ScenarioError, match=r"\$: JSON nested too deeply"):
        load_json_text(text, "deep.json")


def test_an_unpaired_surrogate_is_refused_with_its_path() -> None:
    with pytest.raises(ScenarioError, match=r"\$\.a\[1\]\.b: the string holds an unpaired surrogate"):
        load_json_text('{"a": [1, {"b": "x\\ud800"}]}', "s.json")
    with pytest.raises(ScenarioError, match=r"\$\.a: a key holds an unpaired surrogate"):
        load_json_text('{"a": {"\\udc00": 1}}', "s.json")
    assert load_json_text('{"a": "\\ud83d\\ude00", "b": "\\\\ud800"}', "s.json") == {"a": "😀", "b": "\\ud800"}


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_dump_json_respects_the_umask(tmp_path: Path, umask: int) -> None:
    previous = os.umask(umask)
    try:
        dump_json({"a": 1}, tmp_path / "out.json")
    finally:
        os.umask(previous)
    assert (tmp_path / "out.json").stat().st_mode & 0o777 == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]
