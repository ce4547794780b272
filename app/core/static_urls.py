"""Static file URLs for templates: `static_url(filename)` and `module_preloads(entry, ...)`.

`static_url` gives the same URL as `url_for('static', filename=...)`, built once per
process for each file (and mount point: a deployment under a path prefix has its own
SCRIPT_NAME): building each URL through the router took a tenth of the annotator page's CPU.

`module_preloads` gives the `<link rel="modulepreload">` tags of ES modules and of every
module they import, directly or not, so that the browser fetches a page's whole module
graph at once instead of one import level per round trip. The graph is read from the
modules' static `import ... from './x.mjs'` statements (dynamic `import()` is left out:
it is what loads on demand), once per process: the annotator page has 28 modules, and a
template loop over their names cost a third of its rendering.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from flask import Flask, current_app, request, url_for
from markupsafe import Markup

# A static import or re-export statement, from the start of its line: `import x from
# './a.mjs'`, `import {\n  b,\n} from '../lib/b.mjs'`, `export { d } from './d.mjs'`,
# `import './c.mjs'`. Not `import('./x.mjs')` (on demand) nor the words in a comment. Only
# relative specifiers: the modules import nothing else (no build step, no bare names).
_IMPORT = re.compile(
    r"""^[ \t]*(?:import|export)\b[^;'"]*?\bfrom\s*['"](\.\.?/[^'"]+)['"]"""
    r"""|^[ \t]*import\s*['"](\.\.?/[^'"]+)['"]""",
    re.MULTILINE,
)


@lru_cache(maxsize=512)
def _built(script_root: str, filename: str) -> str:
    return url_for("static", filename=filename)


def static_url(filename: str) -> str:
    """The URL of static/<filename> for this request's mount point."""
    return _built(request.script_root, filename)


def module_graph(scripts: Path, entry: str) -> list[str]:
    """`entry` (a path under `scripts`, e.g. `annotator/annotator.mjs`) and every module
    it imports statically, directly or not, each once, in the order first reached."""
    found: dict[str, None] = {}
    root = scripts.resolve()

    def visit(name: str) -> None:
        if name in found:
            return
        found[name] = None
        path = root / name
        for match in _IMPORT.finditer(path.read_text(encoding="utf-8")):
            specifier = match.group(1) or match.group(2)
            visit((path.parent / specifier).resolve().relative_to(root).as_posix())

    visit(entry)
    return list(found)


@lru_cache(maxsize=64)
def _preloads(script_root: str, entries: tuple[str, ...]) -> Markup:
    scripts = Path(current_app.static_folder or "static") / "js"
    modules = dict.fromkeys(name for entry in entries for name in module_graph(scripts, entry))
    link = Markup('<link rel="modulepreload" href="{}">')
    return Markup("\n  ").join(link.format(_built(script_root, f"js/{name}")) for name in modules)


def module_preloads(*entries: str) -> Markup:
    """The modulepreload links of these modules (paths under static/js/) and of all they
    import, for this request's mount point."""
    return _preloads(request.script_root, entries)


def init_app(app: Flask) -> None:
    """Make `static_url` and `module_preloads` template globals."""
    app.add_template_global(static_url)
    app.add_template_global(module_preloads)
