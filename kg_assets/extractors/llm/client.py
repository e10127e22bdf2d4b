"""The HTTP side of the LLM engine: the openai client, which never resends a request that timed out, the timeout
error with what it stands for, and the instructor tools requests are answered with."""

from __future__ import annotations

from dataclasses import dataclass

import instructor
import openai
from pydantic import ConfigDict

from kg_assets.core.extraction.prompts import ExtractionOut
from kg_assets.settings import LLMSettings


class ExtractionTool(ExtractionOut, instructor.OpenAISchema):
    """Entities, relations and attribute facts of one text."""

    # instructor wraps a plain model in a new class on every call, so its schema cache never hits and each
    # request rebuilds the JSON schema (~3 ms of CPU); a model that already is an OpenAISchema is used as is.
    model_config = ConfigDict(title=ExtractionOut.__name__)  # the tool the model sees keeps its name


try:  # the HTTP library's timeouts, as the openai client catches them
    from openai._httpx2 import timeout_exceptions as _timeout_exceptions

    _TIMEOUTS: tuple[type[BaseException], ...] = _timeout_exceptions()
except ImportError:  # other openai versions use httpx itself
    import httpx

    _TIMEOUTS = (httpx.TimeoutException,)


class Client(openai.AsyncOpenAI):
    """The openai client, except that a request that timed out is never sent again.

    The client's own retries (429, 5xx, dropped connections, with backoff and Retry-After) still apply, but
    a timeout means the model takes longer than KG_LLM_TIMEOUT_S; a server that is still computing the
    answer (a local llama.cpp, Ollama or vLLM keeps going after the client gave up) would get the same
    request again behind it, and the retry would time out too. The chunk fails, naming the setting to raise,
    and the next run asks again. (An OpenAIError raised here is passed on by the client without a retry.)"""

    async def _send_request(self, request, **kwargs):
        try:
            return await super()._send_request(request, **kwargs)
        except _TIMEOUTS as exc:
            error = openai.APITimeoutError(request=request)
            error.attempts = int(request.headers.get("x-stainless-retry-count") or 0) + 1
            raise error from exc


@dataclass(frozen=True)
class ToolRequest:
    """A request answered by an instructor tool other than entity extraction (user facts): how it is keyed
    in the cache (`params` with the prompt version) and logged (`output_format`, `prompt_version`)."""

    response_model: type[instructor.OpenAISchema]
    output_format: str
    prompt_version: str

    def params(self, settings: LLMSettings) -> dict[str, object]:
        return {**settings.params, "format": self.output_format, "prompt_version": self.prompt_version}


def explained_timeout(exc: openai.APITimeoutError, timeout_s: float) -> openai.APITimeoutError:
    """The timeout error with what it stands for: the setting, the attempts made and what to do."""
    attempts = getattr(exc, "attempts", 1)
    message = (f"no answer within KG_LLM_TIMEOUT_S={timeout_s:g} s ({attempts} attempt{'s' * (attempts != 1)}; a "
               "request that timed out is not resent, the server may still be computing it): raise KG_LLM_TIMEOUT_S "
               "for a slow or local model (docs/llm.md, local models)")
    exc.message, exc.args = message, (message,)
    return exc
