"""BFCL's TicketAPI: a support-ticket queue behind a login.

Tickets are plain dicts kept in ``ticket_queue`` in creation order; the dict a call returns is
the stored ticket itself, so a later edit shows in anything still holding it, as in BFCL.
"""

from __future__ import annotations

import copy
from typing import Any

from toolscore.benchmarks.bfcl.multiturn.backend import Backend
from toolscore.benchmarks.bfcl.release import constant

#: the fields ``edit_ticket`` may change
_EDITABLE = frozenset({"title", "description", "status", "priority"})


def _missing(ticket_id: Any) -> dict[str, str]:
    return {"error": f"Ticket with ID {ticket_id} not found."}


class TicketAPI(Backend):
    """Tickets created, read, edited, resolved and closed by the logged-in user."""

    def __init__(self) -> None:
        self.ticket_queue: list[dict[str, Any]]
        self.ticket_counter: int
        self.current_user: str | None

    def _load_scenario(self, scenario: dict[str, Any], long_context: bool = False) -> None:
        defaults = copy.deepcopy(constant("ticket_api.py", "DEFAULT_STATE"))
        for field in ("ticket_queue", "ticket_counter", "current_user"):
            setattr(self, field, scenario.get(field, defaults[field]))

    def _ticket(self, ticket_id: Any) -> dict[str, Any] | None:
        return next((t for t in self.ticket_queue if t["id"] == ticket_id), None)

    def create_ticket(self, title: str, description: str = "",
                      priority: int = 1) -> dict[str, Any]:
        if not self.current_user:
            return {"error": "User not authenticated. Please log in to create a ticket."}
        if priority < 1 or priority > 5:
            return {"error": "Invalid priority. Priority must be between 1 and 5."}
        ticket = {"id": self.ticket_counter, "title": title, "description": description,
                  "status": "Open", "priority": priority, "created_by": self.current_user}
        self.ticket_queue.append(ticket)
        self.ticket_counter += 1
        return ticket

    def get_ticket(self, ticket_id: int) -> dict[str, Any]:
        ticket = self._ticket(ticket_id)
        return ticket if ticket else _missing(ticket_id)

    def close_ticket(self, ticket_id: int) -> dict[str, str]:
        ticket = self._ticket(ticket_id)
        if not ticket:
            return _missing(ticket_id)
        if ticket["status"] == "Closed":
            return {"error": f"Ticket with ID {ticket_id} is already closed."}
        ticket["status"] = "Closed"
        return {"status": f"Ticket {ticket_id} has been closed successfully."}

    def resolve_ticket(self, ticket_id: int, resolution: str) -> dict[str, str]:
        ticket = self._ticket(ticket_id)
        if not ticket:
            return _missing(ticket_id)
        if ticket["status"] == "Resolved":
            return {"error": f"Ticket with ID {ticket_id} is already resolved."}
        ticket["status"] = "Resolved"
        ticket["resolution"] = resolution
        return {"status": f"Ticket {ticket_id} has been resolved successfully."}

    def edit_ticket(self, ticket_id: int, updates: dict[str, Any]) -> dict[str, str]:
        ticket = self._ticket(ticket_id)
        if not ticket:
            return _missing(ticket_id)
        # a set, joined in its own iteration order: the message lists the fields as BFCL's does
        unknown = set(updates.keys()) - _EDITABLE
        if unknown:
            return {"error": f"Invalid fields for update: {', '.join(unknown)}"}
        for field, value in updates.items():
            if value is not None:
                ticket[field] = value
        return {"status": f"Ticket {ticket_id} has been updated successfully."}

    def ticket_login(self, username: str, password: str) -> dict[str, bool]:
        if username and password:
            self.current_user = username
            return {"success": True}
        return {"success": False}

    def ticket_get_login_status(self) -> dict[str, bool]:
        return {"login_status": bool(self.current_user)}

    def logout(self) -> dict[str, bool]:
        if not self.current_user:
            return {"success": False}
        self.current_user = None
        return {"success": True}

    def get_user_tickets(self, status: str | None = None) -> list[dict[str, Any]]:
        if not self.current_user:
            return [{"error": "User not authenticated. Please log in to view tickets."}]
        mine = [t for t in self.ticket_queue if t["created_by"] == self.current_user]
        if status:
            mine = [t for t in mine if t["status"].lower() == status.lower()]
        return mine
