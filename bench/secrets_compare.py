"""noteseek's scrubber next to detect-secrets and the gitleaks rule set, side by side.

    pip install detect-secrets regex          # the two anchors (regex: gitleaks' Go regex syntax)
    python bench/secrets_compare.py --gitleaks-toml PATH/gitleaks.toml [--data-dir ../shared/data]
    python bench/secrets_compare.py ... --review 50 --review-seed 1    # a sample of our redactions

Three measurements, each printed as a table:

(a) recall on a planted corpus: every format of tests/planted_secrets.py (vendor tokens, issue 13's
    bare shapes, vendors no noteseek rule names) in every context (a sentence, a list item, a table
    cell, a fenced block, a frontmatter value, a file name, a keyword assignment), with values drawn
    fresh each run (``--seed``, default: the clock), plus near misses that must stay searchable;
(b) false positives on the real corpora in ``--data-dir``: every note chunked by noteseek's chunker,
    each chunk's text given to each detector; redactions (findings) per 10,000 chunks and chunks
    with at least one: noteseek over every chunk, every detector over the same random sample
    (``--sample``, 2,000 per corpus: detect-secrets runs at tens of chunks per second).  These corpora are public documentation and notes: a finding is a false
    positive or a documentation example (``--review`` prints a sample to judge);
(c) throughput: chunks per CPU-second over the same chunks, one detector at a time, in one process
    (process time, not wall time: the machine these figures come from is shared).

How each detector is run:

* noteseek: ``scrub(text)``; a planted value counts as caught only if no byte of it is left.
* detect-secrets 1.5 (Yelp, Apache-2.0): its default plugins and filters, line by line, as its file
  scan does (``_process_line_based_plugins``); a value counts as caught if a finding covers half of it.
* ``ds-adhoc``: the same plugins through ``scan_line``, detect-secrets' ad hoc string scan, which
  drops the quotes its entropy plugins otherwise require (how one would call it on note text).
* gitleaks rules (MIT): ``config/gitleaks.toml`` read at run time from ``--gitleaks-toml`` (fetch
  gitleaks/gitleaks, nothing of it is copied here) and applied as gitleaks applies them: keyword
  prefilter, regex (Go syntax through the ``regex`` module), secret group, entropy threshold, rule
  and global allow-lists (regexes, stopwords).  A Python port of the engine, so its throughput is
  not the Go binary's; its recall and false positives are the rules'.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import tarfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "src"))

from tests.planted_secrets import CONTEXTS, FORMATS, near_misses, planted  # noqa: E402

from noteseek import chunk_note, scrub  # noqa: E402

CORPORA = {
    "mdn": "mdn-content-en/mdn-en-us-md.tar.gz",
    "obsidian-hub": "obsidian-hub/obsidian-hub-md.tar.gz",
    "obsidian-help": "obsidian-help/obsidian-help-en-de-md.tar.gz",
    "tldr-en": "tldr-nl2bash/tldr-pages-en-md.tar.gz",
    "tldr-de": "tldr-nl2bash/tldr-pages-de-md.tar.gz",
    "scifact": "beir-scifact/scifact-vault-md.tar.gz",
}

Span = tuple[int, int]


@dataclass(frozen=True)
class Finding:
    start: int
    end: int
    value: str
    rule: str


Detector = Callable[[str], list[Finding]]
_KEEP: list[object] = []


# ------------------------------------------------------------------------------- detectors


def noteseek_detector(text: str) -> list[Finding]:
    # Spans of one pass; scrub() repeats to a fixpoint.
    import _internals

    return [Finding(s, e, text[s:e], name) for s, e, name in _internals.secret_spans(text)]


def detect_secrets_detector() -> Detector:
    from detect_secrets.core.scan import _process_line_based_plugins
    from detect_secrets.settings import default_settings

    # The settings are global in detect-secrets; the context stays entered for the process (and
    # referenced: a collected generator-based context manager would restore the old settings).
    settings = default_settings()
    settings.__enter__()
    _KEEP.append(settings)

    def detect(text: str) -> list[Finding]:
        lines = text.split("\n")
        found: list[Finding] = []
        offsets = [0]
        for line in lines:
            offsets.append(offsets[-1] + len(line) + 1)
        for secret in _process_line_based_plugins(list(enumerate(lines, 1)), filename="note.md"):
            value = secret.secret_value or ""
            line = lines[secret.line_number - 1]
            at = line.find(value) if value else -1
            start = offsets[secret.line_number - 1] + max(at, 0)
            found.append(Finding(start, start + len(value), value, secret.type))
        return found

    return detect


def detect_secrets_eager_detector() -> Detector:
    """detect-secrets' ad hoc string scan (``scan_line``): entropy plugins without the quotes."""
    from detect_secrets.core.scan import scan_line

    def detect(text: str) -> list[Finding]:
        found: list[Finding] = []
        offset = 0
        for line in text.split("\n"):
            for secret in scan_line(line):
                value = secret.secret_value or ""
                at = offset + max(line.find(value), 0)
                found.append(Finding(at, at + len(value), value, secret.type))
            offset += len(line) + 1
        return found

    return detect


def _shannon(value: str) -> float:
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


def gitleaks_detector(toml_path: Path) -> Detector:
    import regex
    import tomllib

    config = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    glob = config.get("allowlist", {})
    glob_regexes = [regex.compile(r, regex.V1) for r in glob.get("regexes", [])]
    glob_stop = [w.lower() for w in glob.get("stopwords", [])]

    @dataclass
    class Rule:
        id: str
        regex: regex.Pattern[str]
        group: int
        entropy: float
        keywords: tuple[str, ...]
        allow: list[tuple[str, list[regex.Pattern[str]], list[str]]]

    rules: list[Rule] = []
    for r in config["rules"]:
        if "regex" not in r:
            continue  # path-only rules (a file named id_rsa) say nothing about a note's text
        allow = []
        for a in r.get("allowlists", []):
            if a.get("paths") and not a.get("regexes") and not a.get("stopwords"):
                continue
            allow.append(
                (
                    a.get("regexTarget", "secret"),
                    [regex.compile(x, regex.V1) for x in a.get("regexes", [])],
                    [w.lower() for w in a.get("stopwords", [])],
                )
            )
        rules.append(
            Rule(
                r["id"],
                regex.compile(r["regex"], regex.V1),
                int(r.get("secretGroup", 0)),
                float(r.get("entropy", 0.0)),
                tuple(k.lower() for k in r.get("keywords", [])),
                allow,
            )
        )

    def allowed(rule: Rule, secret: str, match: str, line: str) -> bool:
        low = secret.lower()
        if any(w in low for w in glob_stop) or any(g.search(secret) for g in glob_regexes):
            return True
        for target, regexes, stop in rule.allow:
            subject = {"match": match, "line": line}.get(target, secret)
            if any(x.search(subject) for x in regexes) or any(w in low for w in stop):
                return True
        return False

    def detect(text: str) -> list[Finding]:
        lowered = text.lower()
        found: list[Finding] = []
        for rule in rules:
            if rule.keywords and not any(k in lowered for k in rule.keywords):
                continue
            for m in rule.regex.finditer(text):
                group = rule.group
                if not group and m.re.groups:
                    # gitleaks takes the first group that matched when no secretGroup is set
                    group = next((i for i in range(1, m.re.groups + 1) if m.group(i)), 0)
                secret = m.group(group) if group else m.group(0)
                if not secret or (rule.entropy and _shannon(secret) < rule.entropy):
                    continue
                line_start = text.rfind("\n", 0, m.start()) + 1
                line_end = text.find("\n", m.end())
                line = text[line_start : len(text) if line_end < 0 else line_end]
                if allowed(rule, secret, m.group(0), line):
                    continue
                start = m.start(group) if group else m.start()
                found.append(Finding(start, start + len(secret), secret, rule.id))
        return found

    return detect


# --------------------------------------------------------------------------- measurement


def caught(name: str, detector: Detector, text: str, value: str) -> bool:
    if name == "noteseek":
        return value not in scrub(text).text  # strict: not one byte of it may stay
    for f in detector(text):
        if value in f.value or (len(f.value) >= 0.5 * len(value) and f.value in value):
            return True
    return False


def recall_table(detectors: dict[str, Detector], seed: int) -> None:
    cases = planted(seed)
    print(f"\n(a) recall on planted secrets (seed {seed}; {len(cases)} values, fresh per seed)")
    kinds = {name: kind for name, (kind, _) in FORMATS.items()}
    by_context: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    by_kind: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for p in cases:
        text = p.path if p.context == "file-name" else p.text
        for name, det in detectors.items():
            hit = caught(name, det, text, p.value)
            by_context[p.context][name].append(hit)
            by_kind[kinds[p.format]][name].append(hit)
            by_kind["all"][name].append(hit)
    names = list(detectors)
    header = f"{'context':<14}" + "".join(f"{n:>16}" for n in names)
    print(header)
    for context in [*CONTEXTS, *("", "vendor", "shape", "other-vendor", "all")]:
        if not context:
            print("-" * len(header))
            continue
        rows = by_context.get(context) or by_kind[context]
        cells = "".join(f"{sum(rows[n]) / len(rows[n]):>16.1%}" for n in names)
        print(f"{context:<14}{cells}")
    misses = [
        (p.format, p.context)
        for p in cases
        if not caught(
            "noteseek",
            detectors["noteseek"],
            p.path if p.context == "file-name" else p.text,
            p.value,
        )
    ]
    print(f"noteseek misses: {misses or 'none'}")
    print("\nnear misses that must stay searchable (a finding on them is a false positive):")
    keep = near_misses(seed)
    print(f"{'case':<18}" + "".join(f"{n:>16}" for n in names))
    for p in keep:
        cells = "".join(
            f"{'flagged' if caught(n, d, p.text, p.value) else 'kept':>16}"
            for n, d in detectors.items()
        )
        print(f"{p.format:<18}{cells}")


def corpus_chunks(path: Path) -> list[str]:
    """Every chunk of every note in a corpus tarball, as noteseek's chunker cuts them."""
    chunks: list[str] = []
    with tarfile.open(path, "r:gz") as tar:
        for member in tar:
            if not (member.isfile() and member.name.endswith(".md")):
                continue
            handle = tar.extractfile(member)
            if handle is None:
                continue
            text = handle.read().decode("utf-8", "replace")
            stem = member.name.rsplit("/", 1)[-1].rsplit(".", 1)[0]
            chunks += [c.text for c in chunk_note(text, file_stem=stem).chunks]
    return chunks


def corpus_tables(
    detectors: dict[str, Detector], data_dir: Path, sample: int, review: int, review_seed: int
) -> None:
    rng = random.Random(0)
    names = list(detectors)
    print(
        "\n(b) false positives on real corpora: findings per 10,000 chunks (chunks with >= 1);"
        f"\n    noteseek over every chunk, then every detector over the same random {sample} chunks"
        "\n(c) throughput: chunks per CPU-second on that sample (process time: the machine is shared)"
    )
    print(
        f"{'corpus':<14}{'chunks':>8}{'noteseek, all':>20}{'sample':>8}"
        + "".join(f"{n:>26}" for n in names)
    )
    ours: list[tuple[str, str, Finding]] = []
    for corpus, rel in CORPORA.items():
        path = data_dir / rel
        if not path.exists():
            print(f"{corpus:<14} missing: {path}")
            continue
        chunks = corpus_chunks(path)
        all_findings = [noteseek_detector(c) for c in chunks]
        found = sum(map(len, all_findings))
        hit = sum(1 for f in all_findings if f)
        ours += [(corpus, c, f) for c, fs in zip(chunks, all_findings) for f in fs]
        picked = rng.sample(chunks, min(sample, len(chunks)))
        cells = ""
        for det in detectors.values():
            started = time.process_time()
            findings = [det(c) for c in picked]
            cpu = max(time.process_time() - started, 1e-9)
            per_10k = sum(map(len, findings)) * 10_000 / len(picked)
            cells += f"{per_10k:>10.1f} ({sum(1 for f in findings if f):>4}) {len(picked) / cpu:>7,.0f}/s"
        print(
            f"{corpus:<14}{len(chunks):>8}{found * 10_000 / len(chunks):>11.1f} ({hit:>5})"
            f"{len(picked):>8}{cells}"
        )
    if review and ours:
        print(f"\nreview sample: {review} of noteseek's {len(ours)} findings (seed {review_seed})")
        for corpus, chunk, f in random.Random(review_seed).sample(ours, min(review, len(ours))):
            before = chunk[max(0, f.start - 70) : f.start].replace("\n", " ")
            after = chunk[f.end : f.end + 30].replace("\n", " ")
            print(f"  [{corpus}] {f.rule}: …{before}⟦{f.value}⟧{after}…")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gitleaks-toml", type=Path, help="gitleaks' config/gitleaks.toml")
    parser.add_argument("--data-dir", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--seed", type=int, default=None, help="planted values (default: clock)")
    parser.add_argument(
        "--sample", type=int, default=2000, help="chunks per corpus, every detector"
    )
    parser.add_argument("--review", type=int, default=0, help="print N of our findings to judge")
    parser.add_argument("--review-seed", type=int, default=1)
    parser.add_argument("--skip-corpora", action="store_true")
    parser.add_argument(
        "--recall-seeds",
        type=int,
        default=0,
        help="also: noteseek's recall over N seeds from --seed",
    )
    args = parser.parse_args()
    detectors: dict[str, Detector] = {"noteseek": noteseek_detector}
    try:
        detectors["detect-secrets"] = detect_secrets_detector()
        detectors["ds-adhoc"] = detect_secrets_eager_detector()
    except ImportError:
        print("detect-secrets not installed (pip install detect-secrets): column left out")
    if args.gitleaks_toml and args.gitleaks_toml.exists():
        detectors["gitleaks-rules"] = gitleaks_detector(args.gitleaks_toml)
    else:
        print("no --gitleaks-toml: gitleaks column left out")
    seed = args.seed if args.seed is not None else time.time_ns() % 2**32
    recall_table(detectors, seed)
    if args.recall_seeds:
        cases = [p for k in range(args.recall_seeds) for p in planted(seed + k)]
        missed = [
            p
            for p in cases
            if p.value in scrub(p.path if p.context == "file-name" else p.text).text
        ]
        by_format = Counter(p.format for p in missed)
        print(
            f"\nnoteseek over seeds {seed}-{seed + args.recall_seeds - 1}: {len(cases)} values, "
            f"recall {1 - len(missed) / len(cases):.2%}; misses by format: {dict(by_format)}"
        )
    if not args.skip_corpora:
        if not args.data_dir.is_dir():
            raise SystemExit(f"{args.data_dir} not found: pass --data-dir (../shared/data)")
        corpus_tables(detectors, args.data_dir, args.sample, args.review, args.review_seed)
    for settings in _KEEP:
        settings.__exit__(None, None, None)  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
