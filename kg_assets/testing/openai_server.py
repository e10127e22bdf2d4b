"""A real, local OpenAI-compatible HTTP server for tests and benchmarks: scripted answers, injectable latency
and faults.

`FakeOpenAIServer` runs an aiohttp application on ``127.0.0.1:<free port>`` in a background thread with its
own asyncio event loop, so the official ``openai`` client (sync or async) and ``instructor`` talk to it over
real sockets. Every request is handled as an asyncio task: injected delays are ``await``-ed, so many
requests in flight overlap instead of queueing.

Endpoints
    ``POST /v1/chat/completions``  an OpenAI ``chat.completion`` object, or its chunks with ``stream: true``
    ``GET  /v1/models``            the configured model names
    ``GET  /v1/models/{id}``       one model (404 for an unknown one)

Choosing the reply for a chat request (first hit wins)
    1. fault injection: ``fail_every_n`` (every n-th request) or ``fault_rate`` (seeded RNG) -> ``fault_reply``;
       a fault does NOT consume the scripted queue, so a retried request gets the scripted answer;
    2. the queue filled by ``.script(*replies)``, consumed in order;
    3. rules added by ``.respond_when(match, *replies)``, in insertion order;
    4. the responder (``responder=`` or ``.set_responder(fn)``); returning ``None`` falls through;
    5. the default reply (``default_reply=``, else ``"{}"`` when a tool / JSON answer is requested and
       ``"OK"`` otherwise).
    A reply is a ``Reply``, a ``str`` (the content) or a ``dict``/``list`` (dumped to a JSON string).

Tool calls (instructor's default ``Mode.TOOLS``)
    When the request carries ``tools`` (and ``tool_choice`` is not ``"none"``), the content becomes the
    ``arguments`` of ``choices[0].message.tool_calls[0]`` whose name is the one ``tool_choice`` forces (else
    the first tool's), ``message.content`` is ``null`` and a ``finish_reason`` of ``"stop"`` is reported as
    ``"tool_calls"`` (others, e.g. ``"length"``, are kept). ``response_format`` json_object / json_schema
    requests get the content as ``message.content`` unchanged.

Token usage
    ``prompt_tokens`` is the sum, over the request's messages, of the o200k_base token count
    (``bpe_openai``, ``encode_ordinary``) of each message's text (string content, or the ``text`` parts of
    list content, plus the ``arguments`` of assistant tool calls). No per-message overhead and no tool
    schemas are counted, so tests can predict it exactly with :func:`prompt_tokens_of`. Each ``image_url``
    part counts IMAGE_TOKENS (85, OpenAI's low-detail price). ``completion_tokens`` is the token count of
    the returned content / arguments. If the tokenizer cannot be loaded, counts fall back to
    ``ceil(len(text) / 4)``. ``Reply.prompt_tokens`` / ``Reply.completion_tokens`` override either.

Images
    ``content`` may be a list of parts, ``{"type": "text", ...}`` and ``{"type": "image_url", "image_url":
    {"url": ...}}``. An image part without a URL, or with a ``data:`` URL that is not valid base64, gets a
    400 ``invalid_image`` as OpenAI answers. :func:`image_parts` gives a request's images decoded, and
    ``respond_when(sha256_hex, ..., scope="image")`` answers the requests that carry that image.

Modules: this one is the server (`background_http` serves it from its thread); `openai_replies` holds `Reply` (answers and faults) and the bodies built from
it, `openai_requests` the request helpers, token counts, request records, matching rules and the checks that
refuse a malformed request. Everything a test
needs is importable from here.

Use it as a context manager (``with FakeOpenAIServer() as srv: ...``); the test suite's ``openai_server``
fixture (kg_assets_tests/conftest.py) gives each test a started one.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from aiohttp import web

from kg_assets.testing.background_http import BackgroundHttpServer
from kg_assets.testing.openai_replies import (
    DEFAULT_MODEL,
    FAULTS,
    MALFORMED_CONTENT,
    Reply,
    ReplyLike,
    RequestRecord,
    Responder,
    as_reply,
    completion_body,
    error_body,
    reply_headers,
    stream_events,
    wants_json,
)
from kg_assets.testing.openai_requests import (
    Match,
    Rule,
    Scope,
    all_text,
    count_tokens,
    image_parts,
    last_user_text,
    message_text,
    prompt_tokens_of,
    request_problem,
    user_turns,
)

__all__ = [
    "DEFAULT_MODEL",
    "FAULTS",
    "MALFORMED_CONTENT",
    "FakeOpenAIServer",
    "Reply",
    "RequestRecord",
    "all_text",
    "count_tokens",
    "image_parts",
    "last_user_text",
    "message_text",
    "prompt_tokens_of",
    "user_turns",
]


class FakeOpenAIServer(BackgroundHttpServer):
    """A local OpenAI-compatible server in a background thread; see the module docstring.

    Knobs (plain attributes, may be changed while running): ``latency_s``, ``fail_every_n``, ``fault_rate``,
    ``fault_reply``, ``default_reply``, ``models``.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        models: Sequence[str] = (DEFAULT_MODEL,),
        latency_s: float = 0.0,
        fail_every_n: int | None = None,
        fault_rate: float = 0.0,
        fault_reply: ReplyLike | None = None,
        seed: int = 0,
        default_reply: ReplyLike | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        shutdown_timeout_s: float = 1.0,
    ) -> None:
        super().__init__(host, port, shutdown_timeout_s)
        self._initial = dict(
            responder=responder,
            models=list(models),
            latency_s=latency_s,
            fail_every_n=fail_every_n,
            fault_rate=fault_rate,
            fault_reply=as_reply(fault_reply),
            seed=seed,
            default_reply=as_reply(default_reply),
        )
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._apply_initial()

    # -- configuration -----------------------------------------------------------------------------------------
    def _apply_initial(self) -> None:
        with self._lock:
            init = self._initial
            self._responder: Responder | None = init["responder"]
            self.models: list[str] = list(init["models"])
            self.latency_s: float = init["latency_s"]
            self.fail_every_n: int | None = init["fail_every_n"]
            self.fault_rate: float = init["fault_rate"]
            self.fault_reply: Reply = init["fault_reply"] or Reply.server_error()
            self.seed: int = init["seed"]
            self.default_reply: Reply | None = init["default_reply"]
            self._rng = random.Random(self.seed)
            self._queue: deque[Any] = deque()
            self._rules: list[Rule] = []
            self._records: list[RequestRecord] = []
            self._seq = itertools.count(1)
            self._in_flight = getattr(self, "_in_flight", 0)  # requests still being served keep counting
            self._peak_in_flight = self._in_flight
            self.responder_errors: list[BaseException] = []

    def set_responder(self, fn: Responder | None) -> None:
        """``fn(request_json) -> Reply | str | dict | None`` (may be async; runs on the server's event loop)."""
        with self._lock:
            self._responder = fn

    def script(self, *replies: ReplyLike) -> FakeOpenAIServer:
        """Queue replies served in order to the next chat requests (before rules and the responder)."""
        with self._lock:
            for r in replies:
                self._queue.append(as_reply(r))
        return self

    def respond_when(
        self,
        match: Match,
        *replies: ReplyLike | Callable[[dict], Any],
        scope: Scope = "last_user",
        times: int | None = None,
    ) -> FakeOpenAIServer:
        """Answer with ``replies`` when ``match`` applies; rules are tried in insertion order, first match wins.

        ``match`` is a substring, a sequence of substrings (all required) or a predicate ``fn(request) -> bool``.
        ``scope`` says which text substrings are looked for in: the last user message (default), the system
        message(s), or ``"any"`` message. Several replies are served in order (the last one then repeats),
        e.g. a first-pass answer and then a gleaning answer for the same chunk. ``times`` caps how often the
        rule matches. A reply may also be a callable ``fn(request)`` returning a reply.
        """
        if not replies:
            raise ValueError("respond_when needs at least one reply")
        prepared = [r if callable(r) and not isinstance(r, Reply) else as_reply(r) for r in replies]
        with self._lock:
            self._rules.append(Rule(match, prepared, scope, times))
        return self

    def clear_records(self) -> None:
        """Forget recorded requests and counters (scripts, rules and knobs stay)."""
        with self._lock:
            self._records = []
            self._seq = itertools.count(1)
            self._peak_in_flight = self._in_flight

    def reset(self) -> None:
        """Back to the state right after construction: no records, queue or rules; constructor knobs/responder."""
        self._apply_initial()

    # -- recording -----------------------------------------------------------------------------------------------
    @property
    def records(self) -> list[RequestRecord]:
        with self._lock:
            return list(self._records)

    @property
    def requests(self) -> list[dict]:
        """Every chat-completions request body received, in arrival order."""
        with self._lock:
            return [r.body for r in self._records]

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self._records)

    @property
    def timings(self) -> list[tuple[float, float | None]]:
        """(start, end) ``perf_counter`` pairs per request; end is None while in flight."""
        with self._lock:
            return [(r.start, r.end) for r in self._records]

    @property
    def in_flight(self) -> int:
        with self._lock:
            return self._in_flight

    @property
    def peak_in_flight(self) -> int:
        """The most requests that were being handled at the same time."""
        with self._lock:
            return self._peak_in_flight

    @property
    def pending_scripts(self) -> int:
        with self._lock:
            return len(self._queue)

    def wait_for_calls(self, n: int, timeout: float = 5.0) -> bool:
        """Block until at least ``n`` chat requests have arrived; False on timeout."""
        with self._changed:
            return self._changed.wait_for(lambda: len(self._records) >= n, timeout)

    def wait_until_idle(self, timeout: float = 5.0) -> bool:
        """Block until no request is being handled (a streamed answer's end, or the server noticing the client
        left, comes after the client has its answer); False on timeout."""
        with self._changed:
            return self._changed.wait_for(lambda: self._in_flight == 0, timeout)

    # -- lifecycle (the rest is BackgroundHttpServer's) -----------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._handle_chat)
        app.router.add_get("/v1/models", self._handle_models)
        app.router.add_get("/v1/models/{model}", self._handle_model)
        app.router.add_route("*", "/{tail:.*}", self._handle_unknown)

    def __repr__(self) -> str:
        where = self.base_url if self.port else "not started"
        return f"<FakeOpenAIServer {where} calls={self.calls}>"

    # -- choosing replies ----------------------------------------------------------------------------------------
    def _is_fault(self, seq: int) -> bool:
        if self.fail_every_n and seq % self.fail_every_n == 0:
            return True
        return bool(self.fault_rate) and self._rng.random() < self.fault_rate

    async def _choose(self, seq: int, body: dict) -> tuple[Reply, bool]:
        """(reply, is_fault) for a request; see the module docstring for the order."""
        with self._lock:
            if self._is_fault(seq):
                return self.fault_reply, True
            if self._queue:
                return self._queue.popleft(), False
            candidate = None
            for rule in self._rules:
                if rule.matches(body):
                    candidate = rule.take()
                    break
            responder = self._responder
        if candidate is not None:
            reply = await self._call(candidate, body) if callable(candidate) else candidate
            if reply is not None:
                return reply, False
        if responder is not None:
            reply = await self._call(responder, body)
            if reply is not None:
                return reply, False
        return self._default_reply(body), False

    async def _call(self, fn: Callable[[dict], Any], body: dict) -> Reply | None:
        result = fn(body)
        if inspect.isawaitable(result):
            result = await result
        return as_reply(result)

    def _default_reply(self, body: dict) -> Reply:
        if self.default_reply is not None:
            return self.default_reply
        return Reply(content="{}" if wants_json(body) else "OK")

    # -- handlers ------------------------------------------------------------------------------------------------
    async def _sleep(self, seconds: float) -> bool:
        """Sleep, waking early on shutdown; returns True when the server is stopping."""
        assert self._stop_event is not None
        if seconds > 0 and not self._stop_event.is_set():
            try:
                await asyncio.wait_for(self._stop_event.wait(), seconds)
            except asyncio.TimeoutError:
                pass
        return self._stop_event.is_set()

    async def _handle_chat(self, request: web.Request) -> web.StreamResponse:
        start = time.perf_counter()
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        with self._changed:
            seq = next(self._seq)
            record = RequestRecord(seq=seq, body=body, headers=dict(request.headers), start=start)
            self._records.append(record)
            self._in_flight += 1
            self._peak_in_flight = max(self._peak_in_flight, self._in_flight)
            self._changed.notify_all()
        response: web.StreamResponse | None = None
        try:
            problem = request_problem(body)
            if problem is not None:
                response = _json_error(400, **problem)
                return response
            try:
                reply, fault = await self._choose(seq, body)
            except Exception as exc:
                with self._lock:
                    self.responder_errors.append(exc)
                response = _json_error(500, f"responder raised {type(exc).__name__}: {exc}")
                return response
            record.reply, record.fault = reply, fault
            stopping = await self._sleep(float(self.latency_s or 0) + float(reply.delay_s or 0))
            if stopping or reply.drop_connection:
                record.dropped = True
                return self._drop(request)
            if reply.status != 200:
                body_err = error_body(
                    reply.status,
                    reply.error_message or f"fake error {reply.status}",
                    reply.error_type,
                    reply.error_code,
                )
                response = web.json_response(body_err, status=reply.status, headers=reply_headers(reply, seq))
                return response
            if body.get("stream"):
                response = await self._stream(request, seq, body, reply, record)
                return response
            response = web.json_response(completion_body(seq, body, reply, self.models), headers=reply_headers(reply, seq))
            return response
        finally:
            with self._changed:
                record.end = time.perf_counter()
                record.status = None if record.dropped else (response.status if response is not None else None)
                self._in_flight -= 1
                self._changed.notify_all()

    async def _stream(self, request: web.Request, seq: int, body: dict, reply: Reply,
                      record: RequestRecord) -> web.StreamResponse:
        """The answer as server-sent events, a piece at a time (``reply.piece_delay_s`` apart), noting how many
        went out before the client closed the stream."""
        pieces, end = stream_events(seq, body, reply, self.models)
        response = web.StreamResponse(headers={**reply_headers(reply, seq), "Content-Type": "text/event-stream"})
        await response.prepare(request)
        try:
            for piece in pieces:
                await response.write(piece)
                record.pieces_streamed += 1
                if reply.piece_delay_s and await self._sleep(reply.piece_delay_s):
                    break
            await response.write(end)
            await response.write_eof()
        except (ConnectionError, RuntimeError):  # the client closed the stream
            record.client_left = True
        return response

    def _drop(self, request: web.Request) -> web.StreamResponse:
        transport = request.transport
        if transport is not None:
            transport.abort()
        # aiohttp's attempt to write this to the closed transport raises ConnectionError, which it swallows.
        return web.Response(status=599)

    def _model_obj(self, name: str) -> dict:
        return {"id": name, "object": "model", "created": 1700000000, "owned_by": "fake-openai-server"}

    async def _handle_models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [self._model_obj(m) for m in self.models]})

    async def _handle_model(self, request: web.Request) -> web.Response:
        name = request.match_info["model"]
        if name not in self.models:
            return _json_error(404, f"The model '{name}' does not exist", code="model_not_found", param="model")
        return web.json_response(self._model_obj(name))

    async def _handle_unknown(self, request: web.Request) -> web.Response:
        return _json_error(404, f"Unknown request URL: {request.method} {request.path}", code="unknown_url")


def _json_error(status: int, message: str, *, code: str | None = None, param: str | None = None) -> web.Response:
    return web.json_response(error_body(status, message, code=code, param=param), status=status)


