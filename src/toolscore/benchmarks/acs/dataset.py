"""ACS's data: found, never downloaded. The released file also holds the requests this project
keeps aside to verify its judges independently, and the loader reads the development subset's
layout; a folder counts as the dataset only if it holds ``acs_dev.csv`` (pass --data)."""

from toolscore.data import DatasetSource

SOURCE = DatasetSource(name="acs", marker="acs_dev.csv")
