"""The ``local/`` provider: a small model embedded through llama.cpp, for offline runs."""
