"""The adjudication commands: export-gold, promote-gold, agreement."""

from __future__ import annotations

from flask import Flask


def register(app: Flask) -> None:
    """Add the adjudication commands to app.cli."""
    from app.adjudication.boundary_agreement import agreement_command
    from app.adjudication.gold import export_gold_command, promote_gold_command

    for command in (export_gold_command, promote_gold_command, agreement_command):
        app.cli.add_command(command)
