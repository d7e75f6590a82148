"""The HTML every page shares: escaping, the page skeleton, tables and small elements.

Plain strings and `string.Template`: the pages are small and regular, and every value that
comes from a spec passes through `esc` on its way in.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from string import Template

__all__ = ["GENERATOR", "esc", "page", "table", "tag_links"]

#: The generator meta tag's content: how `catalog site` recognises a folder it wrote.
GENERATOR = "catalog site"

_PAGE = Template("""\
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="$generator">
<title>$title</title>
<link rel="stylesheet" href="${root}style.css">
</head>
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
    """`text` as HTML text or an attribute value (quotes escaped too)."""
    return html.escape(str(text), quote=True)


def page(title: str, body: str, *, root: str, crumb: str = "") -> str:
    """A whole page: `body` is HTML; `root` is the relative path to the site's root ("" or
    "../"); `crumb` the current page's name in the top bar (text)."""
    return _PAGE.substitute(
        generator=GENERATOR,
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
