"""LLM-guided search: the language model ranks next actions in a beam search, every
step symbolically checked and the plan verified (`search`); `method` makes it a
situation method's planner (`cowp_llm_guided`)."""
