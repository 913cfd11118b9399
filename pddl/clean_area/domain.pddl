;; Dataset task 1: clean the dirty area beside a table with a vacuum.
;; Written for cowp_ros. Action names follow the COWP dataset so the benchmark can raise
;; each situation at the step the data names. Predicates range over the root type `thing`
;; so that the Knowledge Acquirer can retype an action's parameter (a bowl in the cup's
;; role) without redeclaring predicates. Only positive preconditions: pyperplan is STRIPS.
;; `put_down` releases whatever the robot holds, wherever it is: the benchmark lets it act
;; on an object a situation made unusable (a broken cup must leave the hand before
;; another can be held); tasks.yaml lists it under `release_actions`.
;; `sweep_area` cleans with a held cleaner that needs no power (`manual`: a broom or a
;; mop), so a broom standing in for the vacuum can do the job the vacuum could not.
(define (domain clean_area)
  (:requirements :strips :typing)
  (:types
    item place - thing
    thing - object
    basket beer bottle bowl box bread broom bucket
    burger chopsticks coke cup fork glass jug juice
    kettle knife milk mop mug napkin pan pitcher
    plate pot rag sandwich sponge spoon tea towel
    tray vacuum - item
    area bench chair counter cupboard desk faucet outlet
    room shelf sink sofa stool table - place)
  (:predicates
    (found ?x - thing)
    (hand_free)
    (holding ?x - item)
    (plugged ?x - item)
    (switched_on ?x - item)
    (beside ?a - place ?t - place)
    (cleaned ?a - place)
    (manual ?x - item))
  (:action find_table
    :parameters (?t - table)
    :precondition (and)
    :effect (found ?t))
  (:action grasp_vacuum
    :parameters (?v - vacuum)
    :precondition (hand_free)
    :effect (and (holding ?v) (not (hand_free))))
  (:action plug_vacuum
    :parameters (?v - vacuum ?o - outlet)
    :precondition (holding ?v)
    :effect (plugged ?v))
  (:action turnon_vacuum
    :parameters (?v - vacuum)
    :precondition (plugged ?v)
    :effect (switched_on ?v))
  (:action clean_area
    :parameters (?v - vacuum ?a - area ?t - table)
    :precondition (and (holding ?v) (switched_on ?v) (found ?t) (beside ?a ?t))
    :effect (cleaned ?a))
  (:action sweep_area
    :parameters (?v - vacuum ?a - area ?t - table)
    :precondition (and (holding ?v) (manual ?v) (found ?t) (beside ?a ?t))
    :effect (cleaned ?a))
  (:action put_down
    :parameters (?x - item ?p - place)
    :precondition (holding ?x)
    :effect (and (hand_free) (not (holding ?x)))))
