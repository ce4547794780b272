"""app/core/static_urls.module_graph: the modules a page preloads, read from static imports."""

from __future__ import annotations

from pathlib import Path

from app.core.static_urls import module_graph


def write(root: Path, name: str, text: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_the_graph_follows_static_imports_once_each(tmp_path):
    write(
        tmp_path,
        "page/page.mjs",
        "import { a } from './a.mjs';\n"
        'import {\n  b,\n  c,\n} from "../lib/b.mjs";\n'
        "import './side-effect.mjs';\n"
        "export { d } from './d.mjs';\n"
        "/** @typedef {import('./typedef-only.mjs').T} T */\n"
        "const later = () => import('./on-demand.mjs');\n",
    )
    write(tmp_path, "page/a.mjs", "import { b } from '../lib/b.mjs';\nexport const a = 1;\n")
    write(tmp_path, "lib/b.mjs", "import { a } from '../page/a.mjs';\nexport const b = a;\n")
    write(tmp_path, "page/side-effect.mjs", "document.title = 'x';\n")
    write(tmp_path, "page/d.mjs", "export const d = 4; // not: import x from './e.mjs'\n")

    assert module_graph(tmp_path, "page/page.mjs") == [
        "page/page.mjs",
        "page/a.mjs",
        "lib/b.mjs",
        "page/side-effect.mjs",
        "page/d.mjs",
    ]
