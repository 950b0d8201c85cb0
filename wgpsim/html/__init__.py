"""Self-contained HTML reports (``--html``): plain string building, inline SVG, no network."""
