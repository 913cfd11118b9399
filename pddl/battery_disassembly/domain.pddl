; Battery-pack disassembly: a cover held down by two bolts, modules under it, each
; module held by a screw and wired through a connector. Written by cowp_ros as the
; showcase domain for LLM-guided search: the order is long and strict (tools in and
; out of the one hand, cover before modules, unplug before lifting), and the pack has
; parts the goal does not need, so blind search wanders while commonsense does not.
(define (domain battery_disassembly)
  (:requirements :strips :typing)
  (:types
    tool part place - thing
    wrench screwdriver - tool
    bolt screw cover module connector - part
    rack bin - place)
  (:predicates
    (hand_free)
    (holding ?t - tool)
    (carrying ?m - module)
    (on_rack ?t - tool ?r - rack)
    (fastened ?b - bolt)
    (bolt_out ?b - bolt)
    (left_bolt ?b - bolt ?c - cover)
    (right_bolt ?b - bolt ?c - cover)
    (cover_off ?c - cover)
    (under ?m - module ?c - cover)
    (holds ?s - screw ?m - module)
    (screwed ?s - screw)
    (loose ?m - module)
    (wires ?x - connector ?m - module)
    (plugged_in ?x - connector)
    (unplugged ?m - module)
    (in_bin ?m - module ?b - bin))
  (:action take_tool
    :parameters (?t - tool ?r - rack)
    :precondition (and (hand_free) (on_rack ?t ?r))
    :effect (and (holding ?t) (not (hand_free)) (not (on_rack ?t ?r))))
  (:action return_tool
    :parameters (?t - tool ?r - rack)
    :precondition (holding ?t)
    :effect (and (on_rack ?t ?r) (hand_free) (not (holding ?t))))
  (:action unscrew_bolt
    :parameters (?b - bolt ?w - wrench)
    :precondition (and (holding ?w) (fastened ?b))
    :effect (and (bolt_out ?b) (not (fastened ?b))))
  (:action lift_cover
    :parameters (?c - cover ?l - bolt ?r - bolt)
    :precondition (and (hand_free) (left_bolt ?l ?c) (right_bolt ?r ?c) (bolt_out ?l) (bolt_out ?r))
    :effect (cover_off ?c))
  (:action unplug_connector
    :parameters (?x - connector ?m - module ?c - cover)
    :precondition (and (hand_free) (wires ?x ?m) (plugged_in ?x) (under ?m ?c) (cover_off ?c))
    :effect (and (unplugged ?m) (not (plugged_in ?x))))
  (:action remove_screw
    :parameters (?s - screw ?m - module ?d - screwdriver ?c - cover)
    :precondition (and (holding ?d) (holds ?s ?m) (screwed ?s) (under ?m ?c) (cover_off ?c))
    :effect (and (loose ?m) (not (screwed ?s))))
  (:action lift_module
    :parameters (?m - module)
    :precondition (and (hand_free) (loose ?m) (unplugged ?m))
    :effect (and (carrying ?m) (not (hand_free))))
  (:action place_module
    :parameters (?m - module ?b - bin)
    :precondition (carrying ?m)
    :effect (and (in_bin ?m ?b) (hand_free) (not (carrying ?m)))))
