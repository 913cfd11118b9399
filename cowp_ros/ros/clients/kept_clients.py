"""Service clients a node makes once and keeps for its life.

A service client made just before its first call races discovery. The client sees the
server at once (it learned the server's endpoints long ago), so `service_is_ready()` is
true and the request goes out, while the server may not yet have learned of the new
client's endpoints: under load a request from a writer the server has not matched is
lost, and Fast DDS's rmw drops a response whose reader the server has not matched
within the writer's 100 ms blocking time ("client will not receive response"). Either
way the caller waits its whole timeout (a minute for the planner) for nothing. A client
made when its node starts has been discovered by the time a task needs it, so the
task manager keeps one client per service here instead of making them for each run.
"""

from __future__ import annotations

import threading
from typing import Any

from rclpy.client import Client
from rclpy.node import Node


class KeptClients:
    """One rclpy service client per (service type, service name), made on first use."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self._clients: dict[tuple[type, str], Client[Any, Any]] = {}
        self._lock = threading.Lock()  # runs and start-up timers ask from several threads

    def get(self, srv_type: type, name: str) -> Client[Any, Any]:
        """The node's client of `name`; made now if this is the first time."""
        key = (srv_type, name)
        with self._lock:
            client = self._clients.get(key)
            if client is None:
                client = self._clients[key] = self.node.create_client(srv_type, name)
            return client

    def close(self) -> None:
        """Destroy every kept client (the node is going, or the owner was temporary)."""
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            self.node.destroy_client(client)

    def __len__(self) -> int:
        return len(self._clients)
