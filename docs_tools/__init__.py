"""Tools that build and check the course website (see docs/instructors.md)."""
