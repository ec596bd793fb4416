"""Steps that run next to torch: capture (and later, on-device workers)."""
