"""One hostile-peer attack, done for real: bring up the node it targets, call it as any
ROS program could, and record how it answered.

`cowp chaos peer-run --spec JSON --out DIR --llm-url URL` is the command of the
harness's `peer` fault kinds (`cowp_ros.chaos.peer_faults`). It starts the targeted
node (planner, commonsense or task manager) as its own process, as `cowp bringup`
does, sends the attack (a request that grounds 729 million actions, a 2 MB domain, a
slow search beside a normal one, 300 candidates, a name holding PDDL, a template with a
20 MB width, a 10 MB task name, a negated 6-ary goal, a deep type chain, a key in the
model URL's query, SetParameters on a read-only parameter, an oversized ExecuteSkill
step, AcquireKnowledge fields its PDDL lacks; with node `none`, `cowp run` with a
reports folder that is a link or a device), and writes to `DIR/graph.json` what came back: whether
the attack was refused with a message that names the bound (`refused`), how long the
answer took (`answer_s`), and whether the attack was sent at all (`faults_fired`: a
run that never sent it is "not exercised"). Exit 0 when an answer arrived.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from cowp_ros.errors import CowpError

SERVICE_WAIT_S = 60.0
ANSWER_WAIT_S = 90.0


def attack_pddl(n_objects: int = 30, arity: int = 6) -> tuple[str, str]:
    """About 750 bytes: one action of `arity` parameters over `n_objects` objects."""
    names = "abcdefgh"[:arity]
    params = " ".join(f"?{n} - thing" for n in names)
    pre = " ".join(f"(p ?{n})" for n in names)
    domain = (
        "(define (domain boom) (:requirements :strips :typing) (:types thing)"
        " (:predicates (p ?a - thing) (q ?a - thing ?b - thing) (goal_reached))"
        f" (:action blow :parameters ({params}) :precondition (and {pre})"
        " :effect (and (q ?a ?b))))"
    )
    objects = " ".join(f"o{i}" for i in range(n_objects))
    init = " ".join(f"(p o{i})" for i in range(n_objects))
    problem = (
        f"(define (problem boom1) (:domain boom) (:objects {objects} - thing)"
        f" (:init {init}) (:goal (goal_reached)))"
    )
    return domain, problem


def negated_goal_pddl(n_objects: int = 30, arity: int = 6) -> tuple[str, str]:
    """About 480 bytes: one action that grounds once, and a goal negating an `arity`-ary
    predicate, whose STRIPS complement would list n_objects^arity facts."""
    args = " ".join(f"?{n} - thing" for n in "abcdefgh"[:arity])
    domain = (
        "(define (domain neg) (:requirements :strips :typing :negative-preconditions)"
        f" (:types thing) (:predicates (p {args}) (done))"
        " (:action finish :parameters () :precondition (and) :effect (done)))"
    )
    objects = " ".join(f"o{i}" for i in range(n_objects))
    zeros = " ".join(["o0"] * arity)
    problem = (
        f"(define (problem n1) (:domain neg) (:objects {objects} - thing) (:init)"
        f" (:goal (and (done) (not (p {zeros})))))"
    )
    return domain, problem


def type_chain_pddl(depth: int) -> tuple[str, str]:
    """A domain whose types are one chain `depth` deep (the library checks it for cycles
    at a cost of about depth^3)."""
    types = " ".join(f"t{i} - t{i + 1}" for i in range(depth))
    domain = (
        f"(define (domain deep) (:requirements :strips :typing) (:types {types})"
        " (:predicates (done)) (:action a :parameters () :precondition (and) :effect (done)))"
    )
    return domain, "(define (problem x) (:domain deep) (:init) (:goal (done)))"


def _overrides(spec: dict[str, Any], out: Path, llm_url: str) -> list[str]:
    if spec.get("query_key"):  # the model's key in the URL's query, as a user may give it
        llm_url = f"{llm_url}?api_key={spec['query_key']}"
    return [
        f"commonsense.llm_url={llm_url}",
        "commonsense.llm_model=scripted",
        "commonsense.answer_cache=false",
        "commonsense.monitor_calibration=off",
        "commonsense.method=cowp",
        f"task_manager.report_dir={out / 'reports'}",
        *[str(item) for item in spec.get("set", [])],
    ]


def peer_run(spec: dict[str, Any], out: Path, llm_url: str) -> int:
    """Do the attack `spec` describes; write `out/graph.json`; 0 when it was answered."""
    from cowp_ros.bringup.spec import load_profile, with_parameter_overrides
    from cowp_ros.bringup.supervisor import Supervisor

    out.mkdir(parents=True, exist_ok=True)
    seen: dict[str, Any] = {"attack": spec.get("attack"), "faults_fired": 0, "refused": 0.0}
    node = str(spec.get("node", "planner"))
    if node == "none":  # an attack on a command, not on a node
        try:
            ATTACKS[str(spec["attack"])](None, None, {**spec, "out": str(out),
                                                      "llm_url": llm_url}, seen)  # fmt: skip
        finally:
            (out / "graph.json").write_text(json.dumps(seen, indent=1, allow_nan=False) + "\n")
        print(f"attack {seen.get('attack')}: refused={seen['refused']:g}: "
              f"{str(seen.get('message', ''))[:200]}")  # fmt: skip
        return 0 if "answer_s" in seen else 1
    profile = with_parameter_overrides(load_profile("sim"), _overrides(spec, out, llm_url))
    profile = replace(profile, nodes=tuple(n for n in profile.nodes if n.name == node))
    supervisor = Supervisor(profile, out / "logs", say=lambda _m: None)
    try:
        supervisor.start()
        supervisor.wait_ready(120.0)
        _attack(spec, seen)
    except CowpError as err:
        seen["error"] = err.message
    finally:
        supervisor.stop()
        (out / "graph.json").write_text(json.dumps(seen, indent=1, allow_nan=False) + "\n")
    print(f"peer attack {seen.get('attack')}: refused={seen['refused']:g} "
          f"in {seen.get('answer_s', -1):.1f} s: {str(seen.get('message', ''))[:200]}")  # fmt: skip
    return 0 if "answer_s" in seen else 1


def _attack(spec: dict[str, Any], seen: dict[str, Any]) -> None:
    from cowp_ros.ros.own_node import OwnNode

    with OwnNode("chaos_peer") as own:
        ATTACKS[str(spec["attack"])](own.node, own.executor, spec, seen)


def _call(node: Any, executor: Any, srv_type: Any, name: str, request: Any, seen: dict) -> Any:
    client = node.create_client(srv_type, name)
    if not client.wait_for_service(timeout_sec=SERVICE_WAIT_S):
        raise CowpError(f"{name} never appeared")
    started = time.monotonic()
    future = client.call_async(request)
    seen["faults_fired"] = 1
    executor.spin_until_future_complete(future, timeout_sec=ANSWER_WAIT_S)
    if not future.done():
        raise CowpError(f"{name} did not answer within {ANSWER_WAIT_S:g} s")
    seen["answer_s"] = round(time.monotonic() - started, 3)
    return future.result()


def _refused(seen: dict[str, Any], response: Any, pattern: str) -> None:
    seen["message"] = str(response.message)[:2000]
    seen["refused"] = 1.0 if not response.success and re.search(pattern, response.message) else 0.0
    peak = re.search(r"peak (\d+(?:\.\d+)?) MB", response.message)
    if peak:
        seen["worker_peak_mb"] = float(peak.group(1))


def _plan_grounding(node: Any, executor: Any, spec: dict, seen: dict) -> None:
    from cowp_interfaces.srv import Plan

    domain, problem = attack_pddl()
    seen["request_bytes"] = len(domain) + len(problem)
    request = Plan.Request(domain_pddl=domain, problem_pddl=problem, timeout_s=300.0)
    response = _call(node, executor, Plan, "/cowp/plan", request, seen)
    _refused(seen, response, str(spec.get("expect_text", r"grounds [\d,]+ actions")))


def _plan_huge(node: Any, executor: Any, spec: dict, seen: dict) -> None:
    from cowp_interfaces.srv import Plan

    domain, problem = attack_pddl(n_objects=3, arity=2)
    padding = "; " + "x" * 100 + "\n"
    domain += padding * (int(spec.get("kilobytes", 2100)) * 1024 // len(padding))
    seen["request_bytes"] = len(domain) + len(problem)
    request = Plan.Request(domain_pddl=domain, problem_pddl=problem, timeout_s=300.0)
    response = _call(node, executor, Plan, "/cowp/plan", request, seen)
    _refused(seen, response, r"over the limit")


def _plan_beside_slow(node: Any, executor: Any, spec: dict, seen: dict) -> None:
    """A slow search holds one of the planner's slots; a normal request is answered."""
    from cowp_interfaces.srv import Plan
    from cowp_ros.chaos.workspace import slow_domain, slow_problem
    from cowp_ros.tasks import get_task

    client = node.create_client(Plan, "/cowp/plan")
    if not client.wait_for_service(timeout_sec=SERVICE_WAIT_S):
        raise CowpError("/cowp/plan never appeared")
    slow = client.call_async(
        Plan.Request(domain_pddl=slow_domain(), problem_pddl=slow_problem(12), timeout_s=1e9)
    )
    executor.spin_once(timeout_sec=1.5)
    task = get_task("serve_water").load()
    request = Plan.Request(domain_pddl=task.domain_text(), problem_pddl=task.problem_text())
    response = _call(node, executor, Plan, "/cowp/plan", request, seen)
    seen["message"] = response.message
    # "refused" here means: the peer's slow search did not make the normal request wait
    seen["refused"] = 1.0 if response.success and seen["answer_s"] < 20 else 0.0
    executor.spin_until_future_complete(slow, timeout_sec=ANSWER_WAIT_S)
    seen["slow_status"] = slow.result().status if slow.done() else "no answer"


def _candidates(node: Any, executor: Any, spec: dict, seen: dict) -> None:
    from cowp_interfaces.srv import AcquireKnowledge

    kinds = [f"kind_{i}" for i in range(int(spec.get("count", 300)))]
    request = AcquireKnowledge.Request(
        task="serve_water",
        role_type="cup",
        actions=["fill_water"],
        candidate_types=kinds,
        candidate_examples=[f"{k}_1" for k in kinds],
    )
    response = _call(node, executor, AcquireKnowledge, "/cowp/acquire_knowledge", request, seen)
    _refused(seen, response, r"candidate kinds in one request, over the limit")


def _evil_name(node: Any, executor: Any, spec: dict, seen: dict) -> None:
    from cowp_interfaces.srv import AcquireKnowledge

    evil = str(spec.get("name", "mug) (:action evil"))
    request = AcquireKnowledge.Request(
        task="serve_water",
        role_type="cup",
        candidate_types=[evil],
        candidate_examples=["mug_1"],
        select_only=True,
    )
    response = _call(node, executor, AcquireKnowledge, "/cowp/acquire_knowledge", request, seen)
    _refused(seen, response, r"refused candidate kind")
    if evil in [*response.accepted, response.chosen]:
        seen["refused"] = 0.0


def _template(node: Any, executor: Any, spec: dict, seen: dict) -> None:
    from cowp_interfaces.msg import PlanStep
    from cowp_interfaces.srv import CheckPlan

    request = CheckPlan.Request(
        task="serve_water",
        steps=[PlanStep(action="fill_water", arguments=["cup_1", "faucet_1"])],
        situation="the cup is dirty",
        phrase_actions=["fill_water"],
        phrase_templates=[str(spec.get("template", "fill {0:>20000000} from {1}"))],
    )
    response = _call(node, executor, CheckPlan, "/cowp/check_plan", request, seen)
    _refused(seen, response, r"only plain fields")


def _long_goal(node: Any, executor: Any, spec: dict, seen: dict) -> None:
    from rclpy.action import ActionClient

    from cowp_interfaces.action import RunTask
    from cowp_ros.ros.names import RUN_TASK_ACTION

    client: ActionClient[Any, Any, Any] = ActionClient(node, RunTask, RUN_TASK_ACTION)
    if not client.wait_for_server(timeout_sec=SERVICE_WAIT_S):
        raise CowpError(f"{RUN_TASK_ACTION} never appeared")
    task = "serve water " * (int(spec.get("megabytes", 10)) * 2**20 // 12)
    started = time.monotonic()
    future = client.send_goal_async(RunTask.Goal(task=task))
    seen["faults_fired"] = 1
    executor.spin_until_future_complete(future, timeout_sec=ANSWER_WAIT_S)
    if not future.done():
        raise CowpError("the goal was neither accepted nor rejected")
    seen["answer_s"] = round(time.monotonic() - started, 3)
    handle = future.result()
    if handle is None:
        raise CowpError("the goal's answer was empty")
    seen["refused"] = 0.0 if handle.accepted else 1.0
    seen["message"] = "accepted" if handle.accepted else "rejected"
    if handle.accepted:  # end it, so the run's node goes down cleanly
        executor.spin_until_future_complete(handle.cancel_goal_async(), timeout_sec=10)


def _plan_negated_goal(node: Any, executor: Any, spec: dict, seen: dict) -> None:
    from cowp_interfaces.srv import Plan

    domain, problem = negated_goal_pddl()
    seen["request_bytes"] = len(domain) + len(problem)
    request = Plan.Request(domain_pddl=domain, problem_pddl=problem, timeout_s=300.0)
    response = _call(node, executor, Plan, "/cowp/plan", request, seen)
    _refused(seen, response, r"complement facts, over the limit")


def _type_chain(node: Any, executor: Any, spec: dict, seen: dict) -> None:
    """A deep type chain to the planner (`Plan`) or the commonsense node (`CheckPlan`)."""
    from cowp_interfaces.msg import PlanStep
    from cowp_interfaces.srv import CheckPlan, Plan

    domain, problem = type_chain_pddl(int(spec.get("depth", 1000)))
    seen["request_bytes"] = len(domain) + len(problem)
    if spec.get("node") == "commonsense":
        request = CheckPlan.Request(
            task="serve_water",
            domain_pddl=domain,
            problem_pddl=problem,
            steps=[PlanStep(action="a", arguments=[])],
            situation="the cup is dirty",
        )
        response = _call(node, executor, CheckPlan, "/cowp/check_plan", request, seen)
    else:
        request = Plan.Request(domain_pddl=domain, problem_pddl=problem, timeout_s=300.0)
        response = _call(node, executor, Plan, "/cowp/plan", request, seen)
    _refused(seen, response, r"types?.*over the limit|ancestors, over the limit")


def _read_parameter(node: Any, executor: Any, target: str, name: str, seen: dict) -> Any:
    from rcl_interfaces.srv import GetParameters

    request = GetParameters.Request(names=[name])
    response = _call(node, executor, GetParameters, f"/{target}/get_parameters", request, seen)
    return response.values[0] if response.values else None


def _url_query_key(node: Any, executor: Any, spec: dict, seen: dict) -> None:
    """The model's key given in the URL's query: no peer may read it from llm_url."""
    value = _read_parameter(node, executor, "commonsense", "llm_url", seen)
    shown = str(value.string_value) if value is not None else ""
    key = str(spec.get("query_key", ""))
    seen["message"] = "llm_url holds the key" if key and key in shown else "no key in llm_url"
    seen["refused"] = 1.0 if key and key not in shown and shown else 0.0


def _set_method(node: Any, executor: Any, spec: dict, seen: dict) -> None:
    """One SetParameters on the commonsense node's method (it made every later task
    refused): it must be refused, and the method read back unchanged."""
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters

    wanted = str(spec.get("method", "grounded"))
    value = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=wanted)
    request = SetParameters.Request(parameters=[Parameter(name="method", value=value)])
    response = _call(node, executor, SetParameters, "/commonsense/set_parameters", request, seen)
    result = response.results[0]
    after = _read_parameter(node, executor, "commonsense", "method", seen)
    seen["message"] = str(result.reason)[:500]
    unchanged = after is not None and after.string_value == "cowp"
    seen["refused"] = 1.0 if not result.successful and unchanged else 0.0


def _long_step(node: Any, executor: Any, spec: dict, seen: dict) -> None:
    """An ExecuteSkill step with a 1 MB action name, or 40 arguments: rejected, not kept."""
    from rclpy.action import ActionClient

    from cowp_interfaces.action import ExecuteSkill
    from cowp_interfaces.msg import PlanStep
    from cowp_ros.ros.names import EXECUTE_SKILL_ACTION

    client: ActionClient[Any, Any, Any] = ActionClient(node, ExecuteSkill, EXECUTE_SKILL_ACTION)
    if not client.wait_for_server(timeout_sec=SERVICE_WAIT_S):
        raise CowpError(f"{EXECUTE_SKILL_ACTION} never appeared")
    if spec.get("arguments"):
        step = PlanStep(action="walk_to", arguments=["table_1"] * int(spec["arguments"]))
    else:
        step = PlanStep(action="x" * int(spec.get("bytes", 2**20)), arguments=["cup_1"])
    started = time.monotonic()
    future = client.send_goal_async(ExecuteSkill.Goal(step=step))
    seen["faults_fired"] = 1
    executor.spin_until_future_complete(future, timeout_sec=ANSWER_WAIT_S)
    handle = future.result() if future.done() else None
    if handle is None:
        raise CowpError("the step was neither accepted nor rejected")
    seen["answer_s"] = round(time.monotonic() - started, 3)
    seen["refused"] = 0.0 if handle.accepted else 1.0
    seen["message"] = "accepted" if handle.accepted else "rejected"
    if handle.accepted:  # end it, so the run's node goes down cleanly
        executor.spin_until_future_complete(handle.cancel_goal_async(), timeout_sec=10)


def _acquire_misfit(node: Any, executor: Any, spec: dict, seen: dict) -> None:
    """AcquireKnowledge fields that are not the PDDL's: a role no role action has, a kind
    the domain lacks, the role's own kind."""
    from cowp_interfaces.srv import AcquireKnowledge

    fields: dict[str, Any] = {"role_type": "cup", "candidate_types": ["mug"]}
    fields.update(spec.get("fields", {}))
    request = AcquireKnowledge.Request(
        task="serve_water",
        actions=["fill_water"],
        candidate_examples=[f"{k}_1" for k in fields["candidate_types"]],
        **fields,
    )
    response = _call(node, executor, AcquireKnowledge, "/cowp/acquire_knowledge", request, seen)
    _refused(seen, response, r"not a type of the request's domain|takes no parameter|own type")
    if response.chosen or response.accepted or "internal error" in response.message:
        seen["refused"] = 0.0


def _report_folder(node: Any, executor: Any, spec: dict, seen: dict) -> None:
    """`cowp run` with COWP_REPORTS_DIR a link to a folder, a dangling link, or
    /dev/full: refused with what is there, and nothing written through the link."""
    import os
    import subprocess
    import sys

    out = Path(str(spec["out"]))
    target = out / "link_target"
    target.mkdir(exist_ok=True)
    how = str(spec.get("folder", "link"))
    folder: Path | str = "/dev/full"
    if how != "device":
        folder = out / "reports_link"
        folder.symlink_to(target if how == "link" else out / "nowhere")
    started = time.monotonic()
    seen["faults_fired"] = 1
    try:
        done = subprocess.run(
            [sys.executable, "-c", "import sys; from cowp_ros.cli import main; sys.exit(main())",
             "run", "fill_cup", "--llm-url", str(spec["llm_url"]), "--llm-model", "scripted",
             "--no-cache"],
            env={**os.environ, "COWP_REPORTS_DIR": str(folder)},
            capture_output=True, text=True, timeout=ANSWER_WAIT_S, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise CowpError(f"cowp run did not end within {ANSWER_WAIT_S:g} s") from None
    code = done.returncode
    seen["answer_s"] = round(time.monotonic() - started, 3)
    message = done.stderr
    seen["message"] = message[-500:]
    clear = re.search(r"is a symbolic link|not a folder", message) is not None
    untouched = not any(target.iterdir()) and not (out / "nowhere").exists()
    seen["refused"] = 1.0 if code != 0 and clear and untouched else 0.0


ATTACKS = {
    "plan_negated_goal": _plan_negated_goal,
    "type_chain": _type_chain,
    "url_query_key": _url_query_key,
    "set_method": _set_method,
    "long_step": _long_step,
    "acquire_misfit": _acquire_misfit,
    "report_folder": _report_folder,
    "plan_grounding": _plan_grounding,
    "plan_huge_pddl": _plan_huge,
    "plan_beside_slow": _plan_beside_slow,
    "commonsense_candidates": _candidates,
    "commonsense_evil_name": _evil_name,
    "commonsense_template": _template,
    "long_goal": _long_goal,
}
