"""User simulators: who plays the user in a multi-turn evaluation (see :mod:`.base`)."""

from toolscore.users.base import UserScript, UserSimulator, UserTurn, format_value
from toolscore.users.human import HumanUser
from toolscore.users.llm import USER_AGENT_PROMPT, LLMUser, user_agent_messages

__all__ = ["USER_AGENT_PROMPT", "HumanUser", "LLMUser", "UserScript",
           "UserSimulator", "UserTurn", "format_value", "user_agent_messages"]
