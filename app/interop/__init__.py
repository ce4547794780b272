"""Exchange formats with the research ecosystem, as pure functions on plain data (issue 33).

No app, no database, no files opened by the rules: each module turns export records
(plain dicts in the annotation export record's shape, app.exports.record.FIELDS) and a
document's paragraphs (a list of str) into another format's text, or such text back
into records; the commands and downloads that read the database and write the files
live elsewhere and call these. docs/interop.md shows one example of each format.

- ``anchoring``: a document's text as the formats see it (paragraphs joined by a blank
  line), offsets between that text and a paragraph, and finding a quoted span.
- ``pseudonyms``: the keyed hash that replaces worker, session and validator ids.
- ``records``: the record the readers give back, and the problems they refuse.
- ``w3c``: W3C Web Annotation (JSON Lines), both ways.
- ``brat``: brat standoff (``.txt`` + ``.ann``, ``annotation.conf``), both ways.
- ``dataset_card``: the Hugging Face dataset folder's card (README.md) and data files.
- ``payments``: who to approve, review, screen out or return, and the bonus sheets for
  Prolific and MTurk.
"""
