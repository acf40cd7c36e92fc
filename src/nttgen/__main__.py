"""``python -m nttgen``."""

from .cli import main

raise SystemExit(main())
