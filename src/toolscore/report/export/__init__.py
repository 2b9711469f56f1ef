"""A run in other tools' formats: flat tables and Inspect evaluation logs."""
