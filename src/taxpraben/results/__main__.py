from taxpraben.results.schema_doc import main

raise SystemExit(main())
