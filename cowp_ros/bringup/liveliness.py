"""How quickly the graph notices a node that died: within 3 s, not DDS's default 20 s.

A node killed outright (SIGKILL, a crash in native code) sends no goodbye; its peers
drop it when its DDS participant lease runs out, 20 s by default in Fast DDS. Every
wait of the ROS layer gives an absent peer `GONE_AFTER_S` = 3 s (waiting.py), so with
the default a dead executor was noticed only after about 20 s. The nodes that cowp
starts (`cowp bringup`, the demo, the launch files, the harness) therefore run with
`config/dds/fastdds_liveliness.xml`: a 3 s lease, announced every second. A user's own
Fast DDS profile (FASTDDS_DEFAULT_PROFILES_FILE) or another RMW is left alone.
"""

from __future__ import annotations

from collections.abc import Mapping

from cowp_ros.resources import share_path

PROFILE_ENV = "FASTDDS_DEFAULT_PROFILES_FILE"
LEGACY_PROFILE_ENV = "FASTRTPS_DEFAULT_PROFILES_FILE"
LEASE_S = 3.0


def liveliness_environment(environment: Mapping[str, str]) -> dict[str, str]:
    """The variables to add so that node processes announce a LEASE_S lease."""
    if environment.get(PROFILE_ENV) or environment.get(LEGACY_PROFILE_ENV):
        return {}  # the user's own profile
    rmw = environment.get("RMW_IMPLEMENTATION", "")
    if rmw and "fastrtps" not in rmw:
        return {}
    profile = share_path("config", "dds", "fastdds_liveliness.xml")
    return {PROFILE_ENV: str(profile)} if profile.is_file() else {}
