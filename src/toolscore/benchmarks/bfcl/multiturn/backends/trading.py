"""BFCL's trading bot: a brokerage account with a login, orders, a watch list and stocks.

BFCL's trading clock is frozen at a fixed moment (:data:`_NOW`): the current time it reports
and the timestamps of deposits and withdrawals (that moment plus a random number of seconds up
to a day, drawn from ``random.Random`` seeded by the scenario) do not depend on the wall
clock. The company-to-symbol and sector tables are literals inside BFCL's methods, read from
the release; in the long-context category some answers carry BFCL's filler (moving-average
series, order commentary, sector lists, watch-list symbols, past transactions).
"""

from __future__ import annotations

import copy
import random
from datetime import datetime, timedelta
from typing import Any

from toolscore.benchmarks.bfcl.multiturn.backend import Backend
from toolscore.benchmarks.bfcl.release import constant, local_constant

_MODULE = "trading_bot.py"
#: the moment BFCL's trading backend lives in
_NOW = datetime(2024, 9, 1, 10, 30)
_DAY_SECONDS = 24 * 60 * 60
_STAMP = "%Y-%m-%d %H:%M:%S"
_DATE = "%Y-%m-%d"
_STATE = ("orders", "account_info", "authenticated", "market_status", "order_counter", "stocks",
          "watch_list", "transaction_history")


def _filler(name: str) -> Any:
    return copy.deepcopy(constant("long_context.py", name))


def _order_key(key: Any) -> Any:
    """Order ids read from JSON are strings: digit strings become the integer ids BFCL uses."""
    return int(key) if isinstance(key, str) and key.isdigit() else key


class TradingBot(Backend):
    """A trading account; public attributes are the orders, account, stocks and lists."""

    orders: dict[Any, dict[str, Any]]
    account_info: dict[str, Any]
    authenticated: bool
    market_status: str
    order_counter: int
    stocks: dict[str, dict[str, Any]]
    watch_list: list[str]
    transaction_history: list[dict[str, Any]]
    long_context: bool

    def __init__(self) -> None:
        self._random = random.Random()

    def _load_scenario(self, scenario: dict[str, Any], long_context: bool = False) -> None:
        defaults = copy.deepcopy(constant(_MODULE, "DEFAULT_STATE"))
        for key in _STATE:
            setattr(self, key, scenario.get(key, defaults[key]))
        self.orders = {_order_key(k): v for k, v in self.orders.items()}
        self.long_context = long_context
        self._random = random.Random(scenario.get("random_seed", defaults["random_seed"]))

    def _timestamp(self) -> str:
        """When a deposit or withdrawal happened: within a day of the frozen clock."""
        # randint draws the same way whatever its bounds' origin: only the span matters
        seconds = self._random.randint(0, _DAY_SECONDS)
        return (_NOW + timedelta(seconds=seconds)).strftime(_STAMP)

    def _record(self, kind: str, amount: float) -> None:
        self.transaction_history.append({"type": kind, "amount": amount,
                                         "timestamp": self._timestamp()})

    # -- market data -------------------------------------------------------------------------

    def get_current_time(self) -> dict[str, str]:
        return {"current_time": _NOW.strftime("%I:%M %p")}

    def get_symbol_by_name(self, name: str) -> dict[str, str]:
        symbols = local_constant(_MODULE, "get_symbol_by_name", "symbol_map")
        return {"symbol": symbols.get(name, "Stock not found")}

    def get_stock_info(self, symbol: str) -> dict[str, Any]:
        if symbol not in self.stocks:
            return {"error": f"Stock with symbol '{symbol}' not found."}
        if not self.long_context:
            return self.stocks[symbol]
        stock = self.stocks[symbol].copy()
        stock["MA(5)"] = _filler("MA_5_EXTENSION")
        stock["MA(20)"] = _filler("MA_20_EXTENSION")
        return stock

    def get_available_stocks(self, sector: str) -> dict[str, list[str]]:
        sectors = copy.deepcopy(local_constant(_MODULE, "get_available_stocks", "sector_map"))
        if self.long_context:
            sectors["Technology"].extend(_filler("TECHNOLOGY_EXTENSION"))
            sectors["Automobile"].extend(_filler("AUTOMOBILE_EXTENSION"))
        return {"stock_list": sectors.get(sector, [])}

    def filter_stocks_by_price(self, stocks: list[str], min_price: float,
                               max_price: float) -> dict[str, list[str]]:
        def price(symbol: str) -> Any:
            return self.stocks.get(symbol, {}).get("price", 0)

        return {"filtered_stocks": [s for s in stocks
                                    if price(s) >= min_price and price(s) <= max_price]}

    def notify_price_change(self, stocks: list[str], threshold: float) -> dict[str, str]:
        moved = [s for s in stocks
                 if s in self.stocks and abs(self.stocks[s]["percent_change"]) >= threshold]
        if not moved:
            return {"notification": "No significant price changes in the selected stocks."}
        return {"notification": f"Stocks {', '.join(moved)} have significant price changes."}

    # -- orders ------------------------------------------------------------------------------

    def get_order_details(self, order_id: int) -> dict[str, Any]:
        if order_id not in self.orders:
            return {"error": f"Order with ID {order_id} not found."
                             "Here is the list of orders_id: " + str(list(self.orders.keys()))}
        if not self.long_context:
            return self.orders[order_id]
        order = self.orders[order_id].copy()
        notes = {}
        for key, template in constant("long_context.py", "ORDER_DETAIL_EXTENSION").items():
            try:
                notes[key] = template.format(symbol=order["symbol"])
            except KeyError as e:
                return {"error": f"KeyError during formatting: {e}"}
        order["metadata"] = notes
        return order

    def cancel_order(self, order_id: int) -> dict[str, Any]:
        if order_id not in self.orders:
            return {"error": f"Order with ID {order_id} not found."}
        if self.orders[order_id]["status"] == "Completed":
            return {"error": f"Can't cancel order {order_id}. Order is already completed."}
        self.orders[order_id]["status"] = "Cancelled"
        return {"order_id": order_id, "status": "Cancelled"}

    def place_order(self, order_type: str, symbol: str, price: float,
                    amount: int) -> dict[str, Any]:
        if not self.authenticated:
            return {"error": "User not authenticated. Please log in to place an order."}
        if symbol not in self.stocks:
            return {"error": f"Invalid stock symbol: {symbol}"}
        if price <= 0 or amount <= 0:
            return {"error": "Price and amount must be positive values."}
        if order_type.lower() == "buy":
            cost = float(price) * int(amount)
            balance = self.account_info.get("balance", 0)
            if cost > balance:
                return {"error": f"Insufficient funds: required ${cost:.2f} "
                                 f"but only ${balance:.2f} available."}
        price = float(price)
        order_id = self.order_counter
        self.orders[order_id] = {"id": order_id, "order_type": order_type, "symbol": symbol,
                                 "price": price, "amount": amount, "status": "Open"}
        self.order_counter += 1
        # the answer says Pending while the book says Open, as in BFCL
        return {"order_id": order_id, "order_type": order_type, "status": "Pending",
                "price": price, "amount": amount}

    def get_order_history(self) -> Any:
        if not self.authenticated:
            return [{"error": "User not authenticated. Please log in to view order history."}]
        return {"history": list(self.orders.keys())}

    # -- account -----------------------------------------------------------------------------

    def trading_login(self, username: str, password: str) -> dict[str, str]:
        if self.authenticated:
            return {"status": "Already logged in"}
        self.authenticated = True
        return {"status": "Logged in successfully"}

    def trading_get_login_status(self) -> dict[str, bool]:
        return {"status": bool(self.authenticated)}

    def trading_logout(self) -> dict[str, str]:
        if not self.authenticated:
            return {"status": "No user is currently logged in"}
        self.authenticated = False
        return {"status": "Logged out successfully"}

    def get_account_info(self) -> dict[str, Any]:
        if not self.authenticated:
            return {"error": "User not authenticated. Please log in to view account information."}
        return self.account_info

    def fund_account(self, amount: float) -> dict[str, Any]:
        if not self.authenticated:
            return {"error": "User not authenticated. Please log in to fund the account."}
        if amount <= 0:
            return {"error": "Funding amount must be positive."}
        self.account_info["balance"] += amount
        self._record("deposit", amount)
        return {"status": "Account funded successfully",
                "new_balance": self.account_info["balance"]}

    def withdraw_funds(self, amount: float) -> dict[str, Any]:
        if not self.authenticated:
            return {"error": "User not authenticated. Please log in to make a transaction."}
        if self.market_status != "Open":
            return {"error": "Market is closed. Transactions are not allowed."}
        if amount <= 0:
            return {"error": "Transaction amount must be positive."}
        if amount > self.account_info["balance"]:
            return {"error": "Insufficient funds for withdrawal."}
        self.account_info["balance"] -= amount
        self._record("withdrawal", amount)
        return {"status": "Withdrawal successful", "new_balance": self.account_info["balance"]}

    def get_transaction_history(self, start_date: str | None = None,
                                end_date: str | None = None) -> Any:
        if not self.authenticated:
            return [{"error": "User not authenticated. Please log in to view transaction "
                              "history."}]
        start = datetime.strptime(start_date, _DATE) if start_date else datetime.min
        end = datetime.strptime(end_date, _DATE) if end_date else datetime.max
        kept = [t for t in self.transaction_history
                if start <= datetime.strptime(t["timestamp"], _STAMP) <= end]
        if self.long_context:
            kept.extend(_filler("TRANSACTION_HISTORY_EXTENSION"))
        return {"transaction_history": kept}

    # -- watch list --------------------------------------------------------------------------

    def get_watchlist(self) -> Any:
        if not self.authenticated:
            return ["Error: User not authenticated. Please log in to view the watchlist."]
        if self.long_context:
            return [*self.watch_list, *_filler("WATCH_LIST_EXTENSION")]
        return {"watchlist": self.watch_list}

    def add_to_watchlist(self, stock: str) -> dict[str, list[str]]:
        if stock not in self.watch_list and stock in self.stocks:
            self.watch_list.append(stock)
        return {"watchlist": self.watch_list}

    def remove_stock_from_watchlist(self, symbol: str) -> dict[str, str]:
        if not self.authenticated:
            return {"error": "User not authenticated. Please log in to modify the watchlist."}
        if symbol not in self.watch_list:
            return {"error": f"Stock {symbol} not found in watchlist."}
        self.watch_list.remove(symbol)
        return {"status": f"Stock {symbol} removed from watchlist successfully."}
