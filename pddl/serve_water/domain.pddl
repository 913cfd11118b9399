;; Journal task: serve a cup of water from the faucet to a person at the table.
;; Written for cowp_ros. Action names follow the COWP dataset so the benchmark can raise
;; each situation at the step the data names. Predicates range over the root type `thing`
;; so that the Knowledge Acquirer can retype an action's parameter (a bowl in the cup's
;; role) without redeclaring predicates. Only positive preconditions: pyperplan is STRIPS.
;; `fill_water` needs an object that supplies water (`supplies_water`: the faucets), so no
;; stand-in takes a faucet's role by drawing on the faucet's own water (a sink's water is
;; the faucet's).
(define (domain serve_water)
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
    (hand_free)
    (holding ?x - item)
    (filled_with_water ?x - item)
    (water_served ?t - place)
    (supplies_water ?x - thing))
  (:action find_cup
    :parameters (?c - cup)
    :precondition (and)
    :effect (found ?c))
  (:action grasp_cup
    :parameters (?c - cup)
    :precondition (and (found ?c) (hand_free))
    :effect (and (holding ?c) (not (hand_free))))
  (:action walk_to
    :parameters (?p - place)
    :precondition (and)
    :effect (near ?p))
  (:action fill_water
    :parameters (?c - cup ?f - faucet)
    :precondition (and (holding ?c) (near ?f) (supplies_water ?f))
    :effect (filled_with_water ?c))
  (:action deliver_water
    :parameters (?c - cup ?t - table)
    :precondition (and (holding ?c) (filled_with_water ?c) (near ?t))
    :effect (and (water_served ?t) (hand_free) (not (holding ?c)))))
