"""The protobuf text-format reader and writer, without a schema."""
import math

import pytest

from designer.exchange.caffe.textformat import Enum, Message, TextFormatError, dumps, parse
from tests.exchange.conftest import DATA


def test_the_grammar_protobuf_allows():
    m = parse('name: "a" "b"  # joined strings\n'
              'layer { top: "x" top: "y"; }\n'
              "shape < dim: [1, 2, -3] >\n"
              "ratio: 0.5 small: 1e-3 big: 2.5f hex: 0x1F neg: -4 inf: -inf\n"
              "engine: CUDNN flag: True\n"
              "empty {}\n")
    assert m.get("name") == "ab"
    assert m.message("layer").all("top") == ["x", "y"]
    assert m.message("shape").all("dim") == [1, 2, -3]
    assert (m.get("ratio"), m.get("small"), m.get("big"), m.get("hex"), m.get("neg")) == \
        (0.5, 1e-3, 2.5, 31, -4)
    assert m.get("inf") == -math.inf
    assert isinstance(m.get("engine"), Enum) and m.get("engine") == "CUDNN"
    assert m.message("empty") == Message(line=6)


def test_escapes_and_unicode_survive_a_round_trip():
    m = Message().add("text", 'say "hi"\n\\ é').add("n", 3).add("x", 0.1).add("b", False)
    assert parse(dumps(m)).get("text") == 'say "hi"\n\\ é'
    again = parse(dumps(m))
    assert [again.get(k) for k in ("n", "x")] == [3, 0.1]
    assert again.get("b") == Enum("False")  # without a schema, booleans read as identifiers


def test_hash_at_lines_are_fields_here_and_comments_elsewhere():
    text = 'layer {\n   name: "l"\n   #@ rnn_designer { type: "LSTM" num_output: 8 }\n}\n'
    layer = parse(text).message("layer")
    assert layer.message("rnn_designer").get("num_output") == 8
    plain = "\n".join(line for line in text.splitlines() if "#@" not in line)
    assert parse(plain).message("layer").message("rnn_designer") is None
    m = Message().add("name", "l").add("rnn_designer", Message().add("type", "GRU"),
                                       hidden=True)
    assert '#@ rnn_designer { type: "GRU" }' in dumps(m)


@pytest.mark.parametrize("text, where, what", [
    ("layer {\n  name: \"a\"\n", "line 3", "'}' is missing"),
    ("a: 1\nb 2\n", "line 2", "expected ':' or '{'"),
    ("a: }\n", "line 1, column 4", "expected a value"),
    ('a: "unterminated\n', "line 1, column 4", "unexpected character"),
    ("a: 1 } \n", "line 1, column 6", "expected a field name"),
])
def test_broken_text_names_the_line_and_column(text, where, what):
    with pytest.raises(TextFormatError) as e:
        parse(text)
    assert where in str(e.value) and what in str(e.value)


def test_mycaffe_files_read_and_write_back_the_same():
    for path in sorted(DATA.glob("*.prototxt")):
        m = parse(path.read_text())
        assert parse(dumps(m)) == parse(dumps(parse(dumps(m))))
        assert [f.name for f in m.fields] == [f.name for f in parse(dumps(m)).fields]


def test_the_writer_lays_out_like_mycaffe():
    m = Message().add("layer", Message().add("name", "ip").add("bias_term", True))
    assert dumps(m) == 'layer \n{\n   name: "ip"\n   bias_term: True\n}\n'
