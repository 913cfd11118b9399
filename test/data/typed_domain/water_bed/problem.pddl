(define (problem water_the_bed) (:domain watering)
  (:objects can_1 - can jug_1 - jug tap_1 tap_2 - tap bed_1 - bed)
  (:init (hand_free))
  (:goal (watered bed_1)))
