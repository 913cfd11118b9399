"""cowp_ros built by colcon as docs/robot.md builds it, and used from that install.

colcon (colcon-core, colcon-ros: requirements/ros.txt) builds the repository into a
temporary install, as `colcon build` does on the robot. The checks then read that
install, never the source tree: the entry points under lib/cowp_ros (what
`ros2 run cowp_ros ...` runs), every data file the package reads at run time, and the
launch, config and PDDL files under share/cowp_ros. Every command of docs/robot.md that
names something of cowp_ros must find it there.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "cowp_ros"
COLCON = Path(sys.executable).parent / "colcon"
DOC = ROOT / "docs" / "robot.md"
SITE = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"


@pytest.fixture(scope="module")
def install(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not COLCON.is_file():
        pytest.skip(f"colcon is not installed in {COLCON.parent}: run make setup")
    base = tmp_path_factory.mktemp("colcon")
    env = {**os.environ, "PATH": f"{COLCON.parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(
        [str(COLCON), "--log-base", str(base / "log"), "build", "--base-paths", str(ROOT),
         "--packages-select", PACKAGE, "--build-base", str(base / "build"),
         "--install-base", str(base / "install"), "--merge-install"],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    return base / "install"


def installed_env(install: Path) -> dict[str, str]:
    """What `source install/setup.bash` sets for cowp_ros (its package.dsv hooks)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(install / SITE), env.get("PYTHONPATH", "")])
    env["AMENT_PREFIX_PATH"] = os.pathsep.join(
        [str(install), env.get("AMENT_PREFIX_PATH", "")]
    ).rstrip(os.pathsep)
    env.pop("COWP_SHARE_DIR", None)
    return env


def run_installed(install: Path, code: str, tmp_path: Path) -> str:
    """Python code run against the install (from a folder outside the source tree)."""
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=installed_env(install),
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_package_is_imported_from_the_install(install: Path, tmp_path: Path) -> None:
    out = run_installed(
        install,
        "import cowp_ros, cowp_ros.resources as r; print(cowp_ros.__file__); print(r.share_dir())",
        tmp_path,
    )
    module, share = out.split()
    assert Path(module).is_relative_to(install)
    assert Path(share) == install / "share" / PACKAGE


def source_data_files() -> list[Path]:
    """Every file in the Python package that is not Python: data read at run time."""
    return sorted(
        p.relative_to(ROOT / PACKAGE)
        for p in (ROOT / PACKAGE).rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    )


def test_every_data_file_of_the_package_is_installed(install: Path) -> None:
    files = source_data_files()
    assert Path("llm/data/checkset.yaml") in files
    assert Path("methods/paper/calibration/data/benign_situations.yaml") in files
    missing = [str(f) for f in files if not (install / SITE / PACKAGE / f).is_file()]
    assert missing == []


def test_every_packaged_resource_the_code_reads_is_there(install: Path) -> None:
    """Each `resources.files("<module>").joinpath(<name>)` of the code, resolved in the
    install (a name held in a module constant is read from that constant)."""
    reads = []
    for source in (ROOT / PACKAGE).rglob("*.py"):
        text = source.read_text()
        for module, name in re.findall(r'resources\.files\("([\w.]+)"\)\.joinpath\((\S+?)\)', text):
            if name.startswith('"'):
                reads.append((module, name.strip('"')))
            else:
                (value,) = re.findall(rf'^{name} = "([^"]+)"', text, flags=re.M)
                reads.append((module, value))
    assert len(reads) >= 2
    for module, name in reads:
        folder = install / SITE / Path(*module.split("."))
        assert (folder / name).is_file(), f"{module}: {name} is not installed"


def test_the_packaged_data_loads_from_the_install(install: Path, tmp_path: Path) -> None:
    out = run_installed(
        install,
        "from cowp_ros.llm.evaluation import load_checkset; print(len(load_checkset()))",
        tmp_path,
    )
    assert int(out) > 0


def test_the_entry_points_are_where_ros2_run_looks(install: Path, tmp_path: Path) -> None:
    import configparser

    import yaml

    executables = {p.name for p in (install / "lib" / PACKAGE).iterdir()}
    assert {"cowp", "executor", "task_manager", "sim_world"} <= executables
    spec = yaml.safe_load((ROOT / "config" / "bringup.yaml").read_text())
    ours = {n["executable"] for n in spec["nodes"].values() if n.get("package") == PACKAGE}
    assert ours <= executables
    cowp = install / "lib" / PACKAGE / "cowp"
    assert os.access(cowp, os.X_OK)
    result = subprocess.run(
        [str(cowp), "--help"],
        capture_output=True,
        text=True,
        env=installed_env(install),
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "doctor" in result.stdout
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    assert config["install"]["install_scripts"] == f"$base/lib/{PACKAGE}"


def test_launch_config_and_pddl_files_are_installed(install: Path) -> None:
    share = install / "share" / PACKAGE
    for folder in ("launch", "config", "pddl"):
        source = {p.relative_to(ROOT) for p in (ROOT / folder).rglob("*") if p.is_file()}
        source = {p for p in source if "__pycache__" not in p.parts}
        installed = {p.relative_to(share) for p in (share / folder).rglob("*") if p.is_file()}
        assert source == installed, folder
    assert (share / "package.xml").is_file()
    assert (install / "share" / "ament_index" / "resource_index" / "packages" / PACKAGE).is_file()


# --- docs/robot.md, command by command ----------------------------------------------


def doc_text() -> str:
    return DOC.read_text()


def test_every_cowp_command_in_the_docs_runs_through_ros2_run() -> None:
    """colcon installs `cowp` in lib/cowp_ros, which is not on the PATH: a bare
    `cowp doctor` after `source install/setup.bash` is "command not found"."""
    bare = []
    for match in re.finditer(r"(?<![\w/.-])cowp (?=[a-z-]+)", doc_text()):
        if not doc_text()[: match.start()].endswith("ros2 run cowp_ros "):
            line = doc_text()[: match.start()].count("\n") + 1
            bare.append(f"line {line}: {doc_text()[match.start() : match.start() + 30]!r}")
    assert bare == []


def test_the_rule_for_bare_cowp_commands_can_fail() -> None:
    assert re.search(r"(?<![\w/.-])cowp (?=[a-z-]+)", "then `cowp doctor --profile robot`")
    assert not re.search(r"(?<![\w/.-])cowp (?=[a-z-]+)", "`.venv/bin/cowp doctor`")


def test_what_the_docs_run_of_cowp_ros_is_installed(install: Path) -> None:
    text = doc_text()
    runs = set(re.findall(r"ros2 run cowp_ros (\w+)", text))
    launches = set(re.findall(r"ros2 launch cowp_ros ([\w.]+)", text))
    shares = set(re.findall(r"share/cowp_ros/([\w./-]+\w)", text))
    modules = set(re.findall(r"python3 -m (cowp_ros[\w.]*)", text))
    assert {"cowp", "executor"} <= runs and "robot.launch.py" in launches
    for name in runs:
        assert (install / "lib" / PACKAGE / name).is_file(), name
    for name in launches:
        assert (install / "share" / PACKAGE / "launch" / name).is_file(), name
    for name in shares:
        assert (install / "share" / PACKAGE / name).is_file(), name
    for module in modules:
        path = install / SITE / Path(*module.split("."))
        assert path.with_suffix(".py").is_file() or (path / "__init__.py").is_file(), module
    for requirement in re.findall(r"src/cowp_ros/(requirements/[\w.-]+)", text):
        assert (ROOT / requirement).is_file(), requirement
