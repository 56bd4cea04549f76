"""Topology: how many accelerators, which scale-up domains they form, and where a group lands.

A `--system ID --nodes N` deployment is N complete systems; each system's spec gives its
accelerators and the size of one scale-up (NVLink / xGMI) domain. A `--hardware ID --gpus N`
deployment has no topology spec, so its GPUs are assumed to share one scale-up domain
(and the report says so). A group of consecutive ranks (a TP group, or an attention-DP /
expert-parallel model group) is "node-local" when it fits inside one scale-up domain and
"cross-domain" when it spans several: such a group talks over the scale-out network and is
unqualified until tested on that fabric.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd
from typing import TYPE_CHECKING

from ..errors import UsageError
from ..hardware.presets import Accelerator, find_accelerator

if TYPE_CHECKING:
    from ..hardware.presets import System

NODE_LOCAL = "node-local"
CROSS_DOMAIN = "cross-domain"
MAX_NODES = 4096


@dataclass(frozen=True, slots=True)
class Topology:
    """Accelerators of one type, cut into scale-up domains of `domain_size` each."""

    accelerator: Accelerator
    gpus: int
    domain_size: int
    memory_domains: int
    system: System | None = None
    nodes: int | None = None

    @property
    def source(self) -> str:
        """Where the domain boundaries come from."""
        if self.system is not None:
            return f"system spec {self.system.id}"
        if self.domain_size == 1 and self.gpus > 1:
            return ("assumed: a unified-memory device has no scale-up link, so each is its own "
                    "domain (use --system for a specced topology)")
        return "assumed: --hardware gives no topology, so the GPUs are taken as one scale-up domain"


def count(name: str, value, limit: int = 1_000_000) -> int:
    """A whole number from 1 to `limit` for flag `name`, or exit 2."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= limit:
        raise UsageError(f"--{name} must be a whole number from 1 to {limit:,} (got {value!r}).")
    return value


def of_system(system: System, nodes: int) -> Topology:
    """N complete systems: their accelerators, scale-up domains and memory domains."""
    nodes = count("nodes", nodes, MAX_NODES)
    return Topology(find_accelerator(system.hardware), system.accelerators * nodes,
                    system.domain_accelerators, system.memory_domains * nodes, system, nodes)


def of_hardware(accelerator: Accelerator, gpus: int) -> Topology:
    """N loose accelerators, one memory domain each: assumed to share one scale-up domain,
    except unified-memory SoCs (DGX Spark, Jetson), which have no scale-up link at all."""
    gpus = count("gpus", gpus)
    return Topology(accelerator, gpus, 1 if accelerator.unified else gpus, gpus)


def from_request(req) -> Topology | None:
    """The topology a plan request names (None without --hardware or --system)."""
    if req.system is not None:
        if req.hardware is not None:
            raise UsageError("--hardware and --system both name the accelerators; give one.",
                             hint="A system already fixes its accelerator (see --list-systems).")
        if req.gpus is not None:
            raise UsageError("--gpus cannot be combined with --system: use --nodes N to take "
                             "N complete systems.")
        from ..hardware.presets import find_system
        return of_system(find_system(req.system), 1 if req.nodes is None else req.nodes)
    if req.nodes is not None:
        raise UsageError("--nodes needs --system (complete systems); with --hardware use --gpus.")
    if req.hardware is None:
        return None
    return of_hardware(find_accelerator(req.hardware), 1 if req.gpus is None else req.gpus)


def domains_spanned(group: int, topo: Topology) -> int:
    """Scale-up domains the widest group of `group` consecutive ranks touches."""
    d = topo.domain_size
    period = min(topo.gpus, group * d // gcd(group, d))    # group starts repeat every lcm
    return max((s + group - 1) // d - s // d + 1 for s in range(0, period, group))


def placement(group: int, topo: Topology) -> dict:
    """The placement fields of a layout whose groups have `group` ranks."""
    n = domains_spanned(group, topo)
    label = NODE_LOCAL if n == 1 else CROSS_DOMAIN
    note = None if n == 1 else (f"a group of {group} spans {n} scale-up domains of "
                                f"{topo.domain_size}: unqualified until tested on that fabric")
    return {"placement": label, "domains": n, "placement_note": note}


def section(topo: Topology) -> dict:
    """The report's topology fields (merged into `hardware`)."""
    s = topo.system
    return {"system": None if s is None else s.id, "system_name": None if s is None else s.name,
            "nodes": topo.nodes, "gpus": topo.gpus,
            "scale_up_domain_accelerators": topo.domain_size,
            "scale_up_domains": -(-topo.gpus // topo.domain_size),
            "memory_domains": topo.memory_domains,
            "scale_up_fabric": None if s is None else s.fabric,
            "scale_out_fabric": None if s is None else s.scale_out,
            "topology_source": topo.source}


def listing() -> list[dict]:
    """Every system preset, for --list-systems."""
    from ..hardware.presets import systems

    rows = []
    for s in sorted({x.id: x for x in systems().values()}.values(), key=lambda x: x.id):
        rows.append({"id": s.id, "name": s.name, "aliases": list(s.aliases), "hardware": s.hardware,
                     "accelerators": s.accelerators, "hosts": s.hosts,
                     "scale_up_domain_accelerators": s.domain_accelerators,
                     "memory_domains": s.memory_domains, "scale_up_fabric": s.fabric,
                     "scale_out_fabric": s.scale_out})
    return rows
