"""``toolscore view``: the runs under a folder in a browser, served from this machine.

A list of the runs (benchmark, model, mode, status, progress, headline figure) with filters
and sorting, and each run's report page, the very page ``toolscore report --html`` writes
(:mod:`toolscore.report.html`), except that its records are fetched from the server one at a
time when opened instead of travelling in the page. A run that is still running is followed:
its page polls a small state endpoint, answered from ``stat`` and the lines appended since the
last poll (:mod:`.runs`), and is rebuilt only when the run changed.
"""

from toolscore.report.viewer.server import DEFAULT_PORT, ViewerServer, make_server

__all__ = ["DEFAULT_PORT", "ViewerServer", "make_server"]
