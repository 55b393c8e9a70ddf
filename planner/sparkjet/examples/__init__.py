"""Small pipelines that run from an installed sparkjet: ``sparkjet run -m sparkjet.examples.word_count``."""
