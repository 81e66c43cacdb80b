"""Worker processes: whether this program can start them.

The zoo trains its models, and the book build runs its one-thread chapters, in worker processes started
with ``spawn`` (a fresh interpreter: no thread pool inherited through ``fork``). Each such worker imports
the main script again, which is only safe when the script keeps its work under
``if __name__ == "__main__":``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path


def spawn_safe() -> bool:
    """Whether worker processes can start from this program.

    Each worker imports the main script again ("spawn"), so a script must keep its work under
    ``if __name__ == "__main__":`` (notebooks, ``pytest``, the command line and console scripts do).

    Returns
    -------
    bool
        True in an interactive session, or when the main script has the guard (or cannot be read).

    Examples
    --------
    >>> isinstance(spawn_safe(), bool)
    True
    """
    path = getattr(sys.modules.get("__main__"), "__file__", None)
    if path is None:  # an interactive session
        return True
    try:
        source = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return True
    return re.search(r"""if\s+__name__\s*==\s*['"]__main__['"]""", source) is not None
