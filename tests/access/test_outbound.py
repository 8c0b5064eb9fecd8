"""The outbound address guard, through the one place a client is made
(access.clients.make_client) with the real SDKs, aimed only at loopback."""
from __future__ import annotations

import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from access import outbound
from access.clients import Settings, make_client
from llm_clients import make_client as make_sdk_client

from tests.access.listener import spellings

QUESTION = [{"role": "user", "content": "北京今天天气怎么样？"}]


def typed(url: str, provider: str = "openai") -> Settings:
    return Settings(provider=provider, model="offline-rule-model", base_url=url)


@pytest.mark.parametrize("provider", ["openai", "glm"])
def test_every_spelling_of_this_machine_is_refused_before_connecting(public, listener, provider):
    for url in spellings(listener.port, listener.ipv6):
        with pytest.raises(outbound.RefusedURL, match="公开部署的服务器不会连接内部地址"):
            make_client(typed(url, provider), "student-key-not-secret", {})
    assert listener.connections == []


def test_without_the_guard_the_same_spellings_do_reach_the_listener(on_loopback, listener):
    # The control for the test above: the listener does see a client that is let through.
    reachable = [u for u in spellings(listener.port, listener.ipv6)
                 if "0177." not in u and "https" not in u]     # httpx itself rejects the octal form
    for url in reachable:
        before = len(listener.connections)
        client = make_client(typed(url), "student-key-not-secret", {})
        with pytest.raises(Exception):
            client.complete(QUESTION)
        assert len(listener.connections) > before, url


@pytest.mark.parametrize("address", ["10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.64.0.1",
                                     "127.0.0.2", "0.0.0.0", "224.0.0.1", "240.0.0.1", "255.255.255.255",
                                     "::1", "::", "fe80::1", "fd00::1", "ff02::1", "::ffff:10.0.0.1",
                                     "64:ff9b::a00:1", "2002:a00:1::1", "198.18.0.1", "192.0.2.1"])
def test_non_global_addresses_are_not_public(address):
    assert not outbound.is_public(address)


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_global_addresses_are_public(address):
    assert outbound.is_public(address)


def test_a_name_resolving_to_any_private_address_is_refused():
    # Resolution is the system resolver in the app; here one name answers with a public and a private address.
    def resolver(host, port):
        return ["93.184.215.14", "10.1.2.3"]

    with pytest.raises(outbound.RefusedURL, match="10.1.2.3"):
        outbound.vet("https://models.example.test/v1", resolver)
    assert outbound.vet("https://models.example.test/v1", lambda h, p: ["93.184.215.14"]).address == "93.184.215.14"


@pytest.mark.parametrize("url, reason", [("ftp://example.com/v1", "http:// 或 https://"),
                                         ("file:///etc/passwd", "http:// 或 https://"),
                                         ("example.com/v1", "http:// 或 https://"),
                                         ("http:///v1", "没有主机名"),
                                         ("http://example.com:99999/v1", "格式不对"),
                                         ("http://no-such-host.invalid/v1", "无法解析")])
def test_only_http_urls_with_a_resolvable_host(public, url, reason):
    with pytest.raises(outbound.RefusedURL, match=reason):
        make_client(typed(url), "student-key-not-secret", {})


def test_on_loopback_a_local_server_is_reachable(on_loopback, model_server):
    model_server.reset()
    client = make_client(typed(model_server.url + "/v1"), "student-key-not-secret", {})
    assert client.complete(QUESTION).text
    assert len(model_server.requests) == 1


def test_the_instructor_can_allow_private_addresses(public, monkeypatch, model_server):
    model_server.reset()
    monkeypatch.setenv(outbound.ALLOW_ENV, "1")
    client = make_client(typed(model_server.url.replace("127.0.0.1", "localhost") + "/api/paas/v4", "glm"),
                         "student-key-not-secret", {})
    assert client.complete(QUESTION).text
    assert len(model_server.requests) == 1


def test_a_base_url_configured_on_the_server_is_trusted(public, model_server):
    model_server.reset()
    secrets = {"OPENAI_API_KEY": "server-key-not-secret", "OPENAI_BASE_URL": model_server.url + "/v1"}
    assert make_client(typed(""), "", secrets).complete(QUESTION).text
    # The student's own key towards the operator's address, typed or not, is trusted too.
    assert make_client(typed(model_server.url + "/v1/"), "student-key", secrets).complete(QUESTION).text
    assert len(model_server.requests) == 2


# ------------------------------------------------------------------ the pinned connection

class Recorder(BaseHTTPRequestHandler):
    seen: list = []
    redirect_to: str | None = None

    def do_GET(self):  # noqa: N802
        type(self).seen.append(self.headers.get("Host"))
        if type(self).redirect_to:
            self.send_response(302)
            self.send_header("Location", type(self).redirect_to)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = b'{"ok": true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def recorder():
    handler = type("Handler", (Recorder,), {"seen": [], "redirect_to": None})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield handler, httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def test_the_connection_goes_to_the_vetted_address_and_keeps_the_name(recorder):
    handler, port = recorder
    # A name that does not resolve at all: the pinned client never looks it up again.
    vetted = outbound.Vetted("http", "models.example.invalid", port, "127.0.0.1")
    with outbound.pinned_client(vetted, 5.0) as client:
        response = client.get(f"http://models.example.invalid:{port}/v1/models")
    assert response.json() == {"ok": True}
    assert handler.seen == [f"models.example.invalid:{port}"]


def test_the_pinned_client_refuses_other_hosts_and_does_not_follow_redirects(recorder, listener):
    handler, port = recorder
    handler.redirect_to = f"http://127.0.0.1:{listener.port}/v1/models"
    vetted = outbound.Vetted("http", "models.example.invalid", port, "127.0.0.1")
    with outbound.pinned_client(vetted, 5.0) as client:
        response = client.get(f"http://models.example.invalid:{port}/v1/models")
        assert response.status_code == 302 and len(handler.seen) == 1
        with pytest.raises(outbound.RefusedURL, match="只允许连接已检查过的"):
            client.get(f"http://127.0.0.1:{listener.port}/v1/models")
        with pytest.raises(outbound.RefusedURL):
            client.get(f"http://models.example.invalid:{listener.port}/v1/models")
        with pytest.raises(outbound.RefusedURL):
            client.get(f"http://models.example.invalid:{port}/v1/models", follow_redirects=True)
    assert listener.connections == []


def test_the_pinned_client_ignores_proxy_settings(recorder, monkeypatch):
    handler, port = recorder
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")   # nothing listens there
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    vetted = outbound.Vetted("http", "models.example.invalid", port, "127.0.0.1")
    with outbound.pinned_client(vetted, 5.0) as client:
        assert client.get(f"http://models.example.invalid:{port}/x").status_code == 200


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    """An HTTPS server on loopback with a certificate for models.example.test only,
    recording the name each client asked for (SNI)."""
    folder = tmp_path_factory.mktemp("tls")
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=models.example.test",
                    "-addext", "subjectAltName=DNS:models.example.test"], check=True, capture_output=True)
    handler = type("Handler", (Recorder,), {"seen": [], "redirect_to": None})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    names = []
    context.sni_callback = lambda sock, name, ctx: names.append(name)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield handler, httpd.server_address[1], names, ssl.create_default_context(cafile=str(cert))
    httpd.shutdown()
    httpd.server_close()


def test_tls_keeps_the_name_for_sni_and_certificate_checks(tls_server):
    handler, port, names, trust = tls_server
    vetted = outbound.Vetted("https", "models.example.test", port, "127.0.0.1")
    with outbound.pinned_client(vetted, 5.0, verify=trust) as client:
        assert client.get(f"https://models.example.test:{port}/v1/models").json() == {"ok": True}
    assert names[-1] == "models.example.test" and handler.seen[-1] == f"models.example.test:{port}"
    # The same address under another name: the certificate does not match, the request is not sent.
    other = outbound.Vetted("https", "other.example.test", port, "127.0.0.1")
    with outbound.pinned_client(other, 5.0, verify=trust) as client:
        with pytest.raises(httpx.ConnectError, match="certificate|hostname"):
            client.get(f"https://other.example.test:{port}/v1/models")
    assert names[-1] == "other.example.test" and len(handler.seen) == 1


@pytest.mark.parametrize("provider, path", [("openai", "/v1"), ("glm", "/api/paas/v4")])
def test_both_sdks_send_through_the_pinned_client(model_server, provider, path):
    # The name never resolves: every byte went through the pinned transport to the vetted address.
    model_server.reset()
    vetted = outbound.Vetted("http", "models.example.invalid", model_server.port, "127.0.0.1")
    client = make_sdk_client(provider, model="offline-rule-model", api_key="student-key-not-secret",
                             base_url=f"http://models.example.invalid:{model_server.port}{path}",
                             http_client=outbound.pinned_client(vetted, 10.0))
    assert client.complete(QUESTION).text
    assert [r["path"] for r in model_server.requests] == [path + "/chat/completions"]
