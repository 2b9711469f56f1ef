"""ACS: does a response satisfy the user's arithmetic constraints? (judge accuracy vs humans)."""
