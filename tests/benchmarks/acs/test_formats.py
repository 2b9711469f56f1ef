"""acs-verify on workout layouts the dev set does not use (hand-written, not dev rows): named
and lettered workouts, one table with a session column, bullet lists, one template done N times
a week, weights in lb, rest rows and rest days; and the scope words of totals."""

from __future__ import annotations

import pytest

from toolscore.benchmarks.acs.verify import verify
from toolscore.benchmarks.acs.verify.checks import tonnage
from toolscore.benchmarks.acs.verify.markdown import KG_PER_LB
from toolscore.benchmarks.acs.verify.workouts import extract_sessions

LETTERED = """# Two-Day Strength Split

## Workout A - Push

| Exercise | Sets | Reps | Weight (kg) |
|---|---|---|---|
| Bench Press | 4 | 6 | 90 |
| Dips | 3 | 10 | bodyweight |
| Shoulder Press | 3 | 8 | 40 |

## Workout B - Pull

| Exercise | Sets | Reps | Weight (kg) |
|---|---|---|---|
| Deadlift | 3 | 5 | 140 |
| Barbell Row | 4 | 8 | 70 |

Rest at least one day between workouts.
"""

NAMED = """Here is a split built around three days.

**Upper Body Day**
- Push-ups: 3 sets of 15 reps
- Chin-ups — 3x6
- Plank: 2 minutes

**Rest Day**
- Easy walk, 20 minutes

**Leg Day:**
- Goblet Squat: 4 x 10 @ 24 kg
- Walking Lunges: 3 sets of 12 reps with 16 kg
- Calf Raises: 3x20 @ 30kg

**Notes:**
- Sleep well.
"""

COLUMN = """| Day | Exercise | Duration (min) | Calories |
|---|---|---|---|
| Monday | Rowing | 20 | 200 |
| | Rest | 3 | - |
| | Jump Rope | 10 | 120 |
| Wednesday | Rest day | - | - |
| Friday | Cycling | 40 | 350 |
| | Burpees | 5 | 70 |
"""

TEMPLATE = """Train 3x per week with this circuit:

- Kettlebell Swings: 15 minutes (180 calories)
- Box Jumps: 10 minutes (110 calories)
- Rest: 5 minutes
- Battle Ropes: 10 minutes (130 calories)

**Tips:**
- Drink water.
- Stop if you feel pain.
"""

POUNDS = """**Session 1:**

| Exercise | Sets | Reps | Weight (lbs) |
|---|---|---|---|
| Squat | 5 | 5 | 225 |
| Leg Curl | 3 | 10 | 90 lb |

**Session 2:**
* Bench Press: 3 sets x 8 reps @ 185 lbs
* Curl: 3 x 10 @ 20 kg
"""


def test_lettered_workouts_are_sessions_and_the_title_is_not() -> None:
    s = extract_sessions(LETTERED)
    assert [len(x.real) for x in s] == [3, 2]
    assert [tonnage(x) for x in s] == [4 * 6 * 90 + 3 * 8 * 40, 3 * 5 * 140 + 4 * 8 * 70]
    req = "A push/pull split, 2 workouts a week, at least 3000 kg per workout."
    assert verify(req, LETTERED, "The plan must contain 2 sessions.").label is True
    assert verify(req, LETTERED, "Each workout must include 3 exercises.").label is False
    v = verify(req, LETTERED, "Total lifting tonnage per workout must be at least 3000 kg")
    assert v.label is True and v.values["values"] == [3120, 4340]


def test_named_days_skip_rest_days_and_notes() -> None:
    s = extract_sessions(NAMED)
    assert [x.title for x in s] == ["Upper Body Day", "Leg Day"]
    assert [len(x.real) for x in s] == [3, 3]
    assert tonnage(s[1]) == 4 * 10 * 24 + 3 * 12 * 16 + 3 * 20 * 30
    assert verify("", NAMED, "Number of workout sessions must be equal to 2", "workout-routine"
                  "_strength").label is True
    v = verify("", NAMED, "Total weight lifted per session must be at least 2000 kg",
               "workout-routine_strength")
    assert v.label is None  # the upper-body day lifts no stated weight: not guessed


def test_one_table_with_a_session_column_merged_cells_and_rest() -> None:
    s = extract_sessions(COLUMN)
    assert [x.title for x in s] == ["Monday", "Friday"]
    assert [len(x.real) for x in s] == [2, 2]
    dom = "workout-routine_cardio"
    assert verify("", COLUMN, "Each workout session must last 33 minutes.", dom).label is False
    v = verify("", COLUMN, "Each workout session must last at least 33 minutes.", dom)
    assert v.label is True and v.values["values"] == [33, 45]  # the rest row counts
    assert verify("", COLUMN, "Number of sessions must be equal to 2", dom).label is True


def test_a_template_done_n_times_a_week() -> None:
    s = extract_sessions(TEMPLATE)
    assert len(s) == 3 and [len(x.real) for x in s] == [3, 3, 3]
    dom = "workout-routine_cardio"
    assert verify("", TEMPLATE, "The workout plan must contain 3 sessions.", dom).label is True
    assert verify("", TEMPLATE, "Each workout session must burn at least 420 calories.",
                  dom).label is True
    v = verify("", TEMPLATE, "The routine must burn 1260 calories per week.", dom)
    assert v.label is True and v.values["values"] == [1260]
    # without a frequency the listed workout is one session
    assert len(extract_sessions(TEMPLATE.replace("Train 3x per week with", "Try"))) == 1


def test_weights_in_lb_are_weighed_in_kg() -> None:
    s = extract_sessions(POUNDS)
    assert tonnage(s[0]) == (5 * 5 * 225 + 3 * 10 * 90) * KG_PER_LB
    assert tonnage(s[1]) == 3 * 8 * 185 * KG_PER_LB + 3 * 10 * 20
    dom = "workout-routine_strength"
    kg0 = float(tonnage(s[0]))  # about 3776 kg
    assert verify("", POUNDS, "Total lifting tonnage per session must be at least 3700 kg",
                  dom).values["values"][0] == pytest.approx(kg0)
    # a constraint in lb is compared in kg too: session 1 lifts 8325 lb exactly
    assert verify("", POUNDS.split("**Session 2")[0],
                  "Total tonnage per session must be at least 8325 lbs", dom).label is True
    assert verify("", POUNDS.split("**Session 2")[0],
                  "Total tonnage per session must be more than 8325 lbs", dom).label is False


@pytest.mark.parametrize(("constraint", "values"), [
    ("Each session must burn at least 400 calories.", [420, 420, 420]),
    ("The workout must burn at least 400 calories per workout.", [420, 420, 420]),
    ("Calories burned per day must be at least 400.", [420, 420, 420]),
    ("The routine must burn at least 1200 calories.", [1260]),
    ("The plan must burn at least 1200 calories in total.", [1260]),
    ("Calories burned for the routine must be at least 1200.", [1260]),
    ("The workouts must burn at least 1200 calories per week.", [1260]),
    ("Total calories burned per session must be at least 400.", [420, 420, 420]),
])
def test_scope_words_of_totals(constraint: str, values: list[int]) -> None:
    v = verify("", TEMPLATE, constraint, "workout-routine_cardio")
    assert v.label is True and v.values["values"] == values


MEALS = """**Day 1**
- Breakfast: oats (400 cal, 20g protein)
- Dinner: rice and tofu (800 cal, 40g protein)

**Day 2**
- Breakfast: eggs (500 cal, 30g protein)
- Dinner: pasta (700 cal, 25g protein)
"""


@pytest.mark.parametrize(("constraint", "label", "values"), [
    ("The daily caloric intake must be 1200 calories.", True, [1200, 1200]),
    ("The meal plan must provide 2400 calories in total.", True, [2400]),
    ("Protein must be at least 115 grams for both days combined.", True, [115]),
    ("The total protein intake must be at least 60g per day.", False, [60, 55]),
])
def test_meal_scope_words(constraint: str, label: bool, values: list[int]) -> None:
    v = verify("A 2-day plan", MEALS, constraint, "meal-planning")
    assert v.label is label and v.values["values"] == values

