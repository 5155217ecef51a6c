"""``taskassign serve``: the service the bridge's Java assignors ask at every rebalance (docs/bridge.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from taskassign.cli._app import app
from taskassign.cli._common import handle_errors, stderr_console, use_plugin_limits
from taskassign.cli._options import Force, PluginMemory, PluginTimeout

if TYPE_CHECKING:
    pass


@app.command()
@handle_errors
def serve(
    listen: str | None = typer.Option(None, "--listen", help="HOST:PORT (default 127.0.0.1:8787; port 0 picks "
                                      "one). A non-loopback address needs --allow-remote."),
    assignor: str | None = typer.Option(None, "--assignor", "-a", help="The assignor for every application "
                                        "(any `assign -a` takes; default: the config file's, else the default)."),
    config: Path | None = typer.Option(None, "--config", help="The service's JSON config: per application id its "
                                       "assignor and configs, listen, token_file, state_dir, deadline_ms, ..."),
    allow_remote: bool = typer.Option(False, "--allow-remote", help="Listen on a non-loopback address."),
    token_file: Path | None = typer.Option(None, "--token-file", help="Require this bearer token (a file; or set "
                                           "TASKASSIGN_TOKEN). Never logged."),
    state_dir: Path | None = typer.Option(None, "--state-dir", help="Where approved plans and (by default) the "
                                          "audit log are kept."),
    audit_log: Path | None = typer.Option(None, "--audit-log", help="The audit log (JSON lines); default "
                                          "STATE_DIR/audit.jsonl."),
    deadline_ms: int | None = typer.Option(None, "--deadline-ms", min=1, max=600_000,
                                           help="The most one decision may take before an error is answered "
                                                "(default 400; keep it under taskassign.timeout.ms)."),
    force: Force = False,
    plugin_timeout: PluginTimeout = 60.0,
    plugin_memory: PluginMemory = 2048,
) -> None:
    """Answer the bridge's rebalances: the application's assignor on its ApplicationState, or its approved plan."""
    use_plugin_limits(plugin_timeout, plugin_memory)
    from rich.markup import escape

    from taskassign.bridge.service import make_server, read_service_config

    cfg = read_service_config(config, listen=listen, assignor=assignor, allow_remote=allow_remote,
                              token_file=token_file, state_dir=state_dir, audit_log=audit_log,
                              deadline_ms=deadline_ms)
    if cfg.audit_log is not None:  # appended to: an existing log must be taskassign's (formats.output_paths)
        from taskassign.formats.output_paths import OutputGuard

        OutputGuard.of(force, config, token_file).file(cfg.audit_log)
    server = make_server(cfg)
    host, port = server.server_address[:2]
    err = stderr_console()
    err.print(f"taskassign serve: listening on http://{escape(str(host))}:{port} (assignor "
              f"{escape(cfg.default.assignor)}, {len(cfg.applications)} configured applications, deadline "
              f"{cfg.deadline_ms} ms, token {'required' if cfg.token else 'off'}, audit log "
              f"{escape(str(cfg.audit_log)) if cfg.audit_log else 'off'})")
    import signal
    import threading

    def stop(signum: int, frame: object) -> None:  # SIGTERM: finish the request under way, then exit 0
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
