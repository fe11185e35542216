"""The pure core of intake: text features, the four sub-scores, the total and the decision."""

from __future__ import annotations

import pytest

from noteseek.intake.config import IntakeConfig, Weights, config_from_mapping
from noteseek.intake.errors import IntakeConfigError
from noteseek.intake.features import shingles, source_host, text_features
from noteseek.intake.scoring import (
    Duplicate,
    Scores,
    actionability,
    authority,
    decide,
    depth,
    relevance,
    total,
)

HOWTO = """Rotate the deploy token every 90 days.

1. Open the CI settings.
2. Run the rotation script:

```bash
$ ./rotate-token --env prod
```

3. Check that the pipeline passes.

- [ ] tell the on-call
Decision: tokens live in the keychain, never in the repo.
"""

ESSAY = " ".join(["The history of typography shows how letterforms evolved over centuries."] * 40)


def test_features_count_code_steps_checklists_and_decisions() -> None:
    f = text_features(HOWTO)
    assert f.code_blocks == 1
    assert f.shell_lines == 1
    assert f.steps == 3
    assert f.checkboxes == 1
    assert f.decision_lines == 1
    assert f.imperative_lines >= 3  # Rotate, Open, Run, Check


def test_features_read_source_and_author_from_frontmatter() -> None:
    f = text_features("text", {"source": "https://www.example.com/a", "author": "Ada"})
    assert f.source == "https://www.example.com/a"
    assert f.author == "Ada"
    assert source_host(f.source) == "example.com"
    assert source_host("not a url") is None


def test_link_dump_lines_are_counted_and_links_do_not_count_as_words() -> None:
    dump = "\n".join(f"- [Page {i}](https://example.org/p{i})" for i in range(10))
    f = text_features(dump)
    assert f.link_lines == 10
    assert f.link_share == 1.0
    assert f.words == 20  # "Page N": anchor text only, never the URL


def test_actionability_orders_a_howto_above_an_essay() -> None:
    howto = actionability(text_features(HOWTO))
    essay = actionability(text_features(ESSAY))
    assert howto.value > 0.8 > 0.1 > essay.value
    assert "code block" in howto.why and "numbered step" in howto.why
    assert essay.why == "no steps, commands, code or decisions"


def test_depth_is_zero_for_stubs_and_grows_with_length() -> None:
    stub = depth(text_features("TODO write this"))
    short = depth(text_features(" ".join(["word"] * 60)))
    full = depth(text_features(" ".join(["word"] * 500)))
    assert stub.value == 0.0 and "stub" in stub.why
    assert 0.0 < short.value < full.value == 1.0


def test_depth_penalises_link_dumps_boilerplate_and_duplicates() -> None:
    prose = "\n\n".join(
        f"Paragraph {i} explains one idea in ten or so plain words here." for i in range(40)
    )
    base = depth(text_features(prose)).value
    links = "\n".join(f"- https://example.org/{i}" for i in range(80))
    assert depth(text_features(prose + "\n" + links)).value < base
    furniture = "\n".join(["We use cookies. Accept all.", "Subscribe to our newsletter"] * 20)
    assert depth(text_features(prose + "\n" + furniture)).value < base
    dup = depth(text_features(prose), duplicate=Duplicate("a/b.md", 0.93))
    assert dup.value == 0.0
    assert "near-duplicate of a/b.md (93%" in dup.why


def test_authority_trusted_distrusted_author_citations() -> None:
    trusted, distrusted = ("developer.mozilla.org",), ("spam.example",)

    def score(meta: dict[str, object], body: str = "text") -> float:
        f = text_features(body, meta)
        return authority(f, trusted=trusted, distrusted=distrusted).value

    unknown = score({})
    assert unknown == 0.5
    assert score({"url": "https://developer.mozilla.org/en-US/docs/Web"}) > unknown
    assert score({"url": "https://spam.example/x"}) < unknown
    assert score({"author": "Grace Hopper"}) > unknown
    cited = "Claim.[^1]\n\n[^1]: Knuth 1984.\n\n## References\n\n- https://doi.org/10.1000/182"
    assert score({}, cited) > unknown
    # A distrusted site stays low, however many citations it adds.
    assert score({"url": "https://sub.spam.example/x", "author": "A"}, cited) <= 0.15


def test_relevance_is_calibrated_percentile_with_median_as_full() -> None:
    assert relevance(0.5, similarity=0.8, domain="web/api").value == 1.0
    assert relevance(0.25, similarity=0.6, domain=None).value == 0.5
    assert relevance(0.0, similarity=0.1, domain=None).value == 0.0
    assert "web/api's own notes" in relevance(0.3, similarity=0.6, domain="web/api").why


def test_total_is_the_normalised_weighted_sum() -> None:
    scores = Scores(relevance=1.0, actionability=0.0, depth=0.5, authority=0.0)
    assert total(scores, Weights(1, 1, 1, 1)) == pytest.approx(0.375)
    assert total(scores, Weights(2, 0, 0, 0)) == pytest.approx(1.0)


def test_decide_thresholds_and_duplicate_gate() -> None:
    config = IntakeConfig()
    assert decide(0.55, config=config, domain="a")[0] == "route"
    assert decide(0.5499, config=config, domain="a")[0] == "review"
    assert decide(0.40, config=config, domain="a")[0] == "review"
    assert decide(0.3999, config=config, domain="a")[0] == "set_aside"
    decision, reason = decide(0.9, config=config, domain="a", duplicate=Duplicate("x.md", 0.9))
    assert decision == "review" and "x.md" in reason
    relaxed = IntakeConfig(duplicates_to_review=False)
    assert decide(0.9, config=relaxed, domain="a", duplicate=Duplicate("x.md", 0.9))[0] == "route"


def test_config_validation_and_toml_mapping(tmp_path: object) -> None:
    with pytest.raises(IntakeConfigError):
        IntakeConfig(route_threshold=0.3, review_threshold=0.4)
    with pytest.raises(IntakeConfigError):
        IntakeConfig(weights=Weights(0, 0, 0, 0))
    with pytest.raises(IntakeConfigError):
        IntakeConfig(review_folder="../outside")
    from pathlib import Path

    cfg = config_from_mapping(
        {
            "weights": {"relevance": 2},
            "thresholds": {"route": 0.6},
            "domains": ["web/api/", "glossary"],
            "authority": {"distrusted": ["spam.example"]},
        },
        source=Path("x.toml"),
        base=IntakeConfig(),
    )
    assert cfg.weights.relevance == 2 and cfg.weights.depth == Weights().depth
    assert cfg.route_threshold == 0.6
    assert cfg.domains == ("web/api", "glossary")
    assert cfg.distrusted == ("spam.example",)
    with pytest.raises(IntakeConfigError, match="unknown key"):
        config_from_mapping({"wieghts": {}}, source=Path("x.toml"), base=IntakeConfig())


def test_shingles_detect_shared_text() -> None:
    a = shingles("one two three four five six seven eight")
    b = shingles("zero one two three four five six seven eight nine")
    assert a and a <= b
    assert shingles("too short") == frozenset()
