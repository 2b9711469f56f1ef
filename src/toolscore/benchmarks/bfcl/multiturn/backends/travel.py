"""BFCL's travel booking API: a login token, credit cards, flights, insurance and a budget.

Identifiers (tokens, card, booking, transaction and insurance ids) are drawn from
``random.Random`` seeded by the scenario, in BFCL's order. The route prices, exchange rates,
airports and city-to-airport table are literals inside BFCL's methods: they are read from the
release (:func:`toolscore.benchmarks.bfcl.release.local_constant`). In the long-context
category the account starts with BFCL's extra cards and bookings, and a booking answers with
the whole booking history.
"""

from __future__ import annotations

import copy
import random
from datetime import datetime
from typing import Any

from toolscore.benchmarks.bfcl.multiturn.backend import Backend
from toolscore.benchmarks.bfcl.release import constant, local_constant

_MODULE = "travel_booking.py"
_STATE = ("credit_card_list", "booking_record", "access_token", "token_type", "token_expires_in",
          "token_scope", "user_first_name", "user_last_name", "budget_limit")
#: price multiplier per travel class
_CLASS_FACTOR = {"economy": 1, "business": 2, "first": 5}
_ADULT_AGE = 18
#: state attribute -> the long-context filler BFCL merges into it
_FILLER = (("credit_card_list", "CREDIT_CARD_EXTENSION"),
           ("booking_record", "BOOKING_RECORD_EXTENSION"))


def _table(function: str, name: str | None = None) -> Any:
    return local_constant(_MODULE, function, name)


def _route_factor(travel_date: str) -> int:
    """Flights on a date whose digits add up to an even number cost double."""
    return 2 if sum(int(ch) for ch in travel_date if ch.isdigit()) % 2 == 0 else 1


class TravelAPI(Backend):
    """A traveller's account; public attributes are the token, cards, bookings and budget."""

    credit_card_list: dict[str, dict[str, Any]]
    booking_record: dict[str, dict[str, Any]]
    access_token: str | None
    token_type: str | None
    token_expires_in: int | None
    token_scope: str | None
    user_first_name: str | None
    user_last_name: str | None
    budget_limit: float | None
    long_context: bool

    def __init__(self) -> None:
        self._random = random.Random()
        self._filler_keys: dict[str, list[str]] = {}

    def _load_scenario(self, scenario: dict[str, Any], long_context: bool = False) -> None:
        defaults = copy.deepcopy(constant(_MODULE, "DEFAULT_STATE"))
        self._random = random.Random(scenario.get("random_seed", defaults["random_seed"]))
        for key in _STATE:
            setattr(self, key, scenario.get(key, defaults[key]))
        self.long_context = long_context
        self._filler_keys = {}
        if long_context:
            for attr, filler in _FILLER:
                held = getattr(self, attr)
                added = self._filler_keys[attr] = []
                for key, value in copy.deepcopy(constant("long_context.py", filler)).items():
                    if key not in held:
                        held[key] = value
                        added.append(key)

    def _share_filler(self, other: Backend) -> None:
        """Make ``other`` hold this instance's long-context filler cards and bookings (the same
        objects), as two of BFCL's instances in one process do: BFCL adds its module-level
        records themselves, so a balance one instance changes on a filler card changes in
        every instance. BFCL's checker thus sees no difference there between the model's
        instance and the ground truth's; sharing the filler between the two reproduces it."""
        if not isinstance(other, TravelAPI):
            return
        for attr, _ in _FILLER:
            mine, theirs = getattr(self, attr), getattr(other, attr)
            for key in set(self._filler_keys.get(attr, ())) & set(other._filler_keys.get(attr, ())):
                theirs[key] = mine[key]

    def _token_error(self, access_token: str) -> str | None:
        """Why a request with this token is refused (None: it is accepted)."""
        if self.token_expires_in == 0:
            return "Token expired"
        if access_token != self.access_token:
            return "Invalid access token"
        return None

    # -- login and budget --------------------------------------------------------------------

    def authenticate_travel(self, client_id: str, client_secret: str, refresh_token: str,
                            grant_type: str, user_first_name: str,
                            user_last_name: str) -> dict[str, Any]:
        self.token_expires_in = 2
        self.access_token = str(self._random.randint(100000, 999999))
        self.token_type = "Bearer"
        self.token_scope = grant_type
        self.user_first_name = user_first_name
        self.user_last_name = user_last_name
        return {"expires_in": 2, "access_token": self.access_token, "token_type": "Bearer",
                "scope": grant_type}

    def travel_get_login_status(self) -> dict[str, bool]:
        return {"status": not (self.token_expires_in is None or self.token_expires_in == 0)}

    def get_budget_fiscal_year(self, lastModifiedAfter: str | None = None,
                               includeRemoved: str | None = None) -> dict[str, str]:
        return {"budget_fiscal_year": "2018"}

    def set_budget_limit(self, access_token: str, budget_limit: float) -> dict[str, Any]:
        refused = self._token_error(access_token)
        if refused:
            return {"error": refused}
        self.budget_limit = float(budget_limit)
        return {"budget_limit": self.budget_limit}

    # -- cards -------------------------------------------------------------------------------

    def register_credit_card(self, access_token: str, card_number: str, expiration_date: str,
                             cardholder_name: str, card_verification_number: int) -> dict[str, Any]:
        if self.token_expires_in is None:
            return {"error": "Token not initialized"}
        refused = self._token_error(access_token)
        if refused:
            return {"error": refused}
        if card_number in self.credit_card_list:
            return {"error": "Card already registered"}
        card_id = str(self._random.randint(100000000000, 999999999999))
        self.credit_card_list[card_id] = {
            "card_number": card_number, "expiration_date": expiration_date,
            "cardholder_name": cardholder_name,
            "card_verification_number": card_verification_number,
            "balance": self._random.randint(10000, 99999)}
        return {"card_id": card_id}

    def get_credit_card_balance(self, access_token: str, card_id: str) -> dict[str, Any]:
        refused = self._token_error(access_token)
        if refused:
            return {"error": refused}
        if card_id not in self.credit_card_list:
            return {"error": "Card not registered. Here are a list of card_id's: "
                             + str(list(self.credit_card_list.keys()))}
        return {"card_balance": self.credit_card_list[card_id]["balance"]}

    def get_all_credit_cards(self) -> dict[str, Any]:
        return {"credit_card_list": self.credit_card_list}

    # -- flights -----------------------------------------------------------------------------

    def get_flight_cost(self, travel_from: str, travel_to: str, travel_date: str,
                        travel_class: str) -> dict[str, list[float]]:
        routes = _table("get_flight_cost", "base_costs")
        if (travel_from, travel_to) not in routes:
            raise ValueError("No available route for the given airports.")
        if travel_class not in _CLASS_FACTOR:
            raise ValueError("Invalid travel class. Options are: economy, business, first.")
        factor = _CLASS_FACTOR[travel_class] * _route_factor(travel_date)
        if self.long_context:
            # the long-context answer lists every route's price in this class on this date
            return {"travel_cost_list": [float(base * factor) for base in routes.values()]}
        return {"travel_cost_list": [float(routes[(travel_from, travel_to)] * factor)]}

    def book_flight(self, access_token: str, card_id: str, travel_date: str, travel_from: str,
                    travel_to: str, travel_class: str) -> dict[str, Any]:
        refused = self._token_error(access_token)
        if refused:
            return {"booking_status": False, "error": refused}
        if card_id not in self.credit_card_list:
            return {"booking_status": False, "error": "Card not registered"}
        card = self.credit_card_list[card_id]
        if "balance" not in card:
            return {"booking_status": False, "error": "Balance not found"}
        airports = self.list_all_airports()
        for label, code in (("departure", travel_from), ("destination", travel_to)):
            if code not in airports:
                return {"booking_status": False,
                        "error": f"Invalid {label} airport code: {code}"}
        try:
            datetime.strptime(travel_date, "%Y-%m-%d")
        except ValueError:
            return {"booking_status": False, "error": "Invalid date format. Use YYYY-MM-DD."}
        if travel_class not in _CLASS_FACTOR:
            # BFCL prints a set here, in an order that changes with Python's string hashing
            # from one process to the next; toolscore prints it in one fixed order
            listed = ", ".join(repr(c) for c in _CLASS_FACTOR)
            return {"booking_status": False,
                    "error": f"Invalid travel class. Must be one of {{{listed}}}"}
        try:
            self.get_flight_cost(travel_from=travel_from, travel_to=travel_to,
                                 travel_date=travel_date, travel_class=travel_class)
        except ValueError as e:
            return {"booking_status": False, "error": str(e)}
        routes = _table("get_flight_cost", "base_costs")
        cost = float(routes[(travel_from, travel_to)] * _CLASS_FACTOR[travel_class]
                     * _route_factor(travel_date))
        if card["balance"] < cost:
            return {"booking_status": False, "error": "Insufficient funds"}
        if self.budget_limit is not None and card["balance"] < self.budget_limit:
            return {"booking_status": False, "error": "Balance is less than budget limit"}
        card["balance"] -= cost
        booking_id = str(self._random.randint(1000000, 9999999))
        transaction_id = str(self._random.randint(10000000, 99999999))
        self.booking_record[booking_id] = {
            "card_id": card_id, "travel_date": travel_date, "travel_from": travel_from,
            "travel_to": travel_to, "travel_class": travel_class, "travel_cost": cost,
            "transaction_id": transaction_id}
        return {"booking_id": booking_id, "transaction_id": transaction_id,
                "booking_status": True,
                "booking_history": self.booking_record if self.long_context else {}}

    def retrieve_invoice(self, access_token: str, booking_id: str | None = None,
                         insurance_id: str | None = None) -> dict[str, Any]:
        refused = self._token_error(access_token)
        if refused:
            return {"error": refused}
        if booking_id not in self.booking_record:
            return {"error": "Booking not found"}
        booking = self.booking_record[booking_id]
        fields = ("travel_date", "travel_from", "travel_to", "travel_class", "travel_cost",
                  "transaction_id")
        return {"invoice": {"booking_id": booking_id, **{k: booking[k] for k in fields}}}

    def get_booking_history(self, access_token: str) -> dict[str, Any]:
        refused = self._token_error(access_token)
        if refused:
            return {"error": refused}
        return {"booking_history": copy.deepcopy(self.booking_record)}

    def list_all_airports(self) -> list[str]:
        return list(_table("list_all_airports"))

    def cancel_booking(self, access_token: str, booking_id: str) -> dict[str, Any]:
        refused = self._token_error(access_token)
        if refused:
            return {"cancel_status": False, "error": refused}
        if booking_id not in self.booking_record:
            return {"cancel_status": False, "error": "Booking not found"}
        booking = self.booking_record[booking_id]
        self.credit_card_list[booking["card_id"]]["balance"] += booking["travel_cost"]
        del self.booking_record[booking_id]
        return {"cancel_status": True}

    def compute_exchange_rate(self, base_currency: str, target_currency: str,
                              value: float) -> dict[str, float]:
        for (base, target), rate in _table("compute_exchange_rate", "exchange_rates").items():
            if base_currency == base and target_currency == target:
                return {"exchanged_value": float(value * rate)}
            if base_currency == target and target_currency == base:
                return {"exchanged_value": round(value / rate, 2)}
        raise ValueError("No available exchange rate for the given currencies.")

    def verify_traveler_information(self, first_name: str, last_name: str, date_of_birth: str,
                                    passport_number: str) -> dict[str, Any]:
        if self.user_first_name != first_name or self.user_last_name != last_name:
            return {"verification_status": False,
                    "verification_failure": "Cannot book flight information for another user."
                    f"Expected {self.user_first_name} {self.user_last_name}, "
                    f"got {first_name} {last_name}"}
        try:
            born = datetime.strptime(date_of_birth, "%Y-%m-%d")
        except ValueError:
            return {"verification_status": False,
                    "verification_failure": "Invalid date of birth format. Please use YYYY-MM-DD."}
        # the age is reckoned on the day the call runs, as BFCL's backend does
        today = datetime.today()
        age = today.year - born.year - ((today.month, today.day) < (born.month, born.day))
        if age < _ADULT_AGE:
            return {"verification_status": False,
                    "verification_failure": "Traveler must be at least 18 years old."}
        if not passport_number.startswith("US"):
            return {"verification_status": False,
                    "verification_failure": "Passport must be issued by the United States."}
        return {"verification_status": True}

    def get_nearest_airport_by_city(self, location: str) -> dict[str, str]:
        airports = _table("get_nearest_airport_by_city", "airport_map")
        return {"nearest_airport": airports.get(location, "Unknown")}

    def purchase_insurance(self, access_token: str, insurance_type: str, booking_id: str,
                           insurance_cost: float, card_id: str) -> dict[str, Any]:
        refused = self._token_error(access_token)
        if refused:
            return {"insurance_status": False, "error": refused}
        if self.budget_limit is not None and self.budget_limit < insurance_cost:
            return {"insurance_status": False, "error": "Exceeded budget limit"}
        if booking_id not in self.booking_record:
            return {"insurance_status": False, "error": "Booking not found"}
        if card_id not in self.credit_card_list:
            return {"insurance_status": False, "error": "Credit card not registered"}
        self.credit_card_list[card_id]["balance"] -= insurance_cost
        return {"insurance_id": str(self._random.randint(100000000, 999999999)),
                "insurance_status": True}

    def contact_customer_support(self, booking_id: str, message: str) -> dict[str, str]:
        if booking_id not in self.booking_record:
            return {"error": "Booking not found"}
        return {"customer_support_message": "Thank you for contacting customer support. Your "
                "message has been received and we will get back to you shortly."}
