"""The report read back with the standard library's HTMLParser: tags, text, headings, scripts and table cells."""

from html.parser import HTMLParser


class Page(HTMLParser):
    """Tags, attributes, visible text, headings, scripts and each section's table cells of one document."""

    def __init__(self, document: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.headings: dict[str, list[str]] = {}
        self.scripts: list[str] = []
        self.text: list[str] = []
        self.tables: dict[str, list[list[str]]] = {}
        self._open: list[str] = []
        self._heading: list[str] | None = None
        self._section = ""
        self._cell: list[str] | None = None
        self.feed(document)
        self.close()

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        self._open.append(tag)
        if tag == "section":
            self._section = attributes.get("id") or ""
        elif tag in {"h1", "h2", "h3"}:
            self._heading = []
        elif tag == "tr":
            self.tables.setdefault(self._section, []).append([])
        elif tag in {"td", "th"}:
            self._cell = []
        elif tag == "script":
            self.scripts.append("")

    def handle_endtag(self, tag):
        if self._open and self._open[-1] == tag:
            self._open.pop()
        if tag in {"h1", "h2", "h3"} and self._heading is not None:
            self.headings.setdefault(tag, []).append("".join(self._heading).strip())
            self._heading = None
        elif tag in {"td", "th"} and self._cell is not None:
            self.tables[self._section][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._open and self._open[-1] == "script":
            self.scripts[-1] += data
            return
        self.text.append(data)
        for sink in (self._heading, self._cell):
            if sink is not None:
                sink.append(data)

    def row(self, section: str, label: str) -> list[str]:
        return next(row for row in self.tables[section] if row and row[0] == label)

    def plotly_divs(self) -> list[str | None]:
        return [a["id"] for tag, a in self.tags if tag == "div" and "plotly-graph-div" in (a.get("class") or "")]
