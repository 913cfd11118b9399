"""Clients of the graph's services and actions, with the core's types on the outside."""
