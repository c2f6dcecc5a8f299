"""The gates' words, stored beside the result cache so a run need not build the libcst engine to know them.

The words a file must contain to reach the engine come from the rule handlers (matchers and
idioms, which need libcst): computing them costs more than linting a small clean file. They
are small, so they are kept as JSON in the project's `.cudalint_cache/`, one entry per
selection and torch release, holding the key they were computed under: cudalint's version
and modules, the catalog and every data file in rules/, the selection and the release. A
changed input is a different key, so a stale entry is a miss and is overwritten. Reads and
writes follow the result cache's rules (cache.py): a folder that leads outside the project is
not used, an entry is read only if it is a regular file of bounded size, any failure means
"no entry", and a folder that cannot be written only means the words are computed again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import cudalint
from cudalint.cache import (
    CACHE_DIR,
    _code_fingerprint,
    _data_fingerprint,
    prepare_folder,
)
from cudalint.catalog import Catalog, CatalogError, rules_dir
from cudalint.digests import sha256
from cudalint.fileio import inside, read_regular, replace_file
from cudalint.python.analyze import Words
from cudalint.python.call_gate import CallGate

FORMAT = 8  # 3: a method word read only where it is called is in both the rooted and resolved maps; 4: import words;
# 5: methods any call of which counts (`called`); 6: words whose calls are judged by their arguments (`argued`);
# 7: words that begin a string apart from words anywhere in one (`texts`); 8: words with companions
ENTRY_MAX_BYTES = 4 * 1024 * 1024


class GateCache:
    """The gate-word entries of one project's cache folder, for one catalog."""

    def __init__(self, root: Path, catalog: Catalog):
        self.root = Path(root)
        self.folder = self.root / CACHE_DIR
        self.usable = not (os.path.lexists(self.folder) and not inside(self.root, self.folder))
        self._inputs: str | None = None
        self.catalog = catalog

    def _entry(self, codes: frozenset[str], release: tuple[int, ...]) -> Path:
        name = sha256(json.dumps([sorted(codes), list(release)]).encode()).hexdigest()[:32]
        return self.folder / f"gates-{name}.data"  # JSON; not *.json, the result entries

    def _key(self, codes: frozenset[str], release: tuple[int, ...]) -> str:
        if self._inputs is None:
            try:
                folder: str | None = str(rules_dir())
            except CatalogError:
                folder = None
            parts = [FORMAT, cudalint.__version__, _code_fingerprint(), _data_fingerprint(folder), self.catalog.version]
            self._inputs = json.dumps(parts)
        return sha256(json.dumps([self._inputs, sorted(codes), list(release)]).encode()).hexdigest()

    def get(self, codes: frozenset[str], release: tuple[int, ...]) -> Words | None:
        if not self.usable:
            return None
        try:
            entry = json.loads(read_regular(self._entry(codes, release), ENTRY_MAX_BYTES).decode("utf-8"))
            if entry["key"] != self._key(codes, release):
                return None
            words = tuple(frozenset(entry[part]) for part in ("names", "strings", "texts", "keywords"))
            rooted, resolved, imports, companions = ({word: frozenset(roots) for word, roots in entry[part].items()}
                                                     for part in ("rooted", "resolved", "imports", "companions"))
            called = frozenset(entry["called"])
            if not all(isinstance(word, str) for part in (*words, *rooted.values(), *resolved.values(), *imports.values(), called,
                                                          *companions.values(), companions)
                       for word in part):
                return None
            argued = entry["argued"]
            CallGate(argued).check()  # an entry whose judges cannot be built, or would take too long, is a miss
            return (*words, rooted, resolved, imports, called, argued, companions)  # type: ignore[return-value]
        except Exception:  # noqa: BLE001 - whatever is wrong with an entry, it is a miss
            return None

    def put(self, codes: frozenset[str], release: tuple[int, ...], words: Words) -> None:
        if not self.usable:
            return
        names, strings, texts, keywords, rooted, resolved, imports, called, argued, companions = words
        entry = {"key": self._key(codes, release), "names": sorted(names), "strings": sorted(strings), "texts": sorted(texts),
                 "keywords": sorted(keywords),
                 "rooted": {word: sorted(roots) for word, roots in sorted(rooted.items())},
                 "resolved": {word: sorted(roots) for word, roots in sorted(resolved.items())},
                 "imports": {word: sorted(roots) for word, roots in sorted(imports.items())}, "called": sorted(called),
                 "argued": {word: argued[word] for word in sorted(argued)},
                 "companions": {word: sorted(wanted) for word, wanted in sorted(companions.items())}}
        try:
            prepare_folder(self.folder)
            replace_file(self._entry(codes, release), json.dumps(entry).encode(), self.root, follow_links=False)
        except (OSError, ValueError):
            self.usable = False  # a read-only checkout: compute the words each run
