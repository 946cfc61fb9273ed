"""Every `$ raypick ...` example in README.md and docs/*.md runs and prints
what the page shows, so the pages cannot drift from the code.

An example is a line starting with `$ raypick` inside a fenced block; its
expected output is the lines after it up to the next `$` line or the end
of the block, compared with what the command writes (standard output, then
standard error); a line holding only `...` stands for any number of lines
the page leaves out. Timings vary from run to run: every `<number> ms` reads
as `N ms` on both sides. Commands run in a scratch folder that sees the
repository's apps/, docs/ and tests/ (so their output files land there),
with a few small input files the examples name (bad.txt).

Embree's answers depend on the kernels it picks for the CPU (AVX-512 or
AVX2): which of two objects at the same t it reports, and the last bits of
its t. In `raypick validate`'s ray summary that moves rays between the
"agree", "float noise" and "tie" lines, so their counts and their largest
|dt| read as N on both sides. Their counts must still add up to the same
sum as the page's: that keeps the page's own three figures honest (a count
mistyped or left stale on the page fails here, though it is masked above).
Every other line, the float-noise tolerance included, is compared as the
page shows it. A raypick tie broken the other way would stay among the
three (validate calls it a tie): the contract's tie order is the doctest
suite's to check, against brute force.

Under the sanitizers (RAYPICK_SANITIZED=1, as ./setup.sh test runs this
suite a second time against the ASan + UBSan build) three `raypick
validate` examples are skipped: 10,000 generated boxes against Embree, and
closest points against a brute force over every triangle of 1,000 boxes.
Their brute-force checks took 98 s there, most of that run; the Release
run checks them.
"""
import glob
import os
import re
import subprocess

import pytest

SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXE = os.path.abspath(os.environ.get("RAYPICK_EXE", os.path.join(SOURCE, "build", "apps", "raypick")))
PAGES = [os.path.join(SOURCE, "README.md")] + sorted(glob.glob(os.path.join(SOURCE, "docs", "*.md")))
MS = re.compile(r"\d+(\.\d+)? ms\b")
# The ray summary's three lines that Embree's kernels move rays between
# (apps/cli/validate.cpp), each with its count (group 2) and, for the first
# two, the largest |dt| (group 4).
EMBREE_KERNEL_LINES = [
    re.compile(r"^(agree: +)(\d+)( \(max \|dt\| )([^)]+)(\))$"),
    re.compile(r"^(float noise: +)(\d+)( \(same object, \|dt\| <= [^;]+; max \|dt\| )([^)]+)(\))$"),
    re.compile(r"^(tie: +)(\d+)()()()$"),
]
SANITIZED = os.environ.get("RAYPICK_SANITIZED") == "1"
SLOW_UNDER_SANITIZERS = re.compile(r"^raypick validate --boxes (10000\b|1000 --points\b)")


def normalized(line):
    """A line as compared: timings as `N ms`; in the three summary lines
    that follow Embree's kernels, the count and the largest |dt| as N."""
    line = MS.sub("N ms", line)
    for pattern in EMBREE_KERNEL_LINES:
        m = pattern.match(line)
        if m:
            return m.group(1) + "N" + m.group(3) + ("N" if m.group(4) else "") + m.group(5)
    return line


def kernel_line_sum(lines):
    """The counts of the three summary lines that follow Embree's kernels,
    added up."""
    return sum(int(m.group(2)) for line in lines for pattern in EMBREE_KERNEL_LINES
               if (m := pattern.match(line)))


def examples():
    found = []
    for page in PAGES:
        lines = open(page, encoding="utf-8").read().splitlines()
        in_block, current = False, None
        for number, line in enumerate(lines, 1):
            if line.startswith("```"):
                if current:
                    found.append(current)
                in_block, current = not in_block, None
                continue
            if not in_block:
                continue
            if line.startswith("$ "):
                if current:
                    found.append(current)
                current = None
                if line.startswith("$ raypick"):
                    rel = os.path.relpath(page, SOURCE)
                    current = (f"{rel}:{number}", line[2:], [])
            elif current:
                current[2].append(line)
    return found


EXAMPLES = examples()


def test_the_pages_have_examples():
    assert len(EXAMPLES) >= 15


@pytest.mark.parametrize("where,command,expected", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_example_prints_what_the_page_shows(where, command, expected, tmp_path):
    for name in ("apps", "docs", "tests"):
        os.symlink(os.path.join(SOURCE, name), tmp_path / name)
    (tmp_path / "bad.txt").write_text("0 0 5 0 0 -1\n1 2 3\n")
    if SANITIZED and SLOW_UNDER_SANITIZERS.match(command):
        pytest.skip("a brute-force validation: checked by the Release run, too slow under the sanitizers")
    for path in re.findall(r"/usr/share/\S+", command):
        if not os.path.exists(path):
            pytest.skip(f"{path} is not installed")
    run = subprocess.run(["bash", "-c", EXE + command[len("raypick"):]], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    got = (run.stdout + run.stderr).replace(EXE, "raypick").rstrip("\n").splitlines()
    want = list(expected)
    while want and not want[-1].strip():
        want.pop()
    got_text = "\n".join(normalized(line) for line in got) + "\n"
    pattern = "".join("(?:.*\n)*?" if line.strip() == "..." else re.escape(normalized(line)) + "\n"
                      for line in want)
    assert re.fullmatch(pattern, got_text), f"{where}: got\n{got_text}"
    assert kernel_line_sum(got) == kernel_line_sum(want), f"{where}: agree + float noise + tie moved"


def test_every_relative_link_of_the_pages_names_a_file_that_exists():
    broken, checked = [], 0
    for page in PAGES:
        text = open(page, encoding="utf-8").read()
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = os.path.join(os.path.dirname(page), target.split("#", 1)[0])
            checked += 1
            if not os.path.exists(path):
                broken.append(f"{os.path.relpath(page, SOURCE)}: {target}")
    assert broken == []
    assert checked > 30
