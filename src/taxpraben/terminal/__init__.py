"""The terminal: the console, progress bars, and the executable's start-up."""
