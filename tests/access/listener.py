"""A plain TCP listener on loopback (IPv4, and IPv6 on the same port when the machine
has it) that records every connection made to it, for checking that a refused base URL
never reached the network."""
from __future__ import annotations

import socket
import threading


class Listener:
    def __init__(self):
        self.connections: list[tuple] = []
        self.sockets = []
        first = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        first.bind(("127.0.0.1", 0))
        self.port = first.getsockname()[1]
        self.sockets.append(first)
        try:
            six = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
            six.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            six.bind(("::1", self.port))
            self.sockets.append(six)
        except OSError:
            pass
        self.ipv6 = len(self.sockets) == 2
        self._stop = threading.Event()
        self._threads = []
        for sock in self.sockets:
            sock.listen(16)
            sock.settimeout(0.1)
            thread = threading.Thread(target=self._accept, args=(sock,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _accept(self, sock):
        while not self._stop.is_set():
            try:
                conn, peer = sock.accept()
            except (TimeoutError, socket.timeout):
                continue
            except OSError:
                return
            self.connections.append(peer)
            conn.close()

    def close(self):
        self._stop.set()
        for thread in self._threads:
            thread.join()
        for sock in self.sockets:
            sock.close()


# Every spelling of "this machine" a typed base URL might use.
def spellings(port: int, ipv6: bool = True) -> list[str]:
    urls = [f"http://127.0.0.1:{port}/v1", f"http://2130706433:{port}/v1", f"http://0x7f000001:{port}/v1",
            f"http://0x7f.0.0.1:{port}/v1", f"http://0177.0.0.1:{port}/v1", f"http://127.1:{port}/v1",
            f"http://[::ffff:127.0.0.1]:{port}/v1", f"http://localhost:{port}/v1", f"http://0.0.0.0:{port}/v1",
            f"https://127.0.0.1:{port}/v1"]
    if _resolves_to_loopback(socket.gethostname()):   # a name from /etc/hosts, not an address
        urls.append(f"http://{socket.gethostname()}:{port}/v1")
    if ipv6:
        urls.append(f"http://[::1]:{port}/v1")
    return urls


def _resolves_to_loopback(name: str) -> bool:
    try:
        return all(info[4][0] in ("127.0.0.1", "::1") for info in socket.getaddrinfo(name, 80))
    except OSError:
        return False
