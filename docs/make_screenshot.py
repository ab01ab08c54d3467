"""Regenerate docs/images/explorer_head_view.png: the explorer's head view in a real browser.

    python docs/make_screenshot.py [--model tiny-toy] [--out docs/images/explorer_head_view.png]

Builds the explorer page of the model on the README's masked sentence and a second
segment, opens it in headless Chromium (network off), chooses the best previous-token head
by its job score (``viz.head_job_scores``), points at the [MASK] query so that only its
lines show, and saves the top of the window as a PNG. Needs Debian's chromium and
chromium-driver and selenium (the dev extra).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import minibert as mb
from minibert import viz
from minibert.viz.explorer import explore

MASKED = "the river ran fast past the muddy [MASK]."
PAIR = "she deposited the money at the bank."
SIZE = (900, 615)  # the part of the window kept, in CSS pixels


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="tiny-toy", help="a model folder or tiny-toy")
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).parent / "images" / "explorer_head_view.png")
    args = parser.parse_args(argv)
    try:
        from selenium import webdriver
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select
    except ImportError:
        print("selenium is not installed (pip install selenium)", file=sys.stderr)
        return 1
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        print("no chromium/chromedriver (apt-get install chromium chromium-driver)",
              file=sys.stderr)
        return 1

    if Path(args.model).is_dir():
        model = mb.BertForPreTraining.from_pretrained(args.model).eval()
        tokenizer = mb.BertTokenizer.from_pretrained(args.model)
    else:
        model, tokenizer = mb.load_reference(args.model)
    jobs = viz.head_job_scores(model, tokenizer, [(MASKED, PAIR)])
    layer, head = viz.best_head(jobs, "previous token")
    work = Path(tempfile.mkdtemp(prefix="mb-screenshot-"))
    page = work / "page.html"
    explore(model, tokenizer, MASKED, PAIR).save(page)

    options = webdriver.ChromeOptions()
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                 "--disable-background-networking", "--no-first-run",
                 f"--window-size={SIZE[0]},{SIZE[1] + 200}",
                 f"--user-data-dir={work / 'profile'}"):
        options.add_argument(flag)
    options.binary_location = chromium
    driver = webdriver.Chrome(service=webdriver.ChromeService(driver_path), options=options)
    try:
        driver.set_network_conditions(offline=True, latency=0, download_throughput=0,
                                      upload_throughput=0)
        driver.get(page.as_uri())
        for _ in range(100):
            if driver.find_elements(By.CSS_SELECTOR, "[data-ready='1']"):
                break
            time.sleep(0.05)
        Select(driver.find_element(By.CSS_SELECTOR, "select[name=layer]")).select_by_value(
            str(layer))
        Select(driver.find_element(By.CSS_SELECTOR, "select[name=head]")).select_by_value(
            str(head))
        mask = [q for q in driver.find_elements(By.CSS_SELECTOR, "text.mbx-query")
                if q.text == "[MASK]"][0]
        ActionChains(driver).move_to_element(mask).perform()
        time.sleep(0.2)
        shot = work / "window.png"
        driver.save_screenshot(str(shot))
    finally:
        driver.quit()
    from matplotlib.image import imread, imsave

    pixels = imread(shot)[:SIZE[1], :SIZE[0]]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    temporary = args.out.with_name(f".{args.out.name}.tmp.png")
    imsave(temporary, pixels)
    temporary.replace(args.out)
    print(f"layer {layer}, head {head} (best previous-token head); wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
