"""A browsable catalog: a static web site of every dataset (``catalog site -o DIR``).

An index of every dataset and config (tags, version, splits, sizes, prepared here or not),
searchable and filterable by tag in the browser, and a page per dataset (and config) with
everything ``catalog info`` shows and, for a prepared dataset with images, the grid
``catalog show`` draws. Plain HTML and CSS with a little JavaScript, relative links only, no
network at view time: serve the folder from anywhere, or open ``index.html`` from disk.

::

    from catalog.present.site import build_site
    report = build_site("site", ["mnist", "cmaterdb"], data_dir="~/datasets")

Modules: `entries` (what is shown of each dataset), `html` (the shared page skeleton),
`pages` (the index and dataset pages), `build` (writing it all, atomically);
``static/`` holds the stylesheet and the script.
"""

from __future__ import annotations

from catalog.present.site.build import SiteOutputError, SiteReport, build_site

__all__ = ["SiteOutputError", "SiteReport", "build_site"]
