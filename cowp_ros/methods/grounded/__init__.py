"""The grounded method, the project's own: one grounded decision per situation, a
frugal acquirer, tidy plans (entry: `method.py`)."""
