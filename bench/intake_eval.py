"""Measure intake: domain accuracy on held-out real notes, and real notes versus generated junk.

For each vault (MDN's sections, the Obsidian hub's top-level folders): copy the corpus to a temp
folder, move a seeded, stratified sample of notes out into an inbox, index what is left, and run
`run_intake(..., dry_run=True)`. The proposed domain is compared with the folder each note came
from (top-1, top-2, per domain, confusion table). Generated junk goes into the same inbox:
empty stubs, link dumps, near-duplicates of notes that stayed, page boilerplate, and real but
off-topic text (BEIR SciFact abstracts); their score distributions are plotted against the real
notes' with the thresholds.

    python bench/intake_eval.py                   # both vaults, seed 1 (seed 0 was used while building)
    python bench/intake_eval.py --corpus mdn --seed 0

Writes bench/results/intake_<corpus>.json and .md, docs/img/intake_scores_<corpus>.png and
docs/img/intake_confusion_<corpus>.png (all four into `--out DIR` when given). Needs the eval
extra (matplotlib). The smoke run (bench/smoke.py) takes the hub on the stand-in data sets, two
notes per domain and five junk items per kind, into a temp folder.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from datasets import CORPORA, REPO, ensure_corpus
from noteseek import Index
from noteseek.intake import IntakeConfig, run_intake

RESULTS = REPO / "bench" / "results"
IMG = REPO / "docs" / "img"
JUNK_PER_KIND = 40  # the default of --junk
KINDS = ("stub", "link dump", "near-duplicate", "boilerplate", "off-topic")


@dataclass(frozen=True)
class Vault:
    """A corpus, where its vault root is after unpacking, and how its domains are chosen."""

    name: str
    corpus: str
    root: str  # vault root inside the unpacked corpus folder
    split_larger_than: float  # a top-level folder with more than this share of notes is split
    min_notes: int  # folders with fewer notes are not domains


VAULTS = {
    # MDN: `web/` holds 84% of the pages, so its subfolders (web/api, web/css, ...) are the
    # sections; folders under 50 notes stay in the vault but are not domains. 14 domains.
    "mdn": Vault("mdn", "mdn-content-en", "files/en-us", 0.5, 50),
    # The hub: its top-level folders as they are, whatever their size.
    "hub": Vault("hub", "obsidian-hub", "obsidian-hub", 1.01, 1),
}


def notes_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.md") if not any(s.startswith(".") for s in p.parts))


def choose_domains(root: Path, vault: Vault) -> list[str]:
    """Top-level folders; one holding over `split_larger_than` of all notes becomes its subfolders."""
    total = len(notes_under(root))
    chosen: list[str] = []
    for top in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        count = len(notes_under(top))
        if count > vault.split_larger_than * total:
            for sub in sorted(p for p in top.iterdir() if p.is_dir()):
                if len(notes_under(sub)) >= vault.min_notes:
                    chosen.append(f"{top.name}/{sub.name}")
        elif count >= vault.min_notes:
            chosen.append(top.name)
    return chosen


def domain_of(rel: str, domains: Sequence[str]) -> str | None:
    best = None
    for d in domains:
        if rel.startswith(d + "/") and (best is None or len(d) > len(best)):
            best = d
    return best


# --- junk ---------------------------------------------------------------------------------

_FRONT = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)
_TITLE = re.compile(r"^title:\s*(.+)$", re.MULTILINE)

BOILER_BLOCKS = [
    "We use cookies to improve your experience. By continuing to browse this site you agree to "
    "our use of cookies.\n\n[Accept all] [Manage preferences]",
    "Subscribe to our newsletter\n\nGet the latest articles delivered straight to your inbox. "
    "No spam, unsubscribe at any time.\n\nEmail address: ________ [Sign up]",
    "Home | Blog | About | Contact | Careers | Press\n\nSkip to main content",
    "Share this: Twitter Facebook LinkedIn Reddit Email\n\nLike this: Like Loading...",
    "© 2024 Example Media Ltd. All rights reserved. Privacy Policy | Terms of Use | Cookie "
    "Settings | Do Not Sell My Personal Information",
    "You may also like\n\n- 10 tricks every developer should know\n- Why everyone is talking "
    "about this\n- The one tool you need this year",
    "Leave a reply\n\nYour email address will not be published. Required fields are marked *"
    "\n\nComment\nName *\nEmail *\nWebsite\n\n[Post comment]",
    "Advertisement\n\nSponsored content from our partners. Read more below.\n\nContinue reading",
    "Related posts\n\nPrevious post: Getting started\nNext post: Advanced topics\n\nBack to top",
    "Sign in to continue reading. Create a free account or log in with your existing profile.",
]


def title_of(text: str, fallback: str) -> str:
    front = _FRONT.match(text)
    found = _TITLE.search(front.group(0)) if front else None
    if found:
        return found.group(1).strip().strip("'\"")
    heading = re.search(r"^# (.+)$", text, re.MULTILINE)
    return heading.group(1).strip() if heading else fallback


def make_junk(
    rng: random.Random, kept: list[Path], root: Path, offtopic: list[Path], per_kind: int
) -> dict[str, str]:
    """{file name: text} of `per_kind` items of each junk kind."""
    out: dict[str, str] = {}
    for i in range(per_kind):
        note = rng.choice(kept)
        text = note.read_text("utf-8")
        title = title_of(text, note.parent.name)
        # A stub: a title and at most a few words, as captured and never written.
        filler = rng.choice(["", "TODO", "look into this", "see link", "write this up later"])
        out[f"junk-stub-{i:03}.md"] = f"# {title}\n\n{filler}\n"
        # A link dump: a list of links to pages on the vault's own topics.
        links = rng.sample(kept, rng.randint(6, 20))
        lines = [f"# Links {i}", ""]
        for link in links:
            rel = link.parent.relative_to(root).as_posix()
            ltitle = title_of(link.read_text("utf-8"), link.parent.name)
            lines.append(
                rng.choice(
                    [f"- [{ltitle}](https://example.org/{rel})", f"- https://example.org/{rel}"]
                )
            )
        out[f"junk-links-{i:03}.md"] = "\n".join(lines) + "\n"
        # A near-duplicate: a note that stayed in the vault, re-clipped with small edits.
        body = _FRONT.sub("", rng.choice(kept).read_text("utf-8"))
        paragraphs = [p for p in body.split("\n\n") if p.strip()]
        keep = [p for p in paragraphs if rng.random() > 0.1] or paragraphs
        out[f"junk-dup-{i:03}.md"] = "Clipped again:\n\n" + "\n\n".join(keep) + "\n"
        # Boilerplate: the furniture of a web page, with a title on the vault's topics.
        blocks = rng.sample(BOILER_BLOCKS, rng.randint(3, 6))
        out[f"junk-boiler-{i:03}.md"] = f"# {title}\n\n" + "\n\n".join(blocks) + "\n"
        # Off-topic but real: a scientific abstract.
        out[f"junk-offtopic-{i:03}.md"] = rng.choice(offtopic).read_text("utf-8")
    return out


def kind_of(name: str) -> str:
    for prefix, kind in (
        ("junk-stub", "stub"),
        ("junk-links", "link dump"),
        ("junk-dup", "near-duplicate"),
        ("junk-boiler", "boilerplate"),
        ("junk-offtopic", "off-topic"),
    ):
        if name.startswith(prefix):
            return kind
    return "real"


# --- one vault ----------------------------------------------------------------------------


def evaluate(
    vault: Vault, *, seed: int, per_domain: int, cap_share: float, junk: int = JUNK_PER_KIND
) -> dict[str, Any]:
    src = ensure_corpus(CORPORA[vault.corpus]) / vault.root
    offtopic_root = ensure_corpus(CORPORA["beir-scifact"]) / "scifact-vault"
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix=f"intake-{vault.name}-") as tmp:
        work = Path(tmp)
        root = work / "vault"
        shutil.copytree(src, root)
        inbox = work / "inbox"
        inbox.mkdir()
        domains = choose_domains(root, vault)
        by_domain: dict[str, list[Path]] = defaultdict(list)
        for note in notes_under(root):
            d = domain_of(note.relative_to(root).as_posix(), domains)
            if d:
                by_domain[d].append(note)
        truth: dict[str, str] = {}
        for d in domains:
            members = by_domain[d]
            n = min(per_domain, max(1, int(cap_share * len(members))))
            for k, note in enumerate(sorted(rng.sample(members, n))):
                name = f"item-{len(truth):04}.md"  # the name says nothing about the folder
                shutil.move(note, inbox / name)
                truth[name] = d
                del k
        kept = [p for p in notes_under(root)]
        offtopic = sorted(offtopic_root.glob("*.md"))
        for name, text in make_junk(rng, kept, root, offtopic, junk).items():
            (inbox / name).write_text(text, encoding="utf-8")
        t0 = time.perf_counter()
        with Index(work / "index.db") as idx:
            idx.update(root)
            t_index = time.perf_counter() - t0
            config = IntakeConfig(domains=tuple(domains))
            t1 = time.perf_counter()
            report = run_intake(
                inbox, vault=root, index=idx, config=config, dry_run=True, refresh=False
            )
            t_intake = time.perf_counter() - t1
    rows = []
    for result in report.items:
        a = result.assessment
        rows.append(
            {
                "item": a.path,
                "kind": kind_of(a.path),
                "true": truth.get(a.path),
                "domain": a.domain,
                "runner_up": a.runner_up,
                "margin": a.margin,
                "total": a.total,
                "scores": vars(a.scores),
                "decision": a.decision,
                "duplicate_of": a.duplicate_of,
            }
        )
    return {
        "corpus": vault.name,
        "seed": seed,
        "domains": domains,
        "domain_sizes": {d: len(by_domain[d]) for d in domains},
        "held_out": len(truth),
        "skipped": [(p.rel, p.reason) for p in report.skipped],
        "seconds_index": t_index,
        "seconds_intake": t_intake,
        "items": rows,
    }


# --- tables and plots ---------------------------------------------------------------------


def summarise(res: dict[str, Any]) -> dict[str, Any]:
    real = [r for r in res["items"] if r["kind"] == "real"]
    per: dict[str, dict[str, float]] = {}
    for d in res["domains"]:
        mine = [r for r in real if r["true"] == d]
        if not mine:
            continue
        top1 = sum(r["domain"] == d for r in mine) / len(mine)
        top2 = sum(d in (r["domain"], r["runner_up"]) for r in mine) / len(mine)
        per[d] = {"n": len(mine), "top1": top1, "top2": top2}
    sizes = res["domain_sizes"]
    weight = sum(sizes[d] for d in per)
    decisions: dict[str, dict[str, float]] = {}
    for kind in ("real", *KINDS):
        mine = [r for r in res["items"] if r["kind"] == kind]
        c = Counter(r["decision"] for r in mine)
        decisions[kind] = {k: c[k] / len(mine) for k in ("route", "review", "set_aside")} | {
            "n": len(mine)
        }
    return {
        "top1_micro": sum(r["domain"] == r["true"] for r in real) / len(real),
        "top2_micro": sum(r["true"] in (r["domain"], r["runner_up"]) for r in real) / len(real),
        "top1_macro": sum(v["top1"] for v in per.values()) / len(per),
        "top2_macro": sum(v["top2"] for v in per.values()) / len(per),
        # Each domain's accuracy weighted by its size: what a random note would see.
        "top1_weighted": sum(v["top1"] * sizes[d] for d, v in per.items()) / weight,
        "per_domain": per,
        "decisions": decisions,
    }


def markdown(res: dict[str, Any], summary: dict[str, Any]) -> str:
    out = [f"### {res['corpus']} (seed {res['seed']}, {res['held_out']} held-out notes)", ""]
    out.append(
        f"top-1 macro {summary['top1_macro']:.3f} · micro {summary['top1_micro']:.3f} · "
        f"size-weighted {summary['top1_weighted']:.3f}; top-2 macro {summary['top2_macro']:.3f} · "
        f"micro {summary['top2_micro']:.3f}"
    )
    out += ["", "| domain | notes in vault | held out | top-1 | top-2 |", "|---|---|---|---|---|"]
    for d, v in summary["per_domain"].items():
        out.append(
            f"| {d} | {res['domain_sizes'][d]} | {v['n']} | {v['top1']:.2f} | {v['top2']:.2f} |"
        )
    real = [r for r in res["items"] if r["kind"] == "real"]
    short = [d.split("/")[-1][:10] for d in res["domains"]]
    out += ["", "Confusion (rows: true folder, columns: proposed domain)", ""]
    out.append("| true \\ proposed | " + " | ".join(short) + " |")
    out.append("|---" * (len(short) + 1) + "|")
    for d, s in zip(res["domains"], short):
        c = Counter(r["domain"] for r in real if r["true"] == d)
        out.append(
            f"| {s} | " + " | ".join(str(c[x]) if c[x] else "·" for x in res["domains"]) + " |"
        )
    out += ["", "| items | n | routed | review | set aside |", "|---|---|---|---|---|"]
    for kind, v in summary["decisions"].items():
        out.append(
            f"| {kind} | {v['n']} | {v['route']:.0%} | {v['review']:.0%} | {v['set_aside']:.0%} |"
        )
    return "\n".join(out) + "\n"


def plot(res: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [3, 2]})
    bins = [i / 40 for i in range(41)]
    colours = {
        "real": "#2b6cb0",
        "stub": "#c53030",
        "link dump": "#dd6b20",
        "near-duplicate": "#805ad5",
        "boilerplate": "#718096",
        "off-topic": "#2f855a",
    }
    for kind in ("real", *KINDS):
        totals = [r["total"] for r in res["items"] if r["kind"] == kind]
        ax.hist(
            totals,
            bins=bins,
            histtype="step" if kind != "real" else "stepfilled",
            alpha=0.35 if kind == "real" else 1.0,
            linewidth=1.6,
            color=colours[kind],
            label=f"{kind} ({len(totals)})",
            density=True,
        )
    for x, label in ((0.40, "review 0.40"), (0.55, "route 0.55")):
        ax.axvline(x, color="black", linestyle="--", linewidth=1)
        ax.text(x + 0.005, ax.get_ylim()[1] * 0.95, label, fontsize=8)
    ax.set_xlabel("total score")
    ax.set_ylabel("density")
    ax.set_title(f"{res['corpus']}: held-out real notes vs generated junk")
    ax.legend(fontsize=8)
    names = ["relevance", "actionability", "depth", "authority"]
    kinds = ("real", *KINDS)
    for j, kind in enumerate(kinds):
        vals = [[r["scores"][n] for r in res["items"] if r["kind"] == kind] for n in names]
        means = [sum(v) / len(v) if v else 0 for v in vals]
        bx.bar([i + j * 0.13 for i in range(4)], means, width=0.13, color=colours[kind], label=kind)
    bx.set_xticks([i + 0.33 for i in range(4)], names, fontsize=8)
    bx.set_ylim(0, 1)
    bx.set_title("mean sub-score by item kind")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_confusion(res: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    doms = res["domains"]
    m = np.zeros((len(doms), len(doms)))
    for r in res["items"]:
        if r["kind"] == "real" and r["domain"] in doms:
            m[doms.index(r["true"]), doms.index(r["domain"])] += 1
    m = m / np.maximum(m.sum(axis=1, keepdims=True), 1)
    fig, ax = plt.subplots(figsize=(0.55 * len(doms) + 3, 0.5 * len(doms) + 2))
    ax.imshow(m, cmap="Blues", vmin=0, vmax=1)
    short = [d.split("/")[-1][:16] for d in doms]
    ax.set_xticks(range(len(doms)), short, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(doms)), short, fontsize=8)
    for i in range(len(doms)):
        for j in range(len(doms)):
            if m[i, j] >= 0.01:
                ax.text(
                    j,
                    i,
                    f"{m[i, j]:.2f}",
                    ha="center",
                    va="center",
                    fontsize=6,
                    color="white" if m[i, j] > 0.5 else "black",
                )
    ax.set_xlabel("proposed domain")
    ax.set_ylabel("true folder")
    ax.set_title(f"{res['corpus']}: domain confusion (row-normalised)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", choices=[*VAULTS, "all"], default="all")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--per-domain", type=int, default=25, help="held-out notes per domain")
    parser.add_argument(
        "--cap-share", type=float, default=0.3, help="at most this share of a domain"
    )
    parser.add_argument("--junk", type=int, default=JUNK_PER_KIND, help="junk items per kind")
    parser.add_argument("--no-write", action="store_true", help="print only; write no files")
    parser.add_argument("--out", type=Path, help="write results and plots here instead")
    args = parser.parse_args()
    results, img = (args.out, args.out) if args.out else (RESULTS, IMG)
    names = list(VAULTS) if args.corpus == "all" else [args.corpus]
    for name in names:
        res = evaluate(
            VAULTS[name],
            seed=args.seed,
            per_domain=args.per_domain,
            cap_share=args.cap_share,
            junk=args.junk,
        )
        summary = summarise(res)
        text = markdown(res, summary)
        print(text)
        print(
            f"index {res['seconds_index']:.1f} s, intake {res['seconds_intake']:.1f} s "
            f"for {len(res['items'])} items; skipped {len(res['skipped'])}"
        )
        if args.no_write:
            scratch = Path(tempfile.gettempdir()) / f"intake_{name}_seed{args.seed}.json"
            scratch.write_text(json.dumps({"summary": summary, **res}, indent=1), encoding="utf-8")
            continue
        results.mkdir(parents=True, exist_ok=True)
        img.mkdir(parents=True, exist_ok=True)
        (results / f"intake_{name}.json").write_text(
            json.dumps({"summary": summary, **res}, indent=1), encoding="utf-8"
        )
        (results / f"intake_{name}.md").write_text(text, encoding="utf-8")
        plot(res, img / f"intake_scores_{name}.png")
        plot_confusion(res, img / f"intake_confusion_{name}.png")


if __name__ == "__main__":
    main()
