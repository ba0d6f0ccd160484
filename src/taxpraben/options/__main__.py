"""``python -m taxpraben.options --markdown``: docs/options.md (:func:`taxpraben.options.options_markdown`)."""

import sys

from taxpraben.options import options_markdown

if __name__ == "__main__":
    if sys.argv[1:] != ["--markdown"]:
        sys.exit("usage: python -m taxpraben.options --markdown")
    sys.stdout.write(options_markdown() + "\n")
