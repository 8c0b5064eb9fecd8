"""Shared fixtures for the access tests: a recording loopback listener, the project's own
OpenAI-compatible server, and the app's "serving publicly" decision switched on the way
a Space does it (SPACE_ID in the environment)."""
import pytest

from offline.server import OfflineServer

from tests.access.listener import Listener


@pytest.fixture
def listener():
    opened = Listener()
    yield opened
    opened.close()


@pytest.fixture
def public(monkeypatch):
    import sandbox

    monkeypatch.setenv("SPACE_ID", "teacher/tool-workshop")
    monkeypatch.delenv("TOOL_WORKSHOP_ALLOW_PRIVATE_URLS", raising=False)
    assert sandbox.serving_publicly()


@pytest.fixture
def on_loopback(monkeypatch):
    import sandbox

    monkeypatch.delenv("SPACE_ID", raising=False)
    monkeypatch.delenv("MODELSCOPE_ENVIRONMENT", raising=False)
    monkeypatch.delenv("TOOL_WORKSHOP_ALLOW_PRIVATE_URLS", raising=False)
    assert not sandbox.serving_publicly()


@pytest.fixture(scope="module")
def model_server():
    server = OfflineServer(slow_seconds=1.0).start()
    yield server
    server.stop()
