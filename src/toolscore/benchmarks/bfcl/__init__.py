"""BFCL v4 (the Berkeley Function Calling Leaderboard) as a toolscore benchmark: categories,
the released data, the requests, decoding, BFCL's figures and its result files; the checker
of one entry is ``checker``."""
