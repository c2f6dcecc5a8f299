"""The gates' text search: any of many words, whole, as one regular expression factored by prefixes."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from cudalint.python.analyze import _word_pattern


def _plain(words):
    """The same search written word by word: what the factored expression must answer."""
    return re.compile("|".join(r"\b" + re.escape(w) + ("" if w.endswith("_") else r"\b") for w in words))


def test_whole_words_and_prefixes():
    pattern = _word_pattern({"load", "cuda", "cuda_", "NCCL_", "nvidia-smi", "to"})
    assert pattern.search("torch.load(f)") and not pattern.search("download(f)")
    assert pattern.search("x.cuda()") and pattern.search("CUDA_HOME or cuda_home") and not pattern.search("cudaMalloc")
    assert pattern.search("os.environ['NCCL_DEBUG']") and not pattern.search("XNCCL_DEBUG")
    assert pattern.search("run nvidia-smi -L") and not pattern.search("nvidia-smix")
    assert pattern.search("x.to(d)") and not pattern.search("top(d)")
    assert _word_pattern(set()) is None


WORD = st.text(alphabet="ab_-c", min_size=1, max_size=5)


@settings(max_examples=300, deadline=None)
@given(st.sets(WORD, min_size=1, max_size=8), st.text(alphabet="ab_-c .", max_size=30))
def test_the_factored_search_answers_as_the_plain_one(words, text):
    assert bool(_word_pattern(words).search(text)) == bool(_plain(sorted(words, key=len, reverse=True)).search(text))


def test_long_words_of_a_linted_project_build_a_flat_search():
    """The project's words come from the linted code: a 20,000-character identifier is one more word."""
    pattern = _word_pattern({"a" * 20000, "ab" * 3000, "cuda"})
    assert pattern.search("x = " + "a" * 20000) and not pattern.search("a" * 19999 + " cuda_x")
