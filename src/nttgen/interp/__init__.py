"""Interpreters of the IR: exact evaluation, interval bounds, op counts."""
