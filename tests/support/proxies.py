"""Forwarders to put between the code under test and a server it depends on.

`ApiProxy` is an HTTP forwarder to put between one rightsizer process and the simulated API
server, to make that process's requests fail or slow down selectively while everything else keeps
working.

Each client connection carries one request: the forwarder reads its head, rewrites it to
`Connection: close` (so the client opens a new connection, and is looked at again, for its next
request), then either drops the connection (`block` says so: a network partition, as the client
sees it) or waits `delay` seconds and pipes bytes both ways until the server closes. Watches
stream through unchanged.

`blackhole()` makes the network silently lose everything, as when a peer vanishes without a
reset: the connections open at that moment go silent for good (nothing more arrives, not even
their end), and new requests are held unanswered until `heal()`.

`Proxy` is a TCP forwarder to put between the app and PostgreSQL: `cut()` closes its port and
every connection through it (the database "goes away" for this app only), `restore()` opens the
same port again. The machine's PostgreSQL server is never touched.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable


class ApiProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.block: Callable[[str, str], bool] = lambda method, path: False
        self.delay = 0.0
        self.blocked: Counter[str] = Counter()  # path -> requests dropped
        self.forwarded: Counter[str] = Counter()
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(128)
        self.port = int(self._listener.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._dead: set[socket.socket] = set()
        self._stalling = False
        self._closed = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def drop_open(self) -> int:
        """Resets every connection in flight (open watches above all); returns how many."""
        with self._lock:
            conns, self._open = self._open, set()
        for c in conns:
            with contextlib.suppress(OSError):
                c.shutdown(socket.SHUT_RDWR)
        return len(conns)

    def blackhole(self) -> None:
        with self._lock:
            self._stalling = True
            self._dead |= self._open

    def heal(self) -> None:
        """New connections work again; the ones lost in the black hole stay lost."""
        with self._lock:
            self._stalling = False

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            head, rest = self._read_head(client)
            if head is None:
                return
            lines = head.split(b"\r\n")
            method, path, _ = lines[0].decode("latin-1").split(" ", 2)
            path = path.split("?", 1)[0]
            with self._lock:
                stalled = self._stalling
            if stalled:
                self._closed.wait()  # held open, never answered
                return
            if self.delay:
                time.sleep(self.delay)
            with self._lock:
                # Checked and registered at once: a request that passed the check before a
                # partition began is open by then, so drop_open() resets it with the others.
                if self.block(method, path):
                    self.blocked[path] += 1
                    return  # dropped without an answer, as over a broken network
                self.forwarded[path] += 1
                self._open.add(client)
            kept = [h for h in lines[1:] if h and not h.lower().startswith(b"connection:")]
            request = b"\r\n".join([lines[0], *kept, b"Connection: close", b"", b""])
            upstream = socket.create_connection(self.target)
            upstream.sendall(request + rest)
            t = threading.Thread(target=self._pipe, args=(client, upstream, client), daemon=True)
            t.start()
            self._pipe(upstream, client, client)
            t.join(1)
            upstream.close()
        except OSError:
            pass
        finally:
            with self._lock:
                self._open.discard(client)
            with contextlib.suppress(OSError):
                client.close()

    @staticmethod
    def _read_head(sock: socket.socket) -> tuple[bytes | None, bytes]:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                return None, b""
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        return head, rest

    def _pipe(self, src: socket.socket, dst: socket.socket, client: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                if client not in self._dead:
                    dst.sendall(data)
        except OSError:
            pass
        finally:
            if client in self._dead:
                self._closed.wait()  # a lost connection never ends, as far as its peer knows
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)


class Proxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        self._listener: socket.socket | None = None
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self.accepted = 0

    def restore(self) -> Proxy:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    def cut(self) -> None:
        """Refuse new connections and reset the open ones."""
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with self._lock:
            conns, self._conns = self._conns, []
        for c in conns:
            with contextlib.suppress(OSError):
                c.shutdown(socket.SHUT_RDWR)
            c.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns += [client, upstream]
                self.accepted += 1
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
