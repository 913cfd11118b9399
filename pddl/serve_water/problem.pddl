;; Journal task: serve a cup of water from the faucet to a person at the table.
;; The task's own objects (cup_1, faucet_1, table_1) plus a pool of 55 other objects
;; that could stand in for them; cowp_ros.tasks builds smaller problems from it.
(define (problem serve_water_problem)
  (:domain serve_water)
  (:objects
    cup_1 - cup
    faucet_1 - faucet
    table_1 - table
    glass_1 glass_2 - glass
    mug_1 mug_2 - mug
    bowl_1 bowl_2 - bowl
    plate_1 plate_2 - plate
    tray_1 - tray
    bottle_1 bottle_2 - bottle
    jug_1 - jug
    pitcher_1 - pitcher
    kettle_1 - kettle
    pot_1 - pot
    pan_1 - pan
    bucket_1 - bucket
    fork_1 fork_2 - fork
    knife_1 - knife
    spoon_1 spoon_2 - spoon
    chopsticks_1 - chopsticks
    napkin_1 napkin_2 - napkin
    sponge_1 - sponge
    rag_1 - rag
    towel_1 - towel
    box_1 - box
    basket_1 - basket
    broom_1 - broom
    mop_1 - mop
    vacuum_1 - vacuum
    coke_1 - coke
    juice_1 juice_2 - juice
    beer_1 - beer
    milk_1 - milk
    tea_1 - tea
    burger_1 - burger
    sandwich_1 - sandwich
    bread_1 bread_2 - bread
    counter_1 - counter
    desk_1 - desk
    shelf_1 - shelf
    cupboard_1 - cupboard
    sink_1 - sink
    outlet_1 - outlet
    chair_1 - chair
    stool_1 - stool
    bench_1 - bench
    sofa_1 - sofa
    area_1 - area
    room_1 - room)
  (:init
    (hand_free)
    (supplies_water faucet_1))
  (:goal (water_served table_1)))
