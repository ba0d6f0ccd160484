from taxpraben.terminal.startup import main

main()
