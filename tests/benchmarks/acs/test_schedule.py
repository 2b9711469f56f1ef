"""acs-verify on schedules: timed entries, nested breaks, activities, anchors, time points."""

from __future__ import annotations

import pytest

from toolscore.benchmarks.acs.verify import verify
from toolscore.benchmarks.acs.verify.constraints import Abstain, parse_constraint
from toolscore.benchmarks.acs.verify.timeline import read_schedule

# --- schedules -------------------------------------------------------------------------

SCHEDULE = """**My Day**

**6:30 AM:** Wake up
**7:00 AM - 7:45 AM:** Breakfast
**8:00 AM - 4:30 PM:** Work (includes lunch break from 12:00 PM - 12:30 PM)
**4:30 PM** Commute home
**5:15 PM** Gym
**6:15 PM** Dinner
**7:00 PM** Free time
**10:00 PM** Prepare for bed
**10:30 PM** Sleep
"""


def test_schedule_entries() -> None:
    entries = read_schedule(SCHEDULE)
    labels = [e.label for e in entries]
    assert labels[:3] == ["Wake up", "Breakfast",
                          "Work (includes lunch break from 12:00 PM - 12:30 PM)"]
    assert entries[-1].label == "lunch break" and entries[-1].minutes == 30
    sleep = next(e for e in entries if e.label == "Sleep")
    assert sleep.minutes == 8 * 60  # 10:30 PM to the first entry, 6:30 AM


@pytest.mark.parametrize("constraint,label", [
    ("The schedule must include 8 hours of sleep.", True),
    ("The schedule must include exactly 8.5 hours of work.", False),  # lunch is cut out
    ("The schedule must include 8 hours of work starting at 8 AM.", True),
    ("The schedule must include 8 hours of work ending at 5 pm.", False),
    ("The schedule must include at least 2 hours for meals.", True),  # 45 + 30 + 45
    ("The schedule must include a 1-hour workout in the evening.", True),  # gym ~ workout
    ("The schedule must include 3 hours of free time in the evening.", True),
    ("The schedule must include a 45-minute commute for each direction.", False),
])
def test_schedule_verdicts(constraint: str, label: bool) -> None:
    v = verify("", SCHEDULE, constraint, "schedule")
    assert v.label is label, v.reason


def test_schedule_without_am_pm_and_heading_labels() -> None:
    text = "**Sleep**\n* 11:00 PM - 7:00 AM\n**Work**\n* 9:00 - 12:00\n* 1:00 - 5:00\n"
    entries = read_schedule(text)
    assert [(e.label, e.minutes) for e in entries] == [("Sleep", 480), ("Work", 180),
                                                       ("Work", 240)]
    assert verify("", text, "The schedule must include 7 hours of work.", "schedule").label


def test_schedule_plain_headings_and_clock_anchor() -> None:
    text = ("Sleep\n* 10:00 PM - 6:00 AM\nMorning\n* 7:00 AM - 3:00 PM Work\n"
            "* 12:00 PM - 12:45 PM Lunch break\n")
    assert read_schedule(text)[0].label == "Sleep"
    c = parse_constraint("The schedule must include a 45-minute lunch break at 12 PM.", "",
                         "schedule")
    assert not isinstance(c, Abstain) and (c.target, c.start) == ("lunch break", 720)
    assert verify("", text, "The schedule must include a 45-minute lunch break at 12 PM.",
                  "schedule").label is True
    assert verify("", text, "Work must start at 8 AM.", "schedule").label is False


def test_schedule_time_points() -> None:
    text = "6:00 AM - Wake up\n6:30 PM - 7:15 PM Dinner\n10:00 PM - Sleep\n"
    assert verify("", text, "Dinner must be between 6 PM and 8 PM.", "schedule").label is True
    assert verify("", text, "I must wake up before 6 AM.", "schedule").label is False


def test_summary_lists_and_meetings() -> None:
    text = ("7:00 AM - 7:30 AM Breakfast\n9:00 AM - 5:00 PM Work\n"
            "10:00 AM - 11:00 AM Team meeting\n12:00 PM - 1:00 PM Lunch\n\n"
            "Meals:\n- 7:00 AM - 7:30 AM Breakfast\n")
    assert len(read_schedule(text)) == 4  # the repeated breakfast is not a second meal
    # a lunch inside the work block is cut out of it, a meeting is still work
    assert verify("", text, "The schedule must include 7 hours of work.", "schedule").label
    assert verify("", text, "The schedule must include 1.5 hours for meals.", "schedule").label


def test_schedule_tables_either_column_order() -> None:
    for text in ("| Time | Activity |\n|---|---|\n| 10:00 PM - 6:00 AM | Sleep |\n"
                 "| 9:00 AM - 5:00 PM | Work |\n",
                 "| Activity | Time |\n|---|---|\n| Sleep | 10:00 PM - 6:00 AM |\n"
                 "| Work | 9:00 AM - 5:00 PM |\n"):
        assert [(e.label, e.minutes) for e in read_schedule(text)] == [("Sleep", 480),
                                                                       ("Work", 480)]
