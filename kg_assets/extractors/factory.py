"""The extractor a setting chooses, built: the entity extractor and the user-fact extractor of
`ExtractorSettings.engine` (auto, heuristic, llm, or a `module:attr` plug-in).

The settings only describe the choice; building it lives here, so `kg_assets.settings` imports nothing
from the extractors. Each engine is imported only when chosen: the LLM engine loads openai and instructor,
seconds that an offline run should not pay.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

from kg_assets.settings import BUILTIN_ENGINES, EXTRACTOR_MEMBERS, ExtractorSettings, plugin_factory, redact_url

if TYPE_CHECKING:
    from kg_assets.core.facts.records import FactExtractor
    from kg_assets.extractors.base import Extractor


def build_extractor(settings: ExtractorSettings, run_id: str | None = None, progress=None) -> Extractor:
    """The entity extractor: the plug-in named, else the LLM when `settings.uses_llm`, else the heuristic."""
    if settings.engine not in BUILTIN_ENGINES:
        return _build_plugin(settings.engine, tuple(settings.entity_types))
    if not settings.uses_llm:
        from kg_assets.extractors.heuristic import HeuristicExtractor

        return HeuristicExtractor(entity_types=tuple(settings.entity_types))
    from kg_assets.extractors.llm.engine import LLMExtractor

    return LLMExtractor(settings, run_id=run_id, progress=progress)


def build_fact_extractor(settings: ExtractorSettings, run_id: str | None = None) -> FactExtractor:
    """The user-fact extractor of the same choice: the LLM through the same engine, else the heuristic
    (an in-process entity extractor has no fact counterpart, so it gets the heuristic too)."""
    if not settings.uses_llm:
        from kg_assets.extractors.facts.heuristic import HeuristicFactExtractor

        return HeuristicFactExtractor()
    from kg_assets.extractors.llm.facts import LLMFactExtractor

    return LLMFactExtractor(settings, run_id=run_id)


def describe_extractor(settings: ExtractorSettings, extractor: Extractor | FactExtractor) -> str:
    """What a log line or a run's metadata says about the extractor at work."""
    if settings.engine not in BUILTIN_ENGINES and extractor.name != "facts-heuristic":
        return f"in-process extractor {extractor.name} {extractor.version} ({settings.engine})"
    if extractor.name in ("heuristic", "facts-heuristic"):
        return "offline heuristic extractor (no LLM configured: set OPENAI_API_KEY or OPENAI_BASE_URL)"
    return (f"LLM {settings.model} at {redact_url(settings.base_url or 'https://api.openai.com/v1')} "
            f"({settings.output_format} format)")


def _build_plugin(spec: str, entity_types: tuple[str, ...]) -> Extractor:
    """An instance of the plug-in: called with entity_types when it takes them, else with nothing."""
    factory = plugin_factory(spec)
    try:
        takes_types = "entity_types" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        takes_types = False
    extractor = factory(entity_types=entity_types) if takes_types else factory()
    missing = [m for m in EXTRACTOR_MEMBERS if not hasattr(extractor, m)]
    if missing:
        raise TypeError(f"KG_EXTRACTOR={spec} made {type(extractor).__name__}, which has no {', '.join(missing)}")
    return extractor
