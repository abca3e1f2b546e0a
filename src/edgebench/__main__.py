from edgebench.cli import main

raise SystemExit(main())
