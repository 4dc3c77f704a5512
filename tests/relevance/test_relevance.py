"""The learned relevance model: the committed artefact, the scorer, the pairs format, the training
command end to end on a tiny fixture, parts of a question, and the embedding-space guard."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from agents.parts import question_parts
from engine.config import shipped_relevance_model
from engine.errors import ConfigError, InputError
from engine.relevance.encoder import OnnxEncoder, file_sha256, read_manifest
from engine.relevance.pairs import passage_split, read_pairs, split_of, train_passages
from engine.relevance.scorer import Head, balanced_accuracy, best_threshold, load_scorer

ANSWERING = ("How long must transaction records be kept?",
             "A firm must retain transaction records for at least six years from the date of the transaction.")
OFF_TOPIC = ("How long must transaction records be kept?",
             "Passwords must be at least twelve characters long and must not be reused across systems.")


def test_committed_model_is_what_its_manifest_says() -> None:
    directory = shipped_relevance_model()
    manifest = read_manifest(directory)
    assert manifest["sha256"] == file_sha256(directory / "model.onnx")
    assert (directory / "model.onnx").stat().st_size <= 25 * 1024 * 1024
    scorer = load_scorer(directory)
    assert scorer.sha256 and 0.0 < scorer.thresholds["gate"] < 1.0


def test_committed_model_scores_an_answer_above_an_off_topic_text(embedder) -> None:
    from engine.relevance.model import RelevanceModel

    model = RelevanceModel.for_embedder(shipped_relevance_model(), embedder)
    answering, off_topic = (model.pair_probabilities(q, [t])[0] for q, t in (ANSWERING, OFF_TOPIC))
    assert answering > off_topic + 0.2, (answering, off_topic)
    vectors = OnnxEncoder(shipped_relevance_model()).encode([ANSWERING[1], ANSWERING[1] + " "])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5) and float(vectors[0] @ vectors[1]) > 0.999


NEIGHBOURS = [[OFF_TOPIC[1] * 5, "{}", "Short."], ["{}", ANSWERING[0]], ["Short.", OFF_TOPIC[1], "{}", "{}"]]


def test_a_texts_vectors_do_not_depend_on_what_it_is_embedded_with() -> None:
    # the int8 graph quantizes activations over its whole input: batched, a chunk's stored vector moved with
    # its neighbours (cosine 0.994), so re-ingesting one document changed others' vectors; bitwise, not close
    encoder = OnnxEncoder(shipped_relevance_model())
    text = ANSWERING[1]
    alone, (tokens_alone,) = encoder.encode([text])[0], encoder.token_vectors([text])
    for texts in ([t.format(text) for t in texts] for texts in NEIGHBOURS):
        vectors, tokens = encoder.encode(texts), encoder.token_vectors(texts)
        for i in (i for i, t in enumerate(texts) if t == text):
            assert np.array_equal(vectors[i], alone) and np.array_equal(tokens[i], tokens_alone)


def test_late_interaction_matches_tokens_and_ranks_the_answer_first(embedder) -> None:
    from engine.relevance.encoder import late_interaction
    from engine.relevance.model import RelevanceModel

    encoder = OnnxEncoder(shipped_relevance_model())
    question, answer = encoder.token_vectors([ANSWERING[0], ANSWERING[1]])
    # one normalized vector per token, [CLS]/[SEP] left out: "How long must transaction records be kept?"
    assert question.shape == (8, 384) and np.allclose(np.linalg.norm(question, axis=1), 1.0, atol=1e-5)
    assert late_interaction(question, question) == pytest.approx(1.0, abs=1e-5)
    model = RelevanceModel.for_embedder(shipped_relevance_model(), embedder)
    answering, off_topic = model.late_interactions(ANSWERING[0], [ANSWERING[1], OFF_TOPIC[1]])
    assert answering > off_topic + 0.1, (answering, off_topic)
    assert model.late_interactions(ANSWERING[0], [ANSWERING[1]]) == [answering]  # cached passage: same score
    # the question's token vectors are cached too: asked again, nothing is encoded
    cached = RelevanceModel(model.scorer, _NoTokens(embedder), shares_index=False)
    cached._questions, cached._tokens = model._questions, model._tokens
    assert cached.late_interactions(ANSWERING[0], [ANSWERING[1], OFF_TOPIC[1]]) == [answering, off_topic]
    # in a ranked list (the rank head reads MaxSim): the answer first whatever retrieval's order
    candidates = [{"text": OFF_TOPIC[1], "score": 0.9, "rank": 1, "dense_rank": 1, "lexical_rank": 1},
                  {"text": ANSWERING[1], "score": 0.8, "rank": 2, "dense_rank": 2, "lexical_rank": 2}]
    assert model.late
    low, high = model.rank(ANSWERING[0], candidates)
    assert high > low, (high, low)
    # EVIDENCE_LATE_INTERACTION=false: the pooled rank head, no token vectors computed
    pooled = RelevanceModel(model.scorer, _NoTokens(embedder), shares_index=False, late_interaction=False)
    plain = pooled.rank(ANSWERING[0], candidates)
    assert plain != [low, high] and plain[1] > plain[0], plain


class _NoTokens:
    """An encoder that refuses token vectors (late interaction must not be asked for)."""

    def __init__(self, embedder) -> None:
        self.encode, self.encode_query = embedder.encode, embedder.encode_query

    def token_vectors(self, texts):
        raise AssertionError("late interaction computed with late_interaction=False")


def test_rank_features_carry_late_interaction_only_when_every_candidate_has_it() -> None:
    from engine.relevance.scorer import rank_features

    pairs = [{"coverage": 0.5}, {"coverage": 0.2}]
    rows = [{"score": 1.0, "rank": 1, "maxsim": 0.8}, {"score": 0.5, "rank": 2, "maxsim": 0.6}]
    first, second = rank_features([1.0, 0.0], rows, pairs)
    assert first["maxsim_gap"] == 0.0 and second["maxsim_gap"] == pytest.approx(-0.2)
    assert "maxsim" not in rank_features([1.0, 0.0], [rows[0], {"score": 0.5}], pairs)[0]


def test_head_fit_separates_and_thresholds_for_balanced_accuracy() -> None:
    rows = [{"x": float(i), "y": float(i % 3)} for i in range(40)]
    labels = [int(i >= 20) for i in range(40)]
    head = Head.fit(rows, labels, ("x", "y"))
    probs = 1 / (1 + np.exp(-head.logits(rows)))
    threshold, accuracy = best_threshold(labels, list(probs))
    assert accuracy == 1.0 and balanced_accuracy(labels, [p >= threshold for p in probs]) == 1.0
    assert Head.fit(rows, labels, ("x", "y")) == head  # deterministic


@pytest.mark.parametrize(("line", "message"), [
    ('{"question": "q", "passage": "p"}', "label"),
    ('{"question": "q", "passage": "p", "label": 3}', "label"),
    ("not json", "expected"),
], ids=["missing-label", "bad-label", "not-json"])
def test_pairs_file_errors_name_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"question": "q", "passage": "p", "label": 1}\n' + line + "\n")
    with pytest.raises(InputError, match=rf"pairs.jsonl:2: .*{message}"):
        read_pairs(path)


def test_pairs_file_without_positives_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"question": "q", "passage": "p", "label": 0}\n')
    with pytest.raises(InputError, match="no pair with label 1"):
        read_pairs(path)


def test_split_is_stable_and_roughly_proportional() -> None:
    splits = [split_of(f"q{i}") for i in range(2000)]
    assert splits == [split_of(f"q{i}") for i in range(2000)]
    assert 0.55 < splits.count("train") / 2000 < 0.65 and 0.15 < splits.count("heldout") / 2000 < 0.25


def test_a_rows_stated_split_wins_over_the_hash_of_its_question(tmp_path: Path) -> None:
    """bench/obliqa_pairs.py writes each row's split (by passage); training honours it, and a row without one
    falls back to the split by question; a split the format does not know is an error naming the line."""
    rows = [{"question": f"q{i}", "passage": "p", "label": 1, "split": "heldout"} for i in range(50)]
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n" + json.dumps({"question": "q0x", "passage": "p",
                                                                               "label": 1}) + "\n")
    pairs = read_pairs(path)
    assert [p.share() for p in pairs[:50]] == ["heldout"] * 50
    assert pairs[50].share() == split_of("q0x")
    path.write_text(json.dumps({"question": "q", "passage": "p", "label": 1, "split": "test"}) + "\n")
    with pytest.raises(InputError, match=r"pairs.jsonl:1"):
        read_pairs(path)


def _keys_by_split(n: int = 400) -> dict[str, list[str]]:
    """Passage keys ("DocumentID|PassageID") grouped by the share each falls in alone."""
    out: dict[str, list[str]] = {"train": [], "calibrate": [], "heldout": []}
    for i in range(n):
        key = f"{i % 7}|{i}.{i % 3}"
        out[str(passage_split([key]))].append(key)
    return out


def test_passage_split_is_deterministic_and_ignores_order() -> None:
    keys = [f"{i % 5}|{i}" for i in range(40)]
    questions = [keys[i:i + 3] for i in range(0, 40, 3)]
    first = [passage_split(q) for q in questions]
    assert first == [passage_split(list(reversed(q))) for q in questions]
    assert first == [passage_split(q) for q in questions]
    assert train_passages(keys) == train_passages(keys)


@pytest.mark.parametrize(("shares", "evaluate", "train"), [
    (("train",), "train", "train"),
    (("calibrate",), "calibrate", None),
    (("heldout",), "heldout", None),
    (("heldout", "heldout"), "heldout", None),
    (("train", "heldout"), None, "train"),
    (("calibrate", "heldout"), None, None),
    (("train", "calibrate", "heldout"), None, "train"),
], ids=["train", "calibrate", "heldout", "two-heldout", "train+heldout", "calibrate+heldout", "all-three"])
def test_passage_split_roles(shares: tuple[str, ...], evaluate: str | None, train: str | None) -> None:
    pool = _keys_by_split()
    keys = [pool[share][i] for i, share in enumerate(shares)]
    assert passage_split(keys) == evaluate  # role="evaluate" by default
    assert passage_split(keys, role="train") == train
    assert train_passages(keys) == [k for k, share in zip(keys, shares, strict=True) if share == "train"]


def test_passage_split_shares_are_roughly_proportional() -> None:
    pool = _keys_by_split(2000)
    assert 0.55 < len(pool["train"]) / 2000 < 0.65 and 0.15 < len(pool["heldout"]) / 2000 < 0.25


def test_no_evaluated_question_shares_a_passage_with_training() -> None:
    # questions of 1-3 passages drawn from a small pool, so that many passages answer several questions
    keys = [f"{d}|{p}" for d in range(4) for p in range(30)]
    questions = [[keys[(i * 7 + j * 13) % len(keys)] for j in range(1 + i % 3)] for i in range(600)]
    trained = {k for q in questions if passage_split(q, role="train") == "train" for k in train_passages(q)}
    evaluated = [q for q in questions if passage_split(q) in ("calibrate", "heldout")]
    assert trained and evaluated
    assert not any(k in trained for q in evaluated for k in q)
    # and so no evaluated question is a training question either
    assert all(passage_split(q, role="train") is None for q in evaluated)


def _tiny_pairs(path: Path) -> Path:
    topics = [("records", "retain records for six years"), ("breach", "notify a breach within 72 hours"),
              ("complaint", "acknowledge a complaint within five days"), ("password", "use long passwords"),
              ("training", "train staff every year"), ("conflict", "disclose conflicts of interest")]
    rows = []
    for i in range(30):
        topic, duty = topics[i % len(topics)]
        other = topics[(i + 1) % len(topics)][1]
        rows.append({"question_id": f"q{i}", "question": f"What must a firm do about {topic} (case {i})?",
                     "passage": f"A firm must {duty} in case {i}.", "label": 1})
        rows.append({"question_id": f"q{i}", "question": f"What must a firm do about {topic} (case {i})?",
                     "passage": f"A firm must {other} in case {i}.", "label": 0})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.slow
def test_training_command_runs_end_to_end_on_a_tiny_fixture(tmp_path: Path) -> None:
    from engine.cli.main import app

    pairs = _tiny_pairs(tmp_path / "pairs.jsonl")
    out = tmp_path / "model"
    result = CliRunner().invoke(app, ["relevance", "train", str(pairs), "--out", str(out), "--epochs", "1",
                                      "--batch-size", "4", "--device", "cpu"])
    assert result.exit_code == 0, result.output
    manifest = read_manifest(out)
    assert manifest["sha256"] == file_sha256(out / "model.onnx") and manifest["quantized"] == "int8-dynamic"
    assert manifest["seed"] == 13 and manifest["epochs"] == 1
    scorer = load_scorer(out)
    assert scorer.info["pair_head_pairs"] > 0 and 0.0 <= scorer.thresholds["gate"] <= 1.0
    assert OnnxEncoder(out).encode(["a question"]).shape == (1, 384)


def test_training_command_refuses_a_malformed_pairs_file(tmp_path: Path) -> None:
    from engine.cli.main import app

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"question": "q"}\n')
    result = CliRunner().invoke(app, ["relevance", "train", str(pairs), "--out", str(tmp_path / "m")])
    assert result.exit_code == InputError.exit_code
    assert "pairs.jsonl:1" in result.output and not (tmp_path / "m").exists()


@pytest.mark.parametrize(("question", "parts"), [
    ("How long must transaction records be kept, and when must a personal data breach be notified?",
     ["How long must transaction records be kept?", "When must a personal data breach be notified?"]),
    ("Who may act as a trustee? What records must a trustee keep?",
     ["Who may act as a trustee?", "What records must a trustee keep?"]),
    ("What is a personal data breach and when must it be notified?",
     ["What is a personal data breach?", "When must it be notified (personal data breach)?"]),
    ("What are the rights and obligations of a trustee?", ["What are the rights and obligations of a trustee?"]),
    ("When assessing suitability, what must a firm document?", ["When assessing suitability, what must a firm "
                                                                 "document?"]),
    ("Must a firm keep records and report them?", ["Must a firm keep records and report them?"]),
    ("What must a custodian meet to be approved, and in the event of a dispute, what procedures should a CSD have?",
     ["What must a custodian meet to be approved?", "In the event of a dispute, what procedures should a CSD have?"]),
    ("What risk does the firm retain, and in what situation might the Regulator bypass consultation?",
     ["What risk does the firm retain?", "In what situation might the Regulator bypass consultation?"]),
    ("What are the consequences of a late return, and - What documents are required for the engagement?",
     ["What are the consequences of a late return?", "What documents are required for the engagement?"]),
    ("Must a firm keep client records, and if so, for how long?",
     ["Must a firm keep client records, and if so, for how long?"]),
    ("How are assets held in trust, and in particular cash and securities?",
     ["How are assets held in trust, and in particular cash and securities?"]),
    ("What criteria apply to disclosures, and regarding climate-related risks, what policies does the FSRA expect?",
     ["What criteria apply to disclosures?", "Regarding climate-related risks, what policies does the FSRA expect?"]),
    # a control catalogue, a US regulation, a policy beside its regulation: what the pronoun stands for ends the
    # first part; "those tests" is completed too; "by when" opens a second question, "by" alone does not
    ("Do we need to keep a register of our managed services, and what does it have to list for each one?",
     ["Do we need to keep a register of our managed services?",
      "What does it have to list for each one (keep register managed services)?"]),
    ("Do we have to test our contingency plans periodically, and how long must we keep the records of those tests?",
     ["Do we have to test our contingency plans periodically?",
      "How long must we keep the records of those tests (contingency plans periodically)?"]),
    ("When does our first notice of a major incident have to reach the regulator, and by when is the final "
     "write-up due?", ["When does our first notice of a major incident have to reach the regulator?",
                       "By when is the final write-up due?"]),
    ("What must be reported by the firm, and by its auditors?", ["What must be reported by the firm, and by its "
                                                                 "auditors?"]),
    # "that" before a noun after a verb or preposition refers back too; "that" opening a clause does not
    ("Who does a business associate have to tell about a breach, and what must that notice identify?",
     ["Who does a business associate have to tell about a breach?",
      "What must that notice identify (business associate breach)?"]),
    ("How must a firm file its return, and what is the deadline for that return?",
     ["How must a firm file its return?", "What is the deadline for that return (firm file)?"]),
    ("How does the Authority monitor compliance, and what are the consequences for firms that fail to comply?",
     ["How does the Authority monitor compliance?", "What are the consequences for firms that fail to comply?"]),
    ("What does the licence grant, and is it true that we can sell copies?",
     ["What does the licence grant?", "Is it true that we can sell copies (licence grant)?"]),
    # the pronoun refers to the part just before; one late in a question with its own subject refers to nothing
    ("What is a personal data breach? Who must keep an incident register? How often must it be reviewed?",
     ["What is a personal data breach?", "Who must keep an incident register?",
      "How often must it be reviewed (keep incident register)?"]),
    ("What records must a trustee keep, and what are the implications for a firm that operates from a different "
     "jurisdiction when it comes to audits?", ["What records must a trustee keep?", "What are the implications for a "
                                               "firm that operates from a different jurisdiction when it comes to "
                                               "audits?"]),
    # a question word alone asks its own question about what the part before asks of (a policy set, an EU act
    # after a sentence of context, a catalogue)
    ("What security training do our staff have to complete, and how often?",
     ["What security training do our staff have to complete?", "How often (security training staff)?"]),
    ("Our mainframe is out of support. What checks does the regulation expect on it, and how often?",
     ["Our mainframe is out of support. What checks does the regulation expect on it?",
      "How often (checks regulation expect)?"]),
    ("What must the contingency plan cover, and who approves it?",
     ["What must the contingency plan cover?", "Who approves it (contingency plan)?"]),
    ("Who signs off the system security plan, and when?",
     ["Who signs off the system security plan?", "When (signs system security plan)?"]),
    ("Who is the Data Protection Officer required to notify about a breach, and how fast?",  # the sample corpus
     ["Who is the Data Protection Officer required to notify about a breach?",
      "How fast (Data Protection Officer notify breach)?"]),
    # a part with no subject of its own (what is asked of one: a deadline, penalties, exceptions) asks about the
    # part before's; one that names its own subject stays as it is
    ("Do we have to tell the FTC when hackers walk off with unencrypted customer data, and what is the deadline?",
     ["Do we have to tell the FTC when hackers walk off with unencrypted customer data?",
      "What is the deadline (FTC hackers walk unencrypted customer data)?"]),
    ("Must major ICT incidents be reported to the supervisor, and what are the penalties?",
     ["Must major ICT incidents be reported to the supervisor?",
      "What are the penalties (major ICT incidents reported supervisor)?"]),
    ("Do privileged accounts need separate credentials, and are there exceptions?",
     ["Do privileged accounts need separate credentials?",
      "Are there exceptions (privileged accounts separate credentials)?"]),
    ("How long must records be kept, and what is the penalty for late filing?",
     ["How long must records be kept?", "What is the penalty for late filing?"]),
    # a lead-in clause of "according to" or one before "to what extent" (a rulebook, an EU act, a policy)
    ("How must client money be segregated, and according to Part 21, what opportunity is given to an affected "
     "person?", ["How must client money be segregated?",
                 "According to Part 21, what opportunity is given to an affected person?"]),
    ("Must we report major incidents, and in the context of cross-border investigations, to what extent must we "
     "support other authorities?", ["Must we report major incidents?", "In the context of cross-border "
                                    "investigations, to what extent must we support other authorities?"]),
    ("What must the policy cover, and according to the HR procedures, who signs it off?",
     ["What must the policy cover?", "According to the HR procedures, who signs it off (policy)?"]),  # "it": the policy
    ("What rights and obligations does a party have according to the licence?",  # one question
     ["What rights and obligations does a party have according to the licence?"]),
    # "for how long" alone; a part of function words that refers back by a pronoun; "also" inside a question
    # (a federal rule, a Canadian Act, a contract, a mobile checklist)
    ("What breach records must we keep, and for how long?",
     ["What breach records must we keep?", "For how long (breach records keep)?"]),
    ("Can a customer take back their consent, and what do we have to tell them when they do?",
     ["Can a customer take back their consent?", "What do we have to tell them when they do (customer back consent)?"]),
    ("Who pays the withholding tax on the fees, and do we also have to cover the vendor's income tax?",
     ["Who pays the withholding tax on the fees?", "Do we also have to cover the vendor's income tax?"]),
    ("What should the app do on a rooted phone, and does it also have to notice an emulator?",
     ["What should the app do on a rooted phone?", "Does it also have to notice an emulator (app rooted phone)?"]),
    # a part that goes on from the one before, asks it again of something else or refers back by "one", a pro-verb,
    # a possessive or a pronoun that ends it is completed with all of its subject (a federal rule, accessibility
    # guidelines, a Canadian Act, a policy set, an EU directive, a US statute); one that says what it asks of is not
    ("How fast must we notify the government after a breach, and how fast the customers who were affected?",
     ["How fast must we notify the government after a breach?",
      "How fast the customers who were affected (notify government breach)?"]),
    ("How big do clickable targets have to be at AA, and how big for AAA?",
     ["How big do clickable targets have to be at AA?", "How big for AAA (clickable targets AA)?"]),
    ("Is a household contact list caught by the privacy rules, and what about information a newspaper gathers for "
     "its reporting?", ["Is a household contact list caught by the privacy rules?",
                        "What about information a newspaper gathers for its reporting (household contact list caught "
                        "privacy)?"]),
    ("If the breached data was encrypted, do we still have to report it to the FCC, and do customers still have to be "
     "told?", ["If the breached data was encrypted, do we still have to report it to the FCC?",
               "Do customers still have to be told (breached data encrypted report FCC)?"]),
    ("Do I have to back up my own laptop, and if I do, does the backup need to be encrypted?",
     ["Do I have to back up my own laptop?", "If I do, does the backup need to be encrypted (back laptop)?"]),
    ("Does our board have to sign off on the cyber risk measures, and do its members have to be trained?",
     ["Does our board have to sign off on the cyber risk measures?",
      "Do its members have to be trained (board sign cyber risk measures)?"]),
    ("What is the penalty for a serious violation, and what about one that isn't serious?",
     ["What is the penalty for a serious violation?", "What about one that isn't serious (penalty violation)?"]),
    ("What is the highest fine an essential entity can face for breaching the security duties, and what is it for "
     "an important entity?", ["What is the highest fine an essential entity can face for breaching the security "
                              "duties?", "What is it for an important entity (highest fine essential face breaching "
                                         "security)?"]),
    ("Which records must a bank keep, and must an insurer meet the same duties as a bank?",
     ["Which records must a bank keep?", "Must an insurer meet the same duties as a bank?"]),
    ("What must a firm report to the regulator, and how often should an authorised person review its risk policy?",
     ["What must a firm report to the regulator?", "How often should an authorised person review its risk policy?"]),
    ("How long must we keep logs, and can the regulator forego its duties to protect the public?",
     ["How long must we keep logs?", "Can the regulator forego its duties to protect the public?"]),
], ids=["and-when", "two-marks", "pronoun-subject", "coordinated-nouns", "condition", "coordinated-verbs",
        "lead-in-clause", "in-what", "dash", "if-so-continues", "in-particular-continues", "regarding",
        "pronoun-object", "those", "by-when", "by-alone", "that-notice", "that-return", "that-relative",
        "that-clause", "part-before", "late-pronoun", "and-how-often",
        "context-and-how-often", "and-who", "and-when-alone", "and-how-fast",
        "bare-deadline", "bare-penalties", "bare-exceptions",
        "own-subject", "according-to", "to-what-extent", "according-to-who", "according-to-one-question",
        "for-how-long", "function-words-pronoun", "also-inside", "also-inside-pronoun",
        "how-fast-no-verb", "how-big-for", "what-about", "still", "if-i-do", "possessive-first", "one-that",
        "what-is-it-few-terms", "the-same-as-own", "how-often-own-verb", "possessive-after-own-words"])
def test_question_parts(question: str, parts: list[str]) -> None:
    assert question_parts(question) == parts


def test_an_index_of_another_embedder_is_refused_until_reembedded(settings, conn, embedder, tmp_path) -> None:
    from engine.ingest.pipeline import ingest_paths, reembed
    from engine.search import store
    from engine.search.embeddings import check_space
    from engine.search.retrieval import Retriever

    doc = tmp_path / "rule.md"
    doc.write_text("# Rule\n\nA firm must retain transaction records for at least six years.\n")
    ingest_paths(conn, embedder, settings, [doc], source_type="regulation")
    assert store.embedding_space(conn)["sha256"] == embedder.sha256

    class Other:
        identity = {**embedder.identity, "name": "other-model", "sha256": "0" * 64}

    with pytest.raises(ConfigError, match="other-model.*evidence db reembed"):
        check_space(conn, Other())  # type: ignore[arg-type]
    store.clear_embedding_space(conn)
    with pytest.raises(ConfigError, match="before the engine recorded"):
        Retriever(conn, embedder, settings).search("records")
    assert reembed(conn, embedder) == 1
    assert Retriever(conn, embedder, settings).search("How long must records be kept?", k=1)



def test_cosines_are_the_same_encoded_or_from_the_cache(embedder) -> None:
    from engine.relevance.model import RelevanceModel

    def model() -> RelevanceModel:  # a new one: nothing cached
        return RelevanceModel.for_embedder(shipped_relevance_model(), embedder)

    question, (a, b) = ANSWERING[0], (ANSWERING[1], OFF_TOPIC[1])
    warm = model()
    first = warm.cosines(question, [a, b])
    again = warm.cosines(question, [b, "Short.", a])
    assert (again[0], again[2]) == (first[1], first[0]) and first[0] > first[1]
    assert model().cosines(question, [b]) == [first[1]]
