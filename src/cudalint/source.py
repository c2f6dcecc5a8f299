"""Reading a source file into text the way CPython would, or saying exactly why not."""

from __future__ import annotations

from collections import namedtuple


class SourceText(namedtuple("SourceText", "text error error_line error_column encoding", defaults=(None, 1, 1, "utf-8"))):
    """A file's decoded text (None when it could not be decoded), else why (error, a str) and where
    (1-based ints); the encoding it was read with. (A namedtuple: made at every start; see findings.py.)"""

    __slots__ = ()


def decode_python(data: bytes) -> SourceText:
    """Decode with the BOM or PEP 263 cookie, as the interpreter does."""
    if b"\x00" in data:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        return SourceText(None, "binary content (NUL byte); not a Python source file", line)
    first = data.find(b"\n")
    second = -1 if first < 0 else data.find(b"\n", first + 1)
    if b"coding" not in (data if second < 0 else data[:second]):
        # No cookie can be declared (PEP 263 looks at the first two lines only): UTF-8, as the
        # interpreter reads it. Only a file that does not decode takes tokenize's path below, for
        # the interpreter's own message.
        plain = decode_text(data)
        if plain.text is not None:
            return plain
    import io
    import tokenize  # its import compiles a dozen patterns: paid only for a file with a cookie

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        return SourceText(None, f"bad encoding declaration: {exc.msg}", exc.lineno or 1)
    return decode_text(data, encoding)


def decode_text(data: bytes, encoding: str = "utf-8") -> SourceText:
    if encoding == "utf-8" and data.startswith(b"\xef\xbb\xbf"):
        encoding = "utf-8-sig"
    try:
        return SourceText(data.decode(encoding), encoding=encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        return SourceText(None, f"cannot decode byte {data[exc.start]:#04x} as {encoding}", line, column)
    except LookupError:
        return SourceText(None, f"unknown encoding {encoding!r}")
