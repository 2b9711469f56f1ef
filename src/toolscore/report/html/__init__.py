"""The HTML report: one self-contained page to read a run in a browser."""
