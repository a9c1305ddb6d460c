"""Headless-Chromium harness: open a local HTML page, check its figures, console and errors.

`render(html)` loads the file (file:// URL) in Debian's headless Chromium driven by Selenium
through /usr/bin/chromedriver (override with FBSIM_CHROMIUM and FBSIM_CHROMEDRIVER), waits for
the page and every <img> to finish loading, and returns what a reader would see: the title,
each image's load state, the browser console, the errors and the page height. With `png=` it
also saves a full-page screenshot. Selenium is imported lazily, so importing fbsim stays cheap.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from fbsim.errors import UsageError

DEFAULT_CHROMIUM = "/usr/bin/chromium"
DEFAULT_CHROMEDRIVER = "/usr/bin/chromedriver"
DEFAULT_HEIGHT = 1000
MAX_SCREENSHOT_HEIGHT = 16000
LOAD_TIMEOUT_S = 30.0

_INSTALL_HINT = (
    "install Debian's chromium and chromium-driver (apt-get install -y chromium chromium-driver)"
)

_CHROMIUM_ARGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)

# Installed before any page script runs (through the DevTools protocol), so it also catches
# errors thrown while the page loads; the browser log remains the main source of errors.
_ERROR_LISTENER = """
window.__fbsimErrors = window.__fbsimErrors || [];
window.addEventListener('error', function (e) {
  if (e.target && e.target !== window) { return; }  // resource errors: in the browser log
  window.__fbsimErrors.push({key: (e.error && e.error.message) || String(e.message),
                             text: String(e.message) + ' (' + e.filename + ':' + e.lineno + ')'});
}, true);
window.addEventListener('unhandledrejection', function (e) {
  var r = e.reason, m = (r && r.message) ? r.message : String(r);
  window.__fbsimErrors.push({key: m, text: 'unhandled rejection: ' + m});
});
"""

_IMAGES_JS = """
return Array.from(document.images).map(function (img) {
  var src = img.currentSrc || img.src || '';
  return {src_prefix: src.slice(0, 40), alt: img.alt || '', complete: !!img.complete,
          natural_width: img.naturalWidth | 0, natural_height: img.naturalHeight | 0};
});
"""

_READY_JS = """
return document.readyState === 'complete'
  && Array.from(document.images).every(function (img) { return img.complete; });
"""


def _executable(env: str, default: str) -> str:
    return os.environ.get(env) or default


def _check_tools() -> tuple[str, str]:
    chromium = _executable("FBSIM_CHROMIUM", DEFAULT_CHROMIUM)
    driver = _executable("FBSIM_CHROMEDRIVER", DEFAULT_CHROMEDRIVER)
    if not (os.path.isfile(chromium) and os.access(chromium, os.X_OK)):
        raise UsageError(f"headless Chromium not found at {chromium}: {_INSTALL_HINT}")
    if not (os.path.isfile(driver) and os.access(driver, os.X_OK)):
        raise UsageError(f"chromedriver not found at {driver}: {_INSTALL_HINT}")
    return chromium, driver


def check_browser() -> None:
    """What `render` needs, checked before a command plays its first game (`fbsim report
    --screenshot`): headless Chromium, its driver and the package selenium; a usage error
    naming what is missing."""
    _check_tools()
    try:
        import selenium  # noqa: F401
    except ImportError:
        raise UsageError(
            "the Python package selenium is missing: pip install -e '.[test]'") from None


def _fit_window(driver: Any, width: int) -> None:
    """Resize the window so that its viewport shows the whole page (at most 16000 px high).

    The window size includes the browser's frame (about 140 px in headless Chromium), and the
    new size can reflow the page, so measure and resize until the viewport fits.
    """
    for _ in range(4):
        inner, page = driver.execute_script(
            "return [window.innerHeight, document.documentElement.scrollHeight]")
        want = min(max(int(page), 1), MAX_SCREENSHOT_HEIGHT)
        if int(inner) == want:
            return
        outer = driver.get_window_size()["height"]
        driver.set_window_size(width, outer + want - int(inner))


def render(html: str | Path, png: str | Path | None = None, width: int = 1280) -> dict:
    """Open the local HTML file `html` in headless Chromium and report what it shows.

    Returns a dict: title, images (src_prefix, alt, complete, natural_width, natural_height),
    figures_loaded (at least one image and all loaded), console (every browser log entry as
    {level, message}), errors (SEVERE entries plus JavaScript errors caught in the page) and
    height (document scrollHeight). With `png`, saves a full-page screenshot there.
    """
    path = Path(html).resolve()
    if not path.is_file():
        raise UsageError(f"no such HTML file: {path}")
    chromium, driver_path = _check_tools()
    try:
        from selenium import webdriver
        from selenium.common.exceptions import TimeoutException, WebDriverException
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.support.ui import WebDriverWait
    except ImportError:
        raise UsageError(
            "the Python package selenium is missing: pip install -e '.[test]'") from None

    profile = tempfile.mkdtemp(prefix="fbsim-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in _CHROMIUM_ARGS:
        options.add_argument(arg)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={width},{DEFAULT_HEIGHT}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = None
    try:
        try:
            driver = webdriver.Chrome(service=Service(executable_path=driver_path),
                                      options=options)
        except WebDriverException as exc:
            first = (exc.msg or str(exc)).strip().splitlines()[0] if (exc.msg or str(exc)) else ""
            raise UsageError(f"could not start headless Chromium ({chromium} via {driver_path}): "
                             f"{first}") from exc
        injected = True
        try:
            driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument",
                                   {"source": _ERROR_LISTENER})
        except WebDriverException:
            injected = False
        driver.get(path.as_uri())
        if not injected:  # only catches errors from now on
            driver.execute_script(_ERROR_LISTENER)
        try:
            WebDriverWait(driver, LOAD_TIMEOUT_S, poll_frequency=0.05).until(
                lambda d: d.execute_script(_READY_JS))
        except TimeoutException:
            pass  # reported below: images left incomplete make figures_loaded False
        # Let late errors (timers, promise rejections) surface.
        time.sleep(0.1)

        title = driver.title
        images = driver.execute_script(_IMAGES_JS) or []
        height = int(driver.execute_script("return document.documentElement.scrollHeight"))
        js_errors = driver.execute_script("return window.__fbsimErrors || []") or []

        if png is not None:
            _fit_window(driver, width)
            height = int(driver.execute_script("return document.documentElement.scrollHeight"))
            Path(png).parent.mkdir(parents=True, exist_ok=True)
            shot = driver.get_screenshot_as_png()
            try:
                Path(png).write_bytes(shot)
            except OSError as e:
                raise UsageError(f"could not write the screenshot {png} "
                                 f"({e.strerror or e})") from None

        console = [{"level": str(e.get("level", "")), "message": str(e.get("message", ""))}
                   for e in driver.get_log("browser")]
    finally:
        if driver is not None:
            driver.quit()
        shutil.rmtree(profile, ignore_errors=True)

    errors = [e for e in console if e["level"] == "SEVERE"]
    for caught in js_errors:  # add those the browser log does not already show
        key = str(caught.get("key", ""))
        if not any(key and key in e["message"] for e in errors):
            errors.append({"level": "SEVERE", "message": f"page error: {caught.get('text', key)}"})
    figures_loaded = bool(images) and all(
        img["complete"] and img["natural_width"] > 0 for img in images)
    return {
        "title": title,
        "images": images,
        "figures_loaded": figures_loaded,
        "console": console,
        "errors": errors,
        "height": height,
    }
