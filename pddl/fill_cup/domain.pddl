;; Dataset task 4: fill a cup with water from the faucet and place it on the table.
;; Written for cowp_ros. Action names follow the COWP dataset so the benchmark can raise
;; each situation at the step the data names. Predicates range over the root type `thing`
;; so that the Knowledge Acquirer can retype an action's parameter (a bowl in the cup's
;; role) without redeclaring predicates. Only positive preconditions: pyperplan is STRIPS.
;; `put_down` releases whatever the robot holds, wherever it is: the benchmark lets it act
;; on an object a situation made unusable (a broken cup must leave the hand before
;; another can be held); tasks.yaml lists it under `release_actions`.
;; `turnon_faucet` needs an object that supplies water (`supplies_water`: the faucets), so
;; no stand-in takes a faucet's role by drawing on the faucet's own water (a sink's water
;; is the faucet's).
(define (domain fill_cup)
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
    (water_running ?f - place)
    (hand_free)
    (holding ?x - item)
    (filled_with_water ?x - item)
    (water_served ?t - place)
    (supplies_water ?x - thing))
  (:action find_faucet
    :parameters (?f - faucet)
    :precondition (and)
    :effect (found ?f))
  (:action turnon_faucet
    :parameters (?f - faucet)
    :precondition (and (found ?f) (supplies_water ?f))
    :effect (water_running ?f))
  (:action find_cup
    :parameters (?c - cup)
    :precondition (and)
    :effect (found ?c))
  (:action hold_cup
    :parameters (?c - cup)
    :precondition (and (found ?c) (hand_free))
    :effect (and (holding ?c) (not (hand_free))))
  (:action fill_cup
    :parameters (?c - cup ?f - faucet)
    :precondition (and (holding ?c) (water_running ?f))
    :effect (filled_with_water ?c))
  (:action place_cup
    :parameters (?c - cup ?t - table)
    :precondition (and (holding ?c) (filled_with_water ?c))
    :effect (and (water_served ?t) (hand_free) (not (holding ?c))))
  (:action put_down
    :parameters (?x - item ?p - place)
    :precondition (holding ?x)
    :effect (and (hand_free) (not (holding ?x)))))
