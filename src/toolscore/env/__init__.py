"""Tools, plugins and the environment that executes calls against their state."""

from toolscore.env.environment import NOT_LOGGED_IN, PARSE_FAILED, Environment, Session
from toolscore.env.plugin import Plugin
from toolscore.env.tool import CallRecord, MatchContext, Tool, tool

__all__ = ["CallRecord", "Environment", "MatchContext", "NOT_LOGGED_IN", "PARSE_FAILED", "Plugin",
           "Session", "Tool", "tool"]
