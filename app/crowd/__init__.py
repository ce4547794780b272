"""The crowd study: everything a worker goes through around the annotation task."""
