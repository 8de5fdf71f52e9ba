#!/usr/bin/env python3
"""`phantora sweep`'s index.html in a real browser (headless Chromium): every chart the page
should show is there, decoded and laid out, and is the PNG gnuplot drew.

The page is copied with a small script added at its end that, once the page has loaded, writes
each image's state (decoded size, rendered size) into the DOM; `chromium --dump-dom` prints the
DOM, and this script reads the record back. Expected: three images, with the ids the sweep
gives its charts, each decoded at gnuplot's canvas size (tools/src/sweep_plots.cpp: `set terminal
pngcairo size 800,500`), rendered at a width above zero, and carrying the same bytes as the PNG
file of the same name next to the page.

Usage: sweep_browser_check.py CHROMIUM SWEEP_OUT WORKDIR   (SWEEP_OUT: a finished sweep's --out)
Python 3.11+ standard library only.
"""
import base64
import html
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

chromium, sweep_out, work = sys.argv[1:4]
CHARTS = ["step_time", "throughput_per_gpu", "scaling_efficiency"]
CANVAS = (800, 500)  # gnuplot's pngcairo size in sweep_plots.cpp
failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond


def png_size(data):
    """Width and height from a PNG's IHDR chunk (the first, right after the signature)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", data[16:24])


PROBE = """<script>
window.addEventListener("load", () => {
  const record = [...document.images].map(img => {
    const box = img.getBoundingClientRect();
    return {id: img.id, complete: img.complete, natural: [img.naturalWidth, img.naturalHeight],
            shown: [box.width, box.height]};
  });
  const out = document.createElement("pre");
  out.id = "phantora-browser-check";
  out.textContent = JSON.stringify(record);
  document.body.appendChild(out);
});
</script>
"""

page = open(os.path.join(sweep_out, "index.html"), encoding="utf-8").read()
check("</body>" in page, "index.html ends its body")
os.makedirs(work, exist_ok=True)
probe_page = os.path.join(work, "index_probe.html")
with open(probe_page, "w", encoding="utf-8") as f:
    f.write(page.replace("</body>", PROBE + "</body>"))

profile = tempfile.mkdtemp(prefix="chromium-profile-", dir=work)
# --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start; the page is ours.
cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
       f"--user-data-dir={profile}", "--virtual-time-budget=10000", "--dump-dom",
       "file://" + os.path.abspath(probe_page)]
print("$", " ".join(cmd), flush=True)
proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
shutil.rmtree(profile, ignore_errors=True)
if not check(proc.returncode == 0, f"chromium exits 0 (got {proc.returncode})"):
    print(proc.stderr[-4000:])
m = re.search(r'<pre id="phantora-browser-check">(.*?)</pre>', proc.stdout, re.S)
if not check(m is not None, "the page loaded and the probe wrote its record"):
    print(proc.stdout[-4000:], proc.stderr[-4000:])
    sys.exit(1)
images = {img["id"]: img for img in json.loads(html.unescape(m.group(1)))}
print(json.dumps(images, indent=1))
check(sorted(images) == sorted(CHARTS), f"the page has exactly the charts {CHARTS} ({sorted(images)})")
embedded = dict(re.findall(r'<img id="([a-z_]+)"[^>]* src="data:image/png;base64,([^"]+)"', page))
for name in CHARTS:
    img = images.get(name)
    if not check(img is not None, f"{name}: in the page"):
        continue
    check(img["complete"] and img["natural"] == list(CANVAS),
          f"{name}: decoded by the browser at gnuplot's {CANVAS[0]}x{CANVAS[1]} ({img['natural']})")
    check(img["shown"][0] > 0 and img["shown"][1] > 0, f"{name}: laid out visibly ({img['shown']})")
    with open(os.path.join(sweep_out, f"{name}.png"), "rb") as f:
        file_bytes = f.read()
    check(png_size(file_bytes) == CANVAS, f"{name}.png is a {CANVAS[0]}x{CANVAS[1]} PNG")
    check(name in embedded and base64.b64decode(embedded[name]) == file_bytes,
          f"{name}: the page shows {name}.png itself")

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("sweep page: every chart shown")
