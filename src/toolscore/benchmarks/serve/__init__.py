"""Tool worlds served to agents over MCP, and agents under test behind an endpoint.

Generic: a benchmark describes its world through :class:`.interface.Serving` (its
``serving()``), and plays a sample with an agent through :func:`.freerun.play`; this package
imports no benchmark.
"""
