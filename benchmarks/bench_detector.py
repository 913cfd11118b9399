"""Detector throughput on this CPU: frames per second and memory, per backend and size.

Not a test: numbers depend on the machine and its load, so they are printed (and
optionally saved as JSON), never asserted. Each (backend, size) runs in its own process
so memory figures do not mix. Frames cycle through real photos (ultralytics' bus and
zidane, skimage's coffee) as numpy BGR arrays, as the node feeds them.

    .venv/bin/python benchmarks/bench_detector.py                # 320/416/640, both backends
    .venv/bin/python benchmarks/bench_detector.py --frames 50 --sizes 416 --json out.json
    .venv/bin/python benchmarks/bench_detector.py --smoke    # CI: both backends, 2 frames

FPS here is detector-only (pre-processing, inference, NMS, post-processing), one frame
at a time; the node adds ROS image conversion and publishing on top.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

BACKENDS = ("ultralytics", "onnxruntime")


def real_frames() -> list:
    """The photos as BGR arrays, found without importing ultralytics (torch would load)."""
    import importlib.util

    import cv2
    from skimage import data

    spec = importlib.util.find_spec("ultralytics")
    assert spec is not None and spec.origin, "ultralytics is not installed"
    assets = Path(spec.origin).parent / "assets"
    frames = [cv2.imread(str(assets / name)) for name in ("bus.jpg", "zidane.jpg")]
    frames.append(cv2.cvtColor(data.coffee(), cv2.COLOR_RGB2BGR))
    return frames


def rss_mb() -> float:
    """Resident memory now, from /proc (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def measure(
    backend: str, imgsz: int, frame_count: int, warmup: int, threads: int
) -> dict[str, float | str]:
    """Runs in the child process: load, warm up, time `frame_count` frames."""
    frames = real_frames()
    before_load = rss_mb()
    from cowp_ros.perception.detectors import create_detector

    started = time.perf_counter()
    detector = create_detector(backend, imgsz=imgsz, threads=threads)
    load_s = time.perf_counter() - started
    for index in range(warmup):
        detector.detect(frames[index % len(frames)])
    latencies = []
    wall_start = time.perf_counter()
    for index in range(frame_count):
        frame_start = time.perf_counter()
        detector.detect(frames[index % len(frames)])
        latencies.append(time.perf_counter() - frame_start)
    wall = time.perf_counter() - wall_start
    latencies.sort()
    return {
        "backend": backend,
        "imgsz": imgsz,
        "frames": frame_count,
        "fps": frame_count / wall,
        "median_ms": statistics.median(latencies) * 1000,
        "p90_ms": latencies[int(0.9 * (len(latencies) - 1))] * 1000,
        "best_ms": latencies[0] * 1000,
        "load_s": load_s,
        "rss_mb": rss_mb(),
        "rss_model_mb": rss_mb() - before_load,  # the detector's share (libraries + model)
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    parser.add_argument("--sizes", nargs="+", type=int, default=[320, 416, 640])
    parser.add_argument("--frames", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument(
        "--threads", type=int, default=0, help="onnxruntime threads (0 = one per core)"
    )
    parser.add_argument("--json", type=Path, help="also save the results here")
    parser.add_argument("--child", nargs=2, metavar=("BACKEND", "IMGSZ"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="both backends at 320 px, 2 frames (for CI; its figures mean nothing)",
    )
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.frames, args.warmup = [320], 2, 1

    if args.child:
        result = measure(args.child[0], int(args.child[1]), args.frames, args.warmup, args.threads)
        print(json.dumps(result))
        return 0

    load = os.getloadavg()
    print(f"CPU cores: {os.cpu_count()}, load average before: {load[0]:.2f} {load[1]:.2f}")
    results = []
    for backend in args.backends:
        for imgsz in args.sizes:
            child = subprocess.run(
                [sys.executable, __file__, "--child", backend, str(imgsz),
                 "--frames", str(args.frames), "--warmup", str(args.warmup),
                 "--threads", str(args.threads)],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            results.append(json.loads(child.stdout.strip().splitlines()[-1]))
    header = "| backend | imgsz | FPS | median ms | p90 ms | best ms | load s | RSS MB | peak MB |"
    print(header)
    print("|---" * 9 + "|")
    for r in results:
        print(
            f"| {r['backend']} | {r['imgsz']} | {r['fps']:.1f} | {r['median_ms']:.0f} | "
            f"{r['p90_ms']:.0f} | {r['best_ms']:.0f} | {r['load_s']:.1f} | {r['rss_mb']:.0f} | "
            f"{r['peak_rss_mb']:.0f} |"
        )
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f}")
    if args.json:
        args.json.write_text(json.dumps({"results": results, "load_after": load}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
