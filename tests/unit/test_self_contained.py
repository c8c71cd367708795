"""The repository stands alone: no tracked file reads or cites anything outside the checkout.

Catches a test, scenario, Makefile or doc that points at a folder beside the clone (a clone with
nothing beside it then fails), a paper cited by a private file name instead of its title, a
reference to a design document the repository does not hold, and Markdown links or scenario
paths that lead nowhere."""

import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Built from pieces so that this file does not match itself.
OUTSIDE = re.compile("|".join([
    re.escape("../" + "shared"),            # the reference folder beside the clone
    r'"' + "shared" + r'"\s*/',              # a path built from the parent folder
    r"(?i:\bseed[ _-]?00[0-4]\b)",          # papers by a private file name
    "DESIGN" + r"\.md",                      # a design document outside the repository
    r"/work/" + "(main|shared)",             # this machine's paths
  ]))


def tracked_files():
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False)
    if out.returncode == 0 and out.stdout:
        names = [n for n in out.stdout.decode().split("\0") if n]
    else:  # an exported tree without .git: every file but generated output
        names = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
                 if p.is_file() and not {".git", ".venv", "build", "out"} & set(p.relative_to(ROOT).parts)]
    return [ROOT / n for n in names if (ROOT / n).is_file()]


def text_of(path):
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None


def test_no_tracked_file_refers_outside_the_repository():
    hits = []
    for path in tracked_files():
        text = text_of(path)
        if text is None:
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            m = OUTSIDE.search(line)
            if m:
                hits.append(f"{path.relative_to(ROOT)}:{lineno}: {m.group(0)!r}")
    assert not hits, "references outside the repository:\n" + "\n".join(hits)


def test_markdown_links_to_files_resolve_inside_the_repository():
    bad = []
    link = re.compile(r"\]\(([^)#\s]+)(#[^)]*)?\)")
    for path in tracked_files():
        if path.suffix != ".md":
            continue
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in link.finditer(line):
                target = m.group(1)
                if re.match(r"[a-z]+:", target):  # https:, mailto:
                    continue
                resolved = (path.parent / target).resolve()
                if not resolved.is_relative_to(ROOT) or not resolved.exists():
                    bad.append(f"{path.relative_to(ROOT)}:{lineno}: {target}")
    assert not bad, "Markdown links that lead nowhere or outside the repository:\n" + "\n".join(bad)


def test_scenario_trace_files_resolve_inside_the_repository():
    bad = []
    for path in tracked_files():
        if path.suffix not in (".yaml", ".yml"):
            continue
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = re.search(r"\bfile:\s*([^,}\s]+)", line)
            if m and not line.lstrip().startswith("#"):
                resolved = (path.parent / m.group(1)).resolve()
                if not resolved.is_relative_to(ROOT) or not resolved.is_file():
                    bad.append(f"{path.relative_to(ROOT)}:{lineno}: {m.group(1)}")
    assert not bad, "trace files that are missing or outside the repository:\n" + "\n".join(bad)
