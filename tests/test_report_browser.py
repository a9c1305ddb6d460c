"""The HTML balance report, opened in a real browser (headless Debian Chromium via Selenium).

Builds a small report (3 and 4 players) and a diff report (4 players, old rules with
masks=1) with the real API, opens each page in headless Chromium and checks what a reader
would see: the title names Firebreak, every figure (an embedded PNG) decodes and has a size,
and the browser console shows no error (no SEVERE log entry, no uncaught JavaScript error).
A deliberately broken page shows that these checks can fail, and a full-page screenshot
shows that the page renders taller than one window.

No skips: CI installs chromium and chromium-driver (.ci/run), so a missing browser fails
these tests with the message of fbsim.errors.UsageError that says what to install.
"""

from __future__ import annotations

import struct

import pytest

from fbsim.experiments.report.browser import render

pytestmark = pytest.mark.slow  # each page takes a Chromium start (about 2-4 s)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
DEFAULT_WINDOW_HEIGHT = 1000


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """The report and the diff report, written as HTML and rendered once each."""
    from fbsim.experiments.report.model import report
    from fbsim.experiments.report.page import write_html

    folder = tmp_path_factory.mktemp("report_browser")
    rendered = {}
    rep = report(games=3000, players=[3, 4], exploit_dir=None)
    write_html(rep, folder / "report.html")
    rendered["report"] = render(folder / "report.html", png=folder / "report.png")
    diff = report(games=3000, players=[4], against_sets=["masks=1"], exploit_dir=None)
    write_html(diff, folder / "diff.html")
    rendered["diff"] = render(folder / "diff.html")
    return folder, rendered


@pytest.mark.parametrize("page", ["report", "diff"])
def test_report_page_loads_every_figure_without_browser_errors(pages, page):
    _, rendered = pages
    result = rendered[page]
    assert "Firebreak" in result["title"]
    assert len(result["images"]) >= 5, result["images"]
    broken = [img for img in result["images"]
              if not (img["complete"] and img["natural_width"] > 0)]
    assert broken == []
    assert result["figures_loaded"] is True
    assert result["errors"] == [], result["console"]


def test_full_page_screenshot_is_a_png_taller_than_the_window(pages):
    folder, rendered = pages
    data = (folder / "report.png").read_bytes()
    assert data[:8] == PNG_SIGNATURE
    width, height = struct.unpack(">II", data[16:24])  # IHDR: width, height
    assert width > 0
    assert height > DEFAULT_WINDOW_HEIGHT
    assert rendered["report"]["height"] > DEFAULT_WINDOW_HEIGHT


def test_harness_reports_broken_image_and_script_errors(tmp_path):
    page = tmp_path / "broken.html"
    page.write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>Firebreak (broken)</title>"
        "</head><body>\n"
        "<img src=\"data:image/png;base64,AAAA\" alt=\"broken figure\">\n"
        "<script>console.error(\"boom\"); throw new Error(\"kaboom\");</script>\n"
        "</body></html>\n",
        encoding="utf-8",
    )
    result = render(page)
    assert result["figures_loaded"] is False
    assert result["images"][0]["natural_width"] == 0
    assert result["errors"] != []
    messages = " ".join(e["message"] for e in result["errors"])
    assert "boom" in messages
    assert "kaboom" in messages


def test_cli_screenshot_renders_the_written_page(tmp_path, capsys):
    from fbsim.cli import main

    out, png = tmp_path / "r.html", tmp_path / "r.png"
    assert main(["report", "--games", "500", "--players", "3", "--out", str(out),
                 "--screenshot", str(png), "--quiet", "--exploit", "none"]) == 0
    assert png.read_bytes()[:8] == PNG_SIGNATURE
    assert str(png) in capsys.readouterr().out


def test_a_screenshot_without_a_browser_is_refused_before_the_page_is_written(tmp_path,
                                                                             capsys,
                                                                             monkeypatch):
    """No headless Chromium at the path it is looked for (FBSIM_CHROMIUM): one line naming
    it, exit 2, and neither the page nor its table nor a lock file written."""
    from fbsim.cli import main

    monkeypatch.setenv("FBSIM_CHROMIUM", str(tmp_path / "no-chromium"))
    out, png = tmp_path / "r.html", tmp_path / "r.png"
    code = main(["report", "--games", "500", "--players", "3", "--out", str(out),
                 "--screenshot", str(png), "--quiet", "--exploit", "none"])
    err = capsys.readouterr().err
    assert code == 2 and "--screenshot: headless Chromium not found" in err, err
    assert len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == []
