"""What a detector reports: one object class, its confidence and its pixel box."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Detection:
    """One object found in an image; the box is in pixels, top-left origin, x to the right."""

    class_name: str
    confidence: float
    x_min: float
    y_min: float
    x_max: float
    y_max: float

    @property
    def area(self) -> float:
        """Box area in square pixels (0 for a degenerate box)."""
        return max(0.0, self.x_max - self.x_min) * max(0.0, self.y_max - self.y_min)

    def fraction_inside(self, container: Detection) -> float:
        """Share of this box's area that lies inside `container`'s box (0..1)."""
        if self.area <= 0.0:
            return 0.0
        width = min(self.x_max, container.x_max) - max(self.x_min, container.x_min)
        height = min(self.y_max, container.y_max) - max(self.y_min, container.y_min)
        return max(0.0, width) * max(0.0, height) / self.area

    def iou(self, other: Detection) -> float:
        """Intersection over union of the two boxes (0..1): how far they are one box."""
        width = min(self.x_max, other.x_max) - max(self.x_min, other.x_min)
        height = min(self.y_max, other.y_max) - max(self.y_min, other.y_min)
        overlap = max(0.0, width) * max(0.0, height)
        union = self.area + other.area - overlap
        return overlap / union if union > 0.0 else 0.0

    def describe(self) -> str:
        """`cup 0.65 [150, 24, 427, 307]`: how the CLI and logs print a detection."""
        box = ", ".join(str(round(v)) for v in (self.x_min, self.y_min, self.x_max, self.y_max))
        return f"{self.class_name} {self.confidence:.2f} [{box}]"
