"""The three HTML pages (``kernel --html``, ``kernel --all --html``, ``diff --html``) of the
shipped compiles opened in a real browser: headless Chromium loads each from disk with
logging on, and the test asserts no console message (an uncaught error or any log line from
the page), the expected sections in the DOM after the page's script ran, no external
resource, and a screenshot that is not blank. Without a Chromium the tests skip and say so
(``.ci/run`` installs one: ``apt-get install -y chromium``)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from wgpsim.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "kernels"
STD, PART = str(EXAMPLES / "gemm_tdm_standard"), str(EXAMPLES / "gemm_tdm_partitioned")
SOFTMAX_950 = Path(__file__).parent / "corpus_others/gfx950/fixtures/tutorial_softmax/kernel.ttgir"
BROWSER = next(
    (b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None
)
pytestmark = pytest.mark.skipif(
    BROWSER is None,
    reason="no Chromium on PATH (chromium / chromium-browser / google-chrome): install one "
    "(apt-get install -y chromium) to test the HTML pages in a browser",
)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"]


def _browse(page: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [BROWSER, *FLAGS, *extra, page.resolve().as_uri()]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


def _console(stderr: str) -> list[str]:
    """The page's console lines (Chromium logs them as ``INFO:CONSOLE``), uncaught errors."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("html")
    cache = out / "cache"
    for name in ("gemm_tdm_standard", "gemm_tdm_partitioned", "lds_bandwidth_plain"):
        shutil.copytree(EXAMPLES / name, cache / f"HASH_{name}")
    (cache / "HASH_bad").mkdir()
    (cache / "HASH_bad" / "broken.ttgir").write_text("module {\n")
    got = {k: out / f"{k}.html" for k in ("kernel", "all", "diff")}
    assert main(["kernel", STD, "--loop-timing", "--html", str(got["kernel"])]) == 0
    assert main(["kernel", str(cache), "--all", "--html", str(got["all"])]) == 1  # HASH_bad
    assert main(["diff", PART, STD, "--fail-on", "exposed>+5%", "--html", str(got["diff"])]) == 1
    got["foreign"] = out / "foreign.html"  # a gfx950 compile on gfx942's file: one partition
    argv = ["kernel", str(SOFTMAX_950), "--target", "gfx942", "--html", str(got["foreign"])]
    assert main(argv) == 0
    return got


SECTIONS = {
    "kernel": ["k-source", "k-ops", "k-buffers", "k-loop", "k-passes"],
    "all": ["index", "k0", "k0-loop", "k0-passes", "k1", "k2"],
    "diff": ["d0", "d0old-ops", "d0new-ops", "d0old-loop", "d0new-buffers", "d0new-passes"],
}
TEXT = {
    "kernel": ["Source lines and their LDS ops", "Lanes to banks", "What if", "partition 1"],
    "all": ["broken", "expected", "back to the table"],  # the unreadable kernel's row and reason
    "diff": ["REGRESSION gemm_tdm: exposed", "old", "new", "0 → 126 (+126)"],
}


@pytest.mark.parametrize("kind", ["kernel", "all", "diff"])
def test_page_opens_without_console_errors_and_holds_its_sections(pages, kind, tmp_path):
    page = pages[kind]
    text = page.read_text()
    assert not re.search(r"<link|<script[^>]+src=|<img[^>]+src=|url\(", text)  # all inline
    run = _browse(page, "--dump-dom")
    assert run.returncode == 0, run.stderr[-2000:]
    assert _console(run.stderr) == []
    dom = run.stdout
    for anchor in SECTIONS[kind]:
        assert f'id="{anchor}"' in dom, anchor
    for words in TEXT[kind]:
        assert words in dom, words
    assert dom.count("<svg") >= 3
    assert 'title="click to sort"' in dom  # the inline script ran


def _dom(page: Path) -> str:
    run = _browse(page, "--dump-dom")
    assert run.returncode == 0 and _console(run.stderr) == [], run.stderr[-2000:]
    return run.stdout


def _heads(dom: str, section: str) -> list[str]:
    """The header cells of the first table in the section ``id=section``."""
    start = dom.index(f'id="{section}"')
    return re.findall(r"<th[^>]*>([^<]*)</th>", dom[start : dom.index("</thead>", start)])


def test_the_source_annotations_carry_the_grouping_marks(pages):
    annotations = re.findall(r'<span class="ann">([^<]*)</span>', _dom(pages["kernel"]))
    assert annotations and all("[" in a for a in annotations)
    assert any("16 x ds_load_b128[d]" in a for a in annotations)
    assert any("1 x tensor_load_to_lds[a]" in a for a in annotations)


def test_one_partition_and_another_chip_in_the_browser(pages):
    """The gfx950 compile on gfx942's file: the note in the text report's words, the op table
    without partition columns and no pair-partition figure; MI450's page keeps them."""
    dom = _dom(pages["foreign"])
    note = "note: compiled for hip:gfx950, simulated on gfx942's hardware file (hip:gfx942"
    assert re.search(r'<p class="note foreign">' + re.escape(note), dom)
    heads = _heads(dom, "k-ops")
    assert heads[:6] == ["#", "line", "op", "name", "shape", "instructions/warp"]
    assert not [h for h in heads if "partition" in h or "co-located" in h]
    assert "Partitions each SIMD pair touches" not in dom
    assert re.search(r'<span class="ann">[^<]*1 x ds_write_b32\[a\]', dom)
    mi450 = _heads(_dom(pages["kernel"]), "k-ops")
    assert {"partition stall cycles", "partitions A|B", "pairs co-located"} <= set(mi450)


@pytest.mark.parametrize("kind", ["kernel", "all", "diff"])
def test_screenshot_shows_content(pages, kind, tmp_path):
    from PIL import Image

    shot = tmp_path / f"{kind}.png"
    run = _browse(pages[kind], f"--screenshot={shot}", "--window-size=1400,2400")
    assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
    assert _console(run.stderr) == []
    image = Image.open(shot).convert("RGB")
    assert image.size == (1400, 2400)
    colours = image.getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 50  # text, tables and pictures, not a blank page
    keep = Path(__file__).parent / "screenshots"
    if keep.is_dir():  # a checkout that keeps them (gitignored) for a person to look at
        shutil.copy(shot, keep / shot.name)
