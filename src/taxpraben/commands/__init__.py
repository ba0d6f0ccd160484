"""The CLI's commands, one module each; `taxpraben.cli` wires them into one typer app."""
