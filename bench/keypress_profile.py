"""Where a keypress's time goes (issue 51): `python -m bench.keypress_profile [PRESSES]` profiles the pages that
`browser_keypress` times, in Chromium, and prints per page

- the phases of a keypress, medians in ms from the keydown (times taken inside the page): the rerun's first
  message, the first tile's message, the tile's new text on screen, and the rerun's last message;
- what one rerun sends: its messages by element kind (a caption and a Markdown block are both `markdown`) with
  their count and bytes;
- the browser's CPU from the keydown until Playwright sees the tile, by the frontend's script file (Chrome's
  sampling profiler; `(program)`, `(garbage collector)` and native calls such as `getBBox` are the browser's own).
  Playwright looks for the tile between the page's tasks, so the task that drew the tile, and often the next one,
  are in it (the reference page's plotly redraws are).

A diagnosis, not a benchmark: nothing is compared or gated, and the figures swing with the machine's load. Needs
/usr/bin/chromium, like `bench.browser_bench`, whose servers, pages and keypress it reuses.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench import browser_bench
from bench.served import serve

PRESSES = 8
SAMPLING_US = 200  # the CPU profiler's interval
SHOWN_FILES = 12  # script files listed, the busiest first
# Notes when each websocket message reaches the page (its arrival and size), beside `browser_bench.WATCH`.
MESSAGES_JS = """
(() => {
  window.__messages = [];
  const Native = window.WebSocket;
  window.WebSocket = function (...args) {
    const socket = new Native(...args);
    socket.addEventListener('message', (event) => window.__messages.push(performance.now()));
    return socket;
  };
  window.WebSocket.prototype = Native.prototype;
  Object.assign(window.WebSocket, Native);
})();
"""


@dataclass
class Census:
    """What one rerun sent: messages by kind, and their bytes."""

    count: Counter[str] = field(default_factory=Counter)
    size_bytes: Counter[str] = field(default_factory=Counter)


def kind(message: ForwardMsg) -> str:
    """A message's kind: an element's type (`metric`, `markdown`, `plotly_chart`…), `block:` and a block's type,
    or the message's own type (`new_session`, `navigation`…)."""
    what = message.WhichOneof("type")
    if what != "delta":
        return str(what)
    delta = message.delta
    if delta.WhichOneof("type") == "new_element":
        return str(delta.new_element.WhichOneof("type"))
    if delta.WhichOneof("type") == "add_block":
        return f"block:{delta.add_block.WhichOneof('type')}"
    return f"delta:{delta.WhichOneof('type')}"


def census(frames: list[bytes]) -> Census:
    """Count the serialized forward messages `frames` by `kind`, with their bytes."""
    result = Census()
    for frame in frames:
        message = ForwardMsg()
        message.ParseFromString(frame)
        name = kind(message)
        result.count[name] += 1
        result.size_bytes[name] += len(frame)
    return result


def tile_index(frames: list[bytes]) -> int | None:
    """The position of the first metric (the first tile) among the serialized messages, None without one."""
    for index, frame in enumerate(frames):
        message = ForwardMsg()
        message.ParseFromString(frame)
        if kind(message) == "metric":
            return index
    return None


def cpu_by_file(profile: dict[str, Any]) -> Counter[str]:
    """Microseconds of a CDP `Profiler.stop` profile by script file (the last part of its URL), or by the node's
    function in parentheses for the browser's own work."""
    nodes = {node["id"]: node["callFrame"] for node in profile["nodes"]}
    spent: Counter[str] = Counter()
    deltas = profile["timeDeltas"][1:] + [0]
    for sample, delta_us in zip(profile["samples"], deltas, strict=True):
        frame = nodes[sample]
        function = frame["functionName"]
        native = function if function.startswith("(") else f"({function})"
        spent[frame["url"].rsplit("/", 1)[-1] or native] += delta_us
    return spent


@dataclass
class Profile:
    """A page's keypresses: phases in ms from the keydown, the last rerun's census, CPU µs by file (summed)."""

    phases_ms: dict[str, list[float]] = field(default_factory=lambda: {
        "first message": [], "tile message": [], "tile on screen": [], "last message": []})
    census: Census = field(default_factory=Census)
    cpu_us: Counter[str] = field(default_factory=Counter)
    presses: int = 0


def _press(page, cdp, frames: list[bytes], profile: Profile) -> None:
    """One ArrowRight on the focused slider, profiled from the keydown until the tile changes."""
    frames.clear()
    page.evaluate("window.__messages = []")
    cdp.send("Profiler.start")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("window.__tileAt !== null", timeout=browser_bench.TIMEOUT_MS)
    profile.cpu_us.update(cpu_by_file(cdp.send("Profiler.stop")["profile"]))
    page.wait_for_selector(browser_bench.IDLE_APP, state="attached", timeout=browser_bench.TIMEOUT_MS)
    page.wait_for_timeout(200)
    key_ms, tile_ms = page.evaluate("[window.__keyAt, window.__tileAt]")
    arrivals = page.evaluate("window.__messages")
    index = tile_index(frames)
    profile.phases_ms["first message"].append(arrivals[0] - key_ms)
    if index is not None and index < len(arrivals):
        profile.phases_ms["tile message"].append(arrivals[index] - key_ms)
    profile.phases_ms["tile on screen"].append(tile_ms - key_ms)
    profile.phases_ms["last message"].append(arrivals[-1] - key_ms)
    profile.census = census(frames)
    profile.presses += 1


def _keep_frames(page, frames: list[bytes]) -> None:
    """Append every binary frame the page's websockets receive (Streamlit's forward messages) to `frames`."""

    def watch(socket) -> None:
        socket.on("framereceived", lambda payload: frames.append(payload) if isinstance(payload, bytes) else None)

    page.on("websocket", watch)


def profiles(presses: int = PRESSES) -> dict[str, Profile]:
    """Serve both pages, open each as `browser_bench` does and profile `presses` keypresses on each, alternating."""
    if not browser_bench.CHROMIUM.exists():
        raise SystemExit(f"{browser_bench.CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with ExitStack() as stack:
        urls = {name: stack.enter_context(serve(app)).url for name, app in browser_bench.APPS.items()}
        playwright = stack.enter_context(sync_playwright())
        browser = playwright.chromium.launch(executable_path=str(browser_bench.CHROMIUM), headless=True,
                                             args=["--no-sandbox", "--disable-gpu",
                                                   "--disable-background-networking"])
        stack.callback(browser.close)
        for url in urls.values():
            browser_bench._first_tile_ms(browser, url)  # sets off each server's start-up work
        time.sleep(browser_bench.SETTLE_S)
        pages = {}
        for name, url in urls.items():
            frames: list[bytes] = []
            context = browser.new_context(viewport={"width": 1440, "height": 1000})
            context.add_init_script(browser_bench.WATCH)
            context.add_init_script(MESSAGES_JS)
            stack.callback(context.close)
            page = context.new_page()
            _keep_frames(page, frames)
            browser_bench.focus_slider(page, url + browser_bench.PRESSED_QUERY[name], browser_bench.PRESSED[name])
            cdp = context.new_cdp_session(page)
            cdp.send("Profiler.enable")
            cdp.send("Profiler.setSamplingInterval", {"interval": SAMPLING_US})
            pages[name] = (page, cdp, frames)
        result = {name: Profile() for name in urls}
        for _ in range(presses):
            for name, (page, cdp, frames) in pages.items():
                _press(page, cdp, frames, result[name])
    return result


def report(result: dict[str, Profile]) -> str:
    """The profiles as Markdown tables."""
    lines = []
    for name, profile in result.items():
        lines += [f"## {name} ({profile.presses} presses)", "", "| phase | median ms |", "|---|---|"]
        lines += [f"| {phase} | {statistics.median(times):.1f} |" for phase, times in profile.phases_ms.items()
                  if times]
        total = profile.census
        lines += ["", f"One rerun: {sum(total.count.values())} messages, {sum(total.size_bytes.values()):,} bytes",
                  "", "| kind | messages | bytes |", "|---|---|---|"]
        lines += [f"| {what} | {count} | {total.size_bytes[what]:,} |" for what, count in total.count.most_common()]
        cpu = profile.cpu_us
        lines += ["", "| script file (keydown to tile seen) | ms per press |", "|---|---|"]
        lines += [f"| {what} | {spent_us / 1000 / max(profile.presses, 1):.1f} |"
                  for what, spent_us in cpu.most_common(SHOWN_FILES) if what != "(idle)"]
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    print(report(profiles(int(argv[0]) if argv else PRESSES)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
