"""The marker rules: what a lab region may be, and the exact error for everything else."""

from __future__ import annotations

import textwrap

import pytest

from practice.regions import LabMarkerError, find_regions, snippet_marker_lines

LABS = ("6.1", "6.2")


def regions_of(source: str, labs: tuple[str, ...] = LABS) -> list[tuple[str, int, int, str, str]]:
    found = find_regions(textwrap.dedent(source), "tool.py", labs)
    return [(r.lab, r.begin, r.end, r.kind, r.owner) for r in found]


def refused(source: str, labs: tuple[str, ...] = LABS) -> str:
    with pytest.raises(LabMarkerError) as caught:
        find_regions(textwrap.dedent(source), "tool.py", labs)
    return str(caught.value)


def test_region_at_the_end_of_a_function_body_is_found() -> None:
    source = '''\
        def define_tool(definition: object) -> object:
            """Snapshot one definition."""
            checked = definition
            # BEGIN LAB 6.2
            return checked
            # END LAB 6.2
        '''
    assert regions_of(source) == [("6.2", 4, 6, "function", "define_tool")]


def test_method_region_names_its_class() -> None:
    source = '''\
        class ToolRegistry:
            """Own definitions."""

            async def register(self, definition: object) -> None:
                """Register one."""
                # BEGIN LAB 6.2
                await self._store(definition)
                # END LAB 6.2
        '''
    assert regions_of(source) == [("6.2", 6, 8, "function", "ToolRegistry.register")]


def test_private_helpers_at_module_and_class_level_are_definitions() -> None:
    source = """\
        import functools

        # BEGIN LAB 6.1
        _LIMIT = 4
        _NAMES: frozenset[str] = frozenset()


        @functools.cache
        def _helper() -> int:
            return _LIMIT


        class _Walker:
            pass
        # END LAB 6.1


        class Registry:
            # BEGIN LAB 6.2
            def _check(self) -> None:
                pass
            # END LAB 6.2
        """
    assert regions_of(source) == [
        ("6.1", 3, 15, "definitions", ""),
        ("6.2", 19, 22, "definitions", "Registry"),
    ]


def test_markers_inside_strings_are_not_markers() -> None:
    source = '''\
        def page() -> str:
            """Show a marker: # BEGIN LAB 6.1"""
            return """
        # BEGIN LAB 6.1
        """
        '''
    assert regions_of(source) == []


def test_a_module_without_markers_has_no_region() -> None:
    assert regions_of("x = 1\n") == []


@pytest.mark.parametrize(
    ("marker", "expected"),
    [
        ("# BEGIN LAB 6", "malformed lab marker '# BEGIN LAB 6'"),
        ("# begin lab 6.1", "malformed lab marker '# begin lab 6.1'"),
        ("#BEGIN LAB 6.1", "malformed lab marker '#BEGIN LAB 6.1'"),
        ("# BEGIN LAB 6.1 the registry", "malformed lab marker '# BEGIN LAB 6.1 the registry'"),
        ("# BEGIN_LAB 6.1", "malformed lab marker '# BEGIN_LAB 6.1'"),
    ],
)
def test_malformed_marker_is_refused(marker: str, expected: str) -> None:
    source = f"x = 1\n{marker}\ny = 2\n# END LAB 6.1\n"
    assert refused(source) == f"tool.py:2: {expected}: write '# BEGIN LAB 6.2'"


def test_marker_after_code_on_its_line_is_refused() -> None:
    source = "x = 1  # BEGIN LAB 6.1\n"
    assert refused(source) == "tool.py:1: a lab marker must be alone on its line"


def test_nested_regions_are_refused() -> None:
    source = """\
        # BEGIN LAB 6.1
        _a = 1
        # BEGIN LAB 6.2
        _b = 2
        # END LAB 6.2
        # END LAB 6.1
        """
    assert refused(source) == (
        "tool.py:3: BEGIN LAB 6.2 inside the region of LAB 6.1 opened at line 1: "
        "regions do not nest"
    )


def test_end_without_begin_is_refused() -> None:
    assert refused("_a = 1\n# END LAB 6.1\n") == "tool.py:2: END LAB 6.1 without a BEGIN"


def test_begin_without_end_is_refused() -> None:
    assert refused("# BEGIN LAB 6.1\n_a = 1\n") == "tool.py:1: BEGIN LAB 6.1 has no END"


def test_end_of_another_lab_is_refused() -> None:
    source = "# BEGIN LAB 6.1\n_a = 1\n# END LAB 6.2\n"
    assert refused(source) == "tool.py:3: END LAB 6.2 closes BEGIN LAB 6.1 of line 1"


def test_lab_of_another_checkpoint_is_refused() -> None:
    source = "# BEGIN LAB 7.1\n_a = 1\n# END LAB 7.1\n"
    assert refused(source) == "tool.py:1: unknown lab 7.1: this module's labs are 6.1, 6.2"


def test_region_in_a_module_without_labs_is_refused() -> None:
    source = "# BEGIN LAB 0.1\n_a = 1\n# END LAB 0.1\n"
    assert refused(source, labs=()) == "tool.py:1: unknown lab 0.1: this module's labs are none"


def test_end_indented_unlike_its_begin_is_refused() -> None:
    source = """\
        def f() -> int:
            # BEGIN LAB 6.1
            return 1
        # END LAB 6.1
        """
    assert refused(source) == "tool.py:4: END LAB 6.1 is not indented like its BEGIN"


def test_region_in_the_middle_of_a_function_is_refused() -> None:
    source = """\
        def f() -> int:
            # BEGIN LAB 6.1
            value = 1
            # END LAB 6.1
            return value
        """
    assert (
        refused(source) == "tool.py:2: the region of LAB 6.1 must be the end of the function body"
    )


def test_region_that_takes_the_docstring_is_refused() -> None:
    source = '''\
        def f() -> int:
            # BEGIN LAB 6.1
            """Return one."""
            return 1
            # END LAB 6.1
        '''
    assert refused(source) == (
        "tool.py:2: the region of LAB 6.1 must start after the function's docstring"
    )


def test_region_inside_an_if_block_is_refused() -> None:
    source = """\
        def f(flag: bool) -> int:
            if flag:
                # BEGIN LAB 6.1
                return 1
                # END LAB 6.1
            return 0
        """
    assert refused(source) == (
        "tool.py:3: the region of LAB 6.1 must be the end of a function body or whole "
        "definitions at module or class level, not inside a if block"
    )


def test_region_without_statements_is_refused() -> None:
    source = """\
        def f() -> None:
            pass
            # BEGIN LAB 6.1
            # nothing here
            # END LAB 6.1
        """
    assert refused(source) == "tool.py:3: the region of LAB 6.1 holds no statement"


def test_region_inside_an_expression_is_refused() -> None:
    source = """\
        VALUES = [
            # BEGIN LAB 6.1
            1,
            # END LAB 6.1
        ]
        """
    assert refused(source) == "tool.py:2: the region of LAB 6.1 holds no statement"


def test_region_that_cuts_a_statement_is_refused() -> None:
    source = """\
        def f() -> int:
            total = (
            # BEGIN LAB 6.1
                1
            )
            return total
            # END LAB 6.1
        """
    assert refused(source) == (
        "tool.py:2: the statement at line 2 crosses the region of LAB 6.1 (lines 3-7)"
    )


def test_region_over_a_block_and_its_parent_is_refused() -> None:
    source = """\
        def f(flag: bool) -> int:
            if flag:
                x = 1
                # BEGIN LAB 6.1
                y = 2
            return 3
                # END LAB 6.1
        """
    assert refused(source) == "tool.py:4: the region of LAB 6.1 spans several blocks of code"


def test_markers_indented_unlike_the_code_are_refused() -> None:
    source = """\
        def f() -> int:
            # BEGIN LAB 6.1
                # (deeper)
            return 1
            # END LAB 6.1
        """
    assert regions_of(source) == [("6.1", 2, 5, "function", "f")]
    source = """\
        class A:
            def f(self) -> int:
                return 1
        # BEGIN LAB 6.1
            def _g(self) -> int:
                return 2
        # END LAB 6.1
        """
    assert refused(source) == (
        "tool.py:4: the markers of LAB 6.1 are not indented like the code inside"
    )


@pytest.mark.parametrize(
    ("statement", "kind"),
    [("print('side effect')", "Expr"), ("if True:\n    _x = 1", "If"), ("import os", "Import")],
)
def test_module_region_with_other_statements_is_refused(statement: str, kind: str) -> None:
    source = f"# BEGIN LAB 6.1\n{statement}\n# END LAB 6.1\n"
    assert refused(source) == (
        "tool.py:2: a module- or class-level region of LAB 6.1 holds only whole private "
        f"definitions (def, class, _name = ...), not a {kind} statement"
    )


@pytest.mark.parametrize(
    ("definition", "name"),
    [("def helper() -> None: ...", "helper"), ("LIMIT = 3", "LIMIT"), ("class Tool: ...", "Tool")],
)
def test_module_region_with_a_public_name_is_refused(definition: str, name: str) -> None:
    source = f"# BEGIN LAB 6.1\n{definition}\n# END LAB 6.1\n"
    assert refused(source) == (
        f"tool.py:2: {name!r} is public or special: keep it outside the region of LAB 6.1 "
        "and mark the end of its body instead"
    )


def test_class_region_with_a_special_method_is_refused() -> None:
    source = """\
        class A:
            # BEGIN LAB 6.1
            def __init__(self) -> None:
                pass
            # END LAB 6.1
        """
    assert refused(source) == (
        "tool.py:3: '__init__' is public or special: keep it outside the region of LAB 6.1 "
        "and mark the end of its body instead"
    )


def test_source_that_does_not_parse_is_refused_with_its_line() -> None:
    source = "# BEGIN LAB 6.1\n_a = (\n# END LAB 6.1\n"
    message = refused(source)
    assert message.startswith("tool.py:")
    assert "cannot be tokenized" in message or "not valid Python" in message


def test_generator_function_whose_yields_are_all_in_the_region_is_flagged() -> None:
    source = '''\
        async def letters(name: str):
            """Yield letters."""
            # BEGIN LAB 6.1
            for letter in name:
                yield letter
            # END LAB 6.1


        def numbers():
            """Yield numbers."""
            yield 0
            # BEGIN LAB 6.2
            yield 1
            # END LAB 6.2
        '''
    found = find_regions(textwrap.dedent(source), "tool.py", LABS)
    assert [r.keeps_generator for r in found] == [True, False]


def test_snippet_markers_are_found_only_alone_on_their_line() -> None:
    source = textwrap.dedent(
        '''\
        # --8<-- [start:one]
        x = 1  # --8<-- [end:one]
        text = """
        # --8<-- [start:two]
        """
            # --8<-- [end:three]
        '''
    )
    assert snippet_marker_lines(source, "tool.py") == {1, 6}
