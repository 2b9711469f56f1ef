"""ToolTalk (Farn & Shin, 2023): multi-turn conversations over 7 simulated, stateful plugins."""
