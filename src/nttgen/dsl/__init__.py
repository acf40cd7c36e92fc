"""The DSL: a vocabulary of lane operations, its exact semantics and its interval semantics
(transfer functions), the IR programs are recorded into, the interval analysis that the
builder runs live, and the builder that programs are written against. It imports nothing of
:mod:`nttgen.interp`, which sits above it."""
