"""Outbound address guard for base URLs typed in the page.

On a public server a typed base URL must not make the server send requests to
loopback, the private network, link-local addresses (cloud metadata) or any other
non-global address, however the address is spelled (`2130706433`, `0x7f.0.0.1`,
`0177.0.0.1`, `127.1`, `[::ffff:127.0.0.1]`, `localhost`, a name that resolves there).
The name is resolved once, every address it resolves to is checked, and the
connection then goes to the checked address (no second lookup, so no DNS rebinding
between the check and the connection); the Host header and TLS SNI/certificate
check keep the name. Redirects are not followed, and a request for any other host
is refused before connecting.

Served on loopback (a student's own machine) nothing is checked, so a local Ollama or
vLLM works; `TOOL_WORKSHOP_ALLOW_PRIVATE_URLS=1` switches the guard off on purpose.
"""
from __future__ import annotations

import ipaddress
import os
import socket
import ssl
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit

import httpx

import sandbox

ALLOW_ENV = "TOOL_WORKSHOP_ALLOW_PRIVATE_URLS"
SCHEMES = {"http": 80, "https": 443}
NAT64 = ipaddress.ip_network("64:ff9b::/96")
Resolver = Callable[[str, int], list[str]]


class RefusedURL(ValueError):
    """A typed base URL the server will not connect to; str() is the Chinese reason."""


@dataclass(frozen=True)
class Vetted:
    scheme: str
    host: str       # the name as typed (lower case), kept for Host and TLS
    port: int
    address: str    # the checked address the connection goes to


def guard_applies(environ=os.environ) -> bool:
    return sandbox.serving_publicly() and environ.get(ALLOW_ENV, "").strip() != "1"


def resolve(host: str, port: int) -> list[str]:
    """Every address the system resolver gives for host (accepts every IPv4 spelling
    inet_aton does: decimal, hex, octal, short forms)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(info[4][0] for info in infos))


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped:
        return address.ipv4_mapped
    if address.sixtofour:
        return address.sixtofour
    if address.teredo:
        return address.teredo[1]
    if address in NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def is_public(text: str) -> bool:
    """True only for a global unicast address (IPv6 forms that carry an IPv4 address
    are judged by that address)."""
    address = ipaddress.ip_address(text.split("%", 1)[0])
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped:       # ::ffff:a.b.c.d is a.b.c.d
            return is_public(str(address.ipv4_mapped))
        inner = embedded_ipv4(address)
        if inner is not None and not is_public(str(inner)):
            return False
    return address.is_global and not (address.is_multicast or address.is_reserved or address.is_private
                                       or address.is_loopback or address.is_link_local
                                       or address.is_unspecified)


def vet(url: str, resolver: Resolver = resolve) -> Vetted:
    """Checks a typed base URL before any connection; raises RefusedURL."""
    try:
        parts = urlsplit((url or "").strip())
        port = parts.port
    except ValueError:
        raise RefusedURL(f"Base URL 格式不对：{url!r}。示例：https://api.openai.com/v1") from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise RefusedURL(f"Base URL 只能以 http:// 或 https:// 开头，收到 {parts.scheme or '（没有协议）'}。")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise RefusedURL(f"Base URL 里没有主机名：{url!r}。示例：https://api.openai.com/v1")
    port = port or SCHEMES[scheme]
    try:
        addresses = resolver(host, port)
    except (OSError, UnicodeError):
        raise RefusedURL(f"无法解析 Base URL 的主机名 {host}：请检查地址是否写对。") from None
    if not addresses:
        raise RefusedURL(f"无法解析 Base URL 的主机名 {host}：请检查地址是否写对。")
    blocked = [a for a in addresses if not is_public(a)]
    if blocked:
        where = blocked[0] if host.strip("[]") == blocked[0] else f"{host} 指向 {blocked[0]}"
        raise RefusedURL(
            f"公开部署的服务器不会连接内部地址：{where}（本机、内网、链路本地或保留地址）。"
            "请填写模型服务的公网地址；要连本地的 Ollama / vLLM，请在自己的电脑上运行本应用。")
    return Vetted(scheme, host.lower(), port, addresses[0])


class PinnedTransport(httpx.HTTPTransport):
    """Connects only to the vetted address, for the vetted scheme, host and port."""

    def __init__(self, vetted: Vetted, **options):
        super().__init__(**options)
        self.vetted = vetted

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        port = url.port or SCHEMES.get(url.scheme, 0)
        if (url.scheme, url.host.rstrip("."), port) != (self.vetted.scheme, self.vetted.host, self.vetted.port):
            raise RefusedURL(f"拒绝连接 {url.scheme}://{url.host}:{port}：只允许连接已检查过的 Base URL 主机。")
        # The Host header was set from the name when the request was built; TLS gets the
        # name too, so the certificate is checked against the name, not the address.
        request.url = url.copy_with(host=self.vetted.address)
        if url.scheme == "https":
            request.extensions = {**request.extensions, "sni_hostname": self.vetted.host}
        return super().handle_request(request)


def pinned_client(vetted: Vetted, timeout: float, verify: ssl.SSLContext | bool = True) -> httpx.Client:
    """An httpx client for the openai / zhipuai SDKs (`http_client=`): no environment
    proxies, no redirects, connections only to the vetted address. `verify` is for
    tests with their own certificate authority."""
    return httpx.Client(transport=PinnedTransport(vetted, verify=verify), follow_redirects=False, timeout=timeout)


def client_for_typed_url(url: str, timeout: float) -> httpx.Client | None:
    """None when the guard does not apply (loopback serving or allowed on purpose);
    otherwise a pinned client, or RefusedURL before any connection."""
    if not guard_applies():
        return None
    return pinned_client(vet(url), timeout)
