"""A real llama.cpp server with a real small model (SmolLM2-135M-Instruct), started once per run.

Three servers, each started the first time a test asks for it:
  - `tools_server`: with tests/real_model/chatml_tools.jinja, a ChatML template that renders tools
    the Qwen / Hermes way (its /props say supports_tools: true): the model hears of the tools but
    never calls one;
  - `calling_server`: with tests/real_model/chatml_json_calls.jinja, which shows the model how to
    call (worked examples; its header says what it does and why): the model calls tools;
  - `own_server`: with the model's own template, which has no tools (this llama.cpp then drops
    the tools from the prompt without a word).
All: one slot (an abandoned request on a spare slot would keep generating and slow
the next), temperature 0 and at most N_PREDICT new tokens for a request that sends no max_tokens
(a request's own max_tokens wins: the app's runs on a server key send TOOL_WORKSHOP_KEY_MAX_TOKENS,
which the tests set small).

Threads: 2 (`-t 2`), or 1 when the machine is already busier than its cores ($LLAMA_THREADS
decides if set). Measured on a 2-core VM with a load average above 12: `-t 2` generated 0.4 to
0.8 tokens/s (both threads wait for each other at every step, and one of them is always
descheduled), `-t 1` 9 to 16 tokens/s.

The binary and the model come from $LLAMA_SERVER and $MODEL, or else `scripts/real_model.sh
--check` (which finds them in the cache and never builds). Missing: skipped with the reason,
except under CI=true, where it is a failure (scripts/test.sh builds them before this lane)."""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from tests.app.harness import browser, free_port, start_app  # noqa: F401  (browser: the page test's, per module)

ROOT = Path(__file__).resolve().parents[2]
TOOLS_TEMPLATE = Path(__file__).with_name("chatml_tools.jinja")
CALLS_TEMPLATE = Path(__file__).with_name("chatml_json_calls.jinja")
N_PREDICT = 32
START_SECONDS = 60


def locate() -> tuple[str, str] | str:
    """(llama_server, model) paths, or why there are none."""
    server, model = os.environ.get("LLAMA_SERVER", ""), os.environ.get("MODEL", "")
    if server or model:
        if not (server and os.access(server, os.X_OK)):
            return f"LLAMA_SERVER={server!r} is not an executable file"
        if not (model and os.path.isfile(model)):
            return f"MODEL={model!r} is not a file"
        return server, model
    found = subprocess.run(["bash", str(ROOT / "scripts" / "real_model.sh"), "--check"],
                           capture_output=True, text=True, timeout=60, check=False)
    lines = dict(line.split("=", 1) for line in found.stdout.splitlines() if "=" in line)
    if found.returncode == 0 and lines.get("LLAMA_SERVER") and lines.get("MODEL"):
        return lines["LLAMA_SERVER"], lines["MODEL"]
    return ("no llama-server or model: set LLAMA_SERVER and MODEL, or run `bash scripts/real_model.sh` "
            f"once (5 to 10 minutes on 2 cores) — {found.stderr.strip()}")


@pytest.fixture(scope="session")
def real_model_files() -> tuple[str, str]:
    found = locate()
    if isinstance(found, str):
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"real-model lane under CI: {found}")
        pytest.skip(found)
    return found


def threads() -> int:
    if os.environ.get("LLAMA_THREADS"):
        return int(os.environ["LLAMA_THREADS"])
    cores = os.cpu_count() or 1
    return min(2, cores) if os.getloadavg()[0] < cores else 1


def get_json(url: str, timeout: float = 5.0):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read())


def die_with_parent():
    """In the child before exec: the server gets SIGTERM when the test run goes (even when killed)."""
    import ctypes
    import signal

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG


class LlamaServer:
    """One llama-server process on a free loopback port."""

    def __init__(self, binary: str, model: str, template: Path | None, context: int = 4096, thread_count: int = 0):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log", delete=False)  # noqa: SIM115
        command = [binary, "-m", model, "--host", "127.0.0.1", "--port", str(self.port),
                   "-t", str(thread_count or threads()), "-np", "1", "-c", str(context), "--jinja", "--no-webui",
                   "--temp", "0", "-n", str(N_PREDICT)]
        if template is not None:
            command += ["--chat-template-file", str(template)]
        self.command = command
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        preexec_fn=die_with_parent)  # noqa: PLW1509  (one prctl)
        self.started_seconds = self._wait_healthy()

    def _wait_healthy(self) -> float:
        started = time.monotonic()
        while time.monotonic() - started < START_SECONDS:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama-server exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                if get_json(self.url + "/health", timeout=2).get("status") == "ok":
                    return time.monotonic() - started
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"llama-server not healthy after {START_SECONDS} s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(Path(self.log.name).read_text(errors="replace").splitlines()[-lines:])

    def props(self) -> dict:
        return get_json(self.url + "/props")

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        os.unlink(self.log.name)


@pytest.fixture(scope="session")
def tools_server(real_model_files):
    server = LlamaServer(*real_model_files, template=TOOLS_TEMPLATE)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def calling_server(real_model_files):
    server = LlamaServer(*real_model_files, template=CALLS_TEMPLATE)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def own_server(real_model_files):
    server = LlamaServer(*real_model_files, template=None)
    yield server
    server.stop()


# The app, and a named-API client of it, for a test module: configured by that module's `secrets`
# (which server its key and base URL point at).
@pytest.fixture(scope="module")
def app(secrets):
    demo, url = start_app(secrets)
    yield url
    demo.close()


@pytest.fixture(scope="module")
def client(app):
    from gradio_client import Client

    client = Client(app, verbose=False, download_files=False)
    yield client
    client.close()
