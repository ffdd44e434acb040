"""Cutting a release: the guards, sampling, splits, debiasing, the shortcut audit,
the typed data files, the databases shipped and the manifest."""
