"""The QAOA job's graph: from the input channel (a node-link JSON file or an edge list
``i j [weight]`` per line), else ``networkx.gnm_random_graph(n_nodes, n_edges, seed)`` as drawn by
``qaoa.problem.random_graph`` (the fast path never imports networkx)."""
from __future__ import annotations

from pathlib import Path

from qhybrid.errors import SpecError


def read_graph(path: Path):
    """A networkx graph from a node-link JSON file or an edge list (``i j [weight]`` per line).

    Raises:
        SpecError: unreadable file, naming it and the accepted formats.
    """
    import json

    import networkx as nx

    try:
        if path.suffix.lower() == ".json":
            data = json.loads(path.read_text())
            key = "links" if "links" in data else "edges"
            try:
                g = nx.node_link_graph(data, edges=key)
            except TypeError:  # networkx < 3.4
                g = nx.node_link_graph(data)
        else:
            g = nx.Graph()
            for number, line in enumerate(path.read_text().splitlines(), 1):
                tokens = line.split("#", 1)[0].split()
                if not tokens:
                    continue
                if len(tokens) not in (2, 3):
                    raise ValueError(f"line {number}: expected 'i j [weight]', got {line.strip()!r}")
                u, v = int(tokens[0]), int(tokens[1])
                g.add_edge(u, v, weight=float(tokens[2]) if len(tokens) == 3 else 1.0)
            if g.number_of_nodes():
                g.add_nodes_from(range(max(g.nodes) + 1))
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise SpecError(f"cannot read graph {path}: {err} (expected node-link JSON or an edge list 'i j [w]')")
    return nx.convert_node_labels_to_integers(g, ordering="sorted")


def load_graph(settings, folder: Path | None):
    """The graph (a ``qaoa.problem.Graph``) of the input channel folder when it holds a file, else
    gnm(n_nodes, n_edges, seed) of the job's ``settings``, as networkx draws it."""
    from qhybrid.qaoa.problem import as_graph, random_graph

    files = sorted(p for p in folder.iterdir() if p.is_file()) if folder and folder.is_dir() else []
    if files:
        return as_graph(read_graph(files[0]))
    return random_graph(settings.n_nodes, settings.n_edges, seed=settings.seed)


def networkx_graph(graph):
    """``graph`` (a ``qaoa.problem.Graph`` or a networkx graph) as a networkx graph, weights kept."""
    import networkx as nx

    from qhybrid.qaoa.problem import Graph

    if not isinstance(graph, Graph):
        return graph
    g = nx.Graph()
    g.add_nodes_from(range(graph.n_nodes))
    g.add_weighted_edges_from((i, j, w) for (i, j), w in zip(graph.edges, graph.weights))
    return g
