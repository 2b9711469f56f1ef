"""ToolTalk's Weather plugin: today's weather, a 3-day forecast and monthly climate records.

Weather is keyed by lower-case city, then by date (%Y-%m-%d); climate (HistoricWeather) by
lower-case city, then lower-case month name. "Today" is the Environment's clock. No log-in is
needed.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from toolscore.benchmarks.tooltalk.equivalence import rule_for
from toolscore.benchmarks.tooltalk.plugins.common import check_text, strict
from toolscore.env.environment import Environment
from toolscore.env.plugin import Plugin
from toolscore.env.tool import json_copy, tool

WEATHER_DB = "Weather"
HISTORIC_DB = "HistoricWeather"
FORECAST_DAYS = 3
DATE_FORMAT = "%Y-%m-%d"


def _city_key(env: Environment, location: Any) -> str:
    """The database key of a city, as the reference derives it: lower-cased, then stripped
    (" London " is London); its errors name this key. Not text: the default simulator fails
    on ``.lower()`` as the reference does ("'int' object has no attribute 'lower'")."""
    return check_text(env, location, "location").lower().strip()


def _missing_day(env: Environment, day: str, strict_text: str) -> LookupError:
    """No record for ``day``: the reference fails on the lookup of that date, and its
    exception text is the KeyError's, the date's repr ("datetime.date(2023, 9, 11)")."""
    if strict(env):
        return LookupError(strict_text)
    return LookupError(repr(datetime.strptime(day, DATE_FORMAT).date()))


def _city(env: Environment, db: str, location: Any) -> dict[str, Any]:
    key = _city_key(env, location)
    records = env.db(db).get(key)
    if not isinstance(records, dict):
        raise LookupError(f"Location {key} not found in database")
    return records


@tool("CurrentWeather", equivalence=rule_for("CurrentWeather"))
def current_weather(env: Environment, location: str) -> dict[str, Any]:
    """Today's weather in a city: high and low temperature (°F) and conditions.

    Args:
        location: The name of the city, e.g. London.
    """
    today = env.now.strftime(DATE_FORMAT)
    record = _city(env, WEATHER_DB, location).get(today)
    if record is None:
        raise _missing_day(env, today, f"No weather data for {location} on {today}.")
    return {"weather": json_copy(record)}


@tool("ForecastWeather", equivalence=rule_for("ForecastWeather"))
def forecast_weather(env: Environment, location: str) -> dict[str, Any]:
    """The weather forecast of a city for the next 3 days.

    Args:
        location: The name of the city, e.g. London.
    """
    records = _city(env, WEATHER_DB, location)
    days = [(env.now + timedelta(days=i)).strftime(DATE_FORMAT)
            for i in range(1, FORECAST_DAYS + 1)]
    if not strict(env):  # every day is needed; the first one missing fails the call
        for day in days:
            if day not in records:
                raise _missing_day(env, day, "")
    forecast = [json_copy(records[day]) for day in days if day in records]
    if not forecast:
        raise LookupError(f"No forecast for {location} after {env.now.strftime(DATE_FORMAT)}.")
    return {"forecast": forecast}


@tool("HistoricWeather", equivalence=rule_for("HistoricWeather"))
def historic_weather(env: Environment, location: str, month: str) -> dict[str, Any]:
    """Climate of a city in a month: average and record temperatures (°F), rainfall, snow days.

    Args:
        location: The name of the city, e.g. London.
        month: The full English name of the month, e.g. September.
    """
    records = _city(env, HISTORIC_DB, location)
    check_text(env, month, "month")
    record = records.get(month.lower())
    if record is None:
        raise LookupError(f"Historic weather data for {_city_key(env, location)} missing for "
                          f"month {month.lower()}")
    return {"weather": json_copy(record)}


PLUGIN = Plugin(
    "Weather",
    [current_weather, forecast_weather, historic_weather],
    databases=(WEATHER_DB, HISTORIC_DB),
    description="Current weather, forecasts and climate records of cities.",
)
