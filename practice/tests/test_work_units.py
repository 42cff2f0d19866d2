"""The units of work pytest-xdist deals out: a checkpoint's practice-folder proofs stay together."""

from __future__ import annotations

from practice.tests.conftest import work_unit_of

PROOFS = "practice/tests/test_course_scaffolds.py"


def test_the_proofs_of_one_checkpoint_are_one_unit_of_work() -> None:
    first = work_unit_of(f"{PROOFS}::test_fresh_folder_imports_its_own_harness[06_tool_contract]")
    other = work_unit_of(f"{PROOFS}::test_learning_guide_describes_this_folder[06_tool_contract]")
    assert first == other == "practice-06_tool_contract"
    assert (
        work_unit_of(f"{PROOFS}::test_learning_guide_describes_this_folder[07_agent_loop]") != first
    )


def test_every_other_test_is_a_unit_of_its_own() -> None:
    for nodeid in [
        "checkpoints/06_tool_contract/test_06_tool_contract.py::test_x[06_tool_contract]",
        "practice/tests/test_scaffold.py::test_a_file_is_refused",
        f"{PROOFS}::test_without_a_parameter",
    ]:
        assert work_unit_of(nodeid) == nodeid
