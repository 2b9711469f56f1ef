"""Helpers shared by the tests (importable as ``support`` because tests/ is on pythonpath)."""
