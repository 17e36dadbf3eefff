"""Reading text: index terms, token counts, roles, dates; and making untrusted text safe to show
(:mod:`engine.text.terms.inert`) and to store (:mod:`engine.text.terms.redaction`)."""
