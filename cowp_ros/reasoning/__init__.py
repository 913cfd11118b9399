"""LLM reasoning: client, prompts, answer parsing, answer cache, local model server."""
