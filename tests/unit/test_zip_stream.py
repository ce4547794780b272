"""zip_stream (issue 31, point 3): a zip written as its files come, in pieces, never whole;
the archive is valid and holds every file as given, under its top folder."""

from __future__ import annotations

import io
import random
import zipfile

from app.research import interop_files
from app.research.interop_files import zip_bytes, zip_stream


def test_the_first_piece_leaves_before_the_last_file_is_made(monkeypatch):
    monkeypatch.setattr(interop_files, "CHUNK", 4096)
    rng = random.Random(3)
    made: list[str] = []
    texts = {f"doc-{i}.txt": "".join(rng.choice("abcdefgh \n") for _ in range(5000))
             for i in range(40)}  # fmt: skip

    def files():
        for name, text in texts.items():
            made.append(name)
            yield name, (text[i : i + 100] for i in range(0, len(text), 100))

    pieces = zip_stream(files(), "top")
    first = next(pieces)
    assert first.startswith(b"PK\x03\x04") and len(made) < len(texts)
    data = first + b"".join(pieces)
    assert len(made) == len(texts)
    archive = zipfile.ZipFile(io.BytesIO(data))
    assert archive.testzip() is None
    assert archive.namelist() == [f"top/{name}" for name in texts]  # in the order given
    for name, text in texts.items():
        assert archive.read(f"top/{name}").decode("utf-8") == text


def test_zip_bytes_is_the_stream_joined_sorted_by_path():
    files = {"b/x.ann": "T1\tx 0 1\ta\n", "a.txt": "é\r\n", "empty.ann": ""}
    archive = zipfile.ZipFile(io.BytesIO(zip_bytes(files, "f")))
    assert archive.namelist() == ["f/a.txt", "f/b/x.ann", "f/empty.ann"]
    assert {name: archive.read(name) for name in archive.namelist()} == {
        f"f/{path}": text.encode("utf-8") for path, text in files.items()
    }
