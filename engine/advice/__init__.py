"""The curation model's advice pass: what it is shown (:mod:`engine.advice.brief`), what it may
answer (:mod:`engine.advice.advice`), and how the answer is checked (:mod:`engine.advice.rules`)."""
