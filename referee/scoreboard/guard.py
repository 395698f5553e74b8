"""Guards at the door of the scoreboard: what one guest on the LAN may hold, and whom we answer.

waitress is a threaded server behind one event loop (asyncore with poll): idle and trickling
connections cost a socket and a little memory, never a thread, so the door can hold hundreds. Its
own settings (see `server_settings`) cap bodies (`max_request_body_size`: a body over the limit is
answered 413 as soon as its headers say so, never spooled to disk), headers, idle connections
(`channel_timeout`) and all connections (`connection_limit`, `TOTAL`). Past that total waitress
stops accepting and new clients wait in the kernel's backlog — so guests must never reach it:

- `ConnectionGuard` wraps waitress's channel class and counts every guest's connections by address
  and by network (IPv4 /24, IPv6 /64). A guest address holds at most `PER_ADDRESS`, a network
  `PER_NETWORK`, all guests together `GUESTS`; `GUESTS` < `TOTAL`, so the rest (`TOTAL - GUESTS`)
  is kept for the box itself (loopback, the Pi's own addresses) and devices paired at the box,
  which no cap counts. A connection over a cap is answered 503 at once and closed — unless its
  address holds fewer than its fair share: then the idle (or still-arriving) connection of the
  address holding the most in that network (or among all guests) is closed to make room, so a
  newcomer always gets in however many connections a flood holds.
- deadlines: a new connection has `HEADER_S` to send its first request's headers; any request has
  `REQUEST_S` from its first byte to its last (slowloris: one byte every few seconds keeps
  `channel_timeout` from ever firing). Checked every `CHECK_S` in waitress's own maintenance pass.
- waitress's own refusals (400, 413, 431, 501) are the API's one-line JSON error too
  (`JsonErrorTask`), and a stream notices a closed socket at once (`channel_request_lookahead`
  lets the loop read a socket while its request runs: `waitress.client_disconnected`).
- `host_allowed` is the DNS-rebinding check: a page on a rebinding domain reaches us with that
  domain in `Host`; we answer only our own names and IP literals.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import threading
import time
from collections.abc import Callable
from functools import cache, partial
from typing import Any

from waitress.channel import HTTPChannel
from waitress.server import BaseWSGIServer
from waitress.task import ErrorTask

from referee.scoreboard.live import is_box, network

MAX_BODY = 64 * 1024  # the largest body any endpoint takes (a setup with 8 seats is ~1 KB)
TOTAL = 512  # waitress's connection_limit: never reached by guests
GUESTS = 384  # every guest together; TOTAL - GUESTS is kept for the box and paired devices
PER_NETWORK = 192  # one /24 or /64 (two networks' worth fill the guests' share)
PER_ADDRESS = 16  # connections one guest address may hold (a browser opens 6 per host)
FAIR = 4  # an address holding fewer than this may make room by closing a hog's idle connection
HEADER_S = 5.0  # from a connection's opening to its first request's last header line
REQUEST_S = 10.0  # from a request's first byte to its last, on a LAN
IDLE_S = 30  # an idle keep-alive connection is closed after this long
CHECK_S = 1  # how often the deadlines are checked


def refusal(status: str, message: str, retry_s: int | None = None) -> bytes:
    """A whole HTTP answer with the API's one-line JSON error, and Connection: close."""
    body = json.dumps({"error": message}).encode() + b"\n"
    head = [f"HTTP/1.1 {status}", "Content-Type: application/json", "Connection: close",
            f"Content-Length: {len(body)}"]
    if retry_s is not None:
        head.append(f"Retry-After: {retry_s}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


BUSY = refusal("503 Service Unavailable", "too many connections from your address; wait", 5)
FULL = refusal("503 Service Unavailable", "the scoreboard is full; try again in a moment", 5)


def server_settings(threads: int) -> dict[str, Any]:
    """waitress adjustments for a table on a shared LAN."""
    return {
        "threads": threads,
        "connection_limit": TOTAL,
        "channel_timeout": IDLE_S,
        "cleanup_interval": CHECK_S,
        # waitress refuses a body of this size *or more*: one byte over, so that exactly
        # MAX_BODY is served, as Flask's MAX_CONTENT_LENGTH (which refuses only more) serves it
        "max_request_body_size": MAX_BODY + 1,
        "max_request_header_size": 16 * 1024,
        "inbuf_overflow": 2 * MAX_BODY,  # bodies stay in memory: nothing spooled to disk
        "channel_request_lookahead": 1,  # read on while a request runs: a closed socket is seen
        "ident": "table-referee",
        "asyncore_use_poll": True,
        "clear_untrusted_proxy_headers": True,
    }


class JsonErrorTask(ErrorTask):  # type: ignore[misc]
    """waitress's own refusals (a bad request line, 413, 431, 501) as the API's JSON error."""

    def execute(self) -> None:
        error = self.request.error
        message = f"{error.reason}: {error.body}".strip().rstrip(".")
        body = json.dumps({"error": " ".join(message.split())}).encode() + b"\n"
        self.status = f"{error.code} {error.reason}"
        self.response_headers = [("Content-Type", "application/json"),
                                 ("Content-Length", str(len(body))), ("Connection", "close")]
        self.close_on_finish = True
        self.write(body)


class GuardedChannel(HTTPChannel):  # type: ignore[misc]
    """An HTTP connection that tells its guard when it closes and when a request began."""

    error_task_class = JsonErrorTask
    guard: ConnectionGuard
    address = ""
    network = ""
    guest = True
    opened = 0.0
    served = False  # a first request's headers have arrived
    request_started: float | None = None
    counted = False

    def received(self, data: bytes) -> bool:
        if self.request is None and data:
            self.request_started = time.monotonic()
        result: bool = super().received(data)
        if self.requests or (self.request is not None and self.request.headers_finished):
            self.served = True
        if self.request is None:  # every request sent so far has arrived whole
            self.request_started = None
        return result

    def idle(self) -> bool:
        """Nothing running for it (no task, nothing to send): closing it loses nobody's answer."""
        return not self.requests and not self.total_outbufs_len

    def del_channel(self, map: Any = None) -> None:
        super().del_channel(map)
        if self.counted:
            self.counted = False
            self.guard.left(self)


class ConnectionGuard:
    def __init__(self, per_address: int = PER_ADDRESS, request_s: float = REQUEST_S, *,
                 per_network: int = PER_NETWORK, guests: int = GUESTS,
                 header_s: float = HEADER_S,
                 kept: Callable[[], frozenset[str]] = frozenset) -> None:
        self.per_address = per_address
        self.per_network = per_network
        self.guests = guests
        self.request_s = request_s
        self.header_s = header_s
        self.kept = kept  # addresses of devices paired at the box: no cap counts them
        self.open: dict[str, int] = {}  # guest address -> connections
        self.networks: dict[str, int] = {}  # guest network -> connections
        self.guest_total = 0
        self.channels: dict[str, list[GuardedChannel]] = {}
        self.refused = 0
        self.evicted = 0
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
        """waitress's `channel_class(server, sock, addr, adj, map=...)`, with the caps (on the
        server's loop thread, the only one that opens and closes channels)."""
        address = str(addr[0]) if isinstance(addr, tuple) and addr else ""
        net = network(address)
        guest = not is_box(address) and address not in self.kept()
        if guest:
            answer = self._admit(address, net)
            if answer:
                self.refused += 1
                self._refuse(sock, answer)
                return None
        channel = GuardedChannel(server, sock, addr, adj, map=map)
        channel.guard, channel.address, channel.network = self, address, net
        channel.guest, channel.opened, channel.counted = guest, time.monotonic(), True
        with self._lock:
            if guest:
                self.open[address] = self.open.get(address, 0) + 1
                self.networks[net] = self.networks.get(net, 0) + 1
                self.guest_total += 1
            self.channels.setdefault(address, []).append(channel)
        return channel

    def _admit(self, address: str, net: str) -> bytes:
        """b"" if a guest's new connection may open (room made if need be), else the refusal."""
        mine = self.open.get(address, 0)
        if mine >= self.per_address:
            return BUSY
        for full, scope in ((self.networks.get(net, 0) >= self.per_network, net),
                            (self.guest_total >= self.guests, None)):
            if full and not (mine < FAIR and self._make_room(scope, mine)):
                return FULL
        return b""

    def _make_room(self, net: str | None, mine: int) -> bool:
        """Close an idle connection of the guest holding the most (in `net`, or anywhere)."""
        hogs = sorted(((n, a) for a, n in self.open.items()
                       if n > mine + 1 and (net is None or network(a) == net)), reverse=True)
        for _, hog in hogs:
            idle = [c for c in self.channels.get(hog, []) if c.idle()]
            if idle:
                victim = min(idle, key=lambda c: c.last_activity)
                victim.handle_close()  # its del_channel counts it out
                self.evicted += 1
                return True
        return False

    @staticmethod
    def _refuse(sock: socket.socket, answer: bytes) -> None:
        try:
            sock.setblocking(False)
            sock.send(answer)
            sock.shutdown(socket.SHUT_WR)
            sock.recv(65536)  # what it sent already: closing with it unread would reset the
        except OSError:  # connection before the client read our answer
            pass
        sock.close()

    def left(self, channel: GuardedChannel) -> None:
        with self._lock:
            held = self.channels.get(channel.address, [])
            if channel in held:
                held.remove(channel)
            if not held:
                self.channels.pop(channel.address, None)
            if not channel.guest:
                return
            self.guest_total -= 1
            for table, key in ((self.open, channel.address), (self.networks, channel.network)):
                n = table.get(key, 0) - 1
                if n > 0:
                    table[key] = n
                else:
                    table.pop(key, None)

    def maintenance(self, listener: Any, original: Any, now: float) -> None:
        """waitress's idle check, then ours: drop requests that trickle in too slowly, and
        connections that never send their first request's headers."""
        original(now)
        clock = time.monotonic()
        for channel in list(listener.active_channels.values()):
            if channel.requests or not isinstance(channel, GuardedChannel):
                continue
            started = channel.request_started
            late = started is not None and started < clock - self.request_s
            silent = not channel.served and channel.opened < clock - self.header_s
            if late or silent:
                channel.request_started = None
                channel.served = True
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
