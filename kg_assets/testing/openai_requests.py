"""What the fake OpenAI server knows about a request: its text and token counts (for responders and tests),
the record of each request it served, and the rules that match requests to scripted replies."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Union

from kg_assets.core.tokens import encoding

if TYPE_CHECKING:
    from kg_assets.testing.openai_replies import Reply

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


def load_tokenizer():
    """The project's one tokenizer (core/tokens.py), so the server's usage counts match the engine's."""
    return encoding()


def count_tokens(text: str | None) -> int:
    """o200k_base token count (special-token text counted as ordinary text)."""
    return len(encoding().encode_ordinary(text)) if text else 0


def prompt_tokens_of(request: dict) -> int:
    """The prompt_tokens the server reports for ``request`` (sum of per-message token counts)."""
    return sum(count_tokens(message_text(m)) for m in request.get("messages") or [])


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
class Rule:
    """Replies for the requests a match (substrings or a predicate) applies to, at most `times` times."""

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

