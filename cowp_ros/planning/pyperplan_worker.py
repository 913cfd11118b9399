"""Child-process entry point that runs pyperplan on two files and prints JSON.

Run as a script (not `-m`) so that the child imports pyperplan only, not cowp_ros: the
start-up cost of a replan is then the interpreter plus pyperplan (about 0.1 s). It holds
on to its parent (`lifeline.py`): if the parent dies, so does the search.
Output: {"found": bool, "plan": ["(a x y)", ...], "search_s": float, "ground_s": float,
"peak_mb": float}; out of memory (under the parent's cap): exit 75 and
{"out_of_memory": true, "peak_mb": float} on stderr.
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import sys
import time

OUT_OF_MEMORY_EXIT = 75
"""Exit code when an allocation failed under the memory cap (budget.OUT_OF_MEMORY_EXIT)."""


def peak_mb() -> float:
    """This process's own peak resident memory so far, in MB.

    Linux's VmHWM belongs to the address space this program runs in. `ru_maxrss` is
    not this process's own: the kernel carries the parent's resident size at the fork
    over the exec, so a worker forked from a 1.3 GB process reported a 1.3 GB peak
    under a 300 MB cap. `ru_maxrss` (KiB on Linux) is only the fallback elsewhere.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    try:
        return plan()
    except MemoryError:  # the address-space cap the parent set: say so, briefly
        sys.stderr.write(json.dumps({"out_of_memory": True, "peak_mb": round(peak_mb(), 1)}))
        return OUT_OF_MEMORY_EXIT


def plan() -> int:
    from lifeline import hold_on  # a sibling file: this script's folder is on sys.path

    hold_on()  # die with the parent, removing the temporary folder
    parser = argparse.ArgumentParser()
    parser.add_argument("domain")
    parser.add_argument("problem")
    parser.add_argument("--search", default="gbf")
    parser.add_argument("--heuristic", default="hff")
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)

    from pyperplan import grounding
    from pyperplan.pddl.parser import Parser
    from pyperplan.planner import HEURISTICS, SEARCHES

    start = time.perf_counter()
    reader = Parser(args.domain, args.problem)
    domain = reader.parse_domain()
    problem = reader.parse_problem(domain)
    task = grounding.ground(problem)
    grounded = time.perf_counter()
    search = SEARCHES[args.search]
    if args.heuristic == "none":  # blind searches (bfs, ids, sat) take no heuristic
        solution = search(task)
    else:
        solution = search(task, HEURISTICS[args.heuristic](task))
    done = time.perf_counter()
    json.dump(
        {
            "found": solution is not None,
            "plan": [op.name for op in solution or []],
            "ground_s": grounded - start,
            "search_s": done - grounded,
            "peak_mb": round(peak_mb(), 1),
        },
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
