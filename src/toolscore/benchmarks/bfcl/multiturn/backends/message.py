"""BFCL's MessageAPI: a workspace's users and the messages sent to them.

``inbox`` is a list of one-pair dicts ``{receiver_id: text}``. A sent message gets a five-digit
id drawn from ``random.Random(seed)`` (the scenario's ``random_seed``, else BFCL's default),
redrawn while already used: the same generator, seed and draws as BFCL's, so ids match.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from toolscore.benchmarks.bfcl.multiturn.backend import Backend
from toolscore.benchmarks.bfcl.release import constant

_FIELDS = ("generated_ids", "user_count", "user_map", "inbox", "message_count", "current_user")
#: BFCL's seed when the scenario gives none
_SEED = 200191
_NOBODY = {"error": "No user is currently logged in."}


def _first(message: dict[str, str]) -> tuple[str, str]:
    # an empty record fails with IndexError, the error BFCL's backend reports for it
    return list(message.items())[0]


class MessageAPI(Backend):
    """Users, logins and messages of one workspace."""

    def __init__(self) -> None:
        self.generated_ids: set[int]
        self.user_count: int
        self.user_map: dict[str, str]
        self.inbox: list[dict[str, str]]
        self.message_count: int
        self.current_user: str | None

    def _load_scenario(self, scenario: dict[str, Any], long_context: bool = False) -> None:
        defaults = copy.deepcopy(constant("message_api.py", "DEFAULT_STATE"))
        self._random = random.Random(scenario.get("random_seed", _SEED))
        for field in _FIELDS:
            setattr(self, field, scenario.get(field, defaults[field]))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MessageAPI):
            return False
        return all(getattr(self, k) == getattr(other, k) for k in vars(self)
                   if not k.startswith("_"))

    __hash__ = None  # type: ignore[assignment]

    def _new_id(self) -> dict[str, int]:
        while True:
            drawn = self._random.randint(10000, 99999)
            if drawn not in self.generated_ids:
                break
        self.generated_ids.add(drawn)
        return {"new_id": drawn}

    def list_users(self) -> dict[str, list[str]]:
        return {"user_list": list(self.user_map)}

    def get_user_id(self, user: str) -> dict[str, Any]:
        if user not in self.user_map:
            return {"error": f"User '{user}' not found in the workspace."}
        return {"user_id": self.user_map.get(user)}

    def message_login(self, user_id: str) -> dict[str, Any]:
        if user_id not in list(self.user_map.values()):
            return {"login_status": False, "message": f"User ID '{user_id}' not found."}
        self.current_user = user_id
        return {"login_status": True, "message": f"User '{user_id}' logged in successfully."}

    def message_get_login_status(self) -> dict[str, bool]:
        return {"login_status": bool(self.current_user)}

    def send_message(self, receiver_id: str, message: str) -> dict[str, Any]:
        if not self.current_user:
            return dict(_NOBODY)
        if receiver_id not in self.user_map.values():
            return {"error": f"Receiver ID '{receiver_id}' not found."}
        message_id = self._new_id()
        self.inbox.append({receiver_id: message})
        self.message_count += 1
        return {"sent_status": True, "message_id": message_id,
                "message": f"Message sent to '{receiver_id}' successfully."}

    def delete_message(self, receiver_id: str) -> dict[str, Any]:
        if not self.current_user:
            return dict(_NOBODY)
        for message in reversed(self.inbox):
            receiver, _ = _first(message)
            if receiver == receiver_id:
                # removes the first equal message, as list.remove does in BFCL's
                self.inbox.remove(message)
                return {"deleted_status": True, "receiver_id": receiver,
                        "message": f"Receiver {receiver_id}'s latest message deleted "
                                   "successfully."}
        return {"error": f"Receiver ID {receiver_id} not found."}

    def view_messages_sent(self) -> dict[str, Any]:
        if not self.current_user:
            return dict(_NOBODY)
        grouped: dict[str, list[str]] = {}
        for message in self.inbox:
            receiver, text = _first(message)
            grouped.setdefault(receiver, []).append(text)
        return {"messages": grouped}

    def add_contact(self, user_name: str) -> dict[str, Any]:
        if user_name in self.user_map:
            return {"error": f"User name '{user_name}' already exists."}
        self.user_count += 1
        user_id = f"USR{str(self.user_count).zfill(3)}"
        if user_id in self.user_map.values():
            return {"error": f"User ID '{user_id}' already exists."}
        self.user_map[user_name] = user_id
        return {"added_status": True, "user_id": user_id,
                "message": f"Contact '{user_name}' added successfully."}

    def search_messages(self, keyword: str) -> dict[str, Any]:
        if not self.current_user:
            return dict(_NOBODY)
        wanted = keyword.lower()
        found = []
        for message in self.inbox:
            receiver, text = _first(message)
            if wanted in text.lower():
                found.append({"receiver_id": receiver, "message": text})
        return {"results": found}

    def get_message_stats(self) -> dict[str, Any]:
        if not self.current_user:
            return dict(_NOBODY)
        receivers = [_first(m)[0] for m in self.inbox]
        return {"stats": {"received_count": len(receivers),
                          "total_contacts": len(set(receivers))}}
