"""Live scoreboard feed: engine events fanned out to every open Server-Sent Events stream.

The engine calls our listener on its own thread, so the listener only formats the message once and
puts it into each client's bounded queue (`put_nowait`: it never waits). Each stream is a generator
run by a WSGI worker thread: it sends the whole table state on connect, then every message as it
comes, and a comment line every `HEARTBEAT_S` seconds so proxies keep the line open and a vanished
browser is noticed. A client too slow to keep up loses its queued messages and is sent the latest
full state instead, so a page is never left showing an old table.

A new game means a new engine: `attach()` notices (it is called by every request and by each idle
stream once a second) and subscribes to it.
"""

from __future__ import annotations

import ipaddress
import itertools
import json
import logging
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from functools import cache, partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from referee.scoreboard.ports import EnginePort, TablePort

log = logging.getLogger(__name__)

# the table itself (a kiosk browser on the Pi, its own tools) is not a guest: its streams are not
# capped per address (the table-wide cap still holds)
THIS_MACHINE = frozenset({"127.0.0.1", "::1", "::ffff:127.0.0.1"})


@cache
def own_addresses() -> frozenset[str]:
    """The Pi's own addresses on its networks (its screen may open the page by one of them): a
    packet from outside with one of them as its source is dropped by the kernel (a martian)."""
    found: set[str] = set()
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None):
            found.add(str(info[4][0]).split("%")[0])
    except (OSError, UnicodeError):
        pass
    try:  # the address the default route leaves by (no packet is sent: UDP connect)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))
            found.add(str(probe.getsockname()[0]))
    except OSError:
        pass
    loopback = {a for a in found if a.startswith("127.") or a == "::1"}
    return frozenset(found - loopback)


def is_box(address: str) -> bool:
    """Is this peer the table itself: its own screen or tools (loopback 127.0.0.1 / ::1), or one
    of the Pi's own addresses? Other 127.x.y.z addresses are guests (the tests' guests are)."""
    if address in THIS_MACHINE:
        return True
    plain = address[7:] if address.startswith("::ffff:") else address
    return plain in own_addresses()


def network(address: str) -> str:
    """The network a guest's address belongs to, as budgets count it: IPv4 /24, IPv6 /64."""
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    prefix = 24 if ip.version == 4 else 64
    return str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))

HEARTBEAT_S = 15.0
QUEUE_SIZE = 256
RETRY_MS = 2000
FIRST_STATE_WAIT_S = 5.0  # the engine thread busy and no state published yet: how long a page waits
_CLOSE = b""  # put into a queue to end its stream


class Client:
    """One open event stream."""

    def __init__(self, address: str = "") -> None:
        self.queue: queue.Queue[bytes] = queue.Queue(QUEUE_SIZE)
        self.lagged = False
        self.address = address
        self.guest = True


class Hub:
    """Fans engine events out to the open streams of one table."""

    def __init__(self, table: TablePort, decorate: Callable[[dict[str, Any] | None], dict[str, Any]],
                 *, max_streams: int = 64, per_address: int = 8,
                 kept: Callable[[], frozenset[str]] = frozenset, kept_streams: int = 0) -> None:
        self.table = table
        self.decorate = decorate
        self.max_streams = max_streams  # guests' streams
        self.per_address = per_address  # so one guest cannot take every slot...
        self.per_network = max(per_address, max_streams // 2)  # ...nor one network
        self.kept = kept  # paired devices: like the box, they use the kept slots
        self.kept_streams = kept_streams
        self.clients: tuple[Client, ...] = ()  # replaced, never mutated: read without the lock
        self.closed = False
        self._engine: EnginePort | None = None
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._last_state: dict[str, Any] | None = None

    # -- the engine side ---------------------------------------------------------------------

    def attach(self) -> None:
        """Subscribe to the table's current engine if it is new, and send everyone its state."""
        engine = self.table.engine
        if engine is None or engine is self._engine:
            return
        with self._lock:
            if engine is self._engine:
                return
            self._engine = engine
            engine.subscribe(partial(self._on_event, engine))
        try:
            self.broadcast(self.message("state", self.state()))
        except queue.Empty:
            pass  # a busy engine thread: its next change is published to everyone anyway

    def _on_event(self, engine: EnginePort, kind: str, data: dict[str, Any]) -> None:
        """The engine's listener (engine thread): format once, queue for everyone, never wait."""
        if engine is not self._engine or self.closed:
            return
        if kind == "state":
            data = self.decorate(data)
            self._last_state = data
        self.broadcast(self.message(kind, data))

    def state(self, timeout: float = 1.0) -> dict[str, Any]:
        """The whole table, asked of the engine thread (the latest published copy if it is busy)."""
        engine = self.table.engine
        if engine is None:
            return self.decorate(None)
        try:
            snap = engine.command("snapshot", timeout=timeout)
        except queue.Empty:
            if self._last_state is not None:
                return self._last_state
            # nothing published yet to fall back on (a page opened as the table starts, on a
            # loaded machine): wait a little longer, then a 503 the page retries, never a 500
            snap = engine.command("snapshot", timeout=FIRST_STATE_WAIT_S)
        return self.decorate(snap)

    def message(self, kind: str, data: dict[str, Any]) -> bytes:
        body = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
        return f"id: {next(self._ids)}\nevent: {kind}\ndata: {body}\n\n".encode()

    def broadcast(self, message: bytes) -> None:
        for client in self.clients:
            try:
                client.queue.put_nowait(message)
            except queue.Full:
                client.lagged = True

    # -- the streams ---------------------------------------------------------------------------

    def join(self, address: str = "") -> Client | None:
        """A slot for a new stream, or None if the table's or this address's slots are taken.

        The caller must `leave()` when the response ends, however it ends (a HEAD request never
        starts the body, a vanished client never finishes it): `leave` may be called twice.
        """
        with self._lock:
            if self.closed:
                return None
            if is_box(address) or address in self.kept():  # never capped by what guests hold
                if len(self.clients) >= self.max_streams + self.kept_streams:
                    return None
            else:
                guests = [c for c in self.clients if c.guest]
                net = network(address)
                if (len(guests) >= self.max_streams
                        or sum(1 for c in guests if c.address == address) >= self.per_address
                        or sum(1 for c in guests if network(c.address) == net)
                        >= self.per_network):
                    return None
            client = Client(address)
            client.guest = not (is_box(address) or address in self.kept())
            self.clients = (*self.clients, client)
            return client

    def leave(self, client: Client) -> None:
        with self._lock:
            self.clients = tuple(c for c in self.clients if c is not client)

    def stream(self, client: Client, first: bytes,
               gone: Callable[[], bool] | None = None) -> Iterator[bytes]:
        """The body of one event stream (runs in a WSGI worker thread). `gone` says the client
        has closed its socket (waitress's `client_disconnected`): the slot is freed within a
        second, not at the next heartbeat's failed write."""
        try:
            yield f"retry: {RETRY_MS}\n".encode() + first
            beat = time.monotonic() + HEARTBEAT_S
            while not self.closed:
                if gone is not None and gone():
                    return
                try:
                    msg = client.queue.get(timeout=min(1.0, max(0.0, beat - time.monotonic())))
                except queue.Empty:
                    self.attach()
                    if time.monotonic() >= beat:
                        beat = time.monotonic() + HEARTBEAT_S
                        yield b": keep-alive\n\n"
                    continue
                if msg == _CLOSE:
                    return
                if client.lagged:  # it fell behind: drop the backlog, send the table as it is now
                    client.lagged = False
                    while not client.queue.empty():
                        client.queue.get_nowait()
                    msg = self.message("state", self.state())
                yield msg
                beat = time.monotonic() + HEARTBEAT_S
        finally:
            self.leave(client)

    def close(self) -> None:
        """End every stream (server shutdown)."""
        self.closed = True
        for client in self.clients:
            try:
                client.queue.put_nowait(_CLOSE)
            except queue.Full:
                pass
