"""The COPY export's line-break escape on bytes (app.rules.jsonl.escape_line_breaks_utf8) and
its chunks (app.exports.postgres_copy): the same text as the str writers' escape, whatever
the chunk boundaries. The whole COPY path is run on PostgreSQL by
tests/integration/test_jsonl_line_breaks.py."""

from __future__ import annotations

import io
import json

import pytest

from app.exports.postgres_copy import _Rows
from app.rules.jsonl import escape_line_breaks, escape_line_breaks_utf8

TEXTS = [
    "plain ascii",
    "Zoë “quoted” – dash … ellipsis \u00a0 nbsp © ½",  # 0xE2 and 0xC2 lead bytes, no break
    "line\u2028separator",
    "para\u2029graph",
    "next\x85line",
    "\u2028\u2029\x85\u2028\x85",
    "🚢 ship \u2027 \u202f \u2030",  # neighbours of U+2028/9 in UTF-8
]


@pytest.mark.parametrize("text", TEXTS)
def test_bytes_are_escaped_as_the_text_is(text):
    line = json.dumps({"comment": text}, ensure_ascii=False)
    escaped = escape_line_breaks_utf8(line.encode())
    assert escaped.decode() == escape_line_breaks(line)
    assert json.loads(escaped) == {"comment": text}
    for character in "\u2028\u2029\x85":
        assert character not in escaped.decode()


@pytest.mark.parametrize("piece", [1, 2, 3, 7, 4096])
def test_chunks_are_whole_rows_with_the_breaks_escaped(piece):
    # Whatever pieces the buffer hands over (here cut every `piece` bytes, through rows and
    # through a break's bytes), what goes on is whole rows, escaped as the text writers do.
    rows = [
        json.dumps({"n": n, "c": text}, ensure_ascii=False) + "\n" for n, text in enumerate(TEXTS)
    ]
    data = "".join(rows).encode()
    sent: list[bytes] = []
    raw = _Rows(sent.append)
    for at in range(0, len(data), piece):
        assert raw.write(memoryview(data[at : at + piece])) == len(data[at : at + piece])
    assert all(chunk.endswith(b"\n") for chunk in sent)
    assert b"".join(sent).decode() == "".join(escape_line_breaks(row) for row in rows)


def test_copy_rows_reach_the_chunks_through_a_buffer():
    rows = [
        json.dumps({"n": n, "c": text}, ensure_ascii=False) + "\n" for n, text in enumerate(TEXTS)
    ]
    sent: list[bytes] = []
    with io.BufferedWriter(_Rows(sent.append), 64) as writer:
        for row in rows:  # as COPY writes: once a row
            writer.write(row.encode())
    assert 1 < len(sent) < len(rows)  # gathered, and handed on more than once
    assert b"".join(sent).decode() == "".join(escape_line_breaks(row) for row in rows)
