"""Loading, writing and validating PDDL; bad files fail with the file and the reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from cowp_unit_paths import REPO

from cowp_ros.limits import LimitError
from cowp_ros.pddl import Atom, Literal, PddlLoadError, PlanningTask
from cowp_ros.pddl.edits import add_precondition


def test_loads_every_shipped_task_and_round_trips(tmp_path: Path) -> None:
    for domain in sorted((REPO / "pddl").glob("*/domain.pddl")):
        task = PlanningTask.load(domain, domain.with_name("problem.pddl"))
        written = task.write(tmp_path / domain.parent.name)
        again = PlanningTask.load(*written)
        assert again.objects == task.objects
        assert again.init_atoms == task.init_atoms
        assert set(again.actions) == set(task.actions)


def test_vocabulary_of_a_task(tiny: PlanningTask) -> None:
    assert tiny.objects == {"cup_1": "cup", "bowl_1": "bowl", "table_1": "table"}
    assert tiny.types["cup"] == "item"
    assert tiny.top_type("cup") == "thing"
    assert tiny.is_subtype("cup", "thing")
    assert not tiny.is_subtype("cup", "place")
    assert tiny.parameter_types("place_cup") == ("cup", "table")
    assert tiny.init_atoms == frozenset({Atom("hand_free")})
    assert tiny.goal_atoms == frozenset({Atom("served", ("table_1",))})
    assert tiny.objects_of_type("item") == ["bowl_1", "cup_1"]


def test_unparsable_domain_names_file_and_reason(tmp_path: Path, tiny_files) -> None:
    domain, problem = tiny_files
    broken = tmp_path / "broken.pddl"
    broken.write_text(domain.read_text().replace("(:action find_cup", "(:action find_cup ((", 1))
    with pytest.raises(PddlLoadError) as err:
        PlanningTask.load(broken, problem)
    assert f"domain {broken}, line " in str(err.value)
    assert "Token(" not in str(err.value)


UNCLOSED = """(define (domain d)
  (:requirements :strips :typing)
  (:types can place)
  (:predicates (at ?p - place) (holding ?c - can))
  (:action grasp
    :parameters (?c - can)
    :precondition (and (at ?p)
    :effect (holding ?c))
  (:action walk
    :parameters (?p - place)
    :precondition (and)
    :effect (at ?p)))
"""
PROBLEM = """(define (problem p) (:domain d)
  (:objects c1 - can p1 - place)
  (:init (at p1))
  (:goal (holding c1)))
"""


def test_a_parenthesis_left_open_is_named_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "domain.pddl").write_text(UNCLOSED)
    (tmp_path / "problem.pddl").write_text(PROBLEM)
    with pytest.raises(PddlLoadError) as err:
        PlanningTask.load(tmp_path / "domain.pddl", tmp_path / "problem.pddl")
    said = str(err.value)
    assert said.startswith(
        f"domain {tmp_path / 'domain.pddl'}, line 8, column 5: ':effect' where a ')' was "
        "expected: the parenthesis opened at line 7 ((and (at ?p)) is not closed before it"
    ), said
    assert "Token" not in said and "RPAR" not in said


def test_an_unknown_type_is_named_with_the_declared_ones(tmp_path: Path) -> None:
    fixed = UNCLOSED.replace("(and (at ?p)\n", "(and)\n").replace("(?c - can)\n", "(?c - cann)\n")
    (tmp_path / "domain.pddl").write_text(fixed)
    (tmp_path / "problem.pddl").write_text(PROBLEM)
    with pytest.raises(PddlLoadError) as err:
        PlanningTask.load(tmp_path / "domain.pddl", tmp_path / "problem.pddl")
    assert str(err.value).startswith(
        f"domain {tmp_path / 'domain.pddl'}, line 6: unknown type 'cann' (of ?c): the domain "
        "declares can, object, place in :types; did you mean 'can'?"
    ), str(err.value)


def test_a_problem_that_ends_early_names_the_open_parenthesis(tmp_path: Path) -> None:
    (tmp_path / "domain.pddl").write_text(UNCLOSED.replace("(and (at ?p)\n", "(and)\n"))
    (tmp_path / "problem.pddl").write_text(PROBLEM.replace("(:init (at p1))", "(:init (at p1)"))
    with pytest.raises(PddlLoadError) as err:
        PlanningTask.load(tmp_path / "domain.pddl", tmp_path / "problem.pddl")
    said = str(err.value)
    assert said.startswith(f"problem {tmp_path / 'problem.pddl'}, line ") and "line 3" in said
    assert "Token" not in said


def test_missing_file_is_a_clear_error(tmp_path: Path, tiny_files) -> None:
    _, problem = tiny_files
    with pytest.raises(PddlLoadError, match="not found"):
        PlanningTask.load(tmp_path / "nope.pddl", problem)


def test_problem_for_another_domain_is_refused(tiny_files, tmp_path: Path) -> None:
    domain, problem = tiny_files
    other = tmp_path / "other.pddl"
    other.write_text(problem.read_text().replace("(:domain tiny)", "(:domain other)"))
    with pytest.raises(PddlLoadError, match="domain 'other'"):
        PlanningTask.load(domain, other)


def test_problem_with_undeclared_type_is_refused(tiny_files, tmp_path: Path) -> None:
    domain, problem = tiny_files
    bad = tmp_path / "bad.pddl"
    bad.write_text(problem.read_text().replace("bowl_1 - bowl", "bowl_1 - spaceship"))
    with pytest.raises(PddlLoadError, match="does not fit its domain"):
        PlanningTask.load(domain, bad)


def test_disjunctive_precondition_loads_and_takes_a_situation_beside_it(
    tiny_files, tmp_path: Path
) -> None:
    # Fast Downward reads ADL; so does the loader now. The monitor's precondition is
    # one more conjunct beside the `or`, which stays whole.
    domain, problem = tiny_files
    text = domain.read_text().replace(
        ":precondition (holding ?c)", ":precondition (or (holding ?c) (hand_free))"
    )
    text = text.replace("(:requirements :strips :typing)", "(:requirements :adl :typing)")
    adl = tmp_path / "or.pddl"
    adl.write_text(text)
    task = PlanningTask.load(adl, problem)
    changed = add_precondition(task, "place_cup", Literal(Atom("is_dirty", ("?c",)), False))
    precondition = str(changed.action("place_cup").precondition)
    assert "(or (holding ?c) (hand_free))" in precondition
    assert "(not (is_dirty ?c))" in precondition
    assert (
        changed.validated().action("place_cup").precondition
        == changed.action("place_cup").precondition
    )


def test_problem_text_has_no_requirements_section(tiny: PlanningTask) -> None:
    # pyperplan cannot read a problem with :requirements; the library writes one when
    # the problem is attached to its domain.
    assert ":requirements" not in tiny.problem_text()
    assert "(:init" in tiny.problem_text()


def test_a_domain_that_is_not_utf8_is_a_clear_error(tmp_path: Path, tiny_files) -> None:
    domain, problem = tiny_files
    domain.write_bytes(domain.read_bytes().replace(b"tiny", b"t\xffny", 1))
    with pytest.raises(PddlLoadError, match=r"not UTF-8.*domain\.pddl|domain\.pddl.*not UTF-8"):
        PlanningTask.load(domain, problem)


def test_nesting_too_deep_to_parse_is_refused_by_its_size_first(tiny_files) -> None:
    """100,000 levels of nesting are 600 KB: the size bound refuses them before any
    parser recurses (the nesting check below guards what fits under it)."""
    domain, problem = tiny_files
    nested = "(and " * 100_000 + "(hand_free)" + ")" * 100_000
    text = problem.read_text().replace("(:goal (served table_1))", f"(:goal {nested})")
    with pytest.raises(LimitError, match="over the limit of 131,072"):
        PlanningTask.from_text(domain.read_text(), text)


@pytest.mark.parametrize("depth", [3000, 20_000])
def test_absurd_nesting_is_a_clear_error(tiny_files, depth: int) -> None:
    domain, problem = tiny_files
    nested = "(and " * depth + "(hand_free)" + ")" * depth
    text = problem.read_text().replace("(:goal (served table_1))", f"(:goal {nested})")
    with pytest.raises(PddlLoadError, match="nested"):
        PlanningTask.from_text(domain.read_text(), text)
    with pytest.raises(PddlLoadError, match="nested"):
        PlanningTask.from_text(nested, text)


def test_each_installation_keeps_its_own_grammar_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """lark's cached tables name the grammar's folder: two installations (two venvs)
    sharing one file rebuilt and rewrote it in turn, 0.1 s of every `cowp plan`."""
    import shutil

    from cowp_ros.pddl import model

    monkeypatch.setenv("COWP_CACHE_DIR", str(tmp_path / "cache"))
    other = tmp_path / "other_venv" / "parser"
    shutil.copytree(model.PARSERS_DIRECTORY, other)
    model._grammar.__wrapped__()
    (ours,) = (tmp_path / "cache").glob("pddl_grammar_*.lark")
    built = ours.stat().st_mtime_ns
    monkeypatch.setattr(model, "PARSERS_DIRECTORY", str(other))
    model._grammar.__wrapped__()
    assert len(list((tmp_path / "cache").glob("pddl_grammar_*.lark"))) == 2
    monkeypatch.undo()
    monkeypatch.setenv("COWP_CACHE_DIR", str(tmp_path / "cache"))
    model._grammar.__wrapped__()
    assert ours.stat().st_mtime_ns == built  # read back, not rebuilt
