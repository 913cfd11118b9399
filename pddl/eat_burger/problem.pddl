;; Dataset task 11: get ready to eat a burger on a plate at a table.
;; The task's own objects (burger_1, plate_1, fork_1, chair_1, table_1) plus a pool of 51 other objects
;; that could stand in for them; cowp_ros.tasks builds smaller problems from it.
(define (problem eat_burger_problem)
  (:domain eat_burger)
  (:objects
    burger_1 - burger
    plate_1 - plate
    fork_1 - fork
    chair_1 - chair
    table_1 - table
    cup_1 - cup
    glass_1 glass_2 - glass
    mug_1 mug_2 - mug
    bowl_1 bowl_2 - bowl
    tray_1 - tray
    bottle_1 bottle_2 - bottle
    jug_1 - jug
    pitcher_1 - pitcher
    kettle_1 - kettle
    pot_1 - pot
    pan_1 - pan
    bucket_1 - bucket
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
    sandwich_1 - sandwich
    bread_1 bread_2 - bread
    counter_1 - counter
    desk_1 - desk
    shelf_1 - shelf
    cupboard_1 - cupboard
    sink_1 - sink
    faucet_1 - faucet
    outlet_1 - outlet
    stool_1 - stool
    bench_1 - bench
    sofa_1 - sofa
    area_1 - area
    room_1 - room)
  (:init
    )
  (:goal (meal_ready)))
