"""LLM-State: an object-centric belief the language model keeps up to date through
whitelisted function calls; situations reach COWP through it."""
