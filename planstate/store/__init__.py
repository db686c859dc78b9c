"""Where planning files live and how they are read and written, in transactions."""
