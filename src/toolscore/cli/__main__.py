"""``python -m toolscore.cli``."""

from toolscore.cli import main

main()
