"""The reviewer's desk: `evidence serve` (FastAPI, server-rendered pages, sign-off)."""
