"""The recipe's ``release`` section as plain settings, with its bad values turned into
one-line errors that name the key and the fix.

The JSON Schema checks shapes; what it cannot (ratios that do not sum to one, a split
kind with a split it needs missing) is checked here, before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from answerable.kernel.errors import ConfigError
from answerable.release.cut.dialects import DialectSettings, dialect_settings

SPLIT_KINDS = ("question", "query", "database", "source", "none")
CHECKS = ("same_question", "near_question", "same_sql", "same_skeleton", "same_database", "family")
SEVERITIES = ("error", "warn", "off")

# What each split kind promises, checked as an error unless the recipe says otherwise.
DEFAULT_SEVERITY = {
    "question": {
        "same_question": "error",
        "near_question": "warn",
        "same_sql": "warn",
        "family": "error",
    },
    "query": {
        "same_question": "error",
        "near_question": "warn",
        "same_sql": "error",
        "same_skeleton": "error",
        "family": "error",
    },
    "database": {
        "same_question": "error",
        "near_question": "warn",
        "same_database": "error",
        "family": "error",
    },
    "source": {"same_question": "warn", "family": "error"},
    "none": {},
}
TEST_SPLIT = "test"


@dataclass
class SampleConfig:
    """Stratified sampling: per-stratum quotas by per-item hash."""

    strata: list[str]
    count: int | None = None
    share: float | None = None
    minimum: int = 0
    per_answerable_test: dict[str, float] = field(default_factory=dict)


@dataclass
class SplitConfig:
    """How items are put into splits."""

    kind: str = "none"
    ratios: dict[str, float] = field(default_factory=lambda: {TEST_SPLIT: 1.0})
    test_only: list[str] = field(default_factory=list)


@dataclass
class ReleaseConfig:
    """The ``release`` section, defaults filled in."""

    formats: tuple[str, ...] = ("parquet", "jsonl")
    sample: SampleConfig | None = None
    split: SplitConfig = field(default_factory=SplitConfig)
    severity: dict[str, str] = field(default_factory=dict)
    near_threshold: float = 0.8
    debias: str | None = None  # "aflite": see answerable.release.cut.debias
    debias_max_share: float = 0.1  # the share of the pool the filter may drop at most
    max_shortcut_gain: float | None = None  # refuse a release whose audit gains more
    dialects: DialectSettings = field(default_factory=DialectSettings)  # release/cut/dialects.py
    resplit: bool = False  # released items may move (with a higher major version)
    variants: str = "delta"  # or "full": whole copies of edited variants ship too
    previous: Path | None = None  # earlier releases to keep splits of (default: in out)
    profile: str | None = None  # the scoring profile `answerable evaluate` uses by default
    file: str = "recipe"

    def error(self, key: str, problem: str, fix: str) -> ConfigError:
        """A one-line error about ``release.<key>``."""
        return ConfigError(self.file, f"release.{key}", problem, fix=fix)


def release_config(section: dict | None, file: str | Path = "recipe") -> ReleaseConfig:
    """Settings from the recipe's ``release`` section (None: every default)."""
    section = section or {}
    config = ReleaseConfig(file=str(file))
    config.formats = tuple(section.get("formats", config.formats))
    config.debias = section.get("debias")
    config.debias_max_share = section.get("debias_max_share", config.debias_max_share)
    config.max_shortcut_gain = section.get("max_shortcut_gain")
    config.profile = section.get("profile")
    config.dialects = dialect_settings(section, config.file)
    config.resplit = bool(section.get("resplit", False))
    config.variants = section.get("variants", config.variants)
    if section.get("previous"):
        config.previous = Path(config.file).parent / Path(section["previous"]).expanduser()
    if "sample" in section:
        config.sample = _sample(section["sample"], config)
    if "split" in section:
        config.split = _split(section["split"], config)
    leakage = dict(section.get("leakage") or {})
    config.near_threshold = leakage.pop("near_threshold", config.near_threshold)
    config.severity = {check: "off" for check in CHECKS}
    config.severity.update(DEFAULT_SEVERITY[config.split.kind])
    config.severity.update(leakage)
    return config


def _sample(section: dict, config: ReleaseConfig) -> SampleConfig:
    sample = SampleConfig(
        strata=list(section.get("strata", [])) + (["db_id"] if section.get("per_database") else []),
        count=section.get("count"),
        share=section.get("share"),
        per_answerable_test=dict(section.get("per_answerable_test") or {}),
    )
    if (sample.count is None) == (sample.share is None) and not sample.per_answerable_test:
        raise config.error(
            "sample", "give one quota per stratum", fix="set either count: N or share: 0.5"
        )
    # an absolute quota is a promise: a stratum short of it fails unless a minimum is lower
    sample.minimum = section.get("minimum", sample.count or 0)
    return sample


def _split(section: dict, config: ReleaseConfig) -> SplitConfig:
    split = SplitConfig(kind=section.get("kind", "question"))
    split.ratios = dict(section.get("ratios") or split.ratios)
    split.test_only = list(section.get("test_only", []))
    total = sum(split.ratios.values())
    if abs(total - 1.0) > 1e-9:
        raise config.error(
            "split.ratios",
            f"the ratios sum to {total:g}, not 1",
            fix="give shares that sum to 1, e.g. {train: 0.6, dev: 0.2, test: 0.2}",
        )
    if split.test_only and TEST_SPLIT not in split.ratios:
        raise config.error(
            "split.test_only",
            f"labels are placed in '{TEST_SPLIT}' but the ratios name no such split",
            fix=f"add {TEST_SPLIT} to split.ratios",
        )
    return split
