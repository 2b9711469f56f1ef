"""BFCL's WebSearchAPI: a search engine (DuckDuckGo through SerpAPI) and a page fetcher.

Unlike every other backend this one reaches the internet, so its results change from run to
run and a run using it is not reproducible. It is off by default: loading it raises
:class:`WebSearchDisabled` (one line saying how to opt in) unless the run opted in with
:func:`allow` or the environment variable ``TOOLSCORE_BFCL_WEB_SEARCH=1``. Searching needs a
SerpAPI key in ``SERPAPI_API_KEY``, as BFCL's does.

What BFCL's class returns is kept: the search's result list (title, link and, unless the
category is ``no_snippet``, the snippet), its retry with growing back-off while SerpAPI answers
429, and the fetcher's three modes. toolscore uses the standard library for HTTP (BFCL uses
``requests``: HTTP error texts are worded like its own); ``truncate`` extracts a page's text
with the standard library's HTML parser the way BFCL's BeautifulSoup call does; ``markdown``
needs ``html2text`` (extra ``bfcl-web``), imported when first used.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from html.parser import HTMLParser
from typing import Any

from toolscore.benchmarks.bfcl.multiturn.backend import Backend

ENV = "TOOLSCORE_BFCL_WEB_SEARCH"
SEARCH_URL = "https://serpapi.com/search"
_allowed = False

_HEADERS = {
    "User-Agent": ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 "
                   "(KHTML, like Gecko) Chrome/112.0.0.0 Safari/537.36"),
    "Accept": ("text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,"
               "image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"),
    "Accept-Language": "en-US,en;q=0.9",
    "Accept-Encoding": "gzip, deflate",
    "Connection": "keep-alive",
    "Upgrade-Insecure-Requests": "1",
    "Referer": "https://www.google.com/",
    "Sec-Fetch-Site": "same-origin",
    "Sec-Fetch-Mode": "navigate",
    "Sec-Fetch-User": "?1",
    "Sec-Fetch-Dest": "document",
}


class WebSearchDisabled(RuntimeError):
    """A run asked for the web search backend without opting in."""


OPT_IN = ("bfcl web_search reaches the internet (SerpAPI search, page fetches) and is off by "
          f"default: opt in with {ENV}=1 (and a SerpAPI key in SERPAPI_API_KEY)")


def allow(flag: bool = True) -> None:
    """Opt in to (or out of) the web search backend for this process."""
    global _allowed
    _allowed = flag


def allowed() -> bool:
    return _allowed or os.environ.get(ENV, "").strip().lower() in ("1", "true", "yes")


def require() -> None:
    """Raise :class:`WebSearchDisabled` (its message is one line) unless opted in."""
    if not allowed():
        raise WebSearchDisabled(OPT_IN)


def _http_error(e: urllib.error.HTTPError, url: str) -> str:
    kind = "Client" if e.code < 500 else "Server"
    return f"{e.code} {kind} Error: {e.reason} for url: {url}"


def _get(url: str, headers: dict[str, str], timeout: float) -> tuple[bytes, str]:
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
        body = response.read()
        encoding = response.headers.get("Content-Encoding", "")
        charset = response.headers.get_content_charset() or "utf-8"
    if encoding == "gzip":
        body = gzip.decompress(body)
    elif encoding == "deflate":
        body = zlib.decompress(body)
    return body, charset


class _Text(HTMLParser):
    """A page's text nodes, outside scripts and styles, stripped, empty ones dropped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip and data.strip():
            self.parts.append(data.strip())


class WebSearchAPI(Backend):
    """Web search and page fetching, on the live internet (opt-in)."""

    def __init__(self) -> None:
        self.show_snippet = True

    def _load_scenario(self, scenario: dict[str, Any], long_context: bool = False) -> None:
        require()
        self.show_snippet = scenario["show_snippet"]

    def _search(self, params: dict[str, Any]) -> dict[str, Any]:
        query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        try:
            body, charset = _get(f"{SEARCH_URL}?{query}", {}, 60)
        except urllib.error.HTTPError as e:
            body, charset = e.read(), "utf-8"
        value = json.loads(body.decode(charset, "replace"))
        return value if isinstance(value, dict) else {}

    def search_engine_query(self, keywords: str, max_results: int | None = 10,
                            region: str | None = "wt-wt") -> Any:
        params = {"engine": "duckduckgo", "q": keywords, "kl": region,
                  "api_key": os.getenv("SERPAPI_API_KEY"), "output": "json"}
        backoff = 2.0
        while True:
            try:
                found = self._search(params)
            except Exception as e:
                if "429" not in str(e):
                    return {"error": str(e)}
                found = {"error": str(e)}
            if "error" in found and "429" in str(found["error"]):
                time.sleep(backoff + random.uniform(0, backoff))
                backoff = min(backoff * 2, 120)
                continue
            break
        if "organic_results" not in found:
            return {"error": "Failed to retrieve the search results from server. Please try "
                             "again later."}
        results = []
        for item in found["organic_results"][:max_results]:
            result = {"title": item["title"], "href": item["link"]}
            if self.show_snippet:
                result["body"] = item["snippet"]
            results.append(result)
        return results

    def fetch_url_content(self, url: str, mode: str = "raw") -> Any:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"Invalid URL: {url}")
        try:
            try:
                body, charset = _get(url, _HEADERS, 20)
            except urllib.error.HTTPError as e:
                raise RuntimeError(_http_error(e, url)) from None
            text = body.decode(charset, "replace")
            if mode == "raw":
                return {"content": text}
            if mode == "markdown":
                import html2text  # the bfcl-web extra

                return {"content": html2text.HTML2Text().handle(text)}
            if mode == "truncate":
                parser = _Text()
                parser.feed(text)
                parser.close()
                return {"content": "\n".join(parser.parts)}
            raise ValueError(f"Unsupported mode: {mode}")
        except Exception as e:
            return {"error": f"An error occurred while fetching {url}: {e}"}
