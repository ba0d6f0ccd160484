from taxpraben.startup import main

main()
