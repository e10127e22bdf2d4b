"""A real, local OpenAI-compatible HTTP server for tests and benchmarks: scripted answers, injectable latency
and faults.

`FakeOpenAIServer` runs an aiohttp application on ``127.0.0.1:<free port>`` in a background thread with its
own asyncio event loop, so the official ``openai`` client (sync or async) and ``instructor`` talk to it over
real sockets. Every request is handled as an asyncio task: injected delays are ``await``-ed, so many
requests in flight overlap instead of queueing.

Endpoints
    ``POST /v1/chat/completions``  an OpenAI ``chat.completion`` object (``stream: true`` -> 400)
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
    schemas are counted, so tests can predict it exactly with :func:`prompt_tokens_of`.
    ``completion_tokens`` is the token count of the returned content / arguments. If the tokenizer cannot
    be loaded, counts fall back to ``ceil(len(text) / 4)``. ``Reply.prompt_tokens`` /
    ``Reply.completion_tokens`` override either.

Use it as a context manager (``with FakeOpenAIServer() as srv: ...``); the test suite's ``openai_server``
fixture (kg_assets_tests/conftest.py) gives each test a started one.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import math
import random
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal, Union

from aiohttp import web

__all__ = [
    "FakeOpenAIServer",
    "Reply",
    "RequestRecord",
    "count_tokens",
    "message_text",
    "last_user_text",
    "all_text",
    "user_turns",
    "prompt_tokens_of",
]

DEFAULT_MODEL = "gpt-4o-mini"


# --------------------------------------------------------------------------------------------------------------
# Replies
# --------------------------------------------------------------------------------------------------------------

_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("authentication_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "not_found"),
    408: ("timeout", None),
    409: ("conflict", None),
    422: ("invalid_request_error", None),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}

MALFORMED_CONTENT = '<<not json>> {"entities": [("Ada Lovelace", "PERSON"'


@dataclass
class Reply:
    """One scripted answer.

    content            text, or the JSON string used as tool-call arguments when tools are requested
                       (a dict/list is dumped to JSON); None -> the default content
    status             HTTP status; non-200 sends an OpenAI error body {"error": {message, type, param, code}}
    delay_s            extra seconds to wait before answering (added to the server's ``latency_s``)
    error_type         "type" of the error body (default derived from the status)
    error_message      "message" of the error body
    error_code         "code" of the error body (default derived from the status)
    headers            extra response headers, e.g. {"retry-after": "0.1"}
    finish_reason      "stop" (reported as "tool_calls" for tool answers), "length" to simulate truncation, ...
    drop_connection    close the socket without any response (a network fault)
    prompt_tokens      override the computed usage.prompt_tokens
    completion_tokens  override the computed usage.completion_tokens
    tool_name          override the tool name put in the tool call
    tool_calls         several tool calls at once, [(name, arguments_json), ...] (parallel tools)
    """

    content: str | None = None
    status: int = 200
    delay_s: float = 0.0
    error_type: str | None = None
    error_message: str | None = None
    error_code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    finish_reason: str = "stop"
    drop_connection: bool = False
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    tool_name: str | None = None
    tool_calls: list[tuple[str, str]] | None = None

    def __post_init__(self) -> None:
        if self.content is not None and not isinstance(self.content, str):
            self.content = json.dumps(self.content)
        if self.tool_calls is not None:
            self.tool_calls = [(n, a if isinstance(a, str) else json.dumps(a)) for n, a in self.tool_calls]

    # -- helpers -------------------------------------------------------------------------------------------
    @classmethod
    def ok(cls, content: Any, **kw: Any) -> Reply:
        return cls(content=content, **kw)

    @classmethod
    def rate_limited(cls, retry_after: float = 0.1, **kw: Any) -> Reply:
        """429 with ``retry-after`` (seconds; the openai client honours floats) and ``retry-after-ms``."""
        headers = {"retry-after": _num(retry_after), "retry-after-ms": _num(retry_after * 1000)}
        headers.update(kw.pop("headers", {}))
        kw.setdefault("error_message", "Rate limit reached (fake server).")
        return cls(status=429, headers=headers, **kw)

    @classmethod
    def server_error(cls, status: int = 500, **kw: Any) -> Reply:
        kw.setdefault("error_message", "The server had an error while processing your request (fake server).")
        return cls(status=status, **kw)

    @classmethod
    def error(cls, status: int, message: str = "error (fake server)", **kw: Any) -> Reply:
        return cls(status=status, error_message=message, **kw)

    @classmethod
    def timeout(cls, seconds: float = 5.0, content: Any = None, **kw: Any) -> Reply:
        """Sleep ``seconds`` (choose more than the client's timeout) and then answer normally."""
        return cls(content=content, delay_s=seconds, **kw)

    @classmethod
    def malformed(cls, content: str = MALFORMED_CONTENT, **kw: Any) -> Reply:
        """200 whose content is not valid JSON (nor valid tuples); delivered verbatim."""
        return cls(content=content, **kw)

    @classmethod
    def truncated(cls, content: Any = '{"entities": [', **kw: Any) -> Reply:
        """200 with finish_reason "length" (the model hit max_tokens)."""
        return cls(content=content, finish_reason="length", **kw)

    @classmethod
    def dropped(cls, delay_s: float = 0.0) -> Reply:
        """Close the connection without answering."""
        return cls(drop_connection=True, delay_s=delay_s)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


ReplyLike = Union[Reply, str, dict, list]
Responder = Callable[[dict], Any]  # (request_json) -> ReplyLike | None (or an awaitable of it)


def _as_reply(value: Any) -> Reply | None:
    if value is None or isinstance(value, Reply):
        return value
    if isinstance(value, (str, dict, list)):
        return Reply(content=value)
    raise TypeError(f"a reply must be Reply, str, dict or list, not {type(value).__name__}")


# --------------------------------------------------------------------------------------------------------------
# Request helpers (usable by responders and tests)
# --------------------------------------------------------------------------------------------------------------


def message_text(message: dict) -> str:
    """The text of one chat message: string content, the text parts of list content, tool-call arguments."""
    content = message.get("content")
    parts: list[str] = []
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
    for call in message.get("tool_calls") or []:
        args = (call.get("function") or {}).get("arguments")
        if isinstance(args, str):
            parts.append(args)
    return "\n".join(parts)


def last_user_text(request: dict) -> str:
    """Text of the last ``role: user`` message ("" if none)."""
    for message in reversed(request.get("messages") or []):
        if message.get("role") == "user":
            return message_text(message)
    return ""


def all_text(request: dict) -> str:
    """Text of every message, joined by newlines."""
    return "\n".join(message_text(m) for m in request.get("messages") or [])


def user_turns(request: dict) -> int:
    """How many ``role: user`` messages the request has (1 = first pass, >1 = a follow-up such as gleaning)."""
    return sum(1 for m in request.get("messages") or [] if m.get("role") == "user")


@lru_cache(maxsize=1)
def _encoding():
    try:
        import bpe_openai

        return bpe_openai.get_encoding("o200k_base")
    except Exception:  # pragma: no cover - the tokenizer is installed in the project venv
        return None


def count_tokens(text: str | None) -> int:
    """o200k_base token count (special-token text counted as ordinary text); ceil(len/4) without tokenizer."""
    if not text:
        return 0
    enc = _encoding()
    if enc is not None:
        try:
            return len(enc.encode_ordinary(text))
        except Exception:  # pragma: no cover
            pass
    return math.ceil(len(text) / 4)


def prompt_tokens_of(request: dict) -> int:
    """The prompt_tokens the server reports for ``request`` (sum of per-message token counts)."""
    return sum(count_tokens(message_text(m)) for m in request.get("messages") or [])


# --------------------------------------------------------------------------------------------------------------
# Records and rules
# --------------------------------------------------------------------------------------------------------------


@dataclass
class RequestRecord:
    """One chat-completions request as the server saw it (times are ``time.perf_counter()`` values)."""

    seq: int
    body: dict | None
    headers: dict[str, str]
    start: float
    end: float | None = None
    status: int | None = None  # None while in flight, or when the connection was dropped
    dropped: bool = False
    fault: bool = False
    reply: Reply | None = None

    @property
    def duration(self) -> float | None:
        return None if self.end is None else self.end - self.start


Scope = Literal["last_user", "any", "system"]
Match = Union[str, Sequence[str], Callable[[dict], bool]]


@dataclass
class _Rule:
    match: Match
    replies: list[Any]
    scope: Scope
    times: int | None
    hits: int = 0

    def matches(self, request: dict) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        if callable(self.match):
            return bool(self.match(request))
        if self.scope == "last_user":
            text = last_user_text(request)
        elif self.scope == "system":
            text = "\n".join(message_text(m) for m in request.get("messages") or [] if m.get("role") == "system")
        else:
            text = all_text(request)
        needles = [self.match] if isinstance(self.match, str) else list(self.match)
        return all(n in text for n in needles)

    def take(self) -> Any:
        reply = self.replies[min(self.hits, len(self.replies) - 1)]
        self.hits += 1
        return reply


def _error_body(status: int, message: str, type_: str | None = None, code: str | None = None, param=None) -> dict:
    default_type, default_code = _ERROR_TYPES.get(status, ("server_error" if status >= 500 else "api_error", None))
    return {
        "error": {
            "message": message,
            "type": type_ or default_type,
            "param": param,
            "code": code if code is not None else default_code,
        }
    }


# --------------------------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------------------------


class FakeOpenAIServer:
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
        self.host = host
        self._requested_port = port
        self.shutdown_timeout_s = shutdown_timeout_s
        self._initial = dict(
            responder=responder,
            models=list(models),
            latency_s=latency_s,
            fail_every_n=fail_every_n,
            fault_rate=fault_rate,
            fault_reply=_as_reply(fault_reply),
            seed=seed,
            default_reply=_as_reply(default_reply),
        )
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._stop_event: asyncio.Event | None = None
        self._sock: socket.socket | None = None
        self.port: int | None = None
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
            self._rules: list[_Rule] = []
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
                self._queue.append(_as_reply(r))
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
        prepared = [r if callable(r) and not isinstance(r, Reply) else _as_reply(r) for r in replies]
        with self._lock:
            self._rules.append(_Rule(match, prepared, scope, times))
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

    # -- lifecycle -----------------------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        if self.port is None:
            raise RuntimeError("server not started")
        return f"http://{self.host}:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> FakeOpenAIServer:
        if self.running:
            return self
        _encoding()  # load the tokenizer (~1 s, once per process) here, not inside the first request
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
            target=self._serve, args=(ready, failure), name=f"FakeOpenAIServer:{self.port}", daemon=True
        )
        self._thread.start()
        if not ready.wait(10) or failure:
            self.stop()
            raise RuntimeError(f"FakeOpenAIServer failed to start: {failure[0] if failure else 'timeout'}")
        return self

    def _serve(self, ready: threading.Event, failure: list[BaseException]) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            self._stop_event = asyncio.Event()
            app = web.Application(client_max_size=64 * 1024 * 1024)
            app.router.add_post("/v1/chat/completions", self._handle_chat)
            app.router.add_get("/v1/models", self._handle_models)
            app.router.add_get("/v1/models/{model}", self._handle_model)
            app.router.add_route("*", "/{tail:.*}", self._handle_unknown)
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
        self._stop_event.set()  # wakes every delayed handler; they drop their connections
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

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

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
        return _as_reply(result)

    def _default_reply(self, body: dict) -> Reply:
        if self.default_reply is not None:
            return self.default_reply
        return Reply(content="{}" if _wants_json(body) else "OK")

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
            if not isinstance(body, dict):
                response = _json_error(400, "We could not parse the JSON body of your request.")
                return response
            if body.get("stream"):
                response = _json_error(
                    400,
                    "stream=true is not supported by FakeOpenAIServer",
                    code="unsupported_parameter",
                    param="stream",
                )
                return response
            if not isinstance(body.get("messages"), list):
                response = _json_error(400, "'messages' is a required property", param="messages")
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
                body_err = _error_body(
                    reply.status,
                    reply.error_message or f"fake error {reply.status}",
                    reply.error_type,
                    reply.error_code,
                )
                response = web.json_response(body_err, status=reply.status, headers=_headers(reply, seq))
                return response
            response = web.json_response(self._completion(seq, body, reply), headers=_headers(reply, seq))
            return response
        finally:
            with self._changed:
                record.end = time.perf_counter()
                record.status = None if record.dropped else (response.status if response is not None else None)
                self._in_flight -= 1
                self._changed.notify_all()

    def _drop(self, request: web.Request) -> web.StreamResponse:
        transport = request.transport
        if transport is not None:
            transport.abort()
        # aiohttp's attempt to write this to the closed transport raises ConnectionError, which it swallows.
        return web.Response(status=599)

    def _completion(self, seq: int, body: dict, reply: Reply) -> dict:
        content = reply.content
        model = body.get("model") or (self.models[0] if self.models else DEFAULT_MODEL)
        tool_name = _requested_tool(body)
        message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
        finish = reply.finish_reason
        if reply.tool_calls or tool_name is not None:
            calls = reply.tool_calls or [(reply.tool_name or tool_name, content if content is not None else "{}")]
            message["tool_calls"] = [
                {"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function", "function": {"name": n, "arguments": a}}
                for n, a in calls
            ]
            completion_text = "".join(a for _, a in calls)
            if finish == "stop":
                finish = "tool_calls"
        else:
            message["content"] = content if content is not None else ""
            completion_text = message["content"]
        prompt_tokens = reply.prompt_tokens if reply.prompt_tokens is not None else prompt_tokens_of(body)
        completion_tokens = (
            reply.completion_tokens if reply.completion_tokens is not None else count_tokens(completion_text)
        )
        return {
            "id": f"chatcmpl-fake{seq:06d}{uuid.uuid4().hex[:8]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

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


def _headers(reply: Reply, seq: int) -> dict[str, str]:
    headers = {"x-request-id": f"req_fake_{seq}"}
    headers.update({str(k): str(v) for k, v in (reply.headers or {}).items()})
    return headers


def _json_error(status: int, message: str, *, code: str | None = None, param: str | None = None) -> web.Response:
    return web.json_response(_error_body(status, message, code=code, param=param), status=status)


def _requested_tool(body: dict) -> str | None:
    """The function name a tool-calling request asks for, or None when the answer should be plain content."""
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    choice = body.get("tool_choice")
    if not tools or choice == "none":
        return None
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name") or choice.get("name")
        if name:
            return name
    first = tools[0]
    return (first.get("function") or {}).get("name") or first.get("name") or "function"


def _wants_json(body: dict) -> bool:
    fmt = body.get("response_format")
    wants_format = isinstance(fmt, dict) and fmt.get("type") in ("json_object", "json_schema")
    return wants_format or _requested_tool(body) is not None
