"""Summaries that stand in for older items: offline (:mod:`engine.summaries.offline.offline`) or written by
a model away from the turn (:class:`engine.summaries.offline.service.SummaryService`)."""
