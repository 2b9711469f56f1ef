"""Test doubles at the true edge of the system (e.g. an OpenAI-compatible HTTP server)."""
