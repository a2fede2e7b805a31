"""A browser session of a `streamlit run` server as its websocket sees it, for the server benches: it asks for
reruns in Streamlit's protocol (`streamlit.proto`) and times the first metric tile and the `script_finished`
message; the browser's own drawing is not in these times (`bench.browser_bench` has it)."""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass, field

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates
from websockets.sync.client import ClientConnection, connect

TIMEOUT_S = 120


def connection(url: str) -> ClientConnection:
    """A websocket to the server at `url` (http://host:port), opened as a browser opens it."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=TIMEOUT_S)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as browsers do
    return connect(f"ws://{host}:{port}/_stcore/stream", sock=sock, subprotocols=["streamlit"], origin=url,
                   compression=None, max_size=None, open_timeout=TIMEOUT_S)


@dataclass
class Rerun:
    """One rerun: seconds to the first metric tile (to the end when it drew none) and to `script_finished`, and
    the elements it drew."""

    tile_s: float
    finished_s: float
    elements: list = field(default_factory=list)
    pages: dict[str, str] = field(default_factory=dict)  # url path -> page script hash, when navigation was sent

    def widget(self, kind: str, label: str):
        """The element proto of the `kind` widget labelled `label` (a SystemExit when there is none)."""
        for element in self.elements:
            if element.WhichOneof("type") == kind and getattr(element, kind).label == label:
                return getattr(element, kind)
        raise SystemExit(f"no {kind} labelled {label!r} on the page")


def slider(element, *values: float) -> WidgetState:
    """A slider's new value (two for a range; a date is microseconds since the epoch, as the proto holds it)."""
    state = WidgetState(id=element.id)
    state.double_array_value.data.extend(values)
    return state


def multiselect(element, values: list[str]) -> WidgetState:
    state = WidgetState(id=element.id)
    state.string_array_value.data.extend(values)
    return state


class Session:
    """One browser session; `page` is the url path of the page it reruns ("" for the default page), `query` the
    address's query string ("mfu=0.4")."""

    def __init__(self, socket_: ClientConnection, page: str = "", query: str = "") -> None:
        self.socket = socket_
        self.page_hash = ""
        self.query = query
        first = self.rerun()
        if page:
            if page not in first.pages:
                raise SystemExit(f"no page at /{page}")
            self.page_hash = first.pages[page]
            self.rerun()

    def rerun(self, *widgets: WidgetState) -> Rerun:
        """Ask for a rerun with `widgets` changed; wait for its end."""
        state = ClientState(query_string=self.query, page_script_hash=self.page_hash)
        if widgets:
            state.widget_states.CopyFrom(WidgetStates(widgets=list(widgets)))
        started = time.perf_counter()
        self.socket.send(BackMsg(rerun_script=state).SerializeToString())
        tile, elements, pages = None, [], {}
        while True:
            message = ForwardMsg()
            message.ParseFromString(self.socket.recv(timeout=TIMEOUT_S))
            kind = message.WhichOneof("type")
            if kind == "script_finished":
                finished = time.perf_counter() - started
                return Rerun(finished if tile is None else tile, finished, elements, pages)
            if kind == "navigation":
                pages = {page.url_pathname: page.page_script_hash for page in message.navigation.app_pages}
            elif kind == "delta" and message.delta.WhichOneof("type") == "new_element":
                element = message.delta.new_element
                if tile is None and element.WhichOneof("type") == "metric":
                    tile = time.perf_counter() - started
                elements.append(element)
