"""The leaderboard: many runs as one table, in text, CSV and HTML."""
