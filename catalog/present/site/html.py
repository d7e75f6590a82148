"""The HTML every page shares: escaping, the page skeleton, tables and small elements.

Plain strings and `string.Template`: the pages are small and regular, and every value that
comes from a spec passes through `esc` on its way in.

Every page carries a Content-Security-Policy (`POLICY`, in a ``<meta http-equiv>`` so it holds
for pages opened from disk and on any host): scripts, styles and images from the site's own
files only, no inline script, event handler or style, nothing else loaded, no form sent. The
pages need none of that (``static/site.js`` sets up every behaviour), so a value that one day
slips past `esc` still cannot run. A dataset page's Croissant description (`json_ld`) is a
``<script type="application/ld+json">`` data block: browsers never run one (the policy does not
apply to data), and its JSON writes ``<``, ``>`` and ``&`` as escapes, so nothing in it can end
the block.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping
from string import Template
from typing import Any

from catalog.present.strings import no_surrogates

__all__ = ["GENERATOR", "POLICY", "esc", "json_ld", "page", "table", "tag_links"]

#: The generator meta tag's content: how `catalog site` recognises a folder it wrote.
GENERATOR = "catalog site"
#: Every page's Content-Security-Policy. No frame-ancestors, report-uri or sandbox: a <meta>
#: policy cannot carry them (browsers ignore them there, with an error in the console).
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'"
)
#: C0 and C1 control characters other than tab, line feed and carriage return: not text, and
#: parse errors in HTML.
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
#: What a JSON-LD block writes as JSON escapes: markup characters, C1 controls, and the two
#: line separators old JavaScript parsers choke on.
_JSON_ESCAPED = re.compile("[<>&\x7f-\x9f\u2028\u2029]")

_PAGE = Template("""\
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="$policy">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="$generator">
<title>$title</title>
<link rel="stylesheet" href="${root}style.css">
$data</head>
<body>
<header class="top"><a href="${root}index.html">catalog</a>$crumb</header>
<main>
$body
</main>
<footer>Made by <code>catalog site</code>: static pages that work offline.</footer>
<script src="${root}site.js"></script>
</body>
</html>
""")


def esc(text: object) -> str:
    """`text` as HTML text or an attribute value (quotes escaped too); a lone surrogate
    (valid in JSON, not encodable) or a control character becomes U+FFFD."""
    return html.escape(_CONTROLS.sub("\ufffd", no_surrogates(str(text))), quote=True)


def json_ld(doc: Mapping[str, Any]) -> str:
    """`doc` as a ``<script type="application/ld+json">`` block: ``<``, ``>`` and ``&`` as
    JSON escapes (no ``</script>`` or ``<!--`` can appear in it), lone surrogates replaced;
    the JSON parses back to `doc`."""
    text = no_surrogates(json.dumps(doc, indent=1, ensure_ascii=False))
    text = _JSON_ESCAPED.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return f'<script type="application/ld+json">\n{text}\n</script>\n'


def page(
    title: str, body: str, *, root: str, crumb: str = "", data: Mapping[str, Any] | None = None
) -> str:
    """A whole page: `body` is HTML; `root` is the relative path to the site's root ("" or
    "../"); `crumb` the current page's name in the top bar (text); `data` a JSON-LD document
    for the head (`json_ld`)."""
    return _PAGE.substitute(
        data=json_ld(data) if data is not None else "",
        generator=GENERATOR,
        policy=POLICY,  # no quote, ampersand or angle bracket in it
        title=esc(title),
        root=root,
        crumb=f" / <span>{esc(crumb)}</span>" if crumb else "",
        body=body.rstrip("\n"),
    )


def table(
    head: Iterable[str],
    rows: Iterable[Iterable[str]],
    *,
    cls: str = "",
    numeric: Iterable[int] = (),
) -> str:
    """A table; `head` is text, `rows` are HTML cells; columns in `numeric` align right."""
    right = set(numeric)

    def cell(kind: str, i: int, content: str) -> str:
        return (
            f'<{kind} class="num">{content}</{kind}>'
            if i in right
            else f"<{kind}>{content}</{kind}>"
        )

    header = "".join(cell("th", i, esc(h)) for i, h in enumerate(head))
    body = "\n".join(
        "<tr>" + "".join(cell("td", i, c) for i, c in enumerate(row)) + "</tr>" for row in rows
    )
    attr = f' class="{cls}"' if cls else ""
    return f"<table{attr}>\n<thead><tr>{header}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"


def tag_links(tags: Iterable[str], *, root: str) -> str:
    """Each tag as a link to the index filtered by it (``index.html#tag=image``)."""
    return " ".join(
        f'<a class="tag" href="{root}index.html#tag={esc(t)}">{esc(t)}</a>' for t in tags
    )
