"""What the fake OpenAI server knows about a request: its text and token counts (for responders and tests),
and the rules that match requests to scripted replies."""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Union

from kg_assets.core.tokens import count_tokens

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


IMAGE_TOKENS = 85  # what OpenAI counts for one image at low detail


def image_parts(request: dict) -> list[dict]:
    """The ``image_url`` content parts of every message, each as {"url", "media_type", "data", "sha256"}:
    a ``data:`` URL is decoded (``data`` the image bytes, ``sha256`` their hex digest); ValueError for a
    part without a URL or with a data URL that is not base64."""
    out = []
    for message in request.get("messages") or []:
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            if not (isinstance(part, dict) and part.get("type") == "image_url"):
                continue
            url = (part.get("image_url") or {}).get("url") if isinstance(part.get("image_url"), dict) else None
            if not isinstance(url, str) or not url:
                raise ValueError("an image_url part needs image_url.url")
            media_type, data = None, None
            if url.startswith("data:"):
                head, _, payload = url.partition(",")
                if not head.endswith(";base64"):
                    raise ValueError("an image data URL must be base64")
                media_type = head[5:-7]
                try:
                    data = base64.b64decode(payload, validate=True)
                except binascii.Error as exc:
                    raise ValueError(f"invalid base64 image data: {exc}") from exc
            out.append({"url": url, "media_type": media_type, "data": data,
                        "sha256": hashlib.sha256(data).hexdigest() if data is not None else None})
    return out


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


def prompt_tokens_of(request: dict) -> int:
    """The prompt_tokens the server reports for ``request``: per-message token counts, plus IMAGE_TOKENS per image."""
    images = sum(1 for m in request.get("messages") or [] if isinstance(m.get("content"), list)
                 for part in m["content"] if isinstance(part, dict) and part.get("type") == "image_url")
    return sum(count_tokens(message_text(m)) for m in request.get("messages") or []) + IMAGE_TOKENS * images


Scope = Literal["last_user", "any", "system", "image"]
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
        elif self.scope == "image":  # the sha256 hex digests of the request's images
            text = "\n".join(part["sha256"] or part["url"] for part in image_parts(request))
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



def request_problem(body: Any) -> dict | None:
    """Why OpenAI would refuse this chat request body with a 400 (the message, code and param of its error
    body), or None when the server can answer it."""
    if not isinstance(body, dict):
        return {"message": "We could not parse the JSON body of your request."}
    if body.get("stream") and body.get("tools"):
        return {"message": "stream=true with tools is not supported by FakeOpenAIServer",
                "code": "unsupported_parameter", "param": "stream"}
    if not isinstance(body.get("messages"), list):
        return {"message": "'messages' is a required property", "param": "messages"}
    try:
        image_parts(body)
    except ValueError as exc:
        return {"message": f"Invalid image: {exc}", "code": "invalid_image", "param": "messages"}
    return None
