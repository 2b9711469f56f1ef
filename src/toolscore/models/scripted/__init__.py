"""Scripted models that need no network and no weights: the oracle and recorded replies."""
