"""A visitor of a running dashboard without a browser: Streamlit's own websocket protocol, on loopback.

One :class:`Visitor` is one browser tab: a websocket on ``/_stcore/stream`` that sends the ``BackMsg`` messages a
browser sends (open a page with a link's query, press a button, type into a text input, upload a file) and reads
the server's ``ForwardMsg`` protobufs: what the page drew (errors, warnings, exception boxes, charts), how many
bytes it was sent, when the script finished. ``address`` plays a visitor behind a proxy: the handshake carries
``X-Forwarded-For`` (the server trusts it from loopback only, uvicorn's ``FORWARDED_ALLOW_IPS``). Uploads go
through ``/_stcore/upload_file`` with the XSRF cookie the index page sets, as the browser's uploader does.

Used by ``benchmarks/bench_visitors.py`` and the tests that replay many visitors; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import time
import urllib.request
import uuid
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

DONE = (0, 1, 3)          # ScriptFinishedStatus: a run that ended (not one cut short for a rerun)


@dataclass
class Seen:
    """What one script run sent: element kinds, the texts of error and warning boxes and exception boxes."""

    kinds: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    exceptions: list = field(default_factory=list)
    texts: list = field(default_factory=list)       # every markdown, caption, alert and exception text
    widgets: dict = field(default_factory=dict)     # user key (the id's tail) -> (kind, widget id)
    first_chart: float | None = None
    bytes: int = 0
    finished: bool = False
    on_text: object = None                          # called with every text as it comes
    heard: int = 0


def _key(widget_id: str) -> str:
    return widget_id.rsplit("-", 1)[-1]


class Visitor:
    """One tab of one visitor: ``await Visitor.open(url, page, query)``; every call bounded by ``timeout``."""

    def __init__(self, url: str, address: str | None = None, timeout: float = 180.0):
        self.url, self.address, self.timeout = url, address, timeout
        self.ws = None
        self.page_hash = ""
        self.session_id = ""
        self.page, self.query = "", ""
        self.widgets: dict[str, tuple[str, str]] = {}
        self.states: dict[str, object] = {}       # widget id -> its value, sent with every rerun as a browser does
        self.xsrf: str | None = None
        self.total_bytes = 0

    async def connect(self) -> "Visitor":
        headers = {"X-Forwarded-For": self.address} if self.address else {}
        self.xsrf = await asyncio.get_running_loop().run_in_executor(None, self._xsrf_cookie)
        if self.xsrf:
            headers["Cookie"] = f"_streamlit_xsrf={self.xsrf}"
        protocols = ["streamlit"] + ([self.xsrf] if self.xsrf else [])
        self.ws = await websockets.connect(self.url.replace("http", "ws", 1) + "/_stcore/stream", max_size=None,
                                           additional_headers=headers, subprotocols=protocols,
                                           open_timeout=self.timeout, ping_interval=None, close_timeout=2)
        return self

    def _xsrf_cookie(self) -> str | None:
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        try:
            with opener.open(self.url + "/_stcore/health", timeout=30) as response:   # it sets the cookie
                response.read()
        except OSError:
            return None
        return next((c.value for c in jar if c.name == "_streamlit_xsrf"), None)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            self.ws = None

    # ---------------------------------------------------------------- sending
    def _rerun(self, widgets: dict[str, object] | None = None, triggers: tuple[str, ...] = ()) -> bytes:
        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_name = self.page
        msg.rerun_script.page_script_hash = self.page_hash
        states = dict(self.states, **(widgets or {}))
        for widget_id, value in states.items():
            state = msg.rerun_script.widget_states.widgets.add()
            state.id = widget_id
            _set_value(state, value)
        for widget_id in triggers:
            state = msg.rerun_script.widget_states.widgets.add()
            state.id = widget_id
            state.trigger_value = True
        return msg.SerializeToString()

    async def send_rerun(self, widgets: dict[str, object] | None = None, triggers: tuple[str, ...] = ()) -> None:
        await self.ws.send(self._rerun(widgets, triggers))

    async def open(self, page: str, query: str = "", *, until_finished: bool = True) -> Seen:
        """Open ``page`` with the link's ``query`` (a new run), reading until its script finished."""
        self.page, self.query, self.states = page, query, {}
        await self.send_rerun()
        return await self.read_run() if until_finished else Seen()

    async def press(self, key: str, *, until_finished: bool = True, on_text=None) -> Seen:
        """Press the button with the user key ``key`` (as the last run drew it)."""
        _, widget_id = self.widgets[key]
        await self.send_rerun(triggers=(widget_id,))
        return await self.read_run(on_text=on_text) if until_finished else Seen()

    async def set(self, key: str, value, *, until_finished: bool = True) -> Seen:
        """Set the widget ``key`` to ``value`` (a text, a number, an index) and rerun, as typing it would."""
        _, widget_id = self.widgets[key]
        self.states[widget_id] = value
        await self.send_rerun()
        return await self.read_run() if until_finished else Seen()

    async def upload(self, key: str, name: str, data: bytes, *, until_finished: bool = True) -> Seen:
        """Upload ``data`` as the file ``name`` into the uploader ``key``, as the browser's uploader does."""
        _, widget_id = self.widgets[key]
        request = BackMsg()
        request.file_urls_request.request_id = uuid.uuid4().hex
        request.file_urls_request.file_names.append(name)
        request.file_urls_request.session_id = self.session_id
        await self.ws.send(request.SerializeToString())
        urls = await self._file_urls(request.file_urls_request.request_id)
        await asyncio.get_running_loop().run_in_executor(None, self._put, urls.upload_url, name, data)
        self.states[widget_id] = ("file", name, len(data), urls.file_id, urls.upload_url, urls.delete_url)
        await self.send_rerun()
        return await self.read_run() if until_finished else Seen()

    async def _file_urls(self, request_id: str):
        deadline = time.monotonic() + self.timeout
        while True:
            message = ForwardMsg()
            message.ParseFromString(await asyncio.wait_for(self.ws.recv(), max(0.1, deadline - time.monotonic())))
            if message.WhichOneof("type") == "file_urls_response" and \
                    message.file_urls_response.response_id == request_id:
                if message.file_urls_response.error_msg:
                    raise RuntimeError(message.file_urls_response.error_msg)
                return message.file_urls_response.file_urls[0]

    def _put(self, upload_url: str, name: str, data: bytes) -> None:
        boundary = uuid.uuid4().hex
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
                "Content-Type: application/octet-stream\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
        url = upload_url if upload_url.startswith("http") else self.url + upload_url
        headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
        if self.xsrf:
            headers.update({"X-Xsrftoken": self.xsrf, "Cookie": f"_streamlit_xsrf={self.xsrf}"})
        if self.address:
            headers["X-Forwarded-For"] = self.address
        request = urllib.request.Request(url, data=body, method="PUT", headers=headers)
        with urllib.request.urlopen(request, timeout=self.timeout) as response:
            response.read()

    # ---------------------------------------------------------------- reading
    async def read_run(self, timeout: float | None = None, started: float | None = None, on_text=None) -> Seen:
        """Read until the current script run finishes (bounded); what it drew. ``on_text(text)`` hears every
        text as it comes (a progress bar's included)."""
        seen = Seen()
        seen.on_text = on_text
        started = time.perf_counter() if started is None else started
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            data = await asyncio.wait_for(self.ws.recv(), max(0.1, deadline - time.monotonic()))
            seen.bytes += len(data)
            self.total_bytes += len(data)
            message = ForwardMsg()
            message.ParseFromString(data)
            kind = message.WhichOneof("type")
            if kind == "new_session":
                self.session_id = message.new_session.initialize.session_id or self.session_id
                seen.widgets.clear()
            elif kind == "navigation":
                self.page_hash = message.navigation.page_script_hash
            elif kind == "delta" and message.delta.WhichOneof("type") == "new_element":
                self._element(message.delta.new_element, seen, started)
            elif kind == "script_finished":
                if message.script_finished in DONE:
                    seen.finished = True
                    self.widgets = dict(seen.widgets) or self.widgets
                    return seen

    def _element(self, element, seen: Seen, started: float) -> None:
        kind = element.WhichOneof("type")
        seen.kinds.append(kind)
        if kind == "alert":
            text = element.alert.body
            (seen.errors if element.alert.format == 1 else seen.warnings if element.alert.format == 2
             else seen.texts).append(text)
            seen.texts.append(text)
        elif kind == "exception":
            seen.exceptions.append(f"{element.exception.type}: {element.exception.message}")
            seen.texts.append(seen.exceptions[-1])
        elif kind == "markdown":
            seen.texts.append(element.markdown.body)
        elif kind == "progress":
            seen.texts.append(element.progress.text)
        elif kind == "plotly_chart" and seen.first_chart is None:
            seen.first_chart = time.perf_counter() - started
        payload = getattr(element, kind, None) if kind else None
        widget_id = getattr(payload, "id", "") if payload is not None else ""
        if widget_id:
            seen.widgets[_key(widget_id)] = (kind, widget_id)
        for text_field in ("label", "help", "placeholder", "body"):
            value = getattr(payload, text_field, None) if payload is not None else None
            if isinstance(value, str) and value and text_field != "body":
                seen.texts.append(value)
        if callable(seen.on_text):
            for text in seen.texts[seen.heard:]:
                seen.on_text(text)
        seen.heard = len(seen.texts)


def _set_value(state, value) -> None:
    if isinstance(value, tuple) and value and value[0] == "file":
        _, name, size, file_id, upload_url, delete_url = value
        info = state.file_uploader_state_value.uploaded_file_info.add()
        info.name, info.size, info.file_id = name, size, file_id
        info.file_urls.file_id, info.file_urls.upload_url, info.file_urls.delete_url = file_id, upload_url, delete_url
    elif isinstance(value, bool):
        state.bool_value = value
    elif isinstance(value, int):
        state.int_value = value
    elif isinstance(value, float):
        state.double_value = value
    elif isinstance(value, str):
        state.string_value = value
    elif isinstance(value, (list, tuple)):
        state.string_array_value.data.extend(str(v) for v in value)
    else:
        raise TypeError(f"no widget value of type {type(value).__name__}")
