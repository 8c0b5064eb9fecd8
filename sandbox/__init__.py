"""Runs the tool source typed in the browser in hardened, single-use worker processes.

    extract_schemas(source, method="registry", strict=False, session_id=None)
        -> {"ok", "tools", "warnings", "error", "stdout", ...}
    list_hooks(source, session_id=None) -> {"ok", "hooks": [{"event", "name", "fail"}], "error", "stdout"}
    run_hook(source, index, event, name, payload, session_id=None)
        -> {"ok", "answer" (what the hook returned), "error", "stdout", "wall_ms"}
    run_tool(source, name, args, session_id=None)
        -> every ToolOutcome field (ok, content, error_code, duration_ms, arguments, problems,
           coercions, clipped_from) + stdout, stderr, wall_ms, worker_pid, error {code, message, line}
    status() -> {"mode", "layers", "public", "notice"}
    configure(settings=None, **changes) -> the settings replaced;  current_settings() -> those in force
    seal_secrets(names) -> dict
    start(wait=True), shutdown(), serving_publicly()
    session_usage(session_id, kind="tool"), forget_session(session_id), known_sessions()
    mcp_transport(source, session_id=None) -> an async context manager yielding (read_stream,
        write_stream) as mcp.client.stdio.stdio_client does, to an MCP server for the source
        (code/mcp_server.py's) in a hardened process; its .log() is the server's stderr

Behind this face: settings.py (what may be configured), admission.py (who may run a job
now), pool.py (the zygote and the warm workers), worker.py and hardening.py (the worker
program), cpu_share.py (the CPU a job may take: its clocks, demotion and duty cycle, for tools
and bash alike), messages.py (what a student is told), sealing.py (secrets out of the app's
environment), mcp_host.py and mcp_worker.py (MCP servers: the app side and the program),
service.py (the one object that ties them together).
"""
import atexit

# The course modules (tool_outcome, tool_registry...) are imported by bare name: the project's
# one path rule (import_paths.py) puts their folder first however the app was started.
from import_paths import use_project_paths

use_project_paths()

from .sealing import seal_secrets  # noqa: E402
from .admission import Refusal  # noqa: E402
from .service import Sandbox  # noqa: E402

__all__ = ["extract_schemas", "run_tool", "list_hooks", "run_hook", "status", "configure", "current_settings", "seal_secrets", "start",
           "shutdown", "serving_publicly", "session_usage", "forget_session", "known_sessions", "mcp_transport",
           "Refusal"]

_sandbox = Sandbox()


def extract_schemas(source, method="registry", strict=False, session_id=None):
    """Runs the module in a worker and returns its tools' schemas (or why it could not).
    `method` is "registry" or one registered with configure(schema_methods=...). With a
    `session_id` the run is charged to that session's budget like a tool run."""
    return _sandbox.extract_schemas(source, method, strict, session_id)


def run_tool(source, name, args, session_id=None):
    """Runs one tool of the module in a fresh worker; `content` is what the model is fed."""
    return _sandbox.run_tool(source, name, args, session_id)


def list_hooks(source, session_id=None):
    """The hooks a hooks source (code/hooks.py's Hooks) registers: {"ok", "hooks", "error", "stdout"}."""
    return _sandbox.list_hooks(source, session_id)


def run_hook(source, index, event, name, payload, session_id=None):
    """Runs one registered hook on `payload` in a fresh worker: {"ok", "answer", "error", "stdout", "wall_ms"}."""
    return _sandbox.run_hook(source, index, event, name, payload, session_id)


def status():
    """The sandbox's mode ("sandboxed", "unsandboxed" or "refused"), its layers and a Chinese notice."""
    return _sandbox.status()


def configure(settings=None, **changes):
    """Sets how the sandbox runs; call before serving. Keyword names are the fields of
    `sandbox.settings.Settings` (plus `wall_seconds`, the per-job time limit); `tool` and
    `shell` take a dict of their lane's `JobSettings` fields, e.g. `tool={"concurrent": 6}`; `settings`
    replaces them all (e.g. the value an earlier call returned). Returns the settings in
    force before the call. `public=True` (or a non-loopback `server_name`) makes the
    sandbox refuse to run code when seccomp cannot load."""
    return _sandbox.configure(settings, **changes)


def current_settings():
    """The settings in force (an immutable `Settings`)."""
    return _sandbox.settings()


def serving_publicly():
    return _sandbox.settings().serving_publicly()


def start(wait=True):
    """Starts the zygote and fills the pool (optional; the first job does it otherwise)."""
    _sandbox.start(wait)


def shutdown():
    """Stops the zygote and the ready workers and removes the runtime directories."""
    _sandbox.shutdown()


def session_usage(session_id, kind="tool"):
    """What the sandbox currently remembers about a session's "tool" runs, "shell" commands or
    "mcp" servers (for tests and the status line)."""
    return {"shell": _sandbox.shell_gate, "mcp": _sandbox.mcp.gate}.get(kind, _sandbox.gate).usage(session_id)


def forget_session(session_id):
    """Called when the app lets a session go: its MCP servers end now; a running job keeps
    its ledger until it ends."""
    _sandbox.mcp.forget(session_id)
    _sandbox.gate.forget(session_id)
    _sandbox.shell_gate.forget(session_id)


def known_sessions():
    return _sandbox.gate.known() + _sandbox.shell_gate.known() + _sandbox.mcp.gate.known()


def mcp_transport(source, session_id=None):
    """An MCP server for `source`, in a hardened process of its own: `async with
    mcp_transport(source) as (read_stream, write_stream)` gives what `stdio_client` gives
    (hand them to `ClientSession`); leaving the block kills the server and all it started.
    The object's `.log()` is the server's stderr (bounded) and, when the sandbox ended the
    server (time, CPU, output, its session), why; `.ended` names that reason. Entering raises
    `Refusal` (its `message` in Chinese) when the session or the class is over its limits
    (rules in `Settings.mcp`) or no server can start. Charged to `session_id` like a tool run
    (`session_usage(session_id, kind="mcp")`); `forget_session` ends its servers."""
    return _sandbox.mcp.transport(source, session_id)


atexit.register(shutdown)
