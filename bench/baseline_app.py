"""The benchmarks' baselines: bare Flask views, each one psycopg2 statement, no ORM, no
validation, served by gunicorn with the app's own settings. POST /save inserts one
annotation-shaped row (bench.save_load); GET /start inserts one session-shaped row and
redirects to its page (bench.start_burst)."""

from __future__ import annotations

import os
import secrets
import threading

import psycopg2
from flask import Flask, jsonify, redirect, request

DDL = """
CREATE TABLE IF NOT EXISTS bench_baseline (
    id BIGSERIAL PRIMARY KEY, client_id VARCHAR(36) NOT NULL UNIQUE,
    paragraph_id INT NOT NULL, span_start INT NOT NULL, span_end INT NOT NULL,
    span_text TEXT NOT NULL, category VARCHAR(64) NOT NULL, comment TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS bench_baseline_start (
    id BIGSERIAL PRIMARY KEY, token VARCHAR(64) NOT NULL UNIQUE, worker VARCHAR(200) NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now())
"""

app = Flask(__name__)
_local = threading.local()


def _connection():
    conn = getattr(_local, "conn", None)
    if conn is None or conn.closed:
        dsn = os.environ["DATABASE_URL"].replace("postgresql+psycopg2://", "postgresql://")
        conn = _local.conn = psycopg2.connect(dsn)
    return conn


def create_table(dsn: str) -> None:
    """Create the baselines' tables (once, before the server starts)."""
    conn = psycopg2.connect(dsn)
    with conn, conn.cursor() as cur:
        cur.execute(DDL)
    conn.close()


@app.post("/save")
def save():
    """Insert the posted annotation as one row."""
    body = request.get_json()
    span = body["span"]
    conn = _connection()
    with conn, conn.cursor() as cur:
        cur.execute(
            "INSERT INTO bench_baseline (client_id, paragraph_id, span_start, span_end,"
            " span_text, category, comment) VALUES (%s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (client_id) DO NOTHING",
            (
                body["id"],
                span["paragraph_id"],
                span["start"],
                span["end"],
                span["text"],
                body["category"],
                body.get("comment"),
            ),
        )
    return jsonify(id=body["id"]), 201


@app.get("/start")
def start():
    """Insert one session-shaped row for the worker and redirect to its page."""
    token = secrets.token_urlsafe(24)
    conn = _connection()
    with conn, conn.cursor() as cur:
        cur.execute(
            "INSERT INTO bench_baseline_start (token, worker) VALUES (%s, %s)",
            (token, request.args.get("PROLIFIC_PID", "")),
        )
    return redirect(f"/s/{token}")
