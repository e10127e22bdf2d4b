"""The fake OpenAI server answers the real openai / instructor clients over real sockets."""

import asyncio
import json
import threading
import time

import instructor
import openai
import pydantic
import pytest

from kg_assets.testing.openai_server import (
    FakeOpenAIServer,
    Reply,
    count_tokens,
    image_parts,
    prompt_tokens_of,
    user_turns,
)

MODEL = "gpt-4o-mini"


class Person(pydantic.BaseModel):
    name: str
    age: int


def client(server, **kw):
    kw.setdefault("max_retries", 0)
    return openai.OpenAI(base_url=server.base_url, api_key="test", **kw)


def ask(c, text, **kw):
    return c.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": text}], **kw)


def server_threads():
    return [t for t in threading.enumerate() if t.name.startswith("FakeOpenAIServer")]


def test_plain_client_gets_scripted_content_usage_and_models(openai_server):
    openai_server.script("Hello from the fake model.")
    messages = [
        {"role": "system", "content": "You extract entities."},
        {"role": "user", "content": "Dr. Sarah Chen works at Qubitline in Boston."},
    ]
    with client(openai_server) as c:
        resp = c.chat.completions.create(model=MODEL, messages=messages, temperature=0)
        models = [m.id for m in c.models.list()]
    assert resp.object == "chat.completion" and resp.id.startswith("chatcmpl-") and resp.model == MODEL
    choice = resp.choices[0]
    assert choice.message.role == "assistant" and choice.message.content == "Hello from the fake model."
    assert choice.finish_reason == "stop" and not choice.message.tool_calls
    expected_prompt = count_tokens(messages[0]["content"]) + count_tokens(messages[1]["content"])
    assert resp.usage.prompt_tokens == expected_prompt == prompt_tokens_of(openai_server.requests[0])
    assert resp.usage.completion_tokens == count_tokens("Hello from the fake model.") > 0
    assert resp.usage.total_tokens == resp.usage.prompt_tokens + resp.usage.completion_tokens
    assert openai_server.calls == 1 and openai_server.requests[0]["messages"] == messages
    assert openai_server.requests[0]["temperature"] == 0
    assert models == [MODEL]


def test_image_parts_are_parsed_matched_by_their_bytes_and_counted(openai_server):
    import base64
    import hashlib

    picture, other = b"\x89PNG fake image one", b"\x89PNG fake image two"
    openai_server.respond_when(hashlib.sha256(picture).hexdigest(), "A bar chart.", scope="image")

    def parts(image: bytes) -> list[dict]:
        url = "data:image/png;base64," + base64.b64encode(image).decode()
        return [{"role": "user", "content": [{"type": "text", "text": "Describe it."},
                                             {"type": "image_url", "image_url": {"url": url}}]}]

    with client(openai_server) as c:
        seen = c.chat.completions.create(model=MODEL, messages=parts(picture))
        unseen = c.chat.completions.create(model=MODEL, messages=parts(other))
        with pytest.raises(openai.BadRequestError, match="Invalid image"):
            c.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": [
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,not base64!"}}]}])
    assert seen.choices[0].message.content == "A bar chart." and unseen.choices[0].message.content == "OK"
    [image] = image_parts(openai_server.requests[0])
    assert (image["media_type"], image["data"]) == ("image/png", picture)
    assert seen.usage.prompt_tokens == count_tokens("Describe it.") + 85 == prompt_tokens_of(openai_server.requests[0])


def test_usage_overrides_truncation_and_default_reply(openai_server):
    openai_server.script(Reply("cut", finish_reason="length", prompt_tokens=1000, completion_tokens=7))
    with client(openai_server) as c:
        cut = ask(c, "x")
        default = ask(c, "y")
    assert cut.choices[0].finish_reason == "length"
    assert (cut.usage.prompt_tokens, cut.usage.completion_tokens, cut.usage.total_tokens) == (1000, 7, 1007)
    assert default.choices[0].message.content == "OK"


def test_instructor_sync_parses_a_tool_call(openai_server):
    openai_server.script({"name": "Ada Lovelace", "age": 36})
    ic = instructor.from_openai(client(openai_server))
    person, completion = ic.chat.completions.create_with_completion(
        model=MODEL, response_model=Person, messages=[{"role": "user", "content": "Ada Lovelace, 36."}]
    )
    assert isinstance(person, Person) and person.model_dump() == {"name": "Ada Lovelace", "age": 36}
    request = openai_server.requests[0]
    assert request["tools"][0]["type"] == "function" and request["tools"][0]["function"]["name"] == "Person"
    assert request["tool_choice"] == {"type": "function", "function": {"name": "Person"}}
    message = completion.choices[0].message
    assert message.content is None and completion.choices[0].finish_reason == "tool_calls"
    assert message.tool_calls[0].type == "function" and message.tool_calls[0].function.name == "Person"
    assert json.loads(message.tool_calls[0].function.arguments) == {"name": "Ada Lovelace", "age": 36}


def test_instructor_async_parses_a_tool_call(openai_server):
    openai_server.set_responder(lambda req: Reply(json.dumps({"name": "Grace", "age": 85})))

    async def main():
        raw = openai.AsyncOpenAI(base_url=openai_server.base_url, api_key="test", max_retries=0)
        try:
            ic = instructor.from_openai(raw)
            return await asyncio.gather(
                *(
                    ic.chat.completions.create(
                        model=MODEL, response_model=Person, messages=[{"role": "user", "content": f"p{i}"}]
                    )
                    for i in range(3)
                )
            )
        finally:
            await raw.close()

    assert [p.model_dump() for p in asyncio.run(main())] == [{"name": "Grace", "age": 85}] * 3
    assert openai_server.calls == 3


def test_json_object_and_json_schema_modes_return_content(openai_server):
    openai_server.script('{"name": "Alan", "age": 41}', '{"name": "Alan", "age": 41}')
    with client(openai_server) as c:
        resp = ask(c, "json please", response_format={"type": "json_object"})
        assert json.loads(resp.choices[0].message.content) == {"name": "Alan", "age": 41}
        ic = instructor.from_openai(c, mode=instructor.Mode.JSON_SCHEMA)
        person = ic.chat.completions.create(
            model=MODEL, response_model=Person, messages=[{"role": "user", "content": "schema"}]
        )
    assert person.model_dump() == {"name": "Alan", "age": 41}
    assert openai_server.requests[0]["response_format"] == {"type": "json_object"}
    assert openai_server.requests[1]["response_format"]["type"] == "json_schema"
    assert "tools" not in openai_server.requests[1]


def test_rate_limit_with_retry_after_then_success_uses_client_retries(openai_server):
    openai_server.script(Reply.rate_limited(retry_after=0.1), "after the wait")
    started = time.perf_counter()
    with client(openai_server, max_retries=2) as c:
        resp = ask(c, "hi")
    assert resp.choices[0].message.content == "after the wait"
    assert openai_server.calls == 2 and time.perf_counter() - started >= 0.1
    first, second = openai_server.records
    assert first.status == 429 and second.status == 200
    assert second.headers.get("x-stainless-retry-count") == "1"


def test_rate_limit_error_body_without_retries(openai_server):
    openai_server.script(Reply.rate_limited(retry_after=0.1))
    with client(openai_server) as c, pytest.raises(openai.RateLimitError) as err:
        ask(c, "hi")
    assert err.value.status_code == 429 and err.value.code == "rate_limit_exceeded"
    assert err.value.response.headers["retry-after"] == "0.1"


def test_timeout_reply_raises_api_timeout_error(openai_server):
    openai_server.script(Reply.timeout(3.0))
    started = time.perf_counter()
    with client(openai_server, timeout=0.3) as c, pytest.raises(openai.APITimeoutError):
        ask(c, "slow")
    assert time.perf_counter() - started < 1.5 and openai_server.calls == 1


def test_server_error_is_internal_server_error(openai_server):
    openai_server.script(Reply.server_error())
    with client(openai_server) as c, pytest.raises(openai.InternalServerError) as err:
        ask(c, "boom")
    assert err.value.status_code == 500 and err.value.body["type"] == "server_error"
    assert openai_server.calls == 1


def test_dropped_connection_is_a_connection_error_and_a_streamed_tool_call_is_rejected(openai_server):
    openai_server.script(Reply.dropped())
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    with client(openai_server) as c:
        with pytest.raises(openai.APIConnectionError):
            ask(c, "drop")
        with pytest.raises(openai.BadRequestError) as err:
            ask(c, "stream", stream=True, tools=[tool])
        assert ask(c, "still alive").choices[0].message.content == "OK"
    assert err.value.body["param"] == "stream"
    assert openai_server.records[0].dropped and openai_server.records[0].status is None


def test_a_streamed_answer_comes_in_pieces_with_its_finish_reason_and_usage(openai_server):
    answer = "first line of the answer, long enough to come in two pieces\nsecond\n"
    openai_server.script(Reply(content=answer, finish_reason="length"))
    with client(openai_server) as c:
        chunks = list(ask(c, "stream me", stream=True, stream_options={"include_usage": True}))
    pieces = [ch.choices[0].delta.content for ch in chunks if ch.choices and ch.choices[0].delta.content]
    assert "".join(pieces) == answer and len(pieces) == 3
    assert [ch.choices[0].finish_reason for ch in chunks if ch.choices][-1] == "length"
    assert chunks[-1].usage.completion_tokens > 0 and not chunks[-1].choices
    assert openai_server.records[0].pieces_streamed == 3 and not openai_server.records[0].client_left


def test_64_concurrent_requests_with_latency_overlap(openai_server):
    # A latency long enough that even a loaded machine sends all 64 requests before the first answer comes.
    openai_server.latency_s = 1.0
    openai_server.set_responder(lambda req: f"echo {req['messages'][-1]['content']}")

    async def ask_async(c, text):
        return await c.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": text}])

    async def main():
        c = openai.AsyncOpenAI(base_url=openai_server.base_url, api_key="test", max_retries=0)
        try:
            await ask_async(c, "warm-up")
            return await asyncio.gather(*(ask_async(c, f"chunk {i}") for i in range(64)))
        finally:
            await c.close()

    results = asyncio.run(main())
    assert [r.choices[0].message.content for r in results] == [f"echo chunk {i}" for i in range(64)]
    timings = openai_server.timings[1:]
    # overlap, not wall time (a loaded machine stretches that): half the requests were open at once
    assert openai_server.calls == 65 and openai_server.peak_in_flight >= 32
    assert all(end - start >= 0.99 for start, end in timings)
    # the latencies ran side by side: the 64 requests were each open while the first one was
    first_end = min(end for _, end in timings)
    assert sum(start < first_end for start, _ in timings) >= 32


def test_respond_when_routes_by_chunk_and_pass(openai_server):
    srv = openai_server
    gleaning = "MANY entities were missed"
    # per chunk, the second matching request (the gleaning follow-up) gets the second reply
    srv.respond_when("Chunk A", '{"entities": ["A1"]}', '{"entities": ["A2"]}', scope="any")
    srv.respond_when("Chunk B", Reply('{"entities": ["B1"]}'), times=1)
    srv.respond_when(lambda req: user_turns(req) > 1, "generic follow-up")
    srv.set_responder(lambda req: "from responder" if "special" in req["messages"][-1]["content"] else None)

    def convo(chunk, follow_up=False):
        messages = [{"role": "system", "content": "extract"}, {"role": "user", "content": chunk}]
        if follow_up:
            messages += [{"role": "assistant", "content": "..."}, {"role": "user", "content": gleaning}]
        return messages

    with client(srv) as c:
        out = [
            c.chat.completions.create(model=MODEL, messages=m).choices[0].message.content
            for m in (
                convo("Chunk A text"),
                convo("Chunk A text", follow_up=True),
                convo("Chunk B text"),
                convo("Chunk B text", follow_up=True),  # the B rule is used up and looks at the last user message
                convo("Chunk C special"),
                convo("Chunk D"),
            )
        ]
    assert out == [
        '{"entities": ["A1"]}',
        '{"entities": ["A2"]}',
        '{"entities": ["B1"]}',
        "generic follow-up",
        "from responder",
        "OK",
    ]


def test_malformed_content_reaches_the_client_verbatim(openai_server):
    bad = Reply.malformed()
    openai_server.script(bad, bad)
    with client(openai_server) as c:
        text = ask(c, "x").choices[0].message.content
        tool = c.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "y"}],
            tools=[{"type": "function", "function": {"name": "Person", "parameters": Person.model_json_schema()}}],
            tool_choice={"type": "function", "function": {"name": "Person"}},
        )
    assert text == bad.content
    assert tool.choices[0].message.tool_calls[0].function.arguments == bad.content
    with pytest.raises(ValueError):
        json.loads(bad.content)


def test_fault_injection_every_n_and_seeded_rate():
    with FakeOpenAIServer(fail_every_n=3) as srv, client(srv) as c:
        srv.script("first", "second", "third")
        statuses = []
        for i in range(4):
            try:
                statuses.append(ask(c, str(i)).choices[0].message.content)
            except openai.InternalServerError:
                statuses.append(500)
        # the fault did not consume the scripted "third"
        assert statuses == ["first", "second", 500, "third"]



def statuses_with_fault_rate(seed):
    with FakeOpenAIServer(fault_rate=0.5, seed=seed, fault_reply=Reply.rate_limited(0.01)) as srv, client(srv) as c:
        for _ in range(12):
            try:
                ask(c, "z")
            except openai.RateLimitError:
                pass
        return [r.status for r in srv.records]


def test_fault_rate_is_seeded():
    pattern = statuses_with_fault_rate(7)
    assert statuses_with_fault_rate(7) == pattern and {200, 429} <= set(pattern)


def test_stop_with_requests_in_flight_returns_promptly():
    srv = FakeOpenAIServer(latency_s=30).start()
    errors = []

    def worker():
        try:
            with client(srv) as c:
                ask(c, "hang")
        except Exception as exc:
            errors.append(exc)

    workers = [threading.Thread(target=worker) for _ in range(6)]
    for w in workers:
        w.start()
    assert srv.wait_for_calls(6, timeout=5)
    assert not srv.wait_until_idle(timeout=0.2), "six requests are still being answered"
    started = time.perf_counter()
    srv.stop()
    assert time.perf_counter() - started < 2.0
    for w in workers:
        w.join(5)
    assert not any(w.is_alive() for w in workers)
    assert len(errors) == 6 and all(isinstance(e, openai.APIConnectionError) for e in errors)
    assert not server_threads() and not srv.running


def test_context_manager_reset_and_no_thread_leak():
    with FakeOpenAIServer(models=["m-a", "m-b"], latency_s=0.01) as srv, client(srv) as c:
        assert srv.base_url.startswith("http://127.0.0.1:") and srv.base_url.endswith("/v1")
        assert [m.id for m in c.models.list()] == ["m-a", "m-b"]
        assert c.models.retrieve("m-b").id == "m-b"
        srv.script("a")
        srv.respond_when("q", "b")
        srv.latency_s = 0
        ask(c, "q")
        srv.reset()
        assert (srv.calls, srv.pending_scripts, srv.latency_s) == (0, 0, 0.01)
        assert ask(c, "q").choices[0].message.content == "OK"
    assert not server_threads()


def test_the_scripted_model_serves_kg_run_by_hand_until_terminated():
    # docs/llm.md: `python -m kg_assets.testing.scripted_llm --port 8765 &` for trying kg run against an LLM
    import signal
    import socket
    import subprocess
    import sys

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "kg_assets.testing.scripted_llm", "--port", str(port),
                               "--latency", "0.05"], stdout=subprocess.PIPE, text=True)
    try:
        first = server.stdout.readline()
        assert first.strip() == f"scripted OpenAI-compatible model at http://127.0.0.1:{port}/v1"
        answer = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="test").chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": 'Text:\n"""\nDr. Sarah Chen works at QDL.\n"""'}])
        assert answer.choices[0].message.content.startswith("entity<|#|>Sarah Chen<|#|>PERSON")
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0
        assert server.stdout.read().strip() == "served 1 requests"
    finally:
        server.kill()
