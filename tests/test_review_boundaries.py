"""Only annotation/ talks to Argilla, and only when the Argilla backend is used."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.conftest import REPO

IMPORT = re.compile(r"^\s*(import argilla|from argilla[ .])", re.MULTILINE)


def test_nothing_outside_annotation_imports_argilla():
    offenders = [
        str(path.relative_to(REPO))
        for folder in ("src", "builders", "release", "schemas")
        for path in (REPO / folder).rglob("*.py")
        if IMPORT.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_the_build_does_not_load_the_sdk_for_the_local_backend():
    code = "import sys, answerable.build, answerable.cli; print('argilla' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
