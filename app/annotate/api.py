"""Worker JSON API."""
