"""Worker pages."""
