"""MkDocs hook: adds the reference pages that `tcir.tools.reference_docs`
generates from the code (dialects, passes, mapping options, tools)."""

from __future__ import annotations

from mkdocs.structure.files import File, Files


def on_files(files: Files, config) -> Files:  # noqa: ANN001  (MkDocs' config object)
    from tcir.tools.reference_docs import PAGES

    for path, write in PAGES.items():
        files.append(File.generated(config, path, content=write()))
    return files
