"""Emitters: IR -> a small C AST -> deterministic, clang-format-clean C text."""
