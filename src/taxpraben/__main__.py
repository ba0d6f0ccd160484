from taxpraben.cli import app

app()
