from taxpraben.results import main

raise SystemExit(main())
