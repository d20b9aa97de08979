"""Building blocks shared by the passes that lower tc to loops (canonical or scheduled)."""
