"""ids: the defaults of the seeded generator and of the file hash (issue 18 survivors of
``tests/benchmarks/mutation.py src/answerable/kernel/ids.py``)."""

from __future__ import annotations

import hashlib

from answerable.kernel.ids import rng_for, sha256_file


def test_rng_for_without_a_key_is_the_empty_key():
    """Kills: the default ``key=""`` changed (a step drawn without a key would change
    every output made from it)."""
    assert rng_for(3, "split").random() == rng_for(3, "split", "").random()
    assert rng_for(3, "split").random() != rng_for(3, "split", "x").random()


def test_sha256_file_hashes_every_byte(tmp_path):
    """Kills: a default chunk of ``1 >> 20`` (0: nothing read, the empty hash). Other chunk
    sizes are equivalent mutants: the hash does not depend on how the file is read."""
    data = bytes(range(256)) * 5000  # more than one default chunk
    path = tmp_path / "blob.bin"
    path.write_bytes(data)
    assert sha256_file(path) == hashlib.sha256(data).hexdigest()
    assert sha256_file(path, chunk=7) == hashlib.sha256(data).hexdigest()
