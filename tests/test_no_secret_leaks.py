"""No message, log line, output file or exception text shows a secret from any input (issue 32, point 3).

Distinctive secrets are planted in every setting that holds one: ``sasl.jaas.config`` passwords (well formed
and mistyped JAAS), ``ssl.*.password``, private keys (files and inline PEM, with wrong passwords), a JKS store's
password, a pasted password on a line of its own, the service's bearer token (file and environment) and the
bridge's. Then everything a run leaves is searched: stdout and stderr, every log record at DEBUG (kafka-python's
included), every file written, and the text, repr and cause chain of any exception.
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
import socket
import struct
import subprocess
import threading
import traceback
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from tests.capture.frames_server import Frame, load_frames, recording_dirs, serve_frames
from tests.capture.sasl_broker import sasl_broker
from tests.helpers import EXAMPLES_DIR, start_service, stop_service

runner = CliRunner()
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
JAAS_SECRET = "S3cretPass-jaas-7f3a"
KEY_PASSWORD = "keypass-91b2-SECRET"
WRONG_KEY_PASSWORD = "wrongpass-4c5d-SECRET"
STORE_PASSWORD = "storepass-6e7f-SECRET"
PASTED = "pasted-hunter2-SECRET"
TOKEN = "bearer-tok-0a1b2c-SECRET"
ENV_SECRET = "env-secret-3d4e-SECRET"
SECRETS = (JAAS_SECRET, KEY_PASSWORD, WRONG_KEY_PASSWORD, STORE_PASSWORD, PASTED, TOKEN, ENV_SECRET)


class Records(logging.Handler):
    """Every log record of every logger, at DEBUG, formatted with its arguments."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@contextmanager
def all_logs() -> Iterator[Records]:
    root = logging.getLogger()
    handler, level = Records(), root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def exception_text(error: BaseException | None) -> str:
    """The text, repr, args and formatted traceback of ``error`` and of its causes and contexts."""
    parts = []
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        parts += [str(error), repr(error), repr(error.args), *traceback.format_exception(error)]
        error = error.__cause__ or error.__context__
    return "\n".join(parts)


def files_text(directory: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in sorted(directory.rglob("*"))
                     if p.is_file() and p.suffix != ".properties" and not p.name.startswith("secret"))


def assert_no_secret(text: str, *extra: str) -> None:
    for secret in (*SECRETS, *extra):
        assert secret not in text, f"{secret!r} shown in:\n{text[-3000:]}"


def run_cli(argv: list[str], tmp: Path, *extra: str) -> tuple[int, str]:
    """Run a command in-process with every log record captured; assert no secret anywhere; return the exit
    code and the output."""
    with all_logs() as logs:
        result = runner.invoke(app, argv, env={"COLUMNS": "2000", "TASKASSIGN_TEST_SECRET": ENV_SECRET})
    text = "\n".join([result.output, *logs.lines, exception_text(result.exception), files_text(tmp)])
    assert_no_secret(text, *extra)
    return result.exit_code, " ".join(result.output.split())


# --- the settings that hold secrets --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An encrypted private key and its certificate (openssl), and the key's base64 lines (key material)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    base = tmp_path_factory.mktemp("keys")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-keyout", str(base / "secret-key.pem"),
                    "-out", str(base / "cert.pem"), "-passout", f"pass:{KEY_PASSWORD}", "-subj", "/CN=client",
                    "-days", "2"], check=True, capture_output=True)
    key = (base / "secret-key.pem").read_text()
    (base / "secret-client.pem").write_text(key + (base / "cert.pem").read_text())
    body = [line for line in key.splitlines() if line and not line.startswith("-----")]
    return {"key": key, "bundle": str(base / "secret-client.pem"), "material": "\n".join(body)}


def key_material(keys: dict[str, str]) -> tuple[str, ...]:
    """Every line of the key's base64 body: none may show."""
    return tuple(line for line in keys["material"].splitlines() if len(line) >= 16)


def inline(pem: str) -> str:
    return "\\n\\\n".join(pem.strip().splitlines())


def sasl(jaas: str, mechanism: str = "PLAIN") -> str:
    return f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism={mechanism}\nsasl.jaas.config={jaas}\n"


#: Client properties that taskassign refuses before connecting: each must be refused without a secret.
REFUSED = {
    "jaas: a value without its key": sasl(f'{PLAIN} required username="alice" "{JAAS_SECRET}";'),
    "jaas: a password without =": sasl(f'{PLAIN} required username="alice" password "{JAAS_SECRET}";'),
    "jaas: an unquoted password after a space": sasl(f"{PLAIN} required username=alice {JAAS_SECRET};"),
    "jaas: the password as the control flag": sasl(f'{PLAIN} {JAAS_SECRET} username="alice";'),
    "jaas: the password as the module": sasl(f'"{JAAS_SECRET}" required username="alice" password="x";'),
    "jaas: no semicolon": sasl(f'{PLAIN} required username="alice" password="{JAAS_SECRET}"'),
    "jaas: two modules": sasl(f'{PLAIN} required password="{JAAS_SECRET}"; {PLAIN} required password="{JAAS_SECRET}";'),
    "jaas: the wrong module": sasl(f'com.example.Login required username="alice" password="{JAAS_SECRET}";'),
    "jaas: no username": sasl(f'{PLAIN} required password="{JAAS_SECRET}";'),
    "jaas: delegation token": sasl(f'{SCRAM} required username="a" password="{JAAS_SECRET}" tokenauth=true;',
                                   "SCRAM-SHA-256"),
    "jaas: gssapi keytab": sasl(f'com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true '
                                f'keyTab="/{JAAS_SECRET}" principal="{JAAS_SECRET}";', "GSSAPI"),
    "jaas: an unknown mechanism": sasl(f'{PLAIN} required username="a" password="{JAAS_SECRET}";', JAAS_SECRET),
    "jks trust store": (f"security.protocol=SSL\nssl.truststore.location=/nonexistent/trust.jks\n"
                        f"ssl.truststore.password={STORE_PASSWORD}\n"),
    "jks key store": (f"security.protocol=SSL\nssl.keystore.location=/tmp/none.jks\n"
                      f"ssl.keystore.password={STORE_PASSWORD}\nssl.key.password={KEY_PASSWORD}\n"),
    "a pem key store with a store password": (f"security.protocol=SSL\nssl.keystore.type=PEM\nssl.keystore.key="
                                              f"{JAAS_SECRET}\nssl.keystore.password={STORE_PASSWORD}\n"),
    "an invalid security protocol": f"security.protocol={PASTED}\n",
    "an invalid timeout": f"request.timeout.ms={PASTED}\n",
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_client_properties_show_no_secret(case: str, tmp_path: Path) -> None:
    config = tmp_path / "client.properties"
    config.write_text(REFUSED[case])
    code, output = run_cli(["capture", "--bootstrap-server", "127.0.0.1:1", "--group", "g", "--command-config",
                            str(config), "-o", str(tmp_path / "out.json"), "--timeout", "0.5"], tmp_path)
    assert code == 2 and str(config) in output, output


def test_the_jaas_typo_of_the_issue(tmp_path: Path) -> None:
    config = tmp_path / "client.properties"
    config.write_text(sasl(f'{PLAIN} required username="alice" "{JAAS_SECRET}";'))
    code, output = run_cli(["capture", "--bootstrap-server", "127.0.0.1:1", "--group", "g", "--command-config",
                            str(config), "-o", str(tmp_path / "out.json")], tmp_path)
    assert code == 2 and "Value not specified for a key in JAAS config (after option 'username')" in output, output


@pytest.mark.parametrize("how", ["wrong password", "no password", "inline, wrong password"])
def test_a_private_key_that_does_not_open(how: str, keys: dict[str, str], tmp_path: Path) -> None:
    store = (f"ssl.keystore.location={keys['bundle']}" if not how.startswith("inline")
             else f"ssl.keystore.key={inline(keys['key'])}\nssl.keystore.certificate.chain={inline(keys['key'])}")
    password = "" if how == "no password" else f"ssl.key.password={WRONG_KEY_PASSWORD}\n"
    config = tmp_path / "client.properties"
    config.write_text(f"security.protocol=SSL\nssl.keystore.type=PEM\n{store}\n{password}")
    code, output = run_cli(["capture", "--bootstrap-server", "127.0.0.1:1", "--group", "g", "--command-config",
                            str(config), "-o", str(tmp_path / "out.json"), "--timeout", "0.5"], tmp_path,
                           *key_material(keys))
    assert code == 2 and "ssl." in output, output


# --- a broker that closes, answers garbage, or answers the wrong size ------------------------------------------


@contextmanager
def bad_broker(behaviour: str) -> Iterator[int]:
    """A loopback server that reads a request and then closes, answers random bytes, or announces 2 GB."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.1)
    stop = threading.Event()
    rng = random.Random(7)

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            with conn:
                conn.settimeout(2)
                try:
                    conn.recv(65536)
                    if behaviour == "garbage":
                        conn.sendall(struct.pack(">i", 64) + bytes(rng.randrange(256) for _ in range(64)))
                    elif behaviour == "huge":
                        conn.sendall(struct.pack(">i", 0x7FFFFFF0) + b"\0" * 16)
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        listener.close()


CONNECTING = {
    "plain": sasl(f'{PLAIN} required username="alice" password="{JAAS_SECRET}";'),
    "scram": sasl(f'{SCRAM} required username="alice" password="{JAAS_SECRET}";', "SCRAM-SHA-512"),
    "plaintext with unused secrets": (f"security.protocol=PLAINTEXT\nsasl.jaas.config={PLAIN} required "
                                      f'password="{JAAS_SECRET}";\nssl.key.password={KEY_PASSWORD}\n'),
}


@pytest.mark.parametrize("behaviour", ["close", "garbage", "huge"])
@pytest.mark.parametrize("case", sorted(CONNECTING))
def test_a_broker_that_answers_badly(case: str, behaviour: str, tmp_path: Path) -> None:
    config = tmp_path / "client.properties"
    config.write_text(CONNECTING[case])
    with bad_broker(behaviour) as port:
        code, output = run_cli(["capture", "--bootstrap-server", f"127.0.0.1:{port}", "--group", "g",
                                "--command-config", str(config), "-o", str(tmp_path / "out.json"),
                                "--timeout", "2"], tmp_path)
    assert code == 2, output
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("login", ["refused", "accepted"])
@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_the_streams_capture_over_sasl(mechanism: str, login: str, tmp_path: Path) -> None:
    """The streams capture's own SASL login (a loopback SASL listener): refused, or accepted and then the listener
    answers nothing more; the password shows nowhere either way."""
    module = PLAIN if mechanism == "PLAIN" else SCRAM
    config = tmp_path / "client.properties"
    config.write_text(sasl(f'{module} required username="alice" password="{JAAS_SECRET}";', mechanism))
    users = {"alice": JAAS_SECRET if login == "accepted" else "another-password"}
    with sasl_broker(users) as broker:
        code, output = run_cli(["capture", "--bootstrap-server", f"127.0.0.1:{broker.port}", "--group", "g",
                                "--protocol", "streams", "--command-config", str(config), "-o",
                                str(tmp_path / "out.json"), "--timeout", "5"], tmp_path)
    assert code == 2, output
    assert (f"SASL {mechanism} authentication as user 'alice' failed" in output) == (login == "refused"), output
    assert len(broker.tokens) == (1 if mechanism == "PLAIN" else 2), broker.tokens


RECORDING = next(iter(recording_dirs()), None)


@pytest.mark.skipif(RECORDING is None, reason="no recorded broker frames")
@pytest.mark.parametrize("damage", ["none", "garbage", "truncated"])
def test_a_capture_from_recorded_frames(damage: str, tmp_path: Path) -> None:
    """A whole capture (or one broken by damaged answers) with secrets in every unused setting: the group file
    and every message are free of them."""
    assert RECORDING is not None
    summary = json.loads((RECORDING / "summary.json").read_text())
    frames = load_frames(RECORDING / "frames.json")
    rng = random.Random(3)
    if damage != "none":
        frames = [Frame(f.api_key, f.api_version, f.request,
                        f.response[:4] + (bytes(rng.randrange(256) for _ in f.response[4:]) if damage == "garbage"
                                          else f.response[4:len(f.response) // 2]))
                  if f.api_key != 18 else f for f in frames]
    config = tmp_path / "client.properties"
    config.write_text(CONNECTING["plaintext with unused secrets"] + f"{PASTED}\n")
    out = tmp_path / "group.json"
    with serve_frames(frames) as server:
        code, output = run_cli(["capture", "--bootstrap-server", f"127.0.0.1:{server.port}", "--group",
                                summary["application_id"], "--command-config", str(config), "-o", str(out),
                                "--timeout", "5"], tmp_path)
    assert code == (0 if damage == "none" else 2), output
    assert out.exists() == (damage == "none")


# --- the service and the bridge ---------------------------------------------------------------------------------


def _post(url: str, token: str | None, body: bytes = b"{}") -> tuple[int, str]:
    request = urllib.request.Request(url + "/v1/assign", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@pytest.mark.parametrize("source", ["file", "environment"])
def test_the_service_never_shows_its_token(source: str, tmp_path: Path) -> None:
    token_file = tmp_path / "secret-token"
    token_file.write_text(TOKEN + "\n")
    audit = tmp_path / "audit.jsonl"
    args = ["--audit-log", str(audit), *(["--token-file", str(token_file)] if source == "file" else [])]
    previous = os.environ.get("TASKASSIGN_TOKEN")
    if source == "environment":
        os.environ["TASKASSIGN_TOKEN"] = TOKEN
    try:
        process, url = start_service(*args)
    finally:
        if previous is None:
            os.environ.pop("TASKASSIGN_TOKEN", None)
        else:
            os.environ["TASKASSIGN_TOKEN"] = previous
    try:
        answers = [_post(url, None), _post(url, WRONG_KEY_PASSWORD), _post(url, TOKEN, b"not json"),
                   _post(url, TOKEN, json.dumps({"application_id": PASTED}).encode())]
    finally:
        process.terminate()
        process.wait(timeout=10)
        assert process.stderr is not None
        stderr = process.stderr.read()
        stop_service(process)
    assert [a[0] for a in answers[:2]] == [401, 401]
    assert_no_secret("\n".join([stderr, *(a[1] for a in answers), files_text(tmp_path)]).replace(PASTED, ""))


def test_a_token_file_the_service_cannot_read(tmp_path: Path) -> None:
    token_file = tmp_path / "secret-token"
    token_file.write_bytes(TOKEN.encode() + b"\xff\xfe")
    code, output = run_cli(["serve", "--token-file", str(token_file), "--listen", "127.0.0.1:0"], tmp_path)
    assert code == 2 and str(token_file) in output, output


def test_bridge_properties_with_a_token_file(tmp_path: Path) -> None:
    token_file = tmp_path / "secret-token"
    token_file.write_text(TOKEN)
    code, output = run_cli(["bridge", "properties", "--url", "http://127.0.0.1:8787", "--token-file",
                            str(token_file)], tmp_path)
    assert code == 0 and f"taskassign.token.file={token_file}" in output, output
    for argv in (["--url", f"htp://user:{TOKEN}@host", "--token", TOKEN],
                 ["--url", f"http://user:{TOKEN}@127.0.0.1:1", "--token-file", str(token_file), "--timeout-ms", "0"],
                 ["--url", "http://127.0.0.1:1", "--token", TOKEN, "--token-file", str(token_file)],
                 ["--url", "http://127.0.0.1:1", "--token", TOKEN, "--protocol", "bogus"]):
        code, output = run_cli(["bridge", "properties", *argv], tmp_path)
        assert code == 2, output


def test_approve_never_shows_the_token(tmp_path: Path) -> None:
    token_file = tmp_path / "secret-token"
    token_file.write_text(TOKEN)
    plan = tmp_path / "p.plan.json"
    group = EXAMPLES_DIR / "groups" / "orders-app.group.json"
    assert run_cli(["plan", str(group), "-a", "high_availability", "-o", str(plan)], tmp_path)[0] == 0
    code, output = run_cli(["approve", str(plan), "--service", f"http://user:{TOKEN}@127.0.0.1:1", "--token-file",
                            str(token_file), "--timeout", "1"], tmp_path)
    assert code == 2 and "cannot reach" in output and "http://***@127.0.0.1:1" in output, output
    code, output = run_cli(["approve", str(plan), "--service", "http://127.0.0.1:1", "--token-file",
                            str(tmp_path / "missing-token"), "--timeout", "1"], tmp_path)
    assert code == 2 and "missing-token" in output, output
    process, url = start_service("--token-file", str(token_file))
    try:
        other = tmp_path / "secret-other"
        other.write_text(WRONG_KEY_PASSWORD)
        code, output = run_cli(["approve", str(plan), "--service", url, "--token-file", str(other)], tmp_path)
        assert code == 2 and "401" in output, output
    finally:
        stop_service(process)


def test_a_streams_config_names_keys_never_values() -> None:
    """The application's own properties (``--streams-config``) hold its client secrets too: the note on what was
    left out names keys, and a pasted secret (which reads as a key) not even that."""
    from taskassign.capture.streams_config import streams_config
    from taskassign.formats.properties import parse_properties

    text = (f"application.id=a\nnum.standby.replicas=1\n{sasl(f'{PLAIN} required password={JAAS_SECRET};')}"
            f"ssl.key.password={KEY_PASSWORD}\n{PASTED}\n")
    config = streams_config(parse_properties(text, source="app.properties"), application_id="a",
                            source="app.properties")
    shown = " ".join(config.notes) + repr(config)
    assert "sasl.jaas.config" in shown and "<a key that is no setting name, not shown>" in shown
    assert_no_secret(shown)
