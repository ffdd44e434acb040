"""mkdocs-gen-files script: writes the generated reference pages into the site."""

import sys
from pathlib import Path

import mkdocs_gen_files

sys.path.insert(0, str(Path(__file__).resolve().parent))

from docs_pages import PAGES

for path, page in PAGES.items():
    with mkdocs_gen_files.open(path, "w") as out:
        out.write(page())
    mkdocs_gen_files.set_edit_path(path, "tools/docs_pages.py")
