"""Guards at the door of the scoreboard: what one guest on the LAN may hold, and whom we answer.

waitress's own settings (see `server_settings`) cap bodies (`max_request_body_size`: a body over
the limit is answered 413 as soon as its headers say so, never spooled to disk), headers, idle
connections (`channel_timeout`) and all connections (`connection_limit`). What waitress does not
offer is a cap per address and a deadline for a request that trickles in (slowloris: one byte every
few seconds keeps `channel_timeout` from ever firing), so:

- `ConnectionGuard` wraps waitress's channel class: an address holding `PER_ADDRESS` connections
  has its next one answered 503 and closed at once, and a request whose headers and body have not
  all arrived `REQUEST_S` seconds after its first byte is dropped (checked in waitress's own
  maintenance pass, on its own thread).
- `host_allowed` is the DNS-rebinding check: a page on a rebinding domain reaches us with that
  domain in `Host`; we answer only our own names and IP literals.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from functools import cache, partial
from typing import Any

from waitress.channel import HTTPChannel
from waitress.server import BaseWSGIServer

from referee.scoreboard.live import THIS_MACHINE

MAX_BODY = 64 * 1024  # the largest body any endpoint takes (a setup with 8 seats is ~1 KB)
PER_ADDRESS = 32  # connections one address may hold (a phone opens a handful)
REQUEST_S = 10.0  # from a request's first byte to its last, on a LAN
IDLE_S = 30  # an idle keep-alive connection is closed after this long
CHECK_S = 2  # how often the deadlines are checked
BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
        b"Retry-After: 5\r\nConnection: close\r\nContent-Length: 59\r\n\r\n"
        b'{"error": "too many connections from your address; wait"}\n')


def server_settings(threads: int) -> dict[str, Any]:
    """waitress adjustments for a table on a shared LAN."""
    return {
        "threads": threads,
        "connection_limit": max(200, threads * 3),
        "channel_timeout": IDLE_S,
        "cleanup_interval": CHECK_S,
        # waitress refuses a body of this size *or more*: one byte over, so that exactly
        # MAX_BODY is served, as Flask's MAX_CONTENT_LENGTH (which refuses only more) serves it
        "max_request_body_size": MAX_BODY + 1,
        "max_request_header_size": 16 * 1024,
        "inbuf_overflow": 2 * MAX_BODY,  # bodies stay in memory: nothing spooled to disk
        "ident": "table-referee",
        "asyncore_use_poll": True,
        "clear_untrusted_proxy_headers": True,
    }


class GuardedChannel(HTTPChannel):  # type: ignore[misc]
    """An HTTP connection that tells its guard when it closes and when a request began."""

    guard: ConnectionGuard
    address = ""
    request_started: float | None = None
    counted = False

    def received(self, data: bytes) -> bool:
        if self.request is None and data:
            self.request_started = time.monotonic()
        result: bool = super().received(data)
        if self.request is None:  # every request sent so far has arrived whole
            self.request_started = None
        return result

    def del_channel(self, map: Any = None) -> None:
        super().del_channel(map)
        if self.counted:
            self.counted = False
            self.guard.left(self.address)


class ConnectionGuard:
    def __init__(self, per_address: int = PER_ADDRESS, request_s: float = REQUEST_S) -> None:
        self.per_address = per_address
        self.request_s = request_s
        self.open: dict[str, int] = {}
        self.refused = 0
        self.dropped = 0
        self._lock = threading.Lock()

    def install(self, server: Any) -> None:
        """Guard every listening socket of a waitress server (one, or several in a map)."""
        listeners = [server] if isinstance(server, BaseWSGIServer) else [
            s for s in server.map.values() if isinstance(s, BaseWSGIServer)]
        for listener in listeners:
            listener.channel_class = partial(self.channel, listener)
            original = listener.maintenance
            listener.maintenance = partial(self.maintenance, listener, original)

    def channel(self, listener: Any, server: Any, sock: socket.socket, addr: Any, adj: Any,
                map: Any = None) -> GuardedChannel | None:
        """waitress's `channel_class(server, sock, addr, adj, map=...)`, with the cap."""
        address = str(addr[0]) if isinstance(addr, tuple) and addr else ""
        with self._lock:
            if self.open.get(address, 0) >= self.per_address and address not in THIS_MACHINE:
                self.refused += 1
                refuse = True
            else:
                self.open[address] = self.open.get(address, 0) + 1
                refuse = False
        if refuse:
            try:
                sock.setblocking(False)
                sock.send(BUSY)
            except OSError:
                pass
            sock.close()
            return None
        try:
            channel = GuardedChannel(server, sock, addr, adj, map=map)
        except BaseException:
            self.left(address)
            raise
        channel.guard, channel.address, channel.counted = self, address, True
        return channel

    def left(self, address: str) -> None:
        with self._lock:
            n = self.open.get(address, 0) - 1
            if n > 0:
                self.open[address] = n
            else:
                self.open.pop(address, None)

    def maintenance(self, listener: Any, original: Any, now: float) -> None:
        """waitress's idle check, then ours: drop requests that trickle in too slowly."""
        original(now)
        cutoff = time.monotonic() - self.request_s
        for channel in list(listener.active_channels.values()):
            started = getattr(channel, "request_started", None)
            if started is not None and started < cutoff and not channel.requests:
                channel.request_started = None
                channel.will_close = True
                self.dropped += 1
        # the channels marked here close on waitress's next pass (they are now writable)


# -- Host -------------------------------------------------------------------------------------


@cache
def own_names() -> frozenset[str]:
    """This machine's names: localhost, its hostname and hostname.local, its FQDN."""
    names = {"localhost", "localhost.localdomain"}
    try:
        host = socket.gethostname().lower()
        names |= {host, f"{host}.local", host.split(".")[0], f"{host.split('.')[0]}.local"}
        names.add(socket.getfqdn().lower())
    except OSError:
        pass
    return frozenset(n for n in names if n)


def host_allowed(host_header: str | None, configured: str = "") -> bool:
    """Is `Host` one of ours? An IP literal always is (a rebinding page cannot send one: its
    origin would then be our address itself); a name must be ours or the configured host."""
    if not host_header:
        return True  # HTTP/1.0 without Host: not from a browser
    host = host_header.strip().lower()
    if host.startswith("["):  # [v6]:port
        end = host.find("]")
        name = host[1:end] if end > 0 else host
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    name = name.rstrip(".")
    try:
        ipaddress.ip_address(name.split("%")[0])
        return True
    except ValueError:
        pass
    return name in own_names() or (bool(configured) and name == configured.lower().rstrip("."))
