"""Heedful curation engine: pure, typed, no Textual and no network."""
