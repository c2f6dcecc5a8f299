"""SHA-256 for cache keys, fingerprints and content digests, without loading OpenSSL.

`hashlib` imports `_hashlib`, which loads OpenSSL: about 2.5 ms of every start, more than the
rest of hashlib. CPython builds its own SHA-256 in (`_sha256` through 3.11, `_sha2` from 3.12);
its digests are the same bytes, and the data a run hashes (source files, short keys) is small
enough that OpenSSL's faster loop would not pay for its loading. hashlib is the fallback where
the built-in module is missing.
"""

from __future__ import annotations

try:
    from _sha2 import sha256  # CPython >= 3.12
except ImportError:  # pragma: no cover - depends on the interpreter
    try:
        from _sha256 import sha256  # CPython <= 3.11
    except ImportError:
        from hashlib import sha256

__all__ = ["sha256"]
