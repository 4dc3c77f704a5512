"""Ingest: files -> parsed text (formats) -> structure and sections -> sentence chunks -> stored, embedded
and indexed (pipeline). Language identification and citation labels belong here too."""
