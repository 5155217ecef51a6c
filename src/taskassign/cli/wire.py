"""``taskassign decode`` / ``taskassign encode``: Kafka's rebalance wire messages as JSON and back."""

from __future__ import annotations

import base64
import re
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from taskassign.cli._app import app
from taskassign.cli._common import handle_errors, stderr_console, stdout_console
from taskassign.cli._options import Force, out_option
from taskassign.errors import DecodeError, UserInputError

if TYPE_CHECKING:
    pass


class Kind(StrEnum):
    subscription = "subscription"
    assignment = "assignment"
    subscription_info = "subscription-info"
    assignment_info = "assignment-info"


class Output(StrEnum):
    hex = "hex"
    base64 = "base64"
    binary = "binary"


_TEXT = re.compile(rb"^[\s0-9a-fA-FxX:|,_]*$")


def read_bytes_argument(data: str) -> tuple[bytes, str]:
    """``HEX``, ``base64:TEXT``, ``@FILE`` (raw bytes, or hex / base64 text) or ``-`` (stdin text);
    returns the bytes and a name for error messages."""
    from taskassign.formats.json_io import read_input_bytes, read_input_text
    from taskassign.formats.wire_documents import bytes_from_text

    if data == "-":
        return bytes_from_text(read_input_text("-", what="message text"), "stdin"), "stdin"
    if not data.startswith("@"):
        return bytes_from_text(data, "argument"), "argument"
    path = Path(data[1:])
    raw = read_input_bytes(path, what="message file")
    if raw.strip() and _TEXT.match(raw):
        return bytes_from_text(raw.decode("ascii"), str(path)), str(path)
    if raw.strip().startswith(b"base64:"):
        return bytes_from_text(raw.decode("ascii", "replace"), str(path)), str(path)
    return raw, str(path)


@app.command()
@handle_errors
def decode(
    kind: Kind = typer.Argument(..., help="subscription / assignment (consumer-protocol envelope with the Streams "
                                          "message inside), or subscription-info / assignment-info (userData only)."),
    data: str = typer.Argument(..., help="Hex, base64:TEXT, @FILE (raw bytes, or hex/base64 text) or - (stdin)."),
    raw_user_data: bool = typer.Option(False, "--raw-user-data", help="Keep userData as hex instead of decoding it."),
    output: Annotated[Path | None, out_option("Write the JSON here instead of stdout.")] = None,
    force: Force = False,
) -> None:
    """Decode a Kafka Streams rebalance message and print it as JSON (taskassign encode reverses it)."""
    from rich.markup import escape

    from taskassign.formats.json_io import to_json_text, write_output_text
    from taskassign.formats.output_paths import OutputGuard
    from taskassign.formats.wire_documents import WIRE_FORMAT, decode_message, message_to_json

    if output is not None:
        OutputGuard.of(force, data[1:] if data.startswith("@") else None).file(output)
    payload, where = read_bytes_argument(data)
    try:
        message, size = decode_message(kind.value, payload)
        document = {"format": WIRE_FORMAT, **message_to_json(message, raw_user_data=raw_user_data)}
    except DecodeError as exc:
        raise exc.located(where) from None
    if size < len(payload):
        stderr_console().print(f"[yellow]note:[/] the message ends at byte {size}; the {len(payload) - size} "
                               "bytes after it were not read (Kafka ignores trailing bytes too)")
    text = to_json_text(document)
    if output is not None:
        write_output_text(text, output)
        stderr_console().print(f"[dim]wrote {escape(str(output))}[/]")
    else:
        stdout_console().out(text, end="")


@app.command()
@handle_errors
def encode(
    document: str = typer.Argument(..., help="A JSON file as printed by `taskassign decode`, or - for stdin."),
    output_format: Output = typer.Option(Output.hex, "--as", help="hex, base64, or binary (needs -o)."),
    output: Annotated[Path | None, out_option("Write the bytes here instead of stdout.")] = None,
    force: Force = False,
) -> None:
    """Encode a message from its JSON form (as taskassign decode prints it) into Kafka's bytes."""
    from rich.markup import escape

    from taskassign.formats.json_io import (
        load_json_text,
        read_input_text,
        source_name,
        write_output_bytes,
        write_output_text,
    )
    from taskassign.formats.output_paths import OutputGuard
    from taskassign.formats.wire_documents import message_from_json

    if output is not None:
        OutputGuard.of(force, document).file(output)
    text, source = read_input_text(document, what="wire JSON document"), source_name(document)
    message = message_from_json(load_json_text(text, source), source=source)
    data = message.encode()
    if output_format is Output.binary:
        if output is None:
            raise UserInputError("--as binary needs --output FILE (binary bytes are not printed to a terminal)")
        write_output_bytes(data, output)
        stderr_console().print(f"[dim]wrote {len(data)} bytes to {escape(str(output))}[/]")
        return
    rendered = data.hex() if output_format is Output.hex else base64.b64encode(data).decode("ascii")
    if output is not None:
        write_output_text(rendered + "\n", output, encoding="ascii")
        stderr_console().print(f"[dim]wrote {len(data)} bytes as {output_format.value} to {escape(str(output))}[/]")
    else:
        stdout_console().out(rendered)
