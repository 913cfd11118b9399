"""The paper's COWP: Prompts 1-3 at the loop's ports (entry: `method.py`)."""
