"""Test doubles that talk real protocols, for the test suite, benchmarks and trying the pipeline by hand.

- `openai_server`: a local OpenAI-compatible HTTP server with scripted answers, latency and faults.
- `scripted_llm`: a scripted "model" that answers extraction prompts from a gazetteer;
  `python -m kg_assets.testing.scripted_llm --port 8765` serves it.

Their extra dependencies (aiohttp) come with the `dev` extra: `pip install -e ".[dev]"`.
"""
