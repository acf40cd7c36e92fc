"""The programs: each transform written once against the DSL vocabulary."""
