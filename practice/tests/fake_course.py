"""A small synthetic course, written into a temporary folder, to test the generator on.

Three checkpoints, like the real ones in miniature: 00 observe, 01 and 02 build. It uses the
course's real catalog, conftest and pyproject.toml, so the scaffold runs the same machinery.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

MANIFESTS = {
    "00_intro": """
        number = "00"
        title = "Intro"
        slug = "intro"
        mode = "observe"
        modules = ["intro.py"]
        labs = []
    """,
    "01_counter": """
        number = "01"
        title = "Counter"
        slug = "counter"
        mode = "build"
        prerequisite = "00"
        modules = ["counter.py"]

        [[labs]]
        id = "1.1"
        summary = "Increment the counter up to LIMIT."
        hint = "Compute the new value first; refuse it before storing it."

        [[labs]]
        id = "1.2"
        summary = "Count the words of a text."
        hint = "A regular expression finds the words."
    """,
    "02_greeter": """
        number = "02"
        title = "Greeter"
        slug = "greeter"
        mode = "build"
        prerequisite = "01"
        modules = ["greeter.py"]

        [[labs]]
        id = "2.1"
        summary = "Greet a person by name."
        hint = "An f-string and count_words from checkpoint 01."

        [[labs]]
        id = "2.2"
        summary = "Spell a name, one letter at a time."
        hint = "An async generator: async def with a yield in a loop."
    """,
}

MODULES = {
    "intro.py": '''
        """Say hello: the observe checkpoint."""

        __all__ = ["GREETING"]

        GREETING = "hello"
    ''',
    "counter.py": '''
        """Count up to a limit, and count words."""

        from __future__ import annotations

        __all__ = ["LIMIT", "Counter", "CounterError", "count_words"]

        import re

        LIMIT = 10
        _WORD = re.compile(r"\\w+")


        class CounterError(ValueError):
            """Raised when a count would pass LIMIT."""


        # --8<-- [start:counter]
        class Counter:
            """Count up to LIMIT."""

            def __init__(self) -> None:
                self._value = 0

            @property
            def value(self) -> int:
                """Return the count."""
                return self._value

            def increment(self, by: int = 1) -> int:
                """Add ``by`` and return the new count; raise CounterError past LIMIT."""
                # BEGIN LAB 1.1
                new_value = self._value + by
                if new_value > LIMIT:
                    raise CounterError(f"count {new_value} is past {LIMIT}")
                self._value = new_value
                return self._value
                # END LAB 1.1


        # --8<-- [end:counter]


        def count_words(text: str) -> int:
            """Return how many words ``text`` holds."""
            # BEGIN LAB 1.2
            return len(_words_of(text))
            # END LAB 1.2


        # BEGIN LAB 1.2
        def _words_of(text: str) -> list[str]:
            """Return the words of ``text``."""
            return _WORD.findall(text)


        # END LAB 1.2
    ''',
    "greeter.py": '''
        """Greet people."""

        from __future__ import annotations

        __all__ = ["greet", "spell"]

        from collections.abc import AsyncIterator

        from harness.counter import count_words


        def greet(name: str) -> str:
            """Return a greeting for ``name``."""
            # BEGIN LAB 2.1
            return f"hello {name} ({count_words(name)} words)"
            # END LAB 2.1


        async def spell(name: str) -> AsyncIterator[str]:
            """Yield the letters of ``name``."""
            # BEGIN LAB 2.2
            for letter in name:
                yield letter
            # END LAB 2.2
    ''',
}

TESTS = {
    "00_intro": """
        from harness.intro import GREETING


        def test_greeting_is_hello() -> None:
            assert GREETING == "hello"
    """,
    "01_counter": """
        import pytest

        from harness.counter import Counter, CounterError, count_words


        @pytest.mark.lab("1.1")
        def test_increment_adds() -> None:
            assert Counter().increment(3) == 3


        @pytest.mark.lab("1.1")
        def test_increment_past_limit_is_refused() -> None:
            with pytest.raises(CounterError, match=r"^count 11 is past 10$"):
                Counter().increment(11)


        @pytest.mark.lab("1.2")
        def test_count_words_counts_words() -> None:
            assert count_words("one two  three") == 3
    """,
    "02_greeter": """
        import pytest

        from harness.greeter import greet, spell


        @pytest.mark.lab("2.1")
        def test_greet_names_the_person() -> None:
            assert greet("Ada Lovelace") == "hello Ada Lovelace (2 words)"


        @pytest.mark.lab("2.2")
        async def test_spell_yields_each_letter() -> None:
            assert [letter async for letter in spell("Ada")] == ["A", "d", "a"]
    """,
}


def write_fake_course(root: Path) -> Path:
    """Write the synthetic course under ``root`` and return ``root``."""
    src = root / "course" / "src"
    src.mkdir(parents=True)
    (src / "__init__.py").write_text('"""The fake harness."""\n', encoding="utf-8")
    (src / "py.typed").write_text("", encoding="utf-8")
    for name, text in MODULES.items():
        (src / name).write_text(_dedent(text), encoding="utf-8")
    checkpoints = root / "checkpoints"
    checkpoints.mkdir()
    for name in ("catalog.py", "conftest.py", "support.py"):
        shutil.copyfile(ROOT / "checkpoints" / name, checkpoints / name)
    for name, manifest in MANIFESTS.items():
        folder = checkpoints / name
        folder.mkdir()
        (folder / "checkpoint.toml").write_text(_dedent(manifest), encoding="utf-8")
        (folder / f"test_{name}.py").write_text(_dedent(TESTS[name]), encoding="utf-8")
    shutil.copyfile(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


def _dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")
