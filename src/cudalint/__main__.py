"""`python -m cudalint`. Python puts the working directory first on sys.path for `-m`; in a linted
checkout that would let the project's own modules (a `yaml.py`, a `json.py`) shadow the libraries cudalint
imports later, and run. It is taken off before anything else is imported: lint never imports from the tree."""

import os
import sys

if not sys.flags.safe_path and sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

if __name__ == "__main__":
    from cudalint.cli import main

    sys.exit(main())
