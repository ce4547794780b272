"""The OpenAPI document is merged from app/api_spec/*.yaml and is valid OpenAPI 3.1."""

from __future__ import annotations

import pytest
from openapi_spec_validator import validate

from app.api_spec import SpecError, build_spec, merge_specs


def test_merged_spec_is_valid_openapi_31():
    spec = build_spec()
    assert spec["openapi"] == "3.1.0"
    validate(spec)
    assert "/api/sessions/{token}/annotations" in spec["paths"]


def test_every_yaml_file_in_the_folder_is_merged(tmp_path):
    (tmp_path / "openapi.yaml").write_text(
        "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths: {}\n", encoding="utf-8"
    )
    (tmp_path / "validators.yaml").write_text(
        "paths:\n  /api/validators/{token}/next:\n    get:\n"
        "      parameters: [{name: token, in: path, required: true, schema: {type: string}}]\n"
        "      responses:\n"
        "        '200': {description: ok}\n"
        "components:\n  schemas:\n    Item: {type: object}\n",
        encoding="utf-8",
    )
    spec = build_spec(tmp_path)
    assert list(spec["paths"]) == ["/api/validators/{token}/next"]
    assert spec["components"]["schemas"] == {"Item": {"type": "object"}}
    validate(spec)


def test_a_path_defined_twice_is_refused():
    part = {"paths": {"/api/x": {}}}
    with pytest.raises(SpecError, match="/api/x"):
        merge_specs({"paths": {}}, [("a.yaml", part), ("b.yaml", part)])


def test_build_returns_a_copy():
    build_spec()["paths"].clear()
    assert build_spec()["paths"]
