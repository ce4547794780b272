"""Request models of the worker API: strict types, no unknown fields, envelope mapping."""

from __future__ import annotations

import pytest

from app.annotate.schemas import AnnotationIn, PositionIn, SubmitIn, canonical_uuid, parse_body
from app.core.errors import ApiError

ID = "3f2b8c1e-5d4a-4f7e-9b1c-2a6d8e0f4b3c"
SPAN = {"paragraph_id": 0, "start": 1, "end": 4, "text": "abc"}


def test_canonical_uuid():
    assert canonical_uuid(ID) == ID
    assert canonical_uuid(ID.upper()) == ID
    assert canonical_uuid(ID.replace("-", "")) is None
    assert canonical_uuid("{" + ID + "}") is None
    assert canonical_uuid(ID + "\n") is None


def test_valid_annotation_and_defaults():
    data = parse_body(AnnotationIn, {"id": ID.upper(), "category": "x", "span": SPAN})
    assert data.id == ID
    assert data.paired_span is None
    assert data.comment is None
    assert data.span.to_span().text == "abc"


def test_empty_comment_becomes_none_but_spaces_are_kept():
    assert (
        parse_body(AnnotationIn, {"id": ID, "category": "x", "span": SPAN, "comment": ""}).comment
        is None
    )
    kept = parse_body(AnnotationIn, {"id": ID, "category": "x", "span": SPAN, "comment": " a "})
    assert kept.comment == " a "


@pytest.mark.parametrize(
    ("payload", "code", "field"),
    [
        ({"id": ID, "category": "x", "span": SPAN, "admin": True}, "unknown_field", "admin"),
        ({"id": ID, "category": "x"}, "missing_field", "span"),
        (
            {"id": ID, "category": "x", "span": {**SPAN, "start": "1"}},
            "invalid_field",
            "span.start",
        ),
        (
            {"id": ID, "category": "x", "span": {**SPAN, "start": True}},
            "invalid_field",
            "span.start",
        ),
        ({"id": "123", "category": "x", "span": SPAN}, "invalid_field", "id"),
    ],
)
def test_errors_map_to_one_422_envelope(payload, code, field):
    with pytest.raises(ApiError) as caught:
        parse_body(AnnotationIn, payload)
    error = caught.value
    assert (error.status, error.code, error.details["field"]) == (422, code, field)
    assert field in error.message
    assert error.details["errors"][0]["field"] == field


def test_position_and_submit_models():
    assert parse_body(PositionIn, {"paragraph_id": 2}).paragraph_id == 2
    with pytest.raises(ApiError):
        parse_body(PositionIn, {"paragraph_id": 2.0})
    parse_body(SubmitIn, {})
    with pytest.raises(ApiError) as caught:
        parse_body(SubmitIn, {"completion_code": "x"})
    assert caught.value.code == "unknown_field"
