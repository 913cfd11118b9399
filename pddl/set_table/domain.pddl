;; Dataset task 6: set a table to eat steak with a plate and a fork from the cupboard.
;; Written for cowp_ros. Action names follow the COWP dataset so the benchmark can raise
;; each situation at the step the data names. Predicates range over the root type `thing`
;; so that the Knowledge Acquirer can retype an action's parameter (a bowl in the cup's
;; role) without redeclaring predicates. Only positive preconditions: pyperplan is STRIPS.
;; The goal `(table_set)` names no table: a plate and a fork on one accepted stand-in for
;; the table (a desk, when the table is unusable) set it too; place_fork needs the plate
;; on the same table first.
;; `put_down` releases whatever the robot holds, wherever it is: the benchmark lets it act
;; on an object a situation made unusable (a broken cup must leave the hand before
;; another can be held); tasks.yaml lists it under `release_actions`.
(define (domain set_table)
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
    (near ?p - place)
    (opened ?c - place)
    (hand_free)
    (holding ?x - item)
    (plate_set ?t - place)
    (fork_set ?t - place)
    (table_set))
  (:action find_cupboard
    :parameters (?c - cupboard)
    :precondition (and)
    :effect (found ?c))
  (:action walk
    :parameters (?p - place)
    :precondition (found ?p)
    :effect (near ?p))
  (:action open_cupboard
    :parameters (?c - cupboard)
    :precondition (near ?c)
    :effect (opened ?c))
  (:action find_plate
    :parameters (?p - plate ?c - cupboard)
    :precondition (opened ?c)
    :effect (found ?p))
  (:action takeout_plate
    :parameters (?p - plate ?c - cupboard)
    :precondition (and (found ?p) (near ?c) (hand_free))
    :effect (and (holding ?p) (not (hand_free))))
  (:action find_table
    :parameters (?t - table)
    :precondition (and)
    :effect (found ?t))
  (:action place_plate
    :parameters (?p - plate ?t - table)
    :precondition (and (holding ?p) (near ?t))
    :effect (and (plate_set ?t) (hand_free) (not (holding ?p))))
  (:action find_fork
    :parameters (?f - fork ?c - cupboard)
    :precondition (opened ?c)
    :effect (found ?f))
  (:action takeout_fork
    :parameters (?f - fork ?c - cupboard)
    :precondition (and (found ?f) (near ?c) (hand_free))
    :effect (and (holding ?f) (not (hand_free))))
  (:action place_fork
    :parameters (?f - fork ?t - table)
    :precondition (and (holding ?f) (near ?t) (plate_set ?t))
    :effect (and (fork_set ?t) (table_set) (hand_free) (not (holding ?f))))
  (:action put_down
    :parameters (?x - item ?p - place)
    :precondition (holding ?x)
    :effect (and (hand_free) (not (holding ?x)))))
