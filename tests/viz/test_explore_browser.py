"""The explorer in a real browser: headless Chromium, network off, pages opened as files.

Needs Debian's chromium and chromium-driver and selenium (dev extra); skips with one line
when one is missing. One browser serves the whole module.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from test_explore import network_references

import minibert as mb
from minibert.viz.explorer import explore, query_key_scores

webdriver = pytest.importorskip("selenium.webdriver",
                                reason="selenium is not installed (pip install selenium)")
from selenium.common.exceptions import NoAlertPresentException  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
if CHROMIUM is None or CHROMEDRIVER is None:
    pytest.skip("no chromium/chromedriver found (apt-get install chromium chromium-driver)",
                allow_module_level=True)

MASKED = "the river [MASK] fast past the muddy bank."
PAIR = "she deposited the money at the bank."
HOSTILE = "</script><script>alert(1)</script> \"quoted\" & 'single' x\" onmouseover=\"alert(2)"


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    for flag in ("--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--window-size=1200,1000",
                 # one process: no renderer outlives a test (tests/conftest.py checks)
                 "--single-process", "--no-zygote",
                 f"--user-data-dir={tempfile.mkdtemp(prefix='mbx-chromium-')}"):
        options.add_argument(flag)
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=webdriver.ChromeService(CHROMEDRIVER), options=options)
    driver.set_network_conditions(offline=True, latency=0, download_throughput=0,
                                  upload_throughput=0)
    downloads = tempfile.mkdtemp(prefix="mbx-downloads-")
    driver.execute_cdp_cmd("Browser.setDownloadBehavior",
                           {"behavior": "allow", "downloadPath": downloads})
    driver.downloads = Path(downloads)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def toy():
    return mb.load_reference("tiny-toy")


def open_page(browser, page, path):
    """Save ``page``, open it as a file:// URL and wait until the script has drawn it."""
    page.save(path)
    assert not network_references(path.read_text(encoding="utf-8"))
    browser.get(path.as_uri())
    for _ in range(100):
        if browser.find_elements(By.CSS_SELECTOR, "[data-ready='1']"):
            return
        time.sleep(0.05)
    raise AssertionError("the page never finished drawing: "
                         f"{browser.find_element(By.TAG_NAME, 'body').text[:200]}")


def errors(browser) -> list:
    return [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]


def view(browser, name):
    browser.find_element(By.CSS_SELECTOR, f"button[data-view={name}]").click()


def choose(browser, name, value):
    Select(browser.find_element(By.CSS_SELECTOR, f"select[name={name}]")).select_by_value(
        str(value))


@pytest.fixture(scope="module")
def toy_page(browser, toy, tmp_path_factory):
    model, tokenizer = toy
    encoding = tokenizer(MASKED, PAIR, return_tensors="np")
    numbers = query_key_scores(model, encoding)
    # A timeline of two snapshots: the untrained model and the reference checkpoint.
    untrained = mb.BertForPreTraining(model.config, seed=0).eval()
    steps = [np.stack([a[0] for a in m(**encoding, output_attentions=True).attentions])
             for m in (untrained, model)]
    timeline = {"steps": np.array([0, 6000]), "attentions": np.stack(steps),
                "tokens": np.array(tokenizer.convert_ids_to_tokens(
                    encoding["input_ids"][0].tolist())),
                "token_type_ids": encoding["token_type_ids"][0]}
    page = explore(model, tokenizer, MASKED, PAIR, timeline=timeline)
    open_page(browser, page, tmp_path_factory.mktemp("explore") / "toy.html")
    return numbers


def attributes(browser, selector, name):
    """One attribute of every element matching ``selector``, in one round trip."""
    return browser.execute_script(
        "var name = arguments[1]; return Array.from(document.querySelectorAll(arguments[0]))"
        ".map(function (e) { return e.getAttribute(name); })", selector, name)


def test_head_view_lines_and_hover_weights(browser, toy_page):
    view(browser, "head")
    assert browser.find_elements(By.CSS_SELECTOR, "text.mbx-query")
    choose(browser, "layer", 0)
    choose(browser, "head", 0)
    before = attributes(browser, "line.mbx-line", "stroke-opacity")
    choose(browser, "layer", 1)
    choose(browser, "head", 1)
    after = attributes(browser, "line.mbx-line", "stroke-opacity")
    assert before and after and before != after
    attentions = toy_page["attentions"]  # (L, N, T, T)
    query = 3
    token = browser.find_elements(By.CSS_SELECTOR, "text.mbx-query")[query]
    ActionChains(browser).move_to_element(token).perform()
    shown = {int(w.get_attribute("data-key")): w.text
             for w in browser.find_elements(By.CSS_SELECTOR, "text.mbx-weight")}
    assert len(shown) == attentions.shape[-1]
    for key, text in shown.items():
        assert text == f"{attentions[1, 1, query, key]:.3f}", (key, text)
    # hovering isolates the token's lines
    assert set(attributes(browser, "line.mbx-line", "data-query")) == {"3"}
    assert not errors(browser)


def test_model_view_has_every_head(browser, toy_page):
    view(browser, "model")
    layers, heads = toy_page["attentions"].shape[:2]  # (L, N, T, T) of the reference
    assert len(browser.find_elements(By.CSS_SELECTOR, "canvas.mbx-thumb")) == (
        layers * heads)
    browser.find_elements(By.CSS_SELECTOR, ".mbx-cellbox")[1].click()
    assert "layer 0 · head 1" in browser.find_element(By.CSS_SELECTOR, "svg.mbx-heatmap").text
    assert not errors(browser)


def test_neuron_view_shows_the_arrays_dot_products(browser, toy_page):
    view(browser, "neuron")
    choose(browser, "layer", 1)
    choose(browser, "head", 0)
    choose(browser, "query", 3)
    shown = [w.text for w in browser.find_elements(By.CSS_SELECTOR, "text.mbx-qk")]
    expected = [f"{v:.2f}" for v in np.round(toy_page["scores"][1, 0, 3], 2)]
    assert shown == expected
    assert not errors(browser)


def test_timeline_slider_changes_the_picture(browser, toy_page):
    view(browser, "timeline")
    first = attributes(browser, "rect.mbx-cell", "fill")
    slider = browser.find_element(By.CSS_SELECTOR, "input[name=step]")
    browser.execute_script("arguments[0].value = 1; arguments[0].dispatchEvent("
                           "new Event('input'))", slider)
    assert browser.find_element(By.CSS_SELECTOR, ".mbx-step").text == "step 6000"
    assert first and attributes(browser, "rect.mbx-cell", "fill") != first
    assert not errors(browser)


def test_backward_and_aggregate_views(browser, toy_page):
    view(browser, "backward")
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.mbx-heatmap")) == 2
    view(browser, "aggregate")
    choose(browser, "source", "rollout")
    assert "rollout up to layer" in browser.find_element(By.CSS_SELECTOR, "svg.mbx-heatmap").text
    assert not errors(browser)


def test_the_backward_view_says_why_it_is_empty_and_explains_itself(browser, toy,
                                                                    tmp_path):
    model, tokenizer = toy
    sentence = "she deposited the money at the bank before noon."  # the checklist's
    open_page(browser, explore(model, tokenizer, sentence), tmp_path / "plain.html")
    view(browser, "backward")
    note = browser.find_element(By.CSS_SELECTOR, ".mbx-note:last-of-type").text
    assert "no [MASK] and no second sentence" in note and "needs a BERT" not in note
    open_page(browser, explore(model, tokenizer, MASKED), tmp_path / "masked.html")
    view(browser, "backward")
    text = browser.find_element(By.CSS_SELECTOR, "[data-view=backward]:not(button)").text
    assert "Left: where each query looks" in text and "gradient × input" in text
    assert not errors(browser)


def test_the_timeline_tab_draws_the_models_own_history(browser, toy, tmp_path):
    model, tokenizer = toy
    folder = mb.reference_path("tiny-toy")
    page = explore(model, tokenizer, MASKED, history=folder)
    open_page(browser, page, tmp_path / "history.html")
    view(browser, "timeline")
    history = json.loads((folder / "history.json").read_text(encoding="utf-8"))
    held = [row for row in history if row.get("split") == "heldout"]
    lengths = browser.execute_script(
        "return Array.from(document.querySelectorAll('svg.mbx-history polyline'))"
        ".map(function (l) { return l.getAttribute('points').split(' ').length; })")
    assert lengths == [len(held), len(held)]
    legend = browser.find_element(By.CSS_SELECTOR, "svg.mbx-history").text
    assert f"{held[-1]['masked_lm_accuracy']:.2f} at step {held[-1]['step']}" in legend
    assert not errors(browser)


def test_download_buttons_write_svg_and_png(browser, toy_page):
    view(browser, "head")
    choose(browser, "source", "head")
    choose(browser, "layer", 1)
    choose(browser, "head", 1)
    browser.find_element(By.CSS_SELECTOR, "button[name=download-svg]").click()
    browser.find_element(By.CSS_SELECTOR, "button[name=download-png]").click()
    svg, png = (browser.downloads / f"minibert-head-1-1.{suffix}" for suffix in ("svg", "png"))
    for _ in range(100):
        if svg.is_file() and png.is_file():
            break
        time.sleep(0.05)
    labels = [element.text for element in ET.parse(svg).getroot().iter()
              if element.tag.endswith("text")]
    assert "[MASK]" in labels and "layer 1 · head 1" in labels
    assert png.read_bytes().startswith(b"\x89PNG")
    assert not errors(browser)


def test_hostile_text_stays_text(browser, tmp_path):
    # A vocabulary learned from the hostile text itself, so that "<", '"', "&" and "'" are
    # tokens of their own: labels drawn in the SVG, not [UNK].
    tokenizer = mb.BertTokenizer.train([HOSTILE, "a & b"] * 4, vocab_size=120)
    model = mb.BertModel(mb.BertConfig.preset("tiny", vocab_size=len(tokenizer)), seed=0)
    page = explore(model, tokenizer, HOSTILE, "a & b")
    open_page(browser, page, tmp_path / "hostile.html")
    tokens = tokenizer.convert_ids_to_tokens(tokenizer(HOSTILE, "a & b")["input_ids"])
    assert {"<", ">", '"', "&", "'"} <= set(tokens)
    assert [t.text for t in browser.find_elements(By.CSS_SELECTOR, "text.mbx-query")] == tokens
    for name in ("model", "neuron", "aggregate"):  # every view that draws the labels
        view(browser, name)
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018
    assert browser.find_element(By.TAG_NAME, "h3").text == f"BERT: {HOSTILE} / a & b"
    assert browser.title == f"BERT: {HOSTILE} / a & b"
    assert len(browser.find_elements(By.TAG_NAME, "script")) == 2
    assert not browser.find_elements(By.CSS_SELECTOR, "[onmouseover]")
    assert not errors(browser)


def test_merged_words_follow_the_static_figures(browser, toy, tmp_path):
    """Hidden special tokens and merged pieces: the rules of viz.for_display."""
    from minibert.viz.attention import attention_example, for_display

    model, tokenizer = toy
    text, pair = "the fishermen sat on the riverbank.", "bankers overflowed."
    page = explore(model, tokenizer, text, pair, backward="none")
    open_page(browser, page, tmp_path / "merged.html")
    choose(browser, "layer", 1)
    choose(browser, "head", 0)
    choose(browser, "special", "renormalize")
    browser.find_element(By.CSS_SELECTOR, "input[name=merge]").click()
    encoding = tokenizer(text, pair, return_tensors="np")
    out = model(**encoding, output_attentions=True)
    tokens = tokenizer.convert_ids_to_tokens(encoding["input_ids"][0].tolist())
    example = attention_example(out.attentions, tokens, encoding["token_type_ids"])
    shown = for_display(example.attentions[1, 0], example, hide_special="renormalize",
                        merge_pieces=True)
    labels = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "text.mbx-query")]
    assert labels == shown.labels and "fishermen" in labels and "riverbank" in labels
    query = labels.index("fishermen")
    ActionChains(browser).move_to_element(
        browser.find_elements(By.CSS_SELECTOR, "text.mbx-query")[query]).perform()
    weights = {int(w.get_attribute("data-key")): float(w.text)
               for w in browser.find_elements(By.CSS_SELECTOR, "text.mbx-weight")}
    # the page works from probabilities rounded to 3 decimals: sums of pieces and the
    # renormalization carry that rounding, a few thousandths at most
    expected = shown.matrices[query]
    assert max(abs(weights[k] - expected[k]) for k in weights) < 5e-3
    assert not errors(browser)


def test_two_notebook_displays_on_one_page_both_draw(browser, toy, tmp_path):
    """What a notebook does: the display bundle's HTML, twice, inside one page."""
    model, tokenizer = toy
    page = explore(model, tokenizer, "the bank.", backward="none")
    fragments = [page._repr_mimebundle_()["text/html"] for _ in range(2)]
    path = tmp_path / "notebook.html"
    path.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
                    + "".join(fragments) + "</body></html>", encoding="utf-8")
    assert not network_references(path.read_text(encoding="utf-8"))
    browser.get(path.as_uri())
    for _ in range(100):
        if len(browser.find_elements(By.CSS_SELECTOR, "[data-ready='1']")) == 2:
            break
        time.sleep(0.05)
    assert len(browser.find_elements(By.CSS_SELECTOR, "[data-ready='1']")) == 2
    assert not browser.find_elements(By.TAG_NAME, "img")  # the static image was replaced
    assert not errors(browser)


def test_the_page_opens_on_a_head_with_a_job_and_fills_a_projector(browser, toy, tmp_path):
    from minibert.viz.explorer import opening_head

    model, tokenizer = toy
    page = explore(model, tokenizer, "she deposited the money at the bank before noon.")
    opening = opening_head({job: np.array(v) for job, v in page.data["jobs"].items()})
    try:
        browser.set_window_size(1920, 1080)
        open_page(browser, page, tmp_path / "opening.html")
        selected = {name: Select(browser.find_element(
            By.CSS_SELECTOR, f"select[name={name}]")).first_selected_option.get_attribute("value")
            for name in ("layer", "head")}
        assert selected == {"layer": str(opening["layer"]), "head": str(opening["head"])}
        assert (f"layer {opening['layer']} · head {opening['head']}" in
                browser.find_element(By.CSS_SELECTOR, "svg.mbx-headview").text)
        assert opening["job"] in browser.find_element(By.CSS_SELECTOR, ".mbx-opening").text
        svg = browser.find_element(By.CSS_SELECTOR, "svg.mbx-headview")
        drawn = int(svg.get_attribute("width"))
        assert svg.size["width"] > 1.5 * drawn  # scaled up to the projector's window
        browser.set_window_size(800, 900)
        assert svg.size["width"] <= 800
        assert browser.execute_script(
            "return document.documentElement.scrollWidth <= window.innerWidth + 1")
        # Colours run as the slides': the largest attention is the lightest cell.
        view(browser, "aggregate")
        fills = browser.execute_script(
            "return Array.from(document.querySelectorAll('rect.mbx-cell')).map(function (r) {"
            " return [r.getAttribute('fill'), r.querySelector('title').textContent]; })")
        values = [(float(title.rsplit(": ", 1)[1]), fill) for fill, title in fills]
        low, high = min(values)[1], max(values)[1]

        def lightness(fill):
            return sum(int(c) for c in fill[4:-1].split(","))

        assert lightness(high) > lightness(low) + 200
        assert not errors(browser)
    finally:
        browser.set_window_size(1200, 1000)
