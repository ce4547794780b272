"""One home for file readers: everything the app reads from a file, and where it goes.

Pure readers (no app, no database), one per kind of file, each telling formats apart by
content: `document_formats` (documents: FALTE JSON, JSON Lines, plain text, a folder;
`falte_markup` strips FALTE's entity marks), `annotation_formats` (annotations made
elsewhere: our JSONL export, BooookScore's human files, FALTE's `annotation_v2` dump) and
`item_formats` (span items: validation items and model suggestions), with `locate`, which
finds a quoted span's offsets in its document. The stores write what the readers give
back, all or nothing: `document_store` (`flask import-documents`) and `annotation_store`
(`flask import-annotations`). `cli` holds both commands.

Validation and suggestions read their files through this package; neither imports the
other (docs/architecture.md).
"""
