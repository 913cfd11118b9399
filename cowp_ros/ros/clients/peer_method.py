"""Which method and model the commonsense node answers with, asked of the node itself.

The method is chosen once, on the commonsense node (its read-only `method` parameter):
the task manager builds the loop's side of it (how it orders stand-ins, tidies plans,
blames failures) around that node's answers, so it adopts the node's method rather than
having one of its own that could differ. The commonsense node holds its `method` and,
once its model is open, the `model` that answers, as parameters; the task manager finds
the node that serves `CheckPlan` and reads them through its standard `get_parameters`
service (a person: `ros2 param get /commonsense method`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rcl_interfaces.msg import ParameterType
from rcl_interfaces.srv import GetParameters
from rclpy.client import Client
from rclpy.node import Node

from cowp_ros.cowp.cancel import CancelToken
from cowp_ros.errors import CowpError
from cowp_ros.methods.registry import (
    DEFAULT_METHOD,
    METHODS_ENV,
    get_method,
    graph_method_names,
    method_names,
)
from cowp_ros.ros.clients.kept_clients import KeptClients
from cowp_ros.ros.names import CHECK_PLAN_SERVICE
from cowp_ros.ros.parameters import Param
from cowp_ros.ros.waiting import call_service

METHOD_PARAMETER = "method"
MODEL_PARAMETER = "model"


def known_method(value: Any) -> str | None:
    """A parameter check: the name of a registered method (`cowp_ros.methods.registry`)
    that runs on the graph (one that cannot is refused with its reason)."""
    names = graph_method_names()
    if value in names:
        return None
    if value in method_names():
        return (
            f"must be a method that runs on the ROS graph ({', '.join(names)}): "
            f"{value} cannot: {get_method(value).off_graph}"
        )
    return f"must be a registered method ({', '.join(names)}; more with {METHODS_ENV})"


def method_param(description: str) -> Param:
    """The commonsense node's `method` parameter."""
    return Param(METHOD_PARAMETER, DEFAULT_METHOD, description, known_method)


@dataclass(frozen=True)
class PeerMethod:
    """The commonsense node's method and model (`model` is "" until it has one)."""

    node: str
    method: str
    model: str


def commonsense_node(node: Node) -> str | None:
    """The fully qualified name of the node serving `CheckPlan`, if one is up."""
    for name, namespace in node.get_node_names_and_namespaces():
        try:
            services = node.get_service_names_and_types_by_node(name, namespace)
        except Exception:  # the node went away between the two calls
            continue
        if any(service == CHECK_PLAN_SERVICE for service, _ in services):
            return f"{namespace.rstrip('/')}/{name}"
    return None


def peer_request() -> GetParameters.Request:
    return GetParameters.Request(names=[METHOD_PARAMETER, MODEL_PARAMETER])


def peer_from_response(peer: str, response: Any) -> PeerMethod:
    """The method and model in a get_parameters response; a CowpError when the node
    does not say (it is not a commonsense node of this stack)."""
    values = list(response.values)
    if len(values) != 2 or values[0].type != ParameterType.PARAMETER_STRING:
        raise CowpError(
            f"{peer} serves {CHECK_PLAN_SERVICE} but does not say which method it runs "
            f"(no {METHOD_PARAMETER!r} parameter)",
            hint="run cowp_ros's commonsense node",
        )
    model = values[1].string_value if values[1].type == ParameterType.PARAMETER_STRING else ""
    return PeerMethod(peer, values[0].string_value, model)


def peer_parameters_client(clients: KeptClients, peer: str) -> Client[Any, Any]:
    """The node's kept client of the commonsense node's `get_parameters`."""
    return clients.get(GetParameters, f"{peer}/get_parameters")


def ask_peer_method(
    node: Node, *, timeout_s: float, cancel: CancelToken, clients: KeptClients
) -> PeerMethod | None:
    """The commonsense node's method and model; None when no node serves CheckPlan.

    Asked through the node's kept client of the peer's `get_parameters` (the one the
    start-up check made), not a client made for this question (kept_clients.py)."""
    peer = commonsense_node(node)
    if peer is None:
        return None
    response = call_service(
        peer_parameters_client(clients, peer),
        peer_request(),
        timeout_s=timeout_s,
        what=f"asking {peer} which method it runs",
        cancel=cancel,
    )
    return peer_from_response(peer, response)


class StartupPeerCheck:
    """At start-up, learn which method the commonsense node runs, and say so.

    Polls the graph once a second (without blocking the executor) until a node serves
    `CheckPlan`, asks it for its `method` and `model`, and logs them once; it gives up
    quietly after `give_up_s` (each task asks again before it plans). The client it
    makes is the one each task asks through (kept_clients.py).
    """

    def __init__(self, node: Node, clients: KeptClients, give_up_s: float = 60.0) -> None:
        self.node = node
        self.clients = clients
        self.found: PeerMethod | None = None
        self._tries = max(1, int(give_up_s))
        self._asking = False
        self._timer = node.create_timer(1.0, self._poll)

    def _poll(self) -> None:
        self._tries -= 1
        if self._asking or self.found is not None:
            return
        peer = commonsense_node(self.node)
        if peer is None:
            if self._tries <= 0:
                self._stop()
            return
        # The node keeps this client: each task's check asks through it too.
        client = peer_parameters_client(self.clients, peer)
        if not client.service_is_ready():
            if self._tries <= 0:
                self._stop()
            return
        self._asking = True
        client.call_async(peer_request()).add_done_callback(
            lambda future: self._answered(peer, future)
        )

    def _answered(self, peer: str, future: Any) -> None:
        try:
            found = peer_from_response(peer, future.result())
        except Exception as err:  # a peer that is not ours, or one that went away
            self.node.get_logger().warning(f"could not learn {peer}'s method: {err}")
            self._asking = False
            return
        self.found = found
        model = f", model {found.model}" if found.model else ""
        self.node.get_logger().info(f"tasks run {peer}'s method: {found.method}{model}")
        self._stop()

    def _stop(self) -> None:
        self._timer.cancel()
        self.node.destroy_timer(self._timer)
