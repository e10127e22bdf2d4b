"""Reading one answer of the LLM: what counts as a failure (empty, degenerate, unreadable), and why.

A cut answer (the token cap) is never complete; a copy of the prompt's example is dropped; an answer that
echoes the prompt or loops is degenerate; one that says nothing is empty. The engine (`engine.py`) sends,
retries, caches and logs; this module only reads.
"""

from __future__ import annotations

from collections.abc import Sequence

import openai
from instructor.core import InstructorError

from kg_assets.core.extraction.prompts import ExtractionOut, drop_example_copies, from_structured
from kg_assets.core.extraction.records import ParsedOutput
from kg_assets.core.extraction.tuple_format import COMPLETE, parse_tuples, repetition


class ParseFailure(ValueError):
    """The model answered, but nothing usable could be read from the answer."""

    status = "parse_error"  # the call's status in kg.llm_calls


class EmptyAnswer(ParseFailure):
    """An answer without any record that does not say there is none either: blank (tuple), or `{ }` with every
    field left out to its default (structured, first pass). The model gave nothing, which is
    a failure, never an extraction of nothing; not cached, so a rerun asks again. (``<|COMPLETE|>`` alone and
    empty lists are the prompt's own way to say that a text names nothing: those are answers.)"""

    status = "empty"


class DegenerateAnswer(ParseFailure):
    """An answer that loops (repeats lines or a phrase) or echoes the prompt, and holds no record."""

    status = "degenerate"


def read_extraction_answer(content: str, gleaning_pass: int, truncated: bool, messages: Sequence[dict],
                           output_format: str) -> ParsedOutput:
    """One extraction answer read. Cut by the token cap (``truncated``): not complete, whatever it holds.
    Records copying the prompt's example are dropped (counted). Raises EmptyAnswer for a first answer
    without any record, DegenerateAnswer for a loop or an echo of the prompt without any record, and
    ParseFailure for an answer that cannot be read."""
    said_nothing = False  # no record and no statement that there is none
    if output_format == "structured":
        try:
            out = ExtractionOut.model_validate_json(content)
        except ValueError as exc:
            raise ParseFailure(f"structured output did not validate: {str(exc)[:300]}") from exc
        parsed = from_structured(out, gleaning_pass=gleaning_pass)
        said_nothing = not ({"entities", "relations", "attributes"} & out.model_fields_set)  # `{ }`: all defaults
    else:
        parsed = parse_tuples(content, gleaning_pass=gleaning_pass, truncated=truncated)
    if truncated:
        parsed.complete = parsed.nothing_missing = False
    drop_example_copies(parsed)
    echo = echoed_prompt_lines(content, messages) + parsed.echoed_lines
    if echo and parsed.degenerate is None:
        parsed.degenerate = f"the answer repeats {echo} line{'s' * (echo != 1)} of the prompt"
    if parsed.record_count:
        return parsed
    if parsed.degenerate or parsed.example_copies:
        failure = DegenerateAnswer(
            f"degenerate answer without a record: {parsed.degenerate}" + (" (cut by the token cap)" if truncated else "")
            if parsed.degenerate else f"the answer only copied the prompt's example ({parsed.example_copies} records)")
        failure.example_copies = parsed.example_copies
        raise failure
    if output_format == "tuple" and not parsed.complete:
        if not content.strip():
            said_nothing = True  # blank (prose or JSON without a record is unreadable: a parse error)
        else:
            reason = "truncated" if truncated else f"no records and no {COMPLETE}"
            raise ParseFailure(f"unparseable tuple output ({reason}; {len(parsed.bad_lines)} bad lines)")
    if said_nothing and (gleaning_pass == 0 or output_format == "tuple"):
        what = "{ }, every field left out" if output_format == "structured" else "blank"
        raise EmptyAnswer(f"empty answer: {what} ({len(content.strip())} characters)")
    return parsed  # "nothing here" said explicitly: <|COMPLETE|> alone, or empty lists


def structured_failure(exc: InstructorError, call: dict) -> Exception:
    """What instructor's error stands for: the API error it wraps (as in tuple mode), else a parse failure.

    instructor wraps every failure of a call, HTTP errors included, in its own exception; the tokens of an
    answer that did not validate were paid for, so they go on the call row."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, openai.APIError):
            return cause
        cause = cause.__cause__ or cause.__context__
    usage = getattr(getattr(exc, "last_completion", None), "usage", None)
    if usage is not None:
        call.update(prompt_tokens=int(usage.prompt_tokens or 0), completion_tokens=int(usage.completion_tokens or 0))
    return ParseFailure(f"structured output did not validate: {type(exc).__name__}: {str(exc)[:300]}")


ECHO_MIN_CHARS = 25  # an answer line this long found verbatim among the prompt's lines is an echo


def echoed_prompt_lines(content: str, messages: Sequence[dict]) -> int:
    """How many lines of the answer repeat a line of the system prompt (its instructions, templates or example)."""
    if not messages:
        return 0
    prompt = {" ".join(line.split()) for line in str(messages[0].get("content") or "").splitlines()}
    return sum(1 for line in content.splitlines()
               if len(key := " ".join(line.split())) >= ECHO_MIN_CHARS and key in prompt)


STOP_ECHO_LINES = 3  # answer lines copied from the prompt after which a streamed answer is not read further
STREAM_CHECK_CHARS = 200  # a streamed answer is checked at each line break and at least this often


async def read_stream(stream: openai.AsyncStream, messages: Sequence[dict]) -> tuple[str, object, str | None, str | None]:
    """A streamed answer read as it comes: (text, usage or None, finish reason, why it was stopped or None).

    At each new line the text so far is checked; a loop (a line repeated, a phrase over and over) or an echo
    of the prompt closes the stream there, which stops the server computing the rest, instead of paying up
    to the token cap for it. What came before stays, to be parsed as a cut answer."""
    parts: list[str] = []
    usage, finish, unchecked = None, None, 0
    async for chunk in stream:
        usage = chunk.usage or usage
        if not chunk.choices:
            continue
        piece = chunk.choices[0].delta.content or ""
        parts.append(piece)
        finish = chunk.choices[0].finish_reason or finish
        unchecked += len(piece)
        if "\n" in piece or unchecked >= STREAM_CHECK_CHARS:  # a phrase can loop without a line break
            text, unchecked = "".join(parts), 0
            echoed = echoed_prompt_lines(text, messages)
            stopped = repetition(text) or (f"the answer repeats {echoed} lines of the prompt"
                                           if echoed >= STOP_ECHO_LINES else None)
            if stopped:
                await stream.close()
                return text, None, finish, stopped
    return "".join(parts), usage, finish, None


def plain_text_answer(content: str, gleaning_pass: int | None, truncated: bool) -> str:
    if not content.strip():
        raise ParseFailure("empty answer")
    return content.strip()
