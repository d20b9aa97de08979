"""IR helpers shared by tcir's dialects."""
