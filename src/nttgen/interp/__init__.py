"""Interpreters of the IR: exact evaluation, the independent bounds check, op counts.

The interval analysis itself and its transfer functions live in :mod:`nttgen.dsl` (the builder
runs them live while recording); :mod:`.bounds` and :mod:`.transfer` re-export them here."""
