"""``python -m bayesjudge.cli``: the ``bayesjudge`` command line."""

import sys

from bayesjudge.cli import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
