"""See docs/DESIGN.md for what this layer holds."""
