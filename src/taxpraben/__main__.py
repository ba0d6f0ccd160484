from taxpraben.cli import entry

entry()
