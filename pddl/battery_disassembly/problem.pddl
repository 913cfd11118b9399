; Pack 1 is the job: its cover (bolt_1, bolt_2), and under it module_1 and module_2,
; each held by a screw and wired through a connector; both modules go to bin_1 and the
; tools back to rack_1. Pack 2 and pack 3 are on the bench too (their parts are the
; stand-ins `build_problem` samples, and branches a blind search explores), with loose
; spare parts, tools in a drawer (no action can take them) and a second rack and bin.
(define (problem battery_pack_1)
  (:domain battery_disassembly)
  (:objects
    wrench_1 wrench_2 wrench_3 - wrench
    screwdriver_1 screwdriver_2 screwdriver_3 - screwdriver
    bolt_1 bolt_2 bolt_3 bolt_4 bolt_5 bolt_6 bolt_7 bolt_8 bolt_9 bolt_10 - bolt
    cover_1 cover_2 cover_3 - cover
    module_1 module_2 module_3 module_4 module_5 module_6 - module
    screw_1 screw_2 screw_3 screw_4 screw_5 screw_6 screw_7 screw_8 - screw
    connector_1 connector_2 connector_3 connector_4 connector_5 connector_6 - connector
    rack_1 rack_2 - rack
    bin_1 bin_2 - bin)
  (:init
    (hand_free)
    (on_rack wrench_1 rack_1) (on_rack screwdriver_1 rack_1)
    (fastened bolt_1) (fastened bolt_2)
    (left_bolt bolt_1 cover_1) (right_bolt bolt_2 cover_1)
    (under module_1 cover_1) (under module_2 cover_1)
    (holds screw_1 module_1) (holds screw_2 module_2)
    (screwed screw_1) (screwed screw_2)
    (wires connector_1 module_1) (wires connector_2 module_2)
    (plugged_in connector_1) (plugged_in connector_2)
    (fastened bolt_3) (fastened bolt_4)
    (left_bolt bolt_3 cover_2) (right_bolt bolt_4 cover_2)
    (under module_3 cover_2) (under module_4 cover_2)
    (holds screw_3 module_3) (holds screw_4 module_4)
    (screwed screw_3) (screwed screw_4)
    (wires connector_3 module_3) (wires connector_4 module_4)
    (plugged_in connector_3) (plugged_in connector_4)
    (fastened bolt_5) (fastened bolt_6)
    (left_bolt bolt_5 cover_3) (right_bolt bolt_6 cover_3)
    (under module_5 cover_3)
    (holds screw_5 module_5) (screwed screw_5)
    (wires connector_5 module_5) (plugged_in connector_5))
  (:goal (and
    (in_bin module_1 bin_1) (in_bin module_2 bin_1)
    (on_rack wrench_1 rack_1) (on_rack screwdriver_1 rack_1))))
