"""Annotations made elsewhere become documents and submitted sessions (`flask import-annotations`).

`readers` turns a file (our JSONL export, BooookScore's human annotation files, a dump of
FALTE's `annotation_v2` table) into plain records; `store` locates their spans in the
documents and writes everything in one transaction; `cli` is the command.
"""
