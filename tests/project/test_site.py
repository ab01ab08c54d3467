"""The course site (`make site`): built offline, and sound in a real browser.

Without a browser: the build turns a broken link, a missing image, an unknown cell label and
a docstring that does not parse into one line each naming file and place; the API pages
describe every public name of ``minibert.__all__`` with its current docstring.

With headless Chromium (selenium and /usr/bin/chromedriver), over every page of site/, once
opened from disk (file://) with the network switched off and once served by
``python -m http.server``'s handler on 127.0.0.1 with every other host unresolvable: no
console error, no request that leaves the site or fails, every internal link and anchor
resolves, every image loads, every formula is typeset by the bundled MathJax. The explorer
answers inside the site (choosing a head redraws its lines); search finds "LayerNorm
backward", served and from disk. Screenshots of four pages go to build/site-screenshots/.

The site is built once by `make site` (CI runs it before the test passes); these tests skip
with one line when site/ is absent, or when the docs extra or the browser is missing.
"""

from __future__ import annotations

import functools
import html
import http.server
import inspect
import json
import re
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

import minibert

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "site"
SHOTS = ROOT / "build" / "site-screenshots"
sys.path.insert(0, str(ROOT / "docs" / "site"))

BUILT = (SITE / "index.html").is_file()
needs_site = pytest.mark.skipif(not BUILT, reason="site/ is not built (run make site)")


def _newest_source() -> tuple[float, str]:
    sources = [*(ROOT / "minibert").rglob("*.py"), *(ROOT / "docs").glob("*.md"),
               *(ROOT / "notebooks").glob("*.ipynb")]
    newest = max(sources, key=lambda p: p.stat().st_mtime)
    return newest.stat().st_mtime, str(newest.relative_to(ROOT))


# Tests that compare the site with the sources skip when a source changed after the build
# (CI builds the site from the clone it tests; a working copy may hold an older site/).
STALE = BUILT and _newest_source()[0] > (SITE / "index.html").stat().st_mtime
needs_fresh_site = pytest.mark.skipif(
    not BUILT or STALE, reason="site/ is not built, or older than "
    f"{_newest_source()[1] if BUILT else 'the sources'} (run make site)")

# The first explorer page of tiny-toy (one per probe of bank, bat and pitch).
EXPLORER = min((str(p.relative_to(SITE)) for p in SITE.glob("explorer/toy-bank-*.html")),
               default="explorer/toy-bank-1.html")
# The pages a reader starts from: opened from disk in a quick test that is not marked slow.
FILE_PAGES = ["index.html", "notebooks/03_attention.html", "docs/backprop.html",
              "api/minibert.functional.html", EXPLORER, "lecture/index.html",
              "lecture/deck.html", "assignment/workspace/README.html"]


# -- the build, without a browser -----------------------------------------------------------

def load_build_script():
    """docs/site/build.py as a module (its name would clash with the PyPI package build)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("minibert_site_build",
                                                  ROOT / "docs" / "site" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_plain_text_docstrings_read_as_meant():
    pytest.importorskip("docutils", reason="the site's build needs the docs extra (make site)")
    from minibert_site import plain_text_habits

    lines = ["The norm ||a - b|| of ``x|y``, torch's clip_grad_norm_ and f(*args, **kwargs).",
             "",
             "A **bold** word and *one* in italics.",
             "Outputs: name -> array, in data-section order; raises ValueError naming",
             "         the file",
             "Next paragraph."]
    out = plain_text_habits(lines)
    assert out[0] == ("The norm \\|\\|a - b\\|\\| of ``x|y``, torch's clip_grad_norm\\_ and "
                      "f(\\*args, \\*\\*kwargs).")
    assert out[1:3] == lines[1:3]  # reST that parses is left alone
    assert out[3:] == [lines[3], "", lines[4], "", lines[5]]


@pytest.mark.slow
def test_build_errors_are_one_line_naming_file_and_place(tmp_path, monkeypatch):
    pytest.importorskip("sphinx",
                        reason="the docs extra is not installed (pip install -e '.[docs]')")
    site_build = load_build_script()

    module = tmp_path / "modules" / "broken_docstrings.py"
    module.parent.mkdir()
    module.write_text('def unclosed():\n    """Returns ``x, never closed."""\n\n\n'
                      'def fine():\n    """Returns ``x`` and |x| as plain text."""\n',
                      encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(module.parent))
    stage = tmp_path / "stage"
    (stage / "_extra").mkdir(parents=True)
    (stage / "index.md").write_text(
        "# A page\n\nSee [the missing page](missing.md) and `[99-999]`.\n\n"
        "![a picture](nowhere.png)\n\n```{eval-rst}\n.. autofunction:: broken_docstrings.unclosed\n"
        ".. autofunction:: broken_docstrings.fine\n```\n", encoding="utf-8")
    with pytest.raises(site_build.BuildError) as caught:
        site_build.sphinx(stage, tmp_path / "out")
    lines = str(caught.value).splitlines()
    assert any(re.match(r"index\.md:3: WARNING: .*missing", line) for line in lines), lines
    assert any(re.match(r"index\.md:3: WARNING: cell label \[99-999\]", line) for line in lines)
    assert any(line.startswith("index.md:5: WARNING: image file not readable: nowhere.png")
               for line in lines), lines
    assert any("broken_docstrings.py:docstring of broken_docstrings.unclosed:1:" in line
               and "literal" in line for line in lines), lines
    assert not any("broken_docstrings.fine" in line for line in lines), lines
    assert len(lines) == 4, lines


@pytest.mark.slow
def test_a_mention_of_a_page_the_site_lacks_stops_the_build(tmp_path):
    """Mentions of pages become links by name; a name with no page is a dead link: one line."""
    pytest.importorskip("sphinx",
                        reason="the docs extra is not installed (pip install -e '.[docs]')")
    site_build = load_build_script()
    stage = tmp_path / "stage"
    (stage / "_extra").mkdir(parents=True)
    (stage / "docs").mkdir()
    (stage / "docs" / "here.md").write_text("# Here\n\nA page.\n", encoding="utf-8")
    (stage / "index.md").write_text(
        "# A page\n\nSee `docs/here.md`, then `docs/gone.md`.\n\nAnd notebook 99.\n\n"
        ":::{toctree}\ndocs/here.md\n:::\n", encoding="utf-8")
    with pytest.raises(site_build.BuildError) as caught:
        site_build.sphinx(stage, tmp_path / "out")
    lines = str(caught.value).splitlines()
    assert any(re.match(r"index\.md:3: WARNING: names the page docs/gone\.md", line)
               for line in lines), lines
    assert any(re.match(r"index\.md:5: WARNING: names notebook 99", line)
               for line in lines), lines
    assert len(lines) == 2, lines


def _notebook(cells) -> str:
    return json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5, "metadata": {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}}})


@pytest.mark.slow
def test_a_notebook_that_does_not_render_is_one_line_naming_its_cell(tmp_path):
    pytest.importorskip("sphinx",
                        reason="the docs extra is not installed (pip install -e '.[docs]')")
    site_build = load_build_script()
    stage = tmp_path / "stage"
    (stage / "_extra").mkdir(parents=True)
    (stage / "notebooks").mkdir()
    (stage / "index.md").write_text("# A page\n\n:::{toctree}\nnotebooks/99_x.ipynb\n:::\n",
                                    encoding="utf-8")
    code = {"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": 1,
            "source": "x", "outputs": [{"output_type": "display_data", "metadata": {},
                                        "data": {"image/png": "not base64!"}}]}
    text = {"cell_type": "markdown", "id": "c2", "metadata": {},
            "source": "# A notebook\n\n![gone](nothere.png)"}
    notebook = stage / "notebooks" / "99_x.ipynb"
    notebook.write_text(_notebook([text, code]), encoding="utf-8")
    with pytest.raises(site_build.BuildError) as caught:
        site_build.check_notebooks(stage)
    assert str(caught.value) == ("notebooks/99_x.ipynb: cell 2 (id c1): its image/png output "
                                 "is not base64")
    notebook.write_text("{not json", encoding="utf-8")
    with pytest.raises(site_build.BuildError, match=r"^notebooks/99_x\.ipynb: not a valid"):
        site_build.check_notebooks(stage)
    code["outputs"][0]["data"]["image/png"] = "iVBORw0KGgo="
    notebook.write_text(_notebook([text, code]), encoding="utf-8")
    site_build.check_notebooks(stage)
    with pytest.raises(site_build.BuildError) as caught:
        site_build.sphinx(stage, tmp_path / "out")
    assert str(caught.value).splitlines() == [
        "notebooks/99_x.ipynb: cell 1: WARNING: image file not readable: "
        "notebooks/nothere.png [image.not_readable]"]


def page_text(path: Path) -> str:
    text = re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8"))
    return re.sub(r"\s+", " ", html.unescape(text))


def words(text: str) -> str:
    """Text without reST marks, with plain quotes (Sphinx prints typographic ones)."""
    text = text.translate(str.maketrans("\u2018\u2019\u201c\u201d\u2013\u2014", "''\"\"--"))
    return re.sub(r"\s+", " ", re.sub(r"[`*\\]", "", text)).strip()


@needs_fresh_site
def test_api_pages_describe_every_public_name_with_its_current_docstring():
    index = (SITE / "api" / "minibert.html").read_text(encoding="utf-8")
    pages = {}
    for name in minibert.__all__:
        obj = getattr(minibert, name)
        if inspect.ismodule(obj):
            assert f'href="{obj.__name__}.html' in index, name
            continue
        match = re.search(r'href="([\w.]+\.html)#([\w.]+)"[^>]*><code[^>]*><span class="pre">'
                          + re.escape(name) + "<", index)
        assert match, f"api/minibert.html does not link {name}"
        page, anchor = match.groups()
        if page not in pages:
            pages[page] = ((SITE / "api" / page).read_text(encoding="utf-8"),
                           page_text(SITE / "api" / page))
        source, text = pages[page]
        assert f'id="{anchor}"' in source, (name, page, anchor)
        summary = words(inspect.getdoc(obj).split("\n\n")[0].split("\n")[0])
        # compared without spaces: markup splits "``peak_lr``," into two HTML elements
        assert "".join(summary.split()[:6]) in "".join(words(text).split()), (
            f"{name}: its docstring's first line is not on {page}; rebuild the site "
            "(make site)")


# -- the browser ----------------------------------------------------------------------------

def _webdriver():
    webdriver = pytest.importorskip("selenium.webdriver",
                                    reason="selenium is not installed (pip install selenium)")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    chromedriver = shutil.which("chromedriver")
    if chromium is None or chromedriver is None:
        pytest.skip("no chromium/chromedriver (apt-get install chromium chromium-driver)")
    return webdriver, chromium, chromedriver


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    if not BUILT:
        pytest.skip("site/ is not built (run make site)")
    handler = functools.partial(QuietHandler, directory=str(SITE))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser():
    if not BUILT:
        pytest.skip("site/ is not built (run make site)")
    webdriver, chromium, chromedriver = _webdriver()
    options = webdriver.ChromeOptions()
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--window-size=1280,900",
                 # one process: a navigation to another origin starts no new renderer
                 # that would outlive its test (tests/conftest.py checks)
                 "--single-process", "--no-zygote",
                 # no name but the loopback address resolves: nothing leaves the machine
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                 f"--user-data-dir={tempfile.mkdtemp(prefix='mb-site-chromium-')}"):
        options.add_argument(flag)
    options.binary_location = chromium
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=webdriver.ChromeService(chromedriver), options=options)
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    yield driver
    driver.quit()


def network(driver, offline: bool) -> None:
    driver.set_network_conditions(offline=offline, latency=0, download_throughput=-1,
                                  upload_throughput=-1)


SETTLE = """
const done = arguments[arguments.length - 1];
const images = Array.from(document.images);
images.forEach(function (img) { img.loading = "eager"; });
const loaded = Promise.all(images.map(function (img) {
  return img.decode().then(function () { return null; },
                           function () { return img.currentSrc || img.src; });
}));
const typeset = (window.MathJax && MathJax.startup && MathJax.startup.promise)
  ? MathJax.startup.promise.then(function () { return null; },
                                 function (e) { return String(e); })
  : Promise.resolve(document.querySelector(".math") ? "MathJax did not start" : null);
Promise.all([loaded, typeset]).then(function (results) {
  const maths = Array.from(document.querySelectorAll(".math"));
  done({
    brokenImages: results[0].filter(function (x) { return x !== null; }),
    mathError: results[1],
    maths: maths.length,
    untypeset: maths.filter(function (m) { return !m.querySelector("mjx-container"); })
                    .map(function (m) { return m.textContent.slice(0, 60); }),
    links: Array.from(document.querySelectorAll("a[href]"))
                .map(function (a) { return a.href; }),
    frames: Array.from(document.querySelectorAll("iframe[src]"))
                 .map(function (f) { return f.src; }),
  });
});
"""


def requests(driver) -> tuple[list[str], list[str]]:
    """The URLs the browser asked for since the last call, and the ones that failed."""
    asked, failed, urls = [], [], {}
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        method, params = message["method"], message.get("params", {})
        if method == "Network.requestWillBeSent":
            urls[params["requestId"]] = params["request"]["url"]
            asked.append(params["request"]["url"])
        elif method == "Network.responseReceived" and params["response"]["status"] >= 400:
            failed.append(f"{params['response']['status']} {params['response']['url']}")
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            failed.append(f"{params.get('errorText')} {urls.get(params['requestId'], '?')}")
    return asked, failed


@functools.cache
def anchors(path: Path) -> frozenset:
    return frozenset(re.findall(r'\bid="([^"]+)"', path.read_text(encoding="utf-8")))


def target_file(url: str, base: str) -> Path | None:
    """The file of site/ that an internal URL names (None for a URL outside the site)."""
    if not url.startswith(base):
        return None
    path = SITE / unquote(urlsplit(url).path[len(urlsplit(base).path):])
    return path / "index.html" if path.is_dir() else path


def check_page(driver, url: str, base: str) -> list[str]:
    """Open one page and return what is wrong with it, one line each."""
    requests(driver)
    driver.get_log("browser")
    driver.get(url)
    state = driver.execute_async_script(SETTLE)
    problems = []
    for entry in driver.get_log("browser"):
        if entry["level"] == "SEVERE":
            problems.append(f"console error: {entry['message'][:200]}")
    asked, failed = requests(driver)
    problems += [f"external request: {u}" for u in asked
                 if not u.startswith((base, "data:", "blob:", "about:"))]
    problems += [f"failed request: {f}" for f in failed]
    problems += [f"image does not load: {src}" for src in state["brokenImages"]]
    if state["mathError"]:
        problems.append(f"MathJax: {state['mathError']}")
    problems += [f"formula not typeset: {t!r}" for t in state["untypeset"]]
    for link in state["links"] + state["frames"]:
        path = target_file(link, base)
        if path is None:
            continue
        if not path.is_file():
            problems.append(f"link to a missing file: {link}")
            continue
        fragment = unquote(urlsplit(link).fragment)
        if fragment and path.suffix == ".html" and fragment not in anchors(path):
            problems.append(f"link to a missing anchor: {link}")
    return problems


def site_pages() -> list[str]:
    return sorted(str(p.relative_to(SITE)) for p in SITE.rglob("*.html")
                  if "_static" not in p.parts) if BUILT else []


@needs_site
@pytest.mark.slow
@pytest.mark.parametrize("how", ["served", "file"])
def test_every_page_loads_only_itself_and_is_whole(browser, server, how):
    """Served: only the loopback address resolves. From disk: the network is off."""
    base = server if how == "served" else SITE.as_uri() + "/"
    pages = site_pages()
    assert len(pages) > 60
    assert {"index.html", "search.html", "genindex.html"} <= set(pages)
    problems = {}
    maths = 0
    network(browser, offline=how == "file")
    try:
        for page in pages:
            found = check_page(browser, base + page, base)
            maths += browser.execute_script(
                "return document.querySelectorAll('mjx-container').length")
            if found:
                problems[page] = found
    finally:
        network(browser, offline=False)
    assert not problems, "\n".join(f"{page}: {line}" for page, lines in problems.items()
                                   for line in lines[:5])
    assert maths > 300  # backprop.md alone has over a hundred formulas, all typeset


@needs_site
@pytest.mark.parametrize("page", FILE_PAGES)
def test_pages_opened_from_disk_with_the_network_off(browser, page):
    if not (SITE / page).is_file():
        pytest.fail(f"site/{page} is missing")
    network(browser, offline=True)
    try:
        problems = check_page(browser, (SITE / page).as_uri(), SITE.as_uri() + "/")
    finally:
        network(browser, offline=False)
    assert not problems, "\n".join(problems)


@needs_fresh_site
def test_home_page_says_who_and_where_to_start_and_lists_notebooks_in_order(browser, server):
    browser.get(server + "index.html")
    text = browser.find_element("tag name", "body").text
    assert "Who it is for" in text and "Where to start" in text
    nav = browser.execute_script(
        "return Array.from(document.querySelectorAll('nav.bd-docs-nav a.reference'))"
        ".map(function (a) { return a.getAttribute('href'); })")
    notebooks = [h for h in nav if h.startswith("notebooks/") and h[10:12].isdigit()]
    expected = sorted(f"notebooks/{p.stem}.html" for p in (ROOT / "notebooks").glob("[0-9]*.ipynb"))
    assert notebooks == expected


@needs_fresh_site
def test_lecture_plan_links_its_cells_and_slides(browser, server):
    browser.get(server + "docs/lecture_50min.html")
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('a')).map(function (a) {"
        " return [a.textContent, a.getAttribute('href')]; })")
    cells = {text: href for text, href in links if re.fullmatch(r"\[\d\d-[\w-]+\]", text)}
    cited = set(re.findall(r"`(\[\d\d-[\w-]+\])`",
                           (ROOT / "docs" / "lecture_50min.md").read_text(encoding="utf-8")))
    assert cited and set(cells) == cited
    for label, href in cells.items():
        assert re.fullmatch(rf"\.\./notebooks/{label[1:3]}_\w+\.html#cell-{label[1:-1]}", href), (
            label, href)
    slides = [href for _, href in links if href and "deck.html#slide-" in href]
    assert slides and all(re.fullmatch(r"\.\./lecture/deck\.html#slide-\d+", h) for h in slides)
    label, href = sorted(cells.items())[0]
    browser.get(server + "docs/" + href)
    cell = browser.find_element("id", href.split("#")[1])
    assert cell.text.startswith(label) and f"# {label}" in cell.text


def _head_lines(browser):
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('line.mbx-line'))"
        ".map(function (l) { return l.getAttribute('stroke-opacity'); })")


@needs_site
def test_explorer_inside_the_site_answers(browser, server):
    from selenium.webdriver.support.ui import Select

    browser.get(server + EXPLORER)
    frame = browser.find_element("css selector", "iframe.mb-explorer")
    browser.switch_to.frame(frame)
    try:
        for _ in range(100):
            if browser.find_elements("css selector", "[data-ready='1']"):
                break
            time.sleep(0.05)
        browser.find_element("css selector", "button[data-view=head]").click()
        before = _head_lines(browser)
        Select(browser.find_element("css selector", "select[name=layer]")).select_by_value("1")
        Select(browser.find_element("css selector", "select[name=head]")).select_by_value("0")
        after = _head_lines(browser)
        assert before and after and before != after
    finally:
        browser.switch_to.default_content()
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


@needs_site
@pytest.mark.parametrize("how", ["served", "file"])
def test_search_finds_layernorm_backward(browser, server, how):
    base = server if how == "served" else SITE.as_uri() + "/"
    network(browser, offline=how == "file")
    try:
        browser.get(base + "search.html?q=LayerNorm+backward")
        for _ in range(200):
            results = browser.execute_script(
                "return Array.from(document.querySelectorAll('#search-results ul.search li a'))"
                ".map(function (a) { return a.getAttribute('href'); })")
            if results:
                break
            time.sleep(0.05)
    finally:
        network(browser, offline=False)
    assert any(r.startswith(("docs/backprop.html", "notebooks/02_embeddings_layernorm.html"))
               for r in results), results


@needs_site
def test_screenshots(browser, server):
    """Four pages as a reader sees them, for a person to look at (build/site-screenshots)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    shots = {"home": "index.html", "notebook": "notebooks/03_attention.html#cell-03-036",
             "api": "api/minibert.functional.html", "explorer": EXPLORER}
    for name, page in shots.items():
        browser.get(server + page)
        browser.execute_async_script(SETTLE)
        if name == "explorer":
            browser.execute_script(
                "document.querySelector('iframe.mb-explorer').scrollIntoView()")
            time.sleep(0.5)
        path = SHOTS / f"site_{name}.png"
        assert browser.save_screenshot(str(path)), name
        assert path.stat().st_size > 20_000, name  # a drawn page, not a blank one


# -- every screen, every role (round 2) -----------------------------------------------------

SCREENS = [(390, 844), (1280, 720), (1920, 1080)]
# Pages a reader meets first; the contrast and screen tests open each one.
SCREEN_PAGES = ["index.html", "notebooks/08_attention_heatmaps.html", "docs/backprop.html",
                "api/minibert.functional.html", "glossary.html", "lecture/index.html", EXPLORER]


def open_as(browser, url: str, width: int, height: int, mode: str) -> None:
    """Open url at a window size in light or dark mode (the theme's stored choice)."""
    browser.set_window_size(width, height)
    browser.get(url)
    browser.execute_script("localStorage.setItem('mode', arguments[0]);"
                           "localStorage.setItem('theme', arguments[0]);", mode)
    browser.get(url)
    browser.execute_async_script(SETTLE)
    assert browser.execute_script("return document.documentElement.dataset.theme") == mode


CONTRAST = """
function parse(s) {
  const m = /rgba?\\(([^)]+)\\)/.exec(s || "");
  if (!m) return null;
  const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
  return {rgb: p.slice(0, 3), a: p.length > 3 ? p[3] : 1};
}
function luminance(rgb) {
  const c = rgb.map(function (v) { v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
  return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
}
function background(el) {
  const layers = [];
  for (let e = el; e; e = e.parentElement) {
    const b = parse(getComputedStyle(e).backgroundColor);
    if (b && b.a > 0) { layers.push(b); if (b.a >= 1) break; }
  }
  let rgb = [255, 255, 255];
  for (let i = layers.length - 1; i >= 0; i--) {
    const l = layers[i];
    rgb = rgb.map(function (v, k) { return l.rgb[k] * l.a + v * (1 - l.a); });
  }
  return rgb;
}
const worst = [];
document.querySelectorAll("body *").forEach(function (el) {
  if (el.closest("svg, mjx-container, .MathJax, script, style, noscript, dialog:not([open])"))
    return;
  const text = Array.from(el.childNodes).filter(function (n) {
    return n.nodeType === 3 && n.textContent.trim(); }).map(function (n) {
    return n.textContent.trim(); }).join(" ");
  if (!text) return;
  const style = getComputedStyle(el);
  const box = el.getBoundingClientRect();
  if (style.visibility !== "visible" || box.width === 0 || box.height === 0 ||
      +style.opacity < 0.5 || el.closest("[hidden], [aria-hidden=true]")) return;
  let hiddenAncestor = false;
  for (let e = el; e; e = e.parentElement) {
    const s = getComputedStyle(e);
    if (s.display === "none" || +s.opacity === 0) { hiddenAncestor = true; break; }
  }
  if (hiddenAncestor) return;
  const bg = background(el);
  const fg = parse(style.color);
  const rgb = fg.rgb.map(function (v, k) { return v * fg.a + bg[k] * (1 - fg.a); });
  const a = luminance(rgb), b = luminance(bg);
  const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  if (ratio < 4.5) worst.push([Math.round(ratio * 100) / 100, el.tagName + "." +
    el.className, text.slice(0, 40)]);
});
return worst.slice(0, 5);
"""


def low_contrast(browser) -> list:
    """Text below 4.5:1 against its background, in the page and in its explorer frames."""
    found = browser.execute_script(CONTRAST)
    for index in range(len(browser.find_elements("css selector", "iframe.mb-explorer"))):
        browser.switch_to.frame(browser.find_elements("css selector", "iframe.mb-explorer")[index])
        try:
            for _ in range(100):
                if browser.find_elements("css selector", "[data-ready='1']"):
                    break
                time.sleep(0.05)
            found += [["frame"] + row for row in browser.execute_script(CONTRAST)]
        finally:
            browser.switch_to.default_content()
    return found


@needs_site
@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize("width,height", SCREENS)
def test_every_text_reads_and_every_page_fits(browser, server, mode, width, height):
    """Contrast >= 4.5:1 for every text (the embedded explorers too) and no page wider than
    the window, at a phone, a 1280 x 720 projector and a 1920 x 1080 screen."""
    problems = []
    try:
        for page in SCREEN_PAGES:
            open_as(browser, server + page, width, height, mode)
            problems += [f"{page}: contrast {row}" for row in low_contrast(browser)]
            wide = browser.execute_script("return document.documentElement.scrollWidth")
            if wide > width:
                problems.append(f"{page}: {wide} px wide in a {width} px window")
    finally:
        browser.set_window_size(1280, 900)
    assert not problems, "\n".join(problems)


@needs_site
@pytest.mark.slow
def test_no_page_is_wider_than_a_phone(browser):
    browser.set_window_size(390, 844)
    wide = {}
    try:
        for page in site_pages():
            browser.get((SITE / page).as_uri())
            width = browser.execute_script("return document.documentElement.scrollWidth")
            if width > 390:
                wide[page] = width
    finally:
        browser.set_window_size(1280, 900)
    assert not wide, wide


def _visible(browser, selector: str) -> bool:
    return browser.execute_script(
        "const e = document.querySelector(arguments[0]);"
        "return !!e && getComputedStyle(e).display !== 'none'"
        " && e.getBoundingClientRect().width > 0;",
        selector)


def _tap(browser, selector: str) -> None:
    buttons = [b for b in browser.find_elements("css selector", selector) if b.is_displayed()]
    assert buttons, f"no visible {selector}"
    buttons[0].click()
    time.sleep(0.4)


@needs_site
def test_menu_and_contents_buttons_open_and_collapse(browser, server):
    """pydata-sphinx-theme #2451: the visible buttons did nothing. On a phone they open the
    navigation and the page's contents; on a projector they collapse and restore them."""
    browser.get_log("browser")  # only this test's messages below
    try:
        open_as(browser, server + "docs/backprop.html", 390, 844, "light")
        _tap(browser, ".primary-toggle")  # the one a phone shows
        assert browser.execute_script("return document.getElementById("
                                      "'pst-primary-sidebar-modal').open")
        links = browser.execute_script(
            "return document.querySelectorAll('#pst-primary-sidebar-modal a.reference').length")
        assert links > 20
        browser.execute_script("document.getElementById('pst-primary-sidebar-modal').close()")
        _tap(browser, ".secondary-toggle")
        assert browser.execute_script("return document.getElementById("
                                      "'pst-secondary-sidebar-modal').open")
        browser.execute_script("document.getElementById('pst-secondary-sidebar-modal').close()")

        open_as(browser, server + "docs/backprop.html", 1280, 720, "light")
        assert _visible(browser, "#pst-primary-sidebar")
        _tap(browser, ".bd-header-article .primary-toggle")
        assert not _visible(browser, "#pst-primary-sidebar")
        browser.get(server + "docs/optim.html")  # the choice holds on the next page
        assert not _visible(browser, "#pst-primary-sidebar")
        _tap(browser, ".bd-header-article .primary-toggle")
        assert _visible(browser, "#pst-primary-sidebar")

        open_as(browser, server + "docs/backprop.html", 1920, 1080, "light")
        assert _visible(browser, "#pst-primary-sidebar")
        assert _visible(browser, "#pst-secondary-sidebar")  # wide enough for both
    finally:
        browser.execute_script("localStorage.clear()")
        browser.set_window_size(1280, 900)
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


@needs_site
def test_printed_code_wraps_at_the_page_edge(browser, server):
    browser.get(server + "docs/parallel.html")
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        cut = browser.execute_script(
            "return Array.from(document.querySelectorAll('pre')).filter(function (p) {"
            " return p.scrollWidth > p.clientWidth + 1; }).length")
        wrapping = browser.execute_script(
            "return getComputedStyle(document.querySelector('div.highlight pre')).whiteSpace")
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    assert wrapping == "pre-wrap" and cut == 0


FILE_NAME = re.compile(r"(^|/)[\w.-]+\.(png|jpe?g|svg|gif)$|^[0-9a-f]{20,}", re.I)


@needs_site
def test_every_image_says_what_it_shows():
    missing = []
    for page in site_pages():
        for tag in re.findall(r"<img\b[^>]*>", (SITE / page).read_text(encoding="utf-8")):
            alt = re.search(r'\balt="([^"]*)"', tag)
            if alt is None or not alt.group(1).strip() or FILE_NAME.search(alt.group(1)):
                missing.append(f"{page}: {tag[:120]}")
    assert not missing, "\n".join(missing[:20])


@needs_fresh_site
def test_notebooks_link_the_docs_and_docs_link_the_api():
    """Every page that mentions a docs page links one; every docs page that names an API
    object in code links the API reference."""
    unlinked = []
    for source in sorted((ROOT / "notebooks").glob("[0-9]*.ipynb")):
        cells = json.loads(source.read_text(encoding="utf-8"))["cells"]
        prose = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        mentioned = set(re.findall(r"docs/(\w+)\.md", prose))
        if not mentioned:
            continue
        html_text = (SITE / "notebooks" / f"{source.stem}.html").read_text(encoding="utf-8")
        linked = set(re.findall(r'href="\.\./docs/(\w+)\.html', html_text))
        if not mentioned & linked:
            unlinked.append(f"{source.name}: mentions {sorted(mentioned)}, links none")
    for source in sorted((ROOT / "docs").glob("*.md")):
        if not re.search(r"`(minibert\.[\w.]+|F\.\w+)(\(\))?`", source.read_text("utf-8")):
            continue
        html_text = (SITE / "docs" / f"{source.stem}.html").read_text(encoding="utf-8")
        if 'href="../api/' not in html_text:
            unlinked.append(f"docs/{source.name}: names the API, links none")
    assert not unlinked, "\n".join(unlinked)
    handout = (SITE / "assignment" / "workspace" / "README.html").read_text(encoding="utf-8")
    assert re.search(r'href="\.\./\.\./docs/\w+\.html', handout)


@needs_site
def test_the_site_is_organised_by_role():
    nav = (SITE / "index.html").read_text(encoding="utf-8")
    captions = re.findall(r'<p aria-level="2" class="caption" role="heading">'
                          r'<span class="caption-text">([^<]+)</span>', nav)
    assert captions[:2] == ["Course", "Teaching"], captions
    course = nav.split("Course</span>", 1)[1].split("caption-text", 1)[0]
    hrefs = re.findall(r'href="(notebooks/[^"#]+)"', course)
    assert hrefs[0] == "notebooks/README.html"  # the syllabus, then the notebooks in order
    numbered = [h for h in hrefs if h[10:12].isdigit()]
    assert numbered == sorted(numbered) and len(numbered) >= 14
    teaching = nav.split("Teaching</span>", 1)[1].split("caption-text", 1)[0]
    for page in ("lecture/index.html", "docs/lecture_50min.html", "docs/lecture_guide.html",
                 "assignment/index.html", "docs/assignments.html"):
        assert f'href="{page}"' in teaching, page
    assert not (SITE / "api" / "minibert.assignment.solutions.html").exists()
    assert "minibert.assignment.solutions" not in (SITE / "searchindex.js").read_text("utf-8")
    assert (SITE / "_modules" / "minibert" / "functional.html").is_file()  # [source] pages
    api = (SITE / "api" / "index.html").read_text(encoding="utf-8")
    assert api.count('class="caption-text"') >= 5  # the API's navigation, grouped
    assert "viewcode-link" in (SITE / "api" / "minibert.functional.html").read_text("utf-8")
    assert re.search(r"minibert \d+\.\d+\.\d+", nav)  # the version stamp
    titles = [re.search(r"<title>([^<]+)</title>", (SITE / p).read_text("utf-8")).group(1)
              for p in site_pages() if p.startswith("explorer/") and "pages/" not in p]
    assert len(titles) == len(set(titles)), titles
    size = sum(p.stat().st_size for p in SITE.rglob("*") if p.is_file())
    assert size <= 40e6, f"the site takes {size / 1e6:.1f} MB"
    mathjax = [p.name for p in (SITE / "_static" / "mathjax").glob("*.js")]
    assert mathjax == ["tex-svg.js"], mathjax


def _heading(page: Path) -> str:
    """A built page's first heading, as text."""
    found = re.search(r"<h1[^>]*>(.*?)</h1>", page.read_text(encoding="utf-8"), re.S)
    text = re.sub(r"<a class=\"headerlink\".*?</a>|<[^>]+>", "", found.group(1), flags=re.S)
    return " ".join(html.unescape(text).split())


@needs_fresh_site
def test_the_course_pdf_holds_the_whole_course_in_order():
    """site/minibert_course.pdf: the syllabus, the notebooks in order, the docs pages, the
    teaching material and the glossary, each a chapter of the outline in the site's order and
    starting a page of its own; its size sane, and the home page links it."""
    pypdf = pytest.importorskip("pypdf", reason="the course PDF needs the docs extra")
    import course_pdf

    build = load_build_script()
    pdf = SITE / course_pdf.FILE_NAME
    assert pdf.is_file(), "make site wrote no course PDF"
    assert 1e6 <= pdf.stat().st_size <= 6e6, f"{pdf.stat().st_size / 1e6:.1f} MB"
    reader = pypdf.PdfReader(pdf)
    assert 150 <= len(reader.pages) <= 800, len(reader.pages)
    chapters = course_pdf.chapters(SITE, build.notebook_pages(), build.docs_pages(),
                                   build.TEACHING_DOCS)
    outline = [entry for entry in reader.outline if not isinstance(entry, list)][1:]
    expected = [f"{n}. {_heading(path)}" for n, (_, _, path) in enumerate(chapters, start=1)]
    assert [entry.title for entry in outline] == expected
    starts = [reader.get_destination_page_number(entry) for entry in outline]
    assert starts == sorted(set(starts)), starts  # each chapter on pages of its own
    notebooks = [title for title in expected if re.match(r"\d+\. \d\d · ", title)]
    assert len(notebooks) == len(build.notebook_pages()) >= 15
    assert expected[0].endswith(_heading(SITE / "notebooks" / "README.html"))  # the syllabus
    assert expected[-1] == f"{len(expected)}. Glossary"
    assert not any("api/" in str(path) for _, _, path in chapters)  # the API is left out
    # formulas, code and pictures are there: backprop's chapter holds formula images and
    # text a reader can search
    backprop = next(n for n, (_, _, path) in enumerate(chapters) if path.name == "backprop.html")
    first, last = starts[backprop], starts[backprop + 1]
    text = " ".join(reader.pages[n].extract_text() for n in range(first, min(last, first + 3)))
    assert "layernorm" in text.lower() or "LayerNorm" in text
    images = sum(len([x for x in (page["/Resources"].get("/XObject") or {}).values()
                      if x.get_object().get("/Subtype") == "/Image"])
                 for page in reader.pages[first:last])
    assert images >= 50, images  # the derivations' formulas, drawn
    index = (SITE / "index.html").read_text(encoding="utf-8")
    assert f'href="{course_pdf.FILE_NAME}"' in index


def test_the_course_pdf_draws_nearly_every_formula_of_the_course():
    """matplotlib's mathtext draws the formulas of the docs and notebooks once the course
    PDF's rewrites are applied (\\tfrac, \\lvert, \\Big...); at most a handful are printed as
    their TeX source."""
    pytest.importorskip("xhtml2pdf", reason="the course PDF needs the docs extra")
    import course_pdf
    from matplotlib.mathtext import MathTextParser

    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md"))]
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        texts.append("\n".join("".join(c["source"]) for c in cells
                               if c["cell_type"] == "markdown"))
    formulas = []
    for text in texts:
        text = re.sub(r"```.*?```|`[^`\n]*`", "", text, flags=re.S)
        formulas += re.findall(r"\$\$(.+?)\$\$", text, flags=re.S)
        formulas += re.findall(r"(?<![\\$])\$([^$\n]+?)\$", re.sub(r"\$\$.+?\$\$", "", text,
                                                                 flags=re.S))
    assert len(formulas) >= 500
    parser = MathTextParser("path")
    failed = []
    for tex in formulas:
        try:
            parser.parse(f"${course_pdf.mathtext_source(tex)}$")
        except ValueError:
            failed.append(tex)
    assert len(failed) <= 5, failed


@needs_site
def test_exercises_are_boxed_with_their_answers_folded():
    page = (SITE / "notebooks" / "02_embeddings_layernorm.html").read_text(encoding="utf-8")
    assert page.count('class="section mb-exercise"') + page.count('mb-exercise"') >= 2
    assert page.count('<details class="mb-answer">') >= 2
    answers = [words(re.sub(r"<[^>]+>", "", html.unescape(a.split("</details>")[0])))
               for a in page.split('<details class="mb-answer">')[1:]]
    assert any("def my_layernorm_backward(dout" in answer for answer in answers)


# The right first hit for each query: the page (or glossary entry) that explains it.
SEARCHES = {
    "layernorm backward": ("docs/backprop.html", "notebooks/02_embeddings_layernorm.html"),
    "why 80/10/10": ("glossary.html#why-80-10-10", "docs/data.html",
                     "notebooks/06_pretraining_data.html"),
    "NSP": ("glossary.html#nsp", "notebooks/06_pretraining_data.html", "docs/data.html"),
    "gradient check": ("glossary.html#gradient-check", "docs/backprop.html"),
    "attention mask": ("glossary.html#attention-mask", "notebooks/03_attention.html"),
    "GELU": ("glossary.html#gelu", "notebooks/04_feedforward_block.html",
             "docs/backprop.html#gelu"),
    "AdamW": ("glossary.html#adamw", "docs/optim.html"),
    "MPI": ("glossary.html#mpi", "docs/parallel.html"),
}


@needs_site
@pytest.mark.parametrize("query", sorted(SEARCHES))
def test_search_puts_the_explaining_page_first(browser, server, query):
    from urllib.parse import quote_plus

    browser.get(server + "search.html?q=" + quote_plus(query))
    results = []
    for _ in range(200):
        results = browser.execute_script(
            "return Array.from(document.querySelectorAll('#search-results ul.search li a'))"
            ".map(function (a) { return a.getAttribute('href'); })")
        if results:
            break
        time.sleep(0.05)
    assert results, query
    assert results[0].startswith(SEARCHES[query]), (query, results[:5])


@needs_site
def test_every_explorer_tab_has_content_and_the_timeline_is_the_models_history(browser,
                                                                                server):
    browser.set_window_size(1280, 720)
    browser.get(server + EXPLORER)
    browser.switch_to.frame(browser.find_element("css selector", "iframe.mb-explorer"))
    try:
        for _ in range(100):
            if browser.find_elements("css selector", "[data-ready='1']"):
                break
            time.sleep(0.05)
        empty = []
        for view in ("head", "model", "neuron", "backward", "aggregate", "timeline"):
            browser.find_element("css selector", f"button[data-view={view}]").click()
            drawn = browser.execute_script(
                "const p = document.querySelector('[data-view=' + arguments[0] + ']:not(button)');"
                "return p ? p.querySelectorAll('svg, canvas').length : 0;", view)
            if not drawn:
                empty.append(view)
        browser.find_element("css selector", "button[data-view=timeline]").click()
        points = browser.execute_script(
            "return Array.from(document.querySelectorAll('svg.mbx-history polyline'))"
            ".map(function (l) { return l.getAttribute('points').split(' ').length; })")
        browser.find_element("css selector", "button[data-view=model]").click()
        sizes = browser.execute_script(
            "return Array.from(document.querySelectorAll('.mbx-job')).map(function (e) {"
            " return parseFloat(getComputedStyle(e).fontSize); })")
    finally:
        browser.switch_to.default_content()
        browser.set_window_size(1280, 900)
    assert not empty, f"empty tabs: {empty}"
    history = json.loads((minibert.reference_path("tiny-toy") / "history.json").read_text())
    held = [row for row in history if row.get("split") == "heldout"]
    assert points == [len(held), len(held)]
    assert sizes and min(sizes) >= 12  # readable on a 1280 x 720 projector
