from kg_assets.extractors.heuristic.extractor import HeuristicExtractor, split_sentences

__all__ = ["HeuristicExtractor", "split_sentences"]
