import sys

from cudalint.cli import main

sys.exit(main())
