; Watering a bed: a can is found, grasped, filled at a tap and emptied on the bed.
; A jug is a vessel too, so it can stand in for a broken can.
(define (domain watering)
  (:requirements :strips :typing)
  (:types can jug - vessel
          tap bed)
  (:predicates (found ?v - vessel) (holding ?v - vessel) (hand_free) (full ?v - vessel)
               (running ?t - tap) (watered ?b - bed))
  (:action find_can
    :parameters (?v - can)
    :precondition (and)
    :effect (found ?v))
  (:action grasp_can
    :parameters (?v - can)
    :precondition (and (found ?v) (hand_free))
    :effect (and (holding ?v) (not (hand_free))))
  (:action open_tap
    :parameters (?t - tap)
    :precondition (and)
    :effect (running ?t))
  (:action fill_can
    :parameters (?v - can ?t - tap)
    :precondition (and (holding ?v) (running ?t))
    :effect (full ?v))
  (:action water_bed
    :parameters (?v - can ?b - bed)
    :precondition (and (holding ?v) (full ?v))
    :effect (watered ?b)))
