"""The optional LLM: one validated structured call at a time (client), how hard it tries (policy) and the
prompts it is given (skills)."""
