"""A record's body is spelled around its payload's JSON (journal.body_text), and must be the
very text canonical_json gives for the body's dict: the hash chain and every independent
checker (docs/journal.md) depend on it."""
import json

from hypothesis import given, settings, strategies as st

from controller.journal import FORMAT_VERSION, Journal, body_text, canonical_json

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | _text
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(_text, kids, max_size=4),
    max_leaves=10)


@settings(max_examples=400, deadline=None)
@given(seq=st.integers(1, 2**62), wall=st.integers(0, 2**63), mono=st.integers(0, 2**63),
       table=_text, round_id=st.none() | _text, kind=_text, source=st.none() | _text,
       article=st.none() | _text, payload=_json)
def test_the_spliced_body_is_the_canonical_json_of_the_body(seq, wall, mono, table, round_id,
                                                            kind, source, article, payload):
    doc = {"v": FORMAT_VERSION, "seq": seq, "wall_ns": wall, "mono_ns": mono,
           "table_id": table, "round_id": round_id, "kind": kind, "source": source,
           "article": article, "payload": payload}
    spliced = body_text(seq, wall, mono, table, round_id, kind, source, article,
                        canonical_json(payload))
    assert spliced == canonical_json(doc)
    assert json.loads(spliced) == json.loads(canonical_json(doc))


def test_records_with_awkward_text_verify_and_read_back(tmp_path):
    odd = ['quote " and \\ backslash', "tab\t newline\n", "ünïcødé ♠", "\u2028", ""]
    with Journal.open(tmp_path / "j.db", "T-1") as j:
        for i, text in enumerate(odd):
            j.append("decision", {"why": text, "n": [i, 1.5, None]}, round_id=text or None,
                     source=text or None, article=text or None)
        assert j.verify().ok
        back = list(j.records())
    assert [r.payload["why"] for r in back] == odd
    assert [r.article for r in back] == [t or None for t in odd]
