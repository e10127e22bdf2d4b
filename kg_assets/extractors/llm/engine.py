"""LLM extraction through OpenAI or any OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp, Azure).

One request per chunk (plus gleaning passes) yields entities, relations and attribute observations
together, in the tuple format (parsed line by line with partial recovery) or as a pydantic object
through instructor. Every request is cached by the hash of model, prompt version, messages and
parameters, so an unchanged chunk costs nothing on a rerun; calls run concurrently under a semaphore,
requests- and tokens-per-minute limits, a per-call timeout and the client's own retries (exponential
backoff with jitter, Retry-After honoured) on 429, 5xx, timeouts and connection errors.
"""

from __future__ import annotations

import asyncio
import gc
from collections import Counter
from pathlib import Path
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import instructor
from instructor.core import InstructorError
import openai
import openai.resources.chat  # noqa: F401  the SDK would import it at the first request (~0.5 s, stalling the loop)
import polars as pl
from aiolimiter import AsyncLimiter

from kg_assets.core import schemas
from kg_assets.core.extraction.figures import FIGURE_PROMPT_VERSION, add_figure_node, figure_messages
from kg_assets.core.extraction.prompts import (
    PROMPT_VERSION,
    build_gleaning_messages,
    build_messages,
    count_message_tokens,
    prompt_hash,
)
from kg_assets.core.extraction.records import ParsedOutput, merge_passes
from kg_assets.core.extraction.rows import (
    ChunkRecords,
    ExtractionResult,
    MentionRecord,
    ObservationRecord,
    RelationRecord,
    build_rows,
)
from kg_assets.core.extraction.sanitize import row_records
from kg_assets.core.extraction.working_memory import WorkingMemory
from kg_assets.core.files.pdf_figures import Figure, pdf_figures
from kg_assets.core.normalize import stable_hash
from kg_assets.core.tokens import count_tokens
from kg_assets.extractors.base import settings_digest
from kg_assets.extractors.llm.client import Client, ExtractionTool, ToolRequest, explained_timeout
from kg_assets.extractors.llm.order import by_document, round_robin
from kg_assets.extractors.llm.passes import record_keys, sanitized, shown_names
from kg_assets.extractors.llm.progress import PROGRESS_EVERY_CHUNKS, PROGRESS_EVERY_S, progress_message
from kg_assets.extractors.llm.answers import (
    ParseFailure,
    plain_text_answer,
    read_extraction_answer,
    read_stream,
    structured_failure,
)
from kg_assets.storage.llm_cache import LLMCache
from kg_assets.settings import LLMSettings

# `with stage_timer(name):` wraps each stage of the engine's work, for benchmarks: "requests" (every chunk's
# requests; entered inside the event loop), "build prompt", "hash prompt", "cache", "parse answer", "sanitize"
# and "frames" (the result frames, after the requests).
StageTimer = Callable[[str], AbstractContextManager[object]]
_UNTIMED = nullcontext()


@dataclass
class _ChunkState:
    row: dict
    passes: list[tuple[int, ParsedOutput]] = field(default_factory=list)
    error: str | None = None
    merged: ParsedOutput | None = None  # passes merged and sanitized
    # the merged answer as records for the row builder (sanitize.row_records)
    records: tuple[list[MentionRecord], list[RelationRecord], list[ObservationRecord]] = ((), (), ())


class LLMExtractor:
    """The `Extractor` for OpenAI-compatible chat models."""

    name = "llm"
    # 2: ids from the shared row builder; 3: its per-document ids of lower-case descriptions; 4: no row for a
    # nationality or religion word (core/extraction/demonyms.py) or a role word; titles split from names; 5: no
    # row for a phrase describing people by nationality or faith ("Six Israelis", "Franco-German"); titles come
    # off places and organisations behind a title of two words ("Prime Minister Silvio Berlusconi" typed LOCATION),
    # off the end of a byline's name ("Kyle James Editor"), and a body before a title is no name ("US Secretary");
    # working memory and gleaning list only the names that made rows; relation keywords a list
    # 6: an answer cut by the token cap is never complete, a terminator inside prose ends nothing, records
    # copying the prompt's example or its template lines are dropped, an answer that says nothing fails
    # 7: the row builder gives a concept written in lower case ("machine learning", CONCEPT or TECHNOLOGY) one id
    # in every document, as a name (`normalize.is_description_expr`)
    # 8: a mention's name is the chunk's own writing of it ("Sarah Chen", not the model's "SARAH_CHEN"); 9: the row
    # builder makes no row for an office of two or three words ("Chief Technology Officer")
    code_version = "llm-9"
    example_copies_dropped = 0  # in the last extract(): records that copied the prompt's example, dropped

    def __init__(self, settings: LLMSettings, run_id: str | None = None, progress=None,
                 stage_timer: StageTimer | None = None, progress_every_s: float = PROGRESS_EVERY_S):
        self.settings = settings
        self.run_id = run_id
        self.progress = progress  # optional callable(message): extraction progress with the time left
        self.progress_every_s = progress_every_s
        self._stage = stage_timer or (lambda name: _UNTIMED)
        s = settings
        self.entity_types = tuple(s.entity_types)  # hashable: the prompt builders cache on it
        # Everything else that changes the rows: the prompt's types and cap, the request and the sanitizer.
        digest = settings_digest(
            entity_types=self.entity_types, temperature=s.temperature, max_completion_tokens=s.max_completion_tokens,
            completion_ratio=s.completion_ratio,
            unknown_types=s.unknown_types, orphan_relations=s.orphan_relations, max_entities=s.max_entities,
            max_relations=s.max_relations, max_attributes=s.max_attributes,
            working_memory_tokens=s.working_memory_tokens,
        )
        self.version = (f"{self.code_version}/{PROMPT_VERSION}/{s.output_format}/{s.model}/g{s.max_gleanings}"
                        f"{s.gleaning[0]}/{digest}")
        if s.vision_model:  # figures are described, so their rows change; text chunks' do not, but one version
            self.version += f"/vision:{s.vision_model}/{FIGURE_PROMPT_VERSION}"

    # ---- public ----------------------------------------------------------------------------
    def extract(self, chunks: pl.DataFrame) -> ExtractionResult:
        if chunks.height == 0:
            return ExtractionResult.empty()
        self._calls: list[dict] = []
        self.example_copies_dropped = 0  # in answers kept or failed (the extraction's asset metadata)
        rows = list(chunks.iter_rows(named=True))
        # how many figure chunks will still ask for each PDF's figures: its parsed images go when none will
        self._figure_chunks_left = Counter(r["document_path"] for r in rows if r.get("kind") == "figure")
        states = self._run(self._extract_all, [_ChunkState(row) for row in rows])
        with self._stage("frames"):
            return self._frames(states)

    def summarize(self, requests: dict[str, list[dict]]) -> dict[str, str]:
        """Plain-text answers for {key: messages}, cached like extraction; failed keys are left out."""
        self._calls = []
        return self._run(self._summarize_all, requests) if requests else {}

    @property
    def calls(self) -> pl.DataFrame:
        """The requests and cache hits of the last extract() or summarize() (LLM_CALLS rows)."""
        if not self._calls:
            return schemas.empty(schemas.LLM_CALLS)
        frame = pl.DataFrame(self._calls, infer_schema_length=None)
        return schemas.conform(frame.with_columns(pl.col("created_at").str.to_datetime(time_zone="UTC")), schemas.LLM_CALLS)

    def _run(self, work, items):
        # What exists before the run (modules, Dagster's state, the chunk rows) outlives it: frozen, it is
        # not rescanned by every full garbage collection, which would otherwise stall the event loop for
        # ~0.1 s each (and longer in a Dagster step process) while requests wait for their answers.
        gc.freeze()
        try:
            with LLMCache(self.settings.cache_path) as cache:
                return asyncio.run(self._session(work, items, cache))
        finally:
            gc.unfreeze()

    async def _session(self, work, items, cache: LLMCache):
        s = self.settings
        self._client = Client(
            base_url=s.base_url, api_key=s.api_key or "not-needed", timeout=s.timeout_s, max_retries=s.max_retries
        )
        self._structured = None
        if s.output_format == "structured":
            self._structured = instructor.from_openai(self._client, mode=instructor.Mode.TOOLS)
        # Tool requests (user facts) are structured whatever the extraction format is.
        self._tools = self._structured or instructor.from_openai(self._client, mode=instructor.Mode.TOOLS)
        self._cache = cache
        self._pdf_figures: dict[str, asyncio.Future[list[Figure]]] = {}
        self._semaphore = asyncio.Semaphore(s.concurrency)
        self._rpm = AsyncLimiter(s.requests_per_minute, 60) if s.requests_per_minute else None
        self._tpm = AsyncLimiter(s.tokens_per_minute, 60) if s.tokens_per_minute else None
        try:
            return await work(items)
        finally:
            await self._client.close()

    def first_pass_messages(self, row: dict, known: Sequence[tuple[str, str]] = ()) -> list[dict]:
        """The first request for one chunk; ``known`` (name, type) pairs come from the working memory."""
        return build_messages(row["text"], **self._prompt_context(row, known))

    def gleaning_messages(self, row: dict, found: Sequence[tuple[str, str]], failed: Sequence[str] = (),
                          known: Sequence[tuple[str, str]] = ()) -> list[dict]:
        """A gleaning request for one chunk: ``found`` (name, type) pairs, ``failed`` unparsed lines."""
        return build_gleaning_messages(row["text"], found_entities=found, failed_lines=failed,
                                       **self._prompt_context(row, known))

    def completion_budget(self, row: dict) -> int:
        """max_tokens of the chunk's extraction requests: sized to its text (KG_LLM_COMPLETION_RATIO), so a
        model that loops stops after a few times the chunk's tokens, never later than KG_LLM_MAX_COMPLETION_TOKENS."""
        return self.settings.completion_budget(count_tokens(row["text"]))

    def chunk_params(self, row: dict) -> dict[str, object]:
        """The parameters of the chunk's extraction requests (part of their cache key)."""
        return {**self.settings.params, "max_tokens": self.completion_budget(row)}

    def _prompt_context(self, row: dict, known: Sequence[tuple[str, str]]) -> dict:
        s = self.settings
        return {"fmt": s.output_format, "max_attributes": s.max_attributes, "entity_types": self.entity_types,
                "section_path": row.get("section_path"), "headings": row.get("headings") or (),
                "known_entities": known}

    # ---- orchestration ---------------------------------------------------------------------
    async def _extract_all(self, states: list[_ChunkState]) -> list[_ChunkState]:
        """Every chunk, fair across documents: requests wait for the semaphore in the order they are made
        (asyncio's queue is FIFO), so a long document cannot take every slot before a short one starts.

        With working memory a document's chunks go one after another (each prompt carries what the earlier
        ones named), so a document holds at most one slot and its next chunk queues behind the other
        documents' requests. Without it, the chunks are queued round-robin across documents.
        """
        done, total, started = 0, len(states), time.monotonic()
        documents = by_document(states, lambda state: state.row)

        def report() -> None:
            if self.progress:
                self.progress(progress_message(done, total, time.monotonic() - started))

        def finished() -> None:
            nonlocal done
            done += 1
            if done % PROGRESS_EVERY_CHUNKS == 0 or done == total:
                report()

        async def every_interval() -> None:  # also while no chunk finishes: a slow server's calls take minutes
            while True:
                await asyncio.sleep(self.progress_every_s)
                report()

        async def document_in_order(chunks: list[_ChunkState]) -> None:
            memory = WorkingMemory(self.settings.working_memory_tokens)
            for state in chunks:
                memory.enter(state.row.get("section_path"))
                await self._chunk(state, memory.known())
                memory.remember(shown_names(state.records, state.row))
                finished()

        async def alone(state: _ChunkState) -> None:
            await self._chunk(state, ())
            finished()

        ticker = asyncio.create_task(every_interval())
        try:
            with self._stage("requests"):
                if self.settings.working_memory_tokens:
                    await asyncio.gather(*(document_in_order(chunks) for chunks in documents))
                else:
                    await asyncio.gather(*(alone(state) for state in round_robin(documents)))
        finally:
            ticker.cancel()
        return states

    async def _summarize_all(self, requests: dict[str, list[dict]]) -> dict[str, str]:
        async def one(key: str, messages: list[dict]) -> tuple[str, str | None]:
            try:
                return key, await self._ask(messages, {"chunk_id": None, "document_id": None, "gleaning_pass": None},
                                            plain_text_answer, plain_text=True)
            except (openai.APIError, ParseFailure):
                return key, None  # logged in the call log; the caller keeps its deterministic text

        answers = await asyncio.gather(*(one(k, m) for k, m in requests.items()))
        return {key: text for key, text in answers if text}

    async def _chunk(self, state: _ChunkState, remembered: Sequence[tuple[str, str]]) -> None:
        s = self.settings
        try:
            if state.row.get("kind") == "figure" and s.vision_model:
                description = await self._describe_figure(state.row)
                state.row = {**state.row, "text": f"{state.row['text']}\n\n{description}"}
            row = state.row
            with self._stage("build prompt"):
                messages = self.first_pass_messages(row, remembered)
            budget = self.completion_budget(row)
            parsed = await self._ask(messages, _where(row, 0), self._parser(messages), max_tokens=budget)
            state.passes.append((0, parsed))
            for gleaning in range(1, s.max_gleanings + 1):
                if state.passes[-1][1].degenerate:  # a loop or an echo: asking again repeats it
                    break
                if s.gleaning == "auto" and not state.passes[-1][1].needs_gleaning:
                    break
                failed = [line for _, p in state.passes[-1:] for line in p.bad_lines]
                with self._stage("build prompt"):
                    so_far = sanitized(merge_passes([p for _, p in state.passes]), self)
                    found = shown_names(row_records(so_far, row["text"]), row)
                    messages = self.gleaning_messages(row, found, failed, remembered)
                known = record_keys(state.passes)
                more = await self._ask(messages, _where(row, gleaning), self._parser(messages), max_tokens=budget)
                state.passes.append((gleaning, more))
                # Stop when the model says nothing is missing, or repeats only what was already found.
                if more.nothing_missing or record_keys([(gleaning, more)]) <= known:
                    break
        except (openai.APIError, ParseFailure) as exc:
            state.error = f"pass {len(state.passes)}: {type(exc).__name__}: {exc}"[:500]
        # Done here, while other chunks still wait on the model, rather than all at the end.
        with self._stage("sanitize"):
            state.merged = sanitized(merge_passes([parsed for _, parsed in state.passes]), self)
            state.records = row_records(state.merged, state.row["text"])

    async def _describe_figure(self, row: dict) -> str:
        """The vision model's description of a figure chunk's image, read again from the PDF; ParseFailure
        when the file no longer holds that image (the next run chunks it again)."""
        try:
            figures = await self._figures_of(row["document_path"])
        except (OSError, ValueError) as exc:
            raise ParseFailure(f"cannot read the figure's image: {exc}") from exc
        figure = next((f for f in figures if (f.page, f.figure_number) == (row["page"], row["figure_number"])
                       and f.image), None)
        if figure is None or stable_hash(row["text"], figure.image_sha256) != row["content_hash"]:
            raise ParseFailure("the PDF changed after it was chunked: the figure's image is not the one chunked")
        messages = figure_messages(row["text"], figure.image, figure.media_type)
        return await self._ask(messages, {**_where(row, 0), "gleaning_pass": None}, plain_text_answer, plain_text=True,
                               vision=True)

    async def _figures_of(self, path: str) -> list[Figure]:
        """The figures of one PDF, parsed once for all its figure chunks, in a worker thread: parsing and
        decoding images must not stall the requests in flight. Kept until its last figure chunk asked."""
        if path not in self._pdf_figures:
            read = asyncio.to_thread(lambda: pdf_figures(Path(path).read_bytes()))
            self._pdf_figures[path] = asyncio.ensure_future(read)
        try:
            return await self._pdf_figures[path]
        finally:
            self._figure_chunks_left[path] -= 1
            if self._figure_chunks_left[path] <= 0:
                self._pdf_figures.pop(path, None)

    async def _ask(self, messages: list[dict], where: dict, parse, plain_text: bool = False,
                   tool: ToolRequest | None = None, vision: bool = False, max_tokens: int | None = None):
        """One cached request: `parse(content, gleaning_pass, truncated)` turns the answer into a result.

        With `tool`, the answer is that instructor tool's arguments (JSON text), whatever KG_LLM_FORMAT says.
        With `vision`, the request goes to KG_VISION_MODEL (plain text) and is logged as output format 'vision'.
        `max_tokens`: the answer's cap (a chunk's budget), else KG_LLM_MAX_COMPLETION_TOKENS."""
        s = self.settings
        model = s.vision_model if vision else s.model
        structured = tool is not None or (self._structured is not None and not plain_text)
        max_tokens = max_tokens or s.max_completion_tokens
        params = tool.params(s) if tool else s.params
        if max_tokens != s.max_completion_tokens:
            params = {**params, "max_tokens": max_tokens}
        with self._stage("hash prompt"):
            key = prompt_hash(messages, model, params)
        output_format = tool.output_format if tool else "vision" if vision else "text" if plain_text else s.output_format
        prompt_version = tool.prompt_version if tool else FIGURE_PROMPT_VERSION if vision else PROMPT_VERSION
        call = {
            "call_id": uuid.uuid4().hex, "run_id": self.run_id, **where, "model": model,
            "prompt_version": prompt_version, "prompt_hash": key,
            "output_format": output_format, "prompt_tokens": 0, "completion_tokens": 0, "latency_ms": 0.0,
            "cost_usd": 0.0,
        }
        with self._stage("cache"):
            cached = self._cache.get(key)
        try:
            if cached is not None:
                call.update(status="cache_hit", prompt_tokens=cached["prompt_tokens"], completion_tokens=cached["completion_tokens"])
                with self._stage("parse answer"):
                    return parse(cached["content"], where["gleaning_pass"], False)
            content, prompt_tokens, completion_tokens, truncated = await self._request(
                messages, call, structured, tool.response_model if tool else ExtractionTool, model, max_tokens)
            call.update(status="ok", prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                        cost_usd=s.cost(prompt_tokens, completion_tokens))
            with self._stage("parse answer"):
                result = parse(content, where["gleaning_pass"], truncated)
            self.example_copies_dropped += getattr(result, "example_copies", 0)
            if getattr(result, "degenerate", None):  # a loop or an echo that still held records: kept, noted
                call.update(status="degenerate",
                            error=_noted(call, f"degenerate answer, records kept: {result.degenerate}"))
            with self._stage("cache"):
                self._cache.put(key, model, content, prompt_tokens, completion_tokens, _now())
            return result
        except ParseFailure as exc:
            self.example_copies_dropped += getattr(exc, "example_copies", 0)
            call.update(status=exc.status, error=_noted(call, str(exc)),
                        cost_usd=s.cost(call["prompt_tokens"], call["completion_tokens"]))
            with self._stage("cache"):
                self._cache.forget(key)  # never serve an unusable answer from the cache
            raise
        except openai.APIError as exc:
            call.update(status="error", error=f"{type(exc).__name__}: {exc}"[:500])
            raise
        finally:
            call["created_at"] = _now()
            with self._stage("cache"):
                self._cache.log_call(call)
            self._calls.append(call)

    async def _request(self, messages: list[dict], call: dict, structured: bool,
                       response_model: type[instructor.OpenAISchema] = ExtractionTool,
                       model: str | None = None, max_tokens: int | None = None) -> tuple[str, int, int, bool]:
        s = self.settings
        model = model or s.model
        max_tokens = max_tokens or s.max_completion_tokens
        if self._tpm is not None:
            estimate = count_message_tokens(messages) + max_tokens
            await self._tpm.acquire(min(estimate, s.tokens_per_minute))
        if self._rpm is not None:
            await self._rpm.acquire()
        async with self._semaphore:
            # Logged before it is sent, so a run killed while it waits still accounts for the request.
            with self._stage("cache"):
                self._cache.log_call({**call, "status": "sent", "created_at": _now()})
            started = time.perf_counter()
            try:
                content, usage, finish, stopped = await self._send(messages, call, structured, response_model, model,
                                                                   max_tokens)
            except openai.APITimeoutError as exc:
                raise explained_timeout(exc, s.timeout_s)  # the same error, its message explained
            finally:
                call["latency_ms"] = (time.perf_counter() - started) * 1000
        if stopped or usage is None:
            # A stream closed early has no usage from the server, nor has one from a server that ignores
            # `include_usage` (llama-cpp-python's): the prompt and what was read, counted here.
            if stopped:
                call["error"] = f"stream stopped: {stopped}"[:500]
            return (content, count_message_tokens(messages),
                    count_tokens(content), bool(stopped) or finish == "length")
        return content, int(usage.prompt_tokens), int(usage.completion_tokens), finish == "length"

    def _parser(self, messages: list[dict]):
        return lambda content, gleaning_pass, truncated: self.parse(content, gleaning_pass, truncated, messages)

    async def _send(self, messages: list[dict], call: dict, structured: bool,
                    response_model: type[instructor.OpenAISchema], model: str, max_tokens: int):
        """One request sent (the client's retries included): the answer's text, its usage, why it ended, and why
        it was stopped early (a streamed answer that looped or echoed the prompt), else None."""
        s = self.settings
        if structured:
            try:
                _, completion = await self._tools.chat.completions.create_with_completion(
                    model=model, messages=messages, response_model=response_model, max_retries=0,
                    temperature=s.temperature, max_tokens=max_tokens,
                )
            except InstructorError as exc:
                raise structured_failure(exc, call) from exc
            message = completion.choices[0].message
            content = message.tool_calls[0].function.arguments if message.tool_calls else (message.content or "")
            return content, completion.usage, completion.choices[0].finish_reason, None
        if s.stream:
            stream = await self._client.chat.completions.create(
                model=model, messages=messages, temperature=s.temperature, max_tokens=max_tokens, stream=True,
                stream_options={"include_usage": True},
            )
            return await read_stream(stream, messages)
        completion = await self._client.chat.completions.create(
            model=model, messages=messages, temperature=s.temperature, max_tokens=max_tokens,
        )
        return completion.choices[0].message.content or "", completion.usage, completion.choices[0].finish_reason, None

    def parse(self, content: str, gleaning_pass: int, truncated: bool, messages: Sequence[dict] = ()) -> ParsedOutput:
        return read_extraction_answer(content, gleaning_pass, truncated, messages, self.settings.output_format)

    # ---- results -----------------------------------------------------------------------------
    def _frames(self, states: Sequence[_ChunkState]) -> ExtractionResult:
        records = []
        for state in states:
            row = state.row
            chunk = ChunkRecords(
                row["chunk_id"], row["document_id"], row.get("content_hash"), *(list(r) for r in state.records),
                error=state.error, passes=len(state.passes), bad_lines=sum(len(p.bad_lines) for _, p in state.passes),
                complete=bool(state.passes) and all(p.complete for _, p in state.passes),
            )
            add_figure_node(chunk, row, row["text"])  # a figure's text is its caption and description here
            records.append(chunk)
        result = build_rows(records, extractor=self.name, extractor_version=self.version)
        return replace(result, calls=self.calls)


def _noted(call: dict, message: str) -> str:
    """A call's error message, after the note already on it (a stream stopped early says why first)."""
    return "; ".join(filter(None, [call.get("error"), message]))[:500]


def _where(row: dict, gleaning_pass: int) -> dict:
    return {"chunk_id": row["chunk_id"], "document_id": row["document_id"], "gleaning_pass": gleaning_pass}


def _now() -> str:
    return datetime.now(UTC).isoformat()
