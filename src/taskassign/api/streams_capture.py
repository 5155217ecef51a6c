"""The engine side of ``taskassign capture`` for streams groups (KIP-1071): which protocol a group speaks,
and one streams group into a streams-group file's document. The classic side is ``api.capture``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from taskassign.capture.security import read_client_settings
from taskassign.capture.streams_client import StreamsClient
from taskassign.capture.streams_group_capture import CapturedStreamsGroup, capture_streams_group
from taskassign.capture.streams_sasl import STREAMS_SASL_MECHANISMS
from taskassign.errors import CaptureError, UserInputError
from taskassign.fleet.snapshot_dir import STREAMS_GROUPS_DIR
from taskassign.formats.json_io import dump_json
from taskassign.formats.output_paths import OutputGuard

__all__ = ("PROTOCOLS", "STREAMS_GROUPS_DIR", "capture_streams_application", "capture_streams_groups",
           "write_streams_group_file")

#: ``--protocol``: find out (a streams group when ListGroups lists it as one), or say which.
PROTOCOLS = ("auto", "classic", "streams")


def _settings(command_config_file: Path | None) -> dict[str, Any]:
    return dict(read_client_settings(command_config_file).kwargs) if command_config_file is not None else {}


def _streams_speaks(settings: dict[str, Any]) -> bool:
    """Whether the streams client speaks this connection: any listener but SASL with GSSAPI or OAUTHBEARER
    (which only the classic capture speaks)."""
    if not str(settings.get("security_protocol", "PLAINTEXT")).upper().startswith("SASL"):
        return True
    return settings.get("sasl_mechanism") in STREAMS_SASL_MECHANISMS


def capture_streams_application(
    bootstrap: str,
    group: str,
    *,
    protocol: str = "auto",
    command_config_file: Path | None = None,
    timeout: float,
    now_ms: Callable[[], int],
) -> CapturedStreamsGroup | None:
    """Capture ``group`` as a streams group; None when ``protocol`` is ``auto`` and it is not one (the
    classic capture takes it then: a broker without the streams protocol, a group ListGroups does not list
    as ``streams``, or SASL with GSSAPI or OAUTHBEARER, which only the classic capture speaks)."""
    if protocol not in PROTOCOLS:
        raise UserInputError(f"--protocol {protocol!r}: expected one of {', '.join(PROTOCOLS)}")
    if protocol == "classic":
        return None
    settings = _settings(command_config_file)
    if protocol == "auto" and not _streams_speaks(settings):
        return None
    with StreamsClient(bootstrap, timeout=timeout, settings=settings) as client:
        if protocol == "auto":
            try:
                client.streams_describe_version()
            except CaptureError:
                return None
            if group not in {g.group_id for g in client.list_groups(("streams",))}:
                return None
        return capture_streams_group(client, group, captured_at_ms=now_ms())


def write_streams_group_file(document: dict[str, Any], path: Path, guard: OutputGuard | None = None) -> None:
    """Write a captured streams-group file where ``guard`` allows it (formats.output_paths: never over a file taskassign
    did not write, unless --force; never over an input; never a directory)."""
    (guard or OutputGuard()).file(path)
    dump_json(document, path)


def capture_streams_groups(
    bootstrap: str,
    out_dir: Path,
    *,
    command_config_file: Path | None = None,
    timeout: float,
    now_ms: Callable[[], int],
    progress: Callable[[str], None] = lambda _: None,
) -> tuple[list[tuple[str, Path]], list[tuple[str, str]]]:
    """``--all-groups``' streams side: every group ListGroups lists as ``streams`` (TypesFilter) captured into
    ``<out_dir>/streams-groups/<group>.streams-group.json``; (written, skipped with the reason). Nothing when the
    broker has no streams protocol or the connection is SASL with GSSAPI or OAUTHBEARER (which only the classic
    capture speaks)."""
    settings = _settings(command_config_file)
    if not _streams_speaks(settings):
        return [], []
    written: list[tuple[str, Path]] = []
    skipped: list[tuple[str, str]] = []
    with StreamsClient(bootstrap, timeout=timeout, settings=settings) as client:
        try:
            client.streams_describe_version()
        except CaptureError:
            return [], []
        groups = [g.group_id for g in client.list_groups(("streams",))]
    for group in groups:
        progress(group)
        try:
            with StreamsClient(bootstrap, timeout=timeout, settings=settings) as client:
                captured = capture_streams_group(client, group, captured_at_ms=now_ms())
        except CaptureError as exc:
            skipped.append((group, str(exc)))
            continue
        path = out_dir / STREAMS_GROUPS_DIR / f"{group}.streams-group.json"
        dump_json(captured.document, path)
        written.append((group, path))
    return written, skipped
