;; Dataset task 11: get ready to eat a burger on a plate at a table.
;; Written for cowp_ros. Action names follow the COWP dataset so the benchmark can raise
;; each situation at the step the data names. Predicates range over the root type `thing`
;; so that the Knowledge Acquirer can retype an action's parameter (a bowl in the cup's
;; role) without redeclaring predicates. Only positive preconditions: pyperplan is STRIPS.
;; The goal `(meal_ready)` names no table: the burger served last, at a table (or an
;; accepted stand-in for it) where a seat is ready and cutlery is laid, sets it.
(define (domain eat_burger)
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
    (seat_ready ?t - place)
    (placed ?x - item ?t - place)
    (food_served ?t - place)
    (cutlery_set ?t - place)
    (meal_ready))
  (:action find_table
    :parameters (?t - table)
    :precondition (and)
    :effect (found ?t))
  (:action find_chair
    :parameters (?c - chair)
    :precondition (and)
    :effect (found ?c))
  (:action pull_chair
    :parameters (?c - chair ?t - table)
    :precondition (and (found ?c) (found ?t))
    :effect (seat_ready ?t))
  (:action find_plate
    :parameters (?p - plate)
    :precondition (and)
    :effect (found ?p))
  (:action place_plate
    :parameters (?p - plate ?t - table)
    :precondition (and (found ?p) (found ?t))
    :effect (placed ?p ?t))
  (:action find_burger
    :parameters (?b - burger)
    :precondition (and)
    :effect (found ?b))
  (:action serve_burger
    :parameters (?b - burger ?p - plate ?t - table)
    :precondition (and (found ?b) (placed ?p ?t) (seat_ready ?t) (cutlery_set ?t))
    :effect (and (food_served ?t) (meal_ready)))
  (:action find_fork
    :parameters (?f - fork)
    :precondition (and)
    :effect (found ?f))
  (:action place_fork
    :parameters (?f - fork ?t - table)
    :precondition (and (found ?f) (found ?t))
    :effect (cutlery_set ?t)))
