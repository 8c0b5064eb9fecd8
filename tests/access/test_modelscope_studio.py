"""A ModelScope 创空间 (MODELSCOPE_ENVIRONMENT=studio) is served publicly exactly like a Hugging
Face Space, and its ms_deploy.json installs the Gradio that requirements.txt pins."""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def pinned_gradio() -> str:
    pins = [re.match(r"gradio==([\w.]+)\s*$", line.strip()) for line in (ROOT / "requirements.txt").read_text().splitlines()]
    found = [m.group(1) for m in pins if m]
    assert len(found) == 1, "requirements.txt must pin gradio exactly once (gradio==X.Y.Z)"
    return found[0]


def test_ms_deploy_installs_the_pinned_gradio():
    deploy = json.loads((ROOT / "ms_deploy.json").read_text(encoding="utf-8"))
    assert deploy["sdk_type"] == "gradio"
    assert deploy["sdk_version"] == pinned_gradio()
    assert deploy["resource_configuration"] == "platform/2v-cpu-16g-mem"
    env = {item["name"]: item["value"] for item in deploy["environment_variables"]}
    assert env["GRADIO_ANALYTICS_ENABLED"] == "False"
    # Secrets are set in the 创空间's settings, never in this file.
    assert not any("KEY" in name or "CODE" in name for name in env)


@pytest.fixture
def plain(monkeypatch):
    for name in ("SPACE_ID", "MODELSCOPE_ENVIRONMENT", "GRADIO_SERVER_NAME"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_a_studio_serves_publicly(plain):
    from sandbox.settings import Settings

    assert Settings(server_name="127.0.0.1").serving_publicly() is False
    plain.setenv("MODELSCOPE_ENVIRONMENT", "development")   # only "studio" is the hosted 创空间
    assert Settings(server_name="127.0.0.1").serving_publicly() is False
    plain.setenv("MODELSCOPE_ENVIRONMENT", "studio")
    assert Settings(server_name="127.0.0.1").serving_publicly() is True
    assert Settings(server_name="127.0.0.1", public=False).serving_publicly() is False


def test_a_studio_binds_every_address(plain):
    import app

    assert app.default_host({}) == "127.0.0.1"
    assert app.default_host({"MODELSCOPE_ENVIRONMENT": "studio"}) == "0.0.0.0"
    assert app.default_host({"SPACE_ID": "teacher/tool-workshop"}) == "0.0.0.0"


def test_a_studio_trusts_only_its_proxy_entry(plain):
    import gradio as gr
    from starlette.requests import Request

    from access.server_keys import client_address

    request = gr.Request(request=Request({"type": "http", "headers": [(b"x-forwarded-for", b"6.6.6.6, 203.0.113.9")],
                                          "client": ("10.16.3.80", 50000)}), session_hash="tab")
    assert client_address(request) == "10.16.3.80"
    plain.setenv("MODELSCOPE_ENVIRONMENT", "studio")
    assert client_address(request) == "203.0.113.9"
