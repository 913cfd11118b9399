"""Write the small bags the test suite replays (test/data/bags/); run again to refresh.

    .venv/bin/python scripts/make_test_bags.py

situations_dirty_cup: one `cowp_interfaces/Situation` ("the cup is dirty", source
replay) 4 s after the bag starts, and a second, unrelated one ("the fridge is white")
at 5 s: what an operator or a recorded run would have said during a serve-water task.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from cowp_ros.ros.bags import typestore, write_bag

OUT = Path(__file__).resolve().parent.parent / "test" / "data" / "bags"
START_NS = 1_800_000_000 * 1_000_000_000
SITUATION = "cowp_interfaces/msg/Situation"


def situation(store, text: str, about: str, stamp_ns: int):
    situation_type = store.types[SITUATION]
    header_type = store.types["std_msgs/msg/Header"]
    time_type = store.types["builtin_interfaces/msg/Time"]
    stamp = time_type(sec=stamp_ns // 1_000_000_000, nanosec=stamp_ns % 1_000_000_000)
    return situation_type(
        header=header_type(stamp=stamp, frame_id=""),
        text=text,
        object=about,
        source="replay",
        confidence=1.0,
    )


def main() -> None:
    store = typestore()
    path = OUT / "situations_dirty_cup"
    shutil.rmtree(path, ignore_errors=True)
    OUT.mkdir(parents=True, exist_ok=True)
    events = [(4.0, "the cup is dirty", "cup_1"), (5.0, "the fridge is white", "fridge_1")]
    write_bag(
        path,
        (
            (
                "/cowp/situations",
                SITUATION,
                START_NS + int(t * 1e9),
                situation(store, text, about, START_NS + int(t * 1e9)),
            )
            for t, text, about in events
        ),
        store,
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
