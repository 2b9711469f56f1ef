"""acs-verify: each rule on small hand-written examples, and every row of acs_dev.csv."""

from __future__ import annotations

from fractions import Fraction

import pytest
from support.data import ROOT as _DATA_ROOT
from support.data import needs

from toolscore.benchmarks.acs.verify import verify
from toolscore.benchmarks.acs.verify.checks import tonnage
from toolscore.benchmarks.acs.verify.constraints import (
    Abstain,
    Comparison,
    comparison_op,
    infer_domain,
    parse_constraint,
)
from toolscore.benchmarks.acs.verify.extract import extract_meal_plan, nutrient_values
from toolscore.benchmarks.acs.verify.markdown import read_lines, split_units, unit_numbers
from toolscore.benchmarks.acs.verify.workouts import extract_sessions

# --- comparisons -----------------------------------------------------------------------


@pytest.mark.parametrize("text,op", [
    ("must be at least 120 grams", ">="),
    ("a minimum of 90g", ">="),
    ("greater than or equal to 500 kg", ">="),
    ("no more than 60g", "<="),
    ("must not exceed 1800 calories", "<="),
    ("less than or equal to 2000", "<="),
    ("up to 3 hours", "<="),
    ("2400 or less calories", "<="),
    ("less than 70 grams", "<"),
    ("more than 5 exercises", ">"),
    ("must be 2100 calories", "=="),
    ("exactly 45 minutes", "=="),
    ("must cover 5 days", "=="),  # 'cover' is not 'over'
])
def test_comparison_words(text: str, op: str) -> None:
    assert comparison_op(text) == op


def test_comparison_is_exact() -> None:
    c = Comparison("==", Fraction(2000))
    assert c.holds(2000) and not c.holds(1990) and not c.holds(Fraction(20001, 10))
    assert Comparison("between", Fraction(30), Fraction(45)).holds(45)
    assert not Comparison("<", Fraction(80)).holds(80)


# --- constraint kinds ------------------------------------------------------------------


@pytest.mark.parametrize("text,domain,kind,scope,value", [
    ("The plan must last 5 days.", "meal-planning", "days", "each", 5),
    ("Number of days in the plan = 6", "meal-planning", "days", "each", 6),
    ("Each day must have 5 meals.", "meal-planning", "meals_per_day", "each", 5),
    ("The plan must include 10 meals (5 per day for 2 days).", "meal-planning",
     "meals_total", "each", 10),
    ("The daily protein intake must be at least 95 g.", "meal-planning", "nutrient", "each", 95),
    ("Total fat of the plan must be at most 120g (60g per day for 2 days).", "meal-planning",
     "nutrient", "total", 120),
    ("Each meal must contain at least 25g of protein.", "meal-planning", "nutrient", "meal", 25),
    ("The routine must have 5 sessions.", "workout-routine_cardio", "sessions", "each", 5),
    ("Each session must include 6 exercises.", "workout-routine_cardio", "exercises", "each", 6),
    ("The plan must include a total of 9 exercises.", "workout-routine_cardio",
     "exercises_total", "each", 9),
    ("Each session must last 45 minutes.", "workout-routine_cardio", "session_minutes",
     "each", 45),
    ("Each session must last 1.5 hours.", "workout-routine_cardio", "session_minutes",
     "each", 90),
    ("The plan must burn a total of 1500 calories.", "workout-routine_cardio",
     "session_calories", "total", 1500),
    ("Total lifting tonnage per session must be at least 3000 kg", "workout-routine_strength",
     "tonnage", "each", 3000),
])
def test_constraint_kinds(text: str, domain: str, kind: str, scope: str, value: int) -> None:
    c = parse_constraint(text, "", domain)
    assert not isinstance(c, Abstain), c
    assert (c.kind, c.scope, c.cmp.value) == (kind, scope, value)


@pytest.mark.parametrize("text,domain,low,high", [
    ("Each session must last at least 40 minutes and at most 55 minutes.",
     "workout-routine_cardio", 40, 55),
    ("Each session must last between 1 and 1.5 hours.", "workout-routine_cardio", 60, 90),
    ("The daily fat intake must be between 50 and 65 grams.", "meal-planning", 50, 65),
    ("The schedule must include between 7 and 8 hours of sleep.", "schedule", 420, 480),
])
def test_ranges(text: str, domain: str, low: int, high: int) -> None:
    c = parse_constraint(text, "", domain)
    assert not isinstance(c, Abstain)
    assert (c.cmp.op, c.cmp.value, c.cmp.high) == ("between", low, high)


def test_per_exercise_scope() -> None:
    text = "**Session 1**\n* Rowing: 12 minutes\n* Rest: 2 minutes\n* Cycling: 8 minutes\n"
    c = parse_constraint("Each exercise must last at least 10 minutes.", "",
                         "workout-routine_cardio")
    assert not isinstance(c, Abstain) and c.scope == "exercise"
    v = verify("", text, "Each exercise must last at least 10 minutes.", "workout-routine_cardio")
    assert v.label is False and v.values["values"] == [12, 8]


def test_snack_count_is_its_own_target() -> None:
    c = parse_constraint("Each day must include 2 snacks.", "", "meal-planning")
    assert not isinstance(c, Abstain) and c.kind == "meals_per_day" and c.target == "snack"


@pytest.mark.parametrize("text,activity,minutes", [
    ("The schedule must include 7.5 hours of sleep.", "sleep", 450),
    ("The schedule must include a 45-minute walk.", "walk", 45),
    ("The schedule must allocate at least 2 hours to reading.", "reading", 120),
    ("The dinner break must be 40 minutes long.", "dinner break", 40),
    ("Work hours must not exceed 8 hours.", "work hours", 480),
    ("The schedule must include half an hour of yoga.", "yoga", 30),
])
def test_schedule_activity_and_duration(text: str, activity: str, minutes: int) -> None:
    c = parse_constraint(text, "", "schedule")
    assert not isinstance(c, Abstain), c
    assert c.kind == "activity_minutes" and c.target == activity and c.cmp.value == minutes


def test_schedule_qualifiers() -> None:
    c = parse_constraint("The schedule must include exactly 5 hours of work ending at 4 pm.",
                         "", "schedule")
    assert not isinstance(c, Abstain)
    assert (c.target, c.end, c.end_by, c.cmp.op) == ("work", 16 * 60, False, "==")
    c = parse_constraint("The schedule must include 3 hours of work that end by 2 PM.", "",
                         "schedule")
    assert not isinstance(c, Abstain) and c.end == 14 * 60 and c.end_by
    c = parse_constraint("The schedule must include a 1-hour class from 9 AM to 10 AM.", "",
                         "schedule")
    assert not isinstance(c, Abstain) and (c.start, c.end, c.single) == (540, 600, True)
    c = parse_constraint("The schedule must include a 30-minute nap in the afternoon.", "",
                         "schedule")
    assert not isinstance(c, Abstain) and (c.target, c.part) == ("nap", "afternoon")
    c = parse_constraint("The schedule must include a 40 minute commute for each direction.",
                         "", "schedule")
    assert not isinstance(c, Abstain) and c.each_entry


def test_schedule_conjunction_splits_into_parts() -> None:
    c = parse_constraint("The schedule must include 1 hour for driving to work and 2 hours "
                         "for driving home.", "", "schedule")
    assert not isinstance(c, Abstain) and c.kind == "conjunction" and len(c.parts) == 2
    assert [p.cmp.value for p in c.parts] == [60, 120]


@pytest.mark.parametrize("constraint,request_,domain", [
    ("The schedule must include a 30-minute workout.", "", "schedule"),
    ("Each workout session must burn 300 calories.", "", "workout"),
    ("The daily protein intake must be at least 90 g.", "", "meal-planning"),
    ("The plan must span 3 days.", "Make me a 3-day vegan meal plan.", "meal-planning"),
])
def test_domain_inferred_when_not_given(constraint: str, request_: str, domain: str) -> None:
    assert infer_domain(constraint.lower(), request_) == domain


def test_durations_are_not_clock_times() -> None:
    c = parse_constraint("The schedule must include around 8 hours of sleep.", "", "schedule")
    assert not isinstance(c, Abstain) and (c.target, c.start, c.cmp.value) == ("sleep", None, 480)


def test_unreadable_constraints_abstain() -> None:
    assert isinstance(parse_constraint("The plan must be tasty.", "", "meal-planning"), Abstain)
    assert isinstance(parse_constraint("Sessions must be fun.", "", "workout-routine_cardio"),
                      Abstain)
    assert isinstance(parse_constraint("The schedule must be relaxing.", "", "schedule"), Abstain)
    v = verify("", "anything", "The plan must be tasty.", "meal-planning")
    assert v.label is None and "not understood" in v.reason


# --- markdown --------------------------------------------------------------------------


def test_unit_headers() -> None:
    assert unit_numbers("Day 1 and 3:") == [1, 3]
    assert unit_numbers("Day 6-7: Rest") == [6, 7]
    assert unit_numbers("Session 2 (Legs)") == [2]
    assert unit_numbers("Sessions: 4 per week") is None
    units, outside = split_units(read_lines("Intro\n**Day 1**\n* a\n**Notes:**\n* b"))
    assert [len(u.lines) for u in units] == [1]
    assert [ln.text for ln in outside] == ["Intro", "Notes:", "b"]


# --- meal plans ------------------------------------------------------------------------

MEALS = """**Plan (2000 calories, 100g protein)**

**Day 1**

**Breakfast**
* Toast (2 slices: 200 cal, 8g protein, 2g fat; 1 tbsp jam: 50 cal, 0g protein, 0g fat)
**Lunch**
* Soup (1 bowl: 300 cal | 12g protein | 5g fat)
**Snack**
* Apple (95 calories)

**Day 2**

* **Breakfast**
    * Oat bowl
        * 1 cup oats (150 calories, 5g protein, 3g fat)
        * 1 cup milk (100 calories, 8g protein, 2.5g fat)
* **Dinner**
    * Curry (1 plate: 600 cal)
        * Protein: 30g, Fat: 20g

**Daily total:** 850 calories

This meal plan provides 2000 calories per day.
"""


def test_meal_plan_days_meals_and_sums() -> None:
    plan = extract_meal_plan(MEALS)
    assert len(plan.days) == 2
    assert [len(d.meals) for d in plan.days] == [3, 2]
    assert plan.days[0].totals["calories"] == 645
    assert plan.days[0].totals["protein"] == 20
    assert plan.days[1].totals["calories"] == 850
    assert plan.days[1].totals["fat"] == Fraction(255, 10)
    assert plan.days[1].totals["protein"] == 43


def test_nutrient_formats() -> None:
    v = nutrient_values("(300 kcal, 20 g protein, Fat: 4g) and 1 scoop 30g protein powder")
    assert v == {"calories": [300], "protein": [20], "fat": [4]}


def test_parent_figures_not_double_counted() -> None:
    text = "**Day 1**\n**Lunch**\n* Wrap (500 cal)\n    * Tortilla (200 cal)\n    * Beans (300 cal)"
    assert extract_meal_plan(text).days[0].totals["calories"] == 500


def test_meal_table() -> None:
    text = ("**Day 1**\n| Meal | Food | Calories | Protein (g) |\n|---|---|---|---|\n"
            "| Breakfast | Eggs | 300 | 20 |\n| Lunch | Rice | 400 | 8 |\n| Total | | 700 | 28 |")
    day = extract_meal_plan(text).days[0]
    assert day.totals["calories"] == 700 and day.totals["protein"] == 28 and len(day.meals) == 2


def test_snacks_are_meals_unless_asked_for_separately() -> None:
    text = "**Day 1**\nBreakfast: eggs (300 cal)\nLunch - soup (400 cal)\nSnack: nuts (200 cal)\n"
    assert [len(d.meals) for d in extract_meal_plan(text).days] == [3]
    c = "Each day must include 3 meals."
    assert verify("Plan 3 meals a day.", text, c, "meal-planning").label is True
    assert verify("Plan 2 meals and 1 snack a day.", text, c, "meal-planning").label is False
    assert verify("", text, "Each day must include 1 snack.", "meal-planning").label is True


def test_per_day_summary_table_is_not_counted() -> None:
    text = ("**Day 1**\n**Lunch**\n* Rice (400 cal, 8g protein)\n\n"
            "| Day | Calories | Protein |\n|---|---|---|\n| 1 | 2000 | 150 |\n")
    assert extract_meal_plan(text).days[0].totals["calories"] == 400


def test_meal_verdicts() -> None:
    assert verify("", MEALS, "The meal plan must span 2 days.", "meal-planning").label is True
    v = verify("", MEALS, "The daily calorie intake must not exceed 800 calories.",
               "meal-planning")
    assert v.label is False and v.values["values"] == [645, 850]
    v = verify("", MEALS, "Each day must include 3 meals.", "meal-planning")
    assert v.label is False
    # a response's own claim ("provides 2000 calories per day") is not evidence
    assert verify("", MEALS, "The daily caloric intake must be 2000 calories.",
                  "meal-planning").label is False


# --- workouts --------------------------------------------------------------------------

CARDIO = """**Session 1**

| Exercise | Duration (min) | Calories Burned |
|---|---|---|
| Rowing | 10 | 90 |
| Rest | 5 | 0 |
| Cycling | 15 | 110 |

* Do this circuit twice!

**Session 2**

* **Skipping:** 12 minutes (120 calories)
* Rest: 3 minutes
* **Stairs (10 min):** ~80 calories
* Total: 25 minutes, 200 calories

**Day 3: Rest**

**Session 4**
* Repeat Session 2
"""


def test_cardio_sessions() -> None:
    sessions = extract_sessions(CARDIO)
    assert len(sessions) == 3  # the rest day is not a session; the repeat is
    s1, s2, s4 = sessions
    assert [e.name for e in s1.real] == ["Rowing", "Cycling"] and s1.rounds == 2
    assert [e.minutes for e in s2.exercises] == [12, 3, 10]
    assert [e.name for e in s4.real] == ["Skipping", "Stairs"]
    v = verify("", CARDIO, "Each workout session must last at least 25 minutes.",
               "workout-routine_cardio")
    assert v.label is True and v.values["values"] == [60, 25, 25]
    v = verify("", CARDIO, "Each workout session must burn 400 calories.",
               "workout-routine_cardio")
    assert v.label is False and v.values["values"] == [400, 200, 200]
    assert verify("", CARDIO, "Each workout session must include 2 exercises.",
                  "workout-routine_cardio").label is True


def test_drill_repeats_do_not_multiply_the_session() -> None:
    text = ("**Session 1**\n* Sprints (10 minutes, 100 calories)\n"
            "    * Sprint 30 seconds, walk 30 seconds, repeat 10 times\n")
    assert extract_sessions(text)[0].rounds == 1
    text += "* Repeat the whole circuit 3 times.\n"
    assert extract_sessions(text)[0].rounds == 3


def test_name_only_sessions_use_the_exercise_table() -> None:
    text = ("**Exercises:**\n| Exercise | Duration | Calories |\n|---|---|---|\n"
            "| Running | 20 minutes | 200 |\n| Swimming | 30 minutes | 250 |\n\n"
            "**Session 1:**\n* Running\n* Swimming\n**Session 2:**\n* Swimming\n")
    v = verify("", text, "Each workout session must last 50 minutes.", "workout-routine_cardio")
    assert v.label is False and v.values["values"] == [50, 30]
    v = verify("", text, "The workout plan must include a total of 2 exercises.",
               "workout-routine_cardio")
    assert v.label is True


def test_missing_figures_abstain() -> None:
    text = "**Session 1**\n* Running: 20 minutes\n* Rowing\n"
    v = verify("", text, "Each workout session must last 20 minutes.", "workout-routine_cardio")
    assert v.label is None and "Rowing" in v.reason


STRENGTH = """**Day 1 and 3: Push**
* **Bench Press:** 4 sets x 6 reps @ 90 kg
* **Dumbbell Press:** 3 sets of 10 reps at 20 kg per dumbbell
* **Dips:** 3 sets of 12 reps (Bodyweight 75kg)
* **Plank:** 3 sets of 45 seconds

**Day 2**
| Exercise | Weight (kg) | Sets | Reps | Tonnage (kg) |
|---|---|---|---|---|
| Squat | 110 | 5 | 5 | 9999 |
| Lunge | 30 per leg | 3 | 8 | 720 |
| Push-up | - | 3 | 15 | 0 |
"""


def test_strength_tonnage_conventions() -> None:
    sessions = extract_sessions(STRENGTH)
    assert len(sessions) == 3
    # weights count as written (no doubling "per dumbbell"), bodyweight at its stated kg,
    # timed sets and '-' weights count 0, the response's own tonnage column is ignored
    assert tonnage(sessions[0]) == 4 * 6 * 90 + 3 * 10 * 20 + 3 * 12 * 75
    assert tonnage(sessions[2]) == 5 * 5 * 110 + 3 * 8 * 30
    v = verify("", STRENGTH, "Total lifting tonnage per session must be at least 3500 kg",
               "workout-routine_strength")
    assert v.label is False and v.values["values"] == [5460, 5460, 3470]
    assert verify("", STRENGTH, "Number of exercises per session must be equal to 3",
                  "workout-routine_strength").label is False


# --- the released dev set --------------------------------------------------------------

DATA = _DATA_ROOT / "acs" / "acs_dev.csv"


@needs("acs")
def test_every_dev_row_decided_and_right() -> None:
    from toolscore.benchmarks.acs.data import load_rows

    rows = load_rows(DATA)
    right = sum(verify(r.request, r.response, r.constraint, r.domain).label == r.label
                for r in rows)
    assert (right, len(rows)) == (322, 322)
