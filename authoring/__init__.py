"""Tools for whoever writes the course: derived lists, a new checkpoint's first files, verify.

Nothing here is copied into a practice folder, and nothing here is imported by the reference
(``course/src``). Only the standard library is used: nox imports these before any environment
exists.
"""
