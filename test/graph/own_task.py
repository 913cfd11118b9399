"""A task of one's own, written outside the checkout by the test that uses it: watering
a plant, with generic objects (a watering can, a jug, a vase) the shipped tasks never
name, and a two-place `walk_to ?from ?to` whose destination is its second parameter."""

from __future__ import annotations

from pathlib import Path

DOMAIN = """
(define (domain water_plant)
  (:requirements :strips :typing)
  (:types
    item place - thing
    thing - object
    can jug vase - item
    plant_spot shelf counter sink - place)
  (:predicates
    (at ?p - place)
    (found ?x - thing)
    (hand_free)
    (holding ?x - item)
    (full ?x - item)
    (watered ?p - place))
  (:action find_can
    :parameters (?c - can)
    :precondition (and)
    :effect (found ?c))
  (:action grasp_can
    :parameters (?c - can)
    :precondition (and (found ?c) (hand_free))
    :effect (and (holding ?c) (not (hand_free))))
  (:action walk_to
    :parameters (?from - place ?to - place)
    :precondition (and (at ?from))
    :effect (and (at ?to) (not (at ?from))))
  (:action fill_can
    :parameters (?c - can ?s - sink)
    :precondition (and (holding ?c) (at ?s))
    :effect (full ?c))
  (:action put_down
    :parameters (?x - item ?p - place)
    :precondition (and (holding ?x) (at ?p))
    :effect (and (hand_free) (not (holding ?x))))
  (:action water_plant
    :parameters (?c - can ?p - plant_spot)
    :precondition (and (holding ?c) (full ?c) (at ?p))
    :effect (and (watered ?p) (hand_free) (not (holding ?c)))))
"""

PROBLEM = """
(define (problem water_the_plant)
  (:domain water_plant)
  (:objects
    can_1 - can
    jug_1 - jug
    vase_1 - vase
    shelf_1 - shelf
    sink_1 - sink
    plant_spot_1 - plant_spot)
  (:init (at shelf_1) (hand_free))
  (:goal (and (watered plant_spot_1))))
"""

REGISTRY = """
water_plant:
  aliases: [water_the_plant]
  description: watering the plant on the windowsill
  domain: water_plant/domain.pddl
  problem: water_plant/problem.pddl
  task_objects: [can_1, sink_1, shelf_1, plant_spot_1]
  phrases:
    find_can: find {0}
    grasp_can: grasp {0}
    walk_to: walk from {0} to {1}
    fill_can: fill {0} with water at {1}
    water_plant: water the plant at {1} with {0}
    put_down: put {0} down on {1}
  release_actions: [put_down]
  # Where the robot finds these objects, and which skill runs each action with which
  # parameters (by name): added to config/skills.yaml for this task only.
  object_locations: {can: shelf, jug: counter, vase: counter, plant_spot: dining_area}
  skills:
    water_plant: {skill: pour, bind: {location: "?p"}}
"""


def write_own_task(folder: Path) -> Path:
    """The task's registry, domain and problem under `folder`; returns the tasks.yaml."""
    (folder / "water_plant").mkdir(parents=True, exist_ok=True)
    (folder / "water_plant" / "domain.pddl").write_text(DOMAIN)
    (folder / "water_plant" / "problem.pddl").write_text(PROBLEM)
    registry = folder / "tasks.yaml"
    registry.write_text(REGISTRY)
    return registry
