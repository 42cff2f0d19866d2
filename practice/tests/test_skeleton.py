"""What a skeleton keeps, what replaces each region, and the stub's exact message."""

from __future__ import annotations

import ast
import asyncio
import textwrap
import types

import pytest

from practice.regions import LabMarkerError
from practice.skeleton import make_skeleton, stub_message

SUMMARIES = {"6.1": "Validate the arguments.", "6.2": "Register tools atomically."}
PAGE = "checkpoints/06_tool_contract.md"


def skeleton_of(source: str) -> str:
    return make_skeleton(textwrap.dedent(source), "tool.py", summaries=SUMMARIES, page=PAGE).text


def load(text: str) -> types.ModuleType:
    module = types.ModuleType("skeleton_under_test")
    exec(compile(text, "skeleton_under_test.py", "exec"), module.__dict__)
    return module


def test_stub_message_names_lab_summary_and_page() -> None:
    assert stub_message("6.2", "Register tools atomically.", PAGE) == (
        "Lab 6.2: Register tools atomically — see docs/checkpoints/06_tool_contract.md"
    )


def test_function_region_becomes_todo_and_raise_keeping_signature_and_docstring() -> None:
    source = '''\
        """Tools."""

        __all__ = ["LIMIT", "ToolError", "register"]

        LIMIT = 3


        class ToolError(ValueError):
            """Raised when a tool is wrong."""


        def register(names: list[str]) -> int:
            """Register ``names``; return how many."""
            # BEGIN LAB 6.2
            if len(names) > LIMIT:
                raise ToolError("too many")
            return len(names)
            # END LAB 6.2
        '''
    assert skeleton_of(source) == textwrap.dedent(
        '''\
        """Tools."""

        __all__ = ["LIMIT", "ToolError", "register"]

        LIMIT = 3


        class ToolError(ValueError):
            """Raised when a tool is wrong."""


        def register(names: list[str]) -> int:
            """Register ``names``; return how many."""
            # TODO(Lab 6.2): Register tools atomically.
            raise NotImplementedError(
                "Lab 6.2: Register tools atomically — see docs/checkpoints/06_tool_contract.md"
            )
        '''
    )


def test_stub_raises_not_implemented_error_with_the_lab_message() -> None:
    source = '''\
        def register() -> int:
            """Register."""
            # BEGIN LAB 6.2
            return 1
            # END LAB 6.2
        '''
    module = load(skeleton_of(source))
    with pytest.raises(
        NotImplementedError,
        match=r"^Lab 6\.2: Register tools atomically — see docs/checkpoints/06_tool_contract\.md$",
    ):
        module.register()


def test_short_stub_fits_on_one_line() -> None:
    source = "def f() -> int:\n    # BEGIN LAB 6.1\n    return 1\n    # END LAB 6.1\n"
    text = make_skeleton(source, "t.py", summaries={"6.1": "Do."}, page="p.md").text
    assert text == (
        "def f() -> int:\n"
        "    # TODO(Lab 6.1): Do.\n"
        '    raise NotImplementedError("Lab 6.1: Do — see docs/p.md")\n'
    )


def test_quotes_and_backslashes_in_a_summary_stay_a_valid_message() -> None:
    summary = 'Refuse "bad" names\\paths and `x`.'
    source = "def f() -> int:\n    # BEGIN LAB 6.1\n    return 1\n    # END LAB 6.1\n"
    text = make_skeleton(source, "t.py", summaries={"6.1": summary}, page="p.md").text
    with pytest.raises(NotImplementedError) as caught:
        load(text).f()
    assert str(caught.value) == 'Lab 6.1: Refuse "bad" names\\paths and `x` — see docs/p.md'


def test_long_todo_comment_is_wrapped_within_100_columns() -> None:
    summary = " ".join(["validate"] * 30) + "."
    source = (
        "class A:\n    def f(self) -> None:\n"
        "        # BEGIN LAB 6.1\n        pass\n        # END LAB 6.1\n"
    )
    text = make_skeleton(source, "t.py", summaries={"6.1": summary}, page="p.md").text
    comments = [line for line in text.splitlines() if line.lstrip().startswith("#")]
    assert len(comments) > 1
    assert all(len(line) <= 100 for line in comments)
    assert comments[1].startswith("        #   validate")


@pytest.mark.parametrize(
    "summary",
    [
        "Replace this placeholder with the first lab of Agent loop.",
        " ".join(["Validate"] * 40) + ".",
        "Keep A_very_long_identifier_" * 3 + ' and a quote " inside.',
    ],
)
def test_long_stub_message_is_split_within_100_columns_and_reads_the_same(summary: str) -> None:
    source = (
        "class A:\n    def f(self) -> None:\n"
        "        # BEGIN LAB 7.1\n        pass\n        # END LAB 7.1\n"
    )
    page = "checkpoints/07_agent_loop.md"
    text = make_skeleton(source, "t.py", summaries={"7.1": summary}, page=page).text
    assert [line for line in text.splitlines() if len(line) > 100] == []
    with pytest.raises(NotImplementedError) as caught:
        load(text).A().f()
    assert str(caught.value) == f"Lab 7.1: {summary.rstrip('.')} — see docs/{page}"


def test_module_region_of_helpers_becomes_a_todo_comment() -> None:
    source = '''\
        def count(text: str) -> int:
            """Count words."""
            # BEGIN LAB 6.1
            return len(_words(text))
            # END LAB 6.1


        # BEGIN LAB 6.1
        def _words(text: str) -> list[str]:
            return text.split()


        _SEPARATOR = " "
        # END LAB 6.1


        def other() -> int:
            """Return two."""
            return 2
        '''
    text = skeleton_of(source)
    assert "_words" not in text
    assert "_SEPARATOR" not in text
    assert (
        "\n\n# TODO(Lab 6.1): add here any private helpers you need for: Validate the arguments.\n"
        "\n\ndef other() -> int:\n"
    ) in text
    assert load(text).other() == 2


def test_class_region_that_was_the_whole_body_leaves_pass() -> None:
    source = """\
        class Walker:
            # BEGIN LAB 6.1
            def _step(self) -> None:
                pass
            # END LAB 6.1
        """
    text = skeleton_of(source)
    assert text.endswith("for: Validate the arguments.\n    pass\n")
    assert load(text).Walker() is not None


def test_helper_used_outside_the_regions_is_refused() -> None:
    source = """\
        # BEGIN LAB 6.1
        def _default() -> int:
            return 1
        # END LAB 6.1


        DEFAULT = _default()
        """
    with pytest.raises(LabMarkerError) as caught:
        skeleton_of(source)
    assert str(caught.value) == (
        "tool.py:7: _default is used outside the lab regions but defined only inside one: "
        "keep it outside the markers, or move its use into a region"
    )


def test_private_method_removed_but_called_from_kept_code_is_refused() -> None:
    source = """\
        class Registry:
            def names(self) -> list[str]:
                return self._sorted()

            # BEGIN LAB 6.2
            def _sorted(self) -> list[str]:
                return []
            # END LAB 6.2
        """
    with pytest.raises(LabMarkerError, match=r"^tool\.py:3: _sorted is used outside"):
        skeleton_of(source)


def test_async_generator_stub_still_raises_the_lab_error_when_iterated() -> None:
    source = '''\
        from collections.abc import AsyncIterator


        async def letters(name: str) -> AsyncIterator[str]:
            """Yield the letters of ``name``."""
            # BEGIN LAB 6.1
            for letter in name:
                yield letter
            # END LAB 6.1
        '''
    module = load(skeleton_of(source))

    async def consume() -> list[str]:
        return [letter async for letter in module.letters("ab")]

    with pytest.raises(NotImplementedError, match=r"^Lab 6\.1: "):
        asyncio.run(consume())


def test_snippet_markers_are_stripped_without_leaving_extra_blank_lines() -> None:
    source = """\
        import os


        # --8<-- [start:one]
        def one() -> int:
            return 1


        # --8<-- [end:one]


        # --8<-- [start:two]
        TWO = 2
        # --8<-- [end:two]
        """
    assert skeleton_of(source) == textwrap.dedent(
        """\
        import os


        def one() -> int:
            return 1


        TWO = 2
        """
    )


def test_blank_lines_inside_strings_are_kept() -> None:
    source = '''\
        TEXT = """a



        b"""
        # --8<-- [start:x]
        '''
    assert skeleton_of(source) == 'TEXT = """a\n\n\n\nb"""\n'


def test_skeleton_keeps_every_name_of_the_reference() -> None:
    source = '''\
        """Module."""

        import enum

        __all__ = ["State", "run"]


        class State(enum.Enum):
            """A lifecycle."""

            OPEN = "open"


        async def run(state: State, *, limit: int = 3) -> State:
            """Run once."""
            # BEGIN LAB 6.1
            return state
            # END LAB 6.1
        '''
    reference = ast.parse(textwrap.dedent(source))
    skeleton = ast.parse(skeleton_of(source))

    def signatures(tree: ast.Module) -> list[str]:
        return [
            ast.unparse(node.args) + ast.unparse(node.returns or ast.Constant(None))
            for node in ast.walk(tree)
            if isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef)
        ]

    assert signatures(skeleton) == signatures(reference)
    assert ast.get_docstring(skeleton) == "Module."
