"""GET /start: placeholder until the assignment work lands."""
