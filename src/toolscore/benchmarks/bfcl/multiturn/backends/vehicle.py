"""BFCL's vehicle control API: engine, doors, climate, brakes, cruise control, navigation.

The state is a handful of readings (fuel, battery, door locks, climate, brakes, tyres). Two
readings are random (outside temperature, current speed), drawn from ``random.Random`` seeded
by the scenario as BFCL does. In the long-context category some answers carry BFCL's filler
(car metadata, a weather history, intermediary cities, a parking-brake manual), read from the
release.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

from toolscore.benchmarks.bfcl.multiturn.backend import Backend
from toolscore.benchmarks.bfcl.release import constant

_MODULE = "vehicle_control.py"
_TANK_GALLONS = 50
_EMPTY_TANK = 0.0
_MILES_PER_GALLON = 20.0
_FULL_BRAKE_NEWTONS = 1000
_DOORS_LOCKED = "locked"

#: scenario key -> (attribute, key of the default state) where the two names differ
_RENAMED = {"engineState": ("engine_state", "engine_state"),
            "parkingBrakeForce": ("_parkingBrakeForce", "_parkingBrakeForce"),
            "slopeAngle": ("_slopeAngle", "_slopeAngle"),
            "brakePedalForce": ("_brakePedalForce", "brakePedalForce")}
_PLAIN = ("fuelLevel", "batteryVoltage", "remainingUnlockedDoors", "doorStatus", "acTemperature",
          "fanSpeed", "acMode", "humidityLevel", "headLightStatus", "parkingBrakeStatus",
          "brakePedalStatus", "distanceToNextVehicle", "cruiseStatus", "destination",
          "frontLeftTirePressure", "frontRightTirePressure", "rearLeftTirePressure",
          "rearRightTirePressure")

_ZIPCODES = (("Rivermist", "83214"), ("Stonebrook", "74532"), ("Maplecrest", "56108"),
             ("Silverpine", "62947"), ("Shadowridge", "71354"), ("Sunset Valley", "83462"),
             ("Oakendale", "47329"), ("Willowbend", "52013"), ("Crescent Hollow", "69238"),
             ("Autumnville", "51479"), ("San Francisco", "94016"))
#: known road distances (km) between two zip codes, either direction
_DISTANCES = ((("83214", "74532"), 750.0), (("56108", "62947"), 320.0),
              (("71354", "83462"), 450.0), (("47329", "52013"), 290.0),
              (("69238", "51479"), 630.0), (("94016", "83214"), 980.0),
              (("94016", "94704"), 600.0), (("94704", "08540"), 2550.0),
              (("94016", "08540"), 1950.0), (("62947", "47329"), 1053.0),
              (("94016", "62947"), 780.0), (("74532", "94016"), 880.0))


def _filler(name: str) -> Any:
    return copy.deepcopy(constant("long_context.py", name))


class VehicleControlAPI(Backend):
    """A car whose controls a model operates; public attributes are its readings."""

    fuelLevel: float
    batteryVoltage: float
    engine_state: str
    remainingUnlockedDoors: int
    doorStatus: dict[str, str]
    acTemperature: float
    fanSpeed: int
    acMode: str
    humidityLevel: float
    headLightStatus: str
    parkingBrakeStatus: str
    brakePedalStatus: str
    distanceToNextVehicle: float
    cruiseStatus: str
    destination: str
    frontLeftTirePressure: float
    frontRightTirePressure: float
    rearLeftTirePressure: float
    rearRightTirePressure: float
    long_context: bool
    _parkingBrakeForce: float
    _slopeAngle: float
    _brakePedalForce: float

    def __init__(self) -> None:
        self._random = random.Random()

    def _load_scenario(self, scenario: dict[str, Any], long_context: bool = False) -> None:
        defaults = copy.deepcopy(constant(_MODULE, "DEFAULT_STATE"))
        self._random = random.Random(scenario.get("random_seed", defaults["random_seed"]))
        for key in _PLAIN:
            setattr(self, key, scenario.get(key, defaults[key]))
        for key, (attr, default_key) in _RENAMED.items():
            setattr(self, attr, scenario.get(key, defaults[default_key]))
        # the count follows the doors, whatever the scenario says
        locked = sum(1 for d in self.doorStatus if self.doorStatus[d] == _DOORS_LOCKED)
        self.remainingUnlockedDoors = 4 - locked
        self.long_context = long_context

    # -- engine and fuel ---------------------------------------------------------------------

    def startEngine(self, ignitionMode: str) -> dict[str, Any]:
        if ignitionMode == "STOP":
            self.engine_state = "stopped"
        if self.remainingUnlockedDoors > 0:
            unlocked = [d for d, s in self.doorStatus.items() if s == "unlocked"]
            return {"error": "All doors must be locked before starting the engine. "
                             "Here are the unlocked doors: " + ", ".join(unlocked)}
        if self.brakePedalStatus != "pressed":
            return {"error": "Brake pedal needs to be pressed when starting the engine."}
        if self._brakePedalForce != float(_FULL_BRAKE_NEWTONS):
            return {"error": "Must press the brake fully before starting the engine."}
        if self.fuelLevel < _EMPTY_TANK:
            return {"error": "Fuel tank is empty."}
        if ignitionMode != "START":
            return {"error": "Invalid ignition mode."}
        self.engine_state = "running"
        return {"engineState": self.engine_state, "fuelLevel": self.fuelLevel,
                "batteryVoltage": self.batteryVoltage}

    def fillFuelTank(self, fuelAmount: float) -> dict[str, Any]:
        if fuelAmount < 0:
            return {"error": "Fuel amount cannot be negative."}
        if self.fuelLevel + fuelAmount > _TANK_GALLONS:
            return {"error": "Cannot fill gas above the tank capacity."}
        if self.fuelLevel + fuelAmount < _EMPTY_TANK:
            return {"error": "Fuel tank is empty. Min fuel level is 0 gallons."}
        self.fuelLevel += fuelAmount
        return {"fuelLevel": self.fuelLevel}

    # -- doors, climate, lights --------------------------------------------------------------

    def lockDoors(self, unlock: bool, door: list[str]) -> dict[str, Any]:
        target = "unlocked" if unlock else _DOORS_LOCKED
        step = 1 if unlock else -1
        for d in door:
            if self.doorStatus[d] != target:
                self.doorStatus[d] = target
                self.remainingUnlockedDoors += step
        return {"lockStatus": target, "remainingUnlockedDoors": self.remainingUnlockedDoors}

    def adjustClimateControl(self, temperature: float, unit: str = "celsius", fanSpeed: int = 50,
                             mode: str = "auto") -> dict[str, Any]:
        if not 0 <= fanSpeed <= 100:
            return {"error": "Fan speed must be between 0 and 100."}
        self.acTemperature = (temperature - 32) * 5 / 9 if unit == "fahrenheit" else temperature
        self.fanSpeed = fanSpeed
        self.acMode = mode
        return {"currentACTemperature": temperature, "climateMode": mode,
                "humidityLevel": self.humidityLevel}

    def get_outside_temperature_from_google(self) -> dict[str, Any]:
        reading = self._random.uniform(-10.0, 40.0)
        if not self.long_context:
            return {"outsideTemperature": reading}
        weather = _filler("LONG_WEATHER_EXTENSION")
        weather["outsideTemperature"] = reading
        return weather

    def get_outside_temperature_from_weather_com(self) -> dict[str, Any]:
        return {"error": 404}

    def setHeadlights(self, mode: str) -> dict[str, str]:
        if mode not in ("on", "off", "auto"):
            return {"error": "Invalid headlight mode."}
        self.headLightStatus = "on" if mode == "on" else "off"
        return {"headlightStatus": self.headLightStatus}

    def displayCarStatus(self, option: str) -> dict[str, Any]:
        status: dict[str, Any] = {}
        if self.long_context:
            status["metadata"] = _filler("CAR_STATUS_METADATA_EXTENSION")
        shown: dict[str, Callable[[], dict[str, Any]]] = {
            "fuel": lambda: {"fuelLevel": self.fuelLevel},
            "battery": lambda: {"batteryVoltage": self.batteryVoltage},
            "doors": lambda: {"doorStatus": self.doorStatus},
            "climate": lambda: {"currentACTemperature": self.acTemperature,
                                "fanSpeed": self.fanSpeed, "climateMode": self.acMode,
                                "humidityLevel": self.humidityLevel},
            "headlights": lambda: {"headlightStatus": self.headLightStatus},
            "parkingBrake": lambda: {"parkingBrakeStatus": self.parkingBrakeStatus,
                                     "parkingBrakeForce": self._parkingBrakeForce,
                                     "slopeAngle": self._slopeAngle},
            "brakePedal": lambda: {"brakePedalStatus": self.brakePedalStatus,
                                   "brakePedalForce": self._brakePedalForce},
            "engine": lambda: {"engineState": self.engine_state},
        }
        reading = next((f for name, f in shown.items() if name == option), None)
        status.update(reading() if reading else {"error": "Invalid option"})
        return status

    # -- brakes and cruise control -----------------------------------------------------------

    def activateParkingBrake(self, mode: str) -> dict[str, Any]:
        if mode not in ("engage", "release"):
            return {"error": "Invalid mode"}
        engaged = mode == "engage"
        self.parkingBrakeStatus = "engaged" if engaged else "released"
        self._parkingBrakeForce = 500.0 if engaged else 0.0
        self._slopeAngle = 10.0
        out: dict[str, Any] = {}
        if self.long_context:
            out["parkingBrakeInstruction"] = _filler("PARKING_BRAKE_INSTRUCTION")
        out.update({"parkingBrakeStatus": self.parkingBrakeStatus,
                    "_parkingBrakeForce": self._parkingBrakeForce, "_slopeAngle": 10.0})
        return out

    def pressBrakePedal(self, pedalPosition: float) -> dict[str, Any]:
        if not 0 <= pedalPosition <= 1:
            return {"error": "Pedal position must be between 0 and 1."}
        if pedalPosition == 0:
            return self.releaseBrakePedal()
        force = pedalPosition * _FULL_BRAKE_NEWTONS
        self.brakePedalStatus = "pressed"
        self._brakePedalForce = force
        return {"brakePedalStatus": "pressed", "brakePedalForce": float(force)}

    def releaseBrakePedal(self) -> dict[str, Any]:
        self.brakePedalStatus = "released"
        self._brakePedalForce = 0.0
        return {"brakePedalStatus": "released", "brakePedalForce": 0.0}

    def setCruiseControl(self, speed: float, activate: bool,
                         distanceToNextVehicle: float) -> dict[str, Any]:
        distanceToNextVehicle = float(distanceToNextVehicle)
        speed = float(speed)
        if self.engine_state == "stopped":
            return {"error": "Start the engine before activating the cruise control."}
        self.distanceToNextVehicle = distanceToNextVehicle
        if activate:
            if speed < 0 or speed > 120 or speed % 5 != 0:
                return {"error": "Invalid speed"}
            self.cruiseStatus = "active"
        else:
            self.cruiseStatus = "inactive"
        return {"cruiseStatus": self.cruiseStatus, "currentSpeed": speed,
                "distanceToNextVehicle": distanceToNextVehicle}

    def get_current_speed(self) -> dict[str, float]:
        return {"currentSpeed": self._random.uniform(0.0, 120.0)}

    # -- trips -------------------------------------------------------------------------------

    def display_log(self, messages: list[str]) -> dict[str, Any]:
        return {"log": messages}

    def estimate_drive_feasibility_by_mileage(self, distance: float) -> dict[str, bool]:
        return {"canDrive": not self.fuelLevel * _MILES_PER_GALLON < distance}

    def liter_to_gallon(self, liter: float) -> dict[str, float]:
        return {"gallon": liter * 0.264172}

    def gallon_to_liter(self, gallon: float) -> dict[str, float]:
        return {"liter": gallon * 3.78541}

    def estimate_distance(self, cityA: str, cityB: str) -> dict[str, Any]:
        found = next((km for (a, b), km in _DISTANCES
                      if (cityA == a and cityB == b) or (cityA == b and cityB == a)), None)
        out: dict[str, Any] = ({"error": "distance not found in database."} if found is None
                               else {"distance": found})
        if self.long_context:
            out["intermediaryCities"] = _filler("INTERMEDIARY_CITIES")
        return out

    def get_zipcode_based_on_city(self, city: str) -> dict[str, str]:
        return {"zipcode": next((z for name, z in _ZIPCODES if name == city), "00000")}

    def set_navigation(self, destination: str) -> dict[str, str]:
        self.destination = destination
        return {"status": "Navigating to " + destination}

    def check_tire_pressure(self) -> dict[str, Any]:
        tyres = (self.frontLeftTirePressure, self.frontRightTirePressure,
                 self.rearLeftTirePressure, self.rearRightTirePressure)
        mean = (tyres[0] + tyres[1] + tyres[2] + tyres[3]) / 4
        return {"frontLeftTirePressure": tyres[0], "frontRightTirePressure": tyres[1],
                "rearLeftTirePressure": tyres[2], "rearRightTirePressure": tyres[3],
                "healthy_tire_pressure": 30 <= mean <= 35,
                "car_info": _filler("CAR_STATUS_METADATA_EXTENSION") if self.long_context else {}}

    def find_nearest_tire_shop(self) -> dict[str, str]:
        return {"shopLocation": "456 Oakwood Avenue, Rivermist, 83214"}
