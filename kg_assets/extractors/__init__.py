"""Extractors: the engines that turn text into entities, relations and facts."""
