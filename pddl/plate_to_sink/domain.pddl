;; Dataset task 9: put the dirty plate from the dining table into the sink.
;; Written for cowp_ros. Action names follow the COWP dataset so the benchmark can raise
;; each situation at the step the data names. Predicates range over the root type `thing`
;; so that the Knowledge Acquirer can retype an action's parameter (a bowl in the cup's
;; role) without redeclaring predicates. Only positive preconditions: pyperplan is STRIPS.
;; `put_down` releases whatever the robot holds, wherever it is: the benchmark lets it act
;; on an object a situation made unusable (a broken cup must leave the hand before
;; another can be held); tasks.yaml lists it under `release_actions`.
;; The goal is the plate's role, not one sink: `dishes_cleared` holds once the plate is in
;; any sink (a second sink in the house takes it when the kitchen sink is full).
(define (domain plate_to_sink)
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
    (in_room ?r - place)
    (located ?x - place ?r - place)
    (near ?p - place)
    (on ?x - item ?p - place)
    (hand_free)
    (holding ?x - item)
    (dish_in_sink ?s - place)
    (dishes_cleared))
  (:action walk
    :parameters (?r - room)
    :precondition (and)
    :effect (in_room ?r))
  (:action walk_table
    :parameters (?t - table ?r - room)
    :precondition (and (in_room ?r) (located ?t ?r))
    :effect (near ?t))
  (:action grasp_plate
    :parameters (?p - plate ?t - table)
    :precondition (and (near ?t) (on ?p ?t) (hand_free))
    :effect (and (holding ?p) (not (hand_free)) (not (on ?p ?t))))
  (:action walk_sink
    :parameters (?s - sink)
    :precondition (and)
    :effect (near ?s))
  (:action place_plate
    :parameters (?p - plate ?s - sink)
    :precondition (and (holding ?p) (near ?s))
    :effect (and (dish_in_sink ?s) (dishes_cleared) (hand_free) (not (holding ?p))))
  (:action put_down
    :parameters (?x - item ?p - place)
    :precondition (holding ?x)
    :effect (and (hand_free) (not (holding ?x)))))
