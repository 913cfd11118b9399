"""Keys stay out of node parameters: any ROS peer can read a node's parameters.

`ros2 param get /commonsense llm_url` (or `list_parameters` from any node on the
domain) shows a parameter to whoever asks, so a key written into one is published. A
model server's key therefore reaches the commonsense node through its process
environment (`OPENAI_API_KEY`, which `LLMSettings.resolve` reads), never a parameter:

- a URL with a key in it (`http://user:KEY@host/v1`) is cut before it becomes the
  `llm_url` parameter, and its user part moves into that node's environment
  (`COWP_LLM_URL_USERINFO`), from which the node puts it back into the URL it sends to
  (so the server sees exactly what `cowp run` with the same URL sends);
- a URL with a query (`http://host/v1?api_key=KEY`) is cut the same way: its query
  moves into the node's environment (`COWP_LLM_URL_QUERY`) and back into the URL the
  node sends to, after each request's path;
- `cowp demo --llm-key KEY` gives the key to the commonsense node's environment the
  same way.

`cowp bringup`, the demo and the harness start nodes through the `Supervisor`, which
calls `keys_moved_out` on every profile; the launch files do the same per node.
"""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import urlsplit, urlunsplit

from cowp_ros.bringup.spec import NodeSpec, Profile

KEY_ENV = "OPENAI_API_KEY"
USERINFO_ENV = "COWP_LLM_URL_USERINFO"
QUERY_ENV = "COWP_LLM_URL_QUERY"
URL_PARAMETERS = ("llm_url",)


def split_key(url: str) -> tuple[str, str | None]:
    """(`url` without its user part, the user part `user:KEY` or None)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url, None
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, host = parts.netloc.rpartition("@")
    clean = urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    return clean, userinfo or None


def split_query(url: str) -> tuple[str, str | None]:
    """(`url` without its query, the query or None): a query may carry a key
    (`?api_key=...`), and a parameter shows it to any peer."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url, None
    if not parts.query:
        return url, None
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", parts.fragment)), parts.query


def with_query(url: str, query: str) -> str:
    """`url` with its query put back (what `split_query` took out)."""
    if not query or not url:
        return url
    parts = urlsplit(url)
    if parts.query:
        return url
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def with_userinfo(url: str, userinfo: str) -> str:
    """`url` with its user part put back (what `split_key` took out)."""
    if not userinfo or not url:
        return url
    parts = urlsplit(url)
    if "@" in parts.netloc:
        return url
    netloc = f"{userinfo}@{parts.netloc}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def node_keys_moved_out(spec: NodeSpec) -> tuple[NodeSpec, dict[str, str]]:
    """`spec` with every URL parameter's key cut out, and the environment that carries it."""
    parameters = dict(spec.parameters)
    environment: dict[str, str] = {}
    for name in URL_PARAMETERS:
        value = parameters.get(name)
        if not isinstance(value, str) or not ("@" in value or "?" in value):
            continue
        clean, userinfo = split_key(value)
        clean, query = split_query(clean)
        parameters[name] = clean
        if userinfo:
            environment[USERINFO_ENV] = userinfo
        if query:
            environment[QUERY_ENV] = query
    if parameters == spec.parameters:
        return spec, {}
    return replace(spec, parameters=parameters), environment


def keys_moved_out(profile: Profile) -> tuple[Profile, dict[str, dict[str, str]]]:
    """The profile with no key in any parameter, and each node's extra environment."""
    nodes = []
    environments: dict[str, dict[str, str]] = {}
    for spec in profile.nodes:
        clean, environment = node_keys_moved_out(spec)
        nodes.append(clean)
        if environment:
            environments[spec.name] = environment
    return replace(profile, nodes=tuple(nodes)), environments
