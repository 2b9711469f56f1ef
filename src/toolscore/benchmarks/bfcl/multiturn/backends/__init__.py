"""toolscore's implementations of BFCL's multi-turn backends, one module per API."""
