"""The protobuf text format (prototxt), read and written without a schema.

Caffe and MyCaffe keep nets and solvers in this format. The parser is a tokenizer and a
recursive-descent reader of the grammar (``name: value``, ``name { ... }``, ``name < ... >``,
lists in brackets, adjacent strings joined, ``#`` comments, optional ``;`` or ``,`` separators),
so any file protobuf's own ``text_format`` reads is read here too, whatever fields it holds: the
meaning of the fields is left to :mod:`designer.exchange.caffe.importer`.

A line starting with ``#@`` is rnn-designer's extension: Caffe and MyCaffe skip it as a comment,
this parser reads it as ordinary fields. The exporter keeps there what Caffe cannot express (the
data source, exact parameters), so a file it wrote comes back exactly.
"""
from __future__ import annotations

import codecs
import math
import re
from dataclasses import dataclass, field


class TextFormatError(Exception):
    """A prototxt that cannot be read; ``str()`` names the line and column."""

    def __init__(self, message: str, line: int, column: int):
        super().__init__(f"line {line}, column {column}: {message}")
        self.line, self.column = line, column


class Enum(str):
    """A bare identifier value (an enum such as ``CUDNN``, or ``true``)."""


@dataclass
class Field:
    name: str
    value: object  # str, Enum, int, float or Message
    line: int = 0
    hidden: bool = False  # written as a ``#@`` line


@dataclass
class Message:
    """An ordered list of fields; a name may repeat (a repeated field)."""

    fields: list = field(default_factory=list)
    line: int = 0

    # ---------------------------------------------------------------------- reading --
    def all(self, name: str) -> list:
        return [f.value for f in self.fields if f.name == name]

    def has(self, name: str) -> bool:
        return any(f.name == name for f in self.fields)

    def get(self, name: str, default=None):
        """The last value of ``name`` (protobuf's rule for a repeated scalar read once)."""
        for f in reversed(self.fields):
            if f.name == name:
                return f.value
        return default

    def message(self, name: str) -> "Message | None":
        value = self.get(name)
        return value if isinstance(value, Message) else None

    def names(self) -> list[str]:
        return list(dict.fromkeys(f.name for f in self.fields))

    # ---------------------------------------------------------------------- writing --
    def add(self, name: str, value, hidden: bool = False) -> "Message":
        """Append a field; returns ``self`` so calls chain."""
        self.fields.append(Field(name, value, hidden=hidden))
        return self


_TOKEN = re.compile(r"""
    (?P<space>[ \t\r\f\v]+|\n)
  | (?P<extension>\#@)
  | (?P<comment>\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<number>-?(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fF]?)(?![\w.]))
  | (?P<ident>-?[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<symbol>[{}<>\[\]:;,])
""", re.VERBOSE)


@dataclass
class _Token:
    kind: str
    text: str
    line: int
    column: int


def _tokens(text: str) -> list[_Token]:
    out, line, start, pos = [], 1, 0, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise TextFormatError(f"unexpected character {text[pos]!r}", line, pos - start + 1)
        kind = m.lastgroup
        if kind == "space" and m.group() == "\n":
            line, start = line + 1, m.end()
        elif kind not in ("space", "comment", "extension"):
            out.append(_Token(kind, m.group(), line, pos - start + 1))
        pos = m.end()
    out.append(_Token("end", "", line, pos - start + 1))
    return out


class _Reader:
    def __init__(self, tokens: list[_Token]):
        self.tokens, self.i = tokens, 0

    def peek(self) -> _Token:
        return self.tokens[self.i]

    def take(self) -> _Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def fail(self, message: str, tok: _Token | None = None):
        tok = tok or self.peek()
        raise TextFormatError(message, tok.line, tok.column)

    def accept(self, symbol: str) -> bool:
        tok = self.peek()
        if tok.kind == "symbol" and tok.text == symbol:
            self.i += 1
            return True
        return False

    def message(self, close: str | None, line: int = 0) -> Message:
        msg = Message(line=line)
        while True:
            tok = self.peek()
            if close is None and tok.kind == "end":
                return msg
            if close is not None and self.accept(close):
                return msg
            if tok.kind == "end":
                self.fail(f"the file ends inside a block opened on line {line} "
                          f"(a '{close}' is missing)")
            if tok.kind != "ident" or tok.text.startswith("-"):
                what = f"'{tok.text}'" if tok.text else "the end"
                self.fail(f"expected a field name, found {what}")
            self.take()
            colon = self.accept(":")
            nxt = self.peek()
            if nxt.kind == "symbol" and nxt.text in "{<":
                self.take()
                value = self.message("}" if nxt.text == "{" else ">", nxt.line)
                msg.fields.append(Field(tok.text, value, tok.line))
            elif not colon:
                self.fail(f"expected ':' or '{{' after '{tok.text}'")
            elif self.accept("["):
                if not self.accept("]"):
                    while True:
                        msg.fields.append(Field(tok.text, self.scalar(), tok.line))
                        if self.accept("]"):
                            break
                        if not self.accept(","):
                            self.fail("expected ',' or ']' in a list")
            else:
                msg.fields.append(Field(tok.text, self.scalar(), tok.line))
            self.accept(";") or self.accept(",")

    def scalar(self):
        tok = self.take()
        if tok.kind == "string":
            parts = [_unquote(tok, self)]
            while self.peek().kind == "string":  # "a" "b" is "ab"
                parts.append(_unquote(self.take(), self))
            return "".join(parts)
        if tok.kind == "number":
            return _number(tok.text)
        if tok.kind == "ident":
            low = tok.text.lower().lstrip("-")
            if low in ("inf", "infinity", "nan"):
                value = math.nan if low == "nan" else math.inf
                return -value if tok.text.startswith("-") else value
            if tok.text.startswith("-"):
                self.fail(f"'{tok.text}' is not a value", tok)
            return Enum(tok.text)
        what = f"'{tok.text}'" if tok.text else "the end of the file"
        self.fail(f"expected a value, found {what}", tok)


def _number(text: str):
    body = text.rstrip("fF") if not text.lower().startswith(("0x", "-0x")) else text
    if re.fullmatch(r"-?0[xX][0-9a-fA-F]+", body):
        return int(body, 16)
    if re.fullmatch(r"-?\d+", body):
        return int(body)
    return float(body)


def _unquote(tok: _Token, reader: _Reader) -> str:
    body = tok.text[1:-1]
    if "\\" not in body:
        return body
    try:
        raw = codecs.escape_decode(body.encode("utf-8"))[0]
        return raw.decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        reader.fail("a string holds a broken escape sequence", tok)


def parse(text: str) -> Message:
    """Read prototxt text into a :class:`Message`; raises :class:`TextFormatError`."""
    return _Reader(_tokens(text)).message(None)


# ------------------------------------------------------------------------------ writing --
INDENT = "   "  # MyCaffe writes three spaces, with each brace on its own line


def _scalar_text(value) -> str:
    if isinstance(value, Enum):
        return str(value)
    if isinstance(value, bool):
        return "True" if value else "False"  # what MyCaffe writes; protobuf reads it too
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        text = repr(value)
        return text[:-2] if text.endswith(".0") else text
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return f'"{escaped}"'
    raise TypeError(f"cannot write {value!r} in a prototxt")


def _inline(msg: Message) -> str:
    parts = []
    for f in msg.fields:
        if isinstance(f.value, Message):
            parts.append(f"{f.name} {{ {_inline(f.value)} }}".replace("{  }", "{ }"))
        else:
            parts.append(f"{f.name}: {_scalar_text(f.value)}")
    return " ".join(parts)


def _lines(msg: Message, depth: int) -> list[str]:
    pad = INDENT * depth
    out = []
    for f in msg.fields:
        if f.hidden:
            body = _inline(f.value) if isinstance(f.value, Message) else ""
            text = f"{f.name} {{ {body} }}" if isinstance(f.value, Message) else \
                f"{f.name}: {_scalar_text(f.value)}"
            out.append(f"{pad}#@ {text}")
        elif isinstance(f.value, Message):
            out += [f"{pad}{f.name} ", f"{pad}{{"] + _lines(f.value, depth + 1) + [f"{pad}}}"]
        else:
            out.append(f"{pad}{f.name}: {_scalar_text(f.value)}")
    return out


def dumps(msg: Message) -> str:
    """Prototxt text for ``msg``, laid out the way MyCaffe writes its files."""
    return "\n".join(_lines(msg, 0)) + "\n"
