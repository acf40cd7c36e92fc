"""The README's Python examples run as they stand (each block in a fresh namespace, in the
order the README shows them): what a newcomer copies first must work."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_the_readme_has_python_examples() -> None:
    assert len(BLOCKS) >= 2, "the README's Python section lost its examples"


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_python_example_runs(index: int) -> None:
    namespace: dict[str, object] = {}
    # the second block continues the first (it uses np and nttgen), as a reader's session would
    for block in BLOCKS[: index + 1]:
        exec(compile(block, f"README.md python block {index + 1}", "exec"), namespace)
