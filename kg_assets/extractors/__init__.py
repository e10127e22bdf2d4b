"""Extractors behind one small interface (`base.Extractor`): the offline heuristic and the LLM engine."""
