"""The core install, measured and tried: the wheel alone in a fresh virtual environment.

``python tests/benchmarks/core_install.py [RELEASE]`` builds the project's wheel and sdist
(``python -m build``), gathers the wheels of the core dependencies in a local folder (the
network's part, not timed), then times a fresh virtual environment plus
``pip install --no-index`` of the wheel with no extra, and measures what the install added
to the environment's folder. With a RELEASE folder, that environment's ``answerable``
then runs ``verify --execute`` and ``evaluate --reference gold`` on it: reading and scoring
must work with the core alone. The last line is exactly
``core_install_seconds=<s> core_install_mb=<m>``. ``bench_release.py`` prints the same line.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def folder_mb(folder: Path) -> float:
    """The bytes of every file under ``folder``, in MB (2**20)."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


def run(*args: str | Path) -> None:
    """A command that must succeed; its output is kept back unless it fails."""
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, args))} failed:\n{done.stdout}{done.stderr}")


def built_wheel(out: Path) -> Path:
    """The project's wheel (and sdist) built into ``out`` by ``python -m build``."""
    run(sys.executable, "-m", "build", "--outdir", out, REPO)
    return next(out.glob("answerable-*.whl"))


def core_venv(folder: Path) -> tuple[Path, float, float]:
    """A fresh virtual environment at ``folder/venv`` with the core install:
    ``(its bin folder, seconds of venv plus install, MB the install added)``."""
    wheel = built_wheel(folder / "dist")
    cache = folder / "wheels"
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", cache, wheel)
    venv = folder / "venv"
    started = time.perf_counter()
    run(sys.executable, "-m", "venv", venv)
    bare = folder_mb(venv)
    run(venv / "bin" / "pip", "install", "--quiet", "--no-index", "--find-links", cache, wheel)
    seconds = time.perf_counter() - started
    return venv / "bin", seconds, folder_mb(venv) - bare


def core_install_line() -> str:
    """``core_install_seconds=<s> core_install_mb=<m>`` of a fresh core install."""
    with tempfile.TemporaryDirectory() as folder:
        _, seconds, mb = core_venv(Path(folder))
    return f"core_install_seconds={seconds:.1f} core_install_mb={mb:.0f}"


def try_release(bin_folder: Path, release: Path) -> None:
    """The core install's ``answerable`` verifies and scores ``release``."""
    answerable = bin_folder / "answerable"
    run(answerable, "verify", "--execute", release)
    run(answerable, "evaluate", release, "--reference", "gold", "--resamples", "100")
    print(f"core install: verify --execute and evaluate ran on {release}", file=sys.stderr)


def main(argv: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        bin_folder, seconds, mb = core_venv(Path(folder))
        if argv:
            try_release(bin_folder, Path(argv[0]).resolve())
    print(f"core_install_seconds={seconds:.1f} core_install_mb={mb:.0f}")


if __name__ == "__main__":
    main(sys.argv[1:])
