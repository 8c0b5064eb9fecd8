"""The models tests share one local OpenAI-compatible server (the project's own), reset before each test."""
import pytest

from llm_clients import make_client
from offline.server import OfflineServer

PATHS = {"openai": "/v1", "glm": "/api/paas/v4"}


@pytest.fixture(scope="session")
def running_server():
    server = OfflineServer(slow_seconds=1.0).start()
    yield server
    server.stop()


@pytest.fixture
def server(running_server):
    running_server.reset()
    return running_server


@pytest.fixture
def connect(server):
    """connect("openai" | "glm", accent=None, quirks=(), **options) -> a real SDK client talking HTTP to the
    local server; accent / quirks pick the server's accent for this client's requests only (an address prefix)."""
    def make(provider, accent=None, quirks=(), **options):
        options.setdefault("api_key", "test-key-not-secret")
        options.setdefault("model", "offline-rule-model")
        prefix = f"/accent/{accent}" if accent else (f"/quirks/{','.join(quirks)}" if quirks else "")
        return make_client(provider, base_url=server.url + prefix + PATHS[provider], **options)
    return make
