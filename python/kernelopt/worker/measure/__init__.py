"""What the worker measures and keeps track of: GPU timing (timing.py) and ceilings (ceilings.py), the
memory plan (memory.py, docs/memory.md), output comparison (compare.py), poisoned outputs (poison.py),
recorded launches (launches.py) and the model in float64 (float64_mode.py). The lowest layer: it imports
nothing else of the worker."""
