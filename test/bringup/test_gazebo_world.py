"""The Gazebo world (config/gazebo/kitchen.sdf) against the SDFormat schema.

The schema is Debian's (`sdformat-sdf`, installed by `make setup`): the newest it ships
is SDFormat 1.9, the world says 1.10; nothing the world uses changed between them.
Debian's generated .xsd files cannot be used exactly as shipped, and each repair here is
the smallest that lets libxml2 load them, stated so it can be checked:

- they include each other by URL (http://sdformat.org/schemas/...): read locally;
- `types.xsd` and `navsat.xsd` are not shipped: types.xsd is written below from the
  SDFormat specification (vector3: 3 numbers, vector2d: 2, color: 3 or 4, pose: 6, or
  7 as a quaternion, time: 1 or 2), navsat (a sensor the world does not use) accepts
  any content;
- `state.xsd` declares global `model`, `link` and `light` elements a second time, which
  libxml2 refuses: the world's `<state>` child (the world has none) is left out;
- `pose.xsd` declares `<pose>` with attributes but no text: its text is the pose type.

Everything else (which element may hold which, attributes, numbers and booleans) is the
schema as Debian ships it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORLD = ROOT / "config" / "gazebo" / "kitchen.sdf"
SCHEMA = Path("/usr/share/sdformat12/1.9")
XMLLINT = shutil.which("xmllint")

pytestmark = pytest.mark.skipif(
    XMLLINT is None or not (SCHEMA / "root.xsd").is_file(),
    reason="the SDFormat schema (Debian sdformat-sdf) or xmllint (libxml2-utils) is not "
    "installed: make setup installs them as root, else: "
    "sudo apt-get install sdformat-sdf libxml2-utils",
)

NUMBERS = r"\s*[-+0-9.eE]+(\s+[-+0-9.eE]+){%s}\s*"
TYPES_XSD = f"""<?xml version="1.0"?>
<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema">
  <xsd:simpleType name="vector3"><xsd:restriction base="xsd:string">
    <xsd:pattern value="{NUMBERS % "2"}"/></xsd:restriction></xsd:simpleType>
  <xsd:simpleType name="vector2d"><xsd:restriction base="xsd:string">
    <xsd:pattern value="{NUMBERS % "1"}"/></xsd:restriction></xsd:simpleType>
  <xsd:simpleType name="color"><xsd:restriction base="xsd:string">
    <xsd:pattern value="{NUMBERS % "2,3"}"/></xsd:restriction></xsd:simpleType>
  <xsd:simpleType name="pose"><xsd:restriction base="xsd:string">
    <xsd:pattern value="({NUMBERS % "5,6"})?"/></xsd:restriction></xsd:simpleType>
  <xsd:simpleType name="time"><xsd:restriction base="xsd:string">
    <xsd:pattern value="{NUMBERS % "0,1"}"/></xsd:restriction></xsd:simpleType>
</xsd:schema>
"""
NAVSAT_XSD = """<?xml version="1.0"?>
<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema">
  <xsd:element name="navsat"><xsd:complexType><xsd:sequence>
    <xsd:any minOccurs="0" maxOccurs="unbounded" processContents="skip"/>
  </xsd:sequence></xsd:complexType></xsd:element>
</xsd:schema>
"""


@pytest.fixture(scope="module")
def schema(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sdformat")
    for source in SCHEMA.glob("*.xsd"):
        text = source.read_text().replace("http://sdformat.org/schemas/", "")
        (folder / source.name).write_text(text)
    for missing, text in (("types.xsd", TYPES_XSD), ("navsat.xsd", NAVSAT_XSD)):
        assert not (SCHEMA / missing).exists(), f"Debian now ships {missing}: use it"
        (folder / missing).write_text(text)
    world = folder / "world.xsd"
    text, count = re.subn(r"\s*<xsd:include schemaLocation='state\.xsd'/>", "", world.read_text())
    text, refs = re.subn(r"\s*<xsd:element ref='state'/>", "", text)
    assert (count, refs) == (1, 1), "world.xsd changed: revisit the state repair"
    world.write_text(text)
    pose = folder / "pose.xsd"
    text = pose.read_text()
    assert "<xsd:simpleContent>" not in text, "pose.xsd has text content now: drop the repair"
    text = text.replace(
        "<xsd:complexType>", "<xsd:complexType><xsd:simpleContent><xsd:extension base='pose'>", 1
    ).replace("</xsd:complexType>", "</xsd:extension></xsd:simpleContent></xsd:complexType>", 1)
    pose.write_text(text)
    return folder / "root.xsd"


def validate(schema: Path, document: Path) -> subprocess.CompletedProcess[str]:
    assert XMLLINT is not None
    return subprocess.run(
        [XMLLINT, "--noout", "--nonet", "--schema", str(schema), str(document)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_kitchen_world_is_valid_sdformat(schema: Path) -> None:
    result = validate(schema, WORLD)
    assert result.returncode == 0, result.stderr
    assert "validates" in result.stderr


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        (lambda t: t.replace("<pose>", "<pose>1 2 ", 1), "pose"),
        (lambda t: t.replace("<static>true</static>", "<static>yes</static>", 1), "static"),
        (lambda t: t.replace("</link>", "<spin>1</spin></link>", 1), "spin"),
    ],
    ids=["pose-with-eight-numbers", "boolean-that-is-not", "unknown-element"],
)
def test_the_schema_check_refuses_a_broken_world(schema, tmp_path, change, complaint) -> None:
    text = WORLD.read_text()
    broken = change(text)
    assert broken != text
    path = tmp_path / "broken.sdf"
    path.write_text(broken)
    result = validate(schema, path)
    assert result.returncode != 0
    assert complaint in result.stderr
