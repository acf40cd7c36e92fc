"""Free text in generated C (a ring's description, a note) cannot change what the C compiles to:
every comment the C printer writes neutralises what would end it, nest another, continue a
line comment onto code, or carry a control character."""

from __future__ import annotations

import subprocess
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from nttgen.build import compiler
from nttgen.emit import c_ast as C
from nttgen.emit.c_ast.top import comment_text
from nttgen.generate import generate
from nttgen.rings import make_ring

INJECTIONS = (
    "*/ #error injected /*",
    "ok */ int injected = 1; /*",
    "line one\n#error injected on a new line",
    "trailing backslash joins the next line \\",
    "trigraph ??/",
    "control \x00\x07\x1b[31m characters",
)


def _unit(text: str) -> str:
    """A translation unit with ``text`` in every kind of comment the printer writes."""
    return C.Unit(
        (
            C.BlockComment((text, "second line " + text)),
            C.ShortComment(text),
            C.Comment(text),
            C.Directive("int after_the_comments;"),
        )
    ).render()


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(alphabet=st.sampled_from(list("*/\\?#\n\x00 ab")), max_size=40))
def test_no_text_escapes_a_comment(text: str) -> None:
    """Whatever the text, comments open and close only where the printer puts them."""
    cleaned = comment_text(text)
    assert "*/" not in cleaned and "/*" not in cleaned and "\\" not in cleaned
    assert "??" not in cleaned and cleaned.isprintable()
    rendered = _unit(text)
    assert rendered.count("/*") == rendered.count("*/") == 2
    assert rendered.rstrip().endswith("int after_the_comments;")


def test_an_injected_description_compiles_to_the_same_code(tmp_path: Path) -> None:
    """A ring description that tries to end the header comment and inject code leaves the
    generated C compiling (with -Werror) to the same object as a plain description."""
    objects = []
    for i, description in enumerate(("a plain description", " ".join(INJECTIONS))):
        ring = make_ring(256, 7681, name="n256_q7681", description=description)
        files = generate(ring, "c")
        d = tmp_path / str(i)
        d.mkdir()
        for name, text in files.items():
            (d / name).write_text(text)
        assert description.split()[0] in files.header  # the text is kept, neutralised
        obj = d / "k.o"
        cmd = [compiler(), "-std=c99", "-Wall", "-Wextra", "-Werror", "-O1", "-c"]
        p = subprocess.run(
            [*cmd, str(d / f"{files.stem}.c"), "-o", str(obj)], capture_output=True, text=True
        )
        assert p.returncode == 0, p.stderr
        objects.append(obj.read_bytes())
    assert objects[0] == objects[1]
