"""An aiohttp application served on a real socket from a background thread with its own asyncio event loop, so
tests and benchmarks talk to it over HTTP from ordinary synchronous code (`FakeOpenAIServer` is one).

A subclass adds its routes (`add_routes`); handlers that wait should wait on `_stop_event`, so `stop()` wakes
them and returns within its timeout.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any, Self

from aiohttp import web


class BackgroundHttpServer:
    """Serves `add_routes`' application on ``host:port`` (port 0: a free one, `port` once started)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, shutdown_timeout_s: float = 1.0) -> None:
        self.host = host
        self._requested_port = port
        self.shutdown_timeout_s = shutdown_timeout_s
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._stop_event: asyncio.Event | None = None
        self._sock: socket.socket | None = None
        self.port: int | None = None

    def add_routes(self, app: web.Application) -> None:
        raise NotImplementedError

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("server not started")
        return f"http://{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> Self:
        if self.running:
            return self
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self._requested_port))
        sock.listen(512)
        sock.setblocking(False)
        self._sock = sock
        self.port = sock.getsockname()[1]
        ready = threading.Event()
        failure: list[BaseException] = []
        self._thread = threading.Thread(
            target=self._serve, args=(ready, failure), name=f"{type(self).__name__}:{self.port}", daemon=True
        )
        self._thread.start()
        if not ready.wait(10) or failure:
            self.stop()
            raise RuntimeError(f"{type(self).__name__} failed to start: {failure[0] if failure else 'timeout'}")
        return self

    def _serve(self, ready: threading.Event, failure: list[BaseException]) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            self._stop_event = asyncio.Event()
            app = web.Application(client_max_size=64 * 1024 * 1024)
            self.add_routes(app)
            self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=self.shutdown_timeout_s)
            loop.run_until_complete(self._runner.setup())
            site = web.SockSite(self._runner, self._sock, backlog=512)
            loop.run_until_complete(site.start())
        except BaseException as exc:  # pragma: no cover - start-up failure is reported to start()
            failure.append(exc)
            ready.set()
            loop.close()
            return
        ready.set()
        try:
            loop.run_forever()
        finally:
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _shutdown(self) -> None:
        assert self._stop_event is not None
        self._stop_event.set()  # wakes every waiting handler; they drop their connections
        if self._runner is not None:
            await self._runner.cleanup()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop serving; in-flight requests get their connection closed. Returns within about ``timeout``."""
        thread, loop = self._thread, self._loop
        if thread is not None and loop is not None and thread.is_alive():
            deadline = time.monotonic() + timeout
            try:
                fut = asyncio.run_coroutine_threadsafe(self._shutdown(), loop)
                fut.result(max(0.05, timeout * 0.75))
            except Exception:
                pass
            try:
                loop.call_soon_threadsafe(loop.stop)
            except RuntimeError:
                pass  # loop already closed
            thread.join(max(0.05, deadline - time.monotonic()))
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:  # pragma: no cover
                pass
        self._thread = None
        self._loop = None
        self._runner = None
        self._sock = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()
