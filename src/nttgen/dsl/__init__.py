"""The DSL: a vocabulary of lane operations, its exact semantics, the IR programs are recorded
into, and the builder that programs are written against."""
