"""harness: the reference agent harness that the course builds, one checkpoint at a time.

Each module is one checkpoint's mechanism; the checkpoint map in README.md lists them.
"""
