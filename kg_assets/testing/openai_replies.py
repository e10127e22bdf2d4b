"""Replies of the fake OpenAI server: the `Reply` a test scripts (answers and every fault it can inject), the
record of each request it served and the reply it got, and the OpenAI-shaped bodies built from a reply
(chat.completion objects, error bodies, headers)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from kg_assets.testing.openai_requests import count_tokens, prompt_tokens_of

DEFAULT_MODEL = "gpt-4o-mini"

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
    piece_delay_s       with ``stream: true``: seconds between the pieces of the answer (a model's speed)
    stream_usage       False: a streamed answer ends without usage even when asked (llama-cpp-python's server)
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
    piece_delay_s: float = 0.0
    stream_usage: bool = True

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


# Every fault the server can inject, by name: each call gives a fresh Reply. The fault matrix of the test suite
# (test_llm_faults.py) and the drill (scripts/drill.py) both go through all of them.
FAULTS: dict[str, Callable[[], Reply]] = {
    "429 with Retry-After": lambda: Reply.rate_limited(retry_after=0.05),
    "500": lambda: Reply.server_error(),
    "timeout": lambda: Reply.timeout(3),
    "dropped connection": lambda: Reply.dropped(),
    "truncated": lambda: Reply.truncated(),
    "malformed": lambda: Reply.malformed(),
    "empty": lambda: Reply(content=""),
    "wrong schema": lambda: Reply(content={"entities": "Marcus Webb", "people": [{"who": 1}]}),
}


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
    pieces_streamed: int = 0  # with ``stream: true``: answer pieces sent before the end or the client left
    client_left: bool = False  # the client closed a streamed answer before its end

    @property
    def duration(self) -> float | None:
        return None if self.end is None else self.end - self.start


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


ReplyLike = Union[Reply, str, dict, list]
Responder = Callable[[dict], Any]  # (request_json) -> ReplyLike | None (or an awaitable of it)


def as_reply(value: Any) -> Reply | None:
    if value is None or isinstance(value, Reply):
        return value
    if isinstance(value, (str, dict, list)):
        return Reply(content=value)
    raise TypeError(f"a reply must be Reply, str, dict or list, not {type(value).__name__}")


def error_body(status: int, message: str, type_: str | None = None, code: str | None = None, param=None) -> dict:
    default_type, default_code = _ERROR_TYPES.get(status, ("server_error" if status >= 500 else "api_error", None))
    return {
        "error": {
            "message": message,
            "type": type_ or default_type,
            "param": param,
            "code": code if code is not None else default_code,
        }
    }



def reply_headers(reply: Reply, seq: int) -> dict[str, str]:
    headers = {"x-request-id": f"req_fake_{seq}"}
    headers.update({str(k): str(v) for k, v in (reply.headers or {}).items()})
    return headers


def completion_body(seq: int, body: dict, reply: Reply, models: Sequence[str]) -> dict:
    """The chat.completion object answering ``body`` with ``reply`` (tool calls when tools are requested)."""
    content = reply.content
    model = body.get("model") or (models[0] if models else DEFAULT_MODEL)
    tool_name = requested_tool(body)
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


STREAM_PIECE_CHARS = 40  # a streamed answer comes in pieces of a line at most this long, as tokens come


def stream_events(seq: int, body: dict, reply: Reply, models: Sequence[str]) -> tuple[list[bytes], bytes]:
    """The server-sent events of a streamed answer: one `chat.completion.chunk` per piece of a line, and
    the closing events (the finish reason, then the usage when ``stream_options.include_usage``, then
    ``[DONE]``)."""
    whole = completion_body(seq, body, reply, models)

    def event(choices: list, usage: dict | None = None) -> bytes:
        chunk = {"id": whole["id"], "object": "chat.completion.chunk", "created": whole["created"],
                 "model": whole["model"], "system_fingerprint": "fp_fake", "choices": choices, "usage": usage}
        return f"data: {json.dumps(chunk)}\n\n".encode()

    content = whole["choices"][0]["message"]["content"] or ""
    pieces = [line[i:i + STREAM_PIECE_CHARS] for line in content.splitlines(keepends=True)
              for i in range(0, len(line), STREAM_PIECE_CHARS)]
    lines = [event([{"index": 0, "delta": {"role": "assistant", "content": piece}, "finish_reason": None}])
             for piece in pieces]
    end = event([{"index": 0, "delta": {}, "finish_reason": whole["choices"][0]["finish_reason"]}])
    if (body.get("stream_options") or {}).get("include_usage") and reply.stream_usage:
        end += event([], whole["usage"])
    return lines, end + b"data: [DONE]\n\n"


def requested_tool(body: dict) -> str | None:
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


def wants_json(body: dict) -> bool:
    fmt = body.get("response_format")
    wants_format = isinstance(fmt, dict) and fmt.get("type") in ("json_object", "json_schema")
    return wants_format or requested_tool(body) is not None
