;; Dataset task 10: pour coke into a glass and place it on the table.
;; Written for cowp_ros. Action names follow the COWP dataset so the benchmark can raise
;; each situation at the step the data names. Predicates range over the root type `thing`
;; so that the Knowledge Acquirer can retype an action's parameter (a bowl in the cup's
;; role) without redeclaring predicates. Only positive preconditions: pyperplan is STRIPS.
;; `put_down` releases whatever the robot holds, wherever it is: the benchmark lets it act
;; on an object a situation made unusable (a broken cup must leave the hand before
;; another can be held); tasks.yaml lists it under `release_actions`.
(define (domain pour_coke)
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
    (ready_at ?x - item ?t - place)
    (filled_with_drink ?x - item)
    (drink_served ?t - place))
  (:action find_coke
    :parameters (?k - coke)
    :precondition (and)
    :effect (found ?k))
  (:action grasp_coke
    :parameters (?k - coke)
    :precondition (and (found ?k) (hand_free))
    :effect (and (holding ?k) (not (hand_free))))
  (:action find_glass
    :parameters (?g - glass)
    :precondition (and)
    :effect (found ?g))
  (:action move_glass
    :parameters (?g - glass ?t - table)
    :precondition (found ?g)
    :effect (ready_at ?g ?t))
  (:action pour_coke
    :parameters (?k - coke ?g - glass ?t - table)
    :precondition (and (holding ?k) (ready_at ?g ?t))
    :effect (filled_with_drink ?g))
  (:action place_glass
    :parameters (?g - glass ?t - table)
    :precondition (and (filled_with_drink ?g) (ready_at ?g ?t))
    :effect (drink_served ?t))
  (:action put_down
    :parameters (?x - item ?p - place)
    :precondition (holding ?x)
    :effect (and (hand_free) (not (holding ?x)))))
