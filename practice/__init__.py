"""The practice scaffold generator: a folder where a learner rebuilds one checkpoint.

``nox -s practice -- 06 DIR`` (or ``python -m practice 06 DIR``) writes the reference source as
it stood after checkpoint 05, checkpoint 06's modules as skeletons whose lab regions raise
``NotImplementedError("Lab 6.N: …")``, the focused tests of 00 to 06 and what runs them.
"""
